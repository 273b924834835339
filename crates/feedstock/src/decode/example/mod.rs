//! The `parse_example` family: serialized `tf.train.Example` and
//! `SequenceExample` records to tensors.
//!
//! A [`FeatureSpec`] names the features to read and what each becomes
//! (TensorFlow's `FixedLenFeature`, `VarLenFeature`, `SparseFeature` and
//! `FixedLenSequenceFeature`, see [`FeatureKind`]).
//! [`parse_single_example`] parses one record, [`parse_example`] a batch
//! (every output gains a leading batch dimension), and
//! [`parse_single_sequence_example`] / [`parse_sequence_example`] do the
//! same for `SequenceExample`s. The result, [`Parsed`], holds one
//! [`Value`] per feature, in spec order, by name.
//!
//! ```
//! use bytes::Bytes;
//! use feedstock::decode::example::{parse_single_example, FeatureSpec};
//! use feedstock::proto::{feature, Example, Feature, Features, Int64List};
//! use feedstock::{DType, Tensor};
//! use prost::Message;
//!
//! let label = Feature {
//!     kind: Some(feature::Kind::Int64List(Int64List { value: vec![7] })),
//! };
//! let example = Example {
//!     features: Some(Features {
//!         feature: [("label".to_string(), label)].into(),
//!     }),
//! };
//! let record = Bytes::from(example.encode_to_vec());
//!
//! let spec = FeatureSpec::builder()
//!     .fixed("label", DType::I64, [])
//!     .fixed_with_default("weight", DType::F32, [], Tensor::scalar(1.0f32))
//!     .build()?;
//! let parsed = parse_single_example(&record, &spec, "train.tfrecord:0")?;
//! assert_eq!(parsed["label"].dense()?.scalar_value::<i64>()?, 7);
//! assert_eq!(parsed["weight"].dense()?.scalar_value::<f32>()?, 1.0);
//! # Ok::<(), feedstock::Error>(())
//! ```
//!
//! # Semantics
//!
//! TensorFlow's, and where TensorFlow is silent or lossy, stricter:
//!
//! - Every error is InvalidArgument, names the record key (and, in a batch,
//!   the example's position) and the feature: a missing required feature,
//!   a list of the wrong type, a wrong number of values for a fixed shape,
//!   a sparse index outside its size or a count mismatch between a sparse
//!   feature's indices and values, and malformed protobuf bytes.
//! - A `Feature` with no list set counts as missing for a `Fixed` feature
//!   (it takes the default) and as no values for the other kinds, as in
//!   TensorFlow.
//! - A name repeated in the feature map: the last entry wins, as protobuf
//!   map semantics say. (TensorFlow's fast parser agrees, except that it
//!   lets an earlier entry win over a later entry with no list set.)
//! - Only the features the spec names are decoded; the values of other
//!   features are skipped unread, like TensorFlow's fast parser (so
//!   malformed bytes inside an unrequested feature go unnoticed).
//! - A spec is refused (InvalidArgument, before any record is read) where
//!   TensorFlow raises ValueError: no features at all for
//!   `parse_example` / `parse_single_example`, a `FixedSequence` feature
//!   without `allow_missing` there, and two empty specs for the sequence
//!   parsers (an empty context alone is fine).
//! - A `Sparse` feature's indices are checked against its size (stricter
//!   than TensorFlow, which passes an out-of-range index through);
//!   [`Sparse::validate_indices`]`(false)` gives TensorFlow's behaviour.
//!   Its entries are sorted by index unless [`Sparse::already_sorted`].
//! - Strings are zero-copy slices of the record ([`Bytes::slice`]).
//!
//! # Performance
//!
//! The parser walks the protobuf wire format once and writes values
//! straight into the output buffers, without building the `Example`
//! message; see `benches/parse_example.rs`.

mod column;
mod feature;
mod sequence;
mod spec;
mod walk;
mod wire;

use std::collections::BTreeMap;
use std::fmt;
use std::ops::Index;

use bytes::Bytes;

pub use spec::{
    FeatureKind, FeatureSpec, FeatureSpecBuilder, FixedSequence, Sparse,
};

use crate::decode::Records;
use crate::error::{Error, Result};
use crate::tensor::{Tensor, Value};
use column::{At, Column};
use sequence::SeqColumn;
use walk::Src;

/// The parsed features of one example or a batch: one [`Value`] per
/// feature of the spec, in spec order, also reachable by name.
///
/// ```
/// # use bytes::Bytes;
/// # use feedstock::decode::example::{parse_example, FeatureSpec};
/// # use feedstock::DType;
/// let spec = FeatureSpec::builder().var_len("tags", DType::String).build()?;
/// // Two empty Examples.
/// let batch = parse_example(&[Bytes::new(), Bytes::new()], &spec)?;
/// assert_eq!(batch["tags"].sparse()?.dims(), [2, 0]);
/// assert_eq!(batch.iter().map(|(n, _)| n).collect::<Vec<_>>(), ["tags"]);
/// # Ok::<(), feedstock::Error>(())
/// ```
#[derive(Clone)]
pub struct Parsed {
    spec: FeatureSpec,
    values: Vec<Value>,
}

impl Parsed {
    /// The spec the values were parsed with.
    pub fn spec(&self) -> &FeatureSpec {
        &self.spec
    }

    /// The value of feature `name`, if the spec has it.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.spec.position(name).map(|i| &self.values[i])
    }

    /// The number of features.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// True when the spec had no features.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The values in spec order, as slices.
    pub fn values(&self) -> &[Value] {
        &self.values
    }

    /// Names and values, in spec order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> + '_ {
        self.spec.names().zip(&self.values)
    }

    /// The values in spec order, for instance to enqueue them.
    pub fn into_values(self) -> Vec<Value> {
        self.values
    }
}

impl Index<&str> for Parsed {
    type Output = Value;

    /// # Panics
    /// When the spec has no feature `name`; use [`Parsed::get`] to check.
    fn index(&self, name: &str) -> &Value {
        match self.get(name) {
            Some(v) => v,
            None => panic!("no feature named {name:?} in the parse spec"),
        }
    }
}

impl fmt::Debug for Parsed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// The Example entries a spec asks for, by slot, for one record.
fn clear(slots: &mut [Option<Src>]) {
    for s in slots {
        *s = None;
    }
}

/// Parses a batch of Examples into columns.
#[derive(Debug)]
struct ExampleBatch<'s> {
    spec: &'s FeatureSpec,
    columns: Vec<Column>,
    slots: Vec<Option<Src>>,
}

impl<'s> ExampleBatch<'s> {
    fn new(spec: &'s FeatureSpec, batch: usize) -> ExampleBatch<'s> {
        ExampleBatch {
            spec,
            columns: (0..spec.len())
                .map(|i| Column::new(spec.kind(i), batch))
                .collect(),
            slots: vec![None; spec.num_keys()],
        }
    }

    /// Adds the features of the Example whose entries are in `slots`.
    fn push_slots(&mut self, record: &Bytes, at: &At<'_>) -> Result<()> {
        let spec = self.spec;
        for (i, col) in self.columns.iter_mut().enumerate() {
            col.push(
                spec.name(i),
                spec.kind(i),
                spec.reads(i),
                &self.slots,
                record,
                at,
            )?;
        }
        Ok(())
    }

    fn push(&mut self, record: &Bytes, at: &At<'_>) -> Result<()> {
        clear(&mut self.slots);
        walk_into(self.spec, record, &mut self.slots, at)?;
        self.push_slots(record, at)
    }

    fn finish(self, batch: Option<usize>) -> Result<Parsed> {
        let spec = self.spec;
        let values = self
            .columns
            .into_iter()
            .enumerate()
            .map(|(i, c)| c.finish(spec.kind(i), batch))
            .collect::<Result<_>>()?;
        Ok(Parsed {
            spec: spec.clone(),
            values,
        })
    }
}

fn key_of(key: &str) -> Option<&str> {
    (!key.is_empty()).then_some(key)
}

/// Refuses a spec `parse_example` and `parse_single_example` cannot
/// take, as TensorFlow does in `parsing_config.py`: no features at all
/// ("features cannot be empty"), or a `FixedSequence` feature with
/// `allow_missing: false` (TensorFlow: "FixedLenSequenceFeature requires
/// allow_missing to be True").
fn check_example_spec(spec: &FeatureSpec) -> Result<()> {
    if spec.is_empty() {
        return Err(Error::invalid_argument(
            "feature spec: features cannot be empty for parse_example",
        ));
    }
    for (name, kind) in spec.iter() {
        if let FeatureKind::FixedSequence {
            allow_missing: false,
            ..
        } = kind
        {
            return Err(Error::invalid_argument(format!(
                "feature spec: feature \"{name}\" is a fixed_sequence \
                 without allow_missing; parse_example and \
                 parse_single_example need allow_missing (as in \
                 TensorFlow)"
            ))
            .with_field(name));
        }
    }
    Ok(())
}

/// Parses one serialized `tf.train.Example`; `key` (the record key, such
/// as `file:7`, or `""`) is named in errors.
///
/// A `Fixed` feature becomes a dense tensor of its shape, a `VarLen` one a
/// rank-1 sparse tensor, a `Sparse` one a sparse tensor of its size and a
/// `FixedSequence` one a dense `[rows, ..shape]` tensor.
///
/// # Errors
/// InvalidArgument naming `key` and the feature; see the
/// [module docs](self#semantics).
pub fn parse_single_example(
    serialized: &Bytes,
    spec: &FeatureSpec,
    key: &str,
) -> Result<Parsed> {
    check_example_spec(spec)?;
    let at = At {
        key: key_of(key),
        index: None,
        what: "Example",
    };
    // One example needs no columns kept across records: each feature is
    // read and finished in turn, and the slots live on the stack when the
    // spec is small (the common case; it saves the allocations that
    // otherwise dominate a single small Example).
    let mut inline: [Option<Src>; INLINE_SLOTS] =
        std::array::from_fn(|_| None);
    let mut heap = Vec::new();
    let slots: &mut [Option<Src>] = if spec.num_keys() <= INLINE_SLOTS {
        &mut inline[..spec.num_keys()]
    } else {
        heap.resize(spec.num_keys(), None);
        &mut heap
    };
    walk_into(spec, serialized, slots, &at)?;
    let mut values = Vec::with_capacity(spec.len());
    for i in 0..spec.len() {
        let kind = spec.kind(i);
        let mut col = Column::new(kind, 1);
        col.push(spec.name(i), kind, spec.reads(i), slots, serialized, &at)?;
        values.push(col.finish(kind, None)?);
    }
    Ok(Parsed {
        spec: spec.clone(),
        values,
    })
}

/// Specs reading up to this many Example keys keep their slots on the
/// stack in [`parse_single_example`].
const INLINE_SLOTS: usize = 8;

/// Walks an Example, putting the entries `spec` reads into `slots`.
#[inline]
fn walk_into(
    spec: &FeatureSpec,
    record: &Bytes,
    slots: &mut [Option<Src>],
    at: &At<'_>,
) -> Result<()> {
    walk::example(record, |name, src| {
        if let Some(s) = spec.slot(name) {
            slots[s] = Some(src);
        }
    })
    .map_err(|w| at.wire(None, w))
}

/// Parses a batch of serialized `tf.train.Example`s: a `&[Bytes]`, or
/// [`Records`] with a key per record to name in errors.
///
/// Every output has a leading batch dimension: `Fixed` gives
/// `[batch, ..shape]`; `VarLen` a sparse tensor with indices
/// `[example, i]` and dense shape `[batch, max_len]`; `Sparse` a sparse
/// tensor of dense shape `[batch, ..size]`; `FixedSequence` a dense
/// `[batch, max_rows, ..shape]` tensor padded with its default.
///
/// # Errors
/// InvalidArgument naming the record key, the example's position in the
/// batch and the feature (see the [module docs](self#semantics)).
pub fn parse_example<'a>(
    serialized: impl Into<Records<'a>>,
    spec: &FeatureSpec,
) -> Result<Parsed> {
    let records = serialized.into();
    check_example_spec(spec)?;
    let mut batch = ExampleBatch::new(spec, records.len());
    for (i, record) in records.values().iter().enumerate() {
        let at = At {
            key: records.key(i),
            index: Some(i),
            what: "Example",
        };
        batch.push(record, &at)?;
    }
    batch.finish(Some(records.len()))
}

/// Parses a batch of `SequenceExample`s into columns.
#[derive(Debug)]
struct SequenceBatch<'s> {
    context: ExampleBatch<'s>,
    spec: &'s FeatureSpec,
    columns: Vec<SeqColumn>,
    slots: Vec<Option<Src>>,
}

impl<'s> SequenceBatch<'s> {
    fn new(
        context: &'s FeatureSpec,
        sequence: &'s FeatureSpec,
        batch: usize,
    ) -> Result<SequenceBatch<'s>> {
        let columns = (0..sequence.len())
            .map(|i| SeqColumn::new(sequence.name(i), sequence.kind(i)))
            .collect::<Result<_>>()?;
        Ok(SequenceBatch {
            context: ExampleBatch::new(context, batch),
            spec: sequence,
            columns,
            slots: vec![None; sequence.num_keys()],
        })
    }

    fn push(&mut self, record: &Bytes, at: &At<'_>) -> Result<()> {
        clear(&mut self.context.slots);
        clear(&mut self.slots);
        let (cspec, cslots) = (self.context.spec, &mut self.context.slots);
        let (sspec, sslots) = (self.spec, &mut self.slots);
        walk::sequence_example(
            record,
            |name, src| {
                if let Some(s) = cspec.slot(name) {
                    cslots[s] = Some(src);
                }
            },
            |name, src| {
                if let Some(s) = sspec.slot(name) {
                    sslots[s] = Some(src);
                }
            },
        )
        .map_err(|w| at.wire(None, w))?;
        self.context.push_slots(record, at)?;
        for (i, col) in self.columns.iter_mut().enumerate() {
            let src = self.slots[self.spec.reads(i)[0]].as_ref();
            col.push(self.spec.name(i), self.spec.kind(i), src, record, at)?;
        }
        Ok(())
    }

    fn finish(self, batch: Option<usize>) -> Result<ParsedSequence> {
        let context = self.context.finish(batch)?;
        let spec = self.spec;
        let mut lengths = BTreeMap::new();
        let mut values = Vec::with_capacity(spec.len());
        for (i, c) in self.columns.into_iter().enumerate() {
            if let Some(l) = c.lengths(batch)? {
                lengths.insert(spec.name(i).to_owned(), l);
            }
            values.push(c.finish(spec.kind(i), batch)?);
        }
        let feature_lists = Parsed {
            spec: spec.clone(),
            values,
        };
        Ok(ParsedSequence {
            context,
            feature_lists,
            lengths,
        })
    }
}

/// What the `parse_sequence_example` family returns: TensorFlow's three
/// outputs, by name.
///
/// ```
/// # use bytes::Bytes;
/// # use feedstock::decode::example::{parse_sequence_example, FeatureSpec};
/// # use feedstock::decode::example::FixedSequence;
/// # use feedstock::DType;
/// let context = FeatureSpec::builder().build()?;
/// let lists = FeatureSpec::builder()
///     .fixed_sequence(
///         "frames",
///         FixedSequence::new(DType::F32, [2]).allow_missing(true),
///     )
///     .build()?;
/// // Two SequenceExamples without the list: zero steps each.
/// let two = [Bytes::new(), Bytes::new()];
/// let out = parse_sequence_example(&two, &context, &lists)?;
/// assert_eq!(out.feature_lists["frames"].dense()?.dims(), [2, 0, 2]);
/// assert_eq!(out.lengths["frames"].as_slice::<i64>()?, [0, 0]);
/// # Ok::<(), feedstock::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct ParsedSequence {
    /// The context features, parsed as an Example's.
    pub context: Parsed,
    /// The feature lists, one value per feature of the sequence spec.
    pub feature_lists: Parsed,
    /// For each `FixedSequence` feature list, by name, the number of
    /// steps each SequenceExample has: an `int64` tensor of shape
    /// `[batch]` (a scalar for [`parse_single_sequence_example`]).
    /// TensorFlow's third output, `feature_list_lengths`, which masks
    /// the padding of the batched feature lists. `VarLen` feature lists
    /// have none, as in TensorFlow (their sparse indices say it).
    pub lengths: BTreeMap<String, Tensor>,
}

/// Parses one serialized `tf.train.SequenceExample` into its context
/// features (parsed as an Example's, by `context`) and its feature lists
/// (by `sequence`, whose features must be `VarLen` or `FixedSequence`).
///
/// A `FixedSequence` feature list gives a dense `[steps, ..shape]` tensor,
/// each step holding exactly one row; a `VarLen` one a sparse tensor with
/// indices `[step, i]` and dense shape `[steps, max_len]`. A missing
/// feature list has zero steps, or is an error for a `FixedSequence` with
/// `allow_missing: false`.
///
/// # Errors
/// InvalidArgument naming `key` and the feature, as for
/// [`parse_single_example`], and for a step with the wrong number of
/// values or list type, or a `sequence` spec with other kinds.
pub fn parse_single_sequence_example(
    serialized: &Bytes,
    context: &FeatureSpec,
    sequence: &FeatureSpec,
    key: &str,
) -> Result<ParsedSequence> {
    check_sequence_specs(context, sequence)?;
    let at = At {
        key: key_of(key),
        index: None,
        what: "SequenceExample",
    };
    let mut batch = SequenceBatch::new(context, sequence, 1)?;
    batch.push(serialized, &at)?;
    batch.finish(None)
}

/// Parses a batch of serialized `SequenceExample`s: a `&[Bytes]`, or
/// [`Records`] with a key per record to name in errors.
///
/// The context outputs are as for [`parse_example`]. A `FixedSequence`
/// feature list gives `[batch, max_steps, ..shape]`, padded with zeros
/// (empty strings), and its steps per example in [`ParsedSequence::lengths`]; a
/// `VarLen` one a sparse tensor with indices `[example, step, i]` and
/// dense shape `[batch, max_steps, max_len]`.
///
/// # Errors
/// As [`parse_single_sequence_example`], naming also the example's
/// position in the batch.
pub fn parse_sequence_example<'a>(
    serialized: impl Into<Records<'a>>,
    context: &FeatureSpec,
    sequence: &FeatureSpec,
) -> Result<ParsedSequence> {
    let records = serialized.into();
    check_sequence_specs(context, sequence)?;
    let mut batch = SequenceBatch::new(context, sequence, records.len())?;
    for (i, record) in records.values().iter().enumerate() {
        let at = At {
            key: records.key(i),
            index: Some(i),
            what: "SequenceExample",
        };
        batch.push(record, &at)?;
    }
    batch.finish(Some(records.len()))
}

/// Refuses two empty specs, as TensorFlow does ("at least one of
/// context_features and sequence_features must be provided and
/// non-empty"; an empty context alone is fine), and the kinds TensorFlow's
/// sequence parsers refuse with a ValueError: in the context anything but
/// `Fixed` and `VarLen`; in the feature lists anything but `FixedSequence`
/// and `VarLen`, and a `FixedSequence` with a default (feature lists are
/// padded with zeros or empty strings).
pub fn check_sequence_specs(
    context: &FeatureSpec,
    sequence: &FeatureSpec,
) -> Result<()> {
    if context.is_empty() && sequence.is_empty() {
        return Err(Error::invalid_argument(
            "feature spec: parse_sequence_example needs at least one \
             context feature or feature list",
        ));
    }
    let refuse = |name: &str, what: &str| {
        Err(Error::invalid_argument(format!(
            "feature spec: feature \"{name}\" {what} (as in TensorFlow)"
        ))
        .with_field(name))
    };
    for (name, kind) in context.iter() {
        match kind {
            FeatureKind::Fixed { .. } | FeatureKind::VarLen { .. } => {}
            FeatureKind::FixedSequence { .. } => {
                return refuse(
                    name,
                    "is a fixed_sequence: a SequenceExample's context takes \
                     fixed and var_len features only",
                )
            }
            FeatureKind::Sparse { .. } => {
                return refuse(
                    name,
                    "is a sparse feature: a SequenceExample's context takes \
                     fixed and var_len features only",
                )
            }
        }
    }
    for (name, kind) in sequence.iter() {
        match kind {
            FeatureKind::VarLen { .. } => {}
            FeatureKind::FixedSequence {
                default: Some(_), ..
            } => {
                return refuse(
                    name,
                    "is a feature list with a default_value: feature lists \
                     are padded with zeros or empty strings",
                )
            }
            FeatureKind::FixedSequence { .. } => {}
            FeatureKind::Fixed { .. } | FeatureKind::Sparse { .. } => {
                return refuse(
                    name,
                    "is not a fixed_sequence or var_len feature: feature \
                     lists take those only",
                )
            }
        }
    }
    Ok(())
}
