//! Queue runners: the threads that fill one queue.

use std::fmt;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use parking_lot::Mutex;
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
/// * an error of one of the [queue-closed
///   kinds](QueueRunner::queue_closed_kinds) (OutOfRange by default) ends
///   that thread cleanly; the last thread of the runner to end closes the
///   queue (without cancelling), which is how the end of the input travels
///   down a pipeline;
/// * any other error (or a panic) is recorded in
///   [`exceptions_raised`](QueueRunner::exceptions_raised), requests a stop
///   with that error when there is a coordinator, and closes the queue
///   with pending enqueues cancelled;
/// * a stop request closes the queue with pending enqueues cancelled, so
///   threads blocked on it wake up, and each thread ends at its next
///   check. A Cancelled error seen after a stop request, or after the
///   pipeline was [cancelled](super::Pipeline::cancel), is the stop's
///   doing, not a new error.
///
/// Runners are usually started by a [`Pipeline`](super::Pipeline), under
/// a [`Coordinator`]; [`QueueRunner::start_without_coordinator`] runs one
/// on its own, as TensorFlow's `create_threads(sess)` without `coord`
/// does.
pub struct QueueRunner {
    /// The queue the operations fill.
    queue: Arc<dyn Queue>,
    /// One per thread.
    ops: Vec<EnqueueOp>,
    /// The error kinds that mean "the queue was closed": a clean end.
    closed_kinds: Vec<Kind>,
    /// The errors the threads ended with, other than the clean ones.
    raised: Arc<Mutex<Vec<Error>>>,
}

impl fmt::Debug for QueueRunner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("QueueRunner")
            .field("queue", &self.queue.name())
            .field("threads", &self.ops.len())
            .field("queue_closed_kinds", &self.closed_kinds)
            .finish()
    }
}

/// The handle on a started runner's record of errors; see
/// [`QueueRunner::exceptions_raised`].
#[derive(Debug, Clone)]
pub struct RunnerErrors {
    raised: Arc<Mutex<Vec<Error>>>,
}

impl RunnerErrors {
    /// The errors the runner's threads ended with, in the order they
    /// ended (clean ends excluded).
    pub fn get(&self) -> Vec<Error> {
        self.raised.lock().clone()
    }
}

impl QueueRunner {
    /// A runner for `queue`, with no operations yet. A runner must be
    /// given at least one before it is added to a pipeline or started.
    pub fn new(queue: Arc<dyn Queue>) -> QueueRunner {
        QueueRunner {
            queue,
            ops: Vec::new(),
            closed_kinds: vec![Kind::OutOfRange],
            raised: Arc::default(),
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

    /// Sets the error kinds that mean the queue was closed, ending a
    /// thread cleanly (TensorFlow's `queue_closed_exception_types`;
    /// OutOfRange by default).
    ///
    /// # Errors
    /// InvalidArgument when `kinds` is empty (TensorFlow: a TypeError).
    pub fn queue_closed_kinds(
        mut self,
        kinds: impl IntoIterator<Item = Kind>,
    ) -> Result<QueueRunner> {
        let kinds: Vec<Kind> = kinds.into_iter().collect();
        if kinds.is_empty() {
            return Err(Error::invalid_argument(format!(
                "queue runner for queue '{}': the queue-closed error kinds \
                 must not be empty",
                self.queue.name()
            )));
        }
        self.closed_kinds = kinds;
        Ok(self)
    }

    /// The error kinds that end a thread cleanly.
    pub fn closed_kinds(&self) -> &[Kind] {
        &self.closed_kinds
    }

    /// The errors this runner's threads ended with, other than clean
    /// ends (TensorFlow's `exceptions_raised`). Unlike TensorFlow, which
    /// records them only when running without a coordinator, they are
    /// recorded in both cases (with a coordinator, the first is also the
    /// stop's error). Stays readable after the runner is handed to a
    /// pipeline through [`QueueRunner::errors`].
    pub fn exceptions_raised(&self) -> Vec<Error> {
        self.raised.lock().clone()
    }

    /// A handle on [`QueueRunner::exceptions_raised`] that outlives the
    /// runner (which a pipeline consumes when it starts it).
    pub fn errors(&self) -> RunnerErrors {
        RunnerErrors {
            raised: Arc::clone(&self.raised),
        }
    }

    /// The queue.
    pub fn queue(&self) -> &Arc<dyn Queue> {
        &self.queue
    }

    /// The number of threads (one per operation).
    pub fn num_threads(&self) -> usize {
        self.ops.len()
    }

    /// The error for a runner with no operation (TensorFlow's
    /// "Must provide queue and enqueue_ops").
    pub(crate) fn check(&self) -> Result<()> {
        if self.ops.is_empty() {
            return Err(Error::invalid_argument(format!(
                "queue runner for queue '{}' has no operations: it would \
                 never fill nor close its queue",
                self.queue.name()
            )));
        }
        Ok(())
    }

    /// Starts one thread per operation, named `{queue}-runner-{i}`, with
    /// no coordinator (TensorFlow's `create_threads(sess)`): each thread
    /// runs until its operation fails; a thread that fails with a real
    /// error returns it (and records it in
    /// [`exceptions_raised`](QueueRunner::exceptions_raised)) and closes
    /// the queue with pending enqueues cancelled, so no other thread stays
    /// blocked on it. Join the threads yourself (their results are the
    /// errors), or through a [`Coordinator`]. Registers the threads as the
    /// queue's producers.
    ///
    /// # Errors
    /// InvalidArgument when the runner has no operation; Unknown when a
    /// thread cannot be started (the queue is then closed with pending
    /// enqueues cancelled).
    pub fn start_without_coordinator(self) -> Result<Vec<ThreadHandle>> {
        self.check()?;
        self.queue.register_producers(self.ops.len());
        self.queue.producers_started(self.ops.len());
        self.spawn_threads(None, None)
    }

    /// Starts one thread per operation under `coord`; `cancelled` is the
    /// pipeline's cancel flag.
    pub(crate) fn start(
        self,
        coord: &Coordinator,
        cancelled: Arc<AtomicBool>,
    ) -> Result<Vec<ThreadHandle>> {
        {
            let queue = Arc::clone(&self.queue);
            coord.on_stop(move || {
                queue.close(true);
            });
        }
        // Pipeline::start has counted these threads as started.
        self.spawn_threads(Some(coord), Some(cancelled))
    }

    fn spawn_threads(
        self,
        coord: Option<&Coordinator>,
        cancelled: Option<Arc<AtomicBool>>,
    ) -> Result<Vec<ThreadHandle>> {
        let QueueRunner {
            queue,
            ops,
            closed_kinds,
            raised,
        } = self;
        let n = ops.len();
        let closed_kinds: Arc<[Kind]> = closed_kinds.into();
        let remaining = Arc::new(AtomicUsize::new(n));
        let mut handles = Vec::with_capacity(n);
        let mut ops = ops.into_iter().enumerate();
        while let Some((i, op)) = ops.next() {
            let name = format!("{}-runner-{i}", queue.name());
            let thread = RunnerThread {
                queue: Arc::clone(&queue),
                coord: coord.cloned(),
                cancelled: cancelled.clone(),
                closed_kinds: Arc::clone(&closed_kinds),
                raised: Arc::clone(&raised),
                remaining: Arc::clone(&remaining),
                name: name.clone(),
            };
            let spawned = match coord {
                Some(coord) => coord.spawn(name, move || thread.run(op)),
                None => std::thread::Builder::new()
                    .name(name.clone())
                    .spawn(move || thread.run(op))
                    .map_err(|e| {
                        Error::from(e).with_message(format!(
                            "cannot start thread '{name}'"
                        ))
                    }),
            };
            match spawned {
                Ok(h) => handles.push(h),
                Err(e) => {
                    // The threads not started will never end on their own.
                    for _ in i..n {
                        queue.producer_ended();
                    }
                    drop(ops);
                    match coord {
                        Some(coord) => {
                            let _ = coord.request_stop_with(e.clone());
                        }
                        None => {
                            queue.close(true);
                        }
                    }
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
    coord: Option<Coordinator>,
    /// The pipeline's cancel flag, if started by a pipeline.
    cancelled: Option<Arc<AtomicBool>>,
    closed_kinds: Arc<[Kind]>,
    raised: Arc<Mutex<Vec<Error>>>,
    /// Threads of this runner not yet ended.
    remaining: Arc<AtomicUsize>,
    name: String,
}

impl RunnerThread {
    fn should_stop(&self) -> bool {
        self.coord.as_ref().is_some_and(Coordinator::should_stop)
            || self
                .cancelled
                .as_ref()
                .is_some_and(|c| c.load(Ordering::SeqCst))
    }

    fn run(self, mut op: EnqueueOp) -> Result<()> {
        let outcome = loop {
            if self.should_stop() {
                break Ok(());
            }
            match panic::catch_unwind(AssertUnwindSafe(&mut op)) {
                Ok(Ok(())) => {}
                Ok(Err(e)) if self.closed_kinds.contains(&e.kind()) => {
                    break Ok(())
                }
                Ok(Err(e))
                    if e.kind() == Kind::Cancelled && self.should_stop() =>
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
            self.raised.lock().push(e.clone());
            if let Some(coord) = &self.coord {
                // After a join nobody reports it; the thread's result and
                // exceptions_raised still hold it.
                let _ = coord.request_stop_with(e.clone());
            }
            self.queue.close(true);
        }
        if self.remaining.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.queue.close(false);
        }
        self.queue.producer_ended();
        outcome
    }
}
