//! HTML to text, read as the WHATWG HTML standard tokenizes it (the `tokenizer` module, over
//! `html5gum`): character references are decoded in text and in attribute values as a browser
//! decodes them, a tag ends where the standard ends it (a `>` in a quoted attribute value does
//! not end it), comments, CDATA sections and the text of `<title>`, `<textarea>`, `<script>`,
//! `<style>` and `<plaintext>` are read as browsers read them. Two ways:
//!
//! - [`html_to_text`] (and `PageText`, the same a chunk at a time): every tag but an inline
//!   one becomes a space; comments and the `<script>`/`<style>`/`<noscript>`/`<template>`/
//!   `<title>`/`<svg>`/`<iframe>` elements are dropped with their content.
//! - [`main_text`]: the page's article text, Readability-style (the `extract` module).
//!
//! Whether a text is HTML at all is guessed apart (`looks_like_html`).

mod detect;
mod extract;
mod tokenizer;

use std::borrow::Cow;

use super::tokens;
pub(crate) use detect::looks_like_html;
use tokenizer::{Sink, StartTag};

/// Elements whose content is never text of the page.
const HIDDEN_ELEMENTS: [&str; 7] = [
    "script", "style", "noscript", "template", "title", "svg", "iframe",
];

/// Elements that do not break a word: `wo<b>r</b>d` is one word.
const INLINE_ELEMENTS: [&str; 14] = [
    "a", "abbr", "b", "em", "font", "i", "mark", "q", "s", "small", "span", "strong", "sub", "sup",
];

/// The text of an HTML document or fragment: tags removed, hidden elements and comments
/// dropped, character references decoded.
pub fn html_to_text(html: &str) -> String {
    let mut out = String::new();
    let mut page = PageText::new(html);
    while let Some(chunk) = page.next_chunk() {
        out.push_str(chunk);
    }
    out
}

/// Bytes of page text gathered before a chunk is given.
const PAGE_CHUNK_BYTES: usize = 64 << 10;

/// The text [`html_to_text`] gives, a chunk at a time, so that a long page's text need never
/// be held whole: the page is tokenized as the chunks are asked for.
pub(crate) struct PageText<'a> {
    /// The tokenizer (boxed: it is large, and a page's text is often passed by value).
    tokens: Box<tokenizer::Tokens<'a, PageSink<'a>>>,
    /// The last chunk given.
    chunk: String,
    /// How much of `chunk` [`PageText::skip`] has passed.
    skipped: usize,
}

/// Gathers a page's text: text as it is, a space for every tag but an inline one.
struct TextSink {
    out: String,
    chunk_bytes: usize,
    ended: bool,
}

impl Sink for TextSink {
    type Chunk = String;

    fn text(&mut self, text: &str) {
        self.out.push_str(text);
    }

    fn start_tag(&mut self, tag: &StartTag<'_>) {
        if !is_inline(tag.name) {
            self.out.push(' ');
        }
    }

    fn end_tag(&mut self, name: &str) {
        if !is_inline(name) {
            self.out.push(' ');
        }
    }

    fn other(&mut self) {
        self.out.push(' ');
    }

    fn is_full(&self) -> bool {
        self.out.len() >= self.chunk_bytes
    }

    fn take_chunk(&mut self) -> Option<String> {
        let ready = self.out.len() >= self.chunk_bytes || (self.ended && !self.out.is_empty());
        ready.then(|| std::mem::take(&mut self.out))
    }

    fn end(&mut self) {
        self.ended = true;
    }
}

/// What one reading of a page makes: its text (a chunk at a time), its article, or both. Every
/// reading has this one sink type, so that the tokenizer is compiled once.
struct PageSink<'e> {
    text: Option<TextSink>,
    article: Option<&'e mut extract::Extraction>,
}

impl PageSink<'_> {
    /// A sink of a page's text, in chunks of about `chunk_bytes`.
    fn text(chunk_bytes: usize) -> Self {
        PageSink {
            text: Some(TextSink {
                out: String::new(),
                chunk_bytes,
                ended: false,
            }),
            article: None,
        }
    }
}

impl Sink for PageSink<'_> {
    type Chunk = String;

    fn text(&mut self, text: &str) {
        if let Some(sink) = &mut self.text {
            sink.text(text);
        }
        if let Some(sink) = &mut self.article {
            sink.text(text);
        }
    }

    fn start_tag(&mut self, tag: &StartTag<'_>) {
        if let Some(sink) = &mut self.text {
            sink.start_tag(tag);
        }
        if let Some(sink) = &mut self.article {
            sink.start_tag(tag);
        }
    }

    fn end_tag(&mut self, name: &str) {
        if let Some(sink) = &mut self.text {
            sink.end_tag(name);
        }
        if let Some(sink) = &mut self.article {
            sink.end_tag(name);
        }
    }

    fn other(&mut self) {
        if let Some(sink) = &mut self.text {
            sink.other();
        }
        if let Some(sink) = &mut self.article {
            sink.other();
        }
    }

    fn wants_attribute(&self, name: &[u8]) -> bool {
        self.article
            .as_ref()
            .is_some_and(|a| a.wants_attribute(name))
    }

    fn is_full(&self) -> bool {
        self.text.as_ref().is_some_and(TextSink::is_full)
    }

    fn take_chunk(&mut self) -> Option<String> {
        self.text.as_mut()?.take_chunk()
    }

    fn end(&mut self) {
        if let Some(sink) = &mut self.text {
            sink.end();
        }
        if let Some(sink) = &mut self.article {
            sink.end();
        }
    }
}

impl<'a> PageText<'a> {
    /// The text of `html`, read from its start.
    pub fn new(html: &'a str) -> Self {
        PageText::with_chunk_bytes(html, PAGE_CHUNK_BYTES)
    }

    fn with_chunk_bytes(html: &'a str, chunk_bytes: usize) -> Self {
        PageText {
            tokens: Box::new(tokenizer::tokenize(html, PageSink::text(chunk_bytes))),
            chunk: String::new(),
            skipped: 0,
        }
    }

    /// The next chunk of the page's text (never empty); `None` at the end.
    pub(crate) fn next_chunk(&mut self) -> Option<&str> {
        // A pause is where the sink filled up: its chunk comes next.
        self.chunk = self.tokens.find_map(Result::ok)?;
        self.skipped = 0;
        Some(&self.chunk)
    }

    /// Whether the text goes on with `text` (from where the last call left it, or from the
    /// start); reads past it when it does.
    pub fn skip(&mut self, mut text: &[u8]) -> bool {
        while !text.is_empty() {
            if self.skipped == self.chunk.len() && self.next_chunk().is_none() {
                return false;
            }
            let rest = &self.chunk.as_bytes()[self.skipped..];
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
    pub(crate) fn skip_to_end(&mut self) -> bool {
        self.skipped == self.chunk.len() && self.next_chunk().is_none()
    }
}

/// The number of words of `text`, as shingling finds them (`tokens::for_each_word`): a
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

/// The article text of an HTML page: furniture and link lists dropped, character references
/// decoded. `None` when that leaves less than a fifth of the `page_words` words of the page's
/// whole text ([`page_words`]): a page with no recognizable structure keeps all its text.
pub fn main_text(html: &str, page_words: usize) -> Option<String> {
    let main = article(html);
    is_main_text(&main, page_words).then_some(main)
}

/// The article of `html` ([`extract`]), all of its text if nothing in it is furniture.
fn article(html: &str) -> String {
    let mut extraction = extract::Extraction::for_page(html);
    let sink = PageSink {
        text: None,
        article: Some(&mut extraction),
    };
    // Without text the sink gives no chunks and is never full: one pass to the page's end.
    tokenizer::tokenize(html, sink).for_each(drop);
    extraction.into_text()
}

/// Whether an article holds enough of its page's `page_words` words to stand for it.
fn is_main_text(article: &str, page_words: usize) -> bool {
    let words = count_words(article);
    words > 0 && words * 5 >= page_words
}

/// The text of `html` ([`html_to_text`]) and its article ([`main_text`] of the text's words),
/// from one reading of the page: for a page whose text is held whole.
pub(crate) fn text_and_main_text(html: &str) -> (String, Option<String>) {
    let mut extraction = extract::Extraction::for_page(html);
    let sink = PageSink {
        article: Some(&mut extraction),
        ..PageSink::text(usize::MAX)
    };
    // The text comes as one chunk, at the end.
    let page: String = tokenizer::tokenize(html, sink)
        .filter_map(Result::ok)
        .collect();
    let article = extraction.into_text();
    let article = is_main_text(&article, count_words(&page)).then_some(article);
    (page, article)
}

/// Decodes character references in text that is not HTML otherwise.
pub(crate) fn decode_entities(text: &str) -> Cow<'_, str> {
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
    is_one_of(name, &INLINE_ELEMENTS)
}

fn is_one_of(name: &str, list: &[&str]) -> bool {
    list.iter().any(|e| e.eq_ignore_ascii_case(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<&str> {
        text.split_whitespace().collect()
    }

    /// A page with furniture around its article.
    pub(super) const PAGE: &str = r#"<!DOCTYPE html><html><head><title>Flood</title></head><body>
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
    fn tags_become_spaces_and_hidden_content_goes() {
        let html = "<html><head><title>T</title><style>p{color:red}</style><script>var a='<b>';</script></head>\
                    <body><!-- note <p>x</p> --><p>Hello&nbsp;<b>world</b></p>&laquo;ok&raquo;\
                    <svg><text>drawn</text><svg></svg>still drawn</svg><template><p>later</p></template></body></html>";
        assert_eq!(words(&html_to_text(html)), ["Hello", "world", "«ok»"]);
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
        let whole = html_to_text(&long);
        assert_eq!(chunked(&long, 1000), whole);
        assert_eq!(page_words(&long), count_words(&whole));
        assert_eq!(chunked(PAGE, 5), html_to_text(PAGE));
        // A pause for a full chunk never falls inside a tag the text ran into.
        for html in [
            "<<script>s</script>t",
            "a&lt<b x=y>c</b><title>d</title>",
            "x</<p>y",
        ] {
            assert_eq!(chunked(html, 1), html_to_text(html), "{html}");
        }
        let mut page = PageText::with_chunk_bytes(&long, 1000);
        assert!(page.skip(&whole.as_bytes()[..70_000]));
        assert!(page.skip(&whole.as_bytes()[70_000..]));
        assert!(page.skip_to_end());
    }

    #[test]
    fn a_page_of_one_long_text_is_read_in_bounded_chunks() {
        let text = "word ".repeat(1 << 20);
        let html = format!("<p>{text}</p>");
        let mut page = PageText::new(&html);
        let mut longest = 0;
        let mut all = String::new();
        while let Some(chunk) = page.next_chunk() {
            longest = longest.max(chunk.len());
            all.push_str(chunk);
        }
        assert_eq!(all.trim(), text.trim());
        assert!(
            longest <= PAGE_CHUNK_BYTES + tokenizer::TEXT_PIECE_BYTES,
            "{longest}"
        );
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        #[test]
        fn any_markup_in_chunks_is_the_whole_text(
            html in "(<p>|</p>|<b>|</b>|<br/>|<img>|<!-- c -->|<script>s</script>|<div>|</div>|<a href=x>|</a>|<ul>|<li>|</ul>|<nav>|</nav>|<div class=share>|<article>|<title>|</title>|<textarea>|<plaintext>|<svg>|</svg>|<math>|<!\\[CDATA\\[|\\]\\]>|&amp;|&am|p;|&#|x4|1;|&lt;|&nbsp;|&#10;|&|;| |\n|\r|\t|a|b|ё|國|ក|្|ា|\u{301}|\u{200b}|<|>|\"|'|=){0,80}",
            chunk_bytes in 1usize..12,
        ) {
            let whole = html_to_text(&html);
            proptest::prop_assert_eq!(chunked(&html, chunk_bytes), whole.clone());
            let in_chunks = words_in_chunks(PageText::with_chunk_bytes(&html, chunk_bytes));
            proptest::prop_assert_eq!(in_chunks, count_words(&whole));
            let _ = main_text(&html, count_words(&whole));
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
    fn references_are_decoded_as_the_standard_decodes_them() {
        assert_eq!(html_to_text("&#1040;&#x43F; &amp; &mdash;"), "Ап & —");
        // Without a semicolon only the legacy names, the longest first; numbers always.
        assert_eq!(
            html_to_text("&notin; &notin &amp &ampx &#65 &#x42z"),
            "∉ ¬in & &x A Bz"
        );
        // Windows-1252's C1 remapping, and the code points that are never characters.
        assert_eq!(
            html_to_text("&#128;&#x96;&#0;&#xD800;&#x110000;"),
            "€–\u{FFFD}\u{FFFD}\u{FFFD}"
        );
        // Each text node is decoded on its own: a reference cut by a tag is not one.
        assert_eq!(html_to_text("&am<b>p;</b>"), "&amp;");
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
    fn a_tag_ends_where_the_standard_ends_it() {
        // A `>` inside a quoted value is the value's.
        assert_eq!(
            words(&html_to_text("<img alt=\"a > b\" src=x>Caption")),
            ["Caption"]
        );
        assert_eq!(words(&html_to_text("<p title='1 > 0'>one</p>")), ["one"]);
        // A tag the page ends in is not text; a `<` that opens no tag is.
        assert_eq!(words(&html_to_text("end <a href=\"x")), ["end"]);
        assert_eq!(html_to_text("a < b"), "a < b");
        assert_eq!(
            words(&html_to_text("1 <2 and 3</ 4")),
            ["1", "<2", "and", "3"]
        );
    }

    #[test]
    fn comments_cdata_and_raw_text_are_read_as_browsers_read_them() {
        let text = |html: &str| words(&html_to_text(html)).join(" ");
        assert_eq!(text("a<!-- <p>x</p> -->b"), "a b");
        assert_eq!(text("a<!-->b<!--->c<!-- d --!>e"), "a b c e");
        // In HTML a CDATA section is a bogus comment up to the first `>`; in MathML it is text.
        assert_eq!(text("a<![CDATA[x<i>y</i>]]>z"), "a y]]>z");
        assert_eq!(text("<math><mi><![CDATA[x<y]]></mi></math>"), "x<y");
        assert_eq!(text("<textarea><b>x</b> &lt;</textarea>"), "<b>x</b> <");
        assert_eq!(text("<title>t</p>u</title>v"), "v");
        assert_eq!(
            text("<script>s = \"</p>x\"; t = '</scr' + 'ipt>';</script>y"),
            "y"
        );
        assert_eq!(
            text("<script><!--document.write(\"<script>z</script>\")--></script>y"),
            "y"
        );
        assert_eq!(
            text("<style>a</b>{}</style><xmp><i>c</i></xmp>"),
            "<i>c</i>"
        );
        assert_eq!(
            text("a<plaintext><b>b</b></plaintext>"),
            "a <b>b</b></plaintext>"
        );
        assert_eq!(text("<script/>x</script>y<svg/>z"), "y z");
    }

    #[test]
    fn unclosed_script_drops_the_rest() {
        assert_eq!(html_to_text("keep<script>lost").trim(), "keep");
    }

    #[test]
    fn script_like_names_are_not_hidden() {
        assert_eq!(html_to_text("<scripture>a</scripture>").trim(), "a");
    }

    #[test]
    fn one_reading_gives_the_text_and_the_article_of_two() {
        let structureless = "<div class=\"menu\"><p>all of it</p></div>";
        for html in [PAGE, structureless, "", "<p>a</p><nav>b</nav>"] {
            let text = html_to_text(html);
            let article = main_text(html, count_words(&text));
            assert_eq!(text_and_main_text(html), (text, article), "{html}");
        }
    }

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
}
