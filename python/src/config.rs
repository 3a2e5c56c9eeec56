//! `megashingle.Config`: a pipeline configuration (the keys of `pipeline.toml`) built from
//! Python keywords or a dict of dotted keys, read from a file, changed, shown and pickled. A
//! bare key name (`min_similarity`) is looked up among the sections; every value is checked by
//! the library as the command checks its `--set`.

use std::path::PathBuf;

use megashingle::Config;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use crate::errors;

/// A pipeline configuration: the keys of `pipeline.toml`.
#[pyclass(name = "Config", module = "megashingle", frozen)]
#[derive(Clone)]
pub struct PyConfig {
    pub config: Config,
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
        [] => Err(errors::config(format!(
            "{name}: no such setting; settings are the keys of pipeline.toml, such as \
             min_similarity or shingle_size, or dotted keys like \"cluster.min-similarity\""
        ))),
        many => Err(errors::config(format!(
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
        config = config.with_setting(&setting).map_err(errors::library)?;
    }
    config.validate().map_err(errors::library)?;
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
        let mut config = Config::from_file(&path).map_err(errors::library)?;
        config.validate().map_err(errors::library)?;
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
                .ok_or_else(|| errors::config(format!("{key}: no such setting")))?;
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
pub fn config_from_toml(text: &str) -> PyResult<PyConfig> {
    let config = Config::from_toml(text, std::path::Path::new("<pickled config>"))
        .map_err(errors::library)?;
    Ok(PyConfig { config })
}

pub fn config_or_default(config: Option<PyRef<'_, PyConfig>>) -> Config {
    config.map(|c| c.config.clone()).unwrap_or_default()
}
