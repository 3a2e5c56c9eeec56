//! Sets of 32-bit shingle keys that are asked about every key of every document (the
//! boilerplate, the frequent shingles), where most answers are no. A bit array (16 bits per
//! key, from 8 KiB to 16 MiB) stands in front of the hash set: a key whose bit is clear is not in the
//! set, and only the few others are looked up. Keys are hashes, so their top bits spread them
//! evenly over the bits; a sorted shingle set visits the bits in order.

use rustc_hash::{FxHashMap, FxHashSet};

/// Fewest bits a filter has.
const MIN_FILTER_BITS: u32 = 16;
/// Most bits a filter has: 2^27 bits, 16 MiB. A million documents can have millions of
/// boilerplate keys, and a filter with most of its bits set would send every key to the hash
/// set; a large filter misses the fast caches but still spares the hash set's memory.
const MAX_FILTER_BITS: u32 = 27;
/// Filter bits per key, while the filter may grow: about one key in this many that is not in
/// the set finds its bit set.
const BITS_PER_KEY: usize = 16;

/// One bit per key's top bits: clear means the key is not among those added.
#[derive(Debug, Clone)]
pub struct KeyFilter {
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
    pub fn for_keys(keys: usize) -> KeyFilter {
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
    pub fn may_contain(&self, key: u32) -> bool {
        let bit = key >> self.shift;
        self.words[(bit >> 6) as usize] & (1 << (bit & 63)) != 0
    }
}

/// A set of keys with a [`KeyFilter`] in front: `contains` costs one bit test for most keys
/// that are not in it.
#[derive(Debug, Clone, Default)]
pub struct KeySet {
    keys: FxHashSet<u32>,
    filter: KeyFilter,
}

impl KeySet {
    /// True when the key is in the set.
    #[inline]
    pub fn contains(&self, key: u32) -> bool {
        self.filter.may_contain(key) && self.keys.contains(&key)
    }

    /// Adds a key; true when it was not in the set.
    pub fn insert(&mut self, key: u32) -> bool {
        if !self.keys.insert(key) {
            return false;
        }
        if self.keys.len() * BITS_PER_KEY > self.filter.bits()
            && self.filter.shift > 32 - MAX_FILTER_BITS
        {
            self.filter = KeyFilter::holding(self.keys.iter().copied(), self.keys.len() * 2);
        } else {
            self.filter.insert(key);
        }
        true
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// True when the set holds no key.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The keys, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.keys.iter().copied()
    }
}

impl FromIterator<u32> for KeySet {
    fn from_iter<I: IntoIterator<Item = u32>>(keys: I) -> KeySet {
        let keys: FxHashSet<u32> = keys.into_iter().collect();
        let filter = KeyFilter::holding(keys.iter().copied(), keys.len());
        KeySet { keys, filter }
    }
}

impl Extend<u32> for KeySet {
    fn extend<I: IntoIterator<Item = u32>>(&mut self, keys: I) {
        keys.into_iter().for_each(|k| {
            self.insert(k);
        });
    }
}

/// A map from keys to values with a [`KeyFilter`] in front, like [`KeySet`].
#[derive(Debug, Clone, Default)]
pub struct KeyMap<V> {
    map: FxHashMap<u32, V>,
    filter: KeyFilter,
}

impl<V> KeyMap<V> {
    /// The value of a key, when it has one.
    #[inline]
    pub fn get(&self, key: u32) -> Option<&V> {
        if self.filter.may_contain(key) {
            self.map.get(&key)
        } else {
            None
        }
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// True when the map holds no key.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// The keys and their values, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &V)> + '_ {
        self.map.iter().map(|(&k, v)| (k, v))
    }
}

impl<V> FromIterator<(u32, V)> for KeyMap<V> {
    fn from_iter<I: IntoIterator<Item = (u32, V)>>(entries: I) -> KeyMap<V> {
        let map: FxHashMap<u32, V> = entries.into_iter().collect();
        let filter = KeyFilter::holding(map.keys().copied(), map.len());
        KeyMap { map, filter }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sketch::signature::splitmix64;

    #[test]
    fn filtered_look_ups_match_the_hash_set() {
        let mut state = 3;
        let mut random = move || splitmix64(&mut state) as u32;
        for size in [0, 1, 100, 5_000, 300_000] {
            let keys: Vec<u32> = (0..size).map(|_| random()).chain([0, u32::MAX]).collect();
            let plain: FxHashSet<u32> = keys.iter().copied().collect();
            let set: KeySet = keys.iter().copied().collect();
            let map: KeyMap<usize> = keys.iter().copied().zip(0..).collect();
            // Grown one key at a time, through several filter sizes.
            let mut grown = KeySet::default();
            grown.extend(keys.iter().copied());
            assert_eq!(set.len(), plain.len());
            assert_eq!(grown.len(), plain.len());
            let probes = keys.iter().copied().chain((0..200_000).map(|_| random()));
            for key in probes.chain([1, u32::MAX - 1]) {
                let expected = plain.contains(&key);
                assert_eq!(set.contains(key), expected, "{key}");
                assert_eq!(grown.contains(key), expected, "{key}");
                assert_eq!(map.get(key).is_some(), expected, "{key}");
            }
        }
    }

    #[test]
    fn filters_grow_with_their_sets_up_to_a_cap() {
        assert_eq!(KeyFilter::for_keys(0).bits(), 1 << MIN_FILTER_BITS);
        assert_eq!(KeyFilter::for_keys(100_000).bits(), 1 << 21);
        assert_eq!(KeyFilter::for_keys(usize::MAX).bits(), 1 << MAX_FILTER_BITS);
        let mut set = KeySet::default();
        set.extend(0..100_000u32);
        assert_eq!(set.filter.bits(), 1 << 22);
        assert!(set.insert(u32::MAX) && !set.insert(u32::MAX));
    }
}
