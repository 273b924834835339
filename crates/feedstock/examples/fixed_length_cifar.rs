//! Seed guide, "Reading from files" → "Fixed length records": CIFAR-10's
//! binary format read with a `FixedLengthRecordReader` and decoded with
//! `decode_raw`, then sliced and reshaped as `cifar10_input.py` does.
//!
//! Each CIFAR-10 record is 1 label byte followed by 3072 pixel bytes, the
//! image stored depth-major (all red, then all green, then all blue, each
//! 32×32 row by row). The example writes two small files in that format,
//! then: record → `decode_raw` (uint8) → label = byte 0 as int32, image =
//! bytes 1.. reshaped to `[3, 32, 32]` → transposed to `[32, 32, 3]`
//! (height, width, depth) → cast to float32.
//!
//! Then the batched form, the fast one: `Reader::read_batch` takes up to
//! 1024 records of a file at once and `FixedImageDecoder` decodes them in
//! one pass into `[n]` labels and `[n, 32, 32, 3]` images.
//!
//! Run with `cargo run --example fixed_length_cifar`.

use std::error::Error;
use std::path::Path;
use std::time::Duration;

use feedstock::coord::{Coordinator, Pipeline};
use feedstock::decode::fixed_image::FixedImageDecoder;
use feedstock::decode::raw::{decode_raw, ByteOrder};
use feedstock::input::string_input_producer;
use feedstock::reader::{FixedLengthRecordReader, Reader};
use feedstock::transform::transpose;
use feedstock::DType;

const LABEL_BYTES: usize = 1;
const HEIGHT: usize = 32;
const WIDTH: usize = 32;
const DEPTH: usize = 3;
const IMAGE_BYTES: usize = HEIGHT * WIDTH * DEPTH;
const RECORD_BYTES: usize = LABEL_BYTES + IMAGE_BYTES;
const RECORDS_PER_FILE: usize = 5;

/// The pixel our fake data set stores at depth `c`, row `y`, column `x`
/// of an image labelled `label`: any function would do, as long as the
/// check below can recompute it.
fn pixel(label: usize, c: usize, y: usize, x: usize) -> u8 {
    (label * 16 + c * 8 + y + x) as u8
}

/// Writes `labels.len()` CIFAR-10 records to `path`.
fn write_cifar_file(path: &Path, labels: &[usize]) -> std::io::Result<()> {
    let mut bytes = Vec::with_capacity(labels.len() * RECORD_BYTES);
    for &label in labels {
        bytes.push(label as u8);
        for c in 0..DEPTH {
            for y in 0..HEIGHT {
                for x in 0..WIDTH {
                    bytes.push(pixel(label, c, y, x));
                }
            }
        }
    }
    std::fs::write(path, bytes)
}

/// Runs the example; `cargo test` runs it too (tests/examples.rs).
pub fn main() -> Result<(), Box<dyn Error>> {
    let dir = tempfile::tempdir()?;
    let mut filenames = Vec::new();
    for i in 0..2 {
        let path = dir.path().join(format!("data_batch_{}.bin", i + 1));
        let labels: Vec<usize> = (0..RECORDS_PER_FILE)
            .map(|r| (i * RECORDS_PER_FILE + r) % 10)
            .collect();
        write_cifar_file(&path, &labels)?;
        filenames.push(path.to_str().unwrap().to_owned());
    }

    let mut pipeline = Pipeline::new();
    let filename_queue =
        string_input_producer(&mut pipeline, filenames.clone())
            .num_epochs(1)
            .build()?;
    // No header or footer in CIFAR-10 files: records of 3073 bytes.
    let reader = Reader::new(
        FixedLengthRecordReader::builder(RECORD_BYTES as u64).build()?,
    );
    let coord = Coordinator::new();
    let threads = pipeline.start(&coord)?;

    let mut labels = Vec::new();
    let end = loop {
        let record = match reader.read(&filename_queue) {
            Ok(record) => record,
            Err(e) => break e,
        };
        // The record as a vector of 3073 uint8s.
        let raw =
            decode_raw(&record.value, DType::U8, ByteOrder::LittleEndian)?;
        assert_eq!(raw.dims(), &[RECORD_BYTES]);

        // The first byte is the label, which we convert to int32.
        let label = raw.slice(0, LABEL_BYTES)?.cast(DType::I32)?;
        let label = label.reshape([])?.scalar_value::<i32>()?;

        // The rest is the image: [depth, height, width] in the file,
        // transposed to [height, width, depth], then made float32.
        let depth_major = raw
            .slice(LABEL_BYTES, RECORD_BYTES)?
            .reshape([DEPTH, HEIGHT, WIDTH])?;
        let image = transpose(&depth_major, &[1, 2, 0])?.cast(DType::F32)?;
        assert_eq!(image.dims(), &[HEIGHT, WIDTH, DEPTH]);

        // Every pixel landed where the format says it belongs.
        let values = image.as_slice::<f32>()?;
        for y in 0..HEIGHT {
            for x in 0..WIDTH {
                for c in 0..DEPTH {
                    let got = values[(y * WIDTH + x) * DEPTH + c];
                    let want = pixel(label as usize, c, y, x);
                    let key = &record.key;
                    assert_eq!(got, f32::from(want), "{key} ({y},{x},{c})");
                }
            }
        }
        labels.push(label);
    };
    assert!(end.is_out_of_range(), "{end}");
    coord.request_stop();
    coord.join(threads, Duration::from_secs(10))?;

    // One epoch: each of the ten records once (files in shuffled order).
    labels.sort_unstable();
    assert_eq!(labels, (0..10).collect::<Vec<i32>>());
    assert_eq!(reader.num_work_units_completed(), 2);

    // The batched form: a batch of records per call, decoded in one pass.
    let mut pipeline = Pipeline::new();
    let filename_queue = string_input_producer(&mut pipeline, filenames)
        .num_epochs(1)
        .build()?;
    let reader = Reader::new(
        FixedLengthRecordReader::builder(RECORD_BYTES as u64).build()?,
    );
    let decoder = FixedImageDecoder::cifar10();
    let coord = Coordinator::new();
    let threads = pipeline.start(&coord)?;
    let mut batched_labels = Vec::new();
    let end = loop {
        // Up to 1024 records, all of one file (here: the 5 of a file).
        let records = match reader.read_batch(&filename_queue, 1024) {
            Ok(records) => records,
            Err(e) => break e,
        };
        // Keys are built only if a record is bad, to name it.
        let out = records.decode(|r| decoder.decode_batch(r))?;
        assert_eq!(out.images.dims(), &[records.len(), HEIGHT, WIDTH, DEPTH]);
        let pixels = out.images.as_slice::<u8>()?;
        for (i, &label) in out.labels.as_slice::<i32>()?.iter().enumerate() {
            let image = &pixels[i * IMAGE_BYTES..(i + 1) * IMAGE_BYTES];
            for y in 0..HEIGHT {
                for x in 0..WIDTH {
                    for c in 0..DEPTH {
                        let got = image[(y * WIDTH + x) * DEPTH + c];
                        let want = pixel(label as usize, c, y, x);
                        assert_eq!(
                            got,
                            want,
                            "{} ({y},{x},{c})",
                            records.key(i)
                        );
                    }
                }
            }
            batched_labels.push(label);
        }
    };
    assert!(end.is_out_of_range(), "{end}");
    coord.request_stop();
    coord.join(threads, Duration::from_secs(10))?;
    batched_labels.sort_unstable();
    assert_eq!(batched_labels, labels);
    println!(
        "decoded {} CIFAR-10 records into [32, 32, 3] float32 images",
        labels.len()
    );
    Ok(())
}
