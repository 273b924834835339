//! What a summary writer watches, and the scalars it reports.

use std::collections::HashMap;
use std::sync::Arc;

use crate::coord::Pipeline;
use crate::input::{BatchSource, BatchStats};
use crate::queue::Queue;

/// One tagged value, as TensorBoard shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Scalar {
    /// The tag, `{queue}/{what}`.
    pub tag: String,
    /// The value.
    pub value: f64,
}

impl Scalar {
    fn new(tag: String, value: f64) -> Scalar {
        Scalar { tag, value }
    }
}

/// One watched thing.
#[derive(Debug, Clone)]
enum Entry {
    /// Any queue: fullness and counts.
    Queue(Arc<dyn Queue>),
    /// A batching stage: also batches, held-back examples and, for a
    /// shuffling stage, the fraction above `min_after_dequeue`.
    Batches(BatchSource),
}

impl Entry {
    /// The queue, as a thin pointer, to tell entries apart.
    fn key(&self) -> *const () {
        let q = match self {
            Entry::Queue(q) => q,
            Entry::Batches(b) => b.queue(),
        };
        Arc::as_ptr(q) as *const ()
    }
}

/// The queues and batching stages whose fullness is reported (the
/// summaries TensorFlow's `batch` and `shuffle_batch` add to the graph).
///
/// Watch a whole [`Pipeline`] (every queue a runner fills) and the
/// [`BatchSource`]s that need more than a queue's counters; a batching
/// stage watched both ways is reported once, as a stage. Cloning is cheap
/// (the queues are shared) and a clone sees the same queues.
///
/// Tags are `{name}/...` after the queue's name; when two watched queues
/// share a name, the later ones get `_1`, `_2`, ... as TensorFlow's name
/// scopes do.
#[derive(Debug, Clone, Default)]
pub struct Monitor {
    entries: Vec<Entry>,
}

impl Monitor {
    /// A monitor watching nothing.
    pub fn new() -> Monitor {
        Monitor::default()
    }

    /// Watches every queue a runner of `pipeline` fills (so far).
    pub fn watch_pipeline(mut self, pipeline: &Pipeline) -> Monitor {
        for q in pipeline.queues() {
            self.add(Entry::Queue(Arc::clone(q)));
        }
        self
    }

    /// Watches one queue.
    pub fn watch_queue(mut self, queue: Arc<dyn Queue>) -> Monitor {
        self.add(Entry::Queue(queue));
        self
    }

    /// Watches a batching stage; replaces a plain watch of its queue.
    pub fn watch_batches(mut self, source: &BatchSource) -> Monitor {
        self.add(Entry::Batches(source.clone()));
        self
    }

    fn add(&mut self, entry: Entry) {
        let key = entry.key();
        match self.entries.iter_mut().find(|e| e.key() == key) {
            Some(old @ Entry::Queue(_)) => *old = entry,
            Some(Entry::Batches(_)) => {}
            None => self.entries.push(entry),
        }
    }

    /// The statistics of every watched batching stage.
    pub fn batch_stats(&self) -> Vec<BatchStats> {
        self.entries
            .iter()
            .filter_map(|e| match e {
                Entry::Batches(b) => Some(b.stats()),
                Entry::Queue(_) => None,
            })
            .collect()
    }

    /// The scalars of every watched queue, now:
    ///
    /// * `{name}/fraction_of_{capacity}_full`: size / capacity;
    /// * for a shuffling stage,
    ///   `{name}/fraction_over_{min}_of_{capacity - min}_full`: (size -
    ///   min_after_dequeue) / (capacity - min_after_dequeue), at least 0;
    /// * `{name}/size`, `{name}/enqueued`, `{name}/dequeued`;
    /// * for a batching stage, `{name}/batches` and `{name}/held_back`.
    pub fn scalars(&self) -> Vec<Scalar> {
        let mut seen: HashMap<String, usize> = HashMap::new();
        let mut out = Vec::new();
        for entry in &self.entries {
            let (name, stats) = match entry {
                Entry::Queue(q) => {
                    let s = q.stats();
                    let stats = BatchStats {
                        name: q.name().to_owned(),
                        capacity: s.capacity,
                        size: s.size,
                        enqueued: s.enqueued,
                        dequeued: s.dequeued,
                        closed: s.closed,
                        ..BatchStats::default()
                    };
                    (q.name().to_owned(), stats)
                }
                Entry::Batches(b) => (b.name().to_owned(), b.stats()),
            };
            let count = seen.entry(name.clone()).or_insert(0);
            let prefix = if *count == 0 {
                name
            } else {
                format!("{name}_{count}")
            };
            *count += 1;
            let tag = |what: &str| format!("{prefix}/{what}");
            out.push(Scalar::new(
                tag(&format!("fraction_of_{}_full", stats.capacity)),
                stats.fraction_full(),
            ));
            if let (Some(min), Some(f)) =
                (stats.min_after_dequeue, stats.fraction_over_min())
            {
                let room = stats.capacity.saturating_sub(min);
                out.push(Scalar::new(
                    tag(&format!("fraction_over_{min}_of_{room}_full")),
                    f,
                ));
            }
            out.push(Scalar::new(tag("size"), stats.size as f64));
            out.push(Scalar::new(tag("enqueued"), stats.enqueued as f64));
            out.push(Scalar::new(tag("dequeued"), stats.dequeued as f64));
            if let Entry::Batches(_) = entry {
                out.push(Scalar::new(tag("batches"), stats.batches as f64));
                out.push(Scalar::new(
                    tag("held_back"),
                    stats.held_back as f64,
                ));
            }
        }
        out
    }
}
