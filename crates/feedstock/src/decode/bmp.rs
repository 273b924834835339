//! BMP decoding as TensorFlow 2.21's `DecodeBmp` / `decode_image` kernel
//! does it (`tensorflow/core/kernels/image/decode_image_op.cc`): the
//! header's pixel offset, width, height and bits per pixel are all it
//! reads. 8-bit files keep their raw bytes, palette indices included
//! (one channel); 24-bit ones are BGR, 32-bit ones BGRA; a negative
//! height is a top-down file. Compression and the palette are ignored,
//! and the file must end exactly with its last row.
//!
//! Written by hand because a BMP crate (the `image` crate's among them)
//! decodes what the file means — palette colours, RLE, bit fields —
//! where TensorFlow's kernel hands out the bytes as they lie, and its
//! results are the reference.

use crate::error::{Error, Result};

/// A decoded BMP: `height x width x channels` samples.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Bmp {
    pub height: usize,
    pub width: usize,
    pub channels: usize,
    pub pixels: Vec<u8>,
}

/// Decodes a BMP to `channels` channels (0: as stored: 1, 3 or 4; else 3
/// or 4, the caller having refused 1 as TensorFlow does).
///
/// # Errors
/// InvalidArgument, with TensorFlow's messages: under 32 bytes, a bit
/// depth other than 8, 24 or 32, a width under 1 or a height of 0, a
/// negative pixel offset, over 2^30 pixel bytes, a size other than the
/// pixel offset plus the rows.
pub(crate) fn decode(contents: &[u8], channels: usize) -> Result<Bmp> {
    let invalid = |m: &str| Error::invalid_argument(m);
    if contents.len() < 32 {
        return Err(invalid(&format!(
            "Incomplete bmp content, requires at least 32 bytes to find the \
             header size, width, height, and bpp, got {} bytes",
            contents.len()
        )));
    }
    let int = |at: usize| {
        i32::from_le_bytes(contents[at..at + 4].try_into().expect("4 bytes"))
    };
    let (offset, width, height) = (int(10), int(18), int(22));
    let bpp = i16::from_le_bytes([contents[28], contents[29]]);
    let stored = bpp / 8;
    if !matches!(stored, 1 | 3 | 4) {
        return Err(invalid(&format!(
            "Number of channels inherent in the image must be 1, 3 or 4, \
             was {stored}"
        )));
    }
    if width <= 0 {
        return Err(invalid("Width must be positive"));
    }
    if height == 0 {
        return Err(invalid("Height must be nonzero"));
    }
    if offset < 0 {
        return Err(invalid("header size must be nonnegative"));
    }
    let (w, h) = (i64::from(width), i64::from(height).abs());
    if w * h >= i64::from(i32::MAX / 8) {
        return Err(invalid(
            "Total possible pixel bytes must be less than 2^30",
        ));
    }
    let stored = stored as usize;
    let row_size = (stored as i64 * w + 3) / 4 * 4;
    let size_diff = contents.len() as i64 - i64::from(offset) - row_size * h;
    if size_diff != 0 {
        return Err(invalid(&format!(
            "Input size should match (header_size + row_size * abs_height) \
             but they differ by {size_diff}"
        )));
    }
    let (w, h, row_size) = (w as usize, h as usize, row_size as usize);
    let out_channels = if channels == 0 { stored } else { channels };
    let data = &contents[offset as usize..];
    let mut pixels = Vec::with_capacity(h * w * out_channels);
    for y in 0..h {
        let row = if height < 0 { y } else { h - 1 - y };
        let row = &data[row * row_size..][..w * stored];
        for px in row.chunks_exact(stored) {
            push_pixel(&mut pixels, px, out_channels);
        }
    }
    Ok(Bmp {
        height: h,
        width: w,
        channels: out_channels,
        pixels,
    })
}

/// One stored pixel (gray, BGR or BGRA) as `channels` samples: gray
/// repeated, BGR(A) reordered, alpha 255 where the file has none.
fn push_pixel(out: &mut Vec<u8>, px: &[u8], channels: usize) {
    let (rgb, alpha) = match *px {
        [v] if channels == 1 => {
            out.push(v);
            return;
        }
        [v] => ([v, v, v], u8::MAX),
        [b, g, r] => ([r, g, b], u8::MAX),
        [b, g, r, a, ..] => ([r, g, b], a),
        _ => return,
    };
    out.extend_from_slice(&rgb);
    if channels == 4 {
        out.push(alpha);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A BMP of `rows` (bottom-up unless `height` is negative) after a
    /// 54-byte header.
    fn bmp(width: i32, height: i32, bpp: i16, rows: &[u8]) -> Vec<u8> {
        let mut b = vec![0u8; 54];
        b[..2].copy_from_slice(b"BM");
        b[10..14].copy_from_slice(&54i32.to_le_bytes());
        b[18..22].copy_from_slice(&width.to_le_bytes());
        b[22..26].copy_from_slice(&height.to_le_bytes());
        b[28..30].copy_from_slice(&bpp.to_le_bytes());
        b.extend_from_slice(rows);
        b
    }

    #[test]
    fn rows_are_bottom_up_padded_and_bgr() {
        // 1x2, 24-bit: each row 3 bytes + 1 padding; the last row first.
        let b = bmp(1, 2, 24, &[1, 2, 3, 0, 4, 5, 6, 0]);
        let img = decode(&b, 0).unwrap();
        assert_eq!((img.height, img.width, img.channels), (2, 1, 3));
        assert_eq!(img.pixels, [6, 5, 4, 3, 2, 1]);
        let top_down = decode(&bmp(1, -2, 24, &[1, 2, 3, 0, 4, 5, 6, 0]), 4);
        assert_eq!(top_down.unwrap().pixels, [3, 2, 1, 255, 6, 5, 4, 255]);
    }

    #[test]
    fn eight_bit_keeps_the_raw_bytes_and_alpha_is_kept_or_dropped() {
        let gray = bmp(2, 1, 8, &[7, 9, 0, 0]);
        assert_eq!(decode(&gray, 0).unwrap().pixels, [7, 9]);
        assert_eq!(decode(&gray, 3).unwrap().pixels, [7, 7, 7, 9, 9, 9]);
        let bgra = bmp(1, 1, 32, &[1, 2, 3, 4]);
        assert_eq!(decode(&bgra, 0).unwrap().pixels, [3, 2, 1, 4]);
        assert_eq!(decode(&bgra, 3).unwrap().pixels, [3, 2, 1]);
    }

    #[test]
    fn tensorflows_errors() {
        let msg = |b: &[u8]| decode(b, 0).unwrap_err().message().to_string();
        let mut trailing = bmp(1, 1, 24, &[1, 2, 3, 0]);
        trailing.push(0);
        assert_eq!(
            msg(&trailing),
            "Input size should match (header_size + row_size * abs_height) \
             but they differ by 1"
        );
        assert_eq!(
            msg(&bmp(1, 1, 1, &[0, 0, 0, 0])),
            "Number of channels inherent in the image must be 1, 3 or 4, was 0"
        );
        assert_eq!(msg(&bmp(1, 0, 24, &[])), "Height must be nonzero");
        assert_eq!(msg(&bmp(0, 1, 24, &[])), "Width must be positive");
        assert!(msg(b"BM").starts_with("Incomplete bmp content"));
    }
}
