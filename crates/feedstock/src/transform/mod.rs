//! Tensor transforms: the slicing, transposing, flipping, cropping and
//! normalization a pipeline applies to decoded images (the seed guide's
//! CIFAR-10 example uses all of them).
//!
//! Images are `[height, width, channels]` tensors, or `[batch, height,
//! width, channels]` where an op says so. Random ops take the caller's
//! random number generator, so a seeded `rand_chacha` generator gives the
//! same crops and flips on every run.
//!
//! ```
//! use feedstock::transform::{per_image_standardization, transpose};
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
use smallvec::SmallVec;

#[doc(hidden)] // For the TF1 crate's reductions, which share this order.
pub mod eigen;

use crate::error::{Error, Result};
use crate::tensor::{DType, Data, Dims, Tensor};

// ADVICE FOR HACKERS: slice, transpose and crop are all one operation, a
// strided copy: output element `i` (a multi-index over `out_dims`) comes
// from source offset `base + sum(i[k] * strides[k])`. `strided` first
// merges axes that are contiguous in the source and drops axes of extent
// one, then copies whole runs with `clone_from_slice` when the innermost
// axis is contiguous (slices and crops), or transposes 2-D blocks between
// the axis that is contiguous in the source and the output's innermost
// axis (CHW to HWC). Nothing is allocated per element; an earlier version
// listed every element's source offset first and was several times
// slower (benches/ops.rs keeps it as its baseline). Source strides may be
// negative (the graph layer's `strided_slice` with a negative step): they
// are carried as two's complement `usize` and every offset is computed
// with wrapping arithmetic, which gives the true offset, in bounds, for
// every element the output takes.

/// Row-major strides of `dims`.
fn strides(dims: &[usize]) -> Dims {
    let mut s = Dims::from_elem(1, dims.len());
    for k in (0..dims.len().saturating_sub(1)).rev() {
        s[k] = s[k + 1] * dims[k + 1];
    }
    s
}

/// `dims` and `strides` (two's complement where negative) without axes of
/// extent one, and with each axis merged into the one before it where the
/// two are contiguous in the source. Describes the same elements in the
/// same order.
fn coalesce(dims: &[usize], strides: &[isize]) -> (Dims, Dims) {
    let mut d = Dims::new();
    let mut s = Dims::new();
    for (&n, &st) in dims.iter().zip(strides) {
        let st = st as usize;
        if n == 1 {
            continue;
        }
        if let (Some(ld), Some(ls)) = (d.last_mut(), s.last_mut()) {
            if *ls == st.wrapping_mul(n) {
                *ld *= n;
                *ls = st;
                continue;
            }
        }
        d.push(n);
        s.push(st);
    }
    (d, s)
}

/// Calls `f(src, dst)` for every multi-index over `dims`, with `src` and
/// `dst` the offsets `sum(i[k] * a[k])` and `sum(i[k] * b[k])` added to
/// the bases (wrapping: a stride of `a` may be a negative one in two's
/// complement). The rank is small, so recursion is cheap.
fn walk(
    dims: &[usize],
    a: &[usize],
    b: &[usize],
    (src, dst): (usize, usize),
    f: &mut impl FnMut(usize, usize),
) {
    match dims.split_first() {
        None => f(src, dst),
        Some((&n, rest)) => {
            for i in 0..n {
                walk(
                    rest,
                    &a[1..],
                    &b[1..],
                    (src.wrapping_add(i.wrapping_mul(a[0])), dst + i * b[0]),
                    f,
                );
            }
        }
    }
}

/// The elements of `src` an output of `out_dims` takes from the offsets
/// `base + sum(i[k] * src_strides[k])`, in row-major output order. The
/// caller makes sure every such offset is within `src`.
fn strided_vec<T: Clone + Default>(
    src: &[T],
    out_dims: &[usize],
    src_strides: &[isize],
    base: usize,
) -> Vec<T> {
    let total: usize = out_dims.iter().product();
    if total == 0 {
        return Vec::new();
    }
    let (dims, st) = coalesce(out_dims, src_strides);
    let Some(last) = dims.len().checked_sub(1) else {
        return vec![src[base].clone()];
    };
    if st[last] == 1 {
        // Contiguous runs: slices and crops.
        let run = dims[last];
        let mut out = Vec::with_capacity(total);
        let zeros = Dims::from_elem(0, last);
        walk(
            &dims[..last],
            &st[..last],
            &zeros,
            (base, 0),
            &mut |p, _| out.extend_from_slice(&src[p..p + run]),
        );
        return out;
    }
    let ost = strides(&dims);
    let mut out = vec![T::default(); total];
    match st.iter().position(|&s| s == 1) {
        Some(a) => {
            // A transpose: axis `a` is contiguous in the source, the
            // last axis in the output. Read along `a`, write with the
            // output stride of `a`, one source row per step of the
            // last axis; the other axes are walked around that block.
            let (n_a, o_a) = (dims[a], ost[a]);
            let mut od = dims.clone();
            let mut os = st.clone();
            let mut oo = ost.clone();
            for v in [&mut od, &mut os, &mut oo] {
                v.remove(last);
                v.remove(a);
            }
            let (r, step) = (dims[last], st[last]);
            walk(&od, &os, &oo, (base, 0), &mut |p, q| {
                if a + 1 == last {
                    // The block is contiguous in the output: `n_a` runs
                    // of `r` elements, one from each source row (HWC
                    // pixels from CHW planes).
                    let block = &mut out[q..q + n_a * r];
                    interleave_rows(src, (p, step), r, block);
                } else {
                    let block = &mut out[q..];
                    scatter_rows(src, (p, step), (n_a, r), o_a, block);
                }
            });
        }
        None => {
            // Not reached for a contiguous source (its innermost axis of
            // extent above one has stride 1), kept for completeness.
            walk(&dims, &st, &ost, (base, 0), &mut |p, q| {
                out[q] = src[p].clone()
            });
        }
    }
    out
}

/// Fills `out` with `r` source rows (starting at `p`, `step` apart, a
/// negative step in two's complement)
/// interleaved: run `i` of `r` elements is `[row0[i], row1[i], ...]`, as
/// a CHW-to-HWC transpose writes pixels from planes. Shared with the
/// fixed-length image decoder.
pub(crate) fn interleave_rows<T: Clone>(
    src: &[T],
    (p, step): (usize, usize),
    r: usize,
    out: &mut [T],
) {
    match r {
        0 => {}
        2 => interleave::<T, 2>(src, (p, step), out),
        3 => interleave::<T, 3>(src, (p, step), out),
        4 => interleave::<T, 4>(src, (p, step), out),
        _ => scatter_rows(src, (p, step), (out.len() / r, r), r, out),
    }
}

/// [`interleave_rows`] with the row count a constant, so that the inner
/// loop unrolls and every index is seen in bounds: 1.55× the speed of
/// the `step_by` store of [`scatter_rows`] on a 32×32 RGB image. Built
/// for AVX2 and SSE4.1 too, chosen at run time: LLVM turns the loop into
/// byte shuffles only where the instruction set has them (x86-64's
/// baseline SSE2 has none).
#[multiversion::multiversion(targets("x86_64+avx2", "x86_64+sse4.1"))]
fn interleave<T: Clone, const R: usize>(
    src: &[T],
    (p, step): (usize, usize),
    out: &mut [T],
) {
    let n = out.len() / R;
    let rows: [&[T]; R] = std::array::from_fn(|c| {
        &src[p.wrapping_add(c.wrapping_mul(step))..][..n]
    });
    for (i, run) in out.chunks_exact_mut(R).enumerate() {
        for (d, row) in run.iter_mut().zip(rows) {
            *d = row[i].clone();
        }
    }
}

/// Copies `r` source rows of `n` elements (starting at `p`, `step` apart)
/// into `out`, element `i` of row `c` to `out[c + i * o_a]`: the general
/// transpose step, for any number of rows and any output stride.
fn scatter_rows<T: Clone>(
    src: &[T],
    (p, step): (usize, usize),
    (n, r): (usize, usize),
    o_a: usize,
    out: &mut [T],
) {
    for c in 0..r {
        let row = &src[p.wrapping_add(c.wrapping_mul(step))..][..n];
        let dst = out[c..].iter_mut().step_by(o_a);
        for (d, v) in dst.zip(row) {
            *d = v.clone();
        }
    }
}

/// The strided copy of [`strided_vec`] for any dtype: the elements of
/// `data` at the offsets `base + sum(i[k] * src_strides[k])` over every
/// multi-index `i` of `out_dims`, in row-major order. Strides may be
/// negative; the caller makes sure every offset is within `data`.
///
/// Public only for the TF1 crate's `strided_slice`, which checks the
/// offsets first (an offset outside `data` panics).
#[doc(hidden)]
pub fn strided(
    data: &Data,
    out_dims: &[usize],
    src_strides: &[isize],
    base: usize,
) -> Data {
    macro_rules! pick {
        ($($var:ident),*) => {
            match data {
                $(Data::$var(v) => Data::$var(
                    strided_vec(v, out_dims, src_strides, base)
                ),)*
            }
        };
    }
    pick!(
        Bool, U8, I8, U16, I16, U32, I32, U64, I64, F32, F64, F16, BF16, C64,
        C128, String
    )
}

/// Permutes the axes of `t`: axis `k` of the result is axis `perm[k]` of
/// `t`, as `tf.transpose` does.
///
/// # Errors
/// InvalidArgument when `perm` is not a permutation of `0..rank`.
pub fn transpose(t: &Tensor, perm: &[usize]) -> Result<Tensor> {
    let dims = t.dims();
    let mut seen: SmallVec<[bool; 8]> = SmallVec::from_elem(false, dims.len());
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
    let out_dims: Dims = perm.iter().map(|&p| dims[p]).collect();
    let out_strides: SmallVec<[isize; 8]> =
        perm.iter().map(|&p| src[p] as isize).collect();
    let data = strided(t.data(), &out_dims, &out_strides, 0);
    Tensor::from_data(&out_dims[..], data)
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
    let src: SmallVec<[isize; 8]> = src.iter().map(|&s| s as isize).collect();
    Tensor::from_data(size, strided(t.data(), size, &src, base))
}

/// Appends `block` to `out` with the order of its `n` sub-blocks of
/// `inner` elements reversed within each of its runs of `n * inner`.
fn push_reversed<T: Clone>(
    block: &[T],
    n: usize,
    inner: usize,
    out: &mut Vec<T>,
) {
    if n * inner == 0 {
        return;
    }
    for run in block.chunks_exact(n * inner) {
        for part in run.rchunks_exact(inner) {
            out.extend_from_slice(part);
        }
    }
}

/// Copies `t`'s elements in blocks of `block` elements (a whole tensor or
/// one image of a batch), reversing axis `axis` of `t` in the blocks for
/// which `flip` says so.
fn reverse_blocks(
    t: &Tensor,
    axis: usize,
    block: usize,
    mut flip: impl FnMut() -> bool,
) -> Data {
    let dims = t.dims();
    let n = dims[axis];
    let inner: usize = dims[axis + 1..].iter().product();
    macro_rules! pick {
        ($($var:ident),*) => {
            match t.data() {
                $(Data::$var(v) => {
                    let mut out = Vec::with_capacity(v.len());
                    for b in v.chunks(block.max(1)) {
                        if flip() {
                            push_reversed(b, n, inner, &mut out);
                        } else {
                            out.extend_from_slice(b);
                        }
                    }
                    Data::$var(out)
                })*
            }
        };
    }
    pick!(
        Bool, U8, I8, U16, I16, U32, I32, U64, I64, F32, F64, F16, BF16, C64,
        C128, String
    )
}

/// `t` with the order of its elements along `axis` reversed.
fn reverse(t: &Tensor, axis: usize) -> Result<Tensor> {
    let data = reverse_blocks(t, axis, t.num_elements(), || true);
    Tensor::from_data(t.dims().to_vec(), data)
}

/// The height, width and channel axes of an image of rank 3 or 4.
fn image_axes(t: &Tensor, op: &str) -> Result<(usize, usize)> {
    let axes = match t.rank() {
        3 => (0, 1),
        4 => (1, 2),
        r => {
            return Err(Error::invalid_argument(format!(
                "{op} needs an image [height, width, channels] or a batch \
                 [n, height, width, channels], got rank {r} shape {}",
                t.shape()
            )))
        }
    };
    check_inner_dims(t)?;
    Ok(axes)
}

/// TensorFlow's run-time check of an image op (`_CheckAtLeast3DImage`):
/// the height, width and channels must not be 0.
pub fn check_inner_dims(t: &Tensor) -> Result<()> {
    let d = t.dims();
    if d.len() >= 3 && d[d.len() - 3..].contains(&0) {
        return Err(Error::invalid_argument(
            "assertion failed: [inner 3 dims of 'image.shape' must be > 0.]",
        ));
    }
    Ok(())
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
    let (_, w) = image_axes(image, "random_flip_left_right")?;
    // One draw per image, in order: the same draws as flipping the images
    // one at a time.
    let block: usize = image.dims()[w - 1..].iter().product();
    let data = reverse_blocks(image, w, block, || rng.gen_bool(0.5));
    Tensor::from_data(image.dims().to_vec(), data)
}

/// Mirrors an image top to bottom with probability one half, as
/// `tf.image.random_flip_up_down` does; in a batch, each image is
/// flipped or not on its own draw.
///
/// # Errors
/// InvalidArgument unless `image` has rank 3 or 4.
pub fn random_flip_up_down<R: Rng + ?Sized>(
    image: &Tensor,
    rng: &mut R,
) -> Result<Tensor> {
    let (h, _) = image_axes(image, "random_flip_up_down")?;
    let block: usize = image.dims()[h..].iter().product();
    let data = reverse_blocks(image, h, block, || rng.gen_bool(0.5));
    Tensor::from_data(image.dims().to_vec(), data)
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
        let list = |v: &[usize]| {
            v.iter().map(usize::to_string).collect::<Vec<_>>().join(" ")
        };
        return Err(Error::invalid_argument(format!(
            "assertion failed: [Need value.shape >= size, got ] [{}] [{}]",
            list(dims),
            list(size)
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
/// `image` has rank 3 or more; the last three axes are one image. The
/// result is always `float32`, as in TensorFlow, computed as there: the
/// image is cast to `f32`, and the mean and the variance (the mean of the
/// squared deviations) are `f32` sums added in the order TensorFlow's CPU
/// kernel adds them, so the result is TensorFlow's bit for bit (for an
/// image of over ~108 000 values that order depends on the size of
/// TensorFlow's thread pool, taken as one thread per CPU).
///
/// # Errors
/// InvalidArgument for a rank under 3; Unimplemented, naming the dtype,
/// for a string or complex image (TensorFlow's cast to `float32`).
pub fn per_image_standardization(image: &Tensor) -> Result<Tensor> {
    if image.rank() < 3 {
        return Err(Error::invalid_argument(format!(
            "per_image_standardization needs an image of rank 3 or more, \
             got shape {}",
            image.shape()
        )));
    }
    check_inner_dims(image)?;
    if matches!(image.dtype(), DType::String | DType::C64 | DType::C128) {
        return Err(Error::unimplemented(format!(
            "per_image_standardization: cannot cast a {} image to float32",
            image.dtype()
        )));
    }
    let x = image.cast(DType::F32)?;
    let x = x.as_slice::<f32>()?;
    let dims = image.dims();
    let n: usize = dims[dims.len() - 3..].iter().product();
    let images = x.len().checked_div(n).unwrap_or(0);
    let count = n as f32;
    let min_stddev = 1.0 / count.sqrt();
    let mut squares = Vec::with_capacity(n);
    let mut out = Vec::with_capacity(x.len());
    for (k, img) in x.chunks(n.max(1)).enumerate() {
        // Sums in the order of TensorFlow's `reduce_mean` over the last
        // three axes of this shape (see `eigen::image_sum`).
        let mean = eigen::image_sum(img, k, images) / count;
        squares.clear();
        squares.extend(img.iter().map(|v| (v - mean) * (v - mean)));
        let var = eigen::image_sum(&squares, k, images) / count;
        let adjusted = var.sqrt().max(min_stddev);
        out.extend(img.iter().map(|v| (v - mean) / adjusted));
    }
    Tensor::new(dims.to_vec(), out)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// The reference: each output element's source offset computed from
    /// its multi-index, one element at a time.
    fn naive(
        src: &[i32],
        out_dims: &[usize],
        st: &[usize],
        base: usize,
    ) -> Vec<i32> {
        let total: usize = out_dims.iter().product();
        (0..total)
            .map(|flat| {
                let mut rem = flat;
                let mut p = base;
                for k in (0..out_dims.len()).rev() {
                    p += (rem % out_dims[k]) * st[k];
                    rem /= out_dims[k];
                }
                src[p]
            })
            .collect()
    }

    /// A shape of rank 1 to 5 with small extents (zero included), and
    /// tensor values 0, 1, 2, ... so every element is distinct.
    fn shape() -> impl Strategy<Value = Vec<usize>> {
        prop::collection::vec(0usize..5, 1..=5)
    }

    fn iota(dims: &[usize]) -> Tensor {
        let n: usize = dims.iter().product();
        Tensor::new(dims.to_vec(), (0..n as i32).collect()).unwrap()
    }

    proptest! {
        #[test]
        fn transpose_matches_the_reference(
            dims in shape(),
            seed in any::<u64>(),
        ) {
            use rand::seq::SliceRandom;
            use rand::SeedableRng;
            let mut perm: Vec<usize> = (0..dims.len()).collect();
            perm.shuffle(&mut rand_chacha::ChaCha8Rng::seed_from_u64(seed));
            let t = iota(&dims);
            let got = transpose(&t, &perm).unwrap();
            let src = strides(&dims);
            let out_dims: Vec<usize> = perm.iter().map(|&p| dims[p]).collect();
            let st: Vec<usize> = perm.iter().map(|&p| src[p]).collect();
            prop_assert_eq!(got.dims(), &out_dims[..]);
            prop_assert_eq!(
                got.as_slice::<i32>().unwrap(),
                &naive(t.as_slice::<i32>().unwrap(), &out_dims, &st, 0)[..]
            );
        }

        #[test]
        fn slice_matches_the_reference(
            dims in shape(),
            cuts in prop::collection::vec((0usize..5, 0usize..5), 5),
        ) {
            let t = iota(&dims);
            let begin: Vec<usize> =
                dims.iter().zip(&cuts).map(|(d, c)| c.0.min(*d)).collect();
            let size: Vec<usize> = dims
                .iter()
                .zip(&begin)
                .zip(&cuts)
                .map(|((d, b), c)| c.1.min(d - b))
                .collect();
            let got = slice(&t, &begin, &size).unwrap();
            let st = strides(&dims);
            let base = begin.iter().zip(&st).map(|(b, s)| b * s).sum();
            prop_assert_eq!(got.dims(), &size[..]);
            prop_assert_eq!(
                got.as_slice::<i32>().unwrap(),
                &naive(t.as_slice::<i32>().unwrap(), &size, &st, base)[..]
            );
        }

        #[test]
        fn flips_match_the_reference(
            dims in prop::collection::vec(0usize..5, 3..=4),
        ) {
            let t = iota(&dims);
            if dims[dims.len() - 3..].contains(&0) {
                // TensorFlow's run-time check refuses an empty image.
                prop_assert!(flip_left_right(&t).is_err());
                prop_assert!(flip_up_down(&t).is_err());
                return Ok(());
            }
            let (h, w) = if dims.len() == 3 { (0, 1) } else { (1, 2) };
            for (axis, got) in [
                (w, flip_left_right(&t).unwrap()),
                (h, flip_up_down(&t).unwrap()),
            ] {
                // Reversing an axis is a strided walk from its far end.
                let st = strides(&dims);
                let total: usize = dims.iter().product();
                let want: Vec<i32> = if total == 0 {
                    Vec::new()
                } else {
                    (0..total)
                        .map(|flat| {
                            let mut rem = flat;
                            let mut p = 0;
                            for k in (0..dims.len()).rev() {
                                let mut i = rem % dims[k];
                                if k == axis {
                                    i = dims[k] - 1 - i;
                                }
                                p += i * st[k];
                                rem /= dims[k];
                            }
                            p as i32
                        })
                        .collect()
                };
                prop_assert_eq!(got.as_slice::<i32>().unwrap(), &want[..]);
            }
        }
    }

    #[test]
    fn strings_are_sliced_and_transposed_too() {
        let words: Vec<bytes::Bytes> = ["a", "b", "c", "d", "e", "f"]
            .map(bytes::Bytes::from)
            .to_vec();
        let t = Tensor::new([2, 3], words).unwrap();
        let tr = transpose(&t, &[1, 0]).unwrap();
        let got: Vec<&[u8]> = tr
            .as_slice::<bytes::Bytes>()
            .unwrap()
            .iter()
            .map(|b| &b[..])
            .collect();
        assert_eq!(got, [b"a", b"d", b"b", b"e", b"c", b"f"]);
        let s = slice(&t, &[1, 1], &[1, 2]).unwrap();
        assert_eq!(
            s.as_slice::<bytes::Bytes>().unwrap(),
            &["e", "f"].map(bytes::Bytes::from)
        );
    }

    #[test]
    fn random_flip_of_a_batch_draws_once_per_image_in_order() {
        use rand::{Rng, SeedableRng};
        let batch = iota(&[5, 2, 3, 2]);
        let out = random_flip_left_right(
            &batch,
            &mut rand_chacha::ChaCha8Rng::seed_from_u64(9),
        )
        .unwrap();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        for (i, image) in batch.unstack().iter().enumerate() {
            let want = if rng.gen_bool(0.5) {
                flip_left_right(image).unwrap()
            } else {
                image.clone()
            };
            assert_eq!(out.index(i).unwrap(), want, "image {i}");
        }
    }

    /// The bits of `tf.image.per_image_standardization` (TensorFlow 2.21
    /// on x86-64) for these images.
    #[test]
    fn standardization_is_bit_exact_with_tensorflow() {
        let bits = |t: &Tensor, at: &[usize]| -> Vec<u32> {
            let v = t.as_slice::<f32>().unwrap();
            at.iter().map(|&i| v[i].to_bits()).collect()
        };
        let small: Vec<f32> =
            (0..30).map(|i| i as f32 * 0.37f32 - 1.1f32).collect();
        let out =
            per_image_standardization(&Tensor::new([3, 5, 2], small).unwrap())
                .unwrap();
        assert_eq!(out.dtype(), DType::F32);
        assert_eq!(
            bits(&out, &[0, 1, 14, 15, 29]),
            [0xbfd66e7c, 0xbfc7a4a9, 0xbd6c9d0d, 0x3d6c9d5d, 0x3fd66e7d]
        );
        // Over 8192 values Eigen splits the sums in halves; the values
        // (pseudo-random in [-100, 100)) are within one ulp of
        // TensorFlow's (most are equal).
        let noise = |n: u64| -> Vec<f32> {
            (0..n)
                .map(|i| {
                    let h = (i * 2_654_435_761 + 12_345) % (1 << 32);
                    (h as f64 / 4_294_967_296.0 * 200.0 - 100.0) as f32
                })
                .collect()
        };
        let big = noise(10_000);
        let other: Vec<f32> = big.iter().rev().map(|v| v * 0.5).collect();
        let batch =
            Tensor::new([2, 100, 100, 1], [big, other].concat()).unwrap();
        let two = per_image_standardization(&batch).unwrap();
        let got = bits(&two, &[0, 1, 5000, 9999, 10_000, 19_999]);
        let want = [
            0xbfdda7a1u32,
            0x3ed17c12,
            0xbf924f19,
            0x3f44c9da,
            0x3f44c9da,
            0xbfdda7a1,
        ];
        for (g, w) in got.iter().zip(want) {
            assert!(g.abs_diff(w) <= 1, "{g:#x} vs TensorFlow's {w:#x}");
        }
    }

    #[test]
    fn standardization_takes_any_rank_from_3_and_is_float32() {
        let x = Tensor::new([1, 1, 2, 2, 1], vec![1u8, 2, 3, 4]).unwrap();
        let out = per_image_standardization(&x).unwrap();
        assert_eq!(out.dtype(), DType::F32);
        assert_eq!(out.dims(), &[1, 1, 2, 2, 1]);
        let f64s = Tensor::new([2, 2, 1], vec![1.0f64; 4]).unwrap();
        assert_eq!(
            per_image_standardization(&f64s).unwrap().dtype(),
            DType::F32
        );
        assert!(
            per_image_standardization(&Tensor::vector(vec![1.0f32])).is_err()
        );
        let s = Tensor::new([1, 1, 1], vec![bytes::Bytes::from_static(b"x")])
            .unwrap();
        assert_eq!(
            per_image_standardization(&s).unwrap_err().kind(),
            crate::Kind::Unimplemented
        );
    }

    #[test]
    fn crop_to_bounding_box_crops_each_image_of_a_batch() {
        let x =
            Tensor::new([2, 3, 3, 1], (0u8..18).collect::<Vec<_>>()).unwrap();
        let c = crop_to_bounding_box(&x, 1, 1, 2, 1).unwrap();
        assert_eq!(c.dims(), &[2, 2, 1, 1]);
        assert_eq!(c.as_slice::<u8>().unwrap(), &[4, 7, 13, 16]);
        assert!(crop_to_bounding_box(&x, 2, 0, 2, 1).is_err());
    }
}
