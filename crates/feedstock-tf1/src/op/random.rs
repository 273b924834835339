//! Ops that draw random numbers, each node from its own generator
//! (seeded by its `seed`, else from entropy), which the session makes.

use std::ops::RangeInclusive;

use crate::kernels::reduce;
use feedstock::error::{Error, Result};
use feedstock::queue::PartialShape;
use feedstock::tensor::{DType, Tensor, Value};

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
    /// `tf.random_normal(dims, mean, stddev, dtype, seed)` and, with
    /// `truncated`, `tf.truncated_normal`: new normally distributed
    /// floats each run; truncated draws again any value more than two
    /// standard deviations from the mean, as TensorFlow's does.
    RandomNormal = "RandomNormal" {
        /// The shape of the output.
        dims: Vec<usize>,
        /// float32 or float64.
        dtype: DType,
        /// The mean.
        mean: f64,
        /// The standard deviation.
        stddev: f64,
        /// Values beyond two standard deviations are drawn again.
        truncated: bool,
        /// The generator's seed; `None`: from entropy.
        seed: Option<u64>,
    }
}

impl OpDef for RandomNormal {
    fn arity(&self) -> RangeInclusive<usize> {
        0..=0
    }

    fn infer(&self, _ins: &[In]) -> Result<Vec<OutInfo>> {
        if !matches!(self.dtype, DType::F32 | DType::F64) {
            return Err(Error::invalid_dtype(format!(
                "random_normal: not defined for {}",
                self.dtype
            )));
        }
        let dims = self.dims.iter().map(|&d| Some(d)).collect::<Vec<_>>();
        Ok(vec![dense(Some(PartialShape::new(dims)), self.dtype)])
    }

    fn default_name(&self) -> &'static str {
        if self.truncated {
            "truncated_normal"
        } else {
            "random_normal"
        }
    }

    fn seed(&self) -> Option<Option<u64>> {
        Some(self.seed)
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        use rand::Rng;
        use rand_distr::StandardNormal;

        let mut rng = a.rng()?;
        let mut draw = || loop {
            let z: f64 = rng.sample(StandardNormal);
            if !self.truncated || z.abs() <= 2.0 {
                break self.mean + self.stddev * z;
            }
        };
        let n = self.dims.iter().product::<usize>();
        let t = match self.dtype {
            DType::F64 => {
                let mut v = feedstock::tensor::try_vec::<f64>(&self.dims)?;
                v.extend((0..n).map(|_| draw()));
                Tensor::new(self.dims.clone(), v)?
            }
            _ => {
                let mut v = feedstock::tensor::try_vec::<f32>(&self.dims)?;
                v.extend((0..n).map(|_| draw() as f32));
                Tensor::new(self.dims.clone(), v)?
            }
        };
        out.push(t.into());
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
