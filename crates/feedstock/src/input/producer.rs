//! Producers: the first stage of a pipeline, a queue filled epoch after
//! epoch by one runner thread.
//!
//! * [`string_input_producer`]: filenames (or any strings), for a
//!   [`Reader`](crate::reader::Reader) to take one at a time;
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

use crate::coord::{Pipeline, QueueRunner};
use crate::error::{Error, Result};
use crate::io::fs::{FileSystem, LocalFs};
use crate::queue::{ComponentSpec, FifoQueue, Queue, QueueSpec};
use crate::reader::WorkQueue;
use crate::tensor::{Data, Tensor};

mod state;

pub use state::ProducerState;

/// TensorFlow's default capacity for producer queues.
const DEFAULT_CAPACITY: usize = 32;

/// The files matching the glob `pattern` on the local filesystem, sorted.
///
/// # Errors
///
/// [`Kind::NotFound`](crate::Kind::NotFound) naming the pattern when
/// nothing matches; [`Kind::InvalidArgument`](crate::Kind::InvalidArgument)
/// for a malformed pattern.
pub fn match_filenames_once(pattern: &str) -> Result<Vec<String>> {
    match_filenames_once_in(&LocalFs, pattern)
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
    /// Elements consumed before this queue was built (when resumed).
    base: u64,
}

impl Tracker {
    fn state(&self) -> ProducerState {
        let consumed = self.base + self.queue.stats().dequeued;
        ProducerState::after(self.len, self.seed, consumed)
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
        base: epoch * n as u64 + start as u64,
    })
}

/// A producer's queue together with what it takes to report the
/// producer's position: what `build_resumable` returns.
///
/// The queue is used as usual (it is also a [`WorkQueue`], so a
/// [`Reader`](crate::reader::Reader) can take filenames from the
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
    /// their own state — for a [`Reader`](crate::reader::Reader), its
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
}

impl StringInputProducerBuilder<'_> {
    epoch_setters!();

    /// Makes the queue and registers its runner in the pipeline. A
    /// [`Reader`](crate::reader::Reader) takes its work from the queue
    /// returned.
    ///
    /// # Errors
    ///
    /// [`Kind::InvalidArgument`](crate::Kind::InvalidArgument) for an
    /// empty list of strings or a zero capacity.
    pub fn build(&mut self) -> Result<Arc<FifoQueue>> {
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
    pub fn build_resumable(&mut self) -> Result<Producer> {
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

/// Configures a [`slice_input_producer`].
#[derive(Debug)]
pub struct SliceInputProducerBuilder<'p> {
    pipeline: &'p mut Pipeline,
    tensors: Vec<Tensor>,
    epochs: Epochs,
}

impl SliceInputProducerBuilder<'_> {
    epoch_setters!();

    /// Makes the queue of row indices and registers its runner in the
    /// pipeline.
    ///
    /// # Errors
    ///
    /// [`Kind::InvalidArgument`](crate::Kind::InvalidArgument) for no
    /// tensors, a scalar, tensors with different numbers of rows (naming
    /// the component), no rows, or a zero capacity.
    pub fn build(&mut self) -> Result<SliceProducer> {
        let rows = match self.tensors.first().map(|t| t.dims().first()) {
            Some(Some(&n)) => n,
            _ => {
                return Err(Error::invalid_argument(
                    "slice_input_producer needs at least one tensor with \
                     at least one dimension",
                ))
            }
        };
        for (i, t) in self.tensors.iter().enumerate() {
            if t.dims().first() != Some(&rows) {
                return Err(Error::invalid_argument(format!(
                    "all tensors must have {rows} rows like the first, this \
                     one has shape {:?}",
                    t.dims()
                ))
                .with_field(i.to_string()));
            }
        }
        let limit = i32::try_from(rows).map_err(|_| {
            Error::invalid_argument(format!("{rows} rows do not fit in i32"))
        })?;
        let tracker = range_queue(self.pipeline, limit, &self.epochs)?;
        Ok(SliceProducer {
            tensors: Arc::from(std::mem::take(&mut self.tensors)),
            tracker,
        })
    }
}

/// Rows of several tensors held once in memory, shuffled across each
/// epoch (TensorFlow's `slice_input_producer`).
///
/// The tensors are shared through an `Arc`; only row indices go through
/// the queue, so an epoch copies nothing but the rows taken.
pub fn slice_input_producer(
    pipeline: &mut Pipeline,
    tensors: Vec<Tensor>,
) -> SliceInputProducerBuilder<'_> {
    SliceInputProducerBuilder {
        pipeline,
        tensors,
        epochs: Epochs::new("input_producer"),
    }
}

/// The preloaded tensors of a [`slice_input_producer`] and its queue of
/// row indices.
///
/// Rows are sliced out of the tensors as they are dequeued, one at a time
/// ([`dequeue`](Self::dequeue)) or many
/// ([`dequeue_up_to`](Self::dequeue_up_to),
/// [`dequeue_many`](Self::dequeue_many)). Taking
/// many at once is much faster: one hand-off through the index queue and
/// one copy per row straight into the batch. Give the producer a
/// [`capacity`](SliceInputProducerBuilder::capacity) of a few batches
/// so that a batch's indices are there at once.
///
/// ```
/// use std::time::Duration;
///
/// use feedstock::coord::{Coordinator, Pipeline};
/// use feedstock::input::{batch, slice_input_producer};
/// use feedstock::{DType, Tensor};
///
/// let mut pipeline = Pipeline::new();
/// let rows = slice_input_producer(
///     &mut pipeline,
///     vec![Tensor::vector((0..10i64).collect())],
/// )
/// .num_epochs(2)
/// .seed(3)
/// .capacity(16)
/// .build()?;
/// // Each call hands batch() up to 4 rows, stacked: enqueue_many.
/// let batches = batch(&mut pipeline, move || {
///     Ok(rows.dequeue_up_to(4)?.into_iter().map(Into::into).collect())
/// })
/// .dtypes([DType::I64])
/// .names(["x"])
/// .enqueue_many(true)
/// .batch_size(4)
/// .allow_smaller_final_batch(true)
/// .build()?;
///
/// let coord = Coordinator::new();
/// let threads = pipeline.start(&coord)?;
/// let mut seen = Vec::new();
/// for b in batches.iter() {
///     let b = b?;
///     seen.extend_from_slice(b.tensor("x")?.as_slice::<i64>()?);
/// }
/// seen.sort();
/// let twice: Vec<i64> = (0..10).flat_map(|i| [i, i]).collect();
/// assert_eq!(seen, twice);
/// coord.join(threads, Duration::from_secs(10))?;
/// # Ok::<(), feedstock::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct SliceProducer {
    tensors: Arc<[Tensor]>,
    tracker: Tracker,
}

impl SliceProducer {
    /// The next row of every tensor, in the order the tensors were given.
    ///
    /// # Errors
    ///
    /// [`Kind::OutOfRange`](crate::Kind::OutOfRange) after the last epoch;
    /// the errors of the index queue.
    pub fn dequeue(&self) -> Result<Vec<Tensor>> {
        let element = self.tracker.queue.dequeue()?;
        let index = element
            .first()
            .ok_or_else(|| Error::internal("empty index element"))?
            .dense()?
            .scalar_value::<i32>()?;
        let i = usize::try_from(index)
            .map_err(|_| Error::internal("negative row index"))?;
        self.tensors.iter().map(|t| t.index(i)).collect()
    }

    /// The next `n` rows of every tensor, stacked along a new axis 0
    /// (one tensor per input tensor, `n` rows each), or fewer when the
    /// last epoch ends with fewer left — as a closure for
    /// [`batch`](super::batch()) with
    /// [`enqueue_many`](super::BatchBuilder::enqueue_many) wants them.
    ///
    /// # Errors
    ///
    /// [`Kind::OutOfRange`](crate::Kind::OutOfRange) once every epoch has
    /// been handed out; InvalidArgument for `n == 0`; the errors of the
    /// index queue.
    pub fn dequeue_up_to(&self, n: usize) -> Result<Vec<Tensor>> {
        check_many(n)?;
        let indices = self.tracker.queue.dequeue_up_to(n)?;
        self.rows(&indices)
    }

    /// Exactly `n` rows of every tensor, stacked along a new axis 0.
    ///
    /// # Errors
    ///
    /// [`Kind::OutOfRange`](crate::Kind::OutOfRange) when the last epoch
    /// has fewer than `n` rows left (they stay in the queue, for
    /// [`dequeue_up_to`](Self::dequeue_up_to)); InvalidArgument for
    /// `n == 0`; the errors of the index queue.
    pub fn dequeue_many(&self, n: usize) -> Result<Vec<Tensor>> {
        check_many(n)?;
        let indices = self.tracker.queue.dequeue_many(n)?;
        self.rows(&indices)
    }

    /// The rows named by a dequeued batch of indices.
    fn rows(&self, indices: &[crate::tensor::Value]) -> Result<Vec<Tensor>> {
        let indices = indices
            .first()
            .ok_or_else(|| Error::internal("empty index batch"))?
            .dense()?
            .as_slice::<i32>()?
            .iter()
            .map(|&i| {
                usize::try_from(i)
                    .map_err(|_| Error::internal("negative row index"))
            })
            .collect::<Result<Vec<usize>>>()?;
        self.tensors.iter().map(|t| gather(t, &indices)).collect()
    }

    /// The position of the next row a consumer will take; see
    /// [`Producer::state`], whose caveats apply. Rows already taken are
    /// consumed, whether or not they have reached the training loop.
    pub fn state(&self) -> ProducerState {
        self.tracker.state()
    }

    /// The preloaded tensors.
    pub fn tensors(&self) -> &Arc<[Tensor]> {
        &self.tensors
    }

    /// The queue of row indices.
    pub fn indices(&self) -> &Arc<FifoQueue> {
        &self.tracker.queue
    }
}

fn check_many(n: usize) -> Result<()> {
    if n == 0 {
        return Err(Error::invalid_argument(
            "dequeue of 0 rows: n must be at least 1",
        ));
    }
    Ok(())
}
