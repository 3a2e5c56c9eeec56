//! `megashingle report` and `index report`: the stories of the inputs as one HTML page. The
//! inputs are clustered through the library's `Clusterer` (or only sketched, when the stories
//! come from a clusters table or an index); the library's report module then reads the texts
//! back, compares each member with its representative and renders the page, which is written
//! atomically. With `--reuse`, the inputs go through the library's `Reuser` instead and the
//! page shows the pairs that share a passage (`report::reuse`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Result;
use megashingle::cluster::joined_via;
use megashingle::compare::Comparer;
use megashingle::config::Plan;
use megashingle::corpus::set_store::SetStore;
use megashingle::engine::{Collection, Collector, Timings};
use megashingle::index::{Index, Open};
use megashingle::io::read::ReadOptions;
use megashingle::io::read::{read_inputs, ReadItem};
use megashingle::report::build::{model, read_texts, rereadable, text_bytes, Setting, Stories};
use megashingle::report::model::StorySource;
use megashingle::report::reuse::{pair_view, render as render_reuse, ReuseView, MAX_PAIRS};
use megashingle::report::table::{self, Row};
use megashingle::reuse::Settings;
use megashingle::{Clusterer, ReusePair, Reuser};
use rayon::prelude::*;
use std::collections::{HashMap, HashSet};

use crate::bars;
use crate::cli::{ConfigArgs, IndexReportArgs, InputArgs, ReportArgs, ReportOutputArgs, RunArgs};
use crate::cmd::files::{check_outputs, input_names, write_file};
use crate::cmd::{collect_options, run_options};
use crate::exit::Outcome;

/// Runs `report`: the stories of the inputs, clustered here or read from `--clusters`.
pub fn run(args: ReportArgs) -> Result<Outcome> {
    if args.reuse {
        return run_reuse(args);
    }
    let started = Instant::now();
    let (config, options) = prepare(
        &args.inputs,
        args.clusters.as_slice(),
        &args.input,
        &args.report,
        &args.config,
        None,
    )?;
    let (collection, stories, timings) = match &args.clusters {
        None => {
            let mut clusterer =
                Clusterer::with_options(&config, run_options(&args.run, options.strict))?;
            clusterer.read(&args.inputs, &options)?;
            let clusters = clusterer.finish()?;
            let timings = clusters.timings().clone();
            let (collection, clustering) = clusters.into_parts();
            let (clusters, links) = (clustering.clusters, &clustering.links);
            let via = SetStore::reading_of(collection.sets.as_ref(), 0, |sets| {
                joined_via(&clusters, links, &collection.sketches, sets, &config)
            })
            .map_err(megashingle::Error::spill)?;
            let stories = Stories {
                clusters,
                names: None,
                known_sizes: None,
                via: Some(via),
                source: StorySource::Clustered,
            };
            (collection, stories, timings)
        }
        Some(path) => {
            let collection = collect(&args.inputs, &options, &config, &args.run, None)?;
            let name = path.display().to_string();
            let stories = table::stories(
                table::read_table(path)?,
                &collection.ids,
                &collection.sketches,
                StorySource::Table(name.clone()),
                (&name, "give the table made from these inputs"),
            )?;
            let timings = collection.timings.clone();
            (collection, stories, timings)
        }
    };
    let run = Run {
        inputs: &args.inputs,
        options: &options,
        report: &args.report,
        run: &args.run,
        started,
        timings,
    };
    write_report(run, collection, &stories, &config)
}

/// Runs `index report`: the stories of the given documents as the index holds them.
pub fn run_index(args: IndexReportArgs) -> Result<Outcome> {
    let started = Instant::now();
    let (config, options) = prepare(
        &args.inputs,
        &[],
        &args.input,
        &args.report,
        &args.config,
        Some(&args.db.db),
    )?;
    let db = args.db.db.display().to_string();
    let (known, rows) = {
        let index = Index::open_by(&args.db.db, Open::Existing, "index report")?;
        index.check_comparable(&config)?;
        (index.known_boilerplate()?, index.export()?)
    };
    let collection = collect(&args.inputs, &options, &config, &args.run, Some(known))?;
    let rows = rows.into_iter().map(|r| Row {
        place: format!("{db}: document {:?}", r.doc_id),
        doc_id: r.doc_id,
        story: r.story_id,
        size: Some(u64::from(r.story_size)),
    });
    let stories = table::stories(
        rows.collect(),
        &collection.ids,
        &collection.sketches,
        StorySource::Index(db.clone()),
        (
            &format!("the index {db}"),
            "add them with `megashingle index add` first",
        ),
    )?;
    let run = Run {
        inputs: &args.inputs,
        options: &options,
        report: &args.report,
        run: &args.run,
        started,
        timings: collection.timings.clone(),
    };
    write_report(run, collection, &stories, &config)
}

/// Runs `report --reuse`: the pairs that share a passage, side by side.
fn run_reuse(args: ReportArgs) -> Result<Outcome> {
    let started = Instant::now();
    let (config, options) = prepare(
        &args.inputs,
        &[],
        &args.input,
        &args.report,
        &args.config,
        None,
    )?;
    let mut reuser = Reuser::with_options(&config, run_options(&args.run, options.strict))?;
    reuser.read(&args.inputs, &options)?;
    let reuse = reuser.finish()?;
    let mut timings = reuse.timings().clone();
    bars::clear();
    anyhow::ensure!(
        reuse.documents() > 0,
        "no documents in {}: no report written",
        input_names(&args.inputs)
    );
    let mut rows: Vec<ReusePair> = reuse.pairs().collect();
    rows.sort_by(|x, y| {
        (y.shared_words.cmp(&x.shared_words))
            .then_with(|| x.doc_a.cmp(y.doc_a))
            .then_with(|| x.doc_b.cmp(y.doc_b))
    });
    rows.truncate(MAX_PAIRS);
    let wanted: HashSet<&str> = rows.iter().flat_map(|r| [r.doc_a, r.doc_b]).collect();
    let mut texts: HashMap<String, String> = HashMap::new();
    let again = ReadOptions {
        strict: false,
        ..options.clone()
    };
    timings.time("reading texts", || -> Result<()> {
        for item in read_inputs(&args.inputs, &again) {
            if let ReadItem::Record(r) = item? {
                if wanted.contains(r.id.as_str()) {
                    texts.entry(r.id).or_insert(r.text);
                }
            }
        }
        Ok(())
    })?;
    let comparer = Comparer::new(&config);
    let rules = Settings::of(&config).rules;
    let text_of = |id: &str| texts.get(id).map(String::as_str);
    let pool = megashingle::engine::thread_pool(args.run.threads().0, "compare")?;
    let pairs = timings.time("comparing", || {
        pool.install(|| {
            rows.par_iter()
                .map(|r| pair_view(&comparer, rules, r, (text_of(r.doc_a), text_of(r.doc_b))))
                .collect()
        })
    });
    let summary = reuse.summary();
    let view = ReuseView {
        inputs: args
            .inputs
            .iter()
            .map(|p| p.display().to_string())
            .collect(),
        documents: reuse.documents(),
        found: summary.pairs,
        pairs,
    };
    let page = timings.time("rendering", || render_reuse(&view));
    timings.time("writing", || {
        write_file(&args.report.output, |file| file.write_all(page.as_bytes()))
    })?;
    if args.run.timings {
        eprintln!("megashingle: timings: {}", timings.line());
    }
    if !args.run.quiet {
        eprintln!(
            "megashingle: reuse report of {} pairs ({} shown) among {} documents written to {} ({:.1} MB); {} records skipped; {:.2} s",
            summary.pairs,
            view.pairs.len(),
            view.documents,
            args.report.output.display(),
            page.len() as f64 / 1e6,
            summary.skipped,
            started.elapsed().as_secs_f64()
        );
    }
    Ok(if summary.skipped > 0 {
        Outcome::Skipped
    } else {
        Outcome::Clean
    })
}

/// What every report checks before it reads anything: that its inputs can be read a second
/// time (for the texts it shows) and that its page would overwrite none of them, nor a table
/// it reads (`tables`), the configuration or the index `db`. Gives the settings every stage
/// derives, worked out once, and how the inputs are read: as `cluster` reads them, with the
/// columns the page shows.
fn prepare(
    inputs: &[PathBuf],
    tables: &[PathBuf],
    input: &InputArgs,
    report: &ReportOutputArgs,
    config: &ConfigArgs,
    db: Option<&Path>,
) -> Result<(Plan, ReadOptions)> {
    rereadable(inputs)?;
    let read: Vec<PathBuf> = inputs.iter().chain(tables).cloned().collect();
    check_outputs(&[("-o", Some(&report.output))], &read, Some(config), db)?;
    let plan = Plan::try_from(&config.resolve()?)?;
    let mut options = input.read_options(report.time_column.clone());
    options.columns = report.columns.clone();
    Ok((plan, options))
}

/// The inputs read and sketched without clustering, leaving out `known` boilerplate (an
/// index's).
fn collect(
    inputs: &[PathBuf],
    options: &ReadOptions,
    config: &Plan,
    run: &RunArgs,
    known: Option<megashingle::corpus::boilerplate::Boilerplate>,
) -> Result<Collection> {
    let mut collect = collect_options(run, options.strict);
    if let Some(known) = known {
        collect.known = std::sync::Arc::new(known);
    }
    let mut collector = Collector::new(config, collect)?;
    collector.read(inputs, options)?;
    Ok(collector.finish()?)
}

/// How a report command runs: its inputs, read options, output and run flags.
struct Run<'a> {
    inputs: &'a [PathBuf],
    options: &'a ReadOptions,
    report: &'a ReportOutputArgs,
    run: &'a RunArgs,
    started: Instant,
    timings: Timings,
}

/// Reads the texts back, makes the report's model and writes its page.
fn write_report(
    how: Run,
    mut collection: Collection,
    stories: &Stories,
    config: &Plan,
) -> Result<Outcome> {
    let Run {
        inputs,
        options,
        report,
        run,
        started,
        mut timings,
    } = how;
    bars::clear();
    anyhow::ensure!(
        !collection.ids.is_empty(),
        "no documents in {}: no report written",
        input_names(inputs)
    );
    // Every comparison from here on is made from the texts.
    collection.sets = None;
    let texts = timings.time("reading texts", || {
        read_texts(inputs, options, &collection, &stories.clusters, config)
    })?;
    let setting = Setting {
        inputs,
        config,
        time_column: report.time_column.clone(),
        columns: report.columns.clone(),
        text_bytes: text_bytes(&stories.clusters, report.text_bytes),
    };
    // The thread count as -j gives it (any warning about it was printed when reading).
    let pool = megashingle::engine::thread_pool(run.threads().0, "compare")?;
    let model = timings.time("comparing", || {
        pool.install(|| model(&collection, stories, texts, &setting))
    });
    let page = timings.time("rendering", || megashingle::report::render(&model));
    timings.time("writing", || {
        write_file(&report.output, |file| file.write_all(page.as_bytes()))
    })?;
    if run.timings {
        eprintln!("megashingle: timings: {}", timings.line());
    }
    let skipped = collection.read.skipped + collection.duplicates;
    if !run.quiet {
        eprintln!(
            "megashingle: report of {} documents in {} stories ({} of 2 or more) written to {} ({:.1} MB); {} records skipped{}; {:.2} s",
            model.summary.documents,
            model.summary.stories,
            model.summary.multi_stories,
            report.output.display(),
            page.len() as f64 / 1e6,
            skipped,
            collection.read.notes(),
            started.elapsed().as_secs_f64()
        );
    }
    Ok(if skipped > 0 {
        Outcome::Skipped
    } else {
        Outcome::Clean
    })
}
