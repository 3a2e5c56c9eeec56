"""Type stubs of megashingle: near-duplicate detection and news story clustering."""

from os import PathLike
from typing import Any, Iterable, Mapping, Optional, TypedDict, Union

import numpy as np
import numpy.typing as npt

__version__: str
__all__: list[str]

class MegashingleError(ValueError):
    """Every error of megashingle but a failed read or write of a file (OSError)."""

class InputError(MegashingleError):
    """A document, a record or an input that cannot be used."""

class ConfigError(MegashingleError):
    """A setting or a configuration file that cannot be used."""

class StoryIndexError(MegashingleError):
    """A story index that cannot be used as asked (missing, made with other settings, an id
    already indexed, ...)."""

class IndexLockedError(StoryIndexError):
    """Another program holds the story index; nothing was changed."""

class IndexDamagedError(StoryIndexError):
    """A table or a record of the story index cannot be read: restore it from a copy."""

class IndexFormatError(StoryIndexError):
    """The file is not a story index, or one of a format this megashingle does not read."""

_Value = Union[bool, int, float, str, list]

class Config:
    """A pipeline configuration: the keys of pipeline.toml. Keywords are bare key names
    (``min_similarity=0.4``, ``shingle_size=4``) or a dict of dotted keys
    (``{"cluster.min-similarity": 0.4}``); errors raise ConfigError with the library's message."""

    def __init__(self, settings: Optional[Mapping[str, _Value]] = None, **overrides: _Value) -> None: ...
    @staticmethod
    def from_file(
        path: Union[str, PathLike[str]], settings: Optional[Mapping[str, _Value]] = None, **overrides: _Value
    ) -> Config: ...
    def replace(self, settings: Optional[Mapping[str, _Value]] = None, **overrides: _Value) -> Config: ...
    def get(self, key: str) -> str: ...
    def to_toml(self) -> str: ...

class ClusterRow(TypedDict):
    doc_id: str
    cluster_id: str
    cluster_size: int
    similarity: Optional[float]
    status: str

class IndexRow(TypedDict):
    doc_id: str
    story_id: str
    new_story: bool
    similarity: Optional[float]
    status: str

class Match(TypedDict):
    doc_id: str
    story_id: str
    similarity: float
    containment: float

class ReuseMatch(TypedDict):
    doc_id: str
    story_id: str
    a_in_b: float
    b_in_a: float
    shared_words: int
    passages: int
    longest: int
    jaccard: float
    text_passages: list[tuple[int, int]]

class ReuseAnswer(TypedDict):
    matches: list[ReuseMatch]
    words: int
    found_words: int
    uniqueness: float

class ExportRow(TypedDict):
    doc_id: str
    story_id: str
    story_size: int
    added_at: str

class Sketch:
    @property
    def minima(self) -> npt.NDArray[np.uint32]: ...
    @property
    def keys(self) -> npt.NDArray[np.uint64]: ...
    @property
    def shingles(self) -> npt.NDArray[np.uint32]: ...
    @property
    def lead(self) -> npt.NDArray[np.uint32]: ...
    @property
    def words(self) -> int: ...
    @property
    def status(self) -> str: ...

class Sketcher:
    _inner: Any
    def __init__(
        self,
        config: Optional[Config] = None,
        boilerplate: Optional[npt.ArrayLike] = None,
        threads: int = 0,
        spread: Optional[npt.ArrayLike] = None,
    ) -> None: ...
    def sketch(self, text: str) -> Sketch: ...
    def sketch_batch(self, texts: Iterable[str]) -> dict[str, npt.NDArray[Any]]: ...
    def page_sets(self, texts: Iterable[str]) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.int64]]: ...

class Index:
    def __init__(self, path: Union[str, PathLike[str]], config: Optional[Config] = None) -> None: ...
    @property
    def path(self) -> str: ...
    def add(
        self,
        ids: Iterable[str],
        texts: Iterable[str],
        times: Optional[Iterable[Optional[int]]] = None,
        *,
        upsert: bool = False,
        passages: bool = False,
    ) -> list[IndexRow]: ...
    def query(self, text: str) -> list[Match]: ...
    def query_reuse(self, text: str) -> ReuseAnswer: ...
    def query_reuse_many(self, texts: Iterable[str]) -> list[ReuseAnswer]: ...
    def export(self) -> list[ExportRow]: ...
    def close(self) -> None: ...

def cluster(
    ids: Iterable[str],
    texts: Iterable[str],
    config: Optional[Config] = None,
    *,
    times: Optional[Iterable[Optional[int]]] = None,
    threads: int = 0,
    strict: bool = False,
) -> list[ClusterRow]: ...

class DroppedRow(TypedDict):
    doc_id: str
    duplicate_of: str
    similarity: float
    jaccard: float
    containment: float

def dedup(
    ids: Iterable[str],
    texts: Iterable[str],
    config: Optional[Config] = None,
    *,
    times: Optional[Iterable[Optional[int]]] = None,
    threads: int = 0,
    strict: bool = False,
) -> list[DroppedRow]: ...

class ReuseRow(TypedDict):
    doc_a: str
    doc_b: str
    a_in_b: float
    b_in_a: float
    shared_words: int
    passages: int
    longest: int
    jaccard: float

def reuse(
    ids: Iterable[str],
    texts: Iterable[str],
    config: Optional[Config] = None,
    *,
    threads: int = 0,
    strict: bool = False,
) -> list[ReuseRow]: ...
def compare(first: str, second: str, config: Optional[Config] = None) -> dict[str, Any]: ...
def canon(text: str, config: Optional[Config] = None) -> str: ...
def detect_format(
    path: Union[str, PathLike[str]],
    input_format: Optional[str] = None,
    in_folder: bool = False,
    remote: bool = False,
) -> Optional[tuple[str, str]]: ...

# Used by megashingle.spark, not part of the public API.
def _config_from_toml(text: str) -> Config: ...
def _column(values: Any) -> Any: ...
def _dedup_group_packed(
    config: Config,
    ids: list[str],
    offsets: npt.NDArray[np.int32],
    data: npt.NDArray[np.uint8],
    read_order: npt.NDArray[np.int64],
    pairs_a: Optional[npt.NDArray[np.int64]] = None,
    pairs_b: Optional[npt.NDArray[np.int64]] = None,
    times: Optional[list[Optional[int]]] = None,
) -> tuple[list[tuple[int, int, int, Optional[float]]], list[tuple[int, int, float, float]]]: ...
