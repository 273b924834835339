//! The priority queue.

use std::sync::Arc;

use crate::error::Result;
use crate::tensor::DType;

use super::batch::Batcher;
use super::core::Buffer;
use super::spec::{ComponentSpec, PartialShape, QueueSpec};
use super::tuple::{impl_queue, Element, TensorQueue};

/// One held element with its priority.
#[derive(Debug)]
struct Entry {
    priority: i64,
    item: Element,
}

/// Smallest priority first; equal priorities in the order TensorFlow's
/// queue gives them.
///
/// TensorFlow's `PriorityQueue` is a `std::priority_queue` compared on the
/// priority alone, so equal priorities leave in an order the heap's
/// algorithm decides (not arrival order: TensorFlow 2.21 gives priorities
/// `3, 9, 3, -1, 5` back as the elements 4, 1, 3, 5, 2). This heap is
/// written by hand, as libstdc++'s `push_heap` / `pop_heap`, rather than
/// `std::collections::BinaryHeap`, whose order for equal elements is
/// unspecified.
#[derive(Debug, Default)]
pub(crate) struct PriorityBuf {
    heap: Vec<Entry>,
}

impl PriorityBuf {
    fn priority(item: &Element) -> i64 {
        // The spec has checked that component 0 is an i64 scalar before
        // the element got here; MAX is unreachable.
        item.scalar_i64(0).unwrap_or(i64::MAX)
    }

    /// TensorFlow's comparator: `a` sorts below `b` (leaves after it)
    /// when its priority is larger.
    fn below(a: &Entry, b: &Entry) -> bool {
        a.priority > b.priority
    }

    /// libstdc++'s `__push_heap`: moves the entry at `hole` up while its
    /// parent sorts below it.
    fn sift_up(&mut self, mut hole: usize) {
        while hole > 0 {
            let parent = (hole - 1) / 2;
            if !PriorityBuf::below(&self.heap[parent], &self.heap[hole]) {
                break;
            }
            self.heap.swap(parent, hole);
            hole = parent;
        }
    }

    /// `std::priority_queue::push`: `push_back`, then `push_heap`.
    fn push_entry(&mut self, item: Element) {
        let priority = PriorityBuf::priority(&item);
        self.heap.push(Entry { priority, item });
        self.sift_up(self.heap.len() - 1);
    }

    /// `std::priority_queue::pop` after `top`: libstdc++'s `pop_heap`
    /// moves the last entry to the root's place and `__adjust_heap` takes
    /// the hole down to a leaf, always to the child that does not sort
    /// below the other (the right one on a tie), then sifts the moved
    /// entry up from there.
    fn pop_entry(&mut self) -> Option<Entry> {
        let last = self.heap.len().checked_sub(1)?;
        self.heap.swap(0, last);
        let top = self.heap.pop();
        let len = self.heap.len();
        let mut hole = 0;
        let mut second = 0;
        while len > 0 && second < (len - 1) / 2 {
            second = 2 * (second + 1);
            if PriorityBuf::below(&self.heap[second], &self.heap[second - 1]) {
                second -= 1;
            }
            self.heap.swap(hole, second);
            hole = second;
        }
        if len >= 2 && len.is_multiple_of(2) && second == (len - 2) / 2 {
            second = 2 * (second + 1);
            self.heap.swap(hole, second - 1);
            hole = second - 1;
        }
        if len > 0 {
            self.sift_up(hole);
        }
        top
    }
}

impl Buffer<Element> for PriorityBuf {
    /// Rows leave by priority, not in the order their batch came in.
    const SCATTERS_ROWS: bool = true;

    fn len(&self) -> usize {
        self.heap.len()
    }

    fn push(&mut self, item: Element) {
        self.push_entry(item);
    }

    fn pop(&mut self) -> Option<Element> {
        self.pop_entry().map(|e| e.item)
    }

    /// Pushes them back (TensorFlow's priority queue never puts back: its
    /// `dequeue_many` takes nothing until it can take all).
    fn put_back(&mut self, items: Vec<Element>) {
        for item in items {
            self.push_entry(item);
        }
    }
}

/// A bounded queue that dequeues the element with the smallest priority
/// first (TensorFlow's `PriorityQueue`); equal priorities come out in
/// the order TensorFlow's heap gives them, which is not arrival order.
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
    fn equal_priorities_leave_in_tensorflows_order() {
        // Priorities enqueued with values 0, 1, 2, ... and the values
        // TensorFlow 2.21's PriorityQueue dequeued (the same whether
        // enqueued one by one or with one enqueue_many).
        let cases: [(&[i64], &[i64]); 8] = [
            (&[3, 9, 3, -1, 5], &[3, 2, 0, 4, 1]),
            (&[1, 1, 1, 1, 1, 1, 1], &[0, 2, 5, 6, 4, 1, 3]),
            (
                &[2, 1, 2, 1, 2, 1, 2, 1, 0, 0],
                &[8, 9, 5, 7, 1, 3, 6, 2, 4, 0],
            ),
            (&[3, 3, 3, 1, 0, 3, 0, 3], &[4, 6, 3, 2, 5, 7, 0, 1]),
            (
                &[0, 3, 1, 3, 0, 1, 3, 3, 1, 2, 1],
                &[0, 4, 2, 5, 10, 8, 9, 6, 1, 3, 7],
            ),
            (&[1, 2, 2, 3, 3, 0, 3, 1, 3], &[5, 0, 7, 2, 1, 8, 6, 4, 3]),
            (
                &[2, 2, 3, 2, 3, 3, 0, 0, 2, 3, 2],
                &[6, 7, 0, 10, 1, 3, 8, 2, 5, 9, 4],
            ),
            (
                &[1, 3, 3, 1, 3, 1, 0, 3, 2, 3, 0, 2],
                &[6, 10, 0, 5, 3, 11, 8, 2, 9, 1, 4, 7],
            ),
        ];
        for (priorities, want) in cases {
            let q =
                PriorityQueue::builder(16, QueueSpec::dtypes([DType::I64]))
                    .build()
                    .unwrap();
            for (i, &p) in priorities.iter().enumerate() {
                q.enqueue(vec![
                    Value::Dense(Tensor::scalar(p)),
                    Value::Dense(Tensor::scalar(i as i64)),
                ])
                .unwrap();
            }
            let got: Vec<i64> = (0..priorities.len())
                .map(|_| {
                    q.dequeue().unwrap()[1]
                        .dense()
                        .unwrap()
                        .scalar_value::<i64>()
                        .unwrap()
                })
                .collect();
            assert_eq!(got, want, "priorities {priorities:?}");
        }
    }

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
