#!/usr/bin/env python3
"""How `megashingle dedup` would decide at each threshold, on a labelled benchmark.

Runs `megashingle dedup --threshold 0 --dropped FILE` (every member of every story is listed
with its Jaccard and containment against the kept record), then, for each threshold, counts the
members it removes, how many of those truly belong to the kept record's story (truth.csv), and
how many true members of a story stay, by difficulty (meta.csv `level`).

    scripts/dedup-threshold.py [--bin target/release/megashingle] [--data ../shared/data/rewrites-dev] [--keep representative]
"""
import argparse
import csv
import os
import subprocess
import sys
import tempfile
from collections import Counter

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--bin", default="target/release/megashingle")
parser.add_argument("--data", default="../shared/data/rewrites-dev")
parser.add_argument("--keep", default="representative")
args = parser.parse_args()

with tempfile.TemporaryDirectory() as tmp:
    dropped = os.path.join(tmp, "dropped.csv")
    subprocess.run(
        [args.bin, "dedup", os.path.join(args.data, "docs.csv"), "-o", os.devnull,
         "--threshold", "0", "--keep", args.keep, "--dropped", dropped, "--quiet"],
        check=True,
    )
    with open(dropped, newline="") as f:
        members = list(csv.DictReader(f))

truth = {r["id"]: r["cluster_id"] for r in csv.DictReader(open(os.path.join(args.data, "truth.csv"), newline=""))}
level = {r["id"]: r["level"] for r in csv.DictReader(open(os.path.join(args.data, "meta.csv"), newline=""))}
true_story_size = Counter(truth.values())
true_duplicates = sum(n - 1 for n in true_story_size.values())

print(f"{len(members)} members of stories of 2 or more; {true_duplicates} records are not the first of their true story")
print("threshold  removed  wrong  kept_in_story  removed_by_level")
for t in [0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]:
    removed = [m for m in members if float(m["similarity"]) >= t]
    wrong = sum(truth[m["doc_id"]] != truth[m["duplicate_of"]] for m in removed)
    by_level = Counter(level.get(m["doc_id"], "?") for m in removed)
    stay = Counter(level.get(m["doc_id"], "?") for m in members if float(m["similarity"]) < t)
    print(f"{t:9.1f}  {len(removed):7d}  {wrong:5d}  {len(members) - len(removed):13d}  "
          + " ".join(f"{k}={by_level[k]}/{by_level[k] + stay[k]}" for k in sorted(set(by_level) | set(stay))))
sys.exit(0)
