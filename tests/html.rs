//! HTML through `canon`, read as the WHATWG HTML standard tokenizes it: a `>` inside a quoted
//! attribute value, comments that hold tags, CDATA sections, the text of `<title>`,
//! `<textarea>`, `<script>` (with `</` inside its strings) and `<plaintext>`, character
//! references in text and in attribute values, and unclosed tags, each with the exact words
//! the command prints for a page that holds it.

#[allow(dead_code)]
mod common;

use common::{megashingle, stdout_of, temp};

/// The canonical words `canon` prints for a `.html` file holding `html`, which must succeed.
fn canon(html: &str) -> String {
    let dir = temp();
    std::fs::write(dir.path().join("page.html"), html).expect("writes the page");
    let output = megashingle(dir.path())
        .args(["canon", "page.html"])
        .output()
        .expect("runs");
    assert!(output.status.success(), "{}", common::stderr_of(&output));
    stdout_of(&output).trim_end().to_owned()
}

/// `body` as the body of a whole page, with a title and a furniture-free article.
fn page(body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html><head><title>Page title</title></head><body>{body}</body></html>\n"
    )
}

#[test]
fn a_quoted_angle_bracket_stays_in_its_attribute() {
    assert_eq!(
        canon(&page(
            r#"<p><img alt="a > b" src=x>Caption text <a title='1 > 0' href=y>here</a></p>"#
        )),
        "caption text here"
    );
}

#[test]
fn a_comment_holding_a_tag_is_dropped_whole() {
    assert_eq!(
        canon(&page(
            "<p>before <!-- <p>hidden</p> --> after</p><p>one<!-->two</p>"
        )),
        "before after one two"
    );
}

#[test]
fn cdata_is_a_bogus_comment_in_html_and_text_in_mathml() {
    assert_eq!(
        canon(&page(
            "<p>alpha <![CDATA[ hidden <i>shown</i> ]]> omega</p>"
        )),
        "alpha shown omega"
    );
    assert_eq!(
        canon(&page(
            "<p>formula <math><mi><![CDATA[x<y]]></mi></math> holds</p>"
        )),
        "formula x y holds"
    );
}

#[test]
fn title_text_is_dropped_and_textarea_text_is_kept_as_written() {
    assert_eq!(
        canon(&page("<p>body words</p><title>second <b>title</b></title>")),
        "body words"
    );
    assert_eq!(
        canon(&page(
            "<p>note: <textarea><b>bold</b> &lt;tag&gt;</textarea></p>"
        )),
        "note b bold b tag"
    );
}

#[test]
fn a_script_ends_only_at_its_own_end_tag() {
    let script = r#"<script>var s = "</p><p>leaked</p>"; var t = '</scr' + 'ipt>';</script>"#;
    let escaped = r#"<script><!--document.write("<script>x()</script> leaked")--></script>"#;
    assert_eq!(
        canon(&page(&format!(
            "<p>first</p>{script}<p>second</p>{escaped}<p>third</p>"
        ))),
        "first second third"
    );
}

#[test]
fn character_references_decode_in_text_and_attributes() {
    assert_eq!(
        canon(&page("<p>caf&eacute; &amp; na&iuml;ve, &Eacute;T&Eacute; &#1040;&#x431;&#1074; x&notin y &#138;koda</p>")),
        "café naïve été абв x in y škoda"
    );
    // A class named by a reference is the name it decodes to: a share bar, dropped.
    assert_eq!(
        canon(&page("<article><p>Story words stay.</p><div class=\"&#115;hare-bar\">Share this story</div></article>")),
        "story words stay"
    );
}

#[test]
fn unclosed_tags_close_as_html_lets_them() {
    assert_eq!(
        canon(&page(
            "<div><p>one<p>two<ul><li>three<li>four</div>five <a href=\"/never-closed"
        )),
        "one two three four five"
    );
}

#[test]
fn plaintext_makes_the_rest_of_the_page_text() {
    assert_eq!(
        canon("<p>intro</p><plaintext><b>bold</b></plaintext> end"),
        "intro b bold b plaintext end"
    );
}
