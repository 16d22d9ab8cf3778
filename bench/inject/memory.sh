#!/usr/bin/env bash
# memory.sh BUILD_DIR [BASE_BUILD_DIR] - what a revision costs to hold and to
# load, beside the same numbers of a baseline build measured in the same run
# (e.g. a worktree of the session-start commit), as Markdown table rows:
#   - webhookd's VmRSS once /readyz answers, with one and with three copies of
#     the corpus' master revision in --revisions-dir (the difference / 2 is
#     what one more revision costs), and with one after 20 hello reviews
#     (what serving adds: sets made on first use, the render's scratch);
#   - the instructions of loading one master revision: callgrind Ir inside
#     wh_inject_revision_load_release (bench_inject with no review), three
#     revisions minus one, / 2.
# Each directory has a revision named "default" (the others are copies of it
# named b and c), so the built-in revision is not what serves "default":
# a build that loads it only when it serves does not load it in either run.
# The Ir rows of compare.sh are per review; these are per revision.  Reported,
# not asserted (bench/inject/README.md).
set -euo pipefail
build=$(cd "${1:?usage: memory.sh BUILD_DIR [BASE_BUILD_DIR]}" && pwd)
base=${2:+$(cd "$2" && pwd)}
here=$(cd "$(dirname "$0")" && pwd)
corpus=${WH_SHARED_DIR:-$here/../../../shared}/conformance/istio-inject/master
work=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT
python3 "$here/make_reviews.py" "$corpus" "$work" >/dev/null 2>&1
mkdir -p "$work/three"
for r in default b c; do cp -r "$work/revisions/default" "$work/three/$r"; done

rss() { # build revisions-dir [hello reviews] -> VmRSS in kB
  local port=$((20000 + RANDOM % 20000)) kb
  "$1/server/webhookd" --listen "127.0.0.1:$port" --threads 1 --revisions-dir "$2" \
    --self-signed-cert-out "$work/ca.pem" --log-level error >/dev/null 2>&1 &
  pid=$!
  for _ in $(seq 300); do curl -sfk "https://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break; sleep 0.1; done
  if [ -n "${3:-}" ]; then python3 "$here/https_client.py" "$port" /inject "$work/hello.json" "$3" >/dev/null; fi
  kb=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status")
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  pid=""
  echo "$kb"
}
load_ir() { # build revisions-dir -> Ir inside wh_inject_revision_load_release
  valgrind --tool=callgrind --toggle-collect=wh_inject_revision_load_release --callgrind-out-file="$work/cg" \
    "$1/bench/inject/bench_inject" "$2" "$work/hello.json" 0 >/dev/null 2>&1
  callgrind_annotate "$work/cg" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}'
}
measure() { # build -> "rss1 rss3 rss1-after-hello ir-per-revision"
  local one three ir1 ir3
  one=$(rss "$1" "$work/revisions")
  three=$(rss "$1" "$work/three")
  ir1=$(load_ir "$1" "$work/revisions")
  ir3=$(load_ir "$1" "$work/three")
  echo "$one $three $(rss "$1" "$work/revisions" 20) $(((ir3 - ir1) / 2))"
}
mib() { awk -v x="$1" 'BEGIN {printf "%.1f MiB", x / 1024}'; }
cell() { # rss1 rss3 served ir -> the four cells
  echo "$(mib "$1") | $(mib "$2") | $(mib $((($2 - $1) / 2))) | $(mib "$3") | $(awk -v x="$4" 'BEGIN {printf "%.1f M", x / 1e6}')"
}
read -r a1 a3 as ai <<<"$(measure "$build")"
echo "| memory, one run ($(date -u +%Y-%m-%d\ %H:%M) UTC) | RSS, 1 master revision | RSS, 3 | per added revision | RSS, 1 revision after 20 hello reviews | revision load Ir (per master revision) |"
echo "|---|---|---|---|---|---|"
if [ -n "$base" ]; then
  read -r b1 b3 bs bi <<<"$(measure "$base")"
  echo "| baseline ($(git -C "$base/.." rev-parse --short HEAD 2>/dev/null || echo "$base")) | $(cell "$b1" "$b3" "$bs" "$bi") |"
fi
echo "| this build ($(git -C "$build/.." rev-parse --short HEAD 2>/dev/null || echo "$build")) | $(cell "$a1" "$a3" "$as" "$ai") |"
if [ -n "$base" ]; then
  ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f×", a / b}'; }
  echo "| this / baseline | $(ratio "$a1" "$b1") | $(ratio "$a3" "$b3") | $(ratio $((a3 - a1)) $((b3 - b1))) | $(ratio "$as" "$bs") | $(ratio "$ai" "$bi") |"
fi
