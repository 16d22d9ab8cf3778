#!/usr/bin/env bash
# test.sh - the one command that tests webhookd, on a fresh Debian bookworm
# machine as on a developer's: installs what is missing (scripts/deps.sh),
# builds, and runs the whole ctest suite; then builds everything again with
# ASan+UBSan and runs the suite again; then runs webhookd's own tests (unit
# and integration, i.e. the real server over TLS) under valgrind.  Exits
# non-zero as soon as one stage fails.
#
#   WH_JOBS=N          parallel build/test jobs (default 2)
#   WH_SKIP_VALGRIND=1 skip the valgrind stage (local iterations only)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
jobs="${WH_JOBS:-2}"
export CTEST_OUTPUT_ON_FAILURE=1
stage() { printf '\n=== test.sh: %s (%s)\n' "$*" "$(date -u +%H:%M:%S)" >&2; }

stage "dependencies"
scripts/deps.sh test

stage "build and test"
cmake -S . -B build-test -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWH_SANITIZE= -DWH_BUILD_TESTS=ON >/dev/null
cmake --build build-test -j"$jobs"
ctest --test-dir build-test -j"$jobs" --timeout 900

stage "build and test with ASan+UBSan"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DWH_SANITIZE=address,undefined -DWH_BUILD_TESTS=ON >/dev/null
cmake --build build-asan -j"$jobs"
# WH_TEST_SLOW stretches the integration tests' timeouts for the slower build.
# -LE resources: the tests that measure webhookd's RSS, file limits and latency (ASan's shadow memory and
# quarantine change all three); they run in the plain stage above.
ASAN_OPTIONS=detect_leaks=1:strict_string_checks=1 UBSAN_OPTIONS=print_stacktrace=1 WH_TEST_SLOW=3 \
  ctest --test-dir build-asan -j"$jobs" -LE resources --timeout 1800

if [ "${WH_SKIP_VALGRIND:-0}" != 1 ]; then
  stage "webhookd's tests under valgrind"
  # The suppression file holds only h2o's per-thread recycle allocators.
  vg="valgrind --quiet --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite"
  vg="$vg --show-leak-kinds=definite --suppressions=$root/tests/integration/valgrind.supp"
  for t in test_router test_flags test_certs; do
    $vg build-test/tests/server/$t >/dev/null
  done
  $vg build-test/tests/admission/test_admission tests/admission/cases.json >/dev/null
  # -LE resources: tests that measure webhookd's memory, file limits or latency, which valgrind changes.
  WH_TEST_WRAPPER="$vg" WH_TEST_SLOW=10 ctest --test-dir build-test -L integration -LE resources --timeout 1800
  # The conformance runs drive every injection and validation path through the
  # request JSON arena (common/wh_json_arena.h), which valgrind sees block by block.
  WH_TEST_WRAPPER="$vg" WH_TEST_SLOW=10 ctest --test-dir build-test -R '^(inject-conformance|validate.conformance)$' \
    --timeout 1800
fi
stage "all passed"
