//! A record index: where every record of a TFRecord file starts, so that
//! record `i` can be read without reading the records before it.
//!
//! # Brief overview
//!
//! - [`RecordIndex::build`] scans a file once, checking its framing and
//!   both CRCs of every record, and notes each record's offset and length
//!   together with a [`Fingerprint`] of the file.
//! - [`RecordIndex::to_bytes`] / [`RecordIndex::from_bytes`]: the sidecar
//!   format, written beside the file as the hidden file
//!   `.NAME.feedstock-index` ([`sidecar_path`]: hidden, so that data
//!   globs do not match it) by `feedstock index FILE` or
//!   [`RecordIndex::write_sidecar`].
//! - [`RecordIndex::open`] loads the sidecar when there is one, refusing a
//!   stale one (the file changed since it was written), and otherwise
//!   builds the same index in memory.
//! - [`RecordIndex::read`] reads record `i`; [`RecordIndex::read_many`]
//!   reads any set of records, in ascending offset order whatever the
//!   order asked for: with positioned reads where the file system has
//!   them ([`FileSystem::open_read_at`]), nearby records merged into one
//!   read, else forward. [`RecordIndex::read_many_from`] does the same
//!   through a handle the caller keeps open across calls.
//!
//! ```
//! use feedstock::io::fs::LocalFs;
//! use feedstock::io::index::RecordIndex;
//! use feedstock::io::tfrecord::Writer;
//!
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("data.tfrecord");
//! let path = path.to_str().unwrap();
//! let mut w = Writer::new(std::fs::File::create(path)?);
//! for i in 0..100 {
//!     w.write_record(format!("record {i}").as_bytes())?;
//! }
//! w.finish()?;
//!
//! let index = RecordIndex::open(&LocalFs, path, None)?;
//! assert_eq!(index.len(), 100);
//! assert_eq!(&index.read(&LocalFs, 42)?.value[..], b"record 42");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Compressed files
//!
//! The offsets of a gzip or zlib file are offsets in its *decompressed*
//! stream (the same offsets every reader and error message uses). A
//! compressed stream cannot be entered in the middle, so random access to
//! a compressed file inflates it from the start and skips to the record:
//! it works, and [`RecordIndex::read_many`] needs one pass per call, but
//! each call costs up to a pass over the file. Shuffle globally over
//! uncompressed files; compressed ones are best read in order.
//!
//! # Staleness
//!
//! An index describes one version of one file. Its [`Fingerprint`] holds
//! the file's size, the CRC32C of its first and last 64 KiB and the CRC32C
//! of the whole file (computed during the building scan, for free).
//! [`RecordIndex::open`] and [`RecordIndex::load`] check the size, head and
//! tail by default ([`IndexCheck::Sampled`]: 128 KiB read, whatever the
//! file's size), or the whole file with [`IndexCheck::Full`]; a mismatch
//! is a [`FailedPrecondition`](crate::Kind::FailedPrecondition) error
//! naming the file and its sidecar, and the index is never used. The
//! sampled check cannot see a same-size rewrite of the middle of a file;
//! every read through an index therefore also checks that the record at
//! the indexed offset has the indexed length and both CRCs, so a stale
//! index can fail a read but never hand out wrong bytes silently.
//!
//! # The sidecar format (version 1)
//!
//! ```text
//! 8 bytes   magic "fsindex\0"
//! u32 LE    format version (1)
//! [u8]      a protobuf message: compression (TensorFlow's name), the
//!           fingerprint, and the data length of every record as packed
//!           varints (offsets are their running sums: TFRecord has no gaps)
//! u32 LE    masked CRC32C of everything before it
//! ```
//!
//! A record of a few hundred bytes costs two bytes of sidecar.

use std::io::{self, BufRead, BufReader, Read};

use bytes::Bytes;

use super::compression::{Compression, Decompressor};
use super::fs::{skip_exactly, FileSystem, ReadAt};
use super::tfrecord::{
    framed_len, CorruptRecords, Decoded, Decoder, Payload, Policy, Position,
    Record, SkipLog,
};
use crate::error::{Error, Result};

mod sidecar;

pub(crate) use sidecar::MAGIC;
pub use sidecar::{is_sidecar, sidecar_path, FORMAT_VERSION, SIDECAR_SUFFIX};

/// How many bytes of the head and of the tail of a file the sampled
/// fingerprint covers.
const SAMPLE_LEN: u64 = 64 * 1024;

/// A forward gap (in bytes) past which [`RecordIndex::read_many`] reopens
/// an uncompressed file at the next offset rather than reading through.
const REOPEN_GAP: u64 = 256 * 1024;

/// The most bytes one positioned read of [`RecordIndex::read_many_from`]
/// spans when it merges nearby records (a single larger record is read
/// whole).
const MAX_RUN: u64 = 4 << 20;

/// What identifies the version of a file an index describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Fingerprint {
    /// The file's size in bytes (as stored: compressed for a compressed
    /// file).
    pub size: u64,
    /// The CRC32C of its first 64 KiB (the whole file if smaller).
    pub head_crc: u32,
    /// The CRC32C of its last 64 KiB (the whole file if smaller).
    pub tail_crc: u32,
    /// The CRC32C of the whole file.
    pub file_crc: u32,
}

/// How much of a file [`RecordIndex::load`] reads to check that an index
/// still describes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum IndexCheck {
    /// The size, and the CRC32C of the first and last 64 KiB: at most
    /// 128 KiB read, whatever the file's size (the default). Every read
    /// through the index still checks each record's length and CRCs.
    #[default]
    Sampled,
    /// The size and the CRC32C of the whole file: one full read.
    Full,
    /// The size only: for a file damaged since its index was written,
    /// whose content no longer matches, read through the index only to
    /// resynchronise where its records start (`feedstock repair
    /// --index`,
    /// [`ReaderBuilder::record_starts`](super::tfrecord::ReaderBuilder::record_starts)).
    /// Every read through the index still checks each record.
    Size,
}

/// The offset and length of every record of one TFRecord file.
///
/// Built by [`RecordIndex::build`] (one verifying scan), loaded from a
/// sidecar by [`RecordIndex::load`], or either by [`RecordIndex::open`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordIndex {
    /// The file the index describes, as given.
    path: String,
    /// The file's compression.
    compression: Compression,
    /// The version of the file described.
    fingerprint: Fingerprint,
    /// The offset of each record in the (decompressed) stream, then the
    /// stream's length: `len() + 1` entries.
    offsets: Vec<u64>,
    /// Each record's data length, when damaged regions lie between
    /// records ([`build_skipping`](Self::build_skipping)); otherwise
    /// each follows from the next record's offset.
    lens: Option<Vec<u64>>,
}

/// Passes reads through, keeping the CRC32C and count of the bytes read.
struct Hashing<R> {
    inner: R,
    crc: crc_fast::Digest,
    len: u64,
}

impl<R> Hashing<R> {
    fn new(inner: R) -> Hashing<R> {
        Hashing {
            inner,
            crc: crc_fast::Digest::new(crc_fast::CrcAlgorithm::Crc32Iscsi),
            len: 0,
        }
    }

    /// The CRC32C of the bytes read so far.
    fn crc(&self) -> u32 {
        self.crc.finalize() as u32
    }
}

impl<R: Read> Read for Hashing<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.crc.update(&buf[..n]);
        self.len += n as u64;
        Ok(n)
    }
}

impl RecordIndex {
    /// Builds the index of `path` by reading it once through `fs`,
    /// checking the framing and both CRCs of every record. The
    /// compression, unless given, is detected from the extension.
    ///
    /// # Errors
    ///
    /// Those of opening and reading the file, naming it; any damaged
    /// record is [`DataLoss`](crate::Kind::DataLoss) with its offset, as
    /// the readers report it; [`Aborted`](crate::Kind::Aborted) if the
    /// file changed size during the scan.
    pub fn build(
        fs: &dyn FileSystem,
        path: &str,
        compression: Option<Compression>,
    ) -> Result<RecordIndex> {
        RecordIndex::scan(fs, path, compression, None)
    }

    /// As [`build`](Self::build), skipping damaged regions as `policy`
    /// allows (within its budget, each logged in `log`, as a skipping
    /// reader does): the index lists the intact records only. Such an
    /// index lives in memory: [`write_sidecar`](Self::write_sidecar)
    /// refuses it when a region was skipped (repair the file instead).
    ///
    /// # Errors
    ///
    /// As [`build`](Self::build); a damaged record is an error only
    /// past the budget (naming the file and the regions).
    pub fn build_skipping(
        fs: &dyn FileSystem,
        path: &str,
        compression: Option<Compression>,
        policy: &CorruptRecords,
        log: &SkipLog,
    ) -> Result<RecordIndex> {
        let name: std::sync::Arc<str> = path.into();
        let mut policy = Policy::new(policy, log.clone(), Some(&name), 0);
        RecordIndex::scan(fs, path, compression, Some(&mut policy))
    }

    fn scan(
        fs: &dyn FileSystem,
        path: &str,
        compression: Option<Compression>,
        mut policy: Option<&mut Policy>,
    ) -> Result<RecordIndex> {
        let c = compression.unwrap_or_else(|| Compression::from_path(path));
        let raw = fs.open(path)?;
        let mut src = BufReader::with_capacity(
            256 * 1024,
            Decompressor::new(c, Hashing::new(raw)),
        );
        let skips = policy.as_ref().is_some_and(|p| p.skips());
        let mut decoder = Decoder::new().resync(skips);
        let mut offsets = Vec::new();
        let mut lens = Vec::new();
        let mut skipped = false;
        loop {
            let buf = match src.fill_buf() {
                Ok(buf) => buf,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    let at = decoder.next_position().offset;
                    return Err(Error::io(e).with_offset(at).with_file(path));
                }
            };
            let (what, used) =
                decoder.decode(buf).map_err(|e| e.with_file(path))?;
            match what {
                Decoded::NeedMore => {}
                Decoded::End => break,
                // Without a skipping policy the decoder is strict (no
                // resync): damage is an error above.
                Decoded::Skipped(skip) => match policy.as_deref_mut() {
                    Some(p) if p.skips() => {
                        p.on_skip(&skip).map_err(|e| e.with_file(path))?;
                        skipped = true;
                    }
                    _ => {
                        return Err(Error::data_loss(format!(
                            "damaged region of {} bytes",
                            skip.len
                        ))
                        .with_offset(skip.offset)
                        .with_file(path));
                    }
                },
                Decoded::Record(frame) => {
                    let len = match frame.payload {
                        Payload::Buffered => decoder.take_buffered().len(),
                        Payload::Input(ref r) => r.len(),
                    };
                    offsets.push(frame.offset);
                    lens.push(len as u64);
                }
            }
            src.consume(used);
        }
        offsets.push(decoder.next_position().offset);
        if let Some(p) = policy {
            p.on_end(offsets.len() as u64 - 1)
                .map_err(|e| e.with_file(path))?;
        }
        // Bytes after a compressed stream's end still belong to the file.
        let hashing = src.get_mut().get_mut();
        io::copy(hashing, &mut io::sink())
            .map_err(|e| Error::io(e).with_file(path))?;
        let (file_crc, size) = (hashing.crc(), hashing.len);
        let (sampled_size, head_crc, tail_crc) = sample(fs, path)?;
        if sampled_size != size {
            return Err(Error::new(
                crate::Kind::Aborted,
                format!(
                    "the file changed while it was indexed ({size} bytes \
                     read, now {sampled_size})"
                ),
            )
            .with_file(path));
        }
        Ok(RecordIndex {
            path: path.to_owned(),
            compression: c,
            fingerprint: Fingerprint {
                size,
                head_crc,
                tail_crc,
                file_crc,
            },
            offsets,
            lens: skipped.then_some(lens),
        })
    }

    /// The index of `path`: its sidecar if there is one (checked with
    /// [`IndexCheck::Sampled`]), else one built in memory by
    /// [`build`](Self::build).
    ///
    /// # Errors
    ///
    /// Those of [`load`](Self::load) other than a missing sidecar (a stale
    /// sidecar is an error, not a reason to rebuild: remove or rewrite
    /// it), and those of [`build`](Self::build).
    pub fn open(
        fs: &dyn FileSystem,
        path: &str,
        compression: Option<Compression>,
    ) -> Result<RecordIndex> {
        match RecordIndex::load(fs, path, compression, IndexCheck::Sampled) {
            Ok(index) => Ok(index),
            Err(e)
                if e.kind() == crate::Kind::NotFound
                    && e.file() == Some(sidecar_path(path).as_str()) =>
            {
                RecordIndex::build(fs, path, compression)
            }
            Err(e) => Err(e),
        }
    }

    /// Checks that the file still is the one this index describes.
    ///
    /// # Errors
    ///
    /// [`FailedPrecondition`](crate::Kind::FailedPrecondition) naming the
    /// file if it is not; those of reading it.
    pub fn check(&self, fs: &dyn FileSystem, check: IndexCheck) -> Result<()> {
        let fp = &self.fingerprint;
        let stale = |what: &str| {
            Error::failed_precondition(format!(
                "the index {} is stale: the file's {what} changed since it \
                 was written (rewrite it with `feedstock index --force`)",
                sidecar_path(&self.path)
            ))
            .with_file(&self.path)
        };
        if check == IndexCheck::Size {
            if fs.size(&self.path)? != fp.size {
                return Err(stale("size"));
            }
            return Ok(());
        }
        let (size, head, tail) = sample(fs, &self.path)?;
        if size != fp.size {
            return Err(stale("size"));
        }
        if head != fp.head_crc || tail != fp.tail_crc {
            return Err(stale("content"));
        }
        if check == IndexCheck::Full {
            let mut h = Hashing::new(fs.open(&self.path)?);
            // A compressed file is inflated on the way, to check that the
            // records listed cover its stream (an uncompressed file's
            // stream is the file, checked when the sidecar was read).
            let inflated =
                (self.compression != Compression::None).then(|| {
                    let mut d = Decompressor::new(self.compression, &mut h);
                    io::copy(&mut d, &mut io::sink())
                });
            io::copy(&mut h, &mut io::sink())
                .map_err(|e| Error::io(e).with_file(&self.path))?;
            if h.len != fp.size || h.crc() != fp.file_crc {
                return Err(stale("content"));
            }
            if let Some(inflated) = inflated {
                let n = inflated
                    .map_err(|e| Error::io(e).with_file(&self.path))?;
                if n != self.stream_len() {
                    let side = sidecar_path(&self.path);
                    return Err(Error::invalid_argument(format!(
                        "not a record index: the records it lists cover \
                         {} bytes of the stream of {}, which has {n}",
                        self.stream_len(),
                        self.path
                    ))
                    .with_file(side));
                }
            }
        }
        Ok(())
    }

    /// The file the index describes.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The file's compression.
    pub fn compression(&self) -> Compression {
        self.compression
    }

    /// The version of the file the index describes.
    pub fn fingerprint(&self) -> Fingerprint {
        self.fingerprint
    }

    /// The number of records.
    pub fn len(&self) -> u64 {
        self.offsets.len() as u64 - 1
    }

    /// True if the file holds no records.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The length of the (decompressed) stream in bytes.
    pub fn stream_len(&self) -> u64 {
        *self
            .offsets
            .last()
            .expect("offsets end with the stream length")
    }

    /// The offset of every record in the (decompressed) stream, in
    /// order, then the stream's length: where a skipping reader may
    /// resynchronise after damage to the file
    /// ([`ReaderBuilder::record_starts`](super::tfrecord::ReaderBuilder::record_starts)).
    pub fn record_starts(&self) -> std::sync::Arc<[u64]> {
        self.offsets.as_slice().into()
    }

    /// The position of record `i` (its offset and index), if there is one.
    pub fn position(&self, i: u64) -> Option<Position> {
        let offset = *self.offsets.get(usize::try_from(i).ok()?)?;
        (i < self.len()).then_some(Position { offset, index: i })
    }

    /// The data length of record `i`, if there is one.
    pub fn data_len(&self, i: u64) -> Option<u64> {
        let i = usize::try_from(i).ok()?;
        if let Some(lens) = &self.lens {
            return lens.get(i).copied();
        }
        let (a, b) = (self.offsets.get(i)?, self.offsets.get(i + 1)?);
        Some(b - a - framed_len(0))
    }

    /// True when damaged regions were skipped between its records
    /// ([`build_skipping`](Self::build_skipping)).
    pub fn has_gaps(&self) -> bool {
        self.lens.is_some()
    }

    /// Reads record `i`.
    ///
    /// # Errors
    ///
    /// As [`read_many`](Self::read_many).
    pub fn read(&self, fs: &dyn FileSystem, i: u64) -> Result<Record> {
        Ok(self.read_many(fs, &[i])?.pop().expect("one record asked"))
    }

    /// Reads the records numbered `ordinals`, returned in the order asked
    /// (a number may appear more than once).
    ///
    /// An uncompressed file is read with positioned reads when `fs` has
    /// them ([`FileSystem::open_read_at`]; one handle for the call), as
    /// [`read_many_from`](Self::read_many_from) describes; otherwise, and
    /// for a compressed file, forward, in ascending offset order: an
    /// uncompressed file is opened at the first offset and reopened at a
    /// later one when the gap to it is over 256 KiB; a compressed one is
    /// inflated from its start once per call.
    ///
    /// # Errors
    ///
    /// [`InvalidArgument`](crate::Kind::InvalidArgument) for a number not
    /// below [`len`](Self::len); those of opening and reading the file;
    /// [`DataLoss`](crate::Kind::DataLoss) naming the file and offset if
    /// the record there is damaged, or is not the record the index
    /// describes (a stale index).
    pub fn read_many(
        &self,
        fs: &dyn FileSystem,
        ordinals: &[u64],
    ) -> Result<Vec<Record>> {
        let file = match self.compression {
            Compression::None => fs.open_read_at(&self.path)?,
            _ => None,
        };
        self.read_many_from(fs, file.as_deref(), ordinals)
    }

    /// As [`read_many`](Self::read_many), reading an uncompressed file
    /// through `file`, a handle on it from
    /// [`FileSystem::open_read_at`] that the caller keeps across calls
    /// (the global shuffle keeps one per file for a stream's life).
    /// Without one, or for a compressed file, it reads as `read_many`
    /// does without a handle.
    ///
    /// With a handle, the records are taken in ascending offset order and
    /// grouped into runs: a record joins the run before it when the gap
    /// between them is at most the handle's
    /// [`merge_gap`](ReadAt::merge_gap) and the run stays within 4 MiB.
    /// Each run is one positioned read, and its records are slices of
    /// that one buffer (no copy), which therefore lives as long as any of
    /// them.
    ///
    /// # Errors
    ///
    /// As [`read_many`](Self::read_many).
    pub fn read_many_from(
        &self,
        fs: &dyn FileSystem,
        file: Option<&dyn ReadAt>,
        ordinals: &[u64],
    ) -> Result<Vec<Record>> {
        if let Some(&i) = ordinals.iter().find(|&&i| i >= self.len()) {
            return Err(Error::invalid_argument(format!(
                "record {i} asked of a file of {} records",
                self.len()
            ))
            .with_file(&self.path));
        }
        let spans: Vec<(Position, u64)> =
            ordinals.iter().map(|&i| self.span(i)).collect();
        let ranges: Vec<(u64, u64)> = spans
            .iter()
            .map(|(pos, len)| (pos.offset, framed_len(*len)))
            .collect();
        let bufs =
            read_ranges(fs, &self.path, self.compression, file, &ranges)?;
        bufs.into_iter()
            .zip(spans)
            .map(|(buf, (pos, len))| self.decode_one(buf, pos, len))
            .collect()
    }

    /// The position and data length of record `i`, known to exist.
    fn span(&self, i: u64) -> (Position, u64) {
        let pos = self.position(i).expect("checked against len");
        let len = self.data_len(i).expect("checked against len");
        (pos, len)
    }

    /// Decodes the framed bytes of record `pos`, which the index says has
    /// `len` bytes of data.
    fn decode_one(
        &self,
        buf: Bytes,
        pos: Position,
        len: u64,
    ) -> Result<Record> {
        let stale = |why: String| {
            Error::data_loss(format!(
                "record {} is not what the index says: {why} (stale index?)",
                pos.index
            ))
            .with_offset(pos.offset)
            .with_file(&self.path)
        };
        if (buf.len() as u64) < framed_len(len) {
            return Err(stale(format!(
                "the file ends {} bytes into it",
                buf.len()
            )));
        }
        let mut decoder = Decoder::new().starting_at(pos);
        let (what, used) =
            decoder.decode(&buf).map_err(|e| e.with_file(&self.path))?;
        match what {
            Decoded::Record(frame) if used == buf.len() => {
                let Payload::Input(range) = frame.payload else {
                    return Err(Error::internal(
                        "a whole frame was buffered by the decoder",
                    ));
                };
                Ok(Record::new(buf.slice(range), pos.offset, pos.index))
            }
            _ => {
                let header_len = buf
                    .get(..8)
                    .map(|b| u64::from_le_bytes(b.try_into().expect("8")));
                Err(stale(format!(
                    "its header gives {} bytes of data, the index {len}",
                    header_len.unwrap_or(0)
                )))
            }
        }
    }
}

/// The size of `path` and the CRC32C of its first and last 64 KiB: the
/// sampled [`Fingerprint`] (without `file_crc`), which the sources of
/// [`dataset`](crate::dataset) fingerprint their files by too.
pub(crate) fn sample(
    fs: &dyn FileSystem,
    path: &str,
) -> Result<(u64, u32, u32)> {
    let size = fs.size(path)?;
    let read = |from: u64| -> Result<u32> {
        let mut buf = Vec::new();
        fs.open_at(path, from)?
            .take(SAMPLE_LEN)
            .read_to_end(&mut buf)
            .map_err(|e| Error::io(e).with_file(path))?;
        Ok(crc_fast::crc32_iscsi(&buf))
    };
    let head = read(0)?;
    let tail = read(size.saturating_sub(SAMPLE_LEN))?;
    Ok((size, head, tail))
}

/// Reads the byte ranges `ranges` (start, length) of the (decompressed)
/// stream of `path`, returned in the order given (a range may appear
/// more than once, and ranges may overlap). A range comes back shorter
/// only where the stream ends: the caller checks the length. What every
/// source that reads records by position reads through (the record
/// index, text lines, fixed-length records, whole files).
///
/// The ranges are taken in ascending order of start and grouped into
/// runs: a range joins the run before it when it starts at most `gap`
/// bytes after the run's end and the run stays within 4 MiB (a single
/// larger range is read whole). Each run is one read, and its ranges are
/// slices of that one buffer (no copy), which therefore lives as long as
/// any of them.
///
/// With `file`, a handle on an uncompressed `path` from
/// [`FileSystem::open_read_at`], each run is one positioned read, and
/// `gap` is the handle's [`merge_gap`](ReadAt::merge_gap). Otherwise
/// (no handle, or a compressed stream) the stream is read forward and
/// `gap` is 0 (only overlapping or touching ranges share a run): an
/// uncompressed file is opened at the first run and reopened at a later
/// one when the gap to it is over 256 KiB; a compressed one is inflated
/// from its start once per call (and again for a run that starts before
/// the end of the one before, which only overlapping ranges spanning
/// more than 4 MiB make).
///
/// # Errors
///
/// Those of opening and reading `path`, naming it;
/// [`DataLoss`](crate::Kind::DataLoss) naming it and the offset reached
/// if the stream ends before a range starts.
pub(crate) fn read_ranges(
    fs: &dyn FileSystem,
    path: &str,
    compression: Compression,
    file: Option<&dyn ReadAt>,
    ranges: &[(u64, u64)],
) -> Result<Vec<Bytes>> {
    let file = file.filter(|_| compression == Compression::None);
    let gap = file.map_or(0, ReadAt::merge_gap);
    let mut order: Vec<usize> = (0..ranges.len()).collect();
    order.sort_unstable_by_key(|&k| ranges[k].0);
    // The runs first (each a range of `order` and of the file), then
    // their bytes: with a handle, one `read_ranges` call for all of them
    // (a mapped local file serves it with one size check and a copy per
    // run); otherwise forward reads.
    let mut runs: Vec<(usize, usize)> = Vec::new();
    let mut spans: Vec<(u64, usize)> = Vec::new();
    let mut k = 0;
    while k < order.len() {
        let (start, len) = ranges[order[k]];
        let mut end = start.saturating_add(len);
        let mut j = k + 1;
        while j < order.len() {
            let (at, len) = ranges[order[j]];
            let to = end.max(at.saturating_add(len));
            if at > end.saturating_add(gap) || to - start > MAX_RUN {
                break;
            }
            end = to;
            j += 1;
        }
        let want = usize::try_from(end - start).map_err(|_| {
            Error::resource_exhausted("a record larger than memory")
                .with_offset(start)
                .with_file(path)
        })?;
        runs.push((k, j));
        spans.push((start, want));
        k = j;
    }
    let read = match file {
        Some(file) => file.read_ranges(&spans)?,
        None => read_forward(fs, path, compression, &spans)?,
    };
    let mut out = vec![Bytes::new(); ranges.len()];
    for ((&(k, j), &(start, _)), bytes) in runs.iter().zip(&spans).zip(read) {
        for &slot in &order[k..j] {
            let (at, len) = ranges[slot];
            let a = ((at - start) as usize).min(bytes.len());
            let b = (at - start).saturating_add(len).min(bytes.len() as u64);
            out[slot] = bytes.slice(a..b as usize);
        }
    }
    Ok(out)
}

/// The bytes of `spans` (ascending), read forward through the
/// (decompressed) stream of `path`: an uncompressed file is opened at
/// the first span and reopened at a later one when the gap to it is over
/// 256 KiB; a compressed one is inflated from its start (and again for a
/// span that starts before the end of the one before).
fn read_forward(
    fs: &dyn FileSystem,
    path: &str,
    compression: Compression,
    spans: &[(u64, usize)],
) -> Result<Vec<Bytes>> {
    let mut cursor: Option<(Box<dyn BufRead + Send>, u64)> = None;
    spans
        .iter()
        .map(|&(start, want)| {
            let reopen = match &cursor {
                None => true,
                Some((_, at)) => {
                    *at > start
                        || (compression == Compression::None
                            && start - at > REOPEN_GAP)
                }
            };
            if reopen {
                cursor = Some((
                    open_stream_at(fs, path, compression, start)?,
                    start,
                ));
            }
            let (src, at) = cursor.as_mut().expect("opened above");
            skip_exactly(src, start - *at)
                .map_err(|e| ended_before(e, path, *at))?;
            let mut buf = Vec::new();
            let got = src
                .take(want as u64)
                .read_to_end(&mut buf)
                .map_err(|e| Error::io(e).with_offset(start))
                .map_err(|e| e.with_file(path))?;
            *at = start + got as u64;
            Ok(Bytes::from(buf))
        })
        .collect()
}

/// The error of a stream that ended at `at`, before a range it was to
/// be read at.
fn ended_before(e: Error, path: &str, at: u64) -> Error {
    Error::data_loss(format!(
        "the file ended before an indexed record ({}; stale index?)",
        e.message()
    ))
    .with_offset(at)
    .with_file(path)
}

/// A forward reader of the (decompressed) stream of `path` from
/// `offset`.
fn open_stream_at(
    fs: &dyn FileSystem,
    path: &str,
    compression: Compression,
    offset: u64,
) -> Result<Box<dyn BufRead + Send>> {
    if compression == Compression::None {
        let raw = fs.open_at(path, offset)?;
        return Ok(Box::new(BufReader::with_capacity(64 * 1024, raw)));
    }
    let raw = fs.open(path)?;
    let mut src: Box<dyn BufRead + Send> = Box::new(BufReader::with_capacity(
        64 * 1024,
        Decompressor::new(compression, raw),
    ));
    skip_exactly(&mut src, offset).map_err(|e| ended_before(e, path, 0))?;
    Ok(src)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::fs::LocalFs;
    use crate::io::tfrecord::WriterBuilder;
    use crate::Kind;

    fn write(path: &str, c: Compression, n: usize) -> Vec<Vec<u8>> {
        let records: Vec<Vec<u8>> = (0..n)
            .map(|i| format!("rec-{i}-{}", "x".repeat(i % 50)).into_bytes())
            .collect();
        let mut w = WriterBuilder::new()
            .compression(c)
            .from_writer(std::fs::File::create(path).unwrap());
        for r in &records {
            w.write_record(r).unwrap();
        }
        w.finish().unwrap();
        records
    }

    #[test]
    fn random_access_reads_every_record_in_any_order() {
        let dir = tempfile::tempdir().unwrap();
        for (name, c) in [
            ("a.tfrecord", Compression::None),
            ("a.tfrecord.gz", Compression::Gzip),
            ("a.tfrecord.zz", Compression::Zlib),
        ] {
            let p = dir.path().join(name);
            let p = p.to_str().unwrap();
            let records = write(p, c, 300);
            let index = RecordIndex::build(&LocalFs, p, None).unwrap();
            assert_eq!(index.len(), 300);
            assert_eq!(index.compression(), c);
            let ask: Vec<u64> = vec![299, 0, 17, 17, 150, 1, 298];
            let got = index.read_many(&LocalFs, &ask).unwrap();
            for (i, r) in ask.iter().zip(&got) {
                assert_eq!(r.value, records[*i as usize], "{name} {i}");
                assert_eq!(r.position.index, *i);
            }
            let e = index.read(&LocalFs, 300).unwrap_err();
            assert_eq!(e.kind(), Kind::InvalidArgument);
        }
    }

    #[test]
    fn sidecar_round_trips_and_refuses_damage() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("b.tfrecord");
        let p = p.to_str().unwrap();
        write(p, Compression::None, 1000);
        let index = RecordIndex::build(&LocalFs, p, None).unwrap();
        let bytes = index.to_bytes();
        // Two bytes or less per record of under 128 bytes, plus a header.
        assert!(bytes.len() < 1000 + 64, "{}", bytes.len());
        assert_eq!(RecordIndex::from_bytes(p, &bytes).unwrap(), index);
        let mut bad = bytes.clone();
        bad[20] ^= 1;
        let e = RecordIndex::from_bytes(p, &bad).unwrap_err();
        assert_eq!(e.kind(), Kind::InvalidArgument);
        assert!(e.message().contains("checksum"), "{e}");
        let e = RecordIndex::from_bytes(p, b"garbage!garbage!").unwrap_err();
        assert_eq!(e.kind(), Kind::InvalidArgument);
    }

    /// Counts the reads of a local handle, with a chosen merge gap.
    #[derive(Debug)]
    struct Counted {
        inner: std::sync::Arc<dyn ReadAt>,
        reads: std::sync::atomic::AtomicUsize,
        gap: u64,
    }

    impl ReadAt for Counted {
        fn read_at(&self, offset: u64, len: usize) -> Result<Bytes> {
            self.reads
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            self.inner.read_at(offset, len)
        }
        fn merge_gap(&self) -> u64 {
            self.gap
        }
    }

    #[test]
    fn positioned_reads_merge_nearby_records_into_one_read() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.tfrecord");
        let p = p.to_str().unwrap();
        let records = write(p, Compression::None, 300);
        let index = RecordIndex::build(&LocalFs, p, None).unwrap();
        let handle = |gap| Counted {
            inner: LocalFs.open_read_at(p).unwrap().unwrap(),
            reads: Default::default(),
            gap,
        };
        let reads =
            |h: &Counted| h.reads.load(std::sync::atomic::Ordering::Relaxed);
        let cases: [(u64, &[u64], usize); 5] = [
            // Adjacent records are one read even with no gap allowed.
            (0, &[7, 5, 6, 6], 1),
            (0, &[0, 150, 299], 3),
            (0, &[299, 0, 1, 2, 298], 2),
            // A gap as large as the file: one read for everything.
            (u64::MAX, &[0, 150, 299, 3], 1),
            // Records 10 and 12 are 2 records apart (< 200 bytes).
            (200, &[12, 10, 100], 2),
        ];
        for (gap, ask, want_reads) in cases {
            let h = handle(gap);
            let got = index.read_many_from(&LocalFs, Some(&h), ask).unwrap();
            assert_eq!(reads(&h), want_reads, "{gap} {ask:?}");
            for (i, r) in ask.iter().zip(&got) {
                assert_eq!(r.value, records[*i as usize], "{ask:?} {i}");
                assert_eq!(r.position.index, *i);
            }
            let forward = index.read_many_from(&LocalFs, None, ask).unwrap();
            assert_eq!(got, forward, "{ask:?}");
        }
        let e = index
            .read_many_from(&LocalFs, Some(&handle(0)), &[3, 300])
            .unwrap_err();
        assert_eq!(e.kind(), Kind::InvalidArgument);
    }

    #[test]
    fn a_positioned_read_past_a_shortened_file_is_data_loss() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.tfrecord");
        let p = p.to_str().unwrap();
        write(p, Compression::None, 100);
        let index = RecordIndex::build(&LocalFs, p, None).unwrap();
        let bytes = std::fs::read(p).unwrap();
        std::fs::write(p, &bytes[..bytes.len() - 5]).unwrap();
        let e = index.read_many(&LocalFs, &[2, 99]).unwrap_err();
        assert_eq!(e.kind(), Kind::DataLoss, "{e}");
        assert_eq!(e.file(), Some(p), "{e}");
        assert_eq!(e.offset(), index.position(99).map(|p| p.offset), "{e}");
        assert!(e.message().contains("stale index"), "{e}");
    }
}
