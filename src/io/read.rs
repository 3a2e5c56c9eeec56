//! Readers. Every input becomes a stream of `Record{id, text, origin}`: a CSV file (header
//! row; `.tsv` and `.tab` files are read as CSV separated by tabs, and any CSV input by the
//! delimiter the options give), a JSONL file (one object per line), a Parquet file (one record
//! a row; see [`crate::io::parquet`]), a folder of `.txt`/`.html`/`.htm`/`.eml` files (id = path
//! relative to the folder; their bytes decoded by [`crate::io::document`]), `.mbox` archives
//! (one message a record) and `.parquet` files, a single such file, or `-` for stdin. A record
//! that cannot be used is reported in one line naming the file and line, and skipped; what
//! makes a whole input unusable (missing column, unreadable file) is a fatal error. Record files
//! are UTF-8 unless [`ReadOptions::encoding`] names another charset ([`crate::io::transcode`]).

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;

use crate::io::document::{decode_document, DocumentKind, DocumentText};
use crate::io::transcode::{RecordEncoding, Utf8Reader};

use crate::io::csv_records::{CsvRecord, CsvRecords, RecordShape, RunawayQuote};
use crate::io::time::parse_time;

/// The format of a record file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum InputFormat {
    /// CSV with a header row.
    Csv,
    /// One JSON object per line.
    Jsonl,
    /// An Apache Parquet file, one record a row (needs the `parquet` feature; not stdin).
    Parquet,
}

/// How inputs are read.
#[derive(Debug, Clone)]
pub struct ReadOptions {
    /// Column (CSV) or field (JSONL) holding the id.
    pub id_column: String,
    /// Column or field holding the text.
    pub text_column: String,
    /// Format of stdin and of files whose extension says nothing; `None` means CSV for stdin and
    /// detection by extension for files.
    pub format: Option<InputFormat>,
    /// Make the first bad record fatal.
    pub strict: bool,
    /// Column or field holding each document's time (RFC 3339 or a date), if any.
    pub time_column: Option<String>,
    /// More columns or fields whose values are kept with each record, as they are (to be
    /// shown, such as a source or a headline).
    pub columns: Vec<String>,
    /// The byte between the fields of CSV inputs (`b';'`, `b'\t'`); `None` reads `.tsv` and
    /// `.tab` files (also compressed, `.tsv.gz`) as separated by tabs and any other CSV input
    /// by commas.
    pub delimiter: Option<u8>,
    /// The charset of CSV, TSV and JSONL inputs; `None` is UTF-8. Whole-file documents find
    /// their own ([`crate::io::charset`]).
    pub encoding: Option<RecordEncoding>,
}

impl ReadOptions {
    /// The byte between the fields of a CSV input whose extension (the one that tells its
    /// format, before any `.gz` or `.zst`; empty for stdin) is `extension`.
    pub fn delimiter_for(&self, extension: &str) -> u8 {
        self.delimiter.unwrap_or(match extension {
            "tsv" | "tab" => b'\t',
            _ => b',',
        })
    }
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            id_column: "id".into(),
            text_column: "text".into(),
            format: None,
            strict: false,
            time_column: None,
            columns: Vec::new(),
            delimiter: None,
            encoding: None,
        }
    }
}

/// Where a record came from.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Origin {
    /// Position of the input among all inputs, then of the record in it: input order.
    pub order: (u32, u64),
    /// File name as given (or `<stdin>`), or the file's path for folder inputs.
    pub source: Arc<str>,
    /// Line where the record starts; 0 for whole-file documents.
    pub line: u64,
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
    /// The values of [`ReadOptions::columns`], in that order: empty where a record has none
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

/// A record file as read, before its format is known.
#[derive(Clone, Copy)]
struct RecordInput<'p> {
    /// The file.
    path: &'p Path,
    /// The file as named in messages.
    source: &'p Arc<str>,
    /// The extension that tells its format.
    extension: &'p str,
    /// Its format, when the options or the extension tell it.
    format: Option<InputFormat>,
    /// The byte between CSV fields.
    delimiter: u8,
}

/// A record input read as it is (UTF-8), or decoded from another charset.
enum Transcoded<R> {
    Utf8(R),
    Other(BufReader<Utf8Reader<R>>),
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
pub fn delimiter_name(delimiter: u8) -> String {
    match delimiter {
        b'\t' => "tabs".into(),
        b',' => "commas".into(),
        other => format!("`{}`", char::from(other)),
    }
}

/// What a column (CSV) or field (JSONL) named in [`ReadOptions`] is read as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnRole {
    /// Each record's id ([`ReadOptions::id_column`]).
    Id,
    /// Each record's text ([`ReadOptions::text_column`]).
    Text,
    /// Each record's time ([`ReadOptions::time_column`]).
    Time,
    /// One of [`ReadOptions::columns`], carried along with each record.
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

/// Texts of at least this many bytes are moved rather than copied out of a CSV record, and a
/// JSONL line buffer that grew this large is given back once its record is read.
const LONG_TEXT_BYTES: usize = 1 << 20;

/// Extensions of document files in folders.
pub const DOCUMENT_EXTENSIONS: [&str; 6] =
    ["txt", "html", "htm", "eml", MBOX_EXTENSION, WARC_EXTENSION];

/// The extension of WARC files (also `.warc.gz`, `.warc.zst`), read as one record a page.
pub const WARC_EXTENSION: &str = "warc";

/// The extension of mbox archives, read as one record a message.
pub const MBOX_EXTENSION: &str = "mbox";

/// The extension of Parquet files, read as records wherever they are (named, or in a folder).
pub const PARQUET_EXTENSION: &str = "parquet";

/// Reads every input in turn, passing each usable record to `emit` and each skipped record's
/// one-line report to `warn`.
pub fn read_inputs(
    inputs: &[PathBuf],
    options: &ReadOptions,
    emit: &mut dyn FnMut(Record),
    warn: &mut dyn FnMut(String),
) -> Result<ReadSummary, ReadError> {
    let mut reader = Reader {
        options,
        emit,
        warn,
        summary: ReadSummary::default(),
        input: 0,
        serial: 0,
        stream_malformed: Rc::default(),
    };
    for (i, input) in inputs.iter().enumerate() {
        reader.input = i as u32;
        reader.serial = 0;
        reader.read_input(input)?;
    }
    reader.summary.malformed += reader.stream_malformed.get();
    Ok(reader.summary)
}

struct Reader<'a> {
    options: &'a ReadOptions,
    emit: &'a mut dyn FnMut(Record),
    warn: &'a mut dyn FnMut(String),
    summary: ReadSummary,
    input: u32,
    serial: u64,
    /// Malformed sequences of record files read with `--encoding`.
    stream_malformed: Rc<std::cell::Cell<u64>>,
}

impl Reader<'_> {
    fn read_input(&mut self, input: &Path) -> Result<(), ReadError> {
        if input.as_os_str() == "-" {
            let stdin = BufReader::with_capacity(1 << 16, std::io::stdin().lock());
            let source: Arc<str> = Arc::from("<stdin>");
            let hint = "stdin is read as CSV unless it starts with `{` (JSONL)";
            let delimiter = self.options.delimiter_for("");
            return match self.charset_of(stdin, &source)? {
                Transcoded::Utf8(stdin) => self.read_records(stdin, &source, hint, delimiter),
                Transcoded::Other(stdin) => self.read_records(stdin, &source, hint, delimiter),
            };
        }
        let name = input.display().to_string();
        let meta = std::fs::metadata(input).map_err(|source| ReadError::Open {
            path: name.clone(),
            source,
        })?;
        if meta.is_dir() {
            return self.read_folder(input);
        }
        if is_parquet(input, self.options.format) {
            return self.read_parquet(input, &Arc::from(name));
        }
        let (file, extension) = open_input(input)?;
        let source: Arc<str> = Arc::from(name);
        let format = match (self.options.format, extension.as_str()) {
            (Some(format), _) => Some(format),
            (None, PARQUET_EXTENSION) => {
                return Err(ReadError::Parquet {
                    path: source.to_string(),
                    message: "a compressed Parquet file cannot be read; decompress it (Parquet \
                              compresses its pages itself)"
                        .into(),
                })
            }
            (None, e) if DOCUMENT_EXTENSIONS.contains(&e) => {
                let id = input
                    .file_name()
                    .map_or_else(|| source.to_string(), |n| n.to_string_lossy().into_owned());
                return self.read_document(file, id, source, e);
            }
            (None, _) => records_format_of(&extension),
        };
        let reader = BufReader::with_capacity(1 << 16, file);
        let delimiter = self.options.delimiter_for(&extension);
        let records = RecordInput {
            path: input,
            source: &source,
            extension: &extension,
            format,
            delimiter,
        };
        match self.charset_of(reader, &source)? {
            Transcoded::Utf8(reader) => self.read_record_file(reader, &records),
            Transcoded::Other(reader) => self.read_record_file(reader, &records),
        }
    }

    /// `input` as it is when it is UTF-8 (no `--encoding`, or one that finds UTF-8), else
    /// decoded from its charset as it is read.
    fn charset_of<R: BufRead>(
        &self,
        mut input: R,
        source: &Arc<str>,
    ) -> Result<Transcoded<R>, ReadError> {
        let Some(encoding) = self.options.encoding else {
            return Ok(Transcoded::Utf8(input));
        };
        let found = encoding.for_input(&mut input).map_err(|e| ReadError::Io {
            path: source.to_string(),
            source: e,
        })?;
        Ok(match found {
            None => Transcoded::Utf8(input),
            Some(encoding) => {
                let malformed = Rc::clone(&self.stream_malformed);
                let utf8 = Utf8Reader::new(input, encoding, self.options.strict, malformed);
                Transcoded::Other(BufReader::with_capacity(1 << 16, utf8))
            }
        })
    }

    /// Reads a record file (CSV, JSONL, Parquet; or guessed) whose text is `reader`.
    fn read_record_file(
        &mut self,
        reader: impl BufRead,
        records: &RecordInput<'_>,
    ) -> Result<(), ReadError> {
        let RecordInput {
            path: input,
            source,
            extension,
            format,
            delimiter,
        } = *records;
        let source: Arc<str> = Arc::clone(source);
        match format {
            Some(format) => {
                let mut reader = reader;
                check_not_utf16(&mut reader, &source)?;
                match format {
                    InputFormat::Csv => self.read_csv(reader, &source, delimiter),
                    InputFormat::Jsonl => self.read_jsonl(reader, &source),
                    InputFormat::Parquet => self.read_parquet(input, &source),
                }
            }
            None => {
                let why = if extension.is_empty() {
                    "it has no extension".to_owned()
                } else {
                    format!("its extension .{extension} is not one megashingle knows")
                };
                let hint = format!(
                    "it was read as CSV because {why} (.csv, .tsv, .tab; .jsonl, .ndjson, .json; \
                     .txt, .html, .htm, .eml, .mbox; each also as .gz or .zst; .parquet)"
                );
                self.read_records(reader, &source, &hint, delimiter)
            }
        }
    }

    /// Reads records in the format the options give, else JSONL when the input starts with
    /// `{`, else CSV; a fatal error of a guessed format comes with `hint`.
    fn read_records(
        &mut self,
        mut input: impl BufRead,
        source: &Arc<str>,
        hint: &str,
        delimiter: u8,
    ) -> Result<(), ReadError> {
        let head = check_not_utf16(&mut input, source)?;
        let format = match self.options.format {
            Some(format) => format,
            None if head.starts_json => InputFormat::Jsonl,
            None => InputFormat::Csv,
        };
        let result = match format {
            _ if head.binary && self.options.format.is_none() => Err(ReadError::Header {
                path: source.to_string(),
                message: "binary data, not text (a compressed file?)".into(),
            }),
            InputFormat::Csv => self.read_csv(input, source, delimiter),
            InputFormat::Jsonl => self.read_jsonl(input, source),
            InputFormat::Parquet => Err(ReadError::Parquet {
                path: source.to_string(),
                message: "Parquet cannot be read from a stream: save it to a file and give that"
                    .into(),
            }),
        };
        match result {
            Err(e @ (ReadError::Header { .. } | ReadError::MissingColumn { .. }))
                if self.options.format.is_none() =>
            {
                Err(ReadError::Guessed {
                    error: Box::new(e),
                    hint: hint.to_owned(),
                })
            }
            other => other,
        }
    }

    fn origin(&mut self, source: &Arc<str>, line: u64) -> Origin {
        self.serial += 1;
        Origin {
            order: (self.input, self.serial),
            source: Arc::clone(source),
            line,
        }
    }

    fn skip(&mut self, origin: &Origin, what: String) -> Result<(), ReadError> {
        let message = format!("{origin}: {what}");
        if self.options.strict {
            return Err(ReadError::Strict(message));
        }
        self.summary.skipped += 1;
        (self.warn)(format!("{message}; record skipped"));
        Ok(())
    }

    fn accept(
        &mut self,
        id: String,
        text: String,
        time: Option<&str>,
        columns: Vec<String>,
        origin: Origin,
    ) -> Result<(), ReadError> {
        if id.trim().is_empty() {
            let column = self.options.id_column.clone();
            return self.skip(
                &origin,
                format!("empty id in `{column}`; every record needs an id"),
            );
        }
        let time = match time.map(str::trim).filter(|t| !t.is_empty()) {
            None => None,
            Some(raw) => match parse_time(raw) {
                Some(seconds) => Some(seconds),
                None => {
                    let column = self.options.time_column.clone().unwrap_or_default();
                    return self.skip(
                        &origin,
                        format!("time {raw:?} in `{column}` is not a date; write RFC 3339 (2026-11-30T06:00:00Z, 2026-11-30T09:00:00+03:00) or YYYY-MM-DD"),
                    );
                }
            },
        };
        self.accept_at(id, text, time, columns, origin)
    }

    /// Passes on a record whose id is checked and whose time is read.
    fn accept_at(
        &mut self,
        id: String,
        text: String,
        time: Option<i64>,
        columns: Vec<String>,
        origin: Origin,
    ) -> Result<(), ReadError> {
        if id.trim().is_empty() {
            let column = self.options.id_column.clone();
            return self.skip(
                &origin,
                format!("empty id in `{column}`; every record needs an id"),
            );
        }
        self.summary.records += 1;
        (self.emit)(Record {
            id,
            text,
            time,
            columns,
            origin,
        });
        Ok(())
    }

    /// Reads a whole-file document (an mbox archive: each of its messages) of the kind its
    /// extension names.
    fn read_document(
        &mut self,
        mut file: impl Read,
        id: String,
        source: Arc<str>,
        extension: &str,
    ) -> Result<(), ReadError> {
        if extension == MBOX_EXTENSION {
            return self.read_mbox(BufReader::with_capacity(1 << 16, file), &id, &source);
        }
        if extension == WARC_EXTENSION {
            return self.read_warc(BufReader::with_capacity(1 << 16, file), &source);
        }
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).map_err(|e| ReadError::Io {
            path: source.to_string(),
            source: e,
        })?;
        let origin = self.origin(&source, 0);
        let kind = DocumentKind::of_extension(extension).unwrap_or(DocumentKind::Plain);
        let document = decode_document(bytes, kind);
        self.accept_document(id, document, origin)
    }

    /// Passes on a decoded document, counting its malformed bytes (fatal under `--strict`).
    fn accept_document(
        &mut self,
        id: String,
        document: DocumentText,
        origin: Origin,
    ) -> Result<(), ReadError> {
        if document.malformed > 0 {
            if self.options.strict {
                return Err(ReadError::Strict(format!(
                    "{origin}: {} byte sequences its charset does not allow ({}); fix the bytes, \
                     or leave out --strict to read them as U+FFFD",
                    document.malformed,
                    document.decoding.join("; ")
                )));
            }
            self.summary.malformed += document.malformed;
        }
        let columns = vec![String::new(); self.options.columns.len()];
        self.accept_at(id, document.text, document.time, columns, origin)
    }

    /// Reads a WARC file: each page or text a record, its id its `WARC-Target-URI`, its time
    /// its `WARC-Date`. A damaged record is reported and skipped; a file whose decompression
    /// fails midway is reported once and the records before are kept.
    fn read_warc(&mut self, input: impl BufRead, source: &Arc<str>) -> Result<(), ReadError> {
        use crate::io::warc::{WarcItem, WarcReader};
        let mut warc = WarcReader::new(input);
        loop {
            let item = match warc.next_item() {
                Ok(Some(item)) => item,
                Ok(None) => return Ok(()),
                Err(e) => {
                    let origin = self.origin(source, 0);
                    let what = format!(
                        "cannot be read past this point ({e}); the records before are kept"
                    );
                    return self.skip(&origin, what);
                }
            };
            match item {
                WarcItem::Document(document) => {
                    let origin =
                        self.origin(&Arc::from(format!("{source}@{}", document.offset)), 0);
                    let time = document.date.as_deref().and_then(parse_time);
                    let text = DocumentText {
                        decoding: vec![document.decoded.explain()],
                        malformed: document.decoded.malformed,
                        text: document.decoded.text,
                        time,
                        message_id: None,
                    };
                    self.accept_document(document.uri, text, origin)?;
                }
                WarcItem::NotText => self.summary.not_text += 1,
                WarcItem::Other => {}
                WarcItem::Damaged(offset, why) => {
                    let origin = self.origin(&Arc::from(format!("{source}@{offset}")), 0);
                    self.skip(&origin, format!("damaged WARC record: {why}"))?;
                }
            }
        }
    }

    /// Reads an mbox archive: each message a record, its id its `Message-ID`, else the
    /// archive's id and the message's number (`archive.mbox#3`).
    fn read_mbox(
        &mut self,
        input: impl BufRead,
        archive: &str,
        source: &Arc<str>,
    ) -> Result<(), ReadError> {
        let result = crate::io::mime::for_each_mbox_message(input, |number, bytes| {
            let document = decode_document(bytes, DocumentKind::Mail);
            let id = (document.message_id.clone()).unwrap_or_else(|| format!("{archive}#{number}"));
            let origin = self.origin(&Arc::from(format!("{source}#{number}")), 0);
            self.accept_document(id, document, origin)
        });
        match result {
            Ok(()) => Ok(()),
            Err(crate::io::mime::MboxError::Read(e)) => Err(e),
            Err(crate::io::mime::MboxError::Io(e)) => Err(ReadError::Io {
                path: source.to_string(),
                source: e,
            }),
        }
    }

    fn read_folder(&mut self, folder: &Path) -> Result<(), ReadError> {
        let mut files = Vec::new();
        collect_files(folder, &mut files).map_err(|(path, source)| ReadError::Open {
            path: path.display().to_string(),
            source,
        })?;
        files.sort();
        for path in files {
            match folder_entry(&path) {
                FolderEntry::Parquet => {
                    let source = Arc::from(path.display().to_string());
                    self.read_parquet(&path, &source)?;
                    continue;
                }
                FolderEntry::Ignored => {
                    self.summary.ignored_files += 1;
                    continue;
                }
                FolderEntry::Document => {}
            }
            let id = relative_id(folder, &path);
            let (file, extension) = open_input(&path)?;
            self.read_document(file, id, Arc::from(path.display().to_string()), &extension)?;
        }
        Ok(())
    }

    /// Reads a Parquet file: each row a record, its number (from 1) standing for the line.
    #[cfg(feature = "parquet")]
    fn read_parquet(&mut self, path: &Path, source: &Arc<str>) -> Result<(), ReadError> {
        let options = self.options;
        crate::io::parquet::read_rows(path, source, options, &mut |row, values| {
            let origin = self.origin(source, row);
            match values {
                Ok(v) => self.accept(v.id, v.text, v.time.as_deref(), v.columns, origin),
                Err(what) => self.skip(&origin, what),
            }
        })
    }

    #[cfg(not(feature = "parquet"))]
    fn read_parquet(&mut self, _path: &Path, source: &Arc<str>) -> Result<(), ReadError> {
        Err(ReadError::Parquet {
            path: source.to_string(),
            message: crate::io::write::NO_PARQUET.into(),
        })
    }

    fn read_csv(
        &mut self,
        input: impl Read,
        source: &Arc<str>,
        delimiter: u8,
    ) -> Result<(), ReadError> {
        let mut csv = CsvRecords::with_delimiter(input, delimiter);
        let io_error = |e: std::io::Error| ReadError::Io {
            path: source.to_string(),
            source: e,
        };
        let mut header = CsvRecord::default();
        let has_header = csv.read(&mut header).map_err(io_error)?;
        let names: Vec<String> = header
            .iter()
            .map(|h| String::from_utf8_lossy(h).trim().to_owned())
            .collect();
        if let Some(quote) = header.runaway() {
            return Err(ReadError::Header {
                path: source.to_string(),
                message: format!(
                    "line {}: the header row has a quote that is never closed; close it",
                    quote.opened
                ),
            });
        }
        if !has_header || (names.len() == 1 && names[0].is_empty()) {
            return Err(ReadError::Header {
                path: source.to_string(),
                message: "empty input: no header row and no records".into(),
            });
        }
        // A header of one column that holds a likely delimiter: the file uses that one.
        let seeming = match names.as_slice() {
            [only] => [b'\t', b';', b',']
                .into_iter()
                .find(|&d| d != delimiter && only.as_bytes().contains(&d)),
            _ => None,
        };
        let column = |name: &str, role: ColumnRole| {
            names
                .iter()
                .position(|n| n == name)
                .ok_or_else(|| ReadError::MissingColumn {
                    path: source.to_string(),
                    kind: "column",
                    column: name.to_owned(),
                    role,
                    found: shown_names(&names),
                    delimiter: seeming,
                })
        };
        let id_at = column(&self.options.id_column, ColumnRole::Id)?;
        let text_at = column(&self.options.text_column, ColumnRole::Text)?;
        let time_at = match &self.options.time_column {
            Some(name) => Some(column(name, ColumnRole::Time)?),
            None => None,
        };
        let columns_at = (self.options.columns.iter())
            .map(|name| column(name, ColumnRole::Extra))
            .collect::<Result<Vec<usize>, ReadError>>()?;
        csv.expect_shape(RecordShape {
            fields: names.len(),
            id_at,
        });
        let mut record = CsvRecord::default();
        while csv.read(&mut record).map_err(io_error)? {
            if let Some(quote) = record.runaway() {
                let origin = self.origin(source, quote.opened);
                let what = runaway_quote_report(quote, self.options.strict);
                self.skip(&origin, what)?;
                continue;
            }
            let origin = self.origin(source, record.line());
            if record.len() != names.len() {
                let what = format!(
                    "malformed CSV record: {} fields where the header has {}",
                    record.len(),
                    names.len()
                );
                self.skip(&origin, what)?;
                continue;
            }
            let invalid = |name: &str, valid_up_to: usize| {
                format!(
                    "invalid UTF-8 in `{name}` at byte {valid_up_to}; convert the file to UTF-8"
                )
            };
            let id = match utf8(record.get(id_at)) {
                Ok(id) => id.to_owned(),
                Err(valid_up_to) => {
                    self.skip(&origin, invalid(&self.options.id_column, valid_up_to))?;
                    continue;
                }
            };
            let time = time_at.map(|at| String::from_utf8_lossy(record.get(at)).into_owned());
            let columns = (columns_at.iter())
                .map(|&at| String::from_utf8_lossy(record.get(at)).into_owned())
                .collect();
            let text = if record.get(text_at).len() >= LONG_TEXT_BYTES {
                // Moved out of the record, not copied: a long text is never held twice.
                String::from_utf8(record.take_field(text_at))
                    .map_err(|e| e.utf8_error().valid_up_to())
            } else {
                utf8(record.get(text_at)).map(str::to_owned)
            };
            match text {
                Ok(text) => self.accept(id, text, time.as_deref(), columns, origin)?,
                Err(valid_up_to) => {
                    self.skip(&origin, invalid(&self.options.text_column, valid_up_to))?
                }
            }
        }
        Ok(())
    }

    fn read_jsonl(&mut self, input: impl BufRead, source: &Arc<str>) -> Result<(), ReadError> {
        let mut input = input;
        let mut line = Vec::new();
        let mut number = 0u64;
        let mut seen_object = false;
        loop {
            if line.capacity() >= LONG_TEXT_BYTES {
                // The text of a long line is read; its buffer is not kept for short ones.
                line = Vec::new();
            }
            line.clear();
            let n = read_line(&mut input, &mut line).map_err(|e| ReadError::Io {
                path: source.to_string(),
                source: e,
            })?;
            if n == 0 {
                return Ok(());
            }
            number += 1;
            if number == 1 && line.starts_with(b"\xEF\xBB\xBF") {
                line.drain(..3);
            }
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let origin = self.origin(source, number);
            let text = match utf8(&line) {
                Ok(text) => text,
                Err(valid_up_to) => {
                    let what =
                        format!("invalid UTF-8 at byte {valid_up_to}; convert the file to UTF-8");
                    self.skip(&origin, what)?;
                    continue;
                }
            };
            let mut object = match serde_json::from_str::<serde_json::Value>(text) {
                Ok(serde_json::Value::Object(object)) => object,
                Ok(_) => {
                    self.skip(&origin, "malformed JSON record: not an object".into())?;
                    continue;
                }
                Err(e) => {
                    self.skip(&origin, format!("malformed JSON record: {e}"))?;
                    continue;
                }
            };
            let first = !seen_object;
            seen_object = true;
            let fields = [
                (&self.options.id_column, ColumnRole::Id),
                (&self.options.text_column, ColumnRole::Text),
            ];
            if let Some(&(missing, role)) = fields.iter().find(|(f, _)| !object.contains_key(*f)) {
                if first {
                    return Err(ReadError::MissingColumn {
                        path: source.to_string(),
                        kind: "field",
                        column: missing.to_string(),
                        role,
                        found: shown_names(&object.keys().cloned().collect::<Vec<_>>()),
                        delimiter: None,
                    });
                }
                let what = format!("malformed JSON record: no field `{missing}`");
                self.skip(&origin, what)?;
                continue;
            }
            let id = match &object[&self.options.id_column] {
                serde_json::Value::String(s) => s.clone(),
                serde_json::Value::Number(n) => n.to_string(),
                _ => {
                    let what = format!(
                        "malformed JSON record: `{}` is not a string or number",
                        self.options.id_column
                    );
                    self.skip(&origin, what)?;
                    continue;
                }
            };
            let time = match self
                .options
                .time_column
                .as_ref()
                .and_then(|f| object.get(f))
            {
                Some(serde_json::Value::String(s)) => Some(s.clone()),
                Some(serde_json::Value::Number(n)) => Some(n.to_string()),
                _ => None,
            };
            let columns = (self.options.columns.iter())
                .map(|name| match object.get(name) {
                    None | Some(serde_json::Value::Null) => String::new(),
                    Some(serde_json::Value::String(s)) => s.clone(),
                    Some(other) => other.to_string(),
                })
                .collect();
            let Some(serde_json::Value::String(text)) = object.remove(&self.options.text_column)
            else {
                let what = format!(
                    "malformed JSON record: `{}` is not a string",
                    self.options.text_column
                );
                self.skip(&origin, what)?;
                continue;
            };
            self.accept(id, text, time.as_deref(), columns, origin)?;
        }
    }
}

/// What went wrong with a record cut by a quote that never closes, and what became of the lines
/// it took in.
fn runaway_quote_report(quote: &RunawayQuote, strict: bool) -> String {
    let mut what = String::from("unterminated quote: the field opened on this line ");
    match quote.closed {
        None => what.push_str("runs to the end of the input"),
        Some(line) => what.push_str(&format!("is closed only by a quote on line {line}")),
    }
    if let Some((first, last)) = quote.swallowed {
        let lines = if first == last {
            format!("line {first}")
        } else {
            format!("lines {first}-{last}")
        };
        what.push_str(&format!(", taking in {lines}"));
        if quote.resumed {
            let mut ids = quote.first_ids.clone();
            if quote.records > 3 {
                ids.push("…".into());
            }
            if quote.records > 2 {
                ids.extend(quote.last_id.clone());
            }
            let records = if quote.records == quote.lines {
                format!("{} records", quote.records)
            } else {
                format!("{} lines, {} of them records", quote.lines, quote.records)
            };
            what.push_str(&format!(" ({records}: {})", ids.join(", ")));
            if !strict {
                what.push_str(", which are read on their own");
            }
        } else {
            what.push_str(", which are not records and go with it");
        }
    }
    what.push_str("; close the quote (a quote inside a quoted field is written \"\")");
    what
}

/// Appends the next line of `input` to `line`, its `\n` included; the number of bytes appended,
/// 0 at the end. `BufRead::read_until` does the same, searching without SIMD.
fn read_line(input: &mut impl BufRead, line: &mut Vec<u8>) -> std::io::Result<usize> {
    let mut appended = 0;
    loop {
        let available = match input.fill_buf() {
            Ok(available) => available,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let (taken, done) = match memchr::memchr(b'\n', available) {
            Some(i) => (i + 1, true),
            None => (available.len(), available.is_empty()),
        };
        line.extend_from_slice(&available[..taken]);
        input.consume(taken);
        appended += taken;
        if done {
            return Ok(appended);
        }
    }
}

/// `bytes` as a string, or where its valid UTF-8 ends. Validation is SIMD-accelerated: every
/// text of a collection goes through it.
fn utf8(bytes: &[u8]) -> Result<&str, usize> {
    simdutf8::basic::from_utf8(bytes)
        .map_err(|_| std::str::from_utf8(bytes).map_or_else(|e| e.valid_up_to(), str::len))
}

/// Opens a record or document file, decompressing `.gz` and `.zst` files as they are read;
/// also gives the extension that tells its format (see `compression_of`).
pub fn open_input(path: &Path) -> Result<(Box<dyn Read>, String), ReadError> {
    let (compression, extension) = compression_of(path);
    let name = path.display().to_string();
    let file = File::open(path).map_err(|source| ReadError::Open {
        path: name.clone(),
        source,
    })?;
    Ok((compression.reader(file, &name)?, extension))
}

/// How a file is compressed, told by its last extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Compression {
    /// Plain: read as it is.
    None,
    /// `.gz`: one or more gzip members.
    Gzip,
    /// `.zst`: Zstandard frames.
    Zstd,
}

impl Compression {
    /// The file's contents, decompressed as they are read.
    fn reader(self, file: File, name: &str) -> Result<Box<dyn Read>, ReadError> {
        Ok(match self {
            Compression::None => Box::new(file),
            Compression::Gzip => Box::new(flate2::read::MultiGzDecoder::new(
                BufReader::with_capacity(1 << 16, file),
            )),
            Compression::Zstd => {
                Box::new(zstd::Decoder::new(file).map_err(|source| ReadError::Open {
                    path: name.to_owned(),
                    source,
                })?)
            }
        })
    }
}

/// The record format a file's extension names (the one that tells its format, before any
/// `.gz` or `.zst`): JSONL for `jsonl`, `ndjson`, `json`; CSV for `csv`, `tsv`, `tab`; `None`
/// for any other (a document's extension, Parquet's, or one megashingle does not know).
pub fn records_format_of(extension: &str) -> Option<InputFormat> {
    match extension {
        "jsonl" | "ndjson" | "json" => Some(InputFormat::Jsonl),
        "csv" | "tsv" | "tab" => Some(InputFormat::Csv),
        _ => None,
    }
}

/// The extension that tells a file's format: the one before `.gz` or `.zst`
/// (`docs.jsonl.gz`: `jsonl`), else its own, in lower case.
pub fn format_extension(path: &Path) -> String {
    compression_of(path).1
}

/// What a file found in a folder input is read as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FolderEntry {
    /// A Parquet file (`.parquet`), each row a record.
    Parquet,
    /// A document (`.txt`, `.html`, `.htm`, `.eml`, also compressed): one record.
    Document,
    /// Anything else: left out, and counted.
    Ignored,
}

/// What the file `path`, found in a folder input, is read as.
pub fn folder_entry(path: &Path) -> FolderEntry {
    if extension_of(path) == PARQUET_EXTENSION {
        FolderEntry::Parquet
    } else if DOCUMENT_EXTENSIONS.contains(&format_extension(path).as_str()) {
        FolderEntry::Document
    } else {
        FolderEntry::Ignored
    }
}

/// How `path` is compressed, and the extension that tells its format: the one before `.gz` or
/// `.zst` (`docs.jsonl.gz` is JSONL), else its own, in lower case.
fn compression_of(path: &Path) -> (Compression, String) {
    let compression = match extension_of(path).as_str() {
        "gz" => Compression::Gzip,
        "zst" => Compression::Zstd,
        _ => return (Compression::None, extension_of(path)),
    };
    let inner = path
        .file_stem()
        .map_or_else(String::new, |stem| extension_of(Path::new(stem)));
    (compression, inner)
}

/// True when the file `input` is to be read as Parquet: `format` says so, or none is given and
/// its extension is `.parquet`, or it has no extension megashingle knows and starts with the
/// Parquet marker.
pub fn is_parquet(input: &Path, format: Option<InputFormat>) -> bool {
    match format {
        Some(format) => format == InputFormat::Parquet,
        None => {
            let (compression, extension) = compression_of(input);
            let known = ["csv", "jsonl", "ndjson", "json", PARQUET_EXTENSION]
                .iter()
                .chain(&DOCUMENT_EXTENSIONS)
                .any(|e| *e == extension);
            extension == PARQUET_EXTENSION && compression == Compression::None
                || !known && compression == Compression::None && starts_with_par1(input)
        }
    }
}

/// True when the file at `path` starts with the Parquet marker `PAR1`.
fn starts_with_par1(path: &Path) -> bool {
    let mut head = [0u8; 4];
    File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|()| &head == b"PAR1")
}

fn extension_of(path: &Path) -> String {
    path.extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default()
}

/// The files under `folder`, hidden names left out; on error, the folder or file that could
/// not be read, with why.
fn collect_files(folder: &Path, out: &mut Vec<PathBuf>) -> Result<(), (PathBuf, std::io::Error)> {
    let at = |e| (folder.to_owned(), e);
    for entry in std::fs::read_dir(folder).map_err(at)? {
        let entry = entry.map_err(at)?;
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        let path = entry.path();
        let kind = entry.file_type().map_err(|e| (path.clone(), e))?;
        if kind.is_dir() {
            collect_files(&path, out)?;
        } else {
            out.push(path);
        }
    }
    Ok(())
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

/// What the first bytes of an input say.
struct Head {
    /// The first byte that is not blank (after a byte order mark) is `{`: JSONL.
    starts_json: bool,
    /// NUL bytes or bytes that are not UTF-8: not a text file.
    binary: bool,
}

/// Looks at the first bytes of `input` (without consuming them): an error naming UTF-16 when
/// the input is UTF-16, else what they say about the format.
fn check_not_utf16(input: &mut impl BufRead, source: &Arc<str>) -> Result<Head, ReadError> {
    let head = input.fill_buf().map_err(|e| ReadError::Io {
        path: source.to_string(),
        source: e,
    })?;
    if let Some(encoding) = utf16_encoding(head) {
        return Err(ReadError::Utf16 {
            path: source.to_string(),
            encoding,
        });
    }
    let text = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    let first = text.iter().find(|b| !b.is_ascii_whitespace());
    let sample = &text[..text.len().min(4096)];
    // A character cut at the end of the sample is not an error.
    let not_utf8 = std::str::from_utf8(sample).is_err_and(|e| e.error_len().is_some());
    Ok(Head {
        starts_json: first == Some(&b'{'),
        binary: not_utf8 || sample.contains(&0),
    })
}

/// `Some("UTF-16 (little-endian)")` or big-endian when `head` (the first bytes of a file) is
/// UTF-16: it starts with a UTF-16 byte order mark, or one byte in ten or more of one parity
/// is NUL while the other parity has few (the high bytes of Latin text in UTF-16).
fn utf16_encoding(head: &[u8]) -> Option<&'static str> {
    const LITTLE: &str = "UTF-16 (little-endian)";
    const BIG: &str = "UTF-16 (big-endian)";
    match head {
        [0xFF, 0xFE, ..] => return Some(LITTLE),
        [0xFE, 0xFF, ..] => return Some(BIG),
        _ => {}
    }
    super::charset::utf16_by_nuls(head).map(|encoding| {
        if encoding == encoding_rs::UTF_16LE {
            LITTLE
        } else {
            BIG
        }
    })
}

/// The id of a file in a folder: its relative path with `/` separators.
fn relative_id(folder: &Path, path: &Path) -> String {
    let relative = path.strip_prefix(folder).unwrap_or(path);
    relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn read(
        path: &Path,
        options: &ReadOptions,
    ) -> (Result<ReadSummary, ReadError>, Vec<Record>, Vec<String>) {
        let mut records = Vec::new();
        let mut warnings = Vec::new();
        let result = read_inputs(
            &[path.to_owned()],
            options,
            &mut |r| records.push(r),
            &mut |w| warnings.push(w),
        );
        (result, records, warnings)
    }

    fn file_with(dir: &tempfile::TempDir, name: &str, content: &[u8]) -> PathBuf {
        let path = dir.path().join(name);
        std::fs::File::create(&path)
            .unwrap()
            .write_all(content)
            .unwrap();
        path
    }

    #[test]
    fn csv_records_with_quoted_newlines() {
        let dir = tempfile::tempdir().unwrap();
        let path = file_with(&dir, "d.csv", b"\xEF\xBB\xBFid,text\n1,\"a\nb\"\n2,c\n");
        let (result, records, warnings) = read(&path, &ReadOptions::default());
        assert_eq!(result.unwrap().records, 2);
        assert!(warnings.is_empty());
        assert_eq!(records[0].text, "a\nb");
        assert_eq!(records[1].origin.line, 4);
    }

    #[test]
    fn csv_bad_records_are_skipped_with_their_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = file_with(
            &dir,
            "d.csv",
            b"id,text\n1,ok\n2,too,many\n3,bad \xFF byte\n,no id\n",
        );
        let (result, records, warnings) = read(&path, &ReadOptions::default());
        assert_eq!(result.unwrap().skipped, 3);
        assert_eq!(records.len(), 1);
        assert!(warnings[0].starts_with(&format!(
            "{}:3: malformed CSV record: 3 fields",
            path.display()
        )));
        assert!(
            warnings[1].contains(":4: invalid UTF-8 in `text` at byte 4"),
            "{}",
            warnings[1]
        );
        assert!(warnings[2].contains(":5: empty id"), "{}", warnings[2]);
    }

    #[test]
    fn long_texts_read_as_short_ones_do() {
        // Texts over LONG_TEXT_BYTES are moved out of the record and the line buffer: the
        // records, the lines and the messages are those of short texts.
        let dir = tempfile::tempdir().unwrap();
        let long = "word ".repeat(LONG_TEXT_BYTES / 4);
        let mut csv = format!("id,text,time\na,\"{long}\",2024-01-02\nb,short,\n").into_bytes();
        csv.extend_from_slice(b"c,");
        csv.extend_from_slice(long.as_bytes());
        csv.extend_from_slice(b"\xFF,\nd,\"q\nuoted\",\n");
        let path = file_with(&dir, "d.csv", &csv);
        let (result, records, warnings) = read(
            &path,
            &ReadOptions {
                time_column: Some("time".into()),
                ..ReadOptions::default()
            },
        );
        assert_eq!(result.unwrap().skipped, 1);
        let summary: Vec<(&str, usize, Option<i64>, u64)> = records
            .iter()
            .map(|r| (r.id.as_str(), r.text.len(), r.time, r.origin.line))
            .collect();
        assert_eq!(
            summary,
            [
                ("a", long.len(), Some(1_704_153_600), 2),
                ("b", 5, None, 3),
                ("d", 7, None, 5)
            ]
        );
        assert_eq!(records[0].text, long);
        let expected = format!(":4: invalid UTF-8 in `text` at byte {}", long.len());
        assert!(warnings[0].contains(&expected), "{}", warnings[0]);
        let jsonl = format!(
            "{{\"id\": \"a\", \"text\": \"{long}\"}}\n{{\"id\": \"b\", \"text\": \"x\"}}\n"
        );
        let path = file_with(&dir, "d.jsonl", jsonl.as_bytes());
        let (result, records, _) = read(&path, &ReadOptions::default());
        assert_eq!(result.unwrap().records, 2);
        assert_eq!(
            (records[0].text.as_str(), records[1].text.as_str()),
            (long.as_str(), "x")
        );
    }

    #[test]
    fn strict_makes_the_first_bad_record_fatal() {
        let dir = tempfile::tempdir().unwrap();
        let path = file_with(&dir, "d.csv", b"id,text\n1,ok\n2,too,many\n");
        let options = ReadOptions {
            strict: true,
            ..ReadOptions::default()
        };
        let (result, _, _) = read(&path, &options);
        let err = result.unwrap_err();
        assert!(matches!(err, ReadError::Strict(_)), "{err:?}");
        let err = err.to_string();
        assert!(err.contains("d.csv:3: malformed CSV record"), "{err}");
    }

    /// A CSV file of ten records `d1`..`d10` whose third has a quote that never closes.
    const UNTERMINATED: &[u8] = b"id,text\nd1,one\nd2,two\nd3,\"oops five six\nd4,four\nd5,five\n\
                                  d6,six\nd7,seven\nd8,eight\nd9,nine\nd10,ten\n";

    #[test]
    fn an_unterminated_quote_is_reported_and_the_records_it_took_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = file_with(&dir, "d.csv", UNTERMINATED);
        let (result, records, warnings) = read(&path, &ReadOptions::default());
        assert_eq!(result.unwrap().skipped, 1);
        let ids: Vec<&str> = records.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["d1", "d2", "d4", "d5", "d6", "d7", "d8", "d9", "d10"]);
        assert_eq!(records[2].origin.line, 5);
        assert_eq!(
            warnings,
            [format!(
                "{}:4: unterminated quote: the field opened on this line runs to the end of the \
                 input, taking in lines 5-11 (7 records: d4, d5, …, d10), which are read on their \
                 own; close the quote (a quote inside a quoted field is written \"\"); record skipped",
                path.display()
            )]
        );
    }

    #[test]
    fn strict_makes_an_unterminated_quote_fatal_and_names_what_it_took() {
        let dir = tempfile::tempdir().unwrap();
        let path = file_with(&dir, "d.csv", UNTERMINATED);
        let options = ReadOptions {
            strict: true,
            ..ReadOptions::default()
        };
        let (result, records, _) = read(&path, &options);
        assert_eq!(records.len(), 2);
        let err = result.unwrap_err();
        assert!(matches!(err, ReadError::Strict(_)), "{err:?}");
        assert_eq!(
            err.to_string(),
            format!(
                "{}:4: unterminated quote: the field opened on this line runs to the end of the \
                 input, taking in lines 5-11 (7 records: d4, d5, …, d10); close the quote (a quote \
                 inside a quoted field is written \"\")",
                path.display()
            )
        );
    }

    #[test]
    fn a_quote_closed_by_a_later_record_names_that_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = file_with(
            &dir,
            "d.csv",
            b"id,text\nd1,\"oops\nd2,two\nd3,\"quoted\"\nd4,four\n",
        );
        let (result, records, warnings) = read(&path, &ReadOptions::default());
        assert_eq!(result.unwrap().skipped, 1);
        let ids: Vec<&str> = records.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["d2", "d3", "d4"]);
        assert!(
            warnings[0].contains(
                "d.csv:2: unterminated quote: the field opened on this line is closed only by a \
                 quote on line 4, taking in lines 3-4 (2 records: d2, d3), which are read on their own"
            ),
            "{}",
            warnings[0]
        );
    }

    #[test]
    fn a_truncated_last_record_is_skipped_with_the_lines_it_holds() {
        let dir = tempfile::tempdir().unwrap();
        let path = file_with(
            &dir,
            "d.csv",
            b"id,text\nd1,one\nd2,\"The story\nwent on, and on\nuntil the file ended",
        );
        let (result, records, warnings) = read(&path, &ReadOptions::default());
        assert_eq!(result.unwrap().skipped, 1);
        assert_eq!(records.len(), 1);
        assert!(
            warnings[0].contains(
                "d.csv:3: unterminated quote: the field opened on this line runs to the end of \
                 the input, taking in lines 4-5, which are not records and go with it;"
            ),
            "{}",
            warnings[0]
        );
    }

    #[test]
    fn a_header_with_an_unterminated_quote_is_fatal() {
        let dir = tempfile::tempdir().unwrap();
        let path = file_with(&dir, "d.csv", b"id,\"text\n1,a\n");
        let (result, _, _) = read(&path, &ReadOptions::default());
        let err = result.unwrap_err().to_string();
        assert_eq!(
            err,
            format!(
                "{}: line 1: the header row has a quote that is never closed; close it",
                path.display()
            )
        );
    }

    #[test]
    fn missing_column_lists_what_was_found() {
        let dir = tempfile::tempdir().unwrap();
        let path = file_with(&dir, "d.csv", b"key,body\n1,x\n");
        let (result, _, _) = read(&path, &ReadOptions::default());
        let err = result.unwrap_err().to_string();
        assert!(
            err.ends_with("no column `id` (the id column); columns found: key, body"),
            "{err}"
        );
        let options = ReadOptions {
            id_column: "key".into(),
            text_column: "content".into(),
            ..ReadOptions::default()
        };
        let err = read(&path, &options).0.unwrap_err().to_string();
        assert!(
            err.ends_with("no column `content` (the text column); columns found: key, body"),
            "{err}"
        );
    }

    #[test]
    fn lines_are_read_across_buffer_refills() {
        let mut input = std::io::BufReader::with_capacity(3, &b"ab\ncdefg\r\n\nh"[..]);
        let mut lines = Vec::new();
        let mut line = Vec::new();
        while read_line(&mut input, &mut line).expect("reading from memory") > 0 {
            lines.push(String::from_utf8(std::mem::take(&mut line)).expect("UTF-8"));
        }
        assert_eq!(lines, ["ab\n", "cdefg\r\n", "\n", "h"]);
    }

    #[test]
    fn jsonl_records_and_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = file_with(
            &dir,
            "d.jsonl",
            b"{\"id\": 7, \"text\": \"seven\"}\n\n{\"id\": \"b\", \"text\": \n{\"id\": \"c\"}\n[1]\n",
        );
        let (result, records, warnings) = read(&path, &ReadOptions::default());
        assert_eq!(result.unwrap().skipped, 3);
        assert_eq!(records[0].id, "7");
        assert!(
            warnings[0].contains("d.jsonl:3: malformed JSON record"),
            "{}",
            warnings[0]
        );
        assert!(
            warnings[1].contains(":4: malformed JSON record: no field `text`"),
            "{}",
            warnings[1]
        );
        assert!(
            warnings[2].contains(":5: malformed JSON record: not an object"),
            "{}",
            warnings[2]
        );
    }

    #[test]
    fn names_with_line_breaks_are_listed_escaped_on_one_line() {
        let dir = tempfile::tempdir().unwrap();
        let csv = file_with(&dir, "d.csv", b"\"a\nb\",body\n1,x\n");
        let jsonl = file_with(&dir, "d.jsonl", b"{\"a\\nb\": 1, \"body\": \"x\"}\n");
        for (path, found) in [
            (csv, "columns found: \"a\\nb\", body"),
            (jsonl, "fields found: \"a\\nb\", body"),
        ] {
            let (result, _, _) = read(&path, &ReadOptions::default());
            let err = result.unwrap_err().to_string();
            assert!(err.ends_with(found) && !err.contains('\n'), "{err}");
        }
    }

    #[test]
    fn jsonl_first_record_without_field_is_fatal() {
        let dir = tempfile::tempdir().unwrap();
        let path = file_with(&dir, "d.jsonl", b"{\"key\": 1, \"body\": \"x\"}\n");
        let (result, _, _) = read(&path, &ReadOptions::default());
        let err = result.unwrap_err().to_string();
        assert!(
            err.contains("no field `id`") && err.contains("fields found: body, key"),
            "{err}"
        );
    }

    #[test]
    fn folder_ids_are_relative_paths() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("en")).unwrap();
        file_with(&dir, "en/a.html", b"<p>x</p>");
        file_with(&dir, "b.txt", b"y");
        file_with(&dir, "notes.md", b"z");
        file_with(&dir, "latin.txt", b"caf\xE9");
        let (result, records, warnings) = read(dir.path(), &ReadOptions::default());
        let summary = result.unwrap();
        assert_eq!(summary.ignored_files, 1);
        let ids: Vec<&str> = records.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["b.txt", "en/a.html", "latin.txt"]);
        assert_eq!(records[2].text, "café");
        assert!(warnings.is_empty(), "{warnings:?}");
    }

    #[test]
    fn documents_in_other_charsets_are_decoded_and_bad_bytes_counted() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("p")).unwrap();
        let (page, _, _) = encoding_rs::KOI8_R.encode("<meta charset=koi8-r><p>Привет, мир</p>");
        file_with(&dir, "p/koi8.html", &page);
        file_with(&dir, "p/bad.html", b"<meta charset=utf-8><p>caf\xC3 ok</p>");
        let utf16: Vec<u8> = [0xFF, 0xFE]
            .into_iter()
            .chain("Grüße".encode_utf16().flat_map(u16::to_le_bytes))
            .collect();
        file_with(&dir, "p/utf16.txt", &utf16);
        let (result, records, warnings) = read(&dir.path().join("p"), &ReadOptions::default());
        assert_eq!(result.unwrap().malformed, 1);
        assert!(warnings.is_empty(), "{warnings:?}");
        let texts: Vec<&str> = records.iter().map(|r| r.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "<meta charset=utf-8><p>caf\u{FFFD} ok</p>",
                "<meta charset=koi8-r><p>Привет, мир</p>",
                "Grüße"
            ]
        );
        let strict = ReadOptions {
            strict: true,
            ..ReadOptions::default()
        };
        let err = read(&dir.path().join("p"), &strict)
            .0
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            format!(
                "{}: 1 byte sequences its charset does not allow (UTF-8, declared by a <meta> \
                 element in the first 1024 bytes; 1 malformed byte sequences replaced by U+FFFD); \
                 fix the bytes, or leave out --strict to read them as U+FFFD",
                dir.path().join("p/bad.html").display()
            )
        );
    }

    #[test]
    fn an_mbox_gives_a_record_a_message_with_its_date() {
        let dir = tempfile::tempdir().unwrap();
        let path = file_with(
            &dir,
            "list.mbox",
            b"From a@b.c Tue Jun  3 10:00:00 2025\nMessage-ID: <one@b.c>\nSubject: one\n\
              Date: Tue, 3 Jun 2025 10:00:00 +0000\n\nFirst\n\n\
              From c@d.e Tue Jun  3 11:00:00 2025\nSubject: two\nFrom: c@d.e\n\nSecond\n",
        );
        let (result, records, _) = read(&path, &ReadOptions::default());
        assert_eq!(result.unwrap().records, 2);
        let got: Vec<(&str, Option<i64>, String)> = records
            .iter()
            .map(|r| (r.id.as_str(), r.time, r.origin.to_string()))
            .collect();
        assert_eq!(
            got,
            [
                (
                    "one@b.c",
                    Some(1_748_944_800),
                    format!("{}#1", path.display())
                ),
                ("list.mbox#2", None, format!("{}#2", path.display())),
            ]
        );
        assert!(
            records[1].text.ends_with("\n\nSecond\n"),
            "{:?}",
            records[1].text
        );
    }

    #[test]
    fn a_csv_in_a_legacy_charset_is_read_with_encoding() {
        let dir = tempfile::tempdir().unwrap();
        let csv = "id,text\n1,Правительство объявило сегодня о новых мерах поддержки бизнеса\n";
        let (bytes, _, _) = encoding_rs::WINDOWS_1251.encode(csv);
        let path = file_with(&dir, "d.csv", &bytes);
        let (result, _, warnings) = read(&path, &ReadOptions::default());
        assert_eq!(result.unwrap().skipped, 1);
        assert!(
            warnings[0].contains("invalid UTF-8 in `text`"),
            "{}",
            warnings[0]
        );
        for encoding in ["windows-1251", "auto"] {
            let options = ReadOptions {
                encoding: Some(RecordEncoding::parse(encoding).unwrap()),
                ..ReadOptions::default()
            };
            let (result, records, _) = read(&path, &options);
            assert_eq!(result.unwrap().records, 1, "{encoding}");
            assert_eq!(records[0].text, &csv[10..csv.len() - 1], "{encoding}");
        }
    }

    #[test]
    fn utf16_is_told_from_utf8_and_from_binary() {
        let text = "id,text\n1,one two\n";
        let little: Vec<u8> = text.encode_utf16().flat_map(u16::to_le_bytes).collect();
        let big: Vec<u8> = text.encode_utf16().flat_map(u16::to_be_bytes).collect();
        assert_eq!(utf16_encoding(&little), Some("UTF-16 (little-endian)"));
        assert_eq!(utf16_encoding(&big), Some("UTF-16 (big-endian)"));
        assert_eq!(utf16_encoding(b"\xFF\xFEi"), Some("UTF-16 (little-endian)"));
        assert_eq!(utf16_encoding(text.as_bytes()), None);
        assert_eq!(utf16_encoding("привет, мир".as_bytes()), None);
        assert_eq!(utf16_encoding(&[0u8; 64]), None);
    }

    #[test]
    fn more_columns_are_kept_as_they_are() {
        let dir = tempfile::tempdir().unwrap();
        let options = ReadOptions {
            columns: vec!["source".into(), "n".into()],
            ..ReadOptions::default()
        };
        let path = file_with(&dir, "d.csv", b"n,id,text,source\n7,a,x,<b>Herald</b>\n");
        let (_, records, _) = read(&path, &options);
        assert_eq!(records[0].columns, ["<b>Herald</b>", "7"]);
        let path = file_with(
            &dir,
            "d.jsonl",
            b"{\"id\": \"a\", \"text\": \"x\", \"source\": \"S\", \"n\": 7}\n{\"id\": \"b\", \"text\": \"y\"}\n",
        );
        let (_, records, _) = read(&path, &options);
        assert_eq!(records[0].columns, ["S", "7"]);
        assert_eq!(records[1].columns, ["", ""]);
        let path = file_with(&dir, "doc.txt", b"words");
        let (_, records, _) = read(&path, &options);
        assert_eq!(records[0].columns, ["", ""]);
        let path = file_with(&dir, "e.csv", b"id,text\na,x\n");
        let err = read(&path, &options).0.unwrap_err().to_string();
        assert!(
            err.ends_with(
                "no column `source` (one of the columns asked for); columns found: id, text"
            ),
            "{err}"
        );
    }

    #[test]
    fn missing_input_is_fatal() {
        let (result, _, _) = read(Path::new("/no/such/file.csv"), &ReadOptions::default());
        assert!(result
            .unwrap_err()
            .to_string()
            .starts_with("/no/such/file.csv: cannot open"));
    }
}
