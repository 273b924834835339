//! The three ways in: training the same model by feeding, by reading from
//! files and from preloaded tensors.
//!
//! Each method trains a fresh [`SoftmaxRegression`] for the configured
//! epochs, evaluates it on the held-out data at the end of every epoch
//! (the seed guide's "Multiple input pipelines": the evaluation runs in
//! the same process, beside the training input), and returns a
//! [`Report`].

use std::time::{Duration, Instant};

use feedstock::input::feed::{Feed, Inputs};
use feedstock::queue::PartialShape;
use feedstock::{DType, Result};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::data::{Digits, CLASSES, FEATURES, IMAGE, LABEL};
use super::model::SoftmaxRegression;
use super::{Config, Monitor};

/// What one method measured.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Report {
    /// The method's name as printed.
    pub(crate) method: &'static str,
    /// Training examples consumed, over all epochs.
    pub(crate) examples: u64,
    /// Time spent in the training loop, evaluation excluded.
    pub(crate) train_time: Duration,
    /// Accuracy on the held-out digits after the last epoch.
    pub(crate) test_accuracy: f64,
    /// Mean fraction of capacity the example queue held, sampled at each
    /// step; `None` when the method has no example queue (feeding).
    pub(crate) queue_fullness: Option<f64>,
}

impl Report {
    /// Training throughput.
    pub(crate) fn examples_per_sec(&self) -> f64 {
        self.examples as f64 / self.train_time.as_secs_f64().max(1e-9)
    }
}

/// Scores a model on the held-out data.
pub(crate) trait Evaluator {
    /// The fraction of held-out examples the model classifies correctly.
    fn accuracy(&self, model: &SoftmaxRegression) -> Result<f64>;
}

/// Evaluation over held-out digits already in memory.
#[derive(Debug)]
pub(crate) struct MemoryEvaluator<'a> {
    /// The held-out digits.
    pub(crate) test: &'a Digits,
}

impl Evaluator for MemoryEvaluator<'_> {
    fn accuracy(&self, model: &SoftmaxRegression) -> Result<f64> {
        let correct = model.count_correct(
            &self.test.images_tensor(),
            &self.test.labels_tensor(),
        )?;
        Ok(correct as f64 / self.test.len().max(1) as f64)
    }
}

/// The inputs a training step reads, declared once: the Feeding method's
/// placeholders.
pub(crate) fn step_inputs() -> Inputs {
    let mut inputs = Inputs::new();
    inputs
        .declare(IMAGE, DType::F32, PartialShape::new([None, Some(FEATURES)]))
        .and_then(|i| i.declare(LABEL, DType::I64, PartialShape::new([None])))
        .expect("two distinct, non-empty names");
    inputs
}

/// One training step that takes its batch from a feed, as a
/// `placeholder`-driven graph would: an input that was not fed is an
/// error naming it.
///
/// # Errors
///
/// `FailedPrecondition` when `image` or `label` was not fed; the model's
/// errors otherwise.
pub(crate) fn feed_step(
    model: &mut SoftmaxRegression,
    feed: &Feed<'_>,
    learning_rate: f32,
) -> Result<f32> {
    let images = feed.get(IMAGE)?;
    let labels = feed.get(LABEL)?;
    model.train_step(images, labels, learning_rate)
}

/// Method 1, feeding: the caller's code shuffles the training digits in
/// memory each epoch, builds each batch and feeds it to the step.
///
/// # Errors
///
/// The first error of a step or of the evaluation.
pub(crate) fn feeding(
    config: &Config,
    train: &Digits,
    eval: &dyn Evaluator,
    monitor: &mut Monitor,
) -> Result<Report> {
    const METHOD: &str = "feeding";
    let inputs = step_inputs();
    let mut model = SoftmaxRegression::new(FEATURES, CLASSES);
    let mut rng = ChaCha8Rng::seed_from_u64(config.seed);
    let mut order: Vec<usize> = (0..train.len()).collect();
    let batch_size = config.batch_size.max(1);
    let mut train_time = Duration::ZERO;
    let mut examples = 0u64;
    let mut step = 0u64;
    let mut accuracy = 0.0;
    for epoch in 0..config.epochs {
        let start = Instant::now();
        let bar = monitor.epoch_bar(METHOD, epoch, train.len() as u64);
        order.shuffle(&mut rng);
        for chunk in order.chunks(batch_size) {
            let batch = train.select(chunk);
            let feed = Feed::new(&inputs)
                .set(IMAGE, batch.images_tensor())?
                .set(LABEL, batch.labels_tensor())?;
            let loss = feed_step(&mut model, &feed, config.learning_rate)?;
            examples += chunk.len() as u64;
            step += 1;
            monitor.scalar("loss", step, f64::from(loss))?;
            bar.inc(chunk.len() as u64);
        }
        train_time += start.elapsed();
        bar.finish_and_clear();
        accuracy = eval.accuracy(&model)?;
        monitor.scalar("test_accuracy", step, accuracy)?;
    }
    Ok(Report {
        method: METHOD,
        examples,
        train_time,
        test_accuracy: accuracy,
        queue_fullness: None,
    })
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use feedstock::{Kind, Tensor};

    use super::*;

    fn shipped() -> Digits {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../data/digits.csv.gz");
        Digits::load(&path).unwrap()
    }

    fn config(out_dir: &Path, epochs: usize) -> Config {
        Config {
            data_dir: PathBuf::from("unused"),
            out_dir: out_dir.to_owned(),
            epochs,
            batch_size: 32,
            threads: 2,
            seed: 3,
            learning_rate: 0.5,
        }
    }

    #[test]
    fn feeding_learns_digits_to_ninety_percent() {
        let dir = tempfile::tempdir().unwrap();
        let config = config(dir.path(), 4);
        let (train, test) = shipped().split(300, config.seed);
        let mut monitor = Monitor::create(&config, "feeding", false).unwrap();
        let eval = MemoryEvaluator { test: &test };
        let report = feeding(&config, &train, &eval, &mut monitor).unwrap();
        monitor.finish().unwrap();
        assert_eq!(report.examples, 4 * train.len() as u64);
        assert!(report.test_accuracy >= 0.90, "{report:?}");
        assert_eq!(report.queue_fullness, None);
        let log = std::fs::read_to_string(
            dir.path().join("runs/feeding/scalars.tsv"),
        )
        .unwrap();
        let accuracies = log
            .lines()
            .filter(|l| l.split('\t').nth(1) == Some("test_accuracy"))
            .count();
        assert_eq!(accuracies, 4, "one evaluation per epoch");
    }

    #[test]
    fn a_step_whose_label_was_not_fed_fails_naming_it() {
        let inputs = step_inputs();
        let images = Tensor::new([1, FEATURES], vec![0f32; FEATURES]);
        let feed = Feed::new(&inputs).set("image", images.unwrap()).unwrap();
        let mut model = SoftmaxRegression::new(FEATURES, CLASSES);
        let err = feed_step(&mut model, &feed, 0.1).unwrap_err();
        assert_eq!(err.kind(), Kind::FailedPrecondition);
        assert_eq!(err.field(), Some("label"));
    }
}
