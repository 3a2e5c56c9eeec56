//! Writers. The cluster table (and the index's tables) goes to stdout or to a file; a file is written to a temporary
//! file beside the target and renamed over it only when complete, so an interrupted run never
//! leaves a truncated table and a failed run never replaces a good one.

use std::io::{BufWriter, Write};
use std::path::Path;

use serde::Serialize;

/// The format of the output table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OutputFormat {
    /// CSV with a header row.
    Csv,
    /// One JSON object per line.
    Jsonl,
}

/// One row of the cluster table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row<'a> {
    /// The document.
    pub doc_id: &'a str,
    /// Its cluster: the smallest member id.
    pub cluster_id: &'a str,
    /// Documents in the cluster.
    pub cluster_size: usize,
    /// Estimated Jaccard to the cluster's representative, to four decimals.
    pub similarity: Option<f64>,
    /// `ok`, or why the document could not be compared.
    pub status: &'a str,
}

impl<'a> From<crate::Assignment<'a>> for Row<'a> {
    fn from(a: crate::Assignment<'a>) -> Row<'a> {
        Row {
            doc_id: a.doc_id,
            cluster_id: a.cluster_id,
            cluster_size: a.cluster_size,
            similarity: a.similarity,
            status: a.status.as_str(),
        }
    }
}

/// Writes rows in `format` to `out`.
pub fn write_rows<'a>(
    rows: impl IntoIterator<Item = Row<'a>>,
    format: OutputFormat,
    out: impl Write,
) -> std::io::Result<()> {
    let mut out = BufWriter::with_capacity(1 << 16, out);
    match format {
        OutputFormat::Csv => {
            let mut csv = csv::Writer::from_writer(&mut out);
            csv.write_record([
                "doc_id",
                "cluster_id",
                "cluster_size",
                "similarity",
                "status",
            ])?;
            for row in rows {
                let similarity = row
                    .similarity
                    .map(|s| format!("{s:.4}"))
                    .unwrap_or_default();
                csv.write_record([
                    row.doc_id,
                    row.cluster_id,
                    &row.cluster_size.to_string(),
                    &similarity,
                    row.status,
                ])?;
            }
            csv.flush()?;
        }
        OutputFormat::Jsonl => {
            for row in rows {
                let row = Row {
                    similarity: row.similarity.map(|s| (s * 1e4).round() / 1e4),
                    ..row
                };
                serde_json::to_writer(&mut out, &row)?;
                out.write_all(b"\n")?;
            }
        }
    }
    out.flush()
}

/// Writes a CSV table: the header row, then each row.
pub fn write_csv(
    header: &[&str],
    rows: impl IntoIterator<Item = Vec<String>>,
    out: impl Write,
) -> std::io::Result<()> {
    let mut out = BufWriter::with_capacity(1 << 16, out);
    {
        let mut csv = csv::Writer::from_writer(&mut out);
        csv.write_record(header)?;
        for row in rows {
            csv.write_record(&row)?;
        }
        csv.flush()?;
    }
    out.flush()
}

/// Runs `write` into a temporary file beside `target`, then renames it to `target`. On error
/// the temporary file is removed and `target` is left as it was. A target that exists and is
/// not a regular file (`/dev/null`, a named pipe) is written to directly: renaming over it
/// would replace the device or pipe with a file.
pub fn write_atomically(
    target: &Path,
    write: impl FnOnce(&mut std::fs::File) -> std::io::Result<()>,
) -> Result<(), WriteError> {
    let fail = |what: &str, source: std::io::Error| WriteError {
        path: target.display().to_string(),
        what: what.to_owned(),
        source,
    };
    if std::fs::metadata(target).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .open(target)
            .map_err(|e| fail("cannot open for writing", e))?;
        return write(&mut file).map_err(|e| fail("cannot write", e));
    }
    let dir = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix(".megashingle-").suffix(".tmp");
    #[cfg(unix)]
    {
        // A new file gets what any new file gets: read and write for all, less the umask.
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut temp = builder
        .tempfile_in(dir)
        .map_err(|e| fail("cannot create a temporary file beside it", e))?;
    write(temp.as_file_mut()).map_err(|e| fail("cannot write", e))?;
    if let Ok(existing) = std::fs::metadata(target) {
        temp.as_file()
            .set_permissions(existing.permissions())
            .map_err(|e| fail("cannot give the new file the permissions of the old", e))?;
    }
    temp.as_file()
        .sync_all()
        .map_err(|e| fail("cannot flush to disk", e))?;
    temp.persist(target)
        .map_err(|e| fail("cannot rename the finished temporary file to it", e.error))?;
    Ok(())
}

/// The output could not be written; the target is unchanged.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {what}; nothing was written")]
pub struct WriteError {
    /// The target.
    pub path: String,
    /// The step that failed.
    pub what: String,
    /// Why.
    #[source]
    pub source: std::io::Error,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows() -> Vec<Row<'static>> {
        vec![
            Row {
                doc_id: "a",
                cluster_id: "a",
                cluster_size: 2,
                similarity: Some(1.0),
                status: "ok",
            },
            Row {
                doc_id: "b,1",
                cluster_id: "a",
                cluster_size: 2,
                similarity: Some(0.833_333),
                status: "ok",
            },
            Row {
                doc_id: "c",
                cluster_id: "c",
                cluster_size: 1,
                similarity: None,
                status: "too_short",
            },
        ]
    }

    #[test]
    fn csv_rows() {
        let mut out = Vec::new();
        write_rows(rows(), OutputFormat::Csv, &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "doc_id,cluster_id,cluster_size,similarity,status\na,a,2,1.0000,ok\n\"b,1\",a,2,0.8333,ok\nc,c,1,,too_short\n"
        );
    }

    #[test]
    fn jsonl_rows() {
        let mut out = Vec::new();
        write_rows(rows(), OutputFormat::Jsonl, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[1],
            r#"{"doc_id":"b,1","cluster_id":"a","cluster_size":2,"similarity":0.8333,"status":"ok"}"#
        );
        assert!(lines[2].contains(r#""similarity":null"#));
    }

    #[test]
    fn failed_write_leaves_the_target_alone() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.csv");
        std::fs::write(&target, "good").unwrap();
        let err = write_atomically(&target, |f| {
            f.write_all(b"partial")?;
            Err(std::io::Error::other("interrupted"))
        })
        .unwrap_err();
        assert!(err
            .to_string()
            .ends_with("cannot write; nothing was written"));
        let cause = std::error::Error::source(&err).unwrap().to_string();
        assert_eq!(cause, "interrupted");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "good");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        write_atomically(&target, |f| f.write_all(b"new")).unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
    }

    #[cfg(unix)]
    #[test]
    fn a_named_pipe_is_written_to_not_replaced() {
        use std::io::Read;
        use std::os::unix::fs::FileTypeExt;
        let dir = tempfile::tempdir().unwrap();
        let pipe = dir.path().join("pipe");
        let made = std::process::Command::new("mkfifo").arg(&pipe).status();
        if !made.is_ok_and(|s| s.success()) {
            return; // no mkfifo on this machine
        }
        let reader = {
            let pipe = pipe.clone();
            std::thread::spawn(move || {
                let mut text = String::new();
                std::fs::File::open(pipe)
                    .unwrap()
                    .read_to_string(&mut text)
                    .unwrap();
                text
            })
        };
        write_atomically(&pipe, |f| f.write_all(b"through the pipe")).unwrap();
        assert_eq!(reader.join().unwrap(), "through the pipe");
        assert!(std::fs::metadata(&pipe).unwrap().file_type().is_fifo());
    }
}
