//! The Python extension `megashingle._megashingle`: a thin pyo3 layer over the library's
//! facade (`Config`, `Clusterer` and its deduplication, `compare`, `canon`, `DocumentSketcher`,
//! `verify_pair`, `cluster_group`, `Index`). It converts arguments and results and releases the
//! GIL around long calls; every stage runs in the Rust crate. The Python package
//! (`megashingle/__init__.py`) prepares text columns (iterables, pandas Series, pyarrow string
//! arrays read through their buffers) and gives the public names.

use std::borrow::Cow;
use std::path::PathBuf;

use megashingle::sketch::shingle::Lead;
use megashingle::sketch::{ShingleSets, TextOutline};
use megashingle::{Clusterer, Config, DocumentSketch, DocumentSketcher, RunOptions};
use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1};
use pyo3::exceptions::{PyTypeError, PyUserWarning, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

/// A library error as a Python `ValueError` carrying the library's message.
fn value_error(error: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(error.to_string())
}

/// A pipeline configuration: the keys of `pipeline.toml`.
#[pyclass(name = "Config", module = "megashingle", frozen)]
#[derive(Clone)]
struct PyConfig {
    config: Config,
}

/// A Python value as the right-hand side of a `KEY=VALUE` setting (TOML).
fn toml_literal(value: &Bound<'_, PyAny>) -> PyResult<String> {
    fn to_toml(value: &Bound<'_, PyAny>) -> PyResult<toml::Value> {
        if value.is_instance_of::<PyBool>() {
            return Ok(toml::Value::Boolean(value.extract()?));
        }
        if value.is_instance_of::<PyInt>() {
            return Ok(toml::Value::Integer(value.extract()?));
        }
        if value.is_instance_of::<PyFloat>() {
            return Ok(toml::Value::Float(value.extract()?));
        }
        if value.is_instance_of::<PyString>() {
            return Ok(toml::Value::String(value.extract()?));
        }
        if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
            let items: PyResult<Vec<toml::Value>> =
                value.try_iter()?.map(|item| to_toml(&item?)).collect();
            return Ok(toml::Value::Array(items?));
        }
        Err(PyTypeError::new_err(format!(
            "a setting's value must be a bool, int, float, str or list, not {}",
            value.get_type().name()?
        )))
    }
    Ok(to_toml(value)?.to_string())
}

/// The dotted key (`cluster.min-similarity`) of a setting named in Python: a dotted key is
/// taken as it is; a bare name (`min_similarity`) is looked up in every section and must
/// name exactly one key.
fn dotted_key(config: &Config, name: &str) -> PyResult<String> {
    if name.contains('.') {
        return Ok(name.to_owned());
    }
    let wanted = name.replace('_', "-");
    let table = toml::Table::try_from(config).expect("a Config always serializes");
    // A key named bare (`min_similarity`) or after its section (`shingle_size`).
    let sections: Vec<(&String, String)> = table
        .iter()
        .filter_map(|(section, v)| {
            let keys = v.as_table()?;
            if keys.contains_key(&wanted) {
                return Some((section, wanted.clone()));
            }
            let rest = wanted.strip_prefix(section.as_str())?.strip_prefix('-')?;
            keys.contains_key(rest).then(|| (section, rest.to_owned()))
        })
        .collect();
    match sections.as_slice() {
        [(section, key)] => Ok(format!("{section}.{key}")),
        [] => Err(PyValueError::new_err(format!(
            "{name}: no such setting; settings are the keys of pipeline.toml, such as \
             min_similarity or shingle_size, or dotted keys like \"cluster.min-similarity\""
        ))),
        many => Err(PyValueError::new_err(format!(
            "{name}: the key is in several sections ({}); give it as a dotted key, e.g. \
             \"{}.{wanted}\"",
            many.iter()
                .map(|s| s.0.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            many[0].0
        ))),
    }
}

/// Every setting of a configuration as its dotted key and TOML value, in key order.
fn settings_of(config: &Config) -> std::collections::BTreeMap<String, String> {
    let table = toml::Table::try_from(config).expect("a Config always serializes");
    let mut out = std::collections::BTreeMap::new();
    for (section, keys) in &table {
        match keys.as_table() {
            Some(keys) => {
                for (key, value) in keys {
                    out.insert(format!("{section}.{key}"), value.to_string());
                }
            }
            None => {
                out.insert(section.clone(), keys.to_string());
            }
        }
    }
    out
}

/// Applies settings (name → value) to a configuration and checks the result.
fn apply_settings(mut config: Config, settings: &Bound<'_, PyDict>) -> PyResult<Config> {
    for (name, value) in settings.iter() {
        let name: String = name.extract()?;
        let key = dotted_key(&config, &name)?;
        let setting = format!("{key}={}", toml_literal(&value)?);
        config = config.with_setting(&setting).map_err(value_error)?;
    }
    config.validate().map_err(value_error)?;
    Ok(config)
}

#[pymethods]
impl PyConfig {
    #[new]
    #[pyo3(signature = (settings=None, **overrides))]
    fn new(
        settings: Option<&Bound<'_, PyDict>>,
        overrides: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyConfig> {
        let mut config = Config::default();
        for given in [settings, overrides].into_iter().flatten() {
            config = apply_settings(config, given)?;
        }
        Ok(PyConfig { config })
    }

    #[staticmethod]
    #[pyo3(signature = (path, settings=None, **overrides))]
    fn from_file(
        path: PathBuf,
        settings: Option<&Bound<'_, PyDict>>,
        overrides: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyConfig> {
        let mut config = Config::from_file(&path).map_err(value_error)?;
        config.validate().map_err(value_error)?;
        for given in [settings, overrides].into_iter().flatten() {
            config = apply_settings(config, given)?;
        }
        Ok(PyConfig { config })
    }

    #[pyo3(signature = (settings=None, **overrides))]
    fn replace(
        &self,
        settings: Option<&Bound<'_, PyDict>>,
        overrides: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyConfig> {
        let mut config = self.config.clone();
        for given in [settings, overrides].into_iter().flatten() {
            config = apply_settings(config, given)?;
        }
        Ok(PyConfig { config })
    }

    fn get(&self, key: &str) -> PyResult<String> {
        let key = dotted_key(&self.config, key)?;
        let table = toml::Table::try_from(&self.config).expect("a Config always serializes");
        let mut at = toml::Value::Table(table);
        for part in key.split('.') {
            at = at
                .get(part)
                .cloned()
                .ok_or_else(|| PyValueError::new_err(format!("{key}: no such setting")))?;
        }
        Ok(at.to_string())
    }

    fn to_toml(&self) -> String {
        self.config.to_toml()
    }

    /// The settings that differ from the defaults, as dotted keys.
    fn __repr__(&self) -> String {
        let defaults = settings_of(&Config::default());
        let changed: Vec<String> = settings_of(&self.config)
            .into_iter()
            .filter(|(key, value)| defaults.get(key) != Some(value))
            .map(|(key, value)| format!("{key}={value}"))
            .collect();
        format!("Config({})", changed.join(", "))
    }

    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let from_toml = py.import("megashingle")?.getattr("_config_from_toml")?;
        (from_toml, (self.config.to_toml(),))
            .into_pyobject(py)
            .map(|t| t.into_any())
    }
}

#[pyfunction]
fn config_from_toml(text: &str) -> PyResult<PyConfig> {
    let config =
        Config::from_toml(text, std::path::Path::new("<pickled config>")).map_err(value_error)?;
    Ok(PyConfig { config })
}

fn config_or_default(config: Option<PyRef<'_, PyConfig>>) -> Config {
    config.map(|c| c.config.clone()).unwrap_or_default()
}

/// A column of texts: the values of pyarrow string arrays read from their buffers, or the
/// items of any Python iterable of `str`.
enum Column<'py> {
    Arrow {
        chunks: Vec<ArrowChunk<'py>>,
        chunk: usize,
        row: usize,
    },
    Items(Bound<'py, pyo3::types::PyIterator>),
}

/// One string array: its value offsets and its data buffer, viewed in place as a numpy
/// `uint8` array (held, so it cannot move; the limited API of Python 3.9 has no buffer
/// protocol, numpy's own API reads it).
struct ArrowChunk<'py> {
    offsets: Vec<i64>,
    data: PyReadonlyArray1<'py, u8>,
}

impl ArrowChunk<'_> {
    fn bytes(&self) -> &[u8] {
        self.data.as_slice().expect("checked contiguous when made")
    }
}

impl<'py> Column<'py> {
    /// `("arrow", [(offsets, data), ...])` as the package prepares it, or an iterable.
    fn new(source: &Bound<'py, PyAny>) -> PyResult<Column<'py>> {
        if let Ok(tuple) = source.downcast::<PyTuple>() {
            if tuple.len() == 2
                && tuple.get_item(0)?.extract::<String>().ok().as_deref() == Some("arrow")
            {
                let mut chunks = Vec::new();
                for chunk in tuple.get_item(1)?.try_iter()? {
                    let chunk = chunk?;
                    let offsets_obj = chunk.get_item(0)?;
                    let offsets: Vec<i64> = match offsets_obj.extract::<PyReadonlyArray1<i32>>() {
                        Ok(a) => a.as_array().iter().map(|&o| i64::from(o)).collect(),
                        Err(_) => offsets_obj
                            .extract::<PyReadonlyArray1<i64>>()?
                            .as_array()
                            .to_vec(),
                    };
                    let data: PyReadonlyArray1<'py, u8> = chunk.get_item(1)?.extract()?;
                    let Ok(bytes) = data.as_slice() else {
                        return Err(PyTypeError::new_err(
                            "an arrow data buffer must be contiguous",
                        ));
                    };
                    let end = offsets.last().copied().unwrap_or(0);
                    if offsets.windows(2).any(|w| w[0] > w[1])
                        || end as usize > bytes.len()
                        || offsets.first().is_some_and(|&o| o < 0)
                    {
                        return Err(PyValueError::new_err(
                            "an arrow string array has offsets past its data",
                        ));
                    }
                    chunks.push(ArrowChunk { offsets, data });
                }
                return Ok(Column::Arrow {
                    chunks,
                    chunk: 0,
                    row: 0,
                });
            }
        }
        Ok(Column::Items(source.try_iter()?))
    }

    /// The next text; `None` at the end. `what` names the column in errors.
    fn next(&mut self, what: &str, position: u64) -> PyResult<Option<Cow<'_, str>>> {
        match self {
            Column::Arrow { chunks, chunk, row } => {
                while *chunk < chunks.len() && *row + 1 >= chunks[*chunk].offsets.len() {
                    *chunk += 1;
                    *row = 0;
                }
                let Some(current) = chunks.get(*chunk) else {
                    return Ok(None);
                };
                let (start, end) = (
                    current.offsets[*row] as usize,
                    current.offsets[*row + 1] as usize,
                );
                *row += 1;
                let text = std::str::from_utf8(&current.bytes()[start..end]).map_err(|e| {
                    PyValueError::new_err(format!("{what} {position}: not UTF-8 ({e})"))
                })?;
                Ok(Some(Cow::Borrowed(text)))
            }
            Column::Items(items) => match items.next() {
                None => Ok(None),
                Some(item) => {
                    let item = item?;
                    let text = item.downcast::<PyString>().map_err(|_| {
                        PyTypeError::new_err(format!(
                            "{what} {position}: expected str, got {}",
                            item.get_type()
                                .name()
                                .map(|n| n.to_string())
                                .unwrap_or_default()
                        ))
                    })?;
                    Ok(Some(Cow::Owned(text.to_cow()?.into_owned())))
                }
            },
        }
    }
}

/// Reads ids, texts and times in step, calling `take` for each document.
fn for_each_document(
    ids: &Bound<'_, PyAny>,
    texts: &Bound<'_, PyAny>,
    times: Option<&Bound<'_, PyAny>>,
    mut take: impl FnMut(String, &str, Option<i64>) -> PyResult<()>,
) -> PyResult<u64> {
    let mut ids = Column::new(ids)?;
    let mut texts = Column::new(texts)?;
    let mut times = times.map(|t| t.try_iter()).transpose()?;
    let mut position = 0u64;
    loop {
        position += 1;
        let id = ids.next("id", position)?.map(Cow::into_owned);
        let text = texts.next("text", position)?;
        let time = match times.as_mut().map(|t| t.next()) {
            Some(Some(time)) => time?.extract::<Option<i64>>().map_err(|_| {
                PyTypeError::new_err(format!(
                    "time {position}: expected an int (seconds since 1970, UTC) or None"
                ))
            })?,
            Some(None) if id.is_some() => {
                return Err(PyValueError::new_err(format!(
                    "times ended at document {position}: give one time (or None) per document"
                )))
            }
            _ => None,
        };
        match (id, text) {
            (Some(id), Some(text)) => take(id, &text, time)?,
            (None, None) => return Ok(position - 1),
            (Some(_), None) => {
                return Err(PyValueError::new_err(format!(
                    "texts ended at document {position} while ids go on: give one text per id"
                )))
            }
            (None, Some(_)) => {
                return Err(PyValueError::new_err(format!(
                    "ids ended at document {position} while texts go on: give one id per text"
                )))
            }
        }
    }
}

#[pyfunction]
#[pyo3(signature = (ids, texts, config=None, times=None, threads=0, strict=false))]
fn cluster<'py>(
    py: Python<'py>,
    ids: &Bound<'py, PyAny>,
    texts: &Bound<'py, PyAny>,
    config: Option<PyRef<'py, PyConfig>>,
    times: Option<&Bound<'py, PyAny>>,
    threads: usize,
    strict: bool,
) -> PyResult<Bound<'py, PyList>> {
    let config = config_or_default(config);
    let options = RunOptions {
        threads,
        strict,
        ..RunOptions::default()
    };
    let mut clusterer = Clusterer::with_options(&config, options).map_err(value_error)?;
    for_each_document(ids, texts, times, |id, text, time| {
        clusterer.add_timed(id, text, time).map_err(value_error)
    })?;
    let clusters = py
        .allow_threads(|| clusterer.finish())
        .map_err(value_error)?;
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
fn dedup<'py>(
    py: Python<'py>,
    ids: &Bound<'py, PyAny>,
    texts: &Bound<'py, PyAny>,
    config: Option<PyRef<'py, PyConfig>>,
    times: Option<&Bound<'py, PyAny>>,
    threads: usize,
    strict: bool,
) -> PyResult<Bound<'py, PyList>> {
    let config = config_or_default(config);
    let options = RunOptions {
        threads,
        strict,
        ..RunOptions::default()
    };
    let mut clusterer = Clusterer::with_options(&config, options).map_err(value_error)?;
    for_each_document(ids, texts, times, |id, text, time| {
        clusterer.add_timed(id, text, time).map_err(value_error)
    })?;
    let clusters = py
        .allow_threads(|| clusterer.finish())
        .map_err(value_error)?;
    let dedup = py
        .allow_threads(|| clusters.deduplicate(&config.dedup))
        .map_err(value_error)?;
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

/// A JSON value as Python objects.
fn json_to_py<'py>(py: Python<'py>, value: &serde_json::Value) -> PyResult<Bound<'py, PyAny>> {
    use serde_json::Value;
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => i.into_pyobject(py)?.into_any(),
            (None, Some(u)) => u.into_pyobject(py)?.into_any(),
            _ => n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any(),
        },
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(json_to_py(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (k, v) in map {
                dict.set_item(k, json_to_py(py, v)?)?;
            }
            dict.into_any()
        }
    })
}

#[pyfunction]
#[pyo3(signature = (first, second, config=None))]
fn compare<'py>(
    py: Python<'py>,
    first: &str,
    second: &str,
    config: Option<PyRef<'py, PyConfig>>,
) -> PyResult<Bound<'py, PyAny>> {
    let config = config_or_default(config);
    let comparison = py
        .allow_threads(|| megashingle::compare(&config, first, second))
        .map_err(value_error)?;
    let json = serde_json::to_value(&comparison).map_err(value_error)?;
    json_to_py(py, &json)
}

#[pyfunction]
#[pyo3(signature = (text, config=None))]
fn canon(py: Python<'_>, text: &str, config: Option<PyRef<'_, PyConfig>>) -> PyResult<String> {
    let config = config_or_default(config);
    config.validate().map_err(value_error)?;
    Ok(py.allow_threads(|| megashingle::canon(&config, text)))
}

/// One document's sketch.
#[pyclass(name = "Sketch", module = "megashingle", frozen)]
struct PySketch {
    sketch: DocumentSketch,
}

#[pymethods]
impl PySketch {
    #[getter]
    fn minima<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u32>> {
        PyArray1::from_slice(py, &self.sketch.minima)
    }
    #[getter]
    fn keys<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u64>> {
        PyArray1::from_slice(py, &self.sketch.keys)
    }
    #[getter]
    fn shingles<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u32>> {
        PyArray1::from_slice(py, &self.sketch.shingles)
    }
    #[getter]
    fn lead<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u32>> {
        PyArray1::from_slice(py, &self.sketch.lead)
    }
    #[getter]
    fn words(&self) -> u32 {
        self.sketch.words
    }
    #[getter]
    fn status(&self) -> &'static str {
        self.sketch.status.as_str()
    }
    fn __repr__(&self) -> String {
        format!(
            "Sketch(status={:?}, words={}, shingles={}, keys={})",
            self.sketch.status.as_str(),
            self.sketch.words,
            self.sketch.shingles.len(),
            self.sketch.keys.len()
        )
    }
}

/// `f` over the texts of a Python column, with the GIL released while it runs.
fn on_texts<T: Send, E: std::fmt::Display + Send>(
    py: Python<'_>,
    texts: &Bound<'_, PyAny>,
    f: impl FnOnce(&[&str]) -> Result<T, E> + Send,
) -> PyResult<T> {
    let texts = collect_texts(texts)?;
    py.allow_threads(|| {
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        f(&refs)
    })
    .map_err(value_error)
}

/// Texts of a column, owned, for work without the GIL.
fn collect_texts(texts: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    let mut column = Column::new(texts)?;
    let mut all = Vec::new();
    let mut position = 0;
    loop {
        position += 1;
        match column.next("text", position)? {
            Some(t) => all.push(t.into_owned()),
            None => return Ok(all),
        }
    }
}

/// Lists of variable length as one flat array and offsets (n + 1).
fn flat<'py, 'a, T: numpy::Element + Copy + 'a>(
    py: Python<'py>,
    lists: impl Iterator<Item = &'a [T]>,
) -> (Bound<'py, PyArray1<T>>, Bound<'py, PyArray1<i64>>) {
    let mut offsets = vec![0i64];
    let mut values = Vec::new();
    for list in lists {
        values.extend_from_slice(list);
        offsets.push(values.len() as i64);
    }
    (values.into_pyarray(py), offsets.into_pyarray(py))
}

#[pyclass(name = "Sketcher", module = "megashingle", frozen)]
struct PySketcher {
    sketcher: DocumentSketcher,
    config: Config,
}

#[pymethods]
impl PySketcher {
    #[new]
    #[pyo3(signature = (config=None, boilerplate=None, threads=0))]
    fn new(
        config: Option<PyRef<'_, PyConfig>>,
        boilerplate: Option<PyReadonlyArray1<'_, u32>>,
        threads: usize,
    ) -> PyResult<PySketcher> {
        let config = config_or_default(config);
        let mut sketcher = DocumentSketcher::new(&config)
            .map_err(value_error)?
            .with_threads(threads);
        if let Some(keys) = boilerplate {
            sketcher = sketcher.with_boilerplate(keys.as_array().iter().copied());
        }
        Ok(PySketcher { sketcher, config })
    }

    fn sketch(&self, py: Python<'_>, text: &str) -> PySketch {
        PySketch {
            sketch: py.allow_threads(|| self.sketcher.sketch(text)),
        }
    }

    fn sketch_batch<'py>(
        &self,
        py: Python<'py>,
        texts: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let sketches = on_texts(py, texts, |refs| self.sketcher.sketch_batch(refs))?;
        let minima_len = self.config.signature.minima;
        let mut minima = Array2::<u32>::zeros((sketches.len(), minima_len));
        for (mut row, s) in minima.rows_mut().into_iter().zip(&sketches) {
            row.as_slice_mut()
                .expect("rows are contiguous")
                .copy_from_slice(&s.minima);
        }
        let out = PyDict::new(py);
        out.set_item("minima", PyArray2::from_owned_array(py, minima))?;
        let (keys, key_offsets) = flat(py, sketches.iter().map(|s| s.keys.as_slice()));
        out.set_item("keys", keys)?;
        out.set_item("key_offsets", key_offsets)?;
        let (shingles, offsets) = flat(py, sketches.iter().map(|s| s.shingles.as_slice()));
        out.set_item("shingles", shingles)?;
        out.set_item("shingle_offsets", offsets)?;
        let (lead, offsets) = flat(py, sketches.iter().map(|s| s.lead.as_slice()));
        out.set_item("lead", lead)?;
        out.set_item("lead_offsets", offsets)?;
        let words: Vec<u32> = sketches.iter().map(|s| s.words).collect();
        out.set_item("words", words.into_pyarray(py))?;
        let ok: Vec<bool> = sketches
            .iter()
            .map(|s| s.status == megashingle::Status::Ok)
            .collect();
        out.set_item("comparable", ok.into_pyarray(py))?;
        Ok(out)
    }

    /// The shingle sets of many texts, read once, as packed binary values (see
    /// `pack_sets`): `(offsets` (int32), `data` (uint8)`)`. Document frequency counts them
    /// (`packed_page_values`) and `sketch_sets_packed` sketches them, without the texts.
    fn shingle_packed<'py>(
        &self,
        py: Python<'py>,
        texts: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let sets = on_texts(py, texts, |refs| self.sketcher.shingle_batch(refs))?;
        let mut data = Vec::new();
        let mut offsets = vec![0i32];
        for s in &sets {
            pack_sets(s, &mut data);
            offsets.push(batch_end(&data)?);
        }
        PyTuple::new(
            py,
            [
                offsets.into_pyarray(py).into_any(),
                data.into_pyarray(py).into_any(),
            ],
        )
    }

    /// The sketches of texts given by their packed shingle sets (`shingle_packed`'s offsets and
    /// data), as packed binary values (see `packed_sketches`); the texts are not read again.
    #[pyo3(signature = (offsets, data, with_sets=true))]
    fn sketch_sets_packed<'py>(
        &self,
        py: Python<'py>,
        offsets: PyReadonlyArray1<'py, i32>,
        data: PyReadonlyArray1<'py, u8>,
        with_sets: bool,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let sets = unpack_sets_column(&offsets, &data)?;
        let sketches = py
            .allow_threads(|| self.sketcher.sketch_sets_batch(&sets))
            .map_err(value_error)?;
        packed_sketches(py, &sketches, with_sets)
    }

    fn page_sets<'py>(
        &self,
        py: Python<'py>,
        texts: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let sets = on_texts(py, texts, |refs| self.sketcher.page_sets(refs))?;
        let (values, offsets) = flat(py, sets.iter().map(Vec::as_slice));
        PyTuple::new(py, [values.into_any(), offsets.into_any()])
    }
}

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
fn verify_pairs<'py>(
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
        return Err(PyValueError::new_err(
            "verify_pairs needs as many first as second sketches",
        ));
    }
    let config = config.config.clone();
    let verdicts: Vec<megashingle::PairVerdict> = py.allow_threads(|| {
        use rayon::prelude::*;
        a.par_iter()
            .zip(&b)
            .map(|(x, y)| megashingle::verify_pair(&config, x, y))
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
type GroupRow = (usize, usize, usize, Option<f64>);

/// Clusters one group of sketched documents as the cluster command would cluster them alone:
/// rows of (index in the group, cluster within the group, cluster size, similarity or None),
/// in the command's order.
#[pyfunction]
fn cluster_group<'py>(
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
fn group_rows(
    py: Python<'_>,
    config: &Config,
    ids: &[String],
    sketches: Vec<DocumentSketch>,
    pairs: Option<Vec<(usize, usize)>>,
    caller: &str,
) -> PyResult<Vec<GroupRow>> {
    if sketches.len() != ids.len() {
        return Err(PyValueError::new_err(format!(
            "{caller} needs one sketch per id"
        )));
    }
    if let Some(&(a, b)) = pairs
        .iter()
        .flatten()
        .find(|&&(a, b)| a.max(b) >= ids.len())
    {
        return Err(PyValueError::new_err(format!(
            "{caller}: the pair ({a}, {b}) is outside the group of {} documents",
            ids.len()
        )));
    }
    let config = config.clone();
    let placed = py
        .allow_threads(|| {
            let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
            match &pairs {
                Some(pairs) => {
                    megashingle::cluster_group_with_pairs(&config, &refs, &sketches, pairs)
                }
                None => megashingle::cluster_group(&config, &refs, &sketches),
            }
        })
        .map_err(value_error)?;
    Ok(placed
        .into_iter()
        .map(|p| (p.doc, p.cluster, p.cluster_size, p.similarity))
        .collect())
}

/// The end of a packed batch so far, as an Arrow binary offset.
fn batch_end(data: &[u8]) -> PyResult<i32> {
    i32::try_from(data.len()).map_err(|_| {
        PyValueError::new_err("a batch of packed values passes 2 GB: give smaller batches")
    })
}

/// Sketches as `sketch_sets_packed` returns them: `(offsets, data, keys, key_offsets, comparable)`.
fn packed_sketches<'py>(
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

/// A text's shingle sets packed as little-endian `u32`s: words, the lengths of the lead, of
/// the main set and of the page set (`u32::MAX` when there is none), then the lead, the main
/// set and the page set. The Spark job keeps each document's sets in this form after reading
/// its text once.
fn pack_sets(sets: &ShingleSets, out: &mut Vec<u8>) {
    let lead = sets.outline.lead.keys();
    let page = sets.page.as_deref();
    let head = [
        sets.outline.words,
        lead.len() as u32,
        sets.set.len() as u32,
        page.map_or(u32::MAX, |p| p.len() as u32),
    ];
    for value in head
        .iter()
        .chain(lead)
        .chain(&sets.set)
        .chain(page.unwrap_or(&[]))
    {
        out.extend_from_slice(&value.to_le_bytes());
    }
}

/// Packed shingle sets (see [`pack_sets`]) read back.
fn unpack_sets(bytes: &[u8]) -> PyResult<ShingleSets> {
    const HEAD: usize = 4;
    let bad = || PyValueError::new_err("packed shingle sets are cut short or malformed");
    if !bytes.len().is_multiple_of(4) || bytes.len() < HEAD * 4 {
        return Err(bad());
    }
    let values: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let (lead, set) = (values[1] as usize, values[2] as usize);
    let page = (values[3] != u32::MAX).then_some(values[3] as usize);
    if values.len() != HEAD + lead + set + page.unwrap_or(0) {
        return Err(bad());
    }
    let body = &values[HEAD..];
    Ok(ShingleSets {
        outline: TextOutline {
            words: values[0],
            lead: Lead::of(&body[..lead]),
        },
        set: body[lead..lead + set].to_vec(),
        page: page.map(|p| body[lead + set..lead + set + p].to_vec()),
    })
}

/// The packed shingle sets of a binary column (its offsets and data buffers).
fn unpack_sets_column(
    offsets: &PyReadonlyArray1<'_, i32>,
    data: &PyReadonlyArray1<'_, u8>,
) -> PyResult<Vec<ShingleSets>> {
    let offsets = offsets
        .as_slice()
        .map_err(|_| PyTypeError::new_err("offsets must be contiguous"))?;
    let data = data
        .as_slice()
        .map_err(|_| PyTypeError::new_err("data must be contiguous"))?;
    binary_values(offsets, data)?
        .into_iter()
        .map(unpack_sets)
        .collect()
}

/// The page sets (what document frequency counts: the page's set, else the main set) of
/// packed shingle sets, concatenated: each set's shingles are distinct, so how often a
/// shingle occurs here is how many of these documents hold it.
#[pyfunction]
fn packed_page_values<'py>(
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

/// One sketch packed as little-endian `u32`s: words, flags (1: comparable), the counts of
/// minima, of the shingle set, of the set's shingles stored here and of lead keys, then the
/// minima, the stored shingles and the lead. The Spark job moves sketches in this form (one
/// binary value per document); a sketch for estimated verification may leave its set out
/// (stored count 0) and keep its size.
fn pack_sketch(sketch: &DocumentSketch, with_sets: bool, out: &mut Vec<u8>) {
    let shingles: &[u32] = if with_sets { &sketch.shingles } else { &[] };
    let comparable = u32::from(sketch.status == megashingle::Status::Ok);
    let head = [
        sketch.words,
        comparable,
        sketch.minima.len() as u32,
        sketch.shingles.len() as u32,
        shingles.len() as u32,
        sketch.lead.len() as u32,
    ];
    for value in head
        .iter()
        .chain(&sketch.minima)
        .chain(shingles)
        .chain(&sketch.lead)
    {
        out.extend_from_slice(&value.to_le_bytes());
    }
}

/// A packed sketch (see [`pack_sketch`]) read back: `None` for its set when it was left out
/// (the set then holds placeholders of the right size, for estimated verification only).
fn unpack_sketch(bytes: &[u8]) -> PyResult<(DocumentSketch, bool)> {
    const HEAD: usize = 6;
    let bad = || PyValueError::new_err("a packed sketch is cut short or malformed");
    if !bytes.len().is_multiple_of(4) || bytes.len() < HEAD * 4 {
        return Err(bad());
    }
    let values: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let (minima, set_len, stored, lead) = (
        values[2] as usize,
        values[3] as usize,
        values[4] as usize,
        values[5] as usize,
    );
    if values.len() != HEAD + minima + stored + lead || (stored != 0 && stored != set_len) {
        return Err(bad());
    }
    let body = &values[HEAD..];
    let has_set = stored == set_len;
    let shingles = if has_set {
        body[minima..minima + stored].to_vec()
    } else {
        vec![0; set_len]
    };
    let sketch = DocumentSketch {
        words: values[0],
        minima: body[..minima].to_vec(),
        keys: Vec::new(),
        shingles,
        lead: body[minima + stored..].to_vec(),
        status: if values[1] & 1 == 1 {
            megashingle::Status::Ok
        } else {
            megashingle::Status::TooShort
        },
    };
    Ok((sketch, has_set))
}

/// A column of binary values given as an Arrow array's buffers: `(offsets, data)`.
fn binary_values<'a>(offsets: &'a [i32], data: &'a [u8]) -> PyResult<Vec<&'a [u8]>> {
    let end = offsets.last().copied().unwrap_or(0);
    if offsets.windows(2).any(|w| w[0] > w[1])
        || offsets.first().is_some_and(|&o| o < 0)
        || end as usize > data.len()
    {
        return Err(PyValueError::new_err(
            "a binary array has offsets past its data",
        ));
    }
    Ok(offsets
        .windows(2)
        .map(|w| &data[w[0] as usize..w[1] as usize])
        .collect())
}

/// Packed sketches of a binary column (its offsets and data buffers). Under exact
/// verification every sketch must carry its set.
fn unpack_column(
    config: &Config,
    offsets: &PyReadonlyArray1<'_, i32>,
    data: &PyReadonlyArray1<'_, u8>,
) -> PyResult<Vec<DocumentSketch>> {
    let offsets = offsets
        .as_slice()
        .map_err(|_| PyTypeError::new_err("offsets must be contiguous"))?;
    let data = data
        .as_slice()
        .map_err(|_| PyTypeError::new_err("data must be contiguous"))?;
    let exact = config.cluster.verify == megashingle::config::Verify::Exact;
    binary_values(offsets, data)?
        .into_iter()
        .map(|bytes| {
            let (sketch, has_set) = unpack_sketch(bytes)?;
            if exact && !has_set {
                return Err(PyValueError::new_err(
                    "a packed sketch without its shingle set cannot be verified exactly \
                     (cluster.verify = \"exact\"): pack it with its set",
                ));
            }
            Ok(sketch)
        })
        .collect()
}

/// Verifies pairs of packed sketches, the first of each pair from one binary column, the
/// second from another (each given as offsets and data): per pair whether it links (passes,
/// or may attach a lone document).
#[pyfunction]
fn verify_packed<'py>(
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
        return Err(PyValueError::new_err(
            "verify_packed needs as many first as second sketches",
        ));
    }
    let config = config.config.clone();
    let links: Vec<bool> = py.allow_threads(|| {
        a.iter()
            .zip(&b)
            .map(|(x, y)| megashingle::verify_pair(&config, x, y).links())
            .collect()
    });
    Ok(links.into_pyarray(py))
}

/// [`cluster_group`] over packed sketches (a binary column's offsets and data); with
/// `pairs_a` and `pairs_b` (aligned indices into the group), from those candidate pairs only,
/// as a job that made them over a larger collection has them.
#[pyfunction]
#[pyo3(signature = (config, ids, offsets, data, pairs_a=None, pairs_b=None))]
fn cluster_group_packed<'py>(
    py: Python<'py>,
    config: PyRef<'py, PyConfig>,
    ids: Vec<String>,
    offsets: PyReadonlyArray1<'py, i32>,
    data: PyReadonlyArray1<'py, u8>,
    pairs_a: Option<PyReadonlyArray1<'py, i64>>,
    pairs_b: Option<PyReadonlyArray1<'py, i64>>,
) -> PyResult<Vec<GroupRow>> {
    let sketches = unpack_column(&config.config, &offsets, &data)?;
    let pairs = match (pairs_a, pairs_b) {
        (None, None) => None,
        (Some(a), Some(b)) if a.len()? == b.len()? => {
            let index = |v: &i64| {
                usize::try_from(*v).map_err(|_| {
                    PyValueError::new_err("cluster_group_packed: a pair index is negative")
                })
            };
            let (a, b) = (a.as_array(), b.as_array());
            Some(
                a.iter()
                    .zip(b.iter())
                    .map(|(x, y)| Ok((index(x)?, index(y)?)))
                    .collect::<PyResult<Vec<_>>>()?,
            )
        }
        _ => {
            return Err(PyValueError::new_err(
                "cluster_group_packed needs pairs_a and pairs_b together, of one length",
            ))
        }
    };
    group_rows(
        py,
        &config.config,
        &ids,
        sketches,
        pairs,
        "cluster_group_packed",
    )
}

/// Connected components of an edge list (two aligned arrays of vertex numbers), by
/// union-find: the vertices that are in an edge, sorted, and each one's component as the
/// component's smallest vertex.
#[pyfunction]
fn components<'py>(
    py: Python<'py>,
    a: PyReadonlyArray1<'py, i64>,
    b: PyReadonlyArray1<'py, i64>,
) -> PyResult<Bound<'py, PyTuple>> {
    let (a, b) = (a.as_array(), b.as_array());
    if a.len() != b.len() {
        return Err(PyValueError::new_err(
            "components needs as many first as second vertices",
        ));
    }
    let (a, b): (Vec<i64>, Vec<i64>) = (a.to_vec(), b.to_vec());
    let (nodes, roots) = py.allow_threads(|| {
        let mut nodes: Vec<i64> = a.iter().chain(&b).copied().collect();
        nodes.sort_unstable();
        nodes.dedup();
        let at = |v: i64| nodes.binary_search(&v).expect("every vertex is listed") as u32;
        // Each set's root is its smallest member: union links the larger root under the smaller.
        let mut parent: Vec<u32> = (0..nodes.len() as u32).collect();
        fn find(parent: &mut [u32], mut x: u32) -> u32 {
            while parent[x as usize] != x {
                let up = parent[parent[x as usize] as usize];
                parent[x as usize] = up;
                x = up;
            }
            x
        }
        for (&x, &y) in a.iter().zip(&b) {
            let (rx, ry) = (find(&mut parent, at(x)), find(&mut parent, at(y)));
            if rx != ry {
                let (low, high) = if rx < ry { (rx, ry) } else { (ry, rx) };
                parent[high as usize] = low;
            }
        }
        let roots: Vec<i64> = (0..nodes.len() as u32)
            .map(|i| nodes[find(&mut parent, i) as usize])
            .collect();
        (nodes, roots)
    });
    PyTuple::new(
        py,
        [
            nodes.into_pyarray(py).into_any(),
            roots.into_pyarray(py).into_any(),
        ],
    )
}

/// What the reading thread of a [`PyRecordReader`] sends.
enum ReadMessage {
    /// Records read: (file position, record), in reading order.
    Batch(Vec<(usize, megashingle::io::read::Record)>),
    /// A record reported and skipped.
    Warning(String),
    /// The end: an error that made an input unreadable, if any.
    Done(Option<String>),
}

/// Reads record and document files with the command's readers, on a thread of its own, in
/// batches: the Spark job reads its inputs through it on the executors.
#[pyclass(name = "RecordReader", module = "megashingle", unsendable)]
struct PyRecordReader {
    receiver: std::sync::Mutex<std::sync::mpsc::Receiver<ReadMessage>>,
    warnings: Vec<String>,
    done: bool,
}

#[pymethods]
impl PyRecordReader {
    /// `files`: (path, id) pairs; an id names a document file read from a folder (the
    /// command's id for it, its path relative to the folder), None reads the file as the
    /// command reads a file given by name. `keep` (stride, part): keep the records whose
    /// serial number modulo `stride` is `part`.
    #[new]
    #[pyo3(signature = (files, id_column="id", text_column="text", input_format=None, stride=1, part=0, batch_bytes=16 << 20))]
    fn new(
        files: Vec<(String, Option<String>)>,
        id_column: &str,
        text_column: &str,
        input_format: Option<&str>,
        stride: u64,
        part: u64,
        batch_bytes: usize,
    ) -> PyResult<PyRecordReader> {
        use megashingle::io::read::{read_inputs, InputFormat, ReadOptions};
        let format = match input_format {
            None => None,
            Some("csv") => Some(InputFormat::Csv),
            Some("jsonl") => Some(InputFormat::Jsonl),
            Some(other) => {
                return Err(PyValueError::new_err(format!(
                    "input format {other}: expected csv or jsonl"
                )))
            }
        };
        let options = ReadOptions {
            id_column: id_column.to_owned(),
            text_column: text_column.to_owned(),
            format,
            ..ReadOptions::default()
        };
        let stride = stride.max(1);
        let (sender, receiver) = std::sync::mpsc::sync_channel(2);
        std::thread::spawn(move || {
            let mut batch = Vec::new();
            let mut bytes = 0usize;
            let mut failed = None;
            for (position, (path, id)) in files.iter().enumerate() {
                let mut emit = |mut record: megashingle::io::read::Record| {
                    if (record.origin.order.1 - 1) % stride != part {
                        return;
                    }
                    if let Some(id) = id {
                        record.id = id.clone();
                    }
                    bytes += record.text.len() + record.id.len();
                    batch.push((position, record));
                    if bytes >= batch_bytes {
                        bytes = 0;
                        let _ = sender.send(ReadMessage::Batch(std::mem::take(&mut batch)));
                    }
                };
                let warnings = sender.clone();
                let mut warn = |message: String| {
                    let _ = warnings.send(ReadMessage::Warning(message));
                };
                let read = read_inputs(&[PathBuf::from(path)], &options, &mut emit, &mut warn);
                if let Err(e) = read {
                    let mut message = e.to_string();
                    let mut cause = std::error::Error::source(&e);
                    while let Some(c) = cause {
                        message.push_str(&format!(": {c}"));
                        cause = c.source();
                    }
                    failed = Some(message);
                    break;
                }
            }
            if !batch.is_empty() {
                let _ = sender.send(ReadMessage::Batch(batch));
            }
            let _ = sender.send(ReadMessage::Done(failed));
        });
        Ok(PyRecordReader {
            receiver: std::sync::Mutex::new(receiver),
            warnings: Vec::new(),
            done: false,
        })
    }

    /// The next batch as a dict of numpy arrays: `file` (position in `files`), `serial`
    /// (the record's number in its file, counting skipped ones), `line`, and ids and texts
    /// each as `*_offsets` (int64) and `*_data` (uint8, UTF-8); None at the end. Raises
    /// ValueError with the command's message when an input cannot be read.
    fn next_batch<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        if self.done {
            return Ok(None);
        }
        loop {
            let receiver = &self.receiver;
            let message = py.allow_threads(|| {
                receiver
                    .lock()
                    .map_err(|_| std::sync::mpsc::RecvError)
                    .and_then(|r| r.recv())
            });
            match message {
                Err(_) => {
                    self.done = true;
                    return Err(PyValueError::new_err("the reading thread stopped"));
                }
                Ok(ReadMessage::Warning(w)) => self.warnings.push(w),
                Ok(ReadMessage::Done(None)) => {
                    self.done = true;
                    return Ok(None);
                }
                Ok(ReadMessage::Done(Some(error))) => {
                    self.done = true;
                    return Err(PyValueError::new_err(error));
                }
                Ok(ReadMessage::Batch(records)) => {
                    let out = PyDict::new(py);
                    let file: Vec<i64> = records.iter().map(|(f, _)| *f as i64).collect();
                    let serial: Vec<i64> = records
                        .iter()
                        .map(|(_, r)| r.origin.order.1 as i64)
                        .collect();
                    let line: Vec<i64> =
                        records.iter().map(|(_, r)| r.origin.line as i64).collect();
                    out.set_item("file", file.into_pyarray(py))?;
                    out.set_item("serial", serial.into_pyarray(py))?;
                    out.set_item("line", line.into_pyarray(py))?;
                    for (name, field) in [("id", 0), ("text", 1)] {
                        let mut offsets = Vec::with_capacity(records.len() + 1);
                        offsets.push(0i64);
                        let mut data = Vec::new();
                        for (_, r) in &records {
                            data.extend_from_slice(
                                if field == 0 { &r.id } else { &r.text }.as_bytes(),
                            );
                            offsets.push(data.len() as i64);
                        }
                        out.set_item(format!("{name}_offsets"), offsets.into_pyarray(py))?;
                        out.set_item(format!("{name}_data"), data.into_pyarray(py))?;
                    }
                    return Ok(Some(out));
                }
            }
        }
    }

    /// The one-line reports of the records skipped so far.
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
}

/// A story index on disk (`megashingle index`). The first query opens the index and keeps it
/// open (and locked against other programs) for the queries after it, until `close()`, an
/// `add`, an `export` or the object's end.
#[pyclass(name = "Index", module = "megashingle", frozen)]
struct PyIndex {
    path: PathBuf,
    config: Config,
    open: std::sync::Mutex<Option<megashingle::Index>>,
}

impl PyIndex {
    /// Closes the index a query left open.
    fn close_open(&self) {
        *self.open.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }
}

#[pymethods]
impl PyIndex {
    #[new]
    #[pyo3(signature = (path, config=None))]
    fn new(path: PathBuf, config: Option<PyRef<'_, PyConfig>>) -> PyResult<PyIndex> {
        let config = config_or_default(config);
        config.validate().map_err(value_error)?;
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

    #[pyo3(signature = (ids, texts, times=None, upsert=false))]
    fn add<'py>(
        &self,
        py: Python<'py>,
        ids: &Bound<'py, PyAny>,
        texts: &Bound<'py, PyAny>,
        times: Option<&Bound<'py, PyAny>>,
        upsert: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        self.close_open();
        let made = !self.path.exists();
        let mut index = megashingle::Index::open(&self.path).map_err(value_error)?;
        let report = (|| {
            let mut addition = index
                .begin_add(&self.config, RunOptions::default(), upsert)
                .map_err(value_error)?;
            let added = for_each_document(ids, texts, times, |id, text, time| {
                addition.add(id, text, time).map_err(value_error)
            })?;
            if added == 0 {
                return Err(PyValueError::new_err(
                    "no documents given: nothing added to the index",
                ));
            }
            py.allow_threads(|| addition.commit()).map_err(value_error)
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
            .allow_threads(|| {
                let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
                if open.is_none() {
                    *open = Some(megashingle::Index::open_existing(&self.path)?);
                }
                open.as_ref()
                    .expect("opened above")
                    .query(&self.config, text)
            })
            .map_err(value_error)?;
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

    fn export<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        self.close_open();
        let index = megashingle::Index::open_existing(&self.path).map_err(value_error)?;
        let exported = py.allow_threads(|| index.export()).map_err(value_error)?;
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

#[pymodule]
fn _megashingle(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyConfig>()?;
    m.add_class::<PySketch>()?;
    m.add_class::<PySketcher>()?;
    m.add_class::<PyIndex>()?;
    m.add_function(wrap_pyfunction!(cluster, m)?)?;
    m.add_function(wrap_pyfunction!(dedup, m)?)?;
    m.add_function(wrap_pyfunction!(compare, m)?)?;
    m.add_function(wrap_pyfunction!(canon, m)?)?;
    m.add_function(wrap_pyfunction!(config_from_toml, m)?)?;
    m.add_function(wrap_pyfunction!(verify_pairs, m)?)?;
    m.add_function(wrap_pyfunction!(cluster_group, m)?)?;
    m.add_function(wrap_pyfunction!(verify_packed, m)?)?;
    m.add_function(wrap_pyfunction!(cluster_group_packed, m)?)?;
    m.add_function(wrap_pyfunction!(components, m)?)?;
    m.add_function(wrap_pyfunction!(packed_page_values, m)?)?;
    m.add_class::<PyRecordReader>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
