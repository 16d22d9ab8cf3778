#!/usr/bin/env bash
# image.sh - build webhookd's container image as an OCI archive without any
# registry or container engine: build-image/webhookd-oci.tar (an OCI image
# layout, tag "webhookd"; `skopeo copy oci-archive:build-image/webhookd-oci.tar:webhookd
# docker-daemon:webhookd:latest` or `podman load` take it).
#
#   1. build webhookd and webhookctl (Release, no tests)       build-image/build/
#   2. unpack the Debian packages of the libraries they load   build-image/debian/
#      (mmdebstrap --variant=extract: no dpkg, no maintainer scripts, ~10 s)
#   3. keep only what runs: scripts/image-rootfs.sh              build-image/rootfs/
#   4. one layer, config (user 65532, entrypoint) with umoci     build-image/oci/ -> .tar
#
# Needs root (mmdebstrap and umoci write files owned by root), the Debian
# mirror of this machine's apt sources, and mmdebstrap + umoci (installed when
# missing).  The Dockerfile builds the same root filesystem with the same
# scripts/image-rootfs.sh.
#   WH_IMAGE_WEBHOOKD, WH_IMAGE_WEBHOOKCTL  prebuilt binaries (skip step 1; the tests use theirs)
#   WH_IMAGE_OUT                            output directory (default build-image)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${WH_IMAGE_OUT:-build-image}
mkdir -p "$out"
out=$(readlink -f "$out")
[ "$(id -u)" = 0 ] || { echo "image.sh: run as root (mmdebstrap and umoci lay out root-owned files)" >&2; exit 1; }
missing=()
for p in mmdebstrap umoci; do command -v "$p" >/dev/null || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  echo "image.sh: installing ${missing[*]}" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
fi

webhookd=${WH_IMAGE_WEBHOOKD:-}
webhookctl=${WH_IMAGE_WEBHOOKCTL:-}
if [ -z "$webhookd" ] || [ -z "$webhookctl" ]; then
  scripts/deps.sh build
  cmake -S . -B "$out/build" -DCMAKE_BUILD_TYPE=Release -DWH_SANITIZE= -DWH_BUILD_TESTS=OFF >/dev/null
  cmake --build "$out/build" -j"${WH_JOBS:-2}" --target webhookd webhookctl
  webhookd=$out/build/server/webhookd webhookctl=$out/build/ctl/webhookctl
fi

# The Debian packages of the libraries the binaries load on this machine
# (dpkg registers some under /lib, some under /usr/lib).
pkgs=(ca-certificates)
for lib in $(ldd "$webhookd" "$webhookctl" | awk '/=>/ {print $3} /ld-linux/ {print $1}' | sort -u); do
  real=$(readlink -f "$lib")
  p=$({ dpkg -S "$real" 2>/dev/null || dpkg -S "${real#/usr}" 2>/dev/null || dpkg -S "$lib" 2>/dev/null; } |
    head -1 | cut -d: -f1)
  [ -n "$p" ] || { echo "image.sh: no Debian package ships $lib" >&2; exit 1; }
  pkgs+=("$p")
done
pkgs=($(printf '%s\n' "${pkgs[@]}" | sort -u))

sources=/etc/apt/sources.list.d/debian.sources
[ -f "$sources" ] || sources=/etc/apt/sources.list
suite=$(. /etc/os-release && echo "$VERSION_CODENAME")
echo "image.sh: unpacking ${#pkgs[@]} Debian packages ($suite): ${pkgs[*]}" >&2
rm -rf "$out/debian"
mmdebstrap --quiet --variant=extract --include="$(IFS=,; echo "${pkgs[*]}")" "$suite" "$out/debian" "$sources"

scripts/image-rootfs.sh "$out/debian" "$out/rootfs" "$webhookd" "$webhookctl"

layout=$out/oci
rm -rf "$layout"
umoci init --layout "$layout"
umoci new --image "$layout:webhookd"
umoci insert --image "$layout:webhookd" --history.created_by "scripts/image.sh" "$out/rootfs" /
version=$("$webhookd" --version | awk '{print $NF}')
umoci config --image "$layout:webhookd" --os linux --architecture "$(dpkg --print-architecture)" \
  --config.user 65532:65532 --config.entrypoint /usr/local/bin/webhookd --config.cmd --listen=:8443 \
  --config.exposedports 8443/tcp --config.workingdir / \
  --config.label org.opencontainers.image.title=webhookd \
  --config.label "org.opencontainers.image.version=$version"
umoci gc --layout "$layout"
tar -C "$layout" -cf "$out/webhookd-oci.tar" .

kb() { du -sk --apparent-size "$1" | cut -f1; }
echo "image.sh: $out/webhookd-oci.tar ($(kb "$out/webhookd-oci.tar") KiB, layers gzip-compressed);" \
  "root filesystem $(kb "$out/rootfs") KiB uncompressed, $(find "$out/rootfs" -type f | wc -l) files" >&2
