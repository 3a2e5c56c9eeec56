//! Parquet files in and out (the `parquet` feature). A Parquet file is read as a table of
//! records through the arrow record batch reader, a few hundred rows at a time and only the
//! columns asked for, so memory stays bounded whatever the file's size: the id and text
//! columns hold strings (the id may hold integers), a time column strings, timestamps or dates,
//! and the other columns kept with each record any plain value. A row is numbered from 1 in its
//! file, and that number stands where a CSV record's line would. Written here: the cluster
//! table, and the rows of Parquet inputs that a deduplication keeps, every column as it was
//! (zstd-compressed, in row groups of at most `ROW_GROUP_BYTES`).

use std::borrow::Cow;
use std::collections::VecDeque;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Date64Type, Float16Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type,
    Int8Type, TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
    TimestampSecondType, UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use arrow_array::{Array, ArrayRef, BooleanArray, RecordBatch, RecordBatchReader};
use arrow_schema::{DataType, Field, Schema, SchemaRef, TimeUnit};
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};
use parquet::arrow::{ArrowWriter, ProjectionMask};
use parquet::basic::{Compression, ZstdLevel};
use parquet::errors::ParquetError;
use parquet::file::properties::WriterProperties;

use crate::io::format::ReadOptions;
use crate::io::record::{shown_names, ColumnRole, Entry, ReadError};
use crate::io::table::{Row, PAIR_COLUMNS};
use crate::io::time::format_time;

/// Rows per record batch read: small enough that a batch of long texts stays small.
const BATCH_ROWS: usize = 256;

/// Rows per record batch written.
const WRITE_BATCH_ROWS: usize = 8192;

/// The largest row group written, in bytes (estimated before compression): the writer holds
/// one row group in memory.
pub(crate) const ROW_GROUP_BYTES: usize = 64 << 20;

/// The values of one usable row, as read.
#[derive(Debug)]
struct RowValues {
    /// The id, as a string.
    pub id: String,
    /// The text.
    pub text: String,
    /// The time column's value, if one is read and the row has one.
    pub time: Option<String>,
    /// The other columns' values, empty where null.
    pub columns: Vec<String>,
}

/// A Parquet file that cannot be read at all.
fn unreadable(path: &str, message: impl Into<String>) -> ReadError {
    ReadError::Parquet {
        path: path.to_owned(),
        message: message.into(),
    }
}

/// The one-line message of a parquet error.
fn one_line(error: &ParquetError) -> String {
    let text = error.to_string();
    if let Some(codec) = text.strip_prefix("Disabled feature at compile time: ") {
        return format!(
            "its pages are compressed with {codec}, which megashingle does not read; \
             rewrite it with snappy, zstd, gzip or lz4"
        );
    }
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Opens `path` as a Parquet file, checking the `PAR1` marker at its start and end so that a
/// file of another kind, or one cut short, is named for what it is.
fn open(path: &Path, name: &str) -> Result<ParquetRecordBatchReaderBuilder<File>, ReadError> {
    let mut file = File::open(path).map_err(|source| ReadError::Open {
        path: name.to_owned(),
        source,
    })?;
    let io = |source| ReadError::Io {
        path: name.to_owned(),
        source,
    };
    let length = file.metadata().map_err(io)?.len();
    let mut head = [0u8; 4];
    let mut tail = [0u8; 4];
    if length >= 12 {
        file.read_exact(&mut head).map_err(io)?;
        file.seek(SeekFrom::End(-4)).map_err(io)?;
        file.read_exact(&mut tail).map_err(io)?;
        file.rewind().map_err(io)?;
    }
    if &head != b"PAR1" {
        return Err(unreadable(
            name,
            "not a Parquet file (it does not start with the PAR1 marker)",
        ));
    }
    if &tail != b"PAR1" {
        return Err(unreadable(
            name,
            "not a whole Parquet file (it does not end with the PAR1 marker: cut short?)",
        ));
    }
    ParquetRecordBatchReaderBuilder::try_new(file)
        .map_err(|e| unreadable(name, format!("damaged Parquet file: {}", one_line(&e))))
}

/// What kind of values a column holds, as far as reading it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    String,
    Binary,
    Integer,
    Float,
    Boolean,
    Time,
    Other,
}

fn kind_of(data_type: &DataType) -> Kind {
    match data_type {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => Kind::String,
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => Kind::Binary,
        DataType::Int8
        | DataType::Int16
        | DataType::Int32
        | DataType::Int64
        | DataType::UInt8
        | DataType::UInt16
        | DataType::UInt32
        | DataType::UInt64 => Kind::Integer,
        DataType::Float16 | DataType::Float32 | DataType::Float64 => Kind::Float,
        DataType::Boolean => Kind::Boolean,
        DataType::Timestamp(..) | DataType::Date32 | DataType::Date64 => Kind::Time,
        DataType::Dictionary(key, value) if key.is_integer() => kind_of(value),
        _ => Kind::Other,
    }
}

/// The kinds of values a column of `role` may hold, and how a message names them.
fn accepted(role: ColumnRole) -> (&'static [Kind], &'static str) {
    match role {
        ColumnRole::Id => (
            &[Kind::String, Kind::Binary, Kind::Integer],
            "strings or integers",
        ),
        ColumnRole::Text => (&[Kind::String, Kind::Binary], "strings"),
        ColumnRole::Time => (
            &[Kind::String, Kind::Binary, Kind::Time],
            "strings, timestamps or dates",
        ),
        ColumnRole::Extra => (
            &[
                Kind::String,
                Kind::Binary,
                Kind::Integer,
                Kind::Float,
                Kind::Boolean,
                Kind::Time,
            ],
            "strings, numbers, booleans, timestamps or dates",
        ),
    }
}

/// One column of a record batch, read value by value as text.
struct Values<'a> {
    name: &'a str,
    array: &'a dyn Array,
    /// For a dictionary column: each row's index into `array`, which holds the values.
    keys: Option<(Vec<usize>, &'a dyn Array)>,
}

impl<'a> Values<'a> {
    fn new(name: &'a str, array: &'a ArrayRef) -> Self {
        match array.as_any_dictionary_opt() {
            Some(dictionary) if !dictionary.values().is_empty() => Values {
                name,
                array: dictionary.values().as_ref(),
                keys: Some((dictionary.normalized_keys(), array.as_ref())),
            },
            _ => Values {
                name,
                array: array.as_ref(),
                keys: None,
            },
        }
    }

    /// Row `i`'s value: `None` when null, an error when it is not UTF-8.
    fn get(&self, i: usize) -> Result<Option<Cow<'a, str>>, String> {
        let i = match &self.keys {
            Some((_, rows)) if rows.is_null(i) => return Ok(None),
            Some((keys, _)) => keys[i],
            None if self.array.is_null(i) => return Ok(None),
            None => i,
        };
        if self.array.is_null(i) {
            return Ok(None);
        }
        let a = self.array;
        let bytes = |bytes: &'a [u8]| match simdutf8::basic::from_utf8(bytes) {
            Ok(text) => Ok(Some(Cow::Borrowed(text))),
            Err(_) => {
                let valid = std::str::from_utf8(bytes).map_or_else(|e| e.valid_up_to(), str::len);
                Err(format!(
                    "invalid UTF-8 in `{}` at byte {valid}; convert the file to UTF-8",
                    self.name
                ))
            }
        };
        let owned = |text: String| Ok(Some(Cow::Owned(text)));
        let seconds =
            |value: i64, per_second: i64| owned(format_time(value.div_euclid(per_second)));
        match a.data_type() {
            DataType::Utf8 => Ok(Some(Cow::Borrowed(a.as_string::<i32>().value(i)))),
            DataType::LargeUtf8 => Ok(Some(Cow::Borrowed(a.as_string::<i64>().value(i)))),
            DataType::Utf8View => Ok(Some(Cow::Borrowed(a.as_string_view().value(i)))),
            DataType::Binary => bytes(a.as_binary::<i32>().value(i)),
            DataType::LargeBinary => bytes(a.as_binary::<i64>().value(i)),
            DataType::BinaryView => bytes(a.as_binary_view().value(i)),
            DataType::Int8 => owned(a.as_primitive::<Int8Type>().value(i).to_string()),
            DataType::Int16 => owned(a.as_primitive::<Int16Type>().value(i).to_string()),
            DataType::Int32 => owned(a.as_primitive::<Int32Type>().value(i).to_string()),
            DataType::Int64 => owned(a.as_primitive::<Int64Type>().value(i).to_string()),
            DataType::UInt8 => owned(a.as_primitive::<UInt8Type>().value(i).to_string()),
            DataType::UInt16 => owned(a.as_primitive::<UInt16Type>().value(i).to_string()),
            DataType::UInt32 => owned(a.as_primitive::<UInt32Type>().value(i).to_string()),
            DataType::UInt64 => owned(a.as_primitive::<UInt64Type>().value(i).to_string()),
            DataType::Float16 => owned(a.as_primitive::<Float16Type>().value(i).to_string()),
            DataType::Float32 => owned(a.as_primitive::<Float32Type>().value(i).to_string()),
            DataType::Float64 => owned(a.as_primitive::<Float64Type>().value(i).to_string()),
            DataType::Boolean => owned(a.as_boolean().value(i).to_string()),
            DataType::Date32 => seconds(
                i64::from(a.as_primitive::<Date32Type>().value(i)) * 86_400,
                1,
            ),
            DataType::Date64 => seconds(a.as_primitive::<Date64Type>().value(i), 1000),
            DataType::Timestamp(TimeUnit::Second, _) => {
                seconds(a.as_primitive::<TimestampSecondType>().value(i), 1)
            }
            DataType::Timestamp(TimeUnit::Millisecond, _) => {
                seconds(a.as_primitive::<TimestampMillisecondType>().value(i), 1000)
            }
            DataType::Timestamp(TimeUnit::Microsecond, _) => seconds(
                a.as_primitive::<TimestampMicrosecondType>().value(i),
                1_000_000,
            ),
            DataType::Timestamp(TimeUnit::Nanosecond, _) => seconds(
                a.as_primitive::<TimestampNanosecondType>().value(i),
                1_000_000_000,
            ),
            other => Err(format!("`{}` holds {other} values", self.name)),
        }
    }
}

/// The rows of a Parquet file, pulled one at a time: each a record, or a report of a row that
/// cannot be used (a null id or text, a value that is not UTF-8). The rows of a record batch
/// are read together.
pub(crate) struct ParquetReader {
    reader: ParquetRecordBatchReader,
    source: Arc<str>,
    names: Vec<String>,
    /// The projected columns, in the file's order.
    roots: Vec<usize>,
    id_at: usize,
    text_at: usize,
    time_at: Option<usize>,
    columns_at: Vec<usize>,
    /// The rows of the batch read last, not yet given, each with its number (from 1).
    rows: VecDeque<(u64, Result<RowValues, String>)>,
    /// Rows read so far.
    number: u64,
    done: bool,
}

impl ParquetReader {
    /// Opens the Parquet file `path` (named `source` in messages) and finds the columns
    /// `options` ask for. A column asked for that is missing or holds values of a type that
    /// cannot be read as its role asks is a fatal error.
    pub fn open(
        path: &Path,
        source: Arc<str>,
        options: &ReadOptions,
    ) -> Result<ParquetReader, ReadError> {
        let name: &str = &source;
        let builder = open(path, name)?;
        let schema = Arc::clone(builder.schema());
        let names: Vec<String> = schema.fields().iter().map(|f| f.name().clone()).collect();
        let column =
            |column: &str, role: ColumnRole| -> Result<usize, ReadError> {
                let at = names.iter().position(|n| n == column).ok_or_else(|| {
                    ReadError::MissingColumn {
                        path: name.to_owned(),
                        kind: "column",
                        column: column.to_owned(),
                        role,
                        found: shown_names(&names),
                        delimiter: None,
                    }
                })?;
                let data_type = schema.field(at).data_type();
                let (kinds, expected) = accepted(role);
                if !kinds.contains(&kind_of(data_type)) {
                    return Err(ReadError::ColumnType {
                        path: name.to_owned(),
                        column: column.to_owned(),
                        role,
                        found: data_type.to_string(),
                        expected,
                    });
                }
                Ok(at)
            };
        let id_at = column(&options.id_column, ColumnRole::Id)?;
        let text_at = column(&options.text_column, ColumnRole::Text)?;
        let time_at = match &options.time_column {
            Some(time) => Some(column(time, ColumnRole::Time)?),
            None => None,
        };
        let columns_at = (options.columns.iter())
            .map(|c| column(c, ColumnRole::Extra))
            .collect::<Result<Vec<usize>, ReadError>>()?;
        // The projected batch holds the columns read in the file's order.
        let mut roots: Vec<usize> = [id_at, text_at]
            .into_iter()
            .chain(time_at)
            .chain(columns_at.iter().copied())
            .collect();
        roots.sort_unstable();
        roots.dedup();
        let mask = ProjectionMask::roots(builder.parquet_schema(), roots.iter().copied());
        let reader = builder
            .with_projection(mask)
            .with_batch_size(BATCH_ROWS)
            .build()
            .map_err(|e| unreadable(name, format!("damaged Parquet file: {}", one_line(&e))))?;
        Ok(ParquetReader {
            reader,
            source,
            names,
            roots,
            id_at,
            text_at,
            time_at,
            columns_at,
            rows: VecDeque::new(),
            number: 0,
            done: false,
        })
    }

    /// Reads the next record batch into `rows`; false at the end.
    fn read_batch(&mut self) -> Result<bool, ReadError> {
        let Some(batch) = self.reader.next() else {
            return Ok(false);
        };
        let batch = batch.map_err(|e| {
            unreadable(
                &self.source,
                format!(
                    "damaged Parquet file after row {}: {}",
                    self.number,
                    e.to_string()
                        .split_whitespace()
                        .collect::<Vec<_>>()
                        .join(" ")
                ),
            )
        })?;
        let projected = |at: usize| self.roots.binary_search(&at).expect("a projected column");
        let values = |at: usize| Values::new(&self.names[at], batch.column(projected(at)));
        let id = values(self.id_at);
        let text = values(self.text_at);
        let time = self.time_at.map(values);
        let columns: Vec<Values> = self.columns_at.iter().map(|&at| values(at)).collect();
        for i in 0..batch.num_rows() {
            self.number += 1;
            let row = row_values(i, &id, &text, time.as_ref(), &columns);
            self.rows.push_back((self.number, row));
        }
        Ok(true)
    }

    /// The next record or report, `None` at the end.
    fn next_entry(&mut self) -> Result<Option<Entry>, ReadError> {
        while self.rows.is_empty() {
            if self.done || !self.read_batch()? {
                self.done = true;
                return Ok(None);
            }
        }
        let (line, row) = self.rows.pop_front().expect("a row");
        let source = Arc::clone(&self.source);
        Ok(Some(match row {
            Ok(v) => Entry::Record {
                id: v.id,
                text: v.text,
                time: v.time,
                columns: v.columns,
                source,
                line,
            },
            Err(what) => Entry::Skipped { source, line, what },
        }))
    }
}

impl Iterator for ParquetReader {
    type Item = Result<Entry, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        let entry = self.next_entry().transpose();
        if matches!(entry, Some(Err(_))) {
            self.done = true;
            self.rows.clear();
        }
        entry
    }
}

/// The values of row `i`, or why the row cannot be used.
fn row_values(
    i: usize,
    id: &Values,
    text: &Values,
    time: Option<&Values>,
    columns: &[Values],
) -> Result<RowValues, String> {
    let Some(id_value) = id.get(i)? else {
        return Err(format!(
            "null id in `{}`; every record needs an id",
            id.name
        ));
    };
    let Some(text_value) = text.get(i)? else {
        return Err(format!("null text in `{}`", text.name));
    };
    let time = match time {
        Some(time) => time.get(i)?.map(Cow::into_owned),
        None => None,
    };
    let columns = columns
        .iter()
        .map(|c| c.get(i).map(|v| v.map(Cow::into_owned).unwrap_or_default()))
        .collect::<Result<Vec<String>, String>>()?;
    Ok(RowValues {
        id: id_value.into_owned(),
        text: text_value.into_owned(),
        time,
        columns,
    })
}

/// The properties of every file written: zstd pages, row groups of at most
/// [`ROW_GROUP_BYTES`], and megashingle named as the writer.
fn writer_properties() -> WriterProperties {
    WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .set_max_row_group_bytes(Some(ROW_GROUP_BYTES))
        .set_created_by(format!("megashingle {}", env!("CARGO_PKG_VERSION")))
        .build()
}

fn io_error(error: ParquetError) -> std::io::Error {
    match error {
        ParquetError::External(e) => match e.downcast::<std::io::Error>() {
            Ok(e) => *e,
            Err(e) => std::io::Error::other(e),
        },
        e => std::io::Error::other(e),
    }
}

/// The schema of the cluster table: doc_id, cluster_id (strings), cluster_size (64-bit
/// integer), similarity (double, null for a document not compared), status (string).
pub(crate) fn cluster_table_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("doc_id", DataType::Utf8, false),
        Field::new("cluster_id", DataType::Utf8, false),
        Field::new("cluster_size", DataType::Int64, false),
        Field::new("similarity", DataType::Float64, true),
        Field::new("status", DataType::Utf8, false),
    ]))
}

/// Writes the cluster table as Parquet (see `cluster_table_schema`); similarities are
/// rounded to four decimals, as in the CSV and JSONL tables.
pub fn write_rows<'a>(
    rows: impl IntoIterator<Item = Row<'a>>,
    out: impl Write + Send,
) -> std::io::Result<()> {
    use arrow_array::builder::{Float64Builder, Int64Builder, StringBuilder};
    let schema = cluster_table_schema();
    let mut writer = ArrowWriter::try_new(out, Arc::clone(&schema), Some(writer_properties()))
        .map_err(io_error)?;
    let mut rows = rows.into_iter().peekable();
    while rows.peek().is_some() {
        let mut doc_id = StringBuilder::new();
        let mut cluster_id = StringBuilder::new();
        let mut cluster_size = Int64Builder::new();
        let mut similarity = Float64Builder::new();
        let mut status = StringBuilder::new();
        for row in rows.by_ref().take(WRITE_BATCH_ROWS) {
            doc_id.append_value(row.doc_id);
            cluster_id.append_value(row.cluster_id);
            cluster_size.append_value(i64::try_from(row.cluster_size).unwrap_or(i64::MAX));
            similarity.append_option(row.similarity.map(|s| (s * 1e4).round() / 1e4));
            status.append_value(row.status);
        }
        let columns: Vec<ArrayRef> = vec![
            Arc::new(doc_id.finish()),
            Arc::new(cluster_id.finish()),
            Arc::new(cluster_size.finish()),
            Arc::new(similarity.finish()),
            Arc::new(status.finish()),
        ];
        let batch =
            RecordBatch::try_new(Arc::clone(&schema), columns).map_err(std::io::Error::other)?;
        writer.write(&batch).map_err(io_error)?;
    }
    writer.into_inner().map_err(io_error)?.flush()
}

/// The schema of the reuse table: doc_a, doc_b (strings), a_in_b, b_in_a (doubles),
/// shared_words, passages, longest (64-bit integers), jaccard (double).
pub(crate) fn pair_table_schema() -> SchemaRef {
    let [a, b, a_in_b, b_in_a, shared, passages, longest, jaccard] = PAIR_COLUMNS;
    Arc::new(Schema::new(vec![
        Field::new(a, DataType::Utf8, false),
        Field::new(b, DataType::Utf8, false),
        Field::new(a_in_b, DataType::Float64, false),
        Field::new(b_in_a, DataType::Float64, false),
        Field::new(shared, DataType::Int64, false),
        Field::new(passages, DataType::Int64, false),
        Field::new(longest, DataType::Int64, false),
        Field::new(jaccard, DataType::Float64, false),
    ]))
}

/// Writes the reuse table as Parquet (see `pair_table_schema`), the values as given.
pub fn write_pairs<'a>(
    rows: impl IntoIterator<Item = crate::ReusePair<'a>>,
    out: impl Write + Send,
) -> std::io::Result<()> {
    use arrow_array::builder::{Float64Builder, Int64Builder, StringBuilder};
    let schema = pair_table_schema();
    let mut writer = ArrowWriter::try_new(out, Arc::clone(&schema), Some(writer_properties()))
        .map_err(io_error)?;
    let mut rows = rows.into_iter().peekable();
    while rows.peek().is_some() {
        let (mut a, mut b) = (StringBuilder::new(), StringBuilder::new());
        let (mut a_in_b, mut b_in_a, mut jaccard) = (
            Float64Builder::new(),
            Float64Builder::new(),
            Float64Builder::new(),
        );
        let (mut shared, mut passages, mut longest) = (
            Int64Builder::new(),
            Int64Builder::new(),
            Int64Builder::new(),
        );
        for p in rows.by_ref().take(WRITE_BATCH_ROWS) {
            a.append_value(p.doc_a);
            b.append_value(p.doc_b);
            a_in_b.append_value(p.a_in_b);
            b_in_a.append_value(p.b_in_a);
            shared.append_value(i64::from(p.shared_words));
            passages.append_value(i64::from(p.passages));
            longest.append_value(i64::from(p.longest));
            jaccard.append_value(p.jaccard);
        }
        let columns: Vec<ArrayRef> = vec![
            Arc::new(a.finish()),
            Arc::new(b.finish()),
            Arc::new(a_in_b.finish()),
            Arc::new(b_in_a.finish()),
            Arc::new(shared.finish()),
            Arc::new(passages.finish()),
            Arc::new(longest.finish()),
            Arc::new(jaccard.finish()),
        ];
        let batch =
            RecordBatch::try_new(Arc::clone(&schema), columns).map_err(std::io::Error::other)?;
        writer.write(&batch).map_err(io_error)?;
    }
    writer.into_inner().map_err(io_error)?.flush()
}

/// The arrow schema of a Parquet file (its columns and their types).
pub fn schema_of(path: &Path) -> Result<SchemaRef, ReadError> {
    Ok(Arc::clone(
        open(path, &path.display().to_string())?.schema(),
    ))
}

/// Copies the rows of the Parquet files `inputs` whose numbers (from 1, by input) are in `kept`
/// (sorted) to one Parquet file written to `out`, every column as it was, with the schema of
/// the first input.
pub fn copy_rows(
    inputs: &[PathBuf],
    kept: &[Vec<u64>],
    out: impl Write + Send,
) -> std::io::Result<()> {
    let mut writer: Option<ArrowWriter<_>> = None;
    let mut out = Some(out);
    for (input, kept) in inputs.iter().zip(kept) {
        let name = input.display().to_string();
        let reader: ParquetRecordBatchReader = open(input, &name)
            .and_then(|b| {
                b.with_batch_size(BATCH_ROWS).build().map_err(|e| {
                    unreadable(&name, format!("damaged Parquet file: {}", one_line(&e)))
                })
            })
            .map_err(std::io::Error::other)?;
        if writer.is_none() {
            let out = out.take().expect("one writer");
            writer = Some(
                ArrowWriter::try_new(out, reader.schema(), Some(writer_properties()))
                    .map_err(io_error)?,
            );
        }
        let writer = writer.as_mut().expect("made above");
        let mut number = 0u64;
        let mut next = 0usize;
        for batch in reader {
            let batch = batch.map_err(|e| {
                std::io::Error::other(format!(
                    "{name}: damaged Parquet file after row {number}: {e}"
                ))
            })?;
            let mask: BooleanArray = (0..batch.num_rows())
                .map(|_| {
                    number += 1;
                    while next < kept.len() && kept[next] < number {
                        next += 1;
                    }
                    Some(next < kept.len() && kept[next] == number)
                })
                .collect();
            let batch = arrow_select::filter::filter_record_batch(&batch, &mask)
                .map_err(std::io::Error::other)?;
            if batch.num_rows() > 0 {
                writer.write(&batch).map_err(io_error)?;
            }
        }
    }
    match writer {
        Some(writer) => writer.into_inner().map_err(io_error)?.flush(),
        None => Ok(()),
    }
}

/// A Parquet table of string columns written record by record (CSV records, for one): each
/// field's bytes as UTF-8 (an invalid sequence replaced by U+FFFD), in batches of at most
/// 8192 rows or about 32 MiB.
pub struct StringTable<W: Write + Send> {
    writer: ArrowWriter<W>,
    schema: SchemaRef,
    columns: Vec<arrow_array::builder::StringBuilder>,
    rows: usize,
    bytes: usize,
}

impl<W: Write + Send> StringTable<W> {
    /// Bytes of fields held before a batch is written.
    const BATCH_BYTES: usize = 32 << 20;

    /// A table with the columns `header`, written to `out`.
    pub fn new(out: W, header: &[String]) -> std::io::Result<Self> {
        let fields: Vec<Field> = header
            .iter()
            .map(|name| Field::new(name, DataType::Utf8, false))
            .collect();
        let schema = Arc::new(Schema::new(fields));
        let writer = ArrowWriter::try_new(out, Arc::clone(&schema), Some(writer_properties()))
            .map_err(io_error)?;
        let columns = header
            .iter()
            .map(|_| arrow_array::builder::StringBuilder::new())
            .collect();
        Ok(StringTable {
            writer,
            schema,
            columns,
            rows: 0,
            bytes: 0,
        })
    }

    /// Adds a row: one field per column (missing fields are empty, extra ones left out).
    pub fn push<'f>(&mut self, fields: impl IntoIterator<Item = &'f [u8]>) -> std::io::Result<()> {
        let mut fields = fields.into_iter();
        for column in &mut self.columns {
            let field = fields.next().unwrap_or_default();
            self.bytes += field.len();
            column.append_value(String::from_utf8_lossy(field));
        }
        self.rows += 1;
        if self.rows >= WRITE_BATCH_ROWS || self.bytes >= Self::BATCH_BYTES {
            self.write_batch()?;
        }
        Ok(())
    }

    fn write_batch(&mut self) -> std::io::Result<()> {
        if self.rows == 0 {
            return Ok(());
        }
        let columns: Vec<ArrayRef> = self
            .columns
            .iter_mut()
            .map(|c| Arc::new(c.finish()) as ArrayRef)
            .collect();
        let batch = RecordBatch::try_new(Arc::clone(&self.schema), columns)
            .map_err(std::io::Error::other)?;
        self.writer.write(&batch).map_err(io_error)?;
        self.rows = 0;
        self.bytes = 0;
        Ok(())
    }

    /// Writes what is left and the file's footer; the output back.
    pub fn finish(mut self) -> std::io::Result<W> {
        self.write_batch()?;
        self.writer.into_inner().map_err(io_error)
    }
}
