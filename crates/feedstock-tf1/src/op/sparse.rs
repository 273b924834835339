//! Ops that make sparse tensors, take them apart and make them dense.

use std::ops::RangeInclusive;

use feedstock::error::{Error, Result};
use feedstock::queue::PartialShape;
use feedstock::tensor::{DType, Tensor, Value};
use feedstock::SparseTensor;

use super::attrs::attr_enum;
use super::{dense, op, Args, In, OpDef, OutInfo};
use crate::graph::SparsePart as Part;

attr_enum!(Part, "a part of a sparse tensor",
    "indices" => Part::Indices, "values" => Part::Values,
    "dense_shape" => Part::DenseShape);

/// Input `k`'s info, checking that it is sparse.
fn sparse_input(ins: &[In], k: usize) -> Result<&OutInfo> {
    let info = &ins[k].info;
    if !info.sparse {
        return Err(Error::invalid_argument(
            "expected a sparse tensor, got a dense one",
        ));
    }
    Ok(info)
}

op! {
    /// A part of sparse input 0 as a dense tensor (`sparse.indices`,
    /// `sparse.values`, `sparse.dense_shape`).
    SparsePart = "SparsePart" {
        /// Which part.
        part: Part,
    }
}

impl OpDef for SparsePart {
    fn arity(&self) -> RangeInclusive<usize> {
        1..=1
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        let info = sparse_input(ins, 0)?;
        let rank = info.shape.as_ref().map(PartialShape::rank);
        let (dtype, dims) = match self.part {
            Part::Indices => (DType::I64, vec![None, rank]),
            Part::Values => (info.dtype, vec![None]),
            Part::DenseShape => (DType::I64, vec![rank]),
        };
        Ok(vec![dense(Some(PartialShape::new(dims)), dtype)])
    }

    fn default_name(&self) -> &'static str {
        match self.part {
            Part::Indices => "SparseIndices",
            Part::Values => "SparseValues",
            Part::DenseShape => "SparseDenseShape",
        }
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        let sp = a.value(0).sparse()?;
        out.push(
            match self.part {
                Part::Indices => sp.indices().clone(),
                Part::Values => sp.values().clone(),
                Part::DenseShape => {
                    let dims = sp.dims().iter().map(|&d| d as i64).collect();
                    Tensor::vector::<i64>(dims)
                }
            }
            .into(),
        );
        Ok(())
    }
}

op! {
    /// The dense form of sparse input 0 (`tf.sparse.to_dense`), input 1
    /// (a scalar of its dtype) where nothing is stored.
    SparseToDense = "SparseToDense" {
        /// Whether the indices are checked for order, as TensorFlow
        /// checks them.
        validate: bool,
    }
}

impl OpDef for SparseToDense {
    fn arity(&self) -> RangeInclusive<usize> {
        2..=2
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        let info = sparse_input(ins, 0)?;
        let d = &ins[1].info;
        if d.dtype != info.dtype
            || d.sparse
            || d.shape.as_ref().is_some_and(|s| s.rank() != 0)
        {
            return Err(Error::invalid_argument(format!(
                "sparse_to_dense: the default must be a {} scalar",
                info.dtype
            )));
        }
        Ok(vec![dense(info.shape.clone(), info.dtype)])
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        let sp = a.value(0).sparse()?;
        if self.validate {
            sp.validate_order()?;
        }
        out.push(sp.to_dense(a.dense(1)?)?.into());
        Ok(())
    }
}

op! {
    /// A sparse tensor from its parts (`tf.SparseTensor(indices, values,
    /// dense_shape)`): inputs indices (an `int64 [nnz, rank]` matrix),
    /// values (`[nnz]`) and dense shape (an `int64 [rank]` vector). Like
    /// TensorFlow's, it is not validated until an op needs it to be.
    MakeSparse = "MakeSparse" {}
}

impl OpDef for MakeSparse {
    fn arity(&self) -> RangeInclusive<usize> {
        3..=3
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        let ii = ins[0].dense("SparseTensor indices")?;
        let vi = ins[1].dense("SparseTensor values")?;
        let si = ins[2].dense("SparseTensor dense_shape")?;
        let rank_of = |i: &OutInfo| i.shape.as_ref().map(|s| s.rank());
        if ii.dtype != DType::I64
            || si.dtype != DType::I64
            || rank_of(ii).is_some_and(|r| r != 2)
            || rank_of(vi).is_some_and(|r| r != 1)
            || rank_of(si).is_some_and(|r| r != 1)
        {
            return Err(Error::invalid_argument(
                "SparseTensor: indices must be an int64 matrix, values a \
                 vector and dense_shape an int64 vector",
            ));
        }
        // The dense shape: known when it is a constant (as in TensorFlow),
        // else its rank when its length is known.
        let known = ins[2].constant_dims();
        let rank = ins[2].dims().and_then(|d| d.first().copied().flatten());
        let shape = known
            .or_else(|| rank.map(|r| vec![None; r]))
            .map(PartialShape::new);
        Ok(vec![OutInfo {
            dtype: vi.dtype,
            sparse: true,
            shape,
            key: None,
        }])
    }

    fn default_name(&self) -> &'static str {
        "SparseTensor"
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        let dims = a
            .dense(2)?
            .as_slice::<i64>()?
            .iter()
            .map(|&d| {
                usize::try_from(d).map_err(|_| {
                    Error::invalid_argument(format!(
                        "SparseTensor: dense_shape {d} is negative"
                    ))
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let sp = SparseTensor::new_unvalidated(
            a.dense(0)?.clone(),
            a.dense(1)?.clone(),
            dims,
        )?;
        out.push(Value::Sparse(sp));
        Ok(())
    }
}
