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
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use parking_lot::{Condvar, Mutex};

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
const AHEAD_DEPTH: usize = 8;

/// A read-ahead thread that found no room sleeps until this many chunks
/// are left, then refills the rest in one go: one wake-up per
/// `AHEAD_DEPTH - RESUME_AT` chunks instead of one per chunk (measured
/// on CIFAR's per-record path: 2 900 context switches per run, most of
/// them these wake-ups, and a tenth of its time).
const RESUME_AT: usize = AHEAD_DEPTH / 2;

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
/// up to eight of them ahead of the reader. The thread ends at the end of
/// the source, at its first error (handed over after the bytes before
/// it), or once this handle is dropped and the read under way returns.
pub(crate) struct ReadAhead {
    /// Filled chunks in order; an empty one is the end of the stream.
    rx: Arc<Handoff>,
    /// Set once the end or an error was received: the thread is gone.
    done: bool,
}

impl Drop for ReadAhead {
    fn drop(&mut self) {
        self.rx.reader_gone();
    }
}

/// The chunks between the read-ahead thread and its reader: a bounded
/// queue like a sync channel, except that a thread waiting for room is
/// only woken once the queue is down to [`RESUME_AT`]. No channel crate
/// offers that, hence this one.
struct Handoff {
    state: Mutex<Queued>,
    /// Signalled when a chunk arrives for a waiting reader, or the
    /// thread ended.
    filled: Condvar,
    /// Signalled when the queue is down to `RESUME_AT` for a waiting
    /// thread, or the reader is gone.
    room: Condvar,
}

#[derive(Default)]
struct Queued {
    chunks: VecDeque<io::Result<Bytes>>,
    reader_waits: bool,
    thread_waits: bool,
    reader_gone: bool,
    thread_gone: bool,
}

impl Handoff {
    fn new() -> Handoff {
        Handoff {
            state: Mutex::new(Queued::default()),
            filled: Condvar::new(),
            room: Condvar::new(),
        }
    }

    /// Queues a chunk, waiting for room; false once the reader is gone.
    fn send(&self, chunk: io::Result<Bytes>) -> bool {
        let mut st = self.state.lock();
        while st.chunks.len() >= AHEAD_DEPTH && !st.reader_gone {
            st.thread_waits = true;
            self.room.wait(&mut st);
        }
        if st.reader_gone {
            return false;
        }
        st.chunks.push_back(chunk);
        if std::mem::take(&mut st.reader_waits) {
            self.filled.notify_one();
        }
        true
    }

    /// The next chunk, waiting for one; `None` once the thread ended with
    /// nothing left.
    fn recv(&self) -> Option<io::Result<Bytes>> {
        let mut st = self.state.lock();
        loop {
            if let Some(chunk) = st.chunks.pop_front() {
                if st.chunks.len() <= RESUME_AT
                    && std::mem::take(&mut st.thread_waits)
                {
                    self.room.notify_one();
                }
                return Some(chunk);
            }
            if st.thread_gone {
                return None;
            }
            st.reader_waits = true;
            self.filled.wait(&mut st);
        }
    }

    fn reader_gone(&self) {
        let mut st = self.state.lock();
        st.reader_gone = true;
        st.chunks.clear();
        self.room.notify_one();
    }

    fn thread_gone(&self) {
        self.state.lock().thread_gone = true;
        self.filled.notify_one();
    }
}

/// Marks the thread's end, however it ends (a panic included), so that
/// its reader is never left waiting.
struct EndsThread(Arc<Handoff>);

impl Drop for EndsThread {
    fn drop(&mut self) {
        self.0.thread_gone();
    }
}

impl ReadAhead {
    pub(crate) fn start<R: Read + Send + 'static>(
        capacity: usize,
        inner: R,
    ) -> ReadAhead {
        let handoff = Arc::new(Handoff::new());
        // Queued, one waiting for room, one being read.
        let chunks =
            ChunkPool::in_flight(capacity.max(AHEAD_CHUNK), AHEAD_DEPTH + 2);
        let spawned = std::thread::Builder::new()
            .name("feedstock-read-ahead".into())
            .spawn({
                let tx = EndsThread(handoff.clone());
                move || fill(inner, chunks, &tx.0)
            });
        if let Err(e) = spawned {
            // The source went with the thread that did not start: say so
            // on the first read. (The closure's `EndsThread`, dropped with
            // it, has already marked the thread gone.)
            handoff.send(Err(io::Error::new(
                e.kind(),
                format!("cannot start a read-ahead thread: {e}"),
            )));
        }
        ReadAhead {
            rx: handoff,
            done: false,
        }
    }

    /// The next chunk, in order; empty at the end of the source (and
    /// after it, or after an error).
    pub(crate) fn next(&mut self) -> io::Result<Bytes> {
        if self.done {
            return Ok(Bytes::new());
        }
        match self.rx.recv() {
            Some(Ok(chunk)) => {
                self.done = chunk.is_empty();
                Ok(chunk)
            }
            Some(Err(e)) => {
                self.done = true;
                Err(e)
            }
            // Only a panic ends the thread without a last message.
            None => {
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
fn fill<R: Read>(mut inner: R, mut chunks: ChunkPool, tx: &Handoff) {
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
        if n > 0 && !tx.send(Ok(chunk.clone())) {
            return; // the reader is gone
        }
        if let Some(e) = failed {
            tx.send(Err(e));
            return;
        }
        if end {
            tx.send(Ok(Bytes::new()));
            return;
        }
        last = chunk;
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;
    use std::time::Duration;

    use super::*;

    fn chunk(i: usize) -> io::Result<Bytes> {
        Ok(Bytes::from(vec![i as u8; 4]))
    }

    fn value(c: Option<io::Result<Bytes>>) -> u8 {
        c.expect("a chunk").expect("not an error")[0]
    }

    #[test]
    fn a_thread_waiting_for_room_is_woken_only_once_the_queue_is_down_to_half()
    {
        let h = Arc::new(Handoff::new());
        let sender = {
            let h = h.clone();
            std::thread::spawn(move || {
                (0..=AHEAD_DEPTH).all(|i| h.send(chunk(i)))
            })
        };
        while !h.state.lock().thread_waits {
            std::thread::yield_now();
        }
        assert_eq!(h.state.lock().chunks.len(), AHEAD_DEPTH);
        for i in 0..AHEAD_DEPTH - RESUME_AT {
            let st = h.state.lock();
            assert!(st.thread_waits, "woken with {} queued", st.chunks.len());
            drop(st);
            assert_eq!(value(h.recv()), i as u8);
        }
        // Down to RESUME_AT: the thread was woken and sends its last one.
        assert!(sender.join().unwrap(), "every chunk sent");
        for i in AHEAD_DEPTH - RESUME_AT..=AHEAD_DEPTH {
            assert_eq!(value(h.recv()), i as u8);
        }
    }

    #[test]
    fn a_thread_waiting_for_room_ends_when_its_reader_is_dropped() {
        let ahead = ReadAhead::start(AHEAD_CHUNK, io::repeat(7));
        let h = ahead.rx.clone();
        while !h.state.lock().thread_waits {
            std::thread::yield_now();
        }
        drop(ahead);
        // The thread's end is marked once it returns.
        for _ in 0..1000 {
            if h.state.lock().thread_gone {
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        panic!("the read-ahead thread did not end");
    }

    #[test]
    fn a_reader_waiting_for_a_chunk_learns_the_thread_has_gone() {
        let h = Arc::new(Handoff::new());
        let ends = EndsThread(h.clone());
        let reader = {
            let h = h.clone();
            std::thread::spawn(move || (value(h.recv()), h.recv().is_none()))
        };
        assert!(h.send(chunk(3)));
        // As a panicking thread would: gone without a last message.
        drop(ends);
        assert_eq!(reader.join().unwrap(), (3, true));
    }

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
