//! Global shuffle: every epoch, a permutation of every record of every
//! file, drawn from the seed, instead of the local mixing a shuffle
//! buffer gives; and split exactly between hosts.
//!
//! Four files of 500 records, written in order. A shuffle buffer of 100
//! records over them hands out, early on, only records near the start of
//! the files it has opened; a global shuffle draws from all 2000 records
//! from the first one. With `Shard`, each of three hosts takes its own
//! part of the same permutation: equal parts, disjoint, together the
//! whole epoch (less the remainder).
//!
//! Run with `cargo run --example global_shuffle`.

use std::collections::HashSet;
use std::error::Error;

use feedstock::input::shard::Shard;
use feedstock::input::stream::{Order, RecordStream};
use feedstock::io::tfrecord::WriterBuilder;

/// Runs the example; `cargo test` runs it too (tests/examples.rs).
pub fn main() -> Result<(), Box<dyn Error>> {
    let dir = tempfile::tempdir()?;
    let mut files = Vec::new();
    for f in 0..4 {
        let path = dir.path().join(format!("part-{f}.tfrecord"));
        let mut w =
            WriterBuilder::new().from_writer(std::fs::File::create(&path)?);
        for i in 0..500u32 {
            w.write_record(&(f * 500 + i).to_le_bytes())?;
        }
        w.finish()?;
        files.push(path.to_str().unwrap().to_owned());
    }
    let number = |data: &[u8]| u32::from_le_bytes(data.try_into().unwrap());

    // How far into the data the first 200 records reach.
    let first = |order| -> Result<Vec<u32>, Box<dyn Error>> {
        let mut b = RecordStream::builder(files.clone());
        b.order(order).seed(1);
        let mut stream = b.build()?;
        let batch = stream.next_batch(200)?;
        Ok(batch.iter().map(|r| number(&r.value)).collect())
    };
    let spread = |v: &[u32]| v.iter().map(|n| n % 500).max().unwrap();
    let buffered = first(Order::Buffer(100))?;
    let global = first(Order::Global)?;
    println!(
        "first 200 records reach record {} of a file (buffer of 100), \
         {} (global)",
        spread(&buffered),
        spread(&global)
    );
    assert!(spread(&buffered) < 300);
    assert!(spread(&global) > 450);

    // Three hosts, one permutation per epoch: 2000 = 3 × 666 + 2.
    let mut union = HashSet::new();
    for host in 0..3 {
        let mut b = RecordStream::builder(files.clone());
        b.order(Order::Global).seed(1).shard(Shard::new(host, 3)?);
        let mine: Vec<u32> = b
            .build()?
            .map(|r| r.map(|r| number(&r.value)))
            .collect::<Result<_, _>>()?;
        assert_eq!(mine.len(), 666);
        for n in mine {
            assert!(union.insert(n), "record {n} on two hosts");
        }
    }
    assert_eq!(union.len(), 1998);
    println!("3 hosts: 666 records each, disjoint, 2 left over");
    Ok(())
}
