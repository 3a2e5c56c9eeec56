//! `megashingle compare`: two texts (files, or the texts themselves with `--text`) measured
//! against each other as the pipeline would: shingles in common, Dice and Jaccard, the
//! estimated Jaccard, shared supershingles and megashingles, leads and shared fragments, and
//! the passages each text shares with the other as `reuse` counts them, shared words marked;
//! as a text report or, with `--json`, as one JSON object. Files are read as a folder's files
//! are: HTML, text and mail decoded from their charsets.

use std::path::Path;

use anyhow::Result;
use megashingle::compare::{compare, Comparison};
use megashingle::Plan;

use crate::cli::CompareArgs;
use crate::cmd::files::{print, read_document};
use crate::exit::Outcome;

/// Runs the command.
pub fn run(args: CompareArgs) -> Result<Outcome> {
    let plan = Plan::try_from(&args.config.resolve()?)?;
    let (first, second, first_name, second_name) = if args.text {
        (
            args.first,
            args.second,
            "first text".to_owned(),
            "second text".to_owned(),
        )
    } else {
        (
            read_document(Path::new(&args.first))?.text,
            read_document(Path::new(&args.second))?.text,
            args.first,
            args.second,
        )
    };
    let comparison = compare((&first, &first_name), (&second, &second_name), &plan)?;
    if args.json {
        print(&(serde_json::to_string(&comparison)? + "\n"))?;
    } else {
        print(&report(&comparison))?;
    }
    Ok(Outcome::Clean)
}

/// The comparison as the text report, one measure a line.
fn report(c: &Comparison) -> String {
    let mut out = format!(
        "shingles (k = {}): {} and {}, {} in common\n\
         Dice:              {:.4}\n\
         Jaccard:           {:.4}\n\
         estimated Jaccard: {:.4} (from {} minima)\n\
         supershingles:     {} of {} shared\n\
         megashingles:      {} of {} shared\n",
        c.shingle_size,
        c.first_shingles,
        c.second_shingles,
        c.common,
        c.dice,
        c.jaccard,
        c.estimated_jaccard,
        c.minima,
        c.shared_supershingles,
        c.supershingles,
        c.shared_megashingles,
        c.megashingles,
    );
    out.push_str(&format!(
        "leads shared:      {:.2} of the first's in the second, {:.2} of the second's in the first\n",
        c.first_lead_in_second, c.second_lead_in_first
    ));
    out.push_str(&format!(
        "shared fragments:  {}\n",
        c.shared_fragments.len()
    ));
    for fragment in &c.shared_fragments {
        out.push_str(&format!("  - {fragment}\n"));
    }
    out.push_str(&format!(
        "reuse:             {:.4} of the first's words in passages shared with the second, {:.4} of the second's in the first\n",
        c.first_in_second, c.second_in_first
    ));
    for (which, other, passages) in [
        ("first", "second", &c.first_passages),
        ("second", "first", &c.second_passages),
    ] {
        out.push_str(&format!(
            "passages of the {which} text found in the {other}: {}\n",
            passages.len()
        ));
        for passage in passages {
            out.push_str(&format!("  - {passage}\n"));
        }
    }
    out
}
