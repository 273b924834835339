//! Turning dequeued elements into one batch per component: stacking along
//! a new axis 0, or padding to the largest shape first.

use crate::error::{Error, Result};
use crate::tensor::{Data, Shape, SparseTensor, Tensor, Value};

use super::spec::{Layout, QueueSpec};

/// How a queue builds a batch out of elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Batcher {
    /// Every dense component must have one shape across the batch.
    Stack,
    /// Dense components are padded with zeros (empty strings) to the
    /// largest size of each dimension in the batch.
    Pad,
}

impl Batcher {
    /// Checks that `elements` can be batched, without consuming them, so
    /// that the caller can put them back into the queue on failure.
    pub(crate) fn check(
        self,
        spec: &QueueSpec,
        elements: &[Vec<Value>],
    ) -> Result<()> {
        let Some(first) = elements.first() else {
            return Ok(());
        };
        for (i, c) in spec.components().iter().enumerate() {
            let label = c.label(i);
            for (j, e) in elements.iter().enumerate().skip(1) {
                let ok = match (&first[i], &e[i], self) {
                    (Value::Dense(a), Value::Dense(b), Batcher::Stack) => {
                        a.dims() == b.dims()
                    }
                    (Value::Dense(a), Value::Dense(b), Batcher::Pad) => {
                        a.rank() == b.rank()
                    }
                    (Value::Sparse(a), Value::Sparse(b), _) => {
                        a.rank() == b.rank()
                    }
                    _ => false,
                };
                if !ok {
                    let hint = match self {
                        Batcher::Stack => {
                            "; declare the shape or use a PaddingFifoQueue"
                        }
                        Batcher::Pad => "",
                    };
                    return Err(Error::invalid_argument(format!(
                        "cannot batch {label}: element {j} has shape {}, \
                         element 0 has {}{hint}",
                        shape_of(&e[i]),
                        shape_of(&first[i]),
                    ))
                    .with_field(label));
                }
            }
        }
        Ok(())
    }

    /// Builds the batch. `elements` must have passed [`Batcher::check`].
    pub(crate) fn build(
        self,
        spec: &QueueSpec,
        elements: Vec<Vec<Value>>,
    ) -> Result<Vec<Value>> {
        if elements.is_empty() {
            return empty_batch(spec);
        }
        let n = elements.len();
        let mut columns: Vec<Vec<Value>> =
            (0..spec.len()).map(|_| Vec::with_capacity(n)).collect();
        for element in elements {
            for (col, v) in columns.iter_mut().zip(element) {
                col.push(v);
            }
        }
        columns
            .into_iter()
            .enumerate()
            .map(|(i, col)| {
                self.build_column(col)
                    .map_err(|e| e.with_field(spec.components()[i].label(i)))
            })
            .collect()
    }

    fn build_column(self, col: Vec<Value>) -> Result<Value> {
        if matches!(col.first(), Some(Value::Sparse(_))) {
            let parts = col
                .into_iter()
                .map(|v| match v {
                    Value::Sparse(s) => Ok(s),
                    Value::Dense(_) => Err(mixed()),
                })
                .collect::<Result<Vec<SparseTensor>>>()?;
            return Ok(Value::Sparse(SparseTensor::stack(&parts)?));
        }
        let mut dense = col
            .into_iter()
            .map(|v| match v {
                Value::Dense(t) => Ok(t),
                Value::Sparse(_) => Err(mixed()),
            })
            .collect::<Result<Vec<Tensor>>>()?;
        if self == Batcher::Pad {
            let mut max = dense[0].dims().to_vec();
            for t in &dense[1..] {
                for (m, &d) in max.iter_mut().zip(t.dims()) {
                    *m = (*m).max(d);
                }
            }
            for t in &mut dense {
                if t.dims() != max.as_slice() {
                    *t = pad_to(t, &max)?;
                }
            }
        }
        Ok(Value::Dense(Tensor::stack(&dense)?))
    }
}

fn mixed() -> Error {
    Error::internal("a component mixes dense and sparse values")
}

fn shape_of(v: &Value) -> String {
    match v {
        Value::Dense(t) => t.shape().to_string(),
        Value::Sparse(s) => format!("{:?} (sparse)", s.dense_shape()),
    }
}

/// The batch of zero elements: each component with a leading 0 dimension.
/// Unknown dimensions of a declared shape are 0.
fn empty_batch(spec: &QueueSpec) -> Result<Vec<Value>> {
    spec.components()
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let shape = c.partial_shape().ok_or_else(|| {
                Error::invalid_argument(format!(
                    "cannot build an empty batch: {} has no declared shape",
                    c.label(i)
                ))
                .with_field(c.label(i))
            })?;
            let mut dims = vec![0];
            dims.extend(shape.dims().iter().map(|d| d.unwrap_or(0)));
            Ok(match c.layout() {
                Layout::Dense => Value::Dense(Tensor::zeros(c.dtype(), dims)?),
                Layout::Sparse => {
                    let rank = dims.len();
                    Value::Sparse(SparseTensor::new(
                        Tensor::new([0, rank], Vec::<i64>::new())?,
                        Tensor::zeros(c.dtype(), [0])?,
                        dims,
                    )?)
                }
            })
        })
        .collect()
}

/// `t` padded at the end of every dimension with zeros (empty strings) to
/// `dims`, which has `t`'s rank and is at least as large everywhere.
pub(crate) fn pad_to(t: &Tensor, dims: &[usize]) -> Result<Tensor> {
    let src = t.dims();
    if src.len() != dims.len() || src.iter().zip(dims).any(|(s, d)| s > d) {
        return Err(Error::internal(format!(
            "cannot pad shape {} to {dims:?}",
            t.shape()
        )));
    }
    let total = Shape::new(dims).checked_num_elements()?;
    let Some((&inner, outer)) = dims.split_last() else {
        return Ok(t.clone());
    };
    let src_inner = src[src.len() - 1];
    let zeros = Data::zeros(t.dtype(), inner);
    let mut out = Data::with_capacity(t.dtype(), total);
    // Walk every row of the innermost dimension of the output, in
    // row-major order, keeping the multi-index `at` of the row.
    let mut at = vec![0usize; outer.len()];
    // With no elements there is nothing to walk (and the row count of
    // `outer` alone might not even fit a usize).
    let rows: usize = if total == 0 {
        0
    } else {
        outer.iter().product()
    };
    for _ in 0..rows {
        let inside = at.iter().zip(src).all(|(a, s)| a < s);
        if inside {
            let mut offset = 0;
            for (a, s) in at.iter().zip(src) {
                offset = offset * s + a;
            }
            let start = offset * src_inner;
            out.extend_from(t.data(), start..start + src_inner)?;
            out.extend_from(&zeros, 0..inner - src_inner)?;
        } else {
            out.extend_from(&zeros, 0..inner)?;
        }
        for k in (0..at.len()).rev() {
            at[k] += 1;
            if at[k] < outer[k] {
                break;
            }
            at[k] = 0;
        }
    }
    Tensor::from_data(dims.to_vec(), out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pad_to_fills_the_end_of_every_dimension_with_zeros() {
        let t = Tensor::new([2, 2], vec![1i32, 2, 3, 4]).unwrap();
        let p = pad_to(&t, &[3, 3]).unwrap();
        assert_eq!(p.dims(), &[3, 3]);
        assert_eq!(p.as_slice::<i32>().unwrap(), &[1, 2, 0, 3, 4, 0, 0, 0, 0]);
    }

    #[test]
    fn pad_to_handles_empty_and_rank_one_tensors() {
        let t = Tensor::new([0], Vec::<f32>::new()).unwrap();
        let p = pad_to(&t, &[2]).unwrap();
        assert_eq!(p.as_slice::<f32>().unwrap(), &[0.0, 0.0]);
        let t = Tensor::new([1, 0], Vec::<f32>::new()).unwrap();
        let p = pad_to(&t, &[2, 1]).unwrap();
        assert_eq!(p.as_slice::<f32>().unwrap(), &[0.0, 0.0]);
    }
}
