//! Whether a text is HTML: a well-formed tag of a known element (the table of
//! `data/html-elements.txt`) or a `<!DOCTYPE html`, told apart from angle brackets in prose.
//! This is a guess made before any tokenizing, for `html = "auto"` and for whole files.

use super::{is_one_of, HIDDEN_ELEMENTS};

/// True when the text holds a well-formed tag of a known HTML element (the table of
/// `data/html-elements.txt`, with its source), or starts a document with `<!DOCTYPE html`.
/// Inline markup alone is HTML (`<strong>Breaking:</strong> the mayor said <b>no</b>`); an
/// angle bracket in prose is not (`a < b > c`, `x<y`, `<netinet/in.h>`,
/// `<john@example.com>`). See `is_html_tag` for what counts as well formed.
pub(crate) fn looks_like_html(text: &str) -> bool {
    let bytes = text.as_bytes();
    memchr::memchr_iter(b'<', bytes).any(|at| is_html_tag(&bytes[at..]))
}

/// The longest start tag taken as evidence of HTML, in bytes: a bound on the work per `<`.
const MAX_TAG_BYTES: usize = 1024;

/// True when `bytes` (starting at a `<`) open with a well-formed tag of a known element:
///
/// - an end tag `</name>` (spaces allowed before the `>`);
/// - a start tag `<name>` or `<name/>`, or `<name` followed by attributes (`key`, `key=value`,
///   `key="value"`, `key='value'`) of which at least one has a value: `<b and c>` in
///   `a<b and c>d` is a comparison, not a tag;
/// - `<!DOCTYPE html`.
///
/// The start tag of an element whose content is hidden (`<script>`, `<title>`, `<style>`,
/// ...) counts only through its end tag: in "use the `<title>` tag" it is prose, and taking the
/// text for HTML would drop everything after it.
fn is_html_tag(bytes: &[u8]) -> bool {
    let inner = &bytes[1..bytes.len().min(MAX_TAG_BYTES)];
    if let Some(rest) = inner.strip_prefix(b"/") {
        let (name, after) = split_name(rest);
        return is_element_name(name) && trim_start_whitespace(after).first() == Some(&b'>');
    }
    if inner.len() > 13 && inner[..13].eq_ignore_ascii_case(b"!doctype html") {
        return matches!(inner[13], b'>' | b' ' | b'\t' | b'\n' | b'\r' | b'\x0c');
    }
    let (name, after) = split_name(inner);
    if !is_element_name(name) {
        return false;
    }
    let name = std::str::from_utf8(name).unwrap_or_default();
    !is_one_of(name, &HIDDEN_ELEMENTS) && ends_start_tag(after)
}

/// The element name at the start of `bytes` (ASCII letters and digits, starting with a
/// letter) and what follows it.
fn split_name(bytes: &[u8]) -> (&[u8], &[u8]) {
    if !bytes.first().is_some_and(u8::is_ascii_alphabetic) {
        return (&[], bytes);
    }
    let length = bytes
        .iter()
        .take_while(|b| b.is_ascii_alphanumeric())
        .count();
    bytes.split_at(length)
}

/// True for a known element name, in any case.
fn is_element_name(name: &[u8]) -> bool {
    static NAMES: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    let names = NAMES.get_or_init(|| {
        include_str!("../../../data/html-elements.txt")
            .lines()
            .map(str::trim)
            .filter(|line| !line.is_empty() && !line.starts_with('#'))
            .collect()
    });
    !name.is_empty()
        && name.len() <= 16
        && names
            .binary_search_by(|known| {
                known
                    .bytes()
                    .cmp(name.iter().map(|b| b.to_ascii_lowercase()))
            })
            .is_ok()
}

fn is_html_whitespace(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0c')
}

fn trim_start_whitespace(bytes: &[u8]) -> &[u8] {
    let blank = bytes.iter().take_while(|&&b| is_html_whitespace(b)).count();
    &bytes[blank..]
}

/// True when `bytes`, what follows a start tag's name, is `>`, `/>`, or white space and
/// well-formed attributes up to `>` or `/>`, at least one with a value.
fn ends_start_tag(bytes: &[u8]) -> bool {
    let mut rest = bytes;
    let (mut attributes, mut valued) = (0, false);
    loop {
        let had_space = rest.first().is_some_and(|&b| is_html_whitespace(b));
        rest = trim_start_whitespace(rest);
        match rest {
            [b'>', ..] | [b'/', b'>', ..] => return attributes == 0 || valued,
            [] => return false,
            _ if !had_space => return false,
            _ => {}
        }
        let key = rest
            .iter()
            .take_while(|&&b| {
                !is_html_whitespace(b) && !matches!(b, b'"' | b'\'' | b'>' | b'/' | b'=' | b'<')
            })
            .count();
        if key == 0 {
            return false;
        }
        attributes += 1;
        rest = &rest[key..];
        let after_key = trim_start_whitespace(rest);
        let Some(value) = after_key.strip_prefix(b"=") else {
            continue;
        };
        let value = trim_start_whitespace(value);
        let length = match value.first() {
            Some(&quote @ (b'"' | b'\'')) => match memchr::memchr(quote, &value[1..]) {
                Some(end) => end + 2,
                None => return false,
            },
            _ => value
                .iter()
                .take_while(|&&b| {
                    !is_html_whitespace(b) && !matches!(b, b'"' | b'\'' | b'=' | b'<' | b'>' | b'`')
                })
                .count(),
        };
        if length == 0 {
            return false;
        }
        valued = true;
        rest = &value[length..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_markup_alone_is_html() {
        for text in [
            "<strong>Breaking:</strong> <em>the</em> mayor said <b>no</b>",
            "the mayor said <i>no</i>",
            "line one<br>line two",
            "see <a href=\"https://example.com/x\">the report</a> today",
            "see <a href=https://example.com/x>the report",
            "<abbr title='World Health Organization'>WHO</abbr> said",
            "<CENTER>old page</CENTER>",
            "H<sub>2</sub>O and E = mc<sup>2</sup>",
            "<!DOCTYPE html>\nHello",
            "story text <script>var x = 1;</script> more text",
            "closed only </p > here",
            "<img src=\"a.png\" alt=\"\"/>",
            "<input disabled value=\"x\">",
            "text<br/>more",
            "<P>Upper case</P>",
        ] {
            assert!(looks_like_html(text), "{text}");
        }
    }

    #[test]
    fn angle_brackets_in_prose_are_text() {
        for text in [
            "a < b > c",
            "a < b and c > d",
            "x<y",
            "if x<y and y>z then",
            "a<b and c>d",
            "see <http://example.com> and <netinet/in.h>",
            "write to <john@example.com> or <a@b.c>",
            "use the <title> tag, then <script> after it",
            "<3 and <- arrows -> and <<quotes>>",
            "<b-b> <p1x>? <bx> <  p> <p",
            "<a href=\"never closed>",
            "<a href=>",
        ] {
            assert!(!looks_like_html(text), "{text}");
        }
    }

    #[test]
    fn the_element_table_is_sorted_lowercase_and_complete() {
        let names: Vec<&str> = include_str!("../../../data/html-elements.txt")
            .lines()
            .filter(|line| !line.is_empty() && !line.starts_with('#'))
            .collect();
        assert_eq!(names.len(), 149);
        assert!(
            names.windows(2).all(|w| w[0] < w[1]),
            "sorted, no duplicates"
        );
        assert!(names.iter().all(|n| n
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())));
        for name in [
            "a", "b", "em", "strong", "script", "font", "center", "h6", "search",
        ] {
            assert!(is_element_name(name.as_bytes()), "{name}");
        }
        assert!(is_element_name(b"STRONG"));
        assert!(!is_element_name(b"y") && !is_element_name(b"scripture"));
    }
}
