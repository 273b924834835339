//! TensorFlow's protobuf messages: `tf.train.Example`, `SequenceExample`
//! and the TensorBoard `Event` / `Summary` messages.
//!
//! These are the prost definitions that `prost-build` would generate from
//! `tensorflow/core/example/{example,feature}.proto` and
//! `tensorflow/core/util/event.proto` /
//! `tensorflow/core/framework/summary.proto`, written out by hand and
//! checked in so that building feedstock never needs `protoc`. Only the
//! fields feedstock reads or writes are declared; unknown fields in a
//! message are skipped when decoding, as protobuf requires.
//!
//! Maps are `BTreeMap`s, so encoding writes keys in sorted order, which is
//! what TensorFlow's deterministic serialization does: the same Example
//! encodes to the same bytes in both.

use std::collections::BTreeMap;

/// `tf.train.BytesList`: a list of byte strings.
#[derive(Clone, PartialEq, prost::Message)]
pub struct BytesList {
    /// The values.
    #[prost(bytes = "bytes", repeated, tag = "1")]
    pub value: Vec<bytes::Bytes>,
}

/// `tf.train.FloatList`: a list of `f32`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct FloatList {
    /// The values (packed on the wire).
    #[prost(float, repeated, tag = "1")]
    pub value: Vec<f32>,
}

/// `tf.train.Int64List`: a list of `i64`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Int64List {
    /// The values (packed on the wire).
    #[prost(int64, repeated, tag = "1")]
    pub value: Vec<i64>,
}

/// `tf.train.Feature`: one of the three lists.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Feature {
    /// Which list, if any.
    #[prost(oneof = "feature::Kind", tags = "1, 2, 3")]
    pub kind: Option<feature::Kind>,
}

/// The `oneof` of [`Feature`].
pub mod feature {
    /// The list a [`Feature`](super::Feature) holds.
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub enum Kind {
        /// Byte strings.
        #[prost(message, tag = "1")]
        BytesList(super::BytesList),
        /// `f32` values.
        #[prost(message, tag = "2")]
        FloatList(super::FloatList),
        /// `i64` values.
        #[prost(message, tag = "3")]
        Int64List(super::Int64List),
    }
}

/// `tf.train.Features`: named features.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Features {
    /// The features by name.
    #[prost(btree_map = "string, message", tag = "1")]
    pub feature: BTreeMap<String, Feature>,
}

/// `tf.train.Example`: one training example.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Example {
    /// The example's features.
    #[prost(message, optional, tag = "1")]
    pub features: Option<Features>,
}

/// `tf.train.FeatureList`: a sequence of features, one per time step.
#[derive(Clone, PartialEq, prost::Message)]
pub struct FeatureList {
    /// The steps.
    #[prost(message, repeated, tag = "1")]
    pub feature: Vec<Feature>,
}

/// `tf.train.FeatureLists`: named sequences.
#[derive(Clone, PartialEq, prost::Message)]
pub struct FeatureLists {
    /// The sequences by name.
    #[prost(btree_map = "string, message", tag = "1")]
    pub feature_list: BTreeMap<String, FeatureList>,
}

/// `tf.train.SequenceExample`: context features plus feature sequences.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SequenceExample {
    /// Features of the whole sequence.
    #[prost(message, optional, tag = "1")]
    pub context: Option<Features>,
    /// Features per step.
    #[prost(message, optional, tag = "2")]
    pub feature_lists: Option<FeatureLists>,
}

/// `tensorflow.HistogramProto`: a histogram summary.
#[derive(Clone, PartialEq, prost::Message)]
pub struct HistogramProto {
    /// Smallest value.
    #[prost(double, tag = "1")]
    pub min: f64,
    /// Largest value.
    #[prost(double, tag = "2")]
    pub max: f64,
    /// Number of values.
    #[prost(double, tag = "3")]
    pub num: f64,
    /// Sum of values.
    #[prost(double, tag = "4")]
    pub sum: f64,
    /// Sum of squared values.
    #[prost(double, tag = "5")]
    pub sum_squares: f64,
    /// Upper edges of the buckets.
    #[prost(double, repeated, tag = "6")]
    pub bucket_limit: Vec<f64>,
    /// Counts per bucket.
    #[prost(double, repeated, tag = "7")]
    pub bucket: Vec<f64>,
}

/// `tensorflow.Summary`: a set of tagged values for TensorBoard.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Summary {
    /// The values.
    #[prost(message, repeated, tag = "1")]
    pub value: Vec<summary::Value>,
}

/// The nested messages of [`Summary`].
pub mod summary {
    /// `tensorflow.Summary.Value`: one tagged value.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Value {
        /// The name TensorBoard shows.
        #[prost(string, tag = "1")]
        pub tag: String,
        /// The value.
        #[prost(oneof = "value::Value", tags = "2, 5")]
        pub value: Option<value::Value>,
    }

    /// The `oneof` of [`Value`].
    pub mod value {
        /// What a summary value holds.
        #[derive(Clone, PartialEq, prost::Oneof)]
        pub enum Value {
            /// A scalar.
            #[prost(float, tag = "2")]
            SimpleValue(f32),
            /// A histogram.
            #[prost(message, tag = "5")]
            Histo(super::super::HistogramProto),
        }
    }
}

/// `tensorflow.Event`: one record of a TensorBoard event file.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Event {
    /// Seconds since the Unix epoch.
    #[prost(double, tag = "1")]
    pub wall_time: f64,
    /// The global step.
    #[prost(int64, tag = "2")]
    pub step: i64,
    /// What the event carries.
    #[prost(oneof = "event::What", tags = "3, 5")]
    pub what: Option<event::What>,
}

/// The `oneof` of [`Event`].
pub mod event {
    /// What an [`Event`](super::Event) carries.
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub enum What {
        /// The file format version, `"brain.Event:2"`, in the first event.
        #[prost(string, tag = "3")]
        FileVersion(String),
        /// Summary values.
        #[prost(message, tag = "5")]
        Summary(super::Summary),
    }
}

/// Builds a [`Example`] in one expression.
///
/// Features are kept by name; adding a name twice replaces the first.
///
/// ```
/// use feedstock::proto::{Example, ExampleBuilder};
/// use prost::Message;
///
/// let ex: Example = ExampleBuilder::new()
///     .int64("label", [3])
///     .floats("x", vec![0.5, 1.5])
///     .bytes("img", b"\x89PNG")
///     .bytes_list("tags", ["a", "b"])
///     .build();
/// assert_eq!(ex.feature("label").unwrap().as_int64(), Some(&[3][..]));
/// assert_eq!(ex.feature("x").unwrap().as_floats(), Some(&[0.5, 1.5][..]));
/// assert_eq!(&ex.feature("img").unwrap().as_bytes().unwrap()[0][..], b"\x89PNG");
///
/// // The bytes TensorFlow's deterministic serialization writes.
/// let wire = ex.encode_to_vec();
/// assert_eq!(Example::decode(&wire[..]).unwrap(), ex);
/// ```
#[derive(Debug, Clone, Default)]
pub struct ExampleBuilder {
    /// The features so far, by name.
    features: BTreeMap<String, Feature>,
}

impl ExampleBuilder {
    /// An empty builder.
    pub fn new() -> ExampleBuilder {
        ExampleBuilder::default()
    }

    /// Adds an `int64_list` feature.
    pub fn int64(
        self,
        name: impl Into<String>,
        values: impl IntoIterator<Item = i64>,
    ) -> ExampleBuilder {
        self.feature(name, Feature::int64_list(values))
    }

    /// Adds a `float_list` feature.
    pub fn floats(
        self,
        name: impl Into<String>,
        values: impl IntoIterator<Item = f32>,
    ) -> ExampleBuilder {
        self.feature(name, Feature::float_list(values))
    }

    /// Adds a `bytes_list` feature holding one value (copied).
    pub fn bytes(
        self,
        name: impl Into<String>,
        value: impl AsRef<[u8]>,
    ) -> ExampleBuilder {
        self.feature(name, Feature::bytes_list([value]))
    }

    /// Adds a `bytes_list` feature holding several values (copied).
    pub fn bytes_list<B: AsRef<[u8]>>(
        self,
        name: impl Into<String>,
        values: impl IntoIterator<Item = B>,
    ) -> ExampleBuilder {
        self.feature(name, Feature::bytes_list(values))
    }

    /// Adds a feature as given.
    pub fn feature(
        mut self,
        name: impl Into<String>,
        feature: Feature,
    ) -> ExampleBuilder {
        self.features.insert(name.into(), feature);
        self
    }

    /// The example.
    pub fn build(self) -> Example {
        Example {
            features: Some(Features {
                feature: self.features,
            }),
        }
    }
}

impl Example {
    /// A builder: `Example::builder().int64("label", [1]).build()`.
    pub fn builder() -> ExampleBuilder {
        ExampleBuilder::new()
    }

    /// The feature called `name`, if present.
    pub fn feature(&self, name: &str) -> Option<&Feature> {
        self.features.as_ref()?.feature.get(name)
    }
}

impl Feature {
    /// An `int64_list` feature.
    pub fn int64_list(values: impl IntoIterator<Item = i64>) -> Feature {
        Feature {
            kind: Some(feature::Kind::Int64List(Int64List {
                value: values.into_iter().collect(),
            })),
        }
    }

    /// A `float_list` feature.
    pub fn float_list(values: impl IntoIterator<Item = f32>) -> Feature {
        Feature {
            kind: Some(feature::Kind::FloatList(FloatList {
                value: values.into_iter().collect(),
            })),
        }
    }

    /// A `bytes_list` feature (the values are copied).
    pub fn bytes_list<B: AsRef<[u8]>>(
        values: impl IntoIterator<Item = B>,
    ) -> Feature {
        Feature {
            kind: Some(feature::Kind::BytesList(BytesList {
                value: values
                    .into_iter()
                    .map(|b| bytes::Bytes::copy_from_slice(b.as_ref()))
                    .collect(),
            })),
        }
    }

    /// The values, if this is an `int64_list`.
    pub fn as_int64(&self) -> Option<&[i64]> {
        match &self.kind {
            Some(feature::Kind::Int64List(l)) => Some(&l.value),
            _ => None,
        }
    }

    /// The values, if this is a `float_list`.
    pub fn as_floats(&self) -> Option<&[f32]> {
        match &self.kind {
            Some(feature::Kind::FloatList(l)) => Some(&l.value),
            _ => None,
        }
    }

    /// The values, if this is a `bytes_list`.
    pub fn as_bytes(&self) -> Option<&[bytes::Bytes]> {
        match &self.kind {
            Some(feature::Kind::BytesList(l)) => Some(&l.value),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;

    #[test]
    fn builder_encodes_like_the_golden_first_record() {
        // examples.tfrecord record 0, as TensorFlow serialized it.
        let golden: &[u8] = &[
            0x0a, 0x64, 0x0a, 0x0c, 0x0a, 0x06, 0x63, 0x6c, 0x69, 0x63, 0x6b,
            0x73, 0x12, 0x02, 0x1a, 0x00, 0x0a, 0x0e, 0x0a, 0x08, 0x6b, 0x65,
            0x79, 0x77, 0x6f, 0x72, 0x64, 0x73, 0x12, 0x02, 0x0a, 0x00, 0x0a,
            0x16, 0x0a, 0x06, 0x72, 0x61, 0x74, 0x69, 0x6e, 0x67, 0x12, 0x0c,
            0x12, 0x0a, 0x0a, 0x08, 0x85, 0xeb, 0x29, 0x40, 0x00, 0x00, 0x00,
            0x00, 0x0a, 0x18, 0x0a, 0x05, 0x74, 0x69, 0x74, 0x6c, 0x65, 0x12,
            0x0f, 0x0a, 0x0d, 0x0a, 0x0b, 0x42, 0x6c, 0x75, 0x65, 0x20, 0x4c,
            0x61, 0x67, 0x6f, 0x6f, 0x6e, 0x0a, 0x12, 0x0a, 0x07, 0x75, 0x73,
            0x65, 0x72, 0x5f, 0x69, 0x64, 0x12, 0x07, 0x1a, 0x05, 0x0a, 0x03,
            0xe0, 0xdc, 0x2a,
        ];
        let ex = Example::builder()
            .int64("clicks", [])
            .bytes_list("keywords", Vec::<&[u8]>::new())
            .floats("rating", [2.655, 0.0])
            .bytes("title", "Blue Lagoon")
            .int64("user_id", [700_000])
            .build();
        assert_eq!(ex.encode_to_vec(), golden);
    }

    #[test]
    fn accessors_return_none_for_other_kinds() {
        let f = Feature::int64_list([1, 2]);
        assert_eq!(f.as_int64(), Some(&[1, 2][..]));
        assert_eq!(f.as_floats(), None);
        assert_eq!(f.as_bytes(), None);
        assert_eq!(Example::default().feature("x"), None);
    }
}
