//! Splitting a CSV record into fields with TensorFlow's rules.
//!
//! Written by hand rather than with `csv-core`: `csv-core` is deliberately
//! lenient (it accepts `a"b` and `"a"b` and makes a field of them), while
//! TensorFlow rejects both, and it has no notion of TensorFlow's skipping
//! of `\n` / `\r` at the start of a field. The rules are small enough that
//! a direct loop is clearer than adapting a general state machine.

/// A field's place in its record: the bytes `start..end` (inside the
/// quotes for a quoted field), and whether they hold `""` escapes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Span {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) escaped: bool,
}

/// A splitting or parsing failure at one record column.
#[derive(Debug)]
pub(super) struct FieldError {
    pub(super) column: usize,
    pub(super) message: String,
}

/// `raw` with every `""` replaced by `"`.
pub(super) fn unescape(raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.len());
    let mut rest = raw;
    while let Some(q) = memchr::memchr(b'"', rest) {
        // The text up to the first quote of the pair, then past both.
        out.extend_from_slice(&rest[..=q]);
        rest = &rest[(q + 2).min(rest.len())..];
    }
    out.extend_from_slice(rest);
    out
}

/// Records up to this long are split in one pass over 8-byte words
/// ([`Splitter::split_short`]); longer ones with `memchr`.
const SHORT_RECORD: usize = 128;

/// The high bit of every byte of a word.
const HIGH_BITS: u64 = 0x8080_8080_8080_8080;

/// The high bit of each byte of `word` that equals `b`, and no other bit
/// (exact for every byte: no carry crosses from one byte to the next).
fn bytes_equal(word: u64, b: u8) -> u64 {
    let low7 = !HIGH_BITS;
    let v = word ^ (u64::from(b) * 0x0101_0101_0101_0101);
    // A byte's high bit ends up set iff all of its bits were zero.
    !(((v & low7) + low7) | v | low7)
}

/// Adds the unquoted field `bytes` of record column `column` to `spans`
/// if it is selected; returns true once every selected column has its
/// span (never without a selection).
fn keep_plain(
    spans: &mut Vec<Span>,
    select: Option<&[usize]>,
    column: usize,
    bytes: std::ops::Range<usize>,
) -> bool {
    if select.is_none_or(|s| s[spans.len()] == column) {
        spans.push(Span {
            start: bytes.start,
            end: bytes.end,
            escaped: false,
        });
        return select.is_some_and(|s| s.len() == spans.len());
    }
    false
}

/// Splits records into fields with TensorFlow's rules.
#[derive(Debug, Clone, Copy)]
pub(super) struct Splitter {
    pub(super) delim: u8,
    pub(super) quoting: bool,
}

impl Splitter {
    /// Fills `spans` with the fields of `rec` (only the `select`ed record
    /// columns, if given; splitting stops after the last of them).
    pub(super) fn split(
        &self,
        rec: &[u8],
        select: Option<&[usize]>,
        spans: &mut Vec<Span>,
    ) -> Result<(), FieldError> {
        spans.clear();
        let n = rec.len();
        if n == 0 {
            return Ok(());
        }
        // Fast path: no quote, CR or LF anywhere means every field is the
        // text between two delimiters.
        if n <= SHORT_RECORD {
            if self.split_short(rec, select, spans) {
                return Ok(());
            }
            spans.clear();
        } else {
            let special = if self.quoting {
                memchr::memchr3(b'"', b'\n', b'\r', rec)
            } else {
                memchr::memchr2(b'\n', b'\r', rec)
            };
            if special.is_none() {
                return self.split_plain(rec, select, spans);
            }
        }
        self.split_general(rec, select, spans)
    }

    /// `split` for any non-empty record, byte by byte, with `spans`
    /// empty.
    fn split_general(
        &self,
        rec: &[u8],
        select: Option<&[usize]>,
        spans: &mut Vec<Span>,
    ) -> Result<(), FieldError> {
        let n = rec.len();
        let mut i = 0;
        let mut column = 0;
        while i < n {
            if rec[i] == b'\n' || rec[i] == b'\r' {
                i += 1;
                continue;
            }
            let (span, next) = if self.quoting && rec[i] == b'"' {
                self.quoted(rec, i + 1, column)?
            } else {
                self.unquoted(rec, i, column)?
            };
            i = next;
            if select.is_none_or(|s| s[spans.len()] == column) {
                spans.push(span);
                if select.is_some_and(|s| s.len() == spans.len()) {
                    return Ok(());
                }
            }
            column += 1;
        }
        if rec[n - 1] == self.delim
            && select.is_none_or(|s| s[spans.len()] == column)
        {
            spans.push(Span {
                start: n,
                end: n,
                escaped: false,
            });
        }
        Ok(())
    }

    /// `split_plain` for a short record, in one pass over its bytes, eight
    /// at a time, that also looks for quotes, CR and LF (a record of a
    /// few numbers is shorter than the set-up of two `memchr` searches,
    /// and a loop over single bytes mispredicts a branch at every
    /// delimiter). Returns false, with `spans` partly filled, at the first
    /// word holding one of those: the record needs the full splitter.
    fn split_short(
        &self,
        rec: &[u8],
        select: Option<&[usize]>,
        spans: &mut Vec<Span>,
    ) -> bool {
        let (mut start, mut column) = (0, 0);
        let words = rec.chunks_exact(8);
        let tail = words.remainder();
        let mut last = [0u8; 8];
        last[..tail.len()].copy_from_slice(tail);
        // Whole words are loaded as they are (copying each into a
        // buffer first stalls the load on the copy's stores); only the
        // last, partial one is padded.
        let whole = words.map(|w| {
            (u64::from_le_bytes(w.try_into().unwrap_or_default()), 8)
        });
        let partial =
            (!tail.is_empty()).then(|| (u64::from_le_bytes(last), tail.len()));
        for (w, (word, len)) in whole.chain(partial).enumerate() {
            // The high bit of each byte of the record (not the padding).
            let valid = HIGH_BITS >> (8 * (8 - len));
            let mut special =
                bytes_equal(word, b'\n') | bytes_equal(word, b'\r');
            if self.quoting {
                special |= bytes_equal(word, b'"');
            }
            if special & valid != 0 {
                return false;
            }
            let mut delims = bytes_equal(word, self.delim) & valid;
            while delims != 0 {
                let end = 8 * w + delims.trailing_zeros() as usize / 8;
                delims &= delims - 1;
                if keep_plain(spans, select, column, start..end) {
                    return true;
                }
                start = end + 1;
                column += 1;
            }
        }
        keep_plain(spans, select, column, start..rec.len());
        true
    }

    /// `split` for a non-empty record without quotes, CR or LF.
    fn split_plain(
        &self,
        rec: &[u8],
        select: Option<&[usize]>,
        spans: &mut Vec<Span>,
    ) -> Result<(), FieldError> {
        let mut start = 0;
        let ends = memchr::memchr_iter(self.delim, rec).chain([rec.len()]);
        for (column, end) in ends.enumerate() {
            if keep_plain(spans, select, column, start..end) {
                break;
            }
            start = end + 1;
        }
        Ok(())
    }

    /// The unquoted field starting at `i`, and where the next one starts.
    fn unquoted(
        &self,
        rec: &[u8],
        i: usize,
        column: usize,
    ) -> Result<(Span, usize), FieldError> {
        let end =
            memchr::memchr(self.delim, &rec[i..]).map_or(rec.len(), |e| i + e);
        let field = &rec[i..end];
        let bad = field.iter().position(|&b| {
            b == b'\n' || b == b'\r' || (self.quoting && b == b'"')
        });
        if let Some(p) = bad {
            let what = match field[p] {
                b'"' => "a quote (quote the whole field and double the quote)",
                b'\n' => "a line feed (quote the field)",
                _ => "a carriage return (quote the field)",
            };
            return Err(FieldError {
                column,
                message: format!(
                    "unquoted field contains {what} at byte {}",
                    i + p
                ),
            });
        }
        let span = Span {
            start: i,
            end,
            escaped: false,
        };
        Ok((span, end + 1))
    }

    /// The quoted field whose text starts at `start` (just after the
    /// opening quote), and where the next field starts.
    fn quoted(
        &self,
        rec: &[u8],
        start: usize,
        column: usize,
    ) -> Result<(Span, usize), FieldError> {
        let mut j = start;
        let mut escaped = false;
        loop {
            let Some(q) = memchr::memchr(b'"', &rec[j..]) else {
                return Err(FieldError {
                    column,
                    message: format!(
                        "quoted field starting at byte {} has no closing \
                         quote",
                        start - 1
                    ),
                });
            };
            j += q;
            match rec.get(j + 1) {
                None => break,
                Some(&b) if b == self.delim => break,
                Some(b'"') => {
                    escaped = true;
                    j += 2;
                }
                Some(_) => {
                    return Err(FieldError {
                        column,
                        message: format!(
                            "quote in wrong place at byte {j}: a quote inside \
                             a quoted field must be doubled, and the closing \
                             quote must be followed by the delimiter or the \
                             end of the record"
                        ),
                    })
                }
            }
        }
        let span = Span {
            start,
            end: j,
            escaped,
        };
        Ok((span, j + 2))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(rec: &str, quoting: bool) -> Result<Vec<String>, String> {
        let s = Splitter {
            delim: b',',
            quoting,
        };
        let mut spans = Vec::new();
        s.split(rec.as_bytes(), None, &mut spans)
            .map_err(|e| e.message)?;
        Ok(spans
            .iter()
            .map(|sp| {
                let raw = &rec.as_bytes()[sp.start..sp.end];
                let t = if sp.escaped {
                    unescape(raw)
                } else {
                    raw.to_vec()
                };
                String::from_utf8(t).unwrap()
            })
            .collect())
    }

    #[test]
    fn fast_and_general_paths_agree() {
        // The same fields with and without something that forces the
        // general path (a CR at the start of a field is skipped).
        for rec in ["a,b,c", "a,,c,", ",", "abc", "a,b,"] {
            let plain = split(rec, true).unwrap();
            let general = split(&format!("\r{rec}"), true).unwrap();
            assert_eq!(plain, general, "{rec:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn every_path_splits_as_the_general_one(
            rec in "[a1, \"\r\n]{1,40}",
            quoting: bool,
            long: bool,
            select in proptest::option::of(
                proptest::collection::btree_set(0usize..6, 1..4)
            ),
        ) {
            // Padded past SHORT_RECORD, the record takes the memchr path.
            let rec = if long {
                format!("{}{rec}", "x".repeat(SHORT_RECORD))
            } else {
                rec
            };
            let s = Splitter { delim: b',', quoting };
            let select: Option<Vec<usize>> = select.map(|s| s.into_iter().collect());
            let (mut fast, mut general) = (Vec::new(), Vec::new());
            let a = s.split(rec.as_bytes(), select.as_deref(), &mut fast);
            let b = s.split_general(rec.as_bytes(), select.as_deref(), &mut general);
            proptest::prop_assert_eq!(
                a.map_err(|e| (e.column, e.message)),
                b.map_err(|e| (e.column, e.message)),
                "{:?}", rec
            );
            proptest::prop_assert_eq!(fast, general, "{:?}", rec);
        }
    }

    #[test]
    fn bytes_equal_marks_exactly_the_equal_bytes() {
        for b in [0u8, 1, b',', 0x7f, 0x80, 0xff] {
            let word = [b, 0, 1, b, 0x80, 0xff, b ^ 1, b];
            let mask = bytes_equal(u64::from_le_bytes(word), b);
            for (i, &x) in word.iter().enumerate() {
                let marked = mask >> (8 * i) & 0xff;
                assert_eq!(
                    marked,
                    if x == b { 0x80 } else { 0 },
                    "{b} at {i}"
                );
            }
        }
    }

    #[test]
    fn quoted_fields_follow_rfc_4180() {
        assert_eq!(split(r#""a""b",c"#, true).unwrap(), [r#"a"b"#, "c"]);
        assert_eq!(split(r#""""",x"#, true).unwrap(), [r#"""#, "x"]);
        assert_eq!(split(r#""a,""b""#, true).unwrap(), [r#"a,"b"#]);
        assert_eq!(split("\"\",\"\"", true).unwrap(), ["", ""]);
        assert_eq!(split("\"a\nb\",\"c\"", true).unwrap(), ["a\nb", "c"]);
        assert!(split(r#""a"b"#, true).is_err());
        assert!(split(r#""ab"#, true).is_err());
        assert!(split(r#""ab"""#, true).is_err());
    }

    #[test]
    fn unescape_collapses_doubled_quotes() {
        assert_eq!(unescape(br#"a""b"""#), br#"a"b""#);
        assert_eq!(unescape(b"\"\""), b"\"");
        assert_eq!(unescape(b"\"\"\"\""), b"\"\"");
        assert_eq!(unescape(br#"""x"""#), br#""x""#);
        assert_eq!(unescape(b"plain"), b"plain");
    }
}
