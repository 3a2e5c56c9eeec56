"""The executors' Python: in local mode the workers run this interpreter, on a cluster the one
``spark.pyspark.python`` names (a packed environment shipped with ``spark.archives``, see
docs/SPARK.md); before the first stage one task checks that the executors can import
megashingle, so that a missing package is one line for the user rather than a failed stage.
The check is a DataFrame query, so it runs in a classic session and on Spark Connect alike.
"""

from __future__ import annotations

import os
import sys

from megashingle import InputError

from .common import _is_remote_session, _one_line

WHAT_TO_SHIP = (
    "ship megashingle to the executors: a packed virtual environment with "
    "--conf spark.archives=env.tar.gz#environment --conf spark.pyspark.python=./environment/bin/python, "
    "or the megashingle wheel installed into the executors' Python on every node (see docs/SPARK.md, On a cluster)"
)
# On Spark Connect the server starts its executors' Python: spark.pyspark.python and
# spark.archives are the server's settings, and the session's is spark.sql.execution.pyspark.python.
WHAT_TO_SHIP_CONNECT = (
    "install megashingle into the Python the Spark Connect server's executors run, or name one that has it "
    "with --conf spark.sql.execution.pyspark.python=PATH (see docs/SPARK.md, Through Spark Connect)"
)


def _use_own_python(spark) -> None:
    """The Python the executors of a classic session run: the one ``spark.pyspark.python``
    names, else in local mode this interpreter (which has megashingle); ``PYSPARK_PYTHON``, when
    set, stays in force. A Spark Connect server starts its executors' Python itself."""
    if _is_remote_session(spark) or os.environ.get("PYSPARK_PYTHON"):
        return
    sc = spark.sparkContext
    chosen = sc.getConf().get("spark.pyspark.python")
    if chosen:
        sc.pythonExec = chosen
    elif sc.master.startswith("local"):
        sc.pythonExec = sys.executable


def _check_workers(spark) -> None:
    """Ends the job with one line when the executors' Python cannot import megashingle."""
    from pyspark.sql import functions as F

    holder = spark if _is_remote_session(spark) else spark.sparkContext
    if getattr(holder, "_megashingle_checked", False):
        return

    def probe(_):
        import sys

        try:
            import importlib

            importlib.import_module("megashingle._megashingle")  # the package first, then what it needs here
            importlib.import_module("pyarrow")

            return "ok"
        except Exception as e:  # noqa: BLE001
            return f"{sys.executable}: {type(e).__name__}: {e}"

    remote = _is_remote_session(spark)
    what_to_ship = WHAT_TO_SHIP_CONNECT if remote else WHAT_TO_SHIP
    try:
        # A plain (pickled) function, so that the probe needs no pyarrow where it runs.
        checked = F.udf(probe, "string", useArrow=False)("id").alias("status")
        found = spark.range(0, 1, 1, 1).select(checked).collect()[0].status
    except Exception as e:  # noqa: BLE001  (the worker's Python did not even start)
        where = "" if remote else f" ({spark.sparkContext.pythonExec})"
        raise InputError(
            f"the executors' Python{where} does not start or cannot import megashingle ({_worker_error(e)}); "
            + what_to_ship
        ) from None
    if found != "ok":
        raise InputError(f"the executors' Python cannot import megashingle ({found}); " + what_to_ship)
    holder._megashingle_checked = True


def _worker_error(e: BaseException) -> str:
    """The error a Python worker or the executor ended with: the last line of the message
    that is ``SomeError: ...`` (a traceback's last line, or a JVM's ``Caused by: ...``), Spark's
    own wrappers aside; else the exception as one line."""
    import re

    for line in reversed(str(e).splitlines()):
        line = line.strip()
        line = line[len("Caused by: ") :] if line.startswith("Caused by: ") else line
        found = re.match(r"([A-Za-z_][\w.]*(?:Error|Exception)): (.+)", line)
        if found and not found.group(1).endswith(("SparkException", "Py4JJavaError")):
            return line[:500]
    return _one_line(e)
