//! Throughput of CIFAR-10's record path over a file of 3073-byte records,
//! in three forms, for `benches/tf/side_by_side.py`:
//!
//! - `per_record_ops`: `Reader::read`, then TensorFlow's five steps with
//!   the generic ops (`decode_raw`, slice the label, slice the image,
//!   reshape to `[3, 32, 32]`, transpose to `[32, 32, 3]`);
//! - `per_record`: `Reader::read`, then `FixedImageDecoder::decode`;
//! - `batched`: `Reader::read_batch(1024)`, then
//!   `FixedImageDecoder::decode_batch` through `RecordBatch::decode`.
//!
//! Prints one line per form: `form records seconds records_per_second`.
//!
//! `cargo run --release --example cifar_throughput -- FILE [PASSES [FORM]]`
//! (FORM: run that form only, e.g. to profile it)

use std::collections::VecDeque;
use std::error::Error;
use std::hint::black_box;
use std::sync::Mutex;
use std::time::Instant;

use feedstock::decode::fixed_image::FixedImageDecoder;
use feedstock::decode::raw::{decode_raw, ByteOrder};
use feedstock::reader::{FixedLengthRecordReader, Reader, WorkQueue};
use feedstock::transform::{slice, transpose};
use feedstock::DType;

/// mimalloc, as the CLI, the Python extension and `side_by_side` use: the
/// per-record forms allocate and free a tensor per op and record, and
/// glibc's malloc took 30% of the generic-ops form's profile.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// One form of the path: reads and decodes, returns how many records.
type Form<'a> = Box<dyn Fn(&Reader, &Files) -> feedstock::Result<usize> + 'a>;

/// The file, `passes` times, then the end of input.
struct Files(Mutex<VecDeque<String>>);

impl WorkQueue for Files {
    fn next_work(&self) -> feedstock::Result<String> {
        let next = self.0.lock().unwrap().pop_front();
        next.ok_or_else(|| feedstock::Error::out_of_range("no more files"))
    }
}

fn run(
    file: &str,
    passes: usize,
    mut body: impl FnMut(&Reader, &Files) -> feedstock::Result<usize>,
) -> Result<(usize, f64), Box<dyn Error>> {
    let files = Files(Mutex::new(vec![file.to_owned(); passes].into()));
    let reader = Reader::new(FixedLengthRecordReader::builder(3073).build()?);
    let start = Instant::now();
    let mut n = 0;
    loop {
        match body(&reader, &files) {
            Ok(k) => n += k,
            Err(e) if e.is_out_of_range() => break,
            Err(e) => return Err(e.into()),
        }
    }
    Ok((n, start.elapsed().as_secs_f64()))
}

fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(file) = args.first() else {
        return Err("usage: cifar_throughput FILE [PASSES]".into());
    };
    let passes = args.get(1).map_or(Ok(1), |p| p.parse())?;
    let dec = FixedImageDecoder::cifar10();
    let le = ByteOrder::LittleEndian;
    let forms: [(&str, Form); 3] = [
        (
            "per_record_ops",
            Box::new(|r: &Reader, f: &Files| {
                let rec = r.read(f)?;
                let raw = decode_raw(&rec.value, DType::U8, le)?;
                let label = slice(&raw, &[0], &[1])?.cast(DType::I32)?;
                let image =
                    slice(&raw, &[1], &[3072])?.reshape([3, 32, 32])?;
                black_box((label, transpose(&image, &[1, 2, 0])?));
                Ok(1)
            }),
        ),
        (
            "per_record",
            Box::new(|r: &Reader, f: &Files| {
                let rec = r.read(f)?;
                black_box(dec.decode(&rec.value)?);
                Ok(1)
            }),
        ),
        (
            "batched",
            Box::new(|r: &Reader, f: &Files| {
                let batch = r.read_batch(f, 1024)?;
                black_box(batch.decode(|recs| dec.decode_batch(recs))?);
                Ok(batch.len())
            }),
        ),
    ];
    let only = args.get(2);
    for (name, body) in &forms {
        if only.is_some_and(|o| o != name) {
            continue;
        }
        let (n, secs) = run(file, passes, body)?;
        println!("{name} {n} {secs:.4} {:.0}", n as f64 / secs);
    }
    Ok(())
}
