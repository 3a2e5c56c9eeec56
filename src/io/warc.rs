//! WARC files (ISO 28500), as news crawls write them: `.warc`, `.warc.gz` (a gzip member a
//! record) and `.warc.zst`, decompressed before they reach this module. Of each record, a
//! `response` gives the body of its HTTP response (chunked transfer and a gzip or deflate
//! `Content-Encoding` undone) when its `Content-Type` is HTML, XHTML or plain text, decoded with
//! the HTTP charset as the transport's ([`crate::io::charset`]); a `resource` gives its block,
//! typed by the record's own `Content-Type`; a `conversion` (WET) gives its block as plain text.
//! Other types of response are left out and counted; requests, metadata and the like are not
//! documents. A document's id is its `WARC-Target-URI`, its time the record's `WARC-Date`. A
//! damaged record is reported with its offset and reading goes on at the next `WARC/` line; a
//! damaged gzip member of a `.warc.gz` with its byte in the file, and reading goes on at the
//! next member.

use std::io::{BufRead, Read};
use std::sync::Arc;

use crate::io::charset::{self, Decoded, TextKind};
use crate::io::gzip::DamagedMember;
use crate::io::record::{DocumentText, Entry, ReadError};
use crate::io::time::parse_time;

/// The largest header block of a WARC record or HTTP response read; past it the record is
/// damaged.
const MAX_HEADER_BYTES: usize = 1 << 20;

/// What one WARC record gives.
#[derive(Debug)]
pub enum WarcItem {
    /// A document: a page or a text.
    Document(WarcDocument),
    /// A response or resource of a type that is not text (an image, a PDF), left out.
    NotText,
    /// A record that is not a document (request, metadata, warcinfo, revisit).
    Other,
    /// A damaged or truncated record, at this byte offset of the decompressed file, and why.
    Damaged(u64, String),
}

/// A document of a WARC file.
#[derive(Debug)]
pub struct WarcDocument {
    /// `WARC-Target-URI` (else `WARC-Record-ID`).
    pub uri: String,
    /// `WARC-Date`, as written.
    pub date: Option<String>,
    /// The text, decoded.
    pub decoded: Decoded,
    /// Byte offset of the record in the decompressed file.
    pub offset: u64,
}

/// Reads the records of a WARC file in turn; an I/O error stops it.
pub struct WarcReader<R> {
    input: R,
    offset: u64,
}

impl<R: BufRead> WarcReader<R> {
    /// A reader of the decompressed WARC `input`.
    pub fn new(input: R) -> WarcReader<R> {
        WarcReader { input, offset: 0 }
    }

    /// The next record, `None` at the end.
    pub fn next_item(&mut self) -> std::io::Result<Option<WarcItem>> {
        let mut line = Vec::new();
        // Blank lines between records are skipped.
        loop {
            line.clear();
            if self.read_line(&mut line)? == 0 {
                return Ok(None);
            }
            if !line.iter().all(u8::is_ascii_whitespace) {
                break;
            }
        }
        let record_at = self.offset - line.len() as u64;
        if !line.starts_with(b"WARC/") {
            self.skip_to_next_record()?;
            let at = record_at;
            return Ok(Some(WarcItem::Damaged(
                at,
                "no WARC/ version line where a record should start".into(),
            )));
        }
        let headers = match self.read_headers()? {
            Some(headers) => headers,
            None => {
                return Ok(Some(WarcItem::Damaged(
                    record_at,
                    "header block cut short".into(),
                )))
            }
        };
        let length = header(&headers, "content-length").and_then(|v| v.trim().parse::<u64>().ok());
        let Some(length) = length else {
            self.skip_to_next_record()?;
            return Ok(Some(WarcItem::Damaged(
                record_at,
                "no Content-Length".into(),
            )));
        };
        let mut block = Vec::new();
        let read = (&mut self.input).take(length).read_to_end(&mut block)?;
        self.offset += read as u64;
        if (read as u64) < length {
            return Ok(Some(WarcItem::Damaged(
                record_at,
                format!("truncated: {read} of {length} bytes of its block"),
            )));
        }
        let kind = header(&headers, "warc-type")
            .unwrap_or_default()
            .to_ascii_lowercase();
        let uri = header(&headers, "warc-target-uri")
            .or_else(|| header(&headers, "warc-record-id"))
            .unwrap_or_default()
            .trim()
            .trim_matches(['<', '>'])
            .to_owned();
        let date = header(&headers, "warc-date").map(|d| d.trim().to_owned());
        let content_type = header(&headers, "content-type").unwrap_or_default();
        let item = match kind.as_str() {
            "response"
                if content_type
                    .to_ascii_lowercase()
                    .starts_with("application/http") =>
            {
                http_response(&block)
            }
            "response" | "resource" => typed(block, content_type),
            "conversion" => Ok(Some(charset::decode(block, TextKind::Plain, None))),
            _ => return Ok(Some(WarcItem::Other)),
        };
        Ok(Some(match item {
            Ok(Some(decoded)) => WarcItem::Document(WarcDocument {
                uri,
                date,
                decoded,
                offset: record_at,
            }),
            Ok(None) => WarcItem::NotText,
            Err(why) => WarcItem::Damaged(record_at, why),
        }))
    }

    fn read_line(&mut self, line: &mut Vec<u8>) -> std::io::Result<usize> {
        let n = (&mut self.input)
            .take(MAX_HEADER_BYTES as u64)
            .read_until(b'\n', line)?;
        self.offset += n as u64;
        Ok(n)
    }

    /// The header lines up to the empty line, or `None` when the input ends first.
    fn read_headers(&mut self) -> std::io::Result<Option<Vec<(String, String)>>> {
        let mut headers = Vec::new();
        let mut bytes = 0;
        let mut line = Vec::new();
        loop {
            line.clear();
            let n = self.read_line(&mut line)?;
            bytes += n;
            if n == 0 || bytes > MAX_HEADER_BYTES {
                return Ok(None);
            }
            let text = String::from_utf8_lossy(&line);
            let text = text.trim_end_matches(['\r', '\n']);
            if text.is_empty() {
                return Ok(Some(headers));
            }
            if let Some((name, value)) = text.split_once(':') {
                headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
            }
        }
    }

    /// Reads up to the next line that starts with `WARC/`, which is left unread.
    fn skip_to_next_record(&mut self) -> std::io::Result<()> {
        loop {
            let available = self.input.fill_buf()?;
            if available.is_empty() {
                return Ok(());
            }
            if available.starts_with(b"WARC/") {
                return Ok(());
            }
            let n = match memchr::memchr(b'\n', available) {
                Some(i) => i + 1,
                None => available.len(),
            };
            self.input.consume(n);
            self.offset += n as u64;
        }
    }
}

/// The documents of a WARC file as records, pulled one at a time: each page or text a record,
/// its id its `WARC-Target-URI`, its time its `WARC-Date`, named in messages by the file and the
/// record's offset (`crawl.warc.gz@1234`). A damaged record is reported and skipped; so is a
/// damaged gzip member of a `.warc.gz`, named by its byte in the file, and reading goes on at
/// the next member ([`crate::io::gzip`]); a file whose decompression fails otherwise is
/// reported once, and the records before are kept.
pub(crate) struct WarcEntries<R> {
    reader: WarcReader<R>,
    source: Arc<str>,
    done: bool,
}

impl<R: BufRead> WarcEntries<R> {
    /// The documents of the decompressed WARC `input`, named `source` in messages.
    pub fn new(input: R, source: Arc<str>) -> WarcEntries<R> {
        WarcEntries {
            reader: WarcReader::new(input),
            source,
            done: false,
        }
    }
}

impl<R: BufRead> Iterator for WarcEntries<R> {
    type Item = Result<Entry, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            match self.reader.next_item() {
                Ok(Some(item)) => {
                    if let Some(entry) = self.entry_of(item) {
                        return Some(Ok(entry));
                    }
                }
                Ok(None) => self.done = true,
                Err(e) if DamagedMember::of(&e).is_some() => {
                    let damaged = DamagedMember::of(&e).expect("a damaged member");
                    return Some(Ok(Entry::Skipped {
                        source: Arc::clone(&self.source),
                        line: 0,
                        what: damaged.to_string(),
                    }));
                }
                Err(e) => {
                    self.done = true;
                    let what = format!(
                        "cannot be read past this point ({e}); the records before are kept"
                    );
                    return Some(Ok(Entry::Skipped {
                        source: Arc::clone(&self.source),
                        line: 0,
                        what,
                    }));
                }
            }
        }
        None
    }
}

impl<R> WarcEntries<R> {
    /// What a WARC record gives the reader of inputs; `None` for one that is not a document.
    fn entry_of(&self, item: WarcItem) -> Option<Entry> {
        let at = |offset: u64| Arc::from(format!("{}@{offset}", self.source));
        Some(match item {
            WarcItem::Document(document) => {
                let time = document.date.as_deref().and_then(parse_time);
                let text = DocumentText {
                    decoding: vec![document.decoded.explain()],
                    malformed: document.decoded.malformed,
                    text: document.decoded.text,
                    time,
                    message_id: None,
                };
                Entry::Document {
                    id: document.uri,
                    document: text,
                    source: at(document.offset),
                    newest_kept: true,
                }
            }
            WarcItem::NotText => Entry::NotText,
            WarcItem::Other => return None,
            WarcItem::Damaged(offset, why) => Entry::Skipped {
                source: at(offset),
                line: 0,
                what: format!("damaged WARC record: {why}"),
            },
        })
    }
}

/// The value of the first header `name` (lower case).
fn header<'h>(headers: &'h [(String, String)], name: &str) -> Option<&'h str> {
    headers
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

/// The text kind a `Content-Type` names, `None` for a type that is not text.
fn text_kind(content_type: &str) -> Option<TextKind> {
    let mime = content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    match mime.as_str() {
        "text/html" | "application/xhtml+xml" => Some(TextKind::Html),
        "text/plain" | "" => Some(TextKind::Plain),
        _ => None,
    }
}

/// The charset a `Content-Type`'s `charset` parameter names.
fn charset_of(content_type: &str) -> Option<&'static encoding_rs::Encoding> {
    content_type.split(';').skip(1).find_map(|parameter| {
        let (name, value) = parameter.split_once('=')?;
        name.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| charset::for_label(value.trim().trim_matches(['"', '\''])))
            .flatten()
    })
}

/// A body of `content_type` decoded, `None` when it is not text.
fn typed(body: Vec<u8>, content_type: &str) -> Result<Option<Decoded>, String> {
    Ok(text_kind(content_type).map(|kind| charset::decode(body, kind, charset_of(content_type))))
}

/// The body of an HTTP response decoded, `None` when it is not text.
fn http_response(block: &[u8]) -> Result<Option<Decoded>, String> {
    let end = memchr::memmem::find(block, b"\r\n\r\n")
        .map(|i| (i, i + 4))
        .or_else(|| memchr::memmem::find(block, b"\n\n").map(|i| (i, i + 2)))
        .ok_or("an HTTP response without the empty line after its headers")?;
    let head = String::from_utf8_lossy(&block[..end.0]);
    let mut lines = head.lines();
    let status = lines.next().unwrap_or_default();
    if !status.starts_with("HTTP/") {
        return Err("an HTTP response without its status line".into());
    }
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let content_type = header(&headers, "content-type").unwrap_or("text/html");
    if text_kind(content_type).is_none() {
        return Ok(None);
    }
    let mut body = block[end.1..].to_vec();
    let chunked = header(&headers, "transfer-encoding")
        .is_some_and(|t| t.to_ascii_lowercase().contains("chunked"));
    if chunked {
        body = dechunk(&body).ok_or("a chunked body whose chunks are damaged")?;
    }
    match header(&headers, "content-encoding").map(|e| e.trim().to_ascii_lowercase()) {
        None => {}
        Some(e) if e.is_empty() || e == "identity" => {}
        Some(e) if e == "gzip" || e == "x-gzip" => {
            let mut out = Vec::new();
            flate2::read::MultiGzDecoder::new(&body[..])
                .read_to_end(&mut out)
                .map_err(|e| format!("a gzip body that cannot be decompressed: {e}"))?;
            body = out;
        }
        Some(e) if e == "deflate" => {
            let mut out = Vec::new();
            flate2::read::ZlibDecoder::new(&body[..])
                .read_to_end(&mut out)
                .map_err(|e| format!("a deflate body that cannot be decompressed: {e}"))?;
            body = out;
        }
        Some(other) => return Err(format!("a body in Content-Encoding {other}, not read")),
    }
    typed(body, content_type)
}

/// A chunked body's data, or `None` when its chunks are damaged. Chunks cut by the end of the
/// record (crawlers truncate long bodies) give what they hold.
fn dechunk(mut body: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(body.len());
    loop {
        let line_end = memchr::memchr(b'\n', body)?;
        let size_text = std::str::from_utf8(&body[..line_end]).ok()?;
        let size_text = size_text.split(';').next()?.trim();
        let size = usize::from_str_radix(size_text, 16).ok()?;
        body = &body[line_end + 1..];
        if size == 0 {
            return Some(out);
        }
        let take = size.min(body.len());
        out.extend_from_slice(&body[..take]);
        body = &body[take..];
        if body.is_empty() {
            return Some(out);
        }
        body = body
            .strip_prefix(b"\r\n")
            .or_else(|| body.strip_prefix(b"\n"))?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A WARC record of `kind` with `headers` and `block`.
    pub fn record(kind: &str, uri: &str, content_type: &str, block: &[u8]) -> Vec<u8> {
        let mut out = format!(
            "WARC/1.0\r\nWARC-Type: {kind}\r\nWARC-Target-URI: {uri}\r\n\
             WARC-Date: 2025-06-03T10:00:00Z\r\nContent-Type: {content_type}\r\n\
             Content-Length: {}\r\n\r\n",
            block.len()
        )
        .into_bytes();
        out.extend_from_slice(block);
        out.extend_from_slice(b"\r\n\r\n");
        out
    }

    fn items(bytes: &[u8]) -> Vec<WarcItem> {
        let mut reader = WarcReader::new(bytes);
        let mut items = Vec::new();
        while let Some(item) = reader.next_item().unwrap() {
            items.push(item);
        }
        items
    }

    #[test]
    fn a_chunked_gzip_response_in_its_http_charset() {
        let (page, _, _) = encoding_rs::WINDOWS_1251.encode("<p>Привет, мир</p>");
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        std::io::Write::write_all(&mut gz, &page).unwrap();
        let gz = gz.finish().unwrap();
        let (first, second) = gz.split_at(gz.len() / 2);
        let mut http = b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=windows-1251\r\n\
                         Transfer-Encoding: chunked\r\nContent-Encoding: gzip\r\n\r\n"
            .to_vec();
        for chunk in [first, second] {
            http.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
            http.extend_from_slice(chunk);
            http.extend_from_slice(b"\r\n");
        }
        http.extend_from_slice(b"0\r\n\r\n");
        let mut warc = record(
            "warcinfo",
            "",
            "application/warc-fields",
            b"software: x\r\n",
        );
        warc.extend(record(
            "request",
            "http://a/",
            "application/http; msgtype=request",
            b"GET / HTTP/1.1\r\n\r\n",
        ));
        warc.extend(record(
            "response",
            "http://a/",
            "application/http; msgtype=response",
            &http,
        ));
        let items = items(&warc);
        assert!(matches!(items[..2], [WarcItem::Other, WarcItem::Other]));
        let WarcItem::Document(doc) = &items[2] else {
            panic!("{items:?}")
        };
        assert_eq!(doc.uri, "http://a/");
        assert_eq!(doc.date.as_deref(), Some("2025-06-03T10:00:00Z"));
        assert_eq!(doc.decoded.text, "<p>Привет, мир</p>");
        assert_eq!(doc.decoded.reason, charset::Reason::Transport);
    }

    #[test]
    fn images_are_left_out_and_conversions_are_text() {
        let image = b"HTTP/1.1 200 OK\r\nContent-Type: image/png\r\n\r\n\x89PNG";
        let mut warc = record("response", "http://a/i.png", "application/http", image);
        warc.extend(record(
            "conversion",
            "http://a/",
            "text/plain",
            "Plain words".as_bytes(),
        ));
        warc.extend(record(
            "resource",
            "file:///x.html",
            "text/html",
            b"<p>x</p>",
        ));
        let items = items(&warc);
        assert!(matches!(items[0], WarcItem::NotText), "{items:?}");
        let texts: Vec<&str> = items[1..]
            .iter()
            .map(|i| match i {
                WarcItem::Document(d) => d.decoded.text.as_str(),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(texts, ["Plain words", "<p>x</p>"]);
    }

    #[test]
    fn a_damaged_record_is_reported_with_its_offset_and_reading_goes_on() {
        let mut warc = record("conversion", "http://a/", "text/plain", b"one");
        let damaged_at = warc.len() as u64;
        warc.extend_from_slice(b"garbage line\r\nmore\r\n");
        warc.extend(record("conversion", "http://b/", "text/plain", b"two"));
        let truncated = record("conversion", "http://c/", "text/plain", b"three words here");
        let truncated_at = warc.len() as u64;
        warc.extend_from_slice(&truncated[..truncated.len() - 10]);
        let items = items(&warc);
        assert_eq!(items.len(), 4, "{items:?}");
        assert!(
            matches!(&items[1], WarcItem::Damaged(at, why) if *at == damaged_at && why.starts_with("no WARC/")),
            "{items:?}"
        );
        assert!(matches!(&items[2], WarcItem::Document(d) if d.uri == "http://b/"));
        assert!(
            matches!(&items[3], WarcItem::Damaged(at, why) if *at == truncated_at && why.starts_with("truncated: 10 of 16")),
            "{items:?}"
        );
    }
}
