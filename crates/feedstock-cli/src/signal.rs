//! SIGINT and SIGTERM while writing: stop cleanly, leave the old state.
//!
//! A subcommand that writes files calls [`install`] first and
//! [`check`] between records. The first signal only sets a flag; the
//! write loop sees it, returns an error, and the uncommitted outputs are
//! dropped, which removes their temporary files, so the targets are left
//! as they were. A second signal (when the first one is not seen, say
//! while blocked reading standard input) ends the process at once; its
//! temporary files are then left behind, hidden and named
//! `.NAME.*.feedstock-partial`, never at the target's name.
//!
//! A scan that runs inside the library (`feedstock index`) reads
//! through [`Interruptible`], whose reads fail once a signal is seen.
//!
//! The exit status after a signal is 128 + its number (130 for SIGINT,
//! 143 for SIGTERM), as shells report it.

use std::io::Read;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::sync::OnceLock;

use feedstock::io::fs::FileSystem;
use feedstock::{Error, Result};
use signal_hook::consts::{SIGINT, SIGTERM};

/// The signal received (0 for none), shared with the handlers.
static RECEIVED: OnceLock<Arc<AtomicUsize>> = OnceLock::new();

/// Catches SIGINT and SIGTERM from now on.
///
/// # Errors
///
/// Internal if a handler cannot be installed.
pub(crate) fn install() -> Result<()> {
    let flag = RECEIVED.get_or_init(|| Arc::new(AtomicUsize::new(0)));
    let seen = Arc::new(AtomicBool::new(false));
    for sig in [SIGINT, SIGTERM] {
        let fail = |e: std::io::Error| {
            Error::internal(format!("cannot catch signal {sig}: {e}"))
        };
        // Registered first, so it sees the flag as the previous signal
        // left it: it exits only on the second signal.
        signal_hook::flag::register_conditional_shutdown(
            sig,
            128 + sig,
            Arc::clone(&seen),
        )
        .map_err(fail)?;
        signal_hook::flag::register(sig, Arc::clone(&seen)).map_err(fail)?;
        signal_hook::flag::register_usize(sig, Arc::clone(flag), sig as usize)
            .map_err(fail)?;
    }
    Ok(())
}

/// The signal received since [`install`], if any.
pub(crate) fn received() -> Option<i32> {
    let sig = RECEIVED.get()?.load(Ordering::Relaxed);
    (sig != 0).then_some(sig as i32)
}

/// Cancelled if a signal has been received.
pub(crate) fn check() -> Result<()> {
    match received() {
        None => Ok(()),
        Some(sig) => Err(Error::cancelled(format!(
            "interrupted by signal {sig}: nothing was written"
        ))),
    }
}

/// A file system whose readers fail (with the [`check`] error) once a
/// signal is received, so that a long scan through the library, such as
/// the one [`RecordIndex::build`](feedstock::io::index::RecordIndex::build)
/// makes for `feedstock index`, stops at its next read and its caller
/// drops (removes) its uncommitted output.
#[derive(Debug)]
pub(crate) struct Interruptible<'a>(pub(crate) &'a dyn FileSystem);

impl FileSystem for Interruptible<'_> {
    fn open(&self, path: &str) -> Result<Box<dyn Read + Send>> {
        check()?;
        Ok(Box::new(CheckedRead(self.0.open(path)?)))
    }

    fn size(&self, path: &str) -> Result<u64> {
        self.0.size(path)
    }

    fn glob(&self, pattern: &str) -> Result<Vec<String>> {
        self.0.glob(pattern)
    }
}

/// A reader that checks for a signal before each read.
struct CheckedRead<R>(R);

impl<R: Read> Read for CheckedRead<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        check().map_err(std::io::Error::other)?;
        self.0.read(buf)
    }
}
