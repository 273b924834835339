//! Sharding in the pipeline: `string_input_producer(..).shard(i, N)`
//! feeding a reader and a batching stage. N hosts, as threads and as
//! processes, over the same files read the dataset exactly once per
//! epoch between them, every host the same number of records and
//! batches, for N = 1, 2, 3, 7 and files that do not divide evenly.

use std::collections::BTreeMap;
use std::process::Command;
use std::time::Duration;

use bytes::Bytes;
use feedstock::coord::{Coordinator, Pipeline};
use feedstock::input::shard::{epoch_order, plan_epoch, Remainder, Shard};
use feedstock::input::{batch, string_input_producer};
use feedstock::reader::{
    Reader, TextLineReader, TfRecordReader, WorkQueue, PAD_KEY_PREFIX,
};
use feedstock::{DType, Kind};

const EPOCHS: u64 = 3;
const BATCH: usize = 4;
const SEED: u64 = 11;
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

/// What one host delivered: its batches' (key, value) records, in order,
/// the sizes of its batches, and its remainder counters.
struct Host {
    records: Vec<(String, String)>,
    batch_sizes: Vec<usize>,
    dropped: u64,
    padded: u64,
    skipped: u64,
}

/// Host `index` of `count`: producer → one reader thread → batch.
fn run_host(
    files: &[String],
    index: usize,
    count: usize,
    remainder: Remainder,
) -> Host {
    let mut pipeline = Pipeline::new();
    let mut producer = string_input_producer(&mut pipeline, files.to_vec());
    producer
        .num_epochs(EPOCHS)
        .seed(SEED)
        .shard(index, count)
        .remainder(remainder)
        .count_records_with(|| Reader::new(TextLineReader::new()));
    let queue = producer.build().unwrap();
    let stats = producer.shard_stats().unwrap();
    let reader = Reader::new(TextLineReader::new());
    let r = reader.clone();
    let batches = batch(&mut pipeline, move || {
        let rec = r.read(&queue)?;
        Ok(vec![
            feedstock::Tensor::scalar(Bytes::from(rec.key)).into(),
            feedstock::Tensor::scalar(rec.value).into(),
        ])
    })
    .dtypes([DType::String, DType::String])
    .names(["key", "value"])
    .batch_size(BATCH)
    .num_threads(1)
    .allow_smaller_final_batch(true)
    .build()
    .unwrap();
    let coord = Coordinator::new();
    let threads = pipeline.start(&coord).unwrap();
    let mut records = Vec::new();
    let mut batch_sizes = Vec::new();
    for b in batches.iter() {
        let b = b.unwrap();
        let keys = b
            .tensor("key")
            .unwrap()
            .as_slice::<Bytes>()
            .unwrap()
            .to_vec();
        let values = b
            .tensor("value")
            .unwrap()
            .as_slice::<Bytes>()
            .unwrap()
            .to_vec();
        batch_sizes.push(keys.len());
        for (k, v) in keys.iter().zip(&values) {
            records.push((
                String::from_utf8(k.to_vec()).unwrap(),
                String::from_utf8(v.to_vec()).unwrap(),
            ));
        }
    }
    coord.request_stop();
    coord.join(threads, JOIN).unwrap();
    Host {
        records,
        batch_sizes,
        dropped: stats.dropped(),
        padded: stats.padded(),
        skipped: reader.num_records_skipped(),
    }
}

/// The records every host yields in each epoch, as the hosts must agree.
fn targets(
    files: &[String],
    sizes: &[u64],
    n: usize,
    remainder: Remainder,
) -> Vec<u64> {
    (0..EPOCHS)
        .map(|e| {
            let order = epoch_order(files.len(), SEED, e, true);
            let t: Vec<u64> = (0..n)
                .map(|i| {
                    plan_epoch(
                        &order,
                        files,
                        sizes,
                        Shard::new(i, n).unwrap(),
                        remainder,
                    )
                    .target
                })
                .collect();
            assert!(t.iter().all(|&x| x == t[0]), "hosts disagree: {t:?}");
            t[0]
        })
        .collect()
}

/// Checks what `hosts` delivered against the dataset, epoch by epoch.
fn check(
    hosts: &[Host],
    files: &[String],
    sizes: &[u64],
    all: &[String],
    remainder: Remainder,
) {
    let n = hosts.len();
    let targets = targets(files, sizes, n, remainder);
    let per_host: u64 = targets.iter().sum();
    let total = all.len() as u64;
    for (i, h) in hosts.iter().enumerate() {
        assert_eq!(h.records.len() as u64, per_host, "host {i} of {n}");
        // Equal work: the same batches on every host.
        assert_eq!(h.batch_sizes, hosts[0].batch_sizes, "host {i} of {n}");
    }
    let mut start = 0usize;
    let (mut dropped, mut padded) = (0u64, 0u64);
    for (e, &t) in targets.iter().enumerate() {
        let mut seen: BTreeMap<&str, u64> = BTreeMap::new();
        for h in hosts {
            for (key, value) in &h.records[start..start + t as usize] {
                if key.starts_with(PAD_KEY_PREFIX) {
                    // A padding record repeats a real record.
                    assert!(all.contains(value), "{key} {value}");
                    padded += 1;
                    continue;
                }
                *seen.entry(value).or_default() += 1;
            }
        }
        assert!(seen.values().all(|&c| c == 1), "epoch {e}: {seen:?}");
        match remainder {
            Remainder::Pad => {
                assert_eq!(seen.len() as u64, total, "epoch {e}");
            }
            Remainder::Drop => {
                assert_eq!(seen.len() as u64, t * n as u64, "epoch {e}");
                dropped += total - seen.len() as u64;
            }
        }
        start += t as usize;
    }
    assert_eq!(hosts.iter().map(|h| h.dropped).sum::<u64>(), dropped);
    assert_eq!(hosts.iter().map(|h| h.padded).sum::<u64>(), padded);
}

fn threads(sizes: &[u64], n: usize, remainder: Remainder) {
    let dir = tempfile::tempdir().unwrap();
    let (files, all) = dataset(dir.path(), sizes);
    let hosts: Vec<Host> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..n)
            .map(|i| {
                let files = &files;
                s.spawn(move || run_host(files, i, n, remainder))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    check(&hosts, &files, sizes, &all, remainder);
    let record_level = files.len() < n;
    let skipped: u64 = hosts.iter().map(|h| h.skipped).sum();
    assert_eq!(
        skipped > 0,
        record_level,
        "{n} hosts, {} files",
        files.len()
    );
}

/// 21 records in 5 files: file level for 1, 2 and 3 hosts, record level
/// for 7.
const SIZES: [u64; 5] = [4, 7, 1, 3, 6];

#[test]
fn hosts_as_threads_read_everything_once_per_epoch_dropping_the_remainder() {
    for n in [1, 2, 3, 7] {
        threads(&SIZES, n, Remainder::Drop);
    }
}

#[test]
fn hosts_as_threads_read_everything_once_per_epoch_padding_the_remainder() {
    for n in [1, 2, 3, 7] {
        threads(&SIZES, n, Remainder::Pad);
    }
}

#[test]
fn record_level_with_few_uneven_files() {
    // Two files over three hosts: every host walks both, keeping every
    // third record of the epoch.
    threads(&[5, 3], 3, Remainder::Pad);
    threads(&[5, 3], 3, Remainder::Drop);
}

/// The child side of the process test: a host that prints what it
/// delivered, when started by the test below.
#[test]
fn child_host() {
    let Ok(spec) = std::env::var("FEEDSTOCK_SHARD_CHILD") else {
        return;
    };
    let mut parts = spec.split(';');
    let index: usize = parts.next().unwrap().parse().unwrap();
    let count: usize = parts.next().unwrap().parse().unwrap();
    let files: Vec<String> = parts.map(str::to_owned).collect();
    let host = run_host(&files, index, count, Remainder::Pad);
    let mut out = String::new();
    for (k, v) in &host.records {
        out.push_str(&format!("R\t{k}\t{v}\n"));
    }
    for s in &host.batch_sizes {
        out.push_str(&format!("B\t{s}\n"));
    }
    out.push_str(&format!("S\t{}\t{}\n", host.dropped, host.padded));
    std::fs::write(std::env::var("FEEDSTOCK_SHARD_OUT").unwrap(), out)
        .unwrap();
}

#[test]
fn hosts_as_processes_read_everything_once_per_epoch() {
    if std::env::var("FEEDSTOCK_SHARD_CHILD").is_ok() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (files, all) = dataset(dir.path(), &SIZES);
    let n = 3;
    let children: Vec<_> = (0..n)
        .map(|i| {
            let out = dir.path().join(format!("host-{i}.out"));
            let child = Command::new(std::env::current_exe().unwrap())
                .args(["--exact", "child_host", "--test-threads", "1"])
                .env(
                    "FEEDSTOCK_SHARD_CHILD",
                    format!("{i};{n};{}", files.join(";")),
                )
                .env("FEEDSTOCK_SHARD_OUT", &out)
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap();
            (child, out)
        })
        .collect();
    let hosts: Vec<Host> = children
        .into_iter()
        .map(|(mut child, out)| {
            assert!(child.wait().unwrap().success());
            let text = std::fs::read_to_string(out).unwrap();
            let mut h = Host {
                records: Vec::new(),
                batch_sizes: Vec::new(),
                dropped: 0,
                padded: 0,
                skipped: 0,
            };
            for line in text.lines() {
                let f: Vec<&str> = line.split('\t').collect();
                match f[0] {
                    "R" => h.records.push((f[1].to_owned(), f[2].to_owned())),
                    "B" => h.batch_sizes.push(f[1].parse().unwrap()),
                    "S" => {
                        h.dropped = f[1].parse().unwrap();
                        h.padded = f[2].parse().unwrap();
                    }
                    _ => panic!("{line}"),
                }
            }
            h
        })
        .collect();
    check(&hosts, &files, &SIZES, &all, Remainder::Pad);
}

#[test]
fn record_level_tfrecord_hosts_skip_each_others_records() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("one.tfrecord");
    let mut w = feedstock::io::tfrecord::WriterBuilder::new()
        .from_writer(std::fs::File::create(&path).unwrap());
    for i in 0..10u32 {
        w.write_record(format!("rec{i}").as_bytes()).unwrap();
    }
    w.finish().unwrap();
    let file = path.to_str().unwrap().to_owned();
    let mut got = Vec::new();
    for i in 0..4 {
        let mut pipeline = Pipeline::new();
        let queue = string_input_producer(&mut pipeline, [file.clone()])
            .num_epochs(1)
            .shuffle(false)
            .shard(i, 4)
            .record_counts(vec![10])
            .build()
            .unwrap();
        let coord = Coordinator::new();
        let threads = pipeline.start(&coord).unwrap();
        let reader = Reader::new(TfRecordReader::new());
        let mut mine = Vec::new();
        loop {
            match reader.read(&queue) {
                Ok(r) => mine.push((r.key, r.value)),
                Err(e) if e.is_out_of_range() => break,
                Err(e) => panic!("{e}"),
            }
        }
        coord.join(threads, JOIN).unwrap();
        // 10 records over 4 hosts, dropping: 2 each.
        assert_eq!(mine.len(), 2, "host {i}");
        assert_eq!(reader.num_records_produced(), 2);
        got.extend(mine);
    }
    let values: Vec<&[u8]> = got.iter().map(|(_, v)| &v[..]).collect();
    let want: Vec<Vec<u8>> = [0, 4, 1, 5, 2, 6, 3, 7]
        .iter()
        .map(|i| format!("rec{i}").into_bytes())
        .collect();
    assert_eq!(values, want.iter().map(Vec::as_slice).collect::<Vec<_>>());
    // Keys name the records' real byte offsets (20 bytes a record).
    assert!(got[1].0.ends_with(":80"), "{}", got[1].0);
}

#[test]
fn sharding_is_refused_without_what_it_needs() {
    let mut pipeline = Pipeline::new();
    let e = string_input_producer(&mut pipeline, ["a", "b"])
        .shard(0, 2)
        .seed(1)
        .build()
        .unwrap_err();
    assert_eq!(e.kind(), Kind::InvalidArgument);
    assert!(e.to_string().contains("record count"), "{e}");
    let e = string_input_producer(&mut pipeline, ["a", "b"])
        .shard(0, 2)
        .record_counts(vec![1, 1])
        .build()
        .unwrap_err();
    assert!(e.to_string().contains("seed"), "{e}");
    let e = string_input_producer(&mut pipeline, ["a", "b"])
        .shard(2, 2)
        .build()
        .unwrap_err();
    assert_eq!(e.kind(), Kind::InvalidArgument);
    let e = string_input_producer(&mut pipeline, ["a", "b"])
        .shard(0, 2)
        .seed(1)
        .record_counts(vec![1])
        .build()
        .unwrap_err();
    assert!(e.to_string().contains("1 record counts for 2 files"), "{e}");
    let e = string_input_producer(&mut pipeline, ["a", "b"])
        .shard(0, 2)
        .build_resumable()
        .unwrap_err();
    assert_eq!(e.kind(), Kind::Unimplemented);
}

#[test]
fn a_plain_queue_of_work_units_is_read_by_any_reader() {
    // A unit that cuts a file short, through a queue of strings.
    let dir = tempfile::tempdir().unwrap();
    let (files, _) = dataset(dir.path(), &[6]);
    let unit = feedstock::reader::WorkUnit::file(files[0].clone())
        .every(2, 1)
        .limit(2)
        .pad(true);
    struct One(std::sync::Mutex<Option<String>>);
    impl WorkQueue for One {
        fn next_work(&self) -> feedstock::Result<String> {
            self.0
                .lock()
                .unwrap()
                .take()
                .ok_or_else(|| feedstock::Error::out_of_range("done"))
        }
    }
    let q = One(std::sync::Mutex::new(Some(unit.encode())));
    let reader = Reader::new(TextLineReader::new());
    let a = reader.read(&q).unwrap();
    let b = reader.read(&q).unwrap();
    assert_eq!(a.key, format!("{PAD_KEY_PREFIX}{}:2", files[0]));
    assert_eq!(&a.value[..], b"f0-r1");
    assert_eq!(&b.value[..], b"f0-r3");
    assert!(reader.read(&q).unwrap_err().is_out_of_range());
    assert_eq!(reader.num_records_skipped(), 2);
    assert_eq!(reader.num_work_units_completed(), 1);
}
