//! `megashingle canon`: a text's canonical words, exactly what is shingled and compared, on
//! one line or one word a line; with `--dropped`, also the lines of the page that main-text
//! extraction dropped; with `--explain`, how its bytes were read (charset and why, a mail's
//! parts). A file is read as a folder's files are ([`crate::cmd::files::read_document`]).

use anyhow::Result;
use megashingle::canonicalize::Canonicalizer;

use crate::cli::CanonArgs;
use crate::cmd::files::{print, read_document};
use crate::exit::Outcome;

/// Runs the command.
pub fn run(args: CanonArgs) -> Result<Outcome> {
    let config = args.config.resolve()?;
    let document = read_document(&args.file)?;
    let text = document.text;
    let canonicalizer = Canonicalizer::new(&config.canonicalize);
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
    if args.explain {
        out.push_str("\ndecoded:\n");
        for line in &document.decoding {
            out.push_str(&format!("  - {line}\n"));
        }
        if let Some(time) = document.time {
            let time = megashingle::io::time::format_time(time);
            out.push_str(&format!("  - time (Date header): {time}\n"));
        }
    }
    print(&out)?;
    Ok(Outcome::Clean)
}
