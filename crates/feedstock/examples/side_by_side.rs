//! feedstock's half of `benches/tf/side_by_side.py`: generates the data
//! sets of the performance table deterministically, and measures each
//! workload in the forms the table compares.
//!
//! ```text
//! side_by_side gen DIR [RAW_MB]      write the data sets into DIR
//! side_by_side raw DIR               Reader over 1 KiB TFRecord records
//! side_by_side csv DIR numeric|quoted [FORM,...]
//! side_by_side parse DIR mnist|dense parse_example, batches of 1024
//! side_by_side seed DIR per_record|batched [EPOCHS]
//! side_by_side seed_parts DIR [EPOCHS]  the seed pipeline's work, by part
//! ```
//!
//! `seed` runs two producer threads and reads ahead; the environment
//! changes that for experiments: `SEED_THREADS=N`, `SEED_AHEAD=0`.
//!
//! Each run prints one line per form: `form count seconds per_second`.
//! `cifar_throughput` measures the CIFAR row.
//!
//! `cargo run --release --example side_by_side -- gen /tmp/sbs`

use std::collections::VecDeque;
use std::error::Error;
use std::fs::File;
use std::hint::black_box;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use bytes::Bytes;
use feedstock::coord::{Coordinator, Pipeline};
use feedstock::decode::csv::{CsvDecoder, RecordDefault};
use feedstock::decode::example::{
    parse_example, parse_single_example, FeatureSpec, Parsed,
};
use feedstock::input::{shuffle_batch, string_input_producer};
use feedstock::io::tfrecord::{BytesReader, WriterBuilder};
use feedstock::proto::ExampleBuilder;
use feedstock::reader::{Reader, TextLineReader, TfRecordReader, WorkQueue};
use feedstock::{DType, Result, Tensor, Value};
use prost::Message;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

type Main = std::result::Result<(), Box<dyn Error>>;

/// Files of the MNIST-like set (the seed pipeline reads them with two
/// threads).
const MNIST_FILES: usize = 4;
/// Examples in the MNIST-like set.
const MNIST_EXAMPLES: usize = 60_000;
/// Examples in the dense float set.
const DENSE_EXAMPLES: usize = 20_000;
/// Rows of each CSV file (two files per kind).
const CSV_ROWS: usize = 500_000;
/// Records per batched call.
const BATCH: usize = 1024;
/// The seed pipeline's settings.
const SEED_BATCH: usize = 128;
const SEED_MIN_AFTER: usize = 10_000;
const SEED_READ: usize = 128;

/// Files to read, in order, then the end of input.
struct Files(Mutex<VecDeque<String>>);

impl Files {
    fn new(files: impl IntoIterator<Item = String>) -> Files {
        Files(Mutex::new(files.into_iter().collect()))
    }
}

impl WorkQueue for Files {
    fn next_work(&self) -> Result<String> {
        let next = self.0.lock().unwrap().pop_front();
        next.ok_or_else(|| feedstock::Error::out_of_range("no more files"))
    }
}

fn path(dir: &str, name: &str) -> String {
    Path::new(dir).join(name).to_str().unwrap().to_owned()
}

fn report(form: &str, n: usize, start: Instant) {
    let secs = start.elapsed().as_secs_f64();
    println!("{form} {n} {secs:.4} {:.0}", n as f64 / secs);
}

/// Runs `body` until the end of input; returns how many it counted.
fn drain(mut body: impl FnMut() -> Result<usize>) -> Result<usize> {
    let mut n = 0;
    loop {
        match body() {
            Ok(k) => n += k,
            Err(e) if e.is_out_of_range() => return Ok(n),
            Err(e) => return Err(e),
        }
    }
}

fn generate(dir: &str, raw_mb: usize) -> Main {
    std::fs::create_dir_all(dir)?;
    let mut rng = ChaCha8Rng::seed_from_u64(20_261_123);
    // Raw TFRecord: 1 KiB records of random bytes.
    let mut w = WriterBuilder::new().create(path(dir, "raw.tfrecord"))?;
    let mut rec = vec![0u8; 1024];
    for _ in 0..(raw_mb << 10) {
        rng.fill(&mut rec[..]);
        w.write_record(&rec)?;
    }
    w.finish()?;
    // MNIST-like Examples: 784 raw bytes + an int64 label.
    let per = MNIST_EXAMPLES / MNIST_FILES;
    for f in 0..MNIST_FILES {
        let mut w = WriterBuilder::new()
            .create(path(dir, &format!("mnist-{f}.tfrecord")))?;
        let mut image = vec![0u8; 784];
        for i in 0..per {
            rng.fill(&mut image[..]);
            let ex = ExampleBuilder::new()
                .bytes("image_raw", image.clone())
                .int64("label", [((f * per + i) % 10) as i64])
                .build();
            w.write_record(&ex.encode_to_vec())?;
        }
        w.finish()?;
    }
    // Dense Examples: 784 floats + an int64 label.
    let mut w = WriterBuilder::new().create(path(dir, "dense.tfrecord"))?;
    for i in 0..DENSE_EXAMPLES {
        let image: Vec<f32> = (0..784).map(|_| rng.gen::<f32>()).collect();
        let ex = ExampleBuilder::new()
            .floats("image", image)
            .int64("label", [(i % 10) as i64])
            .build();
        w.write_record(&ex.encode_to_vec())?;
    }
    w.finish()?;
    // CSV: five numeric columns; three quoted strings and two numbers.
    for part in 0..2 {
        let mut out = BufWriter::new(File::create(path(
            dir,
            &format!("numeric-{part}.csv"),
        ))?);
        for _ in 0..CSV_ROWS {
            writeln!(
                out,
                "{},{},{:.6},{:.3},{}",
                rng.gen_range(0..1_000_000),
                rng.gen_range(-1000..1000),
                rng.gen::<f32>(),
                rng.gen_range(-1e4f64..1e4),
                rng.gen_range(0..10),
            )?;
        }
        out.flush()?;
        let mut out = BufWriter::new(File::create(path(
            dir,
            &format!("quoted-{part}.csv"),
        ))?);
        for _ in 0..CSV_ROWS {
            let a: u32 = rng.gen();
            let b: u16 = rng.gen();
            writeln!(
                out,
                "\"name {a:x}\",\"a, \"\"quoted\"\" {b}\",{},\"tag{}\",{:.4}",
                rng.gen_range(0..100_000),
                rng.gen_range(0..50),
                rng.gen::<f32>(),
            )?;
        }
        out.flush()?;
    }
    Ok(())
}

/// Raw TFRecord through `Reader`: per record, `read_up_to`, `read_batch`;
/// with reading the file back from the page cache as the baseline.
fn raw(dir: &str) -> Main {
    let file = path(dir, "raw.tfrecord");
    // The page-cache baseline: the file read once to have it cached, then
    // timed reading it again through one reused 1 MiB buffer (reading it
    // into a fresh buffer of its size would time the page faults of that
    // buffer instead: 0.29 GB/s on the build VM).
    page_cache_read(&file)?;
    let start = Instant::now();
    let bytes = page_cache_read(&file)?;
    report("page_cache_read", bytes >> 10, start);
    // Walking the framing over the bytes in memory (both CRCs checked).
    let data = Bytes::from(std::fs::read(&file)?);
    let start = Instant::now();
    let mut n = 0;
    for r in BytesReader::new(data) {
        black_box(r?);
        n += 1;
    }
    report("framing_in_memory", n, start);

    let new = || Reader::new(TfRecordReader::new());
    let (r, files) = (new(), Files::new([file.clone()]));
    let start = Instant::now();
    let n = drain(|| {
        black_box(r.read(&files)?);
        Ok(1)
    })?;
    report("read", n, start);
    let (r, files) = (new(), Files::new([file.clone()]));
    let start = Instant::now();
    let n = drain(|| Ok(black_box(r.read_up_to(&files, BATCH)?).len()))?;
    report("read_up_to", n, start);
    let (r, files) = (new(), Files::new([file.clone()]));
    let start = Instant::now();
    let n = drain(|| Ok(black_box(r.read_batch(&files, BATCH)?).len()))?;
    report("read_batch", n, start);
    Ok(())
}

/// Reads `file` through one 1 MiB buffer; returns its size in bytes.
fn page_cache_read(file: &str) -> std::io::Result<usize> {
    use std::io::Read;
    let mut f = File::open(file)?;
    let mut buf = vec![0u8; 1 << 20];
    let mut bytes = 0;
    loop {
        match f.read(&mut buf)? {
            0 => return Ok(bytes),
            n => bytes += black_box(n),
        }
    }
}

fn csv_decoder(kind: &str) -> Result<CsvDecoder> {
    let defaults = match kind {
        "numeric" => vec![
            RecordDefault::i64(0),
            RecordDefault::i32(0),
            RecordDefault::f32(0.0),
            RecordDefault::f64(0.0),
            RecordDefault::i32(0),
        ],
        _ => vec![
            RecordDefault::string(""),
            RecordDefault::string(""),
            RecordDefault::i32(0),
            RecordDefault::string(""),
            RecordDefault::f32(0.0),
        ],
    };
    CsvDecoder::new(defaults)
}

/// decode_csv: per line, batched, and batched on two threads (one file
/// each); only the forms in `forms` when given.
fn csv(dir: &str, kind: &str, forms: Option<&str>) -> Main {
    let run =
        |form: &str| forms.is_none_or(|f| f.split(',').any(|x| x == form));
    let files: Vec<_> = (0..2)
        .map(|p| path(dir, &format!("{kind}-{p}.csv")))
        .collect();
    let dec = csv_decoder(kind)?;
    if run("per_line") {
        let (r, q) = (
            Reader::new(TextLineReader::new()),
            Files::new(files.clone()),
        );
        let start = Instant::now();
        let n = drain(|| {
            let rec = r.read(&q)?;
            black_box(dec.decode(&rec.value, &rec.key)?);
            Ok(1)
        })?;
        report("per_line", n, start);
    }
    if run("batched") {
        let start = Instant::now();
        let n = decode_batches(&dec, files.clone())?;
        report("batched", n, start);
    }
    if run("batched_2_threads") {
        let start = Instant::now();
        let n = std::thread::scope(|s| {
            let threads: Vec<_> = files
                .iter()
                .map(|f| {
                    let dec = &dec;
                    s.spawn(move || decode_batches(dec, vec![f.clone()]))
                })
                .collect();
            threads
                .into_iter()
                .map(|t| t.join().unwrap())
                .sum::<Result<usize>>()
        })?;
        report("batched_2_threads", n, start);
    }
    Ok(())
}

/// Reads `files` in batches of `BATCH` lines and decodes each batch with
/// one call; returns how many rows.
fn decode_batches(dec: &CsvDecoder, files: Vec<String>) -> Result<usize> {
    let (r, q) = (Reader::new(TextLineReader::new()), Files::new(files));
    drain(|| {
        let batch = r.read_batch(&q, BATCH)?;
        black_box(batch.decode(|recs| dec.decode_batch(recs))?);
        Ok(batch.len())
    })
}

/// The MNIST-like files.
fn mnist_files(dir: &str) -> Vec<String> {
    (0..MNIST_FILES)
        .map(|f| path(dir, &format!("mnist-{f}.tfrecord")))
        .collect()
}

/// Runs `body` over the MNIST-like files to the end of input, `epochs`
/// times; returns the examples it counted.
fn each_epoch(
    dir: &str,
    epochs: usize,
    mut body: impl FnMut(&Files) -> Result<usize>,
) -> Result<usize> {
    let mut n = 0;
    for _ in 0..epochs {
        let q = Files::new(mnist_files(dir));
        n += drain(|| body(&q))?;
    }
    Ok(n)
}

fn mnist_spec() -> Result<FeatureSpec> {
    FeatureSpec::builder()
        .fixed("image_raw", DType::String, [])
        .fixed("label", DType::I64, [])
        .build()
}

/// parse_example over records already in memory, batches of 1024.
fn parse(dir: &str, kind: &str, passes: usize) -> Main {
    let (files, spec) = if kind == "mnist" {
        (mnist_files(dir), mnist_spec()?)
    } else {
        let spec = FeatureSpec::builder()
            .fixed("image", DType::F32, [784])
            .fixed("label", DType::I64, [])
            .build()?;
        (vec![path(dir, "dense.tfrecord")], spec)
    };
    let mut records = Vec::new();
    for f in &files {
        for r in BytesReader::new(Bytes::from(std::fs::read(f)?)) {
            records.push(r?.value);
        }
    }
    // The memory-bandwidth bound alongside: copy each batch's bytes into
    // a fresh buffer, as a parser writing its output once must.
    let start = Instant::now();
    let mut n = 0;
    for _ in 0..passes {
        for chunk in records.chunks(BATCH) {
            let len = chunk.iter().map(Bytes::len).sum();
            let mut out = Vec::<u8>::with_capacity(len);
            for r in chunk {
                out.extend_from_slice(r);
            }
            black_box(out);
            n += chunk.len();
        }
    }
    report("copy_batch_1024", n, start);
    let start = Instant::now();
    let mut n = 0;
    for _ in 0..passes {
        for chunk in records.chunks(BATCH) {
            black_box(parse_example(chunk, &spec)?);
            n += chunk.len();
        }
    }
    report("batch_1024", n, start);
    Ok(())
}

/// The seed's normalization, `cast(image, float32) * (1 / 255) - 0.5`,
/// of every image of a parsed batch, appended to `pixels`; returns the
/// labels as int32.
fn normalize(parsed: &Parsed, pixels: &mut Vec<f32>) -> Result<Tensor> {
    let images = parsed.get("image_raw").unwrap().dense()?;
    for raw in images.as_slice::<Bytes>()? {
        pixels.extend(raw.iter().map(|&b| f32::from(b) * (1.0 / 255.0) - 0.5));
    }
    parsed.get("label").unwrap().dense()?.cast(DType::I32)
}

/// The seed's pipeline: string_input_producer → TFRecordReader →
/// parse → normalize → shuffle_batch(128), 2 threads, min_after_dequeue
/// 10 000; per record or batched (`read_batch` → `parse_example` →
/// `enqueue_many`).
fn seed(dir: &str, form: &str, epochs: usize) -> Main {
    let files = mnist_files(dir);
    let start = Instant::now();
    let mut pipeline = Pipeline::new();
    let q = string_input_producer(&mut pipeline, files)
        .num_epochs(epochs as u64)
        .shuffle(true)
        .seed(1)
        .build()?;
    let ahead = std::env::var("SEED_AHEAD").map_or(true, |v| v != "0");
    let reader =
        Reader::new(TfRecordReader::builder().read_ahead(ahead).build());
    let spec = mnist_spec()?;
    let batched = form == "batched";
    let mut b = shuffle_batch(&mut pipeline, move || -> Result<Vec<Value>> {
        if batched {
            let recs = reader.read_batch(&*q, SEED_READ)?;
            let parsed = recs.decode(|r| parse_example(r, &spec))?;
            let mut pixels = Vec::with_capacity(recs.len() * 784);
            let labels = normalize(&parsed, &mut pixels)?;
            Ok(vec![
                Tensor::new([recs.len(), 784], pixels)?.into(),
                labels.into(),
            ])
        } else {
            let rec = reader.read(&*q)?;
            let parsed = parse_single_example(&rec.value, &spec, &rec.key)?;
            let mut pixels = Vec::with_capacity(784);
            let label = normalize(&parsed, &mut pixels)?;
            Ok(vec![Tensor::vector(pixels).into(), label.into()])
        }
    });
    let threads =
        std::env::var("SEED_THREADS").map_or(Ok(2), |t| t.parse())?;
    b.dtypes([DType::F32, DType::I32])
        .shapes([vec![Some(784)], vec![]])
        .batch_size(SEED_BATCH)
        .num_threads(threads)
        .capacity(SEED_MIN_AFTER + 3 * SEED_BATCH)
        .min_after_dequeue(SEED_MIN_AFTER)
        .allow_smaller_final_batch(true)
        .enqueue_many(batched);
    let batches = b.build()?;
    let coord = Coordinator::new();
    let threads = pipeline.start(&coord)?;
    let mut n = 0;
    for batch in batches.iter() {
        n += black_box(batch?).len();
    }
    coord.request_stop();
    coord.join(threads, Duration::from_secs(30))?;
    assert_eq!(n, MNIST_EXAMPLES * epochs, "every example delivered");
    report(form, n, start);
    Ok(())
}

/// The seed pipeline's work measured part by part, each on one thread,
/// with no queue between the parts: what two cores could at best do.
/// - `first_touch`: writing a shuffle queue's worth of rows (the
///   capacity, 784 floats each) into memory the process has never used,
///   as filling the queue must.
/// - `read_parse_normalize`: `read_batch` 128, `parse_example` and the
///   normalization, over every example.
/// - `queue_copies`: the two copies a shuffle queue makes of each row,
///   into a random free slot of a queue-sized pool and out of a random
///   slot into a batch of 128, with no queue around them.
fn seed_parts(dir: &str, epochs: usize) -> Main {
    const ROW: usize = 784;
    let slots = SEED_MIN_AFTER + 3 * SEED_BATCH;
    let start = Instant::now();
    let mut pool = vec![0f32; slots * ROW];
    for row in pool.chunks_mut(ROW) {
        row.fill(0.5);
    }
    report("first_touch", slots, start);
    let reader = Reader::new(TfRecordReader::new());
    let spec = mnist_spec()?;
    let mut pixels = Vec::new();
    let start = Instant::now();
    let n = each_epoch(dir, epochs, |q| {
        let recs = reader.read_batch(q, SEED_READ)?;
        let parsed = recs.decode(|r| parse_example(r, &spec))?;
        pixels.clear();
        black_box(normalize(&parsed, &mut pixels)?);
        Ok(recs.len())
    })?;
    report("read_parse_normalize", n, start);
    let start = Instant::now();
    let n = each_epoch(dir, epochs, |q| {
        let rec = reader.read(q)?;
        let parsed = parse_single_example(&rec.value, &spec, &rec.key)?;
        let mut pixels = Vec::with_capacity(784);
        black_box(normalize(&parsed, &mut pixels)?);
        black_box(pixels);
        Ok(1)
    })?;
    report("per_record_read_parse_normalize", n, start);
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut batch = vec![0f32; SEED_BATCH * ROW];
    let row = vec![0.25f32; ROW];
    let start = Instant::now();
    for _ in 0..n / SEED_BATCH {
        for _ in 0..SEED_BATCH {
            let s = rng.gen_range(0..slots);
            pool[s * ROW..(s + 1) * ROW].copy_from_slice(&row);
        }
        for out in batch.chunks_mut(ROW) {
            let s = rng.gen_range(0..slots);
            out.copy_from_slice(&pool[s * ROW..(s + 1) * ROW]);
        }
        black_box(&batch);
    }
    report("queue_copies", n / SEED_BATCH * SEED_BATCH, start);
    Ok(())
}

fn main() -> Main {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize| args.get(i).map(String::as_str);
    match (arg(0), arg(1)) {
        (Some("gen"), Some(dir)) => {
            generate(dir, arg(2).map_or(Ok(1024), str::parse)?)
        }
        (Some("raw"), Some(dir)) => raw(dir),
        (Some("csv"), Some(dir)) => {
            csv(dir, arg(2).unwrap_or("numeric"), arg(3))
        }
        (Some("parse"), Some(dir)) => parse(
            dir,
            arg(2).unwrap_or("mnist"),
            arg(3).map_or(Ok(10), str::parse)?,
        ),
        (Some("seed_parts"), Some(dir)) => {
            seed_parts(dir, arg(2).map_or(Ok(1), str::parse)?)
        }
        (Some("seed"), Some(dir)) => seed(
            dir,
            arg(2).unwrap_or("batched"),
            arg(3).map_or(Ok(1), str::parse)?,
        ),
        _ => Err("usage: side_by_side gen|raw|csv|parse|seed|seed_parts DIR \
                 [...]"
            .into()),
    }
}
