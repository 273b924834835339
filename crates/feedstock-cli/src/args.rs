//! What every subcommand parses and opens the same way: compression and
//! delimiter flags, numeric limits, input files (`-` is standard input)
//! and the lines of a CSV input.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use bytes::Bytes;
use feedstock::io::compression::Decompressor;
use feedstock::io::fs::STDIO;
use feedstock::io::tfrecord::{self, ReaderBuilder};
use feedstock::io::Compression;
use feedstock::reader::DEFAULT_MAX_LINE_BYTES;
use feedstock::{Error, Result};

/// The most output files `--shards` may ask for.
pub(crate) const MAX_SHARDS: u32 = 100_000;

/// The most worker threads a subcommand starts, whatever the machine.
pub(crate) const MAX_THREADS: u32 = 256;

/// Parses `--compression`: none, gzip or zlib.
pub(crate) fn parse_compression(s: &str) -> Result<Compression> {
    s.parse()
}

/// Parses a field delimiter: one ASCII character, or `tab` (also `\t`);
/// not `"`, which quotes fields (the library would name its own option,
/// `use_quote_delim`, which the command line does not have).
pub(crate) fn parse_delim(s: &str) -> Result<u8> {
    match s {
        "tab" | "\\t" | "\t" => Ok(b'\t'),
        "\"" => Err(Error::invalid_argument(
            "the delimiter cannot be `\"`, which quotes fields (RFC 4180)",
        )),
        _ if s.len() == 1 && s.is_ascii() && s != "\n" && s != "\r" => {
            Ok(s.as_bytes()[0])
        }
        _ => Err(Error::invalid_argument(format!(
            "the delimiter must be one ASCII character (not a line break) \
             or `tab`, not {s:?}"
        ))),
    }
}

/// Parses `--shards`: 1 to [`MAX_SHARDS`].
pub(crate) fn parse_shards(s: &str) -> std::result::Result<u32, String> {
    in_range(s, 1, MAX_SHARDS)
}

/// Parses a thread count: 1 to [`MAX_THREADS`].
pub(crate) fn parse_threads(s: &str) -> std::result::Result<u32, String> {
    in_range(s, 1, MAX_THREADS)
}

/// Parses a line-length limit in bytes (a `\r` before the newline
/// counts): 1 to the library's default of 1 GiB.
pub(crate) fn parse_max_line(s: &str) -> std::result::Result<u64, String> {
    in_range(s, 1, DEFAULT_MAX_LINE_BYTES)
}

/// Parses an integer in `min..=max`, saying which bound it broke.
pub(crate) fn in_range<T>(
    s: &str,
    min: T,
    max: T,
) -> std::result::Result<T, String>
where
    T: std::str::FromStr + PartialOrd + std::fmt::Display + Copy,
    T::Err: std::fmt::Display,
{
    let n: T = s.trim().parse().map_err(|e| format!("{e}"))?;
    if n < min || n > max {
        return Err(format!("must be from {min} to {max}"));
    }
    Ok(n)
}

/// Parses a file argument (a path or URL), refusing one that is not
/// UTF-8.
///
/// The library names files with `&str` (a path, a URL, a key in a
/// message), as TensorFlow does, so a name that is not UTF-8 (say
/// Latin-1 `donn\xe9es`) could only be read or written under another,
/// lossy, name. It is a usage error (exit 2) naming the file, its bad
/// bytes shown as `\u{FFFD}`; the file can still be given as standard
/// input (`-`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Utf8Path;

impl clap::builder::TypedValueParser for Utf8Path {
    type Value = PathBuf;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> std::result::Result<PathBuf, clap::Error> {
        if value.to_str().is_some() {
            return Ok(PathBuf::from(value));
        }
        let arg = arg.map_or_else(|| "a file".to_owned(), ToString::to_string);
        let message = format!(
            "invalid value '{}' for '{arg}': the name is not valid UTF-8 \
             (feedstock names files as text); rename it, or give it as \
             standard input (`-`)\n",
            value.to_string_lossy()
        );
        Err(
            clap::Error::raw(clap::error::ErrorKind::InvalidUtf8, message)
                .with_cmd(cmd),
        )
    }
}

/// The compression of `path`: `given`, or detected from its extension
/// (none for standard input).
pub(crate) fn compression_of(
    path: &Path,
    given: Option<Compression>,
) -> Compression {
    given.unwrap_or_else(|| Compression::from_path(path))
}

/// The name a path goes by in messages and in a filename queue.
pub(crate) fn name_of(path: &Path) -> String {
    path.display().to_string()
}

/// The local file `path` names: the file of a `file://` URL, else `path`
/// itself. Local checks and opens go through this; messages keep naming
/// `path` as given.
pub(crate) fn local_of(path: &Path) -> std::borrow::Cow<'_, Path> {
    match path.to_str() {
        Some(s) if s.starts_with("file://") => std::borrow::Cow::Owned(
            PathBuf::from(feedstock::io::fs::local_path(s).into_owned()),
        ),
        _ => std::borrow::Cow::Borrowed(path),
    }
}

/// Opens an input file, or standard input for `-`; a directory or a
/// character device is refused by name (FailedPrecondition, exit 2).
pub(crate) fn open_input(path: &Path) -> Result<Box<dyn Read + Send>> {
    let name = name_of(path);
    if name == STDIO {
        return Ok(Box::new(io::stdin()));
    }
    if !feedstock::io::store::AnyFs::is_url(&name) {
        let file = File::open(local_of(path))
            .map_err(|e| Error::io(e).with_file(&name))?;
        let meta =
            file.metadata().map_err(|e| Error::io(e).with_file(&name))?;
        check_file_type(&meta, &name)?;
        return Ok(Box::new(file));
    }
    // An object-store URL, through the library's file seam.
    feedstock::io::fs::default_fs().open(&name)
}

/// Refuses what cannot be an input file: a directory, and a character
/// device (such as `/dev/zero` or `/dev/urandom`, but not `/dev/null`,
/// which is empty), which may never end:
/// every read of it would run until memory or the disk is full, or
/// forever. A pipe (a FIFO, `/dev/stdin`) ends when its writer closes it
/// and is read like a file; standard input (`-`) is read to its end
/// whatever it is, so a device can still be read on purpose (`- <
/// /dev/urandom`). TensorFlow reads a device until it ends; this is
/// stricter.
fn check_file_type(meta: &std::fs::Metadata, name: &str) -> Result<()> {
    if meta.is_dir() {
        return Err(Error::failed_precondition("is a directory, not a file")
            .with_file(name));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if meta.file_type().is_char_device() && !is_dev_null(meta) {
            return Err(Error::failed_precondition(
                "is a character device, not a file: it may never end \
                 (give it as standard input, `-`, to read it anyway)",
            )
            .with_file(name));
        }
    }
    Ok(())
}

/// True if `meta` is the null device, which reads as an empty file.
#[cfg(unix)]
fn is_dev_null(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/dev/null").is_ok_and(|null| null.rdev() == meta.rdev())
}

/// Checks, before a pipeline opens them, that the local files among
/// `paths` can be inputs (see [`check_file_type`]); missing ones are left
/// for the readers to report.
pub(crate) fn check_inputs(paths: &[PathBuf]) -> Result<()> {
    for path in paths {
        let name = name_of(path);
        if name == STDIO || feedstock::io::store::AnyFs::is_url(&name) {
            continue;
        }
        if let Ok(meta) = std::fs::metadata(local_of(path)) {
            check_file_type(&meta, &name)?;
        }
    }
    Ok(())
}

/// Checks that `path` can be indexed: a regular file or a URL. An index
/// is kept beside its file and fingerprints its size, so standard input,
/// a pipe or a device cannot have one.
pub(crate) fn check_indexable(path: &Path) -> Result<()> {
    let name = name_of(path);
    if name == STDIO {
        return Err(Error::invalid_argument(
            "standard input (`-`) cannot be indexed: an index is written \
             beside its file, as FILE.index; save the stream to a file \
             first",
        ));
    }
    if feedstock::io::store::AnyFs::is_url(&name) {
        return Ok(());
    }
    let meta = std::fs::metadata(local_of(path))
        .map_err(|e| Error::io(e).with_file(&name))?;
    check_file_type(&meta, &name)?;
    if !meta.is_file() {
        return Err(Error::failed_precondition(
            "is not a regular file (a pipe, socket or device): an index \
             is kept beside a regular file",
        )
        .with_file(&name));
    }
    Ok(())
}

/// Refuses to run when standard output is a regular file that is one of
/// the inputs (`feedstock cat x.tfrecord >> x.tfrecord`, or `- <
/// x.tfrecord` as input): the command would write into what it reads,
/// changing an input and perhaps reading its own output without end.
/// GNU `cat` refuses the same ("input file is output file").
pub(crate) fn refuse_stdout_as_input(paths: &[PathBuf]) -> Result<()> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        use std::os::unix::fs::MetadataExt;
        let meta_of = |fd: std::os::fd::BorrowedFd<'_>| {
            let owned = fd.try_clone_to_owned().ok()?;
            File::from(owned).metadata().ok()
        };
        let Some(out) = meta_of(io::stdout().as_fd()) else {
            return Ok(());
        };
        if !out.is_file() {
            return Ok(());
        }
        for path in paths {
            let name = name_of(path);
            let meta = if name == STDIO {
                meta_of(io::stdin().as_fd())
            } else if feedstock::io::store::AnyFs::is_url(&name) {
                None
            } else {
                std::fs::metadata(local_of(path)).ok()
            };
            if meta
                .is_some_and(|m| m.dev() == out.dev() && m.ino() == out.ino())
            {
                return Err(Error::invalid_argument(
                    "standard output is this input: refusing to write into \
                     an input",
                )
                .with_file(name));
            }
        }
    }
    #[cfg(not(unix))]
    let _ = paths;
    Ok(())
}

/// The library's error messages name its API where the command has a
/// flag: say the flag.
pub(crate) fn cli_words(message: &str) -> String {
    message
        .replace("Compression::Gzip", "--compression gzip")
        .replace("Compression::Zlib", "--compression zlib")
}

/// A reader of the TFRecords of `path` (`-` is standard input), with
/// the compression given or detected from the extension.
pub(crate) fn open_records(
    path: &Path,
    compression: Option<Compression>,
) -> Result<tfrecord::Reader<Box<dyn Read + Send>>> {
    let input = open_input(path)?;
    let mut b = ReaderBuilder::new();
    b.compression(compression_of(path, compression))
        .file_name(name_of(path));
    Ok(b.from_reader(input))
}

/// The lines of a (possibly compressed) text input, without their line
/// endings, counted from 1, each at most `max` bytes.
///
/// Written here rather than with the library's `TextLineReader`, which
/// runs inside a pipeline of queues and threads, because a conversion
/// reads one file in order; it keeps the same limit (the library's
/// [`DEFAULT_MAX_LINE_BYTES`] unless `--max-line-bytes` says otherwise).
pub(crate) struct Lines {
    /// The decompressed input.
    src: BufReader<Decompressor<Box<dyn Read + Send>>>,
    /// The input's name, for messages.
    name: String,
    /// The number of the line last returned.
    pub(crate) number: u64,
    /// The offset of the next line in the decompressed stream.
    offset: u64,
    /// The longest line accepted.
    max: u64,
}

impl Lines {
    /// Opens `path` (`-` is standard input). An uncompressed input that
    /// starts like a gzip or zlib stream is refused with a message naming
    /// `flag`, the option that sets the compression.
    pub(crate) fn open(
        path: &Path,
        compression: Compression,
        max: Option<u64>,
        flag: &str,
    ) -> Result<Lines> {
        let input = open_input(path)?;
        let mut src = BufReader::with_capacity(
            1 << 20,
            Decompressor::new(compression, input),
        );
        let name = name_of(path);
        if compression == Compression::None {
            let start =
                src.fill_buf().map_err(|e| Error::io(e).with_file(&name))?;
            if let Some(c) = Compression::sniff(start) {
                return Err(Error::invalid_argument(format!(
                    "this looks like a {c} file, not text: read it with \
                     {flag} {c}"
                ))
                .with_file(&name));
            }
        }
        Ok(Lines {
            src,
            name,
            number: 0,
            offset: 0,
            max: max.unwrap_or(DEFAULT_MAX_LINE_BYTES),
        })
    }

    /// The next line, or `None` at the end.
    ///
    /// # Errors
    ///
    /// ResourceExhausted naming `FILE:LINE` and the line's offset for a
    /// line longer than the limit (found after reading at most the limit,
    /// so memory stays bounded); the errors of reading.
    pub(crate) fn next_line(&mut self) -> Result<Option<Bytes>> {
        let key = || format!("{}:{}", self.name, self.number + 1);
        let mut buf: Vec<u8> = Vec::new();
        // Bytes consumed, the newline included.
        let mut n = 0u64;
        loop {
            let avail = match self.src.fill_buf() {
                Ok(a) => a,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    return Err(Error::io(e)
                        .with_file(&self.name)
                        .with_key(key())
                        .with_offset(self.offset + n))
                }
            };
            if avail.is_empty() {
                break;
            }
            let (used, ended) = match memchr::memchr(b'\n', avail) {
                Some(i) => (i + 1, true),
                None => (avail.len(), false),
            };
            let content = if ended { used - 1 } else { used };
            if buf.len() as u64 + content as u64 > self.max {
                return Err(Error::resource_exhausted(format!(
                    "line {} is longer than the limit of {} bytes \
                     (--max-line-bytes)",
                    self.number + 1,
                    self.max
                ))
                .with_file(&self.name)
                .with_key(key())
                .with_offset(self.offset));
            }
            // Within the limit, memory may still run out: say so rather
            // than abort.
            buf.try_reserve(content).map_err(|_| {
                Error::resource_exhausted(format!(
                    "out of memory holding line {} ({} bytes so far); \
                     --max-line-bytes sets a lower limit",
                    self.number + 1,
                    buf.len()
                ))
                .with_file(&self.name)
                .with_key(key())
                .with_offset(self.offset)
            })?;
            buf.extend_from_slice(&avail[..content]);
            self.src.consume(used);
            n += used as u64;
            if ended {
                break;
            }
        }
        if n == 0 {
            return Ok(None);
        }
        self.number += 1;
        self.offset += n;
        if buf.last() == Some(&b'\r') {
            buf.pop();
        }
        Ok(Some(Bytes::from(buf)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delimiters_are_one_ascii_character_or_tab() {
        assert_eq!(parse_delim(";").unwrap(), b';');
        assert_eq!(parse_delim("tab").unwrap(), b'\t');
        assert_eq!(parse_delim("\\t").unwrap(), b'\t');
        for bad in [";;", "é", "", "\n"] {
            assert!(parse_delim(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn numbers_out_of_range_say_the_range() {
        assert_eq!(parse_shards("4").unwrap(), 4);
        assert_eq!(parse_shards("0").unwrap_err(), "must be from 1 to 100000");
        assert!(parse_shards("4294967295").unwrap_err().contains("100000"));
        assert!(parse_threads("1000").unwrap_err().contains("256"));
        assert!(parse_threads("-1").is_err());
    }

    #[test]
    fn a_line_over_the_limit_is_resource_exhausted_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.csv");
        std::fs::write(&path, b"abc\r\nabcde\nabcdefg\n").unwrap();
        // A \r before the newline counts; the last line may lack one.
        let mut lines =
            Lines::open(&path, Compression::None, Some(4), "-c").unwrap();
        assert_eq!(&lines.next_line().unwrap().unwrap()[..], b"abc");
        assert!(lines.next_line().is_err());
        std::fs::write(&path, b"ab\n\nxyz").unwrap();
        let mut lines =
            Lines::open(&path, Compression::None, Some(3), "-c").unwrap();
        assert_eq!(&lines.next_line().unwrap().unwrap()[..], b"ab");
        assert_eq!(&lines.next_line().unwrap().unwrap()[..], b"");
        assert_eq!(&lines.next_line().unwrap().unwrap()[..], b"xyz");
        assert_eq!(lines.next_line().unwrap(), None);
        assert_eq!(lines.number, 3);
        std::fs::write(&path, b"abc\r\nabcde\nabcdefg\n").unwrap();
        let mut lines =
            Lines::open(&path, Compression::None, Some(5), "-c").unwrap();
        assert_eq!(&lines.next_line().unwrap().unwrap()[..], b"abc");
        assert_eq!(&lines.next_line().unwrap().unwrap()[..], b"abcde");
        let e = lines.next_line().unwrap_err();
        assert_eq!(e.kind(), feedstock::Kind::ResourceExhausted);
        assert_eq!(e.offset(), Some(11));
        assert!(e.key().unwrap().ends_with("x.csv:3"), "{e}");
    }
}
