//! Reuse through the index (`index query --reuse`, `Index::query_reuse`): the index finds
//! what `reuse` finds in one batch, on reuse-dev (when `../shared` is beside the repository)
//! and on hand-made cases; the passages printed; the batch form's rows, which leave the
//! index as it was; and the error for an index made before indexes kept passages.

use std::io::Write;
use std::path::{Path, PathBuf};

use megashingle::{Config, Index, Reuser, RunOptions};

#[allow(dead_code)]
mod common;
use common::{made_up_sentences as sentences, megashingle, stderr_of, stdout_of, temp};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A row as both paths give it: the text, the other document, the text's share, the other's
/// share, shared words, passages, longest, Jaccard (four decimals).
type Row = (String, String, String, String, u32, u32, u32, String);

fn four(x: f64) -> String {
    format!("{x:.4}")
}

/// An index that keeps passages, of `documents` at `path`, added in one go under `config`.
fn index_of(path: &Path, config: &Config, documents: &[(String, String)]) -> Index {
    let mut index = Index::open(path).unwrap();
    index.keep_passages().unwrap();
    let mut night = index
        .begin_add(config, RunOptions::default(), false)
        .unwrap();
    for (id, text) in documents {
        night.add(id.as_str(), text, None).unwrap();
    }
    night.commit().unwrap();
    index
}

/// The rows of the index's answer for text `id`, its own row left out.
fn index_rows(index: &Index, config: &Config, id: &str, text: &str) -> Vec<Row> {
    let answer = index.query_reuse(config, text).unwrap();
    let mut rows: Vec<Row> = answer
        .matches
        .into_iter()
        .filter(|m| m.doc_id != id)
        .map(|m| {
            (
                id.to_owned(),
                m.doc_id,
                four(m.a_in_b),
                four(m.b_in_a),
                m.shared_words,
                m.passages,
                m.longest,
                four(m.jaccard),
            )
        })
        .collect();
    rows.sort_by(|a, b| a.1.cmp(&b.1));
    rows
}

/// Every pair `reuse` finds among `documents`, as the rows of each of its two texts.
fn batch_rows(config: &Config, documents: &[(String, String)]) -> Vec<Row> {
    let mut reuser = Reuser::new(config).unwrap();
    for (id, text) in documents {
        reuser.add(id.as_str(), text).unwrap();
    }
    let reuse = reuser.finish().unwrap();
    let mut rows = Vec::new();
    for p in reuse.pairs() {
        let (a_in_b, b_in_a, jaccard) = (four(p.a_in_b), four(p.b_in_a), four(p.jaccard));
        let (shared, passages, longest) = (p.shared_words, p.passages, p.longest);
        rows.push((
            p.doc_a.to_owned(),
            p.doc_b.to_owned(),
            a_in_b.clone(),
            b_in_a.clone(),
            shared,
            passages,
            longest,
            jaccard.clone(),
        ));
        rows.push((
            p.doc_b.to_owned(),
            p.doc_a.to_owned(),
            b_in_a,
            a_in_b,
            shared,
            passages,
            longest,
            jaccard,
        ));
    }
    rows.sort();
    rows
}

/// An archive of three articles: a source of 12 sentences, and two others of their own.
fn archive() -> Vec<(String, String)> {
    vec![
        ("source".into(), sentences(1, 12).join(" ")),
        ("other".into(), sentences(2, 10).join(" ")),
        ("third".into(), sentences(3, 8).join(" ")),
    ]
}

#[test]
fn a_cut_passage_inside_another_article_is_found_and_a_quoted_sentence_is_not() {
    let config = Config::default();
    let dir = temp();
    let index = index_of(&dir.path().join("archive.db"), &config, &archive());
    // Three sentences of the source (36 words) inside an article of 10 sentences of its own.
    let source = sentences(1, 12);
    let own = sentences(4, 10);
    let article = [&own[..5], &source[4..7], &own[5..]].concat().join(" ");
    let answer = index.query_reuse(&config, &article).unwrap();
    let found: Vec<(&str, u32, u32)> = answer
        .matches
        .iter()
        .map(|m| (m.doc_id.as_str(), m.shared_words, m.passages))
        .collect();
    assert_eq!(found, [("source", 36, 1)]);
    let m = &answer.matches[0];
    assert_eq!(
        (format!("{:.4}", m.a_in_b), format!("{:.4}", m.b_in_a)),
        ("0.2308".into(), "0.2500".into())
    );
    // The passage, as the article has it: words 60 to 96.
    assert_eq!(m.text_passages.first(), Some(&(60..96)));
    // 36 of its 156 words are found in the archive.
    assert_eq!((answer.words, answer.found_words), (156, 36));
    assert!((answer.uniqueness() - 120.0 / 156.0).abs() < 1e-12);
    // One quoted sentence of the source (12 words) is not reuse.
    let quoting = [&own[..5], &source[4..5], &own[5..]].concat().join(" ");
    let answer = index.query_reuse(&config, &quoting).unwrap();
    assert!(answer.matches.is_empty(), "{:?}", answer.matches);
    assert_eq!(answer.uniqueness(), 1.0);
    // Asked together, each text gets its own answer, in the order asked.
    let indexed = archive();
    let texts = [
        quoting.as_str(),
        "",
        article.as_str(),
        documents_text(&indexed, "other"),
    ];
    let together = index.query_reuse_many(&config, &texts).unwrap();
    let one_by_one: Vec<_> = texts
        .iter()
        .map(|text| index.query_reuse(&config, text).unwrap())
        .collect();
    assert_eq!(together, one_by_one);
    assert_eq!(together[2].matches[0].doc_id, "source");
    assert_eq!(together[3].matches[0].doc_id, "other");
}

/// The text of document `id` of `documents`.
fn documents_text<'a>(documents: &'a [(String, String)], id: &str) -> &'a str {
    &documents.iter().find(|(i, _)| i == id).unwrap().1
}

#[test]
fn a_removed_copy_leaves_the_reuse_answers_while_its_story_lives_on() {
    let config = Config::default();
    let dir = temp();
    let mut documents = archive();
    documents.push(("copy".into(), documents[0].1.clone()));
    let mut index = index_of(&dir.path().join("archive.db"), &config, &documents);
    let source = sentences(1, 12);
    let own = sentences(4, 10);
    let article = [&own[..5], &source[4..7], &own[5..]].concat().join(" ");
    let reusers = |index: &Index| -> Vec<String> {
        let answer = index.query_reuse(&config, &article).unwrap();
        answer.matches.into_iter().map(|m| m.doc_id).collect()
    };
    assert_eq!(reusers(&index), ["copy", "source"]);
    let removal = index
        .remove(&megashingle::index::Selection {
            before: None,
            ids: vec!["copy".into()],
        })
        .unwrap();
    assert_eq!(removal.removed, 1);
    // The copy stays a ghost of the source's story, for the look-up of later nights; it is
    // never a text a query answers with, and the index keeps its passages for the others.
    assert_eq!(reusers(&index), ["source"]);
    assert!(index.keeps_passages().unwrap());
    let stories = index.query(&config, &documents[0].1).unwrap();
    let ids: Vec<&str> = stories.iter().map(|m| m.doc_id.as_str()).collect();
    assert_eq!(ids, ["source"]);
}

#[test]
fn reuse_dev_through_the_index_is_what_reuse_finds_in_one_batch() {
    let docs = root().join("../shared/data/reuse-dev/docs.csv");
    if !docs.is_file() {
        let _ = writeln!(
            std::io::stderr(),
            "skipped: reuse_dev_through_the_index_is_what_reuse_finds_in_one_batch: {} is absent (the benchmark lives beside the repository, in ../shared)",
            docs.display()
        );
        return;
    }
    let mut documents: Vec<(String, String)> = Vec::new();
    for record in csv::Reader::from_path(&docs).unwrap().into_records() {
        let record = record.unwrap();
        documents.push((record[0].to_owned(), record[1].to_owned()));
    }
    let config = Config::default();
    let (batch, through_index) = both_paths(&config, &documents);
    assert_same_rows(&batch, &through_index);
    // A few reusers against an index of the rest, as a desk would query its archive.
    let dir = temp();
    let mut reusers: Vec<&str> = batch.iter().map(|r| r.0.as_str()).collect();
    reusers.dedup();
    for reuser in reusers.iter().step_by(reusers.len() / 3) {
        let rest: Vec<(String, String)> = documents
            .iter()
            .filter(|(id, _)| id != reuser)
            .cloned()
            .collect();
        let index = index_of(&dir.path().join(format!("{reuser}.db")), &config, &rest);
        let text = &documents.iter().find(|(id, _)| id == reuser).unwrap().1;
        let expected: Vec<Row> = batch.iter().filter(|r| r.0 == *reuser).cloned().collect();
        let found = index_rows(&index, &config, reuser, text);
        // A shingle of exactly `boilerplate.min-documents` documents with the reuser is
        // boilerplate in the batch and not in the index of the rest: the Jaccard may differ
        // in its third decimal, nothing else does.
        assert_same_rows(&without_jaccard(&expected), &without_jaccard(&found));
        for (e, f) in expected.iter().zip(&found) {
            let (e, f): (f64, f64) = (e.7.parse().unwrap(), f.7.parse().unwrap());
            assert!(
                (e - f).abs() < 0.005,
                "{reuser}: Jaccard {e} in the batch, {f} through the index"
            );
        }
    }
}

/// The rows with their Jaccard left out.
fn without_jaccard(rows: &[Row]) -> Vec<Row> {
    rows.iter()
        .map(|r| {
            let mut r = r.clone();
            r.7 = String::new();
            r
        })
        .collect()
}

/// The rows of every document as `reuse` finds them in one batch, and as a query of each
/// against an index of them all finds them (its own row left out), sorted.
fn both_paths(config: &Config, documents: &[(String, String)]) -> (Vec<Row>, Vec<Row>) {
    let batch = batch_rows(config, documents);
    assert!(batch.len() > 500, "{} rows", batch.len());
    let dir = temp();
    let index = index_of(&dir.path().join("all.db"), config, documents);
    let mut through_index: Vec<Row> = documents
        .iter()
        .flat_map(|(id, text)| index_rows(&index, config, id, text))
        .collect();
    through_index.sort();
    // Asked together, the texts get the answers they get one by one.
    let texts: Vec<&str> = documents.iter().map(|(_, text)| text.as_str()).collect();
    let together = index.query_reuse_many(config, &texts).unwrap();
    assert_eq!(together.len(), documents.len());
    for ((id, text), answer) in documents.iter().zip(&together) {
        assert_eq!(answer, &index.query_reuse(config, text).unwrap(), "{id}");
    }
    (batch, through_index)
}

/// Fails naming the first rows that differ.
fn assert_same_rows(batch: &[Row], through_index: &[Row]) {
    let missing: Vec<&Row> = batch
        .iter()
        .filter(|r| through_index.binary_search(r).is_err())
        .collect();
    let extra: Vec<&Row> = through_index
        .iter()
        .filter(|r| batch.binary_search(r).is_err())
        .collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "{} rows of {} differ; missing {:?}; extra {:?}",
        missing.len() + extra.len(),
        batch.len(),
        &missing[..missing.len().min(5)],
        &extra[..extra.len().min(5)]
    );
}

/// The archive as a CSV in `dir`, added to `dir/archive.db` (keeping passages) by the command.
fn archive_index(dir: &Path) -> PathBuf {
    let mut csv = csv::Writer::from_path(dir.join("archive.csv")).unwrap();
    csv.write_record(["id", "text"]).unwrap();
    for (id, text) in archive() {
        csv.write_record([id, text]).unwrap();
    }
    csv.flush().unwrap();
    let out = megashingle(dir)
        .args([
            "index",
            "add",
            "--db",
            "archive.db",
            "--passages",
            "archive.csv",
            "-q",
            "-o",
        ])
        .arg(dir.join("assignments.csv"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    dir.join("archive.db")
}

/// An article of ten sentences of its own with sentences `from..to` of the source inside.
fn article_with(own_seed: u64, from: usize, to: usize) -> String {
    let source = sentences(1, 12);
    let own = sentences(own_seed, 10);
    [&own[..5], &source[from..to], &own[5..]].concat().join(" ")
}

#[test]
fn the_command_lists_the_documents_a_text_reuses_and_prints_the_passages() {
    let dir = temp();
    archive_index(dir.path());
    std::fs::write(dir.path().join("article.txt"), article_with(4, 4, 7)).unwrap();
    let query = |extra: &[&str]| {
        let out = megashingle(dir.path())
            .args([
                "index",
                "query",
                "--db",
                "archive.db",
                "--reuse",
                "article.txt",
            ])
            .args(extra)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr_of(&out));
        out
    };
    let out = query(&[]);
    assert_eq!(
        stdout_of(&out),
        "doc_id,story_id,a_in_b,b_in_a,shared_words,passages,longest,jaccard\n\
         source,source,0.2308,0.2500,36,1,36,0.1298\n"
    );
    assert_eq!(
        stderr_of(&out),
        "megashingle: uniqueness 0.7692: 36 of the text's 156 words are in passages shared with 1 indexed document\n"
    );
    let out = query(&["--passages", "-q"]);
    let source = sentences(1, 12);
    let passage: String = source[4..7].join(" ").replace('.', "");
    assert_eq!(
        stdout_of(&out),
        format!(
            "source (story source): 36 shared words in 1 passage, the longest 36 words; a_in_b 0.2308, b_in_a 0.2500, jaccard 0.1298\n  - {passage}\n"
        )
    );
    assert_eq!(stderr_of(&out), "");
    // Without --reuse, the near-duplicates as before: the article is none of them.
    let out = megashingle(dir.path())
        .args(["index", "query", "--db", "archive.db", "article.txt"])
        .output()
        .unwrap();
    assert_eq!(stdout_of(&out), "doc_id,story_id,similarity,containment\n");
}

#[test]
fn many_texts_are_written_one_row_a_pair_and_the_index_is_left_as_it_was() {
    let dir = temp();
    let db = archive_index(dir.path());
    let before = std::fs::read(&db).unwrap();
    let texts = dir.path().join("texts");
    std::fs::create_dir(&texts).unwrap();
    // One reuses three sentences of the source, one four of the source and four of the
    // other, one quotes a sentence only.
    std::fs::write(texts.join("a.txt"), article_with(4, 4, 7)).unwrap();
    let both = [
        sentences(1, 12)[0..4].to_vec(),
        sentences(5, 6),
        sentences(2, 10)[3..7].to_vec(),
    ]
    .concat()
    .join(" ");
    std::fs::write(texts.join("b.txt"), both).unwrap();
    std::fs::write(texts.join("c.txt"), article_with(6, 2, 3)).unwrap();
    let out = megashingle(dir.path())
        .args([
            "index",
            "query",
            "--db",
            "archive.db",
            "--reuse",
            "texts",
            "-o",
            "rows.jsonl",
        ])
        .args(["--format", "jsonl"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let rows = std::fs::read_to_string(dir.path().join("rows.jsonl")).unwrap();
    let pairs: Vec<(String, String, u64)> = rows
        .lines()
        .map(|line| {
            let row: serde_json::Value = serde_json::from_str(line).unwrap();
            (
                row["doc_a"].as_str().unwrap().to_owned(),
                row["doc_b"].as_str().unwrap().to_owned(),
                row["shared_words"].as_u64().unwrap(),
            )
        })
        .collect();
    let pair = |a: &str, b: &str, n| (a.to_owned(), b.to_owned(), n);
    assert_eq!(
        pairs,
        [
            pair("a.txt", "source", 36),
            pair("b.txt", "other", 48),
            pair("b.txt", "source", 48)
        ]
    );
    assert!(
        stderr_of(&out).starts_with("megashingle: 3 texts queried, 2 of them share passages with indexed documents: 3 rows; 0 records skipped"),
        "{}",
        stderr_of(&out)
    );
    assert_eq!(
        std::fs::read(&db).unwrap(),
        before,
        "the index is unchanged"
    );
    // Without --reuse, -o is refused by the command line.
    let out = megashingle(dir.path())
        .args([
            "index",
            "query",
            "--db",
            "archive.db",
            "texts",
            "-o",
            "rows.csv",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
}

#[test]
fn an_index_made_without_passages_is_refused_with_what_to_do() {
    let dir = temp();
    let fixture = root().join("fixtures/index-format-1/index.db");
    std::fs::copy(&fixture, dir.path().join("old.db")).unwrap();
    std::fs::write(dir.path().join("t.txt"), sentences(1, 4).join(" ")).unwrap();
    let out = megashingle(dir.path())
        .args(["index", "query", "--db", "old.db", "--reuse", "t.txt"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert_eq!(
        stderr_of(&out).trim_end(),
        "megashingle: error: old.db: the index keeps no passages of its documents (index format \"megashingle-index 1\"), so reuse cannot be found through it; make an index that keeps them (format \"megashingle-index 6\") with `index add --passages` on its first add, or ask this one for near-duplicates only"
    );
    // An add keeps it an index of stories only (format 5), which is refused the same way.
    let night = root().join("fixtures/index-format-1/night-2.csv");
    let out = megashingle(dir.path())
        .args(["index", "add", "--db", "old.db", "-q", "-o", "a.csv"])
        .arg(&night)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let out = megashingle(dir.path())
        .args(["index", "query", "--db", "old.db", "--reuse", "t.txt"])
        .output()
        .unwrap();
    assert!(
        stderr_of(&out).contains(
            "the index keeps no passages of its documents (index format \"megashingle-index 5\")"
        ),
        "{}",
        stderr_of(&out)
    );
    let out = megashingle(dir.path())
        .args(["index", "stats", "--db", "old.db"])
        .output()
        .unwrap();
    assert!(stdout_of(&out)
        .contains("passages: not kept (the index was made without `index add --passages`)\n"));
    // It cannot begin to keep them: --passages on its add is refused, and nothing is added.
    let before = std::fs::read(dir.path().join("old.db")).unwrap();
    let out = megashingle(dir.path())
        .args([
            "index",
            "add",
            "--db",
            "old.db",
            "--passages",
            "-q",
            "-o",
            "b.csv",
        ])
        .arg(&night)
        .output()
        .unwrap();
    assert_eq!(
        stderr_of(&out).trim_end(),
        "megashingle: error: old.db: the index was made without passages (index format \"megashingle-index 5\") and cannot begin to keep them, as its documents have none; add to it without --passages, or make a new index with `index add --passages` on its first add"
    );
    assert_eq!(std::fs::read(dir.path().join("old.db")).unwrap(), before);
}

#[test]
fn a_new_index_keeps_passages_only_when_its_first_add_asks_and_then_on_every_add() {
    let dir = temp();
    let csv = |name: &str, rows: &[(String, String)]| {
        let mut csv = csv::Writer::from_path(dir.path().join(name)).unwrap();
        csv.write_record(["id", "text"]).unwrap();
        for (id, text) in rows {
            csv.write_record([id, text]).unwrap();
        }
        csv.flush().unwrap();
    };
    let documents = archive();
    csv("first.csv", &documents[..1]);
    csv("second.csv", &documents[1..]);
    let add = |db: &str, file: &str, passages: bool| {
        let mut command = megashingle(dir.path());
        command.args(["index", "add", "--db", db, file, "-q", "-o", "-"]);
        if passages {
            command.arg("--passages");
        }
        let out = command.output().unwrap();
        assert!(out.status.success(), "{}", stderr_of(&out));
        stdout_of(&out)
    };
    let format_of = |db: &str| {
        let out = megashingle(dir.path())
            .args(["index", "stats", "--db", db])
            .output()
            .unwrap();
        stdout_of(&out)
            .lines()
            .find(|l| l.starts_with("passages: "))
            .unwrap()
            .to_owned()
    };
    // Without --passages, an index of stories only; with it, passages from the first add on,
    // and the later add keeps them without being asked. The stories are the same.
    let plain = [
        add("plain.db", "first.csv", false),
        add("plain.db", "second.csv", false),
    ];
    let kept = [
        add("kept.db", "first.csv", true),
        add("kept.db", "second.csv", false),
    ];
    assert_eq!(plain, kept);
    assert_eq!(
        format_of("plain.db"),
        "passages: not kept (the index was made without `index add --passages`)"
    );
    assert!(
        format_of("kept.db").starts_with(&format!("passages: {} documents", documents.len())),
        "{}",
        format_of("kept.db")
    );
    let text = dir.path().join("t.txt");
    std::fs::write(&text, article_with(4, 4, 7)).unwrap();
    let reuse = |db: &str| {
        megashingle(dir.path())
            .args(["index", "query", "--db", db, "--reuse", "t.txt"])
            .output()
            .unwrap()
    };
    assert!(reuse("kept.db").status.success());
    assert!(stdout_of(&reuse("kept.db")).contains("\nsource,"));
    assert!(!reuse("plain.db").status.success());
    // --passages on an index that keeps them changes nothing.
    csv("third.csv", &[("late".into(), sentences(9, 8).join(" "))]);
    add("kept.db", "third.csv", true);
}
