//! CSV records read fast and exactly as the `csv` crate reads them: a field that starts with a
//! quote runs to its closing quote (`""` inside is one quote), any other field runs to the next
//! delimiter (a comma, unless another byte is given: `;`, a tab) or line break, quotes and all; a record ends at `\n`, `\r\n` or `\r`, and empty lines
//! are skipped. Well-formed fields are found with memchr, many bytes at a time. A record with
//! anything else in it (text after a closing quote, a quote never closed) is parsed whole by
//! `csv-core`, the `csv` crate's own state machine, so every input gives the records `csv` gives
//! (a byte order mark at the start is skipped, as `csv` does).
//! Each record comes with the line it starts on.
//!
//! One exception: a quote that is never closed. `csv` reads a quoted field still open at the
//! end of the input as text, and a stray quote (`d1,"oops` with no closing quote) takes in
//! every line after it until some later quote closes it, so records vanish into one text
//! without a word. Once the file's `RecordShape` is known (after its header), such a field is
//! marked on its record as a `RunawayQuote`:
//!
//! - a quoted field still open at the end of the input, always;
//! - a quoted field that spans lines and is malformed (text follows its closing quote, as when
//!   the stray quote is closed by the opening quote of a later record, or its record has a
//!   field count other than the header's) when the lines it takes in after its opening line
//!   look like records of the file: at least one, and at least half of the non-blank ones,
//!   read alone, have the header's number of fields and an id without spaces shaped like the
//!   record's own id (the same kinds of characters: letters, digits, and the same punctuation
//!   in the same order, so `d1`, `d17` and `x9` match, `However` or `1989` do not match `d1`).
//!
//! A well-formed quoted field (closed by a quote followed by a comma or a line break) is never
//! marked, however many lines it has and whatever they hold: an HTML page or a table of
//! `id,value` lines in a cell is read as it is. When the lines a marked field took in look like
//! records, reading resumes on the line after the one where the quote opened, so those records
//! are read on their own; otherwise they stay in the marked record, which the caller skips.

use std::io::Read;

use memchr::{memchr, memchr3};

/// Bytes read from the input at a time (the buffer grows for a longer record).
const BUFFER_BYTES: usize = 1 << 20;

/// One record: its fields' bytes back to back, where each ends, and its first line.
#[derive(Debug, Default, Clone)]
pub struct CsvRecord {
    bytes: Vec<u8>,
    ends: Vec<usize>,
    line: u64,
    runaway: Option<Box<RunawayQuote>>,
}

/// What a record of the input looks like, known once its header has been read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RecordShape {
    /// Fields per record (those of the header).
    pub fields: usize,
    /// The id's field (0-based).
    pub(crate) id_at: usize,
}

/// A quoted field that is never closed, or that took in lines that read as records of their
/// own (see the module documentation for the rule).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RunawayQuote {
    /// The line where the quote opened.
    pub opened: u64,
    /// The line of the quote that closed the field; `None` when it is still open at the end of
    /// the input.
    pub closed: Option<u64>,
    /// The lines the field took in after its opening line: from the next line to the last one
    /// with text; `None` when it took in none.
    pub(crate) swallowed: Option<(u64, u64)>,
    /// How many of these lines have text.
    pub lines: u64,
    /// How many of them read as records of the input.
    pub records: u64,
    /// The ids of the first two such records and of the last.
    pub(crate) first_ids: Vec<String>,
    /// The id of the last such record.
    pub(crate) last_id: Option<String>,
    /// Reading resumed on the line after `opened`: the lines the field took in are read again
    /// as records of their own. When `false`, they are part of this record.
    pub(crate) resumed: bool,
}

impl CsvRecord {
    /// Number of fields.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// True for a record without fields (never returned by [`CsvRecords::read`]).
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Field `i` (0-based).
    pub fn get(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.bytes[start..self.ends[i]]
    }

    /// The fields in order.
    pub fn iter(&self) -> impl Iterator<Item = &[u8]> {
        (0..self.len()).map(|i| self.get(i))
    }

    /// Field `i`'s bytes, taken out of the record, which is left without fields: a long field
    /// is moved rather than copied, and its buffer goes with it.
    pub(crate) fn take_field(&mut self, i: usize) -> Vec<u8> {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        let mut bytes = std::mem::take(&mut self.bytes);
        bytes.truncate(self.ends[i]);
        bytes.drain(..start);
        self.ends.clear();
        bytes
    }

    /// The line (from 1) where the record starts.
    pub fn line(&self) -> u64 {
        self.line
    }

    /// The quote that never closes in this record, if any: such a record is cut and must not
    /// be used as it is.
    pub(crate) fn runaway(&self) -> Option<&RunawayQuote> {
        self.runaway.as_deref()
    }

    fn clear(&mut self) {
        self.bytes.clear();
        self.ends.clear();
        self.runaway = None;
    }

    fn end_field(&mut self) {
        self.ends.push(self.bytes.len());
    }
}

/// What the fast parser made of the bytes at the start of a record.
enum Fast {
    /// A record, ending before the given offset (its terminator, if any, is left).
    Record(usize),
    /// The buffer ends inside the record.
    NeedMore,
    /// Something only `csv-core` reads right.
    Unusual,
}

/// Reads the records of a CSV input, the header row first; a UTF-8 byte order mark at the
/// start is skipped.
pub struct CsvRecords<R> {
    input: R,
    buffer: Vec<u8>,
    /// Where the unread bytes start in `buffer`.
    start: usize,
    /// Where the bytes read from the input end in `buffer`.
    end: usize,
    /// The input has no more bytes.
    eof: bool,
    /// Line breaks before `start`.
    lines: u64,
    /// The parser of unusual records (building one builds its state machine's tables).
    parser: csv_core::Reader,
    /// Bytes read from the input so far.
    total: u64,
    /// The shape of the records, once the caller has read the header.
    shape: Option<RecordShape>,
    /// The byte between fields.
    delimiter: u8,
}

impl<R: Read> CsvRecords<R> {
    /// A reader of `input`, whose fields are separated by commas.
    pub fn new(input: R) -> Self {
        Self::with_delimiter(input, b',')
    }

    /// A reader of `input`, whose fields are separated by `delimiter` (`b';'`, `b'\t'`).
    pub fn with_delimiter(input: R, delimiter: u8) -> Self {
        CsvRecords {
            input,
            buffer: vec![0; BUFFER_BYTES],
            start: 0,
            end: 0,
            eof: false,
            lines: 0,
            total: 0,
            parser: csv_core::ReaderBuilder::new().delimiter(delimiter).build(),
            shape: None,
            delimiter,
        }
    }

    /// Tells the reader what a record looks like (the header's field count and the id's
    /// field), so that it can tell lines swallowed by an unterminated quote.
    pub(crate) fn expect_shape(&mut self, shape: RecordShape) {
        self.shape = Some(shape);
    }

    /// Reads the next record into `record`; `false` at the end of the input.
    pub fn read(&mut self, record: &mut CsvRecord) -> std::io::Result<bool> {
        loop {
            let unread = &self.buffer[self.start..self.end];
            let blank = unread
                .iter()
                .position(|&b| b != b'\n' && b != b'\r')
                .unwrap_or(unread.len());
            self.consume(blank);
            if self.start == self.end {
                if self.eof {
                    return Ok(false);
                }
                self.fill()?;
                continue;
            }
            let unread = &self.buffer[self.start..self.end];
            let parsed = fast_record(unread, self.eof, self.delimiter, record);
            let (length, unusual) = match parsed {
                Fast::Record(length) => (length, false),
                Fast::NeedMore => {
                    self.fill()?;
                    continue;
                }
                Fast::Unusual => match self.exact_record(record)? {
                    Some(length) => (length, true),
                    None => continue,
                },
            };
            record.line = self.lines + 1;
            // Only a record read by `csv-core` or one of the wrong width can hold a runaway
            // quote: a well-formed record of the right width never does.
            let suspect = unusual || self.shape.is_some_and(|shape| shape.fields != record.len());
            let consumed = if suspect {
                let bytes = &self.buffer[self.start..self.start + length];
                check_quotes(bytes, self.shape, self.delimiter, record).unwrap_or(length)
            } else {
                length
            };
            self.consume(consumed);
            return Ok(true);
        }
    }

    /// Parses the record at `start` with `csv-core`; its length, or `None` when more input is
    /// needed first (it has then been read).
    fn exact_record(&mut self, record: &mut CsvRecord) -> std::io::Result<Option<usize>> {
        self.parser.reset();
        let available = self.end - self.start;
        let mut at = Parsed::default();
        // Grown as the parser asks: zeroing the whole buffer for each such record would cost
        // what the buffer holds, not what the record does.
        record.bytes.resize(1024, 0);
        record.ends.resize(16, 0);
        loop {
            if at.read == available && !self.eof {
                self.fill()?;
                return Ok(None);
            }
            // Empty only at the end of the input, which tells the parser so.
            let rest = &self.buffer[self.start + at.read..self.end];
            if parse_step(&mut self.parser, rest, record, &mut at) {
                return Ok(Some(at.read));
            }
        }
    }

    /// Passes `n` bytes at `start`, counting their line breaks.
    fn consume(&mut self, n: usize) {
        let passed = &self.buffer[self.start..self.start + n];
        self.lines += memchr::memchr_iter(b'\n', passed).count() as u64;
        self.start += n;
    }

    /// Moves the unread bytes to the front of the buffer, grows it when they fill it (shrinks it
    /// back once a long record has passed), and reads until it is full or the input ends.
    fn fill(&mut self) -> std::io::Result<()> {
        self.buffer.copy_within(self.start..self.end, 0);
        self.end -= self.start;
        self.start = 0;
        if self.buffer.len() > BUFFER_BYTES && self.end < BUFFER_BYTES / 2 {
            // A long record has passed: its room is given back.
            self.buffer.truncate(BUFFER_BYTES);
            self.buffer.shrink_to_fit();
        }
        if self.end == self.buffer.len() {
            self.buffer.resize(self.buffer.len() * 2, 0);
        }
        let first = self.total == 0;
        while self.end < self.buffer.len() {
            match self.input.read(&mut self.buffer[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    break;
                }
                Ok(n) => {
                    self.end += n;
                    self.total += n as u64;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        if first && self.buffer[..self.end].starts_with(b"\xEF\xBB\xBF") {
            self.start = 3;
        }
        Ok(())
    }
}

/// Parses the record at the start of `bytes` (which starts with neither `\n` nor `\r`) when
/// every field is plain or properly quoted; `eof` says no bytes follow `bytes`.
fn fast_record(bytes: &[u8], eof: bool, delimiter: u8, record: &mut CsvRecord) -> Fast {
    record.clear();
    let mut at = 0;
    loop {
        if bytes.get(at) == Some(&b'"') {
            at += 1;
            loop {
                let Some(quote) = memchr(b'"', &bytes[at..]) else {
                    return if eof { Fast::Unusual } else { Fast::NeedMore };
                };
                record.bytes.extend_from_slice(&bytes[at..at + quote]);
                at += quote + 1;
                match bytes.get(at) {
                    Some(b'"') => {
                        record.bytes.push(b'"');
                        at += 1;
                    }
                    None if !eof => return Fast::NeedMore,
                    _ => break,
                }
            }
            record.end_field();
            match bytes.get(at) {
                None => return Fast::Record(at),
                Some(&b) if b == delimiter => at += 1,
                Some(b'\n' | b'\r') => return Fast::Record(at),
                Some(_) => return Fast::Unusual,
            }
        } else {
            let Some(stop) = memchr3(delimiter, b'\n', b'\r', &bytes[at..]) else {
                if !eof {
                    return Fast::NeedMore;
                }
                record.bytes.extend_from_slice(&bytes[at..]);
                record.end_field();
                return Fast::Record(bytes.len());
            };
            record.bytes.extend_from_slice(&bytes[at..at + stop]);
            record.end_field();
            at += stop;
            if bytes[at] != delimiter {
                return Fast::Record(at);
            }
            at += 1;
        }
    }
}

/// A quoted field as [`first_quoted_field`] finds it: offsets in the record's bytes.
#[derive(Debug, PartialEq, Eq)]
struct QuotedField {
    /// The opening quote.
    open: usize,
    /// The field's index in its record.
    index: usize,
    /// The closing quote; `None` when the field is still open at the end of the bytes.
    close: Option<usize>,
}

/// Marks `record` (read from `bytes`, which start at its first byte) when it holds a runaway
/// quote, and returns how many bytes to consume when reading resumes inside it; `None` to
/// consume the whole record.
fn check_quotes(
    bytes: &[u8],
    shape: Option<RecordShape>,
    delimiter: u8,
    record: &mut CsvRecord,
) -> Option<usize> {
    let wrong_width = shape.is_some_and(|shape| shape.fields != record.len());
    let field = first_quoted_field(bytes, delimiter, |field, spans_lines, text_after_close| {
        field.close.is_none() || (spans_lines && (text_after_close || wrong_width))
    })?;
    let open_at_end = field.close.is_none();
    let line_of = |at: usize| record.line + memchr::memchr_iter(b'\n', &bytes[..at]).count() as u64;
    let after_opening_line = line_end(bytes, field.open).map_or(bytes.len(), |end| {
        end + if bytes[end..].starts_with(b"\r\n") {
            2
        } else {
            1
        }
    });
    let region_end = match field.close {
        None => bytes.len(),
        Some(close) => line_end(bytes, close).unwrap_or(bytes.len()),
    };
    let region = &bytes[after_opening_line.min(region_end)..region_end];
    let reference = shape
        .filter(|shape| shape.id_at < field.index && shape.id_at < record.len())
        .map(|shape| record.get(shape.id_at))
        .filter(|id| !id.is_empty());
    let survey = shape.map(|shape| survey_lines(region, shape, reference, delimiter));
    let looks_like_records = survey
        .as_ref()
        .is_some_and(|s| s.records >= 1 && 2 * s.records >= s.lines);
    if !open_at_end && !looks_like_records {
        return None;
    }
    let last_text = bytes[..region_end]
        .iter()
        .rposition(|&b| b != b'\n' && b != b'\r' && b != b' ' && b != b'\t')
        .filter(|&at| at >= after_opening_line);
    let survey = survey.unwrap_or_default();
    record.runaway = Some(Box::new(RunawayQuote {
        opened: line_of(field.open),
        closed: field.close.map(line_of),
        swallowed: last_text.map(|at| (line_of(field.open) + 1, line_of(at))),
        lines: survey.lines,
        records: survey.records,
        first_ids: survey.first_ids,
        last_id: survey.last_id,
        resumed: looks_like_records,
    }));
    looks_like_records.then_some(after_opening_line)
}

/// The first line break at or after `from`.
fn line_end(bytes: &[u8], from: usize) -> Option<usize> {
    memchr::memchr2(b'\n', b'\r', &bytes[from..]).map(|i| from + i)
}

/// The first quoted field of the record at the start of `bytes` for which `wanted(field,
/// spans_lines, text_after_close)` holds, following `csv-core`'s reading: a field that starts
/// with a quote runs to a quote not followed by another (`""` is a quote inside), and text
/// after that quote belongs to the field; the record ends at a line break outside quotes.
fn first_quoted_field(
    bytes: &[u8],
    delimiter: u8,
    wanted: impl Fn(&QuotedField, bool, bool) -> bool,
) -> Option<QuotedField> {
    let mut index = 0;
    let mut at = 0;
    loop {
        match bytes.get(at) {
            None | Some(b'\n' | b'\r') => return None,
            Some(b'"') => {
                let open = at;
                let mut spans_lines = false;
                at += 1;
                let close = loop {
                    let Some(quote) = memchr::memchr(b'"', &bytes[at..]) else {
                        spans_lines |= memchr::memchr2(b'\n', b'\r', &bytes[at..]).is_some();
                        break None;
                    };
                    spans_lines |= memchr::memchr2(b'\n', b'\r', &bytes[at..at + quote]).is_some();
                    at += quote + 1;
                    if bytes.get(at) == Some(&b'"') {
                        at += 1;
                    } else {
                        break Some(at - 1);
                    }
                };
                let text_after_close = close.is_some()
                    && !matches!(bytes.get(at), None | Some(b'\n' | b'\r'))
                    && bytes.get(at) != Some(&delimiter);
                let field = QuotedField { open, index, close };
                if wanted(&field, spans_lines, text_after_close) {
                    return Some(field);
                }
                // A field still open runs to the end: no field follows it.
                close?;
            }
            Some(_) => {}
        }
        // The rest of the field (after a closing quote, or all of an unquoted one).
        match memchr::memchr3(delimiter, b'\n', b'\r', &bytes[at..]) {
            Some(i) if bytes[at + i] == delimiter => {
                at += i + 1;
                index += 1;
            }
            _ => return None,
        }
    }
}

/// What the lines swallowed by a quote look like.
#[derive(Debug, Default, PartialEq, Eq)]
struct Survey {
    /// Non-blank lines.
    lines: u64,
    /// Lines that read as a record of the input.
    records: u64,
    /// The ids of the first two such records.
    first_ids: Vec<String>,
    /// The id of the last one.
    last_id: Option<String>,
}

/// Reads each line of `region` alone and counts those that look like records of `shape`: the
/// header's field count and an id without spaces, shaped like `reference` when there is one.
fn survey_lines(
    region: &[u8],
    shape: RecordShape,
    reference: Option<&[u8]>,
    delimiter: u8,
) -> Survey {
    let mut survey = Survey::default();
    let mut parser = csv_core::ReaderBuilder::new().delimiter(delimiter).build();
    let mut fields = CsvRecord::default();
    let reference = reference.map(id_shape);
    for line in region.split(|&b| b == b'\n' || b == b'\r') {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        survey.lines += 1;
        parser.reset();
        parse_complete(&mut parser, line, &mut fields);
        if fields.len() != shape.fields {
            continue;
        }
        let id = fields.get(shape.id_at);
        let plausible = !id.is_empty()
            && id.len() <= 200
            && !id.iter().any(u8::is_ascii_whitespace)
            && reference.as_ref().is_none_or(|r| *r == id_shape(id));
        if plausible {
            survey.records += 1;
            let id = String::from_utf8_lossy(id).into_owned();
            if survey.first_ids.len() < 2 {
                survey.first_ids.push(id.clone());
            }
            survey.last_id = Some(id);
        }
    }
    survey
}

/// The kinds of characters of an id: whether it has letters, whether it has digits, and its
/// other characters in order.
fn id_shape(id: &[u8]) -> (bool, bool, String) {
    let id = String::from_utf8_lossy(id);
    (
        id.chars().any(char::is_alphabetic),
        id.chars().any(|c| c.is_ascii_digit()),
        id.chars().filter(|c| !c.is_alphanumeric()).collect(),
    )
}

/// Parses `input`, a whole input on its own, as one record with `csv-core`.
fn parse_complete(parser: &mut csv_core::Reader, input: &[u8], record: &mut CsvRecord) {
    record.clear();
    record.bytes.resize(input.len() + 16, 0);
    record.ends.resize(16, 0);
    let mut at = Parsed::default();
    while !parse_step(parser, &input[at.read..], record, &mut at) {}
}

/// How far `csv-core` has gone into a record: input bytes read, field bytes and field ends
/// written.
#[derive(Debug, Default)]
struct Parsed {
    read: usize,
    written: usize,
    ended: usize,
}

/// Feeds `input` (what follows the bytes `at` has read) to the parser once, writing into
/// `record` after what `at` has written and growing its buffers when the parser asks. True
/// when the record is complete: `record` then holds just its fields.
fn parse_step(
    parser: &mut csv_core::Reader,
    input: &[u8],
    record: &mut CsvRecord,
    at: &mut Parsed,
) -> bool {
    let (result, r, w, e) = parser.read_record(
        input,
        &mut record.bytes[at.written..],
        &mut record.ends[at.ended..],
    );
    (at.read, at.written, at.ended) = (at.read + r, at.written + w, at.ended + e);
    match result {
        csv_core::ReadRecordResult::InputEmpty => false,
        csv_core::ReadRecordResult::OutputFull => {
            record.bytes.resize(record.bytes.len() * 2, 0);
            false
        }
        csv_core::ReadRecordResult::OutputEndsFull => {
            record.ends.resize(record.ends.len() * 2, 0);
            false
        }
        csv_core::ReadRecordResult::Record | csv_core::ReadRecordResult::End => {
            record.bytes.truncate(at.written);
            record.ends.truncate(at.ended);
            true
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Records as this module reads them: fields and lines.
    fn read_all(input: &[u8], chunk: usize) -> Vec<(Vec<Vec<u8>>, u64)> {
        let mut records = CsvRecords::new(Trickle { input, chunk });
        records.buffer = vec![0; 4];
        let mut record = CsvRecord::default();
        let mut out = Vec::new();
        while records.read(&mut record).expect("reading from memory") {
            out.push((record.iter().map(<[u8]>::to_vec).collect(), record.line()));
        }
        out
    }

    /// Records as the `csv` crate reads them, with the line of each record's first byte.
    fn read_with_csv(input: &[u8]) -> Vec<(Vec<Vec<u8>>, u64)> {
        let mut reader = csv::ReaderBuilder::new()
            .flexible(true)
            .has_headers(false)
            .from_reader(input);
        let mut record = csv::ByteRecord::new();
        let mut out = Vec::new();
        while reader
            .read_byte_record(&mut record)
            .expect("reading from memory")
        {
            let mut start = record.position().expect("a position").byte() as usize;
            // The position of a record after `\r\n` is that of its `\n`.
            while matches!(input.get(start), Some(b'\n' | b'\r')) {
                start += 1;
            }
            let line = 1 + input[..start].iter().filter(|&&b| b == b'\n').count() as u64;
            out.push((record.iter().map(<[u8]>::to_vec).collect(), line));
        }
        out
    }

    /// A reader that hands out at most `chunk` bytes at a time.
    struct Trickle<'a> {
        input: &'a [u8],
        chunk: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = buf.len().min(self.chunk).min(self.input.len());
            buf[..n].copy_from_slice(&self.input[..n]);
            self.input = &self.input[n..];
            Ok(n)
        }
    }

    #[test]
    fn quoted_fields_line_breaks_and_odd_quotes_read_as_csv_reads_them() {
        let input: &[u8] = b"id,text\r\n1,\"a \"\"q\"\"\nb\"\r\n\r\n2,ab\"c\"d\n3,\"abc\"def\n4,x\r5,\"open\n6,y\n";
        let records = read_all(input, 3);
        assert_eq!(records, read_with_csv(input));
        let fields = |i: usize| -> Vec<&[u8]> { records[i].0.iter().map(Vec::as_slice).collect() };
        assert_eq!(fields(1), [&b"1"[..], b"a \"q\"\nb"]);
        assert_eq!(records[2].1, 5);
        assert_eq!(fields(2), [&b"2"[..], b"ab\"c\"d"]);
        assert_eq!(fields(3), [&b"3"[..], b"abcdef"]);
        assert_eq!(fields(5), [&b"5"[..], b"open\n6,y\n"]);
    }

    #[test]
    fn semicolons_and_tabs_read_as_csv_reads_them_with_that_delimiter() {
        let input: &[u8] =
            b"id;text\r\n1;\"a \"\"q\"\";\nb\"\r\n2;ab,c;d\n3;\"abc\"def\n4;\"open\n5;y\n";
        for (delimiter, input) in [
            (b';', input.to_vec()),
            (
                b'\t',
                input
                    .iter()
                    .map(|&b| if b == b';' { b'\t' } else { b })
                    .collect(),
            ),
        ] {
            let mut records = CsvRecords::with_delimiter(
                Trickle {
                    input: &input,
                    chunk: 3,
                },
                delimiter,
            );
            records.buffer = vec![0; 4];
            let mut record = CsvRecord::default();
            let mut ours = Vec::new();
            while records.read(&mut record).unwrap() {
                ours.push(record.iter().map(<[u8]>::to_vec).collect::<Vec<_>>());
            }
            let mut reader = csv::ReaderBuilder::new()
                .delimiter(delimiter)
                .flexible(true)
                .has_headers(false)
                .from_reader(input.as_slice());
            let theirs: Vec<Vec<Vec<u8>>> = reader
                .byte_records()
                .map(|r| r.unwrap().iter().map(<[u8]>::to_vec).collect())
                .collect();
            assert_eq!(ours, theirs);
            assert_eq!(ours[1][1], [&b"a \"q\""[..], &[delimiter], b"\nb"].concat());
            assert_eq!(ours[2].len(), 3, "a comma is text");
        }
    }

    #[test]
    fn a_byte_order_mark_is_skipped_before_a_quoted_header() {
        let records = read_all(b"\xEF\xBB\xBF\"id\",text\n1,a\n", 2);
        assert_eq!(records[0].0, [b"id".to_vec(), b"text".to_vec()]);
        assert_eq!(records[1], (vec![b"1".to_vec(), b"a".to_vec()], 2));
    }

    /// A record as read once the header's shape is known: its fields, its line and its
    /// runaway quote.
    type Shaped = (Vec<String>, u64, Option<RunawayQuote>);

    /// The records of `input` after its header, read knowing the header's shape (id first).
    fn read_shaped(input: &[u8], chunk: usize) -> Vec<Shaped> {
        let mut records = CsvRecords::new(Trickle { input, chunk });
        records.buffer = vec![0; 4];
        let mut record = CsvRecord::default();
        if !records.read(&mut record).expect("reading from memory") {
            return Vec::new();
        }
        records.expect_shape(RecordShape {
            fields: record.len(),
            id_at: 0,
        });
        let mut out = Vec::new();
        while records.read(&mut record).expect("reading from memory") {
            let fields = record
                .iter()
                .map(|f| String::from_utf8_lossy(f).into_owned());
            out.push((fields.collect(), record.line(), record.runaway().cloned()));
        }
        out
    }

    /// The ids of records read without a runaway quote.
    fn clean_ids(records: &[Shaped]) -> Vec<&str> {
        records
            .iter()
            .filter(|(_, _, runaway)| runaway.is_none())
            .map(|(fields, _, _)| fields[0].as_str())
            .collect()
    }

    /// A CSV input of `rows` records `d1,...` with row `broken` replaced by `line`.
    fn rows_with(rows: usize, broken: usize, line: &str) -> String {
        let mut csv = String::from("id,text\n");
        for row in 1..=rows {
            if row == broken {
                csv.push_str(line);
            } else {
                csv.push_str(&format!("d{row},words of record {row}"));
            }
            csv.push('\n');
        }
        csv
    }

    #[test]
    fn a_quote_open_at_the_end_is_marked_and_the_records_it_took_are_read_again() {
        let input = rows_with(10, 3, "d3,\"oops five six");
        for chunk in [1, 7, 4096] {
            let records = read_shaped(input.as_bytes(), chunk);
            assert_eq!(
                clean_ids(&records),
                ["d1", "d2", "d4", "d5", "d6", "d7", "d8", "d9", "d10"]
            );
            let (fields, line, runaway) = &records[2];
            assert_eq!((fields[0].as_str(), *line), ("d3", 4));
            let runaway = runaway.as_ref().expect("the cut record is marked");
            assert_eq!(
                *runaway,
                RunawayQuote {
                    opened: 4,
                    closed: None,
                    swallowed: Some((5, 11)),
                    lines: 7,
                    records: 7,
                    first_ids: vec!["d4".into(), "d5".into()],
                    last_id: Some("d10".into()),
                    resumed: true,
                }
            );
            assert_eq!(records[3].1, 5, "d4 keeps its line");
        }
    }

    #[test]
    fn a_stray_quote_closed_by_a_later_records_quote_is_marked() {
        let mut input = rows_with(8, 3, "d3,\"oops five six");
        input = input.replace("d6,words of record 6", "d6,\"quoted, words\"");
        let records = read_shaped(input.as_bytes(), 5);
        assert_eq!(
            clean_ids(&records),
            ["d1", "d2", "d4", "d5", "d6", "d7", "d8"]
        );
        let runaway = records[2].2.as_ref().expect("the cut record is marked");
        assert_eq!(
            (runaway.opened, runaway.closed, runaway.swallowed),
            (4, Some(7), Some((5, 7)))
        );
        assert_eq!(records[5].0, ["d6", "quoted, words"]);
    }

    #[test]
    fn a_stray_quote_closed_before_a_comma_is_marked_by_the_width_of_its_record() {
        let input = "id,text\nd3,\"oops\nd4,four\nd5,\",comma first\"\nd6,six\n";
        let records = read_shaped(input.as_bytes(), 3);
        assert_eq!(clean_ids(&records), ["d4", "d5", "d6"]);
        assert_eq!(records[2].0, ["d5", ",comma first"]);
    }

    #[test]
    fn well_formed_multi_line_fields_are_never_marked() {
        // An HTML page of many lines, a table of id,value lines and prose lines that open with
        // a word and a comma, each properly quoted.
        let mut page = String::from("<html><body>\n");
        for i in 0..2000 {
            page.push_str(&format!(
                "<p class=\"\"x{i}\"\">Line {i}, of the page</p>\n"
            ));
        }
        page.push_str("</body></html>");
        let table = "Results:\nd1,10\nd2,20\nd3,30";
        let prose = "First line\nSecond, line\nHowever, more";
        let input = format!("id,text\nd1,\"{page}\"\nd2,\"{table}\"\r\nd3,\"{prose}\"\nd4,end\n");
        let records = read_shaped(input.as_bytes(), 64);
        assert!(records.iter().all(|(_, _, runaway)| runaway.is_none()));
        assert_eq!(clean_ids(&records), ["d1", "d2", "d3", "d4"]);
        assert_eq!(records[0].0[1], page.replace("\"\"", "\""));
        assert_eq!(records[1].0[1], table);
    }

    #[test]
    fn stray_quotes_in_prose_are_read_as_csv_reads_them() {
        // Text after a closing quote, but the lines taken in are prose, not records (ids
        // shaped like `d1`): read as `csv` reads it.
        let input = "id,text\nd1,\"Line one\nHowever, he said \"hi\" there\"\nd2,two\n";
        let records = read_shaped(input.as_bytes(), 2);
        assert!(records.iter().all(|(_, _, runaway)| runaway.is_none()));
        assert_eq!(clean_ids(&records), ["d1", "d2"]);
        assert_eq!(records, read_shaped_as_csv(input.as_bytes()));
    }

    #[test]
    fn a_truncated_last_record_is_marked_with_the_lines_it_holds() {
        let input = "id,text\nd1,one\nd2,\"The story\nwent on, and on\nand then the file ended";
        let records = read_shaped(input.as_bytes(), 8);
        assert_eq!(clean_ids(&records), ["d1"]);
        let runaway = records[1].2.as_ref().expect("the cut record is marked");
        assert_eq!(
            (
                runaway.opened,
                runaway.swallowed,
                runaway.lines,
                runaway.records
            ),
            (3, Some((4, 5)), 2, 0)
        );
        assert!(!runaway.resumed);
        assert_eq!(records.len(), 2);
    }

    #[test]
    fn a_quote_open_on_the_last_line_is_marked() {
        let records = read_shaped(b"id,text\nd1,\"no end", 3);
        let runaway = records[0].2.as_ref().expect("the cut record is marked");
        assert_eq!((runaway.opened, runaway.swallowed), (2, None));
    }

    /// `read_shaped`'s output for an input without runaway quotes: as `csv` reads it.
    fn read_shaped_as_csv(input: &[u8]) -> Vec<Shaped> {
        read_with_csv(input)
            .into_iter()
            .skip(1)
            .map(|(fields, line)| {
                let fields = fields
                    .iter()
                    .map(|f| String::from_utf8_lossy(f).into_owned());
                (fields.collect(), line, None)
            })
            .collect()
    }

    proptest! {
        #[test]
        fn with_a_shape_any_input_reads_as_csv_unless_a_quote_runs_away(
            input in proptest::collection::vec(
                prop::sample::select(&b"d1,\"\r\n x\xff"[..]), 0..160),
            chunk in 1usize..9,
        ) {
            let shaped = read_shaped(&input, chunk);
            if shaped.iter().all(|(_, _, runaway)| runaway.is_none()) {
                prop_assert_eq!(&shaped, &read_shaped_as_csv(&input));
            }
            // Reading resumes inside a cut record only when it took in a line that reads as a
            // record, and that line is then read: a record follows.
            for (at, (_, _, runaway)) in shaped.iter().enumerate() {
                if runaway.as_ref().is_some_and(|r| r.resumed) {
                    prop_assert!(at + 1 < shaped.len());
                }
            }
        }

        #[test]
        fn any_input_reads_as_csv_reads_it(
            input in proptest::collection::vec(
                prop::sample::select(&b"ab,\"\r\n\xff"[..]), 0..120),
            chunk in 1usize..9,
        ) {
            prop_assert_eq!(read_all(&input, chunk), read_with_csv(&input));
        }
    }
}
