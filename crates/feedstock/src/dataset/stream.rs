//! A record stream that can stop at any moment and resume exactly: the
//! records after a [`Checkpoint`] are those an uninterrupted run would
//! have delivered. It is the [`Dataset`](crate::dataset::Dataset) engine
//! handing out TFRecord records undecoded, with their positions; to
//! decode, shuffle and batch, use a `Dataset`.
//!
//! # Brief overview
//!
//! - [`RecordStream::builder`] takes TFRecord files (plain, gzip or zlib)
//!   and the settings: epochs, seed, [`Order`] (in order, through a
//!   shuffle buffer, or a global shuffle), [`Shard`], reader threads and
//!   [`deterministic`](RecordStreamBuilder::deterministic).
//! - [`RecordStream::next_record`] (or the [`Iterator`]) yields
//!   [`StreamRecord`]s; [`RecordStream::next_batch`] takes several.
//! - [`RecordStream::checkpoint`] returns a small [`Checkpoint`], at any
//!   point between two calls: positions, never payloads.
//!   [`Checkpoint::to_bytes`] is its serialized form, sealed with a
//!   format version and a checksum ([`crate::checkpoint`]).
//! - [`RecordStreamBuilder::restore`] builds a fresh stream (in a new
//!   process, say) that continues where the checkpoint was taken, after
//!   checking every field of the checkpoint against that stream.
//!
//! ```
//! use feedstock::input::stream::{Checkpoint, Order, RecordStream};
//! use feedstock::io::tfrecord::Writer;
//!
//! # let dir = tempfile::tempdir()?;
//! # let path = dir.path().join("data.tfrecord");
//! # let path = path.to_str().unwrap().to_owned();
//! # let mut w = Writer::new(std::fs::File::create(&path)?);
//! # for i in 0..50 { w.write_record(format!("{i}").as_bytes())?; }
//! # w.finish()?;
//! let mut builder = RecordStream::builder([path]);
//! builder.num_epochs(2).seed(7).order(Order::Buffer(16));
//!
//! let all: Vec<_> = builder.build()?.map(|r| r.unwrap().value).collect();
//! assert_eq!(all.len(), 100);
//!
//! // Stop after 30 records, keep only the checkpoint's bytes ...
//! let mut stream = builder.build()?;
//! let mut seen: Vec<_> = (0..30)
//!     .map(|_| stream.next_record().unwrap().unwrap().value)
//!     .collect();
//! let saved = stream.checkpoint().to_bytes();
//! drop(stream);
//!
//! // ... and continue in a fresh stream: the same records, in order.
//! let checkpoint = Checkpoint::from_bytes(&saved)?;
//! let rest = builder.restore(checkpoint).build()?;
//! seen.extend(rest.map(|r| r.unwrap().value));
//! assert_eq!(seen, all);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # How it works
//!
//! Every file is indexed first ([`RecordIndex::open`](crate::io::index::RecordIndex::open): its sidecar
//! ([`sidecar_path`](crate::io::index::sidecar_path)), checked, or one
//! verifying scan), so the stream knows every
//! record's position. The order of each epoch is then a pure function of
//! the record counts, the [`Order`], the seed, the epoch and the
//! [`Shard`]; nothing about it depends on what was read or when. That
//! order is cut into blocks of [`block_size`](RecordStreamBuilder::block_size)
//! records, which the reader threads read in parallel (each block in
//! ascending offset order, one forward pass per file). The stream takes
//! the blocks in order and hands their records out, directly or through
//! the shuffle buffer, whose random choices come from a seeded generator.
//!
//! A checkpoint therefore needs only: which blocks were taken, the
//! positions (file, record number, epoch) of the records taken but not yet
//! handed out (a part of one block, and the shuffle buffer), and the
//! generator's position. Restoring reads those records again by random
//! access and carries on. Blocks that were read ahead but not taken are
//! simply read again.
//!
//! # Determinism
//!
//! By default ([`deterministic(true)`](RecordStreamBuilder::deterministic))
//! the records come out in an order that depends only on the files, the
//! settings and the seed: not on thread timing, the number of threads or
//! the block size. Then a restored stream continues in exactly the order
//! the uninterrupted one would have. With `deterministic(false)` the
//! stream takes whichever block is read first (a slow block does not hold
//! up the others); every epoch still delivers the same records (the same
//! multiset), and a restored stream delivers exactly the records the
//! uninterrupted one had still to deliver, in some order.
//!
//! # The queue pipeline
//!
//! The TensorFlow-style pipeline of queues and queue runners
//! ([`string_input_producer`](crate::input::string_input_producer),
//! [`shuffle_batch`](crate::input::shuffle_batch)) cannot be checkpointed
//! exactly: records in flight between its threads and queues are not
//! tracked by position, and its shuffle depends on which thread enqueues
//! first. Its producers and readers can save their own positions
//! ([`ProducerState`](crate::input::ProducerState),
//! [`Reader::serialize_state`](crate::reader::Reader::serialize_state)), as
//! TensorFlow's can, which resumes near the stop point but not exactly.
//! Use this stream where exact resume matters.
//!
//! # Shuffling
//!
//! - [`Order::Sequential`]: the files in the order given, each read front
//!   to back.
//! - [`Order::Buffer`]: each epoch the files are taken in an order drawn
//!   from `(seed, epoch)` (as `string_input_producer(shuffle=True)` does)
//!   and read front to back into a shuffle buffer of `n` records, from
//!   which each record handed out is drawn at random. The buffer spans
//!   epoch boundaries, as a `shuffle_batch` queue does. I/O is
//!   sequential; mixing is only as wide as the buffer.
//! - [`Order::Global`]: each epoch is a permutation of every record of
//!   every file, drawn from `(seed, epoch)`. Each block of the
//!   permutation is read sorted by offset, with positioned reads
//!   ([`FileSystem::open_read_at`]: `pread` locally, ranged GETs on an
//!   object store) through one handle per file kept for the stream's
//!   life (at most [`max_open_files`](RecordStreamBuilder::max_open_files)),
//!   nearby records merged into one read, and handed out in permutation
//!   order: mixing is complete and no buffer is needed, at the cost of
//!   scattered reads (about 0.5 to 1 times the buffer shuffle's rate on
//!   page-cached MNIST-sized records: see `feedstock bench --stream`).
//!   A file system without positioned reads is read forward, reopened
//!   at large gaps. Over gzip or zlib files every block inflates each
//!   file it touches from its start: correct, but slow for large files.
//!
//! With a [`Shard`] `(i, n)`, host `i` takes places `i·k .. (i+1)·k` of
//! each epoch's order, where `k` is the total divided by `n` (rounded
//! down with [`Remainder::Drop`], up with [`Remainder::Pad`], whose
//! missing places are padding records): every host gets the same number
//! of records, the hosts' parts are disjoint and, before the remainder
//! policy, cover the epoch.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;

use super::decode::Column;
pub use super::engine::{
    Canceller as StreamCanceller, Order, DEFAULT_BLOCK_SIZE,
};
use super::engine::{Config, Engine, Row};
use super::order::PAD;
use super::source::TfRecordSource;
pub use super::source::DEFAULT_MAX_OPEN_FILES;
pub use super::{Checkpoint, FORMAT_VERSION};
use crate::error::{Error, Result};
use crate::input::shard::{Remainder, Shard};
use crate::io::compression::Compression;
use crate::io::fs::{default_fs, FileSystem};
use crate::io::tfrecord::Position;

/// One record handed out by a [`RecordStream`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamRecord {
    /// The record's bytes; empty for a padding record.
    pub value: Bytes,
    /// The file it came from; `None` for a padding record
    /// ([`Remainder::Pad`]).
    pub file: Option<Arc<str>>,
    /// Its position in the file (offset in the decompressed stream, and
    /// record number).
    pub position: Position,
    /// The epoch (0-based) it belongs to.
    pub epoch: u64,
}

impl StreamRecord {
    /// True for a padding record added by [`Remainder::Pad`].
    pub fn is_pad(&self) -> bool {
        self.file.is_none()
    }

    /// The record's key as the readers spell it, `FILE:N`, or `<pad>`.
    pub fn key(&self) -> String {
        match &self.file {
            Some(f) => format!("{f}:{}", self.position.index),
            None => crate::reader::PAD_KEY_PREFIX.to_owned(),
        }
    }
}

/// Configures a [`RecordStream`]; not consumed by
/// [`build`](Self::build), so one builder can build the same stream
/// again (to restore it, say).
#[derive(Clone)]
pub struct RecordStreamBuilder {
    /// The files, in order.
    files: Vec<String>,
    /// Where they are read from.
    fs: Arc<dyn FileSystem>,
    /// Their compression; `None`: from each file's extension.
    compression: Option<Compression>,
    /// Epochs; `None`: forever.
    num_epochs: Option<u64>,
    /// The seed of every random choice.
    seed: u64,
    /// The shuffle.
    order: Order,
    /// This host's part.
    shard: Shard,
    /// What to do with an uneven split.
    remainder: Remainder,
    /// Reader threads.
    threads: usize,
    /// Whether the order may depend on thread timing.
    deterministic: bool,
    /// Records per block.
    block_size: usize,
    /// Files kept open for positioned reads at most.
    max_open_files: usize,
    /// Where to continue from.
    restore: Option<Checkpoint>,
}

impl fmt::Debug for RecordStreamBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecordStreamBuilder")
            .field("files", &self.files.len())
            .field("num_epochs", &self.num_epochs)
            .field("seed", &self.seed)
            .field("order", &self.order)
            .field("shard", &self.shard)
            .field("remainder", &self.remainder)
            .field("threads", &self.threads)
            .field("deterministic", &self.deterministic)
            .field("block_size", &self.block_size)
            .field("max_open_files", &self.max_open_files)
            .field("restore", &self.restore.is_some())
            .finish_non_exhaustive()
    }
}

impl RecordStreamBuilder {
    /// Reads through `fs` instead of [`default_fs`].
    pub fn file_system(&mut self, fs: Arc<dyn FileSystem>) -> &mut Self {
        self.fs = fs;
        self
    }

    /// Sets every file's compression (default: from each extension).
    pub fn compression(&mut self, c: Compression) -> &mut Self {
        self.compression = Some(c);
        self
    }

    /// Passes over the files (default: 1). See also
    /// [`forever`](Self::forever).
    pub fn num_epochs(&mut self, epochs: u64) -> &mut Self {
        self.num_epochs = Some(epochs);
        self
    }

    /// Passes over the files without end.
    pub fn forever(&mut self) -> &mut Self {
        self.num_epochs = None;
        self
    }

    /// The seed of every random choice (default 0); the same on every
    /// host of a sharded job.
    pub fn seed(&mut self, seed: u64) -> &mut Self {
        self.seed = seed;
        self
    }

    /// The order (default [`Order::Sequential`]).
    pub fn order(&mut self, order: Order) -> &mut Self {
        self.order = order;
        self
    }

    /// This host's part of each epoch (default: everything).
    pub fn shard(&mut self, shard: Shard) -> &mut Self {
        self.shard = shard;
        self
    }

    /// The remainder policy of an uneven split (default
    /// [`Remainder::Drop`]).
    pub fn remainder(&mut self, remainder: Remainder) -> &mut Self {
        self.remainder = remainder;
        self
    }

    /// Reader threads (default 1; 0 is taken as 1).
    pub fn threads(&mut self, threads: usize) -> &mut Self {
        self.threads = threads.max(1);
        self
    }

    /// Whether the order must be a function of the files, settings and
    /// seed only (default true; see the [module docs](self#determinism)).
    pub fn deterministic(&mut self, deterministic: bool) -> &mut Self {
        self.deterministic = deterministic;
        self
    }

    /// Records per block (default [`DEFAULT_BLOCK_SIZE`]; 0 is taken as
    /// 1). A checkpoint restores only into a stream of the same block
    /// size.
    pub fn block_size(&mut self, records: usize) -> &mut Self {
        self.block_size = records.max(1);
        self
    }

    /// Files kept open at most for positioned reads (default
    /// [`DEFAULT_MAX_OPEN_FILES`]; 0 is taken as 1). Each uncompressed
    /// file is opened on its first read and kept open; past this many,
    /// the least recently read is closed, and opened again when needed.
    /// It does not change the order, so a checkpoint restores into a
    /// stream with another setting.
    pub fn max_open_files(&mut self, files: usize) -> &mut Self {
        self.max_open_files = files.max(1);
        self
    }

    /// Makes [`build`](Self::build) continue from `checkpoint`, taken
    /// from a stream built with the same files (same contents, wherever
    /// they now are) and settings; the thread count and determinism may
    /// differ.
    pub fn restore(&mut self, checkpoint: Checkpoint) -> &mut Self {
        self.restore = Some(checkpoint);
        self
    }

    /// Indexes the files, restores the checkpoint if one was given, and
    /// starts the reader threads.
    ///
    /// # Errors
    ///
    /// [`InvalidArgument`](crate::Kind::InvalidArgument) for no files, or
    /// a checkpoint taken with other files or settings, or one whose
    /// fields do not fit this stream (blocks, epochs, records, counts);
    /// those of [`RecordIndex::open`](crate::io::index::RecordIndex::open) for each file (a stale sidecar
    /// among them);
    /// those of re-reading the checkpoint's pending records;
    /// [`ResourceExhausted`](crate::Kind::ResourceExhausted) if a thread
    /// cannot be started.
    pub fn build(&self) -> Result<RecordStream> {
        if self.files.is_empty() {
            return Err(Error::invalid_argument("a stream needs files"));
        }
        let source = TfRecordSource::open(
            Arc::clone(&self.fs),
            &self.files,
            self.compression,
            self.threads,
            self.max_open_files,
        )?;
        let cfg = Config {
            source: Arc::new(source),
            decode: None,
            num_epochs: self.num_epochs,
            seed: self.seed,
            order: self.order,
            shard: self.shard,
            remainder: self.remainder,
            threads: self.threads,
            deterministic: self.deterministic,
            block_size: self.block_size,
            elastic: false,
            extra: 0,
        };
        let engine = Engine::start(&cfg, self.restore.as_ref())?;
        let names = engine.source().names().to_vec().into();
        Ok(RecordStream { engine, names })
    }
}

/// Records from TFRecord files, in an order fixed by the seed, with a
/// [`checkpoint`](RecordStream::checkpoint) at any moment (see the
/// [module docs](self)).
///
/// Dropping the stream stops and joins its reader threads.
pub struct RecordStream {
    engine: Engine,
    names: Arc<[Arc<str>]>,
}

impl fmt::Debug for RecordStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecordStream")
            .field("engine", &self.engine)
            .finish_non_exhaustive()
    }
}

impl RecordStream {
    /// A builder over `files` with the defaults: one epoch, seed 0,
    /// [`Order::Sequential`], the whole data set, one reader thread,
    /// deterministic, blocks of [`DEFAULT_BLOCK_SIZE`].
    pub fn builder<I, S>(files: I) -> RecordStreamBuilder
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        RecordStreamBuilder {
            files: files.into_iter().map(Into::into).collect(),
            fs: default_fs(),
            compression: None,
            num_epochs: Some(1),
            seed: 0,
            order: Order::Sequential,
            shard: Shard::all(),
            remainder: Remainder::Drop,
            threads: 1,
            deterministic: true,
            block_size: DEFAULT_BLOCK_SIZE,
            max_open_files: DEFAULT_MAX_OPEN_FILES,
            restore: None,
        }
    }

    /// The next record, or `None` once every epoch is delivered.
    ///
    /// # Errors
    ///
    /// Those of reading a record (naming the file and offset);
    /// [`Cancelled`](crate::Kind::Cancelled) after
    /// [`StreamCanceller::cancel`]. After an error the stream returns it
    /// again on every call.
    pub fn next_record(&mut self) -> Result<Option<StreamRecord>> {
        self.next_deadline(None)
    }

    /// As [`next_record`](Self::next_record), waiting at most `timeout`
    /// for a reader thread.
    ///
    /// # Errors
    ///
    /// As [`next_record`](Self::next_record), and
    /// [`DeadlineExceeded`](crate::Kind::DeadlineExceeded) if the timeout
    /// passes first (the stream is then unchanged and can be asked
    /// again).
    pub fn next_timeout(
        &mut self,
        timeout: Duration,
    ) -> Result<Option<StreamRecord>> {
        self.next_deadline(Instant::now().checked_add(timeout))
    }

    /// Up to `n` records: fewer only at the end of the stream, none once
    /// it has ended.
    ///
    /// # Errors
    ///
    /// As [`next_record`](Self::next_record). The records taken before an
    /// error are not lost: a checkpoint taken after the error counts
    /// them as handed out, so take checkpoints between successful calls.
    pub fn next_batch(&mut self, n: usize) -> Result<Vec<StreamRecord>> {
        let rows = self.engine.next_rows(n, None)?;
        rows.iter().map(|r| self.record(r)).collect()
    }

    /// A handle that can cancel this stream from another thread.
    pub fn canceller(&self) -> StreamCanceller {
        self.engine.canceller()
    }

    /// Records handed out so far, over every run the checkpoints chain.
    pub fn delivered(&self) -> u64 {
        self.engine.delivered()
    }

    /// Where the stream is: enough to continue exactly (see
    /// [`RecordStreamBuilder::restore`]).
    pub fn checkpoint(&self) -> Checkpoint {
        self.engine.checkpoint()
    }

    fn next_deadline(
        &mut self,
        deadline: Option<Instant>,
    ) -> Result<Option<StreamRecord>> {
        let rows = self.engine.next_rows(1, deadline)?;
        rows.first().map(|r| self.record(r)).transpose()
    }

    fn record(&self, row: &Row) -> Result<StreamRecord> {
        let m = *row.meta();
        let pad = m.r.file == PAD;
        let data = if pad {
            Bytes::new()
        } else {
            match &row.block.columns[0] {
                Column::Stacked(v) => {
                    v.dense()?.as_slice::<Bytes>()?[row.row].clone()
                }
                Column::Rows(_) => {
                    return Err(Error::internal("records kept as rows"))
                }
            }
        };
        Ok(StreamRecord {
            value: data,
            file: (!pad).then(|| Arc::clone(&self.names[m.r.file as usize])),
            position: Position {
                offset: if pad { 0 } else { m.offset },
                index: m.r.ordinal,
            },
            epoch: m.epoch,
        })
    }
}

impl Iterator for RecordStream {
    type Item = Result<StreamRecord>;

    /// The next record; after an error has been yielded once, `None`.
    fn next(&mut self) -> Option<Result<StreamRecord>> {
        if self.engine.failed() {
            return None;
        }
        self.next_record().transpose()
    }
}
