//! Use after `fork`: a pipeline, a queue its runners fill, or a
//! coordinator of those runners, touched in a forked child.
//!
//! A child made by `fork` has one thread (the one that forked) and a
//! copy of the parent's memory, mutexes included: the runner threads
//! that filled the queues are gone, and a lock one of them held at the
//! moment of the fork stays held for ever. A dequeue in the child would
//! wait for producers that do not exist, or for a lock nobody will free
//! (PyTorch's DataLoader workers are such children). So whatever started
//! runner threads records the fork generation it started in, and its
//! entry points compare it with the current one before taking any lock:
//! in a child they fail `FailedPrecondition` at once, saying to build the
//! pipeline inside the child.
//!
//! The generation is a counter that `pthread_atfork`'s child handler
//! increments, registered the first time anything is started: reading it
//! is one relaxed atomic load, where comparing process ids would be a
//! system call on every enqueue and dequeue.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use crate::error::{Error, Result};

/// Incremented in every child `fork` makes (once the handler is
/// registered, which happens before anything is started).
static GENERATION: AtomicU64 = AtomicU64::new(0);

/// Not started yet: usable in any process.
const UNSET: u64 = u64::MAX;

#[cfg(unix)]
extern "C" fn after_fork_in_child() {
    GENERATION.fetch_add(1, Ordering::Relaxed);
}

/// Registers the child handler, once per process.
fn watch() {
    #[cfg(unix)]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            // SAFETY: the handler only increments an atomic, which is
            // async-signal-safe, as a handler run after fork must be.
            // pthread_atfork fails only with ENOMEM; without the handler
            // use after fork goes undetected, as before.
            unsafe {
                libc::pthread_atfork(None, None, Some(after_fork_in_child));
            }
        });
    }
}

/// Where (which process, which fork generation) something started its
/// threads; `Default` is not started.
#[derive(Debug)]
pub struct StartedIn {
    generation: AtomicU64,
    pid: AtomicU32,
}

impl Default for StartedIn {
    fn default() -> StartedIn {
        StartedIn {
            generation: AtomicU64::new(UNSET),
            pid: AtomicU32::new(0),
        }
    }
}

impl StartedIn {
    /// Records that threads start now, in this process (the first call
    /// counts; later ones in the same process change nothing).
    pub fn mark(&self) {
        watch();
        let now = GENERATION.load(Ordering::Relaxed);
        if self.generation.load(Ordering::Relaxed) != now {
            self.pid.store(std::process::id(), Ordering::Relaxed);
            self.generation.store(now, Ordering::Relaxed);
        }
    }

    /// Whether this is a forked child of the process that started the
    /// threads.
    pub fn forked(&self) -> bool {
        let started = self.generation.load(Ordering::Relaxed);
        started != UNSET && started != GENERATION.load(Ordering::Relaxed)
    }

    /// FailedPrecondition naming `what` (e.g. "queue 'q'") in a forked
    /// child of the process that started it.
    pub fn check(&self, what: std::fmt::Arguments<'_>) -> Result<()> {
        if !self.forked() {
            return Ok(());
        }
        Err(Error::failed_precondition(format!(
            "{what} was started in process {}; this is a forked child \
             (process {}), which cannot use it: the threads that ran it did \
             not survive the fork, and a lock they held stays held. Build \
             the pipeline inside the child (a PyTorch DataLoader worker: \
             in the dataset's __iter__; see docs/python.md, \"DataLoader \
             workers and fork\")",
            self.pid.load(Ordering::Relaxed),
            std::process::id()
        )))
    }
}
