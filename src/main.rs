//! The `megashingle` binary: parses arguments, runs one command over the library, prints
//! errors as one line each and maps the outcome to an exit code (0 all good, 1 finished with
//! skipped records, 2 nothing written). A closed stdout (broken pipe) counts as success; an
//! output that would replace an input or the index is refused before anything is read; a
//! panic on any thread ends as one error line (see `panics`).

mod bars;
mod cli;
mod cmd;
mod panics;

use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Parser;

use cli::{
    CanonArgs, Cli, ClusterArgs, Command, CompareArgs, ConfigArgs, IndexAddArgs, IndexCommand,
    IndexQueryArgs, IndexRemoveArgs, RunArgs, TuneArgs,
};
use megashingle::compare::{compare, Comparison};
use megashingle::engine::{CollectOptions, Collector};
use megashingle::index::store::{Open, Store};
use megashingle::io::write::Row;
use megashingle::io::write::{write_atomically, write_csv, write_rows, Guarded};
use megashingle::{Clusterer, RunOptions};

use bars::Bars;

/// How a command ended when it did not fail.
pub enum Outcome {
    Clean,
    Skipped,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    panics::install();
    let processing = processing(&cli.command);
    let index = index_of(&cli.command);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(cli.command)));
    match result {
        Ok(Ok(Outcome::Clean)) => ExitCode::SUCCESS,
        Ok(Ok(Outcome::Skipped)) => ExitCode::from(1),
        Ok(Err(e)) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Ok(Err(e)) => {
            bars::clear();
            eprintln!("megashingle: error: {}", message_of(&e));
            ExitCode::from(2)
        }
        Err(payload) => {
            bars::clear();
            let message = panics::message(payload.as_ref());
            let index = index
                .map(|db| {
                    format!(
                        "; the index {} may be damaged: if this happens again, restore it from a copy (nothing was changed)",
                        db.display()
                    )
                })
                .unwrap_or_default();
            eprintln!(
                "megashingle: error: internal error while processing {processing}: {message}{index}; please report it with RUST_BACKTRACE=1"
            );
            ExitCode::from(2)
        }
    }
}

/// Runs one command.
fn run(command: Command) -> Result<Outcome> {
    match command {
        Command::Cluster(args) => run_cluster(args),
        Command::Dedup(args) => cmd::dedup::run(args),
        Command::Canon(args) => run_canon(args).map(|()| Outcome::Clean),
        Command::Compare(args) => run_compare(args).map(|()| Outcome::Clean),
        Command::Tune(args) => run_tune(args).map(|()| Outcome::Clean),
        Command::Report(args) => cmd::report::run(args),
        Command::Index(command) => run_index(command),
        Command::Config(args) => args
            .config
            .resolve()
            .map_err(anyhow::Error::from)
            .and_then(|c| print(&c.to_toml()))
            .map(|()| Outcome::Clean),
    }
}

/// The error's one line, with the flag that made a bad record fatal named, and the flag that
/// gives the format of an input whose format was guessed.
fn message_of(error: &anyhow::Error) -> String {
    use megashingle::io::read::ReadError;
    let read_error = |is: fn(&ReadError) -> bool| {
        error
            .chain()
            .any(|cause| match cause.downcast_ref::<megashingle::Error>() {
                Some(megashingle::Error::Input(e)) => is(e),
                _ => cause.downcast_ref::<ReadError>().is_some_and(is),
            })
    };
    if read_error(|e| matches!(e, ReadError::Strict(_))) {
        format!("{error:#} (--strict makes this fatal)")
    } else if read_error(|e| matches!(e, ReadError::Guessed { .. })) {
        format!("{error:#}; give the format with --input-format csv or jsonl")
    } else {
        format!("{error:#}")
    }
}

/// What a command processes, as named in the message of an internal error.
fn processing(command: &Command) -> String {
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
        Command::Index(IndexCommand::Query(args)) => match &args.file {
            Some(file) => names(&[file, &args.db.db]),
            None => args.db.db.display().to_string(),
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
fn index_of(command: &Command) -> Option<PathBuf> {
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

/// The output file, or `None` for stdout (no `-o`, or `-o -`).
fn output_file(output: &Option<PathBuf>) -> Option<&Path> {
    output.as_deref().filter(|p| p.as_os_str() != "-")
}

/// Fails when `output` would replace one of the files the command reads: its inputs, the
/// configuration file and the index.
fn refuse_same_file(
    output: Option<&Path>,
    inputs: &[PathBuf],
    config: Option<&ConfigArgs>,
    index: Option<&Path>,
) -> Result<()> {
    let Some(output) = output else {
        return Ok(());
    };
    let config = config.and_then(ConfigArgs::file);
    let mut guarded: Vec<Guarded> = inputs
        .iter()
        .map(|path| Guarded {
            role: "input",
            path,
        })
        .collect();
    if let Some(path) = index {
        guarded.push(Guarded {
            role: "index",
            path,
        });
    }
    if let Some(path) = &config {
        guarded.push(Guarded {
            role: "configuration",
            path,
        });
    }
    Ok(megashingle::io::write::refuse_same_file(output, &guarded)?)
}

/// The number of worker threads to run, after printing the warning when `-j` was lowered.
fn threads(run: &RunArgs) -> usize {
    let (threads, warning) = run.threads();
    if let Some(warning) = warning {
        eprintln!("megashingle: warning: {warning}");
    }
    threads
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

fn print(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

fn run_cluster(args: ClusterArgs) -> Result<Outcome> {
    let output = output_file(&args.output);
    refuse_same_file(output, &args.inputs, Some(&args.config), None)?;
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
        Some(path) => write_atomically(path, |file| write_rows(table, args.format, file))
            .map_err(anyhow::Error::from),
        None => write_rows(table, args.format, std::io::stdout().lock())
            .context("cannot write to stdout"),
    })?;
    // The bars are cleared, so that the lines below start lines of their own.
    bars::clear();
    if args.run.timings {
        eprintln!("megashingle: timings: {}", timings.line());
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

/// The library's run options from the run flags: threads, strict ids, and progress bars on
/// stderr when it is a terminal and `--quiet` is not given.
fn run_options(run: &RunArgs, strict: bool) -> RunOptions {
    RunOptions {
        threads: threads(run),
        strict,
        progress: std::sync::Arc::new(Bars::new(!run.quiet && std::io::stderr().is_terminal())),
    }
}

/// The collector's options from the run flags, as [`run_options`].
fn collect_options(run: &RunArgs, strict: bool) -> CollectOptions {
    let options = run_options(run, strict);
    CollectOptions {
        threads: options.threads,
        strict: options.strict,
        progress: options.progress,
        ..CollectOptions::default()
    }
}

/// The inputs as named on the command line, for messages.
fn input_names(inputs: &[PathBuf]) -> String {
    let names: Vec<String> = inputs
        .iter()
        .map(|p| match p.to_str() {
            Some("-") => "<stdin>".to_owned(),
            _ => p.display().to_string(),
        })
        .collect();
    names.join(", ")
}

/// Writes a CSV table to `output` (atomically) or to stdout.
fn emit_csv(
    output: Option<&Path>,
    header: &[&str],
    rows: impl IntoIterator<Item = Vec<String>>,
) -> Result<()> {
    match output {
        Some(path) => write_atomically(path, |file| write_csv(header, rows, file))
            .map_err(anyhow::Error::from),
        None => write_csv(header, rows, std::io::stdout().lock()).context("cannot write to stdout"),
    }
}

fn run_index(command: IndexCommand) -> Result<Outcome> {
    use megashingle::index::read;
    match command {
        IndexCommand::Add(args) => run_index_add(args),
        IndexCommand::Query(args) => run_index_query(args).map(|()| Outcome::Clean),
        IndexCommand::Export(args) => {
            let output = output_file(&args.output);
            refuse_same_file(output, &[], None, Some(&args.db.db))?;
            let store = Store::open(&args.db.db, Open::Existing, "index export")?;
            let rows = read::export(&store)?
                .into_iter()
                .map(|r| vec![r.doc_id, r.story_id, r.story_size.to_string(), r.added_at]);
            emit_csv(
                output,
                &["doc_id", "story_id", "story_size", "added_at"],
                rows,
            )?;
            Ok(Outcome::Clean)
        }
        IndexCommand::Merges(args) => {
            let output = output_file(&args.output);
            refuse_same_file(output, &[], None, Some(&args.db.db))?;
            let store = Store::open(&args.db.db, Open::Existing, "index merges")?;
            let rows = read::merges(&store)?.into_iter().map(|m| {
                vec![
                    megashingle::io::time::format_time(m.at),
                    m.absorbed,
                    m.absorbed_size.to_string(),
                    m.survivor,
                    m.via,
                ]
            });
            emit_csv(
                output,
                &[
                    "merged_at",
                    "absorbed_story",
                    "absorbed_size",
                    "surviving_story",
                    "via_doc",
                ],
                rows,
            )?;
            Ok(Outcome::Clean)
        }
        IndexCommand::Stats(args) => {
            let store = Store::open(&args.db, Open::Existing, "index stats")?;
            let s = read::stats(&store)?;
            let per_document = if s.documents > 0 {
                format!("{:.0}", s.file_bytes as f64 / s.documents as f64)
            } else {
                "-".into()
            };
            let mut out = format!(
                "index: {}\ndocuments: {}\nstories: {} ({} of 2 or more documents; the largest has {})\nmerges: {}\npostings: {}\nboilerplate shingles: {}\non disk: {} bytes ({per_document} bytes per document)\ncreated: {}\nlast add: {}\n",
                store.path.display(),
                s.documents,
                s.stories,
                s.multi_stories,
                s.largest_story,
                s.merges,
                s.postings,
                s.boilerplate_shingles,
                s.file_bytes,
                s.created_at.as_deref().unwrap_or("-"),
                s.last_add_at.as_deref().unwrap_or("-"),
            );
            out.push_str("sketch settings:\n");
            for setting in s.sketch_settings {
                out.push_str(&format!("  {setting}\n"));
            }
            print(&out)?;
            Ok(Outcome::Clean)
        }
        IndexCommand::Remove(args) => run_index_remove(args),
        IndexCommand::Report(args) => cmd::report::run_index(args),
    }
}

fn run_index_add(args: IndexAddArgs) -> Result<Outcome> {
    let started = Instant::now();
    refuse_same_file(
        output_file(&args.output),
        &args.inputs,
        Some(&args.config),
        Some(&args.db.db),
    )?;
    let config = args.config.resolve()?;
    let made = !args.db.db.exists();
    let mut store = Store::open(&args.db.db, Open::CreateIfMissing, "index add")?;
    let outcome = add_to_index(args, &mut store, &config, started);
    if outcome.is_err() && made && store.is_new().unwrap_or(false) {
        // A failed first add leaves no empty index behind, and no lock file beside it.
        store.discard();
    }
    outcome
}

fn add_to_index(
    args: IndexAddArgs,
    store: &mut Store,
    config: &megashingle::config::Config,
    started: Instant,
) -> Result<Outcome> {
    use megashingle::index::add::{add, AddOptions};
    let config = config.resolve();
    store.check_comparable(&config)?;
    let loading = Instant::now();
    let known = megashingle::index::read::known_boilerplate(store)?;
    let loading = loading.elapsed();
    let options = args.input.read_options(args.time_column.clone());
    let collect = collect_options(&args.run, options.strict);
    let threads = collect.threads;
    let mut collector = Collector::new(
        &config,
        CollectOptions {
            known: std::sync::Arc::new(known),
            ..collect
        },
    )?;
    collector.read(&args.inputs, &options)?;
    let collection = collector.finish()?;
    bars::clear();
    if collection.ids.is_empty() {
        anyhow::bail!(
            "no documents in {}: nothing added to the index",
            input_names(&args.inputs)
        );
    }
    let skipped = collection.read.skipped + collection.duplicates;
    let mut timings = collection.timings.clone();
    timings.0.insert(0, ("index: known boilerplate", loading));
    let pool = megashingle::engine::thread_pool(threads, "add")?;
    let upsert = AddOptions {
        upsert: args.upsert,
    };
    let report = pool.install(|| {
        panics::panic_for_tests("index add");
        add(store, collection, &config, upsert)
    })?;
    let rows = report.assignments.iter().map(|a| {
        vec![
            a.doc_id.clone(),
            a.story_id.clone(),
            a.new_story.to_string(),
            a.similarity.map(|s| format!("{s:.4}")).unwrap_or_default(),
            a.status.to_string(),
        ]
    });
    let written = Instant::now();
    emit_csv(
        output_file(&args.output),
        &["doc_id", "story_id", "new_story", "similarity", "status"],
        rows,
    )?;
    timings.0.extend(report.timings.0.iter().copied());
    timings.0.push(("writing", written.elapsed()));
    if report.merged_postings {
        timings.time("index: compaction", || store.compact_if_sparse())?;
    }
    if args.run.timings {
        eprintln!("megashingle: timings: {}", timings.line());
    }
    if !args.run.quiet {
        eprintln!(
            "megashingle: added {} documents ({} joined indexed stories, {} new stories, {} merges, {} replaced, {} records skipped){}; the index holds {} documents; {:.2} s",
            report.assignments.len(),
            report.joined_existing,
            report.new_stories,
            report.merges.len(),
            report.replaced,
            skipped,
            megashingle::engine::cut_buckets_note(
                report.cut_buckets,
                report.cut_bucket_documents
            ),
            report.documents,
            started.elapsed().as_secs_f64()
        );
    }
    Ok(if skipped > 0 {
        Outcome::Skipped
    } else {
        Outcome::Clean
    })
}

fn run_index_query(args: IndexQueryArgs) -> Result<()> {
    let config = args.config.resolve()?;
    let text = match (&args.text, &args.file) {
        (Some(text), _) => text.clone(),
        (None, Some(file)) => read_text(file)?,
        (None, None) => anyhow::bail!("give a FILE or --text TEXT"),
    };
    let name = match &args.file {
        Some(file) if args.text.is_none() => file.display().to_string(),
        _ => "the text".to_owned(),
    };
    let words = megashingle::canonicalize::Canonicalizer::new(&config.canonicalize)
        .words(&text)
        .len();
    let k = config.shingle.size;
    if words < k {
        return Err(megashingle::compare::TooShort { name, words, k }.into());
    }
    let store = Store::open(&args.db.db, Open::Existing, "index query")?;
    let matches = megashingle::index::read::query(&store, &text, &config.resolve())?;
    let rows = matches.into_iter().map(|m| {
        vec![
            m.doc_id,
            m.story_id,
            format!("{:.4}", m.similarity),
            format!("{:.4}", m.containment),
        ]
    });
    emit_csv(
        None,
        &["doc_id", "story_id", "similarity", "containment"],
        rows,
    )
}

fn run_index_remove(args: IndexRemoveArgs) -> Result<Outcome> {
    use megashingle::index::remove::{remove, Selection};
    use megashingle::io::time::{format_time, has_offset, parse_time};
    let before = match &args.before {
        Some(text) => Some(parse_time(text).ok_or_else(|| {
            anyhow::anyhow!(
                "--before {text:?} is not a date; write RFC 3339 (2026-11-30T06:00:00Z) or YYYY-MM-DD"
            )
        })?),
        None => None,
    };
    let ids = match &args.ids {
        Some(path) => read_text(path)?
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_owned)
            .collect(),
        None => Vec::new(),
    };
    let mut store = Store::open(&args.db.db, Open::Existing, "index remove")?;
    if let (Some(text), Some(seconds)) = (&args.before, before) {
        if !has_offset(text) {
            eprintln!(
                "megashingle: note: --before {text:?} has no UTC offset; taken as UTC: before {}",
                format_time(seconds)
            );
        }
    }
    let removal = remove(&mut store, &Selection { before, ids })?;
    store.compact_if_sparse()?;
    for id in &removal.unknown_ids {
        eprintln!("megashingle: warning: id {id:?} is not in the index");
    }
    eprintln!(
        "megashingle: removed {} documents and {} emptied stories; the index holds {} documents",
        removal.removed, removal.stories_removed, removal.documents
    );
    Ok(if removal.unknown_ids.is_empty() {
        Outcome::Clean
    } else {
        Outcome::Skipped
    })
}

fn read_text(path: &Path) -> Result<String> {
    let stdin = path.as_os_str() == "-";
    let bytes = if stdin {
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
            if stdin {
                "<stdin>".into()
            } else {
                path.display().to_string()
            },
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
    if args.dropped {
        let dropped = canonicalizer.dropped_lines(&text);
        out.push_str(&format!("\ndropped ({} lines):\n", dropped.len()));
        for line in dropped {
            out.push_str(&format!("  - {line}\n"));
        }
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

fn run_tune(args: TuneArgs) -> Result<()> {
    use megashingle::config::Matching;
    use megashingle::sketch::grouping::{choose, Grouping};
    use megashingle::tune::svg;
    refuse_same_file(args.plot.as_deref(), &[], Some(&args.config), None)?;
    let config = args.config.resolve()?;
    let target = match args.threshold {
        Some(t) => {
            anyhow::ensure!(
                t > 0.0 && t < 1.0,
                "--threshold {t} is out of range: give a Jaccard similarity above 0 and below 1"
            );
            t
        }
        None => {
            let t = config.supershingle.target_similarity;
            anyhow::ensure!(
                t > 0.0,
                "supershingle.target-similarity is 0 (the grouping is given by hand): \
                 give a target with --threshold T"
            );
            t
        }
    };
    let minima = config.signature.minima;
    let chosen = choose(target, minima);
    let classic = Grouping {
        groups: 6,
        minima_per_group: 14,
        matching: Matching::Megashingle,
    };
    let describe = |g: &Grouping| {
        let kind = match g.matching {
            Matching::Megashingle => "megashingles (pairs of supershingles)",
            Matching::Supershingle => "single supershingles",
        };
        format!(
            "{} supershingles of {} minima, matched as {kind}: {} keys per document",
            g.groups,
            g.minima_per_group,
            g.keys()
        )
    };
    let (fp, fneg) = chosen.areas(target);
    let (cfp, cfn) = classic.areas(target);
    let mut out = format!(
        "target Jaccard {target:.2}, {minima} minima\n\
         chosen:  {}\n         false-positive area {fp:.4}, false-negative area {fneg:.4}\n\
         classic: {}\n         false-positive area {cfp:.4}, false-negative area {cfn:.4}\n\n\
         Jaccard  P(candidate) chosen            classic\n",
        describe(&chosen),
        describe(&classic),
    );
    for i in 1..=20 {
        let j = f64::from(i) * 0.05;
        let (p, c) = (chosen.probability(j), classic.probability(j));
        let bar = "#".repeat((p * 20.0).round() as usize);
        let mark = if (j - target).abs() < 0.025 {
            " <- target"
        } else {
            ""
        };
        out.push_str(&format!("  {j:.2}   {p:.3} {bar:<20}   {c:.3}{mark}\n"));
    }
    if let Some(path) = &args.plot {
        let picture = svg(&chosen, target);
        write_atomically(path, |file| file.write_all(picture.as_bytes()))?;
        eprintln!("megashingle: S-curve written to {}", path.display());
    }
    print(&out)
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
        "leads shared:      {:.2} of the first's in the second, {:.2} of the second's in the first\n",
        c.first_lead_in_second, c.second_lead_in_first
    ));
    out.push_str(&format!(
        "shared fragments:  {}\n",
        c.shared_fragments.len()
    ));
    for fragment in &c.shared_fragments {
        out.push_str(&format!("  - {fragment}\n"));
    }
    out
}
