//! Output files written atomically: all or nothing, never over an input.
//!
//! An [`OutputFile`] writes into a temporary file next to its target and
//! renames it into place only when [`OutputFile::commit`] is called, so a
//! run that fails, is interrupted or panics leaves the old state: the
//! target as it was (or absent), and no temporary file (dropping an
//! uncommitted output removes the temporary file it created, and nothing
//! else). [`OutputOptions`] says what may be replaced:
//!
//! - an existing target is refused unless [`OutputOptions::force`] is
//!   set, and even then one that is not a regular file (a directory, a
//!   device, a pipe) is never replaced;
//! - a target that is one of the [inputs](OutputOptions::input), by name
//!   or through a symbolic or hard link (the same device and inode), is
//!   refused, force or not; an input `-` is standard input, refused as a
//!   target when it is that file (`< out`);
//! - the path `-` is standard output, written through as it comes (a
//!   stream cannot be taken back, so it is not atomic).
//!
//! Paths are strings, as in the rest of [`io::fs`](super): an object
//! store can later offer the same contract (a multipart upload completed
//! on commit) behind the same two calls.
//!
//! ```
//! use std::io::Write;
//! use feedstock::io::fs::{OutputOptions};
//! use feedstock::Kind;
//!
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("out.txt");
//! let path = path.to_str().unwrap();
//!
//! let mut out = OutputOptions::new().create(path)?;
//! out.write_all(b"hello")?;
//! // Nothing is at `path` until the output is committed.
//! assert!(!std::path::Path::new(path).exists());
//! out.commit()?;
//! assert_eq!(std::fs::read(path)?, b"hello");
//!
//! // A second run is refused, unless forced.
//! let err = OutputOptions::new().create(path).unwrap_err();
//! assert_eq!(err.kind(), Kind::FailedPrecondition);
//! OutputOptions::new().force(true).create(path)?.commit()?;
//! assert_eq!(std::fs::read(path)?, b"");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;
use std::fs::{self, Metadata};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use tempfile::NamedTempFile;

use super::io_error;
use crate::error::{Error, Result};

/// The path that stands for standard output (and, for readers, standard
/// input).
pub const STDIO: &str = "-";

/// What an [`OutputFile`] may replace; builds it.
#[derive(Debug, Clone, Default)]
pub struct OutputOptions {
    /// Replace an existing regular file.
    force: bool,
    /// Paths the output must not be.
    inputs: Vec<String>,
}

impl OutputOptions {
    /// The defaults: an existing target is refused, no inputs named.
    pub fn new() -> OutputOptions {
        OutputOptions::default()
    }

    /// Allows replacing an existing regular file (default false). A
    /// symbolic link at the target is itself replaced; the file it points
    /// to is left alone.
    pub fn force(&mut self, force: bool) -> &mut OutputOptions {
        self.force = force;
        self
    }

    /// Names an input of the run: an output that is this file (by path,
    /// or through a link to the same inode) is refused.
    pub fn input(&mut self, path: impl AsRef<str>) -> &mut OutputOptions {
        self.inputs.push(path.as_ref().to_owned());
        self
    }

    /// Checks the target and opens a temporary file next to it (or
    /// standard output for `-`).
    ///
    /// # Errors
    ///
    /// All name `path`: [`InvalidArgument`](crate::Kind::InvalidArgument)
    /// if it is one of the inputs;
    /// [`FailedPrecondition`](crate::Kind::FailedPrecondition) if it
    /// exists and `force` is not set, or it is not a regular file (or a
    /// link); the errors of creating the temporary file in the target's
    /// directory (a missing directory is
    /// [`NotFound`](crate::Kind::NotFound)).
    pub fn create(&self, path: &str) -> Result<OutputFile> {
        if path == STDIO {
            return Ok(OutputFile {
                path: path.to_owned(),
                force: self.force,
                sink: Sink::Stdout(io::stdout()),
            });
        }
        #[cfg(feature = "object-store")]
        if crate::io::store::AnyFs::is_url(path) {
            return self.create_remote(path);
        }
        // A `file://` URL writes its local file, named as given.
        let local = super::local_path(path);
        let target = Path::new(local.as_ref());
        self.check_target(path, target)?;
        let dir = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_owned(),
            _ => PathBuf::from("."),
        };
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .ok_or_else(|| {
                Error::invalid_argument("an output path must name a file")
                    .with_file(path)
            })?;
        // A leftover (after a kill -9) is hidden and says what it is.
        let temp = tempfile::Builder::new()
            .prefix(&format!(".{name}."))
            .suffix(".feedstock-partial")
            .tempfile_in(&dir)
            .map_err(|e| io_error(path, e))?;
        Ok(OutputFile {
            path: path.to_owned(),
            force: self.force,
            sink: Sink::Temp(temp, target.to_owned()),
        })
    }

    /// An object-store output: an upload that `commit` completes (a
    /// single PUT, or a multipart upload) and a drop aborts, so the object
    /// appears whole or not at all.
    #[cfg(feature = "object-store")]
    fn create_remote(&self, path: &str) -> Result<OutputFile> {
        use crate::io::fs::FileSystem;
        if self.inputs.iter().any(|i| i == path) {
            return Err(Error::invalid_argument(
                "the output is an input: refusing to overwrite an input",
            )
            .with_file(path));
        }
        let fs = crate::io::store::shared_fs();
        let store = fs.store()?;
        if !self.force {
            match store.size(path) {
                Ok(_) => {
                    return Err(Error::failed_precondition(
                        "already exists: refusing to replace it without \
                         force (--force)",
                    )
                    .with_file(path))
                }
                Err(e) if e.kind() == crate::Kind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
        Ok(OutputFile {
            path: path.to_owned(),
            force: self.force,
            sink: Sink::Remote(store.create(path)?),
        })
    }

    /// Refuses a target that is an input, or that exists and may not be
    /// replaced.
    fn check_target(&self, path: &str, target: &Path) -> Result<()> {
        for input in &self.inputs {
            let same = if input == STDIO {
                stdin_is(target)
            } else {
                same_file(Path::new(super::local_path(input).as_ref()), target)
            };
            if same {
                let input = if input == STDIO {
                    "standard input"
                } else {
                    input
                };
                return Err(Error::invalid_argument(format!(
                    "the output is the input {input}: refusing to \
                     overwrite an input"
                ))
                .with_file(path));
            }
        }
        let meta = match fs::symlink_metadata(target) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(io_error(path, e)),
        };
        let kind = meta.file_type();
        if !(kind.is_file() || kind.is_symlink()) {
            return Err(Error::failed_precondition(
                "exists and is not a regular file: refusing to replace it",
            )
            .with_file(path));
        }
        if !self.force {
            return Err(Error::failed_precondition(
                "already exists: refusing to replace it without force \
                 (--force)",
            )
            .with_file(path));
        }
        Ok(())
    }
}

/// True if `a` and `b` name the same file: the same path, or the same
/// device and inode (through a symbolic or hard link).
fn same_file(a: &Path, b: &Path) -> bool {
    if a == b {
        return true;
    }
    match (fs::metadata(a), fs::metadata(b)) {
        (Ok(ma), Ok(mb)) => same_inode(&ma, &mb),
        _ => false,
    }
}

/// True if standard input is the file at `target` (`feedstock convert
/// csv - out < out`).
#[cfg(unix)]
fn stdin_is(target: &Path) -> bool {
    use std::os::fd::AsFd;
    let stdin = io::stdin()
        .as_fd()
        .try_clone_to_owned()
        .and_then(|fd| fs::File::from(fd).metadata());
    match (stdin, fs::metadata(target)) {
        (Ok(a), Ok(b)) => same_inode(&a, &b),
        _ => false,
    }
}

#[cfg(not(unix))]
fn stdin_is(_: &Path) -> bool {
    false
}

#[cfg(unix)]
fn same_inode(a: &Metadata, b: &Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}

#[cfg(not(unix))]
fn same_inode(_: &Metadata, _: &Metadata) -> bool {
    // Without inodes, paths are compared after resolving links.
    false
}

/// An output being written: a temporary file renamed into place by
/// [`commit`](OutputFile::commit), or standard output.
///
/// Dropping it without committing removes the temporary file. See the
/// [module documentation](self).
pub struct OutputFile {
    /// The target, as given.
    path: String,
    /// Whether an existing target may be replaced at commit.
    force: bool,
    /// Where the bytes go.
    sink: Sink,
}

enum Sink {
    Stdout(io::Stdout),
    /// The temporary file, and the local path it is renamed to.
    Temp(NamedTempFile, PathBuf),
    /// A temporary file written and [closed](OutputFile::close): its
    /// path, without a descriptor, and the local path it is renamed to.
    Closed(tempfile::TempPath, PathBuf),
    /// An upload to an object store; dropping it aborts the upload.
    #[cfg(feature = "object-store")]
    Remote(crate::io::store::ObjectWriter),
}

impl fmt::Debug for OutputFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let temp = match &self.sink {
            Sink::Temp(t, _) => Some(t.path()),
            Sink::Closed(t, _) => Some(&**t),
            _ => None,
        };
        f.debug_struct("OutputFile")
            .field("path", &self.path)
            .field("temp", &temp)
            .finish()
    }
}

impl OutputFile {
    /// The target path, as given (`-` for standard output).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The temporary file being written, `None` for standard output.
    pub fn temp_path(&self) -> Option<&Path> {
        match &self.sink {
            Sink::Temp(t, _) => Some(t.path()),
            Sink::Closed(t, _) => Some(t),
            _ => None,
        }
    }

    /// Flushes, syncs and closes the temporary file, keeping it (and the
    /// output uncommitted) without holding a file descriptor: a command
    /// that writes many outputs, to commit them all or none, closes each
    /// when it is written instead of holding them all open. Standard
    /// output and object-store uploads are returned as they are.
    ///
    /// [`commit`](OutputFile::commit) renames the file into place as
    /// before; dropping it removes the file; writing to it fails.
    ///
    /// # Errors
    ///
    /// Those of flushing and syncing, naming the target; the temporary
    /// file is then removed.
    pub fn close(self) -> Result<OutputFile> {
        let OutputFile { path, force, sink } = self;
        let sink = match sink {
            Sink::Temp(mut t, target) => {
                t.flush().map_err(|e| io_error(&path, e))?;
                t.as_file().sync_all().map_err(|e| io_error(&path, e))?;
                Sink::Closed(t.into_temp_path(), target)
            }
            other => other,
        };
        Ok(OutputFile { path, force, sink })
    }

    /// Flushes, syncs the data to disk and renames the temporary file to
    /// the target; for standard output, flushes.
    ///
    /// # Errors
    ///
    /// Those of flushing and syncing, and
    /// [`FailedPrecondition`](crate::Kind::FailedPrecondition) if, without
    /// force, a file appeared at the target since
    /// [`create`](OutputOptions::create); all name the target, and leave
    /// no temporary file behind.
    pub fn commit(self) -> Result<()> {
        let path = self.path;
        match self.sink {
            Sink::Stdout(mut s) => s.flush().map_err(|e| io_error(&path, e)),
            #[cfg(feature = "object-store")]
            Sink::Remote(w) => w.commit(),
            Sink::Temp(mut t, target) => {
                t.flush().map_err(|e| io_error(&path, e))?;
                t.as_file().sync_all().map_err(|e| io_error(&path, e))?;
                let res = if self.force {
                    t.persist(&target)
                } else {
                    t.persist_noclobber(&target)
                };
                // On failure `PersistError` gives the temporary file back;
                // dropping it removes it.
                res.map(drop).map_err(|e| persist_error(&path, e.error))
            }
            Sink::Closed(t, target) => {
                let res = if self.force {
                    t.persist(&target)
                } else {
                    t.persist_noclobber(&target)
                };
                // As above, the `TempPath` given back removes the file.
                res.map_err(|e| persist_error(&path, e.error))
            }
        }
    }
}

/// The error of renaming a temporary file to `path`.
fn persist_error(path: &str, e: io::Error) -> Error {
    if e.kind() == io::ErrorKind::AlreadyExists {
        Error::failed_precondition(
            "appeared while it was being written: refusing to replace it \
             without force (--force)",
        )
        .with_file(path)
    } else {
        io_error(path, e)
    }
}

/// The error of writing to a [closed](OutputFile::close) output.
fn closed() -> io::Error {
    io::Error::other("the output is closed: it can only be committed")
}

impl Write for OutputFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.sink {
            Sink::Stdout(s) => s.write(buf),
            Sink::Temp(t, _) => t.write(buf),
            Sink::Closed(..) => Err(closed()),
            #[cfg(feature = "object-store")]
            Sink::Remote(w) => w.write(buf),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match &mut self.sink {
            Sink::Stdout(s) => s.write_all(buf),
            Sink::Temp(t, _) => t.write_all(buf),
            Sink::Closed(..) => Err(closed()),
            #[cfg(feature = "object-store")]
            Sink::Remote(w) => w.write_all(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.sink {
            Sink::Stdout(s) => s.flush(),
            Sink::Temp(t, _) => t.flush(),
            Sink::Closed(..) => Ok(()),
            #[cfg(feature = "object-store")]
            Sink::Remote(w) => w.flush(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Kind;

    fn s(p: &Path) -> &str {
        p.to_str().unwrap()
    }

    /// The names in `dir`, sorted.
    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn nothing_appears_until_commit_and_a_drop_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out");
        let mut out = OutputOptions::new().create(s(&target)).unwrap();
        out.write_all(b"partial").unwrap();
        let temp = out.temp_path().unwrap().to_owned();
        assert_eq!(temp.parent(), Some(dir.path()));
        assert!(temp.exists());
        assert!(!target.exists());
        drop(out);
        assert!(names(dir.path()).is_empty());
    }

    #[cfg(feature = "object-store")]
    #[test]
    fn a_file_url_writes_its_local_file_and_is_named_as_given() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out file");
        let url = format!("file://{}/out%20file", dir.path().display());
        let mut out = OutputOptions::new().create(&url).unwrap();
        assert_eq!(out.path(), url);
        out.write_all(b"data").unwrap();
        assert_eq!(out.temp_path().unwrap().parent(), Some(dir.path()));
        out.commit().unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"data");
        // The same file is refused without force, and as an input, by
        // either name; the error names the URL.
        let e = OutputOptions::new().create(&url).unwrap_err();
        assert_eq!(e.kind(), Kind::FailedPrecondition);
        assert_eq!(e.file(), Some(url.as_str()));
        let e = OutputOptions::new()
            .force(true)
            .input(s(&target))
            .create(&url)
            .unwrap_err();
        assert_eq!(e.kind(), Kind::InvalidArgument, "{e}");
        let e = OutputOptions::new()
            .force(true)
            .input(&url)
            .create(s(&target))
            .unwrap_err();
        assert_eq!(e.kind(), Kind::InvalidArgument, "{e}");
        assert_eq!(names(dir.path()), ["out file"]);
    }

    #[test]
    fn a_closed_output_holds_no_descriptor_and_commits_or_vanishes() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out");
        let mut out = OutputOptions::new().create(s(&target)).unwrap();
        out.write_all(b"data").unwrap();
        let mut out = out.close().unwrap();
        let temp = out.temp_path().unwrap().to_owned();
        assert_eq!(fs::read(&temp).unwrap(), b"data");
        assert!(out.write_all(b"more").is_err());
        #[cfg(target_os = "linux")]
        {
            // No descriptor of this process names the temporary file.
            let open = fs::read_dir("/proc/self/fd")
                .unwrap()
                .filter_map(|e| fs::read_link(e.unwrap().path()).ok())
                .any(|p| p == temp);
            assert!(!open, "{temp:?} is still open");
        }
        out.commit().unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"data");
        assert_eq!(names(dir.path()), ["out"]);
        // Dropped uncommitted, it leaves nothing; without force, a target
        // that appeared meanwhile is kept.
        let other = dir.path().join("other");
        let out = OutputOptions::new().create(s(&other)).unwrap();
        drop(out.close().unwrap());
        assert_eq!(names(dir.path()), ["out"]);
        let out = OutputOptions::new().create(s(&other)).unwrap();
        let out = out.close().unwrap();
        fs::write(&other, b"theirs").unwrap();
        let e = out.commit().unwrap_err();
        assert_eq!(e.kind(), Kind::FailedPrecondition);
        assert_eq!(fs::read(&other).unwrap(), b"theirs");
        assert_eq!(names(dir.path()), ["other", "out"]);
    }

    #[test]
    fn a_failed_run_leaves_the_old_file_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out");
        fs::write(&target, b"old").unwrap();
        let mut out =
            OutputOptions::new().force(true).create(s(&target)).unwrap();
        out.write_all(b"new, but the run fails").unwrap();
        drop(out);
        assert_eq!(fs::read(&target).unwrap(), b"old");
        assert_eq!(names(dir.path()), ["out"]);
    }

    #[test]
    fn an_existing_file_is_replaced_only_with_force() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out");
        fs::write(&target, b"old").unwrap();
        let err = OutputOptions::new().create(s(&target)).unwrap_err();
        assert_eq!(err.kind(), Kind::FailedPrecondition);
        assert_eq!(err.file(), Some(s(&target)));
        assert!(err.message().contains("already exists"), "{err}");
        let mut out =
            OutputOptions::new().force(true).create(s(&target)).unwrap();
        out.write_all(b"new").unwrap();
        out.commit().unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"new");
    }

    #[test]
    fn a_file_that_appears_meanwhile_is_not_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out");
        let out = OutputOptions::new().create(s(&target)).unwrap();
        fs::write(&target, b"someone else's").unwrap();
        let err = out.commit().unwrap_err();
        assert_eq!(err.kind(), Kind::FailedPrecondition);
        assert_eq!(fs::read(&target).unwrap(), b"someone else's");
        assert_eq!(names(dir.path()), ["out"]);
    }

    #[cfg(unix)]
    #[test]
    fn an_input_is_refused_by_name_symlink_or_hard_link() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in.csv");
        fs::write(&input, b"1,2\n").unwrap();
        let sym = dir.path().join("sym");
        std::os::unix::fs::symlink(&input, &sym).unwrap();
        let hard = dir.path().join("hard");
        fs::hard_link(&input, &hard).unwrap();
        for target in [&input, &sym, &hard] {
            let err = OutputOptions::new()
                .force(true)
                .input(s(&input))
                .create(s(target))
                .unwrap_err();
            assert_eq!(err.kind(), Kind::InvalidArgument, "{target:?}");
            assert!(err.message().contains("is the input"), "{err}");
        }
        assert_eq!(fs::read(&input).unwrap(), b"1,2\n");
    }

    #[cfg(unix)]
    #[test]
    fn force_replaces_a_symlink_not_the_file_it_points_to() {
        let dir = tempfile::tempdir().unwrap();
        let other = dir.path().join("other");
        fs::write(&other, b"keep").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&other, &link).unwrap();
        let mut out =
            OutputOptions::new().force(true).create(s(&link)).unwrap();
        out.write_all(b"new").unwrap();
        out.commit().unwrap();
        assert_eq!(fs::read(&other).unwrap(), b"keep");
        assert!(!fs::symlink_metadata(&link).unwrap().is_symlink());
        assert_eq!(fs::read(&link).unwrap(), b"new");
    }

    #[test]
    fn a_directory_or_device_is_never_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let err = OutputOptions::new()
            .force(true)
            .create(s(dir.path()))
            .unwrap_err();
        assert_eq!(err.kind(), Kind::FailedPrecondition);
        assert!(err.message().contains("not a regular file"), "{err}");
        if Path::new("/dev/null").exists() {
            let err = OutputOptions::new()
                .force(true)
                .create("/dev/null")
                .unwrap_err();
            assert!(err.message().contains("not a regular file"), "{err}");
        }
    }

    #[test]
    fn a_missing_directory_is_not_found() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("no/such/dir/out");
        let err = OutputOptions::new().create(s(&target)).unwrap_err();
        assert_eq!(err.kind(), Kind::NotFound);
        assert_eq!(err.file(), Some(s(&target)));
    }

    #[test]
    fn dash_is_standard_output() {
        let out = OutputOptions::new().input("-").create("-").unwrap();
        assert_eq!(out.path(), "-");
        assert_eq!(out.temp_path(), None);
    }
}
