#!/usr/bin/env bash
# configure_without_test_deps.sh SRC WORK - configure SRC as on a machine that
# has the build packages but not the test ones (cmocka hidden from pkg-config
# through a filtered PKG_CONFIG_LIBDIR): the default configure (WH_BUILD_TESTS=AUTO)
# must succeed, name what it left out, configure no test and still know how to
# build webhookd and webhookctl; WH_BUILD_TESTS=ON must refuse with the reason.
set -euo pipefail
src=$1 work=$2
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$work"
mkdir -p "$work/pc"

# Every .pc file pkg-config knows, except the test packages'.
IFS=: read -r -a dirs <<<"$(pkg-config --variable pc_path pkg-config)"
for d in "${dirs[@]}"; do
  for pc in "$d"/*.pc; do
    [ -e "$pc" ] || continue
    case "$(basename "$pc")" in cmocka.pc) continue ;; esac
    [ -e "$work/pc/$(basename "$pc")" ] || ln -s "$pc" "$work/pc/"
  done
done
export PKG_CONFIG_LIBDIR=$work/pc PKG_CONFIG_PATH=
pkg-config --exists cmocka && fail "cmocka is still visible to pkg-config"
pkg-config --exists jansson libh2o-evloop || fail "the build packages are not visible through $work/pc"

echo "== default configure (WH_BUILD_TESTS=AUTO) without cmocka"
cmake -S "$src" -B "$work/auto" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG=-O0 -DWH_SANITIZE= >"$work/auto.log" 2>&1 || {
  cat "$work/auto.log"
  fail "configure failed without the test packages"
}
grep -q "Tests and benchmarks: not configured, missing cmocka (libcmocka-dev)" "$work/auto.log" || {
  cat "$work/auto.log"
  fail "the configure does not say that the tests were left out for want of cmocka"
}
[ ! -e "$work/auto/tests" ] && [ ! -e "$work/auto/bench" ] || fail "tests/ or bench/ was configured anyway"
n=$(ctest --test-dir "$work/auto" -N | sed -n 's/^Total Tests: //p')
[ "$n" = 0 ] || fail "$n tests configured without their dependencies"
# ... and builds the product (with -O0: the test is about the configure).
cmake --build "$work/auto" -j"${WH_JOBS:-2}" --target webhookd webhookctl >"$work/build.log" 2>&1 || {
  tail -30 "$work/build.log"
  fail "webhookd/webhookctl do not build from this configure"
}
"$work/auto/server/webhookd" --version >/dev/null || fail "the webhookd built here does not run"
"$work/auto/ctl/webhookctl" version >/dev/null || fail "the webhookctl built here does not run"
echo "ok: configured without tests, and said why:"
grep -A1 "not configured" "$work/auto.log" | sed 's/^/  /'

echo "== WH_BUILD_TESTS=ON without cmocka must refuse"
if cmake -S "$src" -B "$work/on" -DWH_BUILD_TESTS=ON >"$work/on.log" 2>&1; then
  fail "WH_BUILD_TESTS=ON configured without cmocka"
fi
grep -q "WH_BUILD_TESTS=ON but the tests need cmocka" "$work/on.log" || {
  cat "$work/on.log"
  fail "WH_BUILD_TESTS=ON failed without saying why"
}
echo "ok: refused with the reason"
rm -rf "$work"
