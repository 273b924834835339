//! Output columns: one per feature of a spec, filled example by example
//! and turned into a tensor once the batch is done.

use std::fmt;

use bytes::Bytes;

use super::feature;
use super::walk::Src;
use super::wire::WireError;
use crate::error::{Error, Result};
use crate::tensor::{DType, Data, Dims, SparseTensor, Tensor, Value};

/// Where in the input a column is, for error messages: the record key and,
/// in a batch, the example's position.
#[derive(Debug, Clone, Copy)]
pub(crate) struct At<'a> {
    /// The record key, if the caller gave one.
    pub(crate) key: Option<&'a str>,
    /// The position in the batch, for batched parsing.
    pub(crate) index: Option<usize>,
    /// What is being parsed: "Example" or "SequenceExample".
    pub(crate) what: &'static str,
}

impl At<'_> {
    /// An InvalidArgument error about `feature`.
    pub(crate) fn error(
        &self,
        feature: &str,
        what: impl fmt::Display,
    ) -> Error {
        self.finish(
            Error::invalid_argument(format!("feature \"{feature}\" {what}"))
                .with_field(feature),
        )
    }

    /// An InvalidArgument error for a malformed protobuf, about `feature`
    /// if the malformed bytes are its value.
    pub(crate) fn wire(&self, feature: Option<&str>, w: WireError) -> Error {
        let mut msg = format!(
            "could not parse serialized {}: {} at byte {}",
            self.what, w.what, w.pos
        );
        let mut e = match feature {
            Some(f) => {
                msg.push_str(&format!(" in feature \"{f}\""));
                Error::invalid_argument(msg).with_field(f)
            }
            None => Error::invalid_argument(msg),
        };
        e = self.finish(e);
        e
    }

    fn finish(&self, e: Error) -> Error {
        let e = match self.index {
            Some(i) => {
                let m = format!("{} (example {i} of the batch)", e.message());
                e.with_message(m)
            }
            None => e,
        };
        match self.key {
            Some(k) => e.with_key(k),
            None => e,
        }
    }

    /// The error for a feature value that could not be read.
    pub(crate) fn bad(&self, feature: &str, want: DType, bad: Bad) -> Error {
        match bad {
            Bad::Wire(w) => self.wire(Some(feature), w),
            Bad::DType(found) => self.error(
                feature,
                format_args!(
                    "holds {} values but the spec wants {}",
                    list_name(found),
                    list_name(want)
                ),
            ),
        }
    }
}

/// The name of the `Feature` list holding `dtype` values.
pub(crate) fn list_name(dtype: DType) -> &'static str {
    match dtype {
        DType::I64 => "int64",
        DType::F32 => "float",
        _ => "bytes",
    }
}

/// What reading one feature found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Got {
    /// The Example has no entry of that name.
    Absent,
    /// The entry is a `Feature` with no list set.
    Unset,
    /// This many values were appended.
    Values(usize),
}

/// Why reading one feature failed.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Bad {
    /// The value is malformed.
    Wire(WireError),
    /// The value holds a list of this other dtype.
    DType(DType),
}

/// Reads the feature at `src` (if present), appending its values to
/// `out`, which has the dtype the spec wants.
#[inline]
pub(crate) fn read(
    src: Option<&Src>,
    record: &Bytes,
    out: &mut Data,
) -> Result<Got, Bad> {
    match src {
        None => Ok(Got::Absent),
        Some(src) => {
            let (buf, range) = src.resolve(record);
            read_at(buf, range, out)
        }
    }
}

/// Reads the `Feature` in `buf[range]`, appending its values to `out`.
#[inline]
pub(crate) fn read_at(
    buf: &Bytes,
    range: std::ops::Range<usize>,
    out: &mut Data,
) -> Result<Got, Bad> {
    match feature::locate(buf, range).map_err(Bad::Wire)? {
        None => Ok(Got::Unset),
        Some(loc) if loc.dtype != out.dtype() => Err(Bad::DType(loc.dtype)),
        Some(loc) => feature::append(buf, &loc, out)
            .map(Got::Values)
            .map_err(Bad::Wire),
    }
}

/// Appends `n` copies of the one element of `value`.
pub(crate) fn fill(data: &mut Data, value: &Data, n: usize) -> Result<()> {
    match (data, value) {
        (Data::I64(d), Data::I64(v)) => d.extend(std::iter::repeat_n(v[0], n)),
        (Data::F32(d), Data::F32(v)) => d.extend(std::iter::repeat_n(v[0], n)),
        (Data::String(d), Data::String(v)) => {
            d.extend(std::iter::repeat_n(v[0].clone(), n))
        }
        _ => return Err(Error::internal("padding of another dtype")),
    }
    Ok(())
}

/// The padding element of a feature: its default, or zero / empty.
pub(crate) fn padding(dtype: DType, default: Option<&Tensor>) -> Data {
    match default {
        Some(t) => t.data().clone(),
        None => Data::zeros(dtype, 1),
    }
}

/// Copies `data` (rows of `stride` elements, `rows[e]` of them for
/// example `e`) into `[batch, max_rows, stride]` order, padding each
/// example with `pad`.
pub(crate) fn pad_rows(
    data: &Data,
    rows: &[usize],
    stride: usize,
    pad: &Data,
) -> Result<(Data, usize)> {
    let max = rows.iter().copied().max().unwrap_or(0);
    if rows.iter().all(|&r| r == max) {
        return Ok((data.clone(), max));
    }
    let mut out = Data::with_capacity(data.dtype(), rows.len() * max * stride);
    let mut at = 0;
    for &r in rows {
        out.extend_from(data, at..at + r * stride)?;
        fill(&mut out, pad, (max - r) * stride)?;
        at += r * stride;
    }
    Ok((out, max))
}

/// Builds a sparse tensor from per-example (or per-step) value counts:
/// entry `j` of group `g` gets index `[prefix(g).., j]`.
pub(crate) fn ragged_indices(
    lens: &[usize],
    prefix: impl Fn(usize) -> Option<i64>,
    nnz: usize,
    width: usize,
) -> Vec<i64> {
    let mut idx = Vec::with_capacity(nnz * width);
    for (g, &n) in lens.iter().enumerate() {
        let p = prefix(g);
        for j in 0..n {
            idx.extend(p);
            idx.push(j as i64);
        }
    }
    idx
}

/// An empty vector of `dtype` (one of the three Example dtypes) with room
/// for `n` values; cheaper than [`Data::with_capacity`], which matters for
/// one small Example.
fn empty(dtype: DType, n: usize) -> Data {
    match dtype {
        DType::I64 => Data::I64(Vec::with_capacity(n)),
        DType::F32 => Data::F32(Vec::with_capacity(n)),
        _ => Data::String(Vec::with_capacity(n)),
    }
}

/// A column for one feature of an Example spec.
#[derive(Debug)]
pub(crate) enum Column {
    /// `FixedLenFeature`: `n` values per example.
    Fixed { n: usize, data: Data },
    /// `VarLenFeature`: values and the count per example.
    VarLen { data: Data, lens: Vec<usize> },
    /// `FixedLenSequenceFeature`: values and the rows per example.
    FixedSeq {
        stride: usize,
        data: Data,
        rows: Vec<usize>,
    },
    /// `SparseFeature`: index rows (`rank` per entry, sorted within each
    /// example), values, and the count per example.
    Sparse {
        rank: usize,
        index: Vec<i64>,
        data: Data,
        lens: Vec<usize>,
        scratch: Vec<Data>,
    },
}

/// The most elements a column reserves before it has seen any data.
const MAX_RESERVE: usize = 1 << 20;

impl Column {
    /// An empty column for `kind`, with room for `batch` examples.
    pub(crate) fn new(kind: &super::FeatureKind, batch: usize) -> Column {
        use super::FeatureKind as K;
        let dtype = kind.dtype();
        match kind {
            K::Fixed { shape, .. } => {
                let n = shape.num_elements();
                // Reserve for the batch, but never more than a bound: the
                // spec's shape is a promise about the data, not memory.
                let cap = n.saturating_mul(batch).min(MAX_RESERVE);
                Column::Fixed {
                    n,
                    data: empty(dtype, cap),
                }
            }
            K::VarLen { .. } => Column::VarLen {
                data: empty(dtype, batch),
                lens: Vec::with_capacity(batch),
            },
            K::FixedSequence { shape, .. } => Column::FixedSeq {
                stride: shape.num_elements(),
                data: empty(dtype, batch),
                rows: Vec::with_capacity(batch),
            },
            K::Sparse { index_keys, .. } => Column::Sparse {
                rank: index_keys.len(),
                index: Vec::new(),
                data: empty(dtype, batch),
                lens: Vec::with_capacity(batch),
                scratch: vec![Data::I64(Vec::new()); index_keys.len()],
            },
        }
    }

    /// Adds one example. `slots` holds the Example's entries by slot;
    /// `reads` the slots this feature reads.
    #[inline]
    pub(crate) fn push(
        &mut self,
        name: &str,
        kind: &super::FeatureKind,
        reads: &[usize],
        slots: &[Option<Src>],
        record: &Bytes,
        at: &At<'_>,
    ) -> Result<()> {
        use super::FeatureKind as K;
        let dtype = kind.dtype();
        let src = slots[reads[0]].as_ref();
        match (self, kind) {
            (Column::Fixed { n, data }, K::Fixed { shape, default, .. }) => {
                // TensorFlow 2.21's SequenceExample parser counts a context
                // `Feature` with no list set as present with no values
                // (its Example parser, like ours there, as missing).
                let got = match read(src, record, data) {
                    Ok(Got::Unset) if at.what == "SequenceExample" => {
                        Ok(Got::Values(0))
                    }
                    other => other,
                };
                match got {
                    Ok(Got::Values(c)) if c == *n => Ok(()),
                    Ok(Got::Values(c)) => Err(at.error(
                        name,
                        format_args!(
                            "has {c} {} values but shape {shape} needs {n}",
                            list_name(dtype)
                        ),
                    )),
                    Ok(Got::Absent | Got::Unset) => match default {
                        Some(d) => data.extend_from(d.data(), 0..*n),
                        None => Err(at.error(
                            name,
                            format_args!(
                                "({}) is required but missing",
                                list_name(dtype)
                            ),
                        )),
                    },
                    Err(bad) => Err(at.bad(name, dtype, bad)),
                }
            }
            (Column::VarLen { data, lens }, _) => {
                match read(src, record, data) {
                    Ok(Got::Values(c)) => lens.push(c),
                    Ok(Got::Absent | Got::Unset) => lens.push(0),
                    Err(bad) => return Err(at.bad(name, dtype, bad)),
                }
                Ok(())
            }
            (
                Column::FixedSeq { stride, data, rows },
                K::FixedSequence {
                    shape,
                    allow_missing,
                    ..
                },
            ) => {
                let c = match read(src, record, data) {
                    Ok(Got::Values(c)) => c,
                    Ok(Got::Unset) => 0,
                    Ok(Got::Absent) if *allow_missing => 0,
                    Ok(Got::Absent) => {
                        return Err(at.error(
                            name,
                            "is required but missing (allow_missing is \
                             false)",
                        ))
                    }
                    Err(bad) => return Err(at.bad(name, dtype, bad)),
                };
                if c % *stride != 0 {
                    return Err(at.error(
                        name,
                        format_args!(
                            "has {c} {} values, not a whole number of rows \
                             of shape {shape}",
                            list_name(dtype)
                        ),
                    ));
                }
                rows.push(c / *stride);
                Ok(())
            }
            (
                Column::Sparse {
                    rank,
                    index,
                    data,
                    lens,
                    scratch,
                },
                K::Sparse {
                    index_keys,
                    value_key,
                    size,
                    already_sorted,
                    validate_indices,
                    ..
                },
            ) => {
                let start = data.len();
                let vsrc = slots[reads[*rank]].as_ref();
                let nv = match read(vsrc, record, data) {
                    Ok(Got::Values(c)) => c,
                    Ok(_) => 0,
                    Err(bad) => {
                        let e = at.bad(name, dtype, bad);
                        return Err(sparse_context(e, value_key));
                    }
                };
                for (k, key) in index_keys.iter().enumerate() {
                    let s = &mut scratch[k];
                    if let Data::I64(v) = s {
                        v.clear();
                    }
                    let src = slots[reads[k]].as_ref();
                    let ni = match read(src, record, s) {
                        Ok(Got::Values(c)) => c,
                        Ok(_) => 0,
                        Err(bad) => {
                            let e = at.bad(name, DType::I64, bad);
                            return Err(sparse_context(e, key));
                        }
                    };
                    if ni != nv {
                        return Err(at.error(
                            name,
                            format_args!(
                                "has {ni} indices in \"{key}\" but {nv} \
                                 values in \"{value_key}\""
                            ),
                        ));
                    }
                }
                let cols: Vec<&[i64]> = scratch
                    .iter()
                    .map(|s| match s {
                        Data::I64(v) => v.as_slice(),
                        _ => &[],
                    })
                    .collect();
                for (k, col) in cols.iter().enumerate() {
                    if !*validate_indices {
                        break;
                    }
                    if let Some(&bad) = col
                        .iter()
                        .find(|&&i| i < 0 || i as u64 >= size[k] as u64)
                    {
                        return Err(at.error(
                            name,
                            format_args!(
                                "has index {bad} in \"{}\", outside \
                                 [0, {})",
                                index_keys[k], size[k]
                            ),
                        ));
                    }
                }
                let row = |j: usize| cols.iter().map(move |c| c[j]);
                let sorted = *already_sorted
                    || (1..nv).all(|j| row(j - 1).cmp(row(j)).is_le());
                let mut order: Vec<usize> = (0..nv).collect();
                if !sorted {
                    // A stable sort keeps repeated indices in wire order,
                    // as TensorFlow's sparse_reorder does.
                    order.sort_by(|&a, &b| row(a).cmp(row(b)));
                    permute_tail(data, start, &order);
                }
                index.reserve(nv * *rank);
                for &j in &order {
                    index.extend(row(j));
                }
                lens.push(nv);
                Ok(())
            }
            _ => Err(Error::internal("column does not match its feature")),
        }
    }

    /// The finished value; `batch` is `None` for a single example (no
    /// batch dimension) or the number of examples.
    pub(crate) fn finish(
        self,
        kind: &super::FeatureKind,
        batch: Option<usize>,
    ) -> Result<Value> {
        use super::FeatureKind as K;
        // Shapes and index prefixes built inline: one small Example is
        // parsed per record in a per-record pipeline.
        let lead = |dims: &[usize]| -> Dims {
            batch.into_iter().chain(dims.iter().copied()).collect()
        };
        let prefix = |g: usize| -> Option<i64> { batch.map(|_| g as i64) };
        let width = usize::from(batch.is_some());
        Ok(match (self, kind) {
            (Column::Fixed { data, .. }, K::Fixed { shape, .. }) => {
                Value::Dense(Tensor::from_data(&lead(shape.dims())[..], data)?)
            }
            (Column::VarLen { data, lens }, _) => {
                let nnz = data.len();
                let max = lens.iter().copied().max().unwrap_or(0);
                let idx = ragged_indices(&lens, prefix, nnz, width + 1);
                Value::Sparse(SparseTensor::new(
                    Tensor::new([nnz, width + 1], idx)?,
                    Tensor::from_data([nnz], data)?,
                    &lead(&[max])[..],
                )?)
            }
            (
                Column::FixedSeq { stride, data, rows },
                K::FixedSequence {
                    dtype,
                    shape,
                    default,
                    ..
                },
            ) => {
                let pad = padding(*dtype, default.as_ref());
                let (data, max) = pad_rows(&data, &rows, stride, &pad)?;
                let mut dims = lead(&[max]);
                dims.extend_from_slice(shape.dims());
                Value::Dense(Tensor::from_data(&dims[..], data)?)
            }
            (
                Column::Sparse {
                    rank,
                    index,
                    data,
                    lens,
                    ..
                },
                K::Sparse { size, .. },
            ) => {
                let nnz = data.len();
                let w = width + rank;
                let mut idx = Vec::with_capacity(nnz * w);
                let mut rows = index.chunks(rank.max(1));
                for (g, &n) in lens.iter().enumerate() {
                    for r in rows.by_ref().take(n) {
                        idx.extend(prefix(g));
                        idx.extend_from_slice(r);
                    }
                }
                // The indices were checked as they were read, or are
                // deliberately passed through unchecked.
                Value::Sparse(SparseTensor::new_unvalidated(
                    Tensor::new([nnz, w], idx)?,
                    Tensor::from_data([nnz], data)?,
                    &lead(size)[..],
                )?)
            }
            _ => {
                return Err(Error::internal(
                    "column does not match its feature",
                ))
            }
        })
    }
}

/// Says which Example feature of a sparse feature was at fault.
fn sparse_context(e: Error, key: &str) -> Error {
    let m = format!("{}, in its Example feature \"{key}\"", e.message());
    e.with_message(m)
}

/// Reorders `data[start..]` so that element `i` becomes the old element
/// `start + order[i]`.
fn permute_tail(data: &mut Data, start: usize, order: &[usize]) {
    fn go<T: Clone>(v: &mut Vec<T>, start: usize, order: &[usize]) {
        let tail: Vec<T> =
            order.iter().map(|&j| v[start + j].clone()).collect();
        v.truncate(start);
        v.extend(tail);
    }
    match data {
        Data::I64(v) => go(v, start, order),
        Data::F32(v) => go(v, start, order),
        Data::String(v) => go(v, start, order),
        _ => {}
    }
}
