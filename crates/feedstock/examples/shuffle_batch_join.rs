//! Seed guide, "Reading from files" → "Batching", second part: more
//! parallelism and shuffling between files with several reader instances
//! and `shuffle_batch_join`.
//!
//! One filename queue is shared by `READ_THREADS` readers, each run by its
//! own thread. A reader takes a whole file at a time, so the readers work
//! on different files of the same epoch at once, each reading its own
//! group of files, and the shuffle queue mixes their examples.
//!
//! Run with `cargo run --example shuffle_batch_join`.

use std::collections::{BTreeMap, BTreeSet};
use std::error::Error;
use std::time::Duration;

use feedstock::coord::{Coordinator, Pipeline};
use feedstock::decode::csv::{CsvDecoder, RecordDefault};
use feedstock::input::{shuffle_batch_join, string_input_producer};
use feedstock::queue::{ComponentSpec, FifoQueue, PartialShape, QueueSpec};
use feedstock::reader::{Reader, TextLineReader};
use feedstock::{DType, Tensor, Value};

const FILES: usize = 6;
const LINES: usize = 40;
const NUM_EPOCHS: u64 = 2;
const READ_THREADS: usize = 3;
const BATCH_SIZE: usize = 16;
const MIN_AFTER_DEQUEUE: usize = 60;

/// The seed's `read_my_file_format`, for CSV lines `file,line,value`:
/// the example is `value`, the label the pair `[file, line]`.
fn read_my_file_format(
    reader: &Reader,
    filename_queue: &FifoQueue,
    decoder: &CsvDecoder,
) -> feedstock::Result<Vec<Value>> {
    let record = reader.read(filename_queue)?;
    let columns = decoder.decode(&record.value, &record.key)?;
    let origin = Tensor::stack(&columns[..2])?;
    Ok(vec![columns[2].clone().into(), origin.into()])
}

/// Runs the example; `cargo test` runs it too (tests/examples.rs).
pub fn main() -> Result<(), Box<dyn Error>> {
    let dir = tempfile::tempdir()?;
    let mut filenames = Vec::new();
    for f in 0..FILES {
        let path = dir.path().join(format!("part-{f}.csv"));
        let body: String = (0..LINES)
            .map(|l| format!("{f},{l},{}\n", f * 1000 + l))
            .collect();
        std::fs::write(&path, body)?;
        filenames.push(path.to_str().unwrap().to_owned());
    }

    let mut pipeline = Pipeline::new();
    // One filename queue, shared by every reader.
    let filename_queue = string_input_producer(&mut pipeline, filenames)
        .num_epochs(NUM_EPOCHS)
        .shuffle(true)
        .seed(3)
        .build()?;
    let decoder =
        CsvDecoder::new(vec![RecordDefault::required(DType::I64)?; 3])?;
    // One reader instance per thread.
    let readers: Vec<Reader> = (0..READ_THREADS)
        .map(|_| Reader::new(TextLineReader::new()))
        .collect();
    let example_list = readers.iter().map(|reader| {
        let (reader, queue) = (reader.clone(), filename_queue.clone());
        let decoder = decoder.clone();
        move || read_my_file_format(&reader, &queue, &decoder)
    });
    let batches = shuffle_batch_join(&mut pipeline, example_list)
        .spec(
            QueueSpec::new()
                .component(
                    ComponentSpec::new(DType::I64)
                        .shape(PartialShape::scalar())
                        .name("value"),
                )
                .component(
                    ComponentSpec::new(DType::I64).shape([2]).name("origin"),
                ),
        )
        .batch_size(BATCH_SIZE)
        .capacity(MIN_AFTER_DEQUEUE + 3 * BATCH_SIZE)
        .min_after_dequeue(MIN_AFTER_DEQUEUE)
        .allow_smaller_final_batch(true)
        .seed(11)
        .build()?;

    let coord = Coordinator::new();
    batches.attach(&coord);
    let threads = pipeline.start(&coord)?;
    let mut seen: BTreeMap<(i64, i64), u64> = BTreeMap::new();
    let mut files_per_batch = Vec::new();
    for batch in batches.iter() {
        let batch = batch?;
        let values = batch.tensor("value")?.as_slice::<i64>()?;
        let origin = batch.tensor("origin")?.as_slice::<i64>()?;
        let mut files = BTreeSet::new();
        for (&v, o) in values.iter().zip(origin.chunks(2)) {
            assert_eq!(v, o[0] * 1000 + o[1]);
            *seen.entry((o[0], o[1])).or_default() += 1;
            files.insert(o[0]);
        }
        files_per_batch.push(files.len());
    }
    coord.request_stop();
    coord.join(threads, Duration::from_secs(10))?;

    // Every line of every file, exactly NUM_EPOCHS times.
    assert_eq!(seen.len(), FILES * LINES);
    assert!(seen.values().all(|&n| n == NUM_EPOCHS));
    // The readers took whole files from the shared queue: each file of
    // each epoch went to exactly one of them.
    let per_reader: Vec<u64> = readers
        .iter()
        .map(Reader::num_work_units_completed)
        .collect();
    assert_eq!(per_reader.iter().sum::<u64>(), FILES as u64 * NUM_EPOCHS);
    // Batches mix examples of several files.
    assert!(files_per_batch.iter().any(|&n| n > 1));
    println!(
        "{} examples from {FILES} files × {NUM_EPOCHS} epochs; files read \
         per reader: {per_reader:?}",
        seen.values().sum::<u64>()
    );
    Ok(())
}
