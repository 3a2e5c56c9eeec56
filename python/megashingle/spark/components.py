"""Groups: the connected components of the candidate pairs, by the library's union-find on the
driver when they are few enough, else by large-star / small-star rounds (Kiveris et al., 2014);
a group too large for one executor split by the components of its pairs that can link.
"""

from __future__ import annotations

from typing import Iterator, Optional

import numpy as np

import megashingle
from megashingle import Config, InputError

from .candidates import _candidate_pairs, _may_link, _prefilter, _verified_links
from .common import _config_toml, _from_arrow, _phase, _shipped, _to_arrow, log


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

    current = edges.select("a", "b").where(F.col("a") != F.col("b")).distinct().localCheckpoint()
    for _ in range(max_rounds):
        after = small_star(large_star(current)).localCheckpoint()
        # Settled when every edge points at its component's root: no vertex is the larger
        # end of one edge and the smaller end of another, and each vertex has one root.
        roots = after.select(F.greatest("a", "b").alias("v"), F.least("a", "b").alias("r"))
        unsettled = (
            roots.groupBy("v")
            .agg(F.countDistinct("r").alias("k"))
            .where(F.col("k") > 1)
            .select("v")
            .unionByName(roots.select(F.col("r").alias("v")).intersect(roots.select("v")))
            .limit(1)
            .count()
        )
        current = after
        if unsettled == 0:
            break
    else:
        raise RuntimeError(f"connected components did not settle in {max_rounds} rounds")
    roots = current.select(F.greatest("a", "b").alias("node"), F.least("a", "b").alias("root"))
    root_rows = roots.select(F.col("root").alias("node"), "root")
    return roots.unionByName(root_rows).distinct()


def _components_frame(spark, local):
    import pyarrow as pa
    from pyspark.sql import types as T

    nodes, roots = local
    schema = T.StructType([T.StructField("num", T.LongType(), False), T.StructField("root", T.LongType(), False)])
    if len(nodes) == 0:
        return spark.createDataFrame([], schema)
    return _from_arrow(spark, pa.table({"num": pa.array(nodes), "root": pa.array(roots)}), schema)


def _local_components(pairs, bound: int, count: Optional[int] = None):
    """Components of the pairs (columns a, b; ``count`` of them when known) by one union-find
    on the driver when there are at most ``bound`` of them, as sorted arrays (node, root); None
    when there are more."""
    if (pairs.count() if count is None else count) > bound:
        return None
    table = _to_arrow(pairs)
    a = table.column("a").to_numpy().astype(np.int64)
    b = table.column("b").to_numpy().astype(np.int64)
    nodes, roots = megashingle._megashingle.components(a, b)
    return np.asarray(nodes, np.int64), np.asarray(roots, np.int64)


def _groups(spark, placed, config: Config, max_local_pairs: int, max_group: int, phase: str = ""):
    """The groups that are clustered each on one executor: the connected components of the
    candidate pairs, which hold every link and so every story whole. A group of more than
    ``max_group`` documents is split into the components of its pairs that can link: those
    whose minima agree at least as often as verification's prefilter asks (compared by their
    low bytes, which agree whenever the minima do, so no link is lost). A group still larger
    has those pairs verified one by one (the second document's sketch sent to the first's),
    and the components of its links are its groups. The groups as sorted arrays (node, root) on
    the driver when the pairs are at most ``max_local_pairs``, else as a DataFrame (num,
    root); and the candidate pairs (a, b), kept."""
    _phase(spark, f"{phase}candidates and groups")
    pairs, count = _candidate_pairs(placed, int(config.get("cluster.max-bucket")))
    groups = _local_components(pairs, max_local_pairs, count)
    if groups is None:
        log.info("more than %d candidate pairs: their components in distributed rounds", max_local_pairs)
    may_link = lambda within: _may_link(within, placed, _prefilter(config))  # noqa: E731
    splits = [
        ("pairs whose minima can link", may_link),
        ("pairs verified one by one", lambda within: _verified_links(may_link(within), placed, _config_toml(config))),
    ]
    for how, keep in splits:
        groups = _split_large(spark, pairs, groups, keep, max_local_pairs, max_group, how)
    return groups, pairs


def _split_large(spark, pairs, groups, keep, max_local_pairs: int, max_group: int, how: str):
    """``groups`` (sorted arrays (node, root), or None for groups not found yet on the driver,
    or a DataFrame (num, root)) with each group of more than ``max_group`` documents replaced
    by the components of its pairs that ``keep`` (a function of a DataFrame of pairs) keeps."""
    from pyspark.sql import functions as F

    if groups is None:
        components = _components(pairs).select(F.col("node").alias("num"), "root").persist()
        components.count()
        groups = components
    if isinstance(groups, tuple):
        nodes, roots = groups
        heads, sizes = np.unique(roots, return_counts=True)
        large = heads[sizes > max_group]
        if len(large) == 0:
            return groups
        log.info(
            "%d groups of more than %d documents (largest %d): split by the %s", len(large), max_group, sizes.max(), how
        )
        in_large = np.isin(roots, large)
        large_nodes = _components_frame(spark, (nodes[in_large], roots[in_large])).select(F.col("num").alias("a"))
        kept = keep(pairs.join(F.broadcast(large_nodes), "a", "left_semi")).persist()
        split = _local_components(kept, max_local_pairs)
        kept.unpersist()
        if split is None:
            raise InputError(
                f"more than {max_local_pairs} pairs inside groups of more than {max_group} documents: "
                "raise --max-local-pairs or --max-group"
            )
        nodes = np.concatenate([nodes[~in_large], split[0]])
        roots = np.concatenate([roots[~in_large], split[1]])
        order = np.argsort(nodes, kind="stable")
        return nodes[order], roots[order]
    components = groups
    large = components.groupBy("root").count().where(F.col("count") > max_group).select("root")
    if not large.limit(1).count():
        return components
    log.info("groups of more than %d documents: split by the %s", max_group, how)
    large_nodes = components.join(large, "root").select(F.col("num").alias("a"))
    split = _components(keep(pairs.join(large_nodes, "a", "left_semi"))).select(F.col("node").alias("num"), "root")
    result = components.join(large, "root", "left_anti").select("num", "root").unionByName(split).persist()
    result.count()
    components.unpersist()
    return result


def _pairs_in_groups(spark, pairs, groups, frame=None):
    """The candidate pairs (a, b) whose two documents are in one group, with the group
    (columns root, a, b): looked up in the arrays of the groups, sent with the function, when
    they are on the driver (on Spark Connect, when they are small: see ``_shipped``), else
    joined with them (``frame``, the groups as a DataFrame of num, root)."""
    import pyarrow as pa
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    if isinstance(groups, tuple) and not _shipped(spark, *groups):
        groups = frame if frame is not None else _components_frame(spark, groups)
    if not isinstance(groups, tuple):
        of_a = groups.select(F.col("num").alias("a"), "root")
        of_b = groups.select(F.col("num").alias("b"), F.col("root").alias("root_b"))
        return pairs.join(of_a, "a").join(of_b, "b").where(F.col("root") == F.col("root_b")).select("root", "a", "b")
    nodes, roots = groups

    def tag(batches: Iterator) -> Iterator:

        def root_of(v: np.ndarray) -> np.ndarray:
            if not len(nodes):
                return np.full(len(v), -1, np.int64)
            at = np.searchsorted(nodes, v).clip(max=len(nodes) - 1)
            return np.where(nodes[at] == v, roots[at], -1)

        for batch in batches:
            a, b = batch.column("a").to_numpy(), batch.column("b").to_numpy()
            root = root_of(a)
            keep = (root >= 0) & (root == root_of(b))
            yield pa.RecordBatch.from_arrays(
                [pa.array(root[keep]), pa.array(a[keep]), pa.array(b[keep])], names=["root", "a", "b"]
            )

    schema = T.StructType([T.StructField(n, T.LongType(), False) for n in ("root", "a", "b")])
    return pairs.mapInArrow(tag, schema)
