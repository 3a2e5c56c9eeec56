#!/usr/bin/env bash
# How time and peak memory of `megashingle cluster` grow with the number of documents.
#
#   scripts/scale.sh N [standard|large] [BINARY]
#
# Generates target/bench/KIND-N.csv.zst with scripts/gen-corpus (seed 1; `large` adds
# --large-families, the corpus of large copy families) unless it exists, compressed so that a
# corpus of ten million documents takes about 5 GB of disk rather than 25 GB, then runs
# `megashingle cluster CORPUS --quiet --timings` under GNU time (default threads, built-in
# configuration: run in an empty folder, output to a file there that is deleted afterwards) and
# prints one line: documents, seconds, microseconds a document, peak RSS in MB and bytes a
# document, with the stage timings and the machine's load (uptime) before the run. Memory
# figures do not depend on the load; times do.
#
# BINARY defaults to this checkout's release build (made first). The shingle sets of a large
# collection go to a temporary file in TMPDIR (about 1.5 GB a million documents, and up to as
# much again while the corpus statistics are counted): TMPDIR needs the room. KEEP=0 deletes the generated corpus after the run; GEN_FLAGS adds options to
# gen-corpus (such as `--base ../shared/data/rewrites-dev/docs.csv` in a checkout whose
# ../shared is elsewhere).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
n=${1:-}
kind=${2:-standard}
if ! [[ $n =~ ^[0-9]+$ ]] || [ "$n" -eq 0 ] || [[ ! $kind =~ ^(standard|large)$ ]]; then
  echo "usage: scripts/scale.sh N [standard|large] [BINARY]   (N documents)" >&2
  exit 2
fi
if [ $# -ge 3 ]; then
  bin=$(realpath "$3")
else
  cargo build --release --quiet
  bin=$root/target/release/megashingle
fi
if [ ! -x /usr/bin/time ]; then
  echo "scale.sh: /usr/bin/time (GNU time) is missing; installing the 'time' package with apt-get" >&2
  apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time >&2
fi
if ! command -v zstd >/dev/null; then
  echo "scale.sh: zstd is missing; installing the 'zstd' package with apt-get" >&2
  apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq zstd >&2
fi

mkdir -p target/bench
corpus=$root/target/bench/$kind-$n.csv.zst
if [ ! -s "$corpus" ]; then
  read -r -a flags <<<"${GEN_FLAGS:-}"
  [ "$kind" = large ] && flags+=(--large-families)
  echo "scale.sh: generating $corpus" >&2
  scripts/gen-corpus "$n" - 1 "${flags[@]}" | zstd -q -3 -T1 -o "$corpus.part"
  mv "$corpus.part" "$corpus"
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
load=$(uptime | sed 's/.*load average: //')
cd "$work"
rc=0
/usr/bin/time -v -o time.txt "$bin" cluster "$corpus" --quiet --timings -o out.csv 2>err.txt || rc=$?
if [ "$rc" -gt 1 ]; then
  cat err.txt >&2
  echo "scale.sh: megashingle cluster failed (exit $rc)" >&2
  exit 1
fi
seconds=$(sed -n 's/.*Elapsed (wall clock) time.*: //p' time.txt |
  awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; printf "%.2f", s }')
kb=$(awk '/Maximum resident set size/ { print $NF }' time.txt)
docs=$(($(wc -l <out.csv) - 1))
awk -v n="$docs" -v s="$seconds" -v kb="$kb" -v k="$kind" -v l="$load" 'BEGIN {
  printf "%s %d documents: %.2f s, %.1f us/doc, peak %.0f MB, %.0f bytes/doc (load before: %s)\n",
    k, n, s, 1e6 * s / n, kb * 1024 / 1e6, kb * 1024 / n, l
}'
sed -n 's/^megashingle: timings: /timings: /p' err.txt
if [ "${KEEP:-1}" = 0 ]; then
  rm -f "$corpus"
fi
