//! Stream compression: none, gzip or zlib, as TensorFlow's record readers
//! and writers offer it.
//!
//! [`Compression`] is the closed set; [`Compression::reader`] (or
//! [`Decompressor::new`] when the source type should stay visible) wraps
//! any [`io::Read`] in a decompressing reader that every record reader
//! reuses, and [`Compression::from_path`] guesses the compression from a
//! file name the way the `feedstock` command does.
//!
//! # Strictness
//!
//! The decompressing reader is stricter than TensorFlow's, which treats a
//! compressed stream that stops early as a clean end of input and so loses
//! the records after the cut without saying so. Here a stream that ends
//! before its trailer is an [`io::ErrorKind::UnexpectedEof`] error, and a
//! corrupt stream or a trailer whose checksum or length does not match is
//! an [`io::ErrorKind::InvalidData`] error; [`crate::Error::io`] turns both
//! into [`Kind::DataLoss`](crate::Kind::DataLoss).
//!
//! ```
//! use std::io::{Read, Write};
//! use feedstock::io::Compression;
//!
//! let mut enc = flate2::write::GzEncoder::new(
//!     Vec::new(),
//!     flate2::Compression::default(),
//! );
//! enc.write_all(b"hello").unwrap();
//! let gz = enc.finish().unwrap();
//!
//! let mut out = String::new();
//! Compression::Gzip
//!     .reader(&gz[..])
//!     .read_to_string(&mut out)
//!     .unwrap();
//! assert_eq!(out, "hello");
//!
//! // The same stream cut short is an error, not a short read.
//! let cut = &gz[..gz.len() - 4];
//! let err = Compression::Gzip
//!     .reader(cut)
//!     .read_to_end(&mut Vec::new())
//!     .unwrap_err();
//! assert_eq!(err.kind(), std::io::ErrorKind::UnexpectedEof);
//! ```

use std::fmt;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;
use std::str::FromStr;

use flate2::{Decompress, FlushDecompress, Status};

use crate::error::{copy_io, Error, Result};

/// How a record stream is compressed.
///
/// TensorFlow spells these `""`, `"GZIP"` and `"ZLIB"`;
/// [`FromStr`] accepts those spellings and the lower-case names `none`,
/// `gzip` and `zlib`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Compression {
    /// No compression.
    #[default]
    None,
    /// A gzip stream (RFC 1952), as `GzipOutputStream` writes it.
    Gzip,
    /// A zlib stream (RFC 1950).
    Zlib,
}

impl Compression {
    /// Guesses the compression from a file name's extension: `.gz` is
    /// gzip, `.zz` and `.zlib` are zlib, anything else is none.
    ///
    /// ```
    /// use feedstock::io::Compression;
    ///
    /// assert_eq!(Compression::from_path("a.tfrecord.gz"), Compression::Gzip);
    /// assert_eq!(Compression::from_path("a.zlib"), Compression::Zlib);
    /// assert_eq!(Compression::from_path("a.tfrecord"), Compression::None);
    /// ```
    pub fn from_path(path: impl AsRef<Path>) -> Compression {
        let ext = path.as_ref().extension().and_then(|e| e.to_str());
        match ext {
            Some("gz") => Compression::Gzip,
            Some("zz") | Some("zlib") => Compression::Zlib,
            _ => Compression::None,
        }
    }

    /// Guesses the compression from a stream's first bytes: the gzip magic
    /// (`1f 8b`, then method 8, deflate, when there is a third byte), or a
    /// zlib header (deflate with a window of at most 32 KiB, a valid
    /// header check and no preset dictionary) whose first bytes inflate
    /// without error and are not plain text. `None` when neither fits; a
    /// match is a strong hint, not a proof.
    ///
    /// A zlib header is only two bytes, and some pairs of printable
    /// characters are valid ones (`80`, `8O`, `x^`, `HK`...): a CSV file
    /// starting `80,5` must not be taken for zlib. So the bytes after the
    /// header must inflate, and a start that is all printable UTF-8 text
    /// (which deflated data almost never is) is not zlib.
    ///
    /// ```
    /// use feedstock::io::Compression;
    ///
    /// assert_eq!(Compression::sniff(&[0x1f, 0x8b, 8]), Some(Compression::Gzip));
    /// assert_eq!(Compression::sniff(&[0x78, 0x9c]), Some(Compression::Zlib));
    /// assert_eq!(Compression::sniff(b"a,b\n"), None);
    /// assert_eq!(Compression::sniff(b"80,5\n"), None);
    /// ```
    pub fn sniff(start: &[u8]) -> Option<Compression> {
        match start {
            [0x1f, 0x8b] | [0x1f, 0x8b, 8, ..] => Some(Compression::Gzip),
            [cmf, flg, ..]
                if cmf & 0x0f == 8
                    && cmf >> 4 <= 7
                    && flg & 0x20 == 0
                    && (u16::from(*cmf) << 8 | u16::from(*flg)) % 31 == 0
                    && !looks_like_text(start)
                    && inflates(start) =>
            {
                Some(Compression::Zlib)
            }
            _ => None,
        }
    }

    /// The name TensorFlow uses for this compression: `""`, `"GZIP"` or
    /// `"ZLIB"`.
    pub fn tf_name(self) -> &'static str {
        match self {
            Compression::None => "",
            Compression::Gzip => "GZIP",
            Compression::Zlib => "ZLIB",
        }
    }

    /// Wraps `src` in a reader that yields the decompressed bytes.
    ///
    /// For [`Compression::None`] the bytes pass through unchanged. See the
    /// [module documentation](self) for how truncated and corrupt streams
    /// are reported.
    pub fn reader<'a>(
        self,
        src: impl Read + Send + 'a,
    ) -> Box<dyn Read + Send + 'a> {
        Box::new(Decompressor::new(self, src))
    }
}

impl fmt::Display for Compression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Compression::None => "none",
            Compression::Gzip => "gzip",
            Compression::Zlib => "zlib",
        })
    }
}

impl FromStr for Compression {
    type Err = Error;

    /// Parses `none` (or the empty string), `gzip` or `zlib`, in any case.
    ///
    /// # Errors
    ///
    /// [`Kind::InvalidArgument`](crate::Kind::InvalidArgument) for any
    /// other name.
    fn from_str(s: &str) -> Result<Compression> {
        match s.to_ascii_lowercase().as_str() {
            "" | "none" => Ok(Compression::None),
            "gzip" => Ok(Compression::Gzip),
            "zlib" => Ok(Compression::Zlib),
            _ => Err(Error::invalid_argument(format!(
                "unknown compression {s:?}: expected none, gzip or zlib"
            ))),
        }
    }
}

/// A reader that decompresses what it reads from `R`.
///
/// Made by [`Decompressor::new`]; [`Compression::reader`] is the boxed
/// form. Concatenated gzip members are read one after the other, as
/// `gzip -d` and TensorFlow do. A zlib file holds one stream: bytes after
/// its end are an error (TensorFlow ignores them, dropping any records
/// there).
#[derive(Debug)]
pub struct Decompressor<R> {
    inner: Inner<R>,
}

#[derive(Debug)]
enum Inner<R> {
    Plain(R),
    Inflate(Box<Inflater<R>>),
}

impl<R: Read> Decompressor<R> {
    /// Wraps `src`, decompressing as `compression` says.
    pub fn new(compression: Compression, src: R) -> Decompressor<R> {
        let inner = match compression {
            Compression::None => Inner::Plain(src),
            Compression::Gzip => {
                Inner::Inflate(Box::new(Inflater::new(src, Format::Gzip)))
            }
            Compression::Zlib => {
                Inner::Inflate(Box::new(Inflater::new(src, Format::Zlib)))
            }
        };
        Decompressor { inner }
    }

    /// The wrapped source.
    pub fn get_ref(&self) -> &R {
        match &self.inner {
            Inner::Plain(r) => r,
            Inner::Inflate(i) => i.input.get_ref(),
        }
    }

    /// The wrapped source, mutably. Reading from it directly desynchronises
    /// a compressed stream.
    pub fn get_mut(&mut self) -> &mut R {
        match &mut self.inner {
            Inner::Plain(r) => r,
            Inner::Inflate(i) => i.input.get_mut(),
        }
    }
}

impl<R: Read> Read for Decompressor<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        match &mut self.inner {
            Inner::Plain(r) => r.read(out),
            Inner::Inflate(i) => i.read(out),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Gzip,
    Zlib,
}

impl Format {
    fn name(self) -> &'static str {
        match self {
            Format::Gzip => "gzip",
            Format::Zlib => "zlib",
        }
    }

    fn decompress(self) -> Decompress {
        match self {
            Format::Gzip => Decompress::new_gzip(15),
            Format::Zlib => Decompress::new(true),
        }
    }
}

/// Drives `flate2`'s low-level inflater.
///
/// Written by hand over [`Decompress`] rather than using `flate2::read`'s
/// decoders because those report a zlib stream that stops early as a clean
/// end of file; knowing whether the stream reached its end (and checked
/// its trailer) is the whole point of this type.
struct Inflater<R> {
    input: BufReader<R>,
    format: Format,
    z: Decompress,
    /// True between members: the previous member ended (or none began),
    /// so the end of the input here is a clean end.
    between_members: bool,
    /// True before the first member: an empty input is not a stream.
    started: bool,
    /// The error that stopped the stream, a copy of which every later
    /// read returns (`io::Error` cannot be cloned).
    failed: Option<io::Error>,
}

impl<R> fmt::Debug for Inflater<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Inflater")
            .field("format", &self.format)
            .field("total_in", &self.z.total_in())
            .field("total_out", &self.z.total_out())
            .finish_non_exhaustive()
    }
}

impl<R: Read> Inflater<R> {
    fn new(src: R, format: Format) -> Inflater<R> {
        Inflater {
            input: BufReader::with_capacity(64 * 1024, src),
            format,
            z: format.decompress(),
            between_members: true,
            started: false,
            failed: None,
        }
    }

    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if let Some(e) = &self.failed {
            return Err(copy_io(e));
        }
        if out.is_empty() {
            return Ok(0);
        }
        let res = self.inflate(out);
        if let Err(e) = &res {
            self.failed = Some(copy_io(e));
        }
        res
    }

    fn inflate(&mut self, out: &mut [u8]) -> io::Result<usize> {
        loop {
            let input = match self.input.fill_buf() {
                Ok(input) => input,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            let eof = input.is_empty();
            if self.between_members {
                if eof {
                    if self.started {
                        return Ok(0);
                    }
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        format!("empty input is not a {} stream", self.fmt()),
                    ));
                }
                if self.started {
                    if self.format == Format::Zlib {
                        // TensorFlow reads one zlib stream and ignores what
                        // follows it; whatever it is, it would be lost.
                        return Err(io::Error::new(
                            io::ErrorKind::InvalidData,
                            "data after the end of the zlib stream (a zlib \
                             file holds one stream)",
                        ));
                    }
                    self.z = self.format.decompress();
                }
                self.started = true;
                self.between_members = false;
            }
            let (in0, out0) = (self.z.total_in(), self.z.total_out());
            let res = self.z.decompress(input, out, FlushDecompress::None);
            let consumed = (self.z.total_in() - in0) as usize;
            let produced = (self.z.total_out() - out0) as usize;
            self.input.consume(consumed);
            let status = match res {
                Ok(status) => status,
                Err(e) => {
                    let msg = format!("corrupt {} stream: {e}", self.fmt());
                    let kind = io::ErrorKind::InvalidData;
                    if produced == 0 {
                        return Err(io::Error::new(kind, msg));
                    }
                    // Hand out what was inflated before the damage (as a
                    // reader fed smaller chunks would have); the error
                    // comes with the next read.
                    self.failed = Some(io::Error::new(kind, msg));
                    return Ok(produced);
                }
            };
            if status == Status::StreamEnd {
                self.between_members = true;
            }
            if produced > 0 {
                return Ok(produced);
            }
            if status == Status::StreamEnd {
                continue;
            }
            if eof {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!(
                        "{} stream is cut short: input ends before the \
                         stream's end and trailer",
                        self.fmt()
                    ),
                ));
            }
            if consumed == 0 {
                // Neither input taken nor output made with room for both:
                // the inflater cannot progress, and looping would spin.
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("corrupt {} stream: no progress", self.fmt()),
                ));
            }
        }
    }

    fn fmt(&self) -> &'static str {
        self.format.name()
    }
}

/// True if the first KiB of `start` is printable UTF-8 text (tabs and
/// line breaks allowed; a character cut at the end is allowed).
fn looks_like_text(start: &[u8]) -> bool {
    let prefix = &start[..start.len().min(1024)];
    let text = match std::str::from_utf8(prefix) {
        Ok(t) => t,
        Err(e) if e.error_len().is_none() => {
            std::str::from_utf8(&prefix[..e.valid_up_to()]).unwrap_or("")
        }
        Err(_) => return false,
    };
    text.chars()
        .all(|c| !c.is_control() || matches!(c, '\t' | '\r' | '\n'))
}

/// True if the first bytes of `start`, a zlib stream, inflate without
/// error (as far as they go).
fn inflates(start: &[u8]) -> bool {
    let input = &start[..start.len().min(64)];
    // 64 bytes of deflate inflate to at most ~17 KB.
    let mut out = vec![0u8; 32 << 10];
    flate2::Decompress::new(true)
        .decompress(input, &mut out, flate2::FlushDecompress::None)
        .is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// A source that fails with one of feedstock's errors (an object
    /// store's, through `io::Read`): every read of the inflater after it
    /// gives that error whole, its kind, file and offset said once.
    #[test]
    fn a_source_error_is_returned_whole_on_every_later_read() {
        struct Failing;
        impl Read for Failing {
            fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
                let e = Error::failed_precondition("the object changed")
                    .with_file("s3://b/k.gz")
                    .with_offset(9);
                Err(io::Error::other(e))
            }
        }
        let want = Error::failed_precondition("the object changed")
            .with_file("s3://b/k.gz")
            .with_offset(9);
        let mut z = Inflater::new(Failing, Format::Gzip);
        for _ in 0..2 {
            let e = Error::io(z.read(&mut [0u8; 8]).unwrap_err());
            assert_eq!(e, want, "{e}");
        }
    }

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(
            Vec::new(),
            flate2::Compression::default(),
        );
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn zlib(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::ZlibEncoder::new(
            Vec::new(),
            flate2::Compression::default(),
        );
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn read_all(c: Compression, data: &[u8]) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        c.reader(data).read_to_end(&mut out)?;
        Ok(out)
    }

    #[test]
    fn sniff_finds_compressed_streams_and_not_text_that_looks_like_zlib() {
        for data in [&b""[..], b"1,2\n", &[0u8; 5000], b"x"] {
            assert_eq!(
                Compression::sniff(&gzip(data)),
                Some(Compression::Gzip)
            );
            assert_eq!(
                Compression::sniff(&zlib(data)),
                Some(Compression::Zlib)
            );
        }
        // Each of these starts with a valid zlib header check; none is
        // zlib. (`80` used to make `convert csv` refuse such a file.)
        for text in [
            &b"80,5\n1,2\n"[..],
            b"8O,3\n",
            b"XG,1\n",
            b"(S)\n",
            b"x^2,1\n",
            b"HK\n",
            b"HKG,1.5\n",
            "x^é,1\n".as_bytes(),
        ] {
            let head = (u16::from(text[0]) << 8) | u16::from(text[1]);
            assert_eq!(head % 31, 0, "{text:?} has a zlib header check");
            assert_eq!(Compression::sniff(text), None, "{text:?}");
        }
        // A preset dictionary (FDICT, 0x20) is never what a writer of
        // TFRecords or text uses.
        assert_eq!(Compression::sniff(&[0x78, 0xbb, 1, 2, 3]), None);
        assert_eq!(Compression::sniff(&[0x1f, 0x8b, 7]), None);
        assert_eq!(Compression::sniff(b"a"), None);
    }

    #[test]
    fn from_str_accepts_tf_and_lowercase_names() {
        assert_eq!("".parse::<Compression>().unwrap(), Compression::None);
        assert_eq!("GZIP".parse::<Compression>().unwrap(), Compression::Gzip);
        assert_eq!("zlib".parse::<Compression>().unwrap(), Compression::Zlib);
        let err = "lz4".parse::<Compression>().unwrap_err();
        assert_eq!(err.kind(), crate::Kind::InvalidArgument);
    }

    #[test]
    fn from_path_detects_by_extension() {
        assert_eq!(Compression::from_path("x.gz"), Compression::Gzip);
        assert_eq!(Compression::from_path("x.zz"), Compression::Zlib);
        assert_eq!(Compression::from_path("x.zlib"), Compression::Zlib);
        assert_eq!(Compression::from_path("x.gzip"), Compression::None);
        assert_eq!(Compression::from_path("gz"), Compression::None);
    }

    #[test]
    fn round_trips_both_formats_and_passes_plain_through() {
        let data: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        assert_eq!(read_all(Compression::Gzip, &gzip(&data)).unwrap(), data);
        assert_eq!(read_all(Compression::Zlib, &zlib(&data)).unwrap(), data);
        assert_eq!(read_all(Compression::None, &data).unwrap(), data);
    }

    #[test]
    fn concatenated_gzip_members_are_read_in_turn() {
        let mut both = gzip(b"abc");
        both.extend(gzip(b"def"));
        assert_eq!(read_all(Compression::Gzip, &both).unwrap(), b"abcdef");
    }

    #[test]
    fn anything_after_a_zlib_stream_is_an_error() {
        // TensorFlow stops at the end of the first stream and drops the
        // rest, a second stream's records included.
        for tail in [zlib(b"def"), b"x".to_vec()] {
            let mut both = zlib(b"abc");
            both.extend(tail);
            let err = read_all(Compression::Zlib, &both).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::InvalidData);
            assert!(err.to_string().contains("after the end"), "{err}");
        }
    }

    #[test]
    fn every_cut_of_a_stream_is_an_error() {
        let data = b"the quick brown fox jumps over the lazy dog";
        for (c, full) in [
            (Compression::Gzip, gzip(data)),
            (Compression::Zlib, zlib(data)),
        ] {
            for cut in 0..full.len() {
                let err = read_all(c, &full[..cut]).unwrap_err();
                assert!(
                    matches!(
                        err.kind(),
                        io::ErrorKind::UnexpectedEof
                            | io::ErrorKind::InvalidData
                    ),
                    "{c} cut at {cut}: {err}"
                );
            }
        }
    }

    #[test]
    fn bad_trailer_is_invalid_data() {
        for (c, mut full) in [
            (Compression::Gzip, gzip(b"payload")),
            (Compression::Zlib, zlib(b"payload")),
        ] {
            let last = full.len() - 1;
            full[last] ^= 0x01;
            let err = read_all(c, &full).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::InvalidData, "{c}");
        }
    }

    #[test]
    fn garbage_after_a_member_is_invalid_data() {
        let mut full = gzip(b"payload");
        full.extend_from_slice(b"junk junk junk");
        let err = read_all(Compression::Gzip, &full).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
    }
}
