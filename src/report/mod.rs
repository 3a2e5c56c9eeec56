//! The HTML report: every story of a run on one self-contained page, with what its articles
//! share. [`build`] makes the data of a report ([`model::ReportModel`]) from a sketched
//! collection and its stories (clustered here, or read from a table or an index by
//! [`table`]), reading the texts back and comparing each member with its representative;
//! [`text`] cuts texts into the words shown and marks shared passages on them; and
//! [`page::render`], a pure function, writes the page: inline style and script allowed by
//! their hashes, every document value escaped for where it goes. [`reuse`] makes the page of
//! `report --reuse`: the pairs that share a passage, side by side.

pub mod build;
pub mod model;
pub mod page;
pub mod reuse;
pub mod table;
pub mod text;

pub use model::ReportModel;
pub use page::render;
