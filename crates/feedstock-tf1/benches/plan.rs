//! The seed's MNIST-like pipeline (TFRecord → parse_single_example →
//! decode_raw → cast → scale → shuffle_batch 128, two threads) written
//! directly with the library and built as a `plan::Graph` run by a
//! `plan::Session`, in one run, so the graph layer's cost is the ratio
//! of the two. The batched form (read_up_to 64 → parse_example →
//! enqueue_many) is measured both ways too.
//!
//! `cargo bench -p feedstock --bench plan -- --warm-up-time 1
//! --measurement-time 3`

use feedstock_tf1::kernels::math::BinaryOp;
use feedstock_tf1::op::{
    Binary, Cast, DecodeRaw, Parse, Reshape, StridedSlice, Transpose,
};
use std::path::Path;
use std::time::Duration;

use criterion::{criterion_main, Criterion, Throughput};
use feedstock::coord::{Coordinator, Pipeline};
use feedstock::decode::example::{
    parse_example, parse_single_example, FeatureSpec,
};
use feedstock::decode::raw::{decode_raw, decode_raw_batch, ByteOrder};
use feedstock::decode::Records;
use feedstock::input::{shuffle_batch, string_input_producer, BatchSource};
use feedstock::io::tfrecord::WriterBuilder;
use feedstock::io::Compression;
use feedstock::proto::ExampleBuilder;
use feedstock::reader::{Reader, TfRecordReader};
use feedstock::{DType, Kind, Tensor, Value};
use feedstock_tf1::kernels::math::mul;
use feedstock_tf1::{
    BatchOptions, Graph, ProducerOptions, ReaderKind, Session, ShuffleOptions,
    SliceDim, Strings,
};
use prost::Message;

const PIXELS: usize = 784;
const BATCH: usize = 128;
const MIN_AFTER: usize = 2_000;
const EXAMPLES: usize = 20_000;
const FILES: usize = 4;
const CHUNK: usize = 64;

fn write_files(dir: &Path) -> Vec<String> {
    let per = EXAMPLES / FILES;
    (0..FILES)
        .map(|f| {
            let path = dir.join(format!("mnist-{f}.tfrecord"));
            let mut w = WriterBuilder::new().create(&path).unwrap();
            for r in 0..per {
                let i = f * per + r;
                let img: Vec<u8> =
                    (0..PIXELS).map(|p| (i * 7 + p) as u8).collect();
                let ex = ExampleBuilder::new()
                    .bytes("image_raw", img)
                    .int64("label", [(i % 10) as i64])
                    .build();
                w.write_record(&ex.encode_to_vec()).unwrap();
            }
            w.finish().unwrap();
            path.to_str().unwrap().to_owned()
        })
        .collect()
}

fn spec() -> FeatureSpec {
    FeatureSpec::builder()
        .fixed("image_raw", DType::String, [])
        .fixed("label", DType::I64, [])
        .build()
        .unwrap()
}

fn drain_source(pipeline: &mut Pipeline, batches: &BatchSource) -> usize {
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

fn direct(files: &[String], many: bool) -> usize {
    let mut pipeline = Pipeline::new();
    let q = string_input_producer(&mut pipeline, files.to_vec())
        .num_epochs(1)
        .build()
        .unwrap();
    let reader = Reader::new(TfRecordReader::new());
    let spec = spec();
    let scale = Tensor::scalar(1.0f32 / 255.0);
    let mut b = shuffle_batch(&mut pipeline, move || {
        let (raw, label) = if many {
            let recs = reader.read_up_to(&q, CHUNK)?;
            let values: Vec<_> =
                recs.iter().map(|r| r.value.clone()).collect();
            let keys: Vec<&str> =
                recs.iter().map(|r| r.key.as_str()).collect();
            let named = Records::new(&values).with_keys(&keys)?;
            let p = parse_example(named, &spec)?.into_values();
            let raw = p[0].dense()?;
            let img = decode_raw_batch(
                Records::new(raw.as_slice::<bytes::Bytes>()?),
                DType::U8,
                ByteOrder::LittleEndian,
            )?;
            (img, p[1].clone())
        } else {
            let rec = reader.read(&q)?;
            let p = parse_single_example(&rec.value, &spec, &rec.key)?
                .into_values();
            let raw = p[0].dense()?.scalar_value::<bytes::Bytes>()?;
            let img = decode_raw(&raw, DType::U8, ByteOrder::LittleEndian)?;
            (img, p[1].clone())
        };
        let img = mul(&raw.cast(DType::F32)?, &scale)?;
        Ok(vec![Value::from(img), label])
    });
    b.dtypes([DType::F32, DType::I64])
        .shapes([vec![Some(PIXELS)], vec![]])
        .enqueue_many(many)
        .batch_size(BATCH)
        .num_threads(2)
        .capacity(MIN_AFTER + 3 * BATCH)
        .min_after_dequeue(MIN_AFTER)
        .allow_smaller_final_batch(true);
    let batches = b.build().unwrap();
    drain_source(&mut pipeline, &batches)
}

fn planned(files: &[String], many: bool) -> usize {
    let g = Graph::new();
    let q = g
        .string_input_producer(
            Strings::List(files.to_vec()),
            ProducerOptions {
                num_epochs: Some(1),
                ..Default::default()
            },
        )
        .unwrap();
    let reader = g.reader(ReaderKind::tf_record(Compression::None)).unwrap();
    let f = if many {
        let (_, v) = g.read_up_to(reader, q, CHUNK).unwrap();
        g.op(
            Parse {
                spec: spec(),
                batched: true,
            },
            &[v],
        )
        .unwrap()
    } else {
        let (_, v) = g.read(reader, q).unwrap();
        g.op(
            Parse {
                spec: spec(),
                batched: false,
            },
            &[v],
        )
        .unwrap()
    };
    let img = g
        .op1(
            DecodeRaw {
                out_type: DType::U8,
                little_endian: true,
            },
            &[f[0]],
        )
        .unwrap();
    let img = g.op1(Cast { dtype: DType::F32 }, &[img]).unwrap();
    let scale = g.scalar(1.0 / 255.0, DType::F32).unwrap();
    let img = g.op1(Binary { op: BinaryOp::Mul }, &[img, scale]).unwrap();
    let shape = if many {
        vec![-1, PIXELS as i64]
    } else {
        vec![PIXELS as i64]
    };
    let img = g
        .op1(
            Reshape {
                shape: Some(shape.to_vec()),
            },
            &[img],
        )
        .unwrap();
    let batch = g
        .batch(
            &[vec![img, f[1]]],
            None,
            BatchOptions {
                batch_size: BATCH,
                num_threads: 2,
                capacity: MIN_AFTER + 3 * BATCH,
                enqueue_many: many,
                allow_smaller_final_batch: true,
                shuffle: Some(ShuffleOptions {
                    min_after_dequeue: MIN_AFTER,
                    seed: None,
                }),
                ..Default::default()
            },
        )
        .unwrap();
    let sess = Session::new(&g);
    let coord = Coordinator::new();
    let threads = sess.start_queue_runners(&coord).unwrap();
    let mut n = 0;
    loop {
        match sess.run(&batch, &[]) {
            Ok(v) => n += v[1].dense().unwrap().dims()[0],
            Err(e) if e.kind() == Kind::OutOfRange => break,
            Err(e) => panic!("{e}"),
        }
    }
    coord.request_stop();
    coord.join(threads, Duration::from_secs(30)).unwrap();
    n
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let files = write_files(dir.path());
    let mut g = c.benchmark_group("mnist_shuffle_batch_128");
    g.throughput(Throughput::Elements(EXAMPLES as u64));
    g.sample_size(10);
    g.bench_function("direct", |b| {
        b.iter(|| assert_eq!(direct(&files, false), EXAMPLES))
    });
    g.bench_function("plan", |b| {
        b.iter(|| assert_eq!(planned(&files, false), EXAMPLES))
    });
    g.bench_function("direct_read_up_to_64", |b| {
        b.iter(|| assert_eq!(direct(&files, true), EXAMPLES))
    });
    g.bench_function("plan_read_up_to_64", |b| {
        b.iter(|| assert_eq!(planned(&files, true), EXAMPLES))
    });
    g.finish();
}

/// CIFAR-10 records in the graph: `records` of 3073 bytes (a label byte,
/// a `[3, 32, 32]` image) in one file.
const CIFAR_RECORD: usize = 3073;
const CIFAR_RECORDS: usize = 8192;

fn write_cifar(dir: &Path) -> String {
    let path = dir.join("cifar.bin");
    let bytes: Vec<u8> = (0..CIFAR_RECORDS * CIFAR_RECORD)
        .map(|i| (i * 7 % 251) as u8)
        .collect();
    std::fs::write(&path, bytes).unwrap();
    path.to_str().unwrap().to_owned()
}

/// TensorFlow's CIFAR-10 decoding written with the graph's generic ops,
/// one record per `Session::run` (`read`) or 1024 (`read_up_to`):
/// `decode_raw`, `raw[..., :1]` cast to int32, `raw[..., 1:]` reshaped to
/// `[3, 32, 32]` and transposed to `[32, 32, 3]`, as `cifar10_input.py`
/// does. Returns the records decoded.
fn cifar_graph(file: &str, many: bool) -> usize {
    let g = Graph::new();
    let q = g
        .string_input_producer(
            Strings::List(vec![file.to_owned()]),
            ProducerOptions {
                num_epochs: Some(1),
                shuffle: false,
                ..Default::default()
            },
        )
        .unwrap();
    let reader = g
        .reader(ReaderKind::FixedLength {
            record_bytes: CIFAR_RECORD as u64,
            header_bytes: 0,
            footer_bytes: 0,
            hop_bytes: 0,
            compression: Compression::None,
        })
        .unwrap();
    let (_, v) = if many {
        g.read_up_to(reader, q, 1024).unwrap()
    } else {
        g.read(reader, q).unwrap()
    };
    let raw = g
        .op1(
            DecodeRaw {
                out_type: DType::U8,
                little_endian: true,
            },
            &[v],
        )
        .unwrap();
    let range = |start: i64, stop: Option<i64>| SliceDim::Range {
        start: Some(start),
        stop,
        step: 1,
    };
    let all = SliceDim::Range {
        start: None,
        stop: None,
        step: 1,
    };
    let lead: Vec<SliceDim> = if many { vec![all] } else { vec![] };
    let at = |d: SliceDim| [lead.clone(), vec![d]].concat();
    let label = g
        .op1(StridedSlice::index(&at(range(0, Some(1)))), &[raw])
        .unwrap();
    let label = g.op1(Cast { dtype: DType::I32 }, &[label]).unwrap();
    let image = g
        .op1(StridedSlice::index(&at(range(1, None))), &[raw])
        .unwrap();
    let (shape, perm): (&[i64], &[usize]) = if many {
        (&[-1, 3, 32, 32], &[0, 2, 3, 1])
    } else {
        (&[3, 32, 32], &[1, 2, 0])
    };
    let image = g
        .op1(
            Reshape {
                shape: Some(shape.to_vec()),
            },
            &[image],
        )
        .unwrap();
    let image = g
        .op1(
            Transpose {
                perm: perm.to_vec(),
            },
            &[image],
        )
        .unwrap();
    let sess = Session::new(&g);
    let coord = Coordinator::new();
    let threads = sess.start_queue_runners(&coord).unwrap();
    let mut n = 0;
    loop {
        match sess.run(&[label, image], &[]) {
            Ok(v) => {
                let dims = v[1].dense().unwrap().dims().to_vec();
                n += if many { dims[0] } else { 1 };
            }
            Err(e) if e.kind() == Kind::OutOfRange => break,
            Err(e) => panic!("{e}"),
        }
    }
    coord.request_stop();
    coord.join(threads, Duration::from_secs(30)).unwrap();
    n
}

fn bench_cifar(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let file = write_cifar(dir.path());
    let mut g = c.benchmark_group("cifar_graph_generic_ops");
    g.throughput(Throughput::Elements(CIFAR_RECORDS as u64));
    g.sample_size(10);
    g.bench_function("per_record", |b| {
        b.iter(|| assert_eq!(cifar_graph(&file, false), CIFAR_RECORDS))
    });
    g.bench_function("read_up_to_1024", |b| {
        b.iter(|| assert_eq!(cifar_graph(&file, true), CIFAR_RECORDS))
    });
    g.finish();
}

mod group {
    #![allow(missing_docs)]
    criterion::criterion_group!(benches, super::bench, super::bench_cifar);
}
criterion_main!(group::benches);
