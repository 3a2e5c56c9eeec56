//! Passage alignment, exact: the words of each text covered by a shingle the other text also
//! has, grouped into passages, and the pair's figures. A word of text `a` is *shared* with
//! `b` when one of the shingles that contain it (not boilerplate) is among `b`'s shingles (not
//! boilerplate), at that shingle's first place in `a`: a phrase repeated in `a` (a man page's
//! formula, a refrain) is shared once. Shared words at most `max_gap` words apart (the words an edit changed in
//! between) form one *passage*; a passage with fewer than `min_passage_words` shared words
//! does not count (a common phrase). Everything here is computed from the two texts' shingle
//! keys, nothing estimated.

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
        jaccard: if union == 0 {
            0.0
        } else {
            common as f64 / union as f64
        },
    }
}

/// What `text` holds of a text whose shingle set is `other`.
fn side(text: &Text, other: &[u32], rules: PassageRules) -> Side {
    let k = usize::from(text.k);
    let mut side = Side::default();
    // The passage in the making: its first and last shared word and its shared words.
    let mut open: Option<(usize, usize, u32)> = None;
    // Words before this one are already counted as shared.
    let mut covered_to = 0;
    let close = |(first, last, shared): (usize, usize, u32), side: &mut Side| {
        if shared as usize >= rules.min_words {
            side.shared += shared;
            side.passages += 1;
            side.longest = side.longest.max((last - first + 1) as u32);
        }
    };
    // Shingles of `other` already matched: a phrase repeated in the text counts once.
    let mut matched = vec![false; other.len()];
    for (p, &key) in text.keys.iter().enumerate() {
        if key == MASKED {
            continue;
        }
        match other.binary_search(&key) {
            Ok(at) if !matched[at] => matched[at] = true,
            _ => continue,
        }
        // Window p covers words p..p + k; those not yet counted are shared.
        let from = covered_to.max(p);
        for word in from..p + k {
            open = match open {
                Some((first, last, shared)) if word - last <= rules.max_gap + 1 => {
                    Some((first, word, shared + 1))
                }
                Some(done) => {
                    close(done, &mut side);
                    Some((word, word, 1))
                }
                None => Some((word, word, 1)),
            };
        }
        covered_to = covered_to.max(p + k);
    }
    if let Some(done) = open {
        close(done, &mut side);
    }
    side
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
}
