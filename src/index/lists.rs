//! The key lists an add posts: each of its documents' sorted, distinct keys (the keys of its
//! minima, or its passages' fingerprints), one list after another at 4 bytes a key, in
//! memory ([`KeyLists`]) or on an unlinked temporary file ([`KeyFile`]). The postings are
//! written from them one key range at a time ([`KeyLists::pass_pairs`]), so a large add
//! never holds all its pairs (8 bytes a pair) at once.

use std::fs::File;
use std::io;

use rayon::prelude::*;

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

    /// Forgets every list, keeping the room they took: an add that makes its lists a chunk
    /// at a time reuses the memory of the chunk before, where new memory is first cleared
    /// by the system, a page at a time.
    pub fn clear(&mut self) {
        self.keys.clear();
        self.ends.clear();
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
        &self.keys[self.start(doc)..self.ends[doc] as usize]
    }

    /// Where the keys of document `doc` start in `keys` (their end when it is the last).
    fn start(&self, doc: usize) -> usize {
        if doc == 0 {
            0
        } else {
            self.ends[doc - 1] as usize
        }
    }

    /// The number of key ranges that hold about `pass_pairs` pairs each.
    pub fn passes(&self, pass_pairs: usize) -> u32 {
        self.keys.len().div_ceil(pass_pairs).max(1) as u32
    }

    /// The `(key, document)` pairs whose keys fall in range `pass` of `passes` equal ranges
    /// of the key space, sorted (each key once a document). A document's keys of one range
    /// are a run of its sorted list; the runs are taken in document order, so a stable sort
    /// by key alone (a radix sort, which holds a second copy of the pairs while it sorts)
    /// leaves each key's documents in order. The range is made on every thread, cut into
    /// [`SUB_RANGES`] finer ranges: chunks of documents count their pairs of each, then put
    /// them in their places (the finer ranges one after another, each holding the chunks'
    /// pairs in document order), and each finer range is sorted on its own.
    pub fn pass_pairs(&self, pass: u32, passes: u32) -> Vec<(u32, u32)> {
        const RANGES: usize = SUB_RANGES as usize;
        // Range `pass` of `passes` is ranges `pass * SUB_RANGES..` of `passes * SUB_RANGES`:
        // a key's range of the finer cut, divided by `SUB_RANGES`, is its range of this one.
        let (finer, first) = (passes * SUB_RANGES, pass * SUB_RANGES);
        let range_of = |key: u32| (pass_of(key, finer) - first) as usize;
        let chunk_keys = |chunk: usize| {
            let documents = chunk * CHUNK_DOCUMENTS..self.len().min((chunk + 1) * CHUNK_DOCUMENTS);
            documents.flat_map(|doc| {
                let run = run_in(self.list(doc), pass, passes);
                run.iter().map(move |&key| (key, doc as u32))
            })
        };
        let chunks = self.len().div_ceil(CHUNK_DOCUMENTS);
        let counts: Vec<[usize; RANGES]> = (0..chunks)
            .into_par_iter()
            .map(|chunk| {
                let mut counts = [0; RANGES];
                chunk_keys(chunk).for_each(|(key, _)| counts[range_of(key)] += 1);
                counts
            })
            .collect();
        let range_size = |range: usize| counts.iter().map(|c| c[range]).sum::<usize>();
        let mut pairs = vec![(0, 0); (0..RANGES).map(range_size).sum()];
        // Each chunk's places in each finer range.
        let mut places: Vec<Vec<&mut [(u32, u32)]>> = (0..chunks).map(|_| Vec::new()).collect();
        let mut rest = pairs.as_mut_slice();
        for range in 0..RANGES {
            for (chunk, counts) in counts.iter().enumerate() {
                let (place, after) = rest.split_at_mut(counts[range]);
                places[chunk].push(place);
                rest = after;
            }
        }
        places
            .into_par_iter()
            .enumerate()
            .for_each(|(chunk, mut places)| {
                let mut filled = [0; RANGES];
                for pair in chunk_keys(chunk) {
                    let range = range_of(pair.0);
                    places[range][filled[range]] = pair;
                    filled[range] += 1;
                }
            });
        let mut ranges = Vec::with_capacity(RANGES);
        let mut rest = pairs.as_mut_slice();
        for range in 0..RANGES {
            let (part, after) = rest.split_at_mut(range_size(range));
            ranges.push(part);
            rest = after;
        }
        ranges
            .into_par_iter()
            .for_each(|part| radsort::sort_by_key(part, |pair| pair.0));
        pairs
    }
}

/// The finer key ranges [`KeyLists::pass_pairs`] cuts a range into, each sorted on its own.
const SUB_RANGES: u32 = 16;

/// Documents whose pairs one task of [`KeyLists::pass_pairs`] scatters.
const CHUNK_DOCUMENTS: usize = 8192;

/// The run of sorted `list` whose keys fall in range `pass` of `passes` equal ranges of the
/// key space.
fn run_in(list: &[u32], pass: u32, passes: u32) -> &[u32] {
    let start = list.partition_point(|&k| pass_of(k, passes) < pass);
    let len = list[start..].partition_point(|&k| pass_of(k, passes) == pass);
    &list[start..start + len]
}

/// The pass of `passes` equal ranges of the key space whose range holds `key`.
fn pass_of(key: u32, passes: u32) -> u32 {
    ((u64::from(key) * u64::from(passes)) >> 32) as u32
}

/// The bits of a key that name its range in a [`KeyFile`] block: each block's pairs are
/// scattered into `2^RANGE_BITS` fixed key ranges by their keys' top bits, and a pass reads,
/// of each block, only the ranges that overlap its own.
const RANGE_BITS: u32 = 12;
/// The bits of a document's place in its [`KeyFile`] block: with the `32 - RANGE_BITS` bits
/// of a key below its range, a pair takes 4 bytes on file.
const BLOCK_BITS: u32 = RANGE_BITS;

/// Key lists as [`KeyLists`] holds them, on an unlinked temporary file (in `TMPDIR`), as
/// `(key, document)` pairs of 4 bytes: the lists are written in blocks of `2^BLOCK_BITS`
/// documents, each block's pairs scattered into `2^RANGE_BITS` key ranges (in document order
/// within each), so that a pass reads back only the part of each block that holds its keys,
/// and the file is read about once over all the passes. An add holds only where each block's
/// ranges end. The passages' fingerprints, five times the keys of the stories' postings, wait
/// there while the stories are joined.
#[derive(Debug)]
pub(crate) struct KeyFile {
    file: File,
    /// The blocks written, in order.
    blocks: Vec<Block>,
    /// Pairs written.
    pairs: u64,
    /// Documents appended.
    documents: usize,
    /// The pairs of the block being appended, kept for the next.
    scattered: Vec<u32>,
}

/// A block of a [`KeyFile`].
#[derive(Debug)]
struct Block {
    /// Where its pairs start, in pairs from the start of the file.
    start: u64,
    /// Its first document.
    first_doc: u32,
    /// Where each key range's pairs end, in pairs from `start`.
    range_ends: Box<[u32]>,
}

impl Block {
    /// Where the pairs of key range `range` start, in pairs from the block's start.
    fn range_start(&self, range: usize) -> u32 {
        if range == 0 {
            0
        } else {
            self.range_ends[range - 1]
        }
    }
}

impl KeyFile {
    /// An empty file.
    pub fn new() -> io::Result<KeyFile> {
        Ok(KeyFile::on(tempfile::tempfile()?))
    }

    fn on(file: File) -> KeyFile {
        KeyFile {
            file,
            blocks: Vec::new(),
            pairs: 0,
            documents: 0,
            scattered: Vec::new(),
        }
    }

    /// Appends the lists of `lists`, after those before, a block at a time.
    pub fn append(&mut self, lists: &KeyLists) -> io::Result<()> {
        let (pairs, documents, blocks) = (self.pairs, self.documents, self.blocks.len());
        for first in (0..lists.len()).step_by(1 << BLOCK_BITS) {
            let last = lists.len().min(first + (1 << BLOCK_BITS));
            if let Err(failed) = self.append_block(lists, first..last) {
                (self.pairs, self.documents) = (pairs, documents);
                self.blocks.truncate(blocks);
                return Err(failed);
            }
        }
        Ok(())
    }

    /// Appends lists `docs` of `lists` (at most `2^BLOCK_BITS`) as a block.
    fn append_block(&mut self, lists: &KeyLists, docs: std::ops::Range<usize>) -> io::Result<()> {
        let range = |key: u32| (key >> (32 - RANGE_BITS)) as usize;
        let low = |key: u32| key << RANGE_BITS;
        let mut ends = vec![0u32; 1 << RANGE_BITS];
        let keys = &lists.keys[lists.start(docs.start)..lists.start(docs.end)];
        for &key in keys {
            ends[range(key)] += 1;
        }
        let mut next = Vec::with_capacity(ends.len());
        let mut sum = 0;
        for count in ends.iter_mut() {
            next.push(sum);
            sum += *count;
            *count = sum;
        }
        // A key's bits below its range, then the document's place in the block.
        let scattered = &mut self.scattered;
        scattered.resize(keys.len(), 0);
        for (place, doc) in docs.clone().enumerate() {
            for &key in lists.list(doc) {
                let at = &mut next[range(key)];
                scattered[*at as usize] = low(key) | place as u32;
                *at += 1;
            }
        }
        write_keys(&self.file, self.pairs * 4, scattered)?;
        self.blocks.push(Block {
            start: self.pairs,
            first_doc: self.documents as u32,
            range_ends: ends.into_boxed_slice(),
        });
        self.pairs += keys.len() as u64;
        self.documents += docs.len();
        Ok(())
    }

    /// Number of documents.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.documents
    }

    /// As [`KeyLists::passes`].
    pub fn passes(&self, pass_pairs: usize) -> u32 {
        (self.pairs as usize).div_ceil(pass_pairs).max(1) as u32
    }

    /// As [`KeyLists::pass_pairs`], the pairs read from the file: of each block, the key
    /// ranges that overlap the pass's, in one read. The pairs are then gathered a key range
    /// at a time, from every block in turn (documents in order), and each range's pairs
    /// sorted by key while they are in the fast caches: their keys share their top bits, so
    /// the sort passes over the bits below them only.
    pub fn pass_pairs(&self, pass: u32, passes: u32) -> io::Result<Vec<(u32, u32)>> {
        // The file's ranges that hold the pass's keys: from that of its first key (the
        // smallest whose pass is `pass`) to that of its last (one below the next pass's first).
        let first_key = |pass: u32| (u64::from(pass) << 32).div_ceil(u64::from(passes));
        let shift = 32 - RANGE_BITS;
        let first = (first_key(pass) >> shift) as usize;
        let last = ((first_key(pass + 1) - 1) >> shift) as usize;
        let place_mask = (1 << BLOCK_BITS) - 1;
        // Each block's part of the pass, one after another in `read`: where it starts there,
        // and where it starts in the block.
        let mut parts = Vec::with_capacity(self.blocks.len());
        let mut total = 0;
        for block in &self.blocks {
            let from = block.range_start(first);
            parts.push((total, from));
            total += (block.range_ends[last] - from) as usize;
        }
        let mut read = vec![0; total];
        for (block, &(start, from)) in self.blocks.iter().zip(&parts) {
            let part = &mut read[start..][..(block.range_ends[last] - from) as usize];
            read_keys(&self.file, (block.start + u64::from(from)) * 4, part)?;
        }
        let mut pairs = Vec::with_capacity(total);
        for range in first..=last {
            let top = (range as u32) << shift;
            let gathered = pairs.len();
            for (block, &(start, from)) in self.blocks.iter().zip(&parts) {
                let begin = start + (block.range_start(range) - from) as usize;
                let end = start + (block.range_ends[range] - from) as usize;
                pairs.extend(
                    (read[begin..end].iter())
                        .map(|&pair| {
                            (
                                top | pair >> BLOCK_BITS,
                                block.first_doc + (pair & place_mask),
                            )
                        })
                        .filter(|&(key, _)| pass_of(key, passes) == pass),
                );
            }
            radsort::sort_by_key(&mut pairs[gathered..], |pair| pair.0);
        }
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
        let mut write_only = KeyFile::on(File::create(&path).unwrap());
        write_only.append(&two).unwrap();
        assert!(write_only.pass_pairs(0, 1).is_err());
        // Opened for reading only: appending fails, and nothing is counted as written.
        let mut read_only = KeyFile::on(File::open(&path).unwrap());
        assert!(read_only.append(&two).is_err());
        assert_eq!(read_only.len(), 0);
    }

    #[test]
    fn lists_longer_than_a_block_come_back_in_order() {
        // 9,000 lists in two appends: each takes more than one block on file.
        let of: Vec<Vec<u32>> = (0..9_000u32)
            .map(|doc| {
                let mut keys: Vec<u32> = (0..4)
                    .map(|i| (doc * 4 + i).wrapping_mul(0x9E37_79B1))
                    .collect();
                keys.sort_unstable();
                keys
            })
            .collect();
        let refs: Vec<&[u32]> = of.iter().map(Vec::as_slice).collect();
        let in_memory = lists(&refs);
        let mut file = KeyFile::new().unwrap();
        file.append(&lists(&refs[..5_000])).unwrap();
        file.append(&lists(&refs[5_000..])).unwrap();
        assert_eq!(file.len(), 9_000);
        for pass in 0..3 {
            assert_eq!(
                file.pass_pairs(pass, 3).unwrap(),
                in_memory.pass_pairs(pass, 3)
            );
        }
    }

    proptest::proptest! {
        #[test]
        fn passes_split_every_pair_into_key_ranges_in_order(
            of in proptest::collection::vec(
                proptest::collection::btree_set(proptest::prelude::any::<u32>(), 0..20),
                0..30,
            ),
            passes in proptest::prop_oneof![1u32..6, 1500u32..1600],
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
