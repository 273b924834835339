//! Reading a source ahead of its reader, on a thread of its own.
//!
//! A reader of a local file spends much of its time in the kernel's copy
//! out of the page cache (a quarter of a raw TFRecord read's profile). A
//! [`ReadAhead`] moves that copy, and any decompression, to a thread of
//! its own, which hands whole chunks over as [`Bytes`] while the reader
//! works on the last one. No crate hands out a reader's chunks as shared
//! `Bytes` from a thread, reusing the ones nobody holds any more, hence
//! this small module.

use std::collections::VecDeque;
use std::io::{self, Read};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

use bytes::{Bytes, BytesMut};

use super::fs::ChunkRead;

/// How many bytes of past chunks a pool keeps for reuse: enough to cover
/// a batch of records handed out and dropped together (1024 records of
/// 1 KiB span 16 chunks of 64 KiB, or 4 of 256 KiB), and never more
/// than 16 chunks, each checked at every read.
const SPARE_BYTES: usize = 1 << 20;

/// The smallest chunk a read-ahead thread hands over: each hand-over may
/// wake a thread (tens of microseconds), so they must be few.
pub(crate) const AHEAD_CHUNK: usize = 256 << 10;

/// How many filled chunks wait for the reader at most.
const AHEAD_DEPTH: usize = 4;

/// Chunks to read into: past chunks that no record refers to any more
/// are filled again.
pub(crate) struct ChunkPool {
    /// How many bytes to read at a time.
    capacity: usize,
    /// The last chunks read, oldest first.
    spare: VecDeque<Bytes>,
    /// How many past chunks to keep.
    keep: usize,
}

impl ChunkPool {
    pub(crate) fn new(capacity: usize) -> ChunkPool {
        ChunkPool::in_flight(capacity, 0)
    }

    /// A pool whose last `in_flight` chunks are still on their way to the
    /// reader: they are kept too, on top of the past chunks, or the pool
    /// would only ever hold chunks nobody has freed yet, and every read
    /// would go to a new, zeroed chunk.
    fn in_flight(capacity: usize, in_flight: usize) -> ChunkPool {
        let capacity = capacity.max(1);
        ChunkPool {
            capacity,
            spare: VecDeque::new(),
            keep: in_flight + (SPARE_BYTES / capacity).clamp(1, 16),
        }
    }

    /// A buffer of `capacity` bytes to read into: a past chunk that no
    /// record refers to any more, or else a new one (records still hold
    /// slices of the past ones). `old`, the chunk just read, joins the
    /// past ones.
    pub(crate) fn free_chunk(&mut self, old: Bytes) -> BytesMut {
        if !old.is_empty() {
            if self.spare.len() >= self.keep {
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
}

/// A source read on a thread of its own, in chunks of at least 256 KiB,
/// up to four of them ahead of the reader. The thread ends at the end of
/// the source, at its first error (handed over after the bytes before
/// it), or once this handle is dropped and the read under way returns.
pub(crate) struct ReadAhead {
    /// Filled chunks in order; an empty one is the end of the stream.
    rx: Receiver<io::Result<Bytes>>,
    /// Set once the end or an error was received: the thread is gone.
    done: bool,
}

impl ReadAhead {
    pub(crate) fn start<R: Read + Send + 'static>(
        capacity: usize,
        inner: R,
    ) -> ReadAhead {
        let (tx, rx) = sync_channel(AHEAD_DEPTH);
        // Queued in the channel, one blocked sending, one being read.
        let chunks =
            ChunkPool::in_flight(capacity.max(AHEAD_CHUNK), AHEAD_DEPTH + 2);
        let spawned = std::thread::Builder::new()
            .name("feedstock-read-ahead".into())
            .spawn({
                let tx = tx.clone();
                move || fill(inner, chunks, &tx)
            });
        if let Err(e) = spawned {
            // The source went with the thread that did not start: say so
            // on the first read.
            let _ = tx.send(Err(io::Error::new(
                e.kind(),
                format!("cannot start a read-ahead thread: {e}"),
            )));
        }
        ReadAhead { rx, done: false }
    }

    /// The next chunk, in order; empty at the end of the source (and
    /// after it, or after an error).
    pub(crate) fn next(&mut self) -> io::Result<Bytes> {
        if self.done {
            return Ok(Bytes::new());
        }
        match self.rx.recv() {
            Ok(Ok(chunk)) => {
                self.done = chunk.is_empty();
                Ok(chunk)
            }
            Ok(Err(e)) => {
                self.done = true;
                Err(e)
            }
            // Only a panic ends the thread without a last message.
            Err(_) => {
                self.done = true;
                Err(io::Error::other("the read-ahead thread stopped"))
            }
        }
    }
}

impl ChunkRead for ReadAhead {
    fn next_chunk(&mut self) -> io::Result<Bytes> {
        self.next()
    }
}

/// The read-ahead thread: fills chunks from `inner` and sends them, until
/// the end (sent as an empty chunk), an error (sent after the bytes
/// before it), or the reader is gone.
fn fill<R: Read>(
    mut inner: R,
    mut chunks: ChunkPool,
    tx: &SyncSender<io::Result<Bytes>>,
) {
    let mut last = Bytes::new();
    loop {
        let mut buf = chunks.free_chunk(last);
        let (mut n, mut end, mut failed) = (0, false, None);
        // A whole chunk per hand-over, however little each read returns
        // (a decompressor's reads can be short).
        while n < buf.len() {
            match inner.read(&mut buf[n..]) {
                Ok(0) => {
                    end = true;
                    break;
                }
                Ok(k) => n += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        buf.truncate(n);
        let chunk = buf.freeze();
        if n > 0 && tx.send(Ok(chunk.clone())).is_err() {
            return; // the reader is gone
        }
        if let Some(e) = failed {
            let _ = tx.send(Err(e));
            return;
        }
        if end {
            let _ = tx.send(Ok(Bytes::new()));
            return;
        }
        last = chunk;
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn chunks_still_in_flight_do_not_crowd_out_the_freed_ones() {
        // A read-ahead thread's last chunks wait in the channel; the
        // reader frees each chunk once it has read past it. After the
        // first round, every chunk must be one read before.
        let in_flight = AHEAD_DEPTH + 2;
        let mut pool = ChunkPool::in_flight(AHEAD_CHUNK, in_flight);
        let mut queued: VecDeque<Bytes> = VecDeque::new();
        let mut last = Bytes::new();
        let mut seen = HashSet::new();
        for step in 0..64 {
            let mut buf = pool.free_chunk(last);
            buf[0] = step as u8;
            let fresh = seen.insert(buf.as_ptr() as usize);
            last = buf.freeze();
            queued.push_back(last.clone());
            if queued.len() > in_flight {
                queued.pop_front();
            }
            assert!(step <= in_flight + 1 || !fresh, "step {step}: new chunk");
        }
        assert!(seen.len() <= in_flight + 2, "{} chunks", seen.len());
    }
}
