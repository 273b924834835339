//! `feedstock count`: records per file and in total, every CRC verified.

use std::io::{self, Write};
use std::path::PathBuf;

use feedstock::io::Compression;

use crate::args::{open_records, parse_compression};

/// Arguments of `feedstock count`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The compression of every file; by default it is detected from each
    /// file's extension (.gz is gzip, .zz and .zlib are zlib).
    #[arg(long, value_parser = parse_compression)]
    compression: Option<Compression>,
    /// The TFRecord files (paths, or URLs: s3://, gs://, az://,
    /// http(s)://, file://; a URL with a wildcard lists the objects) (`-` for standard input).
    #[arg(required = true, value_parser = crate::args::Utf8Path)]
    files: Vec<PathBuf>,
}

/// Prints `N<TAB>FILE` for each file, then `N<TAB>total`, like `wc -l`.
///
/// A corrupt file stops the count with its error (naming file and offset).
pub(crate) fn run(args: &Args) -> anyhow::Result<()> {
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let mut total = 0u64;
    for path in &crate::files::inputs(&args.files)? {
        let mut reader = open_records(path, args.compression)?;
        while reader.read_record()?.is_some() {}
        let n = reader.next_position().index;
        total += n;
        writeln!(out, "{n}\t{}", path.display())?;
    }
    writeln!(out, "{total}\ttotal")?;
    out.flush()?;
    Ok(())
}
