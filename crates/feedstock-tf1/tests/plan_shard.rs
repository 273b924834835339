//! Sharding in a graph: `string_input_producer(..).shard(i, N)` as a
//! producer node feeding a reader node (the engine's sharding is tested
//! in crates/feedstock/tests/shard_pipeline.rs).

use std::collections::BTreeMap;
use std::time::Duration;

use bytes::Bytes;
use feedstock::coord::Coordinator;
use feedstock::input::shard::Remainder;
use feedstock::reader::PAD_KEY_PREFIX;
use feedstock::Kind;
use feedstock_tf1::{
    Graph, ProducerOptions, ReaderKind, Session, ShardOptions, Strings,
};

const JOIN: Duration = Duration::from_secs(30);

/// Text files of uneven sizes; every line names its file and line.
fn dataset(
    dir: &std::path::Path,
    sizes: &[u64],
) -> (Vec<String>, Vec<String>) {
    let mut files = Vec::new();
    let mut all = Vec::new();
    for (f, &n) in sizes.iter().enumerate() {
        let lines: Vec<String> =
            (0..n).map(|r| format!("f{f}-r{r}")).collect();
        let path = dir.join(format!("part-{f:02}.txt"));
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        files.push(path.to_str().unwrap().to_owned());
        all.extend(lines);
    }
    (files, all)
}

/// A sharded producer node counts its files with the
/// reader that reads from it.
#[test]
fn plan_hosts_split_the_files_and_agree_on_the_count() {
    let dir = tempfile::tempdir().unwrap();
    let (files, all) = dataset(dir.path(), &[5, 3]);
    let n = 3;
    let mut per_host = Vec::new();
    let mut padded = 0;
    for i in 0..n {
        let g = Graph::new();
        let q = g
            .sharded_string_input_producer(
                Strings::List(files.clone()),
                ProducerOptions {
                    num_epochs: Some(2),
                    seed: Some(3),
                    ..Default::default()
                },
                ShardOptions {
                    index: i,
                    count: n,
                    remainder: Remainder::Pad,
                },
            )
            .unwrap();
        let reader = g.reader(ReaderKind::text_line(0)).unwrap();
        let (key, value) = g.read(reader, q).unwrap();
        let sess = Session::new(&g);
        let coord = Coordinator::new();
        let threads = sess.start_queue_runners(&coord).unwrap();
        let mut got = Vec::new();
        loop {
            match sess.run(&[key, value], &[]) {
                Ok(v) => {
                    let k = v[0].dense().unwrap().as_slice::<Bytes>().unwrap()
                        [0]
                    .clone();
                    let v = v[1].dense().unwrap().as_slice::<Bytes>().unwrap()
                        [0]
                    .clone();
                    got.push((k, String::from_utf8(v.to_vec()).unwrap()));
                }
                Err(e) if e.kind() == Kind::OutOfRange => break,
                Err(e) => panic!("{e}"),
            }
        }
        coord.request_stop();
        coord.join(threads, JOIN).unwrap();
        // The session reports the producer's remainder counters.
        let shards = sess.shard_stats();
        assert_eq!(shards.len(), 1);
        assert_eq!(shards[0].1.dropped(), 0);
        padded += shards[0].1.padded();
        per_host.push(got);
    }
    // 8 records over 3 hosts, padded to 3 each, 2 epochs.
    assert!(per_host.iter().all(|h| h.len() == 6), "{per_host:?}");
    let mut seen: BTreeMap<&str, u64> = BTreeMap::new();
    let mut pads = 0;
    for (k, v) in per_host.iter().flatten() {
        if k.starts_with(PAD_KEY_PREFIX.as_bytes()) {
            pads += 1;
        } else {
            *seen.entry(v).or_default() += 1;
        }
    }
    assert_eq!(pads, 2);
    assert_eq!(padded, pads);
    assert_eq!(seen.len(), all.len());
    assert!(seen.values().all(|&c| c == 2), "{seen:?}");

    // With no reader reading from it, the producer cannot count.
    let g = Graph::new();
    let q = g
        .sharded_string_input_producer(
            Strings::List(files.clone()),
            ProducerOptions {
                seed: Some(1),
                ..Default::default()
            },
            ShardOptions {
                index: 0,
                count: 2,
                remainder: Remainder::Drop,
            },
        )
        .unwrap();
    let row = g.dequeue(q).unwrap()[0];
    let sess = Session::new(&g);
    let coord = Coordinator::new();
    let e = sess
        .start_queue_runners(&coord)
        .and_then(|_| sess.run(&[row], &[]).map(|_| ()))
        .unwrap_err();
    assert_eq!(e.kind(), Kind::FailedPrecondition, "{e}");
    assert!(e.to_string().contains("no reader"), "{e}");
    // A shuffle across hosts needs a seed.
    let e = g
        .sharded_string_input_producer(
            Strings::List(files),
            ProducerOptions::default(),
            ShardOptions {
                index: 0,
                count: 2,
                remainder: Remainder::Drop,
            },
        )
        .unwrap_err();
    assert_eq!(e.kind(), Kind::InvalidArgument);
}
