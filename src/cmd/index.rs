//! `megashingle index`: the story index on disk. `add` clusters new documents into the
//! indexed stories (after checking the configuration's sketch settings match the index's) and
//! writes their assignments; `query` lists the indexed documents similar to one text, or
//! those that share a passage with it (`--reuse`), or writes those of many texts (`-o`);
//! `export`, `merges` and `stats` read the index; `remove` takes documents out by time or id.
//! `index report` is in `report`.

use std::time::Instant;

use anyhow::{Context, Result};
use megashingle::config::Config;
use megashingle::engine::Timings;
use megashingle::index::{
    lock_path, AddReport, Index, IndexAddition, Open, ReuseAnswer, Selection,
};
use megashingle::io::write::{stage, write_csv, write_pairs, OutputFormat, Staged};

use crate::cli::{IndexAddArgs, IndexCommand, IndexOutputArgs, IndexQueryArgs, IndexRemoveArgs};
use crate::cmd::files::{
    check_outputs, emit_csv, input_names, output_file, print, read_document, read_text,
    refuse_parquet_to_terminal, write_file,
};
use crate::cmd::{report, run_options};
use crate::exit::Outcome;
use crate::{bars, interrupt, panics};

/// Runs one index command.
pub fn run(command: IndexCommand) -> Result<Outcome> {
    match command {
        IndexCommand::Add(args) => run_add(args),
        IndexCommand::Query(args) => run_query(args),
        IndexCommand::Export(args) => run_export(args),
        IndexCommand::Merges(args) => run_merges(args),
        IndexCommand::Stats(args) => run_stats(&args.db),
        IndexCommand::Remove(args) => run_remove(args),
        IndexCommand::Report(args) => report::run_index(args),
    }
}

/// `index export`: one row per indexed document with its story.
fn run_export(args: IndexOutputArgs) -> Result<Outcome> {
    let output = output_file(&args.output);
    check_outputs(&[("-o", output)], &[], None, Some(&args.db.db))?;
    let index = Index::open_by(&args.db.db, Open::Existing, "index export")?;
    let rows = index
        .export()?
        .into_iter()
        .map(|r| vec![r.doc_id, r.story_id, r.story_size.to_string(), r.added_at]);
    emit_csv(
        output,
        &["doc_id", "story_id", "story_size", "added_at"],
        rows,
    )?;
    Ok(Outcome::Clean)
}

/// `index merges`: one row per merge of two indexed stories.
fn run_merges(args: IndexOutputArgs) -> Result<Outcome> {
    let output = output_file(&args.output);
    check_outputs(&[("-o", output)], &[], None, Some(&args.db.db))?;
    let index = Index::open_by(&args.db.db, Open::Existing, "index merges")?;
    let rows = index.merges()?.into_iter().map(|m| {
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

/// `index stats`: the counts, the size on disk and the sketch settings of the index.
fn run_stats(db: &std::path::Path) -> Result<Outcome> {
    let index = Index::open_by(db, Open::Existing, "index stats")?;
    let s = index.stats()?;
    let per_document = if s.documents > 0 {
        format!("{:.0}", s.file_bytes as f64 / s.documents as f64)
    } else {
        "-".into()
    };
    let mut out = format!(
        "index: {}\ndocuments: {}\nstories: {} ({} of 2 or more documents; the largest has {})\nmerges: {}\npostings: {}\nboilerplate shingles: {}\non disk: {} bytes ({per_document} bytes per document)\ncreated: {}\nlast add: {}\n",
        index.path().display(),
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
    if s.keeps_passages {
        let per_document = if s.passage_documents > 0 {
            format!("{:.0}", s.passage_bytes as f64 / s.passage_documents as f64)
        } else {
            "-".into()
        };
        out.push_str(&format!(
            "passages: {} documents, {} fingerprints, {} bytes ({per_document} bytes per document)\n",
            s.passage_documents, s.passage_fingerprints, s.passage_bytes
        ));
    } else {
        out.push_str("passages: not kept (the index was made without `index add --passages`)\n");
    }
    out.push_str("sketch settings:\n");
    for setting in s.sketch_settings {
        out.push_str(&format!("  {setting}\n"));
    }
    print(&out)?;
    Ok(Outcome::Clean)
}

/// `index add`: a new index file made by a first add that fails is taken away again.
fn run_add(args: IndexAddArgs) -> Result<Outcome> {
    let started = Instant::now();
    check_outputs(
        &[("-o", output_file(&args.output))],
        &args.inputs,
        Some(&args.config),
        Some(&args.db.db),
    )?;
    if !args.db.db.is_file() {
        // The index is made by this add: where it is to go is checked as an output is.
        megashingle::io::write::check_creatable(&args.db.db)?;
    }
    let config = args.config.resolve()?;
    let made = !args.db.db.exists();
    let lock = lock_path(&args.db.db);
    let lock_made = !lock.exists();
    let mut index = Index::open_by(&args.db.db, Open::CreateIfMissing, "index add")?;
    if args.passages {
        index.keep_passages()?;
    }
    let db = args.db.db.clone();
    // A signal stops the reading, or the add gives up before its commit, or the add ends
    // complete.
    let mut committed = false;
    let outcome = sketch_inputs(&args, &mut index, &config, started)
        .and_then(|sketched| add_to_index(args, sketched, &mut committed));
    if outcome.is_err() && made && !committed {
        // A failed first add leaves no empty index behind, and no lock file beside it
        // (the index, still open, only closes the files that are gone).
        let _ = std::fs::remove_file(&db);
        if lock_made {
            let _ = std::fs::remove_file(&lock);
        }
    }
    outcome
}

/// The inputs of an add, read and sketched, with what the summary line tells of them.
struct Sketched<'i> {
    addition: IndexAddition<'i>,
    skipped: u64,
    read_notes: String,
    timings: Timings,
    started: Instant,
}

/// Reads and sketches the inputs of an add, leaving out the boilerplate the index knows.
fn sketch_inputs<'i>(
    args: &IndexAddArgs,
    index: &'i mut Index,
    config: &Config,
    started: Instant,
) -> Result<Sketched<'i>> {
    let options = args.input.read_options(args.time_column.clone());
    let run = run_options(&args.run, options.strict);
    let mut addition = index.begin_add(config, run, args.upsert)?;
    addition.read(&args.inputs, &options)?;
    let sketched = addition.sketched()?;
    bars::clear();
    if sketched.documents == 0 {
        anyhow::bail!(
            "no documents in {}: nothing added to the index",
            input_names(&args.inputs)
        );
    }
    Ok(Sketched {
        addition,
        skipped: sketched.skipped,
        read_notes: sketched.read_notes,
        timings: sketched.timings,
        started,
    })
}

/// The header of the assignments table.
const ASSIGNMENTS: [&str; 5] = ["doc_id", "story_id", "new_story", "similarity", "status"];

/// The rows of the assignments table.
fn assignment_rows(report: &AddReport) -> impl Iterator<Item = Vec<String>> + '_ {
    report.assignments.iter().map(|a| {
        vec![
            a.doc_id.clone(),
            a.story_id.clone(),
            a.new_story.to_string(),
            a.similarity.map(|s| format!("{s:.4}")).unwrap_or_default(),
            a.status.to_string(),
        ]
    })
}

/// Adds the sketched inputs to the open index and writes their assignments: the add is
/// prepared, a file is written in full and the add committed, then the file put in place, so
/// that the index and the file change together (stdout gets them after the commit); then
/// prints the summary line. `committed` says whether the add reached the index.
fn add_to_index(args: IndexAddArgs, sketched: Sketched, committed: &mut bool) -> Result<Outcome> {
    let Sketched {
        addition,
        skipped,
        read_notes,
        mut timings,
        started,
    } = sketched;
    panics::panic_for_tests("index add");
    let prepared = addition.prepare()?;
    let output = output_file(&args.output);
    let staging = Instant::now();
    let staged: Option<Staged> = match output {
        Some(path) => {
            let rows = assignment_rows(prepared.report());
            Some(stage(path, |file| write_csv(&ASSIGNMENTS, rows, file))?)
        }
        None => None,
    };
    // Interrupted until now, the add is given up: nothing is committed.
    interrupt::check()?;
    let staging = staging.elapsed();
    let report = prepared.commit()?;
    *committed = true;
    let written = Instant::now();
    match staged {
        Some(staged) => staged.persist()?,
        None => emit_csv(None, &ASSIGNMENTS, assignment_rows(&report))?,
    }
    if let Some(warning) = &report.not_compacted {
        eprintln!("megashingle: warning: {warning}");
    }
    let commit_at = report
        .timings
        .0
        .iter()
        .position(|&(step, _)| step == "index: commit")
        .unwrap_or(report.timings.0.len());
    let mut add_timings = report.timings.0.clone();
    add_timings.insert(commit_at, ("writing the outputs", staging));
    timings.0.extend(add_timings);
    timings.0.push(("writing", written.elapsed()));
    if args.run.timings {
        eprintln!("megashingle: timings: {}", timings.line());
        eprintln!(
            "megashingle: timings: {} indexed documents examined (found in the postings of the added documents' keys), {} loaded (the strongest link of each added document into each story, and those stories' representatives)",
            report.examined, report.loaded
        );
    }
    if !args.run.quiet {
        eprintln!(
            "megashingle: added {} documents ({} joined indexed stories, {} new stories, {} merges, {} replaced, {} records skipped){read_notes}{}; the index holds {} documents; {:.2} s",
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

/// `index query`: the indexed near-duplicates of one text, or with `--reuse` the indexed
/// documents that share a passage with it (as CSV, or the passages themselves), or with `-o`
/// the reuse rows of many texts.
fn run_query(args: IndexQueryArgs) -> Result<Outcome> {
    let config = super::reuse_config(&args.config, args.min_shared_words, args.min_containment)?;
    if args.output.is_some() {
        return query_many(&args, &config);
    }
    let (text, name) = match (&args.text, args.files.as_slice()) {
        (Some(text), _) => (text.clone(), "the text".to_owned()),
        (None, [file]) => (read_document(file)?.text, file.display().to_string()),
        (None, []) => anyhow::bail!("give a FILE or --text TEXT"),
        (None, _) => anyhow::bail!(
            "index query reads one text; to query many, write their rows to a file with --reuse -o FILE"
        ),
    };
    let words = megashingle::canonicalize::Canonicalizer::new(&config.canonicalize).words(&text);
    let k = config.shingle.size_of(words.iter().map(String::as_str));
    if words.len() < k {
        let words = words.len();
        return Err(megashingle::compare::TooShort { name, words, k }.into());
    }
    let index = Index::open_by(&args.db.db, Open::Existing, "index query")?;
    if args.reuse {
        let answer = index.query_reuse(&config, &text)?;
        if args.passages {
            print(&passages_report(&answer, &words))?;
        } else {
            emit_csv(None, &REUSE_COLUMNS, reuse_rows(&answer))?;
        }
        if !args.run.quiet {
            eprintln!("megashingle: {}", uniqueness_line(&answer));
        }
        return Ok(Outcome::Clean);
    }
    let matches = index.query(&config, &text)?;
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
    )?;
    Ok(Outcome::Clean)
}

/// The columns of `index query --reuse`.
const REUSE_COLUMNS: [&str; 8] = [
    "doc_id",
    "story_id",
    "a_in_b",
    "b_in_a",
    "shared_words",
    "passages",
    "longest",
    "jaccard",
];

/// The rows of `index query --reuse`: shares to four decimals.
fn reuse_rows(answer: &ReuseAnswer) -> impl Iterator<Item = Vec<String>> + '_ {
    answer.matches.iter().map(|m| {
        vec![
            m.doc_id.clone(),
            m.story_id.clone(),
            format!("{:.4}", m.a_in_b),
            format!("{:.4}", m.b_in_a),
            m.shared_words.to_string(),
            m.passages.to_string(),
            m.longest.to_string(),
            format!("{:.4}", m.jaccard),
        ]
    })
}

/// The line that says how much of a text the index holds.
fn uniqueness_line(answer: &ReuseAnswer) -> String {
    let documents = answer.matches.len();
    format!(
        "uniqueness {:.4}: {} of the text's {} words are in passages shared with {documents} indexed document{}",
        answer.uniqueness(),
        answer.found_words,
        answer.words,
        if documents == 1 { "" } else { "s" }
    )
}

/// `index query --reuse --passages`: each document with its figures, then the passages the
/// text shares with it, as the text's canonical words `words`.
fn passages_report(answer: &ReuseAnswer, words: &[String]) -> String {
    let mut out = String::new();
    for m in &answer.matches {
        out.push_str(&format!(
            "{} (story {}): {} shared words in {} passage{}, the longest {} words; a_in_b {:.4}, b_in_a {:.4}, jaccard {:.4}\n",
            m.doc_id,
            m.story_id,
            m.shared_words,
            m.passages,
            if m.passages == 1 { "" } else { "s" },
            m.longest,
            m.a_in_b,
            m.b_in_a,
            m.jaccard
        ));
        for range in &m.text_passages {
            let end = range.end.min(words.len());
            let start = range.start.min(end);
            out.push_str(&format!("  - {}\n", words[start..end].join(" ")));
        }
    }
    if answer.matches.is_empty() {
        out.push_str("no indexed document shares a passage with the text\n");
    }
    out
}

/// `index query --reuse -o FILE`: every text of the inputs queried, one row per (text,
/// indexed document) pair, the texts in the order read; the index is only read.
fn query_many(args: &IndexQueryArgs, config: &Config) -> Result<Outcome> {
    let started = Instant::now();
    let output = output_file(&args.output);
    check_outputs(
        &[("-o", output)],
        &args.files,
        Some(&args.config),
        Some(&args.db.db),
    )?;
    refuse_parquet_to_terminal(args.format == OutputFormat::Parquet, output)?;
    let index = Index::open_by(&args.db.db, Open::Existing, "index query")?;
    let options = args.input.read_options(None);
    let run = run_options(&args.run, options.strict);
    let pool = megashingle::engine::thread_pool(run.threads, "query")?;
    let mut records = megashingle::io::read::read_inputs(&args.files, &options);
    let (mut texts, mut skipped) = (0u64, 0u64);
    let mut answers: Vec<(String, ReuseAnswer)> = Vec::new();
    let mut batch: Vec<(String, String)> = Vec::new();
    let mut flush = |batch: &mut Vec<(String, String)>| -> Result<()> {
        let texts: Vec<&str> = batch.iter().map(|(_, text)| text.as_str()).collect();
        let done = pool.install(|| index.query_reuse_many(config, &texts))?;
        answers.extend(batch.drain(..).map(|(id, _)| id).zip(done));
        interrupt::check()?;
        Ok(())
    };
    for item in records.by_ref() {
        match item? {
            megashingle::io::read::ReadItem::Record(record) => {
                texts += 1;
                batch.push((record.id, record.text));
                if batch.len() == QUERIED_AT_ONCE {
                    flush(&mut batch)?;
                }
            }
            megashingle::io::read::ReadItem::Skipped(report) => {
                skipped += 1;
                run.progress.warn(&report);
            }
        }
    }
    flush(&mut batch)?;
    bars::clear();
    if texts == 0 {
        anyhow::bail!(
            "no documents in {}: nothing queried, nothing written",
            input_names(&args.files)
        );
    }
    let pairs = answers.iter().flat_map(|(id, answer)| {
        answer.matches.iter().map(move |m| megashingle::ReusePair {
            doc_a: id,
            doc_b: &m.doc_id,
            a_in_b: m.a_in_b,
            b_in_a: m.b_in_a,
            shared_words: m.shared_words,
            passages: m.passages,
            longest: m.longest,
            jaccard: m.jaccard,
        })
    });
    let rows: usize = answers.iter().map(|(_, a)| a.matches.len()).sum();
    match output {
        Some(path) => write_file(path, |file| write_pairs(pairs, args.format, file))?,
        None => {
            write_pairs(pairs, args.format, std::io::stdout()).context("cannot write to stdout")?
        }
    }
    if !args.run.quiet {
        let reused = answers
            .iter()
            .filter(|(_, a)| !a.matches.is_empty())
            .count();
        eprintln!(
            "megashingle: {texts} texts queried, {reused} of them share passages with indexed documents: {rows} rows; {skipped} records skipped{}; {:.2} s",
            records.summary().notes(),
            started.elapsed().as_secs_f64()
        );
    }
    Ok(if skipped > 0 {
        Outcome::Skipped
    } else {
        Outcome::Clean
    })
}

/// Texts queried together: their fingerprints are looked up in one pass over the index's
/// postings (which reads about all of it from a few thousand texts on), and their candidates
/// read once each.
const QUERIED_AT_ONCE: usize = 32_768;

/// `index remove`: takes out the documents added before a time and those of an id list.
fn run_remove(args: IndexRemoveArgs) -> Result<Outcome> {
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
    let mut index = Index::open_by(&args.db.db, Open::Existing, "index remove")?;
    if let (Some(text), Some(seconds)) = (&args.before, before) {
        if !has_offset(text) {
            eprintln!(
                "megashingle: note: --before {text:?} has no UTC offset; taken as UTC: before {}",
                format_time(seconds)
            );
        }
    }
    let removal = index.remove(&Selection { before, ids })?;
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
