//! Record files (CSV, TSV, JSONL) in a charset other than UTF-8, as a spreadsheet in a legacy
//! locale exports them: `--encoding LABEL` names the charset (a label of the Encoding Standard:
//! `windows-1251`, `cp1252`, `shift_jis`, `utf-16le`), `--encoding auto` finds it from the first
//! 64 KiB (a byte order mark; valid UTF-8; else `chardetng`'s guess). The input is decoded as it
//! is read; malformed sequences become U+FFFD and are counted, or stop the reading under
//! `--strict`.

use std::io::{BufRead, Read};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use encoding_rs::{Decoder, DecoderResult, Encoding, UTF_8};

use crate::io::charset;

/// The charset of record files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordEncoding {
    /// Found from the first bytes of each input.
    Auto,
    /// This one.
    Given(&'static Encoding),
}

impl RecordEncoding {
    /// `auto`, or a charset label; the error names what to give.
    pub fn parse(label: &str) -> Result<RecordEncoding, String> {
        if label.trim().eq_ignore_ascii_case("auto") {
            return Ok(RecordEncoding::Auto);
        }
        charset::for_label(label)
            .map(RecordEncoding::Given)
            .ok_or_else(|| {
                format!(
                    "{label:?} is not a charset label: give one such as windows-1251, koi8-r, \
                 iso-8859-2, shift_jis, gb18030, utf-16le, or `auto`"
                )
            })
    }

    /// The charset to decode `input` from, looking at its first bytes for `auto`; `None` when
    /// that is UTF-8 (read as it is, the fast path).
    pub(crate) fn for_input(
        self,
        input: &mut impl BufRead,
    ) -> std::io::Result<Option<&'static Encoding>> {
        let encoding = match self {
            RecordEncoding::Given(encoding) => encoding,
            RecordEncoding::Auto => {
                let head = input.fill_buf()?;
                match Encoding::for_bom(head) {
                    Some((encoding, _)) => encoding,
                    None if utf8_but_for_a_cut_end(head) => UTF_8,
                    None => charset::detect(head),
                }
            }
        };
        Ok((encoding != UTF_8).then_some(encoding))
    }
}

/// True when `head` is UTF-8, perhaps but for a character cut at its end.
fn utf8_but_for_a_cut_end(head: &[u8]) -> bool {
    match std::str::from_utf8(head) {
        Ok(_) => true,
        Err(e) => e.error_len().is_none(),
    }
}

/// Bytes of output decoded at a time.
const OUTPUT_BYTES: usize = 1 << 16;

/// A reader of the UTF-8 of an input in another charset (a byte order mark, when there is one,
/// overrides it, as the Encoding Standard's decode does).
pub struct Utf8Reader<R> {
    inner: R,
    encoding: &'static Encoding,
    decoder: Decoder,
    output: Vec<u8>,
    output_at: usize,
    consumed: u64,
    finished: bool,
    strict: bool,
    malformed: Arc<AtomicU64>,
}

impl<R: BufRead> Utf8Reader<R> {
    /// Decodes `inner` from `encoding`; malformed sequences are added to `malformed`, or are an
    /// error when `strict`.
    pub fn new(
        inner: R,
        encoding: &'static Encoding,
        strict: bool,
        malformed: Arc<AtomicU64>,
    ) -> Utf8Reader<R> {
        Utf8Reader {
            inner,
            encoding,
            decoder: encoding.new_decoder(),
            output: Vec::with_capacity(OUTPUT_BYTES),
            output_at: 0,
            consumed: 0,
            finished: false,
            strict,
            malformed,
        }
    }

    /// Decodes the next bytes of input into the output buffer.
    fn fill(&mut self) -> std::io::Result<()> {
        self.output.clear();
        self.output_at = 0;
        while self.output.is_empty() && !self.finished {
            let input = self.inner.fill_buf()?;
            let last = input.is_empty();
            self.output.resize(OUTPUT_BYTES, 0);
            // Room is kept for a U+FFFD after a malformed sequence.
            let room = OUTPUT_BYTES - 3;
            let (result, read, written) = self.decoder.decode_to_utf8_without_replacement(
                input,
                &mut self.output[..room],
                last,
            );
            self.output.truncate(written);
            self.inner.consume(read);
            self.consumed += read as u64;
            match result {
                DecoderResult::InputEmpty => self.finished = last,
                DecoderResult::OutputFull => {}
                DecoderResult::Malformed(_, _) => {
                    if self.strict {
                        return Err(std::io::Error::new(
                            std::io::ErrorKind::InvalidData,
                            format!(
                                "a byte sequence that is not {} ends at byte {}; fix it, or \
                                 leave out --strict to read it as U+FFFD",
                                self.encoding.name(),
                                self.consumed
                            ),
                        ));
                    }
                    self.malformed.fetch_add(1, Ordering::Relaxed);
                    self.output.extend_from_slice("\u{FFFD}".as_bytes());
                }
            }
        }
        Ok(())
    }
}

impl<R: BufRead> Read for Utf8Reader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.output_at == self.output.len() {
            self.fill()?;
        }
        let available = &self.output[self.output_at..];
        let n = available.len().min(buf.len());
        buf[..n].copy_from_slice(&available[..n]);
        self.output_at += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(
        bytes: &[u8],
        encoding: &'static Encoding,
        strict: bool,
    ) -> (std::io::Result<String>, u64) {
        let malformed = Arc::new(AtomicU64::new(0));
        let input = std::io::BufReader::with_capacity(7, bytes);
        let mut reader = Utf8Reader::new(input, encoding, strict, Arc::clone(&malformed));
        let mut text = String::new();
        let result = reader.read_to_string(&mut text).map(|_| text);
        (result, malformed.load(Ordering::Relaxed))
    }

    #[test]
    fn a_legacy_csv_is_read_as_utf8_across_refills() {
        let csv = "id,text\n1,Министерство сообщило сегодня\n2,«Кавычки» и тире — тоже\n";
        let (bytes, _, _) = encoding_rs::WINDOWS_1251.encode(csv);
        let (text, malformed) = read_all(&bytes, encoding_rs::WINDOWS_1251, false);
        assert_eq!((text.unwrap().as_str(), malformed), (csv, 0));
        let sjis = "id,text\n1,日本語のテキストです\n";
        let (bytes, _, _) = encoding_rs::SHIFT_JIS.encode(sjis);
        assert_eq!(
            read_all(&bytes, encoding_rs::SHIFT_JIS, false).0.unwrap(),
            sjis
        );
    }

    #[test]
    fn malformed_bytes_are_counted_or_refused() {
        let bytes = b"id,text\n1,\x82\xA0ok\x82\n";
        let (text, malformed) = read_all(bytes, encoding_rs::SHIFT_JIS, false);
        assert_eq!(
            (text.unwrap().as_str(), malformed),
            ("id,text\n1,あok\u{FFFD}\n", 1)
        );
        let err = read_all(bytes, encoding_rs::SHIFT_JIS, true).0.unwrap_err();
        assert_eq!(
            err.to_string(),
            "a byte sequence that is not Shift_JIS ends at byte 15; fix it, or leave out --strict \
             to read it as U+FFFD"
        );
    }

    #[test]
    fn labels_and_auto() {
        assert_eq!(
            RecordEncoding::parse("CP1251"),
            Ok(RecordEncoding::Given(encoding_rs::WINDOWS_1251))
        );
        assert_eq!(RecordEncoding::parse("auto"), Ok(RecordEncoding::Auto));
        assert!(RecordEncoding::parse("klingon")
            .unwrap_err()
            .starts_with("\"klingon\" is not a charset label: give one such as windows-1251"));
        let (bytes, _, _) = encoding_rs::WINDOWS_1251.encode(
            "id,text\n1,Правительство объявило сегодня о новых мерах поддержки малого бизнеса\n",
        );
        let found = RecordEncoding::Auto.for_input(&mut &bytes[..]).unwrap();
        assert_eq!(found, Some(encoding_rs::WINDOWS_1251));
        let found = RecordEncoding::Auto
            .for_input(&mut "id,text\n1,é\n".as_bytes())
            .unwrap();
        assert_eq!(found, None);
    }
}
