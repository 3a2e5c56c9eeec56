//! `megashingle.reuse`: a column of documents through the library's `Reuser` (the GIL released
//! while it aligns, Ctrl-C stopping it), and the pairs where one holds a passage of the other
//! as rows, the `reuse` command's columns.

use megashingle::io::table::PAIR_COLUMNS;
use megashingle::{Cancel, Reuser, RunOptions};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};

use crate::columns::for_each_document;
use crate::config::{config_or_default, PyConfig};
use crate::errors;
use crate::interrupt::{interruptible, CheckSignals};

#[pyfunction]
#[pyo3(signature = (ids, texts, config=None, threads=0, strict=false))]
pub fn reuse<'py>(
    py: Python<'py>,
    ids: &Bound<'py, PyAny>,
    texts: &Bound<'py, PyAny>,
    config: Option<PyRef<'py, PyConfig>>,
    threads: usize,
    strict: bool,
) -> PyResult<Bound<'py, PyList>> {
    let config = config_or_default(config);
    let cancel = Cancel::new();
    let options = RunOptions {
        threads,
        strict,
        cancel: cancel.clone(),
        ..RunOptions::default()
    };
    let mut reuser = Reuser::with_options(&config, options).map_err(errors::library)?;
    let mut signals = CheckSignals::new(py, &cancel);
    for_each_document(ids, texts, None, |id, text, _| {
        signals.every_few()?;
        reuser.add(id, text).map_err(errors::library)
    })?;
    let found = interruptible(py, &cancel, || reuser.finish())?.map_err(errors::library)?;
    let keys = PAIR_COLUMNS.map(|k| PyString::intern(py, k));
    let rows = PyList::empty(py);
    for p in found.pairs() {
        let row = PyDict::new(py);
        row.set_item(&keys[0], p.doc_a)?;
        row.set_item(&keys[1], p.doc_b)?;
        row.set_item(&keys[2], p.a_in_b)?;
        row.set_item(&keys[3], p.b_in_a)?;
        row.set_item(&keys[4], p.shared_words)?;
        row.set_item(&keys[5], p.passages)?;
        row.set_item(&keys[6], p.longest)?;
        row.set_item(&keys[7], p.jaccard)?;
        rows.append(row)?;
    }
    Ok(rows)
}
