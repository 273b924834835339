//! Decoders: records to tensors (CSV, raw bytes, Examples, images).
