//! Record framing, compression and files: bytes in, records out.
//!
//! - [`tfrecord`]: TensorFlow's record format, byte for byte: a push
//!   [`Decoder`](tfrecord::Decoder) that every reader drives, a
//!   [`Reader`](tfrecord::Reader) over any [`std::io::Read`], a zero-copy
//!   [`BytesReader`](tfrecord::BytesReader) over a buffer already in
//!   memory, and a [`Writer`](tfrecord::Writer).
//! - [`compression`]: the closed set of stream compressions TensorFlow
//!   offers ([`Compression`]) and the strict decompressing reader that
//!   every file reader reuses.
//! - [`fs`]: the file-system layer the pipeline's readers open files
//!   through; [`default_fs`](fs::default_fs) takes paths and URLs.
//! - [`index`]: the offset of every record of a TFRecord file, for random
//!   access, exact sharding, global shuffling and exact resume; kept in a
//!   hidden sidecar file (`.NAME.feedstock-index`) or built in memory.
//! - `store` (feature `object-store`, on by default): S3, GCS, Azure and
//!   HTTP(S) objects behind the same seam.

pub mod compression;
pub mod fs;
pub(crate) mod glob;
pub mod index;
pub(crate) mod read_ahead;
#[cfg(feature = "object-store")]
pub mod store;
pub mod tfrecord;

pub use compression::Compression;
