//! Messages and exit statuses a user meets (issue 10, items 13–17, 19,
//! 20): compressed files read without their compression, compression and
//! delimiters the same in every subcommand, usage errors for what is not
//! a file, a quiet exit on a closed pipe, column defaults, validated
//! numeric flags.

use std::fs;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use feedstock::io::tfrecord::{ReaderBuilder, WriterBuilder};
use feedstock::io::Compression;
use feedstock::proto::{Example, Feature};
use prost::Message;

use crate::support::{
    bin, digits, feedstock, golden, path_str, stderr, write_examples,
};

#[test]
fn a_compressed_file_read_as_plain_says_which_flag_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    for (c, name) in [(Compression::Gzip, "gzip"), (Compression::Zlib, "zlib")]
    {
        // No extension to detect it from.
        let f = dir.path().join(format!("{name}.tfrecord"));
        write_examples(&f, 3, c);
        for sub in ["count", "cat", "inspect", "verify"] {
            let run = feedstock(&[sub, path_str(&f)]);
            assert_eq!(run.status.code(), Some(1), "{sub} {run:?}");
            let err = String::from_utf8_lossy(if sub == "verify" {
                &run.stdout
            } else {
                &run.stderr
            })
            .into_owned();
            let want = format!(
                "this looks like a {name} file: read it with \
                 --compression {name}"
            );
            assert!(err.contains(&want), "{sub}: {err}");
        }
        let run = feedstock(&["count", path_str(&f), "--compression", name]);
        assert_eq!(run.status.code(), Some(0), "{run:?}");
        // repair says its own flag, and writes nothing rather than an
        // empty OUT.
        let out = dir.path().join("repaired.tfrecord");
        let run = feedstock(&["repair", path_str(&f), path_str(&out)]);
        assert_eq!(run.status.code(), Some(2), "{run:?}");
        let want = format!("read it with --input-compression {name}");
        assert!(stderr(&run).contains(&want), "{run:?}");
        assert!(!out.exists());
        let run = feedstock(&[
            "repair",
            path_str(&f),
            path_str(&out),
            "--input-compression",
            name,
        ]);
        assert_eq!(run.status.code(), Some(0), "{run:?}");
        fs::remove_file(&out).unwrap();
    }
    // A gzipped CSV without its extension.
    let csv = dir.path().join("digits.csv");
    fs::copy(digits(), &csv).unwrap();
    let out = dir.path().join("d.tfrecord");
    let run = feedstock(&[
        "convert",
        "csv",
        path_str(&csv),
        path_str(&out),
        "--columns",
        "p:float*64,label:int64",
    ]);
    assert_eq!(run.status.code(), Some(2), "{run:?}");
    assert!(
        stderr(&run).contains("read it with --input-compression gzip"),
        "{run:?}"
    );
    let run = feedstock(&[
        "convert",
        "csv",
        path_str(&csv),
        path_str(&out),
        "--columns",
        "p:float*64,label:int64",
        "--input-compression",
        "gzip",
    ]);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    assert!(String::from_utf8_lossy(&run.stdout).contains("1797\ttotal"));
    // bench with a column spec looks at the bytes too.
    let run = feedstock(&[
        "bench",
        "--format",
        "csv",
        path_str(&csv),
        "--columns",
        "p:float*64,label:int64",
    ]);
    assert_eq!(run.status.code(), Some(2), "{run:?}");
    assert!(stderr(&run).contains("--compression gzip"), "{run:?}");
}

#[test]
fn text_whose_first_two_bytes_make_a_zlib_header_is_still_text() {
    // "80" (0x38 0x30) passes zlib's header check; so do "8O" and "XG".
    let dir = tempfile::tempdir().unwrap();
    for (text, columns) in [
        ("80,5\n1,2\n", "a:int64,b:int64"),
        ("8O,3\n", "a:bytes,b:int64"),
        ("XG,1\n", "a:bytes,b:int64"),
    ] {
        let csv = dir.path().join("t.csv");
        fs::write(&csv, text).unwrap();
        let out = dir.path().join("t.tfrecord");
        let _ = fs::remove_file(&out);
        let run = feedstock(&[
            "convert",
            "csv",
            path_str(&csv),
            path_str(&out),
            "--columns",
            columns,
        ]);
        assert_eq!(run.status.code(), Some(0), "{text:?} {run:?}");
        let run = feedstock(&[
            "bench",
            "--format",
            "csv",
            path_str(&csv),
            "--columns",
            columns,
            "--threads",
            "1",
        ]);
        assert_eq!(run.status.code(), Some(0), "{text:?} {run:?}");
    }
}

/// The records column of bench's `read` row.
fn bench_read_count(run: &Output) -> u64 {
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    let text = String::from_utf8_lossy(&run.stdout).into_owned();
    let row = text.lines().find(|l| l.starts_with("read ")).unwrap();
    row.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn bench_reads_compressed_csv_and_tab_delimiters_like_convert() {
    // The shipped data: detected from its extension.
    let run = feedstock(&["bench", "--format", "csv", path_str(&digits())]);
    assert_eq!(bench_read_count(&run), 1797);
    // Without the extension, --compression says it.
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("digits.csv");
    fs::copy(digits(), &csv).unwrap();
    let run = feedstock(&[
        "bench",
        "--format",
        "csv",
        path_str(&csv),
        "--compression",
        "gzip",
    ]);
    assert_eq!(bench_read_count(&run), 1797);
    let run = feedstock(&["bench", "--format", "csv", path_str(&csv)]);
    assert_eq!(run.status.code(), Some(2), "{run:?}");
    assert!(stderr(&run).contains("--compression gzip"), "{run:?}");
    // `tab` is a delimiter for bench as for convert.
    let tsv = dir.path().join("r.tsv");
    fs::write(&tsv, "a\tb\n1\t2.5\n3\t4\n").unwrap();
    let run = feedstock(&[
        "bench",
        "--format",
        "csv",
        path_str(&tsv),
        "--delim",
        "tab",
        "--header",
    ]);
    let lines = fs::read_to_string(&tsv).unwrap().lines().count() as u64;
    assert_eq!(bench_read_count(&run), lines - 1);
    let run = feedstock(&[
        "bench",
        "--format",
        "csv",
        path_str(&tsv),
        "--delim",
        "ab",
    ]);
    assert_eq!(run.status.code(), Some(2), "{run:?}");
}

#[test]
fn what_is_not_a_file_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("d");
    fs::create_dir(&sub).unwrap();
    let a = dir.path().join("a");
    let b = dir.path().join("b");
    std::os::unix::fs::symlink(&b, &a).unwrap();
    std::os::unix::fs::symlink(&a, &b).unwrap();
    let out = dir.path().join("o.tfrecord");
    for target in [&sub, &a] {
        for args in [
            vec!["verify", path_str(target)],
            vec!["count", path_str(target)],
            vec!["cat", path_str(target)],
            vec!["inspect", path_str(target)],
            vec![
                "convert",
                "csv",
                path_str(target),
                path_str(&out),
                "--columns",
                "a:int64",
            ],
            vec![
                "convert",
                "fixed",
                path_str(target),
                path_str(&out),
                "--record-bytes",
                "1",
            ],
            vec!["repair", path_str(target), path_str(&out)],
            vec!["index", path_str(target)],
            vec!["bench", path_str(target)],
        ] {
            let run = feedstock(&args);
            assert_eq!(run.status.code(), Some(2), "{args:?} {run:?}");
            assert!(!out.exists());
        }
    }
    let run = feedstock(&["count", path_str(&a)]);
    assert!(stderr(&run).contains("symbolic links"), "{run:?}");
    // An index is kept beside a regular file: not for standard input or
    // a pipe, and nothing is created beside them.
    let run = feedstock(&["index", "-"]);
    assert_eq!(run.status.code(), Some(2), "{run:?}");
    assert!(stderr(&run).contains("standard input"), "{run:?}");
    let fifo = dir.path().join("fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let run = feedstock(&["index", path_str(&fifo)]);
    assert_eq!(run.status.code(), Some(2), "{run:?}");
    assert!(stderr(&run).contains("not a regular file"), "{run:?}");
    let mut names: Vec<String> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["a", "b", "d", "fifo"]);
}

#[test]
fn standard_output_that_is_an_input_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("x.tfrecord");
    write_examples(&f, 3, Compression::None);
    let before = fs::read(&f).unwrap();
    let csv = dir.path().join("x.csv");
    fs::write(&csv, "1\n2\n").unwrap();
    let out = dir.path().join("o.tfrecord");
    // `>> input`: each would write into what it reads.
    let cases: Vec<(Vec<&str>, &Path)> = vec![
        (vec!["cat", path_str(&f)], &f),
        (vec!["count", path_str(&f)], &f),
        (vec!["verify", path_str(&f)], &f),
        (vec!["inspect", path_str(&f)], &f),
        (vec!["bench", path_str(&f)], &f),
        (vec!["repair", path_str(&f), path_str(&out)], &f),
        (
            vec![
                "convert",
                "csv",
                path_str(&csv),
                "-",
                "--columns",
                "a:int64",
            ],
            &csv,
        ),
        (vec!["count", "-"], &f),
    ];
    for (args, input) in cases {
        let append = fs::OpenOptions::new().append(true).open(input).unwrap();
        let stdin = fs::File::open(&f).unwrap();
        let run = bin()
            .args(&args)
            .stdin(stdin)
            .stdout(append)
            .output()
            .unwrap();
        assert_eq!(run.status.code(), Some(2), "{args:?} {run:?}");
        assert!(stderr(&run).contains("standard output is this input"));
    }
    assert_eq!(fs::read(&f).unwrap(), before);
    assert_eq!(fs::read(&csv).unwrap(), b"1\n2\n");
    assert!(!out.exists());
    // `- OUT < OUT`: standard input is the output.
    let stdin = fs::File::open(&f).unwrap();
    let run = bin()
        .args(["repair", "-", path_str(&f), "--force"])
        .stdin(stdin)
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(2), "{run:?}");
    assert!(
        stderr(&run).contains("is the input standard input"),
        "{run:?}"
    );
    assert_eq!(fs::read(&f).unwrap(), before);
}

#[test]
fn a_closed_pipe_is_a_quiet_exit_zero_for_every_subcommand() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("x.tfrecord");
    write_examples(&f, 5000, Compression::None);
    let csv = dir.path().join("x.csv");
    fs::write(&csv, "1\n".repeat(5000)).unwrap();
    let cases: Vec<Vec<&str>> = vec![
        vec!["cat", path_str(&f)],
        vec!["count", path_str(&f)],
        vec!["verify", path_str(&f)],
        vec!["inspect", path_str(&f)],
        vec!["inspect", "--json", path_str(&f)],
        vec![
            "convert",
            "csv",
            path_str(&csv),
            "-",
            "--columns",
            "a:int64",
        ],
        vec!["bench", path_str(&f), "--threads", "1"],
    ];
    for args in cases {
        let mut child = bin()
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Close the reading end before the command writes anything.
        drop(child.stdout.take());
        let run = child.wait_with_output().unwrap();
        assert_eq!(run.status.code(), Some(0), "{args:?} {run:?}");
        assert_eq!(stderr(&run), "", "{args:?}");
    }
    // A command that writes files goes on when its report is not read:
    // the files are what matter. repair reports each damaged region as
    // it goes; index reports each file.
    let damaged = dir.path().join("damaged.tfrecord");
    let mut bytes = fs::read(&f).unwrap();
    for at in (0..bytes.len()).step_by(997).skip(1) {
        bytes[at] ^= 0xff;
    }
    fs::write(&damaged, &bytes).unwrap();
    let out = dir.path().join("repaired.tfrecord");
    let g = dir.path().join("y.tfrecord");
    fs::copy(&f, &g).unwrap();
    let cases: Vec<(Vec<&str>, Option<i32>)> = vec![
        (vec!["repair", path_str(&damaged), path_str(&out)], Some(1)),
        (vec!["index", path_str(&f), path_str(&g)], Some(0)),
    ];
    for (args, code) in cases {
        let mut child = bin()
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let run = child.wait_with_output().unwrap();
        assert_eq!(run.status.code(), code, "{args:?} {run:?}");
    }
    let kept = ReaderBuilder::new().open(&out).unwrap().count();
    assert!(kept > 0 && kept < 5000, "{kept}");
    for file in [&f, &g] {
        let side = feedstock::io::index::sidecar_path(path_str(file));
        assert!(Path::new(&side).exists(), "{side}");
    }
    // An error message to a closed stderr: the status still says it, and
    // nothing panics.
    let mut child = bin()
        .args(["count", "no-such-file"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stderr.take());
    let run = child.wait_with_output().unwrap();
    assert_eq!(run.status.code(), Some(2), "{run:?}");
}

#[test]
fn column_defaults_convert_the_stations_golden_file() {
    let dir = tempfile::tempdir().unwrap();
    let csv = golden("stations.csv");
    let out = dir.path().join("st.tfrecord");
    // Without defaults, an empty number is an error naming its line.
    let run = feedstock(&[
        "convert",
        "csv",
        path_str(&csv),
        path_str(&out),
        "--header",
        "--columns",
        "id:int64,name:bytes,elev:float,active:int64,reading:float",
    ]);
    assert_eq!(run.status.code(), Some(2), "{run:?}");
    assert!(stderr(&run).contains("stations.csv:4"), "{run:?}");
    let run = feedstock(&[
        "convert",
        "csv",
        path_str(&csv),
        path_str(&out),
        "--header",
        "--na-value",
        "NA",
        "--columns",
        "id:int64,name:bytes=?,elev:float=0,active:int64=-1,reading:float=-99",
    ]);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    let rows: Vec<Example> = ReaderBuilder::new()
        .open(&out)
        .unwrap()
        .map(|r| Example::decode(&r.unwrap().value[..]).unwrap())
        .collect();
    assert_eq!(rows.len(), 5);
    let f = |row: usize, name: &str| {
        rows[row].features.as_ref().unwrap().feature[name].clone()
    };
    // 1003: empty elevation, NA reading.
    assert_eq!(f(2, "elev"), Feature::float_list([0.0]));
    assert_eq!(f(2, "reading"), Feature::float_list([-99.0]));
    assert_eq!(
        f(2, "name"),
        Feature::bytes_list([&b"The \"Old\" Mill"[..]])
    );
    // 1004: empty name and active.
    assert_eq!(f(3, "name"), Feature::bytes_list([&b"?"[..]]));
    assert_eq!(f(3, "active"), Feature::int64_list([-1]));
    assert_eq!(f(3, "elev"), Feature::float_list([220.75]));
    // 1005: a quoted number, an empty last field.
    assert_eq!(f(4, "elev"), Feature::float_list([958.0]));
    assert_eq!(f(4, "reading"), Feature::float_list([-99.0]));
    assert_eq!(f(0, "reading"), Feature::float_list([-3.25]));
}

#[test]
fn every_numeric_flag_of_demo_is_validated() {
    for (flag, value) in [
        ("--learning-rate", "NaN"),
        ("--learning-rate", "inf"),
        ("--learning-rate", "-0.5"),
        ("--learning-rate", "0"),
        ("--batch-size", "0"),
        ("--batch-size", "-1"),
        ("--epochs", "0"),
        ("--epochs", "99999999999"),
        ("--threads", "1000"),
    ] {
        let mut child = bin()
            .args(["demo", &format!("{flag}={value}")])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let _ = child.stdin.take().map(|mut i| i.flush());
        let run = child.wait_with_output().unwrap();
        assert_eq!(run.status.code(), Some(2), "{flag} {value} {run:?}");
        assert!(stderr(&run).contains(flag), "{run:?}");
    }
}

#[test]
fn every_numeric_flag_of_every_subcommand_is_validated() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("x.csv");
    fs::write(&csv, "1\n").unwrap();
    let f = dir.path().join("x.tfrecord");
    write_examples(&f, 2, Compression::None);
    let out = dir.path().join("o.tfrecord");
    let (csv, f, out) = (path_str(&csv), path_str(&f), path_str(&out));
    let csv_args = ["convert", "csv", csv, out, "--columns", "a:int64"];
    let fixed_args = ["convert", "fixed", csv, out, "--record-bytes", "1"];
    let mut cases: Vec<(Vec<&str>, &str, &str)> = Vec::new();
    for v in ["0", "-1", "NaN", "1e3", "4294967296", "100001"] {
        cases.push((csv_args.to_vec(), "--shards", v));
        cases.push((fixed_args.to_vec(), "--shards", v));
    }
    for v in ["0", "-1", "NaN", "1073741825"] {
        cases.push((csv_args.to_vec(), "--max-line-bytes", v));
        cases.push((
            vec!["bench", csv, "--format", "csv"],
            "--max-line-bytes",
            v,
        ));
        cases.push((vec!["convert", "fixed", csv, out], "--record-bytes", v));
        cases.push((
            vec!["bench", csv, "--format", "fixed"],
            "--record-bytes",
            v,
        ));
    }
    for v in ["-1", "NaN", "18446744073709551616"] {
        cases.push((fixed_args.to_vec(), "--header-bytes", v));
        cases.push((fixed_args.to_vec(), "--footer-bytes", v));
    }
    for v in ["0", "-1", "NaN", "4611686018427387905"] {
        cases.push((vec!["verify", f], "--max-record-len", v));
        cases.push((vec!["repair", f, out], "--max-record-len", v));
    }
    for (flag, bad) in [
        ("--threads", &["0", "257", "NaN"][..]),
        ("--epochs", &["0", "1000001", "-1"]),
        ("--batch-size", &["0", "1000001", "inf"]),
        ("--capacity", &["0", "10000001"]),
    ] {
        for v in bad {
            cases.push((vec!["bench", f], flag, v));
        }
    }
    for v in ["-1", "10000001"] {
        cases.push((vec!["bench", f, "--shuffle"], "--min-after-dequeue", v));
    }
    for v in ["0", "10000001"] {
        cases.push((vec!["bench", f, "--stream"], "--stream-buffer", v));
    }
    for v in ["-1", "NaN", "18446744073709551616"] {
        cases.push((vec!["demo"], "--seed", v));
    }
    for (args, flag, value) in cases {
        let mut args = args.clone();
        let arg = format!("{flag}={value}");
        args.push(&arg);
        let run = bin().args(&args).stdin(Stdio::null()).output().unwrap();
        assert_eq!(run.status.code(), Some(2), "{args:?} {run:?}");
        assert!(stderr(&run).contains(flag), "{args:?} {run:?}");
        assert!(!Path::new(out).exists(), "{args:?}");
    }
    // Values in range but that cannot fit together are refused by name.
    let run = feedstock(&[
        "convert",
        "fixed",
        csv,
        out,
        "--record-bytes",
        "4",
        "--footer-bytes",
        "18446744073709551615",
    ]);
    assert_eq!(run.status.code(), Some(2), "{run:?}");
    assert!(stderr(&run).contains("footer_bytes"), "{run:?}");
}

/// A record: an Example with features `a\nb` (int64) and `ok` (float),
/// then the same with the first name made `a\xffb`, not UTF-8.
fn odd_names(path: &Path) {
    let ex = Example::builder()
        .feature("a\nb", Feature::int64_list([1]))
        .feature("ok", Feature::float_list([0.5]))
        .build();
    let good = ex.encode_to_vec();
    let mut bad = good.clone();
    let at = bad.windows(3).position(|w| w == b"a\nb").unwrap();
    bad[at + 1] = 0xff;
    let mut w = WriterBuilder::new().from_writer(Vec::new());
    w.write_record(&good).unwrap();
    w.write_record(&bad).unwrap();
    fs::write(path, w.finish().unwrap()).unwrap();
}

#[test]
fn odd_feature_names_are_escaped_and_never_hide_a_record() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("odd.tfrecord");
    odd_names(&f);
    let run = feedstock(&["inspect", path_str(&f)]);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    let text = String::from_utf8(run.stdout).unwrap();
    // One row per name, each escaped, none split over two lines.
    let rows: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("Example features"))
        .skip(2)
        .collect();
    let mut names: Vec<&str> = rows
        .iter()
        .map(|r| r.split_whitespace().next().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, [r#""a\nb""#, r#""a\xffb""#, "ok"], "{text}");
    assert!(text.contains("2 records: 2 Example, 0 SequenceExample, 0 other"));
    // cat shows the second record as an Example too, the odd name apart.
    let run = feedstock(&["cat", path_str(&f)]);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    let text = String::from_utf8(run.stdout).unwrap();
    let second: serde_json::Value =
        serde_json::from_str(text.lines().nth(1).unwrap()).unwrap();
    assert_eq!(
        second["example"]["features"]["feature"]["ok"]["floatList"]["value"]
            [0],
        0.5
    );
    let apart = &second["binary_names"]["features"][0];
    assert_eq!(apart["nameBase64"], "Yf9i");
    assert_eq!(apart["value"]["int64List"]["value"][0], "1");
    assert!(second.get("bytes_base64").is_none());
}
