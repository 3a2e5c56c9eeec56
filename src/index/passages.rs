//! The passages an index keeps (formats 4 and 6), so that reuse is found through it as
//! `reuse` finds it in a batch: each document's main text as reuse keeps it (its shingle keys
//! in text order, boilerplate masked: see [`crate::reuse::Text`]) in a zstd frame, for the
//! exact alignment; and the postings of its winnowed fingerprints ([`crate::reuse::winnow`]), for
//! the candidates. An add writes both for its documents ([`PassageWriter::write`]) on a
//! thread of its own, beside its other tables; a query of a text reads the fingerprints'
//! postings, keeps the indexed documents that share two fingerprints with it, and aligns it
//! with each ([`PassageReader`]).

use std::sync::OnceLock;

use rayon::prelude::*;
use redb::{ReadOnlyTable, ReadTransaction, ReadableTable, WriteTransaction};
use rustc_hash::FxHashMap;

use crate::corpus::boilerplate::Boilerplate;
use crate::engine::sequences::Sequences;
use crate::index::boilerplate::{add_passage_boilerplate, KnownBoilerplate};
use crate::index::error::Result;
use crate::index::lists::{KeyFile, KeyLists};
use crate::index::postings::LookUp;
use crate::index::schema::{
    decode_passages, encode_passages, table, META, PASSAGES, PASSAGE_CHUNKS, PASSAGE_DEAD,
    PASSAGE_SEGMENTS,
};
use crate::index::store::{PassageTables, Tables};
use crate::reuse::texts::{mask, MaskBuffers};
use crate::reuse::{winnow, Text, MIN_SHARED_FINGERPRINTS};

/// Fingerprint pairs made in one pass of a key range, about, when an add writes its segment:
/// 8 MiB of pairs at a time (twice that while they are sorted), as the segment is mostly
/// written while the stories are joined, at the add's peak.
const PASS_PAIRS: usize = 1 << 20;

/// Documents whose records are encoded together on the worker threads.
const RECORDS_AT_ONCE: usize = 4096;

/// The key of `meta` that holds the window of the index's fingerprints.
const WINDOW_KEY: &str = "passage_window";

/// The window the index's fingerprints are made with: that of its first add, which
/// `configured` (the add's `reuse.window`) sets when there is none yet.
fn window(t: &mut Tables, configured: usize) -> Result<usize> {
    let stored = t.meta.get(WINDOW_KEY)?.map(|w| w.value().to_owned());
    match stored.and_then(|w| w.parse().ok()) {
        Some(window) => Ok(window),
        None => {
            t.meta.insert(WINDOW_KEY, configured.to_string().as_str())?;
            Ok(configured)
        }
    }
}

/// The window of the index's fingerprints as its `meta` table says (see [`window`]), else
/// `configured`.
pub(crate) fn stored_window(txn: &ReadTransaction, configured: usize) -> Result<usize> {
    let Some(meta) = table(txn, META)? else {
        return Ok(configured);
    };
    let stored = meta.get(WINDOW_KEY)?.and_then(|w| w.value().parse().ok());
    Ok(stored.unwrap_or(configured))
}

/// How an add writes its passages.
pub(crate) struct PassageAdd<'a> {
    /// The index as it was before the add (`None` when it is new).
    pub before: Option<&'a ReadTransaction>,
    /// The number of the add's first document.
    pub first_doc: u32,
    /// The add's `reuse.window`, which the index's first add makes its window.
    pub window: usize,
    /// The shingles of `boilerplate.min-documents` documents of the add or more, sorted.
    pub frequent: Vec<u32>,
}

/// The passages of an add, ready to be written by [`PassageWriter::write`]: the passage
/// tables (taken from the add's [`Tables`]) and what masking and winnowing need. It writes
/// only to the passage tables, so it runs on a thread of its own while the add writes the
/// others in the same transaction.
pub(crate) struct PassageWriter<'t> {
    tables: PassageTables<'t>,
    boilerplate: Boilerplate,
    first_doc: u32,
    window: usize,
}

/// Prepares the passages of an add when the index keeps them (`None` otherwise): settles the
/// index's window, and writes the add's passage boilerplate (the shingles of
/// `boilerplate.min-documents` documents of this add or more, `frequent`, that earlier adds
/// had not found). Takes the passage tables out of `t`.
pub(crate) fn prepare<'t>(
    txn: &'t WriteTransaction,
    t: &mut Tables<'t>,
    add: PassageAdd,
) -> Result<Option<PassageWriter<'t>>> {
    if t.passages.is_none() {
        return Ok(None);
    }
    let window = window(t, add.window)?;
    let known = match add.before {
        Some(before) => KnownBoilerplate::open_passages(before)?.all()?,
        None => Vec::new(),
    };
    let found: Vec<u32> = (add.frequent.iter())
        .copied()
        .filter(|k| known.binary_search(k).is_err())
        .collect();
    add_passage_boilerplate(txn, &found)?;
    Ok(Some(PassageWriter {
        tables: t.passages.take().expect("checked above"),
        boilerplate: Boilerplate::from_keys(known.into_iter().chain(add.frequent)),
        first_doc: add.first_doc,
        window,
    }))
}

impl PassageWriter<'_> {
    /// Writes the passages of the add's documents, numbered from its first in the order of
    /// `texts` (their shingle keys in text order, on file). The texts are read a chunk at a
    /// time, and each is masked of the passages' boilerplate as `reuse` masks a batch (the
    /// add's own and what earlier adds found). Then its record, and its fingerprints (with the
    /// index's window) as a new postings segment; the writer holds a chunk of texts, and the
    /// fingerprints wait on a temporary file ([`KeyFile`]) until the segment is written.
    /// Texts too short to have a shingle get no record. Returns the bytes of the postings
    /// segments merged; [`crate::Error::Spill`] when the texts' or the fingerprints' file
    /// cannot be written or read, and [`crate::Error::Cancelled`] once `stop` says so
    /// (checked between chunks).
    pub(crate) fn write(
        self,
        texts: Sequences,
        stop: impl Fn() -> bool,
    ) -> Result<crate::Result<u64>> {
        let PassageWriter {
            mut tables,
            boilerplate,
            first_doc,
            window,
        } = self;
        let mut fingerprints = match KeyFile::new() {
            Ok(file) => file,
            Err(failed) => return Ok(Err(crate::Error::spill(failed))),
        };
        let mut own_fingerprints = KeyLists::with_documents(RECORDS_AT_ONCE);
        for start in (0..texts.len()).step_by(RECORDS_AT_ONCE) {
            if stop() {
                return Ok(Err(crate::Error::Cancelled));
            }
            let end = texts.len().min(start + RECORDS_AT_ONCE);
            let mut group = match texts.texts(start as u32..end as u32) {
                Ok(group) => group,
                Err(failed) => return Ok(Err(crate::Error::spill(failed))),
            };
            let records: Vec<_> = group
                .par_iter_mut()
                .map_init(MaskBuffers::default, |buffers, text| {
                    if !boilerplate.is_empty() {
                        mask(text, &boilerplate, buffers);
                    }
                    let record = (!text.keys.is_empty()).then(|| encode_passages(text));
                    (record, winnow::fingerprints(&text.keys, window))
                })
                .collect();
            own_fingerprints.clear();
            for (i, (record, own)) in records.into_iter().enumerate() {
                if let Some(record) = record {
                    let number = first_doc + (start + i) as u32;
                    tables.records.insert(number, record.as_slice())?;
                }
                own_fingerprints.push(&own);
            }
            if let Err(failed) = fingerprints.append(&own_fingerprints) {
                return Ok(Err(crate::Error::spill(failed)));
            }
        }
        drop((texts, boilerplate, own_fingerprints));
        let passes = fingerprints.passes(PASS_PAIRS);
        let numbered = move |(fingerprint, doc): (u32, u32)| (fingerprint, first_doc + doc);
        // The first failed read of the fingerprints' file: the segment is then left
        // unfinished in the transaction, which is dropped.
        let failure = std::cell::Cell::new(None);
        let merged = tables.postings.add_segment_from(
            first_doc,
            (0..passes).flat_map(|pass| {
                let pairs = fingerprints
                    .pass_pairs(pass, passes)
                    .unwrap_or_else(|failed| {
                        let first = failure.take();
                        failure.set(first.or(Some(failed)));
                        Vec::new()
                    });
                pairs.into_iter().map(numbered)
            }),
        )?;
        match failure.take() {
            Some(failed) => Ok(Err(crate::Error::spill(failed))),
            None => Ok(Ok(merged)),
        }
    }
}

/// The passage tables of a read transaction, for queries.
pub(crate) struct PassageReader {
    records: ReadOnlyTable<u32, &'static [u8]>,
    chunks: ReadOnlyTable<(u32, u32), &'static [u8]>,
    look_up: LookUp,
    /// The passages' boilerplate.
    pub boilerplate: KnownBoilerplate,
    /// Shingles per winnowing window, as the index's adds made its fingerprints.
    pub window: usize,
    /// The passages' boilerplate read whole, for queries of many texts.
    all_boilerplate: OnceLock<Boilerplate>,
}

impl PassageReader {
    /// The passage tables as `txn` sees them, with the index's window; `None` when the index
    /// keeps no passages.
    pub fn open(txn: &ReadTransaction, window: usize) -> Result<Option<PassageReader>> {
        let (Some(records), Some(segments), Some(chunks), Some(dead)) = (
            table(txn, PASSAGES)?,
            table(txn, PASSAGE_SEGMENTS)?,
            table(txn, PASSAGE_CHUNKS)?,
            table(txn, PASSAGE_DEAD)?,
        ) else {
            return Ok(None);
        };
        Ok(Some(PassageReader {
            records,
            look_up: LookUp::read(&segments, &dead)?,
            chunks,
            boilerplate: KnownBoilerplate::open_passages(txn)?,
            window,
            all_boilerplate: OnceLock::new(),
        }))
    }

    /// The indexed documents that share at least two of `fingerprints` (sorted, distinct)
    /// with a text, sorted. A fingerprint that `max_bucket` or more indexed documents hold
    /// (so more than `max_bucket` with the text) pairs no one, as in a batch.
    pub fn candidates(&self, fingerprints: &[u32], max_bucket: usize) -> Result<Vec<u32>> {
        let found = self.pairing(fingerprints, max_bucket)?;
        Ok(shared_twice(
            found.into_iter().map(|(_, doc)| doc).collect(),
        ))
    }

    /// [`PassageReader::candidates`] of many texts, each one's fingerprints sorted and
    /// distinct: their fingerprints are looked up together, so that a chunk of the postings
    /// is read once for all of them, not once a text.
    pub fn candidates_of_many(
        &self,
        fingerprints: &[Vec<u32>],
        max_bucket: usize,
    ) -> Result<Vec<Vec<u32>>> {
        let mut all: Vec<u32> = fingerprints.iter().flatten().copied().collect();
        all.par_sort_unstable();
        all.dedup();
        let found = self.pairing(&all, max_bucket)?;
        drop(all);
        // Each fingerprint's bucket, found through a map: its documents' place in `holders`.
        let mut buckets: FxHashMap<u32, (u32, u32)> = FxHashMap::default();
        let mut holders: Vec<u32> = Vec::with_capacity(found.len());
        for bucket in found.chunk_by(|a, b| a.0 == b.0) {
            let start = holders.len() as u32;
            holders.extend(bucket.iter().map(|&(_, doc)| doc));
            buckets.insert(bucket[0].0, (start, holders.len() as u32));
        }
        drop(found);
        Ok(fingerprints
            .par_iter()
            .map(|own| {
                let mut documents = Vec::new();
                for fingerprint in own {
                    if let Some(&(start, end)) = buckets.get(fingerprint) {
                        documents.extend_from_slice(&holders[start as usize..end as usize]);
                    }
                }
                shared_twice(documents)
            })
            .collect())
    }

    /// The `(fingerprint, document)` pairs of `fingerprints` (sorted, distinct) whose
    /// buckets pair documents: those of fewer than `max_bucket` indexed documents.
    fn pairing(&self, fingerprints: &[u32], max_bucket: usize) -> Result<Vec<(u32, u32)>> {
        let found = self.look_up.find(&self.chunks, fingerprints, usize::MAX)?;
        Ok(found
            .chunk_by(|a, b| a.0 == b.0)
            .filter(|bucket| bucket.len() < max_bucket)
            .flatten()
            .copied()
            .collect())
    }

    /// Every shingle of the passages' boilerplate, read once.
    pub fn all_boilerplate(&self) -> Result<&Boilerplate> {
        if let Some(all) = self.all_boilerplate.get() {
            return Ok(all);
        }
        let all = Boilerplate::from_keys(self.boilerplate.all()?);
        Ok(self.all_boilerplate.get_or_init(|| all))
    }

    /// The text of indexed document `number`, of `words` words; `None` when it has no
    /// record (it was removed).
    pub fn text(&self, number: u32, words: u32) -> Result<Option<Text>> {
        match self.records.get(number)? {
            Some(bytes) => Ok(Some(decode_passages(number, words, bytes.value())?)),
            None => Ok(None),
        }
    }
}

/// The documents of `documents` (one entry a shared fingerprint) that share at least
/// [`MIN_SHARED_FINGERPRINTS`] with a text, sorted.
fn shared_twice(mut documents: Vec<u32>) -> Vec<u32> {
    documents.sort_unstable();
    documents
        .chunk_by(|a, b| a == b)
        .filter(|group| group.len() >= MIN_SHARED_FINGERPRINTS)
        .map(|group| group[0])
        .collect()
}
