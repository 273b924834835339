//! Evaluation: scoring a model on the held-out digits.
//!
//! [`FileEvaluator`] is the seed guide's "Multiple input pipelines" in one
//! process: each evaluation runs a pipeline of its own over the held-out
//! TFRecord files (one epoch, in file order) with its own coordinator,
//! while the training pipeline's threads keep running beside it.
//! [`MemoryEvaluator`] scores the same digits held in memory; tests use
//! it to check the file pipeline.

use std::sync::Arc;
use std::time::Duration;

use feedstock::coord::{Coordinator, Pipeline};
use feedstock::decode::example::parse_single_example;
use feedstock::input::{batch, string_input_producer, BatchSource};
use feedstock::reader::{Reader, TfRecordReader};
use feedstock::{Error, Result};

#[cfg(test)]
use super::data::Digits;
use super::data::{example_spec, feature_spec, IMAGE, LABEL};
use super::model::SoftmaxRegression;

/// How long a pipeline's threads get to end after a stop request.
pub(crate) const JOIN_GRACE: Duration = Duration::from_secs(10);

/// Examples per evaluation batch.
const EVAL_BATCH: usize = 100;

/// Scores a model on the held-out data.
pub(crate) trait Evaluator {
    /// The fraction of held-out examples the model classifies correctly.
    ///
    /// # Errors
    ///
    /// Those of reading or decoding the held-out data.
    fn accuracy(&self, model: &SoftmaxRegression) -> Result<f64>;
}

/// Evaluation over held-out digits already in memory (the reference the
/// tests check [`FileEvaluator`] against).
#[cfg(test)]
#[derive(Debug)]
pub(crate) struct MemoryEvaluator<'a> {
    /// The held-out digits.
    pub(crate) test: &'a Digits,
}

#[cfg(test)]
impl Evaluator for MemoryEvaluator<'_> {
    fn accuracy(&self, model: &SoftmaxRegression) -> Result<f64> {
        let correct = model.count_correct(
            &self.test.images_tensor(),
            &self.test.labels_tensor(),
        )?;
        Ok(correct as f64 / self.test.len().max(1) as f64)
    }
}

/// Evaluation by an input pipeline over the held-out TFRecord files:
/// `string_input_producer` (one epoch, no shuffle) → TFRecord reader →
/// `parse_single_example` → batch.
#[derive(Debug, Clone)]
pub(crate) struct FileEvaluator {
    /// The held-out files.
    pub(crate) files: Vec<String>,
    /// How many examples they hold: every evaluation must see exactly
    /// these, or it fails instead of scoring a part of the data.
    pub(crate) examples: usize,
    /// Reader threads.
    pub(crate) threads: usize,
}

impl Evaluator for FileEvaluator {
    fn accuracy(&self, model: &SoftmaxRegression) -> Result<f64> {
        let mut pipeline = Pipeline::new();
        let files = string_input_producer(&mut pipeline, self.files.clone())
            .num_epochs(1)
            .shuffle(false)
            .name("eval_filenames")
            .build()?;
        let reader = Reader::new(TfRecordReader::new());
        let spec = Arc::new(feature_spec());
        let batches = batch(&mut pipeline, move || {
            let record = reader.read(&files)?;
            let parsed =
                parse_single_example(&record.value, &spec, &record.key)?;
            Ok(parsed.into_values())
        })
        .spec(example_spec())
        .batch_size(EVAL_BATCH)
        .num_threads(self.threads.max(1))
        .capacity(2 * EVAL_BATCH)
        .allow_smaller_final_batch(true)
        .name("eval_batch")
        .build()?;
        let coord = Coordinator::new();
        batches.attach(&coord);
        let threads = pipeline.start(&coord)?;
        let scored = score(model, &batches);
        coord.request_stop();
        coord.join(threads, JOIN_GRACE)?;
        let (correct, seen) = scored?;
        if seen != self.examples {
            return Err(Error::data_loss(format!(
                "the evaluation read {seen} examples from {} files that \
                 hold {}",
                self.files.len(),
                self.examples
            )));
        }
        Ok(correct as f64 / seen.max(1) as f64)
    }
}

/// `(correct, seen)` over every batch until the end of input.
fn score(
    model: &SoftmaxRegression,
    batches: &BatchSource,
) -> Result<(usize, usize)> {
    let (mut correct, mut seen) = (0, 0);
    for batch in batches.iter() {
        let batch = batch?;
        correct +=
            model.count_correct(batch.tensor(IMAGE)?, batch.tensor(LABEL)?)?;
        seen += batch.len();
    }
    Ok((correct, seen))
}
