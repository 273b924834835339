//! The seed's MNIST-like pipeline, built with `feedstock::plan` from Rust
//! and run to its end: the Rust figure the Python benchmark
//! (`benches/python/mnist_pipeline.py`) compares its layers against.
//!
//! TFRecord → `parse_single_example` → `decode_raw` → cast and scale to
//! [-0.5, 0.5] → `shuffle_batch(128)`, the same graph
//! `feedstock.compat.v1` builds. Prints one line of JSON:
//! `{"examples": N, "seconds": S}`.
//!
//! `cargo run --release -p feedstock-py --example mnist_plan -- EPOCHS
//! MIN_AFTER_DEQUEUE FILE...`

use std::time::Instant;

use feedstock::coord::Coordinator;
use feedstock::decode::example::FeatureSpec;
use feedstock::plan::{
    BatchOptions, Graph, ProducerOptions, ReaderKind, Session, ShuffleOptions,
};
use feedstock::{DType, Kind};

/// The allocator the extension module uses (see `src/lib.rs`), so that
/// this is the same engine the Python layers run.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let epochs: u64 = args.next().ok_or("EPOCHS")?.parse()?;
    let min_after: usize = args.next().ok_or("MIN_AFTER_DEQUEUE")?.parse()?;
    let files: Vec<String> = args.collect();
    if files.is_empty() {
        return Err("no files given".into());
    }
    let batch_size = 128;
    let g = Graph::new();
    let queue = g.string_input_producer(
        files.into_iter().collect::<feedstock::plan::Strings>(),
        ProducerOptions {
            num_epochs: Some(epochs),
            ..Default::default()
        },
    )?;
    let reader = g.reader(ReaderKind::tf_record(Default::default()))?;
    let (_key, value) = g.read(reader, queue)?;
    let spec = FeatureSpec::builder()
        .fixed("image_raw", DType::String, [])
        .fixed("label", DType::I64, [])
        .build()?;
    let parsed = g.parse_single_example(value, spec)?;
    let pixels = g.decode_raw(parsed[0], DType::U8, true)?;
    let pixels = g.reshape(pixels, &[784])?;
    let scaled = g.mul(
        g.cast(pixels, DType::F32)?,
        g.scalar(1.0 / 255.0, DType::F32)?,
    )?;
    let image = g.sub(scaled, g.scalar(0.5, DType::F32)?)?;
    let label = g.cast(parsed[1], DType::I32)?;
    let batch = g.batch(
        &[vec![image, label]],
        None,
        BatchOptions {
            batch_size,
            num_threads: 2,
            capacity: min_after + 3 * batch_size,
            allow_smaller_final_batch: true,
            shuffle: Some(ShuffleOptions {
                min_after_dequeue: min_after,
                seed: Some(7),
            }),
            ..Default::default()
        },
    )?;
    let sess = Session::new(&g);
    let coord = Coordinator::new();
    let start = Instant::now();
    let threads = sess.start_queue_runners(&coord)?;
    let mut n = 0usize;
    loop {
        match sess.run(&batch, &[]) {
            Ok(v) => n += v[1].dense()?.dims()[0],
            Err(e) if e.kind() == Kind::OutOfRange => break,
            Err(e) => return Err(e.into()),
        }
    }
    let secs = start.elapsed().as_secs_f64();
    coord.request_stop();
    coord.join(threads, std::time::Duration::from_secs(10))?;
    println!("{{\"examples\": {n}, \"seconds\": {secs}}}");
    Ok(())
}
