//! Ops that choose elements: `tf.where`, reductions and `tf.argmax`.

use std::ops::RangeInclusive;

use crate::kernels::math;
use crate::kernels::reduce::{self, ReduceOp};
use feedstock::error::{Error, Result};
use feedstock::queue::PartialShape;
use feedstock::tensor::{DType, Value};

use super::attrs::attr_enum;
use super::math::broadcast_static;
use super::{dense, dense_from, op, Args, In, OpDef, OutInfo};

attr_enum!(ReduceOp, "a reduction",
    "sum" => ReduceOp::Sum, "prod" => ReduceOp::Prod,
    "max" => ReduceOp::Max, "min" => ReduceOp::Min,
    "mean" => ReduceOp::Mean);

op! {
    /// `tf.where(cond, x, y)` of TensorFlow 1: inputs 0..=2, `cond` of
    /// `x`'s shape or a vector of its rows; shaped as `x`.
    Select = "Select" {}
}

impl OpDef for Select {
    fn arity(&self) -> RangeInclusive<usize> {
        3..=3
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        let c = ins[0].dense("where")?;
        let ix = ins[1].dense("where")?;
        let iy = ins[2].dense("where")?;
        if c.dtype != DType::Bool {
            return Err(Error::invalid_dtype("where: cond must be bool"));
        }
        if ix.dtype != iy.dtype {
            return Err(Error::invalid_dtype(format!(
                "where: x and y differ in dtype, {} and {}",
                ix.dtype, iy.dtype
            )));
        }
        let shape = broadcast_static(&ix.shape, &iy.shape, "where")?;
        if let (Some(cd), Some(xd)) = (ins[0].dims(), ins[1].dims()) {
            let compatible = |a: &[Option<usize>], b: &[Option<usize>]| {
                a.len() == b.len()
                    && a.iter()
                        .zip(b)
                        .all(|(p, q)| p.is_none() || q.is_none() || p == q)
            };
            let rows =
                cd.len() == 1 && !xd.is_empty() && compatible(&cd, &xd[..1]);
            if !compatible(&cd, &xd) && !rows {
                return Err(Error::invalid_argument(format!(
                    "Shapes must be equal rank, but are {} and {} for \
                     'Select'",
                    cd.len(),
                    xd.len()
                )));
            }
        }
        Ok(vec![OutInfo {
            key: ix.key.or(c.key),
            ..dense(shape, ix.dtype)
        }])
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        let (c, x, y) = (a.dense(0)?, a.dense(1)?, a.dense(2)?);
        out.push(reduce::select(c, x, y)?.into());
        Ok(())
    }
}

op! {
    /// `tf.where(cond)`: the coordinates of input 0's true elements, an
    /// `int64 [None, rank]` matrix.
    WhereTrue = "WhereTrue" {}
}

impl OpDef for WhereTrue {
    fn arity(&self) -> RangeInclusive<usize> {
        1..=1
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        let c = ins[0].dense("where")?;
        if c.dtype != DType::Bool {
            return Err(Error::invalid_dtype("where: cond must be bool"));
        }
        let rank = ins[0].dims().map(|d| d.len());
        let shape = Some(PartialShape::new(vec![None, rank]));
        Ok(vec![dense_from(shape, DType::I64, &ins[0])])
    }

    fn default_name(&self) -> &'static str {
        "Where"
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        out.push(reduce::where_true(a.dense(0)?)?.into());
        Ok(())
    }
}

op! {
    /// Input 0 reduced over `axes` (each in `0..rank`; the rank must be
    /// known), the reduced dimensions kept as 1 with `keep_dims`
    /// (`tf.reduce_sum`, ...); integers, float32 and float64.
    Reduce = "Reduce" {
        /// The reduction.
        op: ReduceOp,
        /// The axes reduced.
        axes: Vec<usize>,
        /// Whether the reduced dimensions stay, as 1.
        keep_dims: bool,
    }
}

impl OpDef for Reduce {
    fn arity(&self) -> RangeInclusive<usize> {
        1..=1
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        let info = ins[0].dense("reduce")?;
        let dims = ins[0].dims().ok_or_else(|| {
            Error::invalid_argument("reduce: the rank must be known")
        })?;
        if let Some(&a) = self.axes.iter().find(|&&a| a >= dims.len()) {
            return Err(Error::invalid_argument(format!(
                "Invalid reduction dimension ({a} for input with {} \
                 dimension(s)",
                dims.len()
            )));
        }
        if !math::is_arithmetic(info.dtype)
            || matches!(info.dtype, DType::F16 | DType::BF16)
        {
            return Err(Error::invalid_dtype(format!(
                "reduce: not defined for {}",
                info.dtype
            )));
        }
        let out: Vec<Option<usize>> = dims
            .iter()
            .enumerate()
            .filter_map(|(k, &d)| {
                match (self.axes.contains(&k), self.keep_dims) {
                    (false, _) => Some(d),
                    (true, true) => Some(Some(1)),
                    (true, false) => None,
                }
            })
            .collect();
        Ok(vec![dense(Some(PartialShape::new(out)), info.dtype)])
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        let t = a.dense(0)?;
        out.push(
            reduce::reduce(t, &self.axes, self.keep_dims, self.op)?.into(),
        );
        Ok(())
    }
}

op! {
    /// `tf.argmax` (`max`) or `tf.argmin` of input 0 along `axis`, as
    /// `dtype` (`int32` or `int64`).
    ArgReduce = "ArgReduce" {
        /// The axis searched.
        axis: usize,
        /// Whether the largest (else the smallest) value is sought.
        max: bool,
        /// The output's dtype.
        dtype: DType,
    }
}

impl OpDef for ArgReduce {
    fn arity(&self) -> RangeInclusive<usize> {
        1..=1
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        let info = ins[0].dense("argmax")?;
        let mut dims = ins[0].dims().ok_or_else(|| {
            Error::invalid_argument("argmax: the rank must be known")
        })?;
        let (axis, dtype) = (self.axis, self.dtype);
        if axis >= dims.len() {
            return Err(Error::invalid_argument(format!(
                "Dimension ({axis}) must be in the range [{}, {}), where {} \
                 is the number of dimensions in the input",
                -(dims.len() as i64),
                dims.len(),
                dims.len()
            )));
        }
        if !(math::is_arithmetic(info.dtype) || info.dtype == DType::Bool)
            || matches!(info.dtype, DType::F16 | DType::BF16)
            || !matches!(dtype, DType::I32 | DType::I64)
        {
            return Err(Error::invalid_dtype(format!(
                "argmax of {} as {dtype}: not defined",
                info.dtype
            )));
        }
        dims.remove(axis);
        Ok(vec![dense(Some(PartialShape::new(dims)), dtype)])
    }

    fn default_name(&self) -> &'static str {
        if self.max {
            "ArgMax"
        } else {
            "ArgMin"
        }
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        let t = a.dense(0)?;
        out.push(
            reduce::arg_reduce(t, self.axis, self.max, self.dtype)?.into(),
        );
        Ok(())
    }
}
