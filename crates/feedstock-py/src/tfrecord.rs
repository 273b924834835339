//! TFRecord files from Python: `TFRecordWriter` and
//! `tf_record_iterator`, on the library's [`feedstock::io::tfrecord`].

use std::fs::File;
use std::io::BufWriter;

use feedstock::io::tfrecord::{Reader, ReaderBuilder, Writer, WriterBuilder};
use feedstock::io::Compression;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::errors::IntoPyResult;

/// Parses TensorFlow's compression names: `""`/`None`, `"GZIP"`,
/// `"ZLIB"` (and the lower-case forms).
pub fn parse_compression(name: Option<&str>) -> PyResult<Compression> {
    match name.unwrap_or("") {
        "" | "NONE" | "none" => Ok(Compression::None),
        "GZIP" | "gzip" => Ok(Compression::Gzip),
        "ZLIB" | "zlib" => Ok(Compression::Zlib),
        other => Err(PyValueError::new_err(format!(
            "unknown compression type {other:?}: expected '', 'GZIP' or 'ZLIB'"
        ))),
    }
}

/// A TFRecord file being written. Records are framed exactly as
/// TensorFlow frames them; compressed files are gzip or zlib streams as
/// TensorFlow's `TFRecordOptions` produce.
#[pyclass(module = "feedstock._native")]
pub struct RecordWriter {
    /// The writer; `None` once closed.
    inner: Option<Writer<BufWriter<File>>>,
    /// The path, for messages.
    path: String,
}

#[pymethods]
impl RecordWriter {
    /// Creates (or truncates) `path`. `compression` is `""`, `"GZIP"` or
    /// `"ZLIB"`; `level` is the deflate level (0..=9) or `None` for
    /// zlib's default, as TensorFlow uses.
    #[new]
    #[pyo3(signature = (path, compression=None, level=None))]
    fn new(
        path: String,
        compression: Option<&str>,
        level: Option<u32>,
    ) -> PyResult<RecordWriter> {
        let mut b = WriterBuilder::new();
        b.compression(parse_compression(compression)?);
        if let Some(l) = level {
            b.level(l);
        }
        let w = b.create(&path).py_err()?;
        Ok(RecordWriter {
            inner: Some(w),
            path,
        })
    }

    /// Writes one record.
    fn write(&mut self, py: Python<'_>, record: &[u8]) -> PyResult<()> {
        let w = self.writer()?;
        py.detach(|| w.write_record(record)).py_err()
    }

    /// Flushes buffered records to the file (a compressed stream is
    /// flushed as far as its encoder allows).
    fn flush(&mut self, py: Python<'_>) -> PyResult<()> {
        let w = self.writer()?;
        py.detach(|| w.flush()).py_err()
    }

    /// Finishes the file: writes the compressed stream's trailer and
    /// reports any error. Closing twice is harmless.
    fn close(&mut self, py: Python<'_>) -> PyResult<()> {
        match self.inner.take() {
            None => Ok(()),
            Some(w) => py.detach(|| w.finish().map(drop)).py_err(),
        }
    }

    /// The path being written.
    #[getter]
    fn path(&self) -> &str {
        &self.path
    }
}

impl RecordWriter {
    fn writer(&mut self) -> PyResult<&mut Writer<BufWriter<File>>> {
        let path = &self.path;
        self.inner
            .as_mut()
            .ok_or_else(|| {
                feedstock::Error::failed_precondition(
                    "the TFRecordWriter is closed",
                )
                .with_file(path)
            })
            .py_err()
    }
}

/// The records of a TFRecord file, one `bytes` each, in order. A corrupt
/// or truncated file raises `DataLossError` naming the file and offset
/// once the good records before it have been yielded.
#[pyclass(module = "feedstock._native")]
pub struct RecordIterator {
    /// The reader; `None` after the end or an error.
    inner: Option<Reader<File>>,
}

#[pymethods]
impl RecordIterator {
    /// Opens `path` with `compression` (`""`, `"GZIP"`, `"ZLIB"`, or
    /// `None` to read it uncompressed as TensorFlow does).
    #[new]
    #[pyo3(signature = (path, compression=None))]
    fn new(path: &str, compression: Option<&str>) -> PyResult<RecordIterator> {
        let r = ReaderBuilder::new()
            .compression(parse_compression(compression)?)
            .open(path)
            .py_err()?;
        Ok(RecordIterator { inner: Some(r) })
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(
        &mut self,
        py: Python<'py>,
    ) -> PyResult<Option<Bound<'py, PyBytes>>> {
        let Some(r) = self.inner.as_mut() else {
            return Ok(None);
        };
        match py.detach(|| r.read_record()) {
            Ok(Some(rec)) => Ok(Some(PyBytes::new(py, &rec.data))),
            Ok(None) => {
                self.inner = None;
                Ok(None)
            }
            Err(e) => {
                self.inner = None;
                Err(crate::errors::to_py(&e))
            }
        }
    }

    /// Closes the file early.
    fn close(&mut self) {
        self.inner = None;
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<RecordWriter>()?;
    m.add_class::<RecordIterator>()
}

impl std::fmt::Debug for RecordWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordWriter")
            .field("path", &self.path)
            .field("open", &self.inner.is_some())
            .finish()
    }
}

impl std::fmt::Debug for RecordIterator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordIterator")
            .field("file", &self.inner.as_ref().and_then(|r| r.file_name()))
            .finish()
    }
}
