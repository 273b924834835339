//! Queue runners: the threads that fill one queue.

use std::fmt;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::error::{Error, Kind, Result};
use crate::queue::Queue;

use super::coordinator::{panic_message, Coordinator, ThreadHandle};

/// One unit of work of a runner thread: typically read something and
/// enqueue it. Returning OutOfRange means "no more input".
pub type EnqueueOp = Box<dyn FnMut() -> Result<()> + Send>;

/// A queue and the enqueue operations that fill it, one thread each
/// (TensorFlow's `tf.train.QueueRunner`).
///
/// Each thread calls its operation in a loop until the operation fails or
/// the coordinator stops:
///
/// * OutOfRange ends that thread; the last thread of the runner to end
///   closes the queue (without cancelling), which is how the end of the
///   input travels down a pipeline;
/// * any other error (or a panic) requests a stop with that error and
///   closes the queue with pending enqueues cancelled;
/// * a stop request closes the queue with pending enqueues cancelled, so
///   threads blocked on it wake up, and each thread ends at its next
///   check. A Cancelled error seen after a stop request is the stop's
///   doing, not a new error.
///
/// Runners are started by a [`Pipeline`](super::Pipeline).
pub struct QueueRunner {
    /// The queue the operations fill.
    queue: Arc<dyn Queue>,
    /// One per thread.
    ops: Vec<EnqueueOp>,
}

impl fmt::Debug for QueueRunner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("QueueRunner")
            .field("queue", &self.queue.name())
            .field("threads", &self.ops.len())
            .finish()
    }
}

impl QueueRunner {
    /// A runner for `queue`, with no operations yet.
    pub fn new(queue: Arc<dyn Queue>) -> QueueRunner {
        QueueRunner {
            queue,
            ops: Vec::new(),
        }
    }

    /// Adds an operation, to run in its own thread.
    pub fn add_op(
        &mut self,
        op: impl FnMut() -> Result<()> + Send + 'static,
    ) -> &mut QueueRunner {
        self.ops.push(Box::new(op));
        self
    }

    /// Adds an operation, to run in its own thread (by value, for
    /// chaining).
    pub fn with_op(
        mut self,
        op: impl FnMut() -> Result<()> + Send + 'static,
    ) -> QueueRunner {
        self.add_op(op);
        self
    }

    /// The queue.
    pub fn queue(&self) -> &Arc<dyn Queue> {
        &self.queue
    }

    /// The number of threads (one per operation).
    pub fn num_threads(&self) -> usize {
        self.ops.len()
    }

    /// Starts one thread per operation, named `{queue}-runner-{i}`.
    pub(crate) fn start(
        self,
        coord: &Coordinator,
    ) -> Result<Vec<ThreadHandle>> {
        let QueueRunner { queue, ops } = self;
        let n = ops.len();
        {
            let queue = Arc::clone(&queue);
            coord.on_stop(move || {
                queue.close(true);
            });
        }
        // Pipeline::start has counted these threads as started.
        let remaining = Arc::new(AtomicUsize::new(n));
        let mut handles = Vec::with_capacity(n);
        let mut ops = ops.into_iter().enumerate();
        while let Some((i, op)) = ops.next() {
            let name = format!("{}-runner-{i}", queue.name());
            let thread = RunnerThread {
                queue: Arc::clone(&queue),
                coord: coord.clone(),
                remaining: Arc::clone(&remaining),
                name: name.clone(),
            };
            match coord.spawn(name, move || thread.run(op)) {
                Ok(h) => handles.push(h),
                Err(e) => {
                    // The threads not started will never end on their own.
                    for _ in i..n {
                        queue.producer_ended();
                    }
                    drop(ops);
                    coord.request_stop_with(e.clone());
                    return Err(e);
                }
            }
        }
        Ok(handles)
    }
}

/// What one runner thread needs.
struct RunnerThread {
    queue: Arc<dyn Queue>,
    coord: Coordinator,
    /// Threads of this runner not yet ended.
    remaining: Arc<AtomicUsize>,
    name: String,
}

impl RunnerThread {
    fn run(self, mut op: EnqueueOp) -> Result<()> {
        let outcome = loop {
            if self.coord.should_stop() {
                break Ok(());
            }
            match panic::catch_unwind(AssertUnwindSafe(&mut op)) {
                Ok(Ok(())) => {}
                Ok(Err(e)) if e.is_out_of_range() => break Ok(()),
                Ok(Err(e))
                    if e.kind() == Kind::Cancelled
                        && self.coord.should_stop() =>
                {
                    break Ok(())
                }
                Ok(Err(e)) => break Err(e),
                Err(payload) => {
                    break Err(Error::internal(format!(
                        "runner thread '{}' panicked: {}",
                        self.name,
                        panic_message(&*payload)
                    )))
                }
            }
        };
        if let Err(e) = &outcome {
            self.coord.request_stop_with(e.clone());
            self.queue.close(true);
        }
        if self.remaining.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.queue.close(false);
        }
        self.queue.producer_ended();
        outcome
    }
}
