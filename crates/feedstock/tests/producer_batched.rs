//! The batched path of `slice_input_producer`: many rows per call, each
//! row exactly once per epoch, shuffled across the epoch, reproducible
//! from the seed, and the same sequence as the one-row path.

use std::collections::BTreeMap;
use std::time::Duration;

use feedstock::coord::{Coordinator, Pipeline, ThreadHandle};
use feedstock::input::{batch, slice_input_producer, SliceProducer};
use feedstock::queue::{ComponentSpec, PartialShape, QueueSpec};
use feedstock::{DType, Kind, Tensor};

const JOIN: Duration = Duration::from_secs(10);
const ROWS: usize = 50;

fn start(pipeline: &mut Pipeline) -> (Coordinator, Vec<ThreadHandle>) {
    let coord = Coordinator::new();
    let threads = pipeline.start(&coord).unwrap();
    (coord, threads)
}

/// Row i of the features is [i, -i] (f32); its label is i (i64).
fn data() -> Vec<Tensor> {
    let x: Vec<f32> =
        (0..ROWS).flat_map(|i| [i as f32, -(i as f32)]).collect();
    vec![
        Tensor::new([ROWS, 2], x).unwrap(),
        Tensor::vector((0..ROWS as i64).collect()),
    ]
}

fn producer(pipeline: &mut Pipeline, epochs: u64, seed: u64) -> SliceProducer {
    slice_input_producer(pipeline, data())
        .num_epochs(epochs)
        .seed(seed)
        .capacity(16)
        .build()
        .unwrap()
}

/// Every label `rows` hands out, `n` at a time with `dequeue_up_to`
/// (checking that features and labels stay aligned), or one at a time
/// with `dequeue` when `n` is 0.
fn drain(rows: &SliceProducer, n: usize) -> (Vec<i64>, Vec<usize>) {
    let mut labels = Vec::new();
    let mut sizes = Vec::new();
    loop {
        let got = if n == 0 {
            rows.dequeue()
        } else {
            rows.dequeue_up_to(n)
        };
        let got = match got {
            Ok(g) => g,
            Err(e) => {
                assert_eq!(e.kind(), Kind::OutOfRange, "{e}");
                return (labels, sizes);
            }
        };
        let l = got[1].as_slice::<i64>().unwrap();
        let x = got[0].as_slice::<f32>().unwrap();
        for (row, &label) in x.chunks(2).zip(l) {
            assert_eq!(row, [label as f32, -(label as f32)]);
        }
        sizes.push(l.len());
        labels.extend_from_slice(l);
    }
}

fn run(epochs: u64, seed: u64, n: usize) -> (Vec<i64>, Vec<usize>) {
    let mut pipeline = Pipeline::new();
    let rows = producer(&mut pipeline, epochs, seed);
    let (coord, threads) = start(&mut pipeline);
    let got = drain(&rows, n);
    coord.join(threads, JOIN).unwrap();
    got
}

#[test]
fn dequeue_up_to_gives_each_row_once_per_epoch_shuffled_and_a_short_tail() {
    let (labels, sizes) = run(3, 8, 32);
    // 150 rows in calls of 32: four full ones, then the 22 left.
    assert_eq!(sizes, [32, 32, 32, 32, 22]);
    let in_order: Vec<i64> = (0..ROWS as i64).collect();
    let mut epochs = Vec::new();
    for epoch in labels.chunks(ROWS) {
        let mut sorted = epoch.to_vec();
        sorted.sort();
        assert_eq!(sorted, in_order, "each epoch holds every row once");
        assert_ne!(epoch, in_order, "rows are shuffled across the epoch");
        epochs.push(epoch.to_vec());
    }
    assert_eq!(epochs.len(), 3);
    assert_ne!(epochs[0], epochs[1], "each epoch has its own order");
}

#[test]
fn the_same_seed_gives_the_same_rows_on_both_paths() {
    let (batched, _) = run(2, 21, 7);
    assert_eq!(run(2, 21, 7).0, batched);
    assert_eq!(run(2, 21, 0).0, batched, "one-row path, same sequence");
    assert_ne!(run(2, 22, 7).0, batched);
}

#[test]
fn dequeue_many_wants_exactly_n_and_leaves_a_short_tail_in_the_queue() {
    let mut pipeline = Pipeline::new();
    let rows = producer(&mut pipeline, 1, 3);
    let (coord, threads) = start(&mut pipeline);
    for _ in 0..3 {
        assert_eq!(rows.dequeue_many(15).unwrap()[1].dims(), [15]);
    }
    let err = rows.dequeue_many(15).unwrap_err();
    assert_eq!(err.kind(), Kind::OutOfRange, "{err}");
    // The five left are not lost.
    assert_eq!(rows.dequeue_up_to(15).unwrap()[1].dims(), [5]);
    let err = rows.dequeue_many(0).unwrap_err();
    assert_eq!(err.kind(), Kind::InvalidArgument, "{err}");
    coord.join(threads, JOIN).unwrap();
}

#[test]
fn batch_with_enqueue_many_delivers_every_row_exactly_num_epochs_times() {
    let epochs = 4;
    let mut pipeline = Pipeline::new();
    let rows = producer(&mut pipeline, epochs, 5);
    let batches = batch(&mut pipeline, move || {
        Ok(rows
            .dequeue_up_to(12)?
            .into_iter()
            .map(Into::into)
            .collect())
    })
    .spec(
        QueueSpec::new()
            .component(ComponentSpec::new(DType::F32).shape([2]).name("x"))
            .component(
                ComponentSpec::new(DType::I64)
                    .shape(PartialShape::scalar())
                    .name("label"),
            ),
    )
    .enqueue_many(true)
    .batch_size(16)
    .num_threads(3)
    .capacity(64)
    .allow_smaller_final_batch(true)
    .build()
    .unwrap();
    let coord = Coordinator::new();
    batches.attach(&coord);
    let threads = pipeline.start(&coord).unwrap();
    let mut counts: BTreeMap<i64, u64> = BTreeMap::new();
    for b in batches.iter() {
        let b = b.unwrap();
        let x = b.tensor("x").unwrap().as_slice::<f32>().unwrap();
        let labels = b.tensor("label").unwrap().as_slice::<i64>().unwrap();
        for (row, &l) in x.chunks(2).zip(labels) {
            assert_eq!(row, [l as f32, -(l as f32)]);
            *counts.entry(l).or_default() += 1;
        }
    }
    coord.request_stop();
    coord.join(threads, JOIN).unwrap();
    assert_eq!(counts.len(), ROWS);
    assert!(counts.values().all(|&n| n == epochs), "{counts:?}");
}
