//! Parquet in and out: `cluster`, `dedup` and `index add` read Parquet files (named, in a
//! folder, or told by their marker) as they read CSV, with the same column flags; `cluster`
//! writes its table and `dedup` its records as Parquet; and every Parquet input that cannot be
//! read, or output that cannot be written, gets its one line. The Parquet files are written
//! here with the arrow writer and read back with the arrow reader.
#![cfg(feature = "parquet")]

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::Arc;

use arrow_array::builder::{Int64Builder, StringBuilder, TimestampSecondBuilder};
use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type};
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;

#[allow(dead_code)]
mod common;
use common::{
    megashingle, paragraphs_text as text, single_error_line, stderr_lines, stdout_of, temp,
};

/// One document of the corpus: id, text, source, a number, a time (seconds since 1970).
struct Doc {
    id: &'static str,
    text: String,
    source: Option<&'static str>,
    n: i64,
    time: i64,
}

/// Two stories of near-duplicates, one document alone and one too short to compare.
fn corpus() -> Vec<Doc> {
    let day = 86_400;
    let doc = |id, text, source, n, time| Doc {
        id,
        text,
        source,
        n,
        time,
    };
    vec![
        doc("a3", text(&[1, 2, 3, 4]), Some("Herald"), 3, 20 * day),
        doc(
            "a1",
            text(&[1, 2, 3, 4, 5]),
            Some("Post, \"daily\""),
            1,
            22 * day,
        ),
        doc("b1", text(&[7, 8, 9]), None, 10, 21 * day),
        doc(
            "a2",
            text(&[1, 2, 3, 4]) + " extra",
            Some("Times"),
            2,
            19 * day,
        ),
        doc(
            "b2",
            text(&[7, 8, 9]) + " more words",
            Some("Wire"),
            11,
            23 * day,
        ),
        doc("c", text(&[12, 13]), Some("Gazette"), 20, 24 * day),
        doc(
            "short",
            "three words only".into(),
            Some("Note"),
            30,
            25 * day,
        ),
    ]
}

fn csv_field(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

/// The corpus as CSV: id, text, source, n.
fn write_csv(dir: &Path, name: &str, docs: &[Doc]) -> PathBuf {
    let mut csv = String::from("id,text,source,n\n");
    for d in docs {
        csv.push_str(&format!(
            "{},{},{},{}\n",
            d.id,
            csv_field(&d.text),
            csv_field(d.source.unwrap_or("")),
            d.n
        ));
    }
    let path = dir.join(name);
    std::fs::write(&path, csv).unwrap();
    path
}

/// Writes `columns` as one Parquet file (in batches of `batch_rows` rows, so that reading
/// crosses batches).
fn write_batches(path: &Path, columns: Vec<(&str, ArrayRef)>, batch_rows: usize) {
    let schema = Arc::new(Schema::new(
        columns
            .iter()
            .map(|(name, array)| Field::new(*name, array.data_type().clone(), true))
            .collect::<Vec<_>>(),
    ));
    let batch = RecordBatch::try_new(
        Arc::clone(&schema),
        columns.into_iter().map(|c| c.1).collect(),
    )
    .unwrap();
    let file = std::fs::File::create(path).unwrap();
    // Snappy, as Spark and pandas write by default.
    let properties = parquet::file::properties::WriterProperties::builder()
        .set_compression(parquet::basic::Compression::SNAPPY)
        .build();
    let mut writer = ArrowWriter::try_new(file, schema, Some(properties)).unwrap();
    let mut offset = 0;
    while offset < batch.num_rows() {
        let rows = batch_rows.min(batch.num_rows() - offset);
        writer.write(&batch.slice(offset, rows)).unwrap();
        offset += rows;
    }
    writer.close().unwrap();
}

/// The corpus as Parquet: id, text, source (strings, source with a null), n (64-bit
/// integers), published (timestamps in seconds).
fn write_parquet(path: &Path, docs: &[Doc]) {
    let mut id = StringBuilder::new();
    let mut body = StringBuilder::new();
    let mut source = StringBuilder::new();
    let mut n = Int64Builder::new();
    let mut published = TimestampSecondBuilder::new();
    for d in docs {
        id.append_value(d.id);
        body.append_value(&d.text);
        source.append_option(d.source);
        n.append_value(d.n);
        published.append_value(d.time);
    }
    write_batches(
        path,
        vec![
            ("id", Arc::new(id.finish())),
            ("text", Arc::new(body.finish())),
            ("source", Arc::new(source.finish())),
            ("n", Arc::new(n.finish())),
            ("published", Arc::new(published.finish())),
        ],
        3,
    );
}

/// Every batch of a Parquet file.
fn read_back(path: &Path) -> (Arc<Schema>, Vec<RecordBatch>) {
    let file = std::fs::File::open(path).unwrap();
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
    let schema = Arc::clone(builder.schema());
    let batches = builder.build().unwrap().map(Result::unwrap).collect();
    (schema, batches)
}

/// The values of a string column of `batches`, null as `None`.
fn strings(batches: &[RecordBatch], column: &str) -> Vec<Option<String>> {
    let mut out = Vec::new();
    for batch in batches {
        let array = batch.column_by_name(column).unwrap().as_string::<i32>();
        out.extend((0..array.len()).map(|i| array.is_valid(i).then(|| array.value(i).to_owned())));
    }
    out
}

/// Runs megashingle in `dir` and asserts its exit code.
fn run(dir: &Path, args: &[&str], code: i32) -> Output {
    let output = megashingle(dir).args(args).output().unwrap();
    assert_eq!(output.status.code(), Some(code), "{args:?}: {output:?}");
    output
}

fn csv_rows(text: &str) -> Vec<Vec<String>> {
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    reader
        .records()
        .map(|r| r.unwrap().iter().map(str::to_owned).collect())
        .collect()
}

/// The cluster table of a Parquet file, each value as the CSV table writes it.
fn cluster_table_as_csv(path: &Path) -> Vec<Vec<String>> {
    let (schema, batches) = read_back(path);
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    assert_eq!(
        names,
        [
            "doc_id",
            "cluster_id",
            "cluster_size",
            "similarity",
            "status"
        ]
    );
    let mut rows = Vec::new();
    for batch in &batches {
        let sizes = batch.column(2).as_primitive::<Int64Type>();
        let similarities = batch.column(3).as_primitive::<Float64Type>();
        for i in 0..batch.num_rows() {
            let similarity = if similarities.is_null(i) {
                String::new()
            } else {
                format!("{:.4}", similarities.value(i))
            };
            rows.push(vec![
                batch.column(0).as_string::<i32>().value(i).to_owned(),
                batch.column(1).as_string::<i32>().value(i).to_owned(),
                sizes.value(i).to_string(),
                similarity,
                batch.column(4).as_string::<i32>().value(i).to_owned(),
            ]);
        }
    }
    rows
}

#[test]
fn cluster_reads_parquet_as_it_reads_csv_and_writes_the_same_table_as_parquet() {
    let dir = temp();
    let d = dir.path();
    write_csv(d, "in.csv", &corpus());
    write_parquet(&d.join("in.parquet"), &corpus());
    let from_csv = stdout_of(&run(d, &["cluster", "in.csv", "-q"], 0));
    let from_parquet = stdout_of(&run(d, &["cluster", "in.parquet", "-q"], 0));
    assert_eq!(from_parquet, from_csv);
    let rows = csv_rows(&from_csv);
    assert_eq!(rows.len(), 7);
    assert_eq!(rows[0][1], "a1", "the largest story first: {rows:?}");
    run(
        d,
        &[
            "cluster",
            "in.parquet",
            "--format",
            "parquet",
            "-o",
            "out.parquet",
            "-q",
        ],
        0,
    );
    assert_eq!(cluster_table_as_csv(&d.join("out.parquet")), rows);
    // The same bytes through a pipe.
    let piped = run(d, &["cluster", "in.csv", "--format", "parquet", "-q"], 0);
    assert!(piped.stdout.starts_with(b"PAR1"));
    std::fs::write(d.join("piped.parquet"), &piped.stdout).unwrap();
    assert_eq!(cluster_table_as_csv(&d.join("piped.parquet")), rows);
}

#[test]
fn a_folder_of_parquet_files_and_a_file_without_extension_are_read() {
    // A Spark-style output folder: part files, a _SUCCESS marker and hidden checksums.
    let dir = temp();
    let d = dir.path();
    let docs = corpus();
    let (first, second) = docs.split_at(4);
    std::fs::create_dir(d.join("corpus")).unwrap();
    write_parquet(&d.join("corpus/part-00000.snappy.parquet"), first);
    write_parquet(&d.join("corpus/part-00001.snappy.parquet"), second);
    std::fs::write(d.join("corpus/_SUCCESS"), "").unwrap();
    std::fs::write(d.join("corpus/.part-00000.snappy.parquet.crc"), "x").unwrap();
    write_parquet(&d.join("whole.parquet"), &docs);
    std::fs::copy(d.join("whole.parquet"), d.join("whole.data")).unwrap();
    let whole = stdout_of(&run(d, &["cluster", "whole.parquet", "-q"], 0));
    assert_eq!(stdout_of(&run(d, &["cluster", "corpus", "-q"], 0)), whole);
    assert_eq!(
        stdout_of(&run(d, &["cluster", "whole.data", "-q"], 0)),
        whole
    );
}

#[test]
fn dedup_of_parquet_keeps_every_column_with_its_type() {
    let dir = temp();
    let d = dir.path();
    write_csv(d, "in.csv", &corpus());
    write_parquet(&d.join("in.parquet"), &corpus());
    let csv_out = stdout_of(&run(d, &["dedup", "in.csv", "-q", "--keep", "first"], 0));
    let kept: Vec<String> = csv_rows(&csv_out)
        .into_iter()
        .map(|r| r[0].clone())
        .collect();
    assert_eq!(kept, ["a3", "b1", "c", "short"]);
    run(
        d,
        &[
            "dedup",
            "in.parquet",
            "-o",
            "out.parquet",
            "-q",
            "--keep",
            "first",
        ],
        0,
    );
    let (schema, batches) = read_back(&d.join("out.parquet"));
    let (input_schema, _) = read_back(&d.join("in.parquet"));
    assert_eq!(schema.fields(), input_schema.fields());
    let ids: Vec<String> = strings(&batches, "id").into_iter().flatten().collect();
    assert_eq!(ids, kept);
    let docs = corpus();
    let by_id = |id: &str| docs.iter().find(|d| d.id == id).unwrap();
    let sources = strings(&batches, "source");
    let texts = strings(&batches, "text");
    let mut numbers = Vec::new();
    let mut times = Vec::new();
    for batch in &batches {
        let n = batch
            .column_by_name("n")
            .unwrap()
            .as_primitive::<Int64Type>();
        numbers.extend(n.values().iter().copied());
        let published = batch.column_by_name("published").unwrap();
        assert_eq!(
            published.data_type(),
            &DataType::Timestamp(arrow_schema::TimeUnit::Second, None)
        );
        let published = published.as_primitive::<arrow_array::types::TimestampSecondType>();
        times.extend(published.values().iter().copied());
    }
    for (i, id) in ids.iter().enumerate() {
        let doc = by_id(id);
        assert_eq!(sources[i].as_deref(), doc.source, "{id}: a null stays null");
        assert_eq!(texts[i].as_deref(), Some(doc.text.as_str()));
        assert_eq!((numbers[i], times[i]), (doc.n, doc.time));
    }
    // --keep earliest reads the timestamp column.
    run(
        d,
        &[
            "dedup",
            "in.parquet",
            "-o",
            "earliest.parquet",
            "-q",
            "--keep",
            "earliest",
            "--time-column",
            "published",
        ],
        0,
    );
    let (_, batches) = read_back(&d.join("earliest.parquet"));
    let ids: Vec<String> = strings(&batches, "id").into_iter().flatten().collect();
    assert_eq!(ids, ["b1", "a2", "c", "short"]);
}

#[test]
fn dedup_writes_csv_inputs_as_parquet_when_asked() {
    let dir = temp();
    let d = dir.path();
    write_csv(d, "in.csv", &corpus());
    let csv_out = stdout_of(&run(d, &["dedup", "in.csv", "-q"], 0));
    run(
        d,
        &[
            "dedup",
            "in.csv",
            "--format",
            "parquet",
            "-o",
            "out.parquet",
            "-q",
        ],
        0,
    );
    let (schema, batches) = read_back(&d.join("out.parquet"));
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    assert_eq!(names, ["id", "text", "source", "n"]);
    let columns: Vec<Vec<Option<String>>> = names.iter().map(|n| strings(&batches, n)).collect();
    let rows: Vec<Vec<String>> = (0..columns[0].len())
        .map(|i| columns.iter().map(|c| c[i].clone().unwrap()).collect())
        .collect();
    assert_eq!(rows, csv_rows(&csv_out));
}

#[test]
fn index_add_reads_parquet_as_it_reads_csv() {
    let dir = temp();
    let d = dir.path();
    write_csv(d, "in.csv", &corpus());
    write_parquet(&d.join("in.parquet"), &corpus());
    let from_csv = stdout_of(&run(
        d,
        &["index", "add", "--db", "csv.db", "in.csv", "-q"],
        0,
    ));
    let from_parquet = stdout_of(&run(
        d,
        &[
            "index",
            "add",
            "--db",
            "parquet.db",
            "in.parquet",
            "--time-column",
            "published",
            "-q",
        ],
        0,
    ));
    assert_eq!(from_parquet, from_csv);
    assert_eq!(csv_rows(&from_csv).len(), 7);
    let export = stdout_of(&run(d, &["index", "export", "--db", "parquet.db"], 0));
    let a1 = csv_rows(&export)
        .into_iter()
        .find(|r| r[0] == "a1")
        .unwrap();
    assert_eq!(a1[1], "a1");
}

#[test]
fn the_time_of_a_timestamp_or_date_column_is_read() {
    use megashingle::io::read::{read_inputs, ReadItem, ReadOptions};
    let dir = temp();
    let path = dir.path().join("t.parquet");
    let mut date = arrow_array::builder::Date32Builder::new();
    date.append_value(20_000);
    date.append_null();
    let mut id = StringBuilder::new();
    id.append_value("x");
    id.append_value("y");
    let mut body = StringBuilder::new();
    body.append_value("one two three");
    body.append_value("four five six");
    write_batches(
        &path,
        vec![
            ("id", Arc::new(id.finish())),
            ("text", Arc::new(body.finish())),
            ("day", Arc::new(date.finish())),
        ],
        10,
    );
    let options = ReadOptions {
        time_column: Some("day".into()),
        columns: vec!["day".into()],
        ..ReadOptions::default()
    };
    let mut records = Vec::new();
    for item in read_inputs(&[path], &options) {
        match item.unwrap() {
            ReadItem::Record(r) => records.push(r),
            ReadItem::Skipped(w) => panic!("{w}"),
        }
    }
    let got: Vec<(Option<i64>, &str, u64)> = records
        .iter()
        .map(|r| (r.time, r.columns[0].as_str(), r.origin.line))
        .collect();
    assert_eq!(
        got,
        [
            (Some(20_000 * 86_400), "2024-10-04T00:00:00Z", 1),
            (None, "", 2)
        ]
    );
}

#[test]
fn every_kind_of_string_column_is_read() {
    // Large strings (polars), string views, a dictionary (pandas categoricals) and plain
    // binary (writers that do not mark strings): bad UTF-8 in a binary text is reported.
    use arrow_array::{BinaryArray, DictionaryArray, LargeStringArray, StringViewArray};
    let dir = temp();
    let d = dir.path();
    let docs = corpus();
    let ids = LargeStringArray::from_iter_values(docs.iter().map(|d| d.id));
    let texts = StringViewArray::from_iter_values(docs.iter().map(|d| d.text.as_str()));
    let sources: DictionaryArray<arrow_array::types::Int32Type> =
        docs.iter().map(|d| d.source).collect();
    let mut binary: Vec<Vec<u8>> = docs.iter().map(|d| d.text.as_bytes().to_vec()).collect();
    binary[2][5] = 0xFF;
    let binary = BinaryArray::from_iter_values(binary.iter());
    write_batches(
        &d.join("kinds.parquet"),
        vec![
            ("id", Arc::new(ids)),
            ("text", Arc::new(texts)),
            ("source", Arc::new(sources)),
            ("bytes", Arc::new(binary)),
        ],
        4,
    );
    write_csv(d, "in.csv", &docs);
    let from_csv = stdout_of(&run(d, &["cluster", "in.csv", "-q"], 0));
    let from_kinds = stdout_of(&run(d, &["cluster", "kinds.parquet", "-q"], 0));
    assert_eq!(from_kinds, from_csv);
    let output = run(
        d,
        &["cluster", "kinds.parquet", "--text-column", "bytes", "-q"],
        1,
    );
    assert_eq!(
        stderr_lines(&output),
        [
            "warning: kinds.parquet:3: invalid UTF-8 in `bytes` at byte 5; convert the file to \
          UTF-8; record skipped"
        ]
    );
    let options = megashingle::io::read::ReadOptions {
        columns: vec!["source".into()],
        ..Default::default()
    };
    let mut sources = Vec::new();
    for item in megashingle::io::read::read_inputs(&[d.join("kinds.parquet")], &options) {
        match item.unwrap() {
            megashingle::io::read::ReadItem::Record(r) => sources.push(r.columns[0].clone()),
            megashingle::io::read::ReadItem::Skipped(w) => panic!("{w}"),
        }
    }
    let expected: Vec<&str> = docs.iter().map(|d| d.source.unwrap_or("")).collect();
    assert_eq!(sources, expected);
}

#[test]
fn a_missing_column_lists_the_columns_found() {
    let dir = temp();
    let d = dir.path();
    write_parquet(&d.join("in.parquet"), &corpus());
    let output = run(d, &["cluster", "in.parquet", "--text-column", "body"], 2);
    assert_eq!(
        single_error_line(&output),
        "megashingle: error: in.parquet: no column `body` (the text column); columns found: \
         id, text, source, n, published; --text-column chooses the text column"
    );
}

#[test]
fn a_column_of_another_type_is_named_with_its_type() {
    let dir = temp();
    let d = dir.path();
    write_parquet(&d.join("in.parquet"), &corpus());
    let output = run(d, &["cluster", "in.parquet", "--text-column", "n"], 2);
    assert_eq!(
        single_error_line(&output),
        "megashingle: error: in.parquet: column `n` (the text column) holds Int64 values, not \
         strings; --text-column chooses another"
    );
    let output = run(d, &["cluster", "in.parquet", "--id-column", "published"], 2);
    assert!(
        single_error_line(&output).contains(
            "column `published` (the id column) holds Timestamp(s) values, not strings or \
             integers; --id-column chooses another"
        ),
        "{output:?}"
    );
}

#[test]
fn null_ids_and_texts_are_reported_with_their_row_and_skipped() {
    let dir = temp();
    let d = dir.path();
    let mut id = StringBuilder::new();
    let mut body = StringBuilder::new();
    for (i, t) in [
        (Some("ok"), Some(text(&[1, 2]))),
        (None, Some(text(&[3]))),
        (Some("no-text"), None),
        (Some(""), Some(text(&[4]))),
        (Some("ok2"), Some(text(&[5]))),
    ] {
        id.append_option(i);
        body.append_option(t);
    }
    write_batches(
        &d.join("in.parquet"),
        vec![
            ("id", Arc::new(id.finish())),
            ("text", Arc::new(body.finish())),
        ],
        2,
    );
    let output = run(d, &["cluster", "in.parquet", "-q"], 1);
    let rows = csv_rows(&stdout_of(&output));
    let ids: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(ids, ["ok", "ok2"]);
    let warnings: Vec<String> = stderr_lines(&output)
        .into_iter()
        .filter(|l| l.contains("record skipped"))
        .collect();
    assert_eq!(
        warnings,
        [
            "warning: in.parquet:2: null id in `id`; every record needs an id; record skipped",
            "warning: in.parquet:3: null text in `text`; record skipped",
            "warning: in.parquet:4: empty id in `id`; every record needs an id; record skipped",
        ],
        "{output:?}"
    );
    let output = run(d, &["cluster", "in.parquet", "--strict"], 2);
    assert_eq!(
        single_error_line(&output),
        "megashingle: error: in.parquet:2: null id in `id`; every record needs an id \
         (--strict makes this fatal)"
    );
}

#[test]
fn a_file_that_is_not_parquet_or_is_cut_short_is_named() {
    let dir = temp();
    let d = dir.path();
    std::fs::write(d.join("fake.parquet"), "id,text\n1,one two three four\n").unwrap();
    let output = run(d, &["cluster", "fake.parquet"], 2);
    assert_eq!(
        single_error_line(&output),
        "megashingle: error: fake.parquet: not a Parquet file (it does not start with the PAR1 \
         marker)"
    );
    write_parquet(&d.join("whole.parquet"), &corpus());
    let bytes = std::fs::read(d.join("whole.parquet")).unwrap();
    std::fs::write(d.join("cut.parquet"), &bytes[..bytes.len() / 2]).unwrap();
    let output = run(d, &["cluster", "cut.parquet"], 2);
    assert_eq!(
        single_error_line(&output),
        "megashingle: error: cut.parquet: not a whole Parquet file (it does not end with the \
         PAR1 marker: cut short?)"
    );
    // A damaged footer: the marker at both ends, garbage between.
    let mut damaged = b"PAR1".to_vec();
    damaged.extend_from_slice(&[0xAB; 64]);
    damaged.extend_from_slice(&[16, 0, 0, 0]);
    damaged.extend_from_slice(b"PAR1");
    std::fs::write(d.join("damaged.parquet"), &damaged).unwrap();
    let output = run(d, &["cluster", "damaged.parquet"], 2);
    let line = single_error_line(&output);
    assert!(
        line.starts_with("megashingle: error: damaged.parquet: damaged Parquet file: "),
        "{line}"
    );
}

#[test]
fn compressed_parquet_and_parquet_on_stdin_are_refused() {
    let dir = temp();
    let d = dir.path();
    write_parquet(&d.join("in.parquet"), &corpus());
    let bytes = std::fs::read(d.join("in.parquet")).unwrap();
    std::fs::write(
        d.join("in.parquet.zst"),
        zstd::encode_all(&bytes[..], 3).unwrap(),
    )
    .unwrap();
    let output = run(d, &["cluster", "in.parquet.zst"], 2);
    assert_eq!(
        single_error_line(&output),
        "megashingle: error: in.parquet.zst: a compressed Parquet file cannot be read; \
         decompress it (Parquet compresses its pages itself)"
    );
    let output = megashingle(d)
        .args(["cluster", "-", "--input-format", "parquet"])
        .write_stdin(bytes)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        single_error_line(&output),
        "megashingle: error: <stdin>: Parquet cannot be read from a stream: save it to a file \
         and give that"
    );
}

#[test]
fn dedup_refuses_parquet_inputs_of_two_schemas_and_formats_it_cannot_convert() {
    let dir = temp();
    let d = dir.path();
    write_parquet(&d.join("a.parquet"), &corpus());
    let mut id = StringBuilder::new();
    id.append_value("z");
    let mut body = StringBuilder::new();
    body.append_value(text(&[40]));
    write_batches(
        &d.join("b.parquet"),
        vec![
            ("id", Arc::new(id.finish())),
            ("text", Arc::new(body.finish())),
        ],
        10,
    );
    let output = run(
        d,
        &["dedup", "a.parquet", "b.parquet", "-o", "out.parquet"],
        2,
    );
    assert_eq!(
        single_error_line(&output),
        "megashingle: error: b.parquet: its columns differ from those of a.parquet: dedup \
         writes one Parquet table, so give inputs with the same columns of the same types"
    );
    std::fs::write(
        d.join("in.jsonl"),
        format!("{{\"id\": \"a\", \"text\": \"{}\"}}\n", text(&[1])),
    )
    .unwrap();
    let output = run(d, &["dedup", "in.jsonl", "--format", "parquet"], 2);
    assert_eq!(
        single_error_line(&output),
        "megashingle: error: dedup writes JSONL inputs as JSONL, not as Parquet: leave out \
         --format, or convert the output afterwards"
    );
    let output = run(d, &["dedup", "a.parquet", "--format", "csv"], 2);
    assert_eq!(
        single_error_line(&output),
        "megashingle: error: dedup writes Parquet inputs as Parquet, not as CSV: leave out \
         --format, or convert the output afterwards"
    );
    assert!(!d.join("out.parquet").exists());
}

#[test]
fn report_reads_parquet_and_shows_its_columns() {
    let dir = temp();
    let d = dir.path();
    write_parquet(&d.join("in.parquet"), &corpus());
    run(
        d,
        &[
            "report",
            "in.parquet",
            "-o",
            "report.html",
            "--column",
            "source",
            "--time-column",
            "published",
            "-q",
        ],
        0,
    );
    let html = std::fs::read_to_string(d.join("report.html")).unwrap();
    for shown in ["Herald", "Gazette", "p1w0 p1w1"] {
        assert!(html.contains(shown), "{shown} is not in the report");
    }
}
