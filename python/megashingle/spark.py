"""megashingle on Apache Spark: the stories of a corpus larger than one machine.

``python -m megashingle.spark --input PATH --output DIR`` reads what ``megashingle cluster``
reads, with the same ids: folders of ``.txt``/``.html``/``.htm``/``.eml`` files (id: the path
relative to the folder), single such files (id: the file name), CSV with a header and JSONL
(each also ``.gz``/``.zst``), and Parquet (Spark's reader). Several ``--input`` are one
collection; a repeated id keeps its first record in input order, as the command does.

Record and document files are listed on the driver and read on the executors with the
library's own readers (``RecordReader``); texts never pass through the JVM, and each text is
read and shingled once. Every document gets a number, (file position << 32) | record number,
used for all shuffles instead of its id.

The passes, each over the Rust library:

1. reading: each record's id, number and shingle sets (``Sketcher.shingle_packed``: main
   set, page set, word count and lead, one binary value per document), kept; repeated ids,
   counts and the reports of skipped records come to the driver (a shuffle of ids only);
2. document frequency: each partition's page sets counted and summed by shingle; the
   shingles in at least ``boilerplate.min-documents`` pages broadcast;
3. story frequency (``boilerplate.min-stories``): a first clustering, its pairs verified from
   the minima only (``cluster.verify = "estimate"``), as the command makes it; the shingles
   found in at least ``min-stories`` of its stories join the boilerplate (one shuffle of
   distinct (shingle, story) rows);
4. sketches (``Sketcher.sketch_sets_packed``: from the kept sets, one binary value per
   document) and candidate keys; the sketches are hash-partitioned by document number once
   and kept;
5. candidate pairs of document numbers from the keys, with the library's bucket rules (all
   pairs up to 16 documents, a star from the smallest id up to ``cluster.max-bucket``);
6. groups: the connected components of the candidate pairs, by one union-find on the driver
   when they are at most ``--max-local-pairs`` (default 50 million), else large-star /
   small-star rounds (Kiveris et al., 2014). Every link lies inside a group, so every story
   does. A group of more than ``--max-group`` documents is split into the components of its
   verified links (each pair verified where the first document's sketch is);
7. each group clustered on one executor exactly as the command clusters documents
   (``cluster_group``): the grouped documents partitioned by group, sorted, and each
   partition's groups clustered in turn (one Rust call per group); lone documents stay alone.
   Each sketch moves once, to its group; no pair is verified across the network.

The first clustering (steps 4 to 7 with sketches without their sets) and the final one share
the code.

Adaptive query execution is turned off in the job's own session: the job sets its partitions
itself, and adaptive execution would run every query stage as a Spark job of its own.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import sys
import tempfile
import uuid
import warnings
from dataclasses import dataclass, field
from typing import Callable, Iterator, List, Optional, Tuple

import numpy as np

import megashingle
from megashingle import Config

__all__ = ["InputError", "cluster", "cluster_files", "main"]

ALL_PAIRS_BUCKET = 16
DOCUMENT_EXTENSIONS = ("txt", "html", "htm", "eml")
RECORD_EXTENSIONS = ("csv", "jsonl", "ndjson", "json")
DEFAULT_MAX_LOCAL_PAIRS = 50_000_000
DEFAULT_MAX_GROUP = 500_000
# A record file larger than this is read by several tasks, each keeping every k-th record.
SPLIT_BYTES = 32 << 20
MAX_SPLIT = 8

log = logging.getLogger("megashingle.spark")


class InputError(ValueError):
    """Input or setup the job cannot use: its message is one line for the user."""


def _phase(spark, name: str) -> None:
    """Names the Spark jobs that follow (in the Spark UI and the event log)."""
    spark.sparkContext.setJobDescription(f"megashingle: {name}")


def _config_toml(config: Optional[Config]) -> str:
    return (config or Config()).to_toml()


# ---------------------------------------------------------------------------------------------
# Workers' Python


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


# ---------------------------------------------------------------------------------------------
# Inputs


def _inner_extension(name: str) -> str:
    """The extension that tells a file's format: the one before ``.gz``/``.zst``, lower case."""
    lowered = os.path.basename(name).lower()
    stem, ext = os.path.splitext(lowered)
    if ext in (".gz", ".zst"):
        ext = os.path.splitext(stem)[1]
    return ext.lstrip(".")


def _is_remote(path: str) -> bool:
    return "://" in path and not path.startswith("file://")


def _walk(folder: str) -> List[str]:
    """The files under ``folder`` as the command lists them: hidden names left out, in path
    order (component by component)."""
    found: List[Tuple[Tuple[str, ...], str]] = []

    def visit(at: str, parts: Tuple[str, ...]) -> None:
        try:
            entries = list(os.scandir(at))
        except OSError as e:
            raise InputError(f"{at}: cannot open: {e.strerror or e}") from None
        for entry in entries:
            if entry.name.startswith("."):
                continue
            if entry.is_dir(follow_symlinks=True):
                visit(entry.path, parts + (entry.name,))
            else:
                found.append((parts + (entry.name,), entry.path))

    visit(folder, ())
    found.sort(key=lambda f: [p.encode("utf-8", "surrogateescape") for p in f[0]])
    return [path for _, path in found]


@dataclass
class Inputs:
    """What the job reads: files for the library's readers, as (path, id) in the command's
    order (an id for a document file of a folder), Parquet files, and the files of folders
    left out for their extension. ``positions`` gives every file's place in the collection's
    order (record files and Parquet files share it)."""

    files: List[Tuple[str, Optional[str]]] = field(default_factory=list)
    file_positions: List[int] = field(default_factory=list)
    parquet: List[str] = field(default_factory=list)
    parquet_positions: List[int] = field(default_factory=list)
    remote: List[Tuple[str, str]] = field(default_factory=list)
    ignored: int = 0
    names: List[str] = field(default_factory=list)
    count: int = 0

    def add_file(self, path: str, doc_id: Optional[str]) -> None:
        self.files.append((path, doc_id))
        self.file_positions.append(self.count)
        self.count += 1

    def add_parquet(self, path: str) -> None:
        self.parquet.append(path)
        self.parquet_positions.append(self.count)
        self.count += 1

    def source(self, position: int) -> str:
        """The file at a position, for messages."""
        if position in self._by_position:
            return self._by_position[position]
        return "?"

    @property
    def _by_position(self) -> dict:
        table = {p: f[0] for p, f in zip(self.file_positions, self.files)}
        table.update(dict(zip(self.parquet_positions, self.parquet)))
        return table


def plan_inputs(paths: List[str], input_format: Optional[str] = None) -> Inputs:
    """Lists the inputs on the driver: each path must exist and be readable; a folder of
    Parquet files (Spark's output) is read as Parquet, any other folder as documents."""
    inputs = Inputs(names=list(paths))
    for path in paths:
        if _is_remote(path):
            fmt = input_format or {"csv": "csv", "parquet": "parquet"}.get(
                _inner_extension(path), "jsonl" if _inner_extension(path) in RECORD_EXTENSIONS else "parquet"
            )
            inputs.remote.append((path, fmt))
            continue
        local = path[len("file://"):] if path.startswith("file://") else path
        try:
            st = os.stat(local)
        except OSError as e:
            raise InputError(f"{path}: cannot open: {e.strerror or e}") from None
        if os.path.isdir(local):
            files = _walk(local)
            visible = [f for f in files if not os.path.basename(f).startswith("_")]
            if visible and input_format is None and all(_inner_extension(f) == "parquet" for f in visible):
                for f in visible:
                    inputs.add_parquet(f)
                continue
            for f in files:
                if _inner_extension(f) not in DOCUMENT_EXTENSIONS:
                    inputs.ignored += 1
                    continue
                rel = os.path.relpath(f, local).replace(os.sep, "/")
                inputs.add_file(f, rel)
            continue
        if not os.access(local, os.R_OK):
            raise InputError(f"{path}: cannot open: Permission denied")
        if input_format in (None, "parquet") and _inner_extension(local) == "parquet" or input_format == "parquet":
            inputs.add_parquet(local)
        else:
            del st
            inputs.add_file(local, None)
    return inputs


# ---------------------------------------------------------------------------------------------
# Reading on the executors


def _string_array(offsets: np.ndarray, data: np.ndarray):
    import pyarrow as pa

    return pa.LargeStringArray.from_buffers(
        len(offsets) - 1, pa.py_buffer(offsets.astype(np.int64)), pa.py_buffer(data)
    )


def _file_rows(inputs: Inputs, parallelism: int) -> List[tuple]:
    """The read tasks' rows: (position, path, id, stride, part). A large record file is read
    by up to ``MAX_SPLIT`` tasks, each keeping every stride-th record."""
    rows = []
    record_files = [f for f in inputs.files if f[1] is None]
    for position, (path, doc_id) in zip(inputs.file_positions, inputs.files):
        stride = 1
        if doc_id is None and _inner_extension(path) not in DOCUMENT_EXTENSIONS:
            size = os.path.getsize(path)
            if size > SPLIT_BYTES:
                stride = max(1, min(MAX_SPLIT, parallelism // max(1, len(record_files)), size // SPLIT_BYTES))
        for part in range(stride):
            rows.append((position, path, doc_id, stride, part))
    return rows


@dataclass
class Reading:
    """How the collection is read: the files' rows for the library's readers, the Parquet and
    remote inputs as DataFrames, and the columns."""

    spark: object
    inputs: Inputs
    id_column: str
    text_column: str
    input_format: Optional[str]

    def _files_frame(self):
        from pyspark.sql import types as T

        sc = self.spark.sparkContext
        rows = _file_rows(self.inputs, sc.defaultParallelism)
        schema = T.StructType(
            [
                T.StructField("position", T.LongType(), False),
                T.StructField("path", T.StringType(), False),
                T.StructField("doc_id", T.StringType(), True),
                T.StructField("stride", T.LongType(), False),
                T.StructField("part", T.LongType(), False),
            ]
        )
        slices = max(1, min(len(rows), sc.defaultParallelism * 4))
        return self.spark.createDataFrame(sc.parallelize(rows, slices), schema)

    def _table_frames(self):
        """Parquet and remote inputs as (position, row, id, text) DataFrames."""
        from pyspark.sql import functions as F

        frames = []
        if self.inputs.parquet:
            df = self.spark.read.parquet(*self.inputs.parquet)
            self._check_columns(df, ", ".join(self.inputs.parquet))
            positions = dict(zip(self.inputs.parquet, self.inputs.parquet_positions))
            path_col = F.col("_metadata.file_path")
            mapping = F.create_map(
                *[x for p, pos in positions.items() for x in (F.lit("file://" + os.path.abspath(p)), F.lit(pos))]
            )
            frames.append(
                df.select(
                    F.coalesce(mapping[path_col], mapping[F.regexp_replace(path_col, "^file:/+", "file:///")]).cast("long").alias("position"),
                    (F.col("_metadata.row_index") + 1).alias("row"),
                    F.col(self.id_column).cast("string").alias("doc_id"),
                    F.col(self.text_column).cast("string").alias("text"),
                )
            )
        for path, fmt in self.inputs.remote:
            if fmt == "csv":
                df = self.spark.read.csv(path, header=True, multiLine=True, escape='"')
            elif fmt == "jsonl":
                df = self.spark.read.json(path)
            else:
                df = self.spark.read.parquet(path)
            self._check_columns(df, path)
            position = self.inputs.count
            self.inputs.count += 1
            frames.append(
                df.select(
                    F.lit(0).cast("long").alias("position"),
                    (F.monotonically_increasing_id() + F.lit(position << 58)).alias("row"),
                    F.col(self.id_column).cast("string").alias("doc_id"),
                    F.col(self.text_column).cast("string").alias("text"),
                )
            )
        return frames

    def _check_columns(self, df, name: str) -> None:
        for column, role in ((self.id_column, "id"), (self.text_column, "text")):
            if column not in df.columns:
                raise InputError(
                    f"{name}: no column `{column}` (the {role} column); columns found: "
                    f"{', '.join(df.columns)}; name the columns with --id-column/--text-column"
                )

    def prepare(self) -> None:
        self._tables = self._table_frames() if (self.inputs.parquet or self.inputs.remote) else []

    def over_records(self, work: Callable, schema):
        """``work(batches)`` run over every record, where each batch is a dict with ``num``
        (int64), ``ids`` and ``texts`` (Arrow string arrays), ``line`` (int64) and
        ``position``; it yields Arrow record batches of ``schema``. One DataFrame over all
        inputs; reports of skipped records come as batches with a ``warning`` column when
        ``schema`` has one."""
        frames = []
        id_column, text_column, fmt = self.id_column, self.text_column, self.input_format
        wants_warnings = "warning" in schema.fieldNames()
        fmt_rust = fmt if fmt in ("csv", "jsonl") else None

        def warning_batch(messages: List[str]):
            import pyarrow as pa

            arrays = []
            for f in schema.fields:
                if f.name == "warning":
                    arrays.append(pa.array(messages, pa.string()))
                else:
                    arrays.append(pa.nulls(len(messages), _arrow_type(f.dataType)))
            return pa.RecordBatch.from_arrays(arrays, names=schema.fieldNames())

        if self.inputs.files:

            def from_files(batches: Iterator) -> Iterator:
                from megashingle import _megashingle as ext

                def records():
                    for batch in batches:
                        rows = batch.to_pylist()
                        # One reader per (stride, part) group of rows, in order.
                        groups: dict = {}
                        for r in rows:
                            groups.setdefault((r["stride"], r["part"]), []).append(r)
                        for (stride, part), group in groups.items():
                            files = [(r["path"], r["doc_id"]) for r in group]
                            positions = np.array([r["position"] for r in group], dtype=np.int64)
                            reader = ext.RecordReader(files, id_column, text_column, fmt_rust, stride, part)
                            while True:
                                made = reader.next_batch()
                                if made is None:
                                    break
                                position = positions[made["file"]]
                                num = (position << 32) | made["serial"]
                                ids = _string_array(made["id_offsets"], made["id_data"])
                                texts = _string_array(made["text_offsets"], made["text_data"])
                                yield {"num": num, "ids": ids, "texts": texts, "line": made["line"], "position": position}
                            if wants_warnings and reader.warnings():
                                yield {"warnings": reader.warnings()}

                pending: List[str] = []
                for out in work(_only_records(records(), pending)):
                    yield out
                if wants_warnings and pending:
                    yield warning_batch(pending)

            frames.append(self._files_frame().mapInArrow(from_files, schema))

        names = self.inputs._by_position

        def _table_origin(position: int, row: int) -> str:
            return f"{names.get(position, 'input')}, row {row}"

        for table in self._tables:

            def from_table(batches: Iterator) -> Iterator:
                import pyarrow as pa
                import pyarrow.compute as pc

                def records():
                    for batch in batches:
                        position = batch.column("position").to_numpy(zero_copy_only=False).astype(np.int64)
                        row = batch.column("row").to_numpy(zero_copy_only=False).astype(np.int64)
                        num = (position << 32) | row
                        ids = batch.column("doc_id")
                        texts = batch.column("text")
                        blank = pc.fill_null(pc.equal(pc.utf8_trim_whitespace(ids), ""), False)
                        bad = pc.or_(pc.or_(pc.is_null(ids), pc.is_null(texts)), blank).to_numpy(zero_copy_only=False)
                        messages = []
                        for i in np.flatnonzero(bad):
                            if not ids[i].is_valid:
                                what = f"null id in `{id_column}`; every record needs an id"
                            elif not texts[i].is_valid:
                                what = f"null text in `{text_column}`"
                            else:
                                what = f"empty id in `{id_column}`; every record needs an id"
                            where = _table_origin(int(position[i]), int(row[i]))
                            messages.append(f"{where}: {what}; record skipped")
                        keep = ~bad
                        mask = pa.array(keep)
                        yield {
                            "num": num[keep],
                            "ids": ids.filter(mask),
                            "texts": texts.filter(mask),
                            "line": row[keep],
                            "position": position[keep],
                        }
                        if messages:
                            yield {"warnings": messages}

                pending: List[str] = []
                for out in work(_only_records(records(), pending)):
                    yield out
                if wants_warnings and pending:
                    yield warning_batch(pending)

            frames.append(table.mapInArrow(from_table, schema))
        out = frames[0]
        for more in frames[1:]:
            out = out.unionByName(more)
        return out


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


def _only_records(items: Iterator, warnings: List[str]) -> Iterator:
    """The record batches of ``items``; the warnings they carry are appended to ``warnings``."""
    for item in items:
        if "warnings" in item:
            warnings.extend(item["warnings"])
        elif len(item["num"]):
            yield item


# ---------------------------------------------------------------------------------------------
# Pass 1: reading


@dataclass
class Census:
    """What reading found: records kept, repeated ids (reported, later ones dropped),
    reports of skipped records."""

    records: int
    kept: int
    duplicates: List[str]
    dropped: np.ndarray
    skipped: int
    warnings: List[str]


def _read_sets(reading: Reading, config_toml: str):
    """The one pass over the texts: each record's number, id and line, and its shingle sets
    packed into one binary value (``Sketcher.shingle_packed``); reports of skipped records as
    rows with a ``warning``. Every later stage starts from these sets, not from the texts."""
    from pyspark.sql import types as T

    schema = T.StructType(
        [
            T.StructField("num", T.LongType(), True),
            T.StructField("doc_id", T.StringType(), True),
            T.StructField("line", T.LongType(), True),
            T.StructField("sets", T.BinaryType(), True),
            T.StructField("warning", T.StringType(), True),
        ]
    )

    def shingle(records: Iterator) -> Iterator:
        import pyarrow as pa

        sketcher = megashingle.Sketcher(megashingle._config_from_toml(config_toml), threads=1)
        for r in records:
            offsets, data = sketcher._inner.shingle_packed(megashingle._column(r["texts"]))
            sets = pa.BinaryArray.from_buffers(
                pa.binary(), len(offsets) - 1, [None, pa.py_buffer(offsets), pa.py_buffer(data)]
            )
            yield pa.RecordBatch.from_arrays(
                [pa.array(r["num"]), r["ids"].cast(pa.string()), pa.array(r["line"]), sets, pa.nulls(len(r["num"]), pa.string())],
                names=["num", "doc_id", "line", "sets", "warning"],
            )

    return reading.over_records(shingle, schema)


def _census(rows, inputs: Inputs, sample: int = 20) -> Census:
    """Records, skipped records and repeated ids of the read rows (``_read_sets``)."""
    from pyspark.sql import functions as F

    totals = rows.agg(
        F.count("num").alias("records"),
        F.count("warning").alias("skipped"),
    ).collect()[0]
    warnings = [r.warning for r in rows.where(F.col("warning").isNotNull()).select("warning").limit(sample).collect()]
    repeated = (
        rows.where(F.col("num").isNotNull())
        .groupBy("doc_id")
        .agg(F.count("*").alias("n"), F.sort_array(F.collect_list(F.struct("num", "line"))).alias("at"))
        .where(F.col("n") > 1)
        .collect()
    )
    messages = []
    drop = []
    for r in sorted(repeated, key=lambda r: r.at[0].num):
        first = r.at[0]
        for later in r.at[1:]:
            drop.append(later.num)
            if len(messages) < sample:
                messages.append(
                    f"{_origin(inputs, later.num, later.line)}: duplicate id {json.dumps(r.doc_id, ensure_ascii=False)}, first seen at "
                    f"{_origin(inputs, first.num, first.line)}; ids must be unique; record skipped"
                )
    dropped = np.array(sorted(drop), dtype=np.int64)
    return Census(
        records=int(totals.records),
        kept=int(totals.records) - len(dropped),
        duplicates=messages,
        dropped=dropped,
        skipped=int(totals.skipped) + len(dropped),
        warnings=warnings,
    )


def _origin(inputs: Inputs, num: int, line: int) -> str:
    """A record's place as the command names it: ``file:line``, or the file for a document."""
    source = inputs.source(num >> 32)
    return f"{source}:{line}" if line > 0 else source


# ---------------------------------------------------------------------------------------------
# Pass 2: document frequency


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


def _page_counts(documents, at_least: int) -> tuple:
    """The shingles in the page sets of at least ``at_least`` documents and their counts:
    counted per partition from the read sets, summed by shingle across the cluster; the
    result (far smaller than the corpus) comes to the driver to be broadcast."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    def count(batches: Iterator) -> Iterator:
        import pyarrow as pa

        for batch in batches:
            values = megashingle._megashingle.packed_page_values(*_binary_buffers(batch.column("sets")))
            keys, counts = np.unique(values, return_counts=True)
            yield pa.RecordBatch.from_arrays(
                [pa.array(keys.view(np.int32)), pa.array(counts.astype(np.int64))],
                names=["shingle", "n"],
            )

    schema = T.StructType([T.StructField("shingle", T.IntegerType()), T.StructField("n", T.LongType())])
    common = (
        documents.select("sets")
        .mapInArrow(count, schema)
        .groupBy("shingle")
        .agg(F.sum("n").alias("n"))
        .where(F.col("n") >= at_least)
        .toArrow()
    )
    shingles = common.column("shingle").to_numpy().astype(np.int32).view(np.uint32)
    counts = common.column("n").to_numpy().astype(np.int64)
    return shingles, counts


# ---------------------------------------------------------------------------------------------
# Sketches


def _ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The indices of the ranges [start, start + length), concatenated."""
    lengths = lengths.astype(np.int64)
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, np.int64)
    ends = np.cumsum(lengths)
    shift = np.repeat(starts.astype(np.int64) - (ends - lengths), lengths)
    return np.arange(total, dtype=np.int64) + shift


def _low_bytes(offsets: np.ndarray, data: np.ndarray, minima: int):
    """The low byte of each minimum of packed sketches (see ``pack_sketch`` in the extension:
    six u32s of head, the third the number of minima, then the minima), ``minima`` bytes a
    sketch, zeros where a sketch has none: a binary column."""
    import pyarrow as pa

    n = len(offsets) - 1
    words = data[: offsets[-1]].view("<u4") if n else np.zeros(0, np.uint32)
    heads = offsets[:-1].astype(np.int64) // 4
    low = np.zeros((n, minima), np.uint8)
    if n:
        counts = np.minimum(words[heads + 2], minima)
        place = np.arange(minima)
        valid = place[None, :] < counts[:, None]
        at = (heads + 6)[:, None] + place[None, :]
        low[valid] = (words[at[valid]] & 0xFF).astype(np.uint8)
    value_offsets = (np.arange(n + 1, dtype=np.int32) * minima).astype(np.int32)
    return pa.BinaryArray.from_buffers(pa.binary(), n, [None, pa.py_buffer(value_offsets), pa.py_buffer(low.tobytes())])


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


def _sketches(documents, config_toml: str, boilerplate_broadcast, with_sets: bool = True):
    """Each document's number, id, packed sketch and candidate keys, made from its read sets;
    without its shingle set (its size kept) unless ``with_sets``, for estimated verification."""
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
            boilerplate=boilerplate_broadcast.value,
            threads=1,
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
                    pa.BinaryArray.from_buffers(pa.binary(), len(offsets) - 1, [None, pa.py_buffer(offsets), pa.py_buffer(data)]),
                    _low_bytes(offsets, data, minima),
                    pa.ListArray.from_arrays(pa.array(key_offsets.astype(np.int32)), pa.array(keys.view(np.int64))),
                ],
                schema=arrow_schema,
            )

    return documents.select("num", "doc_id", "sets").mapInArrow(sketch, _sketch_schema())


# ---------------------------------------------------------------------------------------------
# Candidates, verification, components, placement


def _candidate_pairs(sketches, max_bucket: int):
    """Distinct pairs (a < b) of document numbers sharing a candidate key, with the bucket
    rules of the library: all pairs up to 16 documents, a star from the document with the
    smallest id up to ``max_bucket``, none past it."""
    from pyspark.sql import functions as F

    exploded = sketches.where("comparable").select("num", F.explode("keys").alias("key"))
    buckets = (
        exploded.groupBy("key")
        .agg(F.array_sort(F.collect_set("num")).alias("docs"))
        .withColumn("n", F.size("docs"))
        .where((F.col("n") >= 2) & (F.col("n") <= max_bucket))
    )
    small = (
        buckets.where(F.col("n") <= ALL_PAIRS_BUCKET)
        .select("docs", "n", F.posexplode("docs").alias("i", "a"))
        .select("a", F.explode(F.expr("slice(docs, i + 2, n)")).alias("b"))
    )
    large = buckets.where(F.col("n") > ALL_PAIRS_BUCKET).select("key", F.explode("docs").alias("num"))
    hubs = (
        large.join(sketches.select("num", "doc_id"), "num")
        .groupBy("key")
        .agg(F.min(F.struct("doc_id", "num")).alias("hub"), F.collect_list("num").alias("docs"))
        .select(F.col("hub.num").alias("hub"), F.explode("docs").alias("other"))
        .where(F.col("hub") != F.col("other"))
        .select(F.least("hub", "other").alias("a"), F.greatest("hub", "other").alias("b"))
    )
    return small.unionByName(hubs).distinct()


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
            roots.groupBy("v").agg(F.countDistinct("r").alias("k")).where(F.col("k") > 1)
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
    return spark.createDataFrame(pa.table({"num": pa.array(nodes), "root": pa.array(roots)}), schema)


def _place(sketches, components, pairs, config_toml: str):
    """Each document's cluster, and its story (the smallest document number in it): the
    groups of ``components`` (columns num, root) clustered on the executors, each from its
    candidate pairs (``pairs``: columns root, a, b), as the command clusters them within the
    whole collection; documents in no group stay alone. A group's documents and its pairs
    travel together: one shuffle, partitioned by group."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

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
        sketch = table.column("sketch").chunk(0) if table.num_rows else None
        _, offs, data = sketch.buffers()
        offs = np.frombuffer(offs, np.int32)[sketch.offset : sketch.offset + len(sketch) + 1]
        data = np.frombuffer(data, np.uint8) if data is not None else np.zeros(0, np.uint8)
        change = np.flatnonzero(roots[1:] != roots[:-1]) + 1
        starts = np.concatenate([[0], change])
        ends = np.concatenate([change, [len(roots)]])
        out = {n: [] for n in names}
        for s, e in zip(starts.tolist(), ends.tolist()):
            # A group's documents first (pair_b -1), then its pairs (num, pair_b).
            k = s + int(np.searchsorted(pair_b[s:e], -1, side="right"))
            group_ids = doc_ids.slice(s, k - s).to_pylist()
            order = np.argsort(nums[s:k], kind="stable")
            local = lambda v: order[np.searchsorted(nums[s:k], v, sorter=order)]  # noqa: E731
            rows = megashingle._megashingle.cluster_group_packed(
                config, group_ids, (offs[s : k + 1] - offs[s]).astype(np.int32), data[offs[s] : offs[k]],
                local(nums[k:e]).astype(np.int64), local(pair_b[k:e]).astype(np.int64),
            )
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
        types = [pa.int64(), pa.string(), pa.string(), pa.int64(), pa.float64(), pa.string(), pa.int64(), pa.int64()]
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
    rows = documents.withColumn("pair_b", F.lit(-1).cast("long")).select(*columns).unionByName(
        pairs.select(
            "root",
            F.col("a").alias("num"),
            F.lit("").alias("doc_id"),
            F.lit(False).alias("comparable"),
            F.lit(bytearray()).alias("sketch"),
            F.col("b").alias("pair_b"),
        )
    )
    grouped = rows.repartition(partitions, "root").sortWithinPartitions("root", "pair_b").mapInArrow(place, out_schema)
    alone = sketches.select("num", "doc_id", "comparable").join(components, "num", "left_anti").select(
        "num",
        "doc_id",
        F.col("doc_id").alias("cluster_id"),
        F.lit(1).cast("long").alias("cluster_size"),
        F.when(F.col("comparable"), F.lit(1.0)).alias("similarity"),
        F.when(F.col("comparable"), F.lit("ok")).otherwise(F.lit("too_short")).alias("status"),
        F.lit(0).cast("long").alias("position"),
        F.col("num").alias("story"),
    )
    return grouped.unionByName(alone)


def _local_components(pairs, bound: int):
    """Components of the pairs (columns a, b) by one union-find on the driver when there are
    at most ``bound`` of them, as sorted arrays (node, root); None when there are more."""
    if pairs.count() > bound:
        return None
    table = pairs.toArrow()
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
    pairs = _candidate_pairs(placed, int(config.get("cluster.max-bucket"))).persist()
    _phase(spark, f"{phase}candidates and groups")
    groups = _local_components(pairs, max_local_pairs)
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


def _prefilter(config: Config) -> float:
    """The estimated Jaccard below which verification rejects a pair before anything else:
    half the weakest link in force (see ``Verifier::prefilter`` in the library)."""
    similarity = float(config.get("cluster.min-similarity"))
    attach = float(config.get("cluster.attach-similarity"))
    return (min(attach, similarity) if attach > 0 else similarity) / 2


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
        log.info("%d groups of more than %d documents (largest %d): split by the %s", len(large), max_group, sizes.max(), how)
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
            yield pa.RecordBatch.from_arrays([batch.column("a").filter(mask), batch.column("b").filter(mask)], names=["a", "b"])

    schema = T.StructType([T.StructField("a", T.LongType(), False), T.StructField("b", T.LongType(), False)])
    return both.select("a", "b", "low_a", "low_b").mapInArrow(estimate, schema)


def _fixed_bytes(column) -> np.ndarray:
    """A binary column of equal-length values as a 2-D uint8 array (one row a value)."""
    offsets, data = _binary_buffers(column)
    width = int(offsets[1] - offsets[0]) if len(offsets) > 1 else 0
    return data[offsets[0] : offsets[0] + width * (len(offsets) - 1)].reshape(-1, width) if width else np.zeros((len(offsets) - 1, 0), np.uint8)


def _stories(spark, sketches, config: Config, max_local_pairs: int, max_group: int, phase: str = ""):
    """Each sketched document's cluster (the columns of ``_place``): the sketches partitioned
    by document number, candidate pairs, their groups, and each group clustered on one
    executor as the command clusters documents; and what is kept for it (the partitioned
    sketches, the pairs, the groups when they are a DataFrame)."""
    partitions = int(spark.conf.get("spark.sql.shuffle.partitions"))
    placed = sketches.repartition(partitions, "num").persist()
    groups, pairs = _groups(spark, placed, config, max_local_pairs, max_group, phase)
    frame = _components_frame(spark, groups) if isinstance(groups, tuple) else groups
    _phase(spark, f"{phase}stories")
    stories = _place(placed, frame, _pairs_in_groups(spark, pairs, groups), _config_toml(config))
    return stories, (placed, pairs, groups)


def _pairs_in_groups(spark, pairs, groups):
    """The candidate pairs (a, b) whose two documents are in one group, with the group
    (columns root, a, b): looked up in the broadcast arrays of the groups when they are on
    the driver, else joined with them."""
    import pyarrow as pa
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    if not isinstance(groups, tuple):
        of_a = groups.select(F.col("num").alias("a"), "root")
        of_b = groups.select(F.col("num").alias("b"), F.col("root").alias("root_b"))
        return pairs.join(of_a, "a").join(of_b, "b").where(F.col("root") == F.col("root_b")).select("root", "a", "b")
    broadcast = spark.sparkContext.broadcast(groups)

    def tag(batches: Iterator) -> Iterator:
        nodes, roots = broadcast.value

        def root_of(v: np.ndarray) -> np.ndarray:
            if not len(nodes):
                return np.full(len(v), -1, np.int64)
            at = np.searchsorted(nodes, v).clip(max=len(nodes) - 1)
            return np.where(nodes[at] == v, roots[at], -1)

        for batch in batches:
            a, b = batch.column("a").to_numpy(), batch.column("b").to_numpy()
            root = root_of(a)
            keep = (root >= 0) & (root == root_of(b))
            yield pa.RecordBatch.from_arrays([pa.array(root[keep]), pa.array(a[keep]), pa.array(b[keep])], names=["root", "a", "b"])

    schema = T.StructType([T.StructField(n, T.LongType(), False) for n in ("root", "a", "b")])
    return pairs.mapInArrow(tag, schema)


def _distinct_pairs(x: np.ndarray, y: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """The distinct (x, y) pairs of two aligned arrays, sorted by x, then y."""
    order = np.lexsort((y, x))
    x, y = x[order], y[order]
    new = np.ones(len(x), bool)
    new[1:] = (x[1:] != x[:-1]) | (y[1:] != y[:-1])
    return x[new], y[new]


def _main_frequent(sets, frequent: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """The shingles of each document's main set (packed sets, see ``_read_sets``) found in the
    sorted array ``frequent``: values, and the index of the document each comes from."""
    offsets, data = _binary_buffers(sets)
    words = data[: offsets[-1]].view("<u4") if len(data) else np.zeros(0, np.uint32)
    heads = offsets[:-1].astype(np.int64) // 4
    lead, size = words[heads + 1].astype(np.int64), words[heads + 2].astype(np.int64)
    values = words[_ranges(heads + 4 + lead, size)]
    owner = np.repeat(np.arange(len(heads)), size)
    if not len(frequent):
        return values[:0], owner[:0]
    at = np.searchsorted(frequent, values).clip(max=len(frequent) - 1)
    hit = frequent[at] == values
    return values[hit], owner[hit]


def _story_frequency(spark, documents, frequent_broadcast, components, min_stories: int) -> np.ndarray:
    """The shingles of ``frequent_broadcast`` found in the main sets of documents of at least
    ``min_stories`` stories, where a story is a connected component of the first clustering's
    links (a document in no link is a story of its own). A document's set as the first
    clustering sketched it differs from its main set only by boilerplate, which is not among
    the frequent shingles. Each partition sends its distinct (shingle, story) rows,
    partitioned by shingle, once; each shingle's stories are counted where its rows arrive."""
    import pyarrow as pa
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    partitions = int(spark.conf.get("spark.sql.shuffle.partitions"))
    rows_schema = T.StructType([T.StructField("shingle", T.IntegerType(), False), T.StructField("story", T.LongType(), False)])

    def distinct_rows(story: np.ndarray, sets) -> "pa.RecordBatch":
        values, owner = _main_frequent(sets, frequent_broadcast.value)
        shingle, story = _distinct_pairs(values.view(np.int32), story[owner])
        return pa.RecordBatch.from_arrays([pa.array(shingle), pa.array(story)], names=["shingle", "story"])

    if isinstance(components, tuple):
        nodes_b = spark.sparkContext.broadcast(components)

        def rows(batches: Iterator) -> Iterator:
            nodes, roots = nodes_b.value
            for batch in batches:
                num = batch.column("num").to_numpy()
                at = np.searchsorted(nodes, num).clip(max=max(len(nodes) - 1, 0))
                story = np.where(nodes[at] == num, roots[at], num) if len(nodes) else num
                yield distinct_rows(story, batch.column("sets"))

        story_rows = documents.select("num", "sets").mapInArrow(rows, rows_schema)
    else:
        nodes_b = None

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
        shingles, stories = [], []
        for batch in batches:
            shingles.append(batch.column("shingle").to_numpy())
            stories.append(batch.column("story").to_numpy())
        if not shingles:
            return
        shingle, _ = _distinct_pairs(np.concatenate(shingles), np.concatenate(stories))
        keys, n = np.unique(shingle, return_counts=True)
        spread = keys[n >= min_stories].astype(np.int32)
        yield pa.RecordBatch.from_arrays([pa.array(spread)], names=["shingle"])

    spread = (
        story_rows.repartition(partitions, "shingle")
        .mapInArrow(count, T.StructType([T.StructField("shingle", T.IntegerType(), False)]))
        .toArrow()
    )
    if nodes_b is not None:
        nodes_b.unpersist()
    return spread.column("shingle").to_numpy().astype(np.int32).view(np.uint32)


# ---------------------------------------------------------------------------------------------
# The job


@dataclass
class Result:
    """The story table (a DataFrame: doc_id, cluster_id, cluster_size, similarity, status) and
    what reading found."""

    table: object
    census: Census
    inputs: Inputs
    placed: object = None

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
    from pyspark.sql import functions as F

    config = config or Config()
    sc = spark.sparkContext
    _use_own_python(sc)
    _check_workers(sc)
    inputs = plan_inputs(paths, input_format)
    reading = Reading(spark, inputs, id_col, text_col, input_format)
    try:
        reading.prepare()
    except InputError:
        raise
    except Exception as e:  # noqa: BLE001
        raise InputError(f"{', '.join(inputs.parquet or [p for p, _ in inputs.remote])}: cannot be read: {_one_line(e)}") from None
    if not inputs.files and not inputs.parquet and not inputs.remote:
        raise InputError(
            f"no documents in {', '.join(paths)}: nothing to cluster, nothing written"
            + (f" ({inputs.ignored} files left out for their extension; documents are .txt, .html, .htm, .eml)" if inputs.ignored else "")
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
            f"no documents in {', '.join(paths)}: nothing to cluster, nothing written"
            + (" (every record was skipped)" if census.skipped else "")
        )
    documents = rows.where(F.col("num").isNotNull()).select("num", "doc_id", "sets")
    if len(census.dropped):
        dropped = spark.createDataFrame([(int(n),) for n in census.dropped], "num long")
        documents = documents.join(F.broadcast(dropped), "num", "left_anti")
    placed = _cluster_documents(spark, documents, config, max_local_pairs, max_group).persist()
    return Result(_ordered(placed, ordered), census, inputs, placed)


def _input_error(e: Exception) -> Exception:
    """A reader's error (raised in a Python worker) as a one-line InputError."""
    text = str(e)
    for line in reversed(text.splitlines()):
        if line.startswith("ValueError: "):
            return InputError(line[len("ValueError: "):])
        if line.startswith("megashingle.spark.InputError: "):
            return InputError(line[len("megashingle.spark.InputError: "):])
    return e


def _cluster_documents(spark, documents, config: Config, max_local_pairs: int, max_group: int):
    """The stories of read documents (columns num, doc_id, sets): document frequency, story
    frequency over a first clustering, the sketches and the final clustering, all from the
    sets read once."""
    sc = spark.sparkContext
    min_documents = int(config.get("boilerplate.min-documents"))
    min_stories = int(config.get("boilerplate.min-stories"))
    floor = min([n for n in (min_documents, min_stories) if n > 0], default=0)
    _phase(spark, "document frequency")
    shingles, counts = _page_counts(documents, floor) if floor > 0 else (np.zeros(0, np.uint32),) * 2
    boilerplate = shingles[counts >= min_documents] if min_documents > 0 else np.zeros(0, np.uint32)
    # Story frequency can only add shingles found in `min-stories` pages that are not
    # boilerplate already.
    frequent = np.sort(shingles[(counts >= min_stories) & ((counts < min_documents) | (min_documents == 0))])
    log.info(
        "%d boilerplate shingles by document frequency; %d more in %d pages or more, for story frequency",
        len(boilerplate), len(frequent), min_stories,
    )
    if min_stories > 0 and len(frequent) > 0:
        # The first clustering, as the command makes it: pairs verified from the minima.
        first = config.replace({"cluster.verify": "estimate"})
        _phase(spark, "first clustering: sketches")
        sketches = _sketches(documents, _config_toml(first), sc.broadcast(boilerplate), with_sets=False)
        first_placed, kept = _stories(spark, sketches, first, max_local_pairs, max_group, phase="first clustering: ")
        stories = _story_numbers(first_placed, local=isinstance(kept[2], tuple))
        for frame in kept:
            if not isinstance(frame, tuple):
                frame.unpersist()
        _phase(spark, "story frequency")
        frequent_broadcast = sc.broadcast(frequent)
        spread = _story_frequency(spark, documents, frequent_broadcast, stories, min_stories)
        if not isinstance(stories, tuple):
            stories.unpersist()
        frequent_broadcast.unpersist()
        boilerplate = np.union1d(boilerplate, spread)
        log.info("%d boilerplate shingles by story frequency", len(spread))
    _phase(spark, "sketches")
    sketches = _sketches(documents, _config_toml(config), sc.broadcast(boilerplate))
    placed, _ = _stories(spark, sketches, config, max_local_pairs, max_group)
    return placed


def _story_numbers(placed, local: bool):
    """The story (its smallest document number) of each document in a story of two or more:
    sorted arrays (num, story) on the driver when ``local``, else a kept DataFrame (num, root)."""
    from pyspark.sql import functions as F

    rows = placed.where(F.col("cluster_size") > 1).select("num", F.col("story").alias("root"))
    if not local:
        rows = rows.persist()
        rows.count()
        return rows
    table = rows.toArrow()
    nums = table.column("num").to_numpy().astype(np.int64)
    order = np.argsort(nums, kind="stable")
    return nums[order], table.column("root").to_numpy().astype(np.int64)[order]


def _ordered(placed, ordered: bool):
    """The story table's columns, in the command's row order when ``ordered``."""
    from pyspark.sql import functions as F

    if ordered:
        placed = placed.orderBy(F.col("cluster_size").desc(), "cluster_id", "position")
    return placed.drop("position", "num", "story")


def cluster(df, id_col: str = "id", text_col: str = "text", config: Optional[Config] = None, *, ordered: bool = True, max_local_pairs: int = DEFAULT_MAX_LOCAL_PAIRS, max_group: int = DEFAULT_MAX_GROUP):
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
    _use_own_python(spark.sparkContext)
    _check_workers(spark.sparkContext)
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
    documents = _read_sets(reading, _config_toml(config)).where(F.col("num").isNotNull()).select("num", "doc_id", "sets").persist()
    return _ordered(_cluster_documents(spark, documents, config, max_local_pairs, max_group), ordered)


# ---------------------------------------------------------------------------------------------
# Command line


def _one_line(e: BaseException) -> str:
    """An exception as one line: a Python worker's last error line, else the first line of
    its message."""
    text = str(e)
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    for line in reversed(lines):
        for prefix in ("ValueError: ", "megashingle.spark.InputError: ", "RuntimeError: ", "MemoryError"):
            if line.startswith(prefix):
                return line[len(prefix):] if prefix.endswith(": ") else line
    for line in lines:
        if not line.startswith(("at ", "Traceback", "File ", "py4j", "JVM stacktrace")):
            return line[:500]
    return type(e).__name__


def _start_quietly(builder, log_path: str):
    """Starts Spark with the JVM's stderr (Spark's log, its workers' output) going to
    ``log_path``; this process's own stderr is left as it was."""
    sys.stderr.flush()
    saved = os.dup(2)
    fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.dup2(fd, 2)
        return builder.getOrCreate()
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(fd)


def main(argv: Optional[list] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m megashingle.spark",
        description="Cluster documents into stories on Apache Spark, as `megashingle cluster` does.",
    )
    parser.add_argument(
        "--input", required=True, action="append",
        help="what `megashingle cluster` reads (a folder of .txt/.html/.htm/.eml files, such a file, "
        "CSV with a header, JSONL; each also .gz/.zst) or Parquet (a file or a folder of them); "
        "repeat for several inputs read as one collection",
    )
    parser.add_argument("--output", required=True, help="folder for the result (refused if it exists, unless --overwrite)")
    parser.add_argument("--overwrite", action="store_true", help="replace the output folder if it exists")
    parser.add_argument("--master", default=None, help="Spark master URL, e.g. local[2] (default: as spark-submit sets it, else local[*])")
    parser.add_argument("--id-column", default="id")
    parser.add_argument("--text-column", default="text")
    parser.add_argument("--input-format", choices=["csv", "jsonl", "parquet"], default=None, help="format of record files whose extension says nothing (default: as the command guesses)")
    parser.add_argument("--format", choices=["csv", "parquet", "jsonl"], default="csv", help="output format (CSV part files each have a header)")
    parser.add_argument("-c", "--config", default=None, help="pipeline.toml")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override one key, e.g. cluster.min-similarity=0.4")
    parser.add_argument("--max-local-pairs", type=int, default=DEFAULT_MAX_LOCAL_PAIRS, metavar="N", help="groups found by one union-find on the driver up to N candidate pairs, in distributed rounds beyond (default 50000000)")
    parser.add_argument("--max-group", type=int, default=DEFAULT_MAX_GROUP, metavar="N", help="a group of candidates is clustered on one executor up to N documents; a larger one is split first by the pairs that can link (default 500000)")
    parser.add_argument("--debug", action="store_true", help="show Spark's log and full stack traces")
    args = parser.parse_args(argv)

    if not log.handlers:  # what was found, on stderr; other loggers are left as they are
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("megashingle.spark: %(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.INFO)

    def fail(message: str) -> int:
        print(f"megashingle.spark: error: {message}", file=sys.stderr)
        return 2

    try:
        config = Config.from_file(args.config) if args.config else Config()
        for setting in args.set:
            if "=" not in setting:
                raise ValueError(f"--set {setting}: expected KEY=VALUE, e.g. cluster.min-similarity=0.4")
            key, value = setting.split("=", 1)
            config = config.replace({key.strip(): _setting_value(value.strip())})
    except ValueError as e:
        return fail(str(e))
    output = args.output
    local_output = not _is_remote(output)
    if local_output:
        output = output[len("file://"):] if output.startswith("file://") else output
        # `stories/` names the folder `stories`: its temporary sibling must not go inside it.
        output = os.path.normpath(output)
        if os.path.exists(output) and not args.overwrite:
            return fail(f"{args.output}: the output folder exists; give another --output or --overwrite to replace it")
    try:
        plan_inputs(args.input, args.input_format)  # missing or unreadable inputs, before Spark starts
    except InputError as e:
        return fail(str(e))

    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    owned = SparkSession.getActiveSession() is None
    builder = (
        SparkSession.builder.appName("megashingle")
        .config("spark.ui.showConsoleProgress", "false")
        # The job sets its partitions itself; adaptive execution would run each query stage as
        # a Spark job of its own.
        .config("spark.sql.adaptive.enabled", "false")
    )
    if args.master:
        builder = builder.master(args.master)
    spark_log = None
    if not args.debug:
        warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas")
    try:
        if owned and not args.debug:
            spark_log = os.path.join(tempfile.gettempdir(), f"megashingle-spark-{os.getpid()}.log")
            spark = _start_quietly(builder, spark_log)
        else:
            spark = builder.getOrCreate()
    except Exception as e:  # noqa: BLE001
        if args.debug:
            raise
        return fail(f"Spark does not start: {_one_line(e)}" + (f" (Spark's log: {spark_log})" if spark_log else ""))
    failed = False
    code = 0
    try:
        result = cluster_files(
            spark, args.input, args.id_column, args.text_column, config,
            input_format=args.input_format, max_local_pairs=args.max_local_pairs, max_group=args.max_group,
        )
        table = result.table
        target = f"{output}.partial-{uuid.uuid4().hex[:8]}" if local_output else output
        if args.format == "csv":
            table = table.withColumn(
                "similarity", F.when(F.col("similarity").isNotNull(), F.format_string("%.4f", "similarity"))
            )
            writer = table.write.mode("overwrite" if not local_output else "error")
            writer.csv(target, header=True, emptyValue="", nullValue="")
        elif args.format == "jsonl":
            table.write.mode("overwrite" if not local_output else "error").json(target)
        else:
            table.write.mode("overwrite" if not local_output else "error").parquet(target)
        if local_output:
            if os.path.exists(output):
                shutil.rmtree(output)
            os.rename(target, output)
        census = result.census
        ignored = f"; {result.inputs.ignored} files left out for their extension" if result.inputs.ignored else ""
        repeated = f" ({len(census.dropped)} for a repeated id)" if len(census.dropped) else ""
        print(f"megashingle.spark: {result.summary()}{repeated}{ignored}; written to {args.output}", file=sys.stderr)
        code = 1 if census.skipped else 0
    except InputError as e:
        if args.debug:
            raise
        return fail(str(e))
    except Exception as e:  # noqa: BLE001
        if args.debug:
            raise
        failed = True
        where = f"Spark's log: {spark_log}" if spark_log else "--debug shows Spark's log"
        return fail(f"{_one_line(e)} ({where}; --debug shows the stack trace)")
    finally:
        if local_output:
            for leftover in _partials(output):
                shutil.rmtree(leftover, ignore_errors=True)
        if owned:
            spark.stop()
        if spark_log and not failed:
            try:
                os.remove(spark_log)
            except OSError:
                pass
    return code


def _partials(output: str) -> List[str]:
    parent = os.path.dirname(os.path.abspath(output)) or "."
    base = os.path.basename(os.path.abspath(output)) + ".partial-"
    try:
        return [os.path.join(parent, n) for n in os.listdir(parent) if n.startswith(base)]
    except OSError:
        return []


def _setting_value(text: str):
    """A --set value as the setting's type: bool, int, float, a list (TOML), else a string."""
    if text in ("true", "false"):
        return text == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    if text.startswith("["):
        import json

        try:
            return json.loads(text)
        except ValueError:
            pass
    return text.strip('"')


if __name__ == "__main__":
    sys.exit(main())
