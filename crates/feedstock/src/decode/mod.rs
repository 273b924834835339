//! Decoders: records to tensors.
//!
//! Pure functions of their input: a record (a line, a fixed-length chunk,
//! a serialized Example) goes in, typed tensors come out. An error names
//! the record key and the column or feature it is about.

pub mod csv;
pub mod example;
pub mod image;
pub mod math;
mod number;
pub mod ops;
pub mod raw;
