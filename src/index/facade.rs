//! The index as the library offers it: an [`Index`] opened on a file, documents added through
//! an [`IndexAddition`] (taken one at a time from any source, as a `Clusterer` takes them),
//! look-ups of a text and the export of every document's story. Each add is one transaction:
//! an add that fails or is dropped unfinished leaves the index as it was.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use crate::config::{Config, Resolved};
use crate::engine::{thread_pool, CollectOptions, Collector};
use crate::error::Result;
use crate::index::add::{add, AddOptions, AddReport};
use crate::index::read::{export, known_boilerplate, ExportRow, Match, Reader};
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
}

/// What queries under one configuration share, once it is found comparable with the
/// index's: the configuration resolved and its sketcher.
struct Prepared {
    config: Config,
    resolved: Resolved,
    sketcher: Sketcher,
}

impl Index {
    /// Opens the index at `path`, making a new one when the file does not exist.
    pub fn open(path: impl AsRef<Path>) -> Result<Index> {
        Index::open_as(path.as_ref(), Open::CreateIfMissing)
    }

    /// Opens the index at `path`, which must exist.
    pub fn open_existing(path: impl AsRef<Path>) -> Result<Index> {
        Index::open_as(path.as_ref(), Open::Existing)
    }

    fn open_as(path: &Path, how: Open) -> Result<Index> {
        let store = Store::open(path, how, "a library call")?;
        Ok(Index {
            store,
            reader: OnceLock::new(),
            prepared: Mutex::new(None),
        })
    }

    /// The index file.
    pub fn path(&self) -> &Path {
        &self.store.path
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
        config.validate()?;
        // An add changes what queries read: the next query reads the index again.
        self.reader = OnceLock::new();
        *self.prepared.get_mut().unwrap_or_else(|e| e.into_inner()) = None;
        self.store.check_comparable(config)?;
        let known = known_boilerplate(&self.store)?;
        let config = config.resolve();
        let collector = Collector::new(
            &config,
            CollectOptions {
                threads: options.threads,
                strict: options.strict,
                known: Arc::new(known),
                progress: options.progress,
            },
        )?;
        Ok(IndexAddition {
            index: self,
            config,
            threads: options.threads,
            upsert,
            collector,
        })
    }

    /// The indexed near-duplicates of `text`, most similar first.
    pub fn query(&self, config: &Config, text: &str) -> Result<Vec<Match>> {
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
                    reader.check_comparable(config)?;
                    let p = Arc::new(Prepared {
                        config: config.clone(),
                        resolved: config.resolve(),
                        sketcher: Sketcher::new(config),
                    });
                    *cached = Some(Arc::clone(&p));
                    p
                }
            }
        };
        Ok(reader.query(text, &prepared.resolved, &prepared.sketcher)?)
    }

    /// Every indexed document with its story, story by story, as `index export` writes them.
    pub fn export(&self) -> Result<Vec<ExportRow>> {
        Ok(export(&self.store)?)
    }
}

/// Documents on their way into an index: [`IndexAddition::add`] them, then
/// [`IndexAddition::commit`].
pub struct IndexAddition<'a> {
    index: &'a mut Index,
    config: Resolved,
    threads: usize,
    upsert: bool,
    collector: Collector,
}

impl IndexAddition<'_> {
    /// Adds one document, with its time in seconds since 1970 (UTC) when it has one.
    pub fn add(&mut self, id: impl Into<String>, text: &str, time: Option<i64>) -> Result<()> {
        self.collector.add_document(id.into(), text, time)
    }

    /// Reads files as the `index add` command does and adds their records.
    pub fn read(&mut self, inputs: &[PathBuf], options: &ReadOptions) -> Result<()> {
        Ok(self.collector.read(inputs, options)?)
    }

    /// Puts the documents into the index's stories in one transaction.
    pub fn commit(self) -> Result<AddReport> {
        let collection = self.collector.finish()?;
        let pool = thread_pool(self.threads, "index")?;
        let options = AddOptions {
            upsert: self.upsert,
        };
        let store = &mut self.index.store;
        Ok(pool.install(|| add(store, collection, &self.config, options))?)
    }
}
