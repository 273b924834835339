//! The input of every batch decoder: serialized records, each optionally
//! named by its record key.

use bytes::Bytes;

use crate::error::{Error, Result};

/// A batch of serialized records, the input of every batch decoder
/// ([`CsvDecoder::decode_batch`](crate::decode::csv::CsvDecoder::decode_batch),
/// [`decode_raw_batch`](crate::decode::raw::decode_raw_batch),
/// [`parse_example`](crate::decode::example::parse_example), ...).
///
/// Every decoder takes one record as `&Bytes` and a batch as
/// `impl Into<Records>`: a `&[Bytes]`, `&Vec<Bytes>` or `&[Bytes; N]`
/// converts with no copy, and decoded strings share the records' buffers.
/// [`Records::with_keys`] names each record (by the key a reader gave it,
/// such as `train.csv:17`) so that an error says which record it is
/// about; without keys an error names the record by its position.
///
/// ```
/// use bytes::Bytes;
/// use feedstock::decode::raw::{decode_raw_batch, ByteOrder};
/// use feedstock::decode::Records;
/// use feedstock::DType;
///
/// let recs = vec![Bytes::from_static(&[1, 2]), Bytes::from_static(&[3])];
/// let err = decode_raw_batch(&recs, DType::U8, ByteOrder::LittleEndian)
///     .unwrap_err();
/// assert!(err.to_string().contains("record 1"));
///
/// let named = Records::new(&recs).with_keys(&["a.bin:0", "a.bin:1"])?;
/// let err = decode_raw_batch(named, DType::U8, ByteOrder::LittleEndian)
///     .unwrap_err();
/// assert_eq!(err.key(), Some("a.bin:1"));
/// # Ok::<(), feedstock::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Records<'a> {
    values: &'a [Bytes],
    /// One key per record, or empty. Collecting them into borrowed `&str`s
    /// (one pointer pair per record) lets keys come from `&[String]` or
    /// `&[&str]` without making every decoder generic over the key type.
    keys: Vec<&'a str>,
}

impl<'a> Records<'a> {
    /// The records `values`, with no keys.
    pub fn new(values: &'a [Bytes]) -> Records<'a> {
        Records {
            values,
            keys: Vec::new(),
        }
    }

    /// Names each record by its key, for error messages. An empty key
    /// names no record.
    ///
    /// # Errors
    /// InvalidArgument when there are more or fewer keys than records.
    pub fn with_keys<K: AsRef<str>>(
        mut self,
        keys: &'a [K],
    ) -> Result<Records<'a>> {
        if keys.len() != self.values.len() {
            return Err(Error::invalid_argument(format!(
                "{} keys given for {} records",
                keys.len(),
                self.values.len()
            )));
        }
        self.keys = keys.iter().map(AsRef::as_ref).collect();
        Ok(self)
    }

    /// The records.
    pub fn values(&self) -> &'a [Bytes] {
        self.values
    }

    /// The number of records.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// True when there are no records.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The key of record `i`, if keys were given and it is not empty.
    pub fn key(&self, i: usize) -> Option<&'a str> {
        self.keys.get(i).copied().filter(|k| !k.is_empty())
    }

    /// Names record `i` in `err`: by its key if it has one, otherwise by
    /// its position when the batch has more than one record.
    pub(crate) fn name_in(&self, i: usize, err: Error) -> Error {
        match self.key(i) {
            Some(k) => err.with_key(k),
            None if self.values.len() > 1 => {
                let msg = format!("{} in record {i}", err.message());
                err.with_message(msg)
            }
            None => err,
        }
    }
}

impl<'a> From<&'a [Bytes]> for Records<'a> {
    fn from(values: &'a [Bytes]) -> Records<'a> {
        Records::new(values)
    }
}

impl<'a> From<&'a Vec<Bytes>> for Records<'a> {
    fn from(values: &'a Vec<Bytes>) -> Records<'a> {
        Records::new(values)
    }
}

impl<'a, const N: usize> From<&'a [Bytes; N]> for Records<'a> {
    fn from(values: &'a [Bytes; N]) -> Records<'a> {
        Records::new(values)
    }
}

impl<'a> From<&'a Records<'a>> for Records<'a> {
    fn from(records: &'a Records<'a>) -> Records<'a> {
        records.clone()
    }
}
