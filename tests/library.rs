//! The library facade against the binary: documents added one by one to a `Clusterer` give,
//! row for row, the table `megashingle cluster` writes for the same documents, on the news
//! fixtures and (when `../shared` is beside the repository) on the dev benchmark.

use std::path::{Path, PathBuf};

use megashingle::{Clusterer, Config, Error, Status};

#[allow(dead_code)]
mod common;
use common::{dev_benchmark_docs, megashingle, stdout_of};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The shipped configuration, as the binary reads it in the crate root.
fn shipped() -> Config {
    Config::from_file(root().join("pipeline.toml")).expect("the shipped pipeline.toml")
}

/// The table as the binary prints it, made from the facade's assignments.
fn facade_table(config: &Config, documents: impl IntoIterator<Item = (String, String)>) -> String {
    let mut clusterer = Clusterer::new(config).expect("a clusterer");
    for (id, text) in documents {
        clusterer.add(id, &text).expect("a document");
    }
    let clusters = clusterer.finish().expect("the documents cluster");
    let mut table = String::from("doc_id,cluster_id,cluster_size,similarity,status\n");
    for a in clusters.assignments() {
        let similarity = a.similarity.map(|s| format!("{s:.4}")).unwrap_or_default();
        table.push_str(&format!(
            "{},{},{},{similarity},{}\n",
            a.doc_id, a.cluster_id, a.cluster_size, a.status
        ));
    }
    table
}

fn binary_table(input: &Path) -> String {
    let output = megashingle(&root())
        .args(["cluster", "--quiet"])
        .arg(input)
        .output()
        .expect("the binary runs");
    assert!(output.status.success(), "{output:?}");
    stdout_of(&output)
}

/// Every file under `dir`, with its id as the binary gives it: the path relative to `dir`.
fn files_under(dir: &Path) -> Vec<(String, String)> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_owned()];
    while let Some(folder) = pending.pop() {
        for entry in std::fs::read_dir(&folder).expect("a readable folder") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                pending.push(path);
            } else {
                let id = path.strip_prefix(dir).expect("under dir");
                let text = std::fs::read_to_string(&path).expect("a UTF-8 file");
                files.push((id.to_string_lossy().into_owned(), text));
            }
        }
    }
    files
}

#[test]
fn facade_gives_the_binary_table_on_the_news_fixtures() {
    let news = root().join("fixtures").join("news");
    let mut documents = files_under(&news);
    // Any order of adding gives the same table.
    documents.reverse();
    let table = facade_table(&shipped(), documents);
    assert_eq!(table, binary_table(&news));
    assert!(table.lines().count() > 40, "{table}");
}

/// The facade's table of a fixture of `fixtures/` clustered with `boilerplate.min-documents` 4
/// and `min-stories` 2 (thresholds a fixture of a few documents reaches), checked to be the
/// binary's table with the same settings.
fn small_fixture_table(name: &str) -> String {
    let input = root().join("fixtures").join(name);
    let mut reader = csv::Reader::from_path(&input).expect("the fixture reads");
    let documents: Vec<(String, String)> = reader
        .records()
        .map(|r| {
            let r = r.expect("a record");
            (r[0].to_owned(), r[1].to_owned())
        })
        .collect();
    let mut config = shipped();
    config.boilerplate.min_documents = 4;
    config.boilerplate.min_stories = 2;
    let table = facade_table(&config, documents);
    let output = megashingle(&root())
        .args(["cluster", "--quiet", "--set", "boilerplate.min-documents=4"])
        .args(["--set", "boilerplate.min-stories=2"])
        .arg(&input)
        .output()
        .expect("the binary runs");
    assert!(output.status.success(), "{output:?}");
    assert_eq!(stdout_of(&output), table);
    table
}

#[test]
fn wire_copies_kept_whole_leave_out_a_disclaimer_spread_across_stories() {
    // fixtures/README.md: two wire stories copied whole by four sites each, headline pages and
    // articles of their own, all under one disclaimer.
    let table = small_fixture_table("wire-copies.csv");
    let stories: Vec<(&str, &str)> = table
        .lines()
        .skip(1)
        .map(|row| {
            let mut fields = row.split(',');
            (fields.next().unwrap(), fields.next().unwrap())
        })
        .collect();
    let story_of = |id: &str| stories.iter().find(|s| s.0 == id).expect("a row").1;
    for id in ["w1-1", "w1-2", "w1-3"] {
        assert_eq!(story_of(id), story_of("w1-0"), "{table}");
    }
    for id in ["w2-1", "w2-2", "w2-3"] {
        assert_eq!(story_of(id), story_of("w2-0"), "{table}");
    }
    assert_ne!(story_of("w1-0"), story_of("w2-0"), "{table}");
    for id in ["head-0", "head-1", "head-2", "own-0"] {
        assert_eq!(story_of(id), id, "{table}");
    }
}

#[test]
fn rewrites_of_a_story_copied_by_many_documents_join_it() {
    // fixtures/README.md: a story copied whole by six sites, so that all its text is common,
    // and two rewrites that keep it and add a paragraph of their own.
    let table = small_fixture_table("running-story.csv");
    let story_of = |id: &str| {
        let row = table.lines().find(|row| row.starts_with(&format!("{id},")));
        row.expect("a row").split(',').nth(1).unwrap().to_owned()
    };
    for id in ["copy-1", "copy-5", "rewrite-0", "rewrite-1"] {
        assert_eq!(story_of(id), story_of("copy-0"), "{table}");
    }
    for id in ["other-0", "other-1"] {
        assert_eq!(story_of(id), id, "{table}");
    }
}

#[test]
fn facade_gives_the_binary_table_on_the_dev_benchmark() {
    let Some(docs) = dev_benchmark_docs("facade_gives_the_binary_table_on_the_dev_benchmark")
    else {
        return;
    };
    let mut reader = csv::Reader::from_path(&docs).expect("the benchmark reads");
    let headers = reader.headers().expect("a header").clone();
    let column = |name: &str| headers.iter().position(|h| h == name).expect("a column");
    let (id, text) = (column("id"), column("text"));
    let documents: Vec<(String, String)> = reader
        .records()
        .map(|r| {
            let r = r.expect("a record");
            (r[id].to_owned(), r[text].to_owned())
        })
        .collect();
    assert_eq!(facade_table(&shipped(), documents), binary_table(&docs));
}

#[test]
fn short_texts_and_errors_are_reported() {
    let config = Config::default();
    let mut clusterer = Clusterer::new(&config).unwrap();
    let err = clusterer
        .add("", "an id is needed for every text")
        .unwrap_err();
    assert!(matches!(err, Error::EmptyId { position: 1 }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "document 1 has an empty id; every document needs a non-empty, unique id"
    );
    clusterer.add("short", "two words").unwrap();
    let clusters = clusterer.finish().unwrap();
    let rows: Vec<_> = clusters.assignments().collect();
    assert_eq!(rows.len(), 1);
    assert_eq!(
        (rows[0].status, rows[0].similarity),
        (Status::TooShort, None)
    );
    assert_eq!(rows[0].status.to_string(), "too_short");

    let err = megashingle::compare(&config, "two words", "three more words").unwrap_err();
    assert_eq!(
        err.to_string(),
        "the first text has 2 words, fewer than the shingle size k = 3: it has no shingles, and two empty sets prove nothing; use a smaller shingle size (shingle.size) or a longer text"
    );
    let mut bad = Config::default();
    bad.shingle.size = 0;
    let err = Clusterer::new(&bad).err().expect("a bad configuration");
    assert!(matches!(err, Error::Config(_)), "{err:?}");
}

#[test]
fn duplicate_ids_are_dropped_with_a_warning_or_refused_when_strict() {
    use std::sync::{Arc, Mutex};
    #[derive(Default)]
    struct Warnings(Mutex<Vec<String>>);
    impl megashingle::Progress for Warnings {
        fn warn(&self, message: &str) {
            self.0.lock().unwrap().push(message.to_owned());
        }
    }
    let text = "one two three four five six seven eight nine ten";
    for strict in [false, true] {
        let warnings = Arc::new(Warnings::default());
        let options = megashingle::RunOptions {
            strict,
            progress: warnings.clone(),
            ..Default::default()
        };
        let mut clusterer = Clusterer::with_options(&Config::default(), options).unwrap();
        clusterer.add("x", text).unwrap();
        clusterer
            .add("x", "another text of the same id with words")
            .unwrap();
        let result = clusterer.finish();
        let expected =
            "document:2: duplicate id \"x\", first seen at document:1; ids must be unique";
        if strict {
            assert_eq!(result.unwrap_err().to_string(), expected);
        } else {
            let clusters = result.unwrap();
            assert_eq!(clusters.len(), 1);
            assert_eq!(clusters.summary().skipped, 1);
            assert_eq!(
                *warnings.0.lock().unwrap(),
                [format!("{expected}; record skipped")]
            );
        }
    }
}

#[test]
fn index_facade_adds_documents_night_by_night_and_finds_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("stories.db");
    let config = Config::default();
    let story =
        "the regional council approved the new budget for public transport on monday after \
                 three hours of debate about bus routes fares and the night service to the suburbs";
    let other =
        "a recipe for rye bread with flour water salt and a sourdough starter baked for an \
                 hour in a hot oven until the crust is dark and the loaf sounds hollow";
    {
        let mut index = megashingle::Index::open(&path).unwrap();
        let mut night = index
            .begin_add(&config, megashingle::RunOptions::default(), false)
            .unwrap();
        night.add("a", story, Some(1_700_000_000)).unwrap();
        night.add("b", other, None).unwrap();
        let report = night.commit().unwrap();
        assert_eq!(report.new_stories, 2);
    }
    let mut index = megashingle::Index::open_existing(&path).unwrap();
    let mut night = index
        .begin_add(&config, megashingle::RunOptions::default(), false)
        .unwrap();
    night
        .add("c", &format!("{story} and the mayor"), None)
        .unwrap();
    let report = night.commit().unwrap();
    assert_eq!((report.new_stories, report.joined_existing), (0, 1));
    assert_eq!(report.assignments[0].story_id, "a");
    let found = index.query(&config, story).unwrap();
    let ids: Vec<&str> = found.iter().map(|m| m.doc_id.as_str()).collect();
    assert_eq!(ids, ["a", "c"]);
    // Story by story, as `index export` writes them.
    let stories: Vec<(String, String)> = index
        .export()
        .unwrap()
        .into_iter()
        .map(|r| (r.doc_id, r.story_id))
        .collect();
    assert_eq!(
        stories,
        [("a", "a"), ("c", "a"), ("b", "b")].map(|(d, s)| (d.to_owned(), s.to_owned()))
    );
    // A document already indexed fails the add without upsert, and nothing changes.
    let mut night = index
        .begin_add(&config, megashingle::RunOptions::default(), false)
        .unwrap();
    night.add("b", other, None).unwrap();
    let err = night.commit().unwrap_err().to_string();
    assert!(err.contains("id \"b\" is already in the index"), "{err}");
    assert!(
        !err.contains("--"),
        "a library message names no flag: {err}"
    );
    assert_eq!(index.export().unwrap().len(), 3);
    drop(index);
    let missing = dir.path().join("none.db");
    let err = megashingle::Index::open_existing(&missing).err().unwrap();
    assert!(err.to_string().contains("none.db: no index there"), "{err}");
    assert!(!err.to_string().contains("megashingle index"), "{err}");
}

/// Each way an index cannot be opened is its own variant of `IndexError`, with the message
/// the command line shows (less the command line's hints).
#[test]
fn index_errors_are_typed() {
    use megashingle::index::Foreign;
    use megashingle::IndexError;
    let dir = tempfile::tempdir().unwrap();
    let index_error = |result: Result<megashingle::Index, Error>| match result {
        Err(Error::Index(e)) => e,
        Err(other) => panic!("not an index error: {other}"),
        Ok(_) => panic!("opened"),
    };

    let missing = dir.path().join("none.db");
    let e = index_error(megashingle::Index::open_existing(&missing));
    assert!(
        matches!(&e, IndexError::Missing { path } if path.ends_with("none.db")),
        "{e:?}"
    );

    let path = dir.path().join("stories.db");
    let held = megashingle::Index::open(&path).unwrap();
    let e = index_error(megashingle::Index::open(&path));
    let shown = path.display().to_string();
    match &e {
        IndexError::Locked {
            path,
            holder: Some(holder),
        } => {
            assert_eq!(path, &shown);
            assert!(
                holder.starts_with("megashingle a library call (pid "),
                "{holder}"
            );
        }
        other => panic!("not locked: {other:?}"),
    }
    assert!(
        e.to_string().starts_with(&format!(
            "{shown}: index is locked by megashingle a library call"
        )),
        "{e}"
    );
    assert!(e
        .to_string()
        .ends_with("; wait for it to finish (nothing was changed)"));
    drop(held);

    let notes = dir.path().join("notes.txt");
    std::fs::write(&notes, "these are my notes, not an index\n").unwrap();
    let e = index_error(megashingle::Index::open(&notes));
    assert!(
        matches!(
            &e,
            IndexError::NotAnIndex {
                what: Foreign::NotRedb,
                ..
            }
        ),
        "{e:?}"
    );
    let e = index_error(megashingle::Index::open(dir.path()));
    assert!(
        matches!(
            &e,
            IndexError::NotAnIndex {
                what: Foreign::Folder,
                ..
            }
        ),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        format!("{}: a folder, not an index file", dir.path().display())
    );

    let newer = dir.path().join("newer.db");
    {
        let db = redb::Database::create(&newer).unwrap();
        let txn = db.begin_write().unwrap();
        let meta: redb::TableDefinition<&str, &str> = redb::TableDefinition::new("meta");
        txn.open_table(meta)
            .unwrap()
            .insert("format", "megashingle-index 9")
            .unwrap();
        txn.commit().unwrap();
    }
    let e = index_error(megashingle::Index::open(&newer));
    assert!(
        matches!(&e, IndexError::UnknownFormat { format, .. } if format == "megashingle-index 9"),
        "{e:?}"
    );

    let truncated = dir.path().join("truncated.db");
    {
        let mut index = megashingle::Index::open(&truncated).unwrap();
        let mut night = index
            .begin_add(
                &Config::default(),
                megashingle::RunOptions::default(),
                false,
            )
            .unwrap();
        night
            .add(
                "a",
                "one two three four five six seven eight nine ten",
                None,
            )
            .unwrap();
        night.commit().unwrap();
    }
    let bytes = std::fs::read(&truncated).unwrap();
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    let e = index_error(megashingle::Index::open(&truncated));
    match &e {
        IndexError::Damaged { path, .. } => assert!(path.ends_with("truncated.db"), "{path}"),
        other => panic!("not damaged: {other:?}"),
    }
    assert!(e.to_string().ends_with("restore it from a copy"), "{e}");
}

/// The fenced Rust block after `marker` in `text`, each line with `prefix` taken off.
fn rust_block(text: &str, marker: &str, prefix: &str) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(|l| l.strip_prefix(prefix).unwrap_or(l))
        .collect();
    let start = lines
        .iter()
        .position(|l| l.contains(marker))
        .expect("the marker");
    let open = start
        + lines[start..]
            .iter()
            .position(|l| l.trim_start().starts_with("```"))
            .unwrap();
    let close = open
        + 1
        + lines[open + 1..]
            .iter()
            .position(|l| l.trim_start().starts_with("```"))
            .unwrap();
    lines[open + 1..close]
        .iter()
        .map(|l| l.trim_end())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_readme_library_example_is_the_crate_doctest() {
    // The crate's doctest runs the example; the README shows the same lines.
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let lib = std::fs::read_to_string(root().join("src/lib.rs")).unwrap();
    let shown = rust_block(&readme, "## Library", "");
    let tested = rust_block(&lib, "megashingle finds", "//! ");
    assert_eq!(shown, tested);
    assert!(shown.contains("Clusterer::new(&config)?"), "{shown}");
}

#[test]
fn a_cancelled_run_stops_with_one_error_and_changes_no_index() {
    let words = |seed: usize| -> String {
        (0..60)
            .map(|i| format!("w{}", (seed * 7 + i * 13) % 997))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let cancel = megashingle::Cancel::new();
    let options = megashingle::RunOptions {
        cancel: cancel.clone(),
        ..megashingle::RunOptions::default()
    };
    let mut clusterer =
        megashingle::Clusterer::with_options(&Config::default(), options.clone()).unwrap();
    for i in 0..500 {
        clusterer.add(format!("d{i}"), &words(i)).unwrap();
    }
    // Cancelled from another thread while documents are in work, as a signal handler does.
    std::thread::scope(|s| {
        s.spawn(|| cancel.cancel());
    });
    let err = clusterer.finish().unwrap_err();
    assert!(matches!(err, megashingle::Error::Cancelled), "{err}");
    assert_eq!(err.to_string(), "cancelled; nothing was written");
    // Documents added after the token is cancelled are not taken in.
    let mut clusterer =
        megashingle::Clusterer::with_options(&Config::default(), options.clone()).unwrap();
    clusterer.add("late", &words(1)).unwrap();
    assert!(matches!(
        clusterer.finish(),
        Err(megashingle::Error::Cancelled)
    ));

    // An add to an index that is cancelled commits nothing, whether or not the index keeps
    // passages (written on a thread of their own beside the stories).
    for passages in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("stories.db");
        let mut index = megashingle::Index::open(&path).unwrap();
        if passages {
            index.keep_passages().unwrap();
        }
        let mut night = index
            .begin_add(
                &Config::default(),
                megashingle::RunOptions::default(),
                false,
            )
            .unwrap();
        night.add("a", &words(3), None).unwrap();
        night.commit().unwrap();
        let before = index.export().unwrap().len();
        let mut night = index
            .begin_add(&Config::default(), options.clone(), false)
            .unwrap();
        night.add("b", &words(4), None).unwrap();
        assert!(matches!(night.commit(), Err(megashingle::Error::Cancelled)));
        assert_eq!(index.export().unwrap().len(), before);
        if passages {
            let found = index.query_reuse(&Config::default(), &words(4)).unwrap();
            assert!(found.matches.is_empty(), "{found:?}");
        }
    }
}
