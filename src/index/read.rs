//! Reading the index without changing it: the export of every document's story, the list of
//! merges, the statistics, and the near-duplicates of one text (`index query`), found and
//! verified as `index add` would find and verify them.

use std::path::Path;

use redb::{ReadOnlyTable, ReadableTable, ReadableTableMetadata};
use rustc_hash::FxHashMap;

use crate::cluster::estimate_containment;
use crate::config::Plan;
use crate::corpus::boilerplate::Boilerplate;
use crate::index::boilerplate::KnownBoilerplate;
use crate::index::error::{Damage, IndexError, Result};
use crate::index::postings::{directories, LookUp};
use crate::index::schema::{
    table, DocRecord, MergeRecord, StoryRecord, CHUNKS, COUNTERS, DEAD, DOCS, GHOSTS, MEMBERS,
    MERGES, META, SEGMENTS, STORIES,
};
use crate::index::store::{
    bytes_on_disk, posting_keys, short_minima, sketch_settings_of, widen, Store,
};
use crate::io::time::format_time;
use crate::sketch::signature::estimate_jaccard;
use crate::sketch::{SketchBuffers, Sketcher};

/// One row of `index export`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportRow {
    /// The document.
    pub doc_id: String,
    /// Its story's id.
    pub story_id: String,
    /// Documents in the story.
    pub story_size: u32,
    /// When the document was added (RFC 3339, UTC).
    pub added_at: String,
}

/// Every indexed document with its story: stories in the order they were made, documents by
/// id within each.
pub fn export(store: &Store) -> Result<Vec<ExportRow>> {
    export_rows(store).map_err(|e| e.at(&store.path))
}

/// The rows of [`export`], their errors not yet given the index's path.
fn export_rows(store: &Store) -> Result<Vec<ExportRow>> {
    let txn = store.begin_read()?;
    let (Some(stories), Some(members), Some(docs)) = (
        table(&txn, STORIES)?,
        table(&txn, MEMBERS)?,
        table(&txn, DOCS)?,
    ) else {
        return Ok(Vec::new());
    };
    let mut rows = Vec::new();
    let mut current: Option<(u32, StoryRecord)> = None;
    let mut story_rows: Vec<ExportRow> = Vec::new();
    let flush = |rows: &mut Vec<ExportRow>, story_rows: &mut Vec<ExportRow>| {
        story_rows.sort_by(|a, b| a.doc_id.cmp(&b.doc_id));
        rows.append(story_rows);
    };
    for entry in members.iter()? {
        let (story, doc) = entry?.0.value();
        if current.as_ref().is_none_or(|(n, _)| *n != story) {
            flush(&mut rows, &mut story_rows);
            let bytes = stories
                .get(story)?
                .ok_or(IndexError::damaged(Damage::LostStory { number: story }))?;
            current = Some((story, StoryRecord::decode(bytes.value())?));
        }
        let record = docs
            .get(doc)?
            .ok_or(IndexError::damaged(Damage::LostDocument { number: doc }))?;
        let record = DocRecord::decode(record.value())?;
        let (_, story) = current.as_ref().expect("set above");
        story_rows.push(ExportRow {
            doc_id: record.id,
            story_id: story.name.clone(),
            story_size: story.size,
            added_at: format_time(record.added_at),
        });
    }
    flush(&mut rows, &mut story_rows);
    Ok(rows)
}

/// Every merge, oldest first.
pub fn merges(store: &Store) -> Result<Vec<MergeRecord>> {
    let read = || -> Result<Vec<MergeRecord>> {
        let txn = store.begin_read()?;
        let Some(merges) = table(&txn, MERGES)? else {
            return Ok(Vec::new());
        };
        merges
            .iter()?
            .map(|entry| MergeRecord::decode(entry?.1.value()))
            .collect()
    };
    read().map_err(|e| e.at(&store.path))
}

/// Counts that describe an index.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    /// Documents.
    pub documents: u64,
    /// Stories.
    pub stories: u64,
    /// Stories of two or more documents.
    pub multi_stories: u64,
    /// Documents in the largest story.
    pub largest_story: u32,
    /// Merges recorded.
    pub merges: u64,
    /// Postings (candidate keys of documents), those of removed documents included until
    /// their segment is merged.
    pub postings: u64,
    /// Segments the postings are in.
    pub segments: u64,
    /// Shingles known to be boilerplate.
    pub boilerplate_shingles: u64,
    /// Disk space of the index file in bytes (allocated blocks: the file grows ahead of its
    /// use, sparsely).
    pub file_bytes: u64,
    /// When the index was made and last added to (RFC 3339).
    pub created_at: Option<String>,
    /// When the last add ran.
    pub last_add_at: Option<String>,
    /// The keys of the configuration that made its sketches, as `section.key = value`.
    pub sketch_settings: Vec<String>,
}

/// The statistics of an index.
pub fn stats(store: &Store) -> Result<Stats> {
    counted(store).map_err(|e| e.at(&store.path))
}

/// The statistics of [`stats`], their errors not yet given the index's path.
fn counted(store: &Store) -> Result<Stats> {
    let mut stats = Stats {
        file_bytes: bytes_on_disk(&std::fs::metadata(&store.path)?),
        ..Stats::default()
    };
    if let Some(config) = store.configuration()? {
        stats.sketch_settings = sketch_settings_of(&config)
            .into_iter()
            .map(|(k, v)| format!("{k} = {v}"))
            .collect();
    }
    let txn = store.begin_read()?;
    let time = |meta: &ReadOnlyTable<&str, &str>, key: &str| -> Result<Option<String>> {
        Ok(meta
            .get(key)?
            .and_then(|v| v.value().parse::<i64>().ok())
            .map(format_time))
    };
    if let Some(meta) = table(&txn, META)? {
        stats.created_at = time(&meta, "created_at")?;
        stats.last_add_at = time(&meta, "last_add_at")?;
    }
    if let Some(counters) = table(&txn, COUNTERS)? {
        stats.documents = counters.get("documents")?.map_or(0, |v| v.value());
    }
    if let Some(stories) = table(&txn, STORIES)? {
        for entry in stories.iter()? {
            let story = StoryRecord::decode(entry?.1.value())?;
            stats.stories += 1;
            stats.multi_stories += u64::from(story.size > 1);
            stats.largest_story = stats.largest_story.max(story.size);
        }
    }
    if let Some(merges) = table(&txn, MERGES)? {
        stats.merges = merges.len()?;
    }
    if let Some(segments) = table(&txn, SEGMENTS)? {
        let directories = directories(&segments)?;
        stats.segments = directories.len() as u64;
        stats.postings = directories.iter().map(|(_, d)| d.pairs).sum();
    }
    stats.boilerplate_shingles = KnownBoilerplate::open(&txn)?.len()?;
    Ok(stats)
}

/// The boilerplate shingles earlier adds found.
pub fn known_boilerplate(store: &Store) -> Result<Boilerplate> {
    let read = || -> Result<Boilerplate> {
        if store.is_new()? {
            return Ok(Boilerplate::none());
        }
        let txn = store.begin_read()?;
        Ok(Boilerplate::from_keys(KnownBoilerplate::open(&txn)?.all()?))
    };
    read().map_err(|e| e.at(&store.path))
}

/// One near-duplicate found by `index query`.
#[derive(Debug, Clone, PartialEq)]
pub struct Match {
    /// The indexed document.
    pub doc_id: String,
    /// Its story.
    pub story_id: String,
    /// Estimated Jaccard similarity.
    pub similarity: f64,
    /// Estimated share of the smaller text found in the larger.
    pub containment: f64,
}

/// An index open for queries: one read transaction, with what every query needs read once
/// (the postings' directories, the removed documents and the index's configuration). Each
/// query then reads only its own shingles' entries in the boilerplate, the postings chunks
/// of its keys and its candidates' records.
pub struct Reader {
    /// The index file, for messages.
    path: String,
    /// The index's configuration; `None` while it is empty.
    indexed: Option<crate::config::Config>,
    /// The tables, when anything is indexed.
    tables: Option<ReaderTables>,
}

/// The tables a query reads.
struct ReaderTables {
    boilerplate: KnownBoilerplate,
    look_up: LookUp,
    chunks: ReadOnlyTable<(u32, u32), &'static [u8]>,
    docs: ReadOnlyTable<u32, &'static [u8]>,
    stories: ReadOnlyTable<u32, &'static [u8]>,
    members: ReadOnlyTable<(u32, u32), ()>,
    ghosts: Option<ReadOnlyTable<u32, &'static [u8]>>,
}

impl ReaderTables {
    /// Indexed document `number` as a match of the query's `sketch` (its minima cut to 16
    /// bits), when it passes verification from the minima as `index add` checks a pair with
    /// an indexed document; `names` keeps the names of the stories matched so far. A ghost
    /// that passes is no match, but its story is named, so that its members are checked.
    fn matching(
        &self,
        number: u32,
        sketch: &crate::sketch::Sketch,
        config: &Plan,
        names: &mut FxHashMap<u32, String>,
    ) -> Result<Option<Match>> {
        let (bytes, ghost) = match self.docs.get(number)? {
            Some(bytes) => (bytes, false),
            None => match self.ghosts.as_ref().map(|g| g.get(number)).transpose()? {
                Some(Some(bytes)) => (bytes, true),
                _ => return Ok(None),
            },
        };
        let record = DocRecord::decode(bytes.value())?;
        if record.shingles == 0 {
            return Ok(None);
        }
        let signature = widen(&record.signature);
        let similarity = estimate_jaccard(&sketch.signature, &signature);
        let containment = estimate_containment(similarity, sketch.shingles, record.shingles);
        let other = crate::sketch::Sketch {
            words: record.words,
            shingles: record.shingles,
            signature: signature.into(),
            lead: crate::sketch::shingle::Lead::default(),
        };
        let (verifier, weakest) = (config.verifier, config.weakest_link);
        let Some(checked) = verifier.jaccard(sketch, &other, || None) else {
            return Ok(None);
        };
        if checked < weakest && verifier.score_with(checked, sketch, &other).is_none() {
            return Ok(None);
        }
        if let std::collections::hash_map::Entry::Vacant(slot) = names.entry(record.story) {
            let story =
                self.stories
                    .get(record.story)?
                    .ok_or(IndexError::damaged(Damage::LostStory {
                        number: record.story,
                    }))?;
            slot.insert(StoryRecord::decode(story.value())?.name);
        }
        if ghost {
            return Ok(None);
        }
        Ok(Some(Match {
            doc_id: record.id,
            story_id: names[&record.story].clone(),
            similarity,
            containment,
        }))
    }
}

impl Reader {
    /// Opens a read transaction on `store` and reads what every query needs.
    pub fn open(store: &Store) -> Result<Reader> {
        Reader::open_unlocated(store).map_err(|e| e.at(&store.path))
    }

    /// [`Reader::open`], its errors not yet given the index's path.
    fn open_unlocated(store: &Store) -> Result<Reader> {
        let path = store.path.display().to_string();
        let indexed = store.configuration()?;
        if indexed.is_none() {
            return Ok(Reader {
                path,
                indexed,
                tables: None,
            });
        }
        let txn = store.begin_read()?;
        let tables = match (
            table(&txn, SEGMENTS)?,
            table(&txn, CHUNKS)?,
            table(&txn, DEAD)?,
            (table(&txn, DOCS)?, table(&txn, STORIES)?),
            table(&txn, MEMBERS)?,
        ) {
            (
                Some(segments),
                Some(chunks),
                Some(dead),
                (Some(docs), Some(stories)),
                Some(members),
            ) => Some(ReaderTables {
                boilerplate: KnownBoilerplate::open(&txn)?,
                look_up: LookUp::read(&segments, &dead)?,
                chunks,
                docs,
                stories,
                members,
                ghosts: table(&txn, GHOSTS)?,
            }),
            _ => None,
        };
        Ok(Reader {
            path,
            indexed,
            tables,
        })
    }

    /// Fails, naming every differing key, when sketches made with `config` could not be
    /// compared with the index's (see [`Store::check_comparable`]).
    pub fn check_comparable(&self, config: &crate::config::Config) -> Result<()> {
        let Some(indexed) = &self.indexed else {
            return Ok(());
        };
        let differences = crate::index::store::sketch_differences(indexed, config);
        if differences.is_empty() {
            return Ok(());
        }
        Err(IndexError::Incomparable {
            path: self.path.clone(),
            differences: differences.join(", "),
        })
    }

    /// The indexed near-duplicates of `text` (see [`query`]); `config` must have passed
    /// [`Reader::check_comparable`], and `sketcher` be made from it.
    pub fn query(&self, text: &str, config: &Plan, sketcher: &Sketcher) -> Result<Vec<Match>> {
        self.found(text, config, sketcher)
            .map_err(|e| e.at(Path::new(&self.path)))
    }

    /// The matches of [`Reader::query`], their errors not yet given the index's path.
    fn found(&self, text: &str, config: &Plan, sketcher: &Sketcher) -> Result<Vec<Match>> {
        let Some(t) = &self.tables else {
            return Ok(Vec::new());
        };
        let shingles = sketcher.shingles(text, &mut SketchBuffers::default(), false);
        // The boilerplate among the text's shingles: a look-up each, not the whole table.
        let mut boilerplate = Vec::new();
        for &key in &shingles.set {
            if t.boilerplate.contains(key)? {
                boilerplate.push(key);
            }
        }
        let boilerplate = Boilerplate::from_keys(boilerplate);
        let (mut sketch, _) = sketcher.sketch_shingles(&shingles, &boilerplate);
        if !sketch.is_comparable() {
            return Ok(Vec::new());
        }
        let keys = posting_keys(&config.key_maker, &sketch.signature);
        sketch.signature = widen(&short_minima(&sketch.signature)).into();
        let found = t
            .look_up
            .find(&t.chunks, &keys, config.cluster.max_bucket)?;
        let mut candidates: Vec<u32> = found.into_iter().map(|(_, doc)| doc).collect();
        candidates.sort_unstable();
        candidates.dedup();
        let mut names: FxHashMap<u32, String> = FxHashMap::default();
        let mut matches = Vec::new();
        for &number in &candidates {
            if let Some(found) = t.matching(number, &sketch, config, &mut names)? {
                matches.push(found);
            }
        }
        // A story posts each key a few times (see `index::add::POSTERS_PER_KEY`): the
        // other members of the stories found are checked too, so that every copy of a text
        // indexed many times is listed.
        let mut stories: Vec<u32> = names.keys().copied().collect();
        stories.sort_unstable();
        for story in stories {
            for entry in t.members.range((story, 0)..=(story, u32::MAX))? {
                let number = entry?.0.value().1;
                if candidates.binary_search(&number).is_err() {
                    if let Some(found) = t.matching(number, &sketch, config, &mut names)? {
                        matches.push(found);
                    }
                }
            }
        }
        matches.sort_by(|a, b| {
            b.similarity
                .total_cmp(&a.similarity)
                .then_with(|| a.doc_id.cmp(&b.doc_id))
        });
        Ok(matches)
    }
}
