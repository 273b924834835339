//! Rows gathered from several tensors into one: how the engine builds a
//! batch from the blocks its reader threads decoded. Consecutive rows of
//! one block are copied as one run, so a batch that lies within a block
//! costs one copy per component.

use crate::error::{Error, Result};
use crate::tensor::{Data, SparseTensor, Tensor, Value};

/// A run of rows: `len` rows of `value` from row `start`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Run<'a> {
    pub(crate) value: &'a Value,
    pub(crate) start: usize,
    pub(crate) len: usize,
}

/// Rows `rows` of `t`, in that order, as one tensor.
pub(crate) fn rows(t: &Tensor, rows: &[usize]) -> Result<Tensor> {
    let value = Value::Dense(t.clone());
    let runs = runs_of(&value, rows);
    gather(&runs)?.into_dense()
}

/// The runs of consecutive rows of `value` in `rows`.
pub(crate) fn runs_of<'a>(value: &'a Value, rows: &[usize]) -> Vec<Run<'a>> {
    let mut runs: Vec<Run<'a>> = Vec::new();
    for &r in rows {
        match runs.last_mut() {
            Some(run) if run.start + run.len == r => run.len += 1,
            _ => runs.push(Run {
                value,
                start: r,
                len: 1,
            }),
        }
    }
    runs
}

/// The rows of `runs`, in order, stacked along axis 0. Every run's value
/// must have the dtype and the row shape of the first.
///
/// # Errors
///
/// [`InvalidArgument`](crate::Kind::InvalidArgument) naming both shapes
/// when two rows differ in shape or dtype (a batch needs equal shapes);
/// [`ResourceExhausted`](crate::Kind::ResourceExhausted) when memory
/// cannot hold the result.
pub(crate) fn gather(runs: &[Run<'_>]) -> Result<Value> {
    let Some(first) = runs.first() else {
        return Err(Error::internal("a batch of no rows"));
    };
    match first.value {
        Value::Dense(t) => dense(t, runs).map(Value::Dense),
        Value::Sparse(_) => sparse(runs).map(Value::Sparse),
    }
}

fn dense(first: &Tensor, runs: &[Run<'_>]) -> Result<Tensor> {
    let row = first.shape().row();
    let row_len = row.num_elements();
    let n: usize = runs.iter().map(|r| r.len).sum();
    let shape = row.prepend(n);
    let mut data = Data::try_with_capacity_as(first.dtype(), shape.dims())?;
    for run in runs {
        let t = run.value.dense()?;
        if t.dtype() != first.dtype() || t.shape().row() != row {
            return Err(mismatch(first, t));
        }
        data.extend_from(
            t.data(),
            run.start * row_len..(run.start + run.len) * row_len,
        )?;
    }
    Tensor::from_data(shape, data)
}

fn mismatch(a: &Tensor, b: &Tensor) -> Error {
    Error::invalid_argument(format!(
        "cannot batch examples of different shapes: {} {} and {} {} \
         (each component needs one shape in a batch; pad it first, or \
         batch one example at a time)",
        a.dtype(),
        a.shape().row(),
        b.dtype(),
        b.shape().row()
    ))
}

fn sparse(runs: &[Run<'_>]) -> Result<SparseTensor> {
    let mut rows = Vec::new();
    for run in runs {
        let s = run.value.sparse()?;
        let all = s.unstack()?;
        rows.extend_from_slice(
            all.get(run.start..run.start + run.len).ok_or_else(|| {
                Error::internal("rows outside a decoded block")
            })?,
        );
    }
    SparseTensor::stack(&rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_merge_consecutive_rows() {
        let v =
            Value::Dense(Tensor::new([5], vec![0i64, 1, 2, 3, 4]).unwrap());
        let runs = runs_of(&v, &[1, 2, 3, 0, 4]);
        let lens: Vec<_> = runs.iter().map(|r| (r.start, r.len)).collect();
        assert_eq!(lens, [(1, 3), (0, 1), (4, 1)]);
        let g = gather(&runs).unwrap().into_dense().unwrap();
        assert_eq!(g.as_slice::<i64>().unwrap(), [1, 2, 3, 0, 4]);
    }

    #[test]
    fn rows_of_two_blocks_join_and_shapes_must_agree() {
        let a =
            Value::Dense(Tensor::new([2, 2], vec![1f32, 2., 3., 4.]).unwrap());
        let b = Value::Dense(Tensor::new([1, 2], vec![5f32, 6.]).unwrap());
        let runs = [
            Run {
                value: &a,
                start: 1,
                len: 1,
            },
            Run {
                value: &b,
                start: 0,
                len: 1,
            },
        ];
        let g = gather(&runs).unwrap().into_dense().unwrap();
        assert_eq!(g.dims(), [2, 2]);
        assert_eq!(g.as_slice::<f32>().unwrap(), [3., 4., 5., 6.]);
        let c = Value::Dense(Tensor::new([1, 3], vec![0f32; 3]).unwrap());
        let bad = [
            Run {
                value: &a,
                start: 0,
                len: 1,
            },
            Run {
                value: &c,
                start: 0,
                len: 1,
            },
        ];
        let e = gather(&bad).unwrap_err();
        assert!(e.to_string().contains("different shapes"), "{e}");
    }
}
