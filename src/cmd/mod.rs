//! The commands, one file each, over the library, and what several of them share: the run
//! options made from the run flags (threads, strict ids, progress bars). What they share about
//! files (inputs, outputs, stdin and stdout) is in `files`.

pub mod canon;
pub mod cluster;
pub mod compare;
pub mod config;
pub mod dedup;
pub mod files;
pub mod index;
pub mod report;
pub mod reuse;
pub mod tune;

use std::io::IsTerminal;
use std::sync::Arc;

use megashingle::engine::CollectOptions;
use megashingle::RunOptions;

use crate::bars::Bars;
use crate::cli::{ConfigArgs, RunArgs};

/// The number of worker threads to run, after printing the warning when `-j` was lowered.
pub fn threads(run: &RunArgs) -> usize {
    let (threads, warning) = run.threads();
    if let Some(warning) = warning {
        eprintln!("megashingle: warning: {warning}");
    }
    threads
}

/// The library's run options from the run flags: threads, strict ids, and progress bars on
/// stderr when it is a terminal and `--quiet` is not given.
pub fn run_options(run: &RunArgs, strict: bool) -> RunOptions {
    RunOptions {
        threads: threads(run),
        strict,
        progress: Arc::new(Bars::new(!run.quiet && std::io::stderr().is_terminal())),
        cancel: crate::interrupt::token(),
    }
}

/// The collector's options from the run flags, as [`run_options`].
pub fn collect_options(run: &RunArgs, strict: bool) -> CollectOptions {
    let options = run_options(run, strict);
    CollectOptions {
        threads: options.threads,
        strict: options.strict,
        progress: options.progress,
        cancel: options.cancel,
        ..CollectOptions::default()
    }
}

/// The configuration `config` names, with the `[reuse]` thresholds given on the command line
/// (`--min-shared-words`, `--min-containment`), validated.
pub fn reuse_config(
    config: &ConfigArgs,
    min_shared_words: Option<usize>,
    min_containment: Option<f64>,
) -> anyhow::Result<megashingle::Config> {
    let mut config = config.resolve()?;
    if let Some(words) = min_shared_words {
        config.reuse.min_shared_words = words;
    }
    if let Some(share) = min_containment {
        config.reuse.min_containment = share;
    }
    config.validate()?;
    Ok(config)
}
