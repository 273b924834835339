//! The shared, thread-safe reader: TensorFlow's `ReaderBase` machinery.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Mutex, MutexGuard};
use prost::Message;

use super::state::ReaderState;
use crate::checkpoint::READER;
use bytes::Bytes;

use super::work::{WorkUnit, PAD_KEY_PREFIX};
use super::{
    RawRecord, Record, RecordBatch, RecordKey, RecordReader, WorkQueue,
};
use crate::error::{Error, Result};
use crate::io::fs::{default_fs, FileSystem};

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
    /// Records passed over: not kept by a [`WorkUnit`].
    records_skipped: AtomicU64,
}

/// The part of the state only the lock holder touches.
struct Locked {
    reader: Box<dyn RecordReader>,
    /// The file being read, if any.
    current: Option<Arc<str>>,
    /// An error met by [`Reader::read_up_to`] after it had records in hand:
    /// the records are returned first, the error by the next call.
    pending: Option<Error>,
    /// Which records of the current file to keep, when its work unit
    /// does not keep them all.
    unit: Option<UnitFilter>,
}

/// A [`WorkUnit`]'s choice of records, and how far the file has got.
struct UnitFilter {
    every: u64,
    offset: u64,
    limit: Option<u64>,
    pad: bool,
    /// The number of the file's next record.
    next: u64,
    /// Records kept so far.
    kept: u64,
}

impl UnitFilter {
    fn new(unit: &WorkUnit) -> Option<UnitFilter> {
        (!unit.is_whole_file()).then_some(UnitFilter {
            every: unit.every,
            offset: unit.offset,
            limit: unit.limit,
            pad: unit.pad,
            next: 0,
            kept: 0,
        })
    }

    fn is_full(&self) -> bool {
        self.limit.is_some_and(|l| self.kept >= l)
    }
}

impl Reader {
    /// Wraps `reader`, which opens files through
    /// [`default_fs`](crate::io::fs::default_fs): local paths, and
    /// object-store URLs with the `object-store` feature.
    pub fn new(reader: impl RecordReader + 'static) -> Reader {
        Reader::with_fs(reader, default_fs())
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
                    unit: None,
                }),
                work_started: AtomicU64::new(0),
                work_finished: AtomicU64::new(0),
                records_produced: AtomicU64::new(0),
                records_skipped: AtomicU64::new(0),
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
        let (file, key, value) = loop {
            if let Some(e) = locked.pending.take() {
                return Err(e);
            }
            self.start_work(&mut locked, work, deadline)?;
            if let Some(record) = self.read_one(&mut locked)? {
                break record;
            }
        };
        // The key is built after the lock is released, to keep other
        // threads' reads waiting for as short a time as can be.
        drop(locked);
        Ok(Record {
            key: full_key(&file, key),
            value,
        })
    }

    /// Reads up to `n` records, all from one file.
    ///
    /// Returns fewer than `n` when the current file ends (after at least
    /// one record), as TensorFlow's `read_up_to` does. Never returns an
    /// empty batch for `n > 0`: it waits for a file with records, or fails.
    ///
    /// [`Reader::read_batch`] reads the same records without building a
    /// key string for each, and hands them to batched decoders in one
    /// call; prefer it on hot paths.
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
        Ok(self
            .read_batch_until(work, n, u64::MAX, None)?
            .into_records())
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
        let deadline = Instant::now().checked_add(timeout);
        Ok(self
            .read_batch_until(work, n, u64::MAX, deadline)?
            .into_records())
    }

    /// Reads up to `n` records, all from one file, as a [`RecordBatch`]:
    /// the records' values, plus their positions, from which keys are
    /// built only when asked for.
    ///
    /// Returns fewer than `n` when the current file ends (after at least
    /// one record). Never returns an empty batch for `n > 0`: it waits
    /// for a file with records, or fails.
    ///
    /// # Errors
    ///
    /// As [`Reader::read`]. An error met after some records were read is
    /// returned by the next call, after those records.
    pub fn read_batch(
        &self,
        work: &dyn WorkQueue,
        n: usize,
    ) -> Result<RecordBatch> {
        self.read_batch_until(work, n, u64::MAX, None)
    }

    /// [`Reader::read_batch`], also ending the batch once its records'
    /// data reach `max_bytes` (the record that reaches it included, so a
    /// batch always has at least one record): memory held per call is
    /// bounded by `max_bytes` plus one record, whatever the records'
    /// size, where `n` records of up to the length limit each could be
    /// far more.
    ///
    /// ```
    /// # use std::sync::Mutex;
    /// use feedstock::reader::{Reader, TextLineReader, WorkQueue};
    /// # struct Files(Mutex<Option<String>>);
    /// # impl WorkQueue for Files {
    /// #     fn next_work(&self) -> feedstock::Result<String> {
    /// #         self.0.lock().unwrap().take().ok_or_else(|| {
    /// #             feedstock::Error::out_of_range("no more files")
    /// #         })
    /// #     }
    /// # }
    /// # let dir = tempfile::tempdir()?;
    /// # let path = dir.path().join("lines.txt");
    /// # std::fs::write(&path, "aaaa\nbbbb\ncccc\n")?;
    /// # let files = Files(Mutex::new(path.to_str().map(String::from)));
    /// let reader = Reader::new(TextLineReader::builder().build());
    /// // Two 4-byte lines reach 6 bytes: the batch ends there.
    /// assert_eq!(reader.read_batch_bytes(&files, 100, 6)?.len(), 2);
    /// assert_eq!(reader.read_batch_bytes(&files, 100, 6)?.len(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Reader::read_batch`].
    pub fn read_batch_bytes(
        &self,
        work: &dyn WorkQueue,
        n: usize,
        max_bytes: u64,
    ) -> Result<RecordBatch> {
        self.read_batch_until(work, n, max_bytes, None)
    }

    /// [`Reader::read_batch`], waiting at most `timeout` for the next
    /// file (and for another thread's read on this reader to finish).
    /// Records read before the timeout passes are returned, as when a
    /// file ends.
    ///
    /// # Errors
    ///
    /// As [`Reader::read_timeout`].
    pub fn read_batch_timeout(
        &self,
        work: &dyn WorkQueue,
        n: usize,
        timeout: Duration,
    ) -> Result<RecordBatch> {
        self.read_batch_until(
            work,
            n,
            u64::MAX,
            Instant::now().checked_add(timeout),
        )
    }

    fn read_batch_until(
        &self,
        work: &dyn WorkQueue,
        n: usize,
        max_bytes: u64,
        deadline: Option<Instant>,
    ) -> Result<RecordBatch> {
        let mut bytes = 0u64;
        let mut batch = RecordBatch::with_capacity(n.min(4096));
        if n == 0 {
            return Ok(batch);
        }
        let mut locked = self.lock_until(deadline)?;
        if let Some(e) = locked.pending.take() {
            return Err(e);
        }
        loop {
            if locked.current.is_none() && !batch.is_empty() {
                return Ok(batch);
            }
            self.start_work(&mut locked, work, deadline)?;
            if batch.is_empty() {
                batch.file = locked.current.clone();
            }
            if locked.unit.is_none() {
                // Every record is kept: the rest of the batch in one call.
                let before = batch.len();
                let result = locked.reader.read_many(
                    n - before,
                    max_bytes.saturating_sub(bytes),
                    &mut batch.keys,
                    &mut batch.values,
                );
                let got = &batch.values[before..];
                bytes = got
                    .iter()
                    .fold(bytes, |b, v| b.saturating_add(v.len() as u64));
                self.shared
                    .records_produced
                    .fetch_add(got.len() as u64, Ordering::AcqRel);
                let ended = match result {
                    Ok(ended) => ended,
                    Err(e) => {
                        let e = e.with_file(
                            locked.current.as_deref().unwrap_or(""),
                        );
                        // The file is abandoned; an error closing it
                        // would only hide the error that matters.
                        let _ = self.finish_work(&mut locked);
                        return Self::batch_or_error(batch, &mut locked, e);
                    }
                };
                if ended {
                    if let Err(e) = self.finish_work(&mut locked) {
                        return Self::batch_or_error(batch, &mut locked, e);
                    }
                }
                if batch.len() == n || bytes >= max_bytes {
                    return Ok(batch);
                }
                continue;
            }
            match self.read_raw(&mut locked) {
                Ok(Some((key, value))) => {
                    bytes = bytes.saturating_add(value.len() as u64);
                    batch.keys.push(key);
                    batch.values.push(value);
                    if batch.len() == n || bytes >= max_bytes {
                        return Ok(batch);
                    }
                }
                Ok(None) => {}
                Err(e) => return Self::batch_or_error(batch, &mut locked, e),
            }
        }
    }

    /// The records read before `e`, with `e` kept for the next call; or
    /// `e` itself when there are none.
    fn batch_or_error(
        batch: RecordBatch,
        locked: &mut Locked,
        e: Error,
    ) -> Result<RecordBatch> {
        if batch.is_empty() {
            return Err(e);
        }
        locked.pending = Some(e);
        Ok(batch)
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

    /// How many records this reader passed over because their file's
    /// [`WorkUnit`] did not keep them (another host's records, in a
    /// sharded pipeline).
    pub fn num_records_skipped(&self) -> u64 {
        self.shared.records_skipped.load(Ordering::Acquire)
    }

    /// How many files this reader has finished (read to the end, or
    /// abandoned after an error).
    pub fn num_work_units_completed(&self) -> u64 {
        self.shared.work_finished.load(Ordering::Acquire)
    }

    /// The file being read, if any. Waits for the lock.
    pub fn current_work(&self) -> Option<String> {
        self.shared
            .locked
            .lock()
            .current
            .as_deref()
            .map(str::to_owned)
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
        if locked.unit.is_some() {
            return Err(Error::unimplemented(
                "cannot save the position inside a sharded work unit: \
                 save between files",
            ));
        }
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
            current_work: locked.current.as_deref().map(str::to_owned),
            reader_state,
        };
        Ok(READER.seal(&state.encode_to_vec()))
    }

    /// Restores a position saved by [`Reader::serialize_state`], reopening
    /// the file that was in progress.
    ///
    /// # Errors
    ///
    /// [`Kind::InvalidArgument`](crate::Kind::InvalidArgument) if `state`
    /// is not a saved reader state, is damaged or truncated (its
    /// checksum), is of another format version, or is inconsistent (a
    /// position past the file's end among them); any error of the
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
        let state = ReaderState::decode(READER.open(state)?).map_err(|e| {
            Error::invalid_argument(format!("a damaged reader state: {e}"))
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
                 current_work {:?}",
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
        locked.current = state.current_work.map(Arc::from);
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
        locked.unit = None;
        let s = &self.shared;
        s.work_started.store(0, Ordering::Release);
        s.work_finished.store(0, Ordering::Release);
        s.records_produced.store(0, Ordering::Release);
        s.records_skipped.store(0, Ordering::Release);
        result
    }

    /// Locks the reader's state, waiting until `deadline` at most.
    fn lock_until(
        &self,
        deadline: Option<Instant>,
    ) -> Result<MutexGuard<'_, Locked>> {
        match deadline {
            None => Ok(crate::spin::lock(&self.shared.locked)),
            Some(d) => crate::spin::try_lock(&self.shared.locked)
                .or_else(|| self.shared.locked.try_lock_until(d))
                .ok_or_else(|| {
                    Error::deadline_exceeded(
                        "read timed out waiting for another read on the \
                         same reader",
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
        let work = match deadline {
            Some(d) => work.next_work_timeout(Some(
                d.saturating_duration_since(Instant::now()),
            ))?,
            None => work.next_work()?,
        };
        let unit = WorkUnit::parse(&work)?;
        locked
            .reader
            .on_work_started(&unit.file, &*self.shared.fs)
            .map_err(|e| e.with_file(&unit.file))?;
        self.shared.work_started.fetch_add(1, Ordering::AcqRel);
        locked.unit = UnitFilter::new(&unit);
        locked.current = Some(Arc::from(unit.file));
        Ok(())
    }

    /// Reads one record of the current file, with that file; `None` when
    /// the file ended (and has been finished).
    fn read_one(
        &self,
        locked: &mut Locked,
    ) -> Result<Option<(Arc<str>, RecordKey, Bytes)>> {
        let Some(file) = locked.current.clone() else {
            return Err(Error::internal("no file in progress"));
        };
        Ok(self
            .read_raw(locked)?
            .map(|(key, value)| (file, key, value)))
    }

    /// Reads one record of the current file, with its key as the record
    /// reader gave it; `None` when the file ended (and has been
    /// finished).
    fn read_raw(
        &self,
        locked: &mut Locked,
    ) -> Result<Option<(RecordKey, Bytes)>> {
        loop {
            if locked.unit.as_ref().is_some_and(UnitFilter::is_full) {
                // The unit has all it keeps: the rest of the file is
                // not even read.
                self.finish_work(locked)?;
                return Ok(None);
            }
            match self.read_raw_unfiltered(locked)? {
                None => return Ok(None),
                Some((key, value, last)) => {
                    let Some(unit) = &mut locked.unit else {
                        return Ok(Some((key, value)));
                    };
                    let number = unit.next;
                    unit.next += 1;
                    let kept = number % unit.every == unit.offset;
                    let pad = unit.pad;
                    if kept {
                        unit.kept += 1;
                    }
                    let key = if kept && pad {
                        let file = locked.current.as_deref().unwrap_or("");
                        RecordKey::Full(format!(
                            "{PAD_KEY_PREFIX}{}",
                            full_key(file, key)
                        ))
                    } else {
                        key
                    };
                    if last && locked.current.is_some() {
                        // A skipped last record still ends the file.
                        if let Err(e) = self.finish_work(locked) {
                            locked.pending = Some(e);
                        }
                    }
                    if !kept {
                        self.shared
                            .records_skipped
                            .fetch_add(1, Ordering::AcqRel);
                        if last {
                            return Ok(None);
                        }
                        continue;
                    }
                    self.shared
                        .records_produced
                        .fetch_add(1, Ordering::AcqRel);
                    return Ok(Some((key, value)));
                }
            }
        }
    }

    /// Reads one record of the current file, with whether it was the
    /// file's last; `None` when the file ended (and has been finished).
    /// Counts the record as produced unless a work unit filters it.
    fn read_raw_unfiltered(
        &self,
        locked: &mut Locked,
    ) -> Result<Option<(RecordKey, Bytes, bool)>> {
        let Some(file) = locked.current.as_deref() else {
            return Err(Error::internal("no file in progress"));
        };
        match locked.reader.read() {
            Ok(Some(RawRecord {
                key,
                value,
                last_in_file,
            })) => {
                if locked.unit.is_none() {
                    self.shared
                        .records_produced
                        .fetch_add(1, Ordering::AcqRel);
                    if last_in_file {
                        if let Err(e) = self.finish_work(locked) {
                            locked.pending = Some(e);
                        }
                    }
                }
                Ok(Some((key, value, last_in_file)))
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
        locked.unit = None;
        let started = self.shared.work_started.load(Ordering::Acquire);
        self.shared.work_finished.store(started, Ordering::Release);
        let file = locked.current.take().unwrap_or_default();
        result.map_err(|e| e.with_file(&*file))
    }
}

/// The full key of a record of `file` named `key` by its record reader.
pub(super) fn full_key(file: &str, key: RecordKey) -> String {
    match key {
        RecordKey::Index(n) => file_key(file, n),
        RecordKey::Suffix(s) => format!("{file}:{s}"),
        RecordKey::Full(k) => k,
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
