//! parse_example throughput: examples per second for an MNIST-like Example
//! (784 image bytes + an int64 label) and a dense one (784 floats + a
//! label), parsed one at a time and in batches of 128, with prost
//! decoding (into the `Example` message, then copying the values out) as
//! the baseline measured in the same run.
//!
//! Run: `cargo bench -p feedstock --bench parse_example -- --warm-up-time 1
//! --measurement-time 3`

use std::hint::black_box;

use bytes::Bytes;
use criterion::{criterion_main, Criterion, Throughput};
use feedstock::decode::example::{
    parse_example, parse_single_example, FeatureSpec,
};
use feedstock::proto::{
    feature::Kind, BytesList, Example, Feature, Features, FloatList, Int64List,
};
use feedstock::{DType, Tensor};
use prost::Message;

const N: usize = 1024;
const BATCH: usize = 128;

fn feature(kind: Kind) -> Feature {
    Feature { kind: Some(kind) }
}

fn mnist_like(i: usize) -> Bytes {
    let image: Vec<u8> = (0..784).map(|p| (p * 7 + i) as u8).collect();
    let ex = Example {
        features: Some(Features {
            feature: [
                (
                    "image_raw".to_string(),
                    feature(Kind::BytesList(BytesList {
                        value: vec![image.into()],
                    })),
                ),
                (
                    "label".to_string(),
                    feature(Kind::Int64List(Int64List {
                        value: vec![(i % 10) as i64],
                    })),
                ),
            ]
            .into(),
        }),
    };
    Bytes::from(ex.encode_to_vec())
}

fn dense(i: usize) -> Bytes {
    let image: Vec<f32> = (0..784).map(|p| (p + i) as f32 / 784.0).collect();
    let ex = Example {
        features: Some(Features {
            feature: [
                (
                    "image".to_string(),
                    feature(Kind::FloatList(FloatList { value: image })),
                ),
                (
                    "label".to_string(),
                    feature(Kind::Int64List(Int64List {
                        value: vec![(i % 10) as i64],
                    })),
                ),
            ]
            .into(),
        }),
    };
    Bytes::from(ex.encode_to_vec())
}

/// The baseline: prost decodes the message, then the values are copied
/// into tensors, as the fast parser's output is.
fn prost_parse(record: &Bytes, image: &str) -> (Tensor, Tensor) {
    let ex = Example::decode(record.clone()).unwrap();
    let mut f = ex.features.unwrap().feature;
    let label = match f.remove("label").and_then(|f| f.kind) {
        Some(Kind::Int64List(l)) => Tensor::scalar(l.value[0]),
        _ => panic!("no label"),
    };
    let image = match f.remove(image).and_then(|f| f.kind) {
        Some(Kind::BytesList(mut l)) => Tensor::scalar(l.value.remove(0)),
        Some(Kind::FloatList(l)) => Tensor::new([784], l.value).unwrap(),
        _ => panic!("no image"),
    };
    (image, label)
}

fn bench(
    c: &mut Criterion,
    name: &str,
    records: &[Bytes],
    spec: &FeatureSpec,
) {
    let image = spec.names().next().unwrap().to_owned();
    let mut g = c.benchmark_group(name);
    g.throughput(Throughput::Elements(records.len() as u64));
    g.bench_function("prost_decode_and_copy", |b| {
        b.iter(|| {
            for r in records {
                black_box(prost_parse(r, &image));
            }
        })
    });
    g.bench_function("parse_single_example", |b| {
        b.iter(|| {
            for r in records {
                black_box(parse_single_example(r, spec, "").unwrap());
            }
        })
    });
    g.bench_function("parse_example_batch_128", |b| {
        b.iter(|| {
            for chunk in records.chunks(BATCH) {
                black_box(parse_example(chunk, spec).unwrap());
            }
        })
    });
    g.finish();
}

fn benches(c: &mut Criterion) {
    let mnist: Vec<Bytes> = (0..N).map(mnist_like).collect();
    let spec = FeatureSpec::builder()
        .fixed("image_raw", DType::String, [])
        .fixed("label", DType::I64, [])
        .build()
        .unwrap();
    bench(c, "mnist_like", &mnist, &spec);

    let dense_records: Vec<Bytes> = (0..N).map(dense).collect();
    let spec = FeatureSpec::builder()
        .fixed("image", DType::F32, [784])
        .fixed("label", DType::I64, [])
        .build()
        .unwrap();
    bench(c, "dense_784_floats", &dense_records, &spec);
}

/// Runs every benchmark with the command line's criterion settings
/// (written out rather than by `criterion_group!`, whose function has no
/// doc comment for the `missing_docs` lint).
fn parse() {
    let mut c = Criterion::default().configure_from_args();
    benches(&mut c);
}

criterion_main!(parse);
