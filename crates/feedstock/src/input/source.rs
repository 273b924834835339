//! The consumer end of a batching stage: [`BatchSource`] and the
//! [`Batch`]es it yields.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;

use crate::coord::Coordinator;
use crate::error::{Error, Kind, Result};
use crate::queue::{DequeueMode, Queue};
use crate::tensor::{Tensor, Value};

/// What a batching stage's runner threads and its sources share.
pub(crate) struct Shared {
    /// The stage's name.
    name: String,
    /// The batching queue.
    queue: Arc<dyn Queue>,
    /// Examples per batch.
    batch_size: usize,
    /// For a shuffling stage, the queue's `min_after_dequeue`.
    min_after_dequeue: Option<usize>,
    /// Whether the last batch may be smaller.
    allow_smaller: bool,
    /// The component names, when every component is named.
    names: Option<Arc<[String]>>,
    /// The first error a runner thread's closure or enqueue returned
    /// (OutOfRange and Cancelled excepted).
    first_error: Mutex<Option<Error>>,
    /// The coordinator whose error ends iteration, if one was attached.
    coord: Mutex<Option<Coordinator>>,
    /// Batches delivered.
    batches: AtomicU64,
    /// Examples left in the closed queue that no full batch could take.
    held_back: AtomicU64,
}

impl Shared {
    pub(crate) fn new(
        name: String,
        queue: Arc<dyn Queue>,
        batch_size: usize,
        min_after_dequeue: Option<usize>,
        allow_smaller: bool,
        names: Option<Arc<[String]>>,
    ) -> Shared {
        Shared {
            name,
            queue,
            batch_size,
            min_after_dequeue,
            allow_smaller,
            names,
            first_error: Mutex::new(None),
            coord: Mutex::new(None),
            batches: AtomicU64::new(0),
            held_back: AtomicU64::new(0),
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
        self.coord.lock().as_ref().and_then(Coordinator::error)
    }
}

/// A snapshot of a batching stage's counters: a plain struct, cheap to
/// take at any time.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BatchStats {
    /// The stage's name (and its queue's).
    pub name: String,
    /// Examples per batch.
    pub batch_size: usize,
    /// The queue's capacity.
    pub capacity: usize,
    /// Examples in the queue now.
    pub size: usize,
    /// For a shuffling stage, the examples the open queue keeps back.
    pub min_after_dequeue: Option<usize>,
    /// Examples enqueued so far.
    pub enqueued: u64,
    /// Examples dequeued so far.
    pub dequeued: u64,
    /// Batches delivered so far.
    pub batches: u64,
    /// Examples left at the end of input that make no full batch, when
    /// the stage does not allow a smaller final batch: the only examples a
    /// finished pipeline did not deliver. Known once the end was reached
    /// (0 before).
    pub held_back: u64,
    /// Whether the queue is closed (its input has ended or a stop was
    /// requested).
    pub closed: bool,
}

impl BatchStats {
    /// How full the queue is, from 0 to 1 (TensorFlow's
    /// `fraction_of_{capacity}_full` summary).
    pub fn fraction_full(&self) -> f64 {
        if self.capacity == 0 {
            0.0
        } else {
            self.size as f64 / self.capacity as f64
        }
    }

    /// For a shuffling stage, how full the part of the queue above
    /// `min_after_dequeue` is, from 0 to 1: `(size - min) / (capacity -
    /// min)`, clamped at 0 (TensorFlow's
    /// `fraction_over_{min}_of_{capacity - min}_full` summary). Above 0
    /// means a batch can be taken without waiting.
    pub fn fraction_over_min(&self) -> Option<f64> {
        let min = self.min_after_dequeue?;
        let room = self.capacity.saturating_sub(min);
        if room == 0 {
            return Some(0.0);
        }
        Some(self.size.saturating_sub(min) as f64 / room as f64)
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
            Some(Value::Sparse(s)) => {
                s.dense_shape().first().map_or(0, |&d| d as usize)
            }
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
            .field("batch_size", &self.shared.batch_size)
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
        self.shared.batch_size
    }

    /// The batching queue.
    pub fn queue(&self) -> &Arc<dyn Queue> {
        &self.shared.queue
    }

    /// Makes `coord`'s stop error the error that ends iteration when the
    /// input ends early (see the type's docs).
    pub fn attach(&self, coord: &Coordinator) {
        *self.shared.coord.lock() = Some(coord.clone());
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
        match s.queue.dequeue_batch(s.batch_size, mode, timeout) {
            Ok(components) => {
                s.batches.fetch_add(1, Ordering::Relaxed);
                Ok(Batch::new(components, s.names.clone()))
            }
            Err(e)
                if matches!(e.kind(), Kind::OutOfRange | Kind::Cancelled) =>
            {
                if mode == DequeueMode::Many {
                    s.held_back
                        .store(s.queue.size() as u64, Ordering::Relaxed);
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
        match s.queue.dequeue_up_to(s.batch_size) {
            Ok(components) => {
                s.held_back.store(0, Ordering::Relaxed);
                Ok(Some(Batch::new(components, s.names.clone())))
            }
            Err(e) if e.is_out_of_range() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The stage's counters.
    pub fn stats(&self) -> BatchStats {
        let s = &self.shared;
        let q = s.queue.stats();
        BatchStats {
            name: s.name.clone(),
            batch_size: s.batch_size,
            capacity: q.capacity,
            size: q.size,
            min_after_dequeue: s.min_after_dequeue,
            enqueued: q.enqueued,
            dequeued: q.dequeued,
            batches: s.batches.load(Ordering::Relaxed),
            held_back: s.held_back.load(Ordering::Relaxed),
            closed: q.closed,
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
