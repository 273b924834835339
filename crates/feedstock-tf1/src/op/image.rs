//! `tf.image` ops that keep the image's size or compute it from a size
//! input: flips, standardization, adjustments by a factor, resizes, the
//! JPEG header's shape and bounding-box sampling. Crops and pads are in
//! [`crop`](super::crop).

use std::ops::RangeInclusive;

use crate::kernels::math;
use bytes::Bytes;
use feedstock::decode::image;
use feedstock::error::{Error, Result};
use feedstock::queue::PartialShape;
use feedstock::tensor::{DType, Tensor, Value};
use feedstock::transform;

use super::attrs::attr_enum;
use super::{dense, dense_from, invalid, known, op, Args, In, OpDef, OutInfo};
use crate::graph::StaticShape;
use crate::kernels::adjust;
use crate::kernels::bbox::{self, BoxSampling};
use crate::kernels::resize::{self, ResizeOptions};

/// Checks a known image shape as TensorFlow's image ops do while
/// building: a rank of at least 3 (and at most `max_rank`), and no known
/// zero among the last three dimensions.
///
/// # Errors
/// InvalidArgument naming `what`.
pub(crate) fn check_image(
    shape: &StaticShape,
    what: &str,
    max_rank: Option<usize>,
) -> Result<()> {
    let Some(d) = shape.as_ref().map(|s| s.dims()) else {
        return Ok(());
    };
    if d.len() < 3 || max_rank.is_some_and(|m| d.len() > m) {
        let want = if max_rank.is_some() {
            "3 or 4"
        } else {
            "at least 3"
        };
        return Err(invalid(format!(
            "{what}: the image (shape {}) must have {want} dimensions",
            fmt_dims(d)
        )));
    }
    if d[d.len() - 3..].contains(&Some(0)) {
        return Err(invalid(format!(
            "{what}: the inner 3 dimensions of the image (shape {}) must \
             be > 0",
            fmt_dims(d)
        )));
    }
    Ok(())
}

/// `[2, ?, 3]`: known dims as numbers, unknown ones as `?`.
pub(crate) fn fmt_dims(d: &[Option<usize>]) -> String {
    let parts: Vec<String> = d
        .iter()
        .map(|x| x.map_or_else(|| "?".to_owned(), |v| v.to_string()))
        .collect();
    format!("[{}]", parts.join(", "))
}

/// The inference of an op whose output is its image input as it is: a
/// dense image of rank 3 or 4.
fn image_like(ins: &[In], name: &str) -> Result<Vec<OutInfo>> {
    let info = ins[0].dense(name)?;
    check_image(&info.shape, name, Some(4))?;
    Ok(vec![info.clone()])
}

op! {
    /// Mirrors an image, or each image of a batch, left to right
    /// (`tf.image.flip_left_right`). Refuses a known rank other than 3
    /// or 4 when built.
    FlipLeftRight = "FlipLeftRight" {}
}

impl OpDef for FlipLeftRight {
    fn arity(&self) -> RangeInclusive<usize> {
        1..=1
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        image_like(ins, "flip_left_right")
    }

    fn default_name(&self) -> &'static str {
        "flip_left_right"
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        out.push(transform::flip_left_right(a.dense(0)?)?.into());
        Ok(())
    }
}

op! {
    /// Mirrors an image, or each image of a batch, top to bottom
    /// (`tf.image.flip_up_down`). Refuses a known rank other than 3 or 4
    /// when built.
    FlipUpDown = "FlipUpDown" {}
}

impl OpDef for FlipUpDown {
    fn arity(&self) -> RangeInclusive<usize> {
        1..=1
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        image_like(ins, "flip_up_down")
    }

    fn default_name(&self) -> &'static str {
        "flip_up_down"
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        out.push(transform::flip_up_down(a.dense(0)?)?.into());
        Ok(())
    }
}

op! {
    /// Scales an image (the last three axes) to zero mean and unit
    /// variance, as `float32` (`tf.image.per_image_standardization`).
    /// Refuses a known rank under 3 or a known image dimension of 0 when
    /// built.
    PerImageStandardization = "PerImageStandardization" {}
}

impl OpDef for PerImageStandardization {
    fn arity(&self) -> RangeInclusive<usize> {
        1..=1
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        const NAME: &str = "per_image_standardization";
        let info = ins[0].dense(NAME)?;
        check_image(&info.shape, NAME, None)?;
        Ok(vec![dense_from(info.shape.clone(), DType::F32, &ins[0])])
    }

    fn default_name(&self) -> &'static str {
        "per_image_standardization"
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        out.push(transform::per_image_standardization(a.dense(0)?)?.into());
        Ok(())
    }
}

op! {
    /// Mirrors an image left to right, or top to bottom with `up_down`,
    /// with probability 1/2 (`tf.image.random_flip_left_right`,
    /// `tf.image.random_flip_up_down`); seeded, the session draws the
    /// same flips on every run. Refuses a known rank other than 3 or 4
    /// when built.
    RandomFlip = "RandomFlip" {
        /// Top to bottom (else left to right).
        up_down: bool,
        /// The generator's seed; `None`: drawn from entropy.
        seed: Option<u64>,
    }
}

impl OpDef for RandomFlip {
    fn arity(&self) -> RangeInclusive<usize> {
        1..=1
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        image_like(ins, self.default_name())
    }

    fn default_name(&self) -> &'static str {
        if self.up_down {
            "random_flip_up_down"
        } else {
            "random_flip_left_right"
        }
    }

    fn seed(&self) -> Option<Option<u64>> {
        Some(self.seed)
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        let mut rng = a.rng()?;
        let t = a.dense(0)?;
        let r = if self.up_down {
            transform::random_flip_up_down(t, &mut *rng)?
        } else {
            transform::random_flip_left_right(t, &mut *rng)?
        };
        out.push(r.into());
        Ok(())
    }
}

/// A `tf.image` adjustment by a `float32` scalar factor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AdjustOp {
    /// `AdjustContrastv2` (contrast factor).
    Contrast,
    /// `AdjustHue` (delta, a fraction of a turn).
    Hue,
    /// `AdjustSaturation` (saturation factor).
    Saturation,
}

attr_enum!(AdjustOp, "an image adjustment",
    "contrast" => AdjustOp::Contrast, "hue" => AdjustOp::Hue,
    "saturation" => AdjustOp::Saturation);

op! {
    /// A `float32` image (input 0) adjusted by a `float32` scalar factor
    /// (input 1): contrast (`(x - mean) * factor + mean` per channel,
    /// rank 3 or more), hue or saturation (RGB images); see
    /// [`crate::kernels::adjust`]. Refuses a known rank under 3,
    /// an image not `float32` or a factor not a `float32` scalar when
    /// built.
    Adjust = "Adjust" {
        /// The adjustment.
        op: AdjustOp,
    }
}

impl OpDef for Adjust {
    fn arity(&self) -> RangeInclusive<usize> {
        2..=2
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        const NAME: &str = "adjust";
        let info = ins[0].dense(NAME)?;
        check_image(&info.shape, NAME, None)?;
        let fi = ins[1].dense(NAME)?;
        let scalar = fi.shape.as_ref().is_none_or(|s| s.rank() == 0);
        if info.dtype != DType::F32 || fi.dtype != DType::F32 || !scalar {
            return Err(invalid(format!(
                "{NAME}: needs a float32 image and a float32 scalar factor"
            )));
        }
        Ok(vec![info.clone()])
    }

    fn default_name(&self) -> &'static str {
        "adjust"
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        let t = a.dense(0)?;
        let f = a.dense(1)?.scalar_value::<f32>()?;
        let r = match self.op {
            AdjustOp::Contrast => adjust::adjust_contrast(t, f)?,
            AdjustOp::Hue => adjust::adjust_hue(t, f)?,
            AdjustOp::Saturation => adjust::adjust_saturation(t, f)?,
        };
        out.push(r.into());
        Ok(())
    }
}

op! {
    /// `[batch, height, width, channels]` images (input 0) resized to
    /// the int32 vector `[height, width]` (input 1), as TensorFlow's
    /// `ResizeBilinear` (float32 output) or `ResizeNearestNeighbor` (the
    /// input's dtype). Refuses a known rank other than 4, a dtype that is
    /// not a real number, or a size that is not an int32 vector when
    /// built; a size that is not two positive values fails when run.
    Resize = "Resize" {
        /// Bilinear interpolation (else the nearest pixel).
        bilinear: bool,
        /// The corner pixels of input and output are aligned.
        align_corners: bool,
        /// Pixels are sampled at their centres.
        half_pixel_centers: bool,
        /// The output's height as known when built.
        static_height: Option<usize>,
        /// The output's width as known when built.
        static_width: Option<usize>,
    }
}

impl OpDef for Resize {
    fn arity(&self) -> RangeInclusive<usize> {
        2..=2
    }

    fn default_name(&self) -> &'static str {
        if self.bilinear {
            "ResizeBilinear"
        } else {
            "ResizeNearestNeighbor"
        }
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        const NAME: &str = "resize";
        let info = ins[0].dense(NAME)?;
        let dims = ins[0].dims();
        if let Some(d) = &dims {
            if d.len() != 4 {
                return Err(invalid(format!(
                    "Shape must be rank 4 but is rank {}",
                    d.len()
                )));
            }
        }
        if !math::is_arithmetic(info.dtype)
            || matches!(info.dtype, DType::U32 | DType::U64)
        {
            return Err(Error::invalid_dtype(format!(
                "{NAME}: images of {} cannot be resized",
                info.dtype
            )));
        }
        let si = ins[1].dense(NAME)?;
        if si.dtype != DType::I32
            || si.shape.as_ref().is_some_and(|s| s.rank() != 1)
        {
            return Err(invalid(format!(
                "{NAME}: the size must be an int32 vector"
            )));
        }
        let d = dims.unwrap_or_else(|| vec![None; 4]);
        let out = vec![d[0], self.static_height, self.static_width, d[3]];
        let dtype = if self.bilinear {
            DType::F32
        } else {
            info.dtype
        };
        Ok(vec![dense_from(
            Some(PartialShape::new(out)),
            dtype,
            &ins[0],
        )])
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        let t = a.dense(0)?;
        let [h, w] = resize_size(a.dense(1)?)?;
        let opts = ResizeOptions {
            bilinear: self.bilinear,
            align_corners: self.align_corners,
            half_pixel_centers: self.half_pixel_centers,
        };
        out.push(resize::resize(t, h, w, opts)?.into());
        Ok(())
    }
}

/// The `[height, width]` of a resize, checked as TensorFlow's kernels
/// check it.
fn resize_size(t: &Tensor) -> Result<[usize; 2]> {
    let v = t.cast(DType::I64)?;
    let v = v.as_slice::<i64>()?;
    if t.rank() != 1 {
        return Err(invalid("shape_t must be 1-dimensional"));
    }
    let [h, w] = v else {
        return Err(invalid("shape_t must have two elements"));
    };
    match (usize::try_from(*h), usize::try_from(*w)) {
        (Ok(h), Ok(w)) if h > 0 && w > 0 => Ok([h, w]),
        _ => Err(invalid("output dimensions must be positive")),
    }
}

op! {
    /// The `[height, width, channels]` of the JPEG in the string scalar
    /// input, as `dtype` (int32 or int64; `tf.image.extract_jpeg_shape`).
    /// Refuses an input that is not a string scalar or another dtype when
    /// built.
    ExtractJpegShape = "ExtractJpegShape" {
        /// The output's dtype.
        dtype: DType,
    }
}

impl OpDef for ExtractJpegShape {
    fn arity(&self) -> RangeInclusive<usize> {
        1..=1
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        const NAME: &str = "extract_jpeg_shape";
        let info = ins[0].dense(NAME)?;
        if info.dtype != DType::String
            || info.shape.as_ref().is_some_and(|s| s.rank() != 0)
        {
            return Err(invalid(format!(
                "{NAME}: contents must be a string scalar"
            )));
        }
        let dtype = self.dtype;
        if !matches!(dtype, DType::I32 | DType::I64) {
            return Err(Error::invalid_dtype(format!(
                "Value passed to parameter 'output_type' has DataType {dtype} \
                 not in list of allowed values: int32, int64"
            )));
        }
        Ok(vec![dense_from(known(&[3]), dtype, &ins[0])])
    }

    fn default_name(&self) -> &'static str {
        "extract_jpeg_shape"
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        let b = a.dense(0)?.scalar_value::<Bytes>()?;
        let shape = image::extract_jpeg_shape(&b)?.map(|d| d as i64);
        out.push(Tensor::vector(shape.to_vec()).cast(self.dtype)?.into());
        Ok(())
    }
}

op! {
    /// A random crop of an image of the size input 0 covering enough of
    /// some box of input 1 (`min_object_covered`: input 2), as
    /// `tf.image.sample_distorted_bounding_box` (TensorFlow's
    /// `SampleDistortedBoundingBoxV2`): outputs begin and size (input
    /// 0's dtype, `[3]`) and the crop as a `float32` `[1, 1, 4]` box.
    /// Seeded, the session draws the same crops every time. Refuses (with
    /// TensorFlow's shape errors) an image size not an integer vector of
    /// 3, boxes not `float32` `[batch, n, 4]`, or a `min_object_covered`
    /// not a `float32` scalar when built; the settings are checked when
    /// run (see [`bbox::check_sampling`]).
    SampleBox = "SampleBox" {
        /// `[min, max]` of the crop's width / height.
        aspect_ratio_range: Vec<f64>,
        /// `[min, max]` of the crop's area as a fraction of the image's.
        area_range: Vec<f64>,
        /// Crops tried before the whole image is taken.
        max_attempts: usize,
        /// With no boxes given, the whole image is the box (else an
        /// error).
        use_image_if_no_bounding_boxes: bool,
        /// The generator's seed; `None`: drawn from entropy.
        seed: Option<u64>,
    }
}

impl SampleBox {
    /// The settings as the kernel takes them.
    fn sampling(&self) -> Result<BoxSampling> {
        let pair = |v: &[f64], what: &str| match v {
            [a, b] => Ok([*a as f32, *b as f32]),
            _ => Err(invalid(format!(
                "sample_distorted_bounding_box: {what} must hold 2 values, \
                 got {}",
                v.len()
            ))),
        };
        Ok(BoxSampling {
            aspect_ratio_range: pair(
                &self.aspect_ratio_range,
                "aspect_ratio_range",
            )?,
            area_range: pair(&self.area_range, "area_range")?,
            max_attempts: u32::try_from(self.max_attempts).map_err(|_| {
                invalid(format!(
                    "sample_distorted_bounding_box: max_attempts {} is too \
                     large",
                    self.max_attempts
                ))
            })?,
            use_image_if_no_bounding_boxes: self
                .use_image_if_no_bounding_boxes,
        })
    }
}

impl OpDef for SampleBox {
    fn arity(&self) -> RangeInclusive<usize> {
        3..=3
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        const NAME: &str = "sample_distorted_bounding_box";
        self.sampling()?;
        let si = ins[0].dense(NAME)?;
        if !matches!(
            si.dtype,
            DType::U8 | DType::I8 | DType::I16 | DType::I32 | DType::I64
        ) {
            return Err(Error::invalid_dtype(format!(
                "Value passed to parameter 'image_size' has DataType {} \
                 not in list of allowed values: uint8, int8, int16, int32, \
                 int64",
                si.dtype
            )));
        }
        if let Some(d) = ins[0].dims() {
            if d.len() != 1 || d[0].is_some_and(|n| n != 3) {
                return Err(invalid(format!(
                    "{NAME}: image_size must be a vector of 3 values, got \
                     shape {}",
                    fmt_dims(&d)
                )));
            }
        }
        let bi = ins[1].dense(NAME)?;
        if bi.dtype != DType::F32 {
            return Err(Error::invalid_dtype(format!(
                "{NAME}: bounding_boxes must be float32, got {}",
                bi.dtype
            )));
        }
        if let Some(d) = ins[1].dims() {
            if d.len() != 3 {
                return Err(invalid(format!(
                    "Shape must be rank 3 but is rank {}",
                    d.len()
                )));
            }
            if d[2].is_some_and(|n| n != 4) {
                return Err(invalid(format!(
                    "Dimension must be 4 but is {}",
                    d[2].unwrap_or(0)
                )));
            }
        }
        let mi = ins[2].dense(NAME)?;
        if mi.dtype != DType::F32
            || mi.shape.as_ref().is_some_and(|s| s.rank() != 0)
        {
            return Err(invalid(format!(
                "{NAME}: min_object_covered must be a float32 scalar"
            )));
        }
        Ok(vec![
            dense(known(&[3]), si.dtype),
            dense(known(&[3]), si.dtype),
            dense(known(&[1, 1, 4]), DType::F32),
        ])
    }

    fn default_name(&self) -> &'static str {
        "sample_distorted_bounding_box"
    }

    fn seed(&self) -> Option<Option<u64>> {
        Some(self.seed)
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        let mut rng = a.rng()?;
        let sampling = self.sampling()?;
        bbox::check_sampling(&sampling)?;
        let size_in = a.dense(0)?;
        let size = size_in.cast(DType::I64)?;
        let boxes = a.dense(1)?;
        if boxes.rank() != 3 || boxes.dims()[2] != 4 {
            return Err(invalid(format!(
                "input boxes must be 3-dimensional [batch, num_boxes, \
                 coords]: {}",
                boxes.shape()
            )));
        }
        let covered = a.dense(2)?.scalar_value::<f32>()?;
        let (begin, size, frac) = bbox::sample_distorted_bounding_box(
            size.as_slice::<i64>()?,
            boxes.as_slice::<f32>()?,
            covered,
            &sampling,
            &mut *rng,
        )?;
        let ints =
            |v: [i64; 3]| Tensor::vector(v.to_vec()).cast(size_in.dtype());
        out.push(ints(begin)?.into());
        out.push(ints(size)?.into());
        out.push(Tensor::new([1, 1, 4], frac.to_vec())?.into());
        Ok(())
    }
}
