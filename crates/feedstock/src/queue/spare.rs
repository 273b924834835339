//! Row tuples that have left a shuffle or priority queue, kept for reuse
//! by the next rows to arrive.
//!
//! Such a queue stores every row as a tuple of its own (see
//! [`Element`](super::element::Element)). Allocated by the producing
//! threads and freed by the consuming one, those tuples made the
//! allocator hand the producers fresh memory for every row: with
//! mimalloc a third of a shuffle-batch pipeline's CPU time went to the
//! kernel zeroing new pages. When every component is a numeric tensor of
//! one fixed shape, a dequeued row's tuple can take the next arriving
//! row's values instead: the rows cycle through the same memory, and no
//! row is allocated or freed once the queue has filled.

use parking_lot::Mutex;

use crate::error::{Error, Result};
use crate::tensor::{Tensor, Value};

use super::element::Element;

/// A bounded stack of row tuples to reuse.
///
/// The stack keeps at most twice the largest batch that has passed
/// through it, and never more tuples than the queue has free places, so
/// the rows held and the spare tuples together stay within the queue's
/// capacity.
#[derive(Debug)]
pub(crate) struct SpareRows {
    inner: Mutex<Spare>,
}

#[derive(Debug, Default)]
struct Spare {
    tuples: Vec<Vec<Value>>,
    /// The largest number of rows taken or given at once.
    largest: usize,
}

impl SpareRows {
    /// An empty stack.
    pub(crate) fn new() -> SpareRows {
        SpareRows {
            inner: Mutex::new(Spare::default()),
        }
    }

    /// How many tuples are kept.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.inner.lock().tuples.len()
    }

    /// Up to `n` tuples to refill.
    pub(crate) fn take(&self, n: usize) -> Vec<Vec<Value>> {
        let mut s = self.inner.lock();
        s.largest = s.largest.max(n);
        let at = s.tuples.len().saturating_sub(n);
        s.tuples.split_off(at)
    }

    /// Keeps the tuples of `elements`, rows just dequeued, for reuse, as
    /// many as the bound allows with `free` places in the queue; the rest
    /// are freed.
    pub(crate) fn give(&self, elements: Vec<Element>, free: usize) {
        let mut s = self.inner.lock();
        s.largest = s.largest.max(elements.len());
        let limit = (2 * s.largest).min(free);
        let room = limit.saturating_sub(s.tuples.len());
        let tuples = elements.into_iter().filter_map(|e| match e {
            Element::Tuple(t) => Some(t),
            Element::Row { .. } => None,
        });
        s.tuples.extend(tuples.take(room));
    }
}

/// Copies row `index` of every component of a checked dense batch into
/// `tuple`, a row of the same spec, in place.
pub(crate) fn refill_row(
    tuple: &mut [Value],
    batch: &[Tensor],
    index: usize,
) -> Result<()> {
    for (v, t) in tuple.iter_mut().zip(batch) {
        let Value::Dense(row) = v else {
            return Err(Error::internal("refilling a sparse row"));
        };
        if t.dims().get(1..) != Some(row.dims()) {
            return Err(Error::internal("refilling a row of another shape"));
        }
        let len = row.num_elements();
        row.refill_from(t.data(), index * len..(index + 1) * len)?;
    }
    Ok(())
}

/// Copies the values of `element`, a checked element of the same spec,
/// into `tuple`, in place.
pub(crate) fn refill_element(
    tuple: &mut [Value],
    element: &[Value],
) -> Result<()> {
    for (v, e) in tuple.iter_mut().zip(element) {
        let (Value::Dense(row), Value::Dense(e)) = (v, e) else {
            return Err(Error::internal("refilling a sparse row"));
        };
        row.refill_from(e.data(), 0..e.num_elements())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(x: f32) -> Vec<Value> {
        vec![
            Tensor::vector(vec![x; 3]).into(),
            Tensor::scalar(x as i64).into(),
        ]
    }

    fn rows(n: usize) -> Vec<Element> {
        (0..n).map(|i| Element::Tuple(row(i as f32))).collect()
    }

    #[test]
    fn keeps_at_most_twice_the_largest_batch_and_the_free_places() {
        let spare = SpareRows::new();
        assert!(spare.take(4).is_empty());
        spare.give(rows(20), 100);
        spare.give(rows(30), 100);
        // Largest batch 30: up to 60 kept.
        assert_eq!(spare.len(), 50);
        spare.give(rows(30), 100);
        assert_eq!(spare.take(1000).len(), 60);
        // Only as many as the queue has free places.
        spare.give(rows(60), 10);
        assert_eq!(spare.take(60).len(), 10);
    }

    #[test]
    fn a_refilled_tuple_holds_the_new_row_in_its_old_allocation() {
        let mut tuple = row(1.0);
        let before = tuple[0]
            .dense()
            .unwrap()
            .as_slice::<f32>()
            .unwrap()
            .as_ptr();
        let batch = vec![
            Tensor::new([2, 3], vec![0f32, 1., 2., 3., 4., 5.]).unwrap(),
            Tensor::vector(vec![7i64, 8]),
        ];
        refill_row(&mut tuple, &batch, 1).unwrap();
        let image = tuple[0].dense().unwrap();
        assert_eq!(image.as_slice::<f32>().unwrap(), &[3., 4., 5.]);
        assert_eq!(image.as_slice::<f32>().unwrap().as_ptr(), before);
        assert_eq!(
            tuple[1].dense().unwrap().scalar_value::<i64>().unwrap(),
            8
        );
        refill_element(&mut tuple, &row(9.0)).unwrap();
        assert_eq!(
            tuple[0].dense().unwrap().as_slice::<f32>().unwrap(),
            &[9.; 3]
        );
        assert_eq!(
            tuple[1].dense().unwrap().scalar_value::<i64>().unwrap(),
            9
        );
    }

    #[test]
    fn a_row_of_another_size_or_dtype_is_refused() {
        let mut tuple = row(1.0);
        let wide = vec![
            Tensor::new([1, 4], vec![0f32; 4]).unwrap(),
            Tensor::vector(vec![7i64]),
        ];
        assert!(refill_row(&mut tuple, &wide, 0).is_err());
        let ints = vec![
            Tensor::new([1, 3], vec![0i32; 3]).unwrap(),
            Tensor::vector(vec![7i64]),
        ];
        assert!(refill_row(&mut tuple, &ints, 0).is_err());
    }
}
