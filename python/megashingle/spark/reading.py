"""Pass 1, reading: the records of every input read on the executors with the library's own
readers (``RecordReader``; Parquet and remote inputs through Spark's readers), each text read
and shingled once into its packed shingle sets, and with a time column (``--time-column``)
each record's time as the command reads it; then the census on the driver: records kept,
skipped, and repeated ids (the later ones dropped, but of two dated records, WARC records by
their ``WARC-Date``, the older: as the command drops them).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Callable, Iterator, List, Optional, Tuple

import numpy as np

import megashingle
from megashingle import InputError

from .common import INPUT_ERRORS, _arrow_type, _error_line, _parallelism
from .inputs import Inputs, _file_rows

# The ``dated`` of a record that has no date to keep the newest of an id by, and the ``time``
# of a record without a time.
UNDATED = np.iinfo(np.int64).min

# The types of a Parquet time column that the command reads (strings parsed, timestamps and
# dates as they are), as its message names them.
TIME_TYPES = "strings, timestamps or dates"


def _string_array(offsets: np.ndarray, data: np.ndarray):
    import pyarrow as pa

    return pa.LargeStringArray.from_buffers(
        len(offsets) - 1, pa.py_buffer(offsets.astype(np.int64)), pa.py_buffer(data)
    )


def _time_message(where: str, raw: str, column: str) -> str:
    """The command's report of a record whose time is not a date (the record is skipped)."""
    quoted = json.dumps(raw, ensure_ascii=False)
    return (
        f"{where}: time {quoted} in `{column}` is not a date; write RFC 3339 (2026-11-30T06:00:00Z, "
        "2026-11-30T09:00:00+03:00) or YYYY-MM-DD; record skipped"
    )


def _parsed_times(micros, text) -> Tuple[np.ndarray, np.ndarray]:
    """Each row's time from the Arrow columns of ``_time_columns`` (``time_micros``, floored to
    seconds; ``time_text``, parsed as the command parses it, by the library's ``parse_times``):
    seconds since 1970 (``UNDATED`` for none), and which rows hold text that is not a time."""
    import pyarrow.compute as pc

    from megashingle import _megashingle as ext

    seconds = np.full(len(micros), UNDATED, dtype=np.int64)
    wrong = np.zeros(len(micros), dtype=bool)
    has = pc.is_valid(micros).to_numpy(zero_copy_only=False)
    if has.any():
        values = pc.fill_null(micros, 0).to_numpy(zero_copy_only=False).astype(np.int64)
        seconds[has] = np.floor_divide(values[has], 1_000_000)
    if text.null_count < len(text):
        parsed, wrong = ext.parse_times(text.to_pylist())
        seconds = np.where(parsed != UNDATED, parsed, seconds)
    return seconds, wrong


def _time_columns(df, column: Optional[str], name: str, fmt: str) -> list:
    """The time of each row of a DataFrame Spark read, as two columns: ``time_micros``
    (microseconds since 1970, for timestamps and dates) and ``time_text`` (text for the
    library to parse), as the command reads the column (``fmt``: parquet, csv or jsonl; JSONL
    numbers as text, other JSON values and a field no record has no time). A Parquet column of
    another type is refused with the command's message."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    micros, text = F.lit(None).cast("long"), F.lit(None).cast("string")
    if column is not None and column in df.columns:
        data_type = df.schema[column].dataType
        quoted = F.col(f"`{column}`")
        if isinstance(data_type, (T.StringType, T.BinaryType)):
            text = quoted.cast("string")
        elif isinstance(data_type, T.TimestampType):
            micros = F.expr(f"unix_micros(`{column}`)")
        elif type(data_type).__name__ == "TimestampNTZType":
            micros = F.expr(f"timestampdiff(MICROSECOND, TIMESTAMP_NTZ'1970-01-01 00:00:00', `{column}`)")
        elif isinstance(data_type, T.DateType):
            micros = F.expr(f"unix_date(`{column}`)").cast("long") * F.lit(86_400_000_000)
        elif fmt == "jsonl" and isinstance(data_type, T.NumericType):
            text = quoted.cast("string")
        elif fmt != "jsonl":
            raise InputError(
                f"{name}: column `{column}` (the time column) holds {data_type.simpleString()} values, not {TIME_TYPES}"
            )
    return [micros.alias("time_micros"), text.alias("time_text")]


@dataclass
class Reading:
    """How the collection is read: the files' rows for the library's readers, the Parquet and
    remote inputs as DataFrames, and the columns (the time column, if any, as the command's
    ``--time-column`` reads it)."""

    spark: object
    inputs: Inputs
    id_column: str
    text_column: str
    input_format: Optional[str]
    time_column: Optional[str] = None

    def _files_frame(self):
        from pyspark.sql import types as T

        parallelism = _parallelism(self.spark)
        rows = _file_rows(self.inputs, parallelism)
        schema = T.StructType(
            [
                T.StructField("position", T.LongType(), False),
                T.StructField("path", T.StringType(), False),
                T.StructField("doc_id", T.StringType(), True),
                T.StructField("stride", T.LongType(), False),
                T.StructField("part", T.LongType(), False),
            ]
        )
        slices = max(1, min(len(rows), parallelism * 4))
        # By range, not round robin: a round robin may put the parts of one large file (as
        # many as there are cores) in one partition, and one task would read them all.
        return self.spark.createDataFrame(rows, schema).repartitionByRange(slices, "position", "part")

    def _table_frames(self):
        """Parquet and remote inputs as (position, row, id, text, time_micros, time_text)
        DataFrames."""
        from pyspark.sql import functions as F

        frames = []
        if self.inputs.parquet:
            df = self.spark.read.parquet(*self.inputs.parquet)
            names = ", ".join(self.inputs.parquet)
            self._check_columns(df, names)
            positions = dict(zip(self.inputs.parquet, self.inputs.parquet_positions))
            path_col = F.col("_metadata.file_path")
            mapping = F.create_map(
                *[x for p, pos in positions.items() for x in (F.lit("file://" + os.path.abspath(p)), F.lit(pos))]
            )
            frames.append(
                df.select(
                    F.coalesce(mapping[path_col], mapping[F.regexp_replace(path_col, "^file:/+", "file:///")])
                    .cast("long")
                    .alias("position"),
                    (F.col("_metadata.row_index") + 1).alias("row"),
                    F.col(self.id_column).cast("string").alias("doc_id"),
                    F.col(self.text_column).cast("string").alias("text"),
                    *_time_columns(df, self.time_column, names, "parquet"),
                )
            )
        for path, fmt, delimiter in self.inputs.remote:
            if fmt == "csv":
                df = self.spark.read.csv(path, header=True, multiLine=True, escape='"', sep=delimiter)
            elif fmt == "jsonl":
                df = self.spark.read.json(path)
            else:
                df = self.spark.read.parquet(path)
            self._check_columns(df, path, fmt)
            position = self.inputs.count
            self.inputs.count += 1
            frames.append(
                df.select(
                    F.lit(0).cast("long").alias("position"),
                    (F.monotonically_increasing_id() + F.lit(position << 58)).alias("row"),
                    F.col(self.id_column).cast("string").alias("doc_id"),
                    F.col(self.text_column).cast("string").alias("text"),
                    *_time_columns(df, self.time_column, path, fmt),
                )
            )
        return frames

    def _check_columns(self, df, name: str, fmt: str = "parquet") -> None:
        """Refuses a table without the id, text or time column (a JSONL record may lack its
        time field: it has no time)."""
        time_column = self.time_column if fmt != "jsonl" else None
        for column, role in ((self.id_column, "id"), (self.text_column, "text"), (time_column, "time")):
            if column is not None and column not in df.columns:
                hint = (
                    "name it with --time-column"
                    if role == "time"
                    else "name the columns with --id-column/--text-column"
                )
                raise InputError(
                    f"{name}: no column `{column}` (the {role} column); columns found: {', '.join(df.columns)}; {hint}"
                )

    def prepare(self) -> None:
        self._tables = self._table_frames() if (self.inputs.parquet or self.inputs.remote) else []

    def over_records(self, work: Callable, schema):
        """``work(batches)`` run over every record, where each batch is a dict with ``num``
        (int64), ``ids`` and ``texts`` (Arrow string arrays), ``line`` (int64), ``position``,
        ``dated`` (int64, ``UNDATED`` for a record of which the first of an id is kept),
        ``time`` (int64 seconds since 1970 from the time column, ``UNDATED`` for none) and
        ``at`` (Arrow strings: where an archive's record is, as messages name it, empty for a
        record named by its file); it yields Arrow record batches of ``schema``. One DataFrame over all
        inputs; reports of skipped records come as batches with a ``warning`` column when
        ``schema`` has one."""
        frames = []
        id_column, text_column, fmt = self.id_column, self.text_column, self.input_format
        time_column = self.time_column
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
                            reader = ext.RecordReader(
                                files, id_column, text_column, fmt_rust, stride, part, time_column=time_column
                            )
                            while True:
                                made = reader.next_batch()
                                if made is None:
                                    break
                                position = positions[made["file"]]
                                num = (position << 32) | made["serial"]
                                ids = _string_array(made["id_offsets"], made["id_data"])
                                texts = _string_array(made["text_offsets"], made["text_data"])
                                yield {
                                    "num": num,
                                    "ids": ids,
                                    "texts": texts,
                                    "line": made["line"],
                                    "position": position,
                                    "dated": made["dated"],
                                    "time": made["time"],
                                    "at": _string_array(made["at_offsets"], made["at_data"]),
                                }
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
                        time = np.full(len(num), UNDATED, dtype=np.int64)
                        if time_column is not None and "time_text" in batch.schema.names:
                            time, wrong = _parsed_times(batch.column("time_micros"), batch.column("time_text"))
                            wrong &= ~bad
                            for i in np.flatnonzero(wrong):
                                where = _table_origin(int(position[i]), int(row[i]))
                                raw = batch.column("time_text")[i].as_py().strip()
                                messages.append(_time_message(where, raw, time_column))
                            bad = bad | wrong
                        keep = ~bad
                        mask = pa.array(keep)
                        kept = int(keep.sum())
                        yield {
                            "num": num[keep],
                            "ids": ids.filter(mask),
                            "texts": texts.filter(mask),
                            "line": row[keep],
                            "position": position[keep],
                            "dated": np.full(kept, UNDATED, dtype=np.int64),
                            "time": time[keep],
                            "at": pa.array([""] * kept, pa.string()),
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


def _only_records(items: Iterator, warnings: List[str]) -> Iterator:
    """The record batches of ``items``; the warnings they carry are appended to ``warnings``."""
    for item in items:
        if "warnings" in item:
            warnings.extend(item["warnings"])
        elif len(item["num"]):
            yield item


@dataclass
class Census:
    """What reading found: records kept, repeated ids (reported, and dropped as the command
    drops them), reports of skipped records."""

    records: int
    kept: int
    duplicates: List[str]
    dropped: np.ndarray
    skipped: int
    warnings: List[str]


def _read_sets(reading: Reading, config_toml: str):
    """The one pass over the texts: each record's number, id, line, date to keep the newest of
    an id by and place in an archive (``dated`` and ``at``, null when it has none), its time
    from the time column (``time``, seconds since 1970, null when it has none), and its
    shingle sets packed into one binary value (``Sketcher.shingle_packed``); reports of skipped
    records as rows with a ``warning``. Every later stage starts from these sets, not from the
    texts."""
    from pyspark.sql import types as T

    schema = T.StructType(
        [
            T.StructField("num", T.LongType(), True),
            T.StructField("doc_id", T.StringType(), True),
            T.StructField("line", T.LongType(), True),
            T.StructField("sets", T.BinaryType(), True),
            T.StructField("dated", T.LongType(), True),
            T.StructField("at", T.StringType(), True),
            T.StructField("time", T.LongType(), True),
            T.StructField("warning", T.StringType(), True),
        ]
    )

    def shingle(records: Iterator) -> Iterator:
        import pyarrow as pa
        import pyarrow.compute as pc

        sketcher = megashingle.Sketcher(megashingle._config_from_toml(config_toml), threads=1)
        for r in records:
            offsets, data = sketcher._inner.shingle_packed(megashingle._column(r["texts"]))
            at = r["at"].cast(pa.string())
            sets = pa.BinaryArray.from_buffers(
                pa.binary(), len(offsets) - 1, [None, pa.py_buffer(offsets), pa.py_buffer(data)]
            )
            yield pa.RecordBatch.from_arrays(
                [
                    pa.array(r["num"]),
                    r["ids"].cast(pa.string()),
                    pa.array(r["line"]),
                    sets,
                    pa.array(r["dated"], mask=r["dated"] == UNDATED),
                    pc.if_else(pc.equal(at, ""), pa.scalar(None, pa.string()), at),
                    pa.array(r["time"], mask=r["time"] == UNDATED),
                    pa.nulls(len(r["num"]), pa.string()),
                ],
                names=["num", "doc_id", "line", "sets", "dated", "at", "time", "warning"],
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
        .agg(
            F.count("*").alias("n"),
            F.sort_array(F.collect_list(F.struct("num", "line", "dated", "at"))).alias("seen"),
        )
        .where(F.col("n") > 1)
        .collect()
    )
    messages: List[str] = []
    drop = []
    for r in sorted(repeated, key=lambda r: r.seen[0].num):
        for message, dropped_num in _repeats(inputs, r.doc_id, r.seen):
            drop.append(dropped_num)
            if len(messages) < sample:
                messages.append(message)
    dropped = np.array(sorted(drop), dtype=np.int64)
    return Census(
        records=int(totals.records),
        kept=int(totals.records) - len(dropped),
        duplicates=messages,
        dropped=dropped,
        skipped=int(totals.skipped) + len(dropped),
        warnings=warnings,
    )


def _repeats(inputs: Inputs, doc_id: str, seen: list) -> Iterator[tuple]:
    """The records of one id, in input order (``seen``: rows of num, line, dated, at), as the
    command settles them: the later one dropped and reported, unless both are dated and it is
    the newer, which is then kept and the older dropped. Gives (message, number dropped)."""
    quoted = json.dumps(doc_id, ensure_ascii=False)
    kept = seen[0]
    for later in seen[1:]:
        if kept.dated is not None and later.dated is not None and later.dated > kept.dated:
            yield (
                f"{_origin(inputs, kept)}: duplicate id {quoted}, seen again at {_origin(inputs, later)} "
                "with a newer date, which is kept; ids must be unique; record skipped",
                kept.num,
            )
            kept = later
        else:
            yield (
                f"{_origin(inputs, later)}: duplicate id {quoted}, first seen at {_origin(inputs, kept)}; "
                "ids must be unique; record skipped",
                later.num,
            )


def _origin(inputs: Inputs, record) -> str:
    """A record's place as the command names it (``record``: a row of num, line and at):
    ``file:line``, the file for a document, or its place in an archive (``crawl.warc@1234``)."""
    source = record.at or inputs.source(record.num >> 32)
    return f"{source}:{record.line}" if record.line > 0 else source


def _input_error(e: Exception) -> Exception:
    """A reader's error (raised in a Python worker) as a one-line InputError."""
    for line in reversed(str(e).splitlines()):
        said = _error_line(line, INPUT_ERRORS)
        if said is not None:
            return InputError(said)
    return e
