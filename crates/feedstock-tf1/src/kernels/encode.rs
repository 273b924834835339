//! `tf.image.encode_png` and `tf.image.encode_jpeg`: an image tensor as
//! the bytes of a PNG (the `image` crate's encoder, lossless: decoding
//! gives the pixels back exactly) or a JPEG (libjpeg as the `mozjpeg`
//! crate builds it, set up with libjpeg-turbo's defaults and then as
//! TensorFlow's `jpeg::Compress` sets quality, progression, chroma
//! subsampling, density and XMP metadata). The bytes need not be
//! TensorFlow's; the checks and their messages are its kernels'.

use std::panic::{catch_unwind, AssertUnwindSafe};

use bytes::Bytes;
use feedstock::error::{Error, Result};
use feedstock::tensor::{DType, Tensor};
use image::codecs::png::{CompressionType, FilterType, PngEncoder};
use image::{ExtendedColorType, ImageEncoder};
use mozjpeg::{
    qtable, ColorSpace, Compress, Marker, PixelDensity, PixelDensityUnit,
};

/// `(height, width, channels)` of a 3-D image, with TensorFlow's
/// message for another rank, and no dimension too large for `u32`.
fn image_dims(image: &Tensor) -> Result<(usize, usize, usize)> {
    let d = image.dims();
    if d.len() != 3 {
        return Err(Error::invalid_argument(format!(
            "image must be 3-dimensional{}",
            image.shape()
        )));
    }
    if d[0] == 0 || d[1] == 0 {
        // TensorFlow 2.21's kernels crash on an empty image.
        return Err(Error::invalid_argument(format!(
            "image must not be empty, got {}",
            image.shape()
        )));
    }
    if u32::try_from(d[0] * d[1]).is_err() {
        return Err(Error::invalid_argument(format!(
            "image too large to encode: {}",
            image.shape()
        )));
    }
    Ok((d[0], d[1], d[2]))
}

/// A 3-D `uint8` or `uint16` image with 1 (grey), 2 (grey and alpha), 3
/// (RGB) or 4 (RGBA) channels as a PNG, as TensorFlow's `EncodePng`:
/// `compression` -1 (zlib's default) or a level 0 to 9.
///
/// # Errors
/// InvalidArgument with TensorFlow's messages for a rank other than 3,
/// another channel count or a compression out of range; for an empty
/// image (which TensorFlow 2.21 crashes on).
pub fn encode_png(image: &Tensor, compression: i64) -> Result<Tensor> {
    if !(-1..=9).contains(&compression) {
        return Err(Error::invalid_argument(format!(
            "compression should be in [-1,9], got {compression}"
        )));
    }
    let d = image.dims();
    if d.len() != 3 {
        return Err(Error::invalid_argument(format!(
            "image must be 3-dimensional{}",
            image.shape()
        )));
    }
    if !(1..=4).contains(&d[2]) {
        return Err(Error::invalid_argument(format!(
            "image must have 1, 2, 3, or 4 channels, got {}",
            d[2]
        )));
    }
    let (h, w, c) = image_dims(image)?;
    let (data, color) = match image.dtype() {
        DType::U8 => {
            let color = [
                ExtendedColorType::L8,
                ExtendedColorType::La8,
                ExtendedColorType::Rgb8,
                ExtendedColorType::Rgba8,
            ][c - 1];
            (image.as_slice::<u8>()?.to_vec(), color)
        }
        DType::U16 => {
            let color = [
                ExtendedColorType::L16,
                ExtendedColorType::La16,
                ExtendedColorType::Rgb16,
                ExtendedColorType::Rgba16,
            ][c - 1];
            let v = image.as_slice::<u16>()?;
            (v.iter().flat_map(|s| s.to_ne_bytes()).collect(), color)
        }
        dt => {
            return Err(Error::invalid_dtype(format!(
                "encode_png: image must be uint8 or uint16, not {dt}"
            )))
        }
    };
    let level = match compression {
        -1 => CompressionType::Default,
        0 => CompressionType::Uncompressed,
        n => CompressionType::Level(n as u8),
    };
    let mut out = Vec::new();
    PngEncoder::new_with_quality(&mut out, level, FilterType::Adaptive)
        .write_image(&data, w as u32, h as u32, color)
        .map_err(|e| Error::internal(format!("PNG encoding failed: {e}")))?;
    Ok(Tensor::scalar(Bytes::from(out)))
}

/// TensorFlow's `EncodeJpeg` attributes.
#[derive(Debug, Clone, PartialEq)]
pub struct JpegOptions {
    /// `""` (from the channels), `"grayscale"` or `"rgb"`.
    pub format: String,
    /// 0 to 100.
    pub quality: i64,
    /// A progressive JPEG.
    pub progressive: bool,
    /// Optimised Huffman tables.
    pub optimize_size: bool,
    /// Chroma at half resolution (4:2:0), else 4:4:4.
    pub chroma_downsampling: bool,
    /// `"in"` or `"cm"`.
    pub density_unit: String,
    /// Horizontal pixels per unit.
    pub x_density: i64,
    /// Vertical pixels per unit.
    pub y_density: i64,
    /// XMP metadata embedded in an APP1 marker when not empty.
    pub xmp_metadata: Vec<u8>,
}

/// A 3-D `uint8` image with 1 or 3 channels as a JPEG, as TensorFlow's
/// `EncodeJpeg`.
///
/// # Errors
/// InvalidArgument with TensorFlow's messages for a rank other than 3,
/// another channel count, one the format does not expect, a quality out
/// of `[0, 100]`, or an unknown format or density unit; for an empty
/// image; what libjpeg reports (a side over 65500 pixels).
pub fn encode_jpeg(image: &Tensor, opts: &JpegOptions) -> Result<Tensor> {
    let unit = match opts.density_unit.as_str() {
        "in" => PixelDensityUnit::Inches,
        "cm" => PixelDensityUnit::Centimeters,
        u => {
            return Err(Error::invalid_argument(format!(
                "density_unit must be 'in' or 'cm', got {u}"
            )))
        }
    };
    if !(0..=100).contains(&opts.quality) {
        return Err(Error::invalid_argument(format!(
            "quality must be in [0,100], got {}",
            opts.quality
        )));
    }
    let d = image.dims();
    if d.len() != 3 {
        return Err(Error::invalid_argument(format!(
            "image must be 3-dimensional{}",
            image.shape()
        )));
    }
    let shown = d.iter().map(usize::to_string).collect::<Vec<_>>().join(",");
    let channels = match opts.format.as_str() {
        "" => {
            if !matches!(d[2], 1 | 3) {
                return Err(Error::invalid_argument(format!(
                    "image must have 1 or 3 channels, got [{shown}]"
                )));
            }
            d[2]
        }
        "grayscale" => 1,
        "rgb" => 3,
        f => {
            return Err(Error::invalid_argument(format!(
                "format must be '', 'grayscale' or 'rgb', got {f}"
            )))
        }
    };
    if channels != d[2] {
        return Err(Error::invalid_argument(format!(
            "format {} expects {channels} channels, got [{shown}]",
            opts.format
        )));
    }
    let (h, w, _) = image_dims(image)?;
    if image.dtype() != DType::U8 {
        return Err(Error::invalid_dtype(format!(
            "encode_jpeg: image must be uint8, not {}",
            image.dtype()
        )));
    }
    let pixels = image.as_slice::<u8>()?;
    // libjpeg reports a fatal error by unwinding out of its callback
    // (the `mozjpeg` crate's error manager): caught here as an error.
    let encoded = catch_unwind(AssertUnwindSafe(|| {
        compress(pixels, w, h, channels, unit, opts)
    }));
    match encoded {
        Ok(Ok(bytes)) => Ok(Tensor::scalar(Bytes::from(bytes))),
        Ok(Err(e)) => Err(Error::invalid_argument(format!(
            "JPEG encoding failed: {e}"
        ))),
        Err(panic) => {
            let msg = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| {
                    panic.downcast_ref::<&str>().map(|s| s.to_string())
                })
                .unwrap_or_default();
            Err(Error::invalid_argument(format!(
                "JPEG encoding failed: {msg}"
            )))
        }
    }
}

/// libjpeg's compression of `pixels`, set up as TensorFlow's
/// `jpeg::Compress`.
fn compress(
    pixels: &[u8],
    w: usize,
    h: usize,
    channels: usize,
    unit: PixelDensityUnit,
    opts: &JpegOptions,
) -> std::io::Result<Vec<u8>> {
    let space = if channels == 1 {
        ColorSpace::JCS_GRAYSCALE
    } else {
        ColorSpace::JCS_RGB
    };
    let mut c = Compress::new(space);
    c.set_fastest_defaults();
    c.set_size(w, h);
    c.set_optimize_coding(opts.optimize_size);
    c.set_pixel_density(PixelDensity {
        unit,
        // libjpeg's densities are 16-bit, converted as C converts.
        x: opts.x_density as u16,
        y: opts.y_density as u16,
    });
    if opts.quality >= 25 {
        c.set_quality(opts.quality as f32);
    } else {
        // TensorFlow asks libjpeg for baseline tables (entries clamped to
        // 255), which only matters under quality 25; the `mozjpeg`
        // crate's `set_quality` does not, so the tables are scaled here
        // by `QTable::scaled` (clamped to 255). libjpeg's scale is the
        // integer percentage `5000 / quality` (a quality of 0 taken as
        // 1) and it rounds `entry × scale / 100` half up: the quality
        // given gives that scale, a millionth larger so that the float
        // rounding goes up at the halves as libjpeg's does.
        let percent = 5000 / opts.quality.max(1);
        let q = 5000.0 / (percent as f32 * 1.000_002);
        c.set_luma_qtable(&qtable::AnnexK_Luma.scaled(q, q));
        c.set_chroma_qtable(&qtable::AnnexK_Chroma.scaled(q, q));
    }
    if opts.progressive {
        c.set_progressive_mode();
    }
    if !opts.chroma_downsampling && channels == 3 {
        c.set_chroma_sampling_pixel_sizes((1, 1), (1, 1));
    }
    let mut started = c.start_compress(Vec::new())?;
    if !opts.xmp_metadata.is_empty() {
        let mut packet = b"http://ns.adobe.com/xap/1.0/\0".to_vec();
        packet.extend_from_slice(&opts.xmp_metadata);
        started.write_marker(Marker::APP(1), &packet);
    }
    started.write_scanlines(pixels)?;
    started.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jpeg_opts() -> JpegOptions {
        JpegOptions {
            format: String::new(),
            quality: 95,
            progressive: false,
            optimize_size: false,
            chroma_downsampling: true,
            density_unit: "in".into(),
            x_density: 300,
            y_density: 300,
            xmp_metadata: Vec::new(),
        }
    }

    fn bytes_of(t: &Tensor) -> Bytes {
        t.as_slice::<Bytes>().unwrap()[0].clone()
    }

    #[test]
    fn png_round_trips_through_the_image_crate() {
        let px: Vec<u16> = (0..2 * 3 * 2).map(|i| i * 5000).collect();
        let t = Tensor::new([2, 3, 2], px.clone()).unwrap();
        let png = bytes_of(&encode_png(&t, 9).unwrap());
        let img = image::load_from_memory(&png).unwrap().into_luma_alpha16();
        assert_eq!(img.into_raw(), px);
        let five = Tensor::new([1, 1, 5], vec![0u8; 5]).unwrap();
        let e = encode_png(&five, -1).unwrap_err();
        assert!(e.to_string().contains("1, 2, 3, or 4 channels"), "{e}");
        assert!(encode_png(&t, 10).is_err());
    }

    #[test]
    fn jpeg_checks_and_encodes() {
        let t = Tensor::new([8, 8, 1], vec![128u8; 64]).unwrap();
        let jpg = bytes_of(&encode_jpeg(&t, &jpeg_opts()).unwrap());
        assert_eq!(&jpg[..2], &[0xff, 0xd8]);
        let rgb = JpegOptions {
            format: "rgb".into(),
            ..jpeg_opts()
        };
        let e = encode_jpeg(&t, &rgb).unwrap_err();
        assert!(
            e.to_string().contains("format rgb expects 3 channels"),
            "{e}"
        );
        let wide = Tensor::new([1, 70_000, 1], vec![0u8; 70_000]).unwrap();
        let e = encode_jpeg(&wide, &jpeg_opts()).unwrap_err();
        assert!(e.to_string().contains("JPEG encoding failed"), "{e}");
    }
}
