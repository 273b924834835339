//! Examples per second through `shuffle_batch(batch_size = 128,
//! num_threads = 2)`: from preloaded tensors, and from MNIST-like
//! TFRecord files on disk (read, `parse_single_example` or, 64 records
//! at a time, `parse_example`, normalize: the seed's `input_pipeline`),
//! and the same through the front door (`Dataset`, a vectorised map,
//! a shuffle buffer). Baseline in the same run: the same reading and
//! parsing in one thread with no queue.
//!
//! `cargo bench -p feedstock --bench pipeline -- --warm-up-time 1
//! --measurement-time 3`

include!("pipeline_support/cases.rs");
