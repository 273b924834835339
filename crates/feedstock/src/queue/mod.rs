//! Bounded blocking queues with TensorFlow's semantics.
//!
//! # Brief overview
//!
//! A queue holds *elements*, each a tuple of components (`Vec<Value>`),
//! declared up front by a [`QueueSpec`] (dtype, dense or sparse, and an
//! optional partial shape per component). Four kinds share the [`Queue`]
//! trait, so runners and readers hold "a queue" as `Arc<dyn Queue>`:
//!
//! * [`FifoQueue`]: first in, first out;
//! * [`RandomShuffleQueue`]: dequeues a uniformly random element from a
//!   pool of the `min_after_dequeue + 1` oldest elements held, keeping at
//!   least `min_after_dequeue` while open (seeded with ChaCha);
//! * [`PaddingFifoQueue`]: a FIFO whose batches pad each dense component to
//!   the largest shape in the batch (`dynamic_pad`);
//! * [`PriorityQueue`]: component 0 is an `i64` scalar priority; smallest
//!   first, equal priorities in the order TensorFlow's heap gives them.
//!
//! ```
//! use std::sync::Arc;
//! use feedstock::queue::{FifoQueue, Queue, QueueSpec};
//! use feedstock::{DType, Kind, Tensor};
//!
//! let q = FifoQueue::builder(10, QueueSpec::dtypes([DType::I64])).build()?;
//! q.enqueue_many(vec![Tensor::vector(vec![1i64, 2, 3]).into()])?;
//! let batch = q.dequeue_many(2)?;
//! assert_eq!(batch[0].dense()?.as_slice::<i64>()?, &[1, 2]);
//!
//! q.close(false);
//! // What is left can still be dequeued, then the queue reports the end.
//! assert_eq!(q.dequeue()?[0].dense()?.scalar_value::<i64>()?, 3);
//! assert_eq!(q.dequeue().unwrap_err().kind(), Kind::OutOfRange);
//! assert_eq!(q.enqueue(vec![Tensor::scalar(4i64).into()]).unwrap_err().kind(),
//!            Kind::Cancelled);
//! # Ok::<(), feedstock::Error>(())
//! ```
//!
//! # Semantics (TensorFlow's, made stricter)
//!
//! * Every enqueued element is checked against the spec; a mismatch is
//!   InvalidArgument naming the component.
//! * After [`Queue::close`], new enqueues fail Cancelled; dequeues drain
//!   what is left and then fail OutOfRange; `dequeue_many(n)` with fewer
//!   than `n` left fails OutOfRange and *keeps* them, while
//!   `dequeue_up_to(n)` returns them; a shuffle queue stops holding back
//!   `min_after_dequeue`. `close(true)` also fails enqueues already
//!   blocked, with Cancelled; `close(false)` lets them finish first and
//!   only then lets dequeues see the end, so no element of a successful
//!   enqueue is ever left unread (see [`Queue::close`]).
//! * Enqueue calls are served in arrival order, one at a time: a call
//!   never gets an element in before an earlier call still waiting for
//!   room, and the rows of one `enqueue_many` are contiguous in the queue
//!   (dequeues may still take them in several batches).
//! * [`Queue::cancel`] (a whole pipeline's, in TensorFlow a session's
//!   close) fails every blocked and later operation with Cancelled: a
//!   dequeue gets OutOfRange only when the queue was closed and drained,
//!   Cancelled only when it was cancelled.
//! * A shuffle queue draws from a pool of `min_after_dequeue + 1`
//!   elements, the rest waiting in arrival order, rather than from every
//!   element held as TensorFlow does. So its order is a function of the
//!   input order and the seed alone (one producer, one consumer), even
//!   while input is still arriving; in TensorFlow it depends on thread
//!   timing. See [`RandomShuffleQueue`].
//! * Every blocking operation has a `_timeout` form failing
//!   DeadlineExceeded. A `dequeue_many` or `dequeue_up_to` that fails after
//!   taking some elements puts them back (TensorFlow drops them).
//! * No silent hangs: a queue knows its producer threads (registered by
//!   [`coord::Pipeline`](crate::coord::Pipeline)); a dequeue that would
//!   block while those were never started, or have all ended without
//!   closing the queue, fails FailedPrecondition. A queue with no
//!   registered producer (fed by the caller's own threads) blocks.
//!
//! # Design
//!
//! The blocking machinery (one mutex, per-waiter condition variables,
//! wake only whoever can now proceed; see `core.rs`) is written once,
//! generic over the element type and the buffer discipline; the tensor
//! tuple queues are thin layers that check elements and build batches.
//! The machinery is hand-written rather than taken from a channel crate
//! because TensorFlow's semantics (batch dequeues that wait for `n`,
//! shuffle hold-back, close that drains, put-back on failure, producer
//! accounting) are not a channel's.
//!
//! Memory: a FIFO queue fed by `enqueue_many` keeps each batch whole until
//! its last row has left. A shuffle queue whose components are all
//! numeric (not bool) dense tensors of fully defined shapes keeps its rows
//! in fixed-size slots of one shared store (`slab.rs`), copied in by the
//! producers and straight out into each batch: its memory is at most the
//! capacity's worth of rows plus those on their way in or out, reused
//! from row to row and freed with the queue. Other elements are kept as
//! tuples of their own.

mod batch;
mod core;
mod element;
mod fifo;
mod padding;
mod priority;
mod shuffle;
mod slab;
mod spec;
mod tuple;

use std::fmt;
use std::time::Duration;

use crate::error::{Error, Result};
use crate::tensor::Value;

pub use fifo::{FifoQueue, FifoQueueBuilder};
pub use padding::{PaddingFifoQueue, PaddingFifoQueueBuilder};
pub use priority::{PriorityQueue, PriorityQueueBuilder};
pub use shuffle::{RandomShuffleQueue, RandomShuffleQueueBuilder};
pub use spec::{ComponentSpec, Layout, PartialShape, QueueSpec};

/// What a batch dequeue does when the queue is closed with fewer than the
/// requested number of elements left.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DequeueMode {
    /// Fail OutOfRange and leave the elements in the queue
    /// (`dequeue_many`).
    Many,
    /// Return the elements left, if any (`dequeue_up_to`).
    UpTo,
}

/// A snapshot of a queue's counters, cheap to take at any time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct QueueStats {
    /// Elements held now.
    pub size: usize,
    /// The most elements the queue holds.
    pub capacity: usize,
    /// For a shuffle queue, the elements the open queue keeps back.
    pub min_after_dequeue: Option<usize>,
    /// Elements enqueued since creation.
    pub enqueued: u64,
    /// Elements dequeued (and not put back) since creation.
    pub dequeued: u64,
    /// Whether the queue is closed.
    pub closed: bool,
    /// Enqueue calls blocked right now: waiting for room, or for an
    /// earlier enqueue call to finish.
    pub blocked_enqueues: usize,
    /// Dequeue calls blocked right now.
    pub blocked_dequeues: usize,
}

impl QueueStats {
    /// How full the queue is, from 0 to 1 (TensorFlow's "fraction of
    /// capacity full" summary).
    pub fn fraction_full(&self) -> f64 {
        if self.capacity == 0 {
            0.0
        } else {
            self.size as f64 / self.capacity as f64
        }
    }

    /// For a shuffle queue, how full the part of the queue above
    /// `min_after_dequeue` is, from 0 to 1: `(size - min) / (capacity -
    /// min)`, clamped at 0 (TensorFlow's
    /// `fraction_over_{min}_of_{capacity - min}_full` summary). Above 0
    /// means an element can be taken without waiting.
    pub fn fraction_over_min(&self) -> Option<f64> {
        let min = self.min_after_dequeue?;
        let room = self.capacity.saturating_sub(min);
        if room == 0 {
            return Some(0.0);
        }
        Some(self.size.saturating_sub(min) as f64 / room as f64)
    }
}

/// A bounded blocking queue of tensor tuples; see the [module
/// docs](self).
///
/// The required methods are the primitives each queue kind implements;
/// the provided ones (`enqueue`, `dequeue_many`, ...) are the everyday
/// API. Every blocking primitive takes `timeout: Option<Duration>`
/// (`None` waits forever); the provided methods come in pairs, blocking
/// and `_timeout`.
pub trait Queue: Send + Sync + fmt::Debug {
    /// The queue's name, used in error messages.
    fn name(&self) -> &str;

    /// The declaration every element is checked against.
    fn spec(&self) -> &QueueSpec;

    /// The most elements the queue holds.
    fn capacity(&self) -> usize;

    /// The number of elements held now.
    fn size(&self) -> usize;

    /// The queue's counters.
    fn stats(&self) -> QueueStats;

    /// Whether the close has taken effect (see [`Queue::close`]). The
    /// answer may be stale as soon as it is returned; do not use it to
    /// decide whether an enqueue will work.
    fn is_closed(&self) -> bool;

    /// Closes the queue: new enqueues fail Cancelled and dequeues drain
    /// what is left, then fail OutOfRange. Closing twice is harmless;
    /// returns whether this call requested the close first.
    ///
    /// Without `cancel_pending_enqueues`, the enqueues already in
    /// progress (blocked on a full queue) complete first, as in
    /// TensorFlow, where the close waits behind them: until the last of
    /// them returns, the queue is still open to dequeues (a shuffle queue
    /// still holds back `min_after_dequeue`, a dequeue waits rather than
    /// failing) and [`Queue::is_closed`] is false. So every element of an
    /// enqueue that returns Ok is dequeued before any dequeue reports
    /// OutOfRange. The call itself does not wait.
    ///
    /// With `cancel_pending_enqueues`, the enqueues in progress fail
    /// Cancelled at once and the close takes effect at once. An
    /// `enqueue_many` that had put some of its elements in before it
    /// blocked leaves those in the queue, as TensorFlow does: they are
    /// dequeued like any other, and the error says how many went in.
    fn close(&self, cancel_pending_enqueues: bool) -> bool;

    /// Cancels the queue, as closing a TensorFlow session cancels the
    /// queue operations running in it: every blocked enqueue and dequeue
    /// wakes and fails Cancelled, and so does every later one (elements
    /// still held are not given out). Returns whether this call cancelled
    /// the queue. [`coord::Pipeline::cancel`](crate::coord::Pipeline::cancel)
    /// cancels every queue of a pipeline.
    fn cancel(&self) -> bool;

    /// Whether the queue is cancelled.
    fn is_cancelled(&self) -> bool;

    /// Ties the queue to a cancellation flag shared by several queues (a
    /// [`coord::Pipeline`](crate::coord::Pipeline)'s): once `flag` is set,
    /// every operation that starts or re-checks its state fails Cancelled,
    /// as after [`Queue::cancel`]. Setting the flag wakes nobody: set it,
    /// then call [`Queue::cancel`] on each queue. Because every queue
    /// sees the flag before any is woken, a thread woken by one queue's
    /// cancel cannot make another look closed (OutOfRange) or abandoned
    /// (FailedPrecondition) to its blocked callers first.
    fn set_cancel_flag(
        &self,
        flag: std::sync::Arc<std::sync::atomic::AtomicBool>,
    );

    /// Sets the timeout of every blocking call on this queue given none of
    /// its own (`None`: wait for ever), like TensorFlow's
    /// `operation_timeout_in_ms`. Such a call then fails
    /// DeadlineExceeded. Set for a whole pipeline by
    /// [`coord::Pipeline::set_operation_timeout`](crate::coord::Pipeline::set_operation_timeout).
    fn set_default_timeout(&self, timeout: Option<Duration>);

    /// Enqueues whole elements, in order, waiting for room.
    ///
    /// # Errors
    /// InvalidArgument (nothing enqueued) when an element does not match
    /// the spec; Cancelled when the queue is closed (or closed with
    /// cancellation while waiting); DeadlineExceeded on timeout. After a
    /// Cancelled or DeadlineExceeded the elements before the first one
    /// that did not fit are in the queue; the message says how many.
    fn enqueue_elements(
        &self,
        elements: Vec<Vec<Value>>,
        timeout: Option<Duration>,
    ) -> Result<()>;

    /// Enqueues the elements of components batched along axis 0.
    ///
    /// # Errors
    /// As [`Queue::enqueue_elements`]; also InvalidArgument when the
    /// components disagree on the batch size or one is a scalar.
    fn enqueue_batch(
        &self,
        components: Vec<Value>,
        timeout: Option<Duration>,
    ) -> Result<()>;

    /// Dequeues `n` elements, unbatched.
    ///
    /// # Errors
    /// OutOfRange when the queue is closed with too few elements left (see
    /// [`DequeueMode`]); FailedPrecondition when the queue's producers were
    /// never started or all ended without closing it; DeadlineExceeded on
    /// timeout. On every error, elements already taken are put back.
    fn dequeue_elements(
        &self,
        n: usize,
        mode: DequeueMode,
        timeout: Option<Duration>,
    ) -> Result<Vec<Vec<Value>>>;

    /// Dequeues `n` elements and batches them: each component stacked
    /// along a new axis 0 (padded first by a [`PaddingFifoQueue`]).
    ///
    /// # Errors
    /// As [`Queue::dequeue_elements`]; also InvalidArgument (the elements
    /// are put back) when a dense component's shapes differ in the batch.
    fn dequeue_batch(
        &self,
        n: usize,
        mode: DequeueMode,
        timeout: Option<Duration>,
    ) -> Result<Vec<Value>>;

    /// Declares `threads` more producer threads that will fill this queue.
    /// From then on a dequeue that would block while none of them runs
    /// fails FailedPrecondition instead of hanging. Called by
    /// [`coord::Pipeline::add_runner`](crate::coord::Pipeline::add_runner);
    /// call it yourself to get the same guarantee for your own threads.
    fn register_producers(&self, threads: usize);

    /// Records that `threads` registered producers have started.
    fn producers_started(&self, threads: usize);

    /// Records that a producer thread has ended. When the last one ends,
    /// blocked dequeues wake up (and fail unless the queue was closed).
    fn producer_ended(&self);

    /// Enqueues one element, waiting for room.
    ///
    /// # Errors
    /// See [`Queue::enqueue_elements`].
    fn enqueue(&self, element: Vec<Value>) -> Result<()> {
        self.enqueue_elements(vec![element], None)
    }

    /// [`Queue::enqueue`] with a timeout.
    ///
    /// # Errors
    /// See [`Queue::enqueue_elements`].
    fn enqueue_timeout(
        &self,
        element: Vec<Value>,
        timeout: Duration,
    ) -> Result<()> {
        self.enqueue_elements(vec![element], Some(timeout))
    }

    /// Enqueues the elements of components batched along axis 0.
    ///
    /// # Errors
    /// See [`Queue::enqueue_batch`].
    fn enqueue_many(&self, components: Vec<Value>) -> Result<()> {
        self.enqueue_batch(components, None)
    }

    /// [`Queue::enqueue_many`] with a timeout.
    ///
    /// # Errors
    /// See [`Queue::enqueue_batch`].
    fn enqueue_many_timeout(
        &self,
        components: Vec<Value>,
        timeout: Duration,
    ) -> Result<()> {
        self.enqueue_batch(components, Some(timeout))
    }

    /// Dequeues one element.
    ///
    /// # Errors
    /// See [`Queue::dequeue_elements`].
    fn dequeue(&self) -> Result<Vec<Value>> {
        first(self.dequeue_elements(1, DequeueMode::Many, None)?)
    }

    /// [`Queue::dequeue`] with a timeout.
    ///
    /// # Errors
    /// See [`Queue::dequeue_elements`].
    fn dequeue_timeout(&self, timeout: Duration) -> Result<Vec<Value>> {
        first(self.dequeue_elements(1, DequeueMode::Many, Some(timeout))?)
    }

    /// Dequeues `n` elements stacked along a new axis 0.
    ///
    /// # Errors
    /// See [`Queue::dequeue_batch`].
    fn dequeue_many(&self, n: usize) -> Result<Vec<Value>> {
        self.dequeue_batch(n, DequeueMode::Many, None)
    }

    /// [`Queue::dequeue_many`] with a timeout.
    ///
    /// # Errors
    /// See [`Queue::dequeue_batch`].
    fn dequeue_many_timeout(
        &self,
        n: usize,
        timeout: Duration,
    ) -> Result<Vec<Value>> {
        self.dequeue_batch(n, DequeueMode::Many, Some(timeout))
    }

    /// Dequeues `n` elements stacked along a new axis 0, or fewer if the
    /// queue is closed with fewer left.
    ///
    /// # Errors
    /// See [`Queue::dequeue_batch`]; OutOfRange only when the queue is
    /// closed and empty.
    fn dequeue_up_to(&self, n: usize) -> Result<Vec<Value>> {
        self.dequeue_batch(n, DequeueMode::UpTo, None)
    }

    /// [`Queue::dequeue_up_to`] with a timeout.
    ///
    /// # Errors
    /// See [`Queue::dequeue_up_to`].
    fn dequeue_up_to_timeout(
        &self,
        n: usize,
        timeout: Duration,
    ) -> Result<Vec<Value>> {
        self.dequeue_batch(n, DequeueMode::UpTo, Some(timeout))
    }

    /// Dequeues `n` elements, not stacked.
    ///
    /// # Errors
    /// See [`Queue::dequeue_elements`].
    fn dequeue_many_unstacked(&self, n: usize) -> Result<Vec<Vec<Value>>> {
        self.dequeue_elements(n, DequeueMode::Many, None)
    }

    /// Dequeues `n` elements, or fewer if the queue is closed with fewer
    /// left, not stacked.
    ///
    /// # Errors
    /// See [`Queue::dequeue_elements`].
    fn dequeue_up_to_unstacked(&self, n: usize) -> Result<Vec<Vec<Value>>> {
        self.dequeue_elements(n, DequeueMode::UpTo, None)
    }
}

fn first(elements: Vec<Vec<Value>>) -> Result<Vec<Value>> {
    elements
        .into_iter()
        .next()
        .ok_or_else(|| Error::internal("a dequeue of 1 returned nothing"))
}

/// Checks the capacity every builder takes.
fn check_capacity(capacity: usize) -> Result<()> {
    if capacity == 0 {
        return Err(Error::invalid_argument("queue capacity must be > 0"));
    }
    Ok(())
}
