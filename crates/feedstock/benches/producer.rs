//! Preloaded data → `batch(128)` on 2 threads, examples per second:
//! `slice_input_producer` handing out one row per call (`dequeue`, the
//! baseline, measured in the same run) against many rows per call
//! (`dequeue_up_to(128)` with `enqueue_many`). MNIST-like rows: 784 u8
//! pixels and an i64 label.
//!
//! Run: `cargo bench -p feedstock --bench producer -- --warm-up-time 1
//! --measurement-time 3`.

use std::time::Duration;

use criterion::{criterion_main, BatchSize, Criterion, Throughput};
use feedstock::coord::{Coordinator, Pipeline};
use feedstock::input::{batch, slice_input_producer, BatchSource};
use feedstock::{DType, Tensor, Value};

const PIXELS: usize = 784;
const BATCH: usize = 128;
const EXAMPLES: usize = 20_000;
const THREADS: usize = 2;
/// Index-queue capacity, the same for both paths: a few batches.
const CAPACITY: usize = 4 * BATCH;

fn data() -> Vec<Tensor> {
    let pixels: Vec<u8> = (0..EXAMPLES * PIXELS).map(|i| i as u8).collect();
    vec![
        Tensor::new([EXAMPLES, PIXELS], pixels).unwrap(),
        Tensor::vector((0..EXAMPLES).map(|i| (i % 10) as i64).collect()),
    ]
}

/// Runs the pipeline to its end and returns the examples delivered.
fn drain(pipeline: &mut Pipeline, batches: &BatchSource) -> usize {
    let coord = Coordinator::new();
    let threads = pipeline.start(&coord).unwrap();
    let mut n = 0;
    for b in batches.iter() {
        n += b.unwrap().len();
    }
    coord.request_stop();
    coord.join(threads, Duration::from_secs(30)).unwrap();
    n
}

/// One epoch of `tensors` through `batch(128)`, `rows_per_call` rows per
/// call of the batching closure (1: `dequeue`; more: `dequeue_up_to`).
fn one_epoch(tensors: Vec<Tensor>, rows_per_call: usize) -> usize {
    let mut pipeline = Pipeline::new();
    let rows = slice_input_producer(&mut pipeline, tensors)
        .num_epochs(1)
        .seed(1)
        .capacity(CAPACITY)
        .build()
        .unwrap();
    let mut b = if rows_per_call == 1 {
        batch(&mut pipeline, move || {
            Ok(rows.dequeue()?.into_iter().map(Value::from).collect())
        })
    } else {
        let mut b = batch(&mut pipeline, move || {
            let got = rows.dequeue_up_to(rows_per_call)?;
            Ok(got.into_iter().map(Value::from).collect())
        });
        b.enqueue_many(true);
        b
    };
    b.dtypes([DType::U8, DType::I64])
        .shapes([vec![Some(PIXELS)], vec![]])
        .batch_size(BATCH)
        .num_threads(THREADS)
        .capacity((THREADS + 1) * BATCH)
        .allow_smaller_final_batch(true);
    let batches = b.build().unwrap();
    drain(&mut pipeline, &batches)
}

fn preloaded(c: &mut Criterion) {
    let tensors = data();
    let mut g = c.benchmark_group("preloaded_batch_128");
    g.throughput(Throughput::Elements(EXAMPLES as u64));
    g.sample_size(10);
    for (name, rows_per_call) in
        [("one_row_dequeue", 1), ("dequeue_up_to_128", BATCH)]
    {
        g.bench_function(name, |bench| {
            // The tensors are cloned outside the timing: the producer
            // takes them by value and holds them once.
            bench.iter_batched(
                || tensors.clone(),
                |t| assert_eq!(one_epoch(t, rows_per_call), EXAMPLES),
                BatchSize::PerIteration,
            )
        });
    }
    g.finish();
}

mod group {
    #![allow(missing_docs)]
    use super::preloaded;
    criterion::criterion_group!(benches, preloaded);
}
criterion_main!(group::benches);
