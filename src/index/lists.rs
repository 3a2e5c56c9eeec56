//! The key lists an add posts: each of its documents' sorted, distinct keys (the keys of its
//! minima, or its passages' fingerprints), one list after another at 4 bytes a key. The
//! postings are written from them one key range at a time ([`KeyLists::pass_pairs`]), so a
//! large add never holds all its pairs (8 bytes a pair) at once.

/// Each document's sorted, distinct keys, by document in order.
#[derive(Debug, Default)]
pub(crate) struct KeyLists {
    /// Every document's keys, one list after another.
    keys: Vec<u32>,
    /// Where each document's keys end in `keys`.
    ends: Vec<u32>,
}

impl KeyLists {
    /// No lists yet, room for `documents` of them.
    pub fn with_documents(documents: usize) -> KeyLists {
        KeyLists {
            keys: Vec::new(),
            ends: Vec::with_capacity(documents),
        }
    }

    /// Adds the next document's keys, sorted and distinct.
    pub fn push(&mut self, list: &[u32]) {
        debug_assert!(list.windows(2).all(|w| w[0] < w[1]), "keys not sorted");
        self.keys.extend_from_slice(list);
        self.ends.push(self.keys.len() as u32);
    }

    /// The lists of `parts`, one part after another.
    pub fn concat(parts: Vec<KeyLists>) -> KeyLists {
        let mut all = KeyLists {
            keys: Vec::with_capacity(parts.iter().map(|p| p.keys.len()).sum()),
            ends: Vec::with_capacity(parts.iter().map(KeyLists::len).sum()),
        };
        for part in parts {
            let offset = all.keys.len() as u32;
            all.keys.extend_from_slice(&part.keys);
            all.ends.extend(part.ends.iter().map(|end| end + offset));
        }
        all
    }

    /// Number of documents.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// The keys of document `doc`.
    pub fn list(&self, doc: usize) -> &[u32] {
        let start = if doc == 0 { 0 } else { self.ends[doc - 1] };
        &self.keys[start as usize..self.ends[doc] as usize]
    }

    /// The number of key ranges that hold about `pass_pairs` pairs each.
    pub fn passes(&self, pass_pairs: usize) -> u32 {
        self.keys.len().div_ceil(pass_pairs).max(1) as u32
    }

    /// The `(key, document)` pairs whose keys fall in range `pass` of `passes` equal ranges
    /// of the key space, sorted (each key once a document). A document's keys of one range
    /// are a run of its sorted list; the runs are taken in document order, so a stable sort
    /// by key alone (a radix sort, which holds a second copy of the pairs while it sorts)
    /// leaves each key's documents in order.
    pub fn pass_pairs(&self, pass: u32, passes: u32) -> Vec<(u32, u32)> {
        let range_of = |key: u32| ((u64::from(key) * u64::from(passes)) >> 32) as u32;
        let run = |doc: usize| {
            let list = self.list(doc);
            let start = list.partition_point(|&k| range_of(k) < pass);
            let len = list[start..].partition_point(|&k| range_of(k) == pass);
            &list[start..start + len]
        };
        let count = (0..self.len()).map(|doc| run(doc).len()).sum();
        let mut pairs = Vec::with_capacity(count);
        for doc in 0..self.len() {
            pairs.extend(run(doc).iter().map(|&key| (key, doc as u32)));
        }
        radsort::sort_by_key(&mut pairs, |pair| pair.0);
        pairs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lists(of: &[&[u32]]) -> KeyLists {
        let mut lists = KeyLists::with_documents(of.len());
        for list in of {
            lists.push(list);
        }
        lists
    }

    #[test]
    fn lists_come_back_by_document() {
        let l = lists(&[&[3, 9], &[], &[1]]);
        assert_eq!(l.len(), 3);
        assert_eq!(
            (l.list(0), l.list(1), l.list(2)),
            (&[3, 9][..], &[][..], &[1][..])
        );
    }

    proptest::proptest! {
        #[test]
        fn passes_split_every_pair_into_key_ranges_in_order(
            of in proptest::collection::vec(
                proptest::collection::btree_set(proptest::prelude::any::<u32>(), 0..20),
                0..30,
            ),
            passes in 1u32..6,
        ) {
            let of: Vec<Vec<u32>> = of.into_iter().map(|s| s.into_iter().collect()).collect();
            let refs: Vec<&[u32]> = of.iter().map(Vec::as_slice).collect();
            let l = lists(&refs);
            let mut all: Vec<(u32, u32)> = of
                .iter()
                .enumerate()
                .flat_map(|(doc, keys)| keys.iter().map(move |&k| (k, doc as u32)))
                .collect();
            all.sort_unstable();
            let by_pass: Vec<(u32, u32)> =
                (0..passes).flat_map(|pass| l.pass_pairs(pass, passes)).collect();
            proptest::prop_assert_eq!(by_pass, all);
        }
    }
}
