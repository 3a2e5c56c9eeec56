//! CSV records read fast and exactly as the `csv` crate reads them: a field that starts with a
//! quote runs to its closing quote (`""` inside is one quote), any other field runs to the next
//! comma or line break, quotes and all; a record ends at `\n`, `\r\n` or `\r`, and empty lines
//! are skipped. Well-formed fields are found with memchr, many bytes at a time. A record with
//! anything else in it (text after a closing quote, a quote never closed) is parsed whole by
//! `csv-core`, the `csv` crate's own state machine, so every input gives the records `csv` gives
//! (a byte order mark at the start is skipped, as `csv` does).
//! Each record comes with the line it starts on.

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

    /// The line (from 1) where the record starts.
    pub fn line(&self) -> u64 {
        self.line
    }

    fn clear(&mut self) {
        self.bytes.clear();
        self.ends.clear();
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
}

impl<R: Read> CsvRecords<R> {
    /// A reader of `input`.
    pub fn new(input: R) -> Self {
        CsvRecords {
            input,
            buffer: vec![0; BUFFER_BYTES],
            start: 0,
            end: 0,
            eof: false,
            lines: 0,
            total: 0,
            parser: csv_core::Reader::new(),
        }
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
            let parsed = fast_record(&self.buffer[self.start..self.end], self.eof, record);
            let length = match parsed {
                Fast::Record(length) => length,
                Fast::NeedMore => {
                    self.fill()?;
                    continue;
                }
                Fast::Unusual => match self.exact_record(record)? {
                    Some(length) => length,
                    None => continue,
                },
            };
            record.line = self.lines + 1;
            self.consume(length);
            return Ok(true);
        }
    }

    /// Parses the record at `start` with `csv-core`; its length, or `None` when more input is
    /// needed first (it has then been read).
    fn exact_record(&mut self, record: &mut CsvRecord) -> std::io::Result<Option<usize>> {
        self.parser.reset();
        let available = self.end - self.start;
        let (mut read, mut written, mut ended) = (0, 0, 0);
        // Grown as the parser asks: zeroing the whole buffer for each such record would cost
        // what the buffer holds, not what the record does.
        record.bytes.resize(1024, 0);
        record.ends.resize(16, 0);
        loop {
            if read == available && !self.eof {
                self.fill()?;
                return Ok(None);
            }
            // Empty only at the end of the input, which tells the parser so.
            let rest = &self.buffer[self.start + read..self.end];
            let (result, r, w, e) = self.parser.read_record(
                rest,
                &mut record.bytes[written..],
                &mut record.ends[ended..],
            );
            (read, written, ended) = (read + r, written + w, ended + e);
            match result {
                csv_core::ReadRecordResult::InputEmpty => {}
                csv_core::ReadRecordResult::OutputFull => {
                    record.bytes.resize(record.bytes.len() * 2, 0);
                }
                csv_core::ReadRecordResult::OutputEndsFull => {
                    record.ends.resize(record.ends.len() * 2, 0);
                }
                csv_core::ReadRecordResult::Record | csv_core::ReadRecordResult::End => {
                    record.bytes.truncate(written);
                    record.ends.truncate(ended);
                    return Ok(Some(read));
                }
            }
        }
    }

    /// Passes `n` bytes at `start`, counting their line breaks.
    fn consume(&mut self, n: usize) {
        let passed = &self.buffer[self.start..self.start + n];
        self.lines += memchr::memchr_iter(b'\n', passed).count() as u64;
        self.start += n;
    }

    /// Moves the unread bytes to the front of the buffer, grows it when they fill it, and reads
    /// until it is full or the input ends.
    fn fill(&mut self) -> std::io::Result<()> {
        self.buffer.copy_within(self.start..self.end, 0);
        self.end -= self.start;
        self.start = 0;
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
fn fast_record(bytes: &[u8], eof: bool, record: &mut CsvRecord) -> Fast {
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
                Some(b',') => at += 1,
                Some(b'\n' | b'\r') => return Fast::Record(at),
                Some(_) => return Fast::Unusual,
            }
        } else {
            let Some(stop) = memchr3(b',', b'\n', b'\r', &bytes[at..]) else {
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
            if bytes[at] != b',' {
                return Fast::Record(at);
            }
            at += 1;
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
    fn a_byte_order_mark_is_skipped_before_a_quoted_header() {
        let records = read_all(b"\xEF\xBB\xBF\"id\",text\n1,a\n", 2);
        assert_eq!(records[0].0, [b"id".to_vec(), b"text".to_vec()]);
        assert_eq!(records[1], (vec![b"1".to_vec(), b"a".to_vec()], 2));
    }

    proptest! {
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
