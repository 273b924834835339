//! Seed guide, "Reading from files" → "Standard TensorFlow format": the
//! seed's `convert_to_records` and `fully_connected_reader`, in Rust.
//!
//! First, writing: each image and its label go into a `tf.train.Example`
//! (built with [`ExampleBuilder`]) that is serialized and written to a
//! TFRecords file with [`io::tfrecord::Writer`](WriterBuilder), sharded
//! over two files. Then, reading: `match_filenames_once` →
//! `string_input_producer` → `TfRecordReader` → `parse_single_example`,
//! the `image_raw` bytes → `decode_raw` → `[8, 8]` float32 scaled to
//! `[-0.5, 0.5]`, and the `label` as an int64.
//!
//! A decoding error names the record's key, so a bad record can be found.
//!
//! Run with `cargo run --example tfrecords`.

use std::error::Error;
use std::time::Duration;

use bytes::Bytes;
use feedstock::coord::{Coordinator, Pipeline};
use feedstock::decode::example::{parse_single_example, FeatureSpec};
use feedstock::decode::raw::{decode_raw, ByteOrder};
use feedstock::input::{match_filenames_once, string_input_producer};
use feedstock::io::tfrecord::WriterBuilder;
use feedstock::proto::ExampleBuilder;
use feedstock::reader::{Reader, TfRecordReader};
use feedstock::{DType, Kind};
use prost::Message;

const SIDE: usize = 8;
const NUM_EXAMPLES: usize = 20;
const NUM_SHARDS: usize = 2;

/// The pixels of our fake image number `i`.
fn image(i: usize) -> Vec<u8> {
    (0..SIDE * SIDE)
        .map(|p| ((i * 7 + p) % 256) as u8)
        .collect()
}

/// Runs the example; `cargo test` runs it too (tests/examples.rs).
pub fn main() -> Result<(), Box<dyn Error>> {
    let dir = tempfile::tempdir()?;

    // convert_to_records: one Example per image, in NUM_SHARDS files.
    for shard in 0..NUM_SHARDS {
        let name = format!("train-{shard:05}-of-{NUM_SHARDS:05}.tfrecord");
        let mut writer = WriterBuilder::new().create(dir.path().join(name))?;
        for i in (shard..NUM_EXAMPLES).step_by(NUM_SHARDS) {
            let example = ExampleBuilder::new()
                .int64("height", [SIDE as i64])
                .int64("width", [SIDE as i64])
                .int64("depth", [1])
                .int64("label", [i as i64])
                .bytes("image_raw", image(i))
                .build();
            writer.write_record(&example.encode_to_vec())?;
        }
        writer.finish()?;
    }

    // fully_connected_reader: the files → a filename queue → Examples.
    let pattern = dir.path().join("train-*.tfrecord");
    let filenames = match_filenames_once(pattern.to_str().unwrap())?;
    assert_eq!(filenames.len(), NUM_SHARDS);
    let mut pipeline = Pipeline::new();
    let filename_queue = string_input_producer(&mut pipeline, filenames)
        .num_epochs(1)
        .build()?;
    let reader = Reader::new(TfRecordReader::new());
    let features = FeatureSpec::builder()
        .fixed("image_raw", DType::String, [])
        .fixed("label", DType::I64, [])
        .build()?;
    let coord = Coordinator::new();
    let threads = pipeline.start(&coord)?;

    let mut labels = Vec::new();
    let end = loop {
        let record = match reader.read(&filename_queue) {
            Ok(record) => record,
            Err(e) => break e,
        };
        let example =
            parse_single_example(&record.value, &features, &record.key)?;
        let label = example["label"].dense()?.scalar_value::<i64>()?;
        let raw = example["image_raw"].dense()?.scalar_value::<Bytes>()?;

        // Convert from [0, 255] to [-0.5, 0.5] floats.
        let mut pixels = decode_raw(&raw, DType::U8, ByteOrder::LittleEndian)?
            .reshape([SIDE, SIDE])?
            .cast(DType::F32)?;
        for v in pixels.as_mut_slice::<f32>()? {
            *v = *v / 255.0 - 0.5;
        }
        assert_eq!(pixels.dims(), &[SIDE, SIDE]);
        let want: Vec<f32> = image(label as usize)
            .iter()
            .map(|&b| f32::from(b) / 255.0 - 0.5)
            .collect();
        assert_eq!(pixels.as_slice::<f32>()?, &want[..], "{}", record.key);
        labels.push(label);
    };
    assert!(end.is_out_of_range(), "{end}");
    coord.request_stop();
    coord.join(threads, Duration::from_secs(10))?;

    labels.sort_unstable();
    let all: Vec<i64> = (0..NUM_EXAMPLES as i64).collect();
    assert_eq!(labels, all, "every Example read back exactly once");

    // A record without its label: the error says which record and which
    // feature, instead of a silent default.
    let unlabelled =
        ExampleBuilder::new().bytes("image_raw", image(0)).build();
    let err = parse_single_example(
        &Bytes::from(unlabelled.encode_to_vec()),
        &features,
        "extra.tfrecord:3",
    )
    .unwrap_err();
    assert_eq!(err.kind(), Kind::InvalidArgument);
    assert_eq!(err.key(), Some("extra.tfrecord:3"));
    assert_eq!(err.field(), Some("label"));
    println!(
        "read {} Examples back; a bad one gives: {err}",
        labels.len()
    );
    Ok(())
}
