//! Removing duplicates from clustered documents: each story keeps one record (chosen by a
//! [`Keep`] policy) and loses a member only when that member itself is close to the kept record,
//! by its exact Jaccard or by the share of its shingles found in the kept record. A story is a
//! union-find component, so a member may have joined through another member and share little
//! with the kept record; such a member is kept, never dropped for its story's sake. The rule
//! applies to a whole collection ([`deduplicate`]) and to the stories of one group clustered
//! elsewhere ([`deduplicate_group`], for a job that clusters groups on many machines).

use rayon::prelude::*;

use crate::cluster::intersection::intersection_size;
use crate::cluster::{estimate_containment, Cluster};
use crate::config::{Config, DedupConfig, Keep, Verify};
use crate::corpus::set_store::{SetStore, SetsView};
use crate::engine::{Collection, Ids};
use crate::error::{Error, Result};
use crate::sketch::signature::estimate_jaccard;
use crate::sketch::Sketch;
use crate::sketcher::{DocumentSketch, Placement};

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
    let members: Vec<u32> = cluster.members.iter().map(|&(doc, _)| doc).collect();
    chosen_member(
        &members,
        keep,
        |doc| collection.origins[doc as usize].order,
        |doc| collection.sketches[doc as usize].words,
        |doc| collection.times[doc as usize],
    )
}

/// The member of a story (its members in the story's order, the representative first) that
/// `keep` keeps, given each member's place in the read order, its canonical words and its time.
fn chosen_member<O: Ord>(
    members: &[u32],
    keep: Keep,
    read_order: impl Fn(u32) -> O,
    words: impl Fn(u32) -> u32,
    time: impl Fn(u32) -> Option<i64>,
) -> u32 {
    let representative = members[0];
    let members = members.iter().copied();
    match keep {
        Keep::Representative => Some(representative),
        Keep::First => members.min_by_key(|&d| read_order(d)),
        Keep::Longest => members.min_by(|&a, &b| {
            words(b)
                .cmp(&words(a))
                .then_with(|| read_order(a).cmp(&read_order(b)))
        }),
        Keep::Earliest => members.min_by_key(|&d| {
            // Documents without a time sort after every time.
            let time = time(d);
            (time.is_none(), time, read_order(d))
        }),
    }
    .unwrap_or(representative)
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
    let both = kept_set.and_then(|kept_set| Some((sets.get(doc, buffer)?, kept_set)));
    sketch_similarity(a, b, both)
}

/// The Jaccard of a member (sketch `a`) with the kept record (sketch `b`) and the share of the
/// member's shingles in it: exact from their sets when given (member's, kept record's), else
/// estimated from the minima; `None` when the member's given set is empty. Both sketches are
/// comparable.
fn sketch_similarity(a: &Sketch, b: &Sketch, sets: Option<(&[u32], &[u32])>) -> Option<(f64, f64)> {
    if let Some((set, kept_set)) = sets {
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

/// A record that [`deduplicate_group`] removes: indices into the group.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GroupDuplicate {
    /// The removed record.
    pub doc: usize,
    /// The kept record of its story.
    pub duplicate_of: usize,
    /// Jaccard with the kept record (exact under `cluster.verify = "exact"`, else estimated).
    pub jaccard: f64,
    /// Share of the removed record's shingles found in the kept record.
    pub containment: f64,
}

impl GroupDuplicate {
    /// The similarity that removed it: the larger of its Jaccard and containment.
    pub fn similarity(&self) -> f64 {
        self.jaccard.max(self.containment)
    }
}

/// Deduplicates the stories of one group as `deduplicate` does a collection's: `placements`
/// are the group's clustering as [`cluster_group`](crate::cluster_group) gives it (each story's
/// members together, its representative first), `read_order` each document's place in the
/// collection's read order (for `dedup.keep = "first"` and every tie) and `times` each one's
/// time (for `"earliest"`; none when absent). The removed records come story by story in the
/// placements' order.
pub fn deduplicate_group(
    config: &Config,
    documents: &[DocumentSketch],
    placements: &[Placement],
    read_order: &[i64],
    times: Option<&[Option<i64>]>,
) -> Vec<GroupDuplicate> {
    assert_eq!(documents.len(), read_order.len(), "one place per document");
    let dedup = &config.dedup;
    let exact = config.cluster.verify == Verify::Exact;
    let sketches: Vec<Sketch> = documents.iter().map(DocumentSketch::to_sketch).collect();
    let mut removed = Vec::new();
    for story in placements.chunk_by(|a, b| a.cluster == b.cluster) {
        if story.len() < 2 {
            continue;
        }
        let members: Vec<u32> = story.iter().map(|p| p.doc as u32).collect();
        let kept = chosen_member(
            &members,
            dedup.keep,
            |d| read_order[d as usize],
            |d| documents[d as usize].words,
            |d| times.and_then(|t| t[d as usize]),
        ) as usize;
        for doc in members.iter().map(|&d| d as usize).filter(|&d| d != kept) {
            let (a, b) = (&sketches[doc], &sketches[kept]);
            if !a.is_comparable() || !b.is_comparable() {
                continue;
            }
            let sets = exact.then(|| {
                (
                    documents[doc].shingles.as_slice(),
                    documents[kept].shingles.as_slice(),
                )
            });
            let Some((jaccard, containment)) = sketch_similarity(a, b, sets) else {
                continue;
            };
            if jaccard.max(containment) >= dedup.threshold {
                removed.push(GroupDuplicate {
                    doc,
                    duplicate_of: kept,
                    jaccard,
                    containment,
                });
            }
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{cluster_group, Clusterer, DocumentSketcher};

    const STORY: &str = "the regional council approved the new budget for public transport on \
        monday after three hours of debate about bus routes fares and the night service";

    /// Five records read in this order, four of one story, one far longer than the others.
    fn records() -> Vec<(&'static str, String)> {
        vec![
            ("e", STORY.replace("monday", "tuesday")),
            ("b", "a recipe for bread with flour water salt and yeast baked in a hot oven".into()),
            ("d", format!("{STORY} and the mayor")),
            ("a", STORY.to_owned()),
            ("c", format!("{STORY} while the opposition asked for a referendum on the new fares next spring")),
        ]
    }

    #[test]
    fn a_group_loses_the_records_the_collection_loses_under_every_keep() {
        for verify in [Verify::Exact, Verify::Estimate] {
            for keep in [
                Keep::Representative,
                Keep::First,
                Keep::Longest,
                Keep::Earliest,
            ] {
                let mut config = Config::default();
                config.boilerplate.min_documents = 0;
                config.boilerplate.min_stories = 0;
                config.cluster.verify = verify;
                config.dedup.keep = keep;
                config.dedup.threshold = 0.5;
                let records = records();
                let mut clusterer = Clusterer::new(&config).unwrap();
                for (id, text) in &records {
                    clusterer.add(*id, text).unwrap();
                }
                let clusters = clusterer.finish().unwrap();
                let expected: Vec<(&str, &str, f64, f64)> = clusters
                    .deduplicate(&config.dedup)
                    .unwrap()
                    .duplicates()
                    .iter()
                    .map(|d| (d.doc_id, d.duplicate_of, d.jaccard, d.containment))
                    .collect();
                assert!(!expected.is_empty(), "{verify:?} {keep}");

                let ids: Vec<&str> = records.iter().map(|(id, _)| *id).collect();
                let texts: Vec<&str> = records.iter().map(|(_, t)| t.as_str()).collect();
                let sketches = DocumentSketcher::new(&config)
                    .unwrap()
                    .sketch_batch(&texts)
                    .unwrap();
                let placed = cluster_group(&config, &ids, &sketches).unwrap();
                let read_order: Vec<i64> = (0..ids.len() as i64).collect();
                let got: Vec<(&str, &str, f64, f64)> =
                    deduplicate_group(&config, &sketches, &placed, &read_order, None)
                        .iter()
                        .map(|d| (ids[d.doc], ids[d.duplicate_of], d.jaccard, d.containment))
                        .collect();
                assert_eq!(got, expected, "{verify:?} {keep}");
            }
        }
    }

    #[test]
    fn keep_chooses_by_read_order_words_and_time() {
        let mut config = Config::default();
        config.boilerplate.min_documents = 0;
        config.boilerplate.min_stories = 0;
        config.dedup.threshold = 0.0;
        let records = records();
        let ids: Vec<&str> = records.iter().map(|(id, _)| *id).collect();
        let texts: Vec<&str> = records.iter().map(|(_, t)| t.as_str()).collect();
        let sketches = DocumentSketcher::new(&config)
            .unwrap()
            .sketch_batch(&texts)
            .unwrap();
        let placed = cluster_group(&config, &ids, &sketches).unwrap();
        let kept = |keep: Keep, read_order: &[i64], times: Option<&[Option<i64>]>| {
            let mut config = config.clone();
            config.dedup.keep = keep;
            let removed = deduplicate_group(&config, &sketches, &placed, read_order, times);
            assert_eq!(removed.len(), 3, "{keep}");
            ids[removed[0].duplicate_of]
        };
        assert_eq!(kept(Keep::First, &[0, 1, 2, 3, 4], None), "e");
        assert_eq!(kept(Keep::First, &[4, 3, 2, 1, 0], None), "c");
        assert_eq!(kept(Keep::Longest, &[0, 1, 2, 3, 4], None), "c");
        let times = [None, None, Some(20), Some(10), None];
        assert_eq!(kept(Keep::Earliest, &[0, 1, 2, 3, 4], Some(&times)), "a");
        // Without times, the first read.
        assert_eq!(kept(Keep::Earliest, &[0, 1, 2, 3, 4], None), "e");
    }
}
