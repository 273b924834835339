//! Seed guide, "Multiple input pipelines": training and evaluation
//! pipelines side by side in one process, and a pipeline that stops and
//! resumes without repeating or skipping a record.
//!
//! 1. Train and evaluate, each pipeline with its own coordinator: the
//!    training loop takes shuffled batches for `NUM_EPOCHS` epochs and,
//!    every few steps, runs a fresh evaluation pipeline over the held-out
//!    file to its end. Neither disturbs the other: every evaluation sees
//!    the whole held-out set once, and training sees every training
//!    record exactly `NUM_EPOCHS` times.
//! 2. Both pipelines sharing one coordinator: one `request_stop` ends
//!    both, and one `join` waits for all their threads.
//! 3. Stop and resume: the input side of the seed's checkpoints. A
//!    reader's position is saved with `Reader::serialize_state` (the file
//!    in progress, the offset in it, the counters) and restored with
//!    `restore_state`, which reopens that file where it stopped; the
//!    files not yet started go to the new filename queue.
//!
//! Run with `cargo run --example multiple_pipelines`.

use std::collections::BTreeMap;
use std::error::Error;
use std::path::Path;
use std::time::Duration;

use bytes::Bytes;
use feedstock::coord::{Coordinator, Pipeline};
use feedstock::input::{
    batch, shuffle_batch, string_input_producer, Batch, BatchSource,
};
use feedstock::io::tfrecord::WriterBuilder;
use feedstock::queue::QueueSpec;
use feedstock::reader::{Reader, TfRecordReader};
use feedstock::Tensor;

const JOIN: Duration = Duration::from_secs(10);
const FILES: usize = 3;
const RECORDS_PER_FILE: usize = 10;
const NUM_EPOCHS: u64 = 4;
const BATCH_SIZE: usize = 4;
const EVAL_EVERY: u64 = 5;

/// The records of `files`, batched: shuffled for training (`Some(seed)`),
/// in order and with a smaller last batch for evaluation. `num_epochs`
/// `None` means for ever.
fn input_pipeline(
    pipeline: &mut Pipeline,
    files: &[String],
    num_epochs: Option<u64>,
    shuffle_seed: Option<u64>,
) -> feedstock::Result<BatchSource> {
    let mut producer = string_input_producer(pipeline, files.to_vec());
    if let Some(n) = num_epochs {
        producer.num_epochs(n);
    }
    let filename_queue = producer.shuffle(shuffle_seed.is_some()).build()?;
    let reader = Reader::new(TfRecordReader::new());
    let read = move || {
        let record = reader.read(&filename_queue)?;
        Ok(vec![Tensor::string(record.value).into()])
    };
    match shuffle_seed {
        Some(seed) => shuffle_batch(pipeline, read)
            .spec(QueueSpec::scalar_string())
            .batch_size(BATCH_SIZE)
            .capacity(8 + 3 * BATCH_SIZE)
            .min_after_dequeue(8)
            .seed(seed)
            .name("train")
            .build(),
        None => batch(pipeline, read)
            .spec(QueueSpec::scalar_string())
            .batch_size(BATCH_SIZE)
            .allow_smaller_final_batch(true)
            .name("eval")
            .build(),
    }
}

/// The records of one batch, as strings.
fn records(batch: &Batch) -> feedstock::Result<Vec<String>> {
    let values = batch.components()[0].dense()?.as_slice::<Bytes>()?;
    Ok(values
        .iter()
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .collect())
}

/// One evaluation: a fresh pipeline with its own coordinator, run over
/// the held-out files to the end. Returns the records seen.
fn evaluate(eval_files: &[String]) -> Result<Vec<String>, Box<dyn Error>> {
    let mut pipeline = Pipeline::new();
    let batches = input_pipeline(&mut pipeline, eval_files, Some(1), None)?;
    let coord = Coordinator::new();
    batches.attach(&coord);
    let threads = pipeline.start(&coord)?;
    let mut seen = Vec::new();
    for batch in batches.iter() {
        seen.extend(records(&batch?)?);
    }
    coord.request_stop();
    coord.join(threads, JOIN)?;
    Ok(seen)
}

/// Part 1: training with periodic evaluation, one coordinator each.
fn train_and_evaluate(
    train_files: &[String],
    eval_files: &[String],
) -> Result<(), Box<dyn Error>> {
    let mut pipeline = Pipeline::new();
    let train =
        input_pipeline(&mut pipeline, train_files, Some(NUM_EPOCHS), Some(1))?;
    let coord = Coordinator::new();
    train.attach(&coord);
    let threads = pipeline.start(&coord)?;

    let eval_set: Vec<String> =
        (0..RECORDS_PER_FILE).map(|r| format!("f2-r{r}")).collect();
    let mut trained: BTreeMap<String, u64> = BTreeMap::new();
    let (mut steps, mut evaluations) = (0, 0);
    for batch in train.iter() {
        for record in records(&batch?)? {
            *trained.entry(record).or_default() += 1;
        }
        steps += 1;
        if steps % EVAL_EVERY == 0 {
            // The whole held-out set, once, in order, mid-training.
            assert_eq!(evaluate(eval_files)?, eval_set);
            evaluations += 1;
        }
    }
    coord.request_stop();
    coord.join(threads, JOIN)?;

    let per_epoch = (train_files.len() * RECORDS_PER_FILE) as u64;
    assert_eq!(steps, per_epoch * NUM_EPOCHS / BATCH_SIZE as u64);
    assert_eq!(evaluations, steps / EVAL_EVERY);
    assert_eq!(trained.len() as u64, per_epoch);
    assert!(
        trained.keys().all(|r| !r.starts_with("f2-")),
        "no eval data"
    );
    assert!(trained.values().all(|&n| n == NUM_EPOCHS));
    println!(
        "trained {steps} steps over {NUM_EPOCHS} epochs, evaluated \
         {evaluations} times on the held-out file"
    );
    Ok(())
}

/// Part 2: both pipelines on one coordinator, both reading for ever until
/// one stop request ends them.
fn shared_coordinator(
    train_files: &[String],
    eval_files: &[String],
) -> Result<(), Box<dyn Error>> {
    let (mut train_pipeline, mut eval_pipeline) =
        (Pipeline::new(), Pipeline::new());
    let train =
        input_pipeline(&mut train_pipeline, train_files, None, Some(2))?;
    let eval = input_pipeline(&mut eval_pipeline, eval_files, None, None)?;
    let coord = Coordinator::new();
    let mut threads = train_pipeline.start(&coord)?;
    threads.extend(eval_pipeline.start(&coord)?);
    for step in 1..=20 {
        let batch = train.next_batch()?;
        assert_eq!(batch.len(), BATCH_SIZE);
        if step % EVAL_EVERY == 0 {
            assert_eq!(eval.next_batch()?.len(), BATCH_SIZE);
        }
    }
    // One stop closes every queue of both pipelines and ends their threads.
    coord.request_stop();
    coord.join(threads, JOIN)?;
    assert!(train.stats().queue.closed && eval.stats().queue.closed);
    println!("one coordinator stopped both pipelines");
    Ok(())
}

/// Writes `FILES` TFRecord files of `RECORDS_PER_FILE` records named
/// `f{file}-r{record}`; returns their names.
fn write_files(dir: &Path) -> Result<Vec<String>, Box<dyn Error>> {
    let mut names = Vec::new();
    for f in 0..FILES {
        let path = dir.join(format!("part-{f}.tfrecord"));
        let mut writer = WriterBuilder::new().create(&path)?;
        for r in 0..RECORDS_PER_FILE {
            writer.write_record(format!("f{f}-r{r}").as_bytes())?;
        }
        writer.finish()?;
        names.push(path.to_str().unwrap().to_owned());
    }
    Ok(names)
}

/// Reads up to `limit` records from `files`, in order, with `reader`;
/// stops the pipeline and returns the records' values.
fn read_in_order(
    reader: &Reader,
    files: &[String],
    limit: usize,
) -> Result<Vec<String>, Box<dyn Error>> {
    let mut pipeline = Pipeline::new();
    let filename_queue = string_input_producer(&mut pipeline, files.to_vec())
        .num_epochs(1)
        .shuffle(false)
        .build()?;
    let coord = Coordinator::new();
    let threads = pipeline.start(&coord)?;
    let mut got = Vec::new();
    while got.len() < limit {
        match reader.read(&filename_queue) {
            Ok(record) => got.push(String::from_utf8(record.value.to_vec())?),
            Err(e) if e.is_out_of_range() => break,
            Err(e) => return Err(e.into()),
        }
    }
    coord.request_stop();
    coord.join(threads, JOIN)?;
    Ok(got)
}

/// Part 3: stop in the middle of a file, save the reader's position, and
/// resume in a new reader.
fn stop_and_resume(files: &[String]) -> Result<(), Box<dyn Error>> {
    // The first run stops in the middle of the second file and saves the
    // reader's position.
    let reader = Reader::new(TfRecordReader::new());
    let first = read_in_order(&reader, files, 13)?;
    let state = reader.serialize_state()?;
    let started = reader.num_work_units_completed() as usize
        + usize::from(reader.current_work().is_some());
    assert_eq!(reader.current_work().as_deref(), Some(files[1].as_str()));
    drop(reader);

    // The second run — a new reader, as in a new process — restores the
    // position and reads the rest: the file in progress from where it
    // stopped, then the files not yet started.
    let resumed = Reader::new(TfRecordReader::new());
    resumed.restore_state(&state)?;
    let second = read_in_order(&resumed, &files[started..], usize::MAX)?;

    let all: Vec<String> = (0..FILES)
        .flat_map(|f| (0..RECORDS_PER_FILE).map(move |r| format!("f{f}-r{r}")))
        .collect();
    assert_eq!(first.len(), 13);
    assert_eq!(
        [first.clone(), second.clone()].concat(),
        all,
        "nothing repeated, nothing skipped"
    );
    // The counters carried over too.
    assert_eq!(resumed.num_records_produced(), all.len() as u64);
    assert_eq!(resumed.num_work_units_completed(), FILES as u64);
    println!(
        "stopped after {} records at {:?}, resumed and read the other {}",
        first.len(),
        second.first(),
        second.len()
    );
    Ok(())
}

/// Runs the example; `cargo test` runs it too (tests/examples.rs).
pub fn main() -> Result<(), Box<dyn Error>> {
    let dir = tempfile::tempdir()?;
    let files = write_files(dir.path())?;
    // Two files to train on, the third held out for evaluation.
    let (train_files, eval_files) = files.split_at(2);
    train_and_evaluate(train_files, eval_files)?;
    shared_coordinator(train_files, eval_files)?;
    stop_and_resume(&files)
}
