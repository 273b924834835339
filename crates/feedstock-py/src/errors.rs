//! feedstock's errors as Python exceptions.
//!
//! The exception classes are defined in Python (`feedstock/errors.py`), so
//! that they pickle, subclass and document like any Python class; this
//! module looks the class up by the error's [`Kind`] and raises it with the
//! error's context as attributes.

use feedstock::{Error, Kind};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The name of the `feedstock.errors` class for `kind`, as TensorFlow
/// names it.
pub fn class_name(kind: Kind) -> &'static str {
    match kind {
        Kind::OutOfRange => "OutOfRangeError",
        Kind::Cancelled => "CancelledError",
        Kind::InvalidArgument => "InvalidArgumentError",
        Kind::DataLoss => "DataLossError",
        Kind::NotFound => "NotFoundError",
        Kind::FailedPrecondition => "FailedPreconditionError",
        Kind::DeadlineExceeded => "DeadlineExceededError",
        Kind::ResourceExhausted => "ResourceExhaustedError",
        Kind::PermissionDenied => "PermissionDeniedError",
        Kind::Unimplemented => "UnimplementedError",
        Kind::Aborted => "AbortedError",
        Kind::Internal => "InternalError",
        _ => "UnknownError",
    }
}

/// Converts a feedstock error into the matching Python exception.
///
/// The message is the error's display form without the leading kind (the
/// class names it), so it still names the file, key, offset and field.
pub fn to_py(err: &Error) -> PyErr {
    Python::attach(|py| match build(py, err) {
        Ok(e) => e,
        Err(e) => e,
    })
}

fn build(py: Python<'_>, err: &Error) -> PyResult<PyErr> {
    let module = py.import("feedstock.errors")?;
    // Memory that could not be had is also a Python MemoryError (a
    // subclass of ResourceExhaustedError, feedstock/errors.py).
    let name = if err.is_out_of_memory() {
        "OutOfMemoryError"
    } else {
        class_name(err.kind())
    };
    let class = module.getattr(name)?;
    let full = err.to_string();
    let prefix = format!("{}: ", err.kind());
    let message = full.strip_prefix(&prefix).unwrap_or(&full).to_owned();
    let kwargs = PyDict::new(py);
    kwargs.set_item("file", err.file())?;
    kwargs.set_item("key", err.key())?;
    kwargs.set_item("offset", err.offset())?;
    kwargs.set_item("field", err.field())?;
    let value = class.call((py.None(), py.None(), message), Some(&kwargs))?;
    if err.is_invalid_dtype() {
        // Marks a refused dtype, which the graph layer raises as a
        // TypeError while building (feedstock/_graph.py).
        value.setattr("_invalid_dtype", true)?;
    }
    Ok(PyErr::from_value(value))
}

/// `Result<T, feedstock::Error>` to `PyResult<T>`.
pub trait IntoPyResult<T> {
    /// Raises the error as its `feedstock.errors` class.
    fn py_err(self) -> PyResult<T>;
}

impl<T> IntoPyResult<T> for feedstock::Result<T> {
    fn py_err(self) -> PyResult<T> {
        self.map_err(|e| to_py(&e))
    }
}

/// `_native.raise_error(kind, message, file=None, key=None, offset=None,
/// field=None)`: raises the exception a native error of `kind` becomes.
/// Used by the tests of the conversion.
#[pyfunction]
#[pyo3(signature = (kind, message, file=None, key=None, offset=None, field=None))]
fn raise_error(
    kind: &str,
    message: &str,
    file: Option<&str>,
    key: Option<&str>,
    offset: Option<u64>,
    field: Option<&str>,
) -> PyResult<()> {
    let kind = parse_kind(kind)?;
    let mut e = Error::new(kind, message);
    if let Some(f) = file {
        e = e.with_file(f);
    }
    if let Some(k) = key {
        e = e.with_key(k);
    }
    if let Some(o) = offset {
        e = e.with_offset(o);
    }
    if let Some(f) = field {
        e = e.with_field(f);
    }
    Err(to_py(&e))
}

/// The kind named `name` (`"OutOfRange"`, ...); Unknown for any other.
pub fn kind_from_name(name: &str) -> Kind {
    Kind::from_name(name).unwrap_or(Kind::Unknown)
}

fn parse_kind(name: &str) -> PyResult<Kind> {
    Kind::from_name(name)
        .ok_or_else(|| PyRuntimeError::new_err(format!("no kind {name}")))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(raise_error, m)?)
}
