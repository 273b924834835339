//! Exit statuses and messages at the edges of the command line (issue 33,
//! item 9): a closed standard output, files of different compressions in
//! one bench, a delimiter that is the quote character.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use feedstock::io::tfrecord::WriterBuilder;
use feedstock::io::Compression;
use feedstock::proto::{Example, Feature};
use prost::Message;

fn feedstock(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_feedstock"))
        .args(args)
        .output()
        .expect("run feedstock")
}

/// Runs the binary through `sh` with `redirect` applied (`>&-` closes
/// standard output).
fn feedstock_redirected(redirect: &str, args: &[&str]) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg(format!("exec \"$0\" \"$@\" {redirect}"))
        .arg(env!("CARGO_BIN_EXE_feedstock"))
        .args(args)
        .output()
        .expect("run feedstock under sh")
}

fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn examples(path: &Path, n: i64, c: Compression) {
    let mut w = WriterBuilder::new().compression(c).from_writer(Vec::new());
    for i in 0..n {
        let ex = Example::builder()
            .feature("n", Feature::int64_list([i]))
            .build();
        w.write_record(&ex.encode_to_vec()).unwrap();
    }
    fs::write(path, w.finish().unwrap()).unwrap();
}

/// GNU `cat f >&-` says "write error: Bad file descriptor" and exits 1;
/// writing nothing and exiting 0 would pass a broken script.
#[test]
fn a_closed_standard_output_is_an_error_not_silence() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("x.tfrecord");
    examples(&f, 3, Compression::None);
    let csv = dir.path().join("in.csv");
    fs::write(&csv, "1\n").unwrap();
    let out = dir.path().join("out.tfrecord");
    for args in [
        vec!["cat", s(&f)],
        vec!["count", s(&f)],
        vec!["inspect", s(&f)],
        vec!["verify", s(&f)],
        vec!["convert", "csv", s(&csv), "-", "--columns", "a:int64"],
        vec!["convert", "csv", s(&csv), s(&out), "--columns", "a:int64"],
    ] {
        let run = feedstock_redirected(">&-", &args);
        assert_eq!(run.status.code(), Some(3), "{args:?}: {run:?}");
        assert!(
            stderr(&run).contains("standard output is closed"),
            "{args:?}: {run:?}"
        );
    }
    // Nothing was written when the report could not be.
    assert!(!out.exists());
    // Standard output open on the null device, for writing or for both
    // (as Python's subprocess.DEVNULL opens it), is not closed.
    for redirect in [">/dev/null", "1<>/dev/null"] {
        let run = feedstock_redirected(redirect, &["cat", s(&f)]);
        assert_eq!(run.status.code(), Some(0), "{redirect}: {run:?}");
    }
    // A closed standard input or error does not lend its number to a
    // file the command opens: the records still reach standard output.
    for redirect in ["<&-", "2>&-"] {
        let run = feedstock_redirected(redirect, &["count", s(&f)]);
        assert_eq!(run.status.code(), Some(0), "{redirect}: {run:?}");
        assert_eq!(
            String::from_utf8_lossy(&run.stdout),
            format!("3\t{}\n3\ttotal\n", s(&f))
        );
    }
}

#[test]
fn bench_refuses_files_of_different_compressions() {
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("a.tfrecord");
    let gz = dir.path().join("b.tfrecord.gz");
    examples(&plain, 3, Compression::None);
    examples(&gz, 3, Compression::Gzip);
    for files in [[&plain, &gz], [&gz, &plain]] {
        let run = feedstock(&["bench", s(files[0]), s(files[1])]);
        assert_eq!(run.status.code(), Some(2), "{run:?}");
        let err = stderr(&run);
        assert!(err.contains(s(&plain)) && err.contains(s(&gz)), "{err}");
        assert!(err.contains("--compression"), "{err}");
    }
    // Files that agree are benched; --compression decides for all.
    let gz2 = dir.path().join("c.tfrecord.gz");
    examples(&gz2, 3, Compression::Gzip);
    let run = feedstock(&["bench", s(&gz), s(&gz2)]);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    let run = feedstock(&["bench", "--compression", "gzip", s(&gz), s(&gz2)]);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
}

#[test]
fn a_quote_delimiter_is_refused_in_the_flags_words() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("in.csv");
    fs::write(&csv, "1\"2\n").unwrap();
    let out = dir.path().join("out.tfrecord");
    for args in [
        vec![
            "convert",
            "csv",
            s(&csv),
            s(&out),
            "--columns",
            "a:int64,b:int64",
        ],
        vec!["bench", s(&csv), "--format", "csv"],
    ] {
        let mut args = args;
        args.extend(["--delim", "\""]);
        let run = feedstock(&args);
        assert_eq!(run.status.code(), Some(2), "{run:?}");
        let err = stderr(&run);
        assert!(err.contains("--delim"), "{err}");
        for library in ["field_delim", "use_quote_delim"] {
            assert!(!err.contains(library), "{err}");
        }
    }
}
