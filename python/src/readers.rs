//! `megashingle.RecordReader`: record and document files read with the command's readers on a
//! thread of its own, in batches of numpy buffers (the Spark job reads its inputs through it on
//! the executors), what a file is read as, from the library's one table of formats
//! (`detect_format`), and times written as the readers parse them (`parse_times`), for the
//! time columns the Spark job reads through Spark's own readers.

use std::path::PathBuf;

use numpy::IntoPyArray;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use megashingle::io::format::{Format, ReadOptions};

use crate::errors;

/// What the reading thread of a [`PyRecordReader`] sends.
enum ReadMessage {
    /// Records read: (file position, whether the record is named by its file alone, record),
    /// in reading order.
    Batch(Vec<(usize, bool, megashingle::io::read::Record)>),
    /// A record reported and skipped.
    Warning(String),
    /// The end: an error that made an input unreadable, if any.
    Done(Option<megashingle::io::read::ReadError>),
}

/// Reads record and document files with the command's readers, on a thread of its own, in
/// batches: the Spark job reads its inputs through it on the executors.
#[pyclass(name = "RecordReader", module = "megashingle", unsendable)]
pub struct PyRecordReader {
    receiver: std::sync::Mutex<std::sync::mpsc::Receiver<ReadMessage>>,
    warnings: Vec<String>,
    done: bool,
}

#[pymethods]
impl PyRecordReader {
    /// `files`: (path, id) pairs; an id names a file found in a folder (its path relative to
    /// the folder), read as the command reads that folder: a document's id, an archive's
    /// (mbox, WARC) documents their own; None reads the file as the command reads a file given
    /// by name. `keep` (stride, part): keep the records whose serial number modulo `stride` is
    /// `part`. `time_column`: the column or field of each record's time, read as the command's
    /// `--time-column` reads it (a record whose time is not a date is reported and skipped).
    #[new]
    #[pyo3(signature = (files, id_column="id", text_column="text", input_format=None, stride=1, part=0, batch_bytes=16 << 20, time_column=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        files: Vec<(String, Option<String>)>,
        id_column: &str,
        text_column: &str,
        input_format: Option<&str>,
        stride: u64,
        part: u64,
        batch_bytes: usize,
        time_column: Option<String>,
    ) -> PyResult<PyRecordReader> {
        use megashingle::io::read::{read_folder_file, read_inputs, ReadItem, ReadOptions};
        let format = match input_format {
            None => None,
            Some(name @ ("csv" | "jsonl")) => Format::of_label(name),
            Some(other) => {
                return Err(errors::input(format!(
                    "input format {other}: expected csv or jsonl"
                )))
            }
        };
        let options = ReadOptions {
            id_column: id_column.to_owned(),
            text_column: text_column.to_owned(),
            time_column,
            format,
            ..ReadOptions::default()
        };
        let stride = stride.max(1);
        let (sender, receiver) = std::sync::mpsc::sync_channel(2);
        std::thread::spawn(move || {
            let mut batch = Vec::new();
            let mut bytes = 0usize;
            let mut failed = None;
            // Reading stops when the reader is dropped: a send fails, and the loop ends.
            'files: for (position, (path, id)) in files.iter().enumerate() {
                let inputs = [PathBuf::from(path)];
                let records = match id {
                    Some(id) => read_folder_file(&inputs[0], id, &options),
                    None => read_inputs(&inputs, &options),
                };
                for item in records {
                    let record = match item {
                        Ok(ReadItem::Record(record)) => record,
                        Ok(ReadItem::Skipped(message)) => {
                            if sender.send(ReadMessage::Warning(message)).is_err() {
                                return;
                            }
                            continue;
                        }
                        Err(e) => {
                            failed = Some(e);
                            break 'files;
                        }
                    };
                    if (record.origin.order.1 - 1) % stride != part {
                        continue;
                    }
                    bytes += record.text.len() + record.id.len();
                    batch.push((position, path.as_str() == &*record.origin.source, record));
                    if bytes >= batch_bytes {
                        bytes = 0;
                        let full = std::mem::take(&mut batch);
                        if sender.send(ReadMessage::Batch(full)).is_err() {
                            return;
                        }
                    }
                }
            }
            if !batch.is_empty() {
                let _ = sender.send(ReadMessage::Batch(batch));
            }
            let _ = sender.send(ReadMessage::Done(failed));
        });
        Ok(PyRecordReader {
            receiver: std::sync::Mutex::new(receiver),
            warnings: Vec::new(),
            done: false,
        })
    }

    /// The next batch as a dict of numpy arrays: `file` (position in `files`), `serial`
    /// (the record's number in its file, counting skipped ones), `line`, `dated` (the time of
    /// a record of which the newest of one id is kept, a WARC record's `WARC-Date`, in seconds;
    /// the least int64 for others), `time` (the record's time from `time_column`, in seconds;
    /// the least int64 for a record without one), and ids, texts and `at` (where a record of an archive is,
    /// as messages name it: `crawl.warc.gz@1234`, `list.mbox#3`; empty for a record named by
    /// its file and line) each as `*_offsets` (int64) and `*_data` (uint8, UTF-8); None at the
    /// end. Raises
    /// InputError with the command's message when an input cannot be used, OSError when it
    /// cannot be read.
    fn next_batch<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        if self.done {
            return Ok(None);
        }
        loop {
            let receiver = &self.receiver;
            let message = py.allow_threads(|| {
                receiver
                    .lock()
                    .map_err(|_| std::sync::mpsc::RecvError)
                    .and_then(|r| r.recv())
            });
            match message {
                Err(_) => {
                    self.done = true;
                    return Err(errors::MegashingleError::new_err(
                        "the reading thread stopped",
                    ));
                }
                Ok(ReadMessage::Warning(w)) => self.warnings.push(w),
                Ok(ReadMessage::Done(None)) => {
                    self.done = true;
                    return Ok(None);
                }
                Ok(ReadMessage::Done(Some(error))) => {
                    self.done = true;
                    return Err(errors::read_error(&error, error.to_string()));
                }
                Ok(ReadMessage::Batch(records)) => {
                    return batch_dict(py, &records).map(Some);
                }
            }
        }
    }

    /// The one-line reports of the records skipped so far.
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
}

/// A batch of records as [`PyRecordReader::next_batch`] gives it.
fn batch_dict<'py>(
    py: Python<'py>,
    records: &[(usize, bool, megashingle::io::read::Record)],
) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    let numbers = |of: &dyn Fn(&megashingle::io::read::Record) -> i64| -> Vec<i64> {
        records.iter().map(|(_, _, r)| of(r)).collect()
    };
    let file: Vec<i64> = records.iter().map(|(f, _, _)| *f as i64).collect();
    out.set_item("file", file.into_pyarray(py))?;
    out.set_item(
        "serial",
        numbers(&|r| r.origin.order.1 as i64).into_pyarray(py),
    )?;
    out.set_item("line", numbers(&|r| r.origin.line as i64).into_pyarray(py))?;
    let dated = numbers(&|r| r.origin.dated.unwrap_or(i64::MIN));
    out.set_item("dated", dated.into_pyarray(py))?;
    let time = numbers(&|r| r.time.unwrap_or(i64::MIN));
    out.set_item("time", time.into_pyarray(py))?;
    for name in ["id", "text", "at"] {
        let mut offsets = Vec::with_capacity(records.len() + 1);
        offsets.push(0i64);
        let mut data = Vec::new();
        for (_, by_file, r) in records {
            let value = match name {
                "id" => r.id.as_str(),
                "text" => r.text.as_str(),
                _ if *by_file => "",
                _ => &*r.origin.source,
            };
            data.extend_from_slice(value.as_bytes());
            offsets.push(data.len() as i64);
        }
        out.set_item(format!("{name}_offsets"), offsets.into_pyarray(py))?;
        out.set_item(format!("{name}_data"), data.into_pyarray(py))?;
    }
    Ok(out)
}

/// What a file is read as, by the library's one table of formats: `(format, delimiter)`, where
/// `format` is `"csv"`, `"jsonl"`, `"parquet"`, `"text"`, `"html"`, `"mail"`, `"mbox"` or
/// `"warc"`, or `"records"` for a local record file whose first bytes tell JSONL from CSV, and
/// `delimiter` the byte between the fields of CSV (a tab for `.tsv`). In a folder (`in_folder`),
/// None for a file left out. With `remote`, the file is not opened: its format by its name
/// alone, None when the name tells nothing.
#[pyfunction]
#[pyo3(signature = (path, input_format=None, in_folder=false, remote=false))]
pub fn detect_format(
    path: PathBuf,
    input_format: Option<&str>,
    in_folder: bool,
    remote: bool,
) -> PyResult<Option<(&'static str, char)>> {
    let options = ReadOptions {
        format: input_format_named(input_format)?,
        ..ReadOptions::default()
    };
    if in_folder {
        let delimiter = char::from(options.delimiter_for(""));
        return Ok(Format::in_folder(&path).map(|format| (format.label(), delimiter)));
    }
    let read_error = |e: megashingle::io::read::ReadError| errors::read_error(&e, e.to_string());
    let detection = if remote {
        Format::detect_by_name(&path, &options).map_err(read_error)?
    } else {
        Format::detect(&path, &options).map_err(read_error)?
    };
    let delimiter = char::from(detection.delimiter);
    Ok(match detection.format {
        Some(format) => Some((format.label(), delimiter)),
        None if remote => None,
        None => Some(("records", delimiter)),
    })
}

/// Each of `texts` as the command reads a time column (the library's `parse_time`: RFC 3339,
/// or a date or date-time without an offset taken as UTC): seconds since 1970 (int64; the least
/// int64 for a missing or blank value, a record without a time, and for text that is not a
/// time), and which are not a time (bool: records the command reports and skips).
#[pyfunction]
pub fn parse_times<'py>(
    py: Python<'py>,
    texts: Vec<Option<String>>,
) -> PyResult<Bound<'py, PyTuple>> {
    use megashingle::io::time::parse_time;
    let mut seconds = Vec::with_capacity(texts.len());
    let mut wrong = Vec::with_capacity(texts.len());
    for text in &texts {
        let text = text.as_deref().map(str::trim).filter(|t| !t.is_empty());
        let parsed = text.and_then(parse_time);
        seconds.push(parsed.unwrap_or(i64::MIN));
        wrong.push(text.is_some() && parsed.is_none());
    }
    PyTuple::new(
        py,
        [
            seconds.into_pyarray(py).into_any(),
            wrong.into_pyarray(py).into_any(),
        ],
    )
}

/// An input format named in Python.
fn input_format_named(name: Option<&str>) -> PyResult<Option<Format>> {
    match name {
        None => Ok(None),
        Some(name @ ("csv" | "jsonl" | "parquet")) => Ok(Format::of_label(name)),
        Some(other) => Err(errors::input(format!(
            "input format {other}: expected csv, jsonl or parquet"
        ))),
    }
}
