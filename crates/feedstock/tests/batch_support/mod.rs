//! Shared helpers of the batching tests: MNIST-like TFRecord files and
//! the seed's `read_my_file_format`.

#![allow(dead_code, unreachable_pub)]

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use feedstock::coord::{Coordinator, ThreadHandle};
use feedstock::input::{Batch, BatchSource};
use feedstock::io::tfrecord::WriterBuilder;
use feedstock::proto::{Example, ExampleBuilder};
use feedstock::queue::FifoQueue;
use feedstock::reader::Reader;
use feedstock::{Error, Result, Tensor, Value};
use prost::Message;

/// How long a test waits for threads to stop.
pub const JOIN: Duration = Duration::from_secs(20);

/// Pixels per example in the test files.
pub const PIXELS: usize = 16;

/// Writes `files` TFRecord files holding `per_file` Examples each, with
/// ids numbered across files: `id` (int64), `image_raw` (PIXELS bytes
/// derived from the id) and `label` (id % 10).
pub fn write_files(dir: &Path, files: usize, per_file: usize) -> Vec<String> {
    (0..files)
        .map(|f| {
            let path = dir.join(format!("train-{f:02}.tfrecord"));
            let mut w = WriterBuilder::new().create(&path).unwrap();
            for r in 0..per_file {
                let id = (f * per_file + r) as i64;
                w.write_record(&example(id).encode_to_vec()).unwrap();
            }
            w.finish().unwrap();
            path.to_str().unwrap().to_owned()
        })
        .collect()
}

/// The Example of id `id`.
pub fn example(id: i64) -> Example {
    let image: Vec<u8> =
        (0..PIXELS).map(|i| (id as usize + i) as u8).collect();
    ExampleBuilder::new()
        .int64("id", [id])
        .bytes("image_raw", image)
        .int64("label", [id % 10])
        .build()
}

/// Parses one record into `[id, image (f32, PIXELS), label]`, an error
/// naming the record key when it is not such an Example.
pub fn parse(key: &str, value: &[u8]) -> Result<Vec<Value>> {
    let ex = Example::decode(value).map_err(|e| {
        Error::data_loss(format!("not an Example: {e}")).with_key(key)
    })?;
    let int = |name: &str| {
        ex.feature(name)
            .and_then(|f| f.as_int64())
            .and_then(|v| v.first().copied())
            .ok_or_else(|| {
                Error::invalid_argument(format!("missing {name}"))
                    .with_key(key)
                    .with_field(name)
            })
    };
    let raw = ex
        .feature("image_raw")
        .and_then(|f| f.as_bytes())
        .and_then(|v| v.first())
        .ok_or_else(|| {
            Error::invalid_argument("missing image_raw")
                .with_key(key)
                .with_field("image_raw")
        })?;
    let image: Vec<f32> = raw.iter().map(|&b| f32::from(b) / 255.0).collect();
    Ok(vec![
        Tensor::scalar(int("id")?).into(),
        Tensor::vector(image).into(),
        Tensor::scalar(int("label")?).into(),
    ])
}

/// The seed's `read_my_file_format`: read one record, decode it.
pub fn read_my_file_format(
    reader: Reader,
    files: Arc<FifoQueue>,
) -> impl FnMut() -> Result<Vec<Value>> + Clone + Send + 'static {
    move || {
        let record = reader.read(&*files)?;
        parse(&record.key, &record.value)
    }
}

/// The ids in a batch whose component 0 is the id.
pub fn ids(batch: &Batch) -> Vec<i64> {
    batch.components()[0]
        .dense()
        .unwrap()
        .as_slice::<i64>()
        .unwrap()
        .to_vec()
}

/// Every batch of `source`, until the end; panics on an error.
pub fn drain(source: &BatchSource) -> Vec<Batch> {
    source.iter().map(|b| b.unwrap()).collect()
}

/// How many times each id occurs.
pub fn multiset(ids: impl IntoIterator<Item = i64>) -> BTreeMap<i64, u64> {
    let mut m = BTreeMap::new();
    for id in ids {
        *m.entry(id).or_insert(0) += 1;
    }
    m
}

/// Stops and joins, returning the join's result.
pub fn stop(coord: &Coordinator, threads: Vec<ThreadHandle>) -> Result<()> {
    coord.request_stop();
    coord.join(threads, JOIN)
}
