"""The rules the Spark job applies in its own plan come from the library: the bucket rule of
candidate pairs, verification's prefilter and what a file is read as."""

import megashingle
from megashingle import _megashingle
from megashingle.spark import candidates, inputs


def test_the_bucket_rule_is_all_pairs_then_a_star_then_nothing():
    assert candidates.ALL_PAIRS_BUCKET == _megashingle.ALL_PAIRS_BUCKET == 16
    rules = [_megashingle.bucket_rule(n, 40) for n in range(2, 43)]
    assert rules == ["all_pairs"] * 15 + ["star"] * 24 + ["cut"] * 2
    # The job pairs every document of a bucket of up to ALL_PAIRS_BUCKET, stars past it.
    assert _megashingle.bucket_rule(candidates.ALL_PAIRS_BUCKET, 1000) == "all_pairs"
    assert _megashingle.bucket_rule(candidates.ALL_PAIRS_BUCKET + 1, 1000) == "star"


def test_the_prefilter_is_half_the_weakest_link():
    assert candidates._prefilter(megashingle.Config(min_similarity=0.5, attach_similarity=0)) == 0.25
    config = megashingle.Config(min_similarity=0.5, attach_similarity=0.3)
    assert candidates._prefilter(config) == _megashingle.verification_prefilter(config) == 0.15


def test_files_are_classified_as_the_command_reads_them(tmp_path):
    kind = _megashingle.input_kind
    assert kind("a/b.txt", in_folder=True) == "document"
    assert kind("a/b.HTML.gz", in_folder=True) == "document"
    assert kind("a/b.parquet", in_folder=True) == "parquet"
    assert kind("a/b.csv", in_folder=True) == "ignored"
    assert kind("b.csv") == "records"
    assert kind("b.eml") == "document"
    assert kind("b.eml", "csv") == "records"
    assert kind("b.parquet") == "parquet"
    assert kind("b.data", "parquet") == "parquet"
    assert kind("s3a://bucket/x.jsonl.gz", remote=True) == "jsonl"
    assert kind("s3a://bucket/x.tsv", remote=True) == "csv"
    assert kind("s3a://bucket/x.parquet", remote=True) == "parquet"
    assert kind("s3a://bucket/x", remote=True) is None
    sniffed = tmp_path / "table.bin"
    sniffed.write_bytes(b"PAR1 and more")
    assert kind(str(sniffed)) == "parquet"
    folder = tmp_path / "docs"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.txt").write_text("one")
    (folder / "sub" / "b.eml").write_text("two")
    (folder / "notes.csv").write_text("id,text\n")
    planned = inputs.plan_inputs([str(folder)])
    assert [doc_id for _, doc_id in planned.files] == ["a.txt", "sub/b.eml"]
    assert planned.ignored == 1
