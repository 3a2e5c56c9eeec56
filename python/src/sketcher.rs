//! `megashingle.Sketcher` and `megashingle.Sketch`: texts sketched under a configuration, one
//! at a time or in batches made in parallel without the GIL (numpy arrays out), and the packed
//! shingle sets and sketches the Spark job moves in binary columns (`megashingle::packed`).

use megashingle::{Config, DocumentSketch, DocumentSketcher};
use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use crate::columns::{flat, on_texts};
use crate::config::{config_or_default, PyConfig};
use crate::errors;
use megashingle::packed::pack_sets;

use crate::packed::{batch_end, packed_sketches, unpack_sets_column};

/// One document's sketch.
#[pyclass(name = "Sketch", module = "megashingle", frozen)]
pub struct PySketch {
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

#[pyclass(name = "Sketcher", module = "megashingle", frozen)]
pub struct PySketcher {
    sketcher: DocumentSketcher,
    config: Config,
}

#[pymethods]
impl PySketcher {
    #[new]
    #[pyo3(signature = (config=None, boilerplate=None, threads=0, spread=None))]
    fn new(
        config: Option<PyRef<'_, PyConfig>>,
        boilerplate: Option<PyReadonlyArray1<'_, u32>>,
        threads: usize,
        spread: Option<PyReadonlyArray1<'_, u32>>,
    ) -> PyResult<PySketcher> {
        let config = config_or_default(config);
        let mut sketcher = DocumentSketcher::new(&config)
            .map_err(errors::library)?
            .with_threads(threads);
        if let Some(keys) = boilerplate {
            sketcher = sketcher.with_boilerplate(keys.as_array().iter().copied());
        }
        if let Some(keys) = spread {
            sketcher = sketcher.with_spread(keys.as_array().iter().copied());
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
            .map_err(errors::library)?;
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
