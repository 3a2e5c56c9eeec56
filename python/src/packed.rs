//! Packed shingle sets and sketches in binary columns (an Arrow binary array's offsets and data
//! buffers), read and written with the library's versioned packed forms
//! (`megashingle::packed`), and the Spark job's calls over them: the page sets counted by
//! document frequency, the main sets, the minima's low bytes, pairs verified and a group
//! clustered.

use megashingle::packed::{pack_sketch, unpack_sets, unpack_sketch};
use megashingle::sketch::ShingleSets;
use megashingle::{Config, DocumentSketch, Plan};
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::columns::flat;
use crate::config::PyConfig;
use crate::errors;
use crate::groups::{group_rows, GroupRow};

/// The end of a packed batch so far, as an Arrow binary offset.
pub fn batch_end(data: &[u8]) -> PyResult<i32> {
    i32::try_from(data.len())
        .map_err(|_| errors::input("a batch of packed values passes 2 GB: give smaller batches"))
}

/// Sketches as `sketch_sets_packed` returns them: `(offsets, data, keys, key_offsets, comparable)`.
pub fn packed_sketches<'py>(
    py: Python<'py>,
    sketches: &[DocumentSketch],
    with_sets: bool,
) -> PyResult<Bound<'py, PyTuple>> {
    let mut data = Vec::new();
    let mut offsets = vec![0i32];
    for s in sketches {
        pack_sketch(s, with_sets, &mut data);
        offsets.push(batch_end(&data)?);
    }
    let (keys, key_offsets) = flat(py, sketches.iter().map(|s| s.keys.as_slice()));
    let ok: Vec<bool> = sketches
        .iter()
        .map(|s| s.status == megashingle::Status::Ok)
        .collect();
    PyTuple::new(
        py,
        [
            offsets.into_pyarray(py).into_any(),
            data.into_pyarray(py).into_any(),
            keys.into_any(),
            key_offsets.into_any(),
            ok.into_pyarray(py).into_any(),
        ],
    )
}

/// The packed shingle sets of a binary column (its offsets and data buffers).
pub fn unpack_sets_column(
    offsets: &PyReadonlyArray1<'_, i32>,
    data: &PyReadonlyArray1<'_, u8>,
) -> PyResult<Vec<ShingleSets>> {
    column_values(offsets, data)?
        .into_iter()
        .map(|bytes| unpack_sets(bytes).map_err(errors::pack_error))
        .collect()
}

/// The page sets (what document frequency counts: the page's set, else the main set) of
/// packed shingle sets, concatenated: each set's shingles are distinct, so how often a
/// shingle occurs here is how many of these documents hold it.
#[pyfunction]
pub fn packed_page_values<'py>(
    py: Python<'py>,
    offsets: PyReadonlyArray1<'py, i32>,
    data: PyReadonlyArray1<'py, u8>,
) -> PyResult<Bound<'py, PyArray1<u32>>> {
    let sets = unpack_sets_column(&offsets, &data)?;
    let mut values = Vec::new();
    for s in &sets {
        values.extend_from_slice(s.page_set());
    }
    Ok(values.into_pyarray(py))
}

/// The values of a binary column given as numpy views of an Arrow array's buffers.
fn column_values<'a>(
    offsets: &'a PyReadonlyArray1<'_, i32>,
    data: &'a PyReadonlyArray1<'_, u8>,
) -> PyResult<Vec<&'a [u8]>> {
    let offsets = offsets
        .as_slice()
        .map_err(|_| PyTypeError::new_err("offsets must be contiguous"))?;
    let data = data
        .as_slice()
        .map_err(|_| PyTypeError::new_err("data must be contiguous"))?;
    binary_values(offsets, data)
}

/// A column of binary values given as an Arrow array's buffers: `(offsets, data)`.
fn binary_values<'a>(offsets: &'a [i32], data: &'a [u8]) -> PyResult<Vec<&'a [u8]>> {
    let end = offsets.last().copied().unwrap_or(0);
    if offsets.windows(2).any(|w| w[0] > w[1])
        || offsets.first().is_some_and(|&o| o < 0)
        || end as usize > data.len()
    {
        return Err(errors::input("a binary array has offsets past its data"));
    }
    Ok(offsets
        .windows(2)
        .map(|w| &data[w[0] as usize..w[1] as usize])
        .collect())
}

/// Packed sketches of a binary column (its offsets and data buffers). Under exact
/// verification every sketch must carry its set.
pub fn unpack_column(
    config: &Config,
    offsets: &PyReadonlyArray1<'_, i32>,
    data: &PyReadonlyArray1<'_, u8>,
) -> PyResult<Vec<DocumentSketch>> {
    let exact = config.cluster.verify == megashingle::config::Verify::Exact;
    column_values(offsets, data)?
        .into_iter()
        .map(|bytes| {
            let (sketch, has_set) = unpack_sketch(bytes).map_err(errors::pack_error)?;
            if exact && !has_set {
                return Err(errors::input(
                    "a packed sketch without its shingle set cannot be verified exactly \
                     (cluster.verify = \"exact\"): pack it with its set",
                ));
            }
            Ok(sketch)
        })
        .collect()
}

/// The main sets of packed shingle sets, concatenated, and for each shingle the index of
/// the document whose set holds it: `(values` (uint32), `owner` (int64)`)`.
#[pyfunction]
pub fn packed_main_values<'py>(
    py: Python<'py>,
    offsets: PyReadonlyArray1<'py, i32>,
    data: PyReadonlyArray1<'py, u8>,
) -> PyResult<Bound<'py, PyTuple>> {
    let sets = unpack_sets_column(&offsets, &data)?;
    let mut values = Vec::new();
    let mut owner = Vec::new();
    for (document, s) in sets.iter().enumerate() {
        values.extend_from_slice(&s.set);
        owner.resize(values.len(), document as i64);
    }
    PyTuple::new(
        py,
        [
            values.into_pyarray(py).into_any(),
            owner.into_pyarray(py).into_any(),
        ],
    )
}

/// The low byte of each of the first `minima` minima of packed sketches, `minima` bytes a
/// sketch (zeros where a sketch has fewer), as one uint8 array: the values of a fixed-width
/// binary column.
#[pyfunction]
pub fn packed_low_bytes<'py>(
    py: Python<'py>,
    offsets: PyReadonlyArray1<'py, i32>,
    data: PyReadonlyArray1<'py, u8>,
    minima: usize,
) -> PyResult<Bound<'py, PyArray1<u8>>> {
    let values = column_values(&offsets, &data)?;
    let mut out = Vec::with_capacity(values.len() * minima);
    for bytes in values {
        megashingle::packed::low_bytes(bytes, minima, &mut out).map_err(errors::pack_error)?;
    }
    Ok(out.into_pyarray(py))
}

/// Verifies pairs of packed sketches, the first of each pair from one binary column, the
/// second from another (each given as offsets and data): per pair whether it links (passes,
/// or may attach a lone document).
#[pyfunction]
pub fn verify_packed<'py>(
    py: Python<'py>,
    config: PyRef<'py, PyConfig>,
    a_offsets: PyReadonlyArray1<'py, i32>,
    a_data: PyReadonlyArray1<'py, u8>,
    b_offsets: PyReadonlyArray1<'py, i32>,
    b_data: PyReadonlyArray1<'py, u8>,
) -> PyResult<Bound<'py, PyArray1<bool>>> {
    let a = unpack_column(&config.config, &a_offsets, &a_data)?;
    let b = unpack_column(&config.config, &b_offsets, &b_data)?;
    if a.len() != b.len() {
        return Err(errors::input(
            "verify_packed needs as many first as second sketches",
        ));
    }
    let plan = Plan::try_from(&config.config).map_err(errors::library)?;
    let links: Vec<bool> = py.allow_threads(|| {
        a.iter()
            .zip(&b)
            .map(|(x, y)| megashingle::verify_pair(&plan, x, y).links())
            .collect()
    });
    Ok(links.into_pyarray(py))
}

/// [`cluster_group`] over packed sketches (a binary column's offsets and data); with
/// `pairs_a` and `pairs_b` (aligned indices into the group), from those candidate pairs only,
/// as a job that made them over a larger collection has them.
#[pyfunction]
#[pyo3(signature = (config, ids, offsets, data, pairs_a=None, pairs_b=None))]
pub fn cluster_group_packed<'py>(
    py: Python<'py>,
    config: PyRef<'py, PyConfig>,
    ids: Vec<String>,
    offsets: PyReadonlyArray1<'py, i32>,
    data: PyReadonlyArray1<'py, u8>,
    pairs_a: Option<PyReadonlyArray1<'py, i64>>,
    pairs_b: Option<PyReadonlyArray1<'py, i64>>,
) -> PyResult<Vec<GroupRow>> {
    let sketches = unpack_column(&config.config, &offsets, &data)?;
    let pairs = given_pairs(pairs_a, pairs_b, "cluster_group_packed")?;
    group_rows(
        py,
        &config.config,
        &ids,
        sketches,
        pairs,
        "cluster_group_packed",
    )
}

/// A group's candidate pairs given as two aligned arrays of indices into the group, or none;
/// `caller` names the function in the error for arrays that do not go together.
pub fn given_pairs(
    pairs_a: Option<PyReadonlyArray1<'_, i64>>,
    pairs_b: Option<PyReadonlyArray1<'_, i64>>,
    caller: &str,
) -> PyResult<Option<Vec<(usize, usize)>>> {
    match (pairs_a, pairs_b) {
        (None, None) => Ok(None),
        (Some(a), Some(b)) if a.len()? == b.len()? => {
            let index = |v: &i64| {
                usize::try_from(*v)
                    .map_err(|_| errors::input(format!("{caller}: a pair index is negative")))
            };
            let (a, b) = (a.as_array(), b.as_array());
            a.iter()
                .zip(b.iter())
                .map(|(x, y)| Ok((index(x)?, index(y)?)))
                .collect::<PyResult<Vec<_>>>()
                .map(Some)
        }
        _ => Err(errors::input(format!(
            "{caller} needs pairs_a and pairs_b together, of one length"
        ))),
    }
}
