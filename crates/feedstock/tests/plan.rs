//! The seed guide's pipelines built as a `plan::Graph` and run by a
//! `plan::Session`: values, order where defined, exact counts with
//! `num_epochs`, OutOfRange at the end, errors naming the file and
//! record, and `close` waking blocked runs.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use bytes::Bytes;
use feedstock::coord::Coordinator;
use feedstock::decode::csv::RecordDefault;
use feedstock::decode::example::FeatureSpec;
use feedstock::io::tfrecord::WriterBuilder;
use feedstock::io::Compression;
use feedstock::plan::{
    BatchOptions, CsvOptions, Graph, Output, ProducerOptions, ReaderKind,
    RunOptions, Session, ShuffleOptions, SliceDim, Strings,
};
use feedstock::proto::ExampleBuilder;
use feedstock::{DType, Kind, Result, Tensor, Value};

const JOIN: Duration = Duration::from_secs(30);

fn ordered(num_epochs: u64) -> ProducerOptions {
    ProducerOptions {
        num_epochs: Some(num_epochs),
        shuffle: false,
        ..Default::default()
    }
}

fn path(dir: &Path, name: &str) -> String {
    dir.join(name).to_str().unwrap().to_owned()
}

/// Runs `fetches` until OutOfRange, returning every run's values.
fn drain(sess: &Session, fetches: &[Output]) -> Result<Vec<Vec<Value>>> {
    let mut out = Vec::new();
    loop {
        match sess.run(fetches, &[]) {
            Ok(v) => out.push(v),
            Err(e) if e.kind() == Kind::OutOfRange => return Ok(out),
            Err(e) => return Err(e),
        }
    }
}

fn i64s(v: &Value) -> Vec<i64> {
    v.dense().unwrap().as_slice::<i64>().unwrap().to_vec()
}

fn i32s(v: &Value) -> Vec<i32> {
    v.dense().unwrap().as_slice::<i32>().unwrap().to_vec()
}

fn f32s(v: &Value) -> Vec<f32> {
    v.dense().unwrap().as_slice::<f32>().unwrap().to_vec()
}

fn write_csv(dir: &Path) -> Vec<String> {
    let a = path(dir, "file0.csv");
    let b = path(dir, "file1.csv");
    std::fs::write(&a, "1,2,3,4,5\n6,7,8,9,10\n").unwrap();
    std::fs::write(&b, "11,12,13,14,15\n").unwrap();
    vec![a, b]
}

/// The guide's CSV block: string_input_producer → TextLineReader →
/// decode_csv → stack, fetched directly by the main thread.
#[test]
fn csv_read_in_the_main_thread() -> Result<()> {
    let dir = tempfile::tempdir().unwrap();
    let files = write_csv(dir.path());
    let g = Graph::new();
    let q =
        g.string_input_producer(Strings::List(files.clone()), ordered(2))?;
    let reader = g.reader(ReaderKind::TextLine {
        skip_header_lines: 0,
    })?;
    let (key, value) = g.read(reader, q)?;
    let defaults = (0..5).map(|_| RecordDefault::i32(1)).collect();
    let cols = g.decode_csv(value, defaults, CsvOptions::default())?;
    let features = g.stack(&cols[..4], 0)?;
    assert_eq!(g.shape(features).unwrap().dims(), &[Some(4)]);
    assert_eq!(features.dtype(), DType::I32);

    let sess = Session::new(&g);
    let coord = Coordinator::new();
    let threads = sess.start_queue_runners(&coord)?;
    let rows = drain(&sess, &[features, cols[4], key])?;
    let got: Vec<(Vec<i32>, i32, String)> = rows
        .iter()
        .map(|r| {
            let k = r[2].dense().unwrap().scalar_value::<Bytes>().unwrap();
            (
                i32s(&r[0]),
                i32s(&r[1])[0],
                String::from_utf8(k.to_vec()).unwrap(),
            )
        })
        .collect();
    let epoch = vec![
        (vec![1, 2, 3, 4], 5, format!("{}:1", files[0])),
        (vec![6, 7, 8, 9], 10, format!("{}:2", files[0])),
        (vec![11, 12, 13, 14], 15, format!("{}:1", files[1])),
    ];
    let want: Vec<_> = epoch.iter().chain(&epoch).cloned().collect();
    assert_eq!(got, want);
    coord.request_stop();
    coord.join(threads, JOIN)
}

#[test]
fn csv_error_names_file_and_line() -> Result<()> {
    let dir = tempfile::tempdir().unwrap();
    let f = path(dir.path(), "bad.csv");
    std::fs::write(&f, "1,2\n3,x\n").unwrap();
    let g = Graph::new();
    let q =
        g.string_input_producer(Strings::List(vec![f.clone()]), ordered(1))?;
    let reader = g.reader(ReaderKind::TextLine {
        skip_header_lines: 0,
    })?;
    let (_, value) = g.read(reader, q)?;
    let cols = g.decode_csv(
        value,
        vec![RecordDefault::i32(0), RecordDefault::required(DType::I32)?],
        CsvOptions::default(),
    )?;
    let sum = g.add_op(cols[0], cols[1])?;
    let sess = Session::new(&g);
    let coord = Coordinator::new();
    let threads = sess.start_queue_runners(&coord)?;
    assert_eq!(i32s(&sess.run(&[sum], &[])?[0]), vec![3]);
    let err = sess.run(&[sum], &[]).unwrap_err();
    assert_eq!(err.kind(), Kind::InvalidArgument);
    assert_eq!(err.key(), Some(format!("{f}:2").as_str()), "{err}");
    coord.request_stop();
    coord.join(threads, JOIN)
}

/// CIFAR-10-like fixed-length records: label byte + depth-major image,
/// strided_slice, cast, reshape, transpose, then a batch.
#[test]
fn fixed_length_cifar_like() -> Result<()> {
    let dir = tempfile::tempdir().unwrap();
    let (depth, height, width) = (3usize, 2usize, 2usize);
    let image_bytes = depth * height * width;
    let mut data = Vec::new();
    for label in 0..6u8 {
        data.push(label);
        for i in 0..image_bytes {
            data.push(label * 20 + i as u8);
        }
    }
    let f = path(dir.path(), "data_batch_1.bin");
    std::fs::write(&f, &data).unwrap();

    let g = Graph::new();
    let q = g.string_input_producer(Strings::List(vec![f]), ordered(1))?;
    let reader = g.reader(ReaderKind::FixedLength {
        record_bytes: 1 + image_bytes as u64,
        header_bytes: 0,
        footer_bytes: 0,
        hop_bytes: 0,
        compression: Compression::None,
    })?;
    let (_, value) = g.read(reader, q)?;
    let record = g.decode_raw(value, DType::U8, true)?;
    let label = g.cast(
        g.strided_slice_ranges(record, &[0], &[1], &[1])?,
        DType::I32,
    )?;
    let major = g.reshape(
        g.strided_slice_ranges(record, &[1], &[1 + image_bytes as i64], &[1])?,
        &[depth as i64, height as i64, width as i64],
    )?;
    let image = g.transpose(major, &[1, 2, 0])?;
    let image = g.cast(image, DType::F32)?;
    assert_eq!(
        g.shape(image).unwrap().dims(),
        &[Some(height), Some(width), Some(depth)]
    );
    let label = g.reshape(label, &[])?;
    let batch = g.batch(
        &[vec![image, label]],
        None,
        BatchOptions {
            batch_size: 4,
            allow_smaller_final_batch: true,
            ..Default::default()
        },
    )?;
    assert_eq!(
        g.shape(batch[0]).unwrap().dims(),
        &[None, Some(2), Some(2), Some(3)]
    );
    let sess = Session::new(&g);
    let coord = Coordinator::new();
    let threads = sess.start_queue_runners(&coord)?;
    let batches = drain(&sess, &batch)?;
    assert_eq!(batches.len(), 2);
    let labels: Vec<i32> = batches.iter().flat_map(|b| i32s(&b[1])).collect();
    assert_eq!(labels, vec![0, 1, 2, 3, 4, 5]);
    let first = f32s(&batches[0][0]);
    // Pixel (0, 0) of image 1, channels r g b: depth-major offsets 0, 4, 8.
    assert_eq!(&first[12..15], &[20.0, 24.0, 28.0]);
    coord.request_stop();
    coord.join(threads, JOIN)
}

fn write_examples(dir: &Path, shards: usize, per: usize) -> Vec<String> {
    let mut files = Vec::new();
    for s in 0..shards {
        let f = path(dir, &format!("train-{s}.tfrecord"));
        let mut w = WriterBuilder::new().create(&f).unwrap();
        for i in 0..per {
            let label = (s * per + i) as i64;
            let pixels: Vec<u8> = (0..4).map(|p| (label as u8) + p).collect();
            let ex = ExampleBuilder::new()
                .int64("label", [label])
                .bytes("image_raw", pixels)
                .int64("tags", (0..label % 3).collect::<Vec<_>>())
                .build();
            w.write_record(&prost::Message::encode_to_vec(&ex)).unwrap();
        }
        w.finish().unwrap();
        files.push(f);
    }
    files
}

fn mnist_spec() -> FeatureSpec {
    FeatureSpec::builder()
        .fixed("image_raw", DType::String, [])
        .fixed("label", DType::I64, [])
        .var_len("tags", DType::I64)
        .build()
        .unwrap()
}

/// The guide's TFRecord pipeline: match_filenames_once → producer with
/// num_epochs → TFRecordReader → parse_single_example → decode_raw,
/// cast, normalize → shuffle_batch. Every example arrives exactly
/// num_epochs times.
#[test]
fn tfrecord_shuffle_batch_exact_epochs() -> Result<()> {
    let dir = tempfile::tempdir().unwrap();
    write_examples(dir.path(), 3, 20);
    let g = Graph::new();
    let files =
        g.match_filenames_once(&path(dir.path(), "train-*.tfrecord"))?;
    let q = g.string_input_producer(
        files,
        ProducerOptions {
            num_epochs: Some(3),
            seed: Some(5),
            ..Default::default()
        },
    )?;
    let reader = g.reader(ReaderKind::TfRecord {
        compression: Compression::None,
    })?;
    let (_, value) = g.read(reader, q)?;
    let f = g.parse_single_example(value, mnist_spec())?;
    assert!(f[2].is_sparse());
    let image = g.decode_raw(f[0], DType::U8, true)?;
    let image = g.reshape(image, &[4])?;
    let image = g.cast(image, DType::F32)?;
    let image = g.sub(
        g.mul(image, g.scalar(1.0 / 255.0, DType::F32)?)?,
        g.scalar(0.5, DType::F32)?,
    )?;
    let batch = g.batch(
        &[vec![image, f[1]]],
        None,
        BatchOptions {
            batch_size: 8,
            num_threads: 2,
            capacity: 40,
            allow_smaller_final_batch: true,
            shuffle: Some(ShuffleOptions {
                min_after_dequeue: 10,
                seed: Some(1),
            }),
            ..Default::default()
        },
    )?;
    let sess = Session::new(&g);
    let coord = Coordinator::new();
    let threads = sess.start_queue_runners(&coord)?;
    let mut counts: BTreeMap<i64, usize> = BTreeMap::new();
    for b in drain(&sess, &batch)? {
        let labels = i64s(&b[1]);
        let pixels = f32s(&b[0]);
        for (row, l) in labels.iter().enumerate() {
            let want = f32::from(*l as u8) / 255.0 - 0.5;
            assert!((pixels[row * 4] - want).abs() < 1e-6);
            *counts.entry(*l).or_default() += 1;
        }
    }
    assert_eq!(counts.len(), 60);
    assert!(counts.values().all(|&c| c == 3), "{counts:?}");
    // Another run after the end is OutOfRange again.
    assert_eq!(sess.run(&batch, &[]).unwrap_err().kind(), Kind::OutOfRange);
    let tags = sess.queue_summaries();
    assert!(
        tags.iter()
            .any(|s| s.tag == "queue/shuffle_batch/fraction_of_40_full"),
        "{tags:?}"
    );
    assert!(tags
        .iter()
        .any(|s| s.tag == "queue/shuffle_batch/fraction_over_10_of_30_full"));
    coord.request_stop();
    coord.join(threads, JOIN)
}

/// The batched fast path: read_up_to → parse_example → enqueue_many,
/// with a sparse component batched.
#[test]
fn read_up_to_parse_example_enqueue_many() -> Result<()> {
    let dir = tempfile::tempdir().unwrap();
    let files = write_examples(dir.path(), 2, 10);
    let g = Graph::new();
    let q = g.string_input_producer(Strings::List(files), ordered(2))?;
    let reader = g.reader(ReaderKind::TfRecord {
        compression: Compression::None,
    })?;
    let (_, values) = g.read_up_to(reader, q, 4)?;
    let f = g.parse_example(values, mnist_spec())?;
    let image = g.decode_raw(f[0], DType::U8, true)?;
    assert_eq!(g.shape(image).unwrap().dims(), &[None, None]);
    let batch = g.batch(
        &[vec![f[1], f[2]]],
        None,
        BatchOptions {
            batch_size: 5,
            enqueue_many: true,
            allow_smaller_final_batch: true,
            ..Default::default()
        },
    )?;
    assert!(batch[1].is_sparse());
    let sess = Session::new(&g);
    let coord = Coordinator::new();
    let threads = sess.start_queue_runners(&coord)?;
    let mut labels = Vec::new();
    let mut nnz = 0;
    for b in drain(&sess, &batch)? {
        let l = i64s(&b[0]);
        let tags = b[1].sparse()?;
        assert_eq!(tags.dense_shape().dims()[0], l.len());
        nnz += tags.nnz();
        labels.extend(l);
    }
    let want: Vec<i64> = (0..20).chain(0..20).collect();
    assert_eq!(labels, want);
    let tags_per_epoch: usize = (0..20).map(|l| l % 3).sum();
    assert_eq!(nnz, 2 * tags_per_epoch);
    coord.request_stop();
    coord.join(threads, JOIN)
}

/// shuffle_batch_join over two readers, and maybe_batch's keep_input.
#[test]
fn join_and_keep_input() -> Result<()> {
    let dir = tempfile::tempdir().unwrap();
    write_examples(dir.path(), 4, 5);
    let g = Graph::new();
    let files = g.match_filenames_once(&path(dir.path(), "*.tfrecord"))?;
    let q = g.string_input_producer(files, ordered(2))?;
    let mut lists = Vec::new();
    for _ in 0..2 {
        let reader = g.reader(ReaderKind::TfRecord {
            compression: Compression::None,
        })?;
        let (_, value) = g.read(reader, q)?;
        let f = g.parse_single_example(value, mnist_spec())?;
        lists.push(vec![f[1]]);
    }
    let joined = g.batch(
        &lists,
        None,
        BatchOptions {
            batch_size: 3,
            capacity: 10,
            allow_smaller_final_batch: true,
            shuffle: Some(ShuffleOptions {
                min_after_dequeue: 2,
                seed: None,
            }),
            ..Default::default()
        },
    )?;
    let sess = Session::new(&g);
    let coord = Coordinator::new();
    let threads = sess.start_queue_runners(&coord)?;
    let mut all: Vec<i64> = drain(&sess, &joined)?
        .iter()
        .flat_map(|b| i64s(&b[0]))
        .collect();
    all.sort_unstable();
    let want: Vec<i64> = (0..20).flat_map(|i| [i, i]).collect();
    assert_eq!(all, want);
    coord.request_stop();
    coord.join(threads, JOIN)?;

    // maybe_batch: a keep_input row per example keeps the even ones.
    let g = Graph::new();
    let data = g.constant(Tensor::vector((0..10i64).collect()))?;
    let even = g.constant(Tensor::vector(
        (0..10).map(|i| i % 2 == 0).collect::<Vec<bool>>(),
    ))?;
    let keep_all = g.slice_input_producer(&[data, even], ordered(1))?;
    let kept = g.batch(
        &[vec![keep_all[0]]],
        Some(keep_all[1]),
        BatchOptions {
            batch_size: 2,
            allow_smaller_final_batch: true,
            ..Default::default()
        },
    )?;
    let sess = Session::new(&g);
    let coord = Coordinator::new();
    let threads = sess.start_queue_runners(&coord)?;
    let got: Vec<i64> = drain(&sess, &kept)?
        .iter()
        .flat_map(|b| i64s(&b[0]))
        .collect();
    assert_eq!(got, vec![0, 2, 4, 6, 8]);
    sess.close();
    coord.request_stop();
    coord.join(threads, JOIN)
}

/// Preloaded data in a variable initialized from a fed placeholder, read
/// with slice_input_producer and batch.
#[test]
fn preloaded_variable_from_placeholder() -> Result<()> {
    let g = Graph::new();
    let sess = Session::new(&g);
    let init = g.placeholder(DType::F32, None, Some("data_initializer"))?;
    let var = g.variable(init, Some("input_data"))?;
    let labels = g.constant(Tensor::vector((0..6i32).collect()))?;
    let rows = g.slice_input_producer(&[var.value, labels], ordered(1))?;
    let batch = g.batch(
        std::slice::from_ref(&rows),
        None,
        BatchOptions {
            batch_size: 3,
            ..Default::default()
        },
    )?;
    // Reading the variable before its initializer ran names it.
    let err = sess.run(&[var.value], &[]).unwrap_err();
    assert_eq!(err.kind(), Kind::FailedPrecondition);
    assert!(err.to_string().contains("input_data"), "{err}");
    // Running the initializer without its placeholder fed names it.
    let err = sess.run(&[var.initializer], &[]).unwrap_err();
    assert_eq!(err.kind(), Kind::InvalidArgument);
    assert!(err.to_string().contains("data_initializer"), "{err}");
    let data = Tensor::new([6, 2], (0..12).map(|x| x as f32).collect())?;
    sess.run(&[var.initializer], &[(init, data.into())])?;
    assert_eq!(g.initializers(), vec![var.initializer]);

    let coord = Coordinator::new();
    let threads = sess.start_queue_runners(&coord)?;
    let got = drain(&sess, &batch)?;
    assert_eq!(got.len(), 2);
    assert_eq!(
        f32s(&got[0][0]),
        vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0],
        "rows in order"
    );
    assert_eq!(i32s(&got[1][1]), vec![3, 4, 5]);
    coord.request_stop();
    coord.join(threads, JOIN)
}

/// Feeding: a placeholder fed per run; each node runs once per run.
#[test]
fn feeding_and_once_per_run() -> Result<()> {
    let g = Graph::new();
    let x =
        g.placeholder(DType::F32, Some(vec![None, Some(2)].into()), None)?;
    let y = g.div(
        g.add_op(x, g.scalar(1.0, DType::F32)?)?,
        g.scalar(2.0, DType::F32)?,
    )?;
    let col = g.strided_slice(
        y,
        &[
            SliceDim::Range {
                start: None,
                stop: None,
                step: 1,
            },
            SliceDim::At(1),
        ],
    )?;
    assert_eq!(g.shape(col).unwrap().dims(), &[None]);
    let sess = Session::new(&g);
    let fed = Tensor::new([2, 2], vec![1.0f32, 3.0, 5.0, 7.0])?;
    let out = sess.run(&[y, col], &[(x, fed.into())])?;
    assert_eq!(f32s(&out[0]), vec![1.0, 2.0, 3.0, 4.0]);
    assert_eq!(f32s(&out[1]), vec![2.0, 4.0]);
    let err = sess.run(&[col], &[]).unwrap_err();
    assert_eq!(err.kind(), Kind::InvalidArgument);
    assert!(err.to_string().contains("Placeholder"), "{err}");
    let bad = Tensor::new([2, 3], vec![0.0f32; 6])?;
    assert_eq!(
        sess.run(&[col], &[(x, bad.into())]).unwrap_err().kind(),
        Kind::InvalidArgument
    );

    // One dequeue per run, however many fetches read it.
    let q = g.range_input_producer(5, ordered(1))?;
    let d = g.dequeue(q)?;
    let twice = g.add_op(d, d)?;
    let coord = Coordinator::new();
    let threads = sess.start_queue_runners(&coord)?;
    let runs = drain(&sess, &[d, twice])?;
    let got: Vec<(i32, i32)> = runs
        .iter()
        .map(|r| (i32s(&r[0])[0], i32s(&r[1])[0]))
        .collect();
    assert_eq!(got, vec![(0, 0), (1, 2), (2, 4), (3, 6), (4, 8)]);
    coord.request_stop();
    coord.join(threads, JOIN)
}

/// A run waiting for a batch that never comes: a timeout gives
/// DeadlineExceeded, and closing the session wakes it with Cancelled.
#[test]
fn close_wakes_a_blocked_run() -> Result<()> {
    let g = Graph::new();
    // Endless input, none of it kept: the batching queue stays empty and
    // open for as long as the session lives.
    let q = g.range_input_producer(
        4,
        ProducerOptions {
            shuffle: false,
            ..Default::default()
        },
    )?;
    let d = g.dequeue(q)?;
    let never = g.constant(Tensor::scalar(false))?;
    let batch = g.batch(
        &[vec![d]],
        Some(never),
        BatchOptions {
            batch_size: 2,
            ..Default::default()
        },
    )?;
    let sess = Arc::new(Session::new(&g));
    let coord = Coordinator::new();
    let threads = sess.start_queue_runners(&coord)?;
    let err = sess
        .run_with(
            &batch,
            &[],
            &RunOptions {
                timeout: Some(Duration::from_millis(20)),
            },
        )
        .unwrap_err();
    assert_eq!(err.kind(), Kind::DeadlineExceeded, "{err}");
    let blocked = {
        let sess = Arc::clone(&sess);
        let batch = batch.clone();
        thread::spawn(move || sess.run(&batch, &[]))
    };
    sess.close();
    let err = blocked.join().unwrap().unwrap_err();
    assert_eq!(err.kind(), Kind::Cancelled, "{err}");
    assert_eq!(sess.run(&batch, &[]).unwrap_err().kind(), Kind::Cancelled);
    coord.join(threads, JOIN)
}

/// A corrupt TFRecord file: the error names the file, and a run before
/// the runners started fails instead of hanging.
#[test]
fn corrupt_file_and_unstarted_runners() -> Result<()> {
    let dir = tempfile::tempdir().unwrap();
    let files = write_examples(dir.path(), 1, 3);
    let mut bytes = std::fs::read(&files[0]).unwrap();
    let n = bytes.len();
    bytes[n - 6] ^= 0xff;
    std::fs::write(&files[0], bytes).unwrap();
    let g = Graph::new();
    let q =
        g.string_input_producer(Strings::List(files.clone()), ordered(1))?;
    let reader = g.reader(ReaderKind::TfRecord {
        compression: Compression::None,
    })?;
    let (_, value) = g.read(reader, q)?;
    let f = g.parse_single_example(value, mnist_spec())?;
    let batch = g.batch(
        &[vec![f[1]]],
        None,
        BatchOptions {
            batch_size: 1,
            ..Default::default()
        },
    )?;
    let sess = Session::new(&g);
    let err = sess.run(&batch, &[]).unwrap_err();
    assert_eq!(err.kind(), Kind::FailedPrecondition, "{err}");
    let coord = Coordinator::new();
    let threads = sess.start_queue_runners(&coord)?;
    let mut err = None;
    for _ in 0..4 {
        if let Err(e) = sess.run(&batch, &[]) {
            err = Some(e);
            break;
        }
    }
    let err = err.expect("the corrupt record fails");
    assert_eq!(err.kind(), Kind::DataLoss, "{err}");
    assert_eq!(err.file(), Some(files[0].as_str()), "{err}");
    coord.request_stop();
    let joined = coord.join(threads, JOIN).unwrap_err();
    assert_eq!(joined.kind(), Kind::DataLoss);
    Ok(())
}
