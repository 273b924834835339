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
//! records marked [`ShardRecord::pad`]. Both are counted
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
use crate::reader::{Reader, WorkQueue};

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
    /// Every host is filled up to the largest host's count with records
    /// marked [`ShardRecord::pad`] (counted in [`ShardStats::padded`]),
    /// whose value is empty and whose key is `<pad>`.
    Pad,
}

/// One record of this host's part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShardRecord {
    /// Where it came from (`FILE:N`), or `<pad>`.
    pub key: String,
    /// Its bytes; empty for a padding record.
    pub value: Bytes,
    /// True for a padding record added by [`Remainder::Pad`].
    pub pad: bool,
}

/// Counters of a [`ShardedReader`], over every epoch read so far.
#[derive(Debug, Default)]
pub struct ShardStats {
    dropped: AtomicU64,
    padded: AtomicU64,
    passed_over: AtomicU64,
}

impl ShardStats {
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
                let mut counts = Vec::with_capacity(self.files.len());
                for f in &self.files {
                    let reader = (self.make)();
                    let work = List::new([f.clone()]);
                    let mut n = 0u64;
                    loop {
                        match reader.read(&work) {
                            Ok(_) => n += 1,
                            Err(e) if e.is_out_of_range() => break,
                            Err(e) => return Err(e),
                        }
                    }
                    counts.push(n);
                }
                Some(counts)
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
        let mut order: Vec<usize> = (0..self.files.len()).collect();
        if self.shuffle {
            order.shuffle(&mut epoch_order_rng(self.seed, epoch));
        }
        order
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
    held: Option<ShardRecord>,
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

fn pad() -> ShardRecord {
    ShardRecord {
        key: "<pad>".to_owned(),
        value: Bytes::new(),
        pad: true,
    }
}

impl EpochRecords {
    fn next_record(&mut self) -> Result<Option<ShardRecord>> {
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
            let rec = ShardRecord {
                key: rec.key,
                value: rec.value,
                pad: false,
            };
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
    fn finish(&mut self) -> Result<Option<ShardRecord>> {
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
    type Item = Result<ShardRecord>;

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
