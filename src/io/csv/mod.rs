//! CSV and TSV, both directions. Read: a header row naming the columns, then one record a row
//! (`CsvReader`, pulled record by record over the fast parser of [`records`]); a record that
//! cannot be used (a field count other than the header's, invalid UTF-8, a quote that never
//! closes) is reported with its line and skipped, a missing column or an unusable header is
//! fatal. Written: the cluster table and the reuse table ([`write_rows`], [`write_pairs`]) and
//! any table of strings ([`write_csv`]).

pub mod records;

use std::io::{Read, Write};
use std::sync::Arc;

use self::records::{CsvRecord, CsvRecords, RecordShape, RunawayQuote};
use crate::io::format::ReadOptions;
use crate::io::record::{shown_names, utf8, ColumnRole, Entry, ReadError, LONG_TEXT_BYTES};
use crate::io::table::{Row, PAIR_COLUMNS};

/// The records of a CSV input, pulled one at a time: each a record or a skipped record's
/// report; an error that makes the rest unreadable ends them.
pub(crate) struct CsvReader<R> {
    csv: CsvRecords<R>,
    record: CsvRecord,
    source: Arc<str>,
    /// Fields per record (those of the header).
    width: usize,
    id_at: usize,
    text_at: usize,
    time_at: Option<usize>,
    columns_at: Vec<usize>,
    id_column: String,
    text_column: String,
    strict: bool,
}

impl<R: Read> CsvReader<R> {
    /// Reads the header of `input` (named `source` in messages), whose fields are separated by
    /// `delimiter`, and finds the columns `options` ask for.
    pub fn open(
        input: R,
        source: Arc<str>,
        delimiter: u8,
        options: &ReadOptions,
    ) -> Result<CsvReader<R>, ReadError> {
        let mut csv = CsvRecords::with_delimiter(input, delimiter);
        let mut header = CsvRecord::default();
        let has_header = csv.read(&mut header).map_err(|e| ReadError::Io {
            path: source.to_string(),
            source: e,
        })?;
        let names: Vec<String> = header
            .iter()
            .map(|h| String::from_utf8_lossy(h).trim().to_owned())
            .collect();
        check_header(&header, has_header, &names, &source)?;
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
        let id_at = column(&options.id_column, ColumnRole::Id)?;
        let text_at = column(&options.text_column, ColumnRole::Text)?;
        let time_at = match &options.time_column {
            Some(name) => Some(column(name, ColumnRole::Time)?),
            None => None,
        };
        let columns_at = (options.columns.iter())
            .map(|name| column(name, ColumnRole::Extra))
            .collect::<Result<Vec<usize>, ReadError>>()?;
        csv.expect_shape(RecordShape {
            fields: names.len(),
            id_at,
        });
        Ok(CsvReader {
            csv,
            record: CsvRecord::default(),
            source,
            width: names.len(),
            id_at,
            text_at,
            time_at,
            columns_at,
            id_column: options.id_column.clone(),
            text_column: options.text_column.clone(),
            strict: options.strict,
        })
    }

    /// The next record or report, `None` at the end.
    fn next_entry(&mut self) -> Result<Option<Entry>, ReadError> {
        let more = self.csv.read(&mut self.record).map_err(|e| ReadError::Io {
            path: self.source.to_string(),
            source: e,
        })?;
        if !more {
            return Ok(None);
        }
        let skipped = |line: u64, what: String| Entry::Skipped {
            source: Arc::clone(&self.source),
            line,
            what,
        };
        let record = &mut self.record;
        if let Some(quote) = record.runaway() {
            let what = runaway_quote_report(quote, self.strict);
            return Ok(Some(skipped(quote.opened, what)));
        }
        let line = record.line();
        if record.len() != self.width {
            let what = format!(
                "malformed CSV record: {} fields where the header has {}",
                record.len(),
                self.width
            );
            return Ok(Some(skipped(line, what)));
        }
        let invalid = |name: &str, valid_up_to: usize| {
            format!("invalid UTF-8 in `{name}` at byte {valid_up_to}; convert the file to UTF-8")
        };
        let id = match utf8(record.get(self.id_at)) {
            Ok(id) => id.to_owned(),
            Err(valid_up_to) => {
                return Ok(Some(skipped(line, invalid(&self.id_column, valid_up_to))));
            }
        };
        let time = (self.time_at).map(|at| String::from_utf8_lossy(record.get(at)).into_owned());
        let columns = (self.columns_at.iter())
            .map(|&at| String::from_utf8_lossy(record.get(at)).into_owned())
            .collect();
        let text = if record.get(self.text_at).len() >= LONG_TEXT_BYTES {
            // Moved out of the record, not copied: a long text is never held twice.
            String::from_utf8(record.take_field(self.text_at))
                .map_err(|e| e.utf8_error().valid_up_to())
        } else {
            utf8(record.get(self.text_at)).map(str::to_owned)
        };
        Ok(Some(match text {
            Ok(text) => Entry::Record {
                id,
                text,
                time,
                columns,
                source: Arc::clone(&self.source),
                line,
            },
            Err(valid_up_to) => skipped(line, invalid(&self.text_column, valid_up_to)),
        }))
    }
}

impl<R: Read> Iterator for CsvReader<R> {
    type Item = Result<Entry, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_entry().transpose()
    }
}

/// Fails on a header row that is cut by a quote that never closes, or on an input without one.
fn check_header(
    header: &CsvRecord,
    has_header: bool,
    names: &[String],
    source: &str,
) -> Result<(), ReadError> {
    if let Some(quote) = header.runaway() {
        return Err(ReadError::Header {
            path: source.to_owned(),
            message: format!(
                "line {}: the header row has a quote that is never closed; close it",
                quote.opened
            ),
        });
    }
    if !has_header || (names.len() == 1 && names[0].is_empty()) {
        return Err(ReadError::Header {
            path: source.to_owned(),
            message: "empty input: no header row and no records".into(),
        });
    }
    Ok(())
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

/// Writes the cluster table as CSV, similarities to four decimals.
pub fn write_rows<'a>(
    rows: impl IntoIterator<Item = Row<'a>>,
    out: &mut impl Write,
) -> std::io::Result<()> {
    let mut csv = ::csv::Writer::from_writer(out);
    csv.write_record([
        "doc_id",
        "cluster_id",
        "cluster_size",
        "similarity",
        "status",
    ])
    .map_err(io_error)?;
    for row in rows {
        let similarity = row
            .similarity
            .map(|s| format!("{s:.4}"))
            .unwrap_or_default();
        csv.write_record([
            row.doc_id,
            row.cluster_id,
            &row.cluster_size.to_string(),
            &similarity,
            row.status,
        ])
        .map_err(io_error)?;
    }
    csv.flush()
}

/// Writes the reuse table as CSV (its shares rounded by the caller), shares to four decimals.
pub fn write_pairs<'a>(
    pairs: impl IntoIterator<Item = crate::ReusePair<'a>>,
    out: &mut impl Write,
) -> std::io::Result<()> {
    let mut csv = ::csv::Writer::from_writer(out);
    csv.write_record(PAIR_COLUMNS).map_err(io_error)?;
    for p in pairs {
        csv.write_record([
            p.doc_a,
            p.doc_b,
            &format!("{:.4}", p.a_in_b),
            &format!("{:.4}", p.b_in_a),
            &p.shared_words.to_string(),
            &p.passages.to_string(),
            &p.longest.to_string(),
            &format!("{:.4}", p.jaccard),
        ])
        .map_err(io_error)?;
    }
    csv.flush()
}

/// Writes a CSV table: the header row, then each row.
pub fn write_csv(
    header: &[&str],
    rows: impl IntoIterator<Item = Vec<String>>,
    out: impl Write,
) -> std::io::Result<()> {
    let mut out = std::io::BufWriter::with_capacity(1 << 16, out);
    {
        let mut csv = ::csv::Writer::from_writer(&mut out);
        csv.write_record(header).map_err(io_error)?;
        for row in rows {
            csv.write_record(&row).map_err(io_error)?;
        }
        csv.flush()?;
    }
    out.flush()
}

/// The io error inside a csv error, so that its kind (a broken pipe above all) is seen by the
/// caller; any other csv error as an io error of kind `Other`.
fn io_error(error: ::csv::Error) -> std::io::Error {
    if !error.is_io_error() {
        return std::io::Error::other(error);
    }
    match error.into_kind() {
        ::csv::ErrorKind::Io(e) => e,
        other => std::io::Error::other(format!("{other:?}")),
    }
}
