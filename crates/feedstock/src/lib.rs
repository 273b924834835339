//! feedstock: TensorFlow's classic input pipeline, in Rust.
//!
//! Record readers, decoders, filename and example queues, queue-runner
//! threads, a coordinator, shuffling and batching — the system described
//! in TensorFlow's "Reading data" guide — with no TensorFlow installed,
//! and without its sharp edges: no silent hangs, no lost records, and
//! errors that say which file and which record.
//!
//! The crate is layered, bottom to top; a module uses only those below it:
//!
//! 1. [`tensor`], [`error`]: data and errors; no threads, no files.
//! 2. [`io`] (record framing, compression, files), [`proto`]: bytes in,
//!    records out; no threads.
//! 3. [`decode`]: records to tensors; pure functions of their input.
//! 4. [`queue`], [`coord`]: threads and blocking; they know no formats.
//! 5. [`reader`], [`input`] (producers and batching), [`summary`].
//!
//! TensorFlow 1's graph and session (a whole pipeline described as a
//! graph of those parts and run by a session, what the Python package's
//! `feedstock.compat.v1` binds) is the `feedstock-tf1` crate, which
//! builds on this one. [`fork`] is shared with it: what started threads
//! fails at once in a forked child.

pub mod checkpoint;
pub mod coord;
pub mod dataset;
pub mod decode;
pub mod error;
pub mod fork;
pub mod input;
pub mod io;
pub mod proto;
pub mod queue;
pub mod reader;
mod spin;
pub mod summary;
pub mod tensor;
pub mod transform;

pub use error::{Error, Kind, Result};
pub use tensor::{DType, Data, Shape, SparseTensor, Tensor, Value};

/// The README's and docs' code blocks, compiled and run as doctests
/// (`cargo test -p feedstock --doc`), so that none can rot; the Python
/// and shell blocks are run by `crates/feedstock-py/tests/test_docs.py`
/// and the CLI's `docs` test.
#[cfg(doctest)]
mod docs {
    #[doc = include_str!("../../../README.md")]
    struct Readme;
    #[doc = include_str!("../../../docs/README.md")]
    struct DocIndex;
    #[doc = include_str!("../../../docs/guide.md")]
    struct DocGuide;
    #[doc = include_str!("../../../docs/python.md")]
    struct DocPython;
    #[doc = include_str!("../../../docs/cli.md")]
    struct DocCli;
    #[doc = include_str!("../../../docs/resume.md")]
    struct DocResume;
    #[doc = include_str!("../../../docs/global-shuffle.md")]
    struct DocGlobalShuffle;
    #[doc = include_str!("../../../docs/many-hosts.md")]
    struct DocManyHosts;
    #[doc = include_str!("../../../docs/buckets.md")]
    struct DocBuckets;
    #[doc = include_str!("../../../docs/corrupt-records.md")]
    struct DocCorruptRecords;
    #[doc = include_str!("../../../docs/differences.md")]
    struct DocDifferences;
    #[doc = include_str!("../../../docs/performance.md")]
    struct DocPerformance;
}
