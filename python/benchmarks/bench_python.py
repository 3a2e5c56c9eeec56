"""Speed of the Python package against the command on one corpus (documents already in
memory): `megashingle.cluster` against `megashingle cluster`, and `Sketcher.sketch_batch`
against the command's sketching stages (`--timings`).

    python python/benchmarks/bench_python.py target/bench/corpus-100000.csv target/release/megashingle

Run it on a release build of both (pip install ./python builds the extension in release).
"""

import csv
import subprocess
import sys
import time

import megashingle


def main(corpus: str, cli: str) -> None:
    csv.field_size_limit(sys.maxsize)
    with open(corpus, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    ids = [r["id"] for r in rows]
    texts = [r["text"] for r in rows]
    del rows
    started = time.perf_counter()
    done = subprocess.run([cli, "cluster", corpus, "--quiet", "--timings"], check=True, capture_output=True, text=True)
    cli_seconds = time.perf_counter() - started
    started = time.perf_counter()
    rows = megashingle.cluster(ids, texts)
    python_seconds = time.perf_counter() - started
    assert len(rows) == len(ids)
    started = time.perf_counter()
    batch = megashingle.Sketcher().sketch_batch(texts)
    sketch_seconds = time.perf_counter() - started
    assert batch["minima"].shape[0] == len(texts)
    print(f"documents: {len(ids)}")
    print(f"cli cluster (wall, reading the CSV included): {cli_seconds:.2f} s")
    print(f"cli stage timings: {done.stderr.strip()}")
    print(
        f"python cluster (documents in memory): {python_seconds:.2f} s ({python_seconds / cli_seconds:.2f}x the cli's time)"
    )
    print(f"python sketch_batch: {sketch_seconds:.2f} s ({len(texts) / sketch_seconds:,.0f} docs/s)")


if __name__ == "__main__":
    main(*sys.argv[1:3])
