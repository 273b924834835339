//! `feedstock demo`: the whole system, end to end, on the shipped digits.
//!
//! The demo loads `digits.csv.gz`, splits it into training and held-out
//! digits, writes both as TFRecord files of `tf.train.Example`, and then
//! trains the same softmax-regression classifier the three ways of the
//! seed guide ([`methods`]): by feeding, by reading from files, and from
//! preloaded tensors. For each method it prints the training throughput,
//! the final test accuracy and how full the example queue was on average,
//! and writes the loss, accuracy and queue fullness as scalar summaries
//! under `OUT_DIR/runs/METHOD/`.

mod batching;
mod data;
mod eval;
mod methods;
mod model;

use std::fs::{self, File};
use std::io::{BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context};
use feedstock::{Error, Result};
use indicatif::{ProgressBar, ProgressStyle};

use data::Digits;
use eval::FileEvaluator;
use methods::Report;

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
    #[arg(long, default_value = "data")]
    pub(crate) data_dir: PathBuf,
    /// Directory to write the TFRecord files and summaries into.
    #[arg(long, default_value = "out/demo")]
    pub(crate) out_dir: PathBuf,
    /// Passes over the training digits, for each method.
    #[arg(long, default_value_t = 10, value_parser = positive)]
    pub(crate) epochs: usize,
    /// Examples per training step.
    #[arg(long, default_value_t = 32, value_parser = positive)]
    pub(crate) batch_size: usize,
    /// Threads filling each example queue.
    #[arg(long, default_value_t = 2, value_parser = positive)]
    pub(crate) threads: usize,
    /// Seed of the train/test split and of every shuffle.
    #[arg(long, default_value_t = 7)]
    pub(crate) seed: u64,
    /// SGD learning rate.
    #[arg(long, default_value_t = 0.5)]
    pub(crate) learning_rate: f32,
}

/// Parses a count that must be at least 1.
fn positive(s: &str) -> std::result::Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("must be at least 1".to_owned()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

/// Runs the demo: converts the digits, then trains and reports each
/// method in turn, one line each.
///
/// # Errors
///
/// Any error loading or converting the data, or of a training method.
/// The message is the library error's, which names the file (or the
/// method), so that `feedstock: {error}` on one line says it all.
pub(crate) fn run(config: &Config) -> anyhow::Result<()> {
    let csv = config.data_dir.join("digits.csv.gz");
    let digits = Digits::load(&csv)?;
    let (train, test) = digits.split(TEST_LEN, config.seed);
    println!(
        "digits: {} train, {} held out (seed {})",
        train.len(),
        test.len(),
        config.seed
    );
    fs::create_dir_all(&config.out_dir)
        .with_context(|| format!("creating {}", config.out_dir.display()))?;
    let train_files =
        utf8(train.write_shards(&config.out_dir, "train", TRAIN_SHARDS)?)?;
    let test_files =
        utf8(test.write_shards(&config.out_dir, "test", TEST_SHARDS)?)?;
    println!(
        "wrote {} train and {} held-out TFRecord files to {}",
        train_files.len(),
        test_files.len(),
        config.out_dir.display()
    );
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
    for (n, (name, method)) in methods.iter().enumerate() {
        let mut monitor = Monitor::create(config, name, show_progress)?;
        let report = method(config, &eval, &mut monitor)
            .map_err(|e| anyhow!("method {}, {name}: {e}", n + 1))?;
        monitor.finish()?;
        print_report(&report);
    }
    Ok(())
}

/// One way of training: config, evaluator, monitor in; report out.
type Method<'a> = &'a dyn Fn(
    &Config,
    &dyn eval::Evaluator,
    &mut Monitor,
) -> feedstock::Result<Report>;

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

fn print_report(r: &Report) {
    let fullness = match r.queue_fullness {
        Some(f) => format!("{:5.1}%", 100.0 * f),
        None => "     -".to_owned(),
    };
    println!(
        "{:<10} {:>12.0} examples/s   test accuracy {:.3}   \
         example queue fullness {fullness}",
        r.method,
        r.examples_per_sec(),
        r.test_accuracy,
    );
}

/// Progress display and scalar summaries of one method's run.
#[derive(Debug)]
pub(crate) struct Monitor {
    /// The method's name, shown in the progress bar.
    method: &'static str,
    /// Epochs of the run, shown in the progress bar.
    epochs: usize,
    /// False when stdout is not a terminal: bars are hidden.
    show_progress: bool,
    /// Where scalar summaries go.
    scalars: ScalarLog,
}

impl Monitor {
    /// A monitor writing under `OUT_DIR/runs/METHOD/`.
    ///
    /// # Errors
    ///
    /// When the directory or the log cannot be created.
    fn create(
        config: &Config,
        method: &'static str,
        show_progress: bool,
    ) -> Result<Monitor> {
        let dir = config.out_dir.join("runs").join(method);
        Ok(Monitor {
            method,
            epochs: config.epochs,
            show_progress,
            scalars: ScalarLog::create(&dir)?,
        })
    }

    /// A progress bar over the `len` examples of epoch `epoch` (0-based);
    /// hidden when stdout is not a terminal.
    pub(crate) fn epoch_bar(
        &self,
        method: &str,
        epoch: usize,
        len: u64,
    ) -> ProgressBar {
        if !self.show_progress {
            return ProgressBar::hidden();
        }
        let bar = ProgressBar::new(len);
        bar.set_style(
            ProgressStyle::with_template(
                "{prefix:<10} epoch {msg} [{bar:30}] {pos}/{len} \
                 {per_sec}",
            )
            .expect("a valid template")
            .progress_chars("=> "),
        );
        bar.set_prefix(method.to_owned());
        bar.set_message(format!("{}/{}", epoch + 1, self.epochs));
        debug_assert_eq!(method, self.method);
        bar
    }

    /// Records the scalar `tag` at `step`.
    ///
    /// # Errors
    ///
    /// When the summary cannot be written.
    pub(crate) fn scalar(
        &mut self,
        tag: &str,
        step: u64,
        value: f64,
    ) -> Result<()> {
        self.scalars.scalar(tag, step, value)
    }

    /// Flushes the summaries.
    fn finish(self) -> Result<()> {
        self.scalars.finish()
    }
}

/// The summary hook: scalar values by tag and step.
///
/// TensorBoard event files need the `summary` module (it comes with
/// batching); until it lands the values go to a tab-separated
/// `scalars.tsv` (`step`, `tag`, `value`) in the run's directory. Swapping
/// in `summary`'s event writer changes only this type.
#[derive(Debug)]
struct ScalarLog {
    /// The file, for error messages.
    path: PathBuf,
    /// The open log.
    out: BufWriter<File>,
}

impl ScalarLog {
    fn create(dir: &Path) -> Result<ScalarLog> {
        let name = dir.display().to_string();
        fs::create_dir_all(dir).map_err(|e| Error::io(e).with_file(&name))?;
        let path = dir.join("scalars.tsv");
        let file = File::create(&path)
            .map_err(|e| Error::io(e).with_file(path.display().to_string()))?;
        let mut log = ScalarLog {
            path,
            out: BufWriter::new(file),
        };
        log.write_line(format_args!("step\ttag\tvalue"))?;
        Ok(log)
    }

    fn scalar(&mut self, tag: &str, step: u64, value: f64) -> Result<()> {
        self.write_line(format_args!("{step}\t{tag}\t{value}"))
    }

    fn write_line(&mut self, line: std::fmt::Arguments<'_>) -> Result<()> {
        writeln!(self.out, "{line}").map_err(|e| self.error(e))
    }

    fn finish(mut self) -> Result<()> {
        self.out.flush().map_err(|e| self.error(e))
    }

    fn error(&self, e: std::io::Error) -> Error {
        Error::io(e).with_file(self.path.display().to_string())
    }
}
