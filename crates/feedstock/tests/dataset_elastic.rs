//! Elastic resume: a checkpoint taken on N hosts resumes on M ≠ N hosts,
//! and the rest of the data arrives exactly once across the new hosts,
//! every host with the same number of batches.

use std::collections::BTreeMap;

use feedstock::dataset::{Checkpoint, Dataset, Shuffle};
use feedstock::decode::example::FeatureSpec;
use feedstock::io::tfrecord::Writer;
use feedstock::proto::Example;
use feedstock::DType;

const TOTAL: i64 = 450;

fn files(dir: &std::path::Path) -> Vec<String> {
    (0..3)
        .map(|f| {
            let path = dir.join(format!("part-{f}.tfrecord"));
            let mut w = Writer::new(std::fs::File::create(&path).unwrap());
            for i in 0..TOTAL / 3 {
                let ex =
                    Example::builder().int64("id", [f * 1000 + i]).build();
                w.write_record(&prost::Message::encode_to_vec(&ex)).unwrap();
            }
            w.finish().unwrap();
            path.to_str().unwrap().to_owned()
        })
        .collect()
}

fn dataset(files: &[String], shuffle: Shuffle, epochs: u64) -> Dataset {
    let spec = FeatureSpec::builder()
        .fixed("id", DType::I64, [])
        .build()
        .unwrap();
    Dataset::tfrecord(files.to_vec())
        .unwrap()
        .parse(spec)
        .shuffle(shuffle)
        .batch(5)
        .epochs(epochs)
        .seed(21)
        .block_size(16)
        .elastic(true)
}

fn ids(b: &feedstock::input::Batch) -> Vec<i64> {
    b.get("id")
        .unwrap()
        .dense()
        .unwrap()
        .as_slice::<i64>()
        .unwrap()
        .to_vec()
}

/// Runs `n` hosts for `batches` batches each; returns what they took and
/// each host's checkpoint.
fn run(d: &Dataset, n: usize, batches: usize) -> (Vec<i64>, Vec<Vec<u8>>) {
    let mut taken = Vec::new();
    let mut cps = Vec::new();
    for host in 0..n {
        let mut l = d.clone().shard(host, n).unwrap().start().unwrap();
        for _ in 0..batches {
            taken.extend(ids(&l.next().unwrap().unwrap()));
        }
        cps.push(l.checkpoint().unwrap().to_bytes());
    }
    (taken, cps)
}

fn elastic_case(shuffle: Shuffle, n: usize, m: usize, batches: usize) {
    let dir = tempfile::tempdir().unwrap();
    let files = files(dir.path());
    let d = dataset(&files, shuffle, 2);
    let (before, cps) = run(&d, n, batches);
    // Hosts that took as many batches hold the same state.
    assert!(cps.iter().all(|c| *c == cps[0]), "{shuffle:?}");
    let cp = Checkpoint::from_bytes(&cps[0]).unwrap();
    let mut after = Vec::new();
    let mut counts = Vec::new();
    for host in 0..m {
        let l = d.clone().shard(host, m).unwrap().resume(&cp).unwrap();
        let got: Vec<Vec<i64>> = l.map(|b| ids(&b.unwrap())).collect();
        counts.push(got.len());
        after.extend(got.concat());
    }
    assert!(counts.iter().all(|&c| c == counts[0]), "{counts:?}");
    let mut seen = BTreeMap::new();
    for id in before.iter().chain(&after) {
        *seen.entry(*id).or_insert(0) += 1;
    }
    assert_eq!(seen.len(), TOTAL as usize, "{shuffle:?} {n}->{m}");
    assert!(
        seen.values().all(|&c| c == 2),
        "{shuffle:?} {n}->{m}: an example arrived other than once per epoch"
    );
}

#[test]
fn two_hosts_resume_on_three() {
    for shuffle in [Shuffle::None, Shuffle::Buffer(40), Shuffle::Global] {
        // 3 batches of 5 on 2 hosts: 30 places taken, 420 left (÷3).
        elastic_case(shuffle, 2, 3, 3);
    }
}

#[test]
fn three_hosts_resume_on_two() {
    for shuffle in [Shuffle::None, Shuffle::Buffer(40), Shuffle::Global] {
        // 4 batches of 5 on 3 hosts: 60 places taken, 390 left (÷2).
        elastic_case(shuffle, 3, 2, 4);
    }
}

#[test]
fn a_host_resumes_exactly_where_the_world_size_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let files = files(dir.path());
    for shuffle in [Shuffle::Buffer(40), Shuffle::Global] {
        let d = dataset(&files, shuffle, 2).shard(1, 3).unwrap();
        let all: Vec<Vec<i64>> =
            d.start().unwrap().map(|b| ids(&b.unwrap())).collect();
        for stop in [0, 7, 30, 31] {
            let mut l = d.start().unwrap();
            let mut got: Vec<Vec<i64>> = (0..stop)
                .map(|_| ids(&l.next().unwrap().unwrap()))
                .collect();
            let cp = l.checkpoint().unwrap();
            drop(l);
            got.extend(d.resume(&cp).unwrap().map(|b| ids(&b.unwrap())));
            assert_eq!(got, all, "{shuffle:?} stop {stop}");
        }
    }
}

#[test]
fn elastic_and_contiguous_checkpoints_do_not_mix() {
    let dir = tempfile::tempdir().unwrap();
    let files = files(dir.path());
    let d = dataset(&files, Shuffle::Global, 1);
    let mut l = d.start().unwrap();
    l.next().unwrap().unwrap();
    let cp = l.checkpoint().unwrap();
    let e = d.clone().elastic(false).resume(&cp).unwrap_err();
    assert!(e.to_string().contains("elastic"), "{e}");
    let e = d.clone().deterministic(false).start().unwrap_err();
    assert!(e.to_string().contains("deterministic"), "{e}");
}
