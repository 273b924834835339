//! `decode_csv`: CSV records to typed columns.
//!
//! A [`CsvDecoder`] is configured once (one [`RecordDefault`] per output
//! column, plus the options of TensorFlow's `tf.io.decode_csv`) and then
//! decodes records: [`CsvDecoder::decode`] turns one record into one scalar
//! per column, and [`CsvDecoder::decode_batch`] turns many records into one
//! rank-1 tensor per column, writing straight into the column vectors.
//!
//! ```
//! use bytes::Bytes;
//! use feedstock::decode::csv::{CsvDecoder, RecordDefault};
//! use feedstock::decode::Records;
//! use feedstock::DType;
//!
//! let decoder = CsvDecoder::builder(vec![
//!     RecordDefault::required(DType::I64)?,
//!     RecordDefault::string("unknown"),
//!     RecordDefault::f32(-1.0),
//! ])
//! .na_value("NA")
//! .build()?;
//!
//! let records = [
//!     Bytes::from_static(b"1,\"Loch Ness, North Shore\",16.5"),
//!     Bytes::from_static(b"2,,NA"),
//! ];
//! let columns = decoder.decode_batch(&records)?;
//! assert_eq!(columns[0].as_slice::<i64>()?, &[1, 2]);
//! assert_eq!(columns[1].as_slice::<Bytes>()?[0], "Loch Ness, North Shore");
//! assert_eq!(columns[1].as_slice::<Bytes>()?[1], "unknown");
//! assert_eq!(columns[2].as_slice::<f32>()?, &[16.5, -1.0]);
//!
//! let err = decoder
//!     .decode(&Bytes::from_static(b"3,x,1.5.0"), "a.csv:3")
//!     .unwrap_err();
//! assert_eq!(
//!     err.to_string(),
//!     "InvalidArgument: not a valid float32: \"1.5.0\" \
//!      (key a.csv:3, field column 2)"
//! );
//!
//! // In a batch, Records::with_keys names each record in errors.
//! let bad = [records[0].clone(), Bytes::from_static(b"x,y,1")];
//! let keyed = Records::new(&bad).with_keys(&["b.csv:1", "b.csv:2"])?;
//! let err = decoder.decode_batch(keyed).unwrap_err();
//! assert_eq!(err.key(), Some("b.csv:2"));
//! # Ok::<(), feedstock::Error>(())
//! ```
//!
//! # Semantics
//!
//! These follow TensorFlow's `DecodeCSV` kernel:
//!
//! - A record is split on `field_delim`. With `use_quote_delim` (the
//!   default), a field that starts with `"` is quoted (RFC 4180): `""`
//!   inside stands for one quote, and delimiters, `\n` and `\r` inside
//!   belong to the field. The closing quote must be followed by the
//!   delimiter or the end of the record. An unquoted field may contain
//!   neither a quote nor `\n` / `\r`. Without `use_quote_delim`, quotes are
//!   ordinary characters.
//! - `\n` and `\r` where a field would start are skipped (TensorFlow's
//!   kernel does this, so a record that still carries its line ending
//!   after a delimiter decodes the same as one without). A record ending
//!   in the delimiter has an empty last field; an empty record has no
//!   fields at all.
//! - A field that is empty or equal to `na_value` takes its column's
//!   default; a column without a default is required, and such a field is
//!   an error. Other fields are parsed as the column's dtype, as Abseil's
//!   `SimpleAtoi` / `SimpleAtof` do: surrounding ASCII whitespace is
//!   ignored; an integer is an optional sign and decimal digits, and one
//!   that does not parse or overflows its dtype is an error; a float is
//!   decimal with an optional exponent, hexadecimal (`0x1.8p3`), or
//!   `inf`, `infinity`, `nan` in any case, and one beyond its dtype's
//!   range becomes ±infinity. String fields are kept as they are, whitespace included.
//! - With `select_cols`, only those columns are decoded and the record may
//!   have more; fields after the last selected column are not examined.
//!
//! Every error is [`Kind::InvalidArgument`](crate::Kind) and names the
//! record key ([`Error::key`]) and the column ([`Error::field`], `"column
//! N"`, counting the record's columns from 0 whether selected or not).

mod split;

use bytes::Bytes;

use self::split::{unescape, FieldError, Span, Splitter};
use crate::decode::{number, Records};
use crate::error::{Error, Result};
use crate::tensor::{DType, Data, Tensor};

/// The default of one CSV column: its dtype and, unless the column is
/// required, the value an empty or `na_value` field takes.
///
/// This is TensorFlow's `record_defaults` entry: a tensor of the column's
/// dtype with one element (the default) or none (the column is required).
#[derive(Debug, Clone, PartialEq)]
pub struct RecordDefault {
    value: DefaultValue,
}

/// The dtype and optional value of a column default.
#[derive(Debug, Clone, PartialEq)]
enum DefaultValue {
    I32(Option<i32>),
    I64(Option<i64>),
    F32(Option<f32>),
    F64(Option<f64>),
    String(Option<Bytes>),
}

impl RecordDefault {
    /// A required column of `dtype`: an empty field is an error.
    ///
    /// # Errors
    /// InvalidArgument when `dtype` is not one `decode_csv` supports
    /// (`int32`, `int64`, `float32`, `float64`, `string`).
    pub fn required(dtype: DType) -> Result<RecordDefault> {
        let value = match dtype {
            DType::I32 => DefaultValue::I32(None),
            DType::I64 => DefaultValue::I64(None),
            DType::F32 => DefaultValue::F32(None),
            DType::F64 => DefaultValue::F64(None),
            DType::String => DefaultValue::String(None),
            other => {
                return Err(Error::invalid_argument(format!(
                    "decode_csv does not support dtype {other} (use int32, \
                     int64, float32, float64 or string)"
                )))
            }
        };
        Ok(RecordDefault { value })
    }

    /// An `int32` column defaulting to `v`.
    pub fn i32(v: i32) -> RecordDefault {
        RecordDefault {
            value: DefaultValue::I32(Some(v)),
        }
    }

    /// An `int64` column defaulting to `v`.
    pub fn i64(v: i64) -> RecordDefault {
        RecordDefault {
            value: DefaultValue::I64(Some(v)),
        }
    }

    /// A `float32` column defaulting to `v`.
    pub fn f32(v: f32) -> RecordDefault {
        RecordDefault {
            value: DefaultValue::F32(Some(v)),
        }
    }

    /// A `float64` column defaulting to `v`.
    pub fn f64(v: f64) -> RecordDefault {
        RecordDefault {
            value: DefaultValue::F64(Some(v)),
        }
    }

    /// A `string` column defaulting to `v`.
    pub fn string(v: impl Into<Bytes>) -> RecordDefault {
        RecordDefault {
            value: DefaultValue::String(Some(v.into())),
        }
    }

    /// A default from a TensorFlow-style tensor: rank 0 or 1 with one
    /// element (the default value) or none (a required column).
    ///
    /// # Errors
    /// InvalidArgument for an unsupported dtype, a rank above 1 or more
    /// than one element.
    pub fn from_tensor(t: &Tensor) -> Result<RecordDefault> {
        if t.rank() > 1 || t.num_elements() > 1 {
            return Err(Error::invalid_argument(format!(
                "a record default has at most one element and rank 1, got \
                 shape {}",
                t.shape()
            )));
        }
        let mut d = RecordDefault::required(t.dtype())?;
        if t.num_elements() == 1 {
            d.value = match t.data() {
                Data::I32(v) => DefaultValue::I32(Some(v[0])),
                Data::I64(v) => DefaultValue::I64(Some(v[0])),
                Data::F32(v) => DefaultValue::F32(Some(v[0])),
                Data::F64(v) => DefaultValue::F64(Some(v[0])),
                Data::String(v) => DefaultValue::String(Some(v[0].clone())),
                _ => unreachable!("required() accepted only these dtypes"),
            };
        }
        Ok(d)
    }

    /// The column's dtype.
    pub fn dtype(&self) -> DType {
        match self.value {
            DefaultValue::I32(_) => DType::I32,
            DefaultValue::I64(_) => DType::I64,
            DefaultValue::F32(_) => DType::F32,
            DefaultValue::F64(_) => DType::F64,
            DefaultValue::String(_) => DType::String,
        }
    }

    /// True when the column has no default, so that an empty field is an
    /// error.
    pub fn is_required(&self) -> bool {
        match &self.value {
            DefaultValue::I32(v) => v.is_none(),
            DefaultValue::I64(v) => v.is_none(),
            DefaultValue::F32(v) => v.is_none(),
            DefaultValue::F64(v) => v.is_none(),
            DefaultValue::String(v) => v.is_none(),
        }
    }
}

/// Configures a [`CsvDecoder`]; made by [`CsvDecoder::builder`].
///
/// The defaults match `tf.io.decode_csv`: `field_delim` `,`,
/// `use_quote_delim` on, no `na_value`, every column selected.
#[derive(Debug, Clone)]
pub struct CsvDecoderBuilder {
    /// One default per output column.
    defaults: Vec<RecordDefault>,
    /// The byte between fields.
    field_delim: u8,
    /// Whether `"` starts a quoted field.
    use_quote_delim: bool,
    /// The field text that stands for a missing value, if any.
    na_value: Option<Bytes>,
    /// The record columns to decode, strictly increasing; `None` for all.
    select_cols: Option<Vec<usize>>,
}

impl CsvDecoderBuilder {
    /// The byte that separates fields (default `,`).
    pub fn field_delim(&mut self, delim: u8) -> &mut CsvDecoderBuilder {
        self.field_delim = delim;
        self
    }

    /// Whether a field starting with `"` is quoted, RFC 4180 style
    /// (default true). When false, quotes are ordinary characters.
    pub fn use_quote_delim(&mut self, yes: bool) -> &mut CsvDecoderBuilder {
        self.use_quote_delim = yes;
        self
    }

    /// The field text that stands for a missing value: such a field takes
    /// its column's default, like an empty one. The comparison is with the
    /// field's text after unquoting, so `NA` and `"NA"` both match `NA`.
    pub fn na_value(
        &mut self,
        na: impl Into<Bytes>,
    ) -> &mut CsvDecoderBuilder {
        self.na_value = Some(na.into());
        self
    }

    /// Decodes only these record columns (0-based, strictly increasing),
    /// one per default; the record may have more columns.
    pub fn select_cols(
        &mut self,
        cols: impl Into<Vec<usize>>,
    ) -> &mut CsvDecoderBuilder {
        self.select_cols = Some(cols.into());
        self
    }

    /// Builds the decoder.
    ///
    /// # Errors
    /// InvalidArgument when there are no defaults, `select_cols` is not
    /// strictly increasing or its length differs from the number of
    /// defaults, or the delimiter is `\n`, `\r`, or `"` while quoting is
    /// on (TensorFlow accepts those and then splits records in ways no
    /// file means).
    pub fn build(&self) -> Result<CsvDecoder> {
        if self.defaults.is_empty() {
            return Err(Error::invalid_argument(
                "decode_csv needs at least one record default",
            ));
        }
        if let Some(cols) = &self.select_cols {
            if cols.len() != self.defaults.len() {
                return Err(Error::invalid_argument(format!(
                    "select_cols has {} columns but there are {} record \
                     defaults",
                    cols.len(),
                    self.defaults.len()
                )));
            }
            if cols.windows(2).any(|w| w[0] >= w[1]) {
                return Err(Error::invalid_argument(format!(
                    "select_cols must be strictly increasing, got {cols:?}"
                )));
            }
        }
        let d = self.field_delim;
        if d == b'\n' || d == b'\r' || (d == b'"' && self.use_quote_delim) {
            return Err(Error::invalid_argument(format!(
                "field_delim {:?} cannot be used{}",
                d as char,
                if d == b'"' {
                    " with use_quote_delim"
                } else {
                    ""
                }
            )));
        }
        let na_value = self.na_value.clone().filter(|na| !na.is_empty());
        let columns: Vec<usize> = match &self.select_cols {
            Some(cols) => cols.clone(),
            None => (0..self.defaults.len()).collect(),
        };
        Ok(CsvDecoder {
            defaults: self.defaults.clone(),
            columns,
            selective: self.select_cols.is_some(),
            splitter: Splitter {
                delim: d,
                quoting: self.use_quote_delim,
            },
            na_value,
        })
    }
}

/// Decodes CSV records into typed tensors, as `tf.io.decode_csv` does.
///
/// Built once with [`CsvDecoder::builder`] (or [`CsvDecoder::new`] for
/// the default options); the configuration cannot change afterwards, and
/// a decoder can be shared by threads. See the [module docs](self) for the
/// exact semantics.
#[derive(Debug, Clone)]
pub struct CsvDecoder {
    /// One default per output column.
    defaults: Vec<RecordDefault>,
    /// The record column of each output column.
    columns: Vec<usize>,
    /// True when `select_cols` was given (the record may be longer).
    selective: bool,
    /// How records are split into fields.
    splitter: Splitter,
    /// The missing-value marker; `None` when unset or empty (an empty
    /// field is missing anyway).
    na_value: Option<Bytes>,
}

impl CsvDecoder {
    /// A builder for a decoder with one output column per default.
    pub fn builder(defaults: Vec<RecordDefault>) -> CsvDecoderBuilder {
        CsvDecoderBuilder {
            defaults,
            field_delim: b',',
            use_quote_delim: true,
            na_value: None,
            select_cols: None,
        }
    }

    /// A decoder with the default options (`,`, quoting, no `na_value`,
    /// all columns).
    ///
    /// # Errors
    /// As [`CsvDecoderBuilder::build`].
    pub fn new(defaults: Vec<RecordDefault>) -> Result<CsvDecoder> {
        CsvDecoder::builder(defaults).build()
    }

    /// The number of output columns.
    pub fn num_columns(&self) -> usize {
        self.defaults.len()
    }

    /// The dtype of each output column.
    pub fn dtypes(&self) -> Vec<DType> {
        self.defaults.iter().map(RecordDefault::dtype).collect()
    }

    /// Decodes one record into one scalar tensor per column. String fields
    /// that need no unquoting share `record`'s buffer. `key` (the record
    /// key, such as `file:7`, or `""`) is named in errors.
    ///
    /// # Errors
    /// InvalidArgument naming `key` and the column, for a malformed field,
    /// a wrong number of fields or a missing required field.
    pub fn decode(&self, record: &Bytes, key: &str) -> Result<Vec<Tensor>> {
        let one = std::slice::from_ref(record);
        let batch = self.decode_batch(Records::new(one).with_keys(&[key])?)?;
        batch.into_iter().map(|t| t.reshape([])).collect()
    }

    /// Decodes a batch of records into one rank-1 tensor per column, of
    /// length `records.len()`. String fields that need no unquoting share
    /// their record's buffer.
    ///
    /// An error names the record by its key when
    /// [`Records::with_keys`] gave one, otherwise by its position in the
    /// batch.
    ///
    /// # Errors
    /// InvalidArgument naming the record and the column, for the first
    /// malformed record.
    pub fn decode_batch<'a>(
        &self,
        records: impl Into<Records<'a>>,
    ) -> Result<Vec<Tensor>> {
        let records = records.into();
        let n = records.len();
        let mut columns: Vec<ColumnBuf> = self
            .defaults
            .iter()
            .map(|d| ColumnBuf::with_capacity(d.dtype(), n))
            .collect();
        let mut spans = Vec::with_capacity(self.columns.len());
        for (i, record) in records.values().iter().enumerate() {
            self.decode_into(record, &mut spans, &mut columns).map_err(
                |e: FieldError| {
                    let e = Error::invalid_argument(e.message)
                        .with_field(format!("column {}", e.column));
                    records.name_in(i, e)
                },
            )?;
        }
        columns
            .into_iter()
            .map(|c| Tensor::from_data([n], c.into_data()))
            .collect()
    }

    /// Splits one record and appends its values to `columns`.
    fn decode_into(
        &self,
        record: &Bytes,
        spans: &mut Vec<Span>,
        columns: &mut [ColumnBuf],
    ) -> Result<(), FieldError> {
        let select = self.selective.then_some(&self.columns[..]);
        self.splitter.split(record, select, spans)?;
        if spans.len() != self.columns.len() {
            let expected = self.columns.len();
            let got = spans.len();
            // The first column that is missing (or, without select_cols,
            // the first one too many).
            let column = if got < expected {
                self.columns[got]
            } else {
                expected
            };
            return Err(FieldError {
                column,
                message: format!(
                    "expected {expected} fields but the record has {got}"
                ),
            });
        }
        for (k, span) in spans.iter().enumerate() {
            self.push_field(record, span, &self.defaults[k], &mut columns[k])
                .map_err(|message| FieldError {
                    column: self.columns[k],
                    message,
                })?;
        }
        Ok(())
    }

    /// Appends one field's value (or its column's default) to `column`.
    fn push_field(
        &self,
        record: &Bytes,
        span: &Span,
        default: &RecordDefault,
        column: &mut ColumnBuf,
    ) -> Result<(), String> {
        let raw = &record[span.start..span.end];
        // Unescaped once, and for a string column kept as the value.
        let unescaped = span.escaped.then(|| unescape(raw));
        let text = unescaped.as_deref().unwrap_or(raw);
        let missing =
            text.is_empty() || self.na_value.as_deref() == Some(text);
        if missing {
            return column
                .push_default(&default.value)
                .ok_or_else(|| "required field is missing".to_owned());
        }
        let bad = |dtype: DType| {
            format!(
                "not a valid {dtype}: \"{}\"",
                String::from_utf8_lossy(text).escape_debug()
            )
        };
        match column {
            ColumnBuf::I32(v) => {
                v.push(number::parse_i32(text).ok_or_else(|| bad(DType::I32))?)
            }
            ColumnBuf::I64(v) => {
                v.push(number::parse_i64(text).ok_or_else(|| bad(DType::I64))?)
            }
            ColumnBuf::F32(v) => {
                v.push(number::parse_f32(text).ok_or_else(|| bad(DType::F32))?)
            }
            ColumnBuf::F64(v) => {
                v.push(number::parse_f64(text).ok_or_else(|| bad(DType::F64))?)
            }
            ColumnBuf::String(v) => v.push(match unescaped {
                Some(text) => Bytes::from(text),
                None => record.slice(span.start..span.end),
            }),
        }
        Ok(())
    }
}

/// A column being filled, one vector per supported dtype.
enum ColumnBuf {
    I32(Vec<i32>),
    I64(Vec<i64>),
    F32(Vec<f32>),
    F64(Vec<f64>),
    String(Vec<Bytes>),
}

impl ColumnBuf {
    fn with_capacity(dtype: DType, n: usize) -> ColumnBuf {
        match dtype {
            DType::I32 => ColumnBuf::I32(Vec::with_capacity(n)),
            DType::I64 => ColumnBuf::I64(Vec::with_capacity(n)),
            DType::F32 => ColumnBuf::F32(Vec::with_capacity(n)),
            DType::F64 => ColumnBuf::F64(Vec::with_capacity(n)),
            _ => ColumnBuf::String(Vec::with_capacity(n)),
        }
    }

    /// Appends the default; `None` when the column is required.
    fn push_default(&mut self, d: &DefaultValue) -> Option<()> {
        match (self, d) {
            (ColumnBuf::I32(v), DefaultValue::I32(x)) => v.push((*x)?),
            (ColumnBuf::I64(v), DefaultValue::I64(x)) => v.push((*x)?),
            (ColumnBuf::F32(v), DefaultValue::F32(x)) => v.push((*x)?),
            (ColumnBuf::F64(v), DefaultValue::F64(x)) => v.push((*x)?),
            (ColumnBuf::String(v), DefaultValue::String(x)) => {
                v.push(x.clone()?)
            }
            _ => unreachable!("columns are made from their defaults"),
        }
        Some(())
    }

    fn into_data(self) -> Data {
        match self {
            ColumnBuf::I32(v) => Data::I32(v),
            ColumnBuf::I64(v) => Data::I64(v),
            ColumnBuf::F32(v) => Data::F32(v),
            ColumnBuf::F64(v) => Data::F64(v),
            ColumnBuf::String(v) => Data::String(v),
        }
    }
}
