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
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::coord::{Pipeline, QueueRunner};
use crate::error::{Error, Result};
use crate::io::fs::{FileSystem, LocalFs};
use crate::queue::{ComponentSpec, FifoQueue, Queue, QueueSpec};
use crate::tensor::Tensor;

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
}

impl Epochs {
    fn new(name: &str) -> Epochs {
        Epochs {
            num_epochs: None,
            shuffle: true,
            seed: None,
            capacity: DEFAULT_CAPACITY,
            name: name.to_owned(),
        }
    }
}

macro_rules! epoch_setters {
    () => {
        /// Stops after `n` epochs (default: never). The queue is then
        /// closed, and its consumers get OutOfRange once it is drained.
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
    };
}

/// The runner thread's state: which epoch, and the shuffle's generator.
struct Feeder {
    rows: Tensor,
    n: usize,
    done: u64,
    epochs: Epochs,
    rng: ChaCha8Rng,
    queue: Arc<FifoQueue>,
}

impl Feeder {
    /// Enqueues one epoch, or fails OutOfRange after the last.
    fn step(&mut self) -> Result<()> {
        if let Some(limit) = self.epochs.num_epochs {
            if self.done >= limit {
                return Err(Error::out_of_range(format!(
                    "{}: epoch limit of {limit} reached",
                    self.epochs.name
                )));
            }
        }
        let batch = if self.epochs.shuffle {
            let mut order: Vec<usize> = (0..self.n).collect();
            order.shuffle(&mut self.rng);
            let rows = order
                .iter()
                .map(|&i| self.rows.index(i))
                .collect::<Result<Vec<_>>>()?;
            Tensor::stack(&rows)?
        } else {
            self.rows.clone()
        };
        self.queue.enqueue_many(vec![batch.into()])?;
        self.done += 1;
        Ok(())
    }
}

/// Builds the queue for `rows` and registers its runner in `pipeline`.
fn start_producer(
    pipeline: &mut Pipeline,
    rows: Tensor,
    epochs: &Epochs,
) -> Result<Arc<FifoQueue>> {
    let n = match rows.dims().first() {
        Some(&n) => n,
        None => {
            return Err(Error::invalid_argument(format!(
                "{}: the input must have at least one dimension, got a scalar",
                epochs.name
            )))
        }
    };
    if n == 0 {
        // Every epoch would be empty: with no epoch limit the runner would
        // spin forever, and with one it would deliver nothing.
        return Err(Error::invalid_argument(format!(
            "{}: the input is empty",
            epochs.name
        )));
    }
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
    let rng = match epochs.seed {
        Some(seed) => ChaCha8Rng::seed_from_u64(seed),
        None => ChaCha8Rng::from_entropy(),
    };
    let mut feeder = Feeder {
        rows,
        n,
        done: 0,
        epochs: epochs.clone(),
        rng,
        queue: queue.clone(),
    };
    let dyn_queue: Arc<dyn Queue> = queue.clone();
    pipeline.add_runner(
        QueueRunner::new(dyn_queue).with_op(move || feeder.step()),
    );
    Ok(queue)
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
        start_producer(self.pipeline, self.input.clone(), &self.epochs)
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
        let values: Vec<Bytes> = self
            .strings
            .iter()
            .map(|s| Bytes::from(s.clone()))
            .collect();
        start_producer(self.pipeline, Tensor::vector(values), &self.epochs)
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
        range_queue(self.pipeline, self.limit, &self.epochs)
    }
}

fn range_queue(
    pipeline: &mut Pipeline,
    limit: i32,
    epochs: &Epochs,
) -> Result<Arc<FifoQueue>> {
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
        let indices = range_queue(self.pipeline, limit, &self.epochs)?;
        Ok(SliceProducer {
            tensors: Arc::from(std::mem::take(&mut self.tensors)),
            indices,
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
#[derive(Debug, Clone)]
pub struct SliceProducer {
    tensors: Arc<[Tensor]>,
    indices: Arc<FifoQueue>,
}

impl SliceProducer {
    /// The next row of every tensor, in the order the tensors were given.
    ///
    /// # Errors
    ///
    /// [`Kind::OutOfRange`](crate::Kind::OutOfRange) after the last epoch;
    /// the errors of the index queue.
    pub fn dequeue(&self) -> Result<Vec<Tensor>> {
        let element = self.indices.dequeue()?;
        let index = element
            .first()
            .ok_or_else(|| Error::internal("empty index element"))?
            .dense()?
            .scalar_value::<i32>()?;
        let i = usize::try_from(index)
            .map_err(|_| Error::internal("negative row index"))?;
        self.tensors.iter().map(|t| t.index(i)).collect()
    }

    /// The preloaded tensors.
    pub fn tensors(&self) -> &Arc<[Tensor]> {
        &self.tensors
    }

    /// The queue of row indices.
    pub fn indices(&self) -> &Arc<FifoQueue> {
        &self.indices
    }
}
