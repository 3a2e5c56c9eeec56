//! Readers: broken CSV quotes, HTML detection, very large documents, unknown formats and random
//! bytes into every reader and into `canon` and `compare`.
//!
//! The random-bytes tests run the library's readers in-process for the bulk of the cases (a
//! few thousand per reader) and the binary for a smaller number, since spawning it costs
//! milliseconds a case. `PROPTEST_CASES=N` sets the in-process count to N and the binary
//! count to N/40 for a longer soak.

use std::path::{Path, PathBuf};
use std::process::Output;

use proptest::prelude::*;
use proptest::test_runner::{Config as ProptestConfig, FileFailurePersistence};

use megashingle::canonicalize::Canonicalizer;
use megashingle::compare::compare;
use megashingle::config::Config;
use megashingle::io::read::{read_inputs, InputFormat, ReadOptions};

use crate::common::{megashingle, single_error_line, stderr_of, stdout_of, temp};

// ---------------------------------------------------------------------------------------------
// An unterminated quote in a CSV file

/// Ten records `d1`..`d10` with four words each; the third one's text opens a quote that
/// never closes.
fn ten_records_with_an_open_quote() -> String {
    let mut csv = String::from("id,text\n");
    for i in 1..=10 {
        if i == 3 {
            csv.push_str("d3,\"oops five six\n");
        } else {
            csv.push_str(&format!("d{i},record number {i} words\n"));
        }
    }
    csv
}

/// The ids of the output rows of `cluster`.
fn clustered_ids(output: &Output) -> Vec<String> {
    let mut ids: Vec<String> = stdout_of(output)
        .lines()
        .skip(1)
        .map(|row| row.split(',').next().unwrap_or_default().to_owned())
        .collect();
    ids.sort_by_key(|id| id[1..].parse::<u32>().unwrap_or(0));
    ids
}

#[test]
fn an_unterminated_quote_is_reported_and_the_records_after_it_are_kept() {
    let dir = temp();
    std::fs::write(dir.path().join("in.csv"), ten_records_with_an_open_quote()).unwrap();
    let output = megashingle(dir.path())
        .args(["cluster", "in.csv"])
        .output()
        .unwrap();
    let stderr = stderr_of(&output);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    let warnings: Vec<&str> = stderr.lines().filter(|l| l.contains("quote")).collect();
    assert_eq!(
        warnings,
        [
            "warning: in.csv:4: unterminated quote: the field opened on this line runs to the end \
          of the input, taking in lines 5-11 (7 records: d4, d5, …, d10), which are read on \
          their own; close the quote (a quote inside a quoted field is written \"\"); record \
          skipped"
        ]
    );
    assert_eq!(
        clustered_ids(&output),
        ["d1", "d2", "d4", "d5", "d6", "d7", "d8", "d9", "d10"]
    );
}

#[test]
fn strict_makes_an_unterminated_quote_fatal_naming_the_records_it_took() {
    let dir = temp();
    std::fs::write(dir.path().join("in.csv"), ten_records_with_an_open_quote()).unwrap();
    let output = megashingle(dir.path())
        .args(["cluster", "in.csv", "--strict", "-o", "out.csv"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let line = single_error_line(&output);
    assert!(
        line.contains("in.csv:4: unterminated quote")
            && line.contains("lines 5-11 (7 records: d4, d5, …, d10)")
            && line.ends_with("(--strict makes this fatal)"),
        "{line}"
    );
    assert!(!dir.path().join("out.csv").exists(), "nothing written");
}

#[test]
fn a_stray_quote_closed_by_a_later_records_quote_is_reported_with_both_lines() {
    let dir = temp();
    let csv = ten_records_with_an_open_quote()
        .replace("d7,record number 7 words", "d7,\"record number 7, quoted\"");
    std::fs::write(dir.path().join("in.csv"), csv).unwrap();
    let output = megashingle(dir.path())
        .args(["cluster", "in.csv"])
        .output()
        .unwrap();
    let stderr = stderr_of(&output);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "in.csv:4: unterminated quote: the field opened on this line is closed only by a \
             quote on line 8, taking in lines 5-8 (4 records: d4, d5, …, d7), which are read on \
             their own"
        ),
        "{stderr}"
    );
    assert_eq!(
        clustered_ids(&output),
        ["d1", "d2", "d4", "d5", "d6", "d7", "d8", "d9", "d10"]
    );
}

#[test]
fn an_html_page_of_many_lines_in_a_quoted_cell_is_read_whole() {
    let dir = temp();
    let mut page = String::from("<html><body>\n");
    for i in 0..3000 {
        page.push_str(&format!(
            "<p id=\"\"p{i}\"\">d{i},paragraph {i} of the page</p>\n"
        ));
    }
    page.push_str("</body></html>");
    let csv = format!("id,text\nd1,\"{page}\"\nd2,\"a table:\nd3,30\nd4,40\"\nd5,end of it\n");
    std::fs::write(dir.path().join("in.csv"), csv).unwrap();
    let output = megashingle(dir.path())
        .args(["cluster", "in.csv", "--strict"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    assert_eq!(clustered_ids(&output), ["d1", "d2", "d5"]);
}

// ---------------------------------------------------------------------------------------------
// HTML detection

/// The canonical words `canon` prints for `text` given on stdin.
fn canon(text: &str) -> String {
    let dir = temp();
    let output = megashingle(dir.path())
        .args(["canon", "-"])
        .write_stdin(text)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    stdout_of(&output).trim_end().to_owned()
}

#[test]
fn inline_markup_alone_is_read_as_html() {
    assert_eq!(
        canon("<strong>Breaking:</strong> <em>the</em> mayor said <b>no</b>"),
        "breaking the mayor said no"
    );
    assert_eq!(
        canon("H<sub>2</sub>O boils, <i>said</i> the <abbr title=\"x\">WHO</abbr>"),
        "h2o boils said the who"
    );
}

#[test]
fn a_script_in_the_middle_of_a_text_is_dropped() {
    assert_eq!(
        canon("The river rose. <script>var tracker = loadAds(window);</script> Towns flooded."),
        "the river rose towns flooded"
    );
}

#[test]
fn angle_brackets_in_prose_stay_plain_text() {
    assert_eq!(canon("a < b > c"), "a b c");
    assert_eq!(canon("x<y and y>z hold"), "x y and y z hold");
    assert_eq!(canon("so a<b and c>d"), "so a b and c d");
    assert_eq!(
        canon("use the <title> tag for the page name"),
        "use the title tag for the page name"
    );
}

/// An article of 60 distinct words.
fn article() -> String {
    (0..60)
        .map(|i| format!("word{i}"))
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn a_page_whose_text_sits_in_a_script_is_not_clustered_with_the_article() {
    let dir = temp();
    let text = article();
    let page =
        format!("Loading <script>var story = \"{text}\"; render(story);</script> please wait");
    let csv = format!("id,text\narticle,{text}\nscript-page,{page}\n");
    std::fs::write(dir.path().join("in.csv"), csv).unwrap();
    let output = megashingle(dir.path())
        .args(["cluster", "in.csv"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    let stdout = stdout_of(&output);
    assert!(
        stdout.contains("script-page,script-page,1,"),
        "the script page stands alone:\n{stdout}"
    );
}

// ---------------------------------------------------------------------------------------------
// Random bytes into every reader

/// Cases per property: `default`, or `PROPTEST_CASES / scale` when that is set.
fn cases(default: u32, scale: u32) -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse::<u32>().ok())
        .map_or(default, |n| (n / scale).max(1));
    ProptestConfig {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource(
            "proptest-regressions",
        ))),
        ..ProptestConfig::default()
    }
}

/// Cases per in-process property and per binary property in the default run.
const IN_PROCESS: u32 = 2000;
const BINARY: u32 = 40;

/// Any bytes; bytes made of the characters that steer a reader (`alphabet`); or such bytes
/// after a well-formed `prefix`.
fn hostile_bytes(alphabet: &'static [u8], prefix: &'static [u8]) -> BoxedStrategy<Vec<u8>> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..300),
        prop::collection::vec(prop::sample::select(alphabet), 0..300),
        prop::collection::vec(prop::sample::select(alphabet), 0..300).prop_map(move |tail| {
            let mut bytes = prefix.to_vec();
            bytes.extend(tail);
            bytes
        }),
    ]
    .boxed()
}

const CSV_ALPHABET: &[u8] = b"id,text\"\r\n d1<>/p&\xff\xc3\xa9\x00\xef\xbb\xbf";
const JSONL_ALPHABET: &[u8] = b"{}[]\":,id text\\u00\n\r 1-e.nulltrue\xff\xc3\xa9";
const HTML_ALPHABET: &[u8] = b"<>/!-&#;=\"' pascriptyle\n\r>:From\xd0\xb6\xc2\xad\xcc\x81";

/// Reads `path` with the library's readers, canonicalizes every record read, and checks the
/// answer: an error or each warning names `name`.
fn read_in_process(path: &Path, name: &str, format: Option<InputFormat>) {
    let canonicalizer = Canonicalizer::new(&Config::default().canonicalize);
    let options = ReadOptions {
        format,
        ..ReadOptions::default()
    };
    let mut warnings = Vec::new();
    let result = read_inputs(
        &[path.to_owned()],
        &options,
        &mut |record| {
            let _ = canonicalizer.words(&record.text);
        },
        &mut |warning| warnings.push(warning),
    );
    if let Err(error) = result {
        let message = error.to_string();
        assert!(message.contains(name), "error without the file: {message}");
        assert!(
            !message.contains('\n'),
            "error on more than one line: {message}"
        );
    }
    for warning in warnings {
        assert!(
            warning.contains(name),
            "warning without the file: {warning}"
        );
        assert!(
            !warning.contains('\n'),
            "warning on more than one line: {warning}"
        );
    }
}

/// Runs the binary and checks its answer: exit 0, 1 or 2, no panic, and for 1 or 2 a
/// message naming `name` on every warning and error line.
fn check_binary_answer(output: &Output, name: &str) {
    let stderr = stderr_of(output);
    let code = output.status.code();
    assert!(
        matches!(code, Some(0..=2)),
        "exit code {code:?}, stderr: {stderr}"
    );
    assert!(!stderr.contains("panicked"), "a panic: {stderr}");
    if code != Some(0) {
        let reports: Vec<&str> = stderr
            .lines()
            .filter(|l| l.starts_with("warning:") || l.starts_with("megashingle: error:"))
            .collect();
        assert!(!reports.is_empty(), "exit {code:?} without a message");
        for line in reports {
            assert!(line.contains(name), "a message without {name}: {line}");
        }
    }
}

/// A folder holding `a.txt`, `b.html` and `c.eml` with the given contents.
fn folder_of(dir: &Path, [txt, html, eml]: [&[u8]; 3]) -> PathBuf {
    let folder = dir.join("docs");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("a.txt"), txt).unwrap();
    std::fs::write(folder.join("b.html"), html).unwrap();
    std::fs::write(folder.join("c.eml"), eml).unwrap();
    folder
}

proptest! {
    #![proptest_config(cases(IN_PROCESS, 1))]

    #[test]
    fn random_bytes_into_the_csv_reader(bytes in hostile_bytes(CSV_ALPHABET, b"id,text\n")) {
        let dir = temp();
        let path = dir.path().join("random.csv");
        std::fs::write(&path, &bytes).unwrap();
        read_in_process(&path, "random.csv", None);
    }

    #[test]
    fn random_bytes_into_the_jsonl_reader(
        bytes in hostile_bytes(JSONL_ALPHABET, b"{\"id\": 1, \"text\": \"a b c\"}\n"),
    ) {
        let dir = temp();
        let path = dir.path().join("random.jsonl");
        std::fs::write(&path, &bytes).unwrap();
        read_in_process(&path, "random.jsonl", Some(InputFormat::Jsonl));
    }

    #[test]
    fn random_bytes_into_the_folder_reader(
        txt in hostile_bytes(HTML_ALPHABET, b"Subject: x\n\n"),
        html in hostile_bytes(HTML_ALPHABET, b"<html><body><p>"),
        eml in hostile_bytes(HTML_ALPHABET, b"From: a@b.c\nSubject: hi\n\n> quoted\n"),
    ) {
        let dir = temp();
        let folder = folder_of(dir.path(), [&txt, &html, &eml]);
        read_in_process(&folder, "docs", None);
    }

    #[test]
    fn random_text_into_canon_and_compare(
        first in hostile_bytes(HTML_ALPHABET, b"<html><body><p>"),
        second in hostile_bytes(HTML_ALPHABET, b"From: a@b.c\n\n"),
    ) {
        let config = Config::default();
        let canonicalizer = Canonicalizer::new(&config.canonicalize);
        let (first, second) = (String::from_utf8_lossy(&first), String::from_utf8_lossy(&second));
        let _ = canonicalizer.words(&first);
        let _ = canonicalizer.dropped_lines(&first);
        match compare((&first, "first.html"), (&second, "second.eml"), &config) {
            Ok(comparison) => {
                prop_assert!((0.0..=1.0).contains(&comparison.jaccard));
                prop_assert!(comparison.common <= comparison.first_shingles.min(comparison.second_shingles));
            }
            Err(too_short) => {
                let message = too_short.to_string();
                prop_assert!(
                    message.contains("first.html") || message.contains("second.eml"),
                    "{}", message
                );
            }
        }
    }
}

proptest! {
    #![proptest_config(cases(BINARY, 40))]

    #[test]
    fn random_bytes_into_cluster_on_csv_jsonl_and_stdin(
        csv in hostile_bytes(CSV_ALPHABET, b"id,text\n"),
        jsonl in hostile_bytes(JSONL_ALPHABET, b"{\"id\": 1, \"text\": \"a b c\"}\n"),
    ) {
        let dir = temp();
        std::fs::write(dir.path().join("random.csv"), &csv).unwrap();
        std::fs::write(dir.path().join("random.jsonl"), &jsonl).unwrap();
        for (file, name) in [("random.csv", "random.csv"), ("random.jsonl", "random.jsonl")] {
            let output = megashingle(dir.path()).args(["cluster", file, "-o", "out.csv"]).output().unwrap();
            check_binary_answer(&output, name);
        }
        let output = megashingle(dir.path()).args(["cluster", "-"]).write_stdin(csv).output().unwrap();
        check_binary_answer(&output, "<stdin>");
        let output = megashingle(dir.path())
            .args(["cluster", "-", "--input-format", "jsonl"])
            .write_stdin(jsonl)
            .output()
            .unwrap();
        check_binary_answer(&output, "<stdin>");
    }

    #[test]
    fn random_bytes_into_cluster_on_a_folder_and_into_canon_and_compare(
        txt in hostile_bytes(HTML_ALPHABET, b"Subject: x\n\n"),
        html in hostile_bytes(HTML_ALPHABET, b"<html><body><p>"),
        eml in hostile_bytes(HTML_ALPHABET, b"From: a@b.c\nSubject: hi\n\n> quoted\n"),
    ) {
        let dir = temp();
        folder_of(dir.path(), [&txt, &html, &eml]);
        let output = megashingle(dir.path()).args(["cluster", "docs"]).output().unwrap();
        check_binary_answer(&output, "docs");
        let output = megashingle(dir.path()).args(["canon", "docs/b.html", "--dropped"]).output().unwrap();
        check_binary_answer(&output, "docs/b.html");
        let output = megashingle(dir.path()).args(["canon", "-"]).write_stdin(eml.clone()).output().unwrap();
        check_binary_answer(&output, "<stdin>");
        let output = megashingle(dir.path())
            .args(["compare", "docs/a.txt", "docs/c.eml"])
            .output()
            .unwrap();
        let stderr = stderr_of(&output);
        prop_assert!(
            output.status.code() == Some(0)
                || stderr.contains("docs/a.txt") || stderr.contains("docs/c.eml"),
            "{}", stderr
        );
        check_binary_answer(&output, "docs/");
    }
}
