//! Passage alignment, exact: the words of each text covered by a shingle the other text also
//! has, grouped into passages, and the pair's figures. A word of text `a` is *shared* with
//! `b` when one of the shingles that contain it (not boilerplate) is among `b`'s shingles (not
//! boilerplate), at that shingle's first place in `a`: a phrase repeated in `a` (a man page's
//! formula, a refrain) is shared once. Shared words at most `max_gap` words apart (the words an edit changed in
//! between) form one *passage*; a passage with fewer than `min_passage_words` shared words
//! does not count (a common phrase). Everything here is computed from the two texts' shingle
//! keys, nothing estimated.

use std::ops::Range;

use super::{Text, MASKED};

/// How shared words are grouped into passages (`reuse.max-gap`, `reuse.min-passage-words`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PassageRules {
    /// Shared words at most this many words apart are one passage.
    pub max_gap: usize,
    /// Shared words a passage holds at the fewest to count.
    pub min_words: usize,
}

/// What one text holds of the other.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Side {
    /// Shared words in passages that count.
    pub shared: u32,
    /// Passages that count.
    pub passages: u32,
    /// Words, from its first shared word to its last, of the longest passage that counts.
    pub longest: u32,
}

/// The figures of a pair of texts.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Figures {
    /// What the first text holds of the second.
    pub a: Side,
    /// What the second text holds of the first.
    pub b: Side,
    /// The exact Jaccard of the two texts' shingle sets, boilerplate left out.
    pub jaccard: f64,
}

/// A text's shingle set, boilerplate left out: its distinct keys, sorted.
pub fn shingle_set(text: &Text) -> Vec<u32> {
    let mut set: Vec<u32> = text.keys.iter().copied().filter(|&k| k != MASKED).collect();
    set.sort_unstable();
    set.dedup();
    set
}

/// The figures of texts `a` and `b`, given their shingle sets (see [`shingle_set`]). Texts
/// shingled with different shingle sizes share nothing.
pub fn align(a: &Text, a_set: &[u32], b: &Text, b_set: &[u32], rules: PassageRules) -> Figures {
    if a.k != b.k {
        return Figures::default();
    }
    let common = intersection(a_set, b_set);
    let union = a_set.len() + b_set.len() - common;
    Figures {
        a: side(a, b_set, rules),
        b: side(b, a_set, rules),
        jaccard: jaccard(common, union),
    }
}

/// One text made ready to be aligned with many: its shingle set, and for each of its places
/// the index in that set of the shingle first found there ([`NOT_FIRST`] where the shingle is
/// boilerplate or was found before). Preparing the first text of many pairs once spares
/// sorting it for each pair; the second text of a pair is read as it is.
#[derive(Debug, Clone, Default)]
pub struct Prepared<'t> {
    text: Option<&'t Text>,
    set: Vec<u32>,
    first_places: Vec<u32>,
}

/// A place of a [`Prepared`] text that does not count: boilerplate, or a shingle seen before.
const NOT_FIRST: u32 = u32::MAX;

impl<'t> Prepared<'t> {
    /// `text` made ready.
    pub fn new(text: &'t Text) -> Prepared<'t> {
        let set = shingle_set(text);
        let mut seen = vec![false; set.len()];
        let first_places = text
            .keys
            .iter()
            .map(|&key| match set.binary_search(&key) {
                Ok(at) if key != MASKED && !seen[at] => {
                    seen[at] = true;
                    at as u32
                }
                _ => NOT_FIRST,
            })
            .collect();
        Prepared {
            text: Some(text),
            set,
            first_places,
        }
    }

    /// Its distinct shingles, boilerplate left out.
    pub fn set(&self) -> &[u32] {
        &self.set
    }
}

/// Buffers an alignment of a [`Prepared`] text reuses from pair to pair.
#[derive(Debug, Default)]
pub struct AlignScratch {
    /// Per shingle of the prepared text: whether the other text has it.
    common: Vec<bool>,
}

/// The figures of the prepared text `a` and text `b`, whose shingle set holds `b_distinct`
/// shingles: those of [`align`], without sorting `b`. `b`'s places are looked up in `a`'s
/// set, which marks the shingles the two share; `a`'s first places are then read against those
/// marks.
pub fn align_prepared(
    a: &Prepared,
    b: &Text,
    b_distinct: usize,
    rules: PassageRules,
    scratch: &mut AlignScratch,
) -> Figures {
    let Some(a_text) = a.text else {
        return Figures::default();
    };
    if a_text.k != b.k {
        return Figures::default();
    }
    let common = &mut scratch.common;
    common.clear();
    common.resize(a.set.len(), false);
    let b_side = side_where(b, rules, |key| match a.set.binary_search(&key) {
        Ok(at) if !common[at] => {
            common[at] = true;
            true
        }
        _ => false,
    });
    let shared = common.iter().filter(|&&c| c).count();
    let mut places = a.first_places.iter();
    let a_side = side_where(a_text, rules, |_| {
        let at = *places.next().expect("one place a key");
        at != NOT_FIRST && common[at as usize]
    });
    Figures {
        a: a_side,
        b: b_side,
        jaccard: jaccard(shared, a.set.len() + b_distinct - shared),
    }
}

/// `common / union`, 0 for an empty union.
fn jaccard(common: usize, union: usize) -> f64 {
    if union == 0 {
        0.0
    } else {
        common as f64 / union as f64
    }
}

/// What `text` holds of a text whose shingle set is `other`.
fn side(text: &Text, other: &[u32], rules: PassageRules) -> Side {
    // Shingles of `other` already matched: a phrase repeated in the text counts once.
    let mut matched = vec![false; other.len()];
    side_where(text, rules, |key| match other.binary_search(&key) {
        Ok(at) if !matched[at] => {
            matched[at] = true;
            true
        }
        _ => false,
    })
}

/// What `text` holds of another text, where `counts(key)`, asked once for each of its places
/// in order (boilerplate included), says whether the shingle there is shared and counts.
fn side_where(text: &Text, rules: PassageRules, counts: impl FnMut(u32) -> bool) -> Side {
    let mut side = Side::default();
    for_each_passage(text, rules, counts, |words, shared| {
        side.shared += shared;
        side.passages += 1;
        side.longest = side.longest.max(words.len() as u32);
    });
    side
}

/// Calls `passage(words, shared)` for each passage of `text` that counts, in text order:
/// its words from its first shared word to its last, and its shared words. `counts` is that
/// of [`side_where`].
fn for_each_passage(
    text: &Text,
    rules: PassageRules,
    mut counts: impl FnMut(u32) -> bool,
    mut passage: impl FnMut(Range<usize>, u32),
) {
    let k = usize::from(text.k);
    // The passage in the making: its first and last shared word and its shared words.
    let mut open: Option<(usize, usize, u32)> = None;
    // Words before this one are already counted as shared.
    let mut covered_to = 0;
    let mut close = |(first, last, shared): (usize, usize, u32)| {
        if shared as usize >= rules.min_words {
            passage(first..last + 1, shared);
        }
    };
    for (p, &key) in text.keys.iter().enumerate() {
        if !counts(key) || key == MASKED {
            continue;
        }
        // Window p covers words p..p + k; those not yet counted are shared.
        let from = covered_to.max(p);
        for word in from..p + k {
            open = match open {
                Some((first, last, shared)) if word - last <= rules.max_gap + 1 => {
                    Some((first, word, shared + 1))
                }
                Some(done) => {
                    close(done);
                    Some((word, word, 1))
                }
                None => Some((word, word, 1)),
            };
        }
        covered_to = covered_to.max(p + k);
    }
    if let Some(done) = open {
        close(done);
    }
}

/// The passages of `text` shared with a text whose shingle set is `other` (see
/// [`shingle_set`]), as [`align`] counts them: each passage's words, from its first shared
/// word to its last, and its shared words.
pub fn shared_passages(
    text: &Text,
    other: &[u32],
    rules: PassageRules,
) -> Vec<(Range<usize>, u32)> {
    let mut matched = vec![false; other.len()];
    let mut out = Vec::new();
    for_each_passage(
        text,
        rules,
        |key| match other.binary_search(&key) {
            Ok(at) if !matched[at] => {
                matched[at] = true;
                true
            }
            _ => false,
        },
        |words, shared| out.push((words, shared)),
    );
    out
}

/// How many keys two sorted, distinct key lists share.
fn intersection(a: &[u32], b: &[u32]) -> usize {
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                n += 1;
                i += 1;
                j += 1;
            }
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(keys: &[u32]) -> Text {
        Text {
            words: keys.len() as u32 + 2,
            k: 3,
            keys: keys.into(),
        }
    }

    const RULES: PassageRules = PassageRules {
        max_gap: 1,
        min_words: 4,
    };

    #[test]
    fn shared_shingles_cover_their_words_and_gaps_join_passages() {
        // Shingles 1 and 2 shared: words 0..5; shingle 9 shared: words 7..10, a gap of 2.
        let a = text(&[1, 2, 30, 31, 32, 33, 34, 9]);
        let b = text(&[1, 2, 9, 40]);
        let f = align(&a, &shingle_set(&a), &b, &shingle_set(&b), RULES);
        assert_eq!(
            f.a,
            Side {
                shared: 4,
                passages: 1,
                longest: 4
            }
        );
        // In b: words 0..4 by 1 and 2, then 2..5 by 9: one passage of 5 words.
        assert_eq!(
            f.b,
            Side {
                shared: 5,
                passages: 1,
                longest: 5
            }
        );
        // 3 of 9 distinct shingles in all.
        assert!((f.jaccard - 3.0 / 9.0).abs() < 1e-12);
        let loose = PassageRules {
            max_gap: 3,
            min_words: 4,
        };
        let f = align(&a, &shingle_set(&a), &b, &shingle_set(&b), loose);
        assert_eq!((f.a.shared, f.a.passages, f.a.longest), (7, 1, 10));
        // The passages themselves: words 0..10 of a, 7 of them shared; words 0..5 of b.
        assert_eq!(shared_passages(&a, &shingle_set(&b), loose), [(0..10, 7)]);
        assert_eq!(shared_passages(&b, &shingle_set(&a), loose), [(0..5, 5)]);
        assert_eq!(shared_passages(&a, &shingle_set(&b), RULES), [(0..4, 4)]);
    }

    #[test]
    fn boilerplate_and_other_shingle_sizes_share_nothing() {
        let a = text(&[1, MASKED, 2, 3]);
        let b = text(&[MASKED, MASKED, 9, 8]);
        let f = align(&a, &shingle_set(&a), &b, &shingle_set(&b), RULES);
        assert_eq!(
            (f.a, f.b, f.jaccard),
            (Side::default(), Side::default(), 0.0)
        );
        let mut c = text(&[1, 2, 3]);
        c.k = 2;
        let f = align(&a, &shingle_set(&a), &c, &shingle_set(&c), RULES);
        assert_eq!(f, Figures::default());
    }

    proptest::proptest! {
        #[test]
        fn a_prepared_text_aligns_as_two_sorted_sets_do(
            a in proptest::collection::vec(0u32..40, 0..80),
            b in proptest::collection::vec(0u32..40, 0..80),
            gap in 0usize..4,
            min_words in 1usize..6,
        ) {
            // Keys 0 to 39, 39 standing for boilerplate: repeats, gaps and masked places.
            let mask = |keys: Vec<u32>| -> Vec<u32> {
                keys.into_iter().map(|k| if k == 39 { MASKED } else { k }).collect()
            };
            let (a, b) = (text(&mask(a)), text(&mask(b)));
            let rules = PassageRules { max_gap: gap, min_words };
            let (a_set, b_set) = (shingle_set(&a), shingle_set(&b));
            let plain = align(&a, &a_set, &b, &b_set, rules);
            let mut scratch = AlignScratch::default();
            let prepared = Prepared::new(&a);
            for _ in 0..2 {
                let f = align_prepared(&prepared, &b, b_set.len(), rules, &mut scratch);
                proptest::prop_assert_eq!(f, plain);
            }
        }
    }
}
