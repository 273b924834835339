//! The streaming reader's read buffer: a [`std::io::BufRead`]-like buffer
//! whose chunks are [`Bytes`], so that a record lying inside one chunk is
//! handed out as a slice of it instead of a copy.
//!
//! `std::io::BufReader` reuses one buffer, so every record has to be
//! copied out of it into an allocation of its own. Here each chunk is a
//! fresh buffer that the records taken from it share; it is freed when
//! the reader has moved on and the last of those records is dropped, or,
//! if it is among the last few chunks, filled again in place (no
//! allocation, no zeroing, memory the cache still holds). No crate offers
//! a `BufRead` over `Bytes` chunks, hence this small type.

use std::collections::VecDeque;
use std::io::{self, Read};
use std::ops::Range;

use bytes::{Bytes, BytesMut};

/// Buffered bytes of a stream, read a chunk at a time.
pub(super) struct SharedBuf<R> {
    inner: R,
    /// The current chunk.
    chunk: Bytes,
    /// How much of `chunk` has been consumed.
    pos: usize,
    /// How many bytes to read at a time.
    capacity: usize,
    /// The last chunks read before the current one, oldest first, to be
    /// filled again once no record refers to them.
    spare: VecDeque<Bytes>,
}

/// How many past chunks a reader keeps for reuse: enough to cover a
/// batch of records handed out and dropped together (1024 records of
/// 1 KiB span 16 chunks of 64 KiB).
const SPARE_CHUNKS: usize = 16;

impl<R: Read> SharedBuf<R> {
    pub(super) fn with_capacity(capacity: usize, inner: R) -> SharedBuf<R> {
        SharedBuf {
            inner,
            chunk: Bytes::new(),
            pos: 0,
            capacity: capacity.max(1),
            spare: VecDeque::new(),
        }
    }

    /// The unconsumed bytes of the current chunk, reading a new chunk if
    /// they are all consumed. Empty only at the end of the stream.
    pub(super) fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.pos >= self.chunk.len() {
            let old = std::mem::take(&mut self.chunk);
            let mut buf = self.free_chunk(old);
            let n = self.inner.read(&mut buf)?;
            buf.truncate(n);
            self.chunk = buf.freeze();
            self.pos = 0;
        }
        Ok(&self.chunk[self.pos..])
    }

    /// A buffer of `capacity` bytes to read into: a past chunk that no
    /// record refers to any more, or else a new one (records still hold
    /// slices of the past ones).
    fn free_chunk(&mut self, old: Bytes) -> BytesMut {
        if !old.is_empty() {
            if self.spare.len() == SPARE_CHUNKS {
                self.spare.pop_front();
            }
            self.spare.push_back(old);
        }
        if let Some(i) = self.spare.iter().position(Bytes::is_unique) {
            if let Some(Ok(mut buf)) =
                self.spare.remove(i).map(Bytes::try_into_mut)
            {
                if buf.capacity() >= self.capacity {
                    // Only bytes past the last read's length are written:
                    // none after a full read.
                    buf.resize(self.capacity, 0);
                    return buf;
                }
            }
        }
        // Zeroing costs a memset, far less than the read.
        BytesMut::zeroed(self.capacity)
    }

    /// Marks `n` more bytes as consumed.
    pub(super) fn consume(&mut self, n: usize) {
        self.pos = (self.pos + n).min(self.chunk.len());
    }

    /// `range` of the bytes [`fill_buf`](Self::fill_buf) returned, without
    /// a copy.
    pub(super) fn share(&self, range: Range<usize>) -> Bytes {
        self.chunk
            .slice(self.pos + range.start..self.pos + range.end)
    }

    pub(super) fn get_ref(&self) -> &R {
        &self.inner
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_chunks_and_reads_to_the_end() {
        let data: Vec<u8> = (0..=255).collect();
        let mut b = SharedBuf::with_capacity(100, &data[..]);
        assert_eq!(b.fill_buf().unwrap().len(), 100);
        b.consume(10);
        let s = b.share(0..5);
        assert_eq!(&s[..], &data[10..15]);
        // A slice points into the chunk, and outlives the next chunk.
        assert_eq!(s.as_ptr(), b.fill_buf().unwrap().as_ptr());
        b.consume(90);
        assert_eq!(b.fill_buf().unwrap()[0], 100);
        b.consume(100);
        assert_eq!(b.fill_buf().unwrap(), &data[200..]);
        b.consume(56);
        assert!(b.fill_buf().unwrap().is_empty());
        assert_eq!(&s[..], &data[10..15]);
    }

    #[test]
    fn a_chunk_no_record_holds_is_filled_again_in_place() {
        let data: Vec<u8> = (0..=255).collect();
        let mut b = SharedBuf::with_capacity(100, &data[..]);
        let first = b.fill_buf().unwrap().as_ptr();
        let held = b.share(0..10);
        b.consume(100);
        // The first chunk is still held: the second is a new buffer.
        let second = b.fill_buf().unwrap().as_ptr();
        assert_ne!(second, first);
        assert_eq!(b.fill_buf().unwrap(), &data[100..200]);
        b.consume(100);
        // The second chunk is free again: it takes the last 56 bytes.
        assert_eq!(b.fill_buf().unwrap().as_ptr(), second);
        assert_eq!(b.fill_buf().unwrap(), &data[200..]);
        // The held record kept its bytes through all of it.
        assert_eq!(&held[..], &data[..10]);
        drop(held);
        b.consume(56);
        assert!(b.fill_buf().unwrap().is_empty());
    }

    #[test]
    fn records_of_one_chunk_share_it_and_spanning_ones_are_whole() {
        use crate::io::tfrecord::{ReaderBuilder, Writer, HEADER_LEN};
        let mut w = Writer::new(Vec::new());
        let records: Vec<Vec<u8>> =
            (0..40u8).map(|i| vec![i; 10 + i as usize]).collect();
        for r in &records {
            w.write_record(r).unwrap();
        }
        let file = w.finish().unwrap();
        let read: Vec<_> = ReaderBuilder::new()
            .buffer_capacity(512)
            .from_reader(&file[..])
            .collect::<crate::Result<_>>()
            .unwrap();
        assert_eq!(read.len(), records.len());
        let mut shared = 0;
        for (pair, r) in read.windows(2).zip(&records) {
            assert_eq!(&pair[0].data[..], &r[..]);
            // The next record's data starts right after this one's footer
            // and the next header when both lie in the same chunk.
            let next = pair[0].data.as_ptr() as usize
                + pair[0].data.len()
                + 4
                + HEADER_LEN;
            shared += usize::from(pair[1].data.as_ptr() as usize == next);
        }
        assert_eq!(&read[39].data[..], &records[39][..]);
        // 512-byte chunks hold about ten records each: most share one.
        assert!(shared >= 25, "only {shared} records shared a chunk");
    }
}
