"""The Spark job's ``--dedup`` in local[2]: the records it keeps and removes against the
package's ``megashingle.dedup`` (the command's rule) on the dev benchmarks, every column kept
with its type, and its errors as one line."""

import csv
import datetime
import json
import os

import pytest

import megashingle
import megashingle.spark  # noqa: F401  (the submodule, for megashingle.spark.main)
from conftest import DEV, STORY

pytest.importorskip("pyspark", reason="pyspark is not installed")
pytest.importorskip("pandas", reason="pandas is not installed")
pa = pytest.importorskip("pyarrow", reason="pyarrow is not installed")
import pyarrow.parquet as pq  # noqa: E402

TRACES = ("Traceback", "Py4J", "py4j", "at org.apache", "Exception in")

# Five texts of one story (one the longest), and one alone.
TEXTS = [
    STORY.replace("monday", "tuesday"),
    "a recipe for bread with flour water salt and yeast baked in a hot oven for forty minutes",
    STORY + " and the mayor",
    STORY,
    STORY + " while the opposition asked for a referendum on the new fares next spring",
    STORY + " said the spokesman",
]


def _main(capfd, *args):
    """The job's command line in this process (the tests' session): exit code and stderr."""
    code = megashingle.spark.main([*map(str, args)])
    return code, capfd.readouterr().err


def _one_clean_line(err, wanted):
    assert wanted in err, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    for trace in TRACES:
        assert trace not in err, err


def _expected(ids, texts, *settings):
    """What the command's rule removes: {doc_id: (duplicate_of, similarity to 4 places)}."""
    config = megashingle.Config(dict(settings)) if settings else None
    return {r["doc_id"]: (r["duplicate_of"], round(r["similarity"], 4)) for r in megashingle.dedup(ids, texts, config)}


def _dropped(folder):
    table = pq.read_table(str(folder))
    assert table.column_names == ["doc_id", "duplicate_of", "similarity", "jaccard", "containment"]
    return {r["doc_id"]: (r["duplicate_of"], round(r["similarity"], 4)) for r in table.to_pylist()}


@pytest.mark.parametrize("benchmark", ["rewrites-dev", "multilingual-dev"])
def test_dedup_keeps_and_removes_the_commands_records_on_the_dev_benchmarks(spark, tmp_path, capfd, benchmark):
    docs = DEV.parent / benchmark / "docs.csv"
    if not docs.exists():
        print(f"skipping: {docs} is absent")
        pytest.skip(f"{docs} is absent")
    with open(docs, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    ids = [r["id"] for r in rows]
    expected = _expected(ids, [r["text"] for r in rows])
    assert expected, "the benchmark has duplicates to remove"
    out, dropped = tmp_path / "kept", tmp_path / "dropped"
    code, err = _main(capfd, "--dedup", "--input", docs, "--output", out, "--dropped", dropped)
    assert code == 0, err
    kept = pq.read_table(str(out))
    assert kept.column_names == ["id", "text"]
    got_kept = kept.column("id").to_pylist()
    assert len(got_kept) == len(set(got_kept))
    assert set(got_kept) == set(ids) - set(expected)
    # Each kept record is its input row, text and all.
    texts = {r["id"]: r["text"] for r in rows}
    assert all(texts[r["id"]] == r["text"] for r in kept.to_pylist())
    got = _dropped(dropped)
    assert {d: k for d, (k, _) in got.items()} == {d: k for d, (k, _) in expected.items()}
    assert got == expected
    print(f"Spark --dedup vs the command's dedup on {benchmark}: {len(got_kept)} kept, {len(got)} removed, equal")
    assert f"{len(ids)} records in, {len(got_kept)} kept, {len(got)} removed as duplicates" in err


def _typed_table(ids, texts):
    n = len(ids)
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "text": pa.array(texts, pa.string()),
            "views": pa.array(range(100, 100 + n), pa.int32()),
            "score": pa.array([i / 3 for i in range(n)], pa.float64()),
            "paywalled": pa.array([i % 2 == 0 for i in range(n)], pa.bool_()),
            "published": pa.array(
                [datetime.datetime(2026, 11, 30, 6, i, tzinfo=datetime.timezone.utc) for i in range(n)],
                pa.timestamp("us", tz="UTC"),
            ),
            "day": pa.array([datetime.date(2026, 11, 1 + i) for i in range(n)], pa.date32()),
            "tags": pa.array([[f"t{i}", "news"] for i in range(n)], pa.list_(pa.string())),
        }
    )


@pytest.mark.parametrize("keep", ["representative", "first", "longest"])
def test_parquet_records_keep_every_column_with_its_type(spark, tmp_path, capfd, keep):
    ids = [31, 7, 12, 5, 40, 9]
    table = _typed_table(ids, TEXTS)
    # Two files: the read order spans files, and a repeated id keeps its first record.
    pq.write_table(table.slice(0, 3), tmp_path / "a.parquet")
    pq.write_table(
        pa.concat_tables([table.slice(3), _typed_table([12], ["a later record with an id seen before"])]),
        tmp_path / "b.parquet",
    )
    out, dropped = tmp_path / "kept", tmp_path / "dropped"
    code, err = _main(
        capfd, "--dedup", "--input", tmp_path / "a.parquet", "--input", tmp_path / "b.parquet",
        "--output", out, "--dropped", dropped, "--keep", keep, "--threshold", "0.3",
    )
    assert code == 1, err  # finished, with the repeated id's record skipped: as the command exits
    expected = _expected([str(i) for i in ids], TEXTS, ("dedup.keep", keep), ("dedup.threshold", 0.3))
    assert len(expected) >= 2
    kept = pq.read_table(str(out))
    assert kept.schema.remove_metadata() == table.schema.remove_metadata()
    assert sorted(kept.column("id").to_pylist()) == sorted(i for i in ids if str(i) not in expected)
    # Every value as it was, by id; id 12 from its first record.
    by_id = {r["id"]: r for r in table.to_pylist()}
    assert all(r == by_id[r["id"]] for r in kept.to_pylist())
    assert _dropped(dropped) == expected


def test_jsonl_and_csv_records_come_as_strings_with_the_commands_choice(spark, tmp_path, capfd):
    src = tmp_path / "docs.jsonl"
    with src.open("w", encoding="utf-8") as f:
        for i, text in enumerate(TEXTS):
            f.write(json.dumps({"id": f"d{i}", "text": text, "rank": i, "extra": {"lang": "en"}}) + "\n")
        f.write(json.dumps({"id": "d2", "text": "a later record with an id seen before", "rank": 9}) + "\n")
    out = tmp_path / "kept"
    code, err = _main(capfd, "--dedup", "--input", src, "--output", out, "--keep", "first")
    assert code == 1, err
    expected = _expected([f"d{i}" for i in range(len(TEXTS))], TEXTS, ("dedup.keep", "first"))
    kept = pq.read_table(str(out))
    assert sorted(kept.column_names) == ["extra", "id", "rank", "text"]
    assert kept.schema.field("rank").type == pa.string()
    rows = {r["id"]: r for r in kept.to_pylist()}
    assert set(rows) == {f"d{i}" for i in range(len(TEXTS))} - set(expected)
    assert "d0" in rows and rows["d0"]["rank"] == "0"  # the first read of its story is kept
    if "d2" in rows:
        assert rows["d2"]["text"] == TEXTS[2]
    csv_src = tmp_path / "docs.csv"
    with csv_src.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["id", "text", "rank"])
        for i, text in enumerate(TEXTS):
            w.writerow([f"c{i}", text + "\nits second line", i])
    code, err = _main(capfd, "--dedup", "--input", csv_src, "--output", tmp_path / "kept.csv", "--format", "csv")
    assert code == 0, err
    got = []
    for part in sorted((tmp_path / "kept.csv").glob("part-*.csv")):
        with part.open(newline="", encoding="utf-8") as f:
            got.extend(csv.DictReader(f))
    expected = _expected([f"c{i}" for i in range(len(TEXTS))], [t + "\nits second line" for t in TEXTS])
    assert sorted(r["id"] for r in got) == sorted({f"c{i}" for i in range(len(TEXTS))} - set(expected))
    assert all(r["text"].endswith("\nits second line") for r in got)


def test_dedup_refuses_outputs_and_inputs_it_cannot_use_in_one_line(tmp_path, capfd):
    src = tmp_path / "docs.csv"
    src.write_text(f"id,text\na,{STORY}\n")
    a_file = tmp_path / "a-file"
    a_file.write_text("not a folder")
    code, err = _main(capfd, "--dedup", "--input", src, "--output", tmp_path / "o", "--dropped", a_file / "dropped")
    assert code == 2
    _one_clean_line(err, f"{a_file / 'dropped'}: cannot be made: {a_file} is a file, not a folder; give --dropped another path")
    existing = tmp_path / "existing"
    existing.mkdir()
    code, err = _main(capfd, "--dedup", "--input", src, "--output", existing)
    assert code == 2
    _one_clean_line(err, f"{existing}: the output folder exists; give another --output or --overwrite to replace it")
    code, err = _main(capfd, "--dedup", "--input", src, "--output", tmp_path / "o", "--dropped", existing)
    assert code == 2
    _one_clean_line(err, f"{existing}: the --dropped folder exists; give another --dropped or --overwrite to replace it")
    code, err = _main(capfd, "--dedup", "--input", src, "--output", tmp_path / "o", "--dropped", tmp_path / "o" / ".")
    assert code == 2
    _one_clean_line(err, "--dropped names the --output folder: give the removed records a folder of their own")
    code, err = _main(capfd, "--input", src, "--output", tmp_path / "o", "--dropped", tmp_path / "d")
    assert code == 2
    _one_clean_line(err, "--dropped goes with --dedup: add --dedup to deduplicate, or leave --dropped out")
    code, err = _main(capfd, "--dedup", "--input", src, "--output", tmp_path / "o", "--set", "dedup.keep=earliest")
    assert code == 2
    _one_clean_line(err, 'dedup.keep = "earliest" needs each record\'s time, which the Spark job does not read')
    folder = tmp_path / "news"
    folder.mkdir()
    (folder / "a.txt").write_text(STORY)
    code, err = _main(capfd, "--dedup", "--input", folder, "--output", tmp_path / "o")
    assert code == 2
    _one_clean_line(err, f"{folder / 'a.txt'}: a document in a folder; dedup writes records, so give CSV, JSONL or Parquet files")
    other = tmp_path / "docs.jsonl"
    other.write_text(json.dumps({"id": "b", "text": STORY}) + "\n")
    code, err = _main(capfd, "--dedup", "--input", src, "--input", other, "--output", tmp_path / "o")
    assert code == 2
    _one_clean_line(err, f"{other} is JSONL but {src} is CSV: dedup writes one format, so give inputs of one format")
    assert not os.path.exists(tmp_path / "o")
