//! A persistent story index for nightly runs: each night's documents are sketched as
//! `cluster` sketches them, find their candidates among everything indexed (a look-up in the
//! postings of their candidate keys) and among each other, are verified the same way, and join
//! an existing story or found a new one. Story ids are stable: a story keeps its id as it
//! grows, and when a new document joins two stories the older id survives and the merge is
//! recorded.
//!
//! [`Index`] is the whole of it as the library offers it: open one, add documents through an
//! [`IndexAddition`], look at the [`PreparedAdd`]'s [`AddReport`] and commit or abort it;
//! [`Index::query`] (near-duplicates), [`Index::query_reuse`] (shared passages),
//! [`Index::export`], [`Index::merges`], [`Index::stats`] and
//! [`Index::remove`] read and trim it. Every failure is an [`IndexError`] (inside
//! [`crate::Error::Index`]) or an error of the input or configuration.
//!
//! ```
//! # fn main() -> Result<(), megashingle::Error> {
//! # let dir = tempfile::tempdir().unwrap();
//! let config = megashingle::Config::default();
//! let mut index = megashingle::Index::open(dir.path().join("stories.db"))?;
//! let mut night = index.begin_add(&config, megashingle::RunOptions::default(), false)?;
//! night.add("a", "the council approved the budget for buses on monday night", None)?;
//! let prepared = night.prepare()?;
//! assert_eq!(prepared.report().new_stories, 1); // nothing is written yet
//! let report = prepared.commit()?;
//! assert_eq!(report.assignments[0].story_id, "a");
//! # Ok(())
//! # }
//! ```

mod add;
mod boilerplate;
mod error;
mod examine;
mod facade;
mod ids;
mod lists;
mod passages;
mod postings;
mod read;
mod remove;
mod schema;
mod store;

pub use add::{AddReport, Assignment, PreparedAdd};
pub use error::{Damage, Foreign, IndexError};
pub use facade::{Index, IndexAddition, SketchedDocuments};
pub use read::{ExportRow, Match, ReuseAnswer, ReuseMatch, Stats};
pub use remove::{Removal, Selection};
pub use schema::MergeRecord;
pub use store::{lock_path, Open};
