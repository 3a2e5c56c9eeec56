//! The documentation against the software and against itself: every relative link and every
//! `#anchor` in README.md and docs/*.md resolves (anchors as GitHub makes them from headings);
//! the `console` examples of README.md and docs/*.md, run in order with the built binary in a
//! scratch folder that holds the fixtures, print the lines they show; every other command line
//! they show parses with the command's own flags; every `Usage:` line they show is the one the
//! command's `--help` prints, and the guide shows one for every command; the exit-code tables
//! of README.md and the guide list the codes `megashingle --help` lists; the README's figures
//! are the headline figures of docs/BENCHMARKS.md; the table of docs/CONFIGURATION.md holds
//! every key that `megashingle config` prints with its built-in default, and no other key; and
//! the configuration page and How it works name the grouping `megashingle tune` chooses by
//! default, and a pairwise F1 quoted outside Benchmarks is one of its headline figures.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

#[allow(dead_code)]
mod common;
use common::{megashingle, stdout_of, temp, BIN};

/// The command's flags, as the binary parses them.
#[allow(dead_code)]
#[path = "../src/cli.rs"]
mod cli;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// README.md and every Markdown file of docs/, as paths relative to the crate root.
fn documents() -> Vec<PathBuf> {
    let mut files = vec![PathBuf::from("README.md")];
    let mut docs: Vec<PathBuf> = fs::read_dir(root().join("docs"))
        .expect("the docs folder")
        .map(|entry| entry.expect("a docs entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .map(|path| Path::new("docs").join(path.file_name().unwrap()))
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

fn read(relative: &Path) -> String {
    fs::read_to_string(root().join(relative))
        .unwrap_or_else(|e| panic!("{}: {e}", relative.display()))
}

/// The lines of a Markdown text outside fenced code blocks, with their line numbers.
fn prose_lines(text: &str) -> Vec<(usize, &str)> {
    let mut fenced = false;
    let mut lines = Vec::new();
    for (number, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            lines.push((number + 1, line));
        }
    }
    lines
}

/// The anchor GitHub gives a heading: lower case, every character but letters, digits,
/// spaces, `-` and `_` dropped, spaces made `-`.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a Markdown text: one per heading, a repeated one numbered as GitHub does
/// (`name`, `name-1`, `name-2`).
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut anchors = BTreeSet::new();
    for (_, line) in prose_lines(text) {
        let hashes = line.chars().take_while(|&c| c == '#').count();
        if !(1..=6).contains(&hashes) || !line[hashes..].starts_with(' ') {
            continue;
        }
        let base = slug(&line[hashes..]);
        let count = seen.entry(base.clone()).or_insert(0);
        let anchor = if *count == 0 {
            base.clone()
        } else {
            format!("{base}-{count}")
        };
        *count += 1;
        anchors.insert(anchor);
    }
    anchors
}

/// A line without its inline code spans, where a `](` is not a link.
fn without_code_spans(line: &str) -> String {
    let mut kept = String::new();
    let mut in_code = false;
    for c in line.chars() {
        if c == '`' {
            in_code = !in_code;
        } else if !in_code {
            kept.push(c);
        }
    }
    kept
}

/// The targets of the inline links and images of a Markdown text, with their line numbers.
fn links(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (number, line) in prose_lines(text) {
        let line = without_code_spans(line);
        let mut rest = line.as_str();
        while let Some(start) = rest.find("](") {
            let after = &rest[start + 2..];
            let end = after.find(')').unwrap_or(after.len());
            found.push((number, after[..end].trim().to_owned()));
            rest = &after[end..];
        }
    }
    found
}

#[test]
fn github_anchors_are_made_as_github_makes_them() {
    assert_eq!(
        slug(" The S-curve: what the classic parameters can and cannot find"),
        "the-s-curve-what-the-classic-parameters-can-and-cannot-find"
    );
    assert_eq!(slug(" `cluster`"), "cluster");
    assert_eq!(
        slug(" A news desk's nightly run"),
        "a-news-desks-nightly-run"
    );
    assert_eq!(
        slug(" Configuration: `pipeline.toml`"),
        "configuration-pipelinetoml"
    );
    let repeated = anchors("# A\n## Notes\n```\n## Not a heading\n```\n### Notes\n");
    let expected: BTreeSet<String> = ["a", "notes", "notes-1"].map(String::from).into();
    assert_eq!(repeated, expected);
    assert_eq!(
        links("[a](x.md#y) and ![b](docs/p.png), not `[c](z)`\n```\n[d](w)\n```\n"),
        vec![(1, "x.md#y".to_owned()), (1, "docs/p.png".to_owned())]
    );
}

#[test]
fn every_relative_link_and_anchor_resolves() {
    let files = documents();
    assert!(
        files.len() >= 10,
        "README.md and the docs/ pages: {files:?}"
    );
    let mut checked = 0;
    let mut broken = Vec::new();
    for file in &files {
        let text = read(file);
        let folder = file.parent().unwrap_or(Path::new(""));
        for (line, target) in links(&text) {
            if target.starts_with("http://")
                || target.starts_with("https://")
                || target.starts_with("mailto:")
            {
                continue;
            }
            checked += 1;
            let (path, anchor) = match target.split_once('#') {
                Some((path, anchor)) => (path, Some(anchor)),
                None => (target.as_str(), None),
            };
            let linked = if path.is_empty() {
                file.clone()
            } else {
                folder.join(path)
            };
            if !root().join(&linked).exists() {
                broken.push(format!(
                    "{}:{line}: {target}: no file {}",
                    file.display(),
                    linked.display()
                ));
                continue;
            }
            if let Some(anchor) = anchor {
                let is_markdown = linked.extension().is_some_and(|ext| ext == "md");
                if !is_markdown || !anchors(&read(&linked)).contains(anchor) {
                    broken.push(format!(
                        "{}:{line}: {target}: no heading with the anchor #{anchor} in {}",
                        file.display(),
                        linked.display()
                    ));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
    assert!(checked >= 50, "only {checked} relative links were found");
}

/// One command of a `console` block and the lines shown after it.
struct Example {
    file: PathBuf,
    line: usize,
    command: String,
    shown: Vec<String>,
}

/// The `$ ` commands of the ```console blocks of a Markdown text, in order.
fn console_examples(file: &Path, text: &str) -> Vec<Example> {
    let mut examples: Vec<Example> = Vec::new();
    let mut in_console = false;
    for (number, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") {
            in_console = !in_console && trimmed == "```console";
            continue;
        }
        if !in_console {
            continue;
        }
        if let Some(command) = line.strip_prefix("$ ") {
            examples.push(Example {
                file: file.to_owned(),
                line: number + 1,
                command: command.to_owned(),
                shown: Vec::new(),
            });
        } else if let Some(example) = examples.last_mut() {
            example.shown.push(line.to_owned());
        }
    }
    examples
}

/// The command for `sh -c`, with the built binary wherever `megashingle` is the program.
fn with_binary(command: &str) -> String {
    let mut words = Vec::new();
    let mut program = true;
    for word in command.split(' ') {
        if program && word == "megashingle" {
            words.push(format!("'{BIN}'"));
        } else {
            words.push(word.to_owned());
        }
        program = matches!(word, "|" | "&&" | "||" | ";");
    }
    words.join(" ")
}

/// A line with a trailing duration (`; 0.26 s`) made comparable: a run takes its own time.
fn normalized(line: &str) -> String {
    if let Some(before) = line.strip_suffix(" s") {
        let number = before.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
        if number.len() < before.len() && number.ends_with(' ') {
            return format!("{number}<seconds> s");
        }
    }
    line.to_owned()
}

/// Whether the printed lines show the shown ones: each run of shown lines between `...`
/// lines is printed as it stands, in order; the first starts the output unless `...` comes
/// before it, and the last ends it unless `...` comes after it.
fn shows(printed: &[String], shown: &[String]) -> bool {
    let printed: Vec<String> = printed.iter().map(|l| normalized(l)).collect();
    let shown: Vec<String> = shown.iter().map(|l| normalized(l)).collect();
    if shown.is_empty() {
        return printed.is_empty();
    }
    let runs: Vec<&[String]> = shown.split(|l| l == "...").collect();
    let mut at = 0;
    for (i, run) in runs.iter().enumerate() {
        let first = i == 0;
        let last = i == runs.len() - 1;
        if run.is_empty() {
            continue;
        }
        let found = if first {
            printed.get(..run.len()).filter(|p| p == run).map(|_| 0)
        } else {
            (at..=printed.len().saturating_sub(run.len()))
                .find(|&s| printed.get(s..s + run.len()).is_some_and(|p| p == *run))
        };
        let Some(start) = found else {
            return false;
        };
        at = start + run.len();
        if last && at != printed.len() {
            return false;
        }
    }
    // The last run ends the output, unless the shown lines end in `...`.
    runs.last().is_some_and(|run| run.is_empty()) || at == printed.len()
}

#[test]
fn printed_lines_are_matched_run_by_run() {
    let lines = |text: &str| text.lines().map(str::to_owned).collect::<Vec<_>>();
    let printed = lines("a\nb\nc; 1.25 s\nd");
    assert!(shows(&printed, &lines("a\nb\nc; 0.30 s\nd")));
    assert!(shows(&printed, &lines("a\n...\nd")));
    assert!(shows(&printed, &lines("a\nb\n...")));
    assert!(!shows(&printed, &lines("a\nb")));
    assert!(!shows(&printed, &lines("b\n...")));
    assert!(!shows(&printed, &lines("a\nc; 1.25 s\n...")));
    assert!(!shows(&printed, &lines("")));
    assert!(shows(&[], &lines("")));
    assert_eq!(
        with_binary("megashingle a | cut -f1 megashingle"),
        format!("'{BIN}' a | cut -f1 megashingle")
    );
}

#[test]
fn the_console_examples_print_what_they_show() {
    let mut run = 0;
    for file in documents() {
        let examples = console_examples(&file, &read(&file));
        if examples.is_empty() {
            continue;
        }
        // Each page's examples run in order in a folder of their own, as a user runs them in
        // the repository: the fixtures and scripts are there, what they write stays here.
        let scratch = temp();
        for name in ["fixtures", "scripts"] {
            std::os::unix::fs::symlink(root().join(name), scratch.path().join(name))
                .expect("a link in the scratch folder");
        }
        for example in examples {
            let output = Command::new("sh")
                .arg("-c")
                .arg(with_binary(&example.command))
                .current_dir(scratch.path())
                .env_remove("RUST_BACKTRACE")
                .output()
                .expect("sh runs");
            let place = format!("{}:{}", example.file.display(), example.line);
            assert!(
                output.status.success(),
                "{place}: `{}` failed ({}):\n{}",
                example.command,
                output.status,
                String::from_utf8_lossy(&output.stderr)
            );
            let printed: Vec<String> = String::from_utf8_lossy(&output.stdout)
                .lines()
                .chain(String::from_utf8_lossy(&output.stderr).lines())
                .map(str::to_owned)
                .collect();
            assert!(
                shows(&printed, &example.shown),
                "{place}: `{}` printed\n{}\n\nbut the page shows\n{}",
                example.command,
                printed.join("\n"),
                example.shown.join("\n")
            );
            run += 1;
        }
    }
    assert!(run >= 10, "only {run} console examples were run");
}

/// `key = value` lines of a TOML text, under their `[section]`, as `section.key` → value.
fn toml_keys(text: &str) -> BTreeMap<String, String> {
    let mut section = String::new();
    let mut keys = BTreeMap::new();
    for line in text.lines().map(str::trim) {
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = name.to_owned();
        } else if let Some((key, value)) = line.split_once(" = ") {
            keys.insert(format!("{section}.{key}"), value.to_owned());
        }
    }
    keys
}

/// The rows of the key table of docs/CONFIGURATION.md: `section.key` → default, as written.
fn documented_keys(text: &str) -> BTreeMap<String, String> {
    let mut keys = BTreeMap::new();
    for (_, line) in prose_lines(text) {
        let cells: Vec<&str> = line.split(" | ").map(str::trim).collect();
        let Some(key) = cells.first().and_then(|c| c.strip_prefix("| `")) else {
            continue;
        };
        let Some(key) = key.strip_suffix('`') else {
            continue;
        };
        if !key.contains('.') {
            continue;
        }
        let default = cells.get(1).copied().unwrap_or("");
        let default = default
            .strip_prefix('`')
            .and_then(|d| d.strip_suffix('`'))
            .unwrap_or(default);
        let previous = keys.insert(key.to_owned(), default.to_owned());
        assert!(
            previous.is_none(),
            "`{key}` has two rows in CONFIGURATION.md"
        );
    }
    keys
}

#[test]
fn the_configuration_page_lists_every_default() {
    // A folder without pipeline.toml: `megashingle config` prints the built-in defaults.
    let scratch = temp();
    let output = megashingle(scratch.path()).arg("config").output().unwrap();
    assert!(output.status.success(), "{output:?}");
    let defaults = toml_keys(&stdout_of(&output));
    assert!(defaults.len() >= 20, "{defaults:?}");
    let documented = documented_keys(&read(Path::new("docs/CONFIGURATION.md")));

    let mut wrong = Vec::new();
    for (key, value) in &defaults {
        match documented.get(key) {
            None => wrong.push(format!("`{key}` (default {value}) has no row")),
            Some(shown) if shown != value => {
                wrong.push(format!("`{key}` shows `{shown}`, the default is {value}"))
            }
            Some(_) => {}
        }
    }
    for key in documented.keys() {
        if !defaults.contains_key(key) {
            wrong.push(format!("`{key}` is not a key of `megashingle config`"));
        }
    }
    assert!(
        wrong.is_empty(),
        "docs/CONFIGURATION.md against the built-in defaults:\n{}",
        wrong.join("\n")
    );
}

/// A Markdown table: the heading above it (without its `#`s), its header cells and its rows.
struct Table {
    heading: String,
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

/// The cells of a table row, trimmed; an escaped `\|` stays inside its cell.
fn cells(line: &str) -> Vec<String> {
    let inner = line.trim().trim_start_matches('|').trim_end_matches('|');
    inner.split(" | ").map(|c| c.trim().to_owned()).collect()
}

/// The tables of a Markdown text outside fenced code blocks.
fn tables(text: &str) -> Vec<Table> {
    let lines: Vec<&str> = prose_lines(text).into_iter().map(|(_, l)| l).collect();
    let is_separator = |line: &str| line.starts_with("|---") || line.starts_with("| ---");
    let mut found: Vec<Table> = Vec::new();
    let mut heading = "";
    let mut in_table = false;
    for (i, line) in lines.iter().enumerate() {
        if line.starts_with('#') {
            heading = line.trim_start_matches('#').trim();
        }
        if !line.starts_with('|') {
            in_table = false;
        } else if in_table {
            if !is_separator(line) {
                found.last_mut().expect("a table").rows.push(cells(line));
            }
        } else if lines.get(i + 1).is_some_and(|next| is_separator(next)) {
            found.push(Table {
                heading: heading.to_owned(),
                header: cells(line),
                rows: Vec::new(),
            });
            in_table = true;
        }
    }
    found
}

/// The rows of the first table under `heading` whose header starts with `header`.
fn table_under(text: &str, heading: &str, header: &[&str]) -> Vec<Vec<String>> {
    tables(text)
        .into_iter()
        .find(|t| t.heading == heading && t.header.iter().take(header.len()).eq(header.iter()))
        .map(|t| t.rows)
        .unwrap_or_default()
}

#[test]
fn tables_are_read_row_by_row() {
    let text = "## A\n\n| code | meaning |\n|---|---|\n| 0 | all good |\n| 2 | a \\| b |\n\
                text\n\n```\n| 9 | fenced |\n```\n## B\n| | |\n|---|---|\n| x | y |\n";
    let rows = table_under(text, "A", &["code", "meaning"]);
    assert_eq!(
        rows,
        vec![
            vec!["0".to_owned(), "all good".to_owned()],
            vec!["2".to_owned(), "a \\| b".to_owned()]
        ]
    );
    assert_eq!(table_under(text, "B", &["", ""]), vec![vec!["x", "y"]]);
    assert!(table_under(text, "A", &["key"]).is_empty());
    assert!(table_under(text, "C", &["code"]).is_empty());
}

#[test]
fn the_readme_figures_are_the_headline_figures_of_the_benchmarks() {
    let readme = table_under(
        &read(Path::new("README.md")),
        "How good, how fast",
        &["", ""],
    );
    let headline = table_under(
        &read(Path::new("docs/BENCHMARKS.md")),
        "Headline figures",
        &["", "figure", "run"],
    );
    assert!(
        headline.len() >= 6,
        "docs/BENCHMARKS.md has no table of headline figures of six rows or more: {headline:?}"
    );
    for row in &headline {
        assert!(
            row.len() == 3 && row[2].contains("](#"),
            "a headline row without a link to the section of its run: {row:?}"
        );
    }
    let mut wrong = Vec::new();
    for (number, (shown, home)) in readme.iter().zip(&headline).enumerate() {
        if shown[..] != home[..2] {
            wrong.push(format!(
                "row {}: README.md shows {shown:?}, docs/BENCHMARKS.md {:?}",
                number + 1,
                &home[..2]
            ));
        }
    }
    if readme.len() != headline.len() {
        wrong.push(format!(
            "README.md shows {} rows, docs/BENCHMARKS.md holds {}",
            readme.len(),
            headline.len()
        ));
    }
    assert!(
        wrong.is_empty(),
        "the table \"How good, how fast\" of README.md against the first two columns of \
         \"Headline figures\" in docs/BENCHMARKS.md:\n{}",
        wrong.join("\n")
    );
}

/// The text `megashingle ARGS --help` prints.
fn help(args: &[&str]) -> String {
    let output = Command::new(BIN)
        .args(args)
        .arg("--help")
        .output()
        .expect("the binary runs");
    assert!(output.status.success(), "{args:?} --help: {output:?}");
    stdout_of(&output)
}

/// The names listed under `Commands:` in a help text, but `help`.
fn listed_commands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|line| *line != "Commands:")
        .skip(1)
        .take_while(|line| !line.is_empty())
        .filter(|line| line.starts_with("  ") && !line.starts_with("   "))
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect()
}

/// The lines of the fenced code blocks of a Markdown text, but those of `console` blocks
/// (which are run), with their line numbers.
fn fenced_lines(text: &str) -> Vec<(usize, &str)> {
    let mut fence: Option<&str> = None;
    let mut lines = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if let Some(info) = trimmed.strip_prefix("```") {
            fence = match fence {
                None => Some(info.trim()),
                Some(_) => None,
            };
            continue;
        }
        if fence.is_some_and(|info| info != "console") {
            lines.push((number + 1, line));
        }
    }
    lines
}

/// The command words of a usage line: `index add` of `Usage: megashingle index add [OPTIONS]`.
fn usage_command(line: &str) -> Option<Vec<&str>> {
    let rest = line.trim().strip_prefix("Usage: megashingle")?;
    Some(
        rest.split_whitespace()
            .take_while(|word| !word.starts_with(['[', '<', '-']))
            .collect(),
    )
}

#[test]
fn every_usage_line_is_the_one_of_help() {
    let mut shown: BTreeSet<String> = BTreeSet::new();
    let mut wrong = Vec::new();
    for file in documents() {
        let text = read(&file);
        for (line, usage) in fenced_lines(&text) {
            let Some(command) = usage_command(usage) else {
                continue;
            };
            let printed = help(&command);
            let expected = printed.lines().find(|l| l.starts_with("Usage: "));
            if expected != Some(usage.trim()) {
                wrong.push(format!(
                    "{}:{line}: `{}`, but `megashingle {} --help` prints `{}`",
                    file.display(),
                    usage.trim(),
                    command.join(" "),
                    expected.unwrap_or("no Usage: line")
                ));
            }
            if file == Path::new("docs/GUIDE.md") {
                shown.insert(command.join(" "));
            }
        }
    }
    assert!(wrong.is_empty(), "usage lines:\n{}", wrong.join("\n"));

    let mut commands = Vec::new();
    for command in listed_commands(&help(&[])) {
        let subcommands = listed_commands(&help(&[command.as_str()]));
        if subcommands.is_empty() {
            commands.push(command);
        } else {
            commands.extend(subcommands.iter().map(|sub| format!("{command} {sub}")));
        }
    }
    assert!(commands.len() >= 14, "{commands:?}");
    let missing: Vec<&String> = commands.iter().filter(|c| !shown.contains(*c)).collect();
    assert!(
        missing.is_empty(),
        "docs/GUIDE.md shows no `Usage:` line of {missing:?}"
    );
}

/// The exit codes listed after `Exit codes:` in a help text.
fn help_exit_codes(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|line| *line != "Exit codes:")
        .skip(1)
        .filter_map(|line| line.strip_prefix("  "))
        .filter_map(|line| line.split_whitespace().next())
        .filter(|word| word.chars().all(|c| c.is_ascii_digit()))
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_exit_code_tables_list_the_codes_of_help() {
    let listed = help_exit_codes(&help(&[]));
    for code in ["0", "1", "2", "130", "143"] {
        assert!(
            listed.iter().any(|c| c == code),
            "`megashingle --help` lists no exit code {code}: {listed:?}"
        );
    }
    for (file, heading) in [("README.md", "Commands"), ("docs/GUIDE.md", "Exit codes")] {
        let rows = table_under(&read(Path::new(file)), heading, &["code", "meaning"]);
        let documented: Vec<String> = rows.into_iter().map(|row| row[0].clone()).collect();
        assert_eq!(
            documented, listed,
            "the exit codes of {file} (under \"{heading}\") against `megashingle --help`"
        );
    }
}

/// The words of a command line as a shell splits them: quotes group words and go.
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.get_or_insert_with(String::new).push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                word.get_or_insert_with(String::new);
            }
            (None, c) if c.is_whitespace() => words.extend(word.take()),
            (None, c) => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    words
}

/// The `megashingle` command lines shown in the code blocks of a Markdown text (console
/// blocks aside): lines of a fenced block, or of an indented block, that start with
/// `megashingle ` (or `/usr/bin/time -v megashingle `), each cut before a comment (`#`, or
/// a remark in brackets after two spaces) or a pipe.
fn shown_command_lines(text: &str) -> Vec<(usize, String)> {
    let mut fenced: BTreeMap<usize, &str> = fenced_lines(text).into_iter().collect();
    for (number, line) in prose_lines(text) {
        if line.starts_with("    megashingle ") {
            fenced.insert(number, line);
        }
    }
    let mut found = Vec::new();
    for (number, line) in fenced {
        let line = line.trim();
        let line = line.strip_prefix("/usr/bin/time -v ").unwrap_or(line);
        let Some(arguments) = line.strip_prefix("megashingle ") else {
            continue;
        };
        let end = [" #", "  (", " | ", " > ", " && "]
            .iter()
            .filter_map(|cut| arguments.find(cut))
            .min()
            .unwrap_or(arguments.len());
        found.push((number, arguments[..end].trim().to_owned()));
    }
    found
}

#[test]
fn command_lines_are_found_and_split_as_a_shell_does() {
    assert_eq!(
        shell_words(r#"index query --text "a b" --delimiter ';' x"#),
        ["index", "query", "--text", "a b", "--delimiter", ";", "x"]
    );
    let text = "    megashingle cluster a.csv   (a remark)\n\n```sh\n\
                /usr/bin/time -v megashingle tune -t 0.3  # a comment\n```\n\
                ```console\n$ megashingle canon x\nmegashingle canon y\n```\n  megashingle no\n";
    assert_eq!(
        shown_command_lines(text),
        vec![
            (1, "cluster a.csv".to_owned()),
            (4, "tune -t 0.3".to_owned())
        ]
    );
}

#[test]
fn every_command_line_shown_parses() {
    use clap::Parser;
    let mut checked = 0;
    let mut wrong = Vec::new();
    for file in documents() {
        for (line, arguments) in shown_command_lines(&read(&file)) {
            let words = shell_words(&arguments);
            let parsed =
                cli::Cli::try_parse_from(std::iter::once("megashingle".to_owned()).chain(words));
            if let Err(e) = parsed {
                let first = e.to_string();
                let first = first.lines().next().unwrap_or_default().to_owned();
                wrong.push(format!(
                    "{}:{line}: megashingle {arguments}: {first}",
                    file.display()
                ));
            }
            checked += 1;
        }
    }
    assert!(
        wrong.is_empty(),
        "command lines the command refuses:\n{}",
        wrong.join("\n")
    );
    assert!(checked >= 20, "only {checked} command lines were found");
}

#[test]
fn the_default_grouping_is_the_one_tune_chooses() {
    // A folder without pipeline.toml: `megashingle tune` chooses for the built-in target.
    let scratch = temp();
    let output = megashingle(scratch.path()).arg("tune").output().unwrap();
    assert!(output.status.success(), "{output:?}");
    let printed = stdout_of(&output);
    let chosen = printed
        .lines()
        .find_map(|line| line.strip_prefix("chosen:"))
        .expect("`megashingle tune` prints the grouping it chose");
    // "42 supershingles of 2 minima, matched as single supershingles: 42 keys per document"
    let grouping = chosen.trim().split(',').next().unwrap_or_default();
    assert!(grouping.ends_with(" minima"), "{chosen}");
    for file in ["docs/CONFIGURATION.md", "docs/HOW-IT-WORKS.md"] {
        let text = read(Path::new(file)).replace('\n', " ");
        assert!(
            text.contains(grouping),
            "{file} does not name the default grouping, {grouping}, as `megashingle tune` \
             prints it"
        );
    }
}

#[test]
fn the_pairwise_f1_quoted_outside_the_benchmarks_is_a_headline_figure() {
    const QUOTED: &str = "pairwise F1 **";
    let headline = table_under(
        &read(Path::new("docs/BENCHMARKS.md")),
        "Headline figures",
        &["", "figure", "run"],
    );
    let figures: Vec<&str> = headline.iter().map(|row| row[1].as_str()).collect();
    let mut quoted = 0;
    let mut wrong = Vec::new();
    for file in documents() {
        if file == Path::new("docs/BENCHMARKS.md") {
            continue;
        }
        for (line, text) in prose_lines(&read(&file)) {
            for (at, _) in text.match_indices(QUOTED) {
                let Some(end) = text[at + QUOTED.len()..].find("**") else {
                    continue;
                };
                let figure = &text[at..at + QUOTED.len() + end + 2];
                quoted += 1;
                if !figures.iter().any(|f| f.contains(figure)) {
                    wrong.push(format!("{}:{line}: {figure}", file.display()));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "pairwise F1 quoted that is no headline figure of docs/BENCHMARKS.md:\n{}",
        wrong.join("\n")
    );
    assert!(
        quoted >= 3,
        "only {quoted} quoted pairwise F1 figures were found"
    );
}
