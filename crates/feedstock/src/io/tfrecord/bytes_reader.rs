//! The fast path: records from a buffer already in memory, without copies.

use std::sync::Arc;

use bytes::Bytes;

use super::skip::Policy;
use super::{Decoded, Decoder, Payload, Position, Record, SkipLog};
use crate::error::{Error, Result};

/// Reads TFRecord records from a [`Bytes`] buffer holding a whole stream.
///
/// Each record's data is a [`Bytes::slice`] of the buffer: no copy, and
/// the buffer lives as long as any record does. Both CRCs are still
/// checked. Made by [`BytesReader::new`] (uncompressed, defaults) or
/// [`ReaderBuilder::from_bytes`](super::ReaderBuilder::from_bytes).
///
/// ```
/// use feedstock::io::tfrecord::{BytesReader, Writer};
///
/// let mut w = Writer::new(Vec::new());
/// w.write_record(b"zero copy")?;
/// let file = bytes::Bytes::from(w.finish()?);
///
/// let rec = BytesReader::new(file.clone()).next().unwrap()?;
/// assert_eq!(&rec.value[..], b"zero copy");
/// // The record's data points into the file's buffer.
/// assert_eq!(rec.value.as_ptr(), file[12..].as_ptr());
/// # Ok::<(), feedstock::Error>(())
/// ```
#[derive(Debug)]
pub struct BytesReader {
    /// The whole (decompressed) stream.
    data: Bytes,
    /// How much of `data` the decoder has consumed.
    at: usize,
    /// The framing state machine.
    decoder: Decoder,
    /// The file name errors carry.
    file: Option<Arc<str>>,
    /// An error met while producing `data` (decompressing), reported when
    /// the decoder reaches the end of `data`.
    tail_error: Option<Error>,
    /// What to do with damaged records, and their count.
    policy: Policy,
    /// The error that stopped the reader.
    failed: Option<Error>,
    /// Whether the iterator has yielded `failed` (it then ends).
    reported: bool,
}

impl BytesReader {
    /// A reader over `data`, an uncompressed stream, with the default
    /// settings.
    pub fn new(data: Bytes) -> BytesReader {
        let policy =
            Policy::new(&super::CorruptRecords::Fail, SkipLog::new(), None, 0);
        BytesReader::with_decoder(data, Decoder::new(), None, None, policy)
    }

    pub(super) fn with_decoder(
        data: Bytes,
        decoder: Decoder,
        file: Option<Arc<str>>,
        tail_error: Option<Error>,
        policy: Policy,
    ) -> BytesReader {
        BytesReader {
            data,
            at: 0,
            decoder,
            file,
            tail_error,
            policy,
            failed: None,
            reported: false,
        }
    }

    /// Reads the next record, or `None` at a clean end of the buffer.
    ///
    /// # Errors
    ///
    /// As [`Reader::read_record`](super::Reader::read_record) describes:
    /// the same errors at the same offsets. After an error the reader is
    /// stuck and returns the same error again.
    pub fn read_record(&mut self) -> Result<Option<Record>> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let read = self.next_record();
        super::remember_failure(&mut self.failed, self.file.as_deref(), read)
    }

    fn next_record(&mut self) -> Result<Option<Record>> {
        loop {
            if self.decoder.is_abandoned() {
                return Ok(None);
            }
            if let Some(record) = self.policy.next_held(&mut self.decoder)? {
                return Ok(Some(record));
            }
            let rest = &self.data[self.at..];
            if rest.is_empty() {
                if let Some(e) = self.tail_error.take() {
                    let e = e.with_offset(self.decoder.next_position().offset);
                    if !(self.policy.skips()
                        && e.kind() == crate::Kind::DataLoss)
                    {
                        return Err(e);
                    }
                    // The compressed buffer is broken here: nothing after
                    // this point can be read.
                    let skip = self.decoder.abandon(e);
                    self.policy.on_skip(&skip)?;
                    self.policy.on_end(self.decoder.next_position().index)?;
                    return Ok(None);
                }
            }
            let (what, used) = self.decoder.decode(rest)?;
            let start = self.at;
            self.at += used;
            match what {
                Decoded::NeedMore => {}
                Decoded::End => {
                    self.policy.on_end(self.decoder.next_position().index)?;
                    return Ok(None);
                }
                Decoded::Skipped(skip) => self.policy.on_skip(&skip)?,
                Decoded::Record(frame) => {
                    let data = match frame.payload {
                        Payload::Input(r) => {
                            self.data.slice(start + r.start..start + r.end)
                        }
                        Payload::Buffered => {
                            Bytes::from(self.decoder.take_buffered())
                        }
                    };
                    return Ok(Some(Record::new(
                        data,
                        frame.offset,
                        frame.index,
                    )));
                }
            }
        }
    }

    /// Where the next record starts.
    pub fn next_position(&self) -> Position {
        self.decoder.next_position()
    }

    /// The length of the stream read: the buffer itself, or what was
    /// decompressed of it (a compressed buffer whose framing fails early
    /// is not decompressed further).
    pub fn stream_len(&self) -> usize {
        self.data.len()
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
}

impl Iterator for BytesReader {
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
