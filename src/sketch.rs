//! The per-document stage: raw text → canonical words → shingle hashes → signature. A `Sketch`
//! is all that is kept of a document once it is made; the text itself is dropped.

use crate::boilerplate::Boilerplate;
use crate::canonicalize::Canonicalizer;
use crate::config::{Config, Verify};
use crate::shingle::{merge_disjoint, shingle_set, ShingleHasher};
use crate::signature::MinHasher;

/// What is kept of one document.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Sketch {
    /// Canonical words in the text.
    pub words: u32,
    /// Distinct shingles: zero when the text has fewer words than the shingle size.
    pub shingles: u32,
    /// The minima; all `u32::MAX` when there are no shingles.
    pub signature: Vec<u32>,
    /// The shingle keys the signature was made of, boilerplate left out, when verification
    /// is exact.
    pub set: Option<Vec<u32>>,
}

impl Sketch {
    /// True when the document has shingles and so can be compared.
    pub fn is_comparable(&self) -> bool {
        self.shingles > 0
    }
}

/// A document's canonical word count and its shingle set (sorted, distinct hashes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shingles {
    /// Canonical words in the text.
    pub words: u32,
    /// The distinct shingle keys, sorted.
    pub set: Vec<u32>,
    /// The shingle set of the whole page (furniture included) when it differs from `set`.
    pub page: Option<Vec<u32>>,
}

impl Shingles {
    /// The set that corpus statistics count: the whole page's.
    pub fn page_set(&self) -> &[u32] {
        self.page.as_deref().unwrap_or(&self.set)
    }
}

/// Reusable buffers for sketching many documents on one thread.
#[derive(Debug, Default)]
pub struct Scratch {
    text: String,
    words: Vec<u64>,
}

/// Everything needed to sketch documents under one configuration.
#[derive(Debug)]
pub struct Sketcher {
    canonicalizer: Canonicalizer,
    hasher: ShingleHasher,
    minhasher: MinHasher,
    shingle_size: usize,
    keep_sets: bool,
}

impl Sketcher {
    /// A sketcher for `config`.
    pub fn new(config: &Config) -> Sketcher {
        Sketcher {
            canonicalizer: Canonicalizer::new(&config.canonicalize),
            hasher: ShingleHasher::new(config.signature.seed),
            minhasher: MinHasher::new(config.signature.minima, config.signature.seed),
            shingle_size: config.shingle.size,
            keep_sets: config.cluster.verify == Verify::Exact,
        }
    }

    /// The canonicalizer in use.
    pub fn canonicalizer(&self) -> &Canonicalizer {
        &self.canonicalizer
    }

    /// The shingle size `k`.
    pub fn shingle_size(&self) -> usize {
        self.shingle_size
    }

    /// The hash of one canonical word.
    pub fn word_hash(&self, word: &str) -> u64 {
        self.hasher.word(word)
    }

    /// The shingle window hashes of a list of word hashes, in text order.
    pub fn windows(&self, word_hashes: &[u64]) -> Vec<u64> {
        self.hasher.windows(word_hashes, self.shingle_size)
    }

    /// The signature of a shingle set.
    pub fn signature(&self, shingles: &[u32]) -> Vec<u32> {
        self.minhasher.signature(shingles)
    }

    /// The canonical word count and shingle set of one text, and, when `with_page` is set, the
    /// shingle set of the whole page when main-text extraction dropped some of it.
    pub fn shingles(&self, text: &str, scratch: &mut Scratch, with_page: bool) -> Shingles {
        let (main, page) = self.canonicalizer.texts(text, with_page);
        let words = self.word_hashes(&main, scratch);
        let set = shingle_set(&self.windows(&scratch.words));
        let page = page.map(|page| {
            self.word_hashes(&page, scratch);
            shingle_set(&self.windows(&scratch.words))
        });
        Shingles { words, set, page }
    }

    /// Hashes the words of a visible text into `scratch.words`; returns their number.
    fn word_hashes(&self, visible: &str, scratch: &mut Scratch) -> u32 {
        let Scratch {
            text: buffer,
            words,
        } = scratch;
        words.clear();
        self.canonicalizer
            .for_each_word_of_visible(visible, buffer, |w| words.push(self.hasher.word(w)));
        words.len() as u32
    }

    /// The sketch of a shingle set, boilerplate left out.
    pub fn sketch_shingles(&self, shingles: &Shingles, boilerplate: &Boilerplate) -> Sketch {
        let set = boilerplate.filter(&shingles.set);
        Sketch {
            words: shingles.words,
            shingles: set.len() as u32,
            signature: self.minhasher.signature(&set),
            set: self.keep_sets.then(|| set.into_owned()),
        }
    }

    /// [`Sketcher::sketch_shingles`] taking the shingle sets, so that no shingle key is held
    /// twice: the sketch keeps the main set itself, boilerplate taken out in place. The keys of
    /// the main set that the sketch's `set` does not hold (the boilerplate left out; every key
    /// when verification is estimated and sketches keep no set) are appended to `rest`, sorted.
    pub fn sketch_owned(
        &self,
        shingles: Shingles,
        boilerplate: &Boilerplate,
        rest: &mut Vec<u32>,
    ) -> Sketch {
        let Shingles { words, mut set, .. } = shingles;
        if !self.keep_sets {
            let filtered = boilerplate.filter(&set);
            let sketch = Sketch {
                words,
                shingles: filtered.len() as u32,
                signature: self.minhasher.signature(&filtered),
                set: None,
            };
            rest.extend_from_slice(&set);
            return sketch;
        }
        boilerplate.split_off(&mut set, rest, 0);
        Sketch {
            words,
            shingles: set.len() as u32,
            signature: self.minhasher.signature(&set),
            set: Some(set),
        }
    }

    /// Sketches a document of [`Sketcher::sketch_owned`] again once more boilerplate is found:
    /// `left_out` keys of its main set were left out of its set then, all still boilerplate.
    /// `rest` holds them; it may be empty when the new boilerplate cannot leave less than a
    /// fifth of the main set. When the set left keys out it holds no earlier boilerplate, and
    /// `boilerplate` may be only the shingles found since. The sketch becomes the one
    /// `sketch_owned` makes of the whole main set; its set only shrinks, in place, unless it is
    /// to be kept whole. Its signature is
    /// mended rather than made anew: only the minima that a key taken out attained are found
    /// again, and a set kept whole lowers its minima by the keys put back. Without a set,
    /// `rest` is the whole main set.
    pub fn resketch(
        &self,
        sketch: &mut Sketch,
        rest: &[u32],
        left_out: usize,
        boilerplate: &Boilerplate,
    ) {
        let Some(mut set) = sketch.set.take() else {
            let shingles = Shingles {
                words: sketch.words,
                set: rest.to_vec(),
                page: None,
            };
            *sketch = self.sketch_owned(shingles, boilerplate, &mut Vec::new());
            return;
        };
        let mut removed = Vec::new();
        if boilerplate.split_off(&mut set, &mut removed, left_out) {
            self.minhasher.remove(&mut sketch.signature, &set, &removed);
        } else {
            assert_eq!(
                rest.len(),
                left_out,
                "keeping a main set whole needs its keys"
            );
            merge_disjoint(&mut set, rest);
            self.minhasher.lower(&mut sketch.signature, rest);
        }
        sketch.shingles = set.len() as u32;
        sketch.set = Some(set);
    }

    /// The sketch of one text, every shingle counted.
    pub fn sketch(&self, text: &str, scratch: &mut Scratch) -> Sketch {
        self.sketch_shingles(&self.shingles(text, scratch, false), &Boilerplate::none())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn five_word_shingles() -> Config {
        let mut config = Config::default();
        config.shingle.size = 5;
        config
    }

    #[test]
    fn golden_signature_is_stable() {
        let sketcher = Sketcher::new(&five_word_shingles());
        let sketch = sketcher.sketch(
            "The quick brown fox jumps over the lazy dog near the river bank",
            &mut Scratch::default(),
        );
        assert_eq!(sketch.words, 13);
        assert_eq!(sketch.shingles, 9);
        assert_eq!(sketch.signature.len(), 84);
        assert_eq!(
            &sketch.signature[..4],
            &GOLDEN_FIRST_MINIMA,
            "the signature of a fixed text changed: sketches made before are no longer comparable"
        );
    }

    #[test]
    fn sketches_that_take_the_sets_match_and_resketch_as_if_anew() {
        let full: Vec<u32> = (0..50).map(|i| i * 7).collect();
        let shingles = |set: &[u32]| Shingles {
            words: 60,
            set: set.to_vec(),
            page: None,
        };
        let common = |mut keys: Vec<u32>| {
            keys.sort_unstable();
            Boilerplate::from_sets(&[&keys], 1)
        };
        let before = common(vec![7, 14, 1000]);
        // Little added: the set shrinks; much added: less than a fifth is left, all is kept.
        for added in [vec![21, 28], (0..45).map(|i| i * 7).collect()] {
            let after = common([7, 14, 1000].into_iter().chain(added).collect());
            for verify in [Verify::Exact, Verify::Estimate] {
                let mut config = Config::default();
                config.cluster.verify = verify;
                let sketcher = Sketcher::new(&config);
                let mut rest = Vec::new();
                let mut sketch = sketcher.sketch_owned(shingles(&full), &before, &mut rest);
                assert_eq!(sketch, sketcher.sketch_shingles(&shingles(&full), &before));
                sketcher.resketch(&mut sketch, &rest, rest.len(), &after);
                assert_eq!(sketch, sketcher.sketch_shingles(&shingles(&full), &after));
            }
        }
    }

    const GOLDEN_FIRST_MINIMA: [u32; 4] = [399_862_802, 38_407_763, 146_753_811, 160_307_515];

    #[test]
    fn short_texts_have_no_shingles() {
        let sketcher = Sketcher::new(&five_word_shingles());
        let sketch = sketcher.sketch("only four words here", &mut Scratch::default());
        assert_eq!(sketch.words, 4);
        assert!(!sketch.is_comparable());
        assert!(sketch.signature.iter().all(|&m| m == u32::MAX));
    }

    #[test]
    fn markup_and_case_do_not_change_the_sketch() {
        let sketcher = Sketcher::new(&Config::default());
        let mut scratch = Scratch::default();
        let a = sketcher.sketch("Один два три четыре пять шесть", &mut scratch);
        let b = sketcher.sketch(
            "<p>ОДИН&nbsp;два</p><p>три четыре пять шесть</p>",
            &mut scratch,
        );
        assert_eq!(a, b);
    }
}
