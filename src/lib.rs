//! megashingle finds near-duplicate texts and groups news articles into stories with the
//! shingle family of algorithms: canonical words → overlapping word shingles → a signature of
//! minima → supershingles → megashingles → verified union-find clusters.
//!
//! Each stage is a module built around a pure function; [`pipeline`] runs them over inputs
//! with threads and progress bars, and [`io`] reads and writes the files.

pub mod boilerplate;
pub mod canonicalize;
pub mod cluster;
pub mod compare;
pub mod config;
pub mod index;
pub mod io;
pub mod keyset;
pub mod pipeline;
pub mod sets;
pub mod shingle;
pub mod signature;
pub mod sketch;
pub mod sorted;
pub mod supershingle;
pub mod tune;
