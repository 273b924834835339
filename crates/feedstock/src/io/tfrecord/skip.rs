//! Corrupt records: the policy, its budget, and the log of every skip.
//!
//! ADVICE FOR HACKERS: the [`Decoder`](super::Decoder) finds damaged
//! regions and resynchronises; this module decides whether a reader may
//! go on past them ([`CorruptRecords`], [`SkipBudget`]) and keeps count
//! ([`SkipLog`]). Every reader that drives the decoder goes through one
//! [`Policy`] per stream, so the budget means the same thing everywhere.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Arc;

use bytes::Bytes;
use parking_lot::Mutex;

use super::{Decoded, Decoder, Record, Skip};
use crate::error::{Error, Result};

/// What a TFRecord reader does with a corrupt record.
///
/// The default, [`CorruptRecords::Fail`], is TensorFlow's: the first
/// damaged record is a [`DataLoss`](crate::Kind::DataLoss) error naming
/// the file and the offset. [`CorruptRecords::Skip`] opts in to skipping
/// damaged regions within a [`SkipBudget`]: the reader resynchronises at
/// the next intact frame (see [`Decoder::resync`](super::Decoder::resync)),
/// counts the region in its [`SkipLog`], and goes on; past the budget it
/// fails with an error that says so, naming the file and the offsets
/// skipped.
///
/// ```
/// use feedstock::io::tfrecord::{
///     encode_record, CorruptRecords, ReaderBuilder, SkipBudget,
/// };
///
/// let mut file = Vec::new();
/// for r in [&b"zero"[..], b"one", b"two"] {
///     encode_record(r, &mut file);
/// }
/// file[16 + 4 + 12] ^= 1; // a flipped bit in the data of record 1
///
/// let mut builder = ReaderBuilder::new();
/// builder.corrupt_records(CorruptRecords::Skip(
///     SkipBudget::new().max_per_file(1),
/// ));
/// let mut reader = builder.from_reader(&file[..]);
/// let kept: Vec<_> = reader.by_ref().collect::<Result<_, _>>()?;
/// assert_eq!(kept.len(), 2);
/// assert_eq!(&kept[1].value[..], b"two");
///
/// let stats = reader.skip_log().stats();
/// assert_eq!(stats.skipped, 1);
/// assert_eq!(stats.files[0].regions[0].offset, 20);
/// assert_eq!(stats.files[0].regions[0].len, 19);
/// # Ok::<(), feedstock::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub enum CorruptRecords {
    /// Fail at the first damaged record (the default).
    #[default]
    Fail,
    /// Skip damaged regions, within the budget.
    Skip(SkipBudget),
}

impl CorruptRecords {
    /// Whether damaged regions are skipped.
    pub fn skips(&self) -> bool {
        matches!(self, CorruptRecords::Skip(_))
    }
}

/// How much a [`CorruptRecords::Skip`] policy may skip before it fails.
///
/// Each limit is off until set. A skip is one damaged region (see
/// [`Skip`]): a run of bytes from a damaged record to the next intact
/// frame, which may have held one record, several, or none.
///
/// - [`max_per_file`](Self::max_per_file): at most this many regions in
///   one reading of one file; the next one fails at once.
/// - [`max_per_run`](Self::max_per_run): at most this many regions over
///   every file read with the same [`SkipLog`] (a reader's, or a
///   pipeline's when its readers share
///   [`Pipeline::skip_log`](crate::coord::Pipeline::skip_log)); the next
///   one fails at once. A file read once per epoch counts once per epoch.
/// - [`max_fraction`](Self::max_fraction): at most this fraction of a
///   file's records, counting each region as one lost record: `skipped /
///   (intact + skipped)`. Checked when the file ends, since early on a
///   single damaged record is a large fraction of a file; the records
///   before the end have been delivered by then.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SkipBudget {
    max_per_file: Option<u64>,
    max_per_run: Option<u64>,
    max_fraction: Option<f64>,
}

impl SkipBudget {
    /// A budget with no limit: every damaged region is skipped (and
    /// counted).
    pub fn new() -> SkipBudget {
        SkipBudget::default()
    }

    /// At most `n` regions skipped per file.
    pub fn max_per_file(mut self, n: u64) -> SkipBudget {
        self.max_per_file = Some(n);
        self
    }

    /// At most `n` regions skipped over the whole run (every file read
    /// with the same [`SkipLog`]).
    pub fn max_per_run(mut self, n: u64) -> SkipBudget {
        self.max_per_run = Some(n);
        self
    }

    /// At most this fraction (0 to 1) of a file's records lost to
    /// skipped regions, checked at the end of the file.
    pub fn max_fraction(mut self, fraction: f64) -> SkipBudget {
        self.max_fraction = Some(fraction);
        self
    }

    /// The per-file limit, if any.
    pub fn per_file(&self) -> Option<u64> {
        self.max_per_file
    }

    /// The per-run limit, if any.
    pub fn per_run(&self) -> Option<u64> {
        self.max_per_run
    }

    /// The fraction limit, if any.
    pub fn fraction(&self) -> Option<f64> {
        self.max_fraction
    }
}

/// One damaged region as a [`SkipLog`] keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SkippedRegion {
    /// The offset of its first byte in the (decompressed) stream.
    pub offset: u64,
    /// Its length in bytes.
    pub len: u64,
    /// Whether it runs to the end because the rest of the stream could
    /// not be read (a broken compressed stream); see
    /// [`Skip::unreadable_rest`].
    pub unreadable_rest: bool,
}

/// What was skipped in one file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FileSkips {
    /// The file's name.
    pub file: String,
    /// Regions skipped, counted once per reading of the file.
    pub skipped: u64,
    /// Their bytes.
    pub skipped_bytes: u64,
    /// The distinct regions, in the order met (a region met again in a
    /// later epoch is listed once), up to the log's
    /// [`max_regions`](SkipLog::with_max_regions).
    pub regions: Vec<SkippedRegion>,
    /// Distinct regions not listed because the log was full.
    pub regions_not_listed: u64,
}

/// A snapshot of a [`SkipLog`]: what a skip policy skipped.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SkipStats {
    /// Regions skipped, in every file.
    pub skipped: u64,
    /// Their bytes.
    pub skipped_bytes: u64,
    /// Per file, in the order files first had a skip; files with none
    /// are not listed.
    pub files: Vec<FileSkips>,
}

impl SkipStats {
    /// The entry of `file`, if it had a skip.
    pub fn file(&self, file: &str) -> Option<&FileSkips> {
        self.files.iter().find(|f| f.file == file)
    }
}

/// The default number of regions a [`SkipLog`] lists.
pub const DEFAULT_MAX_LISTED_REGIONS: usize = 10_000;

/// Counts every region a [`CorruptRecords::Skip`] policy skipped, per
/// file, with its offset and length; the per-run budget counts here.
///
/// Cloning is cheap and clones share one log: give the same log to every
/// reader of a run (a [`Pipeline`](crate::coord::Pipeline) has one,
/// which its statistics and summaries report). Counts are exact; the list
/// of regions is bounded ([`with_max_regions`](Self::with_max_regions)).
#[derive(Debug, Clone, Default)]
pub struct SkipLog {
    inner: Arc<Mutex<LogInner>>,
}

#[derive(Debug, Default)]
struct LogInner {
    /// Regions listed at most; 0 means the default.
    max_regions: usize,
    /// Regions listed so far, in every file.
    listed: usize,
    stats: SkipStats,
    /// Index of each file in `stats.files`.
    index: HashMap<String, usize>,
}

impl SkipLog {
    /// An empty log that lists up to [`DEFAULT_MAX_LISTED_REGIONS`]
    /// regions.
    pub fn new() -> SkipLog {
        SkipLog::default()
    }

    /// An empty log that lists up to `n` regions (in all files); past
    /// that, regions are still counted.
    pub fn with_max_regions(n: usize) -> SkipLog {
        let log = SkipLog::default();
        log.inner.lock().max_regions = n.max(1);
        log
    }

    /// Regions skipped so far, in every file.
    pub fn skipped(&self) -> u64 {
        self.inner.lock().stats.skipped
    }

    /// A snapshot of the counts and regions.
    pub fn stats(&self) -> SkipStats {
        self.inner.lock().stats.clone()
    }

    /// Whether `self` and `other` are the same log.
    pub fn same(&self, other: &SkipLog) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// Counts `skip` in `file`; returns the regions skipped in the run
    /// so far, this one included.
    fn record(&self, file: &str, skip: &Skip) -> u64 {
        let mut g = self.inner.lock();
        let inner = &mut *g;
        let max = match inner.max_regions {
            0 => DEFAULT_MAX_LISTED_REGIONS,
            n => n,
        };
        inner.stats.skipped += 1;
        inner.stats.skipped_bytes += skip.len;
        let i = match inner.index.get(file) {
            Some(&i) => i,
            None => {
                inner.stats.files.push(FileSkips {
                    file: file.to_owned(),
                    ..FileSkips::default()
                });
                let i = inner.stats.files.len() - 1;
                inner.index.insert(file.to_owned(), i);
                i
            }
        };
        let entry = &mut inner.stats.files[i];
        entry.skipped += 1;
        entry.skipped_bytes += skip.len;
        let region = SkippedRegion {
            offset: skip.offset,
            len: skip.len,
            unreadable_rest: skip.unreadable_rest,
        };
        if !entry.regions.contains(&region) {
            if inner.listed < max {
                entry.regions.push(region);
                inner.listed += 1;
            } else {
                entry.regions_not_listed += 1;
            }
        }
        inner.stats.skipped
    }
}

/// How many skipped regions an error message lists.
const LISTED_IN_ERRORS: usize = 10;

/// The policy applied to one stream: counts its skips, logs them, and
/// enforces the budget.
#[derive(Debug, Clone)]
pub(crate) struct Policy {
    /// `None` for [`CorruptRecords::Fail`].
    budget: Option<SkipBudget>,
    log: SkipLog,
    /// The name the log and errors use.
    file: Arc<str>,
    /// Regions skipped in this stream.
    skipped: u64,
    /// The first few, for error messages.
    first: Vec<(u64, u64)>,
    /// The record index the stream started at.
    start_index: u64,
}

impl Policy {
    pub(crate) fn new(
        policy: &CorruptRecords,
        log: SkipLog,
        file: Option<&Arc<str>>,
        start_index: u64,
    ) -> Policy {
        Policy {
            budget: match policy {
                CorruptRecords::Fail => None,
                CorruptRecords::Skip(b) => Some(*b),
            },
            log,
            file: file.cloned().unwrap_or_else(|| "(stream)".into()),
            skipped: 0,
            first: Vec::new(),
            start_index,
        }
    }

    /// Whether damaged regions are skipped.
    pub(crate) fn skips(&self) -> bool {
        self.budget.is_some()
    }

    pub(super) fn log(&self) -> &SkipLog {
        &self.log
    }

    pub(super) fn skipped(&self) -> u64 {
        self.skipped
    }

    /// The next record the decoder already holds, counting (and
    /// checking against the budget) every damaged region it reports on
    /// the way; `None` when it needs more input or has ended.
    pub(super) fn next_held(
        &mut self,
        decoder: &mut Decoder,
    ) -> Result<Option<Record>> {
        loop {
            match decoder.decode_held()? {
                Some(Decoded::Record(frame)) => {
                    return Ok(Some(Record::new(
                        Bytes::from(decoder.take_buffered()),
                        frame.offset,
                        frame.index,
                    )));
                }
                Some(Decoded::Skipped(skip)) => self.on_skip(&skip)?,
                _ => return Ok(None),
            }
        }
    }

    /// Counts a skipped region; fails once the budget is exceeded.
    pub(crate) fn on_skip(&mut self, skip: &Skip) -> Result<()> {
        let budget = self.budget.unwrap_or_default();
        self.skipped += 1;
        if self.first.len() < LISTED_IN_ERRORS {
            self.first.push((skip.offset, skip.len));
        }
        let run = self.log.record(&self.file, skip);
        if let Some(max) = budget.max_per_file {
            if self.skipped > max {
                return Err(self.exceeded(
                    skip,
                    format!(
                        "{} corrupt regions in this file, more than \
                         max_per_file = {max}",
                        self.skipped
                    ),
                ));
            }
        }
        if let Some(max) = budget.max_per_run {
            if run > max {
                return Err(self.exceeded(
                    skip,
                    format!(
                        "{run} corrupt regions in this run, more than \
                         max_per_run = {max}"
                    ),
                ));
            }
        }
        Ok(())
    }

    /// At the end of the stream, whose next record index is `next_index`:
    /// checks the fraction.
    pub(crate) fn on_end(&self, next_index: u64) -> Result<()> {
        let Some(max) = self.budget.and_then(|b| b.max_fraction) else {
            return Ok(());
        };
        if self.skipped == 0 {
            return Ok(());
        }
        let intact = next_index.saturating_sub(self.start_index);
        let total = intact + self.skipped;
        let fraction = self.skipped as f64 / total as f64;
        if fraction <= max {
            return Ok(());
        }
        let mut msg = format!(
            "too many corrupt records: {} of {total} records of this file \
             ({:.2}%) were in corrupt regions, more than max_fraction = \
             {max}",
            self.skipped,
            fraction * 100.0
        );
        self.list_regions(&mut msg);
        let last = self.first.last().map_or(0, |r| r.0);
        Err(Error::data_loss(msg)
            .with_file(&*self.file)
            .with_offset(last))
    }

    fn exceeded(&self, skip: &Skip, why: String) -> Error {
        let mut msg = format!("too many corrupt records: {why}");
        self.list_regions(&mut msg);
        let _ = write!(msg, "; the last: {}", skip.cause.message());
        Error::data_loss(msg)
            .with_file(&*self.file)
            .with_offset(skip.offset)
    }

    fn list_regions(&self, msg: &mut String) {
        msg.push_str("; skipped at offsets ");
        for (i, (offset, len)) in self.first.iter().enumerate() {
            if i > 0 {
                msg.push_str(", ");
            }
            let _ = write!(msg, "{offset} ({len} bytes)");
        }
        let more = self.skipped.saturating_sub(self.first.len() as u64);
        if more > 0 {
            let _ = write!(msg, " and {more} more");
        }
    }
}
