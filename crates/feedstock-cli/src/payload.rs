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
use feedstock::proto::{Example, Feature, FeatureList, SequenceExample};
use prost::encoding::{decode_key, decode_varint, encode_varint, WireType};
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

/// The entries of a record whose names are not UTF-8, which
/// `tf.train.Example` (a `map<string, Feature>`) cannot hold, taken out
/// so that the rest of the record can still be shown as one.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct BinaryKeys {
    /// Features (of an Example, or a SequenceExample's context), by raw
    /// name.
    pub(crate) features: Vec<(Vec<u8>, Feature)>,
    /// Feature lists of a SequenceExample, by raw name.
    pub(crate) feature_lists: Vec<(Vec<u8>, FeatureList)>,
}

impl BinaryKeys {
    /// True if nothing was taken out.
    pub(crate) fn is_empty(&self) -> bool {
        self.features.is_empty() && self.feature_lists.is_empty()
    }
}

/// As [`classify`], but a record that is an Example or SequenceExample
/// except for feature names that are not UTF-8 is shown as one, with
/// those entries apart, instead of as raw bytes.
pub(crate) fn classify_keeping(
    data: &[u8],
    mode: Mode,
) -> (Payload, BinaryKeys) {
    let payload = classify(data, mode);
    if !matches!(payload, Payload::Raw) || mode == Mode::Raw {
        return (payload, BinaryKeys::default());
    }
    for msg in [Msg::Example, Msg::SequenceExample] {
        if mode == Mode::Sequence && msg == Msg::Example {
            continue;
        }
        let mut binary = BinaryKeys::default();
        let mut rest = Vec::with_capacity(data.len());
        if conforms(data, msg)
            && split_binary_keys(data, msg, &mut rest, &mut binary)
            && !binary.is_empty()
        {
            let p = match msg {
                Msg::Example => {
                    Example::decode(&rest[..]).map(Payload::Example)
                }
                _ => SequenceExample::decode(&rest[..])
                    .map(Payload::SequenceExample),
            };
            if let Ok(p) = p {
                return (p, binary);
            }
        }
    }
    (payload, BinaryKeys::default())
}

/// Copies `buf`, a conforming `msg`, into `out`, leaving out the map
/// entries whose name is not UTF-8 and decoding those into `binary`.
/// Returns false if such an entry's value does not decode.
fn split_binary_keys(
    mut buf: &[u8],
    msg: Msg,
    out: &mut Vec<u8>,
    binary: &mut BinaryKeys,
) -> bool {
    while buf.has_remaining() {
        let start = buf;
        let Ok((tag, wt)) = decode_key(&mut buf) else {
            return false;
        };
        let Some(f) = field(msg, tag, wt) else {
            return false;
        };
        let Field::Message(inner) = f else {
            // Not a message: copy the field as it is.
            let skipped = match f {
                Field::Varint => decode_varint(&mut buf).is_ok(),
                Field::Fixed32 if buf.remaining() >= 4 => {
                    buf.advance(4);
                    true
                }
                Field::Fixed32 => false,
                _ => match decode_varint(&mut buf) {
                    Ok(len) if len as usize <= buf.len() => {
                        buf.advance(len as usize);
                        true
                    }
                    _ => false,
                },
            };
            if !skipped {
                return false;
            }
            out.extend_from_slice(&start[..start.len() - buf.len()]);
            continue;
        };
        let key_len = start.len() - buf.len();
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
        if matches!(inner, Msg::FeatureEntry | Msg::FeatureListEntry) {
            let Some((name, value)) = entry_parts(body) else {
                return false;
            };
            if std::str::from_utf8(name).is_err() {
                let ok = match inner {
                    Msg::FeatureEntry => Feature::decode(value)
                        .map(|f| binary.features.push((name.to_vec(), f)))
                        .is_ok(),
                    _ => FeatureList::decode(value)
                        .map(|l| binary.feature_lists.push((name.to_vec(), l)))
                        .is_ok(),
                };
                if !ok {
                    return false;
                }
                continue;
            }
            out.extend_from_slice(&start[..start.len() - buf.len()]);
            continue;
        }
        let mut inner_out = Vec::with_capacity(body.len());
        if !split_binary_keys(body, inner, &mut inner_out, binary) {
            return false;
        }
        out.extend_from_slice(&start[..key_len]);
        encode_varint(inner_out.len() as u64, out);
        out.extend_from_slice(&inner_out);
    }
    true
}

/// The name (field 1) and value (field 2) of a conforming map entry; the
/// last of each wins, as in protobuf.
fn entry_parts(mut body: &[u8]) -> Option<(&[u8], &[u8])> {
    let (mut name, mut value): (&[u8], &[u8]) = (&[], &[]);
    while body.has_remaining() {
        let (tag, _) = decode_key(&mut body).ok()?;
        let len = usize::try_from(decode_varint(&mut body).ok()?).ok()?;
        if len > body.len() {
            return None;
        }
        let (v, rest) = body.split_at(len);
        body = rest;
        match tag {
            1 => name = v,
            _ => value = v,
        }
    }
    Some((name, value))
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

    /// A wire Example whose first feature's name is `name`, raw.
    fn example_named(name: &[u8]) -> Vec<u8> {
        let ex = Example::builder()
            .int64("aaaa", [1])
            .floats("b", [0.5])
            .build();
        let mut wire = ex.encode_to_vec();
        let at = wire.windows(4).position(|w| w == b"aaaa").unwrap();
        wire[at..at + 4].copy_from_slice(name);
        wire
    }

    #[test]
    fn a_feature_name_that_is_not_utf8_is_set_apart_not_the_whole_record() {
        let wire = example_named(b"a\xffz\n");
        assert!(Example::decode(&wire[..]).is_err());
        assert!(matches!(classify(&wire, Mode::Auto), Payload::Raw));
        let (p, binary) = classify_keeping(&wire, Mode::Auto);
        let want = Example::builder().floats("b", [0.5]).build();
        assert!(matches!(p, Payload::Example(e) if e == want));
        assert_eq!(
            binary.features,
            [(b"a\xffz\n".to_vec(), Feature::int64_list([1]))]
        );
        // Valid names lose nothing and take nothing apart.
        let (p, binary) =
            classify_keeping(&example_named(b"abcd"), Mode::Auto);
        assert!(
            matches!(p, Payload::Example(e) if e.features.as_ref().unwrap().feature.len() == 2)
        );
        assert!(binary.is_empty());
        // A sequence example's list names likewise.
        let mut wire = sequence().encode_to_vec();
        let at = wire.windows(6).position(|w| w == b"tokens").unwrap();
        wire[at] = 0xfe;
        let (p, binary) = classify_keeping(&wire, Mode::Auto);
        assert!(matches!(p, Payload::SequenceExample(_)), "{p:?}");
        assert_eq!(binary.feature_lists.len(), 1);
        assert_eq!(binary.feature_lists[0].0, b"\xfeokens");
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
