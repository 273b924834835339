//! A forked child touching a queue, a pipeline or a coordinator whose
//! runner threads its parent started fails FailedPrecondition at once
//! instead of waiting for ever (the threads did not survive the fork);
//! the parent goes on, and a pipeline made in the child works.
//!
//! One test in this file: the test harness runs it on a thread of its
//! own, and forks only that thread.
#![cfg(unix)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use feedstock::coord::{Coordinator, Pipeline, QueueRunner};
use feedstock::queue::{
    ComponentSpec, FifoQueue, PartialShape, Queue, QueueSpec,
};
use feedstock::{DType, Error, Kind, Result, Tensor, Value};

const LONG: Duration = Duration::from_secs(20);

fn spec() -> QueueSpec {
    QueueSpec::new().component(
        ComponentSpec::new(DType::I64).shape(PartialShape::scalar()),
    )
}

fn int_of(e: &[Value]) -> i64 {
    e[0].dense().unwrap().scalar_value::<i64>().unwrap()
}

/// A queue of capacity 4 that a runner thread fills with 0, 1, 2, ...
/// without end, and the started pipeline's coordinator and threads.
fn started() -> (
    Arc<FifoQueue>,
    Coordinator,
    Vec<feedstock::coord::ThreadHandle>,
) {
    let q = FifoQueue::builder(4, spec()).build().unwrap();
    let mut next = 0i64;
    let out = q.clone();
    let runner = QueueRunner::new(q.clone()).with_op(move || {
        next += 1;
        out.enqueue(vec![Tensor::scalar(next - 1).into()])
    });
    let mut pipeline = Pipeline::new();
    pipeline.add_runner(runner).unwrap();
    let coord = Coordinator::new();
    let threads = pipeline.start(&coord).unwrap();
    (q, coord, threads)
}

/// Runs `child` in a forked child and returns its exit code (the child
/// exits with what `child` returns). A child still running after 20 s is
/// killed and the test fails.
fn in_forked_child(child: impl FnOnce() -> i32) -> i32 {
    // SAFETY: the child runs only `child` and then `_exit`s, never
    // returning into the test harness.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let code =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(child))
                .unwrap_or(99);
        // SAFETY: ends the child at once, running no destructor of the
        // parent's state.
        unsafe { libc::_exit(code) };
    }
    let deadline = Instant::now() + LONG;
    let mut status = 0;
    loop {
        // SAFETY: waits for our own child.
        let done = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if done == pid {
            assert!(libc::WIFEXITED(status), "the child died: {status}");
            return libc::WEXITSTATUS(status);
        }
        if Instant::now() >= deadline {
            // SAFETY: kills and reaps our own child.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, &mut status, 0);
            }
            panic!(
                "the forked child was still waiting after {LONG:?} (killed)"
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// 0 for the fork error naming the parent, 1 for another error, 2 for
/// success.
fn fork_error<T>(r: Result<T>, parent: u32) -> i32 {
    match r {
        Err(e)
            if e.kind() == Kind::FailedPrecondition
                && e.message()
                    .contains(&format!("started in process {parent}"))
                && e.message().contains("forked child") =>
        {
            0
        }
        Err(_) => 1,
        Ok(_) => 2,
    }
}

#[test]
fn a_forked_child_cannot_use_started_runners_and_says_so() {
    let parent = std::process::id();
    let (q, coord, threads) = started();
    assert_eq!(int_of(&q.dequeue_timeout(LONG).unwrap()), 0);
    // More than the queue holds: without the check the child would take
    // what is queued, then wait for ever for the runner.
    let code = in_forked_child(|| {
        fork_error((0..10).try_for_each(|_| q.dequeue().map(drop)), parent)
    });
    assert_eq!(code, 0, "the child's dequeue");
    let code = in_forked_child(|| {
        fork_error(q.enqueue(vec![Tensor::scalar(-1i64).into()]), parent)
    });
    assert_eq!(code, 0, "the child's enqueue");
    // (The handles stay the parent's; the check comes first anyway.)
    let code = in_forked_child(|| fork_error(coord.join([], LONG), parent));
    assert_eq!(code, 0, "the child's join");
    let code = in_forked_child(|| {
        fork_error(coord.request_stop_with(Error::data_loss("x")), parent)
    });
    assert_eq!(code, 0, "the child's request_stop_with");
    // A stop request or a close in the child has nothing to stop.
    let code = in_forked_child(|| {
        coord.request_stop();
        i32::from(q.close(true))
    });
    assert_eq!(code, 0);
    // A pipeline made in the child runs there.
    let code = in_forked_child(|| {
        let (q, coord, threads) = started();
        let got: Vec<i64> = (0..10)
            .map(|_| int_of(&q.dequeue_timeout(LONG).unwrap()))
            .collect();
        coord.request_stop();
        let joined = coord.join(threads, LONG);
        i32::from(got != (0..10).collect::<Vec<_>>() || joined.is_err())
    });
    assert_eq!(code, 0, "a pipeline made in the child");
    // The parent's runner went on.
    assert_eq!(int_of(&q.dequeue_timeout(LONG).unwrap()), 1);
    coord.request_stop();
    coord.join(threads, LONG).unwrap();
}
