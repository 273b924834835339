//! Cancelling a whole pipeline and bounding its blocking calls (issue 11,
//! items 13–15): TensorFlow's session close (every pending queue op fails
//! Cancelled through the session's CancellationManager) and its
//! `operation_timeout_in_ms` (a blocked op fails DeadlineExceeded).

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use feedstock::coord::{Coordinator, Pipeline, QueueRunner};
use feedstock::queue::{
    ComponentSpec, FifoQueue, PartialShape, Queue, QueueSpec,
};
use feedstock::reader::{Reader, TextLineReader};
use feedstock::{DType, Kind, Tensor, Value};

/// Never reached by a working pipeline: a thread left blocked fails the
/// test instead of hanging it.
const LONG: Duration = Duration::from_secs(20);

fn scalar(dtype: DType) -> QueueSpec {
    QueueSpec::new()
        .component(ComponentSpec::new(dtype).shape(PartialShape::scalar()))
}

fn ints(batch: &[Value]) -> Vec<i64> {
    batch[0]
        .dense()
        .unwrap()
        .as_slice::<i64>()
        .unwrap()
        .to_vec()
}

/// Spins `n` times: a deterministic, trial-dependent delay (no sleeping).
fn spin(n: u32) {
    for _ in 0..n {
        std::hint::spin_loop();
    }
}

/// Where the elements of one trial ended up.
#[derive(Default)]
struct Ledger {
    /// Enqueued into the first queue, acknowledged.
    produced: Vec<i64>,
    /// Taken from the first queue by the mover.
    moved_out: Vec<i64>,
    /// Enqueued into the second queue by the mover, acknowledged.
    moved_in: Vec<i64>,
    /// The batch the mover was enqueuing when it failed, if it did: a
    /// prefix of it may have gone in (TensorFlow's enqueue_many keeps
    /// what it admitted too).
    in_flight: Vec<i64>,
    /// Dequeued by the consumer.
    consumed: Vec<i64>,
}

/// One trial: a producer runner fills `a`, a mover runner moves from `a`
/// to `b` in batches of up to 3, the consumer drains `b`; at a
/// trial-dependent moment another thread cancels the pipeline. Every
/// element must be accounted for: acknowledged into `a` = taken by the
/// mover + left in `a`, and acknowledged into `b` = consumed + left in
/// `b`; the mover loses at most the one batch it held when cancelled.
fn cancel_trial(t: u32) {
    let a: Arc<dyn Queue> = FifoQueue::builder(2, scalar(DType::I64))
        .name("a")
        .build()
        .unwrap();
    let b: Arc<dyn Queue> = FifoQueue::builder(3, scalar(DType::I64))
        .name("b")
        .build()
        .unwrap();
    let ledger = Arc::new(Mutex::new(Ledger::default()));
    let mut pipeline = Pipeline::new();
    let next = Arc::new(AtomicI64::new(0));
    {
        let (a, ledger, next) = (a.clone(), ledger.clone(), next.clone());
        pipeline
            .add_runner(QueueRunner::new(a.clone()).with_op(move || {
                let id = next.fetch_add(1, Ordering::Relaxed);
                a.enqueue(vec![Tensor::scalar(id).into()])?;
                ledger.lock().unwrap().produced.push(id);
                Ok(())
            }))
            .unwrap();
    }
    {
        let (a, b, ledger) = (a.clone(), b.clone(), ledger.clone());
        pipeline
            .add_runner(QueueRunner::new(b.clone()).with_op(move || {
                let ids = ints(&a.dequeue_up_to(3)?);
                {
                    let mut l = ledger.lock().unwrap();
                    l.moved_out.extend(&ids);
                    l.in_flight = ids.clone();
                }
                b.enqueue_many(vec![Tensor::vector(ids.clone()).into()])?;
                let mut l = ledger.lock().unwrap();
                l.moved_in.extend(ids);
                l.in_flight.clear();
                Ok(())
            }))
            .unwrap();
    }
    let coord = Coordinator::new();
    let threads = pipeline.start(&coord).unwrap();
    let canceller = pipeline.canceller();
    thread::scope(|s| {
        s.spawn(|| {
            spin((t * 53) % 20_000);
            assert!(canceller.cancel());
        });
        loop {
            spin((t * 7) % 300);
            match b.dequeue_timeout(LONG) {
                Ok(e) => ledger.lock().unwrap().consumed.extend(ints(&e)),
                Err(e) => {
                    assert_eq!(e.kind(), Kind::Cancelled, "trial {t}: {e}");
                    break;
                }
            }
        }
    });
    // Every thread wakes and ends cleanly: a cancel is a deliberate stop.
    coord.join(threads, LONG).unwrap();
    assert!(pipeline.is_cancelled());
    assert!(!pipeline.cancel(), "a second cancel reports it did not");

    let l = ledger.lock().unwrap();
    let left_a = a.size();
    let left_b = b.size();
    let mut produced = l.produced.clone();
    produced.sort();
    let mut expect_a = l.moved_out.clone();
    expect_a.sort();
    // FIFO: the elements left in `a` are the ones produced and not taken.
    assert_eq!(
        produced.len(),
        expect_a.len() + left_a,
        "trial {t}: produced {produced:?}, moved out {expect_a:?}, \
         {left_a} left in a"
    );
    assert!(
        expect_a.iter().all(|id| produced.binary_search(id).is_ok()),
        "trial {t}: the mover took an element never acknowledged"
    );
    let lost_in_mover = l.moved_out.len() - l.moved_in.len();
    assert_eq!(lost_in_mover, l.in_flight.len(), "trial {t}");
    let in_b = l.consumed.len() + left_b;
    assert!(
        l.moved_in.len() <= in_b && in_b <= l.moved_in.len() + lost_in_mover,
        "trial {t}: moved in {:?} (then {:?} in flight), consumed {:?}, \
         {left_b} left in b",
        l.moved_in,
        l.in_flight,
        l.consumed
    );
    let delivered: Vec<i64> =
        l.moved_in.iter().chain(&l.in_flight).copied().collect();
    assert_eq!(
        l.consumed,
        delivered[..l.consumed.len()],
        "trial {t}: consumed out of order or duplicated"
    );
}

#[test]
fn cancel_wakes_every_blocked_operation_and_accounts_for_every_element() {
    let trials = if cfg!(debug_assertions) { 300 } else { 2_000 };
    for t in 0..trials {
        cancel_trial(t);
    }
}

#[test]
fn cancel_wakes_a_reader_blocked_on_an_empty_work_queue() {
    let files: Arc<dyn Queue> = FifoQueue::builder(4, scalar(DType::String))
        .name("files")
        .build()
        .unwrap();
    let mut pipeline = Pipeline::new();
    // A producer that never produces: the work queue stays open and
    // empty, so the read blocks (TensorFlow would block for ever).
    let coord = Coordinator::new();
    {
        let coord = coord.clone();
        pipeline
            .add_runner(QueueRunner::new(files.clone()).with_op(move || {
                coord.wait_for_stop(None);
                Ok(())
            }))
            .unwrap();
    }
    let threads = pipeline.start(&coord).unwrap();
    let reader = Reader::new(TextLineReader::new());
    thread::scope(|s| {
        let blocked = s.spawn(|| reader.read(&files));
        let blocked_up_to = s.spawn(|| reader.read_up_to(&files, 8));
        while files.stats().blocked_dequeues == 0 {
            thread::yield_now();
        }
        pipeline.cancel();
        let e = blocked.join().unwrap().unwrap_err();
        assert_eq!(e.kind(), Kind::Cancelled, "{e}");
        let e = blocked_up_to.join().unwrap().unwrap_err();
        assert_eq!(e.kind(), Kind::Cancelled, "{e}");
    });
    coord.join(threads, LONG).unwrap();
}

#[test]
fn read_timeout_bounds_a_read_on_an_open_empty_work_queue() {
    let files = FifoQueue::builder(4, scalar(DType::String))
        .build()
        .unwrap();
    let reader = Reader::new(TextLineReader::new());
    let e = reader
        .read_timeout(&files, Duration::from_millis(1))
        .unwrap_err();
    assert_eq!(e.kind(), Kind::DeadlineExceeded, "{e}");
    let e = reader
        .read_up_to_timeout(&files, 4, Duration::ZERO)
        .unwrap_err();
    assert_eq!(e.kind(), Kind::DeadlineExceeded, "{e}");
    // The reader is still usable: a file arriving later is read.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.txt");
    std::fs::write(&path, "x\ny\n").unwrap();
    files
        .enqueue(vec![Tensor::scalar(bytes::Bytes::from(
            path.to_str().unwrap().to_owned(),
        ))
        .into()])
        .unwrap();
    let got = reader.read_up_to_timeout(&files, 4, LONG).unwrap();
    assert_eq!(got.len(), 2);
}

#[test]
fn operation_timeout_covers_reads_and_dequeues_without_their_own() {
    let files: Arc<dyn Queue> = FifoQueue::builder(4, scalar(DType::String))
        .build()
        .unwrap();
    let out: Arc<dyn Queue> =
        FifoQueue::builder(4, scalar(DType::I64)).build().unwrap();
    let mut pipeline = Pipeline::new();
    let coord = Coordinator::new();
    for q in [&files, &out] {
        let coord = coord.clone();
        pipeline
            .add_runner(QueueRunner::new(q.clone()).with_op(move || {
                coord.wait_for_stop(None);
                Ok(())
            }))
            .unwrap();
    }
    pipeline.set_operation_timeout(Some(Duration::from_millis(1)));
    let threads = pipeline.start(&coord).unwrap();
    let reader = Reader::new(TextLineReader::new());
    let e = reader.read(&files).unwrap_err();
    assert_eq!(e.kind(), Kind::DeadlineExceeded, "{e}");
    let e = out.dequeue_many(2).unwrap_err();
    assert_eq!(e.kind(), Kind::DeadlineExceeded, "{e}");
    // A call's own timeout still wins.
    pipeline.set_operation_timeout(Some(LONG));
    let e = out.dequeue_timeout(Duration::ZERO).unwrap_err();
    assert_eq!(e.kind(), Kind::DeadlineExceeded, "{e}");
    coord.request_stop();
    coord.join(threads, LONG).unwrap();
}

#[test]
fn a_queue_added_after_cancel_is_cancelled_and_a_later_start_stops() {
    let mut pipeline = Pipeline::new();
    pipeline.cancel();
    let q: Arc<dyn Queue> =
        FifoQueue::builder(1, scalar(DType::I64)).build().unwrap();
    let producer = q.clone();
    pipeline
        .add_runner(QueueRunner::new(q.clone()).with_op(move || {
            producer.enqueue(vec![Tensor::scalar(1i64).into()])
        }))
        .unwrap();
    assert!(q.is_cancelled());
    let coord = Coordinator::new();
    let threads = pipeline.start(&coord).unwrap();
    assert!(coord.should_stop());
    coord.join(threads, LONG).unwrap();
    assert_eq!(q.dequeue().unwrap_err().kind(), Kind::Cancelled);
}

/// Readers that keep timing out while files trickle in: every line of
/// every file is read exactly once, whatever the timeouts hit.
#[test]
fn reads_that_time_out_never_lose_or_repeat_a_record() {
    let dir = tempfile::tempdir().unwrap();
    let (files_n, lines) = (40, 5);
    let paths: Vec<String> = (0..files_n)
        .map(|f| {
            let p = dir.path().join(format!("f{f}.txt"));
            let body: String =
                (0..lines).map(|l| format!("{f}-{l}\n")).collect();
            std::fs::write(&p, body).unwrap();
            p.to_str().unwrap().to_owned()
        })
        .collect();
    let files = FifoQueue::builder(2, scalar(DType::String))
        .build()
        .unwrap();
    let reader = Reader::new(TextLineReader::new());
    let got = Mutex::new(Vec::new());
    thread::scope(|s| {
        s.spawn(|| {
            for (i, p) in paths.iter().enumerate() {
                spin((i as u32 * 7919) % 50_000);
                files
                    .enqueue(vec![Tensor::scalar(bytes::Bytes::from(
                        p.clone(),
                    ))
                    .into()])
                    .unwrap();
            }
            files.close(false);
        });
        for t in 0..2 {
            let (reader, files, got) = (&reader, &files, &got);
            s.spawn(move || loop {
                let r = if t == 0 {
                    reader
                        .read_up_to_timeout(
                            files,
                            3,
                            Duration::from_micros(50),
                        )
                        .map(|v| v.into_iter().map(|r| r.value).collect())
                } else {
                    reader
                        .read_timeout(files, Duration::from_micros(50))
                        .map(|r| vec![r.value])
                };
                match r {
                    Ok(values) => got.lock().unwrap().extend(values),
                    // Timed out waiting for the next file: try again.
                    Err(e) if e.kind() == Kind::DeadlineExceeded => {}
                    Err(e) => {
                        assert_eq!(e.kind(), Kind::OutOfRange, "{e}");
                        break;
                    }
                }
            });
        }
    });
    let mut got: Vec<String> = got
        .into_inner()
        .unwrap()
        .into_iter()
        .map(|v| String::from_utf8(v.to_vec()).unwrap())
        .collect();
    got.sort();
    let mut want: Vec<String> = (0..files_n)
        .flat_map(|f| (0..lines).map(move |l| format!("{f}-{l}")))
        .collect();
    want.sort();
    assert_eq!(got, want);
}
