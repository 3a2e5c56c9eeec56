//! Corpus statistics: boilerplate shingles (a site template, a mailing-list footer, a cookie
//! notice) are left out of the signatures, as Broder dropped the most common shingles. Two
//! counts find them:
//!
//! - document frequency: a shingle found in many pages is boilerplate, whatever they are;
//! - story frequency: a shingle found in the pages of many different stories is boilerplate,
//!   even on a small site. Stories here are a first clustering made with the boilerplate found
//!   by document frequency; a wire story copied by a thousand sites is one story, so its text
//!   is never taken for boilerplate this way. The frequent shingles are numbered, and each
//!   thread counts a share of the stories, one story at a time, with three counters a number.
//!
//! The second count also gives back what the first took from a story: a shingle most of whose
//! documents are one story of the first clustering is that story's own text, found in many
//! documents because they copied it, and it is not boilerplate (unless it is found across as
//! many stories as a template that documents kept whole leave out). The rewrites of a wire
//! story copied by more sites than `min-documents` keep the story's text, and join it.
//!
//! Where leaving out boilerplate would leave a document with less than a fifth of its shingles,
//! the document is itself common text (a wire story copied by many sites) and keeps all of
//! them but the shingles spread across stories: text found in the pages of many different
//! stories is a template (a disclaimer, a byline) whatever else the document is, and a
//! document kept whole with it would be contained in every other one that keeps it.

use std::borrow::Cow;
use std::sync::Arc;

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use crate::corpus::lookup::{KeySet, NumberedKeys};

/// Most keys counted at once by one thread in [`document_counts`], about: the key space is cut
/// into `MIN_KEY_RANGES` ranges, or more when a range would hold more keys of all the sets than
/// this. Each range costs a visit to every set, so few large ranges keep the count linear in
/// the number of keys; a range holds at most a sixteenth of all the sets' keys. A range's keys
/// are copied and radix sorted (twice their size): 2^23 keys take 64 MiB per thread, where a
/// million documents' keys, left in larger ranges, would take hundreds.
const KEYS_PER_RANGE: usize = 1 << 23;
/// Fewest key ranges [`document_counts`] cuts the key space into.
const MIN_KEY_RANGES: usize = 16;

/// How many of the given sets hold each shingle, for the shingles held by at least
/// `at_least` of them (none when `at_least` is 0). Each set must be sorted, as shingle sets are.
///
/// The key space is cut into ranges (by the keys' top bits) and each thread counts its ranges
/// one after another, so only about one range's share of all the keys is copied at a time;
/// a range's keys are counted by a radix sort.
pub(crate) fn document_counts(sets: &[&[u32]], at_least: usize) -> FxHashMap<u32, u32> {
    document_counts_within(sets, at_least, 0..1 << 32)
}

/// [`document_counts`] of sets whose keys all lie in `span` (a part of the key space): the
/// ranges are cut from that part only, so that each thread gets its share of the keys.
pub(crate) fn document_counts_within(
    sets: &[&[u32]],
    at_least: usize,
    span: std::ops::Range<u64>,
) -> FxHashMap<u32, u32> {
    if at_least == 0 {
        return FxHashMap::default();
    }
    debug_assert!(sets.iter().all(|s| s.is_sorted()), "sets must be sorted");
    debug_assert!(
        sets.iter()
            .flat_map(|s| s.first().into_iter().chain(s.last()))
            .all(|&k| span.contains(&u64::from(k))),
        "keys must lie in the span"
    );
    // Counts do not depend on the order of the sets, and each range visits every set: in
    // memory order, one visit after another stays on nearby pages and cache lines.
    let mut sets = sets.to_vec();
    sets.par_sort_unstable_by_key(|s| s.as_ptr() as usize);
    let sets = &sets[..];
    let total: usize = sets.iter().map(|s| s.len()).sum();
    let ranges = (total / KEYS_PER_RANGE)
        .next_power_of_two()
        .clamp(MIN_KEY_RANGES, 1 << 16) as u64;
    // Where range `r` starts; range `ranges` is the end of the span.
    let bound = |r: u64| span.start + (span.end - span.start) * r / ranges;
    let blocks = (rayon::current_num_threads() as u64).clamp(1, ranges);
    (0..blocks)
        .into_par_iter()
        .flat_map_iter(|block| {
            let (first, last) = (block * ranges / blocks, (block + 1) * ranges / blocks);
            // Where each set's keys of the current range start.
            let mut cursors: Vec<usize> = sets
                .iter()
                .map(|s| s.partition_point(|&k| u64::from(k) < bound(first)))
                .collect();
            let mut keys: Vec<u32> = Vec::new();
            let mut counts: Vec<(u32, u32)> = Vec::new();
            for range in first..last {
                let end = bound(range + 1);
                keys.clear();
                for (set, cursor) in sets.iter().zip(cursors.iter_mut()) {
                    let rest = &set[*cursor..];
                    let n = rest.iter().take_while(|&&k| u64::from(k) < end).count();
                    keys.extend_from_slice(&rest[..n]);
                    *cursor += n;
                }
                radsort::sort(&mut keys);
                counts.extend(
                    keys.chunk_by(|a, b| a == b)
                        .filter(|run| run.len() >= at_least)
                        .map(|run| (run[0], run.len() as u32)),
                );
            }
            counts
        })
        .collect()
}

/// The documents in story order, for [`stories_per_shingle`]: `story_of[d]` is the story of
/// document `d`.
pub(crate) fn story_order(story_of: &[u32]) -> Vec<u32> {
    let mut order: Vec<u32> = (0..story_of.len() as u32).collect();
    order.par_sort_unstable_by_key(|&d| (story_of[d as usize], d));
    order
}

/// How the documents that hold a shingle fall into stories (see [`stories_per_shingle`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct StoryCounts {
    /// Different stories whose documents hold the shingle.
    pub stories: u32,
    /// Documents that hold it.
    pub documents: u32,
    /// Documents of the one story that holds it most.
    pub largest: u32,
}

impl StoryCounts {
    /// True when most of the documents that hold the shingle are one story's: it is that
    /// story's own text, copied by its members (a wire story on hundreds of sites, whose
    /// rewrites the first clustering left alone), never a template, however many documents or
    /// stories hold it.
    pub fn one_story(&self) -> bool {
        u64::from(self.largest) * 2 > u64::from(self.documents)
    }
}

/// How the documents that hold each of `shingles` numbered shingles fall into stories:
/// `number_of(key)` is the number of a key of `sets` that is counted (`None` for the others),
/// `story_of[d]` is the story of the document whose set is `sets[d]`, and `order` is
/// [`story_order`] of `story_of`.
///
/// The sets are visited in story order, cut into one piece per thread at story boundaries, so
/// pieces hold different stories. A story's documents are counted together: the numbers of
/// their frequent shingles gathered and sorted (a document alone needs no sort: a set holds
/// each key once), and each number's run counted once for the story.
pub(crate) fn stories_per_shingle(
    sets: &[&[u32]],
    story_of: &[u32],
    order: &[u32],
    shingles: usize,
    number_of: impl Fn(u32) -> Option<u32> + Sync,
) -> Vec<StoryCounts> {
    let story = |i: usize| story_of[order[i] as usize];
    let pieces = rayon::current_num_threads().max(1);
    let mut cuts: Vec<usize> = (0..=pieces).map(|p| p * order.len() / pieces).collect();
    for i in 1..pieces {
        cuts[i] = cuts[i].max(cuts[i - 1]);
        while cuts[i] > 0 && cuts[i] < order.len() && story(cuts[i]) == story(cuts[i] - 1) {
            cuts[i] += 1;
        }
    }
    cuts.par_windows(2)
        .map(|cut| {
            let mut counts = vec![StoryCounts::default(); shingles];
            let mut numbers: Vec<u32> = Vec::new();
            let documents = &order[cut[0]..cut[1].max(cut[0])];
            for story in documents.chunk_by(|&a, &b| story_of[a as usize] == story_of[b as usize]) {
                numbers.clear();
                for &d in story {
                    numbers.extend(sets[d as usize].iter().filter_map(|&s| number_of(s)));
                }
                if story.len() > 1 {
                    radsort::sort(&mut numbers);
                }
                for run in numbers.chunk_by(|a, b| a == b) {
                    let entry = &mut counts[run[0] as usize];
                    let held = run.len() as u32;
                    entry.stories += 1;
                    entry.documents += held;
                    entry.largest = entry.largest.max(held);
                }
            }
            counts
        })
        .reduce_with(|mut a, b| {
            a.iter_mut().zip(b).for_each(|(x, y)| {
                x.stories += y.stories;
                x.documents += y.documents;
                x.largest = x.largest.max(y.largest);
            });
            a
        })
        .unwrap_or_else(|| vec![StoryCounts::default(); shingles])
}

/// How many stories' documents a shingle is found in for it to be boilerplate, and to be left
/// out even of a document kept whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct MinStories {
    /// `boilerplate.min-stories`; 0 counts no stories.
    pub boilerplate: usize,
    /// The larger of `boilerplate.min-stories` and `boilerplate.min-documents`: a document
    /// kept whole is a widely copied text, whose own copies the first clustering may have cut
    /// into several stories, so only text found across as many stories as boilerplate is
    /// found in documents is taken out of it (a disclaimer, a byline, a site's template).
    pub kept_whole: usize,
}

impl MinStories {
    /// The thresholds of a configuration.
    pub fn of(config: &crate::config::BoilerplateConfig) -> MinStories {
        MinStories {
            boilerplate: config.min_stories,
            kept_whole: config.min_stories.max(config.min_documents),
        }
    }
}

/// Shingles spread across stories, and those of one story, as counted: each sorted.
#[derive(Debug, Default)]
pub(crate) struct SpreadShingles {
    /// Found in documents of `min_stories.boilerplate` stories or more.
    pub boilerplate: Vec<u32>,
    /// Found in documents of `min_stories.kept_whole` stories or more.
    pub kept_whole: Vec<u32>,
    /// Found in documents most of which are one story's (see [`StoryCounts::one_story`]), of
    /// fewer than `min_stories.kept_whole` stories, and boilerplate by document frequency:
    /// taken out of it, and never added by story frequency. Text
    /// found across that many stories is a template whatever else: a first clustering may
    /// have joined most of its documents into one story through it (pages of a headline and
    /// a disclaimer, kept whole, contained in every copy that carries the disclaimer).
    pub one_story: Vec<u32>,
}

impl SpreadShingles {
    /// Adds the `keys` (sorted, above those added before) by their `counts`; `common` tells
    /// the boilerplate found by document frequency (only those of one story are kept).
    pub fn extend(
        &mut self,
        keys: &[u32],
        counts: &[StoryCounts],
        min_stories: MinStories,
        common: impl Fn(u32) -> bool,
    ) {
        for (&key, counts) in keys.iter().zip(counts) {
            let n = counts.stories as usize;
            if counts.one_story() && n < min_stories.kept_whole {
                if common(key) {
                    self.one_story.push(key);
                }
            } else if n >= min_stories.boilerplate {
                self.boilerplate.push(key);
                if n >= min_stories.kept_whole {
                    self.kept_whole.push(key);
                }
            }
        }
    }
}

/// What story frequency changed in a collection's boilerplate (see [`Boilerplate::add_spread`]).
#[derive(Debug, Default)]
pub(crate) struct SpreadChange {
    /// The shingles that were not boilerplate before, with all those that a document kept whole
    /// leaves out (boilerplate before too).
    pub added: Boilerplate,
    /// The shingles of one story that were boilerplate by document frequency and are no longer.
    pub returned: KeySet,
}

/// The shingles that count as boilerplate in one collection: those found in it, over those
/// known before it (an index's, found by earlier collections), which are shared, not copied.
#[derive(Debug, Default, Clone)]
pub struct Boilerplate {
    /// Found in this collection; none of them known.
    common: KeySet,
    /// Known before it; a boilerplate of its own, with nothing known under it.
    known: Option<Arc<Boilerplate>>,
    /// Found in the main sets of documents of [`MinStories::kept_whole`] stories or more, all
    /// of them boilerplate: left out even of a document kept whole.
    spread: KeySet,
}

impl Boilerplate {
    /// No boilerplate: every shingle counts.
    pub fn none() -> Boilerplate {
        Boilerplate::default()
    }

    /// The shingles found in at least `min_documents` of the given shingle sets; none when
    /// `min_documents` is 0.
    pub fn from_sets(sets: &[&[u32]], min_documents: usize) -> Boilerplate {
        Boilerplate::from_counts(&document_counts(sets, min_documents), min_documents)
    }

    /// The shingles whose count is at least `min_documents`; none when `min_documents` is 0.
    pub(crate) fn from_counts(counts: &FxHashMap<u32, u32>, min_documents: usize) -> Boilerplate {
        if min_documents == 0 {
            return Boilerplate::none();
        }
        let common = counts
            .iter()
            .filter(|&(_, &n)| n as usize >= min_documents)
            .map(|(&s, _)| s)
            .collect();
        Boilerplate {
            common,
            ..Boilerplate::default()
        }
    }

    /// Adds the shingles found in documents of at least `min_stories.boilerplate` different
    /// stories; `story_of[d]` is the story of the document whose main set is `sets[d]` (its
    /// keys in any order, each once). Nothing when that is 0. Returns what changed (see
    /// [`Boilerplate::add_spread`]).
    ///
    /// Only the shingles in `frequent` (distinct) are counted, to keep this cheap: a shingle in
    /// pages of `min_stories` stories is in at least that many pages, so `frequent` can be the
    /// shingles with page counts of at least `min_stories` (see [`document_counts`]). The few
    /// shingles that only exist where main-text extraction joined the text around a dropped
    /// line are not counted.
    pub(crate) fn add_spread_across_stories(
        &mut self,
        sets: &[&[u32]],
        story_of: &[u32],
        min_stories: MinStories,
        frequent: &[u32],
    ) -> SpreadChange {
        if min_stories.boilerplate == 0 {
            return SpreadChange::default();
        }
        let frequent = NumberedKeys::new(frequent.to_vec());
        let order = story_order(story_of);
        let number_of = |s| frequent.number(s);
        let stories = stories_per_shingle(sets, story_of, &order, frequent.len(), number_of);
        let mut spread = SpreadShingles::default();
        spread.extend(frequent.keys(), &stories, min_stories, |s| {
            self.common.contains(s)
        });
        self.add_spread(spread)
    }

    /// Adds the shingles found in the main sets of documents of many stories to the
    /// boilerplate, and those of even more stories to the shingles that a document kept whole
    /// leaves out, and takes out of the boilerplate found in this collection the shingles of
    /// one story (its own text, found in many documents only because it was copied).
    pub(crate) fn add_spread(&mut self, spread: SpreadShingles) -> SpreadChange {
        let returned: KeySet = spread
            .one_story
            .into_iter()
            .filter(|&s| self.common.contains(s))
            .collect();
        if !returned.is_empty() {
            let common = self.common.keys().into_iter();
            self.common = common.filter(|&s| !returned.contains(s)).collect();
        }
        let added = self.add(spread.boilerplate.into_iter());
        self.spread = self.spread.union(&spread.kept_whole.into_iter().collect());
        SpreadChange {
            added: Boilerplate {
                spread: self.spread.clone(),
                ..added
            },
            returned,
        }
    }

    /// Adds shingles to the boilerplate; returns those that were not boilerplate before.
    pub fn add(&mut self, shingles: impl Iterator<Item = u32>) -> Boilerplate {
        let added: KeySet = shingles.filter(|&s| !self.contains(s)).collect();
        self.common = self.common.union(&added);
        Boilerplate {
            common: added,
            ..Boilerplate::default()
        }
    }

    /// The given shingles as boilerplate (e.g. as found in earlier collections).
    pub(crate) fn from_keys(keys: impl IntoIterator<Item = u32>) -> Boilerplate {
        Boilerplate {
            common: keys.into_iter().collect(),
            ..Boilerplate::default()
        }
    }

    /// These shingles, found in documents of many stories, are left out even of a document
    /// kept whole (see [`Boilerplate::add_spread`]); they must be boilerplate already.
    pub(crate) fn with_spread(mut self, spread: impl IntoIterator<Item = u32>) -> Boilerplate {
        self.spread = spread.into_iter().collect();
        self
    }

    /// This boilerplate over `known` (found by earlier collections, with nothing known under
    /// it): both count, and `known` is shared, not copied.
    pub fn over(self, known: &Arc<Boilerplate>) -> Boilerplate {
        debug_assert!(known.known.is_none(), "one boilerplate known under another");
        if known.is_empty() {
            return self;
        }
        let common = if self.common.is_empty() {
            self.common
        } else {
            let keys = self.common.keys();
            keys.into_iter().filter(|&s| !known.contains(s)).collect()
        };
        Boilerplate {
            common,
            known: Some(Arc::clone(known)),
            spread: self.spread,
        }
    }

    /// True when the shingle is boilerplate.
    #[inline]
    pub(crate) fn contains(&self, shingle: u32) -> bool {
        self.common.contains(shingle)
            || self
                .known
                .as_ref()
                .is_some_and(|known| known.common.contains(shingle))
    }

    /// Sets `marks[i]` for each of `keys[i]` that is boilerplate ([`KeySet::mark`] of both
    /// layers); `marks` is as long as `keys`.
    pub(crate) fn mark(&self, keys: &[u32], marks: &mut [bool]) {
        self.common.mark(keys, marks);
        if let Some(known) = &self.known {
            known.common.mark(keys, marks);
        }
    }

    /// The boilerplate shingles, sorted.
    pub fn keys(&self) -> Vec<u32> {
        let mut keys = self.common.keys();
        if let Some(known) = &self.known {
            keys.extend(known.common.keys());
            radsort::sort(&mut keys);
        }
        keys
    }

    /// The boilerplate shingles found in this collection, not known before it, sorted.
    pub fn found(&self) -> Vec<u32> {
        self.common.keys()
    }

    /// True when the set holds a boilerplate shingle or one spread across stories.
    pub(crate) fn touches(&self, set: &[u32]) -> bool {
        (!self.is_empty() && set.iter().any(|&s| self.contains(s)))
            || (!self.spread.is_empty() && set.iter().any(|&s| self.spread.contains(s)))
    }

    /// Number of boilerplate shingles.
    pub fn len(&self) -> usize {
        self.common.len() + self.known.as_ref().map_or(0, |known| known.len())
    }

    /// True when no shingle is boilerplate.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// [`Boilerplate::filter`] into two lists: appends the keys of a sorted shingle set that are
    /// not boilerplate to `kept` and those that are to `taken`, both sorted. The set may be
    /// what is left of a main set once `left_out` of its keys were taken out as boilerplate
    /// before. When less than a fifth of the main set would remain, the set is kept whole (all
    /// but its keys spread across stories go to `kept`, those to `taken`) and false is
    /// returned: the main set is then kept whole.
    pub fn split(
        &self,
        set: &[u32],
        kept: &mut Vec<u32>,
        taken: &mut Vec<u32>,
        left_out: usize,
    ) -> bool {
        let (kept_from, taken_from) = (kept.len(), taken.len());
        if self.is_empty() {
            kept.extend_from_slice(set);
        } else {
            let mut marks = vec![false; set.len()];
            self.mark(set, &mut marks);
            for (&s, &boilerplate) in set.iter().zip(&marks) {
                if boilerplate {
                    taken.push(s);
                } else {
                    kept.push(s);
                }
            }
        }
        let removed = taken.len() - taken_from;
        let left = kept.len() - kept_from;
        if removed + left_out > 0 && leaves_too_little(left, left + removed + left_out) {
            kept.truncate(kept_from);
            taken.truncate(taken_from);
            self.keep_whole(set, kept, taken);
            return false;
        }
        true
    }

    /// What a document kept whole keeps of its main set `main` (sorted): appends to `kept` its
    /// keys that are not spread across stories, and those that are to `taken`, both sorted;
    /// or all of `main` to `kept` when every key of it is spread (a page of nothing but a
    /// template is compared whole).
    pub(crate) fn keep_whole(&self, main: &[u32], kept: &mut Vec<u32>, taken: &mut Vec<u32>) {
        let (kept_from, taken_from) = (kept.len(), taken.len());
        if !self.spread.is_empty() {
            for &s in main {
                if self.spread.contains(s) {
                    taken.push(s);
                } else {
                    kept.push(s);
                }
            }
            if kept.len() > kept_from {
                return;
            }
        }
        kept.truncate(kept_from);
        taken.truncate(taken_from);
        kept.extend_from_slice(main);
    }

    /// The boilerplate keys of a sorted shingle set, sorted: what [`Boilerplate::filter`]
    /// takes out of it (only the keys spread across stories when less than a fifth of the set
    /// would remain).
    pub(crate) fn taken(&self, set: &[u32]) -> Vec<u32> {
        let mut taken = Vec::new();
        if self.is_empty() {
            return taken;
        }
        let mut marks = vec![false; set.len()];
        self.mark(set, &mut marks);
        taken.extend(
            (set.iter().zip(&marks)).filter_map(|(&s, &boilerplate)| boilerplate.then_some(s)),
        );
        if leaves_too_little(set.len() - taken.len(), set.len()) {
            taken.clear();
            self.keep_whole(set, &mut Vec::new(), &mut taken);
        }
        taken
    }

    /// A shingle set without its boilerplate, or when less than a fifth of it would remain,
    /// what a document kept whole keeps: all but its shingles spread across stories.
    pub fn filter<'a>(&self, set: &'a [u32]) -> Cow<'a, [u32]> {
        if self.is_empty() {
            return Cow::Borrowed(set);
        }
        let kept: Vec<u32> = set.iter().copied().filter(|&s| !self.contains(s)).collect();
        if kept.len() == set.len() {
            Cow::Borrowed(set)
        } else if leaves_too_little(kept.len(), set.len()) {
            let mut kept = Vec::new();
            self.keep_whole(set, &mut kept, &mut Vec::new());
            if kept.len() == set.len() {
                Cow::Borrowed(set)
            } else {
                Cow::Owned(kept)
            }
        } else {
            Cow::Owned(kept)
        }
    }
}

/// True when taking a set's boilerplate out would leave `left` of its `all` distinct shingles,
/// less than a fifth: the set is then kept whole.
pub(crate) fn leaves_too_little(left: usize, all: usize) -> bool {
    left * 5 < all
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustc_hash::FxHashSet;

    #[test]
    fn counts_within_a_part_of_the_key_space_are_the_counts_of_its_keys() {
        // Keys in [3 × 2^30, 2^32): the whole space's ranges would leave most threads idle.
        let low = 3u64 << 30;
        let mut state = 11u64;
        let sets: Vec<Vec<u32>> = (0..200)
            .map(|_| {
                let mut set: Vec<u32> = (0..300)
                    .map(|_| (low + crate::sketch::signature::splitmix64(&mut state) % 5000) as u32)
                    .collect();
                set.sort_unstable();
                set.dedup();
                set
            })
            .collect();
        let sets: Vec<&[u32]> = sets.iter().map(Vec::as_slice).collect();
        let whole = document_counts(&sets, 3);
        assert!(whole.len() > 1000);
        assert_eq!(document_counts_within(&sets, 3, low..1 << 32), whole);
    }

    #[test]
    fn boilerplate_over_a_known_one_counts_both_and_finds_only_its_own() {
        let known = Arc::new(Boilerplate::from_keys([1, 2, 3]));
        // Found again: 3 is known, 4 is new.
        let mut boilerplate = Boilerplate::from_keys([3, 4]).over(&known);
        let added = boilerplate.add([2, 5].into_iter());
        assert_eq!(added.keys(), vec![5]);
        let union = Boilerplate::from_keys([1, 2, 3, 4, 5]);
        assert_eq!(boilerplate.keys(), union.keys());
        assert_eq!(boilerplate.len(), 5);
        assert_eq!(boilerplate.found(), vec![4, 5]);
        let set: Vec<u32> = (0..30).collect();
        let (mut kept, mut taken) = (Vec::new(), Vec::new());
        boilerplate.split(&set, &mut kept, &mut taken, 0);
        assert_eq!(taken, vec![1, 2, 3, 4, 5]);
        assert_eq!(boilerplate.filter(&set), union.filter(&set));
        assert!(boilerplate.touches(&[1, 40]) && !boilerplate.touches(&[0, 40]));
        // Nothing found: the known boilerplate alone, none of it found here.
        let nothing = Boilerplate::none().over(&known);
        assert_eq!(nothing.len(), 3);
        assert!(nothing.found().is_empty());
        assert!(Boilerplate::none()
            .over(&Arc::new(Boilerplate::none()))
            .is_empty());
    }

    #[test]
    fn shingles_in_many_documents_are_boilerplate() {
        let template = [100u32, 101, 102];
        let docs: Vec<Vec<u32>> = (0..5u32)
            .map(|d| {
                let mut s: Vec<u32> = template.to_vec();
                s.extend((0..20).map(|i| d * 1000 + i));
                s.sort_unstable();
                s
            })
            .collect();
        let sets: Vec<&[u32]> = docs.iter().map(Vec::as_slice).collect();
        let boilerplate = Boilerplate::from_sets(&sets, 5);
        assert_eq!(boilerplate.len(), 3);
        assert_eq!(boilerplate.filter(&docs[0]).len(), 20);
        assert!(Boilerplate::from_sets(&sets, 6).is_empty());
        assert!(Boilerplate::from_sets(&sets, 0).is_empty());
    }

    #[test]
    fn shingles_spread_over_many_stories_are_boilerplate() {
        // Four pages of one small site: two stories, each on two pages; footer shingle 9.
        let pages: Vec<Vec<u32>> = vec![vec![1, 2, 9], vec![1, 2, 9], vec![3, 4, 9], vec![5, 6, 9]];
        let sets: Vec<&[u32]> = pages.iter().map(Vec::as_slice).collect();
        let mut boilerplate = Boilerplate::from_sets(&sets, 10);
        assert!(boilerplate.is_empty());
        let frequent: Vec<u32> = document_counts(&sets, 2).into_keys().collect();
        assert_eq!(frequent.len(), 3);
        let added = boilerplate
            .add_spread_across_stories(&sets, &[0, 0, 1, 2], both(3), &frequent)
            .added;
        assert_eq!(boilerplate.len(), 1);
        assert!(added.touches(&pages[2]) && !added.touches(&[1, 2]));
        assert_eq!(boilerplate.filter(&pages[0]).as_ref(), &[1, 2]);
        // The story's own text, on two pages of one story, stays.
        let change =
            boilerplate.add_spread_across_stories(&sets, &[0, 0, 1, 2], both(2), &frequent);
        assert_eq!(boilerplate.len(), 1);
        assert!(change.added.is_empty() && change.returned.is_empty());
    }

    /// Story thresholds of `n` stories for boilerplate and for documents kept whole alike.
    fn both(n: usize) -> MinStories {
        MinStories {
            boilerplate: n,
            kept_whole: n,
        }
    }

    #[test]
    fn a_document_kept_whole_leaves_out_text_spread_across_stories() {
        // Keys 1..=10: a wire story's text, copied by many sites, so common by document
        // frequency; 90..=99: a disclaimer found in the pages of many stories.
        let story: Vec<u32> = (1..=10).collect();
        let disclaimer: Vec<u32> = (90..=99).collect();
        let copy: Vec<u32> = story.iter().chain(&disclaimer).copied().collect();
        let common = Boilerplate::from_keys(copy.iter().copied());
        // Without counts of stories, the copy is kept whole: all its text is common.
        assert_eq!(common.filter(&copy).as_ref(), copy.as_slice());
        let mut spread = common.clone();
        spread.add_spread(SpreadShingles {
            boilerplate: disclaimer.clone(),
            kept_whole: disclaimer.clone(),
            one_story: Vec::new(),
        });
        assert_eq!(spread.filter(&copy).as_ref(), story.as_slice());
        assert_eq!(spread.taken(&copy), disclaimer);
        let (mut kept, mut taken) = (vec![0], vec![0]);
        assert!(!spread.split(&copy, &mut kept, &mut taken, 0));
        assert_eq!(
            (&kept[1..], &taken[1..]),
            (story.as_slice(), disclaimer.as_slice())
        );
        // A page of nothing but the disclaimer has nothing else to compare: it is kept whole.
        assert_eq!(spread.filter(&disclaimer).as_ref(), disclaimer.as_slice());
        // Text found across fewer stories than `kept_whole` (a story the first clustering
        // cut in parts) stays in a document kept whole.
        let mut cut = common;
        cut.add_spread(SpreadShingles {
            boilerplate: copy.clone(),
            kept_whole: Vec::new(),
            one_story: Vec::new(),
        });
        assert_eq!(cut.filter(&copy).as_ref(), copy.as_slice());
    }

    #[test]
    fn spread_shingles_are_sorted_by_their_thresholds() {
        let mut spread = SpreadShingles::default();
        let min_stories = MinStories {
            boilerplate: 8,
            kept_whole: 30,
        };
        // Each document a story of its own.
        let across = |n: u32| StoryCounts {
            stories: n,
            documents: n,
            largest: 1,
        };
        let counts = [7, 8, 29, 30].map(across);
        let common = |key: u32| key != 7;
        spread.extend(&[1, 2, 3, 4], &counts, min_stories, common);
        spread.extend(&[5], &[across(100)], min_stories, common);
        // Most documents of one story: its own text, unless found across as many stories as
        // a template left out of documents kept whole; kept only when common by document
        // frequency (7 is not).
        let one_story = |stories: u32| StoryCounts {
            stories,
            documents: 300 + stories,
            largest: 300,
        };
        let counts = [one_story(1), one_story(1), one_story(29), one_story(30)];
        spread.extend(&[6, 7, 8, 9], &counts, min_stories, common);
        let half = StoryCounts {
            stories: 11,
            documents: 20,
            largest: 10,
        };
        spread.extend(&[10], &[half], min_stories, common);
        assert_eq!(spread.boilerplate, [2, 3, 4, 5, 9, 10]);
        assert_eq!(spread.kept_whole, [4, 5, 9]);
        assert_eq!(spread.one_story, [6, 8]);
    }

    #[test]
    fn a_story_copied_by_many_documents_keeps_its_text_but_a_template_does_not() {
        // Keys 1..=20: a story's text, on six copies (story 0) and two rewrites that add as
        // much of their own (stories 1 and 2); 90..=94: a footer on five articles of their own
        // (stories 3 to 7); 95: a line on the copies and on those articles.
        let story: Vec<u32> = (1..=20).collect();
        let copy: Vec<u32> = story.iter().copied().chain([95]).collect();
        let mut documents: Vec<Vec<u32>> = vec![copy.clone(); 6];
        for own in [100, 200] {
            documents.push(story.iter().copied().chain(own..own + 20).collect());
        }
        for own in (300..800).step_by(100) {
            documents.push((90..=95).chain(own..own + 10).collect());
        }
        let story_of: Vec<u32> = [0; 6].into_iter().chain(1..8).collect();
        let sets: Vec<&[u32]> = documents.iter().map(Vec::as_slice).collect();
        let mut boilerplate = Boilerplate::from_sets(&sets, 5);
        assert_eq!(boilerplate.len(), 26);
        let rewrite = documents[6].clone();
        assert_eq!(boilerplate.filter(&rewrite).as_ref(), &rewrite[20..]);
        let frequent: Vec<u32> = document_counts(&sets, 2).into_keys().collect();
        let min_stories = MinStories {
            boilerplate: 2,
            kept_whole: 5,
        };
        let change =
            boilerplate.add_spread_across_stories(&sets, &story_of, min_stories, &frequent);
        assert_eq!(change.returned.keys(), story);
        assert!(change.added.is_empty());
        assert_eq!(boilerplate.len(), 6);
        assert_eq!(boilerplate.filter(&rewrite).as_ref(), rewrite.as_slice());
        assert_eq!(
            boilerplate.filter(&documents[8]).as_ref(),
            &documents[8][6..]
        );
        // Line 95 is on six documents of one story out of eleven, but across six stories:
        // the copies leave it out.
        assert_eq!(boilerplate.filter(&copy).as_ref(), story.as_slice());
    }

    /// Sorted sets of keys spread over the whole key space, many of them shared.
    fn spread_sets() -> Vec<Vec<u32>> {
        let mut state = 1u64;
        let pool: Vec<u32> = (0..300)
            .map(|_| crate::sketch::signature::splitmix64(&mut state) as u32)
            .chain([0, 1, u32::MAX - 1, u32::MAX])
            .collect();
        (0..200)
            .map(|_| {
                let n = crate::sketch::signature::splitmix64(&mut state) % 60;
                let mut set: Vec<u32> = (0..n)
                    .map(|_| {
                        pool[(crate::sketch::signature::splitmix64(&mut state) % 304) as usize]
                    })
                    .collect();
                set.sort_unstable();
                set.dedup();
                set
            })
            .collect()
    }

    #[test]
    fn document_counts_match_a_plain_count() {
        let sets = spread_sets();
        let refs: Vec<&[u32]> = sets.iter().map(Vec::as_slice).collect();
        let mut plain: FxHashMap<u32, u32> = FxHashMap::default();
        sets.iter()
            .flatten()
            .for_each(|&s| *plain.entry(s).or_default() += 1);
        for at_least in [1, 2, 5, 30] {
            let expected: FxHashMap<u32, u32> = plain
                .iter()
                .filter(|&(_, &n)| n as usize >= at_least)
                .map(|(&s, &n)| (s, n))
                .collect();
            for threads in [1, 5] {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build();
                let counts = pool.unwrap().install(|| document_counts(&refs, at_least));
                assert_eq!(counts, expected);
            }
        }
    }

    #[test]
    fn story_counts_match_a_plain_count() {
        let sets = spread_sets();
        let refs: Vec<&[u32]> = sets.iter().map(Vec::as_slice).collect();
        let story_of: Vec<u32> = (0..sets.len() as u32).map(|d| (d * 7) % 23).collect();
        let frequent: Vec<u32> = document_counts(&refs, 3).into_keys().collect();
        let mut stories: FxHashMap<u32, FxHashSet<u32>> = FxHashMap::default();
        for (set, &story) in sets.iter().zip(&story_of) {
            for s in set.iter().filter(|s| frequent.contains(s)) {
                stories.entry(*s).or_default().insert(story);
            }
        }
        for min_stories in [1, 4, 12] {
            let expected: FxHashSet<u32> = stories
                .iter()
                .filter(|(_, st)| st.len() >= min_stories)
                .map(|(&s, _)| s)
                .collect();
            for threads in [1, 5] {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build();
                let mut boilerplate = Boilerplate::none();
                let change = pool.unwrap().install(|| {
                    boilerplate.add_spread_across_stories(
                        &refs,
                        &story_of,
                        both(min_stories),
                        &frequent,
                    )
                });
                assert_eq!(
                    change
                        .added
                        .keys()
                        .iter()
                        .copied()
                        .collect::<FxHashSet<u32>>(),
                    expected
                );
            }
        }
        // Sets already given as numbers (as gathered from a file) count the same.
        let numbered: Vec<Vec<u32>> = sets
            .iter()
            .map(|set| {
                let numbers = set
                    .iter()
                    .filter_map(|k| frequent.iter().position(|f| f == k));
                numbers.map(|i| i as u32).collect()
            })
            .collect();
        let refs: Vec<&[u32]> = numbered.iter().map(Vec::as_slice).collect();
        let order = story_order(&story_of);
        let counts = stories_per_shingle(&refs, &story_of, &order, frequent.len(), Some);
        for (s, count) in frequent.iter().zip(counts) {
            let holders: Vec<u32> = sets
                .iter()
                .zip(&story_of)
                .filter(|(set, _)| set.contains(s))
                .map(|(_, &story)| story)
                .collect();
            let largest = holders
                .iter()
                .map(|a| holders.iter().filter(|&b| b == a).count())
                .max();
            let expected = StoryCounts {
                stories: stories.get(s).map_or(0, |st| st.len()) as u32,
                documents: holders.len() as u32,
                largest: largest.unwrap_or(0) as u32,
            };
            assert_eq!(count, expected, "{s}");
        }
    }

    #[test]
    fn a_document_made_of_common_text_keeps_it() {
        let sets: Vec<Vec<u32>> = (0..3).map(|_| vec![1, 2, 3, 4, 5, 6]).collect();
        let refs: Vec<&[u32]> = sets.iter().map(Vec::as_slice).collect();
        let boilerplate = Boilerplate::from_sets(&refs, 3);
        assert_eq!(boilerplate.filter(&sets[0]).len(), 6);
        assert_eq!(boilerplate.filter(&[1, 2, 3, 4, 5, 6, 7]).len(), 7);
        assert_eq!(
            boilerplate.filter(&[1, 2, 3, 4, 5, 6, 7, 8]).as_ref(),
            &[7, 8]
        );
        assert_eq!(boilerplate.filter(&[1, 7]).as_ref(), &[7]);
    }
}
