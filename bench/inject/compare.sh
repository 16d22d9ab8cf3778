#!/usr/bin/env bash
# compare.sh BUILD_DIR - one run that puts webhookd's /inject beside its
# baselines, in CPU and in instructions (callgrind Ir, which a loaded or
# different machine does not change):
#   - istiod's engine on the same template and pod (../shared/tools/istio-render-bench,
#     stage (c): render + YAMLToJSON + Unmarshal + merge + merge patch), CPU per op
#     of the Go test binary (user+sys over a fixed number of ops, GOMAXPROCS=1);
#   - webhookd in process (bench_inject: CPU µs; callgrind: Ir of wh_admission_serve),
#     the same review hot in a loop, and one review per wake-up (a 200 µs sleep
#     before each, as webhookd serves one connection's requests in turn);
#   - webhookd over HTTPS, one keep-alive TLS connection, per request: all of
#     webhookd's Ir, the part inside wh_admission_serve, TLS (SSL_write/SSL_read)
#     and the rest (h2o, router, metrics), beside GET /healthz as the transport baseline;
#   - the same over HTTPS natively: webhookd's own CPU per request (schedstat),
#     one connection in turn (where perf works: split by perf's cpu-clock samples
#     into the kernel, TLS, h2o and webhookd's own code with its libraries),
#     16 requests pipelined on one connection (served back to back) and under
#     wrk (8 connections).
#   - what a revision costs to hold and to load (memory.sh: RSS with 1 and 3
#     master revisions, load Ir per revision), beside BASE_BUILD's when set.
# Everything on CPU ${CPU:-1} with taskset.  Prints a Markdown table; the
# hello and /healthz µs are medians of ROUNDS (default 3) interleaved rounds.
set -euo pipefail
build=$(cd "${1:?usage: compare.sh BUILD_DIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
shared=${WH_SHARED_DIR:-$here/../../../shared}
corpus=$shared/conformance/istio-inject/master
irb=$shared/tools/istio-render-bench
cpu=${CPU:-1}
n=${N:-200}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pin() { taskset -c "$cpu" "$@"; }
python3 "$here/make_reviews.py" "$corpus" "$work" >/dev/null 2>&1

# --- istiod's engine: CPU per op over a fixed number of ops
go=${GO:-/usr/lib/go-1.19/bin/go}
mkdir -p "$work/gopath/src"
ln -s "$irb" "$work/gopath/src/istio-render-bench"
(cd "$work/gopath/src/istio-render-bench" &&
  GOPATH="$work/gopath:/usr/share/gocode" GO111MODULE=off GOFLAGS= GOCACHE="$work/gocache" \
    "$go" test -c -o "$work/irb.test" .)
go_cpu() { # benchmark regexp, ops -> µs CPU per op
  /usr/bin/env time -f "%U %S" -o "$work/time" env GOMAXPROCS=1 taskset -c "$cpu" "$work/irb.test" -test.run '^$' \
    -test.bench "$1" -test.benchtime "${2}x" -test.count 1 -fixtures "$corpus" \
    -case TestInjection-096-hello.yaml.injected >"$work/go.out"
  # minus one run of the setup (parse etc.): the same binary with 1 op
  /usr/bin/env time -f "%U %S" -o "$work/time1" env GOMAXPROCS=1 taskset -c "$cpu" "$work/irb.test" -test.run '^$' \
    -test.bench "$1" -test.benchtime 1x -test.count 1 -fixtures "$corpus" \
    -case TestInjection-096-hello.yaml.injected >/dev/null
  awk -v n="$2" 'NR == FNR {a = $1 + $2; next} {b = $1 + $2} END {printf "%.0f", (a - b) * 1e6 / (n - 1)}' \
    "$work/time" "$work/time1"
}
go_render=$(go_cpu '^BenchmarkRender$' 400)
go_pipeline=$(go_cpu '^BenchmarkRenderDecodePatch$' 200)

# --- webhookd in process: CPU, then instructions
inproc() { # review "iterations [pause µs]"
  # shellcheck disable=SC2086 # the second argument is two words
  pin "$build/bench/inject/bench_inject" "$work/revisions" "$work/$1.json" $2 | awk '/whole review/ {print $4}'
}
big_us=$(inproc big 100)
ir_inproc() { # review -> Ir per wh_admission_serve (everything executed inside it: inlined code too)
  valgrind --tool=callgrind --toggle-collect=wh_admission_serve --callgrind-out-file="$work/cg.in.$1" \
    "$build/bench/inject/bench_inject" "$work/revisions" "$work/$1.json" 20 >/dev/null 2>&1
  callgrind_annotate "$work/cg.in.$1" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); printf "%.0f", $1 / 20}'
}
hello_ir=$(ir_inproc hello)
big_ir=$(ir_inproc big)

# --- webhookd over HTTPS under callgrind: per-request Ir by part
https_ir() { # review path n -> "total serve tls"
  local port=$((20000 + RANDOM % 20000)) p
  valgrind --tool=callgrind --callgrind-out-file="$work/cg.$1.$3" "$build/server/webhookd" --listen "127.0.0.1:$port" \
    --threads 1 --revisions-dir "$work/revisions" --log-level error >/dev/null 2>&1 &
  p=$!
  python3 "$here/https_client.py" "$port" "$2" "$work/$1.json" "$3"
  kill "$p"
  wait "$p" 2>/dev/null || true
}
part() { # file symbol-regexp -> inclusive Ir of the matching functions
  # (every function: by default the listing stops at 99 % of the total, which
  # left SSL_read out of the TLS figure, and SSL_write too once it shrank)
  callgrind_annotate --auto=no --inclusive=yes --threshold=100 "$1" 2>/dev/null | awk -v re="$2" '
    # a function can be listed twice (source path absolute and relative): count each name once
    # (the largest: code inlined from headers is listed under the header file too)
    $0 ~ re {gsub(",", "", $1); name = $3; sub(/.*:/, "", name); if ($1 > m[name]) m[name] = $1}
    END {for (k in m) s += m[k]; print s + 0}'
}
total() { callgrind_annotate "$1" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}'; }
perreq() { # name path review
  https_ir "$3" "$2" 1
  https_ir "$3" "$2" $((n + 1))
  local f1=$work/cg.$3.1 fn=$work/cg.$3.$((n + 1))
  awk -v a="$(total "$fn")" -v b="$(total "$f1")" -v sa="$(part "$fn" 'wh_admission.c:wh_admission_serve( |$)')" \
    -v sb="$(part "$f1" 'wh_admission.c:wh_admission_serve( |$)')" \
    -v ta="$(part "$fn" '\\?\\?\\?:SSL_(write|read) ')" -v tb="$(part "$f1" '\\?\\?\\?:SSL_(write|read) ')" -v n="$n" \
    'BEGIN {printf "%.0f %.0f %.0f", (a - b) / n, (sa - sb) / n, (ta - tb) / n}'
}
read -r hz_total _ hz_tls <<<"$(perreq healthz /healthz hello)"
read -r hi_total hi_serve hi_tls <<<"$(perreq inject /inject hello)"

# --- webhookd over HTTPS natively: its own CPU per request (all its threads'
# on-CPU time from /proc/PID/task/*/schedstat, ns resolution), server pinned to
# CPU $cpu, the client anywhere else; the same connection pattern as above.
https_cpu() { # review path n [depth [perf-file]] -> µs of webhookd CPU per request
  local port=$((20000 + RANDOM % 20000)) p t0 t1 q=
  taskset -c "$cpu" "$build/server/webhookd" --listen "127.0.0.1:$port" --threads 1 --revisions-dir "$work/revisions" \
    --log-level error >/dev/null 2>&1 &
  p=$!
  python3 "$here/https_client.py" "$port" "$2" "$work/$1.json" 50 # connect, warm up
  if [ -n "${5:-}" ]; then
    perf record -q -e cpu-clock -F 4999 -p "$p" -o "$5" >/dev/null 2>&1 &
    q=$!
    sleep 1
  fi
  t0=$(cat /proc/"$p"/task/*/schedstat | awk '{s += $1} END {printf "%.0f", s}')
  python3 "$here/https_client.py" "$port" "$2" "$work/$1.json" "$3" "${4:-1}"
  t1=$(cat /proc/"$p"/task/*/schedstat | awk '{s += $1} END {printf "%.0f", s}')
  if [ -n "$q" ]; then
    kill -INT "$q"
    wait "$q" 2>/dev/null || true
  fi
  kill "$p"
  wait "$p" 2>/dev/null || true
  # the second client's connection (TLS handshake) is in the difference: one
  # handshake over $3 requests
  awk -v a="$t0" -v b="$t1" -v n="$3" 'BEGIN {printf "%.1f", (b - a) / n / 1000}'
}
# perf's cpu-clock samples of webhookd (while the client ran) by library,
# scaled to µs per request: "kernel TLS h2o webhookd" (webhookd with jansson,
# libc, libyaml: the review, the router and the adapter).
split() { # perf-file µs-per-request
  perf report -i "$1" --no-children --sort dso -g none 2>/dev/null | awk -v t="$2" '
    /^#/ || NF < 2 {next}
    {p = $1; sub(/%/, "", p)}
    $2 ~ /kernel/ {k += p; next}
    $2 ~ /libssl|libcrypto/ {s += p; next}
    $2 ~ /libh2o/ {h += p; next}
    {a += p}
    END {printf "%.0f %.0f %.0f %.0f", k * t / 100, s * t / 100, h * t / 100, a * t / 100}'
}
perf_ok() { perf record -q -e cpu-clock -o "$work/perf.probe" true >/dev/null 2>&1; }
# The same under wrk (8 keep-alive connections, one wrk thread for SECS
# seconds): the server handles several requests per wake-up, as it does
# behind a busy API server.
https_wrk() { # review path -> µs of webhookd CPU per request
  local port=$((20000 + RANDOM % 20000)) p t0 t1 n
  taskset -c "$cpu" "$build/server/webhookd" --listen "127.0.0.1:$port" --threads 1 --revisions-dir "$work/revisions" \
    --log-level error >/dev/null 2>&1 &
  p=$!
  python3 "$here/https_client.py" "$port" "$2" "$work/$1.json" 10 # up and answering
  t0=$(cat /proc/"$p"/task/*/schedstat | awk '{s += $1} END {printf "%.0f", s}')
  n=$(WH_BENCH_PAYLOAD="$work/$1.json" wrk -t1 -c8 -d"${SECS:-5}s" ${3:+-s "$here/../post.lua"} \
    "https://127.0.0.1:$port$2" | awk '/requests in/ {print $1}')
  t1=$(cat /proc/"$p"/task/*/schedstat | awk '{s += $1} END {printf "%.0f", s}')
  kill "$p"
  wait "$p" 2>/dev/null || true
  awk -v a="$t0" -v b="$t1" -v n="$n" 'BEGIN {printf "%.1f", (b - a) / n / 1000}'
}
hz_wrk=$(https_wrk hello /healthz)
hi_wrk=$(https_wrk hello /inject post)
bi_wrk=$(https_wrk big /inject post)
pf_hz='' pf_hi=''
if perf_ok; then pf_hz=$work/perf.hz pf_hi=$work/perf.hi; fi
bi_us=$(https_cpu big /inject "${NBI:-400}")
# The clock of a shared VM swings between runs: the hello and /healthz rows
# are medians of ROUNDS interleaved rounds (the perf split is the last round's).
hot=() wake=() hz1=() hi1=() hz16=() hi16=()
for _ in $(seq "${ROUNDS:-3}"); do
  hot+=("$(inproc hello 400)")
  wake+=("$(inproc hello "400 200")")
  hz1+=("$(https_cpu hello /healthz "${NHZ:-20000}" 1 "$pf_hz")")
  hi1+=("$(https_cpu hello /inject "${NHI:-4000}" 1 "$pf_hi")")
  hz16+=("$(https_cpu hello /healthz "${NHZ:-20000}" 16)")
  hi16+=("$(https_cpu hello /inject "${NHI:-4000}" 16)")
done
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
hello_us=$(median "${hot[@]}")
hello_wake_us=$(median "${wake[@]}")
hz_us=$(median "${hz1[@]}")
hi_us=$(median "${hi1[@]}")
hz_pipe=$(median "${hz16[@]}")
hi_pipe=$(median "${hi16[@]}")
parts() { # perf-file µs -> "kernel a, TLS b, h2o c, webhookd d"
  if [ -z "$1" ]; then
    echo "perf unavailable"
    return
  fi
  read -r a b c d <<<"$(split "$1" "$2")"
  echo "kernel $a, TLS $b, h2o $c, webhookd $d µs"
}

k() { awk -v x="$1" 'BEGIN {printf "%.0f k", x / 1000}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.1f×", a / b}'; }
cat <<EOF
| measured in one run (CPU $cpu, $(date -u +%Y-%m-%d\ %H:%M) UTC, load $(cut -d' ' -f1 /proc/loadavg)) | CPU per op | Ir per op |
|---|---|---|
| istiod's engine, render only (Go text/template + Sprig) | ${go_render} µs | — |
| istiod's engine, render + decode + merge + merge patch | ${go_pipeline} µs | — |
| webhookd hello review in process (wh_admission_serve), the same review hot in a loop | ${hello_us} µs ($(ratio "$go_pipeline" "$hello_us") faster than istiod's pipeline) | $(k "$hello_ir") |
| the same, one review per wake-up (200 µs asleep before each) | ${hello_wake_us} µs | — |
| webhookd big review (1,500 env) in process | ${big_us} µs | $(k "$big_ir") |
| webhookd GET /healthz over HTTPS, all of webhookd | — | $(k "$hz_total") (TLS $(k "$hz_tls")) |
| webhookd POST /inject hello over HTTPS, all of webhookd | — | $(k "$hi_total"): review $(k "$hi_serve"), TLS $(k "$hi_tls"), rest $(k $((hi_total - hi_serve - hi_tls))) ($(ratio "$hi_total" "$hz_total") /healthz) |
| webhookd over HTTPS natively, webhookd's CPU per request: one connection, request and answer in turn | /healthz ${hz_us} µs; hello ${hi_us} µs ($(ratio "$hi_us" "$hz_us") /healthz); big ${bi_us} µs | — |
| the same split by perf samples (last round) | /healthz: $(parts "$pf_hz" "${hz1[-1]}"); hello: $(parts "$pf_hi" "${hi1[-1]}") | — |
| one connection, 16 requests pipelined (served back to back) | /healthz ${hz_pipe} µs; hello ${hi_pipe} µs ($(ratio "$hi_pipe" "$hz_pipe") /healthz) | — |
| the same under wrk (8 connections) | /healthz ${hz_wrk} µs; hello ${hi_wrk} µs ($(ratio "$hi_wrk" "$hz_wrk") /healthz); big ${bi_wrk} µs | — |
EOF
echo
# shellcheck disable=SC2086 # BASE_BUILD: one optional word
"$here/memory.sh" "$build" ${BASE_BUILD:-}
