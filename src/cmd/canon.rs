//! `megashingle canon`: a text's canonical words, exactly what is shingled and compared, on
//! one line or one word a line; with `--dropped`, also the lines of the page that main-text
//! extraction dropped.

use anyhow::Result;
use megashingle::canonicalize::Canonicalizer;

use crate::cli::CanonArgs;
use crate::cmd::files::{print, read_text};
use crate::exit::Outcome;

/// Runs the command.
pub fn run(args: CanonArgs) -> Result<Outcome> {
    let config = args.config.resolve()?;
    let text = read_text(&args.file)?;
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
    print(&out)?;
    Ok(Outcome::Clean)
}
