"""The Python package against the library and the command: configuration, cluster, compare,
canon, sketches and the story index."""

import csv
import io
import pickle
import random

import numpy as np
import pytest

import megashingle
from conftest import STORY, run_cli


def test_config_keywords_map_to_the_dotted_keys():
    config = megashingle.Config(min_similarity=0.4, shingle_size=4)
    assert config.get("cluster.min-similarity") == "0.4"
    assert config.get("shingle.size") == "4"
    assert megashingle.Config({"cluster.min-similarity": 0.5}).get("min_similarity") == "0.5"
    assert megashingle.Config().get("shingle_size") == "3"
    assert "min-similarity = 0.4" in config.to_toml()
    assert pickle.loads(pickle.dumps(config)).to_toml() == config.to_toml()


def test_config_repr_names_the_changed_settings():
    assert repr(megashingle.Config()) == "Config()"
    changed = repr(megashingle.Config(min_similarity=0.4, verify="estimate", shingle_size=4))
    assert changed.startswith("Config(") and changed.endswith(")")
    assert sorted(changed[len("Config("):-1].split(", ")) == [
        'cluster.min-similarity=0.4', 'cluster.verify="estimate"', "shingle.size=4"
    ]


def test_config_errors_carry_the_library_message(tmp_path):
    with pytest.raises(ValueError, match="no such setting"):
        megashingle.Config(min_similarityy=0.4)
    with pytest.raises(ValueError, match="no section `clustr`"):
        megashingle.Config({"clustr.min-similarity": 0.4})
    with pytest.raises(ValueError, match="shingle.size"):
        megashingle.Config(shingle_size=0)
    with pytest.raises(ValueError, match="missing.toml"):
        megashingle.Config.from_file(tmp_path / "missing.toml")
    with pytest.raises(TypeError, match="bool, int, float, str or list"):
        megashingle.Config(min_similarity=object())


def test_config_from_file_reads_the_toml(tmp_path):
    path = tmp_path / "pipeline.toml"
    path.write_text("[cluster]\nmin-similarity = 0.6\n")
    config = megashingle.Config.from_file(path, shingle_size=5)
    assert config.get("min_similarity") == "0.6"
    assert config.get("shingle_size") == "5"


def _three():
    ids = ["a", "b", "c"]
    texts = [STORY, STORY + " and local shop owners", "a recipe for bread with flour water salt and yeast"]
    return ids, texts


def test_cluster_rows_and_order():
    ids, texts = _three()
    rows = megashingle.cluster(ids, texts)
    assert [r["doc_id"] for r in rows] == ["b", "a", "c"]
    assert rows[0] == {"doc_id": "b", "cluster_id": "a", "cluster_size": 2, "similarity": 1.0, "status": "ok"}
    assert rows[1]["similarity"] < 1.0
    assert rows[2]["cluster_size"] == 1


def test_cluster_takes_generators_pandas_and_arrow():
    pd = pytest.importorskip("pandas")
    pa = pytest.importorskip("pyarrow")
    ids, texts = _three()
    expected = megashingle.cluster(ids, texts)
    assert megashingle.cluster(iter(ids), (t for t in texts)) == expected
    assert megashingle.cluster(pd.Series(ids), pd.Series(texts)) == expected
    assert megashingle.cluster(pa.array(ids), pa.array(texts, pa.large_string())) == expected
    # A slice of a chunked array is read at its offset.
    chunked = pa.chunked_array([pa.array(["x"] + texts[:2]), pa.array(texts[2:])])
    assert megashingle.cluster(pa.array(ids), chunked.slice(1)) == expected
    arrow_series = pd.Series(texts, dtype="string[pyarrow]")
    assert megashingle.cluster(pd.Series(ids, dtype="string[pyarrow]"), arrow_series) == expected


def test_cluster_input_errors():
    with pytest.raises(ValueError, match="texts ended at document 3"):
        megashingle.cluster(["a", "b", "c"], [STORY, STORY])
    with pytest.raises(ValueError, match="document 2 has an empty id"):
        megashingle.cluster(["a", ""], [STORY, STORY])
    with pytest.raises(TypeError, match="text 1: expected str"):
        megashingle.cluster(["a"], [b"bytes"])
    with pytest.raises(TypeError, match="not a single string"):
        megashingle.cluster(["a"], STORY)
    pa = pytest.importorskip("pyarrow")
    with pytest.raises(ValueError, match="value 2 is null"):
        megashingle.cluster(["a", "b"], pa.array([STORY, None]))


def test_cluster_matches_the_command(cli, tmp_path):
    ids, texts = _three()
    texts.append("too short")
    ids.append("d")
    docs = tmp_path / "docs.csv"
    with docs.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "text"])
        w.writerows(zip(ids, texts))
    out = run_cli(cli, "cluster", docs, "-q").stdout
    expected = list(csv.DictReader(io.StringIO(out)))
    got = megashingle.cluster(ids, texts)
    assert len(got) == len(expected) == 4
    for g, e in zip(got, expected):
        assert g["doc_id"] == e["doc_id"] and g["cluster_id"] == e["cluster_id"]
        assert str(g["cluster_size"]) == e["cluster_size"] and g["status"] == e["status"]
        assert ("" if g["similarity"] is None else f"{g['similarity']:.4f}") == e["similarity"]


def test_dedup_drops_the_close_copies():
    ids = ["a", "b", "c", "d"]
    texts = [STORY, STORY + " and local shop owners", "a recipe for bread with flour water salt and yeast", STORY.replace("monday", "tuesday")]
    dropped = megashingle.dedup(ids, texts)
    assert {d["doc_id"] for d in dropped} == {"a", "d"}
    assert {d["duplicate_of"] for d in dropped} == {"b"}
    for d in dropped:
        assert d["similarity"] == max(d["jaccard"], d["containment"]) >= 0.5
    # "a" is wholly inside "b" (containment 1); "d" differs by one word.
    strict = megashingle.dedup(ids, texts, megashingle.Config({"dedup.threshold": 1.0}))
    assert [d["doc_id"] for d in strict] == ["a"]


def test_dedup_matches_the_command(cli, tmp_path):
    ids = ["a", "b", "c", "d"]
    texts = [STORY, STORY + " and local shop owners", "a recipe for bread with flour water salt and yeast", STORY.replace("monday", "tuesday")]
    docs = tmp_path / "docs.csv"
    with docs.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "text"])
        w.writerows(zip(ids, texts))
    run_cli(cli, "dedup", docs, "-q", "--dropped", tmp_path / "dropped.csv")
    with open(tmp_path / "dropped.csv", newline="") as f:
        expected = list(csv.DictReader(f))
    got = megashingle.dedup(ids, texts)
    assert [(g["doc_id"], g["duplicate_of"], f"{g['jaccard']:.4f}") for g in got] == [
        (e["doc_id"], e["duplicate_of"], e["jaccard"]) for e in expected
    ]


def test_reuse_matches_the_command(cli, tmp_path):
    rng = random.Random(3)
    vocab = [f"word{i}" for i in range(3000)]
    source = " ".join(rng.choices(vocab, k=200))
    passage = " ".join(source.split()[60:110])
    ids = ["source", "brief", "other"]
    texts = [
        source,
        " ".join(rng.choices(vocab, k=80)) + " " + passage + " " + " ".join(rng.choices(vocab, k=60)),
        " ".join(rng.choices(vocab, k=200)),
    ]
    docs = tmp_path / "docs.csv"
    with docs.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "text"])
        w.writerows(zip(ids, texts))
    run_cli(cli, "reuse", docs, "-q", "-o", tmp_path / "pairs.csv")
    with open(tmp_path / "pairs.csv", newline="") as f:
        expected = list(csv.DictReader(f))
    got = megashingle.reuse(ids, texts)
    assert [(g["doc_a"], g["doc_b"]) for g in got] == [("brief", "source")]
    assert got[0]["shared_words"] >= 40
    assert [
        (g["doc_a"], g["doc_b"], f"{g['a_in_b']:.4f}", f"{g['b_in_a']:.4f}", str(g["shared_words"]))
        for g in got
    ] == [(e["doc_a"], e["doc_b"], e["a_in_b"], e["b_in_a"], e["shared_words"]) for e in expected]


def test_compare_and_canon():
    c = megashingle.compare("a b c d e f g", "a b c d e f h")
    assert (c["common"], c["first_shingles"]) == (4, 5)
    assert abs(c["jaccard"] - 4 / 6) < 1e-9
    with pytest.raises(ValueError, match="fewer than the shingle size"):
        megashingle.compare("a b", "a b c d")
    assert megashingle.canon("<p>Hello&nbsp;WORLD</p>") == "hello world"
    assert megashingle.canon("a b c", megashingle.Config(min_word_length=2)) == ""


def test_sketches_one_and_batch_agree():
    sketcher = megashingle.Sketcher(megashingle.Config())
    one = sketcher.sketch(STORY)
    assert one.status == "ok" and one.minima.dtype == np.uint32 and one.minima.shape == (84,)
    assert one.keys.dtype == np.uint64 and len(one.keys) > 0
    assert np.all(np.diff(one.shingles.astype(np.int64)) > 0)
    batch = sketcher.sketch_batch([STORY, "two words"])
    assert batch["minima"].shape == (2, 84)
    assert np.array_equal(batch["minima"][0], one.minima)
    ko = batch["key_offsets"]
    assert np.array_equal(batch["keys"][ko[0]:ko[1]], one.keys)
    assert list(batch["comparable"]) == [True, False]
    assert ko[2] == ko[1]
    assert sketcher.sketch("two words").status == "too_short"


def test_boilerplate_given_changes_the_sketch():
    plain = megashingle.Sketcher().sketch(STORY)
    filtered = megashingle.Sketcher(boilerplate=plain.shingles[:3]).sketch(STORY)
    assert len(filtered.shingles) == len(plain.shingles) - 3
    assert not np.array_equal(filtered.minima, plain.minima)


def test_a_text_kept_whole_leaves_out_only_the_spread_shingles():
    plain = megashingle.Sketcher().sketch(STORY)
    # Every shingle is boilerplate: the text is kept whole, but for the spread ones.
    whole = megashingle.Sketcher(boilerplate=plain.shingles).sketch(STORY)
    assert np.array_equal(whole.shingles, plain.shingles)
    spread = plain.shingles[:3]
    kept = megashingle.Sketcher(boilerplate=plain.shingles, spread=spread).sketch(STORY)
    assert np.array_equal(kept.shingles, plain.shingles[3:])
    # Spread shingles are boilerplate too, given or not.
    assert np.array_equal(megashingle.Sketcher(spread=spread).sketch(STORY).shingles, plain.shingles[3:])


def test_index_add_query_export(tmp_path):
    path = tmp_path / "stories.db"
    index = megashingle.Index(path)
    first = index.add(["a", "c"], [STORY, "a recipe for bread with flour water salt and yeast baked hot"])
    assert {r["doc_id"] for r in first} == {"a", "c"} and all(r["new_story"] for r in first)
    second = index.add(["b"], [STORY + " and the mayor"], times=[1_700_000_000])
    assert second[0]["story_id"] == first[0]["story_id"] and not second[0]["new_story"]
    matches = index.query(STORY)
    assert matches[0]["doc_id"] in ("a", "b") and matches[0]["similarity"] > 0.5
    exported = index.export()
    assert sorted(r["doc_id"] for r in exported) == ["a", "b", "c"]
    with pytest.raises(ValueError, match="already"):
        index.add(["a"], [STORY])
    missing = megashingle.Index(tmp_path / "none.db")
    with pytest.raises(ValueError, match="no index there"):
        missing.export()


def _sentences(seed, count):
    syllables = ["ka", "lo", "mi", "ne", "su", "ta", "ri", "vo", "de", "ba", "gu", "ze", "po", "fi", "ha", "ju"]

    def word(n):
        return "".join(syllables[(n >> (4 * i)) % 16] for i in range(5))

    return [" ".join(word(seed * 4096 + s * 12 + i) for i in range(12)) + "." for s in range(count)]


def test_index_query_reuse_finds_a_passage_inside_another_article(tmp_path):
    index = megashingle.Index(tmp_path / "archive.db")
    source = _sentences(1, 12)
    index.add(["source", "other"], [" ".join(source), " ".join(_sentences(2, 10))], passages=True)
    own = _sentences(4, 10)
    answer = index.query_reuse(" ".join(own[:5] + source[4:7] + own[5:]))
    assert [(m["doc_id"], m["shared_words"], m["passages"]) for m in answer["matches"]] == [("source", 36, 1)]
    assert answer["matches"][0]["text_passages"] == [(60, 96)]
    assert (answer["words"], answer["found_words"]) == (156, 36)
    assert answer["uniqueness"] == pytest.approx(120 / 156)
    quoted = index.query_reuse(" ".join(own[:5] + source[4:5] + own[5:]))
    assert quoted["matches"] == [] and quoted["uniqueness"] == 1.0
    # A later add keeps passages without being asked.
    index.add(["third"], [" ".join(_sentences(3, 8))])
    answer = index.query_reuse(" ".join(own[:5] + _sentences(3, 8)[2:5] + own[5:]))
    assert [(m["doc_id"], m["shared_words"]) for m in answer["matches"]] == [("third", 36)]
    # Asked together, each text gets the answer it gets alone, in the order asked.
    texts = [" ".join(own[:5] + source[4:7] + own[5:]), "", " ".join(_sentences(2, 10))]
    assert index.query_reuse_many(iter(texts)) == [index.query_reuse(t) for t in texts]
    assert index.query_reuse_many([]) == []


def test_an_index_keeps_no_passages_unless_made_with_them(tmp_path):
    plain = megashingle.Index(tmp_path / "plain.db")
    kept = megashingle.Index(tmp_path / "kept.db")
    texts = [" ".join(_sentences(1, 12)), " ".join(_sentences(2, 10))]
    assert plain.add(["a", "b"], texts) == kept.add(["a", "b"], texts, passages=True)
    assert (tmp_path / "plain.db").stat().st_size < (tmp_path / "kept.db").stat().st_size
    with pytest.raises(megashingle.IndexFormatError):
        plain.query_reuse(texts[0])
    with pytest.raises(megashingle.IndexFormatError):
        plain.query_reuse_many(texts)
    assert [m["doc_id"] for m in kept.query_reuse(texts[0])["matches"]] == ["a"]


def test_help_is_useful():
    assert "cluster command" in megashingle.cluster.__doc__ or "megashingle cluster" in megashingle.cluster.__doc__
    assert "numpy" in megashingle.Sketcher.sketch_batch.__doc__


def test_threads_are_capped_at_four_per_core_with_a_warning():
    most = 4 * megashingle._cores()
    with pytest.warns(RuntimeWarning, match=rf"threads=1000000 is more than 4 threads per core .*running {most} threads"):
        sketcher = megashingle.Sketcher(threads=10**6)
    assert sketcher.sketch_batch([STORY])["comparable"].tolist() == [True]
    ids, texts = _three()
    with pytest.warns(RuntimeWarning, match="megashingle.cluster: threads=1000000"):
        assert megashingle.cluster(ids, texts, threads=10**6) == megashingle.cluster(ids, texts)
    with pytest.warns(RuntimeWarning, match="megashingle.dedup: threads=1000000"):
        megashingle.dedup(ids, texts, threads=10**6)
    with pytest.raises(ValueError, match=r"threads=-1: give 0 \(one per core\) or a positive count"):
        megashingle.Sketcher(threads=-1)
    with pytest.raises(TypeError, match="threads must be an int"):
        megashingle.cluster(ids, texts, threads=2.5)


def test_repeated_ids_warn_or_raise():
    with pytest.warns(UserWarning, match=r"megashingle.cluster: repeated ids: 'a' \(2 times\); the first document of each id is kept, 1 dropped"):
        rows = megashingle.cluster(["a", "a"], [STORY, STORY + " and more"])
    assert [r["doc_id"] for r in rows] == ["a"]
    with pytest.raises(ValueError, match=r"repeated ids: 'a' \(2 times\); ids must be unique"):
        megashingle.cluster(["a", "a"], [STORY, STORY], strict=True)
    # A one-shot iterator of ids is read once and still clustered.
    with pytest.warns(UserWarning, match=r"'b' \(3 times\)"):
        rows = megashingle.cluster(iter(["b", "b", "b", "c"]), [STORY] * 4)
    assert sorted(r["doc_id"] for r in rows) == ["b", "c"]
    with pytest.warns(UserWarning, match=r"megashingle.dedup: repeated ids: 'a' \(2 times\)"):
        megashingle.dedup(["a", "a"], [STORY, STORY])
    with pytest.raises(ValueError, match="megashingle.dedup: repeated ids"):
        megashingle.dedup(["a", "a"], [STORY, STORY], strict=True)
    pa = pytest.importorskip("pyarrow")
    with pytest.warns(UserWarning, match=r"'x' \(2 times\)"):
        megashingle.cluster(pa.array(["x", "x"]), pa.array([STORY, STORY]))


def test_index_add_refuses_an_id_given_twice(tmp_path):
    index = megashingle.Index(tmp_path / "stories.db")
    with pytest.raises(ValueError, match=r"Index.add: repeated ids: 'a' \(2 times\); give each id once \(nothing was added\)"):
        index.add(["a", "a"], [STORY, STORY])
    assert not (tmp_path / "stories.db").exists() or index.export() == []


def test_sketcher_boilerplate_must_be_32_bit_keys():
    with pytest.raises(ValueError, match="unsigned 32-bit integers"):
        megashingle.Sketcher(boilerplate=[-1, 5])
    with pytest.raises(ValueError, match="unsigned 32-bit integers"):
        megashingle.Sketcher(boilerplate=[2**40])
    with pytest.raises(TypeError, match="one-dimensional array of shingle keys"):
        megashingle.Sketcher(boilerplate=[0.5, 1.5])
    assert megashingle.Sketcher(boilerplate=[]).sketch(STORY).status == "ok"
    with pytest.raises(ValueError, match="spread: shingle keys are unsigned 32-bit integers"):
        megashingle.Sketcher(spread=[-1])


def test_other_entry_points_reject_wrong_types():
    with pytest.raises(TypeError):
        megashingle.compare(1, "a b c d")
    with pytest.raises(TypeError):
        megashingle.canon(None)
    with pytest.raises(TypeError, match="text 2: expected str"):
        megashingle.Sketcher().sketch_batch([STORY, None])
    with pytest.raises(ValueError, match="times ended at document 2"):
        megashingle.cluster(["a", "b"], [STORY, STORY], times=[1])
