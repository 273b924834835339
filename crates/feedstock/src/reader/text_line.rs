//! Lines of text files, as TensorFlow's `TextLineReader`.

use bytes::Bytes;

use super::chunks::Chunks;
use super::state::Position;
use super::{not_started, RawRecord, RecordKey, RecordReader};
use crate::error::{Error, Result};
use crate::io::fs::FileSystem;
use crate::io::Compression;

const FORMAT: &str = "text_line";

/// The longest line a [`TextLineReader`] accepts unless configured
/// otherwise: 1 GiB, as for a TFRecord record.
pub const DEFAULT_MAX_LINE_BYTES: u64 = 1 << 30;

/// Reads a text file one line at a time.
///
/// A line ends at `\n`; the `\n` and a `\r` just before it are removed. A
/// last line without a newline is still a line, less one `\r` at its
/// end; a file ending in `\n` (or `\n\r`) has no empty line after it. Keys are `FILE:LINE` with 1-based line
/// numbers that count the skipped header lines, so the first line after
/// one header line is `FILE:2` — as in TensorFlow.
///
/// Lines are zero-copy slices of 64 KiB read buffers.
///
/// ```
/// use feedstock::reader::TextLineReader;
///
/// let reader = TextLineReader::builder().skip_header_lines(1).build();
/// assert_eq!(reader.skip_header_lines(), 1);
/// ```
#[derive(Debug, Default)]
pub struct TextLineReader {
    /// Read an empty file as one with no records instead of failing.
    allow_empty_files: bool,
    /// The longest line accepted; 0 stands for the default.
    max_line_bytes: u64,
    skip_header_lines: u64,
    /// The files' compression.
    compression: Compression,
    file: Option<OpenFile>,
}

/// The file being read.
struct OpenFile {
    chunks: Chunks,
    /// The longest line accepted.
    max_line_bytes: u64,
    /// Lines consumed so far, headers included: the number of the last
    /// line returned.
    line_number: u64,
    /// Where the unscanned part of the buffer starts (a newline search
    /// resumes there after more bytes arrive).
    scanned: usize,
}

impl std::fmt::Debug for OpenFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenFile")
            .field("offset", &self.chunks.offset())
            .field("line_number", &self.line_number)
            .finish()
    }
}

/// Configures a [`TextLineReader`].
#[derive(Debug, Clone, Default)]
pub struct TextLineReaderBuilder {
    /// See [`TextLineReaderBuilder::allow_empty_files`].
    allow_empty_files: bool,
    /// See [`TextLineReaderBuilder::max_line_bytes`].
    max_line_bytes: u64,
    skip_header_lines: u64,
    /// See [`TextLineReaderBuilder::compression`].
    compression: Compression,
}

impl TextLineReaderBuilder {
    /// The compression of the files (default none): lines are read from
    /// the decompressed stream, and offsets count decompressed bytes.
    /// TensorFlow's `TextLineReader` has no such option; its `TextLineDataset`
    /// does.
    pub fn compression(&mut self, compression: Compression) -> &mut Self {
        self.compression = compression;
        self
    }

    /// Skips the first `n` lines of every file (default 0). A file with
    /// fewer lines produces no records.
    pub fn skip_header_lines(&mut self, n: u64) -> &mut Self {
        self.skip_header_lines = n;
        self
    }

    /// Reads an empty (0-byte) file as a file with no records, as
    /// TensorFlow does, whatever the compression (an empty file is not a
    /// gzip or zlib stream), instead of failing with DataLoss naming it
    /// (default false: an empty file is most often a shard whose writer
    /// died).
    pub fn allow_empty_files(&mut self, allow: bool) -> &mut Self {
        self.allow_empty_files = allow;
        self
    }

    /// The longest line accepted, in bytes (default
    /// [`DEFAULT_MAX_LINE_BYTES`]): a file with no newline is not read
    /// into memory whole. A longer line is ResourceExhausted naming the
    /// file and the line's offset.
    pub fn max_line_bytes(&mut self, n: u64) -> &mut Self {
        self.max_line_bytes = n;
        self
    }

    /// Builds the reader.
    pub fn build(&self) -> TextLineReader {
        TextLineReader {
            allow_empty_files: self.allow_empty_files,
            max_line_bytes: self.max_line_bytes,
            skip_header_lines: self.skip_header_lines,
            compression: self.compression,
            file: None,
        }
    }
}

impl TextLineReader {
    /// A reader that skips no header lines.
    pub fn new() -> TextLineReader {
        TextLineReader::default()
    }

    /// A builder for a configured reader.
    pub fn builder() -> TextLineReaderBuilder {
        TextLineReaderBuilder::default()
    }

    /// How many header lines each file starts with.
    pub fn skip_header_lines(&self) -> u64 {
        self.skip_header_lines
    }

    /// The longest line accepted, in bytes.
    pub fn max_line_bytes(&self) -> u64 {
        match self.max_line_bytes {
            0 => DEFAULT_MAX_LINE_BYTES,
            n => n,
        }
    }
}

/// Where the lines of one file lie in its (decompressed) stream, as the
/// reader's own splitter finds them: what
/// [`TextLineSource`](crate::dataset::files::TextLineSource) indexes.
pub(crate) struct LineStarts {
    /// The offset of each line after the header lines, then the end of
    /// the last one (its terminator included): line `k` spans
    /// `starts[k]..starts[k + 1]`.
    pub(crate) starts: Vec<u64>,
    /// The length of the stream.
    pub(crate) stream_len: u64,
}

impl TextLineReader {
    /// Scans `file` once with this reader's settings (header lines, empty
    /// files, the longest line, compression) and notes where its lines
    /// are.
    ///
    /// # Errors
    ///
    /// Those of [`RecordReader::read`] on the same file, naming it (and
    /// the line over the limit, as its key `FILE:LINE`).
    pub(crate) fn line_starts(
        &mut self,
        fs: &dyn FileSystem,
        file: &str,
    ) -> Result<LineStarts> {
        self.on_work_started(file, fs)
            .map_err(|e| e.with_file(file))?;
        let open = self.file.as_mut().ok_or_else(not_started)?;
        let mut starts = vec![open.chunks.offset()];
        loop {
            let at = open.chunks.offset();
            let line = open.next_line().map_err(|e| {
                e.with_offset(at)
                    .with_key(format!("{file}:{}", open.line_number + 1))
                    .with_file(file)
            })?;
            if line.is_none() {
                break;
            }
            starts.push(open.chunks.offset());
        }
        let stream_len = open.chunks.offset();
        self.file = None;
        Ok(LineStarts { starts, stream_len })
    }
}

/// A line's bytes from its span in the stream (as [`LineStarts`] gives
/// it): less a `\n` at its end, then less one `\r` — the reader's cut,
/// for a line ended by a newline and for a last line without one alike.
pub(crate) fn strip_terminator(mut span: Bytes) -> Bytes {
    if span.ends_with(b"\n") {
        span.truncate(span.len() - 1);
    }
    if span.ends_with(b"\r") {
        span.truncate(span.len() - 1);
    }
    span
}

impl OpenFile {
    /// The next line, without its terminator, or `None` at the end.
    fn next_line(&mut self) -> Result<Option<Bytes>> {
        loop {
            let buf = self.chunks.buffered();
            if let Some(i) = memchr::memchr(b'\n', &buf[self.scanned..]) {
                let end = self.scanned + i;
                let cut = if end > 0 && buf[end - 1] == b'\r' {
                    end - 1
                } else {
                    end
                };
                let mut line = self.chunks.take(end + 1);
                line.truncate(cut);
                self.scanned = 0;
                self.line_number += 1;
                return Ok(Some(line));
            }
            self.scanned = buf.len();
            if self.scanned as u64 > self.max_line_bytes {
                return Err(Error::resource_exhausted(format!(
                    "line {} is longer than {} bytes (see \
                     TextLineReaderBuilder::max_line_bytes)",
                    self.line_number + 1,
                    self.max_line_bytes
                ))
                .with_offset(self.chunks.offset()));
            }
            if !self.chunks.fill_more()? {
                let rest = self.chunks.buffered().len();
                self.scanned = 0;
                if rest == 0 {
                    return Ok(None);
                }
                // The last line has no newline. TensorFlow 2.21 removes
                // one '\r' at its end too ("last\r" gives "last"), and a
                // last line that is then empty is no line at all (a file
                // "x\n\r" has one line), so this does the same.
                let mut line = self.chunks.take(rest);
                if line.ends_with(b"\r") {
                    line.truncate(rest - 1);
                    if line.is_empty() {
                        return Ok(None);
                    }
                }
                self.line_number += 1;
                return Ok(Some(line));
            }
        }
    }
}

impl RecordReader for TextLineReader {
    fn on_work_started(
        &mut self,
        file: &str,
        fs: &dyn FileSystem,
    ) -> Result<()> {
        let chunks =
            if super::check_not_empty(fs, file, self.allow_empty_files)? {
                // Allowed and empty: no lines, whatever the compression
                // (an empty file is not a gzip or zlib stream).
                Chunks::new(Box::new(std::io::empty()), 0)
            } else {
                let input = self.compression.reader(fs.open(file)?);
                Chunks::maybe_ahead(input, 0, fs.reads_ahead(file))
            };
        let mut open = OpenFile {
            chunks,
            max_line_bytes: self.max_line_bytes(),
            line_number: 0,
            scanned: 0,
        };
        while open.line_number < self.skip_header_lines {
            if open.next_line()?.is_none() {
                break;
            }
        }
        self.file = Some(open);
        Ok(())
    }

    fn read(&mut self) -> Result<Option<RawRecord>> {
        let file = self.file.as_mut().ok_or_else(not_started)?;
        let offset = file.chunks.offset();
        let line = file.next_line().map_err(|e| e.with_offset(offset))?;
        Ok(
            line.map(|l| {
                RawRecord::new(RecordKey::Index(file.line_number), l)
            }),
        )
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
        Ok(Position::encode(
            FORMAT,
            file.chunks.offset(),
            file.line_number,
        ))
    }

    fn restore_state(
        &mut self,
        file: &str,
        fs: &dyn FileSystem,
        state: &[u8],
    ) -> Result<()> {
        let pos = Position::decode(FORMAT, state)?;
        let ahead = fs.reads_ahead(file);
        let chunks = if self.compression == Compression::None {
            pos.check_offset(fs, file)?;
            Chunks::maybe_ahead(
                fs.open_at(file, pos.offset)?,
                pos.offset,
                ahead,
            )
        } else {
            // A compressed stream cannot seek: decompress up to the offset.
            let input = self.compression.reader(fs.open(file)?);
            let mut chunks = Chunks::maybe_ahead(input, 0, ahead);
            let skipped = chunks.skip(pos.offset)?;
            if skipped < pos.offset {
                return Err(Error::data_loss(format!(
                    "decompressed stream is {skipped} bytes, cannot resume \
                     at byte {}",
                    pos.offset
                ))
                .with_file(file)
                .with_offset(skipped));
            }
            chunks
        };
        self.file = Some(OpenFile {
            chunks,
            max_line_bytes: self.max_line_bytes(),
            line_number: pos.index,
            scanned: 0,
        });
        Ok(())
    }
}
