//! `megashingle dedup`: the input records with duplicates removed, every column or field kept;
//! each keep policy; the similarity guarantee (a member far from the kept record stays); the
//! list of removed records; and the inputs it refuses, each with its message.

use std::path::{Path, PathBuf};

#[allow(dead_code)]
mod common;
use common::{megashingle, paragraphs_text as text, single_error_line, stdout_of, temp};

fn write(dir: &Path, name: &str, content: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, content).unwrap();
    path
}

fn csv_field(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

/// Runs `dedup` in `dir` and returns its stdout, asserting exit 0.
fn dedup(dir: &Path, args: &[&str]) -> String {
    let output = megashingle(dir)
        .arg("dedup")
        .args(args)
        .arg("--quiet")
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    stdout_of(&output)
}

/// The first field of each data row of a CSV table.
fn ids(table: &str) -> Vec<String> {
    let mut reader = csv::Reader::from_reader(table.as_bytes());
    reader.records().map(|r| r.unwrap()[0].to_owned()).collect()
}

/// A story of three versions (d1 the fullest, d2 the earliest, d3 the first read) and an
/// unrelated record; an extra column with a comma, a quote and a line break must survive.
fn story_csv(dir: &Path) -> PathBuf {
    let rows = [
        (
            "d3",
            text(&[1, 2, 3, 4]),
            "2026-11-03",
            "x, \"quoted\"\nsecond line",
        ),
        ("d1", text(&[1, 2, 3, 4, 5]), "2026-11-02", "plain"),
        ("d2", text(&[1, 2, 3, 4]) + " extra", "2026-11-01", ""),
        ("other", text(&[9, 10]), "2026-11-05", "z"),
    ];
    let mut csv = String::from("id,text,published,note\n");
    for (id, text, time, note) in rows {
        csv.push_str(&format!(
            "{id},{},{time},{}\n",
            csv_field(&text),
            csv_field(note)
        ));
    }
    write(dir, "in.csv", &csv)
}

#[test]
fn each_keep_policy_keeps_its_record_and_every_column() {
    let dir = temp();
    story_csv(dir.path());
    for (keep, kept) in [
        ("representative", "d1"),
        ("first", "d3"),
        ("longest", "d1"),
        ("earliest", "d2"),
    ] {
        let out = dedup(
            dir.path(),
            &["in.csv", "--keep", keep, "--time-column", "published"],
        );
        let mut expected = vec![kept, "other"];
        // Records come out in input order.
        let order = ["d3", "d1", "d2", "other"];
        expected.sort_by_key(|id| order.iter().position(|o| o == id));
        assert_eq!(ids(&out), expected, "--keep {keep}:\n{out}");
        assert!(out.starts_with("id,text,published,note\n"), "{out}");
        let mut reader = csv::Reader::from_reader(out.as_bytes());
        for record in reader.records() {
            let record = record.unwrap();
            assert_eq!(record.len(), 4);
            if &record[0] == "d3" {
                assert_eq!(&record[3], "x, \"quoted\"\nsecond line");
            }
        }
    }
}

#[test]
fn jsonl_lines_come_out_as_they_were() {
    let dir = temp();
    let lines = [
        format!(
            r#"{{"text": "{}", "id": "a", "meta": {{"n": 1}}}}"#,
            text(&[1, 2, 3])
        ),
        format!(
            r#"{{"id":"b","text":"{} more","tags":["x"]}}"#,
            text(&[1, 2, 3])
        ),
        format!(r#"{{"id":"c","text":"{}"}}"#, text(&[7, 8])),
    ];
    write(dir.path(), "in.jsonl", &(lines.join("\n") + "\n"));
    let out = dedup(dir.path(), &["in.jsonl", "--keep", "first"]);
    assert_eq!(out, format!("{}\n{}\n", lines[0], lines[2]));
}

#[test]
fn a_member_far_from_the_kept_record_stays() {
    // a~b and b~c join one story through b, but c shares only a fifth of its text with a.
    let dir = temp();
    let csv = format!(
        "id,text\na,{}\nb,{}\nc,{}\n",
        csv_field(&text(&[1, 2, 3])),
        csv_field(&text(&[2, 3, 4])),
        csv_field(&text(&[3, 4, 5])),
    );
    write(dir.path(), "in.csv", &csv);
    let clusters = stdout_of(
        &megashingle(dir.path())
            .args(["cluster", "in.csv"])
            .output()
            .unwrap(),
    );
    let sizes: Vec<&str> = clusters
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(2).unwrap())
        .collect();
    assert_eq!(sizes, ["3", "3", "3"], "one story of three: {clusters}");
    let out = dedup(
        dir.path(),
        &[
            "in.csv",
            "--keep",
            "first",
            "--threshold",
            "0.45",
            "--dropped",
            "dropped.csv",
        ],
    );
    assert_eq!(ids(&out), ["a", "c"]);
    let dropped = std::fs::read_to_string(dir.path().join("dropped.csv")).unwrap();
    let mut lines = dropped.lines();
    assert_eq!(
        lines.next(),
        Some("doc_id,duplicate_of,similarity,jaccard,containment")
    );
    let row: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(&row[..2], ["b", "a"]);
    let jaccard: f64 = row[3].parse().unwrap();
    assert!((0.45..0.6).contains(&jaccard), "{dropped}");
    assert_eq!(lines.next(), None);
    // A threshold of 0 removes every member of the story.
    let out = dedup(
        dir.path(),
        &["in.csv", "--keep", "first", "--threshold", "0"],
    );
    assert_eq!(ids(&out), ["a"]);
}

#[test]
fn refused_inputs_name_the_problem() {
    let dir = temp();
    let d = dir.path();
    write(d, "a.csv", "id,text\n1,one two three four\n");
    write(d, "b.csv", "doc,text\n2,one two three four\n");
    write(d, "c.jsonl", "{\"id\":\"3\",\"text\":\"one two three\"}\n");
    std::fs::create_dir(d.join("folder")).unwrap();
    write(d, "crawl.warc.gz", "");
    for (args, message) in [
        (
            vec!["-"],
            "dedup reads each input twice, so it cannot read stdin: save it to a file and give that",
        ),
        (
            vec!["folder"],
            "folder: a folder of documents; dedup writes records, so give CSV, JSONL or Parquet files (use `cluster` for folders)",
        ),
        (
            vec!["a.csv", "c.jsonl"],
            "c.jsonl is JSONL but a.csv is CSV: dedup writes one format, so give inputs of one format",
        ),
        (
            vec!["crawl.warc.gz"],
            "crawl.warc.gz: an archive of documents; dedup writes records, so give CSV, JSONL or Parquet files (use `cluster` for mail archives and WARC files)",
        ),
        (
            vec!["a.csv", "b.csv"],
            "b.csv: its header differs from that of a.csv: dedup writes one CSV table, so give inputs with one header",
        ),
        (
            vec!["a.csv", "--keep", "earliest"],
            "--keep earliest needs the column or field of each record's time: give --time-column NAME",
        ),
        (
            vec!["a.csv", "--keep", "earliest", "--time-column", "when"],
            "a.csv: no column `when` (the time column); columns found: id, text; \
             --time-column chooses the time column",
        ),
    ] {
        let output = megashingle(d)
            .arg("dedup")
            .args(&args)
            .args(["-o", "out.csv"])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert_eq!(single_error_line(&output), format!("megashingle: error: {message}"));
        assert!(!d.join("out.csv").exists());
    }
}
