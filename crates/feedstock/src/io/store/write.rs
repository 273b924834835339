//! Writing an object: whole on commit, or not at all.

use std::collections::VecDeque;
use std::fmt;
use std::io::{self, Write};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use object_store::multipart::{MultipartStore, PartId};
use object_store::{MultipartId, ObjectStoreExt, PutPayload};

use super::client::store_error;
use super::read::to_io;
use super::{Inner, Target};
use crate::error::{Error, Result};

/// An object being written: it appears whole on [`commit`](Self::commit),
/// or not at all.
///
/// The first [`part_size`](super::StoreOptions::part_size) bytes are buffered; an
/// object that fits is sent by a single PUT on commit. A larger one becomes
/// a multipart upload, parts sent as they fill (up to two in flight),
/// completed by `commit`. Dropping the writer without committing aborts the
/// upload, so no partial object is ever visible.
///
/// The PUT, the start of the upload and every part are retried on
/// transient failures as reads are, and counted in
/// [`StoreStats::retries`](super::StoreStats::retries); the completion is not (a completion that
/// succeeded but whose answer was lost would fail if sent again).
pub struct ObjectWriter {
    pub(super) inner: Arc<Inner>,
    /// Keeps the runtime alive until the upload is done.
    pub(super) _runtime: Arc<tokio::runtime::Runtime>,
    pub(super) url: String,
    pub(super) target: Target,
    pub(super) buf: Vec<u8>,
    pub(super) upload: Option<Upload>,
    pub(super) written: u64,
}

/// A multipart upload in progress. object_store's `WriteMultipart`
/// numbers a part when it is sent and cannot send it again, so a part
/// that failed once failed the upload; parts are sent here through the
/// store's `MultipartStore` API, by index, each retried on its own.
pub(super) struct Upload {
    store: Arc<dyn MultipartStore>,
    id: MultipartId,
    /// The parts stored, in order.
    done: Vec<PartId>,
    /// The parts being sent, oldest first.
    in_flight: VecDeque<tokio::task::JoinHandle<Result<PartId>>>,
}

impl Upload {
    /// Waits for the oldest part in flight.
    fn wait_oldest(&mut self, inner: &Inner) -> Result<()> {
        if let Some(task) = self.in_flight.pop_front() {
            let part = inner.rt.block_on(task).map_err(|e| {
                Error::internal(format!("an upload task ended: {e}"))
            })??;
            self.done.push(part);
        }
        Ok(())
    }
}

impl fmt::Debug for ObjectWriter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ObjectWriter")
            .field("url", &self.url)
            .field("written", &self.written)
            .field("multipart", &self.upload.is_some())
            .finish()
    }
}

impl ObjectWriter {
    /// The URL being written.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Makes the object visible: completes the upload.
    ///
    /// # Errors
    ///
    /// Any request error, naming the URL; the upload is then aborted and
    /// no object appears.
    pub fn commit(mut self) -> Result<()> {
        let inner = Arc::clone(&self.inner);
        if self.upload.is_none() {
            let payload = PutPayload::from(std::mem::take(&mut self.buf));
            let t = &self.target;
            return inner.rt.block_on(inner.retrying(&self.url, None, || {
                let store = Arc::clone(&t.store);
                let path = t.path.clone();
                let payload = payload.clone();
                async move { store.put(&path, payload).await.map(|_| ()) }
            }));
        }
        // On an error below, dropping `self` aborts the upload.
        if !self.buf.is_empty() {
            self.send_part()?;
        }
        let upload = self.upload.as_mut().expect("a multipart upload");
        while !upload.in_flight.is_empty() {
            upload.wait_oldest(&inner)?;
        }
        inner.stats.requests.fetch_add(1, Ordering::Relaxed);
        let parts = std::mem::take(&mut upload.done);
        let done = inner.rt.block_on(upload.store.complete_multipart(
            &self.target.path,
            &upload.id,
            parts,
        ));
        match done {
            Ok(_) => {
                self.upload = None;
                Ok(())
            }
            Err(e) => {
                inner.stats.failures.fetch_add(1, Ordering::Relaxed);
                Err(store_error(&self.url, Some(self.written), 0, e))
            }
        }
    }

    /// Sends the buffer as the next part, starting the upload first if
    /// needed; waits while two parts are in flight.
    fn send_part(&mut self) -> Result<()> {
        let inner = Arc::clone(&self.inner);
        if self.upload.is_none() {
            let Some(store) = self.target.multipart.clone() else {
                return Err(Error::unimplemented(format!(
                    "this store has no multipart uploads: objects above \
                     {} bytes (super::StoreOptions::part_size) cannot be written",
                    inner.opts.part_size
                ))
                .with_file(&self.url));
            };
            let path = &self.target.path;
            let id =
                inner.rt.block_on(inner.retrying(&self.url, None, || {
                    let store = Arc::clone(&store);
                    let path = path.clone();
                    async move { store.create_multipart(&path).await }
                }))?;
            self.upload = Some(Upload {
                store,
                id,
                done: Vec::new(),
                in_flight: VecDeque::new(),
            });
        }
        let upload = self.upload.as_mut().expect("started above");
        if upload.in_flight.len() >= 2 {
            upload.wait_oldest(&inner)?;
        }
        let index = upload.done.len() + upload.in_flight.len();
        let offset = self.written - self.buf.len() as u64;
        let payload = PutPayload::from(std::mem::take(&mut self.buf));
        let (store, id) = (Arc::clone(&upload.store), upload.id.clone());
        let (path, url) = (self.target.path.clone(), self.url.clone());
        let task_inner = Arc::clone(&inner);
        let send = async move {
            let put = || {
                let (store, path, id) =
                    (store.clone(), path.clone(), id.clone());
                let payload = payload.clone();
                async move { store.put_part(&path, &id, index, payload).await }
            };
            task_inner.retrying(&url, Some(offset), put).await
        };
        upload.in_flight.push_back(inner.rt.spawn(send));
        Ok(())
    }
}

impl Write for ObjectWriter {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        let part = self.inner.opts.part_size;
        let n = data.len().min(part - self.buf.len());
        self.buf.extend_from_slice(&data[..n]);
        self.written += n as u64;
        if self.buf.len() == part {
            self.send_part().map_err(to_io)?;
        }
        Ok(n)
    }

    /// Does nothing: bytes reach the store by parts, and the object only
    /// on [`ObjectWriter::commit`].
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Drop for ObjectWriter {
    fn drop(&mut self) {
        if let Some(upload) = self.upload.take() {
            // Not committed: abort, so that no part of it stays stored.
            for task in &upload.in_flight {
                task.abort();
            }
            let _ = self.inner.rt.block_on(
                upload.store.abort_multipart(&self.target.path, &upload.id),
            );
        }
    }
}
