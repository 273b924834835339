//! Writing records to an [`io::Write`], compressing if asked.

use std::fmt;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::sync::Arc;

use flate2::write::{GzEncoder, ZlibEncoder};

use super::{framed_len, masked_crc32c, Position};
use crate::error::{Error, Result};
use crate::io::compression::Compression;
use crate::io::fs::{OutputFile, OutputOptions};

/// Configures and builds TFRecord writers.
///
/// ```
/// use feedstock::io::tfrecord::{ReaderBuilder, WriterBuilder};
/// use feedstock::io::Compression;
///
/// let mut w = WriterBuilder::new()
///     .compression(Compression::Zlib)
///     .from_writer(Vec::new());
/// w.write_record(b"squeezed")?;
/// let file = w.finish()?;
///
/// let mut r = ReaderBuilder::new()
///     .compression(Compression::Zlib)
///     .from_reader(&file[..]);
/// assert_eq!(&r.read_record()?.unwrap().value[..], b"squeezed");
/// # Ok::<(), feedstock::Error>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct WriterBuilder {
    /// The compression; `None` means "none" for
    /// [`from_writer`](Self::from_writer) and "detect from the extension"
    /// for [`create`](Self::create).
    compression: Option<Compression>,
    /// The deflate level, 0..=9; `None` is zlib's default (6), which is
    /// what TensorFlow uses.
    level: Option<u32>,
}

impl WriterBuilder {
    /// A builder with the defaults: no compression (or detected from the
    /// file name by [`create`](Self::create)), zlib's default level.
    pub fn new() -> WriterBuilder {
        WriterBuilder::default()
    }

    /// Sets the compression.
    pub fn compression(&mut self, c: Compression) -> &mut WriterBuilder {
        self.compression = Some(c);
        self
    }

    /// Sets the deflate level, clamped to 0 (store) ..= 9 (smallest).
    pub fn level(&mut self, level: u32) -> &mut WriterBuilder {
        self.level = Some(level.min(9));
        self
    }

    /// A writer of records to `w`.
    pub fn from_writer<W: Write>(&self, w: W) -> Writer<W> {
        self.build(w, self.compression.unwrap_or_default(), None)
    }

    /// Creates (or truncates) the file at `path`, buffered. Unless a
    /// compression was set, it is detected from the extension
    /// ([`Compression::from_path`]).
    ///
    /// The file is written in place: a run that fails part-way leaves it
    /// partial. Use [`create_output`](Self::create_output) to write
    /// atomically and refuse to replace an existing file.
    ///
    /// # Errors
    ///
    /// Those of creating the file, classified by [`Error::io`] and naming
    /// the file.
    pub fn create(
        &self,
        path: impl AsRef<Path>,
    ) -> Result<Writer<BufWriter<File>>> {
        let path = path.as_ref();
        let name: Arc<str> = path.to_string_lossy().into();
        let file =
            File::create(path).map_err(|e| Error::io(e).with_file(&name))?;
        let c = self
            .compression
            .unwrap_or_else(|| Compression::from_path(path));
        let w = BufWriter::with_capacity(256 * 1024, file);
        Ok(self.build(w, c, Some(name)))
    }

    /// Creates an atomic output at `path` (`-` is standard output), as
    /// [`OutputOptions::create`] does: the records go to a temporary file
    /// that [`Writer::commit`] renames into place, and dropping the writer
    /// instead leaves the old state. Unless a compression was set, it is
    /// detected from the extension.
    ///
    /// ```
    /// use feedstock::io::fs::OutputOptions;
    /// use feedstock::io::tfrecord::{ReaderBuilder, WriterBuilder};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("data.tfrecord");
    /// let path = path.to_str().unwrap();
    /// let mut w = WriterBuilder::new()
    ///     .create_output(path, &OutputOptions::new())?;
    /// w.write_record(b"one")?;
    /// w.commit()?;
    /// let mut r = ReaderBuilder::new().open(path)?;
    /// assert_eq!(&r.read_record()?.unwrap().value[..], b"one");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// Those of [`OutputOptions::create`].
    pub fn create_output(
        &self,
        path: &str,
        options: &OutputOptions,
    ) -> Result<Writer<BufWriter<OutputFile>>> {
        let out = options.create(path)?;
        let c = self
            .compression
            .unwrap_or_else(|| Compression::from_path(path));
        let w = BufWriter::with_capacity(256 * 1024, out);
        Ok(self.build(w, c, Some(path.into())))
    }

    fn build<W: Write>(
        &self,
        w: W,
        c: Compression,
        file: Option<Arc<str>>,
    ) -> Writer<W> {
        let level = flate2::Compression::new(self.level.unwrap_or(6));
        let sink = match c {
            Compression::None => Sink::Plain(w),
            Compression::Gzip => Sink::Gzip(GzEncoder::new(w, level)),
            Compression::Zlib => Sink::Zlib(ZlibEncoder::new(w, level)),
        };
        Writer {
            sink,
            pos: Position::default(),
            file,
        }
    }
}

/// Writes TFRecord records to an [`io::Write`].
///
/// Each record is written as three `write_all` calls (header, data,
/// footer), so an unbuffered `W` should be wrapped in a
/// [`BufWriter`]; [`WriterBuilder::create`] does that. Call
/// [`finish`](Writer::finish): it writes the compressed stream's trailer
/// and reports errors that dropping the writer would swallow.
///
/// For the same records and no compression, the bytes are those
/// TensorFlow's `TFRecordWriter` writes.
pub struct Writer<W: Write> {
    /// Where the bytes go, through the compressor if any.
    sink: Sink<W>,
    /// Where the next record starts (in the uncompressed stream).
    pos: Position,
    /// The file name errors carry.
    file: Option<Arc<str>>,
}

enum Sink<W: Write> {
    Plain(W),
    Gzip(GzEncoder<W>),
    Zlib(ZlibEncoder<W>),
}

impl<W: Write> fmt::Debug for Writer<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = match self.sink {
            Sink::Plain(_) => Compression::None,
            Sink::Gzip(_) => Compression::Gzip,
            Sink::Zlib(_) => Compression::Zlib,
        };
        f.debug_struct("Writer")
            .field("compression", &c)
            .field("pos", &self.pos)
            .field("file", &self.file)
            .finish_non_exhaustive()
    }
}

impl<W: Write> Writer<W> {
    /// A writer of uncompressed records to `w`.
    pub fn new(w: W) -> Writer<W> {
        WriterBuilder::new().from_writer(w)
    }

    /// Writes one record.
    ///
    /// # Errors
    ///
    /// Those of the underlying writer, naming the file (if known) and the
    /// offset of the record.
    pub fn write_record(&mut self, data: &[u8]) -> Result<()> {
        let len = (data.len() as u64).to_le_bytes();
        let mut header = [0u8; 12];
        header[..8].copy_from_slice(&len);
        header[8..].copy_from_slice(&masked_crc32c(&len).to_le_bytes());
        let footer = masked_crc32c(data).to_le_bytes();
        let w = self.sink_mut();
        let res = w
            .write_all(&header)
            .and_then(|()| w.write_all(data))
            .and_then(|()| w.write_all(&footer));
        res.map_err(|e| self.error(e))?;
        self.pos.offset += framed_len(data.len() as u64);
        self.pos.index += 1;
        Ok(())
    }

    /// Where the next record will start: its offset in the uncompressed
    /// stream, and its index.
    pub fn position(&self) -> Position {
        self.pos
    }

    /// Flushes what was written so far to the underlying writer (for a
    /// compressed stream, with a deflate sync flush, so everything written
    /// so far can be decompressed).
    ///
    /// # Errors
    ///
    /// Those of the underlying writer, naming the file if known.
    pub fn flush(&mut self) -> Result<()> {
        self.sink_mut().flush().map_err(|e| self.error(e))
    }

    /// Ends the stream (writing a compressed stream's trailer), flushes,
    /// and returns the underlying writer.
    ///
    /// # Errors
    ///
    /// Those of the underlying writer, naming the file if known.
    pub fn finish(self) -> Result<W> {
        let Writer { sink, pos, file } = self;
        let res = match sink {
            Sink::Plain(w) => Ok(w),
            Sink::Gzip(e) => e.finish(),
            Sink::Zlib(e) => e.finish(),
        };
        let err = |e: io::Error| {
            let e = Error::io(e).with_offset(pos.offset);
            match &file {
                Some(f) => e.with_file(f),
                None => e,
            }
        };
        let mut w = res.map_err(err)?;
        w.flush().map_err(err)?;
        Ok(w)
    }

    /// The underlying writer. For a compressed stream, it holds only what
    /// the compressor has emitted so far.
    pub fn get_ref(&self) -> &W {
        match &self.sink {
            Sink::Plain(w) => w,
            Sink::Gzip(e) => e.get_ref(),
            Sink::Zlib(e) => e.get_ref(),
        }
    }

    fn sink_mut(&mut self) -> &mut dyn Write {
        match &mut self.sink {
            Sink::Plain(w) => w,
            Sink::Gzip(e) => e,
            Sink::Zlib(e) => e,
        }
    }

    fn error(&self, e: io::Error) -> Error {
        let e = Error::io(e).with_offset(self.pos.offset);
        match &self.file {
            Some(f) => e.with_file(f),
            None => e,
        }
    }
}

impl Writer<BufWriter<OutputFile>> {
    /// Ends the stream, flushes, and renames the output into place (see
    /// [`OutputFile::commit`]).
    ///
    /// # Errors
    ///
    /// Those of [`finish`](Writer::finish) and [`OutputFile::commit`];
    /// after an error the output is not in place and its temporary file
    /// is removed.
    pub fn commit(self) -> Result<()> {
        self.into_output()?.commit()
    }

    /// Ends the stream, flushes, and [closes](OutputFile::close) the
    /// output without committing it: the file is kept, without a
    /// descriptor, until the returned output is committed or dropped.
    ///
    /// # Errors
    ///
    /// Those of [`finish`](Writer::finish) and [`OutputFile::close`];
    /// after an error the temporary file is removed.
    pub fn close(self) -> Result<OutputFile> {
        self.into_output()?.close()
    }

    /// Ends the stream and flushes it into the output.
    fn into_output(self) -> Result<OutputFile> {
        let file = self.file.clone();
        let w = self.finish()?;
        w.into_inner().map_err(|e| {
            let e = Error::io(e.into_error());
            match &file {
                Some(f) => e.with_file(f),
                None => e,
            }
        })
    }
}
