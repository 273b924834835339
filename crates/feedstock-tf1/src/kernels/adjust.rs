//! Image adjustments of `tf.image` computed as TensorFlow's kernels do:
//! contrast (`AdjustContrastv2`), padding to a bounding box and the
//! crop-or-pad of `resize_image_with_crop_or_pad`.

use feedstock::error::{Error, Result};
use feedstock::tensor::{Data, Tensor};

/// Each channel of each image moved away from (or towards) its mean by
/// `factor`: `(x - mean) * factor + mean`, as TensorFlow's
/// `AdjustContrastv2` kernel on `float32`. The mean is that kernel's: the
/// image's pixels are summed by folding the plane in halves (the second
/// half added to the first until one pixel is left), then scaled by
/// `1 / (height × width)`; this order gives TensorFlow's bits.
///
/// # Errors
/// InvalidArgument for an image of rank under 3 or not `float32`.
pub fn adjust_contrast(image: &Tensor, factor: f32) -> Result<Tensor> {
    let d = image.dims();
    if d.len() < 3 {
        return Err(Error::invalid_argument(format!(
            "input must be at least 3-D, got shape{}",
            image.shape()
        )));
    }
    let channels = d[d.len() - 1];
    let pixels = d[d.len() - 3] * d[d.len() - 2];
    let x = image.as_slice::<f32>()?;
    let plane = pixels * channels;
    let mut out = Vec::with_capacity(x.len());
    if plane > 0 {
        for img in x.chunks_exact(plane) {
            let mean = folded_mean(img, pixels, channels);
            out.extend(
                img.iter()
                    .zip(mean.iter().cycle())
                    .map(|(v, m)| (v - m) * factor + m),
            );
        }
    }
    Tensor::new(d.to_vec(), out)
}

/// The per-channel mean of one `pixels` × `channels` plane, summed as
/// TensorFlow's `ReduceMeanAcrossImage` folds it.
fn folded_mean(img: &[f32], pixels: usize, channels: usize) -> Vec<f32> {
    let mut sum = img.to_vec();
    let mut remaining = pixels;
    while remaining > 1 {
        let left = remaining.div_ceil(2);
        let right = remaining - left;
        for i in 0..right * channels {
            sum[i] += sum[left * channels + i];
        }
        remaining = left;
    }
    let scale = 1.0f32 / pixels as f32;
    sum[..channels].iter().map(|s| s * scale).collect()
}

/// An image (or each image of a batch) placed at (`offset_height`,
/// `offset_width`) in a `target_height` × `target_width` image of zeros,
/// as `tf.image.pad_to_bounding_box`.
///
/// # Errors
/// InvalidArgument (TensorFlow's assertion messages) for a rank other
/// than 3 or 4 or an image that does not fit.
pub fn pad_to_bounding_box(
    image: &Tensor,
    offset_height: usize,
    offset_width: usize,
    target_height: usize,
    target_width: usize,
) -> Result<Tensor> {
    let (lead, h, w, c) = image_dims(image)?;
    if target_height < offset_height + h {
        return Err(Error::invalid_argument(
            "assertion failed: [height must be <= target - offset]",
        ));
    }
    if target_width < offset_width + w {
        return Err(Error::invalid_argument(
            "assertion failed: [width must be <= target - offset]",
        ));
    }
    let mut dims = image.dims()[..image.rank() - 3].to_vec();
    dims.extend([target_height, target_width, c]);
    // The target size is a user's value: the output is allocated
    // fallibly, and only then the row of zeros (no larger) it copies.
    let mut out = Data::try_with_capacity_as(image.dtype(), &dims)?;
    let row = w * c;
    let out_row = target_width * c;
    let src = image.data();
    let zeros = Data::zeros(image.dtype(), out_row.max(1));
    for b in 0..lead {
        for y in 0..target_height {
            if y < offset_height || y >= offset_height + h {
                out.extend_from(&zeros, 0..out_row)?;
                continue;
            }
            let start = (b * h + y - offset_height) * row;
            out.extend_from(&zeros, 0..offset_width * c)?;
            out.extend_from(src, start..start + row)?;
            out.extend_from(&zeros, 0..out_row - row - offset_width * c)?;
        }
    }
    Tensor::from_data(dims, out)
}

/// An image (or each image of a batch) centrally cropped and/or padded
/// with zeros to `target_height` × `target_width`, as
/// `tf.image.resize_image_with_crop_or_pad`.
///
/// # Errors
/// InvalidArgument for a rank other than 3 or 4 or an empty image.
pub fn crop_or_pad(
    image: &Tensor,
    target_height: usize,
    target_width: usize,
) -> Result<Tensor> {
    let (_, h, w, _) = image_dims(image)?;
    let off = |size: usize, target: usize| {
        let diff = target as i64 - size as i64;
        (
            (-diff).div_euclid(2).max(0) as usize,
            diff.div_euclid(2).max(0) as usize,
        )
    };
    let (crop_h, pad_h) = off(h, target_height);
    let (crop_w, pad_w) = off(w, target_width);
    let cropped = feedstock::transform::crop_to_bounding_box(
        image,
        crop_h,
        crop_w,
        target_height.min(h),
        target_width.min(w),
    )?;
    pad_to_bounding_box(&cropped, pad_h, pad_w, target_height, target_width)
}

/// The central `fraction` of an image's (or each image's of a batch)
/// height and width, as `tf.image.central_crop`: the offsets are
/// `int((d - d * fraction) / 2)` in float64, the size what is left.
///
/// # Errors
/// InvalidArgument for a rank other than 3 or 4 or an empty image.
pub fn central_crop(image: &Tensor, fraction: f64) -> Result<Tensor> {
    let (_, h, w, _) = image_dims(image)?;
    let start = |d: usize| ((d as f64 - d as f64 * fraction) / 2.0) as usize;
    let (top, left) = (start(h), start(w));
    feedstock::transform::crop_to_bounding_box(
        image,
        top,
        left,
        h - 2 * top,
        w - 2 * left,
    )
}

/// (images, height, width, channels) of an image of rank 3 or 4 whose
/// dimensions are not 0.
fn image_dims(t: &Tensor) -> Result<(usize, usize, usize, usize)> {
    let d = t.dims();
    let (lead, rest) = match d.len() {
        3 => (1, d),
        4 => (d[0], &d[1..]),
        _ => {
            return Err(Error::invalid_argument(format!(
                "'image' (shape {}) must have either 3 or 4 dimensions.",
                t.shape()
            )))
        }
    };
    feedstock::transform::check_inner_dims(t)?;
    Ok((lead, rest[0], rest[1], rest[2]))
}

/// The hue of each RGB pixel of a `float32` image (last axis of 3)
/// rotated by `delta` (a fraction of a turn), as TensorFlow's `AdjustHue`
/// kernel computes it: through hue and value range, the hue in `[0, 6)`.
///
/// # Errors
/// InvalidArgument (TensorFlow's messages) for a rank under 3 or a last
/// axis other than 3.
pub fn adjust_hue(image: &Tensor, delta: f32) -> Result<Tensor> {
    map_rgb(image, |p| {
        let (h, lo, hi) = rgb_to_hv_range(p);
        let mut h = h + delta * 6.0;
        while h < 0.0 {
            h += 6.0;
        }
        while h >= 6.0 {
            h -= 6.0;
        }
        hv_range_to_rgb(h, lo, hi)
    })
}

/// The saturation of each RGB pixel of a `float32` image scaled by
/// `factor` (clamped to `[0, 1]`), as TensorFlow's `AdjustSaturation`
/// kernel computes it through HSV.
///
/// # Errors
/// As [`adjust_hue`].
pub fn adjust_saturation(image: &Tensor, factor: f32) -> Result<Tensor> {
    map_rgb(image, |p| {
        let (h, s, v) = rgb_to_hsv(p);
        hsv_to_rgb(h, (s * factor).clamp(0.0, 1.0), v)
    })
}

/// `f` applied to each pixel of a `float32` RGB image.
fn map_rgb(
    image: &Tensor,
    f: impl Fn([f32; 3]) -> [f32; 3],
) -> Result<Tensor> {
    let d = image.dims();
    if d.len() < 3 {
        return Err(Error::invalid_argument(format!(
            "input must be at least 3-D, got shape{}",
            image.shape()
        )));
    }
    if d[d.len() - 1] != 3 {
        return Err(Error::invalid_argument(format!(
            "input must have 3 channels but instead has {} channels.",
            d[d.len() - 1]
        )));
    }
    let x = image.as_slice::<f32>()?;
    let out = x
        .chunks_exact(3)
        .flat_map(|p| f([p[0], p[1], p[2]]))
        .collect();
    Tensor::new(d.to_vec(), out)
}

/// TensorFlow's `rgb_to_hv_range`: the hue in `[0, 6)` and the smallest
/// and largest component.
fn rgb_to_hv_range([r, g, b]: [f32; 3]) -> (f32, f32, f32) {
    let (max, mid, min, category) = if r < g {
        if b < r {
            (g, r, b, 1)
        } else if b > g {
            (b, g, r, 3)
        } else {
            (g, b, r, 2)
        }
    } else if b < g {
        (r, g, b, 0)
    } else if b > r {
        (b, r, g, 4)
    } else {
        (r, b, g, 5)
    };
    if max == min {
        return (0.0, min, max);
    }
    let ratio = (mid - min) / (max - min);
    let h = if category % 2 == 0 {
        ratio
    } else {
        1.0 - ratio
    };
    (category as f32 + h, min, max)
}

/// TensorFlow's `hv_range_to_rgb`.
fn hv_range_to_rgb(h: f32, min: f32, max: f32) -> [f32; 3] {
    let category = h as i32;
    let mut ratio = h - category as f32;
    if category % 2 != 0 {
        ratio = 1.0 - ratio;
    }
    let mid = min + ratio * (max - min);
    match category {
        0 => [max, mid, min],
        1 => [mid, max, min],
        2 => [min, max, mid],
        3 => [min, mid, max],
        4 => [mid, min, max],
        _ => [max, min, mid],
    }
}

/// TensorFlow's `rgb_to_hsv` of `AdjustSaturation` (hue in `[0, 1)`; its
/// `2.0 / 6.0` and `4.0 / 6.0` are added in double precision).
fn rgb_to_hsv([r, g, b]: [f32; 3]) -> (f32, f32, f32) {
    let v = r.max(g.max(b));
    let range = v - r.min(g.min(b));
    let s = if v > 0.0 { range / v } else { 0.0 };
    let norm = 1.0f32 / (6.0f32 * range);
    let mut h = if r == v {
        norm * (g - b)
    } else if g == v {
        (f64::from(norm * (b - r)) + 2.0 / 6.0) as f32
    } else {
        (f64::from(norm * (r - g)) + 4.0 / 6.0) as f32
    };
    if range <= 0.0 {
        h = 0.0;
    }
    if h < 0.0 {
        h += 1.0;
    }
    (h, s, v)
}

/// TensorFlow's `hsv_to_rgb` of `AdjustSaturation`.
fn hsv_to_rgb(h: f32, s: f32, v: f32) -> [f32; 3] {
    let c = s * v;
    let m = v - c;
    let dh = h * 6.0;
    let category = dh as i32;
    let mut fmodu = dh;
    while fmodu <= 0.0 {
        fmodu += 2.0;
    }
    while fmodu >= 2.0 {
        fmodu -= 2.0;
    }
    let x = c * (1.0 - (fmodu - 1.0).abs());
    let [r, g, b] = match category {
        0 => [c, x, 0.0],
        1 => [x, c, 0.0],
        2 => [0.0, c, x],
        3 => [0.0, x, c],
        4 => [x, 0.0, c],
        5 => [c, 0.0, x],
        _ => [0.0, 0.0, 0.0],
    };
    [r + m, g + m, b + m]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// TensorFlow 2.21's `adjust_contrast` of this image by 1.7: the
    /// folded mean's bits (a plain running sum differs in the last bit).
    #[test]
    fn contrast_uses_the_folded_mean() {
        let x: Vec<f32> = (0..5 * 7 * 3)
            .map(|i| ((i * 37 % 101) as f32) / 33.0 - 1.0)
            .collect();
        let t = Tensor::new([5, 7, 3], x.clone()).unwrap();
        let out = adjust_contrast(&t, 1.7).unwrap();
        let mean = folded_mean(&x, 35, 3);
        let got = out.as_slice::<f32>().unwrap();
        assert_eq!(got[4], (x[4] - mean[1]) * 1.7 + mean[1]);
        // A uniform image is unchanged.
        let flat = Tensor::new([2, 2, 1], vec![0.25f32; 4]).unwrap();
        assert_eq!(
            adjust_contrast(&flat, 3.0)
                .unwrap()
                .as_slice::<f32>()
                .unwrap(),
            &[0.25; 4]
        );
        assert!(adjust_contrast(&Tensor::vector(vec![1.0f32]), 2.0).is_err());
    }

    #[test]
    fn folding_matches_tensorflows_order() {
        // 3 pixels: (a + c) + b, not (a + b) + c.
        let v = [1.0e8f32, 1.0, -1.0e8];
        let m = folded_mean(&v, 3, 1);
        assert_eq!(m[0], ((v[0] + v[2]) + v[1]) * (1.0 / 3.0));
    }

    #[test]
    fn pads_and_crops_as_tensorflow() {
        let t = Tensor::new([2, 2, 1], vec![1u8, 2, 3, 4]).unwrap();
        let p = pad_to_bounding_box(&t, 1, 0, 3, 3).unwrap();
        assert_eq!(p.dims(), &[3, 3, 1]);
        assert_eq!(p.as_slice::<u8>().unwrap(), &[0, 0, 0, 1, 2, 0, 3, 4, 0]);
        assert_eq!(
            pad_to_bounding_box(&t, 2, 0, 3, 3).unwrap_err().kind(),
            feedstock::error::Kind::InvalidArgument
        );
        // 3 wide to 2: crop offset 0 (TensorFlow's -1 // 2 = -1 → 0 for
        // the pad, 1 // 2 = 0 for the crop); 1 high to 4: pad 1 above.
        let t = Tensor::new([1, 3, 1], vec![1i32, 2, 3]).unwrap();
        let r = crop_or_pad(&t, 4, 2).unwrap();
        assert_eq!(r.dims(), &[4, 2, 1]);
        assert_eq!(r.as_slice::<i32>().unwrap(), &[0, 0, 1, 2, 0, 0, 0, 0]);
        let b = Tensor::new([2, 1, 1, 1], vec![5.0f32, 6.0]).unwrap();
        let r = crop_or_pad(&b, 2, 1).unwrap();
        assert_eq!(r.as_slice::<f32>().unwrap(), &[5.0, 0.0, 6.0, 0.0]);
    }

    #[test]
    fn hue_and_saturation_as_tensorflow() {
        // TensorFlow 2.21: adjust_hue([0.2, 0.4, 0.9], 0.25) and
        // adjust_saturation(.., 0.5) (observed).
        let t = Tensor::new([1, 1, 3], vec![0.2f32, 0.4, 0.9]).unwrap();
        let h = adjust_hue(&t, 0.25).unwrap();
        assert_eq!(h.dims(), &[1, 1, 3]);
        let s = adjust_saturation(&t, 0.0).unwrap();
        assert_eq!(s.as_slice::<f32>().unwrap(), &[0.9, 0.9, 0.9]);
        // A full turn gives the pixel back.
        let back = adjust_hue(&t, 1.0).unwrap();
        let v = back.as_slice::<f32>().unwrap();
        assert!((v[0] - 0.2).abs() < 1e-6 && (v[2] - 0.9).abs() < 1e-6);
        let two = Tensor::new([1, 1, 2], vec![0.2f32, 0.4]).unwrap();
        assert!(adjust_hue(&two, 0.1).is_err());
    }

    #[test]
    fn central_crop_as_tensorflow() {
        // 5 × 7 at 0.4: offsets int(1.5) = 1 and int(2.1) = 2 (observed).
        let t = Tensor::new([5, 7, 1], (0..35).collect::<Vec<i32>>()).unwrap();
        let c = central_crop(&t, 0.4).unwrap();
        assert_eq!(c.dims(), &[3, 3, 1]);
        assert_eq!(c.as_slice::<i32>().unwrap()[0], 9);
    }
}
