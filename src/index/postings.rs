//! The postings of the index: which documents hold each candidate key. Each add writes its
//! postings once, as a new segment: `(key, document)` pairs sorted and cut into chunks of
//! `CHUNK` pairs, delta-coded (about 4 bytes a pair), with the first key of every chunk in the
//! segment's directory. Nothing already written is rewritten by an add, so an add costs what
//! it adds, not what the index holds; a look-up of sorted keys reads each segment's chunks in
//! one pass.
//!
//! Segments are merged as they accumulate (a segment merges into the one before it once it
//! is at least a quarter of that one's size), so there are O(log n) of them and each pair is
//! rewritten O(log n) times. A removed document leaves its pairs behind, listed in `dead`;
//! look-ups skip them and merges drop them. The passages' winnowed fingerprints are kept the
//! same way in tables of their own ([`Postings::open_passages`]).

use rayon::prelude::*;
use redb::{ReadableTable, Table, WriteTransaction};
use rustc_hash::FxHashSet;

use crate::engine::sorting::par_sort_by_prefix;
use crate::index::error::{Damage, IndexError, Result};
use crate::index::schema::{
    decode_chunk, encode_chunk, ChunkPairs, Directory, CHUNKS, DEAD, PASSAGE_CHUNKS, PASSAGE_DEAD,
    PASSAGE_SEGMENTS, SEGMENTS,
};
use crate::sketch::shingle::gallop;

/// Pairs per chunk.
pub const CHUNK: usize = 128;

/// A segment merges into the one before it when it holds at least 1/MERGE_RATIO as many
/// pairs.
const MERGE_RATIO: u64 = 4;

/// The postings tables of a write transaction.
pub(crate) struct Postings<'t> {
    pub segments: Table<'t, u32, &'static [u8]>,
    pub chunks: Table<'t, (u32, u32), &'static [u8]>,
    pub dead: Table<'t, u32, ()>,
}

/// The segments' numbers and directories, oldest first.
pub(crate) fn directories(
    segments: &impl ReadableTable<u32, &'static [u8]>,
) -> Result<Vec<(u32, Directory)>> {
    segments
        .iter()?
        .map(|entry| {
            let (number, bytes) = entry?;
            Ok((number.value(), Directory::decode(bytes.value())?))
        })
        .collect()
}

/// What a look-up needs besides the keys: the segments' directories and the removed
/// documents, read once for any number of look-ups in one transaction.
pub(crate) struct LookUp {
    directories: Vec<(u32, Directory)>,
    dead: FxHashSet<u32>,
}

impl LookUp {
    /// Reads the directories and the removed documents.
    pub(crate) fn read(
        segments: &impl ReadableTable<u32, &'static [u8]>,
        dead: &impl ReadableTable<u32, ()>,
    ) -> Result<LookUp> {
        let dead: FxHashSet<u32> = dead
            .iter()?
            .map(|e| Ok(e?.0.value()))
            .collect::<Result<_>>()?;
        Ok(LookUp {
            directories: directories(segments)?,
            dead,
        })
    }

    /// True when nothing is indexed.
    pub(crate) fn is_empty(&self) -> bool {
        self.directories.is_empty()
    }

    /// The documents holding each of `keys` (sorted, distinct), as sorted `(key, document)`
    /// pairs; removed documents are left out. Only the chunks that may hold a key are read:
    /// a few keys cost a B-tree look-up each, many keys one pass over the chunks that hold
    /// them, in parts that threads read at once. A key held by more than `max_bucket`
    /// documents (boilerplate, or a text indexed that many times) gives its oldest document
    /// only (the smallest number): one candidate stands for them, so the work stays bounded,
    /// and copies of a text indexed any number of times still find the story they were joined
    /// into.
    pub(crate) fn find(
        &self,
        chunks: &(impl ReadableTable<(u32, u32), &'static [u8]> + Sync),
        keys: &[u32],
        max_bucket: usize,
    ) -> Result<Vec<(u32, u32)>> {
        let mut found: Vec<(u32, u32)> = Vec::new();
        for (number, directory) in &self.directories {
            let wanted = wanted_chunks(&directory.first_keys, keys);
            let segment = Segment {
                number: *number,
                base: directory.base,
                dead: &self.dead,
            };
            if wanted.len() <= FEW_WANTED {
                // A few keys (a query): read here, no other thread.
                segment.find_in(chunks, &wanted, &mut found)?;
                continue;
            }
            let part = wanted.len().div_ceil(rayon::current_num_threads() * 4);
            let parts: Vec<Result<Vec<(u32, u32)>>> = wanted
                .par_chunks(part)
                .map(|part| {
                    let mut found = Vec::new();
                    segment.find_in(chunks, part, &mut found)?;
                    Ok(found)
                })
                .collect();
            for part in parts {
                found.extend(part?);
            }
        }
        // Each segment's pairs are sorted; those of several are sorted together.
        if self.directories.len() > 1 {
            par_sort_by_prefix(&mut found, |&(key, doc)| {
                u64::from(key) << 32 | u64::from(doc)
            });
        }
        debug_assert!(found.is_sorted(), "a segment's pairs come sorted");
        found.dedup();
        let mut kept = Vec::with_capacity(found.len());
        for run in found.chunk_by(|a, b| a.0 == b.0) {
            if run.len() <= max_bucket {
                kept.extend_from_slice(run);
            } else {
                kept.push(run[0]);
            }
        }
        Ok(kept)
    }
}

/// Wanted chunks up to which a look-up is read on the calling thread.
const FEW_WANTED: usize = 64;

/// `(chunk, key)` for every chunk of a segment whose chunks start with `first_keys` that may
/// hold one of `keys` (sorted): a key's pairs start in the last chunk whose first key is below
/// it (or the first chunk), and may run on through chunks that start with it. The result is
/// sorted.
fn wanted_chunks(first_keys: &[u32], keys: &[u32]) -> Vec<(u32, u32)> {
    let mut wanted = Vec::new();
    let mut start = 0;
    for &key in keys {
        // Keys are sorted, so a key's first chunk is at or after the one before's: found by
        // galloping from there, which costs little when keys are dense and a binary search
        // when they are few.
        start += gallop(&first_keys[start..], |&f| f < key).saturating_sub(1);
        let mut chunk = start;
        while chunk < first_keys.len() && first_keys[chunk] <= key {
            wanted.push((chunk as u32, key));
            chunk += 1;
        }
    }
    wanted
}

/// What reading one segment's pairs needs.
struct Segment<'a> {
    number: u32,
    base: u32,
    dead: &'a FxHashSet<u32>,
}

impl Segment<'_> {
    /// Appends to `found` the pairs of the wanted `(chunk, key)` entries (sorted), read from
    /// their chunks: in one scan when they are dense in the chunks they span, a look-up each
    /// otherwise.
    fn find_in(
        &self,
        chunks: &impl ReadableTable<(u32, u32), &'static [u8]>,
        wanted: &[(u32, u32)],
        found: &mut Vec<(u32, u32)>,
    ) -> Result<()> {
        let lost = || IndexError::damaged(Damage::LostChunk);
        let (Some(&(low, _)), Some(&(high, _))) = (wanted.first(), wanted.last()) else {
            return Ok(());
        };
        let mut groups = wanted.chunk_by(|a, b| a.0 == b.0).peekable();
        let distinct = wanted.chunk_by(|a, b| a.0 == b.0).count();
        if distinct * 8 > (high - low + 1) as usize {
            for entry in chunks.range((self.number, low)..=(self.number, high))? {
                let (chunk, bytes) = entry?;
                if let Some(group) = groups.next_if(|g| g[0].0 == chunk.value().1) {
                    self.find_in_chunk(bytes.value(), group, found)?;
                }
            }
            if groups.next().is_some() {
                return Err(lost());
            }
        } else {
            for group in groups {
                let bytes = chunks.get((self.number, group[0].0))?.ok_or_else(lost)?;
                self.find_in_chunk(bytes.value(), group, found)?;
            }
        }
        Ok(())
    }

    /// Appends to `found` the pairs of chunk `bytes` whose keys `group` (sorted `(chunk, key)`)
    /// wants, documents in `dead` left out. The chunk is decoded up to its last wanted key.
    fn find_in_chunk(
        &self,
        bytes: &[u8],
        group: &[(u32, u32)],
        found: &mut Vec<(u32, u32)>,
    ) -> Result<()> {
        let mut wanted = group.iter().map(|w| w.1).peekable();
        for pair in ChunkPairs::of(bytes, self.base)? {
            let (key, doc) = pair?;
            while wanted.next_if(|&w| w < key).is_some() {}
            match wanted.peek() {
                None => break,
                Some(&w) if w == key && !self.dead.contains(&doc) => found.push((key, doc)),
                Some(_) => {}
            }
        }
        Ok(())
    }
}

impl<'t> Postings<'t> {
    /// The postings tables of `txn`.
    pub fn open(txn: &'t WriteTransaction) -> Result<Postings<'t>> {
        Ok(Postings {
            segments: txn.open_table(SEGMENTS)?,
            chunks: txn.open_table(CHUNKS)?,
            dead: txn.open_table(DEAD)?,
        })
    }

    /// The postings of the passages' winnowed fingerprints in `txn`, kept as the candidate
    /// keys' are in tables of their own.
    pub fn open_passages(txn: &'t WriteTransaction) -> Result<Postings<'t>> {
        Ok(Postings {
            segments: txn.open_table(PASSAGE_SEGMENTS)?,
            chunks: txn.open_table(PASSAGE_CHUNKS)?,
            dead: txn.open_table(PASSAGE_DEAD)?,
        })
    }

    fn directories(&self) -> Result<Vec<(u32, Directory)>> {
        directories(&self.segments)
    }

    /// See [`LookUp::find`].
    #[cfg(test)]
    pub fn look_up(&self, keys: &[u32], max_bucket: usize) -> Result<Vec<(u32, u32)>> {
        LookUp::read(&self.segments, &self.dead)?.find(&self.chunks, keys, max_bucket)
    }

    /// Writes sorted, distinct pairs as a new segment, then merges segments as the policy
    /// says; returns the bytes of the segments merged (0 when none were).
    #[cfg(test)]
    pub fn add_segment(&mut self, pairs: &[(u32, u32)]) -> Result<u64> {
        let Some(base) = pairs.iter().map(|p| p.1).min() else {
            return Ok(0);
        };
        self.add_segment_from(base, pairs.iter().copied())
    }

    /// `add_segment` of pairs that come sorted and distinct from an iterator,
    /// none of a document below `base`: they are written as they come, so the segment is
    /// never held whole.
    pub fn add_segment_from(
        &mut self,
        base: u32,
        pairs: impl Iterator<Item = (u32, u32)>,
    ) -> Result<u64> {
        let directories = self.directories()?;
        let number = directories.last().map_or(0, |(n, _)| n + 1);
        let written = self.write_segment(number, base, pairs)?;
        if written == 0 {
            return Ok(0);
        }
        let mut sizes: Vec<(u32, u64)> = directories.iter().map(|(n, d)| (*n, d.pairs)).collect();
        sizes.push((number, written));
        // Merge the newest segment into the one before while it is big enough.
        let mut from = sizes.len() - 1;
        let mut merged = sizes[from].1;
        while from > 0 && sizes[from - 1].1 <= MERGE_RATIO * merged {
            from -= 1;
            merged += sizes[from].1;
        }
        if from + 1 < sizes.len() {
            let numbers: Vec<u32> = sizes[from..].iter().map(|s| s.0).collect();
            return self.merge(&numbers, from == 0);
        }
        Ok(0)
    }

    /// Merges the given segments (the newest ones, oldest first) into one new segment,
    /// dropping the pairs of removed documents; with `all`, every segment is merged and the
    /// list of dead documents is emptied. The segments are read chunk by chunk, so memory
    /// does not grow with their size. Returns the bytes of the merged segments, whose pages
    /// are free once the change is committed.
    fn merge(&mut self, numbers: &[u32], all: bool) -> Result<u64> {
        let dead: FxHashSet<u32> = self
            .dead
            .iter()?
            .map(|e| Ok(e?.0.value()))
            .collect::<Result<_>>()?;
        let mut cursors = Vec::with_capacity(numbers.len());
        for &number in numbers {
            let bytes = self
                .segments
                .get(number)?
                .ok_or_else(|| IndexError::damaged(Damage::LostSegment))?;
            let directory = Directory::decode(bytes.value())?;
            cursors.push(Cursor {
                number,
                directory,
                chunk: 0,
                pairs: Vec::with_capacity(CHUNK),
                at: 0,
                bytes: bytes.value().len() as u64 + 4,
            });
        }
        let output = numbers.iter().max().expect("segments to merge") + 1;
        let base = cursors
            .iter()
            .map(|c| c.directory.base)
            .min()
            .expect("segments to merge");
        let mut chunk = Vec::with_capacity(CHUNK);
        let mut first_keys = Vec::new();
        let mut total = 0u64;
        let mut last = None;
        let mut heads = Vec::with_capacity(cursors.len());
        loop {
            // The segment whose next pair comes first, and the next pair of the others that
            // comes first: the pairs up to it are taken from that segment as one run.
            heads.clear();
            for (i, cursor) in cursors.iter_mut().enumerate() {
                if let Some(head) = cursor.head(&self.chunks)? {
                    heads.push((head, i));
                }
            }
            let Some(&(_, i)) = heads.iter().min() else {
                break;
            };
            let bound = heads.iter().filter(|h| h.1 != i).map(|h| h.0).min();
            let cursor = &mut cursors[i];
            let pending = &cursor.pairs[cursor.at..];
            // Segments interleave finely, so runs are short: counted from their start.
            let run = bound.map_or(pending.len(), |b| {
                pending.iter().take_while(|&&p| p <= b).count()
            });
            for &pair in &pending[..run] {
                if last == Some(pair) || (!dead.is_empty() && dead.contains(&pair.1)) {
                    continue;
                }
                last = Some(pair);
                chunk.push(pair);
                total += 1;
                if chunk.len() == CHUNK {
                    self.put_chunk(output, &mut first_keys, &mut chunk, base)?;
                }
            }
            cursor.at += run;
        }
        if !chunk.is_empty() {
            self.put_chunk(output, &mut first_keys, &mut chunk, base)?;
        }
        for cursor in &cursors {
            let number = cursor.number;
            self.chunks
                .retain_in((number, 0)..=(number, u32::MAX), |_, _| false)?;
            self.segments.remove(number)?;
        }
        if total > 0 {
            let directory = Directory {
                pairs: total,
                base,
                first_keys,
            };
            self.segments
                .insert(output, directory.encode().as_slice())?;
        }
        if all {
            self.dead.retain(|_, _| false)?;
        }
        Ok(cursors.iter().map(|c| c.bytes).sum())
    }

    /// Writes `chunk` as the next chunk of segment `number` and empties it.
    fn put_chunk(
        &mut self,
        number: u32,
        first_keys: &mut Vec<u32>,
        chunk: &mut Vec<(u32, u32)>,
        base: u32,
    ) -> Result<()> {
        first_keys.push(chunk[0].0);
        let index = first_keys.len() as u32 - 1;
        self.chunks
            .insert((number, index), encode_chunk(chunk, base).as_slice())?;
        chunk.clear();
        Ok(())
    }

    /// Writes the pairs as segment `number`, a chunk at a time; how many there were.
    fn write_segment(
        &mut self,
        number: u32,
        base: u32,
        pairs: impl Iterator<Item = (u32, u32)>,
    ) -> Result<u64> {
        let mut first_keys = Vec::new();
        let mut chunk = Vec::with_capacity(CHUNK);
        let mut written = 0u64;
        for pair in pairs {
            debug_assert!(pair.1 >= base, "a document below the segment's base");
            chunk.push(pair);
            written += 1;
            if chunk.len() == CHUNK {
                self.put_chunk(number, &mut first_keys, &mut chunk, base)?;
            }
        }
        if !chunk.is_empty() {
            self.put_chunk(number, &mut first_keys, &mut chunk, base)?;
        }
        if written > 0 {
            let directory = Directory {
                pairs: written,
                base,
                first_keys,
            };
            self.segments
                .insert(number, directory.encode().as_slice())?;
        }
        Ok(written)
    }
}

/// Reads one segment's pairs in order, a chunk at a time.
struct Cursor {
    number: u32,
    directory: Directory,
    chunk: u32,
    pairs: Vec<(u32, u32)>,
    at: usize,
    /// Bytes of the chunks read, with their keys.
    bytes: u64,
}

impl Cursor {
    /// The next pair, its chunk read when the one before is used up; `None` at the end.
    fn head(
        &mut self,
        chunks: &impl ReadableTable<(u32, u32), &'static [u8]>,
    ) -> Result<Option<(u32, u32)>> {
        while self.at == self.pairs.len() {
            if self.chunk as usize == self.directory.first_keys.len() {
                return Ok(None);
            }
            let bytes = chunks
                .get((self.number, self.chunk))?
                .ok_or_else(|| IndexError::damaged(Damage::LostChunk))?;
            self.pairs.clear();
            decode_chunk(bytes.value(), self.directory.base, &mut self.pairs)?;
            self.bytes += bytes.value().len() as u64 + 8;
            self.chunk += 1;
            self.at = 0;
        }
        Ok(Some(self.pairs[self.at]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_round_trip() {
        let pairs = vec![(3, 10), (3, 11), (900, 10), (u32::MAX, 4_000_000)];
        let bytes = encode_chunk(&pairs, 10);
        let mut out = Vec::new();
        decode_chunk(&bytes, 10, &mut out).unwrap();
        assert_eq!(out, pairs);
        assert!(decode_chunk(&bytes[..bytes.len() - 1], 10, &mut Vec::new()).is_err());
    }

    #[test]
    fn wanted_chunks_are_those_a_binary_search_finds() {
        // Chunks starting with runs of equal keys, and keys before, among and after them.
        let first_keys: Vec<u32> = (0..500u32).map(|c| 10 + c / 3 * 7).collect();
        let searched = |keys: &[u32]| -> Vec<(u32, u32)> {
            let mut wanted = Vec::new();
            for &key in keys {
                let mut chunk = first_keys.partition_point(|&f| f < key).saturating_sub(1);
                while chunk < first_keys.len() && first_keys[chunk] <= key {
                    wanted.push((chunk as u32, key));
                    chunk += 1;
                }
            }
            wanted
        };
        let dense: Vec<u32> = (0..1300).collect();
        let sparse = [0, 10, 11, 17, 500, 1158, 1159, 1200, 5000];
        for keys in [&dense[..], &sparse[..], &[], &[17]] {
            assert_eq!(wanted_chunks(&first_keys, keys), searched(keys), "{keys:?}");
        }
        assert_eq!(wanted_chunks(&[], &[1, 2]), vec![]);
    }

    /// Runs `test` on the postings of a new index, in one write transaction, then commits.
    fn with_postings(test: impl FnOnce(&mut Postings)) {
        let file = tempfile::NamedTempFile::new().unwrap();
        let db = redb::Database::create(file.path()).unwrap();
        let txn = db.begin_write().unwrap();
        test(&mut Postings::open(&txn).unwrap());
        txn.commit().unwrap();
    }

    #[test]
    fn a_lost_or_damaged_chunk_fails_the_look_up_with_what_to_do() {
        with_postings(|p| {
            let pairs: Vec<(u32, u32)> = (0..10 * CHUNK as u32).map(|k| (k, k)).collect();
            p.add_segment(&pairs).unwrap();
            let every: Vec<u32> = (0..10 * CHUNK as u32).collect();
            assert_eq!(p.look_up(&every, 10).unwrap().len(), pairs.len());
            // Most chunks wanted (one scan) and a few (a look-up each), damaged then lost.
            for keys in [&every[..], &[5 * CHUNK as u32]] {
                p.chunks.insert((0, 5), &[1u8][..]).unwrap();
                let damaged = p.look_up(keys, 10).unwrap_err().to_string();
                assert!(damaged.contains("a damaged postings chunk"), "{damaged}");
                assert!(
                    damaged.contains("restore the index from a copy"),
                    "{damaged}"
                );
                p.chunks.remove((0, 5)).unwrap();
                let lost = p.look_up(keys, 10).unwrap_err().to_string();
                assert!(lost.contains("lost a postings chunk"), "{lost}");
                assert!(lost.contains("restore it from a copy"), "{lost}");
            }
        });
    }

    #[test]
    fn a_merge_keeps_every_pair_once_in_order_without_the_removed() {
        with_postings(|p| {
            // Three segments of interleaved keys, runs of one key across chunks, a pair in
            // two segments, and a removed document.
            let mut segments: Vec<Vec<(u32, u32)>> = vec![
                (0..1000).map(|i| (i * 3, i)).collect(),
                (0..700)
                    .map(|i| (i * 5, 1000 + i))
                    .chain([(3, 1)])
                    .collect(),
                (0..400)
                    .map(|i| (777, 2000 + i))
                    .chain([(0, 5000)])
                    .collect(),
            ];
            for (number, pairs) in segments.iter_mut().enumerate() {
                pairs.sort_unstable();
                p.write_segment(number as u32, 0, pairs.iter().copied())
                    .unwrap();
            }
            p.dead.insert(1003, ()).unwrap();
            p.merge(&[0, 1, 2], true).unwrap();
            let mut expected: Vec<(u32, u32)> = segments.concat();
            expected.sort_unstable();
            expected.dedup();
            expected.retain(|&(_, doc)| doc != 1003);
            assert_eq!(p.directories().unwrap().len(), 1);
            let mut keys: Vec<u32> = expected.iter().map(|&(key, _)| key).collect();
            keys.dedup();
            assert_eq!(p.look_up(&keys, 10_000).unwrap(), expected);
            assert_eq!(
                p.chunks.iter().unwrap().count(),
                expected.len().div_ceil(CHUNK)
            );
            assert_eq!(p.dead.iter().unwrap().count(), 0);
        });
    }

    #[test]
    fn segments_find_keys_across_chunks_and_merge() {
        with_postings(|p| {
            // Key 7 is held by 2,000 documents: its run crosses several chunks.
            let mut first: Vec<(u32, u32)> = (0..2000).map(|d| (7, d)).collect();
            first.extend((0..2000).map(|d| (1000 + d, d)));
            first.sort_unstable();
            assert_eq!(p.add_segment(&first).unwrap(), 0, "nothing merged");
            let found = p.look_up(&[7, 1500, 5000], 5000).unwrap();
            assert_eq!(found.iter().filter(|f| f.0 == 7).count(), 2000);
            assert_eq!(found.iter().filter(|f| f.0 == 1500).count(), 1);
            // A bucket over max-bucket gives its oldest document only.
            assert_eq!(p.look_up(&[7], 1999).unwrap(), vec![(7, 0)]);
            let found = p.look_up(&[7, 1500], 1999).unwrap();
            assert_eq!(found, vec![(7, 0), (1500, 500)]);
            // A big enough second segment merges into the first; dead documents go.
            p.dead.insert(500, ()).unwrap();
            let first_bytes: u64 = p
                .chunks
                .iter()
                .unwrap()
                .map(|e| e.unwrap().1.value().len() as u64 + 8)
                .sum::<u64>()
                + p.segments.get(0).unwrap().unwrap().value().len() as u64
                + 4;
            let second: Vec<(u32, u32)> = (0..1500).map(|d| (1500, 2000 + d)).collect();
            let merged = p.add_segment(&second).unwrap();
            assert_eq!(p.directories().unwrap().len(), 1);
            // Both segments' bytes: the first's, and the second's (under 10 bytes a pair).
            assert!(
                merged > first_bytes && merged < first_bytes + 15_000,
                "{merged} against {first_bytes}"
            );
            let found = p.look_up(&[7, 1500], 5000).unwrap();
            assert_eq!(found.iter().filter(|f| f.0 == 1500).count(), 1500);
            assert_eq!(found.iter().filter(|f| f.0 == 7).count(), 1999);
            assert!(!found.iter().any(|f| f.1 == 500));
            assert_eq!(p.dead.iter().unwrap().count(), 0);
            // A small one stays a segment of its own.
            assert_eq!(p.add_segment(&[(9, 9000)]).unwrap(), 0);
            assert_eq!(p.directories().unwrap().len(), 2);
            assert_eq!(p.look_up(&[9], 10).unwrap(), vec![(9, 9000)]);
        });
    }
}
