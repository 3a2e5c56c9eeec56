//! Sketching, the per-document stage: raw text → canonical words → shingle keys
//! ([`shingle`]) → a signature of minima ([`signature`]) → candidate keys, supershingles or
//! megashingles ([`keys`], grouped as [`grouping`] chooses). A `Sketch` is what is kept of a
//! document once it is made, besides its shingle set where verification is exact (see
//! [`crate::corpus::set_store`]); the text itself is dropped. Words are hashed and windows
//! made as the text is read ([`crate::canonicalize::stream`]): a text of any length holds
//! nothing of its own besides its shingle keys.

pub mod grouping;
pub mod keys;
pub mod shingle;
pub mod signature;

use std::borrow::Cow;

use crate::canonicalize::stream::WordStream;
use crate::canonicalize::Canonicalizer;
use crate::config::{Plan, ScriptCount, ShingleConfig};
use crate::corpus::boilerplate::Boilerplate;
use crate::reuse::Text;
use crate::sketch::shingle::{into_set, key, merge_sorted, Lead, ShingleHasher};
use crate::sketch::signature::MinHasher;

/// What is kept of one document.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Sketch {
    /// Canonical words in the text.
    pub words: u32,
    /// Distinct shingles: zero when the text has fewer words than the shingle size.
    pub shingles: u32,
    /// The minima; all `u32::MAX` when there are no shingles.
    pub signature: Box<[u32]>,
    /// Its opening (boilerplate included: it is taken as the text is read).
    pub lead: Lead,
}

impl Sketch {
    /// A sketch with these minima and this many shingles (four more words, no lead), for
    /// tests of the stages that read sketches.
    #[cfg(test)]
    pub(crate) fn with_minima(signature: Vec<u32>, shingles: u32) -> Sketch {
        Sketch {
            words: shingles + 4,
            shingles,
            signature: signature.into(),
            lead: Lead::default(),
        }
    }

    /// True when the document has shingles and so can be compared.
    pub(crate) fn is_comparable(&self) -> bool {
        self.shingles > 0
    }
}

/// What reading a text tells of it besides its shingle sets: how many canonical words its main
/// text has and how it opens. A [`Sketch`] is made of it and the main set.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct TextOutline {
    /// Canonical words in the main text.
    pub words: u32,
    /// The main text's opening.
    pub lead: Lead,
}

impl Sketch {
    /// The sketch of a text of `outline` whose main set, boilerplate left out, is `set`.
    fn of(outline: TextOutline, set: &[u32], minhasher: &MinHasher) -> Sketch {
        Sketch {
            words: outline.words,
            shingles: set.len() as u32,
            signature: minhasher.signature(set).into(),
            lead: outline.lead,
        }
    }
}

/// A text's outline and its shingle sets (sorted, distinct keys).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShingleSets {
    /// Its word count and lead.
    pub(crate) outline: TextOutline,
    /// The distinct shingle keys of the main text, sorted.
    pub set: Vec<u32>,
    /// The shingle set of the whole page (furniture included) when it differs from `set`.
    pub page: Option<Vec<u32>>,
}

impl ShingleSets {
    /// The set that corpus statistics count: the whole page's.
    pub fn page_set(&self) -> &[u32] {
        self.page.as_deref().unwrap_or(&self.set)
    }
}

/// What [`Sketcher::append_shingles`] tells of one text: its outline, and how many keys of
/// each set it appended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AppendedSets {
    /// Its word count and lead.
    pub(crate) outline: TextOutline,
    /// Keys of its main set.
    pub set: u32,
    /// Keys of its page set: 0 when there is none.
    pub page: u32,
}

/// Reusable buffers for sketching many documents on one thread.
#[derive(Debug, Default)]
pub struct SketchBuffers {
    stream: WordStream,
    /// Hashes of the last words read, their windows not all made yet.
    words: Vec<u64>,
}

/// Word hashes gathered before their windows are hashed (and all but the last `k - 1` let go):
/// 32 KiB, however long the text. The shingle size is chosen from the first so many words.
const WORDS_HELD: usize = ScriptCount::ENOUGH;

/// Everything needed to sketch documents under one configuration.
#[derive(Debug)]
pub struct Sketcher {
    canonicalizer: Canonicalizer,
    hasher: ShingleHasher,
    minhasher: MinHasher,
    shingle: ShingleConfig,
}

impl Sketcher {
    /// A sketcher for `plan`.
    pub fn new(plan: &Plan) -> Sketcher {
        let config = plan.config();
        Sketcher {
            canonicalizer: Canonicalizer::new(&config.canonicalize),
            hasher: ShingleHasher::new(config.signature.seed),
            minhasher: MinHasher::new(config.signature.minima, config.signature.seed),
            shingle: config.shingle.clone(),
        }
    }

    /// The canonicalizer in use.
    pub fn canonicalizer(&self) -> &Canonicalizer {
        &self.canonicalizer
    }

    /// The shingle size `k` of texts of spaced scripts (`shingle.size`).
    pub fn shingle_size(&self) -> usize {
        self.shingle.size
    }

    /// The shingle size of a text whose canonical words are `words`: `shingle.size`, or the
    /// `shingle.script-size` of the script without spaces most of them are characters of.
    pub(crate) fn shingle_size_of<'a>(&self, words: impl IntoIterator<Item = &'a str>) -> usize {
        self.shingle.size_of(words)
    }

    /// The hash of one canonical word.
    pub(crate) fn word_hash(&self, word: &str) -> u64 {
        self.hasher.word(word)
    }

    /// The shingle window hashes, `k` words each, of a list of word hashes, in text order.
    pub fn windows(&self, word_hashes: &[u64], k: usize) -> Vec<u64> {
        self.hasher.windows(word_hashes, k)
    }

    /// The signature of a shingle set.
    pub fn signature(&self, shingles: &[u32]) -> Vec<u32> {
        self.minhasher.signature(shingles)
    }

    /// The canonical word count and shingle set of one text, and, when `with_page` is set, the
    /// shingle set of the whole page when main-text extraction dropped some of it.
    pub fn shingles(
        &self,
        text: &str,
        scratch: &mut SketchBuffers,
        with_page: bool,
    ) -> ShingleSets {
        self.shingles_and_sequence(text, scratch, with_page, None)
    }

    /// [`Sketcher::shingles`], and, when `sequence` is given, the main text as reuse keeps it
    /// made there (see [`Sketcher::append_shingles_and_sequence`]).
    pub(crate) fn shingles_and_sequence(
        &self,
        text: &str,
        scratch: &mut SketchBuffers,
        with_page: bool,
        sequence: Option<&mut Text>,
    ) -> ShingleSets {
        let mut set = Vec::new();
        let appended =
            self.append_shingles_and_sequence(text, scratch, with_page, &mut set, sequence);
        let page = (appended.page > 0).then(|| set.split_off(appended.set as usize));
        ShingleSets {
            outline: appended.outline,
            set,
            page,
        }
    }

    /// [`Sketcher::shingles`] appended to one list of many documents' sets: the main set, then
    /// the page set when there is one (`with_page`, and main-text extraction dropped some of the
    /// page). Returns the main text's word count and lead, and the two sets' lengths (0 for
    /// no page set).
    #[cfg(test)]
    pub(crate) fn append_shingles(
        &self,
        text: &str,
        scratch: &mut SketchBuffers,
        with_page: bool,
        keys: &mut Vec<u32>,
    ) -> AppendedSets {
        self.append_shingles_and_sequence(text, scratch, with_page, keys, None)
    }

    /// [`Sketcher::append_shingles`], and, when `sequence` is given, the main text as reuse
    /// keeps it made there: its words, shingle size and shingle keys in text order (repeats
    /// kept), copied as they are read before they become a set, so the [`Text`] is that of
    /// [`crate::reuse::texts::text_of`] without reading the text again.
    pub(crate) fn append_shingles_and_sequence(
        &self,
        text: &str,
        scratch: &mut SketchBuffers,
        with_page: bool,
        keys: &mut Vec<u32>,
        sequence: Option<&mut Text>,
    ) -> AppendedSets {
        let visible = self.canonicalizer.visible(text);
        let start = keys.len();
        let mut page_differs = false;
        let (words, k) = self.append_window_keys(
            |push| page_differs = visible.for_each_main_piece(with_page, push),
            scratch,
            keys,
            None,
        );
        if let Some(sequence) = sequence {
            *sequence = Text {
                words,
                k: k as u8,
                keys: keys[start..].into(),
            };
        }
        let (set, lead) = into_set(keys, start);
        let page = if page_differs {
            let page = visible.into_page();
            let start = keys.len();
            // The page is shingled as its main text is, so that their shingles compare.
            self.append_window_keys(|push| page.for_each_piece(push), scratch, keys, Some(k));
            into_set(keys, start).0
        } else {
            0
        };
        AppendedSets {
            outline: TextOutline { words, lead },
            set: set as u32,
            page: page as u32,
        }
    }

    /// Appends to `keys` the key of each shingle window of a text's main text in text order,
    /// repeats kept: window `p` covers words `p..p + k`. Returns the number of canonical words
    /// and the shingle size `k` chosen for the text.
    pub(crate) fn append_window_sequence(
        &self,
        text: &str,
        scratch: &mut SketchBuffers,
        keys: &mut Vec<u32>,
    ) -> (u32, usize) {
        let visible = self.canonicalizer.visible(text);
        self.append_window_keys(
            |push| {
                visible.for_each_main_piece(false, push);
            },
            scratch,
            keys,
            None,
        )
    }

    /// Appends to `keys` the key of each shingle window of the visible text whose pieces
    /// `for_each_piece` gives, in text order; returns the number of canonical words and the
    /// shingle size, `k` when given, else chosen from the text's first words
    /// ([`ScriptCount`]).
    fn append_window_keys(
        &self,
        for_each_piece: impl FnOnce(&mut dyn FnMut(&str)),
        scratch: &mut SketchBuffers,
        keys: &mut Vec<u32>,
        k: Option<usize>,
    ) -> (u32, usize) {
        let SketchBuffers { stream, words } = scratch;
        let mut k = k;
        let mut count = ScriptCount::default();
        words.clear();
        // Words whose windows are all made: let go.
        let mut done = 0;
        self.canonicalizer
            .for_each_word_of_pieces(for_each_piece, stream, |word| {
                words.push(self.hasher.word(word));
                if k.is_none() {
                    count.add(word);
                }
                if words.len() == WORDS_HELD {
                    let k = *k.get_or_insert_with(|| count.size(&self.shingle));
                    done += self.append_windows(words, keys, k);
                }
            });
        let k = k.unwrap_or_else(|| count.size(&self.shingle));
        let total = done + words.len();
        self.append_windows(words, keys, k);
        (total as u32, k)
    }

    /// Appends the keys of the windows of the word hashes `words` to `keys`, and lets go of
    /// every word but the last `k - 1`, which the windows to come begin with; returns how many
    /// it let go. Out of line, so that the loop over words stays small.
    #[inline(never)]
    fn append_windows(&self, words: &mut Vec<u64>, keys: &mut Vec<u32>, k: usize) -> usize {
        if words.len() < k {
            return 0;
        }
        keys.extend(words.windows(k).map(|w| key(self.hasher.window(w))));
        let done = words.len() + 1 - k;
        words.drain(..done);
        done
    }

    /// The sketch of a shingle set, boilerplate left out, and the set it was made of.
    pub(crate) fn sketch_shingles<'a>(
        &self,
        shingles: &'a ShingleSets,
        boilerplate: &Boilerplate,
    ) -> (Sketch, Cow<'a, [u32]>) {
        let set = boilerplate.filter(&shingles.set);
        let sketch = Sketch::of(shingles.outline.clone(), &set, &self.minhasher);
        (sketch, set)
    }

    /// [`Sketcher::sketch_shingles`] writing the set to lists: the sketch of a text of
    /// `outline` is made of the keys of the main set `main` that are appended to `kept`, and
    /// the boilerplate left out goes to `rest`, both sorted.
    pub(crate) fn sketch_set(
        &self,
        outline: TextOutline,
        main: &[u32],
        boilerplate: &Boilerplate,
        kept: &mut Vec<u32>,
        rest: &mut Vec<u32>,
    ) -> Sketch {
        let start = kept.len();
        boilerplate.split(main, kept, rest, 0);
        Sketch::of(outline, &kept[start..], &self.minhasher)
    }

    /// Sketches a document of [`Sketcher::sketch_set`] again once more boilerplate is found:
    /// its set is `set`, and `left_out` keys of its main set were left out of it then, all
    /// still boilerplate. `rest` holds them; it may be empty when the new boilerplate cannot
    /// leave less than a fifth of the main set. When the set left keys out it holds no earlier
    /// boilerplate, and `boilerplate` may be only the shingles found since. The new set is
    /// appended to `out`, and the sketch becomes the one `sketch_set` makes of the whole main
    /// set. Its signature is mended rather than made anew: only the minima that a key taken
    /// out attained are found again, and a set kept whole lowers its minima by the keys put
    /// back.
    pub(crate) fn resketch(
        &self,
        sketch: &mut Sketch,
        set: &[u32],
        rest: &[u32],
        left_out: usize,
        boilerplate: &Boilerplate,
        out: &mut Vec<u32>,
    ) {
        let start = out.len();
        let mut removed = Vec::new();
        if boilerplate.split(set, out, &mut removed, left_out) {
            self.minhasher
                .remove(&mut sketch.signature, &out[start..], &removed);
        } else {
            assert_eq!(
                rest.len(),
                left_out,
                "keeping a main set whole needs its keys"
            );
            out.truncate(start);
            let mut whole = set.to_vec();
            merge_sorted(&mut whole, rest);
            self.minhasher.lower(&mut sketch.signature, rest);
            removed.clear();
            boilerplate.keep_whole(&whole, out, &mut removed);
            if !removed.is_empty() {
                self.minhasher
                    .remove(&mut sketch.signature, &out[start..], &removed);
            }
        }
        sketch.shingles = (out.len() - start) as u32;
    }

    /// Sketches a document of [`Sketcher::sketch_set`] again from its whole main set: its set
    /// `set` and the keys `rest` left out of it (some no longer boilerplate). The new set is
    /// appended to `out`, and the sketch becomes the one `sketch_set` makes of the main set.
    pub(crate) fn resketch_whole(
        &self,
        sketch: &mut Sketch,
        set: &[u32],
        rest: &[u32],
        boilerplate: &Boilerplate,
        out: &mut Vec<u32>,
    ) {
        let mut main = set.to_vec();
        merge_sorted(&mut main, rest);
        self.minhasher.lower(&mut sketch.signature, rest);
        self.resketch(sketch, &main, &[], 0, boilerplate, out);
    }

    /// The sketch of one text, every shingle counted.
    pub fn sketch(&self, text: &str, scratch: &mut SketchBuffers) -> Sketch {
        self.sketch_shingles(&self.shingles(text, scratch, false), &Boilerplate::none())
            .0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    fn five_word_shingles() -> Config {
        let mut config = Config::default();
        config.shingle.size = 5;
        config
    }

    #[test]
    fn golden_signature_is_stable() {
        let sketcher = Sketcher::new(&Plan::try_from(&five_word_shingles()).unwrap());
        let sketch = sketcher.sketch(
            "The quick brown fox jumps over the lazy dog near the river bank",
            &mut SketchBuffers::default(),
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
    fn sketches_written_to_lists_match_and_resketch_as_if_anew() {
        let full: Vec<u32> = (0..50).map(|i| i * 7).collect();
        let lead = crate::sketch::shingle::Lead::of(&full[..40]);
        let outline = TextOutline {
            words: 60,
            lead: lead.clone(),
        };
        let shingles = ShingleSets {
            outline: outline.clone(),
            set: full.clone(),
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
            let sketcher = Sketcher::new(&Plan::try_from(&Config::default()).unwrap());
            let (mut set, mut rest) = (Vec::new(), Vec::new());
            let mut sketch =
                sketcher.sketch_set(outline.clone(), &full, &before, &mut set, &mut rest);
            let (expected, expected_set) = sketcher.sketch_shingles(&shingles, &before);
            assert_eq!((&sketch, set.as_slice()), (&expected, &*expected_set));
            assert_eq!(rest, [7, 14]);
            let mut out = vec![1, 2];
            sketcher.resketch(&mut sketch, &set, &rest, rest.len(), &after, &mut out);
            let (expected, expected_set) = sketcher.sketch_shingles(&shingles, &after);
            assert_eq!((&sketch, &out[2..]), (&expected, &*expected_set));
        }
    }

    const GOLDEN_FIRST_MINIMA: [u32; 4] = [399_862_802, 38_407_763, 146_753_811, 160_307_515];

    #[test]
    fn shingles_appended_to_a_list_are_those_made_alone() {
        let mut config = Config::default();
        config.canonicalize.main_text = true;
        let sketcher = Sketcher::new(&Plan::try_from(&config).unwrap());
        let page = "<html><body><nav><a href=/>Home</a> <a href=/w>World</a> <a href=/s>Sport</a>\
            </nav><article><p>The council approved the new budget for the city library on \
            Monday evening after a long debate.</p></article></body></html>";
        let mut scratch = SketchBuffers::default();
        let mut keys = vec![1];
        for (text, with_page) in [
            (page, true),
            (page, false),
            ("a few plain words here", true),
        ] {
            let alone = sketcher.shingles(text, &mut scratch, with_page);
            let start = keys.len();
            let appended = sketcher.append_shingles(text, &mut scratch, with_page, &mut keys);
            let (set, page_set) = (appended.set, appended.page);
            let (main, rest) = keys[start..].split_at(set as usize);
            assert_eq!(
                (&appended.outline, main),
                (&alone.outline, alone.set.as_slice())
            );
            assert!(!alone.outline.lead.keys().is_empty());
            assert_eq!(alone.outline.lead.share_in(main), Some(1.0));
            assert_eq!(rest, alone.page.as_deref().unwrap_or_default());
            assert_eq!(page_set as usize, rest.len());
            // The navigation is dropped from the main text, so the page has a set of its own.
            assert_eq!(page_set > 0, with_page && text == page, "{text}");
        }
        assert!(keys.len() > 1);
    }

    /// The shingles of a text as made before words were streamed: the visible texts held
    /// whole, normalized whole, and every word hash listed.
    fn shingles_whole(sketcher: &Sketcher, text: &str, with_page: bool) -> ShingleSets {
        let (main, page) = sketcher.canonicalizer().texts(text, with_page);
        let k = sketcher.shingle_size_of(crate::canonicalize::tokens::words(
            &crate::canonicalize::unicode::normalize(&main),
        ));
        let set_of = |visible: &str| {
            let normalized = crate::canonicalize::unicode::normalize(visible);
            let hashes: Vec<u64> = crate::canonicalize::tokens::words(&normalized)
                .into_iter()
                .map(|w| sketcher.word_hash(w))
                .collect();
            let mut set = Vec::new();
            let (_, lead) = sketcher.hasher.append_set_and_lead(&hashes, k, &mut set);
            (hashes.len() as u32, set, lead)
        };
        let (words, set, lead) = set_of(&main);
        ShingleSets {
            outline: TextOutline { words, lead },
            set,
            page: page.map(|page| set_of(&page).1),
        }
    }

    /// Pieces of texts of every kind: words in two scripts, combining marks, entities, HTML
    /// blocks and furniture, mail headers, quotes, signatures and line ends.
    fn any_piece() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        prop_oneof![
            3 => "[a-zA-Zа-яЁё0-9 ,.]{1,20}",
            1 => proptest::sample::select(vec![
                "\n", "\r\n", "\n\n", " ", "&amp;", "&nbsp;", "&#1025;", "е\u{308}", "\u{AD}",
                "<p>", "</p>", "<b>", "</b>", "<nav><a href=/>Home</a> <a href=/w>World</a></nav>",
                "<article>", "</article>", "<script>x()</script>", "<div class=share>Share</div>",
                "\n-- \nSig\n", "\n> quoted", "\nOn Monday, Ann wrote:\n", "\n_____\nFooter\n",
                "From: a@b.c\nSubject: hi\n\n", "ＡＢＣ", "ﬁ", "\u{A0}",
            ])
            .prop_map(str::to_owned),
        ]
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]
        #[test]
        fn streamed_shingles_are_those_of_the_whole_text(
            pieces in proptest::collection::vec(any_piece(), 0..60),
            repeat in proptest::sample::select(vec![1usize, 2, 3, 1500]),
            config_at in 0usize..4,
        ) {
            // Repeated 1500 times, a text runs over many chunks and many more lines than the
            // cleaner holds.
            let text = pieces.concat().repeat(repeat);
            let mut config = Config::default();
            config.shingle.size = 3;
            match config_at {
                0 => {}
                1 => config.canonicalize.main_text = false,
                2 => config.canonicalize.html = crate::config::HtmlMode::Never,
                _ => config.canonicalize.html = crate::config::HtmlMode::Always,
            }
            let sketcher = Sketcher::new(&Plan::try_from(&config).unwrap());
            let mut scratch = SketchBuffers::default();
            for with_page in [false, true] {
                let streamed = sketcher.shingles(&text, &mut scratch, with_page);
                let whole = shingles_whole(&sketcher, &text, with_page);
                proptest::prop_assert_eq!(
                    (&streamed.outline, &streamed.set),
                    (&whole.outline, &whole.set)
                );
                proptest::prop_assert_eq!(streamed.page_set(), whole.page_set());
                // A page set is made only where it was made before.
                proptest::prop_assert!(streamed.page.is_none() || whole.page.is_some());
            }
        }
    }

    #[test]
    fn short_texts_have_no_shingles() {
        let sketcher = Sketcher::new(&Plan::try_from(&five_word_shingles()).unwrap());
        let sketch = sketcher.sketch("only four words here", &mut SketchBuffers::default());
        assert_eq!(sketch.words, 4);
        assert!(!sketch.is_comparable());
        assert!(sketch.signature.iter().all(|&m| m == u32::MAX));
    }

    #[test]
    fn markup_and_case_do_not_change_the_sketch() {
        let sketcher = Sketcher::new(&Plan::try_from(&Config::default()).unwrap());
        let mut scratch = SketchBuffers::default();
        let a = sketcher.sketch("Один два три четыре пять шесть", &mut scratch);
        let b = sketcher.sketch(
            "<p>ОДИН&nbsp;два</p><p>три четыре пять шесть</p>",
            &mut scratch,
        );
        assert_eq!(a, b);
    }
}
