//! Decoders: records to tensors.
//!
//! Pure functions of their input: a record (a line, a fixed-length chunk,
//! a serialized Example) goes in, typed tensors come out. An error names
//! the record key and the column or feature it is about.
//!
//! Every decoder takes its input the same way: one record as `&Bytes`, a
//! batch as `impl Into<`[`Records`]`>` (a `&[Bytes]`, optionally with a
//! key per record). `Bytes` rather than `&[u8]` because the CSV and
//! Example decoders return strings that share the record's buffer: a
//! borrowed slice would force them to copy.

mod bmp;
pub mod csv;
pub mod example;
pub mod fixed_image;
mod gif;
pub mod image;
mod jpeg;
mod number;
pub mod raw;
mod records;

// For the TF1 crate's StringToNumber and StringSplit ops (TensorFlow's
// error words); the engine's own is `raw::string_to_number`.
#[doc(hidden)]
pub use number::{string_split, string_to_number};
pub use records::Records;
