//! Corpus statistics over a collection's set store: document frequency of the page sets,
//! then story frequency over a first clustering, each counted in parts of the key space when
//! the sets are on file (the file read once a count, however many parts); the boilerplate
//! they find is left out of every document's set and signature, and the sketches are made
//! (and mended once story frequency adds more, or gives back a story's own text).

use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::allocator::give_back_free_pages;
use super::Timings;
use crate::cancel::Cancel;
use crate::cluster::cluster_with_links;
use crate::config::Plan;
use crate::corpus::boilerplate::{
    document_counts, document_counts_within, stories_per_shingle, story_order, Boilerplate,
    MinStories, SpreadChange, SpreadShingles,
};
use crate::corpus::lookup::NumberedKeys;
use crate::corpus::set_store::{counted_set, SetStore, SetsView};
use crate::error::Error;
use crate::progress::{Progress, Stage};
use crate::sketch::{Sketch, Sketcher, TextOutline};

/// Finds the boilerplate shingles of the collection (document frequency, then story frequency
/// over a first clustering), adds them to the `known` ones and sketches every document
/// without them. The store's sets become each sketch's set: page sets are dropped once
/// counted and boilerplate is taken out (its keys kept after the set until story frequency is
/// done). `outlines` are the documents' word counts and leads, as read. When `frequent` is
/// given, the shingles of `boilerplate.min-documents` pages or more (known or not) are put
/// there, sorted: those of document frequency alone.
#[allow(clippy::too_many_arguments)]
pub(super) fn sketch_with_statistics(
    store: &mut SetStore,
    outlines: Vec<TextOutline>,
    sketcher: &Sketcher,
    config: &Plan,
    known: &Arc<Boilerplate>,
    progress: &dyn Progress,
    cancel: &Cancel,
    timings: &mut Timings,
    frequent_in_documents: Option<&mut Vec<u32>>,
) -> Result<(Boilerplate, Vec<Sketch>), Error> {
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
        let boilerplate = Boilerplate::from_counts(&counts, min_documents);
        if let Some(out) = frequent_in_documents {
            *out = boilerplate.keys();
        }
        let boilerplate = boilerplate.over(known);
        (boilerplate, counts.into_keys().collect::<Vec<u32>>())
    });
    cancel.check()?;
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
                // Once cancelled, the rest is skipped: the check after the pass ends the run.
                if cancel.is_cancelled() {
                    return 0;
                }
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
    cancel.check()?;
    let (mut sketches, left_outs): (Vec<Sketch>, Vec<u32>) = documents
        .into_iter()
        .map(|(_, sketch, left_out)| (sketch.expect("a rewrite visits every document"), left_out))
        .unzip();
    if min_stories > 0 {
        let stories = timings.time("first clustering", || {
            preliminary_stories(&sketches, config, cancel)
        })?;
        // Each main set is counted, its left-out keys too (they are boilerplate already, but
        // a document kept whole leaves out those spread across enough stories), and of it
        // only the frequent shingles. Sets on file are gathered and counted in parts of the key
        // space, like document frequency, but of half the budget: every sketch is held by now,
        // and on copies most keys are frequent.
        let min_stories = MinStories::of(&config.boilerplate);
        let change = timings.time("story frequency", || {
            if let Some(sets) = store.in_memory_main_sets() {
                return boilerplate.add_spread_across_stories(
                    &sets,
                    &stories,
                    min_stories,
                    &frequent,
                );
            }
            spread_on_file(
                store,
                &stories,
                frequent,
                min_stories,
                &mut boilerplate,
                part_keys(store) / 2,
            )
        });
        cancel.check()?;
        // Only the documents that hold a newly found boilerplate shingle, or one returned,
        // change. A set that left keys out holds no earlier boilerplate, so only the new
        // shingles are looked for in it; a set kept whole, or one that left nothing out, is
        // checked against all of them. A document that left out a shingle now returned is
        // sketched again from its whole main set.
        let SpreadChange { added, returned } = change;
        let holds_returned =
            |keys: &[u32]| !returned.is_empty() && keys.iter().any(|&s| returned.contains(s));
        timings.time("sketching", || {
            let mut documents: Vec<(&mut Sketch, u32)> =
                sketches.iter_mut().zip(left_outs).collect();
            store.rewrite(&mut documents, |(sketch, left_out), set, rest, out| {
                if cancel.is_cancelled() {
                    return 0;
                }
                let left_out = *left_out as usize;
                if left_out > 0 && holds_returned(rest) {
                    sketcher.resketch_whole(sketch, set, rest, &boilerplate, out);
                } else if left_out > 0 {
                    sketcher.resketch(sketch, set, rest, left_out, &added, out);
                } else if added.touches(set) || holds_returned(set) {
                    sketcher.resketch(sketch, set, &[], 0, &boilerplate, out);
                } else {
                    out.extend_from_slice(set);
                }
                0
            });
        });
        give_back_free_pages();
        cancel.check()?;
    }
    Ok((boilerplate, sketches))
}

/// How many documents' page sets hold each shingle, for the shingles held by at least
/// `at_least` of them (see [`document_counts`]). When sets are on file, the key space is
/// counted in parts (see [`key_parts`]), each part's keys gathered into memory.
pub(super) fn page_counts(store: &SetStore, at_least: usize) -> FxHashMap<u32, u32> {
    page_counts_in_parts(store, at_least, part_keys(store))
}

/// [`page_counts`] with sets on file counted in parts of about `part_keys` keys.
fn page_counts_in_parts(
    store: &SetStore,
    at_least: usize,
    part_keys: usize,
) -> FxHashMap<u32, u32> {
    if let Some(pages) = store.in_memory_sets(true) {
        return document_counts(&pages, at_least);
    }
    if at_least == 0 {
        return FxHashMap::default();
    }
    let parts = key_parts(store.page_keys(), part_keys);
    let mut counts = FxHashMap::default();
    store.gather_parts(
        parts.len(),
        |part, main, second, out| {
            let (low, high) = parts[part];
            let page = counted_set(main, second);
            let from = page.partition_point(|&k| u64::from(k) < low);
            let to = page.partition_point(|&k| u64::from(k) < high);
            out.extend_from_slice(&page[from..to]);
        },
        |part, gathered| {
            let (low, high) = parts[part];
            let sets = gathered
                .in_memory_sets(false)
                .expect("a gathered store is in memory");
            counts.extend(document_counts_within(&sets, at_least, low..high));
        },
    );
    counts
}

/// The `frequent` shingles spread across at least `min_stories` of the `stories` (the story of
/// each document), and those of one story, counted in the main sets of a store on file in
/// parts of about `part_keys` keys, and added to (or taken from) the boilerplate (see
/// [`Boilerplate::add_spread`]); returns what changed. Each
/// part of the key space is gathered as the numbers of the frequent shingles its sets hold
/// (the frequent shingles numbered in key order), so the counting looks nothing up again. The
/// shingles found are added once all parts are counted, when what the count held is let go.
fn spread_on_file(
    store: &SetStore,
    stories: &[u32],
    frequent: Vec<u32>,
    min_stories: MinStories,
    boilerplate: &mut Boilerplate,
    part_keys: usize,
) -> SpreadChange {
    let frequent = NumberedKeys::new(frequent);
    let order = story_order(stories);
    let parts = key_parts(store.set_keys(), part_keys);
    let below = |bound: u64| move |&k: &u32| u64::from(k) < bound;
    let mut spread = SpreadShingles::default();
    store.gather_parts(
        parts.len(),
        |part, set, second, out| {
            // A document's main set is its set and the boilerplate it left out (its second
            // list).
            let (low, high) = parts[part];
            for keys in [set, second] {
                let keys = &keys[keys.partition_point(below(low))..];
                let keys = &keys[..keys.partition_point(below(high))];
                out.extend(keys.iter().filter_map(|&k| frequent.number(k)));
            }
        },
        |part, gathered| {
            // The part's shingles are counted from its first.
            let (low, high) = parts[part];
            let keys = frequent.keys();
            let first = keys.partition_point(below(low));
            let end = keys.partition_point(below(high));
            let numbered = gathered
                .in_memory_sets(false)
                .expect("a gathered store is in memory");
            let counts = stories_per_shingle(&numbered, stories, &order, end - first, |n| {
                Some(n - first as u32)
            });
            spread.extend(&keys[first..end], &counts, min_stories, |s| {
                boilerplate.contains(s)
            });
        },
    );
    drop((frequent, order));
    boilerplate.add_spread(spread)
}

/// Most keys of the sets on file gathered in memory at once: about the store's memory budget,
/// so that a part gathered takes no more than the sets did before they went to the file.
fn part_keys(store: &SetStore) -> usize {
    store.budget_keys().max(MIN_KEYS_PER_PART)
}

/// The parts of the key space `[low, high)` that a pass over `keys` keys of sets on file
/// gathers: parts of about `part_keys` keys each, as many as it takes.
pub(super) fn key_parts(keys: usize, part_keys: usize) -> Vec<(u64, u64)> {
    let parts = keys.div_ceil(part_keys).max(1) as u64;
    let bound = |p: u64| (p << 32) / parts;
    (0..parts).map(|p| (bound(p), bound(p + 1))).collect()
}

/// Fewest keys counted in one part of [`key_parts`].
pub(super) const MIN_KEYS_PER_PART: usize = 1 << 24;

/// The story of each document in a first clustering, made with the boilerplate found so far.
/// Its pairs are verified from the minima, whatever `cluster.verify` says: these stories only
/// decide how many stories share a shingle, and the estimate (lowered by the margin) spares
/// reading every candidate pair's two sets, from a file for a large collection.
pub(super) fn preliminary_stories(
    sketches: &[Sketch],
    config: &Plan,
    cancel: &Cancel,
) -> Result<Vec<u32>, Error> {
    let (clusters, _, _) = cluster_with_links(sketches, SetsView::none(), config, cancel)?;
    let mut story = vec![0u32; sketches.len()];
    for (index, c) in clusters.iter().enumerate() {
        for &(doc, _) in &c.members {
            story[doc as usize] = index as u32;
        }
    }
    Ok(story)
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
    fn a_rewrite_of_a_story_copied_by_many_documents_gets_its_text_back() {
        // Keys 10..40: a story's text, copied whole by four documents and kept by a rewrite
        // that adds 20 keys of its own; the template is on three articles of their own.
        let template = 1_000_000;
        let story = || 10..40;
        let mut documents = vec![shingles(story()); 4];
        documents.push(shingles(story().chain(500..520)));
        for own in [3000, 4000, 5000] {
            documents.push(shingles([template].into_iter().chain(own..own + 50)));
        }
        for (boilerplate, sketches) in statistics_in_every_mode(&documents) {
            assert_eq!(boilerplate.keys(), [template]);
            assert_eq!(sketches[4].shingles, 50);
            assert_eq!(sketches[5].shingles, 50);
        }
    }

    /// The boilerplate and sketches of `documents` with statistics (`min-documents` 3,
    /// `min-stories` 2), the sets in memory and on file, verified exactly and by estimate; each
    /// sketch and stored set checked against those made from the document's whole set.
    fn statistics_in_every_mode(documents: &[ShingleSets]) -> Vec<(Boilerplate, Vec<Sketch>)> {
        let sets: Vec<Vec<u32>> = documents.iter().map(|d| d.set.clone()).collect();
        let modes = [
            (Verify::Exact, false),
            (Verify::Exact, true),
            (Verify::Estimate, false),
        ];
        modes
            .into_iter()
            .map(|(verify, on_file)| {
                let mut config = Config::default();
                config.boilerplate.min_documents = 3;
                config.boilerplate.min_stories = 2;
                config.cluster.verify = verify;
                let plan = Plan::try_from(&config).unwrap();
                let sketcher = Sketcher::new(&plan);
                let mut store = store_of(&sets, on_file);
                let (boilerplate, sketches) = sketch_with_statistics(
                    &mut store,
                    documents.iter().map(|d| d.outline.clone()).collect(),
                    &sketcher,
                    &plan,
                    &Arc::new(Boilerplate::none()),
                    &crate::progress::Quiet,
                    &Cancel::default(),
                    &mut Timings::default(),
                    None,
                )
                .unwrap();
                let mut buffer = Vec::new();
                for (d, (sketch, document)) in sketches.iter().zip(documents).enumerate() {
                    let (expected, set) = sketcher.sketch_shingles(document, &boilerplate);
                    assert_eq!(sketch, &expected);
                    assert_eq!(store.set(d as u32, &mut buffer), &*set);
                }
                (boilerplate, sketches)
            })
            .collect()
    }

    /// A store of the sets, in memory or on file.
    fn store_of(sets: &[Vec<u32>], on_file: bool) -> SetStore {
        if !on_file {
            return SetStore::of_sets(sets);
        }
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
    }

    #[test]
    fn sketches_with_statistics_are_those_of_the_whole_sets() {
        let template = 1_000_000;
        // X shares one half with Y and the other with Z, each of another story, so story
        // frequency takes most of X: X is then kept whole, but for the template it had left
        // out, which is found in the documents of four stories (at least `min-documents`).
        let documents = vec![
            shingles([template].into_iter().chain(10..30).chain(100..105)),
            shingles((10..20).chain(1000..1100)),
            shingles((20..30).chain(2000..2100)),
            shingles([template].into_iter().chain(3000..3050)),
            shingles([template].into_iter().chain(4000..4050)),
            shingles([template].into_iter().chain(5000..5050)),
        ];
        for (boilerplate, sketches) in statistics_in_every_mode(&documents) {
            assert_eq!(boilerplate.len(), 21);
            assert_eq!(sketches[0].shingles, 25);
            assert_eq!(sketches[1].shingles, 100);
        }
    }

    /// The same documents in a store in memory and in one on file, three to a block: main
    /// sets of keys spread over the whole key space, some shared across stories (documents
    /// `3s` to `3s + 2` make story `s`), one by each story's documents; every other document
    /// with a page set that adds furniture shared by all of those.
    fn stores() -> (SetStore, SetStore) {
        let spread = |k: u32| k.wrapping_mul(0x9E37_79B9);
        let documents: Vec<(Vec<u32>, Vec<u32>)> = (0..30u32)
            .map(|d| {
                let shared = (0..40).filter(|j| (d + j) % 4 == 0 || j % 7 == d % 7);
                let own = (0..20).map(|i| 100_000 + d * 1000 + i);
                let of_story = 200 + d / 3;
                let keys = shared.chain(own).chain([of_story]);
                let mut set: Vec<u32> = keys.map(spread).collect();
                set.sort_unstable();
                set.dedup();
                let mut page = Vec::new();
                if d % 2 == 0 {
                    page = set.iter().copied().chain((50..55).map(spread)).collect();
                    page.sort_unstable();
                }
                (set, page)
            })
            .collect();
        let [in_memory, on_file] = [usize::MAX, 0].map(|budget| {
            let mut store = SetStore::new(budget);
            let mut places = Vec::new();
            for (block, chunk) in documents.chunks(3).enumerate() {
                let mut keys = Vec::new();
                for (set, page) in chunk {
                    places.push(Place {
                        block: block as u32,
                        start: keys.len() as u32,
                        len: set.len() as u32,
                        second: page.len() as u32,
                    });
                    keys.extend_from_slice(set);
                    keys.extend_from_slice(page);
                }
                store.push_block(keys).unwrap();
            }
            store.set_places(places);
            store
        });
        assert!(!in_memory.spilled() && on_file.spilled());
        (in_memory, on_file)
    }

    #[test]
    fn statistics_of_sets_on_file_counted_in_parts_are_those_in_memory() {
        let (mut in_memory, mut on_file) = stores();
        // Parts of 40 keys: the counts of sets on file are made in many parts.
        let part_keys = 40;
        assert!(key_parts(on_file.page_keys(), part_keys).len() > 10);
        let counts = page_counts(&in_memory, 2);
        assert_eq!(page_counts_in_parts(&on_file, 2, part_keys), counts);
        assert!(page_counts_in_parts(&on_file, 0, part_keys).is_empty());
        // The furniture is in 15 page sets, a story's key in its 3 documents.
        assert_eq!(counts[&50u32.wrapping_mul(0x9E37_79B9)], 15);
        assert_eq!(counts[&200u32.wrapping_mul(0x9E37_79B9)], 3);
        assert_eq!(counts.len(), 40 + 10 + 5);
        // As the sketching pass leaves them: each main set without ten of the shared keys
        // (boilerplate by document frequency), which follow it as its second list.
        let left_out: Vec<u32> = (0..10u32).map(|k| k.wrapping_mul(0x9E37_79B9)).collect();
        for store in [&mut in_memory, &mut on_file] {
            store.rewrite(&mut [(); 30], |_, main, _page, out| {
                let start = out.len();
                out.extend(main.iter().filter(|k| !left_out.contains(k)));
                let set = out.len() - start;
                out.extend(main.iter().filter(|k| left_out.contains(k)));
                (out.len() - start - set) as u32
            });
        }
        let stories: Vec<u32> = (0..30).map(|d| d / 3).collect();
        let frequent: Vec<u32> = counts.into_keys().collect();
        let mut expected = Boilerplate::none();
        let sets = in_memory.in_memory_main_sets().unwrap();
        let min_stories = MinStories {
            boilerplate: 4,
            kept_whole: 4,
        };
        let SpreadChange { added, returned } =
            expected.add_spread_across_stories(&sets, &stories, min_stories, &frequent);
        let mut boilerplate = Boilerplate::from_keys([7]);
        let found = spread_on_file(
            &on_file,
            &stories,
            frequent.clone(),
            min_stories,
            &mut boilerplate,
            part_keys,
        );
        assert_eq!(found.added.keys(), added.keys());
        assert_eq!(found.returned.keys(), returned.keys());
        let found = found.added;
        // The keys shared across stories, those left out of the sets too; not the furniture
        // (in no main set) nor a story's key.
        assert_eq!(added.len(), 40);
        // A set of the shared keys and one more is kept whole but for the shared keys, which
        // both counts found across enough stories for that.
        let own = 100_000u32.wrapping_mul(0x9E37_79B9);
        let mut whole: Vec<u32> = frequent
            .iter()
            .copied()
            .filter(|k| added.contains(*k))
            .collect();
        whole.push(own);
        whole.sort_unstable();
        for found in [&added, &found, &expected, &boilerplate] {
            assert_eq!(found.filter(&whole).as_ref(), &[own]);
        }
        let expected = expected.over(&Arc::new(Boilerplate::from_keys([7])));
        assert_eq!(boilerplate.keys(), expected.keys());
        assert!(on_file.take_failure().is_none());
    }

    #[test]
    fn key_parts_cover_the_key_space_once() {
        for (keys, part_keys, parts) in [
            (usize::MAX / 2, usize::MAX, 1),
            (0, MIN_KEYS_PER_PART, 1),
            (3 * MIN_KEYS_PER_PART + 1, MIN_KEYS_PER_PART, 4),
        ] {
            let found = key_parts(keys, part_keys);
            assert_eq!(found.len(), parts);
            assert_eq!(found[0].0, 0);
            assert_eq!(found[parts - 1].1, 1 << 32);
            assert!(found
                .windows(2)
                .all(|w| w[0].1 == w[1].0 && w[0].0 < w[0].1));
        }
    }
}
