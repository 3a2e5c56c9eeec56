//! `megashingle dedup`: the input records with each story's duplicates left out. The inputs are
//! clustered through the library's `Clusterer`, deduplicated by its `deduplicate`, then read a
//! second time and copied record by record, every column or field as it was, skipping the
//! removed records (a record is known by its input and the line it starts on, or its row for
//! Parquet). CSV inputs can be written as Parquet.

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use megashingle::io::csv::records::{CsvRecord, CsvRecords};
use megashingle::io::format::{open_input, Format, ReadOptions};
use megashingle::io::write::{stage, write_csv, OutputFormat};
use megashingle::{Clusterer, Keep};

use crate::cli::DedupArgs;
use crate::cmd::files::{
    check_outputs, input_names, output_file, put_in_place, refuse_parquet_to_terminal,
};
use crate::cmd::run_options;
use crate::exit::Outcome;

/// Runs the command.
pub fn run(args: DedupArgs) -> Result<Outcome> {
    let started = Instant::now();
    let output = output_file(&args.output);
    check_outputs(
        &[("-o", output), ("--dropped", args.dropped.as_deref())],
        &args.inputs,
        Some(&args.config),
        None,
    )?;
    let mut config = args.config.resolve()?;
    if let Some(keep) = args.keep {
        config.dedup.keep = keep;
    }
    if let Some(threshold) = args.threshold {
        config.dedup.threshold = threshold;
    }
    config.validate()?;
    if config.dedup.keep == Keep::Earliest && args.time_column.is_none() {
        bail!("--keep earliest needs the column or field of each record's time: give --time-column NAME");
    }
    let options = args.input.read_options(args.time_column.clone());
    let (format, delimiters) = record_format(&args.inputs, &options)?;
    let parquet = writes_parquet(format, args.format)?;
    refuse_parquet_to_terminal(parquet, output)?;
    let mut clusterer = Clusterer::with_options(&config, run_options(&args.run, options.strict))?;
    clusterer.read(&args.inputs, &options)?;
    let clusters = clusterer.finish()?;
    let summary = clusters.summary();
    if clusters.is_empty() {
        bail!(
            "no documents in {}: nothing to deduplicate, nothing written",
            input_names(&args.inputs)
        );
    }
    let dedup = clusters.deduplicate(&config.dedup)?;
    let (collection, _) = clusters.parts();
    // The lines where each input's kept records start, sorted.
    let mut kept_lines: Vec<Vec<u64>> = vec![Vec::new(); args.inputs.len()];
    for (id, origin) in collection.ids.iter().zip(&collection.origins) {
        if !dedup.is_duplicate(id) {
            kept_lines[origin.order.0 as usize].push(origin.line);
        }
    }
    kept_lines
        .iter_mut()
        .for_each(|lines| lines.sort_unstable());
    let copy = |out: &mut dyn Write| copy_kept(&args.inputs, format, &delimiters, &kept_lines, out);
    // Both outputs are written in full before either is put in place.
    let mut staged = Vec::new();
    match output {
        Some(path) if parquet => staged.push(stage(path, |file| {
            copy_parquet(&args.inputs, format, &kept_lines, file)
        })?),
        None if parquet => copy_parquet(&args.inputs, format, &kept_lines, std::io::stdout())
            .context("cannot write to stdout")?,
        Some(path) => staged.push(stage(path, |file| copy(file))?),
        None => copy(&mut std::io::stdout().lock()).context("cannot write to stdout")?,
    }
    if let Some(path) = &args.dropped {
        let rows = dedup.duplicates().iter().map(|d| {
            vec![
                d.doc_id.to_owned(),
                d.duplicate_of.to_owned(),
                format!("{:.4}", d.similarity()),
                format!("{:.4}", d.jaccard),
                format!("{:.4}", d.containment),
            ]
        });
        let header = [
            "doc_id",
            "duplicate_of",
            "similarity",
            "jaccard",
            "containment",
        ];
        staged.push(stage(path, |file| write_csv(&header, rows, file))?);
    }
    put_in_place(staged)?;
    crate::bars::clear();
    if !args.run.quiet {
        let removed = dedup.duplicates().len();
        eprintln!(
            "megashingle: {} records in, {} kept, {removed} removed as duplicates ({} stories of 2 or more; keep {}, threshold {}); {} records skipped{}; {:.2} s",
            summary.documents,
            summary.documents - removed,
            summary.multi_clusters,
            config.dedup.keep,
            config.dedup.threshold,
            summary.skipped,
            megashingle::io::read::ReadSummary {
                malformed: summary.malformed,
                not_text: summary.not_text,
                ..Default::default()
            }
            .notes(),
            started.elapsed().as_secs_f64()
        );
    }
    Ok(if summary.skipped > 0 {
        Outcome::Skipped
    } else {
        Outcome::Clean
    })
}

/// The one record format of all inputs, as the reader reads them ([`Format::detect`], and for
/// a file whose name tells nothing, its first bytes), and the delimiter of each (for CSV);
/// folders, documents and stdin are refused, and CSV inputs must share one header.
fn record_format(inputs: &[PathBuf], options: &ReadOptions) -> Result<(Format, Vec<u8>)> {
    let mut found: Option<(Format, &Path)> = None;
    let mut delimiters = Vec::with_capacity(inputs.len());
    for input in inputs {
        let name = input.display();
        if input.as_os_str() == "-" {
            bail!("dedup reads each input twice, so it cannot read stdin: save it to a file and give that");
        }
        if input.is_dir() {
            bail!("{name}: a folder of documents; dedup writes records, so give CSV, JSONL or Parquet files (use `cluster` for folders)");
        }
        let (file, _) = open_input(input)?;
        let detection = Format::detect(input, options)?;
        delimiters.push(detection.delimiter);
        let format = match detection.format {
            Some(Format::Mbox | Format::Warc) => {
                bail!("{name}: an archive of documents; dedup writes records, so give CSV, JSONL or Parquet files (use `cluster` for mail archives and WARC files)")
            }
            Some(format) if format.is_document() => {
                bail!("{name}: a single document; dedup writes records, so give CSV, JSONL or Parquet files")
            }
            Some(format) => format,
            None => {
                let mut file = BufReader::with_capacity(1 << 16, file);
                let head = file
                    .fill_buf()
                    .with_context(|| format!("{name}: read error"))?;
                Format::of_head(head)
            }
        };
        match found {
            None => found = Some((format, input)),
            Some((first, first_input)) if first != format => bail!(
                "{name} is {} but {} is {}: dedup writes one format, so give inputs of one format",
                format.name(),
                first_input.display(),
                first.name()
            ),
            Some(_) => {}
        }
    }
    let (format, _) = found.context("no inputs")?;
    if format == Format::Parquet {
        same_parquet_schema(inputs)?;
    }
    if format == Format::Csv {
        let mut first: Option<(CsvRecord, &Path)> = None;
        for (input, &delimiter) in inputs.iter().zip(&delimiters) {
            let header = csv_header(input, delimiter)?;
            match &first {
                None => first = Some((header, input)),
                Some((h, first_input)) if !h.iter().eq(header.iter()) => bail!(
                    "{}: its header differs from that of {}: dedup writes one CSV table, so give inputs with one header",
                    input.display(),
                    first_input.display()
                ),
                Some(_) => {}
            }
        }
    }
    Ok((format, delimiters))
}

/// True when the output is Parquet: the inputs are, or `--format parquet` asks for CSV
/// inputs to be written as Parquet. Any other change of format is refused.
fn writes_parquet(input: Format, asked: Option<OutputFormat>) -> Result<bool> {
    match (input, asked) {
        (Format::Parquet, None | Some(OutputFormat::Parquet)) => Ok(true),
        (Format::Csv, Some(OutputFormat::Parquet)) => Ok(true),
        (Format::Csv, None | Some(OutputFormat::Csv))
        | (Format::Jsonl, None | Some(OutputFormat::Jsonl)) => Ok(false),
        (input, Some(asked)) => bail!(
            "dedup writes {} inputs as {}{}, not as {}: leave out --format, or convert the output afterwards",
            input.name(),
            input.name(),
            if input == Format::Csv { " or Parquet" } else { "" },
            match asked {
                OutputFormat::Csv => "CSV",
                OutputFormat::Jsonl => "JSONL",
                OutputFormat::Parquet => "Parquet",
            }
        ),
        (input, None) => bail!(
            "dedup writes records, not {} documents: give CSV, JSONL or Parquet files",
            input.name()
        ),
    }
}

/// Fails unless every Parquet input has the columns (names and types) of the first.
#[cfg(feature = "parquet")]
fn same_parquet_schema(inputs: &[PathBuf]) -> Result<()> {
    let columns = |input: &Path| -> Result<Vec<(String, String)>> {
        let schema = megashingle::io::parquet::schema_of(input)?;
        Ok(schema
            .fields()
            .iter()
            .map(|f| (f.name().clone(), f.data_type().to_string()))
            .collect())
    };
    let first = columns(&inputs[0])?;
    for input in &inputs[1..] {
        if columns(input)? != first {
            bail!(
                "{}: its columns differ from those of {}: dedup writes one Parquet table, so give inputs with the same columns of the same types",
                input.display(),
                inputs[0].display()
            );
        }
    }
    Ok(())
}

#[cfg(not(feature = "parquet"))]
fn same_parquet_schema(_inputs: &[PathBuf]) -> Result<()> {
    bail!(megashingle::io::format::NO_PARQUET)
}

/// Copies the records of `inputs` that start on a line (CSV) or are a row (Parquet) of
/// `kept_lines` (by input) to `out` as one Parquet file.
#[cfg(feature = "parquet")]
fn copy_parquet(
    inputs: &[PathBuf],
    format: Format,
    kept_lines: &[Vec<u64>],
    out: impl Write + Send,
) -> std::io::Result<()> {
    use megashingle::io::parquet::{copy_rows, StringTable};
    let out = BufWriter::with_capacity(1 << 16, out);
    if format == Format::Parquet {
        return copy_rows(inputs, kept_lines, out);
    }
    let mut table: Option<StringTable<_>> = None;
    let mut out = Some(out);
    let mut record = CsvRecord::default();
    for (i, input) in inputs.iter().enumerate() {
        let (file, _) = open_input(input).map_err(std::io::Error::other)?;
        let mut records = CsvRecords::new(BufReader::with_capacity(1 << 16, file));
        if records.read(&mut record)? && table.is_none() {
            let header: Vec<String> = record
                .iter()
                .map(|h| String::from_utf8_lossy(h).trim().to_owned())
                .collect();
            let out = out.take().expect("one table");
            table = Some(StringTable::new(out, &header)?);
        }
        let Some(table) = table.as_mut() else {
            continue;
        };
        while records.read(&mut record)? {
            if kept_lines[i].binary_search(&record.line()).is_ok() {
                table.push(record.iter())?;
            }
        }
    }
    match table {
        Some(table) => table.finish()?.flush(),
        None => Ok(()),
    }
}

#[cfg(not(feature = "parquet"))]
fn copy_parquet(
    _inputs: &[PathBuf],
    _format: Format,
    _kept_lines: &[Vec<u64>],
    _out: impl Write + Send,
) -> std::io::Result<()> {
    Err(std::io::Error::other(megashingle::io::format::NO_PARQUET))
}

/// The header row of a CSV file (empty for an empty file).
fn csv_header(input: &Path, delimiter: u8) -> Result<CsvRecord> {
    let (file, _) = open_input(input)?;
    let mut records = CsvRecords::with_delimiter(BufReader::new(file), delimiter);
    let mut header = CsvRecord::default();
    records
        .read(&mut header)
        .with_context(|| format!("{}: read error", input.display()))?;
    Ok(header)
}

/// Copies the records of `inputs` that start on a line of `kept_lines` (by input) to `out`:
/// CSV with the first input's header and delimiter (each input read with its own of
/// `delimiters`), or JSONL lines as they are.
fn copy_kept(
    inputs: &[PathBuf],
    format: Format,
    delimiters: &[u8],
    kept_lines: &[Vec<u64>],
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let mut out = BufWriter::with_capacity(1 << 16, out);
    let open = |input: &Path| {
        open_input(input)
            .map(|(f, _)| BufReader::with_capacity(1 << 16, f))
            .map_err(std::io::Error::other)
    };
    match format {
        Format::Csv => {
            let mut writer = csv::WriterBuilder::new()
                .delimiter(delimiters[0])
                .from_writer(&mut out);
            let mut record = CsvRecord::default();
            for (i, input) in inputs.iter().enumerate() {
                let mut records = CsvRecords::with_delimiter(open(input)?, delimiters[i]);
                if records.read(&mut record)? && i == 0 {
                    writer.write_record(record.iter())?;
                }
                while records.read(&mut record)? {
                    if kept_lines[i].binary_search(&record.line()).is_ok() {
                        writer.write_record(record.iter())?;
                    }
                }
            }
            writer.flush()?;
        }
        Format::Jsonl => {
            let mut line = Vec::new();
            for (i, input) in inputs.iter().enumerate() {
                let mut reader = open(input)?;
                let mut number = 0u64;
                loop {
                    line.clear();
                    if reader.read_until(b'\n', &mut line)? == 0 {
                        break;
                    }
                    number += 1;
                    if number == 1 && line.starts_with(b"\xEF\xBB\xBF") {
                        line.drain(..3);
                    }
                    if kept_lines[i].binary_search(&number).is_ok() {
                        out.write_all(&line)?;
                        if !line.ends_with(b"\n") {
                            out.write_all(b"\n")?;
                        }
                    }
                }
            }
        }
        other => {
            let what = format!("{} records are not written as CSV or JSONL", other.name());
            return Err(std::io::Error::other(what));
        }
    }
    out.flush()
}
