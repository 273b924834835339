//! Image decoding: JPEG and PNG bytes to `uint8` tensors of shape
//! `[height, width, channels]`, as `tf.io.decode_jpeg`, `decode_png` and
//! `decode_image` produce them. The preprocessing ops that usually follow
//! are in [`crate::decode::ops`].
//!
//! ```
//! use std::io::Cursor;
//! use feedstock::decode::image::{decode_image, Channels};
//!
//! // A 2x1 RGB PNG, made with the `image` crate.
//! let img = image::RgbImage::from_raw(2, 1, vec![255, 0, 0, 0, 0, 255])
//!     .unwrap();
//! let mut png = Vec::new();
//! img.write_to(&mut Cursor::new(&mut png), image::ImageFormat::Png)
//!     .unwrap();
//!
//! let png = bytes::Bytes::from(png);
//! let t = decode_image(&png, Channels::AsStored, "img.png")?;
//! assert_eq!(t.dims(), &[1, 2, 3]);
//! assert_eq!(t.as_slice::<u8>()?, &[255, 0, 0, 0, 0, 255]);
//! let rgba = decode_image(&png, Channels::Rgba, "img.png")?;
//! assert_eq!(rgba.as_slice::<u8>()?, &[255, 0, 0, 255, 0, 0, 255, 255]);
//! # Ok::<(), feedstock::Error>(())
//! ```
//!
//! Decoding is done by the `image` crate. Where TensorFlow's libraries
//! convert differently, this module follows TensorFlow: a 16-bit PNG
//! becomes 8-bit by keeping the high byte (libpng's `strip_16`), and a
//! colour JPEG read as grayscale takes libjpeg's luma (Rec. 601
//! weights, rounded), while a colour PNG read as grayscale takes
//! libpng's as TensorFlow configures it (the same weights in 15-bit
//! fixed point, truncated). JPEG colour output can differ from libjpeg's by a unit
//! or two per channel, as any two JPEG decoders' may (the IDCT and
//! upsampling are not bit-exact across implementations).

use bytes::Bytes;
use image::{DynamicImage, ImageFormat};

use crate::error::{Error, Result};
use crate::tensor::Tensor;

/// How many channels to decode an image to (TensorFlow's `channels`
/// argument: 0, 1, 2, 3 or 4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Channels {
    /// As many as the file stores (`channels=0`).
    #[default]
    AsStored,
    /// Grayscale (`channels=1`).
    Gray,
    /// Grayscale and alpha (`channels=2`; PNG only).
    GrayAlpha,
    /// Red, green, blue (`channels=3`).
    Rgb,
    /// Red, green, blue, alpha (`channels=4`; PNG only).
    Rgba,
}

impl Channels {
    /// The variant for TensorFlow's channel count.
    ///
    /// # Errors
    /// InvalidArgument for a count other than 0 to 4.
    pub fn from_count(n: usize) -> Result<Channels> {
        Ok(match n {
            0 => Channels::AsStored,
            1 => Channels::Gray,
            2 => Channels::GrayAlpha,
            3 => Channels::Rgb,
            4 => Channels::Rgba,
            _ => {
                return Err(Error::invalid_argument(format!(
                    "channels must be 0, 1, 2, 3 or 4, got {n}"
                )))
            }
        })
    }
}

/// An image format `decode_image` recognizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Format {
    /// JPEG (starts with `FF D8 FF`).
    Jpeg,
    /// PNG (starts with `89 50 4E 47 0D 0A 1A 0A`).
    Png,
}

impl Format {
    /// The format of `contents` by its leading bytes, if known.
    pub fn sniff(contents: &[u8]) -> Option<Format> {
        if contents.starts_with(&[0xff, 0xd8, 0xff]) {
            Some(Format::Jpeg)
        } else if contents.starts_with(b"\x89PNG\r\n\x1a\n") {
            Some(Format::Png)
        } else {
            None
        }
    }
}

/// Decodes a JPEG image to `uint8 [height, width, channels]`.
///
/// # Errors
/// InvalidArgument naming `key` for data that is not a valid JPEG, or for
/// [`Channels::GrayAlpha`] / [`Channels::Rgba`] (JPEG has no alpha).
pub fn decode_jpeg(
    contents: &Bytes,
    channels: Channels,
    key: &str,
) -> Result<Tensor> {
    decode(contents, Format::Jpeg, channels).map_err(|e| e.with_key(key))
}

/// Decodes a PNG image to `uint8 [height, width, channels]`.
///
/// # Errors
/// InvalidArgument naming `key` for data that is not a valid PNG.
pub fn decode_png(
    contents: &Bytes,
    channels: Channels,
    key: &str,
) -> Result<Tensor> {
    decode(contents, Format::Png, channels).map_err(|e| e.with_key(key))
}

/// Decodes a JPEG or PNG image, whichever `contents` is, to `uint8
/// [height, width, channels]`.
///
/// # Errors
/// InvalidArgument naming `key` when `contents` is neither format or is
/// not a valid image, or as [`decode_jpeg`] for the channels.
pub fn decode_image(
    contents: &Bytes,
    channels: Channels,
    key: &str,
) -> Result<Tensor> {
    let format = Format::sniff(contents).ok_or_else(|| {
        let head: Vec<u8> = contents.iter().take(4).copied().collect();
        Error::invalid_argument(format!(
            "unknown image format (first bytes {head:02x?}); expected JPEG \
             or PNG"
        ))
        .with_key(key)
    })?;
    decode(contents, format, channels).map_err(|e| e.with_key(key))
}

fn decode(
    contents: &[u8],
    format: Format,
    channels: Channels,
) -> Result<Tensor> {
    let (name, fmt) = match format {
        Format::Jpeg => ("JPEG", ImageFormat::Jpeg),
        Format::Png => ("PNG", ImageFormat::Png),
    };
    if format == Format::Jpeg
        && matches!(channels, Channels::GrayAlpha | Channels::Rgba)
    {
        return Err(Error::invalid_argument(format!(
            "a JPEG has no alpha channel: channels must be 0, 1 or 3, not \
             {channels:?}"
        )));
    }
    let img =
        image::load_from_memory_with_format(contents, fmt).map_err(|e| {
            Error::invalid_argument(format!(
                "invalid {name} data ({} bytes): {e}",
                contents.len()
            ))
        })?;
    let img = strip_16(img);
    let (w, h) = (img.width() as usize, img.height() as usize);
    let stored = img.color().channel_count();
    let (c, pixels) = match channels {
        Channels::AsStored => match stored {
            1 => (1, img.into_luma8().into_raw()),
            2 => (2, img.into_luma_alpha8().into_raw()),
            4 => (4, img.into_rgba8().into_raw()),
            _ => (3, img.into_rgb8().into_raw()),
        },
        Channels::Gray if format == Format::Jpeg && stored >= 3 => {
            (1, rec601_luma(&img.into_rgb8().into_raw()))
        }
        Channels::Gray if stored >= 3 => {
            (1, libpng_luma(&img.into_rgb8().into_raw()))
        }
        Channels::GrayAlpha if stored >= 3 => {
            let rgba = img.into_rgba8().into_raw();
            let y = libpng_luma(
                &rgba
                    .chunks_exact(4)
                    .flat_map(|p| [p[0], p[1], p[2]])
                    .collect::<Vec<_>>(),
            );
            let ya = y
                .iter()
                .zip(rgba.chunks_exact(4))
                .flat_map(|(&y, p)| [y, p[3]])
                .collect();
            (2, ya)
        }
        Channels::Gray => (1, img.into_luma8().into_raw()),
        Channels::GrayAlpha => (2, img.into_luma_alpha8().into_raw()),
        Channels::Rgb => (3, img.into_rgb8().into_raw()),
        Channels::Rgba => (4, img.into_rgba8().into_raw()),
    };
    Tensor::new([h, w, c], pixels)
}

/// A 16-bit image as 8-bit by keeping each sample's high byte, as libpng's
/// `png_set_strip_16` does (the `image` crate would round instead).
fn strip_16(img: DynamicImage) -> DynamicImage {
    fn hi(v: Vec<u16>) -> Vec<u8> {
        v.into_iter().map(|x| (x >> 8) as u8).collect()
    }
    let (w, h) = (img.width(), img.height());
    let out = match img {
        DynamicImage::ImageLuma16(b) => {
            image::GrayImage::from_raw(w, h, hi(b.into_raw()))
                .map(DynamicImage::ImageLuma8)
        }
        DynamicImage::ImageLumaA16(b) => {
            image::GrayAlphaImage::from_raw(w, h, hi(b.into_raw()))
                .map(DynamicImage::ImageLumaA8)
        }
        DynamicImage::ImageRgb16(b) => {
            image::RgbImage::from_raw(w, h, hi(b.into_raw()))
                .map(DynamicImage::ImageRgb8)
        }
        DynamicImage::ImageRgba16(b) => {
            image::RgbaImage::from_raw(w, h, hi(b.into_raw()))
                .map(DynamicImage::ImageRgba8)
        }
        other => Some(other),
    };
    out.expect("same dimensions and sample count")
}

/// libpng's RGB to grayscale as TensorFlow sets it up
/// (`png_set_rgb_to_gray(.., 0.299, 0.587)`): the weights in 15-bit fixed
/// point (9797, 19234 and the rest, 3737), truncated, not rounded.
/// TensorFlow 2.21 gives 11 for the pixel (22, 2, 35), where rounding
/// would give 12.
fn libpng_luma(rgb: &[u8]) -> Vec<u8> {
    rgb.chunks_exact(3)
        .map(|p| {
            let y = 9797 * u32::from(p[0])
                + 19234 * u32::from(p[1])
                + 3737 * u32::from(p[2]);
            (y >> 15) as u8
        })
        .collect()
}

/// libjpeg's RGB to grayscale: Y = 0.299 R + 0.587 G + 0.114 B, in its
/// 16-bit fixed point with rounding.
fn rec601_luma(rgb: &[u8]) -> Vec<u8> {
    rgb.chunks_exact(3)
        .map(|p| {
            let y = 19595 * u32::from(p[0])
                + 38470 * u32::from(p[1])
                + 7471 * u32::from(p[2])
                + 32768;
            (y >> 16) as u8
        })
        .collect()
}
