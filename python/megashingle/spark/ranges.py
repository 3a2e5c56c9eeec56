"""Rows a key range: how the passes send many small values through the shuffle. A batch's
values are cut into ``spark.sql.shuffle.partitions`` ranges of a 32-bit key space, and each
range that holds values goes as one row of two binary arrays (its keys and their values), so
the JVM moves a few large rows instead of a row a value (about a hundred million at a million
documents). The task that a range arrives at gathers its rows back into arrays.
"""

from __future__ import annotations

from typing import Iterator, Optional, Tuple

import numpy as np


def _range_starts(spark) -> np.ndarray:
    """Where each of ``spark.sql.shuffle.partitions`` equal ranges of the 32-bit key space
    starts."""
    ranges = int(spark.conf.get("spark.sql.shuffle.partitions"))
    return ((np.arange(ranges, dtype=np.uint64) << np.uint64(32)) // np.uint64(ranges)).astype(np.uint32)


def _range_of(keys: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """The range (of ``starts``) of each 32-bit key."""
    return (np.searchsorted(starts, keys, side="right") - 1).astype(np.int32)


def _spread(numbers: np.ndarray) -> np.ndarray:
    """A 32-bit key for each 64-bit number, spread evenly over the key space whatever the
    numbers' own spread (Fibonacci hashing), for numbers that are not hashes themselves."""
    mixed = numbers.astype(np.int64).view(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    return (mixed >> np.uint64(32)).astype(np.uint32)


def _by_range_schema():
    from pyspark.sql import types as T

    return T.StructType(
        [
            T.StructField("range", T.IntegerType(), False),
            T.StructField("keys", T.BinaryType(), False),
            T.StructField("values", T.BinaryType(), False),
        ]
    )


def _by_range(keys: np.ndarray, values: np.ndarray, starts: np.ndarray):
    """Sorted 32-bit keys and their values (arrays of one length) as rows for the shuffle
    (``_by_range_schema``): one a range of the key space (``starts``) that holds keys."""
    return _rows(np.append(np.searchsorted(keys, starts), len(keys)), keys, values)


def _by_ranges(ranges: np.ndarray, count: int, keys: np.ndarray, values: np.ndarray):
    """Keys and their values in any order, each with its range (of ``count``), as the rows of
    ``_by_range``."""
    order = np.argsort(ranges, kind="stable")
    bounds = np.searchsorted(ranges[order], np.arange(count + 1))
    return _rows(bounds, keys[order], values[order])


def _rows(bounds: np.ndarray, keys: np.ndarray, values: np.ndarray):
    """The rows of ``_by_range_schema`` for keys and values grouped by range, range ``r``
    from ``bounds[r]`` to ``bounds[r + 1]``."""
    import pyarrow as pa

    held = np.flatnonzero(bounds[1:] > bounds[:-1])
    return pa.RecordBatch.from_arrays(
        [
            pa.array(held.astype(np.int32)),
            pa.array([keys[bounds[r] : bounds[r + 1]].tobytes() for r in held], pa.binary()),
            pa.array([values[bounds[r] : bounds[r + 1]].tobytes() for r in held], pa.binary()),
        ],
        names=["range", "keys", "values"],
    )


def _gathered(batches: Iterator, value_type, key_type=np.uint32) -> Optional[Tuple[np.ndarray, np.ndarray]]:
    """The keys (of ``key_type``) and values (of ``value_type``) of every row of
    ``_by_range_schema`` in ``batches``, one row after another; None for no rows."""
    keys, values = [], []
    for batch in batches:
        keys.append(_binary_values(batch.column("keys"), key_type))
        values.append(_binary_values(batch.column("values"), value_type))
    if not keys:
        return None
    return np.concatenate(keys), np.concatenate(values)


def _binary_values(column, dtype) -> np.ndarray:
    """The values of an Arrow binary column whose every row is an array of ``dtype``, one
    row after another."""
    from .common import _binary_buffers

    offsets, data = _binary_buffers(column)
    return data[offsets[0] : offsets[-1]].view(dtype)


def _distinct_pairs(x: np.ndarray, y: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """The distinct (x, y) pairs of two aligned arrays, sorted by x, then y."""
    order = np.lexsort((y, x))
    x, y = x[order], y[order]
    new = np.ones(len(x), bool)
    new[1:] = (x[1:] != x[:-1]) | (y[1:] != y[:-1])
    return x[new], y[new]
