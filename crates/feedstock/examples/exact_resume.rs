//! Exact resume: stop a record stream anywhere, keep a few kilobytes, and
//! continue later, in another process, with exactly the records an
//! uninterrupted run would have delivered, in the same order.
//!
//! The stream shuffles through a buffer of 1000 records over two files
//! (one gzip), for two epochs. We stop it after 1234 records, in the
//! middle of a batch, save its checkpoint (positions, not data), and
//! build a fresh stream from the saved bytes.
//!
//! Run with `cargo run --example exact_resume`.

use std::error::Error;

use feedstock::input::stream::{Checkpoint, Order, RecordStream};
use feedstock::io::tfrecord::WriterBuilder;
use feedstock::io::Compression;

/// Runs the example; `cargo test` runs it too (tests/examples.rs).
pub fn main() -> Result<(), Box<dyn Error>> {
    let dir = tempfile::tempdir()?;
    let mut files = Vec::new();
    for (name, c) in [
        ("train-0.tfrecord", Compression::None),
        ("train-1.tfrecord.gz", Compression::Gzip),
    ] {
        let path = dir.path().join(name);
        let mut w = WriterBuilder::new()
            .compression(c)
            .from_writer(std::fs::File::create(&path)?);
        for i in 0..1000 {
            w.write_record(format!("{name}/{i}").as_bytes())?;
        }
        w.finish()?;
        files.push(path.to_str().unwrap().to_owned());
    }

    let mut builder = RecordStream::builder(files);
    builder
        .order(Order::Buffer(1000))
        .num_epochs(2)
        .seed(42)
        .threads(2);

    // What an uninterrupted run delivers.
    let all: Vec<_> = builder.build()?.collect::<Result<_, _>>()?;

    // A run that stops after 38 batches of 32 and 18 more records ...
    let mut stream = builder.build()?;
    let mut seen = Vec::new();
    for _ in 0..38 {
        seen.extend(stream.next_batch(32)?);
    }
    seen.extend(stream.next_batch(18)?);
    let saved: Vec<u8> = stream.checkpoint().to_bytes();
    drop(stream);
    println!(
        "stopped after {} records; checkpoint: {} bytes",
        seen.len(),
        saved.len()
    );
    assert!(saved.len() < 16 * 1024);

    // ... and a fresh stream restored from the saved bytes.
    let checkpoint = Checkpoint::from_bytes(&saved)?;
    assert_eq!(checkpoint.delivered(), 1234);
    let rest = builder.restore(checkpoint).build()?;
    for record in rest {
        seen.push(record?);
    }
    assert_eq!(seen, all);
    println!(
        "resumed: {} records, identical to the uninterrupted run",
        seen.len()
    );
    Ok(())
}
