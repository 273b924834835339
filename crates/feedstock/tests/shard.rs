//! Sharding across hosts: N readers with `Shard::new(i, N)`, each on its
//! own thread over the same files, together read the dataset exactly once
//! per epoch, each the same number of records (hence batches).

use std::collections::BTreeMap;

use feedstock::input::shard::{Remainder, Shard, ShardedReader};
use feedstock::io::tfrecord::WriterBuilder;
use feedstock::reader::{Reader, TextLineReader, TfRecordReader};
use feedstock::Kind;

const EPOCHS: u64 = 3;
const BATCH: usize = 4;

/// Files of uneven sizes (some empty of records is not allowed for text:
/// every file has at least one line); returns the paths and every line.
fn dataset(
    dir: &std::path::Path,
    sizes: &[usize],
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

struct HostEpoch {
    values: Vec<String>,
    pads: usize,
}

/// Runs `n` hosts on their own threads; per host, per epoch, what it read.
fn run_hosts(
    files: &[String],
    n: usize,
    remainder: Remainder,
) -> (Vec<Vec<HostEpoch>>, u64, u64) {
    let results: Vec<(Vec<HostEpoch>, u64, u64)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..n)
            .map(|i| {
                let files = files.to_vec();
                s.spawn(move || {
                    let host = ShardedReader::new(
                        files,
                        Shard::new(i, n).unwrap(),
                        || Reader::new(TextLineReader::new()),
                    )
                    .seed(42)
                    .shuffle(true)
                    .remainder(remainder)
                    .build()
                    .unwrap();
                    let epochs = (0..EPOCHS)
                        .map(|e| {
                            let mut values = Vec::new();
                            let mut pads = 0;
                            for r in host.epoch(e).unwrap() {
                                let r = r.unwrap();
                                if r.is_pad() {
                                    assert!(r.value.is_empty());
                                    pads += 1;
                                } else {
                                    values.push(
                                        String::from_utf8(r.value.to_vec())
                                            .unwrap(),
                                    );
                                }
                            }
                            HostEpoch { values, pads }
                        })
                        .collect();
                    (epochs, host.stats().dropped(), host.stats().padded())
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let dropped = results.iter().map(|r| r.1).sum();
    let padded = results.iter().map(|r| r.2).sum();
    (results.into_iter().map(|r| r.0).collect(), dropped, padded)
}

fn multiset<'a>(
    items: impl IntoIterator<Item = &'a String>,
) -> BTreeMap<&'a str, usize> {
    let mut m = BTreeMap::new();
    for i in items {
        *m.entry(i.as_str()).or_insert(0) += 1;
    }
    m
}

fn check(sizes: &[usize], n: usize) {
    let dir = tempfile::tempdir().unwrap();
    let (files, all) = dataset(dir.path(), sizes);
    let want = multiset(&all);

    // Pad: the union is the dataset exactly once, every epoch.
    let (hosts, dropped, padded) = run_hosts(&files, n, Remainder::Pad);
    assert_eq!(dropped, 0);
    let mut pads_total = 0;
    for e in 0..EPOCHS as usize {
        let got = multiset(hosts.iter().flat_map(|h| &h[e].values));
        assert_eq!(got, want, "sizes {sizes:?}, {n} hosts, epoch {e}");
        let lens: Vec<usize> = hosts
            .iter()
            .map(|h| h[e].values.len() + h[e].pads)
            .collect();
        assert!(lens.iter().all(|&l| l == lens[0]), "unequal hosts {lens:?}");
        let batches: Vec<usize> =
            lens.iter().map(|l| l.div_ceil(BATCH)).collect();
        assert!(batches.iter().all(|&b| b == batches[0]));
        pads_total += hosts.iter().map(|h| h[e].pads).sum::<usize>();
        assert_eq!(
            lens[0] * n,
            all.len() + hosts.iter().map(|h| h[e].pads).sum::<usize>()
        );
    }
    assert_eq!(padded, pads_total as u64);

    // Drop: no record twice; what is missing is exactly what was counted.
    let (hosts, dropped, padded) = run_hosts(&files, n, Remainder::Drop);
    assert_eq!(padded, 0);
    let mut read = 0;
    for e in 0..EPOCHS as usize {
        let got = multiset(hosts.iter().flat_map(|h| &h[e].values));
        assert!(got.values().all(|&c| c == 1), "a record read twice");
        assert!(got.keys().all(|k| want.contains_key(k)));
        let lens: Vec<usize> =
            hosts.iter().map(|h| h[e].values.len()).collect();
        assert!(lens.iter().all(|&l| l == lens[0]), "unequal hosts {lens:?}");
        assert!(hosts.iter().all(|h| h[e].pads == 0));
        read += lens.iter().sum::<usize>();
    }
    assert_eq!(read as u64 + dropped, all.len() as u64 * EPOCHS);
}

#[test]
fn hosts_read_the_dataset_exactly_once_per_epoch_with_many_files() {
    // 10 files: file level for every N here.
    let sizes = [5, 1, 9, 3, 3, 7, 2, 11, 4, 6];
    for n in [1, 2, 3, 7] {
        check(&sizes, n);
    }
}

#[test]
fn hosts_read_the_dataset_exactly_once_per_epoch_with_few_files() {
    // 2 files of 11 and 6 records: record level for 3 and 7 hosts.
    for n in [1, 2, 3, 7] {
        check(&[11, 6], n);
    }
    // 5 files, 7 hosts: record level, 23 records.
    check(&[4, 7, 1, 5, 6], 7);
}

#[test]
fn the_split_is_a_pure_function_of_seed_epoch_index_and_count() {
    let dir = tempfile::tempdir().unwrap();
    let (files, _) = dataset(dir.path(), &[3, 4, 5, 6, 7, 8]);
    let read = |seed: u64, epoch: u64, i: usize| -> Vec<String> {
        ShardedReader::new(files.clone(), Shard::new(i, 3).unwrap(), || {
            Reader::new(TextLineReader::new())
        })
        .seed(seed)
        .shuffle(true)
        .build()
        .unwrap()
        .epoch(epoch)
        .unwrap()
        .map(|r| r.unwrap().key)
        .collect()
    };
    assert_eq!(read(1, 2, 1), read(1, 2, 1));
    // Over a few epochs the file order changes, so the split does.
    assert!((1..6).any(|e| read(1, e, 0) != read(1, 0, 0)));
}

#[test]
fn record_level_tfrecord_sharding_skips_other_hosts_records() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("one.tfrecord");
    let mut w = WriterBuilder::new().create(&path).unwrap();
    for i in 0..10u32 {
        w.write_record(format!("rec{i}").as_bytes()).unwrap();
    }
    w.finish().unwrap();
    let file = path.to_str().unwrap().to_owned();
    let host = ShardedReader::new([file], Shard::new(2, 3).unwrap(), || {
        Reader::new(TfRecordReader::new())
    })
    .remainder(Remainder::Pad)
    .build()
    .unwrap();
    assert!(!host.is_file_level());
    let got: Vec<_> = host.epoch(0).unwrap().map(|r| r.unwrap()).collect();
    let values: Vec<&[u8]> = got.iter().map(|r| &r.value[..]).collect();
    // Records 2, 5, 8 are host 2's; 10 records over 3 hosts pad to 4.
    assert_eq!(values, [&b"rec2"[..], b"rec5", b"rec8", b""]);
    assert!(got[3].is_pad() && got[3].key == "<pad>");
    assert_eq!(host.stats().passed_over(), 7);
    assert_eq!(host.stats().padded(), 1);
}

#[test]
fn a_bad_shard_is_invalid_argument() {
    assert_eq!(Shard::new(3, 3).unwrap_err().kind(), Kind::InvalidArgument);
    assert_eq!(Shard::new(0, 0).unwrap_err().kind(), Kind::InvalidArgument);
    let e = ShardedReader::new(Vec::<String>::new(), Shard::all(), || {
        Reader::new(TextLineReader::new())
    })
    .build()
    .unwrap_err();
    assert_eq!(e.kind(), Kind::InvalidArgument);
}
