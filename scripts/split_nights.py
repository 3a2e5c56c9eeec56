#!/usr/bin/env python3
"""Deals a corpus into nights in which stories run: most of a night's documents join stories
that earlier nights began, and a share of stories begins each night.

    scripts/split-nights CORPUS.csv TRUTH.csv NIGHTS OUT_DIR

CORPUS.csv and TRUTH.csv are what `scripts/gen-corpus N CORPUS.csv --truth TRUTH.csv
--running-stories` writes (any `id,text` corpus with an `id,cluster_id` truth will do). Each
document goes to a night drawn uniformly from 1..NIGHTS, so the nights are of one size, except
that a story's original (its cluster id, the first document as the generator writes it) goes
to the earliest night of its story: the story begins that night and grows on each later night
that drew some of its documents. A story of 300 documents runs through every night with
about 27 documents a night of 11; a singleton is a new story on its night. The draws are made
from a hash of the ids, so a split is reproducible and does not depend on the order of rows.

Writes OUT_DIR/night-01.csv ... night-NN.csv (`id,text`, in the corpus's order) and prints, for
each night, its documents and the share of them that join a story of an earlier night. With a
corpus of 1.1 million and 11 nights, the first ten nights make an index of about a million and
the eleventh is the night to measure. Python 3 standard library only.
"""

import csv
import hashlib
import os
import sys


def draw(key: str, low: int, high: int) -> int:
    """A number in low..high (inclusive), from a hash of `key`."""
    digest = hashlib.blake2b(key.encode("utf-8"), digest_size=8).digest()
    return low + int.from_bytes(digest, "little") % (high - low + 1)


def main(argv):
    if len(argv) != 4 or not argv[2].isdigit() or int(argv[2]) < 1:
        print("usage: split-nights CORPUS.csv TRUTH.csv NIGHTS OUT_DIR", file=sys.stderr)
        return 2
    corpus_path, truth_path, nights, out_dir = argv[0], argv[1], int(argv[2]), argv[3]
    csv.field_size_limit(1 << 30)
    with open(truth_path, newline="", encoding="utf-8") as f:
        story_of = {row["id"]: row["cluster_id"] for row in csv.DictReader(f)}
    night_of = {doc: draw("night " + doc, 1, nights) for doc in story_of}
    begins = {}
    for doc, story in story_of.items():
        begins[story] = min(begins.get(story, nights), night_of[doc])
    os.makedirs(out_dir, exist_ok=True)
    names = [os.path.join(out_dir, f"night-{n:02d}.csv") for n in range(1, nights + 1)]
    parts = [name + ".part" for name in names]
    outs = [open(p, "w", newline="", encoding="utf-8", buffering=1 << 20) for p in parts]
    writers = [csv.writer(out, lineterminator="\n") for out in outs]
    for w in writers:
        w.writerow(["id", "text"])
    documents = [0] * nights
    running = [0] * nights
    error = None
    with open(corpus_path, newline="", encoding="utf-8") as f:
        rows = csv.reader(f)
        if next(rows, [])[:2] != ["id", "text"]:
            error = f"split-nights: {corpus_path}: the header must be id,text"
        for row in rows if error is None else ():
            doc = row[0]
            story = story_of.get(doc)
            if story is None:
                error = f"split-nights: {corpus_path}: document {doc!r} is not in {truth_path}"
                break
            first = begins[story]
            night = first if doc == story else night_of[doc]
            writers[night - 1].writerow(row[:2])
            documents[night - 1] += 1
            running[night - 1] += night > first
    for out in outs:
        out.close()
    if error is not None:
        # Nothing is put in place: the nights written so far are removed.
        for part in parts:
            os.remove(part)
        print(error, file=sys.stderr)
        return 2
    for part, name in zip(parts, names):
        os.replace(part, name)
    for n in range(nights):
        share = running[n] / documents[n] if documents[n] else 0.0
        print(f"night {n + 1:2d}: {documents[n]:9d} documents, {share:6.1%} join a story of an earlier night")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
