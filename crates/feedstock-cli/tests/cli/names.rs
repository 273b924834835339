//! File names, URLs, flags and fields that are not ASCII (issue 33, item
//! 1): a name with multibyte characters works in every subcommand, a file
//! name that is not UTF-8 is refused by name (exit 2), and nothing a user
//! types is ever sliced inside a character (a panic, exit 101).

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use feedstock::io::tfrecord::ReaderBuilder;
use feedstock::io::Compression;
use feedstock::proto::Example;
use prost::Message;

use crate::support::{bin, path_str, run, stderr, stdout, write_examples};

/// No panic: not the exit status of one, nor its message.
fn no_panic(out: &Output, what: &str) {
    assert_ne!(out.status.code(), Some(101), "{what}: {out:?}");
    assert!(out.status.code().is_some(), "{what}: killed: {out:?}");
    assert!(!stderr(out).contains("panicked"), "{what}: {out:?}");
}

/// Directory and file names with two- and three-byte characters, in
/// places where a byte offset counted from the start (a URL scheme is 3
/// to 8 bytes) falls inside one.
const NAMES: [&str; 4] = [
    "données/x.tfrecord",
    "データ/x.tfrecord",
    "é/donnée.tfrecord",
    "ab/ü€😀.tfrecord",
];

#[test]
fn every_subcommand_reads_a_file_under_a_multibyte_name() {
    let dir = tempfile::tempdir().unwrap();
    for name in NAMES {
        let f = dir.path().join(name);
        fs::create_dir_all(f.parent().unwrap()).unwrap();
        write_examples(&f, 3, Compression::None);
        let f = path_str(&f);
        // Relative names too: the name is then the multibyte part alone.
        for (cwd, path) in [(Path::new("/"), f), (dir.path(), name)] {
            let go = |args: &[&str]| {
                let out = bin().current_dir(cwd).args(args).output().unwrap();
                no_panic(&out, &format!("{args:?}"));
                out
            };
            let out = go(&["count", path]);
            assert_eq!(out.status.code(), Some(0), "{out:?}");
            assert_eq!(stdout(&out), format!("3\t{path}\n3\ttotal\n"));
            let out = go(&["cat", path]);
            assert_eq!(out.status.code(), Some(0), "{out:?}");
            assert_eq!(stdout(&out).lines().count(), 3, "{out:?}");
            for sub in ["verify", "inspect"] {
                let out = go(&[sub, path]);
                assert_eq!(out.status.code(), Some(0), "{sub} {out:?}");
                assert!(stdout(&out).contains(path), "{sub} {out:?}");
            }
            let out = go(&["bench", path]);
            assert_eq!(out.status.code(), Some(0), "{out:?}");
            let out = go(&["index", "--force", path]);
            assert_eq!(out.status.code(), Some(0), "{out:?}");
            assert!(stdout(&out).starts_with(&format!("3\t{path}\t")));
            let out = go(&["index", "--check", path]);
            assert_eq!(out.status.code(), Some(0), "{out:?}");
            let out = go(&["repair", path, "--force", &format!("{path}.r")]);
            assert_eq!(out.status.code(), Some(0), "{out:?}");
            let out = go(&["count", &format!("{path}.r")]);
            assert_eq!(
                stdout(&out).lines().next(),
                Some(&*format!("3\t{path}.r"))
            );
            // A wildcard the shell left alone is expanded by the library,
            // below a multibyte directory.
            let parent = Path::new(path).parent().unwrap();
            let pattern = format!("{}/*.tfrecord", parent.display());
            let out = go(&["count", &pattern]);
            assert_eq!(out.status.code(), Some(0), "{out:?}");
            assert_eq!(stdout(&out), format!("3\t{path}\n3\ttotal\n"));
        }
    }
}

#[test]
fn convert_writes_to_and_reads_from_multibyte_names() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("données");
    fs::create_dir(&sub).unwrap();
    let csv = sub.join("entrée é.csv");
    // Multibyte fields, feature names and a multibyte --na-value.
    fs::write(&csv, "1,été\n2,データ\n3,—\n").unwrap();
    let out = sub.join("donnée.é.tfrecord");
    let run1 = run(&[
        "convert",
        "csv",
        path_str(&csv),
        path_str(&out),
        "--columns",
        "nombre:int64,café:bytes=défaut",
        "--na-value",
        "—",
        "--shards",
        "2",
    ]);
    no_panic(&run1, "convert csv");
    assert_eq!(run1.status.code(), Some(0), "{run1:?}");
    // The shard names split at the first dot, after the multibyte stem.
    let first = sub.join("donnée-00000-of-00002.é.tfrecord");
    let second = sub.join("donnée-00001-of-00002.é.tfrecord");
    let cafe = |path: &Path| -> Vec<String> {
        ReaderBuilder::new()
            .open(path)
            .unwrap()
            .map(|r| {
                let ex = Example::decode(&*r.unwrap().value).unwrap();
                let f = &ex.features.unwrap().feature["café"];
                String::from_utf8(f.as_bytes().unwrap()[0].to_vec()).unwrap()
            })
            .collect()
    };
    assert_eq!(cafe(&first), ["été", "défaut"]);
    assert_eq!(cafe(&second), ["データ"]);
    // A fixed-length file, to a multibyte feature name.
    let bin_in = sub.join("entrée.bin");
    fs::write(&bin_in, [1u8, 2, 3, 4]).unwrap();
    let fixed_out = sub.join("fixé.tfrecord");
    let run2 = run(&[
        "convert",
        "fixed",
        path_str(&bin_in),
        path_str(&fixed_out),
        "--record-bytes",
        "2",
        "--feature",
        "image_é",
    ]);
    no_panic(&run2, "convert fixed");
    assert_eq!(run2.status.code(), Some(0), "{run2:?}");
    assert!(stdout(&run(&["cat", path_str(&fixed_out)])).contains("image_é"));
}

#[test]
fn multibyte_flags_are_usage_errors_not_panics() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("in.csv");
    fs::write(&csv, "1,2\n").unwrap();
    let out = dir.path().join("out.tfrecord");
    for (flag, value) in [
        ("--delim", "é"),
        ("--delim", "€"),
        ("--columns", "é"),
        ("--columns", "a:int64*é"),
        ("--columns", "a:é"),
        ("--columns", "a:int64=é"),
        ("--compression", "gzïp"),
        ("--shards", "１"),
        ("--max-line-bytes", "٣"),
    ] {
        let mut args = vec!["convert", "csv", path_str(&csv), path_str(&out)];
        if flag != "--columns" {
            args.extend(["--columns", "a:int64,b:int64"]);
        }
        args.extend([flag, value]);
        let r = run(&args);
        no_panic(&r, &format!("{flag} {value}"));
        assert_eq!(r.status.code(), Some(2), "{flag} {value}: {r:?}");
    }
    for (flag, value) in [("--format", "csvé"), ("--delim", "ü")] {
        let r =
            run(&["bench", path_str(&csv), "--format", "csv", flag, value]);
        no_panic(&r, &format!("bench {flag} {value}"));
        assert_eq!(r.status.code(), Some(2), "{flag} {value}: {r:?}");
    }
}

#[test]
fn multibyte_urls_are_read_or_refused_never_a_panic() {
    // Nothing listens on port 1: every request fails at once. What is
    // checked is that each URL reaches that failure (or a clean refusal
    // before it) rather than a panic on its characters.
    for url in [
        "http://127.0.0.1:1/données/x.tfrecord",
        "http://127.0.0.1:1/données/*.tfrecord",
        // The path decodes to fewer bytes than it is written with, and
        // the byte count differs inside a character.
        "http://127.0.0.1:1/xé%41/*.tfrecord",
        "http://127.0.0.1:1/ééééé%41%41%41/*.tfrecord",
        "http://127.0.0.1:1/%C3%A9/*.tfrecord",
        "ht€p://x/y.tfrecord",
        "s€://x/y.tfrecord",
        "file:///données/*.tfrecord",
    ] {
        let out = run(&["count", url]);
        no_panic(&out, url);
        assert_eq!(out.status.code().map(|c| c >= 2), Some(true), "{out:?}");
        assert!(stderr(&out).contains(url), "{url}: {out:?}");
    }
}

#[cfg(unix)]
fn not_utf8(dir: &Path) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    dir.join(OsStr::from_bytes(b"donn\xe9es.tfrecord"))
}

/// A file name that is not UTF-8 (Latin-1 `données`) cannot be a
/// library path (paths are `&str`): every subcommand refuses it as a
/// usage error naming it, lossily, and says why; it is never read under
/// another name, written under another name, or a panic.
#[cfg(unix)]
#[test]
fn a_name_that_is_not_utf8_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let bad = not_utf8(dir.path());
    write_examples(&bad, 2, Compression::None);
    let good = dir.path().join("good.tfrecord");
    write_examples(&good, 2, Compression::None);
    let csv = dir.path().join("in.csv");
    fs::write(&csv, "1\n").unwrap();
    let lossy = bad.to_string_lossy().into_owned();
    let b = bad.as_os_str();
    let cases: Vec<Vec<&OsStr>> = vec![
        vec!["count".as_ref(), b],
        vec!["cat".as_ref(), b],
        vec!["verify".as_ref(), b],
        vec!["inspect".as_ref(), b],
        vec!["bench".as_ref(), b],
        vec!["index".as_ref(), b],
        vec!["repair".as_ref(), b, "-".as_ref()],
        vec!["repair".as_ref(), good.as_ref(), b],
        vec![
            "convert".as_ref(),
            "csv".as_ref(),
            csv.as_ref(),
            b,
            "--columns".as_ref(),
            "a:int64".as_ref(),
        ],
        vec![
            "convert".as_ref(),
            "fixed".as_ref(),
            b,
            "-".as_ref(),
            "--record-bytes".as_ref(),
            "1".as_ref(),
        ],
    ];
    for args in cases {
        let out = run(&args);
        no_panic(&out, &format!("{args:?}"));
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        let err = stderr(&out);
        assert!(err.contains(&lossy), "{args:?}: {err}");
        assert!(err.contains("not valid UTF-8"), "{args:?}: {err}");
    }
    // Nothing was written under a lossy name.
    let mut names: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    names.sort();
    assert_eq!(names.len(), 3, "{names:?}");
}
