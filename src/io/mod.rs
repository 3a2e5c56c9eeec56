//! Files in and out: readers for CSV, JSONL, folders of text/HTML/mail files and stdin, and
//! writers for the cluster table in CSV and JSONL, written atomically, and the times of
//! documents.

pub mod csv_records;
pub mod read;
pub mod time;
pub mod write;
