//! The index's schema: every redb table it keeps, with its key and value types, and the codec
//! of every record stored as bytes. The formats an index may say it has are here too. Nothing
//! else defines a table or decodes a record, so what is on disk is read and written in one
//! place.
//!
//! Tables: `meta` (format, configuration, creation time), `counters` (next document and story
//! numbers), `docs` (number → [`DocRecord`]), the ids' postings (`id_segments`, `id_chunks`,
//! `id_dead`: see `src/index/ids.rs`; indexes of formats 1 to 4 kept `ids`, id → number),
//! `stories` (number →
//! [`StoryRecord`]), `story_names`, `members` ((story, number) → ()), `merges` (number →
//! [`MergeRecord`]); `ghosts` (number → [`DocRecord`]) and `ghosts_of` ((story, number) →
//! ()), the removed documents whose stories live on; the postings: `segments` (number →
//! [`Directory`]), `chunks` ((segment, chunk) → delta-coded pairs, see [`encode_chunk`]) and
//! `dead`; `lead_sets` (number → [`encode_lead`]), the openings that weak links are checked
//! with; in indexes made with passages (formats 4 and 6), the passages: `passages` (number →
//! [`encode_passages`]) and the winnowed fingerprints' postings, coded as the candidate keys'
//! are (`passage_segments`, `passage_chunks`, `passage_dead`) and their boilerplate
//! (`passage_boilerplate_blocks`); the boilerplate:
//! `boilerplate_blocks` (top 16 bits → the low halves of its shingles) and, in indexes of
//! format 1, `boilerplate` (one entry a shingle).

use std::cell::RefCell;

use redb::{ReadOnlyTable, ReadTransaction, TableDefinition};
use zstd::bulk::Decompressor;

use crate::index::error::{Damage, IndexError, Result};

/// What `meta.format` holds in an index this megashingle has written to, unless it keeps
/// passages: its stories only, with each document's id kept as a posting of the id's hash
/// (see `src/index/ids.rs`). Format 3 with the ids in postings.
pub const FORMAT: &str = "megashingle-index 5";
/// What `meta.format` holds in an index made to keep the passages of its documents (their
/// shingle keys in text order and their winnowed fingerprints), for reuse through it: the
/// first add of an index opts in (`index add --passages`), and every later add keeps them.
/// Format 5 besides the passage tables (format 4 with the ids in postings).
pub const FORMAT_WITH_PASSAGES: &str = "megashingle-index 6";
/// The format of an index that keeps passages whose ids are still in the `ids` table; the
/// next write moves them and makes it [`FORMAT_WITH_PASSAGES`].
const FORMAT_4: &str = "megashingle-index 4";
/// Formats this megashingle reads: format 1 kept the boilerplate one entry a shingle (format 2
/// keeps it in blocks: see `src/index/boilerplate.rs`); format 3 adds the ghosts; format 4 the
/// passages; formats 1 to 4 keep the ids in the table `ids`, which the next write (an add or
/// a removal) moves into postings, making the index format 5 or 6.
pub(crate) const READABLE_FORMATS: [&str; 6] = [
    "megashingle-index 1",
    "megashingle-index 2",
    "megashingle-index 3",
    FORMAT_4,
    FORMAT,
    FORMAT_WITH_PASSAGES,
];

/// True when an index of `format` keeps the passages of its documents.
pub(crate) fn keeps_passages(format: &str) -> bool {
    format == FORMAT_WITH_PASSAGES || format == FORMAT_4
}

// The tables of documents and stories.
/// Format, configuration, creation and last add times.
pub(crate) const META: TableDefinition<&str, &str> = TableDefinition::new("meta");
pub(crate) const COUNTERS: TableDefinition<&str, u64> = TableDefinition::new("counters");
pub(crate) const DOCS: TableDefinition<u32, &[u8]> = TableDefinition::new("docs");
/// Id → number, as indexes of formats 1 to 4 kept the ids; the next write moves them into
/// the ids' postings.
pub(crate) const FORMER_IDS: TableDefinition<&str, u32> = TableDefinition::new("ids");
pub(crate) const STORIES: TableDefinition<u32, &[u8]> = TableDefinition::new("stories");
pub(crate) const STORY_NAMES: TableDefinition<&str, u32> = TableDefinition::new("story_names");
pub(crate) const MEMBERS: TableDefinition<(u32, u32), ()> = TableDefinition::new("members");
pub(crate) const MERGES: TableDefinition<u64, &[u8]> = TableDefinition::new("merges");
/// Removed documents whose story lives on: their records, kept with their postings. A story
/// posts each key once (see `index::add::POSTERS_PER_KEY`; twice in an index grown by an
/// earlier megashingle), so the documents that post it stand for the others; when they are removed they stay as ghosts, which a night's
/// look-up finds and links to as it would link to them, until their story is emptied.
pub(crate) const GHOSTS: TableDefinition<u32, &[u8]> = TableDefinition::new("ghosts");
/// Each story's ghosts: (story, number) → ().
pub(crate) const GHOSTS_OF: TableDefinition<(u32, u32), ()> = TableDefinition::new("ghosts_of");

// The postings.
/// A segment's directory: number → pairs, document base, first key of each chunk.
pub(crate) const SEGMENTS: TableDefinition<u32, &[u8]> = TableDefinition::new("segments");
/// Chunks: (segment, chunk) → coded pairs.
pub(crate) const CHUNKS: TableDefinition<(u32, u32), &[u8]> = TableDefinition::new("chunks");
/// Removed documents whose pairs are still in some segment.
pub(crate) const DEAD: TableDefinition<u32, ()> = TableDefinition::new("dead");

// The ids' postings: `(hash of an id, number)` pairs kept as the candidate keys' are.
/// The ids' segment directories.
pub(crate) const ID_SEGMENTS: TableDefinition<u32, &[u8]> = TableDefinition::new("id_segments");
/// The ids' chunks: (segment, chunk) → coded `(hash of an id, document)` pairs.
pub(crate) const ID_CHUNKS: TableDefinition<(u32, u32), &[u8]> = TableDefinition::new("id_chunks");
/// Removed documents whose id pairs are still in some segment.
pub(crate) const ID_DEAD: TableDefinition<u32, ()> = TableDefinition::new("id_dead");

// The passages (indexes of formats 4 and 6).
/// A document's main text as reuse keeps it: number → [`encode_passages`].
pub(crate) const PASSAGES: TableDefinition<u32, &[u8]> = TableDefinition::new("passages");
/// The winnowed fingerprints' postings, kept as the candidate keys' are: segment directories.
pub(crate) const PASSAGE_SEGMENTS: TableDefinition<u32, &[u8]> =
    TableDefinition::new("passage_segments");
/// The fingerprints' chunks: (segment, chunk) → coded `(fingerprint, document)` pairs.
pub(crate) const PASSAGE_CHUNKS: TableDefinition<(u32, u32), &[u8]> =
    TableDefinition::new("passage_chunks");
/// Removed documents whose fingerprint pairs are still in some segment.
pub(crate) const PASSAGE_DEAD: TableDefinition<u32, ()> = TableDefinition::new("passage_dead");
/// The boilerplate of the passages, in blocks as [`BLOCKS`]: the main texts' shingles found
/// in `boilerplate.min-documents` documents of an add (those `reuse` leaves out of a batch).
pub(crate) const PASSAGE_BLOCKS: TableDefinition<u16, &[u8]> =
    TableDefinition::new("passage_boilerplate_blocks");

// The boilerplate.
/// The blocks: top 16 bits → the low 16 bits of each shingle, sorted, little-endian.
pub(crate) const BLOCKS: TableDefinition<u16, &[u8]> = TableDefinition::new("boilerplate_blocks");
/// One entry a shingle, as indexes of format 1 keep them.
pub(crate) const FORMAT_1_ENTRIES: TableDefinition<u32, ()> = TableDefinition::new("boilerplate");

/// The error for a block that is not a sorted list of two-byte entries.
pub(crate) fn damaged_block(top: u16) -> IndexError {
    IndexError::damaged(Damage::BoilerplateBlock { top })
}

/// The shingles of block `top`, in order.
pub(crate) fn decode_block(top: u16, bytes: &[u8]) -> Result<impl Iterator<Item = u32> + '_> {
    let sorted = bytes.len().is_multiple_of(2)
        && bytes
            .chunks_exact(2)
            .map(low_half)
            .try_fold(None, |last, low| match last {
                Some(last) if last >= low => None,
                _ => Some(Some(low)),
            })
            .is_some();
    if !sorted {
        return Err(damaged_block(top));
    }
    Ok(bytes
        .chunks_exact(2)
        .map(move |low| u32::from(top) << 16 | u32::from(low_half(low))))
}

/// A block entry's low 16 bits.
fn low_half(entry: &[u8]) -> u16 {
    u16::from_le_bytes([entry[0], entry[1]])
}

/// A block holding the low halves of `shingles`, which share their top 16 bits, are sorted
/// and distinct.
pub(crate) fn encode_block(shingles: impl Iterator<Item = u32>) -> Vec<u8> {
    shingles.flat_map(|s| (s as u16).to_le_bytes()).collect()
}

/// A table of a read transaction; `None` when the index is still empty (or the table was
/// never made).
pub(crate) fn table<K: redb::Key + 'static, V: redb::Value + 'static>(
    txn: &ReadTransaction,
    definition: TableDefinition<K, V>,
) -> Result<Option<ReadOnlyTable<K, V>>> {
    match txn.open_table(definition) {
        Ok(t) => Ok(Some(t)),
        Err(redb::TableError::TableDoesNotExist(_)) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Document number → the low 16 bits of the keys of its lead (its first distinct shingles,
/// see [`crate::sketch::Lead`]) that are in its own set, boilerplate left out, as a sorted set
/// coded by [`encode_lead`]: 53 bytes at most, against 64 for the bare 16-bit keys. A weak
/// link with an indexed document checks that the two texts open alike with them
/// (`cluster.attach-lead`), as `cluster` checks two texts; 16 bits are plenty for a share (a
/// key of a lead matches one of a text's 400 keys by chance once in 160). A removed document
/// that stays as a ghost keeps its lead. Documents added by a megashingle that kept no leads
/// have none, and their weak links go unchecked as before.
pub(crate) const LEADS: TableDefinition<u32, &[u8]> = TableDefinition::new("lead_sets");

/// The table of leads as bare little-endian 16-bit keys in text order, which one release
/// wrote: its documents count as having no lead, and the next add drops it.
pub(crate) const BARE_LEADS: TableDefinition<u32, &[u8]> = TableDefinition::new("leads");

/// The Rice parameter of a lead of `n` distinct 16-bit keys: the gaps between `n` keys spread
/// over 2^16 average 2^16/n, and a Rice code is shortest with about ln 2 of the average in its
/// remainder bits.
fn lead_rice_bits(n: usize) -> u32 {
    (45_426 / n.max(1) as u32).max(1).ilog2().min(15)
}

/// The bytes of a lead of `keys`: the number of distinct low 16 bits among them, then those
/// values sorted, each as its gap from the one before Rice-coded (the quotient in unary, then
/// [`lead_rice_bits`] remainder bits), least significant bit first. The check uses a lead as
/// a set, so neither the order nor repeats are kept.
pub(crate) fn encode_lead(keys: &[u32]) -> Vec<u8> {
    let mut low: Vec<u16> = keys.iter().map(|&k| k as u16).collect();
    low.sort_unstable();
    low.dedup();
    let k = lead_rice_bits(low.len());
    debug_assert!(
        low.len() <= usize::from(u8::MAX),
        "a lead of at most 32 keys"
    );
    let mut bits = RiceBits {
        out: vec![low.len() as u8],
        pending: 0,
        filled: 0,
    };
    let mut next = 0u32;
    for &value in &low {
        let gap = u32::from(value) - next;
        next = u32::from(value) + 1;
        let mut quotient = gap >> k;
        while quotient > 0 {
            let run = quotient.min(32);
            bits.push((1u64 << run) - 1, run);
            quotient -= run;
        }
        bits.push(0, 1);
        bits.push(u64::from(gap & ((1 << k) - 1)), k);
    }
    if bits.filled > 0 {
        bits.push(0, 8 - bits.filled);
    }
    bits.out
}

/// Bits written least significant first, whole bytes as they fill.
struct RiceBits {
    out: Vec<u8>,
    pending: u64,
    filled: u32,
}

impl RiceBits {
    /// Appends the low `width` bits of `value` (at most 32).
    fn push(&mut self, value: u64, width: u32) {
        self.pending |= value << self.filled;
        self.filled += width;
        while self.filled >= 8 {
            self.out.push(self.pending as u8);
            self.pending >>= 8;
            self.filled -= 8;
        }
    }
}

/// The keys of a lead encoded by [`encode_lead`] (the distinct low 16 bits, sorted); an error
/// for anything else.
pub(crate) fn decode_lead(bytes: &[u8]) -> Result<Vec<u32>> {
    let damaged = || IndexError::damaged(Damage::Record);
    let (&n, coded) = bytes.split_first().ok_or_else(damaged)?;
    let k = lead_rice_bits(usize::from(n));
    let total = coded.len() * 8;
    // A lead takes at most 53 bytes; past the end, zeros, so that any 8 bytes from a byte of
    // the lead on can be read as one word.
    let mut padded = [0u8; 72];
    if coded.len() > 64 {
        return Err(damaged());
    }
    padded[..coded.len()].copy_from_slice(coded);
    // The 64 bits from bit `at` on.
    let window = |at: usize| {
        let from = (at / 8).min(64);
        let word: [u8; 8] = padded[from..from + 8].try_into().expect("8 bytes");
        u64::from_le_bytes(word) >> (at % 8)
    };
    let mut at = 0usize;
    let mut next = 0u32;
    let mut keys = Vec::with_capacity(usize::from(n));
    for _ in 0..n {
        // The quotient: ones up to a zero (at most 2^16 of them, 56 bits a step).
        let mut quotient = 0u32;
        loop {
            let ones = window(at).trailing_ones().min(56);
            quotient += ones;
            at += ones as usize;
            if ones < 56 || quotient > u32::from(u16::MAX) {
                break;
            }
        }
        let remainder = (window(at + 1) & ((1 << k) - 1)) as u32;
        at += 1 + k as usize;
        let value = next.saturating_add(quotient << k | remainder);
        if at > total || value > u32::from(u16::MAX) {
            return Err(damaged());
        }
        keys.push(value);
        next = value + 1;
    }
    // Only the zero padding of the last byte may follow.
    if total - at >= 8 || window(at) != 0 {
        return Err(damaged());
    }
    Ok(keys)
}

// The records.

/// One indexed document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocRecord {
    /// Its id.
    pub id: String,
    /// Its story's number.
    pub story: u32,
    /// When it was added, in seconds since 1970.
    pub added_at: i64,
    /// Its own time (the time column), if it had one.
    pub time: Option<i64>,
    /// Canonical words.
    pub words: u32,
    /// Distinct shingles (0: too short to compare).
    pub shingles: u32,
    /// The low 16 bits of its minima (empty when it is too short).
    pub signature: Vec<u16>,
}

/// Fixed part of an encoded `DocRecord`: story, added_at, time, words, shingles, minima count.
const DOC_HEAD: usize = 4 + 8 + 8 + 4 + 4 + 2;

impl DocRecord {
    /// Little-endian fields, then the id's bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(DOC_HEAD + 2 * self.signature.len() + self.id.len());
        out.extend(self.story.to_le_bytes());
        out.extend(self.added_at.to_le_bytes());
        out.extend(self.time.unwrap_or(i64::MIN).to_le_bytes());
        out.extend(self.words.to_le_bytes());
        out.extend(self.shingles.to_le_bytes());
        out.extend((self.signature.len() as u16).to_le_bytes());
        for m in &self.signature {
            out.extend(m.to_le_bytes());
        }
        debug_assert_eq!(out.len(), DOC_HEAD + 2 * self.signature.len());
        out.extend(self.id.as_bytes());
        out
    }

    /// Story, words, shingles and minima of the record encoded by [`DocRecord::encode`],
    /// without making its id.
    pub fn decode_sketch(bytes: &[u8]) -> Result<(u32, u32, u32, Vec<u16>)> {
        let mut r = Fields(bytes);
        let (story, words, shingles, minima) = r.sketch_head()?;
        let signature = r.u16s(minima)?;
        Ok((story, words, shingles, signature))
    }

    /// Story, words and shingles of the record encoded by [`DocRecord::encode`], its minima
    /// widened into `signature` (made anew only when its length is not theirs): a record read
    /// without a list made for it.
    pub fn decode_sketch_into(bytes: &[u8], signature: &mut Box<[u32]>) -> Result<(u32, u32, u32)> {
        let mut r = Fields(bytes);
        let (story, words, shingles, minima) = r.sketch_head()?;
        let stored = r.bytes(2 * minima)?;
        if signature.len() != minima {
            *signature = vec![0; minima].into();
        }
        for (m, pair) in signature.iter_mut().zip(stored.chunks_exact(2)) {
            *m = u32::from(u16::from_le_bytes([pair[0], pair[1]]));
        }
        Ok((story, words, shingles))
    }

    /// The record encoded by [`DocRecord::encode`]; an error for anything else.
    pub fn decode(bytes: &[u8]) -> Result<DocRecord> {
        let mut r = Fields(bytes);
        let story = r.u32()?;
        let added_at = r.i64()?;
        let time = Some(r.i64()?).filter(|&t| t != i64::MIN);
        let words = r.u32()?;
        let shingles = r.u32()?;
        let minima = r.u16()? as usize;
        let signature = r.u16s(minima)?;
        let id = r.rest_str()?;
        Ok(DocRecord {
            id,
            story,
            added_at,
            time,
            words,
            shingles,
            signature,
        })
    }
}

/// One story.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoryRecord {
    /// Its id as users see it: the id of the document that founded it.
    pub name: String,
    /// The document its joins are checked against.
    pub representative: u32,
    /// Its documents.
    pub size: u32,
    /// When it was made.
    pub created_at: i64,
    /// When it last changed.
    pub updated_at: i64,
}

impl StoryRecord {
    /// Little-endian fields, then the name's bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(24 + self.name.len());
        out.extend(self.representative.to_le_bytes());
        out.extend(self.size.to_le_bytes());
        out.extend(self.created_at.to_le_bytes());
        out.extend(self.updated_at.to_le_bytes());
        out.extend(self.name.as_bytes());
        out
    }

    /// The record encoded by [`StoryRecord::encode`].
    pub fn decode(bytes: &[u8]) -> Result<StoryRecord> {
        let mut r = Fields(bytes);
        Ok(StoryRecord {
            representative: r.u32()?,
            size: r.u32()?,
            created_at: r.i64()?,
            updated_at: r.i64()?,
            name: r.rest_str()?,
        })
    }
}

/// One merge of two stories.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeRecord {
    /// When.
    pub at: i64,
    /// The story that was absorbed (its id is gone).
    pub absorbed: String,
    /// Its size then.
    pub absorbed_size: u32,
    /// The story that survived.
    pub survivor: String,
    /// The new document that joined them.
    pub via: String,
}

impl MergeRecord {
    /// Little-endian fields, then three length-prefixed strings.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend(self.at.to_le_bytes());
        out.extend(self.absorbed_size.to_le_bytes());
        for s in [&self.absorbed, &self.survivor, &self.via] {
            out.extend((s.len() as u32).to_le_bytes());
            out.extend(s.as_bytes());
        }
        out
    }

    /// The record encoded by [`MergeRecord::encode`].
    pub fn decode(bytes: &[u8]) -> Result<MergeRecord> {
        let mut r = Fields(bytes);
        let at = r.i64()?;
        let absorbed_size = r.u32()?;
        let (absorbed, survivor, via) = (r.str()?, r.str()?, r.str()?);
        Ok(MergeRecord {
            at,
            absorbed,
            absorbed_size,
            survivor,
            via,
        })
    }
}

thread_local! {
    /// Each thread's zstd context for reading passage records, made at its first record:
    /// making a context costs more than reading a record of a few hundred keys.
    static PASSAGE_DECOMPRESSOR: RefCell<Option<Decompressor<'static>>> =
        const { RefCell::new(None) };
}

/// The largest block of a zstd frame (RFC 8878: 128 KiB).
const ZSTD_BLOCK: usize = 128 << 10;

/// Boilerplate keys in a row from which a passage record holds them as one run-length block
/// rather than among the keys as they stand.
const MASKED_RUN: usize = 2;

/// A document's passage record: its shingle size (a byte), then a zstd frame of its shingle
/// keys in text order (boilerplate as [`crate::reuse::MASKED`]), little-endian. Hash keys do
/// not compress, so the frame is made here without a compressor, as zstd's own would hold
/// them: the keys in raw blocks, each run of boilerplate (all bits set) in a run-length
/// block, read back by any zstd decoder (records that zstd's compressor made read alike).
/// Looking for the phrases a text repeats is not worth its time: zstd's fast level -5 made a
/// night's records 3% smaller and took a sixth of the CPU time of writing its passages.
pub(crate) fn encode_passages(text: &crate::reuse::Text) -> Vec<u8> {
    use crate::reuse::MASKED;
    let size = 4 * text.keys.len();
    let mut out = Vec::with_capacity(size + 16);
    out.push(text.k);
    // The frame header: one segment of a known size, no checksum or dictionary.
    out.extend_from_slice(&0xFD2F_B528u32.to_le_bytes());
    if size < 256 {
        out.extend_from_slice(&[0b0010_0000, size as u8]);
    } else if size < 256 + (1 << 16) {
        out.push(0b0110_0000);
        out.extend_from_slice(&((size - 256) as u16).to_le_bytes());
    } else {
        out.push(0b1010_0000);
        out.extend_from_slice(&(size as u32).to_le_bytes());
    }
    // Block headers: the last flag, the type (0 raw, 1 run-length) and the size, 3 bytes.
    let header = |out: &mut Vec<u8>, kind: u32, bytes: usize| {
        let word = (kind << 1) | ((bytes as u32) << 3);
        out.extend_from_slice(&word.to_le_bytes()[..3]);
    };
    let mut keys = &text.keys[..];
    let mut last_header = None;
    while !keys.is_empty() {
        let masked = keys.iter().take_while(|&&k| k == MASKED).count();
        if masked >= MASKED_RUN {
            let run = masked.min(ZSTD_BLOCK / 4);
            last_header = Some(out.len());
            header(&mut out, 1, 4 * run);
            out.push(0xff);
            keys = &keys[run..];
            continue;
        }
        // Keys up to the next run of boilerplate, within one block: at least the first, and
        // a run may start at the block's last key (`start <= limit`, as `masked < MASKED_RUN`).
        let (start, limit) = (masked.max(1), keys.len().min(ZSTD_BLOCK / 4));
        let end = keys[start..keys.len().min(limit + 1)]
            .windows(2)
            .position(|pair| pair == [MASKED, MASKED])
            .map_or(limit, |run| start + run);
        last_header = Some(out.len());
        header(&mut out, 0, 4 * end);
        #[cfg(target_endian = "little")]
        out.extend_from_slice(bytemuck::cast_slice(&keys[..end]));
        #[cfg(not(target_endian = "little"))]
        for key in &keys[..end] {
            out.extend_from_slice(&key.to_le_bytes());
        }
        keys = &keys[end..];
    }
    match last_header {
        Some(at) => out[at] |= 1,
        None => {
            let at = out.len();
            header(&mut out, 0, 0);
            out[at] |= 1;
        }
    }
    out
}

/// The text of document `number`, of `words` canonical words, from its passage record
/// ([`encode_passages`]).
pub(crate) fn decode_passages(number: u32, words: u32, bytes: &[u8]) -> Result<crate::reuse::Text> {
    let damaged = || IndexError::damaged(Damage::Passages { number });
    let (&k, packed) = bytes.split_first().ok_or_else(damaged)?;
    // A text has at most one shingle a word.
    let most = 4 * (words as usize).max(1);
    let raw = PASSAGE_DECOMPRESSOR
        .with_borrow_mut(|decompressor| {
            // Making a context fails only when memory does.
            let decompressor =
                decompressor.get_or_insert_with(|| Decompressor::new().expect("a zstd context"));
            decompressor.decompress(packed, most)
        })
        .map_err(|_| damaged())?;
    if !raw.len().is_multiple_of(4) || k == 0 {
        return Err(damaged());
    }
    let keys = raw
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
        .collect();
    Ok(crate::reuse::Text { words, k, keys })
}

/// A reader of little-endian fields.
struct Fields<'a>(&'a [u8]);

impl<'a> Fields<'a> {
    fn take<const N: usize>(&mut self) -> Result<[u8; N]> {
        if self.0.len() < N {
            return Err(IndexError::damaged(Damage::Record));
        }
        let (head, rest) = self.0.split_at(N);
        self.0 = rest;
        Ok(head.try_into().expect("N bytes"))
    }
    fn u16(&mut self) -> Result<u16> {
        self.take().map(u16::from_le_bytes)
    }
    /// `n` values of 16 bits, checked for length once.
    fn u16s(&mut self, n: usize) -> Result<Vec<u16>> {
        Ok(self
            .bytes(2 * n)?
            .chunks_exact(2)
            .map(|pair| u16::from_le_bytes([pair[0], pair[1]]))
            .collect())
    }
    /// The next `n` bytes.
    fn bytes(&mut self, n: usize) -> Result<&'a [u8]> {
        if self.0.len() < n {
            return Err(IndexError::damaged(Damage::Record));
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }
    /// A document record's story, words, shingles and count of minima, its times skipped.
    fn sketch_head(&mut self) -> Result<(u32, u32, u32, usize)> {
        let story = self.u32()?;
        let _added_at = self.i64()?;
        let _time = self.i64()?;
        let words = self.u32()?;
        let shingles = self.u32()?;
        let minima = self.u16()? as usize;
        Ok((story, words, shingles, minima))
    }
    fn u32(&mut self) -> Result<u32> {
        self.take().map(u32::from_le_bytes)
    }
    fn i64(&mut self) -> Result<i64> {
        self.take().map(i64::from_le_bytes)
    }
    fn str(&mut self) -> Result<String> {
        let n = self.u32()? as usize;
        if self.0.len() < n {
            return Err(IndexError::damaged(Damage::Record));
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        String::from_utf8(head.to_vec()).map_err(|_| IndexError::damaged(Damage::Record))
    }
    fn rest_str(&mut self) -> Result<String> {
        let rest = std::mem::take(&mut self.0);
        String::from_utf8(rest.to_vec()).map_err(|_| IndexError::damaged(Damage::Record))
    }
}

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
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(12 + 4 * self.first_keys.len());
        out.extend(self.pairs.to_le_bytes());
        out.extend(self.base.to_le_bytes());
        for k in &self.first_keys {
            out.extend(k.to_le_bytes());
        }
        out
    }

    pub(crate) fn decode(bytes: &[u8]) -> Result<Directory> {
        if bytes.len() < 12 || !(bytes.len() - 12).is_multiple_of(4) {
            return Err(IndexError::damaged(Damage::PostingsDirectory));
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

/// The error of a chunk whose bytes do not decode.
pub(crate) fn damaged_chunk() -> IndexError {
    IndexError::damaged(Damage::PostingsChunk)
}

/// The varint at `at`, which moves past it; `None` when the bytes end inside it or it runs
/// past 32 bits.
#[inline(always)]
fn next_varint(bytes: &[u8], at: &mut usize) -> Option<u32> {
    let &byte = bytes.get(*at)?;
    *at += 1;
    if byte < 0x80 {
        return Some(u32::from(byte));
    }
    let mut value = u32::from(byte & 0x7F);
    let mut shift = 7;
    loop {
        let &byte = bytes.get(*at)?;
        *at += 1;
        if byte < 0x80 {
            return Some(value | u32::from(byte) << shift);
        }
        if shift == 28 {
            return None;
        }
        value |= u32::from(byte & 0x7F) << shift;
        shift += 7;
    }
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
    for pair in ChunkPairs::of(bytes, base)? {
        out.push(pair?);
    }
    Ok(())
}

/// The pairs of a chunk coded by [`encode_chunk`], decoded as they are read.
pub(crate) struct ChunkPairs<'a> {
    bytes: &'a [u8],
    at: usize,
    key: u32,
    base: u32,
}

impl ChunkPairs<'_> {
    /// The pairs of `bytes`, whose documents are offsets from `base`.
    pub(crate) fn of(bytes: &[u8], base: u32) -> Result<ChunkPairs<'_>> {
        let first: [u8; 4] = bytes
            .get(..4)
            .and_then(|b| b.try_into().ok())
            .ok_or_else(damaged_chunk)?;
        Ok(ChunkPairs {
            bytes,
            at: 4,
            key: u32::from_le_bytes(first),
            base,
        })
    }
}

impl Iterator for ChunkPairs<'_> {
    type Item = Result<(u32, u32)>;

    #[inline]
    fn next(&mut self) -> Option<Result<(u32, u32)>> {
        if self.at == self.bytes.len() {
            return None;
        }
        let (Some(delta), Some(offset)) = (
            next_varint(self.bytes, &mut self.at),
            next_varint(self.bytes, &mut self.at),
        ) else {
            // Nothing follows a damaged pair.
            self.at = self.bytes.len();
            return Some(Err(damaged_chunk()));
        };
        self.key = self.key.wrapping_add(delta);
        Some(Ok((self.key, self.base.wrapping_add(offset))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip() {
        let doc = DocRecord {
            id: "a/b.txt".into(),
            story: 7,
            added_at: 1_764_482_400,
            time: None,
            words: 120,
            shingles: 118,
            signature: (0..84).collect(),
        };
        assert_eq!(DocRecord::decode(&doc.encode()).unwrap(), doc);
        let timed = DocRecord {
            time: Some(-5),
            signature: Vec::new(),
            ..doc
        };
        assert_eq!(DocRecord::decode(&timed.encode()).unwrap(), timed);
        assert!(DocRecord::decode(&[1, 2, 3]).is_err());
        let story = StoryRecord {
            name: "лента-1".into(),
            representative: 3,
            size: 9,
            created_at: 1,
            updated_at: 2,
        };
        assert_eq!(StoryRecord::decode(&story.encode()).unwrap(), story);
        let merge = MergeRecord {
            at: 5,
            absorbed: "b".into(),
            absorbed_size: 2,
            survivor: "a".into(),
            via: "c".into(),
        };
        assert_eq!(MergeRecord::decode(&merge.encode()).unwrap(), merge);
    }

    #[test]
    fn a_sketch_read_into_a_list_is_the_sketch_decoded_and_a_short_record_an_error() {
        let doc = DocRecord {
            id: "a".into(),
            story: 3,
            added_at: 1,
            time: None,
            words: 90,
            shingles: 86,
            signature: (0..84).map(|i| 65_535 - 700 * i).collect(),
        };
        let bytes = doc.encode();
        let (story, words, shingles, short) = DocRecord::decode_sketch(&bytes).unwrap();
        let widened: Vec<u32> = short.iter().map(|&m| u32::from(m)).collect();
        // A list of the right length is filled in place; one of another length is made anew.
        for held in [vec![7u32; 84], vec![7u32; 3], Vec::new()] {
            let mut signature: Box<[u32]> = held.into();
            let head = DocRecord::decode_sketch_into(&bytes, &mut signature).unwrap();
            assert_eq!(head, (story, words, shingles));
            assert_eq!(&signature[..], &widened[..]);
        }
        let mut signature: Box<[u32]> = vec![0; 84].into();
        let damaged = DocRecord::decode_sketch_into(&bytes[..DOC_HEAD + 20], &mut signature);
        assert_eq!(
            damaged.unwrap_err().to_string(),
            "a damaged record in the index; restore the index from a copy"
        );
    }

    #[test]
    fn leads_round_trip_and_a_damaged_one_is_an_error() {
        // The last has a gap of a quotient longer than 56 bits.
        let far: Vec<u32> = (0..31).chain([0xffff]).collect();
        for keys in [
            vec![],
            vec![0, 7, 0x0304, 0xffff],
            vec![0xffff],
            vec![0],
            far,
        ] {
            assert_eq!(decode_lead(&encode_lead(&keys)).unwrap(), keys);
        }
        // The index keeps the distinct low 16 bits of the keys, sorted.
        let low = decode_lead(&encode_lead(&[u32::MAX, 0x0102_0304, 0x0304])).unwrap();
        assert_eq!(low, [0x0304, 0xffff]);
        let damaged = "a damaged record in the index; restore the index from a copy";
        let whole = encode_lead(&[1, 2, 900, 40_000]);
        let mut longer = whole.clone();
        longer.push(0);
        let mut more = whole.clone();
        more[0] += 1;
        for bad in [
            &[][..],
            &whole[..whole.len() - 1],
            &longer,
            &more,
            &[1, 0xff, 0xff, 0xff],
        ] {
            assert_eq!(
                decode_lead(bad).unwrap_err().to_string(),
                damaged,
                "{bad:?}"
            );
        }
    }

    proptest::proptest! {
        #[test]
        fn a_lead_comes_back_as_the_sorted_set_of_its_low_bits(
            keys in proptest::collection::vec(proptest::num::u32::ANY, 0..=32),
            spread in 1u32..=32,
        ) {
            // Keys below 2^spread: narrow spreads give runs of small gaps.
            let keys: Vec<u32> = keys.iter().map(|k| k >> (32 - spread)).collect();
            let coded = encode_lead(&keys);
            let mut expected: Vec<u32> = keys.iter().map(|&k| k & 0xffff).collect();
            expected.sort_unstable();
            expected.dedup();
            proptest::prop_assert!(coded.len() <= 53);
            proptest::prop_assert_eq!(decode_lead(&coded).unwrap(), expected);
        }
    }

    #[test]
    fn passage_records_round_trip_and_damage_is_named() {
        let text = crate::reuse::Text {
            words: 7,
            k: 3,
            keys: [9, u32::MAX, u32::MAX, 0, 77].into(),
        };
        let bytes = encode_passages(&text);
        assert_eq!(decode_passages(4, 7, &bytes).unwrap(), text);
        for damaged in [&[][..], &bytes[..bytes.len() - 1], &[3, 1, 2, 3][..]] {
            let error = decode_passages(4, 7, damaged).unwrap_err().to_string();
            assert_eq!(
                error,
                "the passages of document 4 in the index are damaged; restore the index from a copy"
            );
        }
    }

    #[test]
    fn a_passage_record_written_by_a_zstd_compressor_is_read_as_well() {
        // Records made with zstd's compressor, as earlier versions wrote them.
        let keys: Box<[u32]> = [5, u32::MAX, u32::MAX, u32::MAX, 5, 6].into();
        let raw: Vec<u8> = keys.iter().flat_map(|k| k.to_le_bytes()).collect();
        let mut record = vec![3];
        record.extend(zstd::bulk::compress(&raw, -5).unwrap());
        let text = decode_passages(1, 6, &record).unwrap();
        assert_eq!((text.k, text.keys), (3, keys));
    }

    proptest::proptest! {
        #[test]
        fn passage_records_round_trip_through_zstd_blocks(
            runs in proptest::collection::vec((0usize..40_000, proptest::bool::ANY), 0..6),
            seed in proptest::num::u32::ANY,
        ) {
            // Runs of keys and of boilerplate, some longer than a block of 128 KiB.
            let mut keys = Vec::new();
            for (i, &(length, masked)) in runs.iter().enumerate() {
                let length = if i % 2 == 0 { length % 300 } else { length };
                keys.extend((0..length as u32).map(|j| {
                    if masked { crate::reuse::MASKED } else { seed.wrapping_mul(j + 1) | 1 }
                }));
            }
            let text = crate::reuse::Text { words: keys.len() as u32 + 2, k: 4, keys: keys.into() };
            let bytes = encode_passages(&text);
            proptest::prop_assert!(bytes.len() <= 4 * text.keys.len() + 16 + 4 * runs.len());
            proptest::prop_assert_eq!(decode_passages(0, text.words, &bytes).unwrap(), text);
        }
    }
}
