//! The part every tensor-tuple queue shares: checking elements against the
//! spec, splitting `enqueue_many` input, batching dequeued elements, all
//! over the generic blocking [`Core`].

use std::time::{Duration, Instant};

use crate::error::Result;
use crate::tensor::Value;

use super::batch::Batcher;
use super::core::{Buffer, Core};
use super::spec::QueueSpec;
use super::{DequeueMode, QueueStats};

/// One element: a tuple of components.
pub(crate) type Element = Vec<Value>;

/// A queue of tensor tuples over the buffer `B`.
pub(crate) struct TensorQueue<B> {
    pub(crate) core: Core<Element, B>,
    spec: QueueSpec,
    batcher: Batcher,
}

impl<B: Buffer<Element>> std::fmt::Debug for TensorQueue<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.core.fmt(f)
    }
}

/// The deadline `timeout` from now; `None` (wait forever) when absent or
/// too far in the future to represent.
fn deadline(timeout: Option<Duration>) -> Option<Instant> {
    timeout.and_then(|t| Instant::now().checked_add(t))
}

impl<B: Buffer<Element>> TensorQueue<B> {
    pub(crate) fn new(
        name: String,
        capacity: usize,
        spec: QueueSpec,
        batcher: Batcher,
        buf: B,
    ) -> TensorQueue<B> {
        TensorQueue {
            core: Core::new(name, capacity, buf),
            spec,
            batcher,
        }
    }

    pub(crate) fn name(&self) -> &str {
        self.core.name()
    }

    pub(crate) fn spec(&self) -> &QueueSpec {
        &self.spec
    }

    pub(crate) fn capacity(&self) -> usize {
        self.core.capacity()
    }

    pub(crate) fn size(&self) -> usize {
        self.core.size()
    }

    pub(crate) fn stats(&self) -> QueueStats {
        self.core.stats()
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.core.is_closed()
    }

    pub(crate) fn close(&self, cancel_pending_enqueues: bool) -> bool {
        self.core.close(cancel_pending_enqueues)
    }

    pub(crate) fn enqueue_elements(
        &self,
        elements: Vec<Element>,
        timeout: Option<Duration>,
    ) -> Result<()> {
        for e in &elements {
            self.spec.check(e).map_err(|e| self.context(e))?;
        }
        self.core.put(elements, deadline(timeout))
    }

    pub(crate) fn enqueue_batch(
        &self,
        components: Vec<Value>,
        timeout: Option<Duration>,
    ) -> Result<()> {
        let elements = self
            .spec
            .split_batch(components)
            .map_err(|e| self.context(e))?;
        self.core.put(elements, deadline(timeout))
    }

    pub(crate) fn dequeue_elements(
        &self,
        n: usize,
        mode: DequeueMode,
        timeout: Option<Duration>,
    ) -> Result<Vec<Element>> {
        let partial = mode == DequeueMode::UpTo;
        self.core.take(n, partial, deadline(timeout))
    }

    pub(crate) fn dequeue_batch(
        &self,
        n: usize,
        mode: DequeueMode,
        timeout: Option<Duration>,
    ) -> Result<Vec<Value>> {
        let elements = self.dequeue_elements(n, mode, timeout)?;
        if let Err(e) = self.batcher.check(&self.spec, &elements) {
            self.core.put_back(elements);
            return Err(self.context(e));
        }
        self.batcher.build(&self.spec, elements)
    }

    fn context(&self, e: crate::Error) -> crate::Error {
        let msg = format!("queue '{}': {}", self.name(), e.message());
        e.with_message(msg)
    }
}

/// Implements [`Queue`](super::Queue) for a wrapper struct whose `inner`
/// field is a [`TensorQueue`].
macro_rules! impl_queue {
    ($ty:ty) => {
        impl $crate::queue::Queue for $ty {
            fn name(&self) -> &str {
                self.inner.name()
            }
            fn spec(&self) -> &$crate::queue::QueueSpec {
                self.inner.spec()
            }
            fn capacity(&self) -> usize {
                self.inner.capacity()
            }
            fn size(&self) -> usize {
                self.inner.size()
            }
            fn stats(&self) -> $crate::queue::QueueStats {
                self.inner.stats()
            }
            fn is_closed(&self) -> bool {
                self.inner.is_closed()
            }
            fn close(&self, cancel_pending_enqueues: bool) -> bool {
                self.inner.close(cancel_pending_enqueues)
            }
            fn enqueue_elements(
                &self,
                elements: Vec<Vec<$crate::Value>>,
                timeout: Option<std::time::Duration>,
            ) -> $crate::Result<()> {
                self.inner.enqueue_elements(elements, timeout)
            }
            fn enqueue_batch(
                &self,
                components: Vec<$crate::Value>,
                timeout: Option<std::time::Duration>,
            ) -> $crate::Result<()> {
                self.inner.enqueue_batch(components, timeout)
            }
            fn dequeue_elements(
                &self,
                n: usize,
                mode: $crate::queue::DequeueMode,
                timeout: Option<std::time::Duration>,
            ) -> $crate::Result<Vec<Vec<$crate::Value>>> {
                self.inner.dequeue_elements(n, mode, timeout)
            }
            fn dequeue_batch(
                &self,
                n: usize,
                mode: $crate::queue::DequeueMode,
                timeout: Option<std::time::Duration>,
            ) -> $crate::Result<Vec<$crate::Value>> {
                self.inner.dequeue_batch(n, mode, timeout)
            }
            fn register_producers(&self, threads: usize) {
                self.inner.core.register_producers(threads)
            }
            fn producers_started(&self, threads: usize) {
                self.inner.core.producers_started(threads)
            }
            fn producer_ended(&self) {
                self.inner.core.producer_ended()
            }
        }
    };
}

pub(crate) use impl_queue;
