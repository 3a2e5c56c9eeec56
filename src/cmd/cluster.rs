//! `megashingle cluster`: the story table of the inputs. The inputs are read and clustered
//! through the library's `Clusterer`; the table (one row per document, in the library's row
//! order) is written atomically to `-o` or to stdout, then the timings and the summary line go
//! to stderr.

use anyhow::{Context, Result};
use megashingle::io::write::{write_rows, OutputFormat, Row};
use megashingle::Clusterer;

use crate::cli::ClusterArgs;
use crate::cmd::files::{
    check_outputs, input_names, output_file, refuse_parquet_to_terminal, write_file,
};
use crate::cmd::run_options;
use crate::exit::Outcome;
use crate::{bars, panics};

/// Runs the command.
pub fn run(args: ClusterArgs) -> Result<Outcome> {
    let output = output_file(&args.output);
    check_outputs(&[("-o", output)], &args.inputs, Some(&args.config), None)?;
    refuse_parquet_to_terminal(args.format == OutputFormat::Parquet, output)?;
    let config = args.config.resolve()?;
    let options = args.input.read_options(None);
    let mut clusterer = Clusterer::with_options(&config, run_options(&args.run, options.strict))?;
    clusterer.read(&args.inputs, &options)?;
    let clusters = clusterer.finish()?;
    let summary = clusters.summary();
    if clusters.is_empty() {
        anyhow::bail!(
            "no documents in {}: nothing to cluster, nothing written{}",
            input_names(&args.inputs),
            if summary.skipped > 0 {
                " (every record was skipped)"
            } else {
                ""
            }
        );
    }
    panics::panic_for_tests("cluster");
    let mut timings = clusters.timings().clone();
    let table = clusters.assignments().map(Row::from);
    timings.time("writing", || match output {
        Some(path) => write_file(path, |file| write_rows(table, args.format, file)),
        None => write_rows(table, args.format, std::io::stdout()).context("cannot write to stdout"),
    })?;
    // The bars are cleared, so that the lines below start lines of their own.
    bars::clear();
    if args.run.timings {
        eprintln!("megashingle: timings: {}", timings.line());
        let stats = clusters.stats();
        let per_document = |pairs: usize| pairs as f64 / clusters.len().max(1) as f64;
        eprintln!(
            "megashingle: timings: {} candidate pairs checked ({:.2} a document), {} passed verification ({:.2} a document)",
            stats.candidate_pairs(),
            per_document(stats.candidate_pairs()),
            stats.verified_pairs(),
            per_document(stats.verified_pairs()),
        );
    }
    if !args.run.quiet {
        eprintln!("megashingle: {}", summary.line(clusters.elapsed()));
    }
    Ok(if summary.skipped > 0 {
        Outcome::Skipped
    } else {
        Outcome::Clean
    })
}
