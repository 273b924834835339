//! Sidecar indexes lie beside their data files and never reach a pipeline
//! (issue 14): they are hidden files, a glob's wildcard never matches
//! them (though it matches other hidden files, as TensorFlow's does), and
//! a TFRecord reader handed one anyway says what the file is.

mod reader_support;

use std::collections::BTreeSet;

use feedstock::input::match_filenames_once_in;
use feedstock::input::stream::{Order, RecordStream};
use feedstock::io::fs::{default_fs, FileSystem, LocalFs};
use feedstock::io::index::{is_sidecar, sidecar_path, RecordIndex};
use feedstock::io::tfrecord::{
    CorruptRecords, ReaderBuilder, SkipBudget, WriterBuilder,
};
use feedstock::reader::{Reader, TfRecordReader};
use feedstock::Kind;
use reader_support::{read_all, Files};

/// Four data files `train-F.tfrecord` with their sidecars, in `dir`:
/// the data files, sorted, and every record in file order.
fn data_with_sidecars(dir: &std::path::Path) -> (Vec<String>, Vec<Vec<u8>>) {
    let (mut files, mut all) = (Vec::new(), Vec::new());
    for f in 0..4 {
        let path = dir.join(format!("train-{f}.tfrecord"));
        let path = path.to_str().unwrap().to_owned();
        let mut w = WriterBuilder::new()
            .from_writer(std::fs::File::create(&path).unwrap());
        for i in 0..(30 + f * 11) {
            let r = format!("file {f} record {i}").into_bytes();
            w.write_record(&r).unwrap();
            all.push(r);
        }
        w.finish().unwrap();
        let side = RecordIndex::build(&LocalFs, &path, None)
            .unwrap()
            .write_sidecar(false)
            .unwrap();
        assert_eq!(side, sidecar_path(&path));
        files.push(path);
    }
    (files, all)
}

#[test]
fn sidecars_are_hidden_files_beside_their_data() {
    let dir = tempfile::tempdir().unwrap();
    let (files, _) = data_with_sidecars(dir.path());
    let names: BTreeSet<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    let want: BTreeSet<String> = (0..4)
        .flat_map(|f| {
            [
                format!("train-{f}.tfrecord"),
                format!(".train-{f}.tfrecord.feedstock-index"),
            ]
        })
        .collect();
    assert_eq!(names, want);
    for f in &files {
        assert!(!is_sidecar(f), "{f}");
        assert!(is_sidecar(&sidecar_path(f)), "{f}");
    }
}

#[test]
fn data_globs_match_the_data_files_only_and_read_exactly_their_records() {
    let dir = tempfile::tempdir().unwrap();
    let (files, all) = data_with_sidecars(dir.path());
    let d = dir.path().to_str().unwrap();
    for pattern in [
        format!("{d}/train-*"),
        format!("{d}/*"),
        format!("{d}/*.tfrecord"),
        format!("{d}/?rain-[0-9]*"),
    ] {
        // The library's local glob, and the default (path or URL) one
        // that `match_filenames_once` and the command line use.
        let got = match_filenames_once_in(&LocalFs, &pattern).unwrap();
        assert_eq!(got, files, "{pattern}");
        assert_eq!(default_fs().glob(&pattern).unwrap(), files, "{pattern}");

        // The queue pipeline's reader over the matched files.
        let reader = Reader::new(TfRecordReader::new());
        let records = read_all(&reader, &Files::new(got.clone()));
        let values: Vec<Vec<u8>> =
            records.iter().map(|r| r.value.to_vec()).collect();
        assert_eq!(values, all, "{pattern}");

        // The record stream, in order and globally shuffled.
        let mut b = RecordStream::builder(got.clone());
        let seq: Vec<Vec<u8>> = b
            .build()
            .unwrap()
            .map(|r| r.unwrap().value.to_vec())
            .collect();
        assert_eq!(seq, all, "{pattern}");
        b.order(Order::Global).seed(3);
        let mut global: Vec<Vec<u8>> = b
            .build()
            .unwrap()
            .map(|r| r.unwrap().value.to_vec())
            .collect();
        assert_ne!(global, all, "{pattern}: not shuffled");
        global.sort();
        let mut sorted = all.clone();
        sorted.sort();
        assert_eq!(global, sorted, "{pattern}");
    }
    // As a `file://` URL, through the default file system.
    let urls = default_fs().glob(&format!("file://{d}/*")).unwrap();
    let want: Vec<String> =
        files.iter().map(|f| format!("file://{f}")).collect();
    assert_eq!(urls, want);
}

#[test]
fn only_a_pattern_that_spells_the_dot_matches_sidecars() {
    let dir = tempfile::tempdir().unwrap();
    let (files, _) = data_with_sidecars(dir.path());
    let d = dir.path().to_str().unwrap();
    let got = LocalFs.glob(&format!("{d}/.*")).unwrap();
    let want: Vec<String> = files.iter().map(|f| sidecar_path(f)).collect();
    assert_eq!(got, want);
    // A wildcard matches other hidden files, as TensorFlow's does, but
    // never a sidecar: here it matches no file at all.
    let empty = tempfile::tempdir().unwrap();
    std::fs::write(empty.path().join(sidecar_path("data")), b"x").unwrap();
    let pattern = format!("{}/*", empty.path().to_str().unwrap());
    let e = LocalFs.glob(&pattern).unwrap_err();
    assert_eq!(e.kind(), Kind::NotFound, "{e}");
    std::fs::write(empty.path().join(".hidden"), b"x").unwrap();
    assert_eq!(LocalFs.glob(&pattern).unwrap().len(), 1);
}

#[test]
fn a_sidecar_given_to_a_tfrecord_reader_is_named_as_an_index() {
    let dir = tempfile::tempdir().unwrap();
    let (files, _) = data_with_sidecars(dir.path());
    let side = sidecar_path(&files[0]);
    let strict = CorruptRecords::Fail;
    let skip = CorruptRecords::Skip(SkipBudget::new());
    for policy in [strict, skip] {
        // The record-level reader.
        let mut b = ReaderBuilder::new();
        b.corrupt_records(policy.clone());
        let e = b.open(&side).unwrap().next().unwrap().unwrap_err();
        assert_eq!(e.kind(), Kind::InvalidArgument, "{policy:?}: {e}");
        assert_eq!(e.file(), Some(side.as_str()), "{e}");
        assert_eq!(e.offset(), Some(0), "{e}");
        assert!(e.message().contains("not a TFRecord file"), "{e}");
        assert!(e.message().contains("record index"), "{e}");

        // The queue pipeline's reader.
        let tf = TfRecordReader::builder()
            .corrupt_records(policy.clone())
            .build();
        let log = tf.skip_log().clone();
        let reader = Reader::new(tf);
        let e = reader.read(&Files::new([side.clone()])).unwrap_err();
        assert_eq!(e.kind(), Kind::InvalidArgument, "{policy:?}: {e}");
        assert_eq!(e.file(), Some(side.as_str()), "{e}");
        assert!(e.message().contains("record index"), "{e}");
        assert_eq!(log.skipped(), 0, "counted as damage");
    }
}
