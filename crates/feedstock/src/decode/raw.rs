//! `decode_raw` and friends: bytes reinterpreted as numbers, strings
//! parsed as numbers, and compressed strings inflated.
//!
//! ```
//! use bytes::Bytes;
//! use feedstock::decode::raw::{decode_raw, decode_padded_raw, ByteOrder};
//! use feedstock::DType;
//!
//! let rec = Bytes::from_static(&[1, 0, 0, 2]);
//! let t = decode_raw(&rec, DType::U16, ByteOrder::LittleEndian)?;
//! assert_eq!(t.as_slice::<u16>()?, &[1, 512]);
//! let t = decode_raw(&rec, DType::U16, ByteOrder::BigEndian)?;
//! assert_eq!(t.as_slice::<u16>()?, &[256, 2]);
//!
//! // A record shorter than the fixed length is zero-padded.
//! let short = Bytes::from_static(&[7]);
//! let t = decode_padded_raw(&short, 4, DType::U8, ByteOrder::BigEndian)?;
//! assert_eq!(t.as_slice::<u8>()?, &[7, 0, 0, 0]);
//! # Ok::<(), feedstock::Error>(())
//! ```

use std::io::Read;

use bytes::Bytes;

use crate::decode::{number, Records};
use crate::error::{Error, Result};
use crate::io::Compression;
use crate::tensor::{bf16, f16, Complex32, Complex64, DType, Data, Tensor};

/// The order of the bytes of a multi-byte number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ByteOrder {
    /// Least significant byte first (TensorFlow's default,
    /// `little_endian=True`).
    LittleEndian,
    /// Most significant byte first.
    BigEndian,
}

/// The element size of a dtype `decode_raw` can produce.
fn element_size(dtype: DType) -> Result<usize> {
    match dtype.size() {
        Some(n) => Ok(n),
        None => Err(Error::invalid_argument(format!(
            "decode_raw cannot produce {dtype} elements"
        ))),
    }
}

/// Reinterprets `bytes` as a rank-1 tensor of `dtype` elements stored in
/// `order`, as `tf.io.decode_raw` does. Every numeric dtype and `bool` (a
/// byte, nonzero is true) is supported.
///
/// # Errors
/// InvalidArgument for `DType::String`, or when the length of `bytes` is
/// not a multiple of the element size.
pub fn decode_raw(
    bytes: &Bytes,
    dtype: DType,
    order: ByteOrder,
) -> Result<Tensor> {
    let size = element_size(dtype)?;
    check_multiple(bytes.len(), size, dtype)?;
    let mut data = Data::try_with_capacity_as(dtype, &[bytes.len() / size])?;
    append(&mut data, bytes, order);
    Tensor::from_data([bytes.len() / size], data)
}

fn check_multiple(len: usize, size: usize, dtype: DType) -> Result<()> {
    if !len.is_multiple_of(size) {
        return Err(Error::invalid_argument(format!(
            "input of {len} bytes is not a multiple of {size}, the size of \
             {dtype}"
        )));
    }
    Ok(())
}

/// Decodes several records of equal length into a `[n, len / size]`
/// tensor, as `tf.io.decode_raw` does for a batch of strings.
///
/// # Errors
/// InvalidArgument as [`decode_raw`], or when the records' lengths
/// differ; the message names the first record whose length differs (by
/// its key when [`Records::with_keys`] gave one).
pub fn decode_raw_batch<'a>(
    records: impl Into<Records<'a>>,
    dtype: DType,
    order: ByteOrder,
) -> Result<Tensor> {
    let records = records.into();
    let size = element_size(dtype)?;
    let Some(first) = records.values().first() else {
        return Tensor::zeros(dtype, [0, 0]);
    };
    let len = first.len();
    check_multiple(len, size, dtype).map_err(|e| records.name_in(0, e))?;
    records.len().checked_mul(len / size).ok_or_else(|| {
        Error::invalid_argument("decode_raw output has too many elements")
    })?;
    // A batch of long records (a fixed record length is a user's value)
    // may not fit in memory: an error, not an abort.
    let mut data =
        Data::try_with_capacity_as(dtype, &[records.len(), len / size])
            .map_err(|e| name_batch(&records, e))?;
    for (i, r) in records.values().iter().enumerate() {
        if r.len() != len {
            let e = Error::invalid_argument(format!(
                "record {i} has {} bytes but record 0 has {len}; decode_raw \
                 needs records of one length",
                r.len()
            ));
            return Err(match records.key(i) {
                Some(k) => e.with_key(k),
                None => e,
            });
        }
        append(&mut data, r, order);
    }
    Tensor::from_data([records.len(), len / size], data)
}

/// Decodes `bytes` cut or zero-padded to `fixed_length` bytes, as
/// `tf.io.decode_padded_raw` does: a rank-1 tensor of
/// `fixed_length / size` elements.
///
/// # Errors
/// InvalidArgument for `DType::String`, or when `fixed_length` is not a
/// multiple of the element size.
pub fn decode_padded_raw(
    bytes: &Bytes,
    fixed_length: usize,
    dtype: DType,
    order: ByteOrder,
) -> Result<Tensor> {
    let t = decode_padded_raw_batch(
        std::slice::from_ref(bytes),
        fixed_length,
        dtype,
        order,
    )?;
    t.reshape([fixed_length / element_size(dtype)?])
}

/// Decodes each record cut or zero-padded to `fixed_length` bytes into a
/// `[n, fixed_length / size]` tensor, as `tf.io.decode_padded_raw` does
/// for a batch of strings.
///
/// # Errors
/// InvalidArgument for `DType::String`, when `fixed_length` is not a
/// multiple of the element size, or when the output would have more
/// elements than memory can address.
pub fn decode_padded_raw_batch<'a>(
    records: impl Into<Records<'a>>,
    fixed_length: usize,
    dtype: DType,
    order: ByteOrder,
) -> Result<Tensor> {
    let records = records.into();
    let size = element_size(dtype)?;
    if !fixed_length.is_multiple_of(size) {
        return Err(Error::invalid_argument(format!(
            "fixed_length {fixed_length} is not a multiple of {size}, the \
             size of {dtype}"
        )));
    }
    let row = fixed_length / size;
    records.len().checked_mul(row).ok_or_else(|| {
        Error::invalid_argument(format!(
            "decode_padded_raw of {} records of {fixed_length} bytes has \
             too many elements",
            records.len()
        ))
    })?;
    let mut data = Data::try_with_capacity_as(dtype, &[records.len(), row])
        .map_err(|e| name_batch(&records, e))?;
    let mut padded = Vec::new();
    for r in records.values() {
        if r.len() >= fixed_length {
            append(&mut data, &r[..fixed_length], order);
        } else {
            padded.clear();
            padded.extend_from_slice(r);
            padded.resize(fixed_length, 0);
            append(&mut data, &padded, order);
        }
    }
    Tensor::from_data([records.len(), row], data)
}

/// Names the batch in `err` (memory for the whole batch could not be
/// had): how many records, and the key of the first when it has one.
fn name_batch(records: &Records<'_>, err: Error) -> Error {
    let n = records.len();
    let noun = if n == 1 { "record" } else { "records" };
    let msg = format!("{} for a batch of {n} {noun}", err.message());
    let err = err.with_message(msg);
    match records.key(0) {
        Some(k) => err.with_key(k),
        None => err,
    }
}

/// Appends the elements in `bytes` (a whole number of them) to `data`.
fn append(data: &mut Data, bytes: &[u8], order: ByteOrder) {
    macro_rules! ints {
        ($v:expr, $t:ty) => {{
            const N: usize = std::mem::size_of::<$t>();
            let conv = match order {
                ByteOrder::LittleEndian => <$t>::from_le_bytes,
                ByteOrder::BigEndian => <$t>::from_be_bytes,
            };
            $v.extend(bytes.chunks_exact(N).map(|c| {
                conv(c.try_into().expect("chunks_exact gives N bytes"))
            }))
        }};
    }
    match data {
        Data::Bool(v) => v.extend(bytes.iter().map(|&b| b != 0)),
        Data::U8(v) => v.extend_from_slice(bytes),
        Data::I8(v) => v.extend(bytes.iter().map(|&b| b as i8)),
        Data::U16(v) => ints!(v, u16),
        Data::I16(v) => ints!(v, i16),
        Data::U32(v) => ints!(v, u32),
        Data::I32(v) => ints!(v, i32),
        Data::U64(v) => ints!(v, u64),
        Data::I64(v) => ints!(v, i64),
        Data::F32(v) => ints!(v, f32),
        Data::F64(v) => ints!(v, f64),
        Data::F16(v) => ints!(v, f16),
        Data::BF16(v) => ints!(v, bf16),
        // Each part of a complex number is in `order` on its own, real
        // part first, as TensorFlow's DecodeRaw swaps them.
        Data::C64(v) => v.extend(bytes.chunks_exact(8).map(|c| {
            let part = |b: &[u8]| {
                let b: [u8; 4] = b.try_into().expect("4 bytes");
                match order {
                    ByteOrder::LittleEndian => f32::from_le_bytes(b),
                    ByteOrder::BigEndian => f32::from_be_bytes(b),
                }
            };
            Complex32::new(part(&c[..4]), part(&c[4..]))
        })),
        Data::C128(v) => v.extend(bytes.chunks_exact(16).map(|c| {
            let part = |b: &[u8]| {
                let b: [u8; 8] = b.try_into().expect("8 bytes");
                match order {
                    ByteOrder::LittleEndian => f64::from_le_bytes(b),
                    ByteOrder::BigEndian => f64::from_be_bytes(b),
                }
            };
            Complex64::new(part(&c[..8]), part(&c[8..]))
        })),
        Data::String(_) => unreachable!("element_size rejects strings"),
    }
}

/// Parses every string of `t` as a number of `dtype` (`int32`, `int64`,
/// `float32` or `float64`), keeping the shape, as
/// `tf.strings.to_number` does.
///
/// Surrounding ASCII whitespace is ignored; integers are decimal and
/// must fit the dtype; floats are decimal with an optional exponent or
/// `inf` / `nan` words or hexadecimal (`0x1.8p3`), and a value beyond
/// the dtype's range becomes ±infinity: what `decode_csv` accepts, and
/// what TensorFlow 2.21 accepts here (checked by the differential
/// harness in `scripts/difftf`, long strings included).
///
/// # Errors
/// InvalidArgument when `t` is not a string tensor, `dtype` is not one of
/// the four above, or a string is not a valid number; the message quotes
/// the string and the field names its flat index (`"element 3"`).
pub fn string_to_number(t: &Tensor, dtype: DType) -> Result<Tensor> {
    let strings = t.as_slice::<Bytes>()?;
    fn parse<T>(
        strings: &[Bytes],
        dtype: DType,
        f: impl Fn(&[u8]) -> Option<T>,
    ) -> Result<Vec<T>> {
        strings
            .iter()
            .enumerate()
            .map(|(i, s)| {
                f(s).ok_or_else(|| {
                    Error::invalid_argument(format!(
                        "cannot convert \"{}\" to {dtype}",
                        String::from_utf8_lossy(s).escape_debug()
                    ))
                    .with_field(format!("element {i}"))
                })
            })
            .collect()
    }
    let data = match dtype {
        DType::I32 => Data::I32(parse(strings, dtype, number::parse_i32)?),
        DType::I64 => Data::I64(parse(strings, dtype, number::parse_i64)?),
        DType::F32 => Data::F32(parse(strings, dtype, number::parse_f32)?),
        DType::F64 => Data::F64(parse(strings, dtype, number::parse_f64)?),
        other => {
            return Err(Error::invalid_argument(format!(
                "string_to_number cannot produce {other} (use int32, int64, \
                 float32 or float64)"
            )))
        }
    };
    Tensor::from_data(t.shape().clone(), data)
}

/// The most bytes [`decode_compressed`] produces from one input: a small
/// record must not be able to inflate into all of memory.
pub const DEFAULT_MAX_DECOMPRESSED_LEN: u64 = 1 << 30;

/// Decompresses `bytes`, as `tf.io.decode_compressed` does, producing at
/// most [`DEFAULT_MAX_DECOMPRESSED_LEN`] bytes (see
/// [`decode_compressed_with_limit`]).
///
/// The stream is read by the same strict decompressor as compressed
/// record files ([`Compression::reader`]), so concatenated gzip members are
/// read in turn and a stream that is cut short is an error.
///
/// An empty input gives an empty output, as in TensorFlow.
///
/// # Errors
/// DataLoss when the stream is corrupt or cut short (TensorFlow returns
/// what it could decompress), or when bytes follow
/// the end of the stream that are not another stream (TensorFlow would
/// ignore them; they are more likely a sign of a wrong record boundary
/// than padding); ResourceExhausted when the output would pass the limit.
pub fn decode_compressed(
    bytes: &Bytes,
    compression: Compression,
) -> Result<Bytes> {
    decode_compressed_with_limit(
        bytes,
        compression,
        DEFAULT_MAX_DECOMPRESSED_LEN,
    )
}

/// [`decode_compressed`] with a limit of `max_len` output bytes.
///
/// # Errors
/// As [`decode_compressed`]; ResourceExhausted when the output would be
/// longer than `max_len`.
pub fn decode_compressed_with_limit(
    bytes: &Bytes,
    compression: Compression,
    max_len: u64,
) -> Result<Bytes> {
    // An empty string decompresses to an empty string whatever the
    // compression, as in TensorFlow 2.21: nothing is lost, and an empty
    // field is common where most records are compressed.
    if compression == Compression::None || bytes.is_empty() {
        return Ok(bytes.clone());
    }
    let mut out = Vec::new();
    compression
        .reader(&bytes[..])
        .take(max_len.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(|e| {
            Error::data_loss(format!(
                "cannot decompress {} bytes of {compression:?} data: {e}",
                bytes.len()
            ))
        })?;
    if out.len() as u64 > max_len {
        return Err(Error::resource_exhausted(format!(
            "{} bytes of {compression:?} data decompress to more than \
             {max_len} bytes",
            bytes.len()
        )));
    }
    Ok(Bytes::from(out))
}
