//! TensorFlow's record format (TFRecord), byte for byte.
//!
//! A TFRecord file is a sequence of records, each framed as
//!
//! ```text
//! u64 LE   length
//! u32 LE   masked CRC32C of the 8 length bytes
//! [u8]     data (length bytes)
//! u32 LE   masked CRC32C of the data
//! ```
//!
//! where the mask is `((crc >> 15) | (crc << 17)) + 0xa282ead8` (see
//! [`mask`]). The whole file may be gzip or zlib compressed, in which case
//! the framing applies to the decompressed stream.
//!
//! # Brief overview
//!
//! - [`Decoder`]: the push state machine. Feed it bytes in chunks of any
//!   size; it says [`Decoded::NeedMore`], [`Decoded::Record`] or
//!   [`Decoded::End`]. Every reader here drives it.
//! - [`Reader`]: records from any [`std::io::Read`], optionally
//!   decompressing, built by a [`ReaderBuilder`] (which also opens files
//!   and resumes at a saved [`Position`]).
//! - [`BytesReader`]: the fast path over a buffer already in memory; each
//!   record's data is a [`Bytes::slice`] of the buffer, never a copy.
//! - [`Writer`]: writes records, optionally compressed.
//! - [`CorruptRecords`]: what a reader does with a damaged record: fail
//!   (the default) or skip it within a [`SkipBudget`], resynchronising at
//!   the next intact frame and counting every skip in a [`SkipLog`].
//!
//! ```
//! use feedstock::io::tfrecord::{BytesReader, Writer};
//!
//! let mut w = Writer::new(Vec::new());
//! w.write_record(b"first")?;
//! w.write_record(b"second")?;
//! let file = w.finish()?;
//!
//! let records: Vec<_> = BytesReader::new(file.into())
//!     .collect::<Result<_, _>>()?;
//! assert_eq!(&records[1].value[..], b"second");
//! assert_eq!(records[1].position.index, 1);
//! assert_eq!(records[1].position.offset, 12 + 5 + 4);
//! # Ok::<(), feedstock::Error>(())
//! ```
//!
//! # Strictness
//!
//! Both CRCs of every record are checked, and every way a file can be
//! damaged is an error of kind [`DataLoss`](crate::Kind::DataLoss) that
//! names the file and the offset of the damaged record: a CRC mismatch, a
//! file cut inside a record's header, data or footer, stray bytes after the
//! last record, a compressed stream cut short or with a bad trailer.
//! TensorFlow reports a file cut inside a header, and a truncated
//! compressed stream, as a clean end of file; feedstock does not, because
//! that silently loses records. A length field larger than the configured
//! limit (1 GiB by default) is
//! [`ResourceExhausted`](crate::Kind::ResourceExhausted), and no reader
//! ever allocates more memory for a record than the bytes it has actually
//! received, so a corrupt length cannot exhaust memory.
//!
//! # Corrupt records
//!
//! Strictness is the default, not the only choice: with
//! [`CorruptRecords::Skip`] a reader skips each damaged region and goes
//! on at the next intact frame, which it finds by scanning for a header
//! whose length CRC checks and whose data CRC then checks too, followed
//! by another frame that checks or by the end of the stream (see
//! [`Decoder::resync`]; with a record index,
//! [`ReaderBuilder::record_starts`], only where a record starts), so one
//! flipped bit costs one record, not the rest of the file. Each skip is counted with its offset and length in a
//! [`SkipLog`], and a [`SkipBudget`] bounds how many may be skipped per
//! file, per run, or as a fraction of a file's records; past it, the
//! reader fails with an error that says so and lists the offsets.
//!
//! In a compressed file, damage to the compressed bytes usually breaks
//! decompression for the rest of the file: nothing after it can be read.
//! TensorFlow fails there; a skipping reader counts it as one region
//! running to the end of the file ([`Skip::unreadable_rest`]), whose
//! length is the bytes decompressed before the break, and ends the file.
//! Damage done before compression resynchronises as in a plain file.
//! Caveat: damaged compressed bytes can make inflate repeat earlier
//! output, which may contain whole valid frames; no streaming reader
//! (strict or skipping, TensorFlow's included) can tell such a copy from
//! a record before the stream's trailer check fails, so records read
//! from a compressed file that ends in a broken stream may repeat
//! earlier ones. They are never altered: every CRC is still checked.

mod bytes_reader;
mod decoder;
mod reader;
mod shared_buf;
mod skip;
mod writer;

pub use bytes_reader::BytesReader;
pub use decoder::{Decoded, Decoder, Frame, Payload, Skip};
pub use reader::{Reader, ReaderBuilder};
pub(crate) use skip::Policy;
pub use skip::{
    CorruptRecords, FileSkips, SkipBudget, SkipLog, SkipStats, SkippedRegion,
    DEFAULT_MAX_LISTED_REGIONS,
};
pub use writer::{Writer, WriterBuilder};

use bytes::Bytes;

/// Bytes before a record's data: the length and its masked CRC.
pub const HEADER_LEN: usize = 12;

/// Bytes after a record's data: its masked CRC.
pub const FOOTER_LEN: usize = 4;

/// The default limit on a record's length: 1 GiB.
pub const DEFAULT_MAX_RECORD_LEN: u64 = 1 << 30;

/// The default limit on what [`ReaderBuilder::from_bytes`] decompresses a
/// buffer into: 1 GiB, as for `decode_compressed`.
pub const DEFAULT_MAX_DECOMPRESSED_LEN: u64 = 1 << 30;

const MASK_DELTA: u32 = 0xa282_ead8;

/// Masks a CRC the way TFRecord (and LevelDB before it) stores it.
///
/// Storing the CRC of data that itself contains CRCs is error-prone, so
/// the stored value is rotated right by 15 bits and offset by a constant.
///
/// ```
/// use feedstock::io::tfrecord::{mask, unmask};
///
/// assert_eq!(mask(0), 0xa282_ead8);
/// assert_eq!(unmask(mask(0x1234_5678)), 0x1234_5678);
/// ```
pub fn mask(crc: u32) -> u32 {
    crc.rotate_right(15).wrapping_add(MASK_DELTA)
}

/// Inverts [`mask`].
pub fn unmask(masked: u32) -> u32 {
    masked.wrapping_sub(MASK_DELTA).rotate_left(15)
}

/// The masked CRC32C of `data`, as stored in a TFRecord file.
pub fn masked_crc32c(data: &[u8]) -> u32 {
    mask(crc_fast::crc32_iscsi(data))
}

/// Where a record sits in its stream.
///
/// A reader can be resumed at a saved position with
/// [`ReaderBuilder::from_reader_at`] or [`ReaderBuilder::open_at`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Position {
    /// The byte offset of the record's header in the (decompressed)
    /// stream.
    pub offset: u64,
    /// The record's 0-based index in the stream.
    pub index: u64,
}

/// One record: its bytes and where it was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// The record's bytes (those between header and footer).
    pub value: Bytes,
    /// Where it sits in its (decompressed) stream.
    pub position: Position,
}

impl Record {
    /// A record of `value` at byte offset `offset`, record number `index`.
    pub fn new(value: Bytes, offset: u64, index: u64) -> Record {
        Record {
            value,
            position: Position { offset, index },
        }
    }

    /// The position just after this record, where the next one starts.
    pub fn next_position(&self) -> Position {
        Position {
            offset: self.position.offset + framed_len(self.value.len() as u64),
            index: self.position.index + 1,
        }
    }
}

/// The length on disk of a record whose data is `len` bytes.
///
/// Saturates at `u64::MAX` for a length (read from a corrupt header) that
/// no framing could hold.
pub fn framed_len(len: u64) -> u64 {
    len.saturating_add((HEADER_LEN + FOOTER_LEN) as u64)
}

/// Frames `data` into `out`: header, data, footer.
pub fn encode_record(data: &[u8], out: &mut Vec<u8>) {
    let len = (data.len() as u64).to_le_bytes();
    out.reserve(HEADER_LEN + data.len() + FOOTER_LEN);
    out.extend_from_slice(&len);
    out.extend_from_slice(&masked_crc32c(&len).to_le_bytes());
    out.extend_from_slice(data);
    out.extend_from_slice(&masked_crc32c(data).to_le_bytes());
}

/// Makes a reader's error sticky: a failed `read` gets the file name
/// (when known) and is kept in `failed`, which the reader returns again on
/// every later call, so that no record after a damaged one is handed out.
fn remember_failure(
    failed: &mut Option<crate::Error>,
    file: Option<&str>,
    read: crate::Result<Option<Record>>,
) -> crate::Result<Option<Record>> {
    read.map_err(|e| {
        let e = match file {
            Some(f) => e.with_file(f),
            None => e,
        };
        *failed = Some(e.clone());
        e
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    // The formula is spelled out as TensorFlow's docs give it, on purpose.
    #[allow(clippy::manual_rotate)]
    fn mask_matches_the_reference_formula() {
        for crc in [0u32, 1, 0xdead_beef, u32::MAX, 0x8000_0000] {
            let expect = ((crc >> 15) | (crc << 17)).wrapping_add(MASK_DELTA);
            assert_eq!(mask(crc), expect);
            assert_eq!(unmask(mask(crc)), crc);
        }
    }

    #[test]
    fn encode_record_frames_an_empty_record_in_sixteen_bytes() {
        let mut out = Vec::new();
        encode_record(b"", &mut out);
        assert_eq!(out.len(), 16);
        assert_eq!(&out[..8], &[0; 8]);
        assert_eq!(out[8..12], masked_crc32c(&[0; 8]).to_le_bytes());
        assert_eq!(out[12..], masked_crc32c(b"").to_le_bytes());
    }
}
