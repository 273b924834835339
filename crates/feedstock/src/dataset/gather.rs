//! Rows gathered from several tensors into one: how the engine builds a
//! batch from the blocks its reader threads decoded. Consecutive rows of
//! one block are copied as one run, so a batch that lies within a block
//! costs one copy per component.

use super::decode::Column;
use super::engine::Row;
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
    let mut checked: *const Value = std::ptr::null();
    for run in runs {
        let t = run.value.dense()?;
        // Runs of one block share its value: check each value once, and
        // by its dims (no allocation).
        if !std::ptr::eq(checked, run.value) {
            if t.dtype() != first.dtype()
                || t.dims().get(1..) != first.dims().get(1..)
            {
                return Err(mismatch(first, t));
            }
            checked = run.value;
        }
        data.extend_from(
            t.data(),
            run.start * row_len..(run.start + run.len) * row_len,
        )?;
    }
    Tensor::from_data(shape, data)
}

fn mismatch(a: &Tensor, b: &Tensor) -> Error {
    rows_differ(a.dtype(), &a.shape().row(), b.dtype(), &b.shape().row())
}

/// Two examples of one component that cannot share a batch.
fn rows_differ(
    da: crate::tensor::DType,
    a: &crate::tensor::Shape,
    db: crate::tensor::DType,
    b: &crate::tensor::Shape,
) -> Error {
    Error::invalid_argument(format!(
        "cannot batch examples of different shapes: {da} {a} and {db} {b} \
         (each component needs one shape in a batch: batch them with \
         padded_batch, or one at a time)"
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

/// Stacks the component values of `rows` into one batch value per
/// component. Rows that lie next to each other in one block are copied
/// as one run; rows that differ in shape are padded with zeros (empty
/// strings, false) to the largest shape when `pad`, else an error.
pub(crate) fn stack_rows(rows: &[Row], pad: bool) -> Result<Vec<Value>> {
    let Some(first) = rows.first() else {
        return Ok(Vec::new());
    };
    (0..first.block.columns.len())
        .map(|c| {
            let mut runs: Vec<Run<'_>> = Vec::new();
            for r in rows {
                let Column::Stacked(value) = &r.block.columns[c] else {
                    return by_row(rows, c, pad);
                };
                match runs.last_mut() {
                    Some(run)
                        if std::ptr::eq(run.value, value)
                            && run.start + run.len == r.row =>
                    {
                        run.len += 1
                    }
                    _ => runs.push(Run {
                        value,
                        start: r.row,
                        len: 1,
                    }),
                }
            }
            if pad && !same_row_shape(&runs) {
                return by_row(rows, c, pad);
            }
            gather(&runs)
        })
        .collect()
}

/// True when every run's value has the first's row shape.
fn same_row_shape(runs: &[Run<'_>]) -> bool {
    let row = |r: &Run<'_>| match r.value {
        Value::Dense(t) => Some(t.shape().row()),
        Value::Sparse(_) => None,
    };
    let first = row(&runs[0]);
    runs.iter().all(|r| row(r) == first)
}

/// Component `c` of `rows`, taken row by row and stacked (padded when
/// `pad`).
fn by_row(rows: &[Row], c: usize, pad: bool) -> Result<Value> {
    let values: Vec<Value> = rows
        .iter()
        .map(|r| match &r.block.columns[c] {
            Column::Rows(v) => Ok(v[r.row].clone()),
            Column::Stacked(Value::Dense(t)) => {
                t.index(r.row).map(Value::Dense)
            }
            Column::Stacked(Value::Sparse(s)) => s
                .unstack()?
                .into_iter()
                .nth(r.row)
                .map(Value::Sparse)
                .ok_or_else(|| Error::internal("a row outside its block")),
        })
        .collect::<Result<_>>()?;
    if let Some(Value::Sparse(_)) = values.first() {
        let parts: Vec<SparseTensor> = values
            .iter()
            .map(|v| v.sparse().cloned())
            .collect::<Result<_>>()?;
        return SparseTensor::stack(&parts).map(Value::Sparse);
    }
    let ts: Vec<Tensor> = values
        .iter()
        .map(|v| v.dense().cloned())
        .collect::<Result<_>>()?;
    let differ = |t: &Tensor| {
        rows_differ(ts[0].dtype(), ts[0].shape(), t.dtype(), t.shape())
    };
    if let Some(t) = ts
        .iter()
        .find(|t| t.dtype() != ts[0].dtype() || t.rank() != ts[0].rank())
    {
        return Err(differ(t));
    }
    if ts.iter().all(|t| t.shape() == ts[0].shape()) {
        return Tensor::stack(&ts).map(Value::Dense);
    }
    if !pad {
        let other = ts
            .iter()
            .find(|t| t.shape() != ts[0].shape())
            .expect("differs");
        return Err(differ(other));
    }
    padded(&ts).map(Value::Dense)
}

/// `ts` (one dtype and rank) stacked along a new axis 0, each padded at
/// the end of every axis with zeros to the largest size of that axis.
fn padded(ts: &[Tensor]) -> Result<Tensor> {
    let rank = ts[0].rank();
    let mut max = vec![0usize; rank];
    for t in ts {
        for (m, &d) in max.iter_mut().zip(t.dims()) {
            *m = (*m).max(d);
        }
    }
    let shape = crate::tensor::Shape::new(max.clone()).prepend(ts.len());
    let dtype = ts[0].dtype();
    let mut data = Data::try_with_capacity_as(dtype, shape.dims())?;
    if rank == 0 {
        for t in ts {
            data.extend_from(t.data(), 0..1)?;
        }
        return Tensor::from_data(shape, data);
    }
    let last = max[rank - 1];
    let zeros = Data::zeros(dtype, last);
    // Walk the padded layout in order, one innermost run at a time: the
    // row's own elements where the index is within its shape, zeros
    // after them and past it.
    let outer: usize = max[..rank - 1].iter().product();
    let mut index = vec![0usize; rank - 1];
    for t in ts {
        let dims = t.dims();
        let inner = dims[rank - 1];
        index.iter_mut().for_each(|i| *i = 0);
        for _ in 0..outer {
            let inside = index.iter().zip(dims).all(|(&i, &d)| i < d);
            if inside {
                let mut src = 0;
                for (&i, &d) in index.iter().zip(dims) {
                    src = src * d + i;
                }
                let src = src * inner;
                data.extend_from(t.data(), src..src + inner)?;
                data.extend_from(&zeros, 0..last - inner)?;
            } else {
                data.extend_from(&zeros, 0..last)?;
            }
            for k in (0..rank - 1).rev() {
                index[k] += 1;
                if index[k] < max[k] {
                    break;
                }
                index[k] = 0;
            }
        }
    }
    Tensor::from_data(shape, data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padding_fills_every_axis_to_the_largest() {
        let a = Tensor::new([1, 2], vec![1i32, 2]).unwrap();
        let b = Tensor::new([2, 1], vec![3i32, 4]).unwrap();
        let p = padded(&[a, b]).unwrap();
        assert_eq!(p.dims(), [2, 2, 2]);
        assert_eq!(p.as_slice::<i32>().unwrap(), [1, 2, 0, 0, 3, 0, 4, 0]);
        let s = padded(&[
            Tensor::new([1], vec![bytes::Bytes::from_static(b"x")]).unwrap(),
            Tensor::new([0], Vec::<bytes::Bytes>::new()).unwrap(),
        ])
        .unwrap();
        assert_eq!(s.dims(), [2, 1]);
        assert_eq!(s.as_slice::<bytes::Bytes>().unwrap()[1], "");
    }

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
