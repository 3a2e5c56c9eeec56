//! Exact copies: documents with equal shingle sets, found before candidate generation. Each
//! group of equal documents takes part in candidate generation through its first member (by
//! number), its original; every other member, a copy, is joined to its original directly, with
//! similarity 1. A text copied N times so costs N joins, not a bucket of N documents for each
//! of its keys, and `cluster.max-bucket` bounds the pairwise work among distinct documents only.
//!
//! Documents are grouped by a hash of their signature and shingle count first; only those that
//! share one have their sets read, hashed and compared, so a collection without copies reads
//! no set. Equal signatures are not enough where the sets are at hand: a text and the same
//! text with one more word keep all 84 minima two times in three. Without sets
//! (`verify = "estimate"`, or the first clustering), equal signatures make a copy, as
//! verification would estimate their Jaccard as exactly 1.

use std::hash::{Hash, Hasher};

use rayon::prelude::*;
use rustc_hash::FxHasher;

use crate::corpus::set_store::SetsView;
use crate::sketch::Sketch;

/// The copies among a collection's documents.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Copies {
    /// Each copy with its original, as `(original, copy)`, sorted.
    pub pairs: Vec<(u32, u32)>,
    /// The documents each document stands for: itself and its copies for an original, none
    /// for a copy. Empty when there are no copies (each document stands for itself).
    weights: Vec<u32>,
}

impl Copies {
    /// True when `doc` is a copy of an earlier document (and so takes no part in candidate
    /// generation).
    pub(crate) fn is_copy(&self, doc: u32) -> bool {
        self.weights.get(doc as usize) == Some(&0)
    }

    /// The documents `doc` stands for in a bucket: 1 and its copies, or 0 for a copy.
    pub(crate) fn weight(&self, doc: u32) -> u32 {
        self.weights.get(doc as usize).copied().unwrap_or(1)
    }

    /// The number of copies.
    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }
}

/// The copies among the comparable documents numbered `from` on (earlier documents, such as
/// an index's, are left as they are): documents with the same signature, the same number of
/// shingles, and the same shingle set where `sets` gives both; each is a copy of the first
/// (smallest-numbered) document of its group.
pub(crate) fn find_copies(sketches: &[Sketch], sets: SetsView, from: u32) -> Copies {
    let mut by_sketch: Vec<(u64, u32)> = (from..sketches.len() as u32)
        .into_par_iter()
        .filter(|&d| sketches[d as usize].is_comparable())
        .map(|d| (sketch_hash(&sketches[d as usize]), d))
        .collect();
    by_sketch.par_sort_unstable();
    let shared: Vec<(u64, u32)> = by_sketch
        .chunk_by(|a, b| a.0 == b.0)
        .filter(|run| run.len() > 1)
        .flatten()
        .copied()
        .collect();
    drop(by_sketch);
    // (sketch hash, set hash, document): a group of equal documents is a run of equal hashes.
    let mut by_content: Vec<(u64, u64, u32)> = shared
        .par_iter()
        .map_init(Vec::new, |buffer, &(hash, d)| {
            (hash, set_hash(sets.get(d, buffer)), d)
        })
        .collect();
    by_content.par_sort_unstable();
    let mut pairs: Vec<(u32, u32)> = by_content
        .par_chunk_by(|a, b| (a.0, a.1) == (b.0, b.1))
        .filter(|group| group.len() > 1)
        .flat_map_iter(|group| {
            let documents: Vec<u32> = group.iter().map(|e| e.2).collect();
            copies_in_group(&documents, sketches, sets)
        })
        .collect();
    pairs.par_sort_unstable();
    let mut weights = Vec::new();
    if !pairs.is_empty() {
        weights = vec![1u32; sketches.len()];
        for &(original, copy) in &pairs {
            weights[copy as usize] = 0;
            weights[original as usize] += 1;
        }
    }
    Copies { pairs, weights }
}

/// The copies of the first of `documents` (sorted, with equal hashes) among the others, as
/// `(original, copy)`: a document whose hashes only collide with the first's is no copy.
fn copies_in_group(documents: &[u32], sketches: &[Sketch], sets: SetsView) -> Vec<(u32, u32)> {
    let (original, others) = documents.split_first().expect("a group is never empty");
    let (mut first, mut other) = (Vec::new(), Vec::new());
    let first_set = sets.get(*original, &mut first);
    let a = &sketches[*original as usize];
    others
        .iter()
        .copied()
        .filter(|&d| {
            let b = &sketches[d as usize];
            a.shingles == b.shingles
                && a.signature == b.signature
                && first_set == sets.get(d, &mut other)
        })
        .map(|d| (*original, d))
        .collect()
}

/// A hash of a sketch's signature and shingle count.
fn sketch_hash(sketch: &Sketch) -> u64 {
    let mut hasher = FxHasher::default();
    sketch.shingles.hash(&mut hasher);
    sketch.signature.hash(&mut hasher);
    hasher.finish()
}

/// A hash of a shingle set; 0 for none.
fn set_hash(set: Option<&[u32]>) -> u64 {
    set.map_or(0, |keys| {
        let mut hasher = FxHasher::default();
        keys.hash(&mut hasher);
        hasher.finish()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::set_store::SetStore;

    fn sketch(signature: Vec<u32>, shingles: u32) -> Sketch {
        Sketch::with_minima(signature, shingles)
    }

    #[test]
    fn equal_signatures_are_copies_of_the_first_without_sets() {
        let a: Vec<u32> = (0..84).collect();
        let b: Vec<u32> = (100..184).collect();
        let sketches = vec![
            sketch(b.clone(), 10),
            sketch(a.clone(), 10),
            sketch(a.clone(), 10),
            // The same minima from a different number of shingles: no copy.
            sketch(a.clone(), 11),
            sketch(b, 10),
            sketch(a, 10),
            // Texts too short to compare are never copies, however alike.
            sketch(vec![u32::MAX; 84], 0),
            sketch(vec![u32::MAX; 84], 0),
        ];
        let copies = find_copies(&sketches, SetsView::none(), 0);
        assert_eq!(copies.pairs, vec![(0, 4), (1, 2), (1, 5)]);
        assert_eq!(copies.len(), 3);
        let weights: Vec<u32> = (0..8).map(|d| copies.weight(d)).collect();
        assert_eq!(weights, vec![2, 3, 0, 1, 0, 0, 1, 1]);
        assert!(copies.is_copy(2) && !copies.is_copy(1) && !copies.is_copy(3));
        // Documents before `from` are left out: 4 and 5 are no copies of 0 and 1 then.
        let later = find_copies(&sketches, SetsView::none(), 2);
        assert_eq!(later.pairs, vec![(2, 5)]);
    }

    #[test]
    fn with_sets_only_equal_sets_are_copies() {
        let minima: Vec<u32> = (0..84).collect();
        let sketches = vec![sketch(minima.clone(), 3); 4];
        // 0, 2 and 3 hold the same set; 1 has the same signature and size but another set.
        let same: Vec<u32> = vec![1, 2, 3];
        let store = SetStore::of_sets(&[same.clone(), vec![1, 2, 4], same.clone(), same]);
        let copies = find_copies(&sketches, SetsView::of(&store, 0), 0);
        assert_eq!(copies.pairs, vec![(0, 2), (0, 3)]);
        assert!(!copies.is_copy(1));
        // A document without a set is no copy of one with a set.
        let copies = find_copies(&sketches, SetsView::of(&store, 1), 0);
        assert_eq!(copies.pairs, vec![(1, 3)], "sets of 1 and 3 are 0 and 2");
    }

    #[test]
    fn no_copies_cost_nothing_and_weigh_one() {
        let sketches: Vec<Sketch> = (0..50u32)
            .map(|d| sketch((d * 100..d * 100 + 84).collect(), 20))
            .collect();
        let copies = find_copies(&sketches, SetsView::none(), 0);
        assert!(copies.is_empty());
        assert_eq!(copies, Copies::default());
        assert!((0..50).all(|d| copies.weight(d) == 1 && !copies.is_copy(d)));
    }

    #[test]
    fn twenty_thousand_copies_make_one_group() {
        let minima: Vec<u32> = (0..84).collect();
        let sketches = vec![sketch(minima, 100); 20_000];
        let copies = find_copies(&sketches, SetsView::none(), 0);
        assert_eq!(copies.len(), 19_999);
        assert!(copies.pairs.iter().all(|&(original, _)| original == 0));
        assert_eq!(copies.weight(0), 20_000);
    }
}
