//! Seed guide, "Sparse input data": a `VarLenFeature` — a list of a
//! different length in each Example — parsed into a `SparseTensor`, and
//! batched, two ways.
//!
//! 1. TensorFlow's way (its queues could not hold sparse tensors): batch
//!    the serialized records, then `parse_example` the batch.
//! 2. Also possible here, since feedstock's queues hold sparse
//!    components: `parse_single_example` before batching, and batch the
//!    sparse tensors.
//!
//! Both give the same batches: indices `[example, position]`, values,
//! and dense shape `[batch_size, longest list in the batch]`.
//!
//! Run with `cargo run --example sparse_input`.

use std::error::Error;
use std::time::Duration;

use bytes::Bytes;
use feedstock::coord::{Coordinator, Pipeline};
use feedstock::decode::example::{
    parse_example, parse_single_example, FeatureSpec,
};
use feedstock::input::{batch, string_input_producer, BatchSource};
use feedstock::io::tfrecord::WriterBuilder;
use feedstock::proto::ExampleBuilder;
use feedstock::queue::{ComponentSpec, PartialShape, QueueSpec};
use feedstock::reader::{Reader, TfRecordReader};
use feedstock::{DType, SparseTensor, Tensor, Value};
use prost::Message;

const EXAMPLES: usize = 10;
const BATCH_SIZE: usize = 4;

/// The tags of example `i`: `i % 4` of them (so some have none).
fn tags(i: usize) -> Vec<i64> {
    (0..(i % 4) as i64).map(|t| 100 * i as i64 + t).collect()
}

/// A pipeline over `file` (one epoch, in order, one thread) whose
/// closure `example` turns each record into the batch's components.
fn pipeline_over(
    pipeline: &mut Pipeline,
    file: &str,
    spec: QueueSpec,
    example: impl Fn(Bytes, &str) -> feedstock::Result<Vec<Value>>
        + Clone
        + Send
        + 'static,
) -> feedstock::Result<BatchSource> {
    let filename_queue = string_input_producer(pipeline, [file])
        .num_epochs(1)
        .build()?;
    let reader = Reader::new(TfRecordReader::new());
    batch(pipeline, move || {
        let record = reader.read(&filename_queue)?;
        example(record.value, &record.key)
    })
    .spec(spec)
    .batch_size(BATCH_SIZE)
    .allow_smaller_final_batch(true)
    .build()
}

/// Runs `batches` to the end and returns every batch's sparse `tags`.
fn run(
    mut pipeline: Pipeline,
    batches: BatchSource,
    parse: impl Fn(Vec<Value>) -> feedstock::Result<SparseTensor>,
) -> Result<Vec<SparseTensor>, Box<dyn Error>> {
    let coord = Coordinator::new();
    batches.attach(&coord);
    let threads = pipeline.start(&coord)?;
    let mut out = Vec::new();
    for batch in batches.iter() {
        out.push(parse(batch?.into_components())?);
    }
    coord.request_stop();
    coord.join(threads, Duration::from_secs(10))?;
    Ok(out)
}

/// Runs the example; `cargo test` runs it too (tests/examples.rs).
pub fn main() -> Result<(), Box<dyn Error>> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("tags.tfrecord");
    let mut writer = WriterBuilder::new().create(&path)?;
    for i in 0..EXAMPLES {
        let example = ExampleBuilder::new().int64("tags", tags(i)).build();
        writer.write_record(&example.encode_to_vec())?;
    }
    writer.finish()?;
    let file = path.to_str().unwrap();
    let features =
        FeatureSpec::builder().var_len("tags", DType::I64).build()?;

    // 1. Batch the serialized records, then parse the batch.
    let mut pipeline = Pipeline::new();
    let serialized = pipeline_over(
        &mut pipeline,
        file,
        QueueSpec::scalar_string(),
        |value, _key| Ok(vec![Tensor::string(value).into()]),
    )?;
    let tf_way = run(pipeline, serialized, |components| {
        let records = components[0].dense()?.as_slice::<Bytes>()?.to_vec();
        let parsed = parse_example(&records, &features)?;
        Ok(parsed["tags"].sparse()?.clone())
    })?;

    // 2. Parse each record, then batch the sparse tensors.
    let mut pipeline = Pipeline::new();
    let spec = features.clone();
    let parsed = pipeline_over(
        &mut pipeline,
        file,
        QueueSpec::new().component(
            ComponentSpec::sparse(DType::I64)
                .shape(PartialShape::new([None]))
                .name("tags"),
        ),
        move |value, key| {
            let example = parse_single_example(&value, &spec, key)?;
            Ok(vec![example["tags"].clone()])
        },
    )?;
    let parsed_first = run(pipeline, parsed, |components| {
        Ok(components[0].sparse()?.clone())
    })?;

    // The batches: [4, 3], [4, 3], [2, 1] — the longest list of each.
    assert_eq!(tf_way, parsed_first, "both ways give the same batches");
    let shapes: Vec<&[usize]> =
        tf_way.iter().map(SparseTensor::dims).collect();
    assert_eq!(shapes, [&[4, 3][..], &[4, 3], &[2, 1]]);
    for (b, sparse) in tf_way.iter().enumerate() {
        let indices = sparse.indices().as_slice::<i64>()?;
        let values = sparse.values().as_slice::<i64>()?;
        // Each value sits at [example in batch, position in its list].
        for (ix, &v) in indices.chunks(2).zip(values) {
            let i = b * BATCH_SIZE + ix[0] as usize;
            assert_eq!(v, tags(i)[ix[1] as usize]);
        }
        let want: usize = (b * BATCH_SIZE..EXAMPLES.min((b + 1) * BATCH_SIZE))
            .map(|i| tags(i).len())
            .sum();
        assert_eq!(sparse.nnz(), want);
    }
    println!(
        "{} batches of sparse tags, dense shapes {shapes:?}",
        tf_way.len()
    );
    Ok(())
}
