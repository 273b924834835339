//! The front door, four ways in: the shortest correct programs for
//! TFRecord + parse + shuffle + batch, CSV, CIFAR-style fixed-length
//! records and arrays in memory. Each `*_program` function is the whole
//! program a user writes; `main` makes the files it reads and checks
//! what it delivers.
//!
//! Run with `cargo run --example front_door`.

use std::error::Error;

use feedstock::dataset::{
    Dataset, FixedLengthSource, Shuffle, TextLineSource,
};
use feedstock::decode::csv::{CsvDecoder, RecordDefault};
use feedstock::decode::example::FeatureSpec;
use feedstock::{DType, Tensor, Value};

type Res<T> = Result<T, Box<dyn Error>>;

/// TFRecord files of Examples → parse → shuffle → batch, two epochs.
fn tfrecord_program(pattern: &str) -> Res<usize> {
    let spec = FeatureSpec::builder()
        .fixed("pixels", DType::I64, [64])
        .fixed("label", DType::I64, [])
        .build()?;
    let mut examples = 0;
    for batch in Dataset::tfrecord(pattern)?
        .parse(spec)
        .shuffle(Shuffle::Buffer(1000))
        .batch(128)
        .epochs(2)
        .seed(7)
        .start()?
    {
        examples += batch?.len(); // batch.get("pixels"), batch.get("label")
    }
    Ok(examples)
}

/// CSV lines (the shipped digits: 64 pixels and a label per line).
fn csv_program(path: &str) -> Res<usize> {
    let mut defaults = vec![RecordDefault::f32(0.0); 64];
    defaults.push(RecordDefault::i32(0));
    let mut examples = 0;
    for batch in Dataset::text_lines(path, &TextLineSource::builder())?
        .decode_csv(CsvDecoder::new(defaults)?)
        .shuffle(Shuffle::Global)
        .batch(100)
        .start()?
    {
        examples += batch?.len(); // 65 components of [100]
    }
    Ok(examples)
}

/// CIFAR-10's binary format: 1 label byte + a 3×32×32 image per record.
fn cifar_program(pattern: &str) -> Res<usize> {
    let mut examples = 0;
    let cifar =
        Dataset::fixed_length(pattern, &FixedLengthSource::builder(3073))?
            .decode_raw(DType::U8)
            .map("cifar", |ex: Vec<Value>| {
                let raw = ex[0].dense()?;
                let label = raw.slice(0, 1)?.reshape(Vec::<usize>::new())?;
                let image = raw.slice(1, 3073)?.reshape([3, 32, 32])?;
                Ok(vec![Value::Dense(label), Value::Dense(image)])
            });
    for batch in cifar
        .names(["label", "image"])
        .shuffle(Shuffle::Buffer(1000))
        .batch(64)
        .start()?
    {
        examples += batch?.len();
    }
    Ok(examples)
}

/// Arrays already in memory, shuffled globally each epoch.
fn arrays_program(x: Tensor, y: Tensor) -> Res<usize> {
    let mut examples = 0;
    for batch in Dataset::arrays([("x", x), ("y", y)])?
        .shuffle(Shuffle::Global)
        .batch(32)
        .epochs(3)
        .start()?
    {
        examples += batch?.len();
    }
    Ok(examples)
}

/// Runs the example; `cargo test` runs it too (tests/examples.rs).
pub fn main() -> Res<()> {
    let dir = tempfile::tempdir()?;
    let digits =
        concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/digits.csv.gz");
    // The digits as TFRecord files of Examples, in two shards.
    let lines = std::io::read_to_string(flate2::read::GzDecoder::new(
        std::fs::File::open(digits)?,
    ))?;
    let mut writers = Vec::new();
    for shard in 0..2 {
        let f = std::fs::File::create(
            dir.path().join(format!("digits-{shard}.tfrecord")),
        )?;
        writers.push(feedstock::io::tfrecord::Writer::new(f));
    }
    for (i, line) in lines.lines().enumerate() {
        let v: Vec<i64> =
            line.split(',').map(str::parse).collect::<Result<_, _>>()?;
        let ex = feedstock::proto::Example::builder()
            .int64("pixels", v[..64].to_vec())
            .int64("label", [v[64]])
            .build();
        writers[i % 2].write_record(&prost::Message::encode_to_vec(&ex))?;
    }
    for w in writers {
        w.finish()?;
    }
    let pattern = dir.path().join("digits-*.tfrecord");
    assert_eq!(tfrecord_program(pattern.to_str().unwrap())?, 2 * 1797);
    assert_eq!(csv_program(digits)?, 1797);

    let cifar = dir.path().join("data_batch_1.bin");
    std::fs::write(
        &cifar,
        (0..100 * 3073).map(|i| (i % 251) as u8).collect::<Vec<_>>(),
    )?;
    assert_eq!(cifar_program(cifar.to_str().unwrap())?, 100);

    let x = Tensor::new([50, 4], vec![0.5f32; 200])?;
    let y = Tensor::new([50], (0..50i64).collect::<Vec<_>>())?;
    assert_eq!(arrays_program(x, y)?, 150);
    println!("front door: TFRecord, CSV, fixed-length and arrays all delivered every example");
    Ok(())
}
