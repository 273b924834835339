//! Masks: `tf.sequence_mask` and `tf.boolean_mask`, each one op where
//! TensorFlow's Python composes several (`Range`, `Less`, `Cast`;
//! `Where`, `Reshape`, `GatherV2`), with the same values, static shapes
//! and errors.

use std::ops::RangeInclusive;

use crate::kernels::reduce;
use feedstock::error::{Error, Result};
use feedstock::queue::PartialShape;
use feedstock::tensor::{try_vec, DType, Tensor, Value};

use super::{dense_from, op, Args, In, OpDef, OutInfo};

/// The dtypes TensorFlow's `Max` takes (its words, its order).
const MAX_TYPES: &str = "float32, float64, int32, uint8, int16, int8, \
     int64, bfloat16, uint16, float16, uint32, uint64, qint8, quint8, \
     qint32, qint16, quint16";

/// The dtypes TensorFlow's `Range` takes (its words, its order).
const RANGE_TYPES: &str = "bfloat16, float16, float32, float64, int8, \
     int16, int32, int64, uint16, uint32, uint64";

/// The dtypes TensorFlow's `Where` takes (its words, its order).
const WHERE_TYPES: &str = "float32, float64, int32, uint8, int16, int8, \
     complex64, int64, qint8, quint8, qint32, bfloat16, qint16, quint16, \
     uint16, complex128, float16, uint32, uint64, bool";

fn not_allowed(param: &str, dtype: DType, allowed: &str) -> Error {
    Error::invalid_dtype(format!(
        "Value passed to parameter '{param}' has DataType {dtype} not in \
         list of allowed values: {allowed}"
    ))
}

fn is_float(dtype: DType) -> bool {
    matches!(dtype, DType::F32 | DType::F64)
}

/// A number as TensorFlow prints it in `Range`'s errors.
fn show(v: f64, float: bool) -> String {
    if float {
        v.to_string()
    } else {
        (v as i64).to_string()
    }
}

/// The values of `t` as `dtype` then as f64 (exact for the counts and
/// lengths a mask can have).
fn as_f64(t: &Tensor, dtype: DType) -> Result<Vec<f64>> {
    Ok(t.cast(dtype)?.cast(DType::F64)?.as_slice::<f64>()?.to_vec())
}

/// `Range(0, limit, 1)`'s length: TensorFlow's refusal of a negative
/// limit, the count rounded up for floats.
fn range_len(limit: f64, float: bool) -> Result<usize> {
    if limit < 0.0 || limit.is_nan() {
        return Err(Error::invalid_argument(format!(
            "Requires start <= limit when delta > 0: 0/{}",
            show(limit, float)
        )));
    }
    let n = if float { limit.ceil() } else { limit };
    if n >= usize::MAX as f64 {
        return Err(Error::invalid_argument(format!(
            "Requires ((limit - start) / delta) <= {}",
            i64::MAX
        )));
    }
    Ok(n as usize)
}

/// The mask's limit: `maxlen`, else the largest length (at least 0).
fn limit_of(lens: &[f64], maxlen: Option<&Tensor>, t: DType) -> Result<f64> {
    match maxlen {
        Some(m) => {
            if m.rank() != 0 {
                return Err(Error::invalid_argument(format!(
                    "limit must be a scalar, not shape {:?}",
                    m.dims()
                )));
            }
            Ok(as_f64(m, t)?[0])
        }
        None => Ok(lens.iter().copied().fold(0.0, f64::max)),
    }
}

op! {
    /// `tf.sequence_mask(lengths, maxlen, dtype)`: input 0's lengths
    /// with a last axis of `maxlen` (input 1, a scalar; without it, the
    /// largest length or 0) added, `j < lengths[i]` at `[i, j]`, as
    /// `dtype`. As TensorFlow's, the comparison is in `maxlen`'s dtype
    /// (the lengths cast to it), a float `maxlen` counts up to its
    /// ceiling, a negative one fails, and so does a `maxlen` dtype other
    /// than int32, int64, float32 and float64 when run.
    SequenceMask = "SequenceMask" {
        /// The output's dtype.
        dtype: DType,
    }
}

impl OpDef for SequenceMask {
    fn arity(&self) -> RangeInclusive<usize> {
        1..=2
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        if !(1..=2).contains(&ins.len()) {
            return Err(Error::invalid_argument(format!(
                "SequenceMask: lengths and an optional maxlen, not {} inputs",
                ins.len()
            )));
        }
        let lengths = ins[0].dense("sequence_mask")?;
        let maxlen = ins.get(1);
        let t = match maxlen {
            Some(m) => {
                let info = m.dense("sequence_mask")?;
                if info.shape.as_ref().is_some_and(|s| s.rank() != 0) {
                    return Err(Error::invalid_argument(
                        "sequence_mask: maxlen must be a scalar",
                    ));
                }
                info.dtype
            }
            None => {
                let ok = matches!(
                    lengths.dtype,
                    DType::F32
                        | DType::F64
                        | DType::I8
                        | DType::I16
                        | DType::I32
                        | DType::I64
                        | DType::U8
                        | DType::U16
                        | DType::U32
                        | DType::U64
                        | DType::F16
                        | DType::BF16
                );
                if !ok {
                    return Err(not_allowed(
                        "input",
                        lengths.dtype,
                        MAX_TYPES,
                    ));
                }
                lengths.dtype
            }
        };
        match t {
            DType::F16 | DType::BF16 => {
                return Err(Error::invalid_argument(format!(
                    "Unsupported dtype {t} for Range"
                )))
            }
            DType::I8
            | DType::I16
            | DType::I32
            | DType::I64
            | DType::U16
            | DType::U32
            | DType::U64
            | DType::F32
            | DType::F64 => {}
            _ => return Err(not_allowed("start", t, RANGE_TYPES)),
        }
        // The last dimension, when the limit is known while building.
        let known = match maxlen {
            Some(m) => match m.constant_tensor() {
                Some(c) => Some(as_f64(c, t)?.first().copied().unwrap_or(0.0)),
                None => None,
            },
            None => match ins[0].constant_tensor() {
                Some(c) => Some(limit_of(&as_f64(c, t)?, None, t)?),
                None => None,
            },
        };
        let limit = known.map(|v| range_len(v, is_float(t))).transpose()?;
        let shape = ins[0].dims().map(|mut d| {
            d.push(limit);
            PartialShape::new(d)
        });
        Ok(vec![dense_from(shape, self.dtype, &ins[0])])
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        let lengths = a.dense(0)?;
        let maxlen = if a.len() > 1 { Some(a.dense(1)?) } else { None };
        let t = maxlen.map_or(lengths.dtype(), |m| m.dtype());
        if !matches!(t, DType::I32 | DType::I64 | DType::F32 | DType::F64) {
            // As TensorFlow, which has Range's CPU kernel for these only.
            return Err(Error::invalid_argument(format!(
                "No OpKernel was registered to support Op 'Range' used by \
                 {{{{node SequenceMask/Range}}}} with these attrs: \
                 [Tidx=DT_{}]",
                t.to_string().to_uppercase()
            )));
        }
        let lens = as_f64(lengths, t)?;
        let limit = limit_of(&lens, maxlen, t)?;
        let n = range_len(limit, is_float(t))?;
        let mut dims = lengths.dims().to_vec();
        dims.push(n);
        let mut mask = try_vec::<bool>(&dims)?;
        for &len in &lens {
            mask.extend((0..n).map(|j| (j as f64) < len));
        }
        out.push(Tensor::new(dims, mask)?.cast(self.dtype)?.into());
        Ok(())
    }
}

/// A static shape as TensorFlow's Python prints it: `(2, None)`, `(3,)`.
fn py_shape(dims: &[Option<usize>]) -> String {
    let parts: Vec<String> = dims
        .iter()
        .map(|d| d.map_or_else(|| "None".to_owned(), |n| n.to_string()))
        .collect();
    match parts.len() {
        1 => format!("({},)", parts[0]),
        _ => format!("({})", parts.join(", ")),
    }
}

/// `dims[start..stop]` with Python's slice semantics (negative bounds
/// count from the end; out-of-range bounds are clamped).
fn py_slice<T: Clone>(dims: &[T], start: i64, stop: i64) -> Vec<T> {
    let n = dims.len() as i64;
    let clamp = |i: i64| (if i < 0 { i + n } else { i }).clamp(0, n) as usize;
    let (a, b) = (clamp(start), clamp(stop));
    if a < b {
        dims[a..b].to_vec()
    } else {
        Vec::new()
    }
}

op! {
    /// `tf.boolean_mask(tensor, mask, axis)`: the slices of input 0
    /// along axes `axis..axis + mask.rank` where the mask (input 1,
    /// nonzero is true) holds, those axes made one. As TensorFlow's, the
    /// mask's shape is checked against the tensor's while building only,
    /// and when run a true element past the masked axes' size fails.
    BooleanMask = "BooleanMask" {
        /// The first masked axis (negative: Python's slice semantics, as
        /// TensorFlow's).
        axis: i64,
    }
}

impl OpDef for BooleanMask {
    fn arity(&self) -> RangeInclusive<usize> {
        2..=2
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        let tensor = ins[0].dense("boolean_mask")?;
        let mask = ins[1].dense("boolean_mask")?;
        let Some(md) = ins[1].dims() else {
            return Err(Error::invalid_argument(
                "Number of mask dimensions must be specified, even if some \
                 dimensions are None.  E.g. shape=[None] is ok, but \
                 shape=None is not.",
            ));
        };
        if md.is_empty() {
            return Err(Error::invalid_argument("mask cannot be scalar."));
        }
        let k = md.len() as i64;
        let shape = match ins[0].dims() {
            Some(td) => {
                let part = py_slice(&td, self.axis, self.axis + k);
                let compatible = part.len() == md.len()
                    && part
                        .iter()
                        .zip(&md)
                        .all(|(p, q)| p.is_none() || q.is_none() || p == q);
                if !compatible {
                    return Err(Error::invalid_argument(format!(
                        "Shapes {} and {} are incompatible",
                        py_shape(&part),
                        py_shape(&md)
                    )));
                }
                let mut out = py_slice(&td, 0, self.axis);
                out.push(None);
                out.extend(py_slice(&td, self.axis + k, i64::MAX));
                Some(PartialShape::new(out))
            }
            None => None,
        };
        if matches!(mask.dtype, DType::String) {
            return Err(not_allowed("input", mask.dtype, WHERE_TYPES));
        }
        Ok(vec![dense_from(shape, tensor.dtype, &ins[0])])
    }

    fn default_name(&self) -> &'static str {
        "boolean_mask"
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        let (t, mask) = (a.dense(0)?, a.dense(1)?);
        let (r, k) = (t.rank() as i64, mask.rank() as i64);
        let at = if self.axis < 0 {
            self.axis + r
        } else {
            self.axis
        };
        if at < 0 || at + k > r {
            return Err(Error::invalid_argument(format!(
                "boolean_mask: a mask of rank {k} at axis {} does not fit \
                 a tensor of rank {r}",
                self.axis
            )));
        }
        let (at, k) = (at as usize, k as usize);
        let dims = t.dims();
        let leading: usize = dims[at..at + k].iter().product();
        let mut flat = dims[..at].to_vec();
        flat.push(leading);
        flat.extend_from_slice(&dims[at + k..]);
        let truth = mask.cast(DType::Bool)?;
        let picked: Vec<i64> = truth
            .as_slice::<bool>()?
            .iter()
            .enumerate()
            .filter(|(_, &b)| b)
            .map(|(i, _)| i as i64)
            .collect();
        let flat = t.clone().reshape(flat)?;
        let indices = Tensor::vector::<i64>(picked);
        out.push(reduce::gather(&flat, &indices, at)?.into());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(def: &dyn OpDef, ins: Vec<Value>) -> Result<Tensor> {
        let get = |k: usize| &ins[k];
        let args = Args::new(&get, ins.len(), None, None);
        let mut out = Vec::new();
        def.run(&args, &mut out)?;
        out.remove(0).into_dense()
    }

    // The values TensorFlow 2.21 gives (graph mode).
    #[test]
    fn sequence_mask_counts_in_maxlens_dtype() {
        let m = SequenceMask { dtype: DType::Bool };
        let lens = Tensor::vector::<i32>(vec![1, 3, 0, 2]);
        let t = run(&m, vec![lens.into()]).unwrap();
        assert_eq!(t.dims(), &[4, 3]);
        let want = [1, 0, 0, 1, 1, 1, 0, 0, 0, 1, 1, 0].map(|b| b == 1);
        assert_eq!(t.as_slice::<bool>().unwrap(), want);
        // Float lengths against an int maxlen are truncated; a float
        // maxlen (the largest length, here) counts to its ceiling.
        let lens = Tensor::vector::<f32>(vec![1.5, 0.2]);
        let t = run(&m, vec![lens.clone().into()]).unwrap();
        assert_eq!(t.as_slice::<bool>().unwrap(), [true, true, true, false]);
        let three = Tensor::scalar(3i32);
        let t = run(&m, vec![lens.into(), three.into()]).unwrap();
        let want = [true, false, false, false, false, false];
        assert_eq!(t.as_slice::<bool>().unwrap(), want);
        let e = run(
            &m,
            vec![
                Tensor::vector::<i32>(vec![1]).into(),
                Tensor::scalar(-1i32).into(),
            ],
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .contains("Requires start <= limit when delta > 0: 0/-1"),
            "{e}"
        );
    }

    #[test]
    fn boolean_mask_gathers_the_true_rows_and_checks_only_their_range() {
        let b = BooleanMask { axis: 0 };
        let t = Tensor::new(vec![2, 3], (0..6).collect::<Vec<i64>>()).unwrap();
        let mask = Tensor::vector::<bool>(vec![false, true]);
        let r = run(&b, vec![t.clone().into(), mask.into()]).unwrap();
        assert_eq!(r.dims(), &[1, 3]);
        assert_eq!(r.as_slice::<i64>().unwrap(), [3, 4, 5]);
        let mask = Tensor::new(vec![2, 3], vec![1i32, 0, 1, 0, 0, 1]).unwrap();
        let r = run(&b, vec![t.clone().into(), mask.into()]).unwrap();
        assert_eq!(r.as_slice::<i64>().unwrap(), [0, 2, 5]);
        let mask =
            Tensor::vector::<bool>(vec![false, false, false, false, true]);
        let e = run(&b, vec![t.into(), mask.into()]).unwrap_err();
        assert!(
            e.to_string().contains("indices[0] = 4 is not in [0, 2)"),
            "{e}"
        );
    }

    #[test]
    fn python_shapes_and_slices() {
        assert_eq!(py_shape(&[]), "()");
        assert_eq!(py_shape(&[Some(4)]), "(4,)");
        assert_eq!(py_shape(&[None, Some(3)]), "(None, 3)");
        let d = [1, 2, 3];
        assert_eq!(py_slice(&d, -1, 0), Vec::<i32>::new());
        assert_eq!(py_slice(&d, -2, -1), vec![2]);
        assert_eq!(py_slice(&d, 1, i64::MAX), vec![2, 3]);
        assert_eq!(py_slice(&d, 3, 4), Vec::<i32>::new());
    }
}
