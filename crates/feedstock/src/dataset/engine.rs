//! A record stream that can stop at any moment and resume exactly: the
//! records after a [`Checkpoint`] are those an uninterrupted run would
//! have delivered.
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
//! let all: Vec<_> = builder.build()?.map(|r| r.unwrap().data).collect();
//! assert_eq!(all.len(), 100);
//!
//! // Stop after 30 records, keep only the checkpoint's bytes ...
//! let mut stream = builder.build()?;
//! let mut seen: Vec<_> = (0..30)
//!     .map(|_| stream.next_record().unwrap().unwrap().data)
//!     .collect();
//! let saved = stream.checkpoint().to_bytes();
//! drop(stream);
//!
//! // ... and continue in a fresh stream: the same records, in order.
//! let checkpoint = Checkpoint::from_bytes(&saved)?;
//! let rest = builder.restore(checkpoint).build()?;
//! seen.extend(rest.map(|r| r.unwrap().data));
//! assert_eq!(seen, all);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # How it works
//!
//! Every file is indexed first ([`RecordIndex::open`]: its sidecar
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

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bytes::Bytes;
use parking_lot::{Condvar, Mutex};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::checkpoint::{self as checkpoint, CheckpointProto, Refs};
use super::checkpoint::{Checkpoint, FORMAT_VERSION};
use super::order::{Layout, Ref, PAD};
use super::source::{Fetched, Fnv, Source, TfRecordSource};
use crate::error::{Error, Result};
use crate::input::shard::{Remainder, Shard};
use crate::io::compression::Compression;
use crate::io::fs::{default_fs, FileSystem};
use crate::io::tfrecord::Position;

/// The order a [`RecordStream`] hands records out in (see the
/// [module docs](self#shuffling)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Order {
    /// The files in the order given, each front to back.
    #[default]
    Sequential,
    /// A shuffle buffer of this many records over the files, read front
    /// to back in an order drawn per epoch.
    Buffer(usize),
    /// A seeded permutation of every record of every file, per epoch.
    Global,
}

/// Records per block by default: the unit the reader threads read and
/// the stream takes.
pub const DEFAULT_BLOCK_SIZE: usize = 256;

pub use super::source::DEFAULT_MAX_OPEN_FILES;

/// Blocks each reader thread may read ahead of the stream.
const AHEAD_PER_THREAD: u64 = 2;

/// One record handed out by a [`RecordStream`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamRecord {
    /// The record's data; empty for a padding record.
    pub data: Bytes,
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
            None => "<pad>".to_owned(),
        }
    }
}

/// A record that was read: its place and data.
#[derive(Debug, Clone)]
pub(crate) struct Item {
    pub(crate) r: Ref,
    pub(crate) epoch: u64,
    offset: u64,
    data: Bytes,
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
    /// those of [`RecordIndex::open`] for each file (a stale sidecar
    /// among them);
    /// those of re-reading the checkpoint's pending records;
    /// [`ResourceExhausted`](crate::Kind::ResourceExhausted) if a thread
    /// cannot be started.
    pub fn build(&self) -> Result<RecordStream> {
        if self.files.is_empty() {
            return Err(Error::invalid_argument("a stream needs files"));
        }
        if self.files.len() >= PAD as usize {
            return Err(Error::invalid_argument("too many files"));
        }
        let source: Arc<dyn Source> = Arc::new(TfRecordSource::open(
            Arc::clone(&self.fs),
            &self.files,
            self.compression,
            self.threads,
            self.max_open_files,
        )?);
        let layout = Layout {
            counts: source.counts().to_vec(),
            total: source.counts().iter().sum(),
            order: self.order,
            seed: self.seed,
            shard: self.shard,
            remainder: self.remainder,
        };
        let per = layout.per_host();
        let bpe = per.div_ceil(self.block_size as u64);
        let end_block = match self.num_epochs {
            Some(e) => e.saturating_mul(bpe),
            None if bpe == 0 => 0,
            None => u64::MAX,
        };
        let settings = self.settings_hash(&*source);
        let names: Arc<[Arc<str>]> =
            self.files.iter().map(|f| Arc::from(f.as_str())).collect();
        let ctx = Arc::new(Context {
            source,
            layout,
            block_size: self.block_size as u64,
            per,
            bpe,
        });
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        rng.set_stream(u64::MAX);
        let mut state = State {
            next_block: 0,
            ahead: BTreeSet::new(),
            next_dispatch: 0,
            results: BTreeMap::new(),
            stop: false,
            cancelled: false,
        };
        let (mut incoming, mut buffer, mut delivered) =
            (VecDeque::new(), Vec::new(), 0);
        if let Some(cp) = &self.restore {
            let p = &cp.proto;
            checkpoint::Stream {
                layout: &ctx.layout,
                names: &names,
                settings,
                block_size: ctx.block_size,
                per,
                bpe,
                end_block,
                num_epochs: self.num_epochs,
            }
            .check(p)?;
            state.next_block = p.next_block;
            state.next_dispatch = p.next_block;
            state.ahead = p.ahead.iter().copied().collect();
            incoming = ctx.fetch_refs(&Refs::refs(&p.incoming))?.into();
            buffer = ctx.fetch_refs(&Refs::refs(&p.buffer))?;
            rng.set_word_pos(
                u128::from(p.rng_word_pos_hi) << 64
                    | u128::from(p.rng_word_pos_lo),
            );
            delivered = p.delivered;
        }
        let shared = Arc::new(Shared {
            state: Mutex::new(state),
            work: Condvar::new(),
            done: Condvar::new(),
            window: self.threads as u64 * AHEAD_PER_THREAD,
            end_block,
        });
        let mut stream = RecordStream {
            shared,
            ctx,
            names,
            workers: Vec::new(),
            order: self.order,
            deterministic: self.deterministic,
            settings,
            incoming,
            buffer,
            rng,
            delivered,
            failed: None,
        };
        for t in 0..self.threads {
            let shared = Arc::clone(&stream.shared);
            let ctx = Arc::clone(&stream.ctx);
            let handle = std::thread::Builder::new()
                .name(format!("feedstock-stream-{t}"))
                .spawn(move || work(&shared, &ctx))
                .map_err(|e| {
                    let message = format!("cannot start a reader thread: {e}");
                    Error::io(e).with_message(message)
                })?;
            stream.workers.push(handle);
        }
        Ok(stream)
    }

    /// A hash of everything a checkpoint depends on: the files' contents
    /// (fingerprints, not names, so data may move) and the settings that
    /// shape the order. FNV-1a, written here because std's hasher is not
    /// stable across releases and a checkpoint must outlive a rebuild.
    fn settings_hash(&self, source: &dyn Source) -> u64 {
        let mut h = Fnv::default();
        h.u64(u64::from(FORMAT_VERSION));
        h.u64(source.counts().len() as u64);
        source.fingerprint(&mut h);
        let (kind, n) = match self.order {
            Order::Sequential => (0, 0),
            Order::Buffer(n) => (1, n as u64),
            Order::Global => (2, 0),
        };
        h.u64(kind);
        h.u64(n);
        h.u64(self.seed);
        h.u64(self.shard.index() as u64);
        h.u64(self.shard.count() as u64);
        h.u64(matches!(self.remainder, Remainder::Pad) as u64);
        h.u64(self.num_epochs.map_or(u64::MAX, |e| e));
        h.u64(self.block_size as u64);
        h.finish()
    }
}

/// What the reader threads share with the stream.
struct Context {
    source: Arc<dyn Source>,
    layout: Layout,
    block_size: u64,
    /// Records per host per epoch.
    per: u64,
    /// Blocks per epoch.
    bpe: u64,
}

impl Context {
    /// Reads block `id`.
    fn read_block(&self, id: u64) -> Result<Vec<Item>> {
        let epoch = id / self.bpe;
        let from = id % self.bpe * self.block_size;
        let to = (from + self.block_size).min(self.per);
        let refs: Vec<(Ref, u64)> = self
            .layout
            .refs(epoch, from, to)
            .into_iter()
            .map(|r| (r, epoch))
            .collect();
        self.fetch_refs(&refs)
    }

    /// Reads the records `refs` (with their epochs), in that order.
    fn fetch_refs(&self, refs: &[(Ref, u64)]) -> Result<Vec<Item>> {
        let mut by_file: BTreeMap<u32, (Vec<usize>, Vec<u64>)> =
            BTreeMap::new();
        let mut out: Vec<Item> = refs
            .iter()
            .map(|&(r, epoch)| Item {
                r,
                epoch,
                offset: 0,
                data: Bytes::new(),
            })
            .collect();
        for (k, (r, _)) in refs.iter().enumerate() {
            if r.file == PAD {
                continue;
            }
            let e = by_file.entry(r.file).or_default();
            e.0.push(k);
            e.1.push(r.ordinal);
        }
        let files = self.source.counts().len();
        for (file, (slots, ordinals)) in by_file {
            if file as usize >= files {
                return Err(Error::invalid_argument(format!(
                    "the checkpoint names file {file} of {files}"
                )));
            }
            let Fetched::Records(records) =
                self.source.read(file, &ordinals)?
            else {
                return Err(Error::internal("a record stream over rows"));
            };
            for (k, rec) in slots.into_iter().zip(records) {
                out[k].offset = rec.offset;
                out[k].data = rec.data;
            }
        }
        Ok(out)
    }
}

/// The state the stream and its reader threads share.
struct Shared {
    state: Mutex<State>,
    /// Wakes reader threads: room to read ahead, or stop.
    work: Condvar,
    /// Wakes the stream: a block was read, or cancel.
    done: Condvar,
    /// Blocks that may be read ahead of the first block not taken.
    window: u64,
    /// The first block past the last epoch (`u64::MAX`: none).
    end_block: u64,
}

struct State {
    /// Every block before it has been taken by the stream.
    next_block: u64,
    /// Blocks at or after `next_block` already taken.
    ahead: BTreeSet<u64>,
    /// The next block a reader thread will read.
    next_dispatch: u64,
    /// Blocks read and not yet taken.
    results: BTreeMap<u64, Result<Vec<Item>>>,
    /// The stream was dropped or cancelled: reader threads end.
    stop: bool,
    /// The stream was cancelled: waits end with Cancelled.
    cancelled: bool,
}

/// A reader thread: reads the next block there is room for, until the
/// stream stops or the blocks run out.
fn work(shared: &Shared, ctx: &Context) {
    loop {
        let id = {
            let mut st = shared.state.lock();
            loop {
                if st.stop {
                    return;
                }
                // Blocks taken already are never read again: those below
                // `next_block` (the stream may have passed blocks restored
                // as taken before a thread got here) and those in `ahead`.
                st.next_dispatch = st.next_dispatch.max(st.next_block);
                while st.ahead.contains(&st.next_dispatch) {
                    st.next_dispatch += 1;
                }
                if st.next_dispatch >= shared.end_block {
                    return;
                }
                if st.next_dispatch
                    < st.next_block.saturating_add(shared.window)
                {
                    st.next_dispatch += 1;
                    break st.next_dispatch - 1;
                }
                shared.work.wait(&mut st);
            }
        };
        let result = ctx.read_block(id);
        let mut st = shared.state.lock();
        st.results.insert(id, result);
        shared.done.notify_all();
    }
}

/// Records from TFRecord files, in an order fixed by the seed, with a
/// [`checkpoint`](RecordStream::checkpoint) at any moment (see the
/// [module docs](self)).
///
/// Dropping the stream stops and joins its reader threads.
pub struct RecordStream {
    shared: Arc<Shared>,
    ctx: Arc<Context>,
    names: Arc<[Arc<str>]>,
    workers: Vec<JoinHandle<()>>,
    order: Order,
    deterministic: bool,
    settings: u64,
    /// Records of the last block taken, not yet handed out (or moved to
    /// the buffer).
    incoming: VecDeque<Item>,
    /// The shuffle buffer ([`Order::Buffer`]).
    buffer: Vec<Item>,
    /// The shuffle buffer's choices.
    rng: ChaCha8Rng,
    /// Records handed out, over the stream's whole life.
    delivered: u64,
    /// The error that stopped the stream.
    failed: Option<Error>,
}

impl fmt::Debug for RecordStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecordStream")
            .field("files", &self.names.len())
            .field("order", &self.order)
            .field("deterministic", &self.deterministic)
            .field("delivered", &self.delivered)
            .field("buffered", &self.buffer.len())
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
        let mut out = Vec::with_capacity(n.min(1 << 16));
        while out.len() < n {
            match self.next_record()? {
                Some(r) => out.push(r),
                None => break,
            }
        }
        Ok(out)
    }

    /// A handle that can cancel this stream from another thread.
    pub fn canceller(&self) -> StreamCanceller {
        StreamCanceller {
            shared: Arc::clone(&self.shared),
        }
    }

    /// Records handed out so far, over every run the checkpoints chain.
    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    /// Where the stream is: enough to continue exactly (see
    /// [`RecordStreamBuilder::restore`]).
    pub fn checkpoint(&self) -> Checkpoint {
        let st = self.shared.state.lock();
        let pos = self.rng.get_word_pos();
        Checkpoint {
            proto: CheckpointProto {
                settings: self.settings,
                next_block: st.next_block,
                ahead: st.ahead.iter().copied().collect(),
                incoming: Some(Refs::of(self.incoming.iter())),
                buffer: Some(Refs::of(self.buffer.iter())),
                rng_word_pos_lo: pos as u64,
                rng_word_pos_hi: (pos >> 64) as u64,
                delivered: self.delivered,
            },
        }
    }

    fn next_deadline(
        &mut self,
        deadline: Option<Instant>,
    ) -> Result<Option<StreamRecord>> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let item = match self.take(deadline) {
            Ok(item) => item,
            Err(e) if e.kind() == crate::Kind::DeadlineExceeded => {
                return Err(e)
            }
            Err(e) => {
                self.failed = Some(e.clone());
                return Err(e);
            }
        };
        Ok(item.map(|it| {
            self.delivered += 1;
            let file = (it.r.file != PAD)
                .then(|| Arc::clone(&self.names[it.r.file as usize]));
            StreamRecord {
                data: it.data,
                file,
                position: Position {
                    offset: it.offset,
                    index: it.r.ordinal,
                },
                epoch: it.epoch,
            }
        }))
    }

    fn take(&mut self, deadline: Option<Instant>) -> Result<Option<Item>> {
        let Order::Buffer(n) = self.order else {
            if self.incoming.is_empty() {
                match self.pull(deadline)? {
                    Some(items) => self.incoming.extend(items),
                    None => return Ok(None),
                }
            }
            return Ok(self.incoming.pop_front());
        };
        while self.buffer.len() < n.max(1) {
            if let Some(it) = self.incoming.pop_front() {
                self.buffer.push(it);
                continue;
            }
            match self.pull(deadline)? {
                Some(items) => self.incoming.extend(items),
                None => break,
            }
        }
        if self.buffer.is_empty() {
            return Ok(None);
        }
        let k = self.rng.gen_range(0..self.buffer.len());
        Ok(Some(self.buffer.swap_remove(k)))
    }

    /// Takes the next block: the first not taken (deterministic), or any
    /// block already read, the lowest first. `None` past the last epoch.
    fn pull(
        &mut self,
        deadline: Option<Instant>,
    ) -> Result<Option<Vec<Item>>> {
        let shared = &*self.shared;
        let mut guard = shared.state.lock();
        loop {
            let st = &mut *guard;
            if st.cancelled {
                return Err(Error::cancelled("the stream was cancelled"));
            }
            if st.next_block >= shared.end_block {
                return Ok(None);
            }
            let pick = if self.deterministic {
                let b = st.next_block;
                st.results.contains_key(&b).then_some(b)
            } else {
                st.results.keys().next().copied()
            };
            if let Some(id) = pick {
                // A block that failed stays untaken (and its error is
                // returned again): a checkpoint taken after the error
                // reads it again rather than skipping its records.
                if let Some(Err(e)) = st.results.get(&id) {
                    return Err(e.clone());
                }
                let result = st.results.remove(&id).expect("picked");
                if id == st.next_block {
                    st.next_block += 1;
                    while st.ahead.remove(&st.next_block) {
                        st.next_block += 1;
                    }
                } else {
                    st.ahead.insert(id);
                }
                shared.work.notify_all();
                return result.map(Some);
            }
            match deadline {
                None => shared.done.wait(&mut guard),
                Some(d) => {
                    if shared.done.wait_until(&mut guard, d).timed_out() {
                        return Err(Error::deadline_exceeded(
                            "no record was read before the timeout",
                        ));
                    }
                }
            }
        }
    }
}

impl Iterator for RecordStream {
    type Item = Result<StreamRecord>;

    /// The next record; after an error has been yielded once, `None`.
    fn next(&mut self) -> Option<Result<StreamRecord>> {
        if self.failed.is_some() {
            return None;
        }
        self.next_record().transpose()
    }
}

impl Drop for RecordStream {
    fn drop(&mut self) {
        {
            let mut st = self.shared.state.lock();
            st.stop = true;
            self.shared.work.notify_all();
        }
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}

/// Cancels a [`RecordStream`] from any thread: a blocked or later
/// [`next_record`](RecordStream::next_record) returns
/// [`Cancelled`](crate::Kind::Cancelled), and the reader threads stop
/// after the block they are reading.
#[derive(Clone)]
pub struct StreamCanceller {
    shared: Arc<Shared>,
}

impl fmt::Debug for StreamCanceller {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StreamCanceller").finish_non_exhaustive()
    }
}

impl StreamCanceller {
    /// Cancels the stream; harmless if done twice.
    pub fn cancel(&self) {
        let mut st = self.shared.state.lock();
        st.cancelled = true;
        st.stop = true;
        self.shared.work.notify_all();
        self.shared.done.notify_all();
    }
}
