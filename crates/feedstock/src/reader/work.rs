//! Queues as sources of work: a filename queue hands a [`Reader`] its
//! next file.
//!
//! [`Reader`]: super::Reader

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;

use super::WorkQueue;
use crate::error::{Error, Result};
use crate::queue::{FifoQueue, Queue};
use crate::tensor::{DType, Value};

/// The filename in a dequeued element, which must be one string scalar
/// (TensorFlow checks the same).
pub(crate) fn filename(element: Vec<Value>) -> Result<String> {
    let [value] = <[Value; 1]>::try_from(element).map_err(|e| {
        Error::invalid_argument(format!(
            "a work queue must hold one string per element, got {} \
             components",
            e.len()
        ))
    })?;
    let t = value.into_dense()?;
    if t.dtype() != DType::String || t.num_elements() != 1 {
        return Err(Error::invalid_argument(format!(
            "a work queue must hold one string per element, got a {} \
             tensor of shape {:?}",
            t.dtype().name(),
            t.dims()
        )));
    }
    let bytes: Bytes = t.as_slice::<Bytes>()?[0].clone();
    String::from_utf8(bytes.to_vec()).map_err(|_| {
        Error::invalid_argument(format!(
            "work item is not valid UTF-8: {:?}",
            String::from_utf8_lossy(&bytes)
        ))
    })
}

impl WorkQueue for dyn Queue {
    fn next_work(&self) -> Result<String> {
        filename(self.dequeue()?)
    }

    fn next_work_timeout(&self, timeout: Option<Duration>) -> Result<String> {
        match timeout {
            Some(t) => filename(self.dequeue_timeout(t)?),
            None => self.next_work(),
        }
    }
}

impl WorkQueue for FifoQueue {
    fn next_work(&self) -> Result<String> {
        filename(self.dequeue()?)
    }

    fn next_work_timeout(&self, timeout: Option<Duration>) -> Result<String> {
        (self as &dyn Queue).next_work_timeout(timeout)
    }
}

impl<Q: WorkQueue + ?Sized> WorkQueue for Arc<Q> {
    fn next_work(&self) -> Result<String> {
        (**self).next_work()
    }

    fn next_work_timeout(&self, timeout: Option<Duration>) -> Result<String> {
        (**self).next_work_timeout(timeout)
    }
}
