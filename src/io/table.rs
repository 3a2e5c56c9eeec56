//! The tables megashingle writes, whatever their format: the rows of the cluster table, the
//! columns of the reuse table, and the formats they are written in.

use serde::Serialize;

/// The format of the output table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OutputFormat {
    /// CSV with a header row.
    Csv,
    /// One JSON object per line.
    Jsonl,
    /// An Apache Parquet file (needs the `parquet` feature).
    Parquet,
}

/// One row of the cluster table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row<'a> {
    /// The document.
    pub doc_id: &'a str,
    /// Its cluster: the smallest member id.
    pub cluster_id: &'a str,
    /// Documents in the cluster.
    pub cluster_size: usize,
    /// Estimated Jaccard to the cluster's representative, to four decimals.
    pub similarity: Option<f64>,
    /// `ok`, or why the document could not be compared.
    pub status: &'a str,
}

impl<'a> From<crate::Assignment<'a>> for Row<'a> {
    fn from(a: crate::Assignment<'a>) -> Row<'a> {
        Row {
            doc_id: a.doc_id,
            cluster_id: a.cluster_id,
            cluster_size: a.cluster_size,
            similarity: a.similarity,
            status: a.status.as_str(),
        }
    }
}

/// The header of the reuse table.
pub const PAIR_COLUMNS: [&str; 8] = [
    "doc_a",
    "doc_b",
    "a_in_b",
    "b_in_a",
    "shared_words",
    "passages",
    "longest",
    "jaccard",
];

/// A share rounded to four decimals, as the tables write them.
pub(crate) fn four_decimals(x: f64) -> f64 {
    (x * 1e4).round() / 1e4
}
