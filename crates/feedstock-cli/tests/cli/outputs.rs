//! What the CLI guarantees about files (issue 10, items 1–3 and 18): it
//! never modifies an input, writes every output atomically, replaces an
//! existing file only with --force, never removes what it did not create,
//! and an interrupted run leaves the old state.

use std::fs;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use feedstock::io::tfrecord::ReaderBuilder;

use crate::support::{bin, feedstock, names, path_str, stderr};

fn count_records(path: &Path) -> usize {
    ReaderBuilder::new().open(path).unwrap().count()
}

const CSV: &str = "1,2\n3,4\n5,6\n";

fn convert_csv(input: &Path, out: &str, extra: &[&str]) -> Output {
    let mut args = vec!["convert", "csv", path_str(input), out, "--columns"];
    args.push("a:int64,b:int64");
    args.extend_from_slice(extra);
    feedstock(&args)
}

#[test]
fn an_output_that_is_the_input_is_refused_and_the_input_kept() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("x.csv");
    fs::write(&input, CSV).unwrap();
    let sym = dir.path().join("sym.tfrecord");
    std::os::unix::fs::symlink(&input, &sym).unwrap();
    let hard = dir.path().join("hard.tfrecord");
    fs::hard_link(&input, &hard).unwrap();
    for out in [&input, &sym, &hard] {
        for force in [&[][..], &["--force"][..]] {
            let run = convert_csv(&input, path_str(out), force);
            assert_eq!(run.status.code(), Some(2), "{out:?} {run:?}");
            assert!(stderr(&run).contains("is the input"), "{run:?}");
            assert_eq!(fs::read_to_string(&input).unwrap(), CSV);
        }
    }
    // convert fixed likewise.
    let run = feedstock(&[
        "convert",
        "fixed",
        path_str(&input),
        path_str(&hard),
        "--record-bytes",
        "4",
        "--force",
    ]);
    assert_eq!(run.status.code(), Some(2), "{run:?}");
    assert_eq!(fs::read_to_string(&input).unwrap(), CSV);
    // A shard name that is a link to the input.
    let shard = dir.path().join("s-00001-of-00002.tfrecord");
    std::os::unix::fs::symlink(&input, &shard).unwrap();
    let run = convert_csv(
        &input,
        path_str(&dir.path().join("s.tfrecord")),
        &["--shards", "2", "--force"],
    );
    assert_eq!(run.status.code(), Some(2), "{run:?}");
    assert!(stderr(&run).contains("is the input"), "{run:?}");
    fs::remove_file(&shard).unwrap();
    // repair and index likewise: OUT, or the index beside a file, that
    // is a link to the input.
    let tfrecord = dir.path().join("r.tfrecord");
    let mut w = feedstock::io::tfrecord::Writer::new(Vec::new());
    w.write_record(b"record").unwrap();
    let bytes = w.finish().unwrap();
    fs::write(&tfrecord, &bytes).unwrap();
    let side = feedstock::io::index::sidecar_path(path_str(&tfrecord));
    for link in ["hard", "sym"] {
        if link == "hard" {
            fs::hard_link(&tfrecord, &side).unwrap();
        } else {
            std::os::unix::fs::symlink(&tfrecord, &side).unwrap();
        }
        for args in [
            vec!["repair", path_str(&tfrecord), side.as_str(), "--force"],
            vec!["index", path_str(&tfrecord), "--force"],
        ] {
            let run = feedstock(&args);
            assert_eq!(run.status.code(), Some(2), "{args:?} {run:?}");
            assert!(stderr(&run).contains("is the input"), "{run:?}");
            assert_eq!(fs::read(&tfrecord).unwrap(), bytes);
        }
        fs::remove_file(&side).unwrap();
    }
    fs::remove_file(&tfrecord).unwrap();
    assert_eq!(
        names(dir.path()),
        ["hard.tfrecord", "sym.tfrecord", "x.csv"]
    );
}

#[test]
fn an_existing_output_is_replaced_only_with_force() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("x.csv");
    fs::write(&input, CSV).unwrap();
    let out = dir.path().join("out.tfrecord");
    fs::write(&out, "precious").unwrap();
    let run = convert_csv(&input, path_str(&out), &[]);
    assert_eq!(run.status.code(), Some(2), "{run:?}");
    assert!(stderr(&run).contains("already exists"), "{run:?}");
    assert!(stderr(&run).contains("--force"), "{run:?}");
    assert_eq!(fs::read_to_string(&out).unwrap(), "precious");
    let run = convert_csv(&input, path_str(&out), &["--force"]);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    assert_eq!(count_records(&out), 3);
    assert_eq!(names(dir.path()), ["out.tfrecord", "x.csv"]);
}

#[test]
fn a_failed_run_leaves_every_output_as_it_was_and_no_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("x.csv");
    // Line 3 does not fit the spec: found after two records are written.
    fs::write(&input, "1,2\n3,4\n5\n").unwrap();
    let out = dir.path().join("out.tfrecord");
    fs::write(&out, "old").unwrap();
    // A symlink output: its target must not be touched either.
    let target = dir.path().join("target.txt");
    fs::write(&target, "kept").unwrap();
    let link = dir.path().join("link.tfrecord");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    for o in [&out, &link] {
        let run = convert_csv(&input, path_str(o), &["--force"]);
        assert_eq!(run.status.code(), Some(2), "{run:?}");
        assert!(stderr(&run).contains(":3"), "{run:?}");
    }
    assert_eq!(fs::read_to_string(&out).unwrap(), "old");
    assert_eq!(fs::read_to_string(&target).unwrap(), "kept");
    assert!(fs::symlink_metadata(&link).unwrap().is_symlink());
    // Sharded outputs: none is left behind.
    let run = convert_csv(
        &input,
        path_str(&dir.path().join("new.tfrecord")),
        &["--shards", "3"],
    );
    assert_eq!(run.status.code(), Some(2), "{run:?}");
    assert_eq!(
        names(dir.path()),
        ["link.tfrecord", "out.tfrecord", "target.txt", "x.csv"]
    );
}

#[test]
fn a_device_is_never_replaced_or_removed() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("x.csv");
    fs::write(&input, "1,2\nbad\n").unwrap();
    let run = convert_csv(&input, "/dev/null", &["--force"]);
    assert_eq!(run.status.code(), Some(2), "{run:?}");
    assert!(stderr(&run).contains("not a regular file"), "{run:?}");
    assert!(Path::new("/dev/null").exists());
    let dir_out = convert_csv(&input, path_str(dir.path()), &["--force"]);
    assert_eq!(dir_out.status.code(), Some(2), "{dir_out:?}");
    assert_eq!(names(dir.path()), ["x.csv"]);
}

/// Waits until `dir` holds a file whose name ends with `suffix`: the
/// converter has created its temporary output and is reading its input.
/// Polls a condition the child sets; no timing is asserted.
fn wait_for_partial(dir: &Path) {
    loop {
        if names(dir).iter().any(|n| n.ends_with(".feedstock-partial")) {
            return;
        }
        std::thread::yield_now();
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// Starts `convert csv - OUT --force` reading a pipe, feeds it some lines,
/// signals it while it waits for more, and returns its output.
fn interrupt_convert(signal: &str) -> (Output, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.tfrecord");
    fs::write(&out, "old contents").unwrap();
    let mut child = bin()
        .args(["convert", "csv", "-", path_str(&out), "--force"])
        .args(["--columns", "a:int64,b:int64"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for i in 0..10_000 {
        writeln!(stdin, "{i},{i}").unwrap();
    }
    stdin.flush().unwrap();
    wait_for_partial(dir.path());
    let kill = Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    // More input (or its end) wakes the blocked read; the loop then sees
    // the signal and stops before writing anything into place.
    for i in 0..10 {
        let _ = writeln!(stdin, "{i},{i}");
    }
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    assert_eq!(fs::read_to_string(&out).unwrap(), "old contents");
    assert_eq!(names(dir.path()), ["out.tfrecord"]);
    (output, dir)
}

#[test]
fn sigint_or_sigterm_mid_convert_leaves_the_old_output_and_no_temp_file() {
    let (run, _dir) = interrupt_convert("-INT");
    assert_eq!(run.status.code(), Some(130), "{run:?}");
    assert!(stderr(&run).contains("interrupted by signal 2"), "{run:?}");
    let (run, _dir) = interrupt_convert("-TERM");
    assert_eq!(run.status.code(), Some(143), "{run:?}");
}

#[test]
fn a_signal_stops_repair_inside_a_long_damaged_region() {
    // Damage yields no record until the region ends: the signal must be
    // seen while scanning, not only between records.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.tfrecord");
    fs::write(&out, "old contents").unwrap();
    let mut child = bin()
        .args(["repair", "-", path_str(&out), "--force"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let garbage = vec![0xab_u8; 64 << 10];
    stdin.write_all(&garbage).unwrap();
    wait_for_partial(dir.path());
    let kill = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    // Garbage keeps coming; the repair must stop anyway. 1 GiB is far
    // more than it reads after the signal (one chunk).
    let mut fed = 0u64;
    while fed < 1 << 30 && stdin.write_all(&garbage).is_ok() {
        fed += garbage.len() as u64;
    }
    assert!(fed < 1 << 30, "repair read on after the signal");
    drop(stdin);
    let run = child.wait_with_output().unwrap();
    assert_eq!(run.status.code(), Some(143), "{run:?}");
    assert_eq!(fs::read_to_string(&out).unwrap(), "old contents");
    assert_eq!(names(dir.path()), ["out.tfrecord"]);
}

#[test]
fn dash_reads_standard_input_and_writes_standard_output() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = bin()
        .args(["convert", "csv", "-", "-", "--columns", "a:int64,b:int64"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(CSV.as_bytes())
        .unwrap();
    let run = child.wait_with_output().unwrap();
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    // The counts go to stderr, so stdout is only records.
    assert_eq!(stderr(&run), "3\t-\n3\ttotal\n");
    let tfrecord = dir.path().join("piped.tfrecord");
    fs::write(&tfrecord, &run.stdout).unwrap();
    assert_eq!(count_records(&tfrecord), 3);
    // Every reading subcommand takes `-` for standard input.
    for sub in [&["count"][..], &["cat"], &["verify"], &["inspect"]] {
        let mut child = bin()
            .args(sub)
            .arg("-")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(&run.stdout).unwrap();
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{sub:?} {out:?}");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        match sub[0] {
            "count" => assert_eq!(text, "3\t-\n3\ttotal\n"),
            "cat" => {
                assert_eq!(text.lines().count(), 3);
                assert!(text.contains("\"key\":\"-:2\""), "{text}");
            }
            "verify" => assert!(text.contains("-: 3 records ok"), "{text}"),
            _ => assert!(text.contains("3 records"), "{text}"),
        }
    }
    // convert fixed streams standard input to its end.
    let mut child = bin()
        .args(["convert", "fixed", "-", "-", "--record-bytes", "2"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"aabbcc").unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(stderr(&out), "3\t-\n3\ttotal\n");
    // bench reads each file once per stage: standard input is saved
    // first, and every stage reads all of it.
    let mut child = bin()
        .args(["bench", "-", "--epochs", "2", "--threads", "1"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&run.stdout).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    for stage in ["read ", "read+parse ", "read+parse+batch "] {
        let row = text.lines().find(|l| l.starts_with(stage)).unwrap();
        assert_eq!(row.split_whitespace().nth(1), Some("6"), "{text}");
    }
    // Its errors name `-`, not the temporary file.
    let mut child = bin()
        .args(["bench", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(&run.stdout[..20])
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(stderr(&out).contains("(file -, offset 0)"), "{out:?}");
    assert!(!stderr(&out).contains("feedstock-stdin"), "{out:?}");
    // Repair and index take `-` too: repair to standard output; index
    // refuses it (an index is kept beside its file).
    let mut child = bin()
        .args(["repair", "-", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&run.stdout).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(out.stdout, run.stdout);
    let out = feedstock(&["index", "-"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(stderr(&out).contains("standard input"), "{out:?}");
    // Standard output cannot be sharded.
    let out = feedstock(&[
        "convert",
        "csv",
        "-",
        "-",
        "--columns",
        "a:int64",
        "--shards",
        "2",
    ]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}
