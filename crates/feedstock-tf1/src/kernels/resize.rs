//! `tf.image.resize_bilinear` and `tf.image.resize_nearest_neighbor` as
//! TensorFlow's `ResizeBilinear` and `ResizeNearestNeighbor` CPU kernels
//! compute them: the same `float32` scales, source positions and
//! interpolation order, so the results are TensorFlow's bits.

use feedstock::error::{Error, Result};
use feedstock::tensor::{DType, Data, Tensor};

/// How a resize samples the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ResizeOptions {
    /// Bilinear interpolation (`float32` output) or the nearest pixel
    /// (the input's dtype).
    pub bilinear: bool,
    /// The corner pixels of input and output are aligned.
    pub align_corners: bool,
    /// Pixels are sampled at their centres (TensorFlow 2's convention).
    pub half_pixel_centers: bool,
}

/// `[batch, height, width, channels]` images resized to `out_h` ×
/// `out_w`.
///
/// # Errors
/// InvalidArgument with TensorFlow's messages for an input not 4-D, an
/// empty input, an output size of 0, or `half_pixel_centers` with
/// `align_corners`.
pub fn resize(
    images: &Tensor,
    out_h: usize,
    out_w: usize,
    opts: ResizeOptions,
) -> Result<Tensor> {
    if opts.half_pixel_centers && opts.align_corners {
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
    let (batch, in_h, in_w, c) = (d[0], d[1], d[2], d[3]);
    if out_h == 0 || out_w == 0 {
        return Err(Error::invalid_argument(
            "output dimensions must be positive",
        ));
    }
    if in_h == 0 || in_w == 0 {
        return Err(Error::invalid_argument(
            "input image must be of non-zero size",
        ));
    }
    let dims = vec![batch, out_h, out_w, c];
    // The output size is a user's value: the output is allocated
    // fallibly first, and only then the per-row and per-column tables (no
    // larger).
    if dims.contains(&0) {
        let dtype = if opts.bilinear {
            DType::F32
        } else {
            images.dtype()
        };
        return Tensor::zeros(dtype, dims);
    }
    if opts.bilinear {
        let x = images.cast(DType::F32)?;
        let x = x.as_slice::<f32>()?;
        let mut out = feedstock::tensor::try_vec::<f32>(&dims)?;
        let ys = weights(in_h, out_h, opts);
        let xs = weights(in_w, out_w, opts);
        for img in x.chunks_exact(in_h * in_w * c) {
            bilinear_image(img, in_w, c, &ys, &xs, &mut out);
        }
        return Tensor::new(dims, out);
    }
    let mut out = Data::try_with_capacity_as(images.dtype(), &dims)?;
    let ys = nearest(in_h, out_h, opts);
    let xs = nearest(in_w, out_w, opts);
    let src = images.data();
    for b in 0..batch {
        for &y in &ys {
            for &x in &xs {
                let at = ((b * in_h + y) * in_w + x) * c;
                out.extend_from(src, at..at + c)?;
            }
        }
    }
    Tensor::from_data(dims, out)
}

/// TensorFlow's `CalculateResizeScale`.
fn scale(in_size: usize, out_size: usize, align_corners: bool) -> f32 {
    if align_corners && out_size > 1 {
        (in_size - 1) as f32 / (out_size - 1) as f32
    } else {
        in_size as f32 / out_size as f32
    }
}

/// One output row's (or column's) source: the two input indices and the
/// weight of the second.
struct Lerp {
    lower: usize,
    upper: usize,
    lerp: f32,
}

/// TensorFlow's `compute_interpolation_weights`.
fn weights(in_size: usize, out_size: usize, opts: ResizeOptions) -> Vec<Lerp> {
    let s = scale(in_size, out_size, opts.align_corners);
    (0..out_size)
        .map(|i| {
            let pos = if opts.half_pixel_centers {
                (i as f32 + 0.5) * s - 0.5
            } else {
                i as f32 * s
            };
            let floor = pos.floor();
            Lerp {
                lower: (floor as i64).max(0) as usize,
                upper: (pos.ceil() as i64).min(in_size as i64 - 1) as usize,
                lerp: pos - floor,
            }
        })
        .collect()
}

/// One image interpolated as TensorFlow's `compute_lerp`: across, then
/// down.
fn bilinear_image(
    img: &[f32],
    in_w: usize,
    c: usize,
    ys: &[Lerp],
    xs: &[Lerp],
    out: &mut Vec<f32>,
) {
    for y in ys {
        let top = &img[y.lower * in_w * c..];
        let bottom = &img[y.upper * in_w * c..];
        for x in xs {
            for k in 0..c {
                let tl = top[x.lower * c + k];
                let tr = top[x.upper * c + k];
                let bl = bottom[x.lower * c + k];
                let br = bottom[x.upper * c + k];
                let t = tl + (tr - tl) * x.lerp;
                let b = bl + (br - bl) * x.lerp;
                out.push(t + (b - t) * y.lerp);
            }
        }
    }
}

/// The source index of each output index of a nearest-neighbour resize.
fn nearest(
    in_size: usize,
    out_size: usize,
    opts: ResizeOptions,
) -> Vec<usize> {
    let s = scale(in_size, out_size, opts.align_corners);
    (0..out_size)
        .map(|i| {
            let i = i as f32;
            let pos = if opts.half_pixel_centers {
                ((i + 0.5) * s).floor()
            } else if opts.align_corners {
                (i * s).round()
            } else {
                (i * s).floor()
            };
            (pos.max(0.0) as usize).min(in_size - 1)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const LEGACY: ResizeOptions = ResizeOptions {
        bilinear: true,
        align_corners: false,
        half_pixel_centers: false,
    };

    /// TensorFlow 2.21's `resize_bilinear` of [[0, 1], [2, 3]] to 3 × 3:
    /// [[0, 2/3, 1], [4/3, 2, 7/3], [2, 8/3, 3]] (float32 steps).
    #[test]
    fn bilinear_as_tensorflow() {
        let t = Tensor::new([1, 2, 2, 1], vec![0u8, 1, 2, 3]).unwrap();
        let r = resize(&t, 3, 3, LEGACY).unwrap();
        assert_eq!(r.dims(), &[1, 3, 3, 1]);
        let s = 2.0f32 / 3.0;
        let v = r.as_slice::<f32>().unwrap();
        assert_eq!(v[1], s);
        assert_eq!(v[3], 2.0 * s * 1.0 + 0.0);
        assert_eq!(v[8], 3.0);
    }

    #[test]
    fn nearest_keeps_the_dtype_and_picks_floor() {
        let t = Tensor::new([1, 1, 3, 1], vec![7i16, 8, 9]).unwrap();
        let opts = ResizeOptions {
            bilinear: false,
            ..LEGACY
        };
        let r = resize(&t, 1, 5, opts).unwrap();
        // scale 3/5: floor(0, 0.6, 1.2, 1.8, 2.4).
        assert_eq!(r.as_slice::<i16>().unwrap(), &[7, 7, 8, 8, 9]);
        let half = ResizeOptions {
            half_pixel_centers: true,
            ..opts
        };
        // floor(0.3, 0.9, 1.5, 2.1, 2.7).
        let r = resize(&t, 1, 5, half).unwrap();
        assert_eq!(r.as_slice::<i16>().unwrap(), &[7, 7, 8, 9, 9]);
    }

    #[test]
    fn refuses_what_tensorflow_refuses() {
        let t = Tensor::new([1, 1, 1, 1], vec![1.0f32]).unwrap();
        assert!(resize(&t, 0, 1, LEGACY).is_err());
        let both = ResizeOptions {
            align_corners: true,
            half_pixel_centers: true,
            ..LEGACY
        };
        assert!(resize(&t, 1, 1, both).is_err());
        let flat = Tensor::new([1, 1], vec![1.0f32]).unwrap();
        assert!(resize(&flat, 1, 1, LEGACY).is_err());
    }
}
