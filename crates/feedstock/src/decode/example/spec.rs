//! What to parse: named features, each with its kind, dtype and shape.

use std::collections::HashMap;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::tensor::{DType, Shape, Tensor};

/// How one feature is read from an Example, and what it becomes.
///
/// The four kinds are TensorFlow's `FixedLenFeature`, `VarLenFeature`,
/// `SparseFeature` and `FixedLenSequenceFeature`. Build them with
/// [`FeatureSpecBuilder`], which checks them.
///
/// Exhaustive on purpose: the TF1 crate infers each kind's static shape
/// with a `match`, so a new kind is a compile error there, not a silent
/// guess.
#[derive(Clone, Debug, PartialEq)]
pub enum FeatureKind {
    /// Exactly `shape.num_elements()` values, as a dense tensor of
    /// `shape` (`[batch, ..shape]` when batched). A missing feature takes
    /// `default` if there is one and is an error otherwise (a shape with
    /// no elements has no default: such a feature is always required,
    /// as in TensorFlow).
    Fixed {
        /// The dtype of the values.
        dtype: DType,
        /// The shape of one example's tensor.
        shape: Shape,
        /// The value of a missing feature, already of `shape`.
        default: Option<Tensor>,
    },
    /// Any number of values, as a sparse tensor with indices
    /// `[i]` (`[batch, i]` when batched) and dense shape `[max_len]`
    /// (`[batch, max_len]`). A missing feature has no values.
    VarLen {
        /// The dtype of the values.
        dtype: DType,
    },
    /// A sparse tensor assembled from an `int64` feature per dimension
    /// (`index_keys`) and a value feature (`value_key`) of equal lengths;
    /// dense shape `size` (`[batch, ..size]`). Build it with [`Sparse`].
    Sparse {
        /// The features holding the index of each value, one per
        /// dimension.
        index_keys: Vec<String>,
        /// The feature holding the values.
        value_key: String,
        /// The dtype of the values.
        dtype: DType,
        /// The dense shape.
        size: Vec<usize>,
        /// Whether the entries are already in index order (`true`: kept
        /// in the order given, as TensorFlow's `already_sorted`) or are
        /// sorted by index (`false`, the default).
        already_sorted: bool,
        /// Whether an index outside `size` is an error (`true`, the
        /// default) or is passed through unchecked, as TensorFlow does
        /// (`false`; the result is then a
        /// [`SparseTensor::new_unvalidated`](crate::SparseTensor::new_unvalidated)).
        validate_indices: bool,
    },
    /// A multiple of `shape.num_elements()` values, as a dense tensor of
    /// `[rows, ..shape]`; batched, `[batch, max_rows, ..shape]` with short
    /// examples padded by `default` (zero or the empty string when none).
    /// In a SequenceExample's sequence spec, each step holds one row.
    /// Build it with [`FixedSequence`].
    FixedSequence {
        /// The dtype of the values.
        dtype: DType,
        /// The shape of one row.
        shape: Shape,
        /// Whether a missing feature means zero rows (`true`) or is an
        /// error (`false`).
        allow_missing: bool,
        /// The padding value, a scalar of `dtype`.
        default: Option<Tensor>,
    },
}

impl FeatureKind {
    /// The dtype of the values this feature yields.
    pub fn dtype(&self) -> DType {
        match self {
            FeatureKind::Fixed { dtype, .. }
            | FeatureKind::VarLen { dtype }
            | FeatureKind::Sparse { dtype, .. }
            | FeatureKind::FixedSequence { dtype, .. } => *dtype,
        }
    }
}

/// A checked, immutable set of named features to parse, in a fixed order.
///
/// Cheap to clone (the contents are shared). Parsing yields one value per
/// feature, in this order.
///
/// ```
/// use feedstock::decode::example::FeatureSpec;
/// use feedstock::DType;
///
/// let spec = FeatureSpec::builder()
///     .fixed("label", DType::I64, [])
///     .var_len("tags", DType::String)
///     .build()
///     .unwrap();
/// assert_eq!(spec.names().collect::<Vec<_>>(), ["label", "tags"]);
/// ```
#[derive(Clone, Debug)]
pub struct FeatureSpec {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    /// Output names, in order.
    names: Vec<String>,
    /// What each output is.
    kinds: Vec<FeatureKind>,
    /// For each output, the slots (distinct Example keys) it reads: one,
    /// or for a sparse feature its index keys then its value key.
    reads: Vec<Vec<usize>>,
    /// The distinct Example keys that any output reads.
    keys: Vec<String>,
    /// Key to slot, when there are too many keys for a linear scan.
    lookup: Option<HashMap<Box<[u8]>, usize>>,
    /// Output name to position.
    positions: HashMap<String, usize>,
}

/// Up to this many keys, finding a key by comparing it with each is
/// faster than hashing it.
const LINEAR_LOOKUP_MAX: usize = 12;

impl FeatureSpec {
    /// A builder for a spec.
    pub fn builder() -> FeatureSpecBuilder {
        FeatureSpecBuilder::default()
    }

    /// The number of features.
    pub fn len(&self) -> usize {
        self.inner.names.len()
    }

    /// True when there are no features.
    pub fn is_empty(&self) -> bool {
        self.inner.names.is_empty()
    }

    /// The feature names, in order.
    pub fn names(&self) -> impl Iterator<Item = &str> + '_ {
        self.inner.names.iter().map(String::as_str)
    }

    /// The features and their kinds, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &FeatureKind)> + '_ {
        self.names().zip(&self.inner.kinds)
    }

    /// The position of feature `name`, if the spec has it.
    pub fn position(&self, name: &str) -> Option<usize> {
        if self.len() <= LINEAR_LOOKUP_MAX {
            self.names().position(|n| n == name)
        } else {
            self.inner.positions.get(name).copied()
        }
    }

    /// The kind of feature `name`, if the spec has it.
    pub fn get(&self, name: &str) -> Option<&FeatureKind> {
        self.position(name).map(|i| &self.inner.kinds[i])
    }

    pub(crate) fn name(&self, i: usize) -> &str {
        &self.inner.names[i]
    }

    pub(crate) fn kind(&self, i: usize) -> &FeatureKind {
        &self.inner.kinds[i]
    }

    pub(crate) fn reads(&self, i: usize) -> &[usize] {
        &self.inner.reads[i]
    }

    pub(crate) fn num_keys(&self) -> usize {
        self.inner.keys.len()
    }

    /// The slot of Example key `key`, if any feature reads it.
    #[inline]
    pub(crate) fn slot(&self, key: &[u8]) -> Option<usize> {
        match &self.inner.lookup {
            Some(map) => map.get(key).copied(),
            None => self.inner.keys.iter().position(|k| k.as_bytes() == key),
        }
    }
}

/// Builds a [`FeatureSpec`]: add features in the order the output should
/// have, then [`build`](FeatureSpecBuilder::build), which checks them.
///
/// Features hold `I64`, `F32` or `String` values, the three list types
/// of `tf.train.Feature`.
#[derive(Clone, Debug, Default)]
pub struct FeatureSpecBuilder {
    features: Vec<(String, FeatureKind)>,
}

impl FeatureSpecBuilder {
    /// A builder with no features.
    pub fn new() -> FeatureSpecBuilder {
        FeatureSpecBuilder::default()
    }

    /// Adds any kind of feature.
    pub fn feature(
        &mut self,
        name: impl Into<String>,
        kind: FeatureKind,
    ) -> &mut FeatureSpecBuilder {
        self.features.push((name.into(), kind));
        self
    }

    /// A required `FixedLenFeature` of `shape`.
    pub fn fixed(
        &mut self,
        name: impl Into<String>,
        dtype: DType,
        shape: impl Into<Shape>,
    ) -> &mut FeatureSpecBuilder {
        let shape = shape.into();
        self.feature(
            name,
            FeatureKind::Fixed {
                dtype,
                shape,
                default: None,
            },
        )
    }

    /// A `FixedLenFeature` of `shape` that takes `default` when missing.
    /// `default` must hold `shape.num_elements()` values of `dtype`; it is
    /// reshaped to `shape`.
    pub fn fixed_with_default(
        &mut self,
        name: impl Into<String>,
        dtype: DType,
        shape: impl Into<Shape>,
        default: Tensor,
    ) -> &mut FeatureSpecBuilder {
        let shape = shape.into();
        self.feature(
            name,
            FeatureKind::Fixed {
                dtype,
                shape,
                default: Some(default),
            },
        )
    }

    /// A `VarLenFeature`.
    pub fn var_len(
        &mut self,
        name: impl Into<String>,
        dtype: DType,
    ) -> &mut FeatureSpecBuilder {
        self.feature(name, FeatureKind::VarLen { dtype })
    }

    /// A `SparseFeature` named `name`; see [`Sparse`] for its options.
    pub fn sparse(
        &mut self,
        name: impl Into<String>,
        sparse: Sparse,
    ) -> &mut FeatureSpecBuilder {
        self.feature(name, sparse.into_kind())
    }

    /// A `FixedLenSequenceFeature` named `name`; see [`FixedSequence`]
    /// for its options.
    pub fn fixed_sequence(
        &mut self,
        name: impl Into<String>,
        feature: FixedSequence,
    ) -> &mut FeatureSpecBuilder {
        self.feature(name, feature.into_kind())
    }

    /// Checks the features and builds the spec.
    ///
    /// # Errors
    /// InvalidArgument naming the feature when: two features have one
    /// name; a dtype is not `I64`, `F32` or `String`; a default has the
    /// wrong dtype or number of values; a `FixedSequence` row has no
    /// elements or its default is not one value; a `Sparse` feature has
    /// no index keys or a `size` of another rank. (A zero size is
    /// allowed, as in TensorFlow: the feature can then hold no values.)
    pub fn build(&self) -> Result<FeatureSpec> {
        // Names and keys are looked up in hash maps, so building is
        // linear in the number of features (a spec may have 100k+).
        let n = self.features.len();
        let mut names: Vec<String> = Vec::with_capacity(n);
        let mut positions: HashMap<String, usize> = HashMap::with_capacity(n);
        let mut kinds = Vec::with_capacity(n);
        let mut keys: Vec<String> = Vec::with_capacity(n);
        let mut slots: HashMap<Box<[u8]>, usize> = HashMap::with_capacity(n);
        let mut reads = Vec::with_capacity(n);
        let mut slot_of = |key: &str| {
            *slots.entry(key.as_bytes().into()).or_insert_with(|| {
                keys.push(key.to_owned());
                keys.len() - 1
            })
        };
        for (name, kind) in &self.features {
            if positions.contains_key(name) {
                return Err(spec_error(name, "is listed twice"));
            }
            let kind = check(name, kind)?;
            reads.push(match &kind {
                FeatureKind::Sparse {
                    index_keys,
                    value_key,
                    ..
                } => index_keys
                    .iter()
                    .chain(Some(value_key))
                    .map(|k| slot_of(k))
                    .collect(),
                _ => vec![slot_of(name)],
            });
            positions.insert(name.clone(), names.len());
            names.push(name.clone());
            kinds.push(kind);
        }
        let lookup = (keys.len() > LINEAR_LOOKUP_MAX).then_some(slots);
        Ok(FeatureSpec {
            inner: Arc::new(Inner {
                names,
                positions,
                kinds,
                reads,
                keys,
                lookup,
            }),
        })
    }
}

/// The options of a `SparseFeature`, TensorFlow's
/// `tf.io.SparseFeature(index_key, value_key, dtype, size,
/// already_sorted)`, for [`FeatureSpecBuilder::sparse`].
///
/// ```
/// use feedstock::decode::example::{FeatureSpec, Sparse};
/// use feedstock::DType;
///
/// let spec = FeatureSpec::builder()
///     .sparse("s", Sparse::new(["ix"], "val", DType::F32, [10]))
///     .sparse(
///         "t",
///         Sparse::new(["i", "j"], "v", DType::I64, [3, 4])
///             .already_sorted(true)
///             .validate_indices(false),
///     )
///     .build()?;
/// assert_eq!(spec.len(), 2);
/// # Ok::<(), feedstock::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Sparse {
    index_keys: Vec<String>,
    value_key: String,
    dtype: DType,
    size: Shape,
    already_sorted: bool,
    validate_indices: bool,
}

impl Sparse {
    /// A sparse feature built from the `int64` features `index_keys` (one
    /// per dimension of `size`) and the value feature `value_key`, sorted
    /// by index, every index checked against `size`.
    pub fn new<S: Into<String>>(
        index_keys: impl IntoIterator<Item = S>,
        value_key: impl Into<String>,
        dtype: DType,
        size: impl Into<Shape>,
    ) -> Sparse {
        Sparse {
            index_keys: index_keys.into_iter().map(Into::into).collect(),
            value_key: value_key.into(),
            dtype,
            size: size.into(),
            already_sorted: false,
            validate_indices: true,
        }
    }

    /// `true`: the entries are taken in the order the Example lists them,
    /// unsorted, as TensorFlow does with `already_sorted=True` (the caller
    /// promises they are in index order). `false` (the default): they
    /// are sorted by index, repeated indices keeping their order.
    pub fn already_sorted(mut self, yes: bool) -> Sparse {
        self.already_sorted = yes;
        self
    }

    /// `true` (the default, stricter than TensorFlow): an index that is
    /// negative or not below `size` is InvalidArgument naming the record
    /// and the feature. `false`: TensorFlow's behaviour, which passes such
    /// an index through into the sparse tensor unchecked.
    pub fn validate_indices(mut self, yes: bool) -> Sparse {
        self.validate_indices = yes;
        self
    }

    fn into_kind(self) -> FeatureKind {
        FeatureKind::Sparse {
            index_keys: self.index_keys,
            value_key: self.value_key,
            dtype: self.dtype,
            size: self.size.dims().to_vec(),
            already_sorted: self.already_sorted,
            validate_indices: self.validate_indices,
        }
    }
}

/// The options of a `FixedLenSequenceFeature`, TensorFlow's
/// `tf.io.FixedLenSequenceFeature(shape, dtype, allow_missing,
/// default_value)`, for [`FeatureSpecBuilder::fixed_sequence`].
///
/// ```
/// use feedstock::decode::example::{FeatureSpec, FixedSequence};
/// use feedstock::{DType, Tensor};
///
/// let spec = FeatureSpec::builder()
///     .fixed_sequence(
///         "frames",
///         FixedSequence::new(DType::F32, [2])
///             .allow_missing(true)
///             .default_value(Tensor::scalar(-1.0f32)),
///     )
///     .build()?;
/// assert_eq!(spec.len(), 1);
/// # Ok::<(), feedstock::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct FixedSequence {
    dtype: DType,
    shape: Shape,
    allow_missing: bool,
    default: Option<Tensor>,
}

impl FixedSequence {
    /// Rows of `shape` holding `dtype` values; a missing feature is an
    /// error (TensorFlow's default, `allow_missing=False`); short
    /// examples in a batch are padded with zeros or empty strings.
    pub fn new(dtype: DType, shape: impl Into<Shape>) -> FixedSequence {
        FixedSequence {
            dtype,
            shape: shape.into(),
            allow_missing: false,
            default: None,
        }
    }

    /// Whether a missing feature means zero rows (`true`) or is an error
    /// (`false`, the default). `parse_example` and `parse_single_example`
    /// need `true`, as in TensorFlow; in a SequenceExample's feature
    /// lists either is fine.
    pub fn allow_missing(mut self, yes: bool) -> FixedSequence {
        self.allow_missing = yes;
        self
    }

    /// The value (a scalar of the dtype) that pads short examples in a
    /// batch of `parse_example`. The sequence parsers refuse a feature
    /// list with one, as TensorFlow does: they pad with zeros.
    pub fn default_value(mut self, value: Tensor) -> FixedSequence {
        self.default = Some(value);
        self
    }

    fn into_kind(self) -> FeatureKind {
        FeatureKind::FixedSequence {
            dtype: self.dtype,
            shape: self.shape,
            allow_missing: self.allow_missing,
            default: self.default,
        }
    }
}

fn spec_error(name: &str, what: &str) -> Error {
    Error::invalid_argument(format!("feature spec: feature \"{name}\" {what}"))
        .with_field(name)
}

fn check_dtype(name: &str, dtype: DType) -> Result<()> {
    match dtype {
        DType::I64 | DType::F32 | DType::String => Ok(()),
        // A refused dtype, told apart from other bad specs (TensorFlow
        // raises it as a TypeError).
        other => Err(Error::invalid_dtype(format!(
            "feature spec: feature \"{name}\" has dtype {other}; Example \
             features hold int64, float or string values"
        ))
        .with_field(name)),
    }
}

/// Checks one feature and returns it normalized (defaults reshaped).
fn check(name: &str, kind: &FeatureKind) -> Result<FeatureKind> {
    check_dtype(name, kind.dtype())?;
    let mut kind = kind.clone();
    let overflow = |shape: &Shape| {
        shape.checked_num_elements().map_err(|_| {
            spec_error(
                name,
                &format!("has shape {shape}, whose element count overflows"),
            )
        })
    };
    match &kind {
        FeatureKind::Fixed { shape, .. }
        | FeatureKind::FixedSequence { shape, .. } => {
            overflow(shape)?;
        }
        FeatureKind::Sparse { size, .. } => {
            overflow(&Shape::new(size.clone()))?;
        }
        FeatureKind::VarLen { .. } => {}
    }
    match &mut kind {
        FeatureKind::Fixed {
            dtype,
            shape,
            default: Some(default),
        } => {
            if default.dtype() != *dtype
                || default.num_elements() != shape.num_elements()
            {
                return Err(spec_error(
                    name,
                    &format!(
                        "has a default of {} {} values; shape {shape} \
                         needs {} {dtype} values",
                        default.num_elements(),
                        default.dtype(),
                        shape.num_elements()
                    ),
                ));
            }
            *default = default.clone().reshape(shape.clone())?;
        }
        FeatureKind::Fixed { .. } | FeatureKind::VarLen { .. } => {}
        FeatureKind::FixedSequence {
            dtype,
            shape,
            default,
            ..
        } => {
            if shape.num_elements() == 0 {
                return Err(spec_error(
                    name,
                    &format!("has rows of shape {shape}, with no elements"),
                ));
            }
            if let Some(d) = default {
                if d.dtype() != *dtype || d.num_elements() != 1 {
                    return Err(spec_error(
                        name,
                        &format!(
                            "has a padding default of {} {} values; it \
                             must be one {dtype} value",
                            d.num_elements(),
                            d.dtype()
                        ),
                    ));
                }
                *d = d.clone().reshape(Shape::scalar())?;
            }
        }
        FeatureKind::Sparse {
            index_keys, size, ..
        } => {
            if index_keys.is_empty() {
                return Err(spec_error(name, "has no index keys"));
            }
            if size.len() != index_keys.len() {
                return Err(spec_error(
                    name,
                    &format!(
                        "has {} index keys but a size of rank {}",
                        index_keys.len(),
                        size.len()
                    ),
                ));
            }
        }
    }
    // A default with no values cannot stand for a missing feature:
    // TensorFlow 2.21 treats a shape-[0] feature with default `[]` as
    // required ("is required but could not be found").
    if let FeatureKind::Fixed { shape, default, .. } = &mut kind {
        if shape.num_elements() == 0 {
            *default = None;
        }
    }
    Ok(kind)
}
