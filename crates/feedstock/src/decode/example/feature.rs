//! Decoding one `tf.train.Feature` straight into an output buffer.
//!
//! A `Feature` is a `oneof` of three list messages. Protobuf's merge rules
//! decide what a Feature holds when the wire repeats itself: fields of the
//! same list kind merge (their values concatenate), a field of another kind
//! replaces what came before. So the Feature holds the *last run* of fields
//! of one kind, and [`locate`] finds where that run starts; [`append`] then
//! decodes only that run, appending values to the caller's vector.

use std::ops::Range;

use bytes::Bytes;

use super::wire::{Reader, WireError, WireResult, WireType};
use crate::tensor::{DType, Data};

/// Where the values of a Feature are: its kind and the part of the Feature
/// message holding the last run of fields of that kind.
#[derive(Debug, Clone)]
pub(crate) struct Located {
    /// The list's dtype: `String`, `F32` or `I64`.
    pub(crate) dtype: DType,
    /// The field number of the list in `Feature` (1, 2 or 3).
    tag: u32,
    /// From the first field of the run to the end of the Feature.
    range: Range<usize>,
}

fn kind_of(tag: u32) -> Option<DType> {
    match tag {
        1 => Some(DType::String),
        2 => Some(DType::F32),
        3 => Some(DType::I64),
        _ => None,
    }
}

/// Finds which list the Feature in `buf[range]` holds; `None` when no kind
/// is set (an empty `Feature {}`).
#[inline]
pub(crate) fn locate(
    buf: &[u8],
    range: Range<usize>,
) -> WireResult<Option<Located>> {
    let end = range.end;
    let mut r = Reader::new(buf, range);
    let mut found: Option<Located> = None;
    while !r.at_end() {
        let at = r.pos();
        let (tag, wire) = r.key()?;
        match kind_of(tag) {
            Some(dtype) => {
                if wire != WireType::Delimited {
                    return Err(WireError {
                        pos: at,
                        what: "feature list with a wrong wire type",
                    });
                }
                r.delimited()?;
                if found.as_ref().is_none_or(|f| f.tag != tag) {
                    found = Some(Located {
                        dtype,
                        tag,
                        range: at..end,
                    });
                }
            }
            None => r.skip(tag, wire)?,
        }
    }
    Ok(found)
}

/// Appends the values of the located Feature to `out`, whose dtype must be
/// `loc.dtype`, and returns how many were appended. `src` is the buffer the
/// Feature was located in; strings are zero-copy slices of it.
#[inline]
pub(crate) fn append(
    src: &Bytes,
    loc: &Located,
    out: &mut Data,
) -> WireResult<usize> {
    let buf: &[u8] = src;
    let mut r = Reader::new(buf, loc.range.clone());
    let mut n = 0;
    while !r.at_end() {
        let (tag, wire) = r.key()?;
        if tag != loc.tag {
            // Only unknown fields can follow the run's start (locate saw
            // to that), and they are skipped.
            r.skip(tag, wire)?;
            continue;
        }
        let list = r.delimited()?;
        n += match out {
            Data::I64(v) => int64_list(buf, list, v)?,
            Data::F32(v) => float_list(buf, list, v)?,
            Data::String(v) => bytes_list(src, list, v)?,
            _ => unreachable!("feature specs only hold I64, F32 or String"),
        };
    }
    Ok(n)
}

fn wrong_wire(pos: usize) -> WireError {
    WireError {
        pos,
        what: "list value with a wrong wire type",
    }
}

fn int64_list(
    buf: &[u8],
    range: Range<usize>,
    out: &mut Vec<i64>,
) -> WireResult<usize> {
    let before = out.len();
    let mut r = Reader::new(buf, range);
    while !r.at_end() {
        let at = r.pos();
        match r.key()? {
            (1, WireType::Varint) => out.push(r.varint()? as i64),
            (1, WireType::Delimited) => {
                let packed = r.delimited()?;
                // Every value takes at least one byte.
                out.reserve(packed.len());
                let mut p = Reader::new(buf, packed);
                while !p.at_end() {
                    out.push(p.varint()? as i64);
                }
            }
            (1, _) => return Err(wrong_wire(at)),
            (tag, wire) => r.skip(tag, wire)?,
        }
    }
    Ok(out.len() - before)
}

fn float_list(
    buf: &[u8],
    range: Range<usize>,
    out: &mut Vec<f32>,
) -> WireResult<usize> {
    let before = out.len();
    let mut r = Reader::new(buf, range);
    while !r.at_end() {
        let at = r.pos();
        match r.key()? {
            (1, WireType::Fixed32) => {
                out.push(f32::from_le_bytes(r.fixed32()?))
            }
            (1, WireType::Delimited) => {
                let packed = r.delimited()?;
                if packed.len() % 4 != 0 {
                    return Err(WireError {
                        pos: packed.start,
                        what: "packed floats whose length is not a \
                               multiple of 4",
                    });
                }
                let bytes = &buf[packed];
                let start = out.len();
                out.resize(start + bytes.len() / 4, 0.0);
                let floats = &mut out[start..];
                if cfg!(target_endian = "little") {
                    // The wire's bytes are the floats: one memcpy, which
                    // the per-float loop below is not reliably compiled to.
                    bytemuck::cast_slice_mut::<f32, u8>(floats)
                        .copy_from_slice(bytes);
                } else {
                    for (f, c) in floats.iter_mut().zip(bytes.chunks_exact(4))
                    {
                        *f = f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
                    }
                }
            }
            (1, _) => return Err(wrong_wire(at)),
            (tag, wire) => r.skip(tag, wire)?,
        }
    }
    Ok(out.len() - before)
}

fn bytes_list(
    src: &Bytes,
    range: Range<usize>,
    out: &mut Vec<Bytes>,
) -> WireResult<usize> {
    let before = out.len();
    let mut r = Reader::new(src, range);
    while !r.at_end() {
        let at = r.pos();
        match r.key()? {
            (1, WireType::Delimited) => {
                let s = r.delimited()?;
                out.push(if s.is_empty() {
                    Bytes::new()
                } else {
                    src.slice(s)
                });
            }
            (1, _) => return Err(wrong_wire(at)),
            (tag, wire) => r.skip(tag, wire)?,
        }
    }
    Ok(out.len() - before)
}
