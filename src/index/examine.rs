//! Which indexed candidates a night may link to. The postings give every indexed document
//! that shares a key with a night's document; most share it with documents they do not
//! resemble. Each candidate is paired with the night's documents the join may pair it with
//! (those sharing one of its posting keys, as the join's buckets would hold them) and
//! checked from the minima, as the join checks a pair with an indexed document. A candidate
//! that passes with none of them, and makes no weak link, can only crowd the join's buckets,
//! so it is not loaded.

use rayon::prelude::*;

use crate::cluster::ALL_PAIRS_BUCKET;
use crate::config::Plan;
use crate::sketch::Sketch;

/// The first fresh documents of a large bucket that a candidate is checked against: the join
/// pairs it with the first one that is not a copy (see [`ALL_PAIRS_BUCKET`]), and a few stand
/// in for copies among the first.
const ANCHORS_CHECKED: usize = 4;

/// The pairs `(indexed document, fresh document)` that share a posting key, from the look-up's
/// `found` pairs `(key, indexed document)` and the night's `fresh` pairs `(key, fresh
/// document)`, both sorted. A candidate is paired with the fresh documents the join may pair
/// it with: all of a small fresh bucket, the first few of a larger one (the join pairs a large
/// bucket from its first fresh member), none of one the join cuts (`cluster.max-bucket`).
/// Unsorted, with repeats.
pub(crate) fn paired(
    found: &[(u32, u32)],
    fresh: &[(u32, u32)],
    max_bucket: usize,
) -> Vec<(u32, u32)> {
    let mut pairs = Vec::new();
    let mut at = 0;
    for run in found.chunk_by(|a, b| a.0 == b.0) {
        let key = run[0].0;
        while fresh.get(at).is_some_and(|&(k, _)| k < key) {
            at += 1;
        }
        let size = fresh[at..].iter().take_while(|&&(k, _)| k == key).count();
        let partnering = match size {
            size if size > max_bucket => 0,
            size if size > ALL_PAIRS_BUCKET => ANCHORS_CHECKED,
            size => size,
        };
        let partners = &fresh[at..at + partnering];
        for &(_, candidate) in run {
            pairs.extend(partners.iter().map(|&(_, doc)| (candidate, doc)));
        }
    }
    pairs
}

/// Whether each of `candidates` (indexed documents' sketches, their 16-bit minima widened)
/// may link to one of the `fresh` documents it is paired with in `pairs` (`(candidate,
/// fresh document)`): the estimated pair passes verification, or is a weak link
/// (`cluster.attach-similarity`), as the join checks a pair with an indexed document.
pub(crate) fn linking(
    pairs: &[(u32, u32)],
    candidates: &[Sketch],
    fresh: &[Sketch],
    config: &Plan,
) -> Vec<bool> {
    let (verifier, attach) = (config.verifier, config.cluster.attach_similarity);
    let passing: Vec<bool> = pairs
        .par_iter()
        .map(|&(candidate, doc)| {
            let (a, b) = (&candidates[candidate as usize], &fresh[doc as usize]);
            a.is_comparable() && verifier.may_link_estimated(a, b, attach)
        })
        .collect();
    let mut linking = vec![false; candidates.len()];
    for (&(candidate, _), passes) in pairs.iter().zip(passing) {
        linking[candidate as usize] |= passes;
    }
    linking
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    #[test]
    fn a_candidate_meets_all_of_a_small_bucket_the_first_of_a_large_one_none_of_a_cut_one() {
        let bucket = |key: u32, size: u32| (0..size).map(move |doc| (key, 100 * key + doc));
        let fresh: Vec<(u32, u32)> = bucket(1, 3)
            .chain(bucket(2, ALL_PAIRS_BUCKET as u32 + 1))
            .chain(bucket(3, 40))
            .collect();
        // Indexed documents 7 and 8 share key 1, 9 shares key 2 and 10 key 3; key 4 has no
        // fresh documents.
        let found = [(1, 7), (1, 8), (2, 9), (3, 10), (4, 11)];
        let mut pairs = paired(&found, &fresh, 30);
        pairs.sort_unstable();
        let mut expected: Vec<(u32, u32)> = [7, 8]
            .into_iter()
            .flat_map(|candidate| (100..103).map(move |doc| (candidate, doc)))
            .chain((200..200 + ANCHORS_CHECKED as u32).map(|doc| (9, doc)))
            .collect();
        expected.sort_unstable();
        assert_eq!(pairs, expected);
    }

    /// A sketch of 100 shingles whose first `shared` minima are those of `0..84` and whose
    /// others are its own (numbered from `own`).
    fn sharing(shared: u32, own: u32) -> Sketch {
        let minima = (0..shared).chain(own..own + 84 - shared).collect();
        Sketch::with_minima(minima, 100)
    }

    #[test]
    fn a_candidate_is_kept_when_a_pair_passes_or_makes_a_weak_link() {
        let fresh = vec![sharing(84, 0), sharing(28, 1_000), sharing(4, 2_000)];
        let candidates = vec![
            sharing(84, 0),
            sharing(84, 0),
            sharing(84, 0),
            Sketch::with_minima(vec![u32::MAX; 84], 0),
        ];
        // Each candidate paired with one fresh document: the same text, a third of it
        // (0.33, less its margin 0.28), a twentieth, and one with no shingles.
        let pairs = [(0, 0), (1, 1), (2, 2), (3, 0)];
        let mut config = Config::default();
        config.cluster.attach_similarity = 0.2;
        let weak = Plan::try_from(&config).unwrap();
        assert_eq!(
            linking(&pairs, &candidates, &fresh, &weak),
            [true, true, false, false]
        );
        // Without weak links, 0.28 is below `cluster.min-similarity`.
        config.cluster.attach_similarity = 0.0;
        let strict = Plan::try_from(&config).unwrap();
        assert_eq!(
            linking(&pairs, &candidates, &fresh, &strict),
            [true, false, false, false]
        );
    }
}
