//! Files in and out: readers for CSV, JSONL, Parquet, folders of text/HTML/mail files, mbox
//! archives, WARC files and stdin, with the charsets of their bytes, and writers for the
//! cluster table in CSV, JSONL and Parquet, written atomically, and the times of documents.

pub mod charset;
pub mod csv_records;
pub mod document;
pub mod mime;
#[cfg(feature = "parquet")]
pub mod parquet;
pub mod read;
pub mod time;
pub mod transcode;
pub mod warc;
pub mod write;
