//! Paths and URLs with multibyte characters (issue 33, item 1): every
//! place the library cuts a path or URL a user gave cuts between
//! characters, never inside one (a panic).

#![cfg(feature = "object-store")]

use std::fs;

use feedstock::io::fs::{default_fs, FileSystem, LocalFs, OutputOptions};
use feedstock::io::index::{sidecar_path, IndexCheck, RecordIndex};
use feedstock::io::store::AnyFs;
use feedstock::io::tfrecord::{ReaderBuilder, WriterBuilder};

/// Names where a URL scheme's length (3 to 8 bytes) falls inside a
/// character.
const NAMES: [&str; 6] = [
    "données/x.tfrecord",
    "データ/x.tfrecord",
    "é",
    "ab€",
    "s3:é",
    "httpé://x",
];

#[test]
fn is_url_takes_any_name() {
    for name in NAMES {
        assert!(!AnyFs::is_url(name), "{name}");
    }
    assert!(AnyFs::is_url("S3://bücket/données"));
    assert!(AnyFs::is_url("https://hôte/données"));
    assert!(!AnyFs::is_url("s3:/"));
    assert!(!AnyFs::is_url(""));
}

#[test]
fn a_file_under_a_multibyte_directory_is_read_indexed_and_globbed() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["données/é.tfrecord", "データ/x.tfrecord", "ab€/ü.tfrecord"]
    {
        let path = dir.path().join(name);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        let path = path.to_str().unwrap();
        let mut w = WriterBuilder::new()
            .create_output(path, &OutputOptions::new())
            .unwrap();
        w.write_record(b"one").unwrap();
        w.commit().unwrap();
        let fs = default_fs();
        assert_eq!(fs.size(path).unwrap(), 19);
        let n = ReaderBuilder::new().open_in(&*fs, path).unwrap().count();
        assert_eq!(n, 1);
        // Its index sits beside it, the dot before the multibyte name.
        let side = sidecar_path(path);
        let (head, tail) = path.rsplit_once('/').unwrap();
        assert_eq!(side, format!("{head}/.{tail}.feedstock-index"));
        let index = RecordIndex::build(&*fs, path, None).unwrap();
        let mut out = OutputOptions::new().create(&side).unwrap();
        std::io::Write::write_all(&mut out, &index.to_bytes()).unwrap();
        out.commit().unwrap();
        let index =
            RecordIndex::load(&LocalFs, path, None, IndexCheck::Full).unwrap();
        assert_eq!(index.len(), 1);
        // Globs with the wildcard after, and inside, the multibyte part.
        for pattern in [format!("{head}/*.tfrecord"), format!("{head}*/*")] {
            assert_eq!(fs.glob(&pattern).unwrap(), [path], "{pattern}");
        }
        let url = format!("file://{path}");
        assert_eq!(fs.size(&url).unwrap(), 19);
        let n = ReaderBuilder::new().open_in(&*fs, &url).unwrap().count();
        assert_eq!(n, 1);
    }
}

#[test]
fn a_store_glob_whose_path_decodes_shorter_is_an_error_not_a_panic() {
    // Nothing listens on port 1. Each URL's path is written with percent
    // escapes (or characters) whose decoded form is shorter, so a prefix
    // cut by the decoded length falls inside a character.
    let fs = AnyFs::new();
    for pattern in [
        "http://127.0.0.1:1/xé%41/*.tfrecord",
        "http://127.0.0.1:1/ééééé%41%41%41/*.tfrecord",
        "http://127.0.0.1:1/données/*.tfrecord",
        "http://127.0.0.1:1/a%20b/*.tfrecord",
    ] {
        let e = fs.glob(pattern).unwrap_err();
        assert_eq!(e.file(), Some(pattern), "{e}");
    }
}
