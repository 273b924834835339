//! Seed guide, "Reading from files" → "Batching": the seed's
//! `read_my_file_format` and `input_pipeline`, with `shuffle_batch` and
//! the seed's capacity formula, `min_after_dequeue + 3 * batch_size`.
//!
//! `read_my_file_format` reads one record with a `TfRecordReader`,
//! decodes it with `parse_single_example` and preprocesses it (scaling
//! the features); `shuffle_batch` runs it in two threads that fill a
//! random-shuffle queue, from which the training loop takes batches of
//! 32 until the epochs run out. Examples left over that make no full
//! batch are counted, not lost: `take_remainder` hands them over.
//!
//! The same pipeline runs a second time in its batched form, the fast
//! one: each thread reads up to 64 records of a file with `read_batch`,
//! parses them with one `parse_example` call and hands the rows over
//! with one `enqueue_many` (in `benches/tf/side_by_side.py` the seed's
//! pipeline runs 1.15× faster this way; docs/performance.md has the table).
//!
//! Run with `cargo run --example batching`.

use std::collections::BTreeMap;
use std::error::Error;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use feedstock::coord::{Coordinator, Pipeline};
use feedstock::decode::example::{
    parse_example, parse_single_example, FeatureSpec,
};
use feedstock::input::{shuffle_batch, string_input_producer, BatchSource};
use feedstock::io::tfrecord::WriterBuilder;
use feedstock::proto::ExampleBuilder;
use feedstock::queue::{ComponentSpec, FifoQueue, PartialShape, QueueSpec};
use feedstock::reader::{Reader, TfRecordReader};
use feedstock::{DType, Tensor, Value};
use prost::Message;

const FILES: usize = 2;
const PER_FILE: usize = 250;
const NUM_EPOCHS: u64 = 2;
const BATCH_SIZE: usize = 32;
const READ_THREADS: usize = 2;
/// Scaled down from the seed's 10 000 to suit 500 examples: big enough to
/// mix examples from both files and both epochs.
const MIN_AFTER_DEQUEUE: usize = 100;

/// Writes `FILES` files of `PER_FILE` Examples: `label` = `i`, `x` = `[i,
/// 2i, 3i, 4i]`.
fn write_data(dir: &Path) -> Result<Vec<String>, Box<dyn Error>> {
    let mut names = Vec::new();
    for f in 0..FILES {
        let path = dir.join(format!("data-{f}.tfrecord"));
        let mut writer = WriterBuilder::new().create(&path)?;
        for i in f * PER_FILE..(f + 1) * PER_FILE {
            let x = (1..=4).map(|k| (i * k) as f32);
            let example = ExampleBuilder::new()
                .int64("label", [i as i64])
                .floats("x", x);
            writer.write_record(&example.build().encode_to_vec())?;
        }
        writer.finish()?;
        names.push(path.to_str().unwrap().to_owned());
    }
    Ok(names)
}

/// The seed's `read_my_file_format`: one record → one (example, label).
fn read_my_file_format(
    reader: &Reader,
    filename_queue: &FifoQueue,
    features: &FeatureSpec,
) -> feedstock::Result<Vec<Value>> {
    let record = reader.read(filename_queue)?;
    let parsed = parse_single_example(&record.value, features, &record.key)?;
    // some_processing: scale the features down.
    let mut example = parsed["x"].dense()?.clone();
    for v in example.as_mut_slice::<f32>()? {
        *v /= 1000.0;
    }
    Ok(vec![example.into(), parsed["label"].clone()])
}

/// `read_my_file_format`, batched: up to 64 records of one file → a
/// batch of (example, label) rows, for `enqueue_many`.
fn read_my_file_format_batched(
    reader: &Reader,
    filename_queue: &FifoQueue,
    features: &FeatureSpec,
) -> feedstock::Result<Vec<Value>> {
    let records = reader.read_batch(filename_queue, 64)?;
    // Keys are built only if a record fails to parse, to name it.
    let parsed = records.decode(|r| parse_example(r, features))?;
    let mut examples = parsed["x"].dense()?.clone();
    for v in examples.as_mut_slice::<f32>()? {
        *v /= 1000.0;
    }
    Ok(vec![examples.into(), parsed["label"].clone()])
}

/// The seed's `input_pipeline`: filenames → batches of (example, label);
/// `batched` picks the batched reading form.
fn input_pipeline(
    pipeline: &mut Pipeline,
    filenames: Vec<String>,
    num_epochs: u64,
    batched: bool,
) -> feedstock::Result<BatchSource> {
    let filename_queue = string_input_producer(pipeline, filenames)
        .num_epochs(num_epochs)
        .shuffle(true)
        .build()?;
    let reader = Reader::new(TfRecordReader::new());
    let features = Arc::new(
        FeatureSpec::builder()
            .fixed("x", DType::F32, [4])
            .fixed("label", DType::I64, [])
            .build()?,
    );
    // capacity must be larger than min_after_dequeue, and the amount
    // larger decides how much is prefetched.
    let capacity = MIN_AFTER_DEQUEUE + 3 * BATCH_SIZE;
    shuffle_batch(pipeline, move || {
        if batched {
            read_my_file_format_batched(&reader, &filename_queue, &features)
        } else {
            read_my_file_format(&reader, &filename_queue, &features)
        }
    })
    .enqueue_many(batched)
    .spec(
        QueueSpec::new()
            .component(ComponentSpec::new(DType::F32).shape([4]).name("x"))
            .component(
                ComponentSpec::new(DType::I64)
                    .shape(PartialShape::scalar())
                    .name("label"),
            ),
    )
    .batch_size(BATCH_SIZE)
    .num_threads(READ_THREADS)
    .capacity(capacity)
    .min_after_dequeue(MIN_AFTER_DEQUEUE)
    .seed(7)
    .build()
}

/// Runs the example; `cargo test` runs it too (tests/examples.rs).
pub fn main() -> Result<(), Box<dyn Error>> {
    let dir = tempfile::tempdir()?;
    let filenames = write_data(dir.path())?;
    run(filenames.clone(), false)?;
    run(filenames, true)
}

/// Runs the pipeline in one form and checks what the training loop got.
fn run(filenames: Vec<String>, batched: bool) -> Result<(), Box<dyn Error>> {
    let mut pipeline = Pipeline::new();
    let batches =
        input_pipeline(&mut pipeline, filenames, NUM_EPOCHS, batched)?;
    let coord = Coordinator::new();
    batches.attach(&coord);
    let threads = pipeline.start(&coord)?;

    // The training loop: ends cleanly when the epochs are done.
    let mut seen: BTreeMap<i64, u64> = BTreeMap::new();
    let mut first_labels = Vec::new();
    let mut fullness = Vec::new();
    let mut check = |x: &Tensor, label: &Tensor| -> feedstock::Result<()> {
        let labels = label.as_slice::<i64>()?;
        for (row, &l) in x.as_slice::<f32>()?.chunks(4).zip(labels) {
            let want: Vec<f32> =
                (1..=4).map(|k| (l * k) as f32 / 1000.0).collect();
            assert_eq!(row, &want[..], "label {l}");
            *seen.entry(l).or_default() += 1;
        }
        Ok(())
    };
    for batch in batches.iter() {
        let batch = batch?;
        let (x, label) = (batch.tensor("x")?, batch.tensor("label")?);
        assert_eq!(x.dims(), &[BATCH_SIZE, 4]);
        assert_eq!(label.dims(), &[BATCH_SIZE]);
        if first_labels.is_empty() {
            first_labels = label.as_slice::<i64>()?.to_vec();
        }
        fullness.push(batches.stats().fraction_full());
        check(x, label)?;
    }
    let stats = batches.stats().batching.ok_or("a batching stage")?;
    let total = FILES * PER_FILE * NUM_EPOCHS as usize;
    assert_eq!(stats.batches as usize, total / BATCH_SIZE);
    assert_eq!(stats.held_back as usize, total % BATCH_SIZE);
    // The examples that make no full batch are still there, not lost.
    if let Some(rest) = batches.take_remainder()? {
        check(rest.tensor("x")?, rest.tensor("label")?)?;
    }
    coord.request_stop();
    coord.join(threads, Duration::from_secs(10))?;

    // Every example exactly NUM_EPOCHS times, in shuffled order.
    assert_eq!(seen.len(), FILES * PER_FILE);
    assert!(seen.values().all(|&n| n == NUM_EPOCHS));
    let in_file_order: Vec<i64> = (0..BATCH_SIZE as i64).collect();
    assert_ne!(first_labels, in_file_order, "the first batch is shuffled");
    let mean_full = fullness.iter().sum::<f64>() / fullness.len() as f64;
    println!(
        "{}: {} batches of {BATCH_SIZE}, {} examples in the remainder; \
         the example queue was {:.0}% full on average",
        if batched { "batched" } else { "per record" },
        stats.batches,
        stats.held_back,
        100.0 * mean_full
    );
    Ok(())
}
