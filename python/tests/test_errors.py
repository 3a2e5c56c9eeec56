"""The exception classes: each failure raises the class of its kind with the library's one-line
message, every class is a MegashingleError (a ValueError), and a file the system refuses is an
OSError."""

import numpy as np
import pytest

import megashingle
from conftest import STORY, warc_gz_with_a_damaged_member, warc_resource
from megashingle import _megashingle

CLASSES = [
    "MegashingleError",
    "InputError",
    "ConfigError",
    "StoryIndexError",
    "IndexLockedError",
    "IndexDamagedError",
    "IndexFormatError",
]


def test_the_classes_form_one_hierarchy_under_megashingle_error():
    for name in CLASSES:
        cls = getattr(megashingle, name)
        assert name in megashingle.__all__
        assert cls.__module__ == "megashingle"
        assert issubclass(cls, megashingle.MegashingleError)
        assert issubclass(cls, ValueError)
    for name in ["IndexLockedError", "IndexDamagedError", "IndexFormatError"]:
        assert issubclass(getattr(megashingle, name), megashingle.StoryIndexError)
    assert not issubclass(megashingle.MegashingleError, OSError)


def test_bad_input_is_an_input_error():
    with pytest.raises(megashingle.InputError) as raised:
        megashingle.cluster(["a", "b", "c"], [STORY, STORY])
    assert type(raised.value) is megashingle.InputError
    assert str(raised.value) == "texts ended at document 3 while ids go on: give one text per id"
    with pytest.raises(megashingle.InputError, match="fewer than the shingle size"):
        megashingle.compare("two words", STORY)
    with pytest.raises(megashingle.InputError, match=r"^megashingle.cluster: repeated ids: 'a' \(2 times\)"):
        megashingle.cluster(["a", "a"], [STORY, STORY], strict=True)


def test_a_bad_setting_is_a_config_error(tmp_path):
    with pytest.raises(megashingle.ConfigError) as raised:
        megashingle.Config(no_such_key=1)
    assert type(raised.value) is megashingle.ConfigError
    assert str(raised.value).startswith("no_such_key: no such setting")
    with pytest.raises(megashingle.ConfigError, match="out of range"):
        megashingle.Config(min_similarity=2.0)
    missing = tmp_path / "missing.toml"
    with pytest.raises(megashingle.ConfigError) as raised:
        megashingle.Config.from_file(missing)
    assert str(raised.value) == f"{missing}: cannot read the configuration"


def test_an_index_that_cannot_be_used_is_a_story_index_error(tmp_path):
    path = tmp_path / "stories.idx"
    with pytest.raises(megashingle.StoryIndexError) as raised:
        megashingle.Index(path).query(STORY)
    assert type(raised.value) is megashingle.StoryIndexError
    assert str(raised.value) == f"{path}: no index there (an index is made by the first add to it)"
    megashingle.Index(path).add(["a"], [STORY])
    with pytest.raises(megashingle.StoryIndexError, match=r'^document:1: id "a" is already in the index') as raised:
        megashingle.Index(path).add(["a"], [STORY + " again"])
    assert str(raised.value).endswith("nothing was added: leave the record out, or add it as a replacement of the indexed document (upsert=True)")


def test_an_index_held_by_another_is_an_index_locked_error(tmp_path):
    path = tmp_path / "stories.idx"
    holder = megashingle.Index(path)
    holder.add(["a"], [STORY])
    holder.query(STORY)  # keeps the index open, and locked
    with pytest.raises(megashingle.IndexLockedError) as raised:
        megashingle.Index(path).add(["b"], [STORY + " more"])
    assert type(raised.value) is megashingle.IndexLockedError
    assert str(raised.value).startswith(f"{path}: ")
    assert "nothing was changed" in str(raised.value) or "open in another program" in str(raised.value)
    holder.close()
    megashingle.Index(path).add(["b"], [STORY + " more"])


def test_a_file_that_is_no_index_is_an_index_format_error(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("not an index\n" * 100)
    with pytest.raises(megashingle.IndexFormatError) as raised:
        megashingle.Index(path).export()
    assert type(raised.value) is megashingle.IndexFormatError
    assert str(raised.value).startswith(f"{path}: not a megashingle index (not a redb database)")
    assert path.read_text() == "not an index\n" * 100


def test_a_damaged_index_is_an_index_damaged_error(tmp_path):
    path = tmp_path / "stories.idx"
    megashingle.Index(path).add(["a", "b"], [STORY, STORY + " and more"])
    data = bytearray(path.read_bytes())
    # The database's header stays; everything after it is overwritten.
    data[4096:] = b"\xff" * (len(data) - 4096)
    path.write_bytes(bytes(data))
    with pytest.raises(megashingle.IndexDamagedError) as raised:
        megashingle.Index(path).export()
    assert type(raised.value) is megashingle.IndexDamagedError
    assert "restore it from a copy" in str(raised.value) or "restore the index from a copy" in str(raised.value)


def test_a_file_the_system_refuses_is_an_os_error(tmp_path):
    missing = tmp_path / "no-such-folder" / "stories.idx"
    with pytest.raises(OSError) as raised:
        megashingle.Index(missing).add(["a"], [STORY])
    assert isinstance(raised.value, FileNotFoundError)
    assert not isinstance(raised.value, megashingle.MegashingleError)
    assert raised.value.errno == 2
    assert str(raised.value).startswith("[Errno 2] ")
    assert "No such file or directory" in str(raised.value)
    reader = _megashingle.RecordReader([(str(tmp_path / "absent.csv"), None)])
    with pytest.raises(FileNotFoundError) as raised:
        reader.next_batch()
    assert str(raised.value) == f"[Errno 2] {tmp_path / 'absent.csv'}: cannot open: No such file or directory"


def test_a_packed_value_of_another_version_is_an_input_error():
    sketcher = megashingle.Sketcher()
    offsets, data = sketcher._inner.shingle_packed([STORY])
    assert bytes(data[:4]) == b"MSs1"
    older = data.copy()
    older[:4] = np.frombuffer(b"MSs0", np.uint8)
    with pytest.raises(megashingle.InputError) as raised:
        _megashingle.packed_page_values(offsets, older)
    assert str(raised.value) == (
        'a value of packed shingle sets has the tag "MSs0", not "MSs1": it was packed by another '
        "version of megashingle or is not such a value; pack and unpack with one version"
    )
    with pytest.raises(megashingle.InputError, match="^a value of packed shingle sets is cut short or malformed$"):
        _megashingle.packed_page_values(np.array([0, 8], np.int32), data[:8].copy())


def _read_all(reader):
    ids, ats = [], []
    while (batch := reader.next_batch()) is not None:
        for name, out in (("id", ids), ("at", ats)):
            offsets, data = batch[f"{name}_offsets"], bytes(batch[f"{name}_data"])
            out.extend(data[offsets[i] : offsets[i + 1]].decode() for i in range(len(offsets) - 1))
    return ids, ats


def test_a_damaged_gzip_member_of_a_warc_is_reported_and_the_next_one_read(tmp_path):
    words = " ".join(f"word{i}" for i in range(400))
    data, damaged_at, next_at = warc_gz_with_a_damaged_member([words, words, words])
    path = tmp_path / "crawl.warc.gz"
    path.write_bytes(data)
    reader = _megashingle.RecordReader([(str(path), None)])
    ids, ats = _read_all(reader)
    assert ids == ["http://a/1", "http://a/3"]
    assert ats[0] == f"{path}@0" and ats[1].startswith(f"{path}@")
    [report] = reader.warnings()
    assert report.startswith(f"{path}: the gzip member at byte {damaged_at} cannot be decompressed (")
    assert report.endswith(
        f"); its records are lost and reading goes on at the next member, at byte {next_at}; "
        "fetch the file again to read them; record skipped"
    )


def test_an_archive_in_a_folder_gives_its_own_ids(tmp_path):
    folder = tmp_path / "crawl"
    folder.mkdir()
    (folder / "c.warc").write_bytes(warc_resource("http://a/x", "2025-06-03T10:00:00Z", STORY))
    (folder / "list.mbox").write_text(f"From a@b Tue Jun  3 10:00:00 2025\nSubject: s\n\n{STORY}\n")
    files = [(str(folder / "c.warc"), "c.warc"), (str(folder / "list.mbox"), "list.mbox")]
    ids, ats = _read_all(_megashingle.RecordReader(files))
    assert ids == ["http://a/x", "list.mbox#1"]
    assert ats == [f"{folder / 'c.warc'}@0", f"{folder / 'list.mbox'}#1"]


def test_an_index_that_keeps_no_passages_is_an_index_format_error_for_reuse(tmp_path):
    import pathlib
    import shutil

    fixture = pathlib.Path(__file__).resolve().parents[2] / "fixtures" / "index-format-1" / "index.db"
    path = tmp_path / "old.db"
    shutil.copy(fixture, path)
    index = megashingle.Index(path)
    assert index.query("a text of a few words to look for") == []
    with pytest.raises(megashingle.IndexFormatError) as raised:
        index.query_reuse("a text of a few words to look for")
    assert str(raised.value) == (
        f'{path}: the index keeps no passages of its documents (index format "megashingle-index 1"), so '
        'reuse cannot be found through it; make an index that keeps them (format "megashingle-index 6") '
        "with `index add --passages` on its first add, or ask this one for near-duplicates only"
    )


def test_passages_asked_of_an_index_made_without_them_are_an_index_format_error(tmp_path):
    path = tmp_path / "plain.db"
    index = megashingle.Index(path)
    index.add(["a"], ["a text of a few words to look for in the index"])
    before = path.read_bytes()
    with pytest.raises(megashingle.IndexFormatError) as raised:
        index.add(["b"], ["another text of a few words for the index"], passages=True)
    assert str(raised.value) == (
        f'{path}: the index was made without passages (index format "megashingle-index 5") and cannot '
        "begin to keep them, as its documents have none; add to it without --passages, or make a new "
        "index with `index add --passages` on its first add"
    )
    assert path.read_bytes() == before
