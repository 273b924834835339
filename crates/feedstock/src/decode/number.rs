//! Text to numbers with the semantics TensorFlow's parsers use.
//!
//! `decode_csv` and `string_to_number` parse with Abseil's `SimpleAtoi`
//! and `SimpleAtof` / `SimpleAtod`. What they accept, and so what these
//! functions accept:
//!
//! - leading and trailing ASCII whitespace (space, `\t`, `\n`, `\x0b`,
//!   `\x0c`, `\r`) is ignored; a string of only whitespace is invalid;
//! - integers: an optional `+` or `-`, then decimal digits only; a value
//!   outside the dtype's range is invalid (never wrapped or clamped);
//! - floats: an optional sign, then decimal notation with an optional
//!   exponent (`1`, `-1.5`, `.5`, `5.`, `1e5`, `1E-5`), or `inf`,
//!   `infinity`, `nan` and `nan(chars)` in any case; no hexadecimal; a
//!   finite value too large for the dtype becomes ±infinity, one too small
//!   rounds to a subnormal or zero (correctly rounded, straight to the
//!   dtype: an `f32` is not parsed as `f64` first).
//!
//! The float parsing itself is the standard library's `from_str`, which is
//! the Eisel–Lemire "fast float" algorithm (the same one the `fast-float`
//! crates ship) with a correct slow path, so no extra crate earns its
//! place here. Integers are parsed by hand over bytes because the standard
//! library only parses `&str`, and the loop is a few lines.

/// True for the bytes Abseil's `ascii_isspace` accepts (which, unlike
/// `u8::is_ascii_whitespace`, includes the vertical tab `\x0b`).
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// `s` without leading and trailing ASCII whitespace.
pub(crate) fn trim(s: &[u8]) -> &[u8] {
    let start = s.iter().position(|&b| !is_space(b)).unwrap_or(s.len());
    let end = s
        .iter()
        .rposition(|&b| !is_space(b))
        .map_or(start, |e| e + 1);
    &s[start..end]
}

/// Parses a decimal `i64` in `[min, max]`; `None` when the text is not a
/// decimal integer or the value lies outside the range.
fn parse_int(s: &[u8], min: i64, max: i64) -> Option<i64> {
    let s = trim(s);
    let (neg, digits) = match s.split_first()? {
        (b'-', rest) => (true, rest),
        (b'+', rest) => (false, rest),
        _ => (false, s),
    };
    if digits.is_empty() {
        return None;
    }
    // Accumulate negatively so that i64::MIN is reachable.
    let mut acc: i64 = 0;
    for &b in digits {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        acc = acc.checked_mul(10)?.checked_sub(i64::from(d))?;
    }
    let v = if neg { acc } else { acc.checked_neg()? };
    (min..=max).contains(&v).then_some(v)
}

/// Parses an `i32` as Abseil's `SimpleAtoi` does.
pub(crate) fn parse_i32(s: &[u8]) -> Option<i32> {
    parse_int(s, i64::from(i32::MIN), i64::from(i32::MAX)).map(|v| v as i32)
}

/// Parses an `i64` as Abseil's `SimpleAtoi` does.
pub(crate) fn parse_i64(s: &[u8]) -> Option<i64> {
    parse_int(s, i64::MIN, i64::MAX)
}

/// Parses a float as Abseil's `SimpleAtof` / `SimpleAtod` do.
fn parse_float<F: std::str::FromStr>(s: &[u8], nan: F) -> Option<F> {
    let s = trim(s);
    // Non-UTF-8 text can never be a number, so rejecting it here loses
    // nothing.
    let text = std::str::from_utf8(s).ok()?;
    match text.parse::<F>() {
        Ok(v) => Some(v),
        Err(_) if is_nan_with_payload(s) => Some(nan),
        Err(_) => None,
    }
}

/// `nan(chars)` (optionally signed), which C's `strtod` and Abseil accept
/// and Rust's parser does not: `chars` are ASCII letters, digits and `_`.
fn is_nan_with_payload(s: &[u8]) -> bool {
    let s = match s.first() {
        Some(b'-' | b'+') => &s[1..],
        _ => s,
    };
    s.len() >= 5
        && s[..4].eq_ignore_ascii_case(b"nan(")
        && s[s.len() - 1] == b')'
        && s[4..s.len() - 1]
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || b == b'_')
}

/// Parses an `f32` as Abseil's `SimpleAtof` does.
pub(crate) fn parse_f32(s: &[u8]) -> Option<f32> {
    parse_float(s, f32::NAN)
}

/// Parses an `f64` as Abseil's `SimpleAtod` does.
pub(crate) fn parse_f64(s: &[u8]) -> Option<f64> {
    parse_float(s, f64::NAN)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_accept_sign_and_surrounding_whitespace() {
        assert_eq!(parse_i32(b" +12\t"), Some(12));
        assert_eq!(parse_i32(b"-0"), Some(0));
        assert_eq!(parse_i32(b"\x0b7\x0c"), Some(7));
        assert_eq!(parse_i64(b"-9223372036854775808"), Some(i64::MIN));
        assert_eq!(parse_i64(b"9223372036854775807"), Some(i64::MAX));
    }

    #[test]
    fn integers_reject_overflow_and_junk() {
        assert_eq!(parse_i32(b"2147483648"), None);
        assert_eq!(parse_i32(b"-2147483649"), None);
        assert_eq!(parse_i64(b"9223372036854775808"), None);
        for bad in [
            &b""[..],
            b" ",
            b"-",
            b"+",
            b"1.0",
            b"1e3",
            b"0x10",
            b"- 1",
            b"1 2",
            b"++1",
        ] {
            assert_eq!(parse_i64(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn floats_follow_abseil() {
        assert_eq!(parse_f32(b" 1e3 "), Some(1000.0));
        assert_eq!(parse_f32(b"+.5"), Some(0.5));
        assert_eq!(parse_f64(b"5."), Some(5.0));
        assert_eq!(parse_f32(b"1e39"), Some(f32::INFINITY));
        assert_eq!(parse_f32(b"-1e39"), Some(f32::NEG_INFINITY));
        assert_eq!(parse_f32(b"1e-50"), Some(0.0));
        assert_eq!(parse_f64(b"-Infinity"), Some(f64::NEG_INFINITY));
        assert!(parse_f64(b"NaN").unwrap().is_nan());
        assert!(parse_f32(b"-nan(0x7f_a)").unwrap().is_nan());
        for bad in [
            &b""[..],
            b"  ",
            b"1e",
            b"+-1",
            b"0x1p3",
            b"1,5",
            b"nan(",
            b"inf inity",
            b"\xff",
        ] {
            assert_eq!(parse_f64(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn f32_is_rounded_directly_not_through_f64() {
        // 1 + 2^-24 + 2^-60 is just above the midpoint between two f32
        // values; rounding through f64 first would land on the midpoint
        // and round to even (1.0), direct rounding gives the upper value.
        let s = b"1.00000005960464477539062500000000000000000000000087";
        assert_eq!(parse_f32(s), Some(1.0000001));
    }
}
