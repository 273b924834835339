//! `feedstock index`: sidecar indexes of TensorFlow-written files, written
//! atomically, refused over an existing one without --force, and checked
//! against their files with --check.

use std::path::Path;

use feedstock::io::fs::LocalFs;
use feedstock::io::index::{sidecar_path, IndexCheck, RecordIndex};
use feedstock::io::Compression;

use crate::support::{feedstock, golden, sidecar};

fn copy(dir: &Path, name: &str) -> String {
    let to = dir.join(name);
    std::fs::copy(golden(name), &to).unwrap();
    to.to_str().unwrap().to_owned()
}

fn records_in_sidecar(name: &str) -> usize {
    sidecar(name)["records"].as_array().unwrap().len()
}

#[test]
fn index_writes_a_sidecar_that_reads_every_record() {
    let dir = tempfile::tempdir().unwrap();
    let path = copy(dir.path(), "examples.tfrecord");
    let out = feedstock(&["index", &path]);
    assert!(out.status.success(), "{out:?}");
    let n = records_in_sidecar("examples.tfrecord");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let side = sidecar_path(&path);
    assert_eq!(stdout, format!("{n}\t{path}\t{side} written\n"));
    let index =
        RecordIndex::load(&LocalFs, &path, None, IndexCheck::Full).unwrap();
    assert_eq!(index.len() as usize, n);
    // Every record, read through the index, is the one a reader sees.
    let all: Vec<_> = feedstock::io::tfrecord::ReaderBuilder::new()
        .open(&path)
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    for (i, r) in all.iter().enumerate().rev() {
        assert_eq!(index.read(&LocalFs, i as u64).unwrap(), *r);
    }
}

#[test]
fn index_of_a_compressed_file_gives_decompressed_offsets() {
    let dir = tempfile::tempdir().unwrap();
    let path = copy(dir.path(), "examples.gzip.tfrecord");
    let out = feedstock(&["index", "--compression", "gzip", &path]);
    assert!(out.status.success(), "{out:?}");
    let index = RecordIndex::load(
        &LocalFs,
        &path,
        Some(Compression::Gzip),
        IndexCheck::Sampled,
    )
    .unwrap();
    let plain = RecordIndex::build(
        &LocalFs,
        &golden("examples.tfrecord").to_string_lossy(),
        None,
    )
    .unwrap();
    assert_eq!(index.len(), plain.len());
    assert_eq!(index.position(3), plain.position(3));
    let last = index.len() - 1;
    assert_eq!(
        index.read(&LocalFs, last).unwrap().value,
        plain.read(&LocalFs, last).unwrap().value
    );
    // Read as uncompressed, the index is refused.
    let e = RecordIndex::load(&LocalFs, &path, None, IndexCheck::Sampled)
        .unwrap_err();
    assert_eq!(e.kind(), feedstock::Kind::FailedPrecondition);
}

#[test]
fn index_refuses_to_overwrite_without_force_and_check_finds_stale() {
    let dir = tempfile::tempdir().unwrap();
    let path = copy(dir.path(), "examples.tfrecord");
    assert!(feedstock(&["index", &path]).status.success());
    let before = std::fs::read(sidecar_path(&path)).unwrap();

    let again = feedstock(&["index", &path]);
    assert_eq!(again.status.code(), Some(2), "{again:?}");
    let err = String::from_utf8(again.stderr).unwrap();
    assert!(err.contains(&sidecar_path(&path)), "{err}");
    assert!(feedstock(&["index", "--force", &path]).status.success());
    assert_eq!(std::fs::read(sidecar_path(&path)).unwrap(), before);

    let ok = feedstock(&["index", "--check", &path]);
    assert!(ok.status.success(), "{ok:?}");
    assert!(String::from_utf8(ok.stdout).unwrap().ends_with(" ok\n"));

    // One byte of the file changed: --check reads it all and refuses.
    let mut bytes = std::fs::read(&path).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 1;
    std::fs::write(&path, &bytes).unwrap();
    let stale = feedstock(&["index", "--check", &path]);
    assert_eq!(stale.status.code(), Some(2), "{stale:?}");
    let err = String::from_utf8(stale.stderr).unwrap();
    assert!(err.contains("stale"), "{err}");
    assert!(err.contains(&path), "{err}");
    // No leftover temporary files beside the index.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

#[test]
fn index_of_a_damaged_file_fails_naming_the_offset() {
    let dir = tempfile::tempdir().unwrap();
    let path = copy(dir.path(), "examples.tfrecord");
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[20] ^= 1;
    std::fs::write(&path, &bytes).unwrap();
    let out = feedstock(&["index", &path]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("offset 0"), "{err}");
    assert!(!Path::new(&sidecar_path(&path)).exists());
}
