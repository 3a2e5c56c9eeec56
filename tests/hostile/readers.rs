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
use megashingle::config::{Config, Plan};
use megashingle::io::read::{read_inputs, InputFormat, ReadItem, ReadOptions};

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
// Other delimiters: `;` (spreadsheets in much of Europe) and tabs

/// Two stories of two versions each and a lone text, as rows of (id, source, text).
fn delimited_rows() -> Vec<[&'static str; 3]> {
    let a = "the river burst its banks overnight and flooded the lower town where residents \
             were moved to the school gym by the fire brigade before dawn";
    let b = "the city council approved a new budget for buses and trams on monday after a long \
             debate about fares and the night service to the northern suburbs";
    vec![
        ["1", "wire", a],
        [
            "2",
            "paper",
            "the river burst its banks overnight and flooded the lower town where residents \
             were moved to the school gym by the fire brigade before dawn, said the mayor",
        ],
        ["3", "wire", b],
        [
            "4",
            "radio; evening",
            "the city council approved a new budget for buses and trams on monday after a long \
             debate about fares and the night service to the northern suburbs and the airport",
        ],
        [
            "5",
            "blog",
            "a recipe for bread with flour water salt and yeast",
        ],
    ]
}

/// The rows with a header, fields separated by `delimiter` (quoted where CSV needs it).
fn delimited(delimiter: u8) -> Vec<u8> {
    let mut writer = csv::WriterBuilder::new()
        .delimiter(delimiter)
        .from_writer(Vec::new());
    writer.write_record(["id", "source", "text"]).unwrap();
    for row in delimited_rows() {
        writer.write_record(row).unwrap();
    }
    writer.into_inner().unwrap()
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

/// The cluster table of `args`, which must succeed.
fn cluster_table(dir: &Path, args: &[&str]) -> String {
    let output = megashingle(dir)
        .args(["cluster", "-q"])
        .args(args)
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{args:?}: {}",
        stderr_of(&output)
    );
    stdout_of(&output)
}

#[test]
fn semicolons_and_tabs_are_read_with_delimiter_or_by_extension() {
    let dir = temp();
    let root = dir.path();
    std::fs::write(root.join("comma.csv"), delimited(b',')).unwrap();
    std::fs::write(root.join("semi.csv"), delimited(b';')).unwrap();
    std::fs::write(root.join("pipe.txt.csv"), delimited(b'|')).unwrap();
    std::fs::write(root.join("tabs.csv"), delimited(b'\t')).unwrap();
    std::fs::write(root.join("tabs.tsv"), delimited(b'\t')).unwrap();
    std::fs::write(root.join("tabs.tab"), delimited(b'\t')).unwrap();
    std::fs::write(root.join("tabs.tsv.gz"), gzip(&delimited(b'\t'))).unwrap();
    std::fs::write(root.join("tabs.data"), delimited(b'\t')).unwrap();
    let expected = cluster_table(root, &["comma.csv"]);
    assert_eq!(expected.lines().count(), 6, "{expected}");
    assert!(
        expected.contains("\n1,1,2,") && expected.contains("\n3,3,2,"),
        "{expected}"
    );
    for args in [
        &["semi.csv", "--delimiter", ";"][..],
        &["--delimiter", "|", "pipe.txt.csv"],
        &["tabs.csv", "--delimiter", "tab"],
        &["tabs.csv", "--delimiter", "\\t"],
        &["tabs.csv", "--delimiter", "\t"],
        &["tabs.tsv"],
        &["tabs.tab"],
        &["tabs.tsv.gz"],
        &["tabs.data", "--delimiter", "tab"],
        // The flag counts for every CSV input; the extension only without it.
        &["tabs.tsv", "--delimiter", "tab", "--input-format", "csv"],
    ] {
        assert_eq!(cluster_table(root, args), expected, "{args:?}");
    }

    // Each command that reads CSV takes the flag.
    let out = megashingle(root)
        .args([
            "index",
            "add",
            "-q",
            "--db",
            "s.db",
            "semi.csv",
            "--delimiter",
            ";",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    assert_eq!(stdout_of(&out).lines().count(), 6);
    let out = megashingle(root)
        .args([
            "index",
            "report",
            "-q",
            "--db",
            "s.db",
            "semi.csv",
            "--delimiter",
            ";",
        ])
        .args(["--column", "source", "-o", "night.html"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let out = megashingle(root)
        .args([
            "report", "-q", "tabs.tsv", "--column", "source", "-o", "r.html",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let page = std::fs::read_to_string(root.join("r.html")).unwrap();
    assert!(
        page.contains("radio; evening"),
        "the source column is read whole"
    );

    // dedup keeps each record as it was, with the input's delimiter.
    for (input, flags, delimiter) in [
        ("semi.csv", &["--delimiter", ";"][..], b';'),
        ("tabs.tsv", &[][..], b'\t'),
    ] {
        let out = megashingle(root)
            .args(["dedup", "-q", input, "--keep", "first"])
            .args(flags)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{input}: {}", stderr_of(&out));
        let mut reader = csv::ReaderBuilder::new()
            .delimiter(delimiter)
            .from_reader(out.stdout.as_slice());
        let kept: Vec<Vec<String>> = reader
            .records()
            .map(|r| r.unwrap().iter().map(str::to_owned).collect())
            .collect();
        let ids: Vec<&str> = kept.iter().map(|r| r[0].as_str()).collect();
        assert_eq!(ids, ["1", "3", "5"], "{input}");
        assert_eq!(kept[0][1], "wire", "{input}: every column kept");
        let header = stdout_of(&out).lines().next().unwrap().to_owned();
        let separator = char::from(delimiter);
        assert_eq!(
            header,
            format!("id{separator}source{separator}text"),
            "{input}"
        );
    }
}

#[test]
fn a_header_of_one_column_holding_a_delimiter_names_the_flag() {
    let dir = temp();
    let root = dir.path();
    std::fs::write(root.join("semi.csv"), delimited(b';')).unwrap();
    std::fs::write(root.join("tabs.csv"), delimited(b'\t')).unwrap();
    std::fs::write(root.join("comma.tsv"), delimited(b',')).unwrap();
    std::fs::write(root.join("semi.data"), delimited(b';')).unwrap();
    for (args, line) in [
        (
            &["cluster", "semi.csv"][..],
            "semi.csv: no column `id` (the id column); columns found: id;source;text; the header is one column with `;` in it: the file seems to be separated by `;`; give --delimiter ';'",
        ),
        (
            &["dedup", "tabs.csv"],
            "tabs.csv: no column `id` (the id column); columns found: \"id\\tsource\\ttext\"; the header is one column with tabs in it: the file seems to be separated by tabs; give --delimiter tab",
        ),
        (
            &["index", "add", "--db", "s.db", "comma.tsv"],
            "comma.tsv: no column `id` (the id column); columns found: id,source,text; the header is one column with commas in it: the file seems to be separated by commas; give --delimiter ','",
        ),
        (
            &["cluster", "semi.data"],
            "semi.data: no column `id` (the id column); columns found: id;source;text; the header is one column with `;` in it: the file seems to be separated by `;`; it was read as CSV because its extension .data is not one megashingle knows (.csv, .tsv, .tab; .jsonl, .ndjson, .json; .txt, .html, .htm, .eml, .mbox; each also as .gz or .zst; .parquet); give the format with --input-format csv or jsonl; give --delimiter ';'",
        ),
    ] {
        let out = megashingle(root).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr_of(&out));
        assert_eq!(single_error_line(&out), format!("megashingle: error: {line}"), "{args:?}");
        assert!(out.stdout.is_empty());
    }
    assert!(!root.join("s.db").exists());

    // A delimiter must be one byte, and not a quote.
    for (value, says) in [
        (
            ";;",
            "\";;\" is not one character of one byte: give one such as ';' or '|', or `tab`",
        ),
        (
            "\"",
            "\"\\\"\" cannot separate fields: quotes and line breaks are part of CSV itself",
        ),
    ] {
        let out = megashingle(root)
            .args(["cluster", "semi.csv", "--delimiter", value])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{value}");
        let stderr = stderr_of(&out);
        assert!(
            stderr.starts_with(&format!(
                "error: invalid value '{value}' for '--delimiter <CHAR>': {says}"
            )),
            "{stderr}"
        );
    }
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
    let inputs = [path.to_owned()];
    let mut result = Ok(());
    for item in read_inputs(&inputs, &options) {
        match item {
            Ok(ReadItem::Record(record)) => {
                let _ = canonicalizer.words(&record.text);
            }
            Ok(ReadItem::Skipped(warning)) => warnings.push(warning),
            Err(error) => result = Err(error),
        }
    }
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
        match compare((&first, "first.html"), (&second, "second.eml"), &Plan::try_from(&config).unwrap()) {
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
