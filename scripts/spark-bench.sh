#!/usr/bin/env bash
# The Spark job against `megashingle cluster` on the same generated corpus: time, peak memory
# CPU seconds and (for Spark) shuffle bytes per document, Spark jobs per run and the pairwise F1
# of the job's stories against the command's; optionally text-dedup's PySpark MinHash job on the
# same corpus in the same run.
#
#   scripts/spark-bench.sh [N]     (default N=100000 documents, ~2.5 KB each)
#
# Needs the Python package with its Spark extra installed in the Python found first on PATH
# (or PYTHON=/path/to/python) and the release binary (built here with `cargo build --release`).
#
# 1. Generates target/bench/corpus-N.csv with scripts/gen-corpus (seed 1) unless it exists.
# 2. `megashingle cluster CORPUS --quiet` under GNU time: wall time and peak RSS.
# 3. `python -m megashingle.spark --input CORPUS --output DIR --master local[2]` with Spark's
#    event log on: wall time; peak memory as the largest sum of the RSS of the whole process
#    tree (Python driver, the JVM that is driver and executor in local mode, and its Python
#    workers), sampled every second; shuffle bytes written, summed over the tasks of the event
#    log (SparkListenerTaskEnd, "Shuffle Bytes Written"), in total and per phase of the job.
#    Spark jobs: the SparkListenerJobStart events of the log. CPU seconds: user + system time of
#    every process of the tree (the JVM and the Python workers included), sampled each second
#    (the command's from GNU time). F1: pairs of documents in one story, the command's
#    table as the truth.
# 4. With TEXT_DEDUP=/path/to/minhash_spark.py (text-dedup's PySpark MinHash script, the
#    version before GraphFrames: git show 6bb8e89:text_dedup/minhash_spark.py; it needs numpy
#    and scipy): the corpus as Parquet (target/bench/corpus-N.parquet, made once with pyarrow),
#    then that script in the same master, memory and partitions, measured the same way.
# 5. Prints a table and keeps it in target/bench/spark-N.txt (the shuffle bytes per phase too);
#    the event logs stay in target/bench/spark-events-N (and text-dedup-events-N).
#
# Settings (environment): MASTER (default local[2]), DRIVER_MEMORY (default 4g: in local mode
# the driver is the executor), SHUFFLE_PARTITIONS (default 32), CONFIG (a pipeline.toml, given
# to both), JOB_ARGS (more options for the job, such as `--max-group 1000000`), SKIP_CLI=1 to
# time the Spark job only.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
n=${1:-100000}
if ! [[ $n =~ ^[0-9]+$ ]] || [ "$n" -eq 0 ]; then
  echo "usage: scripts/spark-bench.sh [N]   (N documents, default 100000)" >&2
  exit 2
fi
python=${PYTHON:-python3}
master=${MASTER:-local[2]}
driver_memory=${DRIVER_MEMORY:-4g}
partitions=${SHUFFLE_PARTITIONS:-32}
if ! "$python" -c 'import megashingle.spark, pyspark' 2>/dev/null; then
  echo "spark-bench.sh: $python cannot import megashingle.spark and pyspark; run pip install \"./python[spark]\" (or set PYTHON)" >&2
  exit 2
fi
if [ ! -x /usr/bin/time ]; then
  echo "spark-bench.sh: /usr/bin/time (GNU time) is missing; install the 'time' package" >&2
  exit 2
fi

mkdir -p target/bench
corpus=target/bench/corpus-$n.csv
if [ ! -s "$corpus" ]; then
  echo "spark-bench.sh: generating $corpus" >&2
  scripts/gen-corpus "$n" "$corpus"
fi
file_bytes=$(stat -L -c %s "$corpus")
started="$(date -u +%Y-%m-%dT%H:%MZ), load average $(cut -d' ' -f1-3 /proc/loadavg)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
config_args=()
if [ -n "${CONFIG:-}" ]; then
  config_args=(-c "$CONFIG")
fi

wall_seconds() {
  local t
  t=$(sed -n 's/.*Elapsed (wall clock) time.*: //p' "$1")
  awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; printf "%.1f", s }' <<<"$t"
}

# The RSS (kB) of a process and all its descendants, summed, and each one's CPU seconds so far
# (appended to $2 as "pid seconds" lines: the last line of each pid is its total).
tree_rss() {
  ps -e -o pid=,ppid=,rss=,times= | awk -v top="$1" -v cpu="$2" '
    { parent[$1] = $2; rss[$1] = $3; t[$1] = $4 }
    END {
      for (p in rss) {
        q = p
        while (q != "" && q != top && q != 0 && q != 1) q = parent[q]
        if (q == top) { total += rss[p]; if (cpu != "") print p, t[p] >> cpu }
      }
      print total + 0
    }'
}

# CPU seconds of a process tree sampled by tree_rss: each process's last figure, summed.
tree_cpu() {
  awk '{ t[$1] = $2 } END { for (p in t) s += t[p]; printf "%.0f", s }' "$1"
}

cpu_seconds() {
  awk -F': ' '/User time|System time/ { s += $2 } END { printf "%.0f", s }' "$1"
}

cli_seconds=- cli_mb=- cli_cpu=-
if [ "${SKIP_CLI:-0}" != 1 ]; then
  echo "spark-bench.sh: building the release binary" >&2
  cargo build --release --quiet
  cat "$corpus" >/dev/null
  echo "spark-bench.sh: megashingle cluster $corpus" >&2
  /usr/bin/time -v -o "$work/cli.time" target/release/megashingle cluster "$corpus" --quiet \
    "${config_args[@]}" >"$work/cli.csv"
  cli_seconds=$(wall_seconds "$work/cli.time")
  cli_cpu=$(cpu_seconds "$work/cli.time")
  cli_mb=$(awk '/Maximum resident set size/ { printf "%.0f", $NF * 1024 / 1e6 }' "$work/cli.time")
fi

# Runs a Spark job (the command after the label) with the event log in $1, measuring it as
# above; sets run_seconds, run_cpu, run_mb, run_shuffle, run_jobs and writes the shuffle by phase
# to $work/$2.shuffle.
measure_spark() {
  local events=$1 label=$2
  shift 2
  rm -rf "$events"
  mkdir -p "$events"
  cat "$corpus" >/dev/null
  echo "spark-bench.sh: $*" >&2
  local start end pid peak rss rc
  start=$(date +%s.%N)
  PYSPARK_SUBMIT_ARGS="--master $master --driver-memory $driver_memory --conf spark.eventLog.enabled=true --conf spark.eventLog.dir=file://$events --conf spark.eventLog.compress=false --conf spark.eventLog.rolling.enabled=false --conf spark.sql.shuffle.partitions=$partitions --conf spark.ui.enabled=false pyspark-shell" \
    /usr/bin/time -v -o "$work/$label.time" "$@" 2>"$work/$label.err" &
  pid=$!
  peak=0
  : >"$work/$label.cpu"
  while kill -0 "$pid" 2>/dev/null; do
    rss=$(tree_rss "$pid" "$work/$label.cpu")
    [ "$rss" -gt "$peak" ] && peak=$rss
    sleep 1
  done
  rc=0
  wait "$pid" || rc=$?
  end=$(date +%s.%N)
  # megashingle.spark exits 1 when it finished with records skipped, as the command does.
  if [ "$rc" -ne 0 ] && ! { [ "$label" = spark ] && [ "$rc" -eq 1 ]; }; then
    tail -30 "$work/$label.err" >&2
    echo "spark-bench.sh: $label failed (exit $rc)" >&2
    exit 1
  fi
  run_seconds=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
  run_mb=$(awk -v k="$peak" 'BEGIN { printf "%.0f", k * 1024 / 1e6 }')
  run_cpu=$(tree_cpu "$work/$label.cpu")
  run_jobs=$(cat "$events"/* | grep -c '"Event":"SparkListenerJobStart"' || true)
  # Shuffle bytes written per phase of the job (the job descriptions it sets) and in total.
  "$python" - "$events" >"$work/$label.shuffle" <<'EOF'
import json, os, sys
from collections import defaultdict
names, written, records = {}, defaultdict(int), defaultdict(int)
folder = sys.argv[1]
paths = [os.path.join(d, f) for d, _, files in os.walk(folder) for f in files]
for path in paths:
    with open(path) as f:
        for line in f:
            e = json.loads(line)
            kind = e.get("Event")
            if kind == "SparkListenerStageSubmitted":
                info = e["Stage Info"]
                # The job's description (the job's phase) where it set one.
                props = e.get("Properties") or {}
                names[info["Stage ID"]] = props.get("spark.job.description") or info["Stage Name"]
            elif kind == "SparkListenerTaskEnd":
                m = (e.get("Task Metrics") or {}).get("Shuffle Write Metrics") or {}
                written[e["Stage ID"]] += m.get("Shuffle Bytes Written", 0)
                records[e["Stage ID"]] += m.get("Shuffle Records Written", 0)
by_name = defaultdict(lambda: [0, 0])
for stage, b in written.items():
    by_name[names.get(stage, "?")][0] += b
    by_name[names.get(stage, "?")][1] += records[stage]
print(sum(written.values()))
for name, (b, r) in sorted(by_name.items(), key=lambda x: -x[1][0]):
    if b:
        print(f"  {b / 1e6:10.1f} MB {r:12d} records  {name}")
EOF
  run_shuffle=$(head -1 "$work/$label.shuffle")
}

measure_spark "$root/target/bench/spark-events-$n" spark \
  "$python" -m megashingle.spark --input "$corpus" --output "$work/out" --master "$master" "${config_args[@]}" ${JOB_ARGS:-}
spark_seconds=$run_seconds spark_cpu=$run_cpu spark_mb=$run_mb spark_jobs=$run_jobs
shuffle_bytes=$run_shuffle
rows=$(cat "$work"/out/part-*.csv | grep -vc '^doc_id,' || true)

# Pairwise F1 of the job's stories against the command's (pairs of documents in one story).
f1=-
if [ -s "$work/cli.csv" ]; then
  f1=$("$python" - "$work/cli.csv" "$work"/out/part-*.csv <<'EOF'
import csv, sys
from collections import Counter
def table(paths):
    out = {}
    for p in paths:
        with open(p, newline="", encoding="utf-8") as f:
            for r in csv.DictReader(f):
                out[r["doc_id"]] = r["cluster_id"]
    return out
truth, got = table(sys.argv[1:2]), table(sys.argv[2:])
pairs = lambda t: sum(n * (n - 1) // 2 for n in Counter(t.values()).values())
common = sum(n * (n - 1) // 2 for n in Counter((truth[d], got.get(d)) for d in truth).values())
p = common / pairs(got) if pairs(got) else 1.0
r = common / pairs(truth) if pairs(truth) else 1.0
print(f"{2 * p * r / (p + r) if p + r else 0.0:.4f}")
EOF
)
fi

# The job's figures now, in case the peer's run that follows does not finish.
printf 'spark-bench.sh: megashingle.spark: %s s, %s CPU s, %s MB, %s shuffle B/doc, %s Spark jobs, F1 %s (command: %s s)\n' \
  "$spark_seconds" "$spark_cpu" "$spark_mb" "$(awk -v b="$shuffle_bytes" -v n="$n" 'BEGIN { printf "%.0f", b / n }')" \
  "$spark_jobs" "$f1" "$cli_seconds" >&2
cat "$work/spark.shuffle" >&2

td_row=
if [ -n "${TEXT_DEDUP:-}" ]; then
  parquet=target/bench/corpus-$n.parquet
  if [ ! -d "$parquet" ]; then
    echo "spark-bench.sh: writing $parquet" >&2
    mkdir -p "$parquet"
    "$python" - "$corpus" "$parquet/part-0.parquet" <<'EOF'
import sys
import pyarrow.csv as pc, pyarrow.parquet as pq
table = pc.read_csv(sys.argv[1], parse_options=pc.ParseOptions(newlines_in_values=True))
pq.write_table(table.select(["id", "text"]), sys.argv[2], row_group_size=20000)
EOF
  fi
  # Its workers need numpy and scipy: they run this Python (it is not megashingle's job).
  PYSPARK_PYTHON=$("$python" -c 'import sys; print(sys.executable)') \
    measure_spark "$root/target/bench/text-dedup-events-$n" text-dedup \
    "$python" "$TEXT_DEDUP" --input "$parquet" --output "$work/td-out" --column text
  td_row=$(printf '%-28s %9s %9s %9s %14s %6s %8s' "text-dedup minhash_spark" "$run_seconds" "$run_cpu" "$run_mb" \
    "$(awk -v b="$run_shuffle" -v n="$n" 'BEGIN { printf "%.0f", b / n }')" "$run_jobs" -)
fi

{
  echo "corpus: $corpus ($(awk -v b="$file_bytes" 'BEGIN { printf "%.1f", b / 1e6 }') MB, $n documents); $(nproc) cores"
  echo "started $started; ended $(date -u +%Y-%m-%dT%H:%MZ), load average $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "Spark: --master $master, driver memory $driver_memory, spark.sql.shuffle.partitions=$partitions; $rows rows written"
  echo
  printf '%-28s %9s %9s %9s %14s %6s %8s\n' run seconds "CPU s" "peak MB" "shuffle B/doc" jobs "F1"
  printf '%-28s %9s %9s %9s %14s %6s %8s\n' "megashingle cluster" "$cli_seconds" "$cli_cpu" "$cli_mb" - - -
  printf '%-28s %9s %9s %9s %14s %6s %8s\n' "megashingle.spark ($master)" "$spark_seconds" "$spark_cpu" "$spark_mb" \
    "$(awk -v b="$shuffle_bytes" -v n="$n" 'BEGIN { printf "%.0f", b / n }')" "$spark_jobs" "$f1"
  [ -n "$td_row" ] && echo "$td_row"
  echo
  grep '^megashingle.spark: ' "$work/spark.err" || true
  echo "shuffle bytes written by megashingle.spark: $shuffle_bytes in all; by phase:"
  tail -n +2 "$work/spark.shuffle"
} | tee "target/bench/spark-$n.txt"
