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

criterion_group!(benches, single_thread, two_by_two, dequeue_many_128);
criterion_main!(benches);
