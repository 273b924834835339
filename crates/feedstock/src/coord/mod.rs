//! Coordinator and queue runners: starting, stopping and joining the
//! threads of a pipeline.
//!
//! # Brief overview
//!
//! * [`Coordinator`]: a shared stop flag plus the first error; threads
//!   check [`Coordinator::should_stop`], anyone may
//!   [`request_stop`](Coordinator::request_stop), and
//!   [`join`](Coordinator::join) returns the first real error (OutOfRange
//!   is a clean end, not an error).
//! * [`QueueRunner`]: a queue and the operations that fill it, one thread
//!   each; see its docs for how threads end and how the end of input
//!   closes the queue.
//! * [`Pipeline`]: the runners of a pipeline, held by the caller; one
//!   [`Pipeline::start`] starts them all.
//!
//! A stop request closes every started runner's queue with pending
//! enqueues cancelled, so no runner stays blocked on a full queue, and
//! no consumer on an empty one.

mod coordinator;
mod pipeline;
mod runner;
mod stats;

pub use coordinator::{Coordinator, JoinOptions, StopOnError, ThreadHandle};
pub use pipeline::{Pipeline, PipelineCanceller};
pub use runner::{EnqueueOp, QueueRunner, RunnerErrors};
pub(crate) use stats::{BatchCounters, Stage};
pub use stats::{BatchingStats, PipelineStats, StageStats};
