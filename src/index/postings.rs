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
//! look-ups skip them and merges drop them.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use anyhow::{bail, Result};
use redb::{ReadableTable, Table, TableDefinition, WriteTransaction};
use rustc_hash::FxHashSet;

/// Pairs per chunk.
pub const CHUNK: usize = 128;

/// A segment's directory: number → pairs, document base, first key of each chunk.
pub(crate) const SEGMENTS: TableDefinition<u32, &[u8]> = TableDefinition::new("segments");
/// Chunks: (segment, chunk) → coded pairs.
pub(crate) const CHUNKS: TableDefinition<(u32, u32), &[u8]> = TableDefinition::new("chunks");
/// Removed documents whose pairs are still in some segment.
pub(crate) const DEAD: TableDefinition<u32, ()> = TableDefinition::new("dead");

/// A segment merges into the one before it when it holds at least 1/MERGE_RATIO as many
/// pairs.
const MERGE_RATIO: u64 = 4;

/// A segment's directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Directory {
    /// Pairs in the segment.
    pub pairs: u64,
    /// The smallest document number; documents are coded as offsets from it.
    pub base: u32,
    /// The first key of each chunk.
    pub first_keys: Vec<u32>,
}

impl Directory {
    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(12 + 4 * self.first_keys.len());
        out.extend(self.pairs.to_le_bytes());
        out.extend(self.base.to_le_bytes());
        for k in &self.first_keys {
            out.extend(k.to_le_bytes());
        }
        out
    }

    fn decode(bytes: &[u8]) -> Result<Directory> {
        if bytes.len() < 12 || !(bytes.len() - 12).is_multiple_of(4) {
            bail!("a damaged postings directory in the index; restore the index from a copy");
        }
        let pairs = u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes"));
        let base = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
        let first_keys = bytes[12..]
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
            .collect();
        Ok(Directory {
            pairs,
            base,
            first_keys,
        })
    }
}

fn put_varint(out: &mut Vec<u8>, mut value: u32) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

fn get_varint(bytes: &[u8], at: &mut usize) -> Result<u32> {
    let mut value = 0u32;
    for shift in (0..35).step_by(7) {
        let Some(&byte) = bytes.get(*at) else {
            bail!("a damaged postings chunk in the index; restore the index from a copy");
        };
        *at += 1;
        value |= u32::from(byte & 0x7F) << shift;
        if byte < 0x80 {
            return Ok(value);
        }
    }
    bail!("a damaged postings chunk in the index; restore the index from a copy")
}

/// Codes sorted pairs: the first key in full, then key deltas; documents as offsets from
/// `base`.
pub fn encode_chunk(pairs: &[(u32, u32)], base: u32) -> Vec<u8> {
    let mut out = Vec::with_capacity(pairs.len() * 5);
    let mut previous = pairs.first().map_or(0, |p| p.0);
    out.extend(previous.to_le_bytes());
    for &(key, doc) in pairs {
        put_varint(&mut out, key - previous);
        put_varint(&mut out, doc - base);
        previous = key;
    }
    out
}

/// The pairs coded by [`encode_chunk`], appended to `out`.
pub fn decode_chunk(bytes: &[u8], base: u32, out: &mut Vec<(u32, u32)>) -> Result<()> {
    if bytes.len() < 4 {
        bail!("a damaged postings chunk in the index; restore the index from a copy");
    }
    let mut key = u32::from_le_bytes(bytes[..4].try_into().expect("4 bytes"));
    let mut at = 4;
    while at < bytes.len() {
        key = key.wrapping_add(get_varint(bytes, &mut at)?);
        let doc = base.wrapping_add(get_varint(bytes, &mut at)?);
        out.push((key, doc));
    }
    Ok(())
}

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
    /// them. A key held by more than `max_bucket` documents (boilerplate, or a text indexed
    /// that many times) gives its oldest document only (the smallest number): one candidate
    /// stands for them, so the work stays bounded, and copies of a text indexed any number
    /// of times still find the story they were joined into.
    pub(crate) fn find(
        &self,
        chunks: &impl ReadableTable<(u32, u32), &'static [u8]>,
        keys: &[u32],
        max_bucket: usize,
    ) -> Result<Vec<(u32, u32)>> {
        let mut found: Vec<(u32, u32)> = Vec::new();
        for (number, directory) in &self.directories {
            let first = &directory.first_keys;
            // (chunk, key) for every chunk that may hold a key: a key's pairs start in the
            // last chunk whose first key is below it (or the first chunk), and may run on
            // through chunks that start with it. Keys are sorted, so chunks come in order.
            let mut wanted: Vec<(u32, u32)> = Vec::new();
            for &key in keys {
                let mut chunk = first.partition_point(|&f| f < key).saturating_sub(1);
                while chunk < first.len() && first[chunk] <= key {
                    wanted.push((chunk as u32, key));
                    chunk += 1;
                }
            }
            let (Some(&(low, _)), Some(&(high, _))) = (wanted.first(), wanted.last()) else {
                continue;
            };
            let base = directory.base;
            if wanted.len() <= 64 {
                // A few keys (a query): decoded here, no second thread.
                let block = read_all(chunks, *number, &wanted, low, high, first.len())?;
                found.extend(decode_blocks_in(block, base, &self.dead)?);
                continue;
            }
            // The chunks' bytes are copied out in blocks, which a second thread decodes
            // while the table is read on: reading and decoding each take about half the
            // time.
            let (send, receive) = crossbeam_channel::bounded::<Block>(2);
            let dead = &self.dead;
            let decoded = std::thread::scope(|scope| -> Result<Vec<(u32, u32)>> {
                let decoder = scope.spawn(|| decode_blocks(receive, base, dead));
                let read = read_blocks(chunks, *number, &wanted, low, high, first.len(), send);
                let decoded = decoder.join().expect("the decoding thread does not panic");
                read?;
                decoded
            })?;
            found.extend(decoded);
        }
        found.sort_unstable();
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

/// The chunks `wanted` names, read into blocks on this thread.
fn read_all<'a>(
    chunks: &impl ReadableTable<(u32, u32), &'static [u8]>,
    number: u32,
    wanted: &'a [(u32, u32)],
    low: u32,
    high: u32,
    chunk_count: usize,
) -> Result<Vec<Block<'a>>> {
    let (send, receive) = crossbeam_channel::unbounded::<Block>();
    read_blocks(chunks, number, wanted, low, high, chunk_count, send)?;
    Ok(receive.into_iter().collect())
}

/// [`decode_blocks`] of blocks already read.
fn decode_blocks_in(
    blocks: Vec<Block>,
    base: u32,
    dead: &FxHashSet<u32>,
) -> Result<Vec<(u32, u32)>> {
    let (send, receive) = crossbeam_channel::unbounded::<Block>();
    for block in blocks {
        let _ = send.send(block);
    }
    drop(send);
    decode_blocks(receive, base, dead)
}

/// The wanted entries `(chunk, key)` of one chunk.
type Wanted<'a> = &'a [(u32, u32)];

/// Bytes of postings chunks copied out of the table: each chunk's start and end in them, and
/// its wanted entries.
struct Block<'a> {
    bytes: Vec<u8>,
    chunks: Vec<(usize, usize, Wanted<'a>)>,
}

/// Bytes of chunks a [`Block`] holds before it is sent.
const BLOCK_BYTES: usize = 1 << 20;

/// Reads the chunks of segment `number` that `wanted` (sorted `(chunk, key)`, chunks `low` to
/// `high`, of `chunk_count`) names and sends them in blocks.
fn read_blocks<'a>(
    chunks: &impl ReadableTable<(u32, u32), &'static [u8]>,
    number: u32,
    wanted: &'a [(u32, u32)],
    low: u32,
    high: u32,
    chunk_count: usize,
    send: crossbeam_channel::Sender<Block<'a>>,
) -> Result<()> {
    let lost = || anyhow::anyhow!("the index lost a postings chunk; restore it from a copy");
    let mut block = Block {
        bytes: Vec::with_capacity(BLOCK_BYTES + BLOCK_BYTES / 4),
        chunks: Vec::new(),
    };
    let mut add = |bytes: &[u8], group: &'a [(u32, u32)]| {
        let start = block.bytes.len();
        block.bytes.extend_from_slice(bytes);
        block.chunks.push((start, block.bytes.len(), group));
        if block.bytes.len() >= BLOCK_BYTES {
            let full = std::mem::replace(
                &mut block,
                Block {
                    bytes: Vec::with_capacity(BLOCK_BYTES + BLOCK_BYTES / 4),
                    chunks: Vec::new(),
                },
            );
            // The decoder receives every block, even after an error, so this only fails if
            // it panicked, which the caller reports.
            let _ = send.send(full);
        }
    };
    let mut groups = wanted.chunk_by(|a, b| a.0 == b.0).peekable();
    let distinct = wanted.chunk_by(|a, b| a.0 == b.0).count();
    if distinct * 8 > chunk_count {
        // Most chunks are wanted: one scan in key order beats a look-up each.
        for entry in chunks.range((number, low)..=(number, high))? {
            let (chunk, bytes) = entry?;
            let chunk = chunk.value().1;
            if let Some(group) = groups.next_if(|g| g[0].0 == chunk) {
                add(bytes.value(), group);
            }
        }
        if groups.next().is_some() {
            return Err(lost());
        }
    } else {
        for group in groups {
            let bytes = chunks.get((number, group[0].0))?.ok_or_else(lost)?;
            add(bytes.value(), group);
        }
    }
    if !block.chunks.is_empty() {
        let _ = send.send(block);
    }
    Ok(())
}

/// Decodes the blocks received and keeps each wanted key's pairs, documents in `dead` left
/// out. After an error, the blocks still sent are received and dropped.
fn decode_blocks(
    receive: crossbeam_channel::Receiver<Block>,
    base: u32,
    dead: &FxHashSet<u32>,
) -> Result<Vec<(u32, u32)>> {
    let mut found = Vec::new();
    let mut decoded = Vec::with_capacity(CHUNK);
    let mut failed = None;
    for block in receive {
        if failed.is_some() {
            continue;
        }
        for &(start, end, group) in &block.chunks {
            decoded.clear();
            if let Err(e) = decode_chunk(&block.bytes[start..end], base, &mut decoded) {
                failed = Some(e);
                break;
            }
            for &(_, key) in group {
                let first = decoded.partition_point(|p| p.0 < key);
                found.extend(
                    decoded[first..]
                        .iter()
                        .take_while(|p| p.0 == key)
                        .filter(|p| !dead.contains(&p.1)),
                );
            }
        }
    }
    match failed {
        Some(e) => Err(e),
        None => Ok(found),
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

    fn directories(&self) -> Result<Vec<(u32, Directory)>> {
        directories(&self.segments)
    }

    /// See [`LookUp::find`].
    #[cfg(test)]
    pub fn look_up(&self, keys: &[u32], max_bucket: usize) -> Result<Vec<(u32, u32)>> {
        LookUp::read(&self.segments, &self.dead)?.find(&self.chunks, keys, max_bucket)
    }

    /// Writes sorted, distinct pairs as a new segment, then merges segments as the policy
    /// says; true when segments were merged.
    #[cfg(test)]
    pub fn add_segment(&mut self, pairs: &[(u32, u32)]) -> Result<bool> {
        let Some(base) = pairs.iter().map(|p| p.1).min() else {
            return Ok(false);
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
    ) -> Result<bool> {
        let directories = self.directories()?;
        let number = directories.last().map_or(0, |(n, _)| n + 1);
        let written = self.write_segment(number, base, pairs)?;
        if written == 0 {
            return Ok(false);
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
            self.merge(&numbers, from == 0)?;
            return Ok(true);
        }
        Ok(false)
    }

    /// Merges the given segments (the newest ones, oldest first) into one new segment,
    /// dropping the pairs of removed documents; with `all`, every segment is merged and the
    /// list of dead documents is emptied. The segments are read chunk by chunk, so memory
    /// does not grow with their size.
    fn merge(&mut self, numbers: &[u32], all: bool) -> Result<()> {
        let dead: FxHashSet<u32> = self
            .dead
            .iter()?
            .map(|e| Ok(e?.0.value()))
            .collect::<Result<_>>()?;
        let mut cursors = Vec::with_capacity(numbers.len());
        for &number in numbers {
            let bytes = self.segments.get(number)?.ok_or_else(|| {
                anyhow::anyhow!("the index lost a postings segment; restore it from a copy")
            })?;
            let directory = Directory::decode(bytes.value())?;
            cursors.push(Cursor {
                number,
                directory,
                chunk: 0,
                pairs: Vec::with_capacity(CHUNK),
                at: 0,
            });
        }
        let output = numbers.iter().max().expect("segments to merge") + 1;
        let base = cursors
            .iter()
            .map(|c| c.directory.base)
            .min()
            .expect("segments to merge");
        let mut heap = BinaryHeap::new();
        for (i, cursor) in cursors.iter_mut().enumerate() {
            if let Some(pair) = cursor.next(&self.chunks)? {
                heap.push(Reverse((pair, i)));
            }
        }
        let mut chunk = Vec::with_capacity(CHUNK);
        let mut first_keys = Vec::new();
        let mut total = 0u64;
        let mut last = None;
        while let Some(Reverse((pair, i))) = heap.pop() {
            if let Some(next) = cursors[i].next(&self.chunks)? {
                heap.push(Reverse((next, i)));
            }
            if dead.contains(&pair.1) || last == Some(pair) {
                continue;
            }
            last = Some(pair);
            chunk.push(pair);
            total += 1;
            if chunk.len() == CHUNK {
                self.put_chunk(output, &mut first_keys, &mut chunk, base)?;
            }
        }
        if !chunk.is_empty() {
            self.put_chunk(output, &mut first_keys, &mut chunk, base)?;
        }
        for cursor in &cursors {
            for c in 0..cursor.directory.first_keys.len() as u32 {
                self.chunks.remove((cursor.number, c))?;
            }
            self.segments.remove(cursor.number)?;
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
        Ok(())
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
}

impl Cursor {
    fn next(
        &mut self,
        chunks: &impl ReadableTable<(u32, u32), &'static [u8]>,
    ) -> Result<Option<(u32, u32)>> {
        if self.at == self.pairs.len() {
            if self.chunk as usize == self.directory.first_keys.len() {
                return Ok(None);
            }
            let bytes = chunks.get((self.number, self.chunk))?.ok_or_else(|| {
                anyhow::anyhow!("the index lost a postings chunk; restore it from a copy")
            })?;
            self.pairs.clear();
            decode_chunk(bytes.value(), self.directory.base, &mut self.pairs)?;
            self.chunk += 1;
            self.at = 0;
        }
        self.at += 1;
        Ok(self.pairs.get(self.at - 1).copied())
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
    fn segments_find_keys_across_chunks_and_merge() {
        with_postings(|p| {
            // Key 7 is held by 2,000 documents: its run crosses several chunks.
            let mut first: Vec<(u32, u32)> = (0..2000).map(|d| (7, d)).collect();
            first.extend((0..2000).map(|d| (1000 + d, d)));
            first.sort_unstable();
            p.add_segment(&first).unwrap();
            let found = p.look_up(&[7, 1500, 5000], 5000).unwrap();
            assert_eq!(found.iter().filter(|f| f.0 == 7).count(), 2000);
            assert_eq!(found.iter().filter(|f| f.0 == 1500).count(), 1);
            // A bucket over max-bucket gives its oldest document only.
            assert_eq!(p.look_up(&[7], 1999).unwrap(), vec![(7, 0)]);
            let found = p.look_up(&[7, 1500], 1999).unwrap();
            assert_eq!(found, vec![(7, 0), (1500, 500)]);
            // A big enough second segment merges into the first; dead documents go.
            p.dead.insert(500, ()).unwrap();
            let second: Vec<(u32, u32)> = (0..1500).map(|d| (1500, 2000 + d)).collect();
            p.add_segment(&second).unwrap();
            assert_eq!(p.directories().unwrap().len(), 1);
            let found = p.look_up(&[7, 1500], 5000).unwrap();
            assert_eq!(found.iter().filter(|f| f.0 == 1500).count(), 1500);
            assert_eq!(found.iter().filter(|f| f.0 == 7).count(), 1999);
            assert!(!found.iter().any(|f| f.1 == 500));
            assert_eq!(p.dead.iter().unwrap().count(), 0);
            // A small one stays a segment of its own.
            p.add_segment(&[(9, 9000)]).unwrap();
            assert_eq!(p.directories().unwrap().len(), 2);
            assert_eq!(p.look_up(&[9], 10).unwrap(), vec![(9, 9000)]);
        });
    }
}
