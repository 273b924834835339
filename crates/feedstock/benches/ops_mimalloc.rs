//! `benches/ops.rs` with mimalloc as the global allocator, to compare
//! allocators on the same workloads: run both binaries back to back.
//!
//! `cargo bench -p feedstock --bench ops --bench ops_mimalloc --
//! --warm-up-time 1 --measurement-time 2 cifar`

// Benchmarks are a binary of their own; lints for public library items do
// not apply.
#![allow(missing_docs)]

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

include!("ops_support/cases.rs");
