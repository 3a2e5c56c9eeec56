//! A persistent story index for nightly runs: each night's documents are sketched as
//! `cluster` sketches them, find their candidates among everything indexed (a look-up in the
//! postings of their candidate keys) and among each other, are verified the same way, and join
//! an existing story or found a new one. Story ids are stable: a story keeps its id as it
//! grows, and when a new document joins two stories the older id survives and the merge is
//! recorded.

pub mod add;
mod boilerplate;
mod error;
mod examine;
mod facade;
pub mod postings;
pub mod read;
pub mod remove;
pub mod store;

pub use error::{Damage, Foreign, IndexError};
pub use facade::{Index, IndexAddition};
