//! What a tensor-tuple queue stores per element, and the fast way to
//! stack dense elements into a batch.
//!
//! An element enqueued on its own is stored as its tuple of values. The
//! rows of an all-dense `enqueue_many` batch going into a queue whose
//! elements leave in order are not split into tuples of their own (one
//! allocation and one copy per component per row): each row is stored as
//! a reference to the shared, already checked batch and its index, and
//! is copied once, straight into the output batch, when dequeued; the
//! batch is freed when its last row has left. A shuffle or priority
//! queue, whose rows leave at scattered times, would keep batches alive
//! long after most of their rows have gone (a shuffle queue for about
//! `min_after_dequeue × ln(rows)` dequeues), so it stores every row on
//! its own: in a slot of the queue's [`Slab`](super::slab::Slab) when
//! every component is numeric of a fixed shape, else as a tuple.

use std::ops::Range;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::tensor::{DType, Data, Shape, Tensor, Value};

use super::slab::Slot;
use super::spec::QueueSpec;

/// One stored element.
#[derive(Debug)]
pub(crate) enum Element {
    /// An element enqueued (or split from a batch) as a tuple.
    Tuple(Vec<Value>),
    /// Row `index` of an all-dense batch enqueued whole.
    Row {
        /// The batch's components, each with the rows along axis 0. A
        /// thin pointer (not `Arc<[Tensor]>`), so that an `Element` is no
        /// larger than a `Vec<Value>` and converting between vectors of
        /// the two reuses the allocation.
        #[allow(clippy::rc_buffer)]
        batch: Arc<Vec<Tensor>>,
        /// Which row.
        index: usize,
    },
    /// A row kept in a slot of its queue's slab, read and written only
    /// through the slab.
    Slot(Slot),
}

impl Element {
    /// The rows of an all-dense batch of `n` rows, already checked.
    pub(crate) fn rows(batch: Vec<Tensor>, n: usize) -> Vec<Element> {
        let batch = Arc::new(batch);
        (0..n)
            .map(|index| Element::Row {
                batch: Arc::clone(&batch),
                index,
            })
            .collect()
    }

    /// The slot of a row kept in a slab.
    pub(crate) fn slot(&self) -> Result<&Slot> {
        match self {
            Element::Slot(slot) => Ok(slot),
            _ => Err(Error::internal("a slab queue holds a row of its own")),
        }
    }

    /// The slot of a row kept in a slab, to give back.
    pub(crate) fn into_slot(self) -> Option<Slot> {
        match self {
            Element::Slot(slot) => Some(slot),
            _ => None,
        }
    }

    /// Whether this element holds byte strings, which may be slices of a
    /// larger allocation (what [`Element::own_strings`] undoes). Numeric
    /// tuples never share, and rows are never held by a shuffle queue,
    /// the only queue that asks.
    pub(crate) fn may_share(&self) -> bool {
        match self {
            Element::Row { .. } | Element::Slot(_) => false,
            Element::Tuple(values) => values.iter().any(|v| {
                let t = match v {
                    Value::Dense(t) => t,
                    Value::Sparse(s) => s.values(),
                };
                t.dtype() == DType::String
            }),
        }
    }

    /// Copies the byte strings of a tuple that share an allocation
    /// (records sliced out of a reader's 64 KiB chunk, values sliced out
    /// of a record) into allocations of their own, so that one held
    /// record does not keep its whole chunk alive, and returns true if it
    /// copied anything. A string is copied at most once: the copy is
    /// unique.
    pub(crate) fn own_strings(&mut self) -> bool {
        let Element::Tuple(values) = self else {
            return false;
        };
        let copied: usize = values
            .iter_mut()
            .map(|v| match v {
                Value::Dense(t) => t.own_strings(),
                Value::Sparse(s) => s.own_strings(),
            })
            .sum();
        copied > 0
    }

    pub(crate) fn into_tuple(self) -> Result<Vec<Value>> {
        match self {
            Element::Tuple(values) => Ok(values),
            Element::Row { batch, index } => batch
                .iter()
                .map(|t| t.index(index).map(Value::Dense))
                .collect(),
            Element::Slot(_) => {
                Err(Error::internal("a slot's row is read through its slab"))
            }
        }
    }

    /// Component `c` when it is an `i64` scalar (a priority).
    pub(crate) fn scalar_i64(&self, c: usize) -> Option<i64> {
        match self {
            Element::Tuple(values) => {
                values.get(c)?.dense().ok()?.scalar_value::<i64>().ok()
            }
            Element::Row { batch, index } => {
                let t = batch.get(c)?;
                if t.rank() != 1 {
                    return None;
                }
                t.as_slice::<i64>().ok()?.get(*index).copied()
            }
            Element::Slot(_) => None,
        }
    }

    /// Dense component `c`: the tensor holding it, the range of its
    /// values there, and its dims.
    fn dense_part(
        &self,
        c: usize,
    ) -> Result<(&Tensor, Range<usize>, &[usize])> {
        match self {
            Element::Tuple(values) => {
                let t = values
                    .get(c)
                    .ok_or_else(|| Error::internal("element too short"))?
                    .dense()?;
                Ok((t, 0..t.num_elements(), t.dims()))
            }
            Element::Row { batch, index } => {
                let t = batch
                    .get(c)
                    .ok_or_else(|| Error::internal("batch too short"))?;
                let dims = &t.dims()[1..];
                let len: usize = dims.iter().product();
                Ok((t, index * len..(index + 1) * len, dims))
            }
            Element::Slot(_) => {
                Err(Error::internal("a slot's row is read through its slab"))
            }
        }
    }
}

/// Stacks elements of an all-dense spec along a new axis 0, copying each
/// element's values once, straight into one preallocated buffer per
/// component. `elements` must not be empty. Unless `same_shapes` (the
/// spec's shapes are fully defined, and every element was checked against
/// them), the shapes are compared as they are copied.
///
/// # Errors
/// InvalidArgument naming the component when two elements' shapes
/// differ.
pub(crate) fn stack_dense(
    spec: &QueueSpec,
    elements: &[Element],
    same_shapes: bool,
) -> Result<Vec<Value>> {
    let first = elements
        .first()
        .ok_or_else(|| Error::internal("stacking no elements"))?;
    let n = elements.len();
    spec.components()
        .iter()
        .enumerate()
        .map(|(c, cs)| {
            let (_, range, dims0) = first.dense_part(c)?;
            let mut data = Data::with_capacity(cs.dtype(), n * range.len());
            for (j, e) in elements.iter().enumerate() {
                let (t, range, dims) = e.dense_part(c)?;
                if !same_shapes && dims != dims0 {
                    let label = cs.label(c);
                    return Err(Error::invalid_argument(format!(
                        "cannot batch {label}: element {j} has shape {}, \
                         element 0 has {}; declare the shape or use a \
                         PaddingFifoQueue",
                        Shape::new(dims),
                        Shape::new(dims0),
                    ))
                    .with_field(label));
                }
                data.extend_from(t.data(), range)?;
            }
            let mut shape = Vec::with_capacity(dims0.len() + 1);
            shape.push(n);
            shape.extend_from_slice(dims0);
            Ok(Value::Dense(Tensor::from_data(shape, data)?))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_element_is_no_larger_than_a_tuple() {
        // Collecting a Vec<Vec<Value>> into a Vec<Element> (and back)
        // then happens in place, without a new allocation per call.
        assert_eq!(
            std::mem::size_of::<Element>(),
            std::mem::size_of::<Vec<Value>>()
        );
    }

    #[test]
    fn a_row_copies_out_of_its_batch_as_a_tuple() {
        let batch = vec![
            Tensor::new([2, 2], vec![1i64, 2, 3, 4]).unwrap(),
            Tensor::vector(vec![7i64, 8]),
        ];
        let rows = Element::rows(batch, 2);
        assert_eq!(rows[1].scalar_i64(1), Some(8));
        let t = rows.into_iter().nth(1).unwrap().into_tuple().unwrap();
        assert_eq!(t[0].dense().unwrap().as_slice::<i64>().unwrap(), &[3, 4]);
        assert_eq!(t[1].dense().unwrap().scalar_value::<i64>().unwrap(), 8);
    }
}
