//! Corpus statistics over a collection's set store: document frequency of the page sets,
//! then story frequency over a first clustering, each counted in parts of the key space when
//! the sets are on file; the boilerplate they find is left out of every document's set and
//! signature, and the sketches are made (and mended once story frequency adds more).

use rustc_hash::FxHashMap;

use super::allocator::give_back_free_pages;
use super::Timings;
use crate::cluster::cluster;
use crate::config::Resolved;
use crate::corpus::boilerplate::{
    document_counts, document_counts_within, stories_per_shingle, story_order, Boilerplate,
};
use crate::corpus::lookup::KeyMap;
use crate::corpus::set_store::{SetStore, SetsView};
use crate::progress::{Progress, Stage};
use crate::sketch::{Sketch, Sketcher, TextOutline};

/// Finds the boilerplate shingles of the collection (document frequency, then story frequency
/// over a first clustering), adds them to the `known` ones and sketches every document
/// without them. The store's sets become each sketch's set: page sets are dropped once
/// counted and boilerplate is taken out (its keys kept after the set until story frequency is
/// done). `outlines` are the documents' word counts and leads, as read.
pub(super) fn sketch_with_statistics(
    store: &mut SetStore,
    outlines: Vec<TextOutline>,
    sketcher: &Sketcher,
    config: &Resolved,
    known: &Boilerplate,
    progress: &dyn Progress,
    timings: &mut Timings,
) -> (Boilerplate, Vec<Sketch>) {
    let (min_documents, min_stories) = (
        config.boilerplate.min_documents,
        config.boilerplate.min_stories,
    );
    let (mut boilerplate, frequent) = timings.time("document frequency", || {
        let floor = [min_documents, min_stories]
            .into_iter()
            .filter(|&n| n > 0)
            .min();
        let counts = page_counts(store, floor.unwrap_or(0));
        let mut boilerplate = Boilerplate::from_counts(&counts, min_documents);
        boilerplate.extend(known);
        (boilerplate, counts.into_keys().collect::<Vec<u32>>())
    });
    // Each document's sketch, and how many keys of its main set the sketch's set leaves out.
    // With story frequency to come, those keys stay in the store after the set, as its second
    // list: if the shingles found then leave less than a fifth of the main set, the whole main
    // set is kept, and they are needed again.
    // Each document's outline is taken when its sketch is made.
    let mut documents: Vec<(TextOutline, Option<Sketch>, u32)> = outlines
        .into_iter()
        .map(|outline| (outline, None, 0))
        .collect();
    timings.time("sketching", || {
        store.rewrite(
            &mut documents,
            |(outline, sketch, left_out), main, _page, out| {
                progress.advance(Stage::Sketching, 1);
                let mut taken = Vec::new();
                let outline = std::mem::take(outline);
                *sketch = Some(sketcher.sketch_set(outline, main, &boilerplate, out, &mut taken));
                *left_out = taken.len() as u32;
                if min_stories == 0 {
                    return 0;
                }
                out.extend_from_slice(&taken);
                *left_out
            },
        );
    });
    give_back_free_pages();
    let (mut sketches, left_outs): (Vec<Sketch>, Vec<u32>) = documents
        .into_iter()
        .map(|(_, sketch, left_out)| (sketch.expect("a rewrite visits every document"), left_out))
        .unzip();
    if min_stories > 0 {
        let stories = timings.time("first clustering", || {
            preliminary_stories(&sketches, config)
        });
        // A set's left-out keys are boilerplate already and cannot be found again, so only the
        // sets are counted, and of them only the frequent shingles. Sets on file are gathered
        // and counted in parts of the key space, like document frequency.
        let added = timings.time("story frequency", || {
            if let Some(sets) = store.in_memory_sets(false) {
                return boilerplate.add_spread_across_stories(
                    &sets,
                    &stories,
                    min_stories,
                    &frequent,
                );
            }
            // Sets on file: each part of the key space is gathered as the numbers of the
            // frequent shingles its sets hold, counted from the part's first (the frequent
            // shingles are numbered in key order), so the counting looks nothing up again.
            let mut frequent = frequent;
            frequent.sort_unstable();
            let number: KeyMap<u32> = frequent.iter().copied().zip(0..).collect();
            let order = story_order(&stories);
            let mut added = Boilerplate::none();
            for (low, high) in key_parts(store, store.set_keys()) {
                let below = |bound: u64| move |&k: &u32| u64::from(k) < bound;
                let first = frequent.partition_point(below(low));
                let end = frequent.partition_point(below(high));
                let gathered = store.gather(|main, _page, out| {
                    let part = &main[main.partition_point(below(low))..];
                    let part = &part[..part.partition_point(below(high))];
                    let numbers = part.iter().filter_map(|&k| number.get(k));
                    out.extend(numbers.map(|&n| n - first as u32));
                });
                let numbered = gathered
                    .in_memory_sets(false)
                    .expect("a gathered store is in memory");
                let counts = stories_per_shingle(&numbered, &stories, &order, end - first, Some);
                let spread = frequent[first..end]
                    .iter()
                    .zip(counts)
                    .filter(|&(_, n)| n as usize >= min_stories)
                    .map(|(&k, _)| k);
                added.extend(&boilerplate.add(spread));
            }
            added
        });
        // Only the documents that hold a newly found boilerplate shingle change. A set that left
        // keys out holds no earlier boilerplate, so only the new shingles are looked for in it;
        // a set kept whole, or one that left nothing out, is checked against all of them.
        timings.time("sketching", || {
            let mut documents: Vec<(&mut Sketch, u32)> =
                sketches.iter_mut().zip(left_outs).collect();
            store.rewrite(&mut documents, |(sketch, left_out), set, rest, out| {
                let left_out = *left_out as usize;
                if left_out > 0 {
                    sketcher.resketch(sketch, set, rest, left_out, &added, out);
                } else if added.touches(set) {
                    sketcher.resketch(sketch, set, &[], 0, &boilerplate, out);
                } else {
                    out.extend_from_slice(set);
                }
                0
            });
        });
        give_back_free_pages();
    }
    (boilerplate, sketches)
}

/// How many documents' page sets hold each shingle, for the shingles held by at least
/// `at_least` of them (see [`document_counts`]). When sets are on file, the key space is
/// counted in parts (see [`key_parts`]), each part's keys gathered into memory.
pub(super) fn page_counts(store: &SetStore, at_least: usize) -> FxHashMap<u32, u32> {
    if let Some(pages) = store.in_memory_sets(true) {
        return document_counts(&pages, at_least);
    }
    if at_least == 0 {
        return FxHashMap::default();
    }
    let mut counts = FxHashMap::default();
    for (low, high) in key_parts(store, store.page_keys()) {
        let gathered = store.gather(|_main, page, out| {
            let from = page.partition_point(|&k| u64::from(k) < low);
            let to = page.partition_point(|&k| u64::from(k) < high);
            out.extend_from_slice(&page[from..to]);
        });
        let sets = gathered
            .in_memory_sets(false)
            .expect("a gathered store is in memory");
        counts.extend(document_counts_within(&sets, at_least, low..high));
    }
    counts
}

/// The parts of the key space `[low, high)` that a pass over `keys` keys of the store's sets
/// counts one at a time: the whole space when every set is in memory, else parts of about the
/// store's memory budget of keys, so that a part gathered in memory takes no more than the
/// sets did before they went to the file.
pub(super) fn key_parts(store: &SetStore, keys: usize) -> Vec<(u64, u64)> {
    let parts = if store.spilled() {
        keys.div_ceil(store.budget_keys().max(MIN_KEYS_PER_PART))
            .max(1) as u64
    } else {
        1
    };
    let bound = |p: u64| (p << 32) / parts;
    (0..parts).map(|p| (bound(p), bound(p + 1))).collect()
}

/// Fewest keys counted in one part of [`key_parts`].
pub(super) const MIN_KEYS_PER_PART: usize = 1 << 24;

/// The story of each document in a first clustering, made with the boilerplate found so far.
/// Its pairs are verified from the minima, whatever `cluster.verify` says: these stories only
/// decide how many stories share a shingle, and the estimate (lowered by the margin) spares
/// reading every candidate pair's two sets, from a file for a large collection.
pub(super) fn preliminary_stories(sketches: &[Sketch], config: &Resolved) -> Vec<u32> {
    let (clusters, _) = cluster(sketches, SetsView::none(), config);
    let mut story = vec![0u32; sketches.len()];
    for (index, c) in clusters.iter().enumerate() {
        for &(doc, _) in &c.members {
            story[doc as usize] = index as u32;
        }
    }
    story
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::config::Verify;
    use crate::corpus::set_store::Place;
    use crate::sketch::ShingleSets;

    fn shingles(keys: impl IntoIterator<Item = u32>) -> ShingleSets {
        let mut set: Vec<u32> = keys.into_iter().collect();
        set.sort_unstable();
        set.dedup();
        ShingleSets {
            outline: TextOutline {
                words: set.len() as u32 + 2,
                lead: crate::sketch::shingle::Lead::of(&set[..3]),
            },
            set,
            page: None,
        }
    }

    #[test]
    fn sketches_with_statistics_are_those_of_the_whole_sets() {
        let template = 1_000_000;
        // X shares one half with Y and the other with Z, each of another story, so story
        // frequency takes most of X: X is then kept whole, with the template it had left out.
        let documents = vec![
            shingles([template].into_iter().chain(10..30).chain(100..105)),
            shingles((10..20).chain(1000..1100)),
            shingles((20..30).chain(2000..2100)),
            shingles([template].into_iter().chain(3000..3050)),
            shingles([template].into_iter().chain(4000..4050)),
            shingles([template].into_iter().chain(5000..5050)),
        ];
        let outlines: Vec<TextOutline> = documents.iter().map(|d| d.outline.clone()).collect();
        let sets: Vec<Vec<u32>> = documents.iter().map(|d| d.set.clone()).collect();
        for (verify, on_file) in [
            (Verify::Exact, false),
            (Verify::Exact, true),
            (Verify::Estimate, false),
        ] {
            let mut config = Config::default();
            config.boilerplate.min_documents = 3;
            config.boilerplate.min_stories = 2;
            config.cluster.verify = verify;
            let sketcher = Sketcher::new(&config);
            let mut store = if on_file {
                let mut store = SetStore::new(0);
                store.push_block(sets.concat()).unwrap();
                let mut start = 0;
                let places = sets
                    .iter()
                    .map(|s| {
                        start += s.len() as u32;
                        Place {
                            block: 0,
                            start: start - s.len() as u32,
                            len: s.len() as u32,
                            second: 0,
                        }
                    })
                    .collect();
                store.set_places(places);
                assert!(store.spilled());
                store
            } else {
                SetStore::of_sets(&sets)
            };
            let (boilerplate, sketches) = sketch_with_statistics(
                &mut store,
                outlines.clone(),
                &sketcher,
                &config.resolve(),
                &Boilerplate::none(),
                &crate::progress::Quiet,
                &mut Timings::default(),
            );
            assert_eq!(boilerplate.len(), 21);
            let mut buffer = Vec::new();
            for (d, (sketch, document)) in sketches.iter().zip(&documents).enumerate() {
                let (expected, set) = sketcher.sketch_shingles(document, &boilerplate);
                assert_eq!(sketch, &expected);
                assert_eq!(store.set(d as u32, &mut buffer), &*set);
            }
            assert_eq!(sketches[0].shingles, 26);
            assert_eq!(sketches[1].shingles, 100);
        }
    }

    #[test]
    fn key_parts_cover_the_key_space_once() {
        let mut on_file = SetStore::new(0);
        on_file.push_block(vec![1, 2, 3]).unwrap();
        for (store, keys, parts) in [
            (SetStore::of_sets(&[vec![1]]), usize::MAX / 2, 1),
            (on_file, 3 * MIN_KEYS_PER_PART + 1, 4),
        ] {
            let found = key_parts(&store, keys);
            assert_eq!(found.len(), parts);
            assert_eq!(found[0].0, 0);
            assert_eq!(found[parts - 1].1, 1 << 32);
            assert!(found
                .windows(2)
                .all(|w| w[0].1 == w[1].0 && w[0].0 < w[0].1));
        }
    }
}
