//! Seed guide, "Multiple input pipelines": a pipeline that can stop and
//! resume, neither repeating nor skipping a record.
//!
//! The seed's evaluation process restores checkpoints of the training
//! process; for the input side of such a checkpoint, a reader's position
//! is saved with `Reader::serialize_state` (the file in progress, the
//! offset in it, the counters) and restored with `restore_state`, which
//! reopens that file where it stopped. The files not yet started are
//! given to the new filename queue.
//!
//! Run with `cargo run --example multiple_pipelines`.

use std::error::Error;
use std::path::Path;
use std::time::Duration;

use feedstock::coord::{Coordinator, Pipeline};
use feedstock::input::string_input_producer;
use feedstock::io::tfrecord::WriterBuilder;
use feedstock::reader::{Reader, TfRecordReader};

const JOIN: Duration = Duration::from_secs(10);
const FILES: usize = 3;
const RECORDS_PER_FILE: usize = 10;

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

/// Runs the example; `cargo test` runs it too (tests/examples.rs).
pub fn main() -> Result<(), Box<dyn Error>> {
    let dir = tempfile::tempdir()?;
    let files = write_files(dir.path())?;

    // The first run stops in the middle of the second file and saves the
    // reader's position.
    let reader = Reader::new(TfRecordReader::new());
    let first = read_in_order(&reader, &files, 13)?;
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
