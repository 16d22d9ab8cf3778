#!/bin/sh
# build_goref.sh OUT SRC_DIR WORK_DIR - builds the Go reference renderer in
# GOPATH mode against Debian's Go libraries (offline).  Exits 0 without
# building when Go 1.19 or the libraries are missing (the tests then skip).
set -eu
out=$1 src=$2 work=$3
GO=${GO:-/usr/lib/go-1.19/bin/go}
if [ ! -x "$GO" ] || [ ! -d /usr/share/gocode/src/github.com/Masterminds/sprig ] ||
   [ ! -d /usr/share/gocode/src/sigs.k8s.io/yaml ]; then
  echo "build_goref: Go 1.19 or sprig/yaml sources missing; Go reference not built" >&2
  rm -f "$out"
  exit 0
fi
mkdir -p "$work/gopath/src"
rm -f "$work/gopath/src/$(basename "$src")"
ln -s "$src" "$work/gopath/src/$(basename "$src")"
cd "$work/gopath/src/$(basename "$src")"
GOPATH="$work/gopath:/usr/share/gocode" GO111MODULE=off GOFLAGS= GOCACHE="$work/gocache" \
  "$GO" build -o "$out" .
