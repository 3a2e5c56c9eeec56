//! Which indexed candidates a night may link to. The postings give every indexed document
//! that shares a key with a night's document; most share it with documents they do not
//! resemble. Each candidate is paired with the night's documents the join may pair it with
//! (those sharing one of its posting keys, as the join's buckets would hold them) and
//! checked from the minima, as the join checks a pair with an indexed document. A candidate
//! that passes with none of them, and makes no weak link, cannot link in the join, so it is
//! not loaded; of those that pass, each night's document loads the strongest of each story,
//! which stands for the story's other members in the join. The pairs that pass are the join's
//! pairs of a loaded document with the night's.

use rayon::prelude::*;

use crate::cluster::ALL_PAIRS_BUCKET;
use crate::config::Plan;
use crate::sketch::signature::estimate_jaccard;
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

/// How strongly each pair of `pairs` (`(candidate, fresh document)`, `candidates` being indexed
/// documents' sketches with their 16-bit minima widened) may link: its estimated Jaccard when
/// the pair passes verification or is a weak link (`cluster.attach-similarity`), as the join
/// checks a pair with an indexed document; `None` otherwise.
pub(crate) fn strengths(
    pairs: &[(u32, u32)],
    candidates: &[Sketch],
    fresh: &[Sketch],
    config: &Plan,
) -> Vec<Option<f32>> {
    let (verifier, attach) = (config.verifier, config.cluster.attach_similarity);
    pairs
        .par_iter()
        .map(|&(candidate, doc)| {
            let (a, b) = (&candidates[candidate as usize], &fresh[doc as usize]);
            let estimate = estimate_jaccard(&a.signature, &b.signature);
            (a.is_comparable() && verifier.may_link_estimated(estimate, a, b, attach))
                .then_some(estimate as f32)
        })
        .collect()
}

/// The candidates a night loads: for each fresh document and each story, the candidate of
/// that story it links to most strongly (the smallest number among equals), from `links`
/// `(fresh document, story, strength, candidate)` of the pairs that may link. One member a
/// story stands for the rest in the join, so what a night loads for a story it joins grows
/// with the night's documents that join it, never with the story. Sorted.
pub(crate) fn strongest(links: &mut [(u32, u32, f32, u32)]) -> Vec<u32> {
    links.par_sort_unstable_by(|a, b| {
        (a.0, a.1)
            .cmp(&(b.0, b.1))
            .then(b.2.total_cmp(&a.2))
            .then(a.3.cmp(&b.3))
    });
    let mut chosen: Vec<u32> = links
        .chunk_by(|a, b| (a.0, a.1) == (b.0, b.1))
        .map(|run| run[0].3)
        .collect();
    chosen.par_sort_unstable();
    chosen.dedup();
    chosen
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
    fn a_pair_passes_or_makes_a_weak_link_with_its_estimated_jaccard() {
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
        let passing = |plan: &Plan| -> Vec<bool> {
            strengths(&pairs, &candidates, &fresh, plan)
                .iter()
                .map(Option::is_some)
                .collect()
        };
        assert_eq!(passing(&weak), [true, true, false, false]);
        let strengths = strengths(&pairs, &candidates, &fresh, &weak);
        assert_eq!(strengths[0], Some(1.0));
        assert!(
            strengths[1].is_some_and(|s| s > 0.2 && s < 0.35),
            "{strengths:?}"
        );
        // Without weak links, 0.28 is below `cluster.min-similarity`.
        config.cluster.attach_similarity = 0.0;
        let strict = Plan::try_from(&config).unwrap();
        assert_eq!(passing(&strict), [true, false, false, false]);
    }

    #[test]
    fn each_fresh_document_loads_its_strongest_candidate_of_each_story() {
        // (fresh document, story, strength, candidate)
        let mut links = vec![
            (0, 5, 0.5, 10),
            (0, 5, 0.9, 11),
            (0, 6, 0.3, 12),
            (1, 5, 0.9, 13),
            (1, 5, 0.9, 11),
            (2, 5, 0.4, 14),
        ];
        // Document 0: 11 for story 5, 12 for story 6; document 1: 11 (the smaller of two
        // equals); document 2: 14, its only one.
        assert_eq!(strongest(&mut links), [11, 12, 14]);
    }
}
