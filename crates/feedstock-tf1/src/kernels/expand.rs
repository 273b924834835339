//! Ops whose output is sized by a user's value rather than by their
//! input: `tf.tile`'s multiples, `tf.fill`'s shape, `tf.one_hot`'s depth.
//! Each checks the size and allocates its output once, fallibly, so an
//! absurd size is a ResourceExhausted error ("OOM when allocating tensor
//! with shape[...]", as TensorFlow words it) and never an abort.
//!
//! ```
//! use feedstock_tf1::kernels::expand::{one_hot, tile};
//! use feedstock::tensor::Tensor;
//! use feedstock::Kind;
//!
//! let t = tile(&Tensor::vector(vec![1i32, 2]), &[3])?;
//! assert_eq!(t.as_slice::<i32>()?, &[1, 2, 1, 2, 1, 2]);
//! let e = tile(&Tensor::vector(vec![1.0f32]), &[1 << 40]).unwrap_err();
//! assert_eq!(e.kind(), Kind::ResourceExhausted);
//! let (on, off) = (Tensor::scalar(1.0f32), Tensor::scalar(0.0f32));
//! let h = one_hot(&Tensor::vector(vec![1i64]), 3, &on, &off, -1)?;
//! assert_eq!(h.as_slice::<f32>()?, &[0.0, 1.0, 0.0]);
//! # Ok::<(), feedstock::Error>(())
//! ```

use feedstock::error::{Error, Result};
use feedstock::tensor::{DType, Data, Shape, Tensor};

/// Runs `$body` with `$a` and `$b` bound to the vectors of two [`Data`] of
/// one variant; `$other` for two of different variants.
macro_rules! same_variant {
    ($x:expr, $y:expr, ($a:ident, $b:ident) => $body:expr, $other:expr) => {
        match ($x, $y) {
            (Data::Bool($a), Data::Bool($b)) => $body,
            (Data::U8($a), Data::U8($b)) => $body,
            (Data::I8($a), Data::I8($b)) => $body,
            (Data::U16($a), Data::U16($b)) => $body,
            (Data::I16($a), Data::I16($b)) => $body,
            (Data::U32($a), Data::U32($b)) => $body,
            (Data::I32($a), Data::I32($b)) => $body,
            (Data::U64($a), Data::U64($b)) => $body,
            (Data::I64($a), Data::I64($b)) => $body,
            (Data::F32($a), Data::F32($b)) => $body,
            (Data::F64($a), Data::F64($b)) => $body,
            (Data::F16($a), Data::F16($b)) => $body,
            (Data::BF16($a), Data::BF16($b)) => $body,
            (Data::C64($a), Data::C64($b)) => $body,
            (Data::C128($a), Data::C128($b)) => $body,
            (Data::String($a), Data::String($b)) => $body,
            _ => $other,
        }
    };
}

/// `dims` with dimension `k` multiplied by `m`, or the OOM error for the
/// whole tiled shape when that overflows.
fn tiled_dims(
    dims: &[usize],
    multiples: &[usize],
    dtype: DType,
) -> Result<Vec<usize>> {
    let out: Option<Vec<usize>> = dims
        .iter()
        .zip(multiples)
        .map(|(&d, &m)| d.checked_mul(m))
        .collect();
    let out = out.ok_or_else(|| {
        let shown: Vec<usize> = dims
            .iter()
            .zip(multiples)
            .map(|(&d, &m)| d.saturating_mul(m))
            .collect();
        feedstock::tensor::oom(&shown, dtype)
    })?;
    Ok(out)
}

/// `t` repeated `multiples[k]` times along each axis `k` (`tf.tile`).
///
/// # Errors
/// InvalidArgument when `multiples` has not one entry per dimension
/// (TensorFlow's words); ResourceExhausted when memory cannot hold the
/// output, whose shape the message gives.
pub fn tile(t: &Tensor, multiples: &[usize]) -> Result<Tensor> {
    if multiples.len() != t.rank() {
        return Err(Error::invalid_argument(format!(
            "Expected multiples argument to be a vector of length {} but \
             got length {}",
            t.rank(),
            multiples.len()
        )));
    }
    let dtype = t.dtype();
    let final_dims = tiled_dims(t.dims(), multiples, dtype)?;
    if Shape::from(&final_dims[..]).checked_num_elements().is_err() {
        return Err(feedstock::tensor::oom(&final_dims, dtype));
    }
    if final_dims.contains(&0) {
        return Tensor::zeros(dtype, final_dims);
    }
    let mut out = t.clone();
    for (k, &m) in multiples.iter().enumerate() {
        if m == 1 {
            continue;
        }
        let dims = out.dims().to_vec();
        let mut next = dims.clone();
        next[k] *= m;
        // Each of the `outer` blocks of axes `k..` is written `m` times.
        let outer: usize = dims[..k].iter().product();
        let block: usize = dims[k..].iter().product();
        // A failure names the whole output, as TensorFlow's does.
        let mut data = Data::try_with_capacity_as(dtype, &next)
            .map_err(|_| feedstock::tensor::oom(&final_dims, dtype))?;
        same_variant!(&mut data, out.data(), (dst, src) => {
            for o in 0..outer {
                let rows = &src[o * block..(o + 1) * block];
                for _ in 0..m {
                    dst.extend_from_slice(rows);
                }
            }
        }, return Err(Error::internal("tile: a dtype changed")));
        out = Tensor::from_data(next, data)?;
    }
    Ok(out)
}

/// A tensor of `dims` holding the scalar `value` everywhere (`tf.fill`).
///
/// # Errors
/// InvalidArgument when `value` is not a scalar; ResourceExhausted when
/// memory cannot hold the output.
pub fn fill(dims: &[usize], value: &Tensor) -> Result<Tensor> {
    Tensor::filled(dims.to_vec(), value)
}

/// `tf.one_hot`: for each index, a vector of `depth` holding `on` at the
/// index and `off` elsewhere (all `off` for an index outside
/// `0..depth`), inserted as axis `axis` (-1: last).
///
/// # Errors
/// InvalidArgument for indices not int32/int64 (or uint8), `on`/`off`
/// that are not scalars of one dtype, or an axis out of range;
/// ResourceExhausted when memory cannot hold the output.
pub fn one_hot(
    indices: &Tensor,
    depth: usize,
    on: &Tensor,
    off: &Tensor,
    axis: i64,
) -> Result<Tensor> {
    if on.rank() != 0 || off.rank() != 0 || on.dtype() != off.dtype() {
        return Err(Error::invalid_argument(
            "one_hot: on_value and off_value must be scalars of one dtype",
        ));
    }
    let rank = indices.rank();
    let axis = if axis == -1 { rank } else { axis as usize };
    if axis > rank {
        return Err(Error::invalid_argument(format!(
            "Expected axis to be -1 or between [0, {rank}).  But received: \
             {axis}"
        )));
    }
    let idx = indices.cast(DType::I64)?;
    let idx = idx.as_slice::<i64>()?;
    let dims = indices.dims();
    let mut out_dims = dims[..axis].to_vec();
    out_dims.push(depth);
    out_dims.extend_from_slice(&dims[axis..]);
    let Ok(n) = Shape::from(&out_dims[..]).checked_num_elements() else {
        return Err(feedstock::tensor::oom(&out_dims, on.dtype()));
    };
    let mut data = Data::try_filled_as(off.data(), n, &out_dims)?;
    let inner: usize = dims[axis..].iter().product();
    same_variant!(&mut data, on.data(), (dst, value) => {
        for (p, &i) in idx.iter().enumerate() {
            if (0..depth as i64).contains(&i) {
                let (o, r) = (p / inner.max(1), p % inner.max(1));
                let at = (o * depth + i as usize) * inner + r;
                dst[at..=at].clone_from_slice(&value[..1]);
            }
        }
    }, return Err(Error::internal("one_hot: a dtype changed")));
    Tensor::from_data(out_dims, data)
}

#[cfg(test)]
mod tests {
    use super::*;
    use feedstock::Kind;

    #[test]
    fn tile_and_one_hot_as_tensorflow() {
        let t = Tensor::new([2, 2], vec![1i32, 2, 3, 4]).unwrap();
        let r = tile(&t, &[2, 3]).unwrap();
        assert_eq!(r.dims(), &[4, 6]);
        assert_eq!(
            r.as_slice::<i32>().unwrap(),
            &[
                1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4, 1, 2, 1, 2, 1, 2, 3, 4, 3,
                4, 3, 4
            ]
        );
        assert_eq!(tile(&t, &[0, 3]).unwrap().dims(), &[0, 6]);
        let idx = Tensor::new([2, 2], vec![0i64, 2, 1, 5]).unwrap();
        let (on, off) = (Tensor::scalar(7i32), Tensor::scalar(-1i32));
        let h = one_hot(&idx, 3, &on, &off, 1).unwrap();
        assert_eq!(h.dims(), &[2, 3, 2]);
        assert_eq!(
            h.as_slice::<i32>().unwrap(),
            &[7, -1, -1, -1, -1, 7, -1, -1, 7, -1, -1, -1]
        );
        let h = one_hot(&idx, 3, &on, &off, 0).unwrap();
        assert_eq!(h.dims(), &[3, 2, 2]);
        assert_eq!(
            h.as_slice::<i32>().unwrap(),
            &[7, -1, -1, -1, -1, -1, 7, -1, -1, 7, -1, -1]
        );
    }

    #[test]
    fn tile_as_tensorflow() {
        let t = Tensor::new::<i32>(vec![1, 2], vec![1, 2]).unwrap();
        let r = tile(&t, &[2, 2]).unwrap();
        assert_eq!(r.dims(), &[2, 4]);
        assert_eq!(r.as_slice::<i32>().unwrap(), &[1, 2, 1, 2, 1, 2, 1, 2]);
        assert_eq!(tile(&t, &[0, 3]).unwrap().dims(), &[0, 6]);
        assert!(tile(&t, &[2]).is_err());
    }

    #[test]
    fn fill_repeats_a_scalar() {
        let t = fill(&[2, 3], &Tensor::scalar::<i32>(7)).unwrap();
        assert_eq!(t.dims(), &[2, 3]);
        assert_eq!(t.as_slice::<i32>().unwrap(), &[7; 6]);
        let e = fill(&[0, 2], &Tensor::scalar::<f32>(1.0)).unwrap();
        assert_eq!(e.dims(), &[0, 2]);
        assert!(fill(&[2], &Tensor::vector::<i32>(vec![1, 2])).is_err());
    }

    #[test]
    fn one_hot_on_a_vector() {
        let i = Tensor::vector::<i32>(vec![0, 2, -1]);
        let (on, off) =
            (Tensor::scalar::<f32>(1.0), Tensor::scalar::<f32>(0.0));
        let h = one_hot(&i, 3, &on, &off, -1).unwrap();
        assert_eq!(h.dims(), &[3, 3]);
        assert_eq!(
            h.as_slice::<f32>().unwrap(),
            &[1., 0., 0., 0., 0., 1., 0., 0., 0.]
        );
        let h0 = one_hot(
            &Tensor::vector::<i64>(vec![1, 0]),
            2,
            &Tensor::scalar::<i32>(5),
            &Tensor::scalar::<i32>(-1),
            0,
        )
        .unwrap();
        assert_eq!(h0.as_slice::<i32>().unwrap(), &[-1, 5, 5, -1]);
    }

    #[test]
    fn absurd_sizes_are_resource_exhausted() {
        let one = Tensor::vector(vec![1.0f32]);
        for e in [
            tile(&one, &[1 << 40]).unwrap_err(),
            tile(&one, &[usize::MAX]).unwrap_err(),
            tile(
                &Tensor::new([1, 1], vec![1.0f32]).unwrap(),
                &[1 << 20, 1 << 20],
            )
            .unwrap_err(),
            one_hot(
                &Tensor::vector(vec![1i64]),
                1 << 40,
                &Tensor::scalar(1.0f32),
                &Tensor::scalar(0.0f32),
                -1,
            )
            .unwrap_err(),
            fill(&[1 << 40], &Tensor::scalar(1.0f32)).unwrap_err(),
            fill(&[1 << 40], &Tensor::string("x")).unwrap_err(),
            Tensor::zeros(DType::F64, [1 << 62]).unwrap_err(),
        ] {
            assert_eq!(e.kind(), Kind::ResourceExhausted, "{e}");
            assert!(e.is_out_of_memory(), "{e}");
            assert!(
                e.message()
                    .starts_with("OOM when allocating tensor with shape["),
                "{e}"
            );
        }
        let e = tile(
            &Tensor::new([1, 1], vec![1.0f32]).unwrap(),
            &[1 << 20, 1 << 20],
        )
        .unwrap_err();
        assert!(
            e.message().contains("shape[1048576,1048576] and type float32 (4398046511104 bytes)"),
            "{e}"
        );
    }
}
