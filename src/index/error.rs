//! The index's one error type, [`IndexError`]: a flat enum with a variant for each way an
//! index cannot be used (missing, locked, foreign, of an unknown format, damaged, of other
//! settings, full) and one for the file's reads and writes. The messages speak of the index
//! file and its settings, never of commands or flags: a program adds how its users do what they
//! say (the command line names its commands, see `src/hints.rs`).
//!
//! Inside the index's code a table or a record fails without knowing which file it is in; the
//! functions that take the index (the [`crate::index::Index`] facade, the store, the add, the
//! reads) give the error its path ([`IndexError::at`]) on its way out.

use std::path::Path;

/// An index that cannot be used as asked, or a read or write of its file that failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum IndexError {
    /// There is no index where one must be.
    #[error("{path}: no index there (an index is made by the first add to it)")]
    Missing {
        /// The index file, as given.
        path: String,
    },
    /// The index was opened but nothing was ever added to it, where a read needs its tables.
    #[error("{path}: the index is empty")]
    Empty {
        /// The index file.
        path: String,
    },
    /// Another process holds the index: its lock (`<index>.lock`), or, for a program that
    /// takes no lock, the database file itself. Nothing was changed.
    #[error("{}", locked_line(path, holder.as_deref()))]
    Locked {
        /// The index file.
        path: String,
        /// Who holds the lock, as the lock file says ("another process" when it says
        /// nothing); `None` when the database file is open in a program that took no lock.
        holder: Option<String>,
    },
    /// The file is not a megashingle index; it was not changed.
    #[error("{path}: {what}")]
    NotAnIndex {
        /// The file.
        path: String,
        /// What it is instead.
        what: Foreign,
    },
    /// The index is of a format this megashingle does not read (made by a newer one).
    #[error(
        "{path}: index format {format:?}, which this megashingle cannot read (it reads {}); use \
         the megashingle that made the index, or a newer one",
        listed(readable)
    )]
    UnknownFormat {
        /// The index file.
        path: String,
        /// The format it says it has.
        format: String,
        /// The formats this megashingle reads.
        readable: &'static [&'static str],
    },
    /// A table or a record of the index cannot be decoded, or is missing: the file is
    /// damaged, and a copy of it is to be restored.
    #[error("{}", located(path, damage))]
    Damaged {
        /// The index file.
        path: String,
        /// What is damaged.
        damage: Damage,
    },
    /// The configuration's sketch settings differ from those the index was made with.
    #[error(
        "{path}: the index was made with {differences}; its sketches cannot be compared with \
         this configuration's. Run with the index's settings (stored in the index) or use a new index"
    )]
    Incomparable {
        /// The index file.
        path: String,
        /// Each differing key with its two values.
        differences: String,
    },
    /// A document to add has an id the index holds already, and is not to replace it.
    #[error(
        "{origin}: id {id:?} is already in the index (added {added}); nothing was added: leave \
         the record out, or add it as a replacement of the indexed document"
    )]
    AlreadyIndexed {
        /// The record.
        origin: String,
        /// Its id.
        id: String,
        /// When the indexed document was added.
        added: String,
    },
    /// The index was made without the passages of its documents, which finding reuse through
    /// it needs.
    #[error(
        "{path}: the index keeps no passages of its documents (index format {format:?}), so \
         reuse cannot be found through it; make an index that keeps them (format {passages:?}) \
         with `index add --passages` on its first add, or ask this one for near-duplicates only"
    )]
    NoPassages {
        /// The index file.
        path: String,
        /// The format it has.
        format: String,
        /// The format that keeps passages.
        passages: &'static str,
    },
    /// Passages were asked of an add to an index made without them, whose documents have none.
    #[error(
        "{path}: the index was made without passages (index format {format:?}) and cannot begin \
         to keep them, as its documents have none; add to it without --passages, or make a new \
         index with `index add --passages` on its first add"
    )]
    MadeWithoutPassages {
        /// The index file.
        path: String,
        /// The format it has.
        format: String,
    },
    /// The index holds as many documents as it can number.
    #[error("{path}: the index is full (2^32 documents)")]
    Full {
        /// The index file.
        path: String,
    },
    /// The index file (or its lock file) could not be read or written: a full disk, a file
    /// too large, a permission. A write that fails leaves the index as it was.
    #[error("{}", io_line(path, doing, error))]
    Io {
        /// The file.
        path: String,
        /// What was being done, e.g. "cannot write to the index, which is left as it was".
        doing: &'static str,
        /// Why: the system's error, or the database's (whose message it keeps). The message
        /// shows it, so it is not the error's `source()`.
        error: std::io::Error,
    },
}

/// What a file that is not a megashingle index is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Foreign {
    /// A folder.
    #[error("a folder, not an index file")]
    Folder,
    /// A file of another kind (not a redb database).
    #[error(
        "not a megashingle index (not a redb database); refusing to touch it. Give the path of \
         an index, or of a new file to make one"
    )]
    NotRedb,
    /// A redb database of another program.
    #[error("a redb database, but not a megashingle index; refusing to change it")]
    OtherDatabase,
}

/// What part of an index is damaged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Damage {
    /// The database cannot be opened, with the database's reason when it gave one.
    #[error(
        "the index is damaged and cannot be opened{}; restore it from a copy",
        cause.as_ref().map(|c| format!(" ({c})")).unwrap_or_default()
    )]
    Unopenable {
        /// What the database said.
        cause: Option<String>,
    },
    /// The database found its own structure corrupted while reading it.
    #[error("the index is damaged ({message}); restore it from a copy")]
    Corrupted {
        /// What the database said.
        message: String,
    },
    /// A document, story or merge record does not decode.
    #[error("a damaged record in the index; restore the index from a copy")]
    Record,
    /// A block of the known boilerplate is not a sorted list of two-byte entries.
    #[error("the index's boilerplate block {top} is damaged; restore the index from a copy")]
    BoilerplateBlock {
        /// The block's number: the top 16 bits of its shingles.
        top: u16,
    },
    /// A postings segment's directory does not decode.
    #[error("a damaged postings directory in the index; restore the index from a copy")]
    PostingsDirectory,
    /// A postings chunk does not decode.
    #[error("a damaged postings chunk in the index; restore the index from a copy")]
    PostingsChunk,
    /// A document's passage record (its shingle keys in text order) does not decode.
    #[error(
        "the passages of document {number} in the index are damaged; restore the index from a copy"
    )]
    Passages {
        /// The document's number.
        number: u32,
    },
    /// A postings chunk its segment's directory lists is missing.
    #[error("the index lost a postings chunk; restore it from a copy")]
    LostChunk,
    /// A postings segment is missing.
    #[error("the index lost a postings segment; restore it from a copy")]
    LostSegment,
    /// A document that the index refers to is missing.
    #[error("the index lost document {number}; restore it from a copy")]
    LostDocument {
        /// Its number.
        number: u32,
    },
    /// A story that the index refers to is missing.
    #[error("the index lost story {number}; restore it from a copy")]
    LostStory {
        /// Its number.
        number: u32,
    },
    /// The index keeps no configuration.
    #[error("the index has no configuration")]
    NoConfiguration,
    /// The configuration the index keeps does not read.
    #[error("the index's configuration: {message}")]
    Configuration {
        /// Why.
        message: String,
    },
}

/// The index's results.
pub type Result<T, E = IndexError> = std::result::Result<T, E>;

impl IndexError {
    /// The error of a damaged index (its path given on the way out, see [`IndexError::at`]).
    pub(crate) fn damaged(damage: Damage) -> IndexError {
        IndexError::Damaged {
            path: String::new(),
            damage,
        }
    }

    /// The error of a file that is not an index.
    pub(crate) fn not_an_index(path: &Path, what: Foreign) -> IndexError {
        IndexError::NotAnIndex {
            path: path.display().to_string(),
            what,
        }
    }

    /// A read or write of `path` that failed while `doing` something.
    pub(crate) fn io(path: &Path, doing: &'static str, error: std::io::Error) -> IndexError {
        IndexError::Io {
            path: path.display().to_string(),
            doing,
            error,
        }
    }

    /// The error with the index's path, when it has none yet; a read or write of the file
    /// that has not said what it was doing says it was reading the index.
    pub fn at(self, path: &Path) -> IndexError {
        self.doing_at(path, "cannot read the index")
    }

    /// As [`IndexError::at`], a read or write that has not said what it was doing saying
    /// `doing`.
    pub(crate) fn doing_at(mut self, index: &Path, doing_now: &'static str) -> IndexError {
        match &mut self {
            IndexError::Damaged { path, .. }
            | IndexError::Io { path, .. }
            | IndexError::Locked { path, .. }
                if path.is_empty() =>
            {
                *path = index.display().to_string();
            }
            _ => {}
        }
        if let IndexError::Io { doing, .. } = &mut self {
            if doing.is_empty() {
                *doing = doing_now;
            }
        }
        self
    }
}

/// The line of a lock held by another process.
fn locked_line(path: &str, holder: Option<&str>) -> String {
    match holder {
        Some(holder) => {
            format!(
                "{path}: index is locked by {holder}; wait for it to finish (nothing was changed)"
            )
        }
        None => format!("{path}: the index is open in another program; wait for it to finish"),
    }
}

/// Formats quoted and listed: `"a"`, `"a" and "b"`, `"a", "b" and "c"`.
fn listed(formats: &[&str]) -> String {
    let quoted: Vec<String> = formats.iter().map(|f| format!("{f:?}")).collect();
    match quoted.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => quoted.concat(),
    }
}

/// A message after the file's path, when the path is known.
fn located(path: &str, message: &impl std::fmt::Display) -> String {
    if path.is_empty() {
        message.to_string()
    } else {
        format!("{path}: {message}")
    }
}

/// The line of a failed read or write.
fn io_line(path: &str, doing: &str, error: &std::io::Error) -> String {
    match (path.is_empty(), doing.is_empty()) {
        (false, false) => format!("{path}: {doing}: {error}"),
        (false, true) => format!("{path}: {error}"),
        (true, false) => format!("{doing}: {error}"),
        (true, true) => error.to_string(),
    }
}

/// The error of a database error met inside the index's code, where the file is not known:
/// corruption is damage, anything else a failed read or write (keeping the database's
/// message, and the system's error kind when there is one).
fn of_database(error: redb::Error) -> IndexError {
    match error {
        redb::Error::Corrupted(message) => IndexError::damaged(Damage::Corrupted { message }),
        redb::Error::DatabaseAlreadyOpen => IndexError::Locked {
            path: String::new(),
            holder: None,
        },
        other => {
            let kind = match &other {
                redb::Error::Io(e) => e.kind(),
                _ => std::io::ErrorKind::Other,
            };
            IndexError::Io {
                path: String::new(),
                doing: "",
                error: std::io::Error::new(kind, other),
            }
        }
    }
}

macro_rules! from_database_errors {
    ($($error:ty),*) => {$(
        impl From<$error> for IndexError {
            fn from(error: $error) -> IndexError {
                of_database(error.into())
            }
        }
    )*};
}

from_database_errors!(
    redb::Error,
    redb::StorageError,
    redb::TableError,
    redb::TransactionError,
    redb::CommitError,
    redb::DatabaseError,
    redb::CompactionError
);

impl From<std::io::Error> for IndexError {
    fn from(error: std::io::Error) -> IndexError {
        IndexError::Io {
            path: String::new(),
            doing: "",
            error,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_met_inside_the_index_get_its_path_on_the_way_out() {
        let index = Path::new("stories.db");
        let damaged = IndexError::damaged(Damage::LostStory { number: 4 });
        assert_eq!(
            damaged.to_string(),
            "the index lost story 4; restore it from a copy"
        );
        assert_eq!(
            damaged.at(index).to_string(),
            "stories.db: the index lost story 4; restore it from a copy"
        );
        let full = std::io::Error::new(std::io::ErrorKind::StorageFull, "No space left");
        let failed = IndexError::from(redb::StorageError::Io(full));
        let written = failed.doing_at(index, "cannot write to the index, which is left as it was");
        assert_eq!(
            written.to_string(),
            "stories.db: cannot write to the index, which is left as it was: I/O error: No space \
             left"
        );
        match &written {
            IndexError::Io { error, .. } => {
                assert_eq!(error.kind(), std::io::ErrorKind::StorageFull)
            }
            other => panic!("{other:?}"),
        }
        // A path and a doing given first stay.
        let read = IndexError::from(std::io::Error::other("gone")).at(index);
        assert_eq!(
            read.doing_at(Path::new("other.db"), "writing").to_string(),
            "stories.db: cannot read the index: gone"
        );
        let corrupted = IndexError::from(redb::StorageError::Corrupted("bad page".into()));
        assert_eq!(
            corrupted.at(index).to_string(),
            "stories.db: the index is damaged (bad page); restore it from a copy"
        );
    }
}
