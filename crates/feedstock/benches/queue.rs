//! Queue throughput against crossbeam-channel's bounded channel (the
//! baseline, measured in the same run, carrying the same elements).
//!
//! Run: `cargo bench -p feedstock --bench queue -- --warm-up-time 1
//! --measurement-time 3`.

// criterion_group! generates an undocumented function.
#![allow(missing_docs)]

use std::sync::Arc;
use std::thread;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use feedstock::queue::{
    ComponentSpec, FifoQueue, PartialShape, Queue, QueueSpec,
};
use feedstock::{DType, Tensor, Value};

const CAPACITY: usize = 1024;

fn spec() -> QueueSpec {
    QueueSpec::new().component(
        ComponentSpec::new(DType::I64).shape(PartialShape::scalar()),
    )
}

fn element(i: i64) -> Vec<Value> {
    vec![Tensor::scalar(i).into()]
}

fn single_thread(c: &mut Criterion) {
    const N: i64 = 1000;
    let mut g = c.benchmark_group("single_thread");
    g.throughput(Throughput::Elements(N as u64));
    let q = FifoQueue::builder(CAPACITY, spec()).build().unwrap();
    g.bench_function("feedstock_fifo", |b| {
        b.iter(|| {
            for i in 0..N {
                q.enqueue(element(i)).unwrap();
                q.dequeue().unwrap();
            }
        })
    });
    let (tx, rx) = crossbeam_channel::bounded::<Vec<Value>>(CAPACITY);
    g.bench_function("crossbeam_bounded", |b| {
        b.iter(|| {
            for i in 0..N {
                tx.send(element(i)).unwrap();
                rx.recv().unwrap();
            }
        })
    });
    g.finish();
}

/// 2 producers and 2 consumers moving `n` elements one at a time.
fn two_by_two(c: &mut Criterion) {
    const N: i64 = 40_000;
    let mut g = c.benchmark_group("2p2c");
    g.throughput(Throughput::Elements(N as u64));
    g.sample_size(10);
    g.bench_function("feedstock_fifo", |b| {
        b.iter(|| {
            let q = FifoQueue::builder(CAPACITY, spec()).build().unwrap();
            let producers: Vec<_> = (0..2)
                .map(|_| {
                    let q = q.clone();
                    thread::spawn(move || {
                        for i in 0..N / 2 {
                            q.enqueue(element(i)).unwrap();
                        }
                    })
                })
                .collect();
            let consumers: Vec<_> = (0..2)
                .map(|_| {
                    let q = q.clone();
                    thread::spawn(move || {
                        for _ in 0..N / 2 {
                            q.dequeue().unwrap();
                        }
                    })
                })
                .collect();
            for t in producers.into_iter().chain(consumers) {
                t.join().unwrap();
            }
        })
    });
    g.bench_function("crossbeam_bounded", |b| {
        b.iter(|| {
            let (tx, rx) = crossbeam_channel::bounded::<Vec<Value>>(CAPACITY);
            let producers: Vec<_> = (0..2)
                .map(|_| {
                    let tx = tx.clone();
                    thread::spawn(move || {
                        for i in 0..N / 2 {
                            tx.send(element(i)).unwrap();
                        }
                    })
                })
                .collect();
            let consumers: Vec<_> = (0..2)
                .map(|_| {
                    let rx = rx.clone();
                    thread::spawn(move || {
                        for _ in 0..N / 2 {
                            rx.recv().unwrap();
                        }
                    })
                })
                .collect();
            for t in producers.into_iter().chain(consumers) {
                t.join().unwrap();
            }
        })
    });
    g.finish();
}

/// One producer enqueuing elements one at a time, one consumer taking
/// stacked batches of 128 (what `batch` does).
fn dequeue_many_128(c: &mut Criterion) {
    const BATCH: usize = 128;
    const BATCHES: usize = 200;
    let n = (BATCH * BATCHES) as i64;
    let mut g = c.benchmark_group("dequeue_many_128");
    g.throughput(Throughput::Elements(n as u64));
    g.sample_size(10);
    g.bench_function("feedstock_fifo", |b| {
        b.iter(|| {
            let q: Arc<dyn Queue> =
                FifoQueue::builder(CAPACITY, spec()).build().unwrap();
            let producer = {
                let q = q.clone();
                thread::spawn(move || {
                    for i in 0..n {
                        q.enqueue(element(i)).unwrap();
                    }
                })
            };
            for _ in 0..BATCHES {
                let batch = q.dequeue_many(BATCH).unwrap();
                assert_eq!(batch[0].dense().unwrap().dims(), &[BATCH]);
            }
            producer.join().unwrap();
        })
    });
    g.bench_function("crossbeam_bounded_then_stack", |b| {
        b.iter(|| {
            let (tx, rx) = crossbeam_channel::bounded::<Vec<Value>>(CAPACITY);
            let producer = thread::spawn(move || {
                for i in 0..n {
                    tx.send(element(i)).unwrap();
                }
            });
            for _ in 0..BATCHES {
                let rows: Vec<Tensor> = (0..BATCH)
                    .map(|_| {
                        rx.recv().unwrap().remove(0).into_dense().unwrap()
                    })
                    .collect();
                let batch = Tensor::stack(&rows).unwrap();
                assert_eq!(batch.dims(), &[BATCH]);
            }
            producer.join().unwrap();
        })
    });
    g.finish();
}

/// Rows of 784 floats and an int64 label through a shuffle queue that
/// keeps 10 000 of them (the seed pipeline's queue): a producer thread
/// enqueuing batches of 128 rows (`enqueue_many`), the measured thread
/// dequeuing batches of 128 (`dequeue_many`). The baseline makes the same
/// two copies of every row on one thread with no queue: into a random
/// place of a pool of as many rows, and out of a random place into a
/// batch.
fn shuffle_rows(c: &mut Criterion) {
    use rand::{Rng, SeedableRng};

    const ROW: usize = 784;
    const BATCH: usize = 128;
    const HELD: usize = 10_000;
    const CAPACITY: usize = HELD + 3 * BATCH;
    let mut g = c.benchmark_group("shuffle_rows_784_floats");
    g.throughput(Throughput::Elements(BATCH as u64));
    let batch = || -> Vec<Value> {
        vec![
            Tensor::new([BATCH, ROW], vec![0.5f32; BATCH * ROW])
                .unwrap()
                .into(),
            Tensor::vector(vec![7i64; BATCH]).into(),
        ]
    };
    let q: Arc<dyn Queue> = feedstock::queue::RandomShuffleQueue::builder(
        CAPACITY,
        QueueSpec::new()
            .component(ComponentSpec::new(DType::F32).shape([ROW]))
            .component(ComponentSpec::new(DType::I64).shape([])),
    )
    .min_after_dequeue(HELD)
    .seed(1)
    .build()
    .unwrap();
    let producer = {
        let q = q.clone();
        // Ends when the queue is closed.
        thread::spawn(move || while q.enqueue_many(batch()).is_ok() {})
    };
    g.bench_function("feedstock_shuffle_queue_2_threads", |b| {
        b.iter(|| q.dequeue_many(BATCH).unwrap())
    });
    q.close(true);
    producer.join().unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    let mut pool = vec![0.25f32; CAPACITY * ROW];
    g.bench_function("copies_alone_1_thread", |b| {
        b.iter(|| {
            let input = batch();
            let rows = input[0].dense().unwrap().as_slice::<f32>().unwrap();
            for row in rows.chunks(ROW) {
                let s = rng.gen_range(0..CAPACITY);
                pool[s * ROW..(s + 1) * ROW].copy_from_slice(row);
            }
            let mut out = vec![0f32; BATCH * ROW];
            for row in out.chunks_mut(ROW) {
                let s = rng.gen_range(0..CAPACITY);
                row.copy_from_slice(&pool[s * ROW..(s + 1) * ROW]);
            }
            out
        })
    });
    g.finish();
}

criterion_group!(
    benches,
    single_thread,
    two_by_two,
    dequeue_many_128,
    shuffle_rows
);
criterion_main!(benches);
