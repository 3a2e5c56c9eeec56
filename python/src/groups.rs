//! What the Spark job asks of the library for groups of documents: pairs verified from their
//! sketches, a group clustered as the command clusters it, the connected components of candidate
//! pairs, and the rules it applies in Spark's own plan (the bucket rule of candidate pairs and
//! verification's prefilter), each from the library so that the job and the command agree.

use megashingle::{Config, DocumentSketch, Placement, Plan};
use numpy::{IntoPyArray, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::config::PyConfig;
use crate::errors;

/// Sketches given as arrays (minima rows, shingle sets, leads), for the Spark stages.
fn sketches_of(
    minima: &Bound<'_, PyAny>,
    shingles: &Bound<'_, PyAny>,
    leads: &Bound<'_, PyAny>,
    words: &Bound<'_, PyAny>,
) -> PyResult<Vec<DocumentSketch>> {
    let mut out = Vec::new();
    let mut minima = minima.try_iter()?;
    let mut shingles = shingles.try_iter()?;
    let mut leads = leads.try_iter()?;
    let mut words = words.try_iter()?;
    loop {
        let (Some(m), Some(s), Some(l), Some(w)) =
            (minima.next(), shingles.next(), leads.next(), words.next())
        else {
            return Ok(out);
        };
        let minima: Vec<u32> = m?.extract::<PyReadonlyArray1<u32>>()?.as_array().to_vec();
        let shingles: Vec<u32> = s?.extract::<PyReadonlyArray1<u32>>()?.as_array().to_vec();
        let lead: Vec<u32> = l?.extract::<PyReadonlyArray1<u32>>()?.as_array().to_vec();
        let status = if shingles.is_empty() {
            megashingle::Status::TooShort
        } else {
            megashingle::Status::Ok
        };
        out.push(DocumentSketch {
            words: w?.extract()?,
            minima,
            keys: Vec::new(),
            shingles,
            lead,
            status,
        });
    }
}

/// Verifies candidate pairs given as two aligned lists of sketches: per pair, the Jaccard
/// (NaN when below the prefilter), the score (NaN when it fails) and whether it is a weak link.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub fn verify_pairs<'py>(
    py: Python<'py>,
    config: PyRef<'py, PyConfig>,
    minima_a: &Bound<'py, PyAny>,
    shingles_a: &Bound<'py, PyAny>,
    lead_a: &Bound<'py, PyAny>,
    words_a: &Bound<'py, PyAny>,
    minima_b: &Bound<'py, PyAny>,
    shingles_b: &Bound<'py, PyAny>,
    lead_b: &Bound<'py, PyAny>,
    words_b: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyTuple>> {
    let a = sketches_of(minima_a, shingles_a, lead_a, words_a)?;
    let b = sketches_of(minima_b, shingles_b, lead_b, words_b)?;
    if a.len() != b.len() {
        return Err(errors::input(
            "verify_pairs needs as many first as second sketches",
        ));
    }
    let plan = Plan::try_from(&config.config).map_err(errors::library)?;
    let verdicts: Vec<megashingle::PairVerdict> = py.allow_threads(|| {
        use rayon::prelude::*;
        a.par_iter()
            .zip(&b)
            .map(|(x, y)| megashingle::verify_pair(&plan, x, y))
            .collect()
    });
    let jaccard: Vec<f64> = verdicts
        .iter()
        .map(|v| v.jaccard.unwrap_or(f64::NAN))
        .collect();
    let score: Vec<f64> = verdicts
        .iter()
        .map(|v| v.score.unwrap_or(f64::NAN))
        .collect();
    let weak: Vec<bool> = verdicts.iter().map(|v| v.weak).collect();
    PyTuple::new(
        py,
        [
            jaccard.into_pyarray(py).into_any(),
            score.into_pyarray(py).into_any(),
            weak.into_pyarray(py).into_any(),
        ],
    )
}

/// One row of [`cluster_group`]: index in the group, cluster, cluster size, similarity.
pub type GroupRow = (usize, usize, usize, Option<f64>);

/// Clusters one group of sketched documents as the cluster command would cluster them alone:
/// rows of (index in the group, cluster within the group, cluster size, similarity or None),
/// in the command's order.
#[pyfunction]
pub fn cluster_group<'py>(
    py: Python<'py>,
    config: PyRef<'py, PyConfig>,
    ids: Vec<String>,
    minima: &Bound<'py, PyAny>,
    shingles: &Bound<'py, PyAny>,
    leads: &Bound<'py, PyAny>,
    words: &Bound<'py, PyAny>,
) -> PyResult<Vec<GroupRow>> {
    let sketches = sketches_of(minima, shingles, leads, words)?;
    group_rows(py, &config.config, &ids, sketches, None, "cluster_group")
}

/// The rows of one group's clustering ([`cluster_group`], [`cluster_group_packed`]), from its
/// candidate pairs when given (indices into the group); `caller` names the function in the
/// error for a sketch count that is not the id count or a pair outside the group.
pub fn group_rows(
    py: Python<'_>,
    config: &Config,
    ids: &[String],
    sketches: Vec<DocumentSketch>,
    pairs: Option<Vec<(usize, usize)>>,
    caller: &str,
) -> PyResult<Vec<GroupRow>> {
    let placed = group_placements(py, config, ids, &sketches, pairs, caller)?;
    Ok(placed.iter().map(row_of).collect())
}

/// One placement as a row of [`cluster_group`].
pub fn row_of(p: &Placement) -> GroupRow {
    (p.doc, p.cluster, p.cluster_size, p.similarity)
}

/// One group clustered by the library (the GIL released), from its candidate pairs when
/// given; the checks and errors of [`group_rows`].
pub fn group_placements(
    py: Python<'_>,
    config: &Config,
    ids: &[String],
    sketches: &[DocumentSketch],
    pairs: Option<Vec<(usize, usize)>>,
    caller: &str,
) -> PyResult<Vec<Placement>> {
    if sketches.len() != ids.len() {
        return Err(errors::input(format!("{caller} needs one sketch per id")));
    }
    if let Some(&(a, b)) = pairs
        .iter()
        .flatten()
        .find(|&&(a, b)| a.max(b) >= ids.len())
    {
        return Err(errors::input(format!(
            "{caller}: the pair ({a}, {b}) is outside the group of {} documents",
            ids.len()
        )));
    }
    py.allow_threads(|| {
        let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
        match &pairs {
            Some(pairs) => megashingle::cluster_group_with_pairs(config, &refs, sketches, pairs),
            None => megashingle::cluster_group(config, &refs, sketches),
        }
    })
    .map_err(errors::library)
}

/// Connected components of an edge list (two aligned arrays of vertex numbers): the vertices
/// that are in an edge, sorted, and each one's component as the component's smallest vertex
/// (the library's union-find).
#[pyfunction]
pub fn components<'py>(
    py: Python<'py>,
    a: PyReadonlyArray1<'py, i64>,
    b: PyReadonlyArray1<'py, i64>,
) -> PyResult<Bound<'py, PyTuple>> {
    let (a, b) = (a.as_array(), b.as_array());
    if a.len() != b.len() {
        return Err(errors::input(
            "components needs as many first as second vertices",
        ));
    }
    let (a, b): (Vec<i64>, Vec<i64>) = (a.to_vec(), b.to_vec());
    let (nodes, roots) = py.allow_threads(|| megashingle::cluster::join::edge_components(&a, &b));
    PyTuple::new(
        py,
        [
            nodes.into_pyarray(py).into_any(),
            roots.into_pyarray(py).into_any(),
        ],
    )
}

/// What a bucket of `distinct` documents (none of them a copy) gives under
/// `cluster.max-bucket` = `max_bucket`: `"cut"` (nothing), `"all_pairs"`, or `"star"` (each
/// document paired with the bucket's first in the command's order).
#[pyfunction]
pub fn bucket_rule(distinct: usize, max_bucket: usize) -> &'static str {
    use megashingle::cluster::candidates::BucketRule;
    match megashingle::cluster::candidates::bucket_rule(distinct, distinct, max_bucket) {
        BucketRule::Cut => "cut",
        BucketRule::AllPairs => "all_pairs",
        BucketRule::Star => "star",
    }
}

/// The estimated Jaccard below which verification rejects a pair before anything else.
#[pyfunction]
pub fn verification_prefilter(config: PyRef<'_, PyConfig>) -> PyResult<f64> {
    let plan = Plan::try_from(&config.config).map_err(errors::library)?;
    Ok(plan.verifier.prefilter)
}
