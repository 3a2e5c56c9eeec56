//! The `megashingle` binary: parses arguments, runs one command over the library (one file
//! each under `cmd/`), and ends as `exit` says: one error line on failure, and an exit code
//! (0 all good, 1 finished with skipped records, 2 nothing written). A panic on any thread
//! ends as one error line too (see `panics`).

mod bars;
mod cli;
mod cmd;
mod exit;
mod hints;
mod interrupt;
mod panics;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::process::ExitCode;

use anyhow::Result;
use clap::Parser;

use cli::{Cli, Command};
use exit::Outcome;

fn main() -> ExitCode {
    let cli = Cli::parse();
    panics::install();
    if let Err(error) = interrupt::install() {
        return exit::failed(&error);
    }
    let processing = exit::processing(&cli.command);
    let index = exit::index_of(&cli.command);
    match catch_unwind(AssertUnwindSafe(|| interrupt::outcome(run(cli.command)))) {
        Ok(Ok(outcome)) => outcome.into(),
        Ok(Err(error)) => exit::failed(&error),
        Err(payload) => exit::panicked(payload.as_ref(), &processing, index.as_deref()),
    }
}

/// Runs one command.
fn run(command: Command) -> Result<Outcome> {
    match command {
        Command::Cluster(args) => cmd::cluster::run(args),
        Command::Dedup(args) => cmd::dedup::run(args),
        Command::Reuse(args) => cmd::reuse::run(args),
        Command::Canon(args) => cmd::canon::run(args),
        Command::Compare(args) => cmd::compare::run(args),
        Command::Tune(args) => cmd::tune::run(args),
        Command::Report(args) => cmd::report::run(args),
        Command::Index(command) => cmd::index::run(command),
        Command::Config(args) => cmd::config::run(args),
    }
}
