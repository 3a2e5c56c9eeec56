"""The Spark job in local[2]: its stories against the package's (which are the command's),
on a small corpus and on the dev benchmark (pairwise F1), and the command line."""

import csv
import glob
import itertools
import os
import shutil
import subprocess
import sys
from collections import defaultdict

import pytest

import megashingle
import megashingle.spark  # noqa: F401  (the submodule, for megashingle.spark.cluster)
from conftest import STORY

pyspark = pytest.importorskip("pyspark", reason="pyspark is not installed")
pytest.importorskip("pandas", reason="pandas is not installed")
pytest.importorskip("pyarrow", reason="pyarrow is not installed")


def _java_missing():
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        return "java is not installed"
    try:
        subprocess.run(["java", "-version"], check=True, capture_output=True, timeout=60)
    except Exception as e:  # noqa: BLE001
        return f"java does not run: {e}"
    return None


@pytest.fixture(scope="module")
def spark():
    reason = _java_missing()
    if reason:
        print(f"skipping the Spark tests: {reason}")
        pytest.skip(reason)
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    session = (
        SparkSession.builder.master("local[2]")
        .appName("megashingle-tests")
        .config("spark.sql.shuffle.partitions", "8")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", "2g")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


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


def test_story_frequency_finds_a_footer_shared_by_stories(spark):
    # Three stories of three pages each, all with the same footer: in 9 pages, too few for
    # document frequency (100), but in 3 stories of the first clustering: boilerplate.
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
    settings = {"boilerplate.min-documents": 100}
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


def test_command_line_writes_csv_with_headers(spark, tmp_path):
    src = tmp_path / "docs.jsonl"
    import json

    with src.open("w") as f:
        for i, text in enumerate([STORY, STORY + " and more", "something else entirely here now"]):
            f.write(json.dumps({"key": f"k{i}", "body": text}) + "\n")
    out = tmp_path / "out"
    code = megashingle.spark.main(
        ["--input", str(src), "--output", str(out), "--master", "local[2]",
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


def test_command_line_errors(tmp_path, capsys, spark):
    bad = megashingle.spark.main(["--input", "x.csv", "--output", str(tmp_path), "--set", "nokey"])
    assert bad == 2
    assert "expected KEY=VALUE" in capsys.readouterr().err
    src = tmp_path / "docs.jsonl"
    src.write_text('{"id": "a", "body": "text"}\n')
    code = megashingle.spark.main(["--input", str(src), "--output", str(tmp_path / "o"), "--master", "local[2]"])
    assert code == 2
    assert "no column 'text'" in capsys.readouterr().err
