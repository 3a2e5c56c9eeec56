//! Documents as reuse keeps them: a [`Text`] is made of a document's main text as `cluster`
//! reads it (the same canonical words and shingle size), its shingle keys kept in text order.
//! Boilerplate is found as `cluster` finds it by document frequency
//! ([`crate::corpus::boilerplate`]: a shingle in `boilerplate.min-documents` documents or
//! more, unless that would leave a document less than a fifth of its shingles) and masked, so
//! a site's shared footer or a notice is no passage.

use rayon::prelude::*;

use super::{Text, MASKED};
use crate::corpus::boilerplate::{document_counts, Boilerplate};
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
}
