//! The part every tensor-tuple queue shares: checking elements against the
//! spec, splitting `enqueue_many` input, batching dequeued elements, all
//! over the generic blocking [`Core`].

use std::sync::{LazyLock, OnceLock};
use std::time::Duration;

use crate::error::Result;
use crate::tensor::Value;

use super::batch::Batcher;
use super::core::{Buffer, Core};
use super::element::stack_dense;
use super::slab::Slab;
use super::spec::QueueSpec;
use super::{DequeueMode, QueueStats};

pub(crate) use super::element::Element;

/// A queue of tensor tuples over the buffer `B`.
pub(crate) struct TensorQueue<B> {
    pub(crate) core: Core<Element, B>,
    /// The spec and what follows from it; set at creation, or by the
    /// first element for an inferred spec.
    fixed: OnceLock<Fixed>,
    /// The inferred spec, until `fixed` is set.
    template: QueueSpec,
    batcher: Batcher,
}

/// A queue's spec and the batching shortcuts it allows.
struct Fixed {
    spec: QueueSpec,
    /// Batches are stacked by [`stack_dense`]: the batcher stacks and
    /// every component is dense.
    fast_stack: bool,
    /// The spec's shapes are fully defined, so checked elements need no
    /// shape comparison when stacked.
    same_shapes: bool,
    /// Where the elements are kept, in a queue that stores them in slots
    /// ([`Buffer::STORES_SLOTS`]) when the spec allows it: then every
    /// element held is an [`Element::Slot`].
    slab: Option<Slab>,
}

impl Fixed {
    fn new(
        spec: QueueSpec,
        batcher: Batcher,
        slots: bool,
        capacity: usize,
    ) -> Fixed {
        let dense = spec
            .components()
            .iter()
            .all(|c| c.layout() == super::Layout::Dense);
        Fixed {
            fast_stack: batcher == Batcher::Stack && dense,
            same_shapes: spec.is_dense_fully_defined(),
            slab: slots.then(|| Slab::for_spec(&spec, capacity)).flatten(),
            spec,
        }
    }
}

impl<B: Buffer<Element>> std::fmt::Debug for TensorQueue<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.core.fmt(f)
    }
}

/// The spec of an inferred queue before its first element.
static NOT_YET_INFERRED: LazyLock<QueueSpec> = LazyLock::new(QueueSpec::infer);

impl<B: Buffer<Element>> TensorQueue<B> {
    pub(crate) fn new(
        name: String,
        capacity: usize,
        spec: QueueSpec,
        batcher: Batcher,
        buf: B,
    ) -> TensorQueue<B> {
        let fixed = OnceLock::new();
        let template = if spec.is_inferred() {
            spec
        } else {
            let _ = fixed.set(Fixed::new(
                spec,
                batcher,
                B::STORES_SLOTS,
                capacity,
            ));
            QueueSpec::new()
        };
        TensorQueue {
            core: Core::new(name, capacity, buf),
            fixed,
            template,
            batcher,
        }
    }

    /// The fixed spec, inferring it from `element` (batched along axis 0
    /// when `batched`) if it is not yet.
    fn fixed_by(&self, element: &[Value], batched: bool) -> Result<&Fixed> {
        if let Some(f) = self.fixed.get() {
            return Ok(f);
        }
        let spec = self
            .template
            .fixed_by(element, batched, self.batcher == Batcher::Pad)
            .map_err(|e| self.context(e))?;
        // Two first elements racing: one wins, the other is checked
        // against it.
        Ok(self.fixed.get_or_init(|| {
            Fixed::new(spec, self.batcher, B::STORES_SLOTS, self.capacity())
        }))
    }

    pub(crate) fn name(&self) -> &str {
        self.core.name()
    }

    /// The slots its slab ever allocated, if it keeps one.
    #[cfg(test)]
    pub(crate) fn slab_slots(&self) -> Option<usize> {
        Some(self.fixed.get()?.slab.as_ref()?.slots())
    }

    pub(crate) fn spec(&self) -> &QueueSpec {
        self.fixed.get().map_or(&NOT_YET_INFERRED, |f| &f.spec)
    }

    pub(crate) fn capacity(&self) -> usize {
        self.core.capacity()
    }

    pub(crate) fn size(&self) -> usize {
        self.core.size()
    }

    pub(crate) fn stats(&self) -> QueueStats {
        self.core.stats()
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.core.is_closed()
    }

    pub(crate) fn close(&self, cancel_pending_enqueues: bool) -> bool {
        self.core.close(cancel_pending_enqueues)
    }

    pub(crate) fn cancel(&self) -> bool {
        self.core.cancel()
    }

    pub(crate) fn is_cancelled(&self) -> bool {
        self.core.is_cancelled()
    }

    pub(crate) fn set_cancel_flag(
        &self,
        flag: std::sync::Arc<std::sync::atomic::AtomicBool>,
    ) {
        self.core.set_cancel_flag(flag)
    }

    pub(crate) fn set_default_timeout(&self, timeout: Option<Duration>) {
        self.core.set_default_timeout(timeout)
    }

    pub(crate) fn enqueue_elements(
        &self,
        elements: Vec<Vec<Value>>,
        timeout: Option<Duration>,
    ) -> Result<()> {
        let Some(first) = elements.first() else {
            return self.core.put(Vec::new(), timeout);
        };
        let fixed = self.fixed_by(first, false)?;
        for e in &elements {
            fixed.spec.check(e).map_err(|e| self.context(e))?;
        }
        let elements = self.store_tuples(fixed, elements)?;
        self.put(fixed, elements, timeout)
    }

    /// [`TensorQueue::enqueue_elements`] of one element, as a per-record
    /// producer calls it once per record: nothing is allocated to wrap it.
    pub(crate) fn enqueue_element(
        &self,
        element: Vec<Value>,
        timeout: Option<Duration>,
    ) -> Result<()> {
        let fixed = self.fixed_by(&element, false)?;
        fixed.spec.check(&element).map_err(|e| self.context(e))?;
        let stored = match &fixed.slab {
            Some(slab) => {
                let mut slot = slab.reserve_one();
                if let Err(e) = slab.write_element(&mut slot, &element) {
                    slab.release([slot]);
                    return Err(e);
                }
                Element::Slot(slot)
            }
            None => Element::Tuple(element),
        };
        self.put(fixed, std::iter::once(stored), timeout)
    }

    pub(crate) fn enqueue_batch(
        &self,
        components: Vec<Value>,
        timeout: Option<Duration>,
    ) -> Result<()> {
        let fixed = self.fixed_by(&components, true)?;
        let spec = &fixed.spec;
        let rows = spec
            .check_dense_batch(&components)
            .map_err(|e| self.context(e))?;
        let elements = match rows {
            // Checked as a whole: in a queue whose rows leave in order,
            // store them as views of the shared batch, which is freed
            // when its last row has left. In a shuffle queue that would
            // take about `min_after_dequeue × ln(rows)` dequeues, keeping
            // several times the queue's contents alive (in a priority
            // queue, as long as the lowest priority waits): there each
            // row is copied out here, into a slot or a tuple of its own,
            // on the enqueuing thread and outside the queue's lock, so
            // that the single dequeuing thread only stacks.
            Some(n) => {
                let tensors = components
                    .into_iter()
                    .map(Value::into_dense)
                    .collect::<Result<Vec<_>>>()?;
                match &fixed.slab {
                    Some(slab) => self.copy_to_slots(slab, n, |s, i| {
                        slab.write_row(s, &tensors, i)
                    })?,
                    None if B::SCATTERS_ROWS => (0..n)
                        .map(|i| {
                            tensors
                                .iter()
                                .map(|t| t.index(i).map(Value::Dense))
                                .collect::<Result<_>>()
                                .map(Element::Tuple)
                        })
                        .collect::<Result<_>>()?,
                    None => Element::rows(tensors, n),
                }
            }
            None => {
                let rows = spec
                    .split_batch(components)
                    .map_err(|e| self.context(e))?;
                self.store_tuples(fixed, rows)?
            }
        };
        self.put(fixed, elements, timeout)
    }

    /// Checked elements as the queue stores them: copied into slots of
    /// its slab if it keeps one, else as they are.
    fn store_tuples(
        &self,
        fixed: &Fixed,
        tuples: Vec<Vec<Value>>,
    ) -> Result<Vec<Element>> {
        match &fixed.slab {
            Some(slab) => self.copy_to_slots(slab, tuples.len(), |s, i| {
                slab.write_element(s, &tuples[i])
            }),
            None => Ok(tuples.into_iter().map(Element::Tuple).collect()),
        }
    }

    /// `n` rows copied into slots of `slab` by `write(slot, i)`, outside
    /// the queue's lock. On an error the slots go back.
    fn copy_to_slots(
        &self,
        slab: &Slab,
        n: usize,
        mut write: impl FnMut(&mut super::slab::Slot, usize) -> Result<()>,
    ) -> Result<Vec<Element>> {
        let mut slots = slab.reserve(n);
        for (i, slot) in slots.iter_mut().enumerate() {
            if let Err(e) = write(slot, i) {
                slab.release(slots);
                return Err(e);
            }
        }
        Ok(slots.into_iter().map(Element::Slot).collect())
    }

    /// Adds checked elements; the slots of those a failed enqueue did not
    /// add go back to the slab.
    fn put(
        &self,
        fixed: &Fixed,
        elements: impl IntoIterator<
            Item = Element,
            IntoIter: ExactSizeIterator<Item = Element>,
        >,
        timeout: Option<Duration>,
    ) -> Result<()> {
        let mut unput = Vec::new();
        let result = self.core.put_or_keep(elements, timeout, &mut unput);
        if let Some(slab) = &fixed.slab {
            slab.release(unput.into_iter().filter_map(Element::into_slot));
        }
        result
    }

    pub(crate) fn dequeue_elements(
        &self,
        n: usize,
        mode: DequeueMode,
        timeout: Option<Duration>,
    ) -> Result<Vec<Vec<Value>>> {
        let elements = self.take(n, mode, timeout)?;
        match self.fixed.get().and_then(|f| f.slab.as_ref()) {
            Some(slab) => {
                let tuples = elements
                    .iter()
                    .map(|e| slab.tuple(e.slot()?))
                    .collect::<Result<_>>();
                self.after_copy(slab, elements, tuples)
            }
            None => elements.into_iter().map(Element::into_tuple).collect(),
        }
    }

    /// Gives the slots of elements just copied out back to the slab, or
    /// the elements back to the queue if the copy failed.
    fn after_copy<R>(
        &self,
        slab: &Slab,
        elements: Vec<Element>,
        copied: Result<R>,
    ) -> Result<R> {
        match copied {
            Ok(r) => {
                slab.release(
                    elements.into_iter().filter_map(Element::into_slot),
                );
                Ok(r)
            }
            Err(e) => {
                self.core.put_back(elements);
                Err(self.context(e))
            }
        }
    }

    fn take(
        &self,
        n: usize,
        mode: DequeueMode,
        timeout: Option<Duration>,
    ) -> Result<Vec<Element>> {
        let partial = mode == DequeueMode::UpTo;
        self.core.take(n, partial, timeout)
    }

    pub(crate) fn dequeue_batch(
        &self,
        n: usize,
        mode: DequeueMode,
        timeout: Option<Duration>,
    ) -> Result<Vec<Value>> {
        let elements = self.take(n, mode, timeout)?;
        let Some(fixed) = self.fixed.get() else {
            // Nothing was ever enqueued, so nothing was taken.
            return Ok(Vec::new());
        };
        if let Some(slab) = &fixed.slab {
            let batch = elements
                .iter()
                .map(Element::slot)
                .collect::<Result<Vec<_>>>()
                .and_then(|s| slab.stack(&s));
            return self.after_copy(slab, elements, batch);
        }
        if fixed.fast_stack && !elements.is_empty() {
            return match stack_dense(&fixed.spec, &elements, fixed.same_shapes)
            {
                Ok(batch) => Ok(batch),
                Err(e) => {
                    self.core.put_back(elements);
                    Err(self.context(e))
                }
            };
        }
        let elements = elements
            .into_iter()
            .map(Element::into_tuple)
            .collect::<Result<Vec<_>>>()?;
        if let Err(e) = self.batcher.check(&fixed.spec, &elements) {
            self.core
                .put_back(elements.into_iter().map(Element::Tuple).collect());
            return Err(self.context(e));
        }
        self.batcher.build(&fixed.spec, elements)
    }

    fn context(&self, e: crate::Error) -> crate::Error {
        let msg = format!("queue '{}': {}", self.name(), e.message());
        e.with_message(msg)
    }
}

/// Implements [`Queue`](super::Queue) for a wrapper struct whose `inner`
/// field is a [`TensorQueue`].
macro_rules! impl_queue {
    ($ty:ty) => {
        impl $crate::queue::Queue for $ty {
            fn name(&self) -> &str {
                self.inner.name()
            }
            fn spec(&self) -> &$crate::queue::QueueSpec {
                self.inner.spec()
            }
            fn capacity(&self) -> usize {
                self.inner.capacity()
            }
            fn size(&self) -> usize {
                self.inner.size()
            }
            fn stats(&self) -> $crate::queue::QueueStats {
                self.inner.stats()
            }
            fn is_closed(&self) -> bool {
                self.inner.is_closed()
            }
            fn close(&self, cancel_pending_enqueues: bool) -> bool {
                self.inner.close(cancel_pending_enqueues)
            }
            fn cancel(&self) -> bool {
                self.inner.cancel()
            }
            fn is_cancelled(&self) -> bool {
                self.inner.is_cancelled()
            }
            fn set_cancel_flag(
                &self,
                flag: std::sync::Arc<std::sync::atomic::AtomicBool>,
            ) {
                self.inner.set_cancel_flag(flag)
            }
            fn set_default_timeout(
                &self,
                timeout: Option<std::time::Duration>,
            ) {
                self.inner.set_default_timeout(timeout)
            }
            fn enqueue_elements(
                &self,
                elements: Vec<Vec<$crate::Value>>,
                timeout: Option<std::time::Duration>,
            ) -> $crate::Result<()> {
                self.inner.enqueue_elements(elements, timeout)
            }
            fn enqueue(
                &self,
                element: Vec<$crate::Value>,
            ) -> $crate::Result<()> {
                self.inner.enqueue_element(element, None)
            }
            fn enqueue_timeout(
                &self,
                element: Vec<$crate::Value>,
                timeout: std::time::Duration,
            ) -> $crate::Result<()> {
                self.inner.enqueue_element(element, Some(timeout))
            }
            fn enqueue_batch(
                &self,
                components: Vec<$crate::Value>,
                timeout: Option<std::time::Duration>,
            ) -> $crate::Result<()> {
                self.inner.enqueue_batch(components, timeout)
            }
            fn dequeue_elements(
                &self,
                n: usize,
                mode: $crate::queue::DequeueMode,
                timeout: Option<std::time::Duration>,
            ) -> $crate::Result<Vec<Vec<$crate::Value>>> {
                self.inner.dequeue_elements(n, mode, timeout)
            }
            fn dequeue_batch(
                &self,
                n: usize,
                mode: $crate::queue::DequeueMode,
                timeout: Option<std::time::Duration>,
            ) -> $crate::Result<Vec<$crate::Value>> {
                self.inner.dequeue_batch(n, mode, timeout)
            }
            fn register_producers(&self, threads: usize) {
                self.inner.core.register_producers(threads)
            }
            fn producers_started(&self, threads: usize) {
                self.inner.core.producers_started(threads)
            }
            fn producer_ended(&self) {
                self.inner.core.producer_ended()
            }
        }
    };
}

pub(crate) use impl_queue;
