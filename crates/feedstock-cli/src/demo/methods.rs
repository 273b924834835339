//! The three ways in: training the same model by feeding, by reading from
//! files and from preloaded tensors.
//!
//! Each method trains a fresh [`SoftmaxRegression`] for the configured
//! epochs, evaluates it on the held-out data at the end of every epoch
//! (the seed guide's "Multiple input pipelines": the evaluation runs in
//! the same process, beside the training input), and returns a
//! [`Report`].

use std::sync::Arc;
use std::time::{Duration, Instant};

use feedstock::coord::StageStats;
use feedstock::coord::{Coordinator, Pipeline};
use feedstock::decode::example::parse_single_example;
use feedstock::input::feed::{Feed, Inputs};
use feedstock::input::{
    batch, shuffle_batch, slice_input_producer, string_input_producer,
    BatchSource,
};
use feedstock::queue::PartialShape;
use feedstock::reader::{Reader, TfRecordReader};
use feedstock::summary::Monitor;
use feedstock::{DType, Error, Result, Value};
use indicatif::ProgressBar;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::data::{
    example_spec, feature_spec, Digits, CLASSES, FEATURES, IMAGE, LABEL,
};
use super::eval::{Evaluator, JOIN_GRACE};
use super::model::SoftmaxRegression;
use super::runlog::RunLog;
use super::Config;

/// Examples the shuffling queue of method 2 keeps back, so that a batch
/// mixes examples from all over the training files (TensorFlow's
/// `min_after_dequeue`; a third of the 1497 training digits).
const MIN_AFTER_DEQUEUE: usize = 500;

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
    /// How full the example queue was; `None` when the method has no
    /// example queue (feeding).
    pub(crate) queue_fullness: Option<Fullness>,
}

impl Report {
    /// Training throughput.
    pub(crate) fn examples_per_sec(&self) -> f64 {
        self.examples as f64 / self.train_time.as_secs_f64().max(1e-9)
    }
}

/// The mean of the example queue's fullness summary, sampled before each
/// step.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Fullness {
    /// The summary's TensorBoard tag, TensorFlow's name for it: the
    /// fraction of capacity for `batch`, the fraction of the room above
    /// `min_after_dequeue` for `shuffle_batch` (above 0 means a batch is
    /// ready without waiting: the seed's "enough reading threads").
    pub(crate) tag: String,
    /// The mean, from 0 to 1.
    pub(crate) mean: f64,
}

/// The summary [`Fullness`] averages, and its tag.
fn fullness(stats: &StageStats) -> (String, f64) {
    let capacity = stats.queue.capacity;
    match (stats.queue.min_after_dequeue, stats.fraction_over_min()) {
        (Some(min), Some(f)) => {
            let room = capacity.saturating_sub(min);
            let tag = format!("fraction_over_{min}_of_{room}_full");
            (format!("{}/{tag}", stats.name), f)
        }
        _ => {
            let tag = format!("fraction_of_{capacity}_full");
            (format!("{}/{tag}", stats.name), stats.fraction_full())
        }
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
    log: &mut RunLog,
) -> Result<Report> {
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
        let bar = log.epoch_bar(epoch, train.len() as u64);
        order.shuffle(&mut rng);
        for chunk in order.chunks(batch_size) {
            let batch = train.select(chunk);
            let feed = Feed::new(&inputs)
                .set(IMAGE, batch.images_tensor())?
                .set(LABEL, batch.labels_tensor())?;
            let loss = feed_step(&mut model, &feed, config.learning_rate)?;
            examples += chunk.len() as u64;
            step += 1;
            log.step(step, loss)?;
            bar.inc(chunk.len() as u64);
        }
        train_time += start.elapsed();
        bar.finish_and_clear();
        accuracy = eval.accuracy(&model)?;
        log.test_accuracy(step, accuracy)?;
    }
    Ok(Report {
        method: "feeding",
        examples,
        train_time,
        test_accuracy: accuracy,
        queue_fullness: None,
    })
}

/// Method 2, reading from files: `string_input_producer` over the
/// training files (`epochs` epochs, shuffled) → one TFRecord reader shared
/// by `threads` threads → `parse_single_example` → `shuffle_batch`, until
/// the end of input (OutOfRange).
///
/// # Errors
///
/// The first error of a pipeline thread (a file that cannot be read, a
/// record that does not parse, naming the file and record), of a step
/// or of the evaluation.
pub(crate) fn reading_files(
    config: &Config,
    train_files: &[String],
    train_len: usize,
    eval: &dyn Evaluator,
    log: &mut RunLog,
) -> Result<Report> {
    let mut pipeline = Pipeline::new();
    let files = string_input_producer(&mut pipeline, train_files.to_vec())
        .num_epochs(config.epochs as u64)
        .shuffle(true)
        .seed(config.seed)
        .name("train_filenames")
        .build()?;
    let reader = Reader::new(TfRecordReader::new());
    let spec = Arc::new(feature_spec());
    let batch_size = config.batch_size.max(1);
    let threads = config.threads.max(1);
    let batches = shuffle_batch(&mut pipeline, move || {
        let record = reader.read(&files)?;
        let parsed = parse_single_example(&record.value, &spec, &record.key)?;
        Ok(parsed.into_values())
    })
    .spec(example_spec())
    .batch_size(batch_size)
    .num_threads(threads)
    .capacity(MIN_AFTER_DEQUEUE + (threads + 1) * batch_size)
    .min_after_dequeue(MIN_AFTER_DEQUEUE)
    .seed(config.seed)
    .allow_smaller_final_batch(true)
    .name("shuffle_batch")
    .build()?;
    let run = QueueRun {
        method: "files",
        train_len,
        batches,
    };
    run.train(config, pipeline, eval, log)
}

/// Method 3, preloaded: the training images and labels held once in
/// memory as two tensors → `slice_input_producer` (`epochs` epochs,
/// shuffled across each epoch) → `batch` filled by `threads` threads. The
/// producer already shuffles, so the batching does not (the seed guide's
/// advice). Each call of the batching closure takes a whole batch of rows
/// (`dequeue_up_to`) and hands it over with `enqueue_many`: one hand-off
/// per batch instead of one per row.
///
/// # Errors
///
/// The first error of a pipeline thread, of a step or of the evaluation.
pub(crate) fn preloaded(
    config: &Config,
    train: &Digits,
    eval: &dyn Evaluator,
    log: &mut RunLog,
) -> Result<Report> {
    let mut pipeline = Pipeline::new();
    let rows = slice_input_producer(
        &mut pipeline,
        vec![train.images_tensor(), train.labels_tensor()],
    )
    .num_epochs(config.epochs as u64)
    .shuffle(true)
    .seed(config.seed)
    .name("train_rows")
    // Room for a few batches of row indices, so that each call below
    // finds a whole batch's worth waiting.
    .capacity(4 * config.batch_size.max(1))
    .build()?;
    let batch_size = config.batch_size.max(1);
    let threads = config.threads.max(1);
    let batches = batch(&mut pipeline, move || {
        let rows = rows.dequeue_up_to(batch_size)?;
        Ok(rows.into_iter().map(Value::from).collect())
    })
    .spec(example_spec())
    .enqueue_many(true)
    .batch_size(batch_size)
    .num_threads(threads)
    .capacity((threads + 1) * batch_size)
    .allow_smaller_final_batch(true)
    .name("batch")
    .build()?;
    let run = QueueRun {
        method: "preloaded",
        train_len: train.len(),
        batches,
    };
    run.train(config, pipeline, eval, log)
}

/// A training run whose batches come from a batching stage.
#[derive(Debug)]
struct QueueRun {
    /// The method's name as printed.
    method: &'static str,
    /// Examples per epoch.
    train_len: usize,
    /// The batches.
    batches: BatchSource,
}

impl QueueRun {
    /// Starts `pipeline`, trains until the end of input (evaluating after
    /// every `train_len` examples), then stops and joins the pipeline's
    /// threads.
    ///
    /// # Errors
    ///
    /// The first error of a pipeline thread, else of the training loop;
    /// DataLoss when the input ended before `epochs × train_len` examples.
    fn train(
        &self,
        config: &Config,
        mut pipeline: Pipeline,
        eval: &dyn Evaluator,
        log: &mut RunLog,
    ) -> Result<Report> {
        log.watch(
            Monitor::new()
                .watch_pipeline(&pipeline)
                .watch_batches(&self.batches),
        );
        let coord = Coordinator::new();
        // An error upstream (a producer, the reader) then ends the batches
        // with that error rather than looking like the end of input.
        self.batches.attach(&coord);
        let threads = pipeline.start(&coord)?;
        let outcome = self.train_loop(config, eval, log);
        coord.request_stop();
        let joined = coord.join(threads, JOIN_GRACE);
        let report = outcome?;
        joined?;
        let expected = (config.epochs * self.train_len) as u64;
        if report.examples != expected {
            return Err(Error::data_loss(format!(
                "{}: trained on {} examples, {} epochs of {} hold {expected}",
                self.method, report.examples, config.epochs, self.train_len
            )));
        }
        Ok(report)
    }

    fn train_loop(
        &self,
        config: &Config,
        eval: &dyn Evaluator,
        log: &mut RunLog,
    ) -> Result<Report> {
        let epoch_len = self.train_len as u64;
        let mut model = SoftmaxRegression::new(FEATURES, CLASSES);
        let mut epoch = 0;
        let mut in_epoch = 0u64;
        let mut examples = 0u64;
        let mut step = 0u64;
        let (tag, _) = fullness(&self.batches.stats());
        let mut fullness_sum = 0.0;
        let mut accuracy = 0.0;
        let mut train_time = Duration::ZERO;
        let mut bar = log.epoch_bar(epoch, epoch_len);
        let mut start = Instant::now();
        for batch in self.batches.iter() {
            // Sampled after the wait, as the step starts: how much the
            // readers got ahead of training.
            fullness_sum += fullness(&self.batches.stats()).1;
            let batch = batch?;
            let n = batch.len() as u64;
            let loss = model.train_step(
                batch.tensor(IMAGE)?,
                batch.tensor(LABEL)?,
                config.learning_rate,
            )?;
            step += 1;
            examples += n;
            in_epoch += n;
            bar.inc(n);
            log.step(step, loss)?;
            // The examples flow without a break between epochs (the
            // shuffling queue even mixes neighbouring ones): an epoch ends
            // when its number of examples has been trained on.
            while in_epoch >= epoch_len && epoch < config.epochs {
                train_time += start.elapsed();
                bar.finish_and_clear();
                accuracy = eval.accuracy(&model)?;
                log.test_accuracy(step, accuracy)?;
                epoch += 1;
                in_epoch -= epoch_len;
                bar = if epoch < config.epochs {
                    log.epoch_bar(epoch, epoch_len)
                } else {
                    ProgressBar::hidden()
                };
                bar.inc(in_epoch);
                start = Instant::now();
            }
        }
        train_time += start.elapsed();
        bar.finish_and_clear();
        Ok(Report {
            method: self.method,
            examples,
            train_time,
            test_accuracy: accuracy,
            queue_fullness: Some(Fullness {
                tag,
                mean: fullness_sum / step.max(1) as f64,
            }),
        })
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use feedstock::summary::{read_events, scalar};
    use feedstock::{Kind, Tensor};

    use super::super::eval::{FileEvaluator, MemoryEvaluator};
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

    fn strings(paths: &[PathBuf]) -> Vec<String> {
        paths
            .iter()
            .map(|p| p.to_str().unwrap().to_owned())
            .collect()
    }

    /// The shipped digits split and written as shards into `dir`, with
    /// an evaluator over the held-out files.
    fn converted(
        dir: &Path,
        seed: u64,
    ) -> (Digits, Vec<String>, FileEvaluator) {
        let (train, test) = shipped().split(300, seed);
        let train_files =
            strings(&train.write_shards(dir, "train", 4).unwrap());
        let test_files = strings(&test.write_shards(dir, "test", 2).unwrap());
        let eval = FileEvaluator {
            files: test_files,
            examples: test.len(),
            threads: 2,
        };
        (train, train_files, eval)
    }

    fn log(dir: &Path, method: &'static str, epochs: usize) -> RunLog {
        RunLog::create(&dir.join("runs"), method, epochs, false).unwrap()
    }

    /// Runs `method` with a fresh log and returns its report and the
    /// test accuracies logged in its event file.
    fn run(
        dir: &Path,
        name: &'static str,
        epochs: usize,
        method: impl FnOnce(&mut RunLog) -> Result<Report>,
    ) -> (Report, Vec<f32>) {
        let mut log = log(dir, name, epochs);
        let path = log.path();
        let report = method(&mut log).unwrap();
        log.finish().unwrap();
        let accuracies = read_events(path)
            .unwrap()
            .iter()
            .filter_map(|e| scalar(e, "test_accuracy"))
            .collect();
        (report, accuracies)
    }

    #[test]
    fn feeding_learns_digits_to_ninety_percent() {
        let dir = tempfile::tempdir().unwrap();
        let config = config(dir.path(), 4);
        let (train, test) = shipped().split(300, config.seed);
        let eval = MemoryEvaluator { test: &test };
        let (report, accuracies) = run(dir.path(), "feeding", 4, |log| {
            feeding(&config, &train, &eval, log)
        });
        assert_eq!(report.examples, 4 * train.len() as u64);
        assert!(report.test_accuracy >= 0.90, "{report:?}");
        assert_eq!(report.queue_fullness, None);
        assert_eq!(accuracies.len(), 4, "one evaluation per epoch");
        assert_eq!(accuracies[3], report.test_accuracy as f32);
    }

    #[test]
    fn reading_files_trains_every_example_of_every_epoch_to_ninety_percent() {
        let dir = tempfile::tempdir().unwrap();
        let config = config(dir.path(), 3);
        let (train, files, eval) = converted(dir.path(), config.seed);
        let (report, accuracies) = run(dir.path(), "files", 3, |log| {
            reading_files(&config, &files, train.len(), &eval, log)
        });
        assert_eq!(report.examples, 3 * train.len() as u64);
        assert!(report.test_accuracy >= 0.90, "{report:?}");
        let fullness = report.queue_fullness.unwrap();
        assert_eq!(fullness.tag, "shuffle_batch/fraction_over_500_of_96_full");
        assert!((0.0..=1.0).contains(&fullness.mean), "{fullness:?}");
        assert_eq!(accuracies.len(), 3, "one evaluation per epoch");
    }

    #[test]
    fn preloaded_trains_every_example_of_every_epoch_to_ninety_percent() {
        let dir = tempfile::tempdir().unwrap();
        let config = config(dir.path(), 3);
        let (train, _, eval) = converted(dir.path(), config.seed);
        let (report, accuracies) = run(dir.path(), "preloaded", 3, |log| {
            preloaded(&config, &train, &eval, log)
        });
        assert_eq!(report.examples, 3 * train.len() as u64);
        assert!(report.test_accuracy >= 0.90, "{report:?}");
        let fullness = report.queue_fullness.unwrap();
        assert_eq!(fullness.tag, "batch/fraction_of_96_full");
        assert!((0.0..=1.0).contains(&fullness.mean), "{fullness:?}");
        assert_eq!(accuracies.len(), 3, "one evaluation per epoch");
    }

    #[test]
    fn the_queue_methods_summarize_their_queues_for_tensorboard() {
        let dir = tempfile::tempdir().unwrap();
        let config = config(dir.path(), 1);
        let (train, files, eval) = converted(dir.path(), config.seed);
        let mut log = log(dir.path(), "files", 1);
        let path = log.path();
        reading_files(&config, &files, train.len(), &eval, &mut log).unwrap();
        log.finish().unwrap();
        let events = read_events(path).unwrap();
        let first_step = &events[1];
        for tag in [
            "loss",
            "train_filenames/fraction_of_32_full",
            "shuffle_batch/fraction_over_500_of_96_full",
            "shuffle_batch/dequeued",
        ] {
            assert!(scalar(first_step, tag).is_some(), "{tag}");
        }
    }

    #[test]
    fn a_corrupt_training_file_fails_the_run_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let config = config(dir.path(), 2);
        let (train, files, eval) = converted(dir.path(), config.seed);
        // Flip a byte inside the first record's data: its CRC fails.
        let mut bytes = std::fs::read(&files[1]).unwrap();
        bytes[20] ^= 0xff;
        std::fs::write(&files[1], bytes).unwrap();
        let mut log = log(dir.path(), "files", 2);
        let err = reading_files(&config, &files, train.len(), &eval, &mut log)
            .unwrap_err();
        assert_eq!(err.kind(), Kind::DataLoss, "{err}");
        assert_eq!(err.file(), Some(files[1].as_str()), "{err}");
    }

    #[test]
    fn the_file_evaluator_agrees_with_the_held_out_digits_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        let (train, _, files) = converted(dir.path(), 5);
        let (_, test) = shipped().split(300, 5);
        let memory = MemoryEvaluator { test: &test };
        let mut model = SoftmaxRegression::new(FEATURES, CLASSES);
        let (images, labels) = (train.images_tensor(), train.labels_tensor());
        // An untrained model and a partly trained one: both scores agree.
        for _ in 0..2 {
            let from_files = files.accuracy(&model).unwrap();
            assert_eq!(from_files, memory.accuracy(&model).unwrap());
            model.train_step(&images, &labels, 0.5).unwrap();
        }
    }

    #[test]
    fn an_evaluation_that_reads_too_few_examples_is_data_loss() {
        let dir = tempfile::tempdir().unwrap();
        let (_, _, mut eval) = converted(dir.path(), 5);
        eval.files.pop();
        let model = SoftmaxRegression::new(FEATURES, CLASSES);
        let err = eval.accuracy(&model).unwrap_err();
        assert_eq!(err.kind(), Kind::DataLoss, "{err}");
        assert!(err.message().contains("hold 300"), "{err}");
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
