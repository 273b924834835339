//! `limit_epochs`: a tensor handed out a set number of times.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{Error, Result};
use crate::tensor::Tensor;

/// A tensor that can be taken a limited number of times, then reports
/// the end of input (TensorFlow's `tf.train.limit_epochs`); see
/// [`limit_epochs`].
#[derive(Debug)]
pub struct LimitEpochs {
    /// What every call hands out.
    tensor: Tensor,
    /// How many calls succeed; `None`: all of them.
    limit: Option<u64>,
    /// Calls that succeeded so far.
    taken: AtomicU64,
}

/// Hands out `tensor` `num_epochs` times, then fails OutOfRange
/// (TensorFlow's `tf.train.limit_epochs`); with `None`, for ever.
/// Typically called from a runner's operation, so that the OutOfRange
/// after the last epoch closes its queue. Safe to share between threads:
/// exactly `num_epochs` calls succeed in all.
///
/// ```
/// use feedstock::input::limit_epochs;
/// use feedstock::{Kind, Tensor};
///
/// let epochs = limit_epochs(Tensor::vector(vec![1i64, 2]), Some(2))?;
/// assert_eq!(epochs.next()?.as_slice::<i64>()?, &[1, 2]);
/// assert_eq!(epochs.next()?.as_slice::<i64>()?, &[1, 2]);
/// assert_eq!(epochs.next().unwrap_err().kind(), Kind::OutOfRange);
/// # Ok::<(), feedstock::Error>(())
/// ```
///
/// # Errors
/// InvalidArgument for `Some(0)`, as TensorFlow raises ValueError
/// ("num_epochs must be > 0").
pub fn limit_epochs(
    tensor: Tensor,
    num_epochs: Option<u64>,
) -> Result<LimitEpochs> {
    if num_epochs == Some(0) {
        return Err(Error::invalid_argument(
            "limit_epochs: num_epochs must be > 0, got 0",
        ));
    }
    Ok(LimitEpochs {
        tensor,
        limit: num_epochs,
        taken: AtomicU64::new(0),
    })
}

impl LimitEpochs {
    /// A copy of the tensor, if fewer than the limit were taken so far.
    ///
    /// # Errors
    /// OutOfRange once the limit is reached, naming it.
    pub fn next(&self) -> Result<Tensor> {
        if let Some(limit) = self.limit {
            // Counts only successful takes, so the count never passes the
            // limit however many threads keep calling.
            let taken = self.taken.fetch_update(
                Ordering::AcqRel,
                Ordering::Acquire,
                |n| (n < limit).then_some(n + 1),
            );
            if taken.is_err() {
                return Err(Error::out_of_range(format!(
                    "limit_epochs: the limit of {limit} epochs is reached"
                )));
            }
        } else {
            self.taken.fetch_add(1, Ordering::AcqRel);
        }
        Ok(self.tensor.clone())
    }

    /// How many times the tensor was handed out so far.
    pub fn epochs_taken(&self) -> u64 {
        self.taken.load(Ordering::Acquire)
    }

    /// The limit, `None` for none.
    pub fn num_epochs(&self) -> Option<u64> {
        self.limit
    }
}
