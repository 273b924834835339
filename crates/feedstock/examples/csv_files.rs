//! Seed guide, "Reading from files" → "CSV files": two CSV files →
//! `string_input_producer` → `TextLineReader` → `decode_csv` → the four
//! feature columns stacked into one tensor, the fifth kept as the label.
//!
//! The filename queue runs for `num_epochs` epochs; when they are done
//! the reader reports OutOfRange, the clean end of input, and every line
//! has been read exactly `num_epochs` times. An empty field takes its
//! column's record default, as in TensorFlow.
//!
//! Run with `cargo run --example csv_files`.

use std::collections::BTreeMap;
use std::error::Error;
use std::time::Duration;

use feedstock::coord::{Coordinator, Pipeline};
use feedstock::decode::csv::{CsvDecoder, RecordDefault};
use feedstock::input::string_input_producer;
use feedstock::reader::{Reader, TextLineReader};
use feedstock::Tensor;

const NUM_EPOCHS: u64 = 3;

/// Runs the example; `cargo test` runs it too (tests/examples.rs).
pub fn main() -> Result<(), Box<dyn Error>> {
    let dir = tempfile::tempdir()?;
    let file0 = dir.path().join("file0.csv");
    let file1 = dir.path().join("file1.csv");
    // Five integer columns: four features and a label. The second line of
    // file1 has an empty third field, which takes the default.
    std::fs::write(&file0, "1,2,3,4,0\n5,6,7,8,1\n9,10,11,12,0\n")?;
    std::fs::write(&file1, "13,14,15,16,1\n17,18,,20,0\n")?;
    let files = [file0.to_str().unwrap(), file1.to_str().unwrap()];

    // The filename queue: both files, shuffled within each epoch.
    let mut pipeline = Pipeline::new();
    let filename_queue = string_input_producer(&mut pipeline, files)
        .num_epochs(NUM_EPOCHS)
        .seed(42)
        .build()?;
    let reader = Reader::new(TextLineReader::new());

    // Default values, in case of empty columns. They also fix each
    // column's dtype: here all five are int32 defaulting to 1.
    let record_defaults = vec![RecordDefault::i32(1); 5];
    let decoder = CsvDecoder::new(record_defaults)?;

    // Start filling the filename queue.
    let coord = Coordinator::new();
    let threads = pipeline.start(&coord)?;

    let mut seen: BTreeMap<Vec<i32>, u64> = BTreeMap::new();
    let end = loop {
        // One line per read; the key names the file and line.
        let record = match reader.read(&filename_queue) {
            Ok(record) => record,
            Err(e) => break e,
        };
        let columns = decoder.decode(&record.value, &record.key)?;
        let features = Tensor::stack(&columns[..4])?;
        let label = columns[4].scalar_value::<i32>()?;
        assert_eq!(features.dims(), &[4]);
        assert!(label == 0 || label == 1, "{}: label {label}", record.key);
        let mut row = features.into_vec::<i32>()?;
        row.push(label);
        *seen.entry(row).or_default() += 1;
    };
    // The epoch limit closed the filename queue; once it was drained the
    // reader reported the end of input.
    assert!(end.is_out_of_range(), "{end}");
    coord.request_stop();
    coord.join(threads, Duration::from_secs(10))?;

    let want: BTreeMap<Vec<i32>, u64> = [
        vec![1, 2, 3, 4, 0],
        vec![5, 6, 7, 8, 1],
        vec![9, 10, 11, 12, 0],
        vec![13, 14, 15, 16, 1],
        vec![17, 18, 1, 20, 0], // the empty field took its default, 1
    ]
    .into_iter()
    .map(|row| (row, NUM_EPOCHS))
    .collect();
    assert_eq!(seen, want, "every line exactly {NUM_EPOCHS} times");
    assert_eq!(reader.num_records_produced(), 5 * NUM_EPOCHS);
    assert_eq!(reader.num_work_units_completed(), 2 * NUM_EPOCHS);
    println!(
        "read {} lines: 5 distinct, each {NUM_EPOCHS} times",
        reader.num_records_produced()
    );
    Ok(())
}
