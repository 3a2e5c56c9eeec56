//! Removing duplicates from clustered documents: each story keeps one record (chosen by a
//! [`Keep`] policy) and loses a member only when that member itself is close to the kept record,
//! by its exact Jaccard or by the share of its shingles found in the kept record. A story is a
//! union-find component, so a member may have joined through another member and share little
//! with the kept record; such a member is kept, never dropped for its story's sake.

use rayon::prelude::*;

use crate::cluster::intersection::intersection_size;
use crate::cluster::{estimate_containment, Cluster};
use crate::config::{DedupConfig, Keep};
use crate::corpus::set_store::{SetStore, SetsView};
use crate::engine::{Collection, Ids};
use crate::error::{Error, Result};
use crate::sketch::signature::estimate_jaccard;

/// A record removed as the duplicate of a kept one.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Duplicate<'a> {
    /// The removed record.
    pub doc_id: &'a str,
    /// The kept record of its story.
    pub duplicate_of: &'a str,
    /// Jaccard with the kept record: exact where the shingle sets are kept (`verify = "exact"`),
    /// else estimated from the minima.
    pub jaccard: f64,
    /// Share of the removed record's shingles found in the kept record.
    pub containment: f64,
}

impl Duplicate<'_> {
    /// The similarity that removed it: the larger of its Jaccard and containment.
    pub fn similarity(&self) -> f64 {
        self.jaccard.max(self.containment)
    }
}

/// Which records a deduplication keeps and which it removes.
#[derive(Debug, Clone)]
pub struct Deduplication<'a> {
    ids: &'a Ids,
    removed: Vec<bool>,
    duplicates: Vec<Duplicate<'a>>,
}

impl<'a> Deduplication<'a> {
    /// The removed records, story by story in the cluster table's order.
    pub fn duplicates(&self) -> &[Duplicate<'a>] {
        &self.duplicates
    }

    /// True when the record of this id was removed.
    pub fn is_duplicate(&self, id: &str) -> bool {
        // Documents are numbered in id order.
        self.ids
            .binary_search(id)
            .is_ok_and(|doc| self.removed[doc])
    }

    /// Records kept, in id order.
    pub fn kept(&self) -> impl Iterator<Item = &'a str> + '_ {
        self.ids
            .iter()
            .zip(&self.removed)
            .filter(|(_, &removed)| !removed)
            .map(|(id, _)| id)
    }
}

/// Deduplicates clustered documents: in each story the record `dedup.keep` chooses is kept,
/// and each other member whose Jaccard with it or containment in it reaches
/// `dedup.threshold` is removed. Fails only when the shingle sets' temporary file fails.
pub fn deduplicate<'a>(
    collection: &'a Collection,
    clusters: &[Cluster],
    dedup: &DedupConfig,
) -> Result<Deduplication<'a>> {
    let per_story = SetStore::reading_of(collection.sets.as_ref(), 0, |sets| {
        duplicates_per_story(collection, clusters, dedup, sets)
    })
    .map_err(Error::spill)?;
    let mut removed = vec![false; collection.ids.len()];
    let duplicates = per_story
        .into_iter()
        .flatten()
        .map(|(doc, kept, jaccard, containment)| {
            removed[doc as usize] = true;
            Duplicate {
                doc_id: &collection.ids[doc as usize],
                duplicate_of: &collection.ids[kept as usize],
                jaccard,
                containment,
            }
        })
        .collect();
    Ok(Deduplication {
        ids: &collection.ids,
        removed,
        duplicates,
    })
}

/// The duplicates in each story of two or more documents: `(duplicate, kept, jaccard,
/// containment)`.
fn duplicates_per_story(
    collection: &Collection,
    clusters: &[Cluster],
    dedup: &DedupConfig,
    sets: SetsView,
) -> Vec<Vec<(u32, u32, f64, f64)>> {
    clusters
        .par_iter()
        .filter(|c| c.members.len() > 1)
        .map_init(
            || (Vec::new(), Vec::new()),
            |(kept_buffer, buffer), cluster| {
                let kept = kept_member(collection, cluster, dedup.keep);
                let kept_set: Option<Vec<u32>> = sets.get(kept, kept_buffer).map(<[u32]>::to_vec);
                cluster
                    .members
                    .iter()
                    .map(|&(doc, _)| doc)
                    .filter(|&doc| doc != kept)
                    .filter_map(|doc| {
                        let (jaccard, containment) =
                            similarity(collection, doc, kept, kept_set.as_deref(), sets, buffer)?;
                        (jaccard.max(containment) >= dedup.threshold).then_some((
                            doc,
                            kept,
                            jaccard,
                            containment,
                        ))
                    })
                    .collect()
            },
        )
        .collect()
}

/// The member of a story that `keep` keeps.
fn kept_member(collection: &Collection, cluster: &Cluster, keep: Keep) -> u32 {
    let members = cluster.members.iter().map(|&(doc, _)| doc);
    let read_order = |doc: u32| &collection.origins[doc as usize].order;
    match keep {
        Keep::Representative => Some(cluster.representative()),
        Keep::First => members.min_by_key(|&d| read_order(d)),
        Keep::Longest => members.min_by(|&a, &b| {
            let words = |d: u32| collection.sketches[d as usize].words;
            words(b)
                .cmp(&words(a))
                .then_with(|| read_order(a).cmp(read_order(b)))
        }),
        Keep::Earliest => members.min_by_key(|&d| {
            // Documents without a time sort after every time.
            let time = collection.times[d as usize];
            (time.is_none(), time, read_order(d))
        }),
    }
    .unwrap_or_else(|| cluster.representative())
}

/// The Jaccard of `doc` with `kept` and the share of `doc`'s shingles in `kept`: exact from the
/// sets where they are kept, else estimated from the minima; `None` when either text has no
/// shingles.
fn similarity(
    collection: &Collection,
    doc: u32,
    kept: u32,
    kept_set: Option<&[u32]>,
    sets: SetsView,
    buffer: &mut Vec<u32>,
) -> Option<(f64, f64)> {
    let (a, b) = (
        &collection.sketches[doc as usize],
        &collection.sketches[kept as usize],
    );
    if !a.is_comparable() || !b.is_comparable() {
        return None;
    }
    if let (Some(kept_set), Some(set)) = (kept_set, sets.get(doc, buffer)) {
        if set.is_empty() {
            return None;
        }
        let common = intersection_size(set, kept_set);
        let union = set.len() + kept_set.len() - common;
        return Some((
            common as f64 / union as f64,
            common as f64 / set.len() as f64,
        ));
    }
    let jaccard = estimate_jaccard(&a.signature, &b.signature);
    // The shared shingles, estimated from the Jaccard and both sizes, over the member's.
    let common = estimate_containment(jaccard, a.shingles, b.shingles)
        * f64::from(a.shingles.min(b.shingles));
    Some((jaccard, (common / f64::from(a.shingles)).min(1.0)))
}
