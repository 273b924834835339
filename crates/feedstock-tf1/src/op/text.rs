//! Ops on the text of strings: lengths, substrings and regular
//! expression replacement, as TensorFlow's `tf.strings` computes them.

use std::borrow::Cow;
use std::ops::RangeInclusive;
use std::sync::OnceLock;

use bytes::Bytes;
use feedstock::error::{Error, Result};
use feedstock::tensor::{DType, Tensor, Value};
use regex::bytes::{Captures, Regex};

use super::{
    dense_from, op, string_op_input, Args, Attrs, FromAttrs, In, OpDef,
    OutInfo,
};

/// The number of UTF-8 characters of `s`: the bytes that do not continue
/// a character, as TensorFlow counts them.
fn utf8_chars(s: &[u8]) -> usize {
    s.iter().filter(|&&b| b & 0xC0 != 0x80).count()
}

/// The byte offset of character `c` of `s` (`s.len()` past the last).
fn utf8_offset(s: &[u8], c: usize) -> usize {
    let mut seen = 0;
    for (i, &b) in s.iter().enumerate() {
        if b & 0xC0 != 0x80 {
            if seen == c {
                return i;
            }
            seen += 1;
        }
    }
    s.len()
}

op! {
    /// `tf.strings.length`: the length of each string, int32, of the
    /// input's shape: in bytes, or with `utf8_chars` in UTF-8 characters
    /// (TensorFlow's `unit="UTF8_CHAR"` counts the bytes that do not
    /// continue a character).
    StringLength = "StringLength" {
        /// Count UTF-8 characters rather than bytes.
        utf8_chars: bool,
    }
}

impl OpDef for StringLength {
    fn arity(&self) -> RangeInclusive<usize> {
        1..=1
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        let info = string_op_input(&ins[0], "StringLength")?;
        Ok(vec![dense_from(info.shape.clone(), DType::I32, &ins[0])])
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        let t = a.dense(0)?;
        let mut lengths = feedstock::tensor::try_vec::<i32>(t.dims())?;
        for s in t.as_slice::<Bytes>()? {
            let n = if self.utf8_chars {
                utf8_chars(s)
            } else {
                s.len()
            };
            lengths.push(i32::try_from(n).map_err(|_| {
                Error::invalid_argument(format!(
                    "StringLength: a string of {n} is longer than int32"
                ))
            })?);
        }
        out.push(Tensor::new(t.dims().to_vec(), lengths)?.into());
        Ok(())
    }
}

op! {
    /// `tf.strings.substr(input, pos, len)`: of each string, `len`
    /// bytes (or UTF-8 characters, with `utf8_chars`) from `pos` (from
    /// the end when negative), fewer at the end of the string; `pos` and
    /// `len` int32 or int64 scalars, or of the input's shape. A `pos`
    /// past either end of its string fails when run, naming the string
    /// and its index; a negative `len` takes the rest of the string.
    Substr = "Substr" {
        /// Count in UTF-8 characters rather than bytes.
        utf8_chars: bool,
    }
}

impl OpDef for Substr {
    fn arity(&self) -> RangeInclusive<usize> {
        3..=3
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        let info = string_op_input(&ins[0], "Substr")?;
        for (k, what) in [(1, "pos"), (2, "len")] {
            let i = ins[k].dense("Substr")?;
            if !matches!(i.dtype, DType::I32 | DType::I64) {
                return Err(Error::invalid_dtype(format!(
                    "Substr: {what} must be int32 or int64, not {}",
                    i.dtype
                )));
            }
        }
        if ins[1].dtype() != ins[2].dtype() {
            return Err(Error::invalid_dtype(
                "Substr: pos and len must have the same dtype",
            ));
        }
        Ok(vec![dense_from(info.shape.clone(), DType::String, &ins[0])])
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        let t = a.dense(0)?;
        let strings = t.as_slice::<Bytes>()?;
        let per_string = |k: usize, what: &str| -> Result<Vec<i64>> {
            let v = a.dense(k)?;
            let v64 = v.cast(DType::I64)?;
            let vals = v64.as_slice::<i64>()?;
            if v.rank() == 0 {
                return Ok(vec![vals[0]; strings.len()]);
            }
            if v.dims() != t.dims() {
                return Err(Error::invalid_argument(format!(
                    "Substr: {what} must be a scalar or of the input's \
                     shape {:?}, not {:?}",
                    t.dims(),
                    v.dims()
                )));
            }
            Ok(vals.to_vec())
        };
        let (pos, len) = (per_string(1, "pos")?, per_string(2, "len")?);
        let mut subs = feedstock::tensor::try_vec::<Bytes>(t.dims())?;
        for (i, s) in strings.iter().enumerate() {
            let size = if self.utf8_chars {
                utf8_chars(s)
            } else {
                s.len()
            };
            let size = i64::try_from(size).unwrap_or(i64::MAX);
            let p = if pos[i] < 0 { pos[i] + size } else { pos[i] };
            if p < 0 || p > size {
                // TensorFlow's words; the character form names no string.
                let shown = if self.utf8_chars {
                    String::new()
                } else {
                    format!(" b'{}'", s.escape_ascii())
                };
                return Err(Error::invalid_argument(format!(
                    "pos {} out of range for string{shown} at index {i}",
                    pos[i]
                )));
            }
            let n = if len[i] < 0 {
                size - p
            } else {
                len[i].min(size - p)
            };
            // Within the string: 0 <= p <= size and 0 <= n <= size - p.
            let (p, n) = (p as usize, n as usize);
            subs.push(if self.utf8_chars {
                let (from, to) = (utf8_offset(s, p), utf8_offset(s, p + n));
                s.slice(from..to)
            } else {
                s.slice(p..p + n)
            });
        }
        out.push(Tensor::new(t.dims().to_vec(), subs)?.into());
        Ok(())
    }
}

/// One step of an RE2 rewrite string: literal bytes or a group.
#[derive(Debug, Clone, PartialEq)]
enum Piece {
    Text(Vec<u8>),
    Group(usize),
}

/// An RE2 rewrite string (`\0`..`\9` a group, `\\` a backslash) as
/// pieces; `None` for one RE2 refuses (another escape), with which RE2
/// replaces nothing.
fn parse_rewrite(rewrite: &[u8]) -> Option<Vec<Piece>> {
    let mut pieces = Vec::new();
    let mut text = Vec::new();
    let mut it = rewrite.iter();
    while let Some(&b) = it.next() {
        if b != b'\\' {
            text.push(b);
            continue;
        }
        match it.next() {
            Some(&b'\\') => text.push(b'\\'),
            Some(&d) if d.is_ascii_digit() => {
                if !text.is_empty() {
                    pieces.push(Piece::Text(std::mem::take(&mut text)));
                }
                pieces.push(Piece::Group(usize::from(d - b'0')));
            }
            _ => return None,
        }
    }
    if !text.is_empty() {
        pieces.push(Piece::Text(text));
    }
    Some(pieces)
}

/// `tf.strings.regex_replace` with a pattern and a rewrite known while
/// building (TensorFlow's `StaticRegexReplace`): matches of `pattern`
/// (RE2 syntax, which the `regex` crate shares for what input pipelines
/// use) replaced by `rewrite` (`\1` a group, `\0` the match, `\\` a
/// backslash), every match or with `global` false the first. A rewrite
/// naming a group the pattern lacks replaces nothing, as RE2's; a bad
/// pattern fails when run (InvalidArgument), as TensorFlow's. The
/// pattern is compiled once, on the first run.
#[derive(Debug)]
pub struct RegexReplace {
    /// The regular expression.
    pub pattern: String,
    /// What replaces a match.
    pub rewrite: String,
    /// Every match, else the first.
    pub global: bool,
    compiled: OnceLock<std::result::Result<Compiled, String>>,
}

/// A compiled pattern, for text and for other bytes, and the rewrite's
/// pieces (`None`: replaces nothing).
#[derive(Debug)]
struct Compiled {
    text: regex::Regex,
    bytes: Regex,
    pieces: Option<Vec<Piece>>,
}

impl FromAttrs for RegexReplace {
    const TYPE: &'static str = "RegexReplace";

    fn from_attrs(a: &Attrs) -> Result<RegexReplace> {
        let t = Self::TYPE;
        Ok(RegexReplace::new(
            a.get::<String>(t, "pattern")?,
            a.get::<String>(t, "rewrite")?,
            a.get::<bool>(t, "global")?,
        ))
    }
}

impl RegexReplace {
    /// The op replacing `pattern` by `rewrite`.
    pub fn new(
        pattern: impl Into<String>,
        rewrite: impl Into<String>,
        global: bool,
    ) -> RegexReplace {
        RegexReplace {
            pattern: pattern.into(),
            rewrite: rewrite.into(),
            global,
            compiled: OnceLock::new(),
        }
    }

    fn compiled(&self) -> Result<&Compiled> {
        let compile = || {
            let invalid = |e: regex::Error| {
                let why = e.to_string();
                let last = why.lines().last().unwrap_or("").trim();
                let last = last.strip_prefix("error: ").unwrap_or(last);
                format!("Invalid pattern: {}, error: {last}", self.pattern)
            };
            let text = regex::Regex::new(&self.pattern).map_err(invalid)?;
            let bytes = Regex::new(&self.pattern).map_err(invalid)?;
            let groups = text.captures_len();
            let pieces = parse_rewrite(self.rewrite.as_bytes()).filter(|p| {
                p.iter().all(|x| match x {
                    Piece::Group(g) => *g < groups,
                    Piece::Text(_) => true,
                })
            });
            Ok(Compiled {
                text,
                bytes,
                pieces,
            })
        };
        self.compiled
            .get_or_init(compile)
            .as_ref()
            .map_err(|e| Error::invalid_argument(e.clone()))
    }
}

/// The bytes of `pieces`, a group's taken from `group`.
fn expand<'m>(
    pieces: &[Piece],
    group: impl Fn(usize) -> Option<&'m [u8]>,
) -> Vec<u8> {
    let mut v = Vec::new();
    for p in pieces {
        match p {
            Piece::Text(t) => v.extend_from_slice(t),
            Piece::Group(g) => {
                v.extend_from_slice(group(*g).unwrap_or_default())
            }
        }
    }
    v
}

/// `s` with the matches of the pattern replaced by `pieces`, every one
/// or the first. A UTF-8 string goes through `text` so that an empty
/// match never splits a character (RE2 matches UTF-8 by character);
/// other bytes through `bytes`.
fn replace<'s>(
    c: &Compiled,
    pieces: &[Piece],
    s: &'s [u8],
    global: bool,
) -> Cow<'s, [u8]> {
    let limit = if global { 0 } else { 1 };
    match std::str::from_utf8(s) {
        Ok(s) => {
            let f = |c: &regex::Captures<'_>| {
                String::from_utf8_lossy(&expand(pieces, |g| {
                    c.get(g).map(|m| m.as_str().as_bytes())
                }))
                .into_owned()
            };
            match c.text.replacen(s, limit, f) {
                Cow::Borrowed(b) => Cow::Borrowed(b.as_bytes()),
                Cow::Owned(o) => Cow::Owned(o.into_bytes()),
            }
        }
        Err(_) => c.bytes.replacen(s, limit, |m: &Captures<'_>| {
            expand(pieces, |g| m.get(g).map(|x| x.as_bytes()))
        }),
    }
}

impl OpDef for RegexReplace {
    fn arity(&self) -> RangeInclusive<usize> {
        1..=1
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        let info = string_op_input(&ins[0], "StaticRegexReplace")?;
        Ok(vec![dense_from(info.shape.clone(), DType::String, &ins[0])])
    }

    fn default_name(&self) -> &'static str {
        "StaticRegexReplace"
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        let t = a.dense(0)?;
        let c = self.compiled()?;
        let mut v = feedstock::tensor::try_vec::<Bytes>(t.dims())?;
        for s in t.as_slice::<Bytes>()? {
            v.push(match &c.pieces {
                Some(p) => match replace(c, p, s, self.global) {
                    Cow::Borrowed(_) => s.clone(),
                    Cow::Owned(o) => Bytes::from(o),
                },
                None => s.clone(),
            });
        }
        out.push(Tensor::new(t.dims().to_vec(), v)?.into());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(op: &RegexReplace, strs: &[&str]) -> Vec<String> {
        let c = op.compiled().unwrap();
        strs.iter()
            .map(|s| {
                let out = match &c.pieces {
                    Some(p) => replace(c, p, s.as_bytes(), op.global),
                    None => Cow::Borrowed(s.as_bytes()),
                };
                String::from_utf8(out.into_owned()).unwrap()
            })
            .collect()
    }

    fn rr(pattern: &str, rewrite: &str, global: bool) -> RegexReplace {
        RegexReplace::new(pattern, rewrite, global)
    }

    #[test]
    fn replacements_as_tensorflow() {
        // Observed with TensorFlow 2.21's tf.strings.regex_replace over
        // ["hello", "aaa", "abc", ""], global then first only.
        let s = ["hello", "aaa", "abc", ""];
        let cases: [(&str, &str, [&str; 4], [&str; 4]); 6] = [
            (
                "l*",
                "-",
                ["-h-e-o-", "-a-a-a-", "-a-b-c-", "-"],
                ["-hello", "-aaa", "-abc", "-"],
            ),
            (
                "a*",
                "X",
                ["XhXeXlXlXoX", "X", "XbXcX", "X"],
                ["Xhello", "X", "Xbc", "X"],
            ),
            (
                "b*",
                "-",
                ["-h-e-l-l-o-", "-a-a-a-", "-a-c-", "-"],
                ["-hello", "-aaa", "-abc", "-"],
            ),
            (
                "(a)|b",
                "[\\1]",
                ["hello", "[a][a][a]", "[a][]c", ""],
                ["hello", "[a]aa", "[a]bc", ""],
            ),
            (
                ".",
                "\\0\\0",
                ["hheelllloo", "aaaaaa", "aabbcc", ""],
                ["hhello", "aaaa", "aabc", ""],
            ),
            (
                "l",
                "\\3",
                ["hello", "aaa", "abc", ""],
                ["hello", "aaa", "abc", ""],
            ),
        ];
        for (p, r, global, first) in cases {
            assert_eq!(run(&rr(p, r, true), &s), global, "{p} {r}");
            assert_eq!(run(&rr(p, r, false), &s), first, "{p} {r}");
        }
        let h = ["héllo"];
        assert_eq!(run(&rr("", "-", true), &h), ["-h-é-l-l-o-"]);
        assert_eq!(run(&rr("[[:alpha:]]", "$", true), &h), ["$é$$$"]);
        assert_eq!(run(&rr("(h)(.)", "\\2\\1\\\\", false), &h), ["éh\\llo"]);
    }

    #[test]
    fn a_bad_pattern_is_invalid_argument() {
        let e = rr("(", "x", true).compiled().unwrap_err();
        assert!(e.to_string().contains("Invalid pattern: ("), "{e}");
    }
}
