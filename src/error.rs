//! The library's one error type. Every message is one line that names the file, record or key
//! at fault and what to do; it speaks of configuration keys and files, never of command-line
//! flags, so a program that embeds the library can show it as it is.

use crate::compare::TooShort;
use crate::config::ConfigError;
use crate::index::IndexError;
use crate::io::read::ReadError;

/// Why a call of the library failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The configuration cannot be used.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// An input or a record cannot be used.
    #[error(transparent)]
    Input(#[from] ReadError),
    /// A document was given with an empty id.
    #[error("document {position} has an empty id; every document needs a non-empty, unique id")]
    EmptyId {
        /// Its position among the documents added, from 1.
        position: u64,
    },
    /// A text has fewer words than the shingle size, where a comparison needs shingles.
    #[error(transparent)]
    TooShort(#[from] TooShort),
    /// The shingle sets past the memory budget could not be written to, or read back from,
    /// a temporary file.
    #[error(
        "{dir}: cannot write or read back the temporary file of shingle sets ({source}); free \
         space there, set TMPDIR to a folder with room, or raise cluster.set-memory-mb"
    )]
    Spill {
        /// The temporary folder.
        dir: String,
        /// Why.
        source: std::io::Error,
    },
    /// The system refused the worker threads.
    #[error("cannot start {threads} worker threads ({message}); use fewer threads")]
    Threads {
        /// Threads asked for (0: one per core).
        threads: usize,
        /// What the system said.
        message: String,
    },
    /// The story index cannot be used as asked, or its file cannot be read or written.
    #[error(transparent)]
    Index(#[from] IndexError),
}

impl Error {
    /// The error of a temporary file of shingle sets that failed.
    pub(crate) fn spill(source: std::io::Error) -> Error {
        Error::Spill {
            dir: std::env::temp_dir().display().to_string(),
            source,
        }
    }
}

/// The library's result.
pub type Result<T, E = Error> = std::result::Result<T, E>;
