//! Image ops of `tf.image` beyond decoding and cropping: bicubic and
//! area resizing, HSV conversions and gamma correction, each computed as
//! TensorFlow's CPU kernel (see [`crate::kernels::resize_extra`] and
//! [`crate::kernels::color`]).

use std::ops::RangeInclusive;

use feedstock::error::{Error, Result};
use feedstock::queue::PartialShape;
use feedstock::tensor::{DType, Value};

use super::{dense_from, op, Args, In, OpDef, OutInfo};
use crate::graph::StaticShape;
use crate::kernels::{color, draw, encode, resize_extra};

/// The dtypes TensorFlow's resize ops take.
const RESIZABLE: [DType; 10] = [
    DType::I8,
    DType::U8,
    DType::I16,
    DType::U16,
    DType::I32,
    DType::I64,
    DType::F16,
    DType::F32,
    DType::F64,
    DType::BF16,
];

/// The `float32` `[batch, height, width, channels]` output of a resize
/// op: the images' static batch and channels, the size's known values
/// (`static_size`, else the constant `size`).
fn infer_resize(
    ins: &[In],
    static_size: Option<&[i64]>,
    op_type: &str,
) -> Result<Vec<OutInfo>> {
    let images = &ins[0];
    let info = images.dense(op_type)?;
    let dims = images.dims();
    if let Some(d) = &dims {
        if d.len() != 4 {
            return Err(Error::invalid_argument(format!(
                "Shape must be rank 4 but is rank {}",
                d.len()
            )));
        }
    }
    if !RESIZABLE.contains(&info.dtype) {
        return Err(Error::invalid_dtype(format!(
            "Value passed to parameter 'images' has DataType {} not in \
             list of allowed values: int8, uint8, int16, uint16, int32, \
             int64, float16, float32, float64, bfloat16",
            info.dtype
        )));
    }
    let size = &ins[1];
    let si = size.dense(op_type)?;
    if si.dtype != DType::I32 {
        return Err(Error::invalid_dtype(format!(
            "{op_type}: the size must be int32, not {}",
            si.dtype
        )));
    }
    if let Some(d) = size.dims() {
        if d.len() != 1 {
            return Err(Error::invalid_argument(format!(
                "Shape must be rank 1 but is rank {}",
                d.len()
            )));
        }
        if let Some(n) = d[0].filter(|&n| n != 2) {
            return Err(Error::invalid_argument(format!(
                "Dimension must be 2 but is {n}"
            )));
        }
    }
    let constant = size
        .constant_tensor()
        .and_then(|t| t.cast(DType::I64).ok())
        .and_then(|t| t.as_slice::<i64>().ok().map(<[i64]>::to_vec));
    let known = static_size.map(<[i64]>::to_vec).or(constant);
    let part = |k: usize| {
        known
            .as_ref()
            .and_then(|v| v.get(k))
            .and_then(|&v| usize::try_from(v).ok())
            .filter(|&v| v > 0)
    };
    let d = dims.unwrap_or_else(|| vec![None; 4]);
    let shape: StaticShape =
        Some(PartialShape::new(vec![d[0], part(0), part(1), d[3]]));
    Ok(vec![dense_from(shape, DType::F32, images)])
}

op! {
    /// `tf.image.resize_bicubic` (TensorFlow's `ResizeBicubic`): input 0
    /// `[batch, height, width, channels]` images of a real dtype, input 1
    /// the int32 `[height, width]`; `float32` output, TensorFlow's bits.
    ResizeBicubic = "ResizeBicubic" {
        /// The corner pixels of input and output are aligned.
        align_corners: bool,
        /// Pixels are sampled at their centres, with Keys' cubic.
        half_pixel_centers: bool,
        /// What is known of the size when built (a value under 1:
        /// unknown); absent, the size's constant value if it has one.
        static_size: Option<Vec<i64>>,
    }
}

impl OpDef for ResizeBicubic {
    fn arity(&self) -> RangeInclusive<usize> {
        2..=2
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        infer_resize(ins, self.static_size.as_deref(), "ResizeBicubic")
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        let r = resize_extra::resize_bicubic(
            a.dense(0)?,
            a.dense(1)?,
            self.align_corners,
            self.half_pixel_centers,
        )?;
        out.push(r.into());
        Ok(())
    }
}

op! {
    /// `tf.image.resize_area` (TensorFlow's `ResizeArea`): as
    /// [`ResizeBicubic`], each output pixel the mean of the source area
    /// it covers.
    ResizeArea = "ResizeArea" {
        /// The corner pixels of input and output are aligned.
        align_corners: bool,
        /// As [`ResizeBicubic::static_size`].
        static_size: Option<Vec<i64>>,
    }
}

impl OpDef for ResizeArea {
    fn arity(&self) -> RangeInclusive<usize> {
        2..=2
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        infer_resize(ins, self.static_size.as_deref(), "ResizeArea")
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        let r = resize_extra::resize_area(
            a.dense(0)?,
            a.dense(1)?,
            self.align_corners,
        )?;
        out.push(r.into());
        Ok(())
    }
}

/// The output of a colour-space op: the input's dtype and shape, checked
/// as TensorFlow's shape function and type constraint.
fn infer_color(ins: &[In], op_type: &str) -> Result<Vec<OutInfo>> {
    let x = &ins[0];
    let info = x.dense(op_type)?;
    if !matches!(
        info.dtype,
        DType::F16 | DType::BF16 | DType::F32 | DType::F64
    ) {
        return Err(Error::invalid_dtype(format!(
            "Value passed to parameter 'images' has DataType {} not in \
             list of allowed values: float16, bfloat16, float32, float64",
            info.dtype
        )));
    }
    if let Some(d) = x.dims() {
        let Some(last) = d.last() else {
            return Err(Error::invalid_argument(
                "Shape must be at least rank 1 but is rank 0",
            ));
        };
        if let Some(n) = last.filter(|&n| n != 3) {
            return Err(Error::invalid_argument(format!(
                "Dimension must be 3 but is {n}"
            )));
        }
    }
    let mut shape = info.shape.clone();
    if let Some(s) = &shape {
        let mut d = s.dims().to_vec();
        if let Some(l) = d.last_mut() {
            *l = Some(3);
        }
        shape = Some(PartialShape::new(d));
    }
    Ok(vec![dense_from(shape, info.dtype, x)])
}

op! {
    /// `tf.image.rgb_to_hsv` (TensorFlow's `RGBToHSV`): RGB pixels
    /// (last axis of 3, floating) as hue, saturation and
    /// value in `[0, 1]`.
    RgbToHsv = "RGBToHSV" {}
}

impl OpDef for RgbToHsv {
    fn arity(&self) -> RangeInclusive<usize> {
        1..=1
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        infer_color(ins, "RGBToHSV")
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        out.push(color::rgb_to_hsv(a.dense(0)?)?.into());
        Ok(())
    }
}

op! {
    /// `tf.image.hsv_to_rgb` (TensorFlow's `HSVToRGB`).
    HsvToRgb = "HSVToRGB" {}
}

impl OpDef for HsvToRgb {
    fn arity(&self) -> RangeInclusive<usize> {
        1..=1
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        infer_color(ins, "HSVToRGB")
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        out.push(color::hsv_to_rgb(a.dense(0)?)?.into());
        Ok(())
    }
}

op! {
    /// The arithmetic of `tf.image.adjust_gamma`: `gain × image ^ gamma`
    /// of a `float16`, `float32` or `float64` image (input 0) and scalar gamma and
    /// gain of its dtype (inputs 1 and 2); a negative gamma fails when
    /// run with TensorFlow's assertion message. The Python function
    /// converts the image's dtype around it as TensorFlow does.
    AdjustGamma = "AdjustGamma" {}
}

impl OpDef for AdjustGamma {
    fn arity(&self) -> RangeInclusive<usize> {
        3..=3
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        let x = &ins[0];
        let info = x.dense("adjust_gamma")?;
        if !matches!(info.dtype, DType::F16 | DType::F32 | DType::F64) {
            return Err(Error::invalid_dtype(format!(
                "adjust_gamma: images must be float16, float32 or float64, \
                 not {}",
                info.dtype
            )));
        }
        for k in [1, 2] {
            let s = ins[k].dense("adjust_gamma")?;
            if s.dtype != info.dtype {
                return Err(Error::invalid_dtype(format!(
                    "adjust_gamma: gamma and gain must be {}, not {}",
                    info.dtype, s.dtype
                )));
            }
            if s.shape.as_ref().is_some_and(|s| s.rank() != 0) {
                return Err(Error::invalid_argument(
                    "adjust_gamma: gamma and gain must be scalars",
                ));
            }
        }
        Ok(vec![dense_from(info.shape.clone(), info.dtype, x)])
    }

    fn default_name(&self) -> &'static str {
        "adjust_gamma"
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        let r = color::gain_pow(a.dense(0)?, a.dense(1)?, a.dense(2)?)?;
        out.push(r.into());
        Ok(())
    }
}

op! {
    /// `tf.image.draw_bounding_boxes` (TensorFlow's `DrawBoundingBoxes`,
    /// or `DrawBoundingBoxesV2` with a third input of colours): input 0
    /// `float32` or `float16` images `[batch, height, width, 1, 3 or 4]`,
    /// input 1 `float32` boxes `[batch, n, 4]`, input 2 (optional) a
    /// `float32` colour matrix; the images with the boxes' outlines.
    DrawBoundingBoxes = "DrawBoundingBoxes" {}
}

impl OpDef for DrawBoundingBoxes {
    fn arity(&self) -> RangeInclusive<usize> {
        2..=3
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        const NAME: &str = "draw_bounding_boxes";
        let images = &ins[0];
        let info = images.dense(NAME)?;
        if !matches!(info.dtype, DType::F32 | DType::F16) {
            return Err(Error::invalid_dtype(format!(
                "Value passed to parameter 'images' has DataType {} not in \
                 list of allowed values: float32, float16",
                info.dtype
            )));
        }
        if let Some(d) = images.dims() {
            if d.len() != 4 {
                return Err(Error::invalid_argument(format!(
                    "Shape must be rank 4 but is rank {}",
                    d.len()
                )));
            }
            if d[3].is_some_and(|c| !matches!(c, 1 | 3 | 4)) {
                return Err(Error::invalid_argument(
                    "Channel depth should be either 1 (GRY), 3 (RGB), or 4 \
                     (RGBA)",
                ));
            }
        }
        let boxes = ins[1].dense(NAME)?;
        if boxes.dtype != DType::F32 {
            return Err(Error::invalid_dtype(format!(
                "{NAME}: boxes must be float32, not {}",
                boxes.dtype
            )));
        }
        if let Some(d) = ins[1].dims() {
            if d.len() != 3 {
                return Err(Error::invalid_argument(format!(
                    "Shape must be rank 3 but is rank {}",
                    d.len()
                )));
            }
            if let Some(n) = d[2].filter(|&n| n != 4) {
                return Err(Error::invalid_argument(format!(
                    "Dimension must be 4 but is {n}"
                )));
            }
        }
        if let Some(c) = ins.get(2) {
            if c.dense(NAME)?.dtype != DType::F32 {
                return Err(Error::invalid_dtype(format!(
                    "{NAME}: colors must be float32, not {}",
                    c.dtype()
                )));
            }
        }
        Ok(vec![dense_from(info.shape.clone(), info.dtype, images)])
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        let colors = if a.len() > 2 { Some(a.dense(2)?) } else { None };
        let r = draw::draw_bounding_boxes(a.dense(0)?, a.dense(1)?, colors)?;
        out.push(r.into());
        Ok(())
    }
}

/// A string scalar output carrying the record key of `from`.
fn string_scalar(from: &In) -> OutInfo {
    dense_from(Some(PartialShape::new(vec![])), DType::String, from)
}

op! {
    /// `tf.image.encode_png` (TensorFlow's `EncodePng`): a 3-D `uint8`
    /// or `uint16` image with 1 to 4 channels as the bytes of a PNG (a
    /// string scalar); decoding it gives the image back exactly.
    EncodePng = "EncodePng" {
        /// -1 (zlib's default) or a level 0 to 9.
        compression: i64,
    }
}

impl OpDef for EncodePng {
    fn arity(&self) -> RangeInclusive<usize> {
        1..=1
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        let x = &ins[0];
        let info = x.dense("encode_png")?;
        if !matches!(info.dtype, DType::U8 | DType::U16) {
            return Err(Error::invalid_dtype(format!(
                "Value passed to parameter 'image' has DataType {} not in \
                 list of allowed values: uint8, uint16",
                info.dtype
            )));
        }
        if let Some(d) = x.dims().filter(|d| d.len() < 3) {
            return Err(Error::invalid_argument(format!(
                "Shape must be at least rank 3 but is rank {}",
                d.len()
            )));
        }
        Ok(vec![string_scalar(x)])
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        out.push(encode::encode_png(a.dense(0)?, self.compression)?.into());
        Ok(())
    }
}

op! {
    /// `tf.image.encode_jpeg` (TensorFlow's `EncodeJpeg`): a 3-D `uint8`
    /// image with 1 or 3 channels as the bytes of a JPEG (a string
    /// scalar), libjpeg set up as TensorFlow sets it up.
    EncodeJpeg = "EncodeJpeg" {
        /// `""` (from the channels), `"grayscale"` or `"rgb"`.
        format: String,
        /// 0 to 100.
        quality: i64,
        /// A progressive JPEG.
        progressive: bool,
        /// Optimised Huffman tables.
        optimize_size: bool,
        /// Chroma at half resolution (4:2:0), else 4:4:4.
        chroma_downsampling: bool,
        /// `"in"` or `"cm"`.
        density_unit: String,
        /// Horizontal pixels per unit.
        x_density: i64,
        /// Vertical pixels per unit.
        y_density: i64,
        /// XMP metadata for an APP1 marker (empty: none).
        xmp_metadata: Vec<u8>,
    }
}

impl OpDef for EncodeJpeg {
    fn arity(&self) -> RangeInclusive<usize> {
        1..=1
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        let x = &ins[0];
        let info = x.dense("encode_jpeg")?;
        if info.dtype != DType::U8 {
            return Err(Error::invalid_dtype(format!(
                "Input 'image' of 'EncodeJpeg' Op has type {} that does not \
                 match expected type of uint8.",
                info.dtype
            )));
        }
        if let Some(d) = x.dims().filter(|d| d.len() != 3) {
            return Err(Error::invalid_argument(format!(
                "Shape must be rank 3 but is rank {}",
                d.len()
            )));
        }
        Ok(vec![string_scalar(x)])
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        let opts = encode::JpegOptions {
            format: self.format.clone(),
            quality: self.quality,
            progressive: self.progressive,
            optimize_size: self.optimize_size,
            chroma_downsampling: self.chroma_downsampling,
            density_unit: self.density_unit.clone(),
            x_density: self.x_density,
            y_density: self.y_density,
            xmp_metadata: self.xmp_metadata.clone(),
        };
        out.push(encode::encode_jpeg(a.dense(0)?, &opts)?.into());
        Ok(())
    }
}
