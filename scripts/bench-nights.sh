#!/usr/bin/env bash
# A night of running stories: the cost of `megashingle index add` of a night whose documents
# mostly join stories that earlier nights began, next to `cluster` of the same night alone.
#
#   scripts/bench-nights.sh [TOTAL] [NIGHTS] [ROUNDS]   (defaults: 1100000, 11, 2)
#
# 1. Builds the release binary (BIN=PATH measures another build instead).
# 2. Generates target/bench/running-TOTAL.csv with its truth unless it exists
#    (`scripts/gen-corpus TOTAL ... --running-stories`: copy families of up to 300 documents)
#    and deals it into NIGHTS nights of one size (`scripts/split-nights`), which prints the
#    share of each night's documents that join a story of an earlier night.
# 3. Builds target/bench/running-TOTAL-NIGHTS.db unless it exists, adding nights 1 to
#    NIGHTS-1 in turn, as a news desk's nightly runs would.
# 4. ROUNDS times, on a copy of that index: `index add --timings` of the last night, then
#    `cluster --timings` of the same night alone, under GNU time (wall time, peak RSS), with
#    the default threads. The report goes to target/bench/running-TOTAL-NIGHTS.txt.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
total=${1:-1100000}
nights=${2:-11}
rounds=${3:-2}
if ! [[ $total =~ ^[0-9]+$ && $nights =~ ^[0-9]+$ && $rounds =~ ^[0-9]+$ ]] || [ "$nights" -lt 2 ] || [ "$rounds" -lt 1 ]; then
  echo "usage: scripts/bench-nights.sh [TOTAL] [NIGHTS] [ROUNDS]  (NIGHTS >= 2, ROUNDS >= 1)" >&2
  exit 2
fi
if [ ! -x /usr/bin/time ]; then
  echo "bench-nights.sh: needs GNU time at /usr/bin/time (apt-get install time)" >&2
  exit 2
fi
if [ -z "${BIN:-}" ]; then
  cargo build --release --quiet
  bin=$root/target/release/megashingle
else
  bin=$(realpath "$BIN")
fi
bench=$root/target/bench
mkdir -p "$bench"
corpus=$bench/running-$total.csv
split=$bench/running-$total-$nights
if [ ! -s "$corpus" ]; then
  scripts/gen-corpus "$total" "$corpus" 1 --truth "$bench/running-$total.truth.csv" --running-stories
fi
last=$(printf '%s/night-%02d.csv' "$split" "$nights")
report=$bench/running-$total-$nights.txt
if [ ! -s "$last" ]; then
  scripts/split-nights "$corpus" "$bench/running-$total.truth.csv" "$nights" "$split" | tee "$report.split"
fi
db=$bench/running-$total-$nights.db
if [ ! -s "$db" ]; then
  rm -f "$db.part"
  for n in $(seq 1 $((nights - 1))); do
    night=$(printf '%s/night-%02d.csv' "$split" "$n")
    /usr/bin/time -f "night $n: %e s, %M KB" "$bin" index add --db "$db.part" "$night" -q -o /dev/null
  done
  mv "$db.part" "$db"
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
{
  echo "bench-nights.sh: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "binary: $bin"
  cat "$report.split" 2>/dev/null || true
  echo "index: $(du -m "$db" | cut -f1) MB after nights 1-$((nights - 1))"
  for round in $(seq 1 "$rounds"); do
    cp "$db" "$work/index.db"
    /usr/bin/time -f "round $round: index add of night $nights: %e s, peak %M KB" \
      "$bin" index add --db "$work/index.db" "$last" -q -o /dev/null --timings 2>&1 | sed 's/^megashingle: //'
    /usr/bin/time -f "round $round: cluster of night $nights alone: %e s, peak %M KB" \
      "$bin" cluster "$last" -q -o /dev/null --timings 2>&1 | sed 's/^megashingle: //'
  done
} | tee "$report"
