//! The push decoder: TFRecord framing as a state machine over byte chunks.
//!
//! ADVICE FOR HACKERS: this is the one place that knows the framing. It
//! never does I/O and never allocates more than the data it has been
//! given. The readers in this module are `fill_buf → decode → consume`
//! loops around it; keep them that thin. The fast path (a whole record in
//! the current chunk) must stay free of copies: it reports the record as a
//! range of the caller's input so that [`BytesReader`](super::BytesReader)
//! can hand out `Bytes::slice`s.

use std::fmt;
use std::ops::Range;

use super::{
    framed_len, masked_crc32c, Position, DEFAULT_MAX_RECORD_LEN, FOOTER_LEN,
    HEADER_LEN,
};
use crate::error::{Error, Result};
use crate::io::compression::Compression;

/// The highest limit a decoder takes: larger ones are taken as this.
const MAX_RECORD_LEN_CAP: u64 = 1 << 62;

/// A push decoder of TFRecord framing.
///
/// Call [`decode`](Decoder::decode) with the next chunk of the stream; it
/// returns what happened and how many bytes of the chunk it consumed. The
/// caller drops the consumed bytes and calls again with what is left (plus
/// more input when it was asked for more). An empty chunk means the input
/// has ended.
///
/// Errors carry the offset of the damaged record but no file name: the
/// reader driving the decoder knows the file and adds it.
///
/// ```
/// use feedstock::io::tfrecord::{encode_record, Decoded, Decoder, Payload};
///
/// let mut stream = Vec::new();
/// encode_record(b"hello", &mut stream);
///
/// let mut dec = Decoder::new();
/// // Feed the header and 2 data bytes: not a whole record yet.
/// let (what, used) = dec.decode(&stream[..14])?;
/// assert_eq!((what, used), (Decoded::NeedMore, 14));
/// // Feed the rest: the record is complete and verified. Its data came
/// // in two chunks, so the decoder holds it.
/// let (what, used) = dec.decode(&stream[14..])?;
/// assert_eq!(used, stream.len() - 14);
/// let Decoded::Record(frame) = what else { panic!("{what:?}") };
/// assert_eq!((frame.offset, frame.index), (0, 0));
/// assert_eq!(frame.payload, Payload::Buffered);
/// assert_eq!(dec.take_buffered(), b"hello");
/// // An empty chunk is the end of input, here a clean one.
/// assert_eq!(dec.decode(&[])?, (Decoded::End, 0));
/// # Ok::<(), feedstock::Error>(())
/// ```
#[derive(Clone)]
pub struct Decoder {
    /// Records longer than this are refused before any allocation.
    max_record_len: u64,
    /// What the next input byte belongs to.
    state: State,
    /// The header (12 bytes) or footer (4 bytes) collected so far, when it
    /// arrives split across chunks.
    scratch: [u8; HEADER_LEN],
    /// How many bytes of `scratch` are filled.
    have: usize,
    /// The data length of the record being decoded, once its header is
    /// verified.
    len: u64,
    /// The data of a record that arrives split across chunks.
    buf: Vec<u8>,
    /// The running CRC32C (unmasked) of `buf`.
    crc: u32,
    /// Where the record being decoded (or the next one) starts.
    pos: Position,
    /// The error that stopped the decoder, returned again on every call.
    failed: Option<Error>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Header,
    Data,
    Footer,
}

/// What [`Decoder::decode`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decoded {
    /// The chunk was consumed and the record is not complete: feed more.
    NeedMore,
    /// A complete record whose two CRCs matched.
    Record(Frame),
    /// The input ended (an empty chunk was fed) at a record boundary.
    End,
}

/// A complete, verified record reported by the [`Decoder`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// The byte offset of the record's header in the stream.
    pub offset: u64,
    /// The record's 0-based index in the stream.
    pub index: u64,
    /// Where the record's data is.
    pub payload: Payload,
}

/// Where a decoded record's data is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Payload {
    /// In the chunk just passed to [`Decoder::decode`], at this range.
    Input(Range<usize>),
    /// In the decoder's own buffer, because it arrived in several chunks:
    /// take it with [`Decoder::take_buffered`].
    Buffered,
}

impl Default for Decoder {
    fn default() -> Decoder {
        Decoder::new()
    }
}

impl fmt::Debug for Decoder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Decoder")
            .field("max_record_len", &self.max_record_len)
            .field("state", &self.state)
            .field("have", &self.have)
            .field("len", &self.len)
            .field("buffered", &self.buf.len())
            .field("pos", &self.pos)
            .field("failed", &self.failed)
            .finish()
    }
}

impl Decoder {
    /// A decoder at the start of a stream, with the default record length
    /// limit ([`DEFAULT_MAX_RECORD_LEN`]).
    pub fn new() -> Decoder {
        Decoder {
            max_record_len: DEFAULT_MAX_RECORD_LEN,
            state: State::Header,
            scratch: [0; HEADER_LEN],
            have: 0,
            len: 0,
            buf: Vec::new(),
            crc: 0,
            pos: Position::default(),
            failed: None,
        }
    }

    /// Sets the longest record data accepted, in bytes. A longer length
    /// field (with a valid CRC) is a
    /// [`ResourceExhausted`](crate::Kind::ResourceExhausted) error.
    /// Limits above 2^62 bytes are taken as 2^62.
    pub fn max_record_len(mut self, max: u64) -> Decoder {
        // No stream holds a record of 2^62 bytes; the cap keeps every
        // offset sum (length + framing + offset) far from overflowing.
        self.max_record_len = max.min(MAX_RECORD_LEN_CAP);
        self
    }

    /// Makes the decoder report offsets and indices as if the first byte
    /// it is fed were at `pos` in the stream: for resuming a stream in the
    /// middle, at a record boundary.
    pub fn starting_at(mut self, pos: Position) -> Decoder {
        self.pos = pos;
        self
    }

    /// Where the next record starts, or where the record being decoded
    /// started if one is half-way through.
    pub fn next_position(&self) -> Position {
        self.pos
    }

    /// True when the decoder is between records: ending the input here is
    /// a clean end.
    pub fn is_at_boundary(&self) -> bool {
        self.state == State::Header && self.have == 0
    }

    /// Takes the data of the record last reported with
    /// [`Payload::Buffered`], leaving the buffer empty.
    pub fn take_buffered(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.buf)
    }

    /// Decodes from `input`, the next chunk of the stream.
    ///
    /// Returns what was found and how many bytes of `input` were consumed.
    /// A record is reported as soon as its footer is verified; the bytes
    /// after it are left unconsumed for the next call. An empty `input`
    /// means the stream has ended.
    ///
    /// # Errors
    ///
    /// All errors carry the offset of the record they are about.
    /// [`DataLoss`](crate::Kind::DataLoss) for a length or data CRC
    /// mismatch and for an input that ends inside a record;
    /// [`ResourceExhausted`](crate::Kind::ResourceExhausted) for a length
    /// above the limit. Once an error is returned the decoder is stuck:
    /// every later call returns the same error.
    ///
    /// # Termination
    ///
    /// Every call either consumes at least one byte, reports a record, or
    /// (for empty input) reports the end or an error, so a loop that feeds
    /// the unconsumed rest back in always progresses.
    pub fn decode(&mut self, input: &[u8]) -> Result<(Decoded, usize)> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let result = self.decode_inner(input);
        if let Err(e) = &result {
            self.failed = Some(e.clone());
        }
        result
    }

    fn decode_inner(&mut self, input: &[u8]) -> Result<(Decoded, usize)> {
        if input.is_empty() {
            return match self.state {
                State::Header if self.have == 0 => Ok((Decoded::End, 0)),
                State::Header => {
                    Err(self.truncated("header", self.have as u64, 12))
                }
                State::Data => Err(self.truncated(
                    "data",
                    self.buf.len() as u64,
                    self.len,
                )),
                State::Footer => {
                    Err(self.truncated("footer", self.have as u64, 4))
                }
            };
        }
        let mut at = 0;
        loop {
            let rest = &input[at..];
            if rest.is_empty() {
                return Ok((Decoded::NeedMore, at));
            }
            match self.state {
                State::Header
                    if self.have == 0 && rest.len() >= HEADER_LEN =>
                {
                    // The header is whole in this chunk: no copy.
                    self.len = self.check_header(&rest[..HEADER_LEN])?;
                    at += HEADER_LEN;
                    self.enter_data();
                    if let Some(done) = self.data_in_input(input, at)? {
                        return Ok(done);
                    }
                }
                State::Header => {
                    let n = (HEADER_LEN - self.have).min(rest.len());
                    self.scratch[self.have..self.have + n]
                        .copy_from_slice(&rest[..n]);
                    self.have += n;
                    at += n;
                    if self.have < HEADER_LEN {
                        return Ok((Decoded::NeedMore, at));
                    }
                    let header = self.scratch;
                    self.len = self.check_header(&header)?;
                    self.have = 0;
                    self.enter_data();
                    if let Some(done) = self.data_in_input(input, at)? {
                        return Ok(done);
                    }
                }
                State::Data => {
                    let missing = self.len - self.buf.len() as u64;
                    let n = missing.min(rest.len() as u64) as usize;
                    // Grow with what arrived, never with what the length
                    // field claims: a corrupt length cannot allocate.
                    self.buf.extend_from_slice(&rest[..n]);
                    self.crc = crc32c::crc32c_append(self.crc, &rest[..n]);
                    at += n;
                    if (self.buf.len() as u64) < self.len {
                        return Ok((Decoded::NeedMore, at));
                    }
                    self.state = State::Footer;
                    self.have = 0;
                }
                State::Footer => {
                    let n = (FOOTER_LEN - self.have).min(rest.len());
                    self.scratch[self.have..self.have + n]
                        .copy_from_slice(&rest[..n]);
                    self.have += n;
                    at += n;
                    if self.have < FOOTER_LEN {
                        return Ok((Decoded::NeedMore, at));
                    }
                    let stored = le_u32(&self.scratch[..FOOTER_LEN]);
                    self.check_data_crc(stored, super::mask(self.crc))?;
                    let frame = self.finish_record(Payload::Buffered);
                    return Ok((Decoded::Record(frame), at));
                }
            }
        }
    }

    /// With the header consumed and `input[at..]` next: if the data and
    /// footer are whole in `input`, verify and report the record as a
    /// range of `input`.
    fn data_in_input(
        &mut self,
        input: &[u8],
        at: usize,
    ) -> Result<Option<(Decoded, usize)>> {
        let rest = (input.len() - at) as u64;
        if rest < self.len + FOOTER_LEN as u64 {
            return Ok(None);
        }
        let end = at + self.len as usize;
        let stored = le_u32(&input[end..end + FOOTER_LEN]);
        self.check_data_crc(stored, masked_crc32c(&input[at..end]))?;
        let frame = self.finish_record(Payload::Input(at..end));
        Ok(Some((Decoded::Record(frame), end + FOOTER_LEN)))
    }

    fn enter_data(&mut self) {
        self.state = State::Data;
        self.buf.clear();
        self.crc = 0;
    }

    fn finish_record(&mut self, payload: Payload) -> Frame {
        let frame = Frame {
            offset: self.pos.offset,
            index: self.pos.index,
            payload,
        };
        self.pos.offset += framed_len(self.len);
        self.pos.index += 1;
        self.state = State::Header;
        self.have = 0;
        frame
    }

    /// Verifies a header's length CRC and the length limit.
    fn check_header(&self, header: &[u8]) -> Result<u64> {
        let len_bytes = &header[..8];
        let stored = le_u32(&header[8..HEADER_LEN]);
        let actual = masked_crc32c(len_bytes);
        if stored != actual {
            // A compressed file read without its compression fails here,
            // on its first bytes: say so rather than call it corrupt.
            let hint = match Compression::sniff(header) {
                Some(c) if self.pos.offset == 0 => format!(
                    "; this looks like a {c} file: read it with \
                     Compression::{c:?}"
                ),
                _ => String::new(),
            };
            return Err(Error::data_loss(format!(
                "corrupt record: length CRC mismatch (stored {stored:#010x}, \
                 computed {actual:#010x}){hint}"
            ))
            .with_offset(self.pos.offset));
        }
        let len = u64::from_le_bytes(len_bytes.try_into().expect("8 bytes"));
        if len > self.max_record_len {
            return Err(Error::resource_exhausted(format!(
                "record length {len} exceeds the limit of {} bytes",
                self.max_record_len
            ))
            .with_offset(self.pos.offset));
        }
        Ok(len)
    }

    fn check_data_crc(&self, stored: u32, actual: u32) -> Result<()> {
        if stored == actual {
            return Ok(());
        }
        Err(Error::data_loss(format!(
            "corrupt record: data CRC mismatch (stored {stored:#010x}, \
             computed {actual:#010x})"
        ))
        .with_offset(self.pos.offset))
    }

    fn truncated(&self, part: &str, got: u64, of: u64) -> Error {
        Error::data_loss(format!(
            "truncated record: input ends inside the {part} ({got} of {of} \
             bytes)"
        ))
        .with_offset(self.pos.offset)
    }
}

fn le_u32(b: &[u8]) -> u32 {
    u32::from_le_bytes(b.try_into().expect("4 bytes"))
}

#[cfg(test)]
mod tests {
    use super::super::encode_record;
    use super::*;
    use crate::Kind;

    fn stream(records: &[&[u8]]) -> Vec<u8> {
        let mut out = Vec::new();
        for r in records {
            encode_record(r, &mut out);
        }
        out
    }

    /// Feeds `input` in chunks of `chunk` bytes, collecting records.
    fn run(input: &[u8], chunk: usize) -> Result<Vec<(Vec<u8>, u64, u64)>> {
        let mut dec = Decoder::new();
        let mut out = Vec::new();
        let mut start = 0;
        loop {
            let end = (start + chunk).min(input.len());
            let piece = &input[start..end];
            let (what, used) = dec.decode(piece)?;
            start += used;
            match what {
                Decoded::NeedMore => assert_eq!(used, piece.len()),
                Decoded::Record(f) => {
                    let data = match f.payload {
                        Payload::Input(r) => piece[r].to_vec(),
                        Payload::Buffered => dec.take_buffered(),
                    };
                    out.push((data, f.offset, f.index));
                }
                Decoded::End => return Ok(out),
            }
        }
    }

    #[test]
    fn every_chunk_size_yields_the_same_records() {
        let records: [&[u8]; 4] = [b"", b"a", &[7; 300], b"last one"];
        let input = stream(&records);
        let whole = run(&input, input.len()).unwrap();
        assert_eq!(whole.len(), 4);
        for chunk in 1..=input.len() {
            assert_eq!(run(&input, chunk).unwrap(), whole, "chunk {chunk}");
        }
        let offsets: Vec<u64> = whole.iter().map(|r| r.1).collect();
        assert_eq!(offsets, [0, 16, 33, 349]);
    }

    #[test]
    fn whole_record_in_chunk_is_reported_as_input_range() {
        let input = stream(&[b"abc"]);
        let (what, used) = Decoder::new().decode(&input).unwrap();
        assert_eq!(used, input.len());
        let Decoded::Record(f) = what else {
            panic!("{what:?}")
        };
        assert_eq!(f.payload, Payload::Input(12..15));
    }

    #[test]
    fn errors_are_sticky() {
        let mut input = stream(&[b"abc"]);
        input[13] ^= 1;
        let mut dec = Decoder::new();
        let first = dec.decode(&input).unwrap_err();
        assert_eq!(first.kind(), Kind::DataLoss);
        assert_eq!(dec.decode(&input).unwrap_err(), first);
        assert_eq!(dec.decode(&[]).unwrap_err(), first);
    }

    #[test]
    fn length_above_limit_is_refused_with_valid_crc() {
        let input = stream(&[&[1; 100]]);
        let mut dec = Decoder::new().max_record_len(99);
        let err = dec.decode(&input).unwrap_err();
        assert_eq!(err.kind(), Kind::ResourceExhausted);
        assert_eq!(err.offset(), Some(0));
    }

    #[test]
    fn starting_at_shifts_reported_positions() {
        let input = stream(&[b"x"]);
        let pos = Position {
            offset: 1000,
            index: 9,
        };
        let mut dec = Decoder::new().starting_at(pos);
        let (what, _) = dec.decode(&input).unwrap();
        let Decoded::Record(f) = what else {
            panic!("{what:?}")
        };
        assert_eq!((f.offset, f.index), (1000, 9));
        assert_eq!(dec.next_position().offset, 1000 + 17);
    }

    #[test]
    fn a_compressed_stream_read_as_plain_says_what_it_looks_like() {
        use std::io::Write;
        let plain = stream(&[b"a record"]);
        let level = flate2::Compression::default();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), level);
        gz.write_all(&plain).unwrap();
        let mut zz = flate2::write::ZlibEncoder::new(Vec::new(), level);
        zz.write_all(&plain).unwrap();
        for (bytes, c) in [
            (gz.finish().unwrap(), "gzip"),
            (zz.finish().unwrap(), "zlib"),
        ] {
            for chunk in [1, 64] {
                let e = run(&bytes, chunk).unwrap_err();
                assert_eq!(e.kind(), Kind::DataLoss);
                assert_eq!(e.offset(), Some(0));
                let want = format!("this looks like a {c} file");
                assert!(e.message().contains(&want), "{e}");
            }
        }
        // A plain stream damaged at its start gets no such hint.
        let mut bad = plain.clone();
        bad[9] ^= 1;
        let e = run(&bad, 64).unwrap_err();
        assert!(e.message().contains("length CRC"), "{e}");
        assert!(!e.message().contains("looks like"), "{e}");
    }
}
