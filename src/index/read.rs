//! Reading the index without changing it: the export of every document's story, the list of
//! merges, the statistics, the near-duplicates of one text (`index query`), found and
//! verified as `index add` would find and verify them, and the indexed documents that share
//! passages with one text or with many asked together (`index query --reuse`).

use std::path::Path;

use rayon::prelude::*;
use redb::{ReadOnlyTable, ReadableTable, ReadableTableMetadata};
use rustc_hash::FxHashMap;

use crate::cluster::estimate_containment;
use crate::config::Plan;
use crate::corpus::boilerplate::Boilerplate;
use crate::index::boilerplate::KnownBoilerplate;
use crate::index::error::{Damage, IndexError, Result};
use crate::index::passages::{stored_window, PassageReader};
use crate::index::postings::{directories, LookUp};
use crate::index::schema::{
    table, DocRecord, MergeRecord, StoryRecord, CHUNKS, COUNTERS, DEAD, DOCS, GHOSTS, MEMBERS,
    MERGES, META, PASSAGES, PASSAGE_BLOCKS, PASSAGE_CHUNKS, PASSAGE_SEGMENTS, SEGMENTS, STORIES,
};
use crate::index::store::{
    bytes_on_disk, posting_keys, short_minima, sketch_settings_of, widen, Store,
};
use crate::io::time::format_time;
use crate::reuse::align::{align_prepared, passages_prepared, shingle_set, AlignScratch, Prepared};
use crate::reuse::texts::{mask_with, text_of};
use crate::reuse::{is_reuse, share, winnow, Text};
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
    /// True when the index keeps the passages of its documents (index format 4 or 6).
    pub keeps_passages: bool,
    /// Documents whose passages are kept (their shingle keys in text order).
    pub passage_documents: u64,
    /// Winnowed fingerprints of the passages (postings), those of removed documents included
    /// until their segment is merged.
    pub passage_fingerprints: u64,
    /// Bytes the passage tables take in the file: their records, their pages' own data and
    /// the free space inside those pages.
    pub passage_bytes: u64,
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
    count_passages(&txn, &mut stats)?;
    Ok(stats)
}

/// The passage figures of [`Stats`].
fn count_passages(txn: &redb::ReadTransaction, stats: &mut Stats) -> Result<()> {
    let Some(records) = table(txn, PASSAGES)? else {
        return Ok(());
    };
    stats.keeps_passages = true;
    stats.passage_documents = records.len()?;
    let mut bytes = |s: redb::TableStats| {
        stats.passage_bytes += s.stored_bytes() + s.metadata_bytes() + s.fragmented_bytes();
    };
    bytes(records.stats()?);
    if let Some(chunks) = table(txn, PASSAGE_CHUNKS)? {
        bytes(chunks.stats()?);
    }
    if let Some(blocks) = table(txn, PASSAGE_BLOCKS)? {
        bytes(blocks.stats()?);
    }
    if let Some(segments) = table(txn, PASSAGE_SEGMENTS)? {
        bytes(segments.stats()?);
        let directories = directories(&segments)?;
        stats.passage_fingerprints = directories.iter().map(|(_, d)| d.pairs).sum();
    }
    Ok(())
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

/// One indexed document that shares a passage with a text: a row of `index query --reuse`,
/// the columns of the `reuse` table with the text as `a` and the indexed document as `b`.
#[derive(Debug, Clone, PartialEq)]
pub struct ReuseMatch {
    /// The indexed document.
    pub doc_id: String,
    /// Its story.
    pub story_id: String,
    /// The share of the text's words that are shared words with the document.
    pub a_in_b: f64,
    /// The share of the document's words that are shared words with the text.
    pub b_in_a: f64,
    /// Shared words, the smaller count of the two texts.
    pub shared_words: u32,
    /// Passages, the smaller count of the two texts.
    pub passages: u32,
    /// Words of the longest passage, the smaller of the two texts' longest.
    pub longest: u32,
    /// The exact Jaccard of the two texts' shingle sets, boilerplate left out.
    pub jaccard: f64,
    /// The passages as the text has them: ranges of its canonical words, from a passage's
    /// first shared word to its last, in text order.
    pub text_passages: Vec<std::ops::Range<usize>>,
}

/// What the index holds of a text's passages: every indexed document that shares one with it
/// (most shared words first, then by id), and how much of the text is found in none.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ReuseAnswer {
    /// The documents.
    pub matches: Vec<ReuseMatch>,
    /// Canonical words of the text.
    pub words: u32,
    /// Its words in a passage shared with at least one of the documents.
    pub found_words: u32,
}

impl ReuseAnswer {
    /// The share of the text found in no indexed document: its words in no shared passage
    /// (1 for a text with no words).
    pub fn uniqueness(&self) -> f64 {
        1.0 - crate::reuse::share(self.found_words, self.words)
    }
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
    /// The passages, when the index keeps them.
    passages: Option<PassageReader>,
    /// The format the index says it has.
    format: String,
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

/// Candidates of a batch of reuse queries read on one thread at a time.
const CANDIDATES_READ_AT_ONCE: usize = 1024;

/// An indexed document a text may share passages with, read for the alignment.
struct Candidate {
    record: DocRecord,
    /// Its main text as reuse keeps it.
    text: Text,
    /// Its distinct shingles.
    distinct: usize,
}

impl Candidate {
    /// Indexed document `number` with its passages; `None` when it has none (removed).
    fn read(t: &ReaderTables, passages: &PassageReader, number: u32) -> Result<Option<Candidate>> {
        let Some(bytes) = t.docs.get(number)? else {
            return Ok(None);
        };
        let record = DocRecord::decode(bytes.value())?;
        drop(bytes);
        Ok(passages.text(number, record.words)?.map(|text| Candidate {
            distinct: shingle_set(&text).len(),
            record,
            text,
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
            ) => {
                let configured = indexed.as_ref().map_or(0, |c| c.reuse.window);
                let window = stored_window(&txn, configured)?;
                Some(ReaderTables {
                    boilerplate: KnownBoilerplate::open(&txn)?,
                    look_up: LookUp::read(&segments, &dead)?,
                    chunks,
                    docs,
                    stories,
                    members,
                    ghosts: table(&txn, GHOSTS)?,
                    passages: PassageReader::open(&txn, window)?,
                    format: store.format()?.unwrap_or_default(),
                })
            }
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

    /// The indexed documents that share a passage with `text`, found as `reuse` finds them
    /// in a batch (the same candidates, figures and rules: see [`crate::reuse`]), with
    /// `config`'s `[reuse]` rules; `config` must have passed [`Reader::check_comparable`],
    /// and `sketcher` be made from it. An index that keeps no passages is an error.
    pub fn reuse(&self, text: &str, config: &Plan, sketcher: &Sketcher) -> Result<ReuseAnswer> {
        self.reused(text, config, sketcher)
            .map_err(|e| e.at(Path::new(&self.path)))
    }

    /// The answers of [`Reader::reuse`] for each of `texts`, in their order, found together:
    /// the index's passage boilerplate is read once and every text's fingerprints are looked
    /// up in one pass over the postings, so a batch costs a fraction of its texts queried one
    /// by one. The answers are those of [`Reader::reuse`].
    pub fn reuse_many(
        &self,
        texts: &[&str],
        config: &Plan,
        sketcher: &Sketcher,
    ) -> Result<Vec<ReuseAnswer>> {
        self.reused_many(texts, config, sketcher)
            .map_err(|e| e.at(Path::new(&self.path)))
    }

    /// The tables and the passages of an index that keeps them; `None` while nothing is
    /// indexed, an error when the index keeps no passages.
    fn with_passages(&self) -> Result<Option<(&ReaderTables, &PassageReader)>> {
        let Some(t) = &self.tables else {
            return Ok(None);
        };
        match &t.passages {
            Some(passages) => Ok(Some((t, passages))),
            None => Err(IndexError::NoPassages {
                path: self.path.clone(),
                format: t.format.clone(),
                passages: crate::index::schema::FORMAT_WITH_PASSAGES,
            }),
        }
    }

    /// The answer of [`Reader::reuse`], its errors not yet given the index's path.
    fn reused(&self, text: &str, config: &Plan, sketcher: &Sketcher) -> Result<ReuseAnswer> {
        let Some((t, passages)) = self.with_passages()? else {
            return Ok(ReuseAnswer::default());
        };
        let mut own = text_of(sketcher, text, &mut SketchBuffers::default());
        // The passages' boilerplate among the text's shingles: a look-up each.
        let set = shingle_set(&own);
        let mut boilerplate = Vec::new();
        for &key in &set {
            if passages.boilerplate.contains(key)? {
                boilerplate.push(key);
            }
        }
        mask_with(&mut own, &set, &Boilerplate::from_keys(boilerplate));
        let fingerprints = winnow::fingerprints(&own.keys, passages.window);
        let settings = crate::reuse::Settings::of(config.config());
        let numbers = passages.candidates(&fingerprints, settings.max_bucket)?;
        let mut candidates = Vec::with_capacity(numbers.len());
        for number in numbers {
            candidates.extend(Candidate::read(t, passages, number)?);
        }
        let candidates: Vec<&Candidate> = candidates.iter().collect();
        self.answer(t, &own, &candidates, &settings)
    }

    /// The answers of [`Reader::reuse_many`], their errors not yet given the index's path.
    fn reused_many(
        &self,
        texts: &[&str],
        config: &Plan,
        sketcher: &Sketcher,
    ) -> Result<Vec<ReuseAnswer>> {
        let Some((t, passages)) = self.with_passages()? else {
            return Ok(vec![ReuseAnswer::default(); texts.len()]);
        };
        let boilerplate = passages.all_boilerplate()?;
        let asked: Vec<(Text, Vec<u32>)> = texts
            .par_iter()
            .map_init(SketchBuffers::default, |buffers, text| {
                let mut own = text_of(sketcher, text, buffers);
                let set = shingle_set(&own);
                mask_with(&mut own, &set, boilerplate);
                let fingerprints = winnow::fingerprints(&own.keys, passages.window);
                (own, fingerprints)
            })
            .collect();
        let settings = crate::reuse::Settings::of(config.config());
        let (owns, fingerprints): (Vec<Text>, Vec<Vec<u32>>) = asked.into_iter().unzip();
        let numbers = passages.candidates_of_many(&fingerprints, settings.max_bucket)?;
        drop(fingerprints);
        // Each candidate is read once for the batch, in number order (documents added
        // together lie together in the index), however many texts it is a candidate of.
        let mut distinct: Vec<u32> = numbers.iter().flatten().copied().collect();
        distinct.par_sort_unstable();
        distinct.dedup();
        let read: Vec<Option<Candidate>> = distinct
            .par_chunks(CANDIDATES_READ_AT_ONCE)
            .map(|chunk| {
                chunk
                    .iter()
                    .map(|&number| Candidate::read(t, passages, number))
                    .collect::<Result<Vec<_>>>()
            })
            .collect::<Result<Vec<_>>>()?
            .into_iter()
            .flatten()
            .collect();
        owns.par_iter()
            .zip(&numbers)
            .map(|(own, numbers)| {
                let candidates: Vec<&Candidate> = numbers
                    .iter()
                    .filter_map(|number| {
                        let at = distinct.binary_search(number).ok()?;
                        read[at].as_ref()
                    })
                    .collect();
                self.answer(t, own, &candidates, &settings)
            })
            .collect()
    }

    /// What the index holds of the passages of `own` (a text as reuse keeps it, the
    /// passages' boilerplate masked), aligned with each of its `candidates` (in number order).
    fn answer(
        &self,
        t: &ReaderTables,
        own: &Text,
        candidates: &[&Candidate],
        settings: &crate::reuse::Settings,
    ) -> Result<ReuseAnswer> {
        let mut answer = ReuseAnswer {
            words: own.words,
            ..ReuseAnswer::default()
        };
        let prepared = Prepared::new(own);
        let mut scratch = AlignScratch::default();
        let mut found = vec![false; own.words as usize];
        let mut names: FxHashMap<u32, String> = FxHashMap::default();
        for candidate in candidates {
            let (record, other) = (&candidate.record, &candidate.text);
            let f = align_prepared(
                &prepared,
                other,
                candidate.distinct,
                settings.rules,
                &mut scratch,
            );
            if !is_reuse(&f, own.words, other.words, settings) {
                continue;
            }
            let text_passages =
                passages_prepared(&prepared, other, settings.rules, &mut scratch, &mut found);
            answer.matches.push(ReuseMatch {
                doc_id: record.id.clone(),
                story_id: self.story_name(t, record.story, &mut names)?,
                a_in_b: share(f.a.shared, own.words),
                b_in_a: share(f.b.shared, other.words),
                shared_words: f.a.shared.min(f.b.shared),
                passages: f.a.passages.min(f.b.passages),
                longest: f.a.longest.min(f.b.longest),
                jaccard: f.jaccard,
                text_passages,
            });
        }
        answer.found_words = found.iter().filter(|&&f| f).count() as u32;
        answer.matches.sort_by(|a, b| {
            b.shared_words
                .cmp(&a.shared_words)
                .then_with(|| a.doc_id.cmp(&b.doc_id))
        });
        Ok(answer)
    }

    /// The name of story `number`, read once a query.
    fn story_name(
        &self,
        t: &ReaderTables,
        number: u32,
        names: &mut FxHashMap<u32, String>,
    ) -> Result<String> {
        if let std::collections::hash_map::Entry::Vacant(slot) = names.entry(number) {
            let story = t
                .stories
                .get(number)?
                .ok_or(IndexError::damaged(Damage::LostStory { number }))?;
            slot.insert(StoryRecord::decode(story.value())?.name);
        }
        Ok(names[&number].clone())
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
        // A story posts each key once (see `index::add::POSTERS_PER_KEY`): the
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
