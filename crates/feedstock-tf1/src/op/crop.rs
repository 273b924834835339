//! `tf.image` crops and pads, and `tf.random_crop`: each with its box
//! known when built (attributes) or given as integer tensors (inputs,
//! checked when run with TensorFlow's assertion messages).
//!
//! A box known when built and a box given as tensors stay two ops, as
//! TensorFlow distinguishes them: Python ints are checked when the graph
//! is built, tensors (constant or not) when it runs.

use std::ops::RangeInclusive;

use feedstock::error::{Error, Result};
use feedstock::tensor::{DType, Tensor, Value};
use feedstock::transform;

use super::image::{check_image, fmt_dims};
use super::{
    dense_from, invalid, op, partial, sizes, Args, In, OpDef, OutInfo,
};
use crate::kernels::adjust;

/// The output of an op on image input 0 whose height and width become
/// `size` (unknown where `None`); an image of unknown rank is taken as
/// one image, as TensorFlow takes it.
fn resized(image: &In, size: [Option<usize>; 2]) -> OutInfo {
    let d = image.dims().unwrap_or_else(|| vec![None; 3]);
    let mut out = d[..d.len() - 3].to_vec();
    out.extend([size[0], size[1], d[d.len() - 1]]);
    dense_from(partial(out), image.dtype(), image)
}

/// Checks that each of `parts` is an int32 or int64 scalar.
fn check_box_parts(parts: &[In], name: &str) -> Result<()> {
    for b in parts {
        let bi = b.dense(name)?;
        let scalar = bi.shape.as_ref().is_none_or(|s| s.rank() == 0);
        if !matches!(bi.dtype, DType::I32 | DType::I64) || !scalar {
            return Err(invalid(format!(
                "{name}: offsets and targets must be int32 or int64 scalars"
            )));
        }
    }
    Ok(())
}

/// The value of `o` as a size if it is a non-negative integer scalar
/// constant.
fn constant_size(o: &In) -> Option<usize> {
    let t = o.constant_tensor()?;
    let v = match t.dtype() {
        DType::I32 => t.scalar_value::<i32>().ok().map(i64::from),
        DType::I64 => t.scalar_value::<i64>().ok(),
        _ => None,
    }?;
    usize::try_from(v).ok()
}

/// The constant values of a box's target height and width (checked to
/// be integer scalars, as all of `parts`).
fn box_targets(parts: &[In], name: &str) -> Result<[Option<usize>; 2]> {
    check_box_parts(parts, name)?;
    Ok([constant_size(&parts[0]), constant_size(&parts[1])])
}

/// The inference of an op whose inputs are an image and the int scalars
/// giving its new height and width (`targets`, whose constant values
/// are the static size).
fn resized_inputs(
    ins: &[In],
    name: &str,
    targets: &[In],
) -> Result<Vec<OutInfo>> {
    let size = box_targets(targets, name)?;
    let info = ins[0].dense(name)?;
    check_image(&info.shape, name, Some(4))?;
    check_box_parts(&ins[1..], name)?;
    Ok(vec![resized(&ins[0], size)])
}

/// An int32 or int64 scalar's value.
fn int_scalar(t: &Tensor) -> Result<i64> {
    match t.dtype() {
        DType::I32 => t.scalar_value::<i32>().map(i64::from),
        _ => t.scalar_value::<i64>(),
    }
}

/// A bounding box given as inputs 1 to 4 (offsets, then sizes), each an
/// int32 or int64 scalar.
fn box_inputs(a: &Args<'_, '_>) -> Result<[i64; 4]> {
    let mut b = [0; 4];
    for (k, v) in b.iter_mut().enumerate() {
        *v = int_scalar(a.dense(k + 1)?)?;
    }
    Ok(b)
}

op! {
    /// An image placed at `offset` in a `size` image of zeros
    /// (`tf.image.pad_to_bounding_box`); an image known not to fit is an
    /// error when built, one that does not fit when run fails then.
    /// Refuses a known rank other than 3 or 4 or a known height or width
    /// over `size - offset` when built.
    PadToBox = "PadToBox" {
        /// Rows of zeros above the image.
        offset_height: usize,
        /// Columns of zeros left of the image.
        offset_width: usize,
        /// The output's height.
        target_height: usize,
        /// The output's width.
        target_width: usize,
    }
}

impl OpDef for PadToBox {
    fn arity(&self) -> RangeInclusive<usize> {
        1..=1
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        const NAME: &str = "pad_to_bounding_box";
        let offset = [self.offset_height, self.offset_width];
        let size = [self.target_height, self.target_width];
        let info = ins[0].dense(NAME)?;
        check_image(&info.shape, NAME, Some(4))?;
        if let Some(d) = ins[0].dims() {
            let n = d.len();
            for (k, what) in [(0, "height"), (1, "width")] {
                if d[n - 3 + k]
                    .is_some_and(|v| offset[k].saturating_add(v) > size[k])
                {
                    return Err(invalid(format!(
                        "{what} must be <= target - offset"
                    )));
                }
            }
        }
        Ok(vec![resized(&ins[0], size.map(Some))])
    }

    fn default_name(&self) -> &'static str {
        "pad_to_bounding_box"
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        let r = adjust::pad_to_bounding_box(
            a.dense(0)?,
            self.offset_height,
            self.offset_width,
            self.target_height,
            self.target_width,
        )?;
        out.push(r.into());
        Ok(())
    }
}

op! {
    /// [`PadToBox`] with the box as inputs 1..=4 (integer scalars: offset
    /// height and width, target height and width), checked when run;
    /// constant targets give the static size. Refuses a known image rank
    /// other than 3 or 4 or a box part that is not an integer scalar when
    /// built.
    PadToBoxInputs = "PadToBoxInputs" {}
}

impl OpDef for PadToBoxInputs {
    fn arity(&self) -> RangeInclusive<usize> {
        5..=5
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        resized_inputs(ins, "pad_to_bounding_box", &ins[3..5])
    }

    fn default_name(&self) -> &'static str {
        "pad_to_bounding_box"
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        let t = a.dense(0)?;
        let [oh, ow, th, tw] = checked_pad(t, box_inputs(a)?)?;
        let r = adjust::pad_to_bounding_box(t, oh, ow, th, tw)?;
        out.push(r.into());
        Ok(())
    }
}

/// A padding box given as tensors, checked in the order of TensorFlow's
/// assertions (offsets, then the room left on each side).
fn checked_pad(t: &Tensor, b: [i64; 4]) -> Result<[usize; 4]> {
    let [oh, ow, th, tw] = b;
    let fail = |m: &str| Err(invalid(format!("assertion failed: [{m}]")));
    if oh < 0 {
        return fail("offset_height must be >= 0");
    }
    if ow < 0 {
        return fail("offset_width must be >= 0");
    }
    let d = t.dims();
    if d.len() >= 3 {
        let (h, w) = (d[d.len() - 3] as i64, d[d.len() - 2] as i64);
        if tw - ow - w < 0 {
            return fail("width must be <= target - offset");
        }
        if th - oh - h < 0 {
            return fail("height must be <= target - offset");
        }
    }
    Ok([oh as usize, ow as usize, th as usize, tw as usize])
}

op! {
    /// An image centrally cropped and/or padded to `size`
    /// (`tf.image.resize_image_with_crop_or_pad`). Refuses a known rank
    /// other than 3 or 4 when built.
    CropOrPad = "CropOrPad" {
        /// The output's height.
        target_height: usize,
        /// The output's width.
        target_width: usize,
    }
}

impl OpDef for CropOrPad {
    fn arity(&self) -> RangeInclusive<usize> {
        1..=1
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        const NAME: &str = "resize_image_with_crop_or_pad";
        let size = [self.target_height, self.target_width];
        let info = ins[0].dense(NAME)?;
        check_image(&info.shape, NAME, Some(4))?;
        Ok(vec![resized(&ins[0], size.map(Some))])
    }

    fn default_name(&self) -> &'static str {
        "resize_image_with_crop_or_pad"
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        let (h, w) = (self.target_height, self.target_width);
        out.push(adjust::crop_or_pad(a.dense(0)?, h, w)?.into());
        Ok(())
    }
}

op! {
    /// [`CropOrPad`] with the target height and width as inputs 1 and 2
    /// (integer scalars), checked when run; constant targets give the
    /// static size. Refuses as [`PadToBoxInputs`] when built.
    CropOrPadInputs = "CropOrPadInputs" {}
}

impl OpDef for CropOrPadInputs {
    fn arity(&self) -> RangeInclusive<usize> {
        3..=3
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        resized_inputs(ins, "resize_image_with_crop_or_pad", &ins[1..3])
    }

    fn default_name(&self) -> &'static str {
        "resize_image_with_crop_or_pad"
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        let t = a.dense(0)?;
        let th = int_scalar(a.dense(1)?)?;
        let tw = int_scalar(a.dense(2)?)?;
        if tw <= 0 {
            return Err(invalid(
                "assertion failed: [target_width must be > 0.]",
            ));
        }
        if th <= 0 {
            return Err(invalid(
                "assertion failed: [target_height must be > 0.]",
            ));
        }
        let r = adjust::crop_or_pad(t, th as usize, tw as usize)?;
        out.push(r.into());
        Ok(())
    }
}

op! {
    /// The central `fraction` (in `(0, 1)`) of an image or of each image
    /// of a batch (`tf.image.central_crop`); its known height and width
    /// give the output's. Refuses a known rank other than 3 or 4 or a
    /// fraction outside `(0, 1)` when built.
    CentralCrop = "CentralCrop" {
        /// The fraction kept of the height and the width.
        fraction: f64,
    }
}

impl OpDef for CentralCrop {
    fn arity(&self) -> RangeInclusive<usize> {
        1..=1
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        const NAME: &str = "central_crop";
        let fraction = self.fraction;
        let info = ins[0].dense(NAME)?;
        check_image(&info.shape, NAME, Some(4))?;
        if !(fraction > 0.0 && fraction < 1.0) {
            return Err(invalid(format!(
                "{NAME}: the fraction must be in (0, 1), got {fraction}"
            )));
        }
        let crop = |d: Option<usize>| {
            d.map(|d| {
                d - 2 * ((d as f64 - d as f64 * fraction) / 2.0) as usize
            })
        };
        let out = ins[0].dims().map(|mut d| {
            let n = d.len();
            d[n - 3] = crop(d[n - 3]);
            d[n - 2] = crop(d[n - 2]);
            d
        });
        Ok(vec![dense_from(out.and_then(partial), info.dtype, &ins[0])])
    }

    fn default_name(&self) -> &'static str {
        "central_crop"
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        out.push(adjust::central_crop(a.dense(0)?, self.fraction)?.into());
        Ok(())
    }
}

op! {
    /// A random crop of input 0 (`tf.random_crop`): of `size` when known
    /// when built (the output's shape), else of the size input 1 holds
    /// (an int32 or int64 vector; the output's dims unknown, its rank the
    /// size's length or the input's rank). Seeded, the session draws the
    /// same crops every time. Refuses a size of another rank than the
    /// input's known rank (or, as input 1, of another dtype or rank)
    /// when built; a size over the input's, or negative, fails when run.
    RandomCrop = "RandomCrop" {
        /// The crop's size, or `None`: input 1.
        size: Option<Vec<usize>>,
        /// The generator's seed; `None`: drawn from entropy.
        seed: Option<u64>,
    }
}

impl OpDef for RandomCrop {
    fn arity(&self) -> RangeInclusive<usize> {
        let n = 1 + usize::from(self.size.is_none());
        n..=n
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        let info = ins[0].dense("random_crop")?;
        let Some(size) = &self.size else {
            return infer_sized(ins);
        };
        // A known rank must be the size's (TensorFlow's ValueError); a
        // size over the image fails when run, as in TensorFlow.
        if let Some(d) = ins[0].dims() {
            if d.len() != size.len() {
                return Err(invalid(format!(
                    "random_crop: size {size:?} has {} dimensions, the \
                     value's shape {} has {}",
                    size.len(),
                    fmt_dims(&d),
                    d.len()
                )));
            }
        }
        let shape = partial(size.iter().map(|&d| Some(d)).collect());
        Ok(vec![dense_from(shape, info.dtype, &ins[0])])
    }

    fn default_name(&self) -> &'static str {
        "random_crop"
    }

    fn seed(&self) -> Option<Option<u64>> {
        Some(self.seed)
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        let mut rng = a.rng()?;
        let t = a.dense(0)?;
        let r = match &self.size {
            Some(size) => transform::random_crop(t, size, &mut *rng)?,
            None => {
                let size = sizes(a.dense(1)?)?;
                transform::random_crop(t, &size, &mut *rng)?
            }
        };
        out.push(r.into());
        Ok(())
    }
}

/// [`RandomCrop`]'s inference with the size as input 1.
fn infer_sized(ins: &[In]) -> Result<Vec<OutInfo>> {
    let info = ins[0].dense("random_crop")?;
    let sinfo = ins[1].dense("random_crop")?;
    if !matches!(sinfo.dtype, DType::I32 | DType::I64) {
        return Err(Error::invalid_dtype(format!(
            "random_crop: the size must be int32 or int64, got {}",
            sinfo.dtype
        )));
    }
    let len = match ins[1].dims().as_deref() {
        None => None,
        Some([n]) => *n,
        Some(d) => {
            return Err(invalid(format!(
                "random_crop: the size must be a vector, got shape {}",
                fmt_dims(d)
            )))
        }
    };
    let rank = ins[0].dims().map(|d| d.len());
    if let (Some(n), Some(r)) = (len, rank) {
        if n != r {
            return Err(invalid(format!(
                "random_crop: the size has {n} values, the value's shape {} \
                 has {r} dimensions",
                crate::graph::show_static(&info.shape)
            )));
        }
    }
    let shape = len.or(rank).and_then(|n| partial(vec![None; n]));
    Ok(vec![dense_from(shape, info.dtype, &ins[0])])
}

op! {
    /// Crops an image, or each image of a batch, to a box
    /// (`tf.image.crop_to_bounding_box`); an image of unknown rank is
    /// taken as one image, as TensorFlow does. Refuses a known rank other
    /// than 3 or 4, a known image dimension of 0, an empty box, or a box
    /// that does not fit the image's known height or width when built.
    CropToBox = "CropToBox" {
        /// The first row kept.
        offset_height: usize,
        /// The first column kept.
        offset_width: usize,
        /// The output's height.
        target_height: usize,
        /// The output's width.
        target_width: usize,
    }
}

impl OpDef for CropToBox {
    fn arity(&self) -> RangeInclusive<usize> {
        1..=1
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        const NAME: &str = "crop_to_bounding_box";
        let CropToBox {
            offset_height,
            offset_width,
            target_height,
            target_width,
        } = *self;
        let info = ins[0].dense(NAME)?;
        check_image(&info.shape, NAME, Some(4))?;
        if target_height == 0 || target_width == 0 {
            return Err(invalid(format!(
                "{NAME}: target_height and target_width must be > 0"
            )));
        }
        let dims = ins[0].dims();
        let (lead, c) = match &dims {
            Some(d) => (&d[..d.len() - 3], d[d.len() - 1]),
            None => (&[][..], None),
        };
        if let Some(d) = &dims {
            let (h, w) = (d[d.len() - 3], d[d.len() - 2]);
            let fits = |size: Option<usize>, end: usize| {
                size.is_none_or(|s| s >= end)
            };
            if !fits(h, offset_height.saturating_add(target_height))
                || !fits(w, offset_width.saturating_add(target_width))
            {
                return Err(invalid(format!(
                    "{NAME}: the box at ({offset_height}, {offset_width}) of \
                     {target_height}x{target_width} does not fit an image of \
                     shape {}",
                    fmt_dims(d)
                )));
            }
        }
        let mut out = lead.to_vec();
        out.extend([Some(target_height), Some(target_width), c]);
        Ok(vec![dense_from(partial(out), info.dtype, &ins[0])])
    }

    fn default_name(&self) -> &'static str {
        "crop_to_bounding_box"
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        let r = transform::crop_to_bounding_box(
            a.dense(0)?,
            self.offset_height,
            self.offset_width,
            self.target_height,
            self.target_width,
        )?;
        out.push(r.into());
        Ok(())
    }
}

op! {
    /// [`CropToBox`] with the box as inputs 1..=4 (integer scalars:
    /// offset height, offset width, target height, target width), as
    /// TensorFlow takes a box of tensors: checked when run, each failure
    /// an InvalidArgument with TensorFlow's assertion message. A target
    /// that is a constant gives the output's static size. Refuses a known
    /// image rank other than 3 or 4, a known image dimension of 0, or a
    /// box part that is not an integer scalar when built.
    CropToBoxInputs = "CropToBoxInputs" {}
}

impl OpDef for CropToBoxInputs {
    fn arity(&self) -> RangeInclusive<usize> {
        5..=5
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        const NAME: &str = "crop_to_bounding_box";
        let info = ins[0].dense(NAME)?;
        check_image(&info.shape, NAME, Some(4))?;
        check_box_parts(&ins[1..5], NAME)?;
        let out = ins[0].dims().map(|d| {
            let mut out = d[..d.len() - 3].to_vec();
            out.extend([constant_size(&ins[3]), constant_size(&ins[4])]);
            out.push(d[d.len() - 1]);
            out
        });
        Ok(vec![dense_from(out.and_then(partial), info.dtype, &ins[0])])
    }

    fn default_name(&self) -> &'static str {
        "crop_to_bounding_box"
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        let t = a.dense(0)?;
        let [oh, ow, th, tw] = checked_box(t, box_inputs(a)?)?;
        out.push(transform::crop_to_bounding_box(t, oh, ow, th, tw)?.into());
        Ok(())
    }
}

/// A crop box (offset height and width, target height and width) checked
/// against `image` as TensorFlow's `crop_to_bounding_box` asserts it, in
/// its order and words.
fn checked_box(image: &Tensor, b: [i64; 4]) -> Result<[usize; 4]> {
    let d = image.dims();
    if !(3..=4).contains(&d.len()) {
        return Err(invalid(format!(
            "crop_to_bounding_box: the image (shape {}) must have 3 or 4 \
             dimensions",
            image.shape()
        )));
    }
    let (h, w) = (d[d.len() - 3] as i64, d[d.len() - 2] as i64);
    let [oh, ow, th, tw] = b;
    let checks = [
        (ow >= 0, "offset_width must be >= 0."),
        (oh >= 0, "offset_height must be >= 0."),
        (tw > 0, "target_width must be > 0."),
        (th > 0, "target_height must be > 0."),
        (
            w >= tw.saturating_add(ow),
            "width must be >= target + offset.",
        ),
        (
            h >= th.saturating_add(oh),
            "height must be >= target + offset.",
        ),
    ];
    if let Some((_, why)) = checks.iter().find(|(ok, _)| !ok) {
        return Err(invalid(format!("assertion failed: [{why}]")));
    }
    // Every part is now a non-negative value no larger than a dimension.
    Ok(b.map(|v| v as usize))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::op::{from_attrs, Attr, Attrs, SampleBox};
    use crate::{Graph, Session};

    fn image(g: &Graph) -> crate::Output {
        let t = Tensor::new([2, 3, 1], (0..6u8).collect()).unwrap();
        g.constant(t).unwrap()
    }

    #[test]
    fn too_few_inputs_are_refused_when_built() {
        let g = Graph::new();
        let img = image(&g);
        let e = g.op1(CropToBoxInputs {}, &[img]).unwrap_err();
        assert!(e.to_string().contains("CropToBoxInputs: takes 5"), "{e}");
        let sized = RandomCrop {
            size: None,
            seed: Some(1),
        };
        let e = g.op1(sized, &[img]).unwrap_err();
        assert!(e.to_string().contains("RandomCrop: takes 2"), "{e}");
    }

    #[test]
    fn made_by_name_from_attributes() -> Result<()> {
        let g = Graph::new();
        let img = image(&g);
        let a: Attrs = [
            ("offset_height", Attr::Int(1)),
            ("offset_width", Attr::Int(1)),
            ("target_height", Attr::Int(1)),
            ("target_width", Attr::Int(2)),
        ]
        .into_iter()
        .collect();
        let crop = g.op_dyn(from_attrs("CropToBox", &a)?, &[img])?[0];
        assert_eq!(
            g.shape(crop).unwrap().dims(),
            &[Some(1), Some(2), Some(1)]
        );
        let got = Session::new(&g).run(&[crop], &[])?;
        assert_eq!(got[0].dense()?.as_slice::<u8>()?, [4, 5]);
        Ok(())
    }

    #[test]
    fn a_sampling_range_of_another_length_is_refused() {
        let g = Graph::new();
        let size = g.constant(Tensor::vector(vec![4i32, 4, 1])).unwrap();
        let boxes = g.constant(Tensor::new([1, 0, 4], vec![0f32; 0]).unwrap());
        let covered = g.scalar(0.1, DType::F32).unwrap();
        let op = SampleBox {
            aspect_ratio_range: vec![0.75],
            area_range: vec![0.05, 1.0],
            max_attempts: 100,
            use_image_if_no_bounding_boxes: true,
            seed: None,
        };
        let e = g.op(op, &[size, boxes.unwrap(), covered]).unwrap_err();
        assert!(e.to_string().contains("aspect_ratio_range"), "{e}");
    }
}
