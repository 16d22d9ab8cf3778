#!/usr/bin/env bash
# deps.sh - install what building and testing webhookd needs on Debian bookworm.
#
# Idempotent: installs only the packages that are missing, so it costs a
# second on a machine that has them.  Needs root (or sudo) when something is
# missing.  `deps.sh build` for building and running; `deps.sh test` (default)
# adds the test tools and the reference implementations used by the tests.
set -euo pipefail

build_pkgs=(build-essential cmake pkg-config libh2o-evloop-dev libssl-dev libjansson-dev libyaml-dev
            libcurl4-openssl-dev openssl ca-certificates)
test_pkgs=(libcmocka-dev curl nghttp2-client wrk python3 python3-yaml python3-jsonpatch valgrind clang clang-format
           libclang-rt-14-dev golang-1.19-go golang-github-masterminds-sprig-dev golang-k8s-sigs-yaml-dev golang-github-evanphx-json-patch-dev
           procps zsh fish)

want=("${build_pkgs[@]}")
[ "${1:-test}" = "test" ] && want+=("${test_pkgs[@]}")

missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "deps.sh: installing ${missing[*]}" >&2
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q >/dev/null
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
