//! Canonicalization: raw text (plain, HTML or mail) to the word stream that shingles are made of.
//! A chain of small filters, one a file: mail headers, HTML, Unicode normalization, words,
//! stop words, stemming and a minimum word length. Stop words and stemming are options, never
//! silent defaults: dropping «не» can flip a meaning.
//!
//! Words are made as the text is read, a bounded chunk at a time ([`stream`]): besides its raw
//! text, a document holds at most one text made from it (its HTML article, the text of an HTML
//! page without one, or a plain text with its character references decoded), never a
//! normalized or cleaned copy.

pub mod html;
pub mod mail;
pub mod plain;
pub mod stem;
pub mod stopwords;
pub mod stream;
pub(crate) mod tokens;
pub(crate) mod unicode;

use std::borrow::Cow;

use crate::config::{CanonConfig, HtmlMode};
use stem::Stemmers;
use stopwords::StopWords;
use stream::WordStream;

/// Turns raw texts into canonical words under one configuration.
#[derive(Debug)]
pub struct Canonicalizer {
    html: HtmlMode,
    mail_headers: bool,
    main_text: bool,
    stopwords: StopWords,
    stemmers: Stemmers,
    min_word_length: usize,
}

impl Canonicalizer {
    /// A canonicalizer for `config`.
    pub fn new(config: &CanonConfig) -> Canonicalizer {
        Canonicalizer {
            html: config.html,
            mail_headers: config.mail_headers,
            main_text: config.main_text,
            stopwords: StopWords::new(&config.stopwords),
            stemmers: Stemmers::new(&config.stem),
            min_word_length: config.min_word_length,
        }
    }

    /// The visible text: mail headers removed, HTML turned to text (its main text when
    /// `main-text` is on), entities decoded, plain-text furniture dropped; not yet normalized.
    pub(crate) fn visible_text<'a>(&self, raw: &'a str) -> Cow<'a, str> {
        self.texts(raw, false).0
    }

    /// The visible text and, when `with_page` is set and `main-text` removed furniture (more
    /// than carriage returns at line ends and whitespace at the end), the whole page's text as
    /// well (what corpus statistics count).
    pub fn texts<'a>(&self, raw: &'a str, with_page: bool) -> (Cow<'a, str>, Option<Cow<'a, str>>) {
        let visible = self.visible(raw);
        if let Visible::Whole(text) = visible {
            return (text, None);
        }
        let mut main = String::new();
        let page_differs = visible.for_each_main_piece(with_page, |piece| main.push_str(piece));
        let page = page_differs.then(|| match visible.into_page() {
            Page::Text(text) => text,
            Page::Html(html) => Cow::Owned(html::html_to_text(html)),
        });
        (Cow::Owned(main), page)
    }

    /// What the visible text of `raw` is made of: mail headers removed, HTML read, entities
    /// decoded; its main text not yet cleaned. The HTML article is extracted here.
    pub fn visible<'a>(&self, raw: &'a str) -> Visible<'a> {
        let body = if self.mail_headers {
            mail::strip_headers(raw)
        } else {
            raw
        };
        let is_html = match self.html {
            HtmlMode::Always => true,
            HtmlMode::Never => return Visible::Whole(Cow::Borrowed(body)),
            HtmlMode::Auto => html::looks_like_html(body),
        };
        if !is_html {
            let text = html::decode_entities(body);
            return if self.main_text {
                Visible::Cleaned {
                    source: text,
                    page: None,
                }
            } else {
                Visible::Whole(text)
            };
        }
        if !self.main_text {
            return Visible::WholePage(body);
        }
        if body.len() <= HELD_PAGE_BYTES {
            let (page, article) = html::text_and_main_text(body);
            return match article {
                Some(article) => Visible::Cleaned {
                    source: Cow::Owned(article),
                    page: Some(Page::Text(Cow::Owned(page))),
                },
                None => Visible::Cleaned {
                    source: Cow::Owned(page),
                    page: None,
                },
            };
        }
        match html::main_text(body, html::page_words(body)) {
            Some(article) => Visible::Cleaned {
                source: Cow::Owned(article),
                page: Some(Page::Html(body)),
            },
            None => Visible::Cleaned {
                source: Cow::Owned(html::html_to_text(body)),
                page: None,
            },
        }
    }

    /// The lines of the whole page that main-text extraction dropped, in page order.
    pub fn dropped_lines(&self, raw: &str) -> Vec<String> {
        let (main, page) = self.texts(raw, true);
        let Some(page) = page else {
            return Vec::new();
        };
        let kept: std::collections::HashSet<String> = main
            .lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect();
        page.lines()
            .map(|l| l.trim_start_matches(['>', ' ', '\t']))
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .filter(|l| !l.is_empty() && !kept.contains(l))
            .collect()
    }

    /// Calls `f` with each canonical word of `raw`, in order. `stream` holds buffers reused
    /// across calls.
    pub fn for_each_word(&self, raw: &str, stream: &mut WordStream, f: impl FnMut(&str)) {
        let visible = self.visible(raw);
        self.for_each_word_of_pieces(
            |push| {
                visible.for_each_main_piece(false, push);
            },
            stream,
            f,
        );
    }

    /// Calls `f` with each canonical word of a text already made visible
    /// ([`Canonicalizer::visible_text`]), in order.
    pub(crate) fn for_each_word_of_visible(
        &self,
        visible: &str,
        stream: &mut WordStream,
        f: impl FnMut(&str),
    ) {
        self.for_each_word_of_pieces(|push| push(visible), stream, f);
    }

    /// Calls `f` with each canonical word of a visible text whose pieces `for_each_piece`
    /// gives, in order, to the function it is passed.
    pub(crate) fn for_each_word_of_pieces(
        &self,
        for_each_piece: impl FnOnce(&mut dyn FnMut(&str)),
        stream: &mut WordStream,
        mut f: impl FnMut(&str),
    ) {
        if self.stopwords.is_empty() && self.stemmers.is_empty() && self.min_word_length <= 1 {
            stream.for_each_word(for_each_piece, f);
            return;
        }
        stream.for_each_word(for_each_piece, |word| {
            if !self.stopwords.is_empty() && self.stopwords.contains(word) {
                return;
            }
            let word = if self.stemmers.is_empty() {
                Cow::Borrowed(word)
            } else {
                self.stemmers.stem(word)
            };
            if self.min_word_length > 1 && word.chars().count() < self.min_word_length {
                return;
            }
            f(&word);
        });
    }

    /// The canonical words of `raw`.
    pub fn words(&self, raw: &str) -> Vec<String> {
        let mut out = Vec::new();
        self.for_each_word(raw, &mut WordStream::default(), |w| out.push(w.to_owned()));
        out
    }
}

/// A raw text made visible, its main text not yet cleaned of plain-text furniture.
#[derive(Debug)]
pub enum Visible<'a> {
    /// The visible text as it is: `main-text` is off, or HTML is never read.
    Whole(Cow<'a, str>),
    /// The text of an HTML page, `main-text` off: read from the HTML a chunk at a time.
    WholePage(&'a str),
    /// `main-text` on: the main text is `source` cleaned (`plain::clean`), and the whole
    /// page's text is `page`, or `source` itself when `page` is `None`. `source` is an HTML
    /// page's article when one was found, else the page's text.
    Cleaned {
        /// What the main text is made of.
        source: Cow<'a, str>,
        /// The page's text when it is not `source`.
        page: Option<Page<'a>>,
    },
}

impl<'a> Visible<'a> {
    /// Calls `f` with the main text in pieces, in order. With `with_page`, returns whether
    /// the whole page's text differs from the main text (so that its shingle set may too):
    /// by more than carriage returns at line ends and whitespace at the end, which change no
    /// word, when the page's text is held whole. Returns false without `with_page`, and when
    /// the main text is the whole text.
    pub(crate) fn for_each_main_piece(&self, with_page: bool, mut f: impl FnMut(&str)) -> bool {
        let (source, page) = match self {
            Visible::Whole(text) => {
                f(text);
                return false;
            }
            Visible::WholePage(html) => {
                for_each_page_chunk(html, f);
                return false;
            }
            Visible::Cleaned { source, page } => (source, page),
        };
        if !with_page {
            plain::for_each_piece(source, f);
            return false;
        }
        let mut page = match page {
            None => PageCursor::Text(source),
            Some(Page::Text(text)) => PageCursor::Text(text),
            Some(Page::Html(html)) => PageCursor::Html(html::PageText::new(html)),
        };
        let mut same = true;
        plain::for_each_piece(source, |piece| {
            same = same && page.skip(piece);
            f(piece);
        });
        !(same && page.is_at_end())
    }

    /// The whole page's text; the main text's source is dropped here when the page is not it.
    pub(crate) fn into_page(self) -> Page<'a> {
        match self {
            Visible::Whole(text)
            | Visible::Cleaned {
                source: text,
                page: None,
            } => Page::Text(text),
            Visible::WholePage(html) => Page::Html(html),
            Visible::Cleaned {
                page: Some(page), ..
            } => page,
        }
    }
}

/// HTML pages up to this size have their text made once and held while they are sketched;
/// a longer page's text is read again from its HTML, a chunk at a time, each time it is needed
/// (to count its words, to compare it with the main text, to make its shingle set).
const HELD_PAGE_BYTES: usize = 1 << 20;

/// The whole text of a page.
#[derive(Debug)]
pub enum Page<'a> {
    /// Held whole.
    Text(Cow<'a, str>),
    /// Read from an HTML page a chunk at a time.
    Html(&'a str),
}

impl Page<'_> {
    /// Calls `f` with the text in pieces, in order.
    pub(crate) fn for_each_piece(&self, mut f: impl FnMut(&str)) {
        match self {
            Page::Text(text) => f(text),
            Page::Html(html) => for_each_page_chunk(html, f),
        }
    }
}

/// Calls `f` with the text of the HTML page `html`, a chunk at a time.
fn for_each_page_chunk(html: &str, mut f: impl FnMut(&str)) {
    let mut page = html::PageText::new(html);
    while let Some(chunk) = page.next_chunk() {
        f(chunk);
    }
}

/// A place in a page's text, moved on as the main text is compared with it.
enum PageCursor<'a> {
    /// The rest of a page's text held whole. Carriage returns before a line break or at the
    /// end, which cleaning drops with the lines' ends, and whitespace at the end are passed
    /// over: the text's words are the same without them.
    Text(&'a str),
    /// A page read from its HTML.
    Html(html::PageText<'a>),
}

impl PageCursor<'_> {
    /// Whether the page's text goes on with `text`; moves past it when it does.
    fn skip(&mut self, text: &str) -> bool {
        match self {
            PageCursor::Text(rest) => loop {
                if std::ptr::eq(rest.as_ptr(), text.as_ptr()) && rest.len() >= text.len() {
                    // A line of the page itself.
                    *rest = &rest[text.len()..];
                    return true;
                }
                if let Some(after) = rest.strip_prefix(text) {
                    *rest = after;
                    return true;
                }
                let returns = rest.len() - rest.trim_start_matches('\r').len();
                let line_end = matches!(rest.as_bytes().get(returns), None | Some(b'\n'));
                if returns == 0 || !line_end || text.starts_with('\r') {
                    return false;
                }
                *rest = &rest[returns..];
            },
            PageCursor::Html(page) => page.skip(text.as_bytes()),
        }
    }

    /// Whether the page's text ends here (a text held whole: but for whitespace).
    fn is_at_end(&mut self) -> bool {
        match self {
            PageCursor::Text(rest) => rest.trim_end().is_empty(),
            PageCursor::Html(page) => page.skip_to_end(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Language;

    #[test]
    fn html_page_and_plain_text_give_the_same_words() {
        let canon = Canonicalizer::new(&CanonConfig::default());
        let page = "<html><body><p>Ёлки&nbsp;и&#x20;палки,</p><script>x()</script><p>ДА\u{AD}ВНО</p></body></html>";
        let plain = "елки и палки, давно";
        assert_eq!(canon.words(page), canon.words(plain));
        assert_eq!(canon.words(plain), ["елки", "и", "палки", "давно"]);
    }

    #[test]
    fn options_filter_words() {
        let config = CanonConfig {
            stopwords: vec![Language::En],
            stem: vec![Language::En],
            min_word_length: 3,
            ..CanonConfig::default()
        };
        let canon = Canonicalizer::new(&config);
        assert_eq!(
            canon.words("The floods of it hit towns"),
            ["flood", "hit", "town"]
        );
    }

    #[test]
    fn html_never_keeps_tags_as_words() {
        let config = CanonConfig {
            html: HtmlMode::Never,
            ..CanonConfig::default()
        };
        let canon = Canonicalizer::new(&config);
        assert_eq!(canon.words("<b>bold</b>"), ["b", "bold", "b"]);
    }

    /// Whether the page of `raw` differs from its main text, the main text, and the page.
    fn main_and_page(canon: &Canonicalizer, raw: &str) -> (bool, String, String) {
        let visible = canon.visible(raw);
        let mut main = String::new();
        let differs = visible.for_each_main_piece(true, |piece| main.push_str(piece));
        let mut page = String::new();
        visible
            .into_page()
            .for_each_piece(|piece| page.push_str(piece));
        (differs, main, page)
    }

    #[test]
    fn a_page_differs_by_more_than_line_ends() {
        let canon = Canonicalizer::new(&CanonConfig::default());
        for (raw, differs) in [
            ("one two\r\nthree\r\r\n\r\n \u{A0}\n", false),
            ("one two\nthree", false),
            ("one\rtwo\n", false),
            ("one two\n> three", true),
            ("one two\nOn Monday, Ann wrote:\nthree", true),
            ("one &amp; two\n", false),
            ("<p>one</p><nav>two</nav>", true),
        ] {
            let (found, main, page) = main_and_page(&canon, raw);
            assert_eq!(found, differs, "{raw:?}: {main:?} {page:?}");
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(1000))]
        #[test]
        fn a_page_said_not_to_differ_has_the_words_of_the_main_text(
            raw in "([a-zа-я\u{301}\u{A0}\u{3000}\u{85}>| ]|\r|\n|\r\n|-- \n|On x wrote:\n){0,40}"
        ) {
            let canon = Canonicalizer::new(&CanonConfig::default());
            let (differs, main, page) = main_and_page(&canon, &raw);
            if !differs {
                let words = |text: &str| tokens::words(&unicode::normalize(text)).join(" ");
                proptest::prop_assert_eq!(words(&main), words(&page));
            }
        }
    }

    #[test]
    fn mail_headers_are_not_words() {
        let canon = Canonicalizer::new(&CanonConfig::default());
        let mail = "From: a@example.com\nSubject: hi\n\nBody text";
        assert_eq!(canon.words(mail), ["body", "text"]);
    }
}
