//! `megashingle reuse`: the pairs of documents where one holds a passage of the other. The
//! inputs are read through the library's `Reuser`; the table (one row a pair, by doc_a then
//! doc_b) is written atomically to `-o` or to stdout, then the timings and the summary line go
//! to stderr.

use anyhow::{Context, Result};
use megashingle::io::write::write_pairs;
use megashingle::io::write::OutputFormat;
use megashingle::Reuser;

use crate::cli::ReuseArgs;
use crate::cmd::files::{
    check_outputs, input_names, output_file, refuse_parquet_to_terminal, write_file,
};
use crate::cmd::run_options;
use crate::exit::Outcome;
use crate::{bars, panics};

/// Runs the command.
pub fn run(args: ReuseArgs) -> Result<Outcome> {
    let output = output_file(&args.output);
    check_outputs(&[("-o", output)], &args.inputs, Some(&args.config), None)?;
    refuse_parquet_to_terminal(args.format == OutputFormat::Parquet, output)?;
    let config = super::reuse_config(&args.config, args.min_shared_words, args.min_containment)?;
    let options = args.input.read_options(None);
    let mut reuser = Reuser::with_options(&config, run_options(&args.run, options.strict))?;
    reuser.read(&args.inputs, &options)?;
    let reuse = reuser.finish()?;
    let summary = reuse.summary();
    if reuse.documents() == 0 {
        anyhow::bail!(
            "no documents in {}: nothing to compare, nothing written{}",
            input_names(&args.inputs),
            if summary.skipped > 0 {
                " (every record was skipped)"
            } else {
                ""
            }
        );
    }
    panics::panic_for_tests("reuse");
    let mut timings = reuse.timings().clone();
    timings.time("writing", || match output {
        Some(path) => write_file(path, |file| write_pairs(reuse.pairs(), args.format, file)),
        None => write_pairs(reuse.pairs(), args.format, std::io::stdout())
            .context("cannot write to stdout"),
    })?;
    bars::clear();
    if args.run.timings {
        eprintln!("megashingle: timings: {}", timings.line());
    }
    if !args.run.quiet {
        eprintln!("megashingle: {}", summary.line(reuse.elapsed()));
    }
    Ok(if summary.skipped > 0 {
        Outcome::Skipped
    } else {
        Outcome::Clean
    })
}
