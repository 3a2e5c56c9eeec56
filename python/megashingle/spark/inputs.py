"""What the job reads, listed on the driver: each path checked, folders walked as the command
walks them, every file's format from the library's one table of formats
(``megashingle.detect_format``, which the command's readers use too), and the read tasks of
each file (a large record file read by several tasks, each keeping every k-th record).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import List, Optional, Tuple

from megashingle import InputError, detect_format

# A record file larger than this is read by several tasks, each keeping every k-th record.
SPLIT_BYTES = 32 << 20
MAX_SPLIT = 8


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
    order (an id for a file of a folder: its path relative to the folder, by which the library
    reads the file as reading the folder does, the id of a document or of an archive), Parquet
    files, remote files as (path, format, CSV delimiter) for Spark's readers, and the files of
    folders left out for their extension. ``positions`` gives every file's place in the
    collection's order (record files and Parquet files share it)."""

    files: List[Tuple[str, Optional[str]]] = field(default_factory=list)
    file_positions: List[int] = field(default_factory=list)
    record_files: List[bool] = field(default_factory=list)
    parquet: List[str] = field(default_factory=list)
    parquet_positions: List[int] = field(default_factory=list)
    remote: List[Tuple[str, str, str]] = field(default_factory=list)
    ignored: int = 0
    names: List[str] = field(default_factory=list)
    count: int = 0

    def add_file(self, path: str, doc_id: Optional[str], records: bool = False) -> None:
        self.files.append((path, doc_id))
        self.file_positions.append(self.count)
        self.record_files.append(records)
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


def _remote_format(path: str, input_format: Optional[str]) -> Tuple[str, str]:
    """The format and CSV delimiter Spark reads a remote file in: the library's, by its name
    (``.tsv`` is CSV separated by tabs), else Parquet. Documents are read by the library's
    readers, which need a local path."""
    found = detect_format(path, input_format, remote=True)
    if found is None:
        return "parquet", ","
    fmt, delimiter = found
    if fmt not in ("csv", "jsonl", "parquet"):
        raise InputError(
            f"{path}: a remote {fmt} file cannot be read: documents are read by megashingle's own "
            "readers, which need a path every executor sees; copy it there, or give CSV, JSONL or Parquet"
        )
    return fmt, delimiter


def _plan_folder(inputs: Inputs, folder: str, input_format: Optional[str]) -> None:
    """The files of a folder, as the command reads them: documents and Parquet files, others
    left out; but a folder of Parquet files alone (Spark's output, its ``_SUCCESS`` and other
    ``_`` names aside) is one Parquet input."""
    files = _walk(folder)
    found = [detect_format(f, in_folder=True) for f in files]
    kinds = [k[0] if k else None for k in found]
    visible = [k for f, k in zip(files, kinds) if not os.path.basename(f).startswith("_")]
    spark_output = visible and input_format is None and all(k == "parquet" for k in visible)
    for f, kind in zip(files, kinds):
        if spark_output:
            if not os.path.basename(f).startswith("_"):
                inputs.add_parquet(f)
        elif kind == "parquet":
            inputs.add_parquet(f)
        elif kind is not None:
            inputs.add_file(f, os.path.relpath(f, folder).replace(os.sep, "/"))
        else:
            inputs.ignored += 1


def plan_inputs(paths: List[str], input_format: Optional[str] = None) -> Inputs:
    """Lists the inputs on the driver: each path must exist and be readable. What each file is
    read as is the library's (``megashingle.detect_format``): in a folder, documents and Parquet
    files, others left out; a file named alone, Parquet, a document, or records. A remote path
    (``s3a://``, ``hdfs://``) is read by Spark in the format its name tells (a ``.tsv`` as CSV
    separated by tabs), else as Parquet."""
    inputs = Inputs(names=list(paths))
    for path in paths:
        if _is_remote(path):
            fmt, delimiter = _remote_format(path, input_format)
            inputs.remote.append((path, fmt, delimiter))
            continue
        local = path[len("file://") :] if path.startswith("file://") else path
        try:
            os.stat(local)
        except OSError as e:
            raise InputError(f"{path}: cannot open: {e.strerror or e}") from None
        if os.path.isdir(local):
            _plan_folder(inputs, local, input_format)
            continue
        if not os.access(local, os.R_OK):
            raise InputError(f"{path}: cannot open: Permission denied")
        found = detect_format(local, input_format)
        fmt = found[0] if found else "records"
        if fmt == "parquet":
            inputs.add_parquet(local)
        else:
            inputs.add_file(local, None, records=fmt in ("csv", "jsonl", "records"))
    return inputs


def _file_rows(inputs: Inputs, parallelism: int) -> List[tuple]:
    """The read tasks' rows: (position, path, id, stride, part). A large record file is read
    by up to ``MAX_SPLIT`` tasks, each keeping every stride-th record."""
    rows = []
    record_files = [f for f in inputs.files if f[1] is None]
    for position, (path, doc_id), records in zip(inputs.file_positions, inputs.files, inputs.record_files):
        stride = 1
        if records:
            size = os.path.getsize(path)
            if size > SPLIT_BYTES:
                stride = max(1, min(MAX_SPLIT, parallelism // max(1, len(record_files)), size // SPLIT_BYTES))
        for part in range(stride):
            rows.append((position, path, doc_id, stride, part))
    return rows
