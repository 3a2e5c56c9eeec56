//! `megashingle.cluster` and `megashingle.dedup`: a column of documents through the library's
//! `Clusterer` (the GIL released while it clusters, Ctrl-C stopping it), and its stories or its
//! duplicates as rows.

use megashingle::{Cancel, Clusterer, Clusters, Config, RunOptions};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};

use crate::columns::for_each_document;
use crate::config::{config_or_default, PyConfig};
use crate::errors;
use crate::interrupt::{interruptible, CheckSignals};

#[pyfunction]
#[pyo3(signature = (ids, texts, config=None, times=None, threads=0, strict=false))]
pub fn cluster<'py>(
    py: Python<'py>,
    ids: &Bound<'py, PyAny>,
    texts: &Bound<'py, PyAny>,
    config: Option<PyRef<'py, PyConfig>>,
    times: Option<&Bound<'py, PyAny>>,
    threads: usize,
    strict: bool,
) -> PyResult<Bound<'py, PyList>> {
    let config = config_or_default(config);
    let cancel = Cancel::new();
    let clusters = clusters_of(py, ids, texts, times, &config, threads, strict, &cancel)?;
    let rows = PyList::empty(py);
    let keys = [
        "doc_id",
        "cluster_id",
        "cluster_size",
        "similarity",
        "status",
    ]
    .map(|k| PyString::intern(py, k));
    for a in clusters.assignments() {
        let row = PyDict::new(py);
        row.set_item(&keys[0], a.doc_id)?;
        row.set_item(&keys[1], a.cluster_id)?;
        row.set_item(&keys[2], a.cluster_size)?;
        row.set_item(&keys[3], a.similarity)?;
        row.set_item(&keys[4], a.status.as_str())?;
        rows.append(row)?;
    }
    Ok(rows)
}

#[pyfunction]
#[pyo3(signature = (ids, texts, config=None, times=None, threads=0, strict=false))]
pub fn dedup<'py>(
    py: Python<'py>,
    ids: &Bound<'py, PyAny>,
    texts: &Bound<'py, PyAny>,
    config: Option<PyRef<'py, PyConfig>>,
    times: Option<&Bound<'py, PyAny>>,
    threads: usize,
    strict: bool,
) -> PyResult<Bound<'py, PyList>> {
    let config = config_or_default(config);
    let cancel = Cancel::new();
    let clusters = clusters_of(py, ids, texts, times, &config, threads, strict, &cancel)?;
    let dedup = interruptible(py, &cancel, || clusters.deduplicate(&config.dedup))?
        .map_err(errors::library)?;
    let rows = PyList::empty(py);
    for d in dedup.duplicates() {
        let row = PyDict::new(py);
        row.set_item("doc_id", d.doc_id)?;
        row.set_item("duplicate_of", d.duplicate_of)?;
        row.set_item("similarity", d.similarity())?;
        row.set_item("jaccard", d.jaccard)?;
        row.set_item("containment", d.containment)?;
        rows.append(row)?;
    }
    Ok(rows)
}

/// The stories of the documents of `ids`, `texts` and `times`: read with the GIL held (Ctrl-C
/// checked every few hundred documents while the workers shingle them), then clustered
/// without it.
#[allow(clippy::too_many_arguments)]
fn clusters_of(
    py: Python<'_>,
    ids: &Bound<'_, PyAny>,
    texts: &Bound<'_, PyAny>,
    times: Option<&Bound<'_, PyAny>>,
    config: &Config,
    threads: usize,
    strict: bool,
    cancel: &Cancel,
) -> PyResult<Clusters> {
    let options = RunOptions {
        threads,
        strict,
        cancel: cancel.clone(),
        ..RunOptions::default()
    };
    let mut clusterer = Clusterer::with_options(config, options).map_err(errors::library)?;
    let mut signals = CheckSignals::new(py, cancel);
    for_each_document(ids, texts, times, |id, text, time| {
        signals.every_few()?;
        clusterer.add_timed(id, text, time).map_err(errors::library)
    })?;
    interruptible(py, cancel, || clusterer.finish())?.map_err(errors::library)
}
