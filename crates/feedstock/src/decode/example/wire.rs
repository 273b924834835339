//! A minimal protobuf wire-format reader over a byte slice.
//!
//! Written by hand rather than going through `prost::Message::decode`
//! because the fast path must not build the intermediate `Example` message
//! (a `BTreeMap` of owned `String`s and `Vec`s): it walks the bytes once
//! and writes the values straight into the output columns. The rules
//! follow prost's decoder exactly (varints of at most ten bytes, keys that
//! fit in `u32`, tag 0 rejected, groups skipped with matching end tags,
//! lengths checked against the buffer), so that whatever prost accepts, the
//! fast path accepts with the same meaning; the property test in
//! `tests/parse_example.rs` holds the two together.

use std::ops::Range;

/// How deeply unknown groups may nest before the input is rejected
/// (prost's recursion limit).
const MAX_DEPTH: u32 = 100;

/// A malformed protobuf: what was wrong and where (a byte position in the
/// buffer being read).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct WireError {
    /// Byte position of the problem.
    pub(crate) pos: usize,
    /// What was wrong, in lowercase words.
    pub(crate) what: &'static str,
}

/// Result of a wire-format operation.
pub(crate) type WireResult<T> = Result<T, WireError>;

/// The wire type of a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WireType {
    Varint,
    Fixed64,
    Delimited,
    StartGroup,
    EndGroup,
    Fixed32,
}

/// A cursor over `buf[pos..end]`. Positions are absolute indexes into
/// `buf`, so sub-readers and errors speak about the same buffer.
#[derive(Debug, Clone)]
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    end: usize,
}

impl<'a> Reader<'a> {
    /// A reader over `range` of `buf`.
    pub(crate) fn new(buf: &'a [u8], range: Range<usize>) -> Reader<'a> {
        Reader {
            buf,
            pos: range.start,
            end: range.end,
        }
    }

    /// True once every byte has been consumed.
    #[inline]
    pub(crate) fn at_end(&self) -> bool {
        self.pos >= self.end
    }

    /// The current position.
    #[inline]
    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    fn err<T>(&self, what: &'static str) -> WireResult<T> {
        Err(WireError {
            pos: self.pos,
            what,
        })
    }

    /// Reads a base-128 varint of at most ten bytes.
    #[inline]
    pub(crate) fn varint(&mut self) -> WireResult<u64> {
        let bytes = &self.buf[self.pos..self.end];
        match *bytes {
            [b, ..] if b < 0x80 => {
                self.pos += 1;
                Ok(u64::from(b))
            }
            // Two bytes: lengths up to 16 KiB, such as an image's.
            [b0, b1, ..] if b1 < 0x80 => {
                self.pos += 2;
                Ok(u64::from(b0 & 0x7f) | u64::from(b1) << 7)
            }
            _ => self.varint_slow(bytes),
        }
    }

    #[cold]
    fn varint_slow(&mut self, bytes: &[u8]) -> WireResult<u64> {
        let mut value = 0u64;
        for (i, &b) in bytes.iter().take(10).enumerate() {
            value |= u64::from(b & 0x7f) << (7 * i);
            if b < 0x80 {
                // The tenth byte may only contribute the top bit.
                if i == 9 && b > 1 {
                    return self.err("varint overflows 64 bits");
                }
                self.pos += i + 1;
                return Ok(value);
            }
        }
        if bytes.len() < 10 {
            self.err("truncated varint")
        } else {
            self.err("varint longer than ten bytes")
        }
    }

    /// Reads a field key: its field number and wire type.
    #[inline]
    pub(crate) fn key(&mut self) -> WireResult<(u32, WireType)> {
        let start = self.pos;
        let key = self.varint()?;
        let fail = |what| Err(WireError { pos: start, what });
        if key > u64::from(u32::MAX) {
            return fail("field key does not fit in 32 bits");
        }
        let wire = match key & 7 {
            0 => WireType::Varint,
            1 => WireType::Fixed64,
            2 => WireType::Delimited,
            3 => WireType::StartGroup,
            4 => WireType::EndGroup,
            5 => WireType::Fixed32,
            _ => return fail("invalid wire type"),
        };
        let tag = (key >> 3) as u32;
        if tag == 0 {
            return fail("field number 0");
        }
        Ok((tag, wire))
    }

    /// Reads a length prefix and returns the range of the bytes it
    /// announces, moving past them.
    #[inline]
    pub(crate) fn delimited(&mut self) -> WireResult<Range<usize>> {
        let len = self.varint()?;
        let avail = (self.end - self.pos) as u64;
        if len > avail {
            return self.err("length prefix runs past the end of its message");
        }
        let start = self.pos;
        self.pos += len as usize;
        Ok(start..self.pos)
    }

    /// Reads four little-endian bytes.
    #[inline]
    pub(crate) fn fixed32(&mut self) -> WireResult<[u8; 4]> {
        if self.end - self.pos < 4 {
            return self.err("truncated fixed32 value");
        }
        let mut out = [0; 4];
        out.copy_from_slice(&self.buf[self.pos..self.pos + 4]);
        self.pos += 4;
        Ok(out)
    }

    fn advance(&mut self, n: u64) -> WireResult<()> {
        if n > (self.end - self.pos) as u64 {
            return self.err("field runs past the end of its message");
        }
        self.pos += n as usize;
        Ok(())
    }

    /// Skips the value of an unknown field whose key was just read.
    pub(crate) fn skip(&mut self, tag: u32, wire: WireType) -> WireResult<()> {
        self.skip_at(tag, wire, 0)
    }

    fn skip_at(
        &mut self,
        tag: u32,
        wire: WireType,
        depth: u32,
    ) -> WireResult<()> {
        if depth > MAX_DEPTH {
            return self.err("groups nested too deeply");
        }
        match wire {
            WireType::Varint => self.varint().map(drop),
            WireType::Fixed64 => self.advance(8),
            WireType::Fixed32 => self.advance(4),
            WireType::Delimited => self.delimited().map(drop),
            WireType::StartGroup => loop {
                let at = self.pos;
                let (inner, inner_wire) = self.key()?;
                if inner_wire == WireType::EndGroup {
                    if inner != tag {
                        return Err(WireError {
                            pos: at,
                            what: "end group does not match its start",
                        });
                    }
                    return Ok(());
                }
                self.skip_at(inner, inner_wire, depth + 1)?;
            },
            WireType::EndGroup => self.err("end group without a start"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_varint(bytes: &[u8]) -> WireResult<u64> {
        Reader::new(bytes, 0..bytes.len()).varint()
    }

    #[test]
    fn varints_decode_up_to_ten_bytes() {
        assert_eq!(read_varint(&[0x05]), Ok(5));
        assert_eq!(read_varint(&[0xac, 0x02]), Ok(300));
        let max = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1];
        assert_eq!(read_varint(&max), Ok(u64::MAX));
    }

    #[test]
    fn overlong_or_truncated_varints_are_errors() {
        let over = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2];
        assert!(read_varint(&over).is_err());
        assert!(read_varint(&[0x80; 11]).is_err());
        assert!(read_varint(&[0x80, 0x80]).is_err());
        assert!(read_varint(&[]).is_err());
    }

    #[test]
    fn keys_reject_field_zero_and_bad_wire_types() {
        assert!(Reader::new(&[0x02], 0..1).key().is_err());
        assert!(Reader::new(&[0x0e], 0..1).key().is_err());
        assert_eq!(
            Reader::new(&[0x0a], 0..1).key(),
            Ok((1, WireType::Delimited))
        );
    }

    #[test]
    fn groups_are_skipped_to_their_matching_end() {
        // field 5 start group, field 1 varint 7, field 5 end group, then
        // one more byte.
        let buf = [0x2b, 0x08, 0x07, 0x2c, 0x99];
        let mut r = Reader::new(&buf, 0..buf.len());
        let (tag, wire) = r.key().unwrap();
        r.skip(tag, wire).unwrap();
        assert_eq!(r.pos(), 4);
        // Mismatched end group.
        let bad = [0x2b, 0x34];
        let mut r = Reader::new(&bad, 0..bad.len());
        let (tag, wire) = r.key().unwrap();
        assert!(r.skip(tag, wire).is_err());
    }

    #[test]
    fn delimited_lengths_must_fit_the_message() {
        let buf = [0x03, 1, 2];
        assert!(Reader::new(&buf, 0..3).delimited().is_err());
        let ok = [0x02, 1, 2];
        assert_eq!(Reader::new(&ok, 0..3).delimited(), Ok(1..3));
    }
}
