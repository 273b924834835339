//! JPEG decoding with libjpeg-turbo's decoder, set up as TensorFlow sets
//! it up (`tensorflow/core/lib/jpeg/jpeg_mem.cc` with `decode_jpeg`'s
//! defaults), so that the pixels are TensorFlow's bit for bit.
//!
//! The decoder is the one the `mozjpeg` crate builds from source (MozJPEG
//! is libjpeg-turbo with a different encoder), built with its
//! arithmetic-coding decoder as TensorFlow's is. `decode_jpeg`'s
//! attributes map as TensorFlow maps them ([`Settings`]): `dct_method`
//! `""` or `"INTEGER_FAST"` to `JDCT_IFAST`, `"INTEGER_ACCURATE"` to
//! `JDCT_ISLOW`; `fancy_upscaling`; `ratio` as libjpeg's scaling by
//! `1/ratio`; `try_recover_truncated` lets libjpeg's fake end-of-image
//! marker fill a cut-off image's missing rows with gray (otherwise a
//! truncated JPEG is an error). The output is `JCS_GRAYSCALE` or
//! `JCS_RGB`, and for a CMYK / YCCK JPEG `JCS_CMYK` converted to RGB by
//! TensorFlow's formula.

use std::cell::Cell;
use std::io::{self, BufRead, Read};
use std::panic::{catch_unwind, AssertUnwindSafe};

use mozjpeg::{ColorSpace, DctMethod, Decompress, Marker};

use crate::error::{Error, Result};

/// TensorFlow refuses a JPEG of `2^29` or more samples (width x height x
/// the components stored) as too large; so do we, before allocating.
const MAX_SAMPLES: u64 = 1 << 29;

/// How libjpeg is set up: TensorFlow's `decode_jpeg` attributes, checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Settings {
    /// Scale the image down by this (1, 2, 4 or 8).
    pub ratio: u8,
    /// The accurate integer IDCT (`JDCT_ISLOW`) rather than the fast one.
    pub accurate_dct: bool,
    /// libjpeg's fancy (triangular) chroma upsampling.
    pub fancy_upscaling: bool,
    /// Fill the rows of a cut-off JPEG with gray instead of failing.
    pub try_recover_truncated: bool,
}

impl Default for Settings {
    /// TensorFlow's defaults.
    fn default() -> Settings {
        Settings {
            ratio: 1,
            accurate_dct: false,
            fancy_upscaling: true,
            try_recover_truncated: false,
        }
    }
}

/// The input as the decoder reads it, noting whether the decoder asked
/// for bytes past the end: libjpeg then pretends an end-of-image marker
/// and fills the rest with gray. Without recovery that is a silent loss
/// TensorFlow refuses too; with it, TensorFlow inserts the marker once
/// and fails if libjpeg asks again, and so does this reader (by an I/O
/// error, which the `mozjpeg` source manager turns into a fatal one).
struct Input<'a> {
    data: &'a [u8],
    ran_out: &'a Cell<bool>,
    recover: bool,
}

impl Input<'_> {
    /// Notes a read past the end; an error for a second one when
    /// recovering.
    fn past_end(&self) -> io::Result<()> {
        if self.recover && self.ran_out.get() {
            return Err(io::Error::other(
                "the data ends before the image does, even with recovery",
            ));
        }
        self.ran_out.set(true);
        Ok(())
    }
}

impl Read for Input<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.data.read(buf)?;
        if n == 0 && !buf.is_empty() {
            self.past_end()?;
        }
        Ok(n)
    }
}

impl BufRead for Input<'_> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.data.is_empty() {
            self.past_end()?;
        }
        Ok(self.data)
    }

    fn consume(&mut self, n: usize) {
        self.data = &self.data[n.min(self.data.len())..];
    }
}

/// Decodes `contents` to `(height, width, channels, samples)` with
/// `channels` 0 (as stored: 1, or 3 for colour), 1 or 3.
pub(crate) fn decode(
    contents: &[u8],
    channels: usize,
    settings: Settings,
) -> Result<(usize, usize, usize, Vec<u8>)> {
    let invalid = |msg: String| {
        Error::invalid_argument(format!(
            "invalid JPEG data ({} bytes): {msg}",
            contents.len()
        ))
    };
    let ran_out = Cell::new(false);
    // libjpeg reports a fatal error by unwinding out of its callback (the
    // `mozjpeg` crate's error manager); it is caught here and becomes an
    // error value. The decoder's state is dropped with the closure.
    let decoded = catch_unwind(AssertUnwindSafe(|| {
        decode_unchecked(contents, channels, settings, &ran_out)
    }));
    let out = match decoded {
        Ok(Ok(out)) => out,
        Ok(Err(e)) => return Err(e),
        Err(panic) => {
            let msg = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| {
                    panic.downcast_ref::<&str>().map(|s| s.to_string())
                })
                .unwrap_or_else(|| "libjpeg failed".to_owned());
            return Err(invalid(msg));
        }
    };
    if ran_out.get() && !settings.try_recover_truncated {
        return Err(invalid(
            "the data ends before the image does (a truncated JPEG)"
                .to_owned(),
        ));
    }
    Ok(out)
}

/// The `(height, width, components)` a JPEG's header declares, as
/// TensorFlow's `ExtractJpegShape` reads them (CMYK has 4 components).
pub(crate) fn header(contents: &[u8]) -> Result<(usize, usize, usize)> {
    let invalid = || {
        Error::invalid_argument(format!(
            "Invalid JPEG data, size {}",
            contents.len()
        ))
    };
    if contents.is_empty() {
        return Err(invalid());
    }
    let read = catch_unwind(AssertUnwindSafe(|| {
        let d = Decompress::new_mem(contents).ok()?;
        let (w, h) = d.size();
        Some((h, w, d.components().len()))
    }));
    match read {
        Ok(Some(shape)) => Ok(shape),
        _ => Err(invalid()),
    }
}

fn decode_unchecked(
    contents: &[u8],
    channels: usize,
    settings: Settings,
    ran_out: &Cell<bool>,
) -> Result<(usize, usize, usize, Vec<u8>)> {
    let io_err = |e: io::Error| {
        Error::invalid_argument(format!(
            "invalid JPEG data ({} bytes): {e}",
            contents.len()
        ))
    };
    if contents.is_empty() {
        return Err(Error::invalid_argument("invalid JPEG data: empty"));
    }
    let input = Input {
        data: contents,
        ran_out,
        recover: settings.try_recover_truncated,
    };
    // APP14 is saved to see whether the file has an Adobe marker, which
    // decides how TensorFlow converts CMYK (libjpeg still reads it).
    let mut d = Decompress::with_markers(&[Marker::APP(14)])
        .from_reader(input)
        .map_err(io_err)?;
    d.dct_method(if settings.accurate_dct {
        DctMethod::IntegerSlow
    } else {
        DctMethod::IntegerFast
    });
    d.do_fancy_upsampling(settings.fancy_upscaling);
    // libjpeg scales by num/8, so 1/ratio is (8/ratio)/8.
    d.scale(8 / settings.ratio);
    let stored = d.color_space();
    let cmyk = matches!(stored, ColorSpace::JCS_CMYK | ColorSpace::JCS_YCCK);
    let adobe = d.markers().any(|m| {
        m.marker == Marker::APP(14)
            && m.data.len() >= 12
            && m.data.starts_with(b"Adobe")
    });
    let stored_channels = d.components().len();
    let c = match channels {
        0 => stored_channels.min(3),
        c => c,
    };
    let (w, h) = d.size();
    let samples = (w as u64) * (h as u64) * (stored_channels as u64);
    if w == 0 || h == 0 || samples >= MAX_SAMPLES {
        return Err(Error::invalid_argument(format!(
            "JPEG of {w}x{h} with {stored_channels} components is empty \
             or too large (TensorFlow's limit is 2^29 samples)"
        )));
    }
    let space = match (c, cmyk) {
        (1, _) => ColorSpace::JCS_GRAYSCALE,
        (_, true) => ColorSpace::JCS_CMYK,
        _ => ColorSpace::JCS_RGB,
    };
    let mut started = d.to_colorspace(space).map_err(io_err)?;
    let (w, h) = (started.width(), started.height());
    let mut pixels: Vec<u8> = started.read_scanlines().map_err(io_err)?;
    started.finish().map_err(io_err)?;
    if space == ColorSpace::JCS_CMYK {
        pixels = cmyk_to_rgb(&pixels, adobe);
    }
    Ok((h, w, c, pixels))
}

/// TensorFlow's CMYK to RGB (`jpeg_mem.cc`): a file with an Adobe marker
/// stores inverted CMYK, so a channel is `k * c / 255`; otherwise it is
/// `(255 - k) * (255 - c) / 255` (integer division both ways).
fn cmyk_to_rgb(cmyk: &[u8], adobe: bool) -> Vec<u8> {
    cmyk.chunks_exact(4)
        .flat_map(|p| {
            let k = u32::from(p[3]);
            [0, 1, 2].map(|i| {
                let c = u32::from(p[i]);
                let v = if adobe {
                    k * c / 255
                } else {
                    (255 - k) * (255 - c) / 255
                };
                v as u8
            })
        })
        .collect()
}
