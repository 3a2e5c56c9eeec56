//! Files in and out: readers for CSV, JSONL, Parquet, folders of text/HTML/mail files and
//! stdin, and writers for the cluster table in CSV, JSONL and Parquet, written atomically, and
//! the times of documents.

pub mod csv_records;
#[cfg(feature = "parquet")]
pub mod parquet;
pub mod read;
pub mod time;
pub mod write;
