//! megashingle finds near-duplicate texts and groups news articles into stories with the
//! shingle family of algorithms: canonical words → overlapping word shingles → a signature of
//! minima → supershingles → megashingles → verified union-find clusters.
//!
//! The facade is small: a [`Config`] (the keys of `pipeline.toml`), a [`Clusterer`] that takes
//! documents from any source and gives [`Clusters`], and [`compare`] for two texts. The
//! `megashingle` command is a thin binary over it.
//!
//! ```
//! fn main() -> Result<(), megashingle::Error> {
//!     let config = megashingle::Config::default(); // or Config::from_file("pipeline.toml")?
//!     let mut clusterer = megashingle::Clusterer::new(&config)?;
//!     clusterer.add("doc-1", "first text ...")?; // any source: an iterator, a database cursor
//!     clusterer.add("doc-2", "second text ...")?;
//!     let clusters = clusterer.finish()?;
//!     for a in clusters.assignments() {
//!         // the cluster command's row order
//!         println!("{} {} {} {:?} {}", a.doc_id, a.cluster_id, a.cluster_size, a.similarity, a.status);
//!     }
//!     let c = megashingle::compare(&config, "a b c d", "a b c e")?; // c.dice, c.jaccard, c.common ...
//!     Ok(())
//! }
//! ```
//!
//! Each stage is a module built around a pure function; the modules marked hidden are the
//! stages themselves, public for the binary and the benchmarks but not part of the facade.
#![warn(missing_docs)]

mod cancel;
mod clusterer;
mod dedup;
mod error;
pub mod packed;
mod progress;
mod reuser;
mod sketcher;

// The stages, in the order data flows through them.
#[doc(hidden)]
pub mod canonicalize;
#[doc(hidden)]
pub mod cluster;
#[doc(hidden)]
pub mod compare;
#[doc(hidden)]
pub mod config;
#[doc(hidden)]
pub mod corpus;
#[doc(hidden)]
pub mod engine;
pub mod index;
#[doc(hidden)]
pub mod io;
#[doc(hidden)]
pub mod report;
#[doc(hidden)]
pub mod reuse;
#[doc(hidden)]
pub mod sketch;

pub use cancel::Cancel;
pub use clusterer::{Assignment, Clusterer, Clusters, RunOptions, Status, Summary};
pub use compare::Comparison;
pub use config::{Config, ConfigError, DedupConfig, Keep, Plan, ReuseConfig};
pub use dedup::{Deduplication, Duplicate};
pub use error::{Error, Result};
pub use index::{Index, IndexAddition, IndexError};
pub use io::read::{InputFormat, ReadOptions};
pub use progress::{Progress, Quiet, Stage};
pub use reuser::{reuse, Reuse, ReusePair, ReuseSummary, Reuser};
pub use sketcher::{
    cluster_group, cluster_group_with_pairs, verify_pair, DocumentSketch, DocumentSketcher,
    PairVerdict, Placement,
};

/// Compares two texts under `config`: exact Dice and Jaccard of their shingle sets, the
/// estimate from the minima, the supershingles and megashingles they share, how much of each
/// text's lead the other holds, and the shared fragments. A text with fewer words than the
/// shingle size is an [`Error::TooShort`].
pub fn compare(config: &Config, first: &str, second: &str) -> Result<Comparison> {
    let plan = Plan::try_from(config)?;
    Ok(compare::compare(
        (first, "the first text"),
        (second, "the second text"),
        &plan,
    )?)
}

/// The canonical words of a text under `config`, one string: HTML reduced to its main text,
/// entities decoded, Unicode normalized, case folded, words joined by single spaces. This is
/// what is shingled and compared. An invalid `config` is an [`Error::Config`].
pub fn canon(config: &Config, text: &str) -> Result<String> {
    let plan = Plan::try_from(config)?;
    Ok(sketch::Sketcher::new(&plan)
        .canonicalizer()
        .words(text)
        .join(" "))
}
