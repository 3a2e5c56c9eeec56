//! Running the stages over documents. A [`Collector`] takes documents one at a time from any
//! source (the readers, an embedding program) and sends them in batches over a bounded channel
//! to rayon workers that canonicalize and shingle them (a document's text is dropped as soon as
//! its shingle set is made); one collector thread gathers the sets. Once every document is in,
//! documents are put in id order, so clusters and output do not depend on input order or thread
//! count; shingles common to many documents are found (boilerplate), and each set becomes a
//! signature. Progress and warnings go to a [`Progress`].

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{bounded, Sender};
use rayon::prelude::*;
use rustc_hash::FxHashMap;

use crate::boilerplate::{
    document_counts, document_counts_within, stories_per_shingle, story_order, Boilerplate,
};
use crate::cluster::{cluster, cluster_with_links, Cluster, ClusterStats, Link};
use crate::config::{Config, Verify};
use crate::error::Error;
use crate::io::read::{read_inputs, Origin, ReadError, ReadOptions, ReadSummary, Record};
use crate::keyset::KeyMap;
use crate::progress::{Progress, Stage};
use crate::sets::{Place, SetStore, SetsView};
use crate::sketch::{Scratch, Sketch, Sketcher};

/// Records per batch sent to the workers.
const BATCH_RECORDS: usize = 256;
/// Text bytes per batch sent to the workers.
const BATCH_BYTES: usize = 4 << 20;

/// Wall-clock time of each stage, in the order they ran.
#[derive(Debug, Clone, Default)]
pub struct Timings(pub Vec<(&'static str, Duration)>);

impl Timings {
    /// Records the time from `since` to now as `stage`, and moves `since` to now.
    pub fn lap(&mut self, stage: &'static str, since: &mut Instant) {
        let now = Instant::now();
        self.0.push((stage, now - *since));
        *since = now;
    }

    /// Runs `f`, adding its wall-clock time to `stage`.
    pub fn time<T>(&mut self, stage: &'static str, f: impl FnOnce() -> T) -> T {
        let started = Instant::now();
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

/// How a [`Collector`] runs.
#[derive(Clone)]
pub struct CollectOptions {
    /// Worker threads; 0 for one per core.
    pub threads: usize,
    /// Make a second document with an already-seen id an error instead of a warning.
    pub strict: bool,
    /// Boilerplate shingles found in earlier collections, left out besides those the corpus
    /// statistics of this one find.
    pub known: Arc<Boilerplate>,
    /// Where progress and warnings go.
    pub progress: Arc<dyn Progress>,
}

impl Default for CollectOptions {
    fn default() -> Self {
        CollectOptions {
            threads: 0,
            strict: false,
            known: Arc::new(Boilerplate::none()),
            progress: Arc::new(crate::progress::Quiet),
        }
    }
}

/// The shingled batches the workers made, each a result of storing its sets.
type Batches = Vec<std::io::Result<Vec<Shingled>>>;

/// Takes documents in and sketches them: each [`Collector::add`] queues a document, full
/// batches go to the workers at once, and [`Collector::finish`] waits for them and makes the
/// sketches of the whole collection.
pub struct Collector {
    config: Config,
    options: CollectOptions,
    pool: Arc<rayon::ThreadPool>,
    sketcher: Arc<Sketcher>,
    store: Arc<Mutex<SetStore>>,
    batch: Vec<Record>,
    batch_bytes: usize,
    sender: Option<Sender<Vec<Record>>>,
    workers: Option<JoinHandle<Batches>>,
    read: ReadSummary,
    added: u64,
    started: Instant,
}

/// The thread pool of a run with `threads` threads (0: one per core) named `name-N`.
pub fn thread_pool(threads: usize, name: &'static str) -> Result<rayon::ThreadPool, Error> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(move |i| format!("{name}-{i}"))
        .build()
        .map_err(|source| Error::Threads {
            threads,
            message: source.to_string(),
        })
}

impl Collector {
    /// A collector for documents to sketch under `config` (validated by the caller); its worker
    /// threads start at once and wait for batches.
    pub fn new(config: &Config, options: CollectOptions) -> Result<Collector, Error> {
        give_back_large_blocks();
        let pool = Arc::new(thread_pool(options.threads, "sketch")?);
        let sketcher = Arc::new(Sketcher::new(config));
        let store = Arc::new(Mutex::new(SetStore::new(
            config.cluster.set_memory_mb << 20,
        )));
        let (sender, receiver) = bounded::<Vec<Record>>(2 * pool.current_num_threads() + 2);
        let statistics = config.boilerplate.min_documents > 0 || config.boilerplate.min_stories > 0;
        let exact = config.cluster.verify == Verify::Exact;
        let pages = config.boilerplate.min_documents > 0;
        let workers = {
            let (pool, sketcher, store) = (pool.clone(), sketcher.clone(), store.clone());
            let (known, progress) = (options.known.clone(), options.progress.clone());
            std::thread::Builder::new()
                .name("shingling".into())
                .spawn(move || {
                    pool.install(|| {
                        receiver
                            .into_iter()
                            .par_bridge()
                            .map_init(Scratch::default, |scratch, batch| {
                                let documents = shingle_batch(
                                    batch, &sketcher, scratch, &known, statistics, pages, exact,
                                    &store,
                                );
                                if let Ok(documents) = &documents {
                                    progress.advance(Stage::Shingling, documents.len() as u64);
                                }
                                documents
                            })
                            .collect()
                    })
                })
                .map_err(|source| Error::Threads {
                    threads: 1,
                    message: source.to_string(),
                })?
        };
        Ok(Collector {
            config: config.clone(),
            options,
            pool,
            sketcher,
            store,
            batch: Vec::with_capacity(BATCH_RECORDS),
            batch_bytes: 0,
            sender: Some(sender),
            workers: Some(workers),
            read: ReadSummary::default(),
            added: 0,
            started: Instant::now(),
        })
    }

    /// Queues one document; a full batch goes to the workers.
    pub fn add(&mut self, record: Record) {
        self.options.progress.advance(Stage::Reading, 1);
        self.added += 1;
        self.batch_bytes += record.text.len();
        self.batch.push(record);
        if self.batch.len() >= BATCH_RECORDS || self.batch_bytes >= BATCH_BYTES {
            self.send_batch();
        }
    }

    /// Queues one document given by a program rather than read from a file: its origin is
    /// its position among the documents added (`document:N` in messages).
    pub fn add_document(&mut self, id: String, text: &str, time: Option<i64>) -> Result<(), Error> {
        let position = self.added + 1;
        if id.is_empty() {
            return Err(Error::EmptyId { position });
        }
        self.add(Record {
            id,
            text: text.to_owned(),
            time,
            columns: Vec::new(),
            origin: Origin {
                order: (u32::MAX, position),
                source: Arc::from("document"),
                line: position,
            },
        });
        Ok(())
    }

    /// Documents added so far.
    pub fn added(&self) -> u64 {
        self.added
    }

    fn send_batch(&mut self) {
        self.batch_bytes = 0;
        let full = std::mem::replace(&mut self.batch, Vec::with_capacity(BATCH_RECORDS));
        if let Some(sender) = &self.sender {
            // A closed channel means the workers stopped; finish reports why.
            let _ = sender.send(full);
        }
    }

    /// Reads every input and adds its records; each skipped record's one-line report goes to
    /// the progress as a warning. Fails on an input that cannot be read at all.
    pub fn read(&mut self, inputs: &[PathBuf], options: &ReadOptions) -> Result<(), ReadError> {
        let progress = self.options.progress.clone();
        let mut warn = |message: String| progress.warn(&message);
        let summary = read_inputs(inputs, options, &mut |record| self.add(record), &mut warn)?;
        self.read.records += summary.records;
        self.read.skipped += summary.skipped;
        self.read.ignored_files += summary.ignored_files;
        Ok(())
    }

    /// Counts `records` skipped by a source of the caller's, for the summary.
    pub fn count_skipped(&mut self, records: u64) {
        self.read.skipped += records;
    }

    /// Waits for the workers and sketches the whole collection.
    pub fn finish(mut self) -> Result<Collection, Error> {
        if !self.batch.is_empty() {
            self.send_batch();
        }
        // Dropping the sender closes the channel, so the workers end.
        self.sender = None;
        let batches = match self.workers.take().expect("finish runs once").join() {
            Ok(batches) => batches,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        let progress = self.options.progress.clone();
        progress.finish(Stage::Reading);
        progress.finish(Stage::Shingling);
        let mut timings = Timings::default();
        timings
            .0
            .push(("reading and shingling", self.started.elapsed()));
        let store = Arc::into_inner(self.store)
            .expect("the workers are done")
            .into_inner()
            .expect("no thread panics");
        let mut documents: Vec<Shingled> = Vec::new();
        for batch in batches {
            documents.extend(batch.map_err(Error::spill)?);
        }
        let strict = self.options.strict;
        let duplicates = timings.time("ordering by id", || {
            self.pool
                .install(|| drop_duplicate_ids(&mut documents, strict, &*progress))
        })?;
        give_back_free_pages();
        collect(
            documents,
            store,
            &self.sketcher,
            &self.config,
            &self.pool,
            &self.options,
            self.read,
            duplicates,
            timings,
        )
    }
}

/// Canonicalizes and shingles one batch, storing its sets as one block of the store.
#[allow(clippy::too_many_arguments)]
fn shingle_batch(
    batch: Vec<Record>,
    sketcher: &Sketcher,
    scratch: &mut Scratch,
    known: &Boilerplate,
    statistics: bool,
    pages: bool,
    exact: bool,
    store: &Mutex<SetStore>,
) -> std::io::Result<Vec<Shingled>> {
    // The batch's sets, one after another: with statistics each main set and page set as
    // read, else each sketch's set when verification is exact. A text has at most about one
    // shingle per four bytes, and a page set adds about as many again.
    let bytes: usize = batch.iter().map(|r| r.text.len()).sum();
    let mut keys = Vec::with_capacity(if statistics { bytes / 4 } else { 0 });
    let mut documents: Vec<Shingled> = batch
        .into_iter()
        .map(|record| {
            let start = keys.len() as u32;
            let (place, sketch) = if statistics {
                // The sets go straight into the batch's list.
                let appended = sketcher.append_shingles(&record.text, scratch, pages, &mut keys);
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
    keys.shrink_to_fit();
    let block = store.lock().expect("no thread panics").push_block(keys)?;
    documents.iter_mut().for_each(|d| d.place.block = block);
    Ok(documents)
}

/// Makes the collection of shingled documents in id order: with corpus statistics, finds the
/// boilerplate and sketches every document without it.
#[allow(clippy::too_many_arguments)]
fn collect(
    documents: Vec<Shingled>,
    mut store: SetStore,
    sketcher: &Sketcher,
    config: &Config,
    pool: &rayon::ThreadPool,
    options: &CollectOptions,
    read: ReadSummary,
    duplicates: u64,
    mut timings: Timings,
) -> Result<Collection, Error> {
    let statistics = config.boilerplate.min_documents > 0 || config.boilerplate.min_stories > 0;
    let exact = config.cluster.verify == Verify::Exact;
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
    let sketch_started = Instant::now();
    let progress = &*options.progress;
    let boilerplate = if statistics {
        let (boilerplate, made) = pool.install(|| {
            sketch_with_statistics(
                &mut store,
                sketches,
                sketcher,
                config,
                &options.known,
                progress,
                &mut timings,
            )
        });
        sketches = made;
        boilerplate
    } else {
        timings
            .0
            .push(("collecting sketches", sketch_started.elapsed()));
        (*options.known).clone()
    };
    progress.finish(Stage::Sketching);
    if let Some(failure) = store.take_failure() {
        return Err(Error::spill(failure));
    }
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
    let mut documents: Vec<(Sketch, u32)> = read.into_iter().map(|sketch| (sketch, 0)).collect();
    timings.time("sketching", || {
        store.rewrite(&mut documents, |(sketch, left_out), main, _page, out| {
            progress.advance(Stage::Sketching, 1);
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
    progress: &dyn Progress,
) -> Result<u64, Error> {
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
                    return Err(ReadError::Strict(message).into());
                }
                progress.warn(&format!("{message}; record skipped"));
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
    /// The links that joined the clusters (see [`crate::cluster::joined_via`]).
    pub links: Vec<Link>,
    /// Its wall-clock time.
    pub elapsed: Duration,
}

/// Clusters a collection with `threads` threads (0: one per core).
pub fn cluster_collection(
    collection: &Collection,
    config: &Config,
    threads: usize,
    progress: &dyn Progress,
) -> Result<Clustering, Error> {
    let sketches = &collection.sketches;
    let pool = thread_pool(threads, "cluster")?;
    let started = Instant::now();
    let sets = collection
        .sets
        .as_ref()
        .map_or(SetsView::none(), |store| SetsView::of(store, 0));
    let (clusters, stats, links) = pool.install(|| cluster_with_links(sketches, sets, config));
    let elapsed = started.elapsed();
    if let Some(failure) = collection.sets.as_ref().and_then(SetStore::take_failure) {
        return Err(Error::spill(failure));
    }
    progress.advance(Stage::Clustering, sketches.len() as u64);
    progress.finish(Stage::Clustering);
    Ok(Clustering {
        clusters,
        stats,
        links,
        elapsed,
    })
}

/// What a summary line says of the candidate buckets cut at `cluster.max-bucket`, from
/// `"; "` on; empty when none was cut.
pub fn cut_buckets_note(buckets: usize, documents: usize) -> String {
    match buckets {
        0 => String::new(),
        buckets => format!(
            "; {buckets} candidate buckets of more distinct documents than cluster.max-bucket were cut: {documents} documents in them were not paired through them"
        ),
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
