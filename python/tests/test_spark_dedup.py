"""The Spark job's ``--dedup`` in local[2]: the records it keeps and removes against the
package's ``megashingle.dedup`` (the command's rule) on the dev benchmarks, every column kept
with its type, ``--keep earliest --time-column`` against the command's ``megashingle dedup``,
and its errors as one line."""

import csv
import datetime
import json
import os
import subprocess

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
    _one_clean_line(err, "--keep earliest needs the column or field of each record's time: give --time-column NAME")
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


# When each record of TEXTS was written (None: no time), in the forms the command reads: the
# earliest is d2's (01:00 UTC, written with an offset), though d5's text sorts first; d3 has none.
TIMES = [
    "2026-12-01",
    "2026-11-29T08:00:00Z",
    "2026-11-30T04:00:00+03:00",
    None,
    "2026-11-30T06:00:00Z",
    "2026-11-30 01:30:00",
]


def _command(cli, *args):
    """``megashingle dedup`` with ``args``: exit code and stderr."""
    done = subprocess.run([str(cli), "dedup", *map(str, args)], capture_output=True, text=True)
    return done.returncode, done.stderr


def _command_dropped(path):
    with open(path, newline="", encoding="utf-8") as f:
        return {r["doc_id"]: (r["duplicate_of"], r["similarity"]) for r in csv.DictReader(f)}


def _job_dropped(folder):
    return {d: (k, f"{s:.4f}") for d, (k, s) in _dropped(folder).items()}


def _write_records(path, fmt, ids, texts, times):
    if fmt == "csv":
        with path.open("w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(["id", "text", "published"])
            w.writerows([i, t, "" if d is None else d] for i, t, d in zip(ids, texts, times))
    else:
        with path.open("w", encoding="utf-8") as f:
            for i, t, d in zip(ids, texts, times):
                f.write(json.dumps({"id": i, "text": t, **({} if d is None else {"published": d})}) + "\n")


def _command_kept(path, fmt):
    """The records the command wrote, by id: CSV rows, or JSONL objects."""
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f)) if fmt == "csv" else [json.loads(line) for line in f]
    return {r["id"]: r for r in rows}


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_keep_earliest_keeps_the_commands_records(spark, cli, tmp_path, capfd, fmt):
    ids = [f"d{i}" for i in range(len(TEXTS))]
    src = tmp_path / f"docs.{fmt}"
    _write_records(src, fmt, ids, TEXTS, TIMES)
    removed = {}
    for keep in ("representative", "first", "earliest"):
        timed = ("--time-column", "published") if keep == "earliest" else ()
        args = ("-o", tmp_path / f"{keep}.{fmt}", "--dropped", tmp_path / f"{keep}-dropped.csv", "-q", "--threshold", "0.3")
        code, err = _command(cli, src, *args, "--keep", keep, *timed)
        assert code == 0, err
        removed[keep] = _command_dropped(tmp_path / f"{keep}-dropped.csv")
    # Earliest keeps d2, which neither the first read (d0) nor the representative is.
    assert {k for k, _ in removed["earliest"].values()} == {"d2"}, removed
    assert {k for k, _ in removed["first"].values()} == {"d0"}, removed
    assert {k for k, _ in removed["representative"].values()} != {"d2"}, removed
    out, dropped = tmp_path / "kept", tmp_path / "dropped"
    code, err = _main(
        capfd, "--dedup", "--input", src, "--output", out, "--dropped", dropped,
        "--keep", "earliest", "--time-column", "published", "--threshold", "0.3",
    )
    assert code == 0, err
    assert "keep earliest, threshold 0.3" in err
    assert _job_dropped(dropped) == removed["earliest"]
    kept = {r["id"]: r for r in pq.read_table(str(out)).to_pylist()}
    want = _command_kept(tmp_path / f"earliest.{fmt}", fmt)
    assert set(kept) == set(want)
    for i, r in want.items():
        assert (kept[i]["text"], kept[i]["published"] or "") == (r["text"], r.get("published") or ""), i
    print(f"Spark --keep earliest vs the command on {fmt}: {len(kept)} kept, {len(removed['earliest'])} removed, equal")


def _time_table(kind):
    """TEXTS with TIMES as a Parquet table, the times a column of ``kind``."""
    seconds = [None if t is None else megashingle._megashingle.parse_times([t])[0][0] for t in TIMES]
    moments = [None if t is None else datetime.datetime.fromtimestamp(t, datetime.timezone.utc) for t in seconds]
    published = {
        "string": pa.array(TIMES, pa.string()),
        "timestamp": pa.array(moments, pa.timestamp("us", tz="UTC")),
        "naive": pa.array([None if m is None else m.replace(tzinfo=None) for m in moments], pa.timestamp("ms")),
        "date": pa.array([None if m is None else m.date() for m in moments], pa.date32()),
    }[kind]
    ids = [f"d{i}" for i in range(len(TEXTS))]
    return pa.table({"id": pa.array(ids), "text": pa.array(TEXTS), "published": published})


@pytest.mark.parametrize("kind", ["string", "timestamp", "naive", "date"])
def test_keep_earliest_reads_parquet_times_as_the_command(spark, cli, tmp_path, capfd, kind):
    table = _time_table(kind)
    src = tmp_path / "docs.parquet"
    pq.write_table(table, src)
    args = ("--keep", "earliest", "--time-column", "published", "--threshold", "0.3")
    code, err = _command(cli, src, "-o", tmp_path / "want.parquet", "--dropped", tmp_path / "want.csv", "-q", *args)
    assert code == 0, err
    expected = _command_dropped(tmp_path / "want.csv")
    assert {k for k, _ in expected.values()} == {"d2"}, expected
    out, dropped = tmp_path / "kept", tmp_path / "dropped"
    code, err = _main(capfd, "--dedup", "--input", src, "--output", out, "--dropped", dropped, *args)
    assert code == 0, err
    assert _job_dropped(dropped) == expected
    kept = pq.read_table(str(out))
    # Spark keeps every column's type, but reads a timestamp without a time zone in microseconds.
    assert kept.schema.remove_metadata() == table.schema.remove_metadata() or kind == "naive"
    assert sorted(kept.to_pylist(), key=lambda r: r["id"]) == sorted(
        pq.read_table(tmp_path / "want.parquet").to_pylist(), key=lambda r: r["id"]
    )


def test_a_time_that_is_not_a_date_skips_its_record_as_the_command(spark, cli, tmp_path, capfd):
    ids = [f"d{i}" for i in range(len(TEXTS))] + ["x", "x"]
    texts = TEXTS + ["a first record of x whose time is not one", "a later record of x kept in its place"]
    src = tmp_path / "docs.csv"
    _write_records(src, "csv", ids, texts, TIMES + ["yesterday", "2026-11-01"])
    args = ("--keep", "earliest", "--time-column", "published", "--threshold", "0.3")
    code, command_err = _command(cli, src, "-o", tmp_path / "want.csv", *args)
    assert code == 1, command_err
    report = f'{src}:8: time "yesterday" in `published` is not a date; write RFC 3339 (2026-11-30T06:00:00Z, 2026-11-30T09:00:00+03:00) or YYYY-MM-DD; record skipped'
    assert report in command_err
    out = tmp_path / "kept"
    code, err = _main(capfd, "--dedup", "--input", src, "--output", out, "--format", "csv", *args)
    assert code == 1, err
    assert f"megashingle.spark: {report}" in err.splitlines(), err
    assert "1 records skipped" in err
    got = []
    for part in sorted(out.glob("part-*.csv")):
        with part.open(newline="", encoding="utf-8") as f:
            got.extend(csv.DictReader(f))
    want = _command_kept(tmp_path / "want.csv", "csv")
    assert sorted(got, key=lambda r: r["id"]) == sorted(want.values(), key=lambda r: r["id"])
    assert want["x"]["text"] == texts[-1]

    # The same in a Parquet column of strings, each record named by its row.
    table = _time_table("string")
    times = table.column("published").to_pylist()
    times[0] = "30.11.2026"
    parquet = tmp_path / "docs.parquet"
    pq.write_table(table.set_column(2, "published", pa.array(times, pa.string())), parquet)
    code, err = _main(capfd, "--dedup", "--input", parquet, "--output", tmp_path / "kept2", *args)
    assert code == 1, err
    assert f'{parquet}, row 1: time "30.11.2026" in `published` is not a date; write RFC 3339' in err, err
    assert "d0" not in pq.read_table(str(tmp_path / "kept2")).column("id").to_pylist()


def test_keep_earliest_refuses_what_the_command_refuses_in_one_line(cli, tmp_path, capfd):
    src = tmp_path / "docs.csv"
    _write_records(src, "csv", ["a", "b"], TEXTS[:2], TIMES[:2])
    wanted = "--keep earliest needs the column or field of each record's time: give --time-column NAME"
    code, err = _command(cli, src, "--keep", "earliest")
    assert code == 2 and wanted in err, err
    for args in (("--keep", "earliest"), ("--set", "dedup.keep=earliest")):
        code, err = _main(capfd, "--dedup", "--input", src, "--output", tmp_path / "o", *args)
        assert code == 2
        _one_clean_line(err, wanted)
    code, err = _main(capfd, "--dedup", "--input", src, "--output", tmp_path / "o", "--time-column", "published")
    assert code == 2
    _one_clean_line(
        err,
        "--time-column goes with --keep earliest: add --keep earliest to keep each story's earliest record, "
        "or leave --time-column out",
    )
    code, err = _main(capfd, "--input", src, "--output", tmp_path / "o", "--time-column", "published")
    assert code == 2
    _one_clean_line(err, "--time-column goes with --dedup: add --dedup to deduplicate, or leave --time-column out")
    assert not os.path.exists(tmp_path / "o")


def test_a_time_column_that_cannot_be_read_fails_in_one_line(spark, cli, tmp_path, capfd):
    src = tmp_path / "docs.csv"
    _write_records(src, "csv", ["a", "b"], TEXTS[:2], TIMES[:2])
    args = ("--keep", "earliest", "--time-column", "when")
    code, command_err = _command(cli, src, *args)
    assert code == 2
    wanted = f"{src}: no column `when` (the time column); columns found: id, text, published"
    assert wanted in command_err, command_err
    code, err = _main(capfd, "--dedup", "--input", src, "--output", tmp_path / "o", *args)
    assert code == 2
    _one_clean_line(err, wanted)
    parquet = tmp_path / "docs.parquet"
    pq.write_table(pa.table({"id": ["a", "b"], "text": TEXTS[:2], "when": pa.array([1, 2], pa.int64())}), parquet)
    code, command_err = _command(cli, parquet, *args)
    assert code == 2
    assert f"{parquet}: column `when` (the time column) holds Int64 values, not strings, timestamps or dates" in command_err
    code, err = _main(capfd, "--dedup", "--input", parquet, "--output", tmp_path / "o", *args)
    assert code == 2
    _one_clean_line(err, f"{parquet}: column `when` (the time column) holds bigint values, not strings, timestamps or dates")
    assert not os.path.exists(tmp_path / "o")
