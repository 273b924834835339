//! The first-in, first-out queue.

use std::collections::VecDeque;
use std::sync::Arc;

use crate::error::Result;

use super::batch::Batcher;
use super::core::Buffer;
use super::spec::QueueSpec;
use super::tuple::{impl_queue, Element, TensorQueue};

/// First in, first out.
#[derive(Debug)]
pub(crate) struct FifoBuf<T>(VecDeque<T>);

impl<T> Default for FifoBuf<T> {
    fn default() -> FifoBuf<T> {
        FifoBuf(VecDeque::new())
    }
}

impl<T: Send> Buffer<T> for FifoBuf<T> {
    fn len(&self) -> usize {
        self.0.len()
    }

    fn push(&mut self, item: T) {
        self.0.push_back(item);
    }

    fn pop(&mut self) -> Option<T> {
        self.0.pop_front()
    }

    fn put_back(&mut self, items: Vec<T>) {
        for item in items.into_iter().rev() {
            self.0.push_front(item);
        }
    }
}

/// A bounded first-in, first-out queue of tensor tuples (TensorFlow's
/// `FIFOQueue`). See the [`Queue`](super::Queue) trait for its operations.
///
/// ```
/// use feedstock::queue::{FifoQueue, Queue, QueueSpec};
/// use feedstock::Tensor;
///
/// let files = FifoQueue::builder(32, QueueSpec::scalar_string())
///     .name("filenames")
///     .build()?;
/// files.enqueue(vec![Tensor::string("a.tfrecord").into()])?;
/// assert_eq!(files.size(), 1);
/// # Ok::<(), feedstock::Error>(())
/// ```
#[derive(Debug)]
pub struct FifoQueue {
    inner: TensorQueue<FifoBuf<Element>>,
}

impl FifoQueue {
    /// A builder for a queue of at most `capacity` elements matching
    /// `spec`.
    pub fn builder(capacity: usize, spec: QueueSpec) -> FifoQueueBuilder {
        FifoQueueBuilder {
            capacity,
            spec,
            name: "fifo_queue".to_owned(),
        }
    }
}

impl_queue!(FifoQueue);

/// Configures and builds a [`FifoQueue`].
#[derive(Debug, Clone)]
pub struct FifoQueueBuilder {
    /// The most elements the queue holds.
    capacity: usize,
    /// The element declaration.
    spec: QueueSpec,
    /// The name used in error messages.
    name: String,
}

impl FifoQueueBuilder {
    /// Names the queue (default `fifo_queue`); errors mention it.
    pub fn name(&mut self, name: impl Into<String>) -> &mut FifoQueueBuilder {
        self.name = name.into();
        self
    }

    /// Builds the queue.
    ///
    /// # Errors
    /// InvalidArgument for a zero capacity.
    pub fn build(&self) -> Result<Arc<FifoQueue>> {
        super::check_capacity(self.capacity)?;
        Ok(Arc::new(FifoQueue {
            inner: TensorQueue::new(
                self.name.clone(),
                self.capacity,
                self.spec.clone(),
                Batcher::Stack,
                FifoBuf::default(),
            ),
        }))
    }
}
