//! Elementwise arithmetic, comparisons and casts.

use std::ops::RangeInclusive;

use crate::kernels::math::{self, BinaryOp};
use crate::kernels::reduce::{self, CmpOp, UnaryOp};
use feedstock::error::{Error, Result};
use feedstock::tensor::{DType, Value};

use super::attrs::attr_enum;
use super::{dense_from, op, Args, In, OpDef, OutInfo};
use crate::graph::StaticShape;

attr_enum!(BinaryOp, "an arithmetic operation",
    "add" => BinaryOp::Add, "sub" => BinaryOp::Sub,
    "mul" => BinaryOp::Mul, "div" => BinaryOp::Div,
    "floordiv" => BinaryOp::FloorDiv, "floormod" => BinaryOp::FloorMod,
    "maximum" => BinaryOp::Maximum, "minimum" => BinaryOp::Minimum, "pow" => BinaryOp::Pow);

attr_enum!(UnaryOp, "an elementwise function",
    "abs" => UnaryOp::Abs, "square" => UnaryOp::Square,
    "sqrt" => UnaryOp::Sqrt, "floor" => UnaryOp::Floor,
    "ceil" => UnaryOp::Ceil, "round" => UnaryOp::Round,
    "exp" => UnaryOp::Exp, "log" => UnaryOp::Log, "log1p" => UnaryOp::Log1p,
    "sigmoid" => UnaryOp::Sigmoid, "tanh" => UnaryOp::Tanh,
    "reciprocal" => UnaryOp::Reciprocal, "rsqrt" => UnaryOp::Rsqrt,
    "sign" => UnaryOp::Sign);

attr_enum!(CmpOp, "a comparison",
    "equal" => CmpOp::Equal, "not_equal" => CmpOp::NotEqual,
    "less" => CmpOp::Less, "less_equal" => CmpOp::LessEqual,
    "greater" => CmpOp::Greater, "greater_equal" => CmpOp::GreaterEqual);

fn invalid_dtype(msg: String) -> Error {
    Error::invalid_dtype(msg)
}

op! {
    /// `tf.cast`: input 0 converted to `dtype`.
    Cast = "Cast" {
        /// The dtype to convert to.
        dtype: DType,
    }
}

impl OpDef for Cast {
    fn arity(&self) -> RangeInclusive<usize> {
        1..=1
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        let x = &ins[0];
        let info = x.dense("cast")?;
        Ok(vec![dense_from(info.shape.clone(), self.dtype, x)])
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        out.push(a.dense(0)?.cast(self.dtype)?.into());
        Ok(())
    }
}

op! {
    /// `a op b` elementwise with NumPy broadcasting (`tf.add`,
    /// `tf.subtract`, `tf.multiply`, `tf.divide` on floats, `tf.maximum`,
    /// `tf.minimum`, `tf.floordiv`, `tf.floormod`); `add` of strings
    /// concatenates. See [`kernels::math`](crate::kernels::math).
    Binary = "Binary" {
        /// The operation.
        op: BinaryOp,
    }
}

impl OpDef for Binary {
    fn arity(&self) -> RangeInclusive<usize> {
        2..=2
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        let name = self.op.name();
        let (ia, ib) = (ins[0].dense(name)?, ins[1].dense(name)?);
        if ia.dtype != ib.dtype {
            return Err(invalid_dtype(format!(
                "{name}: operands have different dtypes, {} and {}",
                ia.dtype, ib.dtype
            )));
        }
        let concat = self.op == BinaryOp::Add && ia.dtype == DType::String;
        if !math::is_arithmetic(ia.dtype) && !concat {
            return Err(invalid_dtype(format!(
                "{name}: not defined for {}",
                ia.dtype
            )));
        }
        let shape = broadcast_static(&ia.shape, &ib.shape, name)?;
        Ok(vec![OutInfo {
            key: ia.key.or(ib.key),
            ..super::dense(shape, ia.dtype)
        }])
    }

    fn default_name(&self) -> &'static str {
        self.op.name()
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        out.push(math::binary(self.op, a.dense(0)?, a.dense(1)?)?.into());
        Ok(())
    }
}

op! {
    /// `-x` (`tf.negative`).
    Neg = "Neg" {}
}

impl OpDef for Neg {
    fn arity(&self) -> RangeInclusive<usize> {
        1..=1
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        let info = ins[0].dense("neg")?;
        if !math::is_arithmetic(info.dtype)
            || matches!(
                info.dtype,
                DType::U8 | DType::U16 | DType::U32 | DType::U64
            )
        {
            return Err(invalid_dtype(format!(
                "neg: not defined for {}",
                info.dtype
            )));
        }
        Ok(vec![info.clone()])
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        out.push(math::neg(a.dense(0)?)?.into());
        Ok(())
    }
}

op! {
    /// An exact elementwise function of input 0 (`tf.abs`, `tf.sqrt`,
    /// ...).
    Unary = "Unary" {
        /// The function.
        op: UnaryOp,
    }
}

impl OpDef for Unary {
    fn arity(&self) -> RangeInclusive<usize> {
        1..=1
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        let x = &ins[0];
        let info = x.dense("unary")?;
        let ints = matches!(
            info.dtype,
            DType::I8 | DType::I16 | DType::I32 | DType::I64
        );
        let floats = matches!(info.dtype, DType::F32 | DType::F64);
        if !(floats || ints && self.op.takes_integers()) {
            return Err(invalid_dtype(format!(
                "{:?}: not defined for {}",
                self.op, info.dtype
            )));
        }
        Ok(vec![dense_from(info.shape.clone(), info.dtype, x)])
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        out.push(reduce::unary(self.op, a.dense(0)?)?.into());
        Ok(())
    }
}

op! {
    /// An elementwise comparison of inputs 0 and 1 (`tf.equal`, ...),
    /// broadcasting.
    Compare = "Compare" {
        /// The comparison.
        op: CmpOp,
    }
}

impl OpDef for Compare {
    fn arity(&self) -> RangeInclusive<usize> {
        2..=2
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        let (ia, ib) = (ins[0].dense("compare")?, ins[1].dense("compare")?);
        if ia.dtype != ib.dtype {
            return Err(invalid_dtype(format!(
                "compare: operands have different dtypes, {} and {}",
                ia.dtype, ib.dtype
            )));
        }
        let eq_only = matches!(self.op, CmpOp::Equal | CmpOp::NotEqual);
        let ok = (math::is_arithmetic(ia.dtype)
            && !matches!(ia.dtype, DType::C64 | DType::C128))
            || (eq_only && matches!(ia.dtype, DType::Bool | DType::String));
        if !ok {
            return Err(invalid_dtype(format!(
                "compare: not defined for {}",
                ia.dtype
            )));
        }
        let shape = broadcast_static(&ia.shape, &ib.shape, "compare")?;
        Ok(vec![OutInfo {
            key: ia.key.or(ib.key),
            ..super::dense(shape, DType::Bool)
        }])
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        out.push(reduce::compare(self.op, a.dense(0)?, a.dense(1)?)?.into());
        Ok(())
    }
}

/// The static shape two static shapes broadcast to (NumPy's rules): an
/// unknown dimension against 1 or an unknown one stays unknown.
///
/// # Errors
/// InvalidArgument naming `what` for known dimensions that do not
/// broadcast.
pub(crate) fn broadcast_static(
    a: &StaticShape,
    b: &StaticShape,
    what: &str,
) -> Result<StaticShape> {
    let (Some(x), Some(y)) = (a.as_ref(), b.as_ref()) else {
        return Ok(None);
    };
    let (x, y) = (x.dims(), y.dims());
    let rank = x.len().max(y.len());
    let at = |d: &[Option<usize>], k: usize| -> Option<usize> {
        if k < d.len() {
            d[d.len() - 1 - k]
        } else {
            Some(1)
        }
    };
    let mut out = vec![None; rank];
    for k in 0..rank {
        out[rank - 1 - k] = match (at(x, k), at(y, k)) {
            (Some(p), Some(q)) if p == q => Some(p),
            (Some(1), q) => q,
            (p, Some(1)) => p,
            (Some(p), Some(q)) => {
                return Err(Error::invalid_argument(format!(
                    "{what}: incompatible shapes {x:?} and {y:?} ({p} vs {q})"
                )))
            }
            (Some(p), None) | (None, Some(p)) => {
                if p == 1 {
                    None
                } else {
                    Some(p)
                }
            }
            (None, None) => None,
        };
    }
    Ok(Some(feedstock::queue::PartialShape::new(out)))
}
