//! Corpus statistics and the store they read: every document's shingle sets are kept in a
//! [`set_store::SetStore`] between reading and clustering (in memory, or spilled to a temporary
//! file), and the passes over them count how many documents and how many stories hold each
//! shingle, to find the boilerplate that is left out of the signatures ([`boilerplate`]).
//! [`lookup`] holds the sets of shingle keys those passes ask about every key.

pub mod boilerplate;
pub mod lookup;
pub mod set_store;
