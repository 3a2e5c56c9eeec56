//! Sets of 32-bit shingle keys that are asked about every key of every document (the
//! boilerplate, the frequent shingles), where most answers are no. A `KeySet` is a sorted
//! array with gaps (each key near its share of the key space), with a bit array in front of a
//! small one (16 bits per key): a key whose bit is clear is not in it. `NumberedKeys` also
//! tells each key's place in key order, from a sorted array behind a directory of its top
//! bits. Keys are hashes, so their top bits spread them evenly.

/// Fewest bits a filter has.
const MIN_FILTER_BITS: u32 = 16;
/// Most bits a filter has: 2^27 bits, 16 MiB. A million documents can have millions of
/// boilerplate keys, and a filter with most of its bits set would send every key on to the
/// look-up behind it; a large filter misses the fast caches but still spares most look-ups.
const MAX_FILTER_BITS: u32 = 27;
/// Filter bits per key, up to the cap: about one key in this many that is not in
/// the set finds its bit set.
const BITS_PER_KEY: usize = 16;

/// One bit per key's top bits: clear means the key is not among those added.
#[derive(Debug, Clone)]
pub(crate) struct KeyFilter {
    words: Vec<u64>,
    /// `32 - log2(bits)`: a key's bit is its value shifted right by this.
    shift: u32,
}

impl Default for KeyFilter {
    fn default() -> Self {
        KeyFilter::with_bits(MIN_FILTER_BITS)
    }
}

impl KeyFilter {
    /// An empty filter of `2^log2_bits` bits.
    fn with_bits(log2_bits: u32) -> KeyFilter {
        KeyFilter {
            words: vec![0; 1 << (log2_bits - 6)],
            shift: 32 - log2_bits,
        }
    }

    /// An empty filter sized for `keys` keys.
    pub(crate) fn for_keys(keys: usize) -> KeyFilter {
        let log2_bits = keys
            .saturating_mul(BITS_PER_KEY)
            .clamp(1 << MIN_FILTER_BITS, 1 << MAX_FILTER_BITS)
            .next_power_of_two()
            .trailing_zeros();
        KeyFilter::with_bits(log2_bits)
    }

    /// A filter sized for `count` keys, holding `keys`.
    fn holding(keys: impl Iterator<Item = u32>, count: usize) -> KeyFilter {
        let mut filter = KeyFilter::for_keys(count);
        keys.for_each(|k| filter.insert(k));
        filter
    }

    /// Number of bits.
    #[cfg(test)]
    fn bits(&self) -> usize {
        self.words.len() * 64
    }

    /// Sets the key's bit.
    pub fn insert(&mut self, key: u32) {
        let bit = key >> self.shift;
        self.words[(bit >> 6) as usize] |= 1 << (bit & 63);
    }

    /// False when the key was never inserted; true when it may have been.
    #[inline]
    pub(crate) fn may_contain(&self, key: u32) -> bool {
        let bit = key >> self.shift;
        self.words[(bit >> 6) as usize] & (1 << (bit & 63)) != 0
    }
}

/// An unchanging set of keys in one sorted array with gaps. Each key is first spread over the
/// key space (multiplied by an odd constant, which loses nothing, so that keys that are not
/// hashes spread too); the spread keys sit in order, each at or after its home slot (its share
/// of the array, `spread × size / 2^32`), and each gap holds the key after it. A look-up goes
/// to the key's home slot and scans to the first slot not below it: a few slots of one cache
/// line for present and absent keys alike, one cache miss where a hash set takes up to two.
/// A [`KeyFilter`] stands in front of a set small enough for it to stay in the caches, as most
/// keys asked about are not in the set. With a fifth of the slots left as gaps it takes 5 bytes
/// a key (7 with the filter), and is made by a radix sort rather than by hashing each key into
/// place.
#[derive(Debug, Clone)]
pub(crate) struct KeySet {
    /// The spread keys, in order, and the gaps, each holding the next one; past the last, and
    /// at the end, `u32::MAX`, which stops every scan.
    slots: Vec<u32>,
    /// The number of home slots: spread keys fall in `0..size`.
    size: u64,
    /// The number of keys.
    len: usize,
    /// True when a key spreads to `u32::MAX`, which is then not only the end of the slots.
    holds_max: bool,
    /// In front of the slots of a set of at most [`FILTERED_KEYS`]: most keys that are not in
    /// the set stop at one bit test, one well-predicted branch where a scan of the slots would
    /// take a few.
    filter: Option<KeyFilter>,
}

/// Most keys of a [`KeySet`] with a filter in front: 2^20 keys, whose filter (2^24 bits, 2 MiB)
/// stays in the caches. The filter of a larger set would miss them as its slots do, so it
/// would cost a cache miss more for each key in the set and spare none.
const FILTERED_KEYS: usize = 1 << 20;

/// How many keys ahead [`KeySet::mark`] asks for a key's slots: enough for a few look-ups
/// to wait for memory at once.
const PREFETCH_AHEAD: usize = 8;

/// Spreads keys over the key space: an odd multiplier (Fibonacci hashing) is a one-to-one map.
const SPREAD: u32 = 0x9E37_79B1;
/// The multiplier that undoes [`SPREAD`]: `SPREAD × UNSPREAD = 1` modulo 2^32.
const UNSPREAD: u32 = 0x0E8B_2F51;

impl Default for KeySet {
    fn default() -> Self {
        KeySet::from_spread(Vec::new())
    }
}

impl KeySet {
    /// The set of spread keys (`key × SPREAD`), sorted, each once.
    fn from_spread(spread: Vec<u32>) -> KeySet {
        KeySet::from_spread_iter(spread.len(), spread.iter().copied())
    }

    /// [`KeySet::from_spread`] of `len` spread keys from an iterator, read twice when the set
    /// is small enough for a filter.
    fn from_spread_iter(len: usize, spread: impl Iterator<Item = u32> + Clone) -> KeySet {
        let size = (len + len / 4).max(1) as u64;
        let mut slots: Vec<u32> = Vec::with_capacity(size as usize + 1);
        let mut last = None;
        for key in spread.clone() {
            debug_assert!(last.is_none_or(|l| l < key), "sorted, each once");
            last = Some(key);
            let home = home_slot(key, size);
            if slots.len() < home {
                slots.resize(home, key);
            }
            slots.push(key);
        }
        // Every home slot exists, and a scan from any of them ends.
        slots.resize(slots.len().max(size as usize) + 1, u32::MAX);
        let keys = spread.map(|k| k.wrapping_mul(UNSPREAD));
        KeySet {
            slots,
            size,
            len,
            holds_max: last == Some(u32::MAX),
            filter: (len <= FILTERED_KEYS).then(|| KeyFilter::holding(keys, len)),
        }
    }

    /// True when the key is in the set.
    #[inline]
    pub fn contains(&self, key: u32) -> bool {
        if self.filter.as_ref().is_some_and(|f| !f.may_contain(key)) {
            return false;
        }
        self.in_slots(key)
    }

    /// True when the key is in the slots (the filter not asked).
    #[inline]
    fn in_slots(&self, key: u32) -> bool {
        let spread = key.wrapping_mul(SPREAD);
        let mut at = home_slot(spread, self.size);
        while self.slots[at] < spread {
            at += 1;
        }
        self.slots[at] == spread && (spread != u32::MAX || self.holds_max)
    }

    /// Sets `marks[i]` for each of `keys[i]` that is in the set; `marks` is as long as
    /// `keys`, and a key already marked is not looked up. The keys are taken a block at a
    /// time: first each one's filter bit, without a branch, then the slots of those whose
    /// bit is set, each fetched a few keys ahead. So the look-ups wait for memory side by
    /// side, where [`KeySet::contains`] of one key after another waits for each in turn
    /// and mispredicts a branch for about every key in the set.
    pub(crate) fn mark(&self, keys: &[u32], marks: &mut [bool]) {
        const BLOCK: usize = 256;
        debug_assert_eq!(keys.len(), marks.len());
        if self.is_empty() {
            return;
        }
        let mut asked = [0u16; BLOCK];
        for (keys, marks) in keys.chunks(BLOCK).zip(marks.chunks_mut(BLOCK)) {
            let mut len = 0;
            match &self.filter {
                Some(filter) => {
                    for (i, (&key, &marked)) in keys.iter().zip(marks.iter()).enumerate() {
                        asked[len] = i as u16;
                        len += usize::from(filter.may_contain(key) & !marked);
                    }
                }
                None => {
                    for (i, &marked) in marks.iter().enumerate() {
                        asked[len] = i as u16;
                        len += usize::from(!marked);
                    }
                }
            }
            let asked = &asked[..len];
            for (n, &i) in asked.iter().enumerate() {
                if let Some(&ahead) = asked.get(n + PREFETCH_AHEAD) {
                    self.prefetch_slots(keys[usize::from(ahead)]);
                }
                marks[usize::from(i)] |= self.in_slots(keys[usize::from(i)]);
            }
        }
    }

    /// Asks the processor to fetch the slots where a look-up of `key` starts: a caller that
    /// knows its next keys asks ahead, and their look-ups then wait for memory side by side
    /// instead of one after another.
    #[inline]
    fn prefetch_slots(&self, key: u32) {
        let at = home_slot(key.wrapping_mul(SPREAD), self.size);
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `at` is a home slot, below `size`, and every home slot exists, so the
        // address is within `slots`; a prefetch only hints, and reads or writes nothing.
        unsafe {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            _mm_prefetch::<_MM_HINT_T0>(self.slots.as_ptr().add(at).cast());
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = at;
    }

    /// The keys of both sets. The two sets are merged as they are read, twice (to count, then
    /// to place), so only the new set is made.
    pub fn union(&self, other: &KeySet) -> KeySet {
        if other.is_empty() {
            return self.clone();
        }
        if self.is_empty() {
            return other.clone();
        }
        let merged = Merged {
            a: self.spread_iter().peekable(),
            b: other.spread_iter().peekable(),
        };
        KeySet::from_spread_iter(merged.clone().count(), merged)
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the set holds no key.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The keys, sorted.
    pub fn keys(&self) -> Vec<u32> {
        let mut keys: Vec<u32> = self
            .spread_keys()
            .into_iter()
            .map(|k| k.wrapping_mul(UNSPREAD))
            .collect();
        radsort::sort(&mut keys);
        keys
    }

    /// The spread keys, in order: the slots without their gaps and end.
    fn spread_keys(&self) -> Vec<u32> {
        self.spread_iter().collect()
    }

    /// [`KeySet::spread_keys`], as they are read.
    fn spread_iter(&self) -> SpreadKeys<'_> {
        SpreadKeys {
            slots: &self.slots,
            left: self.len,
            last: None,
        }
    }
}

/// The spread keys of a [`KeySet`]'s slots, in order.
#[derive(Clone)]
struct SpreadKeys<'a> {
    slots: &'a [u32],
    left: usize,
    last: Option<u32>,
}

impl Iterator for SpreadKeys<'_> {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        if self.left == 0 {
            return None;
        }
        // A gap holds the key after it, so each key is the first slot that differs from the
        // last key.
        while let Some((&slot, rest)) = self.slots.split_first() {
            self.slots = rest;
            if self.last != Some(slot) {
                self.last = Some(slot);
                self.left -= 1;
                return Some(slot);
            }
        }
        None
    }
}

/// The keys of two sorted iterators of distinct keys, sorted, each once.
#[derive(Clone)]
struct Merged<A: Iterator<Item = u32>, B: Iterator<Item = u32>> {
    a: std::iter::Peekable<A>,
    b: std::iter::Peekable<B>,
}

impl<A: Iterator<Item = u32>, B: Iterator<Item = u32>> Iterator for Merged<A, B> {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        match (self.a.peek(), self.b.peek()) {
            (Some(&x), Some(&y)) => {
                if x <= y {
                    self.a.next();
                }
                if y <= x {
                    self.b.next();
                }
                Some(x.min(y))
            }
            (Some(_), None) => self.a.next(),
            (None, _) => self.b.next(),
        }
    }
}

/// Where a spread key's scan starts among `size` home slots: its share of the key space.
#[inline]
fn home_slot(spread: u32, size: u64) -> usize {
    ((u64::from(spread) * size) >> 32) as usize
}

impl FromIterator<u32> for KeySet {
    fn from_iter<I: IntoIterator<Item = u32>>(keys: I) -> KeySet {
        let mut spread: Vec<u32> = keys.into_iter().map(|k| k.wrapping_mul(SPREAD)).collect();
        radsort::sort(&mut spread);
        spread.dedup();
        KeySet::from_spread(spread)
    }
}

/// An unchanging set of keys, each with its number: its place among them in key order. The
/// keys are one sorted array behind a directory of where each range of top bits starts (about
/// four keys a range, for keys that are hashes), so a look-up reads one entry of
/// the directory and a short run of the array. It takes about 5 bytes a key, the array
/// included, and the numbers of a range of keys are one range of numbers. A [`KeyFilter`]
/// stands in front (at most 16 MiB), as most keys asked about are not among them: one bit
/// test instead of two look-ups in memory.
#[derive(Debug, Clone)]
pub(crate) struct NumberedKeys {
    /// The keys, sorted, each once.
    keys: Vec<u32>,
    /// Where each bucket's keys start in `keys`, and at the end the number of keys.
    starts: Vec<u32>,
    /// A key's bucket is its value shifted right by this (32: a single bucket).
    shift: u32,
    /// In front of the look-up.
    filter: KeyFilter,
}

/// Keys a bucket of [`NumberedKeys`] holds on average, for keys that are hashes.
const KEYS_PER_BUCKET: usize = 4;

impl NumberedKeys {
    /// The keys given, numbered in key order (each once).
    pub fn new(mut keys: Vec<u32>) -> NumberedKeys {
        radsort::sort(&mut keys);
        keys.dedup();
        let buckets = (keys.len() / KEYS_PER_BUCKET)
            .clamp(1, 1 << 30)
            .next_power_of_two();
        let shift = 32 - buckets.trailing_zeros();
        let mut starts = Vec::with_capacity(buckets + 1);
        for (at, &key) in keys.iter().enumerate() {
            let bucket = (u64::from(key) >> shift) as usize;
            starts.resize(starts.len().max(bucket + 1), at as u32);
        }
        starts.resize(buckets + 1, keys.len() as u32);
        let filter = KeyFilter::holding(keys.iter().copied(), keys.len());
        NumberedKeys {
            keys,
            starts,
            shift,
            filter,
        }
    }

    /// The key's number, when it is one of the keys.
    #[inline]
    pub fn number(&self, key: u32) -> Option<u32> {
        if !self.filter.may_contain(key) {
            return None;
        }
        let bucket = (u64::from(key) >> self.shift) as usize;
        let (from, to) = (self.starts[bucket], self.starts[bucket + 1]);
        let run = &self.keys[from as usize..to as usize];
        let at = run.partition_point(|&k| k < key);
        (run.get(at) == Some(&key)).then_some(from + at as u32)
    }

    /// The keys in key order: the key numbered `n` is the `n`-th.
    pub fn keys(&self) -> &[u32] {
        &self.keys
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// True when there is no key.
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sketch::signature::splitmix64;
    use rustc_hash::FxHashSet;

    #[test]
    fn look_ups_match_a_hash_set() {
        let mut state = 3;
        let mut random = move || splitmix64(&mut state) as u32;
        for size in [0, 1, 7, 100, 5_000, 300_000, FILTERED_KEYS + 1_000] {
            let keys: Vec<u32> = (0..size).map(|_| random()).chain([0, u32::MAX]).collect();
            let plain: FxHashSet<u32> = keys.iter().copied().collect();
            let set: KeySet = keys.iter().copied().collect();
            let numbered = NumberedKeys::new(keys.clone());
            // The same keys as two sets joined, one of them also holding keys of the other.
            let (half, rest) = keys.split_at(keys.len() / 2);
            let joined =
                KeySet::from_iter(half.iter().copied().chain(rest.iter().take(3).copied()))
                    .union(&rest.iter().copied().collect());
            assert_eq!(set.len(), plain.len());
            assert_eq!(joined.keys(), set.keys());
            let mut sorted: Vec<u32> = plain.iter().copied().collect();
            sorted.sort_unstable();
            assert_eq!(set.keys(), sorted);
            let probes = keys.iter().copied().chain((0..200_000).map(|_| random()));
            for key in probes.chain([1, u32::MAX - 1]) {
                let expected = plain.contains(&key);
                assert_eq!(set.contains(key), expected, "{key}");
                assert_eq!(joined.contains(key), expected, "{key}");
                let number = numbered.number(key);
                assert_eq!(number.is_some(), expected, "{key}");
                if let Some(n) = number {
                    assert_eq!(sorted[n as usize], key);
                }
            }
            // Marking many keys at once answers as looking each up, in blocks and across
            // them, and leaves a mark that was set.
            let probes: Vec<u32> = (keys.iter().copied().take(2_000))
                .chain((0..3_000).map(|_| random()))
                .chain([1, u32::MAX - 1, u32::MAX])
                .collect();
            let marked_before = |i: usize| i % 7 == 3;
            let mut marks: Vec<bool> = (0..probes.len()).map(marked_before).collect();
            set.mark(&probes, &mut marks);
            for (i, (key, &mark)) in probes.iter().zip(&marks).enumerate() {
                assert_eq!(mark, marked_before(i) || plain.contains(key), "{key}");
            }
        }
        let mut marks = vec![false, true];
        KeySet::default().mark(&[0, u32::MAX], &mut marks);
        assert_eq!(marks, [false, true]);
    }

    #[test]
    fn keys_that_are_not_hashes_spread_too() {
        let set: KeySet = (0..100_000u32).chain([u32::MAX]).collect();
        assert_eq!(SPREAD.wrapping_mul(UNSPREAD), 1);
        assert_eq!(
            set.keys(),
            (0..100_000u32).chain([u32::MAX]).collect::<Vec<u32>>()
        );
        assert!(set.slots.len() <= 125_001 + 64);
        let longest_scan = (0..100_000u32)
            .map(|k| {
                let spread = k.wrapping_mul(SPREAD);
                set.slots[home_slot(spread, set.size)..]
                    .iter()
                    .take_while(|&&s| s < spread)
                    .count()
            })
            .max();
        assert!(longest_scan < Some(64), "{longest_scan:?}");
        assert!(set.contains(u32::MAX) && !set.contains(100_000));
        assert!(!KeySet::default().contains(u32::MAX) && !KeySet::default().contains(0));
        // Keys in one bucket of the directory are numbered all the same.
        let numbered = NumberedKeys::new((0..100_000u32).rev().chain([u32::MAX, 7]).collect());
        assert_eq!(numbered.len(), 100_001);
        assert_eq!(numbered.number(7), Some(7));
        assert_eq!(numbered.number(u32::MAX), Some(100_000));
        assert_eq!(numbered.number(100_000), None);
        let none = NumberedKeys::new(Vec::new());
        assert!(none.is_empty() && none.number(0).is_none() && none.number(u32::MAX).is_none());
    }

    #[test]
    fn filters_grow_with_their_sets_up_to_a_cap() {
        assert_eq!(KeyFilter::for_keys(0).bits(), 1 << MIN_FILTER_BITS);
        assert_eq!(KeyFilter::for_keys(100_000).bits(), 1 << 21);
        assert_eq!(KeyFilter::for_keys(usize::MAX).bits(), 1 << MAX_FILTER_BITS);
        let set: KeySet = (0..100_000u32).collect();
        assert_eq!(set.filter.map(|f| f.bits()), Some(1 << 21));
        let set: KeySet = (0..FILTERED_KEYS as u32 + 1).collect();
        assert!(set.filter.is_none() && set.contains(0) && !set.contains(u32::MAX));
    }
}
