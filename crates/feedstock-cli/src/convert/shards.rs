//! The outputs of `convert`: records dealt out in turn over `--shards N`
//! files (record `i` to shard `i % N`), committed only when the whole
//! conversion has succeeded, with a bounded number of files open.
//!
//! Up to [`FAN_OUT`] shards, every shard's writer is open from the start
//! and each record is written as it comes. With more, holding every
//! shard open would take a file descriptor and a 256 KiB write buffer
//! per shard: 10 000 shards need 10 000 descriptors (past the usual
//! limit of 1 024) and 2.6 GB. So the records are first spooled, by
//! bucket of `per` consecutive shards, into hidden temporary files next
//! to the output (`.OUT.*.feedstock-partial`, as for the outputs
//! themselves); then each bucket in turn is written out: its `per`
//! shards opened, filled from its spool, and closed, kept uncommitted
//! without a descriptor ([`OutputFile::close`]), before the next bucket.
//! Once every bucket is written, every shard is committed.
//!
//! `per` is the larger of [`FAN_OUT`] and ⌈√N⌉, so there are at most
//! `per` buckets: at most `per` + 1 of these files are open at once (64
//! up to 4 096 shards, 100 for 10 000, 317 for the largest, 100 000), and
//! at most `per` write buffers are held (up to 81 MB, for 100 000
//! shards). Each record is then written twice, once to its spool.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use feedstock::io::fs::{OutputFile, OutputOptions};
use feedstock::io::tfrecord::{Writer, WriterBuilder};
use feedstock::{Error, Result};
use tempfile::{NamedTempFile, TempPath};

/// The most shards written directly, every one open at once, and the
/// fewest shards per bucket beyond that.
const FAN_OUT: usize = 64;

/// The write (and read) buffer of each spool.
const SPOOL_BUFFER: usize = 64 * 1024;

/// The output files, records dealt out in turn.
pub(super) struct Shards {
    /// The shard file names.
    names: Vec<String>,
    /// How each shard is written.
    builder: WriterBuilder,
    /// What each shard may replace.
    options: OutputOptions,
    /// Records written to each.
    counts: Vec<u64>,
    /// The shard the next record goes to.
    next: usize,
    /// Where records go until [`Shards::commit`].
    mode: Mode,
}

enum Mode {
    /// One open writer per shard.
    Direct(Vec<Writer<BufWriter<OutputFile>>>),
    /// One spool per bucket of `per` consecutive shards.
    Spooled {
        per: usize,
        spools: Vec<BufWriter<NamedTempFile>>,
    },
}

impl Shards {
    /// Checks every target and opens the shards (or the spools).
    ///
    /// # Errors
    ///
    /// Those of [`OutputOptions::create`] for any target (one that exists
    /// without force, is the input, or lies in a missing directory),
    /// before any input is read; those of creating the spools.
    pub(super) fn create(
        paths: &[PathBuf],
        builder: WriterBuilder,
        options: OutputOptions,
    ) -> Result<Shards> {
        let names = paths
            .iter()
            .map(|p| {
                p.to_str().map(str::to_owned).ok_or_else(|| {
                    Error::invalid_argument(
                        "the output path is not valid UTF-8",
                    )
                    .with_file(p.to_string_lossy())
                })
            })
            .collect::<Result<Vec<String>>>()?;
        let n = names.len();
        let mode = if n <= FAN_OUT {
            Mode::Direct(
                names
                    .iter()
                    .map(|name| builder.create_output(name, &options))
                    .collect::<Result<_>>()?,
            )
        } else {
            // Each target is checked now, as a direct write checks it,
            // by creating its temporary file and dropping it (which
            // removes it); the shard is created again when its bucket is
            // written.
            for name in &names {
                drop(options.create(name)?);
            }
            // ⌈√N⌉, exact for N up to MAX_SHARDS.
            let per = FAN_OUT.max((n as f64).sqrt().ceil() as usize);
            let buckets = n.div_ceil(per);
            let spools = (0..buckets)
                .map(|_| spool(&paths[0], &names[0]))
                .collect::<Result<_>>()?;
            Mode::Spooled { per, spools }
        };
        Ok(Shards {
            names,
            builder,
            options,
            counts: vec![0; n],
            next: 0,
            mode,
        })
    }

    /// Writes `record` to the next shard (or its spool).
    ///
    /// # Errors
    ///
    /// Cancelled after a signal; the errors of writing.
    pub(super) fn write(&mut self, record: &[u8]) -> Result<()> {
        crate::signal::check()?;
        match &mut self.mode {
            Mode::Direct(writers) => {
                writers[self.next].write_record(record)?
            }
            Mode::Spooled { per, spools } => {
                let spool = &mut spools[self.next / *per];
                let len = record.len() as u64;
                spool
                    .write_all(&len.to_le_bytes())
                    .and_then(|()| spool.write_all(record))
                    .map_err(|e| spool_error(spool.get_ref().path(), e))?;
            }
        }
        self.counts[self.next] += 1;
        self.next = (self.next + 1) % self.names.len();
        Ok(())
    }

    /// Writes out what is spooled and commits every shard; returns the
    /// records written to each. On an error (or a signal) nothing more
    /// is committed, and every temporary file left is removed.
    pub(super) fn commit(self) -> Result<Vec<u64>> {
        crate::signal::check()?;
        match self.mode {
            Mode::Direct(writers) => {
                for w in writers {
                    w.commit()?;
                }
            }
            Mode::Spooled { per, spools } => {
                let spools = spools
                    .into_iter()
                    .map(|s| {
                        s.into_inner()
                            .map(NamedTempFile::into_temp_path)
                            .map_err(|e| {
                                let (e, w) = e.into_parts();
                                spool_error(w.get_ref().path(), e)
                            })
                    })
                    .collect::<Result<Vec<TempPath>>>()?;
                let mut closed = Vec::with_capacity(self.names.len());
                for (b, spool) in spools.into_iter().enumerate() {
                    let first = b * per;
                    let shards =
                        &self.names[first..self.names.len().min(first + per)];
                    closed.extend(unspool(
                        &spool,
                        shards,
                        &self.builder,
                        &self.options,
                    )?);
                }
                crate::signal::check()?;
                for out in closed {
                    out.commit()?;
                }
            }
        }
        Ok(self.counts)
    }
}

/// A new spool beside the output `path` (named `name` in messages).
fn spool(path: &Path, name: &str) -> Result<BufWriter<NamedTempFile>> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let file = path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = tempfile::Builder::new()
        .prefix(&format!(".{file}."))
        .suffix(".feedstock-partial")
        .tempfile_in(dir)
        .map_err(|e| Error::io(e).with_file(name))?;
    Ok(BufWriter::with_capacity(SPOOL_BUFFER, temp))
}

fn spool_error(path: &Path, e: std::io::Error) -> Error {
    Error::io(e).with_file(path.to_string_lossy())
}

/// Writes the records spooled at `spool` to the `shards`, in turn, and
/// returns them closed, uncommitted.
fn unspool(
    spool: &Path,
    shards: &[String],
    builder: &WriterBuilder,
    options: &OutputOptions,
) -> Result<Vec<OutputFile>> {
    let mut writers = shards
        .iter()
        .map(|name| builder.create_output(name, options))
        .collect::<Result<Vec<_>>>()?;
    let err = |e| spool_error(spool, e);
    let file = File::open(spool).map_err(err)?;
    let mut r = BufReader::with_capacity(SPOOL_BUFFER, file);
    let mut record = Vec::new();
    let mut j = 0;
    while !r.fill_buf().map_err(err)?.is_empty() {
        crate::signal::check()?;
        let mut len = [0; 8];
        r.read_exact(&mut len).map_err(err)?;
        let len = usize::try_from(u64::from_le_bytes(len))
            .map_err(|_| Error::internal("a spooled record's length"))?;
        record.resize(len, 0);
        r.read_exact(&mut record).map_err(err)?;
        // The bucket's shards take its records in turn, as they were
        // dealt: the last round may stop short, never skip one.
        let k = j % writers.len();
        writers[k].write_record(&record)?;
        j += 1;
    }
    writers.into_iter().map(Writer::close).collect()
}
