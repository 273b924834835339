//! Reading an object: a stream of ranged GETs fetched ahead, and a
//! handle for positioned reads; both pinned to the version they opened.

use std::fmt;
use std::io::{self, Read};
use std::ops::Range;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use bytes::Bytes;
use futures::StreamExt;
use object_store::{GetOptions, GetRange, ObjectMeta, ObjectStoreExt};

use super::{Inner, Target};
use crate::error::{Error, Kind, Result};
use crate::io::fs::{ChunkRead, ReadAt};

/// The version of an object its first request (the HEAD of an open)
/// saw, which every later ranged GET of the same open object asks for:
/// with `If-Match` on its ETag, so that the store refuses a range of a
/// newer object (412) instead of serving it; or, for a store that gives
/// no ETag, by its version id. Each response's own ETag is compared too,
/// for a store that ignores `If-Match`. Without either, nothing is
/// pinned (a plain HTTP server may give neither).
#[derive(Debug, Clone, Default)]
pub(super) struct Pin {
    e_tag: Option<String>,
    version: Option<String>,
}

impl Pin {
    pub(super) fn of(meta: &ObjectMeta) -> Pin {
        Pin {
            e_tag: meta.e_tag.clone(),
            version: meta.version.clone(),
        }
    }

    fn options(&self, range: Range<u64>) -> GetOptions {
        GetOptions {
            range: Some(GetRange::Bounded(range)),
            // A weak ETag (an HTTP server's, of a compressed body) never
            // matches If-Match; it is compared on each answer instead.
            if_match: self.e_tag.clone().filter(|t| !t.starts_with("W/")),
            version: match self.e_tag {
                Some(_) => None,
                None => self.version.clone(),
            },
            ..GetOptions::default()
        }
    }
}

/// An ETag as a message shows it: without its quotes.
fn bare_tag(tag: &str) -> &str {
    tag.trim_start_matches("W/").trim_matches('"')
}

/// The error of an object that changed while it was being read: a
/// [`Kind::FailedPrecondition`] (what the store answers, 412), not
/// [`Kind::DataLoss`]: the object is not damaged and reading it again
/// from the start reads the new one whole, and a reader told to skip
/// damaged data must not skip this.
fn changed(url: &str, offset: u64, old: &str, new: &str) -> Error {
    Error::failed_precondition(format!(
        "the object changed while it was being read (ETag {} → {}); \
         read it again from the start",
        bare_tag(old),
        bare_tag(new)
    ))
    .with_file(url)
    .with_offset(offset)
}

impl Inner {
    /// The bytes of `range` of the object `pin` names.
    ///
    /// # Errors
    ///
    /// [`Kind::FailedPrecondition`] naming `url` and both ETags when the
    /// object has changed; any request error.
    pub(super) async fn get_range(
        &self,
        url: &str,
        t: &Target,
        pin: &Pin,
        range: Range<u64>,
    ) -> Result<Bytes> {
        let start = range.start;
        let got = self
            .retrying(url, Some(start), || {
                let store = Arc::clone(&t.store);
                let path = t.path.clone();
                let options = pin.options(range.clone());
                async move {
                    let res = store.get_opts(&path, options).await?;
                    let tag = res.meta.e_tag.clone();
                    Ok((tag, res.bytes().await?))
                }
            })
            .await;
        let old = pin.e_tag.as_deref();
        let bytes = match (got, old) {
            (Ok((Some(new), _)), Some(old)) if new != old => {
                return Err(changed(url, start, old, &new));
            }
            (Ok((_, bytes)), _) => bytes,
            (Err(e), Some(old)) if e.kind() == Kind::FailedPrecondition => {
                // If-Match refused: one HEAD for the ETag it has now.
                let now = self
                    .retrying(url, None, || {
                        let (store, path) = (Arc::clone(&t.store), &t.path);
                        async move { store.head(path).await }
                    })
                    .await;
                let new = match now {
                    Ok(meta) => meta.e_tag.unwrap_or_else(|| "none".into()),
                    Err(e) if e.kind() == Kind::NotFound => "deleted".into(),
                    Err(_) => "unknown".into(),
                };
                return Err(changed(url, start, old, &new));
            }
            (Err(e), _) => return Err(e),
        };
        self.stats
            .bytes
            .fetch_add(bytes.len() as u64, Ordering::Relaxed);
        Ok(bytes)
    }
}

/// One object open for positioned reads: ranged GETs, no read-ahead,
/// each pinned to the version the handle opened.
pub(super) struct ObjectReadAt {
    pub(super) inner: Arc<Inner>,
    /// Keeps the runtime alive while the handle is kept.
    pub(super) _runtime: Arc<tokio::runtime::Runtime>,
    pub(super) url: String,
    pub(super) target: Target,
    /// The object's size when opened.
    pub(super) size: u64,
    /// The version every read asks for.
    pub(super) pin: Pin,
}

impl fmt::Debug for ObjectReadAt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ObjectReadAt")
            .field("url", &self.url)
            .field("size", &self.size)
            .finish_non_exhaustive()
    }
}

impl ReadAt for ObjectReadAt {
    fn read_at(&self, offset: u64, len: usize) -> Result<Bytes> {
        let end = offset.saturating_add(len as u64).min(self.size);
        if offset >= end {
            return Ok(Bytes::new());
        }
        let inner = Arc::clone(&self.inner);
        self.inner.rt.block_on(inner.get_range(
            &self.url,
            &self.target,
            &self.pin,
            offset..end,
        ))
    }

    /// A request costs milliseconds: gaps up to the chunk size (at most
    /// 1 MiB) are read through rather than asked for separately.
    fn merge_gap(&self) -> u64 {
        (self.inner.opts.chunk_size as u64).min(1 << 20)
    }
}

pub(super) type Chunk = std::result::Result<Bytes, Error>;

/// The blocking reader of one object: ranged GETs in order, fetched ahead
/// by a task on the store's runtime, each pinned to the version the
/// reader opened (streams started again after an error too).
pub(super) struct ObjectReader {
    pub(super) inner: Arc<Inner>,
    /// Keeps the runtime alive while the file is open.
    pub(super) _runtime: Arc<tokio::runtime::Runtime>,
    pub(super) url: String,
    pub(super) target: Arc<Target>,
    pub(super) size: u64,
    /// The version every request asks for.
    pub(super) pin: Arc<Pin>,
    /// The offset of the first byte of `cur` (the next byte to return).
    pub(super) pos: u64,
    /// The rest of the chunk being returned.
    pub(super) cur: Bytes,
    /// The chunks the read-ahead task sends, in order; `None` until the
    /// first read, and again after an error, so that the next read starts
    /// a fresh stream at `pos`.
    pub(super) rx: Option<tokio::sync::mpsc::Receiver<Chunk>>,
}

impl ObjectReader {
    fn start(&mut self) -> tokio::sync::mpsc::Receiver<Chunk> {
        let opts = &self.inner.opts;
        let chunk = opts.chunk_size as u64;
        let ahead = opts.chunks_ahead();
        // The channel holds one finished chunk; `buffered` keeps up to
        // `ahead` requests in flight behind it.
        let (tx, rx) = tokio::sync::mpsc::channel(1);
        let inner = Arc::clone(&self.inner);
        let target = Arc::clone(&self.target);
        let pin = Arc::clone(&self.pin);
        let url = self.url.clone();
        let (start, size) = (self.pos, self.size);
        self.inner.rt.spawn(async move {
            let ranges = ramped_ranges(start, size, chunk);
            let mut chunks = futures::stream::iter(ranges)
                .map(|r| {
                    let (inner, target, url) = (&inner, &target, &url);
                    let pin = &pin;
                    async move { inner.get_range(url, target, pin, r).await }
                })
                .buffered(ahead);
            while let Some(res) = chunks.next().await {
                let failed = res.is_err();
                if tx.send(res).await.is_err() || failed {
                    // The reader is gone, or the stream ends at its error.
                    return;
                }
            }
        });
        rx
    }
}

/// The first request of a stream asks for at most this many bytes.
const FIRST_REQUEST: u64 = 1 << 20;

/// The byte ranges a stream from `start` to `size` requests, in order:
/// a first request of at most [`FIRST_REQUEST`] bytes, each next one
/// twice the last, up to `chunk`. A small first request puts the first
/// bytes in the reader's hands after one short round trip instead of a
/// whole large chunk (8 MiB took 0.68× the local rate on loopback against
/// 0.88× for 1 MiB requests in one `scripts/bench-store` run), and the
/// later, larger ones keep the request count of a long file low.
fn ramped_ranges(
    start: u64,
    size: u64,
    chunk: u64,
) -> impl Iterator<Item = std::ops::Range<u64>> {
    let mut next = start;
    let mut len = FIRST_REQUEST.min(chunk).max(1);
    std::iter::from_fn(move || {
        if next >= size {
            return None;
        }
        let r = next..(next + len).min(size);
        next = r.end;
        len = (len * 2).min(chunk);
        Some(r)
    })
}

impl ObjectReader {
    /// Makes `cur` hold the next bytes, unless the object has ended.
    fn fill(&mut self) -> io::Result<()> {
        while self.cur.is_empty() {
            if self.pos >= self.size {
                return Ok(());
            }
            if self.rx.is_none() {
                self.rx = Some(self.start());
            }
            let rx = self.rx.as_mut().expect("started above");
            match rx.blocking_recv() {
                Some(Ok(bytes)) if !bytes.is_empty() => self.cur = bytes,
                Some(Ok(_)) | None => {
                    self.rx = None;
                    let e = Error::data_loss(format!(
                        "object ended early: {} bytes expected",
                        self.size
                    ))
                    .with_file(&self.url)
                    .with_offset(self.pos);
                    return Err(to_io(e));
                }
                Some(Err(e)) => {
                    // Forget the stream: the next read starts again at
                    // `pos`, the first byte not yet returned.
                    self.rx = None;
                    return Err(to_io(e));
                }
            }
        }
        Ok(())
    }
}

impl Read for ObjectReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        self.fill()?;
        let n = buf.len().min(self.cur.len());
        buf[..n].copy_from_slice(&self.cur[..n]);
        let _ = self.cur.split_to(n);
        self.pos += n as u64;
        Ok(n)
    }
}

/// Each response whole, as it arrived.
impl ChunkRead for ObjectReader {
    fn next_chunk(&mut self) -> io::Result<Bytes> {
        self.fill()?;
        let chunk = std::mem::take(&mut self.cur);
        self.pos += chunk.len() as u64;
        Ok(chunk)
    }
}

/// Our error inside an `io::Error` of the matching kind, which
/// [`Error::io`] takes out again whole: kind, message, URL and offset,
/// each said once.
pub(super) fn to_io(e: Error) -> io::Error {
    let kind = match e.kind() {
        Kind::NotFound => io::ErrorKind::NotFound,
        Kind::PermissionDenied => io::ErrorKind::PermissionDenied,
        Kind::DataLoss => io::ErrorKind::UnexpectedEof,
        Kind::DeadlineExceeded => io::ErrorKind::TimedOut,
        _ => io::ErrorKind::Other,
    };
    io::Error::new(kind, e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_start_small_double_and_cover_the_rest_of_the_object() {
        let mib = 1u64 << 20;
        let ranges: Vec<_> = ramped_ranges(5, 30 * mib, 8 * mib).collect();
        let lens: Vec<u64> = ranges.iter().map(|r| r.end - r.start).collect();
        assert_eq!(&lens[..4], &[mib, 2 * mib, 4 * mib, 8 * mib]);
        assert!(lens.iter().all(|&l| l <= 8 * mib));
        assert_eq!(ranges[0].start, 5);
        assert_eq!(ranges.last().unwrap().end, 30 * mib);
        assert!(ranges.windows(2).all(|w| w[0].end == w[1].start));
        // Chunks smaller than the first request are used as they are.
        let small: Vec<_> = ramped_ranges(0, 10, 4).collect();
        assert_eq!(small, vec![0..4, 4..8, 8..10]);
        assert_eq!(ramped_ranges(7, 7, 4).count(), 0);
    }
}
