//! Producers and batching: the stages a caller composes into a pipeline.
//!
//! These are TensorFlow's classic stages, with its semantics. A pipeline
//! of queues and queue-runner threads cannot be checkpointed exactly:
//! records in flight between its threads are not tracked, and its
//! shuffle depends on which thread enqueues first. Where a job must stop
//! and resume without repeating or skipping a record, or shuffle
//! globally, or shard by record, build it with the front door,
//! [`Dataset`](crate::dataset::Dataset), whose checkpoint continues
//! exactly.

pub mod batch;
pub mod feed;
mod limit;
pub mod producer;
pub mod shard;
mod source;
pub mod stream;

pub use batch::{
    batch, batch_join, maybe_batch, maybe_batch_join, maybe_shuffle_batch,
    maybe_shuffle_batch_join, shuffle_batch, shuffle_batch_join, BatchBuilder,
    Fifo, KeepInput, Shuffle,
};
pub use limit::{limit_epochs, LimitEpochs};
pub use producer::{
    input_producer, match_filenames_once, match_filenames_once_in,
    range_input_producer, slice_input_producer, string_input_producer,
    InputProducerBuilder, Producer, ProducerState, RangeInputProducerBuilder,
    SliceInputProducerBuilder, SliceProducer, StringInputProducerBuilder,
};
pub use shard::{Remainder, Shard, ShardedReader};
pub use source::{Batch, BatchSource, Batches};
pub use stream::{Checkpoint, Order, RecordStream, StreamRecord};
