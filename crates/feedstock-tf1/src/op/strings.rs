//! Ops on strings: parsing, splitting, and the files strings name.

use std::io::Read;

use bytes::Bytes;
use feedstock::decode;
use feedstock::error::{Error, Result};
use feedstock::io::fs::{default_fs, io_error};
use feedstock::queue::PartialShape;
use feedstock::tensor::{DType, Tensor, Value};

use super::{dense_from, op, Args, In, OpDef, OutInfo};

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
