//! `feedstock index`: write the record index of each TFRecord file beside
//! it (the hidden file `.NAME.feedstock-index`), or check the existing
//! ones.

use std::io::{self, Write};
use std::path::PathBuf;

use anyhow::Context;
use feedstock::io::fs::{default_fs, OutputOptions};
use feedstock::io::index::{sidecar_path, IndexCheck, RecordIndex};
use feedstock::io::Compression;

use crate::args::parse_compression;

/// `feedstock index --help`.
pub(crate) const LONG_ABOUT: &str = "\
Write the record index of each TFRecord file beside it, as the hidden file
.NAME.feedstock-index (dir/train-0 gets dir/.train-0.feedstock-index, which
a glob such as dir/train-* or dir/* does not match): the offset and length
of every record (found by one scan that checks every record's framing and
CRCs) and a fingerprint of the file (its size and CRC32C checksums).
Readers use the index for random access, global shuffling and exact
resume; one that no longer matches its file (the file changed) is refused,
never used.

Each index is written atomically; an existing one is replaced only with
--force. With --check, nothing is written: each existing index is checked
against its file (the whole file is read) and the command fails on the
first stale or missing one.

Prints one line per file: the record count, the file and its index.";

/// Arguments of `feedstock index`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The compression of every file; by default it is detected from each
    /// file's extension (.gz is gzip, .zz and .zlib are zlib).
    #[arg(long, value_parser = parse_compression)]
    compression: Option<Compression>,
    /// Replace existing index files.
    #[arg(long, conflicts_with = "check")]
    force: bool,
    /// Check the existing indexes instead of writing them.
    #[arg(long)]
    check: bool,
    /// The TFRecord files (paths or URLs, as for `count`).
    #[arg(required = true, value_parser = crate::args::Utf8Path)]
    files: Vec<PathBuf>,
}

/// Indexes (or checks) each file in turn.
pub(crate) fn run(args: &Args) -> anyhow::Result<()> {
    crate::signal::install()?;
    let fs = default_fs();
    // A signal stops the scan at its next read; the index being written
    // is then dropped, which removes its temporary file.
    let fs = crate::signal::Interruptible(&*fs);
    let stdout = io::stdout();
    let mut out = stdout.lock();
    // Once the reader of the report has closed it, indexing goes on
    // without one: the index files are what matter.
    let mut report_closed = false;
    for path in &crate::files::inputs(&args.files)? {
        crate::args::check_indexable(path)?;
        let path = path.to_string_lossy();
        let side = sidecar_path(&path);
        let index = if args.check {
            RecordIndex::load(&fs, &path, args.compression, IndexCheck::Full)?
        } else {
            // Refuse an existing index before the scan, not after it.
            let mut target = OutputOptions::new()
                .force(args.force)
                .input(&*path)
                .create(&side)?;
            let index = RecordIndex::build(&fs, &path, args.compression)?;
            target
                .write_all(&index.to_bytes())
                .with_context(|| format!("writing {side}"))?;
            target.commit()?;
            index
        };
        let what = if args.check { "ok" } else { "written" };
        if !report_closed {
            let line = format!("{}\t{path}\t{side} {what}\n", index.len());
            match out.write_all(line.as_bytes()).and_then(|()| out.flush()) {
                Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                    report_closed = true;
                }
                other => other?,
            }
        }
    }
    Ok(())
}
