//! Close racing enqueues and dequeues (issue 11, item 1): thousands of
//! interleavings of `close(false)` / `close(true)` with blocked enqueues and
//! draining dequeues, every element counted.
//!
//! The reference is TensorFlow's `QueueBase::Close` (queue_base.cc), where
//! `close(cancel_pending_enqueues = false)` is queued behind the enqueues
//! already waiting and takes effect once they are done, and
//! fifo_queue_test.py's `testBlockingEnqueueBeforeClose` /
//! `testBlockingEnqueueManyBeforeClose`: an enqueue blocked before the
//! close completes, and its elements are dequeued before OutOfRange.

mod queue_support;

use std::collections::HashMap;
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::Duration;

use feedstock::queue::{FifoQueue, Queue, RandomShuffleQueue};
use feedstock::{Kind, Tensor};
use queue_support::{ints_of, scalar_i64};

/// Never reached by a working queue: a lost wake-up or an enqueue left
/// blocked after the consumer saw the end fails the test instead of
/// hanging it.
const LONG: Duration = Duration::from_secs(20);

/// What one enqueue call tried and how it ended.
struct Attempt {
    ids: Vec<i64>,
    ok: bool,
}

/// Spins `n` times: a deterministic, trial-dependent delay that shifts
/// where one thread's operations fall among the others' (no sleeping).
fn spin(n: u32) {
    for _ in 0..n {
        std::hint::spin_loop();
    }
}

/// One trial: two producers (one enqueuing single elements, one
/// `enqueue_many` of 3) on a queue of capacity 2, one closer, one
/// consumer draining with `dequeue_up_to(2)` until OutOfRange. Returns the
/// producers' attempts and everything dequeued.
fn trial(
    q: Arc<dyn Queue>,
    trial: u32,
    cancel: bool,
) -> (Vec<Attempt>, Vec<i64>) {
    let start = Barrier::new(4);
    thread::scope(|s| {
        let singles = s.spawn(|| {
            start.wait();
            let mut attempts = Vec::new();
            for i in 0..6 {
                let id = i64::from(trial) * 100 + i;
                let r =
                    q.enqueue_timeout(vec![Tensor::scalar(id).into()], LONG);
                let ok = match r {
                    Ok(()) => true,
                    Err(e) => {
                        assert_eq!(e.kind(), Kind::Cancelled, "{e}");
                        false
                    }
                };
                attempts.push(Attempt { ids: vec![id], ok });
                if !ok {
                    break;
                }
            }
            attempts
        });
        let batches = s.spawn(|| {
            start.wait();
            let mut attempts = Vec::new();
            for b in 0..3 {
                let first = i64::from(trial) * 100 + 50 + b * 3;
                let ids: Vec<i64> = (first..first + 3).collect();
                let r = q.enqueue_many_timeout(
                    vec![Tensor::vector(ids.clone()).into()],
                    LONG,
                );
                let ok = match r {
                    Ok(()) => true,
                    Err(e) => {
                        assert_eq!(e.kind(), Kind::Cancelled, "{e}");
                        false
                    }
                };
                attempts.push(Attempt { ids, ok });
                if !ok {
                    break;
                }
            }
            attempts
        });
        s.spawn(|| {
            start.wait();
            spin((trial * 37) % 4000);
            q.close(cancel);
        });
        let consumer = s.spawn(|| {
            start.wait();
            let mut got = Vec::new();
            loop {
                // Vary the consumer's pace so it is sometimes behind the
                // producers (they block on the full queue) and sometimes
                // ahead (it blocks on the empty one).
                spin((trial * 13) % 700);
                match q.dequeue_up_to_timeout(2, LONG) {
                    Ok(batch) => got.extend(ints_of(&batch)),
                    Err(e) => {
                        assert_eq!(e.kind(), Kind::OutOfRange, "{e}");
                        break;
                    }
                }
            }
            got
        });
        let mut attempts = singles.join().unwrap();
        attempts.extend(batches.join().unwrap());
        (attempts, consumer.join().unwrap())
    })
}

/// Checks one trial's accounting: every element of an enqueue that
/// returned Ok was dequeued exactly once; of a failed enqueue, at most a
/// prefix went in (all-or-nothing for single elements); nothing else was
/// dequeued; nothing is left in the queue.
fn check(q: &dyn Queue, attempts: &[Attempt], got: &[i64], what: &str) {
    let mut seen: HashMap<i64, usize> = HashMap::new();
    for &id in got {
        *seen.entry(id).or_default() += 1;
    }
    for (&id, &n) in &seen {
        assert_eq!(n, 1, "{what}: element {id} dequeued {n} times");
    }
    let mut expected = 0;
    for a in attempts {
        let arrived: Vec<bool> =
            a.ids.iter().map(|id| seen.contains_key(id)).collect();
        if a.ok {
            assert!(
                arrived.iter().all(|&x| x),
                "{what}: enqueue of {:?} returned Ok but only {arrived:?} \
                 of it was dequeued before OutOfRange",
                a.ids
            );
        } else {
            let k = arrived.iter().take_while(|&&x| x).count();
            assert!(
                arrived[k..].iter().all(|&x| !x),
                "{what}: a failed enqueue of {:?} left a non-prefix \
                 {arrived:?}",
                a.ids
            );
        }
        expected += arrived.iter().filter(|&&x| x).count();
    }
    assert_eq!(got.len(), expected, "{what}: unexpected elements {got:?}");
    assert_eq!(q.size(), 0, "{what}: elements left unread after the end");
    assert!(q.is_closed(), "{what}");
}

/// Debug builds run fewer trials; each is a few threads and a few dozen
/// operations.
const TRIALS: u32 = if cfg!(debug_assertions) {
    2_000
} else {
    10_000
};

#[test]
fn close_without_cancel_never_loses_an_admitted_enqueue() {
    for t in 0..TRIALS {
        let q: Arc<dyn Queue> =
            FifoQueue::builder(2, scalar_i64()).build().unwrap();
        let (attempts, got) = trial(q.clone(), t, false);
        check(&*q, &attempts, &got, &format!("close(false), trial {t}"));
        // Without cancellation a failed enqueue puts nothing in: it was
        // refused at the door, never admitted.
        for a in attempts.iter().filter(|a| !a.ok) {
            assert!(
                a.ids.iter().all(|id| !got.contains(id)),
                "close(false), trial {t}: refused enqueue {:?} put \
                 elements in",
                a.ids
            );
        }
    }
}

#[test]
fn close_with_cancel_never_loses_an_acknowledged_enqueue() {
    for t in 0..TRIALS {
        let q: Arc<dyn Queue> =
            FifoQueue::builder(2, scalar_i64()).build().unwrap();
        let (attempts, got) = trial(q.clone(), t, true);
        check(&*q, &attempts, &got, &format!("close(true), trial {t}"));
    }
}

#[test]
fn shuffle_queue_close_without_cancel_never_loses_an_admitted_enqueue() {
    for t in 0..TRIALS / 2 {
        let q: Arc<dyn Queue> = RandomShuffleQueue::builder(3, scalar_i64())
            .min_after_dequeue(1)
            .seed(u64::from(t))
            .build()
            .unwrap();
        let (attempts, got) = trial(q.clone(), t, false);
        check(&*q, &attempts, &got, &format!("shuffle, trial {t}"));
    }
}

#[test]
fn close_waits_for_a_blocked_enqueue_before_reporting_the_end() {
    // fifo_queue_test.py testBlockingEnqueueBeforeClose, without the
    // sleep: the enqueue is known to be blocked from the queue's counters.
    let q = FifoQueue::builder(4, scalar_i64()).build().unwrap();
    q.enqueue_many(vec![Tensor::vector(vec![10i64, 20, 30, 40]).into()])
        .unwrap();
    thread::scope(|s| {
        let blocked = s.spawn(|| {
            q.enqueue_timeout(vec![Tensor::scalar(50i64).into()], LONG)
        });
        while q.stats().blocked_enqueues == 0 {
            thread::yield_now();
        }
        assert!(q.close(false));
        // The close is requested but waits behind the blocked enqueue:
        // the queue still reports open, and new enqueues are refused.
        assert!(!q.is_closed());
        let late = q.enqueue(vec![Tensor::scalar(60i64).into()]);
        assert_eq!(late.unwrap_err().kind(), Kind::Cancelled);
        assert!(!q.close(false), "the second close reports it did not close");
        let mut got = Vec::new();
        for _ in 0..5 {
            got.extend(ints_of(&q.dequeue_many(1).unwrap()));
        }
        blocked.join().unwrap().unwrap();
        assert_eq!(got, [10, 20, 30, 40, 50]);
        assert!(q.is_closed());
        assert_eq!(q.dequeue().unwrap_err().kind(), Kind::OutOfRange);
    });
}

#[test]
fn blocked_enqueue_many_before_close_lands_whole() {
    // fifo_queue_test.py testBlockingEnqueueManyBeforeClose.
    let q = FifoQueue::builder(4, scalar_i64()).build().unwrap();
    q.enqueue_many(vec![Tensor::vector(vec![10i64, 20, 30]).into()])
        .unwrap();
    thread::scope(|s| {
        let blocked = s.spawn(|| {
            q.enqueue_many_timeout(
                vec![Tensor::vector(vec![50i64, 60]).into()],
                LONG,
            )
        });
        while q.stats().blocked_enqueues == 0 {
            thread::yield_now();
        }
        q.close(false);
        assert_eq!(ints_of(&q.dequeue_many(1).unwrap()), [10]);
        blocked.join().unwrap().unwrap();
        assert_eq!(ints_of(&q.dequeue_up_to(10).unwrap()), [20, 30, 50, 60]);
        assert_eq!(q.dequeue().unwrap_err().kind(), Kind::OutOfRange);
    });
}

#[test]
fn cancelling_close_fails_a_blocked_enqueue_many_keeping_its_admitted_part() {
    // TensorFlow's enqueue_many adds elements one at a time as room
    // appears and leaves the ones added when it is cancelled
    // (fifo_queue.cc TryEnqueueMany, queue_base.cc CloseAndCancel); the
    // error says how many went in, and they are dequeued before the end.
    let q = FifoQueue::builder(2, scalar_i64()).build().unwrap();
    q.enqueue(vec![Tensor::scalar(1i64).into()]).unwrap();
    thread::scope(|s| {
        let blocked = s.spawn(|| {
            q.enqueue_many_timeout(
                vec![Tensor::vector(vec![2i64, 3, 4]).into()],
                LONG,
            )
        });
        while q.stats().blocked_enqueues == 0 {
            thread::yield_now();
        }
        q.close(true);
        assert!(q.is_closed(), "a cancelling close takes effect at once");
        let err = blocked.join().unwrap().unwrap_err();
        assert_eq!(err.kind(), Kind::Cancelled);
        assert!(err.message().contains("1 of 3 elements"), "{err}");
        assert_eq!(ints_of(&q.dequeue_up_to(10).unwrap()), [1, 2]);
        assert_eq!(q.dequeue().unwrap_err().kind(), Kind::OutOfRange);
    });
}

#[test]
fn shuffle_queue_holds_back_until_a_pending_close_takes_effect() {
    let q = RandomShuffleQueue::builder(2, scalar_i64())
        .min_after_dequeue(1)
        .seed(3)
        .build()
        .unwrap();
    q.enqueue_many(vec![Tensor::vector(vec![1i64, 2]).into()])
        .unwrap();
    thread::scope(|s| {
        let blocked = s.spawn(|| {
            q.enqueue_timeout(vec![Tensor::scalar(3i64).into()], LONG)
        });
        while q.stats().blocked_enqueues == 0 {
            thread::yield_now();
        }
        q.close(false);
        // Still open: one element is held back, so only one is available.
        let first = ints_of(&q.dequeue_up_to(1).unwrap());
        blocked.join().unwrap().unwrap();
        let mut rest = ints_of(&q.dequeue_up_to(10).unwrap());
        rest.extend(first);
        rest.sort();
        assert_eq!(rest, [1, 2, 3]);
        assert_eq!(q.dequeue().unwrap_err().kind(), Kind::OutOfRange);
    });
}

#[test]
fn cancel_wakes_blocked_dequeue_and_enqueue_with_cancelled() {
    // A session close in TensorFlow cancels every queue op running in it
    // (CancellationManager); the op fails Cancelled, not OutOfRange.
    let empty = FifoQueue::builder(1, scalar_i64()).build().unwrap();
    let full = FifoQueue::builder(1, scalar_i64()).build().unwrap();
    full.enqueue(vec![Tensor::scalar(1i64).into()]).unwrap();
    thread::scope(|s| {
        let taker = s.spawn(|| empty.dequeue_timeout(LONG));
        let putter = s.spawn(|| {
            full.enqueue_timeout(vec![Tensor::scalar(2i64).into()], LONG)
        });
        while empty.stats().blocked_dequeues == 0
            || full.stats().blocked_enqueues == 0
        {
            thread::yield_now();
        }
        assert!(empty.cancel());
        assert!(!empty.cancel(), "cancelling twice reports it did not");
        full.cancel();
        let e = taker.join().unwrap().unwrap_err();
        assert_eq!(e.kind(), Kind::Cancelled, "{e}");
        let e = putter.join().unwrap().unwrap_err();
        assert_eq!(e.kind(), Kind::Cancelled, "{e}");
    });
    // Later operations fail the same way, even with elements held.
    assert!(full.is_cancelled());
    assert_eq!(full.size(), 1);
    assert_eq!(full.dequeue().unwrap_err().kind(), Kind::Cancelled);
    assert_eq!(
        empty
            .enqueue(vec![Tensor::scalar(3i64).into()])
            .unwrap_err()
            .kind(),
        Kind::Cancelled
    );
}

#[test]
fn close_with_cancel_gives_a_blocked_dequeue_out_of_range_not_cancelled() {
    // Closed and drained is the end of input (OutOfRange), whatever the
    // close's cancel_pending_enqueues; Cancelled is kept for cancellation.
    let q = FifoQueue::builder(2, scalar_i64()).build().unwrap();
    thread::scope(|s| {
        let taker = s.spawn(|| q.dequeue_timeout(LONG));
        while q.stats().blocked_dequeues == 0 {
            thread::yield_now();
        }
        q.close(true);
        let e = taker.join().unwrap().unwrap_err();
        assert_eq!(e.kind(), Kind::OutOfRange, "{e}");
    });
}

#[test]
fn default_timeout_bounds_calls_given_no_timeout_of_their_own() {
    let q = FifoQueue::builder(1, scalar_i64()).build().unwrap();
    q.set_default_timeout(Some(Duration::from_millis(1)));
    assert_eq!(q.dequeue().unwrap_err().kind(), Kind::DeadlineExceeded);
    q.enqueue(vec![Tensor::scalar(1i64).into()]).unwrap();
    let e = q.enqueue(vec![Tensor::scalar(2i64).into()]).unwrap_err();
    assert_eq!(e.kind(), Kind::DeadlineExceeded, "{e}");
    // A call's own timeout wins over the default.
    q.set_default_timeout(Some(LONG));
    let e = q
        .enqueue_timeout(vec![Tensor::scalar(2i64).into()], Duration::ZERO)
        .unwrap_err();
    assert_eq!(e.kind(), Kind::DeadlineExceeded, "{e}");
    q.set_default_timeout(None);
    assert_eq!(ints_of(&q.dequeue_many(1).unwrap()), [1]);
}
