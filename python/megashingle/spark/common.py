"""What every stage of the Spark job shares: the job's defaults, its logger, the names of its
Spark jobs, whether the session is remote (Spark Connect) and the cluster's parallelism, the
configuration as it travels to the executors (TOML), Arrow buffers for the library's packed
readers, a DataFrame collected as an Arrow table (on Spark 3.5 and 4), and the one-line message
of an error raised on an executor.

The job uses DataFrames only, never the SparkContext's RDDs or broadcast variables, so that
the same code runs in a classic session and in a Spark Connect one: small arrays travel to the
executors inside the functions of ``mapInArrow`` (which a classic session broadcasts once they
pass 1 MB, and Spark Connect sends with the plan).
"""

from __future__ import annotations

import logging
from typing import Optional, Tuple

import numpy as np

from megashingle import Config

DEFAULT_MAX_LOCAL_PAIRS = 50_000_000
DEFAULT_MAX_GROUP = 500_000

log = logging.getLogger("megashingle.spark")


# On Spark Connect, arrays larger than this go to the executors as DataFrames joined with the
# rows rather than inside a function: each task carries its plan, functions included.
CONNECT_SHIPPED_BYTES = 16 << 20


def _is_remote_session(spark) -> bool:
    """Whether ``spark`` is a Spark Connect session (no SparkContext, no RDDs)."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def _phase(spark, name: str) -> None:
    """Names the Spark jobs that follow (in the Spark UI and the event log); a Spark Connect
    session has no job descriptions, and its jobs go unnamed."""
    if not _is_remote_session(spark):
        spark.sparkContext.setJobDescription(f"megashingle: {name}")


def _parallelism(spark) -> int:
    """The cluster's default parallelism: the SparkContext's, or on Spark Connect the number
    of partitions the server gives a range (``spark.default.parallelism`` when it is set, else
    the executors' cores)."""
    if not _is_remote_session(spark):
        return int(spark.sparkContext.defaultParallelism)
    from pyspark.sql import functions as F

    part = spark.range(0, 1 << 16).select(F.spark_partition_id().alias("part"))
    return int(part.agg(F.max("part")).collect()[0][0]) + 1


def _shipped(spark, *arrays: np.ndarray) -> bool:
    """Whether arrays may travel inside a function to the executors: always in a classic
    session (it broadcasts a large function), up to ``CONNECT_SHIPPED_BYTES`` on Spark Connect."""
    return not _is_remote_session(spark) or sum(a.nbytes for a in arrays) <= CONNECT_SHIPPED_BYTES


def _config_toml(config: Optional[Config]) -> str:
    return (config or Config()).to_toml()


def _arrow_type(spark_type):
    import pyarrow as pa
    from pyspark.sql import types as T

    if isinstance(spark_type, T.LongType):
        return pa.int64()
    if isinstance(spark_type, T.IntegerType):
        return pa.int32()
    if isinstance(spark_type, T.BooleanType):
        return pa.bool_()
    if isinstance(spark_type, T.BinaryType):
        return pa.binary()
    return pa.string()


def _to_arrow(df):
    """A DataFrame collected to the driver as one Arrow table: ``toArrow`` (Spark 4), else the
    Arrow batches Spark 3.5 collects for ``toPandas``."""
    import pyarrow as pa

    if hasattr(df, "toArrow"):
        return df.toArrow()
    from pyspark.sql.pandas.types import to_arrow_schema

    batches = df._collect_as_arrow()
    return pa.Table.from_batches(batches, schema=None if batches else to_arrow_schema(df.schema))


def _from_arrow(spark, table, schema):
    """An Arrow table on the driver as a DataFrame of ``schema``: read as it is (Spark 4), else
    through pandas with Spark's Arrow conversion on (Spark 3.5 takes no Arrow table)."""
    import pyspark

    if int(pyspark.__version__.split(".")[0]) >= 4:
        return spark.createDataFrame(table, schema)
    key = "spark.sql.execution.arrow.pyspark.enabled"
    was = spark.conf.get(key, "false")
    spark.conf.set(key, "true")
    try:
        return spark.createDataFrame(table.to_pandas(), schema)
    finally:
        spark.conf.set(key, was)


def _binary_buffers(column) -> Tuple[np.ndarray, np.ndarray]:
    """An Arrow binary column's offsets (int32) and data, for the library's packed readers."""
    _, offs, data = column.buffers()
    wide = column.type == "large_binary" if isinstance(column.type, str) else str(column.type) == "large_binary"
    offsets = np.frombuffer(offs, np.int64 if wide else np.int32)[column.offset : column.offset + len(column) + 1]
    data = np.frombuffer(data, np.uint8) if data is not None else np.zeros(0, np.uint8)
    if wide:
        data = data[offsets[0] : offsets[-1]]
        offsets = offsets - offsets[0]
    return offsets.astype(np.int32), data


def _one_line(e: BaseException) -> str:
    """An exception as one line: a Python worker's last error line, a gRPC call's status and
    details (Spark Connect's client), else the first line of its message."""
    text = str(e)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if lines and "_InactiveRpcError" in lines[0]:  # <_InactiveRpcError ...: status = ..., details = "..."
        status = next((line.split("StatusCode.", 1)[1] for line in lines if line.startswith("status = ")), None)
        details = next((line[len("details = ") :].strip('"') for line in lines if line.startswith("details = ")), "")
        if status:
            return f"{status}: {details}"[:500]
    for line in reversed(lines):
        if line.startswith("MemoryError"):
            return line
        said = _error_line(line, INPUT_ERRORS + ("RuntimeError",))
        if said is not None:
            return said
    for line in lines:
        if not line.startswith(("at ", "Traceback", "File ", "py4j", "JVM stacktrace")):
            return line[:500]
    return type(e).__name__


# The errors whose message a Python worker's traceback ends with, for the user: the package's
# own (each a subclass of ValueError), ValueError, and a file the system refused.
INPUT_ERRORS = (
    "ValueError",
    "OSError",
    "FileNotFoundError",
    "PermissionError",
    "IsADirectoryError",
    "megashingle.MegashingleError",
    "megashingle.InputError",
    "megashingle.ConfigError",
    "megashingle.StoryIndexError",
    "megashingle.IndexLockedError",
    "megashingle.IndexDamagedError",
    "megashingle.IndexFormatError",
)


def _error_line(line: str, names: Tuple[str, ...]) -> Optional[str]:
    """The message of a traceback's last line ``Name: message`` when ``Name`` is one of
    ``names``; None for another line."""
    name, colon, message = line.partition(": ")
    return message if colon and name in names else None
