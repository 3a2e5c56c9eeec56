//! Bytes to text as browsers decode them (the WHATWG Encoding Standard, with `encoding_rs`'s
//! label table and decoders and `chardetng`'s detector): a byte order mark first; then bytes
//! that are valid UTF-8 are UTF-8 (the fast path, and a page converted to UTF-8 whose old
//! declaration was left behind); then the transport's charset (a mail part's `charset`, an HTTP
//! `Content-Type`); for HTML, a `<meta charset>` or `<meta http-equiv="Content-Type">` found
//! by the prescan of the first 1024 bytes; then UTF-16 told by its NUL bytes; then detection.
//! Malformed sequences become U+FFFD, as in a browser, and are counted.

use encoding_rs::{Encoding, UTF_16BE, UTF_16LE, UTF_8, WINDOWS_1252, X_USER_DEFINED};

/// How many bytes of a page the `<meta>` prescan looks at, as browsers do.
const PRESCAN_BYTES: usize = 1024;

/// What a text is, for the order in which its charset is sought.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextKind {
    /// An HTML page: its `<meta>` declaration counts.
    Html,
    /// Plain text: no declaration inside it.
    Plain,
}

/// Why a charset was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// The text starts with a byte order mark.
    ByteOrderMark,
    /// The bytes are valid UTF-8 (and were declared as nothing else).
    ValidUtf8,
    /// The bytes are valid UTF-8 although the page or its transport declares this charset.
    ValidUtf8Despite(&'static Encoding),
    /// The transport declared it (a mail part's or an HTTP response's `charset`).
    Transport,
    /// A `<meta>` element in the first 1024 bytes declared it.
    Meta,
    /// Half the bytes of one parity are NUL: UTF-16 without a byte order mark.
    Utf16Nuls,
    /// Detected from the bytes (`chardetng`).
    Detected,
    /// Given by the user (`--encoding LABEL`).
    Given,
}

/// A text decoded, with the charset used and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    /// The text.
    pub text: String,
    /// The charset it was decoded from.
    pub encoding: &'static Encoding,
    /// Why that charset.
    pub reason: Reason,
    /// Malformed byte sequences replaced by U+FFFD.
    pub malformed: u64,
}

impl Decoded {
    /// One line saying which charset was used and why: "windows-1251, declared by a `<meta>`
    /// element".
    pub fn explain(&self) -> String {
        let name = self.encoding.name();
        let why = match self.reason {
            Reason::ByteOrderMark => "from its byte order mark".to_owned(),
            Reason::ValidUtf8 => "the bytes are valid UTF-8".to_owned(),
            Reason::ValidUtf8Despite(declared) => format!(
                "the bytes are valid UTF-8, although {} is declared",
                declared.name()
            ),
            Reason::Transport => "declared by the transport (Content-Type charset)".to_owned(),
            Reason::Meta => "declared by a <meta> element in the first 1024 bytes".to_owned(),
            Reason::Utf16Nuls => {
                "UTF-16 without a byte order mark, told by its NUL bytes".to_owned()
            }
            Reason::Detected => "nothing declared; detected from the bytes".to_owned(),
            Reason::Given => "given by --encoding".to_owned(),
        };
        let malformed = match self.malformed {
            0 => String::new(),
            n => format!("; {n} malformed byte sequences replaced by U+FFFD"),
        };
        format!("{name}, {why}{malformed}")
    }
}

/// Decodes `bytes` of the given kind: byte order mark, valid UTF-8, `transport`'s charset, the
/// `<meta>` prescan (HTML), UTF-16 by its NUL bytes, detection.
pub fn decode(bytes: Vec<u8>, kind: TextKind, transport: Option<&'static Encoding>) -> Decoded {
    if let Some((encoding, bom)) = Encoding::for_bom(&bytes) {
        return decode_with(&bytes[bom..], encoding, Reason::ByteOrderMark);
    }
    let declared = transport
        .map(|e| (e, Reason::Transport))
        .or_else(|| match kind {
            TextKind::Html => prescan(&bytes).map(|e| (e, Reason::Meta)),
            TextKind::Plain => None,
        });
    // ISO-2022-JP is 7-bit: its escapes are valid UTF-8, so a declared one is believed; and
    // UTF-16 without a byte order mark is valid UTF-8 when its text is ASCII.
    let ascii_compatible = declared.is_none_or(|(e, _)| e.is_ascii_compatible());
    let utf16 = memchr::memchr(0, &bytes).is_some() && utf16_by_nuls(&bytes).is_some();
    if ascii_compatible && !utf16 && memchr::memchr(0x1B, &bytes).is_none() {
        match String::from_utf8(bytes) {
            Ok(text) => {
                let reason = match declared {
                    Some((e, _)) if e != UTF_8 && !text.is_ascii() => Reason::ValidUtf8Despite(e),
                    Some((e, reason)) if e != UTF_8 => reason,
                    _ => Reason::ValidUtf8,
                };
                let encoding = match reason {
                    Reason::ValidUtf8 | Reason::ValidUtf8Despite(_) => UTF_8,
                    _ => declared.map_or(UTF_8, |(e, _)| e),
                };
                return Decoded {
                    text,
                    encoding,
                    reason,
                    malformed: 0,
                };
            }
            Err(e) => return decode_undeclared_or(&e.into_bytes(), declared),
        }
    }
    decode_undeclared_or(&bytes, declared)
}

/// Decodes bytes that are not valid UTF-8 (or may be ISO-2022-JP): as declared, else as
/// UTF-16 told by NUL bytes, else as detected.
fn decode_undeclared_or(bytes: &[u8], declared: Option<(&'static Encoding, Reason)>) -> Decoded {
    if let Some((encoding, reason)) = declared {
        return decode_with(bytes, encoding, reason);
    }
    if let Some(encoding) = utf16_by_nuls(bytes) {
        return decode_with(bytes, encoding, Reason::Utf16Nuls);
    }
    decode_with(bytes, detect(bytes), Reason::Detected)
}

/// Decodes `bytes` (without a byte order mark) from `encoding`, counting malformed sequences.
pub(crate) fn decode_with(bytes: &[u8], encoding: &'static Encoding, reason: Reason) -> Decoded {
    let (text, malformed) = decode_counting(bytes, encoding);
    Decoded {
        text,
        encoding,
        reason,
        malformed,
    }
}

/// `bytes` decoded from `encoding`, each malformed sequence replaced by U+FFFD, and how many
/// there were.
pub(crate) fn decode_counting(bytes: &[u8], encoding: &'static Encoding) -> (String, u64) {
    let mut decoder = encoding.new_decoder_without_bom_handling();
    let mut text = String::with_capacity(
        decoder
            .max_utf8_buffer_length_without_replacement(bytes.len())
            .unwrap_or(bytes.len()),
    );
    let mut malformed = 0;
    let mut rest = bytes;
    loop {
        let (result, read) = decoder.decode_to_string_without_replacement(rest, &mut text, true);
        rest = &rest[read..];
        match result {
            encoding_rs::DecoderResult::InputEmpty => return (text, malformed),
            encoding_rs::DecoderResult::Malformed(_, _) => {
                malformed += 1;
                text.push('\u{FFFD}');
            }
            encoding_rs::DecoderResult::OutputFull => {
                let more = decoder
                    .max_utf8_buffer_length_without_replacement(rest.len())
                    .unwrap_or(rest.len())
                    .max(16);
                text.reserve(more);
            }
        }
    }
}

/// How many bytes of a text detection looks at: a page's worth. The detector reads about
/// 5–10 MB/s, the decoders over 100 MB/s, so a long text is told by its start.
const DETECT_BYTES: usize = 1 << 16;

/// The charset `chardetng` guesses for `bytes` (no top-level domain known) from their first
/// 64 KiB. UTF-8 and ISO-2022-JP may be guessed: the text is only read, no script of a page is
/// run.
pub fn detect(bytes: &[u8]) -> &'static Encoding {
    use chardetng::{EncodingDetector, Iso2022JpDetection, Utf8Detection};
    let mut detector = EncodingDetector::new(Iso2022JpDetection::Allow);
    detector.feed(&bytes[..bytes.len().min(DETECT_BYTES)], true);
    detector.guess(None, Utf8Detection::Allow)
}

/// The charset a label names, by the Encoding Standard's table (`latin1` is windows-1252,
/// `cp1251` and `x-cp1251` are windows-1251).
pub fn for_label(label: &str) -> Option<&'static Encoding> {
    Encoding::for_label(label.trim().as_bytes())
}

/// UTF-16LE or UTF-16BE when one byte in ten or more of one parity of the first 4096 is NUL
/// while the other parity has few (the high bytes of Latin text in UTF-16).
pub(crate) fn utf16_by_nuls(bytes: &[u8]) -> Option<&'static Encoding> {
    let head = &bytes[..bytes.len().min(4096)];
    if head.len() < 4 {
        return None;
    }
    let nuls = |start: usize| {
        head.iter()
            .skip(start)
            .step_by(2)
            .filter(|&&b| b == 0)
            .count()
    };
    let (even, odd) = (nuls(0), nuls(1));
    let pairs = head.len() / 2;
    if odd * 10 >= pairs && even * 4 <= odd {
        Some(UTF_16LE)
    } else if even * 10 >= pairs && odd * 4 <= even {
        Some(UTF_16BE)
    } else {
        None
    }
}

/// The charset a `<meta charset>` or `<meta http-equiv="Content-Type" content="…charset=…">`
/// in the first 1024 bytes declares: the Encoding Standard's prescan (comments skipped, other
/// tags' attributes read past, UTF-16 declarations read as UTF-8, `x-user-defined` as
/// windows-1252).
pub fn prescan(bytes: &[u8]) -> Option<&'static Encoding> {
    let bytes = &bytes[..bytes.len().min(PRESCAN_BYTES)];
    let mut at = 0;
    while at < bytes.len() {
        let rest = &bytes[at..];
        if rest.starts_with(b"<!--") {
            at += 2 + find(&rest[2..], b"-->")? + 3;
        } else if starts_with_ignore_case(rest, b"<meta")
            && rest.get(5).is_some_and(|&b| is_space(b) || b == b'/')
        {
            at += 6;
            if let Some(encoding) = meta_charset(bytes, &mut at)? {
                return Some(match encoding {
                    e if e == UTF_16BE || e == UTF_16LE => UTF_8,
                    e if e == X_USER_DEFINED => WINDOWS_1252,
                    e => e,
                });
            }
        } else if rest.len() > 1
            && rest[0] == b'<'
            && (rest[1].is_ascii_alphabetic()
                || rest[1] == b'/' && rest.get(2).is_some_and(u8::is_ascii_alphabetic))
        {
            at += rest
                .iter()
                .position(|&b| is_space(b) || b == b'>')
                .unwrap_or(rest.len());
            while attribute(bytes, &mut at)?.is_some() {}
        } else if rest.starts_with(b"<!") || rest.starts_with(b"</") || rest.starts_with(b"<?") {
            at += find(rest, b">")? + 1;
        } else {
            at += 1;
        }
    }
    None
}

/// Reads the attributes of a `<meta>` element from `at`: `Some(Some(charset))` when they
/// declare one, `Some(None)` when they do not, `None` when the bytes end inside the element.
fn meta_charset(bytes: &[u8], at: &mut usize) -> Option<Option<&'static Encoding>> {
    let mut seen: Vec<Vec<u8>> = Vec::new();
    let mut got_pragma = false;
    let mut need_pragma = None;
    let mut charset = None;
    while let Some((name, value)) = attribute(bytes, at)? {
        if seen.contains(&name) {
            continue;
        }
        match name.as_slice() {
            b"http-equiv" => got_pragma |= value == b"content-type",
            b"content" if charset.is_none() => {
                if let Some(found) = charset_in_content(&value) {
                    charset = Encoding::for_label(found);
                    need_pragma = Some(true);
                }
            }
            b"charset" => {
                charset = Encoding::for_label(&value);
                need_pragma = Some(false);
            }
            _ => {}
        }
        seen.push(name);
    }
    Some(match need_pragma {
        None => None,
        Some(true) if !got_pragma => None,
        _ => charset,
    })
}

/// The next attribute of a tag from `at` (name and value in ASCII lower case), `Some(None)` at
/// the tag's `>`, `None` when the bytes end first (the Encoding Standard's "get an attribute").
#[allow(clippy::type_complexity)]
fn attribute(bytes: &[u8], at: &mut usize) -> Option<Option<(Vec<u8>, Vec<u8>)>> {
    while is_space(*bytes.get(*at)?) || bytes[*at] == b'/' {
        *at += 1;
    }
    if bytes[*at] == b'>' {
        return Some(None);
    }
    let mut name = Vec::new();
    loop {
        let b = *bytes.get(*at)?;
        match b {
            b'=' if !name.is_empty() => {
                *at += 1;
                break;
            }
            _ if is_space(b) => {
                while is_space(*bytes.get(*at)?) {
                    *at += 1;
                }
                if bytes[*at] != b'=' {
                    return Some(Some((name, Vec::new())));
                }
                *at += 1;
                break;
            }
            b'/' | b'>' => return Some(Some((name, Vec::new()))),
            _ => name.push(b.to_ascii_lowercase()),
        }
        *at += 1;
    }
    while is_space(*bytes.get(*at)?) {
        *at += 1;
    }
    let mut value = Vec::new();
    let first = bytes[*at];
    if first == b'"' || first == b'\'' {
        loop {
            *at += 1;
            let b = *bytes.get(*at)?;
            if b == first {
                *at += 1;
                return Some(Some((name, value)));
            }
            value.push(b.to_ascii_lowercase());
        }
    }
    if first == b'>' {
        return Some(Some((name, value)));
    }
    loop {
        let b = *bytes.get(*at)?;
        if is_space(b) || b == b'>' {
            return Some(Some((name, value)));
        }
        value.push(b.to_ascii_lowercase());
        *at += 1;
    }
}

/// The charset named in a `content` attribute's value (`text/html; charset=koi8-r`), by the
/// HTML standard's "extracting a character encoding from a meta element".
fn charset_in_content(content: &[u8]) -> Option<&[u8]> {
    let mut at = 0;
    loop {
        at += find_ignore_case(&content[at..], b"charset")? + 7;
        while content.get(at).is_some_and(|&b| is_space(b)) {
            at += 1;
        }
        if content.get(at) != Some(&b'=') {
            continue;
        }
        at += 1;
        while content.get(at).is_some_and(|&b| is_space(b)) {
            at += 1;
        }
        let rest = &content[at..];
        return match rest.first() {
            Some(&quote @ (b'"' | b'\'')) => {
                let end = rest[1..].iter().position(|&b| b == quote)?;
                Some(&rest[1..1 + end])
            }
            Some(_) => {
                let end = rest
                    .iter()
                    .position(|&b| is_space(b) || b == b';')
                    .unwrap_or(rest.len());
                Some(&rest[..end])
            }
            None => None,
        };
    }
}

fn is_space(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | 0x0C | b'\r' | b' ')
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(haystack, needle)
}

fn find_ignore_case(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|w| w.eq_ignore_ascii_case(needle))
}

fn starts_with_ignore_case(bytes: &[u8], prefix: &[u8]) -> bool {
    bytes.len() >= prefix.len() && bytes[..prefix.len()].eq_ignore_ascii_case(prefix)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encoded(text: &str, label: &str) -> Vec<u8> {
        let encoding = for_label(label).unwrap();
        let (bytes, _, unmappable) = encoding.encode(text);
        assert!(!unmappable, "{text} in {label}");
        bytes.into_owned()
    }

    #[test]
    fn the_prescan_finds_meta_charset_and_http_equiv() {
        assert_eq!(
            prescan(b"<meta charset=\"windows-1251\">"),
            for_label("cp1251")
        );
        assert_eq!(
            prescan(
                b"<html><head><META HTTP-EQUIV='Content-Type' CONTENT='text/html; charset=KOI8-R'>"
            ),
            for_label("koi8-r")
        );
        // A content charset without the pragma is not a declaration.
        assert_eq!(
            prescan(b"<meta content=\"text/html; charset=koi8-r\">"),
            None
        );
        // A meta inside a comment, or past the first 1024 bytes, is not read.
        assert_eq!(prescan(b"<!-- <meta charset=big5> --><p>x"), None);
        let mut late = vec![b' '; 1100];
        late.extend_from_slice(b"<meta charset=big5>");
        assert_eq!(prescan(&late), None);
        // An attribute holding `<meta` is read past.
        assert_eq!(
            prescan(b"<a title='<meta charset=big5>'><meta charset=euc-kr>"),
            for_label("euc-kr")
        );
        // UTF-16 declared in the bytes of an ASCII-compatible page is UTF-8.
        assert_eq!(prescan(b"<meta charset=utf-16le>"), Some(UTF_8));
        assert_eq!(
            prescan(b"<meta charset=x-user-defined>"),
            Some(WINDOWS_1252)
        );
        assert_eq!(prescan(b"<meta charset=no-such-thing>"), None);
        assert_eq!(prescan(b"<meta charset="), None);
    }

    #[test]
    fn valid_utf8_is_utf8_and_kept_without_a_copy_of_its_own() {
        let page = "<meta charset=windows-1251><p>Привет</p>"
            .as_bytes()
            .to_vec();
        let decoded = decode(page.clone(), TextKind::Html, None);
        assert_eq!(decoded.text.as_bytes(), page);
        assert_eq!(
            decoded.reason,
            Reason::ValidUtf8Despite(for_label("windows-1251").unwrap())
        );
        let ascii = decode(
            b"<meta charset=koi8-r><p>plain".to_vec(),
            TextKind::Html,
            None,
        );
        assert_eq!(
            (ascii.encoding.name(), ascii.reason),
            ("KOI8-R", Reason::Meta)
        );
    }

    #[test]
    fn a_declared_page_is_decoded_from_its_charset() {
        let text = "<meta charset=\"windows-1251\"><p>Министерство сообщило</p>";
        let decoded = decode(encoded(text, "windows-1251"), TextKind::Html, None);
        assert_eq!(decoded.text, text);
        assert_eq!(decoded.reason, Reason::Meta);
        assert!(decoded
            .explain()
            .starts_with("windows-1251, declared by a <meta>"));
    }

    #[test]
    fn the_transport_comes_before_the_meta() {
        let text = "<meta charset=\"windows-1251\"><p>Министерство</p>";
        let koi8 = for_label("koi8-r");
        let decoded = decode(encoded(text, "koi8-r"), TextKind::Html, koi8);
        assert_eq!(
            (decoded.text.as_str(), decoded.reason),
            (text, Reason::Transport)
        );
    }

    #[test]
    fn an_undeclared_text_is_detected() {
        let text = "Правительство объявило сегодня о новых мерах поддержки малого бизнеса в регионах страны.";
        let decoded = decode(encoded(text, "windows-1251"), TextKind::Plain, None);
        assert_eq!(
            (
                decoded.text.as_str(),
                decoded.encoding.name(),
                decoded.reason
            ),
            (text, "windows-1251", Reason::Detected)
        );
    }

    #[test]
    fn byte_order_marks_and_utf16_nuls() {
        let text = "Grüße aus Köln";
        let mut le = vec![0xFF, 0xFE];
        le.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
        let decoded = decode(le, TextKind::Plain, None);
        assert_eq!(
            (decoded.text.as_str(), decoded.reason),
            (text, Reason::ByteOrderMark)
        );
        let ascii: Vec<u8> = "one two"
            .encode_utf16()
            .flat_map(u16::to_le_bytes)
            .collect();
        let decoded = decode(ascii, TextKind::Html, None);
        assert_eq!(decoded.text, "one two");
        assert_eq!(decoded.reason, Reason::Utf16Nuls);
        let be: Vec<u8> = text.encode_utf16().flat_map(u16::to_be_bytes).collect();
        let decoded = decode(be, TextKind::Plain, None);
        assert_eq!(
            (decoded.text.as_str(), decoded.reason),
            (text, Reason::Utf16Nuls)
        );
        let decoded = decode(b"\xEF\xBB\xBFplain".to_vec(), TextKind::Html, None);
        assert_eq!(decoded.text, "plain");
    }

    #[test]
    fn malformed_sequences_are_replaced_and_counted() {
        let decoded = decode(
            b"<meta charset=utf-8>caf\xC3 \xFF ok".to_vec(),
            TextKind::Html,
            None,
        );
        assert_eq!(decoded.text, "<meta charset=utf-8>caf\u{FFFD} \u{FFFD} ok");
        assert_eq!(decoded.malformed, 2);
        assert!(decoded
            .explain()
            .ends_with("; 2 malformed byte sequences replaced by U+FFFD"));
    }

    #[test]
    fn iso_2022_jp_declared_is_believed() {
        let text = "<meta charset=iso-2022-jp><p>日本語のテキスト</p>";
        let decoded = decode(encoded(text, "iso-2022-jp"), TextKind::Html, None);
        assert_eq!(
            (decoded.text.as_str(), decoded.reason),
            (text, Reason::Meta)
        );
    }
}
