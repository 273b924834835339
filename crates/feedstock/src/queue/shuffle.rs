//! The random-shuffle queue.

use std::sync::Arc;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::error::{Error, Result};

use super::batch::Batcher;
use super::core::Buffer;
use super::spec::QueueSpec;
use super::tuple::{impl_queue, Element, TensorQueue};

/// Holds elements unordered; each dequeue takes a uniformly random one.
#[derive(Debug)]
pub(crate) struct ShuffleBuf<T> {
    items: Vec<T>,
    min_after_dequeue: usize,
    rng: ChaCha8Rng,
}

impl<T: Send> Buffer<T> for ShuffleBuf<T> {
    fn len(&self) -> usize {
        self.items.len()
    }

    fn held_back(&self) -> usize {
        self.min_after_dequeue
    }

    fn push(&mut self, item: T) {
        self.items.push(item);
    }

    fn pop(&mut self) -> Option<T> {
        if self.items.is_empty() {
            return None;
        }
        // Every held element is equally likely, whatever order the
        // swap_removes have left the vector in.
        let i = self.rng.gen_range(0..self.items.len());
        Some(self.items.swap_remove(i))
    }

    fn put_back(&mut self, items: Vec<T>) {
        self.items.extend(items);
    }
}

/// A bounded queue that dequeues elements in random order (TensorFlow's
/// `RandomShuffleQueue`, what `shuffle_batch` uses).
///
/// Each dequeue takes an element chosen uniformly among those held. While
/// the queue is open it keeps at least `min_after_dequeue` elements, so
/// that the elements are well mixed: a dequeue waits until it can take its
/// elements and still leave that many. Once the queue is closed the limit
/// is lifted and the queue drains. With a fixed seed, one producer and one
/// consumer, the order is the same on every run.
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
                ShuffleBuf {
                    items: Vec::new(),
                    min_after_dequeue: self.min_after_dequeue,
                    rng: ChaCha8Rng::seed_from_u64(seed),
                },
            ),
        }))
    }
}
