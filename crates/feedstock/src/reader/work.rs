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

/// What a filename queue hands a [`Reader`](super::Reader): a file, and
/// optionally which of its records to keep — how a sharded producer
/// (`string_input_producer(..).shard(index, count)`) tells each host's
/// readers its part of a file.
///
/// Of the file's records, numbered from 0, the reader keeps those whose
/// number `r` has `r % every == offset`, at most `limit` of them, and
/// passes over the others without handing them on (their framing and
/// checksums are still checked, so a corrupt record fails on every host
/// alike). With `pad`, the records kept are padding: their keys start
/// with [`PAD_KEY_PREFIX`].
///
/// A unit that keeps every record is the file name itself; any other is
/// encoded as a string no file name can be (it starts with a NUL byte),
/// so that it travels through any string queue, and a reader of an
/// unsharded pipeline sees plain file names exactly as before.
///
/// ```
/// use feedstock::reader::WorkUnit;
///
/// let unit = WorkUnit::file("data/a.tfrecord").every(3, 1).limit(10);
/// let s = unit.encode();
/// assert_ne!(s, "data/a.tfrecord");
/// assert_eq!(WorkUnit::parse(&s)?, unit);
/// assert_eq!(WorkUnit::parse("data/a.tfrecord")?.encode(), "data/a.tfrecord");
/// # Ok::<(), feedstock::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct WorkUnit {
    /// The file (path or URL).
    pub file: String,
    /// Keep records whose number `r` has `r % every == offset`.
    pub every: u64,
    /// See [`WorkUnit::every`].
    pub offset: u64,
    /// Keep at most this many records (`None`: no limit).
    pub limit: Option<u64>,
    /// The records kept are padding, marked in their keys.
    pub pad: bool,
}

/// How the key of a padding record starts: `<pad>FILE:N` names the real
/// record `FILE:N` it repeats.
pub const PAD_KEY_PREFIX: &str = "<pad>";

/// How an encoded [`WorkUnit`] starts.
const UNIT_TAG: &str = "\0unit ";

impl WorkUnit {
    /// Every record of `file`.
    pub fn file(file: impl Into<String>) -> WorkUnit {
        WorkUnit {
            file: file.into(),
            every: 1,
            offset: 0,
            limit: None,
            pad: false,
        }
    }

    /// Keeps the records whose number `r` has `r % every == offset`.
    pub fn every(mut self, every: u64, offset: u64) -> WorkUnit {
        self.every = every;
        self.offset = offset;
        self
    }

    /// Keeps at most `limit` records.
    pub fn limit(mut self, limit: u64) -> WorkUnit {
        self.limit = Some(limit);
        self
    }

    /// Marks the records kept as padding.
    pub fn pad(mut self, pad: bool) -> WorkUnit {
        self.pad = pad;
        self
    }

    /// True if the unit keeps every record of its file, unmarked.
    pub fn is_whole_file(&self) -> bool {
        self.every == 1 && self.limit.is_none() && !self.pad
    }

    /// The unit as a queue element: the file name for a whole file.
    pub fn encode(&self) -> String {
        if self.is_whole_file() {
            return self.file.clone();
        }
        let limit =
            self.limit.map_or_else(|| "-".to_owned(), |l| l.to_string());
        format!(
            "{UNIT_TAG}{} {} {limit} {}\0{}",
            self.every,
            self.offset,
            u8::from(self.pad),
            self.file
        )
    }

    /// Decodes a queue element: a plain file name, or a unit
    /// [`encode`](WorkUnit::encode) wrote.
    ///
    /// # Errors
    ///
    /// [`Kind::InvalidArgument`](crate::Kind::InvalidArgument) for a
    /// string that starts like an encoded unit but is not one.
    pub fn parse(s: &str) -> Result<WorkUnit> {
        let Some(rest) = s.strip_prefix(UNIT_TAG) else {
            return Ok(WorkUnit::file(s));
        };
        let bad = || {
            Error::invalid_argument(format!(
                "malformed work unit {:?}",
                s.replace('\0', "\\0")
            ))
        };
        let (head, file) = rest.split_once('\0').ok_or_else(bad)?;
        let fields: Vec<&str> = head.split(' ').collect();
        let [every, offset, limit, pad] = fields[..] else {
            return Err(bad());
        };
        let every: u64 = every.parse().map_err(|_| bad())?;
        let offset: u64 = offset.parse().map_err(|_| bad())?;
        let limit = match limit {
            "-" => None,
            l => Some(l.parse::<u64>().map_err(|_| bad())?),
        };
        let pad = match pad {
            "0" => false,
            "1" => true,
            _ => return Err(bad()),
        };
        if every == 0 || offset >= every || file.is_empty() {
            return Err(bad());
        }
        Ok(WorkUnit {
            file: file.to_owned(),
            every,
            offset,
            limit,
            pad,
        })
    }
}
