//! The sidecar: an index stored beside its file, and how it is read.
//!
//! ADVICE FOR HACKERS: a sidecar is input like any other, and the one
//! that reaches [`RecordIndex::load`] may be anything a directory can
//! hold under its name. Reading it therefore checks, in this order and
//! before trusting a byte of it: that it is a regular file (a pipe would
//! block the open, a device never end), that it is no larger than an
//! index of its data file can be, that it starts with the magic; then
//! its CRC and version; and last that the records it lists cover the
//! data file exactly, so that a sidecar that checks but lists too few
//! records cannot hide the rest of the file.

use std::io::Read;

use super::{Fingerprint, IndexCheck, RecordIndex};
use crate::checkpoint::INDEX;
use crate::error::{Error, Result};
use crate::io::compression::Compression;
use crate::io::fs::FileSystem;
use crate::io::tfrecord::framed_len;

/// What a sidecar's name adds after its file's name: `train.tfrecord`
/// has its index in `.train.tfrecord.feedstock-index` ([`sidecar_path`]).
pub const SIDECAR_SUFFIX: &str = ".feedstock-index";

/// The sidecar's first bytes. A TFRecord reader given a sidecar by
/// mistake recognises them and says what the file is.
pub(crate) const MAGIC: &[u8; 8] = &INDEX.magic();

/// The sidecar format version this build writes and reads.
pub const FORMAT_VERSION: u32 = INDEX.version();

/// The path of the sidecar index of `path`: a hidden file beside it,
/// `.NAME` + [`SIDECAR_SUFFIX`] where `NAME` is the file's name.
///
/// The leading dot keeps sidecars out of the data: a wildcard does not
/// match a leading `.` in any of the project's globs
/// ([`FileSystem::glob`] on local paths and
/// object stores, `match_filenames_once`, the command line's expansion,
/// the shell's and Python's), so `train-*` or `*` names the data files
/// only, however many sidecars lie beside them. The name is split at the
/// last `/`, so URLs work alike.
///
/// ```
/// use feedstock::io::index::{is_sidecar, sidecar_path};
/// assert_eq!(
///     sidecar_path("a/train.tfrecord"),
///     "a/.train.tfrecord.feedstock-index"
/// );
/// assert_eq!(
///     sidecar_path("s3://bucket/train-0"),
///     "s3://bucket/.train-0.feedstock-index"
/// );
/// assert_eq!(sidecar_path("train"), ".train.feedstock-index");
/// assert!(is_sidecar(&sidecar_path("a/train")));
/// assert!(!is_sidecar("a/train"));
/// ```
pub fn sidecar_path(path: &str) -> String {
    let (dir, name) = match path.rfind('/') {
        Some(i) => path.split_at(i + 1),
        None => ("", path),
    };
    format!("{dir}.{name}{SIDECAR_SUFFIX}")
}

/// True if `path` has the name of a sidecar index ([`sidecar_path`]).
pub fn is_sidecar(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.len() > 1 + SIDECAR_SUFFIX.len()
        && name.starts_with('.')
        && name.ends_with(SIDECAR_SUFFIX)
}

/// The sidecar's message (after magic and version).
#[derive(Clone, PartialEq, prost::Message)]
struct IndexProto {
    /// TensorFlow's name of the compression: "", "GZIP" or "ZLIB".
    #[prost(string, tag = "1")]
    compression: String,
    /// [`Fingerprint::size`].
    #[prost(uint64, tag = "2")]
    size: u64,
    /// [`Fingerprint::head_crc`].
    #[prost(fixed32, tag = "3")]
    head_crc: u32,
    /// [`Fingerprint::tail_crc`].
    #[prost(fixed32, tag = "4")]
    tail_crc: u32,
    /// [`Fingerprint::file_crc`].
    #[prost(fixed32, tag = "5")]
    file_crc: u32,
    /// The data length of every record, in order.
    #[prost(uint64, repeated, tag = "6")]
    lengths: Vec<u64>,
}

impl RecordIndex {
    /// Loads the sidecar of `path` ([`sidecar_path`]) and checks, as
    /// `check` says, that it still describes the file.
    ///
    /// The sidecar is checked before it is read: a sidecar that is not a
    /// regular file (a pipe, a device, a directory, or a link to one) is
    /// refused unopened, one larger than any index of the file can be
    /// unread, and one that does not start with the sidecar's magic after
    /// its first 12 bytes. After its CRC and version, the records it
    /// lists must cover the file exactly (each starting where the one
    /// before ends, the last ending at the file's end): checked here for
    /// an uncompressed file, and for a compressed one by
    /// [`IndexCheck::Full`], which inflates it.
    ///
    /// # Errors
    ///
    /// [`NotFound`](crate::Kind::NotFound) naming the sidecar if there is
    /// none; [`FailedPrecondition`](crate::Kind::FailedPrecondition)
    /// naming the sidecar if it is not a regular file;
    /// [`InvalidArgument`](crate::Kind::InvalidArgument) naming the
    /// sidecar if it is not a valid index of the file (too large, no
    /// magic, damaged, another version, or records that do not cover the
    /// file); [`FailedPrecondition`](crate::Kind::FailedPrecondition)
    /// naming the file if the index is stale (the file changed) or was
    /// written for another compression than `compression` (or the one the
    /// extension says).
    pub fn load(
        fs: &dyn FileSystem,
        path: &str,
        compression: Option<Compression>,
        check: IndexCheck,
    ) -> Result<RecordIndex> {
        let side = sidecar_path(path);
        let c = compression.unwrap_or_else(|| Compression::from_path(path));
        let bytes = read(fs, &side, path, c)?;
        let index = RecordIndex::from_bytes(path, &bytes)
            .map_err(|e| e.with_file(&side))?;
        if index.compression != c {
            return Err(Error::failed_precondition(format!(
                "the index {side} was written for compression {:?}, the \
                 file is read as {:?}",
                index.compression.tf_name(),
                c.tf_name()
            ))
            .with_file(path));
        }
        index.check(fs, check)?;
        Ok(index)
    }

    /// The sidecar bytes of this index (see the [module docs](crate::io::index)).
    pub fn to_bytes(&self) -> Vec<u8> {
        let lengths = self
            .offsets
            .windows(2)
            .map(|w| w[1] - w[0] - framed_len(0))
            .collect();
        let fp = &self.fingerprint;
        let msg = IndexProto {
            compression: self.compression.tf_name().to_owned(),
            size: fp.size,
            head_crc: fp.head_crc,
            tail_crc: fp.tail_crc,
            file_crc: fp.file_crc,
            lengths,
        };
        INDEX.seal(&prost::Message::encode_to_vec(&msg))
    }

    /// Reads sidecar bytes written by [`to_bytes`](Self::to_bytes) for
    /// the file `path`. The index is not checked against the file: call
    /// [`check`](Self::check), or use [`load`](Self::load).
    ///
    /// # Errors
    ///
    /// [`InvalidArgument`](crate::Kind::InvalidArgument) for bytes that are
    /// not a sidecar index, are damaged (the CRC), are of another format
    /// version, or (for an uncompressed file) list records that do not
    /// end where the file it describes ends.
    pub fn from_bytes(path: &str, bytes: &[u8]) -> Result<RecordIndex> {
        let bad = |why: String| {
            Error::invalid_argument(format!("not a record index: {why}"))
        };
        // Magic, version and checksum, said as the envelope says them
        // ("a damaged record index: its checksum does not match").
        let body = INDEX.open(bytes)?;
        let msg: IndexProto =
            prost::Message::decode(body).map_err(|e| bad(e.to_string()))?;
        let compression = msg
            .compression
            .parse::<Compression>()
            .map_err(|_| bad(format!("compression {:?}", msg.compression)))?;
        let mut offsets = Vec::with_capacity(msg.lengths.len() + 1);
        let mut at = 0u64;
        offsets.push(0);
        for len in msg.lengths {
            at = at
                .checked_add(framed_len(len))
                .filter(|&a| a < u64::MAX)
                .ok_or_else(|| bad("record lengths overflow".into()))?;
            offsets.push(at);
        }
        // The offsets tile the stream by construction (the first at 0,
        // each next one after the last one's frame); an uncompressed
        // stream is the file, so the last must end where it ends. (A
        // compressed file's stream length is known only by inflating it:
        // `IndexCheck::Full` checks it.)
        if compression == Compression::None && at != msg.size {
            return Err(bad(format!(
                "the records it lists cover {at} bytes, the file it \
                 describes has {} (a sidecar that lists too few or too \
                 many records)",
                msg.size
            )));
        }
        Ok(RecordIndex {
            path: path.to_owned(),
            compression,
            fingerprint: Fingerprint {
                size: msg.size,
                head_crc: msg.head_crc,
                tail_crc: msg.tail_crc,
                file_crc: msg.file_crc,
            },
            offsets,
            lens: None,
        })
    }

    /// Writes the sidecar ([`sidecar_path`]) atomically, replacing an
    /// existing one only if `force` is set.
    ///
    /// # Errors
    ///
    /// Those of [`OutputOptions::create`](crate::io::fs::OutputOptions::create)
    /// and of writing; [`FailedPrecondition`](crate::Kind::FailedPrecondition)
    /// for an index with damaged regions skipped.
    pub fn write_sidecar(&self, force: bool) -> Result<String> {
        use std::io::Write;
        let side = sidecar_path(&self.path);
        if self.has_gaps() {
            return Err(Error::failed_precondition(
                "an index built around damaged regions is not written as a \
                 sidecar (its format has no gaps): repair the file \
                 (`feedstock repair`) and index that",
            )
            .with_file(&self.path));
        }
        let mut out = crate::io::fs::OutputOptions::new()
            .force(force)
            .input(&self.path)
            .create(&side)?;
        out.write_all(&self.to_bytes())
            .map_err(|e| Error::io(e).with_file(&side))?;
        out.commit()?;
        Ok(side)
    }
}

/// The most bytes of a sidecar besides its record lengths: magic,
/// version, CRC, and the message's other fields (a compression name, a
/// size, three CRCs, the lengths' tag and length), with room to spare.
const MAX_OVERHEAD: u64 = 1024;

/// The most a deflate stream (gzip or zlib) expands: its format's limit
/// is 1032 to 1.
const MAX_INFLATION: u64 = 1032;

/// The most bytes an index of a file of `size` bytes, read with
/// compression `c`, can take: one length per record, a varint of at
/// least one byte, where each record takes at least 16 bytes of the
/// stream (a varint of `n` bytes stands for a record of at least
/// `2^(7(n-1))` bytes, so never more than one byte per 16 of stream).
fn max_len(size: u64, c: Compression) -> u64 {
    let stream = match c {
        Compression::None => size,
        _ => size.saturating_mul(MAX_INFLATION),
    };
    (stream / framed_len(0)).saturating_add(MAX_OVERHEAD)
}

/// The bytes of the sidecar `side` of the file `path`, read as `c`:
/// refused unopened if it is not a regular file, unread if it is larger
/// than an index of the file can be, and after its header if it does
/// not start with the magic.
fn read(
    fs: &dyn FileSystem,
    side: &str,
    path: &str,
    c: Compression,
) -> Result<Vec<u8>> {
    // Before opening: a FIFO blocks the open until a writer comes, a
    // device such as /dev/zero never ends.
    if fs.is_stream(side)? {
        return Err(Error::failed_precondition(format!(
            "the index {side} is not a regular file (a pipe or a device, \
             or a link to one): a sidecar index is a file `feedstock \
             index` writes; remove it"
        ))
        .with_file(side));
    }
    let size = fs.size(side)?;
    let data_size = fs.size(path)?;
    let max = max_len(data_size, c);
    let too_large = |size: u64| {
        Error::invalid_argument(format!(
            "not a record index: the index {side} is {size} bytes, larger \
             than any index of {path} ({data_size} bytes) can be ({max} \
             bytes at most)"
        ))
        .with_file(side)
    };
    if size > max {
        return Err(too_large(size));
    }
    let io = |e: std::io::Error| Error::io(e).with_file(side);
    let mut src = fs.open(side)?;
    let mut bytes = vec![0; MAGIC.len() + 4];
    let mut got = 0;
    while got < bytes.len() {
        match src.read(&mut bytes[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io(e)),
        }
    }
    if got < bytes.len() || &bytes[..MAGIC.len()] != MAGIC {
        return Err(Error::invalid_argument(
            "not a record index: no index header",
        )
        .with_file(side));
    }
    // The file may have grown since it was measured: read one byte past
    // the most allowed, to tell.
    src.take(max + 1 - got as u64)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > max {
        return Err(too_large(bytes.len() as u64));
    }
    Ok(bytes)
}
