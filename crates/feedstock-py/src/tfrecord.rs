//! TFRecord files from Python: `TFRecordWriter` and
//! `tf_record_iterator`, on the library's [`feedstock::io::tfrecord`],
//! and `glob`; each takes local paths and `file://`, `s3://`, `gs://`,
//! `az://` and `http(s)://` URLs through the library's file system.

use std::fs::File;
use std::io::{BufWriter, Read};
use std::sync::Mutex;

use feedstock::io::fs::{default_fs, local_path, OutputFile, OutputOptions};
use feedstock::io::store::AnyFs;
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
    /// The writer; `None` once closed. (In a mutex only to make the class
    /// `Sync`, as pyo3 requires: every use has `&mut self`.)
    inner: Mutex<Option<Sink>>,
    /// The path, for messages.
    path: String,
}

/// Where a writer's records go. (One per Python writer object: the size
/// of the larger variant costs nothing worth a box.)
#[allow(clippy::large_enum_variant)]
enum Sink {
    /// A local file, written in place as TensorFlow writes it: what is
    /// flushed is in the file.
    File(Writer<BufWriter<File>>),
    /// An object: an upload that `close` completes (the object appears
    /// whole or not at all; flushing cannot show part of it).
    Object(Writer<BufWriter<OutputFile>>),
}

impl Sink {
    fn write_record(&mut self, record: &[u8]) -> feedstock::Result<()> {
        match self {
            Sink::File(w) => w.write_record(record),
            Sink::Object(w) => w.write_record(record),
        }
    }

    fn flush(&mut self) -> feedstock::Result<()> {
        match self {
            Sink::File(w) => w.flush(),
            Sink::Object(w) => w.flush(),
        }
    }

    fn close(self) -> feedstock::Result<()> {
        match self {
            Sink::File(w) => w.finish().map(drop),
            Sink::Object(w) => w.commit(),
        }
    }
}

#[pymethods]
impl RecordWriter {
    /// Creates (or truncates) `path`, a local path or `file://` URL, or
    /// an object-store URL (written when closed). `compression` is `""`,
    /// `"GZIP"` or `"ZLIB"`; `level` is the deflate level (0..=9) or
    /// `None` for zlib's default, as TensorFlow uses.
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
        let sink = if AnyFs::is_url(&path) {
            // Replaced whole, as TensorFlow truncates a file it opens.
            let opts = OutputOptions::new().force(true).clone();
            Sink::Object(b.create_output(&path, &opts).py_err()?)
        } else {
            Sink::File(b.create(local_path(&path).as_ref()).py_err()?)
        };
        Ok(RecordWriter {
            inner: Mutex::new(Some(sink)),
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
        match exclusive(&mut self.inner).take() {
            None => Ok(()),
            Some(w) => py.detach(|| w.close()).py_err(),
        }
    }

    /// The path being written.
    #[getter]
    fn path(&self) -> &str {
        &self.path
    }
}

impl RecordWriter {
    fn writer(&mut self) -> PyResult<&mut Sink> {
        let path = &self.path;
        exclusive(&mut self.inner)
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
    /// The reader; `None` after the end or an error. (In a mutex only
    /// to make the class `Sync`: every use has `&mut self`.)
    inner: Mutex<Option<Reader<Box<dyn Read + Send>>>>,
}

#[pymethods]
impl RecordIterator {
    /// Opens `path` (a path or URL) with `compression` (`""`, `"GZIP"`,
    /// `"ZLIB"`, or `None` to read it uncompressed as TensorFlow does).
    #[new]
    #[pyo3(signature = (path, compression=None))]
    fn new(
        py: Python<'_>,
        path: &str,
        compression: Option<&str>,
    ) -> PyResult<RecordIterator> {
        let mut b = ReaderBuilder::new();
        b.compression(parse_compression(compression)?);
        let r = py.detach(|| b.open_in(&*default_fs(), path)).py_err()?;
        Ok(RecordIterator {
            inner: Mutex::new(Some(r)),
        })
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(
        &mut self,
        py: Python<'py>,
    ) -> PyResult<Option<Bound<'py, PyBytes>>> {
        let inner = exclusive(&mut self.inner);
        let Some(r) = inner.as_mut() else {
            return Ok(None);
        };
        match py.detach(|| r.read_record()) {
            Ok(Some(rec)) => Ok(Some(PyBytes::new(py, &rec.value))),
            Ok(None) => {
                *inner = None;
                Ok(None)
            }
            Err(e) => {
                *inner = None;
                Err(crate::errors::to_py(&e))
            }
        }
    }

    /// Closes the file early.
    fn close(&mut self) {
        *exclusive(&mut self.inner) = None;
    }
}

/// The value in `m`, reached through `&mut` (no locking; a poisoned
/// mutex only means a panic elsewhere, and the value is still whole).
fn exclusive<T>(m: &mut Mutex<T>) -> &mut T {
    m.get_mut().unwrap_or_else(|e| e.into_inner())
}

/// The files matching `pattern`, sorted: a local glob (matched as
/// TensorFlow matches it; sidecar indexes only by a pattern that spells
/// their dot), or a listing of the object prefix before the first
/// wildcard of a URL. No match is `NotFoundError`.
#[pyfunction]
fn glob(py: Python<'_>, pattern: &str) -> PyResult<Vec<String>> {
    py.detach(|| default_fs().glob(pattern)).py_err()
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<RecordWriter>()?;
    m.add_class::<RecordIterator>()?;
    m.add_function(wrap_pyfunction!(glob, m)?)
}

impl std::fmt::Debug for RecordWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordWriter")
            .field("path", &self.path)
            .field("open", &self.inner.lock().is_ok_and(|w| w.is_some()))
            .finish()
    }
}

impl std::fmt::Debug for RecordIterator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordIterator")
            .field(
                "file",
                &self.inner.lock().ok().and_then(|r| {
                    r.as_ref().and_then(|r| r.file_name().map(str::to_owned))
                }),
            )
            .finish()
    }
}
