//! `feedstock verify`: check every record of every file and report each
//! damaged one, not just the first.
//!
//! The walk drives the library's push [`Decoder`] over a buffered,
//! decompressing reader. The decoder stops at the first error; to go on
//! past a record whose data CRC is bad, this module keeps its own copy of
//! each record's 12-byte header as the decoder consumes it. If that header
//! is intact (its length CRC matches), the record's length is trustworthy,
//! so the next record starts right after the bad one and a fresh decoder
//! resumes there. A bad length CRC, a truncated record, stray bytes at the
//! end or a broken compressed stream leave no trustworthy boundary: that
//! ends the file.

use std::io::{self, BufRead, BufReader, Write};
use std::path::PathBuf;

use feedstock::io::compression::Decompressor;
use feedstock::io::tfrecord::{
    framed_len, masked_crc32c, Decoded, Decoder, Position,
    DEFAULT_MAX_RECORD_LEN, HEADER_LEN,
};
use feedstock::io::Compression;
use feedstock::Error;

use crate::args::{cli_words, name_of, open_input, parse_compression};

/// `feedstock verify --help`.
pub(crate) const LONG_ABOUT: &str = "\
Check every record of every file (framing, length CRC and data CRC) and
report each damaged record with its file, key (FILE:INDEX) and offset.

A record whose data CRC is wrong but whose length CRC is right is skipped
and checking goes on with the next record. A bad length CRC, a truncated
record or a broken compressed stream ends the checking of that file (no
later record boundary can be trusted); the other files are still checked.
Offsets are in the decompressed stream.

Prints one line per problem as it is found (nothing is kept in memory but
the counts), one summary line per file and a total line. FILE `-` is
standard input. Exit status: 0 when every file is sound, 1 when any
problem was found, 2 when a file cannot be opened (a missing file, a
directory) and no record is damaged.";

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
    /// The TFRecord files (`-` for standard input).
    #[arg(required = true)]
    files: Vec<PathBuf>,
}

/// The highest `--max-record-len`, as the decoder caps it.
const MAX_LIMIT: u64 = 1 << 62;

/// What checking one file found.
#[derive(Debug, Default, Clone, PartialEq)]
struct FileReport {
    /// Records whose framing and CRCs are sound.
    good: u64,
    /// Their data bytes.
    good_bytes: u64,
    /// How many problems were found (each is handed out as it is found).
    problems: u64,
    /// Where checking stopped early, if it did: the offset after which
    /// nothing was checked.
    stopped_at: Option<u64>,
}

/// One damaged record, or the point where a file became unreadable.
#[derive(Debug, Clone, PartialEq)]
struct Problem {
    /// The error, naming file, key and offset.
    error: Error,
    /// Where checking resumed, when it could.
    resumed_at: Option<u64>,
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
    for path in &args.files {
        let name = name_of(path);
        let compression = args
            .compression
            .unwrap_or_else(|| Compression::from_path(path));
        let mut print = |p: Problem| {
            let e = cli_words(&p.error.to_string());
            match p.resumed_at {
                Some(at) => writeln!(out, "{e}; resumed at offset {at}"),
                None => writeln!(
                    out,
                    "{e}; the rest of the file cannot be checked"
                ),
            }
        };
        let report = match open_input(path) {
            Ok(f) => {
                check(f, compression, args.max_record_len, &name, &mut print)?
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

/// Checks the records of one stream; `name` goes into every error, and
/// each problem goes to `found` as it is found.
///
/// # Errors
///
/// Those `found` returns (writing the report).
fn check(
    src: impl io::Read,
    compression: Compression,
    max_record_len: u64,
    name: &str,
    found: &mut dyn FnMut(Problem) -> io::Result<()>,
) -> io::Result<FileReport> {
    let src = Decompressor::new(compression, src);
    let mut src = BufReader::with_capacity(1 << 20, src);
    let mut walk = Walk::new(max_record_len, Position::default());
    let mut report = FileReport::default();
    // The stream offset of the first byte `fill_buf` returns.
    let mut at: u64 = 0;
    loop {
        let chunk = match src.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                // A broken compressed stream: the bytes from here on are
                // unknown.
                let pos = walk.decoder.next_position();
                let e = Error::io(e).with_offset(at);
                report.problems += 1;
                found(Problem {
                    error: name_it(e, name, pos),
                    resumed_at: None,
                })?;
                report.stopped_at = Some(pos.offset);
                return Ok(report);
            }
        };
        walk.note_header(chunk);
        match walk.decoder.decode(chunk) {
            Ok((Decoded::NeedMore, used)) => {
                src.consume(used);
                at += used as u64;
            }
            Ok((Decoded::Record(frame), used)) => {
                let len = match frame.payload {
                    feedstock::io::tfrecord::Payload::Input(r) => r.len(),
                    feedstock::io::tfrecord::Payload::Buffered => {
                        walk.decoder.take_buffered().len()
                    }
                };
                report.good += 1;
                report.good_bytes += len as u64;
                src.consume(used);
                at += used as u64;
            }
            Ok((Decoded::End, _)) => return Ok(report),
            Err(e) => {
                let pos = walk.decoder.next_position();
                let error = name_it(e, name, pos);
                // Only a bad data CRC can fail a non-empty chunk after an
                // intact header within the limit; the record's end is
                // known and inside this chunk (its footer was just read).
                let next = match walk.intact_len() {
                    Some(len) if !chunk.is_empty() => {
                        Some(pos.offset + framed_len(len))
                    }
                    _ => None,
                };
                match next {
                    Some(next) if next >= at => {
                        let used = ((next - at) as usize).min(chunk.len());
                        src.consume(used);
                        at += used as u64;
                        report.problems += 1;
                        found(Problem {
                            error,
                            resumed_at: Some(next),
                        })?;
                        walk = Walk::new(
                            max_record_len,
                            Position {
                                offset: next,
                                index: pos.index + 1,
                            },
                        );
                    }
                    _ => {
                        report.problems += 1;
                        found(Problem {
                            error,
                            resumed_at: None,
                        })?;
                        report.stopped_at = Some(pos.offset);
                        return Ok(report);
                    }
                }
            }
        }
    }
}

/// Adds the file and the record key (`FILE:INDEX`) to a decoder error.
fn name_it(e: Error, name: &str, pos: Position) -> Error {
    e.with_file(name).with_key(format!("{name}:{}", pos.index))
}

/// A decoder plus a copy of the header of the record it is decoding.
#[derive(Debug)]
struct Walk {
    /// The decoder; replaced by a fresh one after a skipped record.
    decoder: Decoder,
    /// The limit the decoder enforces.
    max_record_len: u64,
    /// The first bytes of the current record's header.
    header: [u8; HEADER_LEN],
    /// How many bytes of `header` are filled.
    have: usize,
}

impl Walk {
    fn new(max_record_len: u64, pos: Position) -> Walk {
        Walk {
            decoder: Decoder::new()
                .max_record_len(max_record_len)
                .starting_at(pos),
            max_record_len,
            header: [0; HEADER_LEN],
            have: 0,
        }
    }

    /// Copies the header bytes at the start of `chunk`, which is about to
    /// be fed to the decoder. A record's header is the first thing the
    /// decoder consumes after a boundary, so the first 12 bytes fed after
    /// one are it.
    fn note_header(&mut self, chunk: &[u8]) {
        if self.decoder.is_at_boundary() {
            self.have = 0;
        }
        let n = (HEADER_LEN - self.have).min(chunk.len());
        self.header[self.have..self.have + n].copy_from_slice(&chunk[..n]);
        self.have += n;
    }

    /// The data length of the current record if its header is whole, its
    /// length CRC matches, and the length is within the limit.
    fn intact_len(&self) -> Option<u64> {
        if self.have < HEADER_LEN {
            return None;
        }
        let (len, crc) = self.header.split_at(8);
        let crc = u32::from_le_bytes(crc.try_into().expect("4 bytes"));
        if masked_crc32c(len) != crc {
            return None;
        }
        let len = u64::from_le_bytes(len.try_into().expect("8 bytes"));
        (len <= self.max_record_len).then_some(len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use feedstock::io::tfrecord::{encode_record, WriterBuilder};
    use feedstock::Kind;

    /// The kinds a problem can have.
    fn is_damage(e: &Error) -> bool {
        matches!(e.kind(), Kind::DataLoss | Kind::ResourceExhausted)
    }

    fn stream(records: &[&[u8]]) -> Vec<u8> {
        let mut out = Vec::new();
        for r in records {
            encode_record(r, &mut out);
        }
        out
    }

    /// A report with the problems handed out, in order.
    #[derive(Debug, PartialEq)]
    struct Checked {
        good: u64,
        good_bytes: u64,
        problems: Vec<Problem>,
        stopped_at: Option<u64>,
    }

    /// Checks `src`, collecting the problems handed out.
    fn check_all(src: impl io::Read, c: Compression, max: u64) -> Checked {
        let mut problems = Vec::new();
        let r = check(src, c, max, "f", &mut |p| {
            problems.push(p);
            Ok(())
        })
        .unwrap();
        assert_eq!(r.problems, problems.len() as u64);
        Checked {
            good: r.good,
            good_bytes: r.good_bytes,
            problems,
            stopped_at: r.stopped_at,
        }
    }

    /// Checks `bytes` whole and fed one byte at a time, which must agree.
    fn check_both(bytes: &[u8], c: Compression) -> Checked {
        let whole = check_all(bytes, c, DEFAULT_MAX_RECORD_LEN);
        let trickle = check_all(OneByte(bytes), c, DEFAULT_MAX_RECORD_LEN);
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
        let r = check_both(&s, Compression::None);
        assert_eq!((r.good, r.good_bytes), (3, 4));
        assert!(r.problems.is_empty());
        assert_eq!(r.stopped_at, None);
    }

    #[test]
    fn every_bad_data_crc_is_reported_and_skipped() {
        let mut s = stream(&[b"zero", b"one", b"two", b"three"]);
        // Flip a data byte of records 1 and 3.
        let off1 = framed_len(4);
        let off3 = off1 + framed_len(3) + framed_len(3);
        s[off1 as usize + 12] ^= 1;
        s[off3 as usize + 13] ^= 1;
        let r = check_both(&s, Compression::None);
        assert_eq!(r.good, 2);
        assert_eq!(r.problems.len(), 2);
        let p = &r.problems[0];
        assert!(is_damage(&p.error));
        assert!(p.error.message().contains("data CRC"), "{}", p.error);
        assert_eq!(p.error.offset(), Some(off1));
        assert_eq!(p.error.key(), Some("f:1"));
        assert_eq!(p.resumed_at, Some(off1 + framed_len(3)));
        assert_eq!(r.problems[1].error.offset(), Some(off3));
        assert_eq!(r.problems[1].error.key(), Some("f:3"));
        assert_eq!(r.stopped_at, None);
    }

    #[test]
    fn a_bad_footer_byte_is_skipped_like_a_bad_data_byte() {
        let mut s = stream(&[b"zero", b"one"]);
        s[framed_len(4) as usize - 1] ^= 0x80;
        let r = check_both(&s, Compression::None);
        assert_eq!(r.good, 1);
        assert_eq!(r.problems.len(), 1);
        assert_eq!(r.problems[0].error.offset(), Some(0));
    }

    #[test]
    fn a_bad_length_crc_ends_the_file() {
        let mut s = stream(&[b"zero", b"one", b"two"]);
        let off1 = framed_len(4);
        s[off1 as usize + 9] ^= 1;
        let r = check_both(&s, Compression::None);
        assert_eq!(r.good, 1);
        assert_eq!(r.problems.len(), 1);
        assert!(r.problems[0].error.message().contains("length CRC"));
        assert_eq!(r.problems[0].resumed_at, None);
        assert_eq!(r.stopped_at, Some(off1));
    }

    #[test]
    fn truncation_and_stray_bytes_end_the_file() {
        let s = stream(&[b"zero", b"one"]);
        let cut = &s[..s.len() - 2];
        let r = check_both(cut, Compression::None);
        assert_eq!(r.good, 1);
        assert_eq!(r.stopped_at, Some(framed_len(4)));
        assert!(r.problems[0].error.message().contains("truncated"));

        let mut stray = s.clone();
        stray.extend_from_slice(b"xyz");
        let r = check_both(&stray, Compression::None);
        assert_eq!(r.good, 2);
        assert_eq!(r.stopped_at, Some(s.len() as u64));
    }

    #[test]
    fn a_length_over_the_limit_ends_the_file() {
        let s = stream(&[b"zero", b"a longer record"]);
        let r = check_all(&s[..], Compression::None, 8);
        assert_eq!(r.good, 1);
        assert_eq!(r.problems[0].error.kind(), Kind::ResourceExhausted);
        assert_eq!(r.stopped_at, Some(framed_len(4)));
    }

    #[test]
    fn compressed_streams_are_checked_after_decompression() {
        let mut w = WriterBuilder::new()
            .compression(Compression::Gzip)
            .from_writer(Vec::new());
        for r in [&b"zero"[..], b"one", b"two"] {
            w.write_record(r).unwrap();
        }
        let gz = w.finish().unwrap();
        let r = check_both(&gz, Compression::Gzip);
        assert_eq!(r.good, 3);
        assert!(r.problems.is_empty());
        // Cut the gzip trailer: the compressed stream is broken.
        let r = check_both(&gz[..gz.len() - 3], Compression::Gzip);
        assert_eq!(r.problems.len(), 1);
        assert_eq!(r.problems[0].error.kind(), Kind::DataLoss);
        assert_eq!(r.problems[0].resumed_at, None);
    }

    #[test]
    fn a_huge_length_with_a_valid_crc_under_a_huge_limit_does_not_overflow() {
        // A header claiming the highest limit, its CRC intact, then junk.
        let len = MAX_LIMIT.to_le_bytes();
        let mut s = len.to_vec();
        s.extend_from_slice(&masked_crc32c(&len).to_le_bytes());
        s.extend_from_slice(b"junk");
        let r = check_all(&s[..], Compression::None, MAX_LIMIT);
        assert_eq!(r.good, 0);
        assert_eq!(r.problems.len(), 1);
        assert_eq!(r.problems[0].resumed_at, None);
        assert!(is_damage(&r.problems[0].error), "{}", r.problems[0].error);
    }
}
