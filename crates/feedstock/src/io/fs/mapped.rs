//! Copies out of a mapped file that survive the file being truncated
//! meanwhile.
//!
//! A read of a mapped page past the file's end faults with SIGBUS, which
//! kills the process. [`copy_guarded`] marks the mapping it copies from
//! (per thread); a SIGBUS inside it maps a page of zeros over the
//! faulting page, notes the fault and returns, so the copy finishes and
//! its caller turns the fault into an error naming the file. A SIGBUS
//! anywhere else is handed back to the action that was there before
//! (by default, the end of the process, as without this module).
//!
//! Written by hand (with `libc`) because no maintained crate offers
//! this: memmap2 leaves truncation to its caller.

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Once, OnceLock};

thread_local! {
    /// The address range being copied from by this thread (start, end),
    /// or (0, 0). Const-initialised and `Copy`: safe to read in a signal
    /// handler.
    static GUARDED: Cell<(usize, usize)> = const { Cell::new((0, 0)) };
    /// Set by the handler when a guarded copy faulted.
    static FAULTED: Cell<bool> = const { Cell::new(false) };
}

/// The system's page size.
static PAGE: AtomicUsize = AtomicUsize::new(4096);

/// The SIGBUS action in place before ours.
static PREVIOUS: OnceLock<libc::sigaction> = OnceLock::new();

/// Runs `copy`, which reads only from `region`, with a SIGBUS in the
/// region caught. Returns false when a page of it faulted (the file
/// shrank): those pages then read as zeros, and the mapping must not be
/// read again.
pub(crate) fn copy_guarded(region: &[u8], copy: impl FnOnce()) -> bool {
    install();
    let start = region.as_ptr() as usize;
    GUARDED.with(|g| g.set((start, start + region.len())));
    FAULTED.with(|f| f.set(false));
    copy();
    GUARDED.with(|g| g.set((0, 0)));
    !FAULTED.with(Cell::get)
}

fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: sysconf and sigaction are called with valid arguments;
        // the handler is an `extern "C"` function that only reads
        // const-initialised thread locals, calls mmap and sigaction, and
        // writes a thread-local flag.
        unsafe {
            let page = libc::sysconf(libc::_SC_PAGESIZE);
            if page > 0 {
                PAGE.store(page as usize, Ordering::Relaxed);
            }
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_sigbus as *const () as usize;
            action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            libc::sigemptyset(&mut action.sa_mask);
            let mut previous: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(libc::SIGBUS, &action, &mut previous) == 0 {
                let _ = PREVIOUS.set(previous);
            }
        }
    });
}

extern "C" fn on_sigbus(
    _sig: libc::c_int,
    info: *mut libc::siginfo_t,
    _ctx: *mut libc::c_void,
) {
    // SAFETY: the kernel passes a valid siginfo for SA_SIGINFO handlers;
    // mmap with MAP_FIXED replaces only the faulting page, which lies in
    // the mapping this thread is copying from.
    unsafe {
        let addr = (*info).si_addr() as usize;
        let (start, end) = GUARDED.with(Cell::get);
        if addr >= start && addr < end {
            let page = PAGE.load(Ordering::Relaxed);
            let at = addr & !(page - 1);
            let p = libc::mmap(
                at as *mut libc::c_void,
                page,
                libc::PROT_READ,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                -1,
                0,
            );
            if p != libc::MAP_FAILED {
                FAULTED.with(|f| f.set(true));
                return;
            }
        }
        // Not ours: the action before ours takes over when the faulting
        // instruction runs again.
        match PREVIOUS.get() {
            Some(previous) => {
                libc::sigaction(libc::SIGBUS, previous, std::ptr::null_mut());
            }
            None => {
                libc::signal(libc::SIGBUS, libc::SIG_DFL);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_from_a_truncated_mapping_reports_the_fault_instead_of_dying() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("shrinks.bin");
        std::fs::write(&path, vec![7u8; 64 * 1024]).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        // SAFETY: the test truncates the file on purpose; the mapping is
        // read only through `copy_guarded`.
        let map = unsafe { memmap2::Mmap::map(&file) }.unwrap();
        let mut before = Vec::new();
        assert!(copy_guarded(&map, || before.extend_from_slice(&map[..])));
        assert!(before.iter().all(|&b| b == 7));
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(0)
            .unwrap();
        let mut after = Vec::new();
        assert!(!copy_guarded(&map, || after.extend_from_slice(&map[..])));
        assert_eq!(after.len(), 64 * 1024);
    }
}
