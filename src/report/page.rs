//! The report page: one self-contained HTML file made from a [`ReportModel`] by the pure
//! function [`render`]. The page reads without JavaScript (summary, histogram, every story
//! and member as plain HTML); its one inline script adds paging, filters and the side-by-side
//! view from the data in a `<script type="application/json">` block.
//!
//! What documents say never runs. Every id, text and column value is escaped for where it
//! goes: as HTML text (`&`, `<`, `>` escaped; ids with their invisible characters shown as
//! code points, and every text isolated from the text around it for bidirectional layout), or
//! as a JSON string in the data block, with `<`, `>`, `&`, U+2028 and U+2029 written as
//! `\uXXXX` so that neither `</script` nor `<!--` can appear in it. No document value goes
//! into an attribute or a URL. A Content-Security-Policy meta tag allows only the page's own
//! script and style (by their SHA-256 hashes) and nothing from anywhere else.

use std::fmt::Write as _;

use base64::Engine as _;
use sha2::{Digest, Sha256};
use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};

use crate::report::model::{Join, Member, ReportModel, Story, StorySource, HISTOGRAM_BINS};

/// The page's style sheet.
const STYLE: &str = include_str!("page.css");
/// The page's script.
const SCRIPT: &str = include_str!("page.js");

/// The page's title.
pub const TITLE: &str = "Stories: megashingle report";

/// Stories of more members than this page their members (see `page.js`).
const MEMBERS_PER_PAGE: usize = 100;

/// The report page of `model`.
pub fn render(model: &ReportModel) -> String {
    let text_bytes: usize = (model.stories.iter())
        .flat_map(|s| &s.members)
        .map(|m| m.id.len() * 2 + m.lead.len() + m.rest.len() + 120)
        .sum();
    let mut page = String::with_capacity(text_bytes + STYLE.len() + SCRIPT.len() + 16_384);
    page.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    let _ = writeln!(
        page,
        "<meta http-equiv=\"Content-Security-Policy\" content=\"{}\">",
        content_security_policy()
    );
    page.push_str("<meta name=\"referrer\" content=\"no-referrer\">\n");
    page.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    let _ = writeln!(page, "<title>{TITLE}</title>");
    let _ = writeln!(page, "<style>{STYLE}</style>");
    let _ = writeln!(page, "<script>{SCRIPT}</script>");
    page.push_str("</head>\n<body>\n");
    header(&mut page, model);
    summary(&mut page, model);
    controls(&mut page);
    page.push_str("<main id=\"stories\">\n");
    for (index, story) in model.stories.iter().enumerate() {
        story_html(&mut page, model, index, story);
    }
    page.push_str("</main>\n<aside id=\"view\" hidden></aside>\n");
    page.push_str(
        "<footer>Made by megashingle. Without JavaScript, open a story to see its members; \
         with it, the page filters, pages the stories and shows a member and its \
         representative side by side (click a member).</footer>\n",
    );
    page.push_str("<script type=\"application/json\" id=\"data\">");
    data(&mut page, model);
    page.push_str("</script>\n</body>\n</html>\n");
    page
}

/// The page's Content-Security-Policy: nothing but its own script and style.
pub(crate) fn content_security_policy() -> String {
    content_security_policy_for(Some(SCRIPT), STYLE)
}

/// The Content-Security-Policy of a page whose only inline blocks are `script` (when it has
/// one) and `style`: nothing else runs or loads.
pub(crate) fn content_security_policy_for(script: Option<&str>, style: &str) -> String {
    let script = script.map_or("'none'".to_owned(), |s| format!("'{}'", sha256_source(s)));
    format!(
        "default-src 'none'; script-src {script}; style-src '{}'; img-src 'none'; \
         base-uri 'none'; form-action 'none'",
        sha256_source(style)
    )
}

/// A CSP hash source for an inline block's text.
fn sha256_source(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    format!(
        "sha256-{}",
        base64::engine::general_purpose::STANDARD.encode(digest)
    )
}

/// `value` as HTML text.
pub(crate) fn text(page: &mut String, value: &str) {
    html_escape::encode_text_to_string(value, page);
}

/// An id as HTML text in a `<bdi>` (see [`id_text`]).
pub(crate) fn id(page: &mut String, value: &str) {
    page.push_str("<bdi>");
    id_text(page, value);
    page.push_str("</bdi>");
}

/// An id as HTML text, each character that would not show (controls, format characters such
/// as bidi overrides and zero-width marks, line and paragraph separators) shown as its code
/// point.
fn id_text(page: &mut String, value: &str) {
    let mut plain = 0;
    for (at, c) in value.char_indices() {
        if invisible(c) {
            text(page, &value[plain..at]);
            let _ = write!(page, "<span class=cp>U+{:04X}</span>", c as u32);
            plain = at + c.len_utf8();
        }
    }
    text(page, &value[plain..]);
}

/// Characters of an id that would not show, or would change how what follows shows.
fn invisible(c: char) -> bool {
    matches!(
        c.general_category(),
        GeneralCategory::Control
            | GeneralCategory::Format
            | GeneralCategory::LineSeparator
            | GeneralCategory::ParagraphSeparator
    )
}

/// `value` as a JSON string safe inside a `<script>` element: besides JSON's own escapes,
/// `<`, `>`, `&`, U+2028 and U+2029 are written as `\uXXXX`.
fn json_string(page: &mut String, value: &str) {
    let quoted = serde_json::to_string(value).expect("a string serializes");
    for c in quoted.chars() {
        match c {
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                let _ = write!(page, "\\u{:04x}", c as u32);
            }
            _ => page.push(c),
        }
    }
}

/// A number with `digits` decimals, as the CSV writes similarities.
pub(crate) fn fixed(value: f64, digits: usize) -> String {
    format!("{value:.digits$}")
}

/// A count with thousands separators.
fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn header(page: &mut String, model: &ReportModel) {
    page.push_str("<header class=\"top\"><h1>Stories</h1><p>");
    let _ = write!(
        page,
        "{} documents from ",
        count(model.summary.documents as u64)
    );
    for (i, input) in model.inputs.iter().enumerate() {
        if i > 0 {
            page.push_str(", ");
        }
        id(page, input);
    }
    match &model.source {
        StorySource::Clustered => page.push_str(", clustered with the configuration below"),
        StorySource::Table(table) => {
            page.push_str("; stories as the table ");
            id(page, table);
            page.push_str(" gives them");
        }
        StorySource::Index(index) => {
            page.push_str("; stories of the index ");
            id(page, index);
        }
    }
    page.push_str("</p></header>\n");
}

fn summary(page: &mut String, model: &ReportModel) {
    let s = &model.summary;
    page.push_str("<section class=\"summary\">\n<dl class=\"cards\">");
    let mut card = |class: &str, label: &str, value: u64| {
        let _ = write!(
            page,
            "<div{}><dt>{label}</dt><dd>{}</dd></div>",
            if class.is_empty() {
                String::new()
            } else {
                format!(" class={class}")
            },
            count(value)
        );
    };
    card("", "documents", s.documents as u64);
    card("", "stories", s.stories as u64);
    card("", "stories of 2 or more", s.multi_stories as u64);
    card("", "documents in them", s.clustered_documents as u64);
    card("", "too short to compare", s.too_short as u64);
    card("", "records skipped", s.skipped);
    if model.source == StorySource::Clustered {
        card("", "joined the representative", s.direct as u64);
        card("through", "joined through another member", s.through as u64);
        card("weak", "attached on a weak link", s.weak as u64);
    }
    page.push_str("</dl>\n");
    histogram(page, model);
    page.push_str("<details class=\"config\"><summary>Configuration</summary><pre>");
    text(page, &model.configuration);
    page.push_str("</pre></details>\n</section>\n");
}

/// The histogram of members' similarity to their representative, as inline SVG.
fn histogram(page: &mut String, model: &ReportModel) {
    let bins = model.similarity_histogram();
    let highest = bins.iter().copied().max().unwrap_or(0).max(1);
    let (width, height, left, bottom, top) = (600.0, 170.0, 44.0, 24.0, 10.0);
    let plot = height - bottom - top;
    let bar = (width - left - 8.0) / HISTOGRAM_BINS as f64;
    let x_of = |similarity: f64| left + similarity * bar * HISTOGRAM_BINS as f64;
    page.push_str("<figure class=\"histogram\"><figcaption>Members by similarity to their representative (estimated Jaccard; representatives left out)</figcaption>");
    let _ = write!(
        page,
        "<svg viewBox=\"0 0 {width} {height}\" role=\"img\" aria-label=\"histogram of member similarity\">"
    );
    for (i, &n) in bins.iter().enumerate() {
        let h = plot * n as f64 / highest as f64;
        let from = i as f64 / HISTOGRAM_BINS as f64;
        let _ = write!(
            page,
            "<rect class=\"bar\" x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{h:.1}\"><title>{:.2}–{:.2}: {} members</title></rect>",
            left + i as f64 * bar + 1.0,
            top + plot - h,
            bar - 2.0,
            from,
            from + 1.0 / HISTOGRAM_BINS as f64,
            count(n as u64)
        );
    }
    let base = top + plot;
    let _ = write!(
        page,
        "<line class=\"axis\" x1=\"{left}\" y1=\"{base}\" x2=\"{}\" y2=\"{base}\"/>",
        width - 8.0
    );
    for tick in [0.0, 0.25, 0.5, 0.75, 1.0] {
        let _ = write!(
            page,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{tick}</text>",
            x_of(tick),
            height - 6.0
        );
    }
    let _ = write!(
        page,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text><text x=\"{:.1}\" y=\"{base:.1}\" text-anchor=\"end\">0</text>",
        left - 6.0,
        top + 9.0,
        count(highest as u64),
        left - 6.0
    );
    for (class, label, value) in [
        ("join", "join", model.join_similarity),
        ("attach", "attach", model.attach_similarity),
    ] {
        if value > 0.0 && value <= 1.0 {
            let x = x_of(value);
            let _ = write!(
                page,
                "<line class=\"threshold {class}\" x1=\"{x:.1}\" y1=\"{top}\" x2=\"{x:.1}\" y2=\"{base}\"/><text x=\"{:.1}\" y=\"{:.1}\">{label} {value}</text>",
                x + 3.0,
                top + 9.0 + if class == "attach" { 12.0 } else { 0.0 }
            );
        }
    }
    page.push_str("</svg></figure>\n");
}

fn controls(page: &mut String) {
    page.push_str(
        "<section id=\"controls\" class=\"controls\" hidden>\
         <input type=\"search\" id=\"q\" placeholder=\"Filter by id or text\" aria-label=\"filter by id or text\">\
         <label>size at least <input type=\"number\" id=\"size\" min=\"1\" value=\"1\"></label>\
         <label>a member's similarity at most <input type=\"number\" id=\"sim\" min=\"0\" max=\"1\" step=\"0.05\" placeholder=\"any\"></label>\
         <label><input type=\"checkbox\" id=\"loose\"> weak or chained links only</label>\
         <span class=\"nav\"><span class=\"count\" id=\"count\"></span>\
         <button type=\"button\" id=\"prev\">‹ previous</button><span id=\"pageinfo\"></span>\
         <button type=\"button\" id=\"next\">next ›</button></span></section>\n",
    );
}

/// How many members of a story joined through another member, and on a weak link.
fn loose_counts(story: &Story) -> (usize, usize) {
    let mut through_others = 0;
    let mut weak = 0;
    for member in &story.members {
        if let Join::Linked {
            partner, weak: w, ..
        } = member.join
        {
            weak += usize::from(w);
            through_others += usize::from(!w && partner != 0);
        }
    }
    (through_others, weak)
}

/// One story. The markup is terse, as a report of 100,000 documents holds as many of these:
/// a lone document is a `<p>`, a story of two or more a `<details>` with a table of its
/// members (end tags left out where HTML allows), and classes are one or two letters (see
/// `page.css`).
fn story_html(page: &mut String, model: &ReportModel, index: usize, story: &Story) {
    let representative = &story.members[0];
    if story.members.len() == 1 {
        let _ = write!(page, "<p id=s{index}>");
        id(page, &representative.id);
        lead(page, "span", representative);
        if representative.too_short {
            page.push_str("<small>too short</small>");
        }
        columns_inline(page, representative);
        page.push('\n');
        return;
    }
    let long = if story.members.len() > MEMBERS_PER_PAGE {
        " class=long"
    } else {
        ""
    };
    let _ = write!(
        page,
        "<details id=s{index}{long}><summary><b>{}</b>",
        count(story.members.len() as u64)
    );
    id(page, &representative.id);
    lead(page, "span", representative);
    columns_inline(page, representative);
    // A table's or an index's name of the story, when it is not its representative's id.
    if model.source != StorySource::Clustered && story.id != representative.id {
        page.push_str("<small>story ");
        id_text(page, &story.id);
        page.push_str("</small>");
    }
    if let Some(size) = story.known_size {
        let _ = write!(page, "<small>{} in the index</small>", count(size));
    }
    let (through_others, weak) = loose_counts(story);
    if through_others > 0 {
        let _ = write!(
            page,
            "<small class=through>{through_others} through others</small>"
        );
    }
    if weak > 0 {
        let _ = write!(page, "<small class=weak>{weak} weak</small>");
    }
    if let Some(lowest) = story.lowest_similarity() {
        let _ = write!(page, "<small>lowest {}</small>", fixed(lowest, 2));
    }
    page.push_str("</summary>\n<table><thead><tr><th>document<th>similarity<th>joined");
    for column in &model.columns {
        page.push_str("<th>");
        text(page, column);
    }
    // The rows after the head go into the table's implied body.
    page.push_str("<th>text</thead>\n");
    for member in &story.members[1..] {
        member_row(page, model, member);
    }
    page.push_str("</table></details>\n");
}

/// A member's row (the representative has none: its story's summary shows it). Rows are
/// numbered from 2 by the style sheet, the representative being #1; an id in a cell needs no
/// `<bdi>`: a cell is a paragraph of its own for bidirectional layout.
fn member_row(page: &mut String, model: &ReportModel, member: &Member) {
    let class = match member.join {
        Join::Linked { weak: true, .. } => "\"m weak\"",
        Join::Linked { partner, .. } if partner != 0 => "\"m through\"",
        _ => "m",
    };
    let _ = write!(page, "<tr class={class}><td>");
    id_text(page, &member.id);
    page.push_str("<td>");
    match (member.similarity, member.too_short) {
        (_, true) => page.push_str("too short"),
        (Some(similarity), _) => page.push_str(&fixed(similarity, 4)),
        (None, _) => page.push('–'),
    }
    page.push_str("<td>");
    match member.join {
        Join::Representative => page.push_str("representative"),
        Join::NotKnown => page.push_str("not known"),
        Join::Linked {
            partner,
            score,
            weak,
            depth,
        } => {
            let how = match (weak, partner) {
                (true, 0) => "weak link to the representative".to_owned(),
                (true, p) => format!("weak link to #{}", p + 1),
                (false, 0) => "direct".to_owned(),
                (false, p) => format!("through #{}", p + 1),
            };
            let _ = write!(page, "{how} · {}", fixed(score, 2));
            if depth > 1 {
                let _ = write!(page, " ({depth} links away)");
            }
        }
    }
    for i in 0..model.columns.len() {
        page.push_str("<td>");
        text(page, member.columns.get(i).map_or("", String::as_str));
    }
    lead(page, "td", member);
    page.push('\n');
}

/// A member's lead in a `tag` of class `t`, or `tm` when the text goes on: exactly the text
/// the script reads back and continues with the member's rest. Each member has one, in
/// document order: a representative's opens its story.
fn lead(page: &mut String, tag: &str, member: &Member) {
    let class = if member.cut || !member.rest.is_empty() {
        "tm"
    } else {
        "t"
    };
    let _ = write!(page, "<{tag} class={class}>");
    text(page, &member.lead);
    if tag != "td" {
        let _ = write!(page, "</{tag}>");
    }
}

/// A representative's or lone document's column values, in one `<small>`.
fn columns_inline(page: &mut String, member: &Member) {
    let values: Vec<&str> = (member.columns.iter())
        .map(String::as_str)
        .filter(|v| !v.is_empty())
        .collect();
    if !values.is_empty() {
        page.push_str("<small>");
        text(page, &values.join(" · "));
        page.push_str("</small>");
    }
}

/// The data block: for each story, for each member, `[id, similarity, join, rest, cut,
/// pair]` (the last three for stories of two or more only), where join is 0 (representative
/// or not known), 1 (direct), 2 (through another member) or 3 (weak link), and pair is the
/// comparison with the representative: `[common shingles, member's shingles,
/// representative's, estimated Jaccard, shared supershingles, shared megashingles, member's
/// lead share, representative's lead share, member's passages, representative's passages]`
/// (the exact Jaccard, Dice and containment follow from the first three; see `page.js`).
fn data(page: &mut String, model: &ReportModel) {
    let g = &model.grouping;
    let _ = write!(
        page,
        "{{\"k\":{},\"minima\":{},\"supershingles\":{},\"megashingles\":{},\"s\":[",
        g.shingle_size, g.minima, g.supershingles, g.megashingles
    );
    for (i, story) in model.stories.iter().enumerate() {
        if i > 0 {
            page.push(',');
        }
        page.push('[');
        for (j, member) in story.members.iter().enumerate() {
            if j > 0 {
                page.push(',');
            }
            page.push('[');
            json_string(page, &member.id);
            match member.similarity {
                Some(s) => {
                    let _ = write!(page, ",{}", round(s));
                }
                None => page.push_str(",null"),
            }
            let join = match member.join {
                Join::Representative | Join::NotKnown => 0,
                Join::Linked { weak: true, .. } => 3,
                Join::Linked { partner: 0, .. } => 1,
                Join::Linked { .. } => 2,
            };
            let _ = write!(page, ",{join}");
            if story.members.len() > 1 {
                page.push(',');
                json_string(page, &member.rest);
                let _ = write!(page, ",{}", u8::from(member.cut));
                if let Some(p) = &member.pair {
                    let _ = write!(
                        page,
                        ",[{},{},{},{},{},{},{},{},",
                        p.common,
                        p.member_shingles,
                        p.representative_shingles,
                        round(p.estimated_jaccard),
                        p.shared_supershingles,
                        p.shared_megashingles,
                        round(p.member_lead_shared),
                        round(p.representative_lead_shared),
                    );
                    passages(page, &p.member_passages);
                    page.push(',');
                    passages(page, &p.representative_passages);
                    page.push(']');
                }
            }
            page.push(']');
        }
        page.push(']');
    }
    page.push_str("]}");
}

/// A similarity to four decimals, as a JSON number.
fn round(value: f64) -> f64 {
    (value * 10_000.0).round() / 10_000.0
}

fn passages(page: &mut String, list: &[std::ops::Range<u32>]) {
    page.push('[');
    for (i, p) in list.iter().enumerate() {
        if i > 0 {
            page.push(',');
        }
        let _ = write!(page, "{},{}", p.start, p.end);
    }
    page.push(']');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::{Grouping, Pair, Summary};
    use std::ops::Range;

    fn member(id: &str, lead: &str, join: Join) -> Member {
        Member {
            id: id.into(),
            similarity: Some(0.5),
            too_short: false,
            columns: vec!["<i>col</i>".into()],
            join,
            lead: lead.into(),
            rest: " more </script><!-- words".into(),
            cut: true,
            pair: None,
        }
    }

    fn model(members: Vec<Member>) -> ReportModel {
        ReportModel {
            inputs: vec!["in<put>.csv".into()],
            source: StorySource::Clustered,
            summary: Summary::default(),
            configuration: "[cluster]\nmin-similarity = 0.35 # <b>".into(),
            grouping: Grouping::default(),
            join_similarity: 0.35,
            attach_similarity: 0.2,
            columns: vec!["source".into()],
            stories: vec![Story {
                id: "s".into(),
                known_size: None,
                members,
            }],
        }
    }

    /// The page between the end of the head and the data block: what document values
    /// become as HTML.
    fn body(page: &str) -> &str {
        let start = page.find("<body>").unwrap();
        let end = page.find("<script type=\"application/json\"").unwrap();
        &page[start..end]
    }

    #[test]
    fn document_values_are_escaped_as_text() {
        let hostile = "<img src=x onerror=alert(1)>\"'&amp;";
        let page = render(&model(vec![
            member(hostile, hostile, Join::Representative),
            member(
                "b",
                "</td></tr></table><script>x()</script>",
                Join::NotKnown,
            ),
        ]));
        let body = body(&page);
        assert!(!body.contains("<img"), "{body}");
        assert!(!body.contains("<script>x()"), "{body}");
        assert!(body.contains("&lt;img src=x onerror=alert(1)&gt;\"'&amp;amp;"));
        assert!(body.contains("&lt;i&gt;col&lt;/i&gt;"));
        assert!(body.contains("in&lt;put&gt;.csv"));
        assert!(page.contains("min-similarity = 0.35 # &lt;b&gt;"));
    }

    #[test]
    fn invisible_characters_of_ids_show_as_code_points() {
        let mut page = String::new();
        id(&mut page, "evil\u{202E}txt.exe\u{200B}\n");
        assert_eq!(
            page,
            "<bdi>evil<span class=cp>U+202E</span>txt.exe<span class=cp>U+200B</span><span class=cp>U+000A</span></bdi>"
        );
    }

    #[test]
    fn the_data_block_cannot_be_closed_or_commented_from_inside() {
        let page = render(&model(vec![
            member("a</script>", "x", Join::Representative),
            member("b\u{2028}<!--", "y", Join::NotKnown),
        ]));
        let start = page
            .find("<script type=\"application/json\" id=\"data\">")
            .unwrap();
        let data = &page[start..];
        let inner = &data[data.find('>').unwrap() + 1..data.find("</script>").unwrap()];
        for forbidden in ['<', '>', '&', '\u{2028}', '\u{2029}'] {
            assert!(!inner.contains(forbidden), "{forbidden:?} in {inner}");
        }
        let parsed: serde_json::Value = serde_json::from_str(inner).unwrap();
        assert_eq!(parsed["s"][0][0][0], "a</script>");
        assert_eq!(parsed["s"][0][1][0], "b\u{2028}<!--");
        assert_eq!(parsed["s"][0][1][3], " more </script><!-- words");
    }

    #[test]
    fn the_policy_allows_exactly_the_page_script_and_style() {
        let page = render(&model(vec![member("a", "x", Join::Representative)]));
        let policy = content_security_policy();
        assert!(page.contains(&format!("content=\"{policy}\"")));
        assert!(policy.starts_with("default-src 'none'; script-src 'sha256-"));
        // The hashes are those of the blocks as they stand in the page.
        let inline = |open: &str, close: &str| {
            let start = page.find(open).unwrap() + open.len();
            page[start..start + page[start..].find(close).unwrap()].to_owned()
        };
        assert_eq!(inline("<script>", "</script>"), SCRIPT);
        assert_eq!(inline("<style>", "</style>"), STYLE);
        assert!(policy.contains(&sha256_source(SCRIPT)));
        assert!(policy.contains(&sha256_source(STYLE)));
        // The known SHA-256 of "abc", in base64.
        assert_eq!(
            sha256_source("abc"),
            "sha256-ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0="
        );
        // No document value can end the page's own blocks early.
        assert!(!SCRIPT.contains("</script") && !STYLE.contains("</style"));
    }

    #[test]
    fn stories_show_members_with_how_they_joined() {
        let linked = |partner, weak, depth| Join::Linked {
            partner,
            score: 0.42,
            weak,
            depth,
        };
        let mut members = vec![
            member("rep", "lead of rep", Join::Representative),
            member("direct", "x", linked(0, false, 1)),
            member("chained", "x", linked(1, false, 2)),
            member("weak", "x", linked(2, true, 3)),
        ];
        members[1].pair = Some(Pair {
            jaccard: 0.123456,
            containment: 0.5,
            dice: 0.2,
            common: 10,
            member_shingles: 40,
            representative_shingles: 50,
            estimated_jaccard: 0.1,
            shared_supershingles: 1,
            shared_megashingles: 0,
            member_lead_shared: 0.5,
            representative_lead_shared: 0.25,
            member_passages: vec![0..2, 5..7],
            representative_passages: vec![Range { start: 1, end: 3 }],
        });
        let page = render(&model(members));
        let body = body(&page);
        let row = "<tr class=m><td>direct<td>0.5000<td>direct · 0.42<td>&lt;i&gt;col&lt;/i&gt;<td class=tm>x\n";
        assert!(body.contains(row), "{body}");
        assert!(body.contains("through #2 · 0.42 (2 links away)"));
        assert!(body.contains("<tr class=\"m weak\">"));

        assert!(body.contains("weak link to #3 · 0.42 (3 links away)"));
        // The representative has no row: its story's summary shows it.
        assert!(body.contains("<summary><b>4</b><bdi>rep</bdi><span class=tm>lead of rep</span>"));
        assert_eq!(body.matches("<tr class=").count(), 3);
        assert!(body.contains("1 through others") && body.contains("1 weak"));
        assert!(body.contains("<th>source<th>text"));
        assert!(page.contains(",[10,40,50,0.1,1,0,0.5,0.25,[0,2,5,7],[1,3]]"));
    }

    #[test]
    fn counts_have_thousands_separators() {
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(1000), "1,000");
        assert_eq!(count(1234567), "1,234,567");
    }
}
