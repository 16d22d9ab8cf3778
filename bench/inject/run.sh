#!/usr/bin/env bash
# Injection benchmark: CPU per review in process (by stage) and req/s over
# HTTP/1.1 keep-alive against a local webhookd, beside the /healthz baseline.
#   bench/inject/run.sh BUILD_DIR [SECONDS]
# Run on an idle machine; uses 127.0.0.1 only, one server thread, 1 wrk thread.
set -euo pipefail
build=${1:?usage: run.sh BUILD_DIR [SECONDS]}
secs=${2:-10}
here=$(cd "$(dirname "$0")" && pwd)
corpus=${WH_CONFORMANCE_DIR:-$here/../../../shared/conformance}/istio-inject/master
work=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
python3 "$here/make_reviews.py" "$corpus" "$work"
for r in hello big; do
  "$build/bench/inject/bench_inject" "$work/revisions" "$work/$r.json" "${ITER:-300}"
done
port=$((20000 + RANDOM % 20000))
"$build/server/webhookd" --listen 127.0.0.1:$port --threads 1 --revisions-dir "$work/revisions" \
  --self-signed-cert-out "$work/ca.pem" --log-level error >"$work/webhookd.log" 2>&1 &
pid=$!
for _ in $(seq 100); do curl -sk "https://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break; sleep 0.1; done
# CPU seconds webhookd has used so far (utime+stime from /proc).
cpu() { awk -v t="$(getconf CLK_TCK)" '{print ($14 + $15) / t}' "/proc/$pid/stat"; }
# wrk against a path; prints req/s, latency and webhookd's CPU per request
# (the number that matters on a shared machine, where wall-clock is noisy).
load() {
  local name=$1 path=$2 out c0 c1 n
  c0=$(cpu)
  out=$(wrk -t1 -c8 -d"${secs}s" ${3:+-s "$here/../post.lua"} "https://127.0.0.1:$port$path")
  c1=$(cpu)
  n=$(echo "$out" | awk '/requests in/ {print $1}')
  echo "== $name: $(echo "$out" | awk '/Requests\/sec/ {print $2}') req/s, latency avg $(echo "$out" |
    awk '/Latency/ {print $2}'), webhookd CPU $(awk -v a="$c0" -v b="$c1" -v n="$n" 'BEGIN {printf "%.0f", (b - a) * 1e6 / n}') us/request over $n requests"
  echo "$out" | grep -E 'Non-2xx' || true
}
load "/healthz baseline" /healthz
WH_BENCH_PAYLOAD="$work/hello.json" load "/inject hello" /inject post
WH_BENCH_PAYLOAD="$work/big.json" load "/inject big (1,500 env vars)" /inject post
