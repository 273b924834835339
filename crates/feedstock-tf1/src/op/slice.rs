//! Ops that cut a block out of a tensor: `tf.slice`, `tf.strided_slice`
//! and Python's indexing, with bounds known while building or computed
//! when run.

use std::ops::RangeInclusive;

use feedstock::error::Result;
use feedstock::queue::PartialShape;
use feedstock::tensor::{DType, Tensor, Value};
use feedstock::transform;

use super::{dense_from, invalid, op, Args, In, OpDef, OutInfo};
use crate::graph::SliceDim;

/// Checks that `i` is a dense int32 or int64 vector, as `what` needs;
/// its static length if known.
///
/// # Errors
/// InvalidArgument naming `what` otherwise.
pub(crate) fn int_vector_len(i: &In, what: &str) -> Result<Option<usize>> {
    let info = i.dense(what)?;
    let dims = i.dims();
    if !matches!(info.dtype, DType::I32 | DType::I64)
        || dims.as_ref().is_some_and(|d| d.len() != 1)
    {
        return Err(invalid(format!(
            "{what}: expected an int32 or int64 vector"
        )));
    }
    Ok(dims.and_then(|d| d[0]))
}

/// An int32 or int64 vector's values.
///
/// # Errors
/// InvalidArgument for another rank.
pub(crate) fn int_vector(t: &Tensor) -> Result<Vec<i64>> {
    if t.rank() != 1 {
        return Err(invalid(format!(
            "expected an integer vector, got shape {}",
            t.shape()
        )));
    }
    Ok(t.cast(DType::I64)?.as_slice::<i64>()?.to_vec())
}

op! {
    /// `tf.slice` with bounds known while building: the block of input 0
    /// starting at `begin` of `size` (-1: to the end).
    Slice = "Slice" {
        /// Where the block starts, per axis.
        begin: Vec<usize>,
        /// Its length per axis; -1: to the end.
        size: Vec<i64>,
    }
}

impl OpDef for Slice {
    fn arity(&self) -> RangeInclusive<usize> {
        1..=1
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        let (begin, size) = (&self.begin, &self.size);
        let info = ins[0].dense("slice")?;
        if begin.len() != size.len() {
            return Err(invalid("slice: begin and size differ in length"));
        }
        if let Some(s) = size.iter().find(|&&s| s < -1) {
            return Err(invalid(format!(
                "slice: a size is -1 (to the end) or more, got {s}"
            )));
        }
        let shape = match ins[0].dims() {
            Some(d) => {
                if d.len() != begin.len() {
                    return Err(invalid(format!(
                        "slice: {} indices for rank {}",
                        begin.len(),
                        d.len()
                    )));
                }
                let mut out = Vec::new();
                for ((&b, &s), dim) in begin.iter().zip(size).zip(&d) {
                    let len = if s >= 0 {
                        Some(s as usize)
                    } else {
                        dim.map(|n| n.saturating_sub(b))
                    };
                    if let (Some(n), Some(l)) = (dim, len) {
                        if b + l > *n {
                            return Err(invalid(format!(
                                "slice: {b}+{l} exceeds dimension {n}"
                            )));
                        }
                    }
                    out.push(len);
                }
                PartialShape::new(out)
            }
            None => PartialShape::new(
                size.iter()
                    .map(|&s| (s >= 0).then_some(s as usize))
                    .collect::<Vec<_>>(),
            ),
        };
        Ok(vec![dense_from(Some(shape), info.dtype, &ins[0])])
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        let (begin, size) = (&self.begin, &self.size);
        let t = a.dense(0)?;
        if t.rank() != begin.len() {
            return Err(invalid(format!(
                "slice: {} indices for a tensor of shape {:?}",
                begin.len(),
                t.dims()
            )));
        }
        let size: Vec<usize> = size
            .iter()
            .zip(begin)
            .zip(t.dims())
            .map(|((&s, &b), &d)| {
                if s >= 0 {
                    s as usize
                } else {
                    d.saturating_sub(b)
                }
            })
            .collect();
        out.push(transform::slice(t, begin, &size)?.into());
        Ok(())
    }
}

op! {
    /// `tf.slice(x, begin, size)` with `begin` and `size` computed when
    /// run: inputs 1 and 2 (integer vectors of `x`'s rank; a size of -1
    /// runs to the end), checked then as TensorFlow checks them. The
    /// static shape keeps `x`'s rank, its dimensions unknown.
    SliceInputs = "SliceInputs" {}
}

impl OpDef for SliceInputs {
    fn arity(&self) -> RangeInclusive<usize> {
        3..=3
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        let info = ins[0].dense("slice")?;
        for i in &ins[1..3] {
            int_vector_len(i, "slice")?;
        }
        let shape = ins[0]
            .dims()
            .map(|d| PartialShape::new(vec![None; d.len()]));
        Ok(vec![dense_from(shape, info.dtype, &ins[0])])
    }

    fn default_name(&self) -> &'static str {
        "Slice"
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        let t = a.dense(0)?;
        let begin = int_vector(a.dense(1)?)?;
        let size = int_vector(a.dense(2)?)?;
        let (begin, size) = slice_bounds(t.dims(), &begin, &size)?;
        out.push(transform::slice(t, &begin, &size)?.into());
        Ok(())
    }
}

op! {
    /// `tf.strided_slice` with bounds known while building, in
    /// TensorFlow's form: per entry `k`, `x[begin[k]:end[k]:strides[k]]`,
    /// bit `k` of `begin_mask` / `end_mask` leaving that bound out, of
    /// `shrink_axis_mask` taking position `begin[k]` alone (the axis
    /// removed), of `new_axis_mask` a new axis of 1, of `ellipsis_mask`
    /// as many whole axes as the other entries leave. Python's indexing
    /// (`x[1:, 0]`) is [`StridedSlice::index`].
    StridedSlice = "StridedSlice" {
        /// First positions.
        begin: Vec<i64>,
        /// End positions (excluded).
        end: Vec<i64>,
        /// Steps; none 0.
        strides: Vec<i64>,
        /// Entries whose begin is left out.
        begin_mask: i64,
        /// Entries whose end is left out.
        end_mask: i64,
        /// The entry that is `...`.
        ellipsis_mask: i64,
        /// Entries that are a new axis.
        new_axis_mask: i64,
        /// Entries that are one position.
        shrink_axis_mask: i64,
    }
}

impl StridedSlice {
    /// Python's indexing `x[dims...]`. Dimensions not named are taken
    /// whole.
    pub fn index(dims: &[SliceDim]) -> StridedSlice {
        let mut s = StridedSlice::ranges(&[], &[], &[]);
        for (k, d) in dims.iter().enumerate() {
            let bit = 1i64 << k.min(63);
            let (b, e, st) = match *d {
                SliceDim::At(i) => {
                    s.shrink_axis_mask |= bit;
                    (i, i.wrapping_add(1), 1)
                }
                SliceDim::Range { start, stop, step } => {
                    if start.is_none() {
                        s.begin_mask |= bit;
                    }
                    if stop.is_none() {
                        s.end_mask |= bit;
                    }
                    (start.unwrap_or(0), stop.unwrap_or(0), step)
                }
                SliceDim::NewAxis => {
                    s.new_axis_mask |= bit;
                    (0, 0, 1)
                }
                SliceDim::Ellipsis => {
                    s.ellipsis_mask |= bit;
                    (0, 0, 1)
                }
            };
            s.begin.push(b);
            s.end.push(e);
            s.strides.push(st);
        }
        s
    }

    /// `tf.strided_slice(x, begin, end, strides)` with no masks: each
    /// axis `k` taken as `x[begin[k]:end[k]:strides[k]]`.
    pub fn ranges(
        begin: &[i64],
        end: &[i64],
        strides: &[i64],
    ) -> StridedSlice {
        StridedSlice {
            begin: begin.to_vec(),
            end: end.to_vec(),
            strides: strides.to_vec(),
            begin_mask: 0,
            end_mask: 0,
            ellipsis_mask: 0,
            new_axis_mask: 0,
            shrink_axis_mask: 0,
        }
    }

    /// The entries as Python's indexing writes them.
    ///
    /// # Errors
    /// InvalidArgument when begin, end and strides differ in length.
    pub fn dims(&self) -> Result<Vec<SliceDim>> {
        let n = self.begin.len();
        if self.end.len() != n || self.strides.len() != n {
            return Err(invalid(
                "strided_slice: begin, end and strides differ in length",
            ));
        }
        let bit = |m: i64, k: usize| k < 64 && m >> k & 1 == 1;
        Ok((0..n)
            .map(|k| {
                if bit(self.ellipsis_mask, k) {
                    SliceDim::Ellipsis
                } else if bit(self.new_axis_mask, k) {
                    SliceDim::NewAxis
                } else if bit(self.shrink_axis_mask, k) {
                    SliceDim::At(self.begin[k])
                } else {
                    SliceDim::Range {
                        start: (!bit(self.begin_mask, k))
                            .then_some(self.begin[k]),
                        stop: (!bit(self.end_mask, k)).then_some(self.end[k]),
                        step: self.strides[k],
                    }
                }
            })
            .collect())
    }
}

impl OpDef for StridedSlice {
    fn arity(&self) -> RangeInclusive<usize> {
        1..=1
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        let dims = &self.dims()?;
        let info = ins[0].dense("strided_slice")?;
        if dims
            .iter()
            .any(|d| matches!(d, SliceDim::Range { step: 0, .. }))
        {
            return Err(invalid("strided_slice: step must not be 0"));
        }
        if dims
            .iter()
            .filter(|d| matches!(d, SliceDim::Ellipsis))
            .count()
            > 1
        {
            return Err(invalid("strided_slice: at most one ellipsis"));
        }
        let shape = match ins[0].dims() {
            Some(d) => {
                let plan = expand_slice(dims, d.len())?;
                let mut out = Vec::new();
                for (entry, axis) in plan {
                    match (entry, axis) {
                        (SliceDim::NewAxis, _) => out.push(Some(1)),
                        (SliceDim::At(i), Some(k)) => {
                            if let Some(n) = d[k] {
                                resolve_index(i, n)?;
                            }
                        }
                        (SliceDim::Range { start, stop, step }, Some(k)) => {
                            out.push(
                                d[k].map(|n| {
                                    range_len(start, stop, step, n).1
                                }),
                            )
                        }
                        _ => {}
                    }
                }
                Some(PartialShape::new(out))
            }
            None => None,
        };
        Ok(vec![dense_from(shape, info.dtype, &ins[0])])
    }

    fn default_name(&self) -> &'static str {
        "strided_slice"
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        out.push(strided_slice(a.dense(0)?, &self.dims()?)?.into());
        Ok(())
    }
}

op! {
    /// `tf.strided_slice(x, begin, end, strides)` (no masks) with the
    /// bounds computed when run: inputs 1..=3, integer vectors of one
    /// length; axis `k` taken as `x[begin[k]:end[k]:strides[k]]`. The
    /// static shape has `x`'s rank, its sliced dimensions unknown.
    StridedSliceInputs = "StridedSliceInputs" {}
}

impl OpDef for StridedSliceInputs {
    fn arity(&self) -> RangeInclusive<usize> {
        4..=4
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        let info = ins[0].dense("strided_slice")?;
        let mut n = None;
        for i in &ins[1..4] {
            n = n.or(int_vector_len(i, "strided_slice")?);
        }
        let shape = ins[0].dims().map(|d| {
            let k = n.unwrap_or(d.len()).min(d.len());
            let mut out = vec![None; k];
            out.extend_from_slice(&d[k..]);
            PartialShape::new(out)
        });
        Ok(vec![dense_from(shape, info.dtype, &ins[0])])
    }

    fn default_name(&self) -> &'static str {
        "StridedSlice"
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        let t = a.dense(0)?;
        let [b, e, st] = [1, 2, 3].map(|k| a.dense(k).and_then(int_vector));
        let (b, e, st) = (b?, e?, st?);
        if b.len() != e.len() || b.len() != st.len() {
            return Err(invalid(
                "strided_slice: begin, end and strides differ in length",
            ));
        }
        if st.contains(&0) {
            return Err(invalid("strides[i] must be non-zero"));
        }
        let dims: Vec<SliceDim> = (0..b.len())
            .map(|k| SliceDim::Range {
                start: Some(b[k]),
                stop: Some(e[k]),
                step: st[k],
            })
            .collect();
        out.push(strided_slice(t, &dims)?.into());
        Ok(())
    }
}

/// `tf.slice`'s begin and size checked against `dims` as TensorFlow
/// checks them (its words); a size of -1 runs to the end.
fn slice_bounds(
    dims: &[usize],
    begin: &[i64],
    size: &[i64],
) -> Result<(Vec<usize>, Vec<usize>)> {
    if begin.len() != dims.len() || size.len() != dims.len() {
        return Err(invalid(format!(
            "Expected begin and size arguments to be 1-D tensors of size \
             {}, but got shapes [{}] and [{}] instead.",
            dims.len(),
            begin.len(),
            size.len()
        )));
    }
    let (mut b, mut s) = (Vec::new(), Vec::new());
    for (k, &d) in dims.iter().enumerate() {
        let d = d as i64;
        let len = if size[k] == -1 { d - begin[k] } else { size[k] };
        if begin[k] < 0 || begin[k] > d {
            return Err(invalid(format!(
                "Expected begin[{k}] in [0, {d}], but got {}",
                begin[k]
            )));
        }
        if len < 0 || begin[k] + len > d {
            return Err(invalid(format!(
                "Expected size[{k}] in [0, {}], but got {}",
                d - begin[k],
                size[k]
            )));
        }
        b.push(begin[k] as usize);
        s.push(len as usize);
    }
    Ok((b, s))
}

/// Pairs each entry of a Python index with the input axis it reads
/// (`None` for a new axis), the ellipsis expanded.
fn expand_slice(
    dims: &[SliceDim],
    rank: usize,
) -> Result<Vec<(SliceDim, Option<usize>)>> {
    let named = dims
        .iter()
        .filter(|d| !matches!(d, SliceDim::NewAxis | SliceDim::Ellipsis))
        .count();
    if named > rank {
        return Err(invalid(format!(
            "too many indices ({named}) for a tensor of rank {rank}"
        )));
    }
    let full = SliceDim::Range {
        start: None,
        stop: None,
        step: 1,
    };
    let mut out = Vec::new();
    let mut axis = 0;
    let mut saw_ellipsis = false;
    for d in dims {
        match d {
            SliceDim::NewAxis => out.push((*d, None)),
            SliceDim::Ellipsis => {
                saw_ellipsis = true;
                for _ in 0..rank - named {
                    out.push((full, Some(axis)));
                    axis += 1;
                }
            }
            _ => {
                out.push((*d, Some(axis)));
                axis += 1;
            }
        }
    }
    if !saw_ellipsis {
        while axis < rank {
            out.push((full, Some(axis)));
            axis += 1;
        }
    }
    Ok(out)
}

/// A Python index `i` into a dimension of `n`.
fn resolve_index(i: i64, n: usize) -> Result<usize> {
    let n = n as i64;
    let j = if i < 0 { i + n } else { i };
    if j < 0 || j >= n {
        return Err(invalid(format!(
            "index {i} out of range for a dimension of {n}"
        )));
    }
    Ok(j as usize)
}

/// Python's `slice(start, stop, step).indices(n)`: the first position and
/// the number of positions.
fn range_len(
    start: Option<i64>,
    stop: Option<i64>,
    step: i64,
    n: usize,
) -> (i64, usize) {
    let n = n as i64;
    let clamp = |v: i64, lo: i64, hi: i64| v.max(lo).min(hi);
    let norm = |v: i64| if v < 0 { v + n } else { v };
    if step > 0 {
        let s = clamp(start.map_or(0, norm), 0, n);
        let e = clamp(stop.map_or(n, norm), 0, n);
        let len = if e > s { (e - s + step - 1) / step } else { 0 };
        (s, len as usize)
    } else {
        let s = clamp(start.map_or(n - 1, norm), -1, n - 1);
        let e = clamp(stop.map_or(-1, norm), -1, n - 1);
        let len = if s > e {
            (s - e + (-step) - 1) / (-step)
        } else {
            0
        };
        (s, len as usize)
    }
}

/// `t[dims...]`, Python's indexing.
fn strided_slice(t: &Tensor, dims: &[SliceDim]) -> Result<Tensor> {
    let in_dims = t.dims();
    let plan = expand_slice(dims, in_dims.len())?;
    let mut strides = vec![1i64; in_dims.len()];
    for k in (0..in_dims.len().saturating_sub(1)).rev() {
        strides[k] = strides[k + 1] * in_dims[k + 1] as i64;
    }
    let mut base = 0i64;
    // Per output axis (of the gathered block, before new axes): length
    // and source stride.
    let mut walk: Vec<(usize, i64)> = Vec::new();
    let mut out_dims = Vec::new();
    for (entry, axis) in plan {
        match (entry, axis) {
            (SliceDim::NewAxis, _) => out_dims.push(1),
            (SliceDim::At(i), Some(k)) => {
                base += resolve_index(i, in_dims[k])? as i64 * strides[k];
            }
            (SliceDim::Range { start, stop, step }, Some(k)) => {
                let (s, len) = range_len(start, stop, step, in_dims[k]);
                if len > 0 {
                    base += s * strides[k];
                }
                walk.push((len, strides[k] * step));
                out_dims.push(len);
            }
            _ => {}
        }
    }
    // The strided copy of `tf.slice` and `tf.transpose` (runs copied
    // whole, planes interleaved), not a list of every element's offset
    // and a gather, which made CIFAR's decoding in the graph 5 times
    // slower, batched or not (`benches/plan.rs`, `cifar_graph_generic_ops`).
    let (lens, steps): (Vec<usize>, Vec<isize>) =
        walk.iter().map(|&(n, s)| (n, s as isize)).unzip();
    let data = transform::strided(t.data(), &lens, &steps, base as usize);
    Tensor::from_data(out_dims, data)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use feedstock::error::Kind;

    #[test]
    fn slice_bounds_as_tensorflow_checks_them() {
        let (b, s) = slice_bounds(&[4, 3], &[1, 0], &[-1, 2]).unwrap();
        assert_eq!((b, s), (vec![1, 0], vec![3, 2]));
        let e = slice_bounds(&[3], &[2], &[2]).unwrap_err();
        assert_eq!(e.kind(), Kind::InvalidArgument);
        assert!(e.message().contains("size[0] in [0, 1]"));
        assert!(slice_bounds(&[3], &[4], &[-1]).is_err());
        assert!(slice_bounds(&[3], &[0, 0], &[1]).is_err());
    }

    #[test]
    fn python_slice_lengths() {
        assert_eq!(range_len(None, None, 1, 5), (0, 5));
        assert_eq!(range_len(Some(1), Some(3), 1, 5), (1, 2));
        assert_eq!(range_len(Some(-2), None, 1, 5), (3, 2));
        assert_eq!(range_len(None, None, -1, 5), (4, 5));
        assert_eq!(range_len(None, None, 2, 5), (0, 3));
        assert_eq!(range_len(Some(10), None, 1, 5), (5, 0));
        assert_eq!(range_len(Some(3), Some(0), -2, 5), (3, 2));
    }

    #[test]
    fn an_index_round_trips_through_the_masks() {
        let dims = [
            SliceDim::At(-1),
            SliceDim::NewAxis,
            SliceDim::Range {
                start: None,
                stop: Some(3),
                step: 2,
            },
            SliceDim::Ellipsis,
            SliceDim::Range {
                start: Some(-2),
                stop: None,
                step: -1,
            },
        ];
        let s = StridedSlice::index(&dims);
        assert_eq!(s.shrink_axis_mask, 1);
        assert_eq!(s.new_axis_mask, 2);
        assert_eq!(s.begin_mask, 4);
        assert_eq!(s.ellipsis_mask, 8);
        assert_eq!(s.end_mask, 16);
        assert_eq!(s.dims().unwrap(), dims);
        let bad = StridedSlice::ranges(&[0], &[1, 2], &[1]);
        assert!(bad.dims().is_err());
    }

    /// Python's `t[dims]` over `t`'s row-major elements, position by
    /// position: every axis's positions listed, then their product.
    fn slice_reference(
        t: &Tensor,
        dims: &[SliceDim],
    ) -> (Vec<usize>, feedstock::tensor::Data) {
        let in_dims = t.dims();
        let mut axes: Vec<Vec<usize>> = Vec::new();
        let mut out_dims = Vec::new();
        for (k, d) in dims.iter().enumerate() {
            match *d {
                SliceDim::At(i) => {
                    axes.push(vec![resolve_index(i, in_dims[k]).unwrap()])
                }
                SliceDim::Range { start, stop, step } => {
                    let (s, len) = range_len(start, stop, step, in_dims[k]);
                    let at = (0..len as i64).map(|i| (s + i * step) as usize);
                    axes.push(at.collect());
                    out_dims.push(len);
                }
                _ => unreachable!("the test draws At and Range only"),
            }
        }
        let mut flat = vec![0usize];
        for (k, at) in axes.iter().enumerate() {
            let inner: usize = in_dims[k + 1..].iter().product();
            flat = flat
                .iter()
                .flat_map(|f| at.iter().map(move |p| f + p * inner))
                .collect();
        }
        let rows = Tensor::from_data([t.num_elements()], t.data().clone())
            .unwrap()
            .unstack();
        let picked: Vec<Tensor> =
            flat.iter().map(|&f| rows[f].clone()).collect();
        let data = if picked.is_empty() {
            Tensor::zeros(t.dtype(), [0]).unwrap().data().clone()
        } else {
            Tensor::stack(&picked).unwrap().data().clone()
        };
        (out_dims, data)
    }

    fn slice_dim() -> impl proptest::strategy::Strategy<Value = SliceDim> {
        use proptest::prelude::*;
        let bound = proptest::option::of(-7i64..7);
        prop_oneof![
            (-5i64..5).prop_map(SliceDim::At),
            (bound.clone(), bound, prop_oneof![-3i64..0, 1i64..4]).prop_map(
                |(start, stop, step)| SliceDim::Range { start, stop, step }
            ),
        ]
    }

    proptest::proptest! {
        /// The strided copy behind `strided_slice` takes the elements
        /// Python's indexing takes, for any steps (negative ones
        /// included), odd extents and several dtypes.
        #[test]
        fn strided_slice_matches_the_reference(
            shape in proptest::collection::vec(0usize..6, 1..=4),
            dims in proptest::collection::vec(slice_dim(), 4),
            dtype in proptest::sample::select(vec![
                DType::U8, DType::I32, DType::F64, DType::Bool, DType::String,
            ]),
        ) {
            let n: usize = shape.iter().product();
            let dims = &dims[..shape.len()];
            let ok = dims.iter().zip(&shape).all(|(d, &len)| match *d {
                SliceDim::At(i) => resolve_index(i, len).is_ok(),
                _ => true,
            });
            proptest::prop_assume!(ok);
            let ints = Tensor::new(&shape[..], (0..n as i32).collect()).unwrap();
            let t = if dtype == DType::String {
                let s = ints.as_slice::<i32>().unwrap();
                let b = s.iter().map(|i| Bytes::from(i.to_string())).collect();
                Tensor::new(&shape[..], b).unwrap()
            } else {
                ints.cast(dtype).unwrap()
            };
            let got = strided_slice(&t, dims).unwrap();
            let (want_dims, want) = slice_reference(&t, dims);
            proptest::prop_assert_eq!(got.dims(), &want_dims[..]);
            proptest::prop_assert!(got.data() == &want);
        }
    }

    #[test]
    fn strided_slice_like_numpy() {
        let t = Tensor::new([2, 3], (0..6i32).collect()).unwrap();
        let col = strided_slice(
            &t,
            &[
                SliceDim::Range {
                    start: None,
                    stop: None,
                    step: 1,
                },
                SliceDim::At(-1),
            ],
        )
        .unwrap();
        assert_eq!(col.dims(), &[2]);
        assert_eq!(col.as_slice::<i32>().unwrap(), &[2, 5]);
        let rev = strided_slice(
            &t,
            &[
                SliceDim::Ellipsis,
                SliceDim::Range {
                    start: None,
                    stop: None,
                    step: -1,
                },
            ],
        )
        .unwrap();
        assert_eq!(rev.as_slice::<i32>().unwrap(), &[2, 1, 0, 5, 4, 3]);
        let row =
            strided_slice(&t, &[SliceDim::At(1), SliceDim::NewAxis]).unwrap();
        assert_eq!(row.dims(), &[1, 3]);
        assert!(strided_slice(&t, &[SliceDim::At(2)]).is_err());
    }
}
