//! The column spec of `feedstock convert csv`: which CSV columns become
//! which Example features.
//!
//! ```text
//! spec   := entry (',' entry)*
//! entry  := NAME ':' TYPE ['*' N]     N consecutive columns, one feature
//!         | '_' ['*' N]               N columns that are skipped
//! TYPE   := int64 | float | bytes
//! ```
//!
//! Entries take the CSV's columns left to right. `image:float*64` packs 64
//! columns into one float feature of 64 values; `label:int64` is one
//! column. Names must be distinct and non-empty; spaces around the parts
//! are ignored. Number fields are required; an empty bytes field is the
//! empty string.

use std::str::FromStr;

use feedstock::decode::csv::RecordDefault;
use feedstock::{DType, Error, Result};

/// A parsed column spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ColumnSpec {
    /// The entries, in column order.
    pub(crate) entries: Vec<Entry>,
}

/// One entry: some consecutive columns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    /// The feature's name, or `None` for skipped columns.
    pub(crate) name: Option<String>,
    /// The values' type (meaningless when skipped).
    pub(crate) ty: ValueType,
    /// How many columns.
    pub(crate) count: usize,
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
                out.push(match e.ty {
                    ValueType::Bytes => RecordDefault::string(""),
                    ty => RecordDefault::required(ty.dtype())?,
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
    let (head, count) = match part.split_once('*') {
        Some((head, n)) => {
            let n = n.trim();
            let count = n.parse::<usize>().ok().filter(|&c| c > 0);
            let Some(count) = count else {
                return Err(format!(
                    "the count {n:?} after '*' is not a positive integer"
                ));
            };
            (head.trim(), count)
        }
        None => (part, 1),
    };
    if head == "_" {
        return Ok(Entry {
            name: None,
            ty: ValueType::Bytes,
            count,
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
    Ok(Entry {
        name: Some(name.to_owned()),
        ty,
        count,
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
                    count: 2
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
        ];
        for (spec, want) in cases {
            let err = spec.parse::<ColumnSpec>().unwrap_err();
            assert_eq!(err.kind(), feedstock::Kind::InvalidArgument);
            assert!(err.to_string().contains(want), "{spec}: {err}");
        }
    }
}
