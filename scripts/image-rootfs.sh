#!/usr/bin/env bash
# image-rootfs.sh SRCROOT DEST WEBHOOKD WEBHOOKCTL - assemble the image's root
# filesystem in DEST: the two binaries (stripped), the shared libraries they
# load and nothing else from SRCROOT (a tree where Debian's runtime packages
# are unpacked: mmdebstrap's in scripts/image.sh, / in the Dockerfile's rootfs
# stage, so both give the same contents), CA certificates, and passwd/group
# entries for the non-root user 65532.  No shell, no package manager, no docs.
#
# Why the library closure and not whole packages: libcurl4 drags in Kerberos,
# LDAP, SASL, RTMP, SSH2 and GnuTLS with their data, docs and tools; what the
# dynamic loader actually maps is the DT_NEEDED closure of the two binaries,
# resolved here in SRCROOT (readelf, not the host's ldd), ~20 MB of .so files.
# Each library's Debian copyright file comes along (licence notices, not docs).
set -euo pipefail
src=$(readlink -f "$1") dest=$2 webhookd=$3 webhookctl=$4
multiarch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
libdirs=("$src/usr/lib/$multiarch" "$src/lib/$multiarch" "$src/usr/lib" "$src/lib")

die() { echo "image-rootfs.sh: $*" >&2; exit 1; }
needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*Shared library: \[\(.*\)\]/\1/p'; }
interp() { readelf -l "$1" | sed -n 's/.*\[Requesting program interpreter: \(.*\)\]/\1/p'; }
find_lib() {
  for d in "${libdirs[@]}"; do
    [ -e "$d/$1" ] && { echo "$d/$1"; return; }
  done
  die "$1 is not in $src (is its Debian package unpacked there?)"
}
# The Debian package that ships a library of SRCROOT (by its path there,
# with or without the /usr of merged /usr), as this machine's dpkg knows it:
# the packages that the build linked against are installed here.
owner() {
  local rel=${1#"$src"}
  { dpkg -S "$rel" 2>/dev/null || dpkg -S "${rel#/usr}" 2>/dev/null || dpkg -S "/usr$rel" 2>/dev/null; } |
    head -1 | cut -d: -f1
}

rm -rf "$dest"
mkdir -p "$dest"/usr/local/bin "$dest/usr/lib/$multiarch" "$dest"/etc/ssl/certs "$dest"/usr/lib/ssl \
  "$dest"/proc "$dest"/dev "$dest"/sys "$dest"/tmp
chmod 1777 "$dest/tmp"
# merged /usr, as Debian since bookworm: /lib and /lib64 point into /usr
ln -s usr/lib "$dest/lib"
ln -s usr/lib64 "$dest/lib64"
mkdir -p "$dest/usr/lib64"

for b in "$webhookd" "$webhookctl"; do
  install -m 0755 "$b" "$dest/usr/local/bin/$(basename "$b")"
  strip --strip-unneeded "$dest/usr/local/bin/$(basename "$b")"
done

# The loader, then every DT_NEEDED library, transitively.
loader=$(interp "$webhookd")
[ -n "$loader" ] || die "no program interpreter in $webhookd"
cp -L "$(find_lib "$(basename "$loader")")" "$dest/usr/lib/$multiarch/$(basename "$loader")"
ln -s "../lib/$multiarch/$(basename "$loader")" "$dest/usr/lib64/$(basename "$loader")"
queue=("$dest/usr/local/bin/webhookd" "$dest/usr/local/bin/webhookctl")
declare -A seen=([$(basename "$loader")]=1)
pkgs=()
while [ ${#queue[@]} -gt 0 ]; do
  f=${queue[0]}
  queue=("${queue[@]:1}")
  for so in $(needed "$f"); do
    [ -n "${seen[$so]:-}" ] && continue
    seen[$so]=1
    path=$(find_lib "$so")
    cp -L "$path" "$dest/usr/lib/$multiarch/$so"
    pkgs+=("$(owner "$(dirname "$path")/$(basename "$(readlink -f "$path")")")")
    queue+=("$dest/usr/lib/$multiarch/$so")
  done
done
pkgs+=("$(owner "$(find_lib "$(basename "$loader")")")" ca-certificates)

# CA certificates: the bundle update-ca-certificates would write (extracted
# packages run no maintainer scripts), where libcurl and OpenSSL look.
cat "$src"/usr/share/ca-certificates/mozilla/*.crt >"$dest/etc/ssl/certs/ca-certificates.crt"
[ -s "$dest/etc/ssl/certs/ca-certificates.crt" ] || die "no CA certificates in $src (ca-certificates unpacked?)"
ln -s /etc/ssl/certs "$dest/usr/lib/ssl/certs"
ln -s /etc/ssl/certs/ca-certificates.crt "$dest/usr/lib/ssl/cert.pem"

printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/nonexistent:/sbin/nologin\n' \
  >"$dest/etc/passwd"
printf 'root:x:0:\nnonroot:x:65532:\n' >"$dest/etc/group"

for p in $(printf '%s\n' "${pkgs[@]}" | sort -u); do
  if [ -f "$src/usr/share/doc/$p/copyright" ]; then
    install -D -m 0644 "$src/usr/share/doc/$p/copyright" "$dest/usr/share/doc/$p/copyright"
  fi
done
find "$dest" -exec touch -h -d @0 {} + # reproducible timestamps
