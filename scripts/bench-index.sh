#!/usr/bin/env bash
# The cost of a nightly `megashingle index add` against a large index, next to clustering the
# same documents alone, and the latency of queries against that index.
#
#   scripts/bench.sh index [BASE] [ADD]     (defaults: BASE=1000000, ADD=100000 documents)
#   scripts/bench.sh index once [N]         (default N=1000000: one add of N documents)
#
# `index BASE ADD`:
# 1. Builds the release binary and the `index_query_latency` example.
# 2. The base corpus is the first BASE documents of target/bench/standard-N.csv.zst, the
#    corpus of scripts/scale.sh (scripts/gen-corpus N, seed 1, compressed), taking the largest
#    N >= BASE there is, so that indexes of 1, 3 and 10 million documents hold the first
#    documents of one corpus and share a night; target/bench/standard-BASE.csv.zst is
#    generated when there is none. CORPUS=PATH (a .csv or .csv.zst) names another.
# 3. Generates the night target/bench/night-ADD-BASE.csv unless it exists: nine tenths new
#    documents (scripts/gen-corpus, seed 2, ids prefixed `night-`) and one tenth rewrites of
#    documents spread over the first million of the base corpus, which every index of it
#    holds (a word in 25 swapped with the next, ids prefixed `night-r-`), so those join
#    indexed stories.
# 4. Builds the base index target/bench/index-BASE.db unless it exists, adding the base
#    corpus in parts of PART documents (default 100,000) as nightly runs would (each part's
#    time and peak memory are printed, and kept in target/bench/index-BASE.build.txt); it
#    starts from a copy of the largest smaller index built from the same corpus
#    (target/bench/index-M.db), adding only the documents after its first M.
# 5. On a copy of the base index, times `index add --timings` of the night, and `cluster
#    --timings` of the same documents alone; both under GNU time (wall time, peak RSS),
#    default threads.
# 6. Query latency: the example `index_query_latency` opens the index and queries 1,000 texts
#    of the night (the rewrites among them), printing p50/p99 (of `query_reuse` too when the
#    index keeps passages); the same in Python when the
#    `megashingle` package imports; and `megashingle index query` from a new process, 20
#    times, median and slowest.
# 7. Prints the ratios and the index's size per document (and its passages' line of `index
#    stats`), and keeps the report in
#    target/bench/index-result-BASE-ADD.txt.
#
# BIN=PATH measures that build of the command instead of building this one (no latency
# example, no Python).
#
# `index once N`: one `index add` of target/bench/corpus-N.csv into a new index, and
# `cluster` of the same file, under GNU time; the report goes to
# target/bench/index-once-N.txt.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
part=${PART:-100000}
usage() {
  echo "usage: scripts/bench.sh index [BASE] [ADD]   (documents in the index, documents added)" >&2
  echo "       scripts/bench.sh index once [N]       (one add of N documents against cluster)" >&2
  exit 2
}
mode=night
if [ "${1:-}" = once ]; then
  mode=once
  shift
fi
base=${1:-1000000}
add=${2:-100000}
if ! [[ $base =~ ^[0-9]+$ && $add =~ ^[0-9]+$ && $part =~ ^[0-9]+$ ]] || [ "$base" -eq 0 ] || [ "$add" -eq 0 ] || [ "$part" -eq 0 ]; then
  usage
fi
if [ ! -x /usr/bin/time ]; then
  echo "bench-index.sh: /usr/bin/time (GNU time) is missing; installing the 'time' package with apt-get" >&2
  apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time >&2
fi
bin=$root/target/release/megashingle
latency=$root/target/release/examples/index_query_latency
if [ -n "${BIN:-}" ]; then
  # Another build of the command, to compare: the latency example is not run.
  bin=$(realpath "$BIN")
  latency=
else
  echo "bench-index.sh: building (release)" >&2
  cargo build --release --quiet
  cargo build --release --quiet --example index_query_latency
fi
mkdir -p target/bench
work=$(mktemp -d -p target/bench)
trap 'rm -rf "$work"' EXIT

seconds() { sed -n 's/.*Elapsed (wall clock) time.*: //p' "$1" | awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; printf "%.2f", s }'; }
peak_mb() { awk '/Maximum resident set size/ { printf "%.0f", $NF * 1024 / 1e6 }' "$1"; }
load() { uptime | sed 's/.*load average/load average/'; }

if [ "$mode" = once ]; then
  corpus=target/bench/corpus-$base.csv
  if [ ! -s "$corpus" ]; then
    echo "bench-index.sh: generating $corpus" >&2
    scripts/gen-corpus "$base" "$corpus"
  fi
  cat "$corpus" >/dev/null
  echo "bench-index.sh: index add of $corpus in one go" >&2
  /usr/bin/time -v -o "$work/add.time" "$bin" index add --db "$work/index.db" "$corpus" --quiet --timings -o "$work/assignments.csv" 2>"$work/add.err"
  bytes=$(du -B1 "$work/index.db" | cut -f1)
  rm -f "$work/index.db" "$work/assignments.csv"
  echo "bench-index.sh: cluster of $corpus" >&2
  /usr/bin/time -v -o "$work/cluster.time" "$bin" cluster "$corpus" --quiet --timings -o "$work/clusters.csv" 2>"$work/cluster.err"
  result=target/bench/index-once-$base.txt
  {
    echo "corpus: $corpus ($base documents); index $bytes bytes on disk ($(awk -v b="$bytes" -v d="$base" 'BEGIN { printf "%.0f", b / d }') bytes per document); $(nproc) cores; $(date -u +%Y-%m-%dT%H:%MZ); $(load)"
    echo
    printf '%-34s %8s %12s\n' run seconds "peak RSS MB"
    printf '%-34s %8s %12s\n' "index add (a new index)" "$(seconds "$work/add.time")" "$(peak_mb "$work/add.time")"
    printf '%-34s %8s %12s\n' "cluster" "$(seconds "$work/cluster.time")" "$(peak_mb "$work/cluster.time")"
    echo
    awk -v a="$(peak_mb "$work/add.time")" -v c="$(peak_mb "$work/cluster.time")" 'BEGIN { printf "index add / cluster, peak memory: %.2fx\n", a / c }'
    echo
    echo "stage timings:"
    sed 's/^/  index add: /' "$work/add.err"
    sed 's/^/  cluster:   /' "$work/cluster.err"
  } | tee "$result"
  exit 0
fi

if [ -n "${CORPUS:-}" ]; then
  corpus=$(realpath "$CORPUS")
else
  # The largest generated corpus of at least BASE documents.
  corpus=
  for file in target/bench/standard-*.csv.zst; do
    size=${file#target/bench/standard-}
    size=${size%.csv.zst}
    if [[ $size =~ ^[0-9]+$ ]] && [ "$size" -ge "$base" ] && [ -s "$file" ] && [ ! -e "$file.part" ]; then
      if [ -z "$corpus" ] || [ "$size" -gt "$corpus_size" ]; then
        corpus=$root/$file
        corpus_size=$size
      fi
    fi
  done
  if [ -z "$corpus" ]; then
    corpus=$root/target/bench/standard-$base.csv.zst
    echo "bench-index.sh: generating $corpus" >&2
    scripts/gen-corpus "$base" - 1 | zstd -q -3 -T1 -o "$corpus.part"
    mv "$corpus.part" "$corpus"
  fi
fi
night=target/bench/night-$add-$base.csv
index=target/bench/index-$base.db
first=$((base < 1000000 ? base : 1000000))

# split FROM TO SIZE PREFIX: the records FROM..TO (0-based) of the base corpus, in files of
# SIZE records PREFIX-K.csv.zst (each with the header), read in one pass; each file appears
# (renamed from PREFIX-K.part) once it is complete.
split() {
  python3 - "$corpus" "$@" <<'PY'
import csv, io, os, subprocess, sys
csv.field_size_limit(sys.maxsize)
corpus, start, end, size, prefix = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
source = subprocess.Popen(["zstd", "-dcq"], stdin=open(corpus, "rb"), stdout=subprocess.PIPE) if corpus.endswith(".zst") else None
stream = io.TextIOWrapper(source.stdout if source else open(corpus, "rb"), encoding="utf-8", newline="")
rows = csv.reader(stream)
header = next(rows)
part, writer, out = None, None, None
def close():
    if part:
        out.close()
        part.stdin.close()
        if part.wait():
            sys.exit("bench-index.sh: zstd failed")
        os.rename(name + ".part", name)
for i, row in enumerate(rows):
    if i >= end:
        break
    if i < start:
        continue
    if (i - start) % size == 0:
        close()
        name = f"{prefix}-{(i - start) // size:04d}.csv.zst"
        part = subprocess.Popen(["zstd", "-q", "-1", "-f", "-o", name + ".part"], stdin=subprocess.PIPE)
        out = io.TextIOWrapper(part.stdin, encoding="utf-8", newline="")
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(header)
    writer.writerow(row)
close()
if source:
    source.kill()
    source.wait()
PY
}

if [ ! -s "$night" ]; then
  rewrites=$((add / 10))
  echo "bench-index.sh: generating $night ($((add - rewrites)) new documents, $rewrites rewrites of the first $first documents of $corpus)" >&2
  scripts/gen-corpus "$((add - rewrites))" "$work/night.csv" 2
  split 0 "$first" "$first" "$work/first"
  zstd -dcq "$work/first-0000.csv.zst" >"$work/first.csv"
  rm "$work/first-0000.csv.zst"
  python3 - "$work/night.csv" "$work/first.csv" "$first" "$rewrites" "$night.part" <<'PY'
import csv, sys
csv.field_size_limit(sys.maxsize)
new, base, base_n, rewrites, target = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
step = max(1, base_n // max(1, rewrites))
with open(target, "w", newline="", encoding="utf-8") as out:
    writer = csv.writer(out)
    with open(new, newline="", encoding="utf-8") as src:
        rows = csv.reader(src)
        writer.writerow(next(rows))
        for row in rows:
            writer.writerow(["night-" + row[0]] + row[1:])
    written = 0
    with open(base, newline="", encoding="utf-8") as src:
        rows = csv.reader(src)
        next(rows)
        for i, row in enumerate(rows):
            if written == rewrites:
                break
            if i % step:
                continue
            words = row[1].split(" ")
            for w in range(12, len(words) - 1, 25):
                words[w], words[w + 1] = words[w + 1], words[w]
            writer.writerow(["night-r-" + row[0], " ".join(words)] + row[2:])
            written += 1
PY
  mv "$night.part" "$night"
  rm "$work/night.csv" "$work/first.csv"
fi

build_log=target/bench/index-$base.build.txt
if [ ! -s "$index" ]; then
  rm -f "$index.building" "$index.building.lock" "$build_log"
  echo "corpus: $corpus" >>"$build_log"
  # The largest smaller index of the same corpus to start from.
  from=0
  for log in target/bench/index-*.build.txt; do
    size=${log#target/bench/index-}
    size=${size%.build.txt}
    if [[ $size =~ ^[0-9]+$ ]] && [ "$size" -lt "$base" ] && [ "$size" -gt "$from" ] &&
      [ -s "target/bench/index-$size.db" ] && [ "$(head -1 "$log")" = "corpus: $corpus" ]; then
      from=$size
    fi
  done
  if [ "$from" -gt 0 ]; then
    echo "bench-index.sh: building $index from a copy of target/bench/index-$from.db, in parts of $part documents" >&2
    cp "target/bench/index-$from.db" "$index.building"
    echo "from target/bench/index-$from.db" >>"$build_log"
  else
    echo "bench-index.sh: building $index in parts of $part documents" >&2
  fi
  # The parts are cut while the first ones are added.
  split "$from" "$base" "$part" "$work/part" &
  splitter=$!
  for ((at = from, k = 0; at < base; at += part, k++)); do
    to=$((at + part < base ? at + part : base))
    file=$(printf '%s/part-%04d.csv.zst' "$work" "$k")
    while [ ! -e "$file" ]; do
      kill -0 "$splitter" 2>/dev/null || [ -e "$file" ] || { echo "bench-index.sh: cutting the base corpus into parts failed" >&2; exit 1; }
      sleep 1
    done
    /usr/bin/time -v -o "$work/part.time" "$bin" index add --db "$index.building" "$file" --quiet -o "$work/assignments.csv"
    line="documents $at to $to: $(seconds "$work/part.time") s, peak RSS $(peak_mb "$work/part.time") MB, index $(du -B1 "$index.building" | cut -f1) bytes on disk"
    echo "bench-index.sh: $line" >&2
    echo "$line" >>"$build_log"
    rm "$file"
  done
  wait "$splitter"
  mv "$index.building" "$index"
  rm -f "$index.building.lock"
fi

cat "$night" >/dev/null
cp "$index" "$work/index.db"
# Written to disk before the clock starts: the add's first fdatasync would otherwise flush the
# whole fresh copy, a cost of the copy, not of the add.
sync "$work/index.db"
load_before=$(load)
echo "bench-index.sh: index add of $night onto a copy of $index" >&2
/usr/bin/time -v -o "$work/add.time" "$bin" index add --db "$work/index.db" "$night" --quiet --timings -o "$work/assignments.csv" 2>"$work/add.err"
rm -f "$work/index.db"
echo "bench-index.sh: cluster of $night alone" >&2
/usr/bin/time -v -o "$work/cluster.time" "$bin" cluster "$night" --quiet --timings -o "$work/clusters.csv" 2>"$work/cluster.err"
joined=$(awk -F, 'NR > 1 && $1 ~ /^night-r-/ && $2 !~ /^night-/ { n++ } END { print n + 0 }' "$work/assignments.csv")

# Query latency: texts of the night, the index open and warm; then from new processes.
echo "bench-index.sh: query latency" >&2
if [ -n "$latency" ]; then
  "$latency" "$index" "$night" 1000 >"$work/latency.txt"
else
  echo "rust Index::query: not measured (BIN=$BIN)" >"$work/latency.txt"
fi
if [ -z "${BIN:-}" ] && python3 -c 'import megashingle' 2>/dev/null; then
  python3 - "$index" "$night" 1000 >>"$work/latency.txt" <<'PY'
import csv, sys, time
import megashingle
csv.field_size_limit(sys.maxsize)
path, texts_file, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open(texts_file, newline="", encoding="utf-8") as f:
    every = [r["text"] for r in csv.DictReader(f)]
step = max(1, len(every) // n)
texts = every[::step][:n]
index = megashingle.Index(path)
index.query(texts[0])
times, matched = [], 0
for text in texts:
    start = time.perf_counter()
    found = index.query(text)
    times.append(time.perf_counter() - start)
    matched += bool(found)
times.sort()
q = lambda p: times[min(len(times) - 1, int(p * len(times)))] * 1000
print(f"python Index.query: queries={len(times)} matched={matched} p50_ms={q(0.50):.2f} p99_ms={q(0.99):.2f} max_ms={times[-1] * 1000:.2f}")
PY
else
  echo "python Index.query: not measured (the megashingle package does not import)" >>"$work/latency.txt"
fi
python3 - "$night" "$work/query.txt" <<'PY'
import csv, sys
csv.field_size_limit(sys.maxsize)
with open(sys.argv[1], newline="", encoding="utf-8") as f:
    rows = [r["text"] for r in csv.DictReader(f) if r["id"].startswith("night-r-")]
open(sys.argv[2], "w", encoding="utf-8").write(rows[len(rows) // 2])
PY
cold=()
for _ in $(seq 20); do
  start=$(date +%s%N)
  "$bin" index query --db "$index" "$work/query.txt" >/dev/null
  cold+=($((($(date +%s%N) - start) / 1000000)))
done
cold_sorted=$(printf '%s\n' "${cold[@]}" | sort -n)
echo "index query, new process: runs=20 median_ms=$(sed -n 10p <<<"$cold_sorted") max_ms=$(tail -1 <<<"$cold_sorted")" >>"$work/latency.txt"
# The same for --reuse, when the index keeps passages.
if "$bin" index stats --db "$index" | grep -q '^passages: [0-9]'; then
  cold=()
  for _ in $(seq 20); do
    start=$(date +%s%N)
    "$bin" index query --db "$index" --reuse -q "$work/query.txt" >/dev/null
    cold+=($((($(date +%s%N) - start) / 1000000)))
  done
  cold_sorted=$(printf '%s\n' "${cold[@]}" | sort -n)
  echo "index query --reuse, new process: runs=20 median_ms=$(sed -n 10p <<<"$cold_sorted") max_ms=$(tail -1 <<<"$cold_sorted")" >>"$work/latency.txt"
fi

stats=$("$bin" index stats --db "$index")
documents=$(sed -n 's/^documents: //p' <<<"$stats")
bytes=$(du -B1 "$index" | cut -f1) # disk space: the file grows ahead of its use, sparsely
add_s=$(seconds "$work/add.time")
cluster_s=$(seconds "$work/cluster.time")
add_mb=$(peak_mb "$work/add.time")
cluster_mb=$(peak_mb "$work/cluster.time")
result=target/bench/index-result-$base-$add.txt
{
  echo "index: $index ($documents documents, $bytes bytes on disk, $(awk -v b="$bytes" -v d="$documents" 'BEGIN { printf "%.0f", b / d }') bytes per document); night: $night ($add documents, $joined of its rewrites joined indexed stories); $(nproc) cores; $(date -u +%Y-%m-%dT%H:%MZ); before the night: $load_before"
  grep '^passages: ' <<<"$stats" || true
  echo
  printf '%-34s %8s %12s\n' run seconds "peak RSS MB"
  printf '%-34s %8s %12s\n' "index add (onto the index)" "$add_s" "$add_mb"
  printf '%-34s %8s %12s\n' "cluster (the night alone)" "$cluster_s" "$cluster_mb"
  echo
  awk -v a="$add_s" -v c="$cluster_s" -v am="$add_mb" -v cm="$cluster_mb" 'BEGIN { printf "index add / cluster alone: %.2fx the time, %.2fx the peak memory\n", a / c, am / cm }'
  echo
  cat "$work/latency.txt"
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
