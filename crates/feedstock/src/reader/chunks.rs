//! A read-ahead buffer over a byte stream that hands out records as
//! zero-copy slices of large chunks.
//!
//! `std::io::BufReader` would make every record a fresh allocation and
//! copy; reading 64 KiB chunks into a `BytesMut` and splitting records off
//! its front lets many records share one buffer. A local file can be read
//! on a thread of its own ([`Chunks::maybe_ahead`]): its chunks are then
//! copied in from memory, sparing the reading thread the kernel's slower
//! copy out of the page cache.

use std::io::{ErrorKind, Read};

use bytes::{Buf, Bytes, BytesMut};

use crate::error::{Error, Result};
use crate::io::read_ahead::ReadAhead;

/// How much to read from the stream at a time.
const CHUNK: usize = 64 * 1024;

/// Buffered bytes of a stream, starting at stream offset
/// [`Chunks::offset`].
pub(crate) struct Chunks {
    input: Input,
    buf: BytesMut,
    offset: u64,
    eof: bool,
}

/// Where the bytes come from.
enum Input {
    /// Read on the caller's thread.
    Here(Box<dyn Read + Send>),
    /// Read on a thread of its own; the chunk being copied in.
    Ahead(ReadAhead, Bytes),
}

impl Chunks {
    /// Buffers `input`, whose next byte is at stream offset `offset`.
    pub(crate) fn new(input: Box<dyn Read + Send>, offset: u64) -> Chunks {
        Chunks {
            input: Input::Here(input),
            buf: BytesMut::new(),
            offset,
            eof: false,
        }
    }

    /// As [`new`](Self::new), reading `input` on a thread of its own
    /// ([`ReadAhead`]) if `ahead`: only for a source whose reads always
    /// return (see [`FileSystem::reads_ahead`](crate::io::fs::FileSystem::reads_ahead)).
    pub(crate) fn maybe_ahead(
        input: Box<dyn Read + Send>,
        offset: u64,
        ahead: bool,
    ) -> Chunks {
        if !ahead {
            return Chunks::new(input, offset);
        }
        Chunks {
            input: Input::Ahead(ReadAhead::start(CHUNK, input), Bytes::new()),
            ..Chunks::new(Box::new(std::io::empty()), offset)
        }
    }

    /// The stream offset of the first buffered byte.
    pub(crate) fn offset(&self) -> u64 {
        self.offset
    }

    /// The buffered bytes.
    pub(crate) fn buffered(&self) -> &[u8] {
        &self.buf
    }

    /// Reads one more chunk. Returns false (and sets end of stream) if the
    /// stream had no more bytes.
    pub(crate) fn fill_more(&mut self) -> Result<bool> {
        if self.eof {
            return Ok(false);
        }
        let old = self.buf.len();
        self.make_room()?;
        let read = match &mut self.input {
            Input::Here(input) => {
                // Zeroing the spare room costs a memset, far cheaper than
                // the read itself, and avoids `unsafe` for uninitialised
                // memory.
                self.buf.resize(old + CHUNK, 0);
                let n = loop {
                    match input.read(&mut self.buf[old..]) {
                        Err(e) if e.kind() == ErrorKind::Interrupted => {}
                        r => break r,
                    }
                };
                self.buf.truncate(old + n.as_ref().map_or(0, |n| *n));
                n
            }
            // A chunk at a time, at most CHUNK bytes of it.
            Input::Ahead(ahead, cur) => {
                let next = if cur.is_empty() {
                    ahead.next()
                } else {
                    Ok(std::mem::take(cur))
                };
                next.map(|mut chunk| {
                    let n = chunk.len().min(CHUNK);
                    self.buf.extend_from_slice(&chunk[..n]);
                    chunk.advance(n);
                    *cur = chunk;
                    n
                })
            }
        };
        let n = read
            .map_err(|e| Error::io(e).with_offset(self.offset + old as u64))?;
        if n == 0 {
            self.eof = true;
        }
        Ok(n > 0)
    }

    /// Makes room for one more chunk, growing the buffer as `BytesMut`
    /// would (to twice its capacity) but fallibly: `BytesMut` has no
    /// `try_reserve`, and a line or record that memory cannot hold (a
    /// line of a gigabyte within its limit, under a smaller memory limit)
    /// must be a ResourceExhausted error, not an abort.
    fn make_room(&mut self) -> Result<()> {
        let len = self.buf.len();
        if self.buf.capacity() - len >= CHUNK || self.buf.try_reclaim(CHUNK) {
            return Ok(());
        }
        let want = (len + CHUNK).max(self.buf.capacity().saturating_mul(2));
        let mut grown: Vec<u8> = Vec::new();
        grown.try_reserve_exact(want).map_err(|_| {
            Error::resource_exhausted(format!(
                "out of memory holding {len} bytes of one line or record"
            ))
            .with_offset(self.offset)
        })?;
        grown.extend_from_slice(&self.buf);
        // A unique `Bytes` of a `Vec` becomes a `BytesMut` without a
        // copy, keeping the capacity.
        self.buf = BytesMut::from(Bytes::from(grown));
        debug_assert!(self.buf.capacity() - len >= CHUNK);
        Ok(())
    }

    /// Buffers at least `n` bytes, or as many as the stream has left.
    pub(crate) fn fill(&mut self, n: usize) -> Result<()> {
        while self.buf.len() < n && self.fill_more()? {}
        Ok(())
    }

    /// Removes and returns the first `n` buffered bytes.
    pub(crate) fn take(&mut self, n: usize) -> Bytes {
        self.offset += n as u64;
        self.buf.split_to(n).freeze()
    }

    /// Discards up to `n` bytes, reading past the buffer if needed.
    /// Returns how many were discarded: fewer than `n` only at the end of
    /// the stream.
    pub(crate) fn skip(&mut self, n: u64) -> Result<u64> {
        let from_buf = n.min(self.buf.len() as u64);
        self.buf.advance(from_buf as usize);
        self.offset += from_buf;
        let mut left = n - from_buf;
        while left > 0 {
            self.buf.clear();
            if !self.fill_more()? {
                break;
            }
            let k = left.min(self.buf.len() as u64);
            self.buf.advance(k as usize);
            self.offset += k;
            left -= k;
        }
        Ok(n - left)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_buffer_grows_and_keeps_what_it_holds() {
        for ahead in [false, true] {
            grows_and_keeps(ahead);
        }
    }

    fn grows_and_keeps(ahead: bool) {
        let data: Vec<u8> = (0..300_000u32).map(|i| i as u8).collect();
        let mut c = Chunks::maybe_ahead(
            Box::new(std::io::Cursor::new(data.clone())),
            0,
            ahead,
        );
        c.fill(250_000).unwrap();
        assert!(c.buffered().len() >= 250_000);
        assert_eq!(c.buffered(), &data[..c.buffered().len()]);
        let head = c.take(100);
        assert_eq!(&head[..], &data[..100]);
        c.fill(300_000).unwrap();
        assert_eq!(c.buffered(), &data[100..]);
        assert!(!c.fill_more().unwrap());
    }

    #[test]
    fn records_of_any_size_come_out_whole_and_in_order_ahead_or_not() {
        // Records within a chunk, across one chunk's end, and longer than
        // several chunks, taken and skipped in turn.
        let data: Vec<u8> =
            (0..1_200_000u32).map(|i| (i % 251) as u8).collect();
        for ahead in [false, true] {
            for len in [1, 7, 3073, 65_536, 70_001, 300_000] {
                let mut c = Chunks::maybe_ahead(
                    Box::new(std::io::Cursor::new(data.clone())),
                    0,
                    ahead,
                );
                let mut at = 0;
                let mut i = 0;
                while at < data.len() {
                    let n = len.min(data.len() - at);
                    assert_eq!(c.offset(), at as u64);
                    if i % 3 == 2 {
                        assert_eq!(c.skip(n as u64).unwrap(), n as u64);
                    } else {
                        c.fill(n).unwrap();
                        assert_eq!(&c.buffered()[..n], &data[at..at + n]);
                        let record = c.take(n);
                        assert_eq!(
                            &record[..],
                            &data[at..at + n],
                            "{len} {at}"
                        );
                    }
                    at += n;
                    i += 1;
                    if i > 2_000 {
                        break; // enough of the one-byte records
                    }
                }
                if at == data.len() {
                    assert!(c.buffered().is_empty());
                    assert!(!c.fill_more().unwrap(), "{len}: at the end");
                }
            }
        }
    }

    #[test]
    fn lines_found_by_scanning_what_is_buffered_match_the_stream() {
        // The text reader's way: scan what is buffered, ask for more when
        // no newline is in it, take up to the newline.
        let mut text = Vec::new();
        for i in 0..40_000 {
            text.extend(std::iter::repeat_n(b'x', i % 97));
            text.push(b'\n');
        }
        for ahead in [false, true] {
            let mut c = Chunks::maybe_ahead(
                Box::new(std::io::Cursor::new(text.clone())),
                0,
                ahead,
            );
            for i in 0..40_000 {
                let line = loop {
                    if let Some(end) = memchr::memchr(b'\n', c.buffered()) {
                        break c.take(end + 1);
                    }
                    assert!(c.fill_more().unwrap(), "line {i}");
                };
                assert_eq!(line.len(), i % 97 + 1, "line {i}");
            }
            assert!(!c.fill_more().unwrap());
        }
    }

    /// A source of `n` bytes that then fails.
    struct Failing(usize);

    impl Read for Failing {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.0 == 0 {
                return Err(std::io::Error::other("the disk broke"));
            }
            let n = buf.len().min(self.0);
            buf[..n].fill(7);
            self.0 -= n;
            Ok(n)
        }
    }

    #[test]
    fn an_error_names_the_offset_it_happened_at_ahead_or_not() {
        for ahead in [false, true] {
            let mut c =
                Chunks::maybe_ahead(Box::new(Failing(100_000)), 5, ahead);
            let e = c.fill(200_000).unwrap_err();
            assert_eq!(e.offset(), Some(100_005), "{e}");
            assert_eq!(c.buffered().len(), 100_000);
            assert!(c.buffered().iter().all(|&b| b == 7));
        }
    }
}
