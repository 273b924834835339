//! The background thread that writes a monitor's scalars.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::coord::{Coordinator, ThreadHandle};
use crate::error::Result;

use super::event::EventWriter;
use super::monitor::Monitor;

/// Writes a [`Monitor`]'s scalars to a new event file in a log directory
/// every `interval`, on a background thread, until its coordinator stops;
/// then writes one last snapshot and closes the file. Steps count the
/// snapshots from 0 (there is no global training step here).
///
/// The thread ends only when a stop is requested: call
/// [`Coordinator::request_stop`] before joining it.
#[derive(Debug, Clone)]
pub struct SummaryWriter {
    /// Where the event file goes.
    logdir: PathBuf,
    /// What to write.
    monitor: Monitor,
    /// Time between snapshots.
    interval: Duration,
}

/// A started [`SummaryWriter`]: its event file and its thread.
#[derive(Debug)]
pub struct SummaryThread {
    path: PathBuf,
    thread: ThreadHandle,
}

impl SummaryThread {
    /// The event file being written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The thread, for [`Coordinator::join`].
    pub fn into_thread(self) -> ThreadHandle {
        self.thread
    }
}

impl SummaryWriter {
    /// A writer of `monitor`'s scalars into `logdir`, every 10 seconds
    /// unless [`SummaryWriter::interval`] says otherwise.
    pub fn new(logdir: impl Into<PathBuf>, monitor: Monitor) -> SummaryWriter {
        SummaryWriter {
            logdir: logdir.into(),
            monitor,
            interval: Duration::from_secs(10),
        }
    }

    /// The time between snapshots.
    pub fn interval(mut self, interval: Duration) -> SummaryWriter {
        self.interval = interval;
        self
    }

    /// Creates the event file and starts the thread, which writes a
    /// snapshot at once, then every interval, and a last one at the stop.
    ///
    /// # Errors
    /// Those of creating the log directory or event file, naming it; Unknown
    /// when the thread cannot start. Write errors met later end the thread
    /// with that error, which requests a stop on `coord`.
    pub fn start(&self, coord: &Coordinator) -> Result<SummaryThread> {
        let mut events = EventWriter::create(&self.logdir)?;
        let path = events.path().to_owned();
        let monitor = self.monitor.clone();
        let interval = self.interval;
        let stop = coord.clone();
        let thread = coord.spawn("summary-writer", move || {
            let mut step = 0i64;
            loop {
                let stopping = stop.should_stop();
                events.write_scalars(step, &monitor.scalars())?;
                events.flush()?;
                step += 1;
                if stopping {
                    return events.finish();
                }
                stop.wait_for_stop(Some(interval));
            }
        })?;
        Ok(SummaryThread { path, thread })
    }
}
