//! The [`Reader`] wrapper over a file on disk, taking records
//! `read_up_to(256)` at a time as the `feedstock bench` workers do, for
//! each built-in format with a baseline doing the bare reading of the
//! same file in the same run:
//!
//! - text lines (`TextLineReader`) against `BufReader::read_until`;
//! - fixed-length records (`FixedLengthRecordReader`, CIFAR-10 sized)
//!   against `BufReader::read_exact`;
//! - TFRecords (`TfRecordReader`) against the bare
//!   `io::tfrecord::Reader` (framing and both CRCs, no keys, no lock).
//!
//! The difference is the wrapper's own work: the lock, the work queue,
//! a key (`FILE:N`) and a `Bytes` per record, and the batch vector.
//!
//! `cargo bench -p feedstock --bench reader -- --warm-up-time 1
//! --measurement-time 3`

// Benchmarks are a binary of their own; lints for public library items do
// not apply.
#![allow(missing_docs)]

use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;

use bytes::Bytes;
use criterion::{
    black_box, criterion_group, criterion_main, Criterion, Throughput,
};
use feedstock::io::tfrecord::{ReaderBuilder, WriterBuilder};
use feedstock::reader::{
    FixedLengthRecordReader, Reader, RecordReader, TextLineReader,
    TfRecordReader, WorkQueue,
};
use feedstock::{Error, Result};
use parking_lot::Mutex;

/// Records per `read_up_to` call.
const BATCH: usize = 256;

/// Lines of the text file (about 4 MB).
const LINES: usize = 100_000;

/// CIFAR-10's record: a label byte and a 32×32×3 image.
const FIXED_LEN: usize = 3073;
/// Records of the fixed-length file (about 6 MB).
const FIXED_RECORDS: usize = 2_000;

/// Bytes per TFRecord record, and records in the file (about 4 MB).
const TF_LEN: usize = 1024;
const TF_RECORDS: usize = 4_096;

/// A work queue holding a fixed list of files, then the end of input:
/// the wrapper's cost without a filename queue's.
struct Files(Mutex<VecDeque<String>>);

impl Files {
    fn one(path: &str) -> Files {
        Files(Mutex::new(VecDeque::from([path.to_owned()])))
    }
}

impl WorkQueue for Files {
    fn next_work(&self) -> Result<String> {
        self.0
            .lock()
            .pop_front()
            .ok_or_else(|| Error::out_of_range("no more files"))
    }
}

/// Reads the whole file through a fresh wrapper, `BATCH` records at a
/// time; returns the records' total length.
fn wrapper_total(make: impl RecordReader + 'static, path: &str) -> usize {
    let reader = Reader::new(make);
    let files = Files::one(path);
    let mut n = 0;
    loop {
        match reader.read_up_to(&files, BATCH) {
            Ok(batch) => {
                n += batch.iter().map(|r| r.value.len()).sum::<usize>()
            }
            Err(e) if e.is_out_of_range() => return n,
            Err(e) => panic!("{e}"),
        }
    }
}

/// As [`wrapper_total`], one record at a time with `read`.
fn wrapper_total_each(make: impl RecordReader + 'static, path: &str) -> usize {
    let reader = Reader::new(make);
    let files = Files::one(path);
    let mut n = 0;
    loop {
        match reader.read(&files) {
            Ok(record) => n += record.value.len(),
            Err(e) if e.is_out_of_range() => return n,
            Err(e) => panic!("{e}"),
        }
    }
}

/// As [`wrapper_total`], with `read_batch` (no key strings).
fn wrapper_total_batch(
    make: impl RecordReader + 'static,
    path: &str,
) -> usize {
    let reader = Reader::new(make);
    let files = Files::one(path);
    let mut n = 0;
    loop {
        match reader.read_batch(&files, BATCH) {
            Ok(batch) => {
                n += batch.values().iter().map(|v| v.len()).sum::<usize>()
            }
            Err(e) if e.is_out_of_range() => return n,
            Err(e) => panic!("{e}"),
        }
    }
}

fn path_str(p: &Path) -> String {
    p.to_str().unwrap().to_owned()
}

/// CSV-like lines of 20 to 50 bytes.
fn write_text(path: &Path) -> usize {
    let mut w = std::io::BufWriter::new(File::create(path).unwrap());
    let mut data = 0;
    for i in 0..LINES {
        let line = format!("{i},{}.25,label-{}", i * 7 % 1000, i % 10);
        data += line.len();
        writeln!(w, "{line}").unwrap();
    }
    w.flush().unwrap();
    data
}

fn text(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lines.csv");
    let data = write_text(&path);
    let path = path_str(&path);
    let mut g = c.benchmark_group("text_lines");
    g.throughput(Throughput::Bytes(data as u64));
    g.bench_function("baseline_bufreader_read_until", |b| {
        b.iter(|| {
            let mut src = BufReader::new(File::open(&path).unwrap());
            let (mut line, mut n) = (Vec::new(), 0);
            while src.read_until(b'\n', &mut line).unwrap() > 0 {
                n += line.strip_suffix(b"\n").unwrap_or(&line).len();
                line.clear();
            }
            assert_eq!(black_box(n), data);
        })
    });
    g.bench_function("baseline_read_until_owned_with_key", |b| {
        // What each record costs any reader that hands out owned records
        // with keys: the bare reading, plus a `Bytes` copy of the line and
        // a `FILE:N` key, collected `BATCH` at a time.
        b.iter(|| {
            let mut src = BufReader::new(File::open(&path).unwrap());
            let (mut line, mut n, mut i) = (Vec::new(), 0, 0u64);
            let mut batch = Vec::with_capacity(BATCH);
            while src.read_until(b'\n', &mut line).unwrap() > 0 {
                i += 1;
                let value = line.strip_suffix(b"\n").unwrap_or(&line);
                batch.push((
                    format!("{path}:{i}"),
                    Bytes::copy_from_slice(value),
                ));
                line.clear();
                if batch.len() == BATCH {
                    n += batch.drain(..).map(|(_, v)| v.len()).sum::<usize>();
                }
            }
            n += batch.drain(..).map(|(_, v)| v.len()).sum::<usize>();
            assert_eq!(black_box(n), data);
        })
    });
    g.bench_function("reader_read_up_to_256", |b| {
        b.iter(|| {
            let n = wrapper_total(TextLineReader::new(), &path);
            assert_eq!(black_box(n), data);
        })
    });
    g.bench_function("reader_read_batch_256", |b| {
        b.iter(|| {
            let n = wrapper_total_batch(TextLineReader::new(), &path);
            assert_eq!(black_box(n), data);
        })
    });
    g.finish();
}

fn fixed(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cifar.bin");
    let bytes: Vec<u8> = (0..FIXED_LEN * FIXED_RECORDS)
        .map(|i| (i % 251) as u8)
        .collect();
    std::fs::write(&path, &bytes).unwrap();
    let data = bytes.len();
    let path = path_str(&path);
    let mut g = c.benchmark_group("fixed_length_records");
    g.throughput(Throughput::Bytes(data as u64));
    g.bench_function("baseline_bufreader_read_exact", |b| {
        b.iter(|| {
            let mut src = BufReader::new(File::open(&path).unwrap());
            let mut record = vec![0u8; FIXED_LEN];
            let mut n = 0;
            for _ in 0..FIXED_RECORDS {
                src.read_exact(&mut record).unwrap();
                n += black_box(&record).len();
            }
            assert_eq!(n, data);
        })
    });
    g.bench_function("reader_read_up_to_256", |b| {
        b.iter(|| {
            let r = FixedLengthRecordReader::builder(FIXED_LEN as u64)
                .build()
                .unwrap();
            let n = wrapper_total(r, &path);
            assert_eq!(black_box(n), data);
        })
    });
    g.finish();
}

fn tfrecord(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("records.tfrecord");
    let mut w = WriterBuilder::new().create(&path).unwrap();
    for i in 0..TF_RECORDS {
        let r: Vec<u8> = (0..TF_LEN).map(|j| (i * 31 + j) as u8).collect();
        w.write_record(&r).unwrap();
    }
    w.finish().unwrap();
    let data = TF_LEN * TF_RECORDS;
    let path_s = path_str(&path);
    let mut g = c.benchmark_group("tfrecord_records");
    g.throughput(Throughput::Bytes(data as u64));
    g.bench_function("baseline_io_tfrecord_reader", |b| {
        b.iter(|| {
            let mut r = ReaderBuilder::new().open(&path).unwrap();
            let mut n = 0;
            while let Some(rec) = r.read_record().unwrap() {
                n += black_box(rec.value).len();
            }
            assert_eq!(n, data);
        })
    });
    g.bench_function("reader_read", |b| {
        b.iter(|| {
            let n = wrapper_total_each(TfRecordReader::new(), &path_s);
            assert_eq!(black_box(n), data);
        })
    });
    g.bench_function("reader_read_up_to_256", |b| {
        b.iter(|| {
            let n = wrapper_total(TfRecordReader::new(), &path_s);
            assert_eq!(black_box(n), data);
        })
    });
    g.bench_function("reader_read_batch_256", |b| {
        b.iter(|| {
            let n = wrapper_total_batch(TfRecordReader::new(), &path_s);
            assert_eq!(black_box(n), data);
        })
    });
    g.finish();
}

criterion_group!(benches, text, fixed, tfrecord);
criterion_main!(benches);
