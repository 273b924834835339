//! [`slice_input_producer`]: rows of preloaded tensors, through a queue of
//! their indices.

use super::*;

/// Configures a [`slice_input_producer`].
#[derive(Debug)]
pub struct SliceInputProducerBuilder<'p> {
    pipeline: &'p mut Pipeline,
    tensors: Vec<Tensor>,
    epochs: Epochs,
}

impl SliceInputProducerBuilder<'_> {
    epoch_setters!();

    /// Makes the queue of row indices and registers its runner in the
    /// pipeline.
    ///
    /// # Errors
    ///
    /// [`Kind::InvalidArgument`](crate::Kind::InvalidArgument) for no
    /// tensors, a scalar, tensors with different numbers of rows (naming
    /// the component), no rows, or a zero capacity.
    pub fn build(&mut self) -> Result<SliceProducer> {
        let rows = match self.tensors.first().map(|t| t.dims().first()) {
            Some(Some(&n)) => n,
            _ => {
                return Err(Error::invalid_argument(
                    "slice_input_producer needs at least one tensor with \
                     at least one dimension",
                ))
            }
        };
        for (i, t) in self.tensors.iter().enumerate() {
            if t.dims().first() != Some(&rows) {
                return Err(Error::invalid_argument(format!(
                    "all tensors must have {rows} rows like the first, this \
                     one has shape {:?}",
                    t.dims()
                ))
                .with_field(i.to_string()));
            }
        }
        let limit = i32::try_from(rows).map_err(|_| {
            Error::invalid_argument(format!("{rows} rows do not fit in i32"))
        })?;
        let tracker = range_queue(self.pipeline, limit, &self.epochs)?;
        Ok(SliceProducer {
            tensors: Arc::from(std::mem::take(&mut self.tensors)),
            tracker,
        })
    }
}

/// Rows of several tensors held once in memory, shuffled across each
/// epoch (TensorFlow's `slice_input_producer`).
///
/// The tensors are shared through an `Arc`; only row indices go through
/// the queue, so an epoch copies nothing but the rows taken.
pub fn slice_input_producer(
    pipeline: &mut Pipeline,
    tensors: Vec<Tensor>,
) -> SliceInputProducerBuilder<'_> {
    SliceInputProducerBuilder {
        pipeline,
        tensors,
        epochs: Epochs::new("input_producer"),
    }
}

/// The preloaded tensors of a [`slice_input_producer`] and its queue of
/// row indices.
///
/// Rows are sliced out of the tensors as they are dequeued, one at a time
/// ([`dequeue`](Self::dequeue)) or many
/// ([`dequeue_up_to`](Self::dequeue_up_to),
/// [`dequeue_many`](Self::dequeue_many)). Taking
/// many at once is much faster: one hand-off through the index queue and
/// one copy per row straight into the batch. Give the producer a
/// [`capacity`](SliceInputProducerBuilder::capacity) of a few batches
/// so that a batch's indices are there at once.
///
/// ```
/// use std::time::Duration;
///
/// use feedstock::coord::{Coordinator, Pipeline};
/// use feedstock::input::{batch, slice_input_producer};
/// use feedstock::{DType, Tensor};
///
/// let mut pipeline = Pipeline::new();
/// let rows = slice_input_producer(
///     &mut pipeline,
///     vec![Tensor::vector((0..10i64).collect())],
/// )
/// .num_epochs(2)
/// .seed(3)
/// .capacity(16)
/// .build()?;
/// // Each call hands batch() up to 4 rows, stacked: enqueue_many.
/// let batches = batch(&mut pipeline, move || {
///     Ok(rows.dequeue_up_to(4)?.into_iter().map(Into::into).collect())
/// })
/// .dtypes([DType::I64])
/// .names(["x"])
/// .enqueue_many(true)
/// .batch_size(4)
/// .allow_smaller_final_batch(true)
/// .build()?;
///
/// let coord = Coordinator::new();
/// let threads = pipeline.start(&coord)?;
/// let mut seen = Vec::new();
/// for b in batches.iter() {
///     let b = b?;
///     seen.extend_from_slice(b.tensor("x")?.as_slice::<i64>()?);
/// }
/// seen.sort();
/// let twice: Vec<i64> = (0..10).flat_map(|i| [i, i]).collect();
/// assert_eq!(seen, twice);
/// coord.join(threads, Duration::from_secs(10))?;
/// # Ok::<(), feedstock::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct SliceProducer {
    tensors: Arc<[Tensor]>,
    tracker: Tracker,
}

impl SliceProducer {
    /// The next row of every tensor, in the order the tensors were given.
    ///
    /// # Errors
    ///
    /// [`Kind::OutOfRange`](crate::Kind::OutOfRange) after the last epoch;
    /// the errors of the index queue.
    pub fn dequeue(&self) -> Result<Vec<Tensor>> {
        let element = self.tracker.queue.dequeue()?;
        let index = element
            .first()
            .ok_or_else(|| Error::internal("empty index element"))?
            .dense()?
            .scalar_value::<i32>()?;
        let i = usize::try_from(index)
            .map_err(|_| Error::internal("negative row index"))?;
        self.tensors.iter().map(|t| t.index(i)).collect()
    }

    /// The next `n` rows of every tensor, stacked along a new axis 0
    /// (one tensor per input tensor, `n` rows each), or fewer when the
    /// last epoch ends with fewer left — as a closure for
    /// [`batch`](crate::input::batch()) with
    /// [`enqueue_many`](crate::input::BatchBuilder::enqueue_many) wants them.
    ///
    /// # Errors
    ///
    /// [`Kind::OutOfRange`](crate::Kind::OutOfRange) once every epoch has
    /// been handed out; InvalidArgument for `n == 0`; the errors of the
    /// index queue.
    pub fn dequeue_up_to(&self, n: usize) -> Result<Vec<Tensor>> {
        check_many(n)?;
        let indices = self.tracker.queue.dequeue_up_to(n)?;
        self.rows(&indices)
    }

    /// Exactly `n` rows of every tensor, stacked along a new axis 0.
    ///
    /// # Errors
    ///
    /// [`Kind::OutOfRange`](crate::Kind::OutOfRange) when the last epoch
    /// has fewer than `n` rows left (they stay in the queue, for
    /// [`dequeue_up_to`](Self::dequeue_up_to)); InvalidArgument for
    /// `n == 0`; the errors of the index queue.
    pub fn dequeue_many(&self, n: usize) -> Result<Vec<Tensor>> {
        check_many(n)?;
        let indices = self.tracker.queue.dequeue_many(n)?;
        self.rows(&indices)
    }

    /// The rows named by a dequeued batch of indices.
    fn rows(&self, indices: &[crate::tensor::Value]) -> Result<Vec<Tensor>> {
        let indices = indices
            .first()
            .ok_or_else(|| Error::internal("empty index batch"))?
            .dense()?
            .as_slice::<i32>()?
            .iter()
            .map(|&i| {
                usize::try_from(i)
                    .map_err(|_| Error::internal("negative row index"))
            })
            .collect::<Result<Vec<usize>>>()?;
        self.tensors.iter().map(|t| gather(t, &indices)).collect()
    }

    /// The position of the next row a consumer will take; see
    /// [`Producer::state`], whose caveats apply. Rows already taken are
    /// consumed, whether or not they have reached the training loop.
    pub fn state(&self) -> ProducerState {
        self.tracker.state()
    }

    /// The preloaded tensors.
    pub fn tensors(&self) -> &Arc<[Tensor]> {
        &self.tensors
    }

    /// The queue of row indices.
    pub fn indices(&self) -> &Arc<FifoQueue> {
        &self.tracker.queue
    }
}

fn check_many(n: usize) -> Result<()> {
    if n == 0 {
        return Err(Error::invalid_argument(
            "dequeue of 0 rows: n must be at least 1",
        ));
    }
    Ok(())
}
