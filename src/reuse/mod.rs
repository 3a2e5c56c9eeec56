//! Text reuse: which documents share a passage, and how much. Each document is kept as the
//! keys of its shingles in text order (4 bytes a word), boilerplate masked (`texts`).
//! Candidates are pairs that share two winnowed fingerprints (`winnow`, `candidates`):
//! any shared run of `2 * window + k - 1` words makes one. Each candidate pair is then aligned exactly
//! (`align`): the shared words of each text, grouped into passages across the small gaps
//! that revision leaves. A pair is reuse when the passages hold at least `min-shared-words`
//! words in both texts and at least `min-containment` of one text.

pub(crate) mod align;
pub mod candidates;
pub mod texts;
pub(crate) mod winnow;

use rayon::prelude::*;

use crate::config::Config;
use align::{align_prepared, shingle_set, AlignScratch, Figures, PassageRules, Prepared};
use candidates::FingerprintIndex;

/// The key that stands for a boilerplate shingle in a [`Text`]: never shared. (A shingle
/// whose key is this value is taken for boilerplate too.)
pub(crate) const MASKED: u32 = u32::MAX;

/// Fingerprints two texts share at the fewest to be aligned: any shared run of
/// `2 * window + k - 1` words (10 at the defaults), or two runs of `window + k - 1`, holds
/// two. A passage of `min-shared-words` that a revision left with a single run of six words is
/// missed; a pair that shares one common phrase is not aligned.
pub(crate) const MIN_SHARED_FINGERPRINTS: usize = 2;

/// What is kept of one document: its canonical words' count and its shingles in text order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Text {
    /// Canonical words of its main text.
    pub words: u32,
    /// Its shingle size.
    pub k: u8,
    /// The key of the shingle starting at each word, `MASKED` for boilerplate.
    pub keys: Box<[u32]>,
}

/// What decides a pair, from the `[reuse]` keys and `cluster.max-bucket`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// Shingles per winnowing window.
    pub window: usize,
    /// How shared words make passages.
    pub rules: PassageRules,
    /// Shared words, in both texts, of a reuse pair at the fewest.
    pub min_shared_words: u32,
    /// Share of one text in the passages of a reuse pair at the least.
    pub min_containment: f64,
    /// Documents in a fingerprint's bucket at the most.
    pub max_bucket: usize,
}

impl Settings {
    /// The settings of `config`.
    pub fn of(config: &Config) -> Settings {
        let r = &config.reuse;
        Settings {
            window: r.window,
            rules: PassageRules {
                max_gap: r.max_gap,
                min_words: r.min_passage_words,
            },
            min_shared_words: r.min_shared_words as u32,
            min_containment: r.min_containment,
            max_bucket: config.cluster.max_bucket,
        }
    }
}

/// One pair found: documents `a < b` by number, and their figures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pair {
    /// The first document.
    pub a: u32,
    /// The second document.
    pub b: u32,
    /// What they share.
    pub figures: Figures,
}

/// Counts from a search.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReuseStats {
    /// Candidate pairs aligned.
    pub candidates: u64,
    /// Fingerprints held by more than `max_bucket` documents, which paired no one.
    pub cut_buckets: usize,
    /// Documents in those buckets.
    pub(crate) cut_documents: usize,
    /// Bytes of the fingerprint index.
    pub(crate) index_bytes: usize,
}

/// The share of a text of `words` words that `shared` words are.
pub fn share(shared: u32, words: u32) -> f64 {
    if words == 0 {
        0.0
    } else {
        f64::from(shared) / f64::from(words)
    }
}

/// Whether figures of texts of `a_words` and `b_words` words make a reuse pair.
pub(crate) fn is_reuse(figures: &Figures, a_words: u32, b_words: u32, settings: &Settings) -> bool {
    let shared = figures.a.shared.min(figures.b.shared);
    let contained = share(figures.a.shared, a_words).max(share(figures.b.shared, b_words));
    shared >= settings.min_shared_words && shared > 0 && contained >= settings.min_containment
}

/// Every reuse pair among `texts`, in document order, with counts.
pub(crate) fn find_pairs(texts: &[Text], settings: &Settings) -> (Vec<Pair>, ReuseStats) {
    find_pairs_where(texts, settings, |f, a, b| is_reuse(f, a, b, settings))
}

/// [`find_pairs`] with the pairs kept by `keep` (figures and the two texts' word counts).
pub(crate) fn find_pairs_where(
    texts: &[Text],
    settings: &Settings,
    keep: impl Fn(&Figures, u32, u32) -> bool + Sync,
) -> (Vec<Pair>, ReuseStats) {
    let fingerprints_of = |d: usize| winnow::fingerprints(&texts[d].keys, settings.window);
    let index = FingerprintIndex::new(texts.len(), fingerprints_of, settings.max_bucket);
    let (cut_buckets, cut_documents) = index.cut_buckets();
    let distinct: Vec<usize> = texts.par_iter().map(|t| shingle_set(t).len()).collect();
    let found: Vec<(u64, Vec<Pair>)> = (0..texts.len())
        .into_par_iter()
        .map_init(AlignScratch::default, |scratch, a| {
            let partners = index.partners(a as u32, &fingerprints_of(a), MIN_SHARED_FINGERPRINTS);
            if partners.is_empty() {
                return (0, Vec::new());
            }
            let ta = Prepared::new(&texts[a]);
            let a_words = texts[a].words;
            let pairs = partners
                .iter()
                .filter_map(|&b| {
                    let tb = &texts[b as usize];
                    let figures =
                        align_prepared(&ta, tb, distinct[b as usize], settings.rules, scratch);
                    keep(&figures, a_words, tb.words).then_some(Pair {
                        a: a as u32,
                        b,
                        figures,
                    })
                })
                .collect();
            (partners.len() as u64, pairs)
        })
        .collect();
    let mut stats = ReuseStats {
        cut_buckets,
        cut_documents,
        index_bytes: index.bytes(),
        ..ReuseStats::default()
    };
    let mut pairs = Vec::new();
    for (candidates, found) in found {
        stats.candidates += candidates;
        pairs.extend(found);
    }
    (pairs, stats)
}
