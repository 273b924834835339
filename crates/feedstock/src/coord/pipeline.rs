//! The explicit collection of a pipeline's runners.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;

use crate::error::Result;
use crate::io::tfrecord::SkipLog;
use crate::queue::Queue;

use super::coordinator::{Coordinator, ThreadHandle};
use super::runner::QueueRunner;
use super::stats::{BatchCounters, PipelineStats, Stage};

/// How long a failed [`Pipeline::start`] waits for the threads it had
/// already started to end.
const JOIN_ON_FAILED_START: Duration = Duration::from_secs(10);

/// The queue runners of one input pipeline, held by the caller (the
/// equivalent of TensorFlow's graph collection of queue runners, without
/// global state). Builders add runners; one [`Pipeline::start`] starts
/// them all.
///
/// Adding a runner tells its queue how many producer threads to expect,
/// so that a dequeue from it before [`Pipeline::start`] fails
/// FailedPrecondition instead of blocking for ever.
///
/// ```
/// use std::time::Duration;
/// use feedstock::coord::{Coordinator, Pipeline, QueueRunner};
/// use feedstock::queue::{FifoQueue, Queue, QueueSpec};
/// use feedstock::{DType, Error, Kind, Tensor};
///
/// let q = FifoQueue::builder(4, QueueSpec::dtypes([DType::I64])).build()?;
/// let mut pipeline = Pipeline::new();
/// let mut next = 0i64;
/// let producer = q.clone();
/// pipeline.add_runner(QueueRunner::new(q.clone()).with_op(move || {
///     if next == 3 {
///         return Err(Error::out_of_range("done"));
///     }
///     next += 1;
///     producer.enqueue(vec![Tensor::scalar(next).into()])
/// }))?;
/// assert_eq!(q.dequeue().unwrap_err().kind(), Kind::FailedPrecondition);
///
/// let coord = Coordinator::new();
/// let threads = pipeline.start(&coord)?;
/// let batch = q.dequeue_up_to(10)?;
/// assert_eq!(batch[0].dense()?.as_slice::<i64>()?, &[1, 2, 3]);
/// assert_eq!(q.dequeue().unwrap_err().kind(), Kind::OutOfRange);
/// coord.request_stop();
/// coord.join(threads, Duration::from_secs(10))?;
/// # Ok::<(), feedstock::Error>(())
/// ```
#[derive(Debug, Default)]
pub struct Pipeline {
    /// Runners not yet started.
    runners: Vec<QueueRunner>,
    /// Every queue a runner was added for, for statistics.
    queues: Vec<Arc<dyn Queue>>,
    /// The same queues, with the counters of the batching stage reading
    /// each, if any.
    stages: Vec<Stage>,
    /// What a [`PipelineCanceller`] acts on, shared with it.
    control: Arc<Mutex<Control>>,
    /// Where the pipeline's readers count the corrupt regions they skip.
    skip_log: SkipLog,
}

/// The part of a pipeline its cancel and default timeout act on.
#[derive(Debug, Default)]
struct Control {
    /// Every queue of the pipeline.
    queues: Vec<Arc<dyn Queue>>,
    /// The coordinators the pipeline was started with.
    coords: Vec<Coordinator>,
    /// Whether the pipeline was cancelled: a queue added later is
    /// cancelled at once. Shared with the runner threads, which count a
    /// Cancelled error seen once it is set as a clean end.
    cancelled: Arc<AtomicBool>,
    /// The default operation timeout, applied to queues added later too.
    timeout: Option<Duration>,
}

impl Control {
    fn add(&mut self, queue: &Arc<dyn Queue>) {
        if self.timeout.is_some() {
            queue.set_default_timeout(self.timeout);
        }
        queue.set_cancel_flag(Arc::clone(&self.cancelled));
        if self.cancelled.load(Ordering::SeqCst) {
            queue.cancel();
        }
        self.queues.push(Arc::clone(queue));
    }
}

/// Cancels a [`Pipeline`] from any thread; see [`Pipeline::cancel`].
/// Cloning is cheap and every clone cancels the same pipeline.
#[derive(Debug, Clone)]
pub struct PipelineCanceller {
    control: Arc<Mutex<Control>>,
}

impl PipelineCanceller {
    /// Cancels the pipeline; see [`Pipeline::cancel`].
    pub fn cancel(&self) -> bool {
        cancel(&self.control)
    }
}

/// Cancels every queue, then requests a (clean) stop on every
/// coordinator; reports whether the pipeline was not cancelled before.
fn cancel(control: &Mutex<Control>) -> bool {
    let (queues, coords, first) = {
        let c = control.lock();
        let first = !c.cancelled.swap(true, Ordering::SeqCst);
        (c.queues.clone(), c.coords.clone(), first)
    };
    // Outside the lock. The queues are cancelled before the stop, whose
    // callbacks close them: a blocked dequeue must see the cancel
    // (Cancelled), not the close (OutOfRange). A runner thread woken by
    // the cancel before the stop sees the flag set above.
    for queue in queues {
        queue.cancel();
    }
    for coord in coords {
        coord.request_stop();
    }
    first
}

impl Pipeline {
    /// An empty pipeline.
    pub fn new() -> Pipeline {
        Pipeline::default()
    }

    /// Adds a runner, registering its threads with its queue.
    ///
    /// # Errors
    /// InvalidArgument when the runner has no operation (TensorFlow's
    /// QueueRunner refuses it too): it would never fill nor close its
    /// queue.
    pub fn add_runner(&mut self, runner: QueueRunner) -> Result<()> {
        runner.check()?;
        let queue = runner.queue();
        queue.register_producers(runner.num_threads());
        if !self.queues.iter().any(|q| Arc::ptr_eq(q, queue)) {
            self.queues.push(Arc::clone(queue));
            self.control.lock().add(queue);
            self.stages.push(Stage {
                queue: Arc::clone(queue),
                batching: None,
            });
        }
        self.runners.push(runner);
        Ok(())
    }

    /// Cancels the whole pipeline, as closing a TensorFlow session cancels
    /// every queue operation running in it: cancels every queue of the
    /// pipeline ([`Queue::cancel`]), then requests a stop on the
    /// coordinator it was started with (a clean stop: no error). Every
    /// blocked enqueue, dequeue and [`Reader`](crate::reader::Reader) read
    /// on them wakes and fails Cancelled, and so does every later one, so
    /// no thread of the pipeline stays blocked and joining them returns
    /// promptly. A queue added afterwards is cancelled as it is added.
    /// Returns whether this call cancelled the pipeline. Use
    /// [`Pipeline::canceller`] to cancel from another thread.
    ///
    /// Elements still in the queues are not given out: cancelling is for
    /// abandoning a pipeline; to end it with everything delivered, close
    /// its input instead.
    pub fn cancel(&self) -> bool {
        cancel(&self.control)
    }

    /// Whether [`Pipeline::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.control.lock().cancelled.load(Ordering::SeqCst)
    }

    /// A handle that cancels this pipeline from any thread.
    pub fn canceller(&self) -> PipelineCanceller {
        PipelineCanceller {
            control: Arc::clone(&self.control),
        }
    }

    /// Sets a default timeout for every blocking operation on the
    /// pipeline's queues that has no timeout of its own (TensorFlow's
    /// `operation_timeout_in_ms`): such an operation fails
    /// DeadlineExceeded once it has waited `timeout`. Covers enqueues by
    /// runner threads, batch dequeues, and [`Reader`](crate::reader::Reader)
    /// reads waiting on a work queue of the pipeline. Applies to queues
    /// added later too. `None` (the default) waits for ever.
    pub fn set_operation_timeout(&mut self, timeout: Option<Duration>) {
        let mut c = self.control.lock();
        c.timeout = timeout;
        for queue in &c.queues {
            queue.set_default_timeout(timeout);
        }
    }

    /// Registers the counters of the batching stage that reads `queue`,
    /// so that [`Pipeline::stats`] reports them.
    pub(crate) fn register_batching(
        &mut self,
        queue: &Arc<dyn Queue>,
        counters: Arc<BatchCounters>,
    ) {
        match self
            .stages
            .iter_mut()
            .find(|s| Arc::ptr_eq(&s.queue, queue))
        {
            Some(stage) => stage.batching = Some(counters),
            None => {
                self.queues.push(Arc::clone(queue));
                self.control.lock().add(queue);
                self.stages.push(Stage {
                    queue: Arc::clone(queue),
                    batching: Some(counters),
                });
            }
        }
    }

    /// The queues with their batching stages' counters.
    pub(crate) fn stages(&self) -> &[Stage] {
        &self.stages
    }

    /// The number of runners not yet started.
    pub fn pending_runners(&self) -> usize {
        self.runners.len()
    }

    /// The queues runners were added for.
    pub fn queues(&self) -> &[Arc<dyn Queue>] {
        &self.queues
    }

    /// Every queue's counters and, for a batching stage, the stage's:
    /// one snapshot of the whole pipeline, cheap to take at any time
    /// (what [`summary::Monitor`](crate::summary::Monitor) reports).
    pub fn stats(&self) -> PipelineStats {
        PipelineStats {
            stages: self.stages.iter().map(Stage::stats).collect(),
            skips: self.skip_log.stats(),
        }
    }

    /// The pipeline's log of skipped corrupt records: give it to the
    /// readers of the pipeline
    /// ([`TfRecordReaderBuilder::skip_log`](crate::reader::TfRecordReaderBuilder::skip_log))
    /// so that [`Pipeline::stats`] and the summaries of a
    /// [`Monitor`](crate::summary::Monitor) watching the pipeline count
    /// every region they skip, per file, and so that a per-run budget
    /// covers all of them. Clones share the one log.
    pub fn skip_log(&self) -> SkipLog {
        self.skip_log.clone()
    }

    /// Starts every runner added since the last start, and returns their
    /// threads, for [`Coordinator::join`]. A stop request on `coord`
    /// closes every started runner's queue with pending enqueues
    /// cancelled.
    ///
    /// # Errors
    /// Unknown when a thread cannot be started; a stop is then requested
    /// so that the threads already started end.
    pub fn start(&mut self, coord: &Coordinator) -> Result<Vec<ThreadHandle>> {
        let cancelled = {
            let mut c = self.control.lock();
            c.coords.push(coord.clone());
            Arc::clone(&c.cancelled)
        };
        if cancelled.load(Ordering::SeqCst) {
            coord.request_stop();
        }
        // Every batching stage reports the pipeline's first real error
        // instead of ending its iteration as if the input were done.
        for stage in &self.stages {
            if let Some(counters) = &stage.batching {
                counters.attach(coord);
            }
        }
        // Every queue counts as started before any thread runs: a runner
        // may read a queue whose own runner was added after it.
        for runner in &self.runners {
            runner.queue().producers_started(runner.num_threads());
        }
        let mut threads = Vec::new();
        let mut runners = self.runners.drain(..);
        while let Some(runner) = runners.next() {
            match runner.start(coord, Arc::clone(&cancelled)) {
                Ok(started) => threads.extend(started),
                Err(e) => {
                    // The runners not reached will never run: their
                    // queues must not wait for them.
                    for r in runners {
                        for _ in 0..r.num_threads() {
                            r.queue().producer_ended();
                        }
                    }
                    // The threads already started end on the stop that
                    // runner.start requested; join them so none is lost.
                    let _ = coord.join(threads, JOIN_ON_FAILED_START);
                    return Err(e);
                }
            }
        }
        Ok(threads)
    }
}
