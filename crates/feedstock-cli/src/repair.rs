//! `feedstock repair IN OUT`: write every intact record of a damaged
//! TFRecord file to a new file, with a report of what was skipped.
//!
//! The input is walked exactly as `verify` walks it (the library's
//! decoder with resynchronisation, see [`crate::verify::walk`]); each
//! intact record is written through the library's atomic output
//! ([`OutputFile`](feedstock::io::fs::OutputFile)), committed only when
//! the whole input has been read. OUT may not be the input and an
//! existing OUT is replaced only with `--force`, as for `convert`.

use std::io::{self, BufRead, BufReader, Write};
use std::path::PathBuf;

use feedstock::io::fs::{default_fs, OutputOptions, STDIO};
use feedstock::io::index::{IndexCheck, RecordIndex};
use feedstock::io::tfrecord::{WriterBuilder, DEFAULT_MAX_RECORD_LEN};
use feedstock::io::Compression;
use feedstock::{Error, Kind};

use crate::args::{compression_of, name_of, open_input, parse_compression};
use crate::verify::{describe, walk, Event};

/// `feedstock repair --help`.
pub(crate) const LONG_ABOUT: &str = "\
Write every intact record of a damaged TFRecord file to OUT, skipping the
damaged regions exactly as `feedstock verify` reports them and as a reader
with the skip policy (CorruptRecords::Skip) skips them: after a damaged
record, reading goes on at the next offset where a header's length CRC and
the data CRC after it both check, and so does the whole frame after that
one (or the file ends there). A broken compressed input ends where it
breaks (nothing after it can be read).

A damaged record whose payload holds two or more whole TFRecord frames in
a row (a payload that is itself part of a TFRecord file) can still pass
its frames off as records. With --index, reading goes on only where IN's
sidecar index (`feedstock index IN`, written before the damage) says a
record starts: exact. The index must be of a file of IN's size and
compression (its content is not checked: IN is damaged).

Prints one line per skipped region (file, offset, length, cause) as it is
found, then a summary: records kept, regions and bytes skipped (to stderr
when OUT is `-`).

OUT is written to a temporary file and renamed into place only when the
whole input has been read; a failure leaves it as it was. An existing OUT
is replaced only with --force, and OUT may not be the input. The output
compression is detected from OUT's extension unless --compression says
otherwise; the input's from IN's unless --input-compression says.

Exit status: 0 when the input was sound (OUT holds all its records), 1 when
regions were skipped (OUT holds every intact record), 2 for usage errors
(OUT is IN, OUT exists without --force, IN cannot be opened, IN looks
compressed but is read as plain), 3 when
reading the input or writing OUT fails (OUT is left as it was).";

/// Arguments of `feedstock repair`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The damaged TFRecord file (a path, a URL, or `-` for standard
    /// input).
    #[arg(value_parser = crate::args::Utf8Path)]
    input: PathBuf,
    /// The repaired file (`-` for standard output).
    #[arg(value_parser = crate::args::Utf8Path)]
    out: PathBuf,
    /// The input's compression (none, gzip, zlib); by default it is
    /// detected from the input's extension.
    #[arg(long, value_parser = parse_compression)]
    input_compression: Option<Compression>,
    /// The output compression (none, gzip, zlib); by default it is
    /// detected from the output's extension.
    #[arg(long, value_parser = parse_compression)]
    compression: Option<Compression>,
    /// Records longer than this many bytes are taken as damage (their
    /// length field is most likely corrupt); 1 to 2^62.
    #[arg(long, default_value_t = DEFAULT_MAX_RECORD_LEN, value_parser = |s: &str| crate::args::in_range(s, 1, 1u64 << 62))]
    max_record_len: u64,
    /// Resynchronise only where IN's sidecar index (written by
    /// `feedstock index` before the damage) says a record starts.
    #[arg(long)]
    index: bool,
    /// Replace OUT if it exists.
    #[arg(long)]
    force: bool,
}

/// Repairs one file.
///
/// # Errors
///
/// DataLoss (exit 1) after writing OUT when regions were skipped;
/// InvalidArgument or AlreadyExists-like usage errors (exit 2) for OUT;
/// the errors of opening IN, reading it (other than damage) and writing
/// OUT, after which OUT is left as it was.
pub(crate) fn run(args: &Args) -> anyhow::Result<()> {
    crate::signal::install()?;
    crate::args::refuse_stdout_as_input(std::slice::from_ref(&args.input))?;
    let in_name = name_of(&args.input);
    let out_name = args.out.to_str().ok_or_else(|| {
        Error::invalid_argument("the output path is not valid UTF-8")
            .with_file(args.out.to_string_lossy())
    })?;
    let mut options = OutputOptions::new();
    options.force(args.force).input(&in_name);
    let mut builder = WriterBuilder::new();
    if let Some(c) = args.compression {
        builder.compression(c);
    }
    let compression = compression_of(&args.input, args.input_compression);
    let record_starts = if args.index {
        if in_name == STDIO {
            return Err(Error::invalid_argument(
                "--index reads the sidecar index of a file: standard input \
                 has none",
            )
            .into());
        }
        let fs = default_fs();
        let index = RecordIndex::load(
            &*fs,
            &in_name,
            Some(compression),
            IndexCheck::Size,
        )?;
        Some(index.record_starts())
    } else {
        None
    };
    let mut writer = builder.create_output(out_name, &options)?;
    let mut src = BufReader::new(open_input(&args.input)?);
    if compression == Compression::None {
        // A compressed input read as plain would be one damaged region:
        // refuse it rather than write an empty OUT.
        let start = src
            .fill_buf()
            .map_err(|e| Error::io(e).with_file(&in_name))?;
        if let Some(c) = Compression::sniff(start) {
            return Err(Error::invalid_argument(format!(
                "this looks like a {c} file: read it with \
                 --input-compression {c}"
            ))
            .with_file(&in_name)
            .into());
        }
    }
    let to_stdout = out_name == STDIO;
    // Once the reader of the report has closed it, the repair goes on
    // without one: OUT is what matters.
    let mut report_closed = false;
    let mut report_line = |line: String| -> io::Result<()> {
        if report_closed {
            return Ok(());
        }
        let written = if to_stdout {
            // The records go to stdout: the report goes to stderr.
            writeln!(io::stderr(), "{line}")
        } else {
            writeln!(io::stdout().lock(), "{line}")
        };
        match written {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                report_closed = true;
                Ok(())
            }
            other => other,
        }
    };
    let mut write_error: Option<Error> = None;
    let mut unreadable: Option<Error> = None;
    let report = walk(
        src,
        compression,
        args.max_record_len,
        &in_name,
        record_starts,
        &mut |event| {
            match event {
                Event::Record(data) => {
                    if write_error.is_none() {
                        if let Err(e) = crate::signal::check()
                            .and_then(|()| writer.write_record(data))
                        {
                            write_error = Some(e);
                        }
                    }
                }
                Event::Skip { skip, to_end } => {
                    if skip.unreadable_rest
                        && skip.cause.kind() != Kind::DataLoss
                    {
                        // Not damage: the input could not be read.
                        unreadable = Some(skip.cause.clone());
                    }
                    report_line(describe(&skip, to_end))?;
                }
            }
            Ok(())
        },
    )?;
    if let Some(e) = write_error.or(unreadable) {
        // The writer is dropped uncommitted: OUT stays as it was.
        return Err(e.into());
    }
    crate::signal::check()?;
    writer.commit()?;
    report_line(format!(
        "{}: {} records kept ({} bytes), {} region{} skipped ({} bytes)",
        out_name,
        report.good,
        report.good_bytes,
        report.problems,
        if report.problems == 1 { "" } else { "s" },
        report.skipped_bytes,
    ))?;
    if report.problems > 0 {
        return Err(Error::data_loss(format!(
            "{in_name} is damaged: skipped {} region{} ({} bytes); the {} \
             intact records are in {out_name}",
            report.problems,
            if report.problems == 1 { "" } else { "s" },
            report.skipped_bytes,
            report.good,
        ))
        .into());
    }
    Ok(())
}
