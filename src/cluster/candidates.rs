//! Candidate pairs: the candidate index (each document's candidate keys, a sorted list of
//! `(key, document)` entries whose runs of equal keys are buckets), made and read one key range
//! at a time for a large collection, and the bucket rules that turn buckets into pairs: all
//! pairs of a small bucket, a star from the first fresh member of a larger one, nothing from a
//! bucket of more than `cluster.max-bucket` distinct documents (boilerplate, counted as cut).
//! Copies stand in their originals' buckets.

use std::ops::Range;

use rayon::prelude::*;

use super::copies::Copies;
use super::ClusterStats;
use crate::config::{Config, Plan};
use crate::engine::sorting::par_sort_by_prefix;
use crate::sketch::keys::KeyMaker;
use crate::sketch::Sketch;
use crate::{Cancel, Error};

/// Buckets up to this size give all their pairs.
pub const ALL_PAIRS_BUCKET: usize = 16;

/// What a bucket of the candidate index gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BucketRule {
    /// Nothing: a bucket of more than `cluster.max-bucket` distinct documents is cut.
    Cut,
    /// All its pairs: it stands for at most [`ALL_PAIRS_BUCKET`] documents.
    AllPairs,
    /// A star: each document paired with the bucket's first (fresh) document, its anchor.
    Star,
}

/// The rule for a bucket of `distinct` documents that stand for `weight` documents (each
/// with its copies) under `cluster.max-bucket` = `max_bucket`.
pub fn bucket_rule(distinct: usize, weight: usize, max_bucket: usize) -> BucketRule {
    if distinct > max_bucket {
        BucketRule::Cut
    } else if weight <= ALL_PAIRS_BUCKET {
        BucketRule::AllPairs
    } else {
        BucketRule::Star
    }
}

/// One entry of the candidate index: a candidate key and a document that has it. Packed, it
/// takes 12 bytes where a `(u64, u32)` takes 16. Entries order by key, then document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(C, packed(4))]
pub(crate) struct IndexEntry {
    /// The candidate key.
    pub key: u64,
    /// The document.
    pub doc: u32,
}

/// Most entries of the candidate index made at once, about: the keys are cut into as many
/// ranges as it takes for each range's share of the index to stay below this, and the ranges
/// are indexed one after another (see [`indexed_pairs`]). A million documents have tens of
/// millions of entries, 12 bytes each ([`IndexEntry`]); made whole, the index alone would take
/// half a gigabyte, and in ranges of 2^23 (96 MiB) it is made in six. Up to the number of keys
/// per document a range costs no work of its own (each range makes only its own key numbers).
pub(super) const INDEX_ENTRIES_PER_RANGE: usize = 1 << 23;

/// Fewest ranges the candidate index is made in (while there are as many keys a document):
/// a collection whose whole index would fit one range still makes it an eighth at a time, so
/// the index is never the largest thing a run holds (a night of 100,000 documents joined
/// with 60,000 indexed ones makes 80 MB of entries, 10 MB a range). Each range makes only
/// its own keys, so this costs merging a few short lists of pairs.
pub(super) const MIN_RANGES: usize = 8;

/// Documents whose entries of one part of the key values one task makes.
pub(super) const RANGE_CHUNK_DOCUMENTS: usize = 4096;

/// The deduplicated candidate pairs of the sketches (see [`candidate_pairs`]), their candidate
/// index made one range at a time, each range holding about `per_range` entries, and each
/// range's pairs merged into those of the ranges before. A range is a run of key numbers (a
/// key's number is hashed into it, so equal keys share it), so each key is made once; past
/// one range per key number, each number's keys are also cut by value, and made again for
/// each part. Stops with [`Error::Cancelled`] between ranges once `cancel` is cancelled.
pub(super) fn indexed_pairs(
    sketches: &[Sketch],
    config: &Plan,
    bucketing: &mut Bucketing,
    per_range: usize,
    cancel: &Cancel,
) -> Result<Vec<(u32, u32)>, Error> {
    let maker = &config.key_maker;
    let comparable: Vec<u32> = (bucketing.indexed_from..sketches.len() as u32)
        .filter(|&d| sketches[d as usize].is_comparable() && !bucketing.copies.is_copy(d))
        .collect();
    let per_document = maker.keys_per_signature().max(1);
    let ranges = (comparable.len() * per_document)
        .div_ceil(per_range.max(1))
        .max(MIN_RANGES.min(per_document));
    let runs = ranges.min(per_document);
    let parts = ranges.div_ceil(runs) as u64;
    let mut pairs: Vec<(u32, u32)> = Vec::new();
    for run in 0..runs {
        let keys = run * per_document / runs..(run + 1) * per_document / runs;
        for part in 0..parts {
            cancel.check()?;
            let index = candidate_index(sketches, &comparable, maker, keys.clone(), (part, parts));
            let found = candidate_pairs(index, bucketing);
            pairs = if pairs.is_empty() {
                found
            } else {
                merge_distinct(&pairs, &found)
            };
        }
    }
    Ok(pairs)
}

/// The union of two sorted lists of distinct pairs, sorted.
pub(super) fn merge_distinct(a: &[(u32, u32)], b: &[(u32, u32)]) -> Vec<(u32, u32)> {
    let mut merged = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => {
                merged.push(a[i]);
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                merged.push(b[j]);
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                merged.push(a[i]);
                i += 1;
                j += 1;
            }
        }
    }
    merged.extend_from_slice(&a[i..]);
    merged.extend_from_slice(&b[j..]);
    merged
}

/// The candidate index of the `comparable` documents: their keys numbered `keys`, of those
/// whose value falls in part `part.0` of `part.1` equal parts of the key space.
pub(super) fn candidate_index(
    sketches: &[Sketch],
    comparable: &[u32],
    maker: &KeyMaker,
    keys: Range<usize>,
    (part, parts): (u64, u64),
) -> Vec<IndexEntry> {
    // A document's keys, made into a list each thread keeps.
    let keys_of = |doc: u32, made: &mut Vec<u64>| {
        made.clear();
        let signature = &sketches[doc as usize].signature;
        maker.append_candidate_keys_in(signature, keys.clone(), made);
    };
    if parts == 1 {
        // Filled in place, each document's keys in its own slots: no list is grown.
        let per_document = keys.len();
        let mut index = vec![IndexEntry { key: 0, doc: 0 }; comparable.len() * per_document];
        index
            .par_chunks_mut(per_document.max(1))
            .zip(comparable)
            .for_each_init(Vec::new, |made, (slots, &doc)| {
                keys_of(doc, made);
                debug_assert_eq!(made.len(), slots.len());
                for (slot, &key) in slots.iter_mut().zip(made.iter()) {
                    *slot = IndexEntry { key, doc };
                }
            });
        return index;
    }
    // Each thread's share of the part's entries in one list, the lists then joined.
    let in_part = |key: u64| ((u128::from(key) * u128::from(parts)) >> 64) as u64 == part;
    let lists: Vec<Vec<IndexEntry>> = comparable
        .par_chunks(RANGE_CHUNK_DOCUMENTS)
        .map(|documents| {
            let (mut entries, mut made) = (Vec::new(), Vec::new());
            for &doc in documents {
                keys_of(doc, &mut made);
                let keys = made.iter().copied().filter(|&key| in_part(key));
                entries.extend(keys.map(|key| IndexEntry { key, doc }));
            }
            entries
        })
        .collect();
    lists.concat()
}

/// How candidate generation turns buckets into pairs, and what it counts as it goes.
#[derive(Debug)]
pub(super) struct Bucketing<'c> {
    /// A bucket of more distinct documents than this is cut.
    max_bucket: usize,
    /// Pairs of two documents before this one are left out.
    fresh_from: u32,
    /// Documents before this one are in no bucket (their pairs are given).
    indexed_from: u32,
    /// The copies: each stands in its original's buckets, and takes no part itself.
    copies: &'c Copies,
    /// Distinct candidate keys.
    keys: usize,
    /// Buckets cut.
    cut_buckets: usize,
    /// The documents in cut buckets, one bit each.
    cut_documents: Vec<u64>,
}

impl<'c> Bucketing<'c> {
    pub(super) fn new(config: &Config, fresh_from: u32, copies: &'c Copies) -> Bucketing<'c> {
        Bucketing {
            max_bucket: config.cluster.max_bucket,
            fresh_from,
            indexed_from: 0,
            copies,
            keys: 0,
            cut_buckets: 0,
            cut_documents: Vec::new(),
        }
    }

    /// Leaves the known documents (those before `fresh_from`) out of every bucket: their
    /// pairs with the fresh ones are given.
    pub(super) fn index_fresh_only(&mut self) {
        self.indexed_from = self.fresh_from;
    }

    /// Counts a cut bucket and marks its documents.
    pub(super) fn cut(&mut self, bucket: &[IndexEntry]) {
        self.cut_buckets += 1;
        for entry in bucket {
            let doc = entry.doc as usize;
            if self.cut_documents.len() <= doc / 64 {
                self.cut_documents.resize(doc / 64 + 1, 0);
            }
            self.cut_documents[doc / 64] |= 1 << (doc % 64);
        }
    }

    /// The documents in cut buckets, each with its copies.
    pub(super) fn documents_in_cut_buckets(&self) -> usize {
        let mut documents = 0;
        for (word_index, &word) in self.cut_documents.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                let doc = word_index * 64 + bits.trailing_zeros() as usize;
                documents += self.copies.weight(doc as u32) as usize;
                bits &= bits - 1;
            }
        }
        documents
    }

    /// The rule for a bucket.
    fn rule(&self, bucket: &[IndexEntry]) -> BucketRule {
        if bucket.len() > self.max_bucket {
            return BucketRule::Cut; // without adding up its weight
        }
        bucket_rule(bucket.len(), self.weight(bucket), self.max_bucket)
    }

    /// The documents a bucket stands for: each of its documents with its copies.
    fn weight(&self, bucket: &[IndexEntry]) -> usize {
        bucket
            .iter()
            .map(|e| self.copies.weight(e.doc) as usize)
            .sum()
    }

    /// Puts its counts into `stats`.
    pub(super) fn count_into(&self, stats: &mut ClusterStats) {
        stats.keys = self.keys;
        stats.cut_buckets = self.cut_buckets;
        stats.cut_bucket_documents = self.documents_in_cut_buckets();
    }
}

/// Deduplicated candidate pairs `(a, b)` with `a < b` and `b >= fresh_from` from a candidate
/// index whose copies are left out: pairs of two known documents are left out, a bucket of
/// more than `max_bucket` distinct documents is cut, and a bucket that stands for more than
/// `ALL_PAIRS_BUCKET` documents (with the copies of its own) is anchored at its first fresh
/// member. Counting a bucket with its copies pairs it as it would be paired with its copies in
/// it, less the pairs of copies, which their originals stand for.
pub(super) fn candidate_pairs(
    mut index: Vec<IndexEntry>,
    bucketing: &mut Bucketing,
) -> Vec<(u32, u32)> {
    par_sort_by_prefix(&mut index, |entry| entry.key);
    index.dedup();
    let buckets = || index.chunk_by(|a, b| { a.key } == { b.key });
    // Counted first, so that the list is made at its size rather than grown by doubling,
    // which would hold half as much again while it grows, beside the index.
    let count: usize = buckets().map(|bucket| pairs_in(bucket, bucketing)).sum();
    let mut pairs = Vec::with_capacity(count);
    for bucket in buckets() {
        bucketing.keys += 1;
        let rule = bucketing.rule(bucket);
        if rule == BucketRule::Cut {
            bucketing.cut(bucket);
            continue;
        }
        bucket_pairs(bucket, rule, bucketing.fresh_from, |pair| pairs.push(pair));
    }
    debug_assert_eq!(pairs.len(), count, "the count is of the pairs made");
    drop(index);
    par_sort_by_prefix(&mut pairs, |&(a, b)| u64::from(a) << 32 | u64::from(b));
    pairs.dedup();
    // A pair found through several keys is listed once: the rest goes back.
    pairs.shrink_to_fit();
    pairs
}

/// How many pairs [`bucket_pairs`] gives for a bucket, counted without making them.
fn pairs_in(bucket: &[IndexEntry], bucketing: &Bucketing) -> usize {
    // Documents are sorted within the bucket, so its fresh documents come last.
    let n = bucket.len();
    let fresh = || n - bucket.partition_point(|e| e.doc < bucketing.fresh_from);
    match bucketing.rule(bucket) {
        BucketRule::Cut => 0,
        // Each fresh document pairs with every document before it.
        BucketRule::AllPairs => (n - fresh()..n).sum(),
        BucketRule::Star if fresh() > 0 => n - 1,
        BucketRule::Star => 0,
    }
}

/// Gives each candidate pair of one bucket of the candidate index (entries of one key, at most
/// `cluster.max-bucket`) to `pair`. Every pair holds a fresh document: in a small bucket all
/// pairs, in a larger one each document with the first fresh one (the anchor).
fn bucket_pairs(
    bucket: &[IndexEntry],
    rule: BucketRule,
    fresh_from: u32,
    mut pair: impl FnMut((u32, u32)),
) {
    if rule == BucketRule::AllPairs {
        for (i, a) in bucket.iter().enumerate() {
            bucket[i + 1..]
                .iter()
                .map(|b| b.doc)
                .filter(|&b| b >= fresh_from)
                .for_each(|b| pair((a.doc, b)));
        }
    } else if let Some(anchor) = bucket.iter().map(|e| e.doc).find(|&d| d >= fresh_from) {
        // Documents are sorted within the bucket, so the anchor is the first fresh one.
        bucket
            .iter()
            .map(|e| e.doc)
            .filter(|&d| d != anchor)
            .for_each(|d| pair((d.min(anchor), d.max(anchor))));
    }
}
