//! HTML to text. Two ways:
//!
//! - [`html_to_text`]: every tag becomes a space, comments and `<script>`/`<style>`/
//!   `<noscript>`/`<template>`/`<title>` elements are dropped with their content.
//! - [`main_text`]: the page's article text, Readability-style. Elements that are page furniture
//!   by their tag (`nav`, `header`, `footer`, `aside`, `form`, ...), their ARIA role
//!   (`navigation`, `banner`, `contentinfo`, `dialog`, ...) or their class and id (the names
//!   Readability treats as unlikely candidates: menu, sidebar, related, share, social,
//!   comment, cookie banner, ...) are dropped, and so is any block whose text is mostly link
//!   text (menus and "most read" lists that carry no telling names).
//!
//! Both decode every HTML5 named and numeric character reference (the entity table is
//! `html-escape`'s). Tags are read by a small tolerant tokenizer: unclosed elements are closed
//! by their parent's end tag, and stray end tags are ignored.

use std::borrow::Cow;

use super::tokens;

/// Elements whose content is never text of the page.
const HIDDEN_ELEMENTS: [&str; 7] = [
    "script", "style", "noscript", "template", "title", "svg", "iframe",
];

/// Elements without content.
const VOID_ELEMENTS: [&str; 15] = [
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
    "track", "wbr", "amp-img",
];

/// Elements that do not break a word: `wo<b>r</b>d` is one word.
const INLINE_ELEMENTS: [&str; 14] = [
    "a", "abbr", "b", "em", "font", "i", "mark", "q", "s", "small", "span", "strong", "sub", "sup",
];

/// Elements that are page furniture wherever they stand.
const FURNITURE_ELEMENTS: [&str; 9] = [
    "nav",
    "header",
    "footer",
    "aside",
    "form",
    "button",
    "select",
    "figcaption",
    "menu",
];

/// ARIA roles of page furniture.
const FURNITURE_ROLES: [&str; 11] = [
    "navigation",
    "banner",
    "contentinfo",
    "complementary",
    "dialog",
    "alertdialog",
    "search",
    "menu",
    "menubar",
    "toolbar",
    "alert",
];

/// Class and id words of page furniture: Readability's unlikely candidates and negative
/// names, and the usual names of share bars, bylines, consent banners and sign-up boxes. A
/// word matches the start of any `-`/`_`-separated part of a class or id.
const FURNITURE_NAMES: [&str; 38] = [
    "ad-break",
    "agegate",
    "author",
    "banner",
    "breadcrumb",
    "byline",
    "combx",
    "comment",
    "community",
    "consent",
    "cookie",
    "cover-wrap",
    "dateline",
    "disqus",
    "footer",
    "gdpr",
    "header",
    "legends",
    "logo",
    "masthead",
    "menu",
    "nav",
    "newsletter",
    "outbrain",
    "pager",
    "pagination",
    "popup",
    "promo",
    "related",
    "remark",
    "replies",
    "rss",
    "share",
    "shoutbox",
    "sidebar",
    "social",
    "sponsor",
    "subscribe",
];

/// More names that mark furniture but need a whole-word match.
const FURNITURE_WORDS: [&str; 4] = ["tags", "tag", "widget", "skyscraper"];

/// Elements that hold the article and are never furniture, whatever their class.
const ARTICLE_ELEMENTS: [&str; 4] = ["html", "body", "main", "article"];

/// Blocks tested for link density.
const LINK_DENSITY_BLOCKS: [&str; 11] = [
    "ul", "ol", "li", "div", "p", "td", "table", "section", "dl", "tr", "center",
];

/// True when the text holds a well-formed tag of a known HTML element (the table of
/// `data/html-elements.txt`, with its source), or starts a document with `<!DOCTYPE html`.
/// Inline markup alone is HTML (`<strong>Breaking:</strong> the mayor said <b>no</b>`); an
/// angle bracket in prose is not (`a < b > c`, `x<y`, `<netinet/in.h>`,
/// `<john@example.com>`). See `is_html_tag` for what counts as well formed.
pub fn looks_like_html(text: &str) -> bool {
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
        include_str!("../../data/html-elements.txt")
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

/// The text of an HTML document or fragment: tags removed, hidden elements and comments
/// dropped, entities decoded.
pub fn html_to_text(html: &str) -> String {
    let mut out = String::new();
    let mut page = PageText::new(html);
    while let Some(chunk) = page.next_chunk() {
        out.push_str(chunk);
    }
    out
}

/// Bytes of page text gathered before they are decoded.
const PAGE_CHUNK_BYTES: usize = 64 << 10;

/// The text [`html_to_text`] gives, a chunk at a time, so that a long page's text need never
/// be held whole: tags become spaces as they are read, and character references are decoded
/// one chunk at a time. A chunk ends before a `&` or an ASCII whitespace character, which no
/// reference holds, so the chunks decode as the whole text does.
pub struct PageText<'a> {
    tokens: Tokens<'a>,
    /// The rest of the text token being read.
    text: &'a str,
    /// Page text read and not yet decoded.
    raw: String,
    /// The last chunk decoded.
    decoded: String,
    /// How much of `decoded` [`PageText::skip`] has passed.
    skipped: usize,
    chunk_bytes: usize,
}

impl<'a> PageText<'a> {
    /// The text of `html`, read from its start.
    pub fn new(html: &'a str) -> Self {
        PageText::with_chunk_bytes(html, PAGE_CHUNK_BYTES)
    }

    fn with_chunk_bytes(html: &'a str, chunk_bytes: usize) -> Self {
        PageText {
            tokens: Tokens::new(html),
            text: "",
            raw: String::new(),
            decoded: String::new(),
            skipped: 0,
            chunk_bytes,
        }
    }

    /// The next chunk of the page's text (never empty); `None` at the end.
    pub fn next_chunk(&mut self) -> Option<&str> {
        let mut want = self.chunk_bytes;
        let mut searched = 0;
        let end = loop {
            let more = self.read_up_to(want);
            if !more {
                break self.raw.len();
            }
            // The last `&` or ASCII whitespace ends the chunk before it.
            let found = self.raw.as_bytes()[searched..]
                .iter()
                .rposition(|&b| b == b'&' || b.is_ascii_whitespace())
                .map(|at| searched + at)
                .filter(|&at| at > 0);
            match found {
                Some(end) => break end,
                None => {
                    searched = self.raw.len();
                    want = self.raw.len() + self.chunk_bytes;
                }
            }
        };
        if end == 0 {
            return None;
        }
        self.decoded.clear();
        self.skipped = 0;
        if memchr::memchr(b'&', &self.raw.as_bytes()[..end]).is_some() {
            html_escape::decode_html_entities_to_string(&self.raw[..end], &mut self.decoded);
            self.raw.drain(..end);
        } else if end == self.raw.len() {
            // Nothing to decode, and nothing left over: the text read is the chunk.
            std::mem::swap(&mut self.raw, &mut self.decoded);
        } else {
            self.decoded.push_str(&self.raw[..end]);
            self.raw.drain(..end);
        }
        Some(&self.decoded)
    }

    /// Whether the text goes on with `text` (from where the last call left it, or from the
    /// start); reads past it when it does.
    pub fn skip(&mut self, mut text: &[u8]) -> bool {
        while !text.is_empty() {
            if self.skipped == self.decoded.len() && self.next_chunk().is_none() {
                return false;
            }
            let rest = &self.decoded.as_bytes()[self.skipped..];
            let n = rest.len().min(text.len());
            if rest[..n] != text[..n] {
                return false;
            }
            self.skipped += n;
            text = &text[n..];
        }
        true
    }

    /// Whether the text ends where [`PageText::skip`] left it; reads to the end.
    pub fn skip_to_end(&mut self) -> bool {
        self.skipped == self.decoded.len() && self.next_chunk().is_none()
    }

    /// Reads tokens until `want` bytes of page text are held; false when the page ends first.
    fn read_up_to(&mut self, want: usize) -> bool {
        while self.raw.len() < want {
            if !self.text.is_empty() {
                let mut take = (want - self.raw.len()).min(self.text.len());
                while !self.text.is_char_boundary(take) {
                    take += 1;
                }
                self.raw.push_str(&self.text[..take]);
                self.text = &self.text[take..];
                continue;
            }
            match self.tokens.next() {
                None => return false,
                Some(Token::Text(text)) => self.text = text,
                Some(Token::Start { name, .. } | Token::End { name }) if is_inline(name) => {}
                Some(_) => self.raw.push(' '),
            }
        }
        true
    }
}

/// The number of words of `text`, as shingling finds them ([`tokens::for_each_word`]): a
/// character of Chinese or Khmer counts as a word, as a word of English does, so the share of
/// a page that is its article means the same in every script.
pub fn count_words(text: &str) -> usize {
    let mut words = 0;
    tokens::for_each_word(text, |_| words += 1);
    words
}

/// The number of words ([`count_words`]) in the text of `html`, read a chunk at a time.
pub fn page_words(html: &str) -> usize {
    words_in_chunks(PageText::new(html))
}

fn words_in_chunks(mut page: PageText<'_>) -> usize {
    let mut words = 0;
    // The word that ends a chunk may go on in the next: it is counted with the next chunk.
    let mut unfinished = String::new();
    while let Some(chunk) = page.next_chunk() {
        unfinished.push_str(chunk);
        let text = unfinished.as_str();
        let mut last_start = None;
        tokens::for_each_word(text, |word| {
            words += 1;
            let start = word.as_ptr() as usize - text.as_ptr() as usize;
            last_start = (start + word.len() == text.len()).then_some(start);
        });
        match last_start {
            Some(start) => {
                words -= 1;
                unfinished.drain(..start);
            }
            None => unfinished.clear(),
        }
    }
    words + count_words(&unfinished)
}

/// The article text of an HTML page: furniture and link lists dropped, entities decoded.
/// `None` when that leaves less than a fifth of the `page_words` words of the page's whole
/// text ([`page_words`]): a page with no recognizable structure keeps all its text.
pub fn main_text(html: &str, page_words: usize) -> Option<String> {
    let main = extract(html);
    let main_words = count_words(&main);
    (main_words > 0 && main_words * 5 >= page_words).then_some(main)
}

/// Decodes character references in text that is not HTML otherwise.
pub fn decode_entities(text: &str) -> Cow<'_, str> {
    // Every reference starts with `&`: the text before the first is copied as it is.
    let Some(first) = memchr::memchr(b'&', text.as_bytes()) else {
        return Cow::Borrowed(text);
    };
    match html_escape::decode_html_entities(&text[first..]) {
        Cow::Borrowed(_) => Cow::Borrowed(text),
        Cow::Owned(mut decoded) => {
            // In place: a long text is held twice at most, never three times.
            decoded.insert_str(0, &text[..first]);
            Cow::Owned(decoded)
        }
    }
}

fn is_inline(name: &str) -> bool {
    INLINE_ELEMENTS.iter().any(|e| e.eq_ignore_ascii_case(name))
}

fn is_one_of(name: &str, list: &[&str]) -> bool {
    list.iter().any(|e| e.eq_ignore_ascii_case(name))
}

/// One open element during extraction.
struct Frame<'a> {
    name: &'a str,
    out_start: usize,
    text_start: usize,
    link_start: usize,
}

/// The state of one main-text extraction: the text kept so far and the open elements.
#[derive(Default)]
struct Extraction<'a> {
    /// The text kept so far: decoded up to `decoded`, then as read.
    out: String,
    /// How much of `out` has its character references decoded. Text is decoded as it comes,
    /// up to its last `&` or ASCII whitespace (as [`PageText`] decodes), so that a long article
    /// is never held twice; tags that break text settle all of it first, so every place an
    /// element starts at is in decoded text.
    decoded: usize,
    /// No `&` or ASCII whitespace lies in `out` after `decoded` and before this.
    settled_search: usize,
    /// A `&` lies in `out` from `decoded` on: only then is there anything to decode.
    pending_amp: bool,
    /// Decode only at the end, as extraction once did (the tests' reference).
    #[cfg(test)]
    decode_at_end: bool,
    stack: Vec<Frame<'a>>,
    /// Depth of the furniture element whose content is being skipped.
    skip_from: Option<usize>,
    /// Open `<a>` elements.
    links: usize,
    /// Visible characters kept so far, and how many of them are link text.
    text_chars: usize,
    link_chars: usize,
}

impl<'a> Extraction<'a> {
    fn text(&mut self, text: &str) {
        if self.skip_from.is_some() {
            return;
        }
        let mut rest = text;
        while !rest.is_empty() {
            let mut take = PAGE_CHUNK_BYTES.min(rest.len());
            while !rest.is_char_boundary(take) {
                take += 1;
            }
            let piece = &rest[..take];
            self.pending_amp |= memchr::memchr(b'&', piece.as_bytes()).is_some();
            self.out.push_str(piece);
            rest = &rest[take..];
            self.decode(false);
        }
        let visible = text.chars().filter(|c| !c.is_whitespace()).count();
        self.text_chars += visible;
        if self.links > 0 {
            self.link_chars += visible;
        }
    }

    fn open(&mut self, name: &'a str, attributes: &str) {
        // An open <p>, <li>, <td>, ... is closed by its next sibling.
        while self
            .stack
            .last()
            .is_some_and(|top| implicitly_closed_by(top.name, name))
        {
            self.close_top();
        }
        if self.skip_from.is_none() && is_furniture(name, attributes) {
            self.skip_from = Some(self.stack.len());
        }
        if name.eq_ignore_ascii_case("a") {
            self.links += 1;
        }
        if !is_inline(name) {
            self.push_break('\n');
        }
        self.stack.push(Frame {
            name,
            out_start: self.out.len(),
            text_start: self.text_chars,
            link_start: self.link_chars,
        });
    }

    /// Closes the innermost open element named `name` and every element inside it; a stray end
    /// tag closes nothing.
    fn close(&mut self, name: &str) {
        if let Some(at) = self
            .stack
            .iter()
            .rposition(|f| f.name.eq_ignore_ascii_case(name))
        {
            while self.stack.len() > at {
                self.close_top();
            }
        }
    }

    /// Closes the innermost open element: ends a skip it started, or drops it when it is a
    /// block made mostly of link text.
    fn close_top(&mut self) {
        let Some(frame) = self.stack.pop() else {
            return;
        };
        if frame.name.eq_ignore_ascii_case("a") {
            self.links = self.links.saturating_sub(1);
        }
        if self.skip_from == Some(self.stack.len()) {
            self.skip_from = None;
            return;
        }
        if self.skip_from.is_some() {
            return;
        }
        let text = self.text_chars - frame.text_start;
        let linked = self.link_chars - frame.link_start;
        if is_one_of(frame.name, &LINK_DENSITY_BLOCKS) && text > 0 && linked * 2 > text {
            self.out.truncate(frame.out_start);
            // Every element starts in decoded text: what is left is all decoded.
            self.decoded = self.decoded.min(frame.out_start);
            self.settled_search = self.decoded;
            self.pending_amp &= frame.out_start > self.decoded;
            self.text_chars = frame.text_start;
            self.link_chars = frame.link_start;
        }
        if !is_inline(frame.name) {
            self.push_break('\n');
        }
    }

    /// Appends whitespace that tags leave, all text before it decoded.
    fn push_break(&mut self, c: char) {
        self.decode(true);
        self.out.push(c);
        self.decoded = self.out.len();
        self.settled_search = self.decoded;
        self.pending_amp = false;
    }

    /// Decodes the text not yet decoded: all of it with `whole`, else up to its last `&` or
    /// ASCII whitespace, before which a chunk of text decodes as the whole does.
    fn decode(&mut self, whole: bool) {
        #[cfg(test)]
        if self.decode_at_end {
            return;
        }
        if !self.pending_amp {
            self.decoded = self.out.len();
            self.settled_search = self.decoded;
            return;
        }
        let start = self.decoded;
        let end = if whole {
            self.out.len()
        } else {
            let from = self.settled_search.max(start);
            let last = self.out.as_bytes()[from..]
                .iter()
                .rposition(|&b| b == b'&' || b.is_ascii_whitespace());
            match last {
                Some(at) => from + at,
                None => {
                    self.settled_search = self.out.len();
                    return;
                }
            }
        };
        if end > start && memchr::memchr(b'&', &self.out.as_bytes()[start..end]).is_none() {
            self.decoded = end;
        } else if end > start {
            match html_escape::decode_html_entities(&self.out[start..end]) {
                Cow::Owned(decoded) => {
                    let rest = self.out.split_off(end);
                    self.out.truncate(start);
                    self.out.push_str(&decoded);
                    self.decoded = self.out.len();
                    self.out.push_str(&rest);
                }
                Cow::Borrowed(_) => self.decoded = end,
            }
        }
        // What is left starts with the `&` or whitespace found, and holds no other.
        self.settled_search = (self.decoded + 1).min(self.out.len());
        self.pending_amp = self.out.as_bytes().get(self.decoded) == Some(&b'&');
    }
}

fn extract(html: &str) -> String {
    let mut extraction = Extraction {
        out: String::with_capacity(html.len() / 2),
        ..Extraction::default()
    };
    extract_with(html, &mut extraction);
    extraction.decode(true);
    extraction.out
}

/// Runs `extraction` over `html`.
fn extract_with<'a>(html: &'a str, extraction: &mut Extraction<'a>) {
    for token in Tokens::new(html) {
        match token {
            Token::Text(text) => extraction.text(text),
            Token::Other => extraction.push_break(' '),
            Token::Start {
                name, self_closing, ..
            } if self_closing || is_one_of(name, &VOID_ELEMENTS) => {
                let br = name.eq_ignore_ascii_case("br");
                extraction.push_break(if br { '\n' } else { ' ' });
            }
            Token::Start {
                name, attributes, ..
            } => extraction.open(name, attributes),
            Token::End { name } => extraction.close(name),
        }
    }
    while !extraction.stack.is_empty() {
        extraction.close_top();
    }
}

/// True when opening `next` closes an open `open` element (HTML's optional end tags).
fn implicitly_closed_by(open: &str, next: &str) -> bool {
    let same = open.eq_ignore_ascii_case(next);
    let lower = |s: &str| s.to_ascii_lowercase();
    match lower(open).as_str() {
        "p" => {
            same || is_one_of(
                next,
                &[
                    "div",
                    "ul",
                    "ol",
                    "table",
                    "h1",
                    "h2",
                    "h3",
                    "h4",
                    "h5",
                    "h6",
                    "section",
                    "article",
                    "header",
                    "footer",
                    "nav",
                    "aside",
                    "blockquote",
                    "pre",
                    "form",
                    "hr",
                    "dl",
                ],
            )
        }
        "li" | "option" | "tr" => same,
        "td" | "th" => is_one_of(next, &["td", "th", "tr"]),
        "dt" | "dd" => is_one_of(next, &["dt", "dd"]),
        _ => false,
    }
}

/// True when an element is page furniture by its tag, role or class and id.
fn is_furniture(name: &str, attributes: &str) -> bool {
    if is_one_of(name, &ARTICLE_ELEMENTS) {
        return false;
    }
    if is_one_of(name, &FURNITURE_ELEMENTS) {
        return true;
    }
    if attributes.is_empty() {
        return false;
    }
    let mut furniture = false;
    for_each_attribute(attributes, |key, value| {
        let value = value.to_ascii_lowercase();
        furniture |= match key.to_ascii_lowercase().as_str() {
            "role" => FURNITURE_ROLES.contains(&value.trim()),
            "aria-hidden" => value.trim() == "true",
            "hidden" => true,
            "style" => value.replace(' ', "").contains("display:none"),
            "class" | "id" => value
                .split(|c: char| !c.is_ascii_alphanumeric() && c != '-' && c != '_')
                .any(furniture_name),
            _ => false,
        };
    });
    furniture
}

/// True when one class name or id names furniture.
fn furniture_name(name: &str) -> bool {
    if name.is_empty() {
        return false;
    }
    FURNITURE_NAMES.iter().any(|f| {
        name.match_indices(f)
            .any(|(at, _)| at == 0 || matches!(name.as_bytes()[at - 1], b'-' | b'_'))
    }) || name
        .split(['-', '_'])
        .any(|part| FURNITURE_WORDS.contains(&part))
}

/// Calls `f(key, value)` for each attribute of a start tag's attribute text.
fn for_each_attribute(attributes: &str, mut f: impl FnMut(&str, &str)) {
    let bytes = attributes.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        while i < bytes.len() && (bytes[i].is_ascii_whitespace() || bytes[i] == b'/') {
            i += 1;
        }
        let key_start = i;
        while i < bytes.len()
            && !bytes[i].is_ascii_whitespace()
            && bytes[i] != b'='
            && bytes[i] != b'/'
        {
            i += 1;
        }
        let key = &attributes[key_start..i];
        while i < bytes.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        let mut value = "";
        if i < bytes.len() && bytes[i] == b'=' {
            i += 1;
            while i < bytes.len() && bytes[i].is_ascii_whitespace() {
                i += 1;
            }
            if i < bytes.len() && (bytes[i] == b'"' || bytes[i] == b'\'') {
                let quote = bytes[i];
                let start = i + 1;
                let end = bytes[start..]
                    .iter()
                    .position(|&b| b == quote)
                    .map_or(bytes.len(), |p| start + p);
                value = &attributes[start..end];
                i = end + 1;
            } else {
                let start = i;
                while i < bytes.len() && !bytes[i].is_ascii_whitespace() {
                    i += 1;
                }
                value = &attributes[start..i];
            }
        }
        if !key.is_empty() {
            f(key, value);
        }
        if i == key_start {
            i += 1;
        }
    }
}

/// One piece of an HTML text.
#[derive(Debug, PartialEq, Eq)]
enum Token<'a> {
    /// Text between tags (entities not yet decoded).
    Text(&'a str),
    /// A start tag; hidden elements never appear: they are skipped with their content.
    Start {
        name: &'a str,
        attributes: &'a str,
        self_closing: bool,
    },
    /// An end tag.
    End { name: &'a str },
    /// A comment, doctype, processing instruction or hidden element.
    Other,
}

/// A tolerant tokenizer: `<` opens a tag only when followed by a letter, `/`, `!` or `?`.
struct Tokens<'a> {
    html: &'a str,
    pos: usize,
}

impl<'a> Tokens<'a> {
    fn new(html: &'a str) -> Self {
        Tokens { html, pos: 0 }
    }
}

impl<'a> Iterator for Tokens<'a> {
    type Item = Token<'a>;

    fn next(&mut self) -> Option<Token<'a>> {
        let bytes = self.html.as_bytes();
        if self.pos >= bytes.len() {
            return None;
        }
        let start = self.pos;
        let mut search = start;
        let tag_start = loop {
            match memchr::memchr(b'<', &bytes[search..]) {
                None => break None,
                Some(offset) => {
                    let at = search + offset;
                    if let Some(end) = tag_end(bytes, at) {
                        break Some((at, end));
                    }
                    search = at + 1;
                }
            }
        };
        let Some((at, end)) = tag_start else {
            self.pos = bytes.len();
            return Some(Token::Text(&self.html[start..]));
        };
        if at > start {
            self.pos = at;
            return Some(Token::Text(&self.html[start..at]));
        }
        let inner = &self.html[at + 1..end];
        if inner.starts_with("!--") {
            self.pos = find(bytes, at + 4, b"-->").map_or(bytes.len(), |i| i + 3);
            return Some(Token::Other);
        }
        self.pos = end + 1;
        if inner.starts_with(['!', '?']) {
            return Some(Token::Other);
        }
        if let Some(name) = inner.strip_prefix('/') {
            let name = name
                .split(|c: char| c.is_ascii_whitespace() || c == '>')
                .next()
                .unwrap_or("");
            return Some(Token::End {
                name: name.trim_end_matches('/'),
            });
        }
        let name_end = inner
            .find(|c: char| c.is_ascii_whitespace() || c == '/')
            .unwrap_or(inner.len());
        let name = &inner[..name_end];
        let self_closing = inner.ends_with('/');
        let attributes = inner[name_end..].trim_end_matches('/');
        if !self_closing && is_one_of(name, &HIDDEN_ELEMENTS) {
            self.pos = find_closing_tag(bytes, end + 1, name).unwrap_or(bytes.len());
            return Some(Token::Other);
        }
        Some(Token::Start {
            name,
            attributes,
            self_closing,
        })
    }
}

/// The index of the `>` closing the tag that starts at `start`, when `<` opens a tag:
/// `<` followed by a letter, `/`, `!` or `?`.
fn tag_end(bytes: &[u8], start: usize) -> Option<usize> {
    let next = *bytes.get(start + 1)?;
    if !(next.is_ascii_alphabetic() || matches!(next, b'/' | b'!' | b'?')) {
        return None;
    }
    memchr::memchr(b'>', &bytes[start + 1..]).map(|i| start + 1 + i)
}

/// The position after `</name ...>` at or after `from`.
fn find_closing_tag(bytes: &[u8], from: usize, name: &str) -> Option<usize> {
    let mut pos = from;
    while let Some(i) = find(bytes, pos, b"</") {
        let after = i + 2;
        let candidate = bytes.get(after..after + name.len())?;
        if candidate.eq_ignore_ascii_case(name.as_bytes()) {
            let close = memchr::memchr(b'>', &bytes[after..])?;
            return Some(after + close + 1);
        }
        pos = after;
    }
    None
}

fn find(haystack: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(haystack.get(from..)?, needle).map(|i| from + i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<&str> {
        text.split_whitespace().collect()
    }

    #[test]
    fn tags_become_spaces_and_hidden_content_goes() {
        let html = "<html><head><title>T</title><style>p{color:red}</style><script>var a='<b>';</script></head>\
                    <body><!-- note <p>x</p> --><p>Hello&nbsp;<b>world</b></p>&laquo;ok&raquo;</body></html>";
        assert_eq!(words(&html_to_text(html)), ["Hello", "world", "«ok»"]);
    }

    fn decode_owned(text: String) -> String {
        match decode_entities(&text) {
            Cow::Borrowed(_) => text,
            Cow::Owned(decoded) => decoded,
        }
    }

    /// The article as extracted before text was decoded as it came: all of it, then decoded.
    fn extract_whole(html: &str) -> String {
        let mut extraction = Extraction {
            decode_at_end: true,
            ..Extraction::default()
        };
        extract_with(html, &mut extraction);
        decode_owned(extraction.out)
    }

    /// The page text as made before it was read a chunk at a time: all of it, then decoded.
    fn html_to_text_whole(html: &str) -> String {
        let mut out = String::new();
        for token in Tokens::new(html) {
            match token {
                Token::Text(text) => out.push_str(text),
                Token::Start { name, .. } | Token::End { name } if is_inline(name) => {}
                _ => out.push(' '),
            }
        }
        decode_owned(out)
    }

    /// The page text of `html` gathered from chunks of about `chunk_bytes` bytes.
    fn chunked(html: &str, chunk_bytes: usize) -> String {
        let mut page = PageText::with_chunk_bytes(html, chunk_bytes);
        let mut out = String::new();
        while let Some(chunk) = page.next_chunk() {
            assert!(!chunk.is_empty());
            out.push_str(chunk);
        }
        out
    }

    #[test]
    fn page_text_in_chunks_is_the_whole_text() {
        let long = format!(
            "<p>{}</p><p>{}&amp;{}</p>",
            "Ёлка &nbsp;ёж&#1025;. ".repeat(20_000),
            "x".repeat(3 * PAGE_CHUNK_BYTES),
            "&am<b>p; &#x41 ;&lt;".repeat(1000)
        );
        assert_eq!(html_to_text(&long), html_to_text_whole(&long));
        assert_eq!(extract(&long), extract_whole(&long));
        assert_eq!(extract(PAGE), extract_whole(PAGE));
        assert_eq!(page_words(&long), count_words(&html_to_text_whole(&long)));
        assert_eq!(chunked(PAGE, 5), html_to_text_whole(PAGE));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        #[test]
        fn any_markup_in_chunks_is_the_whole_text(
            html in "(<p>|</p>|<b>|</b>|<br/>|<img>|<!-- c -->|<script>s</script>|<div>|</div>|<a href=x>|</a>|<ul>|<li>|</ul>|<nav>|</nav>|<div class=share>|<article>|&amp;|&am|p;|&#|x4|1;|&lt;|&nbsp;|&#10;|&|;| |\n|\t|a|b|ё|國|ក|្|ា|\u{301}|\u{200b}|<|>){0,80}",
            chunk_bytes in 1usize..12,
        ) {
            proptest::prop_assert_eq!(extract(&html), extract_whole(&html));
            let whole = html_to_text_whole(&html);
            proptest::prop_assert_eq!(chunked(&html, chunk_bytes), whole.clone());
            proptest::prop_assert_eq!(html_to_text(&html), whole.clone());
            let in_chunks = words_in_chunks(PageText::with_chunk_bytes(&html, chunk_bytes));
            proptest::prop_assert_eq!(in_chunks, count_words(&whole));
        }
    }

    #[test]
    fn inline_tags_do_not_split_words() {
        assert_eq!(
            words(&html_to_text("<p>wo<b>r</b>d</p><p>next</p>")),
            ["word", "next"]
        );
    }

    #[test]
    fn numeric_and_hex_references_are_decoded() {
        assert_eq!(html_to_text("&#1040;&#x43F; &amp; &mdash;"), "Ап & —");
    }

    #[test]
    fn references_decode_alike_after_plain_text() {
        for text in [
            "no references",
            "a &amp; b",
            "&lt;x&gt;",
            "AT&T &c; &#1025;",
            "x&",
        ] {
            assert_eq!(
                decode_entities(text),
                html_escape::decode_html_entities(text)
            );
        }
    }

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
        ] {
            assert!(looks_like_html(text), "{text}");
        }
    }

    #[test]
    fn angle_brackets_in_prose_are_text() {
        for text in [
            "a < b > c",
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
        let names: Vec<&str> = include_str!("../../data/html-elements.txt")
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

    #[test]
    fn a_lone_angle_bracket_is_text() {
        assert!(!looks_like_html("a < b and c > d"));
        assert!(!looks_like_html(
            "see <http://example.com> and <netinet/in.h>"
        ));
        assert_eq!(html_to_text("a < b"), "a < b");
        assert!(looks_like_html("text<br/>more"));
        assert!(looks_like_html("<P>Upper case</P>"));
    }

    #[test]
    fn unclosed_script_drops_the_rest() {
        assert_eq!(html_to_text("keep<script>lost").trim(), "keep");
    }

    #[test]
    fn script_like_names_are_not_hidden() {
        assert_eq!(html_to_text("<scripture>a</scripture>").trim(), "a");
    }

    const PAGE: &str = r#"<!DOCTYPE html><html><head><title>Flood</title></head><body>
        <header><div class="logo">Daily News</div><nav><ul><li><a href="/">Home</a></li><li><a href="/w">World</a></li></ul></nav></header>
        <div id="cookie-banner">We use cookies. Accept all.</div>
        <main><article><h1>River floods the town</h1>
        <p class="byline">By A. Writer</p>
        <p>The river rose two metres overnight and flooded the <a href="/t">old town</a>, officials said.</p>
        <p>Residents were moved to the school gym.
        <div class="share-bar">Share: Facebook Twitter</div>
        <ul class="list"><li><a href="/1">Most read one</a></li><li><a href="/2">Most read two</a></li></ul>
        </article></main>
        <aside>Related: other stories</aside>
        <footer>&copy; 2024 Daily News</footer></body></html>"#;

    #[test]
    fn main_text_keeps_the_article_only() {
        let text = main_text(PAGE, page_words(PAGE)).unwrap();
        assert_eq!(
            words(&text).join(" "),
            "River floods the town The river rose two metres overnight and flooded the old town, \
             officials said. Residents were moved to the school gym."
        );
    }

    #[test]
    fn main_text_measures_a_page_without_spaces_by_its_characters() {
        // Ten menu links hold more whitespace-separated runs than the article's one sentence,
        // but far fewer characters: the article is the page's main text, its menu goes.
        let menu: String = [
            "首页", "国内", "国际", "财经", "科技", "体育", "娱乐", "汽车", "房产", "教育",
        ]
        .iter()
        .map(|item| format!("<li><a href=\"/{item}\">{item}</a></li>"))
        .collect();
        let html = format!(
            "<header><nav><ul>{menu}</ul></nav></header><main><article><p>北京时间昨天晚上，\
             国家统计局发布了最新的经济数据，显示第三季度国内生产总值同比增长。</p></article>\
             </main><footer>版权所有</footer>"
        );
        let text = main_text(&html, page_words(&html)).expect("the article is the main text");
        assert!(text.contains("国家统计局发布了最新的经济数据"), "{text}");
        assert!(
            !text.contains("财经") && !text.contains("版权所有"),
            "{text}"
        );
    }

    #[test]
    fn main_text_falls_back_to_the_whole_page_without_structure() {
        let html = "<div class=\"menu\"><p>All the text of this page sits in a block named menu, \
                    so extraction would leave nothing.</p></div>";
        assert_eq!(main_text(html, page_words(html)), None);
    }

    #[test]
    fn furniture_names_match_whole_parts() {
        assert!(furniture_name("share"));
        assert!(furniture_name("article-share"));
        assert!(furniture_name("cookie-banner"));
        assert!(furniture_name("tags"));
        assert!(!furniture_name("article-body"));
        assert!(!furniture_name("unshared"));
        assert!(!furniture_name("stage"));
    }

    #[test]
    fn attributes_are_parsed_with_any_quoting() {
        let mut seen = Vec::new();
        for_each_attribute(r#" class="a b" id='c' data-x=1 hidden"#, |k, v| {
            seen.push((k.to_owned(), v.to_owned()))
        });
        assert_eq!(
            seen,
            [
                ("class".into(), "a b".into()),
                ("id".into(), "c".into()),
                ("data-x".into(), "1".into()),
                ("hidden".into(), String::new())
            ]
        );
    }
}
