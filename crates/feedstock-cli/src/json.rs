//! Protobuf's canonical JSON mapping of `tf.train.Example` and
//! `SequenceExample`, as Python protobuf's `json_format.MessageToJson`
//! writes it.
//!
//! - Field names in lowerCamelCase (`int64List`, `featureLists`).
//! - Unset fields omitted; an empty repeated field is omitted, so an empty
//!   list prints as `{}`; a set but empty message prints as `{}`.
//! - `int64` values as decimal strings (`"42"`), bytes as standard base64
//!   with padding.
//! - `float` values as the shortest decimal that reads back as the same
//!   `f32` (what `json_format` does for `float` fields), written the way
//!   Python writes a float: `2.655`, `1.0`, `1e-05`, `3.4028235e+38`;
//!   non-finite values as the strings `"NaN"`, `"Infinity"`, `"-Infinity"`.
//!
//! Map entries come out sorted by name. Output is compact (no spaces),
//! which changes the text but not the JSON value of `MessageToJson`'s
//! indented output.
//!
//! The types here borrow the decoded message and implement
//! [`Serialize`]; write them with [`to_writer`] so that floats get
//! Python's spelling.

use std::collections::BTreeMap;
use std::io;

use base64::Engine as _;
use bytes::Bytes;
use feedstock::proto::{
    feature, Example, Feature, FeatureList, FeatureLists, Features,
    SequenceExample,
};
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};

/// Writes `value` as compact JSON with Python's float spelling.
pub(crate) fn to_writer<W: io::Write, T: Serialize>(
    w: W,
    value: &T,
) -> serde_json::Result<()> {
    let mut ser = serde_json::Serializer::with_formatter(w, PythonFloats);
    value.serialize(&mut ser)
}

/// The JSON of a [`Example`].
#[derive(Debug)]
pub(crate) struct ExampleJson<'a>(pub(crate) &'a Example);

/// The JSON of a [`SequenceExample`].
#[derive(Debug)]
pub(crate) struct SequenceExampleJson<'a>(pub(crate) &'a SequenceExample);

/// The entries set apart because their names are not UTF-8 (see
/// [`BinaryKeys`](crate::payload::BinaryKeys)): `{"features":
/// [{"nameBase64": ..., "feature": ...}], "featureLists": [...]}`.
#[derive(Debug)]
pub(crate) struct BinaryKeysJson<'a>(
    pub(crate) &'a crate::payload::BinaryKeys,
);

/// One entry with a raw name.
struct Named<'a, T>(&'a [u8], T);

impl<T: Serialize> Serialize for Named<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use base64::Engine as _;
        let b64 = base64::engine::general_purpose::STANDARD;
        let mut m = s.serialize_map(Some(2))?;
        m.serialize_entry("nameBase64", &b64.encode(self.0))?;
        m.serialize_entry("value", &self.1)?;
        m.end()
    }
}

impl Serialize for BinaryKeysJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        if !self.0.features.is_empty() {
            let v: Vec<_> = self
                .0
                .features
                .iter()
                .map(|(n, f)| Named(n, FeatureJson(f)))
                .collect();
            m.serialize_entry("features", &v)?;
        }
        if !self.0.feature_lists.is_empty() {
            let v: Vec<_> = self
                .0
                .feature_lists
                .iter()
                .map(|(n, l)| Named(n, FeatureListJson(l)))
                .collect();
            m.serialize_entry("featureLists", &v)?;
        }
        m.end()
    }
}

struct FeaturesJson<'a>(&'a Features);
struct FeatureMapJson<'a>(&'a BTreeMap<String, Feature>);
struct FeatureJson<'a>(&'a Feature);
struct FeatureListsJson<'a>(&'a FeatureLists);
struct FeatureListJson<'a>(&'a FeatureList);
/// `{"value": [...]}`, or `{}` when the list is empty.
struct ValueList<T>(T);
struct Base64s<'a>(&'a [Bytes]);
struct Int64Strings<'a>(&'a [i64]);
struct Floats<'a>(&'a [f32]);

impl Serialize for ExampleJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        if let Some(f) = &self.0.features {
            m.serialize_entry("features", &FeaturesJson(f))?;
        }
        m.end()
    }
}

impl Serialize for SequenceExampleJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        if let Some(f) = &self.0.context {
            m.serialize_entry("context", &FeaturesJson(f))?;
        }
        if let Some(l) = &self.0.feature_lists {
            m.serialize_entry("featureLists", &FeatureListsJson(l))?;
        }
        m.end()
    }
}

impl Serialize for FeaturesJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        if !self.0.feature.is_empty() {
            m.serialize_entry("feature", &FeatureMapJson(&self.0.feature))?;
        }
        m.end()
    }
}

impl Serialize for FeatureMapJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (name, f) in self.0 {
            m.serialize_entry(name, &FeatureJson(f))?;
        }
        m.end()
    }
}

impl Serialize for FeatureJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        match &self.0.kind {
            Some(feature::Kind::BytesList(l)) => {
                m.serialize_entry("bytesList", &ValueList(Base64s(&l.value)))?
            }
            Some(feature::Kind::FloatList(l)) => {
                m.serialize_entry("floatList", &ValueList(Floats(&l.value)))?
            }
            Some(feature::Kind::Int64List(l)) => m.serialize_entry(
                "int64List",
                &ValueList(Int64Strings(&l.value)),
            )?,
            None => {}
        }
        m.end()
    }
}

impl Serialize for FeatureListsJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        let lists = &self.0.feature_list;
        if !lists.is_empty() {
            m.serialize_entry("featureList", &FeatureListMap(lists))?;
        }
        m.end()
    }
}

struct FeatureListMap<'a>(&'a BTreeMap<String, FeatureList>);

impl Serialize for FeatureListMap<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (name, l) in self.0 {
            m.serialize_entry(name, &FeatureListJson(l))?;
        }
        m.end()
    }
}

impl Serialize for FeatureListJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        if !self.0.feature.is_empty() {
            let steps: Vec<FeatureJson<'_>> =
                self.0.feature.iter().map(FeatureJson).collect();
            m.serialize_entry("feature", &steps)?;
        }
        m.end()
    }
}

/// A list type that knows whether it is empty.
trait Values: Serialize {
    fn is_empty(&self) -> bool;
}

impl<T: Values> Serialize for ValueList<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        if !self.0.is_empty() {
            m.serialize_entry("value", &self.0)?;
        }
        m.end()
    }
}

impl Values for Base64s<'_> {
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Serialize for Base64s<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let b64 = &base64::engine::general_purpose::STANDARD;
        s.collect_seq(self.0.iter().map(|b| b64.encode(b)))
    }
}

impl Values for Int64Strings<'_> {
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Serialize for Int64Strings<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(|v| v.to_string()))
    }
}

impl Values for Floats<'_> {
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Serialize for Floats<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        for &x in self.0 {
            if x.is_nan() {
                seq.serialize_element("NaN")?;
            } else if x.is_infinite() {
                let name = if x > 0.0 { "Infinity" } else { "-Infinity" };
                seq.serialize_element(name)?;
            } else {
                seq.serialize_element(&x)?;
            }
        }
        seq.end()
    }
}

/// serde_json's formatter with `f32` written as Python writes the float
/// that `json_format` makes of it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PythonFloats;

impl serde_json::ser::Formatter for PythonFloats {
    fn write_f32<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        value: f32,
    ) -> io::Result<()> {
        w.write_all(python_float(value).as_bytes())
    }
}

/// What Python protobuf prints for the finite `f32` `x`.
///
/// `json_format` turns a `float` field into the Python float of its
/// shortest rounding to 6, 7, 8 ... significant digits (`%.{p}g`, ties to
/// even) that converts back to the same `f32`, and `json.dumps` prints
/// that float with `repr`. This follows the same steps rather than using
/// Rust's shortest-digits formatting, because the two differ: on exact
/// ties (`19781.0625` prints as `19781.062` here) and for subnormals,
/// where the search starting at 6 digits can stop at more digits than the
/// shortest. `repr` writes the digits positionally when the decimal
/// exponent `e` is in -5 < e < 16 (always with a fractional part, `1.0`),
/// otherwise as `d.ddde±XX` with at least two exponent digits.
pub(crate) fn python_float(x: f32) -> String {
    let wide = f64::from(x);
    let sci = (6..=17)
        .map(|p| format!("{:.*e}", p - 1, wide))
        .find(|s| s.parse::<f64>().map(|r| r as f32) == Ok(x))
        .expect("17 significant digits always round-trip");
    let (mantissa, exp) = sci.split_once('e').expect("{:e} has an e");
    let exp: i32 = exp.parse().expect("{:e} exponent");
    let mantissa = mantissa.trim_start_matches('-');
    let mantissa = if mantissa.contains('.') {
        mantissa.trim_end_matches('0').trim_end_matches('.')
    } else {
        mantissa
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let sign = if x.is_sign_negative() { "-" } else { "" };
    if (-5 < exp) && (exp < 16) {
        let n = digits.len() as i32;
        let body = if exp < 0 {
            format!("0.{}{digits}", "0".repeat((-exp - 1) as usize))
        } else if exp + 1 >= n {
            format!("{digits}{}.0", "0".repeat((exp + 1 - n) as usize))
        } else {
            let (int, frac) = digits.split_at(exp as usize + 1);
            format!("{int}.{frac}")
        };
        format!("{sign}{body}")
    } else {
        let esign = if exp < 0 { '-' } else { '+' };
        format!("{sign}{mantissa}e{esign}{:02}", exp.abs())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json<T: Serialize>(v: &T) -> String {
        let mut out = Vec::new();
        to_writer(&mut out, v).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn floats_are_spelled_as_python_prints_them() {
        let cases: &[(f32, &str)] = &[
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (1.0, "1.0"),
            (2.655, "2.655"),
            (0.1, "0.1"),
            (-0.9343, "-0.9343"),
            (100.0, "100.0"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1.5e-7, "1.5e-07"),
            (123456.79, "123456.79"),
            (1e15, "1000000000000000.0"),
            (1e16, "1e+16"),
            (f32::MAX, "3.4028235e+38"),
            (f32::MIN_POSITIVE, "1.1754944e-38"),
            // The smallest subnormal: 6 digits are where the search starts.
            (f32::from_bits(1), "1.4013e-45"),
            // An exact tie at 8 digits rounds to even, as printf does.
            (f32::from_bits(0x469a_8a20), "19781.062"),
            // A subnormal: 6 digits round-trip, though 5 would too.
            (f32::from_bits(0x8000_b70c), "-6.56648e-41"),
        ];
        for &(x, want) in cases {
            assert_eq!(python_float(x), want, "{x:e}");
        }
    }

    /// What the `example_decode` fuzz target checks of every Example: a
    /// NaN (with any payload) makes the message unequal to itself, so the
    /// round trip is compared as encoded bytes, which keep its bits.
    #[test]
    fn a_nan_example_round_trips_bit_for_bit_though_not_equal() {
        use prost::Message;
        let nan = f32::from_bits(0x7fc0_0001);
        let ex = Example::builder().floats("x", [nan, -0.0]).build();
        let once = ex.encode_to_vec();
        let back = Example::decode(&once[..]).unwrap();
        assert_ne!(back, ex);
        assert_eq!(back.encode_to_vec(), once);
        let mut out = Vec::new();
        to_writer(&mut out, &ExampleJson(&back)).unwrap();
        serde_json::from_slice::<serde_json::Value>(&out).unwrap();
    }

    #[test]
    fn example_json_follows_the_canonical_mapping() {
        let ex = Example::builder()
            .int64("label", [42, -7])
            .floats("x", [0.5, f32::NAN, f32::INFINITY, f32::NEG_INFINITY])
            .bytes("img", b"\x00\xffhi")
            .int64("none", [])
            .feature("unset", Feature::default())
            .build();
        assert_eq!(
            json(&ExampleJson(&ex)),
            r#"{"features":{"feature":{"img":{"bytesList":{"value":["AP9oaQ=="]}},"label":{"int64List":{"value":["42","-7"]}},"none":{"int64List":{}},"unset":{},"x":{"floatList":{"value":[0.5,"NaN","Infinity","-Infinity"]}}}}}"#
        );
    }

    #[test]
    fn unset_and_empty_messages_follow_presence() {
        assert_eq!(json(&ExampleJson(&Example::default())), "{}");
        let empty = Example {
            features: Some(Features::default()),
        };
        assert_eq!(json(&ExampleJson(&empty)), r#"{"features":{}}"#);
    }

    #[test]
    fn sequence_example_json_uses_camel_case_lists() {
        let mut lists = FeatureLists::default();
        lists.feature_list.insert(
            "t".into(),
            FeatureList {
                feature: vec![Feature::int64_list([1]), Feature::default()],
            },
        );
        lists
            .feature_list
            .insert("e".into(), FeatureList::default());
        let se = SequenceExample {
            context: None,
            feature_lists: Some(lists),
        };
        assert_eq!(
            json(&SequenceExampleJson(&se)),
            r#"{"featureLists":{"featureList":{"e":{},"t":{"feature":[{"int64List":{"value":["1"]}},{}]}}}}"#
        );
    }
}
