//! End-to-end tests of `feedstock demo`, running the built binary on the
//! shipped digits with few epochs.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The methods the demo runs (reading from files and preloading join
/// this list as the pipeline pieces land).
const METHODS: &[&str] = &["feeding"];

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data")
}

fn demo(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_feedstock"))
        .arg("demo")
        .args(args)
        .output()
        .expect("the feedstock binary runs")
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

#[test]
#[ignore = "main.rs gets the demo subcommand once io's main.rs lands"]
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
    for &method in METHODS {
        let acc = accuracy(&stdout, method);
        assert!(acc >= 0.90, "{method}: accuracy {acc}\n{stdout}");
        let log = out.path().join("runs").join(method).join("scalars.tsv");
        let log = std::fs::read_to_string(&log).unwrap();
        assert!(log.lines().any(|l| l.contains("\ttest_accuracy\t")));
    }
    // stdout is a pipe here, so no progress bar may be drawn into it.
    assert!(!stdout.contains("epoch 1/4"), "{stdout}");
}

#[test]
#[ignore = "main.rs gets the demo subcommand once io's main.rs lands"]
fn demo_without_the_data_file_fails_naming_it() {
    let out = tempfile::tempdir().unwrap();
    let result = demo(&[
        "--data-dir",
        out.path().join("nowhere").to_str().unwrap(),
        "--out-dir",
        out.path().to_str().unwrap(),
    ]);
    assert!(!result.status.success());
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(stderr.contains("digits.csv.gz"), "{stderr}");
    assert!(stderr.contains("NotFound"), "{stderr}");
}
