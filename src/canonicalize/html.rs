//! HTML to text: comments and `<script>`/`<style>`/`<noscript>`/`<template>` elements are dropped
//! with their content, every other tag becomes a space, and every HTML5 named and numeric
//! character reference is decoded (the entity table is `html-escape`'s).

use std::borrow::Cow;

/// Elements whose content is never text of the page.
const HIDDEN_ELEMENTS: [&str; 4] = ["script", "style", "noscript", "template"];

/// True when the text holds something that looks like an HTML tag (`<p`, `</div`, `<!--`, `<br/>`).
pub fn looks_like_html(text: &str) -> bool {
    let bytes = text.as_bytes();
    memchr_iter(b'<', bytes).any(|i| tag_end(bytes, i).is_some())
}

/// The text of an HTML document or fragment: tags removed, hidden elements and comments dropped,
/// entities decoded.
pub fn html_to_text(html: &str) -> String {
    let stripped = strip_tags(html);
    match html_escape::decode_html_entities(&stripped) {
        Cow::Borrowed(_) => stripped,
        Cow::Owned(decoded) => decoded,
    }
}

/// Decodes character references in text that is not HTML otherwise.
pub fn decode_entities(text: &str) -> Cow<'_, str> {
    html_escape::decode_html_entities(text)
}

/// Removes tags, comments and hidden elements; each removed piece becomes one space.
fn strip_tags(html: &str) -> String {
    let bytes = html.as_bytes();
    let mut out = String::with_capacity(html.len());
    let mut copied = 0;
    let mut pos = 0;
    while let Some(offset) = bytes[pos..].iter().position(|&b| b == b'<') {
        let start = pos + offset;
        let Some(end) = tag_end(bytes, start) else {
            pos = start + 1;
            continue;
        };
        out.push_str(&html[copied..start]);
        out.push(' ');
        let tag = &bytes[start + 1..end];
        let resume = if tag.starts_with(b"!--") {
            // A comment runs to `-->`, not to the first `>`.
            find(bytes, start + 4, b"-->").map_or(bytes.len(), |i| i + 3)
        } else if let Some(name) = hidden_element(tag) {
            find_closing_tag(bytes, end + 1, name).unwrap_or(bytes.len())
        } else {
            end + 1
        };
        copied = resume;
        pos = resume;
    }
    out.push_str(&html[copied..]);
    out
}

/// The index of the `>` closing the tag that starts at `start`, when `<` opens a tag:
/// `<` followed by a letter, `/`, `!` or `?`.
fn tag_end(bytes: &[u8], start: usize) -> Option<usize> {
    let next = *bytes.get(start + 1)?;
    if !(next.is_ascii_alphabetic() || matches!(next, b'/' | b'!' | b'?')) {
        return None;
    }
    bytes[start + 1..]
        .iter()
        .position(|&b| b == b'>')
        .map(|i| start + 1 + i)
}

/// The hidden element a start tag opens, if any.
fn hidden_element(tag: &[u8]) -> Option<&'static str> {
    HIDDEN_ELEMENTS.into_iter().find(|name| {
        tag.len() >= name.len()
            && tag[..name.len()].eq_ignore_ascii_case(name.as_bytes())
            && tag
                .get(name.len())
                .is_none_or(|&b| b.is_ascii_whitespace() || b == b'/' || b == b'>')
            && !tag.ends_with(b"/")
    })
}

/// The position after `</name ...>` at or after `from`.
fn find_closing_tag(bytes: &[u8], from: usize, name: &str) -> Option<usize> {
    let mut pos = from;
    while let Some(i) = find(bytes, pos, b"</") {
        let after = i + 2;
        let candidate = bytes.get(after..after + name.len())?;
        if candidate.eq_ignore_ascii_case(name.as_bytes()) {
            let close = bytes[after..].iter().position(|&b| b == b'>')?;
            return Some(after + close + 1);
        }
        pos = after;
    }
    None
}

fn find(haystack: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    haystack
        .get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|i| from + i)
}

fn memchr_iter(needle: u8, haystack: &[u8]) -> impl Iterator<Item = usize> + '_ {
    haystack
        .iter()
        .enumerate()
        .filter(move |&(_, &b)| b == needle)
        .map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_become_spaces_and_hidden_content_goes() {
        let html = "<html><head><style>p{color:red}</style><script>var a='<b>';</script></head>\
                    <body><!-- note <p>x</p> --><p>Hello&nbsp;<b>world</b></p>&laquo;ok&raquo;</body></html>";
        let text = html_to_text(html);
        let words: Vec<&str> = text.split_whitespace().collect();
        assert_eq!(words, ["Hello", "world", "«ok»"]);
    }

    #[test]
    fn numeric_and_hex_references_are_decoded() {
        assert_eq!(html_to_text("&#1040;&#x43F; &amp; &mdash;"), "Ап & —");
    }

    #[test]
    fn a_lone_angle_bracket_is_text() {
        assert!(!looks_like_html("a < b and c > d"));
        assert_eq!(html_to_text("a < b"), "a < b");
        assert!(looks_like_html("text<br/>more"));
    }

    #[test]
    fn unclosed_script_drops_the_rest() {
        assert_eq!(html_to_text("keep<script>lost").trim(), "keep");
    }

    #[test]
    fn script_like_names_are_not_hidden() {
        assert_eq!(html_to_text("<scripture>a</scripture>").trim(), "a");
    }
}
