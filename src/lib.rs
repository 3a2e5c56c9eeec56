//! megashingle finds near-duplicate texts and groups news articles into stories with the
//! shingle family of algorithms: canonical words → overlapping word shingles → a signature of
//! minima → supershingles → megashingles → verified union-find clusters.
//!
//! The facade is small: a [`Config`] (the keys of `pipeline.toml`), a [`Clusterer`] that takes
//! documents from any source and gives [`Clusters`], and [`compare()`] for two texts. The
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
//! # What the crate promises
//!
//! - **The facade is the API**: the items at the crate root ([`Config`] and its [`Plan`],
//!   [`Clusterer`], [`Deduplication`], [`Reuser`], [`compare()`], [`canon`], the per-document
//!   [`DocumentSketcher`] with [`verify_pair`], [`cluster_group`] and [`deduplicate_group`],
//!   [`Error`]) and the [`index`] module. These change only as semantic versioning allows.
//! - **The stages are public parts, not promises**: [`canonicalize`], [`sketch`], [`cluster`],
//!   [`corpus`], [`engine`], [`config`], [`io`], [`report`], [`reuse`](mod@reuse),
//!   [`compare`](mod@compare) and [`packed`]. Each is one stage of the pipeline built around a
//!   pure function; they are public so that the `megashingle` command, the Python binding and
//!   the benchmarks are built from the same parts as the facade, and they export only what
//!   those callers use (everything else is private to the crate). They are documented so that
//!   they can be read; they may change in any release, so a program that embeds megashingle
//!   should stay on the facade.
//! - One item is hidden from these docs: `corpus::set_store::fail_reads`, a test seam that
//!   makes reads of the spilled shingle sets fail.
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
pub mod canonicalize;
pub mod cluster;
pub mod compare;
pub mod config;
pub mod corpus;
pub mod engine;
pub mod index;
pub mod io;
pub mod report;
pub mod reuse;
pub mod sketch;

pub use cancel::Cancel;
pub use clusterer::{Assignment, Clusterer, Clusters, RunOptions, Status, Summary};
pub use compare::Comparison;
pub use config::{Config, ConfigError, DedupConfig, Keep, Plan, ReuseConfig};
pub use dedup::{deduplicate_group, Deduplication, Duplicate, GroupDuplicate};
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
