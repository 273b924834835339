//! Seed guide, "Reading from files" and "Batching", as a graph: the
//! seed's `input_pipeline` written TensorFlow 1 style with
//! [`feedstock_tf1`], the layer the Python package's
//! `feedstock.compat.v1` maps `tf.*` calls onto.
//!
//! The graph names the whole pipeline (`match_filenames_once` →
//! `string_input_producer` → `TFRecordReader.read` →
//! `parse_single_example` → `decode_raw` / `cast` / scale →
//! `shuffle_batch`); the session runs it natively, in feedstock's
//! threads, and `run` hands back one batch at a time until OutOfRange.
//!
//! Run with `cargo run --example plan`.

use feedstock_tf1::kernels::math::BinaryOp;
use feedstock_tf1::op::{Binary, Cast, DecodeRaw, Parse, Reshape};
use std::collections::BTreeMap;
use std::error::Error;
use std::time::Duration;

use feedstock::coord::Coordinator;
use feedstock::decode::example::FeatureSpec;
use feedstock::io::tfrecord::WriterBuilder;
use feedstock::io::Compression;
use feedstock::proto::ExampleBuilder;
use feedstock::{DType, Kind};
use feedstock_tf1::{
    BatchOptions, Graph, ProducerOptions, ReaderKind, Session, ShuffleOptions,
};
use prost::Message;

const SIDE: usize = 4;
const NUM_EXAMPLES: usize = 30;
const NUM_EPOCHS: u64 = 2;

/// Runs the example; `cargo test` runs it too (tests/examples.rs).
pub fn main() -> Result<(), Box<dyn Error>> {
    let dir = tempfile::tempdir()?;
    for shard in 0..2 {
        let path = dir.path().join(format!("train-{shard}.tfrecord"));
        let mut writer = WriterBuilder::new().create(path)?;
        for i in (shard..NUM_EXAMPLES).step_by(2) {
            let pixels = vec![i as u8; SIDE * SIDE];
            let example = ExampleBuilder::new()
                .int64("label", [i as i64])
                .bytes("image_raw", pixels)
                .build();
            writer.write_record(&example.encode_to_vec())?;
        }
        writer.finish()?;
    }

    // The graph: one builder call per line of the guide's Python.
    let g = Graph::new();
    let pattern = dir.path().join("train-*.tfrecord");
    let files = g.match_filenames_once(pattern.to_str().unwrap())?;
    let filename_queue = g.string_input_producer(
        files,
        ProducerOptions {
            num_epochs: Some(NUM_EPOCHS),
            ..Default::default()
        },
    )?;
    let reader = g.reader(ReaderKind::tf_record(Compression::None))?;
    let (_key, serialized) = g.read(reader, filename_queue)?;
    let spec = FeatureSpec::builder()
        .fixed("image_raw", DType::String, [])
        .fixed("label", DType::I64, [])
        .build()?;
    let features = g.op(
        Parse {
            spec,
            batched: false,
        },
        &[serialized],
    )?;
    let image = g.op1(
        DecodeRaw {
            out_type: DType::U8,
            little_endian: true,
        },
        &[features[0]],
    )?;
    let image = g.op1(
        Reshape {
            shape: Some(vec![(SIDE * SIDE) as i64]),
        },
        &[image],
    )?;
    let image = g.op1(Cast { dtype: DType::F32 }, &[image])?;
    let image = g.op1(
        Binary { op: BinaryOp::Sub },
        &[
            g.op1(
                Binary { op: BinaryOp::Mul },
                &[image, g.scalar(1.0 / 255.0, DType::F32)?],
            )?,
            g.scalar(0.5, DType::F32)?,
        ],
    )?;
    let batch = g.batch(
        &[vec![image, features[1]]],
        None,
        BatchOptions {
            batch_size: 8,
            capacity: 10 + 3 * 8,
            allow_smaller_final_batch: true,
            shuffle: Some(ShuffleOptions {
                min_after_dequeue: 10,
                seed: Some(7),
            }),
            ..Default::default()
        },
    )?;
    println!("image batch shape: {:?}", g.shape(batch[0]));

    // The guide's session pattern.
    let sess = Session::new(&g);
    let coord = Coordinator::new();
    let threads = sess.start_queue_runners(&coord)?;
    let mut counts: BTreeMap<i64, u64> = BTreeMap::new();
    let end = loop {
        match sess.run(&batch, &[]) {
            Ok(values) => {
                let pixels = values[0].dense()?.as_slice::<f32>()?;
                let labels = values[1].dense()?.as_slice::<i64>()?;
                for (row, label) in labels.iter().enumerate() {
                    let want = f32::from(*label as u8) / 255.0 - 0.5;
                    assert!((pixels[row * SIDE * SIDE] - want).abs() < 1e-6);
                    *counts.entry(*label).or_default() += 1;
                }
            }
            Err(e) => break e,
        }
    };
    assert_eq!(end.kind(), Kind::OutOfRange, "{end}");
    coord.request_stop();
    coord.join(threads, Duration::from_secs(10))?;

    assert_eq!(counts.len(), NUM_EXAMPLES);
    assert!(counts.values().all(|&c| c == NUM_EPOCHS));
    println!(
        "{} examples, each seen {NUM_EPOCHS} times; done training -- \
         epoch limit reached",
        counts.len()
    );
    Ok(())
}
