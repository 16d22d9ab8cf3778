#!/usr/bin/env bash
# run.sh - install what is missing, build, and start webhookd on
# https://127.0.0.1:8443 with a freshly generated self-signed ECDSA P-256
# certificate (the embedded default).  Its certificate is written to
# build-run/ca.crt so that clients can verify it:
#     curl --cacert build-run/ca.crt https://localhost:8443/readyz
# Extra arguments go to webhookd (e.g. --log-level=debug, --http2).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh build
cmake -S . -B build-run -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWH_SANITIZE= >/dev/null
cmake --build build-run -j"${WH_JOBS:-2}" --target webhookd webhookctl
echo "run.sh: starting webhookd on https://127.0.0.1:8443 (CA: build-run/ca.crt); Ctrl-C stops it" >&2
exec build-run/server/webhookd --listen 127.0.0.1:8443 --log-format text --self-signed-cert-out build-run/ca.crt "$@"
