//! The `feedstock` command: look at, check, convert and benchmark record
//! files, and run the demo.
//!
//! Each subcommand lives in its own module; this file only parses the
//! command line, dispatches, and turns an error into one line on stderr
//! and an exit status.
//!
//! # Exit status
//!
//! The same for every subcommand (see [`exit_code`]):
//!
//! - `0`: success (also when a reader of the output closed the pipe, as
//!   `feedstock cat f | head` does).
//! - `1`: the data is damaged: `verify` found problems, `repair`
//!   skipped damaged regions (its output is written), or another
//!   subcommand stopped at a corrupt or truncated record (an error of
//!   kind `DataLoss`); or a limit was hit (`ResourceExhausted`: a record
//!   or line beyond its limit, memory that ran out).
//! - `2`: usage or bad input: a malformed command line or a value out of
//!   its range, a missing or unreadable file, a directory, a character
//!   device or a loop of symbolic links where a file was expected, a bad
//!   column spec, an output that is an input (or standard output that is
//!   an input) or exists without `--force`, input that does not fit what
//!   was asked (a CSV line with the wrong number of fields or a malformed
//!   number, a compressed file read as text). A fixed-length file whose last record is cut short is
//!   damaged data (`1`), as the library's reader reports it.
//! - `3`: any other failure (an I/O error writing the output, a thread
//!   that cannot be started, an internal error).
//! - `130` / `143`: interrupted by SIGINT / SIGTERM while writing
//!   (`convert`, `repair`, `index`); every output is left as it was.

use std::io::{self, Write};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use feedstock::Kind;

mod args;
mod bench;
mod cat;
mod convert;
mod count;
mod demo;
mod files;
mod index;
mod inspect;
mod json;
mod payload;
mod repair;
mod signal;
mod stdio;
mod verify;

/// The exit statuses, as every `--help` states them.
const EXIT_STATUS: &str = "\
Exit status:
  0  success
  1  the data is damaged: verify found problems, repair skipped damaged
     regions (its output is still written), or a corrupt or truncated
     record stopped the command; or a limit was hit (a line or record
     too long, memory ran out)
  2  usage or bad input: a malformed command line or a value out of its
     range, a missing or unreadable file, a directory or character device
     where a file was expected, a bad column spec, an output that is an
     input (or standard output that is an input) or exists without
     --force, input that does not fit what was asked
  3  any other failure (an I/O error writing the output, a thread that
     cannot be started, an internal error)
  130, 143
     interrupted by SIGINT or SIGTERM while writing; outputs are left as
     they were
A closed output pipe (as in `feedstock cat f | head`) ends a command that
only prints quietly with status 0; repair, index and convert go on
writing their files without the report.";

/// Read, inspect, check, convert and benchmark TensorFlow record files.
#[derive(Debug, Parser)]
#[command(
    name = "feedstock",
    version,
    about,
    after_help = EXIT_STATUS
)]
struct Cli {
    /// What to do.
    #[command(subcommand)]
    command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
enum Command {
    /// Print every record as one JSON object per line.
    #[command(after_help = EXIT_STATUS)]
    Cat(cat::Args),
    /// Count the records of each file, verifying every CRC.
    #[command(after_help = EXIT_STATUS)]
    Count(count::Args),
    /// Check every record of every file and report each damaged one.
    #[command(long_about = verify::LONG_ABOUT, after_help = EXIT_STATUS)]
    Verify(verify::Args),
    /// Write every intact record of a damaged TFRecord file to a new
    /// file, skipping the damaged regions.
    #[command(long_about = repair::LONG_ABOUT, after_help = EXIT_STATUS)]
    Repair(repair::Args),
    /// Write (or check) the record index of each TFRecord file.
    #[command(long_about = index::LONG_ABOUT, after_help = EXIT_STATUS)]
    Index(index::Args),
    /// Infer the feature schema of Example files, with record statistics.
    #[command(long_about = inspect::LONG_ABOUT, after_help = EXIT_STATUS)]
    Inspect(inspect::Args),
    /// Convert CSV or fixed-length records to TFRecord files.
    #[command(subcommand, after_help = EXIT_STATUS)]
    Convert(convert::Command),
    /// Measure the throughput of a pipeline over files, stage by stage.
    #[command(long_about = bench::LONG_ABOUT, after_help = EXIT_STATUS)]
    Bench(bench::Args),
    /// Convert the shipped digits to TFRecords and train a classifier on
    /// them three ways: feeding, reading from files, preloaded.
    #[command(after_help = EXIT_STATUS)]
    Demo(demo::Config),
}

/// mimalloc for every Rust allocation of the command: the pipeline
/// allocates and frees a tensor per record and stage from several threads,
/// and glibc's malloc spent about a quarter of the seed's MNIST pipeline
/// in `_int_malloc`, `_int_free` and `malloc_consolidate`. Measured on
/// that pipeline (`crates/feedstock-py/examples/mnist_plan`, 600 000
/// examples, the two builds alternated in one run): 2.52–2.71 s with
/// glibc, 1.91–1.98 s with mimalloc (1.34× faster).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = stdio::check().and_then(|()| match cli.command {
        Command::Cat(args) => cat::run(&args),
        Command::Count(args) => count::run(&args),
        Command::Verify(args) => verify::run(&args),
        Command::Repair(args) => repair::run(&args),
        Command::Index(args) => index::run(&args),
        Command::Inspect(args) => inspect::run(&args),
        Command::Convert(cmd) => convert::run(&cmd),
        Command::Bench(args) => bench::run(&args),
        Command::Demo(config) => demo::run(&config),
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let code = exit_code(&e);
            if code != 0 {
                // Not eprintln!, which panics when stderr is a closed
                // pipe: the status says it all then.
                let _ = writeln!(
                    io::stderr(),
                    "feedstock: {}",
                    args::cli_words(&e.to_string())
                );
            }
            ExitCode::from(code)
        }
    }
}

/// The exit status for an error (see the [crate docs](crate)).
fn exit_code(e: &anyhow::Error) -> u8 {
    // A closed pipe is how a reader says it has seen enough.
    if is_broken_pipe(e) {
        return 0;
    }
    if let Some(sig) = signal::received() {
        return u8::try_from(128 + sig).unwrap_or(1);
    }
    for cause in e.chain() {
        if let Some(fe) = cause.downcast_ref::<feedstock::Error>() {
            return match fe.kind() {
                Kind::DataLoss | Kind::ResourceExhausted => 1,
                Kind::InvalidArgument
                | Kind::NotFound
                | Kind::PermissionDenied
                | Kind::FailedPrecondition => 2,
                _ => 3,
            };
        }
        if let Some(io) = cause.downcast_ref::<io::Error>() {
            return match io.kind() {
                io::ErrorKind::NotFound | io::ErrorKind::PermissionDenied => 2,
                _ => 3,
            };
        }
    }
    3
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<io::Error>()
            .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
            || c.downcast_ref::<feedstock::Error>().is_some_and(|e| {
                std::error::Error::source(e)
                    .and_then(|s| s.downcast_ref::<io::Error>())
                    .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
            })
    })
}
