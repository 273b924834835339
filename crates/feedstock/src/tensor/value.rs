//! [`Value`]: a dense or a sparse tensor.

use super::*;

/// One component of a pipeline element: a dense or a sparse tensor.
#[derive(Clone, PartialEq, Debug)]
pub enum Value {
    /// A dense tensor.
    Dense(Tensor),
    /// A sparse tensor.
    Sparse(SparseTensor),
}

impl Value {
    /// The dtype of the (stored) elements.
    pub fn dtype(&self) -> DType {
        match self {
            Value::Dense(t) => t.dtype(),
            Value::Sparse(s) => s.dtype(),
        }
    }

    /// The dense tensor.
    ///
    /// # Errors
    /// InvalidArgument when the value is sparse.
    pub fn dense(&self) -> Result<&Tensor> {
        match self {
            Value::Dense(t) => Ok(t),
            Value::Sparse(_) => Err(Error::invalid_argument(
                "expected a dense tensor, got a sparse one",
            )),
        }
    }

    /// The sparse tensor.
    ///
    /// # Errors
    /// InvalidArgument when the value is dense.
    pub fn sparse(&self) -> Result<&SparseTensor> {
        match self {
            Value::Sparse(s) => Ok(s),
            Value::Dense(_) => Err(Error::invalid_argument(
                "expected a sparse tensor, got a dense one",
            )),
        }
    }

    /// Takes the dense tensor.
    ///
    /// # Errors
    /// InvalidArgument when the value is sparse.
    pub fn into_dense(self) -> Result<Tensor> {
        match self {
            Value::Dense(t) => Ok(t),
            Value::Sparse(_) => Err(Error::invalid_argument(
                "expected a dense tensor, got a sparse one",
            )),
        }
    }
}

impl From<Tensor> for Value {
    fn from(t: Tensor) -> Value {
        Value::Dense(t)
    }
}

impl From<SparseTensor> for Value {
    fn from(s: SparseTensor) -> Value {
        Value::Sparse(s)
    }
}
