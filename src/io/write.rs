//! Writers. The cluster table and the reuse table (written by the module of their format), and
//! the index's tables, go to stdout or to a file; a file is written to a temporary file beside
//! the target and renamed over it only when complete, so an interrupted run never leaves a
//! truncated table and a failed run never replaces a good one. An output is refused when it is
//! an input, or a file that a folder input reads.

use std::io::{BufWriter, Write};
use std::path::Path;

pub use crate::io::csv::write_csv;
use crate::io::format::Format;
#[cfg(not(feature = "parquet"))]
use crate::io::format::NO_PARQUET;
use crate::io::table::four_decimals;
pub use crate::io::table::{OutputFormat, Row};

/// Writes rows of the cluster table in `format` to `out`.
pub fn write_rows<'a>(
    rows: impl IntoIterator<Item = Row<'a>>,
    format: OutputFormat,
    out: impl Write + Send,
) -> std::io::Result<()> {
    let mut out = BufWriter::with_capacity(1 << 16, out);
    match format {
        OutputFormat::Csv => crate::io::csv::write_rows(rows, &mut out)?,
        OutputFormat::Jsonl => crate::io::jsonl::write_rows(rows, &mut out)?,
        OutputFormat::Parquet => return write_rows_parquet(rows, out),
    }
    out.flush()
}

/// Writes reuse pairs (the `reuse` table) in `format` to `out`; shares to four decimals.
pub fn write_pairs<'a>(
    rows: impl IntoIterator<Item = crate::ReusePair<'a>>,
    format: OutputFormat,
    out: impl Write + Send,
) -> std::io::Result<()> {
    let rows = rows.into_iter().map(|p| crate::ReusePair {
        a_in_b: four_decimals(p.a_in_b),
        b_in_a: four_decimals(p.b_in_a),
        jaccard: four_decimals(p.jaccard),
        ..p
    });
    let mut out = BufWriter::with_capacity(1 << 16, out);
    match format {
        OutputFormat::Csv => crate::io::csv::write_pairs(rows, &mut out)?,
        OutputFormat::Jsonl => crate::io::jsonl::write_pairs(rows, &mut out)?,
        OutputFormat::Parquet => return write_pairs_parquet(rows, out),
    }
    out.flush()
}

#[cfg(feature = "parquet")]
fn write_pairs_parquet<'a>(
    rows: impl IntoIterator<Item = crate::ReusePair<'a>>,
    out: impl Write + Send,
) -> std::io::Result<()> {
    crate::io::parquet::write_pairs(rows, out)
}

#[cfg(not(feature = "parquet"))]
fn write_pairs_parquet<'a>(
    _rows: impl IntoIterator<Item = crate::ReusePair<'a>>,
    _out: impl Write + Send,
) -> std::io::Result<()> {
    Err(std::io::Error::other(NO_PARQUET))
}

#[cfg(feature = "parquet")]
fn write_rows_parquet<'a>(
    rows: impl IntoIterator<Item = Row<'a>>,
    out: impl Write + Send,
) -> std::io::Result<()> {
    crate::io::parquet::write_rows(rows, out)
}

#[cfg(not(feature = "parquet"))]
fn write_rows_parquet<'a>(
    _rows: impl IntoIterator<Item = Row<'a>>,
    _out: impl Write + Send,
) -> std::io::Result<()> {
    Err(std::io::Error::other(NO_PARQUET))
}

/// Runs `write` into a temporary file beside `target`, then renames it to `target`. On error
/// the temporary file is removed and `target` is left as it was. A target that exists and is
/// not a regular file (`/dev/null`, a named pipe) is written to directly: renaming over it
/// would replace the device or pipe with a file.
#[cfg(test)]
pub(crate) fn write_atomically(
    target: &Path,
    write: impl FnOnce(&mut std::fs::File) -> std::io::Result<()>,
) -> Result<(), WriteError> {
    stage(target, write)?.persist()
}

/// An output written in full to a temporary file beside its target, and flushed to disk, but
/// not yet put in place: [`Staged::persist`] renames it to the target; dropped, it is removed
/// and the target stays as it was. A program with several outputs stages them all, then puts
/// them in place together, so that a failure leaves every old one.
#[derive(Debug)]
pub struct Staged {
    /// The temporary file; `None` when the target is written to directly (a pipe, a device).
    temp: Option<tempfile::NamedTempFile>,
    target: std::path::PathBuf,
}

/// Writes `write` into a temporary file beside `target` (flushed to disk), to be put in place
/// by [`Staged::persist`]. On error the temporary file is removed. A target that exists and is
/// not a regular file (`/dev/null`, a named pipe) is written to directly, at once.
pub fn stage(
    target: &Path,
    write: impl FnOnce(&mut std::fs::File) -> std::io::Result<()>,
) -> Result<Staged, WriteError> {
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
        write(&mut file).map_err(|e| fail("cannot write", e))?;
        return Ok(Staged {
            temp: None,
            target: target.to_owned(),
        });
    }
    let mut staged = Staged {
        temp: Some(
            temporary_builder()
                .tempfile_in(folder_of(target))
                .map_err(|e| fail("cannot create a temporary file beside it", e))?,
        ),
        target: target.to_owned(),
    };
    let temp = staged.temp.as_mut().expect("made above");
    write(temp.as_file_mut()).map_err(|e| fail("cannot write", e))?;
    if let Ok(existing) = std::fs::metadata(target) {
        temp.as_file()
            .set_permissions(existing.permissions())
            .map_err(|e| fail("cannot give the new file the permissions of the old", e))?;
    }
    temp.as_file()
        .sync_all()
        .map_err(|e| fail("cannot flush to disk", e))?;
    Ok(staged)
}

impl Staged {
    /// Renames the temporary file to the target, replacing any old file there.
    pub fn persist(mut self) -> Result<(), WriteError> {
        let Some(temp) = self.temp.take() else {
            return Ok(());
        };
        temp.persist(&self.target)
            .map(drop)
            .map_err(|e| WriteError {
                path: self.target.display().to_string(),
                what: "cannot rename the finished temporary file to it".into(),
                source: e.error,
            })
    }

    /// The target.
    pub fn target(&self) -> &Path {
        &self.target
    }
}

/// How the temporary file beside an output is named and made.
fn temporary_builder() -> tempfile::Builder<'static, 'static> {
    let mut builder = tempfile::Builder::new();
    builder.prefix(".megashingle-").suffix(".tmp");
    #[cfg(unix)]
    {
        // A new file gets what any new file gets: read and write for all, less the umask.
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    builder
}

/// A file the command reads, which its output must not replace; or one of its outputs, which
/// another output must not replace.
#[derive(Debug, Clone, Copy)]
pub struct Guarded<'a> {
    /// What the file is to the command, for the message: "input", "index", "configuration",
    /// or the flag that names an output ("-o", "--dropped").
    pub role: &'a str,
    /// The file (or folder) as given.
    pub path: &'a Path,
}

/// The output would replace a file the command reads.
#[derive(Debug, thiserror::Error)]
#[error("the output {output} {relation} {role} {input}: writing it would destroy the {role}; choose another output file (nothing was read or written)")]
pub struct SameFile {
    /// The output as given.
    pub output: String,
    /// "is the same file as the" or "is a document of the".
    pub(crate) relation: &'static str,
    /// What the guarded file is.
    pub role: String,
    /// The guarded file as given.
    pub input: String,
}

/// Fails when `output` is the same file as one of `guarded` (the same canonical path, or the
/// same device and inode: a link to it), or a document that a guarded folder's reader would
/// read. A missing output is compared by its folder's canonical path and its name, so an index
/// not made yet is guarded too. An output that is not a regular file (`/dev/null`, a pipe) is
/// written to, not replaced, and is never refused.
pub fn refuse_same_file(output: &Path, guarded: &[Guarded<'_>]) -> Result<(), SameFile> {
    if std::fs::metadata(output).is_ok_and(|m| !m.is_file()) {
        return Ok(());
    }
    let output_canonical = canonical(output);
    let refuse = |g: &Guarded<'_>, relation| SameFile {
        output: output.display().to_string(),
        relation,
        role: g.role.to_owned(),
        input: g.path.display().to_string(),
    };
    for g in guarded {
        if g.path.as_os_str() == "-" {
            continue;
        }
        if std::fs::metadata(g.path).is_ok_and(|m| m.is_dir()) {
            if let (Some(folder), Some(out)) = (g.path.canonicalize().ok(), &output_canonical) {
                if is_document_of(&folder, out) {
                    return Err(refuse(g, "is a document of the"));
                }
            }
            continue;
        }
        let same = same_inode(output, g.path)
            || (output_canonical.is_some() && output_canonical == canonical(g.path));
        if same {
            return Err(refuse(g, "is the same file as the"));
        }
    }
    Ok(())
}

/// Two outputs of one command are the same file: the one written last would replace the other.
#[derive(Debug, thiserror::Error)]
#[error("the outputs {first} ({first_role}) and {second} ({second_role}) are the same file: the one written last would replace the other; give two different files (nothing was read or written)")]
pub struct SameOutputs {
    /// The first output as given.
    pub first: String,
    /// Its flag.
    pub(crate) first_role: String,
    /// The second output as given.
    pub second: String,
    /// Its flag.
    pub(crate) second_role: String,
}

/// Fails when two of `outputs` are the same file: the same canonical path (for a file not
/// made yet, its folder's canonical path and its name), or the same device and inode. Outputs
/// that exist and are not regular files (`/dev/null`, a pipe) are written to, not replaced,
/// and are never refused.
pub fn refuse_same_outputs(outputs: &[Guarded<'_>]) -> Result<(), SameOutputs> {
    let replaced: Vec<(&Guarded<'_>, Option<std::path::PathBuf>)> = outputs
        .iter()
        .filter(|o| !std::fs::metadata(o.path).is_ok_and(|m| !m.is_file()))
        .map(|o| (o, canonical(o.path)))
        .collect();
    for (i, (first, first_canonical)) in replaced.iter().enumerate() {
        for (second, second_canonical) in &replaced[i + 1..] {
            let same = same_inode(first.path, second.path)
                || (first_canonical.is_some() && first_canonical == second_canonical);
            if same {
                return Err(SameOutputs {
                    first: first.path.display().to_string(),
                    first_role: first.role.to_owned(),
                    second: second.path.display().to_string(),
                    second_role: second.role.to_owned(),
                });
            }
        }
    }
    Ok(())
}

/// An output that cannot be made where it was asked for.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {problem}; {remedy} (nothing was read or written)")]
pub struct CannotCreate {
    /// The output as given.
    pub path: String,
    /// What is wrong.
    pub(crate) problem: String,
    /// What to do.
    pub(crate) remedy: String,
}

/// Fails when a file cannot be written at `target` as `write_atomically` writes it: the
/// path is a folder, its folder does not exist or is not a folder, or no file can be made in
/// it (no permission, a read-only file system). A command checks its outputs with this before
/// it reads anything, so that a mistyped path fails at once, not after the work. A target that
/// exists and is neither a file nor a folder (`/dev/null`, a pipe) is written to directly and
/// is not checked.
pub fn check_creatable(target: &Path) -> Result<(), CannotCreate> {
    let fail = |problem: String, remedy: String| CannotCreate {
        path: target.display().to_string(),
        problem,
        remedy,
    };
    match std::fs::metadata(target) {
        Ok(m) if m.is_dir() => {
            return Err(fail(
                "is a folder".into(),
                "give the path of a file to write, not of a folder".into(),
            ))
        }
        Ok(m) if !m.is_file() => return Ok(()),
        _ => {}
    }
    let folder = folder_of(target);
    let shown = folder.display();
    match std::fs::metadata(folder) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(fail(
                format!("the folder {shown} does not exist"),
                format!("make it first (mkdir -p {shown}) or give another path"),
            ))
        }
        Err(e) => {
            return Err(fail(
                format!("cannot reach the folder {shown} ({e})"),
                "give a path in a folder you can write to".into(),
            ))
        }
        Ok(m) if !m.is_dir() => {
            return Err(fail(
                format!("{shown} is not a folder"),
                "give a path in a folder".into(),
            ))
        }
        Ok(_) => {}
    }
    // The one sure test: make (and at once remove) a file there, as the write will.
    let probe = temporary_builder().tempfile_in(folder).map_err(|e| {
        fail(
            format!("cannot make a file in the folder {shown} ({e})"),
            "give a path in a folder you can write to".into(),
        )
    })?;
    drop(probe);
    Ok(())
}

/// The folder a file at `path` goes in (`.` for a bare name).
fn folder_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// The canonical path of `path`; for a file that does not exist, its folder's canonical path
/// joined with its name.
fn canonical(path: &Path) -> Option<std::path::PathBuf> {
    if let Ok(c) = path.canonicalize() {
        return Some(c);
    }
    let name = path.file_name()?;
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    Some(folder.canonicalize().ok()?.join(name))
}

/// True when both exist and are the same file (hard links included).
fn same_inode(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (std::fs::metadata(a), std::fs::metadata(b)) {
            (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (a, b);
        false
    }
}

/// True when `file` is an existing file under `folder` that the folder reader reads: a
/// document extension, and no hidden name on the way.
fn is_document_of(folder: &Path, file: &Path) -> bool {
    let Ok(relative) = file.strip_prefix(folder) else {
        return false;
    };
    let hidden = relative
        .components()
        .any(|c| c.as_os_str().to_string_lossy().starts_with('.'));
    !hidden && file.is_file() && Format::in_folder(file).is_some()
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
    fn a_broken_pipe_inside_the_csv_writer_keeps_its_kind() {
        struct Closed;
        impl Write for Closed {
            fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
                Err(std::io::ErrorKind::BrokenPipe.into())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let many = (0..100_000).map(|i| vec![format!("row {i}")]);
        let err = write_csv(&["a"], many, Closed).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::BrokenPipe);
        let err = write_rows(
            rows().into_iter().cycle().take(100_000),
            OutputFormat::Csv,
            Closed,
        )
        .unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::BrokenPipe);
    }

    #[test]
    fn an_output_that_is_a_guarded_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in.csv");
        std::fs::write(&input, "id,text\n").unwrap();
        std::fs::create_dir(dir.path().join("pages")).unwrap();
        std::fs::write(dir.path().join("pages/a.txt"), "x").unwrap();
        let guarded = [
            Guarded {
                role: "input",
                path: &input,
            },
            Guarded {
                role: "index",
                path: &dir.path().join("new.db"),
            },
            Guarded {
                role: "input",
                path: &dir.path().join("pages"),
            },
        ];
        let refused = |output: &Path| refuse_same_file(output, &guarded).err();
        let err = refused(&dir.path().join("pages/../in.csv")).unwrap();
        assert_eq!(err.relation, "is the same file as the");
        assert_eq!(err.role, "input");
        assert!(refused(&dir.path().join("new.db")).is_some_and(|e| e.role == "index"));
        assert!(refused(&dir.path().join("pages/a.txt"))
            .is_some_and(|e| e.relation == "is a document of the"));
        assert!(refused(&dir.path().join("pages/table.csv")).is_none());
        assert!(refused(&dir.path().join("out.csv")).is_none());
        assert!(refused(Path::new("/dev/null")).is_none());
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
