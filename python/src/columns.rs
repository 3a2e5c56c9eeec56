//! Columns of ids, texts and times as the binding reads them: pyarrow string arrays through
//! their buffers (no Python string made per value), or any iterable of `str`; documents read in
//! step from three columns, with a one-line error naming the document where one column ends
//! early or holds a value of another type; and lists given back as flat numpy arrays.

use std::borrow::Cow;

use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple};

use crate::errors;

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
                        return Err(errors::input(
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
                let text = std::str::from_utf8(&current.bytes()[start..end])
                    .map_err(|e| errors::input(format!("{what} {position}: not UTF-8 ({e})")))?;
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
pub fn for_each_document(
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
                return Err(errors::input(format!(
                    "times ended at document {position}: give one time (or None) per document"
                )))
            }
            _ => None,
        };
        match (id, text) {
            (Some(id), Some(text)) => take(id, &text, time)?,
            (None, None) => return Ok(position - 1),
            (Some(_), None) => {
                return Err(errors::input(format!(
                    "texts ended at document {position} while ids go on: give one text per id"
                )))
            }
            (None, Some(_)) => {
                return Err(errors::input(format!(
                    "ids ended at document {position} while texts go on: give one id per text"
                )))
            }
        }
    }
}

/// `f` over the texts of a Python column, with the GIL released while it runs.
pub fn on_texts<T: Send, E: Into<megashingle::Error> + Send>(
    py: Python<'_>,
    texts: &Bound<'_, PyAny>,
    f: impl FnOnce(&[&str]) -> Result<T, E> + Send,
) -> PyResult<T> {
    let texts = collect_texts(texts)?;
    py.allow_threads(|| {
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        f(&refs)
    })
    .map_err(errors::library)
}

/// Texts of a column, owned, for work without the GIL.
pub fn collect_texts(texts: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
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
pub fn flat<'py, 'a, T: numpy::Element + Copy + 'a>(
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
