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
mod cast;
mod sparse;
mod value;
pub use alloc::{oom, try_vec};
use cast::{cast_data, concat_data};
pub use sparse::SparseTensor;
pub use value::Value;

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
