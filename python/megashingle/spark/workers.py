"""The executors' Python: in local mode the workers run this interpreter, and before the first
stage one task checks that the executors can import megashingle, so that a missing wheel is
one line for the user rather than a failed stage.
"""

from __future__ import annotations

import os
import sys

from megashingle import InputError

from .common import _one_line


def _is_local(sc) -> bool:
    return sc.master.startswith("local")


def _use_own_python(sc) -> None:
    """In local mode the workers run this interpreter (which has megashingle) unless the
    user chose one (PYSPARK_PYTHON or spark.pyspark.python)."""
    if not _is_local(sc) or os.environ.get("PYSPARK_PYTHON"):
        return
    chosen = sc.getConf().get("spark.pyspark.python")
    sc.pythonExec = chosen or sys.executable


def _check_workers(sc) -> None:
    """Ends the job with one line when the executors' Python cannot import megashingle."""
    if getattr(sc, "_megashingle_checked", False):
        return

    def probe(_):
        try:
            import megashingle._megashingle  # noqa: F401

            return [("ok", "")]
        except Exception as e:  # noqa: BLE001
            return [("missing", f"{sys.executable}: {type(e).__name__}: {e}")]

    try:
        found = sc.parallelize([0], 1).mapPartitions(probe).collect()
    except Exception as e:  # noqa: BLE001  (the worker's Python did not even start)
        raise InputError(
            f"the executors' Python ({sc.pythonExec}) does not start or cannot import "
            f"megashingle ({_one_line(e)}); install the megashingle wheel into the executors' "
            "Python (pip install megashingle-*.whl on each node, or ship a packed virtual "
            "environment with --archives and set spark.pyspark.python to it)"
        ) from None
    status, detail = found[0]
    if status != "ok":
        raise InputError(
            f"the executors' Python cannot import megashingle ({detail}); install the "
            "megashingle wheel into the executors' Python (pip install megashingle-*.whl on "
            "each node, or ship a packed virtual environment with --archives and set "
            "spark.pyspark.python to it)"
        )
    sc._megashingle_checked = True
