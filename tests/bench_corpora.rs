//! The benchmark corpora of running stories: `scripts/gen-corpus --running-stories` and
//! `scripts/split-nights`, which deals such a corpus into nights of one size where most
//! documents join a story that an earlier night began, the same way on every run; and the
//! split's errors, one line each. Skips with a line on stderr when `python3` is absent.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scripts")
        .join(name)
}

/// Runs `python3 scripts/NAME ARGS`, or `None` with a line on stderr when python3 is absent.
fn python(name: &str, args: &[&Path]) -> Option<Output> {
    match Command::new("python3")
        .arg(script(name))
        .args(args)
        .output()
    {
        Ok(output) => Some(output),
        Err(_) => {
            eprintln!("skipped: scripts/{name}: python3 is absent");
            None
        }
    }
}

/// The ids of a night file, and its header.
fn ids(path: &Path) -> (Vec<String>, Vec<String>) {
    let mut reader = csv::Reader::from_path(path).expect("a night file");
    let header = reader
        .headers()
        .unwrap()
        .iter()
        .map(str::to_owned)
        .collect();
    let ids = reader.records().map(|r| r.unwrap()[0].to_owned()).collect();
    (ids, header)
}

#[test]
fn running_stories_are_dealt_into_nights_that_join_earlier_stories() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus.csv");
    let truth = dir.path().join("truth.csv");
    let args: Vec<&Path> = vec![
        Path::new("3000"),
        &corpus,
        Path::new("--truth"),
        &truth,
        Path::new("--running-stories"),
    ];
    let Some(made) = python("gen_corpus.py", &args) else {
        return;
    };
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let story_of: HashMap<String, String> = csv::Reader::from_path(&truth)
        .unwrap()
        .records()
        .map(|r| {
            let r = r.unwrap();
            (r[0].to_owned(), r[1].to_owned())
        })
        .collect();
    let largest = {
        let mut sizes: HashMap<&str, usize> = HashMap::new();
        for story in story_of.values() {
            *sizes.entry(story).or_default() += 1;
        }
        sizes.into_values().max().unwrap()
    };
    assert!(largest > 50 && largest <= 300, "largest family {largest}");

    let nights = dir.path().join("nights");
    let split = |out: &Path| python("split_nights.py", &[&corpus, &truth, Path::new("4"), out]);
    let dealt = split(&nights).unwrap();
    assert!(
        dealt.status.success(),
        "{}",
        String::from_utf8_lossy(&dealt.stderr)
    );
    let printed = String::from_utf8_lossy(&dealt.stdout);
    assert_eq!(printed.lines().count(), 4, "{printed}");
    assert!(printed.starts_with("night  1:"), "{printed}");

    // Every document lands on one night; a story's original on its story's first night.
    let mut first_night: HashMap<&str, usize> = HashMap::new();
    let mut night_of: HashMap<String, usize> = HashMap::new();
    let mut sizes = Vec::new();
    for n in 1..=4 {
        let (ids, header) = ids(&nights.join(format!("night-{n:02}.csv")));
        assert_eq!(header, ["id", "text"]);
        sizes.push(ids.len());
        for id in ids {
            let story = story_of[&id].as_str();
            let first = first_night.entry(story).or_insert(n);
            *first = (*first).min(n);
            assert!(night_of.insert(id, n).is_none(), "a document on two nights");
        }
    }
    assert_eq!(night_of.len(), story_of.len());
    for (id, &n) in &night_of {
        if story_of[id] == *id {
            assert_eq!(
                n,
                first_night[story_of[id].as_str()],
                "the original of {id}"
            );
        }
    }
    // Nights of about one size, the last mostly follow-ups of earlier nights' stories.
    assert!(sizes.iter().all(|&s| s > 500), "{sizes:?}");
    let last = night_of.iter().filter(|&(_, &n)| n == 4);
    let (running, all) = last.fold((0, 0), |(r, a), (id, _)| {
        (
            r + usize::from(first_night[story_of[id].as_str()] < 4),
            a + 1,
        )
    });
    assert!(
        running * 2 > all,
        "{running} of {all} join an earlier story"
    );

    // The same split again, byte for byte.
    let again = dir.path().join("again");
    assert!(split(&again).unwrap().status.success());
    for n in 1..=4 {
        let name = format!("night-{n:02}.csv");
        assert_eq!(
            std::fs::read(nights.join(&name)).unwrap(),
            std::fs::read(again.join(&name)).unwrap()
        );
    }
}

#[test]
fn a_split_of_a_document_without_a_story_or_with_bad_arguments_says_so_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus.csv");
    let truth = dir.path().join("truth.csv");
    std::fs::write(&corpus, "id,text\na,one text\nb,another text\n").unwrap();
    std::fs::write(&truth, "id,cluster_id\na,a\n").unwrap();
    let out = dir.path().join("nights");
    let Some(failed) = python("split_nights.py", &[&corpus, &truth, Path::new("3"), &out]) else {
        return;
    };
    assert_eq!(failed.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&failed.stderr);
    assert_eq!(
        stderr.trim_end(),
        format!(
            "split-nights: {}: document 'b' is not in {}",
            corpus.display(),
            truth.display()
        )
    );
    let left = std::fs::read_dir(&out).map_or(0, |d| d.count());
    assert_eq!(
        left, 0,
        "no night is put in place, and no part of one is left"
    );

    let usage = python("split_nights.py", &[&corpus, &truth, Path::new("0"), &out]).unwrap();
    assert_eq!(usage.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&usage.stderr).trim_end(),
        "usage: split-nights CORPUS.csv TRUTH.csv NIGHTS OUT_DIR"
    );
}
