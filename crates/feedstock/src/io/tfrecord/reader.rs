//! Reading records from an [`io::Read`], and the builder of every reader.

use std::fmt;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;

use super::masked_crc32c;
use super::shared_buf::SharedBuf;
use super::skip::Policy;
use super::{
    BytesReader, CorruptRecords, Decoded, Decoder, Payload, Position, Record,
    SkipLog, DEFAULT_MAX_DECOMPRESSED_LEN, DEFAULT_MAX_RECORD_LEN,
};
use crate::error::{Error, Result};
use crate::io::compression::{Compression, Decompressor};

/// Configures and builds TFRecord readers.
///
/// The configuration is fixed once a reader is built. The builder is not
/// consumed, so one builder can open many files.
///
/// ```no_run
/// use feedstock::io::tfrecord::ReaderBuilder;
/// use feedstock::io::Compression;
///
/// let mut builder = ReaderBuilder::new();
/// builder.compression(Compression::Gzip).max_record_len(64 << 20);
/// for record in builder.open("train-0.tfrecord.gz")? {
///     let record = record?;
///     println!("{}: {} bytes", record.position.index, record.value.len());
/// }
/// # Ok::<(), feedstock::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct ReaderBuilder {
    /// The stream's compression; `None` means "none" for
    /// [`from_reader`](Self::from_reader) and "detect from the extension"
    /// for [`open`](Self::open).
    compression: Option<Compression>,
    /// The longest record data accepted.
    max_record_len: u64,
    /// The file name errors carry.
    file_name: Option<Arc<str>>,
    /// The size of the read buffer.
    buffer_capacity: usize,
    /// The most bytes [`from_bytes`](Self::from_bytes) decompresses.
    max_decompressed_len: u64,
    /// What readers do with a damaged record.
    corrupt_records: CorruptRecords,
    /// Where readers count what they skip; shared by every reader built.
    skip_log: SkipLog,
    /// The length of the stream, when the caller knows it.
    stream_len: Option<u64>,
    /// Where records start, when a record index says.
    record_starts: Option<Arc<[u64]>>,
}

impl Default for ReaderBuilder {
    fn default() -> ReaderBuilder {
        ReaderBuilder::new()
    }
}

impl ReaderBuilder {
    /// A builder with the defaults: compression detected from the file
    /// name (none for readers), a 1 GiB record limit, a 64 KiB buffer.
    pub fn new() -> ReaderBuilder {
        ReaderBuilder {
            compression: None,
            max_record_len: DEFAULT_MAX_RECORD_LEN,
            file_name: None,
            buffer_capacity: 64 * 1024,
            max_decompressed_len: DEFAULT_MAX_DECOMPRESSED_LEN,
            corrupt_records: CorruptRecords::Fail,
            skip_log: SkipLog::new(),
            stream_len: None,
            record_starts: None,
        }
    }

    /// Sets what readers do with a corrupt record (default
    /// [`CorruptRecords::Fail`]). With [`CorruptRecords::Skip`], a
    /// damaged region is skipped, counted in the
    /// [`skip_log`](Self::skip_log), and reading goes on at the next
    /// intact frame, within the budget.
    pub fn corrupt_records(&mut self, policy: CorruptRecords) -> &mut Self {
        self.corrupt_records = policy;
        self
    }

    /// Sets the log that counts what readers skip, and whose total the
    /// per-run budget limits. By default a builder makes its own log,
    /// shared by every reader it builds (and by its clones).
    pub fn skip_log(&mut self, log: SkipLog) -> &mut ReaderBuilder {
        self.skip_log = log;
        self
    }

    /// The log readers built here count their skips in.
    pub fn get_skip_log(&self) -> &SkipLog {
        &self.skip_log
    }

    /// Sets the length of the (decompressed) stream, if known, so that a
    /// skipping reader takes a header whose record would run past the end
    /// as damage without reading to the end first
    /// ([`Decoder::stream_len`]). [`open`](Self::open) sets it itself for
    /// an uncompressed file.
    pub fn stream_len(&mut self, len: Option<u64>) -> &mut ReaderBuilder {
        self.stream_len = len;
        self
    }

    /// Sets where records start in the (decompressed) stream, from a
    /// record index of the file written before it was damaged
    /// ([`RecordIndex::record_starts`](crate::io::index::RecordIndex::record_starts)),
    /// so that a skipping reader resynchronises only where a record
    /// starts ([`Decoder::record_starts`]): exactly, with no frame
    /// stored inside a damaged payload ever taken for a record. Without
    /// them a frame found by the scan is taken when the frame after it
    /// checks too, or it ends the stream. No effect on a strict reader.
    pub fn record_starts(
        &mut self,
        starts: Option<Arc<[u64]>>,
    ) -> &mut ReaderBuilder {
        self.record_starts = starts;
        self
    }

    /// Sets the most bytes [`from_bytes`](Self::from_bytes) decompresses a
    /// compressed buffer into (default
    /// [`DEFAULT_MAX_DECOMPRESSED_LEN`], 1 GiB, the limit of
    /// `decode_compressed`). The streaming readers need no such limit:
    /// they hold one record at a time.
    pub fn max_decompressed_len(&mut self, max: u64) -> &mut ReaderBuilder {
        self.max_decompressed_len = max;
        self
    }

    /// Sets the compression, overriding detection from the file name.
    pub fn compression(&mut self, c: Compression) -> &mut ReaderBuilder {
        self.compression = Some(c);
        self
    }

    /// Sets the longest record data accepted, in bytes. A length field
    /// above it is a [`ResourceExhausted`](crate::Kind::ResourceExhausted)
    /// error, raised before anything is allocated for the record.
    pub fn max_record_len(&mut self, max: u64) -> &mut ReaderBuilder {
        self.max_record_len = max;
        self
    }

    /// Sets the file name that errors name. [`open`](Self::open) uses the
    /// path as given unless a name is set here.
    pub fn file_name(&mut self, name: impl AsRef<str>) -> &mut ReaderBuilder {
        self.file_name = Some(name.as_ref().into());
        self
    }

    /// Sets the size of the chunks the stream is read in (of
    /// decompressed bytes; default 64 KiB). A record that lies inside one
    /// chunk is a slice of it, not a copy, and keeps the chunk alive
    /// while it lives; a record spanning chunks is copied into a buffer
    /// of its own.
    pub fn buffer_capacity(&mut self, bytes: usize) -> &mut ReaderBuilder {
        self.buffer_capacity = bytes.max(1);
        self
    }

    /// A reader of the records in `rdr`, from its current position, which
    /// is taken to be offset 0, index 0.
    pub fn from_reader<R: Read>(&self, rdr: R) -> Reader<R> {
        let c = self.compression.unwrap_or_default();
        self.build(rdr, c, self.file_name.clone(), Position::default())
    }

    /// As [`from_reader`](Self::from_reader), but `rdr` is read, and
    /// decompressed, on a thread of its own, up to four chunks of at
    /// least 256 KiB ahead of the records handed out, which share those
    /// chunks without a copy. The reading thread is spared the source's
    /// reads (for a file, the kernel's copy out of the page cache; for a
    /// compressed file, the inflating too).
    ///
    /// The thread ends at the end of `rdr`, at its first error (which the
    /// reader returns after the records before it), or when the reader
    /// is dropped and the read under way returns. Use it only for
    /// sources whose reads always return, such as regular files; a read
    /// from a pipe could keep the thread waiting for ever.
    /// [`Reader::get_ref`] is `None`: the thread owns `rdr`.
    ///
    /// ```
    /// use feedstock::io::tfrecord::{ReaderBuilder, Writer};
    ///
    /// let mut w = Writer::new(Vec::new());
    /// w.write_record(b"a")?;
    /// w.write_record(b"bc")?;
    /// let file = std::io::Cursor::new(w.finish()?);
    /// let records: Vec<_> = ReaderBuilder::new()
    ///     .from_reader_ahead(file)
    ///     .collect::<feedstock::Result<_>>()?;
    /// assert_eq!(&records[1].value[..], b"bc");
    /// # Ok::<(), feedstock::Error>(())
    /// ```
    pub fn from_reader_ahead<R: Read + Send + 'static>(
        &self,
        rdr: R,
    ) -> Reader<R> {
        let c = self.compression.unwrap_or_default();
        let src = SharedBuf::read_ahead(
            self.buffer_capacity,
            Decompressor::new(c, rdr),
        );
        self.assemble(src, c, self.file_name.clone(), Position::default())
    }

    /// A reader of the uncompressed records in the chunks `source` hands
    /// over ([`FileSystem::open_chunks_at`](crate::io::fs::FileSystem::open_chunks_at)),
    /// taken out of them without a copy (a record spanning two chunks is
    /// put together). Its first byte is offset 0, index 0. The
    /// compression set is ignored: a compressed stream is read through
    /// [`from_reader`](Self::from_reader). [`Reader::get_ref`] is `None`.
    pub fn from_chunks(
        &self,
        source: Box<dyn crate::io::fs::ChunkRead>,
    ) -> Reader<Box<dyn Read + Send>> {
        let src = SharedBuf::from_chunks(source);
        self.assemble(
            src,
            Compression::None,
            self.file_name.clone(),
            Position::default(),
        )
    }

    /// A reader of the records in `rdr` that starts at `pos`, a position
    /// saved from an earlier reader of the same stream (a record's
    /// [`Record::position`] or [`Record::next_position`], or
    /// [`Reader::position`]).
    ///
    /// An uncompressed stream is sought to the offset. A compressed stream
    /// is read from its start and the first `pos.index` records are
    /// decoded, verified and skipped.
    ///
    /// # Errors
    ///
    /// Those of seeking; for a compressed stream, those of reading the
    /// records skipped, and
    /// [`InvalidArgument`](crate::Kind::InvalidArgument) if the stream
    /// ends before `pos.index` records or record `pos.index` does not
    /// start at `pos.offset`.
    pub fn from_reader_at<R: Read + Seek>(
        &self,
        mut rdr: R,
        pos: Position,
    ) -> Result<Reader<R>> {
        let c = self.compression.unwrap_or_default();
        let file = self.file_name.clone();
        self.resume(&mut rdr, c, file.as_deref(), pos)?;
        let mut reader = self.build(rdr, c, file, Position::default());
        if c == Compression::None {
            reader.decoder = reader.decoder.starting_at(pos);
            reader.policy = Policy::new(
                &self.corrupt_records,
                self.skip_log.clone(),
                reader.file.as_ref(),
                pos.index,
            );
        } else {
            reader.skip_to(pos)?;
        }
        Ok(reader)
    }

    /// Opens the file at `path`. Unless a compression was set, it is
    /// detected from the extension ([`Compression::from_path`]).
    ///
    /// # Errors
    ///
    /// [`NotFound`](crate::Kind::NotFound) for a missing file,
    /// [`FailedPrecondition`](crate::Kind::FailedPrecondition) for a
    /// directory, other kinds as [`Error::io`] classifies them; all name
    /// the file.
    pub fn open(&self, path: impl AsRef<Path>) -> Result<Reader<File>> {
        let (file, name, c) = self.open_file(path.as_ref())?;
        let mut b = self.clone();
        if c == Compression::None && b.stream_len.is_none() {
            b.stream_len = file.metadata().ok().map(|m| m.len());
        }
        Ok(b.build(file, c, Some(name), Position::default()))
    }

    /// Opens `path` through the file system `fs`: a local path or, with
    /// [`default_fs`](crate::io::fs::default_fs), an object-store URL.
    /// The compression, unless set, is detected from the extension.
    ///
    /// # Errors
    ///
    /// Those of [`FileSystem::open`](crate::io::fs::FileSystem::open),
    /// naming `path`.
    pub fn open_in(
        &self,
        fs: &dyn crate::io::fs::FileSystem,
        path: &str,
    ) -> Result<Reader<Box<dyn Read + Send>>> {
        let name: Arc<str> = match &self.file_name {
            Some(n) => n.clone(),
            None => path.into(),
        };
        let src = fs.open(path).map_err(|e| e.with_file(&name))?;
        let c = self
            .compression
            .unwrap_or_else(|| Compression::from_path(path));
        Ok(self.build(src, c, Some(name), Position::default()))
    }

    /// Opens the file at `path` and resumes at `pos`, as
    /// [`from_reader_at`](Self::from_reader_at) does.
    ///
    /// # Errors
    ///
    /// Those of [`open`](Self::open) and
    /// [`from_reader_at`](Self::from_reader_at).
    pub fn open_at(
        &self,
        path: impl AsRef<Path>,
        pos: Position,
    ) -> Result<Reader<File>> {
        let (file, name, c) = self.open_file(path.as_ref())?;
        let mut b = self.clone();
        if c == Compression::None && b.stream_len.is_none() {
            b.stream_len = file.metadata().ok().map(|m| m.len());
        }
        b.compression = Some(c);
        b.file_name = Some(name);
        b.from_reader_at(file, pos)
    }

    /// A reader over `data`, a whole stream already in memory.
    ///
    /// An uncompressed stream is read in place: each record's data is a
    /// slice of `data`. A compressed one is decompressed into a new buffer
    /// first; if decompression fails part-way, the records before the
    /// failure are still read and the failure is reported where the
    /// decompressed bytes end, as the streaming [`Reader`] does.
    ///
    /// At most [`max_decompressed_len`](Self::max_decompressed_len) bytes
    /// are decompressed, so a small buffer that inflates hugely cannot
    /// exhaust memory: past the limit, the records within it are read and
    /// then a [`ResourceExhausted`](crate::Kind::ResourceExhausted) error
    /// is reported (the streaming reader reads such a stream).
    /// Decompression stops at the first record header whose CRC is
    /// wrong (unless damaged records are skipped), so a buffer that is
    /// not TFRecord framing fails at its first bad header without being
    /// inflated to the limit. A
    /// skipping reader counts a failed decompression as a region running
    /// to the end, as the streaming [`Reader`] does.
    pub fn from_bytes(&self, data: Bytes) -> BytesReader {
        let c = self.compression.unwrap_or_default();
        let (data, tail_error) = match c {
            Compression::None => (data, None),
            _ => {
                let max = self.max_decompressed_len;
                let mut out = Vec::new();
                // A reader that fails at the first damaged record needs
                // nothing past it: inflation stops at a bad header.
                let frames = !self.corrupt_records.skips();
                let mut err = inflate_into(
                    &mut Decompressor::new(c, &data[..]),
                    max.saturating_add(1),
                    &mut out,
                    frames,
                )
                .err();
                if err.is_none() && out.len() as u64 > max {
                    out.truncate(max as usize);
                    err = Some(Error::resource_exhausted(format!(
                        "the buffer decompresses to more than the limit of \
                         {max} bytes (max_decompressed_len; a streaming \
                         Reader has no such limit)"
                    )));
                }
                (Bytes::from(out), err)
            }
        };
        let policy = Policy::new(
            &self.corrupt_records,
            self.skip_log.clone(),
            self.file_name.as_ref(),
            0,
        );
        // The buffer's length is where the stream ends only when it
        // inflated whole: a compressed buffer broken at some point ends
        // there, and a frame the resync finds just before that point is
        // not known to end the stream (as a streaming reader, which sees
        // the inflater's error instead of an end, does not take it).
        let len = tail_error.is_none().then_some(data.len() as u64);
        BytesReader::with_decoder(
            data,
            Decoder::new()
                .max_record_len(self.max_record_len)
                .resync(policy.skips())
                .stream_len(len)
                .record_starts(self.record_starts.clone()),
            self.file_name.clone(),
            tail_error,
            policy,
        )
    }

    fn open_file(&self, path: &Path) -> Result<(File, Arc<str>, Compression)> {
        let name: Arc<str> = match &self.file_name {
            Some(n) => n.clone(),
            None => path.to_string_lossy().into(),
        };
        let file =
            File::open(path).map_err(|e| Error::io(e).with_file(&name))?;
        let meta =
            file.metadata().map_err(|e| Error::io(e).with_file(&name))?;
        if meta.is_dir() {
            return Err(
                Error::failed_precondition("is a directory").with_file(&name)
            );
        }
        let c = self
            .compression
            .unwrap_or_else(|| Compression::from_path(path));
        Ok((file, name, c))
    }

    fn resume<R: Seek>(
        &self,
        rdr: &mut R,
        c: Compression,
        file: Option<&str>,
        pos: Position,
    ) -> Result<()> {
        let to = if c == Compression::None {
            pos.offset
        } else {
            0
        };
        rdr.seek(SeekFrom::Start(to)).map_err(|e| {
            let e = Error::io(e).with_offset(to);
            match file {
                Some(f) => e.with_file(f),
                None => e,
            }
        })?;
        Ok(())
    }

    fn build<R: Read>(
        &self,
        rdr: R,
        c: Compression,
        file: Option<Arc<str>>,
        pos: Position,
    ) -> Reader<R> {
        let src = SharedBuf::with_capacity(
            self.buffer_capacity,
            Decompressor::new(c, rdr),
        );
        self.assemble(src, c, file, pos)
    }

    fn assemble<R: Read>(
        &self,
        src: SharedBuf<Decompressor<R>>,
        c: Compression,
        file: Option<Arc<str>>,
        pos: Position,
    ) -> Reader<R> {
        let policy = Policy::new(
            &self.corrupt_records,
            self.skip_log.clone(),
            file.as_ref(),
            pos.index,
        );
        Reader {
            src,
            decoder: Decoder::new()
                .max_record_len(self.max_record_len)
                .resync(policy.skips())
                .stream_len(self.stream_len)
                .record_starts(self.record_starts.clone())
                .starting_at(pos),
            compressed: c != Compression::None,
            policy,
            file,
            failed: None,
            reported: false,
        }
    }
}

/// Reads TFRecord records from an [`io::Read`], decompressing if asked.
///
/// Each record's data is copied once, out of the read buffer into its own
/// [`Bytes`]. Made by a [`ReaderBuilder`], or by [`Reader::new`] with the
/// defaults.
///
/// ```
/// use feedstock::io::tfrecord::{Reader, Writer};
///
/// let mut w = Writer::new(Vec::new());
/// w.write_record(b"a")?;
/// w.write_record(b"bc")?;
/// let file = w.finish()?;
///
/// let mut r = Reader::new(&file[..]);
/// assert_eq!(&r.read_record()?.unwrap().value[..], b"a");
/// assert_eq!(r.next_position().index, 1);
/// assert_eq!(&r.read_record()?.unwrap().value[..], b"bc");
/// assert!(r.read_record()?.is_none());
/// # Ok::<(), feedstock::Error>(())
/// ```
pub struct Reader<R> {
    /// The (decompressed) stream, read in chunks that the records
    /// inside them share.
    src: SharedBuf<Decompressor<R>>,
    /// The framing state machine.
    decoder: Decoder,
    /// Whether the stream is decompressed (so that a read error may be
    /// damage to the compressed bytes).
    compressed: bool,
    /// What to do with damaged records, and their count.
    policy: Policy,
    /// The file name errors carry.
    file: Option<Arc<str>>,
    /// The error that stopped the reader; returned again on every read.
    failed: Option<Error>,
    /// Whether the iterator has yielded `failed` (it then ends).
    reported: bool,
}

impl<R> fmt::Debug for Reader<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reader")
            .field("file", &self.file)
            .field("decoder", &self.decoder)
            .field("failed", &self.failed)
            .finish_non_exhaustive()
    }
}

impl<R: Read> Reader<R> {
    /// A reader of uncompressed records with the default settings.
    pub fn new(rdr: R) -> Reader<R> {
        ReaderBuilder::new().from_reader(rdr)
    }

    /// Reads the next record, or `None` at a clean end of the stream.
    ///
    /// # Errors
    ///
    /// As [`Decoder::decode`] describes, plus I/O and decompression errors
    /// ([`DataLoss`](crate::Kind::DataLoss) for a compressed stream cut
    /// short or corrupt). Every error names the file (when known) and the
    /// offset of the record being read. After an error the reader is
    /// stuck and returns the same error again.
    ///
    /// With [`CorruptRecords::Skip`], damaged regions are skipped and
    /// counted instead, and a compressed stream that breaks ends the
    /// stream as one last skipped region; the errors are then those of
    /// the budget (DataLoss, listing the offsets skipped), I/O errors of
    /// the source, and decompression errors of a stream read with no
    /// skip policy.
    pub fn read_record(&mut self) -> Result<Option<Record>> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let read = self.next_record();
        super::remember_failure(&mut self.failed, self.file.as_deref(), read)
    }

    fn next_record(&mut self) -> Result<Option<Record>> {
        if self.decoder.is_abandoned() {
            return Ok(None);
        }
        loop {
            if let Some(record) = self.policy.next_held(&mut self.decoder)? {
                return Ok(Some(record));
            }
            let buf = match self.src.fill_buf() {
                Ok(buf) => buf,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    let at = self.decoder.next_position().offset;
                    let e = Error::io(e).with_offset(at);
                    if self.compressed
                        && self.policy.skips()
                        && e.kind() == crate::Kind::DataLoss
                    {
                        // The compressed stream is broken: nothing after
                        // this point can be read.
                        let skip = self.decoder.abandon(e);
                        self.policy.on_skip(&skip)?;
                        self.policy
                            .on_end(self.decoder.next_position().index)?;
                        return Ok(None);
                    }
                    return Err(e);
                }
            };
            let (what, used) = self.decoder.decode(buf)?;
            let record = match what {
                Decoded::NeedMore => None,
                Decoded::End => {
                    self.policy.on_end(self.decoder.next_position().index)?;
                    return Ok(None);
                }
                Decoded::Skipped(skip) => {
                    self.src.consume(used);
                    self.policy.on_skip(&skip)?;
                    continue;
                }
                Decoded::Record(frame) => {
                    let data = match frame.payload {
                        Payload::Input(range) => self.src.share(range),
                        Payload::Buffered => {
                            Bytes::from(self.decoder.take_buffered())
                        }
                    };
                    Some(Record::new(data, frame.offset, frame.index))
                }
            };
            self.src.consume(used);
            if record.is_some() {
                return Ok(record);
            }
        }
    }

    /// Where the next record starts (its offset in the decompressed
    /// stream, and its index). Saving this and passing it to
    /// [`ReaderBuilder::from_reader_at`] resumes reading there.
    pub fn next_position(&self) -> Position {
        self.decoder.next_position()
    }

    /// The file name errors carry, if any.
    pub fn file_name(&self) -> Option<&str> {
        self.file.as_deref()
    }

    /// The log this reader counts its skipped regions in.
    pub fn skip_log(&self) -> &SkipLog {
        self.policy.log()
    }

    /// How many damaged regions this reader has skipped.
    pub fn num_skipped(&self) -> u64 {
        self.policy.skipped()
    }

    /// The underlying reader; `None` for a reader that
    /// [reads ahead](ReaderBuilder::from_reader_ahead), whose thread owns it.
    pub fn get_ref(&self) -> Option<&R> {
        self.src.get_ref().map(Decompressor::get_ref)
    }

    fn skip_to(&mut self, pos: Position) -> Result<()> {
        while self.next_position().index < pos.index {
            if self.read_record()?.is_none() {
                return Err(self.mismatch(pos, "the stream ends before it"));
            }
        }
        if self.next_position() != pos {
            let at = self.next_position().offset;
            return Err(self.mismatch(
                pos,
                &format!("record {} starts at offset {at}", pos.index),
            ));
        }
        Ok(())
    }

    fn mismatch(&self, pos: Position, why: &str) -> Error {
        let e = Error::invalid_argument(format!(
            "cannot resume at record {} (offset {}): {why}",
            pos.index, pos.offset
        ));
        match &self.file {
            Some(f) => e.with_file(f),
            None => e,
        }
    }
}

impl<R: Read> Iterator for Reader<R> {
    type Item = Result<Record>;

    /// The next record; after an error has been yielded once, `None`.
    fn next(&mut self) -> Option<Result<Record>> {
        if self.reported {
            return None;
        }
        match self.read_record() {
            Ok(r) => r.map(Ok),
            Err(e) => {
                self.reported = true;
                Some(Err(e))
            }
        }
    }
}

/// Reads `src` into `out`, at most `max` bytes, growing `out` fallibly:
/// memory running out before the limit is a ResourceExhausted error (the
/// bytes read so far stay in `out`), not an abort as with
/// `read_to_end`.
fn inflate_into(
    src: &mut impl Read,
    max: u64,
    out: &mut Vec<u8>,
    frames: bool,
) -> Result<()> {
    let mut chunk = vec![0u8; 64 << 10];
    // Where the next record's header starts, while `frames`.
    let mut next = 0u64;
    loop {
        if frames && bad_header_within(out, &mut next) {
            return Ok(());
        }
        let room = max.saturating_sub(out.len() as u64);
        let want =
            chunk.len().min(usize::try_from(room).unwrap_or(usize::MAX));
        if want == 0 {
            return Ok(());
        }
        let n = match src.read(&mut chunk[..want]) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Error::io(e)),
        };
        out.try_reserve(n).map_err(|_| {
            Error::resource_exhausted(format!(
                "out of memory decompressing the buffer ({} bytes so far); \
                 max_decompressed_len sets a lower limit",
                out.len()
            ))
        })?;
        out.extend_from_slice(&chunk[..n]);
    }
}

/// Walks the record headers inflated so far from `*next` on; true at the
/// first whose length CRC is wrong (the decoder reports it there, and
/// nothing after it is read), leaving `*next` at the first header not
/// yet inflated whole.
fn bad_header_within(out: &[u8], next: &mut u64) -> bool {
    while let Some(h) = usize::try_from(*next)
        .ok()
        .and_then(|at| out.get(at..at.checked_add(12)?))
    {
        let (len, crc) = h.split_at(8);
        let crc = u32::from_le_bytes(crc.try_into().expect("4 bytes"));
        if masked_crc32c(len) != crc {
            return true;
        }
        let len = u64::from_le_bytes(len.try_into().expect("8 bytes"));
        *next = next.saturating_add(16).saturating_add(len);
    }
    false
}
