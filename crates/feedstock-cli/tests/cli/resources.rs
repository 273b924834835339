//! Open files, memory and temporary files bounded by the command, not by
//! its arguments (issue 33, item 8): `convert --shards` keeps a bounded
//! number of outputs open, and a signal during `index` leaves no
//! temporary file behind.

use std::fs;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use feedstock::io::tfrecord::{ReaderBuilder, WriterBuilder};
use feedstock::proto::Example;
use prost::Message;

use crate::support::{
    bin, feedstock_sh, gzip_repeat, names, path_str, stderr,
};

/// Runs the binary under `ulimit -n files` and `ulimit -v kib` (through
/// `sh`). The open-file limit applies to root too.
fn feedstock_limited(files: u32, kib: u64, args: &[&str]) -> Output {
    feedstock_sh(&format!("ulimit -n {files} && ulimit -v {kib}"), "", args)
}

/// The int64 feature `a` of each record of `path`.
fn values_of(path: &Path) -> Vec<i64> {
    ReaderBuilder::new()
        .open(path_str(path))
        .unwrap()
        .map(|r| {
            let ex = Example::decode(&*r.unwrap().value).unwrap();
            let f = &ex.features.unwrap().feature["a"];
            f.as_int64().unwrap()[0]
        })
        .collect()
}

#[test]
fn ten_thousand_shards_of_three_lines_under_a_low_file_limit() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("in.csv");
    fs::write(&csv, "0\n1\n2\n").unwrap();
    let out_dir = dir.path().join("out");
    fs::create_dir(&out_dir).unwrap();
    let out = out_dir.join("d.tfrecord");
    // 160 open files, 1 GiB of address space: holding every shard open
    // (with its 256 KiB buffer) needs 10 000 and about 2.6 GB.
    let run = feedstock_limited(
        160,
        1 << 20,
        &[
            "convert",
            "csv",
            path_str(&csv),
            path_str(&out),
            "--columns",
            "a:int64",
        ]
        .into_iter()
        .chain(["--shards", "10000"])
        .collect::<Vec<_>>(),
    );
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    let names = names(&out_dir);
    assert_eq!(names.len(), 10_000, "{:?}", &names[..5.min(names.len())]);
    for (i, want) in [(0, vec![0]), (1, vec![1]), (2, vec![2]), (3, vec![])]
        .into_iter()
        .chain([(9999, vec![])])
    {
        let shard = out_dir.join(format!("d-{i:05}-of-10000.tfrecord"));
        assert_eq!(values_of(&shard), want, "shard {i}");
    }
    // The report names every shard, then the total.
    let stdout = String::from_utf8(run.stdout).unwrap();
    assert_eq!(stdout.lines().count(), 10_001);
    assert!(stdout.ends_with("3\ttotal\n"), "{stdout:?}");
}

#[test]
fn records_are_dealt_in_turn_whatever_the_number_of_shards() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("in.csv");
    let lines = 5000;
    let text: String = (0..lines).map(|i| format!("{i}\n")).collect();
    fs::write(&csv, text).unwrap();
    for shards in [3usize, 64, 65, 777] {
        let out_dir = dir.path().join(format!("out{shards}"));
        fs::create_dir(&out_dir).unwrap();
        // Compressed outputs: each shard is one gzip stream.
        let out = out_dir.join("d.tfrecord.gz");
        let run = feedstock_limited(
            100,
            1 << 20,
            &[
                "convert",
                "csv",
                path_str(&csv),
                path_str(&out),
                "--columns",
                "a:int64",
            ]
            .into_iter()
            .chain(["--shards", &shards.to_string()])
            .collect::<Vec<_>>(),
        );
        assert_eq!(run.status.code(), Some(0), "{shards}: {run:?}");
        assert_eq!(names(&out_dir).len(), shards);
        for k in [0, 1, shards / 2, shards - 1] {
            let shard =
                out_dir.join(format!("d-{k:05}-of-{shards:05}.tfrecord.gz"));
            let want: Vec<i64> = (k as i64..lines).step_by(shards).collect();
            let got: Vec<i64> = ReaderBuilder::new()
                .compression(feedstock::io::Compression::Gzip)
                .open(path_str(&shard))
                .unwrap()
                .map(|r| {
                    let ex = Example::decode(&*r.unwrap().value).unwrap();
                    ex.features.unwrap().feature["a"].as_int64().unwrap()[0]
                })
                .collect();
            assert_eq!(got, want, "{shards} shards, shard {k}");
        }
    }
}

#[test]
fn a_failed_many_shard_conversion_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("in.csv");
    // The bad line comes after every shard has records.
    let mut text: String = (0..300).map(|i| format!("{i}\n")).collect();
    text.push_str("x\n");
    fs::write(&csv, text).unwrap();
    let out_dir = dir.path().join("out");
    fs::create_dir(&out_dir).unwrap();
    let out = out_dir.join("d.tfrecord");
    let run = feedstock_limited(
        100,
        1 << 20,
        &[
            "convert",
            "csv",
            path_str(&csv),
            path_str(&out),
            "--columns",
            "a:int64",
        ]
        .into_iter()
        .chain(["--shards", "200"])
        .collect::<Vec<_>>(),
    );
    assert_eq!(run.status.code(), Some(2), "{run:?}");
    assert!(stderr(&run).contains(":301"), "{run:?}");
    assert_eq!(names(&out_dir), Vec::<String>::new());
}

#[test]
fn a_signal_during_index_removes_its_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("big.tfrecord.gz");
    // 8 GiB of 1 MiB records once inflated: many seconds of scanning,
    // from an 8 MB file.
    let mut w = WriterBuilder::new().from_writer(Vec::new());
    w.write_record(&vec![0u8; 1 << 20]).unwrap();
    gzip_repeat(&w.finish().unwrap(), 8192, &input);
    for signal in ["-INT", "-TERM"] {
        let child = bin()
            .args(["index", path_str(&input)])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The index's temporary file is created before the scan starts.
        while !names(dir.path())
            .iter()
            .any(|n| n.ends_with(".feedstock-partial"))
        {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let kill = Command::new("kill")
            .args([signal, &child.id().to_string()])
            .status()
            .unwrap();
        assert!(kill.success());
        let run = child.wait_with_output().unwrap();
        let want = if signal == "-INT" { 130 } else { 143 };
        assert_eq!(run.status.code(), Some(want), "{run:?}");
        assert!(stderr(&run).contains("interrupted by signal"), "{run:?}");
        assert_eq!(names(dir.path()), ["big.tfrecord.gz"]);
    }
}
