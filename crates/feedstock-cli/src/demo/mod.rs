//! `feedstock demo`: the whole system, end to end, on the shipped digits.
//!
//! The demo loads `digits.csv.gz`, splits it into training and held-out
//! digits, writes both as TFRecord files of `tf.train.Example`, and then
//! trains the same softmax-regression classifier the three ways of the
//! seed guide ([`methods`]): by feeding, by reading from files, and from
//! preloaded tensors. For each method it prints the training throughput,
//! the final test accuracy and how full the example queue was on average,
//! and writes the loss, accuracy and queue fullness as TensorBoard event
//! files under `OUT_DIR/runs/METHOD/`.

mod data;
mod eval;
mod methods;
mod model;
mod runlog;

use std::fs;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use feedstock::{Error, Result};

use data::Digits;
use eval::{Evaluator, FileEvaluator};
use methods::Report;
use runlog::RunLog;

/// Digits held out for evaluation (of 1797 in the shipped file).
const TEST_LEN: usize = 300;
/// TFRecord files the training digits are written to.
const TRAIN_SHARDS: usize = 4;
/// TFRecord files the held-out digits are written to.
const TEST_SHARDS: usize = 2;

/// The flags of `feedstock demo`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct Config {
    /// Directory holding digits.csv.gz.
    #[arg(long, default_value = "data", value_parser = crate::args::Utf8Path)]
    pub(crate) data_dir: PathBuf,
    /// Directory to write the TFRecord files and summaries into.
    #[arg(long, default_value = "out/demo", value_parser = crate::args::Utf8Path)]
    pub(crate) out_dir: PathBuf,
    /// Passes over the training digits, for each method (1 to 10000).
    #[arg(long, default_value_t = 10, value_parser = |s: &str| positive(s, 10_000))]
    pub(crate) epochs: usize,
    /// Examples per training step (1 to 100000).
    #[arg(long, default_value_t = 32, value_parser = |s: &str| positive(s, 100_000))]
    pub(crate) batch_size: usize,
    /// Threads filling each example queue (1 to 256).
    #[arg(long, default_value_t = 2, value_parser = |s: &str| positive(s, crate::args::MAX_THREADS as usize))]
    pub(crate) threads: usize,
    /// Seed of the train/test split and of every shuffle.
    #[arg(long, default_value_t = 7)]
    pub(crate) seed: u64,
    /// SGD learning rate: a finite number above 0, at most 1000.
    #[arg(long, default_value_t = 0.5, value_parser = learning_rate)]
    pub(crate) learning_rate: f32,
}

/// Parses a count from 1 to `max`.
fn positive(s: &str, max: usize) -> std::result::Result<usize, String> {
    crate::args::in_range(s, 1, max)
}

/// Parses a learning rate: finite, above 0, at most 1000 (NaN, infinite,
/// zero or negative rates would train nothing or diverge at once).
fn learning_rate(s: &str) -> std::result::Result<f32, String> {
    let r: f32 = s.trim().parse().map_err(|e| format!("{e}"))?;
    if r.is_finite() && r > 0.0 && r <= 1000.0 {
        Ok(r)
    } else {
        Err("must be a number above 0 and at most 1000".to_owned())
    }
}

/// Runs the demo: converts the digits, then trains and reports each
/// method in turn, one line each.
///
/// # Errors
///
/// Any error loading or converting the data, or of a training method
/// (its message then starts with the method). It stays a
/// [`feedstock::Error`] naming the file, so that `feedstock: {error}` on
/// one line says it all and the exit status follows its kind.
pub(crate) fn run(config: &Config) -> anyhow::Result<()> {
    let csv = config.data_dir.join("digits.csv.gz");
    let digits = Digits::load(&csv)?;
    let (train, test) = digits.split(TEST_LEN, config.seed);
    // Written, not printed: a closed pipe is an error to return, not a
    // panic.
    let mut out = std::io::stdout();
    writeln!(
        out,
        "digits: {} train, {} held out (seed {})",
        train.len(),
        test.len(),
        config.seed
    )?;
    fs::create_dir_all(&config.out_dir).map_err(|e| {
        Error::io(e).with_file(config.out_dir.to_string_lossy())
    })?;
    let train_files =
        utf8(train.write_shards(&config.out_dir, "train", TRAIN_SHARDS)?)?;
    let test_files =
        utf8(test.write_shards(&config.out_dir, "test", TEST_SHARDS)?)?;
    writeln!(
        out,
        "wrote {} train and {} held-out TFRecord files to {}",
        train_files.len(),
        test_files.len(),
        config.out_dir.display()
    )?;
    let show_progress = std::io::stdout().is_terminal();
    let eval = FileEvaluator {
        files: test_files,
        examples: test.len(),
        threads: config.threads,
    };
    let methods: [(&'static str, Method<'_>); 3] = [
        ("feeding", &|c, eval, m| {
            methods::feeding(c, &train, eval, m)
        }),
        ("files", &|c, eval, m| {
            methods::reading_files(c, &train_files, train.len(), eval, m)
        }),
        ("preloaded", &|c, eval, m| {
            methods::preloaded(c, &train, eval, m)
        }),
    ];
    let runs = config.out_dir.join("runs");
    for (n, (name, method)) in methods.iter().enumerate() {
        let mut log =
            RunLog::create(&runs, name, config.epochs, show_progress)?;
        let report = method(config, &eval, &mut log).map_err(|e| {
            let msg = format!("method {}, {name}: {}", n + 1, e.message());
            e.with_message(msg)
        })?;
        log.finish()?;
        print_report(&mut out, &report)?;
    }
    Ok(())
}

/// One way of training: config, evaluator and run log in; report out.
type Method<'a> =
    &'a dyn Fn(&Config, &dyn Evaluator, &mut RunLog) -> Result<Report>;

/// The paths as strings, which is how a filename queue holds them.
fn utf8(paths: Vec<PathBuf>) -> Result<Vec<String>> {
    paths
        .into_iter()
        .map(|p| {
            p.into_os_string().into_string().map_err(|p| {
                Error::invalid_argument(format!(
                    "{} is not valid UTF-8",
                    Path::new(&p).display()
                ))
            })
        })
        .collect()
}

/// One line: `METHOD  N examples/s  test accuracy A  example queue ...`.
fn print_report(out: &mut impl Write, r: &Report) -> std::io::Result<()> {
    let queue = match &r.queue_fullness {
        Some(f) => format!(
            "   example queue {:5.1}% full on average ({})",
            100.0 * f.mean,
            f.tag
        ),
        None => String::new(),
    };
    writeln!(
        out,
        "{:<10} {:>9.0} examples/s   test accuracy {:.3}{queue}",
        r.method,
        r.examples_per_sec(),
        r.test_accuracy,
    )
}
