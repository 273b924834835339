//! `feedstock verify`: check every record of every file and report each
//! damaged region: what the library's skip policy would skip.
//!
//! The walk ([`walk`], shared with `feedstock repair`) drives the
//! library's push [`Decoder`] with resynchronisation on over a buffered,
//! decompressing reader: each damaged region is reported with its offset
//! and length as the decoder skips it, and checking goes on at the next
//! intact frame, exactly as a reader with `CorruptRecords::Skip` would.
//! A broken compressed stream ends the file: nothing after it can be
//! read.

use std::io::{self, BufRead, BufReader, Write};
use std::path::PathBuf;
use std::sync::Arc;

use feedstock::io::compression::Decompressor;
use feedstock::io::tfrecord::{
    Decoded, Decoder, Payload, Skip, DEFAULT_MAX_RECORD_LEN,
};
use feedstock::io::Compression;
use feedstock::Error;

use crate::args::{cli_words, name_of, open_input, parse_compression};

/// `feedstock verify --help`.
pub(crate) const LONG_ABOUT: &str = "\
Check every record of every file (framing, length CRC and data CRC) and
report each damaged region with its file, key (FILE:INDEX, counting each
earlier region as one record), offset and length: what a reader with the
skip policy (CorruptRecords::Skip) would skip.

After a damaged record, checking goes on at the next intact frame: the
next offset where a header's length CRC checks, the data CRC after it
checks too, and so does the whole frame after that one (or the file ends
there), so that a frame stored inside a damaged record's payload is not
taken for a record (when only a record's data CRC is bad and a sound
header follows it, the region is just that record). A region may hold several
damaged records, or bytes that never were one; each region is one
problem. A broken compressed stream ends the checking of that file
(nothing after it can be read); the other files are still checked.
Offsets are in the decompressed stream.

Prints one line per problem as it is found (nothing is kept in memory but
the counts), one summary line per file (records intact, problems, bytes
skipped) and a total line. FILE `-` is standard input.
Exit status: 0 when every file is sound, 1 when any problem was found, 2
when a file cannot be opened (a missing file, a directory, a character
device) and no record is damaged.
`feedstock repair` writes the intact records of a damaged file to a new
file.";

/// Arguments of `feedstock verify`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The compression of every file; by default it is detected from each
    /// file's extension (.gz is gzip, .zz and .zlib are zlib).
    #[arg(long, value_parser = parse_compression)]
    compression: Option<Compression>,
    /// Records longer than this many bytes are reported as damaged (their
    /// length field is most likely corrupt); at most 2^62.
    #[arg(long, default_value_t = DEFAULT_MAX_RECORD_LEN, value_parser = |s: &str| crate::args::in_range(s, 1, MAX_LIMIT))]
    max_record_len: u64,
    /// The TFRecord files (paths, or URLs: s3://, gs://, az://,
    /// http(s)://, file://; a URL with a wildcard lists the objects) (`-` for standard input).
    #[arg(required = true, value_parser = crate::args::Utf8Path)]
    files: Vec<PathBuf>,
}

/// The highest `--max-record-len`, as the decoder caps it.
const MAX_LIMIT: u64 = 1 << 62;

/// What checking one file found.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct FileReport {
    /// Records whose framing and CRCs are sound.
    pub(crate) good: u64,
    /// Their data bytes.
    pub(crate) good_bytes: u64,
    /// How many damaged regions were found.
    pub(crate) problems: u64,
    /// The bytes of those regions.
    pub(crate) skipped_bytes: u64,
    /// Where checking stopped early, if it did: the offset from which the
    /// rest of the stream could not be read.
    pub(crate) stopped_at: Option<u64>,
}

/// What the walk meets, in stream order.
#[derive(Debug)]
pub(crate) enum Event<'a> {
    /// An intact record's data.
    Record(&'a [u8]),
    /// A damaged region; its cause names the file, the offset, and the
    /// key `FILE:N` where N counts intact records and earlier regions.
    Skip {
        /// The region.
        skip: Skip,
        /// Whether the region runs to the end of the stream.
        to_end: bool,
    },
}

/// Walks the records of one stream, resynchronising after each damaged
/// region; `name` goes into every error, and each record and region goes
/// to `on` as it is met.
///
/// # Errors
///
/// Those `on` returns; ResourceExhausted naming the file and offset when
/// memory runs out holding a record within `max_record_len` (not damage:
/// the walk stops); Cancelled when SIGINT or SIGTERM was caught (see
/// [`crate::signal`]), checked at every chunk, so that a long damaged
/// region cannot delay it.
pub(crate) fn walk(
    src: impl io::Read,
    compression: Compression,
    max_record_len: u64,
    name: &str,
    record_starts: Option<Arc<[u64]>>,
    on: &mut dyn FnMut(Event<'_>) -> io::Result<()>,
) -> anyhow::Result<FileReport> {
    let src = Decompressor::new(compression, src);
    let mut src = BufReader::with_capacity(1 << 20, src);
    let mut decoder = Decoder::new()
        .max_record_len(max_record_len)
        .resync(true)
        .record_starts(record_starts);
    let mut report = FileReport::default();
    loop {
        crate::signal::check()?;
        // A resynchronising decoder reports damage as skips; its only
        // error is running out of memory.
        let held = decoder.decode_held().map_err(|e| e.with_file(name))?;
        match held {
            Some(Decoded::Record(_)) => {
                let data = decoder.take_buffered();
                report.record(&data, on)?;
                continue;
            }
            Some(Decoded::Skipped(skip)) => {
                report.skip(&decoder, name, skip, false, on)?;
                continue;
            }
            _ => {}
        }
        let chunk = match src.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                // A broken compressed stream (or a failing source): the
                // bytes from here on are unknown.
                let skip = decoder.abandon(Error::io(e));
                report.skip(&decoder, name, skip, true, on)?;
                return Ok(report);
            }
        };
        let eof = chunk.is_empty();
        let (what, used) =
            decoder.decode(chunk).map_err(|e| e.with_file(name))?;
        match what {
            Decoded::NeedMore => {}
            Decoded::Record(frame) => match frame.payload {
                Payload::Input(r) => report.record(&chunk[r], on)?,
                Payload::Buffered => {
                    let data = decoder.take_buffered();
                    report.record(&data, on)?;
                }
            },
            Decoded::Skipped(skip) => {
                // A skip found on an empty chunk ran to the end, unless
                // the decoder holds a frame to go on at (one the scan
                // took because it ends the stream).
                let to_end = eof && decoder.is_at_boundary();
                report.skip(&decoder, name, skip, to_end, on)?;
            }
            Decoded::End => return Ok(report),
        }
        src.consume(used);
    }
}

impl FileReport {
    fn record(
        &mut self,
        data: &[u8],
        on: &mut dyn FnMut(Event<'_>) -> io::Result<()>,
    ) -> io::Result<()> {
        self.good += 1;
        self.good_bytes += data.len() as u64;
        on(Event::Record(data))
    }

    fn skip(
        &mut self,
        decoder: &Decoder,
        name: &str,
        mut skip: Skip,
        to_end: bool,
        on: &mut dyn FnMut(Event<'_>) -> io::Result<()>,
    ) -> io::Result<()> {
        self.problems += 1;
        self.skipped_bytes += skip.len;
        if skip.unreadable_rest {
            self.stopped_at = Some(skip.offset);
        }
        // Each earlier region counts as one record in the key.
        let index = decoder.next_position().index + self.problems - 1;
        skip.cause = skip
            .cause
            .with_file(name)
            .with_key(format!("{name}:{index}"));
        on(Event::Skip { skip, to_end })
    }
}

/// Checks the records of one stream, printing each problem to `out` as
/// it is found.
fn check(
    src: impl io::Read,
    compression: Compression,
    max_record_len: u64,
    name: &str,
    out: &mut dyn Write,
) -> anyhow::Result<FileReport> {
    walk(src, compression, max_record_len, name, None, &mut |event| {
        let Event::Skip { skip, to_end } = event else {
            return Ok(());
        };
        writeln!(out, "{}", describe(&skip, to_end))
    })
}

/// One line about a skipped region: its cause (naming file, key and
/// offset), its length, and where reading went on.
pub(crate) fn describe(skip: &Skip, to_end: bool) -> String {
    let e = cli_words(&skip.cause.to_string());
    let n = skip.len;
    if skip.unreadable_rest {
        format!(
            "{e}; the rest of the file cannot be read ({n} bytes skipped \
             before it)"
        )
    } else if to_end {
        format!("{e}; skipped {n} bytes to the end of the file")
    } else {
        format!("{e}; skipped {n} bytes, resumed at offset {}", skip.end())
    }
}

/// Checks every file, printing problems and summaries to stdout.
///
/// # Errors
///
/// `DataLoss` (exit 1) when any record is damaged; `NotFound` or another
/// open error (exit 2) when a file cannot be opened and nothing is
/// damaged; I/O errors writing stdout.
pub(crate) fn run(args: &Args) -> anyhow::Result<()> {
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let mut damaged_files = 0u64;
    let mut problems = 0u64;
    let mut good = 0u64;
    let mut open_error: Option<Error> = None;
    for path in &crate::files::inputs(&args.files)? {
        let name = name_of(path);
        let compression = args
            .compression
            .unwrap_or_else(|| Compression::from_path(path));
        let report = match open_input(path) {
            Ok(f) => {
                check(f, compression, args.max_record_len, &name, &mut out)?
            }
            Err(e) => {
                writeln!(out, "{name}: cannot open: {e}")?;
                open_error.get_or_insert(e);
                continue;
            }
        };
        let n = report.problems;
        write!(
            out,
            "{name}: {} records ok ({} bytes), {n} problem{}",
            report.good,
            report.good_bytes,
            if n == 1 { "" } else { "s" }
        )?;
        if report.skipped_bytes > 0 {
            write!(out, ", {} bytes skipped", report.skipped_bytes)?;
        }
        match report.stopped_at {
            Some(at) => writeln!(out, ", checking stopped at offset {at}")?,
            None => writeln!(out)?,
        }
        good += report.good;
        problems += n;
        damaged_files += u64::from(n > 0);
    }
    let files = args.files.len();
    writeln!(
        out,
        "total: {files} file{}, {good} records ok, {problems} problem{} in \
         {damaged_files} file{}",
        if files == 1 { "" } else { "s" },
        if problems == 1 { "" } else { "s" },
        if damaged_files == 1 { "" } else { "s" },
    )?;
    out.flush()?;
    if problems > 0 {
        return Err(Error::data_loss(format!(
            "found {problems} problem{} in {damaged_files} of {files} files",
            if problems == 1 { "" } else { "s" }
        ))
        .into());
    }
    match open_error {
        Some(e) => Err(e.into()),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use feedstock::io::tfrecord::{encode_record, framed_len, WriterBuilder};
    use feedstock::Kind;

    fn stream(records: &[&[u8]]) -> Vec<u8> {
        let mut out = Vec::new();
        for r in records {
            encode_record(r, &mut out);
        }
        out
    }

    /// What a walk met: records' data, and skips as (offset, len,
    /// to_end, unreadable_rest, key).
    #[derive(Debug, PartialEq)]
    struct Walked {
        records: Vec<Vec<u8>>,
        skips: Vec<(u64, u64, bool, bool, String)>,
        report: FileReport,
    }

    fn walk_all(src: impl io::Read, c: Compression, max: u64) -> Walked {
        let (mut records, mut skips) = (Vec::new(), Vec::new());
        let report = walk(src, c, max, "f", None, &mut |e| {
            match e {
                Event::Record(d) => records.push(d.to_vec()),
                Event::Skip { skip, to_end } => skips.push((
                    skip.offset,
                    skip.len,
                    to_end,
                    skip.unreadable_rest,
                    skip.cause.key().unwrap_or_default().to_owned(),
                )),
            }
            Ok(())
        })
        .unwrap();
        Walked {
            records,
            skips,
            report,
        }
    }

    /// Walks `bytes` whole and fed one byte at a time, which must agree.
    fn walk_both(bytes: &[u8], c: Compression) -> Walked {
        let whole = walk_all(bytes, c, DEFAULT_MAX_RECORD_LEN);
        let trickle = walk_all(OneByte(bytes), c, DEFAULT_MAX_RECORD_LEN);
        assert_eq!(whole, trickle);
        whole
    }

    /// A reader that yields one byte per read.
    struct OneByte<'a>(&'a [u8]);

    impl io::Read for OneByte<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.0.is_empty() || buf.is_empty() {
                return Ok(0);
            }
            buf[0] = self.0[0];
            self.0 = &self.0[1..];
            Ok(1)
        }
    }

    #[test]
    fn a_sound_stream_has_no_problems() {
        let s = stream(&[b"a", b"", b"ccc"]);
        let w = walk_both(&s, Compression::None);
        assert_eq!((w.report.good, w.report.good_bytes), (3, 4));
        assert_eq!(w.records, [&b"a"[..], b"", b"ccc"]);
        assert!(w.skips.is_empty());
        assert_eq!(w.report.stopped_at, None);
    }

    #[test]
    fn each_damaged_region_is_reported_and_checking_goes_on() {
        let mut s = stream(&[b"zero", b"one", b"two", b"three"]);
        let off1 = framed_len(4);
        let off2 = off1 + framed_len(3);
        let off3 = off2 + framed_len(3);
        s[off1 as usize + 12] ^= 1; // data of record 1
        s[off3 as usize + 9] ^= 1; // length CRC of record 3
        let w = walk_both(&s, Compression::None);
        assert_eq!(w.records, [&b"zero"[..], b"two"]);
        let to_end = s.len() as u64 - off3;
        assert_eq!(
            w.skips,
            [
                (off1, framed_len(3), false, false, "f:1".into()),
                (off3, to_end, true, false, "f:3".into()),
            ]
        );
        assert_eq!(w.report.problems, 2);
        assert_eq!(w.report.skipped_bytes, framed_len(3) + to_end);
    }

    #[test]
    fn a_length_over_the_limit_is_a_region() {
        let s = stream(&[b"zero", b"a longer record", b"x"]);
        let w = walk_all(&s[..], Compression::None, 8);
        assert_eq!(w.records, [&b"zero"[..], b"x"]);
        assert_eq!(w.skips.len(), 1);
        assert_eq!(w.skips[0].0, framed_len(4));
    }

    #[test]
    fn a_broken_compressed_stream_ends_the_file() {
        let mut w = WriterBuilder::new()
            .compression(Compression::Gzip)
            .from_writer(Vec::new());
        for r in [&b"zero"[..], b"one", b"two"] {
            w.write_record(r).unwrap();
        }
        let gz = w.finish().unwrap();
        let walked = walk_both(&gz, Compression::Gzip);
        assert_eq!(walked.report.good, 3);
        assert!(walked.skips.is_empty());
        // Cut the gzip trailer: the compressed stream is broken.
        let walked = walk_both(&gz[..gz.len() - 3], Compression::Gzip);
        assert_eq!(walked.report.good, 3);
        assert_eq!(walked.skips.len(), 1);
        assert!(walked.skips[0].3, "unreadable rest");
        assert!(walked.report.stopped_at.is_some());
        let line = {
            let mut out = Vec::new();
            check(
                &gz[..gz.len() - 3],
                Compression::Gzip,
                1 << 20,
                "f",
                &mut out,
            )
            .unwrap();
            String::from_utf8(out).unwrap()
        };
        assert!(line.starts_with("DataLoss"), "{line}");
        assert!(
            line.contains("the rest of the file cannot be read"),
            "{line}"
        );
    }

    #[test]
    fn describe_says_where_reading_went_on() {
        let skip = Skip {
            offset: 20,
            len: 19,
            cause: Error::data_loss("corrupt record").with_offset(20),
            unreadable_rest: false,
        };
        assert!(describe(&skip, false)
            .ends_with("; skipped 19 bytes, resumed at offset 39"));
        assert!(describe(&skip, true)
            .ends_with("; skipped 19 bytes to the end of the file"));
        assert_eq!(skip.cause.kind(), Kind::DataLoss);
    }
}
