//! Work strings as records, as TensorFlow's `IdentityReader`.

use bytes::Bytes;

use super::{not_started, RawRecord, RecordKey, RecordReader};
use crate::error::Result;
use crate::io::fs::FileSystem;

/// Returns each unit of work as one record whose key and value are both
/// the work string itself; no file is opened. Useful to push strings from
/// a queue through the reader machinery, and in tests.
///
/// ```
/// use feedstock::reader::{IdentityReader, Reader};
///
/// let reader = Reader::new(IdentityReader::new());
/// assert_eq!(reader.num_work_units_completed(), 0);
/// ```
#[derive(Debug, Default)]
pub struct IdentityReader {
    current: Option<String>,
}

impl IdentityReader {
    /// An identity reader.
    pub fn new() -> IdentityReader {
        IdentityReader::default()
    }
}

impl RecordReader for IdentityReader {
    fn on_work_started(
        &mut self,
        file: &str,
        _fs: &dyn FileSystem,
    ) -> Result<()> {
        self.current = Some(file.to_owned());
        Ok(())
    }

    fn read(&mut self) -> Result<Option<RawRecord>> {
        let work = self.current.take().ok_or_else(not_started)?;
        let value = Bytes::from(work.clone());
        Ok(Some(
            RawRecord::new(RecordKey::Full(work), value).last_in_file(),
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
