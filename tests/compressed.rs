//! Compressed corpora: `.gz` and `.zst` files (CSV, JSONL, documents in folders) are read as
//! they are decompressed, give the same stories as the plain files, and a damaged one is one
//! error line naming it.

use std::io::Write;
use std::path::Path;

#[allow(dead_code)]
mod common;
use common::{megashingle, single_error_line, stdout_of, temp};

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

fn zstd(bytes: &[u8]) -> Vec<u8> {
    zstd::encode_all(bytes, 3).unwrap()
}

fn cluster(dir: &Path, input: &str) -> String {
    let output = megashingle(dir)
        .args(["cluster", "--quiet", input])
        .output()
        .unwrap();
    assert!(output.status.success(), "{input}: {output:?}");
    stdout_of(&output)
}

/// Two stories of two versions each and a lone text.
fn csv_corpus() -> String {
    let a = "the river burst its banks overnight and flooded the lower town where residents \
             were moved to the school gym by the fire brigade before dawn";
    let b = "the city council approved a new budget for buses and trams on monday after a long \
             debate about fares and the night service to the northern suburbs";
    format!(
        "id,text\n1,{a}\n2,{a} said the mayor\n3,{b}\n4,{b} and the airport\n5,a recipe for \
         bread with flour water salt and yeast\n"
    )
}

#[test]
fn compressed_record_files_give_the_stories_of_the_plain_ones() {
    let dir = temp();
    let d = dir.path();
    let csv = csv_corpus();
    let jsonl: String = csv
        .lines()
        .skip(1)
        .map(|l| {
            let (id, text) = l.split_once(',').unwrap();
            format!("{}\n", serde_json::json!({"id": id, "text": text}))
        })
        .collect();
    std::fs::write(d.join("docs.csv"), &csv).unwrap();
    std::fs::write(d.join("docs.csv.gz"), gzip(csv.as_bytes())).unwrap();
    std::fs::write(d.join("docs.csv.zst"), zstd(csv.as_bytes())).unwrap();
    std::fs::write(d.join("docs.jsonl.gz"), gzip(jsonl.as_bytes())).unwrap();
    // Two gzip members one after the other, as `cat a.gz b.gz` makes.
    let third = jsonl.lines().take(2).map(|l| l.len() + 1).sum();
    let (head, tail) = jsonl.split_at(third);
    let mut members = gzip(head.as_bytes());
    members.extend(gzip(tail.as_bytes()));
    std::fs::write(d.join("members.jsonl.gz"), members).unwrap();
    let plain = cluster(d, "docs.csv");
    assert_eq!(
        plain.lines().filter(|l| l.contains(",2,")).count(),
        4,
        "{plain}"
    );
    for input in [
        "docs.csv.gz",
        "docs.csv.zst",
        "docs.jsonl.gz",
        "members.jsonl.gz",
    ] {
        assert_eq!(cluster(d, input), plain, "{input}");
    }
}

#[test]
fn compressed_documents_in_a_folder_are_read_with_their_names() {
    let dir = temp();
    let pages = dir.path().join("pages");
    std::fs::create_dir(&pages).unwrap();
    let text = "the river burst its banks overnight and flooded the lower town where residents \
                were moved to the school gym";
    std::fs::write(pages.join("a.txt"), text).unwrap();
    std::fs::write(pages.join("b.txt.gz"), gzip(text.as_bytes())).unwrap();
    std::fs::write(
        pages.join("c.html.zst"),
        zstd(format!("<p>{text}</p>").as_bytes()),
    )
    .unwrap();
    std::fs::write(pages.join("notes.gz"), gzip(b"not a document")).unwrap();
    let out = cluster(dir.path(), "pages");
    let ids: Vec<&str> = out
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap())
        .collect();
    assert_eq!(ids.len(), 3, "{out}");
    for id in ["a.txt", "b.txt.gz", "c.html.zst"] {
        assert!(ids.contains(&id), "{id} in {out}");
    }
}

#[test]
fn a_damaged_compressed_file_is_named() {
    let dir = temp();
    let mut bytes = gzip(csv_corpus().as_bytes());
    let middle = bytes.len() / 2;
    bytes.truncate(middle);
    std::fs::write(dir.path().join("cut.csv.gz"), bytes).unwrap();
    let output = megashingle(dir.path())
        .args(["cluster", "cut.csv.gz", "-o", "out.csv"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let line = single_error_line(&output);
    assert!(
        line.starts_with("megashingle: error: cut.csv.gz: "),
        "{line}"
    );
    assert!(!dir.path().join("out.csv").exists());
}

#[test]
fn dedup_reads_a_compressed_file_and_writes_it_plain() {
    let dir = temp();
    let d = dir.path();
    std::fs::write(d.join("docs.csv.gz"), gzip(csv_corpus().as_bytes())).unwrap();
    let output = megashingle(d)
        .args(["dedup", "--quiet", "docs.csv.gz", "--keep", "first"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let ids: Vec<String> = stdout_of(&output)
        .lines()
        .map(|l| l.split(',').next().unwrap().to_owned())
        .collect();
    assert_eq!(ids, ["id", "1", "3", "5"]);
}
