//! Candidate pairs: an inverted index from fingerprint to the documents that have it, and, for
//! one document, the documents after it that share at least two of its fingerprints. A
//! fingerprint held by more than `max_bucket` documents (`cluster.max-bucket`) is boilerplate
//! the statistics missed and pairs no one, as a candidate bucket of the cluster stage; one
//! held by a single document pairs no one either. Neither is kept. A directory by the top
//! bits of the fingerprint finds a bucket with one or two reads of memory.

/// The fingerprints that can pair documents, by fingerprint: `(fingerprint, document)`,
/// sorted, with a directory by the fingerprint's top bits. A fingerprint of one document
/// pairs no one and is not kept, nor is one of more than `max_bucket` documents.
#[derive(Debug, Default)]
pub(crate) struct FingerprintIndex {
    entries: Vec<(u32, u32)>,
    /// Where the entries of each value of a fingerprint's top bits start, and the end.
    directory: Vec<u32>,
    /// A fingerprint's top bits are `f >> shift`.
    shift: u32,
    /// Fingerprints of more than `max_bucket` documents, and the documents in them.
    cut: (usize, usize),
}

/// Bits of the directory at the most: 16 MB of starts.
const MAX_DIRECTORY_BITS: u32 = 22;

impl FingerprintIndex {
    /// The index of documents whose fingerprints (sorted, distinct) `fingerprints_of(d)` gives,
    /// for `d` in `0..documents`, keeping the fingerprints of 2 to `max_bucket` documents.
    pub fn new(
        documents: usize,
        fingerprints_of: impl Fn(usize) -> Vec<u32> + Sync,
        max_bucket: usize,
    ) -> Self {
        use rayon::prelude::*;
        let mut entries: Vec<(u32, u32)> = (0..documents)
            .into_par_iter()
            .flat_map_iter(|d| fingerprints_of(d).into_iter().map(move |f| (f, d as u32)))
            .collect();
        entries.par_sort_unstable();
        // Only the buckets that pair someone stay, moved to the front in order.
        let (mut kept, mut read) = (0, 0);
        let mut cut = (0, 0);
        while read < entries.len() {
            let f = entries[read].0;
            let len = entries[read..].partition_point(|&(g, _)| g == f);
            if len > max_bucket {
                cut = (cut.0 + 1, cut.1 + len);
            } else if len >= 2 {
                entries.copy_within(read..read + len, kept);
                kept += len;
            }
            read += len;
        }
        entries.truncate(kept);
        entries.shrink_to_fit();
        let bits = (usize::BITS - entries.len().leading_zeros()).clamp(1, MAX_DIRECTORY_BITS);
        let shift = u32::BITS - bits;
        let mut directory = Vec::with_capacity((1 << bits) + 1);
        let mut at = 0;
        for top in 0..=(1u64 << bits) {
            while at < entries.len() && u64::from(entries[at].0 >> shift) < top {
                at += 1;
            }
            directory.push(at as u32);
        }
        FingerprintIndex {
            entries,
            directory,
            shift,
            cut,
        }
    }

    /// The documents holding fingerprint `f`, in order (none when it pairs no one).
    fn bucket(&self, f: u32) -> &[(u32, u32)] {
        if self.entries.is_empty() {
            return &[];
        }
        let top = (f >> self.shift) as usize;
        let block = &self.entries[self.directory[top] as usize..self.directory[top + 1] as usize];
        let start = block.partition_point(|&(g, _)| g < f);
        let len = block[start..].partition_point(|&(g, _)| g == f);
        &block[start..start + len]
    }

    /// The documents after `doc` that share at least `at_least` of its fingerprints
    /// `fingerprints`; sorted, distinct.
    pub(crate) fn partners(&self, doc: u32, fingerprints: &[u32], at_least: usize) -> Vec<u32> {
        let mut out = Vec::new();
        for &f in fingerprints {
            let bucket = self.bucket(f);
            let after = bucket.partition_point(|&(_, d)| d <= doc);
            out.extend(bucket[after..].iter().map(|&(_, d)| d));
        }
        out.sort_unstable();
        let mut kept = Vec::new();
        for group in out.chunk_by(|x, y| x == y) {
            if group.len() >= at_least {
                kept.push(group[0]);
            }
        }
        kept
    }

    /// Fingerprints held by more than `max_bucket` documents, and the documents in them.
    pub fn cut_buckets(&self) -> (usize, usize) {
        self.cut
    }

    /// Bytes the index takes.
    pub fn bytes(&self) -> usize {
        self.entries.capacity() * std::mem::size_of::<(u32, u32)>()
            + self.directory.capacity() * std::mem::size_of::<u32>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partners_come_after_and_large_buckets_pair_no_one() {
        let fingerprints = [vec![1, 5], vec![1, 7], vec![5, 7, 9], vec![9, 11]];
        let index = FingerprintIndex::new(4, |d| fingerprints[d].clone(), 10);
        assert_eq!(index.partners(0, &fingerprints[0], 1), [1, 2]);
        assert_eq!(index.partners(1, &fingerprints[1], 1), [2]);
        assert_eq!(index.partners(2, &fingerprints[2], 1), [3]);
        assert!(index.partners(3, &fingerprints[3], 1).is_empty());
        // No two documents of these share two fingerprints.
        assert!(index.partners(0, &fingerprints[0], 2).is_empty());
        // 11 is in one document: it pairs no one and is not kept.
        assert_eq!(index.entries.len(), 8);
        assert_eq!(index.cut_buckets(), (0, 0));
        let more = [vec![1, 5, 7], vec![1, 7], vec![5]];
        let index2 = FingerprintIndex::new(3, |d| more[d].clone(), 10);
        assert_eq!(index2.partners(0, &more[0], 2), [1]);
        // Buckets of one document at the most: 1, 5, 7 and 9 each hold two.
        let cut = FingerprintIndex::new(4, |d| fingerprints[d].clone(), 1);
        assert_eq!(cut.partners(0, &fingerprints[0], 1), Vec::<u32>::new());
        assert_eq!(cut.cut_buckets(), (4, 8));
    }

    proptest::proptest! {
        #[test]
        fn the_directory_finds_every_bucket(
            sets in proptest::collection::vec(
                proptest::collection::btree_set(proptest::num::u32::ANY, 0..20), 0..30),
            at_least in 1usize..3,
        ) {
            let sets: Vec<Vec<u32>> = sets.into_iter().map(|s| s.into_iter().collect()).collect();
            let index = FingerprintIndex::new(sets.len(), |d| sets[d].clone(), 1000);
            for (a, set) in sets.iter().enumerate() {
                let plain: Vec<u32> = (a + 1..sets.len())
                    .filter(|&b| set.iter().filter(|f| sets[b].contains(f)).count() >= at_least)
                    .map(|b| b as u32)
                    .collect();
                proptest::prop_assert_eq!(index.partners(a as u32, set, at_least), plain);
            }
        }
    }
}
