//! Control flow: the node of `tf.cond` (and so of `tf.case`).
//!
//! The branches of a cond are ordinary nodes of the graph, made while
//! the branch functions ran; the [`Cond`] node names them by their id
//! ranges, and the evaluator ([`crate::control`]) runs a branch's nodes
//! only when its predicate chooses it. A branch not taken dequeues,
//! reads, decodes and draws nothing.

use std::ops::Range;

use bytes::Bytes;
use feedstock::error::{Error, Result};
use feedstock::queue::PartialShape;
use feedstock::tensor::{DType, Value};

use super::{dense, op, Args, In, OpDef, OutInfo};
use crate::graph::StaticShape;

op! {
    /// `tf.cond`: input 0 is the predicate, then come the true branch's
    /// outputs and then the false branch's, as many each; output `i` is
    /// the chosen branch's output `i`.
    Cond = "Cond" {
        /// `[true_lo, true_hi, false_lo, false_hi]`: the ids of the nodes
        /// each branch function made (`lo..hi`), run only when chosen.
        branches: Vec<usize>,
    }
}

impl Cond {
    /// The number of outputs of each branch (and of the node).
    pub(crate) fn arity(inputs: usize) -> usize {
        inputs.saturating_sub(1) / 2
    }
}

impl OpDef for Cond {
    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        let [tl, th, fl, fh] = self.branches[..] else {
            return Err(Error::invalid_argument(
                "tf.cond: branches must be [true_lo, true_hi, false_lo, \
                 false_hi]",
            ));
        };
        if tl > th || th > fl || fl > fh {
            return Err(Error::invalid_argument(format!(
                "tf.cond: the branches' node ranges {:?} are not in order",
                self.branches
            )));
        }
        if ins.len().is_multiple_of(2) {
            return Err(Error::invalid_argument(
                "tf.cond: expected a predicate and as many outputs from \
                 each branch",
            ));
        }
        ins[0].dense("tf.cond predicate")?;
        let n = Cond::arity(ins.len());
        (0..n)
            .map(|i| {
                let t = ins[1 + i].dense("tf.cond")?;
                let f = ins[1 + n + i].dense("tf.cond")?;
                if t.dtype != f.dtype {
                    return Err(Error::invalid_dtype(format!(
                        "tf.cond: output {i} is {} in the true branch and \
                         {} in the false branch",
                        t.dtype, f.dtype
                    )));
                }
                Ok(dense(most_specific(&t.shape, &f.shape), t.dtype))
            })
            .collect()
    }

    fn run(&self, _: &Args<'_, '_>, _: &mut Vec<Value>) -> Result<()> {
        Err(Error::internal("a Cond node is run by the evaluator"))
    }

    fn default_name(&self) -> &'static str {
        "cond"
    }

    fn branches(&self) -> Option<[Range<u32>; 2]> {
        let r = |lo: usize, hi: usize| -> Option<Range<u32>> {
            Some(u32::try_from(lo).ok()?..u32::try_from(hi).ok()?)
        };
        match self.branches[..] {
            [tl, th, fl, fh] => Some([r(tl, th)?, r(fl, fh)?]),
            _ => None,
        }
    }
}

/// The most specific shape compatible with both `a` and `b`
/// (TensorFlow's `most_specific_compatible_shape`): unknown rank where
/// the ranks differ, an unknown dimension where the sizes do.
pub fn most_specific(a: &StaticShape, b: &StaticShape) -> StaticShape {
    let (a, b) = (a.as_ref()?, b.as_ref()?);
    if a.rank() != b.rank() {
        return None;
    }
    let dims: Vec<Option<usize>> = a
        .dims()
        .iter()
        .zip(b.dims())
        .map(|(x, y)| if x == y { *x } else { None })
        .collect();
    Some(PartialShape::new(dims))
}

/// A predicate's truth as TensorFlow's `If` takes it: a scalar bool is
/// itself, a numeric scalar is true when non-zero, a string scalar when
/// non-empty; a tensor of another rank is true when it holds any element.
///
/// # Errors
/// InvalidArgument for a sparse predicate.
pub fn truth(v: &Value) -> Result<bool> {
    let t = v.dense()?;
    if t.rank() != 0 {
        return Ok(t.num_elements() > 0);
    }
    Ok(match t.dtype() {
        DType::Bool => t.scalar_value::<bool>()?,
        DType::String => !t.scalar_value::<Bytes>()?.is_empty(),
        _ => t.cast(DType::F64)?.scalar_value::<f64>()? != 0.0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use feedstock::tensor::Tensor;

    #[test]
    fn shapes_merge_to_the_most_specific_compatible_one() {
        let s = |d: &[Option<usize>]| Some(PartialShape::new(d.to_vec()));
        assert_eq!(
            most_specific(&s(&[None, Some(3)]), &s(&[Some(2), None])),
            s(&[None, None])
        );
        assert_eq!(
            most_specific(&s(&[Some(2), Some(3)]), &s(&[Some(2), Some(3)])),
            s(&[Some(2), Some(3)])
        );
        assert_eq!(most_specific(&s(&[Some(2)]), &s(&[])), None);
        assert_eq!(most_specific(&None, &s(&[])), None);
    }

    #[test]
    fn a_predicate_is_true_as_tensorflow_if_takes_it() -> Result<()> {
        let v = |t: Tensor| Value::Dense(t);
        assert!(truth(&v(Tensor::scalar(true)))?);
        assert!(!truth(&v(Tensor::scalar(false)))?);
        assert!(truth(&v(Tensor::scalar(-2i32)))?);
        assert!(!truth(&v(Tensor::scalar(0.0f32)))?);
        assert!(!truth(&v(Tensor::string(Bytes::new())))?);
        assert!(truth(&v(Tensor::vector(vec![false])))?);
        assert!(!truth(&v(Tensor::vector::<bool>(vec![])))?);
        Ok(())
    }
}
