//! The Python extension `megashingle._megashingle`: a thin pyo3 layer over the library's
//! facade, one file per facade type, as tantivy-py keeps its own. It converts arguments and
//! results and releases the GIL around long calls; every rule and every stage is the Rust
//! crate's. The Python package (`megashingle/__init__.py`) prepares text columns (iterables,
//! pandas Series, pyarrow string arrays read through their buffers) and gives the public names.
//!
//! - `config`: `Config`, a pipeline configuration;
//! - `columns`: columns of ids, texts and times read from Python;
//! - `clusterer`: `cluster` and `dedup`;
//! - `dedup`: a group's duplicates, for the Spark job;
//! - `reuse`: `reuse`, the pairs where one text holds a passage of the other;
//! - `compare`: `compare` and `canon`;
//! - `sketcher`: `Sketcher` and `Sketch`;
//! - `groups`: pairs verified, groups clustered, components and bucket rules for the Spark job;
//! - `packed`: packed sets and sketches in binary columns, for the Spark job;
//! - `readers`: `RecordReader`, the command's readers for the Spark job, and its time parser;
//! - `index`: `Index`, a story index on disk;
//! - `errors`: the exception classes and the mapping of the library's errors to them;
//! - `interrupt`: long calls that Ctrl-C stops (`KeyboardInterrupt`).

mod clusterer;
mod columns;
mod compare;
mod config;
mod dedup;
mod errors;
mod groups;
mod index;
mod interrupt;
mod packed;
mod readers;
mod reuse;
mod sketcher;

use pyo3::prelude::*;

#[pymodule]
fn _megashingle(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<config::PyConfig>()?;
    m.add_class::<sketcher::PySketch>()?;
    m.add_class::<sketcher::PySketcher>()?;
    m.add_class::<index::PyIndex>()?;
    m.add_class::<readers::PyRecordReader>()?;
    m.add_function(wrap_pyfunction!(config::config_from_toml, m)?)?;
    m.add_function(wrap_pyfunction!(clusterer::cluster, m)?)?;
    m.add_function(wrap_pyfunction!(clusterer::dedup, m)?)?;
    m.add_function(wrap_pyfunction!(reuse::reuse, m)?)?;
    m.add_function(wrap_pyfunction!(compare::compare, m)?)?;
    m.add_function(wrap_pyfunction!(compare::canon, m)?)?;
    m.add_function(wrap_pyfunction!(groups::verify_pairs, m)?)?;
    m.add_function(wrap_pyfunction!(groups::cluster_group, m)?)?;
    m.add_function(wrap_pyfunction!(groups::components, m)?)?;
    m.add_function(wrap_pyfunction!(groups::bucket_rule, m)?)?;
    m.add_function(wrap_pyfunction!(groups::verification_prefilter, m)?)?;
    m.add_function(wrap_pyfunction!(packed::verify_packed, m)?)?;
    m.add_function(wrap_pyfunction!(packed::cluster_group_packed, m)?)?;
    m.add_function(wrap_pyfunction!(dedup::dedup_group_packed, m)?)?;
    m.add_function(wrap_pyfunction!(packed::packed_page_values, m)?)?;
    m.add_function(wrap_pyfunction!(packed::packed_main_values, m)?)?;
    m.add_function(wrap_pyfunction!(packed::packed_low_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(readers::detect_format, m)?)?;
    m.add_function(wrap_pyfunction!(readers::parse_times, m)?)?;
    m.add(
        "ALL_PAIRS_BUCKET",
        megashingle::cluster::candidates::ALL_PAIRS_BUCKET,
    )?;
    errors::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
