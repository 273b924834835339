//! Image decoding: JPEG, PNG, GIF and BMP bytes to tensors of shape
//! `[height, width, channels]` (or `[frames, height, width, 3]` for a
//! GIF), as `tf.io.decode_jpeg`, `decode_png` and `decode_image` produce
//! them. Like TensorFlow's, each op decodes JPEG, PNG and single-frame
//! GIF whatever its name says; only `decode_image` takes BMP and
//! animated GIF. [`decode`] takes every attribute of the three ops
//! ([`DecodeSpec`]); [`decode_jpeg`], [`decode_png`] and
//! [`decode_image`] are their defaults. The preprocessing ops that usually follow
//! are in [`crate::transform`].
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
//! JPEG is decoded by libjpeg-turbo's decoder with TensorFlow's settings
//! (by default the integer-fast IDCT, fancy upsampling, no recovery of
//! truncated data; `decode_jpeg`'s attributes change them as in
//! TensorFlow), so the pixels are TensorFlow's bit for bit (checked
//! against TensorFlow 2.21 on the corpus in `tests/data/golden/jpeg`),
//! except where TensorFlow's SSE2 fast IDCT wraps around in 16 bits on
//! extreme-contrast blocks. A JPEG cut short is an error, as in
//! TensorFlow, not an image filled with gray, unless
//! `try_recover_truncated` asks for the gray. A CMYK JPEG becomes RGB by
//! TensorFlow's formula.
//!
//! PNG is decoded by the `image` crate. Where libpng, as TensorFlow sets
//! it up, converts differently, this module follows it: a 16-bit PNG
//! becomes 8-bit by keeping the high byte (`strip_16`); a colour PNG
//! read as grayscale takes Rec. 601 weights in 15-bit fixed point,
//! truncated for 8-bit samples and rounded for 16-bit ones; `channels=0`
//! keeps the colour type's channels (a tRNS chunk adds alpha only to a
//! palette image); an alpha channel added to a gray or palette image of
//! under 8 bits is `2^bits - 1`, libpng's filler before expansion.
//!
//! GIF frames are composed as TensorFlow composes them (see the `gif`
//! module: the canvas is the largest frame, disposal is ignored); BMP is
//! read as TensorFlow's own reader reads it (8-bit files keep their raw
//! palette indices). Both widen to 16 bits by 256.

use bytes::Bytes;
use image::ImageFormat as Codec;

use super::{bmp, gif, jpeg};
use crate::error::{Error, Result};
use crate::tensor::{DType, Tensor};

/// How many channels to decode an image to (TensorFlow's `channels`
/// argument: 0, 1, 3 or 4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Channels {
    /// As many as the file stores (`channels=0`).
    #[default]
    AsStored,
    /// Grayscale (`channels=1`).
    Gray,
    /// Red, green, blue (`channels=3`).
    Rgb,
    /// Red, green, blue, alpha (`channels=4`; not for JPEG or GIF).
    Rgba,
}

impl Channels {
    /// The variant for TensorFlow's channel count.
    ///
    /// # Errors
    /// InvalidArgument, with TensorFlow's message, for a count other than
    /// 0, 1, 3 or 4 (TensorFlow refuses 2 too).
    pub fn from_count(n: i64) -> Result<Channels> {
        Ok(match n {
            0 => Channels::AsStored,
            1 => Channels::Gray,
            3 => Channels::Rgb,
            4 => Channels::Rgba,
            _ => {
                return Err(Error::invalid_argument(format!(
                    "`channels` must be 0, 1, 3 or 4 but got {n}"
                )))
            }
        })
    }

    /// TensorFlow's count: 0 for [`Channels::AsStored`].
    pub fn count(self) -> usize {
        match self {
            Channels::AsStored => 0,
            Channels::Gray => 1,
            Channels::Rgb => 3,
            Channels::Rgba => 4,
        }
    }
}

/// Which TensorFlow op decodes: they take the same formats but differ in
/// their attributes, in BMP and animated GIF, and in their messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ImageFormat {
    /// `tf.image.decode_jpeg`.
    Jpeg,
    /// `tf.image.decode_png`.
    Png,
    /// `tf.image.decode_image`.
    Any,
}

impl ImageFormat {
    /// TensorFlow's name of the op's kernel.
    pub fn op_name(self) -> &'static str {
        match self {
            ImageFormat::Jpeg => "DecodeJpeg",
            ImageFormat::Png => "DecodePng",
            ImageFormat::Any => "DecodeImage",
        }
    }
}

/// `decode_jpeg`'s JPEG attributes, as given: they are checked when the
/// op runs, as TensorFlow's kernel checks them, and ignored for data
/// that is not a JPEG.
#[derive(Debug, Clone, PartialEq)]
pub struct JpegOptions {
    /// Scale the image down by 1, 2, 4 or 8 (`ratio`).
    pub ratio: i64,
    /// `""` or `"INTEGER_FAST"` (the fast integer IDCT) or
    /// `"INTEGER_ACCURATE"` (the accurate one).
    pub dct_method: String,
    /// libjpeg's fancy chroma upsampling (`fancy_upscaling`).
    pub fancy_upscaling: bool,
    /// Fill the missing rows of a cut-off JPEG with gray instead of
    /// failing (`try_recover_truncated`).
    pub try_recover_truncated: bool,
    /// Accepted and unused, as by TensorFlow 2.21: with recovery every
    /// row is filled (`acceptable_fraction`).
    pub acceptable_fraction: f32,
}

impl Default for JpegOptions {
    /// TensorFlow's defaults.
    fn default() -> JpegOptions {
        JpegOptions {
            ratio: 1,
            dct_method: String::new(),
            fancy_upscaling: true,
            try_recover_truncated: false,
            acceptable_fraction: 1.0,
        }
    }
}

impl JpegOptions {
    /// The libjpeg settings, or TensorFlow's error for a bad attribute.
    fn settings(&self) -> Result<jpeg::Settings> {
        let ratio = match self.ratio {
            r @ (1 | 2 | 4 | 8) => r as u8,
            r => {
                return Err(Error::invalid_argument(format!(
                    "ratio must be 1, 2, 4, or 8, got {r}"
                )))
            }
        };
        let accurate_dct = match self.dct_method.as_str() {
            "" | "INTEGER_FAST" => false,
            "INTEGER_ACCURATE" => true,
            _ => {
                return Err(Error::invalid_argument(
                    "dct_method must be one of {'', 'INTEGER_FAST', \
                     'INTEGER_ACCURATE'}",
                ))
            }
        };
        Ok(jpeg::Settings {
            ratio,
            accurate_dct,
            fancy_upscaling: self.fancy_upscaling,
            try_recover_truncated: self.try_recover_truncated,
        })
    }
}

/// One decode op with all its attributes.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodeSpec {
    /// The op.
    pub op: ImageFormat,
    /// `channels`, as given: 0, 1, 3 or 4 decode, anything else fails
    /// when run (TensorFlow's `InvalidArgumentError`).
    pub channels: i64,
    /// The output type: `U8`, or `U16` (`decode_png`, `decode_image`),
    /// or `F32` (`decode_image`: the samples scaled to `[0, 1]`).
    pub dtype: DType,
    /// `decode_image`: a GIF becomes `[frames, height, width, 3]` (else
    /// its first frame, `[height, width, 3]`).
    pub expand_animations: bool,
    /// `decode_jpeg`'s attributes (only [`ImageFormat::Jpeg`] uses them).
    pub jpeg: JpegOptions,
}

impl DecodeSpec {
    /// The op with its defaults: `channels` and `dtype` `U8`.
    pub fn new(op: ImageFormat, channels: Channels) -> DecodeSpec {
        DecodeSpec {
            op,
            channels: channels.count() as i64,
            dtype: DType::U8,
            expand_animations: true,
            jpeg: JpegOptions::default(),
        }
    }
}

/// An image format, by the file's leading bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Format {
    /// JPEG (starts with `FF D8 FF`).
    Jpeg,
    /// PNG (starts with `89 50 4E 47 0D 0A 1A 0A`).
    Png,
    /// GIF (starts with `GIF8`).
    Gif,
    /// BMP (starts with `BM`).
    Bmp,
}

impl Format {
    /// The format of `contents` by its leading bytes, if known.
    pub fn sniff(contents: &[u8]) -> Option<Format> {
        if contents.starts_with(&[0xff, 0xd8, 0xff]) {
            Some(Format::Jpeg)
        } else if contents.starts_with(b"\x89PNG\r\n\x1a\n") {
            Some(Format::Png)
        } else if contents.starts_with(b"GIF8") {
            Some(Format::Gif)
        } else if contents.starts_with(b"BM") {
            Some(Format::Bmp)
        } else {
            None
        }
    }
}

/// Decodes a JPEG, PNG or single-frame GIF to `uint8 [height, width,
/// channels]`, as `tf.io.decode_jpeg` with its defaults.
///
/// # Errors
/// As [`decode`].
pub fn decode_jpeg(
    contents: &Bytes,
    channels: Channels,
    key: &str,
) -> Result<Tensor> {
    decode(contents, &DecodeSpec::new(ImageFormat::Jpeg, channels), key)
}

/// Decodes a PNG, JPEG or single-frame GIF to `uint8 [height, width,
/// channels]`, as `tf.io.decode_png` with its defaults.
///
/// # Errors
/// As [`decode`].
pub fn decode_png(
    contents: &Bytes,
    channels: Channels,
    key: &str,
) -> Result<Tensor> {
    decode(contents, &DecodeSpec::new(ImageFormat::Png, channels), key)
}

/// Decodes a JPEG, PNG, GIF or BMP to `uint8 [height, width, channels]`
/// (`[frames, height, width, 3]` for a GIF), as `tf.io.decode_image` with
/// its defaults.
///
/// # Errors
/// As [`decode`].
pub fn decode_image(
    contents: &Bytes,
    channels: Channels,
    key: &str,
) -> Result<Tensor> {
    decode(contents, &DecodeSpec::new(ImageFormat::Any, channels), key)
}

/// Decodes `contents` as the op of `spec` does.
///
/// # Errors
/// InvalidArgument, with TensorFlow's message, naming `key` (unless it is
/// empty): a bad attribute (`channels` other than 0, 1, 3 or 4, JPEG
/// `ratio` or `dct_method`), data of no known format or not a valid
/// image, a BMP or an animated GIF given to `decode_jpeg` /
/// `decode_png`, a channel count the format cannot give, a JPEG of 2^29
/// samples or more.
pub fn decode(
    contents: &[u8],
    spec: &DecodeSpec,
    key: &str,
) -> Result<Tensor> {
    decode_unkeyed(contents, spec).map_err(|e| {
        if key.is_empty() {
            e
        } else {
            e.with_key(key)
        }
    })
}

fn decode_unkeyed(contents: &[u8], spec: &DecodeSpec) -> Result<Tensor> {
    let channels = Channels::from_count(spec.channels)?;
    let jpeg_settings = match spec.op {
        ImageFormat::Jpeg => spec.jpeg.settings()?,
        _ => jpeg::Settings::default(),
    };
    if contents.is_empty() {
        return Err(Error::invalid_argument("Input is empty."));
    }
    let format = Format::sniff(contents).ok_or_else(|| {
        let head: Vec<u8> = contents.iter().take(4).copied().collect();
        Error::invalid_argument(format!(
            "Unknown image file format (first bytes {head:02x?}). One of \
             JPEG, PNG, GIF, BMP required."
        ))
    })?;
    let (dims, pixels) = match format {
        Format::Jpeg => {
            if channels == Channels::Rgba {
                return Err(Error::invalid_argument(
                    "JPEG does not support 4 channels",
                ));
            }
            let (h, w, c, px) =
                jpeg::decode(contents, channels.count(), jpeg_settings)?;
            (vec![h, w, c], Pixels::Bytes(px))
        }
        Format::Png => decode_png_data(contents, channels)?,
        Format::Gif => decode_gif_data(contents, spec)?,
        Format::Bmp => decode_bmp_data(contents, spec)?,
    };
    pixels.into_tensor(dims, spec.dtype)
}

/// Decodes a GIF as TensorFlow's ops do: `[frames, height, width, 3]`
/// for `decode_image` (its first frame `[height, width, 3]` without
/// `expand_animations`), a single frame `[height, width, 3]` for
/// `decode_jpeg` / `decode_png`, which refuse an animation.
fn decode_gif_data(
    contents: &[u8],
    spec: &DecodeSpec,
) -> Result<(Vec<usize>, Pixels)> {
    if !matches!(spec.channels, 0 | 3) {
        return Err(Error::invalid_argument(format!(
            "channels must be 0 or 3 for GIF, got {}",
            spec.channels
        )));
    }
    let first_only = spec.op == ImageFormat::Any && !spec.expand_animations;
    let g = gif::decode(contents, first_only)?;
    let dims = match spec.op {
        ImageFormat::Any if spec.expand_animations => {
            vec![g.frames, g.height, g.width, 3]
        }
        ImageFormat::Any => vec![g.height, g.width, 3],
        _ if g.frames == 1 => vec![g.height, g.width, 3],
        _ => {
            return Err(Error::invalid_argument(format!(
                "Got {} frames, but animated gifs can only be decoded by \
                 tf.io.decode_gif or tf.io.decode_image",
                g.frames
            )))
        }
    };
    Ok((dims, Pixels::Bytes(g.pixels)))
}

/// Decodes a BMP as `decode_image` does (the other ops refuse it).
fn decode_bmp_data(
    contents: &[u8],
    spec: &DecodeSpec,
) -> Result<(Vec<usize>, Pixels)> {
    if spec.channels == 1 {
        return Err(Error::invalid_argument(
            "`channels` must be 0, 3 or 4 for BMP, but got 1",
        ));
    }
    if spec.op != ImageFormat::Any {
        return Err(Error::invalid_argument(format!(
            "Trying to decode BMP format using a wrong op. Use `decode_bmp` \
             or `decode_image` instead. Op used: {}",
            spec.op.op_name()
        )));
    }
    let b = bmp::decode(contents, spec.channels as usize)?;
    Ok((vec![b.height, b.width, b.channels], Pixels::Bytes(b.pixels)))
}

/// Decoded samples, before the conversion to the op's dtype.
enum Pixels {
    /// 8-bit samples of a JPEG, GIF or BMP: TensorFlow widens these to
    /// 16 bits by 256 and to float by `1/255`.
    Bytes(Vec<u8>),
    /// PNG samples (libpng's): 8-bit ones (`sixteen` false) widen to 16
    /// bits by 257, 16-bit ones narrow to 8 by their high byte; float is
    /// the 16-bit value times `1/65535`.
    Png { samples: Vec<u16>, sixteen: bool },
}

impl Pixels {
    fn into_tensor(self, dims: Vec<usize>, dtype: DType) -> Result<Tensor> {
        match (self, dtype) {
            (Pixels::Bytes(v), DType::U8) => Tensor::new(dims, v),
            (Pixels::Bytes(v), DType::U16) => Tensor::new(
                dims,
                v.into_iter().map(|x| u16::from(x) << 8).collect::<Vec<_>>(),
            ),
            (Pixels::Bytes(v), DType::F32) => {
                let scale = 1.0f32 / 255.0;
                Tensor::new(
                    dims,
                    v.into_iter()
                        .map(|x| f32::from(x) * scale)
                        .collect::<Vec<_>>(),
                )
            }
            (Pixels::Png { samples, sixteen }, DType::U8) => {
                let shift = if sixteen { 8 } else { 0 };
                Tensor::new(
                    dims,
                    samples
                        .into_iter()
                        .map(|x| (x >> shift) as u8)
                        .collect::<Vec<_>>(),
                )
            }
            (Pixels::Png { samples, sixteen }, DType::U16 | DType::F32) => {
                let wide =
                    samples
                        .into_iter()
                        .map(|x| if sixteen { x } else { x * 257 });
                if dtype == DType::U16 {
                    return Tensor::new(dims, wide.collect::<Vec<_>>());
                }
                let scale = 1.0f32 / 65535.0;
                Tensor::new(
                    dims,
                    wide.map(|x| f32::from(x) * scale).collect::<Vec<_>>(),
                )
            }
            (_, other) => Err(Error::invalid_argument(format!(
                "images decode to uint8, uint16 or float32, not {other:?}"
            ))),
        }
    }
}

/// What a PNG's header says, as libpng would see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct PngHeader {
    bit_depth: u8,
    color_type: u8,
    has_trns: bool,
}

impl PngHeader {
    const PALETTE: u8 = 3;

    /// The IHDR fields and whether a tRNS chunk comes before the image
    /// data; `None` for a malformed header (the decoder then says why).
    fn parse(png: &[u8]) -> Option<PngHeader> {
        let ihdr = png.get(8..33)?;
        if &ihdr[4..8] != b"IHDR" {
            return None;
        }
        let mut header = PngHeader {
            bit_depth: ihdr[16],
            color_type: ihdr[17],
            has_trns: false,
        };
        let mut at = 8;
        while let Some(chunk) = png.get(at..at + 8) {
            let len = u32::from_be_bytes(chunk[..4].try_into().ok()?) as usize;
            match &chunk[4..8] {
                b"tRNS" => header.has_trns = true,
                b"IDAT" | b"IEND" => break,
                _ => {}
            }
            at = at.checked_add(12)?.checked_add(len)?;
        }
        Some(header)
    }

    /// The channels `channels=0` gives: the colour type's, with alpha for
    /// a palette with tRNS (libpng's `png_get_channels` after TensorFlow's
    /// expansions).
    fn stored_channels(self) -> usize {
        match self.color_type {
            0 => 1,
            4 => 2,
            6 => 4,
            Self::PALETTE if self.has_trns => 4,
            _ => 3,
        }
    }

    /// The alpha libpng adds to an image without one: its filler, which
    /// for a gray or palette image of under 8 bits is added before the
    /// samples are expanded, so is `2^bits - 1`.
    fn filler(self, sixteen: bool) -> u16 {
        if sixteen {
            u16::MAX
        } else if self.bit_depth < 8 && matches!(self.color_type, 0 | 3) {
            (1 << self.bit_depth) - 1
        } else {
            255
        }
    }
}

/// Decodes a PNG to `[height, width, c]` samples by libpng's rules.
fn decode_png_data(
    contents: &[u8],
    channels: Channels,
) -> Result<(Vec<usize>, Pixels)> {
    let img = image::load_from_memory_with_format(contents, Codec::Png)
        .map_err(|e| {
            Error::invalid_argument(format!(
                "invalid PNG data ({} bytes): {e}",
                contents.len()
            ))
        })?;
    let (w, h) = (img.width() as usize, img.height() as usize);
    // The `image` crate expands everything to 8 or 16 bits, a tRNS chunk
    // to an alpha channel.
    let n = usize::from(img.color().channel_count());
    let sixteen = img.color().bytes_per_pixel() as usize == 2 * n;
    let header = PngHeader::parse(contents).unwrap_or(PngHeader {
        bit_depth: if sixteen { 16 } else { 8 },
        color_type: [0, 0, 4, 2, 6][n],
        has_trns: false,
    });
    let samples: Vec<u16> = if sixteen {
        img.into_bytes()
            .chunks_exact(2)
            .map(|b| u16::from_ne_bytes([b[0], b[1]]))
            .collect()
    } else {
        img.into_bytes().into_iter().map(u16::from).collect()
    };
    let c = match channels {
        Channels::AsStored => header.stored_channels(),
        other => other.count(),
    };
    let samples =
        convert_channels(&samples, n, c, sixteen, header.filler(sixteen));
    Ok((vec![h, w, c], Pixels::Png { samples, sixteen }))
}

/// `n`-channel samples (1 gray, 2 gray and alpha, 3 RGB, 4 RGBA) as `c`
/// channels, converted as libpng converts them for TensorFlow: colour to
/// gray by [`libpng_luma`], gray to colour by copying, an alpha channel
/// dropped or added as `filler`.
fn convert_channels(
    samples: &[u16],
    n: usize,
    c: usize,
    sixteen: bool,
    filler: u16,
) -> Vec<u16> {
    if n == c {
        return samples.to_vec();
    }
    let mut out = Vec::with_capacity(samples.len() / n * c);
    for p in samples.chunks_exact(n) {
        let rgb = if n >= 3 {
            [p[0], p[1], p[2]]
        } else {
            [p[0]; 3]
        };
        let alpha = match n {
            2 => p[1],
            4 => p[3],
            _ => filler,
        };
        match c {
            1 if n >= 3 => out.push(libpng_luma(rgb, sixteen)),
            1 => out.push(p[0]),
            2 => out.extend([libpng_luma(rgb, sixteen), alpha]),
            3 => out.extend(rgb),
            _ => out.extend([rgb[0], rgb[1], rgb[2], alpha]),
        }
    }
    out
}

/// libpng's RGB to grayscale as TensorFlow sets it up
/// (`png_set_rgb_to_gray(.., 0.299, 0.587)`): the weights in 15-bit fixed
/// point (9797, 19234 and the rest, 3737); truncated for 8-bit samples
/// (TensorFlow 2.21 gives 11 for the pixel (22, 2, 35), where rounding
/// would give 12), rounded for 16-bit ones, whose 8-bit result is then
/// the high byte.
fn libpng_luma(rgb: [u16; 3], sixteen: bool) -> u16 {
    let y = 9797 * u32::from(rgb[0])
        + 19234 * u32::from(rgb[1])
        + 3737 * u32::from(rgb[2]);
    let round = if sixteen { 1 << 14 } else { 0 };
    ((y + round) >> 15) as u16
}

/// The `[height, width, channels]` of a JPEG from its header, without
/// decoding it (`tf.image.extract_jpeg_shape`).
///
/// # Errors
/// InvalidArgument for data that is not a JPEG.
pub fn extract_jpeg_shape(contents: &[u8]) -> Result<[usize; 3]> {
    let (h, w, c) = jpeg::header(contents)?;
    Ok([h, w, c])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sixteen_bit_luma_rounds_and_eight_bit_luma_truncates() {
        // TensorFlow 2.21: 37122 and 35605 for these 16-bit pixels.
        assert_eq!(libpng_luma([1000, 50000, 65535], true), 37122);
        assert_eq!(libpng_luma([12345, 54321, 257], true), 35605);
        assert_eq!(libpng_luma([22, 2, 35], false), 11);
    }

    #[test]
    fn png_header_rules() {
        let h = |bit_depth, color_type, has_trns| PngHeader {
            bit_depth,
            color_type,
            has_trns,
        };
        assert_eq!(h(8, 0, true).stored_channels(), 1);
        assert_eq!(h(8, 2, true).stored_channels(), 3);
        assert_eq!(h(4, 3, true).stored_channels(), 4);
        assert_eq!(h(4, 3, false).stored_channels(), 3);
        assert_eq!(h(1, 0, false).filler(false), 1);
        assert_eq!(h(2, 3, false).filler(false), 3);
        assert_eq!(h(8, 0, false).filler(false), 255);
        assert_eq!(h(16, 2, false).filler(true), u16::MAX);
    }

    #[test]
    fn bad_attributes_are_tensorflows_errors_without_an_empty_key() {
        let mut spec = DecodeSpec::new(ImageFormat::Jpeg, Channels::Rgb);
        spec.jpeg.ratio = 3;
        let e = decode(b"\xff\xd8\xff", &spec, "").unwrap_err();
        assert_eq!(e.message(), "ratio must be 1, 2, 4, or 8, got 3");
        assert_eq!(e.key(), None);
        spec.jpeg.ratio = 2;
        spec.jpeg.dct_method = "FLOAT".into();
        assert!(decode(b"x", &spec, "k").unwrap_err().key() == Some("k"));
    }
}
