//! Walking the outer messages of `Example` and `SequenceExample`: find each
//! map entry (`name → Feature` or `name → FeatureList`) without decoding
//! the values, and hand it to the caller, which keeps only the names its
//! spec asks for.
//!
//! Protobuf semantics are kept exactly: a repeated `features` field merges
//! (its entries simply continue the map), a later entry with the same name
//! replaces an earlier one (the caller overwrites its slot), an entry
//! without a value holds an empty message, and an entry whose value field
//! is repeated holds the merge of the parts, which for protobuf is the
//! parse of their concatenation (the rare case that makes a copy).

use std::ops::Range;

use bytes::Bytes;

use super::wire::{Reader, WireError, WireResult, WireType};

/// Where the serialized value of one map entry is.
#[derive(Debug, Clone)]
pub(crate) enum Src {
    /// A range of the record.
    Range(Range<usize>),
    /// Several value fields concatenated into a buffer of their own.
    Merged(Bytes),
}

impl Src {
    /// The buffer and range holding the value; `record` is the buffer
    /// the entry was found in.
    #[inline]
    pub(crate) fn resolve<'a>(
        &'a self,
        record: &'a Bytes,
    ) -> (&'a Bytes, Range<usize>) {
        match self {
            Src::Range(r) => (record, r.clone()),
            Src::Merged(b) => (b, 0..b.len()),
        }
    }
}

fn expect_delimited(wire: WireType, at: usize) -> WireResult<()> {
    if wire == WireType::Delimited {
        Ok(())
    } else {
        Err(WireError {
            pos: at,
            what: "message field with a wrong wire type",
        })
    }
}

/// Walks a message whose field `map_tag` is a map (`Features` has the map
/// in field 1, and so has `FeatureLists`), calling `entry(name, value)`
/// for each entry in wire order.
fn walk_map(
    buf: &[u8],
    range: Range<usize>,
    entry: &mut impl FnMut(&[u8], Src),
) -> WireResult<()> {
    each_message_in_field_1(buf, range, |e| {
        let (name, value) = map_entry(buf, e)?;
        entry(&buf[name], value);
        Ok::<(), WireError>(())
    })
}

/// Calls `f` with the range of every message in field 1 of the message in
/// `buf[range]` (a map's entries, a `FeatureList`'s features), in wire
/// order, skipping other fields and stopping at the first error.
fn each_message_in_field_1<E: From<WireError>>(
    buf: &[u8],
    range: Range<usize>,
    mut f: impl FnMut(Range<usize>) -> Result<(), E>,
) -> Result<(), E> {
    let mut r = Reader::new(buf, range);
    while !r.at_end() {
        let at = r.pos();
        let (tag, wire) = r.key()?;
        if tag != 1 {
            r.skip(tag, wire)?;
            continue;
        }
        expect_delimited(wire, at)?;
        f(r.delimited()?)?;
    }
    Ok(())
}

/// Splits one map entry into its key and its value.
#[inline]
fn map_entry(
    buf: &[u8],
    range: Range<usize>,
) -> WireResult<(Range<usize>, Src)> {
    let mut r = Reader::new(buf, range.clone());
    let mut name = range.start..range.start;
    let mut value: Option<Src> = None;
    while !r.at_end() {
        let at = r.pos();
        let (tag, wire) = r.key()?;
        match tag {
            1 => {
                expect_delimited(wire, at)?;
                name = r.delimited()?;
            }
            2 => {
                expect_delimited(wire, at)?;
                let part = r.delimited()?;
                value = Some(match value {
                    None => Src::Range(part),
                    Some(prev) => {
                        let mut joined = Vec::new();
                        match prev {
                            Src::Range(p) => joined.extend_from_slice(&buf[p]),
                            Src::Merged(b) => joined.extend_from_slice(&b),
                        }
                        joined.extend_from_slice(&buf[part]);
                        Src::Merged(Bytes::from(joined))
                    }
                });
            }
            _ => r.skip(tag, wire)?,
        }
    }
    let value = value.unwrap_or(Src::Range(range.end..range.end));
    Ok((name, value))
}

/// Walks a serialized `Example`, calling `entry(name, feature)` for each
/// feature map entry in wire order.
pub(crate) fn example(
    buf: &[u8],
    mut entry: impl FnMut(&[u8], Src),
) -> WireResult<()> {
    let mut r = Reader::new(buf, 0..buf.len());
    while !r.at_end() {
        let at = r.pos();
        let (tag, wire) = r.key()?;
        if tag != 1 {
            r.skip(tag, wire)?;
            continue;
        }
        expect_delimited(wire, at)?;
        let features = r.delimited()?;
        walk_map(buf, features, &mut entry)?;
    }
    Ok(())
}

/// Walks a serialized `SequenceExample`, calling `context(name, feature)`
/// for each context entry and `lists(name, feature_list)` for each
/// feature-list entry, each in wire order.
pub(crate) fn sequence_example(
    buf: &[u8],
    mut context: impl FnMut(&[u8], Src),
    mut lists: impl FnMut(&[u8], Src),
) -> WireResult<()> {
    let mut r = Reader::new(buf, 0..buf.len());
    while !r.at_end() {
        let at = r.pos();
        let (tag, wire) = r.key()?;
        match tag {
            1 | 2 => {
                expect_delimited(wire, at)?;
                let map = r.delimited()?;
                if tag == 1 {
                    walk_map(buf, map, &mut context)?;
                } else {
                    walk_map(buf, map, &mut lists)?;
                }
            }
            _ => r.skip(tag, wire)?,
        }
    }
    Ok(())
}

/// Calls `step(range)` for each `Feature` of the `FeatureList` in
/// `buf[range]`, in order, stopping at the first error.
pub(crate) fn feature_list<E: From<WireError>>(
    buf: &[u8],
    range: Range<usize>,
    step: impl FnMut(Range<usize>) -> Result<(), E>,
) -> Result<(), E> {
    each_message_in_field_1(buf, range, step)
}
