//! The one table of formats: what a path is read as. A file named by the user is read in the
//! format the options give, else the one its extension names (the extension before `.gz` or
//! `.zst`, which are decompressed as they are read), else as Parquet when it starts with the
//! Parquet marker, else as records whose first bytes tell JSONL from CSV ([`Format::detect`]).
//! A file found in a folder is read when its extension names a document format or Parquet, and
//! left out otherwise ([`Format::in_folder`]); a remote file is known by its name alone
//! (`Format::of_name`). The reader, `dedup`, the Python package and the Spark job all ask
//! here. The options of a read ([`ReadOptions`]) live here too: they give a format, the
//! delimiter of CSV inputs and their charset.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use crate::io::gzip::GzipMembers;
use crate::io::record::ReadError;
use crate::io::transcode::RecordEncoding;

/// The format of an input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// CSV with a header row (`.csv`; `.tsv` and `.tab` separated by tabs).
    Csv,
    /// One JSON object per line (`.jsonl`, `.ndjson`, `.json`).
    Jsonl,
    /// An Apache Parquet file, one record a row (needs the `parquet` feature; not stdin).
    Parquet,
    /// A plain text document (`.txt`).
    Text,
    /// An HTML page (`.html`, `.htm`).
    Html,
    /// A mail message (`.eml`).
    Mail,
    /// A mail archive, one record a message (`.mbox`).
    Mbox,
    /// A WARC file, one record a page or text (`.warc`).
    Warc,
}

/// The formats and the extensions that name them (lower case, before any `.gz` or `.zst`).
const EXTENSIONS: [(&str, Format); 13] = [
    ("csv", Format::Csv),
    ("tsv", Format::Csv),
    ("tab", Format::Csv),
    ("jsonl", Format::Jsonl),
    ("ndjson", Format::Jsonl),
    ("json", Format::Jsonl),
    ("parquet", Format::Parquet),
    ("txt", Format::Text),
    ("html", Format::Html),
    ("htm", Format::Html),
    ("eml", Format::Mail),
    ("mbox", Format::Mbox),
    ("warc", Format::Warc),
];

/// Why a build without the `parquet` feature reads and writes no Parquet.
pub const NO_PARQUET: &str =
    "this megashingle was built without Parquet support (the `parquet` feature)";

/// What tells an input's format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum How {
    /// The options name it.
    Given,
    /// The file's extension names it.
    Name,
    /// The file starts with the Parquet marker `PAR1`.
    Marker,
    /// Nothing does: the input holds records, read as JSONL when its first bytes are `{` and
    /// as CSV otherwise ([`Format::of_head`]).
    Content,
}

/// What an input is read as, found by [`Format::detect`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Detection {
    /// The format; `None` when it is told by the content ([`How::Content`]).
    pub format: Option<Format>,
    /// What tells it.
    pub how: How,
    /// How the file is compressed.
    pub(crate) compression: Compression,
    /// The extension that tells the format, lower case (empty for stdin).
    pub extension: String,
    /// The byte between the fields of a CSV input.
    pub delimiter: u8,
}

impl Detection {
    /// Why the format of the input `path` told by its content was chosen, and what names
    /// formats, for a message about an input that could not be read so.
    pub(crate) fn guess_hint(&self, path: &Path) -> String {
        if path.as_os_str() == "-" {
            return "stdin is read as CSV unless it starts with `{` (JSONL)".into();
        }
        let why = if self.extension.is_empty() {
            "it has no extension".to_owned()
        } else {
            format!(
                "its extension .{} is not one megashingle knows",
                self.extension
            )
        };
        format!(
            "it was read as CSV because {why} (.csv, .tsv, .tab; .jsonl, .ndjson, .json; \
             .txt, .html, .htm, .eml, .mbox; each also as .gz or .zst; .parquet)"
        )
    }
}

impl Format {
    /// What the input `path` (`-` for stdin) is read as when it is named by the user, with
    /// `options`: the format they give, else the one its name tells, else Parquet when the file
    /// starts with the Parquet marker, else records told by their first bytes. A compressed
    /// Parquet file is refused: Parquet compresses its pages itself. Folders are read file by
    /// file ([`Format::in_folder`]).
    pub fn detect(path: &Path, options: &ReadOptions) -> Result<Detection, ReadError> {
        let mut detection = Format::detect_by_name(path, options)?;
        if detection.how == How::Content
            && detection.compression == Compression::None
            && path.as_os_str() != "-"
            && starts_with_par1(path)
        {
            detection.format = Some(Format::Parquet);
            detection.how = How::Marker;
        }
        Ok(detection)
    }

    /// What [`Format::detect`] finds without opening the file (a remote file): the format the
    /// options give, else the one its name tells, else records told by their first bytes.
    pub fn detect_by_name(path: &Path, options: &ReadOptions) -> Result<Detection, ReadError> {
        let (compression, extension) = if path.as_os_str() == "-" {
            (Compression::None, String::new())
        } else {
            compression_of(path)
        };
        let delimiter = options.delimiter_for(&extension);
        let (format, how) = match (options.format, Format::of_extension(&extension)) {
            (Some(format), _) => (Some(format), How::Given),
            (None, Some(Format::Parquet)) if compression != Compression::None => {
                return Err(ReadError::Parquet {
                    path: path.display().to_string(),
                    message: "a compressed Parquet file cannot be read; decompress it (Parquet \
                              compresses its pages itself)"
                        .into(),
                })
            }
            (None, Some(format)) => (Some(format), How::Name),
            (None, None) => (None, How::Content),
        };
        Ok(Detection {
            format,
            how,
            compression,
            extension,
            delimiter,
        })
    }

    /// What a file found in a folder input is read as: a document, or a Parquet file (not
    /// compressed); `None` for any other file, which is left out and counted.
    pub fn in_folder(path: &Path) -> Option<Format> {
        if extension_of(path) == "parquet" {
            return Some(Format::Parquet);
        }
        Format::of_name(path).filter(|format| format.is_document())
    }

    /// The format the name of `path` tells, without opening it (a remote file): the one its
    /// extension names, before any `.gz` or `.zst`.
    pub(crate) fn of_name(path: &Path) -> Option<Format> {
        Format::of_extension(&compression_of(path).1)
    }

    /// The format an extension (lower case, before any `.gz` or `.zst`) names.
    pub fn of_extension(extension: &str) -> Option<Format> {
        EXTENSIONS
            .iter()
            .find(|(e, _)| *e == extension)
            .map(|&(_, format)| format)
    }

    /// The record format of an input told by its first bytes `head`: JSONL when the first
    /// byte that is not blank (after a byte order mark) is `{`, else CSV.
    pub fn of_head(head: &[u8]) -> Format {
        let text = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
        match text.iter().find(|b| !b.is_ascii_whitespace()) {
            Some(b'{') => Format::Jsonl,
            _ => Format::Csv,
        }
    }

    /// True for the formats of whole-file documents and archives of them (text, HTML, mail,
    /// mbox, WARC), false for record files (CSV, JSONL, Parquet).
    pub fn is_document(self) -> bool {
        !matches!(self, Format::Csv | Format::Jsonl | Format::Parquet)
    }

    /// The format as messages name it.
    pub fn name(self) -> &'static str {
        match self {
            Format::Csv => "CSV",
            Format::Jsonl => "JSONL",
            Format::Parquet => "Parquet",
            Format::Text => "plain text",
            Format::Html => "HTML",
            Format::Mail => "mail",
            Format::Mbox => "mbox",
            Format::Warc => "WARC",
        }
    }

    /// The format as the Python package and the Spark job name it: `csv`, `jsonl`, `parquet`,
    /// `text`, `html`, `mail`, `mbox`, `warc`.
    pub fn label(self) -> &'static str {
        match self {
            Format::Csv => "csv",
            Format::Jsonl => "jsonl",
            Format::Parquet => "parquet",
            Format::Text => "text",
            Format::Html => "html",
            Format::Mail => "mail",
            Format::Mbox => "mbox",
            Format::Warc => "warc",
        }
    }

    /// The format a [`Format::label`] names.
    pub fn of_label(label: &str) -> Option<Format> {
        [
            Format::Csv,
            Format::Jsonl,
            Format::Parquet,
            Format::Text,
            Format::Html,
            Format::Mail,
            Format::Mbox,
            Format::Warc,
        ]
        .into_iter()
        .find(|f| f.label() == label)
    }
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
    pub format: Option<Format>,
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

/// How a file is compressed, told by its last extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// Plain: read as it is.
    None,
    /// `.gz`: one or more gzip members.
    Gzip,
    /// `.zst`: Zstandard frames.
    Zstd,
}

impl Compression {
    /// The file's contents, decompressed as they are read; a `.warc.gz` (`extension` `warc`)
    /// member by member, a damaged member reported and stepped over ([`GzipMembers`]).
    fn reader(
        self,
        file: File,
        name: &str,
        extension: &str,
    ) -> Result<Box<dyn Read + Send>, ReadError> {
        Ok(match self {
            Compression::None => Box::new(file),
            Compression::Gzip if extension == "warc" => Box::new(GzipMembers::new(file)),
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

/// Opens a record or document file, decompressing `.gz` and `.zst` files as they are read (a
/// `.warc.gz` member by member, [`GzipMembers`]);
/// also gives the extension that tells its format (the one before `.gz` or `.zst`).
pub fn open_input(path: &Path) -> Result<(Box<dyn Read + Send>, String), ReadError> {
    let (compression, extension) = compression_of(path);
    let name = path.display().to_string();
    let file = File::open(path).map_err(|source| ReadError::Open {
        path: name.clone(),
        source,
    })?;
    let reader = compression.reader(file, &name, &extension)?;
    Ok((reader, extension))
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

/// True when the file at `path` starts with the Parquet marker `PAR1`.
fn starts_with_par1(path: &Path) -> bool {
    let mut head = [0u8; 4];
    File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|()| &head == b"PAR1")
}

/// The last extension of `path`, lower case.
fn extension_of(path: &Path) -> String {
    path.extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn detect(path: &Path, options: &ReadOptions) -> (Option<Format>, How, u8) {
        let found = Format::detect(path, options).expect("detected");
        (found.format, found.how, found.delimiter)
    }

    #[test]
    fn named_files_by_option_extension_marker_and_content() {
        let dir = tempfile::tempdir().unwrap();
        let plain = ReadOptions::default();
        let cases = [
            ("d.csv", Some(Format::Csv), How::Name, b','),
            ("d.TSV.gz", Some(Format::Csv), How::Name, b'\t'),
            ("d.tab.zst", Some(Format::Csv), How::Name, b'\t'),
            ("d.ndjson", Some(Format::Jsonl), How::Name, b','),
            ("d.parquet", Some(Format::Parquet), How::Name, b','),
            ("p.html.gz", Some(Format::Html), How::Name, b','),
            ("crawl.warc.zst", Some(Format::Warc), How::Name, b','),
            ("list.mbox", Some(Format::Mbox), How::Name, b','),
            ("m.eml", Some(Format::Mail), How::Name, b','),
            ("d.data", None, How::Content, b','),
        ];
        for (name, format, how, delimiter) in cases {
            assert_eq!(
                detect(&dir.path().join(name), &plain),
                (format, how, delimiter),
                "{name}"
            );
        }
        let marked = dir.path().join("table.bin");
        std::fs::write(&marked, b"PAR1 and more").unwrap();
        assert_eq!(
            detect(&marked, &plain),
            (Some(Format::Parquet), How::Marker, b',')
        );
        let given = ReadOptions {
            format: Some(Format::Jsonl),
            delimiter: Some(b';'),
            ..ReadOptions::default()
        };
        assert_eq!(
            detect(&dir.path().join("m.eml"), &given),
            (Some(Format::Jsonl), How::Given, b';')
        );
        assert_eq!(detect(Path::new("-"), &plain), (None, How::Content, b','));
    }

    #[test]
    fn a_compressed_parquet_file_is_refused() {
        let err = Format::detect(Path::new("d.parquet.gz"), &ReadOptions::default())
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "d.parquet.gz: a compressed Parquet file cannot be read; decompress it (Parquet \
             compresses its pages itself)"
        );
    }

    #[test]
    fn folders_read_documents_and_parquet_and_leave_out_the_rest() {
        let found: Vec<Option<Format>> = [
            "a.txt",
            "b.HTML.gz",
            "c.parquet",
            "d.csv",
            "e.parquet.gz",
            "f.warc.gz",
            "g.md",
        ]
        .iter()
        .map(|name| Format::in_folder(Path::new(name)))
        .collect();
        assert_eq!(
            found,
            [
                Some(Format::Text),
                Some(Format::Html),
                Some(Format::Parquet),
                None,
                None,
                Some(Format::Warc),
                None
            ]
        );
    }

    #[test]
    fn the_first_bytes_tell_jsonl_from_csv() {
        assert_eq!(
            Format::of_head(b"\xEF\xBB\xBF \n{\"id\": 1}"),
            Format::Jsonl
        );
        assert_eq!(Format::of_head(b"id,text\n"), Format::Csv);
        assert_eq!(Format::of_head(b""), Format::Csv);
    }

    #[test]
    fn labels_name_every_format_once() {
        for (_, format) in EXTENSIONS {
            assert_eq!(Format::of_label(format.label()), Some(format));
        }
        assert_eq!(Format::of_label("xml"), None);
    }
}
