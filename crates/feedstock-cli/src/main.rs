//! The `feedstock` command: look at and check record files, and run the
//! demo.
//!
//! Each subcommand lives in its own module; this file only parses the
//! command line, dispatches, and turns an error into one line on stderr
//! and a non-zero exit status.

use std::io;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cat;
mod count;
mod demo;
mod json;
mod payload;

/// Read, inspect and check TensorFlow record files.
#[derive(Debug, Parser)]
#[command(name = "feedstock", version, about)]
struct Cli {
    /// What to do.
    #[command(subcommand)]
    command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
enum Command {
    /// Print every record as one JSON object per line.
    Cat(cat::Args),
    /// Count the records of each file, verifying every CRC.
    Count(count::Args),
    /// Convert the shipped digits to TFRecords and train a classifier on
    /// them three ways: feeding, reading from files, preloaded.
    Demo(demo::Config),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Cat(args) => cat::run(&args),
        Command::Count(args) => count::run(&args),
        Command::Demo(config) => demo::run(&config),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // A closed pipe (`feedstock cat f | head`) is how a reader says it
        // has seen enough, not a failure.
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("feedstock: {e}");
            ExitCode::FAILURE
        }
    }
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<io::Error>()
            .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
    })
}
