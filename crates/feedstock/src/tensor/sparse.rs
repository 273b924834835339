//! [`SparseTensor`]: TensorFlow's COO sparse layout.

use super::*;

/// A sparse tensor in TensorFlow's COO layout.
///
/// `indices` is an `i64` tensor of shape `[nnz, rank]`, `values` a rank-1
/// tensor of `nnz` elements, and `dense_shape` the shape of the dense
/// tensor it stands for, a [`Shape`] as for a [`Tensor`]
/// ([`SparseTensor::dims`] is [`Tensor::dims`]' counterpart).
#[derive(Clone, PartialEq)]
pub struct SparseTensor {
    indices: Tensor,
    values: Tensor,
    dense_shape: Shape,
}

impl SparseTensor {
    /// A sparse tensor from its parts; every index must lie inside
    /// `dense_shape`.
    ///
    /// # Errors
    /// InvalidArgument when `indices` is not `i64 [nnz, rank]`, `values` is
    /// not rank 1 with `nnz` elements, `rank` differs from
    /// `dense_shape`'s, or an index lies outside `dense_shape`.
    pub fn new(
        indices: Tensor,
        values: Tensor,
        dense_shape: impl Into<Shape>,
    ) -> Result<SparseTensor> {
        let sp = SparseTensor::new_unvalidated(indices, values, dense_shape)?;
        if let Some((row, ix)) = sp.first_outside() {
            return Err(Error::invalid_argument(format!(
                "sparse index {ix:?} (entry {row}) is outside dense shape \
                 {}",
                sp.dense_shape
            )));
        }
        Ok(sp)
    }

    /// A sparse tensor from its parts, with indices that may lie outside
    /// `dense_shape` (or be negative): what TensorFlow's `parse_example`
    /// returns for a `SparseFeature` whose indices it does not validate.
    /// Operations that need every index inside the shape
    /// ([`to_dense`](SparseTensor::to_dense)) refuse such a tensor.
    ///
    /// # Errors
    /// InvalidArgument when `indices` is not `i64 [nnz, rank]`, `values` is
    /// not rank 1 with `nnz` elements, or `rank` differs from
    /// `dense_shape`'s.
    pub fn new_unvalidated(
        indices: Tensor,
        values: Tensor,
        dense_shape: impl Into<Shape>,
    ) -> Result<SparseTensor> {
        let dense_shape = dense_shape.into();
        let rank = dense_shape.rank();
        indices.as_slice::<i64>()?;
        if indices.dims() != [values.num_elements(), rank]
            || values.rank() != 1
        {
            return Err(Error::invalid_argument(format!(
                "sparse indices {} and values {} do not fit dense shape \
                 {dense_shape}",
                indices.shape(),
                values.shape()
            )));
        }
        Ok(SparseTensor {
            indices,
            values,
            dense_shape,
        })
    }

    /// The first entry whose index lies outside the dense shape.
    fn first_outside(&self) -> Option<(usize, &[i64])> {
        let rank = self.rank();
        if rank == 0 {
            return None;
        }
        let idx = self.indices.as_slice::<i64>().ok()?;
        idx.chunks(rank).enumerate().find(|(_, ix)| {
            ix.iter()
                .zip(self.dense_shape.dims())
                .any(|(&i, &d)| i < 0 || i as u64 >= d as u64)
        })
    }

    /// A rank-1 sparse tensor holding `values` at positions `0..n` of a
    /// dense vector of length `n`: what a `VarLenFeature` gives for one
    /// example.
    pub fn from_dense_vector(values: Tensor) -> Result<SparseTensor> {
        let n = values.num_elements();
        let values = values.reshape([n])?;
        let indices = Tensor::new([n, 1], (0..n as i64).collect())?;
        SparseTensor::new(indices, values, [n])
    }

    /// The `[nnz, rank]` indices.
    pub fn indices(&self) -> &Tensor {
        &self.indices
    }

    /// The `nnz` values.
    pub fn values(&self) -> &Tensor {
        &self.values
    }

    /// [`Tensor::own_strings`] on the values.
    pub(crate) fn own_strings(&mut self) -> usize {
        self.values.own_strings()
    }

    /// The shape of the dense tensor this stands for.
    pub fn dense_shape(&self) -> &Shape {
        &self.dense_shape
    }

    /// The dimensions of the dense tensor (shorthand for
    /// `dense_shape().dims()`).
    pub fn dims(&self) -> &[usize] {
        self.dense_shape.dims()
    }

    /// The number of stored values.
    pub fn nnz(&self) -> usize {
        self.values.num_elements()
    }

    /// The dtype of the values.
    pub fn dtype(&self) -> DType {
        self.values.dtype()
    }

    /// The rank of the dense tensor.
    pub fn rank(&self) -> usize {
        self.dense_shape.rank()
    }

    /// The dense tensor, with `default` (a scalar of the values' dtype) at
    /// every position not stored.
    ///
    /// # Errors
    /// InvalidArgument when `default` is not a scalar of the values' dtype,
    /// when an index lies outside the dense shape (possible only for a
    /// tensor made by [`new_unvalidated`](SparseTensor::new_unvalidated)),
    /// or when the dense shape has too many elements to address.
    pub fn to_dense(&self, default: &Tensor) -> Result<Tensor> {
        if default.dtype() != self.dtype() || default.num_elements() != 1 {
            return Err(Error::invalid_argument(format!(
                "default must be one {} value",
                self.dtype()
            )));
        }
        if let Some((row, ix)) = self.first_outside() {
            return Err(Error::invalid_argument(format!(
                "cannot make a dense tensor: sparse index {ix:?} (entry \
                 {row}) is outside dense shape {}",
                self.dense_shape
            )));
        }
        let dims: Vec<usize> = self.dense_shape.dims().to_vec();
        let total = self.dense_shape.checked_num_elements()?;
        let mut data = Data::with_capacity(self.dtype(), total);
        for _ in 0..total {
            data.extend_from(default.data(), 0..1)?;
        }
        let mut out = Tensor::from_data(dims.clone(), data)?;
        let rank = self.rank();
        let idx = self.indices.as_slice::<i64>()?;
        for (k, ix) in idx.chunks(rank.max(1)).enumerate().take(self.nnz()) {
            let mut flat = 0usize;
            for (d, &i) in dims.iter().zip(ix) {
                flat = flat * d + i as usize;
            }
            set_element(&mut out.data, flat, &self.values.data, k)?;
        }
        Ok(out)
    }

    /// Checks what TensorFlow's `SparseToDense` checks when validating
    /// indices: each index after the previous one in row-major order,
    /// none repeated, every one inside the dense shape.
    ///
    /// # Errors
    /// InvalidArgument naming the first offending entry, in TensorFlow's
    /// words.
    pub fn validate_order(&self) -> Result<()> {
        let rank = self.rank();
        let idx = self.indices.as_slice::<i64>()?;
        let show = |ix: &[i64]| {
            let parts: Vec<String> = ix.iter().map(i64::to_string).collect();
            format!("[{}]", parts.join(","))
        };
        let mut prev: Option<&[i64]> = None;
        for (k, ix) in idx.chunks(rank.max(1)).enumerate().take(self.nnz()) {
            let dims = self.dense_shape.dims();
            if ix
                .iter()
                .zip(dims)
                .any(|(&i, &d)| i < 0 || i as u64 >= d as u64)
            {
                let shape: Vec<i64> = dims.iter().map(|&d| d as i64).collect();
                return Err(Error::invalid_argument(format!(
                    "indices[{k}] = {} is out of bounds: need 0 <= index < {}",
                    show(ix),
                    show(&shape)
                )));
            }
            if let Some(p) = prev {
                match ix.cmp(p) {
                    std::cmp::Ordering::Less => {
                        return Err(Error::invalid_argument(format!(
                            "indices[{k}] = {} is out of order. Many sparse \
                             ops require sorted indices.",
                            show(ix)
                        )))
                    }
                    std::cmp::Ordering::Equal => {
                        return Err(Error::invalid_argument(format!(
                            "indices[{k}] = {} is repeated",
                            show(ix)
                        )))
                    }
                    std::cmp::Ordering::Greater => {}
                }
            }
            prev = Some(ix);
        }
        Ok(())
    }

    /// Stacks sparse tensors of one dtype and rank into a batch: each
    /// index gains a leading batch position, and the dense shape is the
    /// batch size followed by the largest of each dimension.
    ///
    /// # Errors
    /// InvalidArgument for an empty list or mismatched dtypes or ranks.
    pub fn stack(parts: &[SparseTensor]) -> Result<SparseTensor> {
        let first = parts.first().ok_or_else(|| {
            Error::invalid_argument("cannot stack an empty list of tensors")
        })?;
        let rank = first.rank();
        let mut dense = vec![parts.len()];
        dense.extend(std::iter::repeat_n(0, rank));
        let nnz: usize = parts.iter().map(|p| p.nnz()).sum();
        let mut indices = Vec::with_capacity(nnz * (rank + 1));
        let mut values = Data::with_capacity(first.dtype(), nnz);
        for (b, p) in parts.iter().enumerate() {
            if p.rank() != rank || p.dtype() != first.dtype() {
                return Err(Error::invalid_argument(format!(
                    "cannot stack sparse tensor {b} ({} rank {}) onto {} \
                     rank {rank}",
                    p.dtype(),
                    p.rank(),
                    first.dtype()
                )));
            }
            for (d, &s) in dense[1..].iter_mut().zip(p.dims()) {
                *d = (*d).max(s);
            }
            let idx = p.indices.as_slice::<i64>()?;
            for ix in idx.chunks(rank.max(1)).take(p.nnz()) {
                indices.push(b as i64);
                indices.extend_from_slice(&ix[..rank]);
            }
            values.extend_from(&p.values.data, 0..p.nnz())?;
        }
        // The parts' indices were checked (or deliberately not) when each
        // was made; stacking only prepends an in-range batch position.
        SparseTensor::new_unvalidated(
            Tensor::new([nnz, rank + 1], indices)?,
            Tensor::from_data([nnz], values)?,
            dense,
        )
    }

    /// Splits a batched sparse tensor (rank ≥ 1) into one sparse tensor per
    /// row of its first dimension, each without that dimension. The dense
    /// shape of each part is the batch's shape without its first dimension.
    pub fn unstack(&self) -> Result<Vec<SparseTensor>> {
        let rank = self.rank();
        if rank == 0 {
            return Err(Error::invalid_argument(
                "cannot unstack a rank-0 sparse tensor",
            ));
        }
        let n = self.dims()[0];
        let idx = self.indices.as_slice::<i64>()?;
        let mut rows: Vec<(Vec<i64>, Vec<usize>)> =
            vec![Default::default(); n];
        for (k, ix) in idx.chunks(rank).enumerate().take(self.nnz()) {
            let row = usize::try_from(ix[0])
                .ok()
                .and_then(|r| rows.get_mut(r))
                .ok_or_else(|| {
                    Error::invalid_argument(format!(
                        "cannot unstack: sparse index {ix:?} (entry {k}) \
                         is outside dense shape {}",
                        self.dense_shape
                    ))
                })?;
            row.0.extend_from_slice(&ix[1..]);
            row.1.push(k);
        }
        let shape = self.dense_shape.row();
        rows.into_iter()
            .map(|(indices, picks)| {
                let mut values =
                    Data::with_capacity(self.dtype(), picks.len());
                for k in &picks {
                    values.extend_from(&self.values.data, *k..*k + 1)?;
                }
                SparseTensor::new_unvalidated(
                    Tensor::new([picks.len(), rank - 1], indices)?,
                    Tensor::from_data([picks.len()], values)?,
                    shape.clone(),
                )
            })
            .collect()
    }
}

fn set_element(
    dst: &mut Data,
    at: usize,
    src: &Data,
    from: usize,
) -> Result<()> {
    macro_rules! set {
        ($($var:ident),*) => {
            match (dst, src) {
                $((Data::$var(a), Data::$var(b)) => a[at] = b[from].clone(),)*
                _ => return Err(Error::internal("dtype mismatch")),
            }
        };
    }
    set!(
        Bool, U8, I8, U16, I16, U32, I32, U64, I64, F32, F64, F16, BF16, C64,
        C128, String
    );
    Ok(())
}

impl fmt::Debug for SparseTensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SparseTensor")
            .field("dense_shape", &self.dense_shape)
            .field("indices", &self.indices)
            .field("values", &self.values)
            .finish()
    }
}
