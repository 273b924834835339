//! Fixed-length records, as TensorFlow's `FixedLengthRecordReader`.

use std::io::Read;

use bytes::Bytes;

use super::chunks::Chunks;
use super::state::Position;
use super::{not_started, RawRecord, RecordKey, RecordReader};
use crate::error::{Error, Result};
use crate::io::fs::{FileSystem, STDIO};
use crate::io::Compression;

const FORMAT: &str = "fixed_length";

/// Reads records of a fixed number of bytes, such as CIFAR-10's binary
/// files.
///
/// A file is `header_bytes` of header, then the records, then
/// `footer_bytes` of footer. Record `i` starts `i * hop_bytes` bytes after
/// the header (`hop_bytes` = `record_bytes` unless set, so records follow
/// each other; a smaller hop makes overlapping windows, a larger one
/// leaves gaps). Keys are `FILE:I` with the 0-based record index.
///
/// Stricter than TensorFlow: a file shorter than its header and footer,
/// or whose last record is cut short, is a [`Kind::DataLoss`] error naming
/// the file and the offset of the cut record. TensorFlow silently drops
/// the partial record (and, for a file shorter than its header, ends the
/// whole input as if every later file were empty).
///
/// [`Kind::DataLoss`]: crate::Kind::DataLoss
///
/// ```
/// use feedstock::reader::FixedLengthRecordReader;
///
/// // CIFAR-10: one label byte and a 32x32x3 image per record.
/// let reader = FixedLengthRecordReader::builder(1 + 32 * 32 * 3).build()?;
/// assert_eq!(reader.record_bytes(), 3073);
/// assert!(FixedLengthRecordReader::builder(0).build().is_err());
/// # Ok::<(), feedstock::Error>(())
/// ```
#[derive(Debug)]
pub struct FixedLengthRecordReader {
    layout: Layout,
    compression: Compression,
    file: Option<OpenFile>,
}

/// Where the records are in a file.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Layout {
    pub(crate) header_bytes: u64,
    pub(crate) record_bytes: u64,
    pub(crate) footer_bytes: u64,
    /// Never 0 once built.
    pub(crate) hop_bytes: u64,
}

impl Layout {
    /// Stream offset of record `i`.
    /// Saturates at `u64::MAX`, an offset no file reaches, for layouts
    /// whose records lie beyond any possible stream.
    pub(crate) fn start(&self, i: u64) -> u64 {
        self.header_bytes
            .saturating_add(i.saturating_mul(self.hop_bytes))
    }

    /// Checks that a stream of `end` bytes, of which records `0..n` were
    /// read, ends where the layout says: the reader's check at the end of
    /// a file, and the error for a file too short for its header and
    /// footer or with a partial last record.
    fn check_end(&self, end: u64, n: u64) -> Result<()> {
        let start = self.start(n);
        let min = self.header_bytes.saturating_add(self.footer_bytes);
        if end < min {
            return Err(Error::data_loss(format!(
                "file is {end} bytes, shorter than its {} header and {} \
                 footer bytes",
                self.header_bytes, self.footer_bytes
            ))
            .with_offset(end));
        }
        let body_end = end - self.footer_bytes;
        // Bytes no record covers: past the end of the last record, and
        // (when records leave gaps) past the start of the next one.
        let covered = match n {
            0 => self.header_bytes,
            n => self.start(n - 1).saturating_add(self.record_bytes),
        };
        // (`start` never lies past `covered` unless records leave gaps,
        // so the bytes past both are those of the unfinished record.)
        if body_end > covered.max(start) {
            return Err(Error::data_loss(format!(
                "truncated record {n}: it starts at offset {start} but only \
                 {} of its {} bytes come before the footer (file size \
                 {end}, header {}, footer {}, hop {})",
                body_end - start,
                self.record_bytes,
                self.header_bytes,
                self.footer_bytes,
                self.hop_bytes,
            ))
            .with_offset(start));
        }
        Ok(())
    }

    /// The error for a stream of `len` bytes shorter than the header.
    fn short_header(&self, len: u64) -> Error {
        Error::data_loss(format!(
            "file is {len} bytes, shorter than its {}-byte header",
            self.header_bytes
        ))
        .with_offset(len)
    }

    /// The number of records of a stream of `len` bytes, as the reader
    /// reads them, or the reader's error for that stream (a file too
    /// short for its header and footer, a partial last record).
    pub(crate) fn count(&self, len: u64) -> Result<u64> {
        if len < self.header_bytes {
            return Err(self.short_header(len));
        }
        let first = self
            .header_bytes
            .saturating_add(self.record_bytes)
            .saturating_add(self.footer_bytes);
        let n = match len.checked_sub(first) {
            Some(rest) => rest / self.hop_bytes + 1,
            None => 0,
        };
        self.check_end(len, n)?;
        Ok(n)
    }
}

/// The file being read.
struct OpenFile {
    chunks: Chunks,
    /// The index of the next record.
    record_number: u64,
}

impl std::fmt::Debug for OpenFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenFile")
            .field("offset", &self.chunks.offset())
            .field("record_number", &self.record_number)
            .finish()
    }
}

/// Configures a [`FixedLengthRecordReader`].
#[derive(Debug, Clone)]
pub struct FixedLengthRecordReaderBuilder {
    layout: Layout,
    compression: Compression,
}

impl FixedLengthRecordReaderBuilder {
    /// Bytes to skip at the start of every file (default 0).
    pub fn header_bytes(&mut self, n: u64) -> &mut Self {
        self.layout.header_bytes = n;
        self
    }

    /// Bytes to ignore at the end of every file (default 0).
    pub fn footer_bytes(&mut self, n: u64) -> &mut Self {
        self.layout.footer_bytes = n;
        self
    }

    /// Distance from the start of one record to the start of the next;
    /// 0 (the default) means `record_bytes`.
    pub fn hop_bytes(&mut self, n: u64) -> &mut Self {
        self.layout.hop_bytes = n;
        self
    }

    /// How every file is compressed (default none). Offsets, the header
    /// and the footer are then counted in the decompressed stream, as in
    /// TensorFlow's `encoding` attribute.
    pub fn compression(&mut self, compression: Compression) -> &mut Self {
        self.compression = compression;
        self
    }

    /// Builds the reader.
    ///
    /// # Errors
    ///
    /// [`Kind::InvalidArgument`](crate::Kind::InvalidArgument) if
    /// `record_bytes` is 0, or if a record size does not fit in memory.
    pub fn build(&self) -> Result<FixedLengthRecordReader> {
        let mut layout = self.layout;
        if layout.record_bytes == 0 {
            return Err(Error::invalid_argument("record_bytes must be > 0"));
        }
        if layout.hop_bytes == 0 {
            layout.hop_bytes = layout.record_bytes;
        }
        let need = layout.record_bytes.checked_add(layout.footer_bytes);
        if need.and_then(|n| usize::try_from(n).ok()).is_none() {
            return Err(Error::invalid_argument(
                "record_bytes + footer_bytes does not fit in memory",
            ));
        }
        Ok(FixedLengthRecordReader {
            layout,
            compression: self.compression,
            file: None,
        })
    }
}

impl FixedLengthRecordReader {
    /// A builder for records of `record_bytes` bytes.
    pub fn builder(record_bytes: u64) -> FixedLengthRecordReaderBuilder {
        FixedLengthRecordReaderBuilder {
            layout: Layout {
                header_bytes: 0,
                record_bytes,
                footer_bytes: 0,
                hop_bytes: 0,
            },
            compression: Compression::None,
        }
    }

    /// The size of a record.
    pub fn record_bytes(&self) -> u64 {
        self.layout.record_bytes
    }

    /// The header size.
    pub fn header_bytes(&self) -> u64 {
        self.layout.header_bytes
    }

    /// The footer size.
    pub fn footer_bytes(&self) -> u64 {
        self.layout.footer_bytes
    }

    /// The distance between record starts.
    pub fn hop_bytes(&self) -> u64 {
        self.layout.hop_bytes
    }

    /// The compression of the files read.
    pub fn compression(&self) -> Compression {
        self.compression
    }

    /// Where this reader finds the records of a file: what
    /// [`FixedLengthSource`](crate::dataset::files::FixedLengthSource)
    /// cuts files by.
    pub(crate) fn layout(&self) -> Layout {
        self.layout
    }

    /// Opens `file` positioned at `offset` of its (decompressed) stream.
    fn open(
        &self,
        file: &str,
        fs: &dyn FileSystem,
        offset: u64,
    ) -> Result<Chunks> {
        // As TensorFlow's reader, size the file first and read no further
        // than that size, so a file that grows meanwhile is read as it was.
        // A device or pipe has no size: one such as /dev/zero would never
        // end. Standard input is read to its end, as the user asked.
        let size = if file == STDIO {
            None
        } else if fs.is_stream(file)? {
            return Err(Error::failed_precondition(
                "is not a regular file: a fixed-length reader reads a file \
                 up to its size, and a device or pipe has none (read a \
                 stream from standard input, `-`)",
            )
            .with_file(file));
        } else {
            Some(fs.size(file)?)
        };
        let open = |at: u64| -> Result<Box<dyn Read + Send>> {
            let input = if at == 0 {
                fs.open(file)?
            } else {
                fs.open_at(file, at)?
            };
            Ok(match size {
                Some(size) => Box::new(input.take(size.saturating_sub(at))),
                None => input,
            })
        };
        let ahead = fs.reads_ahead(file);
        if self.compression == Compression::None {
            return Ok(Chunks::maybe_ahead(open(offset)?, offset, ahead));
        }
        if size == Some(0) && offset == 0 {
            // A 0-byte file is not a gzip or zlib stream, but it holds no
            // records in every compression, as an uncompressed one does
            // here and as in TensorFlow (whose reader reads it as empty).
            return Ok(Chunks::new(Box::new(std::io::empty()), 0));
        }
        // A compressed stream cannot seek: decompress up to the offset.
        let input: Box<dyn Read + Send> = self.compression.reader(open(0)?);
        let mut chunks = Chunks::maybe_ahead(input, 0, ahead);
        let skipped = chunks.skip(offset).map_err(|e| e.with_offset(0))?;
        if skipped < offset {
            return Err(Error::data_loss(format!(
                "decompressed stream is {skipped} bytes, cannot resume at \
                 byte {offset}"
            ))
            .with_offset(skipped));
        }
        Ok(chunks)
    }
}

impl RecordReader for FixedLengthRecordReader {
    fn on_work_started(
        &mut self,
        file: &str,
        fs: &dyn FileSystem,
    ) -> Result<()> {
        let mut chunks = self.open(file, fs, 0)?;
        let header = self.layout.header_bytes;
        let skipped = chunks.skip(header).map_err(|e| e.with_offset(0))?;
        if skipped < header {
            return Err(self.layout.short_header(skipped));
        }
        self.file = Some(OpenFile {
            chunks,
            record_number: 0,
        });
        Ok(())
    }

    fn read(&mut self) -> Result<Option<RawRecord>> {
        let layout = self.layout;
        let file = self.file.as_mut().ok_or_else(not_started)?;
        let start = layout.start(file.record_number);
        let gap = start - file.chunks.offset();
        let at = file.chunks.offset();
        file.chunks.skip(gap).map_err(|e| e.with_offset(at))?;
        let record = layout.record_bytes as usize;
        let need = record + layout.footer_bytes as usize;
        if file.chunks.offset() == start {
            file.chunks.fill(need).map_err(|e| e.with_offset(start))?;
            if file.chunks.buffered().len() >= need {
                let value = if layout.hop_bytes < layout.record_bytes {
                    // Overlapping records: the next one needs these bytes
                    // too, so copy instead of splitting them off.
                    Bytes::copy_from_slice(&file.chunks.buffered()[..record])
                } else {
                    file.chunks.take(record)
                };
                let index = file.record_number;
                file.record_number += 1;
                return Ok(Some(RawRecord::new(
                    RecordKey::Index(index),
                    value,
                )));
            }
        }
        // The stream has ended: check it ends where the layout says.
        let end = file.chunks.offset() + file.chunks.buffered().len() as u64;
        layout.check_end(end, file.record_number)?;
        Ok(None)
    }

    fn on_work_finished(&mut self) -> Result<()> {
        self.file = None;
        Ok(())
    }

    fn reset(&mut self) -> Result<()> {
        self.file = None;
        Ok(())
    }

    fn serialize_state(&self) -> Result<Vec<u8>> {
        let file = self.file.as_ref().ok_or_else(not_started)?;
        // The offset reached, which is at or before the next record's
        // start (a gap after the last record may run past the file end).
        Ok(Position::encode(
            FORMAT,
            file.chunks.offset(),
            file.record_number,
        ))
    }

    fn restore_state(
        &mut self,
        file: &str,
        fs: &dyn FileSystem,
        state: &[u8],
    ) -> Result<()> {
        let pos = Position::decode(FORMAT, state)?;
        if pos.offset > self.layout.start(pos.index)
            || pos.offset < self.layout.header_bytes
        {
            return Err(Error::invalid_argument(format!(
                "saved position (record {} at offset {}) does not fit this \
                 reader's layout",
                pos.index, pos.offset
            )));
        }
        let chunks = self.open(file, fs, pos.offset)?;
        self.file = Some(OpenFile {
            chunks,
            record_number: pos.index,
        });
        Ok(())
    }
}
