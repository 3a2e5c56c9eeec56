//! Verification of a candidate pair: its Jaccard similarity or containment, exact from the
//! two shingle sets where the store holds them, else estimated from the minima less a margin;
//! a pair whose estimate is far below every threshold is rejected before any set is read. Also
//! the lead check of weak links (`open_alike`) and the buffers that hold sets read from file.

use crate::cluster::intersection::intersection_size;
use crate::config::Config;
use crate::corpus::set_store::SetsView;
use crate::sketch::signature::estimate_jaccard;
use crate::sketch::Sketch;

/// The pair checks of a configuration.
#[derive(Debug, Clone, Copy)]
pub struct Verifier {
    /// Least Jaccard.
    pub min_similarity: f64,
    /// Least containment.
    pub min_containment: f64,
    /// Below this estimated Jaccard a pair is not worth an exact check: half the lowest
    /// threshold, two standard errors and more below it for 84 minima.
    pub prefilter: f64,
    /// Standard errors taken off a similarity that is only estimated.
    pub(crate) estimate_margin: f64,
}

/// Fewest shingles a text needs for its containment in another to count.
pub(crate) const MIN_CONTAINED_SHINGLES: u32 = 25;

impl Verifier {
    /// The checks of `config`.
    pub fn new(config: &Config) -> Verifier {
        Verifier {
            min_similarity: config.cluster.min_similarity,
            min_containment: config.cluster.min_containment,
            prefilter: config.cluster.weakest_link() / 2.0,
            estimate_margin: config.cluster.estimate_margin,
        }
    }

    /// The same checks at half the thresholds.
    pub(crate) fn relaxed(&self) -> Verifier {
        Verifier {
            min_similarity: self.min_similarity / 2.0,
            min_containment: self.min_containment / 2.0,
            prefilter: self.prefilter / 2.0,
            estimate_margin: self.estimate_margin,
        }
    }

    /// The pair's Jaccard similarity: exact when `sets` gives both shingle sets (it is asked
    /// only when the estimate passes the prefilter), else estimated from the minima less
    /// `estimate_margin` standard errors; `None` when the estimate is below the prefilter.
    pub fn jaccard<'s>(
        &self,
        a: &Sketch,
        b: &Sketch,
        sets: impl FnOnce() -> PairSets<'s>,
    ) -> Option<f64> {
        let estimate = estimate_jaccard(&a.signature, &b.signature);
        if estimate < self.prefilter {
            return None;
        }
        Some(match sets() {
            Some((x, y)) => exact_jaccard(x, y),
            None => self.less_margin(estimate, a.signature.len()),
        })
    }

    /// An `estimate` from `minima` minima less `estimate_margin` standard errors.
    fn less_margin(&self, estimate: f64, minima: usize) -> f64 {
        let error = (estimate * (1.0 - estimate) / minima as f64).sqrt();
        (estimate - self.estimate_margin * error).max(0.0)
    }

    /// Whether a pair verified from its minima alone (one of its documents has no shingle
    /// set, as an indexed document has none), `estimate` being its share of equal minima,
    /// can link its documents in a join: it passes, or it is a weak link (its Jaccard at
    /// least `attach`, when `attach` is above zero; the openings of such a pair are not
    /// compared).
    pub(crate) fn may_link_estimated(
        &self,
        estimate: f64,
        a: &Sketch,
        b: &Sketch,
        attach: f64,
    ) -> bool {
        if estimate < self.prefilter {
            return false;
        }
        let jaccard = self.less_margin(estimate, a.signature.len());
        self.score_with(jaccard, a, b).is_some() || (attach > 0.0 && jaccard >= attach)
    }

    /// The pair's score when it passes: its Jaccard, or its containment.
    pub fn score<'s>(
        &self,
        a: &Sketch,
        b: &Sketch,
        sets: impl FnOnce() -> PairSets<'s>,
    ) -> Option<f64> {
        self.score_with(self.jaccard(a, b, sets)?, a, b)
    }

    /// [`Verifier::score`] with the pair's Jaccard already known.
    pub(crate) fn score_with(&self, jaccard: f64, a: &Sketch, b: &Sketch) -> Option<f64> {
        if jaccard >= self.min_similarity {
            return Some(jaccard);
        }
        let smaller = a.shingles.min(b.shingles);
        if smaller < MIN_CONTAINED_SHINGLES {
            return None;
        }
        let containment = estimate_containment(jaccard, a.shingles, b.shingles);
        (containment >= self.min_containment).then_some(containment)
    }
}

/// Whether two texts open alike: at least `min_share` of the lead of one is found in the
/// other's shingle set. Where that cannot be told (no sets: an estimated pair; no lead: a
/// document read from an index) it counts as yes, and so it does with `min_share` 0 (the
/// check off).
pub(crate) fn open_alike(a: &Sketch, b: &Sketch, sets: PairSets, min_share: f64) -> bool {
    let Some((x, y)) = sets.filter(|_| min_share > 0.0) else {
        return true;
    };
    match (a.lead.content_share_in(x, y), b.lead.content_share_in(y, x)) {
        (Some(s), Some(t)) => s.max(t) >= min_share,
        _ => true,
    }
}

/// [`open_alike`] of a pair one of whose documents was read from an index (`indexed`: no set,
/// and its lead is the low 16 bits of the keys of its lead in its own set, as the index keeps
/// it) while the other (`fresh`) has its set: the share of the indexed lead found in the fresh
/// set, or else the share of the fresh lead's content found in the indexed lead (never more
/// than its share in the indexed document's whole set, so the check is at most stricter than
/// `cluster`'s), keys compared by their low 16 bits. Yes when the index kept no lead of the
/// document.
pub(crate) fn opens_like_indexed(
    indexed: &Sketch,
    fresh: &Sketch,
    fresh_set: &[u32],
    min_share: f64,
) -> bool {
    let opening = indexed.lead.keys();
    if min_share <= 0.0 || opening.is_empty() {
        return true;
    }
    // The index keeps a lead as its distinct 16-bit keys, sorted (at most 32 of them), so
    // one pass over the fresh set marks those found in it by their places.
    debug_assert!(opening.windows(2).all(|w| w[0] < w[1]) && opening.last() <= Some(&0xffff));
    let place_of = |key: u32| opening.binary_search(&u32::from(key as u16)).ok();
    let mut found = 0u64;
    for &key in fresh_set {
        if let Some(place) = place_of(key) {
            found |= 1 << place;
        }
    }
    if f64::from(found.count_ones()) / opening.len() as f64 >= min_share {
        return true;
    }
    let content = fresh.lead.content_in(fresh_set);
    let found = content.iter().filter(|&&k| place_of(k).is_some()).count();
    !content.is_empty() && found as f64 / content.len() as f64 >= min_share
}

/// The shingle sets of a pair, when verification can compare them exactly.
pub(crate) type PairSets<'s> = Option<(&'s [u32], &'s [u32])>;

/// The exact Jaccard similarity of two sorted sets.
pub(crate) fn exact_jaccard(a: &[u32], b: &[u32]) -> f64 {
    let common = intersection_size(a, b);
    let union = a.len() + b.len() - common;
    if union == 0 {
        0.0
    } else {
        common as f64 / union as f64
    }
}

/// The share of the smaller set inside the larger, from their Jaccard and sizes:
/// `|A∩B| = J(|A|+|B|)/(1+J)`.
pub(crate) fn estimate_containment(jaccard: f64, a: u32, b: u32) -> f64 {
    let smaller = a.min(b);
    if smaller == 0 {
        return 0.0;
    }
    let common = jaccard * f64::from(a + b) / (1.0 + jaccard);
    (common / f64::from(smaller)).min(1.0)
}

/// Room for the shingle sets of a pair read from a store's file. Pairs come sorted, so the
/// first document of a pair is often the one before's: a set still held is not read again.
#[derive(Debug, Default)]
pub(super) struct Buffers {
    first: HeldSet,
    second: HeldSet,
}

/// A set read from file, and whose it is.
#[derive(Debug, Default)]
pub(super) struct HeldSet {
    doc: Option<u32>,
    keys: Vec<u32>,
}

impl HeldSet {
    /// The set of `doc`, when it has one: from memory, from this buffer, or read into it.
    fn get<'s>(&'s mut self, sets: SetsView<'s>, doc: u32) -> Option<&'s [u32]> {
        if !sets.on_file() {
            return sets.get(doc, &mut self.keys);
        }
        if self.doc != Some(doc) {
            self.doc = None;
            sets.get(doc, &mut self.keys)?;
            self.doc = Some(doc);
        }
        Some(&self.keys)
    }
}

impl Buffers {
    /// The shingle sets of documents `a` and `b`, when both have one.
    pub(super) fn sets<'s>(&'s mut self, sets: SetsView<'s>, a: u32, b: u32) -> PairSets<'s> {
        let Buffers { first, second } = self;
        first.get(sets, a).zip(second.get(sets, b))
    }

    /// Whether documents `a` and `b` (with sketches `sa` and `sb`) open alike: [`open_alike`]
    /// when both have a set, [`opens_like_indexed`] when one was read from an index; yes when
    /// neither has a set (their similarity is estimated).
    pub(super) fn open_alike(
        &mut self,
        sets: SetsView,
        (a, sa): (u32, &Sketch),
        (b, sb): (u32, &Sketch),
        min_share: f64,
    ) -> bool {
        let Buffers { first, second } = self;
        match (first.get(sets, a), second.get(sets, b)) {
            (Some(x), Some(y)) => open_alike(sa, sb, Some((x, y)), min_share),
            (Some(x), None) => opens_like_indexed(sb, sa, x, min_share),
            (None, Some(y)) => opens_like_indexed(sa, sb, y, min_share),
            (None, None) => true,
        }
    }
}

/// Most keys of sets read from file that [`KeptSets`] keeps: 16 MiB, held while the verified
/// pairs are joined, when memory is at its peak.
pub(super) const KEPT_KEYS: usize = 1 << 22;

/// The sets of the representative checks, which are made one after another and mostly name
/// the same representatives: sets read from file are kept (up to `KEPT_KEYS` keys, then all
/// dropped at once) rather than read again for each check.
#[derive(Debug, Default)]
pub(super) struct KeptSets {
    sets: rustc_hash::FxHashMap<u32, Box<[u32]>>,
    keys: usize,
    buffers: Buffers,
}

impl KeptSets {
    /// The shingle sets of documents `a` and `b`, when both have one.
    pub(super) fn sets<'s>(&'s mut self, sets: SetsView<'s>, a: u32, b: u32) -> PairSets<'s> {
        if !sets.on_file() {
            return self.buffers.sets(sets, a, b);
        }
        if self.keys > KEPT_KEYS {
            self.sets.clear();
            self.keys = 0;
        }
        for doc in [a, b] {
            if !self.sets.contains_key(&doc) {
                let set: Box<[u32]> = sets.get(doc, &mut self.buffers.first.keys)?.into();
                self.buffers.first.doc = None;
                self.keys += set.len();
                self.sets.insert(doc, set);
            }
        }
        Some((&self.sets[&a], &self.sets[&b]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::set_store::SetStore;
    use crate::sketch::shingle::Lead;

    fn with_lead(keys: impl IntoIterator<Item = u32>) -> Sketch {
        Sketch {
            lead: Lead::of(&keys.into_iter().collect::<Vec<u32>>()),
            ..Sketch::default()
        }
    }

    #[test]
    fn a_weak_link_with_an_indexed_document_checks_the_lead_the_index_keeps() {
        // The fresh text shares 0..40 with the indexed one and adds 1000..1080, and 500..505
        // opens it after a header (3000..3027) left out of its set as boilerplate.
        let fresh_set: Vec<u32> = (0..40).chain(500..505).chain(1000..1080).collect();
        let fresh = with_lead((500..505).chain(3000..3027));
        let opens =
            |indexed: &Sketch, share| opens_like_indexed(indexed, &fresh, &fresh_set, share);
        // The indexed opening found in the fresh text...
        assert!(opens(&with_lead(8..40), 0.2));
        // ...or the fresh text's opening (without its header) found in the indexed one: 5 of
        // the 32 keys of the indexed lead are in the fresh set, all 5 of the fresh content.
        let fresh_opening_inside = with_lead((500..505).chain(2000..2027));
        assert!(opens(&fresh_opening_inside, 0.2));
        assert!(!opens(&fresh_opening_inside, 1.01));
        // Phrases shared further in, but neither opening: apart.
        assert!(!opens(&with_lead(60..92), 0.2));
        // Unless the check is off, or the index kept no lead of the document.
        assert!(opens(&with_lead(60..92), 0.0));
        assert!(opens(&Sketch::default(), 0.2));
    }

    #[test]
    fn a_pair_opens_alike_by_its_sets_by_the_indexed_lead_or_unchecked() {
        // Document 0 is indexed (no set); 1 and 2 have sets.
        let store = SetStore::of_sets(&[(0..40).collect(), (1000..1080).collect()]);
        let sets = SetsView::of(&store, 1);
        let indexed = with_lead(60..92);
        let (one, two) = (with_lead(0..32), with_lead(1000..1032));
        let mut buffers = Buffers::default();
        let mut check = |(a, sa), (b, sb)| buffers.open_alike(sets, (a, sa), (b, sb), 0.2);
        // Both sets: the batch's check.
        assert!(!check((1, &one), (2, &two)));
        // One indexed, either way round: its kept lead against the other's set.
        assert!(!check((0, &indexed), (1, &one)));
        assert!(!check((1, &one), (0, &indexed)));
        assert!(check((0, &with_lead(8..40)), (1, &one)));
        // No sets at all (estimated): unchecked.
        let mut buffers = Buffers::default();
        assert!(buffers.open_alike(SetsView::none(), (1, &one), (2, &two), 0.2));
    }
}
