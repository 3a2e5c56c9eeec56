//! Integration tests of `megashingle index` (add, query, export, merges, stats, remove) through
//! the binary: story ids that stay the same across nights and new stories named after their
//! smallest document id; two stories merged into the older one by a new article that joins
//! them, and the merge recorded; an id added twice (refused, or replaced with `--upsert`); the
//! lock on `<db>.lock` (held by the test, and by a second real process); foreign, damaged and
//! missing index files; a configuration whose sketches cannot be compared; `query`, which
//! finds an indexed text and changes nothing; retention with `remove --before` and `--ids`
//! and bad times in the input; agreement with batch `cluster` on the dev benchmark split into
//! two nights, and the size of the index per document; boilerplate found by each add kept in
//! the index; an index made by a megashingle of format 1, read and moved on by its next add;
//! and `kill -9` during an add, which must leave the index exactly as it was before the add or
//! as a completed add leaves it.
//!
//! The texts are made of blocks of pseudo-random words (a small LCG over syllables), so that
//! distinct blocks share no shingles and the similarity of two texts is set by the blocks they
//! share. Every command runs in a temporary directory (no pipeline.toml there), so the
//! built-in defaults apply. A failing command must print one line `megashingle: error: ...`
//! and exit 2 (nothing written); a command that finished but skipped something exits 1.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::{Seek, Write};
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use tempfile::TempDir;

mod common;
use common::{
    dev_benchmark_docs, megashingle, single_error_line, stderr_lines, stderr_of, stdout_of, temp,
    BIN,
};

const ASSIGNMENT_HEADER: [&str; 5] = ["doc_id", "story_id", "new_story", "similarity", "status"];
const EXPORT_HEADER: [&str; 4] = ["doc_id", "story_id", "story_size", "added_at"];
const MERGES_HEADER: [&str; 5] = [
    "merged_at",
    "absorbed_story",
    "absorbed_size",
    "surviving_story",
    "via_doc",
];
const QUERY_HEADER: [&str; 4] = ["doc_id", "story_id", "similarity", "containment"];

// ---------------------------------------------------------------------------------------------
// Texts: blocks of pseudo-random words

/// A 64-bit LCG (Knuth's MMIX constants); its high bits pick syllables.
struct Lcg(u64);

impl Lcg {
    fn new(seed: u64) -> Lcg {
        let mut lcg = Lcg(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x2545_F491_4F6C_DD1D);
        lcg.next();
        lcg
    }

    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }

    /// A word of 2 to 4 consonant-vowel syllables: about 4 × 10^7 words, so two blocks of a
    /// few hundred words share no 3-word shingle.
    fn word(&mut self) -> String {
        const CONSONANTS: &[u8] = b"bcdfghklmnprstvz";
        const VOWELS: &[u8] = b"aeiou";
        let syllables = 2 + self.next() % 3;
        let mut word = String::new();
        for _ in 0..syllables {
            let r = self.next();
            word.push(CONSONANTS[(r % 16) as usize] as char);
            word.push(VOWELS[((r / 16) % 5) as usize] as char);
        }
        word
    }
}

/// `n` pseudo-random words, the same for the same seed.
fn block(seed: u64, n: usize) -> Vec<String> {
    let mut lcg = Lcg::new(seed);
    (0..n).map(|_| lcg.word()).collect()
}

/// The words of several blocks as one text.
fn text(blocks: &[&[String]]) -> String {
    blocks
        .iter()
        .flat_map(|b| b.iter())
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(" ")
}

/// `words` with every `every`-th word (from the `offset`-th) replaced by a new word: a rewrite.
/// Each replaced word changes the 3 shingles that hold it.
fn rewrite(words: &[String], every: usize, offset: usize, seed: u64) -> String {
    let mut lcg = Lcg::new(seed ^ 0xDEAD_BEEF);
    words
        .iter()
        .enumerate()
        .map(|(i, w)| {
            if i % every == offset % every {
                lcg.word()
            } else {
                w.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

// ---------------------------------------------------------------------------------------------
// Running the binary and reading its tables

fn write(dir: &Path, name: &str, content: impl AsRef<[u8]>) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, content).expect("write a test input");
    path
}

/// A CSV of `header` and `rows`, written with proper quoting.
fn csv_bytes<R, F>(header: &[&str], rows: impl IntoIterator<Item = R>) -> Vec<u8>
where
    R: IntoIterator<Item = F>,
    F: AsRef<[u8]>,
{
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.write_record(header).unwrap();
    for row in rows {
        writer.write_record(row).unwrap();
    }
    writer.into_inner().unwrap()
}

/// An `id,text` CSV.
fn docs_csv(docs: &[(String, String)]) -> Vec<u8> {
    csv_bytes(
        &["id", "text"],
        docs.iter().map(|(id, text)| [id.as_str(), text.as_str()]),
    )
}

/// The rows of a CSV table, checking its header.
fn parse_csv(text: &str, header: &[&str]) -> Vec<Vec<String>> {
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let found: Vec<String> = reader
        .headers()
        .expect("a header row")
        .iter()
        .map(str::to_owned)
        .collect();
    assert_eq!(found, header, "header of\n{text}");
    reader
        .records()
        .map(|r| {
            let r = r.expect("a well-formed row");
            assert_eq!(r.len(), header.len(), "row {r:?}");
            r.iter().map(str::to_owned).collect()
        })
        .collect()
}

/// One row of an `index add` assignments table.
#[derive(Debug, Clone, PartialEq)]
struct Assignment {
    doc_id: String,
    story_id: String,
    new_story: bool,
    similarity: Option<f64>,
    status: String,
}

fn parse_assignments(text: &str) -> BTreeMap<String, Assignment> {
    let mut out = BTreeMap::new();
    for r in parse_csv(text, &ASSIGNMENT_HEADER) {
        let a = Assignment {
            doc_id: r[0].clone(),
            story_id: r[1].clone(),
            new_story: match r[2].as_str() {
                "true" => true,
                "false" => false,
                other => panic!("new_story {other:?} in {r:?}"),
            },
            similarity: (!r[3].is_empty()).then(|| r[3].parse().expect("similarity is a number")),
            status: r[4].clone(),
        };
        if let Some(s) = a.similarity {
            assert!((0.0..=1.0).contains(&s), "similarity out of range: {a:?}");
        }
        assert!(
            out.insert(a.doc_id.clone(), a.clone()).is_none(),
            "{} assigned twice",
            a.doc_id
        );
    }
    out
}

/// One row of `index export`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Exported {
    doc_id: String,
    story_id: String,
    story_size: usize,
    added_at: String,
}

impl Exported {
    /// The row's document, story and story size.
    fn placement(&self) -> (&str, &str, usize) {
        (&self.doc_id, &self.story_id, self.story_size)
    }
}

/// An index file in a temporary directory, and the commands on it.
struct Index {
    dir: TempDir,
    db: PathBuf,
}

impl Index {
    fn new() -> Index {
        let dir = temp();
        let db = dir.path().join("stories.db");
        Index { dir, db }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn db_arg(&self) -> String {
        self.db.display().to_string()
    }

    fn write(&self, name: &str, content: impl AsRef<[u8]>) -> PathBuf {
        write(self.path(), name, content)
    }

    /// `index add --db DB -q ARGS...`, the exit code checked; its output.
    fn add(&self, args: &[&str], code: i32) -> Output {
        let out = megashingle(self.path())
            .args(["index", "add", "--db", &self.db_arg(), "-q"])
            .args(args)
            .output()
            .expect("run megashingle");
        assert_eq!(
            out.status.code(),
            Some(code),
            "index add {args:?}: stderr {}",
            stderr_of(&out)
        );
        out
    }

    /// `index add` of `docs` (written to `name`), which must succeed: the assignments.
    fn add_docs(&self, name: &str, docs: &[(String, String)]) -> BTreeMap<String, Assignment> {
        let input = self.write(name, docs_csv(docs));
        let out = self.add(&[input.to_str().unwrap()], 0);
        assert_eq!(stderr_of(&out), "", "-q prints nothing on success");
        parse_assignments(&stdout_of(&out))
    }

    /// Any other index command (`index SUB --db DB ARGS...`).
    /// Adds `docs` as file `name` with `--timings`; the indexed documents it examined and
    /// loaded, as it prints them.
    fn add_counting(&self, name: &str, docs: &[(String, String)]) -> (usize, usize) {
        let input = self.write(name, docs_csv(docs));
        let out = self.run("add", &[input.to_str().unwrap(), "--timings", "-q"]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
        let lines = stderr_lines(&out);
        lines
            .iter()
            .find_map(|line| {
                let (examined, rest) = line
                    .strip_prefix("megashingle: timings: ")?
                    .split_once(" indexed documents examined (found in the postings of the added documents' keys), ")?;
                let loaded = rest.strip_suffix(
                    " loaded (the strongest link of each added document into each story, and those stories' representatives)",
                )?;
                Some((examined.parse::<usize>().ok()?, loaded.parse::<usize>().ok()?))
            })
            .unwrap_or_else(|| panic!("no count of examined and loaded documents: {lines:?}"))
    }

    fn run(&self, sub: &str, args: &[&str]) -> Output {
        megashingle(self.path())
            .args(["index", sub, "--db", &self.db_arg()])
            .args(args)
            .output()
            .expect("run megashingle")
    }

    /// `index export` as text; it must succeed.
    fn export_text(&self) -> String {
        let out = self.run("export", &[]);
        assert_eq!(out.status.code(), Some(0), "export: {}", stderr_of(&out));
        stdout_of(&out)
    }

    /// `index export`, parsed and checked: every document once, and each row's story size
    /// equal to the number of rows of its story.
    fn export(&self) -> Vec<Exported> {
        let rows: Vec<Exported> = parse_csv(&self.export_text(), &EXPORT_HEADER)
            .into_iter()
            .map(|r| Exported {
                doc_id: r[0].clone(),
                story_id: r[1].clone(),
                story_size: r[2].parse().expect("story_size is a number"),
                added_at: r[3].clone(),
            })
            .collect();
        let mut seen = BTreeSet::new();
        let mut sizes: BTreeMap<&str, usize> = BTreeMap::new();
        for row in &rows {
            assert!(seen.insert(&row.doc_id), "{} exported twice", row.doc_id);
            *sizes.entry(&row.story_id).or_default() += 1;
            assert!(
                row.added_at.ends_with('Z') && row.added_at.len() == 20,
                "added_at is RFC 3339 UTC: {row:?}"
            );
        }
        for row in &rows {
            assert_eq!(
                row.story_size,
                sizes[row.story_id.as_str()],
                "story size of {row:?}"
            );
        }
        rows
    }

    /// doc_id → story_id.
    fn stories(&self) -> BTreeMap<String, String> {
        self.export()
            .into_iter()
            .map(|r| (r.doc_id, r.story_id))
            .collect()
    }

    fn bytes(&self) -> Vec<u8> {
        std::fs::read(&self.db).expect("read the index file")
    }

    /// A number from `index stats` (`documents: N`, `stories: N ...`, `merges: N`).
    fn stat(&self, name: &str) -> u64 {
        let out = self.run("stats", &[]);
        assert_eq!(out.status.code(), Some(0), "stats: {}", stderr_of(&out));
        let text = stdout_of(&out);
        let line = text
            .lines()
            .find(|l| l.starts_with(&format!("{name}: ")))
            .unwrap_or_else(|| panic!("no {name} in\n{text}"));
        line[name.len() + 2..]
            .split_whitespace()
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no number in {line}"))
    }
}

/// The partition of a doc → story map: sets of documents.
fn partition(stories: &BTreeMap<String, String>) -> BTreeSet<BTreeSet<String>> {
    let mut groups: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for (doc, story) in stories {
        groups.entry(story).or_default().insert(doc.clone());
    }
    groups.into_values().collect()
}

fn set_of(ids: &[&str]) -> BTreeSet<String> {
    ids.iter().map(|s| s.to_string()).collect()
}

/// A document: id and text.
type Doc = (String, String);

fn doc(id: &str, text: String) -> Doc {
    (id.to_owned(), text)
}

// ---------------------------------------------------------------------------------------------
// Two nights: stable story ids, new stories, export

/// Night 1: four stories (two of them with a near copy), with a rewrite of three of them in
/// night 2, and two stories that only night 2 has.
fn two_nights() -> (Vec<Doc>, Vec<Doc>) {
    let s1 = block(1, 200);
    let s2 = block(2, 250);
    let s3 = block(3, 180);
    let s4 = block(4, 300);
    let s5 = block(5, 220);
    let s6 = block(6, 160);
    let night1 = vec![
        doc("s1-a", text(&[&s1])),
        doc("s1-b", rewrite(&s1, 25, 3, 11)),
        doc("s2-a", text(&[&s2])),
        doc("s3-b", rewrite(&s3, 20, 7, 31)),
        doc("s3-a", text(&[&s3])),
        doc("s4-a", text(&[&s4])),
    ];
    let night2 = vec![
        // Rewrites of night-1 stories: one word in 12 (s1), 15 (s2), 10 (s3) changed.
        doc("t1-r", rewrite(&s1, 12, 5, 12)),
        doc("t2-r", rewrite(&s2, 15, 2, 22)),
        doc("t3-r", rewrite(&s3, 10, 1, 32)),
        // A story only night 2 has, its larger id first in the file.
        doc("t5-b", rewrite(&s5, 20, 4, 52)),
        doc("t5-a", text(&[&s5])),
        // And a single new document.
        doc("t6", text(&[&s6])),
    ];
    (night1, night2)
}

#[test]
fn two_nights_keep_story_ids_and_name_new_stories_after_their_smallest_id() {
    let index = Index::new();
    let (night1, night2) = two_nights();

    // Night 1: every story is new, named after its smallest document id.
    let first = index.add_docs("night1.csv", &night1);
    assert_eq!(
        first.keys().collect::<Vec<_>>(),
        ["s1-a", "s1-b", "s2-a", "s3-a", "s3-b", "s4-a"],
        "one assignment per document, in id order"
    );
    let expected1 = [
        ("s1-a", "s1-a"),
        ("s1-b", "s1-a"),
        ("s2-a", "s2-a"),
        ("s3-a", "s3-a"),
        ("s3-b", "s3-a"),
        ("s4-a", "s4-a"),
    ];
    for (doc, story) in expected1 {
        let a = &first[doc];
        assert_eq!(a.story_id, story, "{a:?}");
        assert!(a.new_story, "night 1 makes every story: {a:?}");
        assert_eq!(a.status, "ok", "{a:?}");
        assert!(a.similarity.is_some(), "{a:?}");
    }
    let stories1 = index.stories();
    assert_eq!(
        stories1,
        expected1
            .iter()
            .map(|(d, s)| (d.to_string(), s.to_string()))
            .collect()
    );

    // Night 2, written with -o.
    let input = index.write("night2.csv", docs_csv(&night2));
    let out = index.add(&[input.to_str().unwrap(), "-o", "assigned.csv"], 0);
    assert_eq!(stdout_of(&out), "", "with -o nothing goes to stdout");
    let assigned = std::fs::read_to_string(index.path().join("assigned.csv")).unwrap();
    assert_eq!(
        assigned.lines().next(),
        Some("doc_id,story_id,new_story,similarity,status")
    );
    let second = parse_assignments(&assigned);
    assert_eq!(
        second.keys().collect::<Vec<_>>(),
        ["t1-r", "t2-r", "t3-r", "t5-a", "t5-b", "t6"]
    );
    // Rewrites join the night-1 stories, which keep their ids.
    for (doc, story) in [("t1-r", "s1-a"), ("t2-r", "s2-a"), ("t3-r", "s3-a")] {
        let a = &second[doc];
        assert_eq!(a.story_id, story, "{a:?}");
        assert!(!a.new_story, "{a:?}");
        assert_eq!(a.status, "ok", "{a:?}");
        let similarity = a.similarity.expect("a similarity");
        assert!(
            (0.3..1.0).contains(&similarity),
            "a rewrite is similar to its story's representative, not identical: {a:?}"
        );
    }
    // New stories are named after their smallest document id.
    for (doc, story) in [("t5-a", "t5-a"), ("t5-b", "t5-a"), ("t6", "t6")] {
        let a = &second[doc];
        assert_eq!(a.story_id, story, "{a:?}");
        assert!(a.new_story, "{a:?}");
        assert_eq!(a.status, "ok", "{a:?}");
    }
    assert_eq!(
        second["t6"].similarity,
        Some(1.0),
        "alone: its own representative"
    );

    // The export: every document of both nights once, the night-1 ids unchanged.
    let stories2 = index.stories();
    assert_eq!(stories2.len(), night1.len() + night2.len());
    for (doc, story) in &stories1 {
        assert_eq!(&stories2[doc], story, "night 1's story of {doc} changed");
    }
    for (doc, a) in &second {
        assert_eq!(
            &stories2[doc], &a.story_id,
            "export and assignment of {doc}"
        );
    }
    let expected_partition: BTreeSet<BTreeSet<String>> = [
        set_of(&["s1-a", "s1-b", "t1-r"]),
        set_of(&["s2-a", "t2-r"]),
        set_of(&["s3-a", "s3-b", "t3-r"]),
        set_of(&["s4-a"]),
        set_of(&["t5-a", "t5-b"]),
        set_of(&["t6"]),
    ]
    .into_iter()
    .collect();
    assert_eq!(partition(&stories2), expected_partition);
    // Each night's documents were added at one time, night 2 not before night 1.
    let export = index.export();
    let added = |prefix: char| -> BTreeSet<String> {
        export
            .iter()
            .filter(|r| r.doc_id.starts_with(prefix))
            .map(|r| r.added_at.clone())
            .collect()
    };
    let (at1, at2) = (added('s'), added('t'));
    assert_eq!((at1.len(), at2.len()), (1, 1), "{export:#?}");
    assert!(at1.first() <= at2.first());
    assert_eq!(index.stat("documents"), 12);
    assert_eq!(index.stat("stories"), 6);
    assert_eq!(index.stat("merges"), 0);
}

#[test]
fn the_timings_of_an_add_count_the_indexed_documents_it_examined_and_loaded() {
    let index = Index::new();
    let (night1, night2) = two_nights();
    index.add_docs("night1.csv", &night1);
    let (examined, loaded) = index.add_counting("night2.csv", &night2);
    // Night 2 joins stories of night 1, whose documents are candidates; not all are.
    assert!(
        loaded > 0 && examined < night1.len(),
        "{examined} examined, {loaded} loaded of {}",
        night1.len()
    );
}

// ---------------------------------------------------------------------------------------------
// A new article that joins two stories

#[test]
fn boilerplate_found_by_each_add_is_kept_and_only_new_shingles_are_added() {
    // 40 documents of their own, each with a shared 50-word template: its 48 shingles are in
    // more than `boilerplate.min-documents` (30) documents. The second night repeats it and
    // brings a second template.
    let first_template = block(900, 50);
    let second_template = block(901, 50);
    let night = |start: u64, templates: &[&[String]]| -> Vec<Doc> {
        (start..start + 40)
            .map(|i| {
                let own = block(i, 200);
                let mut blocks: Vec<&[String]> = vec![&own];
                blocks.extend_from_slice(templates);
                doc(&format!("d{i:03}"), text(&blocks))
            })
            .collect()
    };
    let index = Index::new();
    index.add_docs("n1.csv", &night(0, &[&first_template]));
    let first = index.stat("boilerplate shingles");
    assert!((48..60).contains(&first), "{first}");
    let second_night = night(100, &[&first_template, &second_template]);
    let placed = index.add_docs("n2.csv", &second_night);
    let second = index.stat("boilerplate shingles");
    assert!(
        (48..60).contains(&(second - first)),
        "{first} then {second}"
    );
    // The templates make no story: every document of the second night is a story of its own.
    assert!(placed.values().all(|a| a.new_story), "{placed:?}");
}

#[test]
fn a_new_article_joining_two_stories_merges_them_into_the_older() {
    // a1 = X+Y and a2 = Y+Z share the block Y: about 98 of the 298 distinct 3-shingles of the
    // two, a Jaccard of about 0.33, below cluster.min-similarity (0.35), and a containment
    // of about 0.5, below cluster.min-containment (0.8), so night 1 keeps them apart. m =
    // X+Y+Z holds each of them whole (Jaccard about 0.66 with each), so it joins both.
    let (x, y, z) = (block(101, 100), block(102, 100), block(103, 100));
    let index = Index::new();
    let night1 = [doc("a1", text(&[&x, &y])), doc("a2", text(&[&y, &z]))];
    let first = index.add_docs("night1.csv", &night1);
    assert_eq!(first["a1"].story_id, "a1", "{first:?}");
    assert_eq!(
        first["a2"].story_id, "a2",
        "a1 and a2 stay apart: {first:?}"
    );
    assert!(first["a1"].new_story && first["a2"].new_story);
    let merges = index.run("merges", &[]);
    assert_eq!(merges.status.code(), Some(0), "{}", stderr_of(&merges));
    assert!(parse_csv(&stdout_of(&merges), &MERGES_HEADER).is_empty());

    let second = index.add_docs("night2.csv", &[doc("m", text(&[&x, &y, &z]))]);
    let m = &second["m"];
    assert_eq!(m.story_id, "a1", "the older story survives: {m:?}");
    assert!(!m.new_story, "{m:?}");
    assert_eq!(m.status, "ok");

    let merges = index.run("merges", &[]);
    assert_eq!(merges.status.code(), Some(0), "{}", stderr_of(&merges));
    let rows = parse_csv(&stdout_of(&merges), &MERGES_HEADER);
    assert_eq!(rows.len(), 1, "{rows:?}");
    let row = &rows[0];
    assert_eq!(&row[1..], ["a2", "1", "a1", "m"], "{row:?}");
    assert!(
        row[0].ends_with('Z') && row[0].len() == 20,
        "merged_at: {row:?}"
    );

    let export = index.export();
    assert_eq!(
        export.iter().map(Exported::placement).collect::<Vec<_>>(),
        [("a1", "a1", 3), ("a2", "a1", 3), ("m", "a1", 3)]
    );
    assert_eq!(
        added_at_of(&export, "m"),
        row[0],
        "the merge is dated by the add that made it"
    );
    assert_eq!(index.stat("stories"), 1);
    assert_eq!(index.stat("merges"), 1);
}

fn added_at_of(export: &[Exported], doc: &str) -> String {
    export
        .iter()
        .find(|r| r.doc_id == doc)
        .map(|r| r.added_at.clone())
        .unwrap_or_else(|| panic!("{doc} not exported"))
}

// ---------------------------------------------------------------------------------------------
// Adding an id that is already indexed

#[test]
fn re_adding_an_indexed_id_fails_and_changes_nothing_unless_upsert() {
    let index = Index::new();
    let (night1, _) = two_nights();
    index.add_docs("night1.csv", &night1);
    let export_before = index.export_text();

    // s1-b again (still a rewrite of s1-a), with a document that is not indexed yet.
    let s1 = block(1, 200);
    let again = [
        doc("new-1", text(&[&block(7, 200)])),
        doc("s1-b", rewrite(&s1, 18, 2, 99)),
    ];
    let input = index.write("again.csv", docs_csv(&again));
    let out = index.add(&[input.to_str().unwrap()], 2);
    assert_eq!(stdout_of(&out), "", "no assignments");
    let line = single_error_line(&out);
    assert!(
        line.contains("\"s1-b\"") && line.contains("already in the index"),
        "{line}"
    );
    assert!(
        line.ends_with("or add it as a replacement of the indexed document (--upsert)"),
        "{line}"
    );
    assert_eq!(line.matches("upsert").count(), 1, "one hint: {line}");
    assert!(line.contains("again.csv:3"), "names the record: {line}");
    assert_eq!(index.export_text(), export_before, "the index changed");
    assert_eq!(index.stat("documents"), night1.len() as u64);

    // With --upsert the document is replaced: once in the export, its story the same size.
    let out = index.add(&[input.to_str().unwrap(), "--upsert"], 0);
    let assigned = parse_assignments(&stdout_of(&out));
    assert_eq!(assigned["s1-b"].status, "replaced", "{assigned:?}");
    assert_eq!(assigned["s1-b"].story_id, "s1-a", "{assigned:?}");
    assert!(!assigned["s1-b"].new_story, "{assigned:?}");
    assert_eq!(assigned["new-1"].status, "ok", "{assigned:?}");
    assert!(assigned["new-1"].new_story, "{assigned:?}");
    let export = index.export();
    assert_eq!(export.len(), night1.len() + 1);
    assert_eq!(
        export.iter().filter(|r| r.doc_id == "s1-b").count(),
        1,
        "{export:#?}"
    );
    let s1b = export.iter().find(|r| r.doc_id == "s1-b").unwrap();
    assert_eq!((s1b.story_id.as_str(), s1b.story_size), ("s1-a", 2));
    assert_eq!(index.stat("documents"), night1.len() as u64 + 1);
}

// ---------------------------------------------------------------------------------------------
// The lock

/// `<db>.lock`.
fn lock_path(db: &Path) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

#[test]
fn a_held_lock_refuses_add_and_changes_nothing() {
    let index = Index::new();
    let (night1, night2) = two_nights();
    index.add_docs("night1.csv", &night1);
    let (export_before, bytes_before) = (index.export_text(), index.bytes());

    // Hold the lock as another megashingle would, and say so in the file.
    let mut lock = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(lock_path(&index.db))
        .unwrap();
    lock.try_lock()
        .expect("the lock is free after a finished add");
    let holder = "megashingle index add (pid 12345) since 2026-11-30T06:00:00Z";
    lock.set_len(0).unwrap();
    lock.rewind().unwrap();
    writeln!(lock, "{holder}").unwrap();
    lock.flush().unwrap();

    let input = index.write("night2.csv", docs_csv(&night2));
    let out = index.add(&[input.to_str().unwrap()], 2);
    assert_eq!(stdout_of(&out), "");
    let line = single_error_line(&out);
    assert!(
        line.contains(&format!("index is locked by {holder}")),
        "{line}"
    );
    assert!(index.bytes() == bytes_before, "the index file changed");
    // Readers are locked out too.
    let out = index.run("export", &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(single_error_line(&out).contains("index is locked by"));

    // Released, the same add goes through.
    drop(lock);
    assert_eq!(index.export_text(), export_before);
    index.add(&[input.to_str().unwrap()], 0);
    assert_eq!(index.export().len(), night1.len() + night2.len());
}

#[test]
fn a_running_add_locks_out_a_second_process() {
    let index = Index::new();
    let (night1, night2) = two_nights();
    index.add_docs("night1.csv", &night1);

    // An add reading stdin takes the lock before it reads: it holds the lock until its
    // stdin is closed.
    let mut first = std::process::Command::new(BIN)
        .current_dir(index.path())
        .args(["index", "add", "--db", &index.db_arg(), "-q", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start megashingle");
    let holder = format!("megashingle index add (pid {}) since ", first.id());
    let deadline = Instant::now() + Duration::from_secs(30);
    while !std::fs::read_to_string(lock_path(&index.db)).is_ok_and(|t| t.contains(&holder)) {
        assert!(
            Instant::now() < deadline,
            "the first add did not take the lock"
        );
        assert!(first.try_wait().unwrap().is_none(), "the first add ended");
        std::thread::sleep(Duration::from_millis(20));
    }

    // A second add, and a reader, are refused, naming the first.
    let refused = many_docs("z", 5, 9);
    let input = index.write("refused.csv", docs_csv(&refused));
    let out = index.add(&[input.to_str().unwrap()], 2);
    let line = single_error_line(&out);
    assert!(
        line.contains(&format!("index is locked by {holder}")),
        "{line}"
    );
    let out = index.run("stats", &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(single_error_line(&out).contains(&holder));

    // The first add then finishes normally.
    let mut stdin = first.stdin.take().unwrap();
    stdin.write_all(&docs_csv(&night2)).unwrap();
    drop(stdin);
    let out = first.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    assert_eq!(parse_assignments(&stdout_of(&out)).len(), night2.len());
    // What the refused add would have added is not there.
    let stories = index.stories();
    assert_eq!(stories.len(), night1.len() + night2.len());
    assert!(refused.iter().all(|(id, _)| !stories.contains_key(id)));
}

// ---------------------------------------------------------------------------------------------
// Foreign, damaged and missing index files

/// A small real index.
fn small_index() -> Index {
    let index = Index::new();
    index.add_docs("night1.csv", &two_nights().0);
    index
}

#[test]
fn a_text_file_as_the_index_is_refused_untouched() {
    let index = Index::new();
    let notes = b"these are my notes, not an index\n".to_vec();
    std::fs::write(&index.db, &notes).unwrap();
    let input = index.write("night1.csv", docs_csv(&two_nights().0));
    let out = index.add(&[input.to_str().unwrap()], 2);
    let line = single_error_line(&out);
    assert!(line.contains("not a megashingle index"), "{line}");
    assert!(line.contains("stories.db"), "{line}");
    assert_eq!(index.bytes(), notes);
    for sub in ["export", "stats", "merges"] {
        let out = index.run(sub, &[]);
        assert_eq!(out.status.code(), Some(2), "{sub}");
        assert!(
            single_error_line(&out).contains("not a megashingle index"),
            "{sub}"
        );
    }
    assert_eq!(index.bytes(), notes);
}

const INVENTORY: redb::TableDefinition<&str, u64> = redb::TableDefinition::new("inventory");

/// A redb database of some other program at the index's path: one table, `inventory`.
fn foreign_redb(index: &Index) {
    let db = redb::Database::create(&index.db).unwrap();
    let txn = db.begin_write().unwrap();
    {
        let mut table = txn.open_table(INVENTORY).unwrap();
        table.insert("apples", 3).unwrap();
    }
    txn.commit().unwrap();
}

/// Runs `index add` and `index export` on a foreign redb database: both are refused.
fn assert_foreign_redb_is_refused(index: &Index) {
    let input = index.write("night1.csv", docs_csv(&two_nights().0));
    let out = index.add(&[input.to_str().unwrap()], 2);
    let line = single_error_line(&out);
    assert!(line.contains("not a megashingle index"), "{line}");
    assert!(line.contains("stories.db"), "{line}");
    let out = index.run("export", &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(single_error_line(&out).contains("not a megashingle index"));
}

#[test]
fn another_redb_database_as_the_index_is_refused() {
    use redb::{ReadableDatabase, ReadableTableMetadata, TableHandle};
    let index = Index::new();
    foreign_redb(&index);
    assert_foreign_redb_is_refused(&index);
    // It still holds its one table, as it was, and none of the index's.
    let db = redb::Database::open(&index.db).unwrap();
    let txn = db.begin_read().unwrap();
    let tables: Vec<String> = txn
        .list_tables()
        .unwrap()
        .map(|t| t.name().to_owned())
        .collect();
    assert_eq!(tables, ["inventory"]);
    let table = txn.open_table(INVENTORY).unwrap();
    assert_eq!(table.get("apples").unwrap().map(|v| v.value()), Some(3));
    assert_eq!(table.len().unwrap(), 1);
}

#[test]
fn another_redb_database_is_refused_without_writing_to_it() {
    let index = Index::new();
    foreign_redb(&index);
    let before = index.bytes();
    assert_foreign_redb_is_refused(&index);
    assert!(
        index.bytes() == before,
        "the foreign database was written to"
    );
}

/// Runs export, stats, query and add on a damaged index: none may panic, and add (which
/// opens the file for writing, and so reads all of its structure) must fail with one error
/// line naming the file. A reading command opens the file read-only and reads only the pages
/// it needs: it fails the same way when it meets the damage, and may finish when the damage
/// is elsewhere.
fn assert_damaged_is_refused(index: &Index, what: &str) {
    let input = index.write("more.csv", docs_csv(&two_nights().1));
    let runs: Vec<(&str, Output)> = vec![
        ("export", index.run("export", &[])),
        ("stats", index.run("stats", &[])),
        (
            "query",
            index.run("query", &["--text", &text(&[&block(1, 200)])]),
        ),
        (
            "add",
            megashingle(index.path())
                .args(["index", "add", "-q", "--db", &index.db_arg()])
                .arg(&input)
                .output()
                .unwrap(),
        ),
    ];
    for (sub, out) in runs {
        assert!(
            !stderr_of(&out).contains("panicked"),
            "{what}: index {sub} panicked: {}",
            stderr_of(&out)
        );
        if sub != "add" && out.status.code() == Some(0) {
            continue;
        }
        assert_eq!(
            out.status.code(),
            Some(2),
            "{what}: index {sub}: stderr {}",
            stderr_of(&out)
        );
        let line = single_error_line(&out);
        assert!(line.contains("stories.db"), "{what}: {sub}: {line}");
    }
}

#[test]
fn a_truncated_index_is_refused_with_one_line() {
    let index = small_index();
    let bytes = index.bytes();
    std::fs::write(&index.db, &bytes[..bytes.len() / 2]).unwrap();
    assert_damaged_is_refused(&index, "truncated to half");
}

#[test]
fn an_index_overwritten_in_the_middle_is_refused_with_one_line() {
    let index = small_index();
    let mut bytes = index.bytes();
    let middle = bytes.len() / 2;
    let span = (bytes.len() / 4).min(64 * 1024);
    let mut lcg = Lcg::new(77);
    for b in &mut bytes[middle - span / 2..middle + span / 2] {
        *b = lcg.next() as u8;
    }
    std::fs::write(&index.db, &bytes).unwrap();
    assert_damaged_is_refused(&index, "overwritten in the middle");
}

#[test]
fn a_missing_index_is_not_made_by_readers() {
    let index = Index::new();
    let runs = [
        ("export", index.run("export", &[])),
        ("stats", index.run("stats", &[])),
        ("merges", index.run("merges", &[])),
        (
            "query",
            index.run("query", &["--text", "any text at all here"]),
        ),
        ("remove", index.run("remove", &["--before", "2026-11-10"])),
    ];
    for (sub, out) in runs {
        assert_eq!(out.status.code(), Some(2), "{sub}: {}", stderr_of(&out));
        let line = single_error_line(&out);
        assert!(line.contains("no index there"), "{sub}: {line}");
        assert!(
            line.contains("; make one with `megashingle index add --db ")
                && line.ends_with("stories.db INPUT`"),
            "{sub}: {line}"
        );
        assert!(line.contains("stories.db"), "{sub}: {line}");
        assert_eq!(stdout_of(&out), "", "{sub}");
    }
    assert!(!index.db.exists(), "a reader made the index file");
}

// ---------------------------------------------------------------------------------------------
// Configuration

#[test]
fn a_different_shingle_size_is_refused_and_named() {
    let index = small_index();
    let export_before = index.export_text();
    let input = index.write("night2.csv", docs_csv(&two_nights().1));
    let out = index.add(&[input.to_str().unwrap(), "-k", "4"], 2);
    assert_eq!(stdout_of(&out), "");
    let line = single_error_line(&out);
    assert!(line.contains("shingle.size"), "{line}");
    assert!(line.contains('3') && line.contains('4'), "{line}");
    assert!(line.contains("` shows the index's settings"), "{line}");
    assert!(line.contains("`megashingle index stats --db "), "{line}");
    assert_eq!(index.export_text(), export_before);
    // So is a query made with it; a setting outside the sketch sections is not.
    let out = index.run("query", &["-k", "4", "--text", &text(&[&block(1, 200)])]);
    assert_eq!(out.status.code(), Some(2));
    assert!(single_error_line(&out).contains("shingle.size"));
    let out = index.run(
        "query",
        &[
            "--min-similarity",
            "0.5",
            "--text",
            &text(&[&block(1, 200)]),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
}

// ---------------------------------------------------------------------------------------------
// query

#[test]
fn query_finds_an_indexed_text_first_and_changes_nothing() {
    let index = Index::new();
    let (night1, night2) = two_nights();
    index.add_docs("night1.csv", &night1);
    let export_before = index.export_text();
    let stories = index.stories();

    for (id, text) in &night1 {
        let out = index.run("query", &["--text", text]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
        let rows = parse_csv(&stdout_of(&out), &QUERY_HEADER);
        assert!(!rows.is_empty(), "{id} not found");
        assert_eq!(&rows[0][0], id, "{id}: {rows:?}");
        assert_eq!(&rows[0][1], &stories[id], "{id}: {rows:?}");
        let similarity: f64 = rows[0][2].parse().unwrap();
        assert!(similarity >= 0.9, "{id}: {rows:?}");
        // Most similar first; only documents of its story.
        let similarities: Vec<f64> = rows.iter().map(|r| r[2].parse().unwrap()).collect();
        assert!(similarities.windows(2).all(|w| w[0] >= w[1]), "{rows:?}");
        assert!(rows.iter().all(|r| r[1] == stories[id]), "{id}: {rows:?}");
    }

    // A file: night 2's rewrite of s3 finds s3-a and s3-b, in story s3-a.
    let file = index.write("t3-r.txt", &night2[2].1);
    let out = index.run("query", &[file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let rows = parse_csv(&stdout_of(&out), &QUERY_HEADER);
    let found: BTreeSet<&str> = rows.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(found, BTreeSet::from(["s3-a", "s3-b"]), "{rows:?}");
    assert!(rows.iter().all(|r| r[1] == "s3-a"), "{rows:?}");

    // A text of no indexed story finds nothing.
    let out = index.run("query", &["--text", &night2[5].1]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    assert!(parse_csv(&stdout_of(&out), &QUERY_HEADER).is_empty());

    assert_eq!(
        index.export_text(),
        export_before,
        "a query changed the index"
    );
}

// ---------------------------------------------------------------------------------------------
// Stories of many copies

/// Documents `prefix01`, `prefix02`, … with the same text.
fn copies(prefix: &str, range: std::ops::RangeInclusive<usize>, text: &str) -> Vec<Doc> {
    range
        .map(|i| doc(&format!("{prefix}{i:02}"), text.to_owned()))
        .collect()
}

#[test]
fn a_story_of_many_copies_posts_its_keys_once_and_is_found_whole() {
    let text = text(&[&block(301, 300)]);
    let one = Index::new();
    one.add_docs("one.csv", &copies("c", 1..=1, &text));
    let index = Index::new();
    let night = index.add_docs("copies.csv", &copies("c", 1..=8, &text));
    assert!(night.values().all(|a| a.story_id == "c01"), "{night:?}");
    // Eight copies post each key once, not eight times.
    assert_eq!(index.stat("postings"), one.stat("postings"));
    // A query lists every copy, the seven that post nothing too.
    let out = index.run("query", &["--text", &text]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let rows = parse_csv(&stdout_of(&out), &QUERY_HEADER);
    let found: BTreeSet<&str> = rows.iter().map(|r| r[0].as_str()).collect();
    let all: BTreeSet<String> = (1..=8).map(|i| format!("c{i:02}")).collect();
    assert_eq!(found, all.iter().map(String::as_str).collect(), "{rows:?}");
    // A later copy examines the one that posts the keys, and loads it, its strongest link
    // and the story's representative: not the story's eight members.
    let (examined, loaded) = index.add_counting("later.csv", &copies("c", 9..=9, &text));
    assert_eq!((examined, loaded), (1, 1));
    assert_eq!(index.stories()["c09"], "c01");
    // One added after the one that posts its keys is removed (with another copy) joins the
    // story too: it stays as a ghost of the story while the story lives.
    let gone = index.write("gone.txt", "c01\nc02\n");
    let out = index.run("remove", &["--ids", gone.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let after = index.add_docs("after.csv", &copies("c", 10..=10, &text));
    assert_eq!(after["c10"].story_id, "c01", "{after:?}");
    assert!(!after["c10"].new_story);
    assert_eq!(index.stat("documents"), 8);
    assert!(index.stories().values().all(|s| s == "c01"));
    // Once the story is emptied its ghosts go with it: a copy founds a new story.
    let rest: String = (3..=10).map(|i| format!("c{i:02}\n")).collect();
    let rest = index.write("rest.txt", rest);
    let out = index.run("remove", &["--ids", rest.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let anew = index.add_docs("anew.csv", &copies("c", 11..=11, &text));
    assert!(anew["c11"].new_story, "{anew:?}");
    assert_eq!(anew["c11"].story_id, "c11");
}

// ---------------------------------------------------------------------------------------------
// The index file's bytes

#[test]
fn read_only_commands_do_not_write_to_the_index_file() {
    let index = small_index();
    let text = two_nights().0[0].1.clone();
    let commands: [(&str, Vec<&str>); 4] = [
        ("export", vec![]),
        ("stats", vec![]),
        ("merges", vec![]),
        ("query", vec!["--text", &text]),
    ];
    for (sub, args) in commands {
        let before = index.bytes();
        let out = index.run(sub, &args);
        assert_eq!(out.status.code(), Some(0), "{sub}: {}", stderr_of(&out));
        assert!(
            index.bytes() == before,
            "index {sub} wrote to the index file"
        );
    }
}

#[test]
fn refused_adds_do_not_write_to_the_index_file() {
    let index = small_index();
    let again = index.write("again.csv", docs_csv(&two_nights().0[..1]));
    let other = index.write("night2.csv", docs_csv(&two_nights().1));
    for args in [
        vec![again.to_str().unwrap()],
        vec![other.to_str().unwrap(), "-k", "4"],
    ] {
        let before = index.bytes();
        index.add(&args, 2);
        assert!(
            index.bytes() == before,
            "a refused add {args:?} wrote to the index file"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// remove

/// id, published, text.
fn timed_csv(rows: &[(&str, &str, String)]) -> Vec<u8> {
    csv_bytes(
        &["id", "published", "text"],
        rows.iter().map(|(id, t, text)| [*id, *t, text.as_str()]),
    )
}

/// Documents with times around 2026-11-10: story `old` (both before), story `mixed` (its
/// founder before, a rewrite after), story `new` (after).
fn timed_index() -> Index {
    let (a, b, c) = (block(201, 200), block(202, 220), block(203, 180));
    let index = Index::new();
    let rows = [
        ("old-1", "2026-11-01", text(&[&a])),
        ("old-2", "2026-11-05T23:59:59Z", rewrite(&a, 20, 3, 1)),
        ("mixed-1", "2026-11-09T12:00:00Z", text(&[&b])),
        // 2026-11-10T01:00:00+02:00 is 2026-11-09T23:00:00Z: before.
        (
            "mixed-2",
            "2026-11-10T01:00:00+02:00",
            rewrite(&b, 25, 1, 2),
        ),
        (
            "mixed-3",
            "2026-11-20T08:00:00+02:00",
            rewrite(&b, 15, 4, 3),
        ),
        // Exactly the boundary is not before it.
        ("new-1", "2026-11-10T00:00:00Z", text(&[&c])),
        ("new-2", "2026-12-01", rewrite(&c, 20, 5, 4)),
    ];
    let input = index.write("timed.csv", timed_csv(&rows));
    index.add(&[input.to_str().unwrap(), "--time-column", "published"], 0);
    assert_eq!(
        partition(&index.stories()),
        [
            set_of(&["old-1", "old-2"]),
            set_of(&["mixed-1", "mixed-2", "mixed-3"]),
            set_of(&["new-1", "new-2"]),
        ]
        .into_iter()
        .collect()
    );
    index
}

#[test]
fn remove_before_a_date_removes_exactly_the_older_documents() {
    let index = timed_index();
    let out = index.run("remove", &["--before", "2026-11-10"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let stderr = stderr_of(&out);
    assert!(
        stderr.contains("removed 4 documents and 1 emptied stories"),
        "{stderr}"
    );
    let export = index.export();
    assert_eq!(
        export
            .iter()
            .map(Exported::placement)
            .collect::<BTreeSet<_>>(),
        BTreeSet::from([
            ("mixed-3", "mixed-1", 1),
            ("new-1", "new-1", 2),
            ("new-2", "new-1", 2),
        ]),
        "the story `old-1` is gone; `mixed-1` keeps its id without its founder"
    );
    assert_eq!(index.stat("documents"), 3);
    assert_eq!(index.stat("stories"), 2);

    // The story that lost its founder still takes its rewrites.
    let b = block(202, 220);
    let later = index.add_docs("later.csv", &[doc("mixed-4", rewrite(&b, 12, 6, 5))]);
    assert_eq!(later["mixed-4"].story_id, "mixed-1", "{later:?}");
    assert!(!later["mixed-4"].new_story);
}

#[test]
fn remove_ids_removes_the_listed_and_warns_about_unknown_ids() {
    let index = timed_index();
    let ids = index.write("gone.txt", "old-2\n  nobody  \n\nnew-1\nnew-2\n");
    let out = index.run("remove", &["--ids", ids.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr_of(&out));
    let lines = stderr_lines(&out);
    assert!(
        lines.contains(&"megashingle: warning: id \"nobody\" is not in the index".to_owned()),
        "{lines:#?}"
    );
    assert_eq!(
        lines.iter().filter(|l| l.contains("warning")).count(),
        1,
        "{lines:#?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("removed 3 documents and 1 emptied stories")),
        "{lines:#?}"
    );
    assert_eq!(
        partition(&index.stories()),
        [
            set_of(&["old-1"]),
            set_of(&["mixed-1", "mixed-2", "mixed-3"]),
        ]
        .into_iter()
        .collect()
    );
    assert_eq!(index.stat("documents"), 4);

    // A removed id can be added again: it is no longer in the index, and its text joins the
    // story it was in.
    let a = block(201, 200);
    let back = index.add_docs("back.csv", &[doc("old-2", rewrite(&a, 20, 3, 1))]);
    assert_eq!(back["old-2"].story_id, "old-1", "{back:?}");
    assert!(!back["old-2"].new_story);
    assert_eq!(index.stat("documents"), 5);
}

#[test]
fn a_bad_time_is_reported_with_its_line_and_column_and_skipped() {
    let index = Index::new();
    let rows = [
        ("good-1", "2026-11-01", text(&[&block(301, 150)])),
        ("bad", "the first of november", text(&[&block(302, 150)])),
        (
            "good-2",
            "2026-11-20T08:00:00+02:00",
            text(&[&block(303, 150)]),
        ),
    ];
    let input = index.write("timed.csv", timed_csv(&rows));
    let out = index.add(&[input.to_str().unwrap(), "--time-column", "published"], 1);
    let lines = stderr_lines(&out);
    assert_eq!(lines.len(), 1, "{lines:#?}");
    let warning = &lines[0];
    assert!(warning.contains("timed.csv:3:"), "{warning}");
    assert!(warning.contains("`published`"), "{warning}");
    assert!(warning.contains("\"the first of november\""), "{warning}");
    assert!(warning.ends_with("record skipped"), "{warning}");
    let assigned = parse_assignments(&stdout_of(&out));
    assert_eq!(
        assigned.keys().collect::<Vec<_>>(),
        ["good-1", "good-2"],
        "{assigned:?}"
    );
    assert_eq!(
        index
            .export()
            .into_iter()
            .map(|r| r.doc_id)
            .collect::<Vec<_>>(),
        ["good-1", "good-2"]
    );
    // The times were kept: only good-1 is before 2026-11-10.
    let out = index.run("remove", &["--before", "2026-11-10"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    assert_eq!(
        index
            .export()
            .into_iter()
            .map(|r| r.doc_id)
            .collect::<Vec<_>>(),
        ["good-2"]
    );
}

#[test]
fn a_bad_time_and_an_indexed_id_in_a_crlf_csv_are_reported_with_their_lines() {
    let index = Index::new();
    let crlf = |rows: &[(&str, &str, String)]| {
        String::from_utf8(timed_csv(rows))
            .unwrap()
            .replace('\n', "\r\n")
    };
    let rows = [
        ("good-1", "2026-11-01", text(&[&block(301, 150)])),
        ("bad", "the first of november", text(&[&block(302, 150)])),
    ];
    let input = index.write("timed.csv", crlf(&rows));
    let out = index.add(&[input.to_str().unwrap(), "--time-column", "published"], 1);
    let lines = stderr_lines(&out);
    assert_eq!(lines.len(), 1, "{lines:#?}");
    assert!(lines[0].contains("timed.csv:3:"), "{}", lines[0]);

    let again = [
        ("good-2", "2026-11-02", text(&[&block(303, 150)])),
        ("good-1", "2026-11-01", text(&[&block(301, 150)])),
    ];
    let input = index.write("again.csv", crlf(&again));
    let out = index.add(&[input.to_str().unwrap(), "--time-column", "published"], 2);
    let line = single_error_line(&out);
    assert!(line.contains("again.csv:3:"), "{line}");
}

#[test]
fn remove_before_something_that_is_not_a_date_is_fatal() {
    let index = timed_index();
    let (export_before, bytes_before) = (index.export_text(), index.bytes());
    let out = index.run("remove", &["--before", "notadate"]);
    assert_eq!(out.status.code(), Some(2));
    let line = single_error_line(&out);
    assert!(
        line.contains("--before") && line.contains("\"notadate\"") && line.contains("not a date"),
        "{line}"
    );
    assert!(index.bytes() == bytes_before, "the index file changed");
    assert_eq!(index.export_text(), export_before);
}

// ---------------------------------------------------------------------------------------------
// Agreement with batch clustering on the dev benchmark

/// The pairwise F1 of two partitions of the same documents: pairs together in both, over the
/// pairs together in each.
fn pairwise_f1(a: &BTreeMap<String, String>, b: &BTreeMap<String, String>) -> f64 {
    let pairs = |n: u64| n * n.saturating_sub(1) / 2;
    let mut cells: HashMap<(&str, &str), u64> = HashMap::new();
    let mut sizes_a: HashMap<&str, u64> = HashMap::new();
    let mut sizes_b: HashMap<&str, u64> = HashMap::new();
    for (doc, x) in a {
        let y = b
            .get(doc)
            .unwrap_or_else(|| panic!("{doc} is in one partition only"));
        *cells.entry((x, y)).or_default() += 1;
        *sizes_a.entry(x).or_default() += 1;
        *sizes_b.entry(y).or_default() += 1;
    }
    assert_eq!(a.len(), b.len(), "the partitions cover different documents");
    let together: u64 = cells.values().map(|&n| pairs(n)).sum();
    let in_a: u64 = sizes_a.values().map(|&n| pairs(n)).sum();
    let in_b: u64 = sizes_b.values().map(|&n| pairs(n)).sum();
    if in_a + in_b == 0 {
        return 1.0;
    }
    2.0 * together as f64 / (in_a + in_b) as f64
}

#[test]
fn two_halves_of_the_dev_benchmark_agree_with_batch_clustering() {
    let Some(docs_csv_path) =
        dev_benchmark_docs("two_halves_of_the_dev_benchmark_agree_with_batch_clustering")
    else {
        return;
    };
    let started = Instant::now();
    let mut reader = csv::Reader::from_path(&docs_csv_path).expect("the dev benchmark");
    let header = reader.byte_headers().unwrap().clone();
    let records: Vec<csv::ByteRecord> = reader.byte_records().map(|r| r.unwrap()).collect();
    assert_eq!(records.len(), 4000, "the dev benchmark has 4000 documents");
    let index = Index::new();
    let mut halves = Vec::new();
    for (i, half) in records.chunks(2000).enumerate() {
        let path = index.path().join(format!("night{}.csv", i + 1));
        let mut writer = csv::Writer::from_path(&path).unwrap();
        writer.write_byte_record(&header).unwrap();
        for r in half {
            writer.write_byte_record(r).unwrap();
        }
        writer.flush().unwrap();
        halves.push(path);
    }
    for half in &halves {
        index.add(
            &[half.to_str().unwrap(), "-j", "2", "-o", "assigned.csv"],
            0,
        );
    }
    let stories = index.stories();
    assert_eq!(stories.len(), 4000);
    // The same nights with every shingle set kept on file give the same stories.
    let on_file = Index::new();
    for half in &halves {
        on_file.add(
            &[
                half.to_str().unwrap(),
                "--set",
                "cluster.set-memory-mb=0",
                "-o",
                "assigned.csv",
            ],
            0,
        );
    }
    assert!(
        on_file.stories() == stories,
        "sets on file changed the stories"
    );

    let out = megashingle(index.path())
        .args(["cluster", "-q", "-j", "2"])
        .arg(&docs_csv_path)
        .args(["-o", "batch.csv"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let batch_text = std::fs::read_to_string(index.path().join("batch.csv")).unwrap();
    let batch: BTreeMap<String, String> = parse_csv(
        &batch_text,
        &[
            "doc_id",
            "cluster_id",
            "cluster_size",
            "similarity",
            "status",
        ],
    )
    .into_iter()
    .map(|r| (r[0].clone(), r[1].clone()))
    .collect();

    let f1 = pairwise_f1(&stories, &batch);
    // Disk space: the file grows ahead of its use, sparsely.
    let bytes = {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(&index.db).unwrap().blocks() * 512
    };
    let per_document = bytes as f64 / stories.len() as f64;
    eprintln!(
        "dev benchmark in two nights: pairwise F1 {f1:.4} against batch; {bytes} bytes, {per_document:.0} per document; {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert!(f1 >= 0.97, "pairwise F1 {f1:.4} against batch clustering");
    assert!(
        per_document <= 1024.0,
        "{per_document:.0} bytes per document"
    );
    assert_eq!(index.stat("documents"), 4000);
}

// ---------------------------------------------------------------------------------------------
// kill -9 during an add

/// `n` documents in stories of 1 to 3 (an original and rewrites), `prefix` on their ids.
fn many_docs(prefix: &str, n: usize, seed: u64) -> Vec<(String, String)> {
    let mut docs = Vec::with_capacity(n);
    let mut story = 0u64;
    while docs.len() < n {
        let words = block(seed * 1_000_003 + story, 150 + (story % 7) as usize * 20);
        let copies = 1 + (story % 3) as usize;
        for c in 0..copies.min(n - docs.len()) {
            let id = format!("{prefix}{story:05}-{c}");
            let text = if c == 0 {
                text(&[&words])
            } else {
                rewrite(&words, 10 + c * 3, c, seed + story * 7 + c as u64)
            };
            docs.push((id, text));
        }
        story += 1;
    }
    docs
}

/// (doc_id, story_id, story_size) of an export, and the added_at of each document.
type Projection = (Vec<(String, String, usize)>, BTreeMap<String, String>);

fn project(export: &[Exported]) -> Projection {
    (
        export
            .iter()
            .map(|r| (r.doc_id.clone(), r.story_id.clone(), r.story_size))
            .collect(),
        export
            .iter()
            .map(|r| (r.doc_id.clone(), r.added_at.clone()))
            .collect(),
    )
}

#[test]
fn kill_9_during_an_add_leaves_the_index_before_or_after_it() {
    use std::os::unix::process::ExitStatusExt;

    let base = Index::new();
    let first = many_docs("a", 300, 1);
    base.add_docs("first.csv", &first);
    let bytes_before = base.bytes();
    let (before, before_added) = project(&base.export());

    // The second night: some of it joins the first night's stories.
    let mut second = many_docs("b", 6000, 2);
    second.extend(first.iter().step_by(5).map(|(id, text)| {
        (
            format!("r-{id}"),
            rewrite(
                &text.split(' ').map(str::to_owned).collect::<Vec<_>>(),
                9,
                2,
                3,
            ),
        )
    }));
    let second_csv = docs_csv(&second);

    // A fresh copy of the first night's index in its own directory.
    let copy = |bytes: &[u8]| -> Index {
        let index = Index::new();
        std::fs::write(&index.db, bytes).unwrap();
        index.write("second.csv", &second_csv);
        index
    };
    let start = |index: &Index| {
        std::process::Command::new(BIN)
            .current_dir(index.path())
            .args(["index", "add", "-q", "-j", "2", "--db", &index.db_arg()])
            .args(["second.csv", "-o", "assigned.csv"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start megashingle")
    };

    // The completed add, twice: the same stories both times, and how long it takes.
    let mut full = Duration::MAX;
    let mut completed = Vec::new();
    for _ in 0..2 {
        let complete = copy(&bytes_before);
        let timer = Instant::now();
        let out = start(&complete).wait_with_output().unwrap();
        full = full.min(timer.elapsed());
        assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
        completed.push(project(&complete.export()));
    }
    assert_eq!(completed[0].0, completed[1].0, "two complete adds differ");
    let (after, after_added) = completed.swap_remove(0);
    assert_eq!(after.len(), first.len() + second.len());
    assert!(
        after
            .iter()
            .any(|(d, s, _)| d.starts_with("r-") && s.starts_with('a')),
        "some second-night documents join first-night stories"
    );
    eprintln!("kill -9: the complete add took {:.2} s", full.as_secs_f64());

    let mut killed_before_commit = 0;
    let mut killed = 0;
    // Kill points as shares of the complete run: spread over it, and denser near its end,
    // where the write transaction and its commit are (reading and sketching come first), and
    // past it.
    let shares = [
        0.0, 0.25, 0.5, 0.65, 0.75, 0.82, 0.88, 0.92, 0.96, 1.0, 1.1, 1.5,
    ];
    let runs = shares.len();
    for (run, share) in shares.into_iter().enumerate() {
        let delay = Duration::from_millis(50).max(full.mul_f64(share));
        let index = copy(&bytes_before);
        let timer = Instant::now();
        let mut child = start(&index);
        let mut running = true;
        while timer.elapsed() < delay {
            if child.try_wait().unwrap().is_some() {
                // Done sooner than the complete add took: later kill points follow.
                full = full.min(timer.elapsed());
                running = false;
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        if running {
            child.kill().unwrap();
        }
        let status = child.wait().unwrap();
        if running && status.signal() == Some(9) {
            killed += 1;
        } else {
            assert_eq!(status.code(), Some(0), "run {run}: {status:?}");
        }
        let (rows, added) = project(&index.export());
        if rows == before {
            assert_eq!(added, before_added, "run {run}");
            assert!(
                status.signal() == Some(9),
                "run {run}: a complete add left nothing"
            );
            killed_before_commit += 1;
        } else {
            assert_eq!(
                rows, after,
                "run {run}: killed after {delay:?}, a partial index"
            );
            // The first night's times as they were; the second night's documents added at
            // one time.
            for (doc, at) in &before_added {
                assert_eq!(&added[doc], at, "run {run}: {doc}");
            }
            let new_times: BTreeSet<&String> = added
                .iter()
                .filter(|(d, _)| !before_added.contains_key(*d))
                .map(|(_, t)| t)
                .collect();
            assert_eq!(new_times.len(), 1, "run {run}");
            assert_eq!(
                after_added.len(),
                added.len(),
                "run {run}: the same documents"
            );
        }
        assert_eq!(index.stat("documents") as usize, rows.len(), "run {run}");
        // The assignments file is there only complete.
        if let Ok(assigned) = std::fs::read_to_string(index.path().join("assigned.csv")) {
            assert_eq!(
                parse_assignments(&assigned).len(),
                second.len(),
                "run {run}"
            );
        }

        // The kernel released the killed add's lock: another add goes through.
        if status.signal() == Some(9) && killed <= 3 {
            let extra = many_docs("c", 5, 3);
            let assigned = index.add_docs("extra.csv", &extra);
            assert_eq!(assigned.len(), 5);
            assert_eq!(index.export().len(), rows.len() + 5, "run {run}");
        }
    }
    eprintln!("kill -9: {killed} of {runs} runs killed, {killed_before_commit} before the commit");
    assert!(
        killed_before_commit >= 1,
        "no kill landed before the commit"
    );
}

// ---------------------------------------------------------------------------------------------
// Disk space given back

#[test]
fn removing_most_documents_gives_their_disk_space_back() {
    let index = Index::new();
    let docs = many_docs("doc-", 2000, 11);
    index.add_docs("docs.csv", &docs);
    let on_disk = || {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(&index.db).unwrap().blocks() * 512
    };
    let before = on_disk();
    let gone: String = docs[100..]
        .iter()
        .map(|(id, _)| format!("{id}\n"))
        .collect();
    let ids = index.write("gone.txt", gone);
    let out = index.run("remove", &["--ids", ids.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let after = on_disk();
    assert!(
        after * 4 < before * 3,
        "{before} bytes on disk before the removal, {after} after"
    );
    assert_eq!(index.stat("documents"), 100);
    // What is left still answers: a kept document finds itself.
    let kept = index.write("kept.txt", &docs[0].1);
    let out = index.run("query", &[kept.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(&docs[0].0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

// ---------------------------------------------------------------------------------------------
// An index made by an earlier megashingle

/// `fixtures/index-format-1/index.db` is `night-1.csv` of that folder added by a megashingle
/// of index format 1, which kept the boilerplate one entry a shingle: it is read as it is, and
/// an add moves it to the current format, with the same stories, boilerplate and answers
/// throughout as an index made now from the same nights.
#[test]
fn an_index_of_format_1_is_read_as_it_is_and_moved_to_the_current_format_by_its_next_add() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/index-format-1");
    let night = |n: u32| {
        fixtures
            .join(format!("night-{n}.csv"))
            .display()
            .to_string()
    };
    let earlier = Index::new();
    std::fs::copy(fixtures.join("index.db"), &earlier.db).unwrap();
    let now = Index::new();
    now.add(&[&night(1)], 0);
    let placements = |index: &Index| -> Vec<(String, String, usize)> {
        index
            .export()
            .iter()
            .map(|r| (r.doc_id.clone(), r.story_id.clone(), r.story_size))
            .collect()
    };
    let query = |index: &Index| {
        let text = index.write("t1-r.txt", rewrite(&block(1, 200), 12, 5, 12));
        let out = index.run("query", &[text.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
        stdout_of(&out)
    };
    let same = |what: &str| {
        assert!(earlier.stat("boilerplate shingles") >= 48, "{what}");
        for stat in ["documents", "stories", "boilerplate shingles"] {
            assert_eq!(earlier.stat(stat), now.stat(stat), "{what}: {stat}");
        }
        assert_eq!(placements(&earlier), placements(&now), "{what}");
        assert_eq!(query(&earlier), query(&now), "{what}");
    };
    same("format 1, read");
    assert!(query(&now).contains("s1-a"), "{}", query(&now));
    assert_eq!(format_of(&earlier.db), "megashingle-index 1");

    let assignments = |index: &Index| parse_assignments(&stdout_of(&index.add(&[&night(2)], 0)));
    assert_eq!(assignments(&earlier), assignments(&now));
    same("after an add");
    assert_eq!(format_of(&earlier.db), "megashingle-index 5");
    assert_eq!(format_of(&now.db), "megashingle-index 5");

    // The ids the earlier megashingle kept in a table of their own were moved by the add: an
    // id of the first night is still refused, and still found by a removal.
    let again = earlier.add(&[&night(1)], 2);
    assert!(
        stderr_of(&again).contains("is already in the index"),
        "{}",
        stderr_of(&again)
    );
    let first_id = std::fs::read_to_string(fixtures.join("night-1.csv")).unwrap();
    let first_id = first_id.lines().nth(1).unwrap().split(',').next().unwrap();
    let listed = earlier.write("gone.txt", format!("{first_id}\n"));
    let out = earlier.run("remove", &["--ids", listed.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    assert!(
        stderr_of(&out).contains("removed 1 document"),
        "{}",
        stderr_of(&out)
    );
}

/// The format an index file says it has.
fn format_of(db: &Path) -> String {
    use redb::{ReadableDatabase, TableDefinition};
    let meta: TableDefinition<&str, &str> = TableDefinition::new("meta");
    let db = redb::ReadOnlyDatabase::open(db).unwrap();
    let txn = db.begin_read().unwrap();
    let format = txn
        .open_table(meta)
        .unwrap()
        .get("format")
        .unwrap()
        .unwrap();
    format.value().to_owned()
}
