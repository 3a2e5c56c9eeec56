//! What the command line adds to the library's error messages. The library speaks of keys,
//! columns and index files, never of flags; each of its errors recognized here gets the flag or
//! command that does what the message asks for: the flag that chooses a missing column, the one
//! that made a bad record fatal, the one that gives the format of an input whose format was
//! guessed, the delimiter of a CSV file whose header seems to use another, `--upsert`, `-k`, and the commands that make an index and show its settings.

use megashingle::compare::TooShort;
use megashingle::io::read::{ColumnRole, ReadError};
use megashingle::IndexError;

/// The error's one line: its message and causes, then the command line's hints.
pub fn message_of(error: &anyhow::Error) -> String {
    let mut message = format!("{error:#}");
    for cause in error.chain() {
        if let Some(e) = cause.downcast_ref::<megashingle::Error>() {
            library_hints(e, &mut message);
        } else if let Some(e) = cause.downcast_ref::<ReadError>() {
            read_hints(e, &mut message);
        } else if cause.is::<TooShort>() {
            message.push_str(SHINGLE_SIZE);
        }
    }
    message
}

/// Where a text too short to compare can be helped.
const SHINGLE_SIZE: &str = "; -k sets the shingle size";

fn library_hints(error: &megashingle::Error, message: &mut String) {
    match error {
        megashingle::Error::Input(e) => read_hints(e, message),
        megashingle::Error::TooShort(_) => message.push_str(SHINGLE_SIZE),
        megashingle::Error::Index(e) => index_hint(e, message),
        _ => {}
    }
}

fn read_hints(error: &ReadError, message: &mut String) {
    match error {
        ReadError::Strict(_) => message.push_str(" (--strict makes this fatal)"),
        ReadError::Guessed { error, .. } => {
            message.push_str("; give the format with --input-format csv or jsonl");
            read_hints(error, message);
        }
        ReadError::ColumnType { role, .. } => {
            let flag = match role {
                ColumnRole::Id => "--id-column",
                ColumnRole::Text => "--text-column",
                ColumnRole::Time => "--time-column",
                ColumnRole::Extra => "--column",
            };
            message.push_str(&format!("; {flag} chooses another"));
        }
        ReadError::MissingColumn {
            delimiter: Some(delimiter),
            ..
        } => {
            let value = match delimiter {
                b'\t' => "tab".to_owned(),
                other => format!("'{}'", char::from(*other)),
            };
            message.push_str(&format!("; give --delimiter {value}"));
        }
        ReadError::MissingColumn { kind, role, .. } => {
            let flag = match role {
                ColumnRole::Id => "--id-column",
                ColumnRole::Text => "--text-column",
                ColumnRole::Time => "--time-column",
                ColumnRole::Extra => {
                    message.push_str("; check the names given to --column");
                    return;
                }
            };
            message.push_str(&format!("; {flag} chooses {}", role.named(kind)));
        }
        _ => {}
    }
}

fn index_hint(error: &IndexError, message: &mut String) {
    match error {
        IndexError::Missing { path } => message.push_str(&format!(
            "; make one with `megashingle index add --db {path} INPUT`"
        )),
        IndexError::Incomparable { path, .. } => message.push_str(&format!(
            "; `megashingle index stats --db {path}` shows the index's settings"
        )),
        IndexError::AlreadyIndexed { .. } => message.push_str(" (--upsert)"),
        _ => {}
    }
}
