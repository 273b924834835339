//! Object stores behind the file seam: `s3://`, `gs://`, `az://`,
//! `http(s)://` and `file://` URLs, through the `object_store` crate.
//!
//! [`ObjectStoreFs`] implements [`FileSystem`] for URLs; [`AnyFs`]
//! dispatches by scheme, sending plain paths to [`LocalFs`], and is what
//! every reader, producer and CLI subcommand uses by default (see
//! [`default_fs`](super::fs::default_fs)).
//!
//! # Credentials and endpoints
//!
//! Each store is configured from its usual environment variables, then from
//! the options given to [`StoreOptions::option`]: `AWS_*` for S3 (among
//! them `AWS_ENDPOINT` / `AWS_ENDPOINT_URL` and `AWS_ALLOW_HTTP=true` for a
//! local server), `GOOGLE_*` for GCS, `AZURE_*` for Azure. No credential or
//! option value is ever printed: the [`Debug`] forms name option keys only,
//! and errors name the URL of the object.
//!
//! An S3 bucket needs credentials from a source named in the settings:
//! keys (`AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY`), a web identity,
//! container credentials, or `AWS_METADATA_ENDPOINT` to take an EC2
//! instance's role; `AWS_SKIP_SIGNATURE=true` reads a public bucket
//! without any. With none, opening fails at once with
//! [`Kind::PermissionDenied`] naming these variables, instead of asking
//! the instance-metadata service (169.254.169.254) of a machine that
//! mostly is not on EC2. An `http://` endpoint without
//! `AWS_ALLOW_HTTP=true`, and a value of it that is not a boolean, are
//! [`Kind::InvalidArgument`] naming the variable.
//!
//! # Reading
//!
//! A file opened for reading streams ranged GETs: the first of at most
//! 1 MiB, so that the first record arrives after one short round trip,
//! each next one twice as large up to [`StoreOptions::chunk_size`]. A background task on the store's
//! own small tokio runtime keeps up to [`StoreOptions::read_ahead`] bytes
//! requested ahead of the reader, in order, so that several chunks of one
//! file, and several files read by several threads, are in flight at once.
//! Memory per open file is bounded by about `read_ahead + 2 * chunk_size`.
//!
//! A chunk whose request fails for a transient reason (a connection
//! refused or reset, a timeout, a server error) is requested again, up to
//! [`StoreOptions::max_retries`] times with a doubling pause; every retry
//! is counted in [`StoreStats::retries`]. A missing object is
//! [`Kind::NotFound`], a denied one [`Kind::PermissionDenied`]; neither is
//! retried. When the retries are spent the read fails with an error naming
//! the URL and the byte offset of the chunk. Bytes already returned are
//! never returned again: the next read after an error starts a fresh
//! stream at the first byte not yet delivered.
//!
//! Every ranged GET of one open object (each chunk of a stream, streams
//! started again after an error, each read of an
//! [`open_read_at`](FileSystem::open_read_at) handle) asks for the
//! version the open saw, by `If-Match` on its ETag, and checks the ETag
//! of the answer too. An object overwritten while it is read fails with
//! [`Kind::FailedPrecondition`] naming the URL: "the object changed while
//! it was being read (ETag a → b)", never a mix of the two objects.
//!
//! # Writing
//!
//! [`ObjectStoreFs::create`] gives an [`ObjectWriter`]: the object appears
//! whole or not at all. Up to one part it is a single PUT on
//! [`ObjectWriter::commit`]; past that it is a multipart upload completed
//! only by `commit` and aborted when the writer is dropped uncommitted.
//! The PUT, the start of the upload and each part are retried as reads
//! are; the completion is not.

use std::collections::HashMap;
use std::fmt;
use std::io::Read;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::TryStreamExt;
use object_store::multipart::MultipartStore;
use object_store::path::Path as ObjPath;
use object_store::{
    ObjectMeta, ObjectStore, ObjectStoreExt, ObjectStoreScheme,
};
use parking_lot::Mutex;
use url::Url;

use super::fs::{ChunkRead, FileSystem, LocalFs, ReadAt};
use crate::error::{Error, Kind, Result};

mod client;
mod read;
mod write;

use client::{is_transient, store_error};
use read::{ObjectReadAt, ObjectReader, Pin};
pub use write::ObjectWriter;

/// Settings of an [`ObjectStoreFs`]; every buffer it keeps is bounded by
/// one of them.
#[derive(Clone)]
pub struct StoreOptions {
    chunk_size: usize,
    read_ahead: usize,
    max_retries: u32,
    retry_delay: Duration,
    part_size: usize,
    worker_threads: usize,
    options: Vec<(String, String)>,
}

impl fmt::Debug for StoreOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Option values may be secrets (keys, tokens): print the keys only.
        let keys: Vec<&str> =
            self.options.iter().map(|(k, _)| k.as_str()).collect();
        f.debug_struct("StoreOptions")
            .field("chunk_size", &self.chunk_size)
            .field("read_ahead", &self.read_ahead)
            .field("max_retries", &self.max_retries)
            .field("retry_delay", &self.retry_delay)
            .field("part_size", &self.part_size)
            .field("worker_threads", &self.worker_threads)
            .field("option_keys", &keys)
            .finish()
    }
}

impl Default for StoreOptions {
    fn default() -> StoreOptions {
        StoreOptions {
            chunk_size: 8 << 20,
            read_ahead: 32 << 20,
            max_retries: 3,
            retry_delay: Duration::from_millis(100),
            part_size: 16 << 20,
            worker_threads: 2,
            options: Vec::new(),
        }
    }
}

impl StoreOptions {
    /// The defaults: 8 MiB chunks, 32 MiB read-ahead per file, 3 retries
    /// starting 100 ms apart, 16 MiB upload parts, 2 runtime threads.
    pub fn new() -> StoreOptions {
        StoreOptions::default()
    }

    /// Bytes asked for by one ranged GET (at least 1).
    pub fn chunk_size(mut self, bytes: usize) -> StoreOptions {
        self.chunk_size = bytes.max(1);
        self
    }

    /// Bytes requested ahead of the reader, per open file. Rounded to whole
    /// chunks, at least one.
    pub fn read_ahead(mut self, bytes: usize) -> StoreOptions {
        self.read_ahead = bytes;
        self
    }

    /// How many times a failed request is retried before the error is
    /// returned (0: never).
    pub fn max_retries(mut self, n: u32) -> StoreOptions {
        self.max_retries = n;
        self
    }

    /// The pause before the first retry; it doubles for each next one.
    pub fn retry_delay(mut self, delay: Duration) -> StoreOptions {
        self.retry_delay = delay;
        self
    }

    /// Bytes per part of a multipart upload (S3 needs at least 5 MiB).
    pub fn part_size(mut self, bytes: usize) -> StoreOptions {
        self.part_size = bytes.max(1);
        self
    }

    /// Threads of the store's tokio runtime (at least 1).
    pub fn worker_threads(mut self, n: usize) -> StoreOptions {
        self.worker_threads = n.max(1);
        self
    }

    /// A store option, as the `object_store` builders name them
    /// (`aws_endpoint`, `aws_allow_http`, `google_service_account`, ...);
    /// it overrides the environment. Unknown keys are ignored by stores
    /// they do not belong to.
    pub fn option(
        mut self,
        key: impl Into<String>,
        value: impl Into<String>,
    ) -> StoreOptions {
        self.options.push((key.into(), value.into()));
        self
    }

    /// The defaults, overridden by the environment variables
    /// `FEEDSTOCK_STORE_CHUNK_SIZE`, `FEEDSTOCK_STORE_READ_AHEAD` (bytes)
    /// and `FEEDSTOCK_STORE_THREADS`: how the process's shared store
    /// ([`shared_fs`]) is tuned without code, from the CLI for instance.
    ///
    /// # Errors
    ///
    /// [`Kind::InvalidArgument`] naming the variable whose value is not a
    /// positive integer.
    pub fn from_env() -> Result<StoreOptions> {
        let var = |name: &str| -> Result<Option<usize>> {
            match std::env::var(name) {
                Err(_) => Ok(None),
                Ok(v) => match v.trim().parse::<usize>() {
                    Ok(n) if n > 0 => Ok(Some(n)),
                    _ => Err(Error::invalid_argument(format!(
                        "{name} must be a positive integer, got {v:?}"
                    ))),
                },
            }
        };
        let mut opts = StoreOptions::new();
        if let Some(n) = var("FEEDSTOCK_STORE_CHUNK_SIZE")? {
            opts = opts.chunk_size(n);
        }
        if let Some(n) = var("FEEDSTOCK_STORE_READ_AHEAD")? {
            opts = opts.read_ahead(n);
        }
        if let Some(n) = var("FEEDSTOCK_STORE_THREADS")? {
            opts = opts.worker_threads(n);
        }
        Ok(opts)
    }

    fn chunks_ahead(&self) -> usize {
        (self.read_ahead / self.chunk_size).max(1)
    }
}

/// Counters of an [`ObjectStoreFs`], shared by every file it opened.
#[derive(Debug, Default)]
pub struct StoreStats {
    requests: AtomicU64,
    bytes: AtomicU64,
    retries: AtomicU64,
    failures: AtomicU64,
}

impl StoreStats {
    /// Requests sent (GET, HEAD, LIST, PUT), retries included.
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    /// Bytes received by ranged GETs.
    pub fn bytes_read(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    /// Requests sent again after a transient failure.
    pub fn retries(&self) -> u64 {
        self.retries.load(Ordering::Relaxed)
    }

    /// Operations that failed after their retries were spent (or at once,
    /// for a failure that is not transient). A missing object is an
    /// answer, not a failure: it is not counted.
    pub fn failures(&self) -> u64 {
        self.failures.load(Ordering::Relaxed)
    }
}

/// A [`FileSystem`] over object-store URLs.
///
/// Owns a small tokio runtime; one client per bucket (or host) is built on
/// first use and kept.
pub struct ObjectStoreFs {
    inner: Arc<Inner>,
    runtime: Arc<tokio::runtime::Runtime>,
}

/// What requests need; tasks on the runtime hold it, so it must not own
/// the runtime (a runtime cannot be dropped from one of its own threads).
struct Inner {
    rt: tokio::runtime::Handle,
    opts: StoreOptions,
    stats: Arc<StoreStats>,
    stores: Mutex<HashMap<String, Client>>,
}

/// One bucket's client, and the same client's part-by-part upload API
/// (S3, GCS and Azure have one; plain HTTP does not).
#[derive(Clone)]
struct Client {
    store: Arc<dyn ObjectStore>,
    multipart: Option<Arc<dyn MultipartStore>>,
}

impl fmt::Debug for ObjectStoreFs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let stores: Vec<String> =
            self.inner.stores.lock().keys().cloned().collect();
        f.debug_struct("ObjectStoreFs")
            .field("options", &self.inner.opts)
            .field("stores", &stores)
            .finish()
    }
}

/// A parsed URL: the client for its bucket and the object's path in it.
struct Target {
    store: Arc<dyn ObjectStore>,
    multipart: Option<Arc<dyn MultipartStore>>,
    path: ObjPath,
}

impl ObjectStoreFs {
    /// A store reader with the default [`StoreOptions`].
    ///
    /// # Errors
    ///
    /// [`Kind::Internal`] if the runtime cannot be started.
    pub fn new() -> Result<ObjectStoreFs> {
        ObjectStoreFs::with_options(StoreOptions::default())
    }

    /// A store reader with `opts`.
    ///
    /// # Errors
    ///
    /// [`Kind::Internal`] if the runtime cannot be started.
    pub fn with_options(opts: StoreOptions) -> Result<ObjectStoreFs> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(opts.worker_threads)
            .thread_name("feedstock-store")
            .enable_all()
            .build()
            .map_err(|e| {
                Error::internal(format!("cannot start the store runtime: {e}"))
            })?;
        Ok(ObjectStoreFs {
            inner: Arc::new(Inner {
                rt: rt.handle().clone(),
                opts,
                stats: Arc::new(StoreStats::default()),
                stores: Mutex::new(HashMap::new()),
            }),
            runtime: Arc::new(rt),
        })
    }

    /// The counters of every request made so far.
    pub fn stats(&self) -> &StoreStats {
        &self.inner.stats
    }

    /// Creates the object at `url` for writing; see [`ObjectWriter`].
    ///
    /// # Errors
    ///
    /// [`Kind::InvalidArgument`] for a URL no store understands.
    pub fn create(&self, url: &str) -> Result<ObjectWriter> {
        let target = self.inner.target(url)?;
        Ok(ObjectWriter {
            inner: Arc::clone(&self.inner),
            _runtime: Arc::clone(&self.runtime),
            url: url.to_owned(),
            target,
            buf: Vec::new(),
            upload: None,
            written: 0,
        })
    }

    /// The streaming reader of `url` from byte `offset` (one HEAD for the
    /// size; the GETs start with the first read).
    fn reader(&self, url: &str, offset: u64) -> Result<ObjectReader> {
        let meta = self.head(url)?;
        let size = meta.size;
        if size < offset {
            return Err(Error::data_loss(format!(
                "object is {size} bytes, cannot resume at byte {offset}"
            ))
            .with_file(url));
        }
        let target = self.inner.target(url)?;
        Ok(ObjectReader {
            inner: Arc::clone(&self.inner),
            _runtime: Arc::clone(&self.runtime),
            url: url.to_owned(),
            target: Arc::new(target),
            size,
            pin: Arc::new(Pin::of(&meta)),
            pos: offset,
            cur: Bytes::new(),
            rx: None,
        })
    }

    /// The size and version of the object at `url` (one HEAD).
    fn head(&self, url: &str) -> Result<ObjectMeta> {
        let t = self.inner.target(url)?;
        let inner = Arc::clone(&self.inner);
        // A bucket lists no directories: a URL ending in '/' or naming a
        // prefix has no object, which HEAD reports as missing.
        self.inner.rt.block_on(inner.retrying(url, None, || {
            let store = Arc::clone(&t.store);
            let path = t.path.clone();
            async move { store.head(&path).await }
        }))
    }

    /// Deletes the object at `url` (used to clean up after a failed run).
    ///
    /// # Errors
    ///
    /// [`Kind::NotFound`] if there is none; any request error.
    pub fn delete(&self, url: &str) -> Result<()> {
        let t = self.inner.target(url)?;
        let inner = Arc::clone(&self.inner);
        self.inner.rt.block_on(inner.retrying(url, None, || {
            let store = Arc::clone(&t.store);
            let path = t.path.clone();
            async move { store.delete(&path).await }
        }))
    }
}

impl Inner {
    /// The client for `url`'s bucket (built on first use) and the path.
    fn target(&self, url: &str) -> Result<Target> {
        let parsed = Url::parse(url).map_err(|e| {
            Error::invalid_argument(format!("not a valid URL: {e}"))
                .with_file(url)
        })?;
        let (scheme, path) =
            ObjectStoreScheme::parse(&parsed).map_err(|e| {
                Error::invalid_argument(format!(
                    "not an object-store URL: {e}"
                ))
                .with_file(url)
            })?;
        let path = ObjPath::parse(path).map_err(|e| {
            Error::invalid_argument(format!("not a valid object path: {e}"))
                .with_file(url)
        })?;
        let key =
            format!("{:?}:{}", scheme, &parsed[..url::Position::BeforePath]);
        let mut stores = self.stores.lock();
        let client = match stores.get(&key) {
            Some(c) => c.clone(),
            None => {
                let c = self.build(scheme, &parsed)?;
                stores.insert(key, c.clone());
                c
            }
        };
        Ok(Target {
            store: client.store,
            multipart: client.multipart,
            path,
        })
    }

    /// Runs the request `f` makes, retrying transient failures up to
    /// `max_retries` times, counting each. The error names `url` and
    /// `offset`.
    async fn retrying<T, F, Fut>(
        &self,
        url: &str,
        offset: Option<u64>,
        mut f: F,
    ) -> Result<T>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = object_store::Result<T>>,
    {
        let mut delay = self.opts.retry_delay;
        let mut attempt = 0;
        loop {
            self.stats.requests.fetch_add(1, Ordering::Relaxed);
            match f().await {
                Ok(v) => return Ok(v),
                Err(e)
                    if is_transient(&e) && attempt < self.opts.max_retries =>
                {
                    attempt += 1;
                    self.stats.retries.fetch_add(1, Ordering::Relaxed);
                    tokio::time::sleep(delay).await;
                    delay = delay.saturating_mul(2);
                }
                Err(e) => {
                    // A missing object is the store's answer (a sidecar
                    // index looked for, say), not a failure.
                    if !matches!(e, object_store::Error::NotFound { .. }) {
                        self.stats.failures.fetch_add(1, Ordering::Relaxed);
                    }
                    return Err(store_error(url, offset, attempt, e));
                }
            }
        }
    }
}

impl FileSystem for ObjectStoreFs {
    fn open(&self, path: &str) -> Result<Box<dyn Read + Send>> {
        self.open_at(path, 0)
    }

    fn open_at(&self, url: &str, offset: u64) -> Result<Box<dyn Read + Send>> {
        Ok(Box::new(self.reader(url, offset)?))
    }

    /// The chunks of the ranged GETs as they arrive, without a copy.
    fn open_chunks_at(
        &self,
        url: &str,
        offset: u64,
    ) -> Result<Option<Box<dyn ChunkRead>>> {
        Ok(Some(Box::new(self.reader(url, offset)?)))
    }

    fn size(&self, url: &str) -> Result<u64> {
        self.head(url).map(|m| m.size)
    }

    /// A handle that serves each read with one ranged GET (retried as
    /// every request is, pinned to the version opened); opening it sends
    /// one HEAD for the size and the version.
    fn open_read_at(&self, url: &str) -> Result<Option<Arc<dyn ReadAt>>> {
        let meta = self.head(url)?;
        let target = self.inner.target(url)?;
        Ok(Some(Arc::new(ObjectReadAt {
            inner: Arc::clone(&self.inner),
            _runtime: Arc::clone(&self.runtime),
            url: url.to_owned(),
            target,
            size: meta.size,
            pin: Pin::of(&meta),
        })))
    }

    fn glob(&self, pattern: &str) -> Result<Vec<String>> {
        let Some(first) = pattern.find(['*', '?', '[']) else {
            // No wildcard: the URL itself, if it names an object.
            self.size(pattern)?;
            return Ok(vec![pattern.to_owned()]);
        };
        let matcher = glob::Pattern::new(pattern).map_err(|e| {
            Error::invalid_argument(format!("bad glob pattern: {e}"))
                .with_file(pattern)
        })?;
        // List under the literal prefix up to the last '/' before the
        // first wildcard, then match every full URL against the pattern.
        let base_end = pattern[..first].rfind('/').unwrap_or(0);
        let base = &pattern[..base_end];
        let t = self.inner.target(base)?;
        // The listed keys are decoded paths: the root is what precedes
        // the decoded path in the pattern as written. A path written
        // with percent escapes has no such root (and would be cut inside
        // a character).
        let root = base
            .strip_suffix(t.path.as_ref())
            .ok_or_else(|| {
                Error::invalid_argument(
                    "a pattern's directory must be written as the objects \
                     are named, without percent escapes",
                )
                .with_file(pattern)
            })?
            .trim_end_matches('/')
            .to_owned();
        let prefix = if t.path.as_ref().is_empty() {
            None
        } else {
            Some(t.path.clone())
        };
        let inner = Arc::clone(&self.inner);
        let listed =
            self.inner.rt.block_on(inner.retrying(pattern, None, || {
                let store = Arc::clone(&t.store);
                let prefix = prefix.clone();
                async move {
                    store
                        .list(prefix.as_ref())
                        .map_ok(|m| m.location.to_string())
                        .try_collect::<Vec<String>>()
                        .await
                }
            }))?;
        let opts = glob::MatchOptions {
            case_sensitive: true,
            require_literal_separator: true,
            // Hidden objects (sidecar indexes) stay out, as on local disk.
            require_literal_leading_dot: true,
        };
        let mut out: Vec<String> = listed
            .into_iter()
            .map(|key| format!("{root}/{key}"))
            .filter(|u| matcher.matches_with(u, opts))
            .collect();
        if out.is_empty() {
            return Err(Error::not_found(format!(
                "no objects match the pattern {pattern}"
            ))
            .with_file(pattern));
        }
        out.sort();
        Ok(out)
    }
}

/// The file system that takes both paths and URLs: `s3://`, `gs://`,
/// `az://`, `http://` and `https://` go to an [`ObjectStoreFs`] (started
/// on first use), `file://` URLs and plain paths to [`LocalFs`].
///
/// ```
/// use feedstock::io::fs::{FileSystem};
/// use feedstock::io::store::AnyFs;
///
/// let fs = AnyFs::new();
/// assert_eq!(AnyFs::is_url("s3://bucket/data/train-0.tfrecord"), true);
/// assert_eq!(AnyFs::is_url("data/train-0.tfrecord"), false);
/// // Local paths never start the store runtime.
/// assert!(fs.glob("no/such/dir/*.csv").is_err());
/// ```
#[derive(Default)]
pub struct AnyFs {
    opts: StoreOptions,
    store: std::sync::OnceLock<std::result::Result<ObjectStoreFs, Error>>,
}

impl fmt::Debug for AnyFs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AnyFs")
            .field("store", &self.store.get().and_then(|s| s.as_ref().ok()))
            .finish()
    }
}

impl AnyFs {
    /// Paths and URLs, with the default [`StoreOptions`].
    pub fn new() -> AnyFs {
        AnyFs::default()
    }

    /// Paths and URLs, the stores configured by `opts`.
    pub fn with_options(opts: StoreOptions) -> AnyFs {
        AnyFs {
            opts,
            store: std::sync::OnceLock::new(),
        }
    }

    /// Paths, with a store that fails with `e` when first used.
    fn failed(e: Error) -> AnyFs {
        let store = std::sync::OnceLock::new();
        let _ = store.set(Err(e));
        AnyFs {
            opts: StoreOptions::new(),
            store,
        }
    }

    /// Whether `path` is a URL of a store (not a local path or `file://`).
    pub fn is_url(path: &str) -> bool {
        [
            "s3://", "s3a://", "gs://", "az://", "abfs://", "abfss://",
            "adl://", "azure://", "http://", "https://",
        ]
        .iter()
        // Bytes, not `str` slices: the scheme's length may fall inside a
        // character of the path (`données/x`).
        .any(|s| {
            path.as_bytes()
                .get(..s.len())
                .is_some_and(|p| p.eq_ignore_ascii_case(s.as_bytes()))
        })
    }

    /// The object store, started on first use.
    ///
    /// # Errors
    ///
    /// As [`ObjectStoreFs::with_options`].
    pub fn store(&self) -> Result<&ObjectStoreFs> {
        self.store
            .get_or_init(|| ObjectStoreFs::with_options(self.opts.clone()))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Creates `url` for writing on its store; see [`ObjectWriter`].
    ///
    /// # Errors
    ///
    /// As [`ObjectStoreFs::create`]; [`Kind::InvalidArgument`] if `url` is
    /// not a store URL.
    pub fn create(&self, url: &str) -> Result<ObjectWriter> {
        if !AnyFs::is_url(url) {
            return Err(Error::invalid_argument("not an object-store URL")
                .with_file(url));
        }
        self.store()?.create(url)
    }
}

/// The process's one [`AnyFs`], with [`StoreOptions::from_env`] (the defaults unless the environment tunes them), behind
/// [`default_fs`](super::fs::default_fs) and
/// [`OutputOptions`](super::fs::OutputOptions): one runtime, one client per bucket.
/// Its [`store`](AnyFs::store)'s [`stats`](ObjectStoreFs::stats) count the
/// requests, bytes and retries of every pipeline that uses the defaults.
pub fn shared_fs() -> Arc<AnyFs> {
    static FS: std::sync::OnceLock<Arc<AnyFs>> = std::sync::OnceLock::new();
    Arc::clone(FS.get_or_init(|| {
        // A bad setting is reported when the store is first used.
        Arc::new(match StoreOptions::from_env() {
            Ok(opts) => AnyFs::with_options(opts),
            Err(e) => AnyFs::failed(e),
        })
    }))
}

/// `file:///a/b` as the local path `/a/b`; anything else unchanged.
pub(crate) fn local_path(path: &str) -> std::borrow::Cow<'_, str> {
    match path.strip_prefix("file://") {
        Some(rest) => {
            match Url::parse(path).ok().and_then(|u| u.to_file_path().ok()) {
                Some(p) => {
                    std::borrow::Cow::Owned(p.to_string_lossy().into_owned())
                }
                None => std::borrow::Cow::Borrowed(rest),
            }
        }
        None => std::borrow::Cow::Borrowed(path),
    }
}

impl FileSystem for AnyFs {
    fn open(&self, path: &str) -> Result<Box<dyn Read + Send>> {
        if AnyFs::is_url(path) {
            return self.store()?.open(path);
        }
        let local = local_path(path);
        LocalFs.open(&local).map_err(|e| as_given(e, &local, path))
    }

    fn open_at(
        &self,
        path: &str,
        offset: u64,
    ) -> Result<Box<dyn Read + Send>> {
        if AnyFs::is_url(path) {
            return self.store()?.open_at(path, offset);
        }
        let local = local_path(path);
        LocalFs
            .open_at(&local, offset)
            .map_err(|e| as_given(e, &local, path))
    }

    fn open_chunks_at(
        &self,
        path: &str,
        offset: u64,
    ) -> Result<Option<Box<dyn ChunkRead>>> {
        if AnyFs::is_url(path) {
            return self.store()?.open_chunks_at(path, offset);
        }
        Ok(None)
    }

    fn size(&self, path: &str) -> Result<u64> {
        if AnyFs::is_url(path) {
            return self.store()?.size(path);
        }
        let local = local_path(path);
        LocalFs.size(&local).map_err(|e| as_given(e, &local, path))
    }

    fn open_read_at(&self, path: &str) -> Result<Option<Arc<dyn ReadAt>>> {
        if AnyFs::is_url(path) {
            return self.store()?.open_read_at(path);
        }
        let local = local_path(path);
        LocalFs::read_at_named(&local, path)
            .map_err(|e| as_given(e, &local, path))
    }

    fn is_stream(&self, path: &str) -> Result<bool> {
        if AnyFs::is_url(path) {
            return self.store()?.is_stream(path);
        }
        let local = local_path(path);
        LocalFs
            .is_stream(&local)
            .map_err(|e| as_given(e, &local, path))
    }

    /// Local files as [`LocalFs`] says; never an object, which the store
    /// already fetches ahead on its own runtime.
    fn reads_ahead(&self, path: &str) -> bool {
        !AnyFs::is_url(path) && LocalFs.reads_ahead(&local_path(path))
    }

    fn glob(&self, pattern: &str) -> Result<Vec<String>> {
        if AnyFs::is_url(pattern) {
            return self.store()?.glob(pattern);
        }
        if pattern.starts_with("file://") {
            let local = local_path(pattern);
            let found = LocalFs.glob(&local).map_err(|e| {
                if e.kind() == Kind::NotFound {
                    // Quote the pattern as given, not its local form.
                    Error::not_found(format!(
                        "no files match the pattern {pattern}"
                    ))
                    .with_file(pattern)
                } else {
                    as_given(e, &local, pattern)
                }
            })?;
            return Ok(found
                .into_iter()
                .map(|p| format!("file://{p}"))
                .collect());
        }
        LocalFs.glob(pattern)
    }
}

/// An error of the local file system about `local`, the local form of
/// the `given` name (a `file://` URL, or the same path), renamed to name
/// what the caller gave: `given` itself, or another local file (a match
/// of a glob) as a `file://` URL.
fn as_given(e: Error, local: &str, given: &str) -> Error {
    if local == given {
        return e.with_file(given);
    }
    e.map_file(|f| {
        if f == local {
            given.to_owned()
        } else {
            format!("file://{f}")
        }
    })
    .with_file(given)
}
