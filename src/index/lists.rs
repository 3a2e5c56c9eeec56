//! The key lists an add posts: each of its documents' sorted, distinct keys (the keys of its
//! minima, or its passages' fingerprints), one list after another at 4 bytes a key, in
//! memory ([`KeyLists`]) or on an unlinked temporary file ([`KeyFile`]). The postings are
//! written from them one key range at a time ([`KeyLists::pass_pairs`]), so a large add
//! never holds all its pairs (8 bytes a pair) at once.

use std::fs::File;
use std::io;

use crate::corpus::set_store::{read_keys, write_keys};

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
        let run = |doc: usize| run_in(self.list(doc), pass, passes);
        let count = (0..self.len()).map(|doc| run(doc).len()).sum();
        let mut pairs = Vec::with_capacity(count);
        for doc in 0..self.len() {
            pairs.extend(run(doc).iter().map(|&key| (key, doc as u32)));
        }
        radsort::sort_by_key(&mut pairs, |pair| pair.0);
        pairs
    }
}

/// The run of sorted `list` whose keys fall in range `pass` of `passes` equal ranges of the
/// key space.
fn run_in(list: &[u32], pass: u32, passes: u32) -> &[u32] {
    let range_of = |key: u32| ((u64::from(key) * u64::from(passes)) >> 32) as u32;
    let start = list.partition_point(|&k| range_of(k) < pass);
    let len = list[start..].partition_point(|&k| range_of(k) == pass);
    &list[start..start + len]
}

/// Keys read back at once by [`KeyFile::pass_pairs`], about (whole lists at a time).
const READ_KEYS: usize = 1 << 18;

/// Key lists as [`KeyLists`] holds them, on an unlinked temporary file (in `TMPDIR`): they
/// are appended as they are made, and each pass reads the file back a block of lists at a
/// time, so an add holds only where each list ends. The passages' fingerprints, five times
/// the keys of the stories' postings, wait there while the stories are joined.
#[derive(Debug)]
pub(crate) struct KeyFile {
    file: File,
    /// Where each document's keys end, in keys from the start of the file.
    ends: Vec<u64>,
}

impl KeyFile {
    /// An empty file.
    pub fn new() -> io::Result<KeyFile> {
        Ok(KeyFile {
            file: tempfile::tempfile()?,
            ends: Vec::new(),
        })
    }

    /// Appends the lists of `lists`, after those before.
    pub fn append(&mut self, lists: &KeyLists) -> io::Result<()> {
        let written = self.ends.last().copied().unwrap_or(0);
        write_keys(&self.file, written * 4, &lists.keys)?;
        self.ends
            .extend(lists.ends.iter().map(|&end| written + u64::from(end)));
        Ok(())
    }

    /// Number of documents.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// As [`KeyLists::passes`].
    pub fn passes(&self, pass_pairs: usize) -> u32 {
        let keys = self.ends.last().copied().unwrap_or(0) as usize;
        keys.div_ceil(pass_pairs).max(1) as u32
    }

    /// As [`KeyLists::pass_pairs`], the lists read from the file.
    pub fn pass_pairs(&self, pass: u32, passes: u32) -> io::Result<Vec<(u32, u32)>> {
        let mut pairs = Vec::new();
        let mut keys = Vec::new();
        let (mut doc, mut start) = (0, 0u64);
        while doc < self.len() {
            // Whole lists up to about READ_KEYS keys, and at least one.
            let last =
                doc + self.ends[doc..].partition_point(|&end| end - start <= READ_KEYS as u64);
            let last = last.max(doc + 1);
            let end = self.ends[last - 1];
            keys.resize((end - start) as usize, 0);
            read_keys(&self.file, start * 4, &mut keys)?;
            for d in doc..last {
                let from = if d == 0 { 0 } else { self.ends[d - 1] } - start;
                let list = &keys[from as usize..(self.ends[d] - start) as usize];
                pairs.extend(run_in(list, pass, passes).iter().map(|&k| (k, d as u32)));
            }
            (doc, start) = (last, end);
        }
        radsort::sort_by_key(&mut pairs, |pair| pair.0);
        Ok(pairs)
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

    #[test]
    fn a_file_that_cannot_be_written_or_read_back_gives_its_error() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("keys");
        let two = lists(&[&[1, 5, 9], &[2, 3]]);
        // Opened for writing only: the lists go in, and reading them back fails.
        let mut write_only = KeyFile {
            file: File::create(&path).unwrap(),
            ends: Vec::new(),
        };
        write_only.append(&two).unwrap();
        assert!(write_only.pass_pairs(0, 1).is_err());
        // Opened for reading only: appending fails, and nothing is counted as written.
        let mut read_only = KeyFile {
            file: File::open(&path).unwrap(),
            ends: Vec::new(),
        };
        assert!(read_only.append(&two).is_err());
        assert_eq!(read_only.len(), 0);
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
            proptest::prop_assert_eq!(&by_pass, &all);
            // The same lists on file, appended in two parts.
            let mut file = KeyFile::new().unwrap();
            let half = refs.len() / 2;
            file.append(&lists(&refs[..half])).unwrap();
            file.append(&lists(&refs[half..])).unwrap();
            proptest::prop_assert_eq!(file.len(), refs.len());
            proptest::prop_assert_eq!(file.passes(7), l.passes(7));
            let from_file: Vec<(u32, u32)> = (0..passes)
                .flat_map(|pass| file.pass_pairs(pass, passes).unwrap())
                .collect();
            proptest::prop_assert_eq!(from_file, all);
        }
    }
}
