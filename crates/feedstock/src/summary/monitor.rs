//! What a summary writer watches, and the scalars it reports.

use std::collections::HashMap;
use std::sync::Arc;

use crate::coord::{Pipeline, Stage, StageStats};
use crate::input::BatchSource;
use crate::io::tfrecord::SkipLog;
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

/// The queues and batching stages whose fullness is reported (the
/// summaries TensorFlow's `batch` and `shuffle_batch` add to the graph).
///
/// Watch a whole [`Pipeline`] (every queue a runner fills, with the
/// counters of the batching stages built in it) or single queues and
/// [`BatchSource`]s; a queue watched twice is reported once, with its
/// batching stage's counters if either watch knew them. The numbers are
/// the same [`StageStats`] as [`Pipeline::stats`] gives. Cloning is cheap
/// (the queues are shared) and a clone sees the same queues.
///
/// Tags are `{name}/...` after the queue's name; when two watched queues
/// share a name, the later ones get `_1`, `_2`, ... as TensorFlow's name
/// scopes do.
#[derive(Debug, Clone, Default)]
pub struct Monitor {
    stages: Vec<Stage>,
    /// Logs of skipped corrupt records.
    skip_logs: Vec<SkipLog>,
}

impl Monitor {
    /// A monitor watching nothing.
    pub fn new() -> Monitor {
        Monitor::default()
    }

    /// Watches every queue a runner of `pipeline` fills (so far), and
    /// the batching stages reading them.
    pub fn watch_pipeline(mut self, pipeline: &Pipeline) -> Monitor {
        for stage in pipeline.stages() {
            self.add(stage.clone());
        }
        self.watch_skips(&pipeline.skip_log())
    }

    /// Watches a log of skipped corrupt records (a reader's; a
    /// pipeline's is watched with the pipeline). A log watched twice is
    /// reported once.
    pub fn watch_skips(mut self, log: &SkipLog) -> Monitor {
        if !self.skip_logs.iter().any(|l| l.same(log)) {
            self.skip_logs.push(log.clone());
        }
        self
    }

    /// Watches one queue.
    pub fn watch_queue(mut self, queue: Arc<dyn Queue>) -> Monitor {
        self.add(Stage {
            queue,
            batching: None,
        });
        self
    }

    /// Watches a batching stage.
    pub fn watch_batches(mut self, source: &BatchSource) -> Monitor {
        self.add(source.stage());
        self
    }

    fn add(&mut self, stage: Stage) {
        match self
            .stages
            .iter_mut()
            .find(|s| Arc::ptr_eq(&s.queue, &stage.queue))
        {
            Some(old) => {
                if old.batching.is_none() {
                    old.batching = stage.batching;
                }
            }
            None => self.stages.push(stage),
        }
    }

    /// The statistics of every watched queue, now.
    pub fn stats(&self) -> Vec<StageStats> {
        self.stages.iter().map(Stage::stats).collect()
    }

    /// The statistics of every watched batching stage.
    pub fn batch_stats(&self) -> Vec<StageStats> {
        self.stats()
            .into_iter()
            .filter(|s| s.batching.is_some())
            .collect()
    }

    /// The scalars of every watched queue, now:
    ///
    /// * `{name}/fraction_of_{capacity}_full`: size / capacity;
    /// * for a shuffle queue,
    ///   `{name}/fraction_over_{min}_of_{capacity - min}_full`: (size -
    ///   min_after_dequeue) / (capacity - min_after_dequeue), at least 0;
    /// * `{name}/size`, `{name}/enqueued`, `{name}/dequeued`;
    /// * for a batching stage, `{name}/batches`, `{name}/held_back` and
    ///   `{name}/filtered`;
    /// * for each watched skip log (the pipeline's included),
    ///   `corrupt_records/skipped` and `corrupt_records/skipped_bytes` in
    ///   all, and per file with a skip
    ///   `corrupt_records/{file}/skipped`,
    ///   `corrupt_records/{file}/skipped_bytes` and
    ///   `corrupt_records/{file}/last_offset` (the offset of the last
    ///   region listed); a second log gets `corrupt_records_1/...`.
    pub fn scalars(&self) -> Vec<Scalar> {
        let mut seen: HashMap<String, usize> = HashMap::new();
        let mut out = Vec::new();
        for stats in self.stats() {
            let count = seen.entry(stats.name.clone()).or_insert(0);
            let prefix = if *count == 0 {
                stats.name.clone()
            } else {
                format!("{}_{count}", stats.name)
            };
            *count += 1;
            let tag = |what: &str| format!("{prefix}/{what}");
            let q = &stats.queue;
            out.push(Scalar::new(
                tag(&format!("fraction_of_{}_full", q.capacity)),
                stats.fraction_full(),
            ));
            if let (Some(min), Some(f)) =
                (q.min_after_dequeue, stats.fraction_over_min())
            {
                let room = q.capacity.saturating_sub(min);
                out.push(Scalar::new(
                    tag(&format!("fraction_over_{min}_of_{room}_full")),
                    f,
                ));
            }
            out.push(Scalar::new(tag("size"), q.size as f64));
            out.push(Scalar::new(tag("enqueued"), q.enqueued as f64));
            out.push(Scalar::new(tag("dequeued"), q.dequeued as f64));
            if let Some(b) = stats.batching {
                out.push(Scalar::new(tag("batches"), b.batches as f64));
                out.push(Scalar::new(tag("held_back"), b.held_back as f64));
                out.push(Scalar::new(tag("filtered"), b.filtered as f64));
            }
        }
        for (i, log) in self.skip_logs.iter().enumerate() {
            let prefix = match i {
                0 => "corrupt_records".to_owned(),
                i => format!("corrupt_records_{i}"),
            };
            let stats = log.stats();
            let tag = |what: &str| format!("{prefix}/{what}");
            out.push(Scalar::new(tag("skipped"), stats.skipped as f64));
            out.push(Scalar::new(
                tag("skipped_bytes"),
                stats.skipped_bytes as f64,
            ));
            for f in &stats.files {
                let file = &f.file;
                out.push(Scalar::new(
                    tag(&format!("{file}/skipped")),
                    f.skipped as f64,
                ));
                out.push(Scalar::new(
                    tag(&format!("{file}/skipped_bytes")),
                    f.skipped_bytes as f64,
                ));
                if let Some(r) = f.regions.last() {
                    out.push(Scalar::new(
                        tag(&format!("{file}/last_offset")),
                        r.offset as f64,
                    ));
                }
            }
        }
        out
    }
}
