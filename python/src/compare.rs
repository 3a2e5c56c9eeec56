//! `megashingle.compare` and `megashingle.canon`: two texts compared as `megashingle compare
//! --json` compares them (its JSON given back as Python objects), and a text's canonical words.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyList, PyString};

use crate::config::{config_or_default, PyConfig};
use crate::errors;

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
pub fn compare<'py>(
    py: Python<'py>,
    first: &str,
    second: &str,
    config: Option<PyRef<'py, PyConfig>>,
) -> PyResult<Bound<'py, PyAny>> {
    let config = config_or_default(config);
    let comparison = py
        .allow_threads(|| megashingle::compare(&config, first, second))
        .map_err(errors::library)?;
    let json = serde_json::to_value(&comparison)
        .map_err(|e| errors::MegashingleError::new_err(e.to_string()))?;
    json_to_py(py, &json)
}

#[pyfunction]
#[pyo3(signature = (text, config=None))]
pub fn canon(py: Python<'_>, text: &str, config: Option<PyRef<'_, PyConfig>>) -> PyResult<String> {
    let config = config_or_default(config);
    py.allow_threads(|| megashingle::canon(&config, text))
        .map_err(errors::library)
}
