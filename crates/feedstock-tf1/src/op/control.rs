//! Control flow: the nodes of `tf.cond` (and so of `tf.case`) and of
//! `tf.while_loop`.
//!
//! The branches of a cond are ordinary nodes of the graph, made while
//! the branch functions ran; the [`Cond`] node names them by their id
//! ranges, and the evaluator (`crate::control`) runs a branch's nodes
//! only when its predicate chooses it. A branch not taken dequeues,
//! reads, decodes and draws nothing. A [`While`] node names the nodes of
//! its condition and body the same way; they run once per iteration.

use std::ops::Range;
use std::ops::RangeInclusive;

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
    fn arity(&self) -> RangeInclusive<usize> {
        1..=usize::MAX
    }

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

    fn control(&self) -> Option<Control> {
        match self.branches[..] {
            [tl, th, fl, fh] => {
                Some(Control::Cond([ids(tl, th)?, ids(fl, fh)?]))
            }
            _ => None,
        }
    }
}

/// The nodes a control-flow op runs only when its predicate says so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Control {
    /// A cond: the ids of the nodes of its true and false branches.
    Cond([Range<u32>; 2]),
    /// A while loop: the ids of the nodes of its condition and body, the
    /// first `vars` of them its [`LoopVar`]s.
    While {
        /// The node ids.
        body: Range<u32>,
        /// How many loop variables.
        vars: usize,
    },
}

fn ids(lo: usize, hi: usize) -> Option<Range<u32>> {
    Some(u32::try_from(lo).ok()?..u32::try_from(hi).ok()?)
}

op! {
    /// A loop variable of a [`While`] inside its condition and body: the
    /// value of the variable in the current iteration. The evaluator
    /// gives it; it has no kernel.
    LoopVar = "LoopVar" {
        /// The variable's dtype.
        dtype: DType,
        /// Its shape invariant (-1: unknown size), `None` if unknown rank.
        shape: Option<Vec<i64>>,
    }
}

impl OpDef for LoopVar {
    fn arity(&self) -> RangeInclusive<usize> {
        0..=0
    }

    fn infer(&self, _: &[In]) -> Result<Vec<OutInfo>> {
        let shape = self.shape.as_ref().map(|dims| {
            PartialShape::new(
                dims.iter()
                    .map(|&d| usize::try_from(d).ok())
                    .collect::<Vec<_>>(),
            )
        });
        Ok(vec![dense(shape, self.dtype)])
    }

    fn run(&self, _: &Args<'_, '_>, _: &mut Vec<Value>) -> Result<()> {
        Err(Error::internal("a LoopVar is given by its loop"))
    }

    fn default_name(&self) -> &'static str {
        "Placeholder"
    }
}

op! {
    /// `tf.while_loop`: the inputs are the loop variables' first values,
    /// then the condition (a bool scalar computed from the [`LoopVar`]s)
    /// and the variables' next values (computed by the body); the outputs
    /// are the variables' values once the condition fails.
    While = "While" {
        /// `[lo, hi]`: the ids of the nodes of the condition and body,
        /// the first `vars` of them the loop variables.
        body: Vec<usize>,
        /// How many loop variables.
        vars: usize,
    }
}

impl OpDef for While {
    fn arity(&self) -> RangeInclusive<usize> {
        let n = 2 * self.vars + 1;
        n..=n
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        let n = self.vars;
        let [lo, hi] = self.body[..] else {
            return Err(Error::invalid_argument(
                "tf.while_loop: body must be [lo, hi]",
            ));
        };
        if ins.len() != 2 * n + 1 || lo + n > hi {
            return Err(Error::invalid_argument(
                "tf.while_loop: expected the loop variables, the condition \
                 and the next values",
            ));
        }
        if ins[n].dense("tf.while_loop condition")?.dtype != DType::Bool {
            return Err(Error::invalid_dtype(format!(
                "tf.while_loop: the condition is {}, not bool",
                ins[n].dtype()
            )));
        }
        (0..n)
            .map(|i| {
                let init = ins[i].dense("tf.while_loop")?;
                let next = ins[n + 1 + i].dense("tf.while_loop")?;
                if init.dtype != next.dtype {
                    return Err(Error::invalid_dtype(format!(
                        "tf.while_loop: loop variable {i} enters the loop as \
                         {} and leaves the body as {}",
                        init.dtype, next.dtype
                    )));
                }
                Ok(dense(most_specific(&init.shape, &next.shape), init.dtype))
            })
            .collect()
    }

    fn run(&self, _: &Args<'_, '_>, _: &mut Vec<Value>) -> Result<()> {
        Err(Error::internal("a While node is run by the evaluator"))
    }

    fn default_name(&self) -> &'static str {
        "while"
    }

    fn control(&self) -> Option<Control> {
        match self.body[..] {
            [lo, hi] => Some(Control::While {
                body: ids(lo, hi)?,
                vars: self.vars,
            }),
            _ => None,
        }
    }
}

op! {
    /// `tf.case`'s assertion on its predicates: the first `count` inputs
    /// are forwarded as they are, the rest are the predicates (bool
    /// scalars). With `check` `"last"` it fails when the last predicate
    /// is false (a case without default in which none holds), with
    /// `"exclusive"` when more than one holds; the error is TensorFlow's
    /// assertion: `message`, then the predicates as 0 and 1.
    CaseCheck = "CaseCheck" {
        /// How many inputs are forwarded.
        count: usize,
        /// `"last"` or `"exclusive"`.
        check: String,
        /// What the assertion says.
        message: String,
    }
}

impl OpDef for CaseCheck {
    fn arity(&self) -> RangeInclusive<usize> {
        self.count + 1..=usize::MAX
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        if !matches!(self.check.as_str(), "last" | "exclusive") {
            return Err(Error::invalid_argument(format!(
                "tf.case: unknown check {:?}",
                self.check
            )));
        }
        if self.count >= ins.len() {
            return Err(Error::invalid_argument(
                "tf.case: expected the values, then at least one predicate",
            ));
        }
        for p in &ins[self.count..] {
            if p.dense("tf.case")?.dtype != DType::Bool {
                return Err(Error::invalid_dtype(format!(
                    "tf.case: a predicate is {}, not bool",
                    p.dtype()
                )));
            }
        }
        ins[..self.count]
            .iter()
            .map(|i| Ok(i.dense("tf.case")?.clone()))
            .collect()
    }

    fn run(&self, args: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        let preds = (self.count..args.len())
            .map(|k| truth(args.value(k)))
            .collect::<Result<Vec<bool>>>()?;
        let holds = preds.iter().filter(|&&p| p).count();
        let ok = match self.check.as_str() {
            "last" => preds.last() == Some(&true),
            _ => holds <= 1,
        };
        if !ok {
            let shown: Vec<&str> =
                preds.iter().map(|&p| if p { "1" } else { "0" }).collect();
            return Err(Error::invalid_argument(format!(
                "assertion failed: [{}] [{}]",
                self.message,
                shown.join(" ")
            )));
        }
        out.extend((0..self.count).map(|k| args.value(k).clone()));
        Ok(())
    }

    fn default_name(&self) -> &'static str {
        "Assert"
    }
}

op! {
    /// An operation (`tf.group`, an enqueue, `tf.no_op`) returned by a
    /// cond's branch, as a value: its inputs are the operation's tensors,
    /// evaluated for their effect; the output is the bool scalar `value`
    /// (TensorFlow 2.21 gives the predicate's value: `true` in the true
    /// branch, `false` in the false one).
    Done = "Done" {
        /// The output.
        value: bool,
    }
}

impl OpDef for Done {
    fn arity(&self) -> RangeInclusive<usize> {
        0..=usize::MAX
    }

    fn infer(&self, _: &[In]) -> Result<Vec<OutInfo>> {
        Ok(vec![dense(Some(PartialShape::scalar()), DType::Bool)])
    }

    fn run(&self, _: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        out.push(Value::Dense(feedstock::tensor::Tensor::scalar(self.value)));
        Ok(())
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

/// A predicate's truth, checked as TensorFlow 2.21's lowered `If` (its
/// `Switch`) checks it when run: a bool scalar, or a bool vector of one
/// element.
///
/// # Errors
/// InvalidArgument for another dtype or shape, in TensorFlow's words.
pub fn truth(v: &Value) -> Result<bool> {
    let t = v.dense()?;
    if t.dtype() != DType::Bool {
        return Err(Error::invalid_argument(format!(
            "Input 'pred' passed {} expected bool",
            t.dtype()
        )));
    }
    match t.dims() {
        [] | [1] => Ok(t.as_slice::<bool>()?[0]),
        dims => Err(Error::invalid_argument(format!(
            "The second input must be a scalar, but it has shape {dims:?}"
        ))),
    }
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
    fn a_predicate_is_a_bool_scalar_as_tensorflow_checks_it() -> Result<()> {
        let v = |t: Tensor| Value::Dense(t);
        assert!(truth(&v(Tensor::scalar(true)))?);
        assert!(!truth(&v(Tensor::scalar(false)))?);
        assert!(!truth(&v(Tensor::vector(vec![false])))?);
        let e = truth(&v(Tensor::scalar(1.0f32))).unwrap_err();
        assert!(
            e.to_string().contains("passed float32 expected bool"),
            "{e}"
        );
        let e = truth(&v(Tensor::vector::<bool>(vec![]))).unwrap_err();
        assert!(e.to_string().contains("it has shape [0]"), "{e}");
        Ok(())
    }
}
