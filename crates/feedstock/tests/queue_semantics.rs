//! The semantics of every queue kind, one behaviour per test (TensorFlow's
//! queue semantics, plus our stricter "nothing is lost, nothing hangs").

mod queue_support;

use std::sync::Arc;
use std::thread;
use std::time::Duration;

use feedstock::queue::{
    ComponentSpec, FifoQueue, PaddingFifoQueue, PartialShape, PriorityQueue,
    Queue, QueueSpec, RandomShuffleQueue,
};
use feedstock::{DType, Kind, SparseTensor, Tensor, Value};
use queue_support::{ints_of, scalar_i64};

/// Long enough that a working blocking call never hits it, so a bug fails
/// the test instead of hanging it.
const LONG: Duration = Duration::from_secs(20);
/// Short timeouts for calls expected to time out.
const SHORT: Duration = Duration::from_millis(30);

fn int(v: i64) -> Vec<Value> {
    vec![Tensor::scalar(v).into()]
}

fn ints(v: &[i64]) -> Vec<Value> {
    vec![Tensor::vector(v.to_vec()).into()]
}

fn int_of(element: &[Value]) -> i64 {
    element[0].dense().unwrap().scalar_value::<i64>().unwrap()
}

fn fifo(capacity: usize) -> Arc<FifoQueue> {
    FifoQueue::builder(capacity, scalar_i64()).build().unwrap()
}

fn shuffle(capacity: usize, min_after: usize) -> Arc<RandomShuffleQueue> {
    RandomShuffleQueue::builder(capacity, scalar_i64())
        .min_after_dequeue(min_after)
        .seed(11)
        .build()
        .unwrap()
}

/// Every queue kind over one i64 scalar component (the priority queue's
/// priority is that component), for tests of behaviour they all share.
fn all_kinds(capacity: usize) -> Vec<Arc<dyn Queue>> {
    vec![
        fifo(capacity),
        shuffle(capacity, 0),
        PaddingFifoQueue::builder(capacity, scalar_i64())
            .build()
            .unwrap(),
        PriorityQueue::builder(capacity, QueueSpec::new())
            .build()
            .unwrap(),
    ]
}

/// Spins until `cond` holds; panics (failing the test) after `LONG`.
fn wait_until(cond: impl Fn() -> bool) {
    let start = std::time::Instant::now();
    while !cond() {
        assert!(start.elapsed() < LONG, "condition not reached in time");
        thread::yield_now();
    }
}

fn sorted(mut v: Vec<i64>) -> Vec<i64> {
    v.sort_unstable();
    v
}

#[test]
fn fifo_dequeues_in_enqueue_order() {
    let q = fifo(10);
    for i in 0..5 {
        q.enqueue(int(i)).unwrap();
    }
    q.enqueue_many(ints(&[5, 6])).unwrap();
    let got: Vec<i64> =
        (0..7).map(|_| int_of(&q.dequeue().unwrap())).collect();
    assert_eq!(got, (0..7).collect::<Vec<_>>());
}

#[test]
fn enqueue_rejects_wrong_dtype_naming_the_component() {
    let spec = QueueSpec::new()
        .component(ComponentSpec::new(DType::F32).name("image"))
        .component(DType::I64);
    let q = FifoQueue::builder(4, spec).build().unwrap();
    let err = q
        .enqueue(vec![
            Tensor::scalar(1i32).into(),
            Tensor::scalar(1i64).into(),
        ])
        .unwrap_err();
    assert_eq!(err.kind(), Kind::InvalidArgument);
    assert_eq!(err.field(), Some("image"));
    let err = q
        .enqueue(vec![
            Tensor::scalar(1f32).into(),
            Tensor::scalar(1f32).into(),
        ])
        .unwrap_err();
    assert_eq!(err.field(), Some("component 1"));
    assert!(err.message().contains("fifo_queue"), "{err}");
    assert_eq!(q.size(), 0);
}

#[test]
fn enqueue_rejects_wrong_shape_layout_and_arity() {
    let spec = QueueSpec::new().component(
        ComponentSpec::new(DType::I64)
            .shape(PartialShape::new([None, Some(2)])),
    );
    let q = FifoQueue::builder(4, spec).build().unwrap();
    q.enqueue(vec![Tensor::new([3, 2], vec![0i64; 6]).unwrap().into()])
        .unwrap();
    let bad_shape = Tensor::new([2, 3], vec![0i64; 6]).unwrap();
    let err = q.enqueue(vec![bad_shape.into()]).unwrap_err();
    assert_eq!(err.kind(), Kind::InvalidArgument);
    assert!(err.message().contains("[?, 2]"), "{err}");
    let sparse =
        SparseTensor::from_dense_vector(Tensor::vector(vec![1i64])).unwrap();
    let err = q.enqueue(vec![sparse.into()]).unwrap_err();
    assert!(err.message().contains("sparse"), "{err}");
    let err = q.enqueue(vec![]).unwrap_err();
    assert_eq!(err.kind(), Kind::InvalidArgument);
    assert_eq!(q.size(), 1);
}

#[test]
fn enqueue_many_splits_components_along_axis_0() {
    let spec = QueueSpec::dtypes([DType::I64, DType::String]);
    let q = FifoQueue::builder(10, spec).build().unwrap();
    q.enqueue_many(vec![
        Tensor::new([2, 2], vec![1i64, 2, 3, 4]).unwrap().into(),
        Tensor::vector(vec![bytes::Bytes::from("a"), "b".into()]).into(),
    ])
    .unwrap();
    let e = q.dequeue().unwrap();
    assert_eq!(e[0].dense().unwrap().as_slice::<i64>().unwrap(), &[1, 2]);
    assert_eq!(
        e[1].dense()
            .unwrap()
            .scalar_value::<bytes::Bytes>()
            .unwrap(),
        "a"
    );
    assert_eq!(q.size(), 1);
}

#[test]
fn enqueue_many_rejects_disagreeing_batch_sizes_and_scalars() {
    let spec = QueueSpec::dtypes([DType::I64, DType::I64]);
    let q = FifoQueue::builder(10, spec).build().unwrap();
    let err = q
        .enqueue_many(vec![
            Tensor::vector(vec![1i64, 2]).into(),
            Tensor::vector(vec![1i64]).into(),
        ])
        .unwrap_err();
    assert_eq!(err.kind(), Kind::InvalidArgument);
    assert_eq!(err.field(), Some("component 1"));
    let err = q
        .enqueue_many(vec![
            Tensor::scalar(1i64).into(),
            Tensor::scalar(1i64).into(),
        ])
        .unwrap_err();
    assert_eq!(err.field(), Some("component 0"));
    assert_eq!(q.size(), 0);
}

#[test]
fn dequeue_many_stacks_dense_and_sparse_components() {
    let spec = QueueSpec::new()
        .component(ComponentSpec::new(DType::I64).shape([2]))
        .component(ComponentSpec::sparse(DType::F32));
    let q = FifoQueue::builder(10, spec).build().unwrap();
    for i in 0..3i64 {
        let values = Tensor::vector(vec![i as f32; i as usize + 1]);
        q.enqueue(vec![
            Tensor::vector(vec![i, -i]).into(),
            SparseTensor::from_dense_vector(values).unwrap().into(),
        ])
        .unwrap();
    }
    let batch = q.dequeue_many(3).unwrap();
    let dense = batch[0].dense().unwrap();
    assert_eq!(dense.dims(), &[3, 2]);
    assert_eq!(dense.as_slice::<i64>().unwrap(), &[0, 0, 1, -1, 2, -2]);
    let sparse = batch[1].sparse().unwrap();
    assert_eq!(sparse.dims(), &[3, 3]);
    assert_eq!(sparse.nnz(), 6);
}

#[test]
fn dequeue_many_unstacked_returns_the_elements() {
    let q = fifo(10);
    q.enqueue_many(ints(&[1, 2, 3])).unwrap();
    let elements = q.dequeue_many_unstacked(2).unwrap();
    assert_eq!(
        elements.iter().map(|e| int_of(e)).collect::<Vec<_>>(),
        [1, 2]
    );
    q.close(false);
    let rest = q.dequeue_up_to_unstacked(5).unwrap();
    assert_eq!(rest.len(), 1);
}

#[test]
fn dequeue_many_of_zero_gives_an_empty_batch() {
    let q = fifo(4);
    let batch = q.dequeue_many(0).unwrap();
    assert_eq!(batch[0].dense().unwrap().dims(), &[0]);
}

#[test]
fn enqueue_after_close_fails_cancelled_for_every_kind() {
    for q in all_kinds(4) {
        assert!(q.close(false));
        assert!(
            !q.close(false),
            "{}: second close reports no change",
            q.name()
        );
        let err = q.enqueue(int(1)).unwrap_err();
        assert_eq!(err.kind(), Kind::Cancelled, "{}", q.name());
        let err = q.enqueue_many(ints(&[1, 2])).unwrap_err();
        assert_eq!(err.kind(), Kind::Cancelled, "{}", q.name());
    }
}

#[test]
fn dequeue_drains_a_closed_queue_then_fails_out_of_range() {
    for q in all_kinds(4) {
        q.enqueue_many(ints(&[3, 1, 2])).unwrap();
        q.close(false);
        let got: Vec<i64> =
            (0..3).map(|_| int_of(&q.dequeue().unwrap())).collect();
        assert_eq!(sorted(got), [1, 2, 3], "{}", q.name());
        let err = q.dequeue().unwrap_err();
        assert_eq!(err.kind(), Kind::OutOfRange, "{}", q.name());
        let err = q.dequeue_many(1).unwrap_err();
        assert_eq!(err.kind(), Kind::OutOfRange, "{}", q.name());
    }
}

#[test]
fn dequeue_many_on_a_closed_queue_with_too_few_fails_and_keeps_them() {
    for q in all_kinds(8) {
        q.enqueue_many(ints(&[1, 2, 3])).unwrap();
        q.close(false);
        let err = q.dequeue_many(4).unwrap_err();
        assert_eq!(err.kind(), Kind::OutOfRange, "{}", q.name());
        assert_eq!(q.size(), 3, "{}", q.name());
        let rest = q.dequeue_up_to(4).unwrap();
        assert_eq!(sorted(ints_of(&rest)), [1, 2, 3], "{}", q.name());
        let err = q.dequeue_up_to(4).unwrap_err();
        assert_eq!(err.kind(), Kind::OutOfRange, "{}", q.name());
    }
}

#[test]
fn dequeue_up_to_on_an_open_queue_waits_for_n_and_keeps_them_on_timeout() {
    let q = fifo(8);
    q.enqueue_many(ints(&[1, 2])).unwrap();
    let err = q.dequeue_up_to_timeout(3, SHORT).unwrap_err();
    assert_eq!(err.kind(), Kind::DeadlineExceeded);
    assert_eq!(q.size(), 2);
    assert_eq!(ints_of(&q.dequeue_many(2).unwrap()), [1, 2]);
}

#[test]
fn dequeue_on_an_empty_queue_times_out() {
    for q in all_kinds(4) {
        let err = q.dequeue_timeout(SHORT).unwrap_err();
        assert_eq!(err.kind(), Kind::DeadlineExceeded, "{}", q.name());
    }
}

#[test]
fn enqueue_on_a_full_queue_times_out_and_reports_progress() {
    let q = fifo(2);
    q.enqueue(int(0)).unwrap();
    let err = q.enqueue_many_timeout(ints(&[1, 2, 3]), SHORT).unwrap_err();
    assert_eq!(err.kind(), Kind::DeadlineExceeded);
    assert!(err.message().contains("1 of 3"), "{err}");
    assert_eq!(ints_of(&q.dequeue_many(2).unwrap()), [0, 1]);
    let err = q.enqueue_timeout(int(9), SHORT);
    assert!(err.is_ok());
}

#[test]
fn close_with_cancel_fails_blocked_enqueues_cancelled() {
    let q = fifo(1);
    q.enqueue(int(0)).unwrap();
    let blocked: Vec<_> = (0..3)
        .map(|i| {
            let q = q.clone();
            thread::spawn(move || q.enqueue_timeout(int(i), LONG))
        })
        .collect();
    wait_until(|| q.stats().blocked_enqueues >= 3);
    q.close(true);
    for t in blocked {
        assert_eq!(t.join().unwrap().unwrap_err().kind(), Kind::Cancelled);
    }
    // The element enqueued before the close is still there.
    assert_eq!(int_of(&q.dequeue().unwrap()), 0);
}

#[test]
fn close_without_cancel_lets_blocked_enqueues_finish() {
    let q = fifo(1);
    q.enqueue(int(0)).unwrap();
    let blocked = {
        let q = q.clone();
        thread::spawn(move || q.enqueue_timeout(int(1), LONG))
    };
    wait_until(|| q.stats().blocked_enqueues >= 1);
    q.close(false);
    assert_eq!(int_of(&q.dequeue_timeout(LONG).unwrap()), 0);
    blocked.join().unwrap().unwrap();
    assert_eq!(int_of(&q.dequeue_timeout(LONG).unwrap()), 1);
    assert_eq!(q.dequeue().unwrap_err().kind(), Kind::OutOfRange);
}

#[test]
fn close_wakes_every_blocked_dequeue() {
    for q in all_kinds(4) {
        let blocked: Vec<_> = (0..4)
            .map(|i| {
                let q = q.clone();
                thread::spawn(move || match i % 2 {
                    0 => q.dequeue_timeout(LONG).map(|_| ()),
                    _ => q.dequeue_many_timeout(3, LONG).map(|_| ()),
                })
            })
            .collect();
        wait_until(|| q.stats().blocked_dequeues >= 4);
        q.close(false);
        for t in blocked {
            let err = t.join().unwrap().unwrap_err();
            assert_eq!(err.kind(), Kind::OutOfRange, "{}", q.name());
        }
    }
}

#[test]
fn timed_out_dequeue_many_puts_taken_elements_back_in_a_fifo() {
    // 6 > capacity 4: the dequeue must take elements as they come, so it
    // holds 4 when it times out.
    let q = fifo(4);
    q.enqueue_many(ints(&[1, 2, 3, 4])).unwrap();
    let err = q.dequeue_many_timeout(6, SHORT).unwrap_err();
    assert_eq!(err.kind(), Kind::DeadlineExceeded);
    assert_eq!(q.size(), 4);
    assert_eq!(ints_of(&q.dequeue_many(4).unwrap()), [1, 2, 3, 4]);
    assert_eq!(q.stats().dequeued, 4);
}

#[test]
fn timed_out_dequeue_many_puts_taken_elements_back_in_a_shuffle_queue() {
    // At most 10 - 5 = 5 can be taken at once, so a dequeue of 8 takes 5
    // and waits for more.
    let q = shuffle(10, 5);
    q.enqueue_many(ints(&(0..10).collect::<Vec<_>>())).unwrap();
    let err = q.dequeue_many_timeout(8, SHORT).unwrap_err();
    assert_eq!(err.kind(), Kind::DeadlineExceeded);
    assert_eq!(q.size(), 10);
    q.close(false);
    let all = q.dequeue_up_to(20).unwrap();
    assert_eq!(sorted(ints_of(&all)), (0..10).collect::<Vec<_>>());
}

#[test]
fn dequeue_many_cancelled_by_close_puts_taken_elements_back() {
    for q in [fifo(4) as Arc<dyn Queue>, shuffle(4, 0)] {
        q.enqueue_many(ints(&[1, 2, 3, 4])).unwrap();
        let waiter = {
            let q = q.clone();
            thread::spawn(move || q.dequeue_many_timeout(6, LONG))
        };
        wait_until(|| q.stats().blocked_dequeues >= 1);
        // The waiter holds the 4 elements privately while it waits.
        assert_eq!(q.size(), 0);
        q.close(false);
        let err = waiter.join().unwrap().unwrap_err();
        assert_eq!(err.kind(), Kind::OutOfRange);
        assert_eq!(q.size(), 4, "{}", q.name());
        let rest = q.dequeue_up_to(6).unwrap();
        assert_eq!(sorted(ints_of(&rest)), [1, 2, 3, 4]);
    }
}

#[test]
fn dequeue_many_larger_than_capacity_completes_with_a_producer() {
    let q = fifo(3);
    let producer = {
        let q = q.clone();
        thread::spawn(move || {
            for i in 0..10 {
                q.enqueue_timeout(int(i), LONG).unwrap();
            }
        })
    };
    let batch = q.dequeue_many_timeout(10, LONG).unwrap();
    assert_eq!(ints_of(&batch), (0..10).collect::<Vec<_>>());
    producer.join().unwrap();
}

#[test]
fn shuffle_queue_holds_back_min_after_dequeue_until_closed() {
    let q = shuffle(10, 3);
    q.enqueue_many(ints(&[1, 2, 3, 4])).unwrap();
    q.dequeue_timeout(LONG).unwrap();
    let err = q.dequeue_timeout(SHORT).unwrap_err();
    assert_eq!(err.kind(), Kind::DeadlineExceeded);
    assert_eq!(q.size(), 3);
    q.close(false);
    for _ in 0..3 {
        q.dequeue_timeout(LONG).unwrap();
    }
    assert_eq!(q.dequeue().unwrap_err().kind(), Kind::OutOfRange);
}

#[test]
fn shuffle_queue_rejects_min_after_dequeue_not_below_capacity() {
    let err = RandomShuffleQueue::builder(4, scalar_i64())
        .min_after_dequeue(4)
        .build()
        .unwrap_err();
    assert_eq!(err.kind(), Kind::InvalidArgument);
    let err = FifoQueue::builder(0, scalar_i64()).build().unwrap_err();
    assert_eq!(err.kind(), Kind::InvalidArgument);
}

#[test]
fn padding_queue_pads_each_component_to_the_largest_shape_in_the_batch() {
    let spec = QueueSpec::new()
        .component(
            ComponentSpec::new(DType::F32)
                .shape(PartialShape::new([None, Some(2)])),
        )
        .component(
            ComponentSpec::new(DType::String).shape(PartialShape::new([None])),
        )
        .component(ComponentSpec::new(DType::I64).shape([]));
    let q = PaddingFifoQueue::builder(8, spec).build().unwrap();
    let s = |v: &[&'static str]| {
        Tensor::vector(v.iter().map(|s| bytes::Bytes::from(*s)).collect())
    };
    q.enqueue(vec![
        Tensor::new([1, 2], vec![1f32, 2.0]).unwrap().into(),
        s(&["a", "b", "c"]).into(),
        Tensor::scalar(7i64).into(),
    ])
    .unwrap();
    q.enqueue(vec![
        Tensor::new([2, 2], vec![3f32, 4.0, 5.0, 6.0])
            .unwrap()
            .into(),
        s(&["d"]).into(),
        Tensor::scalar(8i64).into(),
    ])
    .unwrap();
    let batch = q.dequeue_many(2).unwrap();
    let f = batch[0].dense().unwrap();
    assert_eq!(f.dims(), &[2, 2, 2]);
    assert_eq!(
        f.as_slice::<f32>().unwrap(),
        &[1.0, 2.0, 0.0, 0.0, 3.0, 4.0, 5.0, 6.0]
    );
    let strings = batch[1].dense().unwrap();
    assert_eq!(strings.dims(), &[2, 3]);
    let got: Vec<&[u8]> = strings
        .as_slice::<bytes::Bytes>()
        .unwrap()
        .iter()
        .map(|b| b.as_ref())
        .collect();
    assert_eq!(got, [&b"a"[..], b"b", b"c", b"d", b"", b""]);
    assert_eq!(ints_of(&batch[2..]), [7, 8]);
}

#[test]
fn padding_queue_requires_declared_shapes() {
    let err = PaddingFifoQueue::builder(4, QueueSpec::dtypes([DType::I64]))
        .build()
        .unwrap_err();
    assert_eq!(err.kind(), Kind::InvalidArgument);
    assert_eq!(err.field(), Some("component 0"));
}

#[test]
fn fifo_dequeue_many_of_unequal_shapes_fails_and_keeps_the_elements() {
    let q = FifoQueue::builder(4, QueueSpec::dtypes([DType::I64]))
        .build()
        .unwrap();
    q.enqueue(ints(&[1])).unwrap();
    q.enqueue(ints(&[1, 2])).unwrap();
    let err = q.dequeue_many(2).unwrap_err();
    assert_eq!(err.kind(), Kind::InvalidArgument);
    assert!(err.message().contains("PaddingFifoQueue"), "{err}");
    assert_eq!(q.size(), 2);
    assert_eq!(ints_of(&q.dequeue().unwrap()), [1]);
}

#[test]
fn priority_queue_dequeues_smallest_first_and_equal_priorities_as_tensorflow()
{
    let q = PriorityQueue::builder(10, QueueSpec::dtypes([DType::I64]))
        .build()
        .unwrap();
    for (p, tag) in [(5, 0), (1, 1), (5, 2), (-3, 3), (1, 4)] {
        q.enqueue(vec![
            Tensor::scalar(p as i64).into(),
            Tensor::scalar(tag as i64).into(),
        ])
        .unwrap();
    }
    let batch = q.dequeue_many(5).unwrap();
    assert_eq!(ints_of(&batch), [-3, 1, 1, 5, 5]);
    // TensorFlow 2.21 gives the same (here, by its heap's algorithm,
    // equal priorities happen to leave in arrival order).
    assert_eq!(ints_of(&batch[1..]), [3, 1, 4, 0, 2]);
}

#[test]
fn priority_queue_requires_an_i64_scalar_priority() {
    let q = PriorityQueue::builder(10, QueueSpec::new())
        .build()
        .unwrap();
    let err = q.enqueue(vec![Tensor::scalar(1i32).into()]).unwrap_err();
    assert_eq!(err.field(), Some("priority"));
    let err = q.enqueue(ints(&[1, 2])).unwrap_err();
    assert_eq!(err.field(), Some("priority"));
}

#[test]
fn stats_count_enqueued_and_dequeued_elements() {
    let q = fifo(10);
    q.enqueue_many(ints(&[1, 2, 3, 4])).unwrap();
    q.dequeue_many(3).unwrap();
    let s = q.stats();
    assert_eq!((s.enqueued, s.dequeued, s.size, s.capacity), (4, 3, 1, 10));
    assert!((s.fraction_full() - 0.1).abs() < 1e-12);
    assert!(!s.closed);
    q.close(false);
    assert!(q.stats().closed);
}

#[test]
fn dequeue_fails_when_registered_producers_were_never_started() {
    let q = fifo(4);
    q.register_producers(2);
    let err = q.dequeue_timeout(LONG).unwrap_err();
    assert_eq!(err.kind(), Kind::FailedPrecondition);
    assert!(
        err.message().contains("none of its 2 runner threads"),
        "{err}"
    );
    // Elements already there are still delivered.
    q.enqueue(int(1)).unwrap();
    assert_eq!(int_of(&q.dequeue().unwrap()), 1);
}

#[test]
fn last_producer_ending_without_close_wakes_blocked_dequeues_with_an_error() {
    let q = fifo(4);
    q.register_producers(2);
    q.producers_started(2);
    let blocked: Vec<_> = (0..2)
        .map(|_| {
            let q = q.clone();
            thread::spawn(move || q.dequeue_many_timeout(2, LONG))
        })
        .collect();
    wait_until(|| q.stats().blocked_dequeues >= 2);
    q.enqueue(int(1)).unwrap();
    q.producer_ended();
    q.producer_ended();
    for t in blocked {
        let err = t.join().unwrap().unwrap_err();
        assert_eq!(err.kind(), Kind::FailedPrecondition);
        assert!(err.message().contains("ended without closing"), "{err}");
    }
    assert_eq!(q.size(), 1, "the element a waiter held was put back");
}

#[test]
fn queue_without_registered_producers_blocks_until_fed() {
    let q = fifo(4);
    let consumer = {
        let q = q.clone();
        thread::spawn(move || q.dequeue_timeout(LONG))
    };
    wait_until(|| q.stats().blocked_dequeues >= 1);
    q.enqueue(int(5)).unwrap();
    assert_eq!(int_of(&consumer.join().unwrap().unwrap()), 5);
}

#[test]
fn enqueue_many_rows_and_single_elements_batch_together_in_order() {
    let spec = QueueSpec::new()
        .component(ComponentSpec::new(DType::F32).shape([2]))
        .component(ComponentSpec::new(DType::I64).shape([]));
    let q = FifoQueue::builder(10, spec).build().unwrap();
    q.enqueue(vec![
        Tensor::vector(vec![0f32, 0.5]).into(),
        Tensor::scalar(0i64).into(),
    ])
    .unwrap();
    q.enqueue_many(vec![
        Tensor::new([2, 2], vec![1f32, 1.5, 2.0, 2.5])
            .unwrap()
            .into(),
        Tensor::vector(vec![1i64, 2]).into(),
    ])
    .unwrap();
    q.enqueue(vec![
        Tensor::vector(vec![3f32, 3.5]).into(),
        Tensor::scalar(3i64).into(),
    ])
    .unwrap();
    let batch = q.dequeue_many(4).unwrap();
    let x = batch[0].dense().unwrap();
    assert_eq!(x.dims(), &[4, 2]);
    assert_eq!(
        x.as_slice::<f32>().unwrap(),
        &[0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5]
    );
    assert_eq!(ints_of(&batch[1..]), [0, 1, 2, 3]);
}

#[test]
fn enqueue_many_rows_dequeue_unstacked_as_single_elements() {
    let q = FifoQueue::builder(10, QueueSpec::dtypes([DType::I64]))
        .build()
        .unwrap();
    q.enqueue_many(vec![Tensor::new([3, 2], vec![1i64, 2, 3, 4, 5, 6])
        .unwrap()
        .into()])
        .unwrap();
    let rows = q.dequeue_many_unstacked(3).unwrap();
    let got: Vec<Vec<i64>> = rows
        .iter()
        .map(|e| {
            let t = e[0].dense().unwrap();
            assert_eq!(t.dims(), &[2]);
            t.as_slice::<i64>().unwrap().to_vec()
        })
        .collect();
    assert_eq!(got, [[1, 2], [3, 4], [5, 6]]);
}

#[test]
fn enqueue_many_rejects_a_wrong_dtype_or_row_shape_and_enqueues_nothing() {
    let spec = QueueSpec::new()
        .component(ComponentSpec::new(DType::F32).shape([2]).name("x"));
    let q = FifoQueue::builder(10, spec).build().unwrap();
    let err = q
        .enqueue_many(vec![Tensor::new([2, 3], vec![0f32; 6]).unwrap().into()])
        .unwrap_err();
    assert_eq!(err.kind(), Kind::InvalidArgument);
    assert_eq!(err.field(), Some("x"));
    assert!(err.message().contains("[3]"), "{err}");
    let err = q
        .enqueue_many(vec![Tensor::new([2, 2], vec![0i64; 4]).unwrap().into()])
        .unwrap_err();
    assert_eq!(err.field(), Some("x"));
    assert!(err.message().contains("dtype"), "{err}");
    assert_eq!(q.size(), 0);
}

#[test]
fn batches_of_rows_with_unequal_undeclared_shapes_fail_and_keep_the_rows() {
    let q = FifoQueue::builder(10, QueueSpec::dtypes([DType::I64]))
        .build()
        .unwrap();
    q.enqueue_many(vec![Tensor::new([1, 1], vec![1i64]).unwrap().into()])
        .unwrap();
    q.enqueue_many(vec![Tensor::new([1, 2], vec![2i64, 3]).unwrap().into()])
        .unwrap();
    let err = q.dequeue_many(2).unwrap_err();
    assert_eq!(err.kind(), Kind::InvalidArgument);
    assert_eq!(err.field(), Some("component 0"));
    assert_eq!(q.size(), 2);
    assert_eq!(ints_of(&q.dequeue().unwrap()), [1]);
    assert_eq!(ints_of(&q.dequeue().unwrap()), [2, 3]);
}

#[test]
fn priority_queue_orders_enqueue_many_rows_by_their_own_priority() {
    let q = PriorityQueue::builder(10, QueueSpec::dtypes([DType::I64]))
        .build()
        .unwrap();
    q.enqueue_many(vec![
        Tensor::vector(vec![5i64, -1, 3]).into(),
        Tensor::vector(vec![50i64, 10, 30]).into(),
    ])
    .unwrap();
    q.enqueue(vec![
        Tensor::scalar(0i64).into(),
        Tensor::scalar(0i64).into(),
    ])
    .unwrap();
    let batch = q.dequeue_many(4).unwrap();
    assert_eq!(ints_of(&batch), [-1, 0, 3, 5]);
    assert_eq!(ints_of(&batch[1..]), [10, 0, 30, 50]);
}

#[test]
fn shuffle_queue_delivers_enqueue_many_rows_exactly_once() {
    let q = shuffle(100, 10);
    for start in (0..60).step_by(20) {
        q.enqueue_many(ints(&(start..start + 20).collect::<Vec<_>>()))
            .unwrap();
    }
    q.close(false);
    let mut got = Vec::new();
    while let Ok(b) = q.dequeue_up_to(7) {
        got.extend(ints_of(&b));
    }
    assert_eq!(sorted(got.clone()), (0..60).collect::<Vec<_>>());
    assert_ne!(got, (0..60).collect::<Vec<_>>());
}
