//! The front door, [`Dataset`]: TFRecord → parse → shuffle → batch (and
//! arrays in memory), every example exactly once per epoch, and a
//! checkpoint at any batch that a fresh loader (or a fresh process,
//! after a SIGKILL) resumes exactly.

mod child_support;

use std::collections::BTreeMap;
use std::io::Write;

use feedstock::dataset::{Checkpoint, Dataset, Shuffle};
use feedstock::decode::example::FeatureSpec;
use feedstock::input::Remainder;
use feedstock::io::fs::OutputOptions;
use feedstock::io::tfrecord::WriterBuilder;
use feedstock::io::Compression;
use feedstock::proto::Example;
use feedstock::{DType, Kind, Tensor};

/// Examples per file, and the files (one gzip).
const PER_FILE: i64 = 150;
const FILES: [(&str, Compression); 3] = [
    ("a.tfrecord", Compression::None),
    ("b.tfrecord.gz", Compression::Gzip),
    ("c.tfrecord", Compression::None),
];
const TOTAL: usize = PER_FILE as usize * FILES.len();

/// Writes the files: example `id` has `id` and a 3-float `x` of `id`.
fn files(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    for (f, (name, c)) in FILES.iter().enumerate() {
        let path = dir.join(name);
        let mut w = WriterBuilder::new()
            .compression(*c)
            .from_writer(std::fs::File::create(&path).unwrap());
        for i in 0..PER_FILE {
            let id = f as i64 * 1000 + i;
            let ex = Example::builder()
                .int64("id", [id])
                .floats("x", [id as f32; 3])
                .build();
            w.write_record(&prost::Message::encode_to_vec(&ex)).unwrap();
        }
        w.finish().unwrap();
        out.push(path.to_str().unwrap().to_owned());
    }
    out
}

/// Component `name` of `b`, as a vector.
fn col<T: feedstock::tensor::Element + Clone>(
    b: &feedstock::input::Batch,
    name: &str,
) -> Vec<T> {
    b.get(name)
        .unwrap()
        .dense()
        .unwrap()
        .as_slice::<T>()
        .unwrap()
        .to_vec()
}

fn spec() -> FeatureSpec {
    FeatureSpec::builder()
        .fixed("id", DType::I64, [])
        .fixed("x", DType::F32, [3])
        .build()
        .unwrap()
}

/// The ids of every batch, in order.
fn ids(
    loader: impl Iterator<Item = feedstock::Result<feedstock::input::Batch>>,
) -> Vec<Vec<i64>> {
    loader
        .map(|b| {
            let b = b.unwrap();
            let id = b.get("id").unwrap().dense().unwrap();
            let x = b.get("x").unwrap().dense().unwrap();
            assert_eq!(x.dims(), [b.len(), 3]);
            let ids = id.as_slice::<i64>().unwrap().to_vec();
            for (i, &v) in ids.iter().enumerate() {
                assert_eq!(x.as_slice::<f32>().unwrap()[3 * i], v as f32);
            }
            ids
        })
        .collect()
}

fn base(dir: &std::path::Path) -> Dataset {
    Dataset::tfrecord(files(dir)).unwrap().parse(spec())
}

#[test]
fn every_example_arrives_once_per_epoch_in_batches() {
    let dir = tempfile::tempdir().unwrap();
    for shuffle in [
        Shuffle::None,
        Shuffle::Files,
        Shuffle::Buffer(100),
        Shuffle::Global,
    ] {
        let batches = ids(base(dir.path())
            .shuffle(shuffle)
            .batch(32)
            .epochs(2)
            .seed(3)
            .start()
            .unwrap());
        let sizes: Vec<usize> = batches.iter().map(Vec::len).collect();
        assert!(
            sizes[..sizes.len() - 1].iter().all(|&n| n == 32),
            "{shuffle:?}"
        );
        assert_eq!(sizes.iter().sum::<usize>(), 2 * TOTAL);
        let mut count = BTreeMap::new();
        for id in batches.concat() {
            *count.entry(id).or_insert(0) += 1;
        }
        assert_eq!(count.len(), TOTAL, "{shuffle:?}");
        assert!(count.values().all(|&c| c == 2), "{shuffle:?}");
    }
    // Unshuffled: the files' order; shuffled: not.
    let plain = ids(base(dir.path()).batch(TOTAL).start().unwrap()).concat();
    let want: Vec<i64> = (0..3)
        .flat_map(|f| (0..PER_FILE).map(move |i| f * 1000 + i))
        .collect();
    assert_eq!(plain, want);
    let mixed = ids(base(dir.path())
        .shuffle(Shuffle::Global)
        .batch(TOTAL)
        .start()
        .unwrap())
    .concat();
    assert_ne!(mixed, want);
}

#[test]
fn drop_remainder_and_unbatched_examples() {
    let dir = tempfile::tempdir().unwrap();
    let b = ids(base(dir.path())
        .batch(100)
        .drop_remainder(true)
        .start()
        .unwrap());
    assert_eq!(b.len(), TOTAL / 100);
    assert!(b.iter().all(|x| x.len() == 100));
    // Without .batch(): one example per item, no batch axis.
    let mut loader = base(dir.path()).start().unwrap();
    let first = loader.next().unwrap().unwrap();
    assert_eq!(
        first.get("id").unwrap().dense().unwrap().dims(),
        [] as [usize; 0]
    );
    assert_eq!(first.get("x").unwrap().dense().unwrap().dims(), [3]);
    assert_eq!(loader.count() + 1, TOTAL);
}

/// Stops after `stop` batches, checkpoints (through bytes), resumes in a
/// fresh loader, and compares with the uninterrupted run.
fn resumes_exactly(d: &Dataset, stop: usize) {
    let all = ids(d.start().unwrap());
    let mut first = d.start().unwrap();
    let mut got: Vec<Vec<i64>> = ids(first.by_ref().take(stop));
    let saved = first.checkpoint().unwrap().to_bytes();
    drop(first);
    let cp = Checkpoint::from_bytes(&saved).unwrap();
    got.extend(ids(d.resume(&cp).unwrap()));
    assert_eq!(got, all, "stopped after {stop} batches of {d:?}");
}

#[test]
fn a_checkpoint_at_any_batch_resumes_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let files = files(dir.path());
    for threads in [1, 2, 4] {
        for shuffle in [
            Shuffle::None,
            Shuffle::Files,
            Shuffle::Buffer(200),
            Shuffle::Global,
        ] {
            // Batches of 7 against blocks of 16: stops fall mid-block,
            // mid-file, in the gzip file, with records in the buffer.
            let d = Dataset::tfrecord(files.clone())
                .unwrap()
                .parse(spec())
                .shuffle(shuffle)
                .batch(7)
                .epochs(2)
                .seed(11)
                .threads(threads)
                .block_size(16);
            for stop in [0, 1, 5, 30, 64, 65, 100, 128] {
                resumes_exactly(&d, stop);
            }
        }
    }
}

#[test]
fn the_order_does_not_depend_on_the_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let d = base(dir.path())
        .shuffle(Shuffle::Buffer(64))
        .batch(10)
        .seed(5)
        .block_size(8);
    let one = ids(d.clone().threads(1).start().unwrap());
    for t in [2, 3, 4] {
        assert_eq!(ids(d.clone().threads(t).start().unwrap()), one);
    }
}

#[test]
fn a_checkpoint_of_other_data_or_settings_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = base(dir.path())
        .shuffle(Shuffle::Buffer(50))
        .batch(8)
        .seed(1);
    let mut l = d.start().unwrap();
    l.next().unwrap().unwrap();
    let cp = l.checkpoint().unwrap();
    drop(l);
    for other in [
        d.clone().seed(2),
        d.clone().batch(9),
        d.clone().shuffle(Shuffle::Global),
        d.clone().epochs(3),
        d.clone().drop_remainder(true),
        Dataset::tfrecord(files(dir.path())[..2].to_vec())
            .unwrap()
            .parse(spec())
            .shuffle(Shuffle::Buffer(50))
            .batch(8)
            .seed(1),
    ] {
        let e = other.resume(&cp).unwrap_err();
        assert_eq!(e.kind(), Kind::InvalidArgument, "{other:?}");
        assert!(
            e.to_string().contains("other files or other settings"),
            "{e}"
        );
    }
    // Damaged bytes are refused too.
    let mut bytes = cp.to_bytes();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 1;
    assert!(Checkpoint::from_bytes(&bytes).is_err());
}

#[test]
fn arrays_in_memory_batch_shuffle_and_resume() {
    let n = 103;
    let x =
        Tensor::new([n, 2], (0..2 * n as i32).collect::<Vec<_>>()).unwrap();
    let y = Tensor::new([n], (0..n as i64).collect::<Vec<_>>()).unwrap();
    let d = Dataset::arrays([("x", x), ("y", y)])
        .unwrap()
        .shuffle(Shuffle::Global)
        .batch(10)
        .epochs(2)
        .seed(9);
    let batches: Vec<(Vec<i32>, Vec<i64>)> = d
        .start()
        .unwrap()
        .map(|b| {
            let b = b.unwrap();
            let x = col::<i32>(&b, "x");
            let y = col::<i64>(&b, "y");
            (x, y)
        })
        .collect();
    let mut seen = vec![0; n];
    for (x, y) in &batches {
        for (i, &v) in y.iter().enumerate() {
            seen[v as usize] += 1;
            assert_eq!(&x[2 * i..2 * i + 2], [2 * v as i32, 2 * v as i32 + 1]);
        }
    }
    assert!(seen.iter().all(|&c| c == 2));
    let mut l = d.start().unwrap();
    let before: Vec<_> = l.by_ref().take(7).map(|b| b.unwrap()).collect();
    let cp = l.checkpoint().unwrap();
    drop(l);
    let after: Vec<_> = d.resume(&cp).unwrap().map(|b| b.unwrap()).collect();
    let all: Vec<_> = d.start().unwrap().map(|b| b.unwrap()).collect();
    assert_eq!(before.into_iter().chain(after).collect::<Vec<_>>(), all);
}

#[test]
fn a_damaged_record_is_an_error_naming_the_file_and_the_record() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.tfrecord");
    let mut w = WriterBuilder::new()
        .from_writer(std::fs::File::create(&path).unwrap());
    for i in 0..20i64 {
        let ex = if i == 13 {
            Example::builder().floats("id", [1.0]).build()
        } else {
            Example::builder()
                .int64("id", [i])
                .floats("x", [0.0; 3])
                .build()
        };
        w.write_record(&prost::Message::encode_to_vec(&ex)).unwrap();
    }
    w.finish().unwrap();
    let p = path.to_str().unwrap().to_owned();
    let mut l = Dataset::tfrecord(p.as_str())
        .unwrap()
        .parse(spec())
        .batch(4)
        .block_size(8)
        .start()
        .unwrap();
    let mut ok = 0;
    let e = loop {
        match l.next_batch() {
            Ok(Some(b)) => ok += b.len(),
            Ok(None) => panic!("the damaged record was not reported"),
            Err(e) => break e,
        }
    };
    assert_eq!(ok, 8, "the blocks before the bad one are delivered");
    assert_eq!(e.kind(), Kind::InvalidArgument);
    // Keyed as TensorFlow's TFRecordReader keys it: FILE:OFFSET.
    let offset = feedstock::io::index::RecordIndex::open(
        &feedstock::io::fs::LocalFs,
        &p,
        None,
    )
    .unwrap()
    .position(13)
    .unwrap()
    .offset;
    assert_eq!(e.key(), Some(format!("{p}:{offset}").as_str()), "{e}");
    // The loader keeps reporting it; stop() reports it too.
    assert_eq!(l.next_batch().unwrap_err().kind(), Kind::InvalidArgument);
    assert_eq!(l.stop().unwrap_err().kind(), Kind::InvalidArgument);
}

#[test]
fn keys_name_each_example_and_padding() {
    let dir = tempfile::tempdir().unwrap();
    let f = files(dir.path());
    // 450 examples over 4 hosts, padded: 113 each, 2 of them padding.
    let mut pads = 0;
    let mut real = Vec::new();
    for host in 0..4 {
        let l = Dataset::tfrecord(f.clone())
            .unwrap()
            .parse(spec())
            .shard(host, 4)
            .unwrap()
            .remainder(Remainder::Pad)
            .keys(true)
            .batch(1000)
            .start()
            .unwrap();
        let batches: Vec<_> = l.map(|b| b.unwrap()).collect();
        assert_eq!(batches.len(), 1);
        let b = &batches[0];
        assert_eq!(b.len(), 113);
        let keys = col::<bytes::Bytes>(b, "__key__");
        let ids = col::<i64>(b, "id");
        for (k, id) in keys.iter().zip(ids) {
            let k = String::from_utf8(k.to_vec()).unwrap();
            if k.starts_with("<pad>") {
                pads += 1;
            } else {
                assert!(k.contains(".tfrecord"), "{k}");
                real.push(id);
            }
        }
    }
    assert_eq!(pads, 2);
    real.sort_unstable();
    real.dedup();
    assert_eq!(real.len(), TOTAL);
}

#[test]
fn standard_input_and_no_files_are_refused() {
    let e = Dataset::tfrecord("-").unwrap_err();
    assert!(e.to_string().contains("standard input"), "{e}");
    assert!(Dataset::tfrecord(Vec::<String>::new()).is_err());
    let e = Dataset::tfrecord("/nonexistent/dir/*.tfrecord").unwrap_err();
    assert_eq!(e.kind(), Kind::NotFound);
}

#[test]
fn a_loader_can_be_cancelled_and_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let mut l = base(dir.path()).batch(4).forever().start().unwrap();
    l.next().unwrap().unwrap();
    l.canceller().unwrap().cancel();
    assert_eq!(l.next_batch().unwrap_err().kind(), Kind::Cancelled);
    assert!(l.stop().is_ok(), "a cancel is not an error of the pipeline");
    assert_eq!(l.next_batch().unwrap_err().kind(), Kind::Cancelled);
}

fn child_dataset(files: Vec<String>) -> Dataset {
    Dataset::tfrecord(files)
        .unwrap()
        .parse(spec())
        .shuffle(Shuffle::Buffer(100))
        .batch(5)
        .epochs(3)
        .seed(77)
        .threads(2)
}

const CHILD_ENV: &str = "FEEDSTOCK_DATASET_CHILD_DIR";

/// The child process of `a_killed_process_resumes_from_its_last_checkpoint`
/// (does nothing when run as a test): prints each batch's ids as a line
/// `@@B ids`, and after every 7th batch writes its checkpoint atomically
/// to `DIR/checkpoint`. Resumes from it if it exists.
#[test]
fn child_loads_and_checkpoints() {
    let Ok(dir) = std::env::var(CHILD_ENV) else {
        return;
    };
    let dir = std::path::Path::new(&dir);
    let files: Vec<String> = std::fs::read_to_string(dir.join("files"))
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    let d = child_dataset(files);
    let cp_path = dir.join("checkpoint");
    let cp_path = cp_path.to_str().unwrap();
    let mut loader = match std::fs::read(cp_path) {
        Ok(bytes) => {
            d.resume(&Checkpoint::from_bytes(&bytes).unwrap()).unwrap()
        }
        Err(_) => d.start().unwrap(),
    };
    let stdout = std::io::stdout();
    while let Some(b) = loader.next_batch().unwrap() {
        let ids = col::<i64>(&b, "id");
        stdout
            .lock()
            .write_all(format!("@@B {ids:?}\n").as_bytes())
            .unwrap();
        if loader.batches().is_multiple_of(7) {
            let mut out =
                OutputOptions::new().force(true).create(cp_path).unwrap();
            out.write_all(&loader.checkpoint().unwrap().to_bytes())
                .unwrap();
            out.commit().unwrap();
        }
    }
}

/// Runs the child; kills it (SIGKILL) once it has printed `kill_after`
/// lines, if given.
fn run_child(dir: &std::path::Path, kill_after: Option<usize>) -> Vec<String> {
    child_support::run_child(
        "child_loads_and_checkpoints",
        CHILD_ENV,
        dir,
        "@@B ",
        kill_after,
    )
}

#[test]
fn a_killed_process_resumes_from_its_last_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let files = files(dir.path());
    std::fs::write(dir.path().join("files"), files.join("\n")).unwrap();
    let all: Vec<String> = ids(child_dataset(files).start().unwrap())
        .iter()
        .map(|b| format!("{b:?}"))
        .collect();
    assert_eq!(all.len(), 3 * TOTAL / 5);

    let printed = run_child(dir.path(), Some(100));
    assert!(printed.len() >= 100 && printed.len() < all.len());
    let cp = std::fs::read(dir.path().join("checkpoint")).unwrap();
    let done = Checkpoint::from_bytes(&cp).unwrap().delivered() as usize / 5;
    assert!(done <= printed.len() && done >= 70, "{done}");
    assert_eq!(printed[..done], all[..done]);

    // The batches after the checkpoint, each exactly once, in order.
    let rest = run_child(dir.path(), None);
    let mut got = printed[..done].to_vec();
    got.extend(rest);
    assert!(got == all, "{} batches after resume", got.len());
}

#[test]
fn csv_lines_decode_batch_and_resume() {
    use feedstock::dataset::TextLineSource;
    use feedstock::decode::csv::{CsvDecoder, RecordDefault};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rows.csv");
    let mut text = String::from("id,score\n");
    for i in 0..50 {
        text.push_str(&format!("{i},{}.5\n", i * 2));
    }
    std::fs::write(&path, text).unwrap();
    let decoder =
        CsvDecoder::new(vec![RecordDefault::i64(0), RecordDefault::f32(0.0)])
            .unwrap();
    let d = Dataset::text_lines(
        path.to_str().unwrap(),
        TextLineSource::builder().skip_header_lines(1),
    )
    .unwrap()
    .decode_csv(decoder)
    .names(["id", "score"])
    .shuffle(Shuffle::Buffer(10))
    .batch(8)
    .block_size(4);
    let all: Vec<_> = d.start().unwrap().map(|b| b.unwrap()).collect();
    let mut ids: Vec<i64> = all
        .iter()
        .flat_map(|b| {
            let id = col::<i64>(b, "id");
            let s = col::<f32>(b, "score");
            for (i, v) in id.iter().zip(s) {
                assert_eq!(v, *i as f32 * 2.0 + 0.5);
            }
            id
        })
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, (0..50).collect::<Vec<_>>());
    let mut l = d.start().unwrap();
    let before: Vec<_> = l.by_ref().take(3).map(|b| b.unwrap()).collect();
    let cp = l.checkpoint().unwrap();
    drop(l);
    let rest: Vec<_> = d.resume(&cp).unwrap().map(|b| b.unwrap()).collect();
    assert_eq!(before.into_iter().chain(rest).collect::<Vec<_>>(), all);

    // A malformed line names the file and its line number.
    std::fs::write(&path, "id,score\n1,2\nx,3\n").unwrap();
    let decoder =
        CsvDecoder::new(vec![RecordDefault::i64(0), RecordDefault::f32(0.0)])
            .unwrap();
    let e = Dataset::text_lines(
        path.to_str().unwrap(),
        TextLineSource::builder().skip_header_lines(1),
    )
    .unwrap()
    .decode_csv(decoder)
    .batch(8)
    .start()
    .unwrap()
    .next()
    .unwrap()
    .unwrap_err();
    assert_eq!(
        e.key(),
        Some(format!("{}:3", path.to_str().unwrap()).as_str()),
        "{e}"
    );
}

#[test]
fn cifar_like_fixed_length_records_through_decode_raw_and_map() {
    use feedstock::dataset::FixedLengthSource;
    use feedstock::Value;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data_batch_1.bin");
    // 1 label byte + a 2x2x3 image, 40 records.
    let mut bytes = Vec::new();
    for i in 0..40u8 {
        bytes.push(i % 10);
        bytes.extend((0..12).map(|k| i.wrapping_add(k)));
    }
    std::fs::write(&path, bytes).unwrap();
    let d = Dataset::fixed_length(
        path.to_str().unwrap(),
        &FixedLengthSource::builder(13),
    )
    .unwrap()
    .decode_raw(DType::U8)
    .map("cifar", |ex: Vec<Value>| {
        let raw = ex[0].dense()?;
        let label = raw
            .slice(0, 1)?
            .reshape(Vec::<usize>::new())?
            .cast(DType::I32)?;
        let image = raw.slice(1, 13)?.reshape([2, 2, 3])?;
        Ok(vec![Value::Dense(label), Value::Dense(image)])
    })
    .names(["label", "image"])
    .batch(16);
    let batches: Vec<_> = d.start().unwrap().map(|b| b.unwrap()).collect();
    assert_eq!(
        batches.iter().map(|b| b.len()).collect::<Vec<_>>(),
        [16, 16, 8]
    );
    let img = batches[1].get("image").unwrap().dense().unwrap();
    assert_eq!(img.dims(), [16, 2, 2, 3]);
    assert_eq!(img.as_slice::<u8>().unwrap()[..3], [16, 17, 18]);
    let labels = batches[1].get("label").unwrap().dense().unwrap();
    assert_eq!(labels.as_slice::<i32>().unwrap()[..3], [6, 7, 8]);
}

#[test]
fn padded_batches_pad_each_batch_to_its_largest_example() {
    use feedstock::{Tensor, Value};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("seq.tfrecord");
    let mut w = WriterBuilder::new()
        .from_writer(std::fs::File::create(&path).unwrap());
    // Record i holds i % 5 + 1 bytes, each i.
    for i in 0..20u8 {
        w.write_record(&vec![i; usize::from(i % 5) + 1]).unwrap();
    }
    w.finish().unwrap();
    let d = Dataset::tfrecord(path.to_str().unwrap())
        .unwrap()
        .map("bytes", |ex: Vec<Value>| {
            let b = ex[0].dense()?.scalar_value::<bytes::Bytes>()?;
            Ok(vec![Value::Dense(Tensor::new([b.len()], b.to_vec())?)])
        })
        .names(["seq"])
        .block_size(3);
    let batches: Vec<_> = d
        .clone()
        .padded_batch(4)
        .start()
        .unwrap()
        .map(|b| b.unwrap())
        .collect();
    assert_eq!(batches.len(), 5);
    let b = batches[1].get("seq").unwrap().dense().unwrap();
    // Examples 4..8: lengths 5, 1, 2, 3 → padded to 5.
    assert_eq!(b.dims(), [4, 5]);
    assert_eq!(
        b.as_slice::<u8>().unwrap(),
        [4, 4, 4, 4, 4, 5, 0, 0, 0, 0, 6, 6, 0, 0, 0, 7, 7, 7, 0, 0]
    );
    // A batch whose examples share a shape is not padded further.
    let one = d
        .clone()
        .padded_batch(1)
        .start()
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    assert_eq!(one.get("seq").unwrap().dense().unwrap().dims(), [1, 1]);
    // Without padding, different shapes are an error that says so.
    let e = d.batch(4).start().unwrap().next().unwrap().unwrap_err();
    assert!(e.to_string().contains("padded_batch"), "{e}");
}

#[test]
fn a_batch_map_runs_on_whole_blocks_and_must_keep_the_rows() {
    use feedstock::{Tensor, Value};
    let dir = tempfile::tempdir().unwrap();
    let scaled = base(dir.path())
        .map_batch("scale", |cols: Vec<Value>| {
            let x = cols[1].dense()?.as_slice::<f32>()?;
            let n = x.len() / 3;
            let y: Vec<f32> = x.iter().map(|v| v / 1000.0).collect();
            Ok(vec![cols[0].clone(), Value::Dense(Tensor::new([n, 3], y)?)])
        })
        .batch(50)
        .block_size(32);
    let mut seen = 0;
    for b in scaled.start().unwrap() {
        let b = b.unwrap();
        let ids = col::<i64>(&b, "id");
        let x = col::<f32>(&b, "x");
        for (i, id) in ids.iter().enumerate() {
            assert_eq!(x[3 * i], *id as f32 / 1000.0);
        }
        seen += ids.len();
    }
    assert_eq!(seen, TOTAL);
    let bad = base(dir.path()).map_batch("drop", |cols: Vec<Value>| {
        Ok(vec![Value::Dense(cols[0].dense()?.slice(0, 1)?)])
    });
    let e = bad.batch(4).start().unwrap().next().unwrap().unwrap_err();
    assert!(e.to_string().contains("one row per example"), "{e}");
}

#[test]
fn damaged_records_fail_the_start_or_are_skipped_within_a_budget() {
    use feedstock::io::tfrecord::{CorruptRecords, SkipBudget};
    let dir = tempfile::tempdir().unwrap();
    let files = files(dir.path());
    // Flip a bit in the data of the 11th record of a.tfrecord.
    let a = &files[0];
    let offset = feedstock::io::index::RecordIndex::open(
        &feedstock::io::fs::LocalFs,
        a,
        None,
    )
    .unwrap()
    .position(10)
    .unwrap()
    .offset;
    let mut bytes = std::fs::read(a).unwrap();
    bytes[offset as usize + 12 + 5] ^= 1;
    std::fs::write(a, bytes).unwrap();

    // By default the pipeline does not start, naming the file and offset.
    let e = Dataset::tfrecord(files.clone())
        .unwrap()
        .parse(spec())
        .start()
        .unwrap_err();
    assert_eq!(e.kind(), Kind::DataLoss, "{e}");
    assert_eq!(e.file(), Some(a.as_str()), "{e}");
    assert_eq!(e.offset(), Some(offset), "{e}");

    // Skipping within a budget: every other example, once per epoch,
    // the region counted, and an exact resume.
    let d = Dataset::tfrecord(files.clone())
        .unwrap()
        .parse(spec())
        .corrupt_records(CorruptRecords::Skip(
            SkipBudget::new().max_per_file(1),
        ))
        .shuffle(Shuffle::Global)
        .batch(16)
        .epochs(2);
    let l = d.start().unwrap();
    let stats = l.skip_stats();
    assert_eq!(stats.skipped, 1);
    assert_eq!(stats.files[0].regions[0].offset, offset);
    let all: Vec<i64> = ids(l).concat();
    let mut counts = BTreeMap::new();
    for id in &all {
        *counts.entry(*id).or_insert(0) += 1;
    }
    assert_eq!(counts.len(), TOTAL - 1);
    assert!(!counts.contains_key(&10));
    assert!(counts.values().all(|&c| c == 2));
    resumes_exactly(&d, 20);

    // The index built around the damage lives in memory only.
    let log = feedstock::io::tfrecord::SkipLog::new();
    let ix = feedstock::io::index::RecordIndex::build_skipping(
        &feedstock::io::fs::LocalFs,
        a,
        None,
        &CorruptRecords::Skip(SkipBudget::new()),
        &log,
    )
    .unwrap();
    assert!(ix.has_gaps());
    assert_eq!(ix.len(), PER_FILE as u64 - 1);
    let e = ix.write_sidecar(true).unwrap_err();
    assert_eq!(e.kind(), Kind::FailedPrecondition, "{e}");

    // Past the budget it does not start either.
    let e = Dataset::tfrecord(files)
        .unwrap()
        .parse(spec())
        .corrupt_records(CorruptRecords::Skip(
            SkipBudget::new().max_per_file(0),
        ))
        .start()
        .unwrap_err();
    assert!(e.to_string().contains("too many corrupt records"), "{e}");
}
