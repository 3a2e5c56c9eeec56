//! The facade for clustering documents in memory or from files: a [`Clusterer`] takes
//! documents one at a time from any source, runs every pass that `megashingle cluster` runs
//! (shingling, boilerplate and story frequency, sketching, candidates, verification, joining)
//! and gives [`Clusters`]: one [`Assignment`] per document, in the command's row order.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::cancel::Cancel;
use crate::cluster::ClusterStats;
use crate::config::{Config, Plan};
use crate::engine::{
    cluster_collection, cut_buckets_note, Clustering, CollectOptions, Collection, Collector,
    Timings,
};
use crate::error::Result;
use crate::io::read::{ReadOptions, Record};
use crate::progress::{Progress, Quiet};
use crate::sketch::Sketch;

/// Whether a document could be compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// It has shingles.
    Ok,
    /// It has fewer words than the shingle size, so no shingles: it stays a cluster of its own.
    TooShort,
}

impl Status {
    /// The status of a sketched document.
    pub fn of(sketch: &Sketch) -> Status {
        if sketch.is_comparable() {
            Status::Ok
        } else {
            Status::TooShort
        }
    }

    /// As written in the output: `ok` or `too_short`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::TooShort => "too_short",
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where one document went: one row of the cluster table.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Assignment<'a> {
    /// The document.
    pub doc_id: &'a str,
    /// Its cluster: the smallest id among its members, so it never depends on thread timing.
    pub cluster_id: &'a str,
    /// Documents in its cluster.
    pub cluster_size: usize,
    /// Jaccard similarity to the cluster's representative, estimated from the minima (1 for
    /// the representative); `None` for a document that cannot be compared.
    pub similarity: Option<f64>,
    /// Whether it could be compared.
    pub status: Status,
}

/// Settings of a run that are not part of the configuration.
#[derive(Clone)]
pub struct RunOptions {
    /// Worker threads; 0 (the default) for one per core. The output is the same for any count.
    pub threads: usize,
    /// Make a second document with an already-seen id an error. Otherwise the later one (in
    /// the order added) is dropped with a warning and counted as skipped.
    pub strict: bool,
    /// Where progress and warnings go; by default nowhere.
    pub progress: Arc<dyn Progress>,
    /// Stops the run at its next check once cancelled (see [`Cancel`]); by default a token
    /// nothing cancels.
    pub cancel: Cancel,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            threads: 0,
            strict: false,
            progress: Arc::new(Quiet),
            cancel: Cancel::default(),
        }
    }
}

/// Clusters documents into stories. Add documents with [`Clusterer::add`] (or read files
/// with [`Clusterer::read`]), then call [`Clusterer::finish`]. Documents are shingled on
/// worker threads while more are added, and each text is dropped once shingled.
///
/// ```
/// let config = megashingle::Config::default();
/// let mut clusterer = megashingle::Clusterer::new(&config)?;
/// let story = "the city council voted on tuesday to extend the night bus service to the \
///              northern suburbs from the first of march after a long campaign by residents";
/// clusterer.add("a", story)?;
/// clusterer.add("b", &format!("{story} and local shop owners"))?;
/// clusterer.add("c", "a recipe for bread with flour water salt and yeast baked in a hot oven")?;
/// let clusters = clusterer.finish()?;
/// let rows: Vec<_> = clusters.assignments().map(|a| (a.doc_id, a.cluster_id)).collect();
/// // "b" holds all of "a": it is the fuller version, so it comes first as the representative.
/// assert_eq!(rows, [("b", "a"), ("a", "a"), ("c", "c")]);
/// # Ok::<(), megashingle::Error>(())
/// ```
pub struct Clusterer {
    config: Plan,
    threads: usize,
    progress: Arc<dyn Progress>,
    cancel: Cancel,
    collector: Collector,
    started: Instant,
}

impl Clusterer {
    /// A clusterer under `config`, with one thread per core and no progress reports.
    pub fn new(config: &Config) -> Result<Clusterer> {
        Clusterer::with_options(config, RunOptions::default())
    }

    /// A clusterer under `config` with the given run options.
    pub fn with_options(config: &Config, options: RunOptions) -> Result<Clusterer> {
        let config = Plan::try_from(config)?;
        let collector = Collector::new(
            &config,
            CollectOptions {
                threads: options.threads,
                strict: options.strict,
                progress: options.progress.clone(),
                cancel: options.cancel.clone(),
                ..CollectOptions::default()
            },
        )?;
        Ok(Clusterer {
            config,
            threads: options.threads,
            progress: options.progress,
            cancel: options.cancel,
            collector,
            started: Instant::now(),
        })
    }

    /// Adds one document. Its id must be non-empty and should be unique (see
    /// [`RunOptions::strict`]); `text` may be plain text, an HTML page or a mail.
    pub fn add(&mut self, id: impl Into<String>, text: &str) -> Result<()> {
        self.add_timed(id, text, None)
    }

    /// Adds one document with its time in seconds since 1970 (UTC).
    pub fn add_timed(
        &mut self,
        id: impl Into<String>,
        text: &str,
        time: Option<i64>,
    ) -> Result<()> {
        self.collector.add_document(id.into(), text, time)
    }

    /// Adds a record as a reader made it, with its origin.
    pub fn add_record(&mut self, record: Record) {
        self.collector.add(record);
    }

    /// Reads CSV, JSONL, folders of `.txt`/`.html`/`.eml` files or stdin (`-`) and adds every
    /// usable record; each skipped record is reported to the progress as a warning and counted.
    pub fn read(&mut self, inputs: &[PathBuf], options: &ReadOptions) -> Result<()> {
        Ok(self.collector.read(inputs, options)?)
    }

    /// Counts `records` that a source of the caller's skipped, for the summary.
    pub fn count_skipped(&mut self, records: u64) {
        self.collector.count_skipped(records);
    }

    /// Waits for the documents in work and clusters them all.
    pub fn finish(self) -> Result<Clusters> {
        let collection = self.collector.finish()?;
        let clustering = cluster_collection(
            &collection,
            &self.config,
            self.threads,
            &*self.progress,
            &self.cancel,
        )?;
        let mut timings = collection.timings.clone();
        timings.0.push(("clustering", clustering.elapsed));
        Ok(Clusters {
            collection,
            clustering,
            timings,
            started: self.started,
        })
    }
}

/// The stories of a collection.
#[derive(Debug)]
pub struct Clusters {
    collection: Collection,
    clustering: Clustering,
    timings: Timings,
    started: Instant,
}

impl Clusters {
    /// One assignment per document, grouped by cluster, largest cluster first, then by
    /// cluster id; the first row of each cluster is its representative (the member with the
    /// most distinct shingles, ties to the smallest id).
    pub fn assignments(&self) -> impl Iterator<Item = Assignment<'_>> + '_ {
        let ids = &self.collection.ids;
        let sketches = &self.collection.sketches;
        self.clustering.clusters.iter().flat_map(move |c| {
            let smallest = c.members.iter().map(|m| m.0).min().expect("non-empty");
            let cluster_id = &ids[smallest as usize];
            let size = c.members.len();
            c.members.iter().map(move |&(doc, similarity)| Assignment {
                doc_id: &ids[doc as usize],
                cluster_id,
                cluster_size: size,
                similarity,
                status: Status::of(&sketches[doc as usize]),
            })
        })
    }

    /// Documents clustered.
    pub fn len(&self) -> usize {
        self.collection.ids.len()
    }

    /// True when no document was clustered.
    pub fn is_empty(&self) -> bool {
        self.collection.ids.is_empty()
    }

    /// The counts of the run.
    pub fn summary(&self) -> Summary {
        Summary::new(&self.collection, &self.clustering)
    }

    /// Keeps one record of each story and removes the members close to it: see
    /// [`DedupConfig`](crate::DedupConfig).
    pub fn deduplicate(
        &self,
        dedup: &crate::config::DedupConfig,
    ) -> Result<crate::Deduplication<'_>> {
        crate::dedup::deduplicate(&self.collection, &self.clustering.clusters, dedup)
    }

    /// Counts from candidate generation and verification.
    pub fn stats(&self) -> &ClusterStats {
        &self.clustering.stats
    }

    /// Time of each stage.
    pub fn timings(&self) -> &Timings {
        &self.timings
    }

    /// Time since the clusterer was made.
    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// The collection and its clustering, for the commands built on them.
    pub fn parts(&self) -> (&Collection, &Clustering) {
        (&self.collection, &self.clustering)
    }

    /// [`Clusters::parts`], taken: a command that needs the collection no further can free
    /// what it holds (the shingle sets) before going on.
    pub fn into_parts(self) -> (Collection, Clustering) {
        (self.collection, self.clustering)
    }
}

/// The counts of a run, as the one-line summary prints them.
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
    /// Candidate buckets cut: keys shared by more distinct documents than
    /// `cluster.max-bucket`, which gave no pairs.
    pub cut_buckets: usize,
    /// Documents in the cut buckets.
    pub cut_bucket_documents: usize,
    /// Malformed byte sequences of the inputs read as U+FFFD (bytes their charset does not
    /// allow).
    pub malformed: u64,
    /// WARC responses left out for a type that is not text.
    pub not_text: u64,
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
            cut_buckets: clustering.stats.cut_buckets,
            cut_bucket_documents: clustering.stats.cut_bucket_documents,
            malformed: collection.read.malformed,
            not_text: collection.read.not_text,
        }
    }

    /// As printed on stderr, with the run's time.
    pub fn line(&self, elapsed: Duration) -> String {
        let on_file = match self.set_file_bytes {
            0 => String::new(),
            bytes => format!(
                "; shingle sets held in a temporary file of {:.0} MB (cluster.set-memory-mb)",
                bytes as f64 / 1e6
            ),
        };
        let cut = cut_buckets_note(self.cut_buckets, self.cut_bucket_documents);
        let malformed = crate::io::read::ReadSummary {
            malformed: self.malformed,
            not_text: self.not_text,
            ..Default::default()
        }
        .notes();
        format!(
            "{} documents in {} clusters ({} clusters of 2 or more hold {} documents); {} too short to compare; {} records skipped{malformed}{on_file}{cut}; {:.2} s",
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

    #[test]
    fn the_summary_names_cut_buckets_only_when_there_are_some() {
        let mut summary = Summary {
            documents: 30_000,
            clusters: 10_004,
            multi_clusters: 2,
            clustered_documents: 19_998,
            too_short: 0,
            skipped: 0,
            set_file_bytes: 0,
            cut_buckets: 0,
            cut_bucket_documents: 0,
            malformed: 0,
            not_text: 0,
        };
        let elapsed = Duration::from_millis(1500);
        let clean = summary.line(elapsed);
        assert!(!clean.contains("cut"), "{clean}");
        assert!(clean.ends_with("0 records skipped; 1.50 s"), "{clean}");
        summary.cut_buckets = 7;
        summary.cut_bucket_documents = 10_001;
        let cut = summary.line(elapsed);
        assert!(
            cut.contains("; 7 candidate buckets of more distinct documents than cluster.max-bucket were cut: 10001 documents in them were not paired through them; 1.50 s"),
            "{cut}"
        );
        summary.malformed = 3;
        let malformed = summary.line(elapsed);
        assert!(
            malformed.contains(
                "0 records skipped; 3 malformed byte sequences read as U+FFFD; 7 candidate"
            ),
            "{malformed}"
        );
    }
}
