//! Corrupt records: a policy, not a crash.
//!
//! Two TFRecord shards are written, then damaged the way disks and
//! interrupted copies damage files: a flipped bit in one record's data, a
//! flipped bit in another's length field, and garbage written into the
//! middle of the second shard. A pipeline reads them with the skip
//! policy: each damaged region is skipped, reading resynchronises at the
//! next intact frame, and every skip is counted per file with its offset
//! and length in the pipeline's statistics and in the TensorBoard
//! scalars. The default policy, for comparison, stops at the first
//! damage; a budget too small for the damage stops the run with an error
//! that lists the offsets.
//!
//! Run with `cargo run --example corrupt_records`.

use std::error::Error;
use std::time::Duration;

use feedstock::coord::{Coordinator, Pipeline};
use feedstock::input::{batch, string_input_producer};
use feedstock::io::tfrecord::{
    framed_len, CorruptRecords, SkipBudget, WriterBuilder,
};
use feedstock::reader::{Reader, TfRecordReader};
use feedstock::summary::Monitor;
use feedstock::{DType, Kind, Tensor};

const PER_SHARD: u64 = 10;

/// Record `i`: 20 bytes that say which record it is.
fn record(i: u64) -> Vec<u8> {
    format!("record {i:013}").into_bytes()
}

/// What one run gave: the numbers read (or the error that stopped the
/// run), the pipeline and a monitor of it.
type Run = (Result<Vec<u64>, feedstock::Error>, Pipeline, Monitor);

/// Reads every record of `files` with `policy` through a pipeline;
/// returns the numbers read (or the error that stopped the run) and the
/// pipeline, for its statistics.
fn read_all(
    files: &[String],
    policy: CorruptRecords,
) -> Result<Run, Box<dyn Error>> {
    let mut pipeline = Pipeline::new();
    let queue = string_input_producer(&mut pipeline, files.to_vec())
        .num_epochs(1)
        .shuffle(false)
        .build()?;
    // The reader counts its skips in the pipeline's log.
    let reader = Reader::new(
        TfRecordReader::builder()
            .corrupt_records(policy)
            .skip_log(pipeline.skip_log())
            .build(),
    );
    let batches = batch(&mut pipeline, move || {
        let r = reader.read(&queue)?;
        let n: i64 = std::str::from_utf8(&r.value[7..])
            .ok()
            .and_then(|s| s.parse().ok())
            .expect("an intact record");
        Ok(vec![Tensor::scalar(n).into()])
    })
    .dtypes([DType::I64])
    .batch_size(4)
    .allow_smaller_final_batch(true)
    .build()?;
    let monitor = Monitor::new().watch_pipeline(&pipeline);
    let coord = Coordinator::new();
    let threads = pipeline.start(&coord)?;
    let mut got = Vec::new();
    let mut failure = None;
    for b in batches.iter() {
        match b {
            Ok(b) => got.extend(
                b.components()[0]
                    .dense()?
                    .as_slice::<i64>()?
                    .iter()
                    .map(|&n| n as u64),
            ),
            Err(e) => {
                failure = Some(e);
                break;
            }
        }
    }
    coord.request_stop();
    let joined = coord.join(threads, Duration::from_secs(10));
    let outcome = match (failure, joined) {
        (Some(e), _) | (None, Err(e)) => Err(e),
        (None, Ok(())) => Ok(got),
    };
    Ok((outcome, pipeline, monitor))
}

/// Runs the example; `cargo test` runs it too (tests/examples.rs).
pub fn main() -> Result<(), Box<dyn Error>> {
    let dir = tempfile::tempdir()?;
    let mut files = Vec::new();
    for shard in 0..2 {
        let path = dir.path().join(format!("shard-{shard}.tfrecord"));
        let mut w = WriterBuilder::new().create(&path)?;
        for i in 0..PER_SHARD {
            w.write_record(&record(shard * PER_SHARD + i))?;
        }
        w.finish()?;
        files.push(path.to_str().unwrap().to_owned());
    }
    // Every record is 20 bytes, so 36 bytes framed.
    let frame = framed_len(20);

    // Damage: shard 0 gets a flipped data bit in record 3 and a flipped
    // length bit in record 7; shard 1 gets 100 bytes of garbage before
    // its record 5 (number 15).
    let mut bytes = std::fs::read(&files[0])?;
    bytes[(3 * frame + 12 + 4) as usize] ^= 0x01;
    bytes[(7 * frame + 1) as usize] ^= 0x20;
    std::fs::write(&files[0], &bytes)?;
    let mut bytes = std::fs::read(&files[1])?;
    let at = (5 * frame) as usize;
    bytes.splice(at..at, std::iter::repeat_n(0xd7, 100));
    std::fs::write(&files[1], &bytes)?;

    // The default policy: the first damage stops the run, naming the
    // file and the offset.
    let (strict, _, _) = read_all(&files, CorruptRecords::Fail)?;
    let err = strict.unwrap_err();
    assert_eq!(err.kind(), Kind::DataLoss);
    assert_eq!(err.file(), Some(files[0].as_str()));
    assert_eq!(err.offset(), Some(3 * frame));
    println!("strict: {err}");

    // The skip policy, within a budget: at most 2 regions per file and
    // 5 per run, at most a quarter of any file's records.
    let budget = SkipBudget::new()
        .max_per_file(2)
        .max_per_run(5)
        .max_fraction(0.25);
    let (read, pipeline, monitor) =
        read_all(&files, CorruptRecords::Skip(budget))?;
    let read = read?;
    // Every intact record, exactly once, in order: all but 3 and 7.
    let want: Vec<u64> =
        (0..2 * PER_SHARD).filter(|&i| i != 3 && i != 7).collect();
    assert_eq!(read, want);

    // Each skip, per file, with its offset and length.
    let skips = pipeline.stats().skips;
    assert_eq!(skips.skipped, 3);
    let shard0 = skips.file(&files[0]).unwrap();
    let regions: Vec<(u64, u64)> =
        shard0.regions.iter().map(|r| (r.offset, r.len)).collect();
    assert_eq!(regions, [(3 * frame, frame), (7 * frame, frame)]);
    let shard1 = skips.file(&files[1]).unwrap();
    assert_eq!(shard1.regions[0].offset, 5 * frame);
    assert_eq!(shard1.regions[0].len, 100);
    for f in &skips.files {
        for r in &f.regions {
            println!("skipped {}:{} ({} bytes)", f.file, r.offset, r.len);
        }
    }

    // The same counts as TensorBoard scalars.
    let scalars = monitor.scalars();
    let value =
        |tag: &str| scalars.iter().find(|s| s.tag == tag).map(|s| s.value);
    assert_eq!(value("corrupt_records/skipped"), Some(3.0));
    let tag = format!("corrupt_records/{}/skipped_bytes", files[1]);
    assert_eq!(value(&tag), Some(100.0));

    // A budget too small for the damage: the run fails at the skip past
    // it, and the error lists the offsets skipped.
    let tight = CorruptRecords::Skip(SkipBudget::new().max_per_file(1));
    let (failed, _, _) = read_all(&files, tight)?;
    let err = failed.unwrap_err();
    assert_eq!(err.kind(), Kind::DataLoss);
    assert!(err.message().contains("max_per_file = 1"), "{err}");
    assert!(err.message().contains(&format!("{} (36 bytes)", 3 * frame)));
    println!("over budget: {err}");
    Ok(())
}
