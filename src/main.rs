//! The `megashingle` binary: parses arguments, runs one command over the library, prints
//! errors as one line each and maps the outcome to an exit code (0 all good, 1 finished with
//! skipped records, 2 nothing written). A closed stdout (broken pipe) counts as success.

mod cli;

use std::io::{IsTerminal, Read, Write};
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Parser;

use cli::{CanonArgs, Cli, ClusterArgs, Command, CompareArgs};
use megashingle::compare::{compare, Comparison};
use megashingle::io::read::ReadOptions;
use megashingle::io::write::{write_atomically, write_rows};
use megashingle::pipeline::{cluster_collection, rows, sketch_inputs, Reporter, Summary};

/// How a command ended when it did not fail.
enum Outcome {
    Clean,
    Skipped,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Cluster(args) => run_cluster(args),
        Command::Canon(args) => run_canon(args).map(|()| Outcome::Clean),
        Command::Compare(args) => run_compare(args).map(|()| Outcome::Clean),
        Command::Config(args) => args
            .config
            .resolve()
            .map_err(anyhow::Error::from)
            .and_then(|c| print(&c.to_toml()))
            .map(|()| Outcome::Clean),
    };
    match result {
        Ok(Outcome::Clean) => ExitCode::SUCCESS,
        Ok(Outcome::Skipped) => ExitCode::from(1),
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("megashingle: error: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

fn print(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

fn run_cluster(args: ClusterArgs) -> Result<Outcome> {
    let started = Instant::now();
    let config = args.config.resolve()?;
    let options = ReadOptions {
        id_column: args.input.id_column,
        text_column: args.input.text_column,
        format: args.input.input_format,
        strict: args.input.strict,
    };
    let reporter = Reporter::new(!args.quiet && std::io::stderr().is_terminal());
    let collection = sketch_inputs(&args.inputs, &options, &config, args.threads, &reporter)?;
    if collection.ids.is_empty() {
        let names: Vec<String> = args
            .inputs
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        anyhow::bail!(
            "no documents in {}: nothing to cluster, nothing written{}",
            names.join(", "),
            if collection.read.skipped > 0 {
                " (every record was skipped)"
            } else {
                ""
            }
        );
    }
    let clustering = cluster_collection(&collection, &config, args.threads, &reporter);
    let table = rows(&collection, &clustering);
    match &args.output {
        Some(path) => write_atomically(path, |file| write_rows(table, args.format, file))?,
        None => write_rows(table, args.format, std::io::stdout().lock())
            .context("cannot write to stdout")?,
    }
    let summary = Summary::new(&collection, &clustering);
    if !args.quiet {
        eprintln!("megashingle: {}", summary.line(started.elapsed()));
    }
    Ok(if summary.skipped > 0 {
        Outcome::Skipped
    } else {
        Outcome::Clean
    })
}

fn read_text(path: &Path) -> Result<String> {
    let bytes = if path.as_os_str() == "-" {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .context("<stdin>: cannot read")?;
        bytes
    } else {
        std::fs::read(path).with_context(|| format!("{}: cannot read", path.display()))?
    };
    String::from_utf8(bytes).map_err(|e| {
        anyhow::anyhow!(
            "{}: invalid UTF-8 at byte {}; convert the file to UTF-8",
            path.display(),
            e.utf8_error().valid_up_to()
        )
    })
}

fn run_canon(args: CanonArgs) -> Result<()> {
    let config = args.config.resolve()?;
    let text = read_text(&args.file)?;
    let canonicalizer = megashingle::canonicalize::Canonicalizer::new(&config.canonicalize);
    let words = canonicalizer.words(&text);
    let separator = if args.lines { "\n" } else { " " };
    let mut out = words.join(separator);
    if !out.is_empty() {
        out.push('\n');
    }
    print(&out)
}

fn run_compare(args: CompareArgs) -> Result<()> {
    let config = args.config.resolve()?;
    let (first, second, first_name, second_name) = if args.text {
        (
            args.first,
            args.second,
            "first text".to_owned(),
            "second text".to_owned(),
        )
    } else {
        (
            read_text(Path::new(&args.first))?,
            read_text(Path::new(&args.second))?,
            args.first,
            args.second,
        )
    };
    let comparison = compare((&first, &first_name), (&second, &second_name), &config)?;
    if args.json {
        print(&(serde_json::to_string(&comparison)? + "\n"))
    } else {
        print(&report(&comparison))
    }
}

fn report(c: &Comparison) -> String {
    let mut out = format!(
        "shingles (k = {}): {} and {}, {} in common\n\
         Dice:              {:.4}\n\
         Jaccard:           {:.4}\n\
         estimated Jaccard: {:.4} (from {} minima)\n\
         supershingles:     {} of {} shared\n\
         megashingles:      {} of {} shared\n",
        c.shingle_size,
        c.first_shingles,
        c.second_shingles,
        c.common,
        c.dice,
        c.jaccard,
        c.estimated_jaccard,
        c.minima,
        c.shared_supershingles,
        c.supershingles,
        c.shared_megashingles,
        c.megashingles,
    );
    out.push_str(&format!(
        "shared fragments:  {}\n",
        c.shared_fragments.len()
    ));
    for fragment in &c.shared_fragments {
        out.push_str(&format!("  - {fragment}\n"));
    }
    out
}
