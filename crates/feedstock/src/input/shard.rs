//! One dataset split across many hosts: host `index` of `count` reads a
//! disjoint part, the parts together are all of it, every epoch, and every
//! host gets the same amount of work.
//!
//! # The split
//!
//! Each epoch the files are put in one order, the same on every host: the
//! given order, or, with [`ShardedReaderBuilder::shuffle`], a permutation drawn
//! from `(seed, epoch)` alone. The split is then a pure function of
//! `(seed, epoch, index, count)`:
//!
//! - **File level**, when there are at least as many files as hosts: host
//!   `index` reads the files at positions `index`, `index + count`, ... of
//!   the epoch's order. Each host opens only its own files.
//! - **Record level**, when there are fewer files than hosts: every host
//!   walks every file, in the epoch's order, and keeps the records whose
//!   running number `g` in the epoch satisfies `g % count == index`. The
//!   other hosts' records are passed over without being handed on or
//!   parsed. Their framing and checksums are still checked (the readers
//!   check both as they go, at several GB/s): a corrupt record then fails
//!   on every host alike, so no host silently counts differently from the
//!   others.
//!
//! # Equal work
//!
//! A multi-host job hangs when one host runs out of input before the
//! others, so every host yields the same number of records each epoch, and
//! hence the same number of batches of any size. The [`Remainder`] policy
//! says how: [`Remainder::Drop`] cuts every host to the smallest host's
//! count, [`Remainder::Pad`] fills every host up to the largest with
//! padding records ([`Record::is_pad`]). Both are counted
//! ([`ShardStats`]). At file level the per-file record counts are needed
//! for this: they are counted once, by reading every file once when the
//! reader is built (or given with [`ShardedReaderBuilder::record_counts`]). At
//! record level they are not: a host knows the epoch's total when it
//! reaches its end, so it holds back its last record until then.
//!
//! ```
//! use feedstock::input::shard::{Remainder, Shard, ShardedReader};
//! use feedstock::reader::{Reader, TextLineReader};
//! # let dir = tempfile::tempdir()?;
//! # let mut files = Vec::new();
//! # for f in 0..2 {
//! #     let p = dir.path().join(format!("part-{f}.csv"));
//! #     std::fs::write(&p, "a\nb\nc\n")?;
//! #     files.push(p.to_str().unwrap().to_owned());
//! # }
//! // Host 1 of 3 (two files: record level), dropping the remainder.
//! let host = ShardedReader::new(
//!     files,
//!     Shard::new(1, 3)?,
//!     || Reader::new(TextLineReader::new()),
//! )
//! .remainder(Remainder::Drop)
//! .seed(7)
//! .shuffle(true)
//! .build()?;
//! let mine: Vec<_> = host.epoch(0)?.collect::<Result<_, _>>()?;
//! assert_eq!(mine.len(), 2); // 6 records over 3 hosts
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::VecDeque;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use parking_lot::Mutex;
use rand::seq::SliceRandom;

use super::producer::epoch_order_rng;
use crate::error::{Error, Result};
use crate::reader::{Reader, Record, WorkQueue, WorkUnit, PAD_KEY_PREFIX};

/// Which part of the data this host reads: host `index` of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Shard {
    index: usize,
    count: usize,
}

impl Shard {
    /// Host `index` of `count` (the rank and the world size).
    ///
    /// # Errors
    ///
    /// [`Kind::InvalidArgument`](crate::Kind::InvalidArgument) unless
    /// `index < count`.
    pub fn new(index: usize, count: usize) -> Result<Shard> {
        if index >= count {
            return Err(Error::invalid_argument(format!(
                "shard index {index} must be less than the shard count {count}"
            )));
        }
        Ok(Shard { index, count })
    }

    /// The single host that reads everything: `Shard::new(0, 1)`.
    pub fn all() -> Shard {
        Shard { index: 0, count: 1 }
    }

    /// This host's index (its rank).
    pub fn index(&self) -> usize {
        self.index
    }

    /// The number of hosts (the world size).
    pub fn count(&self) -> usize {
        self.count
    }
}

/// What to do with the records some hosts have and others do not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Remainder {
    /// Every host stops at the smallest host's count; the rest is left out
    /// (counted in [`ShardStats::dropped`]).
    Drop,
    /// Every host is filled up to the largest host's count with padding
    /// records (counted in [`ShardStats::padded`]): key
    /// [`PAD_KEY_PREFIX`] alone, empty value
    /// ([`Record::is_pad`]).
    Pad,
}

/// Counters of a [`ShardedReader`], over every epoch read so far.
#[derive(Debug, Default)]
pub struct ShardStats {
    dropped: AtomicU64,
    padded: AtomicU64,
    passed_over: AtomicU64,
}

impl ShardStats {
    /// Counts an epoch's plan.
    pub(crate) fn add_plan(&self, plan: &EpochPlan) {
        self.dropped.fetch_add(plan.dropped(), Ordering::Relaxed);
        self.padded.fetch_add(plan.padded(), Ordering::Relaxed);
    }

    /// Records of this host left out by [`Remainder::Drop`].
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Padding records added by [`Remainder::Pad`].
    pub fn padded(&self) -> u64 {
        self.padded.load(Ordering::Relaxed)
    }

    /// Other hosts' records walked past at record level.
    pub fn passed_over(&self) -> u64 {
        self.passed_over.load(Ordering::Relaxed)
    }
}

type MakeReader = Arc<dyn Fn() -> Reader + Send + Sync>;

/// Builds a [`ShardedReader`].
pub struct ShardedReaderBuilder {
    files: Vec<String>,
    shard: Shard,
    make: MakeReader,
    seed: u64,
    shuffle: bool,
    remainder: Remainder,
    counts: Option<Vec<u64>>,
}

impl fmt::Debug for ShardedReaderBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ShardedReaderBuilder")
            .field("files", &self.files.len())
            .field("shard", &self.shard)
            .field("seed", &self.seed)
            .field("shuffle", &self.shuffle)
            .field("remainder", &self.remainder)
            .finish_non_exhaustive()
    }
}

impl ShardedReaderBuilder {
    /// The seed of the epochs' file orders; it must be the same on every
    /// host (default 0).
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Whether each epoch takes the files in a new order drawn from
    /// `(seed, epoch)` (default: no, the given order).
    pub fn shuffle(mut self, shuffle: bool) -> Self {
        self.shuffle = shuffle;
        self
    }

    /// The remainder policy (default [`Remainder::Drop`]).
    pub fn remainder(mut self, remainder: Remainder) -> Self {
        self.remainder = remainder;
        self
    }

    /// The number of records in each file, in the order given, so that
    /// file-level sharding need not count them by reading every file.
    pub fn record_counts(mut self, counts: Vec<u64>) -> Self {
        self.counts = Some(counts);
        self
    }

    /// Builds the reader; at file level, counts every file's records
    /// unless [`record_counts`](Self::record_counts) gave them.
    ///
    /// # Errors
    ///
    /// [`Kind::InvalidArgument`](crate::Kind::InvalidArgument) for no files
    /// or counts that do not match the files; any error reading a file
    /// while counting, naming it.
    pub fn build(self) -> Result<ShardedReader> {
        if self.files.is_empty() {
            return Err(Error::invalid_argument("no files to shard"));
        }
        let file_level = self.files.len() >= self.shard.count;
        let counts = match self.counts {
            Some(c) if c.len() != self.files.len() => {
                return Err(Error::invalid_argument(format!(
                    "{} record counts for {} files",
                    c.len(),
                    self.files.len()
                )))
            }
            Some(c) => Some(c),
            None if file_level && self.shard.count > 1 => {
                Some(count_records(&*self.make, &self.files)?)
            }
            None => None,
        };
        Ok(ShardedReader {
            files: self.files,
            shard: self.shard,
            make: self.make,
            seed: self.seed,
            shuffle: self.shuffle,
            remainder: self.remainder,
            counts,
            stats: Arc::new(ShardStats::default()),
        })
    }
}

/// This host's part of a list of files, epoch by epoch; see the
/// [module docs](self).
pub struct ShardedReader {
    files: Vec<String>,
    shard: Shard,
    make: MakeReader,
    seed: u64,
    shuffle: bool,
    remainder: Remainder,
    counts: Option<Vec<u64>>,
    stats: Arc<ShardStats>,
}

impl fmt::Debug for ShardedReader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ShardedReader")
            .field("files", &self.files.len())
            .field("shard", &self.shard)
            .field("file_level", &self.is_file_level())
            .field("remainder", &self.remainder)
            .finish_non_exhaustive()
    }
}

impl ShardedReader {
    /// This host's part of `files`, each read by a fresh reader from
    /// `make` (which decides the format and the file system).
    #[allow(clippy::new_ret_no_self)]
    pub fn new(
        files: impl IntoIterator<Item = impl Into<String>>,
        shard: Shard,
        make: impl Fn() -> Reader + Send + Sync + 'static,
    ) -> ShardedReaderBuilder {
        ShardedReaderBuilder {
            files: files.into_iter().map(Into::into).collect(),
            shard,
            make: Arc::new(make),
            seed: 0,
            shuffle: false,
            remainder: Remainder::Drop,
            counts: None,
        }
    }

    /// Whether hosts split files (true) or records (false).
    pub fn is_file_level(&self) -> bool {
        self.files.len() >= self.shard.count
    }

    /// The counters over every epoch read so far.
    pub fn stats(&self) -> &ShardStats {
        &self.stats
    }

    /// The files of epoch `epoch` in the order every host uses.
    pub fn epoch_order(&self, epoch: u64) -> Vec<usize> {
        epoch_order(self.files.len(), self.seed, epoch, self.shuffle)
    }

    /// The files host `index` reads in epoch `epoch` at file level (at
    /// record level, every host walks every file).
    pub fn files_of(&self, epoch: u64, index: usize) -> Vec<String> {
        let order = self.epoch_order(epoch);
        if !self.is_file_level() {
            return order.iter().map(|&i| self.files[i].clone()).collect();
        }
        order
            .iter()
            .skip(index)
            .step_by(self.shard.count)
            .map(|&i| self.files[i].clone())
            .collect()
    }

    /// This host's records of epoch `epoch`, the same number on every
    /// host.
    ///
    /// # Errors
    ///
    /// None here; reading errors come from the iterator, naming the file.
    pub fn epoch(&self, epoch: u64) -> Result<EpochRecords> {
        let mine = self.files_of(epoch, self.shard.index);
        let target = match &self.counts {
            Some(counts) if self.is_file_level() => {
                let order = self.epoch_order(epoch);
                let per_host: Vec<u64> = (0..self.shard.count)
                    .map(|h| {
                        order
                            .iter()
                            .skip(h)
                            .step_by(self.shard.count)
                            .map(|&i| counts[i])
                            .sum()
                    })
                    .collect();
                let own = per_host[self.shard.index];
                let t = match self.remainder {
                    Remainder::Drop => *per_host.iter().min().expect("hosts"),
                    Remainder::Pad => *per_host.iter().max().expect("hosts"),
                };
                Some((own, t))
            }
            _ => None,
        };
        Ok(EpochRecords {
            reader: (self.make)(),
            work: List::new(mine),
            shard: self.shard,
            record_level: !self.is_file_level(),
            remainder: self.remainder,
            target,
            seen: 0,
            emitted: 0,
            held: None,
            pads_left: None,
            done: false,
            stats: Arc::clone(&self.stats),
        })
    }
}

/// The records of one host in one epoch; see [`ShardedReader::epoch`].
pub struct EpochRecords {
    reader: Reader,
    work: List,
    shard: Shard,
    record_level: bool,
    remainder: Remainder,
    /// At file level with counts: (this host's records, records to yield).
    target: Option<(u64, u64)>,
    /// Records walked in the epoch (record level: every host's).
    seen: u64,
    /// Records yielded, padding included.
    emitted: u64,
    /// Record level: this host's latest record, held until the next one
    /// or the end of the epoch shows whether it is within the target.
    held: Option<Record>,
    /// Padding records still to yield at the end.
    pads_left: Option<u64>,
    done: bool,
    stats: Arc<ShardStats>,
}

impl fmt::Debug for EpochRecords {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EpochRecords")
            .field("shard", &self.shard)
            .field("record_level", &self.record_level)
            .field("emitted", &self.emitted)
            .finish_non_exhaustive()
    }
}

fn pad() -> Record {
    Record {
        key: PAD_KEY_PREFIX.to_owned(),
        value: Bytes::new(),
    }
}

impl EpochRecords {
    fn next_record(&mut self) -> Result<Option<Record>> {
        if let Some(left) = &mut self.pads_left {
            if *left == 0 {
                return Ok(None);
            }
            *left -= 1;
            self.stats.padded.fetch_add(1, Ordering::Relaxed);
            return Ok(Some(pad()));
        }
        loop {
            let rec = match self.reader.read(&self.work) {
                Ok(r) => r,
                Err(e) if e.is_out_of_range() => return self.finish(),
                Err(e) => return Err(e),
            };
            let g = self.seen;
            self.seen += 1;
            if self.record_level {
                if g % self.shard.count as u64 != self.shard.index as u64 {
                    self.stats.passed_over.fetch_add(1, Ordering::Relaxed);
                    continue;
                }
                // Every record but the last is within any target: yield
                // the one held, hold this one.
                if let Some(prev) = self.held.replace(rec) {
                    return Ok(Some(prev));
                }
                continue;
            }
            if let Some((_, target)) = self.target {
                if self.emitted >= target {
                    self.stats.dropped.fetch_add(1, Ordering::Relaxed);
                    continue;
                }
            }
            return Ok(Some(rec));
        }
    }

    /// The end of this host's input: settle the held record and padding.
    fn finish(&mut self) -> Result<Option<Record>> {
        let count = self.shard.count as u64;
        let (own, target) = if self.record_level {
            let n = self.seen;
            let index = self.shard.index as u64;
            let own = (n + count - 1 - index) / count;
            let t = match self.remainder {
                Remainder::Drop => n / count,
                Remainder::Pad => n.div_ceil(count),
            };
            (own, t)
        } else {
            match self.target {
                Some(t) => t,
                // One host, or file level with one file per host and no
                // counts needed: nothing to even out.
                None => (self.emitted, self.emitted),
            }
        };
        if let Some(last) = self.held.take() {
            if own > target {
                self.stats
                    .dropped
                    .fetch_add(own - target, Ordering::Relaxed);
            } else {
                self.pads_left = Some(target - own);
                return Ok(Some(last));
            }
        }
        if self.pads_left.is_none() {
            self.pads_left = Some(target.saturating_sub(own));
        }
        self.next_record()
    }
}

impl Iterator for EpochRecords {
    type Item = Result<Record>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let r = self.next_record();
        match r {
            Ok(Some(rec)) => {
                self.emitted += 1;
                Some(Ok(rec))
            }
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

/// The order of `files` files in epoch `epoch`, the same on every host:
/// `0..files`, or with `shuffle` a permutation drawn from
/// `(seed, epoch)` alone (the generator the producers' shuffles use).
pub fn epoch_order(
    files: usize,
    seed: u64,
    epoch: u64,
    shuffle: bool,
) -> Vec<usize> {
    let mut order: Vec<usize> = (0..files).collect();
    if shuffle {
        order.shuffle(&mut epoch_order_rng(seed, epoch));
    }
    order
}

/// The number of records in each of `files`, read once by a reader from
/// `make`.
///
/// # Errors
///
/// Any error reading a file, naming it.
pub(crate) fn count_records(
    make: &dyn Fn() -> Reader,
    files: &[String],
) -> Result<Vec<u64>> {
    let mut counts = Vec::with_capacity(files.len());
    for f in files {
        let reader = make();
        let work = List::new([f.clone()]);
        let mut n = 0u64;
        loop {
            match reader.read_batch(&work, 4096) {
                Ok(b) => n += b.len() as u64,
                Err(e) if e.is_out_of_range() => break,
                Err(e) => return Err(e),
            }
        }
        counts.push(n);
    }
    Ok(counts)
}

/// What one host reads in one epoch of a sharded producer; see
/// [`plan_epoch`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EpochPlan {
    /// The work units, in order, for the host's filename queue.
    pub units: Vec<WorkUnit>,
    /// The host's own records in the epoch, before the remainder policy.
    pub own: u64,
    /// The records every host yields in the epoch, padding included.
    pub target: u64,
}

impl EpochPlan {
    /// Records of this host left out by [`Remainder::Drop`].
    pub fn dropped(&self) -> u64 {
        self.own.saturating_sub(self.target)
    }

    /// Padding records added by [`Remainder::Pad`].
    pub fn padded(&self) -> u64 {
        self.target.saturating_sub(self.own)
    }
}

/// Host `shard`'s part of one epoch, as work units for a
/// [`Reader`]: a pure function of the epoch's file
/// order (`order`, indices into `files`, the same on every host), the
/// files' record counts, the shard and the remainder policy.
///
/// The split is the one [`ShardedReader`] makes: file level when there
/// are at least as many files as hosts (host `index` takes the files at
/// positions `index`, `index + count`, ... of the order), record level
/// otherwise (the records of the epoch are numbered across the files in
/// order, and host `index` takes those whose number `g` has
/// `g % count == index`). Every host then yields
/// [`target`](EpochPlan::target) records: with [`Remainder::Drop`] the
/// smallest host's count (a host with more stops early in its last
/// files), with [`Remainder::Pad`] the largest's (a host with fewer reads
/// some of its own records again, marked as padding: their keys start
/// with [`PAD_KEY_PREFIX`]).
///
/// ```
/// use feedstock::input::shard::{plan_epoch, Remainder, Shard};
///
/// let files = ["a".to_owned(), "b".to_owned()];
/// let counts = [5, 2]; // 7 records over 3 hosts: record level
/// let plan = plan_epoch(&[0, 1], &files, &counts, Shard::new(0, 3)?, Remainder::Drop);
/// assert_eq!((plan.own, plan.target), (3, 2)); // records 0, 3 | 6
/// assert_eq!(plan.dropped(), 1);
/// # Ok::<(), feedstock::Error>(())
/// ```
///
/// # Panics
///
/// If `order` names a file beyond `files` or `counts`: they must match.
pub fn plan_epoch(
    order: &[usize],
    files: &[String],
    counts: &[u64],
    shard: Shard,
    remainder: Remainder,
) -> EpochPlan {
    let c = shard.count as u64;
    let total: u64 = order.iter().map(|&i| counts[i]).sum();
    // The host's units, each with the number of records it selects.
    let mut mine: Vec<(WorkUnit, u64)> = Vec::new();
    let (min, max);
    if order.len() >= shard.count {
        let per_host = |h: usize| -> u64 {
            order
                .iter()
                .skip(h)
                .step_by(shard.count)
                .map(|&i| counts[i])
                .sum()
        };
        let all: Vec<u64> = (0..shard.count).map(per_host).collect();
        min = *all.iter().min().expect("one host at least");
        max = *all.iter().max().expect("one host at least");
        for &i in order.iter().skip(shard.index).step_by(shard.count) {
            mine.push((WorkUnit::file(files[i].clone()), counts[i]));
        }
    } else {
        min = total / c;
        max = total.div_ceil(c);
        let mut base = 0u64;
        for &i in order {
            let n = counts[i];
            // The first record of this file that is the host's.
            let first = (shard.index as u64 + c - base % c) % c;
            if first < n {
                let selected = (n - first - 1) / c + 1;
                let unit = WorkUnit::file(files[i].clone());
                let unit = if c == 1 { unit } else { unit.every(c, first) };
                mine.push((unit, selected));
            }
            base += n;
        }
    }
    let own: u64 = mine.iter().map(|(_, n)| n).sum();
    let target = match remainder {
        Remainder::Drop => min,
        Remainder::Pad => max,
    };
    let mut units = Vec::with_capacity(mine.len());
    let mut left = target;
    for (unit, n) in &mine {
        let take = (*n).min(left);
        if take == 0 {
            break;
        }
        left -= take;
        units.push(if take < *n {
            unit.clone().limit(take)
        } else {
            unit.clone()
        });
    }
    // Padding: this host's own records again (or, for a host with none,
    // anyone's), marked.
    let source: Vec<(WorkUnit, u64)> = if own > 0 {
        mine
    } else {
        order
            .iter()
            .filter(|&&i| counts[i] > 0)
            .map(|&i| (WorkUnit::file(files[i].clone()), counts[i]))
            .collect()
    };
    while left > 0 && !source.is_empty() {
        for (unit, n) in &source {
            let take = (*n).min(left);
            if take == 0 {
                break;
            }
            left -= take;
            units.push(unit.clone().pad(true).limit(take));
        }
    }
    EpochPlan { units, own, target }
}

/// A closed list of files as a work queue.
struct List(Mutex<VecDeque<String>>);

impl List {
    fn new(files: impl IntoIterator<Item = String>) -> List {
        List(Mutex::new(files.into_iter().collect()))
    }
}

impl WorkQueue for List {
    fn next_work(&self) -> Result<String> {
        self.0
            .lock()
            .pop_front()
            .ok_or_else(|| Error::out_of_range("no more files in this epoch"))
    }
}
