//! Outputs: an output that is an input, a closed stdout, `-o -`, thread counts and panics; and
//! the smaller answers around them (unknown formats, UTF-16, JSONL on stdin, unreadable
//! folders, short queries, zone-less dates, stray lock files, progress bars and the summary).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use crate::common::{megashingle, single_error_line, stderr_of, stdout_of, temp, BIN};

/// Writes `content` to `dir/name` and returns the path.
fn write(dir: &Path, name: &str, content: impl AsRef<[u8]>) -> PathBuf {
    let path = dir.join(name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("make a test folder");
    }
    std::fs::write(&path, content).expect("write a test input");
    path
}

/// A CSV of `n` documents in pairs of near-duplicates, with ids of about 60 characters, so
/// that the cluster table is about 100 bytes a document.
fn documents_csv(n: usize) -> String {
    let mut out = String::from("id,text\n");
    for i in 0..n {
        let story = i / 2;
        out.push_str(&format!(
            "document-with-a-rather-long-identifier-number-{i:08},story{story} first{story} second{story} third{story} fourth{story} fifth{story} sixth{story}\n"
        ));
    }
    out
}

/// Runs the binary in `dir` with `args`, `stdin` as its input.
fn run(dir: &Path, args: &[&str], stdin: &[u8]) -> Output {
    megashingle(dir)
        .args(args)
        .write_stdin(stdin.to_vec())
        .timeout(Duration::from_secs(300))
        .output()
        .expect("run megashingle")
}

/// The names in `dir`, sorted.
fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("list a test folder")
        .map(|e| {
            e.expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    names.sort();
    names
}

/// Makes an index `s.db` in `dir` from `docs.csv` and returns the index's bytes.
fn make_index(dir: &Path) -> Vec<u8> {
    write(dir, "docs.csv", documents_csv(40));
    let out = run(
        dir,
        &[
            "index", "add", "-q", "--db", "s.db", "docs.csv", "-o", "a.csv",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    std::fs::read(dir.join("s.db")).expect("the index")
}

// ---------------------------------------------------------------------------------------------
// An output that is an input

#[test]
fn an_output_that_is_an_input_or_the_index_is_refused_before_anything_is_touched() {
    let dir = temp();
    let root = dir.path();
    let index = make_index(root);
    let input = std::fs::read(root.join("docs.csv")).expect("the input");
    std::fs::hard_link(root.join("docs.csv"), root.join("linked.csv")).expect("a hard link");
    std::fs::create_dir(root.join("sub")).expect("a folder");
    #[cfg(unix)]
    std::os::unix::fs::symlink(root.join("docs.csv"), root.join("alias.csv")).expect("a link");
    write(root, "my.toml", "[shingle]\nsize = 3\n");
    write(root, "pages/a.txt", "one two three four five six seven");
    write(root, "pages/b.txt", "one two three four five six seven");
    let config = std::fs::read(root.join("my.toml")).expect("the configuration");
    let page = std::fs::read(root.join("pages/a.txt")).expect("the page");
    let before = names_in(root);

    // (arguments, the output as named, the guarded file as named, what it is)
    let mut cases: Vec<(Vec<&str>, &str, &str, &str)> = vec![
        (
            vec!["cluster", "docs.csv", "-o", "docs.csv"],
            "docs.csv",
            "docs.csv",
            "input",
        ),
        (
            vec!["cluster", "docs.csv", "-o", "sub/../docs.csv"],
            "sub/../docs.csv",
            "docs.csv",
            "input",
        ),
        (
            vec!["cluster", "docs.csv", "-o", "linked.csv"],
            "linked.csv",
            "docs.csv",
            "input",
        ),
        (
            vec!["cluster", "a.csv", "docs.csv", "-o", "./docs.csv"],
            "./docs.csv",
            "docs.csv",
            "input",
        ),
        (
            vec!["cluster", "docs.csv", "-c", "my.toml", "-o", "my.toml"],
            "my.toml",
            "my.toml",
            "configuration",
        ),
        (
            vec!["cluster", "pages", "-o", "pages/a.txt"],
            "pages/a.txt",
            "pages",
            "input",
        ),
        (
            vec!["index", "export", "--db", "s.db", "-o", "s.db"],
            "s.db",
            "s.db",
            "index",
        ),
        (
            vec!["index", "merges", "--db", "s.db", "-o", "./s.db"],
            "./s.db",
            "s.db",
            "index",
        ),
        (
            vec![
                "index", "add", "--db", "s.db", "docs.csv", "-o", "s.db", "--upsert",
            ],
            "s.db",
            "s.db",
            "index",
        ),
        (
            vec![
                "index", "add", "--db", "s.db", "docs.csv", "-o", "docs.csv", "--upsert",
            ],
            "docs.csv",
            "docs.csv",
            "input",
        ),
        (
            vec!["index", "add", "--db", "new.db", "docs.csv", "-o", "new.db"],
            "new.db",
            "new.db",
            "index",
        ),
        (
            vec!["tune", "-c", "my.toml", "--plot", "my.toml"],
            "my.toml",
            "my.toml",
            "configuration",
        ),
        (
            vec!["dedup", "docs.csv", "-o", "linked.csv"],
            "linked.csv",
            "docs.csv",
            "input",
        ),
        (
            vec!["dedup", "docs.csv", "-o", "-", "--dropped", "docs.csv"],
            "docs.csv",
            "docs.csv",
            "input",
        ),
    ];
    #[cfg(unix)]
    cases.push((
        vec!["cluster", "alias.csv", "-o", "docs.csv"],
        "docs.csv",
        "alias.csv",
        "input",
    ));
    for (args, output, guarded, role) in cases {
        let out = run(root, &args, b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr_of(&out));
        let line = single_error_line(&out);
        assert!(
            line.contains(&format!("the output {output} "))
                && line.contains(&format!("{role} {guarded}:")),
            "{args:?}: {line}"
        );
        assert!(line.contains("nothing was read or written"), "{line}");
        assert!(out.stdout.is_empty(), "{args:?} wrote to stdout");
        assert_eq!(
            std::fs::read(root.join("docs.csv")).unwrap(),
            input,
            "{args:?}"
        );
        assert_eq!(std::fs::read(root.join("s.db")).unwrap(), index, "{args:?}");
        assert_eq!(
            std::fs::read(root.join("my.toml")).unwrap(),
            config,
            "{args:?}"
        );
        assert_eq!(
            std::fs::read(root.join("pages/a.txt")).unwrap(),
            page,
            "{args:?}"
        );
        assert_eq!(names_in(root), before, "{args:?} left files behind");
    }

    // A different file is fine, and so is a table written beside the pages it was made from.
    let out = run(
        root,
        &["cluster", "pages", "-q", "-o", "pages/clusters.csv"],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    assert!(std::fs::read_to_string(root.join("pages/clusters.csv"))
        .unwrap()
        .starts_with("doc_id,"));
}

// ---------------------------------------------------------------------------------------------
// Two outputs that are one file

#[test]
fn two_outputs_that_are_one_file_are_refused_before_anything_is_read() {
    let dir = temp();
    let root = dir.path();
    write(root, "docs.csv", documents_csv(10));
    write(root, "old.csv", "a table that must survive\n");
    std::fs::hard_link(root.join("old.csv"), root.join("old-link.csv")).expect("a hard link");
    std::fs::create_dir(root.join("sub")).expect("a folder");
    #[cfg(unix)]
    std::os::unix::fs::symlink(root.join("old.csv"), root.join("alias.csv")).expect("a link");
    let before = names_in(root);

    // (arguments, the first output as named, the second as named)
    let mut cases: Vec<(Vec<&str>, &str, &str)> = vec![
        (
            vec!["dedup", "docs.csv", "-o", "out.csv", "--dropped", "out.csv"],
            "out.csv (-o)",
            "out.csv (--dropped)",
        ),
        // Neither exists yet: one place through the canonical folder.
        (
            vec![
                "dedup",
                "docs.csv",
                "-o",
                "sub/../out.csv",
                "--dropped",
                "./out.csv",
            ],
            "sub/../out.csv (-o)",
            "./out.csv (--dropped)",
        ),
        // Two names of one file: a hard link (device and inode).
        (
            vec![
                "dedup",
                "docs.csv",
                "-o",
                "old.csv",
                "--dropped",
                "old-link.csv",
            ],
            "old.csv (-o)",
            "old-link.csv (--dropped)",
        ),
        // Checked before the inputs are read: this one does not exist.
        (
            vec![
                "dedup",
                "missing.csv",
                "-o",
                "out.csv",
                "--dropped",
                "out.csv",
            ],
            "out.csv (-o)",
            "out.csv (--dropped)",
        ),
    ];
    #[cfg(unix)]
    cases.push((
        vec![
            "dedup",
            "docs.csv",
            "--dropped",
            "alias.csv",
            "-o",
            "old.csv",
        ],
        "old.csv (-o)",
        "alias.csv (--dropped)",
    ));
    for (args, first, second) in cases {
        let out = run(root, &args, b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr_of(&out));
        let line = single_error_line(&out);
        assert!(
            line.contains(&format!(
                "the outputs {first} and {second} are the same file"
            )) && line.contains("give two different files (nothing was read or written)"),
            "{args:?}: {line}"
        );
        assert!(out.stdout.is_empty(), "{args:?} wrote to stdout");
        assert_eq!(
            std::fs::read_to_string(root.join("old.csv")).unwrap(),
            "a table that must survive\n",
            "{args:?}"
        );
        assert_eq!(names_in(root), before, "{args:?} left files behind");
    }

    // The index's lock file is no output either.
    let out = run(
        root,
        &[
            "index",
            "add",
            "--db",
            "s.db",
            "docs.csv",
            "-o",
            "s.db.lock",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    let line = single_error_line(&out);
    assert!(
        line.contains("the output s.db.lock is the same file as the index's lock file s.db.lock:"),
        "{line}"
    );
    assert_eq!(names_in(root), before);

    // Two different files are fine.
    let out = run(
        root,
        &[
            "dedup",
            "-q",
            "docs.csv",
            "-o",
            "out.csv",
            "--dropped",
            "sub/out.csv",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    assert!(std::fs::read_to_string(root.join("out.csv"))
        .unwrap()
        .starts_with("id,text\n"));
    assert!(std::fs::read_to_string(root.join("sub/out.csv"))
        .unwrap()
        .starts_with("doc_id,duplicate_of,"));
}

// ---------------------------------------------------------------------------------------------
// An output that cannot be made

#[test]
fn an_output_that_cannot_be_made_fails_before_anything_is_read() {
    let dir = temp();
    let root = dir.path();
    write(root, "docs.csv", documents_csv(10));
    // Without a text column: read first, it would fail on its header instead.
    write(root, "bad.csv", "key,body\n1,one two three\n");
    write(root, "my.toml", "[shingle]\nsize = 3\n");
    std::fs::create_dir(root.join("sub")).expect("a folder");
    let index = make_index(root);
    let before = names_in(root);
    let folder = "give the path of a file to write, not of a folder (nothing was read or written)";
    let missing =
        "the folder nowhere does not exist; make it first (mkdir -p nowhere) or give another path (nothing was read or written)";
    let not_a_folder =
        "docs.csv is not a folder; give a path in a folder (nothing was read or written)";
    // (arguments, the output as named, what the line says of it)
    let cases: Vec<(Vec<&str>, &str, String)> = vec![
        (
            vec!["cluster", "bad.csv", "-o", "sub"],
            "sub",
            format!("is a folder; {folder}"),
        ),
        (
            vec!["cluster", "bad.csv", "-o", "sub/"],
            "sub/",
            format!("is a folder; {folder}"),
        ),
        (
            vec!["cluster", "bad.csv", "-o", "nowhere/out.csv"],
            "nowhere/out.csv",
            missing.into(),
        ),
        (
            vec!["cluster", "bad.csv", "-o", "docs.csv/out.csv"],
            "docs.csv/out.csv",
            not_a_folder.into(),
        ),
        (
            vec!["dedup", "bad.csv", "-o", "out.csv", "--dropped", "sub"],
            "sub",
            format!("is a folder; {folder}"),
        ),
        (
            vec!["dedup", "bad.csv", "--dropped", "nowhere/out.csv"],
            "nowhere/out.csv",
            missing.into(),
        ),
        (
            vec!["report", "bad.csv", "-o", "nowhere/out.csv"],
            "nowhere/out.csv",
            missing.into(),
        ),
        (
            vec!["tune", "-c", "my.toml", "--plot", "sub"],
            "sub",
            format!("is a folder; {folder}"),
        ),
        (
            vec![
                "index",
                "add",
                "--db",
                "s.db",
                "bad.csv",
                "-o",
                "nowhere/out.csv",
            ],
            "nowhere/out.csv",
            missing.into(),
        ),
        (
            vec!["index", "add", "--db", "sub", "bad.csv"],
            "sub",
            format!("is a folder; {folder}"),
        ),
        (
            vec!["index", "add", "--db", "nowhere/new.db", "bad.csv"],
            "nowhere/new.db",
            missing.into(),
        ),
        (
            vec!["index", "export", "--db", "s.db", "-o", "sub"],
            "sub",
            format!("is a folder; {folder}"),
        ),
        (
            vec![
                "index",
                "report",
                "--db",
                "s.db",
                "bad.csv",
                "-o",
                "nowhere/out.csv",
            ],
            "nowhere/out.csv",
            missing.into(),
        ),
    ];
    for (args, output, says) in cases {
        let out = run(root, &args, b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr_of(&out));
        let line = single_error_line(&out);
        assert_eq!(
            line,
            format!("megashingle: error: {output}: {says}"),
            "{args:?}"
        );
        assert!(out.stdout.is_empty(), "{args:?} wrote to stdout");
        assert_eq!(names_in(root), before, "{args:?} left files behind");
        assert!(names_in(&root.join("sub")).is_empty(), "{args:?}");
        assert_eq!(std::fs::read(root.join("s.db")).unwrap(), index, "{args:?}");
    }

    // A folder the user cannot write to: run as nobody when the tests run as root (who may
    // write anywhere).
    open_to_all(root, 0o755);
    std::fs::create_dir(root.join("locked")).expect("a folder");
    open_to_all(&root.join("locked"), 0o555);
    let binary = binary_in(root);
    let mut command = if running_as_root() {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"]);
        c.arg(&binary);
        c
    } else {
        Command::new(&binary)
    };
    let out = command
        .args(["cluster", "bad.csv", "-o", "locked/out.csv"])
        .current_dir(root)
        .env_remove("RUST_BACKTRACE")
        .stdin(Stdio::null())
        .output()
        .expect("run megashingle");
    if stderr_of(&out).contains("setpriv:") {
        println!("skipped: setpriv is missing, so a folder cannot be made unwritable");
        return;
    }
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    let line = single_error_line(&out);
    assert!(
        line.starts_with("megashingle: error: locked/out.csv: cannot make a file in the folder locked (Permission denied")
            && line.ends_with("give a path in a folder you can write to (nothing was read or written)"),
        "{line}"
    );
    assert!(names_in(&root.join("locked")).is_empty());
}

// ---------------------------------------------------------------------------------------------
// A closed stdout

/// Runs the binary with stdout a pipe that is closed after `keep` bytes were read (at once when
/// 0), and returns the exit code and stderr.
fn with_stdout_closed(dir: &Path, args: &[&str], keep: usize) -> (Option<i32>, String) {
    let mut child = Command::new(BIN)
        .current_dir(dir)
        .args(args)
        .env_remove("RUST_BACKTRACE")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start megashingle");
    let mut stdout = child.stdout.take().expect("a pipe");
    if keep > 0 {
        let mut head = vec![0u8; keep];
        stdout.read_exact(&mut head).expect("the first bytes");
    }
    drop(stdout);
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .expect("a pipe")
        .read_to_string(&mut stderr)
        .expect("stderr");
    (child.wait().expect("the exit").code(), stderr)
}

#[test]
fn a_closed_stdout_is_success_for_every_command_and_format() {
    let dir = temp();
    let root = dir.path();
    // About 1.3 MB of cluster table, 20 times what a pipe holds.
    write(root, "big.csv", documents_csv(12_000));
    let words: Vec<String> = (0..200_000).map(|i| format!("word{i}")).collect();
    write(root, "long.txt", words.join(" "));
    write(root, "short.txt", "one two three four five six seven eight");
    let table = run(root, &["cluster", "-q", "big.csv"], b"");
    assert!(table.stdout.len() > 1_000_000, "{}", table.stdout.len());
    let add = run(
        root,
        &[
            "index", "add", "-q", "--db", "s.db", "big.csv", "-o", "a.csv",
        ],
        b"",
    );
    assert_eq!(add.status.code(), Some(0), "{}", stderr_of(&add));

    let big: [&[&str]; 7] = [
        &["dedup", "-q", "big.csv"],
        &["cluster", "-q", "big.csv"],
        &["cluster", "-q", "--format", "jsonl", "big.csv"],
        &["cluster", "-q", "big.csv", "-o", "-"],
        &["index", "export", "--db", "s.db"],
        &["index", "add", "-q", "--db", "s2.db", "big.csv"],
        &["canon", "long.txt"],
    ];
    for args in big {
        let (code, stderr) = with_stdout_closed(root, args, 100);
        assert_eq!(code, Some(0), "{args:?}: {stderr}");
        assert!(!stderr.contains("error"), "{args:?}: {stderr}");
    }
    let small: [&[&str]; 8] = [
        &["index", "merges", "--db", "s.db"],
        &["index", "stats", "--db", "s.db"],
        &["index", "query", "--db", "s.db", "short.txt"],
        &["compare", "short.txt", "short.txt"],
        &["compare", "--json", "short.txt", "short.txt"],
        &["canon", "short.txt"],
        &["config"],
        &["tune"],
    ];
    for args in small {
        let (code, stderr) = with_stdout_closed(root, args, 0);
        assert_eq!(code, Some(0), "{args:?}: {stderr}");
        assert!(!stderr.contains("error"), "{args:?}: {stderr}");
    }
}

// ---------------------------------------------------------------------------------------------
// `-o -`

#[test]
fn dash_as_the_output_means_stdout() {
    let dir = temp();
    let root = dir.path();
    make_index(root);
    let to_stdout = run(root, &["cluster", "-q", "docs.csv"], b"");
    let dashed = run(root, &["cluster", "-q", "docs.csv", "-o", "-"], b"");
    assert_eq!(dashed.status.code(), Some(0), "{}", stderr_of(&dashed));
    assert_eq!(stdout_of(&dashed), stdout_of(&to_stdout));
    let export = run(root, &["index", "export", "--db", "s.db", "-o", "-"], b"");
    assert!(stdout_of(&export).starts_with("doc_id,story_id,story_size,added_at\n"));
    let merges = run(root, &["index", "merges", "--db", "s.db", "-o", "-"], b"");
    assert!(stdout_of(&merges).starts_with("merged_at,"));
    let deduplicated = run(root, &["dedup", "-q", "docs.csv"], b"");
    let dashed = run(root, &["dedup", "-q", "docs.csv", "-o", "-"], b"");
    assert_eq!(dashed.status.code(), Some(0), "{}", stderr_of(&dashed));
    assert!(stdout_of(&dashed).starts_with("id,text\n"));
    assert_eq!(stdout_of(&dashed), stdout_of(&deduplicated));
    assert!(!root.join("-").exists(), "a file named - was written");
}

// ---------------------------------------------------------------------------------------------
// Threads

#[test]
fn threads_beyond_four_per_core_are_capped_with_a_warning() {
    let dir = temp();
    let root = dir.path();
    write(root, "docs.csv", documents_csv(44));
    let one = run(root, &["cluster", "-q", "-j", "1", "docs.csv"], b"");
    let many = run(root, &["cluster", "-q", "-j", "1000", "docs.csv"], b"");
    assert_eq!(many.status.code(), Some(0), "{}", stderr_of(&many));
    assert_eq!(stdout_of(&many), stdout_of(&one));
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    assert_eq!(
        stderr_of(&many),
        format!(
            "megashingle: warning: -j 1000 is more than 4 threads per core ({cores} cores here); running {} threads\n",
            4 * cores
        )
    );
    let within = run(root, &["cluster", "-q", "-j", "2", "docs.csv"], b"");
    assert_eq!(stderr_of(&within), "");
}

/// `megashingle` run as an unprivileged user (nobody, when the tests run as root) with a
/// limit of one process, so that no thread can start; `None` when the tools for it
/// (setpriv, prlimit) are missing.
fn without_threads(dir: &Path, args: &[&str]) -> Option<Output> {
    let root = running_as_root();
    let binary = binary_in(dir);
    let mut command = if root {
        let mut c = Command::new("setpriv");
        c.args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "prlimit",
        ]);
        c
    } else {
        Command::new("prlimit")
    };
    command
        .args(["--nproc=1", "--"])
        .arg(&binary)
        .args(args)
        .current_dir(dir)
        .env_remove("RUST_BACKTRACE")
        .stdin(Stdio::null());
    match command.output() {
        Ok(out)
            if !stderr_of(&out).contains("setpriv:") && !stderr_of(&out).contains("prlimit:") =>
        {
            Some(out)
        }
        _ => None,
    }
}

/// The binary in `dir`, where an unprivileged user can run it (the build folder may be
/// private).
fn binary_in(dir: &Path) -> PathBuf {
    let binary = dir.join("megashingle");
    if !binary.exists() && std::fs::hard_link(BIN, &binary).is_err() {
        std::fs::copy(BIN, &binary).expect("copy the binary");
    }
    binary
}

/// True when the tests run as root (who is not bound by permissions or process limits).
fn running_as_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// Gives `dir` (a temporary folder, private to its owner) the permissions `mode`.
fn open_to_all(dir: &Path, mode: u32) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    #[cfg(not(unix))]
    let _ = (dir, mode);
}

#[test]
fn threads_that_cannot_start_are_one_error_line() {
    let dir = temp();
    let root = dir.path();
    // Writable by all: the unprivileged run makes (and removes) the index's lock file here.
    open_to_all(root, 0o777);
    write(root, "docs.csv", documents_csv(10));
    for args in [
        &["cluster", "-q", "-j", "2", "docs.csv"][..],
        &["index", "add", "-q", "-j", "2", "--db", "s.db", "docs.csv"][..],
    ] {
        let Some(out) = without_threads(root, args) else {
            println!("skipped: setpriv or prlimit is missing, so threads cannot be refused");
            return;
        };
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr_of(&out));
        let line = single_error_line(&out);
        assert!(
            line.contains("cannot start")
                && line.contains("worker threads")
                && line.contains("fewer threads"),
            "{line}"
        );
        assert!(out.stdout.is_empty());
        assert!(!root.join("s.db").exists() && !root.join("s.db.lock").exists());
    }
}

// ---------------------------------------------------------------------------------------------
// Panics

#[test]
fn a_panic_is_one_error_line_and_writes_nothing() {
    if !cfg!(debug_assertions) {
        println!("skipped: the binary's panic switch is built only with debug assertions");
        return;
    }
    let dir = temp();
    let root = dir.path();
    let index = make_index(root);
    write(root, "out.csv", "the previous table\n");
    let before = names_in(root);
    for (trigger, message) in [
        ("main:cluster", "test panic on the main thread at cluster"),
        ("worker:cluster", "test panic on a worker thread at cluster"),
        ("unwrap:cluster", "ParseIntError"),
    ] {
        let out = megashingle(root)
            .args(["cluster", "-q", "docs.csv", "-o", "out.csv"])
            .env("MEGASHINGLE_TEST_PANIC", trigger)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{trigger}: {}", stderr_of(&out));
        let line = single_error_line(&out);
        assert!(
            line.starts_with(&format!(
                "megashingle: error: internal error while processing docs.csv: {message}"
            )),
            "{trigger}: {line}"
        );
        assert!(
            line.ends_with("; please report it with RUST_BACKTRACE=1"),
            "{line}"
        );
        assert!(
            !line.contains("unwrap()") && !line.contains("Result::"),
            "{line}"
        );
        assert_eq!(
            std::fs::read_to_string(root.join("out.csv")).unwrap(),
            "the previous table\n"
        );
        assert_eq!(names_in(root), before, "{trigger}: a file was left");
    }

    // A panic in the middle of an add leaves the index as it was, and unlocked.
    let out = megashingle(root)
        .args(["index", "add", "-q", "--db", "s.db", "--upsert", "docs.csv"])
        .env("MEGASHINGLE_TEST_PANIC", "worker:index add")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    let line = single_error_line(&out);
    assert!(
        line.contains("internal error while processing docs.csv into s.db: test panic")
            && line.contains("the index s.db may be damaged"),
        "{line}"
    );
    assert!(out.stdout.is_empty());
    assert_eq!(std::fs::read(root.join("s.db")).unwrap(), index);
    let stats = run(root, &["index", "stats", "--db", "s.db"], b"");
    assert_eq!(stats.status.code(), Some(0), "{}", stderr_of(&stats));

    // RUST_BACKTRACE=1 keeps Rust's own report for a bug report.
    let out = megashingle(root)
        .args(["cluster", "-q", "docs.csv", "-o", "out.csv"])
        .env("MEGASHINGLE_TEST_PANIC", "worker:cluster")
        .env("RUST_BACKTRACE", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = stderr_of(&out);
    assert!(
        stderr.contains("panicked at") && stderr.contains("stack backtrace"),
        "{stderr}"
    );
    assert!(stderr
        .trim_end()
        .ends_with("please report it with RUST_BACKTRACE=1"));
}

// ---------------------------------------------------------------------------------------------
// Formats and encodings

#[test]
fn an_unknown_extension_that_fails_as_csv_names_the_formats() {
    let dir = temp();
    let root = dir.path();
    // Compressed in a format megashingle does not decompress (.gz and .zst it does).
    let mut bz2 = b"BZh91AY&SY".to_vec();
    bz2.extend((0..600u32).map(|i| (i * 7919 % 251) as u8));
    write(root, "notes.md", "# Notes\n\nSome text, with a comma.\n");
    write(root, "table.dat", "id\ttext\n1\tone two three four\n");
    write(root, "docs.csv.bz2", &bz2);
    write(root, "README", "Read me first.\n");
    for (name, why) in [
        ("notes.md", "its extension .md is not one megashingle knows"),
        (
            "table.dat",
            "its extension .dat is not one megashingle knows",
        ),
        (
            "docs.csv.bz2",
            "its extension .bz2 is not one megashingle knows",
        ),
        ("README", "it has no extension"),
    ] {
        let out = run(root, &["cluster", name], b"");
        assert_eq!(out.status.code(), Some(2), "{name}: {}", stderr_of(&out));
        let line = single_error_line(&out);
        assert!(
            line.starts_with(&format!("megashingle: error: {name}: ")),
            "{line}"
        );
        assert!(
            line.contains(&format!("it was read as CSV because {why}"))
                && line.contains(".jsonl")
                && line.contains("--input-format csv or jsonl"),
            "{line}"
        );
        assert!(!line.contains('\0') && !line.contains('\u{1f}'), "{line}");
    }
    let out = run(root, &["cluster", "docs.csv.bz2"], b"");
    assert!(single_error_line(&out).contains("binary data, not text"));

    // A record file without an extension that starts with `{` is JSONL.
    write(
        root,
        "records",
        "{\"id\": \"a\", \"text\": \"one two three four five six\"}\n",
    );
    let out = run(root, &["cluster", "-q", "records"], b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    assert!(stdout_of(&out).contains("\na,a,1,"));
}

/// `text` in UTF-16, little- or big-endian, with or without a byte order mark.
fn utf16(text: &str, little: bool, mark: bool) -> Vec<u8> {
    let mut units: Vec<u16> = Vec::new();
    if mark {
        units.push(0xFEFF);
    }
    units.extend(text.encode_utf16());
    units
        .into_iter()
        .flat_map(|u| {
            if little {
                u.to_le_bytes()
            } else {
                u.to_be_bytes()
            }
        })
        .collect()
}

#[test]
fn a_utf16_file_is_named_as_utf16() {
    let dir = temp();
    let root = dir.path();
    let table = "id,text\n1,one two three four five\n2,six seven eight nine ten\n";
    let cases = [
        ("le.csv", utf16(table, true, true), "little-endian"),
        ("be.csv", utf16(table, false, true), "big-endian"),
        ("bare.csv", utf16(table, true, false), "little-endian"),
        (
            "bare.jsonl",
            utf16("{\"id\": \"a\", \"text\": \"b\"}\n", true, false),
            "little-endian",
        ),
    ];
    for (name, bytes, order) in cases {
        write(root, name, bytes);
        let out = run(root, &["cluster", name], b"");
        assert_eq!(out.status.code(), Some(2), "{name}: {}", stderr_of(&out));
        let line = single_error_line(&out);
        assert_eq!(
            line,
            format!("megashingle: error: {name}: the file is UTF-16 ({order}), not UTF-8; give --encoding utf-16{}e, or convert it to UTF-8 (iconv -f UTF-16 -t UTF-8)", &order[..1])
        );
        let out = run(
            root,
            &[
                "cluster",
                "--encoding",
                &format!("utf-16{}e", &order[..1]),
                name,
            ],
            b"",
        );
        assert_eq!(out.status.code(), Some(0), "{name}: {}", stderr_of(&out));
    }
    let out = run(root, &["cluster", "-"], &utf16(table, true, true));
    assert!(single_error_line(&out).contains("<stdin>: the file is UTF-16"));

    // In a folder, a UTF-16 page is read as UTF-16, with a byte order mark or without.
    write(
        root,
        "pages/a.txt",
        utf16("one two three four five six", true, false),
    );
    write(root, "pages/b.txt", "one two three four five six");
    write(
        root,
        "pages/c.txt",
        utf16("one two three four five six", false, true),
    );
    let out = run(root, &["cluster", "pages"], b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    assert!(
        stdout_of(&out).ends_with(
            "a.txt,a.txt,3,1.0000,ok\nb.txt,a.txt,3,1.0000,ok\nc.txt,a.txt,3,1.0000,ok\n"
        ),
        "{}",
        stdout_of(&out)
    );
}

#[test]
fn jsonl_on_stdin_is_detected_and_csv_that_fails_gets_a_hint() {
    let dir = temp();
    let root = dir.path();
    let jsonl = b"\n  {\"id\": \"a\", \"text\": \"one two three four five six\"}\n{\"id\": \"b\", \"text\": \"one two three four five six\"}\n";
    let out = run(root, &["cluster", "-q", "-"], jsonl);
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    assert_eq!(
        stdout_of(&out),
        "doc_id,cluster_id,cluster_size,similarity,status\na,a,2,1.0000,ok\nb,a,2,1.0000,ok\n"
    );
    let out = run(root, &["cluster", "-"], b"key;body\n1;one two three\n");
    assert_eq!(out.status.code(), Some(2));
    let line = single_error_line(&out);
    assert!(
        line.contains("<stdin>: no column `id`")
            && line.contains("stdin is read as CSV unless it starts with `{` (JSONL)")
            && line.contains("--input-format"),
        "{line}"
    );
    // A format given is never second-guessed.
    let out = run(root, &["cluster", "--input-format", "csv", "-"], jsonl);
    assert_eq!(out.status.code(), Some(2));
    assert!(!single_error_line(&out).contains("read as CSV"));
}

#[test]
fn an_unreadable_subfolder_is_named_itself() {
    let dir = temp();
    let root = dir.path();
    open_to_all(root, 0o755);
    write(root, "pages/a.txt", "one two three four five six");
    write(root, "pages/locked/b.txt", "one two three four five six");
    open_to_all(&root.join("pages"), 0o755);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let locked = root.join("pages/locked");
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    }
    let args = ["cluster", "pages"];
    let out = if running_as_root() {
        // Root reads any folder: run as nobody.
        let binary = binary_in(root);
        match Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(&binary)
            .args(args)
            .current_dir(root)
            .env_remove("RUST_BACKTRACE")
            .output()
        {
            Ok(out) if !stderr_of(&out).contains("setpriv:") => out,
            _ => {
                println!("skipped: running as root without setpriv, every folder is readable");
                return;
            }
        }
    } else {
        run(root, &args, b"")
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let locked = root.join("pages/locked");
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    let line = single_error_line(&out);
    assert!(
        line.starts_with("megashingle: error: pages/locked: cannot open: "),
        "{line}"
    );
}

// ---------------------------------------------------------------------------------------------
// The index's smaller answers

#[test]
fn a_query_shorter_than_a_shingle_is_refused_like_compare() {
    let dir = temp();
    let root = dir.path();
    make_index(root);
    write(root, "short.txt", "two words");
    let out = run(
        root,
        &["index", "query", "--db", "s.db", "--text", "two words"],
        b"",
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    let line = single_error_line(&out);
    assert_eq!(
        line,
        "megashingle: error: the text has 2 words, fewer than the shingle size k = 3: it has no shingles, and two empty sets prove nothing; use a smaller shingle size (shingle.size) or a longer text; -k sets the shingle size"
    );
    let out = run(root, &["index", "query", "--db", "s.db", "short.txt"], b"");
    let line = single_error_line(&out);
    assert!(line.contains("error: short.txt has 2 words, fewer than the shingle size k = 3"));
    let compare = run(root, &["compare", "short.txt", "short.txt"], b"");
    assert_eq!(single_error_line(&compare), line);
}

#[test]
fn remove_before_a_time_without_offset_says_it_took_utc() {
    let dir = temp();
    let root = dir.path();
    make_index(root);
    let out = run(
        root,
        &[
            "index",
            "remove",
            "--db",
            "s.db",
            "--before",
            "2000-01-02T03:04:05",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let stderr = stderr_of(&out);
    assert!(
        stderr.starts_with("megashingle: note: --before \"2000-01-02T03:04:05\" has no UTC offset; taken as UTC: before 2000-01-02T03:04:05Z\n"),
        "{stderr}"
    );
    let out = run(
        root,
        &[
            "index",
            "remove",
            "--db",
            "s.db",
            "--before",
            "2000-01-02T03:04:05+03:00",
        ],
        b"",
    );
    assert!(!stderr_of(&out).contains("note:"), "{}", stderr_of(&out));
}

#[test]
fn no_lock_file_is_left_when_a_command_fails_before_the_index_is_open() {
    let dir = temp();
    let root = dir.path();
    write(root, "empty.csv", "id,text\n");
    write(root, "bad.csv", "key,body\n1,x\n");
    for args in [
        &["index", "add", "--db", "new.db", "missing.csv"][..],
        &["index", "add", "--db", "new.db", "empty.csv"][..],
        &["index", "add", "--db", "new.db", "bad.csv"][..],
    ] {
        let out = run(root, args, b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr_of(&out));
        single_error_line(&out);
        assert_eq!(names_in(root), ["bad.csv", "empty.csv"], "{args:?}");
    }
    // An index that cannot be opened (truncated to half): no lock file is made for it.
    let index = make_index(root);
    write(root, "half.db", &index[..index.len() / 2]);
    let out = run(
        root,
        &["index", "add", "--db", "half.db", "docs.csv", "--upsert"],
        b"",
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    single_error_line(&out);
    assert!(!root.join("half.db.lock").exists());
}

// ---------------------------------------------------------------------------------------------
// Progress bars and the summary

#[test]
fn progress_bars_show_whole_rates_and_the_summary_starts_a_line() {
    let dir = temp();
    let root = dir.path();
    write(root, "docs.csv", documents_csv(2_000));
    // `script` gives the run a terminal, on which the bars are drawn.
    let command = format!("{BIN} cluster docs.csv -o out.csv");
    let Ok(out) = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .current_dir(root)
        .env_remove("RUST_BACKTRACE")
        .stdin(Stdio::null())
        .output()
    else {
        println!("skipped: no `script` to give the run a terminal");
        return;
    };
    let screen = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(0), "{screen}");
    assert!(screen.contains(" docs "), "no bars were drawn: {screen:?}");
    let rates: Vec<&str> = screen
        .split("/s")
        .map(|before| before.rsplit(' ').next().unwrap_or(""))
        .filter(|r| r.starts_with(|c: char| c.is_ascii_digit()))
        .collect();
    assert!(!rates.is_empty(), "{screen:?}");
    for rate in rates {
        assert!(
            rate.chars().all(|c| c.is_ascii_digit() || c == ','),
            "a rate of {rate}/s"
        );
    }
    let at = screen
        .find("megashingle: 2000 documents in")
        .unwrap_or_else(|| panic!("no summary: {screen:?}"));
    let mut before = &screen[..at];
    // Cursor moves and line clearing (ESC [ n A/B/K) print nothing.
    while let Some(start) = before.rfind("\x1b[") {
        let tail = &before[start + 2..];
        let is_control = !tail.is_empty()
            && tail[..tail.len() - 1].chars().all(|c| c.is_ascii_digit())
            && tail.ends_with(['A', 'B', 'K']);
        if !is_control {
            break;
        }
        before = &before[..start];
    }
    assert!(
        before.is_empty() || before.ends_with(['\n', '\r']),
        "the summary follows {:?}",
        &before[before.len().saturating_sub(80)..]
    );
}
