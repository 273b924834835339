//! Memory bounded by settings, never by the input; no endless reads; no
//! panics when threads cannot start (issue 10, items 4–7, 9, 11).
//!
//! The unbounded-memory cases run the binary under an address-space
//! limit (`ulimit -v`, through `sh`) and assert a clean error and exit
//! status where an abort (SIGABRT, or SIGSEGV on a guard page) used to
//! be. The inputs are small compressed files that inflate hugely, made
//! by repeating one compressed block (see [`gzip_repeat`]), so building
//! them costs next to nothing.

use std::fs::File;
use std::path::Path;
use std::process::{Command, Output};

use crate::support::{
    feedstock, feedstock_sh, gzip_parts, gzip_repeat, path_str, sh_command,
    stderr,
};

/// Runs the binary with its address space limited to `kib` KiB.
fn feedstock_limited(kib: u64, args: &[&str]) -> Output {
    feedstock_sh(&format!("ulimit -v {kib}"), "", args)
}

/// As [`gzip_repeat`], with `prefix` inflated first.
fn gzip_repeat_after(prefix: &[u8], unit: &[u8], times: u64, path: &Path) {
    gzip_parts(prefix, unit, times, &[], path);
}

#[test]
fn the_bomb_builder_makes_valid_gzip() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.gz");
    gzip_repeat(b"abc,", 1000, &path);
    let mut out = String::new();
    std::io::Read::read_to_string(
        &mut flate2::read::GzDecoder::new(File::open(&path).unwrap()),
        &mut out,
    )
    .unwrap();
    assert_eq!(out, "abc,".repeat(1000));
    gzip_repeat_after(b"head:", b"abc,", 1000, &path);
    let mut out = String::new();
    std::io::Read::read_to_string(
        &mut flate2::read::GzDecoder::new(File::open(&path).unwrap()),
        &mut out,
    )
    .unwrap();
    assert_eq!(out, format!("head:{}", "abc,".repeat(1000)));
}

/// A TFRecord header whose length field (with a valid CRC) claims
/// `len` bytes of data.
fn header_claiming(len: u64) -> Vec<u8> {
    let mut h = len.to_le_bytes().to_vec();
    let crc = feedstock::io::tfrecord::masked_crc32c(&h);
    h.extend_from_slice(&crc.to_le_bytes());
    h
}

#[test]
fn a_record_within_the_limit_that_memory_cannot_hold_is_a_clean_error() {
    let dir = tempfile::tempdir().unwrap();
    // One record whose header claims just under the 1 GiB limit, then
    // 1 GiB of zeros: a 1 MB file. Reading it holds the record as it
    // arrives, until memory runs out: an error naming the file and the
    // record's offset, where an abort used to be, in the reader (count,
    // cat, inspect, bench) and in the resynchronising walk (verify,
    // repair) alike.
    let gz = dir.path().join("claim.tfrecord.gz");
    let zeros = vec![0u8; 1 << 20];
    gzip_repeat_after(&header_claiming((1 << 30) - 1), &zeros, 1 << 10, &gz);
    let out = dir.path().join("repaired.tfrecord");
    for args in [
        vec!["count", path_str(&gz)],
        vec!["verify", path_str(&gz)],
        vec!["repair", path_str(&gz), path_str(&out)],
    ] {
        let run = feedstock_limited(120_000, &args);
        assert_eq!(run.status.code(), Some(1), "{args:?} {run:?}");
        let err = stderr(&run);
        assert!(err.contains("ResourceExhausted: out of memory"), "{err}");
        assert!(err.contains("claim.tfrecord.gz, offset 0"), "{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

/// 256 KiB of one CSV field with no newline.
fn no_newline() -> Vec<u8> {
    vec![b'7'; 256 << 10]
}

#[test]
fn a_gzip_line_that_inflates_past_memory_is_a_clean_error() {
    let dir = tempfile::tempdir().unwrap();
    let bomb = dir.path().join("bomb.csv.gz");
    // 4 GiB of one line, from a few MB.
    gzip_repeat(&no_newline(), 16 << 10, &bomb);
    let out = dir.path().join("out.tfrecord");
    // With the default limit (1 GiB), memory runs out first: an error.
    let run = feedstock_limited(
        400_000,
        &[
            "convert",
            "csv",
            path_str(&bomb),
            path_str(&out),
            "--columns",
            "a:int64",
        ],
    );
    assert_eq!(run.status.code(), Some(1), "{run:?}");
    assert!(stderr(&run).contains("ResourceExhausted"), "{run:?}");
    assert!(stderr(&run).contains("bomb.csv.gz:1"), "{run:?}");
    // With a lower limit, the limit is hit first.
    let run = feedstock_limited(
        400_000,
        &[
            "convert",
            "csv",
            path_str(&bomb),
            path_str(&out),
            "--columns",
            "a:int64",
            "--max-line-bytes",
            "1000000",
        ],
    );
    assert_eq!(run.status.code(), Some(1), "{run:?}");
    assert!(
        stderr(&run).contains("longer than the limit of 1000000"),
        "{run:?}"
    );
    assert!(!out.exists());
    // bench's CSV schema inference and reader are bounded the same way.
    let run = feedstock_limited(
        400_000,
        &[
            "bench",
            "--format",
            "csv",
            path_str(&bomb),
            "--max-line-bytes",
            "1000",
        ],
    );
    assert_eq!(run.status.code(), Some(1), "{run:?}");
    assert!(stderr(&run).contains("limit of 1000 bytes"), "{run:?}");
    // With a column spec, bench goes straight to the library's line
    // reader, whose buffer runs out of memory first at the default
    // limit: an error too.
    let run = feedstock_limited(
        120_000,
        &[
            "bench",
            "--format",
            "csv",
            path_str(&bomb),
            "--columns",
            "a:int64",
            "--threads",
            "1",
        ],
    );
    assert_eq!(run.status.code(), Some(1), "{run:?}");
    assert!(
        stderr(&run).contains("ResourceExhausted: out of memory"),
        "{run:?}"
    );
    assert!(stderr(&run).contains("bomb.csv.gz"), "{run:?}");
}

#[cfg(target_os = "linux")]
#[test]
fn dev_zero_as_csv_is_refused_or_a_clean_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.tfrecord");
    // A character device is not a file: refused by name, before any read
    // (it would never end: /dev/urandom has lines forever).
    for dev in ["/dev/zero", "/dev/urandom"] {
        for args in [
            vec![
                "convert",
                "csv",
                dev,
                path_str(&out),
                "--columns",
                "a:bytes",
            ],
            vec!["bench", "--format", "csv", dev, "--columns", "a:bytes"],
            vec!["cat", dev],
            vec!["verify", dev],
            vec!["repair", dev, path_str(&out)],
        ] {
            let run = feedstock(&args);
            assert_eq!(run.status.code(), Some(2), "{args:?} {run:?}");
            assert!(stderr(&run).contains("character device"), "{run:?}");
            assert!(stderr(&run).contains(dev), "{run:?}");
        }
    }
    // /dev/null is an empty file.
    let run = feedstock(&["count", "/dev/null"]);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    // Given as standard input on purpose, it is read: one endless line,
    // held up to memory, then a clean error.
    let run = feedstock_sh(
        "ulimit -v 400000",
        "< /dev/zero",
        &[
            "convert",
            "csv",
            "-",
            path_str(&out),
            "--columns",
            "a:int64",
        ],
    );
    assert_eq!(run.status.code(), Some(1), "{run:?}");
    assert!(stderr(&run).contains("ResourceExhausted"), "{run:?}");
    assert!(stderr(&run).contains("key -:1"), "{run:?}");
    assert!(!out.exists());
}

#[test]
fn bench_infers_its_schema_from_a_bounded_number_of_bytes() {
    // 1000 Examples of 256 KiB each (250 MiB, from a 1 MB file), then a
    // damaged record. The schema used to be inferred from the first 1000
    // records held at once; now from at most 64 MiB of them, and each
    // worker reads at most 32 MiB at a time, so under a 200 MB address
    // space bench gets through them to the damage, which it reports.
    let dir = tempfile::tempdir().unwrap();
    let gz = dir.path().join("big.tfrecord.gz");
    let ex = feedstock::proto::Example::builder()
        .feature(
            "blob",
            feedstock::proto::Feature::bytes_list([vec![0u8; 256 << 10]]),
        )
        .build();
    let mut unit = Vec::new();
    feedstock::io::tfrecord::encode_record(
        &prost::Message::encode_to_vec(&ex),
        &mut unit,
    );
    gzip_parts(&[], &unit, 1000, &bad_crc_record(), &gz);
    let run = feedstock_limited(
        200_000,
        &["bench", path_str(&gz), "--threads", "1"],
    );
    assert_eq!(run.status.code(), Some(1), "{run:?}");
    assert!(stderr(&run).contains("DataLoss"), "{run:?}");
    assert!(stderr(&run).contains("data CRC mismatch"), "{run:?}");
}

/// One framed record whose data CRC is wrong.
fn bad_crc_record() -> Vec<u8> {
    let mut rec = Vec::new();
    feedstock::io::tfrecord::encode_record(b"x", &mut rec);
    let n = rec.len();
    rec[n - 1] ^= 0xff;
    rec
}

#[test]
fn verify_streams_its_report_of_millions_of_problems() {
    let dir = tempfile::tempdir().unwrap();
    // Each problem held in memory names the file twice (file and key):
    // with a long name, 300 k damaged records made ~250 MB of report.
    let gz = dir
        .path()
        .join(format!("{}.tfrecord.gz", "long".repeat(50)));
    let n = 300_000u64;
    let unit: Vec<u8> = (0..1000).flat_map(|_| bad_crc_record()).collect();
    gzip_repeat(&unit, n / 1000, &gz);
    let run = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 120000 && \"$0\" verify \"$1\" | tail -n 2")
        .arg(env!("CARGO_BIN_EXE_feedstock"))
        .arg(&gz)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&run.stdout).into_owned();
    assert!(
        text.contains(&format!("0 records ok (0 bytes), {n} problems")),
        "{text} {run:?}"
    );
    assert!(
        text.contains(&format!("{n} problems in 1 file")),
        "{text} {run:?}"
    );
}

#[test]
fn absurd_counts_are_usage_errors_not_allocations() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("x.csv");
    std::fs::write(&input, "1\n").unwrap();
    let out = dir.path().join("o.tfrecord");
    let cases: [(&[&str], &str); 4] = [
        (&["--columns", "a:int64*100000000000"], "too big"),
        (&["--columns", "_*18446744073709551615,a:int64"], "too big"),
        (
            &["--columns", "a:int64", "--shards", "4294967295"],
            "100000",
        ),
        (&["--columns", "a:int64", "--shards", "0"], "from 1 to"),
    ];
    for (extra, want) in cases {
        let mut args =
            vec!["convert", "csv", path_str(&input), path_str(&out)];
        args.extend_from_slice(extra);
        let run = feedstock_limited(400_000, &args);
        assert_eq!(run.status.code(), Some(2), "{extra:?} {run:?}");
        assert!(stderr(&run).contains(want), "{extra:?} {run:?}");
        assert!(!stderr(&run).contains("select_cols"), "{run:?}");
    }
    let bad_bench: [&[&str]; 5] = [
        &["--threads", "1000"],
        &["--threads", "0"],
        &["--epochs", "0"],
        &["--batch-size", "99999999999"],
        &["--format", "fixed", "--record-bytes", "0"],
    ];
    for extra in bad_bench {
        let mut args = vec!["bench", path_str(&input)];
        args.extend_from_slice(extra);
        let run = feedstock(&args);
        assert_eq!(run.status.code(), Some(2), "{extra:?} {run:?}");
    }
    let run = feedstock(&["bench", path_str(&input), "--threads", "1000"]);
    assert!(stderr(&run).contains("from 1 to 256"), "{run:?}");
}

#[test]
fn a_batch_of_records_memory_cannot_hold_is_a_clean_error() {
    // Three records of 1 GiB (the record limit) in a sparse file: reading
    // them and decoding a batch of them under a 3.5 GB address space
    // used to abort in decode_raw_batch (issue 33, item 6).
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.bin");
    File::create(&path).unwrap().set_len(3 << 30).unwrap();
    let args = [
        "bench",
        path_str(&path),
        "--format",
        "fixed",
        "--record-bytes",
        "1073741824",
        "--threads",
        "1",
    ];
    let run = feedstock_limited(3_500_000, &args);
    let err = stderr(&run);
    assert_eq!(run.status.code(), Some(1), "{run:?}");
    assert!(err.contains("ResourceExhausted"), "{err}");
    assert!(err.contains("big.bin"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[cfg(target_os = "linux")]
#[test]
fn a_fixed_length_read_of_a_device_is_refused_not_endless() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o.tfrecord");
    let run = feedstock(&[
        "convert",
        "fixed",
        "--record-bytes",
        "4",
        "/dev/zero",
        path_str(&out),
    ]);
    assert_eq!(run.status.code(), Some(2), "{run:?}");
    assert!(stderr(&run).contains("not a regular file"), "{run:?}");
    assert!(!out.exists());
    let run = feedstock(&[
        "bench",
        "--format",
        "fixed",
        "--record-bytes",
        "4",
        "/dev/zero",
    ]);
    assert_eq!(run.status.code(), Some(2), "{run:?}");
    assert!(stderr(&run).contains("character device"), "{run:?}");
}

/// Runs the binary allowed no thread beyond its main one: `ulimit -p 1`
/// (RLIMIT_NPROC) makes every `clone` of a new thread fail with EAGAIN,
/// deterministically, before any of the thread's own memory is touched.
/// Root is exempt from that limit, so as root the binary runs as the
/// user `nobody` (uid and gid 65534), and the files it reads must be
/// readable by it.
#[cfg(target_os = "linux")]
fn feedstock_without_threads(args: &[&str]) -> Output {
    use std::os::unix::fs::MetadataExt;
    use std::os::unix::process::CommandExt;
    let mut command = sh_command("ulimit -p 1", "", args);
    let am_root = std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0);
    if am_root {
        command.uid(65534).gid(65534);
    }
    command.output().expect("run feedstock under sh")
}

// An address-space limit (`ulimit -v`) is not a reliable way to stop a
// thread from starting: whether the last allocation to fail is the new
// stack (a clean spawn error) or the started thread's signal stack or
// malloc arena (an abort inside the thread, where nothing can catch
// it) depends on timing. Refusing the thread itself is deterministic.
#[cfg(target_os = "linux")]
#[test]
fn threads_that_cannot_start_are_exit_three_not_a_panic() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("x.tfrecord");
    let ex = feedstock::proto::Example::builder()
        .feature("a", feedstock::proto::Feature::int64_list([1]))
        .build();
    let mut w = feedstock::io::tfrecord::Writer::new(Vec::new());
    w.write_record(&prost::Message::encode_to_vec(&ex)).unwrap();
    std::fs::write(&input, w.finish().unwrap()).unwrap();
    let readable = std::fs::Permissions::from_mode(0o755);
    std::fs::set_permissions(dir.path(), readable.clone()).unwrap();
    std::fs::set_permissions(&input, readable).unwrap();
    for threads in ["1", "256"] {
        let run = feedstock_without_threads(&[
            "bench",
            path_str(&input),
            "--threads",
            threads,
        ]);
        assert_eq!(run.status.code(), Some(3), "{run:?}");
        assert!(stderr(&run).contains("cannot start thread"), "{run:?}");
        assert!(!stderr(&run).contains("panicked"), "{run:?}");
    }
}
