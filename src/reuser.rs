//! The facade for finding text reuse: a [`Reuser`] takes documents one at a time from any
//! source (or reads files as `cluster` does), keeps each as its shingle keys in text order,
//! and gives [`Reuse`]: every pair of documents where one holds a passage of the other, with
//! figures computed exactly from their shingles (see [`crate::reuse`]).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rayon::prelude::*;

use crate::cancel::Cancel;
use crate::clusterer::RunOptions;
use crate::config::{Config, Plan};
use crate::engine::collector::drop_duplicate_ids;
use crate::engine::{cut_buckets_note, thread_pool, Timings};
use crate::error::{Error, Result};
use crate::io::read::{read_inputs, Origin, ReadItem, ReadOptions, ReadSummary, Record};
use crate::progress::Stage;
use crate::reuse::texts::{mask_boilerplate, text_of};
use crate::reuse::{find_pairs, share, Pair, ReuseStats, Settings, Text};
use crate::sketch::{SketchBuffers, Sketcher};

/// Records shingled together on the worker threads.
const BATCH_RECORDS: usize = 256;
/// Text bytes shingled together on the worker threads.
const BATCH_BYTES: usize = 4 << 20;

/// One pair of documents where one reuses a passage of the other: one row of the `reuse`
/// table. Each text's *shared words* are its words covered by a shingle found exactly once in
/// each text (boilerplate left out: see `crate::reuse::align`), counted in passages: shared words at most `reuse.max-gap` words
/// apart make one passage, and a passage of fewer than `reuse.min-passage-words` shared words
/// does not count.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct ReusePair<'a> {
    /// The first document (ids in order: `doc_a < doc_b`).
    pub doc_a: &'a str,
    /// The second document.
    pub doc_b: &'a str,
    /// The share of `doc_a`'s words that are shared words with `doc_b`.
    pub a_in_b: f64,
    /// The share of `doc_b`'s words that are shared words with `doc_a`.
    pub b_in_a: f64,
    /// Shared words, the smaller count of the two texts.
    pub shared_words: u32,
    /// Passages, the smaller count of the two texts.
    pub passages: u32,
    /// Words of the longest passage, from its first shared word to its last: the smaller of the
    /// two texts' longest.
    pub longest: u32,
    /// The exact Jaccard of the two texts' shingle sets, boilerplate left out.
    pub jaccard: f64,
}

/// A document kept until the pairs are found.
struct Kept {
    id: String,
    origin: Origin,
    text: Text,
}

/// Finds the pairs of documents that share a passage. Add documents with [`Reuser::add`] (or
/// read files with [`Reuser::read`]), then call [`Reuser::finish`]. Each text is dropped once
/// its shingles are listed: a document keeps 4 bytes a word.
///
/// ```
/// let config = megashingle::Config::default();
/// let mut reuser = megashingle::Reuser::new(&config)?;
/// let passage = "the city council voted on tuesday to extend the night bus service to the \
///     northern suburbs from the first of march. residents had campaigned for two years and \
///     collected more than four thousand signatures for the plan";
/// reuser.add("report", &format!("{passage}. the mayor said the cost would be met from the \
///     transport budget and that a review would follow after six months of service"))?;
/// reuser.add("brief", &format!("in other news: {passage}"))?;
/// reuser.add("recipe", "a recipe for bread with flour water salt and yeast baked in an oven")?;
/// let reuse = reuser.finish()?;
/// let pairs: Vec<_> = reuse.pairs().map(|p| (p.doc_a, p.doc_b, p.shared_words)).collect();
/// assert_eq!(pairs, [("brief", "report", 37)]);
/// # Ok::<(), megashingle::Error>(())
/// ```
pub struct Reuser {
    config: Config,
    options: RunOptions,
    pool: rayon::ThreadPool,
    sketcher: Sketcher,
    batch: Vec<Record>,
    batch_bytes: usize,
    kept: Vec<Kept>,
    read: ReadSummary,
    added: u64,
    started: Instant,
}

impl Reuser {
    /// A reuser under `config`, with one thread per core and no progress reports.
    pub fn new(config: &Config) -> Result<Reuser> {
        Reuser::with_options(config, RunOptions::default())
    }

    /// A reuser under `config` with the given run options.
    pub fn with_options(config: &Config, options: RunOptions) -> Result<Reuser> {
        let plan = Plan::try_from(config)?;
        Ok(Reuser {
            pool: thread_pool(options.threads, "reuse")?,
            sketcher: Sketcher::new(&plan),
            config: config.clone(),
            options,
            batch: Vec::with_capacity(BATCH_RECORDS),
            batch_bytes: 0,
            kept: Vec::new(),
            read: ReadSummary::default(),
            added: 0,
            started: Instant::now(),
        })
    }

    /// Adds one document. Its id must be non-empty and should be unique (see
    /// [`RunOptions::strict`]); `text` may be plain text, an HTML page or a mail.
    pub fn add(&mut self, id: impl Into<String>, text: &str) -> Result<()> {
        let id = id.into();
        let position = self.added + 1;
        if id.is_empty() {
            return Err(Error::EmptyId { position });
        }
        self.add_record(Record {
            id,
            text: text.to_owned(),
            time: None,
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

    /// Adds a record as a reader made it, with its origin.
    pub fn add_record(&mut self, record: Record) {
        if self.options.cancel.is_cancelled() {
            return;
        }
        self.options.progress.advance(Stage::Reading, 1);
        self.added += 1;
        self.batch_bytes += record.text.len();
        self.batch.push(record);
        if self.batch.len() >= BATCH_RECORDS || self.batch_bytes >= BATCH_BYTES {
            self.shingle_batch();
        }
    }

    /// Reads CSV, JSONL, Parquet, folders of `.txt`/`.html`/`.eml` files or stdin (`-`) and
    /// adds every usable record; each skipped record is reported to the progress as a warning
    /// and counted.
    pub fn read(&mut self, inputs: &[PathBuf], options: &ReadOptions) -> Result<()> {
        let mut records = read_inputs(inputs, options);
        for item in records.by_ref() {
            match item? {
                ReadItem::Record(record) => self.add_record(record),
                ReadItem::Skipped(report) => self.options.progress.warn(&report),
            }
            if self.options.cancel.is_cancelled() {
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

    /// Lists the shingles of the queued documents on the worker threads; their texts go.
    fn shingle_batch(&mut self) {
        let batch = std::mem::take(&mut self.batch);
        self.batch_bytes = 0;
        let sketcher = &self.sketcher;
        let texts: Vec<Kept> = self.pool.install(|| {
            batch
                .into_par_iter()
                .map_init(SketchBuffers::default, |scratch, record| Kept {
                    text: text_of(sketcher, &record.text, scratch),
                    id: record.id,
                    origin: record.origin,
                })
                .collect()
        });
        self.options
            .progress
            .advance(Stage::Shingling, texts.len() as u64);
        self.kept.extend(texts);
    }

    /// Finds every pair that shares a passage.
    pub fn finish(mut self) -> Result<Reuse> {
        self.shingle_batch();
        self.options.cancel.check()?;
        let progress = self.options.progress.clone();
        progress.finish(Stage::Reading);
        progress.finish(Stage::Shingling);
        let mut timings = Timings::default();
        timings
            .0
            .push(("reading and shingling", self.started.elapsed()));
        let strict = self.options.strict;
        let mut kept = std::mem::take(&mut self.kept);
        let duplicates = timings.time("ordering by id", || {
            self.pool.install(|| {
                drop_duplicate_ids(&mut kept, |k| (&k.id, &k.origin), strict, &*progress)
            })
        })?;
        let (ids, mut texts): (Vec<String>, Vec<Text>) =
            kept.into_iter().map(|k| (k.id, k.text)).unzip();
        let min_documents = self.config.boilerplate.min_documents;
        let boilerplate = timings.time("boilerplate", || {
            self.pool
                .install(|| mask_boilerplate(&mut texts, min_documents))
        });
        self.options.cancel.check()?;
        let settings = Settings::of(&self.config);
        let (pairs, stats) = timings.time("pairs", || {
            self.pool.install(|| find_pairs(&texts, &settings))
        });
        self.options.cancel.check()?;
        progress.advance(Stage::Clustering, texts.len() as u64);
        progress.finish(Stage::Clustering);
        let summary = ReuseSummary {
            documents: ids.len(),
            too_short: texts.iter().filter(|t| t.keys.is_empty()).count(),
            pairs: pairs.len(),
            skipped: self.read.skipped + duplicates,
            malformed: self.read.malformed,
            not_text: self.read.not_text,
            boilerplate,
            stats,
        };
        Ok(Reuse {
            ids,
            words: texts.iter().map(|t| t.words).collect(),
            pairs,
            summary,
            timings,
            elapsed: self.started.elapsed(),
        })
    }
}

/// The counts of a run, as the one-line summary prints them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReuseSummary {
    /// Documents read.
    pub documents: usize,
    /// Documents with fewer words than the shingle size.
    pub too_short: usize,
    /// Pairs found.
    pub pairs: usize,
    /// Records skipped while reading or for a duplicate id.
    pub skipped: u64,
    /// Malformed byte sequences of the inputs read as U+FFFD.
    pub malformed: u64,
    /// WARC responses left out for a type that is not text.
    pub not_text: u64,
    /// Distinct shingles left out as boilerplate.
    pub boilerplate: usize,
    /// Counts from the search.
    pub stats: ReuseStats,
}

impl ReuseSummary {
    /// The summary line: documents, pairs, candidates, boilerplate, skipped records, time.
    pub fn line(&self, elapsed: Duration) -> String {
        format!(
            "{} documents, {} reuse pairs of {} candidate pairs aligned; {} too short to compare; {} boilerplate shingles left out; {} records skipped{}{}; {:.2} s",
            self.documents,
            self.pairs,
            self.stats.candidates,
            self.too_short,
            self.boilerplate,
            self.skipped,
            ReadSummary {
                malformed: self.malformed,
                not_text: self.not_text,
                ..ReadSummary::default()
            }
            .notes(),
            cut_buckets_note(self.stats.cut_buckets, self.stats.cut_documents),
            elapsed.as_secs_f64()
        )
    }
}

/// The pairs found by a [`Reuser`].
#[derive(Debug)]
pub struct Reuse {
    ids: Vec<String>,
    words: Vec<u32>,
    pairs: Vec<Pair>,
    summary: ReuseSummary,
    timings: Timings,
    elapsed: Duration,
}

impl Reuse {
    /// The pairs, by `doc_a` then `doc_b`.
    pub fn pairs(&self) -> impl Iterator<Item = ReusePair<'_>> + '_ {
        self.pairs.iter().map(|p| {
            let (a, b) = (p.a as usize, p.b as usize);
            let f = &p.figures;
            ReusePair {
                doc_a: &self.ids[a],
                doc_b: &self.ids[b],
                a_in_b: share(f.a.shared, self.words[a]),
                b_in_a: share(f.b.shared, self.words[b]),
                shared_words: f.a.shared.min(f.b.shared),
                passages: f.a.passages.min(f.b.passages),
                longest: f.a.longest.min(f.b.longest),
                jaccard: f.jaccard,
            }
        })
    }

    /// Documents read (ids distinct).
    pub fn documents(&self) -> usize {
        self.ids.len()
    }

    /// The counts of the run.
    pub fn summary(&self) -> ReuseSummary {
        self.summary
    }

    /// Wall-clock time of each stage.
    pub fn timings(&self) -> &Timings {
        &self.timings
    }

    /// Wall-clock time from the reuser's start to the pairs.
    pub fn elapsed(&self) -> Duration {
        self.elapsed
    }
}

/// The reuse pairs among documents given as `(id, text)`, under `config`: a [`Reuser`] fed
/// them all.
pub fn reuse<'t>(
    config: &Config,
    documents: impl IntoIterator<Item = (&'t str, &'t str)>,
    cancel: Option<Cancel>,
) -> Result<Reuse> {
    let options = RunOptions {
        cancel: cancel.unwrap_or_default(),
        ..RunOptions::default()
    };
    let mut reuser = Reuser::with_options(config, options)?;
    for (id, text) in documents {
        reuser.add(id, text)?;
    }
    reuser.finish()
}
