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

use bytes::Bytes;

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

/// A field's place in its record: the bytes `start..end` (inside the
/// quotes for a quoted field), and whether they hold `""` escapes.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Span {
    start: usize,
    end: usize,
    escaped: bool,
}

/// A splitting or parsing failure at one record column.
#[derive(Debug)]
struct FieldError {
    column: usize,
    message: String,
}

/// `raw` with every `""` replaced by `"`.
fn unescape(raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.len());
    let mut rest = raw;
    while let Some(q) = memchr::memchr(b'"', rest) {
        // The text up to the first quote of the pair, then past both.
        out.extend_from_slice(&rest[..=q]);
        rest = &rest[(q + 2).min(rest.len())..];
    }
    out.extend_from_slice(rest);
    out
}

/// Records up to this long are split in one pass over 8-byte words
/// ([`Splitter::split_short`]); longer ones with `memchr`.
const SHORT_RECORD: usize = 128;

/// The high bit of every byte of a word.
const HIGH_BITS: u64 = 0x8080_8080_8080_8080;

/// The high bit of each byte of `word` that equals `b`, and no other bit
/// (exact for every byte: no carry crosses from one byte to the next).
fn bytes_equal(word: u64, b: u8) -> u64 {
    let low7 = !HIGH_BITS;
    let v = word ^ (u64::from(b) * 0x0101_0101_0101_0101);
    // A byte's high bit ends up set iff all of its bits were zero.
    !(((v & low7) + low7) | v | low7)
}

/// Splits records into fields with TensorFlow's rules.
///
/// Written by hand rather than with `csv-core`: `csv-core` is deliberately
/// lenient (it accepts `a"b` and `"a"b` and makes a field of them), while
/// TensorFlow rejects both, and it has no notion of TensorFlow's skipping
/// of `\n` / `\r` at the start of a field. The rules are small enough that
/// a direct loop is clearer than adapting a general state machine.
#[derive(Debug, Clone, Copy)]
struct Splitter {
    delim: u8,
    quoting: bool,
}

impl Splitter {
    /// Fills `spans` with the fields of `rec` (only the `select`ed record
    /// columns, if given; splitting stops after the last of them).
    fn split(
        &self,
        rec: &[u8],
        select: Option<&[usize]>,
        spans: &mut Vec<Span>,
    ) -> Result<(), FieldError> {
        spans.clear();
        let n = rec.len();
        if n == 0 {
            return Ok(());
        }
        // Fast path: no quote, CR or LF anywhere means every field is the
        // text between two delimiters.
        if n <= SHORT_RECORD {
            if self.split_short(rec, select, spans) {
                return Ok(());
            }
            spans.clear();
        } else {
            let special = if self.quoting {
                memchr::memchr3(b'"', b'\n', b'\r', rec)
            } else {
                memchr::memchr2(b'\n', b'\r', rec)
            };
            if special.is_none() {
                return self.split_plain(rec, select, spans);
            }
        }
        self.split_general(rec, select, spans)
    }

    /// `split` for any non-empty record, byte by byte, with `spans`
    /// empty.
    fn split_general(
        &self,
        rec: &[u8],
        select: Option<&[usize]>,
        spans: &mut Vec<Span>,
    ) -> Result<(), FieldError> {
        let n = rec.len();
        let mut i = 0;
        let mut column = 0;
        while i < n {
            if rec[i] == b'\n' || rec[i] == b'\r' {
                i += 1;
                continue;
            }
            let (span, next) = if self.quoting && rec[i] == b'"' {
                self.quoted(rec, i + 1, column)?
            } else {
                self.unquoted(rec, i, column)?
            };
            i = next;
            if select.is_none_or(|s| s[spans.len()] == column) {
                spans.push(span);
                if select.is_some_and(|s| s.len() == spans.len()) {
                    return Ok(());
                }
            }
            column += 1;
        }
        if rec[n - 1] == self.delim
            && select.is_none_or(|s| s[spans.len()] == column)
        {
            spans.push(Span {
                start: n,
                end: n,
                escaped: false,
            });
        }
        Ok(())
    }

    /// `split_plain` for a short record, in one pass over its bytes, eight
    /// at a time, that also looks for quotes, CR and LF (a record of a
    /// few numbers is shorter than the set-up of two `memchr` searches,
    /// and a loop over single bytes mispredicts a branch at every
    /// delimiter). Returns false, with `spans` partly filled, at the first
    /// word holding one of those: the record needs the full splitter.
    fn split_short(
        &self,
        rec: &[u8],
        select: Option<&[usize]>,
        spans: &mut Vec<Span>,
    ) -> bool {
        let (mut start, mut column) = (0, 0);
        let words = rec.chunks_exact(8);
        let tail = words.remainder();
        let mut last = [0u8; 8];
        last[..tail.len()].copy_from_slice(tail);
        // Whole words are loaded as they are (copying each into a
        // buffer first stalls the load on the copy's stores); only the
        // last, partial one is padded.
        let whole = words.map(|w| {
            (u64::from_le_bytes(w.try_into().unwrap_or_default()), 8)
        });
        let partial =
            (!tail.is_empty()).then(|| (u64::from_le_bytes(last), tail.len()));
        for (w, (word, len)) in whole.chain(partial).enumerate() {
            // The high bit of each byte of the record (not the padding).
            let valid = HIGH_BITS >> (8 * (8 - len));
            let mut special =
                bytes_equal(word, b'\n') | bytes_equal(word, b'\r');
            if self.quoting {
                special |= bytes_equal(word, b'"');
            }
            if special & valid != 0 {
                return false;
            }
            let mut delims = bytes_equal(word, self.delim) & valid;
            while delims != 0 {
                let end = 8 * w + delims.trailing_zeros() as usize / 8;
                delims &= delims - 1;
                if select.is_none_or(|s| s[spans.len()] == column) {
                    spans.push(Span {
                        start,
                        end,
                        escaped: false,
                    });
                    if select.is_some_and(|s| s.len() == spans.len()) {
                        return true;
                    }
                }
                start = end + 1;
                column += 1;
            }
        }
        if select.is_none_or(|s| s[spans.len()] == column) {
            spans.push(Span {
                start,
                end: rec.len(),
                escaped: false,
            });
        }
        true
    }

    /// `split` for a non-empty record without quotes, CR or LF.
    fn split_plain(
        &self,
        rec: &[u8],
        select: Option<&[usize]>,
        spans: &mut Vec<Span>,
    ) -> Result<(), FieldError> {
        let mut start = 0;
        let ends = memchr::memchr_iter(self.delim, rec).chain([rec.len()]);
        for (column, end) in ends.enumerate() {
            if select.is_none_or(|s| s[spans.len()] == column) {
                spans.push(Span {
                    start,
                    end,
                    escaped: false,
                });
                if select.is_some_and(|s| s.len() == spans.len()) {
                    break;
                }
            }
            start = end + 1;
        }
        Ok(())
    }

    /// The unquoted field starting at `i`, and where the next one starts.
    fn unquoted(
        &self,
        rec: &[u8],
        i: usize,
        column: usize,
    ) -> Result<(Span, usize), FieldError> {
        let end =
            memchr::memchr(self.delim, &rec[i..]).map_or(rec.len(), |e| i + e);
        let field = &rec[i..end];
        let bad = field.iter().position(|&b| {
            b == b'\n' || b == b'\r' || (self.quoting && b == b'"')
        });
        if let Some(p) = bad {
            let what = match field[p] {
                b'"' => "a quote (quote the whole field and double the quote)",
                b'\n' => "a line feed (quote the field)",
                _ => "a carriage return (quote the field)",
            };
            return Err(FieldError {
                column,
                message: format!(
                    "unquoted field contains {what} at byte {}",
                    i + p
                ),
            });
        }
        let span = Span {
            start: i,
            end,
            escaped: false,
        };
        Ok((span, end + 1))
    }

    /// The quoted field whose text starts at `start` (just after the
    /// opening quote), and where the next field starts.
    fn quoted(
        &self,
        rec: &[u8],
        start: usize,
        column: usize,
    ) -> Result<(Span, usize), FieldError> {
        let mut j = start;
        let mut escaped = false;
        loop {
            let Some(q) = memchr::memchr(b'"', &rec[j..]) else {
                return Err(FieldError {
                    column,
                    message: format!(
                        "quoted field starting at byte {} has no closing \
                         quote",
                        start - 1
                    ),
                });
            };
            j += q;
            match rec.get(j + 1) {
                None => break,
                Some(&b) if b == self.delim => break,
                Some(b'"') => {
                    escaped = true;
                    j += 2;
                }
                Some(_) => {
                    return Err(FieldError {
                        column,
                        message: format!(
                            "quote in wrong place at byte {j}: a quote inside \
                             a quoted field must be doubled, and the closing \
                             quote must be followed by the delimiter or the \
                             end of the record"
                        ),
                    })
                }
            }
        }
        let span = Span {
            start,
            end: j,
            escaped,
        };
        Ok((span, j + 2))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(rec: &str, quoting: bool) -> Result<Vec<String>, String> {
        let s = Splitter {
            delim: b',',
            quoting,
        };
        let mut spans = Vec::new();
        s.split(rec.as_bytes(), None, &mut spans)
            .map_err(|e| e.message)?;
        Ok(spans
            .iter()
            .map(|sp| {
                let raw = &rec.as_bytes()[sp.start..sp.end];
                let t = if sp.escaped {
                    unescape(raw)
                } else {
                    raw.to_vec()
                };
                String::from_utf8(t).unwrap()
            })
            .collect())
    }

    #[test]
    fn fast_and_general_paths_agree() {
        // The same fields with and without something that forces the
        // general path (a CR at the start of a field is skipped).
        for rec in ["a,b,c", "a,,c,", ",", "abc", "a,b,"] {
            let plain = split(rec, true).unwrap();
            let general = split(&format!("\r{rec}"), true).unwrap();
            assert_eq!(plain, general, "{rec:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn every_path_splits_as_the_general_one(
            rec in "[a1, \"\r\n]{1,40}",
            quoting: bool,
            long: bool,
            select in proptest::option::of(
                proptest::collection::btree_set(0usize..6, 1..4)
            ),
        ) {
            // Padded past SHORT_RECORD, the record takes the memchr path.
            let rec = if long {
                format!("{}{rec}", "x".repeat(SHORT_RECORD))
            } else {
                rec
            };
            let s = Splitter { delim: b',', quoting };
            let select: Option<Vec<usize>> = select.map(|s| s.into_iter().collect());
            let (mut fast, mut general) = (Vec::new(), Vec::new());
            let a = s.split(rec.as_bytes(), select.as_deref(), &mut fast);
            let b = s.split_general(rec.as_bytes(), select.as_deref(), &mut general);
            proptest::prop_assert_eq!(
                a.map_err(|e| (e.column, e.message)),
                b.map_err(|e| (e.column, e.message)),
                "{:?}", rec
            );
            proptest::prop_assert_eq!(fast, general, "{:?}", rec);
        }
    }

    #[test]
    fn bytes_equal_marks_exactly_the_equal_bytes() {
        for b in [0u8, 1, b',', 0x7f, 0x80, 0xff] {
            let word = [b, 0, 1, b, 0x80, 0xff, b ^ 1, b];
            let mask = bytes_equal(u64::from_le_bytes(word), b);
            for (i, &x) in word.iter().enumerate() {
                let marked = mask >> (8 * i) & 0xff;
                assert_eq!(
                    marked,
                    if x == b { 0x80 } else { 0 },
                    "{b} at {i}"
                );
            }
        }
    }

    #[test]
    fn quoted_fields_follow_rfc_4180() {
        assert_eq!(split(r#""a""b",c"#, true).unwrap(), [r#"a"b"#, "c"]);
        assert_eq!(split(r#""""",x"#, true).unwrap(), [r#"""#, "x"]);
        assert_eq!(split(r#""a,""b""#, true).unwrap(), [r#"a,"b"#]);
        assert_eq!(split("\"\",\"\"", true).unwrap(), ["", ""]);
        assert_eq!(split("\"a\nb\",\"c\"", true).unwrap(), ["a\nb", "c"]);
        assert!(split(r#""a"b"#, true).is_err());
        assert!(split(r#""ab"#, true).is_err());
        assert!(split(r#""ab"""#, true).is_err());
    }

    #[test]
    fn unescape_collapses_doubled_quotes() {
        assert_eq!(unescape(br#"a""b"""#), br#"a"b""#);
        assert_eq!(unescape(b"\"\""), b"\"");
        assert_eq!(unescape(b"\"\"\"\""), b"\"\"");
        assert_eq!(unescape(br#"""x"""#), br#""x""#);
        assert_eq!(unescape(b"plain"), b"plain");
    }
}
