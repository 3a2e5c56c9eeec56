//! Integration tests of the `megashingle` binary: error reporting and exit codes, atomic output,
//! the `compare`, `canon` (main-text extraction, `--dropped`), `config` and `tune` commands,
//! `--set KEY=VALUE`, the shape and determinism of the cluster table, bridges and heavy
//! rewrites in clustering, and a golden output over `fixtures/news`.
//!
//! Refresh the golden file after an intended change of the defaults with
//! `UPDATE_GOLDEN=1 cargo test --test cli golden`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use predicates::prelude::*;
use tempfile::TempDir;

mod common;
use common::{
    dev_benchmark_docs, megashingle, single_error_line, stderr_lines, stdout_of, temp, BIN,
};

const HEADER: &str = "doc_id,cluster_id,cluster_size,similarity,status";
const COLUMNS: [&str; 5] = [
    "doc_id",
    "cluster_id",
    "cluster_size",
    "similarity",
    "status",
];

// ---------------------------------------------------------------------------------------------
// Helpers

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn news() -> PathBuf {
    root().join("fixtures").join("news")
}

fn write(dir: &TempDir, name: &str, content: impl AsRef<[u8]>) -> PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, content).expect("write a test input");
    path
}

/// The one stderr line starting with `prefix`; fails unless there is exactly one.
fn only_line_starting(output: &Output, prefix: &str) -> String {
    let lines = stderr_lines(output);
    let matching: Vec<&String> = lines.iter().filter(|l| l.starts_with(prefix)).collect();
    assert_eq!(
        matching.len(),
        1,
        "expected one stderr line starting with {prefix:?}, got: {lines:#?}"
    );
    matching[0].clone()
}

/// One parsed row of the CSV cluster table.
#[derive(Debug, Clone, PartialEq)]
struct TableRow {
    doc_id: String,
    cluster_id: String,
    cluster_size: usize,
    similarity: String,
    status: String,
}

fn parse_table(csv_text: &str) -> Vec<TableRow> {
    let mut reader = csv::Reader::from_reader(csv_text.as_bytes());
    let header: Vec<String> = reader
        .headers()
        .expect("a header row")
        .iter()
        .map(str::to_owned)
        .collect();
    assert_eq!(header, COLUMNS);
    reader
        .records()
        .map(|r| {
            let r = r.expect("a well-formed output row");
            assert_eq!(r.len(), 5, "row {r:?}");
            TableRow {
                doc_id: r[0].to_owned(),
                cluster_id: r[1].to_owned(),
                cluster_size: r[2].parse().expect("cluster_size is a number"),
                similarity: r[3].to_owned(),
                status: r[4].to_owned(),
            }
        })
        .collect()
}

/// A CSV (`id,text`) of `records`, written with proper quoting.
fn csv_of<'a>(records: impl IntoIterator<Item = (&'a str, &'a str)>) -> Vec<u8> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.write_record(["id", "text"]).unwrap();
    for (id, text) in records {
        writer.write_record([id, text]).unwrap();
    }
    writer.into_inner().unwrap()
}

/// The document files under `fixtures/news` as (id, text), id = path relative to the folder.
fn fixture_documents() -> Vec<(String, String)> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(&news(), &mut files);
    let mut docs: Vec<(String, String)> = files
        .into_iter()
        .filter(|p| {
            let ext = p.extension().and_then(|e| e.to_str()).unwrap_or("");
            ["txt", "html", "htm", "eml"].contains(&ext.to_ascii_lowercase().as_str())
        })
        .map(|p| {
            let id = p
                .strip_prefix(news())
                .unwrap()
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            let text = std::fs::read_to_string(&p).expect("fixtures are UTF-8");
            (id, text)
        })
        .collect();
    docs.sort();
    docs
}

/// A fixed pseudo-random permutation (xorshift Fisher–Yates), so the test needs no RNG crate.
fn shuffled<T>(mut items: Vec<T>, seed: u64) -> Vec<T> {
    let mut state = seed | 1;
    for i in (1..items.len()).rev() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let j = (state % (i as u64 + 1)) as usize;
        items.swap(i, j);
    }
    items
}

const LONG_A: &str = "the river rose above the old stone bridge on tuesday night and the council \
                      closed the market square while volunteers filled sandbags near the school";
const LONG_B: &str = "a new ferry timetable starts in june with an extra evening crossing on \
                      fridays and cheaper tickets for island residents who commute to the mainland";

// ---------------------------------------------------------------------------------------------
// Bad input: one line on stderr naming the file and line, and the right exit code

#[test]
fn malformed_csv_record_is_reported_with_its_line_and_skipped() {
    let dir = temp();
    write(
        &dir,
        "bad.csv",
        format!("id,text\na,{LONG_A}\nb,too,many\nc,{LONG_B}\n"),
    );
    let assert = megashingle(dir.path())
        .args(["cluster", "bad.csv"])
        .assert()
        .code(1);
    let output = assert.get_output();
    let warning = only_line_starting(output, "warning: ");
    assert_eq!(
        warning,
        "warning: bad.csv:3: malformed CSV record: 3 fields where the header has 2; record skipped"
    );
    let ids: Vec<String> = parse_table(&stdout_of(output))
        .into_iter()
        .map(|r| r.doc_id)
        .collect();
    assert_eq!(ids, ["a", "c"]);
    // The summary counts the skipped record.
    let summary = only_line_starting(output, "megashingle: ");
    assert!(summary.contains("1 records skipped"), "{summary}");
}

#[test]
fn strict_makes_a_malformed_csv_record_fatal_and_writes_nothing() {
    let dir = temp();
    write(
        &dir,
        "bad.csv",
        format!("id,text\na,{LONG_A}\nb,too,many\nc,{LONG_B}\n"),
    );
    let assert = megashingle(dir.path())
        .args(["cluster", "--strict", "bad.csv", "-o", "out.csv"])
        .assert()
        .code(2)
        .stdout("");
    let line = single_error_line(assert.get_output());
    assert!(
        line.contains("bad.csv:3: malformed CSV record") && line.contains("--strict"),
        "{line}"
    );
    assert!(!dir.path().join("out.csv").exists());
    let names: BTreeSet<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, BTreeSet::from(["bad.csv".to_owned()]));
}

#[test]
fn line_numbers_hold_with_crlf_line_ends_and_quoted_line_breaks() {
    // Excel and Python's csv module end lines with \r\n; a quoted text spans lines.
    let dir = temp();
    write(
        &dir,
        "crlf.csv",
        format!(
            "id,text\r\na,\"{LONG_A}\r\nsecond line\"\r\nb,too,many\r\nc,{LONG_B}\r\nd,bad,bad\r\n"
        ),
    );
    let assert = megashingle(dir.path())
        .args(["cluster", "crlf.csv"])
        .assert()
        .code(1);
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("warning: "))
        .collect();
    assert_eq!(
        lines,
        [
            "warning: crlf.csv:4: malformed CSV record: 3 fields where the header has 2; record skipped",
            "warning: crlf.csv:6: malformed CSV record: 3 fields where the header has 2; record skipped",
        ]
    );
}

#[test]
fn malformed_jsonl_line_is_reported_with_its_line_and_skipped() {
    let dir = temp();
    let content = format!(
        "{}\n{{\"id\": \"b\", \"text\": \n{}\n",
        serde_json::json!({"id": "a", "text": LONG_A}),
        serde_json::json!({"id": "c", "text": LONG_B}),
    );
    write(&dir, "bad.jsonl", content);
    let assert = megashingle(dir.path())
        .args(["cluster", "-q", "bad.jsonl"])
        .assert()
        .code(1);
    let output = assert.get_output();
    let lines = stderr_lines(output);
    assert_eq!(lines.len(), 1, "{lines:#?}");
    assert!(
        lines[0].starts_with("warning: bad.jsonl:2: malformed JSON record")
            && lines[0].ends_with("; record skipped"),
        "{}",
        lines[0]
    );
    let ids: Vec<String> = parse_table(&stdout_of(output))
        .into_iter()
        .map(|r| r.doc_id)
        .collect();
    assert_eq!(ids, ["a", "c"]);
}

#[test]
fn line_numbers_count_the_lines_of_quoted_multiline_fields() {
    let dir = temp();
    write(
        &dir,
        "multi.csv",
        format!("id,text\na,\"{LONG_A}\nsecond line\nthird line\"\nb,x,y\n"),
    );
    let assert = megashingle(dir.path())
        .args(["cluster", "-q", "multi.csv"])
        .assert()
        .code(1);
    let line = only_line_starting(assert.get_output(), "warning: ");
    assert!(
        line.starts_with("warning: multi.csv:5: malformed CSV record"),
        "{line}"
    );
}

#[test]
fn csv_byte_order_mark_and_quoted_header_are_accepted() {
    let dir = temp();
    let mut content = b"\xEF\xBB\xBF\"id\",\"text\"\r\n".to_vec();
    content.extend_from_slice(format!("a,\"{LONG_A}\"\r\n").as_bytes());
    write(&dir, "bom.csv", content);
    megashingle(dir.path())
        .args(["cluster", "-q", "bom.csv"])
        .assert()
        .code(0)
        .stderr("")
        .stdout(format!("{HEADER}\na,a,1,1.0000,ok\n"));
}

/// A JSONL file saved with a byte order mark (as some Windows editors do) should read like the
/// same CSV does: the mark is not part of the first record.
#[test]
fn jsonl_byte_order_mark_is_not_part_of_the_first_record() {
    let dir = temp();
    let mut content = b"\xEF\xBB\xBF".to_vec();
    for (id, text) in [("a", LONG_A), ("b", LONG_B)] {
        content.extend_from_slice(
            serde_json::json!({"id": id, "text": text})
                .to_string()
                .as_bytes(),
        );
        content.push(b'\n');
    }
    write(&dir, "bom.jsonl", content);
    let assert = megashingle(dir.path())
        .args(["cluster", "-q", "bom.jsonl"])
        .assert();
    let output = assert.get_output();
    assert_eq!(
        output.status.code(),
        Some(0),
        "stderr: {:?}",
        stderr_lines(output)
    );
    let ids: Vec<String> = parse_table(&stdout_of(output))
        .into_iter()
        .map(|r| r.doc_id)
        .collect();
    assert_eq!(ids, ["a", "b"]);
}

#[test]
fn missing_id_column_is_fatal_and_lists_the_columns_found() {
    let dir = temp();
    write(&dir, "noid.csv", format!("key,text\na,{LONG_A}\n"));
    let assert = megashingle(dir.path())
        .args(["cluster", "noid.csv"])
        .assert()
        .code(2)
        .stdout("");
    let line = single_error_line(assert.get_output());
    assert_eq!(
        line,
        "megashingle: error: noid.csv: no column `id` (the id column); \
         columns found: key, text; --id-column chooses the id column"
    );
    // The flag named in the message does choose the column.
    megashingle(dir.path())
        .args(["cluster", "-q", "--id-column", "key", "noid.csv"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("\na,a,1,1.0000,ok\n"));
}

#[test]
fn missing_text_column_is_fatal_and_lists_the_columns_found() {
    let dir = temp();
    write(&dir, "notext.csv", format!("id,body,extra\na,{LONG_A},x\n"));
    let assert = megashingle(dir.path())
        .args(["cluster", "notext.csv"])
        .assert()
        .code(2)
        .stdout("");
    let line = single_error_line(assert.get_output());
    assert_eq!(
        line,
        "megashingle: error: notext.csv: no column `text` (the text column); \
         columns found: id, body, extra; --text-column chooses the text column"
    );
}

#[test]
fn missing_jsonl_field_in_the_first_record_is_fatal_and_lists_the_fields_found() {
    let dir = temp();
    let content = format!("{}\n", serde_json::json!({"id": "a", "body": LONG_A}));
    write(&dir, "d.jsonl", content);
    let assert = megashingle(dir.path())
        .args(["cluster", "d.jsonl"])
        .assert()
        .code(2)
        .stdout("");
    let line = single_error_line(assert.get_output());
    assert!(
        line.contains("d.jsonl: no field `text`") && line.contains("fields found: body, id"),
        "{line}"
    );
}

#[test]
fn invalid_utf8_in_a_csv_record_is_reported_with_its_line_and_skipped() {
    let dir = temp();
    let mut content = format!("id,text\na,{LONG_A}\nb,bad ").into_bytes();
    content.extend_from_slice(b"\xFF\xFE byte sequence here\n");
    content.extend_from_slice(format!("c,{LONG_B}\n").as_bytes());
    write(&dir, "utf.csv", content);
    let assert = megashingle(dir.path())
        .args(["cluster", "-q", "utf.csv"])
        .assert()
        .code(1);
    let output = assert.get_output();
    let lines = stderr_lines(output);
    assert_eq!(lines.len(), 1, "{lines:#?}");
    assert_eq!(
        lines[0],
        "warning: utf.csv:3: invalid UTF-8 in `text` at byte 4; convert the file to UTF-8; \
         record skipped"
    );
    let ids: Vec<String> = parse_table(&stdout_of(output))
        .into_iter()
        .map(|r| r.doc_id)
        .collect();
    assert_eq!(ids, ["a", "c"]);
}

#[test]
fn empty_id_is_reported_naming_the_record() {
    let dir = temp();
    write(
        &dir,
        "eid.csv",
        format!("id,text\na,{LONG_A}\n  ,{LONG_B}\n"),
    );
    let assert = megashingle(dir.path())
        .args(["cluster", "-q", "eid.csv"])
        .assert()
        .code(1);
    let output = assert.get_output();
    let lines = stderr_lines(output);
    assert_eq!(lines.len(), 1, "{lines:#?}");
    assert!(
        lines[0].starts_with("warning: eid.csv:3: empty id in `id`"),
        "{}",
        lines[0]
    );
    assert_eq!(parse_table(&stdout_of(output)).len(), 1);
}

#[test]
fn duplicate_id_names_both_records_and_keeps_the_first() {
    let dir = temp();
    write(
        &dir,
        "dup.csv",
        format!("id,text\na,{LONG_A}\nb,{LONG_B}\na,something else entirely different here\n"),
    );
    let assert = megashingle(dir.path())
        .args(["cluster", "-q", "dup.csv"])
        .assert()
        .code(1);
    let output = assert.get_output();
    let lines = stderr_lines(output);
    assert_eq!(lines.len(), 1, "{lines:#?}");
    let line = &lines[0];
    assert!(
        line.starts_with("warning: dup.csv:4: duplicate id"),
        "{line}"
    );
    assert!(line.contains("dup.csv:2"), "{line}");
    let rows = parse_table(&stdout_of(output));
    let ids: Vec<&str> = rows.iter().map(|r| r.doc_id.as_str()).collect();
    assert_eq!(ids, ["a", "b"]);
}

#[test]
fn duplicate_id_across_two_inputs_names_both_files() {
    let dir = temp();
    write(&dir, "one.csv", format!("id,text\nx,{LONG_A}\n"));
    write(
        &dir,
        "two.csv",
        format!("id,text\ny,{LONG_B}\nx,{LONG_B}\n"),
    );
    let assert = megashingle(dir.path())
        .args(["cluster", "-q", "one.csv", "two.csv"])
        .assert()
        .code(1);
    let line = only_line_starting(assert.get_output(), "warning: ");
    assert!(
        line.starts_with("warning: two.csv:3: duplicate id") && line.contains("one.csv:2"),
        "{line}"
    );
}

/// A WARC `resource` record of `uri`, dated `date`, holding `text`.
fn warc_resource(uri: &str, date: &str, text: &str) -> Vec<u8> {
    let mut out = format!(
        "WARC/1.0\r\nWARC-Type: resource\r\nWARC-Target-URI: {uri}\r\nWARC-Date: {date}\r\n\
         Content-Type: text/plain\r\nContent-Length: {}\r\n\r\n",
        text.len()
    )
    .into_bytes();
    out.extend_from_slice(text.as_bytes());
    out.extend_from_slice(b"\r\n\r\n");
    out
}

#[test]
fn a_repeated_warc_uri_keeps_the_newer_record_and_names_both() {
    for newer_first in [false, true] {
        let dir = temp();
        std::fs::create_dir(dir.path().join("crawl")).unwrap();
        let old = warc_resource("http://a/x", "2025-06-03T10:00:00Z", LONG_A);
        let new = warc_resource("http://a/x", "2025-06-04T10:00:00Z", LONG_B);
        let (first, second) = if newer_first {
            (&new, &old)
        } else {
            (&old, &new)
        };
        let second_at = first.len();
        std::fs::write(
            dir.path().join("crawl/c.warc"),
            [&first[..], second].concat(),
        )
        .unwrap();
        write(&dir, "crawl/b.txt", LONG_B);
        let assert = megashingle(dir.path())
            .args(["cluster", "-q", "crawl"])
            .assert()
            .code(1);
        let output = assert.get_output();
        let line = only_line_starting(output, "warning: ");
        let (at, expected) = if newer_first {
            (
                format!("crawl/c.warc@{second_at}"),
                "first seen at".to_owned(),
            )
        } else {
            (
                "crawl/c.warc@0".to_owned(),
                format!("seen again at crawl/c.warc@{second_at} with a newer date, which is kept"),
            )
        };
        assert!(
            line.starts_with(&format!("warning: {at}: duplicate id \"http://a/x\""))
                && line.contains(&expected)
                && line.ends_with("; record skipped"),
            "{line}"
        );
        // The newer text is kept: it is the text of b.txt, so the two make one story.
        let rows = parse_table(&stdout_of(output));
        let stories: Vec<(&str, &str)> = rows
            .iter()
            .map(|r| (r.doc_id.as_str(), r.cluster_id.as_str()))
            .collect();
        assert_eq!(stories, [("b.txt", "b.txt"), ("http://a/x", "b.txt")]);
    }
}

#[test]
fn strict_makes_a_duplicate_id_fatal() {
    let dir = temp();
    write(
        &dir,
        "dup.csv",
        format!("id,text\na,{LONG_A}\na,{LONG_B}\n"),
    );
    let assert = megashingle(dir.path())
        .args(["cluster", "--strict", "dup.csv"])
        .assert()
        .code(2)
        .stdout("");
    let line = single_error_line(assert.get_output());
    assert!(
        line.contains("dup.csv:3") && line.contains("dup.csv:2"),
        "{line}"
    );
}

#[test]
fn nonexistent_input_cannot_be_opened() {
    let dir = temp();
    let assert = megashingle(dir.path())
        .args(["cluster", "nope.csv"])
        .assert()
        .code(2)
        .stdout("");
    let line = single_error_line(assert.get_output());
    assert!(
        line.starts_with("megashingle: error: nope.csv: cannot open"),
        "{line}"
    );
}

/// The cause of an open error should be stated once, not repeated by the error chain.
#[test]
fn cannot_open_message_states_the_cause_once() {
    let dir = temp();
    let assert = megashingle(dir.path())
        .args(["cluster", "nope.csv"])
        .assert()
        .code(2);
    let line = single_error_line(assert.get_output());
    assert_eq!(
        line.matches("No such file or directory").count(),
        1,
        "the OS error is repeated: {line}"
    );
}

/// Same for a configuration file that cannot be read.
#[test]
fn unreadable_config_message_states_the_cause_once() {
    let dir = temp();
    let assert = megashingle(dir.path())
        .args(["config", "-c", "nope.toml"])
        .assert()
        .code(2)
        .stdout("");
    let line = single_error_line(assert.get_output());
    assert!(line.contains("nope.toml"), "{line}");
    assert_eq!(
        line.matches("No such file or directory").count(),
        1,
        "the OS error is repeated: {line}"
    );
}

#[test]
fn empty_input_file_is_fatal() {
    let dir = temp();
    write(&dir, "empty.csv", "");
    let assert = megashingle(dir.path())
        .args(["cluster", "empty.csv", "-o", "out.csv"])
        .assert()
        .code(2)
        .stdout("");
    let line = single_error_line(assert.get_output());
    assert!(line.contains("empty.csv: empty input"), "{line}");
    assert!(!dir.path().join("out.csv").exists());
}

#[test]
fn csv_with_header_only_has_no_documents() {
    let dir = temp();
    write(&dir, "hdr.csv", "id,text\n");
    let assert = megashingle(dir.path())
        .args(["cluster", "hdr.csv", "-o", "out.csv"])
        .assert()
        .code(2)
        .stdout("");
    let line = single_error_line(assert.get_output());
    assert!(line.contains("no documents in hdr.csv"), "{line}");
    assert!(!dir.path().join("out.csv").exists());
}

#[test]
fn every_record_skipped_means_no_documents() {
    let dir = temp();
    write(&dir, "all-bad.csv", "id,text\n,no id here\nb,x,y\n");
    let assert = megashingle(dir.path())
        .args(["cluster", "all-bad.csv"])
        .assert()
        .code(2)
        .stdout("");
    let error = only_line_starting(assert.get_output(), "megashingle: error: ");
    assert!(
        error.contains("no documents in all-bad.csv") && error.contains("every record was skipped"),
        "{error}"
    );
}

#[test]
fn unknown_config_key_is_fatal_and_named() {
    let dir = temp();
    write(&dir, "c.toml", "[shingle]\nsise = 4\n");
    write(&dir, "d.csv", format!("id,text\na,{LONG_A}\n"));
    let assert = megashingle(dir.path())
        .args(["cluster", "-c", "c.toml", "d.csv"])
        .assert()
        .code(2)
        .stdout("");
    let line = single_error_line(assert.get_output());
    assert!(
        line.contains("c.toml") && line.contains("sise"),
        "the message should name the file and the key: {line}"
    );
}

#[test]
fn out_of_range_config_value_is_fatal_and_named() {
    let dir = temp();
    write(&dir, "c.toml", "[shingle]\nsize = 0\n");
    write(&dir, "d.csv", format!("id,text\na,{LONG_A}\n"));
    let assert = megashingle(dir.path())
        .args(["cluster", "-c", "c.toml", "d.csv"])
        .assert()
        .code(2)
        .stdout("");
    let line = single_error_line(assert.get_output());
    assert!(line.contains("shingle.size"), "{line}");
    // A flag is checked the same way.
    let assert = megashingle(dir.path())
        .args(["cluster", "-k", "0", "d.csv"])
        .assert()
        .code(2);
    let line = single_error_line(assert.get_output());
    assert!(line.contains("shingle.size"), "{line}");
}

// ---------------------------------------------------------------------------------------------
// Atomic output

#[test]
fn failed_run_leaves_an_existing_output_untouched() {
    let dir = temp();
    write(
        &dir,
        "bad.csv",
        format!("id,text\na,{LONG_A}\nb,too,many\n"),
    );
    let old: &[u8] = b"doc_id,cluster_id\r\nprevious,\"content\"\n\xE2\x80\x94 kept byte for byte";
    write(&dir, "out.csv", old);
    megashingle(dir.path())
        .args(["cluster", "--strict", "bad.csv", "-o", "out.csv"])
        .assert()
        .code(2);
    assert_eq!(std::fs::read(dir.path().join("out.csv")).unwrap(), old);
    let names: BTreeSet<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        BTreeSet::from(["bad.csv".to_owned(), "out.csv".to_owned()]),
        "temporary files were left behind"
    );
}

#[test]
fn successful_run_replaces_the_output_and_leaves_no_temporary_files() {
    let dir = temp();
    write(&dir, "d.csv", format!("id,text\na,{LONG_A}\nb,{LONG_B}\n"));
    write(&dir, "out.csv", "old content\n");
    megashingle(dir.path())
        .args(["cluster", "-q", "d.csv", "-o", "out.csv"])
        .assert()
        .code(0)
        .stdout("");
    let written = std::fs::read_to_string(dir.path().join("out.csv")).unwrap();
    let rows = parse_table(&written);
    assert_eq!(rows.len(), 2);
    let names: BTreeSet<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        BTreeSet::from(["d.csv".to_owned(), "out.csv".to_owned()])
    );
}

/// An output that cannot be written is one line naming the output, what is wrong and what to
/// do.
#[test]
fn output_into_a_missing_directory_fails_with_one_clear_line() {
    let dir = temp();
    write(&dir, "d.csv", format!("id,text\na,{LONG_A}\n"));
    let assert = megashingle(dir.path())
        .args(["cluster", "-q", "d.csv", "-o", "no-such-dir/out.csv"])
        .assert()
        .code(2)
        .stdout("");
    let line = single_error_line(assert.get_output());
    assert_eq!(
        line,
        "megashingle: error: no-such-dir/out.csv: the folder no-such-dir does not exist; make it first (mkdir -p no-such-dir) or give another path (nothing was read or written)"
    );
    assert!(!dir.path().join("no-such-dir").exists());
}

/// Replacing the output must not change its permissions, and a new output file should get the
/// same permissions as any other new file (umask), not the 0600 of a private temporary file.
#[cfg(unix)]
#[test]
fn output_file_gets_ordinary_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let dir = temp();
    write(&dir, "d.csv", format!("id,text\na,{LONG_A}\n"));
    let mode = |name: &str| {
        std::fs::metadata(dir.path().join(name))
            .unwrap()
            .permissions()
            .mode()
            & 0o777
    };
    // A file created the ordinary way shows what the umask allows.
    write(&dir, "reference.txt", "x");
    megashingle(dir.path())
        .args(["cluster", "-q", "d.csv", "-o", "new.csv"])
        .assert()
        .code(0);
    write(&dir, "old.csv", "old\n");
    std::fs::set_permissions(
        dir.path().join("old.csv"),
        std::fs::Permissions::from_mode(0o640),
    )
    .unwrap();
    megashingle(dir.path())
        .args(["cluster", "-q", "d.csv", "-o", "old.csv"])
        .assert()
        .code(0);
    assert_eq!(
        (mode("new.csv"), mode("old.csv")),
        (mode("reference.txt"), 0o640),
        "(new output, replaced output) modes in octal: ({:o}, {:o})",
        mode("new.csv"),
        mode("old.csv")
    );
}

// ---------------------------------------------------------------------------------------------
// compare

#[test]
fn compare_json_reports_exact_measures() {
    let dir = temp();
    let assert = megashingle(dir.path())
        .args([
            "compare", "--text", "a b c d", "a b c e", "-k", "2", "--json",
        ])
        .assert()
        .code(0);
    let out = stdout_of(assert.get_output());
    assert_eq!(out.lines().count(), 1, "one JSON object: {out}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
    assert_eq!(v["common"], 2);
    assert_eq!(v["first_shingles"], 3);
    assert_eq!(v["second_shingles"], 3);
    assert_eq!(v["shingle_size"], 2);
    let dice = v["dice"].as_f64().unwrap();
    let jaccard = v["jaccard"].as_f64().unwrap();
    assert!((dice - 0.6667).abs() < 1e-4, "dice {dice}");
    assert!((jaccard - 0.5).abs() < 1e-12, "jaccard {jaccard}");
    let estimated = v["estimated_jaccard"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&estimated), "{estimated}");
    assert_eq!(v["minima"], 84);
}

#[test]
fn compare_text_output_mentions_dice_and_jaccard() {
    let dir = temp();
    megashingle(dir.path())
        .args(["compare", "--text", "a b c d", "a b c e", "-k", "2"])
        .assert()
        .code(0)
        .stdout(
            predicate::str::contains("Dice:")
                .and(predicate::str::contains("0.6667"))
                .and(predicate::str::contains("Jaccard:"))
                .and(predicate::str::contains("0.5000")),
        );
}

#[test]
fn compare_rejects_a_text_shorter_than_k() {
    let dir = temp();
    let assert = megashingle(dir.path())
        .args(["compare", "--text", "a b", "a b c d e f", "-k", "5"])
        .assert()
        .code(2)
        .stdout("");
    let line = single_error_line(assert.get_output());
    assert!(
        line.contains("first text has 2 words") && line.contains("k = 5"),
        "{line}"
    );
    // The second text is checked too.
    let assert = megashingle(dir.path())
        .args(["compare", "--text", "a b c d e f", "x y z", "-k", "4"])
        .assert()
        .code(2);
    let line = single_error_line(assert.get_output());
    assert!(
        line.contains("second text has 3 words") && line.contains("k = 4"),
        "{line}"
    );
}

#[test]
fn compare_of_a_file_with_itself_is_identity() {
    let file = news().join("en/flood-original.txt");
    let file = file.to_str().unwrap();
    let assert = megashingle(&root())
        .args(["compare", file, file, "--json"])
        .assert()
        .code(0);
    let v: serde_json::Value = serde_json::from_str(&stdout_of(assert.get_output())).unwrap();
    assert_eq!(v["jaccard"], 1.0);
    assert_eq!(v["estimated_jaccard"], 1.0);
    assert_eq!(v["dice"], 1.0);
    assert_eq!(v["common"], v["first_shingles"]);
}

// ---------------------------------------------------------------------------------------------
// canon

#[test]
fn canon_drops_markup_and_decodes_numeric_entities() {
    let file = news().join("ru/lynx-gorvestnik.html");
    // The words below exist only as numeric character references in the file.
    let raw = std::fs::read_to_string(&file).unwrap();
    assert!(!raw.contains("шестилетняя") && raw.contains("&#1096;&#1077;&#1089;"));
    let assert = megashingle(&root())
        .args(["canon", "--lines", file.to_str().unwrap()])
        .assert()
        .code(0);
    let out = stdout_of(assert.get_output());
    let words: BTreeSet<&str> = out.lines().collect();
    for expected in ["шестилетняя", "реабилитационного", "рысят", "ветка"]
    {
        assert!(words.contains(expected), "missing {expected:?}");
    }
    // Tag names, attributes, script, style and comment content are gone.
    for unexpected in [
        "html",
        "head",
        "body",
        "div",
        "p",
        "script",
        "style",
        "meta",
        "header",
        "class",
        "href",
        "function",
        "window",
        "document",
        "createelement",
        "clickmap",
        "counter",
        "js",
        "cnt",
        "px",
        "font",
        "wrap",
        "шапка",
    ] {
        assert!(
            !words.contains(unexpected),
            "markup word {unexpected:?} kept"
        );
    }
    assert!(!out.contains('<') && !out.contains('&') && !out.contains('{'));
}

#[test]
fn canon_reads_stdin() {
    let dir = temp();
    megashingle(dir.path())
        .args(["canon", "-"])
        .write_stdin("<p>Hello&nbsp;<b>World</b></p> &#1052;&#x438;&#1088; Ёж\n")
        .assert()
        .code(0)
        .stdout("hello world мир еж\n");
    megashingle(dir.path())
        .args(["canon", "--lines", "-"])
        .write_stdin("One, two; THREE")
        .assert()
        .code(0)
        .stdout("one\ntwo\nthree\n");
}

#[test]
fn canon_strips_mail_headers() {
    let file = news().join("en/flood-newsletter.eml");
    let assert = megashingle(&root())
        .args(["canon", "--lines", file.to_str().unwrap()])
        .assert()
        .code(0);
    let out = stdout_of(assert.get_output());
    let words: Vec<&str> = out.lines().collect();
    assert!(words.contains(&"evacuated"), "{words:?}");
    for header_word in ["subject", "mime", "utf", "8bit", "example"] {
        assert!(!words.contains(&header_word), "{header_word:?} kept");
    }
}

// ---------------------------------------------------------------------------------------------
// config

fn printed_config(dir: &Path, args: &[&str]) -> toml::Table {
    let assert = megashingle(dir).arg("config").args(args).assert().code(0);
    let out = stdout_of(assert.get_output());
    out.parse::<toml::Table>()
        .unwrap_or_else(|e| panic!("printed config is not TOML: {e}\n{out}"))
}

#[test]
fn config_prints_the_defaults_as_toml() {
    let dir = temp();
    let table = printed_config(dir.path(), &[]);
    assert_eq!(table["shingle"]["size"].as_integer(), Some(3));
    assert_eq!(table["signature"]["minima"].as_integer(), Some(84));
    // The shipped pipeline.toml says the same as the built-in defaults.
    assert_eq!(printed_config(&root(), &[]), table);
}

#[test]
fn config_flags_override_the_defaults() {
    let dir = temp();
    let table = printed_config(dir.path(), &["-k", "7"]);
    assert_eq!(table["shingle"]["size"].as_integer(), Some(7));
    // A file, then a flag over it.
    write(&dir, "c.toml", "[shingle]\nsize = 3\n");
    let table = printed_config(dir.path(), &["-c", "c.toml"]);
    assert_eq!(table["shingle"]["size"].as_integer(), Some(3));
    let table = printed_config(dir.path(), &["-c", "c.toml", "-k", "9"]);
    assert_eq!(table["shingle"]["size"].as_integer(), Some(9));
}

// ---------------------------------------------------------------------------------------------
// cluster: short documents, output shape

#[test]
fn short_document_is_too_short_and_counted() {
    let dir = temp();
    write(
        &dir,
        "d.csv",
        format!("id,text\nlong,{LONG_A}\nshort,two words\n"),
    );
    let assert = megashingle(dir.path())
        .args(["cluster", "d.csv"])
        .assert()
        .code(0);
    let output = assert.get_output();
    let rows = parse_table(&stdout_of(output));
    let short = rows.iter().find(|r| r.doc_id == "short").unwrap();
    assert_eq!(
        (
            short.cluster_id.as_str(),
            short.cluster_size,
            short.similarity.as_str(),
            short.status.as_str()
        ),
        ("short", 1, "", "too_short")
    );
    let long = rows.iter().find(|r| r.doc_id == "long").unwrap();
    assert_eq!(long.status, "ok");
    let summary = only_line_starting(output, "megashingle: ");
    assert!(summary.contains("1 too short"), "{summary}");
    assert!(summary.contains("2 documents"), "{summary}");
}

#[test]
fn identical_short_documents_are_never_duplicates() {
    let dir = temp();
    write(&dir, "d.csv", "id,text\na,two words\nb,two words\n");
    let assert = megashingle(dir.path())
        .args(["cluster", "-q", "d.csv"])
        .assert()
        .code(0);
    let rows = parse_table(&stdout_of(assert.get_output()));
    assert_eq!(rows.len(), 2);
    assert!(rows
        .iter()
        .all(|r| r.cluster_size == 1 && r.status == "too_short" && r.similarity.is_empty()));
}

/// A small collection with two near-duplicate pairs and a singleton.
fn near_duplicate_csv() -> Vec<u8> {
    let flood = std::fs::read_to_string(news().join("en/flood-original.txt")).unwrap();
    let atlas = std::fs::read_to_string(news().join("en/atlas-original.txt")).unwrap();
    let flood_plus = format!("{flood}\nUpdated at noon.");
    csv_of([
        ("p-flood", flood.as_str()),
        ("q-flood-updated", flood_plus.as_str()),
        ("m-atlas", atlas.as_str()),
        ("z-atlas-copy", atlas.as_str()),
        ("k-other", LONG_B),
    ])
}

#[test]
fn csv_output_has_the_header_and_one_row_per_document() {
    let dir = temp();
    write(&dir, "d.csv", near_duplicate_csv());
    let assert = megashingle(dir.path())
        .args(["cluster", "-q", "d.csv"])
        .assert()
        .code(0);
    let out = stdout_of(assert.get_output());
    assert_eq!(out.lines().next(), Some(HEADER));
    assert!(out.ends_with('\n'));
    let rows = parse_table(&out);
    assert_eq!(rows.len(), 5);
    let ids: BTreeSet<&str> = rows.iter().map(|r| r.doc_id.as_str()).collect();
    assert_eq!(ids.len(), 5);
    // Rows are grouped by cluster, larger clusters first; cluster_id is the smallest id; the
    // representative (the fullest version) comes first with similarity 1.0000.
    let shape: Vec<(&str, &str, usize)> = rows
        .iter()
        .map(|r| (r.doc_id.as_str(), r.cluster_id.as_str(), r.cluster_size))
        .collect();
    assert_eq!(
        shape,
        [
            ("m-atlas", "m-atlas", 2),
            ("z-atlas-copy", "m-atlas", 2),
            ("q-flood-updated", "p-flood", 2),
            ("p-flood", "p-flood", 2),
            ("k-other", "k-other", 1),
        ]
    );
    assert_eq!(rows[0].similarity, "1.0000");
    assert_eq!(rows[1].similarity, "1.0000");
    assert_eq!(rows[2].similarity, "1.0000");
    let near: f64 = rows[3].similarity.parse().unwrap();
    assert!((0.9..=1.0).contains(&near), "{near}");
    assert!(rows.iter().all(|r| r.status == "ok"));
}

#[test]
fn jsonl_output_has_one_object_per_document() {
    let dir = temp();
    let mut csv = near_duplicate_csv();
    csv.extend_from_slice(b"short,too short\n");
    write(&dir, "d.csv", csv);
    let assert = megashingle(dir.path())
        .args(["cluster", "-q", "--format", "jsonl", "d.csv"])
        .assert()
        .code(0);
    let out = stdout_of(assert.get_output());
    let objects: Vec<serde_json::Map<String, serde_json::Value>> = out
        .lines()
        .map(|l| match serde_json::from_str(l) {
            Ok(serde_json::Value::Object(o)) => o,
            other => panic!("not a JSON object: {l} ({other:?})"),
        })
        .collect();
    assert_eq!(objects.len(), 6);
    for o in &objects {
        let keys: BTreeSet<&str> = o.keys().map(String::as_str).collect();
        assert_eq!(keys, BTreeSet::from(COLUMNS));
        assert!(o["doc_id"].is_string() && o["cluster_id"].is_string());
        assert!(o["cluster_size"].is_u64());
        assert!(o["similarity"].is_number() || o["similarity"].is_null());
    }
    let short = objects.iter().find(|o| o["doc_id"] == "short").unwrap();
    assert!(short["similarity"].is_null());
    assert_eq!(short["status"], "too_short");
    // The same rows as the CSV output.
    let csv_out = megashingle(dir.path())
        .args(["cluster", "-q", "d.csv"])
        .output()
        .unwrap();
    let rows = parse_table(&stdout_of(&csv_out));
    let from_json: Vec<(String, String, u64)> = objects
        .iter()
        .map(|o| {
            (
                o["doc_id"].as_str().unwrap().to_owned(),
                o["cluster_id"].as_str().unwrap().to_owned(),
                o["cluster_size"].as_u64().unwrap(),
            )
        })
        .collect();
    let from_csv: Vec<(String, String, u64)> = rows
        .into_iter()
        .map(|r| (r.doc_id, r.cluster_id, r.cluster_size as u64))
        .collect();
    assert_eq!(from_json, from_csv);
}

#[test]
fn cluster_reads_csv_from_stdin() {
    let dir = temp();
    megashingle(dir.path())
        .args(["cluster", "-q", "-"])
        .write_stdin(format!("id,text\na,{LONG_A}\n"))
        .assert()
        .code(0)
        .stdout(format!("{HEADER}\na,a,1,1.0000,ok\n"));
}

// ---------------------------------------------------------------------------------------------
// Determinism

#[test]
fn thread_count_does_not_change_the_output() {
    let run = |threads: &str| {
        megashingle(&root())
            .args(["cluster", "fixtures/news", "-q", "-j", threads])
            .output()
            .unwrap()
    };
    let one = run("1");
    assert_eq!(one.status.code(), Some(0));
    for threads in ["2", "4", "0"] {
        let other = run(threads);
        assert_eq!(other.status.code(), Some(0));
        assert!(
            one.stdout == other.stdout,
            "-j 1 and -j {threads} differ:\n{}\n---\n{}",
            stdout_of(&one),
            stdout_of(&other)
        );
    }
}

#[test]
fn input_order_does_not_change_the_output() {
    let dir = temp();
    let docs = fixture_documents();
    let folder = megashingle(&root())
        .args(["cluster", "fixtures/news", "-q"])
        .output()
        .unwrap();
    assert_eq!(folder.status.code(), Some(0));
    let orders: Vec<(&str, Vec<(String, String)>)> = vec![
        ("forward.csv", docs.clone()),
        ("reversed.csv", docs.iter().rev().cloned().collect()),
        ("shuffled.csv", shuffled(docs.clone(), 0x5eed)),
        ("shuffled2.csv", shuffled(docs.clone(), 0xdecaf)),
    ];
    for (name, order) in &orders {
        write(
            &dir,
            name,
            csv_of(order.iter().map(|(i, t)| (i.as_str(), t.as_str()))),
        );
        let out = megashingle(dir.path())
            .args(["cluster", "-q", name])
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{name}: {:?}",
            stderr_lines(&out)
        );
        assert!(
            out.stdout == folder.stdout,
            "{name} differs from the folder output:\n{}\n---\n{}",
            stdout_of(&out),
            stdout_of(&folder)
        );
    }
}

#[test]
fn input_order_and_threads_do_not_change_clusters_of_near_duplicates() {
    let dir = temp();
    let mut docs = fixture_documents();
    // Near-duplicates so that the clusters are not all singletons.
    let text_of = |id: &str| docs.iter().find(|(i, _)| i == id).unwrap().1.clone();
    let extras = vec![
        ("x/flood-copy".to_owned(), text_of("en/flood-original.txt")),
        (
            "x/flood-plus".to_owned(),
            text_of("en/flood-original.txt") + "\nMore updates will follow.",
        ),
        ("x/metro-copy".to_owned(), text_of("ru/metro-original.txt")),
        ("x/tram-copy".to_owned(), text_of("uk/tram-original.txt")),
    ];
    docs.extend(extras);
    let mut outputs = Vec::new();
    for (name, order, threads) in [
        ("a.csv", docs.clone(), "1"),
        ("b.csv", docs.iter().rev().cloned().collect(), "2"),
        ("c.csv", shuffled(docs.clone(), 42), "3"),
        ("d.csv", shuffled(docs.clone(), 7), "1"),
    ] {
        write(
            &dir,
            name,
            csv_of(order.iter().map(|(i, t)| (i.as_str(), t.as_str()))),
        );
        let out = megashingle(dir.path())
            .args(["cluster", "-q", "-j", threads, name])
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{name}: {:?}",
            stderr_lines(&out)
        );
        outputs.push((name, out.stdout));
    }
    for (name, out) in &outputs[1..] {
        assert!(
            *out == outputs[0].1,
            "{name} differs from a.csv:\n{}\n---\n{}",
            String::from_utf8_lossy(out),
            String::from_utf8_lossy(&outputs[0].1)
        );
    }
    let rows = parse_table(&String::from_utf8(outputs[0].1.clone()).unwrap());
    assert_eq!(rows.len(), docs.len());
    let cluster_of: BTreeMap<&str, &str> = rows
        .iter()
        .map(|r| (r.doc_id.as_str(), r.cluster_id.as_str()))
        .collect();
    assert_eq!(
        cluster_of["x/flood-copy"],
        cluster_of["en/flood-original.txt"]
    );
    assert_eq!(
        cluster_of["x/flood-plus"],
        cluster_of["en/flood-original.txt"]
    );
    assert_eq!(
        cluster_of["x/metro-copy"],
        cluster_of["ru/metro-original.txt"]
    );
    assert_eq!(
        cluster_of["x/tram-copy"],
        cluster_of["uk/tram-original.txt"]
    );
    assert!(
        rows[0].cluster_size >= 3,
        "the largest cluster holds the flood copies"
    );
}

#[test]
fn shingle_sets_kept_on_file_give_the_same_clusters() {
    // The dev benchmark: HTML pages, mail and plain text, with boilerplate and stories of up
    // to 30 documents, so every pass over the sets (counting, taking boilerplate out, a set
    // kept whole, exact verification) has work to do.
    let docs = dev_benchmark_docs("shingle_sets_kept_on_file_give_the_same_clusters");
    for verify in ["exact", "estimate"] {
        let Some(docs) = docs.as_deref() else {
            break;
        };
        let run = |extra: &[&str]| {
            let out = megashingle(&root())
                .args(["cluster", "-q"])
                .arg(docs)
                .arg("--set")
                .arg(format!("cluster.verify={verify}"))
                .args(extra)
                .output()
                .unwrap();
            assert_eq!(out.status.code(), Some(0), "{:?}", stderr_lines(&out));
            out.stdout
        };
        let in_memory = run(&[]);
        assert!(parse_table(&String::from_utf8_lossy(&in_memory))
            .iter()
            .any(|r| r.cluster_size > 10));
        for extra in [
            &["--set", "cluster.set-memory-mb=0"][..],
            &["--set", "cluster.set-memory-mb=1", "-j", "1"],
        ] {
            assert!(
                run(extra) == in_memory,
                "{verify}, {extra:?}: sets on file changed the clusters"
            );
        }
    }
    // The summary says when the sets went to a file, and only then.
    for (memory, on_file) in [("0", true), ("256", false)] {
        let out = megashingle(&root())
            .args(["cluster", "fixtures/news", "--set"])
            .arg(format!("cluster.set-memory-mb={memory}"))
            .output()
            .unwrap();
        let summary = only_line_starting(&out, "megashingle: ");
        assert_eq!(
            summary.contains("; shingle sets held in a temporary file of "),
            on_file,
            "{summary}"
        );
    }
}

#[test]
fn a_temporary_folder_that_cannot_be_written_is_reported_and_nothing_is_written() {
    let dir = temp();
    let out_path = dir.path().join("clusters.csv");
    let missing = dir.path().join("no-such-folder");
    let output = megashingle(&root())
        .env("TMPDIR", &missing)
        .args([
            "cluster",
            "fixtures/news",
            "--set",
            "cluster.set-memory-mb=0",
            "-o",
        ])
        .arg(&out_path)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let line = single_error_line(&output);
    assert!(
        line.contains(&format!(
            "{}: cannot write or read back the temporary file of shingle sets",
            missing.display()
        )) && line.contains("set TMPDIR to a folder with room"),
        "{line}"
    );
    assert!(!out_path.exists());
}

// ---------------------------------------------------------------------------------------------
// Golden output over the fixtures

#[test]
fn golden_fixture_clusters() {
    let golden = root().join("tests/golden/fixtures-clusters.csv");
    let assert = megashingle(&root())
        .args(["cluster", "fixtures/news", "--quiet"])
        .assert()
        .code(0)
        .stderr("");
    let actual = &assert.get_output().stdout;
    if std::env::var_os("UPDATE_GOLDEN").is_some_and(|v| v == "1") {
        std::fs::create_dir_all(golden.parent().unwrap()).unwrap();
        std::fs::write(&golden, actual).unwrap();
        eprintln!("rewrote {}", golden.display());
        return;
    }
    let expected = std::fs::read(&golden).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; create it with UPDATE_GOLDEN=1 cargo test --test cli golden",
            golden.display()
        )
    });
    if *actual != expected {
        let (a, e) = (
            String::from_utf8_lossy(actual),
            String::from_utf8_lossy(&expected),
        );
        let first = a
            .lines()
            .zip(e.lines())
            .position(|(x, y)| x != y)
            .unwrap_or(a.lines().count().min(e.lines().count()));
        panic!(
            "output differs from {} at line {}:\n  actual:   {:?}\n  expected: {:?}\n\
             If the change is intended, refresh it with UPDATE_GOLDEN=1 cargo test --test cli golden",
            golden.display(),
            first + 1,
            a.lines().nth(first),
            e.lines().nth(first),
        );
    }
}

#[test]
fn every_fixture_file_appears_exactly_once() {
    let assert = megashingle(&root())
        .args(["cluster", "fixtures/news", "-q", "-k", "5"])
        .assert()
        .code(0);
    let rows = parse_table(&stdout_of(assert.get_output()));
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for row in &rows {
        *counts.entry(row.doc_id.clone()).or_default() += 1;
    }
    let files: BTreeSet<String> = fixture_documents().into_iter().map(|(id, _)| id).collect();
    assert_eq!(files.len(), 44, "fixtures/README.md promises 44 files");
    assert_eq!(counts.keys().cloned().collect::<BTreeSet<_>>(), files);
    assert!(counts.values().all(|&n| n == 1), "{counts:?}");
    // truth.csv lists the same files.
    let truth = std::fs::read_to_string(root().join("fixtures/truth.csv")).unwrap();
    let mut reader = csv::Reader::from_reader(truth.as_bytes());
    let truth_ids: BTreeSet<String> = reader.records().map(|r| r.unwrap()[0].to_owned()).collect();
    assert_eq!(truth_ids, files);
    // Every cluster's rows agree on its size and id, and the four-word caption is too short for
    // five-word shingles.
    let mut sizes: BTreeMap<&str, usize> = BTreeMap::new();
    for row in &rows {
        *sizes.entry(row.cluster_id.as_str()).or_default() += 1;
    }
    for row in &rows {
        assert_eq!(row.cluster_size, sizes[row.cluster_id.as_str()], "{row:?}");
        assert!(row.cluster_id <= row.doc_id, "{row:?}");
    }
    let caption = rows
        .iter()
        .find(|r| r.doc_id == "ru/photo-caption.txt")
        .unwrap();
    assert_eq!(
        (caption.status.as_str(), caption.similarity.as_str()),
        ("too_short", "")
    );
}

// ---------------------------------------------------------------------------------------------
// Broken pipe: a closed stdout (`megashingle cluster ... | head -1`) is not an error

fn run_with_closed_stdout(args: &[&str]) -> Output {
    let mut child = std::process::Command::new(BIN)
        .current_dir(root())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn megashingle");
    // Close the only read end before the child writes anything: every write gets EPIPE.
    drop(child.stdout.take());
    child.wait_with_output().expect("wait for megashingle")
}

#[test]
fn closed_stdout_is_not_an_error() {
    for args in [
        &["cluster", "fixtures/news", "-q"][..],
        &["cluster", "fixtures/news", "--format", "jsonl"][..],
        &["canon", "fixtures/news/ru/lynx-gorvestnik.html"][..],
        &["config"][..],
    ] {
        let out = run_with_closed_stdout(args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: stderr {:?}",
            stderr_lines(&out)
        );
        assert!(
            !String::from_utf8_lossy(&out.stderr).contains("error"),
            "{args:?}: {:?}",
            stderr_lines(&out)
        );
    }
}

// ---------------------------------------------------------------------------------------------
// tune: the chosen grouping, its S-curve table and plot

/// The rows of the `tune` table as (Jaccard, P(candidate) of the chosen grouping, line).
fn tune_rows(out: &str) -> Vec<(String, f64, String)> {
    out.lines()
        .filter(|l| l.starts_with("  "))
        .filter_map(|l| {
            let mut fields = l.split_whitespace();
            let j = fields.next()?;
            j.parse::<f64>().ok()?;
            let p = fields.next()?.parse::<f64>().ok()?;
            Some((j.to_owned(), p, l.to_owned()))
        })
        .collect()
}

/// N in the "chosen: G supershingles of N minima" line.
fn chosen_minima_per_group(out: &str) -> usize {
    let line = out
        .lines()
        .find(|l| l.starts_with("chosen:"))
        .unwrap_or_else(|| panic!("no `chosen:` line in\n{out}"));
    let rest = line
        .split_once("supershingles of ")
        .unwrap_or_else(|| panic!("the chosen grouping is not named: {line}"))
        .1;
    rest.split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no number of minima in {line}"))
}

#[test]
fn tune_shows_the_chosen_grouping_and_its_s_curve() {
    let dir = temp();
    let assert = megashingle(dir.path())
        .args(["tune", "--threshold", "0.3"])
        .assert()
        .code(0);
    let out = stdout_of(assert.get_output());
    let chosen = out
        .lines()
        .find(|l| l.starts_with("chosen:"))
        .unwrap_or_else(|| panic!("no chosen grouping:\n{out}"));
    assert!(chosen.contains("supershingles of "), "{chosen}");
    assert!(chosen_minima_per_group(&out) >= 1);
    assert!(out.contains("false-positive area"), "{out}");
    assert!(out.contains("false-negative area"), "{out}");
    // One row for each Jaccard 0.05, 0.10, ..., 1.00, in order.
    let rows = tune_rows(&out);
    let js: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
    let expected: Vec<String> = (1..=20)
        .map(|i| format!("{:.2}", f64::from(i) * 0.05))
        .collect();
    assert_eq!(js, expected, "{out}");
    // The target row, and only it, is marked.
    let marked: Vec<&str> = rows
        .iter()
        .filter(|r| r.2.contains("<- target"))
        .map(|r| r.0.as_str())
        .collect();
    assert_eq!(marked, ["0.30"], "{out}");
    // An S-curve: the probability never falls as the similarity grows, and it is a probability.
    for pair in rows.windows(2) {
        assert!(
            pair[0].1 <= pair[1].1,
            "P(candidate) falls from {} at {} to {} at {}",
            pair[0].1,
            pair[0].0,
            pair[1].1,
            pair[1].0
        );
    }
    assert!(rows.iter().all(|r| (0.0..=1.0).contains(&r.1)), "{out}");
    assert!(
        rows.last().unwrap().1 > 0.99,
        "identical texts are candidates"
    );
}

#[test]
fn tune_for_a_higher_target_takes_more_minima_per_supershingle() {
    let dir = temp();
    let run = |threshold: &str| {
        let assert = megashingle(dir.path())
            .args(["tune", "--threshold", threshold])
            .assert()
            .code(0);
        chosen_minima_per_group(&stdout_of(assert.get_output()))
    };
    let (low, high) = (run("0.3"), run("0.9"));
    assert!(
        high > low,
        "0.9 takes {high} minima per supershingle, 0.3 takes {low}"
    );
}

#[test]
fn tune_rejects_a_threshold_out_of_range() {
    let dir = temp();
    for threshold in ["1.5", "0"] {
        let assert = megashingle(dir.path())
            .args(["tune", "--threshold", threshold])
            .assert()
            .code(2)
            .stdout("");
        let line = single_error_line(assert.get_output());
        assert!(line.contains("--threshold"), "{threshold}: {line}");
    }
}

/// Checks that `svg` is one well-formed element: tags nest and close, quotes balance.
fn assert_well_formed_xml(svg: &str) {
    let mut open: Vec<&str> = Vec::new();
    let mut rest = svg;
    while let Some(at) = rest.find('<') {
        assert!(
            !rest[..at].contains('>'),
            "stray `>` in text: {:?}",
            &rest[..at]
        );
        let end = rest[at..]
            .find('>')
            .unwrap_or_else(|| panic!("unclosed tag at {:?}", &rest[at..]))
            + at;
        let tag = &rest[at + 1..end];
        assert!(!tag.contains('<'), "`<` inside a tag: {tag:?}");
        assert_eq!(
            tag.matches('"').count() % 2,
            0,
            "unbalanced quotes: {tag:?}"
        );
        if let Some(name) = tag.strip_prefix('/') {
            let top = open.pop().unwrap_or_else(|| panic!("stray </{name}>"));
            assert_eq!(top, name.trim(), "</{name}> closes <{top}>");
        } else if !tag.ends_with('/') {
            let name = tag.split_whitespace().next().expect("a tag name");
            open.push(name);
        }
        if open.is_empty() {
            assert!(
                rest[end + 1..].trim().is_empty(),
                "content after the root element: {:?}",
                &rest[end + 1..]
            );
        }
        rest = &rest[end + 1..];
    }
    assert!(open.is_empty(), "unclosed elements: {open:?}");
}

#[test]
fn tune_plot_writes_an_svg_file() {
    let dir = temp();
    megashingle(dir.path())
        .args(["tune", "--threshold", "0.3", "--plot", "out.svg"])
        .assert()
        .code(0);
    let svg = std::fs::read_to_string(dir.path().join("out.svg")).expect("the plot is written");
    assert!(svg.starts_with("<svg"), "{}", &svg[..svg.len().min(80)]);
    assert!(svg.trim_end().ends_with("</svg>"), "{svg}");
    assert!(svg.contains("<polyline"), "no curve: {svg}");
    assert_well_formed_xml(&svg);
    let names: BTreeSet<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, BTreeSet::from(["out.svg".to_owned()]));
}

#[test]
fn tune_plot_into_a_missing_directory_fails_and_leaves_nothing() {
    let dir = temp();
    let assert = megashingle(dir.path())
        .args(["tune", "--plot", "no-such-dir/out.svg"])
        .assert()
        .code(2);
    let error = only_line_starting(assert.get_output(), "megashingle: error: ");
    assert!(error.contains("no-such-dir/out.svg"), "{error}");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "something was left behind"
    );
}

// ---------------------------------------------------------------------------------------------
// --set KEY=VALUE

#[test]
fn set_overrides_one_key() {
    let dir = temp();
    let table = printed_config(dir.path(), &["--set", "cluster.min-similarity=0.45"]);
    assert_eq!(table["cluster"]["min-similarity"].as_float(), Some(0.45));
    // The rest is untouched.
    assert_eq!(table["shingle"]["size"].as_integer(), Some(3));
    let assert = megashingle(dir.path())
        .args(["config", "--set", "cluster.min-similarity=0.45"])
        .assert()
        .code(0);
    let out = stdout_of(assert.get_output());
    let cluster = out.split_once("[cluster]").expect("a [cluster] section").1;
    let cluster = cluster.split("\n[").next().unwrap();
    assert!(
        cluster.lines().any(|l| l == "min-similarity = 0.45"),
        "{out}"
    );
    let table = printed_config(dir.path(), &["--set", "canonicalize.stem=[\"ru\"]"]);
    let stem: Vec<&str> = table["canonicalize"]["stem"]
        .as_array()
        .expect("stem is a list")
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(stem, ["ru"]);
}

#[test]
fn bad_set_is_one_line_naming_what_is_wrong() {
    let dir = temp();
    let error = |setting: &str| {
        let assert = megashingle(dir.path())
            .args(["config", "--set", setting])
            .assert()
            .code(2)
            .stdout("");
        single_error_line(assert.get_output())
    };
    let line = error("nosuch.key=1");
    assert!(
        line.starts_with("megashingle: error: --set nosuch.key=1: no section `nosuch`"),
        "{line}"
    );
    let line = error("cluster.nosuch=1");
    assert!(line.contains("nosuch"), "{line}");
    let line = error("cluster.min-similarity=7");
    assert!(
        line.contains("cluster.min-similarity") && line.contains("0.0 to 1.0"),
        "{line}"
    );
    let line = error("cluster.min-similarity");
    assert!(line.contains("expected KEY=VALUE"), "{line}");
}

#[test]
fn cluster_honours_set() {
    let dir = temp();
    write(&dir, "d.csv", csv_of([("a", LONG_A), ("b", LONG_B)]));
    let statuses = |extra: &[&str]| {
        let assert = megashingle(dir.path())
            .args(["cluster", "-q", "d.csv"])
            .args(extra)
            .assert()
            .code(0);
        parse_table(&stdout_of(assert.get_output()))
            .into_iter()
            .map(|r| r.status)
            .collect::<Vec<_>>()
    };
    assert_eq!(statuses(&[]), ["ok", "ok"]);
    assert_eq!(
        statuses(&["--set", "shingle.size=50"]),
        ["too_short", "too_short"]
    );
}

// ---------------------------------------------------------------------------------------------
// canon: main-text extraction and what it drops

/// The `dropped (N lines):` section of `canon --dropped`: N and the listed lines.
fn dropped_section(out: &str) -> (usize, Vec<String>) {
    let (_, section) = out
        .split_once("dropped (")
        .unwrap_or_else(|| panic!("no dropped section:\n{out}"));
    let (count, list) = section
        .split_once(" lines):\n")
        .unwrap_or_else(|| panic!("malformed dropped section:\n{out}"));
    let count: usize = count.parse().expect("a line count");
    let lines: Vec<String> = list
        .lines()
        .map(|l| {
            l.strip_prefix("  - ")
                .unwrap_or_else(|| panic!("not a dropped line: {l:?}"))
                .to_owned()
        })
        .collect();
    (count, lines)
}

#[test]
fn canon_dropped_lists_the_page_furniture() {
    let assert = megashingle(&root())
        .args([
            "canon",
            "--dropped",
            "fixtures/news/en/flood-dailyherald.html",
        ])
        .assert()
        .code(0);
    let out = stdout_of(assert.get_output());
    let kept = out.lines().next().unwrap();
    assert!(kept.contains("evacuated"), "{kept}");
    assert!(
        !kept.contains("cookies"),
        "the cookie banner was kept: {kept}"
    );
    let (count, lines) = dropped_section(&out);
    assert_eq!(count, lines.len(), "{out}");
    assert!(count > 0, "{out}");
    assert!(
        lines.iter().any(|l| l.contains("cookies")),
        "the cookie banner is not listed: {lines:#?}"
    );
    assert!(
        lines.iter().any(|l| l.starts_with("© 2024")),
        "the copyright line is not listed: {lines:#?}"
    );
}

#[test]
fn canon_dropped_is_empty_for_a_plain_text() {
    let assert = megashingle(&root())
        .args(["canon", "--dropped", "fixtures/news/en/flood-original.txt"])
        .assert()
        .code(0);
    let out = stdout_of(assert.get_output());
    assert!(out.contains("\ndropped (0 lines):\n"), "{out}");
    assert_eq!(dropped_section(&out), (0, Vec::new()));
}

const HARBOUR_PAGE: &str = r#"<!DOCTYPE html>
<html><head><title>Harbour wall repaired | Coast Gazette</title></head>
<body>
<nav><ul><li><a href="/">Home</a></li><li><a href="/local">Local</a></li><li><a href="/sport">Sport</a></li></ul></nav>
<div class="cookie-banner">We use cookies to improve your visit. <button>Accept all</button></div>
<article>
<p>Engineers finished repairing the harbour wall on Monday after winter storms cracked it.</p>
<p>Fishing boats can moor at the east quay again from Friday, the harbour master said.</p>
</article>
<aside><h2>Related</h2><ul><li><a href="/a">Lighthouse opens to visitors</a></li><li><a href="/b">Ferry fares frozen</a></li></ul></aside>
<footer>Copyright 2024 Coast Gazette. Privacy policy.</footer>
</body></html>
"#;

#[test]
fn canon_keeps_only_the_article_of_a_page() {
    let dir = temp();
    write(&dir, "page.html", HARBOUR_PAGE);
    megashingle(dir.path())
        .args(["canon", "page.html"])
        .assert()
        .code(0)
        .stdout(
            "engineers finished repairing the harbour wall on monday after winter storms cracked \
             it fishing boats can moor at the east quay again from friday the harbour master said\n",
        );
}

#[test]
fn canon_without_main_text_keeps_the_menu() {
    let dir = temp();
    write(&dir, "page.html", HARBOUR_PAGE);
    let assert = megashingle(dir.path())
        .args([
            "canon",
            "page.html",
            "--set",
            "canonicalize.main-text=false",
        ])
        .assert()
        .code(0);
    let out = stdout_of(assert.get_output());
    assert!(out.starts_with("home local sport "), "{out}");
    for word in ["cookies", "lighthouse", "copyright", "engineers"] {
        assert!(
            out.split_whitespace().any(|w| w == word),
            "{word:?} missing: {out}"
        );
    }
}

#[test]
fn canon_keeps_the_quoted_story_of_a_mail_and_drops_its_furniture() {
    let dir = temp();
    let mail = "From: Parish Clerk <clerk@stmarys.example>\n\
                To: residents@lists.stmarys.example\n\
                Subject: Re: Packhorse crossing\n\
                Date: Wed, 13 Mar 2024 09:12:44 +0000\n\
                Message-ID: <20240313091244.ab12@stmarys.example>\n\
                \n\
                Dear residents, please see the update below.\n\
                \n\
                On Tue, 12 Mar 2024 at 18:40, Highways Office <highways@county.example> wrote:\n\
                > The old packhorse bridge will stay closed until surveyors confirm\n\
                > the arch is sound after the flood damage.\n\
                > A temporary footbridge opens beside it on Saturday morning.\n\
                \n\
                ---------- Forwarded message ---------\n\
                From: Survey Desk <survey@county.example>\n\
                Date: Mon, 11 Mar 2024\n\
                Subject: Inspection booked\n\
                To: highways@county.example\n\
                \n\
                Divers will inspect the piers at low tide on Thursday.\n\
                \n\
                -- \n\
                Margaret Quill\n\
                Parish Clerk, St Marys\n\
                Tel 01632 960123\n";
    write(&dir, "reply.eml", mail);
    let assert = megashingle(dir.path())
        .args(["canon", "reply.eml"])
        .assert()
        .code(0);
    let out = stdout_of(assert.get_output());
    assert_eq!(
        out,
        "dear residents please see the update below \
         the old packhorse bridge will stay closed until surveyors confirm the arch is sound \
         after the flood damage a temporary footbridge opens beside it on saturday morning \
         divers will inspect the piers at low tide on thursday\n"
    );
    let words: BTreeSet<&str> = out.split_whitespace().collect();
    for dropped in [
        // headers
        "clerk",
        "stmarys",
        "re",
        "crossing",
        "20240313091244",
        "0000",
        // the attribution line
        "highways",
        "wrote",
        "18",
        // the forwarded message's headers
        "forwarded",
        "desk",
        "inspection",
        "booked",
        // the signature
        "margaret",
        "quill",
        "tel",
        "01632",
    ] {
        assert!(!words.contains(dropped), "{dropped:?} kept: {out}");
    }
}

// ---------------------------------------------------------------------------------------------
// cluster: bridges do not chain stories, heavy rewrites attach to established stories

/// A made-up word for each number, letters only: different numbers give different words (the
/// number's base-16 digits as syllables, least significant first).
fn made_up_word(n: usize) -> String {
    const SYLLABLES: [&str; 16] = [
        "ka", "lo", "mi", "nu", "pe", "ra", "si", "to", "vu", "ze", "bo", "da", "fi", "gu", "he",
        "jo",
    ];
    let (mut n, mut word) = (n, String::new());
    loop {
        word.push_str(SYLLABLES[n % 16]);
        n /= 16;
        if n == 0 {
            return word;
        }
    }
}

/// The words numbered `numbers` as prose: sentences of ten words each.
fn prose(numbers: &[usize]) -> String {
    numbers
        .chunks(10)
        .map(|sentence| {
            let words: Vec<String> = sentence.iter().map(|&n| made_up_word(n)).collect();
            let mut sentence = words.join(" ");
            sentence[..1].make_ascii_uppercase();
            sentence + "."
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// `words` with the words at `positions` replaced by new words numbered from `fresh`.
fn with_words_replaced(words: &[usize], positions: &[usize], fresh: usize) -> Vec<usize> {
    let mut out = words.to_vec();
    for (i, &at) in positions.iter().enumerate() {
        out[at] = fresh + i;
    }
    out
}

/// Estimated and exact Jaccard of two texts, from `compare --json`.
fn compare_texts(dir: &Path, a: &str, b: &str) -> (f64, f64) {
    let assert = megashingle(dir)
        .args(["compare", "--json", "--text", a, b])
        .assert()
        .code(0);
    let v: serde_json::Value =
        serde_json::from_str(&stdout_of(assert.get_output())).expect("valid JSON");
    (
        v["estimated_jaccard"].as_f64().unwrap(),
        v["jaccard"].as_f64().unwrap(),
    )
}

/// The rows of a cluster run over `csv` (with `extra` flags), by doc_id.
fn clusters_of(dir: &TempDir, csv: Vec<u8>, extra: &[&str]) -> BTreeMap<String, TableRow> {
    write(dir, "stories.csv", csv);
    let assert = megashingle(dir.path())
        .args(["cluster", "-q", "stories.csv"])
        .args(extra)
        .assert()
        .code(0);
    parse_table(&stdout_of(assert.get_output()))
        .into_iter()
        .map(|r| (r.doc_id.clone(), r))
        .collect()
}

/// A story: its original (`words`) and three light rewrites, each with two words changed.
fn story_with_light_rewrites(name: &str, words: &[usize], fresh: usize) -> Vec<(String, String)> {
    let mut docs = vec![(format!("{name}-original"), prose(words))];
    for (v, positions) in [[30, 100], [60, 140], [10, 80]].iter().enumerate() {
        docs.push((
            format!("{name}-rewrite{v}"),
            prose(&with_words_replaced(words, positions, fresh + 10 * v)),
        ));
    }
    docs
}

/// Story A (`a-*`, words 0..150) and story B (`b-*`, words 1000..1150), four versions each,
/// unrelated, and `bridge` under `bridge_id`; returns the cluster table.
fn bridged_stories(bridge_id: &str, bridge: &[usize]) -> BTreeMap<String, TableRow> {
    let a: Vec<usize> = (0..150).collect();
    let b: Vec<usize> = (1000..1150).collect();
    let mut docs = story_with_light_rewrites("a", &a, 3000);
    docs.extend(story_with_light_rewrites("b", &b, 4000));
    let bridge_text = prose(bridge);
    let dir = temp();
    let rows = clusters_of(
        &dir,
        csv_of(
            docs.iter()
                .map(|(i, t)| (i.as_str(), t.as_str()))
                .chain([(bridge_id, bridge_text.as_str())]),
        ),
        &[],
    );
    assert_eq!(rows.len(), 9);
    rows
}

/// Fails when a document of story A shares a cluster with one of story B.
fn assert_stories_apart(rows: &BTreeMap<String, TableRow>, bridge_id: &str) {
    let cluster = |id: &str| rows[id].cluster_id.as_str();
    let table: Vec<(&str, &str)> = rows
        .values()
        .map(|r| (r.doc_id.as_str(), r.cluster_id.as_str()))
        .collect();
    // Each story holds together...
    for story in ["a", "b"] {
        for v in 0..3 {
            assert_eq!(
                cluster(&format!("{story}-rewrite{v}")),
                cluster(&format!("{story}-original")),
                "{table:?}"
            );
        }
    }
    // ...and the bridge does not glue them: it joins one of them or stays alone.
    assert_ne!(
        cluster("a-original"),
        cluster("b-original"),
        "{bridge_id} chained the two stories: {table:?}"
    );
    let bridge = cluster(bridge_id);
    assert!(
        bridge == cluster("a-original")
            || bridge == cluster("b-original")
            || rows[bridge_id].cluster_size == 1,
        "{table:?}"
    );
}

#[test]
fn a_bridge_document_does_not_chain_two_stories() {
    let a: Vec<usize> = (0..150).collect();
    let b: Vec<usize> = (1000..1150).collect();
    // First half of A, second half of B: about a third of its shingles with each story.
    let bridge: Vec<usize> = a[..75].iter().chain(&b[75..]).copied().collect();
    let rows = bridged_stories("bridge", &bridge);
    assert_stories_apart(&rows, "bridge");
}

/// The same, with a bridge that becomes the fullest member of the story it joins: its id sorts
/// before the stories' (it wins the tie on shingle count), or it is a few words longer.
#[test]
fn a_bridge_document_that_is_the_fullest_version_does_not_chain_two_stories() {
    let a: Vec<usize> = (0..150).collect();
    let b: Vec<usize> = (1000..1150).collect();
    let even: Vec<usize> = a[..75].iter().chain(&b[75..]).copied().collect();
    let longer: Vec<usize> = a[..80].iter().chain(&b[70..]).copied().collect();
    for (bridge_id, bridge) in [("0-bridge", &even), ("bridge", &longer)] {
        let rows = bridged_stories(bridge_id, bridge);
        assert_stories_apart(&rows, bridge_id);
    }
}

/// `words` with every other run of `run` words (shifted by `offset`) replaced by new words
/// numbered from `fresh`: a heavy rewrite that keeps 10 of every 24 shingles (Jaccard about
/// 0.27 with the original).
fn heavy_rewrite(words: &[usize], run: usize, offset: usize, fresh: usize) -> Vec<usize> {
    words
        .iter()
        .enumerate()
        .map(|(i, &w)| {
            if ((i + offset) / run).is_multiple_of(2) {
                w
            } else {
                fresh + i
            }
        })
        .collect()
}

#[test]
fn a_heavy_rewrite_attaches_to_its_story_but_two_lone_documents_stay_apart() {
    let dir = temp();
    // A story in four near-identical versions, and a heavy rewrite of it: runs of 12 words
    // kept, the next 12 replaced, and so on.
    let story: Vec<usize> = (0..150).collect();
    let versions = [
        story.clone(),
        with_words_replaced(&story, &[40], 9000),
        with_words_replaced(&story, &[90], 9100),
        with_words_replaced(&story, &[20, 130], 9200),
    ];
    let heavy = prose(&heavy_rewrite(&story, 12, 6, 5000));
    // Two lone documents, unrelated to the story, one a heavy rewrite of the other.
    let lone: Vec<usize> = (2000..2150).collect();
    let (lone_1, lone_2) = (prose(&lone), prose(&heavy_rewrite(&lone, 12, 6, 7000)));
    // The construction gives estimated Jaccards between the attach threshold (0.2) and the
    // join threshold (0.35); if the hashing changes, pick another run length or offset.
    let weak = 0.2..0.35;
    let texts: Vec<String> = versions.iter().map(|v| prose(v)).collect();
    for (v, text) in texts.iter().enumerate() {
        let (estimated, exact) = compare_texts(dir.path(), text, &heavy);
        assert!(
            weak.contains(&estimated) && (0.2..0.35).contains(&exact),
            "version {v} and the heavy rewrite: estimated {estimated}, exact {exact}"
        );
        if v == 0 {
            assert!(
                weak.contains(&estimated),
                "original and the heavy rewrite: estimated {estimated}, exact {exact}"
            );
        }
    }
    let (estimated, exact) = compare_texts(dir.path(), &lone_1, &lone_2);
    assert!(
        weak.contains(&estimated),
        "the lone pair: estimated {estimated}, exact {exact}"
    );
    let mut docs: Vec<(&str, &str)> = vec![
        ("s-original", &texts[0]),
        ("s-version1", &texts[1]),
        ("s-version2", &texts[2]),
        ("s-version3", &texts[3]),
        ("s-heavy", &heavy),
    ];
    docs.extend([("lone-1", lone_1.as_str()), ("lone-2", lone_2.as_str())]);
    let rows = clusters_of(&dir, csv_of(docs.iter().copied()), &[]);
    let table: Vec<(&str, &str, usize)> = rows
        .values()
        .map(|r| (r.doc_id.as_str(), r.cluster_id.as_str(), r.cluster_size))
        .collect();
    for id in ["s-version1", "s-version2", "s-version3", "s-heavy"] {
        assert_eq!(
            rows[id].cluster_id, rows["s-original"].cluster_id,
            "{id}: {table:?}"
        );
    }
    assert_eq!(rows["s-heavy"].cluster_size, 5, "{table:?}");
    for id in ["lone-1", "lone-2"] {
        assert_eq!(rows[id].cluster_size, 1, "{id}: {table:?}");
    }
    // Attaching is what brought the heavy rewrite in: without it, it stays alone.
    let rows = clusters_of(
        &dir,
        csv_of(docs.iter().copied()),
        &["--set", "cluster.attach-similarity=0"],
    );
    assert_eq!(rows["s-heavy"].cluster_size, 1);
    assert_eq!(rows["s-original"].cluster_size, 4);
}

/// A story of one letter in two copies (words 0..200), and another letter from the same
/// template: an opening of its own (sender, bank, sums), then `rest`, the template's phrases
/// past the letter's opening with some of them filled in otherwise. Checked to make a weak
/// link with the letter.
fn letters_from_one_template(dir: &TempDir, rest: impl IntoIterator<Item = usize>) -> [String; 3] {
    let letter: Vec<usize> = (0..200).collect();
    let copy = with_words_replaced(&letter, &[100], 9000);
    let other: Vec<usize> = (3000..3030).chain(rest).collect();
    let texts = [prose(&letter), prose(&copy), prose(&other)];
    let (estimated, exact) = compare_texts(dir.path(), &texts[0], &texts[2]);
    assert!(
        (0.2..0.35).contains(&exact),
        "a weak link: estimated {estimated}, exact {exact}"
    );
    texts
}

#[test]
fn a_letter_from_the_same_template_that_opens_otherwise_does_not_attach() {
    let dir = temp();
    // Every other run of 16 words past the opening filled in otherwise.
    let rest: Vec<usize> = (30..200).collect();
    let texts = letters_from_one_template(&dir, heavy_rewrite(&rest, 16, 8, 5000));
    let docs = csv_of([
        ("letter", texts[0].as_str()),
        ("letter-copy", texts[1].as_str()),
        ("other", texts[2].as_str()),
    ]);
    let rows = clusters_of(&dir, docs.clone(), &[]);
    assert_eq!(rows["letter"].cluster_size, 2);
    assert_eq!(rows["other"].cluster_size, 1);
    // The lead check is what keeps it apart: without it, the weak link attaches it.
    let rows = clusters_of(&dir, docs, &["--set", "cluster.attach-lead=0"]);
    assert_eq!(rows["other"].cluster_size, 3);
}

#[test]
fn a_letter_from_the_same_template_added_a_night_later_does_not_attach_either() {
    // The index keeps each document's lead, so a weak link with an indexed document is
    // checked as `cluster` checks one in a batch.
    let dir = temp();
    // 16 of every 24 words past the opening kept: a weak link by the estimate the index
    // makes from the minima it keeps too.
    let rest = (30..200).map(|i| if i % 24 < 16 { i } else { 5000 + i });
    let texts = letters_from_one_template(&dir, rest);
    let docs = [
        ("letter", texts[0].as_str()),
        ("letter-copy", texts[1].as_str()),
        ("other", texts[2].as_str()),
    ];
    let rows = clusters_of(&dir, csv_of(docs), &[]);
    assert_eq!(rows["other"].cluster_size, 1, "apart in one batch");
    write(&dir, "night-1.csv", csv_of(docs[..2].iter().copied()));
    write(&dir, "night-2.csv", csv_of(docs[2..].iter().copied()));
    let story_size_of_other = |name: &str, extra: &[&str]| {
        let db = format!("{name}.db");
        for night in ["night-1.csv", "night-2.csv"] {
            megashingle(dir.path())
                .args(["index", "add", "-q", "--db", &db, night, "-o", "/dev/null"])
                .args(extra)
                .assert()
                .code(0);
        }
        let export = megashingle(dir.path())
            .args(["index", "export", "--db", &db])
            .assert()
            .code(0);
        let rows = stdout_of(export.get_output());
        let row = rows
            .lines()
            .find(|line| line.starts_with("other,"))
            .unwrap_or_else(|| panic!("no row of other: {rows}"))
            .to_owned();
        let fields: Vec<&str> = row.split(',').collect();
        (fields[1].to_owned(), fields[2].parse::<usize>().unwrap())
    };
    assert_eq!(story_size_of_other("checked", &[]), ("other".into(), 1));
    // The lead check is what keeps it apart: without it, the weak link attaches it.
    let (story, size) = story_size_of_other("unchecked", &["--set", "cluster.attach-lead=0"]);
    assert_eq!((story.as_str(), size), ("letter", 3));
}

#[test]
fn timings_count_the_candidate_pairs_checked_and_verified() {
    let dir = temp();
    let output = megashingle(dir.path())
        .args(["cluster", news().to_str().unwrap(), "--timings", "-q"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let lines: Vec<String> = stderr_lines(&output)
        .into_iter()
        .filter(|l| l.starts_with("megashingle: timings: "))
        .collect();
    let [stages, counts] = &lines[..] else {
        panic!("two lines of timings: {lines:#?}")
    };
    assert!(stages.contains("clustering"), "{stages}");
    assert!(counts.contains("candidate pairs checked"), "{counts}");
    // "N candidate pairs checked (x a document), M passed verification (y a document)"
    let numbers: Vec<f64> = counts
        .strip_prefix("megashingle: timings: ")
        .unwrap()
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .filter(|w| !w.is_empty())
        .map(|w| w.parse().unwrap())
        .collect();
    let [candidates, _, verified, _] = numbers[..] else {
        panic!("four numbers in {counts:?}")
    };
    // The news fixtures hold rewrites of one another: pairs are found, and some pass.
    assert!(verified > 0.0 && verified <= candidates, "{counts}");
}
