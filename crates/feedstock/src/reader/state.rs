//! The saved form of a reader's position, as protobuf messages (prost), so
//! that a state written by one version can be read by the next.

use crate::error::{Error, Result};
use crate::io::fs::FileSystem;

/// The [`Reader`](super::Reader)'s own state: the counters and the file in
/// progress, with the record reader's position inside it, sealed in a
/// [`READER`](crate::checkpoint::READER) envelope. Field numbers 1 to 4
/// follow TensorFlow's `ReaderBaseState`, but the bytes are not
/// TensorFlow's, so they carry a checksum: TensorFlow 2.21 saves no state
/// for its TFRecord, text and fixed-length readers (Unimplemented), and
/// the bare `ReaderBaseState` its identity and whole-file readers save was
/// never restored here (not a reader state).
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct ReaderState {
    /// Files started.
    #[prost(uint64, tag = "1")]
    pub(crate) work_started: u64,
    /// Files finished.
    #[prost(uint64, tag = "2")]
    pub(crate) work_finished: u64,
    /// Records returned.
    #[prost(uint64, tag = "3")]
    pub(crate) num_records_produced: u64,
    /// The file in progress, if any.
    #[prost(string, optional, tag = "4")]
    pub(crate) current_work: Option<String>,
    /// The record reader's position inside `current_work`.
    #[prost(bytes = "vec", optional, tag = "5")]
    pub(crate) reader_state: Option<Vec<u8>>,
    // Tag 6 was version 1's magic string: the state is now sealed
    // ([`crate::checkpoint::READER`]).
}

/// A built-in record reader's position inside a file.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Position {
    /// Which reader wrote it, so that a state is never restored into a
    /// reader of another format.
    #[prost(string, tag = "1")]
    pub(crate) format: String,
    /// Byte offset of the next record in the (decompressed) stream.
    #[prost(uint64, tag = "2")]
    pub(crate) offset: u64,
    /// The next record's number (line number for text).
    #[prost(uint64, tag = "3")]
    pub(crate) index: u64,
}

impl Position {
    /// Encodes a position of `format`.
    pub(crate) fn encode(format: &str, offset: u64, index: u64) -> Vec<u8> {
        prost::Message::encode_to_vec(&Position {
            format: format.to_owned(),
            offset,
            index,
        })
    }

    /// Decodes a position, checking it was written by `format`.
    pub(crate) fn decode(format: &str, state: &[u8]) -> Result<Position> {
        let pos: Position = prost::Message::decode(state).map_err(|e| {
            Error::invalid_argument(format!("not a reader position: {e}"))
        })?;
        if pos.format != format {
            return Err(Error::invalid_argument(format!(
                "a position saved by a {:?} reader cannot be restored into \
                 a {format:?} reader",
                pos.format
            )));
        }
        Ok(pos)
    }

    /// Refuses an offset past the end of `file`, an uncompressed file
    /// (a stream has no size to check: reading it finds the end).
    pub(crate) fn check_offset(
        &self,
        fs: &dyn FileSystem,
        file: &str,
    ) -> Result<()> {
        if fs.is_stream(file)? {
            return Ok(());
        }
        let size = fs.size(file)?;
        if self.offset > size {
            return Err(Error::invalid_argument(format!(
                "a reader state whose offset {} is past the end of the \
                 file ({size} bytes)",
                self.offset
            ))
            .with_file(file));
        }
        Ok(())
    }
}
