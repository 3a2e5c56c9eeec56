//! Which indexed candidates a night may link to. The postings give every indexed document
//! that shares a key with a night's document; most share it with documents they do not
//! resemble. Each candidate is paired with the night's documents the join may pair it with
//! (those sharing one of its candidate keys, as the join's buckets would hold them) and
//! checked from the minima, as the join checks a pair with an indexed document. A candidate
//! that passes with none of them, and makes no weak link, can only crowd the join's buckets,
//! so it is not loaded.

use rayon::prelude::*;

use crate::cluster::ALL_PAIRS_BUCKET;
use crate::config::Resolved;
use crate::sketch::keys::KeyMaker;
use crate::sketch::Sketch;

/// The first fresh documents of a large bucket that a candidate is checked against: the join
/// pairs it with the first one that is not a copy (see [`ALL_PAIRS_BUCKET`]), and a few stand
/// in for copies among the first.
const ANCHORS_CHECKED: usize = 4;

/// A night's documents by candidate key, for examining candidates against them.
pub(crate) struct FreshBuckets<'f> {
    /// `(key, fresh document)`, sorted and distinct: a run of one key is its fresh bucket.
    entries: Vec<(u64, u32)>,
    /// The night's sketches, their minima cut as the index keeps them (16 bits).
    fresh: &'f [Sketch],
}

impl<'f> FreshBuckets<'f> {
    /// The buckets of the comparable `fresh` sketches.
    pub(crate) fn of(fresh: &'f [Sketch], maker: &KeyMaker) -> FreshBuckets<'f> {
        let mut entries: Vec<(u64, u32)> = keyed(fresh, maker);
        entries.par_sort_unstable();
        entries.dedup();
        FreshBuckets { entries, fresh }
    }

    /// Whether each of `candidates` (indexed documents' sketches, 16-bit minima widened) may
    /// link to a fresh document: its estimated pair with one passes verification, or is a weak
    /// link (`cluster.attach-similarity`). A candidate is paired with the fresh documents the
    /// join may pair it with: all of a small fresh bucket of one of its keys, the first few of
    /// a larger one (the join pairs a large bucket from its first fresh member), none of one
    /// the join cuts.
    pub(crate) fn linking(&self, candidates: &[Sketch], config: &Resolved) -> Vec<bool> {
        let max_bucket = config.cluster.max_bucket;
        let (verifier, attach) = (config.verifier, config.cluster.attach_similarity);
        // The candidates' keys, sorted, walked beside the fresh buckets.
        let mut keys = keyed(candidates, &config.key_maker);
        keys.par_sort_unstable();
        let mut pairs: Vec<(u32, u32)> = Vec::new();
        let mut at = 0;
        for run in keys.chunk_by(|a, b| a.0 == b.0) {
            let key = run[0].0;
            while self.entries.get(at).is_some_and(|&(k, _)| k < key) {
                at += 1;
            }
            let size = self.entries[at..]
                .iter()
                .take_while(|&&(k, _)| k == key)
                .count();
            let partnering = match size {
                size if size > max_bucket => 0,
                size if size > ALL_PAIRS_BUCKET => ANCHORS_CHECKED,
                size => size,
            };
            let partners = &self.entries[at..at + partnering];
            for &(_, candidate) in run {
                pairs.extend(partners.iter().map(|&(_, doc)| (candidate, doc)));
            }
        }
        drop(keys);
        pairs.par_sort_unstable();
        pairs.dedup();
        let passing: Vec<bool> = pairs
            .par_iter()
            .map(|&(candidate, doc)| {
                let (a, b) = (&candidates[candidate as usize], &self.fresh[doc as usize]);
                verifier.may_link_estimated(a, b, attach)
            })
            .collect();
        let mut linking = vec![false; candidates.len()];
        for (&(candidate, _), passes) in pairs.iter().zip(passing) {
            linking[candidate as usize] |= passes;
        }
        linking
    }
}

/// `(key, document)` for every candidate key of every comparable sketch, unsorted.
fn keyed(sketches: &[Sketch], maker: &KeyMaker) -> Vec<(u64, u32)> {
    sketches
        .par_iter()
        .enumerate()
        .filter(|(_, sketch)| sketch.is_comparable())
        .flat_map_iter(|(i, sketch)| {
            let keys = maker.candidate_keys(&sketch.signature);
            keys.into_iter().map(move |key| (key, i as u32))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Config, Matching};

    /// The classic grouping: six groups of 14 minima, megashingles.
    fn classic(attach: f64) -> Resolved {
        let mut config = Config::default();
        config.supershingle.target_similarity = 0.0;
        config.supershingle.groups = 6;
        config.supershingle.minima_per_group = 14;
        config.supershingle.matching = Matching::Megashingle;
        config.cluster.attach_similarity = attach;
        config.resolve()
    }

    /// A sketch of 100 shingles whose first `shared` minima are those of `0..84` and whose
    /// others are its own (numbered from `own`).
    fn sharing(shared: u32, own: u32) -> Sketch {
        let minima = (0..shared).chain(own..own + 84 - shared).collect();
        Sketch::with_minima(minima, 100)
    }

    #[test]
    fn a_candidate_is_kept_when_a_pair_passes_or_makes_a_weak_link() {
        let fresh = vec![sharing(84, 0)];
        let candidates = vec![
            sharing(84, 0),                             // the same text: it passes
            sharing(28, 1_000), // two groups alike: a key, and 0.33 estimated
            sharing(27, 2_000), // one group and a minimum alike: no key
            Sketch::with_minima(vec![u32::MAX; 84], 0), // no shingles
        ];
        let config = classic(0.2);
        let buckets = FreshBuckets::of(&fresh, &config.key_maker);
        assert_eq!(
            buckets.linking(&candidates, &config),
            [true, true, false, false]
        );
        // Without weak links, 0.33 less its margin is below `cluster.min-similarity`.
        let config = classic(0.0);
        assert_eq!(
            buckets.linking(&candidates, &config),
            [true, false, false, false]
        );
    }

    #[test]
    fn a_large_bucket_pairs_a_candidate_with_its_first_fresh_documents_only() {
        // Five groups of 14 minima: the last 14 minima make no key. Fresh documents that
        // differ from the candidate there only share every key with it, and estimate 0.83,
        // which fails at `min-similarity` 0.9 (containment off); the same text passes.
        let mut config = Config::default();
        config.supershingle.target_similarity = 0.0;
        config.supershingle.groups = 5;
        config.supershingle.minima_per_group = 14;
        config.cluster.min_similarity = 0.9;
        config.cluster.min_containment = 1.1;
        config.cluster.attach_similarity = 0.0;
        let config = config.resolve();
        let candidates = vec![sharing(84, 0)];
        let night = |identical: usize| -> Vec<Sketch> {
            let differing = (1..=ANCHORS_CHECKED as u32).map(|i| sharing(70, 1_000 * i));
            differing
                .chain((0..identical).map(|_| sharing(84, 0)))
                .collect()
        };
        // A small bucket: the candidate is paired with all of it, its own text among them.
        let small = night(ALL_PAIRS_BUCKET - ANCHORS_CHECKED);
        let buckets = FreshBuckets::of(&small, &config.key_maker);
        assert_eq!(buckets.linking(&candidates, &config), [true]);
        // A large one: only with its first few, which do not pass.
        let large = night(ALL_PAIRS_BUCKET);
        let buckets = FreshBuckets::of(&large, &config.key_maker);
        assert_eq!(buckets.linking(&candidates, &config), [false]);
    }
}
