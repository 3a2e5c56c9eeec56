//! Files in and out, one module per format. What an input is read as is decided in one place
//! ([`format`](mod@format)); the record formats are read and written by their own modules ([`csv`],
//! [`jsonl`], [`parquet`]), the documents are read by theirs ([`document`] for text, HTML and
//! mail files and mbox archives, [`mime`] for mail, [`warc`] for WARC files, whose `.warc.gz` members
//! [`gzip`] reads one by one, with the charsets of their bytes from [`charset`]); [`read`] pulls the records of every input in turn,
//! [`write`](mod@write) writes tables atomically, [`table`] holds their rows, and [`time`] reads and
//! writes the times of documents.

pub mod charset;
pub mod csv;
pub mod document;
pub mod format;
pub mod gzip;
pub mod jsonl;
pub mod mime;
#[cfg(feature = "parquet")]
pub mod parquet;
pub mod read;
pub mod record;
pub mod table;
pub mod time;
pub mod transcode;
pub mod warc;
pub mod write;
