//! Ops that build, select and rearrange elements.

use std::ops::RangeInclusive;

use feedstock::error::{Error, Result};
use feedstock::queue::PartialShape;
use feedstock::tensor::{DType, Value};

use super::{dense_from, op, Args, In, OpDef, OutInfo};
use crate::kernels::expand;

op! {
    /// `tf.one_hot` of input 0 (uint8, int32 or int64 indices): inputs 1
    /// and 2 are the on and off values; `depth` is inserted as axis
    /// `axis` (-1: last). An index outside `[0, depth)` gives all off
    /// values.
    OneHot = "OneHot" {
        /// The length of the new axis.
        depth: usize,
        /// Where the new axis goes; -1: last.
        axis: i64,
    }
}

impl OpDef for OneHot {
    fn arity(&self) -> RangeInclusive<usize> {
        3..=3
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        let ii = ins[0].dense("one_hot")?;
        let (io, if_) = (ins[1].dense("one_hot")?, ins[2].dense("one_hot")?);
        if !matches!(ii.dtype, DType::U8 | DType::I32 | DType::I64) {
            return Err(Error::invalid_dtype(format!(
                "one_hot: indices must be uint8, int32 or int64, not {}",
                ii.dtype
            )));
        }
        if io.dtype != if_.dtype {
            return Err(Error::invalid_dtype(
                "one_hot: on_value and off_value differ in dtype",
            ));
        }
        let shape = ins[0].dims().and_then(|mut d| {
            // An axis out of range fails when run, as TensorFlow's.
            let k = if self.axis == -1 {
                d.len() as i64
            } else {
                self.axis
            };
            if k < 0 || k as usize > d.len() {
                None
            } else {
                d.insert(k as usize, Some(self.depth));
                Some(PartialShape::new(d))
            }
        });
        Ok(vec![dense_from(shape, io.dtype, &ins[0])])
    }

    fn default_name(&self) -> &'static str {
        "one_hot"
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        let (i, on, off) = (a.dense(0)?, a.dense(1)?, a.dense(2)?);
        out.push(expand::one_hot(i, self.depth, on, off, self.axis)?.into());
        Ok(())
    }
}
