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
//!   `infinity`, `nan` and `nan(chars)` in any case; a finite value too
//!   large for the dtype becomes ±infinity, one too small rounds to a
//!   subnormal or zero (correctly rounded, straight to the dtype: an `f32`
//!   is not parsed as `f64` first);
//! - hexadecimal floats: an optional sign, `0x` or `0X`, hex digits with
//!   an optional point (at least one digit), then optionally `p` or `P`
//!   and a signed decimal exponent (`0x10`, `0x1.8p1`, `-0x.8P-3`). These
//!   are rounded to `f64` first, and an `f32` is that `f64` rounded again
//!   (TensorFlow 2.21 gives `1.0f32` for `0x1.00000080000001p0`, where
//!   rounding straight to `f32` would give the next value up).
//!
//! The float parsing itself is the standard library's `from_str`, which is
//! the Eisel–Lemire "fast float" algorithm (the same one the `fast-float`
//! crates ship) with a correct slow path, so no extra crate earns its
//! place here. It has no hexadecimal floats; the crates that do
//! (`hexf-parse`) want a `p` exponent and reject inexact values, so the
//! few lines of [`parse_hex`] are written here. Integers are parsed by hand over bytes because the standard
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
    if digits.len() <= 18 {
        // Below 10^18, far from i64's limits: no check per digit.
        let mut acc: i64 = 0;
        for &b in digits {
            let d = b.wrapping_sub(b'0');
            if d > 9 {
                return None;
            }
            acc = acc * 10 + i64::from(d);
        }
        let v = if neg { -acc } else { acc };
        return (min..=max).contains(&v).then_some(v);
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

/// A plain decimal, `[+-]digits[.digits]` with 1 to 19 digits in all
/// (so that they fit a `u64`): whether it is negative, its digits as an
/// integer, and how many of them follow the point. `None` for anything
/// else (an exponent, `inf`, `nan`, hexadecimal, more digits, junk),
/// which the full parser decides.
fn plain_decimal(s: &[u8]) -> Option<(bool, u64, usize)> {
    let (neg, s) = match s.first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let (mut mantissa, mut digits, mut point) = (0u64, 0usize, None);
    for (i, &b) in s.iter().enumerate() {
        let d = b.wrapping_sub(b'0');
        if d <= 9 {
            digits += 1;
            if digits > 19 {
                return None;
            }
            mantissa = mantissa * 10 + u64::from(d);
        } else if b == b'.' && point.is_none() {
            point = Some(i);
        } else {
            return None;
        }
    }
    if digits == 0 {
        return None;
    }
    Some((neg, mantissa, point.map_or(0, |p| s.len() - p - 1)))
}

/// A float type's exact powers of ten, and the largest integer it holds
/// exactly: below both, `mantissa / 10^k` is one correctly rounded
/// division of two exact values, so it is the correctly rounded value of
/// the decimal (Clinger's fast path, the first step of the standard
/// library's own parser, taken here without its `&str` checks and
/// general scanning, which cost more than the division for short
/// fields).
trait FastPath:
    'static + Copy + std::ops::Neg<Output = Self> + std::ops::Div<Output = Self>
{
    const POW10: &'static [Self];
    const MAX_EXACT: u64;
    fn from_u64(m: u64) -> Self;
}

impl FastPath for f32 {
    const POW10: &'static [f32] =
        &[1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10];
    const MAX_EXACT: u64 = 1 << 24;
    fn from_u64(m: u64) -> f32 {
        m as f32
    }
}

impl FastPath for f64 {
    const POW10: &'static [f64] = &[
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12,
        1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ];
    const MAX_EXACT: u64 = 1 << 53;
    fn from_u64(m: u64) -> f64 {
        m as f64
    }
}

/// The value of a plain decimal when the fast path applies.
fn fast_decimal<F: FastPath>(s: &[u8]) -> Option<F> {
    let (neg, mantissa, k) = plain_decimal(s)?;
    if mantissa > F::MAX_EXACT {
        return None;
    }
    let v = F::from_u64(mantissa) / *F::POW10.get(k)?;
    Some(if neg { -v } else { v })
}

/// Parses a float as Abseil's `SimpleAtof` / `SimpleAtod` do.
fn parse_float<F: std::str::FromStr + FastPath>(
    s: &[u8],
    nan: fn(bool, u64) -> F,
    from_f64: fn(f64) -> F,
) -> Option<F> {
    let s = trim(s);
    if let Some(v) = fast_decimal(s) {
        return Some(v);
    }
    if is_hex(s) {
        return parse_hex(s).map(from_f64);
    }
    // Non-UTF-8 text can never be a number, so rejecting it here loses
    // nothing.
    let text = std::str::from_utf8(s).ok()?;
    match text.parse::<F>() {
        Ok(v) => Some(v),
        Err(_) if is_nan_with_payload(s) => {
            Some(nan(s[0] == b'-', nan_payload(s)))
        }
        Err(_) => None,
    }
}

/// True when `s` (trimmed) starts like a hexadecimal float: an optional
/// sign, then `0x` or `0X`.
fn is_hex(s: &[u8]) -> bool {
    let s = match s.first() {
        Some(b'-' | b'+') => &s[1..],
        _ => s,
    };
    s.len() >= 2 && s[0] == b'0' && (s[1] == b'x' || s[1] == b'X')
}

/// Parses a trimmed hexadecimal float (see the module docs), correctly
/// rounded to `f64` (to nearest, ties to even); `None` when malformed.
fn parse_hex(s: &[u8]) -> Option<f64> {
    let (neg, s) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let s = &s[2..];
    // value = (mant + a nonzero fraction if `sticky`) * 2^exp
    let (mut mant, mut exp, mut sticky) = (0u64, 0i64, false);
    let (mut digits, mut point, mut i) = (0usize, false, 0usize);
    while i < s.len() {
        let b = s[i];
        if b == b'.' && !point {
            point = true;
        } else if let Some(d) = (b as char).to_digit(16) {
            digits += 1;
            if mant >> 60 == 0 {
                mant = mant << 4 | u64::from(d);
                exp -= if point { 4 } else { 0 };
            } else {
                sticky |= d != 0;
                exp += if point { 0 } else { 4 };
            }
        } else {
            break;
        }
        i += 1;
    }
    if digits == 0 {
        return None;
    }
    if i < s.len() {
        if s[i] != b'p' && s[i] != b'P' {
            return None;
        }
        let e = &s[i + 1..];
        let (eneg, e) = match e.first() {
            Some(b'-') => (true, &e[1..]),
            Some(b'+') => (false, &e[1..]),
            _ => (false, e),
        };
        if e.is_empty() || !e.iter().all(u8::is_ascii_digit) {
            return None;
        }
        // Saturate: any exponent beyond this gives zero or infinity.
        let v = e.iter().fold(0i64, |acc, &b| {
            (acc * 10 + i64::from(b - b'0')).min(1 << 20)
        });
        exp += if eneg { -v } else { v };
    }
    let sign = if neg { -1.0 } else { 1.0 };
    if mant == 0 {
        return Some(sign * 0.0);
    }
    let lz = mant.leading_zeros();
    mant <<= lz;
    // value = mant * 2^exp with the top bit of mant set: 2^e <= value.
    let e = exp - i64::from(lz) + 63;
    // Bits of mant to drop: 11 keeps 53, more for subnormals.
    let shift = 11 + (-1022 - e).max(0);
    if shift > 64 {
        return Some(sign * 0.0);
    }
    let wide = u128::from(mant);
    let mut q = (wide >> shift) as u64;
    let rem = wide & ((1u128 << shift) - 1);
    let half = 1u128 << (shift - 1);
    if rem > half || (rem == half && (sticky || q & 1 == 1)) {
        q += 1;
    }
    let bits = if shift == 11 {
        // Normal: q in [2^52, 2^53]; rounding up may carry into 2^53.
        let (q, e) = if q == 1 << 53 {
            (q >> 1, e + 1)
        } else {
            (q, e)
        };
        if e > 1023 {
            return Some(sign * f64::INFINITY);
        }
        ((e + 1023) as u64) << 52 | (q & ((1 << 52) - 1))
    } else {
        // Subnormal: q below 2^52, or exactly 2^52, the smallest normal,
        // which these bits also spell.
        q
    };
    Some(sign * f64::from_bits(bits))
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

/// The payload of `nan(chars)` as C's `strtod` reads it: `chars` as an
/// unsigned integer (`0x` hexadecimal, leading `0` octal, else decimal),
/// or 0 when they are not one. TensorFlow 2.21 gives the bits
/// `0x7fc0007b` for `nan(123)` as float32 and `0x7fc00000` for
/// `nan(abc)`.
fn nan_payload(s: &[u8]) -> u64 {
    let inner = &s
        [s.iter().position(|&b| b == b'(').map_or(0, |i| i + 1)..s.len() - 1];
    let (digits, radix) = match inner {
        [b'0', b'x' | b'X', rest @ ..] => (rest, 16),
        [b'0', rest @ ..] if !rest.is_empty() => (rest, 8),
        _ => (inner, 10),
    };
    if digits.is_empty() {
        return 0;
    }
    digits
        .iter()
        .try_fold(0u64, |acc, &b| {
            let d = (b as char).to_digit(radix)?;
            // strtoull saturates on overflow.
            Some(
                acc.saturating_mul(u64::from(radix))
                    .saturating_add(d.into()),
            )
        })
        .unwrap_or(0)
}

/// Parses an `f32` as Abseil's `SimpleAtof` does.
pub(crate) fn parse_f32(s: &[u8]) -> Option<f32> {
    // A quiet NaN with the payload in the low mantissa bits.
    let nan = |neg: bool, payload: u64| {
        let bits = 0x7fc0_0000 | (payload as u32 & 0x007f_ffff);
        f32::from_bits(bits | if neg { 0x8000_0000 } else { 0 })
    };
    parse_float(s, nan, |v| v as f32)
}

/// Parses an `f64` as Abseil's `SimpleAtod` does.
pub(crate) fn parse_f64(s: &[u8]) -> Option<f64> {
    let nan = |neg: bool, payload: u64| {
        let bits = 0x7ff8_0000_0000_0000 | (payload & 0x000f_ffff_ffff_ffff);
        f64::from_bits(bits | if neg { 1 << 63 } else { 0 })
    };
    parse_float(s, nan, |v| v)
}

/// `tf.strings.to_number`: each string of `t` parsed as `dtype` (int32,
/// int64, float32 or float64) as TensorFlow's `StringToNumber` parses it.
///
/// # Errors
/// InvalidArgument for a string that does not parse (TensorFlow's
/// words), a tensor that is not of strings, or another dtype.
pub fn string_to_number(
    t: &crate::tensor::Tensor,
    dtype: crate::tensor::DType,
) -> crate::error::Result<crate::tensor::Tensor> {
    use crate::error::Error;
    use crate::tensor::{DType, Data, Tensor};
    let Data::String(strings) = t.data() else {
        return Err(Error::invalid_argument(format!(
            "string_to_number: expected strings, got {}",
            t.dtype()
        )));
    };
    fn each<T>(
        strings: &[bytes::Bytes],
        parse: fn(&[u8]) -> Option<T>,
    ) -> crate::error::Result<Vec<T>> {
        strings
            .iter()
            .map(|s| {
                parse(s).ok_or_else(|| {
                    Error::invalid_argument(format!(
                        "StringToNumberOp could not correctly convert \
                         string: {}",
                        String::from_utf8_lossy(s)
                    ))
                })
            })
            .collect()
    }
    let data = match dtype {
        DType::I32 => Data::I32(each(strings, parse_i32)?),
        DType::I64 => Data::I64(each(strings, parse_i64)?),
        DType::F32 => Data::F32(each(strings, parse_f32)?),
        DType::F64 => Data::F64(each(strings, parse_f64)?),
        _ => {
            return Err(Error::invalid_argument(format!(
                "string_to_number: out_type must be int32, int64, float32 \
                 or float64, not {dtype}"
            )))
        }
    };
    Tensor::from_data(t.shape().clone(), data)
}

/// `tf.string_split` of TensorFlow 1: each string of the vector `t` split
/// at every byte found in `delimiter` (an empty delimiter splits into
/// single bytes), empty tokens dropped with `skip_empty`; row `i`'s
/// tokens are entries `[i, j]` of a sparse `[n, most tokens]` result.
///
/// # Errors
/// InvalidArgument when `t` is not a vector of strings.
pub fn string_split(
    t: &crate::tensor::Tensor,
    delimiter: &[u8],
    skip_empty: bool,
) -> crate::error::Result<crate::tensor::SparseTensor> {
    use crate::error::Error;
    use crate::tensor::{Data, SparseTensor, Tensor};
    let Data::String(strings) = t.data() else {
        return Err(Error::invalid_argument("string_split: expected strings"));
    };
    if t.rank() != 1 {
        return Err(Error::invalid_argument(format!(
            "input must be a vector, got shape: {}",
            t.shape()
        )));
    }
    let (mut indices, mut values, mut widest) = (Vec::new(), Vec::new(), 0);
    for (i, s) in strings.iter().enumerate() {
        let tokens: Vec<bytes::Bytes> = if delimiter.is_empty() {
            (0..s.len()).map(|k| s.slice(k..k + 1)).collect()
        } else {
            let mut out = Vec::new();
            let mut start = 0;
            for (k, b) in s.iter().enumerate() {
                if delimiter.contains(b) {
                    out.push(s.slice(start..k));
                    start = k + 1;
                }
            }
            out.push(s.slice(start..));
            if skip_empty {
                out.retain(|x| !x.is_empty());
            }
            out
        };
        widest = widest.max(tokens.len());
        for (j, tok) in tokens.into_iter().enumerate() {
            indices.extend([i as i64, j as i64]);
            values.push(tok);
        }
    }
    let n = values.len();
    SparseTensor::new(
        Tensor::new(vec![n, 2], indices)?,
        Tensor::new(vec![n], values)?,
        vec![strings.len(), widest],
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn string_split_as_tensorflow() {
        use crate::tensor::Tensor;
        let b = |s: &'static str| bytes::Bytes::from(s);
        let t =
            Tensor::new(vec![3], vec![b("a b  c"), b(""), b(" x")]).unwrap();
        let sp = super::string_split(&t, b" ", true).unwrap();
        assert_eq!(sp.dims(), &[3, 3]);
        assert_eq!(
            sp.indices().as_slice::<i64>().unwrap(),
            &[0, 0, 0, 1, 0, 2, 2, 0]
        );
        let keep = Tensor::new(vec![1], vec![b("a,b;;c")]).unwrap();
        let sp = super::string_split(&keep, b",;", false).unwrap();
        assert_eq!(sp.dims(), &[1, 4]);
        assert_eq!(sp.values().as_slice::<bytes::Bytes>().unwrap()[2], b(""));
    }

    #[test]
    fn string_to_number_as_tensorflow() {
        use crate::tensor::{DType, Tensor};
        let t = Tensor::new(
            vec![2],
            vec![bytes::Bytes::from(" 7 "), bytes::Bytes::from("0x1A")],
        )
        .unwrap();
        let f = super::string_to_number(&t, DType::F32).unwrap();
        assert_eq!(f.as_slice::<f32>().unwrap(), &[7.0, 26.0]);
        let e = super::string_to_number(&t, DType::I32).unwrap_err();
        assert!(e
            .message()
            .contains("could not correctly convert string: 0x1A"));
    }

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
        // TensorFlow 2.21 keeps the sign of a NaN with a payload.
        assert!(parse_f64(b"-nan(x)").unwrap().is_sign_negative());
        assert!(parse_f64(b"nan(x)").unwrap().is_sign_positive());
        // TensorFlow 2.21 puts a numeric payload in the mantissa.
        let bits32 = |s: &[u8]| parse_f32(s).unwrap().to_bits();
        let bits64 = |s: &[u8]| parse_f64(s).unwrap().to_bits();
        assert_eq!(bits32(b"nan(123)"), 0x7fc0_007b);
        assert_eq!(bits32(b"-nan(5)"), 0xffc0_0005);
        assert_eq!(bits32(b"nan(0x10)"), 0x7fc0_0010);
        assert_eq!(bits32(b"nan(010)"), 0x7fc0_0008);
        assert_eq!(bits32(b"nan(99999999999)"), 0x7ff6_e7ff);
        assert_eq!(bits32(b"nan(1a)"), 0x7fc0_0000);
        assert_eq!(bits32(b"nan()"), 0x7fc0_0000);
        assert_eq!(bits64(b"nan(123)"), 0x7ff8_0000_0000_007b);
        assert_eq!(bits64(b"nan(2251799813685247)"), 0x7fff_ffff_ffff_ffff);
        for bad in [
            &b""[..],
            b"  ",
            b"1e",
            b"+-1",
            b"0x",
            b"0x.",
            b"0x1p",
            b"0x1p1.5",
            b"0x-1",
            b"00x1",
            b"1,5",
            b"nan(",
            b"inf inity",
            b"\xff",
        ] {
            assert_eq!(parse_f64(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn hexadecimal_floats_round_to_nearest_even() {
        // TensorFlow 2.21 gives these (tf.strings.to_number, decode_csv).
        assert_eq!(parse_f32(b"0x10"), Some(16.0));
        assert_eq!(parse_f64(b" -0X1.8P1 "), Some(-3.0));
        assert_eq!(parse_f64(b"0x.8"), Some(0.5));
        assert_eq!(parse_f64(b"0x1e2"), Some(482.0));
        assert_eq!(parse_f64(b"0x1p-1074"), Some(f64::from_bits(1)));
        assert_eq!(parse_f64(b"0x1p-1075"), Some(0.0));
        assert_eq!(parse_f64(b"0x1.8p-1075"), Some(f64::from_bits(1)));
        assert_eq!(parse_f64(b"0x1.fffffffffffff8p1023"), Some(f64::INFINITY));
        assert_eq!(
            parse_f64(b"0x1.0000000000000800000000001p0"),
            Some(1.0000000000000002)
        );
        assert_eq!(parse_f64(b"0x1.00000000000008p0"), Some(1.0));
        assert_eq!(parse_f32(b"0x1.ffffffp127"), Some(f32::INFINITY));
        assert_eq!(parse_f32(b"0x1.8p-150"), Some(f32::from_bits(1)));
        assert_eq!(parse_f32(b"0x1p-99999"), Some(0.0));
        assert!(parse_f32(b"-0x0").unwrap().is_sign_negative());
    }

    #[test]
    fn hexadecimal_f32_is_rounded_through_f64() {
        // TensorFlow 2.21 gives 1.0: the f64 value is the f32 midpoint.
        assert_eq!(parse_f32(b"0x1.00000080000001p0"), Some(1.0));
    }

    /// The full parser alone, for comparison with the fast path.
    fn slow<F: std::str::FromStr>(s: &[u8]) -> Option<F> {
        std::str::from_utf8(trim(s)).ok()?.parse().ok()
    }

    #[test]
    fn the_fast_path_takes_plain_decimals_and_leaves_the_rest() {
        assert_eq!(
            fast_decimal::<f64>(b"-0.0").map(f64::to_bits),
            Some((-0.0f64).to_bits())
        );
        assert_eq!(fast_decimal::<f32>(b"5."), Some(5.0));
        assert_eq!(fast_decimal::<f32>(b".5"), Some(0.5));
        assert_eq!(fast_decimal::<f64>(b"+9191.885"), Some(9191.885));
        for s in [
            "",
            ".",
            "-",
            "+.",
            "1e5",
            "inf",
            "nan",
            "0x1p0",
            "1.2.3",
            "1 2",
            "16777217",
            "0.12345678901",
        ] {
            assert_eq!(fast_decimal::<f32>(s.as_bytes()), None, "{s}");
        }
        // Too many digits for a u64, or for an exact f64.
        assert_eq!(fast_decimal::<f64>(b"12345678901234567890"), None);
        assert_eq!(fast_decimal::<f64>(b"9007199254740993"), None);
        assert_eq!(parse_f64(b"9007199254740993"), Some(9007199254740992.0));
    }

    proptest::proptest! {
        #[test]
        fn plain_decimals_parse_as_the_full_parser_does(
            sign in "[-+]?",
            int in "[0-9]{0,12}",
            frac in proptest::option::of("[0-9]{0,12}"),
        ) {
            let s = format!("{sign}{int}{}", frac.map_or(String::new(), |f| format!(".{f}")));
            let f32s = (parse_f32(s.as_bytes()), slow::<f32>(s.as_bytes()));
            proptest::prop_assert_eq!(f32s.0.map(f32::to_bits), f32s.1.map(f32::to_bits), "{}", s);
            let f64s = (parse_f64(s.as_bytes()), slow::<f64>(s.as_bytes()));
            proptest::prop_assert_eq!(f64s.0.map(f64::to_bits), f64s.1.map(f64::to_bits), "{}", s);
        }

        #[test]
        fn integers_parse_as_the_standard_library_does(s in "[-+]?[0-9]{1,21}") {
            proptest::prop_assert_eq!(parse_i64(s.as_bytes()), s.parse::<i64>().ok(), "{}", s);
            proptest::prop_assert_eq!(parse_i32(s.as_bytes()), s.parse::<i32>().ok(), "{}", s);
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
