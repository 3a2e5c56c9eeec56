"""Pass 2 and 3, boilerplate: document frequency (each batch's page sets counted, the counts
summed a range of the key space at a time) and story frequency (the frequent shingles found
in the main sets of documents of at least ``boilerplate.min-stories`` stories of a first
clustering, and those of at least ``boilerplate.min-documents`` stories, which a document
kept whole leaves out too; and the common shingles most of whose documents are one story's,
which are its text, not boilerplate).
"""

from __future__ import annotations

from typing import Iterator, Optional, Tuple

import numpy as np

import megashingle

from .common import _binary_buffers, _shipped, _to_arrow
from .ranges import _by_range, _by_range_schema, _gathered, _range_starts


def _page_counts(documents, at_least: int) -> tuple:
    """The shingles in the page sets of at least ``at_least`` documents and their counts,
    sorted by shingle. Each Arrow batch of read sets is counted in numpy and its counts go to
    the shuffle a range of the key space a row (``_by_range``); each range's rows meet in one
    task, which sums them and keeps the shingles counted ``at_least`` times. The result (far
    smaller than the corpus) comes to the driver, to be sent to the executors with the
    functions that use it."""
    from pyspark.sql import types as T

    starts = _range_starts(documents.sparkSession)

    def count(batches: Iterator) -> Iterator:
        for batch in batches:
            values = megashingle._megashingle.packed_page_values(*_binary_buffers(batch.column("sets")))
            keys, counts = np.unique(values, return_counts=True)
            yield _by_range(keys, counts.astype(np.uint32), starts)

    def total(batches: Iterator) -> Iterator:
        import pyarrow as pa

        gathered = _gathered(batches, np.uint32)
        if gathered is None:
            return
        shingle, n = _summed(*gathered)
        keep = n >= at_least
        yield pa.RecordBatch.from_arrays(
            [pa.array(shingle[keep].view(np.int32)), pa.array(n[keep])], names=["shingle", "n"]
        )

    schema = T.StructType([T.StructField("shingle", T.IntegerType()), T.StructField("n", T.LongType())])
    common = _to_arrow(
        documents.select("sets")
        .mapInArrow(count, _by_range_schema())
        .repartition(len(starts), "range")
        .mapInArrow(total, schema)
    )
    shingles = common.column("shingle").to_numpy().astype(np.int32).view(np.uint32)
    counts = common.column("n").to_numpy().astype(np.int64)
    order = np.argsort(shingles, kind="stable")
    return shingles[order], counts[order]


def _summed(keys: np.ndarray, counts: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Each distinct key of ``keys``, sorted, and the sum of its ``counts`` (as int64)."""
    order = np.argsort(keys, kind="stable")
    keys, counts = keys[order], counts[order].astype(np.int64)
    first = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]]) if len(keys) else np.zeros(0, np.intp)
    return keys[first], np.add.reduceat(counts, first) if len(first) else counts[:0]


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


def _story_frequency(
    spark, documents, frequent: np.ndarray, common: np.ndarray, components, min_stories: int, kept_whole: int
) -> tuple:
    """How the documents that hold each shingle of ``frequent`` (sent to the executors with the
    functions) fall into stories, and what follows, as three sorted arrays: the shingles found
    in the main sets of documents of at least ``min_stories`` stories (boilerplate); of them,
    those of at least ``kept_whole`` stories, which a document kept whole leaves out too; and
    the shingles of ``common`` (the boilerplate by document frequency, ``frequent``'s
    shingles where the mask is true) most of whose documents are one story's, found across
    fewer than ``kept_whole`` stories: that story's own text, copied, which is not
    boilerplate. A story is a connected component of the first clustering's links (a
    document in no link is a story of its own). Each batch sends its distinct (shingle,
    story) pairs with their documents a range of shingles a row (``_by_range``); each
    shingle's stories are counted where its range arrives. ``components`` are sorted arrays
    (num, root) on the driver, sent with the functions too (on Spark Connect, when they are
    small: see ``_shipped``), or a DataFrame (num, root)."""
    import pyarrow as pa
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    starts = _range_starts(spark)
    rows_schema = _by_range_schema()

    def distinct_rows(story: np.ndarray, sets) -> "pa.RecordBatch":
        values, owner = _main_frequent(sets, frequent)
        shingle, story, n = _pair_counts(values, story[owner].astype(np.int64))
        held = np.empty(len(shingle), _STORY_DOCUMENTS)
        held["story"], held["documents"] = story, n
        return _by_range(shingle, held, starts)

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
        gathered = _gathered(batches, _STORY_DOCUMENTS)
        if gathered is None:
            return
        keys, held = gathered
        # Each (shingle, story) pair's documents summed over the batches, then each shingle's.
        shingle, _, n = _pair_counts(keys, held["story"], held["documents"].astype(np.int64))
        first = np.flatnonzero(np.r_[True, shingle[1:] != shingle[:-1]])
        keys = shingle[first]
        stories = np.diff(np.append(first, len(shingle)))
        documents = np.add.reduceat(n, first)
        largest = np.maximum.reduceat(n, first)
        is_common = common[np.searchsorted(frequent, keys)]
        one_story = (largest * 2 > documents) & (stories < kept_whole)
        spread = ~one_story & (stories >= min_stories)
        kept = spread | (one_story & is_common)
        yield pa.RecordBatch.from_arrays(
            [
                pa.array(keys[kept].view(np.int32)),
                pa.array((stories >= kept_whole)[kept]),
                pa.array(one_story[kept]),
            ],
            names=["shingle", "kept_whole", "one_story"],
        )

    found = _to_arrow(
        story_rows.repartition(len(starts), "range").mapInArrow(
            count,
            T.StructType(
                [
                    T.StructField("shingle", T.IntegerType(), False),
                    T.StructField("kept_whole", T.BooleanType(), False),
                    T.StructField("one_story", T.BooleanType(), False),
                ]
            ),
        )
    )
    shingles = found.column("shingle").to_numpy().astype(np.int32).view(np.uint32)
    whole = found.column("kept_whole").to_numpy(zero_copy_only=False).astype(bool)
    one_story = found.column("one_story").to_numpy(zero_copy_only=False).astype(bool)
    order = np.argsort(shingles, kind="stable")
    shingles, whole, one_story = shingles[order], whole[order], one_story[order]
    return shingles[~one_story], shingles[~one_story & whole], shingles[one_story]


# A (story, documents) pair as the story frequency's shuffle carries it beside a shingle.
_STORY_DOCUMENTS = np.dtype([("story", "<i8"), ("documents", "<u4")])


def _pair_counts(x: np.ndarray, y: np.ndarray, n: Optional[np.ndarray] = None) -> tuple:
    """The distinct (x, y) pairs of two aligned arrays, sorted by x, then y, and how many times
    each is found (the sum of its ``n``, as int64, when given)."""
    order = np.lexsort((y, x))
    x, y = x[order], y[order]
    first = np.flatnonzero(np.r_[True, (x[1:] != x[:-1]) | (y[1:] != y[:-1])]) if len(x) else np.zeros(0, np.intp)
    if n is None:
        counts = np.diff(np.append(first, len(x))).astype(np.int64)
    else:
        counts = np.add.reduceat(n[order], first) if len(first) else np.zeros(0, np.int64)
    return x[first], y[first], counts
