//! JSONL, both directions. Read: one JSON object a line (`JsonlReader`, pulled record by
//! record); blank lines are passed over, a line that is not an object with the id and text
//! fields is reported with its line and skipped, but a first object without them is fatal (the
//! fields are misnamed). Written: the cluster table and the reuse table, an object a line.

use std::io::{BufRead, Write};
use std::sync::Arc;

use crate::io::format::ReadOptions;
use crate::io::record::{shown_names, utf8, ColumnRole, Entry, ReadError, LONG_TEXT_BYTES};
use crate::io::table::Row;

/// The records of a JSONL input, pulled one at a time.
pub(crate) struct JsonlReader<R> {
    input: R,
    source: Arc<str>,
    line: Vec<u8>,
    number: u64,
    seen_object: bool,
    id_field: String,
    text_field: String,
    time_field: Option<String>,
    columns: Vec<String>,
}

impl<R: BufRead> JsonlReader<R> {
    /// A reader of `input` (named `source` in messages) for the fields `options` ask for.
    pub fn new(input: R, source: Arc<str>, options: &ReadOptions) -> JsonlReader<R> {
        JsonlReader {
            input,
            source,
            line: Vec::new(),
            number: 0,
            seen_object: false,
            id_field: options.id_column.clone(),
            text_field: options.text_column.clone(),
            time_field: options.time_column.clone(),
            columns: options.columns.clone(),
        }
    }

    /// The next record or report, `None` at the end.
    fn next_entry(&mut self) -> Result<Option<Entry>, ReadError> {
        loop {
            if self.line.capacity() >= LONG_TEXT_BYTES {
                // The text of a long line is read; its buffer is not kept for short ones.
                self.line = Vec::new();
            }
            self.line.clear();
            let n = read_line(&mut self.input, &mut self.line).map_err(|e| ReadError::Io {
                path: self.source.to_string(),
                source: e,
            })?;
            if n == 0 {
                return Ok(None);
            }
            self.number += 1;
            if self.number == 1 && self.line.starts_with(b"\xEF\xBB\xBF") {
                self.line.drain(..3);
            }
            if self.line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            return self.entry_of_line().map(Some);
        }
    }

    /// The record or report of the line just read.
    fn entry_of_line(&mut self) -> Result<Entry, ReadError> {
        let skipped = |what: String| Entry::Skipped {
            source: Arc::clone(&self.source),
            line: self.number,
            what,
        };
        let text = match utf8(&self.line) {
            Ok(text) => text,
            Err(valid_up_to) => {
                return Ok(skipped(format!(
                    "invalid UTF-8 at byte {valid_up_to}; convert the file to UTF-8"
                )))
            }
        };
        let mut object = match serde_json::from_str::<serde_json::Value>(text) {
            Ok(serde_json::Value::Object(object)) => object,
            Ok(_) => return Ok(skipped("malformed JSON record: not an object".into())),
            Err(e) => return Ok(skipped(format!("malformed JSON record: {e}"))),
        };
        let first = !self.seen_object;
        self.seen_object = true;
        let fields = [
            (&self.id_field, ColumnRole::Id),
            (&self.text_field, ColumnRole::Text),
        ];
        if let Some(&(missing, role)) = fields.iter().find(|(f, _)| !object.contains_key(*f)) {
            if first {
                return Err(ReadError::MissingColumn {
                    path: self.source.to_string(),
                    kind: "field",
                    column: missing.to_string(),
                    role,
                    found: shown_names(&object.keys().cloned().collect::<Vec<_>>()),
                    delimiter: None,
                });
            }
            return Ok(skipped(format!(
                "malformed JSON record: no field `{missing}`"
            )));
        }
        let id = match &object[&self.id_field] {
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Number(n) => n.to_string(),
            _ => {
                return Ok(skipped(format!(
                    "malformed JSON record: `{}` is not a string or number",
                    self.id_field
                )))
            }
        };
        let time = match self.time_field.as_ref().and_then(|f| object.get(f)) {
            Some(serde_json::Value::String(s)) => Some(s.clone()),
            Some(serde_json::Value::Number(n)) => Some(n.to_string()),
            _ => None,
        };
        let columns = (self.columns.iter())
            .map(|name| match object.get(name) {
                None | Some(serde_json::Value::Null) => String::new(),
                Some(serde_json::Value::String(s)) => s.clone(),
                Some(other) => other.to_string(),
            })
            .collect();
        let Some(serde_json::Value::String(text)) = object.remove(&self.text_field) else {
            return Ok(skipped(format!(
                "malformed JSON record: `{}` is not a string",
                self.text_field
            )));
        };
        Ok(Entry::Record {
            id,
            text,
            time,
            columns,
            source: Arc::clone(&self.source),
            line: self.number,
        })
    }
}

impl<R: BufRead> Iterator for JsonlReader<R> {
    type Item = Result<Entry, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_entry().transpose()
    }
}

/// Appends the next line of `input` to `line`, its `\n` included; the number of bytes appended,
/// 0 at the end. `BufRead::read_until` does the same, searching without SIMD.
pub(crate) fn read_line(input: &mut impl BufRead, line: &mut Vec<u8>) -> std::io::Result<usize> {
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

/// Writes the cluster table as JSONL, similarities to four decimals.
pub fn write_rows<'a>(
    rows: impl IntoIterator<Item = Row<'a>>,
    out: &mut impl Write,
) -> std::io::Result<()> {
    for row in rows {
        let row = Row {
            similarity: row.similarity.map(|s| (s * 1e4).round() / 1e4),
            ..row
        };
        serde_json::to_writer(&mut *out, &row)?;
        out.write_all(b"\n")?;
    }
    Ok(())
}

/// Writes the reuse table as JSONL (its shares rounded by the caller).
pub fn write_pairs<'a>(
    pairs: impl IntoIterator<Item = crate::ReusePair<'a>>,
    out: &mut impl Write,
) -> std::io::Result<()> {
    for p in pairs {
        serde_json::to_writer(&mut *out, &p)?;
        out.write_all(b"\n")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
