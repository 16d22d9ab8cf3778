#!/bin/sh
# run.sh [BUILD_DIR] - the template engine against Go's text/template on
# Istio's sidecar template for the `hello` pod, in the same run:
#   1. builds the shared Go reference (../shared/tools/istio-render-bench) offline,
#   2. checks that both render byte-identical text,
#   3. measures CPU time per render of both, pinned to one CPU (GOMAXPROCS=1):
#      Go's BenchmarkRender at two fixed iteration counts (the difference of
#      the process CPU times cancels the setup), and the C benchmark (thread
#      CPU time), and prints us and allocations per render and the ratio.
#      CPU time, not wall time, because the machine is shared.
# Knobs: CPU (1), GO_N (3000 Go renders), ITER (20000 C renders).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
shared=${WH_SHARED_DIR:-$root/../shared}
tool=$shared/tools/istio-render-bench
fixtures=$shared/conformance/istio-inject/master
GO=${GO:-/usr/lib/go-1.19/bin/go}
CPU=${CPU:-1} GO_N=${GO_N:-3000} ITER=${ITER:-20000}
cbin=$build/bench/template/bench_template
[ -x "$cbin" ] || { echo "build bench_template first (cmake --build $build --target bench_template)" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/tmpl-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/gopath/src"
cp -r "$tool" "$work/gopath/src/istio-render-bench"
export GOPATH="$work/gopath:/usr/share/gocode" GO111MODULE=off GOFLAGS= GOCACHE=${GOCACHE:-$build/bench/template/gocache}
(cd "$work/gopath/src/istio-render-bench" && "$GO" build -o "$work/irb" . && "$GO" test -c -o "$work/bench.test" .)

"$work/irb" render -stage a -fixtures "$fixtures" > "$work/go.yaml"
{ "$cbin" --fixtures "$fixtures" --print; echo; } > "$work/c.yaml"  # the Go tool prints a final newline
if cmp -s "$work/go.yaml" "$work/c.yaml"; then
  echo "output: identical ($(wc -c < "$work/c.yaml") bytes incl. the tool's final newline)"
else
  echo "output: DIFFERS from Go"; diff "$work/go.yaml" "$work/c.yaml" | head -40; exit 1
fi

# Go: CPU seconds of the whole test process at N and 11N iterations
python3 - "$work/bench.test" "$fixtures" "$CPU" "$GO_N" > "$work/go.txt" <<'PY'
import os, re, subprocess, sys
binary, fixtures, cpu, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
def run(iters):
    env = dict(os.environ, GOMAXPROCS="1")
    p = subprocess.Popen(["taskset", "-c", cpu, binary, "-test.run", "^$", "-test.bench", "^BenchmarkRender$",
                          "-test.benchmem", "-test.cpu", "1", "-test.benchtime", f"{iters}x", "-fixtures", fixtures],
                         stdout=subprocess.PIPE, env=env)
    out = p.stdout.read().decode()
    _, status, ru = os.wait4(p.pid, 0)
    m = re.search(r"BenchmarkRender\s+\d+\s+(\d+) ns/op\s+(\d+) B/op\s+(\d+) allocs/op", out)
    return ru.ru_utime + ru.ru_stime, int(m.group(3)), int(m.group(1))
t1, allocs, _ = run(n)
t2, _, wall = run(11 * n)
print(f"{(t2 - t1) / (10 * n) * 1e6:.1f} {allocs} {wall / 1000:.1f}")
PY
read go_us go_allocs go_wall < "$work/go.txt"
taskset -c "$CPU" "$cbin" --fixtures "$fixtures" --iterations "$ITER" | tee "$work/c-bench.txt"
c_us=$(awk '/reused scratch/ {print $3}' "$work/c-bench.txt")
c_allocs=$(awk '/reused scratch/ {print $5}' "$work/c-bench.txt")
awk -v g="$go_us" -v ga="$go_allocs" -v gw="$go_wall" -v c="$c_us" -v ca="$c_allocs" 'BEGIN {
  printf "Go text/template: %8.1f us CPU/render %7d allocs/render (testing.B wall: %.1f us)\n", g, ga, gw
  printf "C wh_tmpl:        %8.1f us CPU/render %7.1f allocs/render\n", c, ca
  printf "speed-up: %.1fx CPU time, %.0fx fewer allocations\n", g / c, ga / ca }'
