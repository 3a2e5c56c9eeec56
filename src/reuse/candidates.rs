//! Candidate pairs: an inverted index from fingerprint to the documents that have it, and, for
//! one document, the documents after it that share at least one of its fingerprints. A
//! fingerprint held by more than `max_bucket` documents (`cluster.max-bucket`) is boilerplate
//! the statistics missed and pairs no one, as a candidate bucket of the cluster stage.

/// Every document's fingerprints, by fingerprint: `(fingerprint, document)`, sorted.
#[derive(Debug, Default)]
pub struct FingerprintIndex {
    entries: Vec<(u32, u32)>,
}

impl FingerprintIndex {
    /// The index of documents whose fingerprints (sorted, distinct) `fingerprints_of(d)` gives,
    /// for `d` in `0..documents`.
    pub fn new(documents: usize, fingerprints_of: impl Fn(usize) -> Vec<u32> + Sync) -> Self {
        use rayon::prelude::*;
        let mut entries: Vec<(u32, u32)> = (0..documents)
            .into_par_iter()
            .flat_map_iter(|d| fingerprints_of(d).into_iter().map(move |f| (f, d as u32)))
            .collect();
        entries.par_sort_unstable();
        entries.shrink_to_fit();
        FingerprintIndex { entries }
    }

    /// The documents holding fingerprint `f`, in order.
    fn bucket(&self, f: u32) -> &[(u32, u32)] {
        let start = self.entries.partition_point(|&(g, _)| g < f);
        let len = self.entries[start..].partition_point(|&(g, _)| g == f);
        &self.entries[start..start + len]
    }

    /// The documents after `doc` that share at least `at_least` of its fingerprints
    /// `fingerprints` through buckets of at most `max_bucket` documents; sorted, distinct.
    pub fn partners(
        &self,
        doc: u32,
        fingerprints: &[u32],
        max_bucket: usize,
        at_least: usize,
    ) -> Vec<u32> {
        let mut out = Vec::new();
        for &f in fingerprints {
            let bucket = self.bucket(f);
            if bucket.len() > max_bucket {
                continue;
            }
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
    pub fn cut_buckets(&self, max_bucket: usize) -> (usize, usize) {
        let (mut buckets, mut documents) = (0, 0);
        for group in self.entries.chunk_by(|x, y| x.0 == y.0) {
            if group.len() > max_bucket {
                buckets += 1;
                documents += group.len();
            }
        }
        (buckets, documents)
    }

    /// Bytes the index takes.
    pub fn bytes(&self) -> usize {
        self.entries.capacity() * std::mem::size_of::<(u32, u32)>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partners_come_after_and_large_buckets_pair_no_one() {
        let fingerprints = [vec![1, 5], vec![1, 7], vec![5, 7, 9], vec![9]];
        let index = FingerprintIndex::new(4, |d| fingerprints[d].clone());
        assert_eq!(index.partners(0, &fingerprints[0], 10, 1), [1, 2]);
        assert_eq!(index.partners(1, &fingerprints[1], 10, 1), [2]);
        assert_eq!(index.partners(2, &fingerprints[2], 10, 1), [3]);
        assert!(index.partners(3, &fingerprints[3], 10, 1).is_empty());
        // No two documents of these share two fingerprints.
        assert!(index.partners(0, &fingerprints[0], 10, 2).is_empty());
        let more = [vec![1, 5, 7], vec![1, 7], vec![5]];
        let index2 = FingerprintIndex::new(3, |d| more[d].clone());
        assert_eq!(index2.partners(0, &more[0], 10, 2), [1]);
        // Buckets of two documents only: 1, 5, 7 and 9 each pair two.
        assert_eq!(index.partners(0, &fingerprints[0], 1, 1), Vec::<u32>::new());
        assert_eq!(index.cut_buckets(1), (4, 8));
        assert_eq!(index.cut_buckets(2), (0, 0));
    }
}
