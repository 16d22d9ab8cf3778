#!/usr/bin/env bash
# run.sh - install what is missing (only the build packages), build, and start
# webhookd on https://127.0.0.1:8443 with a freshly generated self-signed
# ECDSA P-256 certificate (the embedded default).  Its certificate is written
# to build-run/ca.crt so that clients can verify it:
#     curl --cacert build-run/ca.crt https://localhost:8443/readyz
# Arguments go to webhookd after run.sh's own and win over them (the last
# value of a flag counts): scripts/run.sh --listen 127.0.0.1:9443 --http2
# --log-level=debug.  The tests are not configured here (WH_BUILD_TESTS=OFF):
# their packages are scripts/test.sh's business.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh build
cmake -S . -B build-run -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWH_SANITIZE= -DWH_BUILD_TESTS=OFF >/dev/null
cmake --build build-run -j"${WH_JOBS:-2}" --target webhookd webhookctl
listen=127.0.0.1:8443
prev=""
for arg in "$@"; do
  case "$arg" in
    --listen=*) listen=${arg#--listen=} ;;
    *) [ "$prev" = --listen ] && listen=$arg ;;
  esac
  prev=$arg
done
echo "run.sh: starting webhookd on https://$listen (CA: build-run/ca.crt); Ctrl-C stops it" >&2
exec build-run/server/webhookd --listen 127.0.0.1:8443 --log-format text --self-signed-cert-out build-run/ca.crt "$@"
