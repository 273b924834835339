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
//! # Writing
//!
//! [`ObjectStoreFs::create`] gives an [`ObjectWriter`]: the object appears
//! whole or not at all. Up to one part it is a single PUT on
//! [`ObjectWriter::commit`]; past that it is a multipart upload completed
//! only by `commit` and aborted when the writer is dropped uncommitted.
//! The PUT, the start of the upload and each part are retried as reads
//! are; the completion is not.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::io::{self, Read, Write};
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::{StreamExt, TryStreamExt};
use object_store::aws::AmazonS3Builder;
use object_store::azure::MicrosoftAzureBuilder;
use object_store::gcp::GoogleCloudStorageBuilder;
use object_store::http::HttpBuilder;
use object_store::multipart::{MultipartStore, PartId};
use object_store::path::Path as ObjPath;
use object_store::{
    MultipartId, ObjectStore, ObjectStoreExt, ObjectStoreScheme, PutPayload,
    RetryConfig,
};
use parking_lot::Mutex;
use url::Url;

use super::fs::{ChunkRead, FileSystem, LocalFs, ReadAt};
use crate::error::{Error, Kind, Result};

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
    /// for a failure that is not transient).
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
        let size = self.size(url)?;
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
            pos: offset,
            cur: Bytes::new(),
            rx: None,
        })
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
                let c = self.build(scheme, &parsed).map_err(|e| {
                    // The builder's message names the missing setting,
                    // never a secret value.
                    Error::invalid_argument(format!(
                        "cannot configure the store: {e}"
                    ))
                    .with_file(url)
                })?;
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

    fn build(
        &self,
        scheme: ObjectStoreScheme,
        url: &Url,
    ) -> std::result::Result<Client, object_store::Error> {
        // Requests are retried here, not inside object_store, so that
        // every retry is counted and resumes at the exact byte.
        let retry = RetryConfig {
            max_retries: 0,
            ..RetryConfig::default()
        };
        // No `with_client_options` here: it would replace the client
        // settings `from_env` read (AWS_ALLOW_HTTP among them).
        let opts = &self.opts.options;
        macro_rules! configure {
            ($builder:expr) => {{
                let mut b = $builder.with_url(url.as_str()).with_retry(retry);
                for (k, v) in opts {
                    if let Ok(key) = k.to_ascii_lowercase().parse() {
                        b = b.with_config(key, v.clone());
                    }
                }
                let store = Arc::new(b.build()?);
                Client {
                    store: Arc::clone(&store) as Arc<dyn ObjectStore>,
                    multipart: Some(store as Arc<dyn MultipartStore>),
                }
            }};
        }
        Ok(match scheme {
            ObjectStoreScheme::AmazonS3 => {
                configure!(AmazonS3Builder::from_env())
            }
            ObjectStoreScheme::GoogleCloudStorage => {
                configure!(GoogleCloudStorageBuilder::from_env())
            }
            ObjectStoreScheme::MicrosoftAzure => {
                configure!(MicrosoftAzureBuilder::from_env())
            }
            ObjectStoreScheme::Http => {
                let base = &url[..url::Position::BeforePath];
                let mut b =
                    HttpBuilder::new().with_url(base).with_retry(retry);
                for (k, v) in opts {
                    if let Ok(key) = k.to_ascii_lowercase().parse() {
                        b = b.with_config(key, v.clone());
                    }
                }
                Client {
                    store: Arc::new(b.build()?),
                    multipart: None,
                }
            }
            other => {
                return Err(object_store::Error::NotSupported {
                    source: format!("the {other:?} scheme is not supported")
                        .into(),
                })
            }
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
                    self.stats.failures.fetch_add(1, Ordering::Relaxed);
                    return Err(store_error(url, offset, attempt, e));
                }
            }
        }
    }

    async fn get_range(
        &self,
        url: &str,
        t: &Target,
        range: Range<u64>,
    ) -> Result<Bytes> {
        let start = range.start;
        let bytes = self
            .retrying(url, Some(start), || {
                let store = Arc::clone(&t.store);
                let path = t.path.clone();
                let range = range.clone();
                async move { store.get_range(&path, range).await }
            })
            .await?;
        self.stats
            .bytes
            .fetch_add(bytes.len() as u64, Ordering::Relaxed);
        Ok(bytes)
    }
}

/// Whether a request that failed with `e` may succeed if sent again.
fn is_transient(e: &object_store::Error) -> bool {
    use object_store::Error as E;
    // Generic covers the transport and server errors (connection refused or
    // reset, timeouts, 5xx); everything else is an answer about the object.
    matches!(e, E::Generic { .. })
}

/// An `object_store` error as ours, naming the URL and offset, and
/// classified: missing is NotFound, denied is PermissionDenied.
fn store_error(
    url: &str,
    offset: Option<u64>,
    retries: u32,
    e: object_store::Error,
) -> Error {
    use object_store::Error as E;
    let kind = match &e {
        E::NotFound { .. } => Kind::NotFound,
        E::PermissionDenied { .. } | E::Unauthenticated { .. } => {
            Kind::PermissionDenied
        }
        E::InvalidPath { .. } => Kind::InvalidArgument,
        E::NotSupported { .. } | E::NotImplemented { .. } => {
            Kind::Unimplemented
        }
        E::AlreadyExists { .. } | E::Precondition { .. } => {
            Kind::FailedPrecondition
        }
        _ => Kind::Unknown,
    };
    let after = if retries > 0 {
        format!(" after {retries} retries")
    } else {
        String::new()
    };
    let err =
        Error::new(kind, format!("object store request failed{after}: {e}"))
            .with_file(url);
    match offset {
        Some(o) => err.with_offset(o),
        None => err,
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
        let t = self.inner.target(url)?;
        let inner = Arc::clone(&self.inner);
        let meta = self.inner.rt.block_on(inner.retrying(url, None, || {
            let store = Arc::clone(&t.store);
            let path = t.path.clone();
            async move { store.head(&path).await }
        }));
        // A bucket lists no directories: a URL ending in '/' or naming a
        // prefix has no object, which HEAD reports as missing.
        meta.map(|m| m.size)
    }

    /// A handle that serves each read with one ranged GET (retried as
    /// every request is); opening it sends one HEAD for the size.
    fn open_read_at(&self, url: &str) -> Result<Option<Arc<dyn ReadAt>>> {
        let size = self.size(url)?;
        let target = self.inner.target(url)?;
        Ok(Some(Arc::new(ObjectReadAt {
            inner: Arc::clone(&self.inner),
            _runtime: Arc::clone(&self.runtime),
            url: url.to_owned(),
            target,
            size,
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

/// One object open for positioned reads: ranged GETs, no read-ahead.
struct ObjectReadAt {
    inner: Arc<Inner>,
    /// Keeps the runtime alive while the handle is kept.
    _runtime: Arc<tokio::runtime::Runtime>,
    url: String,
    target: Target,
    /// The object's size when opened.
    size: u64,
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
            offset..end,
        ))
    }

    /// A request costs milliseconds: gaps up to the chunk size (at most
    /// 1 MiB) are read through rather than asked for separately.
    fn merge_gap(&self) -> u64 {
        (self.inner.opts.chunk_size as u64).min(1 << 20)
    }
}

type Chunk = std::result::Result<Bytes, Error>;

/// The blocking reader of one object: ranged GETs in order, fetched ahead
/// by a task on the store's runtime.
struct ObjectReader {
    inner: Arc<Inner>,
    /// Keeps the runtime alive while the file is open.
    _runtime: Arc<tokio::runtime::Runtime>,
    url: String,
    target: Arc<Target>,
    size: u64,
    /// The offset of the first byte of `cur` (the next byte to return).
    pos: u64,
    /// The rest of the chunk being returned.
    cur: Bytes,
    /// The chunks the read-ahead task sends, in order; `None` until the
    /// first read, and again after an error, so that the next read starts
    /// a fresh stream at `pos`.
    rx: Option<tokio::sync::mpsc::Receiver<Chunk>>,
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
        let url = self.url.clone();
        let (start, size) = (self.pos, self.size);
        self.inner.rt.spawn(async move {
            let ranges = ramped_ranges(start, size, chunk);
            let mut chunks = futures::stream::iter(ranges)
                .map(|r| {
                    let (inner, target, url) = (&inner, &target, &url);
                    async move { inner.get_range(url, target, r).await }
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

/// Our error inside an `io::Error` of the matching kind, so that
/// [`Error::io`] classifies it the same and its message keeps the URL and
/// offset.
fn to_io(e: Error) -> io::Error {
    let kind = match e.kind() {
        Kind::NotFound => io::ErrorKind::NotFound,
        Kind::PermissionDenied => io::ErrorKind::PermissionDenied,
        Kind::DataLoss => io::ErrorKind::UnexpectedEof,
        Kind::DeadlineExceeded => io::ErrorKind::TimedOut,
        _ => io::ErrorKind::Other,
    };
    io::Error::new(kind, e.to_string())
}

/// An object being written: it appears whole on [`commit`](Self::commit),
/// or not at all.
///
/// The first [`part_size`](StoreOptions::part_size) bytes are buffered; an
/// object that fits is sent by a single PUT on commit. A larger one becomes
/// a multipart upload, parts sent as they fill (up to two in flight),
/// completed by `commit`. Dropping the writer without committing aborts the
/// upload, so no partial object is ever visible.
///
/// The PUT, the start of the upload and every part are retried on
/// transient failures as reads are, and counted in
/// [`StoreStats::retries`]; the completion is not (a completion that
/// succeeded but whose answer was lost would fail if sent again).
pub struct ObjectWriter {
    inner: Arc<Inner>,
    /// Keeps the runtime alive until the upload is done.
    _runtime: Arc<tokio::runtime::Runtime>,
    url: String,
    target: Target,
    buf: Vec<u8>,
    upload: Option<Upload>,
    written: u64,
}

/// A multipart upload in progress. object_store's `WriteMultipart`
/// numbers a part when it is sent and cannot send it again, so a part
/// that failed once failed the upload; parts are sent here through the
/// store's `MultipartStore` API, by index, each retried on its own.
struct Upload {
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
                     {} bytes (StoreOptions::part_size) cannot be written",
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
