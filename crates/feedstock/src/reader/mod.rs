//! Readers: records from files taken off a filename queue.
//!
//! A reader turns a stream of filenames into a stream of records, each a
//! key naming where it came from (`FILE:N`) and a value of bytes. There
//! are two halves, as in TensorFlow's `ReaderBase`:
//!
//! * a [`RecordReader`] knows one file format. It has the four methods of
//!   `ReaderBase`: start work on a file, read one record or report the
//!   end of the file, finish work, reset. It holds no lock and knows
//!   nothing of queues. It is the extension point for formats of your
//!   own (see `examples/custom_reader.rs`).
//! * the [`Reader`] wraps any record reader and is what a pipeline uses:
//!   it can be cloned and shared by many threads, takes the next filename
//!   from a [`WorkQueue`] whenever it needs one, builds the keys, counts
//!   records and files, and can save and restore its position.
//!
//! Built in: [`TextLineReader`], [`FixedLengthRecordReader`],
//! [`TfRecordReader`], [`WholeFileReader`] and [`IdentityReader`].
//!
//! ```
//! use std::collections::VecDeque;
//! use std::sync::Mutex;
//!
//! use feedstock::reader::{Reader, TextLineReader, WorkQueue};
//! use feedstock::{Error, Result};
//!
//! // A stand-in for a filename queue that has been closed.
//! struct Files(Mutex<VecDeque<String>>);
//! impl WorkQueue for Files {
//!     fn next_work(&self) -> Result<String> {
//!         let next = self.0.lock().unwrap().pop_front();
//!         next.ok_or_else(|| Error::out_of_range("no more files"))
//!     }
//! }
//!
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("a.csv").to_str().unwrap().to_owned();
//! std::fs::write(&path, "x,y\n1,2\n3,4\n")?;
//! let files = Files(Mutex::new(VecDeque::from([path.clone()])));
//!
//! let reader = Reader::new(
//!     TextLineReader::builder().skip_header_lines(1).build(),
//! );
//! let first = reader.read(&files)?;
//! assert_eq!(first.key, format!("{path}:2"));
//! assert_eq!(&first.value[..], b"1,2");
//! assert_eq!(&reader.read(&files)?.value[..], b"3,4");
//! // The queue is exhausted: the end of input, not a failure.
//! assert!(reader.read(&files).unwrap_err().is_out_of_range());
//! assert_eq!(reader.num_records_produced(), 2);
//! assert_eq!(reader.num_work_units_completed(), 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;
use std::time::Duration;

use bytes::Bytes;

use crate::error::Result;
use crate::io::fs::FileSystem;

mod batch;
mod chunks;
mod fixed_length;
mod identity;
mod state;
mod text_line;
mod tfrecord;
mod whole_file;
pub(crate) mod work;
mod wrapper;

pub use batch::RecordBatch;
pub(crate) use fixed_length::Layout as FixedLayout;
pub use fixed_length::{
    FixedLengthRecordReader, FixedLengthRecordReaderBuilder,
};
pub use identity::IdentityReader;
pub(crate) use text_line::strip_terminator;
pub use text_line::{
    TextLineReader, TextLineReaderBuilder, DEFAULT_MAX_LINE_BYTES,
};
pub use tfrecord::{TfRecordReader, TfRecordReaderBuilder};
pub use whole_file::WholeFileReader;
pub use work::{WorkUnit, PAD_KEY_PREFIX};
pub use wrapper::Reader;

/// Where a [`Reader`] gets its work: the next filename to read.
///
/// A filename queue implements it; so can anything else that hands out
/// strings, such as a fixed list in a test.
pub trait WorkQueue: Send + Sync {
    /// Takes the next unit of work, blocking until there is one.
    ///
    /// # Errors
    ///
    /// [`Kind::OutOfRange`](crate::Kind::OutOfRange) once the queue is
    /// closed and drained: the clean end of input, which the reader
    /// passes on unchanged. [`Kind::Cancelled`](crate::Kind::Cancelled)
    /// if the wait was cancelled.
    fn next_work(&self) -> Result<String>;

    /// Takes the next unit of work, waiting at most `timeout` (`None`:
    /// as long as [`WorkQueue::next_work`] waits).
    ///
    /// The provided method ignores the timeout and calls
    /// [`WorkQueue::next_work`]: right for a source that never blocks (a
    /// fixed list); a source that can block overrides it, as the queues
    /// do.
    ///
    /// # Errors
    ///
    /// As [`WorkQueue::next_work`];
    /// [`Kind::DeadlineExceeded`](crate::Kind::DeadlineExceeded) when
    /// `timeout` passes first.
    fn next_work_timeout(&self, timeout: Option<Duration>) -> Result<String> {
        let _ = timeout;
        self.next_work()
    }
}

/// A record as a [`Reader`] returns it.
#[derive(Clone, PartialEq, Eq)]
pub struct Record {
    /// Where the record came from, for example `train.csv:17`: something a
    /// human can use to find the record again.
    pub key: String,
    /// The record's bytes.
    pub value: Bytes,
}

impl Record {
    /// Whether this is a padding record, added so that every host gets
    /// as many records ([`Remainder::Pad`](crate::input::shard::Remainder::Pad)):
    /// its key starts with [`PAD_KEY_PREFIX`].
    pub fn is_pad(&self) -> bool {
        self.key.starts_with(PAD_KEY_PREFIX)
    }
}

impl fmt::Debug for Record {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Record")
            .field("key", &self.key)
            .field("value_len", &self.value.len())
            .finish()
    }
}

/// How a [`RecordReader`] names a record; the [`Reader`] turns it into the
/// record's full key.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RecordKey {
    /// The key `FILE:N`, for a record number, line number or offset `N`.
    Index(u64),
    /// The key `FILE:SUFFIX`.
    Suffix(String),
    /// The key exactly as given, with no file name added.
    Full(String),
}

/// A record as a [`RecordReader`] produces it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawRecord {
    /// How to name the record.
    pub key: RecordKey,
    /// The record's bytes.
    pub value: Bytes,
    /// True if this is known to be the file's last record. The reader
    /// then finishes the file at once (so the file counts as completed
    /// right away, as in TensorFlow's whole-file reader) instead of on the
    /// next call.
    pub last_in_file: bool,
}

impl RawRecord {
    /// A record named `key` holding `value`.
    pub fn new(key: RecordKey, value: impl Into<Bytes>) -> RawRecord {
        RawRecord {
            key,
            value: value.into(),
            last_in_file: false,
        }
    }

    /// Marks the record as the last one of its file.
    pub fn last_in_file(mut self) -> RawRecord {
        self.last_in_file = true;
        self
    }
}

/// A file format: reads the records of one file at a time.
///
/// This is the extension point for custom formats, the Rust form of
/// TensorFlow's `ReaderBase` subclasses. Implement the four methods;
/// wrap the reader in a [`Reader`], which calls them under a lock, so an
/// implementation needs no synchronisation of its own.
///
/// The [`Reader`] calls them in this order for each file:
/// [`on_work_started`](RecordReader::on_work_started), then
/// [`read`](RecordReader::read) until it returns `Ok(None)` (or a record
/// marked [`RawRecord::last_in_file`]), then
/// [`on_work_finished`](RecordReader::on_work_finished).
/// [`reset`](RecordReader::reset) may come at any time. If `read` fails,
/// the reader abandons the file: it calls `on_work_finished` and moves on
/// to the next file on the following call.
///
/// Errors need not name the file: the [`Reader`] adds it.
pub trait RecordReader: Send {
    /// Opens `file` through `fs` and gets ready to read its first record.
    ///
    /// # Errors
    ///
    /// Any error opening or checking the file; the file is then skipped.
    fn on_work_started(
        &mut self,
        file: &str,
        fs: &dyn FileSystem,
    ) -> Result<()>;

    /// Reads the next record of the current file, or `None` at its end.
    ///
    /// # Errors
    ///
    /// Corrupt or unreadable data.
    fn read(&mut self) -> Result<Option<RawRecord>>;

    /// Reads up to `n` records of the current file with
    /// [`read`](RecordReader::read), appending their keys and values to
    /// `keys` and `values`, and stopping early once the values read in
    /// this call reach `max_bytes` (the record that reaches it
    /// included). Returns true if the file has no record left (its end,
    /// or a record marked [`RawRecord::last_in_file`]). On an error, the
    /// records read before it stay in `keys` and `values`.
    ///
    /// [`Reader::read_batch`] calls this once per batch instead of `read`
    /// once per record: compiled for each reader, the loop calls `read`
    /// directly, where the batch's per-record calls went through the
    /// `dyn RecordReader` and the reader's bookkeeping one at a time.
    /// There is no need to override it.
    ///
    /// # Errors
    ///
    /// As [`read`](RecordReader::read).
    fn read_many(
        &mut self,
        n: usize,
        max_bytes: u64,
        keys: &mut Vec<RecordKey>,
        values: &mut Vec<Bytes>,
    ) -> Result<bool> {
        let mut bytes = 0u64;
        for _ in 0..n {
            let Some(record) = self.read()? else {
                return Ok(true);
            };
            bytes = bytes.saturating_add(record.value.len() as u64);
            keys.push(record.key);
            values.push(record.value);
            if record.last_in_file {
                return Ok(true);
            }
            if bytes >= max_bytes {
                break;
            }
        }
        Ok(false)
    }

    /// Closes the current file.
    ///
    /// # Errors
    ///
    /// Any error closing the file.
    fn on_work_finished(&mut self) -> Result<()>;

    /// Forgets the current file and returns to a clean slate.
    ///
    /// # Errors
    ///
    /// Any error releasing resources.
    fn reset(&mut self) -> Result<()>;

    /// The reader's position inside the current file, as bytes that
    /// [`restore_state`](RecordReader::restore_state) understands. Only
    /// called while a file is open.
    ///
    /// # Errors
    ///
    /// [`Kind::Unimplemented`](crate::Kind::Unimplemented) by default.
    fn serialize_state(&self) -> Result<Vec<u8>> {
        Err(crate::Error::unimplemented(
            "this reader cannot save its position inside a file",
        ))
    }

    /// Reopens `file` through `fs` at the position `state` saved by
    /// [`serialize_state`](RecordReader::serialize_state), so that the
    /// next [`read`](RecordReader::read) returns the record that would
    /// have come next when the state was saved.
    ///
    /// # Errors
    ///
    /// [`Kind::Unimplemented`](crate::Kind::Unimplemented) by default;
    /// [`Kind::InvalidArgument`](crate::Kind::InvalidArgument) for a state
    /// this reader did not write; any error reopening the file.
    fn restore_state(
        &mut self,
        file: &str,
        fs: &dyn FileSystem,
        state: &[u8],
    ) -> Result<()> {
        let _ = (file, fs, state);
        Err(crate::Error::unimplemented(
            "this reader cannot resume inside a file",
        ))
    }
}

/// The error a record reader returns when read is called outside a file,
/// which the [`Reader`] never does.
fn not_started() -> crate::Error {
    crate::Error::failed_precondition("read called with no file started")
}

/// Fails with DataLoss naming `file` (at offset 0) when it is empty,
/// unless `allow`; returns whether it is empty.
///
/// An empty file where records are expected is most often a shard whose
/// writer died before writing anything; TensorFlow reads it as a file with
/// no records, which hides that. The readers whose files can be empty
/// legitimately take an `allow_empty_files` option, which then means "no
/// records" whatever the file's compression: a 0-byte file is not a valid
/// gzip or zlib stream, but TensorFlow reads it as empty too. A stream
/// (standard input, a pipe) has no size to check and is never empty here.
pub(crate) fn check_not_empty(
    fs: &dyn crate::io::fs::FileSystem,
    file: &str,
    allow: bool,
) -> crate::Result<bool> {
    let empty = !fs.is_stream(file)? && fs.size(file)? == 0;
    if !allow && empty {
        return Err(crate::Error::data_loss(
            "the file is empty (the reader's allow_empty_files option reads it as a \
             file with no records, as TensorFlow does)",
        )
        .with_file(file)
        .with_offset(0));
    }
    Ok(empty)
}
