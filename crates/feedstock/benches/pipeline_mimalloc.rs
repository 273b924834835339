//! `benches/pipeline.rs` with mimalloc as the global allocator (as the
//! `feedstock` command and the Python extension use): the same
//! pipelines, without glibc's habit of handing large freed buffers back
//! to the kernel and faulting them in again at the next batch.
//!
//! `cargo bench -p feedstock --bench pipeline --bench pipeline_mimalloc
//! -- tfrecord`

// Benchmarks are a binary of their own; lints for public library items do
// not apply.
#![allow(missing_docs)]

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

include!("pipeline_support/cases.rs");
