//! The random-shuffle queue.

use std::collections::VecDeque;
use std::sync::Arc;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::error::{Error, Result};

use super::batch::Batcher;
use super::core::Buffer;
use super::spec::QueueSpec;
use super::tuple::{impl_queue, Element, TensorQueue};

/// A shuffle buffer: a pool of at most `min_after_dequeue + 1` elements
/// from which each dequeue draws uniformly, and a FIFO overflow of later
/// arrivals that refills the pool as elements leave it.
///
/// While the queue is open a dequeue only happens when more than
/// `min_after_dequeue` elements are held, that is when the pool is full.
/// So the pool a dequeue draws from is always the first
/// `min_after_dequeue + 1 + k` arrivals minus the `k` already drawn,
/// whatever the timing of the producer and the consumer: the order out is
/// a function of the order in and the seed.
#[derive(Debug)]
pub(crate) struct ShuffleBuf<T> {
    /// The elements a dequeue draws from.
    pool: Vec<T>,
    /// Later arrivals, oldest first; empty unless the pool is full.
    overflow: VecDeque<T>,
    /// Elements kept back while the queue is open.
    min_after_dequeue: usize,
    rng: ChaCha8Rng,
}

impl<T> ShuffleBuf<T> {
    fn new(min_after_dequeue: usize, seed: u64) -> ShuffleBuf<T> {
        ShuffleBuf {
            pool: Vec::new(),
            overflow: VecDeque::new(),
            min_after_dequeue,
            rng: ChaCha8Rng::seed_from_u64(seed),
        }
    }

    /// The most elements the pool holds.
    fn pool_size(&self) -> usize {
        self.min_after_dequeue + 1
    }
}

impl<T: Send> Buffer<T> for ShuffleBuf<T> {
    fn len(&self) -> usize {
        self.pool.len() + self.overflow.len()
    }

    fn min_after_dequeue(&self) -> Option<usize> {
        Some(self.min_after_dequeue)
    }

    fn push(&mut self, item: T) {
        if self.overflow.is_empty() && self.pool.len() < self.pool_size() {
            self.pool.push(item);
        } else {
            self.overflow.push_back(item);
        }
    }

    fn pop(&mut self) -> Option<T> {
        if self.pool.is_empty() {
            return None;
        }
        // Every element of the pool is equally likely. The oldest waiting
        // arrival then joins the end of the pool, exactly as if it had
        // arrived just after this dequeue: the pool's layout, and so the
        // order out, must not depend on whether it was already waiting.
        let i = self.rng.gen_range(0..self.pool.len());
        let item = self.pool.swap_remove(i);
        if let Some(next) = self.overflow.pop_front() {
            self.pool.push(next);
        }
        Some(item)
    }

    fn put_back(&mut self, items: Vec<T>) {
        // Into the pool while it has room; the rest go ahead of the
        // overflow, in the order they were taken.
        let room = self.pool_size().saturating_sub(self.pool.len());
        let mut items = items.into_iter();
        self.pool.extend(items.by_ref().take(room));
        for item in items.rev() {
            self.overflow.push_front(item);
        }
    }
}

/// A bounded queue that dequeues elements in random order (TensorFlow's
/// `RandomShuffleQueue`, what `shuffle_batch` uses).
///
/// The queue keeps a *pool* of at most `min_after_dequeue + 1` elements,
/// filled in arrival order, and each dequeue takes an element chosen
/// uniformly from the pool; elements arriving while the pool is full wait
/// in a FIFO overflow and refill the pool, oldest first, as elements
/// leave it (tf.data's shuffle buffer). While the queue is open it keeps
/// at least `min_after_dequeue` elements: a dequeue waits until it can
/// take its elements and still leave that many. Once the queue is closed
/// the limit is lifted and the pool drains. The capacity counts pool and
/// overflow together.
///
/// This differs from TensorFlow's `RandomShuffleQueue`, which draws among
/// *every* element held, so that its order depends on how far the
/// producers had got when each dequeue ran. Here a dequeue only happens
/// with a full pool, whose contents depend on the input order alone: with
/// a fixed seed, one producer and one consumer, the order is the same on
/// every run, even while input is still arriving. The price: with
/// `min_after_dequeue = 0` the pool holds one element and the queue is a
/// FIFO; `min_after_dequeue` is the shuffle's window, as in tf.data.
///
/// ```
/// use feedstock::queue::{Queue, QueueSpec, RandomShuffleQueue};
/// use feedstock::{DType, Tensor};
///
/// let q = RandomShuffleQueue::builder(100, QueueSpec::dtypes([DType::I64]))
///     .min_after_dequeue(10)
///     .seed(7)
///     .build()?;
/// q.enqueue_many(vec![Tensor::vector((0..20i64).collect()).into()])?;
/// // 20 held, 10 must stay: at most 10 can be dequeued now.
/// let batch = q.dequeue_many(10)?;
/// assert_eq!(batch[0].dense()?.dims(), &[10]);
/// q.close(false);
/// let rest = q.dequeue_up_to(100)?;
/// assert_eq!(rest[0].dense()?.dims(), &[10]);
/// # Ok::<(), feedstock::Error>(())
/// ```
#[derive(Debug)]
pub struct RandomShuffleQueue {
    inner: TensorQueue<ShuffleBuf<Element>>,
}

impl RandomShuffleQueue {
    /// A builder for a queue of at most `capacity` elements matching
    /// `spec`.
    pub fn builder(
        capacity: usize,
        spec: QueueSpec,
    ) -> RandomShuffleQueueBuilder {
        RandomShuffleQueueBuilder {
            capacity,
            spec,
            min_after_dequeue: 0,
            seed: None,
            name: "random_shuffle_queue".to_owned(),
        }
    }
}

impl_queue!(RandomShuffleQueue);

/// Configures and builds a [`RandomShuffleQueue`].
#[derive(Debug, Clone)]
pub struct RandomShuffleQueueBuilder {
    /// The most elements the queue holds.
    capacity: usize,
    /// The element declaration.
    spec: QueueSpec,
    /// Elements kept back from dequeues while open.
    min_after_dequeue: usize,
    /// The RNG seed; `None` draws one from the OS.
    seed: Option<u64>,
    /// The name used in error messages.
    name: String,
}

impl RandomShuffleQueueBuilder {
    /// Elements the open queue always keeps (default 0).
    pub fn min_after_dequeue(
        &mut self,
        n: usize,
    ) -> &mut RandomShuffleQueueBuilder {
        self.min_after_dequeue = n;
        self
    }

    /// Seeds the shuffle (default: a random seed).
    pub fn seed(&mut self, seed: u64) -> &mut RandomShuffleQueueBuilder {
        self.seed = Some(seed);
        self
    }

    /// Names the queue (default `random_shuffle_queue`).
    pub fn name(
        &mut self,
        name: impl Into<String>,
    ) -> &mut RandomShuffleQueueBuilder {
        self.name = name.into();
        self
    }

    /// Builds the queue.
    ///
    /// # Errors
    /// InvalidArgument for a zero capacity or `min_after_dequeue` not below
    /// the capacity (no dequeue could ever succeed while open).
    pub fn build(&self) -> Result<Arc<RandomShuffleQueue>> {
        super::check_capacity(self.capacity)?;
        if self.min_after_dequeue >= self.capacity {
            return Err(Error::invalid_argument(format!(
                "min_after_dequeue ({}) must be below the capacity ({})",
                self.min_after_dequeue, self.capacity
            )));
        }
        let seed = self.seed.unwrap_or_else(|| rand::thread_rng().gen());
        Ok(Arc::new(RandomShuffleQueue {
            inner: TensorQueue::new(
                self.name.clone(),
                self.capacity,
                self.spec.clone(),
                Batcher::Stack,
                ShuffleBuf::new(self.min_after_dequeue, seed),
            ),
        }))
    }
}
