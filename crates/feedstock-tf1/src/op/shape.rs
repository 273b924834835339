//! Ops that give a tensor another shape or join, repeat, pick and fill
//! tensors: reshape, transpose, stack, concat, identity, shape, fill,
//! tile and gather.

use std::ops::RangeInclusive;
use std::sync::Arc;

use crate::kernels::reduce;
use feedstock::error::{Error, Result};
use feedstock::queue::PartialShape;
use feedstock::tensor::{DType, Tensor, Value};
use feedstock::transform;

use super::slice::int_vector_len;
use super::{dense, dense_from, invalid, op, sizes, Args, In, OpDef, OutInfo};
use crate::graph::{merge_dim, merge_static, Node, Op, Output, StaticShape};
use crate::kernels::expand;

op! {
    /// `tf.reshape` of input 0 to `shape` when it is known while
    /// building, else to the value of input 1 (an int32 or int64 vector
    /// computed when run); one entry may be -1: what the element count
    /// leaves. The static shape of a computed shape is what TensorFlow
    /// infers: the entries known of it ([`In::as_shape`]), else its
    /// length, refined against input 0's static shape.
    Reshape = "Reshape" {
        /// The new dimensions, -1 once at most; `None`: input 1 gives
        /// them when run.
        shape: Option<Vec<i64>>,
    }
}

impl OpDef for Reshape {
    fn arity(&self) -> RangeInclusive<usize> {
        let n = 1 + usize::from(self.shape.is_none());
        n..=n
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        let info = ins[0].dense("reshape")?;
        let out = match &self.shape {
            Some(shape) => Some(static_reshape(shape, &info.shape)?),
            None => computed_reshape(&ins[1], &info.shape)?,
        };
        let out = out.map(PartialShape::new);
        Ok(vec![dense_from(out, info.dtype, &ins[0])])
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        let t = a.dense(0)?;
        let dims = self.dims(a, t.dims())?;
        out.push(t.clone().reshape(dims)?.into());
        Ok(())
    }

    fn forwards(&self) -> bool {
        true
    }

    fn forward(&self, input: Value, a: &Args<'_, '_>) -> Result<Value> {
        let t = input.into_dense()?;
        let dims = self.dims(a, t.dims())?;
        Ok(t.reshape(dims)?.into())
    }
}

impl Reshape {
    /// The dims a value of `dims` is reshaped to when run.
    fn dims(&self, a: &Args<'_, '_>, dims: &[usize]) -> Result<Vec<usize>> {
        match &self.shape {
            Some(shape) => resolve_reshape(shape, dims),
            None => {
                let s = a.dense(1)?;
                if s.rank() != 1 {
                    return Err(invalid(format!(
                        "sizes input must be 1-D, not {}",
                        s.shape()
                    )));
                }
                resolve_reshape(s.cast(DType::I64)?.as_slice::<i64>()?, dims)
            }
        }
    }
}

/// The static dims of a reshape of a value of static shape `input` to
/// `shape`, known while building.
fn static_reshape(
    shape: &[i64],
    input: &StaticShape,
) -> Result<Vec<Option<usize>>> {
    if shape.iter().filter(|&&d| d == -1).count() > 1
        || shape.iter().any(|&d| d < -1)
    {
        return Err(invalid(format!("reshape: bad shape {shape:?}")));
    }
    let total = input
        .as_ref()
        .and_then(PartialShape::to_shape)
        .map(|s| s.num_elements());
    let product: usize = shape
        .iter()
        .filter(|&&d| d >= 0)
        .map(|&d| d as usize)
        .product();
    let out: Vec<Option<usize>> = shape
        .iter()
        .map(|&d| {
            if d >= 0 {
                Ok(Some(d as usize))
            } else {
                match total {
                    Some(t) if product > 0 && t % product == 0 => {
                        Ok(Some(t / product))
                    }
                    Some(t) if product == 0 && t == 0 => Ok(Some(0)),
                    Some(t) => Err(invalid(format!(
                        "reshape: cannot reshape {t} elements to {shape:?}"
                    ))),
                    None => Ok(None),
                }
            }
        })
        .collect::<Result<_>>()?;
    if let (Some(t), false) = (total, shape.contains(&-1)) {
        if t != product {
            return Err(invalid(format!(
                "reshape: cannot reshape {t} elements to {shape:?}"
            )));
        }
    }
    Ok(out)
}

/// The static dims of a reshape of a value of static shape `input` to
/// the shape `shape` computes, as TensorFlow's shape function infers
/// them: what is known of `shape`'s value, else its length (else an
/// unknown rank), then a single unknown dimension inferred from a fully
/// known input, and known element counts checked.
fn computed_reshape(
    shape: &In,
    input: &StaticShape,
) -> Result<Option<Vec<Option<usize>>>> {
    let info = shape.dense("reshape")?;
    if !matches!(info.dtype, DType::I32 | DType::I64) {
        return Err(Error::invalid_dtype(format!(
            "Value passed to parameter 'shape' has DataType {} not in list \
             of allowed values: int32, int64",
            info.dtype
        )));
    }
    let len = match shape.dims() {
        Some(d) if d.len() != 1 => {
            return Err(invalid(format!(
                "Shape must be rank 1 but is rank {} for 'Reshape'",
                d.len()
            )))
        }
        d => d.and_then(|d| d[0]),
    };
    let out = match shape.constant_tensor() {
        Some(t) => {
            let v = t.cast(DType::I64)?;
            let v = v.as_slice::<i64>()?;
            if let Some(bad) = v.iter().find(|&&d| d < -1) {
                return Err(invalid(format!(
                    "Invalid value in tensor used for shape: {bad}"
                )));
            }
            Some(v.iter().map(|&d| usize::try_from(d).ok()).collect())
        }
        None => (shape.as_shape.as_ref().map(|s| s.dims().to_vec()))
            .or_else(|| len.map(|n| vec![None; n])),
    };
    let (Some(mut out), Some(input)) = (out.clone(), input.as_ref()) else {
        return Ok(out);
    };
    let input = input.dims();
    // Each side's product of known dims and its one unknown dim.
    let side = |d: &[Option<usize>]| -> Option<(usize, Option<usize>)> {
        let mut unknown = None;
        let mut product = 1usize;
        for (k, x) in d.iter().enumerate() {
            match x {
                Some(n) => product = product.checked_mul(*n)?,
                None if unknown.is_some() => return None,
                None => unknown = Some(k),
            }
        }
        Some((product, unknown))
    };
    let (Some((p_out, u_out)), Some((p_in, u_in))) = (side(&out), side(input))
    else {
        return Ok(Some(out));
    };
    let show = |d: &[Option<usize>]| {
        let d: Vec<String> = d
            .iter()
            .map(|x| x.map_or_else(|| "?".to_owned(), |n| n.to_string()))
            .collect();
        format!("[{}]", d.join(","))
    };
    let uneven = |by: usize, n: usize| {
        invalid(format!(
            "Dimension size must be evenly divisible by {by} but is {n} for \
             'Reshape' with input shapes: {}, and the shape computed as {}",
            show(input),
            show(&out)
        ))
    };
    match (u_in, u_out) {
        (None, None) if p_in != p_out => {
            return Err(invalid(format!(
                "Cannot reshape a tensor with {p_in} elements to shape {} \
                 ({p_out} elements) for 'Reshape'",
                show(&out)
            )))
        }
        (None, Some(k)) if p_out > 0 => {
            if p_in % p_out != 0 {
                return Err(uneven(p_out, p_in));
            }
            out[k] = Some(p_in / p_out);
        }
        (Some(_), None) if p_in != 0 && p_out % p_in != 0 => {
            return Err(uneven(p_in, p_out));
        }
        _ => {}
    }
    Ok(Some(out))
}

/// What is known of output `o`'s value read as a shape ([`In::as_shape`]).
pub(crate) fn value_as_shape(nodes: &[Arc<Node>], o: Output) -> StaticShape {
    let node = nodes.get(o.node as usize)?;
    let info = node.outputs.get(o.index as usize)?;
    if info.sparse || !matches!(info.dtype, DType::I32 | DType::I64) {
        return None;
    }
    let dim = |d: i64| usize::try_from(d).ok();
    let dims: Vec<Option<usize>> = match &node.op {
        Op::Constant(Value::Dense(t)) if t.rank() == 1 => {
            let v = t.cast(DType::I64).ok()?;
            v.as_slice::<i64>().ok()?.iter().map(|&d| dim(d)).collect()
        }
        Op::Def(def) => match def.op_type() {
            "Stack" => (node.inputs.iter())
                .map(|i| {
                    let n = nodes.get(i.node as usize)?;
                    let shape =
                        n.outputs.get(i.index as usize)?.shape.as_ref();
                    if shape.is_some_and(|s| s.rank() != 0) {
                        return None;
                    }
                    Some(match &n.op {
                        Op::Constant(Value::Dense(t)) => {
                            let v = t.cast(DType::I64).ok()?;
                            v.scalar_value::<i64>().ok().and_then(dim)
                        }
                        _ => None,
                    })
                })
                .collect::<Option<_>>()?,
            "Shape" => {
                let i = node.inputs.first()?;
                let n = nodes.get(i.node as usize)?;
                n.outputs
                    .get(i.index as usize)?
                    .shape
                    .as_ref()?
                    .dims()
                    .to_vec()
            }
            "Concat" => {
                let mut out = Vec::new();
                for &i in &node.inputs {
                    out.extend_from_slice(value_as_shape(nodes, i)?.dims());
                }
                out
            }
            _ => return None,
        },
        _ => return None,
    };
    Some(PartialShape::new(dims))
}

op! {
    /// `tf.transpose`: axis `k` of the result is axis `perm[k]` of input
    /// 0.
    Transpose = "Transpose" {
        /// The permutation.
        perm: Vec<usize>,
    }
}

impl OpDef for Transpose {
    fn arity(&self) -> RangeInclusive<usize> {
        1..=1
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        let perm = &self.perm;
        let info = ins[0].dense("transpose")?;
        let mut sorted = perm.clone();
        sorted.sort_unstable();
        if sorted.iter().enumerate().any(|(i, &p)| i != p) {
            return Err(invalid(format!(
                "transpose: {perm:?} is not a permutation"
            )));
        }
        let shape = match ins[0].dims() {
            Some(d) if d.len() != perm.len() => {
                return Err(invalid(format!(
                    "transpose: permutation of {} axes for rank {}",
                    perm.len(),
                    d.len()
                )))
            }
            Some(d) => perm.iter().map(|&p| d[p]).collect(),
            None => vec![None; perm.len()],
        };
        let shape = Some(PartialShape::new(shape));
        Ok(vec![dense_from(shape, info.dtype, &ins[0])])
    }

    fn default_name(&self) -> &'static str {
        "transpose"
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        out.push(transform::transpose(a.dense(0)?, &self.perm)?.into());
        Ok(())
    }
}

/// The inputs' infos, checking there is one at least, all dense and of
/// one dtype.
fn same_dtype<'a>(ins: &'a [In], what: &str) -> Result<Vec<&'a OutInfo>> {
    if ins.is_empty() {
        return Err(invalid(format!("{what}: needs at least one tensor")));
    }
    let infos: Vec<&OutInfo> =
        ins.iter().map(|i| i.dense(what)).collect::<Result<_>>()?;
    if infos.iter().any(|i| i.dtype != infos[0].dtype) {
        return Err(Error::invalid_dtype(format!(
            "{what}: tensors differ in dtype"
        )));
    }
    Ok(infos)
}

fn norm_axis(axis: i64, rank: usize, what: &str) -> Result<usize> {
    let r = rank as i64;
    if axis < -r || axis >= r {
        return Err(invalid(format!(
            "{what}: axis {axis} out of range for rank {rank}"
        )));
    }
    Ok(if axis < 0 { axis + r } else { axis } as usize)
}

op! {
    /// `tf.stack`: the inputs (of one shape) along a new axis `axis` (a
    /// negative one counts from the end).
    Stack = "Stack" {
        /// Where the new axis goes.
        axis: i64,
    }
}

impl OpDef for Stack {
    fn arity(&self) -> RangeInclusive<usize> {
        1..=usize::MAX
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        let infos = same_dtype(ins, "stack")?;
        let mut shape = infos[0].shape.clone();
        for i in &infos[1..] {
            shape = merge_static(&shape, &i.shape)
                .ok_or_else(|| invalid("stack: tensors differ in shape"))?;
        }
        let shape = match shape.map(|s| s.dims().to_vec()) {
            Some(mut d) => {
                let a = norm_axis(self.axis, d.len() + 1, "stack")?;
                d.insert(a, Some(ins.len()));
                Some(PartialShape::new(d))
            }
            None => None,
        };
        Ok(vec![OutInfo {
            key: infos.iter().find_map(|i| i.key),
            ..dense(shape, infos[0].dtype)
        }])
    }

    fn default_name(&self) -> &'static str {
        "stack"
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        let ts: Vec<Tensor> = (0..a.len())
            .map(|k| a.dense(k).cloned())
            .collect::<Result<_>>()?;
        out.push(stack_or_concat(&ts, self.axis, true)?.into());
        Ok(())
    }
}

op! {
    /// `tf.concat`: the inputs joined along their axis `axis`.
    Concat = "Concat" {
        /// The axis joined along.
        axis: i64,
    }
}

impl OpDef for Concat {
    fn arity(&self) -> RangeInclusive<usize> {
        1..=usize::MAX
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        let axis = self.axis;
        let infos = same_dtype(ins, "concat")?;
        let mut out: Option<Vec<Option<usize>>> = None;
        for i in &infos {
            let Some(d) = i.shape.as_ref().map(|s| s.dims().to_vec()) else {
                continue;
            };
            let a = norm_axis(axis, d.len(), "concat")?;
            out = Some(match out {
                None => d,
                Some(mut o) => {
                    if o.len() != d.len() {
                        return Err(invalid("concat: tensors differ in rank"));
                    }
                    for k in 0..o.len() {
                        if k == a {
                            o[k] = o[k].zip(d[k]).map(|(x, y)| x + y);
                        } else {
                            o[k] = merge_dim(o[k], d[k]).ok_or_else(|| {
                                invalid("concat: tensors differ in shape")
                            })?;
                        }
                    }
                    o
                }
            });
        }
        let all_known = infos.iter().all(|i| i.shape.is_some());
        let shape = out.map(|mut o| {
            if !all_known {
                if let Ok(a) = norm_axis(axis, o.len(), "concat") {
                    o[a] = None;
                }
            }
            PartialShape::new(o)
        });
        Ok(vec![OutInfo {
            key: infos.iter().find_map(|i| i.key),
            ..dense(shape, infos[0].dtype)
        }])
    }

    fn default_name(&self) -> &'static str {
        "concat"
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        let ts: Vec<Tensor> = (0..a.len())
            .map(|k| a.dense(k).cloned())
            .collect::<Result<_>>()?;
        out.push(stack_or_concat(&ts, self.axis, false)?.into());
        Ok(())
    }
}

op! {
    /// `tf.identity`: input 0 itself (dense or sparse).
    Identity = "Identity" {}
}

impl OpDef for Identity {
    fn arity(&self) -> RangeInclusive<usize> {
        1..=1
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        Ok(vec![ins[0].info.clone()])
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        out.push(a.value(0).clone());
        Ok(())
    }

    fn forwards(&self) -> bool {
        true
    }
}

op! {
    /// `Tensor.set_shape`: input 0 itself with a static shape refined by
    /// `shape` (-1: unknown), any number of sizes left unknown (a reshape
    /// takes one). A value of another shape fails when run, as
    /// TensorFlow's `ensure_shape` (TensorFlow's `set_shape` does not
    /// check, and its value then fails later or not at all).
    EnsureShape = "EnsureShape" {
        /// The dimensions to merge in; -1 for one left as it is.
        shape: Vec<i64>,
    }
}

impl EnsureShape {
    fn wanted(&self) -> PartialShape {
        PartialShape::new(
            self.shape
                .iter()
                .map(|&d| usize::try_from(d).ok())
                .collect::<Vec<_>>(),
        )
    }
}

impl OpDef for EnsureShape {
    fn arity(&self) -> RangeInclusive<usize> {
        1..=1
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        let info = ins[0].dense("set_shape")?;
        let want = Some(self.wanted());
        let merged = merge_static(&info.shape, &want).ok_or_else(|| {
            invalid(format!(
                "set_shape: shapes {} and {} are incompatible",
                crate::graph::show_static(&info.shape),
                crate::graph::show_static(&want)
            ))
        })?;
        Ok(vec![OutInfo {
            shape: merged,
            ..info.clone()
        }])
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        out.push(self.forward(a.value(0).clone(), a)?);
        Ok(())
    }

    fn forwards(&self) -> bool {
        true
    }

    fn forward(&self, input: Value, _: &Args<'_, '_>) -> Result<Value> {
        let want = self.wanted();
        let dims = input.dense()?.dims();
        if !want.is_compatible(dims) {
            return Err(invalid(format!(
                "Shape of tensor {dims:?} is not compatible with expected \
                 shape {want}."
            )));
        }
        Ok(input)
    }
}

op! {
    /// `tf.shape`: input 0's run-time shape as an int32 vector of its
    /// rank.
    Shape = "Shape" {}
}

impl OpDef for Shape {
    fn arity(&self) -> RangeInclusive<usize> {
        1..=1
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        ins[0].dense("shape")?;
        let rank = ins[0].dims().map(|d| d.len());
        let shape = Some(PartialShape::new(vec![rank]));
        Ok(vec![dense(shape, DType::I32)])
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        let dims = a
            .dense(0)?
            .dims()
            .iter()
            .map(|&d| i32::try_from(d))
            .collect::<std::result::Result<Vec<i32>, _>>()
            .map_err(|_| invalid("shape: a dimension exceeds int32"))?;
        out.push(Tensor::vector::<i32>(dims).into());
        Ok(())
    }
}

op! {
    /// `tf.fill(dims, value)`: a tensor of the shape input 0 gives (an
    /// integer vector computed when run) holding the scalar input 1
    /// everywhere. The static shape is `dims`' value if it is a
    /// constant, else has `dims`' length, its dimensions unknown.
    Fill = "Fill" {}
}

impl OpDef for Fill {
    fn arity(&self) -> RangeInclusive<usize> {
        2..=2
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        let rank = int_vector_len(&ins[0], "fill")?;
        let v = ins[1].dense("fill")?;
        if v.shape.as_ref().is_some_and(|s| s.rank() != 0) {
            return Err(invalid("fill: the value must be a scalar"));
        }
        let shape = ins[0]
            .constant_dims()
            .or_else(|| rank.map(|n| vec![None; n]))
            .map(PartialShape::new);
        Ok(vec![dense(shape, v.dtype)])
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        let dims = sizes(a.dense(0)?)?;
        out.push(expand::fill(&dims, a.dense(1)?)?.into());
        Ok(())
    }
}

op! {
    /// `tf.tile`: input 0 repeated `multiples[k]` times along each axis
    /// `k`.
    Tile = "Tile" {
        /// The repeats per axis.
        multiples: Vec<usize>,
    }
}

impl OpDef for Tile {
    fn arity(&self) -> RangeInclusive<usize> {
        1..=1
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        let multiples = &self.multiples;
        let info = ins[0].dense("tile")?;
        let shape = match ins[0].dims() {
            Some(d) if d.len() != multiples.len() => {
                return Err(invalid(format!(
                    "Shape must be rank {} but is rank {} for 'Tile'",
                    d.len(),
                    multiples.len()
                )))
            }
            Some(d) => d
                .iter()
                .zip(multiples)
                // A size past usize is unknown here; the kernel reports
                // it (ResourceExhausted) when run.
                .map(|(d, &m)| d.and_then(|n| n.checked_mul(m)))
                .collect(),
            None => vec![None; multiples.len()],
        };
        let shape = Some(PartialShape::new(shape));
        Ok(vec![dense_from(shape, info.dtype, &ins[0])])
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        out.push(expand::tile(a.dense(0)?, &self.multiples)?.into());
        Ok(())
    }
}

op! {
    /// `tf.gather(params, indices, axis)`: the slices of input 0 along
    /// `axis` at the indices input 1 (int32 or int64); the shape is
    /// `params.shape[..axis] + indices.shape + params.shape[axis + 1..]`.
    Gather = "Gather" {
        /// The axis of `params` indexed.
        axis: usize,
    }
}

impl OpDef for Gather {
    fn arity(&self) -> RangeInclusive<usize> {
        2..=2
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        let axis = self.axis;
        let p = ins[0].dense("gather")?;
        let i = ins[1].dense("gather")?;
        if !matches!(i.dtype, DType::I32 | DType::I64) {
            return Err(Error::invalid_dtype(format!(
                "gather: indices must be int32 or int64, not {}",
                i.dtype
            )));
        }
        let shape = match (ins[0].dims(), ins[1].dims()) {
            (Some(pd), _) if axis >= pd.len() => {
                return Err(invalid(format!(
                    "Shape must be at least rank {} but is rank {}",
                    axis + 1,
                    pd.len()
                )))
            }
            (Some(pd), Some(id)) => {
                let mut out = pd[..axis].to_vec();
                out.extend(id);
                out.extend_from_slice(&pd[axis + 1..]);
                Some(PartialShape::new(out))
            }
            _ => None,
        };
        Ok(vec![OutInfo {
            key: p.key.or(i.key),
            ..dense(shape, p.dtype)
        }])
    }

    fn default_name(&self) -> &'static str {
        "GatherV2"
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        let (p, i) = (a.dense(0)?, a.dense(1)?);
        out.push(reduce::gather(p, i, self.axis)?.into());
        Ok(())
    }
}

/// The dims of a reshape of a value of `dims` to `sizes`, its -1
/// resolved, checked as TensorFlow's kernel checks them (its words).
fn resolve_reshape(sizes: &[i64], dims: &[usize]) -> Result<Vec<usize>> {
    let total: usize = dims.iter().product();
    let mut out = Vec::with_capacity(sizes.len());
    let (mut product, mut unknown, mut has_zero) = (1i64, None, false);
    for (k, &s) in sizes.iter().enumerate() {
        if s == -1 {
            if let Some(u) = unknown {
                return Err(invalid(format!(
                    "Only one input size may be -1, not both {u} and {k}"
                )));
            }
            unknown = Some(k);
            out.push(1);
        } else if s < 0 {
            return Err(invalid(format!(
                "Size {k} must be non-negative, not {s}"
            )));
        } else {
            has_zero |= s == 0;
            if s > 0 {
                product = product.checked_mul(s).ok_or_else(|| {
                    invalid(format!(
                        "Size of output shape would overflow: {product} * \
                         {s} > {}",
                        i64::MAX
                    ))
                })?;
            }
            out.push(s as usize);
        }
    }
    let product = product as usize;
    if let Some(u) = unknown {
        // A zero dimension of the input counts only when the shape has
        // none, so that the others can still be inferred.
        let (mut elems, mut in_zero) = (1usize, false);
        for &d in dims {
            if d > 0 || !has_zero {
                elems *= d;
            } else {
                in_zero = true;
            }
        }
        let missing = elems / product;
        if !in_zero && product * missing != elems {
            return Err(invalid(format!(
                "Input to reshape is a tensor with {total} values, but the \
                 requested shape requires a multiple of {product}"
            )));
        }
        out[u] = missing;
    }
    let n = out.iter().try_fold(1usize, |n, &d| n.checked_mul(d));
    if n != Some(total) {
        return Err(invalid(format!(
            "Input to reshape is a tensor with {total} values, but the \
             requested shape has {}",
            n.map_or_else(|| "more".to_owned(), |n| n.to_string())
        )));
    }
    Ok(out)
}

/// Stacks (new axis) or concatenates (existing axis) along `axis`.
fn stack_or_concat(
    ts: &[Tensor],
    axis: i64,
    stacking: bool,
) -> Result<Tensor> {
    let rank = ts.first().ok_or_else(|| invalid("needs a tensor"))?.rank();
    let out_rank = if stacking { rank + 1 } else { rank };
    let r = out_rank as i64;
    if axis < -r || axis >= r {
        return Err(invalid(format!(
            "axis {axis} out of range for rank {out_rank}"
        )));
    }
    let a = if axis < 0 { axis + r } else { axis } as usize;
    if a == 0 {
        return if stacking {
            Tensor::stack(ts)
        } else {
            Tensor::concat(ts)
        };
    }
    // Move `a` to the front, join along axis 0, move it back.
    let mut to_front = vec![a];
    to_front.extend((0..rank).filter(|&k| k != a));
    let joined = if stacking {
        Tensor::stack(ts)?
    } else {
        let moved = ts
            .iter()
            .map(|t| transform::transpose(t, &to_front))
            .collect::<Result<Vec<_>>>()?;
        Tensor::concat(&moved)?
    };
    // In `joined`, axis 0 is the joined one; put it at `a`.
    let mut perm: Vec<usize> = Vec::with_capacity(out_rank);
    for k in 0..out_rank {
        perm.push(if k < a {
            k + 1
        } else if k == a {
            0
        } else {
            k
        });
    }
    transform::transpose(&joined, &perm)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stack_and_concat_on_inner_axes() {
        let a = Tensor::new([2, 2], vec![1i32, 2, 3, 4]).unwrap();
        let b = Tensor::new([2, 2], vec![5i32, 6, 7, 8]).unwrap();
        let s = stack_or_concat(&[a.clone(), b.clone()], 1, true).unwrap();
        assert_eq!(s.dims(), &[2, 2, 2]);
        assert_eq!(s.as_slice::<i32>().unwrap(), &[1, 2, 5, 6, 3, 4, 7, 8]);
        let s = stack_or_concat(&[a.clone(), b.clone()], -1, true).unwrap();
        assert_eq!(s.dims(), &[2, 2, 2]);
        assert_eq!(s.as_slice::<i32>().unwrap(), &[1, 5, 2, 6, 3, 7, 4, 8]);
        let c = stack_or_concat(&[a, b], 1, false).unwrap();
        assert_eq!(c.dims(), &[2, 4]);
        assert_eq!(c.as_slice::<i32>().unwrap(), &[1, 2, 5, 6, 3, 4, 7, 8]);
    }

    #[test]
    fn reshape_resolves_as_tensorflow() {
        let msg = |sizes: &[i64], dims: &[usize]| {
            resolve_reshape(sizes, dims)
                .unwrap_err()
                .message()
                .to_owned()
        };
        assert_eq!(resolve_reshape(&[-1, 4], &[12]).unwrap(), vec![3, 4]);
        assert_eq!(resolve_reshape(&[0, -1, 3], &[0]).unwrap(), [0, 0, 3]);
        assert_eq!(resolve_reshape(&[-1, 3], &[0, 3]).unwrap(), [0, 3]);
        // The messages of TensorFlow 2.21's Reshape kernel.
        assert_eq!(
            msg(&[-1, 5], &[12]),
            "Input to reshape is a tensor with 12 values, but the requested \
             shape requires a multiple of 5"
        );
        assert_eq!(
            msg(&[2, 3, 3], &[24]),
            "Input to reshape is a tensor with 24 values, but the requested \
             shape has 18"
        );
        assert_eq!(
            msg(&[0, -1, 3], &[24]),
            "Input to reshape is a tensor with 24 values, but the requested \
             shape has 0"
        );
        assert_eq!(
            msg(&[-1, -1, 3], &[24]),
            "Only one input size may be -1, not both 0 and 1"
        );
        assert_eq!(
            msg(&[2, -2, 3], &[24]),
            "Size 1 must be non-negative, not -2"
        );
        assert!(msg(&[1 << 40, 1 << 40], &[1]).contains("would overflow"));
    }
}
