//! Shuffle quality: how far examples move grows with
//! `min_after_dequeue`, and a fixed seed with one thread gives the same
//! order on every run, while input is still streaming in.

mod batch_support;

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use feedstock::coord::{Coordinator, Pipeline};
use feedstock::input::shuffle_batch;
use feedstock::{DType, Error, Tensor};

use batch_support::*;

const N: i64 = 3000;
const BATCH: usize = 10;

/// The order in which `0..N` comes out of a one-thread shuffle_batch,
/// the consumer taking batches while the runner is still enqueuing;
/// `pause_every` makes the runner sleep briefly after that many examples
/// (0: never), so that runs interleave differently.
fn shuffled(
    min_after_dequeue: usize,
    capacity: usize,
    seed: u64,
    pause_every: i64,
) -> Vec<i64> {
    let next = Arc::new(AtomicI64::new(0));
    let mut pipeline = Pipeline::new();
    let batches = shuffle_batch(&mut pipeline, move || {
        let i = next.fetch_add(1, Ordering::SeqCst);
        if i >= N {
            return Err(Error::out_of_range("done"));
        }
        if pause_every > 0 && i % pause_every == 0 {
            std::thread::sleep(Duration::from_micros(100));
        }
        Ok(vec![Tensor::scalar(i).into()])
    })
    .dtypes([DType::I64])
    .batch_size(BATCH)
    .capacity(capacity)
    .min_after_dequeue(min_after_dequeue)
    .seed(seed)
    .allow_smaller_final_batch(true)
    .build()
    .unwrap();
    let coord = Coordinator::new();
    let threads = pipeline.start(&coord).unwrap();
    let order: Vec<i64> = drain(&batches).iter().flat_map(ids).collect();
    stop(&coord, threads).unwrap();
    let mut sorted = order.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, (0..N).collect::<Vec<_>>());
    order
}

/// The mean distance between where an example went in and came out.
fn mean_displacement(order: &[i64]) -> f64 {
    let total: i64 = order
        .iter()
        .enumerate()
        .map(|(pos, &id)| (pos as i64 - id).abs())
        .sum();
    total as f64 / order.len() as f64
}

#[test]
fn mean_displacement_grows_with_min_after_dequeue() {
    let d: Vec<f64> = [0, 100, 1000]
        .iter()
        .map(|&m| mean_displacement(&shuffled(m, m + 3 * BATCH, 1, 0)))
        .collect();
    eprintln!("mean displacement at min 0, 100, 1000: {d:?}");
    // The seed's capacity rule (min + 3 batches) bounds how far an
    // example can move at min_after_dequeue = 0; a larger pool lets
    // examples travel further.
    assert!(d[0] < d[1] && d[1] < d[2], "{d:?}");
    assert!(d[2] > 100.0, "{d:?}");
}

#[test]
fn a_fixed_seed_gives_the_same_order_while_input_streams_in() {
    // The consumer starts at once and the runner pauses at different
    // points on each run; the shuffle pool a batch draws from depends on
    // the input order alone, so the order depends on the seed alone.
    let cap = 100 + 3 * BATCH;
    let first = shuffled(100, cap, 42, 0);
    assert_ne!(first, (0..N).collect::<Vec<_>>());
    for pause_every in [7, 50, 301] {
        let again = shuffled(100, cap, 42, pause_every);
        let at = again.iter().zip(&first).position(|(a, b)| a != b);
        assert_eq!(again, first, "pause {pause_every}: differs at {at:?}");
    }
    assert_ne!(shuffled(100, cap, 43, 0), first);
}
