#!/usr/bin/env bash
# Clusters the labelled rewrites benchmark with the default configuration (plus any megashingle
# flags given, e.g. --set boilerplate.min-documents=0) and prints the scorer's figures: all
# documents, then one line per language.
#
#   scripts/eval.sh [MEGASHINGLE FLAGS...]
#
# DATA (default ../shared/data/rewrites-dev) and SCORER (default ../shared/tools/score.py)
# point elsewhere; OUT keeps clusters.csv and the per-language files (default: a temp folder).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
data=${DATA:-$root/../shared/data/rewrites-dev}
scorer=${SCORER:-$root/../shared/tools/score.py}
out=${OUT:-$(mktemp -d)}
for f in "$data/docs.csv" "$data/truth.csv" "$data/pairs_truth.csv" "$data/meta.csv" "$scorer"; do
  [ -f "$f" ] || { echo "eval.sh: $f not found; set DATA and SCORER" >&2; exit 2; }
done
mkdir -p "$out"
cargo build --release --quiet --manifest-path "$root/Cargo.toml"
"$root/target/release/megashingle" cluster "$data/docs.csv" -o "$out/clusters.csv" --quiet "$@"
python3 "$scorer" --truth "$data/truth.csv" --pred "$out/clusters.csv" --pairs "$data/pairs_truth.csv" \
  --json "$out/all.json"
echo
echo "by language:"
python3 - "$data" "$out" "$scorer" <<'PY'
import csv, json, subprocess, sys
data, out, scorer = sys.argv[1:4]
language = {r["id"]: r["lang"] for r in csv.DictReader(open(f"{data}/meta.csv", encoding="utf-8"))}
def subset(name, keep, fields, rows):
    with open(name, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(r for r in rows if keep(r))
truth = list(csv.DictReader(open(f"{data}/truth.csv", encoding="utf-8")))
pred = list(csv.DictReader(open(f"{out}/clusters.csv", encoding="utf-8")))
pairs = list(csv.DictReader(open(f"{data}/pairs_truth.csv", encoding="utf-8")))
print(f"{'lang':6}{'docs':>7}{'pairwise F1':>13}{'BCubed F1':>11}{'format':>9}{'easy':>8}{'medium':>8}{'hard':>8}{'false merges':>14}")
for lang in sorted(set(language.values())):
    if sum(1 for v in language.values() if v == lang) < 20:
        continue
    base = f"{out}/{lang}"
    subset(f"{base}-truth.csv", lambda r: language[r["id"]] == lang, ["id", "cluster_id"], truth)
    subset(f"{base}-pred.csv", lambda r: language[r["doc_id"]] == lang, list(pred[0].keys()), pred)
    subset(f"{base}-pairs.csv", lambda r: language[r["id_a"]] == lang and language[r["id_b"]] == lang,
           list(pairs[0].keys()), pairs)
    subprocess.run([sys.executable, scorer, "--truth", f"{base}-truth.csv", "--pred", f"{base}-pred.csv",
                    "--pairs", f"{base}-pairs.csv", "--json", f"{base}.json"], check=True, capture_output=True)
    s = json.load(open(f"{base}.json"))
    docs = sum(1 for v in language.values() if v == lang)
    c, p = s["clustering"], s["pairs"]
    recall = [p["recall_by_difficulty"].get(d, {}).get("rate") for d in ("format", "easy", "medium", "hard")]
    recall = "".join(f"{r:>8.3f}" if r is not None else f"{'-':>8}" for r in recall)
    hn = p["hard_negative_false_merge_rate"]["ALL"]
    print(f"{lang:6}{docs:>7}{c['pairwise']['f1']:>13.4f}{c['bcubed']['f1']:>11.4f} {recall}{hn['hit']:>9}/{hn['n']}")
PY
