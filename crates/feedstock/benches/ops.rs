//! The image ops on CIFAR-10 sized data, a batch of 1024 images and one
//! image at a time, against a baseline in the same run: the same result
//! built by first listing the source offset of every output element and
//! then gathering through that list (what the ops did before they copied
//! strided runs directly).
//!
//! `cargo bench -p feedstock --bench ops -- --warm-up-time 1
//! --measurement-time 3`

// Benchmarks are a binary of their own; lints for public library items do
// not apply.
#![allow(missing_docs)]

include!("ops_support/cases.rs");
