//! Conversions between dtypes, as TensorFlow's `Cast` does them.

use super::*;

/// `data` converted to `dtype`, or `None` when either is a string.
pub(super) fn cast_data(data: &Data, dtype: DType) -> Option<Data> {
    if data.dtype() == dtype {
        return Some(data.clone());
    }
    let f32s = |v: Vec<f32>| cast_data(&Data::F32(v), dtype);
    match data {
        Data::String(_) => return None,
        Data::F16(v) if is_integer(dtype) => {
            return float_to_int(
                v.iter().map(|x| x.to_f64()),
                Vector::Half,
                dtype,
            )
        }
        Data::BF16(v) if is_integer(dtype) => {
            return float_to_int(
                v.iter().map(|x| x.to_f64()),
                Vector::Half,
                dtype,
            )
        }
        Data::F16(v) => return f32s(v.iter().map(|x| x.to_f32()).collect()),
        Data::BF16(v) => return f32s(v.iter().map(|x| x.to_f32()).collect()),
        Data::C64(v) => {
            return match dtype {
                DType::C128 => Some(Data::C128(
                    v.iter()
                        .map(|c| Complex64::new(c.re.into(), c.im.into()))
                        .collect(),
                )),
                _ => f32s(v.iter().map(|c| c.re).collect()),
            }
        }
        Data::C128(v) => {
            return match dtype {
                DType::C64 => Some(Data::C64(
                    v.iter()
                        .map(|c| Complex32::new(c.re as f32, c.im as f32))
                        .collect(),
                )),
                _ => cast_data(
                    &Data::F64(v.iter().map(|c| c.re).collect()),
                    dtype,
                ),
            }
        }
        _ => {}
    }
    // `data` is bool or a primitive number from here on.
    let via = |through: DType| cast_primitive(data, through);
    Some(match dtype {
        DType::F16 => match via(DType::F32)? {
            Data::F32(v) => {
                Data::F16(v.into_iter().map(f16::from_f32).collect())
            }
            _ => return None,
        },
        DType::BF16 => match via(DType::F32)? {
            Data::F32(v) => {
                Data::BF16(v.into_iter().map(bf16::from_f32).collect())
            }
            _ => return None,
        },
        DType::C64 => match via(DType::F32)? {
            Data::F32(v) => Data::C64(
                v.into_iter().map(|x| Complex32::new(x, 0.0)).collect(),
            ),
            _ => return None,
        },
        DType::C128 => match via(DType::F64)? {
            Data::F64(v) => Data::C128(
                v.into_iter().map(|x| Complex64::new(x, 0.0)).collect(),
            ),
            _ => return None,
        },
        other => cast_primitive(data, other)?,
    })
}

/// `data`, bool or a primitive number, converted to bool or a primitive
/// number type; `None` for anything else.
fn cast_primitive(data: &Data, dtype: DType) -> Option<Data> {
    match data {
        Data::Bool(v) => {
            let as_u8: Vec<u8> = v.iter().map(|&b| b as u8).collect();
            cast_slice(&as_u8, dtype)
        }
        Data::U8(v) => cast_slice(v, dtype),
        Data::I8(v) => cast_slice(v, dtype),
        Data::U16(v) => cast_slice(v, dtype),
        Data::I16(v) => cast_slice(v, dtype),
        Data::U32(v) => cast_slice(v, dtype),
        Data::I32(v) => cast_slice(v, dtype),
        Data::U64(v) => cast_slice(v, dtype),
        Data::I64(v) => cast_slice(v, dtype),
        Data::F32(v) if is_integer(dtype) => float_to_int(
            v.iter().map(|&x| f64::from(x)),
            Vector::Single,
            dtype,
        ),
        Data::F64(v) if is_integer(dtype) => {
            float_to_int(v.iter().copied(), Vector::Double, dtype)
        }
        Data::F32(v) => cast_slice(v, dtype),
        Data::F64(v) => cast_slice(v, dtype),
        _ => None,
    }
}

fn is_integer(dtype: DType) -> bool {
    matches!(
        dtype,
        DType::U8
            | DType::I8
            | DType::U16
            | DType::I16
            | DType::U32
            | DType::I32
            | DType::U64
            | DType::I64
    )
}

/// The float type a cast converts from, which sets how many values
/// TensorFlow's vectorized cast converts at once.
#[derive(Clone, Copy)]
enum Vector {
    /// `float16` or `bfloat16`.
    Half,
    /// `float32`.
    Single,
    /// `float64`.
    Double,
}

/// Floats converted to the integer `dtype` as TensorFlow's CPU kernel
/// converts them on x86-64 (Eigen's cast, C++ conversions out of range
/// included): truncated toward zero by the processor's 32- or 64-bit
/// conversion, which gives the lowest integer for NaN and for a value
/// out of its range. TensorFlow converts a tensor's values in vectors
/// and the last few that fill no vector one by one, and the two paths
/// differ out of range: vectors saturate the 32-bit result into a
/// narrower type (1e10 or -1.5 to `uint8` is 0, 300 is 255) where one by
/// one it wraps (300 is 44, -1.5 is 255); to `uint32`, a vector gives
/// `2^31` beyond the range where one by one it takes the low bits of the
/// 64-bit conversion; vectors from `float64` or `float16` to `uint8` go
/// through `uint16` and give 0 from 2^15 up. Observed widths: 32 values
/// from `float32` and 16 from `float64` or `float16` into 8- and 16-bit
/// types, 8 into `uint32`; other types convert alike on both paths.
fn float_to_int(
    v: impl ExactSizeIterator<Item = f64>,
    from: Vector,
    dtype: DType,
) -> Option<Data> {
    const TWO_31: f64 = 2_147_483_648.0;
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    // The processor's conversions (`cvttsd2si`).
    let i32_of = |x: f64| {
        if x > -TWO_31 - 1.0 && x < TWO_31 {
            x as i32
        } else {
            i32::MIN
        }
    };
    let i64_of = |x: f64| {
        if (-TWO_63..TWO_63).contains(&x) {
            x as i64
        } else {
            i64::MIN
        }
    };
    let width = match (dtype, from) {
        (DType::U8 | DType::I8 | DType::U16 | DType::I16, Vector::Single) => {
            32
        }
        (DType::U8 | DType::I8 | DType::U16 | DType::I16, _) => 16,
        _ => 8,
    };
    let n = v.len();
    let vectorized = n - n % width;
    // Each value with whether it is converted in a vector.
    let v = v.enumerate().map(move |(i, x)| (x, i < vectorized));
    // Into a narrower type: saturated in a vector, wrapped one by one.
    fn narrow<T>(x: i32, in_vector: bool) -> T
    where
        T: TryFrom<i64> + num_traits::Bounded + Copy + 'static,
        i32: AsPrimitive<T>,
    {
        if in_vector {
            saturate(i64::from(x))
        } else {
            x.as_()
        }
    }
    Some(match dtype {
        DType::I32 => Data::I32(v.map(|(x, _)| i32_of(x)).collect()),
        DType::I64 => Data::I64(v.map(|(x, _)| i64_of(x)).collect()),
        DType::U32 => Data::U32(
            v.map(|(x, in_vector)| {
                if (TWO_31..2.0 * TWO_31).contains(&x) {
                    x as u32
                } else if in_vector {
                    i32_of(x) as u32
                } else {
                    i64_of(x) as u32
                }
            })
            .collect(),
        ),
        DType::U64 => Data::U64(
            v.map(|(x, _)| {
                if (TWO_63..2.0 * TWO_63).contains(&x) {
                    x as u64
                } else {
                    i64_of(x) as u64
                }
            })
            .collect(),
        ),
        // From `float64` and `float16`, vectors narrow through `uint16`,
        // whose values from 2^15 read as negative `int16`s: 0.
        DType::U8 if !matches!(from, Vector::Single) => Data::U8(
            v.map(|(x, at)| {
                let x = i32_of(x);
                if at && x >= 1 << 15 {
                    0
                } else {
                    narrow(x, at)
                }
            })
            .collect(),
        ),
        DType::U8 => {
            Data::U8(v.map(|(x, at)| narrow(i32_of(x), at)).collect())
        }
        DType::I8 => {
            Data::I8(v.map(|(x, at)| narrow(i32_of(x), at)).collect())
        }
        DType::U16 => {
            Data::U16(v.map(|(x, at)| narrow(i32_of(x), at)).collect())
        }
        DType::I16 => {
            Data::I16(v.map(|(x, at)| narrow(i32_of(x), at)).collect())
        }
        _ => return None,
    })
}

/// `x` clamped into `T`'s range.
fn saturate<T: TryFrom<i64> + num_traits::Bounded>(x: i64) -> T {
    T::try_from(x).unwrap_or_else(|_| {
        if x < 0 {
            T::min_value()
        } else {
            T::max_value()
        }
    })
}

pub(super) fn concat_data(tensors: &[Tensor], shape: &Shape) -> Result<Data> {
    let mut data =
        Data::try_with_capacity_as(tensors[0].dtype(), shape.dims())?;
    for t in tensors {
        data.extend_from(&t.data, 0..t.data.len())?;
    }
    Ok(data)
}

/// A number that can be cast to every numeric dtype (`as` semantics) and
/// tested against zero.
trait CastSource:
    Copy
    + AsPrimitive<u8>
    + AsPrimitive<i8>
    + AsPrimitive<u16>
    + AsPrimitive<i16>
    + AsPrimitive<u32>
    + AsPrimitive<i32>
    + AsPrimitive<u64>
    + AsPrimitive<i64>
    + AsPrimitive<f32>
    + AsPrimitive<f64>
{
}

impl<T> CastSource for T where
    T: Copy
        + AsPrimitive<u8>
        + AsPrimitive<i8>
        + AsPrimitive<u16>
        + AsPrimitive<i16>
        + AsPrimitive<u32>
        + AsPrimitive<i32>
        + AsPrimitive<u64>
        + AsPrimitive<i64>
        + AsPrimitive<f32>
        + AsPrimitive<f64>
{
}

fn cast_slice<S: CastSource>(v: &[S], dtype: DType) -> Option<Data> {
    fn conv<S: AsPrimitive<T>, T: Copy + 'static>(v: &[S]) -> Vec<T> {
        v.iter().map(|x| x.as_()).collect()
    }
    Some(match dtype {
        DType::Bool => Data::Bool(
            v.iter()
                .map(|x| AsPrimitive::<f64>::as_(*x) != 0.0)
                .collect(),
        ),
        DType::U8 => Data::U8(conv(v)),
        DType::I8 => Data::I8(conv(v)),
        DType::U16 => Data::U16(conv(v)),
        DType::I16 => Data::I16(conv(v)),
        DType::U32 => Data::U32(conv(v)),
        DType::I32 => Data::I32(conv(v)),
        DType::U64 => Data::U64(conv(v)),
        DType::I64 => Data::I64(conv(v)),
        DType::F32 => Data::F32(conv(v)),
        DType::F64 => Data::F64(conv(v)),
        _ => return None,
    })
}
