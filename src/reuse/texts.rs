//! Documents as reuse keeps them: a [`Text`] is made of a document's main text as `cluster`
//! reads it (the same canonical words and shingle size), its shingle keys kept in text order.
//! Boilerplate is found as `cluster` finds it by document frequency
//! ([`crate::corpus::boilerplate`]: a shingle in `boilerplate.min-documents` documents or
//! more, unless that would leave a document less than a fifth of its shingles) and masked, so
//! a site's shared footer or a notice is no passage.

use rayon::prelude::*;

use super::{Text, MASKED};
use crate::corpus::boilerplate::{document_counts, leaves_too_little, Boilerplate};
use crate::sketch::{SketchBuffers, Sketcher};

/// The [`Text`] of one document.
pub fn text_of(sketcher: &Sketcher, text: &str, scratch: &mut SketchBuffers) -> Text {
    let mut keys = Vec::new();
    let (words, k) = sketcher.append_window_sequence(text, scratch, &mut keys);
    Text {
        words,
        k: k as u8,
        keys: keys.into_boxed_slice(),
    }
}

/// Masks in every text the shingles that are boilerplate among them: those in at least
/// `min_documents` texts (0: none). Returns how many distinct shingles are boilerplate.
pub(crate) fn mask_boilerplate(texts: &mut [Text], min_documents: usize) -> usize {
    if min_documents == 0 {
        return 0;
    }
    let (sets, boilerplate) = frequent_shingles(texts, min_documents);
    texts.par_iter_mut().zip(&sets).for_each(|(text, set)| {
        mask_with(text, set, &boilerplate);
    });
    boilerplate.len()
}

/// Each text's shingle set, and the shingles in at least `min_documents` (not 0) of them.
pub(crate) fn frequent_shingles(
    texts: &[Text],
    min_documents: usize,
) -> (Vec<Vec<u32>>, Boilerplate) {
    let sets: Vec<Vec<u32>> = texts.par_iter().map(super::align::shingle_set).collect();
    let boilerplate = {
        let views: Vec<&[u32]> = sets.iter().map(Vec::as_slice).collect();
        Boilerplate::from_counts(&document_counts(&views, min_documents), min_documents)
    };
    (sets, boilerplate)
}

/// Masks in `text`, whose shingle set is `set` (see [`super::align::shingle_set`]), the
/// shingles of `set` that `boilerplate` holds.
pub(crate) fn mask_with(text: &mut Text, set: &[u32], boilerplate: &Boilerplate) {
    let taken = boilerplate.taken(set);
    if !taken.is_empty() {
        for key in text.keys.iter_mut() {
            if taken.binary_search(key).is_ok() {
                *key = MASKED;
            }
        }
    }
}

/// Buffers [`mask`] keeps from one text to the next, so that masking a night's texts
/// allocates once a thread, not three times a text.
#[derive(Debug, Default)]
pub(crate) struct MaskBuffers {
    /// Whether each key of the text is boilerplate.
    marks: Vec<bool>,
    /// The text's boilerplate keys, then the same sorted and each once.
    taken: Vec<u32>,
}

/// [`mask_with`] of `text` and its shingle set, without making the set: each key is looked
/// up in `boilerplate` where it stands, and the distinct shingles are counted only as far as
/// the rule that keeps a set made mostly of boilerplate whole needs them. A text's keys
/// that are not boilerplate are spread over a small bitmap; the bits set are a lower bound
/// of their distinct number, which settles the rule for all but texts made mostly of
/// boilerplate, whose other keys are then sorted and counted. Each key goes to the list of
/// boilerplate keys or to the bitmap without a branch: about a quarter of a news text's keys
/// are boilerplate, in no order a branch could foresee.
pub(crate) fn mask(text: &mut Text, boilerplate: &Boilerplate, buffers: &mut MaskBuffers) {
    const BITS: usize = 1024;
    let MaskBuffers { marks, taken } = buffers;
    marks.clear();
    marks.resize(text.keys.len(), false);
    boilerplate.mark(&text.keys, marks);
    taken.clear();
    taken.resize(text.keys.len(), 0);
    let mut found = 0;
    let mut spread = [0u64; BITS / 64];
    for (&key, &marked) in text.keys.iter().zip(marks.iter()) {
        let (marked, other) = (marked & (key != MASKED), !marked & (key != MASKED));
        taken[found] = key;
        found += usize::from(marked);
        let bit = key as usize % BITS;
        spread[bit / 64] |= u64::from(other) << (bit % 64);
    }
    if found == 0 {
        return;
    }
    taken.truncate(found);
    taken.sort_unstable();
    taken.dedup();
    let at_least: usize = spread.iter().map(|w| w.count_ones() as usize).sum();
    let left = if leaves_too_little(at_least, at_least + taken.len()) {
        let mut others: Vec<u32> = (text.keys.iter().copied())
            .filter(|&k| k != MASKED && taken.binary_search(&k).is_err())
            .collect();
        others.sort_unstable();
        others.dedup();
        others.len()
    } else {
        at_least
    };
    if !leaves_too_little(left, left + taken.len()) {
        for (key, &marked) in text.keys.iter_mut().zip(marks.iter()) {
            if marked {
                *key = MASKED;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Config, Plan};

    #[test]
    fn texts_keep_shingles_in_order_and_mask_what_many_share() {
        let sketcher = Sketcher::new(&Plan::try_from(&Config::default()).unwrap());
        let mut scratch = SketchBuffers::default();
        let t = text_of(&sketcher, "<p>One two three</p> four five", &mut scratch);
        assert_eq!((t.words, t.k, t.keys.len()), (5, 3, 3));
        let again = text_of(&sketcher, "one two three four", &mut scratch);
        assert_eq!(&again.keys[..2], &t.keys[..2]);
        let footer = "read more news every day on our site";
        let mut texts: Vec<Text> = (0..4)
            .map(|i| {
                let body = format!("story {i} alpha{i} beta{i} gamma{i} delta{i} {footer}");
                text_of(&sketcher, &body, &mut scratch)
            })
            .collect();
        assert!(mask_boilerplate(&mut texts, 3) >= 6);
        for t in &texts {
            // The footer's shingles (the last six) are masked, the story's are not.
            assert!(t.keys[t.keys.len() - 6..].iter().all(|&k| k == MASKED));
            assert!(t.keys[..3].iter().all(|&k| k != MASKED));
        }
        assert_eq!(mask_boilerplate(&mut texts, 0), 0);
    }

    #[test]
    fn a_text_made_mostly_of_boilerplate_is_kept_whole_however_often_its_other_keys_repeat() {
        let boilerplate = Boilerplate::from_keys(1..=10);
        // Ten distinct boilerplate shingles and one other, five times: the other is an
        // eleventh of the distinct shingles, so nothing is masked.
        let mut keys: Vec<u32> = (1..=10).collect();
        keys.extend([99; 5]);
        let mut text = Text {
            words: 20,
            k: 3,
            keys: keys.clone().into(),
        };
        mask(&mut text, &boilerplate, &mut MaskBuffers::default());
        assert_eq!(&text.keys[..], &keys[..]);
        // With three others, more than a fifth of the distinct shingles is left: the ten are masked.
        keys.extend([97, 98]);
        let mut text = Text {
            words: 20,
            k: 3,
            keys: keys.into(),
        };
        mask(&mut text, &boilerplate, &mut MaskBuffers::default());
        assert!(text.keys[..10].iter().all(|&k| k == MASKED));
        assert!(text.keys[10..].iter().all(|&k| k != MASKED));
    }

    proptest::proptest! {
        /// Masking a text where its keys stand masks what masking through its shingle set
        /// does, for texts of few or many distinct keys, little or mostly boilerplate (keys
        /// from a small range repeat, and a text of 1 to 3 values is nearly all repeats).
        #[test]
        fn masking_in_place_masks_as_masking_through_the_set(
            keys in proptest::collection::vec(0u32..3000, 0..400),
            range in 1u32..3000,
            boilerplate in proptest::collection::vec(0u32..3000, 0..600),
            masked in proptest::collection::vec(0usize..400, 0..5),
        ) {
            let mut keys: Vec<u32> = keys.iter().map(|k| k % range).collect();
            for i in masked {
                if i < keys.len() {
                    keys[i] = MASKED;
                }
            }
            let text = Text { words: keys.len() as u32 + 2, k: 3, keys: keys.into() };
            let boilerplate = Boilerplate::from_keys(boilerplate);
            let mut through_set = text.clone();
            let set = crate::reuse::align::shingle_set(&through_set);
            mask_with(&mut through_set, &set, &boilerplate);
            // Buffers left as another text's masking left them.
            let mut buffers = MaskBuffers::default();
            let mut before = Text {
                keys: text.keys.iter().rev().copied().chain([1, 2]).collect(),
                ..text.clone()
            };
            mask(&mut before, &boilerplate, &mut buffers);
            let mut in_place = text;
            mask(&mut in_place, &boilerplate, &mut buffers);
            proptest::prop_assert_eq!(in_place.keys, through_set.keys);
        }
    }
}
