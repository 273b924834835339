//! The column spec of `feedstock convert csv`: which CSV columns become
//! which Example features.
//!
//! ```text
//! spec   := entry (',' entry)*
//! entry  := NAME ':' TYPE ['*' N] ['=' DEFAULT]
//!                                     N consecutive columns, one feature
//!         | '_' ['*' N]               N columns that are skipped
//! TYPE   := int64 | float | bytes
//! ```
//!
//! Entries take the CSV's columns left to right. `image:float*64` packs 64
//! columns into one float feature of 64 values; `label:int64` is one
//! column; `temp:float=0` is a column whose empty (or `--na-value`)
//! fields read as 0, as `decode_csv`'s `record_defaults` give. Names must
//! be distinct and non-empty; spaces around the parts are ignored. Number
//! fields without a default are required; an empty bytes field is the
//! empty string unless a default says otherwise. The columns add up to at
//! most [`MAX_COLUMNS`].

use std::str::FromStr;

/// The most columns a spec may cover, skipped ones included: far more
/// than any CSV has, few enough that the per-column state of a batch
/// stays small.
pub(crate) const MAX_COLUMNS: usize = 1_000_000;

use feedstock::decode::csv::RecordDefault;
use feedstock::{DType, Error, Result};

/// A parsed column spec.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ColumnSpec {
    /// The entries, in column order.
    pub(crate) entries: Vec<Entry>,
}

/// One entry: some consecutive columns.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Entry {
    /// The feature's name, or `None` for skipped columns.
    pub(crate) name: Option<String>,
    /// The values' type (meaningless when skipped).
    pub(crate) ty: ValueType,
    /// How many columns.
    pub(crate) count: usize,
    /// What an empty field reads as, if not required.
    pub(crate) default: Option<RecordDefault>,
}

/// The type of a feature's values: the three lists of `tf.train.Feature`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ValueType {
    /// `int64_list`.
    Int64,
    /// `float_list`.
    Float,
    /// `bytes_list`.
    Bytes,
}

impl ValueType {
    /// The type's name in a spec.
    pub(crate) fn name(self) -> &'static str {
        match self {
            ValueType::Int64 => "int64",
            ValueType::Float => "float",
            ValueType::Bytes => "bytes",
        }
    }

    /// The dtype `decode_csv` parses the columns as.
    pub(crate) fn dtype(self) -> DType {
        match self {
            ValueType::Int64 => DType::I64,
            ValueType::Float => DType::F32,
            ValueType::Bytes => DType::String,
        }
    }
}

impl ColumnSpec {
    /// The CSV columns the features read (skipped ones left out), in
    /// order.
    pub(crate) fn selected_columns(&self) -> Vec<usize> {
        let mut at = 0;
        let mut out = Vec::new();
        for e in &self.entries {
            if e.name.is_some() {
                out.extend(at..at + e.count);
            }
            at += e.count;
        }
        out
    }

    /// True if some columns are skipped.
    pub(crate) fn skips(&self) -> bool {
        self.entries.iter().any(|e| e.name.is_none())
    }

    /// One `decode_csv` default per selected column: numbers are
    /// required (an empty field is an error), an empty bytes field is the
    /// empty string.
    pub(crate) fn defaults(&self) -> Result<Vec<RecordDefault>> {
        let mut out = Vec::new();
        for e in self.entries.iter().filter(|e| e.name.is_some()) {
            for _ in 0..e.count {
                out.push(match (&e.default, e.ty) {
                    (Some(d), _) => d.clone(),
                    (None, ValueType::Bytes) => RecordDefault::string(""),
                    (None, ty) => RecordDefault::required(ty.dtype())?,
                });
            }
        }
        Ok(out)
    }
}

impl FromStr for ColumnSpec {
    type Err = Error;

    /// Parses a spec.
    ///
    /// # Errors
    ///
    /// InvalidArgument naming the bad entry (its 1-based position and
    /// text) and what is wrong with it.
    fn from_str(s: &str) -> Result<ColumnSpec> {
        let mut entries: Vec<Entry> = Vec::new();
        let mut columns = 0usize;
        for (i, part) in s.split(',').enumerate() {
            let entry = parse_entry(part.trim()).map_err(|why| {
                Error::invalid_argument(format!(
                    "bad column spec entry {} {:?}: {why}",
                    i + 1,
                    part.trim()
                ))
            })?;
            if let Some(name) = &entry.name {
                if entries.iter().any(|e| e.name.as_ref() == Some(name)) {
                    return Err(Error::invalid_argument(format!(
                        "bad column spec entry {} {:?}: the name {name:?} \
                         is used twice",
                        i + 1,
                        part.trim()
                    )));
                }
            }
            columns = columns
                .checked_add(entry.count)
                .filter(|&c| c <= MAX_COLUMNS)
                .ok_or_else(|| {
                    Error::invalid_argument(format!(
                        "bad column spec entry {} {:?}: the columns add up \
                         to more than {MAX_COLUMNS}",
                        i + 1,
                        part.trim()
                    ))
                })?;
            entries.push(entry);
        }
        if entries.iter().all(|e| e.name.is_none()) {
            return Err(Error::invalid_argument(
                "bad column spec: it names no feature",
            ));
        }
        Ok(ColumnSpec { entries })
    }
}

/// Parses one entry, or says what is wrong with it.
fn parse_entry(part: &str) -> std::result::Result<Entry, String> {
    if part.is_empty() {
        return Err("empty entry (expected NAME:TYPE or _)".into());
    }
    let (part, default) = match part.split_once('=') {
        Some((head, d)) => (head.trim(), Some(d.trim())),
        None => (part, None),
    };
    let (head, count) = match part.split_once('*') {
        Some((head, n)) => {
            let n = n.trim();
            let digits =
                !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit());
            if !digits || n.bytes().all(|b| b == b'0') {
                return Err(format!(
                    "the count {n:?} after '*' is not a positive integer"
                ));
            }
            let count = n
                .parse::<usize>()
                .ok()
                .filter(|&c| c <= MAX_COLUMNS)
                .ok_or_else(|| {
                    format!(
                        "the count {n} after '*' is too big (at most \
                         {MAX_COLUMNS} columns)"
                    )
                })?;
            (head.trim(), count)
        }
        None => (part, 1),
    };
    if head == "_" {
        if default.is_some() {
            return Err("a skipped column takes no default".into());
        }
        return Ok(Entry {
            name: None,
            ty: ValueType::Bytes,
            count,
            default: None,
        });
    }
    let Some((name, ty)) = head.split_once(':') else {
        return Err("expected NAME:TYPE (or _ to skip a column)".into());
    };
    let (name, ty) = (name.trim(), ty.trim());
    if name.is_empty() {
        return Err("the feature name is empty".into());
    }
    let ty = match ty {
        "int64" => ValueType::Int64,
        "float" => ValueType::Float,
        "bytes" => ValueType::Bytes,
        other => {
            return Err(format!(
                "unknown type {other:?} (expected int64, float or bytes)"
            ))
        }
    };
    let default = match default {
        None => None,
        Some(d) => Some(parse_default(ty, d)?),
    };
    Ok(Entry {
        name: Some(name.to_owned()),
        ty,
        count,
        default,
    })
}

/// Parses the default after '=' as a value of `ty`.
fn parse_default(
    ty: ValueType,
    d: &str,
) -> std::result::Result<RecordDefault, String> {
    let bad = |e: &dyn std::fmt::Display| {
        format!("the default {d:?} is not a valid {}: {e}", ty.name())
    };
    Ok(match ty {
        ValueType::Int64 => {
            RecordDefault::i64(d.parse().map_err(|e| bad(&e))?)
        }
        ValueType::Float => {
            RecordDefault::f32(d.parse().map_err(|e| bad(&e))?)
        }
        ValueType::Bytes => RecordDefault::string(d.to_owned()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str, ty: ValueType, count: usize) -> Entry {
        Entry {
            name: Some(name.into()),
            ty,
            count,
            default: None,
        }
    }

    #[test]
    fn the_grammar_parses_types_counts_and_skips() {
        let spec: ColumnSpec = " image : float * 64 ,label:int64,_*2,id:bytes"
            .parse()
            .unwrap();
        assert_eq!(
            spec.entries,
            [
                entry("image", ValueType::Float, 64),
                entry("label", ValueType::Int64, 1),
                Entry {
                    name: None,
                    ty: ValueType::Bytes,
                    count: 2,
                    default: None,
                },
                entry("id", ValueType::Bytes, 1),
            ]
        );
        let cols = spec.selected_columns();
        assert_eq!(cols.len(), 66);
        assert_eq!(&cols[63..], &[63, 64, 67]);
        assert!(spec.skips());
        assert_eq!(spec.defaults().unwrap().len(), 66);
    }

    #[test]
    fn each_bad_spec_names_the_bad_entry_and_why() {
        let cases = [
            (
                "a:int64,b:flot",
                "entry 2 \"b:flot\": unknown type \"flot\"",
            ),
            ("a:int64,", "entry 2 \"\": empty entry"),
            ("a", "entry 1 \"a\": expected NAME:TYPE"),
            (":int64", "the feature name is empty"),
            ("a:float*0", "the count \"0\" after '*'"),
            ("a:float*x", "the count \"x\""),
            ("a:int64,a:float", "the name \"a\" is used twice"),
            ("_*3", "it names no feature"),
            (
                "a:int64*100000000000",
                "the count 100000000000 after '*' is too big",
            ),
            (
                "_*18446744073709551615,a:int64",
                "the count 18446744073709551615 after '*' is too big",
            ),
            ("_*99999999999999999999999", "is too big"),
            ("_*600000,a:int64*600000", "add up to more than 1000000"),
            ("a:int64=x", "the default \"x\" is not a valid int64"),
            ("a:float=", "the default \"\" is not a valid float"),
            ("_=0,a:int64", "a skipped column takes no default"),
        ];
        for (spec, want) in cases {
            let err = spec.parse::<ColumnSpec>().unwrap_err();
            assert_eq!(err.kind(), feedstock::Kind::InvalidArgument);
            assert!(err.to_string().contains(want), "{spec}: {err}");
        }
    }

    #[test]
    fn defaults_fill_only_their_columns() {
        let spec: ColumnSpec =
            "station:bytes=?,temp:float*2=0.5,n:int64=-1,id:int64"
                .parse()
                .unwrap();
        let d = spec.defaults().unwrap();
        assert_eq!(
            d,
            [
                RecordDefault::string("?"),
                RecordDefault::f32(0.5),
                RecordDefault::f32(0.5),
                RecordDefault::i64(-1),
                RecordDefault::required(DType::I64).unwrap(),
            ]
        );
    }
}
