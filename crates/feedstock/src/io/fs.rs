//! The filesystem readers open files through.
//!
//! Readers never call `std::fs` themselves: they ask a [`FileSystem`] to
//! open a path, tell its size or expand a glob pattern. [`LocalFs`] is the
//! local disk; object stores (S3, GCS, Azure, HTTP) implement the same
//! trait in `io::store`, and [`default_fs`] takes both paths and URLs.
//!
//! Every error names the path it is about, so a failure deep in a pipeline
//! still says which file was wrong:
//!
//! ```
//! use feedstock::io::fs::{FileSystem, LocalFs};
//! use feedstock::Kind;
//!
//! let err = LocalFs.open("no/such/file.csv").err().unwrap();
//! assert_eq!(err.kind(), Kind::NotFound);
//! assert_eq!(err.file(), Some("no/such/file.csv"));
//! ```
//!
//! Random access goes through [`FileSystem::open_read_at`]: a [`ReadAt`]
//! handle reads any byte range from any thread (`pread` on a local file,
//! a ranged GET on an object store), kept open for as long as its user
//! needs it.
//!
//! Writing goes through [`OutputOptions`] and [`OutputFile`]: atomic
//! outputs (a temporary file renamed into place on commit) that never
//! replace an input or, unless forced, an existing file.
//!
//! The path `-` ([`STDIO`]) is standard input to [`LocalFs::open`] and
//! standard output to [`OutputOptions::create`].

use std::fmt::Debug;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::sync::Arc;

use bytes::Bytes;

use crate::error::{Error, Result};

#[cfg(unix)]
mod mapped;
pub mod output;

pub use output::{OutputFile, OutputOptions, STDIO};

/// Where files come from: the local disk, or an object store.
///
/// Implementations are shared by every reader thread, hence
/// `Send + Sync`. Paths are strings, as they are in a filename queue.
pub trait FileSystem: Send + Sync + Debug {
    /// Opens `path` for sequential reading from its first byte.
    ///
    /// # Errors
    ///
    /// [`Kind::NotFound`](crate::Kind::NotFound) if there is no such file,
    /// [`Kind::FailedPrecondition`](crate::Kind::FailedPrecondition) if `path` is a directory,
    /// [`Kind::PermissionDenied`](crate::Kind::PermissionDenied) if it may not be read; each names `path`.
    fn open(&self, path: &str) -> Result<Box<dyn Read + Send>>;

    /// Opens `path` for sequential reading from byte `offset`, which is
    /// how a reader resumes inside a file after
    /// [`Reader::restore_state`](crate::reader::Reader::restore_state).
    ///
    /// The default opens the file and reads and discards `offset` bytes;
    /// a filesystem that can seek should override it.
    ///
    /// # Errors
    ///
    /// As [`FileSystem::open`], and [`Kind::DataLoss`](crate::Kind::DataLoss) if the file is
    /// shorter than `offset`.
    fn open_at(
        &self,
        path: &str,
        offset: u64,
    ) -> Result<Box<dyn Read + Send>> {
        let mut file = self.open(path)?;
        skip_exactly(&mut file, offset).map_err(|e| e.with_file(path))?;
        Ok(file)
    }

    /// Opens `path` at byte `offset` as a stream of shared chunks, where
    /// the file system holds its bytes in chunks already (an object
    /// store's responses): a reader then takes its records out of them
    /// without a copy. `None`, the default, where it does not: read
    /// through [`open_at`](FileSystem::open_at).
    ///
    /// # Errors
    ///
    /// As [`FileSystem::open_at`].
    fn open_chunks_at(
        &self,
        path: &str,
        offset: u64,
    ) -> Result<Option<Box<dyn ChunkRead>>> {
        let _ = (path, offset);
        Ok(None)
    }

    /// The size of the file at `path` in bytes.
    ///
    /// # Errors
    ///
    /// As [`FileSystem::open`].
    fn size(&self, path: &str) -> Result<u64>;

    /// The paths matching the glob `pattern`, sorted.
    ///
    /// Local files are matched as TensorFlow's `GetMatchingPaths` matches
    /// them (POSIX `fnmatch` per component, without `FNM_PERIOD`: `*`
    /// matches a leading dot; a pattern without a directory is matched in
    /// `.` and its matches spelled `./name`), except that feedstock's own
    /// sidecar indexes ([`sidecar_path`](crate::io::index::sidecar_path))
    /// match only a pattern that spells their leading dot.
    ///
    /// # Errors
    ///
    /// [`Kind::NotFound`](crate::Kind::NotFound) naming the pattern if nothing matches (a pipeline
    /// over zero files is always a mistake), [`Kind::InvalidArgument`](crate::Kind::InvalidArgument) if
    /// the pattern is malformed.
    fn glob(&self, pattern: &str) -> Result<Vec<String>>;

    /// Opens `path` for positioned reads: one handle serves any number of
    /// [`ReadAt::read_at`] calls, from any thread, for as long as it is
    /// kept (the record index's random access and the global shuffle keep
    /// one per file). `None` if this file system has no positioned reads,
    /// or `path` is a stream; callers then read forward through
    /// [`open_at`](Self::open_at).
    ///
    /// The default says `None`: a file system that can read at an offset
    /// without reading what comes before should override it.
    ///
    /// # Errors
    ///
    /// As [`FileSystem::open`].
    fn open_read_at(&self, path: &str) -> Result<Option<Arc<dyn ReadAt>>> {
        let _ = path;
        Ok(None)
    }

    /// True if `path` is a stream rather than a file with a size: standard
    /// input, a pipe, a device such as `/dev/zero`. Readers that size
    /// their file first (fixed-length records, whole files) refuse one.
    ///
    /// The default says no: an object store's objects all have a size.
    ///
    /// # Errors
    ///
    /// As [`FileSystem::size`].
    fn is_stream(&self, path: &str) -> Result<bool> {
        let _ = path;
        Ok(false)
    }

    /// Whether a reader streaming `path` should read it on a thread of
    /// its own, ahead of the records it hands out
    /// ([`ReaderBuilder::from_reader_ahead`](crate::io::tfrecord::ReaderBuilder::from_reader_ahead)):
    /// only where every read returns, and costs the reading thread a copy
    /// worth moving off it. The default says no; the local file system
    /// says yes for a regular file.
    fn reads_ahead(&self, path: &str) -> bool {
        let _ = path;
        false
    }
}

/// A stream that hands its bytes over as shared chunks, in order
/// ([`FileSystem::open_chunks_at`]).
pub trait ChunkRead: Send {
    /// The next chunk of the stream; empty only at its end. An error
    /// comes after every byte before it was handed over, and names the
    /// file and offset as [`Read`] errors of the same stream would.
    ///
    /// # Errors
    ///
    /// Those of reading the stream.
    fn next_chunk(&mut self) -> io::Result<bytes::Bytes>;
}

/// A file open for positioned reads ([`FileSystem::open_read_at`]): any
/// byte range, from any number of threads at once, with no cursor shared
/// between them.
///
/// ```
/// use feedstock::io::fs::{FileSystem, LocalFs};
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("f.bin");
/// std::fs::write(&path, b"0123456789")?;
/// let file = LocalFs.open_read_at(path.to_str().unwrap())?.unwrap();
/// assert_eq!(&file.read_at(6, 3)?[..], b"678");
/// assert_eq!(&file.read_at(2, 2)?[..], b"23");
/// // Fewer bytes only where the file ends.
/// assert_eq!(&file.read_at(8, 5)?[..], b"89");
/// assert!(file.read_at(20, 5)?.is_empty());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait ReadAt: Send + Sync + Debug {
    /// Reads `len` bytes from byte `offset`: all of them, or fewer only
    /// where the file ends (none at or past its end).
    ///
    /// The caller bounds `len`: a handle allocates it (or what is left of
    /// the file) before reading.
    ///
    /// # Errors
    ///
    /// Those of reading, naming the file and the offset.
    fn read_at(&self, offset: u64, len: usize) -> Result<Bytes>;

    /// A gap between two wanted ranges below which one read spanning both
    /// costs less than two reads: what a caller with many small ranges
    /// (records scattered through a file) merges them by.
    ///
    /// The default, 4 KiB, is a page: one local `pread` of a few pages
    /// costs about as much as one of a single page. An object store,
    /// whose requests cost milliseconds, says much more.
    fn merge_gap(&self) -> u64 {
        4 * 1024
    }

    /// Reads each of `ranges` (offset, length) as [`read_at`](Self::read_at)
    /// does, in the order given: what a caller with many ranges to read
    /// at once (a block of a global shuffle) asks, so that a handle can
    /// serve them better than one call each.
    ///
    /// The default makes one `read_at` call per range. A local file mapped
    /// in memory overrides it: one size check per call, then a copy per
    /// range, without a system call each.
    ///
    /// # Errors
    ///
    /// As [`read_at`](Self::read_at).
    fn read_ranges(&self, ranges: &[(u64, usize)]) -> Result<Vec<Bytes>> {
        ranges
            .iter()
            .map(|&(o, len)| self.read_at(o, len))
            .collect()
    }
}

/// The file system readers, producers and the CLI use unless told
/// otherwise: one shared instance for the whole process.
///
/// With the `object-store` feature (on by default) it is an
/// [`AnyFs`](crate::io::store::AnyFs): plain paths and `file://` URLs go to
/// the local disk, `s3://`, `gs://`, `az://` and `http(s)://` URLs to their
/// store, whose runtime starts on the first URL. Without it, [`LocalFs`].
pub fn default_fs() -> std::sync::Arc<dyn FileSystem> {
    use std::sync::{Arc, OnceLock};
    static FS: OnceLock<Arc<dyn FileSystem>> = OnceLock::new();
    Arc::clone(FS.get_or_init(|| {
        #[cfg(feature = "object-store")]
        let fs: Arc<dyn FileSystem> = crate::io::store::shared_fs();
        #[cfg(not(feature = "object-store"))]
        let fs: Arc<dyn FileSystem> = Arc::new(LocalFs);
        fs
    }))
}

/// The local path that `path` names: the path of a `file://` URL (with
/// the `object-store` feature, which parses them), else `path` as given.
/// Code that works on local files directly (metadata, renames) maps its
/// names through this and keeps naming `path` in messages.
///
/// ```
/// use feedstock::io::fs::local_path;
///
/// assert_eq!(local_path("data/train.tfrecord"), "data/train.tfrecord");
/// # #[cfg(feature = "object-store")]
/// assert_eq!(local_path("file:///data/a%20b.csv"), "/data/a b.csv");
/// ```
pub fn local_path(path: &str) -> std::borrow::Cow<'_, str> {
    #[cfg(feature = "object-store")]
    return crate::io::store::local_path(path);
    #[cfg(not(feature = "object-store"))]
    std::borrow::Cow::Borrowed(path)
}

/// Reads and discards exactly `n` bytes of `input`.
///
/// # Errors
///
/// [`Kind::DataLoss`](crate::Kind::DataLoss) with the offset reached if `input` ends first, or the
/// read error.
pub fn skip_exactly(input: &mut dyn Read, n: u64) -> Result<()> {
    let skipped = io::copy(&mut input.take(n), &mut io::sink())?;
    if skipped < n {
        return Err(Error::data_loss(format!(
            "file ended after {skipped} bytes, expected at least {n}"
        ))
        .with_offset(skipped));
    }
    Ok(())
}

/// The local filesystem, through `std::fs`.
#[derive(Debug, Clone, Copy, Default)]
pub struct LocalFs;

impl LocalFs {
    fn open_file(path: &str) -> Result<File> {
        let file = File::open(path).map_err(|e| io_error(path, e))?;
        // Opening a directory succeeds on Unix; reading it would then fail
        // with a confusing error, so refuse it here by name.
        let meta = file.metadata().map_err(|e| io_error(path, e))?;
        if meta.is_dir() {
            return Err(is_a_directory(path));
        }
        Ok(file)
    }

    /// [`FileSystem::open_read_at`] of the local file `path`, whose
    /// reads name it `name` in their errors (a `file://` URL, say).
    pub(crate) fn read_at_named(
        path: &str,
        name: &str,
    ) -> Result<Option<Arc<dyn ReadAt>>> {
        if path == STDIO || cfg!(not(any(unix, windows))) {
            return Ok(None);
        }
        let file = LocalFs::open_file(path)?;
        let meta = file.metadata().map_err(|e| io_error(path, e))?;
        if !meta.is_file() {
            return Ok(None);
        }
        Ok(Some(Arc::new(LocalReadAt {
            #[cfg(unix)]
            map: map_file(&file, meta.len()),
            #[cfg(unix)]
            poisoned: Default::default(),
            file,
            path: name.to_owned(),
            size: meta.len(),
        })))
    }
}

impl FileSystem for LocalFs {
    /// Opens `path`; `-` is standard input.
    fn open(&self, path: &str) -> Result<Box<dyn Read + Send>> {
        if path == STDIO {
            return Ok(Box::new(io::stdin()));
        }
        Ok(Box::new(LocalFs::open_file(path)?))
    }

    fn open_at(
        &self,
        path: &str,
        offset: u64,
    ) -> Result<Box<dyn Read + Send>> {
        if path == STDIO {
            let mut input = self.open(path)?;
            skip_exactly(&mut input, offset).map_err(|e| e.with_file(path))?;
            return Ok(input);
        }
        let mut file = LocalFs::open_file(path)?;
        let size = file.metadata().map_err(|e| io_error(path, e))?.len();
        if size < offset {
            return Err(Error::data_loss(format!(
                "file is {size} bytes, cannot resume at byte {offset}"
            ))
            .with_file(path));
        }
        file.seek(SeekFrom::Start(offset))
            .map_err(|e| io_error(path, e))?;
        Ok(Box::new(file))
    }

    /// The size of the file at `path`; standard input (`-`), whose size
    /// is unknown, is FailedPrecondition.
    fn size(&self, path: &str) -> Result<u64> {
        if path == STDIO {
            return Err(Error::failed_precondition(
                "standard input has no size",
            )
            .with_file(path));
        }
        let meta = std::fs::metadata(path).map_err(|e| io_error(path, e))?;
        if meta.is_dir() {
            return Err(is_a_directory(path));
        }
        Ok(meta.len())
    }

    fn glob(&self, pattern: &str) -> Result<Vec<String>> {
        let found = super::glob::matching_paths(pattern)?;
        if found.is_empty() {
            return Err(Error::not_found(format!(
                "no files match the pattern {pattern}"
            ))
            .with_file(pattern));
        }
        Ok(found)
    }

    /// Yes for a regular file (its reads always return), not for `-`, a
    /// pipe or a device.
    fn reads_ahead(&self, path: &str) -> bool {
        path != STDIO && std::fs::metadata(path).is_ok_and(|m| m.is_file())
    }

    /// A handle on the open file (`pread`); `None` for standard input,
    /// a pipe or a device.
    fn open_read_at(&self, path: &str) -> Result<Option<Arc<dyn ReadAt>>> {
        LocalFs::read_at_named(path, path)
    }

    fn is_stream(&self, path: &str) -> Result<bool> {
        if path == STDIO {
            return Ok(true);
        }
        let meta = std::fs::metadata(path).map_err(|e| io_error(path, e))?;
        if meta.is_dir() {
            return Err(is_a_directory(path));
        }
        Ok(!meta.is_file())
    }
}

/// A local file open for positioned reads.
#[derive(Debug)]
struct LocalReadAt {
    file: File,
    /// The path it was opened by, for errors.
    path: String,
    /// Its size when opened: a read past it allocates no more than is
    /// there (a file that grew since is read up to this size).
    size: u64,
    /// The file mapped in memory, `size` bytes, for
    /// [`ReadAt::read_ranges`]; `None` where it could not be mapped (an
    /// empty file, no address space), and those reads are `pread`s.
    #[cfg(unix)]
    map: Option<memmap2::Mmap>,
    /// Set once a copy from the mapping faulted (the file shrank under
    /// it): its faulted pages read as zeros now, so it is never read
    /// again.
    #[cfg(unix)]
    poisoned: std::sync::atomic::AtomicBool,
}

/// `file` (of `size` bytes) mapped read-only for random access, or
/// `None` when it cannot be.
///
/// A page-cached record read from the mapping is a copy; a `pread` of it
/// is a system call, which for records of a few hundred bytes costs
/// several times the copy (`pread` of 800-byte records in random order:
/// 1.8 M records/s on one thread, a copy from the mapping 6.2 M), and
/// is what held the global shuffle to 0.3x the buffer shuffle. The mapping
/// is read only by [`LocalReadAt::read_ranges`], which checks first that
/// the file has not shrunk (a page past a file's end faults with SIGBUS).
/// `memmap2` rather than `libc::mmap` by hand: it is the maintained
/// crate for this, and unmaps on drop.
#[cfg(unix)]
fn map_file(file: &File, size: u64) -> Option<memmap2::Mmap> {
    if size == 0 {
        return None;
    }
    // SAFETY: the mapping is owned by this handle and read only after a
    // check that the file is still at least `size` bytes long (see
    // `read_ranges`), with its bytes copied out, never lent: a file
    // rewritten in place meanwhile changes what is copied, as it would
    // change what a `pread` returns. A truncation racing that check and
    // the copy faults, and `mapped::copy_guarded` turns the fault into
    // an error instead of the end of the process.
    let map = unsafe { memmap2::Mmap::map(file) }.ok()?;
    if map.len() as u64 != size {
        return None;
    }
    // Records are read in random order: no read-around of the pages
    // near each one on a cold file.
    let _ = map.advise(memmap2::Advice::Random);
    Some(map)
}

impl ReadAt for LocalReadAt {
    fn read_at(&self, offset: u64, len: usize) -> Result<Bytes> {
        let left = self.size.saturating_sub(offset);
        let len = len.min(usize::try_from(left).unwrap_or(usize::MAX));
        let mut buf = vec![0u8; len];
        let mut got = 0;
        while got < len {
            match pread(&self.file, &mut buf[got..], offset + got as u64) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(io_error(&self.path, e)
                        .with_offset(offset + got as u64))
                }
            }
        }
        buf.truncate(got);
        Ok(Bytes::from(buf))
    }

    /// Copies the ranges from the file's mapping into one buffer (each
    /// range a slice of it, which keeps it alive) after one check that
    /// the file has not shrunk since it was opened; `pread`s them, as
    /// the default does, when it has (their reads then end where the
    /// file does) or when the file is not mapped.
    fn read_ranges(&self, ranges: &[(u64, usize)]) -> Result<Vec<Bytes>> {
        #[cfg(unix)]
        if let Some(map) = self.map.as_ref().filter(|_| {
            !self.poisoned.load(std::sync::atomic::Ordering::Relaxed)
        }) {
            let now =
                self.file.metadata().map_err(|e| io_error(&self.path, e))?;
            if now.len() >= self.size {
                // One buffer for every range, each a slice of it: one
                // allocation per call, not per range.
                let spans: Vec<(usize, usize)> = ranges
                    .iter()
                    .map(|&(offset, len)| {
                        let a = offset.min(self.size) as usize;
                        (a, a + len.min(map.len() - a))
                    })
                    .collect();
                let total = spans.iter().map(|(a, b)| b - a).sum();
                let mut buf = Vec::with_capacity(total);
                let whole = mapped::copy_guarded(map, || {
                    for &(a, b) in &spans {
                        buf.extend_from_slice(&map[a..b]);
                    }
                });
                if !whole {
                    self.poisoned
                        .store(true, std::sync::atomic::Ordering::Relaxed);
                    return Err(Error::data_loss(
                        "the file shrank while it was read",
                    )
                    .with_file(&self.path));
                }
                let buf = Bytes::from(buf);
                let mut at = 0;
                return Ok(spans
                    .iter()
                    .map(|(a, b)| {
                        at += b - a;
                        buf.slice(at - (b - a)..at)
                    })
                    .collect());
            }
        }
        ranges
            .iter()
            .map(|&(o, len)| self.read_at(o, len))
            .collect()
    }
}

/// One positioned read: `pread` on Unix, `ReadFile` at an offset on
/// Windows (which moves the file's cursor, which nothing else uses).
#[cfg(unix)]
fn pread(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buf, offset)
}

#[cfg(windows)]
fn pread(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    std::os::windows::fs::FileExt::seek_read(file, buf, offset)
}

/// Never called: [`LocalFs::open_read_at`] opens no handle here.
#[cfg(not(any(unix, windows)))]
fn pread(_: &File, _: &mut [u8], _: u64) -> io::Result<usize> {
    Err(io::ErrorKind::Unsupported.into())
}

fn is_a_directory(path: &str) -> Error {
    Error::failed_precondition("is a directory, not a file").with_file(path)
}

/// Converts an I/O error about `path` into an [`Error`] naming it.
pub fn io_error(path: &str, err: io::Error) -> Error {
    let is_dir = err.kind() == io::ErrorKind::IsADirectory;
    let e = Error::io(err);
    if is_dir {
        return is_a_directory(path);
    }
    e.with_file(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Kind;

    /// A file of `n` bytes, byte `i` being `i * 7 % 251`, and a handle on
    /// it for positioned reads.
    fn patterned(n: usize) -> (tempfile::TempDir, String, Arc<dyn ReadAt>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.bin");
        let bytes: Vec<u8> = (0..n).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(&path, bytes).unwrap();
        let path = path.to_str().unwrap().to_owned();
        let file = LocalFs.open_read_at(&path).unwrap().unwrap();
        (dir, path, file)
    }

    #[cfg(unix)]
    #[test]
    fn a_local_file_is_mapped_unless_empty() {
        let (_dir, path, _) = patterned(10);
        let file = File::open(&path).unwrap();
        assert_eq!(map_file(&file, 10).map(|m| m.len()), Some(10));
        // A size that is not the file's is not mapped.
        assert!(map_file(&file, 11).is_none());
        let (_dir, path, _) = patterned(0);
        assert!(map_file(&File::open(&path).unwrap(), 0).is_none());
    }

    #[test]
    fn read_ranges_gives_what_read_at_gives_for_each_range() {
        let (_dir, _path, file) = patterned(10_000);
        let ranges = [
            (0, 16),
            (9_000, 800),
            (10, 0),
            (5, 30),
            (9_990, 50),
            (10_000, 4),
            (20_000, 8),
            (4_096, 4_096),
        ];
        let got = file.read_ranges(&ranges).unwrap();
        assert_eq!(got.len(), ranges.len());
        for (&(o, len), g) in ranges.iter().zip(&got) {
            assert_eq!(g, &file.read_at(o, len).unwrap(), "range {o}+{len}");
        }
        assert_eq!(got[4].len(), 10, "cut at the file's end");
        assert!(got[5].is_empty() && got[6].is_empty());
        assert_eq!(file.read_ranges(&[]).unwrap(), Vec::<Bytes>::new());
    }

    #[test]
    fn read_ranges_of_a_file_that_shrank_ends_where_it_ends() {
        // Read through the mapping, a page past the file's end would
        // raise SIGBUS: the size check sends these to pread instead.
        let (_dir, path, file) = patterned(3 * 4096);
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(100)
            .unwrap();
        let got = file.read_ranges(&[(50, 100), (8_192, 64)]).unwrap();
        let want: Vec<u8> = (50..100).map(|i| (i * 7 % 251) as u8).collect();
        assert_eq!(&got[0][..], &want[..]);
        assert!(got[1].is_empty());
    }

    #[test]
    fn read_ranges_of_a_file_that_grew_stop_at_its_size_when_opened() {
        let (_dir, path, file) = patterned(100);
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        std::io::Write::write_all(&mut f, &[1; 100]).unwrap();
        let got = file.read_ranges(&[(90, 50)]).unwrap();
        assert_eq!(got[0].len(), 10);
    }

    #[test]
    fn permission_denied_maps_to_its_kind_and_names_the_file() {
        let err = io::Error::new(io::ErrorKind::PermissionDenied, "no");
        let e = io_error("secret.bin", err);
        assert_eq!(e.kind(), Kind::PermissionDenied);
        assert_eq!(e.file(), Some("secret.bin"));
    }

    #[test]
    fn a_glob_that_matches_nothing_is_not_found_naming_the_pattern() {
        let dir = tempfile::tempdir().unwrap();
        let pattern = format!("{}/*.rec", dir.path().to_str().unwrap());
        let e = LocalFs.glob(&pattern).unwrap_err();
        assert_eq!(e.kind(), Kind::NotFound, "{e}");
        assert_eq!(e.file(), Some(pattern.as_str()));
    }

    #[test]
    fn skip_exactly_reports_a_short_input() {
        let mut input: &[u8] = b"abc";
        let e = skip_exactly(&mut input, 5).unwrap_err();
        assert_eq!(e.kind(), Kind::DataLoss);
        assert_eq!(e.offset(), Some(3));
        let mut input: &[u8] = b"abcdef";
        skip_exactly(&mut input, 4).unwrap();
        assert_eq!(input, b"ef");
    }
}
