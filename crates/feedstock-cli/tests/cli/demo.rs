//! End-to-end tests of `feedstock demo`, running the built binary on the
//! shipped digits with few epochs.

use std::path::{Path, PathBuf};
use std::process::Output;

use feedstock::summary;

use crate::support::{data_dir, feedstock};

/// The methods the demo runs, by the name that starts their line.
const METHODS: &[&str] = &["feeding", "files", "preloaded"];

fn demo(args: &[&str]) -> Output {
    feedstock(&[&["demo"], args].concat())
}

/// The `total` line of `feedstock count` over the files matching
/// `prefix*` in `dir`, after checking each file's CRCs.
fn count_records(dir: &Path, prefix: &str) -> (usize, u64) {
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_str().unwrap();
            name.starts_with(prefix) && name.ends_with(".tfrecord")
        })
        .map(|p| p.to_str().unwrap().to_owned())
        .collect();
    files.sort();
    let mut args = vec!["count"];
    args.extend(files.iter().map(String::as_str));
    let out = feedstock(&args);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    let total = stdout
        .lines()
        .find_map(|l| l.strip_suffix("\ttotal"))
        .unwrap_or_else(|| panic!("no total in {stdout}"));
    (files.len(), total.parse().unwrap())
}

/// The `test accuracy` figure of the method's line of the demo's output.
fn accuracy(stdout: &str, method: &str) -> f64 {
    let line = stdout
        .lines()
        .find(|l| l.split_whitespace().next() == Some(method))
        .unwrap_or_else(|| panic!("no line for {method} in:\n{stdout}"));
    let rest = line
        .split("test accuracy")
        .nth(1)
        .unwrap_or_else(|| panic!("no accuracy in {line:?}"));
    rest.split_whitespace().next().unwrap().parse().unwrap()
}

/// The `test_accuracy` scalars of the one event file in `dir`.
fn test_accuracies(dir: &Path) -> Vec<f32> {
    let files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let name = files[0].file_name().unwrap().to_str().unwrap();
    assert!(name.starts_with("events.out.tfevents."), "{name}");
    summary::read_events(&files[0])
        .unwrap()
        .iter()
        .filter_map(|e| summary::scalar(e, "test_accuracy"))
        .collect()
}

#[test]
fn demo_trains_every_method_to_ninety_percent_and_writes_its_outputs() {
    let out = tempfile::tempdir().unwrap();
    let data = data_dir();
    let result = demo(&[
        "--data-dir",
        data.to_str().unwrap(),
        "--out-dir",
        out.path().to_str().unwrap(),
        "--epochs",
        "4",
        "--seed",
        "11",
    ]);
    let stdout = String::from_utf8_lossy(&result.stdout);
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(
        result.status.success(),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(stdout.contains("1497 train, 300 held out"), "{stdout}");
    assert_eq!(count_records(out.path(), "train-"), (4, 1497));
    assert_eq!(count_records(out.path(), "test-"), (2, 300));
    for &method in METHODS {
        let acc = accuracy(&stdout, method);
        assert!(acc >= 0.90, "{method}: accuracy {acc}\n{stdout}");
        // The last accuracy in the method's TensorBoard event file is the
        // one printed.
        let logged = test_accuracies(&out.path().join("runs").join(method));
        assert_eq!(logged.len(), 4, "{method}: one per epoch");
        let last = f64::from(*logged.last().unwrap());
        assert!((last - acc).abs() < 1e-3, "{method}: {logged:?} vs {acc}");
    }
    // stdout is a pipe here, so the progress bars (drawn on stderr) are
    // hidden.
    assert!(!stderr.contains("epoch 1/4"), "{stderr}");
    assert!(!stdout.contains("epoch 1/4"), "{stdout}");
}

#[test]
fn demo_without_the_data_file_fails_naming_it() {
    let out = tempfile::tempdir().unwrap();
    let result = demo(&[
        "--data-dir",
        out.path().join("nowhere").to_str().unwrap(),
        "--out-dir",
        out.path().to_str().unwrap(),
    ]);
    assert_eq!(result.status.code(), Some(2), "a missing input file");
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(stderr.contains("digits.csv.gz"), "{stderr}");
    assert!(stderr.contains("NotFound"), "{stderr}");
}

#[test]
fn demo_on_a_malformed_digits_file_fails_naming_line_and_column() {
    use std::io::Write;

    let data = tempfile::tempdir().unwrap();
    let good = vec!["0"; 64].join(",") + ",3\n";
    let bad = vec!["0"; 63].join(",") + ",x,3\n";
    let file = std::fs::File::create(data.path().join("digits.csv.gz"));
    let mut gz = flate2::write::GzEncoder::new(
        file.unwrap(),
        flate2::Compression::default(),
    );
    gz.write_all(format!("{good}{bad}").as_bytes()).unwrap();
    gz.finish().unwrap();
    let out = tempfile::tempdir().unwrap();
    let result = demo(&[
        "--data-dir",
        data.path().to_str().unwrap(),
        "--out-dir",
        out.path().to_str().unwrap(),
    ]);
    assert_eq!(result.status.code(), Some(2), "bad input");
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(stderr.contains("InvalidArgument"), "{stderr}");
    assert!(stderr.contains("digits.csv.gz:2"), "{stderr}");
    assert!(stderr.contains("column 63"), "{stderr}");
}

#[test]
fn demo_refuses_zero_epochs_threads_or_batch_size() {
    let out = tempfile::tempdir().unwrap();
    for flag in ["--epochs", "--threads", "--batch-size"] {
        let result =
            demo(&["--out-dir", out.path().to_str().unwrap(), flag, "0"]);
        assert!(!result.status.success(), "{flag} 0 was accepted");
        let stderr = String::from_utf8_lossy(&result.stderr);
        assert!(stderr.contains("must be from 1 to"), "{flag}: {stderr}");
    }
    assert_eq!(std::fs::read_dir(out.path()).unwrap().count(), 0);
}
