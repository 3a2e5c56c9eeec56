//! The dev benchmarks re-encoded as the world sends them (`scripts/reencode.py`: pages in legacy
//! charsets, declared or not; MIME mails; plain text with a BOM, in UTF-16 or a legacy charset;
//! and all of it as a WARC) give the stories of their UTF-8 CSV: nothing skipped, and a
//! pairwise agreement of 0.99 or more with the CSV's stories. Skips with a line on stderr when
//! `../shared` or `python3` is absent.

#[allow(dead_code)]
mod common;

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{megashingle, stderr_of, temp};

/// `../shared/data/NAME/docs.csv` beside the repository, or `None` with a line on stderr.
fn split(name: &str) -> Option<PathBuf> {
    let docs =
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../shared/data/{name}/docs.csv"));
    if docs.is_file() {
        return Some(docs);
    }
    let _ = writeln!(
        std::io::stderr(),
        "skipped: the re-encoded {name}: {} is absent (the benchmark lives beside the repository, in ../shared)",
        docs.display()
    );
    None
}

/// `cluster INPUT` in `dir`: each document's story, its id as `id_of` makes it, and the
/// summary line; the run must skip nothing.
fn stories(dir: &Path, input: &Path, id_of: impl Fn(&str) -> String) -> HashMap<String, String> {
    let output = megashingle(dir)
        .arg("cluster")
        .arg(input)
        .output()
        .expect("runs");
    let stderr = stderr_of(&output);
    assert!(output.status.success(), "{}: {stderr}", input.display());
    assert!(
        stderr.contains(" 0 records skipped"),
        "{}: {stderr}",
        input.display()
    );
    let mut reader = csv::Reader::from_reader(&output.stdout[..]);
    reader
        .records()
        .map(|r| {
            let r = r.expect("a row");
            (id_of(&r[0]), r[1].to_owned())
        })
        .collect()
}

/// The pairwise F1 of `found` against `expected` (pairs of documents in one story).
fn agreement(expected: &HashMap<String, String>, found: &HashMap<String, String>) -> f64 {
    let pairs = |stories: &HashMap<String, String>| {
        let mut members: HashMap<&String, Vec<&String>> = HashMap::new();
        for (id, story) in stories {
            members.entry(story).or_default().push(id);
        }
        let mut pairs = std::collections::HashSet::new();
        for mut ids in members.into_values() {
            ids.sort();
            for (i, a) in ids.iter().enumerate() {
                for b in &ids[i + 1..] {
                    pairs.insert((a.to_string(), b.to_string()));
                }
            }
        }
        pairs
    };
    let (expected, found) = (pairs(expected), pairs(found));
    let common = expected.intersection(&found).count() as f64;
    if expected.is_empty() && found.is_empty() {
        return 1.0;
    }
    2.0 * common / (expected.len() + found.len()) as f64
}

#[test]
fn the_reencoded_dev_benchmarks_give_the_stories_of_their_utf8_csv() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/reencode.py");
    for name in ["rewrites-dev", "multilingual-dev"] {
        let Some(docs) = split(name) else { continue };
        let dir = temp();
        let status = Command::new("python3")
            .arg(&script)
            .arg(&docs)
            .arg(dir.path())
            .stdout(std::process::Stdio::null())
            .status();
        let Ok(status) = status else {
            eprintln!("skipped: the re-encoded {name}: python3 is absent");
            continue;
        };
        assert!(status.success(), "scripts/reencode.py failed on {name}");
        let csv = stories(dir.path(), &docs, str::to_owned);
        let files = stories(dir.path(), &dir.path().join("files"), |id| {
            id.rsplit_once('.').map_or(id, |(stem, _)| stem).to_owned()
        });
        let warc = stories(dir.path(), &dir.path().join("crawl.warc.gz"), |uri| {
            uri.trim_start_matches("https://example.org/").to_owned()
        });
        for (form, found) in [("files", &files), ("WARC", &warc)] {
            assert_eq!(found.len(), csv.len(), "{name} as {form}: documents");
            let f1 = agreement(&csv, found);
            eprintln!("{name} as {form}: pairwise agreement with the UTF-8 CSV {f1:.4}");
            assert!(
                f1 >= 0.99,
                "{name} as {form}: pairwise agreement {f1:.4} below 0.99"
            );
        }
    }
}
