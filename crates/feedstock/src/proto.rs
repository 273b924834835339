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
//! Maps are `BTreeMap`s, so encoding writes keys in sorted order, as
//! TensorFlow's deterministic serialization does for keys of which none is
//! a prefix of another. Every map entry is written with both its key and
//! its value, even when they are empty (`""`, an empty `Feature`), as
//! protobuf does: TensorFlow's Example parser refuses an entry that lacks
//! either (see [`Features`]).

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
///
/// Its [`prost::Message`] implementation is written out rather than
/// derived: prost's map encoding leaves out a
/// key or value equal to its default, and TensorFlow's fast Example parser
/// rejects the whole record when an entry lacks one.
#[derive(Clone, PartialEq, Debug, Default)]
pub struct Features {
    /// The features by name.
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
///
/// Encoded by hand like [`Features`], so that an empty name or an empty
/// `FeatureList` is still written as protobuf writes it.
#[derive(Clone, PartialEq, Debug, Default)]
pub struct FeatureLists {
    /// The sequences by name.
    pub feature_list: BTreeMap<String, FeatureList>,
}

/// Implements [`prost::Message`] for a message whose only field is a
/// `map<string, $value>` with tag 1.
macro_rules! string_map_message {
    ($message:ident, $field:ident) => {
        impl prost::Message for $message {
            fn encode_raw(&self, buf: &mut impl prost::bytes::BufMut) {
                string_map::encode(1, &self.$field, buf);
            }

            fn merge_field(
                &mut self,
                tag: u32,
                wire_type: prost::encoding::WireType,
                buf: &mut impl prost::bytes::Buf,
                ctx: prost::encoding::DecodeContext,
            ) -> Result<(), prost::DecodeError> {
                if tag != 1 {
                    return prost::encoding::skip_field(
                        wire_type, tag, buf, ctx,
                    );
                }
                string_map::merge(wire_type, &mut self.$field, buf, ctx)
                    .map_err(|mut e| {
                        e.push(stringify!($message), stringify!($field));
                        e
                    })
            }

            fn encoded_len(&self) -> usize {
                string_map::encoded_len(1, &self.$field)
            }

            fn clear(&mut self) {
                self.$field.clear();
            }
        }
    };
}

string_map_message!(Features, feature);
string_map_message!(FeatureLists, feature_list);

/// protobuf's wire encoding of a `map<string, Message>` field, as
/// protobuf itself writes it: each entry is a length-delimited field
/// holding the key (field 1) and the value (field 2), both always present.
///
/// prost's own map encoding skips a key or value equal to its default;
/// decoding accepts either form (a missing key or value is the default).
mod string_map {
    use std::collections::BTreeMap;

    use prost::bytes::{Buf, BufMut};
    use prost::encoding::{self, DecodeContext, WireType};
    use prost::{DecodeError, Message};

    /// Writes every entry of `map` as field `tag`.
    pub(super) fn encode<M: Message>(
        tag: u32,
        map: &BTreeMap<String, M>,
        buf: &mut impl BufMut,
    ) {
        for (key, value) in map {
            encoding::encode_key(tag, WireType::LengthDelimited, buf);
            encoding::encode_varint(entry_len(key, value) as u64, buf);
            encoding::string::encode(1, key, buf);
            encoding::message::encode(2, value, buf);
        }
    }

    /// The length of what [`encode`] writes.
    pub(super) fn encoded_len<M: Message>(
        tag: u32,
        map: &BTreeMap<String, M>,
    ) -> usize {
        map.iter()
            .map(|(key, value)| {
                let len = entry_len(key, value);
                encoding::key_len(tag)
                    + encoding::encoded_len_varint(len as u64)
                    + len
            })
            .sum()
    }

    /// Reads one entry into `map`; a later entry with the same key
    /// replaces an earlier one, as protobuf's map semantics say.
    pub(super) fn merge<M: Message + Default>(
        wire_type: WireType,
        map: &mut BTreeMap<String, M>,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        encoding::check_wire_type(WireType::LengthDelimited, wire_type)?;
        encoding::btree_map::merge(
            encoding::string::merge,
            encoding::message::merge,
            map,
            buf,
            ctx,
        )
    }

    /// The length of one entry's body: its key and value fields.
    fn entry_len<M: Message>(key: &str, value: &M) -> usize {
        encoding::key_len(1)
            + encoding::encoded_len_varint(key.len() as u64)
            + key.len()
            + encoding::message::encoded_len(2, value)
    }
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

    /// Hex to bytes, for the wire bytes TensorFlow wrote.
    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    /// `tf.train.Example(features=tf.train.Features(feature=...))`.
    fn example(entries: &[(&str, Feature)]) -> Example {
        let mut b = Example::builder();
        for (name, f) in entries {
            b = b.feature(*name, f.clone());
        }
        b.build()
    }

    /// Encodes `msg`, checks the bytes are `tf_hex` (what TensorFlow's
    /// `SerializeToString(deterministic=True)` wrote) and that they decode
    /// back to `msg`.
    fn assert_tf_bytes<M: Message + Default + PartialEq + std::fmt::Debug>(
        msg: &M,
        tf_hex: &str,
    ) {
        let wire = hex(tf_hex);
        assert_eq!(msg.encoded_len(), wire.len());
        assert_eq!(msg.encode_to_vec(), wire);
        assert_eq!(&M::decode(&wire[..]).unwrap(), msg);
    }

    #[test]
    fn an_empty_feature_is_written_as_an_empty_value() {
        // Feature() as the value: TensorFlow writes `12 00`, and its
        // parser refuses the record without it.
        assert_tf_bytes(
            &example(&[("e", Feature::default())]),
            "0a070a050a01651200",
        );
        assert_tf_bytes(
            &Features {
                feature: [("e".to_string(), Feature::default())].into(),
            },
            "0a050a01651200",
        );
    }

    #[test]
    fn an_empty_name_is_written_as_an_empty_key() {
        assert_tf_bytes(
            &example(&[("", Feature::int64_list([7]))]),
            "0a0b0a090a0012051a030a0107",
        );
        assert_tf_bytes(
            &example(&[("", Feature::default())]),
            "0a060a040a001200",
        );
    }

    #[test]
    fn a_feature_only_read_is_written_like_tensorflow() {
        // e.features.feature["a"].int64_list.value.append(1);
        // e.features.feature["probe"]  (a read creates an empty Feature)
        assert_tf_bytes(
            &example(&[
                ("a", Feature::int64_list([1])),
                ("probe", Feature::default()),
            ]),
            "0a170a0a0a016112051a030a01010a090a0570726f62651200",
        );
    }

    /// The SequenceExample of [`sequence_example_with_empty_parts`]: a
    /// context feature, a feature list with an empty step, an empty
    /// feature list and one named "".
    fn tf_sequence_example() -> SequenceExample {
        let lists = [
            ("empty", vec![]),
            ("s", vec![Feature::float_list([1.5]), Feature::default()]),
            ("", vec![Feature::bytes_list(["x"])]),
        ];
        SequenceExample {
            context: Some(Features {
                feature: [("c".to_string(), Feature::int64_list([3]))].into(),
            }),
            feature_lists: Some(FeatureLists {
                feature_list: lists
                    .into_iter()
                    .map(|(k, v)| (k.to_string(), FeatureList { feature: v }))
                    .collect(),
            }),
        }
    }

    /// TensorFlow's bytes for [`tf_sequence_example`]. TensorFlow writes
    /// the key "" last (a prefix sorts after the longer key in its
    /// deterministic order); feedstock writes it first.
    const TF_SEQUENCE_HEX: &str = concat!(
        "0a0c0a0a0a016312051a030a0103",
        "122b",
        "0a090a05656d70747912000a110a0173120c0a0812060a040000c03f0a00",
        "0a0b0a0012070a050a030a0178",
    );

    #[test]
    fn sequence_example_with_empty_parts() {
        let se = tf_sequence_example();
        assert_eq!(
            SequenceExample::decode(&hex(TF_SEQUENCE_HEX)[..]).unwrap(),
            se
        );
        let wire = se.encode_to_vec();
        assert_eq!(wire.len(), hex(TF_SEQUENCE_HEX).len());
        // Same bytes as TensorFlow's once the "" entry is put last.
        let lists =
            "0a090a05656d70747912000a110a0173120c0a0812060a040000c03f0a00";
        let empty_key = "0a0b0a0012070a050a030a0178";
        let fs_hex =
            format!("0a0c0a0a0a016312051a030a0103122b{empty_key}{lists}");
        assert_eq!(wire, hex(&fs_hex));
        assert_tf_bytes(
            &SequenceExample {
                context: None,
                feature_lists: Some(FeatureLists {
                    feature_list: [("e".to_string(), FeatureList::default())]
                        .into(),
                }),
            },
            "12070a050a01651200",
        );
    }

    #[test]
    fn entries_without_key_or_value_still_decode() {
        // What prost used to write: protobuf's defaults fill in.
        let no_value = hex("0a050a030a0165");
        assert_eq!(
            Example::decode(&no_value[..]).unwrap(),
            example(&[("e", Feature::default())])
        );
        let no_key = hex("0a090a0712051a030a0107");
        assert_eq!(
            Example::decode(&no_key[..]).unwrap(),
            example(&[("", Feature::int64_list([7]))])
        );
    }

    #[test]
    fn a_map_field_of_the_wrong_wire_type_is_an_error() {
        // Features field 1 as a varint.
        assert!(Features::decode(&[0x08, 0x01][..]).is_err());
        // Unknown fields are skipped.
        let f = Features::decode(&hex("10010a050a01651200")[..]).unwrap();
        assert_eq!(f.feature.len(), 1);
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
