//! decode_csv throughput (MB/s of CSV text) on generated records of four
//! ints and four floats, in batches of several sizes, with a baseline in
//! the same run: `csv-core` splitting each record plus the standard
//! library's number parsing (what the `csv` crate does with typed fields).
//!
//! The data size defaults to 100 MB; set `FEEDSTOCK_BENCH_CSV_MB` to
//! change it.

// criterion_group! generates an undocumented public function.
#![allow(missing_docs)]

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use feedstock::decode::csv::{CsvDecoder, RecordDefault};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Generates about `mb` megabytes of CSV lines and returns them as
/// record slices of one buffer (as a line reader would hand them out).
fn generate(mb: usize) -> (Vec<Bytes>, usize) {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut text = String::with_capacity(mb << 20);
    let mut ends = Vec::new();
    while text.len() < mb << 20 {
        use std::fmt::Write;
        let _ = write!(
            text,
            "{},{},{},{},{:.6},{:.3},{:e},{:.2}",
            rng.gen_range(0..1_000_000),
            rng.gen_range(-1000..1000),
            rng.gen_range(0..10),
            rng.gen::<i32>(),
            rng.gen::<f32>(),
            rng.gen_range(-1e4f64..1e4),
            rng.gen::<f64>() * 1e6,
            rng.gen_range(0.0f32..100.0),
        );
        ends.push(text.len());
        text.push('\n');
    }
    let total = text.len();
    let buf = Bytes::from(text);
    let mut start = 0;
    let recs = ends
        .into_iter()
        .map(|end| {
            let r = buf.slice(start..end);
            start = end + 1;
            r
        })
        .collect();
    (recs, total)
}

fn decoder() -> CsvDecoder {
    let mut d = vec![RecordDefault::i64(0); 4];
    d.extend(vec![RecordDefault::f32(0.0); 2]);
    d.extend(vec![RecordDefault::f64(0.0); 2]);
    CsvDecoder::new(d).unwrap()
}

/// The baseline: csv-core finds the fields, std parses them, values go
/// into column vectors.
fn baseline(records: &[Bytes]) -> (Vec<Vec<i64>>, Vec<Vec<f64>>) {
    let n = records.len();
    let mut ints: Vec<Vec<i64>> =
        (0..4).map(|_| Vec::with_capacity(n)).collect();
    let mut floats: Vec<Vec<f64>> =
        (0..4).map(|_| Vec::with_capacity(n)).collect();
    let mut rdr = csv_core::Reader::new();
    let mut field = [0u8; 256];
    for rec in records {
        // An empty `input` after the record tells csv-core it has ended.
        let mut input = &rec[..];
        let (mut col, mut out) = (0, 0);
        loop {
            let (res, nin, nout) = rdr.read_field(input, &mut field[out..]);
            input = &input[nin..];
            out += nout;
            match res {
                csv_core::ReadFieldResult::InputEmpty => continue,
                csv_core::ReadFieldResult::Field { record_end } => {
                    let text = std::str::from_utf8(&field[..out]).unwrap();
                    if col < 4 {
                        ints[col].push(text.parse::<i64>().unwrap());
                    } else {
                        floats[col - 4].push(text.parse::<f64>().unwrap());
                    }
                    col += 1;
                    out = 0;
                    if record_end {
                        break;
                    }
                }
                other => panic!("unexpected {other:?}"),
            }
        }
        assert_eq!(col, 8);
        rdr.reset();
    }
    (ints, floats)
}

fn bench(c: &mut Criterion) {
    let mb = std::env::var("FEEDSTOCK_BENCH_CSV_MB")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100);
    let (records, bytes) = generate(mb);
    let dec = decoder();
    let mut g = c.benchmark_group("decode_csv");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(bytes as u64));
    for batch in [256usize, 4096] {
        g.bench_function(format!("decode_batch/{batch}"), |b| {
            b.iter(|| {
                for chunk in records.chunks(batch) {
                    let cols = dec.decode_batch(chunk).unwrap();
                    std::hint::black_box(cols);
                }
            })
        });
    }
    g.bench_function("baseline_csv_core_std_parse/4096", |b| {
        b.iter(|| {
            for chunk in records.chunks(4096) {
                std::hint::black_box(baseline(chunk));
            }
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
