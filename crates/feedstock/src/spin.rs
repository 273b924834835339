//! Taking a briefly held lock without giving the CPU away.
//!
//! A queue's state and a shared reader are locked once per element by
//! every producer and consumer, and held for well under a microsecond.
//! When another thread holds one, `parking_lot`'s mutex spins a little,
//! then yields, then parks; on two cores busy with a consumer and two
//! producers each yield and park is a context switch (tens of
//! microseconds here) and often leaves a CPU idle. Spinning a few
//! microseconds first lets the holder finish. Measured in the seed's
//! per-record pipeline, most context switches were threads waiting for
//! these two locks.

use parking_lot::{Mutex, MutexGuard};

/// Rounds of eight pause instructions to spin for at most (a few
/// microseconds).
const ROUNDS: usize = 128;

/// The lock, if it is free or freed within the spin; `None` when another
/// thread still holds it, for the caller to wait as it would.
pub(crate) fn try_lock<T>(m: &Mutex<T>) -> Option<MutexGuard<'_, T>> {
    for _ in 0..ROUNDS {
        if !m.is_locked() {
            if let Some(guard) = m.try_lock() {
                return Some(guard);
            }
        }
        for _ in 0..8 {
            std::hint::spin_loop();
        }
    }
    None
}

/// The lock, spinning first and then waiting as the mutex does.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    try_lock(m).unwrap_or_else(|| m.lock())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_free_lock_is_taken_and_a_held_one_is_not() {
        let m = Mutex::new(1);
        {
            let held = lock(&m);
            assert_eq!(*held, 1);
            assert!(try_lock(&m).is_none(), "held elsewhere");
        }
        *lock(&m) += 1;
        assert_eq!(*try_lock(&m).expect("free"), 2);
    }

    #[test]
    fn a_lock_freed_by_another_thread_is_taken() {
        let m = std::sync::Arc::new(Mutex::new(0));
        let held = m.lock();
        let other = {
            let m = m.clone();
            std::thread::spawn(move || {
                *lock(&m) += 1;
            })
        };
        std::thread::sleep(std::time::Duration::from_millis(20));
        drop(held);
        other.join().unwrap();
        assert_eq!(*m.lock(), 1);
    }
}
