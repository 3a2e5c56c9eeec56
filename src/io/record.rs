//! What reading gives, whatever the format: a record as read ([`Record`], with its [`Origin`]),
//! what a format's reader passes to the one that checks ids and times ([`Entry`]), the counts of
//! a read ([`ReadSummary`]) and the errors that make an input unusable ([`ReadError`]), with
//! the names of columns and delimiters as messages show them.

use std::sync::Arc;

/// Where a record came from.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Origin {
    /// Position of the input among all inputs, then of the record in it: input order.
    pub order: (u32, u64),
    /// File name as given (or `<stdin>`), or the file's path for folder inputs.
    pub source: Arc<str>,
    /// Line where the record starts; 0 for whole-file documents.
    pub line: u64,
    /// For a record of which the newest of one id is kept (a WARC record), its date; `None`
    /// for the others, of which the first in input order is kept.
    pub dated: Option<i64>,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line > 0 {
            write!(f, "{}:{}", self.source, self.line)
        } else {
            write!(f, "{}", self.source)
        }
    }
}

/// One document as read.
#[derive(Debug, Clone)]
pub struct Record {
    /// Its id.
    pub id: String,
    /// Its raw text.
    pub text: String,
    /// Its time in seconds since 1970 (UTC), from the time column when one is read.
    pub time: Option<i64>,
    /// The values of `ReadOptions::columns`, in that order: empty where a record has none
    /// (a JSONL record without the field, a whole-file document).
    pub columns: Vec<String>,
    /// Where it came from.
    pub origin: Origin,
}

/// An input that cannot be read at all.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The path does not exist or cannot be opened.
    #[error("{path}: cannot open")]
    Open {
        /// The input.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// Reading failed midway.
    #[error("{path}: read error")]
    Io {
        /// The input.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The id, text or another column asked for is missing.
    #[error("{path}: no {kind} `{column}` ({}); {kind}s found: {found}{}", .role.named(.kind), .delimiter.map(other_delimiter).unwrap_or_default())]
    MissingColumn {
        /// The input.
        path: String,
        /// "column" or "field".
        kind: &'static str,
        /// The missing name.
        column: String,
        /// What it was to be read as.
        role: ColumnRole,
        /// What the input has.
        found: String,
        /// For a CSV header that is one column holding a `;`, a tab or a comma (other than the
        /// delimiter it was read with), that byte: the delimiter the file seems to use.
        delimiter: Option<u8>,
    },
    /// The CSV header is unusable.
    #[error("{path}: {message}")]
    Header {
        /// The input.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// An input whose format was guessed (stdin, or a file whose extension says nothing) could
    /// not be read in that format; the hint says how it was guessed. A program that takes the
    /// format from its user says how to give it.
    #[error("{error}; {hint}")]
    Guessed {
        /// What went wrong.
        error: Box<ReadError>,
        /// How the format was chosen and how to choose another.
        hint: String,
    },
    /// The input is not UTF-8 but UTF-16.
    #[error(
        "{path}: the file is {encoding}, not UTF-8; give --encoding {}, or convert it to UTF-8 (iconv -f UTF-16 -t UTF-8)",
        if .encoding.contains("big") { "utf-16be" } else { "utf-16le" }
    )]
    Utf16 {
        /// The input.
        path: String,
        /// Which UTF-16.
        encoding: &'static str,
    },
    /// A Parquet column asked for holds values of a type it cannot be read as.
    #[error("{path}: column `{column}` ({}) holds {found} values, not {expected}", .role.named("column"))]
    ColumnType {
        /// The input.
        path: String,
        /// The column.
        column: String,
        /// What it was to be read as.
        role: ColumnRole,
        /// The type of its values.
        found: String,
        /// The types it may hold, for the message.
        expected: &'static str,
    },
    /// A Parquet file that cannot be read: not Parquet, damaged, or stdin.
    #[error("{path}: {message}")]
    Parquet {
        /// The input.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// A bad record under `--strict`.
    #[error("{0}")]
    Strict(String),
}

/// What a [`ReadError::MissingColumn`] says of a header that seems to use another delimiter.
fn other_delimiter(delimiter: u8) -> String {
    format!(
        "; the header is one column with {} in it: the file seems to be separated by {}",
        delimiter_name(delimiter),
        delimiter_name(delimiter)
    )
}

/// A delimiter as named in messages: `;`, or "tabs".
pub(crate) fn delimiter_name(delimiter: u8) -> String {
    match delimiter {
        b'\t' => "tabs".into(),
        b',' => "commas".into(),
        other => format!("`{}`", char::from(other)),
    }
}

/// What a column (CSV) or field (JSONL) named in the read options is read as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnRole {
    /// Each record's id (`ReadOptions::id_column`).
    Id,
    /// Each record's text (`ReadOptions::text_column`).
    Text,
    /// Each record's time (`ReadOptions::time_column`).
    Time,
    /// One of `ReadOptions::columns`, carried along with each record.
    Extra,
}

impl ColumnRole {
    /// The role in a message, for a `kind` of "column" or "field": "the id column".
    pub fn named(self, kind: &str) -> String {
        match self {
            ColumnRole::Id => format!("the id {kind}"),
            ColumnRole::Text => format!("the text {kind}"),
            ColumnRole::Time => format!("the time {kind}"),
            ColumnRole::Extra => format!("one of the {kind}s asked for"),
        }
    }
}

/// Counts from reading.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReadSummary {
    /// Records passed on.
    pub records: u64,
    /// Records reported and skipped.
    pub skipped: u64,
    /// Files in folders ignored for their extension.
    pub ignored_files: u64,
    /// Malformed byte sequences read as U+FFFD (bytes their charset does not allow), in records
    /// passed on.
    pub malformed: u64,
    /// WARC responses and resources left out for a type that is not text (images, PDF).
    pub not_text: u64,
}

/// Column or field names as listed in a message: a name with a control character shown
/// quoted and escaped ("a\nb"), and the list cut after 200
/// characters (a file that is not CSV has a long, odd first line).
pub(crate) fn shown_names(names: &[String]) -> String {
    let joined = names
        .iter()
        .map(|n| {
            if n.chars().any(char::is_control) {
                format!("{n:?}")
            } else {
                n.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(", ");
    match joined.char_indices().nth(200) {
        Some((cut, _)) => format!("{}...", &joined[..cut]),
        None => joined,
    }
}

/// What the reader of one format gives the reader of inputs, which checks ids and times,
/// numbers what it is given (skipped records too) and counts it.
#[derive(Debug)]
pub enum Entry {
    /// A record: its id, its text, its time as written (read by the reader of inputs), the
    /// values of the more columns asked for, and where it starts.
    Record {
        /// The id.
        id: String,
        /// The text.
        text: String,
        /// The time column's value, if one is read and the record has one.
        time: Option<String>,
        /// The values of the more columns asked for.
        columns: Vec<String>,
        /// The file as named in messages.
        source: Arc<str>,
        /// The line where it starts (a Parquet file: its row).
        line: u64,
    },
    /// A whole-file document: a file, a message of an archive, a page of a WARC file.
    Document {
        /// The id.
        id: String,
        /// Its text, time and how its bytes were decoded.
        document: DocumentText,
        /// Where it came from, as named in messages.
        source: Arc<str>,
        /// Of two documents with this id, the newer is kept (WARC records, by `WARC-Date`).
        newest_kept: bool,
    },
    /// A record that cannot be used, and why.
    Skipped {
        /// The file as named in messages.
        source: Arc<str>,
        /// The line where it starts; 0 for a whole-file document.
        line: u64,
        /// What is wrong and what to do.
        what: String,
    },
    /// A WARC response or resource of a type that is not text, left out and counted.
    NotText,
}

impl ReadSummary {
    /// What a command's summary line says of the bytes read besides the records skipped:
    /// malformed sequences replaced, and WARC responses left out (`; 3 malformed byte
    /// sequences read as U+FFFD`); empty when there were none.
    pub fn notes(&self) -> String {
        let mut notes = match self.malformed {
            0 => String::new(),
            n => format!("; {n} malformed byte sequences read as U+FFFD"),
        };
        if self.not_text > 0 {
            notes.push_str(&format!(
                "; {} WARC responses not of a text type left out",
                self.not_text
            ));
        }
        notes
    }
}

/// Texts of at least this many bytes are moved rather than copied out of a CSV record, and a
/// JSONL line buffer that grew this large is given back once its record is read.
pub(crate) const LONG_TEXT_BYTES: usize = 1 << 20;

/// `bytes` as a string, or where its valid UTF-8 ends. Validation is SIMD-accelerated: every
/// text of a collection goes through it.
pub(crate) fn utf8(bytes: &[u8]) -> Result<&str, usize> {
    simdutf8::basic::from_utf8(bytes)
        .map_err(|_| std::str::from_utf8(bytes).map_or_else(|e| e.valid_up_to(), str::len))
}

/// A document's text, with what its bytes said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentText {
    /// The text.
    pub text: String,
    /// Its time (a mail's `Date`), in seconds since 1970 (UTC).
    pub time: Option<i64>,
    /// A mail's `Message-ID`.
    pub(crate) message_id: Option<String>,
    /// How it was decoded, one line for each text read ("windows-1251, declared by …"; a
    /// mail's parts as "text/plain: …").
    pub decoding: Vec<String>,
    /// Malformed byte sequences replaced by U+FFFD.
    pub malformed: u64,
}
