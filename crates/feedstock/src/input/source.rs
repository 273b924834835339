//! The consumer end of a batching stage: [`BatchSource`] and the
//! [`Batch`]es it yields.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;

use crate::coord::{BatchCounters, Coordinator, Stage, StageStats};
use crate::error::{Error, Kind, Result};
use crate::queue::{DequeueMode, Queue};
use crate::tensor::{Tensor, Value};

/// What a batching stage's runner threads and its sources share.
pub(crate) struct Shared {
    /// The stage's name.
    name: String,
    /// The batching queue.
    queue: Arc<dyn Queue>,
    /// Examples per batch, batches delivered, examples held back; the
    /// pipeline reports the same counters.
    counters: Arc<BatchCounters>,
    /// Whether the last batch may be smaller.
    allow_smaller: bool,
    /// The component names, when every component is named.
    names: Option<Arc<[String]>>,
    /// The first error a runner thread's closure or enqueue returned
    /// (OutOfRange and Cancelled excepted).
    first_error: Mutex<Option<Error>>,
}

impl Shared {
    pub(crate) fn new(
        name: String,
        queue: Arc<dyn Queue>,
        counters: Arc<BatchCounters>,
        allow_smaller: bool,
        names: Option<Arc<[String]>>,
    ) -> Shared {
        Shared {
            name,
            queue,
            counters,
            allow_smaller,
            names,
            first_error: Mutex::new(None),
        }
    }

    /// Remembers `e` if it is the first real error of a runner thread, and
    /// passes it on.
    pub(crate) fn note_error(&self, e: Error) -> Error {
        if !matches!(e.kind(), Kind::OutOfRange | Kind::Cancelled) {
            self.first_error.lock().get_or_insert_with(|| e.clone());
        }
        e
    }

    /// The error that explains an end of input, if there is one.
    fn real_error(&self) -> Option<Error> {
        if let Some(e) = self.first_error.lock().clone() {
            return Some(e);
        }
        self.counters.stop_error()
    }
}

/// One batch: each component with a leading batch axis.
#[derive(Debug, Clone, PartialEq)]
pub struct Batch {
    /// One value per component.
    components: Vec<Value>,
    /// The components' names, when all are named.
    names: Option<Arc<[String]>>,
}

impl Batch {
    /// A batch of `components`, optionally named.
    pub fn new(components: Vec<Value>, names: Option<Arc<[String]>>) -> Batch {
        Batch { components, names }
    }

    /// The number of examples (the size of the batch axis).
    pub fn len(&self) -> usize {
        match self.components.first() {
            Some(Value::Dense(t)) => t.dims().first().copied().unwrap_or(0),
            Some(Value::Sparse(s)) => s.dims().first().copied().unwrap_or(0),
            None => 0,
        }
    }

    /// True when the batch holds no example.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The components, in declaration order.
    pub fn components(&self) -> &[Value] {
        &self.components
    }

    /// The components, by value.
    pub fn into_components(self) -> Vec<Value> {
        self.components
    }

    /// Component `i`.
    pub fn component(&self, i: usize) -> Option<&Value> {
        self.components.get(i)
    }

    /// The component names, when every component was named.
    pub fn names(&self) -> Option<&[String]> {
        self.names.as_deref()
    }

    /// The component named `name`.
    pub fn get(&self, name: &str) -> Option<&Value> {
        let i = self.names.as_ref()?.iter().position(|n| n == name)?;
        self.components.get(i)
    }

    /// The dense component named `name`.
    ///
    /// # Errors
    /// InvalidArgument, naming the field, when there is no such component
    /// or it is sparse.
    pub fn tensor(&self, name: &str) -> Result<&Tensor> {
        let v = self.get(name).ok_or_else(|| {
            Error::invalid_argument(format!(
                "the batch has no component named '{name}'"
            ))
            .with_field(name)
        })?;
        v.dense().map_err(|e| e.with_field(name))
    }
}

/// The batches of a batching stage (made by
/// [`batch`](super::batch()), [`shuffle_batch`](super::shuffle_batch)
/// and friends).
///
/// [`next_batch`](BatchSource::next_batch) dequeues `batch_size` examples
/// (or, with `allow_smaller_final_batch`, up to `batch_size` at the end).
/// As an iterator (by value, or through [`BatchSource::iter`]) it yields
/// `Ok(batch)` until the input ends, then stops; if the input ended
/// because of an error, it yields that error last. The error is the first
/// one a runner thread of this stage met, or else the one the
/// [attached](BatchSource::attach) coordinator was stopped with, so that
/// an error upstream (a producer, another stage) is not mistaken for the
/// end of input.
///
/// Clones share the queue: several consumer threads may take batches.
#[derive(Clone)]
pub struct BatchSource {
    shared: Arc<Shared>,
    /// Set once the iterator has yielded its end or an error.
    done: bool,
}

impl fmt::Debug for BatchSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BatchSource")
            .field("name", &self.shared.name)
            .field("batch_size", &self.shared.counters.batch_size())
            .field("allow_smaller", &self.shared.allow_smaller)
            .finish()
    }
}

impl BatchSource {
    pub(crate) fn new(shared: Arc<Shared>) -> BatchSource {
        BatchSource {
            shared,
            done: false,
        }
    }

    /// The stage's name.
    pub fn name(&self) -> &str {
        &self.shared.name
    }

    /// Examples per batch.
    pub fn batch_size(&self) -> usize {
        self.shared.counters.batch_size()
    }

    /// The batching queue.
    pub fn queue(&self) -> &Arc<dyn Queue> {
        &self.shared.queue
    }

    /// Makes `coord`'s stop error the error that ends iteration when the
    /// input ends early (see the type's docs).
    /// [`Pipeline::start`](crate::coord::Pipeline::start) does this for
    /// every batching stage of its pipeline; call it only for a stage
    /// started some other way.
    pub fn attach(&self, coord: &Coordinator) {
        self.shared.counters.attach(coord);
    }

    /// The next batch, waiting for it.
    ///
    /// # Errors
    /// OutOfRange at the end of input (and no smaller final batch to
    /// give); the first real error of the stage's threads or of the
    /// attached coordinator when the input ended because of it;
    /// FailedPrecondition when the pipeline was not started; the queue's
    /// InvalidArgument when examples cannot be stacked (differing shapes).
    pub fn next_batch(&self) -> Result<Batch> {
        self.dequeue(None)
    }

    /// [`BatchSource::next_batch`], failing DeadlineExceeded after
    /// `timeout`.
    ///
    /// # Errors
    /// As [`BatchSource::next_batch`]; DeadlineExceeded on timeout.
    pub fn next_batch_timeout(&self, timeout: Duration) -> Result<Batch> {
        self.dequeue(Some(timeout))
    }

    fn dequeue(&self, timeout: Option<Duration>) -> Result<Batch> {
        let s = &self.shared;
        let mode = if s.allow_smaller {
            DequeueMode::UpTo
        } else {
            DequeueMode::Many
        };
        let batch_size = s.counters.batch_size();
        match s.queue.dequeue_batch(batch_size, mode, timeout) {
            Ok(components) => {
                s.counters.delivered();
                Ok(Batch::new(components, s.names.clone()))
            }
            Err(e)
                if matches!(e.kind(), Kind::OutOfRange | Kind::Cancelled) =>
            {
                if mode == DequeueMode::Many {
                    s.counters.set_held_back(s.queue.size() as u64);
                }
                Err(s.real_error().unwrap_or(e))
            }
            Err(e) => Err(e),
        }
    }

    /// The examples held back at the end of input (fewer than
    /// `batch_size`), as one smaller batch, for a stage that does not
    /// allow a smaller final batch; `None` when there are none. Call it
    /// once iteration has ended.
    ///
    /// # Errors
    /// The queue's errors; OutOfRange is `Ok(None)`.
    pub fn take_remainder(&self) -> Result<Option<Batch>> {
        let s = &self.shared;
        match s.queue.dequeue_up_to(s.counters.batch_size()) {
            Ok(components) => {
                s.counters.set_held_back(0);
                Ok(Some(Batch::new(components, s.names.clone())))
            }
            Err(e) if e.is_out_of_range() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The stage's counters: its queue's and its own (batches
    /// delivered, examples held back), the same entry as the pipeline's
    /// [`Pipeline::stats`](crate::coord::Pipeline::stats) reports for it.
    pub fn stats(&self) -> StageStats {
        self.stage().stats()
    }

    /// The stage as the pipeline and the summary monitor see it.
    pub(crate) fn stage(&self) -> Stage {
        Stage {
            queue: Arc::clone(&self.shared.queue),
            batching: Some(Arc::clone(&self.shared.counters)),
        }
    }

    /// An iterator over the batches; see the type's docs.
    pub fn iter(&self) -> Batches<'_> {
        Batches {
            source: self,
            done: false,
        }
    }
}

/// Ends iteration: `None` for a clean end, the error otherwise.
fn step(result: Result<Batch>, done: &mut bool) -> Option<Result<Batch>> {
    if *done {
        return None;
    }
    match result {
        Ok(b) => Some(Ok(b)),
        Err(e) => {
            *done = true;
            if e.is_out_of_range() {
                None
            } else {
                Some(Err(e))
            }
        }
    }
}

impl Iterator for BatchSource {
    type Item = Result<Batch>;

    fn next(&mut self) -> Option<Result<Batch>> {
        if self.done {
            return None;
        }
        step(self.next_batch(), &mut self.done)
    }
}

/// An iterator over a [`BatchSource`]'s batches, from
/// [`BatchSource::iter`].
#[derive(Debug)]
pub struct Batches<'a> {
    source: &'a BatchSource,
    done: bool,
}

impl Iterator for Batches<'_> {
    type Item = Result<Batch>;

    fn next(&mut self) -> Option<Result<Batch>> {
        if self.done {
            return None;
        }
        step(self.source.next_batch(), &mut self.done)
    }
}
