"""Placement: each group clustered on one executor exactly as the command clusters documents
(``cluster_group_packed``, from its candidate pairs), lone documents alone; each document's
cluster, its place in it and its story (the smallest document number in it); for ``dedup``,
also the record each duplicate was removed for (``dedup_group_packed``: the library's rule,
with the document numbers as the read order and, for ``dedup.keep = "earliest"``, each
document's time).
"""

from __future__ import annotations

from typing import Iterator

import numpy as np

import megashingle
from megashingle import Config

from .common import _config_toml, _phase, _to_arrow
from .components import _components_frame, _groups, _pairs_in_groups


def _place(sketches, components, pairs, config_toml: str, dedup: bool = False, times=None):
    """Each document's cluster, and its story (the smallest document number in it): the
    groups of ``components`` (columns num, root) clustered on the executors, each from its
    candidate pairs (``pairs``: columns root, a, b), as the command clusters them within the
    whole collection; documents in no group stay alone. A group's documents and its pairs
    travel together: one shuffle, partitioned by group. With ``dedup``, three more columns:
    ``duplicate_of`` (the kept record's id for a removed record, else null), ``jaccard`` and
    ``containment`` (with the kept record, for a removed record); ``times`` (columns num,
    time: seconds since 1970, null for none) go with the documents to their group's
    deduplication."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    dedup_fields = _dedup_fields() if dedup else []
    timed = times is not None
    out_schema = T.StructType(
        [
            T.StructField("num", T.LongType(), False),
            T.StructField("doc_id", T.StringType(), False),
            T.StructField("cluster_id", T.StringType(), False),
            T.StructField("cluster_size", T.LongType(), False),
            T.StructField("similarity", T.DoubleType(), True),
            T.StructField("status", T.StringType(), False),
            T.StructField("position", T.LongType(), False),
            T.StructField("story", T.LongType(), False),
        ]
        + dedup_fields
    )

    names = [f.name for f in out_schema.fields]

    def place_groups(table, config) -> "object":
        """Clusters each group (rows of one root, contiguous) of an Arrow table."""
        import pyarrow as pa

        roots = table.column("root").to_numpy()
        nums = table.column("num").to_numpy()
        pair_b = table.column("pair_b").to_numpy()
        doc_ids = table.column("doc_id")
        comparable = table.column("comparable").to_numpy(zero_copy_only=False)
        sketch = table.column("sketch").chunk(0)  # one chunk: the table is combined, never empty
        _, offs, data = sketch.buffers()
        offs = np.frombuffer(offs, np.int32)[sketch.offset : sketch.offset + len(sketch) + 1]
        data = np.frombuffer(data, np.uint8) if data is not None else np.zeros(0, np.uint8)
        change = np.flatnonzero(roots[1:] != roots[:-1]) + 1
        starts = np.concatenate([[0], change])
        ends = np.concatenate([change, [len(roots)]])
        out: dict = {n: [] for n in names}
        for s, e in zip(starts.tolist(), ends.tolist()):
            # A group's documents first (pair_b -1), then its pairs (num, pair_b).
            k = s + int(np.searchsorted(pair_b[s:e], -1, side="right"))
            group_ids = doc_ids.slice(s, k - s).to_pylist()
            group_nums = nums[s:k]
            group = (
                config,
                group_ids,
                (offs[s : k + 1] - offs[s]).astype(np.int32),
                data[offs[s] : offs[k]],
            )
            pairs = (_places(group_nums, nums[k:e]), _places(group_nums, pair_b[k:e]))
            removed: dict = {}
            if dedup:
                # The document numbers are the read order: (file position << 32) | record.
                group_times = table.column("time").slice(s, k - s).to_pylist() if timed else None
                rows, duplicates = megashingle._dedup_group_packed(
                    *group, group_nums.astype(np.int64), *pairs, times=group_times
                )
                removed = {doc: (kept, jaccard, containment) for doc, kept, jaccard, containment in duplicates}
            else:
                rows = megashingle._megashingle.cluster_group_packed(*group, *pairs)
            members: dict = {}
            for doc, c, _, _ in rows:
                members.setdefault(c, []).append(doc)
            smallest = {c: min(group_ids[d] for d in m) for c, m in members.items()}
            story = {c: int(nums[s + np.asarray(m)].min()) for c, m in members.items()}
            seen: dict = {}
            for doc, c, size, similarity in rows:
                position = seen.get(c, 0)
                seen[c] = position + 1
                out["num"].append(int(nums[s + doc]))
                out["doc_id"].append(group_ids[doc])
                out["cluster_id"].append(smallest[c])
                out["cluster_size"].append(size)
                out["similarity"].append(similarity)
                out["status"].append("ok" if comparable[s + doc] else "too_short")
                out["position"].append(position)
                out["story"].append(story[c])
                if dedup:
                    kept, jaccard, containment = removed.get(doc, (None, None, None))
                    out["duplicate_of"].append(None if kept is None else group_ids[kept])
                    out["jaccard"].append(jaccard)
                    out["containment"].append(containment)
        types = [pa.int64(), pa.string(), pa.string(), pa.int64(), pa.float64(), pa.string(), pa.int64(), pa.int64()]
        types += [pa.string(), pa.float64(), pa.float64()] if dedup else []
        return pa.RecordBatch.from_arrays([pa.array(out[n], t) for n, t in zip(names, types)], names=names)

    def place(batches: Iterator) -> Iterator:
        import pyarrow as pa

        config = megashingle._config_from_toml(config_toml)
        carry = []  # the batches of the last group seen, which may go on in the next batch
        for batch in batches:
            if batch.num_rows == 0:
                continue
            roots = batch.column("root").to_numpy()
            change = np.flatnonzero(roots != roots[-1])
            if len(change) == 0:
                carry.append(batch)  # the whole batch is the last group's: nothing copied
                continue
            last = int(change[-1]) + 1
            table = pa.Table.from_batches(carry + [batch.slice(0, last)]).combine_chunks()
            carry = [batch.slice(last)]
            yield place_groups(table, config)
        if carry:
            yield place_groups(pa.Table.from_batches(carry).combine_chunks(), config)

    partitions = int(sketches.sparkSession.conf.get("spark.sql.shuffle.partitions"))
    documents = sketches.select("num", "doc_id", "comparable", "sketch").join(components, "num")
    columns = ["root", "num", "doc_id", "comparable", "sketch", "pair_b"]
    pair_rows = [
        "root",
        F.col("a").alias("num"),
        F.lit("").alias("doc_id"),
        F.lit(False).alias("comparable"),
        F.lit(bytearray()).alias("sketch"),
        F.col("b").alias("pair_b"),
    ]
    if timed:
        documents = documents.join(times, "num", "left")
        columns.append("time")
        pair_rows.append(F.lit(None).cast("long").alias("time"))
    rows = documents.withColumn("pair_b", F.lit(-1).cast("long")).select(*columns).unionByName(pairs.select(*pair_rows))
    grouped = rows.repartition(partitions, "root").sortWithinPartitions("root", "pair_b").mapInArrow(place, out_schema)
    alone = (
        sketches.select("num", "doc_id", "comparable")
        .join(components, "num", "left_anti")
        .select(
            "num",
            "doc_id",
            F.col("doc_id").alias("cluster_id"),
            F.lit(1).cast("long").alias("cluster_size"),
            F.when(F.col("comparable"), F.lit(1.0)).alias("similarity"),
            F.when(F.col("comparable"), F.lit("ok")).otherwise(F.lit("too_short")).alias("status"),
            F.lit(0).cast("long").alias("position"),
            F.col("num").alias("story"),
        )
    )
    if dedup:
        alone = alone.select("*", *[F.lit(None).cast(f.dataType).alias(f.name) for f in dedup_fields])
    return grouped.unionByName(alone)


def _dedup_fields():
    from pyspark.sql import types as T

    return [
        T.StructField("duplicate_of", T.StringType(), True),
        T.StructField("jaccard", T.DoubleType(), True),
        T.StructField("containment", T.DoubleType(), True),
    ]


def _places(nums: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The index in ``nums`` (distinct document numbers) of each of ``values`` (int64)."""
    order = np.argsort(nums, kind="stable")
    return order[np.searchsorted(nums, values, sorter=order)].astype(np.int64)


def _stories(
    spark,
    sketches,
    config: Config,
    max_local_pairs: int,
    max_group: int,
    phase: str = "",
    dedup: bool = False,
    times=None,
):
    """Each sketched document's cluster (the columns of ``_place``, with ``dedup`` its
    duplicates', kept by ``times`` where given): the sketches partitioned by document number, candidate pairs, their groups,
    and each group clustered on one executor as the command clusters documents; and what is
    kept for it (the partitioned sketches, the pairs, the groups when they are a DataFrame)."""
    partitions = int(spark.conf.get("spark.sql.shuffle.partitions"))
    placed = sketches.repartition(partitions, "num").persist()
    groups, pairs = _groups(spark, placed, config, max_local_pairs, max_group, phase)
    frame = _components_frame(spark, groups) if isinstance(groups, tuple) else groups
    _phase(spark, f"{phase}stories")
    stories = _place(placed, frame, _pairs_in_groups(spark, pairs, groups, frame), _config_toml(config), dedup, times)
    return stories, (placed, pairs, groups)


def _story_numbers(placed, local: bool):
    """The story (its smallest document number) of each document in a story of two or more:
    sorted arrays (num, story) on the driver when ``local``, else a kept DataFrame (num, root)."""
    from pyspark.sql import functions as F

    rows = placed.where(F.col("cluster_size") > 1).select("num", F.col("story").alias("root"))
    if not local:
        rows = rows.persist()
        rows.count()
        return rows
    table = _to_arrow(rows)
    nums = table.column("num").to_numpy().astype(np.int64)
    order = np.argsort(nums, kind="stable")
    return nums[order], table.column("root").to_numpy().astype(np.int64)[order]


def _ordered(placed, ordered: bool):
    """The story table's columns, in the command's row order when ``ordered``."""
    from pyspark.sql import functions as F

    if ordered:
        placed = placed.orderBy(F.col("cluster_size").desc(), "cluster_id", "position")
    return placed.drop("position", "num", "story")
