//! GIF decoding as TensorFlow 2.21's decoder does it
//! (`tensorflow/core/lib/gif/gif_io.cc`, on giflib's `DGifSlurp`).
//!
//! The `gif` crate reads the frames as raw colour indices; the frames are
//! then composed as TensorFlow composes them, which is not what a GIF
//! viewer shows:
//! - the canvas is as large as the largest frame (the widest and the
//!   tallest), not the logical screen of the header;
//! - each frame starts from the previous one (from black for the first):
//!   disposal methods are ignored;
//! - a frame is drawn at its offset, clipped to the canvas; its
//!   transparent index leaves the pixel below unchanged;
//! - an index outside the frame's colour table is an error.
//!
//! A file cut short gives its complete frames, as in TensorFlow (and is
//! an error if its first frame is not complete).

use gif::{ColorOutput, DecodeOptions, DecodingError, MemoryLimit};

use crate::error::{Error, Result};

/// One frame as stored: its place, colours and indices.
struct RawFrame {
    left: usize,
    top: usize,
    width: usize,
    height: usize,
    transparent: Option<u8>,
    /// The local colour table, RGB triples (else the global one is used).
    palette: Option<Vec<u8>>,
    indices: Vec<u8>,
}

/// A decoded GIF: `frames` RGB images of `height x width`, one after the
/// other.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Gif {
    /// How many frames the file has (the pixels may hold fewer).
    pub frames: usize,
    pub height: usize,
    pub width: usize,
    /// `[frames or 1, height, width, 3]` samples.
    pub pixels: Vec<u8>,
}

/// Decodes a GIF; with `first_only`, the pixels are the first frame's
/// only (`decode_image(expand_animations=False)`), but
/// [`Gif::frames`] still counts them all.
///
/// # Errors
/// InvalidArgument, `Invalid GIF data (size N), ...` as TensorFlow says
/// it: a malformed or cut-off file, no frame, no colour table, an index
/// outside the colour table.
pub(crate) fn decode(contents: &[u8], first_only: bool) -> Result<Gif> {
    let fail = |why: String| {
        Error::invalid_argument(format!(
            "Invalid GIF data (size {}), {why}",
            contents.len()
        ))
    };
    let frames = read_frames(contents).map_err(fail)?;
    let width = frames.iter().map(|f| f.width).max().unwrap_or(0);
    let height = frames.iter().map(|f| f.height).max().unwrap_or(0);
    let shown = if first_only { 1 } else { frames.len() };
    let mut canvas = vec![0u8; height * width * 3];
    let mut pixels = Vec::with_capacity(shown * canvas.len());
    for frame in &frames[..shown] {
        draw(&mut canvas, width, height, frame).map_err(fail)?;
        pixels.extend_from_slice(&canvas);
    }
    Ok(Gif {
        frames: frames.len(),
        height,
        width,
        pixels,
    })
}

/// Every frame of the file, with the global colour table as the
/// palette of frames without a local one.
fn read_frames(contents: &[u8]) -> std::result::Result<Vec<RawFrame>, String> {
    let mut options = DecodeOptions::new();
    options.set_color_output(ColorOutput::Indexed);
    options.set_memory_limit(MemoryLimit::Unlimited);
    let mut decoder = options
        .read_info(contents)
        .map_err(|e| format!("failed to open gif file: {e}"))?;
    let global = decoder.global_palette().map(<[u8]>::to_vec);
    let mut frames = Vec::new();
    // giflib, as TensorFlow calls it, keeps the complete frames of a file
    // cut short (one cut within its first frame is an error).
    let cut = |e: &DecodingError, frames: &[RawFrame]| {
        matches!(e, DecodingError::UnexpectedEof) && !frames.is_empty()
    };
    loop {
        let info = match decoder.next_frame_info() {
            Ok(Some(info)) => info,
            Ok(None) => break,
            Err(e) if cut(&e, &frames) => break,
            Err(e) => return Err(format!("failed to read gif file: {e}")),
        };
        let mut frame = RawFrame {
            left: usize::from(info.left),
            top: usize::from(info.top),
            width: usize::from(info.width),
            height: usize::from(info.height),
            transparent: info.transparent,
            palette: info.palette.clone().or_else(|| global.clone()),
            indices: Vec::new(),
        };
        frame.indices = vec![0; decoder.buffer_size()];
        match decoder.read_into_buffer(&mut frame.indices) {
            Ok(()) => frames.push(frame),
            Err(e) if cut(&e, &frames) => break,
            Err(e) => {
                return Err(format!(
                    "failed to read frame {}: {e}",
                    frames.len()
                ))
            }
        }
    }
    // giflib counts a frame once its data has been read up to its block
    // terminator; the `gif` crate may give one whose end is cut off.
    frames.truncate(complete_frames(contents));
    if frames.is_empty() {
        return Err("gif file does not contain any image".into());
    }
    Ok(frames)
}

/// How many frames of the file are there whole, up to the terminator
/// of their data, by the GIF block structure.
fn complete_frames(gif: &[u8]) -> usize {
    let table = |flags: u8| {
        if flags & 0x80 != 0 {
            3 << ((flags & 7) + 1)
        } else {
            0
        }
    };
    // The position after the sub-blocks starting at `at`, if all there.
    let sub_blocks = |mut at: usize| loop {
        let n = usize::from(*gif.get(at)?);
        at += 1 + n;
        if n == 0 {
            return Some(at);
        }
    };
    let Some(&flags) = gif.get(10) else { return 0 };
    let mut at = 13 + table(flags);
    let mut frames = 0;
    loop {
        let next = match gif.get(at) {
            Some(0x21) => sub_blocks(at + 2),
            Some(0x2C) => {
                // The descriptor, its colour table, the LZW code size.
                let end = gif
                    .get(at + 9)
                    .and_then(|&flags| sub_blocks(at + 10 + table(flags) + 1));
                frames += usize::from(end.is_some());
                end
            }
            _ => None,
        };
        match next {
            Some(end) => at = end,
            None => return frames,
        }
    }
}

/// Draws `frame` over `canvas` (`height x width` RGB) as TensorFlow
/// does: clipped, its transparent pixels leaving the canvas as it is.
fn draw(
    canvas: &mut [u8],
    width: usize,
    height: usize,
    frame: &RawFrame,
) -> std::result::Result<(), String> {
    let palette = frame.palette.as_deref().unwrap_or(&[]);
    let colours = palette.len() / 3;
    let rows = frame.top..(frame.top + frame.height).min(height);
    let cols = frame.left..(frame.left + frame.width).min(width);
    for y in rows {
        for x in cols.clone() {
            let at = (y - frame.top) * frame.width + (x - frame.left);
            let index = frame.indices[at];
            if Some(index) == frame.transparent {
                continue;
            }
            let i = usize::from(index);
            if i >= colours {
                return Err(format!(
                    "found color index {index} outside of color map range \
                     {colours}"
                ));
            }
            let dst = (y * width + x) * 3;
            canvas[dst..dst + 3].copy_from_slice(&palette[3 * i..3 * i + 3]);
        }
    }
    Ok(())
}
