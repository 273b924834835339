//! `feedstock bench`, run as the built binary. Rates are not asserted (no
//! test asserts on timing); the record counts of every stage are, and
//! the batching stage's batch count and queue settings.

use std::process::{Command, Output};

use crate::support::{bin, feedstock, golden, path_str, stderr, stdout};

/// The standard output of a run that must have succeeded.
fn ok_stdout(out: &Output) -> String {
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    stdout(out)
}

/// The records column of each stage's row, by stage name. Checks that
/// the rates are numbers, and that only the batching stage reports a
/// queue fullness, a percentage.
fn stage_counts(out: &Output) -> Vec<(String, u64)> {
    ok_stdout(out)
        .lines()
        .filter(|l| l.starts_with("read") || l.starts_with("stream"))
        .map(|l| {
            let cols: Vec<&str> = l.split_whitespace().collect();
            assert_eq!(cols.len(), 6, "{l}");
            for c in &cols[2..5] {
                assert!(c.parse::<f64>().unwrap() >= 0.0, "{l}");
            }
            if cols[0].ends_with("batch") || cols[0].ends_with("shuffle") {
                let pct = cols[5].strip_suffix('%').expect(l);
                let pct: f64 = pct.parse().unwrap();
                assert!((0.0..=100.0).contains(&pct), "{l}");
            } else {
                assert_eq!(cols[5], "-", "{l}");
            }
            (cols[0].to_owned(), cols[1].parse().unwrap())
        })
        .collect()
}

/// The line after the table: `N batches of up to B examples; queue
/// capacity C[, min_after_dequeue M]`.
fn batch_line(out: &Output) -> String {
    let text = ok_stdout(out);
    let line = text.lines().last().unwrap();
    assert!(line.contains(" batches of up to "), "{text}");
    line.to_owned()
}

#[test]
fn every_stage_sees_every_record_of_every_epoch() {
    let plain = golden("examples.tfrecord");
    let seq = golden("sequence_examples.tfrecord");
    let out = feedstock(&[
        "bench",
        path_str(&plain),
        path_str(&plain),
        "--epochs",
        "3",
        "--threads",
        "2",
    ]);
    assert_eq!(
        stage_counts(&out),
        [
            ("read".into(), 48),
            ("read+parse".into(), 48),
            ("read+parse+batch".into(), 48),
        ]
    );
    // 48 examples: one full batch of 32 and a smaller last one.
    assert_eq!(
        batch_line(&out),
        "2 batches of up to 32 examples; queue capacity 96"
    );
    // Gzip, one thread.
    let gz = golden("examples.gzip.tfrecord");
    let out = feedstock(&[
        "bench",
        "--compression",
        "gzip",
        "--threads",
        "1",
        path_str(&gz),
    ]);
    assert_eq!(stage_counts(&out)[1], ("read+parse".into(), 8));
    // SequenceExamples hold no Example features to parse.
    let out = feedstock(&["bench", path_str(&seq)]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(stderr(&out).contains("hold no Example features"));
}

#[test]
fn csv_and_fixed_files_are_read_and_decoded() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("a.csv");
    let lines: String = (0..50).map(|i| format!("{i},{i}.5,w{i}\n")).collect();
    std::fs::write(&csv, format!("n,x,s\n{lines}")).unwrap();
    let out =
        feedstock(&["bench", "--format", "csv", "--header", path_str(&csv)]);
    assert_eq!(
        stage_counts(&out),
        [
            ("read".into(), 50),
            ("read+parse".into(), 50),
            ("read+parse+batch".into(), 50),
        ]
    );
    let out = feedstock(&[
        "bench",
        "--format",
        "csv",
        "--header",
        "--columns",
        "n:int64,_,s:bytes",
        path_str(&csv),
    ]);
    assert_eq!(stage_counts(&out)[1].1, 50);
    assert_eq!(stage_counts(&out)[2].1, 50);

    let cifar = golden("cifar_like.bin");
    let out = feedstock(&[
        "bench",
        "--format",
        "fixed",
        "--record-bytes",
        "3073",
        "--epochs",
        "2",
        path_str(&cifar),
    ]);
    assert_eq!(stage_counts(&out)[1], ("read+parse".into(), 8));
    assert_eq!(stage_counts(&out)[2], ("read+parse+batch".into(), 8));
}

#[test]
fn the_batching_stage_delivers_every_example_of_every_epoch() {
    let plain = golden("examples.tfrecord");
    // 8 records × 2 files × 5 epochs = 80 examples in batches of 7,
    // through a shuffling queue holding back 20: 11 full batches and one
    // of 3, whatever the interleaving of the 3 reader threads.
    let out = feedstock(&[
        "bench",
        "--shuffle",
        "--batch-size",
        "7",
        "--min-after-dequeue",
        "20",
        "--epochs",
        "5",
        "--threads",
        "3",
        path_str(&plain),
        path_str(&plain),
    ]);
    assert_eq!(
        stage_counts(&out),
        [
            ("read".into(), 80),
            ("read+parse".into(), 80),
            ("read+parse+shuffle".into(), 80),
        ]
    );
    // The default capacity is the seed's min_after_dequeue + 3 × batch.
    assert_eq!(
        batch_line(&out),
        "12 batches of up to 7 examples; queue capacity 41, \
         min_after_dequeue 20"
    );

    // A queue smaller than one read (256 records) still takes them all,
    // FIFO and shuffling: enqueue_many waits for room.
    let cifar = golden("cifar_like.bin");
    for order in [
        &["--capacity", "3"][..],
        &["--shuffle", "--capacity", "3", "--min-after-dequeue", "1"],
    ] {
        let mut args = vec![
            "bench",
            "--format",
            "fixed",
            "--record-bytes",
            "3073",
            "--epochs",
            "3",
            "--batch-size",
            "2",
        ];
        args.extend_from_slice(order);
        args.push(path_str(&cifar));
        let out = feedstock(&args);
        assert_eq!(stage_counts(&out)[2].1, 12, "{order:?}");
        assert!(
            batch_line(&out).starts_with(
                "6 batches of up to 2 examples; queue capacity 3"
            ),
            "{order:?}"
        );
    }
}

#[test]
fn bad_batching_settings_are_refused_before_any_stage_runs() {
    let plain = golden("examples.tfrecord");
    let out = feedstock(&[
        "bench",
        "--shuffle",
        "--capacity",
        "10",
        "--min-after-dequeue",
        "10",
        path_str(&plain),
    ]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(out.stdout.is_empty(), "{out:?}");
    let err = stderr(&out);
    assert!(err.contains("--min-after-dequeue (10)"), "{err}");
    // The default min_after_dequeue (1000) does not fit a small queue.
    let out = feedstock(&[
        "bench",
        "--shuffle",
        "--capacity",
        "64",
        path_str(&plain),
    ]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    // min_after_dequeue means nothing without --shuffle.
    let out =
        feedstock(&["bench", "--min-after-dequeue", "5", path_str(&plain)]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(stderr(&out).contains("--shuffle"));
    for zero in ["--batch-size", "--capacity"] {
        let out = feedstock(&["bench", zero, "0", path_str(&plain)]);
        assert_eq!(out.status.code(), Some(2), "{zero}: {out:?}");
    }
}

#[test]
fn a_csv_line_that_does_not_parse_names_its_key() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("a.csv");
    std::fs::write(&csv, "1,2\n3,4\n5,oops\n").unwrap();
    let out = feedstock(&["bench", "--format", "csv", path_str(&csv)]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = stderr(&out);
    assert!(err.contains(&format!("{}:3", path_str(&csv))), "{err}");
    let out = feedstock(&[
        "bench",
        "--format",
        "csv",
        "--columns",
        "a:int64,b:nope",
        path_str(&csv),
    ]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(stderr(&out).contains("unknown type \"nope\""));
}

#[test]
fn bad_input_gives_the_documented_exit_status() {
    let dir = tempfile::tempdir().unwrap();
    let absent = dir.path().join("absent.tfrecord");
    let out = feedstock(&["bench", path_str(&absent)]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(stderr(&out).contains(path_str(&absent)));

    // A damaged record (here met while inferring the spec from the first
    // records) is exit 1, naming the file.
    let mut bytes = std::fs::read(golden("examples.tfrecord")).unwrap();
    let n = bytes.len();
    bytes[n - 3] ^= 1;
    let bad = dir.path().join("bad.tfrecord");
    std::fs::write(&bad, bytes).unwrap();
    let out = feedstock(&["bench", path_str(&bad)]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = stderr(&out);
    assert!(err.contains("DataLoss"), "{err}");
    assert!(err.contains(path_str(&bad)), "{err}");

    let cifar = golden("cifar_like.bin");
    let out = feedstock(&["bench", "--format", "fixed", path_str(&cifar)]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(stderr(&out).contains("--record-bytes"));
    let out = feedstock(&["bench", "--format", "parquet", path_str(&cifar)]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}

#[test]
fn the_stream_stages_see_every_record_of_every_epoch() {
    let plain = golden("examples.tfrecord");
    let out = feedstock(&[
        "bench",
        path_str(&plain),
        path_str(&plain),
        "--epochs",
        "3",
        "--stream",
        "--stream-buffer",
        "5",
    ]);
    let counts = stage_counts(&out);
    let stream: Vec<_> = counts
        .iter()
        .filter(|c| c.0.starts_with("stream"))
        .collect();
    let names: Vec<&str> = stream.iter().map(|c| c.0.as_str()).collect();
    assert_eq!(
        names,
        [
            "stream-seq",
            "stream-buffer",
            "stream-buffer-nd",
            "stream-global",
            "stream-global-nd"
        ]
    );
    assert!(stream.iter().all(|c| c.1 == 48), "{stream:?}");
    let csv = golden("stations.csv");
    let out =
        feedstock(&["bench", "--format", "csv", "--stream", path_str(&csv)]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(stderr(&out).contains("TFRecord files only"));
}

/// Runs `feedstock ARGS`, failing the test (after killing it) if it has
/// not exited within 30 seconds: a hang fails, it does not hang CI.
fn feedstock_within(args: &[&str]) -> Output {
    use std::io::Read;
    let mut child = bin()
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run feedstock");
    let deadline =
        std::time::Instant::now() + std::time::Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("feedstock {args:?} did not exit within 30 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    child
        .stdout
        .take()
        .unwrap()
        .read_to_end(&mut stdout)
        .unwrap();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_end(&mut stderr)
        .unwrap();
    Output {
        status,
        stdout,
        stderr,
    }
}

fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The sidecar `feedstock index` writes for `path`, rewritten by hand to
/// list only the records `keep` keeps, its CRC made to check again.
fn sidecar_listing_fewer(path: &str, keep: usize) -> Vec<u8> {
    use feedstock::io::fs::LocalFs;
    use feedstock::io::index::RecordIndex;
    let index = RecordIndex::build(&LocalFs, path, None).unwrap();
    let fp = index.fingerprint();
    let mut out = b"fsindex\0".to_vec();
    out.extend_from_slice(&1u32.to_le_bytes());
    out.push(0x10);
    varint(fp.size, &mut out);
    for (tag, crc) in [
        (0x1d, fp.head_crc),
        (0x25, fp.tail_crc),
        (0x2d, fp.file_crc),
    ] {
        out.push(tag);
        out.extend_from_slice(&crc.to_le_bytes());
    }
    let mut packed = Vec::new();
    for i in 0..keep as u64 {
        varint(index.data_len(i).unwrap(), &mut packed);
    }
    out.push(0x32);
    varint(packed.len() as u64, &mut out);
    out.extend_from_slice(&packed);
    let crc = feedstock::io::tfrecord::masked_crc32c(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

#[test]
fn bench_stream_refuses_a_sidecar_that_could_mislead_it() {
    use feedstock::io::index::sidecar_path;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data.tfrecord");
    std::fs::copy(golden("examples.tfrecord"), &data).unwrap();
    let data = path_str(&data).to_owned();
    let side = sidecar_path(&data);
    let bench = || feedstock_within(&["bench", "--stream", &data]);
    // A sound sidecar is used: the sequential stream reads the 8 records.
    let out = feedstock(&["index", &data]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let counts = stage_counts(&bench());
    assert!(counts.contains(&("stream-seq".to_owned(), 8)), "{counts:?}");

    let fifo = || {
        let _ = std::fs::remove_file(&side);
        let made = Command::new("mkfifo").arg(&side).status().unwrap();
        assert!(made.success(), "mkfifo {side}");
    };
    let zero = || {
        let _ = std::fs::remove_file(&side);
        std::os::unix::fs::symlink("/dev/zero", &side).unwrap();
    };
    let huge = || {
        let _ = std::fs::remove_file(&side);
        let f = std::fs::File::create(&side).unwrap();
        f.set_len(3 << 30).unwrap();
        drop(f);
        assert_eq!(std::fs::metadata(&side).unwrap().len(), 3 << 30);
    };
    let half = || {
        let bytes = sidecar_listing_fewer(&data, 4);
        std::fs::write(&side, bytes).unwrap();
    };
    let cases: [(&str, &dyn Fn(), &str); 4] = [
        ("a FIFO", &fifo, "not a regular file"),
        ("a link to /dev/zero", &zero, "not a regular file"),
        ("3 GiB", &huge, "larger than"),
        ("half the records", &half, "cover"),
    ];
    for (what, make, says) in cases {
        make();
        let out = bench();
        assert_eq!(out.status.code(), Some(2), "{what}: {out:?}");
        let err = stderr(&out);
        assert!(err.contains(&side), "{what}: {err}");
        assert!(err.contains(says), "{what}: {err}");
    }
}
