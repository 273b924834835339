//! `tf.image.sample_distorted_bounding_box`: TensorFlow's
//! `SampleDistortedBoundingBoxV2` kernel (its checks, its search for a
//! crop, its outputs); the random draws are feedstock's own.

use rand::Rng;

use feedstock::error::{Error, Result};

/// The settings of a bounding-box sample (the op's attributes).
#[derive(Debug, Clone, PartialEq)]
pub struct BoxSampling {
    /// `[min, max]` of the crop's width / height.
    pub aspect_ratio_range: [f32; 2],
    /// `[min, max]` of the crop's area as a fraction of the image's.
    pub area_range: [f32; 2],
    /// Crops tried before the whole image is taken.
    pub max_attempts: u32,
    /// With no boxes given, the whole image is the box (else an error).
    pub use_image_if_no_bounding_boxes: bool,
}

/// A rectangle of pixels, `[min, max)` on both axes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Rect {
    min_x: i64,
    min_y: i64,
    max_x: i64,
    max_y: i64,
}

impl Rect {
    fn area(&self) -> i64 {
        (self.max_x - self.min_x).max(0) * (self.max_y - self.min_y).max(0)
    }

    fn intersect(&self, o: &Rect) -> Rect {
        Rect {
            min_x: self.min_x.max(o.min_x),
            min_y: self.min_y.max(o.min_y),
            max_x: self.max_x.min(o.max_x),
            max_y: self.max_y.min(o.max_y),
        }
    }
}

/// A sampled crop: `begin` `[y, x, 0]`, `size` `[height, width, -1]` and
/// the crop as a box of fractions `[ymin, xmin, ymax, xmax]`.
pub type BoxSample = ([i64; 3], [i64; 3], [f32; 4]);

/// Checks the settings as TensorFlow's kernel does when it is built
/// (the first run): each area fraction in `(0, 1]`, aspect ratios
/// positive, `max_attempts` positive. A reversed range is accepted (no
/// crop fits it: the whole image is the sample).
///
/// # Errors
/// InvalidArgument naming the setting.
pub fn check_sampling(s: &BoxSampling) -> Result<()> {
    let [lo, hi] = s.area_range;
    if ![lo, hi].iter().all(|v| *v > 0.0 && *v <= 1.0) {
        return Err(Error::invalid_argument(format!(
            "Area range must be in (0, 1], got [{lo}, {hi}]"
        )));
    }
    let [a, b] = s.aspect_ratio_range;
    if !(a > 0.0 && b > 0.0) {
        return Err(Error::invalid_argument(format!(
            "Aspect ratio range must be positive, got [{a}, {b}]"
        )));
    }
    if s.max_attempts == 0 {
        return Err(Error::invalid_argument(
            "Max attempts must be positive: 0",
        ));
    }
    Ok(())
}

/// One sample for an image of `image_size` (`[height, width, channels]`)
/// and `boxes` (`[ymin, xmin, ymax, xmax]` fractions, flattened).
///
/// # Errors
/// InvalidArgument for an image size without 3 values, a coordinate
/// outside `[0, 1]`, no boxes without
/// `use_image_if_no_bounding_boxes`, or a negative `min_object_covered`.
pub fn sample_distorted_bounding_box<R: Rng + ?Sized>(
    image_size: &[i64],
    boxes: &[f32],
    min_object_covered: f32,
    s: &BoxSampling,
    rng: &mut R,
) -> Result<BoxSample> {
    if image_size.len() != 3 {
        return Err(Error::invalid_argument(format!(
            "image_size must contain 3 values, got {}",
            image_size.len()
        )));
    }
    // An empty image is not refused: its whole is the sample, as in
    // TensorFlow (fractions NaN).
    let (height, width) = (image_size[0], image_size[1]);
    if min_object_covered < 0.0 {
        return Err(Error::invalid_argument(format!(
            "min_object_covered must be non-negative: {min_object_covered}"
        )));
    }
    let mut rects = Vec::with_capacity(boxes.len() / 4);
    for b in boxes.chunks_exact(4) {
        if let Some(v) = b.iter().find(|v| !(0.0..=1.0).contains(*v)) {
            return Err(Error::invalid_argument(format!(
                "All bounding box coordinates must be in [0.0, 1.0]: {v}"
            )));
        }
        rects.push(Rect {
            min_x: (b[1] * width as f32) as i64,
            min_y: (b[0] * height as f32) as i64,
            max_x: (b[3] * width as f32) as i64,
            max_y: (b[2] * height as f32) as i64,
        });
    }
    let image = Rect {
        min_x: 0,
        min_y: 0,
        max_x: width,
        max_y: height,
    };
    if rects.is_empty() {
        if !s.use_image_if_no_bounding_boxes {
            return Err(Error::invalid_argument(
                "No bounding boxes provided as input. One must enable \
                 use_image_if_no_bounding_boxes if you wish to not provide \
                 any bounding boxes.",
            ));
        }
        rects.push(image);
    }
    let [ar_lo, ar_hi] = s.aspect_ratio_range;
    let mut crop = image;
    for _ in 0..s.max_attempts {
        let aspect = rng.gen::<f32>() * (ar_hi - ar_lo) + ar_lo;
        if let Some(c) = random_crop(width, height, s.area_range, aspect, rng)
        {
            if covers(&c, min_object_covered, &rects) {
                crop = c;
                break;
            }
        }
    }
    let frac = |v: i64, d: i64| v as f32 / d as f32;
    Ok((
        [crop.min_y, crop.min_x, 0],
        [crop.max_y - crop.min_y, crop.max_x - crop.min_x, -1],
        [
            frac(crop.min_y, height),
            frac(crop.min_x, width),
            frac(crop.max_y, height),
            frac(crop.max_x, width),
        ],
    ))
}

/// `lrintf`: to the nearest integer, ties to even.
fn lrint(v: f32) -> i64 {
    v.round_ties_even() as i64
}

/// TensorFlow's `GenerateRandomCrop`.
fn random_crop<R: Rng + ?Sized>(
    width: i64,
    height: i64,
    [min_rel, max_rel]: [f32; 2],
    aspect: f32,
    rng: &mut R,
) -> Option<Rect> {
    if max_rel <= 0.0 || aspect <= 0.0 || min_rel > max_rel {
        return None;
    }
    let min_area = min_rel * width as f32 * height as f32;
    let max_area = max_rel * width as f32 * height as f32;
    let mut h = lrint((min_area / aspect).sqrt());
    let mut max_h = lrint((max_area / aspect).sqrt());
    if lrint(max_h as f32 * aspect) > width {
        const EPS: f64 = 0.000_000_1;
        max_h = ((width as f64 + 0.5 - EPS) / f64::from(aspect)) as i64;
        if lrint(max_h as f32 * aspect) > width {
            max_h -= 1;
        }
    }
    max_h = max_h.min(height);
    h = h.min(max_h);
    if h < max_h {
        h += rng.gen_range(0..=max_h - h);
    }
    let mut w = lrint(h as f32 * aspect);
    let mut area = (w * h) as f32;
    if area < min_area {
        h += 1;
        w = lrint(h as f32 * aspect);
        area = (w * h) as f32;
    }
    if area > max_area {
        h -= 1;
        w = lrint(h as f32 * aspect);
        area = (w * h) as f32;
    }
    if area < min_area
        || area > max_area
        || w > width
        || h > height
        || w <= 0
        || h <= 0
    {
        return None;
    }
    let y = if h < height {
        rng.gen_range(0..height - h)
    } else {
        0
    };
    let x = if w < width {
        rng.gen_range(0..width - w)
    } else {
        0
    };
    Some(Rect {
        min_x: x,
        min_y: y,
        max_x: x + w,
        max_y: y + h,
    })
}

/// TensorFlow's `SatisfiesOverlapConstraints`: the crop has a pixel and
/// covers at least `min_covered` of some box that has one.
fn covers(crop: &Rect, min_covered: f32, boxes: &[Rect]) -> bool {
    if crop.area() < 1 {
        return false;
    }
    boxes.iter().any(|b| {
        let area = b.area() as f32;
        area >= 1.0 && crop.intersect(b).area() as f32 / area >= min_covered
    })
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    use super::*;

    fn defaults() -> BoxSampling {
        BoxSampling {
            aspect_ratio_range: [0.75, 1.33],
            area_range: [0.05, 1.0],
            max_attempts: 100,
            use_image_if_no_bounding_boxes: false,
        }
    }

    #[test]
    fn samples_fit_the_image_and_cover_the_box() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let boxes = [0.1f32, 0.2, 0.6, 0.7];
        for _ in 0..200 {
            let (b, s, f) = sample_distorted_bounding_box(
                &[40, 60, 3],
                &boxes,
                0.5,
                &defaults(),
                &mut rng,
            )
            .unwrap();
            assert_eq!((b[2], s[2]), (0, -1));
            assert!(b[0] + s[0] <= 40 && b[1] + s[1] <= 60);
            assert!(s[0] > 0 && s[1] > 0);
            assert_eq!(f[0], b[0] as f32 / 40.0);
            let crop = Rect {
                min_x: b[1],
                min_y: b[0],
                max_x: b[1] + s[1],
                max_y: b[0] + s[0],
            };
            let bx = Rect {
                min_x: 12,
                min_y: 4,
                max_x: 42,
                max_y: 24,
            };
            assert!(crop.intersect(&bx).area() * 2 >= bx.area());
        }
    }

    #[test]
    fn refuses_what_tensorflow_refuses() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let d = defaults();
        let run = |boxes: &[f32], d: &BoxSampling, rng: &mut ChaCha8Rng| {
            sample_distorted_bounding_box(&[4, 4, 1], boxes, 0.1, d, rng)
        };
        assert!(run(&[0.0, 0.0, 1.5, 1.0], &d, &mut rng).is_err());
        assert!(run(&[], &d, &mut rng).is_err());
        let whole = BoxSampling {
            use_image_if_no_bounding_boxes: true,
            ..d.clone()
        };
        assert!(run(&[], &whole, &mut rng).is_ok());
        let bad = BoxSampling {
            area_range: [0.0, 1.0],
            ..d
        };
        assert!(check_sampling(&bad).is_err());
    }
}
