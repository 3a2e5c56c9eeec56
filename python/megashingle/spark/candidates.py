"""Sketches and candidate pairs: each document sketched from its kept sets (a packed sketch, its
minima's low bytes and its candidate keys), pairs of document numbers sharing a key under the
library's bucket rule (``ALL_PAIRS_BUCKET``, a star past it, none past ``cluster.max-bucket``),
and pairs filtered by verification's prefilter or verified one by one, each rule the library's.
"""

from __future__ import annotations

from typing import Iterator

import numpy as np

import megashingle
from megashingle import Config
from megashingle._megashingle import ALL_PAIRS_BUCKET

from .common import _binary_buffers
from .ranges import _by_range_schema, _by_ranges, _distinct_pairs, _gathered, _range_of, _range_starts, _spread


def _low_bytes(offsets: np.ndarray, data: np.ndarray, minima: int):
    """The low byte of each of the first ``minima`` minima of packed sketches (the library's
    ``packed_low_bytes``), ``minima`` bytes a sketch: a binary column."""
    import pyarrow as pa

    n = len(offsets) - 1
    low = megashingle._megashingle.packed_low_bytes(offsets, data, minima)
    value_offsets = (np.arange(n + 1, dtype=np.int32) * minima).astype(np.int32)
    return pa.BinaryArray.from_buffers(pa.binary(), n, [None, pa.py_buffer(value_offsets), pa.py_buffer(low)])


def _sketch_schema():
    from pyspark.sql import types as T

    return T.StructType(
        [
            T.StructField("num", T.LongType(), False),
            T.StructField("doc_id", T.StringType(), False),
            T.StructField("comparable", T.BooleanType(), False),
            T.StructField("sketch", T.BinaryType(), False),
            T.StructField("low_bytes", T.BinaryType(), False),
            T.StructField("keys", T.ArrayType(T.LongType(), False), False),
        ]
    )


def _sketches(documents, config_toml: str, boilerplate: np.ndarray, with_sets: bool = True, spread=None):
    """Each document's number, id, packed sketch and candidate keys, made from its read sets
    without the shingles of ``boilerplate`` (sent with the function; a document kept whole
    leaves out those of ``spread``); without its shingle set (its size kept) unless
    ``with_sets``, for estimated verification."""
    import pyarrow as pa

    list_of = lambda t: pa.list_(pa.field("element", t, False))  # noqa: E731
    arrow_schema = pa.schema(
        [
            pa.field("num", pa.int64(), False),
            pa.field("doc_id", pa.string(), False),
            pa.field("comparable", pa.bool_(), False),
            pa.field("sketch", pa.binary(), False),
            pa.field("low_bytes", pa.binary(), False),
            pa.field("keys", list_of(pa.int64()), False),
        ]
    )
    minima = int(megashingle._config_from_toml(config_toml).get("signature.minima"))

    def sketch(batches: Iterator) -> Iterator:
        import pyarrow as pa

        sketcher = megashingle.Sketcher(
            megashingle._config_from_toml(config_toml),
            boilerplate=boilerplate,
            threads=1,
            spread=spread,
        )
        for batch in batches:
            if batch.num_rows == 0:
                continue
            offsets, data, keys, key_offsets, comparable = sketcher._inner.sketch_sets_packed(
                *_binary_buffers(batch.column("sets")), with_sets
            )
            yield pa.RecordBatch.from_arrays(
                [
                    batch.column("num"),
                    batch.column("doc_id").cast(pa.string()),
                    pa.array(comparable),
                    pa.BinaryArray.from_buffers(
                        pa.binary(), len(offsets) - 1, [None, pa.py_buffer(offsets), pa.py_buffer(data)]
                    ),
                    _low_bytes(offsets, data, minima),
                    pa.ListArray.from_arrays(pa.array(key_offsets.astype(np.int32)), pa.array(keys.view(np.int64))),
                ],
                schema=arrow_schema,
            )

    return documents.select("num", "doc_id", "sets").mapInArrow(sketch, _sketch_schema())


def _candidate_pairs(sketches, max_bucket: int):
    """Distinct pairs (a < b) of document numbers sharing a candidate key, with the bucket
    rules of the library: all pairs up to ``ALL_PAIRS_BUCKET`` documents, a star from the
    document with the smallest id up to ``max_bucket``, none past it; kept (persisted), with
    their count.

    Each Arrow batch of sketches sends its (key, number) entries a range of the key space a
    row (``_by_ranges``). Where a range arrives its buckets are formed in numpy: a small
    bucket's pairs are made there; a large bucket's documents are joined with their ids to find
    its star's centre. The pairs go on, a range of their first document a row, to the task
    that keeps each pair once."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    starts = _range_starts(sketches.sparkSession)
    count = len(starts)
    rows_schema = T.StructType(_by_range_schema().fields + [T.StructField("large", T.BooleanType(), False)])

    def entries(batches: Iterator) -> Iterator:
        import pyarrow.compute as pc

        for batch in batches:
            keys = batch.column("keys")
            flat = keys.flatten().to_numpy().view(np.uint64)
            nums = batch.column("num").to_numpy()[pc.list_parent_indices(keys).to_numpy()]
            ranges = _range_of((flat >> np.uint64(32)).astype(np.uint32), starts)
            yield _by_ranges(ranges, count, flat, nums)

    def pair_rows(a: np.ndarray, b: np.ndarray):
        """Pairs as rows of ``rows_schema``, a row a range of their first document."""
        import pyarrow as pa

        rows = _by_ranges(_range_of(_spread(a), starts), count, a, b)
        return rows.append_column("large", pa.array(np.zeros(rows.num_rows, bool)))

    def buckets(batches: Iterator) -> Iterator:
        import pyarrow as pa

        gathered = _gathered(batches, np.int64, np.uint64)
        if gathered is None:
            return
        small_a, small_b, large_keys, large_nums = _bucket_pairs(*gathered, max_bucket)
        yield pair_rows(small_a, small_b)
        if len(large_keys):
            yield pa.RecordBatch.from_arrays(
                [
                    pa.array([-1], pa.int32()),
                    pa.array([large_keys.tobytes()]),
                    pa.array([large_nums.tobytes()]),
                    pa.array([True]),
                ],
                names=["range", "keys", "values", "large"],
            )

    def members(batches: Iterator) -> Iterator:
        import pyarrow as pa

        gathered = _gathered(batches, np.int64, np.uint64)
        if gathered is not None:
            keys, nums = gathered
            yield pa.RecordBatch.from_arrays([pa.array(keys.view(np.int64)), pa.array(nums)], names=["key", "num"])

    def hub_rows(batches: Iterator) -> Iterator:
        for batch in batches:
            yield pair_rows(batch.column("a").to_numpy(), batch.column("b").to_numpy())

    def distinct(batches: Iterator) -> Iterator:
        import pyarrow as pa

        gathered = _gathered(batches, np.int64, np.int64)
        if gathered is not None:
            a, b = _distinct_pairs(*gathered)
            yield pa.RecordBatch.from_arrays([pa.array(a), pa.array(b)], names=["a", "b"])

    long = lambda *names: T.StructType([T.StructField(n, T.LongType(), False) for n in names])  # noqa: E731
    formed = (
        sketches.where("comparable")
        .select("num", "keys")
        .mapInArrow(entries, _by_range_schema())
        .repartition(count, "range")
        .mapInArrow(buckets, rows_schema)
        .persist()
    )
    large = formed.where("large").mapInArrow(members, long("key", "num"))
    hubs = (
        large.join(sketches.select("num", "doc_id"), "num")
        .groupBy("key")
        .agg(F.min(F.struct("doc_id", "num")).alias("hub"), F.collect_list("num").alias("docs"))
        .select(F.col("hub.num").alias("hub"), F.explode("docs").alias("other"))
        .where(F.col("hub") != F.col("other"))
        .select(F.least("hub", "other").alias("a"), F.greatest("hub", "other").alias("b"))
        .mapInArrow(hub_rows, rows_schema)
    )
    pairs = (
        formed.where(~F.col("large"))
        .unionByName(hubs)
        .repartition(count, "range")
        .mapInArrow(distinct, long("a", "b"))
        .persist()
    )
    n = pairs.count()
    formed.unpersist()
    return pairs, n


def _bucket_pairs(keys: np.ndarray, nums: np.ndarray, max_bucket: int):
    """The buckets of (key, document number) entries: the pairs (a < b) of every bucket of 2
    to ``ALL_PAIRS_BUCKET`` documents, and the entries of the buckets larger than that up to
    ``max_bucket`` (keys and numbers), whose star needs the documents' ids."""
    keys, nums = _distinct_pairs(keys, nums)
    first = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]]) if len(keys) else np.zeros(0, np.intp)
    sizes = np.diff(np.append(first, len(keys)))
    a, b = [nums[:0]], [nums[:0]]
    for size in range(2, min(ALL_PAIRS_BUCKET, max_bucket) + 1):
        at = first[sizes == size]
        if len(at):
            i, j = np.triu_indices(size, 1)
            a.append(nums[at[:, None] + i].ravel())
            b.append(nums[at[:, None] + j].ravel())
    large = np.repeat((sizes > ALL_PAIRS_BUCKET) & (sizes <= max_bucket), sizes)
    return np.concatenate(a), np.concatenate(b), keys[large], nums[large]


def _verified_links(pairs, placed_sketches, config_toml: str):
    """The pairs that link, verified where the first document's sketch is: the second's
    sketch is sent to it (one sketch per pair moves; the partitioned sketches do not)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    sk = placed_sketches.select("num", "sketch")
    with_b = pairs.join(sk.select(F.col("num").alias("b"), F.col("sketch").alias("sketch_b")), "b")
    both = with_b.join(sk.select(F.col("num").alias("a"), F.col("sketch").alias("sketch_a")), "a")

    def verify(batches: Iterator) -> Iterator:
        import pyarrow as pa

        config = megashingle._config_from_toml(config_toml)
        for batch in batches:
            buffers = []
            for name in ("sketch_a", "sketch_b"):
                column = batch.column(name)
                _, offs, data = column.buffers()
                offsets = np.frombuffer(offs, np.int32)[column.offset : column.offset + len(column) + 1]
                buffers += [offsets, np.frombuffer(data, np.uint8) if data is not None else np.zeros(0, np.uint8)]
            keep = megashingle._megashingle.verify_packed(config, *buffers)
            mask = pa.array(keep)
            yield pa.RecordBatch.from_arrays(
                [batch.column("a").filter(mask), batch.column("b").filter(mask)], names=["a", "b"]
            )

    schema = T.StructType([T.StructField("a", T.LongType(), False), T.StructField("b", T.LongType(), False)])
    return both.select("a", "b", "sketch_a", "sketch_b").mapInArrow(verify, schema)


def _prefilter(config: Config) -> float:
    """The estimated Jaccard below which verification rejects a pair before anything else
    (the library's ``Verifier::prefilter``: half the weakest link in force)."""
    return megashingle._megashingle.verification_prefilter(config)


def _may_link(pairs, placed, prefilter: float):
    """The pairs (a, b) whose minima's low bytes agree in at least ``prefilter`` of their
    places: a superset of the pairs whose minima agree that often, which verification can
    pass (one byte per minimum moves per pair)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    low = placed.select("num", "low_bytes")
    with_b = pairs.join(low.select(F.col("num").alias("b"), F.col("low_bytes").alias("low_b")), "b")
    both = with_b.join(low.select(F.col("num").alias("a"), F.col("low_bytes").alias("low_a")), "a")

    def estimate(batches: Iterator) -> Iterator:
        import pyarrow as pa

        for batch in batches:
            if batch.num_rows == 0:
                continue
            x = _fixed_bytes(batch.column("low_a"))
            y = _fixed_bytes(batch.column("low_b"))
            agree = (x == y).mean(axis=1) if x.shape[1] else np.zeros(len(x))
            mask = pa.array(agree >= prefilter)
            yield pa.RecordBatch.from_arrays(
                [batch.column("a").filter(mask), batch.column("b").filter(mask)], names=["a", "b"]
            )

    schema = T.StructType([T.StructField("a", T.LongType(), False), T.StructField("b", T.LongType(), False)])
    return both.select("a", "b", "low_a", "low_b").mapInArrow(estimate, schema)


def _fixed_bytes(column) -> np.ndarray:
    """A binary column of equal-length values as a 2-D uint8 array (one row a value)."""
    offsets, data = _binary_buffers(column)
    width = int(offsets[1] - offsets[0]) if len(offsets) > 1 else 0
    return (
        data[offsets[0] : offsets[0] + width * (len(offsets) - 1)].reshape(-1, width)
        if width
        else np.zeros((len(offsets) - 1, 0), np.uint8)
    )
