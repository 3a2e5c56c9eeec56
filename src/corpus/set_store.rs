//! The shingle sets of a collection between reading and clustering. Sets come in blocks, one
//! per reading batch. Blocks stay in memory until the store's keys outgrow its budget; then
//! every block goes to an unlinked temporary file (in the system's temporary folder: `TMPDIR`),
//! so a large collection holds no set memory however much text it has, and passes over the
//! sets read one block or one set at a time. A pass that gathers the sets in parts (of the
//! key space, too large to gather at once) reads the file once and scatters the parts to a
//! second temporary file, from which each part is read alone. A document's set is found by
//! its `Place`: block, start and length. Passes that take boilerplate out go block by block
//! and mostly shrink the sets, so a block on file is rewritten where it is (or, in the rare
//! case it grew, at the end).

use std::fs::File;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;

/// Where one document's lists are in its block: its main set, then a second list. As the
/// store is filled, the second list is the shingle set of the whole page (when the page had
/// furniture that main-text extraction dropped); a rewrite keeps there whatever its pass keeps
/// beside the new set (see [`SetStore::rewrite`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Place {
    /// The block.
    pub block: u32,
    /// The first key of the main set in the block.
    pub start: u32,
    /// Keys in the main set.
    pub len: u32,
    /// Keys in the second list, which follows the main set; 0 when there is none (the main set
    /// then stands for it).
    pub second: u32,
}

/// One block's keys: in memory, or in the file.
#[derive(Debug)]
enum Held {
    Memory(Vec<u32>),
    /// At this byte offset of the file, with room for this many keys.
    File {
        offset: u64,
        room: usize,
    },
}

/// Shingle sets in blocks, in memory while they fit a budget and all on file past it.
#[derive(Debug)]
pub struct SetStore {
    blocks: Vec<Held>,
    /// Each document's place, by document number.
    places: Vec<Place>,
    file: Option<File>,
    file_len: u64,
    /// Most keys held in memory.
    budget: usize,
    in_memory: usize,
    /// The first error reading or writing the file. A pass that meets one goes on with keys
    /// of zeros, and its caller turns the error into its own ([`SetStore::take_failure`]).
    failure: std::sync::Mutex<Option<io::Error>>,
}

impl SetStore {
    /// An empty store that holds at most `budget_bytes` of keys in memory.
    pub fn new(budget_bytes: usize) -> SetStore {
        SetStore {
            blocks: Vec::new(),
            places: Vec::new(),
            file: None,
            file_len: 0,
            budget: budget_bytes / 4,
            in_memory: 0,
            failure: std::sync::Mutex::new(None),
        }
    }

    /// Keeps the first error of the file's reads and writes.
    fn fail(&self, error: io::Error) {
        let mut failure = self.failure.lock().unwrap_or_else(|e| e.into_inner());
        failure.get_or_insert(error);
    }

    /// Runs `pass` over the main sets, document `d` of the pass being document `d - first` of
    /// the store, then returns what it made, or the first error reading the file meanwhile:
    /// a pass that met one read keys of zeros, so what it made is wrong and is dropped. The
    /// sets are only read through this, so no pass can leave a failed read unnoticed.
    pub fn reading<T>(&self, first: u32, pass: impl FnOnce(SetsView<'_>) -> T) -> io::Result<T> {
        let made = pass(SetsView {
            store: Some(self),
            first,
        });
        match self.take_failure() {
            Some(failure) => Err(failure),
            None => Ok(made),
        }
    }

    /// [`SetStore::reading`] over `store`'s sets, or over none (similarities are then
    /// estimated from the minima).
    pub fn reading_of<T>(
        store: Option<&SetStore>,
        first: u32,
        pass: impl FnOnce(SetsView<'_>) -> T,
    ) -> io::Result<T> {
        match store {
            Some(store) => store.reading(first, pass),
            None => Ok(pass(SetsView::none())),
        }
    }

    /// The first error reading or writing the file since the last call: when there is one,
    /// whatever the passes since made of the sets is wrong and must be dropped.
    pub(crate) fn take_failure(&self) -> Option<io::Error> {
        self.failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
    }

    /// A store in memory of the given sets, document `d` holding `sets[d]` as its main set.
    pub(crate) fn of_sets(sets: &[Vec<u32>]) -> SetStore {
        let mut store = SetStore::new(usize::MAX);
        let mut keys = Vec::new();
        let mut places = Vec::with_capacity(sets.len());
        for set in sets {
            places.push(Place {
                block: 0,
                start: keys.len() as u32,
                len: set.len() as u32,
                second: 0,
            });
            keys.extend_from_slice(set);
        }
        store.blocks.push(Held::Memory(keys));
        store.places = places;
        store
    }

    /// Adds a block of keys and returns its number. When the store's keys outgrow the memory
    /// budget, every block goes to the temporary file, this one and those before it, and so
    /// do all blocks after; the error is the file's.
    pub(crate) fn push_block(&mut self, keys: Vec<u32>) -> io::Result<u32> {
        let number = self.blocks.len() as u32;
        if self.file.is_none() && self.in_memory + keys.len() > self.budget {
            let file = tempfile::tempfile()?;
            let mut file_len = 0;
            for block in &mut self.blocks {
                if let Held::Memory(keys) = block {
                    write_keys(&file, file_len, keys)?;
                    let room = keys.len();
                    *block = Held::File {
                        offset: file_len,
                        room,
                    };
                    file_len += 4 * room as u64;
                }
            }
            (self.file, self.file_len, self.in_memory) = (Some(file), file_len, 0);
        }
        let Some(file) = &self.file else {
            self.in_memory += keys.len();
            self.blocks.push(Held::Memory(keys));
            return Ok(number);
        };
        let offset = self.file_len;
        write_keys(file, offset, &keys)?;
        self.file_len += 4 * keys.len() as u64;
        self.blocks.push(Held::File {
            offset,
            room: keys.len(),
        });
        Ok(number)
    }

    /// Gives each document its place, by document number.
    pub(crate) fn set_places(&mut self, places: Vec<Place>) {
        self.places = places;
    }

    /// Number of documents.
    pub fn len(&self) -> usize {
        self.places.len()
    }

    /// True when the store has no documents.
    pub fn is_empty(&self) -> bool {
        self.places.is_empty()
    }

    /// True when the blocks are on file.
    pub fn spilled(&self) -> bool {
        self.file.is_some()
    }

    /// The main set of document `doc`, read into `buffer` when its block is on file.
    pub fn set<'a>(&'a self, doc: u32, buffer: &'a mut Vec<u32>) -> &'a [u32] {
        let place = self.places[doc as usize];
        self.keys(place.block, place.start, place.len, buffer)
    }

    /// `len` keys of a block from `start`.
    fn keys<'a>(&'a self, block: u32, start: u32, len: u32, buffer: &'a mut Vec<u32>) -> &'a [u32] {
        let (start, len) = (start as usize, len as usize);
        match &self.blocks[block as usize] {
            Held::Memory(keys) => &keys[start..start + len],
            Held::File { offset, .. } => {
                buffer.resize(len, 0);
                let file = self.file.as_ref().expect("a block on file has a file");
                if let Err(e) = read_keys(file, offset + 4 * start as u64, buffer) {
                    buffer.fill(0);
                    self.fail(e);
                }
                buffer
            }
        }
    }

    /// Each document's main set, or with `page` the set that corpus statistics count (see
    /// [`counted_set`]), when every block is in memory.
    pub(crate) fn in_memory_sets(&self, page: bool) -> Option<Vec<&[u32]>> {
        self.places
            .iter()
            .map(|&p| match &self.blocks[p.block as usize] {
                Held::Memory(keys) => {
                    let (main, second) = split(keys, p);
                    Some(if page {
                        counted_set(main, second)
                    } else {
                        main
                    })
                }
                Held::File { .. } => None,
            })
            .collect()
    }

    /// Each document's set with its second list after it (the keys that a sketching pass left
    /// out of the main set, when it has them): its whole main set, in two sorted runs, when
    /// every block is in memory.
    pub(crate) fn in_memory_main_sets(&self) -> Option<Vec<&[u32]>> {
        self.places
            .iter()
            .map(|&p| match &self.blocks[p.block as usize] {
                Held::Memory(keys) => {
                    let start = p.start as usize;
                    Some(&keys[start..start + p.len as usize + p.second as usize])
                }
                Held::File { .. } => None,
            })
            .collect()
    }

    /// Keys in all the sets that corpus statistics count (see [`SetStore::in_memory_sets`]).
    pub(crate) fn page_keys(&self) -> usize {
        self.places
            .iter()
            .map(|p| if p.second > 0 { p.second } else { p.len } as usize)
            .sum()
    }

    /// Keys in all the main sets.
    pub(crate) fn set_keys(&self) -> usize {
        self.places.iter().map(|p| p.len as usize).sum()
    }

    /// Bytes of the temporary file: 0 while the sets are in memory.
    pub fn file_bytes(&self) -> u64 {
        self.file_len
    }

    /// Most keys the store holds in memory.
    pub(crate) fn budget_keys(&self) -> usize {
        self.budget
    }

    /// The documents of each block, in the order of their sets in it.
    fn documents_by_block(&self) -> Vec<Vec<u32>> {
        let mut by_block: Vec<Vec<u32>> = vec![Vec::new(); self.blocks.len()];
        for (doc, place) in self.places.iter().enumerate() {
            by_block[place.block as usize].push(doc as u32);
        }
        for docs in &mut by_block {
            docs.sort_unstable_by_key(|&d| self.places[d as usize].start);
        }
        by_block
    }

    /// A store in memory made of part of each document's sets: `take(main, second, out)`
    /// appends the keys kept of one document's main set and second list (its page set as read,
    /// empty when the page had no furniture) to `out`. Blocks on file are read one at a time.
    pub(crate) fn gather(&self, take: impl Fn(&[u32], &[u32], &mut Vec<u32>) + Sync) -> SetStore {
        let by_block = self.documents_by_block();
        let blocks: Vec<Rewritten<Vec<u32>>> = by_block
            .par_iter()
            .enumerate()
            .map_init(Vec::new, |buffer, (block, docs)| {
                let keys = self.block_keys(block, buffer);
                let (mut out, places) = remake_block(
                    block,
                    keys,
                    docs,
                    &self.places,
                    Vec::new(),
                    |_, main, second, out| {
                        take(main, second, out);
                        0
                    },
                );
                out.shrink_to_fit();
                (out, places)
            })
            .collect();
        self.gathered(blocks)
    }

    /// A store in memory of gathered blocks, one for each of this store's blocks.
    fn gathered(&self, blocks: Vec<Rewritten<Vec<u32>>>) -> SetStore {
        let mut store = SetStore::new(usize::MAX);
        store.places = vec![Place::default(); self.places.len()];
        for (keys, places) in blocks {
            for (doc, place) in places {
                store.places[doc as usize] = place;
            }
            store.in_memory += keys.len();
            store.blocks.push(Held::Memory(keys));
        }
        store
    }

    /// [`SetStore::gather`] in `parts` numbered parts, for a pass that cannot hold all it
    /// gathers at once: `take(part, main, second, out)` appends the keys kept of one document's
    /// sets for that part, and `each(part, store)` gets the store gathered for each part in
    /// turn, from the first.
    ///
    /// Sets in memory, or a single part, are gathered part by part. Sets on file are read once:
    /// one pass over the file scatters every part of every block to a second temporary file,
    /// from which each part is then read alone (each document's keys in a part are followed
    /// by their lengths, of one byte or a few). An error of either file is kept for the
    /// caller, as in the other passes ([`SetStore::take_failure`]).
    pub(crate) fn gather_parts(
        &self,
        parts: usize,
        take: impl Fn(usize, &[u32], &[u32], &mut Vec<u32>) + Sync,
        mut each: impl FnMut(usize, SetStore),
    ) {
        if parts <= 1 || !self.spilled() {
            for part in 0..parts {
                each(
                    part,
                    self.gather(|main, second, out| take(part, main, second, out)),
                );
            }
            return;
        }
        let by_block = self.documents_by_block();
        match self.scatter(parts, &by_block, &take) {
            Ok(scattered) => {
                for part in 0..parts {
                    each(part, self.gathered_from(&scattered, &by_block, part));
                }
            }
            Err(e) => self.fail(e),
        }
    }

    /// The pass of [`SetStore::gather_parts`] that reads every block once and writes what
    /// `take` keeps of it for each part to a new temporary file: a block's parts one after
    /// another, each part its keys, then the length of each document's keys in it.
    fn scatter(
        &self,
        parts: usize,
        by_block: &[Vec<u32>],
        take: &(impl Fn(usize, &[u32], &[u32], &mut Vec<u32>) + Sync),
    ) -> io::Result<Scattered> {
        let file = tempfile::tempfile()?;
        let file_end = AtomicU64::new(0);
        let written: Vec<(u64, Vec<(u32, u32)>)> = by_block
            .par_iter()
            .enumerate()
            .map_init(
                || {
                    (
                        Vec::new(),
                        vec![(Vec::new(), Vec::new()); parts],
                        Vec::new(),
                    )
                },
                |(buffer, pieces, bytes), (block, docs)| {
                    let keys = self.block_keys(block, buffer);
                    pieces.iter_mut().for_each(|(keys, lengths)| {
                        keys.clear();
                        lengths.clear();
                    });
                    for &doc in docs {
                        let (main, second) = split(keys, self.places[doc as usize]);
                        for (part, (keys, lengths)) in pieces.iter_mut().enumerate() {
                            let before = keys.len();
                            take(part, main, second, keys);
                            push_length(lengths, (keys.len() - before) as u32);
                        }
                    }
                    bytes.clear();
                    let sizes = pieces
                        .iter()
                        .map(|(keys, lengths)| {
                            extend_le(bytes, keys);
                            bytes.extend_from_slice(lengths);
                            (keys.len() as u32, lengths.len() as u32)
                        })
                        .collect();
                    let offset = file_end.fetch_add(bytes.len() as u64, Ordering::Relaxed);
                    if let Err(e) = write_at(&file, bytes, offset) {
                        self.fail(e);
                    }
                    (offset, sizes)
                },
            )
            .collect();
        let (offsets, sizes) = written.into_iter().unzip();
        Ok(Scattered {
            file,
            offsets,
            sizes,
        })
    }

    /// The store gathered for one part, read from the scattered file one block at a time.
    fn gathered_from(&self, scattered: &Scattered, by_block: &[Vec<u32>], part: usize) -> SetStore {
        let blocks: Vec<Rewritten<Vec<u32>>> = by_block
            .par_iter()
            .enumerate()
            .map_init(Vec::new, |bytes, (block, docs)| {
                let sizes = &scattered.sizes[block];
                let before: u64 = sizes[..part]
                    .iter()
                    .map(|&(keys, lengths)| 4 * u64::from(keys) + u64::from(lengths))
                    .sum();
                let (keys, lengths) = sizes[part];
                let keys_bytes = 4 * keys as usize;
                bytes.resize(keys_bytes + lengths as usize, 0);
                if let Err(e) = read_at(&scattered.file, bytes, scattered.offsets[block] + before) {
                    // All lengths read as 0: every document gathers nothing.
                    bytes.fill(0);
                    self.fail(e);
                }
                let (keys, lengths) = bytes.split_at(keys_bytes);
                let (mut key_at, mut length_at) = (0, 0);
                let mut out = Vec::with_capacity(keys.len() / 4);
                let places = docs
                    .iter()
                    .map(|&doc| {
                        let start = out.len();
                        let n = next_length(lengths, &mut length_at) as usize;
                        let end = (key_at + 4 * n).min(keys.len());
                        out.extend(
                            keys[key_at..end]
                                .chunks_exact(4)
                                .map(|k| u32::from_le_bytes(k.try_into().expect("four bytes"))),
                        );
                        key_at = end;
                        let place = Place {
                            block: block as u32,
                            start: start as u32,
                            len: (out.len() - start) as u32,
                            second: 0,
                        };
                        (doc, place)
                    })
                    .collect();
                (out, places)
            })
            .collect();
        self.gathered(blocks)
    }

    /// All the keys of a block, read into `buffer` when it is on file.
    fn block_keys<'a>(&'a self, block: usize, buffer: &'a mut Vec<u32>) -> &'a [u32] {
        let room = match &self.blocks[block] {
            Held::Memory(keys) => keys.len(),
            Held::File { room, .. } => *room,
        };
        self.keys(block as u32, 0, room as u32, buffer)
    }

    /// Rewrites every document's sets, block by block on all threads: `each(item, main, second,
    /// out)` gets the document's item (`items` is by document number), its main set and its
    /// second list (the page set as read, or what the last rewrite kept; empty when none), and appends
    /// the document's new main set to `out`, then optionally a new second list of keys kept
    /// with it, whose length it returns (0 for none). Keys of blocks that no document has
    /// (dropped records) are dropped.
    pub fn rewrite<T: Send>(
        &mut self,
        items: &mut [T],
        each: impl Fn(&mut T, &[u32], &[u32], &mut Vec<u32>) -> u32 + Sync,
    ) {
        assert_eq!(items.len(), self.places.len(), "one item per document");
        let by_block = self.documents_by_block();
        // Each block gets its documents' items, in the order of its documents.
        let mut slots: Vec<Option<&mut T>> = items.iter_mut().map(Some).collect();
        let items_by_block: Vec<Vec<&mut T>> = by_block
            .iter()
            .map(|docs| {
                docs.iter()
                    .map(|&d| {
                        slots[d as usize]
                            .take()
                            .expect("a document is in one block")
                    })
                    .collect()
            })
            .collect();
        // Each block is taken, rewritten and put back (or written back) on its own, so that
        // only a block per thread is held twice.
        let blocks = std::mem::take(&mut self.blocks);
        let (file, places) = (self.file.as_ref(), &self.places);
        let fail = |e| self.fail(e);
        let file_end = AtomicU64::new(self.file_len);
        let rewritten: Vec<Rewritten<Held>> = blocks
            .into_par_iter()
            .zip(by_block)
            .zip(items_by_block)
            .enumerate()
            .map_init(Vec::new, |buffer, (block, ((held, docs), items))| {
                let keys: &[u32] = match &held {
                    Held::Memory(keys) => keys,
                    Held::File { offset, room } => {
                        buffer.resize(*room, 0);
                        let file = file.expect("a block on file has a file");
                        if let Err(e) = read_keys(file, *offset, buffer) {
                            buffer.fill(0);
                            fail(e);
                        }
                        buffer
                    }
                };
                let out = Vec::with_capacity(keys.len());
                // remake_block visits the documents in the order of `docs`.
                let mut items = items.into_iter();
                let (mut out, new_places) =
                    remake_block(block, keys, &docs, places, out, |_, main, second, out| {
                        let item = items.next().expect("an item per document");
                        each(item, main, second, out)
                    });
                let held = match held {
                    Held::Memory(_) => {
                        out.shrink_to_fit();
                        Held::Memory(out)
                    }
                    Held::File {
                        mut offset,
                        mut room,
                    } => {
                        // A block that outgrows its room moves to the end of the file.
                        if out.len() > room {
                            room = out.len();
                            offset = file_end.fetch_add(4 * room as u64, Ordering::Relaxed);
                        }
                        let file = file.expect("a block on file has a file");
                        if let Err(e) = write_keys(file, offset, &out) {
                            fail(e);
                        }
                        Held::File { offset, room }
                    }
                };
                (held, new_places)
            })
            .collect();
        self.file_len = file_end.into_inner();
        self.in_memory = 0;
        for (held, places) in rewritten {
            for (doc, place) in places {
                self.places[doc as usize] = place;
            }
            if let Held::Memory(keys) = &held {
                self.in_memory += keys.len();
            }
            self.blocks.push(held);
        }
    }
}

/// A block made anew (its keys, or where they are), and the new place of each of its documents.
type Rewritten<B> = (B, Vec<(u32, Place)>);

/// What [`SetStore::gather_parts`] scattered: a temporary file holding, block after block,
/// each part's keys followed by the length of each of the block's documents' keys in it.
struct Scattered {
    file: File,
    /// Where each block's parts start in the file.
    offsets: Vec<u64>,
    /// Of each block, each part's keys and bytes of lengths.
    sizes: Vec<Vec<(u32, u32)>>,
}

/// Appends a length in 7-bit groups, low first, the high bit set on all but the last: one
/// byte up to 127.
fn push_length(bytes: &mut Vec<u8>, mut n: u32) {
    while n >= 0x80 {
        bytes.push(n as u8 | 0x80);
        n >>= 7;
    }
    bytes.push(n as u8);
}

/// The length at `at` written by [`push_length`], moving `at` past it; 0 past the end.
fn next_length(bytes: &[u8], at: &mut usize) -> u32 {
    let mut n = 0u32;
    let mut shift = 0u32;
    while let Some(&byte) = bytes.get(*at) {
        *at += 1;
        n |= u32::from(byte & 0x7f).checked_shl(shift).unwrap_or(0);
        if byte < 0x80 {
            break;
        }
        shift += 7;
    }
    n
}

/// Appends keys as little-endian bytes.
fn extend_le(bytes: &mut Vec<u8>, keys: &[u32]) {
    if cfg!(target_endian = "little") {
        bytes.extend_from_slice(bytemuck::cast_slice(keys));
    } else {
        bytes.extend(keys.iter().flat_map(|k| k.to_le_bytes()));
    }
}

/// Makes a block anew: `each(doc, main, second, out)` appends the new set of each of the block's
/// documents `docs` (in the order of their sets in `keys`) to `out`, then a second list whose
/// length it returns. Returns the new keys and each document's new place.
fn remake_block(
    block: usize,
    keys: &[u32],
    docs: &[u32],
    places: &[Place],
    mut out: Vec<u32>,
    mut each: impl FnMut(u32, &[u32], &[u32], &mut Vec<u32>) -> u32,
) -> Rewritten<Vec<u32>> {
    let new_places = docs
        .iter()
        .map(|&doc| {
            let (main, second_list) = split(keys, places[doc as usize]);
            let start = out.len();
            let second = each(doc, main, second_list, &mut out);
            let place = Place {
                block: block as u32,
                start: start as u32,
                len: (out.len() - start) as u32 - second,
                second,
            };
            (doc, place)
        })
        .collect();
    (out, new_places)
}

/// A document's main set and second list (empty when it has none) in its block.
fn split(keys: &[u32], p: Place) -> (&[u32], &[u32]) {
    let start = p.start as usize;
    let main_end = start + p.len as usize;
    (
        &keys[start..main_end],
        &keys[main_end..main_end + p.second as usize],
    )
}

/// The set of a document that corpus statistics count, from its main set and second list as
/// read: its page set, else its main set.
pub(crate) fn counted_set<'a>(main: &'a [u32], second: &'a [u32]) -> &'a [u32] {
    if second.is_empty() {
        main
    } else {
        second
    }
}

/// Where clustering finds the sets of documents: document `d` of a clustering is document
/// `d - first` of the store; documents before `first` (or all, without a store) have none.
#[derive(Debug, Clone, Copy, Default)]
pub struct SetsView<'a> {
    store: Option<&'a SetStore>,
    first: u32,
}

impl<'a> SetsView<'a> {
    /// No sets: similarities are estimated from the minima.
    pub fn none() -> SetsView<'a> {
        SetsView::default()
    }

    /// The store's sets, numbered from `first`, for tests of the passes (which are given
    /// their views by [`SetStore::reading`]).
    #[cfg(test)]
    pub(crate) fn of(store: &'a SetStore, first: u32) -> SetsView<'a> {
        SetsView {
            store: Some(store),
            first,
        }
    }

    /// True when the sets are read from a file (and are worth keeping once read).
    pub fn on_file(&self) -> bool {
        self.store.is_some_and(SetStore::spilled)
    }

    /// The set of document `doc`, when it has one.
    pub fn get<'b>(&self, doc: u32, buffer: &'b mut Vec<u32>) -> Option<&'b [u32]>
    where
        'a: 'b,
    {
        let store = self.store?;
        let local = doc.checked_sub(self.first)?;
        ((local as usize) < store.len()).then(|| store.set(local, buffer))
    }
}

/// Reads of the temporary files that are to fail, for tests of the passes that meet a failed
/// read (see [`fail_reads`]).
static FAILING_READS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Makes every later read of the temporary files of shingle sets fail (as a disk that has
/// gone bad does), or read again with `false`, in this process. A test seam: the passes that
/// read spilled sets are tested with it through the library's facade.
#[doc(hidden)]
pub fn fail_reads(fail: bool) {
    FAILING_READS.store(fail, Ordering::Relaxed);
}

/// The failure of a read while [`fail_reads`] is on.
#[inline]
fn failing_read() -> io::Result<()> {
    if FAILING_READS.load(Ordering::Relaxed) {
        return Err(io::Error::other(
            "reading failed (a failure made by a test)",
        ));
    }
    Ok(())
}

/// Writes keys (little-endian) at a byte offset.
pub(crate) fn write_keys(file: &File, offset: u64, keys: &[u32]) -> io::Result<()> {
    if cfg!(target_endian = "little") {
        return write_at(file, bytemuck::cast_slice(keys), offset);
    }
    let bytes: Vec<u8> = keys.iter().flat_map(|k| k.to_le_bytes()).collect();
    write_at(file, &bytes, offset)
}

/// Reads `keys.len()` keys (little-endian) from a byte offset.
pub(crate) fn read_keys(file: &File, offset: u64, keys: &mut [u32]) -> io::Result<()> {
    read_at(file, bytemuck::cast_slice_mut(keys), offset)?;
    keys.iter_mut().for_each(|k| *k = u32::from_le(*k));
    Ok(())
}

#[cfg(unix)]
fn write_at(file: &File, bytes: &[u8], offset: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::write_all_at(file, bytes, offset)
}

#[cfg(unix)]
fn read_at(file: &File, bytes: &mut [u8], offset: u64) -> io::Result<()> {
    failing_read()?;
    std::os::unix::fs::FileExt::read_exact_at(file, bytes, offset)
}

#[cfg(windows)]
fn write_at(file: &File, mut bytes: &[u8], mut offset: u64) -> io::Result<()> {
    use std::os::windows::fs::FileExt;
    while !bytes.is_empty() {
        let n = file.seek_write(bytes, offset)?;
        bytes = &bytes[n..];
        offset += n as u64;
    }
    Ok(())
}

#[cfg(windows)]
fn read_at(file: &File, mut bytes: &mut [u8], mut offset: u64) -> io::Result<()> {
    use std::os::windows::fs::FileExt;
    failing_read()?;
    while !bytes.is_empty() {
        match file.seek_read(bytes, offset)? {
            0 => return Err(io::ErrorKind::UnexpectedEof.into()),
            n => {
                bytes = &mut bytes[n..];
                offset += n as u64;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_read_of_the_file_is_kept_for_the_caller() {
        let mut store = SetStore::new(0);
        store.push_block(vec![1, 2, 3]).unwrap();
        store.set_places(vec![Place {
            block: 0,
            start: 0,
            len: 3,
            second: 0,
        }]);
        let mut buffer = Vec::new();
        assert_eq!(store.set(0, &mut buffer), [1, 2, 3]);
        assert!(store.take_failure().is_none());
        // The file loses its keys: reading them back fails at its end.
        store.file = Some(tempfile::tempfile().unwrap());
        assert_eq!(store.set(0, &mut buffer), [0, 0, 0]);
        let failure = store.take_failure().expect("the failure is kept");
        assert_eq!(failure.kind(), io::ErrorKind::UnexpectedEof);
        assert!(store.take_failure().is_none(), "taken once");
        store.rewrite(&mut [()], |(), main, _, out| {
            out.extend_from_slice(main);
            0
        });
        assert!(store.take_failure().is_some(), "a rewrite keeps it too");
        // The rewrite wrote the block back: the file loses it again.
        store.file = Some(tempfile::tempfile().unwrap());
        let mut parts = 0;
        store.gather_parts(
            2,
            |_, main, _, out| out.extend_from_slice(main),
            |_, gathered| {
                assert_eq!(gathered.len(), 1);
                parts += 1;
            },
        );
        assert_eq!(parts, 2, "each part is still gathered");
        let failure = store
            .take_failure()
            .expect("a gathering in parts keeps it too");
        assert_eq!(failure.kind(), io::ErrorKind::UnexpectedEof);
    }

    /// A store of two blocks holding `sets` as main sets (the second document of each block
    /// with a page set too), in memory or on file.
    fn store(sets: &[Vec<u32>], budget: usize) -> SetStore {
        let mut store = SetStore::new(budget);
        let mut places = Vec::new();
        for (block, chunk) in sets.chunks(sets.len().div_ceil(2)).enumerate() {
            let mut keys = Vec::new();
            for (i, set) in chunk.iter().enumerate() {
                let start = keys.len() as u32;
                keys.extend_from_slice(set);
                let page: Vec<u32> = if i == 1 { vec![1, 2, 3] } else { Vec::new() };
                keys.extend_from_slice(&page);
                places.push(Place {
                    block: block as u32,
                    start,
                    len: set.len() as u32,
                    second: page.len() as u32,
                });
            }
            assert_eq!(store.push_block(keys).unwrap(), block as u32);
        }
        // Documents numbered in another order than they were read.
        places.reverse();
        store.set_places(places);
        store
    }

    fn sets() -> Vec<Vec<u32>> {
        (0..7u32)
            .map(|d| (0..d * 3).map(|i| d * 100 + i).collect())
            .collect()
    }

    fn all(store: &SetStore) -> Vec<Vec<u32>> {
        let mut buffer = Vec::new();
        (0..store.len() as u32)
            .map(|d| store.set(d, &mut buffer).to_vec())
            .collect()
    }

    #[test]
    fn sets_on_file_read_back_as_in_memory() {
        let expected: Vec<Vec<u32>> = sets().into_iter().rev().collect();
        let in_memory = store(&sets(), usize::MAX);
        assert!(!in_memory.spilled());
        assert_eq!(all(&in_memory), expected);
        let pages = in_memory.in_memory_sets(true).unwrap();
        assert_eq!(
            pages[5],
            [1, 2, 3],
            "the second document read has a page set"
        );
        assert_eq!(pages[0], expected[0]);
        // 63 keys in the main sets; documents 1 and 5 read count 3 page keys instead.
        assert_eq!(in_memory.set_keys(), 63);
        assert_eq!(in_memory.page_keys(), 63 - 3 - 15 + 2 * 3);
        // A budget of one block's keys: the first block goes to file when the second comes.
        for budget in [0, 4 * 40] {
            let mixed = store(&sets(), budget);
            assert!(mixed.spilled());
            assert!(mixed.in_memory_sets(false).is_none());
            assert_eq!(all(&mixed), expected);
            let odd = |main: &[u32], second: &[u32], out: &mut Vec<u32>| {
                let page = counted_set(main, second);
                out.extend(page.iter().filter(|&&k| k % 2 == 1));
            };
            let gathered = mixed.gather(odd);
            assert_eq!(
                gathered.in_memory_sets(false).unwrap(),
                in_memory.gather(odd).in_memory_sets(false).unwrap()
            );
        }
    }

    #[test]
    fn sets_gathered_in_parts_from_file_are_those_gathered_from_memory() {
        // A set of 1,200 keys puts more than 127 of them in a part: lengths of two bytes.
        let mut sets = sets();
        sets.push((0..1200).map(|k| 10_000 + k).collect());
        let in_memory = store(&sets, usize::MAX);
        // Part p takes the keys of the page set (the main set when none) equal to p modulo 3,
        // and part 3 takes none.
        let take = |part: usize, main: &[u32], second: &[u32], out: &mut Vec<u32>| {
            let page = counted_set(main, second);
            out.extend(page.iter().filter(|&&k| k as usize % 3 == part));
        };
        let expected: Vec<Vec<Vec<u32>>> = (0..4)
            .map(|part| {
                let gathered = in_memory.gather(|main, second, out| take(part, main, second, out));
                let sets = gathered.in_memory_sets(false).unwrap();
                sets.into_iter().map(<[u32]>::to_vec).collect()
            })
            .collect();
        assert!(expected[0].iter().any(|set| set.len() > 127));
        assert!(expected[3].iter().all(Vec::is_empty));
        for budget in [usize::MAX, 0] {
            let store = store(&sets, budget);
            let mut got = Vec::new();
            store.gather_parts(4, take, |part, gathered| {
                assert_eq!(part, got.len(), "parts come in order");
                let sets = gathered.in_memory_sets(false).unwrap();
                got.push(sets.into_iter().map(<[u32]>::to_vec).collect::<Vec<_>>());
            });
            assert_eq!(got, expected, "budget {budget}");
            assert!(store.take_failure().is_none());
        }
    }

    #[test]
    fn lengths_read_back_as_written() {
        let lengths = [0, 1, 127, 128, 300, 16_383, 16_384, u32::MAX];
        let mut bytes = Vec::new();
        lengths.iter().for_each(|&n| push_length(&mut bytes, n));
        assert_eq!(bytes.len(), 1 + 1 + 1 + 2 + 2 + 2 + 3 + 5);
        let mut at = 0;
        let read: Vec<u32> = lengths
            .iter()
            .map(|_| next_length(&bytes, &mut at))
            .collect();
        assert_eq!(read, lengths);
        assert_eq!(next_length(&bytes, &mut at), 0, "0 past the end");
    }

    #[test]
    fn rewritten_sets_shrink_grow_lose_their_pages_and_keep_second_lists() {
        for budget in [usize::MAX, 0] {
            let mut store = store(&sets(), budget);
            let mut sizes = vec![0usize; store.len()];
            // Each set loses its odd keys, but document 6 (the first read, alone in a short
            // block) takes ten keys more than its block had: its block moves on file.
            store.rewrite(&mut sizes, |size, main, second, out| {
                if main.first() == Some(&0) || counted_set(main, second).is_empty() {
                    out.extend(0..10);
                } else {
                    out.extend(main.iter().filter(|&&k| k % 2 == 0));
                }
                *size = out.len();
                0
            });
            let got = all(&store);
            assert_eq!(got[6], (0..10).collect::<Vec<u32>>());
            for (d, set) in got.iter().enumerate().take(6) {
                let before = &sets()[6 - d];
                let evens: Vec<u32> = before.iter().copied().filter(|k| k % 2 == 0).collect();
                assert_eq!(set, &evens, "document {d}");
            }
            assert!(store.in_memory_sets(true).is_none() == (budget == 0));
            if let Some(pages) = store.in_memory_sets(true) {
                assert_eq!(
                    pages,
                    store.in_memory_sets(false).unwrap(),
                    "page sets are gone"
                );
            }
            // A rewrite that keeps a second list after each set (its keys below 10), which the
            // next rewrite is given and merges back.
            let before = all(&store);
            let mut kept = vec![Vec::new(); store.len()];
            store.rewrite(&mut kept, |kept, main, _page, out| {
                out.extend(main.iter().filter(|&&k| k >= 10));
                kept.extend(main.iter().filter(|&&k| k < 10));
                out.extend_from_slice(kept);
                kept.len() as u32
            });
            for (set, before) in all(&store).iter().zip(&before) {
                assert!(before.ends_with(set) && set.iter().all(|&k| k >= 10));
            }
            store.rewrite(&mut kept, |kept, main, second, out| {
                let second = if kept.is_empty() { &[][..] } else { second };
                assert_eq!(second, kept.as_slice());
                out.extend_from_slice(second);
                out.extend_from_slice(main);
                0
            });
            assert_eq!(all(&store), before);
        }
    }
}
