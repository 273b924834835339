//! `tf.image.resize_bicubic` and `tf.image.resize_area` as TensorFlow's
//! `ResizeBicubic` and `ResizeArea` CPU kernels compute them
//! (`core/kernels/image/resize_bicubic_op.cc`, `resize_area_op.cc`): the
//! same `float32` scales, coefficient table, source indices and
//! summation order, so the results are TensorFlow's bits.

use std::sync::OnceLock;

use feedstock::error::{Error, Result};
use feedstock::tensor::{DType, Tensor};

/// The sizes and scales of one resize, checked as TensorFlow's
/// `ImageResizerState` checks them.
struct State {
    batch: usize,
    in_h: usize,
    in_w: usize,
    channels: usize,
    out_h: usize,
    out_w: usize,
    height_scale: f32,
    width_scale: f32,
}

impl State {
    /// TensorFlow's `ValidateAndCalculateOutputSize`, its checks in its
    /// order and with its messages.
    fn new(
        images: &Tensor,
        size: &Tensor,
        align_corners: bool,
        half_pixel_centers: bool,
    ) -> Result<State> {
        if half_pixel_centers && align_corners {
            return Err(Error::invalid_argument(
                "If half_pixel_centers is True, align_corners must be False.",
            ));
        }
        let d = images.dims();
        if d.len() != 4 {
            return Err(Error::invalid_argument(format!(
                "input must be 4-dimensional{}",
                images.shape()
            )));
        }
        let (batch, in_h, in_w, channels) = (d[0], d[1], d[2], d[3]);
        if channels == 0 {
            return Err(Error::invalid_argument(
                "image must have at least one channel",
            ));
        }
        if in_h == 0 || in_w == 0 {
            return Err(Error::invalid_argument(
                "input image must be of non-zero size",
            ));
        }
        if i32::try_from(in_h).is_err() || i32::try_from(in_w).is_err() {
            return Err(Error::invalid_argument(
                "input sizes must be between 0 and max int32",
            ));
        }
        if size.rank() != 1 {
            return Err(Error::invalid_argument(format!(
                "shape_t must be 1-dimensional{}",
                size.shape()
            )));
        }
        let s = size.cast(DType::I64)?;
        let [h, w] = s.as_slice::<i64>()? else {
            return Err(Error::invalid_argument(format!(
                "shape_t must have two elements{}",
                size.shape()
            )));
        };
        let (Ok(out_h), Ok(out_w)) =
            (usize::try_from(*h), usize::try_from(*w))
        else {
            return Err(Error::invalid_argument(
                "output dimensions must be positive",
            ));
        };
        if out_h == 0 || out_w == 0 {
            return Err(Error::invalid_argument(
                "output dimensions must be positive",
            ));
        }
        Ok(State {
            batch,
            in_h,
            in_w,
            channels,
            out_h,
            out_w,
            height_scale: scale(in_h, out_h, align_corners),
            width_scale: scale(in_w, out_w, align_corners),
        })
    }

    fn out_dims(&self) -> [usize; 4] {
        [self.batch, self.out_h, self.out_w, self.channels]
    }
}

/// TensorFlow's `CalculateResizeScale`.
fn scale(in_size: usize, out_size: usize, align_corners: bool) -> f32 {
    if align_corners && out_size > 1 {
        (in_size - 1) as f32 / (out_size - 1) as f32
    } else {
        in_size as f32 / out_size as f32
    }
}

/// TensorFlow's `Bound`: `v` clamped to `[0, limit)`.
fn bound(v: i64, limit: usize) -> usize {
    v.clamp(0, limit as i64 - 1) as usize
}

/// The entries of TensorFlow's bicubic coefficient table.
const TABLE: usize = 1 << 10;

/// TensorFlow's `InitCoeffsTable(a)`: for each of `TABLE + 1` fractions,
/// the weights of the near and the far neighbour, computed in double
/// precision and stored as `float32`.
fn coeffs_table(a: f64) -> Vec<f32> {
    let mut t = Vec::with_capacity((TABLE + 1) * 2);
    for i in 0..=TABLE {
        let x = f64::from((i as f64 * 1.0 / TABLE as f64) as f32);
        t.push((((a + 2.0) * x - (a + 3.0)) * x * x + 1.0) as f32);
        let x = f64::from((x + 1.0) as f32);
        t.push((((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a) as f32);
    }
    t
}

/// The table of the legacy kernel (`a = -0.75`) or of Keys' cubic
/// (`a = -0.5`, with half-pixel centres).
fn coeffs(keys_cubic: bool) -> &'static [f32] {
    static LEGACY: OnceLock<Vec<f32>> = OnceLock::new();
    static KEYS: OnceLock<Vec<f32>> = OnceLock::new();
    if keys_cubic {
        KEYS.get_or_init(|| coeffs_table(-0.5))
    } else {
        LEGACY.get_or_init(|| coeffs_table(-0.75))
    }
}

/// One output row's (or column's) four source indices and weights.
#[derive(Debug, Clone, Copy)]
struct Taps {
    index: [usize; 4],
    weight: [f32; 4],
}

/// TensorFlow's `GetWeightsAndIndices`; `keys_cubic` is
/// `half_pixel_centers` (Keys' cubic with the taps outside the image
/// dropped and the rest renormalised).
fn taps(scale: f32, out_loc: usize, limit: usize, keys_cubic: bool) -> Taps {
    let table = coeffs(keys_cubic);
    let in_loc_f = if keys_cubic {
        (out_loc as f32 + 0.5) * scale - 0.5
    } else {
        out_loc as f32 * scale
    };
    let in_loc = in_loc_f.floor() as i64;
    let delta = in_loc_f - in_loc as f32;
    let offset = (delta * TABLE as f32).round_ties_even() as i64;
    let offset = offset.clamp(0, TABLE as i64) as usize;
    let near = [
        table[offset * 2 + 1],
        table[offset * 2],
        table[(TABLE - offset) * 2],
        table[(TABLE - offset) * 2 + 1],
    ];
    let mut index = [0; 4];
    let mut weight = near;
    for k in 0..4 {
        let want = in_loc - 1 + k as i64;
        index[k] = bound(want, limit);
        if keys_cubic && index[k] as i64 != want {
            weight[k] = 0.0;
        }
    }
    if keys_cubic {
        let sum = weight[0] + weight[1] + weight[2] + weight[3];
        if sum.abs() >= 1000.0 * f32::MIN_POSITIVE {
            let inv = 1.0 / sum;
            for w in &mut weight {
                *w *= inv;
            }
        }
    }
    Taps { index, weight }
}

/// TensorFlow's `Interpolate1D`: `v0 w0 + v1 w1 + v2 w2 + v3 w3`, left to
/// right in `float32`.
fn interpolate(v: [f32; 4], w: [f32; 4]) -> f32 {
    v[0] * w[0] + v[1] * w[1] + v[2] * w[2] + v[3] * w[3]
}

/// `[batch, height, width, channels]` images of a real dtype resized to
/// `size` (an int32 `[height, width]`) by bicubic interpolation, as
/// TensorFlow's `ResizeBicubic`: `float32` output; each output pixel
/// interpolates four source columns down, then across. Without
/// `half_pixel_centers` the kernel is TensorFlow 1's (`a = -0.75`, edge
/// pixels repeated); with it, Keys' cubic (`a = -0.5`, taps outside the
/// image dropped).
///
/// # Errors
/// InvalidArgument with TensorFlow's messages for images not 4-D or
/// empty, a size not two positive values, or `half_pixel_centers` with
/// `align_corners`.
pub fn resize_bicubic(
    images: &Tensor,
    size: &Tensor,
    align_corners: bool,
    half_pixel_centers: bool,
) -> Result<Tensor> {
    let st = State::new(images, size, align_corners, half_pixel_centers)?;
    let dims = st.out_dims();
    let mut out = feedstock::tensor::try_vec::<f32>(&dims)?;
    let x = images.cast(DType::F32)?;
    let x = x.as_slice::<f32>()?;
    let c = st.channels;
    let xs: Vec<Taps> = (0..st.out_w)
        .map(|i| taps(st.width_scale, i, st.in_w, half_pixel_centers))
        .collect();
    let row = st.in_w * c;
    for img in x.chunks_exact(st.in_h * row) {
        for y in 0..st.out_h {
            let ty = taps(st.height_scale, y, st.in_h, half_pixel_centers);
            let rows = ty.index.map(|i| &img[i * row..(i + 1) * row]);
            for tx in &xs {
                for k in 0..c {
                    let cols = tx.index.map(|xi| {
                        let at = xi * c + k;
                        interpolate(rows.map(|r| r[at]), ty.weight)
                    });
                    out.push(interpolate(cols, tx.weight));
                }
            }
        }
    }
    Tensor::new(dims.to_vec(), out)
}

/// One output column's span of source columns and the shares of its
/// first and last (TensorFlow's `CachedInterpolation`).
struct Span {
    start: i64,
    end: i64,
    start_scale: f32,
    end_minus_one_scale: f32,
}

/// The share of source cell `v` in the output cell `[lo, hi)`, as
/// TensorFlow's `ResizeArea` computes it.
fn share(v: i64, lo: f32, hi: f32, cell: f32) -> f32 {
    if (v as f32) < lo {
        if (v + 1) as f32 > hi {
            cell
        } else {
            (v + 1) as f32 - lo
        }
    } else if (v + 1) as f32 > hi {
        hi - v as f32
    } else {
        1.0
    }
}

/// `[batch, height, width, channels]` images of a real dtype resized to
/// `size` by averaging the source area each output pixel covers, as
/// TensorFlow's `ResizeArea`: `float32` output; each source row's cells
/// summed (the first and last by their share), the rows summed by their
/// share, then scaled by `1 / (height_scale × width_scale)`.
///
/// # Errors
/// As [`resize_bicubic`].
pub fn resize_area(
    images: &Tensor,
    size: &Tensor,
    align_corners: bool,
) -> Result<Tensor> {
    let st = State::new(images, size, align_corners, false)?;
    let dims = st.out_dims();
    let mut out = feedstock::tensor::try_vec::<f32>(&dims)?;
    let x = images.cast(DType::F32)?;
    let x = x.as_slice::<f32>()?;
    let (c, ws, hs) = (st.channels, st.width_scale, st.height_scale);
    let spans: Vec<Span> = (0..st.out_w)
        .map(|i| {
            let lo = i as f32 * ws;
            let hi = (i + 1) as f32 * ws;
            let start = lo.floor() as i64;
            let end = hi.ceil() as i64;
            Span {
                start,
                end,
                start_scale: share(start, lo, hi, ws),
                end_minus_one_scale: share(end - 1, lo, hi, ws),
            }
        })
        .collect();
    let scale = (1.0 / f64::from(hs * ws)) as f32;
    let row = st.in_w * c;
    let mut rows: Vec<(&[f32], f32)> = Vec::new();
    for img in x.chunks_exact(st.in_h * row) {
        for y in 0..st.out_h {
            let lo = y as f32 * hs;
            let hi = (y + 1) as f32 * hs;
            rows.clear();
            for i in lo.floor() as i64..hi.ceil() as i64 {
                let r = bound(i, st.in_h);
                rows.push((
                    &img[r * row..(r + 1) * row],
                    share(i, lo, hi, hs),
                ));
            }
            for s in &spans {
                for k in 0..c {
                    let at = |xi: i64| bound(xi, st.in_w) * c + k;
                    let mut sum = 0.0f32;
                    for &(r, scale_y) in &rows {
                        let mut sum_y = r[at(s.start)] * s.start_scale;
                        if s.start + 1 != s.end {
                            for xi in s.start + 1..s.end - 1 {
                                sum_y += r[at(xi)];
                            }
                            sum_y += r[at(s.end - 1)] * s.end_minus_one_scale;
                        }
                        sum += sum_y * scale_y;
                    }
                    out.push(sum * scale);
                }
            }
        }
    }
    Tensor::new(dims.to_vec(), out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn size(h: i32, w: i32) -> Tensor {
        Tensor::vector(vec![h, w])
    }

    #[test]
    fn the_tables_weights_sum_to_one() {
        for keys in [false, true] {
            let t = coeffs(keys);
            for off in [0, 1, 300, 512, TABLE] {
                let s = t[off * 2 + 1]
                    + t[off * 2]
                    + t[(TABLE - off) * 2]
                    + t[(TABLE - off) * 2 + 1];
                assert!((s - 1.0).abs() < 1e-6, "{keys} {off}: {s}");
            }
        }
    }

    #[test]
    fn a_same_size_bicubic_or_area_resize_keeps_the_pixels() {
        let v: Vec<f32> = (0..2 * 3 * 4 * 2).map(|i| i as f32 * 0.5).collect();
        let t = Tensor::new([2, 3, 4, 2], v.clone()).unwrap();
        let s = size(3, 4);
        for hp in [false, true] {
            let r = resize_bicubic(&t, &s, false, hp).unwrap();
            assert_eq!(r.as_slice::<f32>().unwrap(), &v[..]);
        }
        let r = resize_area(&t, &s, false).unwrap();
        assert_eq!(r.as_slice::<f32>().unwrap(), &v[..]);
    }

    #[test]
    fn area_averages_what_each_pixel_covers() {
        // 4 wide to 2: each output the mean of two inputs.
        let t = Tensor::new([1, 1, 4, 1], vec![1u8, 3, 5, 9]).unwrap();
        let r = resize_area(&t, &size(1, 2), false).unwrap();
        assert_eq!(r.dims(), &[1, 1, 2, 1]);
        assert_eq!(r.as_slice::<f32>().unwrap(), &[2.0, 7.0]);
    }

    #[test]
    fn refuses_what_tensorflow_refuses() {
        let t = Tensor::new([1, 1, 1, 1], vec![1.0f32]).unwrap();
        let e = resize_bicubic(&t, &size(1, 1), true, true).unwrap_err();
        assert!(e.to_string().contains("half_pixel_centers"), "{e}");
        let e = resize_area(&t, &size(0, 1), false).unwrap_err();
        assert!(e.to_string().contains("must be positive"), "{e}");
        let e =
            resize_area(&t, &Tensor::vector(vec![1i32]), false).unwrap_err();
        assert!(e.to_string().contains("two elements"), "{e}");
        let flat = Tensor::new([1, 1], vec![1.0f32]).unwrap();
        assert!(resize_bicubic(&flat, &size(1, 1), false, false).is_err());
        let none = Tensor::new([1, 1, 1, 0], Vec::<f32>::new()).unwrap();
        let e = resize_area(&none, &size(1, 1), false).unwrap_err();
        assert!(e.to_string().contains("one channel"), "{e}");
    }
}
