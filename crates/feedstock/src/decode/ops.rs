//! Preprocessing ops: the slicing, transposing, flipping, cropping and
//! normalization a pipeline applies to decoded images (the seed guide's
//! CIFAR-10 example uses all of them).
//!
//! Images are `[height, width, channels]` tensors, or `[batch, height,
//! width, channels]` where an op says so. Random ops take the caller's
//! random number generator, so a seeded `rand_chacha` generator gives the
//! same crops and flips on every run.
//!
//! ```
//! use feedstock::decode::ops::{per_image_standardization, transpose};
//! use feedstock::Tensor;
//!
//! // A CIFAR-10 record stores its image depth-major: [3, 32, 32].
//! let depth_major = Tensor::new([3, 1, 2], vec![1u8, 2, 3, 4, 5, 6])?;
//! let image = transpose(&depth_major, &[1, 2, 0])?;
//! assert_eq!(image.dims(), &[1, 2, 3]);
//! assert_eq!(image.as_slice::<u8>()?, &[1, 3, 5, 2, 4, 6]);
//!
//! let norm = per_image_standardization(&image)?;
//! let mean: f32 = norm.as_slice::<f32>()?.iter().sum::<f32>() / 6.0;
//! assert!(mean.abs() < 1e-6);
//! # Ok::<(), feedstock::Error>(())
//! ```

use rand::Rng;

use crate::error::{Error, Result};
use crate::tensor::{DType, Data, Tensor};

/// The elements of `data` at the flat positions `idx`, in that order.
pub(crate) fn gather(data: &Data, idx: &[usize]) -> Data {
    macro_rules! pick {
        ($($var:ident),*) => {
            match data {
                $(Data::$var(v) => {
                    Data::$var(idx.iter().map(|&i| v[i].clone()).collect())
                })*
            }
        };
    }
    pick!(Bool, U8, I8, U16, I16, U32, I32, U64, I64, F32, F64, String)
}

/// Row-major strides of `dims`.
fn strides(dims: &[usize]) -> Vec<usize> {
    let mut s = vec![1; dims.len()];
    for k in (0..dims.len().saturating_sub(1)).rev() {
        s[k] = s[k + 1] * dims[k + 1];
    }
    s
}

/// The flat source positions of an output of `out_dims` whose element at
/// multi-index `i` comes from `base + sum(i[k] * src_strides[k])`.
fn positions(
    out_dims: &[usize],
    src_strides: &[usize],
    base: usize,
) -> Vec<usize> {
    let total: usize = out_dims.iter().product();
    let mut out = Vec::with_capacity(total);
    if total == 0 {
        return out;
    }
    let rank = out_dims.len();
    let mut index = vec![0usize; rank];
    let mut pos = base;
    for _ in 0..total {
        out.push(pos);
        // Advance the odometer, innermost axis first.
        for k in (0..rank).rev() {
            index[k] += 1;
            pos += src_strides[k];
            if index[k] < out_dims[k] {
                break;
            }
            pos -= src_strides[k] * out_dims[k];
            index[k] = 0;
        }
    }
    out
}

/// Permutes the axes of `t`: axis `k` of the result is axis `perm[k]` of
/// `t`, as `tf.transpose` does.
///
/// # Errors
/// InvalidArgument when `perm` is not a permutation of `0..rank`.
pub fn transpose(t: &Tensor, perm: &[usize]) -> Result<Tensor> {
    let dims = t.dims();
    let mut seen = vec![false; dims.len()];
    let valid = perm.len() == dims.len()
        && perm.iter().all(|&p| {
            p < dims.len() && !std::mem::replace(&mut seen[p], true)
        });
    if !valid {
        return Err(Error::invalid_argument(format!(
            "{perm:?} is not a permutation of the {} axes of shape {}",
            dims.len(),
            t.shape()
        )));
    }
    let src = strides(dims);
    let out_dims: Vec<usize> = perm.iter().map(|&p| dims[p]).collect();
    let out_strides: Vec<usize> = perm.iter().map(|&p| src[p]).collect();
    let idx = positions(&out_dims, &out_strides, 0);
    Tensor::from_data(out_dims, gather(t.data(), &idx))
}

/// The block of `t` starting at `begin` with extent `size` on each axis,
/// as `tf.slice` does.
///
/// # Errors
/// InvalidArgument when `begin` or `size` do not have one entry per axis
/// or the block does not fit inside `t`.
pub fn slice(t: &Tensor, begin: &[usize], size: &[usize]) -> Result<Tensor> {
    let dims = t.dims();
    let fits = begin.len() == dims.len()
        && size.len() == dims.len()
        && (0..dims.len()).all(|k| {
            begin[k].checked_add(size[k]).is_some_and(|e| e <= dims[k])
        });
    if !fits {
        return Err(Error::invalid_argument(format!(
            "slice begin {begin:?} size {size:?} does not fit shape {}",
            t.shape()
        )));
    }
    let src = strides(dims);
    let base = begin.iter().zip(&src).map(|(b, s)| b * s).sum();
    let idx = positions(size, &src, base);
    Tensor::from_data(size.to_vec(), gather(t.data(), &idx))
}

/// `t` with the order of its elements along `axis` reversed.
fn reverse(t: &Tensor, axis: usize) -> Result<Tensor> {
    let dims = t.dims();
    let src = strides(dims);
    let mut idx = positions(dims, &src, 0);
    let n = dims[axis];
    let s = src[axis];
    for p in &mut idx {
        let i = (*p / s) % n;
        *p = *p - i * s + (n - 1 - i) * s;
    }
    Tensor::from_data(dims.to_vec(), gather(t.data(), &idx))
}

/// The height, width and channel axes of an image of rank 3 or 4.
fn image_axes(t: &Tensor, op: &str) -> Result<(usize, usize)> {
    match t.rank() {
        3 => Ok((0, 1)),
        4 => Ok((1, 2)),
        r => Err(Error::invalid_argument(format!(
            "{op} needs an image [height, width, channels] or a batch \
             [n, height, width, channels], got rank {r} shape {}",
            t.shape()
        ))),
    }
}

/// Mirrors an image (or each image of a batch) left to right.
///
/// # Errors
/// InvalidArgument unless `image` has rank 3 or 4.
pub fn flip_left_right(image: &Tensor) -> Result<Tensor> {
    let (_, w) = image_axes(image, "flip_left_right")?;
    reverse(image, w)
}

/// Mirrors an image (or each image of a batch) top to bottom.
///
/// # Errors
/// InvalidArgument unless `image` has rank 3 or 4.
pub fn flip_up_down(image: &Tensor) -> Result<Tensor> {
    let (h, _) = image_axes(image, "flip_up_down")?;
    reverse(image, h)
}

/// Mirrors an image left to right with probability one half, as
/// `tf.image.random_flip_left_right` does; in a batch, each image is
/// flipped or not on its own draw.
///
/// # Errors
/// InvalidArgument unless `image` has rank 3 or 4.
pub fn random_flip_left_right<R: Rng + ?Sized>(
    image: &Tensor,
    rng: &mut R,
) -> Result<Tensor> {
    image_axes(image, "random_flip_left_right")?;
    if image.rank() == 3 {
        return if rng.gen_bool(0.5) {
            flip_left_right(image)
        } else {
            Ok(image.clone())
        };
    }
    let images: Vec<Tensor> = image
        .unstack()
        .iter()
        .map(|im| {
            if rng.gen_bool(0.5) {
                flip_left_right(im)
            } else {
                Ok(im.clone())
            }
        })
        .collect::<Result<_>>()?;
    if images.is_empty() {
        return Ok(image.clone());
    }
    Tensor::stack(&images)
}

/// A block of `size` at a random offset inside `t` (each offset uniform
/// over the positions where the block fits), as `tf.image.random_crop`
/// does.
///
/// # Errors
/// InvalidArgument when `size` does not have one entry per axis or is
/// larger than `t` on some axis.
pub fn random_crop<R: Rng + ?Sized>(
    t: &Tensor,
    size: &[usize],
    rng: &mut R,
) -> Result<Tensor> {
    let dims = t.dims();
    if size.len() != dims.len() || size.iter().zip(dims).any(|(s, d)| s > d) {
        return Err(Error::invalid_argument(format!(
            "cannot crop {size:?} out of shape {}",
            t.shape()
        )));
    }
    let begin: Vec<usize> = size
        .iter()
        .zip(dims)
        .map(|(s, d)| rng.gen_range(0..=d - s))
        .collect();
    slice(t, &begin, size)
}

/// The `target_height` × `target_width` window of an image (or of each
/// image of a batch) whose top-left corner is at (`offset_height`,
/// `offset_width`), as `tf.image.crop_to_bounding_box` does.
///
/// # Errors
/// InvalidArgument unless `image` has rank 3 or 4 and the window fits.
pub fn crop_to_bounding_box(
    image: &Tensor,
    offset_height: usize,
    offset_width: usize,
    target_height: usize,
    target_width: usize,
) -> Result<Tensor> {
    let (h, w) = image_axes(image, "crop_to_bounding_box")?;
    let mut begin = vec![0; image.rank()];
    let mut size = image.dims().to_vec();
    begin[h] = offset_height;
    begin[w] = offset_width;
    size[h] = target_height;
    size[w] = target_width;
    slice(image, &begin, &size)
}

/// Scales an image (or each image of a batch) to mean 0 and variance 1:
/// `(x - mean) / max(stddev, 1 / sqrt(N))` over its `N` = height × width
/// × channels values, as `tf.image.per_image_standardization` does. The
/// floor on the divisor keeps a uniform image from dividing by zero.
///
/// The result is `float64` for a `float64` image and `float32` otherwise.
/// Sums are accumulated in `f64`, so results can differ from TensorFlow's
/// `float32` reductions in the last bits.
///
/// # Errors
/// InvalidArgument unless `image` is numeric with rank 3 or 4.
pub fn per_image_standardization(image: &Tensor) -> Result<Tensor> {
    image_axes(image, "per_image_standardization")?;
    if !image.dtype().is_numeric() {
        return Err(Error::invalid_argument(format!(
            "per_image_standardization needs a numeric image, got {}",
            image.dtype()
        )));
    }
    let x = image.cast(DType::F64)?;
    let x = x.as_slice::<f64>()?;
    let n: usize = image.dims()[image.rank() - 3..].iter().product();
    let mut out = Vec::with_capacity(x.len());
    for img in x.chunks(n.max(1)) {
        let count = img.len() as f64;
        let mean = img.iter().sum::<f64>() / count;
        let var =
            img.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / count;
        let adjusted = var.sqrt().max(1.0 / count.sqrt());
        out.extend(img.iter().map(|v| (v - mean) / adjusted));
    }
    let t = Tensor::new(image.dims().to_vec(), out)?;
    if image.dtype() == DType::F64 {
        Ok(t)
    } else {
        t.cast(DType::F32)
    }
}
