//! Dynamic tensors: the values that flow through a pipeline.
//!
//! Decoders decide dtypes at run time (a CSV column's dtype comes from its
//! default, an Example feature's from the parse spec), so the core type is
//! dynamic: a [`Tensor`] is a [`DType`], a [`Shape`] and a typed vector in
//! row-major order. Typed access ([`Tensor::as_slice`]) is a borrow, not a
//! copy. Byte strings are [`Bytes`], so a string tensor can point into the
//! record buffer it was decoded from instead of copying it.
//!
//! [`SparseTensor`] is TensorFlow's COO sparse layout, and [`Value`] is what
//! a pipeline component holds: either kind.
//!
//! ```
//! use feedstock::tensor::{DType, Tensor};
//!
//! let t = Tensor::new([2, 3], vec![1i32, 2, 3, 4, 5, 6])?;
//! assert_eq!(t.dtype(), DType::I32);
//! let rows = t.unstack();
//! assert_eq!(rows[1].as_slice::<i32>()?, &[4, 5, 6]);
//! let back = Tensor::stack(&rows)?;
//! assert_eq!(back, t);
//! let f = t.cast(DType::F32)?;
//! assert_eq!(f.as_slice::<f32>()?[5], 6.0);
//! # Ok::<(), feedstock::Error>(())
//! ```

use std::fmt;

use bytes::Bytes;
pub use half::{bf16, f16};
pub use num_complex::{Complex32, Complex64};
use num_traits::AsPrimitive;
use smallvec::SmallVec;

use crate::error::{Error, Result};

/// The element type of a tensor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DType {
    /// `bool`.
    Bool,
    /// `u8`.
    U8,
    /// `i8`.
    I8,
    /// `u16`.
    U16,
    /// `i16`.
    I16,
    /// `u32`.
    U32,
    /// `i32`.
    I32,
    /// `u64`.
    U64,
    /// `i64`.
    I64,
    /// `f32`.
    F32,
    /// `f64`.
    F64,
    /// TensorFlow's `float16`: IEEE half precision, [`struct@f16`].
    F16,
    /// TensorFlow's `bfloat16`: [`struct@bf16`].
    BF16,
    /// TensorFlow's `complex64`: two `f32`, real part first
    /// ([`Complex32`]).
    C64,
    /// TensorFlow's `complex128`: two `f64`, real part first
    /// ([`Complex64`]).
    C128,
    /// A byte string ([`Bytes`]); TensorFlow's `tf.string`.
    String,
}

impl DType {
    /// Every dtype, in declaration order.
    pub const ALL: [DType; 16] = [
        DType::Bool,
        DType::U8,
        DType::I8,
        DType::U16,
        DType::I16,
        DType::U32,
        DType::I32,
        DType::U64,
        DType::I64,
        DType::F32,
        DType::F64,
        DType::F16,
        DType::BF16,
        DType::C64,
        DType::C128,
        DType::String,
    ];

    /// The size of one element in bytes, or `None` for strings.
    pub fn size(self) -> Option<usize> {
        Some(match self {
            DType::Bool | DType::U8 | DType::I8 => 1,
            DType::U16 | DType::I16 | DType::F16 | DType::BF16 => 2,
            DType::U32 | DType::I32 | DType::F32 => 4,
            DType::U64 | DType::I64 | DType::F64 | DType::C64 => 8,
            DType::C128 => 16,
            DType::String => return None,
        })
    }

    /// TensorFlow's name for the dtype (`"float32"`, `"int64"`,
    /// `"string"`, ...).
    pub fn name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::U8 => "uint8",
            DType::I8 => "int8",
            DType::U16 => "uint16",
            DType::I16 => "int16",
            DType::U32 => "uint32",
            DType::I32 => "int32",
            DType::U64 => "uint64",
            DType::I64 => "int64",
            DType::F32 => "float32",
            DType::F64 => "float64",
            DType::F16 => "float16",
            DType::BF16 => "bfloat16",
            DType::C64 => "complex64",
            DType::C128 => "complex128",
            DType::String => "string",
        }
    }

    /// Parses TensorFlow's name for a dtype (also accepts `"float"`,
    /// `"double"`, `"half"`, `"bytes"` and the Rust names such as
    /// `"f32"`).
    pub fn from_name(name: &str) -> Result<DType> {
        let d = match name {
            "bool" => DType::Bool,
            "uint8" | "u8" => DType::U8,
            "int8" | "i8" => DType::I8,
            "uint16" | "u16" => DType::U16,
            "int16" | "i16" => DType::I16,
            "uint32" | "u32" => DType::U32,
            "int32" | "i32" => DType::I32,
            "uint64" | "u64" => DType::U64,
            "int64" | "i64" => DType::I64,
            "float32" | "float" | "f32" => DType::F32,
            "float64" | "double" | "f64" => DType::F64,
            "float16" | "half" | "f16" => DType::F16,
            "bfloat16" | "bf16" => DType::BF16,
            "complex64" => DType::C64,
            "complex128" => DType::C128,
            "string" | "bytes" | "str" => DType::String,
            _ => {
                return Err(Error::invalid_argument(format!(
                    "unknown dtype {name:?}"
                )))
            }
        };
        Ok(d)
    }

    /// True for the integer, floating-point and complex dtypes.
    pub fn is_numeric(self) -> bool {
        !matches!(self, DType::Bool | DType::String)
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A shape's dimensions, kept inline up to rank 4 (an image batch's):
/// every tensor has a shape, and per-record paths make several tensors
/// per record, each shape an allocation and a free when on the heap.
pub(crate) type Dims = SmallVec<[usize; 4]>;

/// The dimensions of a tensor, outermost first. A scalar has rank 0.
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct Shape(Dims);

impl Shape {
    /// A shape with the given dimensions.
    pub fn new(dims: impl Into<Vec<usize>>) -> Shape {
        Shape(Dims::from_vec(dims.into()))
    }

    /// The shape of a scalar.
    pub const fn scalar() -> Shape {
        Shape(Dims::new_const())
    }

    /// The dimensions.
    pub fn dims(&self) -> &[usize] {
        &self.0
    }

    /// The number of dimensions.
    pub fn rank(&self) -> usize {
        self.0.len()
    }

    /// The number of elements: the product of the dimensions (1 for a
    /// scalar), or `usize::MAX` when the product does not fit a `usize`
    /// (it never wraps). Such a shape holds no tensor: everything that
    /// builds a tensor or a spec of a shape checks it with
    /// [`checked_num_elements`](Shape::checked_num_elements).
    pub fn num_elements(&self) -> usize {
        self.checked_product().unwrap_or(usize::MAX)
    }

    /// The number of elements, checked.
    ///
    /// A shape is valid when the product of its nonzero dimensions fits a
    /// `usize`. So every product of some of its dimensions (a row's
    /// element count, a stride) fits too, and code that multiplies the
    /// dimensions of a valid shape cannot overflow. That makes a shape
    /// like `[0, 2^62, 8]` invalid, although it has no elements (where
    /// TensorFlow would accept it).
    ///
    /// # Errors
    /// InvalidArgument when the product of the nonzero dimensions does
    /// not fit a `usize`.
    pub fn checked_num_elements(&self) -> Result<usize> {
        self.checked_product().ok_or_else(|| {
            Error::invalid_argument(format!(
                "shape {self} has too many elements (the product of its \
                 dimensions overflows)"
            ))
        })
    }

    fn checked_product(&self) -> Option<usize> {
        let nonzero = self
            .0
            .iter()
            .filter(|&&d| d != 0)
            .try_fold(1usize, |acc, &d| acc.checked_mul(d))?;
        Some(if self.0.contains(&0) { 0 } else { nonzero })
    }

    /// This shape with `n` prepended, as for a batch of `n`.
    pub fn prepend(&self, n: usize) -> Shape {
        let mut dims = Dims::with_capacity(self.0.len() + 1);
        dims.push(n);
        dims.extend_from_slice(&self.0);
        Shape(dims)
    }

    /// The shape without its first dimension (the shape of one row).
    /// A scalar's row shape is the scalar shape.
    pub fn row(&self) -> Shape {
        Shape(Dims::from_slice(self.0.get(1..).unwrap_or(&[])))
    }
}

impl fmt::Debug for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.0)
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.0)
    }
}

impl From<Vec<usize>> for Shape {
    fn from(v: Vec<usize>) -> Shape {
        Shape(Dims::from_vec(v))
    }
}

impl From<&[usize]> for Shape {
    fn from(v: &[usize]) -> Shape {
        Shape(Dims::from_slice(v))
    }
}

impl<const N: usize> From<[usize; N]> for Shape {
    fn from(v: [usize; N]) -> Shape {
        Shape(Dims::from_slice(&v))
    }
}

impl From<&Shape> for Shape {
    fn from(v: &Shape) -> Shape {
        v.clone()
    }
}

/// The elements of a tensor, one variant per [`DType`].
#[derive(Clone, PartialEq)]
#[allow(missing_docs)]
#[non_exhaustive]
pub enum Data {
    Bool(Vec<bool>),
    U8(Vec<u8>),
    I8(Vec<i8>),
    U16(Vec<u16>),
    I16(Vec<i16>),
    U32(Vec<u32>),
    I32(Vec<i32>),
    U64(Vec<u64>),
    I64(Vec<i64>),
    F32(Vec<f32>),
    F64(Vec<f64>),
    F16(Vec<f16>),
    BF16(Vec<bf16>),
    C64(Vec<Complex32>),
    C128(Vec<Complex64>),
    String(Vec<Bytes>),
}

/// `Some($body)` with `$v` bound to the inner vector of a [`Data`] whose
/// elements are plain bytes (every fixed-size dtype but bool), else `None`.
macro_rules! pod_data {
    ($data:expr, $v:ident => $body:expr) => {
        match $data {
            Data::U8($v) => Some($body),
            Data::I8($v) => Some($body),
            Data::U16($v) => Some($body),
            Data::I16($v) => Some($body),
            Data::U32($v) => Some($body),
            Data::I32($v) => Some($body),
            Data::U64($v) => Some($body),
            Data::I64($v) => Some($body),
            Data::F32($v) => Some($body),
            Data::F64($v) => Some($body),
            Data::F16($v) => Some($body),
            Data::BF16($v) => Some($body),
            Data::C64($v) => Some($body),
            Data::C128($v) => Some($body),
            Data::Bool(_) | Data::String(_) => None,
        }
    };
}

/// Runs `$body` with `$v` bound to the inner vector of a [`Data`], whatever
/// its variant. `$data` may be an owned value or a reference.
macro_rules! with_data {
    ($data:expr, $v:ident => $body:expr) => {
        match $data {
            Data::Bool($v) => $body,
            Data::U8($v) => $body,
            Data::I8($v) => $body,
            Data::U16($v) => $body,
            Data::I16($v) => $body,
            Data::U32($v) => $body,
            Data::I32($v) => $body,
            Data::U64($v) => $body,
            Data::I64($v) => $body,
            Data::F32($v) => $body,
            Data::F64($v) => $body,
            Data::F16($v) => $body,
            Data::BF16($v) => $body,
            Data::C64($v) => $body,
            Data::C128($v) => $body,
            Data::String($v) => $body,
        }
    };
}

/// Like `with_data!`, but rebuilds a `Data` of the same variant from the
/// vector `$body` evaluates to.
macro_rules! map_data {
    ($data:expr, $v:ident => $body:expr) => {
        match $data {
            Data::Bool($v) => Data::Bool($body),
            Data::U8($v) => Data::U8($body),
            Data::I8($v) => Data::I8($body),
            Data::U16($v) => Data::U16($body),
            Data::I16($v) => Data::I16($body),
            Data::U32($v) => Data::U32($body),
            Data::I32($v) => Data::I32($body),
            Data::U64($v) => Data::U64($body),
            Data::I64($v) => Data::I64($body),
            Data::F32($v) => Data::F32($body),
            Data::F64($v) => Data::F64($body),
            Data::F16($v) => Data::F16($body),
            Data::BF16($v) => Data::BF16($body),
            Data::C64($v) => Data::C64($body),
            Data::C128($v) => Data::C128($body),
            Data::String($v) => Data::String($body),
        }
    };
}

impl Data {
    /// The dtype of the elements.
    pub fn dtype(&self) -> DType {
        match self {
            Data::Bool(_) => DType::Bool,
            Data::U8(_) => DType::U8,
            Data::I8(_) => DType::I8,
            Data::U16(_) => DType::U16,
            Data::I16(_) => DType::I16,
            Data::U32(_) => DType::U32,
            Data::I32(_) => DType::I32,
            Data::U64(_) => DType::U64,
            Data::I64(_) => DType::I64,
            Data::F32(_) => DType::F32,
            Data::F64(_) => DType::F64,
            Data::F16(_) => DType::F16,
            Data::BF16(_) => DType::BF16,
            Data::C64(_) => DType::C64,
            Data::C128(_) => DType::C128,
            Data::String(_) => DType::String,
        }
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        with_data!(self, v => v.len())
    }

    /// True when there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes of the elements, in memory order, for every fixed-size
    /// dtype but bool; `None` for bool and strings.
    pub fn pod_bytes(&self) -> Option<&[u8]> {
        pod_data!(self, v => bytemuck::cast_slice(v.as_slice()))
    }

    /// Appends the elements whose in-memory bytes are `bytes` (as
    /// [`Data::pod_bytes`] gives them), which must be aligned for the
    /// dtype and a whole number of elements. Returns false, appending
    /// nothing, when they are not, and for bool and strings.
    pub(crate) fn extend_from_pod_bytes(&mut self, bytes: &[u8]) -> bool {
        pod_data!(self, v => bytemuck::try_cast_slice(bytes)
            .map(|s| v.extend_from_slice(s))
            .is_ok())
        .unwrap_or(false)
    }

    /// Appends the elements `range` of `other`, which must have the same
    /// dtype.
    pub fn extend_from(
        &mut self,
        other: &Data,
        range: std::ops::Range<usize>,
    ) -> Result<()> {
        macro_rules! ext {
            ($($var:ident),*) => {
                match (self, other) {
                    $((Data::$var(a), Data::$var(b)) => {
                        a.extend_from_slice(&b[range])
                    })*
                    (a, b) => {
                        return Err(Error::invalid_argument(format!(
                            "cannot append {} elements to {} elements",
                            b.dtype(),
                            a.dtype()
                        )))
                    }
                }
            };
        }
        ext!(
            Bool, U8, I8, U16, I16, U32, I32, U64, I64, F32, F64, F16, BF16,
            C64, C128, String
        );
        Ok(())
    }

    fn slice_range(&self, range: std::ops::Range<usize>) -> Data {
        map_data!(self, v => v[range].to_vec())
    }
}

mod alloc;
pub use alloc::{oom, try_vec};

mod sealed {
    pub trait Sealed {}
}

/// A Rust type that can be the element of a tensor: `bool`, the integer
/// and float types of [`DType`] (with [`struct@f16`] and [`struct@bf16`] from
/// the `half` crate), [`Complex32`] / [`Complex64`] (`complex64` /
/// `complex128`) from `num-complex`, and [`Bytes`] for strings.
pub trait Element:
    sealed::Sealed + Clone + PartialEq + fmt::Debug + Send + Sync + 'static
{
    /// The dtype of tensors of this element.
    const DTYPE: DType;
    /// Borrows the elements if `data` holds this type.
    fn slice(data: &Data) -> Option<&[Self]>;
    /// Mutably borrows the elements if `data` holds this type.
    fn slice_mut(data: &mut Data) -> Option<&mut [Self]>;
    /// Takes the elements if `data` holds this type.
    fn take(data: Data) -> Option<Vec<Self>>;
    /// Wraps a vector of this type.
    fn wrap(values: Vec<Self>) -> Data;
}

macro_rules! impl_element {
    ($($t:ty => $var:ident),*) => {
        $(
            impl sealed::Sealed for $t {}
            impl Element for $t {
                const DTYPE: DType = DType::$var;
                fn slice(data: &Data) -> Option<&[Self]> {
                    match data {
                        Data::$var(v) => Some(v),
                        _ => None,
                    }
                }
                fn slice_mut(data: &mut Data) -> Option<&mut [Self]> {
                    match data {
                        Data::$var(v) => Some(v),
                        _ => None,
                    }
                }
                fn take(data: Data) -> Option<Vec<Self>> {
                    match data {
                        Data::$var(v) => Some(v),
                        _ => None,
                    }
                }
                fn wrap(values: Vec<Self>) -> Data {
                    Data::$var(values)
                }
            }
        )*
    };
}

impl_element!(
    bool => Bool, u8 => U8, i8 => I8, u16 => U16, i16 => I16, u32 => U32,
    i32 => I32, u64 => U64, i64 => I64, f32 => F32, f64 => F64,
    f16 => F16, bf16 => BF16, Complex32 => C64, Complex64 => C128,
    Bytes => String
);

/// A dense tensor: dtype, shape and row-major elements.
///
/// Equality compares dtype, shape and elements (so, as for floats, a tensor
/// holding NaN is not equal to itself).
#[derive(Clone, PartialEq)]
pub struct Tensor {
    shape: Shape,
    data: Data,
}

impl Tensor {
    /// Gives every byte string of a string tensor an allocation of its
    /// own when it shares one (a record sliced out of a read chunk keeps
    /// the whole chunk alive). Returns how many strings were copied; a
    /// tensor of another dtype is left as it is.
    pub(crate) fn own_strings(&mut self) -> usize {
        let Data::String(strings) = &mut self.data else {
            return 0;
        };
        let mut copied = 0;
        for b in strings.iter_mut().filter(|b| !b.is_unique()) {
            *b = Bytes::copy_from_slice(b);
            copied += 1;
        }
        copied
    }

    /// A marker left where a tensor was moved out of a slot that is never
    /// read again; it allocates nothing. It breaks the shape/element-count
    /// invariant (a scalar with no element), so it must never escape the
    /// crate or be read. Public only for the TF1 crate's evaluator,
    /// which moves values out of its slots the same way.
    #[doc(hidden)]
    pub const fn hollow() -> Tensor {
        Tensor {
            shape: Shape::scalar(),
            data: Data::Bool(Vec::new()),
        }
    }

    /// A tensor of `shape` holding `values` in row-major order.
    ///
    /// # Errors
    /// InvalidArgument when the number of values is not the number of
    /// elements of `shape`, or that number overflows.
    pub fn new<T: Element>(
        shape: impl Into<Shape>,
        values: Vec<T>,
    ) -> Result<Tensor> {
        Tensor::from_data(shape, T::wrap(values))
    }

    /// A tensor of `shape` holding `data`.
    ///
    /// # Errors
    /// InvalidArgument when the number of elements does not match `shape`,
    /// or `shape`'s element count overflows.
    pub fn from_data(shape: impl Into<Shape>, data: Data) -> Result<Tensor> {
        let shape = shape.into();
        let n = shape.checked_num_elements()?;
        if n != data.len() {
            return Err(Error::invalid_argument(format!(
                "shape {shape} needs {n} elements, got {}",
                data.len()
            )));
        }
        Ok(Tensor { shape, data })
    }

    /// A scalar (rank 0) tensor.
    pub fn scalar<T: Element>(value: T) -> Tensor {
        Tensor {
            shape: Shape::scalar(),
            data: T::wrap(vec![value]),
        }
    }

    /// A rank-1 tensor holding `values`.
    pub fn vector<T: Element>(values: Vec<T>) -> Tensor {
        Tensor {
            shape: Shape::from([values.len()]),
            data: T::wrap(values),
        }
    }

    /// A scalar string tensor.
    pub fn string(value: impl Into<Bytes>) -> Tensor {
        Tensor::scalar(value.into())
    }

    /// The dtype.
    pub fn dtype(&self) -> DType {
        self.data.dtype()
    }

    /// The shape.
    pub fn shape(&self) -> &Shape {
        &self.shape
    }

    /// The dimensions (shorthand for `shape().dims()`).
    pub fn dims(&self) -> &[usize] {
        self.shape.dims()
    }

    /// The rank (number of dimensions).
    pub fn rank(&self) -> usize {
        self.shape.rank()
    }

    /// The number of elements.
    pub fn num_elements(&self) -> usize {
        self.data.len()
    }

    /// The elements.
    pub fn data(&self) -> &Data {
        &self.data
    }

    /// Takes the elements.
    pub fn into_data(self) -> Data {
        self.data
    }

    /// Borrows the elements as `&[T]`.
    ///
    /// # Errors
    /// InvalidArgument when `T` is not the tensor's dtype.
    pub fn as_slice<T: Element>(&self) -> Result<&[T]> {
        T::slice(&self.data).ok_or_else(|| self.dtype_error(T::DTYPE))
    }

    /// Mutably borrows the elements as `&mut [T]`.
    ///
    /// # Errors
    /// InvalidArgument when `T` is not the tensor's dtype.
    pub fn as_mut_slice<T: Element>(&mut self) -> Result<&mut [T]> {
        let dtype = self.dtype();
        T::slice_mut(&mut self.data).ok_or_else(|| {
            Error::invalid_argument(format!(
                "tensor has dtype {dtype}, not {}",
                T::DTYPE
            ))
        })
    }

    /// Takes the elements as a `Vec<T>`.
    ///
    /// # Errors
    /// InvalidArgument when `T` is not the tensor's dtype.
    pub fn into_vec<T: Element>(self) -> Result<Vec<T>> {
        let err = self.dtype_error(T::DTYPE);
        T::take(self.data).ok_or(err)
    }

    /// The single element of a one-element tensor (a scalar, or any shape
    /// with one element).
    ///
    /// # Errors
    /// InvalidArgument for a wrong dtype or more or fewer than one element.
    pub fn scalar_value<T: Element>(&self) -> Result<T> {
        match self.as_slice::<T>()? {
            [v] => Ok(v.clone()),
            s => Err(Error::invalid_argument(format!(
                "expected one element, tensor of shape {} has {}",
                self.shape,
                s.len()
            ))),
        }
    }

    fn dtype_error(&self, wanted: DType) -> Error {
        Error::invalid_argument(format!(
            "tensor has dtype {}, not {wanted}",
            self.dtype()
        ))
    }

    /// The same elements with a new shape.
    ///
    /// # Errors
    /// InvalidArgument when the element counts differ or `shape`'s
    /// overflows.
    pub fn reshape(self, shape: impl Into<Shape>) -> Result<Tensor> {
        let shape = shape.into();
        if shape.checked_num_elements()? != self.num_elements() {
            return Err(Error::invalid_argument(format!(
                "cannot reshape {} elements of shape {} to {shape}",
                self.num_elements(),
                self.shape
            )));
        }
        Ok(Tensor {
            shape,
            data: self.data,
        })
    }

    /// The number of elements in one row along axis 0 (1 for a scalar).
    fn row_len(&self) -> usize {
        self.shape.row().num_elements()
    }

    fn first_dim(&self) -> Result<usize> {
        self.shape.dims().first().copied().ok_or_else(|| {
            Error::invalid_argument("a scalar has no axis 0 to index")
        })
    }

    /// Rows `start..end` along axis 0.
    ///
    /// # Errors
    /// InvalidArgument for a scalar or a range outside the tensor.
    pub fn slice(&self, start: usize, end: usize) -> Result<Tensor> {
        let n = self.first_dim()?;
        if start > end || end > n {
            return Err(Error::invalid_argument(format!(
                "rows {start}..{end} out of range for shape {}",
                self.shape
            )));
        }
        let r = self.row_len();
        let mut dims = self.shape.0.clone();
        dims[0] = end - start;
        Ok(Tensor {
            shape: Shape(dims),
            data: self.data.slice_range(start * r..end * r),
        })
    }

    /// Row `i` along axis 0, with the axis removed.
    ///
    /// # Errors
    /// InvalidArgument for a scalar or an index outside the tensor.
    pub fn index(&self, i: usize) -> Result<Tensor> {
        let row = self.slice(i, i + 1)?;
        Ok(Tensor {
            shape: self.shape.row(),
            data: row.data,
        })
    }

    /// Splits along axis 0 into its rows, each without that axis. A scalar
    /// yields itself.
    pub fn unstack(&self) -> Vec<Tensor> {
        let Ok(n) = self.first_dim() else {
            return vec![self.clone()];
        };
        let r = self.row_len();
        let shape = self.shape.row();
        (0..n)
            .map(|i| Tensor {
                shape: shape.clone(),
                data: self.data.slice_range(i * r..(i + 1) * r),
            })
            .collect()
    }

    /// Splits along axis 0 into consecutive pieces of `sizes` rows.
    ///
    /// # Errors
    /// InvalidArgument when the sizes do not add up to the first dimension.
    pub fn split(&self, sizes: &[usize]) -> Result<Vec<Tensor>> {
        let n = self.first_dim()?;
        if sizes.iter().sum::<usize>() != n {
            return Err(Error::invalid_argument(format!(
                "split sizes {sizes:?} do not add up to {n} rows"
            )));
        }
        let mut start = 0;
        sizes
            .iter()
            .map(|&s| {
                let t = self.slice(start, start + s);
                start += s;
                t
            })
            .collect()
    }

    /// Stacks tensors of one dtype and shape along a new axis 0.
    ///
    /// # Errors
    /// InvalidArgument for an empty list or mismatched dtypes or shapes;
    /// the message names the first offending position.
    pub fn stack(tensors: &[Tensor]) -> Result<Tensor> {
        let first = tensors.first().ok_or_else(|| {
            Error::invalid_argument("cannot stack an empty list of tensors")
        })?;
        for (i, t) in tensors.iter().enumerate().skip(1) {
            if t.shape != first.shape || t.dtype() != first.dtype() {
                return Err(Error::invalid_argument(format!(
                    "cannot stack tensor {i} ({} {}) onto {} {}",
                    t.dtype(),
                    t.shape,
                    first.dtype(),
                    first.shape
                )));
            }
        }
        let shape = first.shape.prepend(tensors.len());
        let data = concat_data(tensors, &shape)?;
        Ok(Tensor { shape, data })
    }

    /// Concatenates tensors along their existing axis 0. All must share the
    /// dtype and every dimension but the first.
    ///
    /// # Errors
    /// InvalidArgument for an empty list, scalars, or mismatched dtypes or
    /// row shapes.
    pub fn concat(tensors: &[Tensor]) -> Result<Tensor> {
        let first = tensors.first().ok_or_else(|| {
            Error::invalid_argument("cannot concat an empty list of tensors")
        })?;
        first.first_dim()?;
        let row = first.shape.row();
        let mut n = 0;
        for (i, t) in tensors.iter().enumerate() {
            let d = t.first_dim()?;
            if t.shape.row() != row || t.dtype() != first.dtype() {
                return Err(Error::invalid_argument(format!(
                    "cannot concat tensor {i} ({} {}) onto {} {}",
                    t.dtype(),
                    t.shape,
                    first.dtype(),
                    first.shape
                )));
            }
            n += d;
        }
        let shape = row.prepend(n);
        let data = concat_data(tensors, &shape)?;
        Ok(Tensor { shape, data })
    }

    /// Converts every element to `dtype`, as TensorFlow's `cast` does
    /// (`core/kernels/cast_op.h`): floats to integers truncate toward
    /// zero (out of the integer's range, as TensorFlow's cast gives on
    /// x86-64: see `float_to_int`), numbers to bool are `x != 0`, bool to
    /// numbers is 0 or 1. A complex number cast to a real dtype (or bool)
    /// keeps its real part, and a real number cast to complex gets a zero
    /// imaginary part, as numpy does. `float16` and `bfloat16` convert through
    /// `float32`, rounding to nearest even, as Eigen's conversions do (so
    /// a `float64` is rounded to `float32` first).
    ///
    /// # Errors
    /// Unimplemented, naming both dtypes, when either side is a string
    /// (use `decode::raw::string_to_number` to parse strings).
    pub fn cast(&self, dtype: DType) -> Result<Tensor> {
        if self.dtype() == dtype {
            return Ok(self.clone());
        }
        let data = cast_data(&self.data, dtype).ok_or_else(|| {
            Error::unimplemented(format!(
                "cannot cast {} to {dtype}",
                self.dtype()
            ))
        })?;
        Ok(Tensor {
            shape: self.shape.clone(),
            data,
        })
    }
}

/// `data` converted to `dtype`, or `None` when either is a string.
fn cast_data(data: &Data, dtype: DType) -> Option<Data> {
    if data.dtype() == dtype {
        return Some(data.clone());
    }
    let f32s = |v: Vec<f32>| cast_data(&Data::F32(v), dtype);
    match data {
        Data::String(_) => return None,
        Data::F16(v) if is_integer(dtype) => {
            return float_to_int(
                v.iter().map(|x| x.to_f64()),
                Vector::Half,
                dtype,
            )
        }
        Data::BF16(v) if is_integer(dtype) => {
            return float_to_int(
                v.iter().map(|x| x.to_f64()),
                Vector::Half,
                dtype,
            )
        }
        Data::F16(v) => return f32s(v.iter().map(|x| x.to_f32()).collect()),
        Data::BF16(v) => return f32s(v.iter().map(|x| x.to_f32()).collect()),
        Data::C64(v) => {
            return match dtype {
                DType::C128 => Some(Data::C128(
                    v.iter()
                        .map(|c| Complex64::new(c.re.into(), c.im.into()))
                        .collect(),
                )),
                _ => f32s(v.iter().map(|c| c.re).collect()),
            }
        }
        Data::C128(v) => {
            return match dtype {
                DType::C64 => Some(Data::C64(
                    v.iter()
                        .map(|c| Complex32::new(c.re as f32, c.im as f32))
                        .collect(),
                )),
                _ => cast_data(
                    &Data::F64(v.iter().map(|c| c.re).collect()),
                    dtype,
                ),
            }
        }
        _ => {}
    }
    // `data` is bool or a primitive number from here on.
    let via = |through: DType| cast_primitive(data, through);
    Some(match dtype {
        DType::F16 => match via(DType::F32)? {
            Data::F32(v) => {
                Data::F16(v.into_iter().map(f16::from_f32).collect())
            }
            _ => return None,
        },
        DType::BF16 => match via(DType::F32)? {
            Data::F32(v) => {
                Data::BF16(v.into_iter().map(bf16::from_f32).collect())
            }
            _ => return None,
        },
        DType::C64 => match via(DType::F32)? {
            Data::F32(v) => Data::C64(
                v.into_iter().map(|x| Complex32::new(x, 0.0)).collect(),
            ),
            _ => return None,
        },
        DType::C128 => match via(DType::F64)? {
            Data::F64(v) => Data::C128(
                v.into_iter().map(|x| Complex64::new(x, 0.0)).collect(),
            ),
            _ => return None,
        },
        other => cast_primitive(data, other)?,
    })
}

/// `data`, bool or a primitive number, converted to bool or a primitive
/// number type; `None` for anything else.
fn cast_primitive(data: &Data, dtype: DType) -> Option<Data> {
    match data {
        Data::Bool(v) => {
            let as_u8: Vec<u8> = v.iter().map(|&b| b as u8).collect();
            cast_slice(&as_u8, dtype)
        }
        Data::U8(v) => cast_slice(v, dtype),
        Data::I8(v) => cast_slice(v, dtype),
        Data::U16(v) => cast_slice(v, dtype),
        Data::I16(v) => cast_slice(v, dtype),
        Data::U32(v) => cast_slice(v, dtype),
        Data::I32(v) => cast_slice(v, dtype),
        Data::U64(v) => cast_slice(v, dtype),
        Data::I64(v) => cast_slice(v, dtype),
        Data::F32(v) if is_integer(dtype) => float_to_int(
            v.iter().map(|&x| f64::from(x)),
            Vector::Single,
            dtype,
        ),
        Data::F64(v) if is_integer(dtype) => {
            float_to_int(v.iter().copied(), Vector::Double, dtype)
        }
        Data::F32(v) => cast_slice(v, dtype),
        Data::F64(v) => cast_slice(v, dtype),
        _ => None,
    }
}

fn is_integer(dtype: DType) -> bool {
    matches!(
        dtype,
        DType::U8
            | DType::I8
            | DType::U16
            | DType::I16
            | DType::U32
            | DType::I32
            | DType::U64
            | DType::I64
    )
}

/// The float type a cast converts from, which sets how many values
/// TensorFlow's vectorized cast converts at once.
#[derive(Clone, Copy)]
enum Vector {
    /// `float16` or `bfloat16`.
    Half,
    /// `float32`.
    Single,
    /// `float64`.
    Double,
}

/// Floats converted to the integer `dtype` as TensorFlow's CPU kernel
/// converts them on x86-64 (Eigen's cast, C++ conversions out of range
/// included): truncated toward zero by the processor's 32- or 64-bit
/// conversion, which gives the lowest integer for NaN and for a value
/// out of its range. TensorFlow converts a tensor's values in vectors
/// and the last few that fill no vector one by one, and the two paths
/// differ out of range: vectors saturate the 32-bit result into a
/// narrower type (1e10 or -1.5 to `uint8` is 0, 300 is 255) where one by
/// one it wraps (300 is 44, -1.5 is 255); to `uint32`, a vector gives
/// `2^31` beyond the range where one by one it takes the low bits of the
/// 64-bit conversion; vectors from `float64` or `float16` to `uint8` go
/// through `uint16` and give 0 from 2^15 up. Observed widths: 32 values
/// from `float32` and 16 from `float64` or `float16` into 8- and 16-bit
/// types, 8 into `uint32`; other types convert alike on both paths.
fn float_to_int(
    v: impl ExactSizeIterator<Item = f64>,
    from: Vector,
    dtype: DType,
) -> Option<Data> {
    const TWO_31: f64 = 2_147_483_648.0;
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    // The processor's conversions (`cvttsd2si`).
    let i32_of = |x: f64| {
        if x > -TWO_31 - 1.0 && x < TWO_31 {
            x as i32
        } else {
            i32::MIN
        }
    };
    let i64_of = |x: f64| {
        if (-TWO_63..TWO_63).contains(&x) {
            x as i64
        } else {
            i64::MIN
        }
    };
    let width = match (dtype, from) {
        (DType::U8 | DType::I8 | DType::U16 | DType::I16, Vector::Single) => {
            32
        }
        (DType::U8 | DType::I8 | DType::U16 | DType::I16, _) => 16,
        _ => 8,
    };
    let n = v.len();
    let vectorized = n - n % width;
    // Each value with whether it is converted in a vector.
    let v = v.enumerate().map(move |(i, x)| (x, i < vectorized));
    // Into a narrower type: saturated in a vector, wrapped one by one.
    fn narrow<T>(x: i32, in_vector: bool) -> T
    where
        T: TryFrom<i64> + num_traits::Bounded + Copy + 'static,
        i32: AsPrimitive<T>,
    {
        if in_vector {
            saturate(i64::from(x))
        } else {
            x.as_()
        }
    }
    Some(match dtype {
        DType::I32 => Data::I32(v.map(|(x, _)| i32_of(x)).collect()),
        DType::I64 => Data::I64(v.map(|(x, _)| i64_of(x)).collect()),
        DType::U32 => Data::U32(
            v.map(|(x, in_vector)| {
                if (TWO_31..2.0 * TWO_31).contains(&x) {
                    x as u32
                } else if in_vector {
                    i32_of(x) as u32
                } else {
                    i64_of(x) as u32
                }
            })
            .collect(),
        ),
        DType::U64 => Data::U64(
            v.map(|(x, _)| {
                if (TWO_63..2.0 * TWO_63).contains(&x) {
                    x as u64
                } else {
                    i64_of(x) as u64
                }
            })
            .collect(),
        ),
        // From `float64` and `float16`, vectors narrow through `uint16`,
        // whose values from 2^15 read as negative `int16`s: 0.
        DType::U8 if !matches!(from, Vector::Single) => Data::U8(
            v.map(|(x, at)| {
                let x = i32_of(x);
                if at && x >= 1 << 15 {
                    0
                } else {
                    narrow(x, at)
                }
            })
            .collect(),
        ),
        DType::U8 => {
            Data::U8(v.map(|(x, at)| narrow(i32_of(x), at)).collect())
        }
        DType::I8 => {
            Data::I8(v.map(|(x, at)| narrow(i32_of(x), at)).collect())
        }
        DType::U16 => {
            Data::U16(v.map(|(x, at)| narrow(i32_of(x), at)).collect())
        }
        DType::I16 => {
            Data::I16(v.map(|(x, at)| narrow(i32_of(x), at)).collect())
        }
        _ => return None,
    })
}

/// `x` clamped into `T`'s range.
fn saturate<T: TryFrom<i64> + num_traits::Bounded>(x: i64) -> T {
    T::try_from(x).unwrap_or_else(|_| {
        if x < 0 {
            T::min_value()
        } else {
            T::max_value()
        }
    })
}

fn concat_data(tensors: &[Tensor], shape: &Shape) -> Result<Data> {
    let mut data =
        Data::try_with_capacity_as(tensors[0].dtype(), shape.dims())?;
    for t in tensors {
        data.extend_from(&t.data, 0..t.data.len())?;
    }
    Ok(data)
}

/// A number that can be cast to every numeric dtype (`as` semantics) and
/// tested against zero.
trait CastSource:
    Copy
    + AsPrimitive<u8>
    + AsPrimitive<i8>
    + AsPrimitive<u16>
    + AsPrimitive<i16>
    + AsPrimitive<u32>
    + AsPrimitive<i32>
    + AsPrimitive<u64>
    + AsPrimitive<i64>
    + AsPrimitive<f32>
    + AsPrimitive<f64>
{
}

impl<T> CastSource for T where
    T: Copy
        + AsPrimitive<u8>
        + AsPrimitive<i8>
        + AsPrimitive<u16>
        + AsPrimitive<i16>
        + AsPrimitive<u32>
        + AsPrimitive<i32>
        + AsPrimitive<u64>
        + AsPrimitive<i64>
        + AsPrimitive<f32>
        + AsPrimitive<f64>
{
}

fn cast_slice<S: CastSource>(v: &[S], dtype: DType) -> Option<Data> {
    fn conv<S: AsPrimitive<T>, T: Copy + 'static>(v: &[S]) -> Vec<T> {
        v.iter().map(|x| x.as_()).collect()
    }
    Some(match dtype {
        DType::Bool => Data::Bool(
            v.iter()
                .map(|x| AsPrimitive::<f64>::as_(*x) != 0.0)
                .collect(),
        ),
        DType::U8 => Data::U8(conv(v)),
        DType::I8 => Data::I8(conv(v)),
        DType::U16 => Data::U16(conv(v)),
        DType::I16 => Data::I16(conv(v)),
        DType::U32 => Data::U32(conv(v)),
        DType::I32 => Data::I32(conv(v)),
        DType::U64 => Data::U64(conv(v)),
        DType::I64 => Data::I64(conv(v)),
        DType::F32 => Data::F32(conv(v)),
        DType::F64 => Data::F64(conv(v)),
        _ => return None,
    })
}

/// How many elements Debug output shows before eliding the rest.
const DEBUG_ELEMENTS: usize = 64;

impl fmt::Debug for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Tensor<{}; {}> ", self.dtype(), self.shape)?;
        fmt_elements(&self.data, f)
    }
}

impl fmt::Debug for Data {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.dtype())?;
        fmt_elements(self, f)
    }
}

fn fmt_elements(data: &Data, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let n = data.len();
    let mut list = f.debug_list();
    match data {
        Data::String(v) => {
            for s in v.iter().take(DEBUG_ELEMENTS) {
                list.entry(&String::from_utf8_lossy(s));
            }
        }
        other => with_data!(other, v => {
            for x in v.iter().take(DEBUG_ELEMENTS) {
                list.entry(x);
            }
        }),
    }
    if n > DEBUG_ELEMENTS {
        list.entry(&format_args!("... {} more", n - DEBUG_ELEMENTS));
    }
    list.finish()
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_checks_element_count() {
        let err = Tensor::new([2, 2], vec![1i64, 2, 3]).unwrap_err();
        assert_eq!(err.kind(), crate::Kind::InvalidArgument);
        assert!(err.to_string().contains("needs 4 elements, got 3"));
    }

    #[test]
    fn typed_access_checks_dtype() {
        let t = Tensor::vector(vec![1.5f32, 2.5]);
        assert_eq!(t.as_slice::<f32>().unwrap(), &[1.5, 2.5]);
        let err = t.as_slice::<i64>().unwrap_err();
        assert!(err.to_string().contains("float32, not int64"));
    }

    #[test]
    fn reshape_keeps_elements() {
        let t = Tensor::vector((0..6).collect::<Vec<i32>>());
        let r = t.clone().reshape([3, 2]).unwrap();
        assert_eq!(r.dims(), &[3, 2]);
        assert_eq!(r.index(2).unwrap().as_slice::<i32>().unwrap(), &[4, 5]);
        assert!(t.reshape([4]).is_err());
    }

    #[test]
    fn slice_split_stack_concat_round_trip() {
        let t = Tensor::new([4, 2], (0..8).collect::<Vec<i64>>()).unwrap();
        let parts = t.split(&[1, 3]).unwrap();
        assert_eq!(parts[0].dims(), &[1, 2]);
        assert_eq!(parts[1].dims(), &[3, 2]);
        assert_eq!(Tensor::concat(&parts).unwrap(), t);
        assert_eq!(Tensor::stack(&t.unstack()).unwrap(), t);
        assert_eq!(
            t.slice(1, 3).unwrap().as_slice::<i64>().unwrap(),
            &[2, 3, 4, 5]
        );
        assert!(t.slice(3, 5).is_err());
        assert!(t.split(&[1, 1]).is_err());
    }

    #[test]
    fn stack_rejects_mismatched_shapes() {
        let a = Tensor::vector(vec![1u8, 2]);
        let b = Tensor::vector(vec![1u8, 2, 3]);
        let err = Tensor::stack(&[a, b]).unwrap_err();
        assert!(err.to_string().contains("tensor 1"), "{err}");
    }

    #[test]
    fn strings_stack_without_copying_payload() {
        let buf = Bytes::from_static(b"hello world");
        let a = Tensor::string(buf.slice(0..5));
        let b = Tensor::string(buf.slice(6..));
        let s = Tensor::stack(&[a, b]).unwrap();
        let v = s.as_slice::<Bytes>().unwrap();
        assert_eq!(v[1], "world");
        assert_eq!(v[0].as_ptr(), buf.as_ptr());
    }

    #[test]
    fn sparse_order_checked_as_tensorflow() {
        let sp = |idx: Vec<i64>| {
            SparseTensor::new_unvalidated(
                Tensor::new([2, 2], idx).unwrap(),
                Tensor::vector(vec![5i32, 6]),
                [3, 2],
            )
            .unwrap()
        };
        assert!(sp(vec![0, 1, 2, 0]).validate_order().is_ok());
        let e = sp(vec![2, 0, 0, 1]).validate_order().unwrap_err();
        assert!(e.message().contains("indices[1] = [0,1] is out of order"));
        let e = sp(vec![0, 1, 0, 1]).validate_order().unwrap_err();
        assert!(e.message().contains("indices[1] = [0,1] is repeated"));
        let e = sp(vec![0, 1, 5, 1]).validate_order().unwrap_err();
        assert!(e.message().contains("need 0 <= index < [3,2]"), "{e}");
    }

    #[test]
    fn cast_follows_tensorflow() {
        let f = Tensor::vector(vec![-1.7f32, 0.0, 2.9, f32::NAN, 3e9]);
        // NaN and values out of range: x86's "integer indefinite".
        assert_eq!(
            f.cast(DType::I32).unwrap().as_slice::<i32>().unwrap(),
            &[-1, 0, 2, i32::MIN, i32::MIN]
        );
        // Five values fill no vector: TensorFlow converts them one by one.
        assert_eq!(
            f.cast(DType::U32).unwrap().as_slice::<u32>().unwrap(),
            &[u32::MAX, 0, 2, 0, 3_000_000_000]
        );
        assert_eq!(
            f.cast(DType::U8).unwrap().as_slice::<u8>().unwrap(),
            &[255, 0, 2, 0, 0]
        );
        // 8 values to uint32 are one vector: NaN is 2^31 there.
        let eight = Tensor::vector(vec![f32::NAN; 8]);
        let got = eight.cast(DType::U32).unwrap();
        assert_eq!(got.as_slice::<u32>().unwrap(), &[1 << 31; 8]);
        assert_eq!(
            f.cast(DType::Bool).unwrap().as_slice::<bool>().unwrap(),
            &[true, false, true, true, true]
        );
        let b = Tensor::vector(vec![true, false]);
        assert_eq!(
            b.cast(DType::F64).unwrap().as_slice::<f64>().unwrap(),
            &[1.0, 0.0]
        );
        let u = Tensor::vector(vec![255u8]);
        assert_eq!(
            u.cast(DType::F32).unwrap().as_slice::<f32>().unwrap(),
            &[255.0]
        );
        let s = Tensor::string("1");
        assert_eq!(
            s.cast(DType::I32).unwrap_err().kind(),
            crate::Kind::Unimplemented
        );
    }

    #[test]
    fn debug_is_readable() {
        let t = Tensor::new([2], vec![1i64, 2]).unwrap();
        assert_eq!(format!("{t:?}"), "Tensor<int64; [2]> [1, 2]");
        let s = Tensor::vector(vec![Bytes::from("a")]);
        assert_eq!(format!("{s:?}"), "Tensor<string; [1]> [\"a\"]");
    }

    #[test]
    fn sparse_to_dense_and_validation() {
        let sp = SparseTensor::new(
            Tensor::new([2, 2], vec![0i64, 1, 1, 0]).unwrap(),
            Tensor::vector(vec![5i64, 7]),
            vec![2, 2],
        )
        .unwrap();
        let d = sp.to_dense(&Tensor::scalar(0i64)).unwrap();
        assert_eq!(d.as_slice::<i64>().unwrap(), &[0, 5, 7, 0]);
        let bad = SparseTensor::new(
            Tensor::new([1, 2], vec![0i64, 2]).unwrap(),
            Tensor::vector(vec![1i64]),
            vec![2, 2],
        );
        assert!(bad.unwrap_err().to_string().contains("outside"));
    }

    #[test]
    fn sparse_stack_and_unstack() {
        let a = SparseTensor::from_dense_vector(Tensor::vector(vec![1i64, 2]))
            .unwrap();
        let b = SparseTensor::from_dense_vector(Tensor::vector(vec![3i64]))
            .unwrap();
        let e =
            SparseTensor::from_dense_vector(Tensor::vector(Vec::<i64>::new()))
                .unwrap();
        let batch =
            SparseTensor::stack(&[a.clone(), e.clone(), b.clone()]).unwrap();
        assert_eq!(batch.dims(), &[3, 2]);
        assert_eq!(
            batch.indices().as_slice::<i64>().unwrap(),
            &[0, 0, 0, 1, 2, 0]
        );
        let parts = batch.unstack().unwrap();
        assert_eq!(parts[0].values(), a.values());
        assert_eq!(parts[1].nnz(), 0);
        assert_eq!(parts[2].values(), b.values());
        assert_eq!(parts[2].dims(), &[2]);
    }
}
