//! Enqueue calls are served in arrival order, each call's rows kept
//! together, as in TensorFlow: its `QueueBase` keeps a FIFO of pending
//! enqueue attempts and only the oldest one adds elements, so a later call
//! never gets a row in before an earlier blocked one, and the rows of one
//! `enqueue_many` are contiguous in the queue.
//!
//! The expected orders and errors are what TensorFlow 2.21
//! (`tf.compat.v1`, graph mode) gave for the same programs: a FIFOQueue of
//! capacity 3 filled with -1, -2, -3, then four threads, started 0.3 s
//! apart, each running `enqueue_many` of five rows 100t..100t+4, drained
//! one element at a time, gave -1, -2, -3, 100..104, 200..204, 300..304,
//! 400..404; four threads racing (no sleeps) 20 `enqueue_many` calls of 7
//! rows each into a queue of capacity 2 always left every call's 7 rows
//! contiguous; `close(cancel_pending_enqueues=True)` failed both blocked
//! calls with CancelledError "Enqueue operation was cancelled", keeping
//! the two rows the first had added; `close(False)` let both finish, in
//! order, before dequeues saw OutOfRange.

mod queue_support;

use std::sync::Arc;
use std::thread;
use std::time::Duration;

use feedstock::queue::{FifoQueue, PaddingFifoQueue, Queue};
use feedstock::{Kind, Tensor, Value};
use queue_support::{ints_of, scalar_i64};

fn rows(v: impl IntoIterator<Item = i64>) -> Vec<Value> {
    vec![Tensor::vector(v.into_iter().collect::<Vec<_>>()).into()]
}

/// Never reached by a working queue: a lost wake-up fails the test
/// instead of hanging it.
const LONG: Duration = Duration::from_secs(20);

/// Waits until `n` enqueue calls are blocked on `q`.
fn wait_blocked(q: &dyn Queue, n: usize) {
    let deadline = std::time::Instant::now() + LONG;
    while q.stats().blocked_enqueues < n {
        assert!(std::time::Instant::now() < deadline, "never blocked");
        thread::yield_now();
    }
}

/// Starts `calls` blocked `enqueue_many` calls on the full `q`, one after
/// the other (each known to be blocked before the next starts): call `t`
/// enqueues `block` rows from `100 * (t + 1)`.
fn blocked_calls<'s>(
    s: &'s thread::Scope<'s, '_>,
    q: &Arc<dyn Queue>,
    calls: usize,
    block: i64,
) -> Vec<thread::ScopedJoinHandle<'s, feedstock::Result<()>>> {
    (0..calls)
        .map(|t| {
            let q2 = Arc::clone(q);
            let first = 100 * (t as i64 + 1);
            let h = s.spawn(move || {
                q2.enqueue_many_timeout(rows(first..first + block), LONG)
            });
            wait_blocked(&**q, t + 1);
            h
        })
        .collect()
}

fn arrival_order_kept_whole(q: Arc<dyn Queue>) {
    q.enqueue_many(rows([-1, -2, -3])).unwrap();
    thread::scope(|s| {
        let calls = blocked_calls(s, &q, 4, 5);
        let mut got = Vec::new();
        for _ in 0..23 {
            got.extend(ints_of(&q.dequeue_many_timeout(1, LONG).unwrap()));
        }
        for c in calls {
            c.join().unwrap().unwrap();
        }
        let mut want = vec![-1, -2, -3];
        for t in 1..=4 {
            want.extend(100 * t..100 * t + 5);
        }
        assert_eq!(got, want);
    });
}

#[test]
fn blocked_enqueue_many_calls_are_served_in_arrival_order_and_kept_whole() {
    arrival_order_kept_whole(
        FifoQueue::builder(3, scalar_i64()).build().unwrap(),
    );
}

#[test]
fn padding_queue_serves_blocked_enqueue_many_calls_in_arrival_order() {
    arrival_order_kept_whole(
        PaddingFifoQueue::builder(3, scalar_i64()).build().unwrap(),
    );
}

#[test]
fn a_single_enqueue_waits_behind_an_earlier_blocked_enqueue_many() {
    let q: Arc<dyn Queue> =
        FifoQueue::builder(2, scalar_i64()).build().unwrap();
    q.enqueue_many(rows([-1, -2])).unwrap();
    thread::scope(|s| {
        let many = blocked_calls(s, &q, 1, 3).pop().unwrap();
        let q2 = Arc::clone(&q);
        let one = s.spawn(move || {
            q2.enqueue_timeout(vec![Tensor::scalar(7i64).into()], LONG)
        });
        wait_blocked(&*q, 2);
        // Room for two: both go to the call that came first.
        assert_eq!(
            ints_of(&q.dequeue_many_timeout(2, LONG).unwrap()),
            [-1, -2]
        );
        assert_eq!(
            ints_of(&q.dequeue_many_timeout(2, LONG).unwrap()),
            [100, 101]
        );
        // The first call's last row leaves room for the single enqueue,
        // which must be woken for it.
        assert_eq!(
            ints_of(&q.dequeue_many_timeout(2, LONG).unwrap()),
            [102, 7]
        );
        many.join().unwrap().unwrap();
        one.join().unwrap().unwrap();
        assert_eq!(q.stats().blocked_enqueues, 0);
    });
}

#[test]
fn racing_enqueue_many_calls_keep_their_rows_contiguous() {
    const PRODUCERS: i64 = 4;
    const CALLS: i64 = 50;
    const BLOCK: i64 = 7;
    for capacity in [1, 2, 5, 16] {
        let q: Arc<dyn Queue> =
            FifoQueue::builder(capacity, scalar_i64()).build().unwrap();
        let got = thread::scope(|s| {
            for p in 1..=PRODUCERS {
                let q = Arc::clone(&q);
                s.spawn(move || {
                    for c in 0..CALLS {
                        let first = 10_000 * p + 10 * c;
                        q.enqueue_many_timeout(
                            rows(first..first + BLOCK),
                            LONG,
                        )
                        .unwrap();
                    }
                });
            }
            let total = (PRODUCERS * CALLS * BLOCK) as usize;
            let mut got = Vec::new();
            while got.len() < total {
                // Odd sizes, so batches straddle the calls' blocks.
                let n = (1 + got.len() % 3).min(total - got.len());
                got.extend(ints_of(&q.dequeue_many_timeout(n, LONG).unwrap()));
            }
            got
        });
        for (i, block) in got.chunks(BLOCK as usize).enumerate() {
            let want: Vec<i64> = (block[0]..block[0] + BLOCK).collect();
            assert!(
                block[0] % 10 == 0 && block == want,
                "capacity {capacity}: block {i} is {block:?}"
            );
        }
    }
}

#[test]
fn a_later_call_that_times_out_in_line_adds_nothing_and_the_line_moves_on() {
    let q: Arc<dyn Queue> =
        FifoQueue::builder(2, scalar_i64()).build().unwrap();
    q.enqueue_many(rows([-1, -2])).unwrap();
    thread::scope(|s| {
        let first = blocked_calls(s, &q, 1, 3).pop().unwrap();
        let q2 = Arc::clone(&q);
        let late = s.spawn(move || {
            q2.enqueue_many_timeout(rows([7, 8]), Duration::from_millis(50))
        });
        let err = late.join().unwrap().unwrap_err();
        assert_eq!(err.kind(), Kind::DeadlineExceeded);
        assert!(err.message().contains("0 of 2 elements"), "{err}");
        let q3 = Arc::clone(&q);
        let last = s.spawn(move || q3.enqueue_many_timeout(rows([9]), LONG));
        wait_blocked(&*q, 2);
        let mut got = Vec::new();
        for _ in 0..6 {
            got.extend(ints_of(&q.dequeue_many_timeout(1, LONG).unwrap()));
        }
        first.join().unwrap().unwrap();
        last.join().unwrap().unwrap();
        assert_eq!(got, [-1, -2, 100, 101, 102, 9]);
    });
}

#[test]
fn close_without_cancel_lets_blocked_calls_finish_in_arrival_order() {
    let q: Arc<dyn Queue> =
        FifoQueue::builder(2, scalar_i64()).build().unwrap();
    thread::scope(|s| {
        // The first call adds two rows, then blocks; the second waits
        // behind it.
        let a = s.spawn({
            let q = Arc::clone(&q);
            move || q.enqueue_many_timeout(rows(1..=5), LONG)
        });
        wait_blocked(&*q, 1);
        let b = s.spawn({
            let q = Arc::clone(&q);
            move || q.enqueue_many_timeout(rows(6..=8), LONG)
        });
        wait_blocked(&*q, 2);
        q.close(false);
        let mut got = Vec::new();
        loop {
            match q.dequeue_many_timeout(1, LONG) {
                Ok(v) => got.extend(ints_of(&v)),
                Err(e) => {
                    assert_eq!(e.kind(), Kind::OutOfRange);
                    break;
                }
            }
        }
        a.join().unwrap().unwrap();
        b.join().unwrap().unwrap();
        assert_eq!(got, (1..=8).collect::<Vec<_>>());
    });
}

#[test]
fn close_with_cancel_fails_every_call_in_line_keeping_the_first_part() {
    let q: Arc<dyn Queue> =
        FifoQueue::builder(2, scalar_i64()).build().unwrap();
    thread::scope(|s| {
        let a = s.spawn({
            let q = Arc::clone(&q);
            move || q.enqueue_many_timeout(rows(1..=5), LONG)
        });
        wait_blocked(&*q, 1);
        let b = s.spawn({
            let q = Arc::clone(&q);
            move || q.enqueue_many_timeout(rows(6..=8), LONG)
        });
        wait_blocked(&*q, 2);
        q.close(true);
        let a = a.join().unwrap().unwrap_err();
        let b = b.join().unwrap().unwrap_err();
        assert_eq!((a.kind(), b.kind()), (Kind::Cancelled, Kind::Cancelled));
        assert!(a.message().contains("2 of 5 elements"), "{a}");
        assert!(b.message().contains("0 of 3 elements"), "{b}");
        assert_eq!(ints_of(&q.dequeue_up_to(10).unwrap()), [1, 2]);
        assert_eq!(q.dequeue().unwrap_err().kind(), Kind::OutOfRange);
        assert_eq!(q.stats().blocked_enqueues, 0);
    });
}
