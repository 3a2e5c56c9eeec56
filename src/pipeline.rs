//! Running the stages over inputs: one reader thread sends batches of records over a bounded
//! channel to rayon workers that canonicalize and shingle them (a record's text is dropped as
//! soon as its shingle set is made), and one collector gathers the sets. Documents are then put
//! in id order, so clusters and output do not depend on input order or thread count; shingles
//! common to many documents are found (boilerplate), and each set becomes a signature. Progress bars and
//! warnings go to stderr through a `Reporter`.

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use crossbeam_channel::{bounded, Sender};
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;
use rustc_hash::FxHashMap;

use crate::boilerplate::{
    document_counts, document_counts_within, stories_per_shingle, story_order, Boilerplate,
};
use crate::cluster::{cluster, Cluster, ClusterStats};
use crate::config::{Config, Verify};
use crate::io::read::{read_inputs, Origin, ReadError, ReadOptions, ReadSummary, Record};
use crate::io::write::Row;
use crate::keyset::KeyMap;
use crate::sets::{Place, SetStore, SetsView};
use crate::sketch::{Scratch, Sketch, Sketcher};

/// Records per batch sent to the workers.
const BATCH_RECORDS: usize = 256;
/// Text bytes per batch sent to the workers.
const BATCH_BYTES: usize = 4 << 20;

/// Progress bars and warnings on stderr.
#[derive(Clone)]
pub struct Reporter {
    bars: MultiProgress,
}

impl Reporter {
    /// Bars drawn when `visible` (stderr is a terminal and not `--quiet`), hidden otherwise.
    pub fn new(visible: bool) -> Reporter {
        let target = if visible {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        Reporter {
            bars: MultiProgress::with_draw_target(target),
        }
    }

    /// A counting bar for one stage.
    pub fn bar(&self, stage: &str, unit: &str) -> ProgressBar {
        let style = ProgressStyle::with_template(&format!(
            "{{prefix:>10.bold}} {{spinner}} {{human_pos}} {unit} {{per_sec:>12}} {{elapsed:>4}}"
        ))
        .expect("a valid template");
        let bar = self.bars.add(ProgressBar::new_spinner().with_style(style));
        bar.set_prefix(stage.to_owned());
        bar.enable_steady_tick(Duration::from_millis(200));
        bar
    }

    /// Prints one warning line without breaking the bars.
    pub fn warn(&self, message: &str) {
        let line = format!("warning: {message}");
        if self.bars.is_hidden() {
            eprintln!("{line}");
        } else {
            let _ = self.bars.println(line);
        }
    }
}

/// Wall-clock time of each stage, in the order they ran.
#[derive(Debug, Clone, Default)]
pub struct Timings(pub Vec<(&'static str, Duration)>);

impl Timings {
    /// Records the time from `since` to now as `stage`, and moves `since` to now.
    pub fn lap(&mut self, stage: &'static str, since: &mut std::time::Instant) {
        let now = std::time::Instant::now();
        self.0.push((stage, now - *since));
        *since = now;
    }

    /// Runs `f`, adding its wall-clock time to `stage`.
    pub fn time<T>(&mut self, stage: &'static str, f: impl FnOnce() -> T) -> T {
        let started = std::time::Instant::now();
        let out = f();
        let elapsed = started.elapsed();
        match self.0.iter_mut().find(|(name, _)| *name == stage) {
            Some((_, total)) => *total += elapsed,
            None => self.0.push((stage, elapsed)),
        }
        out
    }

    /// One line: each stage with its seconds.
    pub fn line(&self) -> String {
        self.0
            .iter()
            .map(|(stage, d)| format!("{stage} {:.3} s", d.as_secs_f64()))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// A document read and shingled, waiting for its sketch.
struct Shingled {
    id: String,
    time: Option<i64>,
    origin: Origin,
    /// Where its sets are in the store.
    place: Place,
    /// Its sketch: finished when no corpus statistics are wanted, else only its word count
    /// and lead.
    sketch: Sketch,
}

/// Everything read and sketched from the inputs, by document number (documents in id order,
/// ids unique).
#[derive(Debug)]
pub struct Collection {
    /// Document ids.
    pub ids: Vec<String>,
    /// Where each document was read.
    pub origins: Vec<Origin>,
    /// Each document's time, when a time column is read.
    pub times: Vec<Option<i64>>,
    /// Each document's sketch.
    pub sketches: Vec<Sketch>,
    /// Each document's shingle set, boilerplate left out, when verification is exact.
    pub sets: Option<SetStore>,
    /// Bytes of the temporary file that held the shingle sets: 0 when they fit in memory.
    pub set_file_bytes: u64,
    /// Counts from reading.
    pub read: ReadSummary,
    /// Records dropped for a duplicate id.
    pub duplicates: u64,
    /// Shingles left out as boilerplate: those found in this collection and those given.
    pub boilerplate: Boilerplate,
    /// Time of each stage so far.
    pub timings: Timings,
}

/// Reads and sketches all inputs with `threads` threads (0: one per core).
pub fn sketch_inputs(
    inputs: &[PathBuf],
    options: &ReadOptions,
    config: &Config,
    threads: usize,
    reporter: &Reporter,
) -> Result<Collection, ReadError> {
    sketch_inputs_with(
        inputs,
        options,
        config,
        threads,
        reporter,
        &Boilerplate::none(),
    )
}

/// [`sketch_inputs`], leaving out `known` boilerplate shingles (found in earlier
/// collections) besides those the corpus statistics of these inputs find.
pub fn sketch_inputs_with(
    inputs: &[PathBuf],
    options: &ReadOptions,
    config: &Config,
    threads: usize,
    reporter: &Reporter,
    known: &Boilerplate,
) -> Result<Collection, ReadError> {
    give_back_large_blocks();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("sketch-{i}"))
        .build()
        .expect("a thread pool");
    let (sender, receiver) = bounded::<Vec<Record>>(2 * pool.current_num_threads() + 2);
    let reading = reporter.bar("reading", "docs");
    let shingling = reporter.bar("shingling", "docs");
    let sketcher = Sketcher::new(config);
    let statistics = config.boilerplate.min_documents > 0 || config.boilerplate.min_stories > 0;
    let exact = config.cluster.verify == Verify::Exact;
    let store = Mutex::new(SetStore::new(config.cluster.set_memory_mb << 20));
    let mut timings = Timings::default();
    let started = std::time::Instant::now();
    let (read, batches) = std::thread::scope(|scope| {
        let reader = std::thread::Builder::new()
            .name("reader".into())
            .spawn_scoped(scope, || {
                // The sender is moved here, so the channel closes when reading ends.
                let sender = sender;
                let mut warn = |message: String| reporter.warn(&message);
                send_batches(inputs, options, &sender, &|| reading.inc(1), &mut warn)
            })
            .expect("spawn the reader thread");
        let batches: Vec<std::io::Result<Vec<Shingled>>> = pool.install(|| {
            receiver
                .into_iter()
                .par_bridge()
                .map_init(Scratch::default, |scratch, batch| {
                    let pages = config.boilerplate.min_documents > 0;
                    // The batch's sets, one after another: with statistics each main set and
                    // page set as read, else each sketch's set when verification is exact.
                    // A text has at most about one shingle per four bytes, and a page set
                    // adds about as many again.
                    let bytes: usize = batch.iter().map(|r| r.text.len()).sum();
                    let mut keys = Vec::with_capacity(if statistics { bytes / 4 } else { 0 });
                    let mut documents: Vec<Shingled> = batch
                        .into_iter()
                        .map(|record| {
                            let start = keys.len() as u32;
                            let (place, sketch) = if statistics {
                                // The sets go straight into the batch's list.
                                let appended = sketcher.append_shingles(
                                    &record.text,
                                    scratch,
                                    pages,
                                    &mut keys,
                                );
                                let place = Place {
                                    block: 0,
                                    start,
                                    len: appended.set,
                                    page: appended.page,
                                };
                                let sketch = Sketch {
                                    words: appended.words,
                                    lead: appended.lead,
                                    ..Sketch::default()
                                };
                                (place, sketch)
                            } else {
                                let shingles = sketcher.shingles(&record.text, scratch, pages);
                                let (sketch, set) = sketcher.sketch_shingles(&shingles, known);
                                if exact {
                                    keys.extend_from_slice(&set);
                                }
                                let len = keys.len() as u32 - start;
                                let place = Place {
                                    block: 0,
                                    start,
                                    len,
                                    page: 0,
                                };
                                (place, sketch)
                            };
                            Shingled {
                                id: record.id,
                                time: record.time,
                                origin: record.origin,
                                place,
                                sketch,
                            }
                        })
                        .collect();
                    shingling.inc(documents.len() as u64);
                    keys.shrink_to_fit();
                    let block = store.lock().expect("no thread panics").push_block(keys)?;
                    documents.iter_mut().for_each(|d| d.place.block = block);
                    Ok(documents)
                })
                .collect()
        });
        (
            reader.join().expect("the reader thread does not panic"),
            batches,
        )
    });
    reading.finish();
    shingling.finish();
    timings.0.push(("reading and shingling", started.elapsed()));
    let read = read?;
    let mut store = store.into_inner().expect("no thread panics");
    let mut documents: Vec<Shingled> = Vec::new();
    for batch in batches {
        documents.extend(batch.map_err(|source| ReadError::Spill {
            dir: std::env::temp_dir().display().to_string(),
            source,
        })?);
    }
    let duplicates = timings.time("ordering by id", || {
        drop_duplicate_ids(&mut documents, options.strict, reporter)
    })?;
    give_back_free_pages();
    let mut ids = Vec::with_capacity(documents.len());
    let mut origins = Vec::with_capacity(documents.len());
    let mut times = Vec::with_capacity(documents.len());
    let mut places = Vec::with_capacity(documents.len());
    let mut sketches = Vec::with_capacity(documents.len());
    for d in documents {
        ids.push(d.id);
        origins.push(d.origin);
        times.push(d.time);
        places.push(d.place);
        sketches.push(d.sketch);
    }
    store.set_places(places);
    let sketching = reporter.bar("sketching", "docs");
    let sketch_started = std::time::Instant::now();
    let boilerplate = if statistics {
        let (boilerplate, made) = pool.install(|| {
            sketch_with_statistics(
                &mut store,
                sketches,
                &sketcher,
                config,
                known,
                &sketching,
                &mut timings,
            )
        });
        sketches = made;
        boilerplate
    } else {
        timings
            .0
            .push(("collecting sketches", sketch_started.elapsed()));
        known.clone()
    };
    sketching.finish();
    Ok(Collection {
        ids,
        origins,
        times,
        sketches,
        set_file_bytes: store.file_bytes(),
        sets: exact.then_some(store),
        read,
        duplicates,
        boilerplate,
        timings,
    })
}

/// Has glibc's malloc map every block of 128 KiB or more on its own and unmap it when freed.
/// By default it raises that threshold to the size of each such block freed (up to 32 MiB),
/// after which the large lists that each stage makes and drops (key ranges, candidate keys,
/// pairs) come from the heap, and their memory stays with the process for good.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn give_back_large_blocks() {
    use std::ffi::c_int;
    const M_MMAP_THRESHOLD: c_int = -3;
    extern "C" {
        fn mallopt(param: c_int, value: c_int) -> c_int;
    }
    // SAFETY: mallopt only sets a tuning parameter of malloc, and any threshold is valid.
    unsafe {
        mallopt(M_MMAP_THRESHOLD, 128 << 10);
    }
}

/// Other allocators are left as they are.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn give_back_large_blocks() {}

/// Has glibc's malloc give back to the system every whole page of its heaps that is free.
/// Shingle sets and other per-document lists are small blocks on the heap; when many are freed
/// (the page sets once counted, the keys a set leaves out, the batches once ordered), the holes
/// they leave between the sets still held stay with the process unless trimmed.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn give_back_free_pages() {
    extern "C" {
        fn malloc_trim(pad: usize) -> std::ffi::c_int;
    }
    // SAFETY: malloc_trim only returns free memory of malloc's own heaps to the system.
    unsafe {
        malloc_trim(0);
    }
}

/// Other allocators are left as they are.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn give_back_free_pages() {}

/// Reads every input and sends its records in batches (of `BATCH_RECORDS` records or
/// `BATCH_BYTES` of text, whichever comes first) over `sender`, calling `on_record` for each
/// record and `warn` for each skipped one. The reader thread of a pipeline runs this.
pub fn send_batches(
    inputs: &[PathBuf],
    options: &ReadOptions,
    sender: &Sender<Vec<Record>>,
    on_record: &dyn Fn(),
    warn: &mut dyn FnMut(String),
) -> Result<ReadSummary, ReadError> {
    let mut batch = Vec::with_capacity(BATCH_RECORDS);
    let mut bytes = 0;
    let mut emit = |record: Record| {
        on_record();
        bytes += record.text.len();
        batch.push(record);
        if batch.len() >= BATCH_RECORDS || bytes >= BATCH_BYTES {
            bytes = 0;
            let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH_RECORDS));
            // A closed channel means the workers stopped; reading on is useless.
            let _ = sender.send(full);
        }
    };
    let result = read_inputs(inputs, options, &mut emit, warn);
    if !batch.is_empty() {
        let _ = sender.send(batch);
    }
    result
}

/// Finds the boilerplate shingles of the collection (document frequency, then story frequency
/// over a first clustering), adds them to the `known` ones and sketches every document
/// without them. The store's sets become each sketch's set: page sets are dropped once
/// counted and boilerplate is taken out (its keys kept after the set until story frequency is
/// done). `read` are the documents' sketches as read: their word counts and leads.
fn sketch_with_statistics(
    store: &mut SetStore,
    read: Vec<Sketch>,
    sketcher: &Sketcher,
    config: &Config,
    known: &Boilerplate,
    sketching: &ProgressBar,
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
    let mut documents: Vec<(Sketch, u32)> = read.into_iter().map(|sketch| (sketch, 0)).collect();
    timings.time("sketching", || {
        store.rewrite(&mut documents, |(sketch, left_out), main, _page, out| {
            sketching.inc(1);
            let mut taken = Vec::new();
            sketcher.sketch_set(sketch, main, &boilerplate, out, &mut taken);
            *left_out = taken.len() as u32;
            if min_stories == 0 {
                return 0;
            }
            out.extend_from_slice(&taken);
            *left_out
        });
    });
    give_back_free_pages();
    let (mut sketches, left_outs): (Vec<Sketch>, Vec<u32>) = documents.into_iter().unzip();
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
fn page_counts(store: &SetStore, at_least: usize) -> FxHashMap<u32, u32> {
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
/// counts one at a time: the whole space when every set is in memory, else parts of about
/// twice the store's memory budget of keys (counting comes before the other large lists are
/// made).
fn key_parts(store: &SetStore, keys: usize) -> Vec<(u64, u64)> {
    let parts = if store.spilled() {
        keys.div_ceil((2 * store.budget_keys()).max(MIN_KEYS_PER_PART))
            .max(1) as u64
    } else {
        1
    };
    let bound = |p: u64| (p << 32) / parts;
    (0..parts).map(|p| (bound(p), bound(p + 1))).collect()
}

/// Fewest keys counted in one part of [`key_parts`].
const MIN_KEYS_PER_PART: usize = 1 << 24;

/// The story of each document in a first clustering, made with the boilerplate found so far.
/// Its pairs are verified from the minima, whatever `cluster.verify` says: these stories only
/// decide how many stories share a shingle, and the estimate (lowered by the margin) spares
/// reading every candidate pair's two sets, from a file for a large collection.
fn preliminary_stories(sketches: &[Sketch], config: &Config) -> Vec<u32> {
    let (clusters, _) = cluster(sketches, SetsView::none(), config);
    let mut story = vec![0u32; sketches.len()];
    for (index, c) in clusters.iter().enumerate() {
        for &(doc, _) in &c.members {
            story[doc as usize] = index as u32;
        }
    }
    story
}

/// Sorts documents by id and drops the later of two records with the same id, reporting it.
fn drop_duplicate_ids(
    documents: &mut Vec<Shingled>,
    strict: bool,
    reporter: &Reporter,
) -> Result<u64, ReadError> {
    documents.par_sort_unstable_by(|a, b| a.id.cmp(&b.id).then_with(|| a.origin.cmp(&b.origin)));
    let before = documents.len();
    let mut kept: Vec<Shingled> = Vec::with_capacity(before);
    for document in documents.drain(..) {
        match kept.last() {
            Some(first) if first.id == document.id => {
                let message = format!(
                    "{}: duplicate id {:?}, first seen at {}; ids must be unique",
                    document.origin, document.id, first.origin
                );
                if strict {
                    return Err(ReadError::Strict(message));
                }
                reporter.warn(&format!("{message}; record skipped"));
            }
            _ => kept.push(document),
        }
    }
    *documents = kept;
    Ok((before - documents.len()) as u64)
}

/// The outcome of clustering a collection.
#[derive(Debug)]
pub struct Clustering {
    /// Clusters in output order.
    pub clusters: Vec<Cluster>,
    /// Counts from the clustering.
    pub stats: ClusterStats,
    /// Its wall-clock time.
    pub elapsed: Duration,
}

/// Clusters a collection.
pub fn cluster_collection(
    collection: &Collection,
    config: &Config,
    threads: usize,
    reporter: &Reporter,
) -> Clustering {
    let bar = reporter.bar("clustering", "docs");
    let sketches = &collection.sketches;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("cluster-{i}"))
        .build()
        .expect("a thread pool");
    let started = std::time::Instant::now();
    let sets = collection
        .sets
        .as_ref()
        .map_or(SetsView::none(), |store| SetsView::of(store, 0));
    let (clusters, stats) = pool.install(|| cluster(sketches, sets, config));
    let elapsed = started.elapsed();
    bar.inc(sketches.len() as u64);
    bar.finish();
    Clustering {
        clusters,
        stats,
        elapsed,
    }
}

/// The status of a document in the output.
pub fn status(sketch: &Sketch) -> &'static str {
    if sketch.is_comparable() {
        "ok"
    } else {
        "too_short"
    }
}

/// The output rows of a clustering, in order.
pub fn rows<'a>(
    collection: &'a Collection,
    clustering: &'a Clustering,
) -> impl Iterator<Item = Row<'a>> + 'a {
    clustering.clusters.iter().flat_map(move |c| {
        let smallest = c.members.iter().map(|m| m.0).min().expect("non-empty");
        let cluster_id = collection.ids[smallest as usize].as_str();
        let size = c.members.len();
        c.members.iter().map(move |&(doc, similarity)| Row {
            doc_id: &collection.ids[doc as usize],
            cluster_id,
            cluster_size: size,
            similarity,
            status: status(&collection.sketches[doc as usize]),
        })
    })
}

/// The one-line summary of a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// Documents clustered.
    pub documents: usize,
    /// Clusters, singletons included.
    pub clusters: usize,
    /// Clusters of two or more documents.
    pub multi_clusters: usize,
    /// Documents in clusters of two or more.
    pub clustered_documents: usize,
    /// Documents too short to compare.
    pub too_short: usize,
    /// Records skipped while reading or for a duplicate id.
    pub skipped: u64,
    /// Bytes of the temporary file of shingle sets: 0 when they fit in memory.
    pub set_file_bytes: u64,
}

impl Summary {
    /// The summary of a run.
    pub fn new(collection: &Collection, clustering: &Clustering) -> Summary {
        let multi = clustering.clusters.iter().filter(|c| c.members.len() > 1);
        Summary {
            documents: collection.ids.len(),
            clusters: clustering.clusters.len(),
            multi_clusters: multi.clone().count(),
            clustered_documents: multi.map(|c| c.members.len()).sum(),
            too_short: collection
                .sketches
                .iter()
                .filter(|s| !s.is_comparable())
                .count(),
            skipped: collection.read.skipped + collection.duplicates,
            set_file_bytes: collection.set_file_bytes,
        }
    }

    /// As printed on stderr.
    pub fn line(&self, elapsed: Duration) -> String {
        let on_file = match self.set_file_bytes {
            0 => String::new(),
            bytes => format!(
                "; shingle sets held in a temporary file of {:.0} MB (cluster.set-memory-mb)",
                bytes as f64 / 1e6
            ),
        };
        format!(
            "{} documents in {} clusters ({} clusters of 2 or more hold {} documents); {} too short to compare; {} records skipped{on_file}; {:.2} s",
            self.documents,
            self.clusters,
            self.multi_clusters,
            self.clustered_documents,
            self.too_short,
            self.skipped,
            elapsed.as_secs_f64()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sketch::Shingles;

    fn shingles(keys: impl IntoIterator<Item = u32>) -> Shingles {
        let mut set: Vec<u32> = keys.into_iter().collect();
        set.sort_unstable();
        set.dedup();
        Shingles {
            words: set.len() as u32 + 2,
            lead: crate::shingle::Lead::of(&set[..3]),
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
        let read: Vec<Sketch> = documents
            .iter()
            .map(|d| Sketch {
                words: d.words,
                lead: d.lead.clone(),
                ..Sketch::default()
            })
            .collect();
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
                            page: 0,
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
                read.clone(),
                &sketcher,
                &config,
                &Boilerplate::none(),
                &ProgressBar::hidden(),
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
