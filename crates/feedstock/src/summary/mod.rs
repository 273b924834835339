//! TensorBoard summaries: queue fullness as event files of scalars.
//!
//! # Brief overview
//!
//! * [`Monitor`]: the queues and batching stages to watch; at any time
//!   [`Monitor::scalars`] gives their fullness and counters as tagged
//!   [`Scalar`]s, named as TensorFlow names its queue summaries
//!   (`batch/fraction_of_32_full`,
//!   `shuffle_batch/fraction_over_10000_of_384_full`).
//! * [`EventWriter`]: one TensorBoard event file
//!   (`events.out.tfevents.{secs}.{hostname}`): `Event` protos in
//!   TFRecord framing, the first one carrying `file_version =
//!   "brain.Event:2"`.
//! * [`SummaryWriter`]: a background thread writing a monitor's scalars
//!   to an event file at a chosen interval until its coordinator stops.
//!
//! ```
//! use std::time::Duration;
//! use feedstock::coord::{Coordinator, Pipeline};
//! use feedstock::input::batch;
//! use feedstock::summary::{Monitor, SummaryWriter};
//! use feedstock::{DType, Error, Tensor};
//!
//! let mut pipeline = Pipeline::new();
//! let mut n = 0i32;
//! let batches = batch(&mut pipeline, move || {
//!     n += 1;
//!     if n > 10 {
//!         return Err(Error::out_of_range("done"));
//!     }
//!     Ok(vec![Tensor::scalar(n).into()])
//! })
//! .dtypes([DType::I32])
//! .batch_size(4)
//! .build()?;
//!
//! let monitor = Monitor::new().watch_pipeline(&pipeline).watch_batches(&batches);
//! let dir = tempfile::tempdir()?;
//! let coord = Coordinator::new();
//! let mut threads = pipeline.start(&coord)?;
//! let writer = SummaryWriter::new(dir.path(), monitor.clone())
//!     .interval(Duration::from_millis(50))
//!     .start(&coord)?;
//! let path = writer.path().to_owned();
//! threads.push(writer.into_thread());
//! assert_eq!(batches.iter().count(), 2);
//! coord.request_stop();
//! coord.join(threads, Duration::from_secs(10))?;
//!
//! // The last snapshot is written at the stop: 2 examples held back.
//! let events = feedstock::summary::read_events(&path)?;
//! let last = events.last().unwrap();
//! let held = feedstock::summary::scalar(last, "batch/held_back");
//! assert_eq!(held, Some(2.0));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod event;
mod monitor;
mod writer;

pub use event::{read_events, scalar, EventWriter, FILE_VERSION};
pub use monitor::{Monitor, Scalar};
pub use writer::{SummaryThread, SummaryWriter};
