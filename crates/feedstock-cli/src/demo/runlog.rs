//! What one method's run shows and records: a progress bar per epoch and
//! TensorBoard scalars (loss, test accuracy, and the fullness of the
//! pipeline's queues as TensorFlow names it).

use std::path::Path;

use feedstock::summary::{EventWriter, Monitor, Scalar};
use feedstock::Result;
use indicatif::{ProgressBar, ProgressStyle};

/// Steps between two summaries of the loss and the queues (TensorBoard
/// needs a curve, not every step).
const SUMMARY_EVERY: u64 = 10;

/// Progress display and event file of one method's run.
#[derive(Debug)]
pub(crate) struct RunLog {
    /// The method's name, shown in the progress bar.
    method: &'static str,
    /// Epochs of the run, shown in the progress bar.
    epochs: usize,
    /// False when stdout is not a terminal: bars are hidden.
    show_progress: bool,
    /// The run's TensorBoard event file.
    events: EventWriter,
    /// The pipeline queues to report, if the method has any.
    queues: Option<Monitor>,
}

impl RunLog {
    /// A log writing an event file under `runs_dir/METHOD/`.
    ///
    /// # Errors
    ///
    /// When the directory or the event file cannot be created.
    pub(crate) fn create(
        runs_dir: &Path,
        method: &'static str,
        epochs: usize,
        show_progress: bool,
    ) -> Result<RunLog> {
        Ok(RunLog {
            method,
            epochs,
            show_progress,
            events: EventWriter::create(runs_dir.join(method))?,
            queues: None,
        })
    }

    /// The event file's path.
    #[cfg(test)]
    pub(crate) fn path(&self) -> std::path::PathBuf {
        self.events.path().to_owned()
    }

    /// Reports the fullness of `queues` with every step summary from now
    /// on.
    pub(crate) fn watch(&mut self, queues: Monitor) {
        self.queues = Some(queues);
    }

    /// A progress bar over the `len` examples of epoch `epoch` (0-based);
    /// hidden when stdout is not a terminal.
    pub(crate) fn epoch_bar(&self, epoch: usize, len: u64) -> ProgressBar {
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
        bar.set_prefix(self.method);
        bar.set_message(format!("{}/{}", epoch + 1, self.epochs));
        bar
    }

    /// Records the training step `step` (from 1) and its loss: every
    /// [`SUMMARY_EVERY`] steps, the loss and the watched queues'
    /// scalars go to the event file as one event.
    ///
    /// # Errors
    ///
    /// When the event cannot be written.
    pub(crate) fn step(&mut self, step: u64, loss: f32) -> Result<()> {
        if step % SUMMARY_EVERY != 1 {
            return Ok(());
        }
        let mut scalars = vec![Scalar {
            tag: "loss".to_owned(),
            value: f64::from(loss),
        }];
        if let Some(queues) = &self.queues {
            scalars.extend(queues.scalars());
        }
        self.events.write_scalars(step as i64, &scalars)
    }

    /// Records the held-out accuracy after `step` steps.
    ///
    /// # Errors
    ///
    /// When the event cannot be written.
    pub(crate) fn test_accuracy(
        &mut self,
        step: u64,
        accuracy: f64,
    ) -> Result<()> {
        let scalar = Scalar {
            tag: "test_accuracy".to_owned(),
            value: accuracy,
        };
        self.events.write_scalars(step as i64, &[scalar])?;
        // An evaluation is rare and worth seeing in TensorBoard at once.
        self.events.flush()
    }

    /// Flushes and closes the event file.
    ///
    /// # Errors
    ///
    /// When the file cannot be written.
    pub(crate) fn finish(self) -> Result<()> {
        self.events.finish()
    }
}

#[cfg(test)]
mod tests {
    use feedstock::summary::{read_events, scalar};

    use super::*;

    #[test]
    fn steps_are_summarized_every_tenth_step_and_accuracy_every_time() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = RunLog::create(dir.path(), "m", 2, false).unwrap();
        for step in 1..=25 {
            log.step(step, step as f32).unwrap();
        }
        log.test_accuracy(25, 0.5).unwrap();
        let path = log.path();
        log.finish().unwrap();
        assert!(path.starts_with(dir.path().join("m")));
        let events = read_events(&path).unwrap();
        // The version event, steps 1, 11 and 21, then the accuracy.
        let steps: Vec<i64> = events.iter().map(|e| e.step).collect();
        assert_eq!(steps, [0, 1, 11, 21, 25]);
        assert_eq!(scalar(&events[2], "loss"), Some(11.0));
        assert_eq!(scalar(&events[4], "test_accuracy"), Some(0.5));
    }
}
