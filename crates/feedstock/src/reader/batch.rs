//! A batch of records from one file, as [`Reader::read_batch`] returns
//! it.
//!
//! [`Reader::read_batch`]: super::Reader::read_batch

use std::sync::Arc;

use bytes::Bytes;

use super::wrapper::full_key;
use super::{Record, RecordKey};
use crate::decode::Records;
use crate::error::Result;

/// Records read together from one file: their values, ready for the
/// batched decoders, and their positions, from which the keys
/// (`FILE:N`) are built only when asked for.
///
/// [`decode`](RecordBatch::decode) is the glue between a batch and a
/// batched decoder: it passes the values, and the keys only when the
/// decoder fails, so that the error names the record.
///
/// ```
/// use bytes::Bytes;
/// use feedstock::decode::csv::{CsvDecoder, RecordDefault};
/// use feedstock::reader::RecordBatch;
///
/// let batch = RecordBatch::from_records(
///     "a.csv",
///     vec![(1, Bytes::from("1,2")), (2, Bytes::from("3,x"))],
/// );
/// assert_eq!(batch.key(1), "a.csv:2");
/// let csv = CsvDecoder::new(vec![RecordDefault::i32(0); 2])?;
/// let e = batch
///     .decode(|records| csv.decode_batch(records))
///     .unwrap_err();
/// assert!(e.to_string().contains("a.csv:2"), "{e}");
/// # Ok::<(), feedstock::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecordBatch {
    /// The file the records came from (`None` for an empty batch).
    pub(super) file: Option<Arc<str>>,
    /// How the record reader named each record.
    pub(super) keys: Vec<RecordKey>,
    /// The records' bytes.
    pub(super) values: Vec<Bytes>,
}

impl RecordBatch {
    /// An empty batch with room for `n` records.
    pub(super) fn with_capacity(n: usize) -> RecordBatch {
        RecordBatch {
            file: None,
            keys: Vec::with_capacity(n),
            values: Vec::with_capacity(n),
        }
    }

    /// A batch of records of `file`, each given as its index or offset
    /// `N` (its key is `FILE:N`) and its value. For tests and for
    /// record sources of your own.
    pub fn from_records(
        file: &str,
        records: impl IntoIterator<Item = (u64, Bytes)>,
    ) -> RecordBatch {
        let (keys, values) = records
            .into_iter()
            .map(|(n, v)| (RecordKey::Index(n), v))
            .unzip();
        RecordBatch {
            file: Some(Arc::from(file)),
            keys,
            values,
        }
    }

    /// The number of records.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// True when there are no records.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The file the records came from, or `None` for an empty batch.
    pub fn file(&self) -> Option<&str> {
        self.file.as_deref()
    }

    /// The records' values, in order.
    pub fn values(&self) -> &[Bytes] {
        &self.values
    }

    /// The key of record `i` (`FILE:N`), built now.
    ///
    /// # Panics
    /// If `i` is not below [`len`](RecordBatch::len).
    pub fn key(&self, i: usize) -> String {
        full_key(self.file().unwrap_or(""), self.keys[i].clone())
    }

    /// Every record's key, built now.
    pub fn keys(&self) -> Vec<String> {
        (0..self.len()).map(|i| self.key(i)).collect()
    }

    /// Runs the batched decoder `f` on the values, with no keys, and
    /// returns its result. If it fails, runs it once more with every
    /// record's key and returns that error, which then names the record
    /// by its key instead of its position in the batch.
    ///
    /// Decoders are pure functions of their input, so the second run
    /// fails the same way; the keys cost nothing unless a record is bad.
    /// (Should the second run succeed, the first error is returned.)
    ///
    /// # Errors
    /// The decoder's error.
    pub fn decode<T>(
        &self,
        f: impl Fn(Records<'_>) -> Result<T>,
    ) -> Result<T> {
        match f(Records::new(&self.values)) {
            Ok(t) => Ok(t),
            Err(first) => {
                let keys = self.keys();
                let named = Records::new(&self.values).with_keys(&keys)?;
                match f(named) {
                    Err(named) => Err(named),
                    Ok(_) => Err(first),
                }
            }
        }
    }

    /// The records with their keys, as [`Reader::read_up_to`] returns
    /// them.
    ///
    /// [`Reader::read_up_to`]: super::Reader::read_up_to
    pub fn into_records(self) -> Vec<Record> {
        let file = self.file.as_deref().unwrap_or("");
        self.keys
            .into_iter()
            .zip(self.values)
            .map(|(k, value)| Record {
                key: full_key(file, k),
                value,
            })
            .collect()
    }
}

impl<'a> From<&'a RecordBatch> for crate::decode::Records<'a> {
    /// The batch's values with no keys: errors name a record by its
    /// position in the batch (see [`RecordBatch::decode`] for keys).
    fn from(batch: &'a RecordBatch) -> Records<'a> {
        Records::new(&batch.values)
    }
}
