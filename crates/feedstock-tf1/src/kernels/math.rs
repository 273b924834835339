//! Elementwise arithmetic with NumPy-style broadcasting: the `x / 255.0`
//! and `image - mean` a pipeline applies after decoding.
//!
//! Both operands must have the same dtype (as in TensorFlow, which never
//! promotes); shapes broadcast as in NumPy: dimensions are aligned from the
//! right and each pair must be equal or contain a 1.
//!
//! ```
//! use feedstock_tf1::kernels::math::{add, div, BinaryOp, binary};
//! use feedstock::Tensor;
//!
//! let x = Tensor::new([2, 2], vec![1.0f32, 2.0, 3.0, 4.0])?;
//! let half = div(&x, &Tensor::scalar(2.0f32))?;
//! assert_eq!(half.as_slice::<f32>()?, &[0.5, 1.0, 1.5, 2.0]);
//! let row = Tensor::vector(vec![10.0f32, 20.0]);
//! let sum = add(&x, &row)?;
//! assert_eq!(sum.as_slice::<f32>()?, &[11.0, 22.0, 13.0, 24.0]);
//! let m = binary(BinaryOp::Maximum, &x, &Tensor::scalar(2.5f32))?;
//! assert_eq!(m.as_slice::<f32>()?, &[2.5, 2.5, 3.0, 4.0]);
//! # Ok::<(), feedstock::Error>(())
//! ```

use bytes::Bytes;

use feedstock::error::{Error, Result};
use feedstock::tensor::{bf16, f16, DType, Data, Element, Tensor};

/// An elementwise binary operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BinaryOp {
    /// `a + b` (wrapping for integers, as TensorFlow's kernels).
    Add,
    /// `a - b` (wrapping for integers).
    Sub,
    /// `a * b` (wrapping for integers).
    Mul,
    /// `a / b`: IEEE division for floats; for integers, division rounding
    /// toward zero, and InvalidArgument on division by zero (TensorFlow's
    /// `Div` kernel).
    Div,
    /// The larger of `a` and `b` (NaN if either is NaN, as TensorFlow).
    Maximum,
    /// The smaller of `a` and `b` (NaN if either is NaN, as TensorFlow).
    Minimum,
    /// `a // b`, rounding toward negative infinity: `floor(a / b)` for
    /// floats; for integers, InvalidArgument on division by zero
    /// (TensorFlow's `FloorDiv`, Python's `//`).
    FloorDiv,
    /// The remainder of [`BinaryOp::FloorDiv`], with the sign of `b`
    /// (TensorFlow's `FloorMod`, Python's `%`); for integers,
    /// InvalidArgument on division by zero.
    FloorMod,
    /// `a` to the power `b` (TensorFlow's `Pow`): the platform's `pow` for
    /// floats, within a few ulp of TensorFlow's Eigen `pow`; for integers,
    /// wrapping repeated multiplication, and InvalidArgument for a
    /// negative exponent, as TensorFlow's kernel.
    Pow,
}

impl BinaryOp {
    /// The operation's TensorFlow name, used in errors.
    pub fn name(self) -> &'static str {
        match self {
            BinaryOp::Add => "add",
            BinaryOp::Sub => "sub",
            BinaryOp::Mul => "mul",
            BinaryOp::Div => "div",
            BinaryOp::Maximum => "maximum",
            BinaryOp::Minimum => "minimum",
            BinaryOp::FloorDiv => "floordiv",
            BinaryOp::FloorMod => "floormod",
            BinaryOp::Pow => "pow",
        }
    }
}

/// The shape two shapes broadcast to, NumPy's rules.
///
/// # Errors
/// InvalidArgument when a pair of aligned dimensions differ and neither
/// is 1.
pub fn broadcast_shape(a: &[usize], b: &[usize]) -> Result<Vec<usize>> {
    let rank = a.len().max(b.len());
    let mut out = vec![0; rank];
    for (k, o) in out.iter_mut().enumerate() {
        let da = dim_from_right(a, rank - 1 - k);
        let db = dim_from_right(b, rank - 1 - k);
        *o = match (da, db) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            (x, y) => {
                return Err(Error::invalid_argument(format!(
                    "incompatible shapes {a:?} and {b:?}: dimension {x} \
                     does not broadcast with {y}"
                )))
            }
        };
    }
    Ok(out)
}

/// Dimension `k` counted from the right (0 = last), 1 when absent.
fn dim_from_right(dims: &[usize], k: usize) -> usize {
    if k < dims.len() {
        dims[dims.len() - 1 - k]
    } else {
        1
    }
}

/// Strides of `dims` aligned to `rank` dimensions, 0 where the dimension
/// is broadcast (absent or 1).
fn broadcast_strides(dims: &[usize], out: &[usize]) -> Vec<usize> {
    let rank = out.len();
    let mut strides = vec![0; rank];
    let mut s = 1;
    for k in 0..dims.len() {
        let d = dims[dims.len() - 1 - k];
        let pos = rank - 1 - k;
        strides[pos] = if d == 1 && out[pos] != 1 { 0 } else { s };
        s *= d;
    }
    strides
}

/// Applies `f` to every pair of broadcast elements.
///
/// `f` is one operation chosen before the loop (see [`binary`]), so that
/// the loops of the common cases (equal shapes, a scalar on either side)
/// compile to straight vector code.
///
/// # Errors
/// ResourceExhausted when memory cannot hold the broadcast output (which
/// can be far larger than both operands).
pub(crate) fn zip_broadcast<T: Copy, U: Element>(
    a: &[T],
    a_dims: &[usize],
    b: &[T],
    b_dims: &[usize],
    out_dims: &[usize],
    f: impl Fn(T, T) -> U,
) -> Result<Vec<U>> {
    let total: usize = out_dims.iter().product();
    // The cases a pipeline meets almost always: equal shapes, or a scalar
    // on either side; no index arithmetic per element.
    if a.len() == total && b.len() == total {
        return Ok(a.iter().zip(b).map(|(&x, &y)| f(x, y)).collect());
    }
    if b.len() == 1 && a.len() == total {
        let y = b[0];
        return Ok(a.iter().map(|&x| f(x, y)).collect());
    }
    if a.len() == 1 && b.len() == total {
        let x = a[0];
        return Ok(b.iter().map(|&y| f(x, y)).collect());
    }
    let mut out = feedstock::tensor::try_vec::<U>(out_dims)?;
    if total == 0 {
        return Ok(out);
    }
    let sa = broadcast_strides(a_dims, out_dims);
    let sb = broadcast_strides(b_dims, out_dims);
    let rank = out_dims.len();
    let mut index = vec![0usize; rank];
    let (mut ia, mut ib) = (0usize, 0usize);
    for _ in 0..total {
        out.push(f(a[ia], b[ib]));
        for k in (0..rank).rev() {
            index[k] += 1;
            ia += sa[k];
            ib += sb[k];
            if index[k] < out_dims[k] {
                break;
            }
            ia -= sa[k] * out_dims[k];
            ib -= sb[k] * out_dims[k];
            index[k] = 0;
        }
    }
    Ok(out)
}

/// The elementwise arithmetic of one numeric dtype, as TensorFlow's
/// kernels do it: wrapping for integers, IEEE for floats, NaN winning
/// `maximum` and `minimum`.
trait Arith: Copy + PartialEq + PartialOrd {
    fn add(x: Self, y: Self) -> Self;
    fn sub(x: Self, y: Self) -> Self;
    fn mul(x: Self, y: Self) -> Self;
    /// Called only once [`Arith::check_divisors`] passed.
    fn div(x: Self, y: Self) -> Self;
    fn max(x: Self, y: Self) -> Self;
    fn min(x: Self, y: Self) -> Self;
    /// Called only once [`Arith::check_divisors`] passed.
    fn floor_div(x: Self, y: Self) -> Self;
    /// Called only once [`Arith::check_divisors`] passed.
    fn floor_mod(x: Self, y: Self) -> Self;
    /// An error if one of `divisors` cannot divide (an integer zero).
    fn check_divisors(divisors: &[Self]) -> Result<()>;
    /// Called only once [`Arith::check_exponents`] passed.
    fn pow(x: Self, y: Self) -> Self;
    /// An error if one of `exponents` cannot be used (a negative integer).
    fn check_exponents(exponents: &[Self]) -> Result<()>;
}

macro_rules! int_arith {
    ($($t:ty),*) => {$(
        impl Arith for $t {
            fn add(x: $t, y: $t) -> $t { x.wrapping_add(y) }
            fn sub(x: $t, y: $t) -> $t { x.wrapping_sub(y) }
            fn mul(x: $t, y: $t) -> $t { x.wrapping_mul(y) }
            fn div(x: $t, y: $t) -> $t { x.wrapping_div(y) }
            fn max(x: $t, y: $t) -> $t { Ord::max(x, y) }
            fn min(x: $t, y: $t) -> $t { Ord::min(x, y) }
            // Wrapping, so MIN // -1 is MIN and MIN % -1 is 0, as in
            // TensorFlow.
            #[allow(unused_comparisons)]
            fn floor_div(x: $t, y: $t) -> $t {
                let q = x.wrapping_div(y);
                if x.wrapping_rem(y) != 0 && ((x < 0) != (y < 0)) {
                    q.wrapping_sub(1)
                } else {
                    q
                }
            }
            #[allow(unused_comparisons)]
            fn floor_mod(x: $t, y: $t) -> $t {
                let r = x.wrapping_rem(y);
                if r != 0 && ((y < 0) != (r < 0)) { r.wrapping_add(y) } else { r }
            }
            fn check_divisors(divisors: &[$t]) -> Result<()> {
                if divisors.contains(&0) {
                    return Err(Error::invalid_argument(
                        "Integer division by zero",
                    ));
                }
                Ok(())
            }
            fn pow(x: $t, y: $t) -> $t {
                let (mut base, mut e, mut acc): ($t, $t, $t) = (x, y, 1);
                while e > 0 {
                    if e & 1 == 1 {
                        acc = acc.wrapping_mul(base);
                    }
                    base = base.wrapping_mul(base);
                    e >>= 1;
                }
                acc
            }
            #[allow(unused_comparisons)]
            fn check_exponents(exponents: &[$t]) -> Result<()> {
                if exponents.iter().any(|&e| e < 0) {
                    return Err(Error::invalid_argument(
                        "Integers to negative integer powers are not allowed",
                    ));
                }
                Ok(())
            }
        }
    )*};
}
int_arith!(u8, i8, u16, i16, u32, i32, u64, i64);

macro_rules! float_arith {
    ($($t:ty),*) => {$(
        impl Arith for $t {
            fn add(x: $t, y: $t) -> $t { x + y }
            fn sub(x: $t, y: $t) -> $t { x - y }
            fn mul(x: $t, y: $t) -> $t { x * y }
            fn div(x: $t, y: $t) -> $t { x / y }
            // NaN wins; of two equal values (0.0 and -0.0) the first is
            // kept, as Eigen's `(x < y) ? y : x` keeps it in TensorFlow.
            fn max(x: $t, y: $t) -> $t {
                if x.is_nan() || y.is_nan() { x + y } else if x < y { y } else { x }
            }
            fn min(x: $t, y: $t) -> $t {
                if x.is_nan() || y.is_nan() { x + y } else if y < x { y } else { x }
            }
            fn floor_div(x: $t, y: $t) -> $t { (x / y).floor() }
            fn floor_mod(x: $t, y: $t) -> $t {
                // Rust's float `%` is C's fmod.
                let r = x % y;
                if r != 0.0 && ((y < 0.0) != (r < 0.0)) { r + y } else { r }
            }
            fn check_divisors(_: &[$t]) -> Result<()> { Ok(()) }
            fn pow(x: $t, y: $t) -> $t { x.powf(y) }
            fn check_exponents(_: &[$t]) -> Result<()> { Ok(()) }
        }
    )*};
}
float_arith!(f32, f64);

/// Half-precision arithmetic as Eigen's `half` and `bfloat16` do it:
/// each operation computed in `f32` and rounded back, so `floor_div`
/// floors the rounded quotient.
macro_rules! half_arith {
    ($($t:ty),*) => {$(
        impl Arith for $t {
            fn add(x: $t, y: $t) -> $t { <$t>::from_f32(x.to_f32() + y.to_f32()) }
            fn sub(x: $t, y: $t) -> $t { <$t>::from_f32(x.to_f32() - y.to_f32()) }
            fn mul(x: $t, y: $t) -> $t { <$t>::from_f32(x.to_f32() * y.to_f32()) }
            fn div(x: $t, y: $t) -> $t { <$t>::from_f32(x.to_f32() / y.to_f32()) }
            fn max(x: $t, y: $t) -> $t {
                <$t>::from_f32(<f32 as Arith>::max(x.to_f32(), y.to_f32()))
            }
            fn min(x: $t, y: $t) -> $t {
                <$t>::from_f32(<f32 as Arith>::min(x.to_f32(), y.to_f32()))
            }
            fn floor_div(x: $t, y: $t) -> $t {
                <$t>::from_f32(Self::div(x, y).to_f32().floor())
            }
            fn floor_mod(x: $t, y: $t) -> $t {
                <$t>::from_f32(<f32 as Arith>::floor_mod(x.to_f32(), y.to_f32()))
            }
            fn check_divisors(_: &[$t]) -> Result<()> { Ok(()) }
            fn pow(x: $t, y: $t) -> $t { <$t>::from_f32(x.to_f32().powf(y.to_f32())) }
            fn check_exponents(_: &[$t]) -> Result<()> { Ok(()) }
        }
    )*};
}
half_arith!(f16, bf16);

/// `a op b` over one dtype's elements, one loop per operation (the
/// operation is chosen once, not per element).
fn arith<T: Arith + Element>(
    op: BinaryOp,
    (a, a_dims): (&[T], &[usize]),
    (b, b_dims): (&[T], &[usize]),
    out_dims: &[usize],
) -> Result<Vec<T>> {
    // A macro, not a closure taking a `fn` pointer: each operation's
    // function item is its own type, so each loop inlines it.
    macro_rules! zip {
        ($f:expr) => {
            zip_broadcast(a, a_dims, b, b_dims, out_dims, $f)?
        };
    }
    Ok(match op {
        BinaryOp::Add => zip!(T::add),
        BinaryOp::Sub => zip!(T::sub),
        BinaryOp::Mul => zip!(T::mul),
        BinaryOp::Div | BinaryOp::FloorDiv | BinaryOp::FloorMod => {
            // Every divisor is used at least once unless the output is
            // empty.
            if out_dims.iter().product::<usize>() > 0 {
                T::check_divisors(b)?;
            }
            match op {
                BinaryOp::FloorDiv => zip!(T::floor_div),
                BinaryOp::FloorMod => zip!(T::floor_mod),
                _ => zip!(T::div),
            }
        }
        BinaryOp::Maximum => zip!(T::max),
        BinaryOp::Minimum => zip!(T::min),
        BinaryOp::Pow => {
            if out_dims.iter().product::<usize>() > 0 {
                T::check_exponents(b)?;
            }
            zip!(T::pow)
        }
    })
}

/// `a op b`, elementwise, with broadcasting.
///
/// # Errors
/// InvalidArgument when the dtypes differ, for bool operands, for string
/// operands of anything but `Add` (which concatenates them), when the
/// shapes do not broadcast, or for an integer division by zero.
pub fn binary(op: BinaryOp, a: &Tensor, b: &Tensor) -> Result<Tensor> {
    if a.dtype() != b.dtype() {
        return Err(Error::invalid_argument(format!(
            "{}: operands have different dtypes, {} and {}; cast one first",
            op.name(),
            a.dtype(),
            b.dtype()
        )));
    }
    let out_dims = broadcast_shape(a.dims(), b.dims()).map_err(|e| {
        let msg = format!("{}: {}", op.name(), e.message());
        e.with_message(msg)
    })?;
    let (ad, bd) = (a.dims(), b.dims());
    if let (BinaryOp::Add, Data::String(x), Data::String(y)) =
        (op, a.data(), b.data())
    {
        return Tensor::from_data(
            out_dims.clone(),
            Data::String(concat_strings(x, ad, y, bd, &out_dims)?),
        );
    }
    macro_rules! go {
        ($($var:ident),*) => {
            match (a.data(), b.data()) {
                $((Data::$var(x), Data::$var(y)) => {
                    Data::$var(arith(op, (x, ad), (y, bd), &out_dims)?)
                })*
                _ => {
                    return Err(Error::invalid_argument(format!(
                        "{}: not defined for {}",
                        op.name(),
                        a.dtype()
                    )))
                }
            }
        };
    }
    let data = go!(U8, I8, U16, I16, U32, I32, U64, I64, F16, BF16, F32, F64);
    Tensor::from_data(out_dims, data)
}

/// `a + b` of strings, as TensorFlow's `Add` takes them: each pair
/// concatenated, with broadcasting.
fn concat_strings(
    a: &[Bytes],
    a_dims: &[usize],
    b: &[Bytes],
    b_dims: &[usize],
    out_dims: &[usize],
) -> Result<Vec<Bytes>> {
    let a: Vec<&Bytes> = a.iter().collect();
    let b: Vec<&Bytes> = b.iter().collect();
    zip_broadcast(&a, a_dims, &b, b_dims, out_dims, |x, y| {
        let mut v = Vec::with_capacity(x.len() + y.len());
        v.extend_from_slice(x);
        v.extend_from_slice(y);
        Bytes::from(v)
    })
}

/// `a + b`; see [`binary`].
///
/// # Errors
/// As [`binary`].
pub fn add(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    binary(BinaryOp::Add, a, b)
}

/// `a - b`; see [`binary`].
///
/// # Errors
/// As [`binary`].
pub fn sub(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    binary(BinaryOp::Sub, a, b)
}

/// `a * b`; see [`binary`].
///
/// # Errors
/// As [`binary`].
pub fn mul(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    binary(BinaryOp::Mul, a, b)
}

/// `a / b`; see [`binary`].
///
/// # Errors
/// As [`binary`].
pub fn div(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    binary(BinaryOp::Div, a, b)
}

/// `-a`, elementwise (wrapping for signed integers).
///
/// # Errors
/// InvalidArgument for bool, string and unsigned tensors.
pub fn neg(a: &Tensor) -> Result<Tensor> {
    let data = match a.data() {
        Data::I8(v) => Data::I8(v.iter().map(|x| x.wrapping_neg()).collect()),
        Data::I16(v) => {
            Data::I16(v.iter().map(|x| x.wrapping_neg()).collect())
        }
        Data::I32(v) => {
            Data::I32(v.iter().map(|x| x.wrapping_neg()).collect())
        }
        Data::I64(v) => {
            Data::I64(v.iter().map(|x| x.wrapping_neg()).collect())
        }
        Data::F16(v) => Data::F16(v.iter().map(|x| -x).collect()),
        Data::BF16(v) => Data::BF16(v.iter().map(|x| -x).collect()),
        Data::F32(v) => Data::F32(v.iter().map(|x| -x).collect()),
        Data::F64(v) => Data::F64(v.iter().map(|x| -x).collect()),
        _ => {
            return Err(Error::invalid_argument(format!(
                "neg: not defined for {}",
                a.dtype()
            )))
        }
    };
    Tensor::from_data(a.shape().clone(), data)
}

/// Whether [`binary`] is defined for `dtype`.
pub fn is_arithmetic(dtype: DType) -> bool {
    dtype.is_numeric() && dtype != DType::Bool
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broadcasts_a_column_against_a_row() {
        let col = Tensor::new([2, 1], vec![1i32, 2]).unwrap();
        let row = Tensor::new([3], vec![10i32, 20, 30]).unwrap();
        let s = add(&col, &row).unwrap();
        assert_eq!(s.dims(), &[2, 3]);
        assert_eq!(s.as_slice::<i32>().unwrap(), &[11, 21, 31, 12, 22, 32]);
        let d = sub(&row, &col).unwrap();
        assert_eq!(d.as_slice::<i32>().unwrap(), &[9, 19, 29, 8, 18, 28]);
    }

    #[test]
    fn scalar_on_the_left() {
        let x = Tensor::vector(vec![1.0f64, 2.0, 4.0]);
        let r = div(&Tensor::scalar(1.0f64), &x).unwrap();
        assert_eq!(r.as_slice::<f64>().unwrap(), &[1.0, 0.5, 0.25]);
    }

    #[test]
    fn incompatible_shapes_and_dtypes_are_errors() {
        let a = Tensor::vector(vec![1.0f32, 2.0]);
        let b = Tensor::vector(vec![1.0f32, 2.0, 3.0]);
        let e = add(&a, &b).unwrap_err();
        assert!(e.to_string().contains("incompatible shapes"), "{e}");
        let e = mul(&a, &Tensor::scalar(2i32)).unwrap_err();
        assert!(e.to_string().contains("different dtypes"), "{e}");
        let s = Tensor::vector(vec![bytes::Bytes::from_static(b"x")]);
        assert!(sub(&s, &s).is_err());
    }

    #[test]
    fn strings_add_by_concatenating() {
        let s = |v: &[&'static str]| {
            v.iter().map(|x| Bytes::from_static(x.as_bytes())).collect()
        };
        let col = Tensor::new([2, 1], s(&["a", "b"])).unwrap();
        let row = Tensor::new([3], s(&["x", "", "zz"])).unwrap();
        let sum = add(&col, &row).unwrap();
        assert_eq!(sum.dims(), &[2, 3]);
        let want: Vec<Bytes> = s(&["ax", "a", "azz", "bx", "b", "bzz"]);
        assert_eq!(sum.as_slice::<Bytes>().unwrap(), &want[..]);
    }

    #[test]
    fn integer_division_truncates_and_zero_is_an_error() {
        let a = Tensor::vector(vec![7i64, -7]);
        let q = div(&a, &Tensor::scalar(2i64)).unwrap();
        assert_eq!(q.as_slice::<i64>().unwrap(), &[3, -3]);
        let e = div(&a, &Tensor::scalar(0i64)).unwrap_err();
        assert!(e.to_string().contains("division by zero"), "{e}");
    }

    #[test]
    fn maximum_minimum_and_neg() {
        let a = Tensor::vector(vec![1.0f32, f32::NAN, -3.0]);
        let m =
            binary(BinaryOp::Maximum, &a, &Tensor::scalar(0.0f32)).unwrap();
        let m = m.as_slice::<f32>().unwrap();
        assert_eq!(m[0], 1.0);
        assert!(m[1].is_nan());
        assert_eq!(m[2], 0.0);
        // Signed zeros: the first operand is kept, as in TensorFlow.
        let z = Tensor::vector(vec![-0.0f32, 0.0]);
        let w = Tensor::vector(vec![0.0f32, -0.0]);
        for op in [BinaryOp::Maximum, BinaryOp::Minimum] {
            let r = binary(op, &z, &w).unwrap();
            let bits: Vec<u32> = r
                .as_slice::<f32>()
                .unwrap()
                .iter()
                .map(|v| v.to_bits())
                .collect();
            assert_eq!(
                bits,
                [(-0.0f32).to_bits(), 0.0f32.to_bits()],
                "{op:?}"
            );
        }
        let n = binary(
            BinaryOp::Minimum,
            &Tensor::vector(vec![5u8, 1]),
            &Tensor::scalar(3u8),
        )
        .unwrap();
        assert_eq!(n.as_slice::<u8>().unwrap(), &[3, 1]);
        let g = neg(&Tensor::vector(vec![1i32, -2])).unwrap();
        assert_eq!(g.as_slice::<i32>().unwrap(), &[-1, 2]);
        assert!(neg(&Tensor::vector(vec![1u8])).is_err());
    }

    #[test]
    fn empty_broadcast() {
        let a = Tensor::new([0, 3], Vec::<f32>::new()).unwrap();
        let r = mul(&a, &Tensor::vector(vec![1.0f32, 2.0, 3.0])).unwrap();
        assert_eq!(r.dims(), &[0, 3]);
    }

    #[test]
    fn floor_division_and_modulo_round_toward_negative_infinity() {
        let fd = |a, b| binary(BinaryOp::FloorDiv, a, b).unwrap();
        let fm = |a, b| binary(BinaryOp::FloorMod, a, b).unwrap();
        let x = Tensor::vector(vec![7i32, -7, 7, -7, 0, i32::MIN]);
        let y = Tensor::vector(vec![2i32, 2, -2, -2, 3, -1]);
        assert_eq!(
            fd(&x, &y).as_slice::<i32>().unwrap(),
            &[3, -4, -4, 3, 0, i32::MIN]
        );
        assert_eq!(
            fm(&x, &y).as_slice::<i32>().unwrap(),
            &[1, 1, -1, -1, 0, 0]
        );
        let u = Tensor::vector(vec![7u8, 200]);
        let v = Tensor::vector(vec![3u8, 7]);
        assert_eq!(fd(&u, &v).as_slice::<u8>().unwrap(), &[2, 28]);
        assert_eq!(fm(&u, &v).as_slice::<u8>().unwrap(), &[1, 4]);
        let f = Tensor::vector(vec![7.5f32, -7.5, 7.5, -7.5, -0.0]);
        let g = Tensor::vector(vec![2.0f32, 2.0, -2.0, -2.0, 2.0]);
        assert_eq!(
            fd(&f, &g).as_slice::<f32>().unwrap(),
            &[3.0, -4.0, -4.0, 3.0, -0.0]
        );
        let m = fm(&f, &g);
        let m = m.as_slice::<f32>().unwrap();
        assert_eq!(m[..4], [1.5, 0.5, -0.5, -1.5]);
        // fmod keeps the sign of a zero, as TensorFlow's FloorMod.
        assert!(m[4] == 0.0 && m[4].is_sign_negative());
        for op in [BinaryOp::FloorDiv, BinaryOp::FloorMod] {
            let e = binary(op, &x, &Tensor::scalar(0i32)).unwrap_err();
            assert!(e.to_string().contains("Integer division by zero"), "{e}");
        }
    }

    #[test]
    fn half_precision_rounds_each_operation() {
        let h = |v: &[f32]| {
            Tensor::vector(
                v.iter().map(|&x| f16::from_f32(x)).collect::<Vec<_>>(),
            )
        };
        let r = mul(&h(&[1.1, 2.0]), &h(&[3.3, 2.0])).unwrap();
        assert_eq!(r.dtype(), DType::F16);
        // TensorFlow: float16 1.1 * 3.3 is 3.629.
        assert_eq!(r.as_slice::<f16>().unwrap()[0], f16::from_f32(3.629));
        let q = div(&h(&[1.0, 2.0]), &h(&[3.0, 0.0])).unwrap();
        let q = q.as_slice::<f16>().unwrap();
        assert_eq!(q[0], f16::from_f32(1.0 / 3.0));
        assert!(q[1].is_infinite());
        let b = Tensor::vector(vec![bf16::from_f32(1.0), bf16::from_f32(2.0)]);
        let s = binary(
            BinaryOp::FloorDiv,
            &b,
            &Tensor::scalar(bf16::from_f32(3.0)),
        )
        .unwrap();
        assert_eq!(s.as_slice::<bf16>().unwrap(), &[bf16::ZERO, bf16::ZERO]);
        let n = neg(&h(&[1.0])).unwrap();
        assert_eq!(n.as_slice::<f16>().unwrap(), &[f16::from_f32(-1.0)]);
    }
}
