//! Producers and batching: the stages a caller composes into a pipeline.

pub mod feed;
