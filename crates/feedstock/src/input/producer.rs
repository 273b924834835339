//! Producers: the first stage of a pipeline, a queue filled epoch after
//! epoch by one runner thread.
//!
//! * [`string_input_producer`]: filenames (or any strings), for a
//!   [`Reader`] to take one at a time;
//! * [`range_input_producer`]: the integers `0..limit`;
//! * [`input_producer`]: the rows of any tensor;
//! * [`slice_input_producer`]: rows of several preloaded tensors at once,
//!   through a queue of indices so that the data is never copied per
//!   epoch;
//! * [`match_filenames_once`]: the files matching a glob pattern.
//!
//! Each builder makes a FIFO queue and registers in the caller's
//! [`Pipeline`] a [`QueueRunner`] whose one thread enqueues the whole
//! input once per epoch — shuffled within the epoch if asked (the
//! default, as in TensorFlow). With `num_epochs` set, the thread ends with
//! OutOfRange after the last epoch and the runner closes the queue: the
//! first link of the clean shut-down chain. Readers drain what is left
//! and then get OutOfRange themselves.
//!
//! Preloaded rows are fastest taken many at a time:
//! [`SliceProducer::dequeue_up_to`] hands out a batch of rows per call,
//! stacked per tensor, for [`batch`](super::batch()) with `enqueue_many`.
//!
//! # Resuming
//!
//! Each epoch's order is drawn from its own stream of one seeded
//! generator, so what a producer hands out is a fixed sequence given the
//! input, the seed and `shuffle`. `build_resumable` returns a
//! [`Producer`] whose [`state`](Producer::state) is the position in that
//! sequence of the next element a consumer will take (epoch, place in the
//! epoch, seed); the builders' `resume_from` starts a new producer there.
//! Together with
//! [`Reader::serialize_state`](crate::reader::Reader::serialize_state),
//! saved at the same quiet moment, a pipeline with one reader resumes
//! exactly: no record repeated or skipped. Covered: elements still in the
//! producer's queue (they were not taken, and are enqueued again). Not
//! covered: what consumers hold beyond their own saved state — records
//! already in a batching queue, or several reader threads each midway
//! through a file (save each reader, or drain first).
//!
//! ```
//! use std::time::Duration;
//!
//! use feedstock::coord::{Coordinator, Pipeline};
//! use feedstock::input::string_input_producer;
//! use feedstock::reader::WorkQueue;
//!
//! let mut pipeline = Pipeline::new();
//! let files = string_input_producer(&mut pipeline, ["a.csv", "b.csv"])
//!     .num_epochs(2)
//!     .shuffle(false)
//!     .build()?;
//! let coord = Coordinator::new();
//! let threads = pipeline.start(&coord)?;
//! let mut got = Vec::new();
//! while let Ok(file) = files.next_work() {
//!     got.push(file);
//! }
//! assert_eq!(got, ["a.csv", "b.csv", "a.csv", "b.csv"]);
//! coord.join(threads, Duration::from_secs(10))?;
//! # Ok::<(), feedstock::Error>(())
//! ```

use std::sync::Arc;

use bytes::Bytes;
use rand::seq::SliceRandom;

use super::shard::{
    count_records, epoch_order, plan_epoch, EpochPlan, Remainder, Shard,
    ShardStats,
};
use crate::coord::{Pipeline, QueueRunner};
use crate::error::{Error, Result};
use crate::io::fs::{default_fs, FileSystem};
use crate::queue::{ComponentSpec, FifoQueue, Queue, QueueSpec};
use crate::reader::{Reader, WorkQueue, WorkUnit};
use crate::tensor::{DType, Data, Tensor};

mod state;

pub use state::ProducerState;

/// The generator the order of epoch `epoch` is drawn from, the same for the
/// producers and for [`shard`](super::shard).
pub(crate) fn epoch_order_rng(
    seed: u64,
    epoch: u64,
) -> rand_chacha::ChaCha8Rng {
    state::epoch_rng(seed, epoch)
}

/// TensorFlow's default capacity for producer queues.
const DEFAULT_CAPACITY: usize = 32;

/// The files matching the glob `pattern`, sorted: local paths, or
/// object-store URLs (`s3://bucket/train-*.tfrecord` lists the objects
/// under `train-`) through [`crate::io::fs::default_fs`].
///
/// # Errors
///
/// [`Kind::NotFound`](crate::Kind::NotFound) naming the pattern when
/// nothing matches; [`Kind::InvalidArgument`](crate::Kind::InvalidArgument)
/// for a malformed pattern.
pub fn match_filenames_once(pattern: &str) -> Result<Vec<String>> {
    match_filenames_once_in(&*default_fs(), pattern)
}

/// The files matching the glob `pattern` on `fs`, sorted.
///
/// # Errors
///
/// As [`match_filenames_once`].
pub fn match_filenames_once_in(
    fs: &dyn FileSystem,
    pattern: &str,
) -> Result<Vec<String>> {
    fs.glob(pattern)
}

/// Settings shared by every producer.
#[derive(Debug, Clone)]
struct Epochs {
    num_epochs: Option<u64>,
    shuffle: bool,
    seed: Option<u64>,
    capacity: usize,
    name: String,
    resume: Option<ProducerState>,
}

impl Epochs {
    fn new(name: &str) -> Epochs {
        Epochs {
            num_epochs: None,
            shuffle: true,
            seed: None,
            capacity: DEFAULT_CAPACITY,
            name: name.to_owned(),
            resume: None,
        }
    }
}

macro_rules! epoch_setters {
    () => {
        /// Stops after `n` epochs (default: never). The queue is then
        /// closed, and its consumers get OutOfRange once it is drained.
        /// When resuming, `n` still counts from the very first epoch.
        /// `n` must be at least 1: the build refuses 0 with
        /// InvalidArgument, as TensorFlow raises ValueError ("num_epochs
        /// must be > 0").
        pub fn num_epochs(&mut self, n: u64) -> &mut Self {
            self.epochs.num_epochs = Some(n);
            self
        }

        /// Shuffles the order within each epoch (default true, as in
        /// TensorFlow).
        pub fn shuffle(&mut self, shuffle: bool) -> &mut Self {
            self.epochs.shuffle = shuffle;
            self
        }

        /// Seeds the shuffle, so that the same seed gives the same order
        /// (default: a random seed).
        pub fn seed(&mut self, seed: u64) -> &mut Self {
            self.epochs.seed = Some(seed);
            self
        }

        /// The most elements the queue holds (default 32).
        pub fn capacity(&mut self, capacity: usize) -> &mut Self {
            self.epochs.capacity = capacity;
            self
        }

        /// Names the queue in errors and statistics.
        pub fn name(&mut self, name: impl Into<String>) -> &mut Self {
            self.epochs.name = name.into();
            self
        }

        /// Starts where a saved [`ProducerState`] left off: at its epoch
        /// and position, with its seed (which replaces
        /// [`seed`](Self::seed)). The input and the `shuffle` setting
        /// must be those of the producer it was saved from; the build
        /// fails if the number of elements differs.
        pub fn resume_from(&mut self, state: ProducerState) -> &mut Self {
            self.epochs.resume = Some(state);
            self
        }
    };
}

/// Rows `rows` of `t` (along axis 0), stacked in that order.
///
/// Written here rather than as repeated `index` + `stack`: it copies each
/// row once, straight into the output, with no per-row tensor.
fn gather(t: &Tensor, rows: &[usize]) -> Result<Tensor> {
    let dims = t.dims();
    let n = *dims.first().ok_or_else(|| {
        Error::invalid_argument("cannot take rows of a scalar")
    })?;
    let row_len: usize = dims[1..].iter().product();
    let mut data = Data::with_capacity(t.dtype(), rows.len() * row_len);
    for &i in rows {
        if i >= n {
            return Err(Error::invalid_argument(format!(
                "row {i} out of range for {n} rows"
            )));
        }
        data.extend_from(t.data(), i * row_len..(i + 1) * row_len)?;
    }
    let mut shape = dims.to_vec();
    shape[0] = rows.len();
    Tensor::from_data(shape, data)
}

/// The runner thread's state: which epoch, and where in it to start.
struct Feeder {
    rows: Tensor,
    n: usize,
    /// The next epoch to enqueue.
    epoch: u64,
    /// Where in `epoch` to start (non-zero only for a resumed epoch).
    start: usize,
    seed: u64,
    epochs: Epochs,
    queue: Arc<FifoQueue>,
}

impl Feeder {
    /// Enqueues one epoch (the rest of it, when resumed mid-epoch), or
    /// fails OutOfRange after the last.
    fn step(&mut self) -> Result<()> {
        if let Some(limit) = self.epochs.num_epochs {
            if self.epoch >= limit {
                return Err(Error::out_of_range(format!(
                    "{}: epoch limit of {limit} reached",
                    self.epochs.name
                )));
            }
        }
        let batch = if self.epochs.shuffle || self.start > 0 {
            let mut order: Vec<usize> = (0..self.n).collect();
            if self.epochs.shuffle {
                order.shuffle(&mut state::epoch_rng(self.seed, self.epoch));
            }
            gather(&self.rows, &order[self.start..])?
        } else {
            self.rows.clone()
        };
        self.queue.enqueue_many(vec![batch.into()])?;
        self.epoch += 1;
        self.start = 0;
        Ok(())
    }
}

/// What a producer needs to report its position: its queue's count of
/// elements handed out, and where its sequence started.
#[derive(Debug, Clone)]
struct Tracker {
    queue: Arc<FifoQueue>,
    len: u64,
    seed: u64,
    shuffle: bool,
    /// Elements consumed before this queue was built (when resumed).
    base: u64,
}

impl Tracker {
    fn state(&self) -> ProducerState {
        let consumed = self.base + self.queue.stats().dequeued;
        ProducerState::after(self.len, self.seed, self.shuffle, consumed)
    }
}

/// Builds the queue for `rows` and registers its runner in `pipeline`.
fn start_producer(
    pipeline: &mut Pipeline,
    rows: Tensor,
    epochs: &Epochs,
) -> Result<Tracker> {
    let n = match rows.dims().first() {
        Some(&n) => n,
        None => {
            return Err(Error::invalid_argument(format!(
                "{}: the input must have at least one dimension, got a scalar",
                epochs.name
            )))
        }
    };
    if epochs.num_epochs == Some(0) {
        // input.py's limit_epochs raises ValueError for it.
        return Err(Error::invalid_argument(format!(
            "{}: num_epochs must be > 0, got 0",
            epochs.name
        )));
    }
    if n == 0 {
        // Every epoch would be empty: with no epoch limit the runner would
        // spin forever, and with one it would deliver nothing.
        return Err(Error::invalid_argument(format!(
            "{}: the input is empty",
            epochs.name
        )));
    }
    let (seed, epoch, start) = match &epochs.resume {
        Some(state) if state.len() != n as u64 => {
            return Err(Error::invalid_argument(format!(
                "{}: the saved state is for {} elements per epoch, this \
                 input has {n}",
                epochs.name,
                state.len()
            )))
        }
        Some(state) if state.shuffle() != epochs.shuffle => {
            return Err(Error::invalid_argument(format!(
                "{}: the saved state is of a producer with shuffle={}, \
                 this one has shuffle={}",
                epochs.name,
                state.shuffle(),
                epochs.shuffle
            )))
        }
        Some(state)
            if epochs.num_epochs.is_some_and(|n| {
                state.epoch() > n
                    || (state.epoch() == n && state.position() > 0)
            }) =>
        {
            return Err(Error::invalid_argument(format!(
                "{}: the saved state is at epoch {} (position {}), past this \
                 producer's num_epochs of {}",
                epochs.name,
                state.epoch(),
                state.position(),
                epochs.num_epochs.unwrap_or_default()
            )))
        }
        Some(state) => {
            (state.seed(), state.epoch(), state.position() as usize)
        }
        None => (epochs.seed.unwrap_or_else(rand::random), 0, 0),
    };
    let spec = QueueSpec::new().component(
        ComponentSpec::new(rows.dtype()).shape(
            rows.dims()[1..]
                .iter()
                .map(|&d| Some(d))
                .collect::<Vec<_>>(),
        ),
    );
    let queue = FifoQueue::builder(epochs.capacity, spec)
        .name(epochs.name.clone())
        .build()?;
    let mut feeder = Feeder {
        rows,
        n,
        epoch,
        start,
        seed,
        epochs: epochs.clone(),
        queue: queue.clone(),
    };
    let dyn_queue: Arc<dyn Queue> = queue.clone();
    pipeline.add_runner(
        QueueRunner::new(dyn_queue).with_op(move || feeder.step()),
    )?;
    Ok(Tracker {
        queue,
        len: n as u64,
        seed,
        shuffle: epochs.shuffle,
        base: epoch * n as u64 + start as u64,
    })
}

/// A producer's queue together with what it takes to report the
/// producer's position: what `build_resumable` returns.
///
/// The queue is used as usual (it is also a [`WorkQueue`], so a
/// [`Reader`] can take filenames from the
/// `Producer` itself); [`Producer::state`] says how far its consumers
/// have got.
#[derive(Debug, Clone)]
pub struct Producer {
    tracker: Tracker,
}

impl Producer {
    /// The producer's queue.
    pub fn queue(&self) -> &Arc<FifoQueue> {
        &self.tracker.queue
    }

    /// The position of the next element a consumer will take: the
    /// epoch, the place in that epoch's order and the seed.
    ///
    /// It counts the elements *dequeued* from the queue, exactly (under
    /// the queue's lock). Elements the runner has enqueued but nobody has
    /// taken are not counted: a producer resumed from this state
    /// enqueues them again. What it cannot know is what the consumers did
    /// with the elements they took: save it when they are quiet (between
    /// two steps of the thread that consumes, for instance) together with
    /// their own state — for a [`Reader`], its
    /// [`serialize_state`](crate::reader::Reader::serialize_state), which
    /// holds the file in progress. Elements that went on into later
    /// queues (a batching queue) are beyond both: save after draining
    /// those, or account for them yourself.
    pub fn state(&self) -> ProducerState {
        self.tracker.state()
    }
}

impl WorkQueue for Producer {
    fn next_work(&self) -> Result<String> {
        self.tracker.queue.next_work()
    }
}

/// Configures an [`input_producer`].
#[derive(Debug)]
pub struct InputProducerBuilder<'p> {
    pipeline: &'p mut Pipeline,
    input: Tensor,
    epochs: Epochs,
}

impl InputProducerBuilder<'_> {
    epoch_setters!();

    /// Makes the queue and registers its runner in the pipeline.
    ///
    /// # Errors
    ///
    /// [`Kind::InvalidArgument`](crate::Kind::InvalidArgument) for a
    /// scalar or empty input, or a zero capacity.
    pub fn build(&mut self) -> Result<Arc<FifoQueue>> {
        Ok(self.build_resumable()?.tracker.queue)
    }

    /// As [`build`](Self::build), returning a [`Producer`] that can also
    /// report its position.
    ///
    /// # Errors
    ///
    /// As [`build`](Self::build); also InvalidArgument when resuming
    /// from a state saved for a different number of rows.
    pub fn build_resumable(&mut self) -> Result<Producer> {
        let tracker =
            start_producer(self.pipeline, self.input.clone(), &self.epochs)?;
        Ok(Producer { tracker })
    }
}

/// A queue of the rows of `input` (its slices along axis 0), enqueued
/// once per epoch. Each element is one row.
pub fn input_producer(
    pipeline: &mut Pipeline,
    input: Tensor,
) -> InputProducerBuilder<'_> {
    InputProducerBuilder {
        pipeline,
        input,
        epochs: Epochs::new("input_producer"),
    }
}

/// Configures a [`string_input_producer`].
#[derive(Debug)]
pub struct StringInputProducerBuilder<'p> {
    pipeline: &'p mut Pipeline,
    strings: Vec<String>,
    epochs: Epochs,
    sharding: Option<Sharding>,
}

/// A producer's shard settings; see
/// [`StringInputProducerBuilder::shard`].
#[derive(Clone)]
struct Sharding {
    index: usize,
    count: usize,
    remainder: Remainder,
    counts: Option<Vec<u64>>,
    counter: Option<Arc<dyn Fn() -> Reader + Send + Sync>>,
    stats: Arc<ShardStats>,
}

impl std::fmt::Debug for Sharding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sharding")
            .field("index", &self.index)
            .field("count", &self.count)
            .field("remainder", &self.remainder)
            .field("counts", &self.counts.as_ref().map(Vec::len))
            .field("counter", &self.counter.is_some())
            .finish()
    }
}

impl StringInputProducerBuilder<'_> {
    epoch_setters!();

    fn sharding(&mut self) -> &mut Sharding {
        self.sharding.get_or_insert_with(|| Sharding {
            index: 0,
            count: 1,
            remainder: Remainder::Drop,
            counts: None,
            counter: None,
            stats: Arc::new(ShardStats::default()),
        })
    }

    /// Reads only host `index`'s part of the files, of `count` hosts
    /// (its rank and the world size): the parts of all hosts are
    /// disjoint and together are every record, every epoch, and every
    /// host gets the same number of records per epoch (so the same
    /// number of batches); see [`plan_epoch`] for the split.
    ///
    /// The queue then holds [`WorkUnit`]s
    /// rather than plain file names when a reader must keep only some
    /// records of a file (record level, or a file cut short or read
    /// again by the [`remainder`](Self::remainder) policy); a
    /// [`Reader`] understands them.
    ///
    /// With `count > 1` the build needs:
    /// - the same [`seed`](Self::seed) on every host when shuffling (a
    ///   random seed would give each host its own order: refused);
    /// - each file's record count, to even out the hosts:
    ///   [`record_counts`](Self::record_counts), or
    ///   [`count_records_with`](Self::count_records_with) a reader of the
    ///   files' format (the runner thread then reads every file once,
    ///   before the first epoch).
    ///
    /// ```
    /// use std::time::Duration;
    /// use feedstock::coord::{Coordinator, Pipeline};
    /// use feedstock::input::string_input_producer;
    /// use feedstock::reader::{Reader, TextLineReader};
    /// # let dir = tempfile::tempdir()?;
    /// # let mut files = Vec::new();
    /// # for f in 0..2 {
    /// #     let p = dir.path().join(format!("part-{f}.csv"));
    /// #     std::fs::write(&p, "a\nb\nc\n")?;
    /// #     files.push(p.to_str().unwrap().to_owned());
    /// # }
    /// let (rank, world) = (1, 3); // from the job's launcher
    /// let mut pipeline = Pipeline::new();
    /// let queue = string_input_producer(&mut pipeline, files)
    ///     .num_epochs(1)
    ///     .seed(7)
    ///     .shard(rank, world)
    ///     .count_records_with(|| Reader::new(TextLineReader::new()))
    ///     .build()?;
    /// let coord = Coordinator::new();
    /// let threads = pipeline.start(&coord)?;
    /// let reader = Reader::new(TextLineReader::new());
    /// let mut mine = 0;
    /// while reader.read(&queue).is_ok() {
    ///     mine += 1;
    /// }
    /// assert_eq!(mine, 2); // 6 records over 3 hosts
    /// coord.join(threads, Duration::from_secs(10))?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn shard(&mut self, index: usize, count: usize) -> &mut Self {
        let s = self.sharding();
        s.index = index;
        s.count = count;
        self
    }

    /// What to do with the records some hosts have and others do not
    /// (default [`Remainder::Drop`]); counted in
    /// [`shard_stats`](Self::shard_stats).
    pub fn remainder(&mut self, remainder: Remainder) -> &mut Self {
        self.sharding().remainder = remainder;
        self
    }

    /// The number of records in each file, in the order given, for
    /// [`shard`](Self::shard).
    pub fn record_counts(&mut self, counts: Vec<u64>) -> &mut Self {
        self.sharding().counts = Some(counts);
        self
    }

    /// Counts each file's records for [`shard`](Self::shard) with
    /// readers from `make` (of the files' format), once, in the runner
    /// thread before the first epoch.
    pub fn count_records_with(
        &mut self,
        make: impl Fn() -> Reader + Send + Sync + 'static,
    ) -> &mut Self {
        self.sharding().counter = Some(Arc::new(make));
        self
    }

    /// The counters of the [`remainder`](Self::remainder) policy
    /// (records dropped and padding added, counted as each epoch is
    /// enqueued), once [`shard`](Self::shard) was called. Records other
    /// hosts read are counted by each reader,
    /// [`Reader::num_records_skipped`].
    pub fn shard_stats(&self) -> Option<Arc<ShardStats>> {
        self.sharding.as_ref().map(|s| Arc::clone(&s.stats))
    }

    /// Makes the queue and registers its runner in the pipeline. A
    /// [`Reader`] takes its work from the queue
    /// returned.
    ///
    /// # Errors
    ///
    /// [`Kind::InvalidArgument`](crate::Kind::InvalidArgument) for an
    /// empty list of strings or a zero capacity.
    pub fn build(&mut self) -> Result<Arc<FifoQueue>> {
        if let Some(sharding) = &self.sharding {
            return start_sharded(
                self.pipeline,
                self.strings.clone(),
                &self.epochs,
                sharding.clone(),
            );
        }
        Ok(self.build_resumable()?.tracker.queue)
    }

    /// As [`build`](Self::build), returning a [`Producer`] that can also
    /// report its position, for a pipeline that is to stop and resume:
    /// see [`Producer::state`] and [`resume_from`](Self::resume_from).
    ///
    /// # Errors
    ///
    /// As [`build`](Self::build); also InvalidArgument when resuming
    /// from a state saved for a different number of strings.
    /// Unimplemented for a sharded producer.
    pub fn build_resumable(&mut self) -> Result<Producer> {
        if self.sharding.is_some() {
            return Err(Error::unimplemented(format!(
                "{}: a sharded producer cannot report its position",
                self.epochs.name
            )));
        }
        let values: Vec<Bytes> = self
            .strings
            .iter()
            .map(|s| Bytes::from(s.clone()))
            .collect();
        let tracker = start_producer(
            self.pipeline,
            Tensor::vector(values),
            &self.epochs,
        )?;
        Ok(Producer { tracker })
    }
}

/// A queue of filenames (or any strings), enqueued once per epoch.
pub fn string_input_producer<S: Into<String>>(
    pipeline: &mut Pipeline,
    strings: impl IntoIterator<Item = S>,
) -> StringInputProducerBuilder<'_> {
    StringInputProducerBuilder {
        pipeline,
        strings: strings.into_iter().map(Into::into).collect(),
        epochs: Epochs::new("input_producer"),
        sharding: None,
    }
}

/// Builds a sharded string producer's queue and registers its runner.
fn start_sharded(
    pipeline: &mut Pipeline,
    files: Vec<String>,
    epochs: &Epochs,
    sharding: Sharding,
) -> Result<Arc<FifoQueue>> {
    let name = &epochs.name;
    let shard = Shard::new(sharding.index, sharding.count).map_err(|e| {
        let message = format!("{name}: {}", e.message());
        e.with_message(message)
    })?;
    if epochs.num_epochs == Some(0) {
        return Err(Error::invalid_argument(format!(
            "{name}: num_epochs must be > 0, got 0"
        )));
    }
    if files.is_empty() {
        return Err(Error::invalid_argument(format!(
            "{name}: the input is empty"
        )));
    }
    if epochs.resume.is_some() {
        return Err(Error::unimplemented(format!(
            "{name}: a sharded producer cannot resume from a saved state"
        )));
    }
    let seed = match epochs.seed {
        Some(s) => s,
        None if epochs.shuffle && shard.count() > 1 => {
            return Err(Error::invalid_argument(format!(
                "{name}: a sharded producer that shuffles needs a seed, the \
                 same on every host (each host would draw its own order)"
            )))
        }
        None => 0,
    };
    let counts = match (&sharding.counts, &sharding.counter) {
        (Some(c), _) if c.len() != files.len() => {
            return Err(Error::invalid_argument(format!(
                "{name}: {} record counts for {} files",
                c.len(),
                files.len()
            )))
        }
        (Some(c), _) => Some(c.clone()),
        (None, _) if shard.count() == 1 => Some(vec![0; files.len()]),
        (None, Some(_)) => None,
        (None, None) => {
            return Err(Error::invalid_argument(format!(
                "{name}: sharding over {} hosts needs each file's record \
                 count, to give every host as many: give record_counts or \
                 count_records_with a reader of the files",
                shard.count()
            )))
        }
    };
    let spec = QueueSpec::new().component(
        ComponentSpec::new(DType::String).shape(Vec::<Option<usize>>::new()),
    );
    let queue = FifoQueue::builder(epochs.capacity, spec)
        .name(name.clone())
        .build()?;
    let mut feeder = ShardFeeder {
        files,
        counts,
        counter: sharding.counter,
        shard,
        remainder: sharding.remainder,
        epochs: epochs.clone(),
        seed,
        epoch: 0,
        queue: queue.clone(),
        stats: sharding.stats,
    };
    let dyn_queue: Arc<dyn Queue> = queue.clone();
    pipeline.add_runner(
        QueueRunner::new(dyn_queue).with_op(move || feeder.step()),
    )?;
    Ok(queue)
}

/// The runner thread of a sharded string producer.
struct ShardFeeder {
    files: Vec<String>,
    /// Each file's records; counted on the first step when `None`.
    counts: Option<Vec<u64>>,
    counter: Option<Arc<dyn Fn() -> Reader + Send + Sync>>,
    shard: Shard,
    remainder: Remainder,
    epochs: Epochs,
    seed: u64,
    epoch: u64,
    queue: Arc<FifoQueue>,
    stats: Arc<ShardStats>,
}

impl ShardFeeder {
    /// Enqueues this host's work units of one epoch, or fails OutOfRange
    /// after the last.
    fn step(&mut self) -> Result<()> {
        let name = &self.epochs.name;
        if let Some(limit) = self.epochs.num_epochs {
            if self.epoch >= limit {
                return Err(Error::out_of_range(format!(
                    "{name}: epoch limit of {limit} reached"
                )));
            }
        }
        let counts = match &mut self.counts {
            Some(c) => c,
            None => {
                let make = self.counter.as_deref().ok_or_else(|| {
                    Error::internal("no record counts and no counter")
                })?;
                self.counts.insert(count_records(make, &self.files)?)
            }
        };
        let order = epoch_order(
            self.files.len(),
            self.seed,
            self.epoch,
            self.epochs.shuffle,
        );
        let plan = if self.shard.count() == 1 {
            // One host: every file whole, nothing to even out.
            EpochPlan {
                units: order
                    .iter()
                    .map(|&i| WorkUnit::file(self.files[i].clone()))
                    .collect(),
                own: 0,
                target: 0,
            }
        } else {
            plan_epoch(&order, &self.files, counts, self.shard, self.remainder)
        };
        self.stats.add_plan(&plan);
        if plan.units.is_empty() && self.epochs.num_epochs.is_none() {
            // Every epoch would be empty, and the readers would wait
            // forever.
            return Err(Error::failed_precondition(format!(
                "{name}: shard {} of {} gets no records in epoch {} ({} \
                 records of its own, {} to yield): with no epoch limit \
                 its readers would wait forever",
                self.shard.index(),
                self.shard.count(),
                self.epoch,
                plan.own,
                plan.target
            )));
        }
        if !plan.units.is_empty() {
            let units: Vec<Bytes> =
                plan.units.iter().map(|u| Bytes::from(u.encode())).collect();
            self.queue
                .enqueue_many(vec![Tensor::vector(units).into()])?;
        }
        self.epoch += 1;
        Ok(())
    }
}

/// Configures a [`range_input_producer`].
#[derive(Debug)]
pub struct RangeInputProducerBuilder<'p> {
    pipeline: &'p mut Pipeline,
    limit: i32,
    epochs: Epochs,
}

impl RangeInputProducerBuilder<'_> {
    epoch_setters!();

    /// Makes the queue and registers its runner in the pipeline.
    ///
    /// # Errors
    ///
    /// [`Kind::InvalidArgument`](crate::Kind::InvalidArgument) for a
    /// limit that is not positive, or a zero capacity.
    pub fn build(&mut self) -> Result<Arc<FifoQueue>> {
        Ok(self.build_resumable()?.tracker.queue)
    }

    /// As [`build`](Self::build), returning a [`Producer`] that can also
    /// report its position.
    ///
    /// # Errors
    ///
    /// As [`build`](Self::build); also InvalidArgument when resuming
    /// from a state saved for a different limit.
    pub fn build_resumable(&mut self) -> Result<Producer> {
        let tracker = range_queue(self.pipeline, self.limit, &self.epochs)?;
        Ok(Producer { tracker })
    }
}

fn range_queue(
    pipeline: &mut Pipeline,
    limit: i32,
    epochs: &Epochs,
) -> Result<Tracker> {
    if limit <= 0 {
        return Err(Error::invalid_argument(format!(
            "{}: limit must be positive, got {limit}",
            epochs.name
        )));
    }
    start_producer(pipeline, Tensor::vector((0..limit).collect()), epochs)
}

/// A queue of the `i32` scalars `0..limit`, enqueued once per epoch.
pub fn range_input_producer(
    pipeline: &mut Pipeline,
    limit: i32,
) -> RangeInputProducerBuilder<'_> {
    RangeInputProducerBuilder {
        pipeline,
        limit,
        epochs: Epochs::new("input_producer"),
    }
}

// After `epoch_setters!`, which the slice producer's builder uses too.
mod slice;
pub use slice::{
    slice_input_producer, SliceInputProducerBuilder, SliceProducer,
};
