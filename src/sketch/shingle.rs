//! Shingles: overlapping windows of `k` consecutive words, each hashed once with a keyed
//! SipHash-1-3 into a stable 64-bit value, folded to a 32-bit key. A text of `n` words has
//! `max(0, n-k+1)` windows; the shingle set keeps each distinct key once, so a repeated
//! fragment counts once. Words are
//! hashed first (one SipHash per word), and a window hashes the `k` word hashes, so each word's
//! bytes are read once whatever `k` is.
//!
//! A text's [`Lead`] is the keys of its first shingles in text order: its opening, which the
//! set, sorted by key, no longer shows.

use std::hash::Hasher;

use siphasher::sip::SipHasher13;

/// Keyed hashing of words and shingles, derived from the configuration's seed.
#[derive(Debug, Clone, Copy)]
pub struct ShingleHasher {
    word_key: (u64, u64),
    shingle_key: (u64, u64),
}

impl ShingleHasher {
    /// A hasher whose keys derive from `seed`.
    pub fn new(seed: u64) -> ShingleHasher {
        let mut state = seed;
        let mut next = || crate::sketch::signature::splitmix64(&mut state);
        ShingleHasher {
            word_key: (next(), next()),
            shingle_key: (next(), next()),
        }
    }

    /// The hash of one canonical word.
    pub fn word(&self, word: &str) -> u64 {
        let mut h = SipHasher13::new_with_keys(self.word_key.0, self.word_key.1);
        h.write(word.as_bytes());
        h.finish()
    }

    /// The hash of one window of word hashes.
    pub fn window(&self, words: &[u64]) -> u64 {
        let mut h = SipHasher13::new_with_keys(self.shingle_key.0, self.shingle_key.1);
        for &w in words {
            h.write_u64(w);
        }
        h.finish()
    }

    /// Appends the shingle set of `k`-word windows of `word_hashes` to `keys` (sorted, each
    /// key once, as [`shingle_set`] makes it) and returns its length. Long lists of many sets,
    /// one after another, are made this way without a list per set.
    #[cfg(test)]
    pub(crate) fn append_set(&self, word_hashes: &[u64], k: usize, keys: &mut Vec<u32>) -> usize {
        self.append_set_and_lead(word_hashes, k, keys).0
    }

    /// [`ShingleHasher::append_set`], and the text's lead, taken from its keys in text order
    /// before they are sorted.
    #[cfg(test)]
    pub(crate) fn append_set_and_lead(
        &self,
        word_hashes: &[u64],
        k: usize,
        keys: &mut Vec<u32>,
    ) -> (usize, Lead) {
        let start = keys.len();
        if word_hashes.len() >= k {
            keys.extend(word_hashes.windows(k).map(|w| key(self.window(w))));
        }
        into_set(keys, start)
    }

    /// The hash of each window of `k` words, in text order (repeats kept).
    pub fn windows(&self, word_hashes: &[u64], k: usize) -> Vec<u64> {
        if word_hashes.len() < k {
            return Vec::new();
        }
        word_hashes.windows(k).map(|w| self.window(w)).collect()
    }
}

/// Turns the keys of one text's windows, in text order at the end of `keys` from `start`,
/// into its shingle set (sorted, each key once, as [`shingle_set`] makes it). Returns the set's
/// length and the text's lead.
pub(crate) fn into_set(keys: &mut Vec<u32>, start: usize) -> (usize, Lead) {
    let lead = Lead::of(&keys[start..]);
    let set = &mut keys[start..];
    set.sort_unstable();
    // Each key once: `distinct` keys are kept at the front of the set.
    let mut distinct = usize::from(!set.is_empty());
    for i in 1..set.len() {
        if set[i] != set[distinct - 1] {
            set[distinct] = set[i];
            distinct += 1;
        }
    }
    keys.truncate(start + distinct);
    (distinct, lead)
}

/// The 32-bit key of a shingle: its 64-bit hash folded, `h ⊕ (h >> 32)`. Shingle sets,
/// corpus statistics and signatures all work on keys; two shingles of one document share a
/// key with probability about `n/2^32`.
pub fn key(hash: u64) -> u32 {
    (hash ^ (hash >> 32)) as u32
}

/// Distinct shingles in a [`Lead`].
pub(crate) const LEAD_SHINGLES: usize = 32;

/// A text's opening: the keys of its first `LEAD_SHINGLES` distinct shingles, in text order.
/// Rewrites of one story keep its opening (a text cut to its lead keeps little else), while
/// two texts on one topic, or two letters filled in from one template, seldom open alike: their
/// shared phrases sit further in. Clustering asks it of a weak link (see
/// `cluster.attach-lead`). The keys live on the heap (128 bytes and a pointer per sketch), so
/// that sketches stay small to move and scan.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Lead(Box<[u32]>);

impl Lead {
    /// The lead of a text whose shingle keys, in text order (repeats kept), are `keys`.
    pub fn of(keys: &[u32]) -> Lead {
        let mut lead = Vec::with_capacity(LEAD_SHINGLES.min(keys.len()));
        for &key in keys {
            if lead.len() == LEAD_SHINGLES {
                break;
            }
            if !lead.contains(&key) {
                lead.push(key);
            }
        }
        Lead(lead.into_boxed_slice())
    }

    /// Its keys, in text order: none when the text has no shingles, or when the lead is not
    /// known (a sketch read from a story index that kept none). A story index keeps the low 16
    /// bits of the keys in the text's own set, boilerplate left out, sorted.
    pub fn keys(&self) -> &[u32] {
        &self.0
    }

    /// The share of its keys found in the sorted set `set`; `None` when it has none.
    pub(crate) fn share_in(&self, set: &[u32]) -> Option<f64> {
        let keys = self.keys();
        if keys.is_empty() {
            return None;
        }
        let found = keys.iter().filter(|k| set.binary_search(k).is_ok()).count();
        Some(found as f64 / keys.len() as f64)
    }

    /// The keys of the lead that are in the text's own sorted set `own`, in text order: the
    /// lead as an index keeps it, without the boilerplate (see [`Lead::content_share_in`]).
    pub(crate) fn content_in(&self, own: &[u32]) -> Vec<u32> {
        let keys = self.keys();
        if keys.len() > LEAD_SHINGLES {
            return keys
                .iter()
                .filter(|k| own.binary_search(k).is_ok())
                .copied()
                .collect();
        }
        // The keys looked up in order of value, each from where the one before was found, so
        // one walk over `own` finds them all; then kept in text order.
        let mut by_value = [(0u32, 0u8); LEAD_SHINGLES];
        let by_value = &mut by_value[..keys.len()];
        for (place, (slot, &key)) in by_value.iter_mut().zip(keys).enumerate() {
            *slot = (key, place as u8);
        }
        by_value.sort_unstable();
        let mut in_own = [false; LEAD_SHINGLES];
        let mut rest = own;
        for &(key, place) in by_value.iter() {
            rest = &rest[gallop(rest, |&k| k < key)..];
            in_own[usize::from(place)] = rest.first() == Some(&key);
        }
        keys.iter()
            .zip(in_own)
            .filter_map(|(&key, found)| found.then_some(key))
            .collect()
    }

    /// The share of its keys still in the text's own sorted set `own` that are found in the
    /// sorted set `other`. Keys left out of `own` as boilerplate (a site's header or byline
    /// at the top of a page) are left out of the lead too: they can never be found in another
    /// set, and a rewrite carried by another site would seem to open differently. `None` when
    /// no key of the lead is in `own`.
    pub(crate) fn content_share_in(&self, own: &[u32], other: &[u32]) -> Option<f64> {
        let (mut content, mut found) = (0usize, 0usize);
        for key in self.keys() {
            if own.binary_search(key).is_ok() {
                content += 1;
                found += usize::from(other.binary_search(key).is_ok());
            }
        }
        (content > 0).then(|| found as f64 / content as f64)
    }
}

/// The number of leading `items` for which `below` holds (as `partition_point`), found by
/// galloping from the start, so that it costs the log of the answer, not of the slice: a
/// walk through sorted keys reads what it passes over, not a binary search's far probes.
pub(crate) fn gallop<T>(items: &[T], below: impl Fn(&T) -> bool) -> usize {
    let mut low = 0;
    let mut step = 1;
    while step <= items.len() && below(&items[step - 1]) {
        low = step;
        step *= 2;
    }
    low + items[low..step.min(items.len())].partition_point(below)
}

/// The shingle set: the distinct keys of the windows, sorted.
pub fn shingle_set(windows: &[u64]) -> Vec<u32> {
    let mut keys: Vec<u32> = windows.iter().map(|&w| key(w)).collect();
    keys.sort_unstable();
    keys.dedup();
    keys.shrink_to_fit();
    keys
}

/// The number of shingle windows a text of `words` words has.
#[cfg(test)]
pub(crate) fn window_count(words: usize, k: usize) -> usize {
    (words + 1).saturating_sub(k)
}

/// Merges sorted `b` into sorted `a`, in place: from the back, into room made at the end of
/// `a`, so that nothing but that room is taken. An item in both comes twice, side by side.
pub(crate) fn merge_sorted<T: Copy + Ord>(a: &mut Vec<T>, b: &[T]) {
    let n = a.len();
    a.extend_from_slice(b);
    // From the back: the largest remaining key of either goes to the last free slot.
    let (mut i, mut j) = (n, b.len());
    while j > 0 {
        let k = i + j - 1;
        if i > 0 && a[i - 1] > b[j - 1] {
            a[k] = a[i - 1];
            i -= 1;
        } else {
            a[k] = b[j - 1];
            j -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        #[test]
        fn galloping_finds_what_a_binary_search_finds(
            mut items in proptest::collection::vec(0u32..1000, 0..300),
            bound in 0u32..1001,
        ) {
            items.sort_unstable();
            proptest::prop_assert_eq!(
                gallop(&items, |&x| x < bound),
                items.partition_point(|&x| x < bound)
            );
        }

        #[test]
        fn a_leads_content_is_its_keys_in_the_set_in_text_order(
            keys in proptest::collection::vec(0u32..200, 0..40),
            own in proptest::collection::btree_set(0u32..200, 0..150),
        ) {
            let lead = Lead::of(&keys);
            let own: Vec<u32> = own.into_iter().collect();
            let expected: Vec<u32> =
                lead.keys().iter().copied().filter(|k| own.contains(k)).collect();
            proptest::prop_assert_eq!(lead.content_in(&own), expected);
        }
    }

    fn hashes(h: &ShingleHasher, text: &str) -> Vec<u64> {
        text.split_whitespace().map(|w| h.word(w)).collect()
    }

    #[test]
    fn a_text_has_n_minus_k_plus_one_windows() {
        let h = ShingleHasher::new(1);
        let words = hashes(&h, "a b c d e f");
        assert_eq!(h.windows(&words, 2).len(), 5);
        assert_eq!(h.windows(&words, 6).len(), 1);
        assert!(h.windows(&words, 7).is_empty());
        assert_eq!(window_count(6, 2), 5);
        assert_eq!(window_count(3, 5), 0);
    }

    #[test]
    fn repeated_fragments_count_once() {
        let h = ShingleHasher::new(1);
        let words = hashes(&h, "a b a b a b");
        assert_eq!(shingle_set(&h.windows(&words, 2)).len(), 2);
    }

    #[test]
    fn sets_appended_to_a_list_are_those_made_alone() {
        let h = ShingleHasher::new(1);
        let mut keys = vec![7, 3];
        for text in [
            "a b a b a b",
            "x y z x y z w",
            "one",
            "",
            "q r s t u v w x y z q r s",
        ] {
            let words = hashes(&h, text);
            for k in [1, 2, 3] {
                let start = keys.len();
                let n = h.append_set(&words, k, &mut keys);
                assert_eq!(
                    &keys[start..],
                    shingle_set(&h.windows(&words, k)),
                    "{text} {k}"
                );
                assert_eq!(n, keys.len() - start);
            }
        }
        assert_eq!(&keys[..2], &[7, 3]);
    }

    #[test]
    fn a_lead_opens_alike_by_its_keys_that_are_not_boilerplate() {
        // Keys 1 to 4: a site's header, left out of the text's own set as boilerplate.
        let lead = Lead::of(&[1, 2, 3, 4, 10, 11, 12, 13]);
        let own = [10, 11, 12, 13, 20, 21];
        // Another site's copy holds the same text under another header.
        let other = [5, 6, 10, 11, 12, 30];
        assert_eq!(lead.share_in(&other), Some(3.0 / 8.0));
        assert_eq!(lead.content_share_in(&own, &other), Some(3.0 / 4.0));
        assert_eq!(lead.content_share_in(&[1, 2], &other), Some(0.0));
        assert_eq!(
            lead.content_share_in(&[20, 21], &other),
            None,
            "no key of the lead left"
        );
        assert_eq!(Lead::default().content_share_in(&own, &other), None);
    }

    #[test]
    fn a_lead_is_the_first_distinct_keys_in_text_order() {
        let h = ShingleHasher::new(1);
        let text: Vec<String> = (0..60).map(|i| format!("w{i}")).collect();
        let words = hashes(&h, &format!("x y x y {}", text.join(" ")));
        let windows = h.windows(&words, 2);
        let keys: Vec<u32> = windows.iter().map(|&w| key(w)).collect();
        let mut list = Vec::new();
        let (n, lead) = h.append_set_and_lead(&words, 2, &mut list);
        assert_eq!(n, list.len());
        // "x y", "y x", "x y" again (counted once), then the text's windows in order.
        let mut expected = vec![keys[0], keys[1]];
        expected.extend(&keys[3..3 + LEAD_SHINGLES - 2]);
        assert_eq!(lead.keys(), expected.as_slice());
        assert_eq!(lead, Lead::of(&keys));
        assert_eq!(lead.share_in(&list), Some(1.0));
        // The set of the text's tail holds none of the lead but its last key.
        let tail = shingle_set(&windows[LEAD_SHINGLES..]);
        let share = lead.share_in(&tail).unwrap();
        assert!(share <= 1.0 / LEAD_SHINGLES as f64, "{share}");
        let short = Lead::of(&keys[..5]);
        assert_eq!(
            short.keys(),
            &[keys[0], keys[1], keys[3], keys[4]],
            "x y counts once"
        );
        assert_eq!(short.share_in(&[]), Some(0.0));
        assert_eq!(Lead::default().share_in(&list), None, "no lead, no share");
        assert_eq!(Lead::of(&[]), Lead::default());
    }

    #[test]
    fn order_within_a_window_matters_and_seed_changes_hashes() {
        let h = ShingleHasher::new(1);
        let ab = h.window(&hashes(&h, "a b"));
        let ba = h.window(&hashes(&h, "b a"));
        assert_ne!(ab, ba);
        let other = ShingleHasher::new(2);
        assert_ne!(ab, other.window(&hashes(&other, "a b")));
    }

    #[test]
    fn disjoint_sorted_sets_merge_in_place() {
        let mut a = vec![1, 5, 9];
        merge_sorted(&mut a, &[0, 3, 7, 10]);
        assert_eq!(a, vec![0, 1, 3, 5, 7, 9, 10]);
        let mut b = vec![];
        merge_sorted(&mut b, &[4]);
        assert_eq!(b, vec![4]);
        merge_sorted(&mut b, &[]);
        assert_eq!(b, vec![4]);
    }
}
