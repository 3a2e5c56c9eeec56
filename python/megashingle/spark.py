"""megashingle on Apache Spark: the stories of a corpus larger than one machine.

``cluster(df)`` runs the stages as Spark does them at scale, each over the Rust library:

1. document frequency: each partition's page shingle sets (``Sketcher.page_sets``) counted
   per partition, summed by shingle (a shuffle of distinct shingles), and the shingles in at
   least ``boilerplate.min-documents`` documents broadcast to the executors;
2. story frequency (``boilerplate.min-stories``), as the command finds it: a first pass of
   stages 3 to 7 with the document-frequency boilerplate, pairs verified from the minima,
   gives provisional stories; the (shingle, story) pairs of the sketches' sets, for the
   shingles of ``min-stories`` pages or more, are counted by distinct story; those in
   ``min-stories`` stories join the boilerplate, broadcast again;
3. sketches per partition with ``mapInArrow`` (minima, candidate keys, shingle set, lead);
4. candidate pairs: the candidate keys exploded and grouped by key, with the library's bucket
   rules (all pairs up to 16 documents, a star from the first one up to
   ``cluster.max-bucket``, none past it);
5. verification of each pair on the executors (``verify_pairs``: the library's check);
6. connected components of the linked pairs with the large-star/small-star iteration
   (Kiveris et al., "Connected Components in MapReduce and Beyond", 2014): no edge list is
   ever collected to the driver;
7. each component with two or more documents is clustered on one executor exactly as the
   command clusters documents (``cluster_group``: joins strongest first with the
   representative check, lone documents attached), giving representatives, sizes and
   similarities.

Run it as ``python -m megashingle.spark --input PATH --output DIR`` (see ``--help``).
"""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Iterator, Optional

import numpy as np

import megashingle
from megashingle import Config

__all__ = ["cluster", "main"]

ALL_PAIRS_BUCKET = 16

log = logging.getLogger("megashingle.spark")


def _phase(frame, name: str) -> None:
    """Names the Spark jobs that follow (in the Spark UI and the event log)."""
    frame.sparkSession.sparkContext.setJobDescription(f"megashingle: {name}")


def _config_toml(config: Optional[Config]) -> str:
    return (config or Config()).to_toml()


def _lists(values: np.ndarray, offsets: np.ndarray):
    import pyarrow as pa

    return pa.ListArray.from_arrays(pa.array(offsets.astype(np.int32)), pa.array(values))


def _rows_of(column) -> list:
    """A Spark array column of an Arrow batch as one uint32 numpy view per row."""
    values = column.values.to_numpy(zero_copy_only=False).view(np.uint32)
    offsets = column.offsets.to_numpy()
    return [values[offsets[i] : offsets[i + 1]] for i in range(len(column))]


def _sketch_schema():
    from pyspark.sql import types as T

    return T.StructType(
        [
            T.StructField("doc_id", T.StringType(), False),
            T.StructField("words", T.IntegerType(), False),
            T.StructField("comparable", T.BooleanType(), False),
            T.StructField("minima", T.ArrayType(T.IntegerType(), False), False),
            T.StructField("keys", T.ArrayType(T.LongType(), False), False),
            T.StructField("shingles", T.ArrayType(T.IntegerType(), False), False),
            T.StructField("lead", T.ArrayType(T.IntegerType(), False), False),
        ]
    )


def _page_counts(docs, config_toml: str, at_least: int) -> tuple:
    """The shingles in the page sets of at least ``at_least`` documents and their counts:
    counted per partition, summed by shingle across the cluster; the result (far smaller
    than the corpus) comes to the driver to be broadcast."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    def count(batches: Iterator) -> Iterator:
        import pyarrow as pa

        sketcher = megashingle.Sketcher(megashingle._config_from_toml(config_toml), threads=1)
        for batch in batches:
            values, _ = sketcher.page_sets(batch.column("text"))
            keys, counts = np.unique(values, return_counts=True)
            yield pa.RecordBatch.from_arrays(
                [pa.array(keys.view(np.int32)), pa.array(counts.astype(np.int64))],
                names=["shingle", "n"],
            )

    schema = T.StructType(
        [T.StructField("shingle", T.IntegerType()), T.StructField("n", T.LongType())]
    )
    common = (
        docs.select("text")
        .mapInArrow(count, schema)
        .groupBy("shingle")
        .agg(F.sum("n").alias("n"))
        .where(F.col("n") >= at_least)
        .collect()
    )
    shingles = np.array([r.shingle for r in common], dtype=np.int32).view(np.uint32)
    counts = np.array([r.n for r in common], dtype=np.int64)
    return shingles, counts


def _spread_across_stories(sketches, stories, frequent_broadcast, min_stories: int) -> np.ndarray:
    """The shingles of ``frequent_broadcast`` (sorted) found in the sets of at least
    ``min_stories`` different stories: each document's set, cut to the frequent shingles on
    the executors, gives (shingle, story) rows, counted by distinct story (Spark's aggregation
    removes repeats within each partition before it shuffles)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    def pairs(batches: Iterator) -> Iterator:
        import pyarrow as pa

        frequent = frequent_broadcast.value
        for batch in batches:
            sets = batch.column("shingles")
            values = sets.values.to_numpy(zero_copy_only=False).view(np.uint32)
            offsets = sets.offsets.to_numpy()
            story = np.repeat(batch.column("story").to_numpy(), np.diff(offsets))
            at = np.searchsorted(frequent, values).clip(max=max(len(frequent) - 1, 0))
            hit = frequent[at] == values if len(frequent) else np.zeros(len(values), bool)
            yield pa.RecordBatch.from_arrays(
                [pa.array(values[hit].view(np.int32)), pa.array(story[hit])],
                names=["shingle", "story"],
            )

    schema = T.StructType(
        [T.StructField("shingle", T.IntegerType()), T.StructField("story", T.LongType())]
    )
    spread = (
        sketches.select("doc_id", "shingles")
        .join(stories, "doc_id")
        .select("shingles", "story")
        .mapInArrow(pairs, schema)
        .groupBy("shingle")
        .agg(F.countDistinct("story").alias("stories"))
        .where(F.col("stories") >= min_stories)
        .select("shingle")
        .collect()
    )
    return np.array([r.shingle for r in spread], dtype=np.int32).view(np.uint32)


def _sketches(docs, config_toml: str, boilerplate_broadcast):
    def sketch(batches: Iterator) -> Iterator:
        import pyarrow as pa

        sketcher = megashingle.Sketcher(
            megashingle._config_from_toml(config_toml),
            boilerplate=boilerplate_broadcast.value,
            threads=1,
        )
        for batch in batches:
            made = sketcher.sketch_batch(batch.column("text"))
            n = len(batch)
            minima = made["minima"]
            yield pa.RecordBatch.from_arrays(
                [
                    batch.column("doc_id"),
                    pa.array(made["words"].astype(np.int32)),
                    pa.array(made["comparable"]),
                    _lists(
                        minima.reshape(-1).view(np.int32),
                        np.arange(n + 1, dtype=np.int64) * minima.shape[1],
                    ),
                    _lists(made["keys"].view(np.int64), made["key_offsets"]),
                    _lists(made["shingles"].view(np.int32), made["shingle_offsets"]),
                    _lists(made["lead"].view(np.int32), made["lead_offsets"]),
                ],
                schema=_sketch_schema_arrow(),
            )

    return docs.mapInArrow(sketch, _sketch_schema())


def _sketch_schema_arrow():
    import pyarrow as pa

    return pa.schema(
        [
            pa.field("doc_id", pa.string(), False),
            pa.field("words", pa.int32(), False),
            pa.field("comparable", pa.bool_(), False),
            pa.field("minima", pa.list_(pa.field("element", pa.int32(), False)), False),
            pa.field("keys", pa.list_(pa.field("element", pa.int64(), False)), False),
            pa.field("shingles", pa.list_(pa.field("element", pa.int32(), False)), False),
            pa.field("lead", pa.list_(pa.field("element", pa.int32(), False)), False),
        ]
    )


def _candidate_pairs(sketches, max_bucket: int):
    """Distinct pairs (a < b, by id) of documents sharing a candidate key, with the bucket
    rules of the library."""
    from pyspark.sql import functions as F

    buckets = (
        sketches.where("comparable")
        .select("doc_id", F.explode("keys").alias("key"))
        .groupBy("key")
        .agg(F.array_sort(F.collect_set("doc_id")).alias("docs"))
        .withColumn("n", F.size("docs"))
        .where((F.col("n") >= 2) & (F.col("n") <= max_bucket))
    )
    small = (
        buckets.where(F.col("n") <= ALL_PAIRS_BUCKET)
        .select("docs", "n", F.posexplode("docs").alias("i", "a"))
        .select("a", F.explode(F.expr("slice(docs, i + 2, n)")).alias("b"))
    )
    large = buckets.where(F.col("n") > ALL_PAIRS_BUCKET).select(
        F.col("docs")[0].alias("a"), F.explode(F.expr("slice(docs, 2, n)")).alias("b")
    )
    return small.unionByName(large).distinct()


def _verified_links(pairs, sketches, config_toml: str):
    """The pairs that link (pass, or may attach a lone document), verified on the executors."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    side = sketches.select("doc_id", "minima", "shingles", "lead", "words")
    a = side.select([F.col(c).alias(f"{c}_a") for c in side.columns])
    b = side.select([F.col(c).alias(f"{c}_b") for c in side.columns])
    joined = pairs.join(a, pairs.a == a.doc_id_a).join(b, pairs.b == b.doc_id_b)
    joined = joined.select(
        "a", "b", "minima_a", "shingles_a", "lead_a", "words_a",
        "minima_b", "shingles_b", "lead_b", "words_b",
    )

    def verify(batches: Iterator) -> Iterator:
        import pyarrow as pa

        config = megashingle._config_from_toml(config_toml)
        for batch in batches:
            col = batch.column
            _, score, weak = megashingle._megashingle.verify_pairs(
                config,
                _rows_of(col("minima_a")), _rows_of(col("shingles_a")),
                _rows_of(col("lead_a")), col("words_a").to_pylist(),
                _rows_of(col("minima_b")), _rows_of(col("shingles_b")),
                _rows_of(col("lead_b")), col("words_b").to_pylist(),
            )
            keep = pa.array(~np.isnan(score) | weak)
            yield pa.RecordBatch.from_arrays(
                [col("a").filter(keep), col("b").filter(keep)], names=["a", "b"]
            )

    schema = T.StructType(
        [T.StructField("a", T.StringType(), False), T.StructField("b", T.StringType(), False)]
    )
    return joined.mapInArrow(verify, schema)


def _components(edges, max_rounds: int = 64, phase: str = ""):
    """Connected components of an undirected edge list (columns a, b: longs): each vertex in
    an edge with its component's smallest vertex, as columns ``node, root``. Large-star and
    small-star rounds alternate until the edges stop changing; nothing is collected but one
    count per round."""
    from pyspark.sql import functions as F

    def large_star(e):
        both = e.select("a", "b").unionByName(e.select(F.col("b").alias("a"), F.col("a").alias("b")))
        m = both.groupBy("a").agg(F.least(F.min("b"), F.first("a")).alias("m"))
        return (
            both.where(F.col("b") > F.col("a"))
            .join(m, "a")
            .select(F.col("b").alias("a"), F.col("m").alias("b"))
            .distinct()
        )

    def small_star(e):
        # Each edge oriented from the larger vertex to the smaller.
        oriented = e.select(F.greatest("a", "b").alias("a"), F.least("a", "b").alias("b")).where(
            F.col("a") != F.col("b")
        )
        m = oriented.groupBy("a").agg(F.min("b").alias("m"))
        linked = oriented.join(m, "a")
        return (
            linked.select(F.col("b").alias("a"), F.col("m").alias("b"))
            .unionByName(linked.select("a", F.col("m").alias("b")))
            .where(F.col("a") != F.col("b"))
            .distinct()
        )

    _phase(edges, f"{phase}candidates and verification")
    current = edges.select("a", "b").where(F.col("a") != F.col("b")).distinct().localCheckpoint()
    _phase(edges, f"{phase}components")
    for _ in range(max_rounds):
        after = small_star(large_star(current)).localCheckpoint()
        changed = after.exceptAll(current).limit(1).count() + current.exceptAll(after).limit(1).count()
        current = after
        if changed == 0:
            break
    else:
        raise RuntimeError(f"connected components did not settle in {max_rounds} rounds")
    # Each edge is now (vertex, root) with root the component's smallest vertex.
    roots = current.select(F.greatest("a", "b").alias("node"), F.least("a", "b").alias("root"))
    root_rows = roots.select(F.col("root").alias("node"), "root")
    return roots.unionByName(root_rows).distinct()


def _place(sketches, components, config_toml: str):
    """Each document's cluster: components clustered on the executors as the command would
    cluster them alone; documents in no link stay alone."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    out_schema = T.StructType(
        [
            T.StructField("doc_id", T.StringType(), False),
            T.StructField("cluster_id", T.StringType(), False),
            T.StructField("cluster_size", T.LongType(), False),
            T.StructField("similarity", T.DoubleType(), True),
            T.StructField("status", T.StringType(), False),
            T.StructField("position", T.LongType(), False),
        ]
    )

    def place(frame):
        import pandas as pd

        config = megashingle._config_from_toml(config_toml)
        ids = list(frame["doc_id"])
        asarray = lambda c: [np.asarray(v, dtype=np.int32).view(np.uint32) for v in frame[c]]
        rows = megashingle._megashingle.cluster_group(
            config, ids, asarray("minima"), asarray("shingles"), asarray("lead"), list(frame["words"])
        )
        members: dict = {}
        for doc, c, _, _ in rows:
            members.setdefault(c, []).append(ids[doc])
        smallest = {c: min(m) for c, m in members.items()}
        seen: dict = {}
        out = []
        for doc, c, size, similarity in rows:
            position = seen.get(c, 0)
            seen[c] = position + 1
            status = "ok" if frame["comparable"].iloc[doc] else "too_short"
            out.append((ids[doc], smallest[c], size, similarity, status, position))
        return pd.DataFrame(out, columns=[f.name for f in out_schema.fields])

    linked = sketches.join(components, "doc_id")
    grouped = linked.groupBy("root").applyInPandas(place, out_schema)
    alone = sketches.join(components, "doc_id", "left_anti").select(
        "doc_id",
        F.col("doc_id").alias("cluster_id"),
        F.lit(1).cast("long").alias("cluster_size"),
        F.when(F.col("comparable"), F.lit(1.0)).alias("similarity"),
        F.when(F.col("comparable"), F.lit("ok")).otherwise(F.lit("too_short")).alias("status"),
        F.lit(0).cast("long").alias("position"),
    )
    return grouped.unionByName(alone)


def _stories(sketches, config: Config, phase: str = ""):
    """Each sketched document's cluster (the columns of ``_place``): candidate pairs, their
    verification, connected components of the links, and each component clustered."""
    from pyspark.sql import functions as F

    config_toml = _config_toml(config)
    pairs = _candidate_pairs(sketches, int(config.get("cluster.max-bucket")))
    links = _verified_links(pairs, sketches, config_toml)
    # Components over numbered documents: longs shuffle cheaper than ids.
    numbers = sketches.select("doc_id").withColumn("num", F.monotonically_increasing_id()).persist()
    na = numbers.select(F.col("doc_id").alias("a"), F.col("num").alias("na"))
    nb = numbers.select(F.col("doc_id").alias("b"), F.col("num").alias("nb"))
    numbered = links.join(na, "a").join(nb, "b").select(F.col("na").alias("a"), F.col("nb").alias("b"))
    components = _components(numbered, phase=phase)
    by_id = components.join(numbers, components.node == numbers.num).select("doc_id", "root")
    return _place(sketches, by_id, config_toml)


def cluster(df, id_col: str = "id", text_col: str = "text", config: Optional[Config] = None, *, ordered: bool = True):
    """Clusters the documents of a Spark DataFrame into stories.

    Returns a DataFrame with the command's columns ``doc_id, cluster_id, cluster_size,
    similarity, status`` (ordered as the command orders its rows when ``ordered``: largest
    cluster first, then by cluster id, the representative first). A repeated id keeps one of
    its documents (which one is not defined, unlike the command, which keeps the first).
    """
    from pyspark.sql import functions as F

    config = config or Config()
    spark = df.sparkSession
    docs = (
        df.select(F.col(id_col).cast("string").alias("doc_id"), F.col(text_col).cast("string").alias("text"))
        .where(F.col("doc_id").isNotNull() & (F.col("doc_id") != ""))
        .fillna({"text": ""})
        .dropDuplicates(["doc_id"])
        .persist()  # read by each pass: kept rather than read and shuffled again
    )
    min_documents = int(config.get("boilerplate.min-documents"))
    min_stories = int(config.get("boilerplate.min-stories"))
    floor = min([n for n in (min_documents, min_stories) if n > 0], default=0)
    _phase(docs, "reading and document frequency")
    shingles, counts = (
        _page_counts(docs, _config_toml(config), floor) if floor > 0 else (np.zeros(0, np.uint32),) * 2
    )
    boilerplate = shingles[counts >= min_documents] if min_documents > 0 else np.zeros(0, np.uint32)
    # Story frequency can only add shingles found in `min-stories` pages that are not
    # boilerplate already.
    frequent = np.sort(
        shingles[(counts >= min_stories) & ((counts < min_documents) | (min_documents == 0))]
    )
    log.info(
        "%d boilerplate shingles by document frequency; %d more in %d pages or more, for story frequency",
        len(boilerplate), len(frequent), min_stories,
    )
    if min_stories > 0 and len(frequent) > 0:
        # The first clustering, as the command makes it: pairs verified from the minima.
        first = config.replace({"cluster.verify": "estimate"})
        sketches = _sketches(docs, _config_toml(first), spark.sparkContext.broadcast(boilerplate)).persist()
        placed = _stories(sketches, first, phase="first clustering: ")
        # A story is named by its representative's id, hashed to 64 bits for the count.
        stories = placed.select("doc_id", F.xxhash64("cluster_id").alias("story"))
        frequent_broadcast = spark.sparkContext.broadcast(frequent)
        _phase(docs, "first clustering: stories; story frequency")
        spread = _spread_across_stories(sketches, stories, frequent_broadcast, min_stories)
        sketches.unpersist()
        frequent_broadcast.unpersist()
        boilerplate = np.union1d(boilerplate, spread)
        log.info("%d boilerplate shingles by story frequency", len(spread))
    sketches = _sketches(docs, _config_toml(config), spark.sparkContext.broadcast(boilerplate)).persist()
    placed = _stories(sketches, config)
    _phase(docs, "stories")
    if ordered:
        placed = placed.orderBy(F.col("cluster_size").desc(), "cluster_id", "position")
    return placed.drop("position")


def _read(spark, path: str, fmt: str, id_col: str, text_col: str):
    if fmt == "csv":
        return spark.read.csv(path, header=True, multiLine=True, escape='"')
    if fmt == "jsonl":
        return spark.read.json(path)
    if fmt == "parquet":
        return spark.read.parquet(path)
    raise ValueError(f"--input-format {fmt}: expected csv, jsonl or parquet")


def _format_of(path: str) -> str:
    lowered = path.lower().rstrip("/")
    for ending, fmt in ((".csv", "csv"), (".jsonl", "jsonl"), (".json", "jsonl"), (".parquet", "parquet")):
        if lowered.endswith(ending):
            return fmt
    return "parquet"


def main(argv: Optional[list] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m megashingle.spark",
        description="Cluster documents into stories on Apache Spark, as `megashingle cluster` does.",
    )
    parser.add_argument("--input", required=True, help="CSV (with a header), JSONL or Parquet: a file or folder")
    parser.add_argument("--output", required=True, help="folder for the result (replaced)")
    parser.add_argument("--master", default=None, help="Spark master URL, e.g. local[2] (default: as spark-submit sets it, else local[*])")
    parser.add_argument("--id-column", default="id")
    parser.add_argument("--text-column", default="text")
    parser.add_argument("--input-format", choices=["csv", "jsonl", "parquet"], default=None, help="default: from the input's name")
    parser.add_argument("--format", choices=["csv", "parquet", "jsonl"], default="csv", help="output format (CSV part files each have a header)")
    parser.add_argument("-c", "--config", default=None, help="pipeline.toml")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override one key, e.g. cluster.min-similarity=0.4")
    args = parser.parse_args(argv)

    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    if not log.handlers:  # what was found, on stderr; other loggers are left as they are
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("megashingle.spark: %(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.INFO)
    try:
        config = Config.from_file(args.config) if args.config else Config()
        for setting in args.set:
            if "=" not in setting:
                raise ValueError(f"--set {setting}: expected KEY=VALUE, e.g. cluster.min-similarity=0.4")
            key, value = setting.split("=", 1)
            config = config.replace({key.strip(): _setting_value(value.strip())})
    except ValueError as e:
        print(f"megashingle.spark: {e}", file=sys.stderr)
        return 2
    owned = SparkSession.getActiveSession() is None
    builder = SparkSession.builder.appName("megashingle").config("spark.ui.showConsoleProgress", "false")
    if args.master:
        builder = builder.master(args.master)
    spark = builder.getOrCreate()
    try:
        fmt = args.input_format or _format_of(args.input)
        df = _read(spark, args.input, fmt, args.id_column, args.text_column)
        missing = [c for c in (args.id_column, args.text_column) if c not in df.columns]
        if missing:
            print(
                f"megashingle.spark: {args.input}: no column {missing[0]!r} (columns: "
                f"{', '.join(df.columns)}); name the columns with --id-column/--text-column",
                file=sys.stderr,
            )
            return 2
        result = cluster(df, args.id_column, args.text_column, config)
        if args.format == "csv":
            result = result.withColumn(
                "similarity", F.when(F.col("similarity").isNotNull(), F.format_string("%.4f", "similarity"))
            )
            result.write.mode("overwrite").csv(args.output, header=True, emptyValue="", nullValue="")
        elif args.format == "jsonl":
            result.write.mode("overwrite").json(args.output)
        else:
            result.write.mode("overwrite").parquet(args.output)
    finally:
        if owned:
            spark.stop()
    return 0


def _setting_value(text: str):
    """A --set value as the setting's type: bool, int, float, a list (TOML), else a string."""
    if text in ("true", "false"):
        return text == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    if text.startswith("["):
        import json

        try:
            return json.loads(text)
        except ValueError:
            pass
    return text.strip('"')


if __name__ == "__main__":
    sys.exit(main())
