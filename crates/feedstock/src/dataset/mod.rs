//! The engine and its front door: a [`Dataset`] reads records from a
//! [`Source`](source::Source), decodes, shuffles and batches them with
//! reader threads, and can stop at any moment and resume exactly.

mod checkpoint;
pub mod decode;
pub(crate) mod engine;
pub mod files;
mod gather;
mod order;
pub mod source;
pub mod stream;

pub use checkpoint::{Checkpoint, FORMAT_VERSION};
pub use engine::{Canceller, Order, DEFAULT_BLOCK_SIZE};
pub use files::{
    FixedLengthSource, FixedLengthSourceBuilder, TextLineSource,
    TextLineSourceBuilder, WholeFileSource,
};

mod front;
pub use front::{Dataset, IntoFiles, Loader, Opening, Shuffle};
