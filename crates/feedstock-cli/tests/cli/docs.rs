//! The shell blocks of README.md and docs/*.md: every `feedstock ...`
//! line of a ```sh or ```console block runs with the built binary, so
//! that none can rot. Each block runs in a fresh temporary directory
//! holding the files the docs name (`train-0.tfrecord`,
//! `train-1.tfrecord`: the shipped digits as Examples; `data/`: the
//! shipped data); its lines run in turn through `sh`, and each must exit
//! 0, or the status a trailing `# exits N` gives. Every other shell line
//! (installing, building, the object-store examples, which need a
//! server) must be one of [`NOT_RUN`], so that a new shell line cannot
//! slip in untested.

use std::path::{Path, PathBuf};
use std::process::Command;

mod fixture {
    include!("../../../../docs/fixture.rs");
}

/// Shell lines the docs show that this test does not run, and why.
const NOT_RUN: &[&str] = &[
    // The README's first commands: the demo (the demo tests run it),
    // the whole test suite (CI runs it), the Python demo.
    "cargo run --release -p feedstock-cli -- demo   # the main job: the whole system on the shipped digits",
    "scripts/test                                   # the tests (Rust, then Python in .venv)",
    "scripts/py-demo                                # the same from Python: import feedstock.compat.v1 as tf",
    // Installing.
    "cargo add feedstock --path path/to/feedstock/crates/feedstock   # Rust: the library, from a clone (the command: cargo install --path crates/feedstock-cli)",
    "pip install ./crates/feedstock-py                              # Python >= 3.11, from a clone: builds an optimised abi3 wheel (needs Rust)",
    "pip install ./crates/feedstock-py   # an optimised build; one stable-ABI wheel for every CPython >= 3.11",
    "python3 -m venv .venv",
    ".venv/bin/pip install -r crates/feedstock-py/requirements-test.txt   # maturin, numpy, pytest (pinned)",
    "(cd crates/feedstock-py && VIRTUAL_ENV=$PWD/../../.venv ../../.venv/bin/maturin develop --release)",
    ".venv/bin/python -m feedstock.demo --data data/digits.csv.gz   # what scripts/py-demo runs",
    ".venv/bin/python -m pytest crates/feedstock-py/tests          # what scripts/test-python runs",
    // Object stores: need a server (tests/cli/store_cli.rs runs these
    // subcommands against SeaweedFS).
    "export AWS_ENDPOINT=http://127.0.0.1:8333 AWS_ALLOW_HTTP=true AWS_REGION=us-east-1",
    "feedstock convert csv data.csv s3://bucket/train.tfrecord --shards 4 --columns x:float*2,y:int64",
    "feedstock bench 's3://bucket/train-*-of-00004.tfrecord'",
    // Benchmarks: minutes long, and need TensorFlow.
    "python3 benches/tf/side_by_side.py --tf-python /work/venv-tf/bin/python --rounds 5",
    ".venv/bin/python benches/python/mnist_pipeline.py --repeat 3 --epochs 10 --tf-python /work/venv-tf/bin/python",
];

/// Languages a fenced block of the docs may have: Rust blocks (and
/// untagged ones, which rustdoc takes for Rust) are doctests, Python
/// blocks run in test_docs.py, shell blocks here, text is text.
const LANGS: &[&str] = &["", "rust", "python", "sh", "console", "text"];

struct Line {
    file: String,
    line: usize,
    block: usize,
    command: String,
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn docs() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    files.sort();
    files.insert(0, root().join("README.md"));
    files
}

/// The shell lines of `text` (file `name`), continuations joined; the
/// index of the block they are in counts every fenced block.
fn shell_lines(name: &str, text: &str, first_block: usize) -> Vec<Line> {
    let mut out = Vec::new();
    let mut block = None;
    let mut n = first_block;
    let mut pending: Option<(usize, String)> = None;
    for (i, raw) in text.lines().enumerate() {
        let trimmed = raw.trim_start();
        if let Some(info) = trimmed.strip_prefix("```") {
            if block.is_some() {
                block = None;
                continue;
            }
            n += 1;
            let lang = info.split([',', ' ']).next().unwrap_or("");
            let base = lang.strip_prefix("rust").map_or(lang, |_| "rust");
            assert!(
                LANGS.contains(&base),
                "{name}:{}: a ```{lang} block: tag it one of {LANGS:?}",
                i + 1
            );
            block = Some(lang.to_owned());
            continue;
        }
        let Some(lang) = &block else { continue };
        let line = match lang.as_str() {
            "sh" => trimmed,
            "console" => match trimmed.strip_prefix("$ ") {
                Some(l) => l,
                None => continue,
            },
            _ => continue,
        };
        let (start, mut command) =
            pending.take().unwrap_or((i + 1, String::new()));
        if line.trim().is_empty()
            || (command.is_empty() && line.starts_with('#'))
        {
            continue;
        }
        if let Some(head) = line.strip_suffix('\\') {
            command.push_str(head);
            pending = Some((start, command));
            continue;
        }
        command.push_str(line);
        out.push(Line {
            file: name.to_owned(),
            line: start,
            block: n,
            command,
        });
    }
    out
}

fn all_lines() -> Vec<Line> {
    let mut lines = Vec::new();
    for (i, path) in docs().iter().enumerate() {
        let name = path
            .strip_prefix(root())
            .unwrap_or(path)
            .display()
            .to_string();
        let text = std::fs::read_to_string(path).unwrap();
        lines.extend(shell_lines(&name, &text, i * 10_000));
    }
    lines
}

/// The status a line expects: a trailing comment starting `# exits N`
/// (`# exits 2: the outputs exist`), else 0.
fn expected_status(command: &str) -> i32 {
    command.rsplit_once("# exits ").map_or(0, |(_, n)| {
        let digits: String =
            n.chars().take_while(char::is_ascii_digit).collect();
        digits.parse().expect("# exits N")
    })
}

#[test]
fn every_shell_line_of_the_docs_runs_or_is_a_known_exception() {
    let lines = all_lines();
    assert!(
        lines
            .iter()
            .filter(|l| l.command.starts_with("feedstock "))
            .count()
            >= 5,
        "the docs' feedstock lines were not found"
    );
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_feedstock")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut dir: Option<(usize, tempfile::TempDir)> = None;
    let mut ran = 0;
    for l in &lines {
        if NOT_RUN.contains(&l.command.as_str()) {
            continue;
        }
        assert!(
            l.command.starts_with("feedstock "),
            "{}:{}: `{}` is neither a feedstock command nor one of the \
             known exceptions (NOT_RUN in tests/cli/docs.rs)",
            l.file,
            l.line,
            l.command
        );
        if dir.as_ref().is_none_or(|(b, _)| *b != l.block) {
            let (d, _) = fixture::digits_tfrecords();
            std::os::unix::fs::symlink(
                root().join("data"),
                d.path().join("data"),
            )
            .unwrap();
            dir = Some((l.block, d));
        }
        let cwd = dir.as_ref().unwrap().1.path();
        let out = Command::new("sh")
            .arg("-c")
            .arg(&l.command)
            .current_dir(cwd)
            .env("PATH", &path)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(expected_status(&l.command)),
            "{}:{}: `{}`\nstdout: {}\nstderr: {}",
            l.file,
            l.line,
            l.command,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        ran += 1;
    }
    assert!(ran >= 5, "only {ran} lines ran");
}

#[test]
fn every_known_exception_is_still_in_the_docs() {
    let lines = all_lines();
    for e in NOT_RUN {
        assert!(
            lines.iter().any(|l| l.command == *e),
            "NOT_RUN lists `{e}`, which no doc shows any more: remove it"
        );
    }
}
