//! `Reader::read_batch` and `RecordBatch`: the same records and keys as
//! `read_up_to`, keys built only on demand, and the one-call glue to the
//! batched decoders.

mod reader_support;

use std::cell::Cell;

use feedstock::decode::csv::{CsvDecoder, RecordDefault};
use feedstock::decode::fixed_image::FixedImageDecoder;
use feedstock::reader::{
    FixedLengthRecordReader, Reader, Record, RecordBatch, TextLineReader,
};
use feedstock::Kind;
use reader_support::{golden, write, Files};

#[test]
fn read_batch_gives_what_read_up_to_gives_file_by_file() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "a.csv", b"1,2\n3,4\n5,6\n");
    let b = write(dir.path(), "b.csv", b"7,8\n");
    let via_batch = Reader::new(TextLineReader::new());
    let via_up_to = Reader::new(TextLineReader::new());
    let (wa, wb) = (Files::new([&a, &b]), Files::new([&a, &b]));
    let mut batches = Vec::new();
    loop {
        let got = via_batch.read_batch(&wa, 2);
        let want = via_up_to.read_up_to(&wb, 2);
        match (got, want) {
            (Ok(got), Ok(want)) => {
                assert_eq!(got.clone().into_records(), want);
                assert_eq!(
                    got.keys(),
                    want.iter().map(|r| r.key.clone()).collect::<Vec<_>>()
                );
                batches.push((got.file().unwrap().to_owned(), got.len()));
            }
            (Err(g), Err(w)) => {
                assert_eq!(g.kind(), Kind::OutOfRange);
                assert_eq!(w.kind(), Kind::OutOfRange);
                break;
            }
            (g, w) => panic!("read_batch {g:?} but read_up_to {w:?}"),
        }
    }
    // A batch never spans two files.
    assert_eq!(batches, [(a.clone(), 2), (a, 1), (b, 1)]);
    assert_eq!(via_batch.num_records_produced(), 4);
    assert_eq!(via_batch.num_work_units_completed(), 2);
    assert!(via_batch
        .read_batch(&Files::new(Vec::<String>::new()), 0)
        .unwrap()
        .is_empty());
}

#[test]
fn decode_builds_keys_only_when_the_decoder_fails() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "n.csv", b"1,2\n3,4\n5,x\n");
    let reader = Reader::new(TextLineReader::new());
    let files = Files::new([&path]);
    let csv = CsvDecoder::new(vec![RecordDefault::i32(0); 2]).unwrap();

    let calls = Cell::new(Vec::new());
    let good = reader.read_batch(&files, 2).unwrap();
    let cols = good
        .decode(|r| {
            let named = r.key(0).is_some();
            calls.set([calls.take(), vec![named]].concat());
            csv.decode_batch(r)
        })
        .unwrap();
    assert_eq!(cols[0].as_slice::<i32>().unwrap(), &[1, 3]);
    assert_eq!(calls.take(), [false], "one call, no keys");

    let bad = reader.read_batch(&files, 2).unwrap();
    let e = bad
        .decode(|r| {
            let named = r.key(0).is_some();
            calls.set([calls.take(), vec![named]].concat());
            csv.decode_batch(r)
        })
        .unwrap_err();
    assert_eq!(calls.take(), [false, true], "a second call with keys");
    assert!(e.to_string().contains(&format!("{path}:3")), "{e}");
}

#[test]
fn cifar_records_decode_in_one_call_with_keys_in_errors() {
    let reader =
        Reader::new(FixedLengthRecordReader::builder(3073).build().unwrap());
    let path = golden("cifar_like.bin");
    let batch = reader.read_batch(&Files::new([&path]), 16).unwrap();
    assert_eq!(batch.len(), 4);
    let dec = FixedImageDecoder::cifar10();
    let out = batch.decode(|r| dec.decode_batch(r)).unwrap();
    assert_eq!(out.images.dims(), &[4, 32, 32, 3]);
    assert_eq!(out.labels.as_slice::<i32>().unwrap()[0], 1);
    // Without keys, straight from the batch.
    assert_eq!(dec.decode_batch(&batch).unwrap(), out);

    // A decoder of another record size names the first record by key.
    let wrong = FixedImageDecoder::cifar100();
    let e = batch.decode(|r| wrong.decode_batch(r)).unwrap_err();
    assert!(e.to_string().contains(&format!("{path}:0")), "{e}");
}

#[test]
fn from_records_names_keys_by_offset() {
    let b =
        RecordBatch::from_records("f", [(0, "a".into()), (16, "b".into())]);
    assert_eq!(b.keys(), ["f:0", "f:16"]);
    assert_eq!(b.values().len(), 2);
    assert_eq!(b.file(), Some("f"));
}

/// Everything a reader gives over `files`: each record as
/// `Ok(key, value)`, each error as `Err(kind, message)`, until the files
/// run out; with the reader's counters at the end.
type Outcome = (Vec<Result<(String, Vec<u8>), (Kind, String)>>, u64, u64);

/// Calls `step` until the files run out, collecting what it gives.
fn drain(
    reader: &Reader,
    files: &[String],
    mut step: impl FnMut(&Reader, &Files) -> feedstock::Result<Vec<Record>>,
) -> Outcome {
    let work = Files::new(files.to_vec());
    let mut out = Vec::new();
    loop {
        assert!(out.len() < 1000, "the reader never reaches the end");
        match step(reader, &work) {
            Ok(records) => out.extend(
                records.into_iter().map(|r| Ok((r.key, r.value.to_vec()))),
            ),
            Err(e) if e.kind() == Kind::OutOfRange => break,
            Err(e) => out.push(Err((e.kind(), e.to_string()))),
        }
    }
    let produced = reader.num_records_produced();
    (out, produced, reader.num_work_units_completed())
}

/// One `read` at a time.
fn one_at_a_time(reader: &Reader, files: &[String]) -> Outcome {
    drain(reader, files, |r, work| Ok(vec![r.read(work)?]))
}

/// Through `read_batch_bytes(n, max_bytes)`, batches flattened.
fn in_batches(
    reader: &Reader,
    files: &[String],
    n: usize,
    max_bytes: u64,
) -> Outcome {
    drain(reader, files, |r, work| {
        let batch = r.read_batch_bytes(work, n, max_bytes)?;
        assert!(!batch.is_empty() && batch.len() <= n);
        let total: usize = batch.values().iter().map(|v| v.len()).sum();
        let last = batch.values().last().map_or(0, |v| v.len());
        assert!(total - last < max_bytes as usize, "batch past max_bytes");
        Ok(batch.into_records())
    })
}

#[test]
fn batches_hold_exactly_what_single_reads_give_errors_included() {
    use feedstock::io::tfrecord::WriterBuilder;
    use feedstock::reader::{TfRecordReader, WholeFileReader};

    let dir = tempfile::tempdir().unwrap();
    let lines = [
        write(dir.path(), "a.txt", b"one\ntwo\nthree\nfour\nfive\n"),
        write(dir.path(), "empty.txt", b""),
        write(dir.path(), "b.txt", b"six\nseven"),
    ];
    // Five records, the third one damaged: an error after two records,
    // then the next file.
    let mut w = WriterBuilder::new().from_writer(Vec::new());
    for r in ["r0", "r1", "r2", "r3", "r4"] {
        w.write_record(r.as_bytes()).unwrap();
    }
    let mut damaged = w.finish().unwrap();
    damaged[2 * 18 + 12] ^= 1;
    let records = [
        write(dir.path(), "damaged.tfrecord", &damaged),
        write(dir.path(), "clean.tfrecord", &{
            let mut w = WriterBuilder::new().from_writer(Vec::new());
            w.write_record(b"c0").unwrap();
            w.finish().unwrap()
        }),
    ];
    type Make = fn() -> Reader;
    let cases: [(&str, Make, &[String]); 3] = [
        ("lines", || Reader::new(TextLineReader::new()), &lines),
        ("tfrecord", || Reader::new(TfRecordReader::new()), &records),
        (
            "whole files",
            || Reader::new(WholeFileReader::new()),
            &lines,
        ),
    ];
    for (name, make, files) in cases {
        let want = one_at_a_time(&make(), files);
        assert!(!want.0.is_empty());
        for (n, max_bytes) in
            [(1, u64::MAX), (2, u64::MAX), (3, 7), (100, u64::MAX)]
        {
            let got = in_batches(&make(), files, n, max_bytes);
            assert_eq!(
                got, want,
                "{name}, batches of {n} up to {max_bytes} bytes"
            );
        }
    }
    // The damaged file's error names it, after its first two records.
    let (tf, _, _) =
        one_at_a_time(&Reader::new(TfRecordReader::new()), &records);
    assert_eq!(tf.len(), 4);
    assert!(
        matches!(&tf[2], Err((Kind::DataLoss, m)) if m.contains("damaged.tfrecord")),
        "{tf:?}"
    );
}
