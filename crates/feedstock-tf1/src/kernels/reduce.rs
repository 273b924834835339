//! Reductions (`tf.reduce_sum`, `_mean`, `_max`, `_min`, `_prod`),
//! comparisons (`tf.equal`, `tf.less`, ...), `tf.one_hot` and `tf.gather`, as
//! TensorFlow's CPU kernels compute them.

use super::math::{broadcast_shape, zip_broadcast};
use feedstock::error::{Error, Result};
use feedstock::tensor::{DType, Data, Tensor};
use feedstock::transform::eigen::{self, Combine};

/// A reduction over some axes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// `tf.reduce_sum` (wrapping for integers).
    Sum,
    /// `tf.reduce_prod` (wrapping for integers).
    Prod,
    /// `tf.reduce_max`; of no elements, the dtype's lowest value (`-inf`).
    Max,
    /// `tf.reduce_min`; of no elements, the dtype's highest value (`inf`).
    Min,
    /// `tf.reduce_mean`: the sum divided by the count in the dtype
    /// (integer division truncates, as TensorFlow's).
    Mean,
}

/// A comparison, elementwise with broadcasting, giving bools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CmpOp {
    /// `tf.equal`.
    Equal,
    /// `tf.not_equal`.
    NotEqual,
    /// `tf.less`.
    Less,
    /// `tf.less_equal`.
    LessEqual,
    /// `tf.greater`.
    Greater,
    /// `tf.greater_equal`.
    GreaterEqual,
}

/// The element operations a reduction needs.
trait Reducible: Copy + PartialOrd {
    const ZERO: Self;
    const ONE: Self;
    const LOWEST: Self;
    const HIGHEST: Self;
    fn add(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    fn div_count(self, n: usize) -> Self;
    /// The sum or product in TensorFlow's order, for the types whose
    /// result depends on it (floats); `None` for exact ones.
    fn ordered(
        _xs: &[Self],
        _dims: &[usize],
        _axes: &[bool],
        _how: Combine,
    ) -> Option<Vec<Self>> {
        None
    }
}

macro_rules! reducible_int {
    ($($t:ty),*) => {$(
        impl Reducible for $t {
            const ZERO: Self = 0;
            const ONE: Self = 1;
            const LOWEST: Self = <$t>::MIN;
            const HIGHEST: Self = <$t>::MAX;
            fn add(self, o: Self) -> Self { self.wrapping_add(o) }
            fn mul(self, o: Self) -> Self { self.wrapping_mul(o) }
            fn div_count(self, n: usize) -> Self {
                if n == 0 { 0 } else { self / (n as $t) }
            }
        }
    )*};
}
reducible_int!(u8, i8, u16, i16, u32, i32, u64, i64);

macro_rules! reducible_float {
    ($($t:ty),*) => {$(
        impl Reducible for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            const LOWEST: Self = <$t>::NEG_INFINITY;
            const HIGHEST: Self = <$t>::INFINITY;
            fn add(self, o: Self) -> Self { self + o }
            fn mul(self, o: Self) -> Self { self * o }
            fn div_count(self, n: usize) -> Self { self / (n as $t) }
            fn ordered(
                xs: &[Self],
                dims: &[usize],
                axes: &[bool],
                how: Combine,
            ) -> Option<Vec<Self>> {
                Some(eigen::reduce(xs, dims, axes, how))
            }
        }
    )*};
}
reducible_float!(f32, f64);

/// Whether `x` is NaN (unordered with itself); a NaN wins max and min.
fn is_nan<T: PartialOrd>(x: T) -> bool {
    x.partial_cmp(&x).is_none()
}

fn reduce_typed<T: Reducible>(
    xs: &[T],
    dims: &[usize],
    axes: &[bool],
    op: ReduceOp,
) -> Vec<T> {
    let count: usize = dims
        .iter()
        .zip(axes)
        .filter(|(_, &r)| r)
        .map(|(d, _)| d)
        .product();
    let init = match op {
        ReduceOp::Sum | ReduceOp::Mean => T::ZERO,
        ReduceOp::Prod => T::ONE,
        ReduceOp::Max => T::LOWEST,
        ReduceOp::Min => T::HIGHEST,
    };
    let n_out = eigen::kept_count(dims, axes);
    let combine = |a: T, x: T| match op {
        ReduceOp::Sum | ReduceOp::Mean => a.add(x),
        ReduceOp::Prod => a.mul(x),
        ReduceOp::Max => {
            if x > a || is_nan(x) {
                x
            } else {
                a
            }
        }
        ReduceOp::Min => {
            if x < a || is_nan(x) {
                x
            } else {
                a
            }
        }
    };
    let how = match op {
        ReduceOp::Sum | ReduceOp::Mean => Some(Combine::Sum),
        ReduceOp::Prod => Some(Combine::Prod),
        ReduceOp::Max | ReduceOp::Min => None,
    };
    let mut out = match how.and_then(|how| T::ordered(xs, dims, axes, how)) {
        Some(out) => out,
        None => {
            let mut out = vec![init; n_out];
            for_each_output(dims, axes, |i, j| {
                out[j] = combine(out[j], xs[i])
            });
            out
        }
    };
    if op == ReduceOp::Mean {
        for o in &mut out {
            *o = o.div_count(count);
        }
    }
    out
}

/// Calls `f(input index, output index)` for each element in row-major
/// order; the output index is the element's coordinates on the kept axes.
fn for_each_output(
    dims: &[usize],
    axes: &[bool],
    mut f: impl FnMut(usize, usize),
) {
    let total: usize = dims.iter().product();
    let rank = dims.len();
    let mut index = vec![0usize; rank];
    for i in 0..total {
        let mut j = 0;
        for k in 0..rank {
            if !axes[k] {
                j = j * dims[k] + index[k];
            }
        }
        f(i, j);
        for k in (0..rank).rev() {
            index[k] += 1;
            if index[k] < dims[k] {
                break;
            }
            index[k] = 0;
        }
    }
}

/// `t` reduced over `axes` (each in `0..rank`), the reduced dimensions
/// kept as 1 with `keep_dims`.
///
/// # Errors
/// InvalidArgument for an axis out of range or a dtype other than
/// integers, float32 and float64.
pub fn reduce(
    t: &Tensor,
    axes: &[usize],
    keep_dims: bool,
    op: ReduceOp,
) -> Result<Tensor> {
    let dims = t.dims();
    let mut reduced = vec![false; dims.len()];
    for &a in axes {
        let r = reduced.get_mut(a).ok_or_else(|| {
            Error::invalid_argument(format!(
                "Invalid reduction dimension ({a} for input with {} \
                 dimension(s)",
                dims.len()
            ))
        })?;
        *r = true;
    }
    let out_dims: Vec<usize> = dims
        .iter()
        .zip(&reduced)
        .filter_map(|(&d, &r)| match (r, keep_dims) {
            (false, _) => Some(d),
            (true, true) => Some(1),
            (true, false) => None,
        })
        .collect();
    macro_rules! go {
        ($($var:ident),*) => {
            match t.data() {
                $(Data::$var(x) => Data::$var(reduce_typed(x, dims, &reduced, op)),)*
                _ => {
                    return Err(Error::invalid_argument(format!(
                        "reduce: not defined for {}",
                        t.dtype()
                    )))
                }
            }
        };
    }
    let data = go!(U8, I8, U16, I16, U32, I32, U64, I64, F32, F64);
    Tensor::from_data(out_dims, data)
}

/// The index of the largest (`max`) or smallest value of `t` along
/// `axis`, as `dtype` (`int32` or `int64`): `tf.argmax` / `tf.argmin`.
/// As TensorFlow's kernel: the first of equal values, NaN never chosen
/// (index 0 when every value is NaN).
///
/// # Errors
/// InvalidArgument for an axis out of range, an empty axis (naming the
/// shape, as TensorFlow), an output dtype other than `int32` / `int64`,
/// or a string or complex tensor.
pub fn arg_reduce(
    t: &Tensor,
    axis: usize,
    max: bool,
    dtype: DType,
) -> Result<Tensor> {
    let dims = t.dims();
    let Some(&n) = dims.get(axis) else {
        return Err(Error::invalid_argument(format!(
            "Expected dimension in the range [{}, {}), but got {axis}",
            -(dims.len() as i64),
            dims.len()
        )));
    };
    if n == 0 {
        return Err(Error::invalid_argument(format!(
            "Reduction axis {axis} is empty in shape {}",
            t.shape()
        )));
    }
    let outer: usize = dims[..axis].iter().product();
    let inner: usize = dims[axis + 1..].iter().product();
    macro_rules! go {
        ($($var:ident),*) => {
            match t.data() {
                $(Data::$var(x) => arg_typed(x, outer, n, inner, max),)*
                Data::Bool(x) => {
                    let x: Vec<u8> = x.iter().map(|&b| u8::from(b)).collect();
                    arg_typed(&x, outer, n, inner, max)
                }
                _ => {
                    return Err(Error::invalid_argument(format!(
                        "argmax / argmin: not defined for {}",
                        t.dtype()
                    )))
                }
            }
        };
    }
    let idx = go!(U8, I8, U16, I16, U32, I32, U64, I64, F32, F64);
    let out_dims: Vec<usize> = dims
        .iter()
        .enumerate()
        .filter(|&(k, _)| k != axis)
        .map(|(_, &d)| d)
        .collect();
    match dtype {
        DType::I64 => Tensor::new(out_dims, idx),
        DType::I32 => {
            Tensor::new(out_dims, idx.into_iter().map(|i| i as i32).collect())
        }
        other => Err(Error::invalid_argument(format!(
            "argmax / argmin: output_type must be int32 or int64, got {other}"
        ))),
    }
}

fn arg_typed<T: Reducible>(
    x: &[T],
    outer: usize,
    n: usize,
    inner: usize,
    max: bool,
) -> Vec<i64> {
    let mut out = Vec::with_capacity(outer * inner);
    for o in 0..outer {
        for i in 0..inner {
            // Starts from the dtype's extreme, replaced only by a value
            // strictly beyond the best: ties keep the first, and a NaN
            // (unordered) never wins.
            let (mut best, mut at) =
                (if max { T::LOWEST } else { T::HIGHEST }, 0usize);
            for k in 0..n {
                let v = x[(o * n + k) * inner + i];
                if (max && v > best) || (!max && v < best) {
                    (best, at) = (v, k);
                }
            }
            out.push(at as i64);
        }
    }
    out
}

fn cmp_typed<T: PartialOrd + Copy>(
    op: CmpOp,
    (a, ad): (&[T], &[usize]),
    (b, bd): (&[T], &[usize]),
    out: &[usize],
) -> Result<Vec<bool>> {
    match op {
        CmpOp::Equal => zip_broadcast(a, ad, b, bd, out, |x, y| x == y),
        CmpOp::NotEqual => zip_broadcast(a, ad, b, bd, out, |x, y| x != y),
        CmpOp::Less => zip_broadcast(a, ad, b, bd, out, |x, y| x < y),
        CmpOp::LessEqual => zip_broadcast(a, ad, b, bd, out, |x, y| x <= y),
        CmpOp::Greater => zip_broadcast(a, ad, b, bd, out, |x, y| x > y),
        CmpOp::GreaterEqual => zip_broadcast(a, ad, b, bd, out, |x, y| x >= y),
    }
}

/// `a op b` elementwise with broadcasting, as bools. Strings and bools
/// compare only for (in)equality.
///
/// # Errors
/// InvalidArgument when the dtypes differ, the shapes do not broadcast,
/// or an ordering is asked of strings, bools or complex numbers.
pub fn compare(op: CmpOp, a: &Tensor, b: &Tensor) -> Result<Tensor> {
    if a.dtype() != b.dtype() {
        return Err(Error::invalid_argument(format!(
            "compare: operands have different dtypes, {} and {}",
            a.dtype(),
            b.dtype()
        )));
    }
    let out = broadcast_shape(a.dims(), b.dims())?;
    let (ad, bd) = (a.dims(), b.dims());
    let eq_only = matches!(op, CmpOp::Equal | CmpOp::NotEqual);
    macro_rules! go {
        ($($var:ident),*) => {
            match (a.data(), b.data()) {
                $((Data::$var(x), Data::$var(y)) => cmp_typed(op, (x, ad), (y, bd), &out),)*
                (Data::Bool(x), Data::Bool(y)) if eq_only => {
                    cmp_typed(op, (x, ad), (y, bd), &out)
                }
                (Data::String(x), Data::String(y)) if eq_only => {
                    let x: Vec<&[u8]> = x.iter().map(|s| &s[..]).collect();
                    let y: Vec<&[u8]> = y.iter().map(|s| &s[..]).collect();
                    cmp_typed(op, (&x, ad), (&y, bd), &out)
                }
                _ => {
                    return Err(Error::invalid_argument(format!(
                        "compare: not defined for {}",
                        a.dtype()
                    )))
                }
            }
        };
    }
    let v = go!(U8, I8, U16, I16, U32, I32, U64, I64, F16, BF16, F32, F64)?;
    Tensor::from_data(out, Data::Bool(v))
}

/// `tf.gather(params, indices, axis)`: the slices of `params` along
/// `axis` at `indices` (int32 or int64), giving
/// `params.shape[..axis] + indices.shape + params.shape[axis + 1..]`.
///
/// # Errors
/// InvalidArgument for an index outside `[0, params.shape[axis])`
/// (TensorFlow's words), an axis outside the rank, or indices that are
/// not integers.
pub fn gather(
    params: &Tensor,
    indices: &Tensor,
    axis: usize,
) -> Result<Tensor> {
    let dims = params.dims();
    if axis >= dims.len() {
        return Err(Error::invalid_argument(format!(
            "Expected axis in the range [{}, {}), but got {axis}",
            -(dims.len() as i64),
            dims.len()
        )));
    }
    if !matches!(indices.dtype(), DType::I32 | DType::I64) {
        return Err(Error::invalid_argument(format!(
            "gather: indices must be int32 or int64, not {}",
            indices.dtype()
        )));
    }
    let idx = indices.cast(DType::I64)?;
    let idx = idx.as_slice::<i64>()?;
    let n = dims[axis];
    // `params` with `axis` first, so each index picks rows.
    let mut perm: Vec<usize> = vec![axis];
    perm.extend((0..dims.len()).filter(|&k| k != axis));
    let front = feedstock::transform::transpose(params, &perm)?;
    let mut rows = Vec::with_capacity(idx.len());
    for (k, &i) in idx.iter().enumerate() {
        if i < 0 || i as usize >= n {
            return Err(Error::invalid_argument(format!(
                "indices[{k}] = {i} is not in [0, {n})"
            )));
        }
        rows.push(front.slice(i as usize, i as usize + 1)?);
    }
    let (pre, post) = (&dims[..axis], &dims[axis + 1..]);
    let mut picked_dims = vec![idx.len()];
    picked_dims.extend_from_slice(pre);
    picked_dims.extend_from_slice(post);
    let picked = if rows.is_empty() {
        Tensor::zeros(params.dtype(), picked_dims)?
    } else {
        Tensor::concat(&rows)?
    };
    // Back to `pre + [len] + post`, then the indices' own shape.
    let mut back: Vec<usize> = (1..=pre.len()).collect();
    back.push(0);
    back.extend(pre.len() + 1..dims.len());
    let out = feedstock::transform::transpose(&picked, &back)?;
    let mut out_dims = pre.to_vec();
    out_dims.extend_from_slice(indices.dims());
    out_dims.extend_from_slice(post);
    out.reshape(out_dims)
}

/// An elementwise function of one tensor whose results are exact (the
/// same bits as TensorFlow's CPU kernels).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    /// `tf.abs` (wrapping for the lowest signed integer).
    Abs,
    /// `tf.square`: `x * x` (wrapping for integers).
    Square,
    /// `tf.sqrt` (floats).
    Sqrt,
    /// `tf.floor` (floats).
    Floor,
    /// `tf.ceil` (floats).
    Ceil,
    /// `tf.round`: half to even (floats; integers unchanged).
    Round,
    /// `tf.exp` (floats).
    Exp,
    /// `tf.log`: the natural logarithm (floats).
    Log,
    /// `tf.log1p`: `log(1 + x)` (floats).
    Log1p,
    /// `tf.sigmoid`: `1 / (1 + exp(-x))` (floats).
    Sigmoid,
    /// `tf.tanh` (floats).
    Tanh,
    /// `tf.reciprocal`: `1 / x` (floats).
    Reciprocal,
    /// `tf.rsqrt`: `1 / sqrt(x)` (floats).
    Rsqrt,
    /// `tf.sign`: -1, 0 or 1 (NaN for NaN).
    Sign,
}

impl UnaryOp {
    /// Whether the operation takes integers too.
    pub fn takes_integers(self) -> bool {
        matches!(
            self,
            UnaryOp::Abs | UnaryOp::Square | UnaryOp::Round | UnaryOp::Sign
        )
    }
}

/// `x`, or zero of its sign if it is subnormal (flush to zero).
fn ftz<F: num_traits::Float>(x: F) -> F {
    if x.is_subnormal() {
        F::zero() * x.signum()
    } else {
        x
    }
}

/// `op(t)`, elementwise.
///
/// # Errors
/// InvalidArgument for a dtype the operation does not take.
pub fn unary(op: UnaryOp, t: &Tensor) -> Result<Tensor> {
    macro_rules! float {
        ($v:expr, $var:ident) => {
            Data::$var(
                $v.iter()
                    .map(|&x| match op {
                        UnaryOp::Abs => x.abs(),
                        UnaryOp::Square => x * x,
                        UnaryOp::Sqrt => x.sqrt(),
                        UnaryOp::Floor => x.floor(),
                        UnaryOp::Ceil => x.ceil(),
                        UnaryOp::Round => x.round_ties_even(),
                        // TensorFlow's CPU threads flush subnormal
                        // numbers to zero, in and out; its transcendental
                        // kernels are Eigen's approximations, within a
                        // few ulp of these (docs/differences.md).
                        UnaryOp::Exp => ftz(ftz(x).exp()),
                        UnaryOp::Log => ftz(x).ln(),
                        UnaryOp::Log1p => ftz(ftz(x).ln_1p()),
                        UnaryOp::Sigmoid => ftz(1.0 / (1.0 + (-ftz(x)).exp())),
                        UnaryOp::Tanh => ftz(ftz(x).tanh()),
                        UnaryOp::Reciprocal => ftz(1.0 / ftz(x)),
                        UnaryOp::Rsqrt => ftz(1.0 / ftz(x).sqrt()),
                        // TensorFlow's sign of -0.0 (or a subnormal) is +0.0.
                        UnaryOp::Sign if ftz(x) == 0.0 => 0.0,
                        UnaryOp::Sign if x.is_nan() => x,
                        UnaryOp::Sign => x.signum(),
                    })
                    .collect(),
            )
        };
    }
    macro_rules! int {
        ($v:expr, $var:ident, $abs:expr) => {
            Data::$var(
                $v.iter()
                    .map(|&x| match op {
                        UnaryOp::Abs => $abs(x),
                        UnaryOp::Square => x.wrapping_mul(x),
                        UnaryOp::Sign => x.signum(),
                        _ => x,
                    })
                    .collect(),
            )
        };
    }
    let ints = op.takes_integers();
    let data = match t.data() {
        Data::F32(v) => float!(v, F32),
        Data::F64(v) => float!(v, F64),
        Data::I8(v) if ints => int!(v, I8, i8::wrapping_abs),
        Data::I16(v) if ints => int!(v, I16, i16::wrapping_abs),
        Data::I32(v) if ints => int!(v, I32, i32::wrapping_abs),
        Data::I64(v) if ints => int!(v, I64, i64::wrapping_abs),
        _ => {
            return Err(Error::invalid_argument(format!(
                "{op:?}: not defined for {}",
                t.dtype()
            )))
        }
    };
    Tensor::from_data(t.shape().clone(), data)
}

/// Uniform random values of `dims`: floats in `[min, max)`, integers in
/// `min..max` (`tf.random_uniform`; TensorFlow's generator is not
/// reproduced, only the distribution).
///
/// # Errors
/// InvalidArgument for another dtype, or integers with `min >= max`.
pub fn random_uniform<R: rand::Rng + ?Sized>(
    dims: &[usize],
    dtype: DType,
    min: f64,
    max: f64,
    rng: &mut R,
) -> Result<Tensor> {
    let n: usize = dims.iter().product();
    if matches!(dtype, DType::I32 | DType::I64) && min >= max {
        return Err(Error::invalid_argument(format!(
            "Need minval < maxval: {min} >= {max}"
        )));
    }
    let data = match dtype {
        DType::F32 => Data::F32(
            (0..n)
                .map(|_| min as f32 + rng.gen::<f32>() * (max - min) as f32)
                .collect(),
        ),
        DType::F64 => Data::F64(
            (0..n)
                .map(|_| min + rng.gen::<f64>() * (max - min))
                .collect(),
        ),
        DType::I32 => Data::I32(
            (0..n)
                .map(|_| rng.gen_range(min as i32..max as i32))
                .collect(),
        ),
        DType::I64 => Data::I64(
            (0..n)
                .map(|_| rng.gen_range(min as i64..max as i64))
                .collect(),
        ),
        _ => {
            return Err(Error::invalid_argument(format!(
                "random_uniform: not defined for {dtype}"
            )))
        }
    };
    Tensor::from_data(dims.to_vec(), data)
}

/// `t`'s rows (axis 0) in a random order (`tf.random_shuffle`; a scalar
/// is returned as it is).
///
/// # Errors
/// As [`Tensor::concat`].
pub fn random_shuffle<R: rand::Rng + ?Sized>(
    t: &Tensor,
    rng: &mut R,
) -> Result<Tensor> {
    use rand::seq::SliceRandom;
    if t.rank() == 0 || t.dims()[0] < 2 {
        return Ok(t.clone());
    }
    let mut order: Vec<usize> = (0..t.dims()[0]).collect();
    order.shuffle(rng);
    let rows = order
        .iter()
        .map(|&i| t.slice(i, i + 1))
        .collect::<Result<Vec<_>>>()?;
    Tensor::concat(&rows)
}

/// `tf.where(cond, x, y)` of TensorFlow 1: `x` where `cond` holds, else
/// `y`; `cond` has `x`'s shape, or is a vector choosing `x`'s rows.
///
/// # Errors
/// InvalidArgument when `x` and `y` differ in dtype or shape, or `cond`
/// fits neither form (TensorFlow's words).
pub fn select(cond: &Tensor, x: &Tensor, y: &Tensor) -> Result<Tensor> {
    if x.dims() != y.dims() || x.dtype() != y.dtype() {
        return Err(Error::invalid_argument(format!(
            "'then' and 'else' must have the same size.  but received: {} vs. {}",
            x.shape(),
            y.shape()
        )));
    }
    let c = cond.as_slice::<bool>()?;
    let rows = if cond.dims() == x.dims() {
        1
    } else if cond.rank() == 1
        && x.rank() >= 1
        && cond.dims()[0] == x.dims()[0]
    {
        x.dims()[1..].iter().product()
    } else {
        return Err(Error::invalid_argument(format!(
            "'cond' must be a scalar, vector, or the same shape as 'then': {} vs. {}",
            cond.shape(),
            x.shape()
        )));
    };
    if x.rank() == 0 {
        return Ok(if c[0] { x.clone() } else { y.clone() });
    }
    let xr = x.clone().reshape(vec![x.num_elements()])?;
    let yr = y.clone().reshape(vec![y.num_elements()])?;
    let n = x.num_elements();
    let picked: Vec<Tensor> = (0..n)
        .map(|k| {
            let src = if c[k / rows.max(1)] { &xr } else { &yr };
            src.slice(k, k + 1)
        })
        .collect::<Result<_>>()?;
    if picked.is_empty() {
        return Ok(x.clone());
    }
    Tensor::concat(&picked)?.reshape(x.dims().to_vec())
}

/// `tf.where(cond)`: the coordinates of `cond`'s true elements, an
/// `int64 [count, rank]` matrix in row-major order.
///
/// # Errors
/// InvalidArgument for a `cond` that is not bool.
pub fn where_true(cond: &Tensor) -> Result<Tensor> {
    let c = cond.as_slice::<bool>()?;
    let dims = cond.dims();
    let mut coords = Vec::new();
    let mut count = 0;
    for (k, &b) in c.iter().enumerate() {
        if b {
            let mut rest = k;
            let mut idx = vec![0i64; dims.len()];
            for a in (0..dims.len()).rev() {
                idx[a] = (rest % dims[a]) as i64;
                rest /= dims[a];
            }
            coords.extend(idx);
            count += 1;
        }
    }
    Tensor::new(vec![count, dims.len()], coords)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transcendental_ops_flush_subnormals_and_keep_special_values() {
        let x = Tensor::vector::<f32>(vec![-1e-40, 0.0, -0.0, -90.0, 1.0]);
        let f =
            |op| unary(op, &x).unwrap().as_slice::<f32>().unwrap().to_vec();
        // As TensorFlow 2.21: a subnormal input is zero (exp gives 1),
        // a subnormal result is zero (sigmoid(-90)), sign(-0.0) is +0.0.
        assert_eq!(f(UnaryOp::Exp)[..3], [1.0, 1.0, 1.0]);
        assert_eq!(f(UnaryOp::Sigmoid)[3], 0.0);
        assert_eq!(f(UnaryOp::Log)[..3], [f32::NEG_INFINITY; 3]);
        let s = f(UnaryOp::Sign);
        assert_eq!(s, [0.0, 0.0, 0.0, -1.0, 1.0]);
        assert!(s[..3].iter().all(|z| z.is_sign_positive()));
        let ints = Tensor::vector::<i64>(vec![-5, 0, 7]);
        let sign = unary(UnaryOp::Sign, &ints).unwrap();
        assert_eq!(sign.as_slice::<i64>().unwrap(), &[-1, 0, 1]);
        assert!(unary(UnaryOp::Exp, &ints).is_err());
    }

    #[test]
    fn reductions_as_tensorflow() {
        let t = Tensor::new::<i32>(vec![2, 2], vec![1, 2, 3, 4]).unwrap();
        let s = reduce(&t, &[0, 1], true, ReduceOp::Sum).unwrap();
        assert_eq!(
            (s.dims(), s.as_slice::<i32>().unwrap()),
            (&[1, 1][..], &[10][..])
        );
        let m = reduce(
            &Tensor::vector::<i32>(vec![1, 2, 4]),
            &[0],
            false,
            ReduceOp::Mean,
        )
        .unwrap();
        assert_eq!(m.as_slice::<i32>().unwrap(), &[2]);
        let c = reduce(&t, &[0], false, ReduceOp::Max).unwrap();
        assert_eq!(c.as_slice::<i32>().unwrap(), &[3, 4]);
        let e =
            reduce(&Tensor::vector::<f32>(vec![]), &[0], false, ReduceOp::Max)
                .unwrap();
        assert_eq!(e.as_slice::<f32>().unwrap(), &[f32::NEG_INFINITY]);
        assert!(reduce(&t, &[2], false, ReduceOp::Sum).is_err());
    }

    #[test]
    fn float_sums_in_tensorflows_order() {
        let v: Vec<f32> = (0..24).map(|k| k as f32 * 1.37).collect();
        let t = Tensor::new::<f32>(vec![2, 3, 4], v).unwrap();
        // Axes 0 and 2: Eigen's generic reducer, axis 0 fastest.
        let s = reduce(&t, &[0, 2], false, ReduceOp::Sum).unwrap();
        assert_eq!(s.as_slice::<f32>().unwrap()[0], 82.200_005);
        // Innermost: each run in packet order.
        let m = reduce(&t, &[2], false, ReduceOp::Mean).unwrap();
        assert_eq!(m.as_slice::<f32>().unwrap()[3], 18.494_999);
    }

    #[test]
    fn arg_reduce_as_tensorflow() {
        let nan = f32::NAN;
        let t = Tensor::new::<f32>(
            vec![3, 3],
            vec![1.0, 3.0, 3.0, nan, 2.0, 5.0, nan, nan, nan],
        )
        .unwrap();
        let max = arg_reduce(&t, 1, true, DType::I64).unwrap();
        assert_eq!(max.as_slice::<i64>().unwrap(), &[1, 2, 0]);
        let min = arg_reduce(&t, 1, false, DType::I32).unwrap();
        assert_eq!(min.as_slice::<i32>().unwrap(), &[0, 1, 0]);
        let col = arg_reduce(&t, 0, true, DType::I64).unwrap();
        assert_eq!(col.as_slice::<i64>().unwrap(), &[0, 0, 1]);
        let empty = Tensor::new::<f32>(vec![0, 3], vec![]).unwrap();
        let e = arg_reduce(&empty, 0, true, DType::I64).unwrap_err();
        assert!(e.message().contains("Reduction axis 0 is empty"), "{e}");
    }

    #[test]
    fn gather_as_tensorflow() {
        let p =
            Tensor::new::<i32>(vec![2, 3], vec![1, 2, 3, 4, 5, 6]).unwrap();
        let g = gather(&p, &Tensor::vector::<i64>(vec![1, 1, 0]), 0).unwrap();
        assert_eq!(g.dims(), &[3, 3]);
        assert_eq!(g.as_slice::<i32>().unwrap(), &[4, 5, 6, 4, 5, 6, 1, 2, 3]);
        let i = Tensor::new::<i32>(vec![2, 1], vec![2, 0]).unwrap();
        let g = gather(&p, &i, 1).unwrap();
        assert_eq!(g.dims(), &[2, 2, 1]);
        assert_eq!(g.as_slice::<i32>().unwrap(), &[3, 1, 6, 4]);
        let e = gather(&p, &Tensor::vector::<i32>(vec![0, 2]), 0).unwrap_err();
        assert!(e.message().contains("indices[1] = 2 is not in [0, 2)"));
    }

    #[test]
    fn exact_unary_ops() {
        let f = Tensor::vector::<f32>(vec![-2.5, 0.5, 1.5, 4.0]);
        let r = unary(UnaryOp::Round, &f).unwrap();
        assert_eq!(r.as_slice::<f32>().unwrap(), &[-2.0, 0.0, 2.0, 4.0]);
        let i = Tensor::vector::<i32>(vec![i32::MIN, -3]);
        assert_eq!(
            unary(UnaryOp::Abs, &i).unwrap().as_slice::<i32>().unwrap(),
            &[i32::MIN, 3]
        );
        assert!(unary(UnaryOp::Sqrt, &i).is_err());
    }

    #[test]
    fn where_as_tensorflow() {
        let c =
            Tensor::new::<bool>(vec![2, 2], vec![true, false, false, true])
                .unwrap();
        let x = Tensor::new::<i32>(vec![2, 2], vec![1, 2, 3, 4]).unwrap();
        let y = Tensor::new::<i32>(vec![2, 2], vec![5, 6, 7, 8]).unwrap();
        assert_eq!(
            select(&c, &x, &y).unwrap().as_slice::<i32>().unwrap(),
            &[1, 6, 7, 4]
        );
        let rows = Tensor::vector::<bool>(vec![false, true]);
        assert_eq!(
            select(&rows, &x, &y).unwrap().as_slice::<i32>().unwrap(),
            &[5, 6, 3, 4]
        );
        let w = where_true(&c).unwrap();
        assert_eq!(w.dims(), &[2, 2]);
        assert_eq!(w.as_slice::<i64>().unwrap(), &[0, 0, 1, 1]);
    }

    #[test]
    fn compare_as_tensorflow() {
        let a = Tensor::vector::<i32>(vec![1, 5]);
        let c = compare(CmpOp::Less, &a, &Tensor::scalar::<i32>(3)).unwrap();
        assert_eq!(c.as_slice::<bool>().unwrap(), &[true, false]);
        let s = Tensor::new(
            vec![2],
            vec![bytes::Bytes::from("a"), bytes::Bytes::from("b")],
        )
        .unwrap();
        let e = compare(CmpOp::Equal, &s, &Tensor::string("a")).unwrap();
        assert_eq!(e.as_slice::<bool>().unwrap(), &[true, false]);
        assert!(compare(CmpOp::Less, &s, &s).is_err());
    }
}
