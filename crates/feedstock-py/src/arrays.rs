//! Tensors to numpy arrays, without copying.
//!
//! A dense numeric [`Tensor`] (every dtype: float16 as `numpy.float16`,
//! bfloat16 as `ml_dtypes.bfloat16`, complex64/128 as numpy's) becomes
//! an `ndarray` that owns the tensor's buffer: the `Vec` moves into a numpy base object and the array points
//! at it, so a 128×784 batch crosses into Python without a copy. Strings
//! become object arrays of `bytes`, as TensorFlow's `Session.run` returns
//! them (a Python `bytes` per element is the one copy numpy's object
//! arrays require). A [`SparseTensor`] becomes
//! `feedstock.SparseTensorValue(indices, values, dense_shape)`.

use feedstock::{DType, Data, Shape, SparseTensor, Tensor, Value};
use numpy::{
    IntoPyArray, PyArray1, PyArrayDyn, PyArrayMethods, PyUntypedArray,
    PyUntypedArrayMethods,
};
use pyo3::exceptions::{PyImportError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

use crate::errors::IntoPyResult;

/// Moves `tensor` into a numpy array of its shape.
///
/// Numeric and bool tensors are not copied. A string tensor becomes an
/// object array of `bytes`.
pub fn tensor_to_numpy<'py>(
    py: Python<'py>,
    tensor: Tensor,
) -> PyResult<Bound<'py, PyAny>> {
    let dims: Vec<usize> = tensor.dims().to_vec();
    let flat: Bound<'py, PyAny> = match tensor.into_data() {
        Data::Bool(v) => v.into_pyarray(py).into_any(),
        Data::U8(v) => v.into_pyarray(py).into_any(),
        Data::I8(v) => v.into_pyarray(py).into_any(),
        Data::U16(v) => v.into_pyarray(py).into_any(),
        Data::I16(v) => v.into_pyarray(py).into_any(),
        Data::U32(v) => v.into_pyarray(py).into_any(),
        Data::I32(v) => v.into_pyarray(py).into_any(),
        Data::U64(v) => v.into_pyarray(py).into_any(),
        Data::I64(v) => v.into_pyarray(py).into_any(),
        Data::F32(v) => v.into_pyarray(py).into_any(),
        Data::F64(v) => v.into_pyarray(py).into_any(),
        Data::F16(v) => v.into_pyarray(py).into_any(),
        Data::BF16(v) => {
            bfloat16_dtype(py)?;
            v.into_pyarray(py).into_any()
        }
        Data::C64(v) => v.into_pyarray(py).into_any(),
        Data::C128(v) => v.into_pyarray(py).into_any(),
        Data::String(v) => {
            let objs: Vec<Py<PyAny>> = v
                .iter()
                .map(|b| PyBytes::new(py, b).into_any().unbind())
                .collect();
            PyArray1::from_vec(py, objs).into_any()
        }
        other => {
            return Err(PyTypeError::new_err(format!(
                "no numpy conversion for dtype {}",
                other.dtype()
            )))
        }
    };
    // A reshape of a contiguous array is a view of the same buffer.
    flat.call_method1("reshape", (dims,))
}

/// Converts a dense or sparse value.
pub fn value_to_py<'py>(
    py: Python<'py>,
    value: Value,
) -> PyResult<Bound<'py, PyAny>> {
    match value {
        Value::Dense(t) => tensor_to_numpy(py, t),
        Value::Sparse(s) => sparse_to_py(py, s),
    }
}

/// `feedstock.SparseTensorValue(indices, values, dense_shape)`.
pub fn sparse_to_py<'py>(
    py: Python<'py>,
    sparse: SparseTensor,
) -> PyResult<Bound<'py, PyAny>> {
    let indices = tensor_to_numpy(py, sparse.indices().clone())?;
    let values = tensor_to_numpy(py, sparse.values().clone())?;
    let shape: Vec<i64> = sparse
        .dense_shape()
        .dims()
        .iter()
        .map(|&d| d as i64)
        .collect();
    let shape = shape.into_pyarray(py);
    let class = py
        .import("feedstock._types")?
        .getattr("SparseTensorValue")?;
    class.call1((indices, values, shape))
}

/// The feedstock dtype named as numpy names it (`"float32"`, ...): the
/// dtype's own name, and `"object"` for bytes. `"bfloat16"` is numpy's
/// name only once `ml_dtypes` is imported (see [`bfloat16_dtype`]).
pub fn numpy_name(dtype: DType) -> &'static str {
    match dtype {
        DType::String => "object",
        numeric => numeric.name(),
    }
}

/// Makes sure numpy knows `bfloat16`: numpy has no such dtype of its own;
/// the `ml_dtypes` package (the one JAX and TensorFlow use) registers it
/// on import, and bfloat16 arrays then hold `ml_dtypes.bfloat16` values
/// whose bytes are exactly [`half::bf16`]'s.
///
/// Without `ml_dtypes` the conversion fails with an ImportError that says
/// so, rather than handing out the raw bits as `uint16`, which would read
/// as wrong numbers: cast to float32 in the graph to do without it.
pub fn bfloat16_dtype(py: Python<'_>) -> PyResult<()> {
    py.import("ml_dtypes").map(drop).map_err(|e| {
        PyImportError::new_err(format!(
            "bfloat16 arrays need the ml_dtypes package (pip install \
             ml_dtypes), or tf.cast the tensor to float32: {e}"
        ))
    })
}

/// Copies a numpy array (or anything `numpy.asarray` accepts) into a
/// tensor of `dtype`. Object and bytes arrays become string tensors; str
/// elements are encoded as UTF-8, as TensorFlow does.
pub fn numpy_to_tensor(
    py: Python<'_>,
    obj: &Bound<'_, PyAny>,
    dtype: DType,
) -> PyResult<Tensor> {
    let np = py.import("numpy")?;
    if dtype == DType::String {
        let arr = np.call_method1("asarray", (obj, "object"))?;
        let arr = arr.cast_into::<PyUntypedArray>()?;
        let shape = Shape::new(arr.shape().to_vec());
        let flat = arr.call_method0("ravel")?;
        let mut out = Vec::with_capacity(shape.num_elements());
        for item in flat.try_iter()? {
            let item = item?;
            if let Ok(b) = item.cast::<PyBytes>() {
                out.push(bytes::Bytes::copy_from_slice(b.as_bytes()));
            } else if let Ok(s) = item.cast::<PyString>() {
                out.push(bytes::Bytes::copy_from_slice(
                    s.to_str()?.as_bytes(),
                ));
            } else {
                return Err(PyTypeError::new_err(format!(
                    "expected bytes or str, got {}",
                    item.get_type().name()?
                )));
            }
        }
        return Tensor::from_data(shape, Data::String(out)).py_err();
    }
    if dtype == DType::BF16 {
        bfloat16_dtype(py)?;
    }
    // asarray (not ascontiguousarray, which makes scalars 1-d).
    let kwargs = pyo3::types::PyDict::new(py);
    kwargs.set_item("dtype", numpy_name(dtype))?;
    kwargs.set_item("order", "C")?;
    let arr = np.call_method("asarray", (obj,), Some(&kwargs))?;
    let arr = arr.cast_into::<PyUntypedArray>()?;
    let shape = Shape::new(arr.shape().to_vec());
    macro_rules! copy {
        ($t:ty, $variant:ident) => {{
            let a = arr.cast::<PyArrayDyn<$t>>()?;
            let v = a
                .to_vec()
                .map_err(|e| PyValueError::new_err(e.to_string()))?;
            Data::$variant(v)
        }};
    }
    let data = match dtype {
        DType::Bool => copy!(bool, Bool),
        DType::U8 => copy!(u8, U8),
        DType::I8 => copy!(i8, I8),
        DType::U16 => copy!(u16, U16),
        DType::I16 => copy!(i16, I16),
        DType::U32 => copy!(u32, U32),
        DType::I32 => copy!(i32, I32),
        DType::U64 => copy!(u64, U64),
        DType::I64 => copy!(i64, I64),
        DType::F32 => copy!(f32, F32),
        DType::F64 => copy!(f64, F64),
        DType::F16 => copy!(half::f16, F16),
        DType::BF16 => copy!(half::bf16, BF16),
        DType::C64 => copy!(num_complex::Complex32, C64),
        DType::C128 => copy!(num_complex::Complex64, C128),
        other => {
            return Err(PyTypeError::new_err(format!(
                "unsupported dtype {other}"
            )))
        }
    };
    Tensor::from_data(shape, data).py_err()
}

/// `_native.roundtrip(array, dtype)`: an array copied into a tensor of
/// `dtype` and handed back; used by the tests of the conversion.
#[pyfunction]
fn roundtrip<'py>(
    py: Python<'py>,
    array: &Bound<'py, PyAny>,
    dtype: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let dtype = DType::from_name(dtype).py_err()?;
    let t = numpy_to_tensor(py, array, dtype)?;
    tensor_to_numpy(py, t)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(roundtrip, m)?)
}
