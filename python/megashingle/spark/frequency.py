"""Pass 2 and 3, boilerplate: document frequency (each partition's page sets counted and summed
by shingle) and story frequency (the frequent shingles found in the main sets of documents of
at least ``boilerplate.min-stories`` stories of a first clustering).
"""

from __future__ import annotations

from typing import Iterator, Tuple

import numpy as np

import megashingle

from .common import _binary_buffers, _shipped, _to_arrow


def _page_counts(documents, at_least: int) -> tuple:
    """The shingles in the page sets of at least ``at_least`` documents and their counts:
    counted per partition from the read sets, summed by shingle across the cluster; the
    result (far smaller than the corpus) comes to the driver, to be sent to the executors
    with the functions that use it."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    def count(batches: Iterator) -> Iterator:
        import pyarrow as pa

        for batch in batches:
            values = megashingle._megashingle.packed_page_values(*_binary_buffers(batch.column("sets")))
            keys, counts = np.unique(values, return_counts=True)
            yield pa.RecordBatch.from_arrays(
                [pa.array(keys.view(np.int32)), pa.array(counts.astype(np.int64))],
                names=["shingle", "n"],
            )

    schema = T.StructType([T.StructField("shingle", T.IntegerType()), T.StructField("n", T.LongType())])
    common = _to_arrow(
        documents.select("sets")
        .mapInArrow(count, schema)
        .groupBy("shingle")
        .agg(F.sum("n").alias("n"))
        .where(F.col("n") >= at_least)
    )
    shingles = common.column("shingle").to_numpy().astype(np.int32).view(np.uint32)
    counts = common.column("n").to_numpy().astype(np.int64)
    return shingles, counts


def _distinct_pairs(x: np.ndarray, y: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """The distinct (x, y) pairs of two aligned arrays, sorted by x, then y."""
    order = np.lexsort((y, x))
    x, y = x[order], y[order]
    new = np.ones(len(x), bool)
    new[1:] = (x[1:] != x[:-1]) | (y[1:] != y[:-1])
    return x[new], y[new]


def _main_frequent(sets, frequent: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """The shingles of each document's main set (packed sets, see ``_read_sets``) found in the
    sorted array ``frequent``: values, and the index of the document each comes from, sorted by
    value. The values are sorted (each with its document) before they are looked up: in value
    order the look-ups walk ``frequent`` once, where in document order each one misses the
    caches (a million documents' frequent shingles take 9 MB), at less than half the time."""
    values, owner = megashingle._megashingle.packed_main_values(*_binary_buffers(sets))
    if not len(frequent):
        return values[:0], owner[:0]
    # A document's index in its batch fits the low 32 bits beside its 32-bit shingle.
    keyed = np.sort((values.astype(np.uint64) << np.uint64(32)) | owner.astype(np.uint64))
    values = (keyed >> np.uint64(32)).astype(values.dtype)
    owner = (keyed & np.uint64(0xFFFFFFFF)).astype(owner.dtype)
    at = np.searchsorted(frequent, values).clip(max=len(frequent) - 1)
    hit = frequent[at] == values
    return values[hit], owner[hit]


def _story_frequency(spark, documents, frequent: np.ndarray, components, min_stories: int) -> np.ndarray:
    """The shingles of ``frequent`` (sent to the executors with the functions) found in the main sets of documents of at least
    ``min_stories`` stories, where a story is a connected component of the first clustering's
    links (a document in no link is a story of its own). A document's set as the first
    clustering sketched it differs from its main set only by boilerplate, which is not among
    the frequent shingles. Each partition sends its distinct (shingle, story) rows,
    partitioned by shingle, once; each shingle's stories are counted where its rows arrive.
    ``components`` are sorted arrays (num, root) on the driver, sent with the functions too
    (on Spark Connect, when they are small: see ``_shipped``), or a DataFrame (num, root)."""
    import pyarrow as pa
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    partitions = int(spark.conf.get("spark.sql.shuffle.partitions"))
    rows_schema = T.StructType(
        [T.StructField("shingle", T.IntegerType(), False), T.StructField("story", T.LongType(), False)]
    )

    def distinct_rows(story: np.ndarray, sets) -> "pa.RecordBatch":
        values, owner = _main_frequent(sets, frequent)
        shingle, story = _distinct_pairs(values.view(np.int32), story[owner])
        return pa.RecordBatch.from_arrays([pa.array(shingle), pa.array(story)], names=["shingle", "story"])

    if isinstance(components, tuple) and not _shipped(spark, *components):
        from .components import _components_frame

        components = _components_frame(spark, components)
    if isinstance(components, tuple):
        nodes, roots = components

        def rows(batches: Iterator) -> Iterator:
            for batch in batches:
                num = batch.column("num").to_numpy()
                at = np.searchsorted(nodes, num).clip(max=max(len(nodes) - 1, 0))
                story = np.where(nodes[at] == num, roots[at], num) if len(nodes) else num
                yield distinct_rows(story, batch.column("sets"))

        story_rows = documents.select("num", "sets").mapInArrow(rows, rows_schema)
    else:

        def rows(batches: Iterator) -> Iterator:
            for batch in batches:
                yield distinct_rows(batch.column("story").to_numpy(), batch.column("sets"))

        story_rows = (
            documents.select("num", "sets")
            .join(components, "num", "left")
            .select(F.coalesce("root", "num").alias("story"), "sets")
            .mapInArrow(rows, rows_schema)
        )

    def count(batches: Iterator) -> Iterator:
        shingles, stories = [], []
        for batch in batches:
            shingles.append(batch.column("shingle").to_numpy())
            stories.append(batch.column("story").to_numpy())
        if not shingles:
            return
        shingle, _ = _distinct_pairs(np.concatenate(shingles), np.concatenate(stories))
        keys, n = np.unique(shingle, return_counts=True)
        spread = keys[n >= min_stories].astype(np.int32)
        yield pa.RecordBatch.from_arrays([pa.array(spread)], names=["shingle"])

    spread = _to_arrow(
        story_rows.repartition(partitions, "shingle").mapInArrow(
            count, T.StructType([T.StructField("shingle", T.IntegerType(), False)])
        )
    )
    return spread.column("shingle").to_numpy().astype(np.int32).view(np.uint32)
