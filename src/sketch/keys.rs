//! Supershingles and megashingles: the candidate keys of a signature. The minima are cut into
//! `groups` groups of `minima_per_group` consecutive minima and each group is hashed, with its
//! slot, into one supershingle; two texts share supershingle `i` with probability `J^r`
//! (`r` = minima per group). A megashingle hashes a pair of supershingles (all `C(g,2)` pairs):
//! two texts share one iff at least two of their supershingles agree. With
//! `matching = "supershingle"` the supershingles themselves are the keys.

use std::hash::Hasher;
use std::ops::Range;

use siphasher::sip::SipHasher13;

use crate::config::Matching;
use crate::sketch::grouping::Grouping;

/// Hashing of minima groups into supershingles and of supershingle pairs into megashingles.
#[derive(Debug, Clone)]
pub struct KeyMaker {
    groups: usize,
    per_group: usize,
    matching: Matching,
    key: (u64, u64),
}

impl KeyMaker {
    /// Key making for a grouping, keyed by `seed`.
    pub fn new(grouping: &Grouping, seed: u64) -> KeyMaker {
        let mut state = seed ^ 0x5355_5045_5253_4849;
        KeyMaker {
            groups: grouping.groups,
            per_group: grouping.minima_per_group,
            matching: grouping.matching,
            key: (
                crate::sketch::signature::splitmix64(&mut state),
                crate::sketch::signature::splitmix64(&mut state),
            ),
        }
    }

    fn hasher(&self) -> SipHasher13 {
        SipHasher13::new_with_keys(self.key.0, self.key.1)
    }

    /// The supershingles of a signature, one per group, each keyed by its slot.
    pub fn supershingles(&self, signature: &[u32]) -> Vec<u64> {
        (0..self.groups_of(signature))
            .map(|slot| self.supershingle(signature, slot))
            .collect()
    }

    /// The number of whole groups a signature has, at most the grouping's.
    fn groups_of(&self, signature: &[u32]) -> usize {
        self.groups.min(signature.len() / self.per_group)
    }

    /// The supershingle of one group of a signature, keyed by its slot.
    fn supershingle(&self, signature: &[u32], slot: usize) -> u64 {
        let minima = &signature[slot * self.per_group..(slot + 1) * self.per_group];
        let mut h = self.hasher();
        h.write_u64(slot as u64);
        minima.iter().for_each(|&m| h.write_u32(m));
        h.finish()
    }

    /// The megashingles of a list of supershingles: every pair, in slot order.
    pub fn megashingles(&self, supershingles: &[u64]) -> Vec<u64> {
        let mut out = Vec::new();
        self.append_megashingles_in(supershingles, 0..usize::MAX, &mut out);
        out
    }

    /// Appends the megashingles numbered `keys` (in the order of [`KeyMaker::megashingles`])
    /// to `out`.
    fn append_megashingles_in(
        &self,
        supershingles: &[u64],
        keys: Range<usize>,
        out: &mut Vec<u64>,
    ) {
        let mut number = 0;
        for (i, &a) in supershingles.iter().enumerate() {
            for &b in &supershingles[i + 1..] {
                if keys.contains(&number) {
                    let mut h = self.hasher();
                    h.write_u64(u64::MAX);
                    h.write_u64(a);
                    h.write_u64(b);
                    out.push(h.finish());
                }
                number += 1;
            }
        }
    }

    /// The number of candidate keys of each signature.
    pub(crate) fn keys_per_signature(&self) -> usize {
        match self.matching {
            Matching::Megashingle => self.groups * self.groups.saturating_sub(1) / 2,
            Matching::Supershingle => self.groups,
        }
    }

    /// The candidate keys of a signature: megashingles or supershingles, as configured.
    pub fn candidate_keys(&self, signature: &[u32]) -> Vec<u64> {
        self.candidate_keys_in(signature, 0..self.keys_per_signature())
    }

    /// The candidate keys numbered `keys` of a signature, of those [`KeyMaker::candidate_keys`]
    /// lists, made alone. A key's number is hashed into it, so equal keys of two signatures
    /// have the same number.
    pub(crate) fn candidate_keys_in(&self, signature: &[u32], keys: Range<usize>) -> Vec<u64> {
        let mut out = Vec::new();
        self.append_candidate_keys_in(signature, keys, &mut out);
        out
    }

    /// [`KeyMaker::candidate_keys_in`], appended to `out`: a caller that makes the keys of
    /// many signatures keeps one list.
    pub(crate) fn append_candidate_keys_in(
        &self,
        signature: &[u32],
        keys: Range<usize>,
        out: &mut Vec<u64>,
    ) {
        match self.matching {
            Matching::Megashingle => {
                self.append_megashingles_in(&self.supershingles(signature), keys, out)
            }
            Matching::Supershingle => out.extend(
                keys.filter(|&slot| slot < self.groups_of(signature))
                    .map(|slot| self.supershingle(signature, slot)),
            ),
        }
    }
}

/// The number of positions where two key lists agree.
pub(crate) fn shared_slots(a: &[u64], b: &[u64]) -> usize {
    a.iter().zip(b).filter(|(x, y)| x == y).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classic() -> Grouping {
        Grouping {
            groups: 6,
            minima_per_group: 14,
            matching: Matching::Megashingle,
        }
    }

    #[test]
    fn six_groups_make_fifteen_megashingles() {
        let maker = KeyMaker::new(&classic(), 1);
        let sig: Vec<u32> = (0..84).collect();
        assert_eq!(maker.supershingles(&sig).len(), 6);
        assert_eq!(maker.candidate_keys(&sig).len(), 15);
        assert_eq!(maker.keys_per_signature(), 15);
    }

    #[test]
    fn keys_made_by_number_are_those_of_the_whole_list() {
        let supershingles = Grouping {
            groups: 42,
            minima_per_group: 2,
            matching: Matching::Supershingle,
        };
        let sig: Vec<u32> = (0..84).map(|i| i * 31 + 7).collect();
        for grouping in [classic(), supershingles] {
            let maker = KeyMaker::new(&grouping, 3);
            let all = maker.candidate_keys(&sig);
            let n = maker.keys_per_signature();
            assert_eq!(all.len(), n);
            for (from, to) in [(0, n), (0, 1), (2, 7), (n - 1, n), (4, 4)] {
                assert_eq!(maker.candidate_keys_in(&sig, from..to), &all[from..to]);
            }
        }
        // A signature shorter than the grouping has only its whole groups.
        let maker = KeyMaker::new(&classic(), 3);
        assert_eq!(maker.supershingles(&sig[..30]).len(), 2);
        assert_eq!(maker.candidate_keys(&sig[..30]).len(), 1);
    }

    #[test]
    fn one_changed_minimum_changes_one_supershingle_and_five_megashingles() {
        let maker = KeyMaker::new(&classic(), 1);
        let a: Vec<u32> = (0..84).collect();
        let mut b = a.clone();
        b[20] = 999;
        let (sa, sb) = (maker.supershingles(&a), maker.supershingles(&b));
        assert_eq!(shared_slots(&sa, &sb), 5);
        let (ma, mb) = (maker.megashingles(&sa), maker.megashingles(&sb));
        assert_eq!(shared_slots(&ma, &mb), 10);
    }

    #[test]
    fn same_minima_in_different_slots_give_different_supershingles() {
        let maker = KeyMaker::new(&classic(), 1);
        let sig = vec![5u32; 84];
        let s = maker.supershingles(&sig);
        assert_ne!(s[0], s[1]);
    }
}
