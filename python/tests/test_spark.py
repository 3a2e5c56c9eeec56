"""The Spark job in local[2]: its stories against the package's (which are the command's),
on a small corpus and on the dev benchmark (pairwise F1), and the command line."""

import csv
import glob
import io
import itertools
import os
import shutil
import subprocess
import sys
from collections import defaultdict

import numpy as np
import pytest

import megashingle
import megashingle.spark  # noqa: F401  (the submodule, for megashingle.spark.cluster)
from conftest import STORY, warc_gz_with_a_damaged_member, warc_resource

pyspark = pytest.importorskip("pyspark", reason="pyspark is not installed")
pytest.importorskip("pandas", reason="pandas is not installed")
pytest.importorskip("pyarrow", reason="pyarrow is not installed")


def pairs_of(assignment):
    clusters = defaultdict(list)
    for doc, c in assignment.items():
        clusters[c].append(doc)
    return {tuple(sorted(p)) for m in clusters.values() for p in itertools.combinations(m, 2)}


def pairwise_f1(truth, pred):
    t, p = pairs_of(truth), pairs_of(pred)
    if not t and not p:
        return 1.0
    common = len(t & p)
    precision = common / len(p) if p else 1.0
    recall = common / len(t) if t else 1.0
    return 0.0 if common == 0 else 2 * precision * recall / (precision + recall)


def test_small_corpus_matches_the_package(spark):
    ids = ["a", "b", "c", "d", "e", "f"]
    texts = [
        STORY,
        STORY + " and local shop owners",
        "a recipe for bread with flour water salt and yeast baked in a hot oven for an hour",
        "too short",
        STORY.replace("monday", "tuesday"),
        "a recipe for bread with flour water salt and yeast baked in a hot oven for two hours",
    ]
    df = spark.createDataFrame(list(zip(ids, texts)), ["id", "text"])
    got = [r.asDict() for r in megashingle.spark.cluster(df).collect()]
    expected = megashingle.cluster(ids, texts)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert (g["doc_id"], g["cluster_id"], g["cluster_size"], g["status"]) == (
            e["doc_id"], e["cluster_id"], e["cluster_size"], e["status"]
        )
        assert (g["similarity"] is None) == (e["similarity"] is None)
        if e["similarity"] is not None:
            assert abs(g["similarity"] - e["similarity"]) < 1e-9


def _rows(rows):
    """Rows as tuples, similarities rounded (the job's and the package's may differ in the
    last bits)."""
    return [
        (r["doc_id"], r["cluster_id"], r["cluster_size"], r["similarity"] and round(r["similarity"], 9), r["status"])
        for r in rows
    ]


def _footer_stories():
    """Three stories of three pages each, all with the same footer: in 9 pages, too few for
    document frequency (100), but in 3 stories of the first clustering: boilerplate."""
    footer = "subscribe to our newsletter for the latest headlines delivered to your inbox every morning"
    stories = [
        STORY,
        "a local bakery won the national bread competition with a sourdough loaf made from "
        "heritage wheat grown on a nearby farm by two brothers who took over last year",
        "heavy rain flooded several streets in the old town overnight and firefighters pumped "
        "water from dozens of basements while the river rose close to the record level",
    ]
    ids, texts = [], []
    for i, story in enumerate(stories):
        ids += [f"s{i}a", f"s{i}b", f"s{i}c"]
        texts += [f"{story} {footer}", f"{story.replace(' the ', ' a ', 1)} {footer}", f"{footer} {story} in the end"]
    return ids, texts, {"boilerplate.min-documents": 100}


def test_document_frequency_sums_the_counts_of_every_range_row():
    import numpy as np
    import pyarrow as pa

    from megashingle.spark.frequency import _summed
    from megashingle.spark.ranges import _binary_values

    rng = np.random.default_rng(7)
    keys = rng.integers(0, 50, 400).astype(np.uint32)
    counts = rng.integers(1, 9, 400).astype(np.uint32)
    expected = defaultdict(int)
    for k, n in zip(keys.tolist(), counts.tolist()):
        expected[k] += n
    summed_keys, summed = _summed(keys, counts)
    assert summed_keys.tolist() == sorted(expected)
    assert summed.tolist() == [expected[k] for k in sorted(expected)]
    assert [len(a) for a in _summed(keys[:0], counts[:0])] == [0, 0]
    # Rows of a column sliced out of a batch, as Spark hands them over.
    rows = pa.array([keys[:3].tobytes(), b"", keys[3:10].tobytes(), keys[10:12].tobytes()], pa.binary())
    assert _binary_values(rows.slice(1, 2), np.uint32).tolist() == keys[3:10].tolist()


def test_candidate_pairs_follow_the_bucket_rule_of_the_library(spark):
    from megashingle._megashingle import bucket_rule
    from megashingle.spark.candidates import _candidate_pairs
    from megashingle.spark.workers import _use_own_python

    _use_own_python(spark)  # as the job does before its first pass
    rng = np.random.default_rng(3)
    max_bucket = 40
    docs = 300
    # Ids in another order than the numbers, so that a star's centre (the smallest id) is
    # not the smallest number; numbers as the job makes them, (file << 32) | record.
    ids = [f"d{rng.integers(10**6):06d}-{i}" for i in range(docs)]
    nums = [(i % 3 << 32) | i for i in range(docs)]
    # Keys over the whole 64-bit range, in buckets of every rule: shared by 2 to 60 documents.
    keys = rng.integers(-(2**63), 2**63 - 1, 120, dtype=np.int64).tolist()
    held = [set() for _ in range(docs)]
    for key in keys:
        for doc in rng.choice(docs, int(rng.integers(2, 61)), replace=False).tolist():
            held[doc].add(key)
    comparable = [i % 17 != 0 for i in range(docs)]
    rows = [(nums[i], ids[i], comparable[i], sorted(held[i])) for i in range(docs)]
    sketches = spark.createDataFrame(rows, "num long, doc_id string, comparable boolean, keys array<long>")

    buckets = defaultdict(list)
    for i in range(docs):
        if comparable[i]:
            for key in held[i]:
                buckets[key].append(i)
    expected = set()
    rules = set()
    for members in buckets.values():
        rule = bucket_rule(len(members), max_bucket) if len(members) > 1 else "cut"
        rules.add(rule)
        if rule == "all_pairs":
            expected |= {tuple(sorted((nums[x], nums[y]))) for x, y in itertools.combinations(members, 2)}
        elif rule == "star":
            hub = min(members, key=lambda m: ids[m])
            expected |= {tuple(sorted((nums[hub], nums[m]))) for m in members if m != hub}
    assert rules == {"all_pairs", "star", "cut"}

    pairs, count = _candidate_pairs(sketches, max_bucket)
    got = [(r.a, r.b) for r in pairs.collect()]
    pairs.unpersist()
    assert count == len(got) == len(set(got))
    assert set(got) == expected


def test_story_frequency_finds_a_footer_shared_by_stories(spark):
    ids, texts, settings = _footer_stories()
    with_stories = megashingle.Config(settings, min_stories=3)
    expected = megashingle.cluster(ids, texts, with_stories)
    # The footer counts: without story frequency the similarities differ.
    without = megashingle.cluster(ids, texts, megashingle.Config(settings, min_stories=0))
    assert [r["similarity"] for r in without] != [r["similarity"] for r in expected]
    df = spark.createDataFrame(list(zip(ids, texts)), ["id", "text"])
    got = [r.asDict() for r in megashingle.spark.cluster(df, config=with_stories).collect()]
    assert _rows(got) == _rows(expected)
    got = [r.asDict() for r in megashingle.spark.cluster(df, config=megashingle.Config(settings, min_stories=0)).collect()]
    assert _rows(got) == _rows(without)


def _small_fixture_stories(spark, name):
    """The stories of a fixture clustered by the package with `min-documents` 4 and `min-stories` 2
    (thresholds a fixture of a few documents reaches), checked to be those of the Spark job."""
    path = os.path.join(ROOT, "fixtures", name)
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    ids, texts = [r["id"] for r in rows], [r["text"] for r in rows]
    config = megashingle.Config({"boilerplate.min-documents": 4, "boilerplate.min-stories": 2})
    expected = megashingle.cluster(ids, texts, config)
    df = spark.createDataFrame(list(zip(ids, texts)), ["id", "text"])
    got = [r.asDict() for r in megashingle.spark.cluster(df, config=config).collect()]
    assert _rows(got) == _rows(expected)
    return {r["doc_id"]: r["cluster_id"] for r in expected}


def test_wire_copies_kept_whole_leave_out_a_disclaimer_spread_across_stories(spark):
    # fixtures/README.md: wire copies kept whole (all their text is common) leave out the
    # disclaimer that the documents of many stories carry, as the command does.
    story = _small_fixture_stories(spark, "wire-copies.csv")
    assert story["w1-3"] == story["w1-0"] != story["w2-0"] == story["w2-3"]
    assert [story[f"head-{i}"] for i in range(3)] == ["head-0", "head-1", "head-2"]


def test_rewrites_of_a_story_copied_by_many_documents_join_it(spark):
    # fixtures/README.md: all of a story's text is common (six copies), and most documents
    # that hold it are one story, so it is not boilerplate: the rewrites join the copies.
    story = _small_fixture_stories(spark, "running-story.csv")
    assert story["rewrite-0"] == story["rewrite-1"] == story["copy-0"] != story["other-0"]


@pytest.mark.parametrize("max_local_pairs, max_group", [(0, 200_000), (1_000, 2), (0, 2)])
def test_distributed_groups_and_split_large_groups_give_the_same_stories(spark, max_local_pairs, max_group):
    # Groups found in distributed rounds (no pair on the driver), and groups larger than
    # max_group split by their verified links first: the stories do not change.
    ids, texts, settings = _footer_stories()
    config = megashingle.Config(settings, min_stories=3)
    expected = megashingle.cluster(ids, texts, config)
    df = spark.createDataFrame(list(zip(ids, texts)), ["id", "text"])
    got = megashingle.spark.cluster(df, config=config, max_local_pairs=max_local_pairs, max_group=max_group)
    assert _rows([r.asDict() for r in got.collect()]) == _rows(expected)


def test_arrays_too_large_to_send_with_the_functions_are_joined_and_give_the_same_stories(spark, monkeypatch):
    # On Spark Connect, groups on the driver larger than a function should carry are joined
    # with the rows as a DataFrame instead (story frequency's first stories, and the pairs'
    # groups): the stories do not change.
    import megashingle.spark.components as components
    import megashingle.spark.frequency as frequency

    asked = []

    def never(spark, *arrays):
        asked.append(len(arrays))
        return False

    monkeypatch.setattr(components, "_shipped", never)
    monkeypatch.setattr(frequency, "_shipped", never)
    ids, texts, settings = _footer_stories()
    config = megashingle.Config(settings, min_stories=3)
    df = spark.createDataFrame(list(zip(ids, texts)), ["id", "text"])
    got = megashingle.spark.cluster(df, config=config)
    assert _rows([r.asDict() for r in got.collect()]) == _rows(megashingle.cluster(ids, texts, config))
    assert len(asked) >= 3  # story frequency, and the groups of both clusterings


def test_components_join_long_chains(spark):
    from megashingle.spark import _components

    # A chain 0-1-2-...-39 and a separate pair: two components, rooted at their minima.
    edges = [(i, i + 1) for i in range(39)] + [(100, 101)]
    df = spark.createDataFrame(edges, "a long, b long")
    roots = {r.node: r.root for r in _components(df).collect()}
    assert roots == {**{i: 0 for i in range(40)}, 100: 100, 101: 100}


def test_dev_benchmark_agrees_with_the_command(spark, dev_docs):
    with open(dev_docs, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    ids = [r["id"] for r in rows]
    texts = [r["text"] for r in rows]
    expected = {r["doc_id"]: r["cluster_id"] for r in megashingle.cluster(ids, texts)}
    df = spark.read.csv(str(dev_docs), header=True, multiLine=True, escape='"')
    got = {r.doc_id: r.cluster_id for r in megashingle.spark.cluster(df, ordered=False).collect()}
    assert set(got) == set(expected)
    f1 = pairwise_f1(expected, got)
    print(f"Spark vs cluster command on rewrites-dev: pairwise F1 {f1:.4f}")
    assert f1 >= 0.99


def test_a_local_session_of_the_command_talks_to_its_workers_over_unix_sockets_unless_told():
    from megashingle.spark.command import UNIX_SOCKETS, _session_settings

    memory = ("spark.driver.memory", "4g")
    assert _session_settings("local[2]", [memory]) == [memory, (UNIX_SOCKETS, "true")]
    assert _session_settings("local[2]", [(UNIX_SOCKETS, "false")]) == [(UNIX_SOCKETS, "false")]
    # Executors elsewhere, or a master Spark's own settings choose: their sockets are left alone.
    assert _session_settings("spark://host:7077", [memory]) == [memory]
    assert _session_settings(None, []) == []


def test_command_line_writes_csv_with_headers(spark, tmp_path):
    src = tmp_path / "docs.jsonl"
    import json

    with src.open("w") as f:
        for i, text in enumerate([STORY, STORY + " and more", "something else entirely here now"]):
            f.write(json.dumps({"key": f"k{i}", "body": text}) + "\n")
    out = tmp_path / "out"
    # With a trailing slash, as the README writes `--output stories/`.
    code = megashingle.spark.main(
        ["--input", str(src), "--output", str(out) + os.sep, "--master", "local[2]",
         "--id-column", "key", "--text-column", "body"]
    )
    assert code == 0
    parts = sorted(glob.glob(str(out / "part-*.csv")))
    assert parts
    got = []
    for part in parts:
        with open(part, newline="") as f:
            reader = csv.reader(f)
            rows = list(reader)
        if rows:
            assert rows[0] == ["doc_id", "cluster_id", "cluster_size", "similarity", "status"]
            got.extend(rows[1:])
    assert sorted(r[0] for r in got) == ["k0", "k1", "k2"]
    assert {r[1] for r in got if r[0] in ("k0", "k1")} == {"k0"}




ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NEWS = os.path.join(ROOT, "fixtures", "news")
TRACES = ("Traceback", "Py4J", "py4j", "at org.apache", "Exception in")


def _cli_rows(cli, *args):
    """The command's table for the inputs, as {doc_id: (cluster_id, size, similarity, status)}
    (exit 1: finished with records skipped)."""
    done = subprocess.run([str(cli), "cluster", *map(str, args), "-q"], capture_output=True, text=True)
    assert done.returncode in (0, 1), done.stderr
    out = done.stdout
    return {r["doc_id"]: (r["cluster_id"], r["cluster_size"], r["similarity"], r["status"]) for r in csv.DictReader(io.StringIO(out))}


def _job_rows(out):
    rows = {}
    for part in sorted(glob.glob(os.path.join(str(out), "part-*.csv"))):
        with open(part, newline="", encoding="utf-8") as f:
            for r in csv.DictReader(f):
                rows[r["doc_id"]] = (r["cluster_id"], r["cluster_size"], r["similarity"], r["status"])
    return rows


def _run(*args):
    """The job as its README runs it: this venv's python, no environment variable set."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSPARK")}
    return subprocess.run(
        [sys.executable, "-m", "megashingle.spark", *map(str, args)],
        capture_output=True, text=True, env=env, timeout=900,
    )


def _main(capfd, *args):
    """The job's command line in this process (the tests' session): exit code and stderr."""
    code = megashingle.spark.main([*map(str, args)])
    return code, capfd.readouterr().err


def _one_clean_line(err, wanted):
    assert wanted in err, err
    for trace in TRACES:
        assert trace not in err, err


def test_readme_command_runs_from_the_venv_on_every_input_kind(cli, tmp_path):
    # Folder of documents, a CSV and a .jsonl.gz, as one collection, through the README's
    # command: workers must start with this interpreter although nothing says so.
    docs = tmp_path / "more.csv"
    with docs.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "text"])
        w.writerow(["c1", STORY + "\nwith a second line, \"quoted\""])
        w.writerow(["c2", "a recipe for bread with flour water salt and yeast baked in a hot oven"])
    import gzip
    import json

    with gzip.open(tmp_path / "more.jsonl.gz", "wt", encoding="utf-8") as f:
        f.write(json.dumps({"id": "j1", "text": STORY + " and local shop owners"}) + "\n")
    out = tmp_path / "out"
    done = _run("--input", NEWS, "--input", docs, "--input", tmp_path / "more.jsonl.gz", "--output", out, "--master", "local[2]")
    assert done.returncode == 0, done.stderr
    for trace in TRACES:
        assert trace not in done.stderr, done.stderr
    expected = _cli_rows(cli, NEWS, docs, tmp_path / "more.jsonl.gz")
    got = _job_rows(out)
    assert "en/ferry-original.txt" in got
    assert set(got) == set(expected)
    assert got == expected


def test_folder_ids_and_compressed_documents_match_the_command(spark, cli, tmp_path):
    import gzip

    folder = tmp_path / "docs"
    (folder / "b").mkdir(parents=True)
    (folder / "a.txt").write_text(STORY)
    (folder / "b" / "c.html").write_text(f"<html><body><p>{STORY} and more</p></body></html>")
    (folder / ".hidden.txt").write_text(STORY)
    (folder / "notes.md").write_text(STORY)
    (folder / "b" / "d.txt.gz").write_bytes(gzip.compress((STORY + " again").encode()))
    expected_ids = {"a.txt", "b/c.html", "b/d.txt.gz"}
    if shutil.which("zstd"):
        subprocess.run(["zstd", "-q", "-o", str(folder / "e.eml.zst")], input=(STORY + " once more").encode(), check=True)
        expected_ids.add("e.eml.zst")
    else:
        print("skipping the .zst document: no zstd command here")
    result = megashingle.spark.cluster_files(spark, [str(folder)])
    got = {r.doc_id: (r.cluster_id, str(r.cluster_size)) for r in result.table.collect()}
    expected = {k: (v[0], v[1]) for k, v in _cli_rows(cli, folder).items()}
    assert got == expected
    assert set(got) == expected_ids
    assert result.inputs.ignored == 1


def test_a_folder_of_documents_and_parquet_files_reads_both_as_the_command(spark, cli, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = tmp_path / "mixed"
    folder.mkdir()
    (folder / "a.txt").write_text(STORY)
    (folder / "b.html").write_text(f"<html><body><p>{STORY} and more</p></body></html>")
    table = pa.table({"id": ["p1", "p2"], "text": [STORY + " and local shop owners", "a recipe for bread"]})
    pq.write_table(table, folder / "rows.parquet")
    result = megashingle.spark.cluster_files(spark, [str(folder)])
    got = {r.doc_id: (r.cluster_id, str(r.cluster_size)) for r in result.table.collect()}
    expected = {k: (v[0], v[1]) for k, v in _cli_rows(cli, folder).items()}
    assert set(got) == {"a.txt", "b.html", "p1", "p2"}
    assert got == expected


def test_a_remote_tsv_is_read_separated_by_tabs(spark, tmp_path, monkeypatch):
    tsv = tmp_path / "docs.tsv"
    tsv.write_text(f"id\ttext\nt1\t{STORY}\nt2\t{STORY} and local shop owners\n", encoding="utf-8")
    # Spark's own readers read remote files; a local path stands for one here.
    monkeypatch.setattr(megashingle.spark.inputs, "_is_remote", lambda path: path.endswith(".tsv"))
    result = megashingle.spark.cluster_files(spark, [str(tsv)])
    got = {r.doc_id: r.cluster_id for r in result.table.collect()}
    assert got == {"t1": "t1", "t2": "t1"}


def test_parquet_input_and_nulls_are_counted(spark, tmp_path, capfd):
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({"id": ["a", None, "c", "d"], "text": [STORY, STORY, None, STORY + " and more"]})
    pq.write_table(table, tmp_path / "docs.parquet")
    result = megashingle.spark.cluster_files(spark, [str(tmp_path / "docs.parquet")])
    got = sorted(r.doc_id for r in result.table.collect())
    assert got == ["a", "d"]
    assert result.census.skipped == 2
    err = capfd.readouterr().err
    assert "null id in `id`" in err and "null text in `text`" in err and "docs.parquet, row 2" in err


def test_repeated_id_keeps_the_commands_record(spark, cli, tmp_path, capfd):
    first = tmp_path / "one.csv"
    second = tmp_path / "two.jsonl"
    with first.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "text"])
        w.writerow(["x", STORY])
        w.writerow(["y", "a recipe for bread with flour water salt and yeast baked in a hot oven"])
        w.writerow(["x", "something else entirely about the weather in the mountains this weekend"])
    import json

    second.write_text(json.dumps({"id": "y", "text": STORY + " and local shop owners"}) + "\n")
    code, err = _main(capfd, "--input", first, "--input", second, "--output", tmp_path / "out")
    assert code == 1, err  # finished, with records skipped: as the command exits
    _one_clean_line(err, f'{second}:1: duplicate id "y", first seen at {first}:3')
    assert f'{first}:4: duplicate id "x", first seen at {first}:2' in err
    assert "2 documents in 2 clusters (0 clusters of 2 or more hold 0 documents); 0 too short to compare; 2 records skipped (2 for a repeated id)" in err
    got = _job_rows(tmp_path / "out")
    assert got == _cli_rows(cli, first, second)


def _cli_warnings(cli, *args):
    """The command's reports of records skipped, without their ``warning: `` prefix."""
    done = subprocess.run([str(cli), "cluster", *map(str, args), "-q"], capture_output=True, text=True)
    assert done.returncode in (0, 1), done.stderr
    return [line[len("warning: ") :] for line in done.stderr.splitlines() if line.startswith("warning: ")]


def test_archives_in_a_folder_give_a_document_a_record_as_the_command(spark, cli, tmp_path):
    import gzip

    folder = tmp_path / "crawl"
    folder.mkdir()
    texts = [STORY, STORY + " and local shop owners", "a recipe for bread with flour water salt and yeast baked in a hot oven"]
    pages = [warc_resource(f"http://a/{i}", "2025-06-03T10:00:00Z", text) for i, text in enumerate(texts)]
    (folder / "c.warc.gz").write_bytes(b"".join(gzip.compress(page) for page in pages))
    mbox = (
        f"From a@b Tue Jun  3 10:00:00 2025\nMessage-ID: <one@b>\nSubject: one\n\n{STORY} today\n\n"
        f"From a@b Tue Jun  3 11:00:00 2025\nSubject: two\n\n{STORY} again today\n"
    )
    (folder / "list.mbox.gz").write_bytes(gzip.compress(mbox.encode()))
    (folder / "a.txt").write_text(STORY)
    result = megashingle.spark.cluster_files(spark, [str(folder)])
    got = {r.doc_id: (r.cluster_id, str(r.cluster_size)) for r in result.table.collect()}
    expected = {k: (v[0], v[1]) for k, v in _cli_rows(cli, folder).items()}
    assert set(got) == {"a.txt", "http://a/0", "http://a/1", "http://a/2", "one@b", "list.mbox.gz#2"}
    assert got == expected
    assert result.census.skipped == 0 and result.census.duplicates == []


@pytest.mark.parametrize("newer_first", [False, True])
def test_a_repeated_warc_uri_keeps_the_newer_record_as_the_command(spark, cli, tmp_path, newer_first):
    old = warc_resource("http://a/x", "2025-06-03T10:00:00Z", "a recipe for bread with flour water salt and yeast baked in a hot oven")
    new = warc_resource("http://a/x", "2025-06-04T10:00:00Z", STORY + " and local shop owners")
    folder = tmp_path / "crawl"
    folder.mkdir()
    (folder / "c.warc").write_bytes(new + old if newer_first else old + new)
    (folder / "b.txt").write_text(STORY)
    result = megashingle.spark.cluster_files(spark, [str(folder)])
    got = {r.doc_id: (r.cluster_id, str(r.cluster_size)) for r in result.table.collect()}
    expected = {k: (v[0], v[1]) for k, v in _cli_rows(cli, folder).items()}
    # The newer text is kept: it is b.txt's story, so the two make one story.
    assert got == {"b.txt": ("b.txt", "2"), "http://a/x": ("b.txt", "2")}
    assert got == expected
    [report] = result.census.duplicates
    assert [report] == _cli_warnings(cli, folder)
    second_at = len(new if newer_first else old)
    if newer_first:
        assert report.startswith(f'{folder / "c.warc"}@{second_at}: duplicate id "http://a/x", first seen at {folder / "c.warc"}@0;')
    else:
        assert report.startswith(
            f'{folder / "c.warc"}@0: duplicate id "http://a/x", seen again at {folder / "c.warc"}@{second_at} '
            "with a newer date, which is kept;"
        )


def test_a_damaged_gzip_member_of_a_warc_is_reported_and_the_next_read_as_the_command(spark, cli, tmp_path):
    texts = [STORY, STORY + " and local shop owners", STORY + " on monday morning"]
    data, damaged_at, next_at = warc_gz_with_a_damaged_member(texts)
    path = tmp_path / "crawl.warc.gz"
    path.write_bytes(data)
    result = megashingle.spark.cluster_files(spark, [str(path)])
    got = {r.doc_id: (r.cluster_id, str(r.cluster_size)) for r in result.table.collect()}
    expected = {k: (v[0], v[1]) for k, v in _cli_rows(cli, path).items()}
    assert got == {"http://a/1": ("http://a/1", "2"), "http://a/3": ("http://a/1", "2")}
    assert got == expected
    assert result.census.skipped == 1
    [report] = result.census.warnings
    assert [report] == _cli_warnings(cli, path)
    assert report.startswith(f"{path}: the gzip member at byte {damaged_at} cannot be decompressed (")
    assert f"reading goes on at the next member, at byte {next_at};" in report


def test_missing_column_lists_the_columns(spark, tmp_path, capfd):
    src = tmp_path / "docs.jsonl"
    src.write_text('{"id": "a", "body": "text"}\n')
    code, err = _main(capfd, "--input", src, "--output", tmp_path / "o")
    assert code == 2
    _one_clean_line(err, f"{src}: no field `text` (the text field); fields found: body, id")
    csv_src = tmp_path / "docs.csv"
    csv_src.write_text("key,body\nk,text\n")
    code, err = _main(capfd, "--input", csv_src, "--output", tmp_path / "o")
    assert code == 2
    _one_clean_line(err, f"{csv_src}: no column `id` (the id column); columns found: key, body")
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"key": ["a"], "body": ["t"]}), tmp_path / "d.parquet")
    code, err = _main(capfd, "--input", tmp_path / "d.parquet", "--output", tmp_path / "o")
    assert code == 2
    _one_clean_line(err, "no column `id` (the id column); columns found: key, body")
    assert not os.path.exists(tmp_path / "o")


def test_empty_input_is_refused(spark, tmp_path, capfd):
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    code, err = _main(capfd, "--input", empty, "--output", tmp_path / "o")
    assert code == 2
    _one_clean_line(err, f"{empty}: empty input: no header row and no records")
    header = tmp_path / "header.csv"
    header.write_text("id,text\n")
    code, err = _main(capfd, "--input", header, "--output", tmp_path / "o")
    assert code == 2
    _one_clean_line(err, f"no documents in {header}: nothing to cluster, nothing written")
    folder = tmp_path / "nothing"
    folder.mkdir()
    (folder / "a.md").write_text("x")
    code, err = _main(capfd, "--input", folder, "--output", tmp_path / "o")
    assert code == 2
    _one_clean_line(err, f"no documents in {folder}: nothing to cluster, nothing written (1 files left out")
    assert not os.path.exists(tmp_path / "o")


def test_existing_output_needs_overwrite(spark, tmp_path, capfd):
    src = tmp_path / "docs.csv"
    src.write_text(f"id,text\na,{STORY}\n")
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("good results")
    code, err = _main(capfd, "--input", src, "--output", out)
    assert code == 2
    _one_clean_line(err, f"{out}: the output folder exists; give another --output or --overwrite to replace it")
    assert (out / "keep.txt").read_text() == "good results"
    code, err = _main(capfd, "--input", src, "--output", out, "--overwrite")
    assert code == 0, err
    assert not (out / "keep.txt").exists() and _job_rows(out) == {"a": ("a", "1", "1.0000", "ok")}


def test_unreadable_and_missing_paths(tmp_path, capfd):
    code, err = _main(capfd, "--input", tmp_path / "missing.csv", "--output", tmp_path / "o")
    assert code == 2
    _one_clean_line(err, f"{tmp_path / 'missing.csv'}: cannot open: No such file or directory")
    locked = tmp_path / "locked.csv"
    locked.write_text("id,text\n")
    locked.chmod(0)
    try:
        if os.access(locked, os.R_OK):
            print("skipping the unreadable-file check: running as a user who reads every file")
        else:
            code, err = _main(capfd, "--input", locked, "--output", tmp_path / "o")
            assert code == 2
            _one_clean_line(err, f"{locked}: cannot open: Permission denied")
    finally:
        locked.chmod(0o644)
    code, err = _main(capfd, "--input", "x.csv", "--output", tmp_path / "o", "--set", "nokey")
    assert code == 2
    _one_clean_line(err, "expected KEY=VALUE")


def test_failure_prints_no_trace_without_debug(tmp_path):
    # A reader's error raised on an executor, in a session of the job's own: one line.
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "body": "x"}\n')
    done = _run("--input", bad, "--output", tmp_path / "o", "--master", "local[2]")
    assert done.returncode == 2
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert lines == [f"megashingle.spark: error: {bad}: no field `text` (the text field); fields found: body, id"], done.stderr
