//! The index as the library offers it: an [`Index`] opened on a file, documents added through
//! an [`IndexAddition`] (taken one at a time from any source, as a `Clusterer` takes them, or
//! read from files) and prepared as a [`PreparedAdd`] that is committed or abandoned; look-ups
//! of a text, the export of every document's story, the merges, the statistics and removals.
//! Each add and each removal is one transaction: one that fails or is dropped unfinished
//! leaves the index as it was.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use crate::cancel::Cancel;
use crate::config::{Config, Plan};
use crate::engine::{thread_pool, CollectOptions, Collection, Collector, Timings};
use crate::error::Result;
use crate::index::add::{prepare, AddOptions, AddReport, PreparedAdd};
use crate::index::read::{
    export, known_boilerplate, merges, stats, ExportRow, Match, Reader, ReuseAnswer, Stats,
};
use crate::index::remove::{remove, Removal, Selection};
use crate::index::schema::MergeRecord;
use crate::index::store::{Open, Store};
use crate::io::read::ReadOptions;
use crate::sketch::Sketcher;
use crate::RunOptions;

/// A story index on disk, open and locked against other processes. Queries share one read
/// of the index (made by the first query, renewed after an add), so a warm index answers
/// one with a few page reads.
pub struct Index {
    store: Store,
    reader: OnceLock<Reader>,
    prepared: Mutex<Option<Arc<Prepared>>>,
    /// The first add makes the new index keep passages ([`Index::keep_passages`]).
    make_passages: bool,
}

/// What queries under one configuration share, once it is found comparable with the
/// index's: its plan and its sketcher.
struct Prepared {
    config: Config,
    plan: Plan,
    sketcher: Sketcher,
}

impl Index {
    /// Opens the index at `path`, making a new one when the file does not exist.
    pub fn open(path: impl AsRef<Path>) -> Result<Index> {
        Index::open_by(path.as_ref(), Open::CreateIfMissing, "a library call")
    }

    /// Opens the index at `path`, which must exist.
    pub fn open_existing(path: impl AsRef<Path>) -> Result<Index> {
        Index::open_by(path.as_ref(), Open::Existing, "a library call")
    }

    /// Opens the index at `path` as `how` says, for `holder`: what the lock file tells a
    /// process refused while the index is open (e.g. "index add" tells it "megashingle index
    /// add (pid …) since …").
    pub fn open_by(path: &Path, how: Open, holder: &str) -> Result<Index> {
        let store = Store::open(path, how, holder)?;
        Ok(Index {
            store,
            reader: OnceLock::new(),
            prepared: Mutex::new(None),
            make_passages: false,
        })
    }

    /// The index file.
    pub fn path(&self) -> &Path {
        &self.store.path
    }

    /// True when nothing was ever added to the index.
    pub fn is_new(&self) -> Result<bool> {
        Ok(self.store.is_new()?)
    }

    /// Makes the index keep the passages of its documents, so that reuse can be found
    /// through it ([`Index::query_reuse`]): called before the first add of a new index, that
    /// add and every later one write them (index format 6); on an index that keeps them it
    /// changes nothing. An index made without them cannot begin to keep them (its documents
    /// have none): that is an error, and the index is left as it was. An index without
    /// passages costs less (about a quarter of the bytes a document, and less of a night's
    /// time and memory).
    pub fn keep_passages(&mut self) -> Result<()> {
        if self.store.is_new()? {
            self.make_passages = true;
        } else if !self.store.keeps_passages()? {
            return Err(crate::index::IndexError::MadeWithoutPassages {
                path: self.store.path.display().to_string(),
                format: self.store.format()?.unwrap_or_default(),
            }
            .into());
        }
        Ok(())
    }

    /// True when the index keeps the passages of its documents, or a new index will
    /// ([`Index::keep_passages`]).
    pub fn keeps_passages(&self) -> Result<bool> {
        Ok(self.make_passages || self.store.keeps_passages()?)
    }

    /// Closes a new index that nothing was added to and removes its file and lock file: a
    /// first add that fails leaves nothing behind. An index that holds documents is only
    /// closed.
    pub fn discard(self) {
        if self.store.is_new().unwrap_or(false) {
            self.store.discard();
        }
    }

    /// Fails, naming every differing key, when sketches made with `config` could not be
    /// compared with the index's.
    pub fn check_comparable(&self, config: &Config) -> Result<()> {
        Ok(self.store.check_comparable(config)?)
    }

    /// Starts adding documents sketched under `config`, which must sketch as the index's own
    /// configuration does. With `upsert`, a document whose id is indexed replaces it; without,
    /// such a document fails the add.
    pub fn begin_add(
        &mut self,
        config: &Config,
        options: RunOptions,
        upsert: bool,
    ) -> Result<IndexAddition<'_>> {
        let plan = Plan::try_from(config)?;
        self.forget_reads();
        self.store.check_comparable(config)?;
        let mut clock = Instant::now();
        let known = known_boilerplate(&self.store)?;
        let mut timings = Timings::default();
        timings.lap("index: known boilerplate", &mut clock);
        let cancel = options.cancel.clone();
        let collector = Collector::new(
            &plan,
            CollectOptions {
                threads: options.threads,
                strict: options.strict,
                known: Arc::new(known),
                progress: options.progress,
                cancel: options.cancel,
                sequences: self.keeps_passages()?,
            },
        )?;
        Ok(IndexAddition {
            passages: self.make_passages,
            index: self,
            config: plan,
            threads: options.threads,
            upsert,
            cancel,
            documents: Documents::Collecting(collector),
            timings,
        })
    }

    /// Reads `inputs` as the `index add` command does and prepares their add: begin, read,
    /// [`IndexAddition::prepare`].
    pub fn prepare_add(
        &mut self,
        config: &Config,
        options: RunOptions,
        upsert: bool,
        inputs: &[PathBuf],
        read: &ReadOptions,
    ) -> Result<PreparedAdd<'_>> {
        let mut addition = self.begin_add(config, options, upsert)?;
        addition.read(inputs, read)?;
        addition.prepare()
    }

    /// The indexed near-duplicates of `text`, most similar first.
    pub fn query(&self, config: &Config, text: &str) -> Result<Vec<Match>> {
        let (reader, prepared) = self.reader_for(config)?;
        Ok(reader.query(text, &prepared.plan, &prepared.sketcher)?)
    }

    /// The indexed documents that share a passage with `text`, most shared words first, as
    /// `reuse` would find them in one batch of `text` and every indexed document, under
    /// `config`'s `[reuse]` rules; with the share of `text` found in none of them. The index
    /// must keep passages (be made with them: [`Index::keep_passages`], index format 6).
    ///
    /// ```
    /// # fn main() -> Result<(), megashingle::Error> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// let config = megashingle::Config::default();
    /// let mut index = megashingle::Index::open(dir.path().join("archive.db"))?;
    /// index.keep_passages()?;
    /// let passage = "the city council voted on tuesday to extend the night bus service to the \
    ///     northern suburbs from the first of march. residents had campaigned for two years and \
    ///     collected more than four thousand signatures for the plan";
    /// let mut night = index.begin_add(&config, megashingle::RunOptions::default(), false)?;
    /// night.add("report", &format!("{passage}. the mayor said the cost would be met from the \
    ///     transport budget and that a review would follow after six months of service"), None)?;
    /// night.commit()?;
    /// let answer = index.query_reuse(&config, &format!("in other news: {passage}"))?;
    /// assert_eq!(answer.matches[0].doc_id, "report");
    /// assert_eq!(answer.matches[0].shared_words, 37);
    /// assert!(answer.uniqueness() < 0.1);
    /// # Ok(())
    /// # }
    /// ```
    pub fn query_reuse(&self, config: &Config, text: &str) -> Result<ReuseAnswer> {
        let (reader, prepared) = self.reader_for(config)?;
        Ok(reader.reuse(text, &prepared.plan, &prepared.sketcher)?)
    }

    /// [`Index::query_reuse`] of each of `texts`, the answers in their order: the batch
    /// form (tonight's crawl against an archive, a training corpus against an indexed
    /// evaluation set). The texts are sketched on the current rayon pool's threads and their
    /// fingerprints looked up together, so a batch of thousands costs far less than its texts
    /// asked one by one; the answers are the same.
    pub fn query_reuse_many(&self, config: &Config, texts: &[&str]) -> Result<Vec<ReuseAnswer>> {
        let (reader, prepared) = self.reader_for(config)?;
        Ok(reader.reuse_many(texts, &prepared.plan, &prepared.sketcher)?)
    }

    /// The shared read of the index and what queries under `config` share, made by the first
    /// query (and for a configuration that differs from the last one's).
    fn reader_for(&self, config: &Config) -> Result<(&Reader, Arc<Prepared>)> {
        let reader = match self.reader.get() {
            Some(reader) => reader,
            None => {
                let reader = Reader::open(&self.store)?;
                self.reader.get_or_init(|| reader)
            }
        };
        let prepared = {
            let mut cached = self.prepared.lock().unwrap_or_else(|e| e.into_inner());
            match cached.as_ref() {
                Some(p) if p.config == *config => Arc::clone(p),
                _ => {
                    let plan = Plan::try_from(config)?;
                    reader.check_comparable(config)?;
                    let p = Arc::new(Prepared {
                        config: config.clone(),
                        sketcher: Sketcher::new(&plan),
                        plan,
                    });
                    *cached = Some(Arc::clone(&p));
                    p
                }
            }
        };
        Ok((reader, prepared))
    }

    /// Every indexed document with its story, story by story, as `index export` writes them.
    pub fn export(&self) -> Result<Vec<ExportRow>> {
        Ok(export(&self.store)?)
    }

    /// Every merge of two stories, oldest first.
    pub fn merges(&self) -> Result<Vec<MergeRecord>> {
        Ok(merges(&self.store)?)
    }

    /// The counts, size on disk and sketch settings of the index.
    pub fn stats(&self) -> Result<Stats> {
        Ok(stats(&self.store)?)
    }

    /// Removes the selected documents in one transaction, then gives free space back when
    /// much of the file is free.
    pub fn remove(&mut self, selection: &Selection) -> Result<Removal> {
        self.forget_reads();
        let removal = remove(&mut self.store, selection)?;
        self.store
            .compact_if_sparse()
            .map_err(|e| e.at(&self.store.path))?;
        Ok(removal)
    }

    /// The boilerplate shingles the index's adds found, which a sketch to compare with the
    /// index leaves out.
    pub fn known_boilerplate(&self) -> Result<crate::corpus::boilerplate::Boilerplate> {
        Ok(known_boilerplate(&self.store)?)
    }

    /// A change is coming: the next query reads the index again.
    fn forget_reads(&mut self) {
        self.reader = OnceLock::new();
        *self.prepared.get_mut().unwrap_or_else(|e| e.into_inner()) = None;
    }
}

/// Documents on their way into an index: [`IndexAddition::add`] them (or
/// [`IndexAddition::read`] files), then [`IndexAddition::prepare`] the add and commit it, or
/// [`IndexAddition::commit`] at once.
pub struct IndexAddition<'a> {
    index: &'a mut Index,
    config: Plan,
    threads: usize,
    upsert: bool,
    /// The add makes a new index keep passages.
    passages: bool,
    cancel: Cancel,
    documents: Documents,
    timings: Timings,
}

/// The documents of an addition: being taken, or sketched. One lives in each addition, so the
/// size of its larger variant costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
enum Documents {
    Collecting(Collector),
    Sketched(Collection),
    /// Between the two (only while one becomes the other).
    Moving,
}

/// The documents of an addition once sketched ([`IndexAddition::sketched`]).
#[derive(Debug, Clone)]
pub struct SketchedDocuments {
    /// Documents to add.
    pub documents: usize,
    /// Records skipped: bad records, and documents whose id was given before.
    pub skipped: u64,
    /// What the summary line says of the bytes read besides (`ReadSummary::notes`).
    pub read_notes: String,
    /// Time of each step so far: the known boilerplate's loading, reading and sketching.
    pub timings: Timings,
}

impl<'a> IndexAddition<'a> {
    /// Adds one document, with its time in seconds since 1970 (UTC) when it has one.
    ///
    /// # Panics
    ///
    /// When the documents were sketched already ([`IndexAddition::sketched`]).
    pub fn add(&mut self, id: impl Into<String>, text: &str, time: Option<i64>) -> Result<()> {
        self.collector().add_document(id.into(), text, time)
    }

    /// Reads files as the `index add` command does and adds their records.
    ///
    /// # Panics
    ///
    /// When the documents were sketched already ([`IndexAddition::sketched`]).
    pub fn read(&mut self, inputs: &[PathBuf], options: &ReadOptions) -> Result<()> {
        Ok(self.collector().read(inputs, options)?)
    }

    fn collector(&mut self) -> &mut Collector {
        match &mut self.documents {
            Documents::Collecting(collector) => collector,
            _ => panic!("documents added to an index addition after they were sketched"),
        }
    }

    /// Ends the taking of documents and finishes their sketches (which [`prepare`] does
    /// when this was not called): what was read and how long it took, before the index is
    /// written to.
    ///
    /// [`prepare`]: IndexAddition::prepare
    pub fn sketched(&mut self) -> Result<SketchedDocuments> {
        if let Documents::Collecting(_) = self.documents {
            let Documents::Collecting(collector) =
                std::mem::replace(&mut self.documents, Documents::Moving)
            else {
                unreachable!("matched above")
            };
            let collection = collector.finish()?;
            self.timings.0.extend(collection.timings.0.iter().copied());
            self.documents = Documents::Sketched(collection);
        }
        let Documents::Sketched(collection) = &self.documents else {
            unreachable!("sketched above")
        };
        Ok(SketchedDocuments {
            documents: collection.ids.len(),
            skipped: collection.read.skipped + collection.duplicates,
            read_notes: collection.read.notes(),
            timings: self.timings.clone(),
        })
    }

    /// Writes the documents into the index's stories in one transaction, and returns it
    /// prepared: its report tells what it does, and nothing reaches the index until it is
    /// committed.
    pub fn prepare(mut self) -> Result<PreparedAdd<'a>> {
        self.sketched()?;
        let IndexAddition {
            index,
            config,
            threads,
            upsert,
            passages,
            cancel,
            documents: Documents::Sketched(collection),
            ..
        } = self
        else {
            unreachable!("sketched above")
        };
        let pool = thread_pool(threads, "index")?;
        let options = AddOptions {
            upsert,
            cancel,
            passages,
        };
        let store = &mut index.store;
        pool.install(|| prepare(store, collection, &config, options))
    }

    /// Prepares the add and commits it.
    pub fn commit(self) -> Result<AddReport> {
        self.prepare()?.commit()
    }
}
