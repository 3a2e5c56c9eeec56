//! `dedup_group_packed`: one group of the Spark job clustered and deduplicated as the command's
//! `dedup` deduplicates a collection (the library's `deduplicate_group`), over packed sketches,
//! so that the job keeps and removes the records the command keeps and removes.

use numpy::PyReadonlyArray1;
use pyo3::prelude::*;

use crate::config::PyConfig;
use crate::errors;
use crate::groups::{group_placements, row_of, GroupRow};
use crate::packed::{given_pairs, unpack_column};

/// One removed record of a group: (its index, the kept record's index, Jaccard, containment).
pub type GroupDuplicateRow = (usize, usize, f64, f64);

/// [`cluster_group_packed`](crate::packed::cluster_group_packed) and then the group's
/// duplicates: each story's record that `dedup.keep` chooses is kept (by `read_order`, each
/// document's place in the collection's read order, for `"first"` and every tie; by `times`,
/// each document's time in seconds since 1970 or None, for `"earliest"`), and each member whose
/// Jaccard with it or containment in it reaches `dedup.threshold` is removed. Returns the
/// clustering's rows and the removed records, story by story in the rows' order.
#[pyfunction]
#[pyo3(signature = (config, ids, offsets, data, read_order, pairs_a=None, pairs_b=None, times=None))]
#[allow(clippy::too_many_arguments)]
pub fn dedup_group_packed<'py>(
    py: Python<'py>,
    config: PyRef<'py, PyConfig>,
    ids: Vec<String>,
    offsets: PyReadonlyArray1<'py, i32>,
    data: PyReadonlyArray1<'py, u8>,
    read_order: PyReadonlyArray1<'py, i64>,
    pairs_a: Option<PyReadonlyArray1<'py, i64>>,
    pairs_b: Option<PyReadonlyArray1<'py, i64>>,
    times: Option<Vec<Option<i64>>>,
) -> PyResult<(Vec<GroupRow>, Vec<GroupDuplicateRow>)> {
    const CALLER: &str = "dedup_group_packed";
    let config = &config.config;
    let sketches = unpack_column(config, &offsets, &data)?;
    let read_order = read_order.as_array().to_vec();
    if read_order.len() != ids.len() {
        return Err(errors::input(format!(
            "{CALLER} needs one place in the read order per id"
        )));
    }
    if times.as_ref().is_some_and(|t| t.len() != ids.len()) {
        return Err(errors::input(format!(
            "{CALLER} needs one time (or None) per id"
        )));
    }
    let pairs = given_pairs(pairs_a, pairs_b, CALLER)?;
    let placed = group_placements(py, config, &ids, &sketches, pairs, CALLER)?;
    let removed = py.allow_threads(|| {
        megashingle::deduplicate_group(config, &sketches, &placed, &read_order, times.as_deref())
    });
    Ok((
        placed.iter().map(row_of).collect(),
        removed
            .iter()
            .map(|d| (d.doc, d.duplicate_of, d.jaccard, d.containment))
            .collect(),
    ))
}
