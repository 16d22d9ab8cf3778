#!/usr/bin/env bash
# test_image.sh SRC WEBHOOKD WEBHOOKCTL WORK - scripts/image.sh builds the OCI
# archive (from this build's binaries), and what the archive holds runs: the
# archive is unpacked with umoci like a runtime would, its root filesystem is
# checked (no shell, no apt, no docs beyond licences, <= 30 MB), then webhookd
# runs from it as uid 65532 on a read-only bind mount in its own mount and pid
# namespaces (unshare + chroot) and answers /healthz and /readyz over TLS.
# Exit 77 (skipped, saying why) when not root or without unshare/chroot; the
# image tools are installed by image.sh itself.
set -uo pipefail
src=$1 webhookd=$2 webhookctl=$3 work=$4
limit_kib=$((30 * 1024))
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || skip "needs root (mmdebstrap, umoci, chroot and a read-only bind mount); CI runs as root"
for t in unshare chroot mount curl; do command -v $t >/dev/null || skip "$t is not installed"; done

rm -rf "$work"
mkdir -p "$work"
WH_IMAGE_OUT=$work/out WH_IMAGE_WEBHOOKD=$webhookd WH_IMAGE_WEBHOOKCTL=$webhookctl "$src/scripts/image.sh" \
  >"$work/image.log" 2>&1 || { cat "$work/image.log"; fail "scripts/image.sh failed"; }
tail -1 "$work/image.log"
archive=$work/out/webhookd-oci.tar
[ -s "$archive" ] || fail "no $archive"

# Unpack the archive itself, as a container runtime would.
mkdir -p "$work/layout"
tar -C "$work/layout" -xf "$archive" || fail "the archive is not a tar"
grep -q '"imageLayoutVersion"' "$work/layout/oci-layout" || fail "no oci-layout in the archive"
umoci unpack --image "$work/layout:webhookd" "$work/bundle" >/dev/null || fail "umoci cannot unpack the archive"
root=$work/bundle/rootfs
python3 - "$work/bundle/config.json" <<'PY' || fail "the runtime config is not what the image promises"
import json, sys
c = json.load(open(sys.argv[1]))
assert c["process"]["user"]["uid"] == 65532 and c["process"]["user"]["gid"] == 65532, c["process"]["user"]
assert c["process"]["args"] == ["/usr/local/bin/webhookd", "--listen=:8443"], c["process"]["args"]
PY

# What it holds, and what not.
for f in usr/local/bin/webhookd usr/local/bin/webhookctl etc/ssl/certs/ca-certificates.crt etc/passwd; do
  [ -s "$root/$f" ] || fail "/$f is missing"
done
grep -q '^nonroot:x:65532:65532:' "$root/etc/passwd" || fail "no passwd entry for 65532"
for f in bin/sh bin/bash usr/bin/sh usr/bin/dash usr/bin/apt usr/bin/dpkg usr/share/man usr/share/locale; do
  [ -e "$root/$f" ] || [ -L "$root/$f" ] && fail "/$f is in the image"
done
extra=$(cd "$root" && find usr/share -type f ! -path 'usr/share/doc/*/copyright')
[ -z "$extra" ] || fail "files besides licences under /usr/share: $extra"
kib=$(du -sk --apparent-size "$root" | cut -f1)
echo "root filesystem: $kib KiB uncompressed ($(find "$root" -type f | wc -l) files), archive: $(du -k "$archive" | cut -f1) KiB"
[ "$kib" -le "$limit_kib" ] || fail "the root filesystem is $kib KiB, over $limit_kib"

# Run it: read-only tree, uid 65532, its own mount and pid namespaces.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
unshare --mount --pid --fork --kill-child sh -c '
  set -e
  root=$1 port=$2
  mount --make-rprivate /
  mount --bind "$root" "$root"
  mount -o remount,bind,ro "$root"
  mount -t proc proc "$root/proc"
  exec chroot --userspec=65532:65532 "$root" /usr/local/bin/webhookd --listen "127.0.0.1:$port" --log-format text
' sh "$root" "$port" >"$work/webhookd.log" 2>&1 &
runner=$!
# unshare --fork blocks SIGTERM while it waits: stop webhookd (the namespace's
# pid 1, which handles SIGTERM) and unshare follows.
cleanup() {
  [ -n "${pid:-}" ] && kill "$pid" 2>/dev/null
  sleep 0.5
  kill -0 "$runner" 2>/dev/null && kill -KILL "$runner" 2>/dev/null
  wait "$runner" 2>/dev/null
}
pid=""
trap cleanup EXIT
ok=""
for _ in $(seq 1 100); do
  [ -n "$pid" ] || pid=$(pgrep -f "^/usr/local/bin/webhookd --listen 127.0.0.1:$port" | head -1)
  if out=$(curl -sk --max-time 2 "https://127.0.0.1:$port/healthz" 2>/dev/null) && [ "$out" = ok ]; then
    ok=1
    break
  fi
  kill -0 "$runner" 2>/dev/null || break
  sleep 0.1
done
[ -n "$ok" ] || { cat "$work/webhookd.log"; fail "no /healthz answer from webhookd in the image"; }
# /healthz can answer before the first pgrep above saw the process (a loaded machine): look again.
[ -n "$pid" ] || pid=$(pgrep -f "^/usr/local/bin/webhookd --listen 127.0.0.1:$port" | head -1)
echo "/healthz: $out"
code=$(curl -sk -o /dev/null -w '%{http_code}' "https://127.0.0.1:$port/readyz")
[ "$code" = 200 ] || fail "/readyz answered $code"
[ -n "$pid" ] || fail "cannot find the webhookd process"
uid=$(awk '/^Uid:/ {print $2 ":" $3 ":" $4 ":" $5}' "/proc/$pid/status")
[ "$uid" = "65532:65532:65532:65532" ] || fail "webhookd runs as uid $uid, want 65532"
echo "webhookd pid $pid runs as uid 65532, root $(readlink "/proc/$pid/root")"
grep -q " $root ro," <(awk '{print " " $2 " " $4 ","}' "/proc/$pid/mounts") 2>/dev/null ||
  grep -q "^/ ro" <(awk '{print $2 " " $4}' "/proc/$pid/mounts") || fail "webhookd's root is not read-only"
# webhookctl runs from the image too (same libraries).
v=$(unshare --mount sh -c 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" &&
      exec chroot --userspec=65532:65532 "$1" /usr/local/bin/webhookctl --version' sh "$root") ||
  fail "webhookctl does not run in the image"
echo "$v"
cleanup
trap - EXIT
rm -rf "$work"
echo "ok"
