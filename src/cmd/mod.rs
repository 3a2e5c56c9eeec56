//! The commands, one file each, over the library's facade.

pub mod dedup;
pub mod report;
