//! `feedstock convert csv` and `convert fixed`, run as the built binary;
//! the output is read back with the library's TFRecord reader.

use std::path::Path;

use feedstock::io::tfrecord::ReaderBuilder;
use feedstock::proto::Example;
use prost::Message;

use crate::support::{digits, feedstock, path_str, stderr};

fn records(path: &Path) -> Vec<Vec<u8>> {
    ReaderBuilder::new()
        .open(path)
        .unwrap()
        .map(|r| r.unwrap().value.to_vec())
        .collect()
}

fn examples(path: &Path) -> Vec<Example> {
    records(path)
        .iter()
        .map(|r| Example::decode(&r[..]).unwrap())
        .collect()
}

const CSV: &str = "\
id,x0,x1,note,label
7,0.5,1.5,\"a, quoted\",1
8,-2,3e2,plain,0\r
9,4,5,,1
";

#[test]
fn csv_lines_become_examples_as_the_spec_says() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.csv");
    std::fs::write(&input, CSV).unwrap();
    let out = dir.path().join("out.tfrecord");
    let run = feedstock(&[
        "convert",
        "csv",
        path_str(&input),
        path_str(&out),
        "--header",
        "--columns",
        "_,x:float*2,note:bytes,label:int64",
    ]);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    assert_eq!(
        String::from_utf8(run.stdout).unwrap(),
        format!("3\t{}\n3\ttotal\n", path_str(&out))
    );
    let ex = examples(&out);
    assert_eq!(ex.len(), 3);
    let x: Vec<&[f32]> = ex
        .iter()
        .map(|e| e.feature("x").unwrap().as_floats().unwrap())
        .collect();
    assert_eq!(x, [&[0.5, 1.5][..], &[-2.0, 300.0], &[4.0, 5.0]]);
    let notes: Vec<&[u8]> = ex
        .iter()
        .map(|e| &e.feature("note").unwrap().as_bytes().unwrap()[0][..])
        .collect();
    assert_eq!(notes, [&b"a, quoted"[..], b"plain", b""]);
    let labels: Vec<i64> = ex
        .iter()
        .map(|e| e.feature("label").unwrap().as_int64().unwrap()[0])
        .collect();
    assert_eq!(labels, [1, 0, 1]);
    // The skipped column is not a feature.
    assert_eq!(ex[0].features.as_ref().unwrap().feature.len(), 3);
}

#[test]
fn shards_get_records_in_turn_and_keep_the_compression_extension() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.tsv");
    let lines: String = (0..10).map(|i| format!("{i}\tx{i}\n")).collect();
    std::fs::write(&input, lines).unwrap();
    let out = dir.path().join("s.tfrecord.gz");
    let run = feedstock(&[
        "convert",
        "csv",
        path_str(&input),
        path_str(&out),
        "--delim",
        "tab",
        "--shards",
        "3",
        "--columns",
        "i:int64,s:bytes",
    ]);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    let mut seen = Vec::new();
    for (k, n) in [(0, 4), (1, 3), (2, 3)] {
        let shard = dir.path().join(format!("s-0000{k}-of-00003.tfrecord.gz"));
        let ids: Vec<i64> = examples_gz(&shard)
            .iter()
            .map(|e| e.feature("i").unwrap().as_int64().unwrap()[0])
            .collect();
        assert_eq!(ids.len(), n);
        assert!(ids.iter().all(|i| i % 3 == k), "{ids:?}");
        seen.extend(ids);
    }
    seen.sort();
    assert_eq!(seen, (0..10).collect::<Vec<_>>());
}

fn examples_gz(path: &Path) -> Vec<Example> {
    let raw = std::fs::read(path).unwrap();
    assert_eq!(&raw[..2], &[0x1f, 0x8b], "gzip magic");
    ReaderBuilder::new()
        .compression(feedstock::io::Compression::Gzip)
        .open(path)
        .unwrap()
        .map(|r| Example::decode(&r.unwrap().value[..]).unwrap())
        .collect()
}

#[test]
fn the_shipped_digits_convert_to_1797_examples_of_64_pixels() {
    let digits = digits();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("digits.tfrecord");
    let run = feedstock(&[
        "convert",
        "csv",
        path_str(&digits),
        path_str(&out),
        "--columns",
        "image:float*64,label:int64",
    ]);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    let ex = examples(&out);
    assert_eq!(ex.len(), 1797);
    assert!(ex.iter().all(|e| {
        e.feature("image").unwrap().as_floats().unwrap().len() == 64
            && (0..10)
                .contains(&e.feature("label").unwrap().as_int64().unwrap()[0])
    }));
}

#[test]
fn a_bad_column_spec_is_exit_two_naming_the_bad_entry() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.csv");
    std::fs::write(&input, "1,2\n").unwrap();
    let out = dir.path().join("out.tfrecord");
    for (spec, want) in [
        (
            "a:int64,b:flaot",
            "entry 2 \"b:flaot\": unknown type \"flaot\"",
        ),
        ("a:int64*0", "the count \"0\""),
        ("a:int64,,b:int64", "entry 2 \"\": empty entry"),
    ] {
        let run = feedstock(&[
            "convert",
            "csv",
            path_str(&input),
            path_str(&out),
            "--columns",
            spec,
        ]);
        assert_eq!(run.status.code(), Some(2), "{run:?}");
        assert!(stderr(&run).contains(want), "{}", stderr(&run));
        assert!(!out.exists());
    }
}

#[test]
fn a_line_that_does_not_fit_names_file_and_line_and_leaves_no_output() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.csv");
    std::fs::write(&input, "1,2\n3,4\n5,x\n7,8\n").unwrap();
    let out = dir.path().join("out.tfrecord");
    let args = |spec| {
        feedstock(&[
            "convert",
            "csv",
            path_str(&input),
            path_str(&out),
            "--shards",
            "2",
            "--columns",
            spec,
        ])
    };
    let run = args("a:int64,b:int64");
    assert_eq!(run.status.code(), Some(2), "{run:?}");
    let err = stderr(&run);
    assert!(
        err.contains(&format!("key {}:3", path_str(&input))),
        "{err}"
    );
    assert!(err.contains("column 1"), "{err}");
    // Neither shard is left behind.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    // Too few columns for the spec: the first line already fails.
    let run = args("a:int64*3");
    assert_eq!(run.status.code(), Some(2), "{run:?}");
    assert!(stderr(&run).contains(&format!("{}:1", path_str(&input))));
}

#[test]
fn a_missing_input_is_exit_two_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let absent = dir.path().join("absent.csv");
    let out = dir.path().join("out.tfrecord");
    let run = feedstock(&[
        "convert",
        "csv",
        path_str(&absent),
        path_str(&out),
        "--columns",
        "a:int64",
    ]);
    assert_eq!(run.status.code(), Some(2), "{run:?}");
    assert!(stderr(&run).contains(path_str(&absent)));
    assert!(!out.exists());
}

#[test]
fn fixed_records_become_raw_records_or_examples() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.bin");
    let mut bytes = b"HEAD".to_vec();
    for i in 0..5u8 {
        bytes.extend_from_slice(&[i; 3]);
    }
    bytes.extend_from_slice(b"FT");
    std::fs::write(&input, &bytes).unwrap();
    let raw = dir.path().join("raw.tfrecord");
    let common = [
        "--record-bytes",
        "3",
        "--header-bytes",
        "4",
        "--footer-bytes",
        "2",
    ];
    let mut args = vec!["convert", "fixed", path_str(&input), path_str(&raw)];
    args.extend(common);
    let run = feedstock(&args);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    let want: Vec<Vec<u8>> = (0..5u8).map(|i| vec![i; 3]).collect();
    assert_eq!(records(&raw), want);

    let ex = dir.path().join("ex.tfrecord");
    let mut args = vec!["convert", "fixed", path_str(&input), path_str(&ex)];
    args.extend(common);
    args.extend(["--feature", "image_raw"]);
    let run = feedstock(&args);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    let got: Vec<Vec<u8>> = examples(&ex)
        .iter()
        .map(|e| {
            e.feature("image_raw").unwrap().as_bytes().unwrap()[0].to_vec()
        })
        .collect();
    assert_eq!(got, want);
}

#[test]
fn a_fixed_file_with_a_cut_record_is_damaged_data() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.bin");
    std::fs::write(&input, [1u8; 10]).unwrap();
    let out = dir.path().join("out.tfrecord");
    let run = feedstock(&[
        "convert",
        "fixed",
        path_str(&input),
        path_str(&out),
        "--record-bytes",
        "4",
    ]);
    assert_eq!(run.status.code(), Some(1), "{run:?}");
    let err = stderr(&run);
    assert!(err.contains("DataLoss"), "{err}");
    assert!(err.contains("offset 8"), "{err}");
    assert!(!out.exists());
    let run = feedstock(&[
        "convert",
        "fixed",
        path_str(&input),
        path_str(&out),
        "--record-bytes",
        "0",
    ]);
    assert_eq!(run.status.code(), Some(2), "{run:?}");
}
