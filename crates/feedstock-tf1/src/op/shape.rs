//! Ops that give a tensor another shape or join, repeat, pick and fill
//! tensors: reshape, transpose, stack, concat, identity, shape, fill,
//! tile and gather.

use feedstock::decode::ops;
use feedstock::decode::reduce;
use feedstock::error::{Error, Result};
use feedstock::queue::PartialShape;
use feedstock::tensor::{DType, Tensor, Value};

use super::slice::int_vector_len;
use super::{dense, dense_from, op, Args, In, OpDef, OutInfo};
use crate::graph::{merge_dim, merge_static};
use crate::kernels::expand;

fn invalid(msg: impl Into<String>) -> Error {
    Error::invalid_argument(msg)
}

op! {
    /// `tf.reshape` of input 0 to `shape` (one entry may be -1: what the
    /// element count leaves).
    Reshape = "Reshape" {
        /// The new dimensions; -1 once at most.
        shape: Vec<i64>,
    }
}

impl OpDef for Reshape {
    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        let shape = &self.shape;
        let info = ins[0].dense("reshape")?;
        if shape.iter().filter(|&&d| d == -1).count() > 1
            || shape.iter().any(|&d| d < -1)
        {
            return Err(invalid(format!("reshape: bad shape {shape:?}")));
        }
        let total = info
            .shape
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
                            "reshape: cannot reshape {t} elements to \
                             {shape:?}"
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
        let out = Some(PartialShape::new(out));
        Ok(vec![dense_from(out, info.dtype, &ins[0])])
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        let t = a.dense(0)?;
        let dims = resolve_reshape(&self.shape, t.num_elements())?;
        out.push(t.clone().reshape(dims)?.into());
        Ok(())
    }

    fn forwards(&self) -> bool {
        true
    }

    fn forward(&self, input: Value) -> Result<Value> {
        let t = input.into_dense()?;
        let dims = resolve_reshape(&self.shape, t.num_elements())?;
        Ok(t.reshape(dims)?.into())
    }
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
        out.push(ops::transpose(a.dense(0)?, &self.perm)?.into());
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
    /// `tf.shape`: input 0's run-time shape as an int32 vector of its
    /// rank.
    Shape = "Shape" {}
}

impl OpDef for Shape {
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
    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        let rank = int_vector_len(&ins[0], "fill")?;
        let v = ins[1].dense("fill")?;
        if v.shape.as_ref().is_some_and(|s| s.rank() != 0) {
            return Err(invalid("fill: the value must be a scalar"));
        }
        let shape = constant_dims(&ins[0])
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

/// The values of `i` as dimensions if it is an integer vector constant
/// (a negative one unknown).
fn constant_dims(i: &In) -> Option<Vec<Option<usize>>> {
    let t = i.constant_tensor()?;
    let t = t.cast(DType::I64).ok().filter(|t| t.rank() == 1)?;
    let d = t.as_slice::<i64>().ok()?;
    Some(d.iter().map(|&x| usize::try_from(x).ok()).collect())
}

/// Sizes computed when run (an int32 or int64 vector); a negative one
/// is InvalidArgument.
fn sizes(t: &Tensor) -> Result<Vec<usize>> {
    let v = t.cast(DType::I64)?;
    let v = v.as_slice::<i64>()?;
    v.iter()
        .map(|&d| usize::try_from(d))
        .collect::<std::result::Result<_, _>>()
        .map_err(|_| {
            invalid(format!("the crop size {v:?} holds a negative value"))
        })
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

/// The dims of a reshape, its -1 resolved.
fn resolve_reshape(shape: &[i64], total: usize) -> Result<Vec<usize>> {
    let known: usize = shape
        .iter()
        .filter(|&&d| d >= 0)
        .map(|&d| d as usize)
        .product();
    let bad = || {
        invalid(format!(
            "cannot reshape a tensor of {total} elements to {shape:?}"
        ))
    };
    shape
        .iter()
        .map(|&d| {
            if d >= 0 {
                Ok(d as usize)
            } else if known == 0 {
                if total == 0 {
                    Ok(0)
                } else {
                    Err(bad())
                }
            } else if total.is_multiple_of(known) {
                Ok(total / known)
            } else {
                Err(bad())
            }
        })
        .collect()
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
            .map(|t| ops::transpose(t, &to_front))
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
    ops::transpose(&joined, &perm)
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
    fn reshape_infers_minus_one() {
        assert_eq!(resolve_reshape(&[-1, 4], 12).unwrap(), vec![3, 4]);
        assert!(resolve_reshape(&[-1, 5], 12).is_err());
    }
}
