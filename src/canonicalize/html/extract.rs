//! The article of an HTML page, Readability-style, read from its tokens (`super::tokenizer`):
//! elements that are page furniture by their tag (`nav`, `header`, `footer`, `aside`, `form`,
//! ...), their ARIA role (`navigation`, `banner`, `contentinfo`, `dialog`, ...) or their class
//! and id (the names Readability treats as unlikely candidates: menu, sidebar, related, share,
//! social, comment, cookie banner, ...) are dropped, and so is any block whose text is mostly
//! link text (menus and "most read" lists that carry no telling names). Unclosed elements are
//! closed by their parent's end tag or by the siblings HTML lets close them, and stray end
//! tags are ignored.

use std::convert::Infallible;

use super::tokenizer::{Sink, StartTag};
use super::{is_inline, is_one_of};

/// Elements without content.
const VOID_ELEMENTS: [&str; 15] = [
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
    "track", "wbr", "amp-img",
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

/// Attributes that make an element furniture.
const FURNITURE_ATTRIBUTES: [&str; 6] = ["role", "aria-hidden", "hidden", "style", "class", "id"];

/// One open element during extraction.
struct Frame {
    /// Where its name ends in [`Extraction::names`] (it starts where the previous frame's ends).
    name_end: usize,
    out_start: usize,
    text_start: usize,
    link_start: usize,
}

/// The state of one main-text extraction: the text kept so far and the open elements.
#[derive(Default)]
pub(super) struct Extraction {
    /// The text kept so far.
    out: String,
    stack: Vec<Frame>,
    /// The names of the open elements, one after another.
    names: String,
    /// Depth of the furniture element whose content is being skipped.
    skip_from: Option<usize>,
    /// Open `<a>` elements.
    links: usize,
    /// Visible characters kept so far, and how many of them are link text.
    text_chars: usize,
    link_chars: usize,
}

impl Sink for Extraction {
    type Chunk = Infallible;

    fn text(&mut self, text: &str) {
        if self.skip_from.is_some() {
            return;
        }
        self.out.push_str(text);
        let visible = text.chars().filter(|c| !c.is_whitespace()).count();
        self.text_chars += visible;
        if self.links > 0 {
            self.link_chars += visible;
        }
    }

    fn start_tag(&mut self, tag: &StartTag<'_>) {
        if tag.self_closing || is_one_of(tag.name, &VOID_ELEMENTS) {
            self.out.push(if tag.name == "br" { '\n' } else { ' ' });
        } else {
            self.open(tag);
        }
    }

    fn end_tag(&mut self, name: &str) {
        self.close(name);
    }

    fn other(&mut self) {
        self.out.push(' ');
    }

    fn wants_attribute(&self, name: &[u8]) -> bool {
        FURNITURE_ATTRIBUTES.iter().any(|a| a.as_bytes() == name)
    }

    fn end(&mut self) {
        while !self.stack.is_empty() {
            self.close_top();
        }
    }
}

impl Extraction {
    /// An extraction of the page `html`, to be given its tokens.
    pub(super) fn for_page(html: &str) -> Self {
        Extraction {
            out: String::with_capacity(html.len() / 2),
            ..Extraction::default()
        }
    }

    /// The article, once the page's tokens are given.
    pub(super) fn into_text(self) -> String {
        self.out
    }

    /// The name of the open element `at`.
    fn name(&self, at: usize) -> &str {
        let start = at
            .checked_sub(1)
            .map_or(0, |before| self.stack[before].name_end);
        &self.names[start..self.stack[at].name_end]
    }

    fn open(&mut self, tag: &StartTag<'_>) {
        let name = tag.name;
        // An open <p>, <li>, <td>, ... is closed by its next sibling.
        while let Some(top) = self.stack.len().checked_sub(1) {
            if !implicitly_closed_by(self.name(top), name) {
                break;
            }
            self.close_top();
        }
        if self.skip_from.is_none() && is_furniture(tag) {
            self.skip_from = Some(self.stack.len());
        }
        if name == "a" {
            self.links += 1;
        }
        if !is_inline(name) {
            self.out.push('\n');
        }
        self.names.push_str(name);
        self.stack.push(Frame {
            name_end: self.names.len(),
            out_start: self.out.len(),
            text_start: self.text_chars,
            link_start: self.link_chars,
        });
    }

    /// Closes the innermost open element named `name` and every element inside it; a stray end
    /// tag closes nothing.
    fn close(&mut self, name: &str) {
        if let Some(at) = (0..self.stack.len())
            .rev()
            .find(|&at| self.name(at) == name)
        {
            while self.stack.len() > at {
                self.close_top();
            }
        }
    }

    /// Closes the innermost open element: ends a skip it started, or drops it when it is a
    /// block made mostly of link text.
    fn close_top(&mut self) {
        let Some(top) = self.stack.len().checked_sub(1) else {
            return;
        };
        let name = self.name(top);
        let (link, inline) = (name == "a", is_inline(name));
        let link_block = is_one_of(name, &LINK_DENSITY_BLOCKS);
        if link {
            self.links = self.links.saturating_sub(1);
        }
        let frame = self.stack.pop().expect("an open element");
        let name_start = self.stack.last().map_or(0, |f| f.name_end);
        self.names.truncate(name_start);
        if self.skip_from == Some(self.stack.len()) {
            self.skip_from = None;
            return;
        }
        if self.skip_from.is_some() {
            return;
        }
        let text = self.text_chars - frame.text_start;
        let linked = self.link_chars - frame.link_start;
        if link_block && text > 0 && linked * 2 > text {
            self.out.truncate(frame.out_start);
            self.text_chars = frame.text_start;
            self.link_chars = frame.link_start;
        }
        if !inline {
            self.out.push('\n');
        }
    }
}

/// True when opening `next` closes an open `open` element (HTML's optional end tags).
fn implicitly_closed_by(open: &str, next: &str) -> bool {
    let same = open == next;
    match open {
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
fn is_furniture(tag: &StartTag<'_>) -> bool {
    if is_one_of(tag.name, &ARTICLE_ELEMENTS) {
        return false;
    }
    if is_one_of(tag.name, &FURNITURE_ELEMENTS) {
        return true;
    }
    tag.attributes().any(|(key, value)| {
        let value = value.to_ascii_lowercase();
        match key.as_ref() {
            "role" => FURNITURE_ROLES.contains(&value.trim()),
            "aria-hidden" => value.trim() == "true",
            "hidden" => true,
            "style" => value.replace(' ', "").contains("display:none"),
            "class" | "id" => value
                .split(|c: char| !c.is_ascii_alphanumeric() && c != '-' && c != '_')
                .any(furniture_name),
            _ => false,
        }
    })
}

/// True when one class name or id names furniture.
fn furniture_name(name: &str) -> bool {
    if name.is_empty() {
        return false;
    }
    // Each `-`/`_`-separated part starts at 0 or after an (ASCII) separator.
    let part_starts = std::iter::once(0).chain(
        name.bytes()
            .enumerate()
            .filter(|&(_, b)| b == b'-' || b == b'_')
            .map(|(at, _)| at + 1),
    );
    let mut parts = part_starts.map(|at| &name[at..]);
    parts.any(|rest| FURNITURE_NAMES.iter().any(|f| rest.starts_with(f)))
        || name
            .split(['-', '_'])
            .any(|part| FURNITURE_WORDS.contains(&part))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(html: &str) -> String {
        super::super::article(html)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
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
    fn attributes_are_read_with_any_quoting_and_references_decoded() {
        for furniture in [
            r#"<div class="a share">x</div>"#,
            "<div id='sidebar'>x</div>",
            "<div data-x=1 role=navigation>x</div>",
            "<div hidden>x</div>",
            "<div style=\"display: none\">x</div>",
            "<div class=\"&#115;hare\">x</div>",
            "<DIV CLASS=\"Share\">x</DIV>",
            "<div title=\"a > b\" class=\"share\">x</div>",
        ] {
            assert_eq!(
                words(&format!("{furniture}<p>kept</p>")),
                "kept",
                "{furniture}"
            );
        }
        // The first of two attributes of one name is the one read, as the standard reads it.
        assert_eq!(words("<div class=body class=share>x</div>"), "x");
    }

    #[test]
    fn unclosed_elements_close_as_html_lets_them() {
        assert_eq!(
            words("<div><p>one<p>two<ul><li>three<li>four</div>five"),
            "one two three four five"
        );
        // A link list left open is still measured when its parent closes.
        assert_eq!(
            words("<div><p>Story text here.</p><ul><li><a>one</a><li><a>two</a></div>"),
            "Story text here."
        );
        assert_eq!(words("<p>a</b></i>b</p>"), "ab");
    }
}
