// The cases of benches/pipeline.rs and benches/pipeline_mimalloc.rs.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use criterion::{criterion_main, Criterion, Throughput};
use feedstock::coord::{Coordinator, Pipeline};
use feedstock::dataset::{Dataset, Shuffle as DatasetShuffle};
use feedstock::io::fs::LocalFs;
use feedstock::io::index::RecordIndex;
use feedstock::decode::example::{
    parse_example, parse_single_example, FeatureSpec, Parsed,
};
use feedstock::input::{
    shuffle_batch, slice_input_producer, string_input_producer,
};
use feedstock::io::tfrecord::{ReaderBuilder, WriterBuilder};
use feedstock::proto::ExampleBuilder;
use feedstock::queue::FifoQueue;
use feedstock::reader::{Reader, TfRecordReader};
use feedstock::{DType, Result, Tensor, Value};
use prost::Message;

const PIXELS: usize = 784;
const BATCH: usize = 128;
const MIN_AFTER: usize = 2_000;
const EXAMPLES: usize = 40_000;
const FILES: usize = 4;

fn image(i: usize) -> Vec<u8> {
    (0..PIXELS).map(|p| (i * 7 + p) as u8).collect()
}

fn write_files(dir: &Path) -> Vec<String> {
    let per = EXAMPLES / FILES;
    (0..FILES)
        .map(|f| {
            let path = dir.join(format!("mnist-{f}.tfrecord"));
            let mut w = WriterBuilder::new().create(&path).unwrap();
            for r in 0..per {
                let i = f * per + r;
                let ex = ExampleBuilder::new()
                    .bytes("image_raw", image(i))
                    .int64("label", [(i % 10) as i64])
                    .build();
                w.write_record(&ex.encode_to_vec()).unwrap();
            }
            w.finish().unwrap();
            path.to_str().unwrap().to_owned()
        })
        .collect()
}

/// The features of the MNIST-like records.
fn mnist_spec() -> FeatureSpec {
    FeatureSpec::builder()
        .fixed("image_raw", DType::String, [])
        .fixed("label", DType::I64, [])
        .build()
        .unwrap()
}

/// Appends each image of a parsed batch to `pixels` as f32 in [0, 1].
fn normalize(parsed: &Parsed, pixels: &mut Vec<f32>) -> Result<Tensor> {
    let images = parsed.get("image_raw").unwrap().dense()?;
    for raw in images.as_slice::<Bytes>()? {
        pixels.extend(raw.iter().map(|&b| f32::from(b) / 255.0));
    }
    Ok(parsed.get("label").unwrap().dense()?.clone())
}

/// Parses one record with `parse_single_example` and normalizes its
/// image.
fn parse(
    spec: &FeatureSpec,
    key: &str,
    value: &Bytes,
) -> Result<(Vec<f32>, i64)> {
    let parsed = parse_single_example(value, spec, key)?;
    let mut img = Vec::with_capacity(PIXELS);
    let label = normalize(&parsed, &mut img)?.scalar_value::<i64>()?;
    Ok((img, label))
}

/// Runs the pipeline to its end and returns the examples delivered.
fn drain(
    pipeline: &mut Pipeline,
    batches: &feedstock::input::BatchSource,
) -> usize {
    let coord = Coordinator::new();
    let threads = pipeline.start(&coord).unwrap();
    let mut n = 0;
    for b in batches.iter() {
        n += b.unwrap().len();
    }
    coord.request_stop();
    coord.join(threads, Duration::from_secs(30)).unwrap();
    n
}

fn shuffle_settings(
    b: &mut feedstock::input::BatchBuilder<'_, feedstock::input::Shuffle>,
) {
    b.batch_size(BATCH)
        .num_threads(2)
        .capacity(MIN_AFTER + 3 * BATCH)
        .min_after_dequeue(MIN_AFTER)
        .allow_smaller_final_batch(true);
}

fn preloaded(c: &mut Criterion) {
    let images: Vec<u8> = (0..EXAMPLES).flat_map(image).collect();
    let images = Tensor::new([EXAMPLES, PIXELS], images).unwrap();
    let labels =
        Tensor::vector((0..EXAMPLES).map(|i| (i % 10) as i64).collect());
    let mut g = c.benchmark_group("preloaded");
    g.throughput(Throughput::Elements(EXAMPLES as u64));
    g.sample_size(10);
    g.bench_function("shuffle_batch_128_2_threads", |bench| {
        bench.iter(|| {
            let mut pipeline = Pipeline::new();
            let slices = slice_input_producer(
                &mut pipeline,
                vec![images.clone(), labels.clone()],
            )
            .num_epochs(1)
            .capacity(4096)
            .build()
            .unwrap();
            let mut b = shuffle_batch(&mut pipeline, move || {
                Ok(slices.dequeue()?.into_iter().map(Value::from).collect())
            });
            b.dtypes([DType::U8, DType::I64])
                .shapes([vec![Some(PIXELS)], vec![]]);
            shuffle_settings(&mut b);
            let batches = b.build().unwrap();
            assert_eq!(drain(&mut pipeline, &batches), EXAMPLES);
        })
    });
    g.finish();
}

fn on_disk(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let files = write_files(dir.path());
    let mut g = c.benchmark_group("tfrecord");
    g.throughput(Throughput::Elements(EXAMPLES as u64));
    g.sample_size(10);

    let spec = mnist_spec();
    g.bench_function("baseline_one_thread_no_queue", |bench| {
        bench.iter(|| {
            let mut n = 0;
            for f in &files {
                let mut r = ReaderBuilder::new().open(f).unwrap();
                while let Some(rec) = r.read_record().unwrap() {
                    let (img, label) = parse(&spec, f, &rec.value).unwrap();
                    n += usize::from(img.len() == PIXELS && label < 10);
                }
            }
            assert_eq!(n, EXAMPLES);
        })
    });

    let read = |files: Arc<FifoQueue>, reader: Reader| {
        let spec = mnist_spec();
        move || -> Result<Vec<Value>> {
            let rec = reader.read(&*files)?;
            let (img, label) = parse(&spec, &rec.key, &rec.value)?;
            Ok(vec![
                Tensor::vector(img).into(),
                Tensor::scalar(label).into(),
            ])
        }
    };
    g.bench_function("shuffle_batch_128_2_threads", |bench| {
        bench.iter(|| {
            let mut pipeline = Pipeline::new();
            let q = string_input_producer(&mut pipeline, files.clone())
                .num_epochs(1)
                .build()
                .unwrap();
            let reader = Reader::new(TfRecordReader::new());
            let mut b = shuffle_batch(&mut pipeline, read(q, reader));
            b.dtypes([DType::F32, DType::I64])
                .shapes([vec![Some(PIXELS)], vec![]]);
            shuffle_settings(&mut b);
            let batches = b.build().unwrap();
            assert_eq!(drain(&mut pipeline, &batches), EXAMPLES);
        })
    });

    // The same, moving 64 records per hand-off: read_batch + enqueue_many.
    g.bench_function("shuffle_batch_128_2_threads_enqueue_many_64", |bench| {
        bench.iter(|| {
            let mut pipeline = Pipeline::new();
            let q = string_input_producer(&mut pipeline, files.clone())
                .num_epochs(1)
                .build()
                .unwrap();
            let reader = Reader::new(TfRecordReader::new());
            let spec = mnist_spec();
            let mut b = shuffle_batch(&mut pipeline, move || {
                let recs = reader.read_batch(&*q, 64)?;
                let parsed = recs.decode(|r| parse_example(r, &spec))?;
                let mut pixels = Vec::with_capacity(recs.len() * PIXELS);
                let labels = normalize(&parsed, &mut pixels)?;
                Ok(vec![
                    Tensor::new([recs.len(), PIXELS], pixels)?.into(),
                    labels.into(),
                ])
            });
            b.dtypes([DType::F32, DType::I64])
                .shapes([vec![Some(PIXELS)], vec![]])
                .enqueue_many(true);
            shuffle_settings(&mut b);
            let batches = b.build().unwrap();
            assert_eq!(drain(&mut pipeline, &batches), EXAMPLES);
        })
    });

    // The front door: the same reading, parsing and normalizing (a
    // vectorised map over each decoded block), shuffled through a buffer
    // of MIN_AFTER examples and batched, 2 reader threads. It reads by
    // position through each file's record index: written once beside the
    // files (`feedstock index`), as a job that reads them again would,
    // so that an iteration loads the index rather than scanning the
    // files (the scan is a start-up cost measured on its own below).
    for f in &files {
        RecordIndex::build(&LocalFs, f, None)
            .unwrap()
            .write_sidecar(true)
            .unwrap();
    }
    g.bench_function("front_door_buffer_128_2_threads", |bench| {
        bench.iter(|| {
            let loader = Dataset::tfrecord(files.clone())
                .unwrap()
                .parse(mnist_spec())
                .map_batch("normalize", |cols: Vec<Value>| {
                    let images = cols[0].dense()?.as_slice::<Bytes>()?;
                    let mut pixels = Vec::with_capacity(images.len() * PIXELS);
                    for raw in images {
                        pixels
                            .extend(raw.iter().map(|&b| f32::from(b) / 255.0));
                    }
                    let n = images.len();
                    Ok(vec![
                        Tensor::new([n, PIXELS], pixels)?.into(),
                        cols[1].clone(),
                    ])
                })
                .shuffle(DatasetShuffle::Buffer(MIN_AFTER))
                .batch(BATCH)
                .threads(2)
                .start()
                .unwrap();
            let n: usize = loader.map(|b| b.unwrap().len()).sum();
            assert_eq!(n, EXAMPLES);
        })
    });
    // The start-up cost that sidecars save: indexing the files (one
    // verifying scan each).
    g.bench_function("front_door_index_scan", |bench| {
        bench.iter(|| {
            for f in &files {
                RecordIndex::build(&LocalFs, f, None).unwrap();
            }
        })
    });
    g.finish();
}

mod group {
    #![allow(missing_docs)]
    use super::{on_disk, preloaded};
    criterion::criterion_group!(benches, preloaded, on_disk);
}
criterion_main!(group::benches);
