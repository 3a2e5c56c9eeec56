"""The rules the Spark job applies in its own plan come from the library: the bucket rule of
candidate pairs, verification's prefilter and what a file is read as."""

import pytest

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


def test_files_are_classified_by_the_librarys_table_of_formats(tmp_path):
    detect = megashingle.detect_format
    assert detect("a/b.txt", in_folder=True) == ("text", ",")
    assert detect("a/b.HTML.gz", in_folder=True) == ("html", ",")
    assert detect("a/b.parquet", in_folder=True) == ("parquet", ",")
    assert detect("a/crawl.warc.gz", in_folder=True) == ("warc", ",")
    assert detect("a/b.csv", in_folder=True) is None
    assert detect("a/b.parquet.gz", in_folder=True) is None
    assert detect("b.csv") == ("csv", ",")
    assert detect("b.tsv") == ("csv", "\t")
    assert detect("b.eml") == ("mail", ",")
    assert detect("b.mbox") == ("mbox", ",")
    assert detect("b.eml", "csv") == ("csv", ",")
    assert detect("b.parquet") == ("parquet", ",")
    assert detect("b.data", "parquet") == ("parquet", ",")
    assert detect(str(tmp_path / "b.data")) == ("records", ",")
    assert detect("s3a://bucket/x.jsonl.gz", remote=True) == ("jsonl", ",")
    assert detect("s3a://bucket/x.tsv", remote=True) == ("csv", "\t")
    assert detect("s3a://bucket/x.parquet", remote=True) == ("parquet", ",")
    assert detect("s3a://bucket/x.warc.gz", remote=True) == ("warc", ",")
    assert detect("s3a://bucket/x", remote=True) is None
    sniffed = tmp_path / "table.bin"
    sniffed.write_bytes(b"PAR1 and more")
    assert detect(str(sniffed)) == ("parquet", ",")
    with pytest.raises(megashingle.InputError, match="a compressed Parquet file cannot be read"):
        detect("b.parquet.gz")
    with pytest.raises(megashingle.InputError, match="expected csv, jsonl or parquet"):
        detect("b.csv", "xml")


def test_the_job_plans_folders_and_files_as_the_command_reads_them(tmp_path):
    folder = tmp_path / "docs"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.txt").write_text("one")
    (folder / "sub" / "b.eml").write_text("two")
    (folder / "notes.csv").write_text("id,text\n")
    (folder / "table.parquet").write_bytes(b"PAR1")
    planned = inputs.plan_inputs([str(folder)])
    assert [doc_id for _, doc_id in planned.files] == ["a.txt", "sub/b.eml"]
    # The Parquet file of a folder of documents is read too, in the command's order.
    assert planned.parquet == [str(folder / "table.parquet")]
    assert planned.file_positions + planned.parquet_positions == [0, 1, 2]
    assert planned.ignored == 1


def test_a_remote_tsv_is_csv_separated_by_tabs_and_a_remote_document_is_refused():
    planned = inputs.plan_inputs(["s3a://bucket/x.tsv", "hdfs://n/y.jsonl", "s3a://bucket/z"])
    assert planned.remote == [
        ("s3a://bucket/x.tsv", "csv", "\t"),
        ("hdfs://n/y.jsonl", "jsonl", ","),
        ("s3a://bucket/z", "parquet", ","),
    ]
    with pytest.raises(megashingle.InputError) as refused:
        inputs.plan_inputs(["s3a://bucket/crawl.warc.gz"])
    assert str(refused.value).startswith("s3a://bucket/crawl.warc.gz: a remote warc file cannot be read")
