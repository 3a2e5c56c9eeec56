//! Reading inputs. Every input becomes records pulled by the caller ([`read_inputs`] gives an
//! iterator of [`ReadItem`]s: a record, or the one-line report of a record skipped): a record
//! file (CSV, TSV, JSONL, Parquet), a whole-file document (`.txt`, `.html`, `.htm`, `.eml`), an
//! archive of documents (`.mbox`, `.warc`), a folder of documents and Parquet files (id = path
//! relative to the folder; [`read_folder_file`] reads one file of a folder alone, as the folder
//! gives it), or `-` for stdin. What each is read as is
//! [`Format::detect`]'s (and, in a folder, [`Format::in_folder`]'s); each format's module
//! reads its records, and this one checks their ids and times, numbers them in input order and
//! counts them. A record that cannot be used is reported in one line naming the file and line,
//! and skipped (fatal under `strict`); what makes a whole input unusable (a missing column, an
//! unreadable file) ends the reading with an error. Record files are UTF-8 unless
//! [`ReadOptions::encoding`] names another charset. Reading stops where the caller stops
//! pulling: a dropped reader reads no further.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::io::csv::CsvReader;
use crate::io::document::{read_document, DocumentKind, MboxReader};
use crate::io::format::{open_input, Detection};
pub use crate::io::format::{Format, ReadOptions};
use crate::io::jsonl::JsonlReader;
use crate::io::record::Entry;
pub use crate::io::record::Origin;
pub use crate::io::record::{ColumnRole, DocumentText, ReadError, ReadSummary, Record};
use crate::io::time::parse_time;
use crate::io::transcode::Utf8Reader;
use crate::io::warc::WarcEntries;

/// The format of a record file, as the options name it: [`Format`].
pub type InputFormat = Format;

/// What reading gives, in input order.
#[derive(Debug)]
pub enum ReadItem {
    /// A usable record.
    Record(Record),
    /// The one-line report of a record skipped: the file and line, what is wrong, what to do.
    Skipped(String),
}

/// The records of every input in turn, pulled one at a time: each a record, or a skipped
/// record's report; an input that cannot be read at all ends them with its error. The counts
/// of what has been read so far are [`Records::summary`].
pub fn read_inputs<'a>(inputs: &'a [PathBuf], options: &'a ReadOptions) -> Records<'a> {
    Records {
        inputs,
        options,
        next_input: 0,
        input: 0,
        serial: 0,
        folder: None,
        source: None,
        hint: None,
        summary: ReadSummary::default(),
        stream_malformed: Arc::default(),
        done: false,
    }
}

/// A record file or an archive of documents, decompressed, and decoded when it is in another
/// charset.
type Input = Box<dyn BufRead + Send>;

/// The reader of the file being read.
enum Source {
    Csv(Box<CsvReader<Input>>),
    Jsonl(JsonlReader<Input>),
    #[cfg(feature = "parquet")]
    Parquet(Box<crate::io::parquet::ParquetReader>),
    /// A whole-file document, until it is given.
    One(Option<Entry>),
    Mbox(MboxReader<Input>),
    Warc(WarcEntries<Input>),
}

impl Iterator for Source {
    type Item = Result<Entry, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Source::Csv(reader) => reader.next(),
            Source::Jsonl(reader) => reader.next(),
            #[cfg(feature = "parquet")]
            Source::Parquet(reader) => reader.next(),
            Source::One(entry) => entry.take().map(Ok),
            Source::Mbox(reader) => reader.next(),
            Source::Warc(reader) => reader.next(),
        }
    }
}

/// The files of a folder input not yet read, in order, each with its id: its path relative to
/// the folder.
struct Folder {
    files: std::vec::IntoIter<(PathBuf, String)>,
}

/// The records of one file found in a folder input, as reading the folder gives them, where
/// `id` is the file's path relative to the folder: a document's id, an archive's documents
/// their own (a message without a `Message-ID` the archive's id and its number); a file the
/// folder leaves out gives none. The Spark job reads the files of a folder in tasks of their
/// own through it.
pub fn read_folder_file<'a>(file: &Path, id: &str, options: &'a ReadOptions) -> Records<'a> {
    let mut records = read_inputs(&[], options);
    records.folder = Some(Folder {
        files: vec![(file.to_owned(), id.to_owned())].into_iter(),
    });
    records
}

/// The reader of inputs: see [`read_inputs`].
pub struct Records<'a> {
    inputs: &'a [PathBuf],
    options: &'a ReadOptions,
    /// The next input to open.
    next_input: usize,
    /// Position of the input being read, and of its last record: input order.
    input: u32,
    serial: u64,
    /// The folder being read, if the input is one.
    folder: Option<Folder>,
    /// The file being read.
    source: Option<Source>,
    /// For records whose format their first bytes told, how and what else names a format.
    hint: Option<String>,
    summary: ReadSummary,
    /// Malformed sequences of record files read with `--encoding`.
    stream_malformed: Arc<AtomicU64>,
    done: bool,
}

impl Iterator for Records<'_> {
    type Item = Result<ReadItem, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.step() {
            Ok(Some(item)) => Some(Ok(item)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                self.source = None;
                Some(Err(e))
            }
        }
    }
}

impl Records<'_> {
    /// The counts of what has been read so far.
    pub fn summary(&self) -> ReadSummary {
        let mut summary = self.summary.clone();
        summary.malformed += self.stream_malformed.load(Ordering::Relaxed);
        summary
    }

    /// The next record or report, opening inputs, folders' files and files as they are needed;
    /// `None` after the last input.
    fn step(&mut self) -> Result<Option<ReadItem>, ReadError> {
        loop {
            if let Some(source) = &mut self.source {
                match source.next() {
                    Some(Ok(entry)) => match self.settle(entry)? {
                        Some(item) => return Ok(Some(item)),
                        None => continue,
                    },
                    Some(Err(e)) => return Err(self.hinted(e)),
                    None => {
                        self.source = None;
                        self.hint = None;
                    }
                }
            }
            if let Some(folder) = &mut self.folder {
                match folder.files.next() {
                    Some((path, id)) => self.open_folder_file(&path, id)?,
                    None => self.folder = None,
                }
                continue;
            }
            let Some(input) = self.inputs.get(self.next_input) else {
                return Ok(None);
            };
            self.input = self.next_input as u32;
            self.next_input += 1;
            self.serial = 0;
            self.open_input(input)?;
        }
    }

    /// Opens an input named by the caller: stdin, a folder or a file.
    fn open_input(&mut self, input: &Path) -> Result<(), ReadError> {
        if input.as_os_str() == "-" {
            let detection = Format::detect(input, self.options)?;
            let stdin = BufReader::with_capacity(1 << 16, std::io::stdin());
            let source: Arc<str> = Arc::from("<stdin>");
            let stdin = self.transcoded(stdin, &source)?;
            return self.open_records(stdin, source, input, &detection);
        }
        let name = input.display().to_string();
        let meta = std::fs::metadata(input).map_err(|source| ReadError::Open {
            path: name.clone(),
            source,
        })?;
        if meta.is_dir() {
            return self.open_folder(input);
        }
        let detection = Format::detect(input, self.options)?;
        let source: Arc<str> = Arc::from(name);
        match detection.format {
            Some(Format::Parquet) => {
                self.source = Some(open_parquet(input, source, self.options)?);
            }
            Some(format) if format.is_document() => {
                let (file, _) = open_input(input)?;
                let id = input
                    .file_name()
                    .map_or_else(|| source.to_string(), |n| n.to_string_lossy().into_owned());
                self.source = Some(open_document(file, format, id, source)?);
            }
            _ => {
                let (file, _) = open_input(input)?;
                let reader = BufReader::with_capacity(1 << 16, file);
                let reader = self.transcoded(reader, &source)?;
                self.open_records(reader, source, input, &detection)?;
            }
        }
        Ok(())
    }

    /// Lists the files of a folder input, to be read in order.
    fn open_folder(&mut self, folder: &Path) -> Result<(), ReadError> {
        let mut files = Vec::new();
        collect_files(folder, &mut files).map_err(|(path, source)| ReadError::Open {
            path: path.display().to_string(),
            source,
        })?;
        files.sort();
        let files: Vec<(PathBuf, String)> = files
            .into_iter()
            .map(|path| {
                let id = relative_id(folder, &path);
                (path, id)
            })
            .collect();
        self.folder = Some(Folder {
            files: files.into_iter(),
        });
        Ok(())
    }

    /// Opens a file found in a folder, whose id is `id`: a document or a Parquet file, or one
    /// left out.
    fn open_folder_file(&mut self, path: &Path, id: String) -> Result<(), ReadError> {
        let source: Arc<str> = Arc::from(path.display().to_string());
        match Format::in_folder(path) {
            None => self.summary.ignored_files += 1,
            Some(Format::Parquet) => self.source = Some(open_parquet(path, source, self.options)?),
            Some(format) => {
                let (file, _) = open_input(path)?;
                self.source = Some(open_document(file, format, id, source)?);
            }
        }
        Ok(())
    }

    /// Opens the record input `path` (or stdin), whose text is `input`, in the format detected,
    /// or the one its first bytes tell.
    fn open_records(
        &mut self,
        mut input: Input,
        source: Arc<str>,
        path: &Path,
        detection: &Detection,
    ) -> Result<(), ReadError> {
        let head = check_not_utf16(&mut input, &source)?;
        let format = match detection.format {
            Some(format) => format,
            None => {
                self.hint = Some(detection.guess_hint(path));
                if head.binary {
                    return Err(self.hinted(ReadError::Header {
                        path: source.to_string(),
                        message: "binary data, not text (a compressed file?)".into(),
                    }));
                }
                head.format
            }
        };
        let opened = match format {
            Format::Csv => CsvReader::open(input, source, detection.delimiter, self.options)
                .map(|reader| Source::Csv(Box::new(reader))),
            Format::Jsonl => Ok(Source::Jsonl(JsonlReader::new(input, source, self.options))),
            Format::Parquet => Err(ReadError::Parquet {
                path: source.to_string(),
                message: "Parquet cannot be read from a stream: save it to a file and give that"
                    .into(),
            }),
            document => open_document(Box::new(input), document, source.to_string(), source),
        };
        self.source = Some(opened.map_err(|e| self.hinted(e))?);
        Ok(())
    }

    /// `input` as it is when it is UTF-8 (no `--encoding`, or one that finds UTF-8), else
    /// decoded from its charset as it is read.
    fn transcoded(
        &self,
        mut input: impl BufRead + Send + 'static,
        source: &Arc<str>,
    ) -> Result<Input, ReadError> {
        let Some(encoding) = self.options.encoding else {
            return Ok(Box::new(input));
        };
        let found = encoding.for_input(&mut input).map_err(|e| ReadError::Io {
            path: source.to_string(),
            source: e,
        })?;
        Ok(match found {
            None => Box::new(input),
            Some(encoding) => {
                let malformed = Arc::clone(&self.stream_malformed);
                let utf8 = Utf8Reader::new(input, encoding, self.options.strict, malformed);
                Box::new(BufReader::with_capacity(1 << 16, utf8))
            }
        })
    }

    /// `error` with how the format was guessed, when it was and the error is one of a wrong
    /// guess (an unusable header, a missing column).
    fn hinted(&self, error: ReadError) -> ReadError {
        match (&self.hint, error) {
            (Some(hint), e @ (ReadError::Header { .. } | ReadError::MissingColumn { .. })) => {
                ReadError::Guessed {
                    error: Box::new(e),
                    hint: hint.clone(),
                }
            }
            (_, e) => e,
        }
    }

    fn origin(&mut self, source: Arc<str>, line: u64) -> Origin {
        self.serial += 1;
        Origin {
            order: (self.input, self.serial),
            source,
            line,
            dated: None,
        }
    }

    /// What the reader of a format gave, as the caller is given it; `None` for what is only
    /// counted.
    fn settle(&mut self, entry: Entry) -> Result<Option<ReadItem>, ReadError> {
        Ok(Some(match entry {
            Entry::Record {
                id,
                text,
                time,
                columns,
                source,
                line,
            } => {
                let origin = self.origin(source, line);
                self.accept(id, text, time.as_deref(), columns, origin)?
            }
            Entry::Document {
                id,
                document,
                source,
                newest_kept,
            } => {
                let mut origin = self.origin(source, 0);
                origin.dated = document.time.filter(|_| newest_kept);
                self.accept_document(id, document, origin)?
            }
            Entry::Skipped { source, line, what } => {
                let origin = self.origin(source, line);
                self.skip(&origin, what)?
            }
            Entry::NotText => {
                self.summary.not_text += 1;
                return Ok(None);
            }
        }))
    }

    fn skip(&mut self, origin: &Origin, what: String) -> Result<ReadItem, ReadError> {
        let message = format!("{origin}: {what}");
        if self.options.strict {
            return Err(ReadError::Strict(message));
        }
        self.summary.skipped += 1;
        Ok(ReadItem::Skipped(format!("{message}; record skipped")))
    }

    fn accept(
        &mut self,
        id: String,
        text: String,
        time: Option<&str>,
        columns: Vec<String>,
        origin: Origin,
    ) -> Result<ReadItem, ReadError> {
        if id.trim().is_empty() {
            let column = &self.options.id_column;
            let what = format!("empty id in `{column}`; every record needs an id");
            return self.skip(&origin, what);
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

    /// Passes on a record whose time is read.
    fn accept_at(
        &mut self,
        id: String,
        text: String,
        time: Option<i64>,
        columns: Vec<String>,
        origin: Origin,
    ) -> Result<ReadItem, ReadError> {
        if id.trim().is_empty() {
            let column = &self.options.id_column;
            let what = format!("empty id in `{column}`; every record needs an id");
            return self.skip(&origin, what);
        }
        self.summary.records += 1;
        Ok(ReadItem::Record(Record {
            id,
            text,
            time,
            columns,
            origin,
        }))
    }

    /// Passes on a decoded document, counting its malformed bytes (fatal under `--strict`).
    fn accept_document(
        &mut self,
        id: String,
        document: DocumentText,
        origin: Origin,
    ) -> Result<ReadItem, ReadError> {
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
}

/// The reader of a Parquet file.
#[cfg(feature = "parquet")]
fn open_parquet(path: &Path, source: Arc<str>, options: &ReadOptions) -> Result<Source, ReadError> {
    let reader = crate::io::parquet::ParquetReader::open(path, source, options)?;
    Ok(Source::Parquet(Box::new(reader)))
}

#[cfg(not(feature = "parquet"))]
fn open_parquet(
    _path: &Path,
    source: Arc<str>,
    _options: &ReadOptions,
) -> Result<Source, ReadError> {
    Err(ReadError::Parquet {
        path: source.to_string(),
        message: crate::io::format::NO_PARQUET.into(),
    })
}

/// The reader of a whole-file document of `format` (an archive: of its documents), whose id
/// is `id`.
fn open_document(
    file: Box<dyn Read + Send>,
    format: Format,
    id: String,
    source: Arc<str>,
) -> Result<Source, ReadError> {
    let buffered = |file| -> Input { Box::new(BufReader::with_capacity(1 << 16, file)) };
    Ok(match format {
        Format::Mbox => Source::Mbox(MboxReader::new(buffered(file), id, source)),
        Format::Warc => Source::Warc(WarcEntries::new(buffered(file), source)),
        _ => {
            let kind = DocumentKind::of_format(format).unwrap_or(DocumentKind::Plain);
            Source::One(Some(read_document(file, id, source, kind)?))
        }
    })
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

/// What the first bytes of an input say.
struct Head {
    /// The record format they tell.
    format: Format,
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
    let sample = &text[..text.len().min(4096)];
    // A character cut at the end of the sample is not an error.
    let not_utf8 = std::str::from_utf8(sample).is_err_and(|e| e.error_len().is_some());
    Ok(Head {
        format: Format::of_head(head),
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
    use crate::io::record::LONG_TEXT_BYTES;
    use crate::io::transcode::RecordEncoding;
    use std::io::Write;

    fn read(
        path: &Path,
        options: &ReadOptions,
    ) -> (Result<ReadSummary, ReadError>, Vec<Record>, Vec<String>) {
        let mut records = Vec::new();
        let mut warnings = Vec::new();
        let inputs = [path.to_owned()];
        let mut reader = read_inputs(&inputs, options);
        for item in reader.by_ref() {
            match item {
                Ok(ReadItem::Record(record)) => records.push(record),
                Ok(ReadItem::Skipped(report)) => warnings.push(report),
                Err(e) => return (Err(e), records, warnings),
            }
        }
        (Ok(reader.summary()), records, warnings)
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

    /// A WARC `resource` record of `uri`, dated `date`, holding `text`.
    fn warc_resource(uri: &str, date: &str, text: &str) -> Vec<u8> {
        let mut out = format!(
            "WARC/1.0\r\nWARC-Type: resource\r\nWARC-Target-URI: {uri}\r\nWARC-Date: {date}\r\n\
             Content-Type: text/plain\r\nContent-Length: {}\r\n\r\n",
            text.len()
        )
        .into_bytes();
        out.extend_from_slice(text.as_bytes());
        out.extend_from_slice(b"\r\n\r\n");
        out
    }

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        encoder.write_all(bytes).unwrap();
        encoder.finish().unwrap()
    }

    #[test]
    fn a_folder_file_read_alone_gives_what_the_folder_gives() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        file_with(&dir, "a.txt", b"one");
        file_with(
            &dir,
            "sub/list.mbox",
            b"From a@b.c Tue Jun  3 10:00:00 2025\nMessage-ID: <one@b.c>\nSubject: one\n\nFirst\n\n\
              From c@d.e Tue Jun  3 11:00:00 2025\nSubject: two\n\nSecond\n",
        );
        let warc = [
            warc_resource("http://a/x", "2025-06-03T10:00:00Z", "older"),
            warc_resource("http://a/x", "2025-06-04T10:00:00Z", "newer"),
        ]
        .concat();
        file_with(&dir, "sub/crawl.warc", &warc);
        file_with(&dir, "notes.md", b"left out");
        let seen = |records: &[Record]| -> Vec<(String, String, Option<i64>)> {
            records
                .iter()
                .map(|r| (r.id.clone(), r.origin.to_string(), r.origin.dated))
                .collect()
        };
        let (_, whole, _) = read(dir.path(), &ReadOptions::default());
        let mut alone = Vec::new();
        for name in ["a.txt", "notes.md", "sub/crawl.warc", "sub/list.mbox"] {
            let options = ReadOptions::default();
            for item in read_folder_file(&dir.path().join(name), name, &options) {
                match item.unwrap() {
                    ReadItem::Record(record) => alone.push(record),
                    ReadItem::Skipped(report) => panic!("{report}"),
                }
            }
        }
        assert_eq!(seen(&alone), seen(&whole));
        let ids: Vec<&str> = alone.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "a.txt",
                "http://a/x",
                "http://a/x",
                "one@b.c",
                "sub/list.mbox#2"
            ]
        );
        let at = format!("{}@{}", dir.path().join("sub/crawl.warc").display(), 0);
        assert_eq!(alone[1].origin.to_string(), at);
        assert_eq!(alone[2].origin.dated, Some(1_749_031_200));
    }

    #[test]
    fn a_damaged_gzip_member_of_a_warc_is_reported_and_the_next_member_read() {
        let dir = tempfile::tempdir().unwrap();
        let words: String = (0..400).map(|i| format!("word{i} ")).collect();
        let members: Vec<Vec<u8>> = ["http://a/1", "http://a/2", "http://a/3"]
            .iter()
            .map(|uri| gzip(&warc_resource(uri, "2025-06-03T10:00:00Z", &words)))
            .collect();
        let mut damaged = members[1].clone();
        let middle = damaged.len() / 2;
        damaged[middle..middle + 8].copy_from_slice(&[0xff; 8]);
        let path = file_with(
            &dir,
            "crawl.warc.gz",
            &[&members[0][..], &damaged, &members[2]].concat(),
        );
        let (result, records, warnings) = read(&path, &ReadOptions::default());
        assert_eq!(result.unwrap().skipped, 1);
        let ids: Vec<&str> = records.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["http://a/1", "http://a/3"]);
        assert!(records.iter().all(|r| r.text == words));
        let second_at = members[0].len();
        let third_at = second_at + members[1].len();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        let expected_start = format!(
            "{}: the gzip member at byte {second_at} cannot be decompressed (",
            path.display()
        );
        let expected_end = format!(
            "); its records are lost and reading goes on at the next member, at byte \
             {third_at}; fetch the file again to read them; record skipped"
        );
        assert!(
            warnings[0].starts_with(&expected_start) && warnings[0].ends_with(&expected_end),
            "{}",
            warnings[0]
        );
    }

    #[test]
    fn a_cut_warc_gz_keeps_the_records_before() {
        let dir = tempfile::tempdir().unwrap();
        let first = gzip(&warc_resource("http://a/1", "2025-06-03T10:00:00Z", "one"));
        let second = gzip(&warc_resource("http://a/2", "2025-06-03T10:00:00Z", "two"));
        let path = file_with(
            &dir,
            "crawl.warc.gz",
            &[&first[..], &second[..second.len() / 2]].concat(),
        );
        let (result, records, warnings) = read(&path, &ReadOptions::default());
        assert_eq!(result.unwrap().records, 1);
        assert_eq!(records[0].id, "http://a/1");
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        let expected = format!(
            "{}: the file ends inside the gzip member at byte {} (",
            path.display(),
            first.len()
        );
        assert!(
            warnings[0].starts_with(&expected)
                && warnings[0].ends_with(
                    "): it was cut short; the records before are kept; fetch the file again \
                     for the rest; record skipped"
                ),
            "{}",
            warnings[0]
        );
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
    fn records_are_pulled_and_a_reader_reads_no_further_than_asked() {
        let dir = tempfile::tempdir().unwrap();
        let path = file_with(&dir, "d.csv", b"id,text\n1,a\n,no id\n3,c\n");
        let inputs = [path.clone(), dir.path().join("absent.csv")];
        let options = ReadOptions::default();
        let mut reader = read_inputs(&inputs, &options);
        let first: Vec<ReadItem> = reader.by_ref().take(2).map(Result::unwrap).collect();
        assert!(matches!(&first[0], ReadItem::Record(r) if r.id == "1"));
        assert!(
            matches!(&first[1], ReadItem::Skipped(w) if w.contains("d.csv:3: empty id")),
            "{first:?}"
        );
        // The absent input is opened only when the first one is read to its end.
        let summary = reader.summary();
        assert_eq!((summary.records, summary.skipped), (1, 1));
        drop(reader);
        let all: Vec<Result<ReadItem, ReadError>> = read_inputs(&inputs, &options).collect();
        assert_eq!(all.len(), 4, "{all:?}");
        let err = all[3].as_ref().unwrap_err().to_string();
        assert!(err.ends_with("absent.csv: cannot open"), "{err}");
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
