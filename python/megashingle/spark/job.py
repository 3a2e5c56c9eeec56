"""The job's two entry points, ``cluster_files`` (files, as ``megashingle cluster`` reads them,
and Parquet) and ``cluster`` (a DataFrame), and the passes they run in turn: reading, document
and story frequency, sketches, candidates, groups and placement.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any, List, Optional

import numpy as np

from megashingle import Config, InputError

from .candidates import _sketches
from .common import DEFAULT_MAX_GROUP, DEFAULT_MAX_LOCAL_PAIRS, _config_toml, _one_line, _phase, log
from .frequency import _page_counts, _story_frequency
from .inputs import Inputs, plan_inputs
from .placement import _ordered, _stories, _story_numbers
from .reading import Census, Reading, _census, _input_error, _read_sets
from .workers import _check_workers, _use_own_python


@dataclass
class Result:
    """The story table (a DataFrame: doc_id, cluster_id, cluster_size, similarity, status) and
    what reading found."""

    table: Any
    census: Census
    inputs: Inputs
    placed: Any = None

    def summary(self) -> str:
        """The command's summary line for the stories (one Spark job)."""
        from pyspark.sql import functions as F

        head = F.col("position") == 0
        row = self.placed.agg(
            F.count("*").alias("documents"),
            F.sum(head.cast("long")).alias("clusters"),
            F.sum((head & (F.col("cluster_size") > 1)).cast("long")).alias("multi"),
            F.sum((F.col("cluster_size") > 1).cast("long")).alias("clustered"),
            F.sum((F.col("status") == "too_short").cast("long")).alias("too_short"),
        ).collect()[0]
        return (
            f"{row.documents} documents in {row.clusters} clusters ({row.multi} clusters of 2 or "
            f"more hold {row.clustered} documents); {row.too_short} too short to compare; "
            f"{self.census.skipped} records skipped"
        )


def cluster_files(
    spark,
    paths: List[str],
    id_col: str = "id",
    text_col: str = "text",
    config: Optional[Config] = None,
    *,
    input_format: Optional[str] = None,
    ordered: bool = True,
    max_local_pairs: int = DEFAULT_MAX_LOCAL_PAIRS,
    max_group: int = DEFAULT_MAX_GROUP,
) -> Result:
    """Clusters the documents of files (what ``megashingle cluster`` reads, and Parquet) into
    stories; raises InputError with a one-line message for input it cannot use."""
    config = config or Config()
    inputs = plan_inputs(paths, input_format)
    documents, census, _ = _read_documents(spark, inputs, id_col, text_col, config, input_format)
    placed = _cluster_documents(spark, documents, config, max_local_pairs, max_group).persist()
    return Result(_ordered(placed, ordered), census, inputs, placed)


def _read_documents(
    spark,
    inputs: Inputs,
    id_col: str,
    text_col: str,
    config: Config,
    input_format: Optional[str],
    what: str = "cluster",
    time_column: Optional[str] = None,
):
    """The documents of planned inputs read once (columns num, doc_id, sets, and with a
    ``time_column`` each one's time, null for none; kept), repeated ids left out, and the census
    of what reading found; raises InputError with a one-line message for input it cannot use."""
    from pyspark.sql import functions as F

    _use_own_python(spark)
    _check_workers(spark)
    paths = inputs.names
    reading = Reading(spark, inputs, id_col, text_col, input_format, time_column)
    try:
        reading.prepare()
    except InputError:
        raise
    except Exception as e:  # noqa: BLE001
        raise InputError(
            f"{', '.join(inputs.parquet or [p for p, *_ in inputs.remote])}: cannot be read: {_one_line(e)}"
        ) from None
    if not inputs.files and not inputs.parquet and not inputs.remote:
        raise InputError(
            f"no documents in {', '.join(paths)}: nothing to {what}, nothing written"
            + (
                f" ({inputs.ignored} files left out for their extension; documents are .txt, .html, .htm, .eml)"
                if inputs.ignored
                else ""
            )
        )
    _phase(spark, "reading: shingle sets")
    rows = _read_sets(reading, _config_toml(config)).persist()
    try:
        census = _census(rows, inputs)
    except Exception as e:  # noqa: BLE001
        rows.unpersist()
        raise _input_error(e) from None
    for w in census.warnings + census.duplicates:
        print(f"megashingle.spark: {w}", file=sys.stderr)
    if census.kept == 0:
        rows.unpersist()
        raise InputError(
            f"no documents in {', '.join(paths)}: nothing to {what}, nothing written"
            + (" (every record was skipped)" if census.skipped else "")
        )
    columns = ["num", "doc_id", "sets"] + (["time"] if time_column is not None else [])
    documents = rows.where(F.col("num").isNotNull()).select(*columns)
    if len(census.dropped):
        dropped = spark.createDataFrame([(int(n),) for n in census.dropped], "num long")
        documents = documents.join(F.broadcast(dropped), "num", "left_anti")
    return documents, census, inputs


def _cluster_documents(spark, documents, config: Config, max_local_pairs: int, max_group: int, dedup: bool = False):
    """The stories of read documents (columns num, doc_id, sets): document frequency, story
    frequency over a first clustering, the sketches and the final clustering, all from the
    sets read once; with ``dedup``, each removed record's kept record (see ``_place``), chosen
    by each document's ``time`` where the documents have that column."""
    min_documents = int(config.get("boilerplate.min-documents"))
    min_stories = int(config.get("boilerplate.min-stories"))
    floor = min([n for n in (min_documents, min_stories) if n > 0], default=0)
    _phase(spark, "document frequency")
    shingles, counts = _page_counts(documents, floor) if floor > 0 else (np.zeros(0, np.uint32),) * 2
    boilerplate = shingles[counts >= min_documents] if min_documents > 0 else np.zeros(0, np.uint32)
    # Story frequency counts the shingles of `min-stories` pages or more: those not boilerplate
    # yet may become boilerplate, and those found across `min-documents` stories or more are
    # left out even of a document kept whole (a disclaimer beside a widely copied story).
    frequent = np.sort(shingles[counts >= min_stories])
    spread_whole = np.zeros(0, np.uint32)
    log.info(
        "%d boilerplate shingles by document frequency; %d shingles in %d pages or more, for story frequency",
        len(boilerplate),
        len(frequent),
        min_stories,
    )
    if min_stories > 0 and len(frequent) > 0:
        # The first clustering, as the command makes it: pairs verified from the minima.
        first = config.replace({"cluster.verify": "estimate"})
        _phase(spark, "first clustering: sketches")
        sketches = _sketches(documents, _config_toml(first), boilerplate, with_sets=False)
        first_placed, kept = _stories(spark, sketches, first, max_local_pairs, max_group, phase="first clustering: ")
        stories = _story_numbers(first_placed, local=isinstance(kept[2], tuple))
        for frame in kept:
            if not isinstance(frame, tuple):
                frame.unpersist()
        _phase(spark, "story frequency")
        common = np.isin(frequent, boilerplate, assume_unique=True)
        spread, spread_whole, one_story = _story_frequency(
            spark, documents, frequent, common, stories, min_stories, max(min_stories, min_documents)
        )
        if not isinstance(stories, tuple):
            stories.unpersist()
        log.info(
            "%d boilerplate shingles by story frequency; %d given back as one story's own text",
            len(np.setdiff1d(spread, boilerplate, assume_unique=True)),
            len(one_story),
        )
        boilerplate = np.union1d(np.setdiff1d(boilerplate, one_story, assume_unique=True), spread)
    _phase(spark, "sketches")
    sketches = _sketches(documents, _config_toml(config), boilerplate, spread=spread_whole)
    times = documents.select("num", "time") if dedup and "time" in documents.columns else None
    placed, _ = _stories(spark, sketches, config, max_local_pairs, max_group, dedup=dedup, times=times)
    return placed


def cluster(
    df,
    id_col: str = "id",
    text_col: str = "text",
    config: Optional[Config] = None,
    *,
    ordered: bool = True,
    max_local_pairs: int = DEFAULT_MAX_LOCAL_PAIRS,
    max_group: int = DEFAULT_MAX_GROUP,
):
    """Clusters the documents of a Spark DataFrame into stories.

    Returns a DataFrame with the command's columns ``doc_id, cluster_id, cluster_size,
    similarity, status`` (ordered as the command orders its rows when ``ordered``: largest
    cluster first, then by cluster id, the representative first). Rows with a null or empty
    id or a null text are skipped; a repeated id keeps one of its rows (the DataFrame has no
    order: which one is not defined).
    """
    from pyspark.sql import functions as F

    config = config or Config()
    spark = df.sparkSession
    _use_own_python(spark)
    _check_workers(spark)
    for column in (id_col, text_col):
        if column not in df.columns:
            raise InputError(f"no column `{column}`; columns found: {', '.join(df.columns)}")
    docs = (
        df.select(F.col(id_col).cast("string").alias("doc_id"), F.col(text_col).cast("string").alias("text"))
        .where(F.col("doc_id").isNotNull() & (F.trim("doc_id") != "") & F.col("text").isNotNull())
        .dropDuplicates(["doc_id"])
        .withColumn("position", F.lit(0).cast("long"))
        .withColumn("row", F.monotonically_increasing_id())
    )
    reading = Reading(spark, Inputs(), "doc_id", "text", None)
    reading._tables = [docs.select("position", "row", "doc_id", "text")]
    documents = (
        _read_sets(reading, _config_toml(config))
        .where(F.col("num").isNotNull())
        .select("num", "doc_id", "sets")
        .persist()
    )
    return _ordered(_cluster_documents(spark, documents, config, max_local_pairs, max_group), ordered)
