//! The seed's MNIST-like pipeline, built with `feedstock_tf1` from Rust
//! and run to its end: the Rust figure the Python benchmark
//! (`benches/python/mnist_pipeline.py`) compares its layers against.
//!
//! TFRecord → `parse_single_example` → `decode_raw` → cast and scale to
//! [-0.5, 0.5] → `shuffle_batch(128)`, the same graph
//! `feedstock.compat.v1` builds. Prints one line of JSON:
//! `{"examples": N, "seconds": S, "cpu_seconds": C}`, C the CPU time
//! of every thread of the process over the same span (the figure that
//! stays comparable on a shared machine).
//!
//! `cargo run --release -p feedstock-py --example mnist_plan -- [MODE]
//! EPOCHS MIN_AFTER_DEQUEUE FILE...`, MODE one of
//!
//! - `plan` (the default): the graph above, run by queue runners;
//! - `front-door`: the engine's front door, [`Dataset`] with `parse`,
//!   a Rust closure as the map (decode, cast, scale), a shuffle buffer
//!   of `MIN_AFTER_DEQUEUE` and batches of 128, two threads;
//! - `front-door-graph`: the same with the map as a [`GraphFn`] of the
//!   graph's decode-cast-scale ops, as `feedstock.Pipeline(map=...)`
//!   runs it.

use feedstock_tf1::kernels::math::BinaryOp;
use feedstock_tf1::op::{Binary, Cast, DecodeRaw, Parse, Reshape};
use std::time::Instant;

use feedstock::coord::Coordinator;
use feedstock::dataset::{Dataset, Shuffle};
use feedstock::decode::example::FeatureSpec;
use feedstock::queue::PartialShape;
use feedstock::{DType, Kind, Tensor, Value};
use feedstock_tf1::{
    BatchOptions, Graph, GraphFn, ProducerOptions, ReaderKind, Session,
    ShuffleOptions,
};

/// The allocator the extension module uses (see `src/lib.rs`), so that
/// this is the same engine the Python layers run.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// The CPU time of the whole process (every thread, those already
/// joined included), in seconds: `CLOCK_PROCESS_CPUTIME_ID`, the clock
/// Python's `time.process_time()` reads (NaN where there is none).
#[cfg(unix)]
fn process_cpu() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the call.
    let rc = unsafe {
        libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts)
    };
    if rc != 0 {
        return f64::NAN;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

#[cfg(not(unix))]
fn process_cpu() -> f64 {
    f64::NAN
}

/// Examples, seconds and CPU seconds of one run.
type Timed = (usize, f64, f64);

fn spec() -> Res<FeatureSpec> {
    Ok(FeatureSpec::builder()
        .fixed("image_raw", DType::String, [])
        .fixed("label", DType::I64, [])
        .build()?)
}

/// The front door over `files`, with `map` as its map; examples,
/// seconds and CPU seconds.
fn front_door(
    epochs: u64,
    min_after: usize,
    files: Vec<String>,
    graph: bool,
) -> Res<Timed> {
    let d = Dataset::tfrecord(files)?.parse(spec()?);
    let d = if graph {
        let g = Graph::new();
        let raw =
            g.placeholder(DType::String, Some(PartialShape::scalar()), None)?;
        let label =
            g.placeholder(DType::I64, Some(PartialShape::scalar()), None)?;
        let pixels = g.op1(
            Reshape {
                shape: Some(vec![784]),
            },
            &[g.op1(
                DecodeRaw {
                    out_type: DType::U8,
                    little_endian: true,
                },
                &[raw],
            )?],
        )?;
        let scaled = g.op1(
            Binary { op: BinaryOp::Mul },
            &[
                g.op1(Cast { dtype: DType::F32 }, &[pixels])?,
                g.scalar(1.0 / 255.0, DType::F32)?,
            ],
        )?;
        let image = g.op1(
            Binary { op: BinaryOp::Sub },
            &[scaled, g.scalar(0.5, DType::F32)?],
        )?;
        let f = GraphFn::new(
            &g,
            &[raw, label],
            &[image, g.op1(Cast { dtype: DType::I32 }, &[label])?],
        )?;
        d.map("mnist-graph", move |ex| f.call(ex))
    } else {
        d.map("mnist", |ex| {
            let raw = ex[0].dense()?.as_slice::<bytes::Bytes>()?[0].clone();
            let image: Vec<f32> = raw
                .iter()
                .map(|&b| f32::from(b) * (1.0 / 255.0) - 0.5)
                .collect();
            let label = ex[1].dense()?.scalar_value::<i64>()? as i32;
            Ok(vec![
                Value::Dense(Tensor::vector(image)),
                Value::Dense(Tensor::scalar(label)),
            ])
        })
    };
    // Timed from the start (which indexes the files), as the Python
    // benchmark times feedstock.Pipeline from its first iteration.
    let start = Instant::now();
    let cpu = process_cpu();
    let loader = d
        .shuffle(Shuffle::Buffer(min_after))
        .batch(128)
        .epochs(epochs)
        .seed(7)
        .threads(2)
        .start()?;
    let mut n = 0;
    for batch in loader {
        n += batch?.len();
    }
    Ok((n, start.elapsed().as_secs_f64(), process_cpu() - cpu))
}

fn main() -> Res<()> {
    let mut args = std::env::args().skip(1).peekable();
    let mode = match args.peek().map(String::as_str) {
        Some(m @ ("plan" | "front-door" | "front-door-graph")) => {
            let m = m.to_owned();
            args.next();
            m
        }
        _ => "plan".to_owned(),
    };
    let epochs: u64 = args.next().ok_or("EPOCHS")?.parse()?;
    let min_after: usize = args.next().ok_or("MIN_AFTER_DEQUEUE")?.parse()?;
    let files: Vec<String> = args.collect();
    if files.is_empty() {
        return Err("no files given".into());
    }
    if mode != "plan" {
        let (n, secs, cpu) =
            front_door(epochs, min_after, files, mode == "front-door-graph")?;
        print_result((n, secs, cpu));
        return Ok(());
    }
    let batch_size = 128;
    let g = Graph::new();
    let queue = g.string_input_producer(
        files.into_iter().collect::<feedstock_tf1::Strings>(),
        ProducerOptions {
            num_epochs: Some(epochs),
            ..Default::default()
        },
    )?;
    let reader = g.reader(ReaderKind::tf_record(Default::default()))?;
    let (_key, value) = g.read(reader, queue)?;
    let parsed = g.op(
        Parse {
            spec: spec()?,
            batched: false,
        },
        &[value],
    )?;
    let pixels = g.op1(
        DecodeRaw {
            out_type: DType::U8,
            little_endian: true,
        },
        &[parsed[0]],
    )?;
    let pixels = g.op1(
        Reshape {
            shape: Some(vec![784]),
        },
        &[pixels],
    )?;
    let scaled = g.op1(
        Binary { op: BinaryOp::Mul },
        &[
            g.op1(Cast { dtype: DType::F32 }, &[pixels])?,
            g.scalar(1.0 / 255.0, DType::F32)?,
        ],
    )?;
    let image = g.op1(
        Binary { op: BinaryOp::Sub },
        &[scaled, g.scalar(0.5, DType::F32)?],
    )?;
    let label = g.op1(Cast { dtype: DType::I32 }, &[parsed[1]])?;
    let batch = g.batch(
        &[vec![image, label]],
        None,
        BatchOptions {
            batch_size,
            num_threads: 2,
            capacity: min_after + 3 * batch_size,
            allow_smaller_final_batch: true,
            shuffle: Some(ShuffleOptions {
                min_after_dequeue: min_after,
                seed: Some(7),
            }),
            ..Default::default()
        },
    )?;
    let sess = Session::new(&g);
    let coord = Coordinator::new();
    let start = Instant::now();
    let cpu = process_cpu();
    let threads = sess.start_queue_runners(&coord)?;
    let mut n = 0usize;
    loop {
        match sess.run(&batch, &[]) {
            Ok(v) => n += v[1].dense()?.dims()[0],
            Err(e) if e.kind() == Kind::OutOfRange => break,
            Err(e) => return Err(e.into()),
        }
    }
    let secs = start.elapsed().as_secs_f64();
    let cpu = process_cpu() - cpu;
    coord.request_stop();
    coord.join(threads, std::time::Duration::from_secs(10))?;
    print_result((n, secs, cpu));
    Ok(())
}

fn print_result((n, secs, cpu): Timed) {
    println!(
        "{{\"examples\": {n}, \"seconds\": {secs}, \"cpu_seconds\": {cpu}}}"
    );
}
