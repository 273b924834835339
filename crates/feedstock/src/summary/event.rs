//! TensorBoard event files.

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use prost::Message;

use crate::error::{Error, Result};
use crate::io::tfrecord::{ReaderBuilder, Writer, WriterBuilder};
use crate::proto::event::What;
use crate::proto::summary::value::Value as SummaryValue;
use crate::proto::{summary, Event, Summary};

use super::monitor::Scalar;

/// The version string of the first event of every event file.
pub const FILE_VERSION: &str = "brain.Event:2";

/// Writes one TensorBoard event file: [`Event`] protos in TFRecord
/// framing, readable by TensorBoard's `EventAccumulator` (and by
/// [`read_events`]).
///
/// The file is `events.out.tfevents.{secs}.{hostname}` in the log
/// directory (created if missing), where `secs` is the Unix time of
/// creation, as TensorFlow names it; if that file already exists (two
/// writers in one second), `.1`, `.2`, ... is appended rather than
/// overwriting it. The first event carries `file_version =
/// "brain.Event:2"`.
pub struct EventWriter {
    /// The TFRecord writer over the file.
    records: Writer<BufWriter<File>>,
    /// The file's path.
    path: PathBuf,
}

impl std::fmt::Debug for EventWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventWriter")
            .field("path", &self.path)
            .finish()
    }
}

/// Seconds since the Unix epoch.
fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// The host's name, for the event file name. Read from the kernel (Linux)
/// or the environment rather than through a crate or `libc`: it only
/// labels a file, so a best effort with a `localhost` fallback is enough.
fn hostname() -> String {
    let from_kernel = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_owned());
    let name = from_kernel
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .or_else(|| std::env::var("COMPUTERNAME").ok())
        .unwrap_or_else(|| "localhost".to_owned());
    name.chars()
        .map(|c| if c == '/' || c == '\\' { '_' } else { c })
        .collect()
}

impl EventWriter {
    /// Creates a new event file in `logdir` and writes the version event.
    ///
    /// # Errors
    /// Those of creating the directory or the file, or writing to it,
    /// naming the path.
    pub fn create(logdir: impl AsRef<Path>) -> Result<EventWriter> {
        let logdir = logdir.as_ref();
        std::fs::create_dir_all(logdir)
            .map_err(|e| Error::io(e).with_file(logdir.to_string_lossy()))?;
        let wall_time = now();
        let base = format!(
            "events.out.tfevents.{:010}.{}",
            wall_time as u64,
            hostname()
        );
        let mut attempt = 0u32;
        let (file, path) = loop {
            let name = if attempt == 0 {
                base.clone()
            } else {
                format!("{base}.{attempt}")
            };
            let path = logdir.join(name);
            match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(f) => break (f, path),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    attempt += 1;
                }
                Err(e) => {
                    return Err(Error::io(e).with_file(path.to_string_lossy()))
                }
            }
        };
        let records = WriterBuilder::new().from_writer(BufWriter::new(file));
        let mut w = EventWriter { records, path };
        w.write_event(&Event {
            wall_time,
            step: 0,
            what: Some(What::FileVersion(FILE_VERSION.to_owned())),
        })?;
        w.flush()?;
        Ok(w)
    }

    /// The event file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one event.
    ///
    /// # Errors
    /// Write errors, naming the file.
    pub fn write_event(&mut self, event: &Event) -> Result<()> {
        self.records
            .write_record(&event.encode_to_vec())
            .map_err(|e| self.named(e))
    }

    /// Appends one event holding `scalars` as simple values at `step`.
    ///
    /// # Errors
    /// Write errors, naming the file.
    pub fn write_scalars(
        &mut self,
        step: i64,
        scalars: &[Scalar],
    ) -> Result<()> {
        let value = scalars
            .iter()
            .map(|s| summary::Value {
                tag: s.tag.clone(),
                value: Some(SummaryValue::SimpleValue(s.value as f32)),
            })
            .collect();
        self.write_event(&Event {
            wall_time: now(),
            step,
            what: Some(What::Summary(Summary { value })),
        })
    }

    /// Flushes buffered events to the file, so that TensorBoard sees them.
    ///
    /// # Errors
    /// Write errors, naming the file.
    pub fn flush(&mut self) -> Result<()> {
        self.records.flush().map_err(|e| self.named(e))
    }

    /// Flushes and closes the file.
    ///
    /// # Errors
    /// Write errors, naming the file.
    pub fn finish(self) -> Result<()> {
        let name = self.path.to_string_lossy().into_owned();
        self.records
            .finish()
            .map(drop)
            .map_err(|e| with_file_once(e, &name))
    }

    fn named(&self, e: Error) -> Error {
        with_file_once(e, &self.path.to_string_lossy())
    }
}

fn with_file_once(e: Error, file: &str) -> Error {
    if e.file().is_some() {
        e
    } else {
        e.with_file(file)
    }
}

/// Reads every event of an event file, with feedstock's own TFRecord
/// reader.
///
/// # Errors
/// Those of opening and reading the file (DataLoss for a corrupt record);
/// DataLoss naming the file and offset for a record that is not an
/// `Event`.
pub fn read_events(path: impl AsRef<Path>) -> Result<Vec<Event>> {
    let path = path.as_ref();
    let name = path.to_string_lossy().into_owned();
    let mut reader = ReaderBuilder::new().file_name(&name).open(path)?;
    let mut events = Vec::new();
    while let Some(record) = reader.read_record()? {
        let event = Event::decode(&record.value[..]).map_err(|e| {
            Error::data_loss(format!("not an Event: {e}"))
                .with_file(&name)
                .with_offset(record.position.offset)
        })?;
        events.push(event);
    }
    Ok(events)
}

/// The simple value tagged `tag` in `event`, if it has one.
pub fn scalar(event: &Event, tag: &str) -> Option<f32> {
    let Some(What::Summary(s)) = &event.what else {
        return None;
    };
    s.value
        .iter()
        .find(|v| v.tag == tag)
        .and_then(|v| match v.value {
            Some(SummaryValue::SimpleValue(x)) => Some(x),
            _ => None,
        })
}
