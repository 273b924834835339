//! Seed guide, "Reading from files" → "Preprocessing": the distortions
//! `cifar10_input.py` applies to each training image — a random 24×24
//! crop, a random left-right flip, and `per_image_standardization` — and
//! the central crop it uses for evaluation.
//!
//! Random ops take the caller's generator, so a seeded `rand_chacha`
//! generator gives the same crops and flips on every run.
//!
//! Run with `cargo run --example preprocessing`.

use std::error::Error;

use feedstock::transform::{
    crop_to_bounding_box, per_image_standardization, random_crop,
    random_flip_left_right,
};
use feedstock::{DType, Tensor};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

const SIDE: usize = 32;
const CROP: usize = 24;
const DEPTH: usize = 3;

/// The training distortions: random crop, random flip, standardization.
fn distort(image: &Tensor, rng: &mut ChaCha8Rng) -> feedstock::Result<Tensor> {
    let cropped = random_crop(image, &[CROP, CROP, DEPTH], rng)?;
    let flipped = random_flip_left_right(&cropped, rng)?;
    per_image_standardization(&flipped)
}

/// Where each pixel of a cropped (and maybe flipped) image came from,
/// given that the source pixel at `(y, x, c)` holds `y * 1000 + x * 10 +
/// c`: the crop's top-left corner and whether it was flipped.
fn provenance(crop: &Tensor) -> Result<(usize, usize, bool), Box<dyn Error>> {
    let v = crop.as_slice::<f32>()?;
    let at = |y: usize, x: usize, c: usize| v[(y * CROP + x) * DEPTH + c];
    let (y0, x_first) =
        ((at(0, 0, 0) / 1000.0) as usize, at(0, 0, 0) % 1000.0);
    let flipped = at(0, 1, 0) < at(0, 0, 0);
    let x0 = if flipped {
        x_first as usize / 10 - (CROP - 1)
    } else {
        x_first as usize / 10
    };
    // Every pixel agrees with that corner and orientation.
    for y in 0..CROP {
        for x in 0..CROP {
            for c in 0..DEPTH {
                let sx = if flipped { x0 + CROP - 1 - x } else { x0 + x };
                let want = ((y0 + y) * 1000 + sx * 10 + c) as f32;
                assert_eq!(at(y, x, c), want, "pixel ({y},{x},{c})");
            }
        }
    }
    Ok((y0, x0, flipped))
}

/// Runs the example; `cargo test` runs it too (tests/examples.rs).
pub fn main() -> Result<(), Box<dyn Error>> {
    // A 32×32×3 image whose every pixel says where it is.
    let values: Vec<f32> = (0..SIDE * SIDE * DEPTH)
        .map(|i| {
            let (y, x, c) = (i / (SIDE * DEPTH), i / DEPTH % SIDE, i % DEPTH);
            (y * 1000 + x * 10 + c) as f32
        })
        .collect();
    let image = Tensor::new([SIDE, SIDE, DEPTH], values)?;

    // Crops and flips, seeded: each is a 24×24 window of the image,
    // mirrored or not.
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut corners = Vec::new();
    let mut flips = 0;
    for _ in 0..20 {
        let crop = random_crop(&image, &[CROP, CROP, DEPTH], &mut rng)?;
        let crop = random_flip_left_right(&crop, &mut rng)?;
        assert_eq!(crop.dims(), &[CROP, CROP, DEPTH]);
        let (y0, x0, flipped) = provenance(&crop)?;
        assert!(y0 <= SIDE - CROP && x0 <= SIDE - CROP);
        corners.push((y0, x0));
        flips += usize::from(flipped);
    }
    // Random, not constant: several corners, some flips and some not.
    corners.sort_unstable();
    corners.dedup();
    assert!(corners.len() > 1, "crops at {corners:?}");
    assert!(0 < flips && flips < 20, "{flips} of 20 flipped");

    // The whole distortion, standardized: mean 0 and variance 1.
    let distorted = distort(&image, &mut ChaCha8Rng::seed_from_u64(7))?;
    assert_eq!(distorted.dims(), &[CROP, CROP, DEPTH]);
    assert_eq!(distorted.dtype(), DType::F32);
    let v = distorted.as_slice::<f32>()?;
    let n = v.len() as f64;
    let mean = v.iter().map(|&x| f64::from(x)).sum::<f64>() / n;
    let var = v
        .iter()
        .map(|&x| (f64::from(x) - mean).powi(2))
        .sum::<f64>()
        / n;
    assert!(mean.abs() < 1e-4, "mean {mean}");
    assert!((var - 1.0).abs() < 1e-3, "variance {var}");

    // Same seed, same distortion.
    let again = distort(&image, &mut ChaCha8Rng::seed_from_u64(7))?;
    assert_eq!(again, distorted);

    // Evaluation: no randomness, the central 24×24 window.
    let offset = (SIDE - CROP) / 2;
    let central = crop_to_bounding_box(&image, offset, offset, CROP, CROP)?;
    assert_eq!(provenance(&central)?, (offset, offset, false));

    println!(
        "20 random crops at {} different corners, {flips} flipped; \
         standardized mean {mean:.1e}, variance {var:.4}",
        corners.len()
    );
    Ok(())
}
