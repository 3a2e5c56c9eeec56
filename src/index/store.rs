//! The index on disk: a redb database (one file, transactional, copy-on-write, so a process
//! killed mid-write leaves the last committed state), the lock that keeps a second process
//! out, the checks that refuse a foreign or damaged file and a configuration whose sketches
//! would not be comparable, and every table open in one write transaction. The tables and
//! their records are defined in `src/index/schema.rs`.
//!
//! A document keeps the low 16 bits of each minimum (b-bit minwise hashing): two minima from
//! different shingles agree by chance once in 65,536, so the Jaccard estimate is as good as
//! from the full minima, at half the size.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

use redb::{
    Builder, Database, ReadOnlyDatabase, ReadTransaction, ReadableDatabase, ReadableTable, Table,
    TableHandle, WriteTransaction,
};

use crate::config::Config;
use crate::index::error::{Damage, Foreign, IndexError, Result};
use crate::index::postings::Postings;
use crate::index::schema::{
    DocRecord, StoryRecord, BARE_LEADS, COUNTERS, DOCS, FORMAT, FORMAT_WITH_PASSAGES, GHOSTS,
    GHOSTS_OF, LEADS, MEMBERS, MERGES, META, PASSAGES, READABLE_FORMATS, STORIES, STORY_NAMES,
};
use crate::io::time::{format_time, now};
use crate::sketch::keys::KeyMaker;

/// Memory the database may use for its page cache and its write buffer (half of it at most):
/// a look-up or an add reads and writes the file through it, so memory does not grow with
/// the index; the operating system's page cache keeps the file's hot pages. Eight megabytes
/// read and write as fast as 32 (a night onto a million, and queries), and a night then
/// holds about 20 MB less at its peak.
const CACHE_BYTES: usize = 8 << 20;

/// The first bytes of every redb file.
const REDB_MAGIC: [u8; 9] = [b'r', b'e', b'd', b'b', 0x1A, 0x0A, 0xA9, 0x0D, 0x0A];

/// The configuration sections that decide what a sketch is: two runs whose keys differ here
/// make sketches that cannot be compared.
pub const SKETCH_SECTIONS: [&str; 4] = ["canonicalize", "shingle", "signature", "supershingle"];

/// An open index: the database and the lock that keeps other processes out while it is open.
pub struct Store {
    /// The index file.
    pub path: PathBuf,
    handle: Handle,
    lock: Lock,
}

/// How the database is open: read-only until something is to be written, so that reading
/// commands and refused adds leave the file byte for byte as it was.
enum Handle {
    /// No file yet (or an empty one): a new index.
    New,
    /// Open for reading.
    Reading(ReadOnlyDatabase),
    /// Open for writing.
    Writing(Database),
}

/// How to open an index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Open {
    /// Make a new index when the file does not exist (or is empty).
    CreateIfMissing,
    /// The index must exist.
    Existing,
}

impl Store {
    /// Opens (or makes) the index at `path` for `command` (named in the lock, e.g. "index
    /// add"). Refuses a file that is not a megashingle index, without writing to it.
    pub fn open(path: &Path, how: Open, command: &str) -> Result<Store> {
        Store::open_unlocated(path, how, command).map_err(|e| e.at(path))
    }

    /// [`Store::open`], its errors not yet given the index's path.
    fn open_unlocated(path: &Path, how: Open, command: &str) -> Result<Store> {
        let exists = path.exists();
        if how == Open::Existing && !exists {
            return Err(IndexError::Missing {
                path: path.display().to_string(),
            });
        }
        if exists {
            check_magic(path)?;
        }
        let lock = Lock::take(path, command)?;
        let mut store = Store {
            path: path.to_owned(),
            handle: Handle::New,
            lock,
        };
        match store.open_database(exists) {
            Ok(()) => Ok(store),
            Err(e) => {
                // A lock file made by this command goes with it: nothing was opened.
                store.handle = Handle::New;
                if store.lock.made {
                    store.lock.remove();
                }
                Err(e)
            }
        }
    }

    /// Opens the database of an index whose lock is held (nothing to open when it is new).
    fn open_database(&mut self, exists: bool) -> Result<()> {
        let path = self.path.clone();
        let empty = !exists || std::fs::metadata(&path)?.len() == 0;
        if !empty {
            self.handle = match caught(|| {
                Builder::new()
                    .set_cache_size(CACHE_BYTES)
                    .open_read_only(&path)
            }) {
                // An index left open by a killed process needs a repair, which is a write.
                Ok(Err(redb::DatabaseError::RepairAborted)) => {
                    Handle::Writing(open_writable(&path)?)
                }
                opened => Handle::Reading(opened_or_error(&path, opened)?),
            };
            self.check_format()?;
        }
        Ok(())
    }

    /// Removes a new index that nothing was added to, and its lock file: a failed first add
    /// leaves nothing behind.
    pub fn discard(mut self) {
        self.handle = Handle::New;
        let _ = std::fs::remove_file(&self.path);
        self.lock.remove();
    }

    /// A read transaction; an error for a new index (check [`Store::is_new`] first).
    pub fn begin_read(&self) -> Result<ReadTransaction> {
        Ok(match &self.handle {
            Handle::New => {
                return Err(IndexError::Empty {
                    path: self.path.display().to_string(),
                })
            }
            Handle::Reading(db) => db.begin_read()?,
            Handle::Writing(db) => db.begin_read()?,
        })
    }

    /// The database open for writing (made when new).
    pub fn writable(&mut self) -> Result<&mut Database> {
        if !matches!(self.handle, Handle::Writing(_)) {
            // The read-only handle is closed first: redb refuses a writer while it is open.
            self.handle = Handle::New;
            self.handle = Handle::Writing(open_writable(&self.path)?);
        }
        match &mut self.handle {
            Handle::Writing(db) => Ok(db),
            _ => unreachable!("opened for writing above"),
        }
    }

    /// Fails unless the database is empty (new) or holds a megashingle index of this format.
    fn check_format(&self) -> Result<()> {
        let foreign = || IndexError::not_an_index(&self.path, Foreign::OtherDatabase);
        let txn = self.begin_read()?;
        let tables = txn.list_tables()?.count();
        match txn.open_table(META) {
            Ok(meta) => match meta.get("format")? {
                Some(format) if READABLE_FORMATS.contains(&format.value()) => Ok(()),
                Some(format) => Err(IndexError::UnknownFormat {
                    path: self.path.display().to_string(),
                    format: format.value().to_owned(),
                    readable: &READABLE_FORMATS,
                }),
                None => Err(foreign()),
            },
            Err(redb::TableError::TableDoesNotExist(_)) if tables == 0 => Ok(()),
            Err(redb::TableError::TableDoesNotExist(_)) => Err(foreign()),
            Err(e) => Err(IndexError::from(e).doing_at(&self.path, "reading the index")),
        }
    }

    /// After an add whose postings merges replaced `merged_bytes` of segments, gives free
    /// space back ([`Store::compact_if_sparse`]) when they are over an eighth of the file's
    /// disk space. Smaller merges free pages that the next adds fill again, and checking the
    /// whole file's pages reads all of it (about ten seconds at ten million documents), so
    /// only an add that may have left the file sparse checks it. True when compacted.
    pub fn compact_after_merges(&mut self, merged_bytes: u64) -> Result<bool> {
        if !matches!(self.handle, Handle::Writing(_)) || merged_bytes == 0 {
            return Ok(false);
        }
        let file = bytes_on_disk(&std::fs::metadata(&self.path)?);
        if merged_bytes.saturating_mul(8) < file {
            return Ok(false);
        }
        self.compact_if_sparse()
    }

    /// Gives free space back when more than an eighth of the file's disk space is free pages:
    /// the postings merges of an add write a segment's new copy before its old pages are
    /// freed, and a copy-on-write file does not shrink on its own. (The file also grows ahead
    /// of its use, but that part is sparse and takes no disk space.) Runs after the change is
    /// committed.
    pub fn compact_if_sparse(&mut self) -> Result<bool> {
        let Handle::Writing(db) = &mut self.handle else {
            return Ok(false);
        };
        let file = bytes_on_disk(&std::fs::metadata(&self.path)?);
        let used = {
            let txn = db.begin_write()?;
            let stats = txn.stats()?;
            txn.abort()?;
            stats.allocated_pages() * stats.page_size() as u64
        };
        if used * 8 >= file * 7 {
            return Ok(false);
        }
        while db
            .compact()
            .map_err(|e| IndexError::from(e).doing_at(&self.path, "compacting the index"))?
        {
        }
        Ok(true)
    }

    /// True when nothing was ever added.
    pub fn is_new(&self) -> Result<bool> {
        if matches!(self.handle, Handle::New) {
            return Ok(true);
        }
        let txn = self.begin_read()?;
        let tables = txn.list_tables()?.count();
        Ok(tables == 0)
    }

    /// The format the index says it has; `None` for a new index.
    pub fn format(&self) -> Result<Option<String>> {
        if self.is_new()? {
            return Ok(None);
        }
        let txn = self.begin_read()?;
        let meta = txn.open_table(META)?;
        let format = meta.get("format")?.map(|f| f.value().to_owned());
        Ok(format)
    }

    /// True when the index keeps the passages of its documents (it was made with them); false
    /// for a new index, which its first add makes with them or not.
    pub fn keeps_passages(&self) -> Result<bool> {
        Ok(self
            .format()?
            .is_some_and(|f| crate::index::schema::keeps_passages(&f)))
    }

    /// The configuration the index was made with; `None` for a new index.
    pub fn configuration(&self) -> Result<Option<Config>> {
        if self.is_new()? {
            return Ok(None);
        }
        let txn = self.begin_read()?;
        let meta = txn.open_table(META)?;
        let text = meta
            .get("configuration")?
            .ok_or_else(|| IndexError::damaged(Damage::NoConfiguration).at(&self.path))?
            .value()
            .to_owned();
        let config: Config = toml::from_str(&text).map_err(|e| {
            let message = e.to_string();
            IndexError::damaged(Damage::Configuration { message }).at(&self.path)
        })?;
        Ok(Some(config))
    }

    /// Fails, naming every differing key, when sketches made with `config` could not be
    /// compared with the index's.
    pub fn check_comparable(&self, config: &Config) -> Result<()> {
        let Some(indexed) = self.configuration()? else {
            return Ok(());
        };
        let differences = sketch_differences(&indexed, config);
        if differences.is_empty() {
            return Ok(());
        }
        Err(IndexError::Incomparable {
            path: self.path.display().to_string(),
            differences: differences.join(", "),
        })
    }
}

/// The disk space a file takes: its allocated blocks (a sparse file's holes take none).
pub fn bytes_on_disk(metadata: &std::fs::Metadata) -> u64 {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        metadata.blocks() * 512
    }
    #[cfg(not(unix))]
    {
        metadata.len()
    }
}

/// Runs `open` with panics caught: redb may panic on a damaged file, which is then an error.
/// The panic hook is the program's own (the library sets none): the `megashingle` binary's
/// only records the message, so the user sees the error line alone.
fn caught<T>(open: impl FnOnce() -> T + std::panic::UnwindSafe) -> std::thread::Result<T> {
    std::panic::catch_unwind(open)
}

/// The database opened (or made) for writing.
fn open_writable(path: &Path) -> Result<Database> {
    let opened = caught(|| Builder::new().set_cache_size(CACHE_BYTES).create(path));
    opened_or_error(path, opened)
}

/// What redb opened, or the error a user can act on.
fn opened_or_error<T>(
    path: &Path,
    opened: std::thread::Result<Result<T, redb::DatabaseError>>,
) -> Result<T> {
    let unopenable =
        |cause: Option<String>| IndexError::damaged(Damage::Unopenable { cause }).at(path);
    match opened {
        Ok(Ok(db)) => Ok(db),
        Ok(Err(redb::DatabaseError::DatabaseAlreadyOpen)) => Err(IndexError::Locked {
            path: path.display().to_string(),
            holder: None,
        }),
        Ok(Err(redb::DatabaseError::Storage(redb::StorageError::Io(e)))) => {
            Err(IndexError::io(path, "cannot open the index", e))
        }
        Ok(Err(e)) => Err(unopenable(Some(e.to_string()))),
        Err(_) => Err(unopenable(None)),
    }
}

/// The keys of the sketch sections where `indexed` and `config` differ, each as
/// `key = indexed value (here: other value)`.
pub fn sketch_differences(indexed: &Config, config: &Config) -> Vec<String> {
    let (a, b) = (sketch_settings_of(indexed), sketch_settings_of(config));
    let mut out = Vec::new();
    for (key, value) in &a {
        let other = b.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str());
        if other != Some(value.as_str()) {
            out.push(format!(
                "{key} = {value} (here: {})",
                other.unwrap_or("unset")
            ));
        }
    }
    out
}

/// `section.key` and value of every key of the sketch sections.
pub fn sketch_settings_of(config: &Config) -> Vec<(String, String)> {
    let table: toml::Table = toml::from_str(&config.to_toml()).expect("the configuration's TOML");
    let mut out = Vec::new();
    for section in SKETCH_SECTIONS {
        if let Some(toml::Value::Table(keys)) = table.get(section) {
            for (key, value) in keys {
                out.push((format!("{section}.{key}"), value.to_string()));
            }
        }
    }
    out
}

fn check_magic(path: &Path) -> Result<()> {
    let cannot_open = |e| IndexError::io(path, "cannot open", e);
    let mut file = File::open(path).map_err(cannot_open)?;
    if file.metadata().map_err(cannot_open)?.is_dir() {
        return Err(IndexError::not_an_index(path, Foreign::Folder));
    }
    let mut head = [0u8; REDB_MAGIC.len()];
    let mut read = 0;
    while read < head.len() {
        match file.read(&mut head[read..]).map_err(cannot_open)? {
            0 => break,
            n => read += n,
        }
    }
    if read == 0 {
        return Ok(());
    }
    if head[..read] != REDB_MAGIC[..read] || read < head.len() {
        return Err(IndexError::not_an_index(path, Foreign::NotRedb));
    }
    Ok(())
}

/// A lock on `<index>.lock`, held while the index is open. The file says who holds it; it is
/// left in place when the lock is released (the kernel releases it with the process), except
/// when the command that made it fails before the index is open, or discards a new index.
struct Lock {
    /// The open lock file, locked.
    _file: File,
    /// The lock file.
    path: PathBuf,
    /// True when this lock made the file.
    made: bool,
}

/// How many times, 10 ms apart, taking a lock that this process is named as holding is tried
/// again: a file descriptor is copied into every child process started while it is open, and
/// the copy holds the lock until the child runs its program (or exits), so a lock let go
/// of may stay held for a moment when another thread starts a child.
const OWN_LOCK_WAITS: u32 = 100;

/// The lock file of the index at `index`: `<index>.lock`.
pub fn lock_path(index: &Path) -> PathBuf {
    let mut name = index.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

impl Lock {
    fn take(index: &Path, command: &str) -> Result<Lock> {
        let path = lock_path(index);
        let open = |new: bool| {
            OpenOptions::new()
                .read(true)
                .write(true)
                .create(!new)
                .create_new(new)
                .truncate(false)
                .open(&path)
        };
        let (mut file, made) = match open(true) {
            Ok(file) => (file, true),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => (
                open(false).map_err(|e| IndexError::io(&path, "cannot open the lock file", e))?,
                false,
            ),
            Err(e) => return Err(IndexError::io(&path, "cannot make the lock file", e)),
        };
        let pid = format!("(pid {})", std::process::id());
        let mut waited = 0;
        loop {
            match file.try_lock() {
                Ok(()) => break,
                Err(std::fs::TryLockError::WouldBlock) => {
                    let mut holder = String::new();
                    let _ = file.rewind();
                    let _ = file.read_to_string(&mut holder);
                    let holder = holder.trim();
                    // A lock this process let go of a moment ago is still held by a child
                    // that another thread is starting, until it runs its program.
                    if holder.contains(&pid) && waited < OWN_LOCK_WAITS {
                        waited += 1;
                        std::thread::sleep(std::time::Duration::from_millis(10));
                        continue;
                    }
                    let holder = if holder.is_empty() {
                        "another process"
                    } else {
                        holder
                    };
                    return Err(IndexError::Locked {
                        path: index.display().to_string(),
                        holder: Some(holder.to_owned()),
                    });
                }
                Err(std::fs::TryLockError::Error(e)) => {
                    return Err(IndexError::io(&path, "cannot lock", e));
                }
            }
        }
        let holder = format!("megashingle {command} {pid} since {}\n", format_time(now()));
        let write = |file: &mut File| -> std::io::Result<()> {
            file.set_len(0)?;
            file.rewind()?;
            file.write_all(holder.as_bytes())?;
            file.flush()
        };
        write(&mut file).map_err(|e| IndexError::io(&path, "cannot write the lock file", e))?;
        Ok(Lock {
            _file: file,
            path,
            made,
        })
    }

    /// Removes the lock file while the lock is still held: a process waiting for it is
    /// refused as if it were held, and one that comes later makes a new one.
    fn remove(&self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// The posting key of a candidate key: its two halves folded into 32 bits. A collision only
/// adds a candidate, which verification then turns down.
pub fn posting_key(key: u64) -> u32 {
    (key ^ (key >> 32)) as u32
}

/// The minima as the index keeps them: their low 16 bits.
pub fn short_minima(signature: &[u32]) -> Vec<u16> {
    signature.iter().map(|&m| m as u16).collect()
}

/// Short minima widened back to the signature type, for comparing with other short minima.
pub fn widen(short: &[u16]) -> Vec<u32> {
    short.iter().map(|&m| u32::from(m)).collect()
}

/// The sorted, distinct posting keys of a signature.
pub fn posting_keys(maker: &KeyMaker, signature: &[u32]) -> Vec<u32> {
    let mut keys: Vec<u32> = maker
        .candidate_keys(signature)
        .into_iter()
        .map(posting_key)
        .collect();
    keys.sort_unstable();
    keys.dedup();
    keys
}

/// Every table, open in one write transaction.
pub(crate) struct Tables<'t> {
    pub meta: Table<'t, &'static str, &'static str>,
    pub counters: Table<'t, &'static str, u64>,
    pub docs: Table<'t, u32, &'static [u8]>,
    /// The ids' postings (see `src/index/ids.rs`).
    pub ids: Postings<'t>,
    pub postings: Postings<'t>,
    pub stories: Table<'t, u32, &'static [u8]>,
    pub story_names: Table<'t, &'static str, u32>,
    pub members: Table<'t, (u32, u32), ()>,
    pub merges: Table<'t, u64, &'static [u8]>,
    pub ghosts: Table<'t, u32, &'static [u8]>,
    pub ghosts_of: Table<'t, (u32, u32), ()>,
    /// The documents' leads (see [`LEADS`]).
    pub leads: Table<'t, u32, &'static [u8]>,
    /// The passages, in an index that keeps them.
    pub passages: Option<PassageTables<'t>>,
}

/// The passage tables of a write transaction: each document's record and the fingerprints'
/// postings.
pub(crate) struct PassageTables<'t> {
    pub records: Table<'t, u32, &'static [u8]>,
    pub postings: Postings<'t>,
}

impl<'t> Tables<'t> {
    /// Opens (and on a new index makes) every table; the passage tables when the index has
    /// them, or when `make_passages` says to make them. Tables of an earlier format are moved
    /// to this one's (the bare leads dropped, the ids moved into postings), and the index
    /// says it has the current format.
    pub fn open(txn: &'t WriteTransaction, make_passages: bool) -> Result<Tables<'t>> {
        let has_passages = txn.list_tables()?.any(|t| t.name() == PASSAGES.name());
        txn.delete_table(BARE_LEADS)?;
        let passages = if has_passages || make_passages {
            Some(PassageTables {
                records: txn.open_table(PASSAGES)?,
                postings: Postings::open_passages(txn)?,
            })
        } else {
            None
        };
        let mut ids = crate::index::ids::open(txn)?;
        crate::index::ids::move_former_ids(txn, &mut ids)?;
        let mut meta = txn.open_table(META)?;
        let format = if passages.is_some() {
            FORMAT_WITH_PASSAGES
        } else {
            FORMAT
        };
        meta.insert("format", format)?;
        Ok(Tables {
            passages,
            meta,
            counters: txn.open_table(COUNTERS)?,
            docs: txn.open_table(DOCS)?,
            ids,
            postings: Postings::open(txn)?,
            stories: txn.open_table(STORIES)?,
            story_names: txn.open_table(STORY_NAMES)?,
            members: txn.open_table(MEMBERS)?,
            merges: txn.open_table(MERGES)?,
            ghosts: txn.open_table(GHOSTS)?,
            leads: txn.open_table(LEADS)?,
            ghosts_of: txn.open_table(GHOSTS_OF)?,
        })
    }

    /// For each of `ids`, the number of the indexed document that has it, if any (see
    /// `src/index/ids.rs`).
    pub fn indexed(&self, ids: &[&str]) -> Result<Vec<Option<u32>>> {
        let t = &self.ids;
        crate::index::ids::indexed(&t.segments, &t.dead, &t.chunks, &self.docs, ids)
    }

    /// A counter's value (0 when never set).
    pub fn counter(&self, name: &str) -> Result<u64> {
        Ok(self.counters.get(name)?.map_or(0, |v| v.value()))
    }

    /// The document numbered `number`.
    pub fn doc(&self, number: u32) -> Result<DocRecord> {
        let bytes = self
            .docs
            .get(number)?
            .ok_or(IndexError::damaged(Damage::LostDocument { number }))?;
        DocRecord::decode(bytes.value())
    }

    /// The story numbered `number`.
    pub fn story(&self, number: u32) -> Result<StoryRecord> {
        let bytes = self
            .stories
            .get(number)?
            .ok_or(IndexError::damaged(Damage::LostStory { number }))?;
        StoryRecord::decode(bytes.value())
    }

    /// Writes a story.
    pub fn put_story(&mut self, number: u32, story: &StoryRecord) -> Result<()> {
        self.stories.insert(number, story.encode().as_slice())?;
        Ok(())
    }

    /// The documents of a story.
    pub fn members_of(&self, story: u32) -> Result<Vec<u32>> {
        self.members
            .range((story, 0)..=(story, u32::MAX))?
            .map(|entry| Ok(entry?.0.value().1))
            .collect()
    }

    /// A story name not in use, from `wanted` (the founding document's id), and takes it for
    /// `story`.
    pub fn claim_story_name(&mut self, wanted: &str, story: u32) -> Result<String> {
        let mut name = wanted.to_owned();
        let mut n = 2;
        while self.story_names.get(name.as_str())?.is_some() {
            name = format!("{wanted}~{n}");
            n += 1;
        }
        self.story_names.insert(name.as_str(), story)?;
        Ok(name)
    }

    /// Removes a document from every table and from its story; returns its record. When its
    /// story lives on, the document stays as a ghost of it (see [`GHOSTS`]) with its
    /// postings; a story left empty is removed, and its ghosts' postings, like the
    /// document's, stay until their segment is merged, listed as dead. The story's
    /// representative is not replaced here: see [`Tables::repair_representative`].
    pub fn remove_document(&mut self, number: u32) -> Result<DocRecord> {
        let record = self.doc(number)?;
        // A removed document's passages go whether or not it stays as a ghost: a ghost
        // stands for its story in the look-up, never for a text in a query.
        if let Some(passages) = &mut self.passages {
            if passages.records.remove(number)?.is_some() {
                passages.postings.dead.insert(number, ())?;
            }
        }
        self.ids.dead.insert(number, ())?;
        self.members.remove((record.story, number))?;
        self.docs.remove(number)?;
        let mut story = self.story(record.story)?;
        story.size -= 1;
        if story.size == 0 {
            if record.shingles > 0 {
                self.postings.dead.insert(number, ())?;
            }
            self.leads.remove(number)?;
            self.bury_ghosts(record.story)?;
            self.stories.remove(record.story)?;
            self.story_names.remove(story.name.as_str())?;
        } else {
            if record.shingles > 0 {
                self.ghosts.insert(number, record.encode().as_slice())?;
                self.ghosts_of.insert((record.story, number), ())?;
            }
            self.put_story(record.story, &story)?;
        }
        Ok(record)
    }

    /// The ghosts of a story.
    pub fn ghosts_of(&self, story: u32) -> Result<Vec<u32>> {
        self.ghosts_of
            .range((story, 0)..=(story, u32::MAX))?
            .map(|entry| Ok(entry?.0.value().1))
            .collect()
    }

    /// Removes the ghosts of an emptied story; their postings are listed as dead.
    fn bury_ghosts(&mut self, story: u32) -> Result<()> {
        for ghost in self.ghosts_of(story)? {
            self.ghosts.remove(ghost)?;
            self.leads.remove(ghost)?;
            self.ghosts_of.remove((story, ghost))?;
            self.postings.dead.insert(ghost, ())?;
        }
        Ok(())
    }

    /// Makes the ghosts of story `absorbed` ghosts of story `survivor`, which it was merged
    /// into.
    pub fn move_ghosts(&mut self, absorbed: u32, survivor: u32) -> Result<()> {
        for ghost in self.ghosts_of(absorbed)? {
            let bytes = self
                .ghosts
                .get(ghost)?
                .ok_or(IndexError::damaged(Damage::LostDocument { number: ghost }))?;
            let mut record = DocRecord::decode(bytes.value())?;
            drop(bytes);
            record.story = survivor;
            self.ghosts.insert(ghost, record.encode().as_slice())?;
            self.ghosts_of.remove((absorbed, ghost))?;
            self.ghosts_of.insert((survivor, ghost), ())?;
        }
        Ok(())
    }

    /// When a story's representative was removed, its fullest remaining member (most
    /// shingles, then smallest id) takes its place.
    pub fn repair_representative(&mut self, number: u32) -> Result<()> {
        let Some(bytes) = self.stories.get(number)? else {
            return Ok(());
        };
        let mut story = StoryRecord::decode(bytes.value())?;
        drop(bytes);
        if self.docs.get(story.representative)?.is_some() {
            return Ok(());
        }
        let mut best: Option<(u32, std::cmp::Reverse<String>, u32)> = None;
        for member in self.members_of(number)? {
            let doc = self.doc(member)?;
            let key = (doc.shingles, std::cmp::Reverse(doc.id), member);
            if best
                .as_ref()
                .is_none_or(|b| (&key.0, &key.1) > (&b.0, &b.1))
            {
                best = Some(key);
            }
        }
        if let Some((_, _, member)) = best {
            story.representative = member;
            self.put_story(number, &story)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use redb::TableDefinition;

    #[test]
    fn only_merges_of_an_eighth_of_the_file_have_it_compacted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.db");
        let mut store = Store::open(&path, Open::CreateIfMissing, "test").unwrap();
        // A file that is mostly free pages: a large table written, then deleted.
        let filler: TableDefinition<u32, &[u8]> = TableDefinition::new("filler");
        let db = store.writable().unwrap();
        let txn = db.begin_write().unwrap();
        txn.open_table(META)
            .unwrap()
            .insert("format", FORMAT)
            .unwrap();
        {
            let mut table = txn.open_table(filler).unwrap();
            for i in 0..4_000u32 {
                table.insert(i, [i as u8; 1000].as_slice()).unwrap();
            }
        }
        txn.commit().unwrap();
        let txn = db.begin_write().unwrap();
        txn.delete_table(filler).unwrap();
        txn.commit().unwrap();
        let disk = || bytes_on_disk(&std::fs::metadata(&path).unwrap());
        let sparse = disk();

        assert!(!store.compact_after_merges(0).unwrap());
        assert!(!store.compact_after_merges(sparse / 10).unwrap());
        assert_eq!(disk(), sparse, "left as it was");
        // A reader holding the file open keeps its pages: the compaction fails, and says so.
        let reader = store.begin_read().unwrap();
        let error = store.compact_after_merges(sparse / 4).unwrap_err();
        assert!(
            format!("{error:#}")
                .starts_with(&format!("{}: compacting the index: ", path.display())),
            "{error:#}"
        );
        drop(reader);
        assert_eq!(disk(), sparse, "left as it was");
        assert!(store.compact_after_merges(sparse / 4).unwrap());
        assert!(disk() < sparse / 2, "{} of {sparse} bytes", disk());
    }

    #[test]
    fn an_index_of_an_unknown_format_is_refused_with_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.db");
        {
            let db = redb::Database::create(&path).unwrap();
            let txn = db.begin_write().unwrap();
            txn.open_table(META)
                .unwrap()
                .insert("format", "megashingle-index 9")
                .unwrap();
            txn.commit().unwrap();
        }
        let error = Store::open(&path, Open::Existing, "test")
            .err()
            .unwrap()
            .to_string();
        assert_eq!(
            error,
            format!(
                "{}: index format \"megashingle-index 9\", which this megashingle cannot read (it \
                 reads \"megashingle-index 1\", \"megashingle-index 2\", \"megashingle-index \
                 3\", \"megashingle-index 4\", \"megashingle-index 5\" and \"megashingle-index \
                 6\"); use the megashingle that made the index, or a newer one",
                path.display()
            )
        );
    }

    #[test]
    fn leads_kept_as_bare_keys_are_dropped_by_the_next_write() {
        let dir = tempfile::tempdir().unwrap();
        let db = redb::Database::create(dir.path().join("index.db")).unwrap();
        let txn = db.begin_write().unwrap();
        txn.open_table(BARE_LEADS)
            .unwrap()
            .insert(0, &[1u8, 2][..])
            .unwrap();
        txn.commit().unwrap();
        let txn = db.begin_write().unwrap();
        drop(Tables::open(&txn, false).unwrap());
        txn.commit().unwrap();
        let txn = db.begin_read().unwrap();
        let names: Vec<String> = txn
            .list_tables()
            .unwrap()
            .map(|t| t.name().into())
            .collect();
        assert!(!names.contains(&"leads".to_string()), "{names:?}");
        assert!(names.contains(&LEADS.name().to_string()), "{names:?}");
    }

    #[test]
    fn sketch_differences_name_the_keys() {
        let a = Config::default();
        let mut b = Config::default();
        assert!(sketch_differences(&a, &b).is_empty());
        b.shingle.size = 4;
        b.cluster.min_similarity = 0.5;
        let differences = sketch_differences(&a, &b);
        assert_eq!(differences, vec!["shingle.size = 3 (here: 4)".to_string()]);
    }
}
