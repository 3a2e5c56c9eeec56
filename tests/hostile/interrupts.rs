//! Interrupted runs and full disks: SIGINT and SIGTERM while `cluster`, `dedup`, `report` and
//! `index add` read or write, and a file size limit (`ulimit -f`) reached while they write.
//! Each ends with one line and its exit code, leaves no temporary file beside its output, keeps
//! the old output, and leaves the index as it was.

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::{megashingle, single_error_line, stderr_of, stdout_of, temp, BIN};

/// Writes `content` to `dir/name`.
fn write(dir: &Path, name: &str, content: impl AsRef<[u8]>) {
    std::fs::write(dir.join(name), content).expect("write a test file");
}

/// A CSV of `n` documents of about 60 words, in stories of three versions each.
fn corpus(n: usize) -> String {
    let mut out = String::from("id,text\n");
    for i in 0..n {
        let story = i / 3;
        out.push_str(&format!("document-{i:07},"));
        for w in 0..60 {
            let word = if w == 30 + i % 3 {
                format!("variant{i}")
            } else {
                format!("w{}x{w}", story * 7 + w % 5)
            };
            out.push_str(&word);
            out.push(' ');
        }
        out.push('\n');
    }
    out
}

/// True when a temporary file in `dir` has bytes in it: an output is being written (the
/// empty one made to check that the folder can be written to comes and goes first).
fn writing(dir: &Path) -> bool {
    std::fs::read_dir(dir)
        .expect("list a test folder")
        .any(|e| {
            e.ok().is_some_and(|e| {
                e.file_name().to_string_lossy().starts_with(".megashingle-")
                    && e.metadata().is_ok_and(|m| m.len() > 0)
            })
        })
}

/// The temporary files in `dir` (a write in progress, or one left behind).
fn temporary_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .expect("list a test folder")
        .filter_map(|e| {
            let name = e.ok()?.file_name().to_string_lossy().into_owned();
            (name.starts_with(".megashingle-") || name.ends_with(".tmp")).then_some(name)
        })
        .collect()
}

/// Starts the binary in `dir` with `args`.
fn start(dir: &Path, args: &[&str]) -> Child {
    Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .env_remove("RUST_BACKTRACE")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start megashingle")
}

/// Sends `signal` (INT, TERM) to `child`.
fn send(child: &Child, signal: &str) {
    let sent = Command::new("kill")
        .args(["-s", signal, &child.id().to_string()])
        .status()
        .expect("run kill");
    assert!(sent.success(), "kill -s {signal}");
}

/// The index's documents with their stories, as `index export` writes them.
fn export(dir: &Path, db: &str) -> String {
    let out = megashingle(dir)
        .args(["index", "export", "--db", db])
        .output()
        .expect("run megashingle");
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    stdout_of(&out)
}

/// One command to interrupt: its arguments and the output it replaces.
struct Case {
    args: Vec<&'static str>,
    output: &'static str,
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            args: vec!["cluster", "-q", "big.csv", "-o", "out.csv"],
            output: "out.csv",
        },
        Case {
            args: vec![
                "dedup",
                "-q",
                "big.csv",
                "-o",
                "out.csv",
                "--dropped",
                "gone.csv",
            ],
            output: "out.csv",
        },
        Case {
            args: vec!["report", "-q", "big.csv", "-o", "out.html"],
            output: "out.html",
        },
        Case {
            args: vec![
                "index", "add", "-q", "--db", "s.db", "big.csv", "-o", "out.csv",
            ],
            output: "out.csv",
        },
    ]
}

/// How a run that was sent a signal ended.
#[derive(Debug, PartialEq)]
enum Ended {
    /// Interrupted, nothing written.
    Early,
    /// Interrupted as it ended, everything written.
    Late,
    /// Finished before the signal.
    Finished,
}

/// Checks how `out` of a run sent `signal` (INT or TERM, exit code `code`) ended: one line, no
/// temporary file, and the old output and index kept unless everything was written.
fn check_ended(out: &Output, signal: &str, code: i32, what: &str) -> Ended {
    let stderr = stderr_of(out);
    let ended = match out.status.code() {
        Some(0) => {
            assert_eq!(stderr, "", "{what}");
            Ended::Finished
        }
        Some(c) if c == code => {
            assert!(!stderr.contains("panicked"), "{what}: {stderr}");
            let early = format!("megashingle: interrupted (SIG{signal}); nothing was written\n");
            let late = format!(
                "megashingle: interrupted (SIG{signal}) as the run ended; everything was written\n"
            );
            if stderr == early {
                Ended::Early
            } else {
                assert_eq!(stderr, late, "{what}");
                Ended::Late
            }
        }
        other => panic!("{what}: exit {other:?}: {stderr}"),
    };
    ended
}

#[test]
fn an_interrupted_run_writes_nothing_and_leaves_no_temporary_file() {
    let dir = temp();
    let root = dir.path();
    write(root, "big.csv", corpus(20_000));
    write(root, "first.csv", corpus(30).replace("document-", "first-"));
    // The index holds a first night.
    let out = megashingle(root)
        .args(["index", "add", "-q", "--db", "s.db", "first.csv"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let index = std::fs::read(root.join("s.db")).unwrap();
    let exported = export(root, "s.db");
    let old = "an old output that must survive\n";

    let mut caught_writing = 0;
    for case in cases() {
        let what = case.args.join(" ");
        // How long the whole run takes, on a copy of the index.
        write(root, case.output, old);
        let timer = Instant::now();
        let full = start(root, &case.args).wait_with_output().unwrap();
        let full_time = timer.elapsed();
        assert_eq!(full.status.code(), Some(0), "{what}: {}", stderr_of(&full));
        std::fs::write(root.join("s.db"), &index).unwrap();

        // (signal, exit code, when): while reading, and as soon as a temporary file of the
        // output appears.
        let mut early = 0;
        for (signal, code, at_write) in [
            ("INT", 130, false),
            ("TERM", 143, false),
            ("INT", 130, true),
            ("TERM", 143, true),
        ] {
            write(root, case.output, old);
            let mut child = start(root, &case.args);
            let timer = Instant::now();
            let mut seen = false;
            while child.try_wait().unwrap().is_none() {
                if at_write {
                    if writing(root) {
                        seen = true;
                        break;
                    }
                } else if timer.elapsed() >= full_time / 4 {
                    break;
                }
                std::thread::sleep(Duration::from_micros(200));
            }
            send(&child, signal);
            let out = child.wait_with_output().unwrap();
            let what = format!(
                "{what} (SIG{signal}{})",
                if at_write { " while writing" } else { "" }
            );
            let ended = check_ended(&out, signal, code, &what);
            eprintln!("{what}: {ended:?} (the whole run takes {full_time:.2?})");
            assert_eq!(
                temporary_files(root),
                Vec::<String>::new(),
                "{what}: left behind"
            );
            let output = std::fs::read_to_string(root.join(case.output)).unwrap();
            if ended == Ended::Early {
                early += 1;
                assert!(output == old, "{what}: the old output was replaced");
                if case.args[0] == "index" {
                    // Opened for writing, the file's header may differ; its contents may not.
                    assert_eq!(export(root, "s.db"), exported, "{what}: the index changed");
                } else {
                    assert!(std::fs::read(root.join("s.db")).unwrap() == index, "{what}");
                }
                if case.args[0] == "dedup" {
                    assert!(
                        !root.join("gone.csv").exists()
                            || std::fs::read_to_string(root.join("gone.csv"))
                                .unwrap()
                                .starts_with("doc_id,"),
                        "{what}"
                    );
                }
            } else {
                assert!(output != old, "{what}: the output was not written");
                assert!(output.len() > 1000, "{what}: a complete output");
            }
            if at_write {
                assert!(seen || ended == Ended::Finished, "{what}");
                caught_writing += usize::from(seen && ended == Ended::Early);
            }
            std::fs::write(root.join("s.db"), &index).unwrap();
        }
        assert!(early >= 2, "{what}: no signal landed before the run ended");
        assert_eq!(export(root, "s.db"), exported, "{what}");
    }

    assert!(
        caught_writing >= 1,
        "no signal came while an output was written"
    );

    // A first add, interrupted a quarter of the way through, leaves neither an index nor its
    // lock file.
    let timer = Instant::now();
    let full = start(root, &["index", "add", "-q", "--db", "whole.db", "big.csv"]);
    assert_eq!(full.wait_with_output().unwrap().status.code(), Some(0));
    let full_time = timer.elapsed();
    let child = start(root, &["index", "add", "-q", "--db", "new.db", "big.csv"]);
    std::thread::sleep(full_time / 4);
    send(&child, "INT");
    let out = child.wait_with_output().unwrap();
    assert_eq!(check_ended(&out, "INT", 130, "first add"), Ended::Early);
    assert!(!root.join("new.db").exists() && !root.join("new.db.lock").exists());
}

/// Runs the binary in `dir` with a file size limit of `blocks` 512-byte blocks, as a full disk
/// would stop it.
fn with_file_limit(dir: &Path, blocks: u32, args: &[&str]) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -f {blocks} && exec \"$0\" \"$@\""))
        .arg(BIN)
        .args(args)
        .current_dir(dir)
        .env_remove("RUST_BACKTRACE")
        .stdin(Stdio::null())
        .output()
        .expect("run megashingle under sh")
}

#[test]
fn a_full_disk_is_one_error_line_and_keeps_the_old_output_and_the_index() {
    let dir = temp();
    let root = dir.path();
    write(root, "docs.csv", corpus(300));
    write(root, "first.csv", corpus(30).replace("document-", "first-"));
    let out = megashingle(root)
        .args(["index", "add", "-q", "--db", "s.db", "first.csv"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let exported = export(root, "s.db");
    let old = "an old output that must survive\n";
    // Under 4 KB may be written to any file (8 blocks of 512 bytes).
    for (args, file) in [
        (
            &["cluster", "-q", "docs.csv", "-o", "out.csv"][..],
            "out.csv",
        ),
        (&["dedup", "-q", "docs.csv", "-o", "out.csv"], "out.csv"),
        (
            &[
                "dedup",
                "-q",
                "docs.csv",
                "-o",
                "out.csv",
                "--dropped",
                "small.csv",
            ],
            "out.csv",
        ),
        (&["report", "-q", "docs.csv", "-o", "out.csv"], "out.csv"),
        // The index, larger than the limit already, fails first.
        (
            &[
                "index", "add", "-q", "--db", "s.db", "docs.csv", "-o", "out.csv",
            ],
            "s.db",
        ),
        (&["index", "add", "-q", "--db", "s.db", "docs.csv"], "s.db"),
    ] {
        write(root, "out.csv", old);
        let out = with_file_limit(root, 8, args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr_of(&out));
        let line = single_error_line(&out);
        let says = if file == "s.db" {
            "cannot write to the index, which is left as it was: I/O error"
        } else {
            "cannot write; nothing was written"
        };
        assert_eq!(
            line,
            format!("megashingle: error: {file}: {says}: File too large (os error 27)"),
            "{args:?}"
        );
        assert!(out.stdout.is_empty(), "{args:?}");
        assert_eq!(
            std::fs::read_to_string(root.join("out.csv")).unwrap(),
            old,
            "{args:?}"
        );
        assert_eq!(temporary_files(root), Vec::<String>::new(), "{args:?}");
        assert!(!root.join("small.csv").exists(), "{args:?}");
        assert_eq!(
            export(root, "s.db"),
            exported,
            "{args:?}: the index changed"
        );
    }
    // The index takes the add once there is room.
    let out = megashingle(root)
        .args(["index", "add", "-q", "--db", "s.db", "docs.csv"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    assert_eq!(export(root, "s.db").lines().count(), 1 + 30 + 300);
    // Two outputs: the first fits and is written in full, the second does not; neither is
    // put in place. Ids of 1,000 characters make the removed records' table (two ids a row)
    // the larger.
    let long_ids = corpus(300).replace("document-", &"x".repeat(1000));
    write(root, "long.csv", &long_ids);
    write(root, "kept.csv", old);
    let out = with_file_limit(
        root,
        400,
        &[
            "dedup",
            "-q",
            "long.csv",
            "-o",
            "kept.csv",
            "--dropped",
            "out.csv",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    assert_eq!(
        single_error_line(&out),
        "megashingle: error: out.csv: cannot write; nothing was written: File too large (os error 27)"
    );
    assert_eq!(std::fs::read_to_string(root.join("kept.csv")).unwrap(), old);
    assert_eq!(std::fs::read_to_string(root.join("out.csv")).unwrap(), old);
    assert_eq!(temporary_files(root), Vec::<String>::new());
    // Without the limit, the table of kept records fits under it and the other does not.
    let out = megashingle(root)
        .args([
            "dedup",
            "-q",
            "long.csv",
            "-o",
            "kept.csv",
            "--dropped",
            "out.csv",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let size = |name: &str| std::fs::metadata(root.join(name)).unwrap().len();
    assert!(
        size("kept.csv") < 400 * 512 && size("out.csv") > 400 * 512,
        "{} {}",
        size("kept.csv"),
        size("out.csv")
    );
}
