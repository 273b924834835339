//! The priority queue.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::sync::Arc;

use crate::error::Result;
use crate::tensor::DType;

use super::batch::Batcher;
use super::core::Buffer;
use super::spec::{ComponentSpec, PartialShape, QueueSpec};
use super::tuple::{impl_queue, Element, TensorQueue};

/// One held element with its sort key.
#[derive(Debug)]
struct Entry {
    priority: i64,
    /// Arrival order, to keep equal priorities first in, first out.
    /// Put-back elements get negative numbers so they come out first.
    seq: i64,
    item: Element,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Entry) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Entry {}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Entry) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Entry {
    fn cmp(&self, other: &Entry) -> Ordering {
        // BinaryHeap is a max-heap: reverse so the smallest key pops first.
        (other.priority, other.seq).cmp(&(self.priority, self.seq))
    }
}

/// Smallest priority first; equal priorities in arrival order.
#[derive(Debug, Default)]
pub(crate) struct PriorityBuf {
    heap: BinaryHeap<Entry>,
    next_seq: i64,
    next_back_seq: i64,
}

impl PriorityBuf {
    fn priority(item: &Element) -> i64 {
        // The spec has checked that component 0 is an i64 scalar before
        // the element got here; MAX is unreachable.
        item.scalar_i64(0).unwrap_or(i64::MAX)
    }
}

impl Buffer<Element> for PriorityBuf {
    /// Rows leave by priority, not in the order their batch came in.
    const SCATTERS_ROWS: bool = true;

    fn len(&self) -> usize {
        self.heap.len()
    }

    fn push(&mut self, item: Element) {
        let priority = PriorityBuf::priority(&item);
        self.heap.push(Entry {
            priority,
            seq: self.next_seq,
            item,
        });
        self.next_seq += 1;
    }

    fn pop(&mut self) -> Option<Element> {
        self.heap.pop().map(|e| e.item)
    }

    fn put_back(&mut self, items: Vec<Element>) {
        for item in items.into_iter().rev() {
            self.next_back_seq -= 1;
            let priority = PriorityBuf::priority(&item);
            self.heap.push(Entry {
                priority,
                seq: self.next_back_seq,
                item,
            });
        }
    }
}

/// A bounded queue that dequeues the element with the smallest priority
/// first (TensorFlow's `PriorityQueue`); equal priorities come out in
/// arrival order.
///
/// Component 0 of every element is the priority, an `i64` scalar named
/// `priority`; the builder prepends it to the spec it is given, and
/// dequeues return it.
///
/// ```
/// use feedstock::queue::{PriorityQueue, Queue, QueueSpec};
/// use feedstock::{DType, Tensor};
///
/// let q = PriorityQueue::builder(8, QueueSpec::dtypes([DType::String]))
///     .build()?;
/// q.enqueue(vec![Tensor::scalar(5i64).into(), Tensor::string("late").into()])?;
/// q.enqueue(vec![Tensor::scalar(1i64).into(), Tensor::string("early").into()])?;
/// let e = q.dequeue()?;
/// assert_eq!(e[0].dense()?.scalar_value::<i64>()?, 1);
/// # Ok::<(), feedstock::Error>(())
/// ```
#[derive(Debug)]
pub struct PriorityQueue {
    inner: TensorQueue<PriorityBuf>,
}

impl PriorityQueue {
    /// A builder for a queue of at most `capacity` elements: an `i64`
    /// priority followed by components matching `spec`.
    pub fn builder(capacity: usize, spec: QueueSpec) -> PriorityQueueBuilder {
        PriorityQueueBuilder {
            capacity,
            spec,
            name: "priority_queue".to_owned(),
        }
    }
}

impl_queue!(PriorityQueue);

/// Configures and builds a [`PriorityQueue`].
#[derive(Debug, Clone)]
pub struct PriorityQueueBuilder {
    /// The most elements the queue holds.
    capacity: usize,
    /// The components after the priority.
    spec: QueueSpec,
    /// The name used in error messages.
    name: String,
}

impl PriorityQueueBuilder {
    /// Names the queue (default `priority_queue`).
    pub fn name(
        &mut self,
        name: impl Into<String>,
    ) -> &mut PriorityQueueBuilder {
        self.name = name.into();
        self
    }

    /// Builds the queue.
    ///
    /// # Errors
    /// InvalidArgument for a zero capacity or an
    /// [inferred](QueueSpec::infer) spec.
    pub fn build(&self) -> Result<Arc<PriorityQueue>> {
        super::check_capacity(self.capacity)?;
        if self.spec.is_inferred() {
            return Err(crate::Error::invalid_argument(format!(
                "priority queue '{}' needs a declared spec",
                self.name
            )));
        }
        let mut spec = QueueSpec::new().component(
            ComponentSpec::new(DType::I64)
                .shape(PartialShape::scalar())
                .name("priority"),
        );
        for c in self.spec.components() {
            spec = spec.component(c.clone());
        }
        Ok(Arc::new(PriorityQueue {
            inner: TensorQueue::new(
                self.name.clone(),
                self.capacity,
                spec,
                Batcher::Stack,
                PriorityBuf::default(),
            ),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::Queue;
    use crate::tensor::{Tensor, Value};

    #[test]
    fn rows_of_an_enqueue_many_batch_are_held_on_their_own() {
        // Rows leave by priority: were they views of their batch, the
        // batch would stay alive until its last row left, however long
        // the lowest priority waits.
        let q = PriorityQueue::builder(8, QueueSpec::dtypes([DType::F32]))
            .build()
            .unwrap();
        q.enqueue_many(vec![
            Value::Dense(Tensor::vector(vec![3i64, 0, 2, 1])),
            Value::Dense(Tensor::vector(vec![3.0f32, 0.0, 2.0, 1.0])),
        ])
        .unwrap();
        q.inner.core.with_buf(|buf| {
            assert!(buf
                .heap
                .iter()
                .all(|e| matches!(e.item, Element::Tuple(_))))
        });
        let out = q.dequeue_many(4).unwrap();
        assert_eq!(
            out[1].dense().unwrap().as_slice::<f32>().unwrap(),
            &[0.0, 1.0, 2.0, 3.0]
        );
    }
}
