#!/bin/sh
# run.sh [BUILD_DIR] - the template engine against Go's text/template on
# Istio's sidecar template for the `hello` pod, in the same run:
#   1. builds the shared Go reference (../shared/tools/istio-render-bench) offline,
#   2. checks that both render byte-identical text,
#   3. runs Go's BenchmarkRender (GOMAXPROCS=1) and the C benchmark, pinned to
#      one CPU, and prints ns/allocs per render and the ratio.
# Knobs: CPU (1), COUNT (3 Go runs, median), BENCHTIME (1s), ITER (20000 C renders).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build}
shared=${WH_SHARED_DIR:-$root/../shared}
tool=$shared/tools/istio-render-bench
fixtures=$shared/conformance/istio-inject/master
GO=${GO:-/usr/lib/go-1.19/bin/go}
CPU=${CPU:-1} COUNT=${COUNT:-3} BENCHTIME=${BENCHTIME:-1s} ITER=${ITER:-20000}
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
  echo "output: identical ($(wc -c < "$work/c.yaml") bytes)"
else
  echo "output: DIFFERS from Go"; diff "$work/go.yaml" "$work/c.yaml" | head -40; exit 1
fi

GOMAXPROCS=1 taskset -c "$CPU" "$work/bench.test" -test.run '^$' -test.bench '^BenchmarkRender$' -test.benchmem \
  -test.cpu 1 -test.count "$COUNT" -test.benchtime "$BENCHTIME" -fixtures "$fixtures" > "$work/go-bench.txt"
go_ns=$(awk '/^BenchmarkRender/ {print $3}' "$work/go-bench.txt" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
go_allocs=$(awk '/^BenchmarkRender/ {print $7}' "$work/go-bench.txt" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
taskset -c "$CPU" "$cbin" --fixtures "$fixtures" --iterations "$ITER" | tee "$work/c-bench.txt"
c_us=$(awk '/reused scratch/ {print $3}' "$work/c-bench.txt")
c_allocs=$(awk '/reused scratch/ {print $5}' "$work/c-bench.txt")
awk -v g="$go_ns" -v ga="$go_allocs" -v c="$c_us" -v ca="$c_allocs" 'BEGIN {
  printf "Go text/template: %8.1f us/render %7d allocs/render (median of runs)\n", g / 1000, ga
  printf "C wh_tmpl:        %8.1f us/render %7.1f allocs/render\n", c, ca
  printf "speed-up: %.1fx\n", (g / 1000) / c }'
