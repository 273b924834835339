//! The CLI's integration tests, run as the built `feedstock` binary.
//!
//! One test binary with a module per subject, not one binary per file:
//! each integration-test binary links the whole feedstock library, and
//! linking fifteen of them cost most of the build of the tests. No test
//! here changes this process's environment, current directory or signal
//! handlers, so they can share one process.

#[path = "../../../feedstock/tests/seaweed_support/mod.rs"]
mod seaweed_support;
mod support;

mod bench;
mod cat_count;
mod convert;
mod demo;
mod docs;
mod exits;
mod index;
mod inspect;
mod limits;
mod messages;
mod names;
mod outputs;
mod repair;
mod resources;
mod store_cli;
mod verify;
