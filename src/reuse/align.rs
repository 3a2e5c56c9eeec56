//! Passage alignment, exact: the words of each text covered by a shingle the other text also
//! has, grouped into passages, and the pair's figures. A word of text `a` is *shared* with
//! `b` when one of the shingles that contain it (not boilerplate) is found exactly once in `a`
//! and exactly once in `b`. A phrase that either text repeats is a formula of that text (a
//! manual page's "followed by an integer giving the position", entry after entry; the layout
//! of a table's rows; a refrain), which two texts share without one taking a passage of the
//! other: it is not counted. Shared words at most `max_gap` words apart (the words an edit
//! changed in between) form one *passage*; a passage with fewer than `min_passage_words`
//! shared words does not count (a common phrase), nor does one where fewer than half the words
//! are shared: a revision changes a minority of a passage's words, while what two different
//! texts of one layout share (the codes of two character tables, the field names of two
//! forms, between values that differ) is a minority of theirs. Everything here is computed from the two
//! texts' shingle keys, nothing estimated.

use std::ops::Range;

use super::{Text, MASKED};

/// How shared words are grouped into passages (`reuse.max-gap`, `reuse.min-passage-words`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PassageRules {
    /// Shared words at most this many words apart are one passage.
    pub max_gap: usize,
    /// Shared words a passage holds at the fewest to count.
    pub(crate) min_words: usize,
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
#[cfg(test)]
pub(crate) fn align(
    a: &Text,
    a_set: &[u32],
    b: &Text,
    b_set: &[u32],
    rules: PassageRules,
) -> Figures {
    if a.k != b.k {
        return Figures::default();
    }
    let common = intersection(a_set, b_set);
    let union = a_set.len() + b_set.len() - common;
    let (a_once, b_once) = (found_once(a), found_once(b));
    Figures {
        a: side(a, &a_once, &b_once, rules),
        b: side(b, &b_once, &a_once, rules),
        jaccard: jaccard(common, union),
    }
}

/// The keys found exactly once in `text`, boilerplate left out; sorted.
pub(crate) fn found_once(text: &Text) -> Vec<u32> {
    let mut keys: Vec<u32> = text.keys.iter().copied().filter(|&k| k != MASKED).collect();
    keys.sort_unstable();
    keys.chunk_by(|x, y| x == y)
        .filter(|group| group.len() == 1)
        .map(|group| group[0])
        .collect()
}

/// One text made ready to be aligned with many: its shingle set, which of those shingles it
/// repeats, and for each of its places the index in that set of the shingle there
/// (a mark, `NOT_ONCE`, where the shingle is boilerplate or repeated). Preparing the first text of
/// many pairs once spares sorting it for each pair; the second text of a pair is read as it is.
#[derive(Debug, Clone, Default)]
pub struct Prepared<'t> {
    text: Option<&'t Text>,
    set: Vec<u32>,
    repeated: Vec<bool>,
    places: Vec<u32>,
}

/// A place of a [`Prepared`] text that does not count: boilerplate, or a repeated shingle.
const NOT_ONCE: u32 = u32::MAX;

impl<'t> Prepared<'t> {
    /// `text` made ready.
    pub fn new(text: &'t Text) -> Prepared<'t> {
        let set = shingle_set(text);
        let mut repeated = vec![false; set.len()];
        let mut seen = vec![false; set.len()];
        let at: Vec<Option<usize>> = (text.keys.iter())
            .map(|&key| {
                (key != MASKED)
                    .then(|| set.binary_search(&key).ok())
                    .flatten()
            })
            .collect();
        for &i in at.iter().flatten() {
            repeated[i] |= seen[i];
            seen[i] = true;
        }
        let places = (at.iter())
            .map(|i| match *i {
                Some(i) if !repeated[i] => i as u32,
                _ => NOT_ONCE,
            })
            .collect();
        Prepared {
            text: Some(text),
            set,
            repeated,
            places,
        }
    }
}

/// Buffers an alignment of a [`Prepared`] text reuses from pair to pair.
#[derive(Debug, Default)]
pub(crate) struct AlignScratch {
    /// Per shingle of the prepared text: how many times the other text has it (0, 1 or 2 for
    /// more).
    found: Vec<u8>,
    /// Per place of the other text: the index of its shingle in the prepared text's set, or
    /// [`NOT_ONCE`].
    at: Vec<u32>,
}

/// The figures of the prepared text `a` and text `b`, whose shingle set holds `b_distinct`
/// shingles: those of [`align`], without sorting `b`. `b`'s places are looked up in `a`'s
/// set, which counts how often `b` has each of `a`'s shingles; each text's places are then
/// read against those counts.
pub(crate) fn align_prepared(
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
    look_up_places(a, b, scratch);
    let AlignScratch { found, at } = scratch;
    let shared = found.iter().filter(|&&n| n > 0).count();
    let once_in_both = |i: u32| i != NOT_ONCE && found[i as usize] == 1 && !a.repeated[i as usize];
    let mut b_places = at.iter();
    let b_side = side_where(b, rules, |_| {
        once_in_both(*b_places.next().expect("a place"))
    });
    let mut a_places = a.places.iter();
    let a_side = side_where(a_text, rules, |_| {
        once_in_both(*a_places.next().expect("a place"))
    });
    Figures {
        a: a_side,
        b: b_side,
        jaccard: jaccard(shared, a.set.len() + b_distinct - shared),
    }
}

/// Fills `scratch` for the prepared text `a` and text `b`: how many times `b` has each of
/// `a`'s shingles, and where each of `b`'s places is in `a`'s set.
fn look_up_places(a: &Prepared, b: &Text, scratch: &mut AlignScratch) {
    let AlignScratch { found, at } = scratch;
    found.clear();
    found.resize(a.set.len(), 0);
    at.clear();
    at.extend(b.keys.iter().map(|&key| match a.set.binary_search(&key) {
        Ok(i) if key != MASKED => {
            found[i] = found[i].saturating_add(1).min(2);
            i as u32
        }
        _ => NOT_ONCE,
    }));
}

/// The passages of the prepared text `a` shared with `b` that count, as [`align_prepared`]
/// counts them: each passage's words, from its first shared word to its last. Each shared
/// word of those passages is set in `shared` (one flag a word of `a`).
pub(crate) fn passages_prepared(
    a: &Prepared,
    b: &Text,
    rules: PassageRules,
    scratch: &mut AlignScratch,
    shared: &mut [bool],
) -> Vec<Range<usize>> {
    let Some(a_text) = a.text else {
        return Vec::new();
    };
    if a_text.k != b.k {
        return Vec::new();
    }
    look_up_places(a, b, scratch);
    let found = &scratch.found;
    let once_in_both = |i: u32| i != NOT_ONCE && found[i as usize] == 1 && !a.repeated[i as usize];
    // The places whose shingles count, in order.
    let mut counted = Vec::new();
    let mut place = 0;
    let mut passages = Vec::new();
    for_each_passage(
        a_text,
        rules,
        |key| {
            let counts = once_in_both(a.places[place]);
            if counts && key != MASKED {
                counted.push(place);
            }
            place += 1;
            counts
        },
        |words, _| passages.push(words),
    );
    // Every word of a counted shingle is shared; those inside a passage that counts are its.
    let k = usize::from(a_text.k);
    let mut next = 0;
    for &p in &counted {
        for word in p..p + k {
            while next < passages.len() && passages[next].end <= word {
                next += 1;
            }
            if passages.get(next).is_some_and(|r| r.contains(&word)) {
                if let Some(flag) = shared.get_mut(word) {
                    *flag = true;
                }
            }
        }
    }
    passages
}

/// `common / union`, 0 for an empty union.
fn jaccard(common: usize, union: usize) -> f64 {
    if union == 0 {
        0.0
    } else {
        common as f64 / union as f64
    }
}

/// What `text`, whose keys found once are `once`, holds of a text whose keys found once are
/// `other_once` (see [`found_once`]).
#[cfg(test)]
fn side(text: &Text, once: &[u32], other_once: &[u32], rules: PassageRules) -> Side {
    side_where(text, rules, |key| {
        once.binary_search(&key).is_ok() && other_once.binary_search(&key).is_ok()
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
    // A passage counts when it holds enough shared words and they are at least half its words.
    let mut close = |(first, last, shared): (usize, usize, u32)| {
        let (shared_words, span) = (shared as usize, last - first + 1);
        if shared_words >= rules.min_words && 2 * shared_words >= span {
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

/// The passages of `text` shared with `other`, as [`align`] counts them: each passage's
/// words, from its first shared word to its last, and its shared words.
pub(crate) fn shared_passages(
    text: &Text,
    other: &Text,
    rules: PassageRules,
) -> Vec<(Range<usize>, u32)> {
    let (once, other_once) = (found_once(text), found_once(other));
    let mut out = Vec::new();
    for_each_passage(
        text,
        rules,
        |key| once.binary_search(&key).is_ok() && other_once.binary_search(&key).is_ok(),
        |words, shared| out.push((words, shared)),
    );
    out
}

/// How many keys two sorted, distinct key lists share.
#[cfg(test)]
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
        assert_eq!(shared_passages(&a, &b, loose), [(0..10, 7)]);
        assert_eq!(shared_passages(&b, &a, loose), [(0..5, 5)]);
        assert_eq!(shared_passages(&a, &b, RULES), [(0..4, 4)]);
    }

    #[test]
    fn a_passage_needs_half_its_words_shared() {
        // Shingle 1 covers words 0..3 and shingle 2 words 5..8: one passage of 8 words, 6
        // shared. Shingles of one word each, 4 other words between (a table's code column):
        // 2 shared of 6, no passage; the other text, all shared, has one.
        let rules = PassageRules {
            max_gap: 5,
            min_words: 2,
        };
        let a = text(&[1, 30, 31, 32, 33, 2]);
        let b = text(&[1, 40, 2, 41]);
        let f = align(&a, &shingle_set(&a), &b, &shingle_set(&b), rules);
        assert_eq!((f.a.shared, f.a.longest), (6, 8));
        let sparse = Text {
            words: 8,
            k: 1,
            keys: [1, 30, 31, 32, 33, 2, 34, 35].into(),
        };
        let other = Text {
            words: 2,
            k: 1,
            keys: [1, 2].into(),
        };
        let f = align(
            &sparse,
            &shingle_set(&sparse),
            &other,
            &shingle_set(&other),
            rules,
        );
        assert_eq!((f.a.shared, f.b.shared), (0, 2));
    }

    #[test]
    fn a_shingle_either_text_repeats_is_not_shared() {
        // Shingle 1 twice in a: a formula of a's, shared by neither side. Shingles 2 and 3
        // cover words 1..5 of a and of b.
        let a = text(&[1, 2, 3, 1]);
        let b = text(&[1, 2, 3, 50]);
        let f = align(&a, &shingle_set(&a), &b, &shingle_set(&b), RULES);
        assert_eq!((f.a.shared, f.b.shared), (4, 4));
        assert_eq!(shared_passages(&b, &a, RULES), [(1..5, 4)]);
        // The same when b repeats it.
        let f = align(&b, &shingle_set(&b), &a, &shingle_set(&a), RULES);
        assert_eq!((f.a.shared, f.b.shared), (4, 4));
        // The Jaccard still counts every shingle they share: 3 of 4.
        assert!((f.jaccard - 0.75).abs() < 1e-12);
        let prepared = Prepared::new(&a);
        let g = align_prepared(&prepared, &b, 4, RULES, &mut AlignScratch::default());
        assert_eq!(g, align(&a, &shingle_set(&a), &b, &shingle_set(&b), RULES));
    }

    #[test]
    fn prepared_passages_are_those_counted_and_mark_their_shared_words() {
        let loose = PassageRules {
            max_gap: 3,
            min_words: 4,
        };
        let a = text(&[1, 2, 30, 31, 32, 33, 34, 9]);
        let b = text(&[1, 2, 9, 40]);
        let mut shared = vec![false; 10];
        let passages = passages_prepared(
            &Prepared::new(&a),
            &b,
            loose,
            &mut AlignScratch::default(),
            &mut shared,
        );
        assert_eq!((passages.len(), passages.first()), (1, Some(&(0..10))));
        // Words 0..4 by shingles 1 and 2, words 7..10 by shingle 9: the 7 shared words.
        let marked: Vec<usize> = (0..10).filter(|&w| shared[w]).collect();
        assert_eq!(marked, [0, 1, 2, 3, 7, 8, 9]);
        assert_eq!(
            align(&a, &shingle_set(&a), &b, &shingle_set(&b), loose)
                .a
                .shared,
            marked.len() as u32
        );
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
