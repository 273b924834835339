//! Batching assembled by hand from a queue, a queue runner and a
//! pipeline: what `tf.train.batch` and `tf.train.shuffle_batch` do.
//!
//! A stand-in for the library's `input::batch` (being written on another
//! branch): the same shape — a closure producing one example, cloned into
//! each runner thread, enqueued into a FIFO or random-shuffle queue whose
//! batches the training loop dequeues — so that switching to
//! `shuffle_batch` / `batch` changes only this file's callers.

use std::sync::Arc;

use feedstock::coord::{Pipeline, QueueRunner};
use feedstock::queue::{
    ComponentSpec, FifoQueue, PartialShape, Queue, QueueSpec,
    RandomShuffleQueue,
};
use feedstock::{DType, Result, Tensor, Value};

use super::data::{FEATURES, IMAGE, LABEL};

/// The components of one digit example: `image` f32 `[64]` and `label`
/// i64 scalar, in that order.
pub(crate) fn example_spec() -> QueueSpec {
    QueueSpec::new()
        .component(
            ComponentSpec::new(DType::F32).shape([FEATURES]).name(IMAGE),
        )
        .component(
            ComponentSpec::new(DType::I64)
                .shape(PartialShape::scalar())
                .name(LABEL),
        )
}

/// How the example queue is built.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BatchConfig {
    /// Examples per batch.
    pub(crate) batch_size: usize,
    /// Runner threads, each calling its own clone of the closure.
    pub(crate) threads: usize,
    /// The queue's capacity.
    pub(crate) capacity: usize,
    /// `Some((min_after_dequeue, seed))` for a shuffling queue
    /// (`shuffle_batch`), `None` for a FIFO (`batch`).
    pub(crate) shuffle: Option<(usize, u64)>,
}

/// A batching queue the training loop takes batches from.
#[derive(Debug, Clone)]
pub(crate) struct Batches {
    /// The example queue.
    queue: Arc<dyn Queue>,
    /// Examples per batch.
    batch_size: usize,
}

impl Batches {
    /// Registers in `pipeline` a runner whose `config.threads` threads
    /// each call a clone of `example` and enqueue the example it returns,
    /// until it returns OutOfRange; the last thread to end closes the
    /// queue.
    ///
    /// # Errors
    ///
    /// InvalidArgument for a zero capacity or batch size, or a capacity
    /// that cannot hold `min_after_dequeue` plus one batch.
    pub(crate) fn build<F>(
        pipeline: &mut Pipeline,
        name: &str,
        config: BatchConfig,
        example: F,
    ) -> Result<Batches>
    where
        F: FnMut() -> Result<Vec<Value>> + Clone + Send + 'static,
    {
        let BatchConfig {
            batch_size,
            threads,
            capacity,
            shuffle,
        } = config;
        if batch_size == 0 || threads == 0 {
            return Err(feedstock::Error::invalid_argument(
                "batch_size and threads must be at least 1",
            ));
        }
        let queue: Arc<dyn Queue> = match shuffle {
            None => FifoQueue::builder(capacity, example_spec())
                .name(name)
                .build()?,
            Some((min_after_dequeue, seed)) => {
                if min_after_dequeue + batch_size > capacity {
                    return Err(feedstock::Error::invalid_argument(format!(
                        "capacity {capacity} cannot hold min_after_dequeue \
                         {min_after_dequeue} plus a batch of {batch_size}"
                    )));
                }
                RandomShuffleQueue::builder(capacity, example_spec())
                    .min_after_dequeue(min_after_dequeue)
                    .seed(seed)
                    .name(name)
                    .build()?
            }
        };
        let mut runner = QueueRunner::new(Arc::clone(&queue));
        for _ in 0..threads {
            let mut example = example.clone();
            let queue = Arc::clone(&queue);
            runner.add_op(move || queue.enqueue(example()?));
        }
        pipeline.add_runner(runner);
        Ok(Batches { queue, batch_size })
    }

    /// The next batch as `(images [b, 64], labels [b])`, `b` being the
    /// batch size except for a smaller final batch (TensorFlow's
    /// `allow_smaller_final_batch`: no example is dropped).
    ///
    /// # Errors
    ///
    /// OutOfRange once the queue is closed and drained: the end of input.
    /// The queue's other errors.
    pub(crate) fn next_batch(&self) -> Result<(Tensor, Tensor)> {
        let mut batch = self.queue.dequeue_up_to(self.batch_size)?;
        let labels = batch.pop().map(Value::into_dense);
        let images = batch.pop().map(Value::into_dense);
        match (images, labels) {
            (Some(images), Some(labels)) => Ok((images?, labels?)),
            _ => Err(feedstock::Error::internal(
                "a digits batch has two components",
            )),
        }
    }

    /// How full the example queue is now, from 0 to 1.
    pub(crate) fn fraction_full(&self) -> f64 {
        self.queue.stats().fraction_full()
    }
}
