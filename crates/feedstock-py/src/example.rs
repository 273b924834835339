//! `tf.train.Example` encoding and decoding for the Python message
//! classes.
//!
//! The Python classes (`feedstock/_example.py`) hold their values in
//! Python lists, as protobuf's do; to serialize they hand this module a
//! list of `(name, kind, values)` entries and get back the bytes the
//! library's [`feedstock::proto`] encoder writes (keys in sorted order,
//! packed numeric lists: TensorFlow's deterministic serialization). Kinds
//! are `0` (no list set), `1` bytes, `2` float, `3` int64.
//!
//! `tf.train.SequenceExample` and its parts use the same entries: a
//! `FeatureList` is a list of `(kind, values)` steps, a `FeatureLists` a
//! list of `(name, steps)`.

use std::collections::BTreeMap;

use bytes::Bytes;
use feedstock::proto::{
    feature, BytesList, Example, Feature, FeatureList, FeatureLists, Features,
    FloatList, Int64List, SequenceExample,
};
use prost::Message;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple};

fn feature_from_py(kind: u8, values: &Bound<'_, PyAny>) -> PyResult<Feature> {
    let kind = match kind {
        0 => None,
        1 => {
            let mut out = Vec::new();
            for v in values.try_iter()? {
                let v = v?;
                if let Ok(b) = v.cast::<PyBytes>() {
                    out.push(Bytes::copy_from_slice(b.as_bytes()));
                } else if let Ok(s) = v.cast::<PyString>() {
                    // A str is stored as its UTF-8 encoding. (The Python
                    // message classes refuse str, as TensorFlow's do;
                    // this only serves other callers.)
                    out.push(Bytes::copy_from_slice(s.to_str()?.as_bytes()));
                } else {
                    return Err(PyTypeError::new_err(format!(
                        "{} has type {}, but expected one of: bytes",
                        v.repr()?,
                        v.get_type().name()?
                    )));
                }
            }
            Some(feature::Kind::BytesList(BytesList { value: out }))
        }
        2 => {
            let mut out = Vec::new();
            for v in values.try_iter()? {
                out.push(v?.extract::<f64>()? as f32);
            }
            Some(feature::Kind::FloatList(FloatList { value: out }))
        }
        3 => {
            let mut out = Vec::new();
            for v in values.try_iter()? {
                out.push(v?.extract::<i64>()?);
            }
            Some(feature::Kind::Int64List(Int64List { value: out }))
        }
        k => {
            return Err(PyValueError::new_err(format!(
                "unknown feature kind {k}"
            )))
        }
    };
    Ok(Feature { kind })
}

fn features_from_py(entries: &Bound<'_, PyAny>) -> PyResult<Features> {
    let mut map = BTreeMap::new();
    for e in entries.try_iter()? {
        let (name, kind, values): (String, u8, Bound<'_, PyAny>) =
            e?.extract()?;
        map.insert(name, feature_from_py(kind, &values)?);
    }
    Ok(Features { feature: map })
}

fn feature_list_from_py(steps: &Bound<'_, PyAny>) -> PyResult<FeatureList> {
    let mut feature = Vec::new();
    for step in steps.try_iter()? {
        let (kind, values): (u8, Bound<'_, PyAny>) = step?.extract()?;
        feature.push(feature_from_py(kind, &values)?);
    }
    Ok(FeatureList { feature })
}

fn feature_lists_from_py(
    entries: &Bound<'_, PyAny>,
) -> PyResult<FeatureLists> {
    let mut map = BTreeMap::new();
    for e in entries.try_iter()? {
        let (name, steps): (String, Bound<'_, PyAny>) = e?.extract()?;
        map.insert(name, feature_list_from_py(&steps)?);
    }
    Ok(FeatureLists { feature_list: map })
}

/// `_native.encode_example(entries) -> bytes`, `entries` a sequence of
/// `(name, kind, values)`; `None` for the whole means an Example whose
/// `features` field is unset.
#[pyfunction]
fn encode_example<'py>(
    py: Python<'py>,
    entries: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyBytes>> {
    let features = entries.map(features_from_py).transpose()?;
    let ex = Example { features };
    Ok(encoded(py, &ex))
}

/// `m` in protobuf's wire form, as Python bytes.
fn encoded<'py>(py: Python<'py>, m: &impl Message) -> Bound<'py, PyBytes> {
    PyBytes::new(py, &m.encode_to_vec())
}

/// `_native.encode_features(entries) -> bytes`: a `tf.train.Features`.
#[pyfunction]
fn encode_features<'py>(
    py: Python<'py>,
    entries: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    Ok(encoded(py, &features_from_py(entries)?))
}

/// `_native.encode_feature(kind, values) -> bytes`: a `tf.train.Feature`.
#[pyfunction]
fn encode_feature<'py>(
    py: Python<'py>,
    kind: u8,
    values: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    Ok(encoded(py, &feature_from_py(kind, values)?))
}

/// `_native.encode_feature_list(steps) -> bytes`: a
/// `tf.train.FeatureList`, `steps` a sequence of `(kind, values)`.
#[pyfunction]
fn encode_feature_list<'py>(
    py: Python<'py>,
    steps: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    Ok(encoded(py, &feature_list_from_py(steps)?))
}

/// `_native.encode_feature_lists(entries) -> bytes`: a
/// `tf.train.FeatureLists`, `entries` a sequence of `(name, steps)`.
#[pyfunction]
fn encode_feature_lists<'py>(
    py: Python<'py>,
    entries: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    Ok(encoded(py, &feature_lists_from_py(entries)?))
}

/// `_native.encode_sequence_example(context, feature_lists) -> bytes`:
/// `context` as for [`encode_features`], `feature_lists` as for
/// [`encode_feature_lists`]; `None` leaves that field unset.
#[pyfunction]
fn encode_sequence_example<'py>(
    py: Python<'py>,
    context: Option<&Bound<'py, PyAny>>,
    feature_lists: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyBytes>> {
    let se = SequenceExample {
        context: context.map(features_from_py).transpose()?,
        feature_lists: feature_lists.map(feature_lists_from_py).transpose()?,
    };
    Ok(encoded(py, &se))
}

/// `_native.decode_example(data) -> list[(name, kind, values)] | None`.
///
/// A malformed message raises `ValueError` with prost's description
/// (protobuf's `DecodeError` is a subclass of `Exception` too; feedstock
/// has no protobuf runtime to borrow it from).
#[pyfunction]
fn decode_example<'py>(
    py: Python<'py>,
    data: &[u8],
) -> PyResult<Option<Bound<'py, PyList>>> {
    let ex = Example::decode(data).map_err(decode_error)?;
    ex.features.map(|f| features_to_py(py, f)).transpose()
}

/// `_native.decode_features(data) -> list[(name, kind, values)]`.
#[pyfunction]
fn decode_features<'py>(
    py: Python<'py>,
    data: &[u8],
) -> PyResult<Bound<'py, PyList>> {
    features_to_py(py, Features::decode(data).map_err(decode_error)?)
}

/// `_native.decode_feature(data) -> (kind, values)`.
#[pyfunction]
fn decode_feature<'py>(
    py: Python<'py>,
    data: &[u8],
) -> PyResult<(u8, Bound<'py, PyList>)> {
    feature_to_py(py, Feature::decode(data).map_err(decode_error)?)
}

/// `_native.decode_feature_list(data) -> list[(kind, values)]`.
#[pyfunction]
fn decode_feature_list<'py>(
    py: Python<'py>,
    data: &[u8],
) -> PyResult<Bound<'py, PyList>> {
    feature_list_to_py(py, FeatureList::decode(data).map_err(decode_error)?)
}

/// `_native.decode_feature_lists(data) -> list[(name, steps)]`.
#[pyfunction]
fn decode_feature_lists<'py>(
    py: Python<'py>,
    data: &[u8],
) -> PyResult<Bound<'py, PyList>> {
    feature_lists_to_py(py, FeatureLists::decode(data).map_err(decode_error)?)
}

/// A decoded message part that may be absent (`None` in Python).
type OptionalList<'py> = Option<Bound<'py, PyList>>;

/// `_native.decode_sequence_example(data) -> (context | None,
/// feature_lists | None)`, in the forms of [`decode_features`] and
/// [`decode_feature_lists`].
#[pyfunction]
fn decode_sequence_example<'py>(
    py: Python<'py>,
    data: &[u8],
) -> PyResult<(OptionalList<'py>, OptionalList<'py>)> {
    let se = SequenceExample::decode(data).map_err(decode_error)?;
    Ok((
        se.context.map(|f| features_to_py(py, f)).transpose()?,
        se.feature_lists
            .map(|l| feature_lists_to_py(py, l))
            .transpose()?,
    ))
}

fn decode_error(e: prost::DecodeError) -> PyErr {
    PyValueError::new_err(format!("error parsing message: {e}"))
}

fn feature_to_py(
    py: Python<'_>,
    f: Feature,
) -> PyResult<(u8, Bound<'_, PyList>)> {
    Ok(match f.kind {
        None => (0, PyList::empty(py)),
        Some(feature::Kind::BytesList(l)) => (
            1,
            PyList::new(py, l.value.iter().map(|b| PyBytes::new(py, b)))?,
        ),
        Some(feature::Kind::FloatList(l)) => {
            (2, PyList::new(py, l.value.iter().map(|&v| f64::from(v)))?)
        }
        Some(feature::Kind::Int64List(l)) => (3, PyList::new(py, l.value)?),
    })
}

fn features_to_py(
    py: Python<'_>,
    features: Features,
) -> PyResult<Bound<'_, PyList>> {
    let out = PyList::empty(py);
    for (name, f) in features.feature {
        let (kind, values) = feature_to_py(py, f)?;
        out.append(PyTuple::new(
            py,
            [
                name.into_pyobject(py)?.into_any(),
                kind.into_pyobject(py)?.into_any(),
                values.into_any(),
            ],
        )?)?;
    }
    Ok(out)
}

fn feature_list_to_py(
    py: Python<'_>,
    list: FeatureList,
) -> PyResult<Bound<'_, PyList>> {
    let out = PyList::empty(py);
    for f in list.feature {
        out.append(feature_to_py(py, f)?)?;
    }
    Ok(out)
}

fn feature_lists_to_py(
    py: Python<'_>,
    lists: FeatureLists,
) -> PyResult<Bound<'_, PyList>> {
    let out = PyList::empty(py);
    for (name, list) in lists.feature_list {
        out.append((name, feature_list_to_py(py, list)?))?;
    }
    Ok(out)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(encode_example, m)?)?;
    m.add_function(wrap_pyfunction!(encode_features, m)?)?;
    m.add_function(wrap_pyfunction!(encode_feature, m)?)?;
    m.add_function(wrap_pyfunction!(decode_example, m)?)?;
    m.add_function(wrap_pyfunction!(decode_features, m)?)?;
    m.add_function(wrap_pyfunction!(decode_feature, m)?)?;
    m.add_function(wrap_pyfunction!(encode_feature_list, m)?)?;
    m.add_function(wrap_pyfunction!(encode_feature_lists, m)?)?;
    m.add_function(wrap_pyfunction!(encode_sequence_example, m)?)?;
    m.add_function(wrap_pyfunction!(decode_feature_list, m)?)?;
    m.add_function(wrap_pyfunction!(decode_feature_lists, m)?)?;
    m.add_function(wrap_pyfunction!(decode_sequence_example, m)?)
}
