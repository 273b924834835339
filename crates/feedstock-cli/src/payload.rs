//! What a record holds: an Example, a SequenceExample, or other bytes.
//!
//! Protobuf decoding is lenient: it skips fields it does not know, so
//! almost any bytes "decode" as an `Example` (a short text record decodes
//! as an empty one) and a `SequenceExample` decodes as an `Example` that
//! silently lost its feature lists. Printing such a record as an Example
//! would hide data. So before decoding, the record's wire format is walked
//! against the schema of `tf.train.Example` / `SequenceExample`: a record
//! is shown as one only if every field at every level is a field of that
//! schema with the right wire type.

use bytes::Buf;
use feedstock::proto::{Example, SequenceExample};
use prost::encoding::{decode_key, decode_varint, WireType};
use prost::Message;

/// How `cat` should read each record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Example if it is one, else SequenceExample if it is one, else raw.
    Auto,
    /// SequenceExample if it is one, else raw.
    Sequence,
    /// Always raw bytes.
    Raw,
}

/// A record, decoded as far as it goes.
#[derive(Debug)]
pub(crate) enum Payload {
    /// A `tf.train.Example`.
    Example(Example),
    /// A `tf.train.SequenceExample`.
    SequenceExample(SequenceExample),
    /// Anything else.
    Raw,
}

/// Classifies and decodes `data`.
///
/// In [`Mode::Auto`] a record whose only top-level field is field 1 is an
/// Example, and one that also has field 2 (the feature lists) is a
/// SequenceExample. A SequenceExample without feature lists is, on the
/// wire, identical to an Example, and is shown as one unless
/// [`Mode::Sequence`] is asked for.
pub(crate) fn classify(data: &[u8], mode: Mode) -> Payload {
    match mode {
        Mode::Raw => Payload::Raw,
        Mode::Sequence => decode_sequence(data),
        Mode::Auto => {
            if conforms(data, Msg::Example) {
                if let Ok(ex) = Example::decode(data) {
                    return Payload::Example(ex);
                }
            }
            decode_sequence(data)
        }
    }
}

fn decode_sequence(data: &[u8]) -> Payload {
    if conforms(data, Msg::SequenceExample) {
        if let Ok(se) = SequenceExample::decode(data) {
            return Payload::SequenceExample(se);
        }
    }
    Payload::Raw
}

/// The messages of the two schemas.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Msg {
    Example,
    SequenceExample,
    Features,
    FeatureEntry,
    Feature,
    BytesList,
    FloatList,
    Int64List,
    FeatureLists,
    FeatureListEntry,
    FeatureList,
}

/// What a field holds.
enum Field {
    Message(Msg),
    /// A string or bytes.
    Bytes,
    /// Packed `float`s (length a multiple of 4).
    PackedFloat,
    /// Packed varints.
    PackedVarint,
    /// One unpacked `float`.
    Fixed32,
    /// One unpacked varint.
    Varint,
}

/// The schema: what field `tag` with wire type `wt` of `msg` holds.
fn field(msg: Msg, tag: u32, wt: WireType) -> Option<Field> {
    use WireType::{LengthDelimited as Len, ThirtyTwoBit, Varint};
    let f = match (msg, tag, wt) {
        (Msg::Example, 1, Len) => Field::Message(Msg::Features),
        (Msg::SequenceExample, 1, Len) => Field::Message(Msg::Features),
        (Msg::SequenceExample, 2, Len) => Field::Message(Msg::FeatureLists),
        (Msg::Features, 1, Len) => Field::Message(Msg::FeatureEntry),
        (Msg::FeatureEntry, 1, Len) => Field::Bytes,
        (Msg::FeatureEntry, 2, Len) => Field::Message(Msg::Feature),
        (Msg::Feature, 1, Len) => Field::Message(Msg::BytesList),
        (Msg::Feature, 2, Len) => Field::Message(Msg::FloatList),
        (Msg::Feature, 3, Len) => Field::Message(Msg::Int64List),
        (Msg::BytesList, 1, Len) => Field::Bytes,
        (Msg::FloatList, 1, Len) => Field::PackedFloat,
        (Msg::FloatList, 1, ThirtyTwoBit) => Field::Fixed32,
        (Msg::Int64List, 1, Len) => Field::PackedVarint,
        (Msg::Int64List, 1, Varint) => Field::Varint,
        (Msg::FeatureLists, 1, Len) => Field::Message(Msg::FeatureListEntry),
        (Msg::FeatureListEntry, 1, Len) => Field::Bytes,
        (Msg::FeatureListEntry, 2, Len) => Field::Message(Msg::FeatureList),
        (Msg::FeatureList, 1, Len) => Field::Message(Msg::Feature),
        _ => return None,
    };
    Some(f)
}

/// True if every field of `buf`, read as `msg`, is in the schema.
fn conforms(mut buf: &[u8], msg: Msg) -> bool {
    // Depth is bounded by the schema (at most 6 levels), so recursion is
    // safe on any input.
    while buf.has_remaining() {
        let Ok((tag, wt)) = decode_key(&mut buf) else {
            return false;
        };
        let Some(f) = field(msg, tag, wt) else {
            return false;
        };
        let ok = match f {
            Field::Varint => decode_varint(&mut buf).is_ok(),
            Field::Fixed32 => {
                if buf.remaining() < 4 {
                    return false;
                }
                buf.advance(4);
                true
            }
            Field::Message(_)
            | Field::Bytes
            | Field::PackedFloat
            | Field::PackedVarint => {
                let Ok(len) = decode_varint(&mut buf) else {
                    return false;
                };
                let Ok(len) = usize::try_from(len) else {
                    return false;
                };
                if len > buf.len() {
                    return false;
                }
                let (body, rest) = buf.split_at(len);
                buf = rest;
                match f {
                    Field::Message(m) => conforms(body, m),
                    Field::PackedFloat => len % 4 == 0,
                    Field::PackedVarint => packed_varints(body),
                    _ => true,
                }
            }
        };
        if !ok {
            return false;
        }
    }
    true
}

fn packed_varints(mut body: &[u8]) -> bool {
    while body.has_remaining() {
        if decode_varint(&mut body).is_err() {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use feedstock::proto::{
        Feature, FeatureList, FeatureLists, Features, SequenceExample,
    };

    fn sequence() -> SequenceExample {
        let mut lists = FeatureLists::default();
        lists.feature_list.insert(
            "tokens".into(),
            FeatureList {
                feature: vec![Feature::int64_list([1, 2])],
            },
        );
        SequenceExample {
            context: Some(Features::default()),
            feature_lists: Some(lists),
        }
    }

    #[test]
    fn an_example_is_an_example() {
        let ex = Example::builder()
            .int64("a", [1, -1])
            .floats("b", [0.5])
            .bytes("c", "x")
            .build();
        let p = classify(&ex.encode_to_vec(), Mode::Auto);
        assert!(matches!(p, Payload::Example(e) if e == ex));
    }

    #[test]
    fn an_empty_record_is_an_empty_example() {
        let p = classify(b"", Mode::Auto);
        assert!(matches!(p, Payload::Example(e) if e == Example::default()));
    }

    #[test]
    fn a_sequence_example_is_not_taken_for_an_example() {
        let se = sequence();
        let p = classify(&se.encode_to_vec(), Mode::Auto);
        assert!(matches!(p, Payload::SequenceExample(s) if s == se));
    }

    #[test]
    fn text_that_protobuf_would_accept_is_raw() {
        // "hi" decodes (leniently) as an empty Example: field 13, varint.
        assert!(Example::decode(&b"hi"[..]).is_ok());
        assert!(matches!(classify(b"hi", Mode::Auto), Payload::Raw));
    }

    #[test]
    fn an_unknown_nested_field_makes_the_record_raw() {
        let mut wire =
            Example::builder().int64("a", [1]).build().encode_to_vec();
        // Append field 9 (varint 1) inside the Features message: bump the
        // outer length and add the two bytes at the end.
        wire[1] += 2;
        wire.extend_from_slice(&[0x48, 0x01]);
        assert!(Example::decode(&wire[..]).is_ok());
        assert!(matches!(classify(&wire, Mode::Auto), Payload::Raw));
    }

    #[test]
    fn modes_force_the_reading() {
        let ex = Example::builder().int64("a", [1]).build().encode_to_vec();
        assert!(matches!(classify(&ex, Mode::Raw), Payload::Raw));
        assert!(matches!(
            classify(&ex, Mode::Sequence),
            Payload::SequenceExample(_)
        ));
    }
}
