#!/usr/bin/env bash
# The cost of a nightly `megashingle index add` against a large index, next to clustering the
# same documents alone.
#
#   scripts/bench.sh index [BASE] [ADD]     (defaults: BASE=1000000, ADD=10000 documents)
#
# 1. Builds the release binary.
# 2. Generates target/bench/corpus-BASE.csv (scripts/gen-corpus, seed 1) unless it exists, and
#    the night's documents target/bench/night-ADD.csv (seed 2, ids prefixed with `night-` so
#    they are new to the index; their texts continue the stories of the base corpus).
# 3. Builds the base index target/bench/index-BASE.db unless it exists, adding the base corpus
#    in parts of 100,000 documents as nightly runs would (each part's time is printed).
# 4. On a copy of the base index, times `index add --timings` of the night's documents, and
#    `cluster --timings` of the same documents alone; both under GNU time (wall time, peak
#    RSS), default threads.
# 5. Prints the ratio and the index's size per document, and keeps the report in
#    target/bench/index-result-BASE-ADD.txt.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
base=${1:-1000000}
add=${2:-10000}
part=100000
if ! [[ $base =~ ^[0-9]+$ && $add =~ ^[0-9]+$ ]] || [ "$base" -eq 0 ] || [ "$add" -eq 0 ]; then
  echo "usage: scripts/bench.sh index [BASE] [ADD]   (documents in the index, documents added)" >&2
  exit 2
fi
if [ ! -x /usr/bin/time ]; then
  echo "bench-index.sh: /usr/bin/time (GNU time) is missing; installing the 'time' package with apt-get" >&2
  apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time >&2
fi
echo "bench-index.sh: building (release)" >&2
cargo build --release --quiet
bin=$root/target/release/megashingle
mkdir -p target/bench
corpus=target/bench/corpus-$base.csv
night=target/bench/night-$add.csv
index=target/bench/index-$base.db
work=$(mktemp -d -p target/bench)
trap 'rm -rf "$work"' EXIT

if [ ! -s "$corpus" ]; then
  echo "bench-index.sh: generating $corpus" >&2
  scripts/gen-corpus "$base" "$corpus"
fi
if [ ! -s "$night" ]; then
  echo "bench-index.sh: generating $night" >&2
  scripts/gen-corpus "$add" "$work/night.csv" 2
  python3 - "$work/night.csv" "$night" <<'PY'
import csv, sys
csv.field_size_limit(sys.maxsize)
with open(sys.argv[1], newline="", encoding="utf-8") as src, open(sys.argv[2], "w", newline="", encoding="utf-8") as out:
    rows = csv.reader(src)
    writer = csv.writer(out)
    writer.writerow(next(rows))
    for row in rows:
        writer.writerow(["night-" + row[0]] + row[1:])
PY
fi

seconds() { sed -n 's/.*Elapsed (wall clock) time.*: //p' "$1" | awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; printf "%.2f", s }'; }
peak_mb() { awk '/Maximum resident set size/ { printf "%.0f", $NF * 1024 / 1e6 }' "$1"; }

build_log=target/bench/index-$base.build.txt
if [ ! -s "$index" ]; then
  echo "bench-index.sh: building $index in parts of $part documents" >&2
  python3 - "$corpus" "$work/part" "$part" <<'PY'
import csv, sys
csv.field_size_limit(sys.maxsize)
source, prefix, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open(source, newline="", encoding="utf-8") as src:
    rows = csv.reader(src)
    header = next(rows)
    out, writer, n = None, None, 0
    for i, row in enumerate(rows):
        if i % size == 0:
            if out:
                out.close()
            out = open(f"{prefix}-{n:03d}.csv", "w", newline="", encoding="utf-8")
            writer = csv.writer(out)
            writer.writerow(header)
            n += 1
        writer.writerow(row)
    if out:
        out.close()
PY
  rm -f "$index.building" "$index.building.lock" "$build_log"
  for file in "$work"/part-*.csv; do
    /usr/bin/time -v -o "$work/part.time" "$bin" index add --db "$index.building" "$file" --quiet -o "$work/assignments.csv"
    line="$(basename "$file"): $(seconds "$work/part.time") s, peak RSS $(peak_mb "$work/part.time") MB, index $(du -B1 "$index.building" | cut -f1) bytes on disk"
    echo "bench-index.sh: $line" >&2
    echo "$line" >>"$build_log"
    rm "$file"
  done
  mv "$index.building" "$index"
  rm -f "$index.building.lock"
fi

cat "$night" >/dev/null
cp "$index" "$work/index.db"
# Written to disk before the clock starts: the add's first fdatasync would otherwise flush the
# whole fresh copy, a cost of the copy, not of the add.
sync "$work/index.db"
echo "bench-index.sh: index add of $night onto a copy of $index" >&2
/usr/bin/time -v -o "$work/add.time" "$bin" index add --db "$work/index.db" "$night" --quiet --timings -o "$work/assignments.csv" 2>"$work/add.err"
echo "bench-index.sh: cluster of $night alone" >&2
/usr/bin/time -v -o "$work/cluster.time" "$bin" cluster "$night" --quiet --timings -o "$work/clusters.csv" 2>"$work/cluster.err"
stats=$("$bin" index stats --db "$index")
documents=$(sed -n 's/^documents: //p' <<<"$stats")
bytes=$(du -B1 "$index" | cut -f1) # disk space: the file grows ahead of its use, sparsely
add_s=$(seconds "$work/add.time")
cluster_s=$(seconds "$work/cluster.time")
result=target/bench/index-result-$base-$add.txt
{
  echo "index: $index ($documents documents, $bytes bytes on disk, $(awk -v b="$bytes" -v d="$documents" 'BEGIN { printf "%.0f", b / d }') bytes per document); night: $night ($add documents); $(nproc) cores; $(date -u +%Y-%m-%dT%H:%MZ)"
  echo
  printf '%-34s %8s %12s\n' run seconds "peak RSS MB"
  printf '%-34s %8s %12s\n' "index add (onto the index)" "$add_s" "$(peak_mb "$work/add.time")"
  printf '%-34s %8s %12s\n' "cluster (the night alone)" "$cluster_s" "$(peak_mb "$work/cluster.time")"
  echo
  awk -v a="$add_s" -v c="$cluster_s" 'BEGIN { printf "index add / cluster alone: %.2fx\n", a / c }'
  echo
  echo "stage timings:"
  sed 's/^/  index add: /' "$work/add.err"
  sed 's/^/  cluster:   /' "$work/cluster.err"
  if [ -s "$build_log" ]; then
    echo
    echo "building the index:"
    sed 's/^/  /' "$build_log"
  fi
} | tee "$result"
