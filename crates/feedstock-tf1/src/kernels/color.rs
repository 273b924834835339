//! `tf.image.rgb_to_hsv`, `tf.image.hsv_to_rgb` and the power of
//! `tf.image.adjust_gamma` as TensorFlow's `RGBToHSV`, `HSVToRGB` and
//! `Pow` CPU kernels compute them (`core/kernels/image/colorspace_op.h`):
//! the same operations in the same order and precision.

use feedstock::error::{Error, Result};
use feedstock::tensor::{bf16, f16, DType, Element, Tensor};
use num_traits::Float;

/// A `float32` or `float64` image's pixels (last axis of 3) mapped by
/// `f`, keeping the shape.
fn map_pixels<T: Element + Float>(
    image: &Tensor,
    f: impl Fn([T; 3]) -> [T; 3],
) -> Result<Tensor> {
    let x = image.as_slice::<T>()?;
    let mut out = feedstock::tensor::try_vec::<T>(image.dims())?;
    for p in x.chunks_exact(3) {
        out.extend(f([p[0], p[1], p[2]]));
    }
    Tensor::new(image.dims().to_vec(), out)
}

/// Checks an image for the colour-space kernels: rank at least 1, a
/// last axis of 3 (TensorFlow's messages).
fn check_rgb(image: &Tensor) -> Result<()> {
    let d = image.dims();
    if d.is_empty() {
        return Err(Error::invalid_argument(
            "input must be at least 1D, got shape[]",
        ));
    }
    let channels = d[d.len() - 1];
    if channels != 3 {
        return Err(Error::failed_precondition(format!(
            "input must have 3 channels but input only has {channels} \
             channels."
        )));
    }
    Ok(())
}

/// A pixel's hue, saturation and value as TensorFlow's `RGBToHSV`:
/// `V = max`, `S = range / V` (0 for black), the hue `norm × difference
/// (+ 2/6 or 4/6)` with `norm = (1 / range) × (1/6)`, 0 for grey,
/// wrapped into `[0, 1)`.
fn rgb_to_hsv_pixel<T: Float>([r, g, b]: [T; 3]) -> [T; 3] {
    let six = T::from(6.0).unwrap_or_else(T::one);
    let two = T::one() + T::one();
    let four = two + two;
    let v = r.max(g).max(b);
    let range = v - r.min(g).min(b);
    let s = if v > T::zero() { range / v } else { T::zero() };
    let norm = range.recip() * (T::one() / six);
    let mut h = if r == v {
        norm * (g - b)
    } else if g == v {
        norm * (b - r) + two / six
    } else {
        norm * (r - g) + four / six
    };
    if range <= T::zero() || range.is_nan() {
        h = T::zero();
    }
    if h < T::zero() {
        h = h + T::one();
    }
    [h, s, v]
}

/// A pixel's red, green and blue from hue, saturation and value as
/// TensorFlow's `HSVToRGB`: each channel's ramp of `6 h` clamped to
/// `[0, 1]`, then `(1 - s + s × ramp) × v`.
fn hsv_to_rgb_pixel<T: Float>([h, s, v]: [T; 3]) -> [T; 3] {
    let one = T::one();
    let two = one + one;
    let (three, four) = (two + one, two + two);
    let six = four + two;
    let clamp = |x: T| x.max(T::zero()).min(one);
    let dh = h * six;
    let dr = clamp((dh - three).abs() - one);
    let dg = clamp(-(dh - two).abs() + two);
    let db = clamp(-(dh - four).abs() + two);
    let one_s = -s + one;
    [
        (one_s + s * dr) * v,
        (one_s + s * dg) * v,
        (one_s + s * db) * v,
    ]
}

/// A pixel map for each floating dtype.
type PixelFns = (
    fn([f16; 3]) -> [f16; 3],
    fn([bf16; 3]) -> [bf16; 3],
    fn([f32; 3]) -> [f32; 3],
    fn([f64; 3]) -> [f64; 3],
);

/// Applies the version of a pixel map for its dtype to a floating image
/// (`float16` and `bfloat16` rounded after each operation, as Eigen
/// computes them).
fn by_dtype(
    image: &Tensor,
    what: &str,
    (f16_fn, bf16_fn, f32_fn, f64_fn): PixelFns,
) -> Result<Tensor> {
    check_rgb(image)?;
    match image.dtype() {
        DType::F16 => map_pixels(image, f16_fn),
        DType::BF16 => map_pixels(image, bf16_fn),
        DType::F32 => map_pixels(image, f32_fn),
        DType::F64 => map_pixels(image, f64_fn),
        d => Err(Error::invalid_dtype(format!(
            "{what}: images must be floating, not {d}"
        ))),
    }
}

/// RGB images (last axis of 3, floating, in `[0, 1]`) as
/// hue, saturation and value, TensorFlow's `RGBToHSV`.
///
/// # Errors
/// FailedPrecondition (TensorFlow's message) for a last axis other than
/// 3; InvalidDtype for an image not floating.
pub fn rgb_to_hsv(image: &Tensor) -> Result<Tensor> {
    let fns: PixelFns = (
        rgb_to_hsv_pixel,
        rgb_to_hsv_pixel,
        rgb_to_hsv_pixel,
        rgb_to_hsv_pixel,
    );
    by_dtype(image, "rgb_to_hsv", fns)
}

/// HSV images back to RGB, TensorFlow's `HSVToRGB`.
///
/// # Errors
/// As [`rgb_to_hsv`].
pub fn hsv_to_rgb(image: &Tensor) -> Result<Tensor> {
    let fns: PixelFns = (
        hsv_to_rgb_pixel,
        hsv_to_rgb_pixel,
        hsv_to_rgb_pixel,
        hsv_to_rgb_pixel,
    );
    by_dtype(image, "hsv_to_rgb", fns)
}

/// `gain × image ^ gamma` elementwise for a `float16`, `float32` or
/// `float64` image and scalar `gamma` and `gain` of its dtype (`float16`
/// rounded after the power and after the product), as TensorFlow's
/// `Pow` then `Mul` (the power through the platform's `pow`; TensorFlow's
/// vectorised `pow` may differ from it in the last bit).
///
/// # Errors
/// InvalidArgument for a negative `gamma` (TensorFlow's assertion
/// message) or scalars of another dtype than the image.
pub fn gain_pow(
    image: &Tensor,
    gamma: &Tensor,
    gain: &Tensor,
) -> Result<Tensor> {
    fn run<T: Element + Float>(
        x: &Tensor,
        gamma: &Tensor,
        gain: &Tensor,
    ) -> Result<Tensor> {
        let (p, k) = (gamma.scalar_value::<T>()?, gain.scalar_value::<T>()?);
        if p < T::zero() {
            return Err(Error::invalid_argument(
                "assertion failed: [Gamma should be a non-negative real number.]",
            ));
        }
        let v = x.as_slice::<T>()?;
        let mut out = feedstock::tensor::try_vec::<T>(x.dims())?;
        out.extend(v.iter().map(|&e| k * e.powf(p)));
        Tensor::new(x.dims().to_vec(), out)
    }
    match image.dtype() {
        DType::F16 => run::<f16>(image, gamma, gain),
        DType::F32 => run::<f32>(image, gamma, gain),
        DType::F64 => run::<f64>(image, gamma, gain),
        d => Err(Error::invalid_dtype(format!(
            "adjust_gamma: images must be float16, float32 or float64, not {d}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hsv_round_trips_primary_colours() {
        let px = vec![1.0f32, 0.0, 0.0, 0.0, 1.0, 0.0, 0.2, 0.2, 0.2];
        let t = Tensor::new([3, 3], px.clone()).unwrap();
        let hsv = rgb_to_hsv(&t).unwrap();
        let h = hsv.as_slice::<f32>().unwrap();
        assert_eq!(&h[..3], &[0.0, 1.0, 1.0]);
        assert_eq!(h[3], 2.0f32 / 6.0);
        assert_eq!(&h[6..], &[0.0, 0.0, 0.2]);
        let back = hsv_to_rgb(&hsv).unwrap();
        assert_eq!(back.as_slice::<f32>().unwrap(), &px[..]);
        let two = Tensor::new([1, 2], vec![0.0f32, 1.0]).unwrap();
        assert!(rgb_to_hsv(&two)
            .unwrap_err()
            .to_string()
            .contains("3 channels"));
    }

    #[test]
    fn gamma_scales_the_power() {
        let t = Tensor::new([2], vec![0.25f64, 1.0]).unwrap();
        let r = gain_pow(&t, &Tensor::scalar(0.5f64), &Tensor::scalar(2.0f64))
            .unwrap();
        assert_eq!(r.as_slice::<f64>().unwrap(), &[1.0, 2.0]);
        let e =
            gain_pow(&t, &Tensor::scalar(-1.0f64), &Tensor::scalar(1.0f64));
        assert!(e.unwrap_err().to_string().contains("non-negative"));
    }
}
