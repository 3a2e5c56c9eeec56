"""megashingle from Python: near-duplicate detection and news story clustering.

A thin layer over the Rust library (the ``megashingle`` crate): every stage runs there, with
the GIL released. Texts and ids may be any iterable of ``str``, a pandas Series, or a pyarrow
string array (its buffers are read in place: no Python string is made per value).

>>> import megashingle
>>> rows = megashingle.cluster(["a", "b"], [story, story + " and more"])  # doctest: +SKIP
>>> rows[0]  # doctest: +SKIP
{'doc_id': 'b', 'cluster_id': 'a', 'cluster_size': 2, 'similarity': 1.0, 'status': 'ok'}

The Spark job is ``megashingle.spark`` (``pip install "./python[spark]"``).
"""

from __future__ import annotations

import os
import sys
import warnings
from typing import Any, Iterable, Optional

from . import _megashingle
from ._megashingle import (
    Config,
    ConfigError,
    IndexDamagedError,
    IndexFormatError,
    IndexLockedError,
    InputError,
    MegashingleError,
    Sketch,
    StoryIndexError,
    __version__,
    detect_format,
)

__all__ = [
    "Config",
    "ConfigError",
    "Index",
    "IndexDamagedError",
    "IndexFormatError",
    "IndexLockedError",
    "InputError",
    "MegashingleError",
    "Sketch",
    "Sketcher",
    "StoryIndexError",
    "canon",
    "cluster",
    "compare",
    "dedup",
    "detect_format",
    "reuse",
    "__version__",
]


def _config_from_toml(text: str) -> Config:
    """Rebuilds a pickled Config."""
    return _megashingle.config_from_toml(text)


def _dedup_group_packed(
    config: Config,
    ids: list,
    offsets: Any,
    data: Any,
    read_order: Any,
    pairs_a: Any = None,
    pairs_b: Any = None,
    times: Optional[list] = None,
) -> tuple:
    """One group of the Spark job (packed sketches, as a binary column's ``offsets`` and
    ``data``) clustered from its candidate pairs and deduplicated by the library's rule, as
    ``megashingle dedup`` deduplicates a collection: ``read_order`` gives each document's place
    in the collection's read order (``dedup.keep = "first"`` and every tie), ``times`` each
    one's time in seconds since 1970 or None (``"earliest"``: those without a time come last).
    Returns the clustering's rows ``(index, cluster, size, similarity)`` and the removed records
    ``(index, index of the kept record, jaccard, containment)``, story by story."""
    return _megashingle.dedup_group_packed(config, ids, offsets, data, read_order, pairs_a, pairs_b, times)


def _column(values: Any) -> Any:
    """A text column as the extension reads it: ``("arrow", chunks)`` for pyarrow string
    arrays (and pandas Series backed by them), else the values themselves (any iterable)."""
    pa = sys.modules.get("pyarrow")
    pd = sys.modules.get("pandas")
    if pd is not None and isinstance(values, pd.Series):
        dtype = values.dtype
        if pa is not None and (
            isinstance(dtype, getattr(pd, "ArrowDtype", ()))
            or getattr(dtype, "storage", None) in ("pyarrow", "pyarrow_numpy")
        ):
            try:
                values = pa.array(values)
            except Exception:  # an unusual Arrow type: read it as objects
                return values.array
        else:
            # The column's own str objects, not copies.
            return values.array
    if pa is not None and isinstance(values, (pa.Array, pa.ChunkedArray)):
        chunks = values.chunks if isinstance(values, pa.ChunkedArray) else [values]
        prepared = []
        for chunk in chunks:
            if pa.types.is_string_view(chunk.type) if hasattr(pa.types, "is_string_view") else False:
                chunk = chunk.cast(pa.large_string())
            if not (pa.types.is_string(chunk.type) or pa.types.is_large_string(chunk.type)):
                return values.to_pylist()
            if chunk.null_count:
                first = chunk.is_null().index(True).as_py()
                raise InputError(
                    f"value {first + 1} is null: every id and text must be a string (fill or drop the nulls first)"
                )
            _, offsets, data = chunk.buffers()
            import numpy as np

            width = np.int64 if pa.types.is_large_string(chunk.type) else np.int32
            if offsets is None:
                continue
            offsets = np.frombuffer(offsets, dtype=width)[chunk.offset : chunk.offset + len(chunk) + 1]
            data = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, np.uint8)
            prepared.append((offsets, data))
        return ("arrow", prepared)
    if isinstance(values, (str, bytes)):
        raise TypeError("expected a column of strings, not a single string")
    return values


THREADS_PER_CORE = 4


def _cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _threads(threads: Any, where: str) -> int:
    """A thread count as the library takes it: 0 for one per core; more than four per core
    is lowered to that with a warning, as the command does with ``-j``."""
    if isinstance(threads, bool) or not isinstance(threads, int):
        raise TypeError(f"{where}: threads must be an int (0: one per core), not {type(threads).__name__}")
    if threads < 0:
        raise ValueError(f"{where}: threads={threads}: give 0 (one per core) or a positive count")
    cores = _cores()
    most = THREADS_PER_CORE * cores
    if threads > most:
        warnings.warn(
            f"{where}: threads={threads} is more than {THREADS_PER_CORE} threads per core "
            f"({cores} cores here); running {most} threads",
            RuntimeWarning,
            stacklevel=3,
        )
        return most
    return threads


def _sized(values: Any) -> Any:
    """A column that can be read twice (a one-shot iterator becomes a list)."""
    pa = sys.modules.get("pyarrow")
    pd = sys.modules.get("pandas")
    if isinstance(values, (list, tuple)):
        return values
    if pd is not None and isinstance(values, pd.Series):
        return values
    if pa is not None and isinstance(values, (pa.Array, pa.ChunkedArray)):
        return values
    if isinstance(values, (str, bytes)):
        return values
    return list(values)


def _repeated_ids(ids: Any) -> list:
    """The ids given more than once, with their counts, in order of first appearance."""
    pa = sys.modules.get("pyarrow")
    pd = sys.modules.get("pandas")
    if pa is not None and isinstance(ids, (pa.Array, pa.ChunkedArray)):
        import pyarrow.compute as pc

        counts = pc.value_counts(ids)
        values = counts.field("values").to_pylist()
        found = counts.field("counts").to_pylist()
        return [(v, c) for v, c in zip(values, found) if c > 1]
    if pd is not None and isinstance(ids, pd.Series):
        ids = ids.array
    if isinstance(ids, (str, bytes)):
        return []
    counts: dict = {}
    for i in ids:
        if isinstance(i, str):
            counts[i] = counts.get(i, 0) + 1
    return [(i, c) for i, c in counts.items() if c > 1]


def _check_ids(ids: Any, strict: bool, where: str, keeps: str = "the first") -> Any:
    """Warns (or, with ``strict``, raises InputError) when ids repeat, naming the ids and
    their counts; returns the ids, readable again."""
    ids = _sized(ids)
    repeated = _repeated_ids(ids)
    if repeated:
        shown = ", ".join(f"{i!r} ({c} times)" for i, c in repeated[:5])
        more = f" and {len(repeated) - 5} more" if len(repeated) > 5 else ""
        extra = sum(c - 1 for _, c in repeated)
        if strict:
            raise InputError(f"{where}: repeated ids: {shown}{more}; ids must be unique")
        warnings.warn(
            f"{where}: repeated ids: {shown}{more}; {keeps} document of each id is kept, "
            f"{extra} dropped (strict=True makes this an error)",
            UserWarning,
            stacklevel=3,
        )
    return ids


def _check_boilerplate(boilerplate: Any, name: str = "boilerplate") -> Any:
    import numpy as np

    values = np.asarray(boilerplate)
    if values.size == 0:
        return np.zeros(0, dtype=np.uint32)
    if values.ndim != 1 or values.dtype.kind not in "iu":
        raise TypeError(
            f"{name} must be a one-dimensional array of shingle keys (unsigned 32-bit "
            f"integers), not {values.dtype} of shape {values.shape}"
        )
    if values.min() < 0 or values.max() > 0xFFFFFFFF:
        raise ValueError(f"{name}: shingle keys are unsigned 32-bit integers (0 to 4294967295)")
    return np.ascontiguousarray(values, dtype=np.uint32)


def cluster(
    ids: Iterable[str],
    texts: Iterable[str],
    config: Optional[Config] = None,
    *,
    times: Optional[Iterable[Optional[int]]] = None,
    threads: int = 0,
    strict: bool = False,
) -> list[dict]:
    """Clusters documents into stories, exactly as ``megashingle cluster`` does.

    ``ids`` and ``texts`` are columns of equal length: iterables of ``str``, pandas Series or
    pyarrow string arrays. ``times`` (optional) gives each document's time in seconds since
    1970 (UTC) or None. ``threads=0`` uses one thread per core; the result is the same for
    any count. With ``strict`` a repeated id is an error, else the later document is dropped.

    Returns one dict per document with the keys ``doc_id, cluster_id, cluster_size,
    similarity, status``, in the command's row order: largest cluster first, its
    representative first. ``similarity`` is the estimated Jaccard to the representative
    (None for a text too short to compare); ``status`` is ``"ok"`` or ``"too_short"``.
    Raises InputError or ConfigError (both MegashingleError, a ValueError) with the
    library's message for bad input or a bad configuration, OSError when a temporary file
    cannot be written.
    """
    ids = _check_ids(ids, strict, "megashingle.cluster")
    return _megashingle.cluster(
        _column(ids),
        _column(texts),
        config,
        times=None if times is None else iter(times),
        threads=_threads(threads, "megashingle.cluster"),
        strict=strict,
    )


def dedup(
    ids: Iterable[str],
    texts: Iterable[str],
    config: Optional[Config] = None,
    *,
    times: Optional[Iterable[Optional[int]]] = None,
    threads: int = 0,
    strict: bool = False,
) -> list[dict]:
    """Finds the records that ``megashingle dedup`` removes: in each story the record
    ``dedup.keep`` chooses is kept, and each other member whose Jaccard with it, or
    containment in it, reaches ``dedup.threshold`` is removed.

    Takes the same columns as :func:`cluster`. Returns one dict per removed record, as the
    command's ``--dropped`` file lists them (story by story in the cluster table's order):
    ``doc_id, duplicate_of, similarity, jaccard, containment``. Every other id is kept.
    """
    ids = _check_ids(ids, strict, "megashingle.dedup")
    return _megashingle.dedup(
        _column(ids),
        _column(texts),
        config,
        times=None if times is None else iter(times),
        threads=_threads(threads, "megashingle.dedup"),
        strict=strict,
    )


def reuse(
    ids: Iterable[str],
    texts: Iterable[str],
    config: Optional[Config] = None,
    *,
    threads: int = 0,
    strict: bool = False,
) -> list[dict]:
    """Finds every pair of documents where one holds a passage of the other, as
    ``megashingle reuse`` does: a brief that lifts two paragraphs of a report, an article that
    embeds wire copy among its own, a revised excerpt.

    Takes the same columns as :func:`cluster` (no times). Returns one dict per pair, the
    command's columns: ``doc_a, doc_b`` (ids in order), ``a_in_b`` (the share of ``doc_a``'s
    words in passages shared with ``doc_b``), ``b_in_a``, ``shared_words``, ``passages``,
    ``longest`` (words of the longest shared passage) and ``jaccard``, all computed exactly
    from the two texts. ``reuse.min-shared-words`` and ``reuse.min-containment`` set the bar.
    """
    ids = _check_ids(ids, strict, "megashingle.reuse")
    return _megashingle.reuse(
        _column(ids),
        _column(texts),
        config,
        threads=_threads(threads, "megashingle.reuse"),
        strict=strict,
    )


def compare(first: str, second: str, config: Optional[Config] = None) -> dict:
    """Compares two texts as ``megashingle compare --json`` does: exact Jaccard and Dice of
    their shingle sets, the estimate from the minima, the supershingles and megashingles they
    share, the lead shares and the shared fragments. Raises InputError when a text has fewer
    words than the shingle size."""
    return _megashingle.compare(first, second, config)


def canon(text: str, config: Optional[Config] = None) -> str:
    """The canonical words of a text (what is shingled): HTML reduced to its main text,
    entities decoded, Unicode normalized, case folded, words joined by single spaces."""
    return _megashingle.canon(text, config)


class Sketcher:
    """Sketches texts under a configuration: per text its minima, candidate keys
    (supershingles or megashingles), shingle set, lead and status.

    ``boilerplate`` (optional) is an array of shingle keys left out of every sketch, as corpus
    statistics computed elsewhere found them (see :meth:`page_sets`). A text that would keep
    less than a fifth of its shingles without them keeps them all (it is itself widely copied
    text), but for those of ``spread`` (optional, boilerplate too): the shingles found in the
    documents of at least ``boilerplate.min-documents`` stories, such as a disclaimer.
    ``threads=0`` uses one thread per core for batches.
    """

    def __init__(self, config: Optional[Config] = None, boilerplate: Any = None, threads: int = 0, spread: Any = None):
        if boilerplate is not None:
            boilerplate = _check_boilerplate(boilerplate)
        if spread is not None:
            spread = _check_boilerplate(spread, "spread")
        self._inner = _megashingle.Sketcher(config, boilerplate, _threads(threads, "megashingle.Sketcher"), spread)

    def sketch(self, text: str) -> Sketch:
        """The sketch of one text."""
        return self._inner.sketch(text)

    def sketch_batch(self, texts: Iterable[str]) -> dict:
        """The sketches of many texts, made in parallel without the GIL, as numpy arrays:
        ``minima`` (n x minima, uint32), ``keys`` with ``key_offsets`` (uint64; the keys of
        text i are ``keys[key_offsets[i]:key_offsets[i+1]]``), ``shingles`` with
        ``shingle_offsets`` (uint32), ``lead`` with ``lead_offsets``, ``words`` (uint32) and
        ``comparable`` (bool: False for a text too short to compare)."""
        return self._inner.sketch_batch(_column(texts))

    def page_sets(self, texts: Iterable[str]) -> tuple:
        """The shingle sets that document frequency counts (each whole page's, furniture
        included), as ``(values, offsets)`` arrays."""
        return self._inner.page_sets(_column(texts))

    def __repr__(self) -> str:
        return "Sketcher()"


class Index:
    """A story index on disk, as ``megashingle index`` keeps it: documents added night after
    night join the stories already indexed.

    ``config`` must be comparable with the one the index was made with."""

    def __init__(self, path: Any, config: Optional[Config] = None):
        self._inner = _megashingle.Index(str(path), config)

    @property
    def path(self) -> str:
        return str(self._inner.path)

    def add(
        self,
        ids: Iterable[str],
        texts: Iterable[str],
        times: Optional[Iterable[Optional[int]]] = None,
        *,
        upsert: bool = False,
        passages: bool = False,
    ) -> list[dict]:
        """Adds documents (as ``index add``); returns one dict per document, in id order, with
        ``doc_id, story_id, new_story, similarity, status``. Without ``upsert`` an id already
        indexed is an error (StoryIndexError) and nothing is added. An id given twice in one
        call is an error (InputError naming it). With ``passages`` on the first add (as
        ``index add --passages``), the index keeps the passages of its documents from then on,
        for ``query_reuse``; on an index made without them it raises IndexFormatError."""
        ids = _sized(ids)
        repeated = _repeated_ids(ids)
        if repeated:
            shown = ", ".join(f"{i!r} ({c} times)" for i, c in repeated[:5])
            raise InputError(f"Index.add: repeated ids: {shown}; give each id once (nothing was added)")
        return self._inner.add(_column(ids), _column(texts), None if times is None else iter(times), upsert, passages)

    def query(self, text: str) -> list[dict]:
        """The indexed near-duplicates of a text (as ``index query``), most similar first:
        dicts with ``doc_id, story_id, similarity, containment``."""
        return self._inner.query(text)

    def query_reuse(self, text: str) -> dict:
        """The indexed documents that share a passage with a text (as ``index query --reuse``,
        pairs found as ``reuse`` finds them), most shared words first: a dict with
        ``matches`` (dicts with ``doc_id, story_id, a_in_b, b_in_a, shared_words, passages,
        longest, jaccard``, the text being ``a``, and ``text_passages``, each passage as a
        ``(start, end)`` range of the text's canonical words), ``words``, ``found_words`` and
        ``uniqueness`` (the share of the text found in no indexed document). An index made
        without passages (``add(..., passages=True)`` on its first add) raises
        IndexFormatError."""
        return self._inner.query_reuse(text)

    def query_reuse_many(self, texts: Iterable[str]) -> list[dict]:
        """``query_reuse`` of each text, the answers in the texts' order, asked together as
        ``index query --reuse -o`` asks them (tonight's crawl against an archive, a training
        corpus against an indexed evaluation set): their fingerprints are looked up in one pass
        over the index, so thousands of texts cost far less than as many ``query_reuse``."""
        return self._inner.query_reuse_many(list(texts))

    def close(self) -> None:
        """Closes the index if a query left it open, so that other programs may change it."""
        self._inner.close()

    def export(self) -> list[dict]:
        """Every indexed document with its story (as ``index export``): dicts with
        ``doc_id, story_id, story_size, added_at``."""
        return self._inner.export()

    def __repr__(self) -> str:
        return f"Index({self.path!r})"
