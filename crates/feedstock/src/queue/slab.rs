//! Rows of one fixed size, kept in shared chunks of memory: how a shuffle
//! queue stores elements whose components are all numeric tensors of
//! fully defined shapes.
//!
//! Such a queue's rows leave in an order unrelated to the order they came
//! in. Kept as tuples of their own (a vector of tensors, each with its
//! own allocation), every row cost allocations on the producing threads,
//! frees on the consuming one, and a chain of dependent cache misses
//! (tuple, tensor, shape, data) each time it was written or read: in the
//! seed's shuffle-batch pipeline, a third of its CPU time. Here a row
//! lives in a *slot*, a fixed-size piece of a chunk found through one
//! pointer: a producer copies a row's values into a free slot outside the
//! queue's lock, the consumer copies them straight into its output batch
//! and gives the slot back. Nothing is allocated per row once the queue
//! has filled, and the memory held is the slots ever in use at once: the
//! queue's capacity plus the rows on their way in or out.
//!
//! No crate offers fixed-size rows written and read by whichever thread
//! holds a slot, hence this module. Its `unsafe` code is confined to the
//! two byte copies into and out of a slot, and to freeing the chunks.

use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;

use crate::error::{Error, Result};
use crate::tensor::{DType, Data, Tensor, Value};

use super::spec::QueueSpec;
use super::Layout;

/// Bytes of slots allocated at a time (at least one slot).
const CHUNK_BYTES: usize = 256 << 10;

/// Tells slabs apart, so that a slot is only ever used with its own.
static NEXT_SLAB: AtomicU64 = AtomicU64::new(0);

/// Where one component sits in a row.
#[derive(Debug)]
struct Part {
    dtype: DType,
    dims: Vec<usize>,
    /// Elements of the component.
    len: usize,
    /// Their bytes.
    bytes: usize,
    /// Their first byte's offset from the start of the row.
    offset: usize,
}

/// One row's place in a [`Slab`]. Whoever holds the slot is the only one
/// to read or write its row: a slot is made once, is not `Clone`, and is
/// given back to its slab by value.
#[derive(Debug)]
pub(crate) struct Slot {
    row: NonNull<u64>,
    /// The slab it belongs to.
    slab: u64,
}

// SAFETY: a slot is the exclusive right to a row of its slab's memory;
// writing needs `&mut Slot`, so moving or sharing the slot between
// threads moves or shares that right as Rust's rules for `&`/`&mut`
// allow. The queue's lock orders one holder's accesses before the next.
unsafe impl Send for Slot {}
// SAFETY: as above: through `&Slot` the row is only read.
unsafe impl Sync for Slot {}

/// Fixed-size rows for the elements of one queue (see the module docs).
#[derive(Debug)]
pub(crate) struct Slab {
    id: u64,
    parts: Vec<Part>,
    /// A row's size in 8-byte words (every part starts on a word).
    row_words: usize,
    /// Rows per chunk.
    chunk_rows: usize,
    store: Mutex<Store>,
}

#[derive(Debug, Default)]
struct Store {
    /// Every chunk allocated, as raw pointers from `Box::leak`, freed
    /// when the slab is dropped.
    chunks: Vec<NonNull<[u64]>>,
    /// Slots not in use, the last given back on top.
    free: Vec<Slot>,
}

// SAFETY: the store only holds the chunks' pointers (owned by the slab)
// and slots, which are Send.
unsafe impl Send for Store {}

impl Drop for Slab {
    fn drop(&mut self) {
        for chunk in self.store.get_mut().chunks.drain(..) {
            // SAFETY: made by `Box::leak` in `grow`, freed once here.
            // Slots still held (by elements being dropped alongside) are
            // never read again: a slot only touches its row through the
            // slab's methods, which need the slab alive.
            drop(unsafe { Box::from_raw(chunk.as_ptr()) });
        }
    }
}

impl Slab {
    /// A slab for the elements of `spec` in a queue of `capacity`, if
    /// they fit one: every component dense, numeric (not bool, whose
    /// bytes are not plain data) and of a fully defined shape.
    pub(crate) fn for_spec(spec: &QueueSpec, capacity: usize) -> Option<Slab> {
        let mut parts = Vec::with_capacity(spec.len());
        let mut offset = 0;
        for c in spec.components() {
            let size = c.dtype().size()?;
            if c.layout() != Layout::Dense || c.dtype() == DType::Bool {
                return None;
            }
            let dims = c.partial_shape()?.to_shape()?.dims().to_vec();
            let len =
                dims.iter().try_fold(1usize, |n, &d| n.checked_mul(d))?;
            let bytes = len.checked_mul(size)?;
            parts.push(Part {
                dtype: c.dtype(),
                dims,
                len,
                bytes,
                offset,
            });
            offset += bytes.div_ceil(8) * 8;
        }
        let row_words = (offset / 8).max(1);
        Some(Slab {
            id: NEXT_SLAB.fetch_add(1, Ordering::Relaxed),
            parts,
            row_words,
            chunk_rows: (CHUNK_BYTES / (8 * row_words))
                .clamp(1, capacity.max(1)),
            store: Mutex::new(Store::default()),
        })
    }

    /// `n` free slots, the most recently given back first in line; new
    /// chunks are allocated when too few are free.
    pub(crate) fn reserve(&self, n: usize) -> Vec<Slot> {
        let mut store = self.store.lock();
        while store.free.len() < n {
            self.grow(&mut store);
        }
        let at = store.free.len() - n;
        store.free.split_off(at)
    }

    /// One free slot, as [`Slab::reserve`] of one.
    pub(crate) fn reserve_one(&self) -> Slot {
        let mut store = self.store.lock();
        loop {
            if let Some(slot) = store.free.pop() {
                return slot;
            }
            self.grow(&mut store);
        }
    }

    /// Gives slots back for reuse.
    pub(crate) fn release(&self, slots: impl IntoIterator<Item = Slot>) {
        let mut store = self.store.lock();
        store
            .free
            .extend(slots.into_iter().filter(|s| s.slab == self.id));
    }

    /// How many slots were ever allocated.
    #[cfg(test)]
    pub(crate) fn slots(&self) -> usize {
        self.store.lock().chunks.len() * self.chunk_rows
    }

    fn grow(&self, store: &mut Store) {
        let words = self.chunk_rows * self.row_words;
        let chunk =
            NonNull::from(Box::leak(vec![0u64; words].into_boxed_slice()));
        let base = chunk.cast::<u64>();
        store.free.extend((0..self.chunk_rows).rev().map(|r| Slot {
            // SAFETY: row r of the chunk starts within it.
            row: unsafe { base.add(r * self.row_words) },
            slab: self.id,
        }));
        store.chunks.push(chunk);
    }

    fn check(&self, slot: &Slot) -> Result<()> {
        if slot.slab == self.id {
            Ok(())
        } else {
            Err(Error::internal("a queue slot used with another queue"))
        }
    }

    /// Copies into the slot each component `c` from `source(c)`: a
    /// tensor, the dims of its rows, and which row (the tensor is one row
    /// of dims `dims` when they are all its dims).
    fn write<'t>(
        &self,
        slot: &mut Slot,
        source: impl Fn(usize) -> Option<(&'t Tensor, &'t [usize], usize)>,
    ) -> Result<()> {
        self.check(slot)?;
        for (c, part) in self.parts.iter().enumerate() {
            let src = source(c)
                .filter(|(t, dims, _)| {
                    t.dtype() == part.dtype && *dims == part.dims.as_slice()
                })
                .and_then(|(t, _, i)| {
                    t.data()
                        .pod_bytes()?
                        .get(i * part.bytes..(i + 1) * part.bytes)
                })
                .ok_or_else(|| {
                    Error::internal("a queue row of another type or shape")
                })?;
            // SAFETY: the slot is this slab's (checked), so its row is
            // `row_words` words of a live chunk, which hold every part;
            // `&mut Slot` makes this the only access to the row. `src`
            // has `part.bytes` bytes.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    src.as_ptr(),
                    slot.row.as_ptr().cast::<u8>().add(part.offset),
                    part.bytes,
                );
            }
        }
        Ok(())
    }

    /// The bytes of component `c` of the slot's row.
    fn part_bytes<'s>(&self, slot: &'s Slot, c: usize) -> Result<&'s [u8]> {
        self.check(slot)?;
        let part = &self.parts[c];
        // SAFETY: as in `write`: the slot is this slab's, so its row holds
        // every part in a live chunk (which outlives the slot's borrow
        // while `self` does: chunks are only freed when the slab is
        // dropped); `&Slot` rules out a writer for as long as the bytes
        // are borrowed.
        Ok(unsafe {
            std::slice::from_raw_parts(
                slot.row.as_ptr().cast::<u8>().add(part.offset),
                part.bytes,
            )
        })
    }

    /// Fills the slot with row `index` of a checked dense batch.
    pub(crate) fn write_row(
        &self,
        slot: &mut Slot,
        batch: &[Tensor],
        index: usize,
    ) -> Result<()> {
        self.write(slot, |c| {
            let t = batch.get(c)?;
            Some((t, t.dims().get(1..)?, index))
        })
    }

    /// Fills the slot with a checked element.
    pub(crate) fn write_element(
        &self,
        slot: &mut Slot,
        element: &[Value],
    ) -> Result<()> {
        self.write(slot, |c| {
            let t = element.get(c)?.dense().ok()?;
            Some((t, t.dims(), 0))
        })
    }

    /// One tensor per component, of the rows of `slots` stacked along a
    /// new axis 0.
    pub(crate) fn stack(&self, slots: &[&Slot]) -> Result<Vec<Value>> {
        self.tensors(slots, Some(slots.len()))
    }

    /// The slot's row as a tuple of tensors.
    pub(crate) fn tuple(&self, slot: &Slot) -> Result<Vec<Value>> {
        self.tensors(&[slot], None)
    }

    /// One tensor per component of the rows of `slots`, one after the
    /// other, with a leading axis of `rows` if given.
    fn tensors(
        &self,
        slots: &[&Slot],
        rows: Option<usize>,
    ) -> Result<Vec<Value>> {
        self.parts
            .iter()
            .enumerate()
            .map(|(c, part)| {
                // Appended to, not zeroed and then overwritten: a batch of
                // the seed's images is 400 KB.
                let mut data =
                    Data::with_capacity(part.dtype, slots.len() * part.len);
                for slot in slots {
                    if !data.extend_from_pod_bytes(self.part_bytes(slot, c)?) {
                        return Err(Error::internal(
                            "a queue row that is not plain data",
                        ));
                    }
                }
                let shape: Vec<usize> = rows
                    .into_iter()
                    .chain(part.dims.iter().copied())
                    .collect();
                Ok(Value::Dense(Tensor::from_data(shape, data)?))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::{ComponentSpec, PartialShape};

    fn spec() -> QueueSpec {
        QueueSpec::new()
            .component(ComponentSpec::new(DType::F32).shape([3]))
            .component(ComponentSpec::new(DType::I64).shape([]))
            .component(ComponentSpec::new(DType::U8).shape([2, 1]))
    }

    fn row(x: i64) -> Vec<Value> {
        vec![
            Tensor::vector(vec![x as f32, 0.5, -(x as f32)]).into(),
            Tensor::scalar(x).into(),
            Tensor::new([2, 1], vec![x as u8, 7]).unwrap().into(),
        ]
    }

    #[test]
    fn only_dense_fixed_size_numeric_elements_get_a_slab() {
        assert!(Slab::for_spec(&spec(), 10).is_some());
        for other in [
            QueueSpec::dtypes([DType::F32]),
            QueueSpec::new()
                .component(ComponentSpec::new(DType::String).shape([])),
            QueueSpec::new()
                .component(ComponentSpec::new(DType::Bool).shape([])),
            QueueSpec::new().component(ComponentSpec::sparse(DType::F32)),
            QueueSpec::new().component(
                ComponentSpec::new(DType::F32)
                    .shape(PartialShape::new([None])),
            ),
        ] {
            assert!(Slab::for_spec(&other, 10).is_none(), "{other:?}");
        }
    }

    #[test]
    fn rows_come_back_as_they_went_in_alone_or_stacked() {
        let slab = Slab::for_spec(&spec(), 100).unwrap();
        let mut slots = slab.reserve(3);
        for (i, s) in slots.iter_mut().enumerate() {
            slab.write_element(s, &row(i as i64)).unwrap();
        }
        for (i, s) in slots.iter().enumerate() {
            assert_eq!(slab.tuple(s).unwrap(), row(i as i64));
        }
        let stacked =
            slab.stack(&slots.iter().rev().collect::<Vec<_>>()).unwrap();
        let batch: Vec<Tensor> = stacked
            .into_iter()
            .map(|v| v.into_dense().unwrap())
            .collect();
        assert_eq!(batch[0].dims(), &[3, 3]);
        assert_eq!(
            batch[0].as_slice::<f32>().unwrap(),
            &[2.0, 0.5, -2.0, 1.0, 0.5, -1.0, 0.0, 0.5, -0.0]
        );
        assert_eq!(batch[1].as_slice::<i64>().unwrap(), &[2, 1, 0]);
        assert_eq!(batch[2].dims(), &[3, 2, 1]);
        assert_eq!(batch[2].as_slice::<u8>().unwrap(), &[2, 7, 1, 7, 0, 7]);
        // Rows of a batch land in slots as the rows alone would.
        let mut again = slab.reserve(1);
        slab.write_row(&mut again[0], &batch, 1).unwrap();
        assert_eq!(slab.tuple(&again[0]).unwrap(), row(1));
    }

    #[test]
    fn slots_given_back_are_reused_before_any_new_chunk() {
        let slab = Slab::for_spec(&spec(), 10).unwrap();
        // A row is 4 words: 12 bytes of floats, 8 of the label, 2 of u8s.
        assert_eq!(slab.row_words, 2 + 1 + 1);
        let slots = slab.reserve(10);
        assert_eq!(slab.slots(), 10, "one chunk of the capacity");
        slab.release(slots);
        for _ in 0..5 {
            let slots = slab.reserve(10);
            slab.release(slots);
        }
        assert_eq!(slab.slots(), 10);
        // More at once than the chunk holds: another chunk.
        let held = slab.reserve(15);
        assert_eq!(slab.slots(), 20);
        let rows: std::collections::HashSet<_> =
            held.iter().map(|s| s.row).collect();
        assert_eq!(rows.len(), 15, "no row handed out twice");
    }

    #[test]
    fn empty_components_take_no_bytes_and_come_back_empty() {
        let spec = QueueSpec::new()
            .component(ComponentSpec::new(DType::F64).shape([0, 4]))
            .component(ComponentSpec::new(DType::I32).shape([]));
        let slab = Slab::for_spec(&spec, 8).unwrap();
        let row = |x: i32| -> Vec<Value> {
            vec![
                Tensor::new([0, 4], Vec::<f64>::new()).unwrap().into(),
                Tensor::scalar(x).into(),
            ]
        };
        let mut slots = slab.reserve(2);
        for (i, s) in slots.iter_mut().enumerate() {
            slab.write_element(s, &row(i as i32)).unwrap();
        }
        assert_eq!(slab.tuple(&slots[1]).unwrap(), row(1));
        let batch = slab.stack(&slots.iter().collect::<Vec<_>>()).unwrap();
        assert_eq!(batch[0].dense().unwrap().dims(), &[2, 0, 4]);
        let labels = batch[1].dense().unwrap();
        assert_eq!(labels.as_slice::<i32>().unwrap(), &[0, 1]);
    }

    #[test]
    fn a_slot_of_another_slab_is_refused() {
        let (a, b) = (
            Slab::for_spec(&spec(), 4).unwrap(),
            Slab::for_spec(&spec(), 4).unwrap(),
        );
        let mut slot = a.reserve(1).pop().unwrap();
        assert!(b.write_element(&mut slot, &row(1)).is_err());
        assert!(b.tuple(&slot).is_err());
        b.release([slot]);
        assert!(b.reserve(1).pop().is_some_and(|s| s.slab == b.id));
    }

    #[test]
    fn a_row_of_another_type_or_size_is_refused() {
        let slab = Slab::for_spec(&spec(), 4).unwrap();
        let mut slot = slab.reserve(1).pop().unwrap();
        let mut wrong = row(1);
        wrong[1] = Tensor::scalar(1i32).into();
        assert!(slab.write_element(&mut slot, &wrong).is_err());
        let short = vec![Tensor::new([1, 2], vec![1.0f32, 2.0]).unwrap()];
        assert!(slab.write_row(&mut slot, &short, 0).is_err());
    }
}
