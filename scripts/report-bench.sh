#!/usr/bin/env bash
# Size and load time of the HTML report on a generated corpus.
#
#   scripts/report-bench.sh [N]        (default N=100000 documents, ~2.5 KB each)
#
# 1. Builds the release binary; generates target/bench/corpus-N.csv with scripts/gen-corpus
#    (seed 1) unless it exists (as scripts/bench.sh does).
# 2. Runs `megashingle report` on it under GNU time (wall time, peak RSS) with --timings, and
#    prints the report's size.
# 3. Loads the report from disk in headless Chromium twice: with --dump-dom, to read the
#    page's data-ready attribute (milliseconds from the start of navigation to the end of the
#    page's script: the page is interactive), and taking a screenshot, whose wall time covers
#    the whole browser run (start-up, load, layout and paint).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
n=${1:-100000}
if ! [[ $n =~ ^[0-9]+$ ]] || [ "$n" -eq 0 ]; then
  echo "usage: scripts/report-bench.sh [N]   (N documents, default 100000)" >&2
  exit 2
fi
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "report-bench.sh: chromium is not installed (apt-get install chromium)" >&2
  exit 2
fi
if [ ! -x /usr/bin/time ]; then
  echo "report-bench.sh: /usr/bin/time (GNU time) is missing; installing the 'time' package with apt-get" >&2
  apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time >&2
fi
cargo build --release --quiet
mkdir -p target/bench
corpus=target/bench/corpus-$n.csv
if [ ! -s "$corpus" ]; then
  echo "report-bench.sh: generating $corpus" >&2
  scripts/gen-corpus "$n" "$corpus"
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
report=$work/report.html
/usr/bin/time -f "report: %e s wall, %M KB peak RSS" \
  target/release/megashingle report "$corpus" -o "$report" --timings
echo "report size: $(stat -c %s "$report") bytes"
browse() {
  "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$work/profile-$1" "${@:2}" 2>/dev/null
}
browse dump --dump-dom "file://$report" > "$work/dom.html"
ready=$(grep -o 'data-ready="[0-9]*"' "$work/dom.html" | head -1 | tr -dc 0-9)
echo "interactive (end of the page's script): ${ready:-?} ms after navigation start"
started=$(date +%s%3N)
browse shot --hide-scrollbars --window-size=1400,1000 --screenshot="$work/shot.png" "file://$report"
echo "headless screenshot run (start-up, load, layout, paint): $(( $(date +%s%3N) - started )) ms"
