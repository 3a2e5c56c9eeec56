//! How a run of the binary ends: the exit code of each outcome (0 all good, 1 finished with
//! skipped records, 2 nothing written, 130 or 143 interrupted by SIGINT or SIGTERM), the one error line of a failure, and the one line of a
//! panic, which names what was being processed and, for an index command, the index. A closed
//! stdout (broken pipe) counts as success: the reader went away (`| head`).

use std::any::Any;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::cli::{Command, IndexCommand};
use crate::cmd::files::input_names;
use crate::interrupt::Interrupted;
use crate::{bars, hints, panics};

/// How a command ended when it did not fail.
pub enum Outcome {
    /// Everything was read and written.
    Clean,
    /// Finished, but some records were skipped.
    Skipped,
}

impl From<Outcome> for ExitCode {
    fn from(outcome: Outcome) -> ExitCode {
        match outcome {
            Outcome::Clean => ExitCode::SUCCESS,
            Outcome::Skipped => ExitCode::from(1),
        }
    }
}

/// The exit code of a failed command after its error line: 2, or success when the failure
/// was only a closed stdout.
pub fn failed(error: &anyhow::Error) -> ExitCode {
    if is_broken_pipe(error) {
        return ExitCode::SUCCESS;
    }
    if let Some(interrupted) = error.downcast_ref::<Interrupted>() {
        bars::clear();
        eprintln!("megashingle: {interrupted}");
        return ExitCode::from(interrupted.code());
    }
    error_line(&hints::message_of(error))
}

/// The exit code of a command that panicked (a bug), after its error line: 2.
/// `processing` names what the command was processing, `index` its index file.
pub fn panicked(payload: &(dyn Any + Send), processing: &str, index: Option<&Path>) -> ExitCode {
    let message = panics::message(payload);
    let index = index
        .map(|db| {
            format!(
                "; the index {} may be damaged: if this happens again, restore it from a copy (nothing was changed)",
                db.display()
            )
        })
        .unwrap_or_default();
    error_line(&format!(
        "internal error while processing {processing}: {message}{index}; please report it with RUST_BACKTRACE=1"
    ))
}

/// Prints `message` as the error line, below any progress bars, and returns exit code 2.
fn error_line(message: &str) -> ExitCode {
    bars::clear();
    eprintln!("megashingle: error: {message}");
    ExitCode::from(2)
}

/// True when the error is, or was caused by, a closed stdout: the reader went away, which is
/// not a failure (`| head`). An io error that wraps another error is looked into too.
fn is_broken_pipe(error: &anyhow::Error) -> bool {
    fn broken(cause: &(dyn std::error::Error + 'static)) -> bool {
        if let Some(e) = cause.downcast_ref::<std::io::Error>() {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                return true;
            }
            if let Some(inner) = e.get_ref() {
                return broken(inner);
            }
        }
        if let Some(csv::ErrorKind::Io(e)) = cause.downcast_ref::<csv::Error>().map(|e| e.kind()) {
            return e.kind() == std::io::ErrorKind::BrokenPipe;
        }
        cause.source().is_some_and(broken)
    }
    error.chain().any(broken)
}

/// What a command processes, as named in the message of an internal error.
pub fn processing(command: &Command) -> String {
    let names = |paths: &[&Path]| {
        paths
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    match command {
        Command::Cluster(args) => input_names(&args.inputs),
        Command::Dedup(args) => input_names(&args.inputs),
        Command::Reuse(args) => input_names(&args.inputs),
        Command::Report(args) => input_names(&args.inputs),
        Command::Canon(args) => args.file.display().to_string(),
        Command::Compare(args) if args.text => "the two texts".into(),
        Command::Compare(args) => format!("{} and {}", args.first, args.second),
        Command::Tune(_) | Command::Config(_) => "the configuration".into(),
        Command::Index(IndexCommand::Add(args)) => {
            format!(
                "{} into {}",
                input_names(&args.inputs),
                args.db.db.display()
            )
        }
        Command::Index(IndexCommand::Query(args)) => match args.files.as_slice() {
            [] => args.db.db.display().to_string(),
            [file] => names(&[file, &args.db.db]),
            files => format!("{} against {}", input_names(files), args.db.db.display()),
        },
        Command::Index(IndexCommand::Export(args) | IndexCommand::Merges(args)) => {
            args.db.db.display().to_string()
        }
        Command::Index(IndexCommand::Stats(args)) => args.db.display().to_string(),
        Command::Index(IndexCommand::Remove(args)) => args.db.db.display().to_string(),
        Command::Index(IndexCommand::Report(args)) => {
            format!("{} in {}", input_names(&args.inputs), args.db.db.display())
        }
    }
}

/// The index file of an index command.
pub fn index_of(command: &Command) -> Option<PathBuf> {
    let Command::Index(command) = command else {
        return None;
    };
    Some(match command {
        IndexCommand::Add(a) => a.db.db.clone(),
        IndexCommand::Query(a) => a.db.db.clone(),
        IndexCommand::Export(a) | IndexCommand::Merges(a) => a.db.db.clone(),
        IndexCommand::Stats(a) => a.db.clone(),
        IndexCommand::Remove(a) => a.db.db.clone(),
        IndexCommand::Report(a) => a.db.db.clone(),
    })
}
