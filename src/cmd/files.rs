//! What the commands share about files: the inputs as named in messages, reading a whole text
//! file or stdin, the output file of `-o` (none, or `-`, for stdout), checking the outputs
//! before anything is read (none replaces a file the command reads or another output, each can
//! be made), and writing a CSV table or a text to either: a file through a temporary file put
//! in place only when complete, and not at all once the run is interrupted.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use megashingle::io::document::{decode_document, DocumentKind};
use megashingle::io::format::open_input;
use megashingle::io::record::DocumentText;
use megashingle::io::write::{stage, write_csv, Guarded, Staged};

use crate::cli::ConfigArgs;

/// The output file, or `None` for stdout (no `-o`, or `-o -`).
pub fn output_file(output: &Option<PathBuf>) -> Option<&Path> {
    output.as_deref().filter(|p| p.as_os_str() != "-")
}

/// An output file of a command, with the flag that names it ("-o", "--dropped", "--plot"), or
/// `None` for stdout.
pub type Output<'a> = (&'static str, Option<&'a Path>);

/// Checks, before anything is read, the output files of a command: that none would replace a
/// file the command reads (its inputs, the configuration file, the index and the index's lock
/// file), that no two are the same file, and that each can be made where it was asked for.
pub fn check_outputs(
    outputs: &[Output<'_>],
    inputs: &[PathBuf],
    config: Option<&ConfigArgs>,
    index: Option<&Path>,
) -> Result<()> {
    let files: Vec<Guarded> = outputs
        .iter()
        .filter_map(|&(role, path)| path.map(|path| Guarded { role, path }))
        .collect();
    for output in &files {
        refuse_same_file(Some(output.path), inputs, config, index)?;
    }
    megashingle::io::write::refuse_same_outputs(&files)?;
    for output in &files {
        megashingle::io::write::check_creatable(output.path)?;
    }
    Ok(())
}

/// Fails when `output` would replace one of the files the command reads: its inputs, the
/// configuration file, the index and its lock file.
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
    let lock = index.map(megashingle::index::lock_path);
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
    if let Some(path) = &lock {
        guarded.push(Guarded {
            role: "index's lock file",
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

/// Fails when the output is Parquet and goes to stdout while stdout is a terminal: a binary
/// file would be printed on the screen.
pub fn refuse_parquet_to_terminal(parquet: bool, output: Option<&Path>) -> Result<()> {
    use std::io::IsTerminal;
    parquet_to_terminal(parquet, output, std::io::stdout().is_terminal())
}

fn parquet_to_terminal(parquet: bool, output: Option<&Path>, terminal: bool) -> Result<()> {
    if parquet && output.is_none() && terminal {
        anyhow::bail!(
            "Parquet is a binary format and stdout is a terminal: give -o FILE.parquet, or send stdout to a file or a pipe (nothing was read or written)"
        );
    }
    Ok(())
}

/// The inputs as named on the command line, for messages.
pub fn input_names(inputs: &[PathBuf]) -> String {
    let names: Vec<String> = inputs
        .iter()
        .map(|p| match p.to_str() {
            Some("-") => "<stdin>".to_owned(),
            _ => p.display().to_string(),
        })
        .collect();
    names.join(", ")
}

/// The whole text of a file, or of stdin for `-`; it must be UTF-8.
pub fn read_text(path: &Path) -> Result<String> {
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

/// A document file, or stdin for `-`, read as folders are read: its kind told by its extension
/// (`.html`, `.htm`, `.txt`, `.eml`, also compressed) or else guessed from its bytes (a mail
/// header block, a page, plain text), and its bytes decoded from their charset.
pub fn read_document(path: &Path) -> Result<DocumentText> {
    let (bytes, extension) = if path.as_os_str() == "-" {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .context("<stdin>: cannot read")?;
        (bytes, String::new())
    } else {
        let (mut file, extension) = open_input(path)?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)
            .with_context(|| format!("{}: cannot read", path.display()))?;
        (bytes, extension)
    };
    let kind =
        DocumentKind::of_extension(&extension).unwrap_or_else(|| DocumentKind::guess(&bytes));
    Ok(decode_document(bytes, kind))
}

/// Writes `text` to stdout.
pub fn print(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

/// Writes `write` to a temporary file beside `path` and puts it in place (see
/// [`put_in_place`]).
pub fn write_file(
    path: &Path,
    write: impl FnOnce(&mut std::fs::File) -> std::io::Result<()>,
) -> Result<()> {
    let staged = stage(path, write)?;
    put_in_place(vec![staged])
}

/// Puts the outputs of a command, written in full, in place together, unless the run is
/// interrupted first (then their temporary files are removed and every old output stays); a
/// signal that comes while they are put in place lets them all be put in place.
pub fn put_in_place(staged: Vec<Staged>) -> Result<()> {
    crate::interrupt::check()?;
    for output in staged {
        output.persist()?;
    }
    Ok(())
}

/// Writes a CSV table to `output` (atomically) or to stdout.
pub fn emit_csv(
    output: Option<&Path>,
    header: &[&str],
    rows: impl IntoIterator<Item = Vec<String>>,
) -> Result<()> {
    match output {
        Some(path) => write_file(path, |file| write_csv(header, rows, file)),
        None => write_csv(header, rows, std::io::stdout().lock()).context("cannot write to stdout"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parquet_is_not_written_to_a_terminal() {
        let err = parquet_to_terminal(true, None, true)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with(
                "Parquet is a binary format and stdout is a terminal: give -o FILE.parquet"
            ),
            "{err}"
        );
        assert!(parquet_to_terminal(true, None, false).is_ok());
        assert!(parquet_to_terminal(true, Some(Path::new("out.parquet")), true).is_ok());
        assert!(parquet_to_terminal(false, None, true).is_ok());
    }
}
