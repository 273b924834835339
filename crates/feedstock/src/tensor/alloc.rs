//! Tensor buffers, allocated fallibly when their size comes from a user.
//!
//! A tensor's size is often a user's value: a `one_hot` depth, `tile`
//! multiples, a `fill` shape, a record length times a batch size. Rust's
//! `vec![x; n]` and `Vec::with_capacity(n)` abort the whole process when
//! the allocator refuses, so every buffer sized that way goes through
//! [`Data::try_with_capacity`], [`Data::try_filled`] or
//! [`Tensor::zeros`]: the byte count is checked (`checked_mul`) and the
//! room reserved with `Vec::try_reserve_exact` (a buffer larger than
//! the machine's memory and swap is refused first), and a size memory
//! cannot hold is an [`Error::out_of_memory`] (ResourceExhausted) naming the
//! shape, the dtype and the bytes, as TensorFlow's "OOM when allocating
//! tensor" does, instead of an abort.
//!
//! ```
//! use feedstock::tensor::{DType, Data, Tensor};
//! use feedstock::Kind;
//!
//! let e = Tensor::zeros(DType::F32, [1 << 40]).unwrap_err();
//! assert_eq!(e.kind(), Kind::ResourceExhausted);
//! assert!(e.is_out_of_memory());
//! assert!(e.message().contains("shape[1099511627776]"), "{e}");
//! let five = Data::try_filled(&Data::F32(vec![1.5]), 5)?;
//! assert_eq!(five, Data::F32(vec![1.5; 5]));
//! # Ok::<(), feedstock::Error>(())
//! ```

use std::fmt::Write;
use std::sync::OnceLock;

use super::{
    bf16, f16, Bytes, Complex32, Complex64, DType, Data, Element, Shape,
    Tensor,
};
use crate::error::{Error, Result};

/// The error for a buffer of `dims` elements of `dtype` that memory
/// cannot hold, in TensorFlow's words ("OOM when allocating tensor with
/// shape[...] and type ..."), with the bytes asked for when they can be
/// counted.
pub fn oom(dims: &[usize], dtype: DType) -> Error {
    let mut shape = String::new();
    for (k, d) in dims.iter().enumerate() {
        let sep = if k == 0 { "" } else { "," };
        let _ = write!(shape, "{sep}{d}");
    }
    let width = dtype.size().unwrap_or(std::mem::size_of::<Bytes>());
    let bytes = dims
        .iter()
        .try_fold(width, |acc, &d| acc.checked_mul(d))
        .map_or_else(
            || "more bytes than memory can address".to_owned(),
            |b| format!("{b} bytes"),
        );
    Error::out_of_memory(format!(
        "OOM when allocating tensor with shape[{shape}] and type {dtype} \
         ({bytes})"
    ))
}

/// The most one buffer may ask for: the machine's memory and swap
/// (`/proc/meminfo`), the bound Linux's default (heuristic) overcommit
/// puts on one allocation; `None` where that cannot be read.
///
/// An allocator that reserves address space without committing it
/// (mimalloc, which the CLI and the Python module use) grants even
/// terabytes, and filling them ends in the OOM killer instead of an
/// error. Read by hand: two lines of a text file do not call for a
/// system-information crate.
fn ceiling() -> Option<usize> {
    static CEILING: OnceLock<Option<usize>> = OnceLock::new();
    *CEILING.get_or_init(|| {
        let text = std::fs::read_to_string("/proc/meminfo").ok()?;
        let kib = |name: &str| -> Option<u64> {
            text.lines().find_map(|l| {
                l.strip_prefix(name)?
                    .trim()
                    .strip_suffix("kB")?
                    .trim()
                    .parse()
                    .ok()
            })
        };
        let total =
            kib("MemTotal:")?.checked_add(kib("SwapTotal:").unwrap_or(0))?;
        usize::try_from(total.checked_mul(1024)?).ok()
    })
}

/// Reserves exactly `n` more elements in `v`, or the error for `dims`.
fn reserve<T>(
    v: &mut Vec<T>,
    n: usize,
    dims: &[usize],
    dtype: DType,
) -> Result<()> {
    let bytes = n.checked_mul(std::mem::size_of::<T>());
    let most = ceiling().unwrap_or(usize::MAX).min(isize::MAX as usize);
    if bytes.is_none_or(|b| b > most) {
        return Err(oom(dims, dtype));
    }
    v.try_reserve_exact(n).map_err(|_| oom(dims, dtype))
}

/// An empty vector with room for the elements of `dims`, reserved
/// fallibly: for kernels that build a typed vector before wrapping it in
/// a tensor.
///
/// # Errors
/// ResourceExhausted ([`Error::is_out_of_memory`]) when memory cannot
/// hold them.
pub fn try_vec<T: Element>(dims: &[usize]) -> Result<Vec<T>> {
    let n = dims.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d));
    let Some(n) = n else {
        return Err(oom(dims, T::DTYPE));
    };
    let mut v = Vec::new();
    reserve(&mut v, n, dims, T::DTYPE)?;
    Ok(v)
}

impl Data {
    /// `n` zero elements (`false`, `0`, or empty strings) of `dtype`.
    ///
    /// Aborts, as `vec!` does, when memory cannot hold them: for a count
    /// that comes from a user's value, use [`Data::try_zeros`].
    pub fn zeros(dtype: DType, n: usize) -> Data {
        match dtype {
            DType::Bool => Data::Bool(vec![false; n]),
            DType::U8 => Data::U8(vec![0; n]),
            DType::I8 => Data::I8(vec![0; n]),
            DType::U16 => Data::U16(vec![0; n]),
            DType::I16 => Data::I16(vec![0; n]),
            DType::U32 => Data::U32(vec![0; n]),
            DType::I32 => Data::I32(vec![0; n]),
            DType::U64 => Data::U64(vec![0; n]),
            DType::I64 => Data::I64(vec![0; n]),
            DType::F32 => Data::F32(vec![0.0; n]),
            DType::F64 => Data::F64(vec![0.0; n]),
            DType::F16 => Data::F16(vec![f16::ZERO; n]),
            DType::BF16 => Data::BF16(vec![bf16::ZERO; n]),
            DType::C64 => Data::C64(vec![Complex32::new(0.0, 0.0); n]),
            DType::C128 => Data::C128(vec![Complex64::new(0.0, 0.0); n]),
            DType::String => Data::String(vec![Bytes::new(); n]),
        }
    }

    /// An empty vector of `dtype` with room for `n` elements.
    ///
    /// Aborts, as `Vec::with_capacity` does, when memory cannot hold
    /// them: for a count that comes from a user's value, use
    /// [`Data::try_with_capacity`].
    pub fn with_capacity(dtype: DType, n: usize) -> Data {
        let mut d = Data::zeros(dtype, 0);
        with_data!(&mut d, v => v.reserve(n));
        d
    }

    /// An empty vector of `dtype` with room for `n` elements, reserved
    /// fallibly.
    ///
    /// # Errors
    /// ResourceExhausted ([`Error::is_out_of_memory`]) when memory cannot
    /// hold `n` elements.
    pub fn try_with_capacity(dtype: DType, n: usize) -> Result<Data> {
        let mut d = Data::zeros(dtype, 0);
        with_data!(&mut d, v => reserve(v, n, &[n], dtype))?;
        Ok(d)
    }

    /// `n` zero elements of `dtype`, allocated fallibly.
    ///
    /// # Errors
    /// As [`Data::try_with_capacity`].
    pub fn try_zeros(dtype: DType, n: usize) -> Result<Data> {
        let zero = Data::zeros(dtype, 1);
        Data::try_filled(&zero, n)
    }

    /// `n` copies of the one element of `value`, allocated fallibly.
    ///
    /// # Errors
    /// InvalidArgument when `value` does not hold exactly one element;
    /// ResourceExhausted as [`Data::try_with_capacity`].
    pub fn try_filled(value: &Data, n: usize) -> Result<Data> {
        Data::try_filled_as(value, n, &[n])
    }

    /// [`Data::try_filled`], naming `dims` when memory cannot hold them.
    pub fn try_filled_as(
        value: &Data,
        n: usize,
        dims: &[usize],
    ) -> Result<Data> {
        if value.len() != 1 {
            return Err(Error::invalid_argument(format!(
                "a fill value must be one element, got {}",
                value.len()
            )));
        }
        let dtype = value.dtype();
        let mut out = value.clone();
        with_data!(&mut out, v => {
            let x = v.pop().expect("one element");
            reserve(v, n, dims, dtype)?;
            v.resize(n, x);
        });
        Ok(out)
    }

    /// An empty vector of `dtype` with room for the elements of `dims`,
    /// reserved fallibly, naming `dims` when memory cannot hold them
    /// (InvalidArgument when their element count overflows).
    pub fn try_with_capacity_as(dtype: DType, dims: &[usize]) -> Result<Data> {
        let n = Shape::from(dims).checked_num_elements()?;
        let mut d = Data::zeros(dtype, 0);
        with_data!(&mut d, v => reserve(v, n, dims, dtype))?;
        Ok(d)
    }
}

impl Tensor {
    /// A tensor of `shape` filled with zeros (`false`, empty strings),
    /// allocated fallibly (the shape may come from a user's value).
    ///
    /// # Errors
    /// InvalidArgument when `shape`'s element count overflows;
    /// ResourceExhausted ([`Error::is_out_of_memory`]) when memory cannot
    /// hold the elements.
    pub fn zeros(dtype: DType, shape: impl Into<Shape>) -> Result<Tensor> {
        let shape = shape.into();
        let n = shape.checked_num_elements()?;
        let zero = Data::zeros(dtype, 1);
        let data = Data::try_filled_as(&zero, n, shape.dims())?;
        Tensor::from_data(shape, data)
    }

    /// A tensor of `shape` holding the scalar `value` everywhere
    /// (`tf.fill`), allocated fallibly.
    ///
    /// # Errors
    /// InvalidArgument when `value` is not a scalar or `shape`'s element
    /// count overflows; ResourceExhausted as [`Tensor::zeros`].
    pub fn filled(shape: impl Into<Shape>, value: &Tensor) -> Result<Tensor> {
        let shape = shape.into();
        if value.rank() != 0 {
            return Err(Error::invalid_argument(format!(
                "value must be a scalar, got shape {}",
                value.shape()
            )));
        }
        let n = shape.checked_num_elements()?;
        let data = Data::try_filled_as(value.data(), n, shape.dims())?;
        Tensor::from_data(shape, data)
    }
}
