//! The explicit collection of a pipeline's runners.

use std::sync::Arc;
use std::time::Duration;

use crate::error::Result;
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
/// }));
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
}

impl Pipeline {
    /// An empty pipeline.
    pub fn new() -> Pipeline {
        Pipeline::default()
    }

    /// Adds a runner, registering its threads with its queue.
    pub fn add_runner(&mut self, runner: QueueRunner) {
        let queue = runner.queue();
        queue.register_producers(runner.num_threads());
        if !self.queues.iter().any(|q| Arc::ptr_eq(q, queue)) {
            self.queues.push(Arc::clone(queue));
            self.stages.push(Stage {
                queue: Arc::clone(queue),
                batching: None,
            });
        }
        self.runners.push(runner);
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
        }
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
            match runner.start(coord) {
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
