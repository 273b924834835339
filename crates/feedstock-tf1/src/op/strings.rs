//! Ops on strings: parsing, splitting, and the files strings name.

use std::io::Read;
use std::ops::RangeInclusive;

use bytes::Bytes;
use feedstock::decode;
use feedstock::error::{Error, Result};
use feedstock::io::fs::{default_fs, io_error};
use feedstock::queue::PartialShape;
use feedstock::tensor::{DType, Tensor, Value};

use super::{dense_from, op, string_op_input, Args, In, OpDef, OutInfo};

/// Checks that input `x` is a dense string tensor.
fn string_input<'a>(x: &'a In, what: &str) -> Result<&'a OutInfo> {
    let info = x.dense(what)?;
    if info.dtype != DType::String {
        return Err(Error::invalid_dtype(format!(
            "{what}: expected a string tensor, got {}",
            info.dtype
        )));
    }
    Ok(info)
}

/// Checks that input `x` is a string scalar (or of unknown rank).
fn string_scalar<'a>(x: &'a In, what: &str) -> Result<&'a OutInfo> {
    let info = string_input(x, what)?;
    if info.shape.as_ref().is_some_and(|s| s.rank() != 0) {
        return Err(Error::invalid_argument(format!(
            "{what} takes a string scalar"
        )));
    }
    Ok(info)
}

/// A path or pattern given as a string scalar.
fn path_of(t: &Tensor) -> Result<String> {
    let b = t.scalar_value::<Bytes>()?;
    String::from_utf8(b.to_vec()).map_err(|_| {
        Error::invalid_argument(format!(
            "a file name is not UTF-8: {:?}",
            String::from_utf8_lossy(&b)
        ))
    })
}

op! {
    /// `tf.string_to_number(x, out_type)`: each string of input 0 parsed
    /// as `dtype` when run.
    StringToNumber = "StringToNumber" {
        /// int32, int64, float32 or float64.
        dtype: DType,
    }
}

impl OpDef for StringToNumber {
    fn arity(&self) -> RangeInclusive<usize> {
        1..=1
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        let info = ins[0].dense("string_to_number")?;
        if info.dtype != DType::String {
            return Err(Error::invalid_dtype(format!(
                "string_to_number: expected strings, got {}",
                info.dtype
            )));
        }
        let dtype = self.dtype;
        if !matches!(dtype, DType::I32 | DType::I64 | DType::F32 | DType::F64)
        {
            return Err(Error::invalid_dtype(format!(
                "string_to_number: out_type must be int32, int64, float32 \
                 or float64, not {dtype}"
            )));
        }
        Ok(vec![dense_from(info.shape.clone(), dtype, &ins[0])])
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        let t = a.dense(0)?;
        out.push(decode::string_to_number(t, self.dtype)?.into());
        Ok(())
    }
}

op! {
    /// `tf.string_split(x, delimiter, skip_empty)` of TensorFlow 1: the
    /// string vector input 0 split at every byte of `delimiter` (empty:
    /// into bytes), a sparse `[len(x), most tokens]` string matrix.
    StringSplit = "StringSplit" {
        /// The bytes that split.
        delimiter: Vec<u8>,
        /// Whether empty tokens are dropped.
        skip_empty: bool,
    }
}

impl OpDef for StringSplit {
    fn arity(&self) -> RangeInclusive<usize> {
        1..=1
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        let info = ins[0].dense("string_split")?;
        if info.dtype != DType::String {
            return Err(Error::invalid_dtype(
                "string_split: expected strings",
            ));
        }
        if let Some(d) = ins[0].dims().filter(|d| d.len() != 1) {
            return Err(Error::invalid_argument(format!(
                "Shape must be rank 1 but is rank {} for 'StringSplit'",
                d.len()
            )));
        }
        Ok(vec![OutInfo {
            dtype: DType::String,
            sparse: true,
            shape: Some(PartialShape::new(vec![None, None])),
            key: info.key,
        }])
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        let t = a.dense(0)?;
        let sp = decode::string_split(t, &self.delimiter, self.skip_empty)?;
        out.push(Value::Sparse(sp));
        Ok(())
    }
}

op! {
    /// `tf.io.read_file`: the whole contents of the file named by input 0
    /// (a string scalar: a local path or an object URL), as a string
    /// scalar. A missing file is NotFound naming it.
    ReadFile = "ReadFile" {}
}

impl OpDef for ReadFile {
    fn arity(&self) -> RangeInclusive<usize> {
        1..=1
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        string_scalar(&ins[0], "read_file")?;
        let shape = Some(PartialShape::scalar());
        Ok(vec![dense_from(shape, DType::String, &ins[0])])
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        let path = path_of(a.dense(0)?)?;
        let mut contents = Vec::new();
        default_fs()
            .open(&path)?
            .read_to_end(&mut contents)
            .map_err(|e| io_error(&path, e))?;
        out.push(Tensor::string(Bytes::from(contents)).into());
        Ok(())
    }
}

op! {
    /// `tf.io.matching_files`: the files matching the glob input 0 (a
    /// string scalar), sorted, matched each run; none is an empty vector.
    MatchingFiles = "MatchingFiles" {}
}

impl OpDef for MatchingFiles {
    fn arity(&self) -> RangeInclusive<usize> {
        1..=1
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        string_scalar(&ins[0], "matching_files")?;
        let shape = Some(PartialShape::new(vec![None]));
        Ok(vec![dense_from(shape, DType::String, &ins[0])])
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        let pattern = path_of(a.dense(0)?)?;
        out.push(crate::eval::matching_files(&pattern)?);
        Ok(())
    }
}

op! {
    /// `tf.strings.to_hash_bucket_fast`: each string of input 0 hashed
    /// into `[0, num_buckets)` as TensorFlow hashes it, farmhash's
    /// `Fingerprint64` of its bytes modulo `num_buckets`; int64, of the
    /// input's shape.
    StringToHashBucketFast = "StringToHashBucketFast" {
        /// The number of buckets, at least 1.
        num_buckets: i64,
    }
}

impl OpDef for StringToHashBucketFast {
    fn arity(&self) -> RangeInclusive<usize> {
        1..=1
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        const OP: &str = "StringToHashBucketFast";
        let info = string_op_input(&ins[0], OP)?;
        if self.num_buckets < 1 {
            return Err(Error::invalid_argument(format!(
                "Attr 'num_buckets' of '{OP}' Op passed {} less than \
                 minimum 1.",
                self.num_buckets
            )));
        }
        Ok(vec![dense_from(info.shape.clone(), DType::I64, &ins[0])])
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        let t = a.dense(0)?;
        // `infer` made sure of at least one bucket.
        let n = self.num_buckets.max(1).unsigned_abs();
        let mut hashed = feedstock::tensor::try_vec::<i64>(t.dims())?;
        hashed.extend(t.as_slice::<Bytes>()?.iter().map(|s| {
            // Below `num_buckets`, so within i64.
            (farmhash2::fingerprint64(s) % n) as i64
        }));
        out.push(Tensor::new(t.dims().to_vec(), hashed)?.into());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn buckets(strs: &[&[u8]], num_buckets: i64) -> Vec<i64> {
        let strs = strs.iter().map(|s| Bytes::copy_from_slice(s)).collect();
        let v: Value = Tensor::vector::<Bytes>(strs).into();
        let ins = |_: usize| &v;
        let mut out = Vec::new();
        let op = StringToHashBucketFast { num_buckets };
        op.run(&Args::new(&ins, 1, None, None), &mut out).unwrap();
        out[0].dense().unwrap().as_slice::<i64>().unwrap().to_vec()
    }

    #[test]
    fn hash_buckets_are_tensorflows() {
        // TensorFlow 2.21's StringToHashBucketFast (graph mode). At 128
        // and 256 bytes the `farmhash` crate's Fingerprint64 differs
        // (hence `farmhash2`).
        let all: Vec<u8> = (0..=255).collect();
        let long = b"0123456789".repeat(100);
        let strs: [&[u8]; 9] = [
            b"",
            b"a",
            b"hello world",
            &[b'q'; 32],
            &[b'e'; 64],
            &[b'x'; 128],
            &all,
            &long,
            "h\u{e9}llo w\u{f6}rld".as_bytes(),
        ];
        assert_eq!(
            buckets(&strs, i64::MAX),
            [
                1936946117179621456,
                3694432073954588132,
                6381520714923946011,
                1941001213046687810,
                4428901352157416282,
                5868382771906808855,
                5291657088564336415,
                6263194838949673994,
                9001971122424596627,
            ]
        );
        assert_eq!(buckets(&strs, 10), [3, 9, 1, 7, 9, 5, 5, 1, 7]);
        assert_eq!(buckets(&strs, 1), [0; 9]);
    }
}
