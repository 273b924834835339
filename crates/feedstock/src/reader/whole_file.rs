//! Whole files as records, as TensorFlow's `WholeFileReader`.

use std::io::Read;

use bytes::Bytes;

use super::{not_started, RawRecord, RecordKey, RecordReader};
use crate::error::{Error, Result};
use crate::io::fs::FileSystem;

/// Reads each file as one record: the key is the filename, the value the
/// file's contents. Useful for images and other files a decoder takes
/// whole.
///
/// Each file is started, read and finished in one call, so between calls
/// the reader is never inside a file and its state can always be saved.
///
/// ```
/// use feedstock::reader::{Reader, WholeFileReader};
///
/// let reader = Reader::new(WholeFileReader::new());
/// assert_eq!(reader.num_records_produced(), 0);
/// ```
#[derive(Default)]
pub struct WholeFileReader {
    /// The file started: its name, contents and size.
    current: Option<(String, Box<dyn Read + Send>, u64)>,
}

impl std::fmt::Debug for WholeFileReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let file = self.current.as_ref().map(|c| &c.0);
        f.debug_struct("WholeFileReader")
            .field("file", &file)
            .finish()
    }
}

impl WholeFileReader {
    /// A whole-file reader.
    pub fn new() -> WholeFileReader {
        WholeFileReader::default()
    }
}

impl RecordReader for WholeFileReader {
    fn on_work_started(
        &mut self,
        file: &str,
        fs: &dyn FileSystem,
    ) -> Result<()> {
        // The contents are read up to the size the file had when opened,
        // as TensorFlow does; a stream (a pipe, /dev/zero) has no size and
        // could be endless.
        if fs.is_stream(file)? {
            return Err(Error::failed_precondition(
                "is not a regular file: a whole-file reader reads a file up \
                 to its size, and a stream has none",
            )
            .with_file(file));
        }
        let size = fs.size(file)?;
        let input: Box<dyn Read + Send> = Box::new(fs.open(file)?.take(size));
        self.current = Some((file.to_owned(), input, size));
        Ok(())
    }

    fn read(&mut self) -> Result<Option<RawRecord>> {
        let (name, mut input, size) =
            self.current.take().ok_or_else(not_started)?;
        let capacity = usize::try_from(size).map_err(|_| {
            Error::resource_exhausted(format!(
                "a {size}-byte file does not fit in memory"
            ))
        })?;
        let mut contents = Vec::new();
        contents.try_reserve_exact(capacity).map_err(|_| {
            Error::resource_exhausted(format!(
                "out of memory holding a {size}-byte file"
            ))
            .with_file(&name)
        })?;
        input.read_to_end(&mut contents)?;
        let value = Bytes::from(contents);
        Ok(Some(
            RawRecord::new(RecordKey::Full(name), value).last_in_file(),
        ))
    }

    fn on_work_finished(&mut self) -> Result<()> {
        self.current = None;
        Ok(())
    }

    fn reset(&mut self) -> Result<()> {
        self.current = None;
        Ok(())
    }
}
