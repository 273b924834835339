//! Record framing, compression and files: bytes in, records out.

pub mod fs;
