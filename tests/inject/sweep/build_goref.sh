#!/bin/sh
# build_goref.sh OUT GOREF_DIR BENCH_DIR WORK_DIR - builds the sweep's Go
# reference: goref/sweep.go plus the template functions and data types of
# shared/tools/istio-render-bench, in GOPATH mode against Debian's Go
# libraries (offline).  Exits 0 without building when Go 1.19, the libraries
# or the bench are missing (the sweep then only checks that renders succeed).
set -eu
out=$1 src=$2 bench=$3 work=$4
GO=${GO:-/usr/lib/go-1.19/bin/go}
rm -f "$out"
if [ ! -x "$GO" ] || [ ! -d /usr/share/gocode/src/github.com/Masterminds/sprig ] ||
   [ ! -d /usr/share/gocode/src/sigs.k8s.io/yaml ] || [ ! -f "$bench/funcs.go" ]; then
  echo "build_goref: Go 1.19, sprig/yaml sources or istio-render-bench missing; Go reference not built" >&2
  exit 0
fi
pkg="$work/gopath/src/sweep-goref"
rm -rf "$pkg"
mkdir -p "$pkg"
ln -s "$src/sweep.go" "$pkg/sweep.go"
for f in kube.go mesh.go funcs.go inputs.go; do ln -s "$bench/$f" "$pkg/$f"; done
cd "$pkg"
GOPATH="$work/gopath:/usr/share/gocode" GO111MODULE=off GOFLAGS= GOCACHE="$work/gocache" \
  "$GO" build -o "$out" .
