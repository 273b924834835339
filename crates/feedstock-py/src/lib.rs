//! Python bindings of feedstock: the extension module `feedstock._native`.
//!
//! The Python package `feedstock` (under `python/feedstock/`) is the
//! public face; this crate is the thin native layer beneath it:
//!
//! - [`errors`]: feedstock's [`feedstock::Error`] raised as the Python
//!   exception class TensorFlow uses for its kind
//!   (`feedstock.errors.OutOfRangeError`, ...), carrying file, key,
//!   offset and field.
//! - [`arrays`]: tensors handed to numpy without copying (the array owns
//!   the tensor's buffer); strings as object arrays of `bytes`.
//! - [`example`]: `tf.train.Example` encoded and decoded with the
//!   library's `proto` module, byte for byte as TensorFlow does.
//! - [`tfrecord`]: the TFRecord writer and record iterator.
//! - [`dataset`]: the engine's `Dataset`, which `feedstock.Pipeline` runs
//!   on: batches, checkpoints and resume.
//! - [`records`]: record ranges of TFRecord files parsed into columns,
//!   for other schedulers' read tasks (`feedstock.ray`).
//!
//! The library crate never depends on Python; everything Python-specific
//! lives here and in the pure-Python package.

/// mimalloc for every Rust allocation of the extension module (and of the examples and tests linking it): the pipeline
/// allocates and frees a tensor per record and stage from several threads,
/// and glibc's malloc spent about a quarter of the seed's MNIST pipeline
/// in `_int_malloc`, `_int_free` and `malloc_consolidate`. Measured on
/// that pipeline (`crates/feedstock-py/examples/mnist_plan`, 600 000
/// examples, the two builds alternated in one run): 2.52–2.71 s with
/// glibc, 1.91–1.98 s with mimalloc (1.34× faster).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use pyo3::prelude::*;

pub mod arrays;
pub mod dataset;
pub mod errors;
pub mod example;
pub mod graph;
mod py_func;
pub mod records;
pub mod session;
pub mod tfrecord;

/// The extension module `feedstock._native`.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // Whether this extension was built without optimisation (about ten
    // times slower): the package warns at import, so that a debug build
    // left in a venv by the test command is never mistaken for the speed.
    m.add("DEBUG_BUILD", cfg!(debug_assertions))?;
    errors::register(m)?;
    arrays::register(m)?;
    dataset::register(m)?;
    example::register(m)?;
    tfrecord::register(m)?;
    graph::register(m)?;
    session::register(m)?;
    py_func::register(m)?;
    records::register(m)?;
    Ok(())
}
