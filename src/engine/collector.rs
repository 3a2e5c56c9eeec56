//! Taking documents in: a [`Collector`] takes documents one at a time from any source (the
//! readers, an embedding program) and sends them in batches over a bounded channel to rayon
//! workers that canonicalize and shingle them (a document's text is dropped as soon as its
//! shingle set is made), each batch's sets stored as one block of the set store. Once every
//! document is in, documents are put in id order (a repeated id keeps its first record), so
//! clusters and output do not depend on input order or thread count, and the collection is
//! sketched, with corpus statistics when the configuration asks for them.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;

use crossbeam_channel::{bounded, Sender};
use rayon::prelude::*;

use super::allocator::{give_back_free_pages, give_back_large_blocks};
use super::sequences::{SequencePlace, Sequences};
use super::statistics::sketch_with_statistics;
use super::{thread_pool, Collection, Ids, Timings};
use crate::cancel::Cancel;
use crate::config::{Plan, Verify};
use crate::corpus::boilerplate::Boilerplate;
use crate::corpus::set_store::{Place, SetStore};
use crate::error::Error;
use crate::io::read::{read_inputs, Origin, ReadError, ReadItem, ReadOptions, ReadSummary, Record};
use crate::progress::{Progress, Stage};
use crate::reuse::Text;
use crate::sketch::{Sketch, SketchBuffers, Sketcher, TextOutline};

/// Records per batch sent to the workers.
const BATCH_RECORDS: usize = 256;
/// Text bytes per batch sent to the workers.
const BATCH_BYTES: usize = 4 << 20;

/// A document read and shingled.
struct ShingledDocument {
    id: String,
    time: Option<i64>,
    origin: Origin,
    /// Where its sets are in the store.
    place: Place,
    /// Where its main text as reuse keeps it is in the sequence store, when the collection
    /// keeps them.
    sequence: SequencePlace,
    /// Its sketch, or what it is made of once the corpus statistics are known.
    sketch: PendingSketch,
}

/// A shingled document's sketch: made at once when no corpus statistics are wanted, else
/// waiting for them with the text's outline (its sets are in the store).
enum PendingSketch {
    /// The finished sketch.
    Made(Sketch),
    /// The outline the sketch will be made of.
    Waiting(TextOutline),
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
    /// Stops the collection at its next check: documents added after it is cancelled are
    /// dropped unread, batches in work are given up, and [`Collector::finish`] fails.
    pub cancel: Cancel,
    /// Keep each document's shingle keys in text order too ([`Collection::sequences`]), as
    /// the index keeps them for its passages.
    pub sequences: bool,
}

impl Default for CollectOptions {
    fn default() -> Self {
        CollectOptions {
            threads: 0,
            strict: false,
            known: Arc::new(Boilerplate::none()),
            progress: Arc::new(crate::progress::Quiet),
            cancel: Cancel::default(),
            sequences: false,
        }
    }
}

/// The shingled batches the workers made, each a result of storing its sets.
type Batches = Vec<std::io::Result<Vec<ShingledDocument>>>;

/// Takes documents in and sketches them: each [`Collector::add`] queues a document, full
/// batches go to the workers at once, and [`Collector::finish`] waits for them and makes the
/// sketches of the whole collection.
pub struct Collector {
    config: Plan,
    options: CollectOptions,
    pool: Arc<rayon::ThreadPool>,
    sketcher: Arc<Sketcher>,
    store: Arc<Mutex<SetStore>>,
    sequences: Arc<Mutex<Sequences>>,
    batch: Vec<Record>,
    batch_bytes: usize,
    sender: Option<Sender<Vec<Record>>>,
    workers: Option<JoinHandle<Batches>>,
    read: ReadSummary,
    added: u64,
    started: Instant,
}

impl Collector {
    /// A collector for documents to sketch under `config` (validated by the caller); its worker
    /// threads start at once and wait for batches.
    pub fn new(config: &Plan, options: CollectOptions) -> Result<Collector, Error> {
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
        let sequence_store = Arc::new(Mutex::new(Sequences::store()));
        let sequences = options.sequences;
        let workers = {
            let (pool, sketcher, store) = (pool.clone(), sketcher.clone(), store.clone());
            let sequence_store = sequence_store.clone();
            let (known, progress) = (options.known.clone(), options.progress.clone());
            let cancel = options.cancel.clone();
            std::thread::Builder::new()
                .name("shingling".into())
                .spawn(move || {
                    pool.install(|| {
                        receiver
                            .into_iter()
                            .par_bridge()
                            .map_init(SketchBuffers::default, |scratch, batch| {
                                if cancel.is_cancelled() {
                                    // Given up: finish fails before these are looked at.
                                    return Ok(Vec::new());
                                }
                                let wanted = Wanted {
                                    statistics,
                                    pages,
                                    exact,
                                    sequences,
                                };
                                let stores = (&*store, &*sequence_store);
                                let documents = shingle_batch(
                                    batch, &sketcher, scratch, &known, wanted, stores,
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
            sequences: sequence_store,
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
        if self.options.cancel.is_cancelled() {
            return;
        }
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
    pub(crate) fn add_document(
        &mut self,
        id: String,
        text: &str,
        time: Option<i64>,
    ) -> Result<(), Error> {
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
                dated: None,
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
        let mut records = read_inputs(inputs, options);
        for item in records.by_ref() {
            match item? {
                ReadItem::Record(record) => self.add(record),
                ReadItem::Skipped(report) => self.options.progress.warn(&report),
            }
            if self.options.cancel.is_cancelled() {
                // Reading stops with the reader: nothing more would be kept.
                break;
            }
        }
        let summary = records.summary();
        self.read.records += summary.records;
        self.read.skipped += summary.skipped;
        self.read.ignored_files += summary.ignored_files;
        self.read.malformed += summary.malformed;
        self.read.not_text += summary.not_text;
        Ok(())
    }

    /// Counts `records` skipped by a source of the caller's, for the summary.
    pub(crate) fn count_skipped(&mut self, records: u64) {
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
        self.options.cancel.check()?;
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
        let sequences = Arc::into_inner(self.sequences)
            .expect("the workers are done")
            .into_inner()
            .expect("no thread panics");
        let mut documents: Vec<ShingledDocument> = Vec::new();
        for batch in batches {
            documents.extend(batch.map_err(Error::spill)?);
        }
        let strict = self.options.strict;
        let duplicates = timings.time("ordering by id", || {
            self.pool.install(|| {
                drop_duplicate_ids(&mut documents, |d| (&d.id, &d.origin), strict, &*progress)
            })
        })?;
        self.options.cancel.check()?;
        give_back_free_pages();
        collect(
            documents,
            (store, sequences),
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

/// What shingling a batch keeps of each document besides its sketch.
#[derive(Debug, Clone, Copy)]
struct Wanted {
    /// Corpus statistics are wanted: the sets are kept and the sketch waits for them.
    statistics: bool,
    /// The page set is kept too.
    pages: bool,
    /// Verification is exact: the sketch's set is kept.
    exact: bool,
    /// The shingle keys in text order are kept.
    sequences: bool,
}

/// Canonicalizes and shingles one batch, storing its sets as one block of the set store (and
/// its texts as reuse keeps them as one block of the sequence store, when they are kept).
fn shingle_batch(
    batch: Vec<Record>,
    sketcher: &Sketcher,
    scratch: &mut SketchBuffers,
    known: &Boilerplate,
    wanted: Wanted,
    (store, sequence_store): (&Mutex<SetStore>, &Mutex<Sequences>),
) -> std::io::Result<Vec<ShingledDocument>> {
    let Wanted {
        statistics,
        pages,
        exact,
        sequences,
    } = wanted;
    // The batch's sets, one after another: with statistics each main set and page set as
    // read, else each sketch's set when verification is exact. A text has at most about one
    // shingle per four bytes, and a page set adds about as many again.
    let bytes: usize = batch.iter().map(|r| r.text.len()).sum();
    let mut keys = Vec::with_capacity(if statistics { bytes / 4 } else { 0 });
    let mut sequence_keys = Vec::with_capacity(if sequences { bytes / 4 } else { 0 });
    let mut documents: Vec<ShingledDocument> = batch
        .into_iter()
        .map(|record| {
            let start = keys.len() as u32;
            let mut sequence = Text::default();
            let kept = sequences.then_some(&mut sequence);
            let (place, sketch) = if statistics {
                // The sets go straight into the batch's list.
                let appended = sketcher.append_shingles_and_sequence(
                    &record.text,
                    scratch,
                    pages,
                    &mut keys,
                    kept,
                );
                let place = Place {
                    block: 0,
                    start,
                    len: appended.set,
                    second: appended.page,
                };
                (place, PendingSketch::Waiting(appended.outline))
            } else {
                let shingles = sketcher.shingles_and_sequence(&record.text, scratch, pages, kept);
                let (sketch, set) = sketcher.sketch_shingles(&shingles, known);
                if exact {
                    keys.extend_from_slice(&set);
                }
                let len = keys.len() as u32 - start;
                let place = Place {
                    block: 0,
                    start,
                    len,
                    second: 0,
                };
                (place, PendingSketch::Made(sketch))
            };
            let sequence_place = SequencePlace::of(&sequence, sequence_keys.len());
            sequence_keys.extend_from_slice(&sequence.keys);
            ShingledDocument {
                id: record.id,
                time: record.time,
                origin: record.origin,
                place,
                sequence: sequence_place,
                sketch,
            }
        })
        .collect();
    keys.shrink_to_fit();
    let block = store.lock().expect("no thread panics").push_block(keys)?;
    documents.iter_mut().for_each(|d| d.place.block = block);
    if sequences {
        let mut sequence_store = sequence_store.lock().expect("no thread panics");
        let block = sequence_store.push_block(sequence_keys)?;
        documents
            .iter_mut()
            .for_each(|d| d.sequence.place.block = block);
    }
    Ok(documents)
}

/// Makes the collection of shingled documents in id order: with corpus statistics, finds the
/// boilerplate and sketches every document without it.
#[allow(clippy::too_many_arguments)]
fn collect(
    documents: Vec<ShingledDocument>,
    (mut store, mut sequences): (SetStore, Sequences),
    sketcher: &Sketcher,
    config: &Plan,
    pool: &rayon::ThreadPool,
    options: &CollectOptions,
    read: ReadSummary,
    duplicates: u64,
    mut timings: Timings,
) -> Result<Collection, Error> {
    let statistics = config.boilerplate.min_documents > 0 || config.boilerplate.min_stories > 0;
    let exact = config.cluster.verify == Verify::Exact;
    let id_bytes = documents.iter().map(|d| d.id.len()).sum();
    let mut ids = Ids::with_capacity(documents.len(), id_bytes);
    let mut origins = Vec::with_capacity(documents.len());
    let mut times = Vec::with_capacity(documents.len());
    let mut places = Vec::with_capacity(documents.len());
    let mut sequence_places = Vec::with_capacity(if options.sequences {
        documents.len()
    } else {
        0
    });
    let mut sketches = Vec::with_capacity(if statistics { 0 } else { documents.len() });
    let mut outlines = Vec::with_capacity(if statistics { documents.len() } else { 0 });
    for d in documents {
        ids.push(&d.id);
        origins.push(d.origin);
        times.push(d.time);
        places.push(d.place);
        if options.sequences {
            sequence_places.push(d.sequence);
        }
        match d.sketch {
            PendingSketch::Made(sketch) => sketches.push(sketch),
            PendingSketch::Waiting(outline) => outlines.push(outline),
        }
    }
    store.set_places(places);
    sequences.set_places(sequence_places);
    let sketch_started = Instant::now();
    let progress = &*options.progress;
    let mut frequent_in_documents = Vec::new();
    let boilerplate = if statistics {
        let (boilerplate, made) = pool.install(|| {
            sketch_with_statistics(
                &mut store,
                outlines,
                sketcher,
                config,
                &options.known,
                progress,
                &options.cancel,
                &mut timings,
                options.sequences.then_some(&mut frequent_in_documents),
            )
        })?;
        sketches = made;
        boilerplate
    } else {
        timings
            .0
            .push(("collecting sketches", sketch_started.elapsed()));
        Boilerplate::none().over(&options.known)
    };
    if let Some(failure) = store.take_failure() {
        return Err(Error::spill(failure));
    }
    options.cancel.check()?;
    progress.finish(Stage::Sketching);
    Ok(Collection {
        ids,
        origins,
        times,
        sketches,
        set_file_bytes: store.file_bytes(),
        sets: exact.then_some(store),
        sequences,
        frequent_in_documents,
        read,
        duplicates,
        boilerplate,
        timings,
    })
}

/// Sorts documents by id (`id_of` gives each one's id and origin) and drops the later of two
/// records with the same id, reporting it; of two dated records (WARC records, by their
/// `WARC-Date`), the older is dropped. With `strict`, the second is an error instead.
pub(crate) fn drop_duplicate_ids<T: Send>(
    documents: &mut Vec<T>,
    id_of: impl Fn(&T) -> (&str, &Origin) + Sync,
    strict: bool,
    progress: &dyn Progress,
) -> Result<u64, Error> {
    documents.par_sort_unstable_by(|a, b| {
        let ((a_id, a_origin), (b_id, b_origin)) = (id_of(a), id_of(b));
        a_id.cmp(b_id).then_with(|| a_origin.cmp(b_origin))
    });
    let before = documents.len();
    let mut kept: Vec<T> = Vec::with_capacity(before);
    for document in documents.drain(..) {
        let (id, origin) = id_of(&document);
        let repeat = match kept.last().map(&id_of) {
            Some((first, first_origin)) if first == id => {
                Some(repeat_report(id, first_origin, origin))
            }
            _ => None,
        };
        match repeat {
            None => kept.push(document),
            Some((message, newer)) => {
                if strict {
                    return Err(ReadError::Strict(message).into());
                }
                progress.warn(&format!("{message}; record skipped"));
                if newer {
                    *kept.last_mut().expect("a kept record of this id") = document;
                }
            }
        }
    }
    *documents = kept;
    Ok((before - documents.len()) as u64)
}

/// The report of a record of id `id` read at `second` after one read at `first`, and whether
/// it replaces that one: the later in input order is dropped, unless both are dated and it is
/// the newer.
fn repeat_report(id: &str, first: &Origin, second: &Origin) -> (String, bool) {
    match (first.dated, second.dated) {
        (Some(old), Some(new)) if new > old => (
            format!(
                "{first}: duplicate id {id:?}, seen again at {second} with a newer date, which is kept; ids must be unique"
            ),
            true,
        ),
        _ => (
            format!("{second}: duplicate id {id:?}, first seen at {first}; ids must be unique"),
            false,
        ),
    }
}
