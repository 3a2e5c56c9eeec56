//! `megashingle.Index`: a story index on disk through the library's `Index` facade: documents
//! added (a failed first add leaves no file behind), texts looked up, the whole index exported.

use std::path::PathBuf;

use megashingle::{Cancel, Config, RunOptions};
use pyo3::exceptions::PyUserWarning;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::columns::for_each_document;
use crate::config::{config_or_default, PyConfig};
use crate::errors;
use crate::interrupt::{interruptible, CheckSignals};

/// A story index on disk (`megashingle index`). The first query opens the index and keeps it
/// open (and locked against other programs) for the queries after it, until `close()`, an
/// `add`, an `export` or the object's end.
#[pyclass(name = "Index", module = "megashingle", frozen)]
pub struct PyIndex {
    path: PathBuf,
    config: Config,
    open: std::sync::Mutex<Option<megashingle::Index>>,
}

impl PyIndex {
    /// Closes the index a query left open.
    fn close_open(&self) {
        *self.open.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }

    /// `ask` of the index, opened by the first query and kept open (and locked) until
    /// `close`.
    fn with_open<T>(
        &self,
        ask: impl FnOnce(&megashingle::Index) -> megashingle::Result<T>,
    ) -> megashingle::Result<T> {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        if open.is_none() {
            *open = Some(megashingle::Index::open_existing(&self.path)?);
        }
        ask(open.as_ref().expect("opened above"))
    }
}

#[pymethods]
impl PyIndex {
    #[new]
    #[pyo3(signature = (path, config=None))]
    fn new(path: PathBuf, config: Option<PyRef<'_, PyConfig>>) -> PyResult<PyIndex> {
        let config = config_or_default(config);
        config.validate().map_err(errors::library)?;
        Ok(PyIndex {
            path,
            config,
            open: std::sync::Mutex::new(None),
        })
    }

    #[getter]
    fn path(&self) -> PathBuf {
        self.path.clone()
    }

    #[pyo3(signature = (ids, texts, times=None, upsert=false, passages=false))]
    fn add<'py>(
        &self,
        py: Python<'py>,
        ids: &Bound<'py, PyAny>,
        texts: &Bound<'py, PyAny>,
        times: Option<&Bound<'py, PyAny>>,
        upsert: bool,
        passages: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        self.close_open();
        let made = !self.path.exists();
        let mut index = megashingle::Index::open(&self.path).map_err(errors::library)?;
        let cancel = Cancel::new();
        let report = (|| {
            if passages {
                index.keep_passages().map_err(errors::library)?;
            }
            let options = RunOptions {
                cancel: cancel.clone(),
                ..RunOptions::default()
            };
            let mut addition = index
                .begin_add(&self.config, options, upsert)
                .map_err(errors::library)?;
            let mut signals = CheckSignals::new(py, &cancel);
            let added = for_each_document(ids, texts, times, |id, text, time| {
                signals.every_few()?;
                addition.add(id, text, time).map_err(errors::library)
            })?;
            if added == 0 {
                return Err(errors::input(
                    "no documents given: nothing added to the index",
                ));
            }
            interruptible(py, &cancel, || addition.commit())?.map_err(errors::library)
        })();
        drop(index);
        if report.is_err() && made {
            // A failed first add leaves no empty index behind.
            let _ = std::fs::remove_file(&self.path);
        }
        let report = report?;
        if let Some(warning) = &report.not_compacted {
            let warning = std::ffi::CString::new(warning.as_str()).unwrap_or_default();
            PyErr::warn(py, &py.get_type::<PyUserWarning>(), &warning, 1)?;
        }
        let rows = PyList::empty(py);
        for a in report.assignments {
            let row = PyDict::new(py);
            row.set_item("doc_id", a.doc_id)?;
            row.set_item("story_id", a.story_id)?;
            row.set_item("new_story", a.new_story)?;
            row.set_item("similarity", a.similarity)?;
            row.set_item("status", a.status)?;
            rows.append(row)?;
        }
        Ok(rows)
    }

    fn query<'py>(&self, py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyList>> {
        let matches = py
            .allow_threads(|| self.with_open(|index| index.query(&self.config, text)))
            .map_err(errors::library)?;
        let rows = PyList::empty(py);
        for m in matches {
            let row = PyDict::new(py);
            row.set_item("doc_id", m.doc_id)?;
            row.set_item("story_id", m.story_id)?;
            row.set_item("similarity", m.similarity)?;
            row.set_item("containment", m.containment)?;
            rows.append(row)?;
        }
        Ok(rows)
    }

    /// The indexed documents that share a passage with ``text``, as ``megashingle reuse``
    /// finds pairs (the ``[reuse]`` rules of the index's configuration), most shared words
    /// first: a dict with ``matches`` (one dict a document: doc_id, story_id, a_in_b, b_in_a,
    /// shared_words, passages, longest, jaccard, and text_passages, the passages as ranges
    /// ``(start, end)`` of the text's canonical words), ``words`` (the text's canonical
    /// words), ``found_words`` (its words in a shared passage) and ``uniqueness`` (the share
    /// of the text found in no indexed document). Raises IndexFormatError for an index made
    /// without passages.
    fn query_reuse<'py>(&self, py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyDict>> {
        let answer = py
            .allow_threads(|| self.with_open(|index| index.query_reuse(&self.config, text)))
            .map_err(errors::library)?;
        answer_dict(py, &answer)
    }

    /// ``query_reuse`` of each of ``texts``, the answers in their order, asked together as
    /// ``index query --reuse -o`` asks them: the texts' fingerprints are looked up in one
    /// pass over the index, so thousands of texts cost far less than their queries one by
    /// one.
    fn query_reuse_many<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<String>,
    ) -> PyResult<Bound<'py, PyList>> {
        let answers = py
            .allow_threads(|| {
                let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
                self.with_open(|index| index.query_reuse_many(&self.config, &texts))
            })
            .map_err(errors::library)?;
        let out = PyList::empty(py);
        for answer in &answers {
            out.append(answer_dict(py, answer)?)?;
        }
        Ok(out)
    }

    fn export<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        self.close_open();
        let index = megashingle::Index::open_existing(&self.path).map_err(errors::library)?;
        let exported = py
            .allow_threads(|| index.export())
            .map_err(errors::library)?;
        let rows = PyList::empty(py);
        for r in exported {
            let row = PyDict::new(py);
            row.set_item("doc_id", r.doc_id)?;
            row.set_item("story_id", r.story_id)?;
            row.set_item("story_size", r.story_size)?;
            row.set_item("added_at", r.added_at)?;
            rows.append(row)?;
        }
        Ok(rows)
    }

    /// Closes the index if a query left it open, so that other programs may change it.
    fn close(&self) {
        self.close_open();
    }

    fn __repr__(&self) -> String {
        format!("Index({:?})", self.path.display().to_string())
    }
}

/// A reuse answer as Python sees it: ``matches``, ``words``, ``found_words``, ``uniqueness``.
fn answer_dict<'py>(
    py: Python<'py>,
    answer: &megashingle::index::ReuseAnswer,
) -> PyResult<Bound<'py, PyDict>> {
    let matches = PyList::empty(py);
    for m in &answer.matches {
        let row = PyDict::new(py);
        row.set_item("doc_id", &m.doc_id)?;
        row.set_item("story_id", &m.story_id)?;
        row.set_item("a_in_b", m.a_in_b)?;
        row.set_item("b_in_a", m.b_in_a)?;
        row.set_item("shared_words", m.shared_words)?;
        row.set_item("passages", m.passages)?;
        row.set_item("longest", m.longest)?;
        row.set_item("jaccard", m.jaccard)?;
        let ranges: Vec<(usize, usize)> =
            m.text_passages.iter().map(|r| (r.start, r.end)).collect();
        row.set_item("text_passages", ranges)?;
        matches.append(row)?;
    }
    let out = PyDict::new(py);
    out.set_item("matches", matches)?;
    out.set_item("words", answer.words)?;
    out.set_item("found_words", answer.found_words)?;
    out.set_item("uniqueness", answer.uniqueness())?;
    Ok(out)
}
