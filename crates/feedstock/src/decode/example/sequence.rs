//! Columns for the feature lists of a `SequenceExample`: one row per step.

use bytes::Bytes;

use super::column::{self, At, Bad, Got};
use super::walk::{self, Src};
use super::wire::WireError;
use super::FeatureKind;
use crate::error::{Error, Result};
use crate::tensor::{Data, SparseTensor, Tensor, Value};

/// A column for one feature of a sequence spec.
#[derive(Debug)]
pub(crate) enum SeqColumn {
    /// `FixedLenSequenceFeature`: `stride` values per step, and the
    /// number of steps per example.
    Fixed {
        stride: usize,
        data: Data,
        steps: Vec<usize>,
    },
    /// `VarLenFeature`: the number of values of every step, and the
    /// number of steps per example.
    VarLen {
        data: Data,
        step_lens: Vec<usize>,
        steps: Vec<usize>,
    },
}

impl SeqColumn {
    /// An empty column for `kind`.
    ///
    /// # Errors
    /// InvalidArgument naming the feature when `kind` is not `VarLen` or
    /// `FixedSequence`, the kinds a feature list can have.
    pub(crate) fn new(name: &str, kind: &FeatureKind) -> Result<SeqColumn> {
        let dtype = kind.dtype();
        match kind {
            FeatureKind::FixedSequence { shape, .. } => Ok(SeqColumn::Fixed {
                stride: shape.num_elements(),
                data: Data::with_capacity(dtype, 0),
                steps: Vec::new(),
            }),
            FeatureKind::VarLen { .. } => Ok(SeqColumn::VarLen {
                data: Data::with_capacity(dtype, 0),
                step_lens: Vec::new(),
                steps: Vec::new(),
            }),
            _ => Err(Error::invalid_argument(format!(
                "feature spec: sequence feature \"{name}\" must be var_len \
                 or fixed_sequence"
            ))
            .with_field(name)),
        }
    }

    /// Adds the feature list at `src` (absent when `None`) of one
    /// SequenceExample.
    pub(crate) fn push(
        &mut self,
        name: &str,
        kind: &FeatureKind,
        src: Option<&Src>,
        record: &Bytes,
        at: &At<'_>,
    ) -> Result<()> {
        let dtype = kind.dtype();
        let Some(src) = src else {
            return match (self, kind) {
                (
                    SeqColumn::Fixed { .. },
                    FeatureKind::FixedSequence {
                        allow_missing: false,
                        ..
                    },
                ) => Err(at.error(
                    name,
                    "is a required feature list but missing \
                     (allow_missing is false)",
                )),
                (SeqColumn::Fixed { steps, .. }, _)
                | (SeqColumn::VarLen { steps, .. }, _) => {
                    steps.push(0);
                    Ok(())
                }
            };
        };
        let (buf, range) = src.resolve(record);
        let mut n = 0usize;
        let walked = match self {
            SeqColumn::Fixed { stride, data, .. } => {
                let stride = *stride;
                walk::feature_list(buf, range, |step| {
                    let c = count(column::read_at(buf, step, data), n)?;
                    if c != stride {
                        return Err(at
                            .error(
                                name,
                                format_args!(
                                    "has {c} {} values in step {n} but \
                                     each step needs {stride}",
                                    column::list_name(dtype)
                                ),
                            )
                            .into());
                    }
                    n += 1;
                    Ok(())
                })
            }
            SeqColumn::VarLen {
                data, step_lens, ..
            } => walk::feature_list(buf, range, |step| {
                let c = count(column::read_at(buf, step, data), n)?;
                step_lens.push(c);
                n += 1;
                Ok(())
            }),
        };
        match walked {
            Ok(()) => {}
            Err(ListError::Wire(w)) => return Err(at.wire(Some(name), w)),
            Err(ListError::Step(StepError(s, Bad::Wire(w)))) => {
                let e = at.wire(Some(name), w);
                let m = format!("{} (step {s})", e.message());
                return Err(e.with_message(m));
            }
            Err(ListError::Step(StepError(s, bad))) => {
                let e = at.bad(name, dtype, bad);
                let m = format!("{} in step {s}", e.message());
                return Err(e.with_message(m));
            }
            Err(ListError::Other(e)) => return Err(e),
        }
        match self {
            SeqColumn::Fixed { steps, .. }
            | SeqColumn::VarLen { steps, .. } => steps.push(n),
        }
        Ok(())
    }

    /// The number of steps of each example, for a `FixedSequence`
    /// column: `int64 [batch]`, or a scalar when `batch` is `None`.
    pub(crate) fn lengths(
        &self,
        batch: Option<usize>,
    ) -> Result<Option<Tensor>> {
        let SeqColumn::Fixed { steps, .. } = self else {
            return Ok(None);
        };
        let v: Vec<i64> = steps.iter().map(|&n| n as i64).collect();
        let t = match batch {
            Some(_) => Tensor::vector(v),
            None => Tensor::vector(v).reshape([])?,
        };
        Ok(Some(t))
    }

    /// The finished value; `batch` is `None` for one SequenceExample.
    pub(crate) fn finish(
        self,
        kind: &FeatureKind,
        batch: Option<usize>,
    ) -> Result<Value> {
        match self {
            SeqColumn::Fixed {
                stride,
                data,
                steps,
            } => {
                let (dtype, shape, default) = match kind {
                    FeatureKind::FixedSequence {
                        dtype,
                        shape,
                        default,
                        ..
                    } => (*dtype, shape, default.as_ref()),
                    _ => {
                        return Err(Error::internal("sequence kind mismatch"))
                    }
                };
                let pad = column::padding(dtype, default);
                let (data, max) =
                    column::pad_rows(&data, &steps, stride, &pad)?;
                let mut dims: Vec<usize> = batch.into_iter().collect();
                dims.push(max);
                dims.extend_from_slice(shape.dims());
                Ok(Value::Dense(Tensor::from_data(dims, data)?))
            }
            SeqColumn::VarLen {
                data,
                step_lens,
                steps,
            } => {
                let nnz = data.len();
                let width = usize::from(batch.is_some()) + 2;
                let mut idx = Vec::with_capacity(nnz * width);
                let mut lens = step_lens.iter();
                for (e, &s) in steps.iter().enumerate() {
                    for (t, &n) in lens.by_ref().take(s).enumerate() {
                        for j in 0..n {
                            if batch.is_some() {
                                idx.push(e as i64);
                            }
                            idx.push(t as i64);
                            idx.push(j as i64);
                        }
                    }
                }
                let max_steps = steps.iter().copied().max().unwrap_or(0);
                let max_len = step_lens.iter().copied().max().unwrap_or(0);
                let mut dense: Vec<usize> = batch.into_iter().collect();
                dense.extend([max_steps, max_len]);
                Ok(Value::Sparse(SparseTensor::new(
                    Tensor::new([nnz, width], idx)?,
                    Tensor::from_data([nnz], data)?,
                    dense,
                )?))
            }
        }
    }
}

/// A step that could not be read: its index and why.
#[derive(Debug)]
struct StepError(usize, Bad);

/// Why a feature list could not be read.
#[derive(Debug)]
enum ListError {
    /// The `FeatureList` message itself is malformed.
    Wire(WireError),
    /// A step is malformed or of the wrong dtype.
    Step(StepError),
    /// A step has the wrong number of values.
    Other(Error),
}

impl From<WireError> for ListError {
    fn from(w: WireError) -> ListError {
        ListError::Wire(w)
    }
}

impl From<Error> for ListError {
    fn from(e: Error) -> ListError {
        ListError::Other(e)
    }
}

/// The number of values a step read, an empty step counting as none.
fn count(got: Result<Got, Bad>, step: usize) -> Result<usize, ListError> {
    match got {
        Ok(Got::Values(c)) => Ok(c),
        Ok(Got::Absent | Got::Unset) => Ok(0),
        Err(bad) => Err(ListError::Step(StepError(step, bad))),
    }
}
