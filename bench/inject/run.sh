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
trap 'kill $pid 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
python3 "$here/make_reviews.py" "$corpus" "$work"
for r in hello big; do
  "$build/bench/inject/bench_inject" "$work/revisions" "$work/$r.json" "${ITER:-300}"
done
port=$((20000 + RANDOM % 20000))
"$build/server/webhookd" --listen 127.0.0.1:$port --threads 1 --revisions-dir "$work/revisions" \
  --self-signed-cert-out "$work/ca.pem" --log-level error >"$work/webhookd.log" 2>&1 &
pid=$!
for _ in $(seq 100); do curl -sk "https://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break; sleep 0.1; done
echo "== /healthz baseline"
wrk -t1 -c8 -d"${secs}s" "https://127.0.0.1:$port/healthz" | grep -E 'Requests/sec|Latency'
for r in hello big; do
  echo "== /inject $r"
  BODY_FILE="$work/$r.json" wrk -t1 -c8 -d"${secs}s" -s "$here/post.lua" "https://127.0.0.1:$port/inject" |
    grep -E 'Requests/sec|Latency|Non-2xx'
done
