//! Standard output closed when the command started (`feedstock cat f
//! >&-`).
//!
//! Before `main`, Rust's runtime opens `/dev/null` on any of the three
//! standard descriptors that is closed, so a command run with standard
//! output closed would write everything into `/dev/null` and exit 0.
//! GNU `cat` fails instead ("write error: Bad file descriptor"), and so
//! does every subcommand here, before reading or writing anything (exit
//! 3, an I/O error on the output). A closed standard input reads as
//! empty, and a closed standard error drops the messages, as the runtime
//! leaves them.
//!
//! Which descriptors were closed can only be seen before the runtime
//! fills them: [`probe`] runs from the ELF `.init_array`, as every
//! program's constructors do. It is written here rather than with the
//! `ctor` crate because it is one function on one platform, and safe
//! code: it opens `/dev/null` until it gets a descriptor above 2, each
//! one at or below 2 being one that was closed, then closes them all.

use std::sync::atomic::{AtomicU8, Ordering};

/// Bit `n` set: descriptor `n` (0, 1 or 2) was closed at start.
static CLOSED_AT_START: AtomicU8 = AtomicU8::new(0);

/// Runs before the Rust runtime's own start-up code (`.init_array`
/// entries run before `main`, and the runtime fills the standard
/// descriptors in `main`'s prologue).
#[cfg(target_os = "linux")]
#[used]
#[link_section = ".init_array"]
static PROBE: extern "C" fn() = probe;

/// Records which of the standard descriptors are closed.
#[cfg(target_os = "linux")]
extern "C" fn probe() {
    use std::os::fd::AsRawFd;
    let mut held = Vec::new();
    let mut closed = 0u8;
    // Each open takes the lowest free number: at most three are taken
    // below 3.
    while let Ok(null) = std::fs::File::open("/dev/null") {
        let fd = null.as_raw_fd();
        if !(0..=2).contains(&fd) {
            break;
        }
        closed |= 1 << fd;
        held.push(null);
    }
    CLOSED_AT_START.store(closed, Ordering::Relaxed);
}

/// Fails if standard output was closed when the command started.
///
/// # Errors
///
/// An error saying so (exit status 3).
pub(crate) fn check() -> anyhow::Result<()> {
    if CLOSED_AT_START.load(Ordering::Relaxed) & 0b010 != 0 {
        anyhow::bail!(
            "standard output is closed (Bad file descriptor): nothing \
             could be written"
        );
    }
    Ok(())
}
