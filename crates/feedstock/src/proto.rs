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
