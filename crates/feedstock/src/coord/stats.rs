//! One view of a pipeline's counters: every queue a runner fills and,
//! for a batching stage, what the stage adds.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::io::tfrecord::SkipStats;
use crate::queue::{Queue, QueueStats};

/// The counters a batching stage keeps, shared by its sources and the
/// [`Pipeline`](super::Pipeline) it was built in, so that both report the
/// same numbers.
#[derive(Debug)]
pub(crate) struct BatchCounters {
    /// Examples per batch.
    batch_size: usize,
    /// Batches delivered.
    batches: AtomicU64,
    /// Examples left in the closed queue that no full batch could take.
    held_back: AtomicU64,
    /// Examples the stage's keep_input left out.
    filtered: AtomicU64,
    /// The coordinator of the started pipeline, whose stop error ends the
    /// stage's iteration when the input ended because of it.
    coord: parking_lot::Mutex<Option<super::Coordinator>>,
}

impl BatchCounters {
    pub(crate) fn new(batch_size: usize) -> BatchCounters {
        BatchCounters {
            batch_size,
            batches: AtomicU64::new(0),
            held_back: AtomicU64::new(0),
            filtered: AtomicU64::new(0),
            coord: parking_lot::Mutex::new(None),
        }
    }

    /// Remembers the coordinator the stage's pipeline runs under.
    pub(crate) fn attach(&self, coord: &super::Coordinator) {
        *self.coord.lock() = Some(coord.clone());
    }

    /// The error the attached coordinator was stopped with, if any.
    pub(crate) fn stop_error(&self) -> Option<crate::Error> {
        self.coord
            .lock()
            .as_ref()
            .and_then(super::Coordinator::error)
    }

    pub(crate) fn batch_size(&self) -> usize {
        self.batch_size
    }

    /// Counts one delivered batch.
    pub(crate) fn delivered(&self) {
        self.batches.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts `n` examples left out by keep_input.
    pub(crate) fn filtered(&self, n: u64) {
        if n > 0 {
            self.filtered.fetch_add(n, Ordering::Relaxed);
        }
    }

    /// Records how many examples the end of input left behind.
    pub(crate) fn set_held_back(&self, n: u64) {
        self.held_back.store(n, Ordering::Relaxed);
    }

    fn snapshot(&self) -> BatchingStats {
        BatchingStats {
            batch_size: self.batch_size,
            batches: self.batches.load(Ordering::Relaxed),
            held_back: self.held_back.load(Ordering::Relaxed),
            filtered: self.filtered.load(Ordering::Relaxed),
        }
    }
}

/// One queue of a pipeline and, when a batching stage reads it, the
/// stage's counters.
#[derive(Debug, Clone)]
pub(crate) struct Stage {
    pub(crate) queue: Arc<dyn Queue>,
    pub(crate) batching: Option<Arc<BatchCounters>>,
}

impl Stage {
    /// The counters now.
    pub(crate) fn stats(&self) -> StageStats {
        StageStats {
            name: self.queue.name().to_owned(),
            queue: self.queue.stats(),
            batching: self.batching.as_ref().map(|c| c.snapshot()),
        }
    }
}

/// What a batching stage adds to its queue's counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BatchingStats {
    /// Examples per batch.
    pub batch_size: usize,
    /// Batches delivered so far.
    pub batches: u64,
    /// Examples left at the end of input that make no full batch, when
    /// the stage does not allow a smaller final batch: the only examples a
    /// finished pipeline did not deliver. Known once the end was reached
    /// (0 before).
    pub held_back: u64,
    /// Examples a `maybe_*` stage's keep_input left out, as asked: never
    /// delivered, and counted here so that the drop is not silent.
    pub filtered: u64,
}

/// A snapshot of one queue of a pipeline: a plain struct, cheap to take
/// at any time.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StageStats {
    /// The queue's name (a batching stage's name is its queue's).
    pub name: String,
    /// The queue's counters: size, capacity, `min_after_dequeue` for a
    /// shuffle queue, elements enqueued and dequeued, closed.
    pub queue: QueueStats,
    /// For a batching stage, batches delivered and examples held back.
    pub batching: Option<BatchingStats>,
}

impl StageStats {
    /// How full the queue is, from 0 to 1 (TensorFlow's
    /// `fraction_of_{capacity}_full` summary).
    pub fn fraction_full(&self) -> f64 {
        self.queue.fraction_full()
    }

    /// For a shuffle queue, how full the part above `min_after_dequeue`
    /// is, from 0 to 1; see [`QueueStats::fraction_over_min`].
    pub fn fraction_over_min(&self) -> Option<f64> {
        self.queue.fraction_over_min()
    }
}

/// Everything a caller needs to know about a running pipeline, from
/// [`Pipeline::stats`](super::Pipeline::stats): one entry per queue a
/// runner fills, in the order the runners were added.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PipelineStats {
    /// One entry per queue.
    pub stages: Vec<StageStats>,
    /// The corrupt regions the pipeline's readers skipped (those given
    /// [`Pipeline::skip_log`](super::Pipeline::skip_log)), per file with
    /// offsets and lengths: records never delivered, counted so that the
    /// loss is not silent.
    pub skips: SkipStats,
}

impl PipelineStats {
    /// The first stage whose queue is named `name`.
    pub fn get(&self, name: &str) -> Option<&StageStats> {
        self.stages.iter().find(|s| s.name == name)
    }
}
