//! The reuse report: the pairs `reuse` finds, most shared words first, each with its two
//! texts side by side and the passages they share marked on both. [`pair_view`] makes one
//! pair's view from the two raw texts (compared as `compare` compares them, passages counted
//! as `reuse` counts them); [`render`], a pure function, writes the page. The page is plain
//! HTML: no script, one inline style allowed by its hash, every document value escaped as
//! text (see [`super::page`]).

use std::fmt::Write as _;
use std::ops::Range;

use crate::compare::{Comparer, Prepared};
use crate::report::page::{content_security_policy_for, fixed, id, text};
use crate::report::text::{Keep, Shown};
use crate::reuse::align::PassageRules;
use crate::ReusePair;

/// The page's style sheet.
const STYLE: &str = include_str!("reuse.css");

/// The page's title.
pub const TITLE: &str = "Reuse: megashingle report";

/// Pairs shown at the most, most shared words first.
pub const MAX_PAIRS: usize = 2000;

/// Display words kept of each text of a pair.
pub(crate) const TEXT_WORDS: usize = 1500;

/// What the reuse page shows; the pairs' ids are borrowed from the `reuse` result.
#[derive(Debug, Clone, PartialEq)]
pub struct ReuseView<'a> {
    /// The inputs, as named on the command line.
    pub inputs: Vec<String>,
    /// Documents read.
    pub documents: usize,
    /// Pairs found (more than shown when over [`MAX_PAIRS`]).
    pub found: usize,
    /// The pairs shown.
    pub pairs: Vec<PairView<'a>>,
}

/// One pair: its `reuse` row and both texts.
#[derive(Debug, Clone, PartialEq)]
pub struct PairView<'a> {
    /// The pair's row of the `reuse` table.
    pub row: ReusePair<'a>,
    /// `doc_a` as shown, with its marks.
    pub a: SideView,
    /// `doc_b` as shown.
    pub b: SideView,
}

/// One text of a pair as shown: its display words (each after its separator) and the runs of
/// them that are shared words of a passage.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SideView {
    /// The display words, each with the separator before it.
    pub words: Vec<String>,
    /// Runs of `words` marked as shared.
    pub marks: Vec<Range<u32>>,
    /// True when the text goes on past the words kept.
    pub cut: bool,
}

/// The view of the pair `row`, from the raw texts of its two documents (`None` for a text
/// that could not be read back, shown empty).
pub fn pair_view<'a>(
    comparer: &Comparer,
    rules: PassageRules,
    row: &ReusePair<'a>,
    (a_raw, b_raw): (Option<&str>, Option<&str>),
) -> PairView<'a> {
    let prepare = |raw: &str| {
        let visible = comparer.canonicalizer().visible_text(raw).into_owned();
        let prepared = comparer.prepare_visible(&visible, "").ok();
        (visible, prepared)
    };
    let (a, b) = (a_raw.map(prepare), b_raw.map(prepare));
    let side = |this: &Option<(String, Option<Prepared>)>,
                other: &Option<(String, Option<Prepared>)>| {
        let Some((visible, prepared)) = this else {
            return SideView::default();
        };
        let keep = Keep {
            words: TEXT_WORDS,
            bytes: usize::MAX,
        };
        let canonical = prepared.as_ref().map(|p| p.words());
        let shown = Shown::of_visible(comparer.canonicalizer(), visible, canonical, keep);
        let runs = match (prepared, other.as_ref().and_then(|o| o.1.as_ref())) {
            (Some(p), Some(o)) => p.reuse_runs(o, rules),
            _ => Vec::new(),
        };
        SideView {
            words: shown.words().map(str::to_owned).collect(),
            marks: shown.passages(&runs),
            cut: shown.is_cut(),
        }
    };
    PairView {
        row: *row,
        a: side(&a, &b),
        b: side(&b, &a),
    }
}

/// The page of `view`.
pub fn render(view: &ReuseView) -> String {
    let mut page = String::with_capacity(16_384);
    page.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    let _ = writeln!(
        page,
        "<meta http-equiv=\"Content-Security-Policy\" content=\"{}\">",
        content_security_policy_for(None, STYLE)
    );
    page.push_str("<meta name=\"referrer\" content=\"no-referrer\">\n");
    page.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    let _ = writeln!(page, "<title>{TITLE}</title>");
    let _ = writeln!(page, "<style>{STYLE}</style>");
    page.push_str("</head>\n<body>\n<header class=top><h1>Who reused what</h1><p>");
    text(&mut page, &view.inputs.join(", "));
    let _ = write!(
        page,
        " · {} documents · {} pairs sharing a passage",
        view.documents, view.found
    );
    if view.found > view.pairs.len() {
        let _ = write!(page, ", the {} that share the most shown", view.pairs.len());
    }
    page.push_str("</p></header>\n<main>\n");
    for (i, pair) in view.pairs.iter().enumerate() {
        pair_html(&mut page, i, pair);
    }
    page.push_str(
        "</main>\n<footer>Made by megashingle. Open a pair to see its two texts side by side; \
         the words of the passages they share are marked in both.</footer>\n</body>\n</html>\n",
    );
    page
}

/// One pair: a `<details>` whose summary holds the figures and whose body the two texts.
fn pair_html(page: &mut String, index: usize, pair: &PairView) {
    let row = &pair.row;
    let _ = write!(
        page,
        "<details id=p{index}{}><summary><b>{}</b> words ",
        if index == 0 { " open" } else { "" },
        row.shared_words
    );
    id(page, row.doc_a);
    page.push_str(" ⇄ ");
    id(page, row.doc_b);
    let _ = write!(
        page,
        "<small>{} of the first in the second · {} of the second in the first · {} {}, the longest {} words · Jaccard {}</small></summary>\n<div class=sbs>",
        fixed(row.a_in_b, 2),
        fixed(row.b_in_a, 2),
        row.passages,
        if row.passages == 1 { "passage" } else { "passages" },
        row.longest,
        fixed(row.jaccard, 4)
    );
    for (doc, side) in [(row.doc_a, &pair.a), (row.doc_b, &pair.b)] {
        page.push_str("<section><h2>");
        id(page, doc);
        page.push_str("</h2><p dir=auto>");
        side_html(page, side);
        page.push_str("</p></section>");
    }
    page.push_str("</div></details>\n");
}

/// A text's words, its marked runs in `<mark>`; line breaks as `<br>`.
fn side_html(page: &mut String, side: &SideView) {
    let mut marks = side.marks.iter().peekable();
    let mut open = false;
    for (i, word) in side.words.iter().enumerate() {
        let i = i as u32;
        let (separator, word) = match word.chars().next() {
            Some(c @ (' ' | '\n' | crate::report::text::JOINER)) => {
                (Some(c), &word[c.len_utf8()..])
            }
            _ => (None, word.as_str()),
        };
        while marks.peek().is_some_and(|m| m.end <= i) {
            marks.next();
        }
        let marked = marks.peek().is_some_and(|m| m.start <= i);
        if open && !marked {
            page.push_str("</mark>");
            open = false;
        }
        match separator {
            Some('\n') if open => page.push_str("</mark><br><mark>"),
            Some('\n') => page.push_str("<br>"),
            Some(' ') => page.push(' '),
            _ => {}
        }
        if marked && !open {
            page.push_str("<mark>");
        }
        open = marked;
        text(page, word);
    }
    if open {
        page.push_str("</mark>");
    }
    if side.cut {
        page.push_str(" …");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(a_words: &[&str], marks: Vec<Range<u32>>) -> ReuseView<'static> {
        let side = SideView {
            words: a_words.iter().map(|w| w.to_string()).collect(),
            marks,
            cut: false,
        };
        ReuseView {
            inputs: vec!["in<put>.csv".into()],
            documents: 2,
            found: 1,
            pairs: vec![PairView {
                row: ReusePair {
                    doc_a: "<b>a</b>",
                    doc_b: "b",
                    a_in_b: 0.5,
                    b_in_a: 0.25,
                    shared_words: 30,
                    passages: 1,
                    longest: 31,
                    jaccard: 0.1,
                },
                a: side.clone(),
                b: side,
            }],
        }
    }

    #[test]
    fn shared_runs_are_marked_on_both_texts_and_values_escaped() {
        let page = render(&view(
            &["One", " <two>", " three", "\nfour", " five"],
            vec![Range { start: 1, end: 4 }],
        ));
        assert_eq!(
            page.matches(
                "<p dir=auto>One <mark>&lt;two&gt; three</mark><br><mark>four</mark> five</p>"
            )
            .count(),
            2,
            "{page}"
        );
        assert!(page.contains("<bdi>&lt;b&gt;a&lt;/b&gt;</bdi> ⇄ <bdi>b</bdi>"));
        assert!(page.contains("in&lt;put&gt;.csv · 2 documents · 1 pairs"));
        assert!(page.contains(
            "0.50 of the first in the second · 0.25 of the second in the first · 1 passage, the longest 31 words"
        ));
        assert!(!page.contains("<script"));
        assert!(page.contains(&content_security_policy_for(None, STYLE)));
    }
}
