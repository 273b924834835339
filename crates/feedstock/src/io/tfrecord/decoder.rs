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
use std::sync::Arc;

use super::{
    framed_len, masked_crc32c, Position, DEFAULT_MAX_RECORD_LEN, FOOTER_LEN,
    HEADER_LEN,
};
use crate::error::{Error, Result};
use crate::io::compression::Compression;
use crate::io::index::MAGIC as INDEX_MAGIC;

mod resync;

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
    /// Whether a damaged frame starts a scan for the next intact one
    /// instead of failing.
    resync: bool,
    /// The length of the whole stream, when known: lets a resynchronising
    /// decoder reject a header that claims more than the rest of it.
    stream_len: Option<u64>,
    /// Where records are known to start (from a record index), sorted:
    /// a resynchronisation resumes only at one of them.
    starts: Option<Arc<[u64]>>,
    /// What the next input byte belongs to.
    state: State,
    /// The header (12 bytes) or footer (4 bytes) collected so far, when it
    /// arrives split across chunks.
    scratch: [u8; HEADER_LEN],
    /// How many bytes of `scratch` are filled.
    have: usize,
    /// The header of the record being decoded (kept when resynchronising,
    /// to rescan a damaged frame from its second byte).
    header: [u8; HEADER_LEN],
    /// The data length of the record being decoded, once its header is
    /// verified.
    len: u64,
    /// The data of a record that arrives split across chunks.
    buf: Vec<u8>,
    /// The running CRC32C of `buf`.
    crc: crc_fast::Digest,
    /// Where the record being decoded (or the next one) starts; during a
    /// resynchronisation, where the damaged region starts.
    pos: Position,
    /// Bytes consumed from the caller and not decoded yet: the scan
    /// window while resynchronising, and after it the bytes from the
    /// frame found on, decoded before any new input.
    held: Vec<u8>,
    /// Outside a resynchronisation, how much of `held` is decoded.
    held_start: usize,
    /// During a resynchronisation, the stream offset of `held[0]`.
    scan_base: u64,
    /// During a resynchronisation, the index in `held` of the candidate
    /// header being examined.
    cand: usize,
    /// During a resynchronisation, whether the frame at `cand` has
    /// checked (and the scan waits for the frame after it).
    checked: bool,
    /// The damage that started the resynchronisation in progress.
    cause: Option<Error>,
    /// During a resynchronisation after a bad data CRC under a header
    /// that checked: the index in `held` where that header says the next
    /// frame starts, tried before any scan.
    trusted: Option<usize>,
    /// The stream offset just after the last byte consumed.
    fed: u64,
    /// The error that stopped the decoder, returned again on every call.
    failed: Option<Error>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Header,
    Data,
    Footer,
    /// Scanning for the next intact frame after a damaged one.
    Resync,
    /// Abandoned: the input broke off ([`Decoder::abandon`]).
    Done,
}

/// What [`Decoder::decode`] found.
#[derive(Debug, Clone, PartialEq)]
pub enum Decoded {
    /// The chunk was consumed and the record is not complete: feed more.
    NeedMore,
    /// A complete record whose two CRCs matched.
    Record(Frame),
    /// A damaged region was skipped (only with
    /// [`resync`](Decoder::resync)): decoding goes on at the next intact
    /// frame, or the region ran to the end of the input.
    Skipped(Skip),
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

/// A damaged region of a stream that a resynchronising decoder skipped.
///
/// The region starts where the damaged record started and ends where the
/// next intact frame starts (or at the end of the stream). It may hold
/// one damaged record, several, or bytes that never were a record
/// (garbage written into the file): no one can tell how many records it
/// cost, so skips are counted as regions, with their byte length.
#[derive(Debug, Clone, PartialEq)]
pub struct Skip {
    /// The offset of the region's first byte in the (decompressed)
    /// stream.
    pub offset: u64,
    /// The region's length in bytes (of the decompressed stream).
    pub len: u64,
    /// The first damage found at `offset`: a
    /// [`DataLoss`](crate::Kind::DataLoss) (a CRC mismatch, a truncated
    /// record, a broken compressed stream) or a
    /// [`ResourceExhausted`](crate::Kind::ResourceExhausted) (a length
    /// above the limit) error naming the offset.
    pub cause: Error,
    /// True when the region runs to the end because the rest of the
    /// stream could not be read at all (a broken compressed stream):
    /// `len` then counts only the bytes decompressed before the break.
    pub unreadable_rest: bool,
}

impl Skip {
    /// The offset just after the region: where reading went on.
    pub fn end(&self) -> u64 {
        self.offset + self.len
    }
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
            .field("resync", &self.resync)
            .field("stream_len", &self.stream_len)
            .field("record_starts", &self.starts.as_ref().map(|s| s.len()))
            .field("state", &self.state)
            .field("have", &self.have)
            .field("len", &self.len)
            .field("buffered", &self.buf.len())
            .field("held", &(self.held.len() - self.held_start))
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
            resync: false,
            stream_len: None,
            starts: None,
            state: State::Header,
            scratch: [0; HEADER_LEN],
            have: 0,
            header: [0; HEADER_LEN],
            len: 0,
            buf: Vec::new(),
            crc: crc_fast::Digest::new(crc_fast::CrcAlgorithm::Crc32Iscsi),
            pos: Position::default(),
            held: Vec::new(),
            held_start: 0,
            scan_base: 0,
            cand: 0,
            checked: false,
            cause: None,
            trusted: None,
            fed: 0,
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

    /// Makes a damaged frame a [`Decoded::Skipped`] region instead of an
    /// error (default false: every damage is an error).
    ///
    /// On a damaged frame (a bad length CRC, a bad data CRC, a length
    /// above the limit or past the end of the stream, a stream that ends
    /// inside a record) the decoder scans forward from the frame's second
    /// byte for the first offset where a whole frame checks: a 12-byte
    /// header whose masked length CRC matches, whose length is within the
    /// limit (and within the stream, when its length is known), followed
    /// by data whose masked CRC matches. Requiring both CRCs means a
    /// header-like pattern inside a record's payload is not taken for a
    /// record. The damaged region up to there is reported as a
    /// [`Skip`], then decoding goes on from the frame found; if none is
    /// found, the region runs to the end of the input.
    ///
    /// One shortcut comes first: when only a record's data CRC failed
    /// (its header checked), the record's own length is trusted if a
    /// header whose length CRC checks, or the end of the stream, follows
    /// where it
    /// says the record ends. The region is then exactly that record, so
    /// adjacent damaged records are counted one by one and a frame
    /// stored in the damaged payload is not mistaken for a record.
    /// Otherwise (bytes lost or added inside the record) the scan runs.
    ///
    /// A frame found by the scan is taken only when the frame after it
    /// checks too (both CRCs), or it ends the stream: a complete, valid
    /// frame stored *inside* the payload of a damaged record checks like
    /// any other frame, but what follows it (more of the payload, or the
    /// record's footer) is seldom a frame. With the
    /// [`record_starts`](Self::record_starts) of a record index, a frame
    /// is taken only where a record starts, and nothing else is needed.
    ///
    /// Caveat: without record starts, a damaged record whose payload
    /// holds two or more consecutive valid frames (a payload that is
    /// itself part of a TFRecord stream) is resynchronised at the first
    /// of them, and those frames are returned as records: nothing in the
    /// stream tells them from records.
    ///
    /// Memory stays bounded: the scan holds at most two frames (a
    /// candidate and the frame after it, so at most twice the record
    /// length limit plus 32 bytes) and 64 KiB of input ahead of them.
    pub fn resync(mut self, resync: bool) -> Decoder {
        self.resync = resync;
        self
    }

    /// Tells the decoder the length of the whole stream (counted from the
    /// start, not from [`starting_at`](Self::starting_at)), so that a
    /// resynchronising decoder takes a header whose record would run past
    /// the end as damage at once, without reading to the end first. Has
    /// no effect without [`resync`](Self::resync).
    pub fn stream_len(mut self, len: Option<u64>) -> Decoder {
        self.stream_len = len;
        self
    }

    /// Tells the decoder where records start in the stream (the offsets
    /// of a [`RecordIndex`](crate::io::index::RecordIndex) of the file
    /// written before the damage, [`RecordIndex::record_starts`](crate::io::index::RecordIndex::record_starts)),
    /// sorted: a resynchronisation then resumes only at one of them,
    /// where a whole frame checks, so that no frame stored inside a
    /// damaged record's payload is ever taken for a record. Offsets
    /// count from the start of the stream, as
    /// [`stream_len`](Self::stream_len)'s does. Has no effect without
    /// [`resync`](Self::resync), nor on a stream without damage.
    pub fn record_starts(mut self, starts: Option<Arc<[u64]>>) -> Decoder {
        self.starts = starts;
        self
    }

    /// Makes the decoder report offsets and indices as if the first byte
    /// it is fed were at `pos` in the stream: for resuming a stream in the
    /// middle, at a record boundary.
    pub fn starting_at(mut self, pos: Position) -> Decoder {
        self.pos = pos;
        self.fed = pos.offset;
        self
    }

    /// Where the next record starts, or where the record being decoded
    /// started if one is half-way through. The index counts the records
    /// reported, not the ones lost in skipped regions.
    pub fn next_position(&self) -> Position {
        self.pos
    }

    /// True when the decoder is between records: ending the input here is
    /// a clean end.
    pub fn is_at_boundary(&self) -> bool {
        self.state == State::Header
            && self.have == 0
            && self.held_start == self.held.len()
    }

    /// Ends decoding because the input broke off (for example a
    /// compressed stream that cannot be decompressed further): every byte
    /// consumed since the last record reported becomes one [`Skip`] that
    /// runs to the end ([`Skip::unreadable_rest`]), with `cause` as its
    /// cause. Every later [`decode`](Self::decode) reports
    /// [`Decoded::End`].
    pub fn abandon(&mut self, cause: Error) -> Skip {
        let offset = self.pos.offset;
        let skip = Skip {
            offset,
            len: self.fed.saturating_sub(offset),
            cause: cause.with_offset(offset),
            unreadable_rest: true,
        };
        self.state = State::Done;
        self.held = Vec::new();
        self.held_start = 0;
        self.buf = Vec::new();
        self.have = 0;
        self.pos.offset = self.fed;
        skip
    }

    /// True once [`abandon`](Self::abandon) was called.
    pub fn is_abandoned(&self) -> bool {
        self.state == State::Done
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
    /// above the limit. With [`resync`](Self::resync), none of these:
    /// the damage is reported as [`Decoded::Skipped`]. With or without
    /// it, ResourceExhausted when memory runs out holding a record (or,
    /// while resynchronising, a candidate frame) within the limit: that
    /// is not damage, and buffers are grown fallibly, so it is an error
    /// rather than an abort. Once an error is returned the decoder is
    /// stuck: every later call returns the same error.
    ///
    /// # Termination
    ///
    /// Every call either consumes at least one byte, reports a record or
    /// a skipped region, or (for empty input) reports the end or an
    /// error, so a loop that feeds the unconsumed rest back in always
    /// progresses. [`Decoded::NeedMore`] always consumes the whole chunk.
    pub fn decode(&mut self, input: &[u8]) -> Result<(Decoded, usize)> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let result = self.decode_inner(input);
        match &result {
            Ok((_, used)) => self.fed += *used as u64,
            Err(e) => self.failed = Some(e.clone()),
        }
        result
    }

    /// Decodes only the bytes the decoder already holds: after a
    /// resynchronisation, the bytes it consumed beyond the frame found.
    /// Returns the next record (always [`Payload::Buffered`]) or skipped
    /// region among them, or `None` when they hold no more (the decoder
    /// may then be part-way through a record that needs more input).
    ///
    /// [`decode`](Self::decode) decodes these bytes first anyway; a
    /// reader calls this before it reads more input, so that a read
    /// error does not come before records the decoder already holds.
    ///
    /// # Errors
    ///
    /// As [`decode`](Self::decode).
    pub fn decode_held(&mut self) -> Result<Option<Decoded>> {
        if self.held_start == self.held.len() && self.state != State::Resync {
            return Ok(None);
        }
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        loop {
            let step = match self.state {
                State::Done => return Ok(None),
                State::Resync => {
                    let scanned = self.scan(&[], false);
                    if let Err(e) = &scanned {
                        self.failed = Some(e.clone());
                    }
                    return Ok(match scanned? {
                        (Decoded::Skipped(s), _) => Some(Decoded::Skipped(s)),
                        _ => None,
                    });
                }
                _ if self.held_start < self.held.len() => self.step_held(),
                _ => return Ok(None),
            };
            match step {
                Ok(Some(what)) => return Ok(Some(what)),
                Ok(None) => {}
                Err(e) => {
                    self.failed = Some(e.clone());
                    return Err(e);
                }
            }
        }
    }

    /// Runs the framing state machine over the held bytes until it
    /// reports a record, holds no more, or enters a resynchronisation.
    fn step_held(&mut self) -> Result<Option<Decoded>> {
        let held = std::mem::take(&mut self.held);
        let start = self.held_start;
        let (what, used) = match self.frame(&held[start..], false) {
            Ok(r) => r,
            Err(e) => {
                self.held = held;
                return Err(e);
            }
        };
        let what = match what {
            Decoded::Record(mut f) => {
                if let Payload::Input(r) = &f.payload {
                    self.buf.clear();
                    let at = self.pos.offset;
                    append(
                        &mut self.buf,
                        &held[start + r.start..start + r.end],
                        at,
                    )?;
                    f.payload = Payload::Buffered;
                }
                Some(Decoded::Record(f))
            }
            _ => None,
        };
        if self.state == State::Resync {
            // The scan window, then the rest of what was held.
            let at = self.scan_base;
            append(&mut self.held, &held[start + used..], at)?;
        } else if start + used < held.len() {
            self.held = held;
            self.held_start = start + used;
        } else {
            self.held_start = 0;
        }
        Ok(what)
    }

    fn decode_inner(&mut self, input: &[u8]) -> Result<(Decoded, usize)> {
        let eof = input.is_empty();
        let mut at = 0;
        loop {
            match self.state {
                State::Done => return Ok((Decoded::End, 0)),
                State::Resync => {
                    let (what, used) = self.scan(&input[at..], eof)?;
                    return Ok((what, at + used));
                }
                _ if self.held_start < self.held.len() => {
                    // Bytes consumed during a resynchronisation come
                    // before any new input.
                    if let Some(record) = self.step_held()? {
                        return Ok((record, at));
                    }
                }
                _ => {
                    let (what, used) = self.frame(&input[at..], eof)?;
                    at += used;
                    if self.state != State::Resync {
                        return Ok((what, at));
                    }
                }
            }
        }
    }

    /// The framing state machine over `input`; `eof` says the stream
    /// ends after it. Returns with the state [`State::Resync`] when it
    /// met a damaged frame and resynchronisation is on.
    fn frame(&mut self, input: &[u8], eof: bool) -> Result<(Decoded, usize)> {
        if input.is_empty() {
            if !eof {
                return Ok((Decoded::NeedMore, 0));
            }
            let (err, frame) = match self.state {
                State::Header if self.have == 0 => {
                    return Ok((Decoded::End, 0))
                }
                State::Header => (
                    self.truncated("header", self.have as u64, 12),
                    self.scratch[..self.have].to_vec(),
                ),
                State::Data => (
                    self.truncated("data", self.buf.len() as u64, self.len),
                    self.damaged_frame(&[])?,
                ),
                _ => {
                    let have = self.have;
                    let footer = self.scratch;
                    (
                        self.truncated("footer", have as u64, 4),
                        self.damaged_frame(&footer[..have])?,
                    )
                }
            };
            self.damaged(err, frame, false)?;
            return Ok((Decoded::NeedMore, 0));
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
                    let header = &rest[..HEADER_LEN];
                    at += HEADER_LEN;
                    match self.check_header(header) {
                        Ok(len) => self.len = len,
                        Err(e) => {
                            self.bad_header(e, header)?;
                            return Ok((Decoded::NeedMore, at));
                        }
                    }
                    if self.resync {
                        self.header.copy_from_slice(header);
                    }
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
                    self.have = 0;
                    match self.check_header(&header) {
                        Ok(len) => self.len = len,
                        Err(e) => {
                            self.bad_header(e, &header[..])?;
                            return Ok((Decoded::NeedMore, at));
                        }
                    }
                    self.header = header;
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
                    append(&mut self.buf, &rest[..n], self.pos.offset)?;
                    self.crc.update(&rest[..n]);
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
                    if let Err(e) = self.check_data_crc(
                        stored,
                        super::mask(self.crc.finalize() as u32),
                    ) {
                        let footer = self.scratch;
                        let frame =
                            self.damaged_frame(&footer[..FOOTER_LEN])?;
                        self.damaged(e, frame, true)?;
                        return Ok((Decoded::NeedMore, at));
                    }
                    let frame = self.finish_record(Payload::Buffered);
                    return Ok((Decoded::Record(frame), at));
                }
                State::Resync | State::Done => {
                    unreachable!("frame is never called while scanning")
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
        if let Err(e) =
            self.check_data_crc(stored, masked_crc32c(&input[at..end]))
        {
            let mut frame = Vec::new();
            append(
                &mut frame,
                &input[at - HEADER_LEN..end + FOOTER_LEN],
                self.pos.offset,
            )?;
            self.damaged(e, frame, true)?;
            return Ok(Some((Decoded::NeedMore, end + FOOTER_LEN)));
        }
        let frame = self.finish_record(Payload::Input(at..end));
        Ok(Some((Decoded::Record(frame), end + FOOTER_LEN)))
    }

    fn enter_data(&mut self) {
        self.state = State::Data;
        self.buf.clear();
        self.crc.reset();
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

    /// The bytes of the damaged frame being decoded, when its header was
    /// verified and its data is in `buf`: header, data, then `footer`.
    fn damaged_frame(&mut self, footer: &[u8]) -> Result<Vec<u8>> {
        let at = self.pos.offset;
        let mut frame = Vec::new();
        reserve(&mut frame, HEADER_LEN + self.buf.len() + footer.len(), at)?;
        frame.extend_from_slice(&self.header);
        frame.extend_from_slice(&self.buf);
        frame.extend_from_slice(footer);
        Ok(frame)
    }

    /// A header that failed [`check_header`](Self::check_header) with
    /// `err`: damage ([`damaged`](Self::damaged)), unless the stream is
    /// not a TFRecord file at all but a sidecar record index, which no
    /// policy skips: it is the wrong file, not a damaged one.
    fn bad_header(&mut self, err: Error, header: &[u8]) -> Result<()> {
        if self.pos.offset == 0 && header.starts_with(INDEX_MAGIC) {
            return Err(Error::invalid_argument(
                "not a TFRecord file: this is a record index written by \
                 `feedstock index` (the hidden sidecar \
                 .NAME.feedstock-index of a data file NAME); leave it out \
                 of the files to read",
            )
            .with_offset(0));
        }
        self.damaged(err, header.to_vec(), false)
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
        if self.resync {
            if let Some(n) = self.stream_len {
                if self.pos.offset.saturating_add(framed_len(len)) > n {
                    return Err(Error::data_loss(format!(
                        "truncated record: its length field ({len} bytes) \
                         runs past the end of the stream ({n} bytes)"
                    ))
                    .with_offset(self.pos.offset));
                }
            }
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

/// Makes room for `n` more bytes in `v`, or fails cleanly: a record (or
/// a candidate frame) that memory cannot hold is a
/// [`ResourceExhausted`](crate::Kind::ResourceExhausted) error naming
/// the offset `at` of its frame, never an abort. The record length limit
/// bounds these buffers; this covers a machine (or an address-space
/// limit) with less memory than the limit.
fn reserve(v: &mut Vec<u8>, n: usize, at: u64) -> Result<()> {
    v.try_reserve(n).map_err(|_| {
        Error::resource_exhausted(format!(
            "out of memory holding the record at offset {at} ({} bytes \
             so far); a lower record length limit bounds it",
            v.len()
        ))
        .with_offset(at)
    })
}

/// Appends `data` to `v`, as [`reserve`] fails.
fn append(v: &mut Vec<u8>, data: &[u8], at: u64) -> Result<()> {
    reserve(v, data.len(), at)?;
    v.extend_from_slice(data);
    Ok(())
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
                Decoded::Skipped(s) => {
                    panic!("a strict decoder skipped {s:?}")
                }
            }
        }
    }

    /// What a resynchronising decoder fed `chunk` bytes at a time
    /// reports: records as (data, offset, index) and skips as (offset,
    /// len).
    type Resynced = (Vec<(Vec<u8>, u64, u64)>, Vec<(u64, u64)>);

    fn run_resync(input: &[u8], chunk: usize) -> Resynced {
        let mut dec = Decoder::new().resync(true);
        let (mut records, mut skips) = (Vec::new(), Vec::new());
        let mut start = 0;
        loop {
            let end = (start + chunk).min(input.len());
            let piece = &input[start..end];
            let (what, used) = dec.decode(piece).unwrap();
            start += used;
            match what {
                Decoded::NeedMore => assert_eq!(used, piece.len()),
                Decoded::Record(f) => {
                    let data = match f.payload {
                        Payload::Input(r) => piece[r].to_vec(),
                        Payload::Buffered => dec.take_buffered(),
                    };
                    records.push((data, f.offset, f.index));
                }
                Decoded::Skipped(s) => {
                    assert_eq!(s.end(), dec.next_position().offset);
                    skips.push((s.offset, s.len));
                }
                Decoded::End => return (records, skips),
            }
        }
    }

    #[test]
    fn resync_agrees_for_every_chunk_size() {
        let records: [&[u8]; 6] =
            [b"", b"a", &[7; 300], b"four", b"last", b"end"];
        let mut input = stream(&records);
        // Damage record 2's data, and insert garbage before record 4.
        input[33 + 12 + 100] ^= 1;
        let at = 33 + 316 + 20;
        input.splice(at..at, [9u8; 25]);
        input.extend_from_slice(b"tail");
        let whole = run_resync(&input, input.len());
        let data: Vec<&[u8]> = whole.0.iter().map(|r| &r.0[..]).collect();
        assert_eq!(data, [&b""[..], b"a", b"four", b"last", b"end"]);
        // Indices count the records reported.
        let idx: Vec<u64> = whole.0.iter().map(|r| r.2).collect();
        assert_eq!(idx, [0, 1, 2, 3, 4]);
        assert_eq!(whole.1, [(33, 316), (369, 25), (433, 4)]);
        for chunk in 1..=input.len() {
            assert_eq!(run_resync(&input, chunk), whole, "chunk {chunk}");
        }
    }

    #[test]
    fn a_frame_the_scan_finds_is_taken_only_if_the_next_checks_or_it_ends() {
        // Record 1's payload holds a whole frame between bytes that are
        // not one; its length is damaged, so the scan meets the inner
        // frame first, which the bytes after it reject, and goes on at
        // record 2, which record 3 confirms. Then garbage before record
        // 4 ("last"), after which only stray bytes come: "last" is
        // rejected too, and the region runs to the end.
        let mut inner = Vec::new();
        encode_record(b"inner", &mut inner);
        let payload = [&b"head"[..], &inner, b"rest of the payload"].concat();
        let mut input =
            stream(&[b"zero", &payload, b"two", b"three", b"last"]);
        input[16 + 4 + 3] ^= 1;
        let end_three = 20 + 16 + payload.len() + 19 + 21;
        input.splice(end_three..end_three, [0xaa; 7]);
        input.extend_from_slice(b"tail");
        let whole = run_resync(&input, input.len());
        let data: Vec<&[u8]> = whole.0.iter().map(|r| &r.0[..]).collect();
        assert_eq!(data, [&b"zero"[..], b"two", b"three"]);
        let skips = [
            (20, 16 + payload.len() as u64),
            (end_three as u64, 7 + 20 + 4),
        ];
        assert_eq!(whole.1, skips);
        for chunk in 1..=input.len() {
            assert_eq!(run_resync(&input, chunk), whole, "chunk {chunk}");
        }
        // Without the stray bytes, "last" ends the stream: it is taken.
        input.truncate(input.len() - 4);
        let whole = run_resync(&input, input.len());
        let data: Vec<&[u8]> = whole.0.iter().map(|r| &r.0[..]).collect();
        assert_eq!(data, [&b"zero"[..], b"two", b"three", b"last"]);
        for chunk in 1..=input.len() {
            assert_eq!(run_resync(&input, chunk), whole, "chunk {chunk}");
        }
    }

    #[test]
    fn decode_held_returns_what_the_scan_left_before_new_input() {
        let mut input = stream(&[b"zero", b"one", b"two"]);
        input[12] ^= 1;
        let mut dec = Decoder::new().resync(true);
        let (what, used) = dec.decode(&input).unwrap();
        assert!(matches!(what, Decoded::Skipped(_)), "{what:?}");
        assert_eq!(used, input.len());
        // Everything is consumed; the records are held.
        for want in [&b"one"[..], b"two"] {
            let Some(Decoded::Record(f)) = dec.decode_held().unwrap() else {
                panic!("no record held")
            };
            assert_eq!(f.payload, Payload::Buffered);
            assert_eq!(dec.take_buffered(), want);
        }
        assert_eq!(dec.decode_held().unwrap(), None);
        assert_eq!(dec.decode(&[]).unwrap(), (Decoded::End, 0));
    }

    #[test]
    fn abandon_covers_what_was_consumed_since_the_last_record() {
        let input = stream(&[b"zero", b"one"]);
        let mut dec = Decoder::new().resync(true);
        let (what, used) = dec.decode(&input[..30]).unwrap();
        assert!(matches!(what, Decoded::Record(_)));
        assert_eq!(dec.decode(&input[used..30]).unwrap().0, Decoded::NeedMore);
        let skip = dec.abandon(Error::data_loss("broken"));
        assert_eq!((skip.offset, skip.len), (20, 10));
        assert!(skip.unreadable_rest);
        assert_eq!(skip.cause.offset(), Some(20));
        assert!(dec.is_abandoned());
        assert_eq!(dec.decode(&input[30..]).unwrap(), (Decoded::End, 0));
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
