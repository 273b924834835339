//! TFRecord reading and writing, and Example decoding.
//!
//! Reading 1 KiB records from memory through the zero-copy `BytesReader`
//! and through the `io::Read` path (`Reader`, which copies each record out
//! of its buffer), with the raw speed of CRC32C and of a memcpy over the
//! same bytes as the baselines; writing the same records; and prost
//! decoding of an MNIST-like `tf.train.Example` (a 784-byte image and an
//! int64 label).
//!
//! Run: `cargo bench -p feedstock --bench tfrecord -- --warm-up-time 1
//! --measurement-time 3`.

// Benchmarks are a binary of their own; lints for public library items do
// not apply.
#![allow(missing_docs)]

use bytes::Bytes;
use criterion::{
    black_box, criterion_group, criterion_main, Criterion, Throughput,
};
use feedstock::io::tfrecord::{BytesReader, Decoded, Decoder, Reader, Writer};
use feedstock::proto::Example;
use prost::Message;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const RECORD_LEN: usize = 1024;
const RECORDS: usize = 4096;

fn records() -> Vec<Vec<u8>> {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    (0..RECORDS)
        .map(|_| (0..RECORD_LEN).map(|_| rng.gen()).collect())
        .collect()
}

fn file(records: &[Vec<u8>]) -> Vec<u8> {
    let mut w = Writer::new(Vec::with_capacity(RECORDS * (RECORD_LEN + 16)));
    for r in records {
        w.write_record(r).unwrap();
    }
    w.finish().unwrap()
}

fn read(c: &mut Criterion) {
    let file = Bytes::from(file(&records()));
    let mut g = c.benchmark_group("read_1k_records");
    g.throughput(Throughput::Bytes(file.len() as u64));
    g.bench_function("baseline_crc32c", |b| {
        b.iter(|| crc32c::crc32c(black_box(&file)))
    });
    // The CRC work the reader must do: each record's data and length
    // checked in its own call, as the framing requires; with crc32c, and
    // with crc-fast, which the reader uses.
    let per_record = |crc: fn(&[u8]) -> u32| {
        let mut x = 0u32;
        for chunk in black_box(&file).chunks(RECORD_LEN + 16) {
            x ^= crc(&chunk[..8]);
            x ^= crc(&chunk[12..12 + RECORD_LEN]);
        }
        x
    };
    g.bench_function("baseline_crc32c_per_record", |b| {
        b.iter(|| per_record(crc32c::crc32c))
    });
    g.bench_function("crc_fast_per_record", |b| {
        b.iter(|| per_record(crc_fast::crc32_iscsi))
    });
    g.bench_function("baseline_memcpy", |b| {
        let mut dst = vec![0u8; file.len()];
        b.iter(|| {
            dst.copy_from_slice(black_box(&file));
            black_box(dst[0])
        })
    });
    g.bench_function("decoder_walk", |b| {
        // The state machine alone: framing and both CRCs, no Record made.
        b.iter(|| {
            let mut dec = Decoder::new();
            let (mut at, mut n) = (0, 0);
            loop {
                let (what, used) = dec.decode(&file[at..]).unwrap();
                at += used;
                match what {
                    Decoded::Record(f) => n += f.offset,
                    Decoded::End => break,
                    Decoded::NeedMore => {}
                    Decoded::Skipped(s) => unreachable!("skipped {s:?}"),
                }
            }
            black_box(n)
        })
    });
    g.bench_function("bytes_reader_zero_copy", |b| {
        b.iter(|| {
            let mut n = 0;
            for r in BytesReader::new(file.clone()) {
                n += r.unwrap().value.len();
            }
            assert_eq!(n, RECORDS * RECORD_LEN);
        })
    });
    g.bench_function("reader_io_read", |b| {
        b.iter(|| {
            let mut n = 0;
            for r in Reader::new(&file[..]) {
                n += r.unwrap().value.len();
            }
            assert_eq!(n, RECORDS * RECORD_LEN);
        })
    });
    g.finish();
}

fn write(c: &mut Criterion) {
    let records = records();
    let mut g = c.benchmark_group("write_1k_records");
    g.throughput(Throughput::Bytes((RECORDS * (RECORD_LEN + 16)) as u64));
    g.bench_function("writer_to_vec", |b| {
        let mut buf = Vec::with_capacity(RECORDS * (RECORD_LEN + 16));
        b.iter(|| {
            buf.clear();
            let mut w = Writer::new(&mut buf);
            for r in &records {
                w.write_record(r).unwrap();
            }
            w.finish().unwrap();
        })
    });
    g.finish();
}

fn decode_example(c: &mut Criterion) {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let image: Vec<u8> = (0..784).map(|_| rng.gen()).collect();
    let wire = Bytes::from(
        Example::builder()
            .bytes("image_raw", &image)
            .int64("label", [7])
            .build()
            .encode_to_vec(),
    );
    let mut g = c.benchmark_group("decode_mnist_example");
    g.throughput(Throughput::Elements(1));
    g.bench_function("prost_decode", |b| {
        b.iter(|| Example::decode(black_box(wire.clone())).unwrap())
    });
    g.finish();
}

criterion_group!(benches, read, write, decode_example);
criterion_main!(benches);
