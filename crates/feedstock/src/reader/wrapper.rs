//! The shared, thread-safe reader: TensorFlow's `ReaderBase` machinery.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Mutex, MutexGuard};
use prost::Message;

use super::state::{ReaderState, MAGIC};
use super::{RawRecord, Record, RecordKey, RecordReader, WorkQueue};
use crate::error::{Error, Result};
use crate::io::fs::{FileSystem, LocalFs};

/// A [`RecordReader`] made safe to share: takes filenames from a
/// [`WorkQueue`], builds keys, counts, and saves and restores its place.
///
/// Clones share one underlying reader (and one lock), like several
/// `read` ops on one TensorFlow reader. For parallel reading, give each
/// thread its own `Reader` over the same filename queue: each then reads
/// a different file.
///
/// # Termination
///
/// [`read`](Reader::read) returns [`Kind::OutOfRange`] when it needs a
/// new file and the work queue is closed and empty: the clean end of
/// input, passed on unchanged so that a queue runner ends the thread
/// without stopping the pipeline.
///
/// # Errors and no silent loss
///
/// An error reading a file names the file (and the offset, when the
/// record reader knows it). The file is then abandoned — the record
/// reader's `on_work_finished` runs and the file counts as completed —
/// and the next call moves on to the next file, instead of failing on the
/// same bytes forever as TensorFlow does. A file that cannot be opened is
/// skipped the same way.
///
/// The lock is held while waiting for a filename, as in TensorFlow; the
/// counters can be read at any time without it.
///
/// [`Kind::OutOfRange`]: crate::Kind::OutOfRange
#[derive(Clone)]
pub struct Reader {
    shared: Arc<Shared>,
}

struct Shared {
    fs: Arc<dyn FileSystem>,
    locked: Mutex<Locked>,
    /// Files started (`work_started` in TensorFlow).
    work_started: AtomicU64,
    /// Files finished or abandoned.
    work_finished: AtomicU64,
    /// Records returned.
    records_produced: AtomicU64,
}

/// The part of the state only the lock holder touches.
struct Locked {
    reader: Box<dyn RecordReader>,
    /// The file being read, if any.
    current: Option<String>,
    /// An error met by [`Reader::read_up_to`] after it had records in hand:
    /// the records are returned first, the error by the next call.
    pending: Option<Error>,
}

impl Reader {
    /// Wraps `reader`, which opens files on the local filesystem.
    pub fn new(reader: impl RecordReader + 'static) -> Reader {
        Reader::with_fs(reader, Arc::new(LocalFs))
    }

    /// Wraps `reader`, which opens files through `fs`.
    pub fn with_fs(
        reader: impl RecordReader + 'static,
        fs: Arc<dyn FileSystem>,
    ) -> Reader {
        Reader {
            shared: Arc::new(Shared {
                fs,
                locked: Mutex::new(Locked {
                    reader: Box::new(reader),
                    current: None,
                    pending: None,
                }),
                work_started: AtomicU64::new(0),
                work_finished: AtomicU64::new(0),
                records_produced: AtomicU64::new(0),
            }),
        }
    }

    /// Reads the next record, taking files from `work` as needed.
    ///
    /// Files with no records are passed over.
    ///
    /// # Errors
    ///
    /// [`Kind::OutOfRange`](crate::Kind::OutOfRange) at the end of input;
    /// any error of the work queue; any error opening or reading a file,
    /// naming the file.
    pub fn read(&self, work: &dyn WorkQueue) -> Result<Record> {
        self.read_until(work, None)
    }

    /// [`Reader::read`], waiting at most `timeout` for the next file (and
    /// for another thread's read on this reader to finish).
    ///
    /// # Errors
    ///
    /// As [`Reader::read`];
    /// [`Kind::DeadlineExceeded`](crate::Kind::DeadlineExceeded) when
    /// `timeout` passes first, with nothing read;
    /// [`Kind::Cancelled`](crate::Kind::Cancelled) when the work queue is
    /// cancelled ([`Pipeline::cancel`](crate::coord::Pipeline::cancel)).
    pub fn read_timeout(
        &self,
        work: &dyn WorkQueue,
        timeout: Duration,
    ) -> Result<Record> {
        self.read_until(work, Instant::now().checked_add(timeout))
    }

    fn read_until(
        &self,
        work: &dyn WorkQueue,
        deadline: Option<Instant>,
    ) -> Result<Record> {
        let mut locked = self.lock_until(deadline)?;
        loop {
            if let Some(e) = locked.pending.take() {
                return Err(e);
            }
            self.start_work(&mut locked, work, deadline)?;
            if let Some(record) = self.read_one(&mut locked)? {
                return Ok(record);
            }
        }
    }

    /// Reads up to `n` records, all from one file.
    ///
    /// Returns fewer than `n` when the current file ends (after at least
    /// one record), as TensorFlow's `read_up_to` does. Never returns an
    /// empty batch for `n > 0`: it waits for a file with records, or fails.
    ///
    /// # Errors
    ///
    /// As [`Reader::read`]. An error met after some records were read is
    /// returned by the next call, after those records.
    pub fn read_up_to(
        &self,
        work: &dyn WorkQueue,
        n: usize,
    ) -> Result<Vec<Record>> {
        self.read_up_to_until(work, n, None)
    }

    /// [`Reader::read_up_to`], waiting at most `timeout` for the next file
    /// (and for another thread's read on this reader to finish). Records
    /// read before the timeout passes are returned, as when a file ends.
    ///
    /// # Errors
    ///
    /// As [`Reader::read_timeout`].
    pub fn read_up_to_timeout(
        &self,
        work: &dyn WorkQueue,
        n: usize,
        timeout: Duration,
    ) -> Result<Vec<Record>> {
        self.read_up_to_until(work, n, Instant::now().checked_add(timeout))
    }

    fn read_up_to_until(
        &self,
        work: &dyn WorkQueue,
        n: usize,
        deadline: Option<Instant>,
    ) -> Result<Vec<Record>> {
        let mut out = Vec::with_capacity(n.min(4096));
        if n == 0 {
            return Ok(out);
        }
        let mut locked = self.lock_until(deadline)?;
        if let Some(e) = locked.pending.take() {
            return Err(e);
        }
        loop {
            if locked.current.is_none() && !out.is_empty() {
                return Ok(out);
            }
            self.start_work(&mut locked, work, deadline)?;
            match self.read_one(&mut locked) {
                Ok(Some(record)) => {
                    out.push(record);
                    if out.len() == n {
                        return Ok(out);
                    }
                }
                Ok(None) => {}
                Err(e) if out.is_empty() => return Err(e),
                Err(e) => {
                    locked.pending = Some(e);
                    return Ok(out);
                }
            }
        }
    }

    /// Returns to a clean slate: no current file, counters at zero.
    ///
    /// # Errors
    ///
    /// Any error of the record reader's `reset`; the counters are reset
    /// regardless.
    pub fn reset(&self) -> Result<()> {
        let mut locked = self.shared.locked.lock();
        self.reset_locked(&mut locked)
    }

    /// How many records this reader has returned.
    pub fn num_records_produced(&self) -> u64 {
        self.shared.records_produced.load(Ordering::Acquire)
    }

    /// How many files this reader has finished (read to the end, or
    /// abandoned after an error).
    pub fn num_work_units_completed(&self) -> u64 {
        self.shared.work_finished.load(Ordering::Acquire)
    }

    /// The file being read, if any. Waits for the lock.
    pub fn current_work(&self) -> Option<String> {
        self.shared.locked.lock().current.clone()
    }

    /// Saves the reader's position: the counters, the current file and
    /// the place in it, so that [`Reader::restore_state`] resumes at the
    /// record that would have come next — none repeated, none skipped.
    ///
    /// # Errors
    ///
    /// [`Kind::Unimplemented`](crate::Kind::Unimplemented) if a file is
    /// in progress and the record reader cannot save its place in it.
    pub fn serialize_state(&self) -> Result<Vec<u8>> {
        let locked = self.shared.locked.lock();
        let reader_state = match &locked.current {
            Some(file) => Some(
                locked
                    .reader
                    .serialize_state()
                    .map_err(|e| e.with_file(file))?,
            ),
            None => None,
        };
        let state = ReaderState {
            work_started: self.shared.work_started.load(Ordering::Acquire),
            work_finished: self.shared.work_finished.load(Ordering::Acquire),
            num_records_produced: self.num_records_produced(),
            current_work: locked.current.clone(),
            reader_state,
            magic: MAGIC.to_owned(),
        };
        Ok(state.encode_to_vec())
    }

    /// Restores a position saved by [`Reader::serialize_state`], reopening
    /// the file that was in progress.
    ///
    /// # Errors
    ///
    /// [`Kind::InvalidArgument`](crate::Kind::InvalidArgument) if `state`
    /// is not a saved reader state or is inconsistent; any error of the
    /// record reader reopening its file. On error the reader is reset.
    pub fn restore_state(&self, state: &[u8]) -> Result<()> {
        let mut locked = self.shared.locked.lock();
        let result = self.restore_locked(&mut locked, state);
        if result.is_err() {
            let _ = self.reset_locked(&mut locked);
        }
        result
    }

    fn restore_locked(&self, locked: &mut Locked, state: &[u8]) -> Result<()> {
        let state = ReaderState::decode(state)
            .ok()
            .filter(|s| s.magic == MAGIC)
            .ok_or_else(|| {
                Error::invalid_argument("not a saved reader state")
            })?;
        let has_file = state.current_work.is_some();
        let consistent = has_file == state.reader_state.is_some()
            && match state.work_started.checked_sub(state.work_finished) {
                Some(0) => !has_file,
                Some(1) => has_file,
                _ => false,
            };
        if !consistent {
            return Err(Error::invalid_argument(format!(
                "inconsistent reader state: {} files started, {} finished, \
                 current file {:?}",
                state.work_started, state.work_finished, state.current_work
            )));
        }
        self.reset_locked(locked)?;
        if let (Some(file), Some(pos)) =
            (&state.current_work, &state.reader_state)
        {
            locked
                .reader
                .restore_state(file, &*self.shared.fs, pos)
                .map_err(|e| e.with_file(file))?;
        }
        locked.current = state.current_work;
        let s = &self.shared;
        s.work_started.store(state.work_started, Ordering::Release);
        s.work_finished
            .store(state.work_finished, Ordering::Release);
        s.records_produced
            .store(state.num_records_produced, Ordering::Release);
        Ok(())
    }

    fn reset_locked(&self, locked: &mut Locked) -> Result<()> {
        let result = locked.reader.reset();
        locked.current = None;
        locked.pending = None;
        let s = &self.shared;
        s.work_started.store(0, Ordering::Release);
        s.work_finished.store(0, Ordering::Release);
        s.records_produced.store(0, Ordering::Release);
        result
    }

    /// Locks the reader's state, waiting until `deadline` at most.
    fn lock_until(
        &self,
        deadline: Option<Instant>,
    ) -> Result<MutexGuard<'_, Locked>> {
        match deadline {
            None => Ok(self.shared.locked.lock()),
            Some(d) => self.shared.locked.try_lock_until(d).ok_or_else(|| {
                Error::deadline_exceeded(
                    "read timed out waiting for another read on the same \
                     reader",
                )
            }),
        }
    }

    /// Makes sure a file is in progress, taking the next one if not.
    fn start_work(
        &self,
        locked: &mut Locked,
        work: &dyn WorkQueue,
        deadline: Option<Instant>,
    ) -> Result<()> {
        if locked.current.is_some() {
            return Ok(());
        }
        let file = match deadline {
            Some(d) => work.next_work_timeout(Some(
                d.saturating_duration_since(Instant::now()),
            ))?,
            None => work.next_work()?,
        };
        locked
            .reader
            .on_work_started(&file, &*self.shared.fs)
            .map_err(|e| e.with_file(&file))?;
        self.shared.work_started.fetch_add(1, Ordering::AcqRel);
        locked.current = Some(file);
        Ok(())
    }

    /// Reads one record of the current file; `None` when the file ended
    /// (and has been finished).
    fn read_one(&self, locked: &mut Locked) -> Result<Option<Record>> {
        let Some(file) = locked.current.as_deref() else {
            return Err(Error::internal("no file in progress"));
        };
        match locked.reader.read() {
            Ok(Some(RawRecord {
                key,
                value,
                last_in_file,
            })) => {
                let key = match key {
                    RecordKey::Index(n) => file_key(file, n),
                    RecordKey::Suffix(s) => format!("{file}:{s}"),
                    RecordKey::Full(k) => k,
                };
                self.shared.records_produced.fetch_add(1, Ordering::AcqRel);
                if last_in_file {
                    if let Err(e) = self.finish_work(locked) {
                        locked.pending = Some(e);
                    }
                }
                Ok(Some(Record { key, value }))
            }
            Ok(None) => {
                self.finish_work(locked)?;
                Ok(None)
            }
            Err(e) => {
                let e = e.with_file(file);
                // The file is abandoned; an error closing it would only
                // hide the error that matters.
                let _ = self.finish_work(locked);
                Err(e)
            }
        }
    }

    fn finish_work(&self, locked: &mut Locked) -> Result<()> {
        let result = locked.reader.on_work_finished();
        let started = self.shared.work_started.load(Ordering::Acquire);
        self.shared.work_finished.store(started, Ordering::Release);
        let file = locked.current.take().unwrap_or_default();
        result.map_err(|e| e.with_file(file))
    }
}

/// `FILE:N`, built without the formatting machinery: keys are made for
/// every record, and `format!` costs as much as reading a short line.
fn file_key(file: &str, n: u64) -> String {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    let mut n = n;
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let mut key = String::with_capacity(file.len() + 1 + digits.len() - i);
    key.push_str(file);
    key.push(':');
    for &d in &digits[i..] {
        key.push(char::from(d));
    }
    key
}

impl fmt::Debug for Reader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.shared;
        let mut d = f.debug_struct("Reader");
        d.field("fs", &s.fs)
            .field("work_started", &s.work_started.load(Ordering::Acquire))
            .field("work_finished", &s.work_finished.load(Ordering::Acquire))
            .field(
                "records_produced",
                &s.records_produced.load(Ordering::Acquire),
            );
        // Never block a debug print on a reader waiting for work.
        if let Some(locked) = s.locked.try_lock() {
            d.field("current_work", &locked.current);
        }
        d.finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::file_key;

    #[test]
    fn file_keys_match_the_formatted_form() {
        for n in [0, 7, 10, 99, 12_345, u64::MAX] {
            assert_eq!(file_key("d/a.csv", n), format!("d/a.csv:{n}"));
        }
    }
}
