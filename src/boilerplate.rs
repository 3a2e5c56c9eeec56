//! Corpus statistics: boilerplate shingles (a site template, a mailing-list footer, a cookie
//! notice) are left out of the signatures, as Broder dropped the most common shingles. Two
//! counts find them:
//!
//! - document frequency: a shingle found in many pages is boilerplate, whatever they are;
//! - story frequency: a shingle found in the pages of many different stories is boilerplate,
//!   even on a small site. Stories here are a first clustering made with the boilerplate found
//!   by document frequency; a wire story copied by a thousand sites is one story, so its text
//!   is never taken for boilerplate this way.
//!
//! Where leaving out boilerplate would leave a document with less than a fifth of its shingles,
//! the document is itself common text and keeps all of them.

use std::borrow::Cow;

use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};

/// How many of the given sets hold each shingle, for the shingles held by at least
/// `at_least` of them (none when `at_least` is 0).
pub fn document_counts(sets: &[&[u32]], at_least: usize) -> FxHashMap<u32, u32> {
    if at_least == 0 {
        return FxHashMap::default();
    }
    let mut all: Vec<u32> = sets
        .par_iter()
        .flat_map_iter(|s| s.iter().copied())
        .collect();
    all.par_sort_unstable();
    all.chunk_by(|a, b| a == b)
        .filter(|run| run.len() >= at_least)
        .map(|run| (run[0], run.len() as u32))
        .collect()
}

/// The shingles that count as boilerplate in one collection.
#[derive(Debug, Default, Clone)]
pub struct Boilerplate {
    common: FxHashSet<u32>,
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
    pub fn from_counts(counts: &FxHashMap<u32, u32>, min_documents: usize) -> Boilerplate {
        if min_documents == 0 {
            return Boilerplate::none();
        }
        let common = counts
            .iter()
            .filter(|&(_, &n)| n as usize >= min_documents)
            .map(|(&s, _)| s)
            .collect();
        Boilerplate { common }
    }

    /// Adds the shingles found in documents of at least `min_stories` different stories;
    /// `story_of[d]` is the story of the document whose set is `sets[d]`. Nothing when
    /// `min_stories` is 0. Returns the shingles that were not boilerplate before.
    ///
    /// Only shingles in `frequent` are counted, to keep this cheap: a shingle in pages of
    /// `min_stories` stories is in at least that many pages, so `frequent` can be the page
    /// counts of at least `min_stories` (see [`document_counts`]). The few shingles that only
    /// exist where main-text extraction joined the text around a dropped line are not counted.
    pub fn add_spread_across_stories(
        &mut self,
        sets: &[&[u32]],
        story_of: &[u32],
        min_stories: usize,
        frequent: &FxHashMap<u32, u32>,
    ) -> Boilerplate {
        if min_stories == 0 {
            return Boilerplate::none();
        }
        let mut pairs: Vec<(u32, u32)> = sets
            .par_iter()
            .zip(story_of.par_iter())
            .flat_map_iter(|(set, &story)| {
                set.iter()
                    .filter(|s| frequent.contains_key(s))
                    .map(move |&s| (s, story))
            })
            .collect();
        pairs.par_sort_unstable();
        pairs.dedup();
        let added: FxHashSet<u32> = pairs
            .chunk_by(|a, b| a.0 == b.0)
            .filter(|run| run.len() >= min_stories && !self.common.contains(&run[0].0))
            .map(|run| run[0].0)
            .collect();
        self.common.extend(added.iter().copied());
        Boilerplate { common: added }
    }

    /// The given shingles as boilerplate (e.g. as found in earlier collections).
    pub fn from_keys(keys: impl IntoIterator<Item = u32>) -> Boilerplate {
        Boilerplate {
            common: keys.into_iter().collect(),
        }
    }

    /// Adds the shingles of `other`.
    pub fn extend(&mut self, other: &Boilerplate) {
        self.common.extend(other.common.iter().copied());
    }

    /// The boilerplate shingles, sorted.
    pub fn keys(&self) -> Vec<u32> {
        let mut keys: Vec<u32> = self.common.iter().copied().collect();
        keys.sort_unstable();
        keys
    }

    /// True when the set holds a boilerplate shingle.
    pub fn touches(&self, set: &[u32]) -> bool {
        !self.common.is_empty() && set.iter().any(|s| self.common.contains(s))
    }

    /// Number of boilerplate shingles.
    pub fn len(&self) -> usize {
        self.common.len()
    }

    /// True when no shingle is boilerplate.
    pub fn is_empty(&self) -> bool {
        self.common.is_empty()
    }

    /// A shingle set without its boilerplate, or the whole set when less than a fifth of it
    /// would remain.
    pub fn filter<'a>(&self, set: &'a [u32]) -> Cow<'a, [u32]> {
        if self.common.is_empty() {
            return Cow::Borrowed(set);
        }
        let kept: Vec<u32> = set
            .iter()
            .copied()
            .filter(|s| !self.common.contains(s))
            .collect();
        if kept.len() == set.len() || kept.len() * 5 < set.len() {
            Cow::Borrowed(set)
        } else {
            Cow::Owned(kept)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let frequent = document_counts(&sets, 2);
        assert_eq!(frequent.len(), 3);
        let added = boilerplate.add_spread_across_stories(&sets, &[0, 0, 1, 2], 3, &frequent);
        assert_eq!(boilerplate.len(), 1);
        assert!(added.touches(&pages[2]) && !added.touches(&[1, 2]));
        assert_eq!(boilerplate.filter(&pages[0]).as_ref(), &[1, 2]);
        // The story's own text, on two pages of one story, stays.
        let added = boilerplate.add_spread_across_stories(&sets, &[0, 0, 1, 2], 2, &frequent);
        assert_eq!(boilerplate.len(), 1);
        assert!(added.is_empty());
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
