//! Ops that draw random numbers, each node from its own generator
//! (seeded by its `seed`, else from entropy), which the session makes.

use std::ops::RangeInclusive;

use crate::kernels::reduce;
use feedstock::error::{Error, Result};
use feedstock::queue::PartialShape;
use feedstock::tensor::{DType, Value};

use super::{dense, dense_from, op, Args, In, OpDef, OutInfo};

op! {
    /// `tf.random_uniform(dims, min, max, dtype, seed)`: new values each
    /// run, floats in `[min, max)`, integers in `min..max` (integers with
    /// `min >= max` fail when run, as TensorFlow's).
    RandomUniform = "RandomUniform" {
        /// The shape of the output.
        dims: Vec<usize>,
        /// float32, float64, int32 or int64.
        dtype: DType,
        /// The lowest value.
        min: f64,
        /// The bound above the values.
        max: f64,
        /// The generator's seed; `None`: from entropy.
        seed: Option<u64>,
    }
}

impl OpDef for RandomUniform {
    fn arity(&self) -> RangeInclusive<usize> {
        0..=0
    }

    fn infer(&self, _ins: &[In]) -> Result<Vec<OutInfo>> {
        let dtype = self.dtype;
        let ints = matches!(dtype, DType::I32 | DType::I64);
        if !ints && !matches!(dtype, DType::F32 | DType::F64) {
            return Err(Error::invalid_dtype(format!(
                "random_uniform: not defined for {dtype}"
            )));
        }
        let dims = self.dims.iter().map(|&d| Some(d)).collect::<Vec<_>>();
        Ok(vec![dense(Some(PartialShape::new(dims)), dtype)])
    }

    fn seed(&self) -> Option<Option<u64>> {
        Some(self.seed)
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        let mut rng = a.rng()?;
        let (min, max) = (self.min, self.max);
        let r = reduce::random_uniform(
            &self.dims, self.dtype, min, max, &mut *rng,
        )?;
        out.push(r.into());
        Ok(())
    }
}

op! {
    /// `tf.random_shuffle(x, seed)`: input 0's rows (axis 0) in a new
    /// random order each run.
    RandomShuffle = "RandomShuffle" {
        /// The generator's seed; `None`: from entropy.
        seed: Option<u64>,
    }
}

impl OpDef for RandomShuffle {
    fn arity(&self) -> RangeInclusive<usize> {
        1..=1
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        let info = ins[0].dense("random_shuffle")?;
        Ok(vec![dense_from(info.shape.clone(), info.dtype, &ins[0])])
    }

    fn seed(&self) -> Option<Option<u64>> {
        Some(self.seed)
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        let mut rng = a.rng()?;
        let r = reduce::random_shuffle(a.dense(0)?, &mut *rng)?;
        out.push(r.into());
        Ok(())
    }
}
