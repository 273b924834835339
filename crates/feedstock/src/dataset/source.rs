//! Where a [`Dataset`](super::Dataset)'s records come from: a [`Source`]
//! addresses every record by (file, record number), so that any record
//! can be read again by position — what makes a global shuffle, equal
//! shards and an exact resume possible.
//!
//! Built in: TFRecord files ([`TfRecordSource`], through the record
//! index), text lines, fixed-length records, whole files and arrays in
//! memory. A user's own format implements [`Source`].

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::error::{Error, Result};
use crate::io::compression::Compression;
use crate::io::fs::{FileSystem, ReadAt};
use crate::io::index::RecordIndex;
use crate::tensor::Value;

pub use crate::io::tfrecord::Record;

/// What [`Source::read`] gives: records still to decode, or rows that
/// are already tensors (arrays in memory).
#[derive(Debug, Clone)]
pub enum Fetched {
    /// One record per ordinal asked for, in that order: its bytes, its
    /// offset in the (decompressed) file and its number.
    Records(Vec<Record>),
    /// One value per component, each with a leading axis of one row per
    /// ordinal asked for, in that order.
    Rows(Vec<Value>),
}

impl Fetched {
    /// The number of records or rows.
    pub fn len(&self) -> usize {
        match self {
            Fetched::Records(r) => r.len(),
            Fetched::Rows(v) => v.first().map_or(0, rows_of),
        }
    }

    /// True when it holds nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Records addressed by file number and record number: the first stage
/// of a [`Dataset`](super::Dataset).
///
/// A source is opened once, before the pipeline starts (indexing its
/// files if it must), and then only read: [`read`](Self::read) is called
/// from several reader threads at once, for any records in any order,
/// and must give the same bytes for the same position every time.
pub trait Source: Send + Sync + fmt::Debug {
    /// The files' names as given (for record keys and errors), in order.
    fn names(&self) -> &[Arc<str>];

    /// The number of records of each file, in the same order.
    fn counts(&self) -> &[u64];

    /// Feeds into `h` everything the records depend on: the files'
    /// contents (a fingerprint, not the names, so that data may move)
    /// and the settings that cut them into records. A checkpoint is
    /// restored only into a pipeline whose source hashes the same.
    fn fingerprint(&self, h: &mut Fnv);

    /// Reads records `ordinals` (each below `counts()[file]`) of file
    /// `file`, in the order asked.
    ///
    /// # Errors
    ///
    /// Those of reading, naming the file and the record.
    fn read(&self, file: u32, ordinals: &[u64]) -> Result<Fetched>;

    /// The key of record `record` of file `file`, as the classic readers
    /// spell it (`FILE:N`). Built only for errors and when asked.
    fn key(&self, file: u32, record: &Record) -> String {
        format!("{}:{}", self.names()[file as usize], record.position.index)
    }
}

/// FNV-1a over 64-bit words, for [`Source::fingerprint`] and the
/// settings a checkpoint belongs to. Written here because std's hasher
/// is not stable across releases and a checkpoint must outlive a
/// rebuild.
#[derive(Debug, Clone, Copy)]
pub struct Fnv(pub(crate) u64);

impl Default for Fnv {
    fn default() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    /// Adds a word.
    pub fn u64(&mut self, v: u64) {
        for b in v.to_le_bytes() {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    /// Adds bytes (their length first, so that two strings cannot run
    /// together).
    pub fn bytes(&mut self, v: &[u8]) {
        self.u64(v.len() as u64);
        for &b in v {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    /// The hash.
    pub fn finish(&self) -> u64 {
        self.0
    }
}

/// Runs `open` on every file, spreading the files over at most `threads`
/// threads (indexing is a scan of each file), and returns the results in
/// the files' order.
pub(crate) fn open_all<T: Send>(
    files: &[String],
    threads: usize,
    open: impl Fn(&str) -> Result<T> + Sync,
) -> Result<Vec<T>> {
    let n = files.len();
    let per = n.div_ceil(threads.min(n).max(1)).max(1);
    let open = &open;
    std::thread::scope(|s| {
        // A thread that cannot start is an error, not a panic (as
        // `Scope::spawn` would make it): the threads started are joined
        // when the scope ends.
        let parts: Vec<_> = files
            .chunks(per)
            .map(|chunk| {
                std::thread::Builder::new()
                    .name("feedstock-index".into())
                    .spawn_scoped(s, move || {
                        chunk
                            .iter()
                            .map(|f| open(f))
                            .collect::<Result<Vec<_>>>()
                    })
                    .map_err(|e| {
                        let message =
                            format!("cannot start an indexing thread: {e}");
                        Error::io(e).with_message(message)
                    })
            })
            .collect::<Result<_>>()?;
        let mut out = Vec::with_capacity(n);
        for p in parts {
            out.extend(p.join().map_err(|_| {
                Error::internal("a thread indexing files panicked")
            })??);
        }
        Ok(out)
    })
}

/// Positioned-read handles ([`FileSystem::open_read_at`]), one per file,
/// opened on first use and kept, so that a block's scattered records
/// cost one read each (or one per run of nearby records), never an
/// open. At most `max_open` are open at once: past that, the least
/// recently used is closed (its reads in flight finish first).
pub(crate) struct Handles {
    slots: Mutex<HandleSlots>,
    max_open: usize,
}

impl fmt::Debug for Handles {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Handles")
            .field("max_open", &self.max_open)
            .finish_non_exhaustive()
    }
}

#[derive(Default)]
struct HandleSlots {
    /// File number to its handle (`None`: the file system has none) and
    /// the tick of its last use.
    open: HashMap<u32, (Option<Arc<dyn ReadAt>>, u64)>,
    /// Counts uses.
    tick: u64,
}

impl HandleSlots {
    /// The handle kept for `file`, if any, marked as just used.
    fn touch(&mut self, file: u32) -> Option<Option<Arc<dyn ReadAt>>> {
        self.tick += 1;
        let tick = self.tick;
        self.open.get_mut(&file).map(|(h, used)| {
            *used = tick;
            h.clone()
        })
    }
}

impl Handles {
    pub(crate) fn new(max_open: usize) -> Handles {
        Handles {
            slots: Mutex::new(HandleSlots::default()),
            max_open: max_open.max(1),
        }
    }

    /// The handle on file number `file` (at `path`), opening it if it is
    /// not open.
    pub(crate) fn get(
        &self,
        fs: &dyn FileSystem,
        path: &str,
        file: u32,
    ) -> Result<Option<Arc<dyn ReadAt>>> {
        if let Some(h) = self.slots.lock().touch(file) {
            return Ok(h);
        }
        // Opened without the lock (an object store's HEAD takes a round
        // trip); two threads may both open, and one handle is kept.
        let opened = fs.open_read_at(path)?;
        let mut slots = self.slots.lock();
        if let Some(h) = slots.touch(file) {
            return Ok(h);
        }
        if slots.open.len() >= self.max_open {
            let oldest = slots
                .open
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(&f, _)| f);
            if let Some(f) = oldest {
                slots.open.remove(&f);
            }
        }
        let tick = slots.tick;
        slots.open.insert(file, (opened.clone(), tick));
        Ok(opened)
    }
}

/// Files a source keeps open at most by default for positioned reads:
/// well below the usual limit of 1024 descriptors per process.
pub const DEFAULT_MAX_OPEN_FILES: usize = 128;

/// TFRecord files (plain, gzip or zlib), each indexed once
/// ([`RecordIndex::open`]: its sidecar, checked, or one verifying scan).
/// Reads group nearby records into one positioned read; a compressed
/// file is inflated from its start for each block that touches it.
pub struct TfRecordSource {
    fs: Arc<dyn FileSystem>,
    names: Vec<Arc<str>>,
    counts: Vec<u64>,
    indexes: Vec<RecordIndex>,
    handles: Handles,
}

impl fmt::Debug for TfRecordSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TfRecordSource")
            .field("files", &self.names.len())
            .field("records", &self.counts.iter().sum::<u64>())
            .finish_non_exhaustive()
    }
}

impl TfRecordSource {
    /// Indexes `files` (with `threads` threads), each of compression
    /// `compression` (`None`: from its extension).
    ///
    /// # Errors
    ///
    /// Those of [`RecordIndex::open`] for each file.
    pub fn open(
        fs: Arc<dyn FileSystem>,
        files: &[String],
        compression: Option<Compression>,
        threads: usize,
        max_open_files: usize,
    ) -> Result<TfRecordSource> {
        let opening = super::Opening {
            threads,
            corrupt: crate::io::tfrecord::CorruptRecords::Fail,
            skips: crate::io::tfrecord::SkipLog::new(),
        };
        TfRecordSource::open_skipping(
            fs,
            files,
            compression,
            &opening,
            max_open_files,
        )
    }
}

impl TfRecordSource {
    /// As [`open`](Self::open), with `opening`'s threads, building each
    /// file's index around its damaged regions when its corrupt-record
    /// policy skips them (a file with no damage loads or builds its
    /// index as usual).
    ///
    /// # Errors
    ///
    /// As [`open`](Self::open); a damaged file past the budget.
    pub fn open_skipping(
        fs: Arc<dyn FileSystem>,
        files: &[String],
        compression: Option<Compression>,
        opening: &super::Opening,
        max_open_files: usize,
    ) -> Result<TfRecordSource> {
        let indexes = open_all(files, opening.threads, |f| {
            match RecordIndex::open(&*fs, f, compression) {
                Err(e)
                    if e.kind() == crate::Kind::DataLoss
                        && opening.corrupt.skips() =>
                {
                    RecordIndex::build_skipping(
                        &*fs,
                        f,
                        compression,
                        &opening.corrupt,
                        &opening.skips,
                    )
                }
                other => other,
            }
        })?;
        Ok(TfRecordSource {
            names: files.iter().map(|f| Arc::from(f.as_str())).collect(),
            counts: indexes.iter().map(RecordIndex::len).collect(),
            indexes,
            handles: Handles::new(max_open_files),
            fs,
        })
    }
}

impl Source for TfRecordSource {
    fn names(&self) -> &[Arc<str>] {
        &self.names
    }

    fn counts(&self) -> &[u64] {
        &self.counts
    }

    fn fingerprint(&self, h: &mut Fnv) {
        h.bytes(b"tfrecord");
        for ix in &self.indexes {
            let fp = ix.fingerprint();
            h.u64(fp.size);
            h.u64(u64::from(fp.head_crc));
            h.u64(u64::from(fp.tail_crc));
            h.u64(ix.len());
            h.u64(ix.compression() as u64);
        }
    }

    fn read(&self, file: u32, ordinals: &[u64]) -> Result<Fetched> {
        let index = self.indexes.get(file as usize).ok_or_else(|| {
            Error::invalid_argument(format!(
                "file {file} of {}",
                self.indexes.len()
            ))
        })?;
        let handle = match index.compression() {
            Compression::None => {
                self.handles.get(&*self.fs, index.path(), file)?
            }
            _ => None,
        };
        Ok(Fetched::Records(index.read_many_from(
            &*self.fs,
            handle.as_deref(),
            ordinals,
        )?))
    }

    /// `FILE:OFFSET`, as TensorFlow's `TFRecordReader` keys a record.
    fn key(&self, file: u32, record: &Record) -> String {
        format!("{}:{}", self.names[file as usize], record.position.offset)
    }
}

/// Rows of tensors held in memory, one example per row: the preloaded
/// way in. Shared, never copied per epoch; a read gathers the rows
/// asked for.
#[derive(Debug)]
pub struct ArraySource {
    names: Vec<Arc<str>>,
    counts: Vec<u64>,
    columns: Vec<crate::tensor::Tensor>,
}

impl ArraySource {
    /// The rows of `columns`, which must all have the same first
    /// dimension.
    ///
    /// # Errors
    ///
    /// [`InvalidArgument`](crate::Kind::InvalidArgument) for no column, a
    /// scalar, or columns of different lengths.
    pub fn new(columns: Vec<crate::tensor::Tensor>) -> Result<ArraySource> {
        let first = columns.first().ok_or_else(|| {
            Error::invalid_argument("arrays need at least one column")
        })?;
        let rows = *first.dims().first().ok_or_else(|| {
            Error::invalid_argument("array 0 is a scalar: it has no rows")
        })?;
        for (i, c) in columns.iter().enumerate() {
            if c.dims().first() != Some(&rows) {
                return Err(Error::invalid_argument(format!(
                    "array {i} has shape {} but array 0 has {rows} rows",
                    c.shape()
                )));
            }
        }
        Ok(ArraySource {
            names: vec![Arc::from("<arrays>")],
            counts: vec![rows as u64],
            columns,
        })
    }
}

impl Source for ArraySource {
    fn names(&self) -> &[Arc<str>] {
        &self.names
    }

    fn counts(&self) -> &[u64] {
        &self.counts
    }

    fn fingerprint(&self, h: &mut Fnv) {
        // The shapes and dtypes, not the contents: hashing every byte of
        // a large preloaded array at each start would cost a pass over
        // it; the caller restores with the same arrays.
        h.bytes(b"arrays");
        for c in &self.columns {
            h.bytes(c.dtype().name().as_bytes());
            for &d in c.dims() {
                h.u64(d as u64);
            }
        }
    }

    fn read(&self, _file: u32, ordinals: &[u64]) -> Result<Fetched> {
        let rows: Vec<usize> = ordinals.iter().map(|&o| o as usize).collect();
        let cols = self
            .columns
            .iter()
            .map(|c| super::gather::rows(c, &rows).map(Value::Dense))
            .collect::<Result<Vec<_>>>()?;
        Ok(Fetched::Rows(cols))
    }

    fn key(&self, _file: u32, record: &Record) -> String {
        format!("<arrays>:{}", record.position.index)
    }
}

/// The rows of a value: the size of its first axis.
pub(crate) fn rows_of(v: &Value) -> usize {
    let dims = match v {
        Value::Dense(t) => t.dims(),
        Value::Sparse(s) => s.dims(),
    };
    dims.first().copied().unwrap_or(0)
}
