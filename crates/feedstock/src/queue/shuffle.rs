//! The random-shuffle queue.

use std::collections::VecDeque;
use std::sync::Arc;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::error::{Error, Result};

use super::batch::Batcher;
use super::core::Buffer;
use super::spec::QueueSpec;
use super::tuple::{impl_queue, Element, TensorQueue};

/// A shuffle buffer: a pool of at most `min_after_dequeue + 1` elements
/// from which each dequeue draws uniformly, and a FIFO overflow of later
/// arrivals that refills the pool as elements leave it.
///
/// While the queue is open a dequeue only happens when more than
/// `min_after_dequeue` elements are held, that is when the pool is full.
/// So the pool a dequeue draws from is always the first
/// `min_after_dequeue + 1 + k` arrivals minus the `k` already drawn,
/// whatever the timing of the producer and the consumer: the order out is
/// a function of the order in and the seed.
#[derive(Debug)]
pub(crate) struct ShuffleBuf<T> {
    /// The elements a dequeue draws from.
    pool: Vec<T>,
    /// Later arrivals, oldest first; empty unless the pool is full.
    overflow: VecDeque<T>,
    /// Elements kept back while the queue is open.
    min_after_dequeue: usize,
    rng: ChaCha8Rng,
    /// Dequeues since the held strings were last checked for shared
    /// allocations (see [`ShuffleBuf::compact`]).
    pops_since_compact: usize,
    /// Whether any element that may share memory was ever held
    /// ([`Element::may_share`]); until then there is nothing to compact,
    /// and the scan, which touches every held element, is skipped.
    may_share: bool,
}

impl<T> ShuffleBuf<T> {
    fn new(min_after_dequeue: usize, seed: u64) -> ShuffleBuf<T> {
        ShuffleBuf {
            pool: Vec::new(),
            overflow: VecDeque::new(),
            min_after_dequeue,
            rng: ChaCha8Rng::seed_from_u64(seed),
            pops_since_compact: 0,
            may_share: false,
        }
    }

    /// The most elements the pool holds.
    fn pool_size(&self) -> usize {
        self.min_after_dequeue + 1
    }
}

impl ShuffleBuf<Element> {
    /// Copies every held byte string that shares its allocation (a
    /// record sliced out of a read chunk) into one of its own, so that the
    /// chunk can be freed, once an eighth of the held elements (at least
    /// 16) have been dequeued since the last time. The scan is paid for by
    /// those dequeues: eight element checks per dequeue, amortised, and
    /// each string is copied at most once. Without it, one held record
    /// keeps its whole 64 KiB chunk alive, and a queue of records keeps
    /// nearly every chunk they came from. (Rows of `enqueue_many` batches
    /// need no such care: a shuffle queue stores them split, see
    /// [`Element::into_tuple`].)
    fn compact(&mut self) {
        if !self.may_share {
            return;
        }
        self.pops_since_compact += 1;
        if self.pops_since_compact < (self.len() / 8).max(16) {
            return;
        }
        self.pops_since_compact = 0;
        for e in self.pool.iter_mut().chain(self.overflow.iter_mut()) {
            e.own_strings();
        }
    }
}

impl Buffer<Element> for ShuffleBuf<Element> {
    const SCATTERS_ROWS: bool = true;
    const STORES_SLOTS: bool = true;

    fn len(&self) -> usize {
        self.pool.len() + self.overflow.len()
    }

    fn min_after_dequeue(&self) -> Option<usize> {
        Some(self.min_after_dequeue)
    }

    fn push(&mut self, item: Element) {
        self.may_share = self.may_share || item.may_share();
        if self.overflow.is_empty() && self.pool.len() < self.pool_size() {
            self.pool.push(item);
        } else {
            self.overflow.push_back(item);
        }
    }

    fn pop(&mut self) -> Option<Element> {
        if self.pool.is_empty() {
            return None;
        }
        self.compact();
        // Every element of the pool is equally likely. The oldest waiting
        // arrival then joins the end of the pool, exactly as if it had
        // arrived just after this dequeue: the pool's layout, and so the
        // order out, must not depend on whether it was already waiting.
        let i = self.rng.gen_range(0..self.pool.len());
        let item = self.pool.swap_remove(i);
        if let Some(next) = self.overflow.pop_front() {
            self.pool.push(next);
        }
        Some(item)
    }

    fn put_back(&mut self, items: Vec<Element>) {
        // Into the pool while it has room; the rest go ahead of the
        // overflow, in the order they were taken.
        let room = self.pool_size().saturating_sub(self.pool.len());
        let mut items = items.into_iter();
        self.pool.extend(items.by_ref().take(room));
        for item in items.rev() {
            self.overflow.push_front(item);
        }
    }
}

/// A bounded queue that dequeues elements in random order (TensorFlow's
/// `RandomShuffleQueue`, what `shuffle_batch` uses).
///
/// The queue keeps a *pool* of at most `min_after_dequeue + 1` elements,
/// filled in arrival order, and each dequeue takes an element chosen
/// uniformly from the pool; elements arriving while the pool is full wait
/// in a FIFO overflow and refill the pool, oldest first, as elements
/// leave it (tf.data's shuffle buffer). While the queue is open it keeps
/// at least `min_after_dequeue` elements: a dequeue waits until it can
/// take its elements and still leave that many. Once the queue is closed
/// the limit is lifted and the pool drains. The capacity counts pool and
/// overflow together.
///
/// This differs from TensorFlow's `RandomShuffleQueue`, which draws among
/// *every* element held, so that its order depends on how far the
/// producers had got when each dequeue ran. Here a dequeue only happens
/// with a full pool, whose contents depend on the input order alone: with
/// a fixed seed, one producer and one consumer, the order is the same on
/// every run, even while input is still arriving. The price: with
/// `min_after_dequeue = 0` the pool holds one element and the queue is a
/// FIFO; `min_after_dequeue` is the shuffle's window, as in tf.data.
///
/// ```
/// use feedstock::queue::{Queue, QueueSpec, RandomShuffleQueue};
/// use feedstock::{DType, Tensor};
///
/// let q = RandomShuffleQueue::builder(100, QueueSpec::dtypes([DType::I64]))
///     .min_after_dequeue(10)
///     .seed(7)
///     .build()?;
/// q.enqueue_many(vec![Tensor::vector((0..20i64).collect()).into()])?;
/// // 20 held, 10 must stay: at most 10 can be dequeued now.
/// let batch = q.dequeue_many(10)?;
/// assert_eq!(batch[0].dense()?.dims(), &[10]);
/// q.close(false);
/// let rest = q.dequeue_up_to(100)?;
/// assert_eq!(rest[0].dense()?.dims(), &[10]);
/// # Ok::<(), feedstock::Error>(())
/// ```
#[derive(Debug)]
pub struct RandomShuffleQueue {
    inner: TensorQueue<ShuffleBuf<Element>>,
}

impl RandomShuffleQueue {
    /// A builder for a queue of at most `capacity` elements matching
    /// `spec`.
    pub fn builder(
        capacity: usize,
        spec: QueueSpec,
    ) -> RandomShuffleQueueBuilder {
        RandomShuffleQueueBuilder {
            capacity,
            spec,
            min_after_dequeue: 0,
            seed: None,
            name: "random_shuffle_queue".to_owned(),
        }
    }
}

impl_queue!(RandomShuffleQueue);

/// Configures and builds a [`RandomShuffleQueue`].
#[derive(Debug, Clone)]
pub struct RandomShuffleQueueBuilder {
    /// The most elements the queue holds.
    capacity: usize,
    /// The element declaration.
    spec: QueueSpec,
    /// Elements kept back from dequeues while open.
    min_after_dequeue: usize,
    /// The RNG seed; `None` draws one from the OS.
    seed: Option<u64>,
    /// The name used in error messages.
    name: String,
}

impl RandomShuffleQueueBuilder {
    /// Elements the open queue always keeps (default 0).
    pub fn min_after_dequeue(
        &mut self,
        n: usize,
    ) -> &mut RandomShuffleQueueBuilder {
        self.min_after_dequeue = n;
        self
    }

    /// Seeds the shuffle (default: a random seed).
    pub fn seed(&mut self, seed: u64) -> &mut RandomShuffleQueueBuilder {
        self.seed = Some(seed);
        self
    }

    /// Names the queue (default `random_shuffle_queue`).
    pub fn name(
        &mut self,
        name: impl Into<String>,
    ) -> &mut RandomShuffleQueueBuilder {
        self.name = name.into();
        self
    }

    /// Builds the queue.
    ///
    /// # Errors
    /// InvalidArgument for a zero capacity or `min_after_dequeue` not below
    /// the capacity (no dequeue could ever succeed while open).
    pub fn build(&self) -> Result<Arc<RandomShuffleQueue>> {
        super::check_capacity(self.capacity)?;
        if self.min_after_dequeue >= self.capacity {
            return Err(Error::invalid_argument(format!(
                "min_after_dequeue ({}) must be below the capacity ({})",
                self.min_after_dequeue, self.capacity
            )));
        }
        let seed = self.seed.unwrap_or_else(|| rand::thread_rng().gen());
        Ok(Arc::new(RandomShuffleQueue {
            inner: TensorQueue::new(
                self.name.clone(),
                self.capacity,
                self.spec.clone(),
                Batcher::Stack,
                ShuffleBuf::new(self.min_after_dequeue, seed),
            ),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::{ComponentSpec, Queue};
    use crate::tensor::{DType, Tensor, Value};

    fn image_queue(
        capacity: usize,
        min_after: usize,
    ) -> Arc<RandomShuffleQueue> {
        RandomShuffleQueue::builder(
            capacity,
            QueueSpec::new()
                .component(ComponentSpec::new(DType::F32).shape([3]))
                .component(ComponentSpec::new(DType::I64).shape([])),
        )
        .min_after_dequeue(min_after)
        .seed(3)
        .build()
        .unwrap()
    }

    fn image(label: i64) -> Vec<f32> {
        vec![label as f32, -(label as f32), 0.5]
    }

    /// Checks every row of a dequeued batch against its label, and
    /// collects the labels.
    fn check(batch: Vec<Value>, out: &mut Vec<i64>) {
        let labels = batch[1].dense().unwrap().as_slice::<i64>().unwrap();
        let images = batch[0].dense().unwrap().as_slice::<f32>().unwrap();
        for (l, im) in labels.iter().zip(images.chunks(3)) {
            assert_eq!(im, image(*l), "row of label {l}");
        }
        out.extend_from_slice(labels);
    }

    #[test]
    fn rows_in_slots_carry_their_own_values_and_stay_within_the_capacity() {
        // Rows arrive one at a time and in batches of 50 while batches of
        // 32 leave: after the first dequeue, arriving rows go into the
        // slots of rows gone. Every row must come out once, whole, and
        // the slots ever allocated stay within the capacity: the rows
        // held plus one batch on its way in.
        let q = image_queue(400, 100);
        let (mut next, mut out) = (0i64, Vec::new());
        for round in 0..40 {
            if round % 2 == 0 {
                let labels: Vec<i64> = (next..next + 50).collect();
                let images = labels.iter().flat_map(|&l| image(l)).collect();
                q.enqueue_many(vec![
                    Tensor::new([50, 3], images).unwrap().into(),
                    Tensor::vector(labels).into(),
                ])
                .unwrap();
                next += 50;
            } else {
                for _ in 0..50 {
                    q.enqueue(vec![
                        Tensor::vector(image(next)).into(),
                        Tensor::scalar(next).into(),
                    ])
                    .unwrap();
                    next += 1;
                }
            }
            while q.size() >= 100 + 32 {
                check(q.dequeue_many(32).unwrap(), &mut out);
            }
            assert_eq!(q.inner.slab_slots(), Some(400), "one chunk");
        }
        q.close(false);
        // Element by element too.
        for row in q.dequeue_up_to_unstacked(7).unwrap() {
            let label = row[1].dense().unwrap().scalar_value::<i64>().unwrap();
            let im = row[0].dense().unwrap();
            assert_eq!(im.as_slice::<f32>().unwrap(), image(label));
            out.push(label);
        }
        while q.size() > 0 {
            check(q.dequeue_up_to(32).unwrap(), &mut out);
        }
        out.sort_unstable();
        assert_eq!(out, (0..next).collect::<Vec<i64>>(), "every row once");
    }

    #[test]
    fn rows_in_slots_survive_concurrent_producers_whole_and_once() {
        // Two producers of batches and one of single rows, while the
        // consumer takes batches: slots are reserved, filled, held and
        // given back on four threads at once.
        let q = image_queue(300, 100);
        let producers: Vec<_> = (0..3i64)
            .map(|p| {
                let q = Arc::clone(&q);
                std::thread::spawn(move || {
                    let labels =
                        (p * 10_000..p * 10_000 + 3_000).collect::<Vec<_>>();
                    if p == 2 {
                        for &l in &labels {
                            q.enqueue(vec![
                                Tensor::vector(image(l)).into(),
                                Tensor::scalar(l).into(),
                            ])
                            .unwrap();
                        }
                    } else {
                        for chunk in labels.chunks(30) {
                            let images =
                                chunk.iter().flat_map(|&l| image(l)).collect();
                            q.enqueue_many(vec![
                                Tensor::new([chunk.len(), 3], images)
                                    .unwrap()
                                    .into(),
                                Tensor::vector(chunk.to_vec()).into(),
                            ])
                            .unwrap();
                        }
                    }
                })
            })
            .collect();
        // While open, 100 rows stay: the consumer can take all but 125
        // before the producers are done (and must, or they would wait on a
        // full queue for ever).
        let mut out = Vec::new();
        while out.len() < 9_000 - 125 {
            check(q.dequeue_many(25).unwrap(), &mut out);
        }
        for p in producers {
            p.join().unwrap();
        }
        q.close(false);
        while q.size() > 0 {
            check(q.dequeue_up_to(25).unwrap(), &mut out);
        }
        out.sort_unstable();
        let want: Vec<i64> = (0..3)
            .flat_map(|p| p * 10_000..p * 10_000 + 3_000)
            .collect();
        assert_eq!(out, want, "every row once");
        // The capacity plus the rows on their way in, in chunks of 300.
        assert!(q.inner.slab_slots().unwrap() <= 600);
    }

    #[test]
    fn enqueues_that_fail_give_their_slots_back() {
        // A full queue: every enqueue times out or is cancelled, having
        // taken slots for its rows; none of them may be lost, or a
        // producer retrying would grow the queue's memory without bound.
        let q = image_queue(100, 10);
        let batch = |n: usize| {
            vec![
                Tensor::new([n, 3], vec![0.5f32; 3 * n]).unwrap().into(),
                Tensor::vector(vec![7i64; n]).into(),
            ]
        };
        q.enqueue_many(batch(100)).unwrap();
        let timeout = std::time::Duration::from_millis(1);
        for _ in 0..50 {
            let err = q.enqueue_many_timeout(batch(60), timeout).unwrap_err();
            assert_eq!(
                err.kind(),
                crate::error::Kind::DeadlineExceeded,
                "{err}"
            );
        }
        assert_eq!(q.inner.slab_slots(), Some(200), "two chunks at most");
        // One element at a time (a per-record producer's path): a slot
        // each, given back on every timeout.
        for _ in 0..300 {
            let one = vec![
                Tensor::vector(vec![0.5f32; 3]).into(),
                Tensor::scalar(7i64).into(),
            ];
            let err = q.enqueue_timeout(one, timeout).unwrap_err();
            assert_eq!(
                err.kind(),
                crate::error::Kind::DeadlineExceeded,
                "{err}"
            );
        }
        assert_eq!(q.inner.slab_slots(), Some(200), "no slot kept");
        q.close(true);
        assert!(q.enqueue_many(batch(60)).is_err());
        assert_eq!(
            q.dequeue_up_to(1000).unwrap()[1].dense().unwrap().dims(),
            &[100]
        );
    }

    #[test]
    fn only_strings_may_share_memory() {
        use crate::tensor::SparseTensor;

        let numbers = Element::Tuple(vec![
            Value::Dense(Tensor::new([2], vec![1.0f32, 2.0]).unwrap()),
            Value::Dense(Tensor::scalar(3i64)),
        ]);
        assert!(!numbers.may_share());
        let record = Element::Tuple(vec![Value::Dense(Tensor::scalar(
            bytes::Bytes::from_static(b"x"),
        ))]);
        assert!(record.may_share());
        let sparse = SparseTensor::new(
            Tensor::new([1, 1], vec![0i64]).unwrap(),
            Tensor::new([1], vec![bytes::Bytes::from_static(b"y")]).unwrap(),
            [4],
        )
        .unwrap();
        assert!(Element::Tuple(vec![Value::Sparse(sparse)]).may_share());
    }

    #[test]
    fn held_records_do_not_keep_their_read_chunks_alive() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        use std::sync::Arc;

        use bytes::Bytes;

        /// A read chunk that counts itself while alive.
        struct Chunk(Vec<u8>, Arc<AtomicUsize>);
        impl AsRef<[u8]> for Chunk {
            fn as_ref(&self) -> &[u8] {
                &self.0
            }
        }
        impl Drop for Chunk {
            fn drop(&mut self) {
                self.1.fetch_sub(1, Ordering::SeqCst);
            }
        }

        // Records of 1 KiB, 64 to a chunk, as a reader slices them; a
        // shuffle queue holding 1 000 of them, steady state.
        const REC: usize = 1024;
        const PER_CHUNK: usize = 64;
        let live = Arc::new(AtomicUsize::new(0));
        let mut buf = ShuffleBuf::new(1_000, 7);
        let (mut worst, mut seen) = (0, Vec::new());
        for c in 0..200u32 {
            live.fetch_add(1, Ordering::SeqCst);
            let mut data = vec![0u8; REC * PER_CHUNK];
            for (i, rec) in data.chunks_mut(REC).enumerate() {
                rec[..4].copy_from_slice(&(c * 64 + i as u32).to_le_bytes());
            }
            let chunk = Bytes::from_owner(Chunk(data, Arc::clone(&live)));
            for i in 0..PER_CHUNK {
                let rec = chunk.slice(i * REC..(i + 1) * REC);
                buf.push(Element::Tuple(vec![Value::Dense(Tensor::string(
                    rec,
                ))]));
                if buf.len() > 1_000 {
                    let row = buf.pop().unwrap().into_tuple().unwrap();
                    let t = row[0].dense().unwrap();
                    let b = &t.as_slice::<Bytes>().unwrap()[0];
                    seen.push(u32::from_le_bytes(b[..4].try_into().unwrap()));
                }
            }
            drop(chunk);
            worst = worst.max(live.load(Ordering::SeqCst));
        }
        // 1 000 held records are 16 chunks' worth of data (all of it
        // while the queue fills, before the first compaction); without
        // copying the held ones out, nearly every chunk that one of them
        // came from stays alive: about 80 of the run's 200.
        assert!(worst <= 20, "{worst} read chunks alive");
        while let Some(e) = buf.pop() {
            let row = e.into_tuple().unwrap();
            let b = &row[0].dense().unwrap().as_slice::<Bytes>().unwrap()[0];
            seen.push(u32::from_le_bytes(b[..4].try_into().unwrap()));
        }
        seen.sort_unstable();
        assert_eq!(seen, (0..200 * 64).collect::<Vec<u32>>());
        assert_eq!(live.load(Ordering::SeqCst), 0);
    }
}
