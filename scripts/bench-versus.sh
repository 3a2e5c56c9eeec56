#!/usr/bin/env bash
# Speed and peak memory of two builds of `megashingle cluster` on one corpus, measured in
# the same run, alternating, so that load on the machine falls on both alike.
#
#   scripts/bench-versus.sh BASELINE_BINARY [N] [ROUNDS]
#
# BASELINE_BINARY is a release build of another commit (e.g. made in a `git worktree` of
# it); the other is this checkout's release build. The corpus is target/bench/corpus-N.csv
# (N=100000 by default, made by scripts/gen-corpus as scripts/bench.sh makes it). Each round
# runs both binaries with -j 1 and with the default threads, in alternating order, under GNU
# time; the medians of wall time and peak RSS are printed for each, with their ratio, and the
# outputs of the two are compared byte for byte. Both run with the built-in configuration
# (in an empty folder, so neither reads a pipeline.toml).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
if [ $# -lt 1 ] || [ ! -x "$1" ]; then
  echo "usage: scripts/bench-versus.sh BASELINE_BINARY [N] [ROUNDS]  (BASELINE_BINARY must be an executable)" >&2
  exit 2
fi
baseline=$(realpath "$1")
n=${2:-100000}
rounds=${3:-3}
cargo build --release --quiet
current=$root/target/release/megashingle
corpus=target/bench/corpus-$n.csv
mkdir -p target/bench
if [ ! -s "$corpus" ]; then
  echo "bench-versus.sh: generating $corpus" >&2
  scripts/gen-corpus "$n" "$corpus"
fi
cat "$corpus" >/dev/null
corpus=$(realpath "$corpus")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Both run in an empty folder, with the built-in defaults: an older build may not know every
# section of this checkout's pipeline.toml.
cd "$work"

run() { # name binary threads-flag... ; appends "seconds kb" to $work/name
  local name=$1 bin=$2
  shift 2
  /usr/bin/time -f '%e %M' -o "$work/time" "$bin" cluster "$corpus" --quiet "$@" >"$work/$name.csv"
  cat "$work/time" >>"$work/$name.times"
}
for round in $(seq 1 "$rounds"); do
  for threads in "-j 1" ""; do
    tag=${threads:+j1}; tag=${tag:-jN}
    if [ $((round % 2)) -eq 1 ]; then
      run "baseline-$tag" "$baseline" $threads; run "current-$tag" "$current" $threads
    else
      run "current-$tag" "$current" $threads; run "baseline-$tag" "$baseline" $threads
    fi
    cmp -s "$work/baseline-$tag.csv" "$work/current-$tag.csv" || {
      echo "bench-versus.sh: the two builds wrote different tables ($tag)" >&2
      exit 1
    }
  done
  echo "bench-versus.sh: round $round of $rounds done" >&2
done
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
printf '%-8s %-9s %10s %12s\n' threads build seconds "peak MB"
for tag in j1 jN; do
  for build in baseline current; do
    s=$(cut -d' ' -f1 "$work/$build-$tag.times" | median)
    m=$(cut -d' ' -f2 "$work/$build-$tag.times" | median)
    printf '%-8s %-9s %10.2f %12.0f\n' "$tag" "$build" "$s" "$(echo "$m / 1024" | bc -l)"
    eval "${build}_s=$s ${build}_m=$m"
  done
  printf '%-8s %-9s %10.3f %12.3f\n' "$tag" "ratio" "$(echo "$current_s / $baseline_s" | bc -l)" \
    "$(echo "$current_m / $baseline_m" | bc -l)"
done
for tag in j1 jN; do
  for build in baseline current; do
    echo "$tag $build runs (s): $(cut -d' ' -f1 "$work/$build-$tag.times" | tr '\n' ' ')"
  done
done
echo "outputs identical: yes ($rounds rounds, $n documents)"
