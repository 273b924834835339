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
//!
//! A buffer can also [read ahead](SharedBuf::read_ahead): the source is
//! read, and decompressed, on a thread of its own, which hands whole
//! chunks over without a copy while the reading thread walks the records
//! of the last one. The reading thread is then spared the kernel's copy
//! out of the page cache (a quarter of a raw TFRecord read's time).

use std::io::{self, Read};
use std::ops::Range;

use bytes::Bytes;

use crate::io::fs::ChunkRead;
use crate::io::read_ahead::{ChunkPool, ReadAhead};

/// Buffered bytes of a stream, read a chunk at a time.
pub(super) struct SharedBuf<R> {
    source: Source<R>,
    /// The current chunk.
    chunk: Bytes,
    /// How much of `chunk` has been consumed.
    pos: usize,
}

/// Where the chunks come from.
enum Source<R> {
    /// Read on the caller's thread.
    Here { inner: R, chunks: ChunkPool },
    /// Chunks handed over whole: by a read-ahead thread, which owns the
    /// source, or by a file system that has them already.
    Chunks(Box<dyn ChunkRead>),
}

impl<R: Read> SharedBuf<R> {
    pub(super) fn with_capacity(capacity: usize, inner: R) -> SharedBuf<R> {
        SharedBuf {
            source: Source::Here {
                inner,
                chunks: ChunkPool::new(capacity),
            },
            chunk: Bytes::new(),
            pos: 0,
        }
    }

    /// The unconsumed bytes of the current chunk, reading a new chunk if
    /// they are all consumed. Empty only at the end of the stream.
    pub(super) fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.pos >= self.chunk.len() {
            let old = std::mem::take(&mut self.chunk);
            self.chunk = match &mut self.source {
                Source::Here { inner, chunks } => {
                    let mut buf = chunks.free_chunk(old);
                    let n = inner.read(&mut buf)?;
                    buf.truncate(n);
                    buf.freeze()
                }
                Source::Chunks(source) => {
                    drop(old);
                    source.next_chunk()?
                }
            };
            self.pos = 0;
        }
        Ok(&self.chunk[self.pos..])
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

    /// The source; `None` for a buffer of chunks handed over.
    pub(super) fn get_ref(&self) -> Option<&R> {
        match &self.source {
            Source::Here { inner, .. } => Some(inner),
            Source::Chunks(_) => None,
        }
    }

    /// A buffer of the chunks `source` hands over, taken as they are.
    pub(super) fn from_chunks(source: Box<dyn ChunkRead>) -> SharedBuf<R> {
        SharedBuf {
            source: Source::Chunks(source),
            chunk: Bytes::new(),
            pos: 0,
        }
    }
}

impl<R: Read + Send + 'static> SharedBuf<R> {
    /// A buffer whose source is read on a thread of its own
    /// ([`ReadAhead`]): use it only for sources whose reads always return
    /// (regular files), never for pipes.
    pub(super) fn read_ahead(capacity: usize, inner: R) -> SharedBuf<R> {
        SharedBuf::from_chunks(Box::new(ReadAhead::start(capacity, inner)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::read_ahead::AHEAD_CHUNK;

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

    /// A source that hands out `data` in short reads, then fails with
    /// `fail` if given, and says when it is dropped.
    struct Source2 {
        data: Vec<u8>,
        at: usize,
        fail: Option<io::ErrorKind>,
        dropped: std::sync::Arc<std::sync::atomic::AtomicBool>,
    }

    impl Read for Source2 {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = buf.len().min(self.data.len() - self.at).min(1000);
            if n == 0 {
                if let Some(kind) = self.fail {
                    return Err(io::Error::new(kind, "the disk broke"));
                }
            }
            buf[..n].copy_from_slice(&self.data[self.at..self.at + n]);
            self.at += n;
            Ok(n)
        }
    }

    impl Drop for Source2 {
        fn drop(&mut self) {
            self.dropped
                .store(true, std::sync::atomic::Ordering::SeqCst);
        }
    }

    fn source(
        len: usize,
        fail: Option<io::ErrorKind>,
    ) -> (
        Source2,
        Vec<u8>,
        std::sync::Arc<std::sync::atomic::AtomicBool>,
    ) {
        let data: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
        let dropped = std::sync::Arc::default();
        let s = Source2 {
            data: data.clone(),
            at: 0,
            fail,
            dropped: std::sync::Arc::clone(&dropped),
        };
        (s, data, dropped)
    }

    /// Reads `b` to its end (or error), consuming `step` bytes at a time.
    fn drain<R: Read>(
        b: &mut SharedBuf<R>,
        step: usize,
    ) -> (Vec<u8>, Option<io::Error>) {
        let mut out = Vec::new();
        loop {
            match b.fill_buf() {
                Ok([]) => return (out, None),
                Ok(buf) => {
                    let n = buf.len().min(step);
                    out.extend_from_slice(&buf[..n]);
                    b.consume(n);
                }
                Err(e) => return (out, Some(e)),
            }
        }
    }

    #[test]
    fn reading_ahead_hands_over_every_byte_in_whole_chunks() {
        let len = 3 * AHEAD_CHUNK + 12345;
        let (s, data, dropped) = source(len, None);
        let mut b = SharedBuf::read_ahead(100, s);
        assert!(b.get_ref().is_none());
        // Short reads of the source still make whole chunks.
        assert_eq!(b.fill_buf().unwrap().len(), AHEAD_CHUNK);
        let held = b.share(0..10);
        let (got, err) = drain(&mut b, 777);
        assert!(err.is_none());
        assert_eq!(got, data);
        assert_eq!(&held[..], &data[..10]);
        // The end is the end again, and the thread is gone.
        assert!(b.fill_buf().unwrap().is_empty());
        wait_for(&dropped);
    }

    #[test]
    fn a_read_ahead_error_comes_after_the_bytes_before_it() {
        let len = AHEAD_CHUNK + 500;
        let (s, data, dropped) =
            source(len, Some(io::ErrorKind::PermissionDenied));
        let mut b = SharedBuf::read_ahead(64, s);
        let (got, err) = drain(&mut b, 4096);
        assert_eq!(got, data);
        assert_eq!(err.unwrap().kind(), io::ErrorKind::PermissionDenied);
        wait_for(&dropped);
    }

    #[test]
    fn dropping_a_reading_ahead_buffer_ends_its_thread() {
        // Far more than the channel holds: the thread waits to send.
        let (s, _, dropped) = source(64 * AHEAD_CHUNK, None);
        let mut b = SharedBuf::read_ahead(64, s);
        assert!(!b.fill_buf().unwrap().is_empty());
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(!dropped.load(std::sync::atomic::Ordering::SeqCst));
        drop(b);
        wait_for(&dropped);
    }

    /// Waits up to 10 s for `flag`: a thread that ends drops its source.
    fn wait_for(flag: &std::sync::atomic::AtomicBool) {
        let deadline =
            std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !flag.load(std::sync::atomic::Ordering::SeqCst) {
            assert!(
                std::time::Instant::now() < deadline,
                "the read-ahead thread did not end"
            );
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
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
        // From chunks of every small size (records span many of them),
        // and an error after them: the same records, then the error.
        struct Pieces(Vec<u8>, usize, usize);
        impl ChunkRead for Pieces {
            fn next_chunk(&mut self) -> io::Result<Bytes> {
                if self.1 == self.0.len() {
                    return Err(io::Error::other("connection reset"));
                }
                self.2 = self.2 % 7 + 1;
                let end = (self.1 + self.2).min(self.0.len());
                let chunk = Bytes::copy_from_slice(&self.0[self.1..end]);
                self.1 = end;
                Ok(chunk)
            }
        }
        let mut from_chunks = ReaderBuilder::new()
            .from_chunks(Box::new(Pieces(file.clone(), 0, 0)));
        for r in &read {
            assert_eq!(&from_chunks.read_record().unwrap().unwrap(), r);
        }
        let e = from_chunks.read_record().unwrap_err();
        assert!(e.to_string().contains("connection reset"), "{e}");
        assert!(from_chunks.get_ref().is_none());
        // Read ahead, the same records.
        let ahead: Vec<_> = ReaderBuilder::new()
            .from_reader_ahead(std::io::Cursor::new(file.clone()))
            .collect::<crate::Result<_>>()
            .unwrap();
        assert_eq!(ahead, read);
        assert_eq!(read.len(), records.len());
        let mut shared = 0;
        for (pair, r) in read.windows(2).zip(&records) {
            assert_eq!(&pair[0].value[..], &r[..]);
            // The next record's data starts right after this one's footer
            // and the next header when both lie in the same chunk.
            let next = pair[0].value.as_ptr() as usize
                + pair[0].value.len()
                + 4
                + HEADER_LEN;
            shared += usize::from(pair[1].value.as_ptr() as usize == next);
        }
        assert_eq!(&read[39].value[..], &records[39][..]);
        // 512-byte chunks hold about ten records each: most share one.
        assert!(shared >= 25, "only {shared} records shared a chunk");
    }
}
