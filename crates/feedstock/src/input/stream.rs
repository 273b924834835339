//! Records of TFRecord files with an exact resume: a thin adapter of the
//! [`dataset`](crate::dataset) engine that hands out records undecoded.

pub use crate::dataset::engine::{
    RecordStream, RecordStreamBuilder, StreamCanceller, StreamRecord,
    DEFAULT_BLOCK_SIZE, DEFAULT_MAX_OPEN_FILES,
};
pub use crate::dataset::{Checkpoint, Order, FORMAT_VERSION};
