//! The engine: runs the stages over a document source. A [`Collector`] takes the documents in
//! and makes a [`Collection`] (shingling, corpus statistics, sketching: [`collector`],
//! [`statistics`]); `cluster_collection` clusters it. Each stage's wall-clock time goes to
//! [`Timings`], progress and warnings to a [`Progress`].

pub(crate) mod allocator;
pub mod collector;
pub mod ids;
pub mod sequences;
pub(crate) mod sorting;
pub mod statistics;

pub use collector::{CollectOptions, Collector};
pub use ids::Ids;

use std::time::{Duration, Instant};

use crate::cancel::Cancel;
use crate::cluster::{cluster_with_links, Cluster, ClusterStats, Link};
use crate::config::Plan;
use crate::corpus::boilerplate::Boilerplate;
use crate::corpus::set_store::SetStore;
use crate::error::Error;
use crate::io::read::{Origin, ReadSummary};
use crate::progress::{Progress, Stage};
use crate::sketch::Sketch;

/// Wall-clock time of each stage, in the order they ran.
#[derive(Debug, Clone, Default)]
pub struct Timings(pub Vec<(&'static str, Duration)>);

impl Timings {
    /// Records the time from `since` to now as `stage`, and moves `since` to now.
    pub(crate) fn lap(&mut self, stage: &'static str, since: &mut Instant) {
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

/// Everything read and sketched from the inputs, by document number (documents in id order,
/// ids unique).
#[derive(Debug)]
pub struct Collection {
    /// Document ids, sorted.
    pub ids: Ids,
    /// Where each document was read.
    pub origins: Vec<Origin>,
    /// Each document's time, when a time column is read.
    pub times: Vec<Option<i64>>,
    /// Each document's sketch.
    pub sketches: Vec<Sketch>,
    /// Each document's shingle set, boilerplate left out, when verification is exact.
    pub sets: Option<SetStore>,
    /// Bytes of the temporary file that held the shingle sets: 0 when they fit in memory.
    pub(crate) set_file_bytes: u64,
    /// Each document's main text as reuse keeps it (its shingle keys in text order,
    /// boilerplate not yet masked), when [`CollectOptions::sequences`] asked for them; else
    /// empty.
    pub sequences: sequences::Sequences,
    /// With the sequences, the shingles of `boilerplate.min-documents` of the collection's
    /// pages or more, sorted (document frequency alone, known boilerplate or not): what
    /// `reuse` leaves out of the same texts in a batch.
    pub frequent_in_documents: Vec<u32>,
    /// Counts from reading.
    pub read: ReadSummary,
    /// Records dropped for a duplicate id.
    pub duplicates: u64,
    /// Shingles left out as boilerplate: those found in this collection (see
    /// [`Boilerplate::found`]) over those given.
    pub boilerplate: Boilerplate,
    /// Time of each stage so far.
    pub timings: Timings,
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
pub(crate) fn cluster_collection(
    collection: &Collection,
    config: &Plan,
    threads: usize,
    progress: &dyn Progress,
    cancel: &Cancel,
) -> Result<Clustering, Error> {
    cancel.check()?;
    let sketches = &collection.sketches;
    let pool = thread_pool(threads, "cluster")?;
    let started = Instant::now();
    let (clusters, stats, links) = SetStore::reading_of(collection.sets.as_ref(), 0, |sets| {
        pool.install(|| cluster_with_links(sketches, sets, config, cancel))
    })
    .map_err(Error::spill)??;
    let elapsed = started.elapsed();
    cancel.check()?;
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
