//! Seed guide, "Preloaded data": a small data set held in memory, fed
//! through `slice_input_producer` and `batch`.
//!
//! The tensors are loaded once and shared (an `Arc`); only row indices go
//! through the producer's queue, shuffled across each epoch, so nothing is
//! copied per epoch but the rows a batch takes. Since the producer already
//! shuffles, the plain `batch` is used rather than `shuffle_batch`, with
//! two preprocessing threads.
//!
//! Each call of the batching closure takes a whole batch of rows at once
//! (`dequeue_up_to`, stacked per component) and hands them to `batch`
//! with `enqueue_many`: one hand-off through each queue per batch rather
//! than per row, which is what makes preloaded data fast. The last call
//! of the last epoch may get fewer rows; `dequeue_up_to` hands them out
//! rather than dropping them.
//!
//! Run with `cargo run --example preloaded`.

use std::collections::BTreeMap;
use std::error::Error;
use std::time::Duration;

use feedstock::coord::{Coordinator, Pipeline};
use feedstock::input::{batch, slice_input_producer};
use feedstock::queue::{ComponentSpec, PartialShape, QueueSpec};
use feedstock::{DType, Tensor};

const ROWS: usize = 100;
const FEATURES: usize = 3;
const NUM_EPOCHS: u64 = 3;
const BATCH_SIZE: usize = 10;

/// Runs the example; `cargo test` runs it too (tests/examples.rs).
pub fn main() -> Result<(), Box<dyn Error>> {
    // The training data: row i is [i, i + 0.5, -i], its label i % 10.
    let data: Vec<f32> = (0..ROWS)
        .flat_map(|i| [i as f32, i as f32 + 0.5, -(i as f32)])
        .collect();
    let training_data = Tensor::new([ROWS, FEATURES], data)?;
    let training_labels =
        Tensor::vector((0..ROWS as i64).map(|i| i % 10).collect());

    let mut pipeline = Pipeline::new();
    let input = slice_input_producer(
        &mut pipeline,
        vec![training_data, training_labels],
    )
    .num_epochs(NUM_EPOCHS)
    .seed(5)
    // A few batches of indices, so that a batch's worth is there at once.
    .capacity(4 * BATCH_SIZE)
    .build()?;
    // The producer holds the tensors once, behind an `Arc`; the clones of
    // the closure below, one per thread, share them.
    let batches = batch(&mut pipeline, move || {
        let rows = input.dequeue_up_to(BATCH_SIZE)?;
        Ok(rows.into_iter().map(Into::into).collect())
    })
    .enqueue_many(true)
    .spec(
        QueueSpec::new()
            .component(
                ComponentSpec::new(DType::F32).shape([FEATURES]).name("x"),
            )
            .component(
                ComponentSpec::new(DType::I64)
                    .shape(PartialShape::scalar())
                    .name("label"),
            ),
    )
    .batch_size(BATCH_SIZE)
    .num_threads(2)
    .build()?;

    let coord = Coordinator::new();
    batches.attach(&coord);
    let threads = pipeline.start(&coord)?;
    let mut seen: BTreeMap<i64, u64> = BTreeMap::new();
    let mut first_batch = Vec::new();
    for batch in batches.iter() {
        let batch = batch?;
        let x = batch.tensor("x")?;
        let label = batch.tensor("label")?.as_slice::<i64>()?;
        assert_eq!(x.dims(), &[BATCH_SIZE, FEATURES]);
        for (row, &l) in x.as_slice::<f32>()?.chunks(FEATURES).zip(label) {
            let i = row[0] as i64;
            assert_eq!(row, [i as f32, i as f32 + 0.5, -(i as f32)]);
            assert_eq!(l, i % 10);
            *seen.entry(i).or_default() += 1;
        }
        if first_batch.is_empty() {
            first_batch = x.as_slice::<f32>()?.to_vec();
        }
    }
    coord.request_stop();
    coord.join(threads, Duration::from_secs(10))?;

    // Every row exactly NUM_EPOCHS times (100 rows make 10 full batches
    // per epoch), in shuffled order.
    assert_eq!(seen.len(), ROWS);
    assert!(seen.values().all(|&n| n == NUM_EPOCHS));
    let rows_in_order: Vec<f32> = (0..BATCH_SIZE)
        .flat_map(|i| [i as f32, i as f32 + 0.5, -(i as f32)])
        .collect();
    assert_ne!(first_batch, rows_in_order, "slices are shuffled");
    println!(
        "{} rows × {NUM_EPOCHS} epochs in batches of {BATCH_SIZE} from one \
         in-memory copy",
        seen.len()
    );
    Ok(())
}
