//! A temporary file of shingle sets that cannot be read back, met by each pass that reads the
//! spilled sets through the library's facade: clustering, deduplication, the report's
//! "joined via" links and the join of an index add, and the passages phase of an add to an
//! index that keeps passages (whose texts are always on file). Each fails with the one error
//! of a spilled file (`Error::Spill`), gives nothing, and an index add leaves the index as it
//! was.
//!
//! The failure is made with the library's test seam, which fails every read of the file in
//! this process; the tests here run one after another (each holds [`SEAM`]), in a process of
//! their own.

use megashingle::corpus::set_store::fail_reads;
use megashingle::index::Index;
use megashingle::{Clusterer, Config, DedupConfig, Error, Plan, RunOptions};

/// Held by each test for as long as it runs: the seam fails the reads of every thread.
static SEAM: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A configuration whose shingle sets all go to the temporary file.
fn spilling() -> Config {
    let mut config = Config::default();
    config.cluster.set_memory_mb = 0;
    config
}

/// Stories of a few rewrites each, and texts of their own.
fn documents() -> Vec<(String, String)> {
    let words = |seed: u64, n: usize| -> Vec<String> {
        let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..n)
            .map(|_| {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                format!("w{}", (state >> 33) % 100_000)
            })
            .collect()
    };
    let mut docs = Vec::new();
    for story in 0..6 {
        let base = words(story, 80);
        for rewrite in 0..3 {
            let mut text = base.clone();
            text[10 + rewrite as usize] = format!("changed{rewrite}");
            docs.push((format!("s{story}-{rewrite}"), text.join(" ")));
        }
    }
    for alone in 0..5 {
        docs.push((format!("alone{alone}"), words(100 + alone, 60).join(" ")));
    }
    docs
}

/// The message of a failed spilled read, with the system's words left out.
fn assert_spill(error: &Error, pass: &str) {
    assert!(matches!(error, Error::Spill { .. }), "{pass}: {error:?}");
    let message = error.to_string();
    assert!(
        message.contains(": cannot write or read back the temporary file of shingle sets (")
            && message.contains("reading failed (a failure made by a test)")
            && message.ends_with("or raise cluster.set-memory-mb"),
        "{pass}: {message}"
    );
    assert_eq!(message.lines().count(), 1, "{pass}: {message}");
}

fn clusterer(config: &Config) -> Clusterer {
    let run = RunOptions {
        threads: 2,
        ..RunOptions::default()
    };
    let mut clusterer = Clusterer::with_options(config, run).unwrap();
    for (id, text) in documents() {
        clusterer.add(id, &text).unwrap();
    }
    clusterer
}

/// The index's export and statistics, which an add that fails must leave as they were.
fn state(index: &Index) -> (Vec<(String, String)>, u64, u64) {
    let rows = index.export().unwrap();
    let stats = index.stats().unwrap();
    (
        rows.into_iter().map(|r| (r.doc_id, r.story_id)).collect(),
        stats.documents,
        stats.merges,
    )
}

/// Adds `docs` to the index as one night; with `fail`, the reads of the temporary files fail
/// once the documents are sketched (their sets read back by the statistics passes), while
/// the add is prepared.
fn add_night(
    index: &mut Index,
    config: &Config,
    docs: &[(String, String)],
    fail: bool,
) -> Result<megashingle::index::AddReport, Error> {
    let mut night = index
        .begin_add(config, RunOptions::default(), false)
        .unwrap();
    for (id, text) in docs {
        night.add(id, text, None).unwrap();
    }
    night.sketched().unwrap();
    fail_reads(fail);
    let prepared = night.prepare();
    fail_reads(false);
    prepared.map(|p| p.commit().unwrap())
}

#[test]
fn a_spilled_set_that_cannot_be_read_back_fails_every_pass_that_reads_it() {
    let _alone = SEAM.lock().unwrap_or_else(|e| e.into_inner());
    let config = spilling();

    // Clustering.
    let clusters = clusterer(&config).finish().unwrap();
    let expected: Vec<String> = clusters
        .assignments()
        .map(|a| format!("{} {}", a.doc_id, a.cluster_id))
        .collect();
    assert!(
        expected.iter().any(|row| row.starts_with("s1-1 s1-0")),
        "rewrites cluster: {expected:?}"
    );
    let pending = clusterer(&config);
    fail_reads(true);
    let Err(error) = pending.finish() else {
        panic!("clustering fails")
    };
    fail_reads(false);
    assert_spill(&error, "cluster");

    // Deduplication, of a clustering whose sets read back.
    let dedup = DedupConfig::default();
    let kept = clusters.deduplicate(&dedup).unwrap().kept().count();
    assert!(kept < documents().len(), "duplicates are found");
    fail_reads(true);
    let Err(error) = clusters.deduplicate(&dedup) else {
        panic!("dedup fails")
    };
    fail_reads(false);
    assert_spill(&error, "dedup");

    // The report's links: which pair joined each document to its story.
    let (collection, clustering) = clusters.into_parts();
    let sets = collection.sets.as_ref().expect("sets spilled");
    assert!(sets.spilled());
    let via = |sets: &megashingle::corpus::set_store::SetStore| {
        sets.reading(0, |view| {
            megashingle::cluster::joined_via(
                &clustering.clusters,
                &clustering.links,
                &collection.sketches,
                view,
                &Plan::try_from(&config).unwrap(),
            )
        })
    };
    assert!(via(sets).unwrap().iter().any(Option::is_some));
    fail_reads(true);
    let failed = via(sets).map_err(Error::spill);
    fail_reads(false);
    let Err(error) = failed else {
        panic!("the links fail")
    };
    assert_spill(&error, "report");

    // The join of an index add: the night's sets are read by the join, before the commit.
    let dir = tempfile::tempdir().unwrap();
    let mut index = Index::open(dir.path().join("stories.db")).unwrap();
    // The first night founds the stories; the second brings two rewrites of each, which are
    // verified with each other from their sets, and texts of their own.
    let (first, second): (Vec<_>, Vec<_>) = documents()
        .into_iter()
        .partition(|(id, _)| id.ends_with("-0"));
    let mut night = index
        .begin_add(&config, RunOptions::default(), false)
        .unwrap();
    for (id, text) in &first {
        night.add(id, text, None).unwrap();
    }
    night.commit().unwrap();
    let before = state(&index);
    assert_eq!(before.1, 6);
    let add_rest = |index: &mut Index, fail: bool| add_night(index, &config, &second, fail);
    let Err(error) = add_rest(&mut index, true) else {
        panic!("the add fails")
    };
    assert_spill(&error, "index add");
    assert_eq!(state(&index), before, "the index is as it was");
    // The same add with reads that work joins the stories as they were left.
    let report = add_rest(&mut index, false).unwrap();
    assert_eq!(report.documents, documents().len() as u64);
    assert!(report.joined_existing > 0, "{report:?}");
}

#[test]
fn texts_that_cannot_be_read_back_fail_an_add_that_keeps_passages() {
    let _alone = SEAM.lock().unwrap_or_else(|e| e.into_inner());
    // Sets in memory: only the texts kept for the passages are on file.
    let config = Config::default();
    let dir = tempfile::tempdir().unwrap();
    let mut index = Index::open(dir.path().join("passages.db")).unwrap();
    index.keep_passages().unwrap();
    let (first, second): (Vec<_>, Vec<_>) = documents()
        .into_iter()
        .partition(|(id, _)| id.ends_with("-0"));
    let add = |index: &mut Index, docs: &[(String, String)], fail: bool| {
        add_night(index, &config, docs, fail)
    };
    add(&mut index, &first, false).unwrap();
    let before = state(&index);
    let Err(error) = add(&mut index, &second, true) else {
        panic!("the add fails")
    };
    assert_spill(&error, "index add with passages");
    assert_eq!(state(&index), before, "the index is as it was");
    let report = add(&mut index, &second, false).unwrap();
    assert_eq!(report.documents, documents().len() as u64);
    // The passages were written: a rewrite finds its story's other texts.
    let (id, text) = &second[0];
    let found = index.query_reuse(&config, text).unwrap();
    assert!(
        found.matches.iter().any(|m| m.doc_id != *id),
        "{id}: {found:?}"
    );
}
