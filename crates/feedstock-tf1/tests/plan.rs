//! The seed guide's pipelines built as a `plan::Graph` and run by a
//! `plan::Session`: values, order where defined, exact counts with
//! `num_epochs`, OutOfRange at the end, errors naming the file and
//! record, and `close` waking blocked runs.

use feedstock_tf1::kernels::math::BinaryOp;
use feedstock_tf1::op::{
    parse_sequence, Binary, Cast, Concat, CropToBox, CropToBoxInputs,
    DecodeCsv, DecodeImage, DecodeRaw, FlipLeftRight, FlipUpDown, Neg, Parse,
    ParseSequence, PerImageStandardization, Reshape, SequenceOutputs, Stack,
    StridedSlice, Transpose,
};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use bytes::Bytes;
use feedstock::coord::Coordinator;
use feedstock::decode::csv::RecordDefault;
use feedstock::decode::example::{FeatureSpec, FixedSequence};
use feedstock::io::tfrecord::{CorruptRecords, SkipBudget, WriterBuilder};
use feedstock::io::Compression;
use feedstock::proto::ExampleBuilder;
use feedstock::queue::PartialShape;
use feedstock::{DType, Kind, Result, Tensor, Value};
use feedstock_tf1::{
    BatchOptions, CsvOptions, Graph, Interrupt, Output, ProducerOptions,
    ReaderKind, ReaderStateOp, RunOptions, Session, ShuffleOptions, SliceDim,
    Strings,
};

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
    let reader = g.reader(ReaderKind::text_line(0))?;
    let (key, value) = g.read(reader, q)?;
    let defaults = (0..5).map(|_| RecordDefault::i32(1)).collect();
    let cols =
        g.op(DecodeCsv::new(defaults, CsvOptions::default())?, &[value])?;
    let features = g.op1(Stack { axis: 0 }, &cols[..4])?;
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

/// A reader's counters and state ops, as TensorFlow's `ReaderBase`: a
/// file counts as completed once `read` has seen its end; `reset` drops
/// the current file; a saved state resumes at the next record.
#[test]
fn reader_counters_reset_and_saved_state() -> Result<()> {
    let dir = tempfile::tempdir().unwrap();
    let files = write_csv(dir.path());
    let g = Graph::new();
    let q =
        g.string_input_producer(Strings::List(files.clone()), ordered(2))?;
    let reader = g.reader(ReaderKind::text_line(0))?;
    let (key, _) = g.read(reader, q)?;
    let state = |op| g.reader_state(reader, op, None);
    let produced = state(ReaderStateOp::NumRecordsProduced)?;
    let completed = state(ReaderStateOp::NumWorkUnitsCompleted)?;
    let reset = state(ReaderStateOp::Reset)?;
    let save = state(ReaderStateOp::SerializeState)?;
    let saved = g.placeholder(
        DType::String,
        Some(PartialShape::new(Vec::new())),
        None,
    )?;
    let restore =
        g.reader_state(reader, ReaderStateOp::RestoreState, Some(saved))?;
    assert!(g
        .reader_state(reader, ReaderStateOp::Reset, Some(saved))
        .is_err());

    let sess = Session::new(&g);
    let coord = Coordinator::new();
    let threads = sess.start_queue_runners(&coord)?;
    let key_of = |v: &Value| {
        let k = v.dense().unwrap().scalar_value::<Bytes>().unwrap();
        String::from_utf8(k.to_vec()).unwrap()
    };
    let counts = || -> Result<(i64, i64)> {
        let v = sess.run(&[produced, completed], &[])?;
        let n = |v: &Value| v.dense().unwrap().scalar_value::<i64>().unwrap();
        Ok((n(&v[0]), n(&v[1])))
    };
    let read = || -> Result<String> { Ok(key_of(&sess.run(&[key], &[])?[0])) };
    assert_eq!(read()?, format!("{}:1", files[0]));
    let at = sess.run(&[save], &[])?.remove(0);
    assert_eq!(read()?, format!("{}:2", files[0]));
    sess.run(&[restore], &[(saved, at)])?;
    assert_eq!(counts()?, (1, 0));
    assert_eq!(read()?, format!("{}:2", files[0]));
    assert_eq!(counts()?, (2, 0));
    assert_eq!(read()?, format!("{}:1", files[1]));
    assert_eq!(counts()?, (3, 1));
    sess.run(&[reset], &[])?;
    assert_eq!(counts()?, (0, 0));
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
    let reader = g.reader(ReaderKind::text_line(0))?;
    let (_, value) = g.read(reader, q)?;
    let cols = g.op(
        DecodeCsv::new(
            vec![RecordDefault::i32(0), RecordDefault::required(DType::I32)?],
            CsvOptions::default(),
        )?,
        &[value],
    )?;
    let sum = g.op1(Binary { op: BinaryOp::Add }, &[cols[0], cols[1]])?;
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
    let record = g.op1(
        DecodeRaw {
            out_type: DType::U8,
            little_endian: true,
        },
        &[value],
    )?;
    let label = g.op1(
        Cast { dtype: DType::I32 },
        &[g.op1(StridedSlice::ranges(&[0], &[1], &[1]), &[record])?],
    )?;
    let major = g.op1(
        Reshape {
            shape: Some(vec![depth as i64, height as i64, width as i64]),
        },
        &[g.op1(
            StridedSlice::ranges(&[1], &[1 + image_bytes as i64], &[1]),
            &[record],
        )?],
    )?;
    let image = g.op1(
        Transpose {
            perm: vec![1, 2, 0],
        },
        &[major],
    )?;
    let image = g.op1(Cast { dtype: DType::F32 }, &[image])?;
    assert_eq!(
        g.shape(image).unwrap().dims(),
        &[Some(height), Some(width), Some(depth)]
    );
    let label = g.op1(
        Reshape {
            shape: Some(vec![]),
        },
        &[label],
    )?;
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
    let reader = g.reader(ReaderKind::tf_record(Compression::None))?;
    let (_, value) = g.read(reader, q)?;
    let f = g.op(
        Parse {
            spec: mnist_spec(),
            batched: false,
        },
        &[value],
    )?;
    assert!(f[2].is_sparse());
    let image = g.op1(
        DecodeRaw {
            out_type: DType::U8,
            little_endian: true,
        },
        &[f[0]],
    )?;
    let image = g.op1(
        Reshape {
            shape: Some(vec![4]),
        },
        &[image],
    )?;
    let image = g.op1(Cast { dtype: DType::F32 }, &[image])?;
    let image = g.op1(
        Binary { op: BinaryOp::Sub },
        &[
            g.op1(
                Binary { op: BinaryOp::Mul },
                &[image, g.scalar(1.0 / 255.0, DType::F32)?],
            )?,
            g.scalar(0.5, DType::F32)?,
        ],
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
    let reader = g.reader(ReaderKind::tf_record(Compression::None))?;
    let (_, values) = g.read_up_to(reader, q, 4)?;
    let f = g.op(
        Parse {
            spec: mnist_spec(),
            batched: true,
        },
        &[values],
    )?;
    let image = g.op1(
        DecodeRaw {
            out_type: DType::U8,
            little_endian: true,
        },
        &[f[0]],
    )?;
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

/// One record of the golden SequenceExamples, as its sidecar lists it.
#[derive(Debug, PartialEq)]
struct GoldenSeq {
    locale: String,
    seq_id: i64,
    scores: Vec<f32>,
    tokens: Vec<Vec<i64>>,
}

/// The golden file written by TensorFlow and the records its sidecar
/// `.json` describes.
fn golden_sequences() -> (String, Vec<GoldenSeq>) {
    // The engine crate's golden files (crates/feedstock/tests/data).
    let dir = format!(
        "{}/../feedstock/tests/data/golden",
        env!("CARGO_MANIFEST_DIR")
    );
    let file = format!("{dir}/sequence_examples.tfrecord");
    let text = std::fs::read_to_string(format!("{file}.json")).unwrap();
    let j: serde_json::Value = serde_json::from_str(&text).unwrap();
    let steps = |r: &serde_json::Value, name: &str| -> Vec<Vec<f64>> {
        r["feature_lists"][name]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                let v = s["values"].as_array().unwrap();
                v.iter().map(|x| x.as_f64().unwrap()).collect()
            })
            .collect()
    };
    let records = j["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| GoldenSeq {
            locale: r["context"]["locale"]["values"][0]
                .as_str()
                .unwrap()
                .to_owned(),
            seq_id: r["context"]["seq_id"]["values"][0].as_i64().unwrap(),
            scores: steps(r, "scores").iter().map(|s| s[0] as f32).collect(),
            tokens: steps(r, "tokens")
                .iter()
                .map(|s| s.iter().map(|&t| t as i64).collect())
                .collect(),
        })
        .collect();
    (file, records)
}

/// The sidecar's specs: context `locale` (string, default "und") and
/// `seq_id` (int64, required); feature lists `scores` (one float a step)
/// and `tokens` (int64, any number a step). `extra` adds a required
/// int64 context feature.
fn sequence_specs(extra: Option<&str>) -> (FeatureSpec, FeatureSpec) {
    let mut context = FeatureSpec::builder();
    context
        .fixed_with_default("locale", DType::String, [], Tensor::string("und"))
        .fixed("seq_id", DType::I64, []);
    if let Some(name) = extra {
        context.fixed(name, DType::I64, []);
    }
    let sequence = FeatureSpec::builder()
        .fixed_sequence("scores", FixedSequence::new(DType::F32, []))
        .var_len("tokens", DType::I64)
        .build()
        .unwrap();
    (context.build().unwrap(), sequence)
}

fn string_of(v: &Value) -> String {
    let b = v.dense().unwrap().scalar_value::<Bytes>().unwrap();
    String::from_utf8(b.to_vec()).unwrap()
}

/// A sparse `[.., steps, max_len]` value's rows back as lists: one list
/// per step (of each example, in order), its values by index.
fn sparse_rows(v: &Value, steps: usize) -> Vec<Vec<i64>> {
    let sp = v.sparse().unwrap();
    let rank = sp.dims().len();
    let idx = sp.indices().as_slice::<i64>().unwrap();
    let vals = sp.values().as_slice::<i64>().unwrap();
    let mut rows = vec![Vec::new(); steps];
    for (i, &val) in vals.iter().enumerate() {
        let at = &idx[i * rank..(i + 1) * rank];
        // The row: the example and step, flattened; then the position.
        let row = if rank == 3 {
            at[0] as usize * sp.dims()[1] + at[1] as usize
        } else {
            at[0] as usize
        };
        assert_eq!(at[rank - 1] as usize, rows[row].len(), "sorted indices");
        rows[row].push(val);
    }
    rows
}

/// TFRecordReader → parse_single_sequence_example on TensorFlow's golden
/// SequenceExamples, fetched in the main thread: the values are the
/// sidecar's, and the static shapes leave the steps unknown.
#[test]
fn tfrecord_parse_single_sequence_example() -> Result<()> {
    let (file, want) = golden_sequences();
    let g = Graph::new();
    let q = g.string_input_producer(Strings::List(vec![file]), ordered(1))?;
    let reader = g.reader(ReaderKind::tf_record(Compression::None))?;
    let (_, value) = g.read(reader, q)?;
    let (context, sequence) = sequence_specs(None);
    let SequenceOutputs {
        context: c,
        feature_lists: f,
        ..
    } = parse_sequence(
        &g,
        value,
        ParseSequence {
            context,
            sequence,
            batched: false,
        },
    )?;
    assert_eq!((c.len(), f.len()), (2, 2));
    assert_eq!(g.shape(c[0]).unwrap().dims(), &[] as &[Option<usize>]);
    assert_eq!((c[0].dtype(), c[1].dtype()), (DType::String, DType::I64));
    assert_eq!(g.shape(f[0]).unwrap().dims(), &[None]);
    assert_eq!(f[0].dtype(), DType::F32);
    assert!(!f[0].is_sparse() && f[1].is_sparse());
    assert_eq!(g.shape(f[1]).unwrap().dims(), &[None, None]);

    let sess = Session::new(&g);
    let coord = Coordinator::new();
    let threads = sess.start_queue_runners(&coord)?;
    let rows = drain(&sess, &[c[0], c[1], f[0], f[1]])?;
    let got: Vec<GoldenSeq> = rows
        .iter()
        .map(|r| {
            let steps = r[2].dense().unwrap().dims()[0];
            let tokens = r[3].sparse().unwrap();
            let max_len = tokens.dims()[1];
            let toks = sparse_rows(&r[3], steps);
            assert_eq!(tokens.dims(), [steps, max_len]);
            assert_eq!(max_len, toks.iter().map(Vec::len).max().unwrap());
            GoldenSeq {
                locale: string_of(&r[0]),
                seq_id: i64s(&r[1])[0],
                scores: f32s(&r[2]),
                tokens: toks,
            }
        })
        .collect();
    assert_eq!(got, want);
    coord.request_stop();
    coord.join(threads, JOIN)
}

/// read_up_to → parse_sequence_example: each batch's `scores` are padded
/// with zeros to its longest sequence, the lengths give the steps of each
/// example, and `tokens` are `[batch, max_steps, max_len]`.
#[test]
fn read_up_to_parse_sequence_example_pads_and_gives_lengths() -> Result<()> {
    let (file, want) = golden_sequences();
    let g = Graph::new();
    let q = g.string_input_producer(Strings::List(vec![file]), ordered(1))?;
    let reader = g.reader(ReaderKind::tf_record(Compression::None))?;
    let (_, values) = g.read_up_to(reader, q, 2)?;
    let (context, sequence) = sequence_specs(None);
    let SequenceOutputs {
        context: c,
        feature_lists: f,
        lengths: l,
    } = parse_sequence(
        &g,
        values,
        ParseSequence {
            context,
            sequence,
            batched: true,
        },
    )?;
    // Only the FixedSequence list (`scores`) has a length.
    assert_eq!((c.len(), f.len(), l.len()), (2, 2, 1));
    assert_eq!(g.shape(c[1]).unwrap().dims(), &[None]);
    assert_eq!(g.shape(f[0]).unwrap().dims(), &[None, None]);
    assert_eq!(g.shape(f[1]).unwrap().dims(), &[None, None, None]);
    assert_eq!(
        (g.shape(l[0]).unwrap().dims(), l[0].dtype()),
        (&[None][..], DType::I64)
    );

    let sess = Session::new(&g);
    let coord = Coordinator::new();
    let threads = sess.start_queue_runners(&coord)?;
    let batches = drain(&sess, &[c[0], c[1], f[0], f[1], l[0]])?;
    // Three records read two at a time.
    assert_eq!(batches.len(), 2);
    let mut examples = want.iter();
    for b in &batches {
        let ids = i64s(&b[1]);
        let part: Vec<&GoldenSeq> =
            examples.by_ref().take(ids.len()).collect();
        let lengths: Vec<i64> =
            part.iter().map(|e| e.scores.len() as i64).collect();
        assert_eq!(i64s(&b[4]), lengths);
        assert_eq!(ids, part.iter().map(|e| e.seq_id).collect::<Vec<_>>());
        let locales = b[0].dense()?.as_slice::<Bytes>()?.to_vec();
        let locales: Vec<&str> = locales
            .iter()
            .map(|s| std::str::from_utf8(s).unwrap())
            .collect();
        assert_eq!(
            locales,
            part.iter().map(|e| &e.locale[..]).collect::<Vec<_>>()
        );
        let longest = *lengths.iter().max().unwrap() as usize;
        let scores = b[2].dense()?;
        assert_eq!(scores.dims(), [part.len(), longest]);
        let padded: Vec<f32> = part
            .iter()
            .flat_map(|e| {
                let pad = longest - e.scores.len();
                e.scores
                    .iter()
                    .copied()
                    .chain(std::iter::repeat_n(0.0, pad))
            })
            .collect();
        assert_eq!(f32s(&b[2]), padded);
        let tokens = b[3].sparse()?;
        let max_len = part.iter().flat_map(|e| &e.tokens).map(Vec::len).max();
        assert_eq!(tokens.dims(), [part.len(), longest, max_len.unwrap()]);
        let padded: Vec<Vec<i64>> = part
            .iter()
            .flat_map(|e| {
                let pad = longest - e.tokens.len();
                e.tokens
                    .iter()
                    .cloned()
                    .chain(std::iter::repeat_n(vec![], pad))
            })
            .collect();
        assert_eq!(sparse_rows(&b[3], part.len() * longest), padded);
    }
    assert!(examples.next().is_none());
    coord.request_stop();
    coord.join(threads, JOIN)
}

/// A required context feature the records lack: the run fails with
/// InvalidArgument naming the feature and the first record's key, one
/// record at a time or in a batch.
#[test]
fn parse_sequence_example_error_names_the_record() -> Result<()> {
    let (file, _) = golden_sequences();
    for batched in [false, true] {
        let g = Graph::new();
        let q = g.string_input_producer(
            Strings::List(vec![file.clone()]),
            ordered(1),
        )?;
        let reader = g.reader(ReaderKind::tf_record(Compression::None))?;
        let (context, sequence) = sequence_specs(Some("user_id"));
        let fetch = if batched {
            let (_, values) = g.read_up_to(reader, q, 2)?;
            parse_sequence(
                &g,
                values,
                ParseSequence {
                    context,
                    sequence,
                    batched: true,
                },
            )?
            .context
        } else {
            let (_, value) = g.read(reader, q)?;
            parse_sequence(
                &g,
                value,
                ParseSequence {
                    context,
                    sequence,
                    batched: false,
                },
            )?
            .context
        };
        let sess = Session::new(&g);
        let coord = Coordinator::new();
        let threads = sess.start_queue_runners(&coord)?;
        let err = sess.run(&fetch, &[]).unwrap_err();
        assert_eq!(err.kind(), Kind::InvalidArgument, "{err}");
        assert_eq!(err.key(), Some(format!("{file}:0").as_str()), "{err}");
        assert!(err.to_string().contains("user_id"), "{err}");
        coord.request_stop();
        coord.join(threads, JOIN)?;
    }
    Ok(())
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
        let reader = g.reader(ReaderKind::tf_record(Compression::None))?;
        let (_, value) = g.read(reader, q)?;
        let f = g.op(
            Parse {
                spec: mnist_spec(),
                batched: false,
            },
            &[value],
        )?;
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
    let y = g.op1(
        Binary { op: BinaryOp::Div },
        &[
            g.op1(
                Binary { op: BinaryOp::Add },
                &[x, g.scalar(1.0, DType::F32)?],
            )?,
            g.scalar(2.0, DType::F32)?,
        ],
    )?;
    let col = g.op1(
        StridedSlice::index(&[
            SliceDim::Range {
                start: None,
                stop: None,
                step: 1,
            },
            SliceDim::At(1),
        ]),
        &[y],
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
    let d = g.dequeue(q)?[0];
    let twice = g.op1(Binary { op: BinaryOp::Add }, &[d, d])?;
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
    let d = g.dequeue(q)?[0];
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
                ..Default::default()
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

/// Two batching stages that never fill, over one endless producer.
fn two_empty_batches(g: &Graph) -> Result<Vec<Output>> {
    let q = g.range_input_producer(
        4,
        ProducerOptions {
            shuffle: false,
            ..Default::default()
        },
    )?;
    let d = g.dequeue(q)?[0];
    let never = g.constant(Tensor::scalar(false))?;
    let mut out = Vec::new();
    for _ in 0..2 {
        out.extend(g.batch(
            &[vec![d]],
            Some(never),
            BatchOptions {
                batch_size: 2,
                ..Default::default()
            },
        )?);
    }
    Ok(out)
}

/// An interrupt that counts its checks and says "stop" at the `at`-th.
fn counting_interrupt(at: usize) -> (Interrupt, Arc<AtomicUsize>) {
    let calls = Arc::new(AtomicUsize::new(0));
    let c = Arc::clone(&calls);
    let interrupt = Interrupt::new(Duration::from_millis(1), move || {
        c.fetch_add(1, Ordering::SeqCst) + 1 >= at
    });
    (interrupt, calls)
}

/// A run waiting on two batching stages at once gives up Cancelled when
/// its interrupt says so, after exactly that many checks; the session
/// stays usable.
#[test]
fn interrupt_wakes_a_run_waiting_on_two_queues() -> Result<()> {
    let g = Graph::new();
    let batches = two_empty_batches(&g)?;
    let sess = Session::new(&g);
    let coord = Coordinator::new();
    let threads = sess.start_queue_runners(&coord)?;
    let (interrupt, calls) = counting_interrupt(3);
    let opts = RunOptions {
        interrupt: Some(interrupt),
        ..Default::default()
    };
    let err = sess.run_with(&batches, &[], &opts).unwrap_err();
    assert_eq!(err.kind(), Kind::Cancelled, "{err}");
    assert!(err.to_string().contains("interrupted"), "{err}");
    assert_eq!(calls.load(Ordering::SeqCst), 3);
    // Not closed: a run with a timeout still waits and times out.
    let opts = RunOptions {
        timeout: Some(Duration::from_millis(5)),
        ..Default::default()
    };
    let err = sess.run_with(&batches, &[], &opts).unwrap_err();
    assert_eq!(err.kind(), Kind::DeadlineExceeded, "{err}");
    coord.request_stop();
    coord.join(threads, JOIN)
}

/// A sliced wait still honours the session's operation timeout (which
/// the slices' own timeouts would otherwise replace), and the run's
/// timeout.
#[test]
fn interrupt_keeps_the_timeouts() -> Result<()> {
    let g = Graph::new();
    let batches = two_empty_batches(&g)?;
    let sess = Session::new(&g);
    let coord = Coordinator::new();
    let threads = sess.start_queue_runners(&coord)?;
    let (interrupt, _) = counting_interrupt(usize::MAX);
    sess.set_operation_timeout(Some(Duration::from_millis(10)));
    let opts = RunOptions {
        interrupt: Some(interrupt.clone()),
        ..Default::default()
    };
    let err = sess.run_with(&batches, &[], &opts).unwrap_err();
    assert_eq!(err.kind(), Kind::DeadlineExceeded, "{err}");
    sess.set_operation_timeout(None);
    let opts = RunOptions {
        interrupt: Some(interrupt),
        timeout: Some(Duration::from_millis(10)),
    };
    let err = sess.run_with(&batches, &[], &opts).unwrap_err();
    assert_eq!(err.kind(), Kind::DeadlineExceeded, "{err}");
    coord.request_stop();
    // The operation timeout applied to the runners too: the producer's
    // enqueue, blocked on a full queue, may have timed out while it was
    // set, which the join reports.
    match coord.join(threads, JOIN) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == Kind::DeadlineExceeded => Ok(()),
        Err(e) => Err(e),
    }
}

/// Waits sliced into 1 ms pieces lose and repeat nothing: two batch
/// fetches per run over one producer give every element exactly once.
#[test]
fn interrupt_slices_lose_nothing() -> Result<()> {
    let g = Graph::new();
    let data = g.constant(Tensor::vector((0..400i64).collect()))?;
    let row = g.slice_input_producer(&[data], ordered(1))?;
    let opts = BatchOptions {
        batch_size: 3,
        capacity: 4,
        allow_smaller_final_batch: true,
        ..Default::default()
    };
    let a = g.batch(&[vec![row[0]]], None, opts.clone())?;
    let b = g.batch(&[vec![row[0]]], None, opts)?;
    let sess = Session::new(&g);
    let coord = Coordinator::new();
    let threads = sess.start_queue_runners(&coord)?;
    let (interrupt, _) = counting_interrupt(usize::MAX);
    let run = RunOptions {
        interrupt: Some(interrupt),
        ..Default::default()
    };
    let mut seen = Vec::new();
    let mut done = [false, false];
    while done != [true, true] {
        for (i, fetch) in [&a, &b].into_iter().enumerate() {
            if done[i] {
                continue;
            }
            match sess.run_with(fetch, &[], &run) {
                Ok(v) => seen.extend(i64s(&v[0])),
                Err(e) if e.kind() == Kind::OutOfRange => done[i] = true,
                Err(e) => return Err(e),
            }
        }
    }
    seen.sort_unstable();
    assert_eq!(seen, (0..400).collect::<Vec<i64>>());
    coord.request_stop();
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
    let reader = g.reader(ReaderKind::tf_record(Compression::None))?;
    let (_, value) = g.read(reader, q)?;
    let f = g.op(
        Parse {
            spec: mnist_spec(),
            batched: false,
        },
        &[value],
    )?;
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

/// A TFRecord reader node told to skip damaged records: the intact ones
/// arrive, once per epoch, and each skip is counted in the session's
/// statistics, naming the file; a budget of none fails DataLoss instead.
#[test]
fn a_reader_node_that_skips_corrupt_records_counts_them() -> Result<()> {
    let dir = tempfile::tempdir().unwrap();
    let files = write_examples(dir.path(), 2, 5);
    // The data of file 0's last record (label 4).
    let mut bytes = std::fs::read(&files[0]).unwrap();
    let n = bytes.len();
    bytes[n - 6] ^= 0xff;
    std::fs::write(&files[0], bytes).unwrap();
    let run = |budget: SkipBudget| -> Result<(Vec<i64>, Session)> {
        let g = Graph::new();
        let q =
            g.string_input_producer(Strings::List(files.clone()), ordered(2))?;
        let reader = g.reader(ReaderKind::TfRecord {
            compression: Compression::None,
            corrupt_records: CorruptRecords::Skip(budget),
            allow_empty_files: false,
        })?;
        let (_, value) = g.read(reader, q)?;
        let f = g.op(
            Parse {
                spec: mnist_spec(),
                batched: false,
            },
            &[value],
        )?;
        let sess = Session::new(&g);
        let coord = Coordinator::new();
        let threads = sess.start_queue_runners(&coord)?;
        let labels = drain(&sess, &[f[1]]).map(|rows| {
            rows.iter().flat_map(|r| i64s(&r[0])).collect::<Vec<_>>()
        });
        coord.request_stop();
        let joined = coord.join(threads, JOIN);
        let labels = labels?;
        joined?;
        Ok((labels, sess))
    };

    let (labels, sess) = run(SkipBudget::new().max_per_file(1))?;
    let epoch = [0, 1, 2, 3, 5, 6, 7, 8, 9];
    let want: Vec<i64> = epoch.iter().chain(&epoch).copied().collect();
    assert_eq!(labels, want, "the intact records, in order, twice");
    let skips = sess.stats().skips;
    assert_eq!(skips.skipped, 2, "one region per reading of file 0");
    assert_eq!(skips.files.len(), 1);
    assert_eq!(skips.files[0].file, files[0]);

    let Err(err) = run(SkipBudget::new().max_per_file(0)) else {
        panic!("a budget of none fails");
    };
    assert_eq!(err.kind(), Kind::DataLoss, "{err}");
    assert_eq!(err.file(), Some(files[0].as_str()), "{err}");
    Ok(())
}

fn png(w: u32, h: u32, seed: u8) -> Vec<u8> {
    let pixels: Vec<u8> = (0..w * h * 3)
        .map(|i| (i as u8).wrapping_mul(7) ^ seed)
        .collect();
    let img = image::RgbImage::from_raw(w, h, pixels).unwrap();
    let mut out = Vec::new();
    image::DynamicImage::ImageRgb8(img)
        .write_to(&mut std::io::Cursor::new(&mut out), image::ImageFormat::Png)
        .unwrap();
    out
}

/// Whole files → decode_png → crop, flips, standardization, and a
/// dynamic_pad batch of images of two sizes; a file that is no image is
/// an error naming it.
#[test]
fn images_whole_files_and_dynamic_pad() -> Result<()> {
    let dir = tempfile::tempdir().unwrap();
    let a = path(dir.path(), "a.png");
    let b = path(dir.path(), "b.png");
    std::fs::write(&a, png(3, 2, 1)).unwrap();
    std::fs::write(&b, png(2, 2, 9)).unwrap();
    let files = vec![a.clone(), b.clone()];
    let images = |g: &Graph| -> Result<(Output, Output)> {
        let q =
            g.string_input_producer(Strings::List(files.clone()), ordered(1))?;
        let reader = g.reader(ReaderKind::WholeFile)?;
        let (key, contents) = g.read(reader, q)?;
        let image = g.op1(
            DecodeImage {
                spec: feedstock::decode::image::DecodeSpec::new(
                    feedstock_tf1::ImageFormat::Png,
                    feedstock::decode::image::Channels::Rgb,
                ),
            },
            &[contents],
        )?;
        Ok((key, image))
    };
    let g = Graph::new();
    let (_, image) = images(&g)?;
    assert_eq!(g.shape(image).unwrap().dims(), &[None, None, Some(3)]);
    let flipped =
        g.op1(FlipUpDown {}, &[g.op1(FlipLeftRight {}, &[image])?])?;
    let corner = g.op1(
        CropToBox {
            offset_height: 0,
            offset_width: 0,
            target_height: 1,
            target_width: 1,
        },
        &[image],
    )?;
    let std = g.op1(PerImageStandardization {}, &[image])?;
    let sess = Session::new(&g);
    let coord = Coordinator::new();
    let threads = sess.start_queue_runners(&coord)?;
    // One record per run, every fetch of it from that record.
    let first = sess.run(&[image, flipped, corner, std], &[])?;
    let img = first[0].dense()?;
    assert_eq!(img.dims(), &[2, 3, 3]);
    let px = img.as_slice::<u8>()?;
    let fl = first[1].dense()?.as_slice::<u8>()?.to_vec();
    // Flipped both ways: pixel (0, 0) is the original's (1, 2).
    assert_eq!(&fl[..3], &px[(3 + 2) * 3..(3 + 2) * 3 + 3]);
    assert_eq!(first[2].dense()?.as_slice::<u8>()?, &px[..3]);
    let mean: f32 = f32s(&first[3]).iter().sum::<f32>() / 18.0;
    assert!(mean.abs() < 1e-5);
    coord.request_stop();
    coord.join(threads, JOIN)?;

    // Both through a padded batch, in file order.
    let g = Graph::new();
    let (key, image) = images(&g)?;
    let padded = g.batch(
        &[vec![image, key]],
        None,
        BatchOptions {
            batch_size: 2,
            dynamic_pad: true,
            shapes: Some(vec![
                vec![None, None, Some(3)].into(),
                vec![].into(),
            ]),
            ..Default::default()
        },
    )?;
    let sess = Session::new(&g);
    let coord = Coordinator::new();
    let threads = sess.start_queue_runners(&coord)?;
    let got = sess.run(&padded, &[])?;
    let batch = got[0].dense()?;
    assert_eq!(batch.dims(), &[2, 2, 3, 3]);
    // b.png is 2 wide: its third column is padding.
    let b_row0 = &batch.as_slice::<u8>()?[18..27];
    assert_eq!(&b_row0[6..9], &[0, 0, 0]);
    assert_eq!(sess.run(&padded, &[]).unwrap_err().kind(), Kind::OutOfRange);
    coord.request_stop();
    coord.join(threads, JOIN)?;

    // A file that is not an image: the error names it.
    let bad = path(dir.path(), "c.png");
    std::fs::write(&bad, b"not a png").unwrap();
    let g = Graph::new();
    let q =
        g.string_input_producer(Strings::List(vec![bad.clone()]), ordered(1))?;
    let reader = g.reader(ReaderKind::WholeFile)?;
    let (_, contents) = g.read(reader, q)?;
    let image = g.op1(
        DecodeImage {
            spec: feedstock::decode::image::DecodeSpec::new(
                feedstock_tf1::ImageFormat::Any,
                feedstock::decode::image::Channels::AsStored,
            ),
        },
        &[contents],
    )?;
    let sess = Session::new(&g);
    let coord = Coordinator::new();
    let threads = sess.start_queue_runners(&coord)?;
    let err = sess.run(&[image], &[]).unwrap_err();
    assert_eq!(err.kind(), Kind::InvalidArgument);
    assert_eq!(err.key(), Some(bad.as_str()), "{err}");
    coord.request_stop();
    coord.join(threads, JOIN)
}

/// input_producer + dequeue_many, limit_epochs, concat and the
/// operation timeout.
#[test]
fn queues_limits_and_timeouts() -> Result<()> {
    let g = Graph::new();
    let rows = g.constant(Tensor::new([4, 2], (0..8i64).collect())?)?;
    let q = g.input_producer(rows, ordered(2))?;
    let two = g.dequeue_many(q, 3, true)?[0];
    assert_eq!(g.shape(two).unwrap().dims(), &[None, Some(2)]);
    let joined = g.op1(Concat { axis: 1 }, &[two, two])?;
    let sess = Session::new(&g);
    let coord = Coordinator::new();
    let threads = sess.start_queue_runners(&coord)?;
    let runs = drain(&sess, &[two, joined])?;
    let all: Vec<i64> = runs.iter().flat_map(|r| i64s(&r[0])).collect();
    let epoch: Vec<i64> = (0..8).collect();
    assert_eq!(all, [epoch.clone(), epoch].concat());
    let j = runs[0][1].dense()?;
    assert_eq!(j.dims()[1], 4);
    assert_eq!(&j.as_slice::<i64>()?[..4], &[0, 1, 0, 1]);
    coord.request_stop();
    coord.join(threads, JOIN)?;

    let g = Graph::new();
    let x = g.constant(Tensor::scalar(5i32))?;
    let limited = g.limit_epochs(x, 2)?;
    let sess = Session::new(&g);
    assert_eq!(drain(&sess, &[limited])?.len(), 2);

    // An operation timeout set on the session reaches every queue: a
    // batch that never fills (nothing is kept) times out.
    let g = Graph::new();
    let q = g.range_input_producer(
        3,
        ProducerOptions {
            shuffle: false,
            ..Default::default()
        },
    )?;
    let d = g.dequeue(q)?[0];
    let never = g.constant(Tensor::scalar(false))?;
    let batch = g.batch(
        &[vec![d]],
        Some(never),
        BatchOptions {
            batch_size: 1,
            ..Default::default()
        },
    )?;
    let sess = Session::new(&g);
    sess.set_operation_timeout(Some(Duration::from_millis(10)));
    let coord = Coordinator::new();
    let threads = sess.start_queue_runners(&coord)?;
    let err = sess.run(&batch, &[]).unwrap_err();
    assert_eq!(err.kind(), Kind::DeadlineExceeded, "{err}");
    sess.close();
    // A starved runner thread may have timed out too; nothing else.
    if let Err(e) = coord.join(threads, JOIN) {
        assert_eq!(e.kind(), Kind::DeadlineExceeded, "{e}");
    }
    Ok(())
}

/// Build-time checks fail InvalidArgument at once, as TensorFlow's
/// Python layer does.
#[test]
fn graph_checks_at_build_time() -> Result<()> {
    let g = Graph::new();
    let f = g.constant(Tensor::vector(vec![1.0f32, 2.0]))?;
    let i = g.constant(Tensor::vector(vec![1i32, 2, 3]))?;
    let s = g.constant(Tensor::string("x"))?;
    let invalid = |r: Result<Output>| {
        let e = r.unwrap_err();
        assert_eq!(e.kind(), Kind::InvalidArgument, "{e}");
        e.to_string()
    };
    assert!(invalid(g.op1(Binary { op: BinaryOp::Add }, &[f, i]))
        .contains("different dtypes"));
    let three = g.constant(Tensor::vector(vec![1.0f32, 2.0, 3.0]))?;
    assert!(invalid(g.op1(Binary { op: BinaryOp::Mul }, &[f, three]))
        .contains("incompatible"));
    invalid(g.op1(
        Reshape {
            shape: Some(vec![3]),
        },
        &[f],
    ));
    invalid(g.op1(
        Reshape {
            shape: Some(vec![-1, -1]),
        },
        &[f],
    ));
    invalid(g.op1(Transpose { perm: vec![1, 0] }, &[f]));
    invalid(g.op1(
        DecodeRaw {
            out_type: DType::U8,
            little_endian: true,
        },
        &[f],
    ));
    invalid(g.op1(Neg {}, &[s]));
    invalid(g.op1(Stack { axis: 0 }, &[f, i]));
    invalid(g.op1(
        StridedSlice::index(&[SliceDim::At(0), SliceDim::At(0)]),
        &[f],
    ));
    invalid(g.op1(StridedSlice::index(&[SliceDim::At(2)]), &[f]));
    assert_eq!(
        g.shape(g.op1(
            Reshape {
                shape: Some(vec![-1, 1])
            },
            &[i]
        )?)
        .unwrap()
        .dims(),
        &[Some(3), Some(1)]
    );
    // Sequence specs TensorFlow refuses when the op is built: both empty,
    // a fixed (not fixed_sequence) feature list; and a batch of one string.
    let none = FeatureSpec::builder().build()?;
    let fixed = FeatureSpec::builder().fixed("x", DType::I64, []).build()?;
    let seq = |c: &FeatureSpec, f: &FeatureSpec| {
        parse_sequence(
            &g,
            s,
            ParseSequence {
                context: c.clone(),
                sequence: f.clone(),
                batched: false,
            },
        )
        .map(|_| s)
    };
    invalid(seq(&none, &none));
    assert!(invalid(seq(&none, &fixed)).contains("\"x\""));
    assert!(seq(&fixed, &none).is_ok());
    invalid(
        parse_sequence(
            &g,
            s,
            ParseSequence {
                context: fixed,
                sequence: none,
                batched: true,
            },
        )
        .map(|_| s),
    );
    let e = g
        .batch(
            &[vec![f]],
            None,
            BatchOptions {
                batch_size: 2,
                capacity: 4,
                shuffle: Some(ShuffleOptions {
                    min_after_dequeue: 4,
                    seed: None,
                }),
                ..Default::default()
            },
        )
        .unwrap_err();
    assert_eq!(e.kind(), Kind::InvalidArgument);
    assert!(g.batch(&[vec![f]], None, BatchOptions::default()).is_err());
    Ok(())
}

/// Graphs and sessions cross threads (the Python bindings call them from
/// several), and dropping the last handle to a session ends its threads.
#[test]
fn shared_across_threads_and_dropping_ends_threads() -> Result<()> {
    fn send_sync<T: Send + Sync + Clone>() {}
    send_sync::<Graph>();
    send_sync::<Session>();

    let g = Graph::new();
    let q = g.range_input_producer(
        3,
        ProducerOptions {
            shuffle: false,
            ..Default::default()
        },
    )?;
    let d = g.dequeue(q)?[0];
    let batch = g.batch(
        &[vec![d]],
        None,
        BatchOptions {
            batch_size: 3,
            ..Default::default()
        },
    )?;
    let sess = Session::new(&g);
    let coord = Coordinator::new();
    let threads = sess.start_queue_runners(&coord)?;
    let runs: Vec<_> = (0..2)
        .map(|_| {
            let sess = sess.clone();
            let batch = batch.clone();
            thread::spawn(move || sess.run(&batch, &[]))
        })
        .collect();
    for r in runs {
        let v = r.join().unwrap()?;
        let mut got = i32s(&v[0]);
        got.sort_unstable();
        assert_eq!(got, vec![0, 1, 2], "one whole epoch per batch");
    }
    drop(sess);
    // Endless input, but the session is gone: the threads end.
    coord.join(threads, JOIN)
}

/// A crop box given as tensors is checked when run, with TensorFlow's
/// assertion messages; a constant target gives the static size.
#[test]
fn crop_box_from_tensors() -> Result<()> {
    let g = Graph::new();
    let img = g.constant(Tensor::new([5, 7, 1], (0..35u8).collect())?)?;
    let at =
        g.placeholder(DType::I32, Some(PartialShape::new(vec![])), None)?;
    let two = g.constant(Tensor::scalar(2i32))?;
    let three = g.constant(Tensor::scalar(3i64))?;
    let crop = g.op1(CropToBoxInputs {}, &[img, at, two, three, three])?;
    assert_eq!(g.shape(crop).unwrap().dims(), &[Some(3), Some(3), Some(1)]);
    let sess = Session::new(&g);
    let got = sess.run(&[crop], &[(at, Tensor::scalar(1i32).into())])?;
    let px = got[0].dense()?.as_slice::<u8>()?.to_vec();
    assert_eq!(px, [9, 10, 11, 16, 17, 18, 23, 24, 25]);
    let e = sess
        .run(&[crop], &[(at, Tensor::scalar(3i32).into())])
        .unwrap_err();
    assert_eq!(e.kind(), Kind::InvalidArgument);
    assert!(
        e.to_string().contains(
            "assertion failed: [height must be >= target + offset.]"
        ),
        "{e}"
    );
    let f = g.constant(Tensor::scalar(1.0f32))?;
    assert!(g
        .op1(CropToBoxInputs {}, &[img, f, two, three, three])
        .is_err());
    Ok(())
}
