//! Exit statuses and messages at the edges of the command line (issue 33,
//! item 9): a closed standard output, files of different compressions in
//! one bench, a delimiter that is the quote character.

use std::fs;

use feedstock::io::Compression;

use crate::support::{
    feedstock, feedstock_sh, path_str, stderr, write_examples,
};

/// GNU `cat f >&-` says "write error: Bad file descriptor" and exits 1;
/// writing nothing and exiting 0 would pass a broken script.
#[test]
fn a_closed_standard_output_is_an_error_not_silence() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("x.tfrecord");
    write_examples(&f, 3, Compression::None);
    let csv = dir.path().join("in.csv");
    fs::write(&csv, "1\n").unwrap();
    let out = dir.path().join("out.tfrecord");
    for args in [
        vec!["cat", path_str(&f)],
        vec!["count", path_str(&f)],
        vec!["inspect", path_str(&f)],
        vec!["verify", path_str(&f)],
        vec![
            "convert",
            "csv",
            path_str(&csv),
            "-",
            "--columns",
            "a:int64",
        ],
        vec![
            "convert",
            "csv",
            path_str(&csv),
            path_str(&out),
            "--columns",
            "a:int64",
        ],
    ] {
        let run = feedstock_sh("", ">&-", &args);
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
        let run = feedstock_sh("", redirect, &["cat", path_str(&f)]);
        assert_eq!(run.status.code(), Some(0), "{redirect}: {run:?}");
    }
    // A closed standard input or error does not lend its number to a
    // file the command opens: the records still reach standard output.
    for redirect in ["<&-", "2>&-"] {
        let run = feedstock_sh("", redirect, &["count", path_str(&f)]);
        assert_eq!(run.status.code(), Some(0), "{redirect}: {run:?}");
        assert_eq!(
            String::from_utf8_lossy(&run.stdout),
            format!("3\t{}\n3\ttotal\n", path_str(&f))
        );
    }
}

#[test]
fn bench_refuses_files_of_different_compressions() {
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("a.tfrecord");
    let gz = dir.path().join("b.tfrecord.gz");
    write_examples(&plain, 3, Compression::None);
    write_examples(&gz, 3, Compression::Gzip);
    for files in [[&plain, &gz], [&gz, &plain]] {
        let run =
            feedstock(&["bench", path_str(files[0]), path_str(files[1])]);
        assert_eq!(run.status.code(), Some(2), "{run:?}");
        let err = stderr(&run);
        assert!(
            err.contains(path_str(&plain)) && err.contains(path_str(&gz)),
            "{err}"
        );
        assert!(err.contains("--compression"), "{err}");
    }
    // Files that agree are benched; --compression decides for all.
    let gz2 = dir.path().join("c.tfrecord.gz");
    write_examples(&gz2, 3, Compression::Gzip);
    let run = feedstock(&["bench", path_str(&gz), path_str(&gz2)]);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    let run = feedstock(&[
        "bench",
        "--compression",
        "gzip",
        path_str(&gz),
        path_str(&gz2),
    ]);
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
            path_str(&csv),
            path_str(&out),
            "--columns",
            "a:int64,b:int64",
        ],
        vec!["bench", path_str(&csv), "--format", "csv"],
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
