//! The decode stage of a [`Dataset`](super::Dataset): turns a block of
//! records into one value per component, each with one row per record.
//! The reader threads run it, a block at a time, so decoding is parallel
//! and batched.

use std::fmt;
use std::sync::Arc;

use bytes::Bytes;

use super::source::Fnv;
use crate::decode::csv::CsvDecoder;
use crate::decode::example::{parse_example, FeatureSpec};
use crate::decode::raw::{decode_raw_batch, ByteOrder};
use crate::decode::Records;
use crate::error::{Error, Result};
use crate::tensor::{DType, Data, Tensor, Value};

/// A decoder of blocks of records: the extension point for a format of
/// one's own (most users call [`Dataset::parse`](super::Dataset::parse),
/// [`decode_csv`](super::Dataset::decode_csv),
/// [`decode_raw`](super::Dataset::decode_raw) or
/// [`map`](super::Dataset::map) instead).
///
/// It must be a pure function of the records: a resumed pipeline decodes
/// some records again and must get the same values.
pub trait Decode: Send + Sync + fmt::Debug {
    /// Decodes `records` into one value per component, each with a
    /// leading axis of one row per record. An error should name the
    /// record through [`Records::key`] when keys are given (the engine
    /// decodes a failed block again with keys to name it).
    ///
    /// # Errors
    ///
    /// Those of the format, naming the record.
    fn decode(&self, records: Records<'_>) -> Result<Vec<Value>>;

    /// Decodes rows that are already tensors (arrays in memory): one
    /// value per component, each with a leading row axis.
    ///
    /// # Errors
    ///
    /// By default [`InvalidArgument`](crate::Kind::InvalidArgument):
    /// a record decoder cannot read arrays.
    fn decode_rows(&self, columns: Vec<Value>) -> Result<Vec<Value>> {
        let _ = columns;
        Err(Error::invalid_argument(format!(
            "{self:?} decodes records, not arrays in memory"
        )))
    }

    /// As [`decode`](Self::decode), but rows that differ in shape may be
    /// kept apart ([`Column::Rows`]), for a
    /// [`padded_batch`](super::Dataset::padded_batch) to pad. By default,
    /// `decode`'s stacked values.
    ///
    /// # Errors
    ///
    /// As [`decode`](Self::decode).
    fn decode_columns(&self, records: Records<'_>) -> Result<Vec<Column>> {
        Ok(self
            .decode(records)?
            .into_iter()
            .map(Column::Stacked)
            .collect())
    }

    /// As [`decode_rows`](Self::decode_rows), keeping apart rows that
    /// differ in shape as [`decode_columns`](Self::decode_columns) does.
    ///
    /// # Errors
    ///
    /// As [`decode_rows`](Self::decode_rows).
    fn decode_rows_columns(&self, columns: Vec<Value>) -> Result<Vec<Column>> {
        Ok(self
            .decode_rows(columns)?
            .into_iter()
            .map(Column::Stacked)
            .collect())
    }

    /// The components' names, when the decoder knows them.
    fn names(&self) -> Option<Arc<[String]>> {
        None
    }

    /// Feeds into `h` what the decoded values depend on besides the
    /// records (the spec, the defaults, the dtype): a checkpoint is
    /// restored only into a pipeline that decodes the same way.
    fn fingerprint(&self, h: &mut Fnv);
}

/// One decoded component of a block of records.
#[derive(Debug, Clone)]
pub enum Column {
    /// Every row's value stacked along a leading row axis.
    Stacked(Value),
    /// One value per row, without a row axis: rows that differ in shape
    /// (a batch of them needs padding).
    Rows(Vec<Value>),
}

/// The records themselves, as one string component (no decoding).
pub(crate) fn records_column(records: &[Bytes]) -> Result<Value> {
    Ok(Value::Dense(Tensor::from_data(
        [records.len()],
        Data::String(records.to_vec()),
    )?))
}

/// `tf.train.Example` records parsed with a feature spec.
#[derive(Debug, Clone)]
pub(crate) struct ParseExample(pub(crate) FeatureSpec);

impl Decode for ParseExample {
    fn decode(&self, records: Records<'_>) -> Result<Vec<Value>> {
        Ok(parse_example(records, &self.0)?.into_values())
    }

    fn names(&self) -> Option<Arc<[String]>> {
        Some(self.0.names().map(str::to_owned).collect())
    }

    fn fingerprint(&self, h: &mut Fnv) {
        // Feature by feature: the spec's Debug form holds hash maps,
        // whose order differs between processes.
        h.bytes(b"parse_example");
        for (name, kind) in self.0.iter() {
            h.bytes(name.as_bytes());
            h.bytes(format!("{kind:?}").as_bytes());
        }
    }
}

/// CSV lines decoded into typed columns.
#[derive(Debug, Clone)]
pub(crate) struct DecodeCsv(pub(crate) CsvDecoder);

impl Decode for DecodeCsv {
    fn decode(&self, records: Records<'_>) -> Result<Vec<Value>> {
        Ok(self
            .0
            .decode_batch(records)?
            .into_iter()
            .map(Value::Dense)
            .collect())
    }

    fn fingerprint(&self, h: &mut Fnv) {
        h.bytes(b"decode_csv");
        h.bytes(format!("{:?}", self.0).as_bytes());
    }
}

/// Records reinterpreted as numbers (`decode_raw`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct DecodeRaw {
    pub(crate) dtype: DType,
    pub(crate) order: ByteOrder,
}

impl Decode for DecodeRaw {
    fn decode(&self, records: Records<'_>) -> Result<Vec<Value>> {
        let t = decode_raw_batch(records, self.dtype, self.order)?;
        Ok(vec![Value::Dense(t)])
    }

    fn fingerprint(&self, h: &mut Fnv) {
        h.bytes(b"decode_raw");
        h.bytes(self.dtype.name().as_bytes());
        h.u64(matches!(self.order, ByteOrder::BigEndian) as u64);
    }
}

/// A user's function from one example (its components) to another, run
/// per example in the reader threads after the decoder before it.
pub(crate) type MapFn = dyn Fn(Vec<Value>) -> Result<Vec<Value>> + Send + Sync;

/// A decoder followed by a user's per-example function.
#[derive(Clone)]
pub(crate) struct Map {
    /// The stage before (`None`: the records as one string component).
    pub(crate) inner: Option<Arc<dyn Decode>>,
    pub(crate) f: Arc<MapFn>,
    /// The output's names, if given.
    pub(crate) names: Option<Arc<[String]>>,
    /// Tells apart pipelines whose functions differ (a closure cannot be
    /// hashed): the caller's label, or none.
    pub(crate) label: String,
}

impl fmt::Debug for Map {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Map")
            .field("inner", &self.inner)
            .field("names", &self.names)
            .finish_non_exhaustive()
    }
}

impl Map {
    /// Runs the function over each row of `columns`.
    fn apply(
        &self,
        columns: Vec<Value>,
        key: &dyn Fn(usize) -> Option<String>,
    ) -> Result<Vec<Column>> {
        let n = columns.first().map_or(0, super::source::rows_of);
        let per_column: Vec<Vec<Value>> =
            columns.iter().map(unstack).collect::<Result<_>>()?;
        let mut out: Vec<Vec<Value>> = Vec::new();
        for i in 0..n {
            let example: Vec<Value> =
                per_column.iter().map(|c| c[i].clone()).collect();
            let mapped = (self.f)(example).map_err(|e| match key(i) {
                Some(k) => e.with_key(k),
                None => e,
            })?;
            if out.is_empty() {
                out =
                    (0..mapped.len()).map(|_| Vec::with_capacity(n)).collect();
            } else if mapped.len() != out.len() {
                return Err(Error::invalid_argument(format!(
                    "the map function gave {} components for one example and {} for another",
                    out.len(),
                    mapped.len()
                )));
            }
            for (o, v) in out.iter_mut().zip(mapped) {
                o.push(v);
            }
        }
        Ok(out.into_iter().map(column).collect())
    }

    fn inner_columns(&self, records: Records<'_>) -> Result<Vec<Column>> {
        let columns = match &self.inner {
            Some(d) => d.decode(records.clone())?,
            None => vec![records_column(records.values())?],
        };
        self.apply(columns, &|i| records.key(i).map(str::to_owned))
    }
}

/// Stacks rows into one value if they share a shape (and kind), else
/// keeps them apart.
fn column(rows: Vec<Value>) -> Column {
    let same = rows.windows(2).all(|w| match (&w[0], &w[1]) {
        (Value::Dense(a), Value::Dense(b)) => {
            a.shape() == b.shape() && a.dtype() == b.dtype()
        }
        (Value::Sparse(a), Value::Sparse(b)) => {
            a.dims() == b.dims() && a.dtype() == b.dtype()
        }
        _ => false,
    });
    if same && !rows.is_empty() {
        if let Ok(v) = stack(&rows) {
            return Column::Stacked(v);
        }
    }
    Column::Rows(rows)
}

/// The stacked values of `columns`, or an error naming the first that
/// holds rows of different shapes.
fn stacked(columns: Vec<Column>) -> Result<Vec<Value>> {
    columns
        .into_iter()
        .enumerate()
        .map(|(i, c)| match c {
            Column::Stacked(v) => Ok(v),
            Column::Rows(_) => Err(Error::invalid_argument(format!(
                "the map function gave component {i} different shapes for \
                 different examples: batch them with padded_batch"
            ))),
        })
        .collect()
}

impl Decode for Map {
    fn decode(&self, records: Records<'_>) -> Result<Vec<Value>> {
        stacked(self.inner_columns(records)?)
    }

    fn decode_columns(&self, records: Records<'_>) -> Result<Vec<Column>> {
        self.inner_columns(records)
    }

    fn decode_rows(&self, columns: Vec<Value>) -> Result<Vec<Value>> {
        stacked(self.decode_rows_columns(columns)?)
    }

    fn decode_rows_columns(&self, columns: Vec<Value>) -> Result<Vec<Column>> {
        let columns = match &self.inner {
            Some(d) => d.decode_rows(columns)?,
            None => columns,
        };
        self.apply(columns, &|_| None)
    }

    fn names(&self) -> Option<Arc<[String]>> {
        self.names.clone()
    }

    fn fingerprint(&self, h: &mut Fnv) {
        match &self.inner {
            Some(d) => d.fingerprint(h),
            None => h.bytes(b"records"),
        }
        h.bytes(b"map");
        h.bytes(self.label.as_bytes());
    }
}

/// A decoder followed by a user's function over a whole block's
/// columns (rows in, the same rows out): the vectorised form of
/// [`Map`].
#[derive(Clone)]
pub(crate) struct MapBatch {
    /// The stage before (`None`: the records as one string component).
    pub(crate) inner: Option<Arc<dyn Decode>>,
    pub(crate) f: Arc<MapFn>,
    /// Tells apart pipelines whose functions differ.
    pub(crate) label: String,
}

impl fmt::Debug for MapBatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MapBatch")
            .field("inner", &self.inner)
            .finish_non_exhaustive()
    }
}

impl MapBatch {
    fn apply(&self, columns: Vec<Value>) -> Result<Vec<Value>> {
        let n = columns.first().map_or(0, super::source::rows_of);
        let out = (self.f)(columns)?;
        if let Some(v) = out.iter().find(|v| super::source::rows_of(v) != n) {
            return Err(Error::invalid_argument(format!(
                "the batch map function gave {} rows for a block of {n}: it \
                 must keep one row per example",
                super::source::rows_of(v)
            )));
        }
        Ok(out)
    }
}

impl Decode for MapBatch {
    fn decode(&self, records: Records<'_>) -> Result<Vec<Value>> {
        let columns = match &self.inner {
            Some(d) => d.decode(records.clone())?,
            None => vec![records_column(records.values())?],
        };
        self.apply(columns)
    }

    fn decode_rows(&self, columns: Vec<Value>) -> Result<Vec<Value>> {
        let columns = match &self.inner {
            Some(d) => d.decode_rows(columns)?,
            None => columns,
        };
        self.apply(columns)
    }

    fn fingerprint(&self, h: &mut Fnv) {
        match &self.inner {
            Some(d) => d.fingerprint(h),
            None => h.bytes(b"records"),
        }
        h.bytes(b"map_batch");
        h.bytes(self.label.as_bytes());
    }
}

/// The rows of a value, each without the row axis.
fn unstack(v: &Value) -> Result<Vec<Value>> {
    Ok(match v {
        Value::Dense(t) => t.unstack().into_iter().map(Value::Dense).collect(),
        Value::Sparse(s) => {
            s.unstack()?.into_iter().map(Value::Sparse).collect()
        }
    })
}

/// Rows stacked along a new axis 0.
fn stack(rows: &[Value]) -> Result<Value> {
    match rows.first() {
        None => Err(Error::internal("a map over no rows")),
        Some(Value::Dense(_)) => {
            let ts: Vec<Tensor> = rows
                .iter()
                .map(|v| v.dense().cloned())
                .collect::<Result<_>>()?;
            Tensor::stack(&ts).map(Value::Dense)
        }
        Some(Value::Sparse(_)) => {
            let ss: Vec<_> = rows
                .iter()
                .map(|v| v.sparse().cloned())
                .collect::<Result<_>>()?;
            crate::tensor::SparseTensor::stack(&ss).map(Value::Sparse)
        }
    }
}
