//! The exceptions of the Python package and the one mapping from the library's errors to them.
//! Every failure reaches Python as a subclass of `megashingle.MegashingleError` (itself a
//! `ValueError`, as every error was before there were classes of them, so that code catching
//! `ValueError` still catches them), except a failed read or write of a file, which is the
//! built-in `OSError` (its subclass for the system's error: `FileNotFoundError`,
//! `PermissionError`, …):
//!
//! ```text
//! MegashingleError (ValueError)
//! ├── InputError           a document, a record or an input file that cannot be used
//! ├── ConfigError          a setting or a configuration file that cannot be used
//! └── StoryIndexError      a story index that cannot be used as asked
//!     ├── IndexLockedError     another program holds it
//!     ├── IndexDamagedError    a table or record of it cannot be read: restore a copy
//!     └── IndexFormatError     not an index, or of a format this version does not read
//! ```

use megashingle::index::IndexError;
use megashingle::io::read::ReadError;
use megashingle::packed::PackError;
use pyo3::create_exception;
use pyo3::exceptions::{PyKeyboardInterrupt, PyOSError, PyValueError};
use pyo3::prelude::*;

create_exception!(
    megashingle,
    MegashingleError,
    PyValueError,
    "Every error of megashingle but a failed read or write of a file (OSError)."
);
create_exception!(
    megashingle,
    InputError,
    MegashingleError,
    "A document, a record or an input that cannot be used: the message names it and what to do."
);
create_exception!(
    megashingle,
    ConfigError,
    MegashingleError,
    "A setting or a configuration file that cannot be used: the message names the key."
);
create_exception!(
    megashingle,
    StoryIndexError,
    MegashingleError,
    "A story index that cannot be used as asked (missing, made with other settings, an id \
     already indexed, ...)."
);
create_exception!(
    megashingle,
    IndexLockedError,
    StoryIndexError,
    "Another program holds the story index; nothing was changed."
);
create_exception!(
    megashingle,
    IndexDamagedError,
    StoryIndexError,
    "A table or a record of the story index cannot be read: restore the index from a copy."
);
create_exception!(
    megashingle,
    IndexFormatError,
    StoryIndexError,
    "The file is not a story index, or one of a format this megashingle does not read."
);

/// Adds the exception classes to the extension module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("MegashingleError", py.get_type::<MegashingleError>())?;
    m.add("InputError", py.get_type::<InputError>())?;
    m.add("ConfigError", py.get_type::<ConfigError>())?;
    m.add("StoryIndexError", py.get_type::<StoryIndexError>())?;
    m.add("IndexLockedError", py.get_type::<IndexLockedError>())?;
    m.add("IndexDamagedError", py.get_type::<IndexDamagedError>())?;
    m.add("IndexFormatError", py.get_type::<IndexFormatError>())?;
    Ok(())
}

/// A library error as the Python exception of its kind, with the library's message.
pub fn to_py(error: megashingle::Error) -> PyErr {
    use megashingle::Error as E;
    let message = error.to_string();
    match &error {
        E::Config(_) => ConfigError::new_err(message),
        E::Input(read) => read_error(read, message),
        E::EmptyId { .. } | E::TooShort(_) => InputError::new_err(message),
        E::Spill { source, .. } => os_error(source, message),
        E::Threads { .. } => MegashingleError::new_err(message),
        E::Index(inner) => index_error(inner, message),
        E::Cancelled => PyKeyboardInterrupt::new_err(message),
    }
}

/// `to_py` for `map_err`, where the error may be of any type the library's converts from.
pub fn library(error: impl Into<megashingle::Error>) -> PyErr {
    to_py(error.into())
}

/// An input that cannot be read: `OSError` when the system refused it, else `InputError`.
pub fn read_error(error: &ReadError, message: String) -> PyErr {
    match error {
        ReadError::Open { source, .. } | ReadError::Io { source, .. } => os_error(source, message),
        ReadError::Guessed { error, .. } => read_error(error, message),
        _ => InputError::new_err(message),
    }
}

/// A packed value that cannot be read.
pub fn pack_error(error: PackError) -> PyErr {
    InputError::new_err(error.to_string())
}

/// Bad input found by the binding itself (a column that ends early, a pair outside its group).
pub fn input(message: impl Into<String>) -> PyErr {
    InputError::new_err(message.into())
}

/// A setting named in Python that names no key, or several.
pub fn config(message: impl Into<String>) -> PyErr {
    ConfigError::new_err(message.into())
}

/// A failed read or write whose message already says why, as the `OSError` subclass of the
/// system's error number.
fn os_error_of(source: &std::io::Error, message: String) -> PyErr {
    match source.raw_os_error() {
        Some(errno) => PyOSError::new_err((errno, message)),
        None => PyOSError::new_err(message),
    }
}

/// A failed read or write as the `OSError` subclass Python gives the system's error number
/// (`FileNotFoundError`, `PermissionError`, …), with the library's message.
fn os_error(source: &std::io::Error, message: String) -> PyErr {
    let why = source.to_string();
    match source.raw_os_error() {
        Some(errno) => {
            let why = why.trim_end_matches(&format!(" (os error {errno})"));
            PyOSError::new_err((errno, format!("{message}: {why}")))
        }
        None => PyOSError::new_err(format!("{message}: {why}")),
    }
}

/// The class of a story index's error: a locked, damaged or foreign index (or one of a format
/// without the passages asked of it) has a class of its own, a read or write the system
/// refused is an `OSError`, and every other way an index
/// cannot be used (missing, empty, made with other settings, an id already indexed, full) is a
/// [`StoryIndexError`]. An id already indexed is told the argument that replaces it.
fn index_error(error: &IndexError, message: String) -> PyErr {
    match error {
        IndexError::Locked { .. } => IndexLockedError::new_err(message),
        IndexError::Damaged { .. } => IndexDamagedError::new_err(message),
        IndexError::NotAnIndex { .. }
        | IndexError::UnknownFormat { .. }
        | IndexError::NoPassages { .. }
        | IndexError::MadeWithoutPassages { .. } => IndexFormatError::new_err(message),
        IndexError::Io { error, .. } => os_error_of(error, message),
        IndexError::AlreadyIndexed { .. } => {
            StoryIndexError::new_err(format!("{message} (upsert=True)"))
        }
        _ => StoryIndexError::new_err(message),
    }
}
