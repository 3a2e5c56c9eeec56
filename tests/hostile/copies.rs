//! Copies beyond the bucket bound: thousands of identical and near-identical documents. A
//! text syndicated more times than `cluster.max-bucket` (5,000) is one story all the same, in
//! `cluster` and in the index, and a bucket still cut among distinct documents is named in the
//! summary line. The inputs are made here, a few megabytes each.

use std::collections::BTreeMap;
use std::path::Path;

use crate::common::{megashingle, stderr_lines, stdout_of, temp};

/// Words of one family's text; each family draws from its own vocabulary, so two families
/// share no shingle.
fn family_text(family: usize, words: usize) -> Vec<String> {
    (0..words)
        .map(|w| format!("f{family}w{}", (w * 7919 + family * 104_729) % 1000))
        .collect()
}

/// One of the `variants` distinct near-duplicates of a family's text (one word of its own,
/// at a place of its own), written in one of four ways that read as the same words: as it
/// is, in capitals, with punctuation and doubled spaces, or split over lines.
fn member(family: usize, variant: usize, style: usize) -> String {
    let mut words = family_text(family, 60);
    let at = 5 + variant * 50 / 64;
    words[at] = format!("variant{variant}");
    match style % 4 {
        0 => words.join(" "),
        1 => words.join(" ").to_uppercase(),
        2 => words.join(",  ") + ".",
        _ => words
            .chunks(12)
            .map(|c| c.join(" "))
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

/// Writes `docs.csv` (id, text) in `dir`.
fn write_csv(dir: &Path, rows: &[(String, String)]) {
    let mut writer = csv::Writer::from_path(dir.join("docs.csv")).expect("a CSV file");
    writer.write_record(["id", "text"]).unwrap();
    for (id, text) in rows {
        writer.write_record([id, text]).unwrap();
    }
    writer.flush().unwrap();
}

/// The documents (`doc_id`) of each value of `column` in a CSV table: each cluster's members
/// in a cluster table, each story's new members in the table `index add` prints.
fn members_by(table: &str, column: &str) -> BTreeMap<String, Vec<String>> {
    let mut reader = csv::Reader::from_reader(table.as_bytes());
    let header = reader.headers().expect("a header").clone();
    let position = |name: &str| header.iter().position(|h| h == name).expect(name);
    let (doc, group) = (position("doc_id"), position(column));
    let mut groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for record in reader.records() {
        let record = record.expect("a well-formed row");
        groups
            .entry(record[group].to_owned())
            .or_default()
            .push(record[doc].to_owned());
    }
    groups
}

/// Runs `cluster docs.csv` in `dir` and returns the clusters and the summary line.
fn cluster(dir: &Path, settings: &[&str]) -> (BTreeMap<String, Vec<String>>, String) {
    let mut command = megashingle(dir);
    command.args(["cluster", "docs.csv"]);
    for setting in settings {
        command.args(["--set", setting]);
    }
    let assert = command.assert().code(0);
    let output = assert.get_output();
    let lines = stderr_lines(output);
    let summary = lines
        .iter()
        .find(|l| l.starts_with("megashingle: ") && l.contains(" documents in "))
        .unwrap_or_else(|| panic!("no summary line: {lines:#?}"))
        .clone();
    (members_by(&stdout_of(output), "cluster_id"), summary)
}

#[test]
fn twenty_thousand_identical_documents_are_one_cluster() {
    let dir = temp();
    let text = member(0, 0, 0);
    let rows: Vec<(String, String)> = (0..20_000)
        .map(|i| (format!("copy{i:05}"), text.clone()))
        .collect();
    write_csv(dir.path(), &rows);
    let (clusters, summary) = cluster(dir.path(), &[]);
    assert_eq!(clusters.len(), 1, "{summary}");
    let members = &clusters["copy00000"];
    assert_eq!(members.len(), 20_000);
    assert!(
        summary.contains("20000 documents in 1 clusters (1 clusters of 2 or more hold 20000"),
        "{summary}"
    );
    assert!(!summary.contains("cut"), "{summary}");
}

#[test]
fn twenty_thousand_documents_in_four_near_duplicate_families_are_four_clusters() {
    // Two families over the bucket bound and two under it; each holds 40 distinct
    // near-duplicates (one word apart), each written in four ways.
    let sizes = [11_000, 5_001, 3_000, 999];
    assert_eq!(sizes.iter().sum::<usize>(), 20_000);
    let dir = temp();
    let mut rows = Vec::new();
    for (family, &size) in sizes.iter().enumerate() {
        for i in 0..size {
            let text = member(family, i % 40, i / 40);
            rows.push((format!("f{family}-{i:05}"), text));
        }
    }
    write_csv(dir.path(), &rows);
    let (clusters, summary) = cluster(dir.path(), &[]);
    assert_eq!(clusters.len(), 4, "{summary}");
    for (family, &size) in sizes.iter().enumerate() {
        let members = &clusters[&format!("f{family}-00000")];
        assert_eq!(members.len(), size, "family {family}: {summary}");
        assert!(members
            .iter()
            .all(|m| m.starts_with(&format!("f{family}-"))));
    }
    assert!(!summary.contains("cut"), "{summary}");
}

#[test]
fn a_bucket_cut_among_distinct_documents_is_named_in_the_summary() {
    // Thirty distinct near-duplicates and a hundred copies of one of them, with a bound of
    // ten distinct documents: the keys they all share are cut, and the summary says how
    // many buckets and documents; the copies still join their original.
    let dir = temp();
    let mut rows: Vec<(String, String)> = (0..30)
        .map(|v| (format!("near{v:02}"), member(0, v, 0)))
        .collect();
    rows.extend((0..100).map(|i| (format!("same{i:03}"), member(0, 0, i))));
    write_csv(dir.path(), &rows);
    let (clusters, summary) = cluster(dir.path(), &["cluster.max-bucket=10"]);
    let cut = summary
        .split("; ")
        .find(|part| part.contains("were cut"))
        .unwrap_or_else(|| panic!("no cut buckets named: {summary}"));
    let (buckets, rest) = cut.split_once(' ').unwrap();
    assert!(buckets.parse::<usize>().unwrap() > 0, "{summary}");
    assert!(
        rest.starts_with(
            "candidate buckets of more distinct documents than cluster.max-bucket were cut: "
        ),
        "{summary}"
    );
    let documents: usize = cut
        .split(": ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    // Each distinct text shares most keys with the other 29, so all 130 are in a cut bucket.
    assert_eq!(documents, 130, "{summary}");
    let with_copies = clusters
        .values()
        .find(|c| c.contains(&"near00".to_owned()))
        .unwrap();
    assert!(with_copies.len() > 100, "{with_copies:?}");
    // At the default bound nothing is cut, and the thirty are one story.
    let (clusters, summary) = cluster(dir.path(), &[]);
    assert_eq!(clusters.len(), 1, "{summary}");
    assert!(!summary.contains("cut"), "{summary}");
}

#[test]
fn copies_indexed_night_after_night_join_one_story() {
    // More copies than the bound in one night, then one more the next night: the second
    // night's copy finds the story through the oldest indexed copy.
    let dir = temp();
    let text = member(1, 3, 0);
    let rows: Vec<(String, String)> = (0..5_100)
        .map(|i| (format!("night1-{i:04}"), text.clone()))
        .collect();
    write_csv(dir.path(), &rows);
    let add = |dir: &Path| {
        let assert = megashingle(dir)
            .args(["index", "add", "--db", "stories.db", "docs.csv"])
            .assert()
            .code(0);
        let output = assert.get_output();
        (
            members_by(&stdout_of(output), "story_id"),
            stderr_lines(output),
        )
    };
    let (stories, stderr) = add(dir.path());
    assert_eq!(stories.len(), 1, "{stderr:#?}");
    assert_eq!(stories.values().next().unwrap().len(), 5_100);
    write_csv(
        dir.path(),
        &[
            ("night2-copy".to_owned(), member(1, 3, 1)),
            ("night2-near".to_owned(), member(1, 4, 0)),
        ],
    );
    let (second, stderr) = add(dir.path());
    let first_story = stories.keys().next().unwrap();
    assert_eq!(
        second.keys().collect::<Vec<_>>(),
        vec![first_story],
        "{stderr:#?}"
    );
    assert_eq!(second[first_story].len(), 2);
}
