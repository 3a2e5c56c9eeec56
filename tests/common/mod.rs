//! Helpers shared by the integration tests: running the binary in a directory and reading
//! what it printed.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::Command;
use tempfile::TempDir;

/// `n` distinct words of one paragraph: `p{id}w0 p{id}w1 ...`.
fn paragraph(id: usize, n: usize) -> String {
    (0..n)
        .map(|i| format!("p{id}w{i}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A text made of the given paragraphs of 40 words.
#[allow(dead_code)] // not every test file uses it
pub fn paragraphs_text(paragraphs: &[usize]) -> String {
    paragraphs
        .iter()
        .map(|&p| paragraph(p, 40))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_megashingle");

/// The binary, run in `dir` (a temporary directory has no pipeline.toml, so the built-in
/// defaults apply; the crate root has the shipped pipeline.toml), as a user runs it: without
/// `RUST_BACKTRACE`, which adds Rust's report to the one line of an internal error.
pub fn megashingle(dir: &Path) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.current_dir(dir).env_remove("RUST_BACKTRACE");
    cmd
}

/// A new temporary directory.
pub fn temp() -> TempDir {
    tempfile::tempdir().expect("a temporary directory")
}

/// Standard output, which must be UTF-8.
pub fn stdout_of(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("stdout is UTF-8")
}

/// Standard error.
pub fn stderr_of(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The lines of standard error.
pub fn stderr_lines(output: &Output) -> Vec<String> {
    stderr_of(output).lines().map(str::to_owned).collect()
}

/// Asserts that stderr is exactly one line, starting `megashingle: error: `, with no panic,
/// and returns it.
pub fn single_error_line(output: &Output) -> String {
    let stderr = stderr_of(output);
    assert!(!stderr.contains("panicked"), "a panic: {stderr}");
    let lines = stderr_lines(output);
    assert_eq!(lines.len(), 1, "stderr should be one line: {lines:#?}");
    assert!(
        lines[0].starts_with("megashingle: error: "),
        "not an error line: {}",
        lines[0]
    );
    lines[0].clone()
}

/// The dev benchmark's documents, `../shared/data/rewrites-dev/docs.csv` beside the
/// repository (CI has it), or `None` when they are absent, as in a fresh clone: then a line on
/// stderr says that `test` skips the benchmark and why. The line is written to stderr itself,
/// which the test harness does not hold back as it holds back what a passing test prints.
pub fn dev_benchmark_docs(test: &str) -> Option<PathBuf> {
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/rewrites-dev/docs.csv");
    if docs.is_file() {
        return Some(docs);
    }
    let _ = writeln!(
        std::io::stderr(),
        "skipped: {test} on the dev benchmark: {} is absent (the benchmark lives beside the repository, in ../shared)",
        docs.display()
    );
    None
}

/// A made-up word for number `n`: syllables, so that it reads as a word of its own.
#[allow(dead_code)] // not every test file uses it
pub fn made_up_word(n: u64) -> String {
    const SYLLABLES: [&str; 16] = [
        "ka", "lo", "mi", "ne", "su", "ta", "ri", "vo", "de", "ba", "gu", "ze", "po", "fi", "ha",
        "ju",
    ];
    let mut n = n;
    let mut out = String::new();
    for _ in 0..5 {
        out.push_str(SYLLABLES[(n % 16) as usize]);
        n /= 16;
    }
    out
}

/// `count` sentences of twelve made-up words of text number `seed`, no word shared with
/// another seed's text.
#[allow(dead_code)] // not every test file uses it
pub fn made_up_sentences(seed: u64, count: usize) -> Vec<String> {
    (0..count)
        .map(|s| {
            let words: Vec<String> = (0..12)
                .map(|i| made_up_word(seed * 4096 + (s as u64) * 12 + i))
                .collect();
            format!("{}.", words.join(" "))
        })
        .collect()
}
