#!/usr/bin/env bash
# End-to-end speed of `megashingle cluster` against the floor, on a generated corpus.
#
#   scripts/bench.sh [N]        (default N=100000 documents, ~2.5 KB each)
#   scripts/bench.sh index [BASE] [ADD]   (index add against an index: scripts/bench-index.sh)
#
# 1. Builds the release binary and the `floor` bench target.
# 2. Generates target/bench/corpus-N.csv with scripts/gen-corpus (seed 1) unless it exists.
# 3. Measures, one after the other on a warm page cache:
#    - the floor (benches/floor.rs, via `cargo bench --bench floor`): the same CSV reader design
#      as the pipeline, canonicalization, one hash per word and per shingle window and each
#      text's 84 minima on 2 threads, nothing else;
#    - `megashingle cluster CORPUS --quiet` under GNU time (wall time, peak RSS) with the
#      default threads (one per core), then with -j 1 and -j 2. The output goes to stdout,
#      redirected to /dev/null: `-o /dev/null` is never used, because -o writes a temporary
#      file beside its target and renames it over the target, which as root would replace the
#      /dev/null device with a regular file.
# 4. Prints a table (MB, documents, seconds, MB/s, docs/s, peak RSS) and the ratios, and
#    keeps it in target/bench/result-N.txt. If `megashingle cluster --help` lists a
#    `--timings` flag, the stage timings it prints on stderr are shown too.
#
# MB are decimal megabytes of the corpus file. REPEAT=R (default 1) runs each measurement R
# times and keeps the fastest, for a machine with other load. GNU time is installed with
# apt-get when /usr/bin/time is missing (the script says so).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
if [ "${1:-}" = index ]; then
  shift
  exec scripts/bench-index.sh "$@"
fi
n=${1:-100000}
repeat=${REPEAT:-1}
if ! [[ $n =~ ^[0-9]+$ ]] || [ "$n" -eq 0 ] || ! [[ $repeat =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: [REPEAT=R] scripts/bench.sh [N]   (N documents, default 100000)" >&2
  exit 2
fi

if [ ! -x /usr/bin/time ]; then
  echo "bench.sh: /usr/bin/time (GNU time) is missing; installing the 'time' package with apt-get" >&2
  apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time >&2
fi

echo "bench.sh: building (release, and the floor bench target)" >&2
cargo build --release --quiet
cargo bench --bench floor --no-run --quiet 2>/dev/null || cargo bench --bench floor --no-run
bin=$root/target/release/megashingle

mkdir -p target/bench
corpus=target/bench/corpus-$n.csv
if [ ! -s "$corpus" ]; then
  echo "bench.sh: generating $corpus" >&2
  scripts/gen-corpus "$n" "$corpus"
fi
cat "$corpus" > /dev/null # warm the page cache: every run reads from memory
file_bytes=$(stat -L -c %s "$corpus")
cores=$(nproc)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

timings=()
if "$bin" cluster --help 2>/dev/null | grep -q -- '--timings'; then
  timings=(--timings)
fi

# field NAME LINE: the value of NAME=... in a line of key=value fields.
field() { sed -n "s/.*\b$1=\([^ ]*\).*/\1/p" <<<"$2"; }

# GNU time's wall clock ([h:]mm:ss.ss) in seconds.
wall_seconds() {
  local t
  t=$(sed -n 's/.*Elapsed (wall clock) time.*: //p' "$1")
  awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; printf "%.3f", s }' <<<"$t"
}
peak_mb() { awk '/Maximum resident set size/ { printf "%.1f", $NF * 1024 / 1e6 }' "$1"; }

floor=
for ((r = 1; r <= repeat; r++)); do
  echo "bench.sh: floor (2 threads)" >&2
  line=$(FLOOR_CSV="$root/$corpus" FLOOR_THREADS=2 cargo bench --quiet --bench floor 2>"$work/floor.err") || {
    cat "$work/floor.err" >&2
    exit 1
  }
  line=$(grep '^floor ' <<<"$line")
  if [ -z "$floor" ] || awk -v a="$(field seconds "$line")" -v b="$(field seconds "$floor")" 'BEGIN { exit !(a < b) }'; then
    floor=$line
  fi
done
docs=$(field documents "$floor")

rows=()
row() { # label threads seconds peak_mb
  rows+=("$(awk -v l="$1" -v t="$2" -v s="$3" -v r="$4" -v b="$file_bytes" -v d="$docs" \
    'BEGIN { printf "%-16s %7s %8.1f %9d %8.2f %8.2f %9.0f %11.1f", l, t, b / 1e6, d, s, b / 1e6 / s, d / s, r }')")
}
row floor 2 "$(field seconds "$floor")" "$(field peak_rss_mb "$floor")"

declare -A secs
cluster_run() { # label threads-flag...; keeps the fastest of REPEAT runs in $work/label.*
  local label=$1
  shift
  local r rc s
  for ((r = 1; r <= repeat; r++)); do
    echo "bench.sh: megashingle cluster $corpus --quiet ${timings[*]} $*" >&2
    rc=0
    /usr/bin/time -v -o "$work/try.time" "$bin" cluster "$corpus" --quiet "${timings[@]}" "$@" \
      >/dev/null 2>"$work/try.err" || rc=$?
    if [ "$rc" -gt 1 ]; then
      cat "$work/try.err" >&2
      echo "bench.sh: megashingle cluster failed (exit $rc)" >&2
      exit 1
    fi
    s=$(wall_seconds "$work/try.time")
    if [ -z "${secs[$label]:-}" ] || awk -v a="$s" -v b="${secs[$label]}" 'BEGIN { exit !(a < b) }'; then
      secs[$label]=$s
      mv "$work/try.time" "$work/$label.time"
      mv "$work/try.err" "$work/$label.err"
    fi
  done
}
cluster_run default
row "cluster -j 0" "$cores" "${secs[default]}" "$(peak_mb "$work/default.time")"
cluster_run j1 -j 1
row "cluster -j 1" 1 "${secs[j1]}" "$(peak_mb "$work/j1.time")"
cluster_run j2 -j 2
row "cluster -j 2" 2 "${secs[j2]}" "$(peak_mb "$work/j2.time")"

{
  echo "corpus: $corpus ($(awk -v b="$file_bytes" 'BEGIN { printf "%.1f", b / 1e6 }') MB, $docs documents); $cores cores; fastest of $repeat; $(date -u +%Y-%m-%dT%H:%MZ)"
  echo
  printf '%-16s %7s %8s %9s %8s %8s %9s %11s\n' run threads MB documents seconds MB/s docs/s "peak RSS MB"
  printf '%s\n' "${rows[@]}"
  echo
  awk -v f="$(field seconds "$floor")" -v c="${secs[j2]}" -v c0="${secs[default]}" -v c1="${secs[j1]}" 'BEGIN {
    printf "cluster/floor MB/s, both on 2 threads: %.3f (the floor is %.1fx faster)\n", f / c, c / f
    printf "cluster -j 0 / floor MB/s: %.3f\n", f / c0
    printf "2-thread speed-up of cluster (-j 1 time / -j 2 time): %.2fx\n", c1 / c
  }'
  echo "floor: $floor"
  if [ ${#timings[@]} -gt 0 ]; then
    # stage_seconds FILE: the seconds of the sketching stages (reading and shingling, and
    # sketching) in the timings line of a run's stderr.
    stage_seconds() {
      sed -n 's/.*timings: //p' "$1" | tr ',' '\n' |
        awk '/reading and shingling|sketching/ { s += $(NF - 1) } END { printf "%.3f", s }'
    }
    awk -v a="$(stage_seconds "$work/j1.err")" -v b="$(stage_seconds "$work/j2.err")" 'BEGIN {
      if (a > 0 && b > 0)
        printf "2-thread speed-up of sketching (reading and shingling + sketching stages): %.2fx (%.3f s / %.3f s)\n", a / b, a, b
    }'
    echo
    echo "stage timings (megashingle cluster --timings):"
    for label in default j1 j2; do
      if [ -s "$work/$label.err" ]; then
        sed "s/^/  $label: /" "$work/$label.err"
      else
        echo "  $label: (none printed on stderr together with --quiet)"
      fi
    done
  else
    echo "(megashingle cluster has no --timings flag: no stage timings)"
  fi
  for label in default j1 j2; do
    if [ -z "${timings[*]}" ] && [ -s "$work/$label.err" ]; then
      echo "stderr of the $label run:"
      sed 's/^/  /' "$work/$label.err"
    fi
  done
} | tee "target/bench/result-$n.txt"
