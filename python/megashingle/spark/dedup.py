"""``--dedup``: the input records with each story's duplicates left out, as ``megashingle
dedup`` leaves them out, every column kept. The documents are read and clustered as for the
story table; each group's stories are deduplicated where the group is clustered, by the
library's rule (``dedup.keep``, ``dedup.threshold``; for ``"earliest"``, by each record's time
from ``--time-column``, read as the command reads it). The decision is then joined back onto the
input rows as Spark reads them (Parquet with its types; CSV and JSONL as strings), by id: where
an id repeats, its first record in input order is the one the command reads, the later ones
are left out.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, List, Optional, Tuple

from megashingle import Config, InputError, detect_format

from .common import DEFAULT_MAX_GROUP, DEFAULT_MAX_LOCAL_PAIRS, _phase
from .inputs import Inputs, plan_inputs
from .job import _cluster_documents, _read_documents
from .reading import Census

# The columns the join adds to the input rows, named so that they do not meet a user's.
_KEY = "__megashingle_id"
_ORDER = ("__megashingle_position", "__megashingle_block", "__megashingle_row")


@dataclass
class DedupResult:
    """The kept records (a DataFrame of the input rows, every column kept), the removed ones
    (doc_id, duplicate_of, similarity, jaccard, containment, in the story table's order), what
    reading found and the configuration."""

    kept: Any
    dropped: Any
    census: Census
    inputs: Inputs
    config: Config
    placed: Any = None

    def summary(self) -> str:
        """The command's summary line for a deduplication (one Spark job)."""
        from pyspark.sql import functions as F

        row = self.placed.agg(
            F.count("*").alias("documents"),
            F.count("duplicate_of").alias("removed"),
            F.sum(((F.col("position") == 0) & (F.col("cluster_size") > 1)).cast("long")).alias("multi"),
        ).collect()[0]
        keep, threshold = self.config.get("dedup.keep").strip('"'), self.config.get("dedup.threshold")
        return (
            f"{row.documents} records in, {row.documents - row.removed} kept, {row.removed} removed as "
            f"duplicates ({row.multi or 0} stories of 2 or more; keep {keep}, threshold {threshold}); "
            f"{self.census.skipped} records skipped"
        )


def check_dedup_config(config: Config, time_col: Optional[str] = None) -> None:
    """Refuses a ``dedup.keep`` and a time column that do not go together: ``earliest`` needs
    each record's time (the command's message), and a time column is read for ``earliest``
    only."""
    earliest = config.get("dedup.keep").strip('"') == "earliest"
    if earliest and time_col is None:
        raise InputError("--keep earliest needs the column or field of each record's time: give --time-column NAME")
    if time_col is not None and not earliest:
        raise InputError(
            "--time-column goes with --keep earliest: add --keep earliest to keep each story's earliest "
            "record, or leave --time-column out"
        )


def plan_dedup_inputs(paths: List[str], input_format: Optional[str] = None) -> Tuple[Inputs, str]:
    """The inputs of a deduplication, listed on the driver: record files of one format (CSV,
    JSONL or Parquet), as the command requires them, and that format."""
    inputs = plan_inputs(paths, input_format)
    found: Optional[Tuple[str, str]] = None
    named = [(p, fmt) for p, fmt, _ in inputs.remote] + [(p, "parquet") for p in inputs.parquet]
    for (path, folder_id), records in zip(inputs.files, inputs.record_files):
        fmt = (detect_format(path, input_format) or ("records", ","))[0]
        if folder_id is not None:
            raise InputError(
                f"{path}: a document in a folder; dedup writes records, so give CSV, JSONL or Parquet files "
                "(use the job without --dedup for folders)"
            )
        if fmt in ("mbox", "warc"):
            raise InputError(
                f"{path}: an archive of documents; dedup writes records, so give CSV, JSONL or Parquet files "
                "(use the job without --dedup for mail archives and WARC files)"
            )
        if not records:
            raise InputError(f"{path}: a single document; dedup writes records, so give CSV, JSONL or Parquet files")
        if fmt == "records":
            raise InputError(f"{path}: its name does not tell CSV from JSONL: give --input-format csv or jsonl")
        named.append((path, fmt))
    for path, fmt in named:
        if found is None:
            found = (fmt, path)
        elif found[0] != fmt:
            raise InputError(
                f"{path} is {_format_name(fmt)} but {found[1]} is {_format_name(found[0])}: dedup writes one "
                "format, so give inputs of one format"
            )
    if found is None:
        raise InputError(
            f"no records in {', '.join(paths)}: nothing to deduplicate, nothing written; "
            "give CSV, JSONL or Parquet files"
        )
    return inputs, found[0]


def _format_name(fmt: str) -> str:
    return {"csv": "CSV", "jsonl": "JSONL", "parquet": "Parquet"}.get(fmt, fmt)


def dedup_files(
    spark,
    paths: List[str],
    id_col: str = "id",
    text_col: str = "text",
    config: Optional[Config] = None,
    *,
    input_format: Optional[str] = None,
    max_local_pairs: int = DEFAULT_MAX_LOCAL_PAIRS,
    max_group: int = DEFAULT_MAX_GROUP,
    time_col: Optional[str] = None,
) -> DedupResult:
    """The records of CSV, JSONL or Parquet files with each story's duplicates left out, as
    ``megashingle dedup`` leaves them out; with ``dedup.keep = "earliest"``, ``time_col``
    names the column or field of each record's time (``megashingle dedup --time-column``);
    raises InputError with a one-line message for input or a setting it cannot use."""
    from pyspark.sql import functions as F

    config = config or Config()
    check_dedup_config(config, time_col)
    inputs, fmt = plan_dedup_inputs(paths, input_format)
    documents, census, _ = _read_documents(
        spark, inputs, id_col, text_col, config, input_format, "deduplicate", time_column=time_col
    )
    placed = _cluster_documents(spark, documents, config, max_local_pairs, max_group, dedup=True).persist()
    _phase(spark, "dedup: records kept")
    # A record skipped for its time is not read; only then can it leave its id to a later record.
    timed = time_col if census.skipped > 0 else None
    records = _input_records(spark, inputs, fmt, id_col, text_col, timed)
    kept_ids = placed.where(F.col("duplicate_of").isNull()).select(F.col("doc_id").alias(_KEY))
    kept = _kept_records(records, kept_ids, repeated=len(census.dropped) > 0)
    dropped = (
        placed.where(F.col("duplicate_of").isNotNull())
        .orderBy(F.col("cluster_size").desc(), "cluster_id", "position")
        .select(
            "doc_id",
            "duplicate_of",
            F.greatest("jaccard", "containment").alias("similarity"),
            "jaccard",
            "containment",
        )
    )
    return DedupResult(kept, dropped, census, inputs, config, placed)


def _input_records(spark, inputs: Inputs, fmt: str, id_col: str, text_col: str, time_col: Optional[str] = None):
    """Every input record as Spark reads it (Parquet with its types; CSV and JSONL with string
    columns), with its id as the job reads it (a string) and its place in input order (the
    input, the block of the file, the row in it), and whether the job reads it as a record
    (with ``time_col``, not one whose time is text that is not a time)."""
    from pyspark.sql import functions as F

    local = [(path, pos) for (path, _), pos in zip(inputs.files, inputs.file_positions)]
    local += list(zip(inputs.parquet, inputs.parquet_positions))
    frames = []
    if local:
        frames.append((_read(spark, fmt, [p for p, _ in local], inputs), dict(local)))
    for index, (path, _, delimiter) in enumerate(inputs.remote):
        frames.append((_read(spark, fmt, [path], inputs, delimiter), {path: inputs.count + index}))
    out = None
    for df, positions in frames:
        path_col = F.col("_metadata.file_path")
        mapping = F.create_map(*[x for p, pos in positions.items() for x in (F.lit(_uri(p)), F.lit(pos))])
        position = F.coalesce(mapping[path_col], mapping[F.regexp_replace(path_col, "^file:/+", "file:///")])
        if len(positions) == 1:
            position = F.lit(next(iter(positions.values())))
        row = F.col("_metadata.row_index") if fmt == "parquet" else F.monotonically_increasing_id()
        doc_id = F.col(id_col).cast("string")
        # The job reads a record with an id, and with a text where a null can be told apart.
        valid = doc_id.isNotNull() & (F.trim(doc_id) != "")
        if fmt != "csv":
            valid = valid & F.col(text_col).isNotNull()
        if time_col in df.columns and df.schema[time_col].dataType.simpleString() in ("string", "binary"):
            valid = valid & ~_not_a_time(F.col(f"`{time_col}`").cast("string"))
        framed = df.select(
            *[F.col(f"`{c}`") for c in df.columns],
            F.when(valid, doc_id).alias(_KEY),
            position.cast("long").alias(_ORDER[0]),
            F.col("_metadata.file_block_start").alias(_ORDER[1]),
            row.cast("long").alias(_ORDER[2]),
        )
        out = framed if out is None else out.unionByName(framed)
    return out


def _not_a_time(column):
    """True for a value that is text but not a time, as the command reads one (the library's
    ``parse_times``), whose record the command skips; false for a time, a blank or a null."""
    import pandas as pd
    from pyspark.sql.functions import pandas_udf

    def not_a_time(texts):
        from megashingle import _megashingle as ext

        _, wrong = ext.parse_times(texts.tolist())
        return pd.Series(wrong, index=texts.index)

    # Spark tells a Series-to-Series UDF by its types, which this module's annotations (strings,
    # for ``from __future__ import annotations``) do not give.
    not_a_time.__annotations__ = {"texts": pd.Series, "return": pd.Series}
    return pandas_udf(not_a_time, "boolean")(column)


def _uri(path: str) -> str:
    return path if "://" in path else "file://" + os.path.abspath(path)


def _read(spark, fmt: str, paths: List[str], inputs: Inputs, delimiter: Optional[str] = None):
    """The files in Spark's reader for their format: CSV with a header (every column a
    string), JSONL with numbers and booleans as strings, Parquet as it is."""
    if fmt == "parquet":
        return spark.read.parquet(*paths)
    if fmt == "jsonl":
        return spark.read.json(paths, primitivesAsString=True)
    if delimiter is None:
        delimiters = {(detect_format(p) or ("csv", ","))[1] for p in paths}
        if len(delimiters) > 1:
            raise InputError(
                f"{', '.join(paths)}: CSV files of different delimiters; dedup writes one table, so give one kind"
            )
        delimiter = delimiters.pop()
    return spark.read.csv(paths, header=True, multiLine=True, escape='"', sep=delimiter)


def _kept_records(records, kept_ids, repeated: bool):
    """The input records whose id is kept, the hidden columns dropped; when ids repeat, only
    the first record (in input order) of each id that the job reads."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    rows = records.where(F.col(_KEY).isNotNull())
    if repeated:
        first = Window.partitionBy(_KEY).orderBy(*_ORDER)
        rows = rows.withColumn("__megashingle_rank", F.row_number().over(first)).where(F.col("__megashingle_rank") == 1)
        rows = rows.drop("__megashingle_rank")
    return rows.join(kept_ids, _KEY, "left_semi").drop(_KEY, *_ORDER)
