//! Image decoding (images made here with the `image` crate) and the
//! preprocessing ops, including the CIFAR-10 layout of the golden file.

use std::io::Cursor;
use std::path::PathBuf;

use bytes::Bytes;

use feedstock::decode::image::{
    decode_image, decode_jpeg, decode_png, Channels, Format,
};
use feedstock::decode::raw::{decode_raw, ByteOrder};
use feedstock::transform::{
    crop_to_bounding_box, flip_left_right, flip_up_down,
    per_image_standardization, random_crop, random_flip_left_right, slice,
    transpose,
};
use feedstock::{DType, Kind, Tensor};
use image::{DynamicImage, ImageFormat};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

const W: u32 = 5;
const H: u32 = 3;

fn rgb_pixels() -> Vec<u8> {
    (0..W * H * 3).map(|i| (i * 17 % 256) as u8).collect()
}

fn encode(img: &DynamicImage, format: ImageFormat) -> Bytes {
    let mut out = Vec::new();
    img.write_to(&mut Cursor::new(&mut out), format).unwrap();
    out.into()
}

fn rgb_png() -> Bytes {
    let img = image::RgbImage::from_raw(W, H, rgb_pixels()).unwrap();
    encode(&DynamicImage::ImageRgb8(img), ImageFormat::Png)
}

fn u8s(t: &Tensor) -> &[u8] {
    t.as_slice::<u8>().unwrap()
}

#[test]
fn png_decodes_exactly_with_every_channel_count() {
    let png = rgb_png();
    let t = decode_png(&png, Channels::AsStored, "k").unwrap();
    assert_eq!(t.dtype(), DType::U8);
    assert_eq!(t.dims(), &[3, 5, 3]);
    assert_eq!(u8s(&t), &rgb_pixels()[..]);
    let rgb = decode_png(&png, Channels::Rgb, "k").unwrap();
    assert_eq!(rgb, t);
    let gray = decode_png(&png, Channels::Gray, "k").unwrap();
    assert_eq!(gray.dims(), &[3, 5, 1]);
    // libpng's weights as TensorFlow sets them, truncated (TensorFlow
    // 2.21 gives these, not the `image` crate's Rec. 709 luma).
    let luma: Vec<u8> = rgb_pixels()
        .chunks(3)
        .map(|p| {
            let [r, g, b] = [p[0], p[1], p[2]].map(u32::from);
            ((9797 * r + 19234 * g + 3737 * b) >> 15) as u8
        })
        .collect();
    assert_eq!(u8s(&gray), &luma[..]);
    let rgba = decode_png(&png, Channels::Rgba, "k").unwrap();
    assert_eq!(rgba.dims(), &[3, 5, 4]);
    assert!(u8s(&rgba).chunks(4).all(|p| p[3] == 255));
    assert_eq!(u8s(&rgba)[..3], rgb_pixels()[..3]);
}

#[test]
fn png_keeps_stored_alpha_and_gray() {
    let rgba: Vec<u8> = (0..W * H * 4).map(|i| (i * 7 % 256) as u8).collect();
    let img = image::RgbaImage::from_raw(W, H, rgba.clone()).unwrap();
    let png = encode(&DynamicImage::ImageRgba8(img), ImageFormat::Png);
    let t = decode_png(&png, Channels::AsStored, "k").unwrap();
    assert_eq!(t.dims(), &[3, 5, 4]);
    assert_eq!(u8s(&t), &rgba[..]);

    let gray: Vec<u8> = (0..W * H).map(|i| (i * 13) as u8).collect();
    let img = image::GrayImage::from_raw(W, H, gray.clone()).unwrap();
    let png = encode(&DynamicImage::ImageLuma8(img), ImageFormat::Png);
    let t = decode_png(&png, Channels::AsStored, "k").unwrap();
    assert_eq!(t.dims(), &[3, 5, 1]);
    assert_eq!(u8s(&t), &gray[..]);
    let rgb = decode_png(&png, Channels::Rgb, "k").unwrap();
    let expanded: Vec<u8> = gray.iter().flat_map(|&g| [g, g, g]).collect();
    assert_eq!(u8s(&rgb), &expanded[..]);
}

#[test]
fn sixteen_bit_png_keeps_the_high_byte() {
    let samples: Vec<u16> =
        vec![0x0000, 0x01ff, 0x8080, 0xff7f, 0xfffe, 0x1234];
    let img = image::ImageBuffer::<image::Luma<u16>, _>::from_raw(
        3,
        2,
        samples.clone(),
    )
    .unwrap();
    let png = encode(&DynamicImage::ImageLuma16(img), ImageFormat::Png);
    let t = decode_png(&png, Channels::AsStored, "k").unwrap();
    let want: Vec<u8> = samples.iter().map(|s| (s >> 8) as u8).collect();
    assert_eq!(u8s(&t), &want[..]);
}

#[test]
fn jpeg_from_another_encoder_decodes_close_to_the_source() {
    // Pixels are libjpeg's with TensorFlow's settings (the integer-fast
    // IDCT, which is coarse at quality 100); see the golden test below
    // for exactness.
    let img = image::RgbImage::from_fn(16, 8, |x, y| {
        image::Rgb([(x * 16) as u8, (y * 32) as u8, 128])
    });
    let mut jpeg = Vec::new();
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut jpeg, 100)
        .encode_image(&img)
        .unwrap();
    let jpeg = Bytes::from(jpeg);
    let t = decode_jpeg(&jpeg, Channels::AsStored, "k").unwrap();
    assert_eq!(t.dims(), &[8, 16, 3]);
    let max_diff = u8s(&t)
        .iter()
        .zip(img.as_raw())
        .map(|(a, b)| a.abs_diff(*b))
        .max()
        .unwrap();
    assert!(max_diff <= 12, "quality-100 JPEG off by {max_diff}");

    // Grayscale is the decoded luma: close to Rec. 601 of the colours.
    let gray = decode_jpeg(&jpeg, Channels::Gray, "k").unwrap();
    assert_eq!(gray.dims(), &[8, 16, 1]);
    for (g, p) in u8s(&gray).iter().zip(u8s(&t).chunks_exact(3)) {
        let y = 0.299 * f64::from(p[0])
            + 0.587 * f64::from(p[1])
            + 0.114 * f64::from(p[2]);
        assert!((f64::from(*g) - y).abs() <= 8.0, "{g} vs {y}");
    }

    let e = decode_jpeg(&jpeg, Channels::Rgba, "img-7").unwrap_err();
    assert_eq!(e.kind(), Kind::InvalidArgument);
    assert_eq!(e.key(), Some("img-7"));
    assert!(
        e.to_string().contains("JPEG does not support 4 channels"),
        "{e}"
    );
}

#[test]
fn decode_image_sniffs_the_format() {
    let png = rgb_png();
    let img = image::RgbImage::from_raw(W, H, rgb_pixels()).unwrap();
    let mut jpeg = Vec::new();
    image::codecs::jpeg::JpegEncoder::new(&mut jpeg)
        .encode_image(&img)
        .unwrap();
    let jpeg = Bytes::from(jpeg);
    assert_eq!(Format::sniff(&png), Some(Format::Png));
    assert_eq!(Format::sniff(&jpeg), Some(Format::Jpeg));
    assert_eq!(
        decode_image(&png, Channels::AsStored, "k").unwrap(),
        decode_png(&png, Channels::AsStored, "k").unwrap()
    );
    assert_eq!(
        decode_image(&jpeg, Channels::Rgb, "k").unwrap(),
        decode_jpeg(&jpeg, Channels::Rgb, "k").unwrap()
    );
}

#[test]
fn bad_image_data_is_invalid_argument_naming_the_key() {
    let png = rgb_png();
    let cases: Vec<(&str, feedstock::Result<Tensor>)> = vec![
        (
            "garbage",
            decode_image(
                &Bytes::from_static(b"XIF89a..."),
                Channels::AsStored,
                "f.bin:3",
            ),
        ),
        (
            "empty",
            decode_image(&Bytes::new(), Channels::AsStored, "f.bin:3"),
        ),
        (
            "truncated png",
            decode_png(
                &png.slice(..png.len() / 2),
                Channels::AsStored,
                "f.bin:3",
            ),
        ),
        (
            "truncated png as jpeg",
            decode_jpeg(&png.slice(..40), Channels::AsStored, "f.bin:3"),
        ),
        (
            "truncated via sniff",
            decode_image(&png.slice(..20), Channels::Rgb, "f.bin:3"),
        ),
    ];
    for (name, r) in cases {
        let e = r.unwrap_err();
        assert_eq!(e.kind(), Kind::InvalidArgument, "{name}");
        assert_eq!(e.key(), Some("f.bin:3"), "{name}");
        assert!(e.to_string().contains("key f.bin:3"), "{name}: {e}");
    }
}

#[test]
fn channel_counts_map_to_tensorflow_arguments() {
    assert_eq!(Channels::from_count(0).unwrap(), Channels::AsStored);
    assert_eq!(Channels::from_count(3).unwrap(), Channels::Rgb);
    for n in [2, 5, -1] {
        let e = Channels::from_count(n).unwrap_err();
        assert_eq!(e.kind(), Kind::InvalidArgument);
        // TensorFlow's message.
        assert_eq!(
            e.message(),
            format!("`channels` must be 0, 1, 3 or 4 but got {n}")
        );
    }
}

// ---------------------------------------------------------------------
// Preprocessing.

/// A [2, 3, 2] image whose value encodes its position: 100 y + 10 x + c.
fn coords() -> Tensor {
    let mut v = Vec::new();
    for y in 0..2 {
        for x in 0..3 {
            for c in 0..2 {
                v.push(100 * y + 10 * x + c);
            }
        }
    }
    Tensor::new([2, 3, 2], v).unwrap()
}

fn at(t: &Tensor, y: usize, x: usize, c: usize) -> i32 {
    let d = t.dims();
    t.as_slice::<i32>().unwrap()[(y * d[1] + x) * d[2] + c]
}

#[test]
fn golden_cifar_record_transposes_to_height_width_depth() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/golden/cifar_like.bin");
    let file = Bytes::from(std::fs::read(path).unwrap());
    let record = file.slice(..3073);
    let raw = decode_raw(&record, DType::U8, ByteOrder::LittleEndian).unwrap();
    let label = slice(&raw, &[0], &[1]).unwrap();
    assert_eq!(u8s(&label), &[1]);
    let depth_major = slice(&raw, &[1], &[3072])
        .unwrap()
        .reshape([3, 32, 32])
        .unwrap();
    let image = transpose(&depth_major, &[1, 2, 0]).unwrap();
    assert_eq!(image.dims(), &[32, 32, 3]);
    let px = u8s(&image);
    for (y, x, c) in [(0, 0, 0), (0, 1, 0), (5, 7, 1), (31, 31, 2), (12, 3, 2)]
    {
        assert_eq!(
            px[(y * 32 + x) * 3 + c],
            record[1 + c * 1024 + y * 32 + x],
            "pixel {y},{x},{c}"
        );
    }
    let f = image.cast(DType::F32).unwrap();
    let norm = per_image_standardization(&f).unwrap();
    let v = norm.as_slice::<f32>().unwrap();
    let mean = v.iter().map(|&x| x as f64).sum::<f64>() / v.len() as f64;
    let var = v.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>()
        / v.len() as f64;
    assert!(
        mean.abs() < 1e-5 && (var - 1.0).abs() < 1e-4,
        "{mean} {var}"
    );
}

#[test]
fn transpose_moves_every_element() {
    let t = coords();
    let tr = transpose(&t, &[2, 0, 1]).unwrap();
    assert_eq!(tr.dims(), &[2, 2, 3]);
    let v = tr.as_slice::<i32>().unwrap();
    for c in 0..2 {
        for y in 0..2 {
            for x in 0..3 {
                assert_eq!(v[(c * 2 + y) * 3 + x], at(&t, y, x, c));
            }
        }
    }
    assert_eq!(transpose(&tr, &[1, 2, 0]).unwrap(), t);
    for bad in [&[0, 1][..], &[0, 0, 1], &[0, 1, 3]] {
        let e = transpose(&t, bad).unwrap_err();
        assert_eq!(e.kind(), Kind::InvalidArgument);
    }
}

#[test]
fn slice_and_crop_take_the_right_window() {
    let t = coords();
    let s = slice(&t, &[1, 1, 0], &[1, 2, 2]).unwrap();
    assert_eq!(s.as_slice::<i32>().unwrap(), &[110, 111, 120, 121]);
    let c = crop_to_bounding_box(&t, 0, 2, 2, 1).unwrap();
    assert_eq!(c.dims(), &[2, 1, 2]);
    assert_eq!(c.as_slice::<i32>().unwrap(), &[20, 21, 120, 121]);
    assert!(slice(&t, &[1, 0, 0], &[2, 1, 1]).is_err());
    assert!(slice(&t, &[0, 0], &[1, 1]).is_err());
    assert!(crop_to_bounding_box(&t, 0, 0, 3, 1).is_err());
    let empty = slice(&t, &[0, 0, 0], &[0, 3, 2]).unwrap();
    assert_eq!(empty.num_elements(), 0);
}

#[test]
fn flips_mirror_the_right_axis() {
    let t = coords();
    let lr = flip_left_right(&t).unwrap();
    let ud = flip_up_down(&t).unwrap();
    for y in 0..2 {
        for x in 0..3 {
            for c in 0..2 {
                assert_eq!(at(&lr, y, x, c), at(&t, y, 2 - x, c));
                assert_eq!(at(&ud, y, x, c), at(&t, 1 - y, x, c));
            }
        }
    }
    let batch = Tensor::stack(&[t.clone(), t.clone()]).unwrap();
    let flipped = flip_left_right(&batch).unwrap();
    assert_eq!(flipped.index(1).unwrap(), lr);
    assert!(flip_left_right(&Tensor::vector(vec![1i32, 2])).is_err());
}

#[test]
fn random_flip_is_seeded_and_flips_about_half_the_time() {
    let t = coords();
    let lr = flip_left_right(&t).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let outcomes: Vec<bool> = (0..200)
        .map(|_| {
            let out = random_flip_left_right(&t, &mut rng).unwrap();
            assert!(out == t || out == lr);
            out == lr
        })
        .collect();
    let flips = outcomes.iter().filter(|&&f| f).count();
    assert!((60..=140).contains(&flips), "{flips} flips of 200");
    let mut again = ChaCha8Rng::seed_from_u64(1);
    let replay: Vec<bool> = (0..200)
        .map(|_| random_flip_left_right(&t, &mut again).unwrap() == lr)
        .collect();
    assert_eq!(outcomes, replay);

    // Each image of a batch gets its own draw.
    let batch = Tensor::stack(&vec![t.clone(); 32]).unwrap();
    let out = random_flip_left_right(&batch, &mut rng).unwrap();
    let flipped = out.unstack().iter().filter(|im| **im == lr).count();
    assert!(flipped > 0 && flipped < 32, "{flipped} of 32 flipped");
}

#[test]
fn random_crop_is_seeded_and_covers_every_offset() {
    let t = coords();
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..100 {
        let c = random_crop(&t, &[1, 2, 2], &mut rng).unwrap();
        assert_eq!(c.dims(), &[1, 2, 2]);
        let first = c.as_slice::<i32>().unwrap()[0];
        let (y, x) = (first as usize / 100, first as usize / 10 % 10);
        assert_eq!(c, slice(&t, &[y, x, 0], &[1, 2, 2]).unwrap());
        seen.insert((y, x));
    }
    assert_eq!(seen.len(), 4, "offsets seen: {seen:?}");
    let a = random_crop(&t, &[1, 1, 1], &mut ChaCha8Rng::seed_from_u64(3));
    let b = random_crop(&t, &[1, 1, 1], &mut ChaCha8Rng::seed_from_u64(3));
    assert_eq!(a.unwrap(), b.unwrap());
    let e = random_crop(&t, &[3, 1, 1], &mut rng).unwrap_err();
    assert_eq!(e.kind(), Kind::InvalidArgument);
    assert!(random_crop(&t, &[1, 1], &mut rng).is_err());
}

#[test]
fn per_image_standardization_matches_tensorflows_formula() {
    let t = Tensor::new([2, 2, 1], vec![1u8, 2, 3, 4]).unwrap();
    let s = per_image_standardization(&t).unwrap();
    assert_eq!(s.dtype(), DType::F32);
    // TensorFlow 2.21's output for this image, bit for bit (computed in
    // float32, as there: (x - 2.5) / sqrt(1.25) rounded once more).
    let want = [-1.341_640_7_f32, -0.447_213_6, 0.447_213_6, 1.341_640_7];
    assert_eq!(s.as_slice::<f32>().unwrap(), &want[..]);

    // A uniform image divides by 1/sqrt(N), not by zero.
    let flat = Tensor::new([2, 2, 1], vec![7.0f64; 4]).unwrap();
    let s = per_image_standardization(&flat).unwrap();
    // Every image comes out float32, as in TensorFlow.
    assert_eq!(s.dtype(), DType::F32);
    assert_eq!(s.as_slice::<f32>().unwrap(), &[0.0; 4]);
    // A nearly uniform one: stddev 0.25 < 1/sqrt(16).
    let mut v = vec![0.0f32; 16];
    v[0] = 1.0;
    let s = per_image_standardization(&Tensor::new([4, 4, 1], v).unwrap())
        .unwrap();
    let mean: f64 = 1.0 / 16.0;
    let std = (mean * (1.0 - mean)).sqrt();
    assert!(std < 0.25);
    let got = s.as_slice::<f32>().unwrap()[0] as f64;
    assert!((got - (1.0 - mean) / 0.25).abs() < 1e-6, "{got}");

    // In a batch each image is standardized on its own.
    let b = Tensor::new([2, 1, 2, 1], vec![0u8, 2, 10, 30]).unwrap();
    let s = per_image_standardization(&b).unwrap();
    assert_eq!(s.as_slice::<f32>().unwrap(), &[-1.0, 1.0, -1.0, 1.0]);
    assert!(per_image_standardization(&Tensor::vector(vec![1u8])).is_err());
}

/// Decodes every case of a golden JPEG corpus (`decoded.json`: file,
/// channels, and TensorFlow's shape and CRC-32C of the pixels, or the
/// error it raised) and checks each matches TensorFlow's; returns how many
/// cases there were.
fn check_jpeg_corpus(corpus: &str) -> usize {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/golden")
        .join(corpus);
    let meta: serde_json::Value = serde_json::from_slice(
        &std::fs::read(dir.join("decoded.json")).unwrap(),
    )
    .unwrap();
    let cases = meta["cases"].as_array().unwrap();
    for case in cases {
        let file = case["file"].as_str().unwrap();
        let jpeg = Bytes::from(std::fs::read(dir.join(file)).unwrap());
        let channels =
            Channels::from_count(case["channels"].as_i64().unwrap()).unwrap();
        let got = decode_jpeg(&jpeg, channels, file);
        if let Some(error) = case.get("error") {
            // TensorFlow's InvalidArgumentError.
            assert_eq!(error, "InvalidArgumentError", "{file} {channels:?}");
            let e = got.unwrap_err();
            assert_eq!(e.kind(), Kind::InvalidArgument, "{file}: {e}");
            assert_eq!(e.key(), Some(file));
            continue;
        }
        let t = got.unwrap_or_else(|e| panic!("{file} {channels:?}: {e}"));
        let shape: Vec<usize> = case["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_u64().unwrap() as usize)
            .collect();
        assert_eq!(t.dims(), &shape[..], "{file} {channels:?}");
        assert_eq!(
            u64::from(crc32c::crc32c(u8s(&t))),
            case["crc32c"].as_u64().unwrap(),
            "{file} {channels:?}: pixels differ from TensorFlow's"
        );
    }
    cases.len()
}

/// The JPEG corpus in `tests/data/golden/jpeg` (made by
/// `scripts/difftf/gen_jpeg_golden.py`): TensorFlow 2.21's decode_jpeg
/// output for each file and channel count, by CRC-32C and shape.
#[test]
fn jpeg_decodes_bit_exactly_as_tensorflow() {
    assert_eq!(check_jpeg_corpus("jpeg"), 72);
}

/// JPEGs from other encoders (`scripts/difftf/gen_jpeg_other.py`):
/// cjpeg's 4:2:2, 4:4:0 and 4:1:1 sampling, restart markers, arithmetic
/// coding (baseline and progressive), RGB without a colour transform, and
/// Pillow's CMYK with an Adobe marker (which TensorFlow, and so feedstock,
/// refuses to turn into one gray channel).
#[test]
fn jpeg_from_other_encoders_decodes_bit_exactly_as_tensorflow() {
    assert_eq!(check_jpeg_corpus("jpeg_other"), 30);
}

#[test]
fn truncated_jpeg_is_invalid_argument_not_a_gray_fill() {
    // libjpeg fills a cut-off image with gray and warns; TensorFlow
    // (try_recover_truncated=false) refuses it, and so do we.
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/golden/jpeg");
    let jpeg = Bytes::from(std::fs::read(dir.join("03.jpg")).unwrap());
    assert!(decode_jpeg(&jpeg, Channels::AsStored, "k").is_ok());
    for cut in [jpeg.len() - 2, jpeg.len() / 2, 200, 2] {
        let e = decode_jpeg(&jpeg.slice(..cut), Channels::AsStored, "f:9")
            .unwrap_err();
        assert_eq!(e.kind(), Kind::InvalidArgument, "cut at {cut}: {e}");
        assert_eq!(e.key(), Some("f:9"));
    }
    // Bytes after the end-of-image marker are ignored, as by TensorFlow.
    let mut padded = jpeg.to_vec();
    padded.extend_from_slice(b"trailing");
    let a = decode_jpeg(&Bytes::from(padded), Channels::Rgb, "k").unwrap();
    assert_eq!(a, decode_jpeg(&jpeg, Channels::Rgb, "k").unwrap());
}
