//! Producers: every element once per epoch, shuffled within the epoch,
//! seeded, bounded by num_epochs, and ending with OutOfRange and a clean
//! coordinator join.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use feedstock::coord::QueueRunner;
use feedstock::coord::{Coordinator, Pipeline, ThreadHandle};
use feedstock::input::{
    input_producer, limit_epochs, match_filenames_once, range_input_producer,
    slice_input_producer, string_input_producer,
};
use feedstock::queue::{FifoQueue, Queue};
use feedstock::reader::WorkQueue;
use feedstock::{Kind, Tensor};

const JOIN: Duration = Duration::from_secs(10);

fn start(pipeline: &mut Pipeline) -> (Coordinator, Vec<ThreadHandle>) {
    let coord = Coordinator::new();
    let threads = pipeline.start(&coord).unwrap();
    (coord, threads)
}

/// Every string until the clean end of input.
fn drain(files: &Arc<FifoQueue>) -> Vec<String> {
    let mut out = Vec::new();
    loop {
        match files.next_work() {
            Ok(f) => out.push(f),
            Err(e) => {
                assert_eq!(e.kind(), Kind::OutOfRange, "{e}");
                return out;
            }
        }
    }
}

fn names(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("file{i:02}")).collect()
}

#[test]
fn each_epoch_holds_every_string_once_then_out_of_range() {
    let files = names(10);
    let mut p = Pipeline::new();
    let q = string_input_producer(&mut p, files.clone())
        .num_epochs(3)
        .seed(7)
        .capacity(4)
        .build()
        .unwrap();
    let (coord, threads) = start(&mut p);
    let got = drain(&q);
    assert_eq!(got.len(), 30);
    let mut sorted_files = files.clone();
    sorted_files.sort();
    let mut orders = Vec::new();
    for epoch in got.chunks(10) {
        let mut e = epoch.to_vec();
        orders.push(e.clone());
        e.sort();
        assert_eq!(e, sorted_files);
    }
    assert!(
        orders.iter().any(|o| *o != files),
        "shuffle left every epoch in input order"
    );
    coord.join(threads, JOIN).unwrap();
}

#[test]
fn the_same_seed_gives_the_same_order_and_no_shuffle_keeps_input_order() {
    let run = |shuffle: bool, seed: u64| {
        let mut p = Pipeline::new();
        let q = string_input_producer(&mut p, names(8))
            .num_epochs(2)
            .shuffle(shuffle)
            .seed(seed)
            .build()
            .unwrap();
        let (coord, threads) = start(&mut p);
        let got = drain(&q);
        coord.join(threads, JOIN).unwrap();
        got
    };
    assert_eq!(run(true, 42), run(true, 42));
    let plain = run(false, 42);
    assert_eq!(plain[..8], names(8)[..]);
    assert_eq!(plain[8..], names(8)[..]);
}

#[test]
fn without_num_epochs_the_producer_runs_until_stopped() {
    let mut p = Pipeline::new();
    let q = string_input_producer(&mut p, ["a", "b"]).build().unwrap();
    let (coord, threads) = start(&mut p);
    for _ in 0..50 {
        let f = q.next_work().unwrap();
        assert!(f == "a" || f == "b");
    }
    coord.request_stop();
    coord.join(threads, JOIN).unwrap();
}

#[test]
fn empty_inputs_are_rejected_when_built() {
    let mut p = Pipeline::new();
    let e = string_input_producer(&mut p, Vec::<String>::new())
        .build()
        .unwrap_err();
    assert_eq!(e.kind(), Kind::InvalidArgument);
    let e = range_input_producer(&mut p, 0).build().unwrap_err();
    assert_eq!(e.kind(), Kind::InvalidArgument);
    assert_eq!(p.pending_runners(), 0);
}

#[test]
fn range_input_producer_yields_every_index_once_per_epoch() {
    let mut p = Pipeline::new();
    let q = range_input_producer(&mut p, 5)
        .num_epochs(2)
        .seed(1)
        .build()
        .unwrap();
    let (coord, threads) = start(&mut p);
    let mut got = Vec::new();
    while let Ok(e) = q.dequeue() {
        got.push(e[0].dense().unwrap().scalar_value::<i32>().unwrap());
    }
    for epoch in got.chunks(5) {
        let mut e = epoch.to_vec();
        e.sort();
        assert_eq!(e, [0, 1, 2, 3, 4]);
    }
    assert_eq!(got.len(), 10);
    coord.join(threads, JOIN).unwrap();
}

#[test]
fn input_producer_yields_the_rows_of_a_matrix() {
    let m = Tensor::new(vec![3, 2], vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])
        .unwrap();
    let mut p = Pipeline::new();
    let q = input_producer(&mut p, m)
        .num_epochs(1)
        .shuffle(false)
        .build()
        .unwrap();
    let (coord, threads) = start(&mut p);
    let mut rows = Vec::new();
    while let Ok(e) = q.dequeue() {
        let t = e[0].dense().unwrap();
        assert_eq!(t.dims(), [2]);
        rows.push(t.as_slice::<f32>().unwrap().to_vec());
    }
    assert_eq!(rows, [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]);
    coord.join(threads, JOIN).unwrap();
}

#[test]
fn slice_input_producer_keeps_rows_aligned_and_gives_each_once_per_epoch() {
    let n = 20;
    let images = Tensor::new(
        vec![n, 2],
        (0..n as i64).flat_map(|i| [i, i * 10]).collect::<Vec<_>>(),
    )
    .unwrap();
    let labels = Tensor::vector(
        (0..n)
            .map(|i| Bytes::from(format!("label{i}")))
            .collect::<Vec<_>>(),
    );
    let mut p = Pipeline::new();
    let slices = slice_input_producer(&mut p, vec![images, labels])
        .num_epochs(3)
        .seed(3)
        .build()
        .unwrap();
    let shared = Arc::clone(slices.tensors());
    let (coord, threads) = start(&mut p);
    let mut counts: BTreeMap<i64, usize> = BTreeMap::new();
    let mut order = Vec::new();
    loop {
        let row = match slices.dequeue() {
            Ok(row) => row,
            Err(e) => {
                assert_eq!(e.kind(), Kind::OutOfRange, "{e}");
                break;
            }
        };
        let image = row[0].as_slice::<i64>().unwrap();
        let label = &row[1].as_slice::<Bytes>().unwrap()[0];
        assert_eq!(image[1], image[0] * 10);
        assert_eq!(label, &format!("label{}", image[0]));
        *counts.entry(image[0]).or_default() += 1;
        order.push(image[0]);
    }
    assert_eq!(counts.len(), n);
    assert!(counts.values().all(|&c| c == 3));
    assert_ne!(order[..n], (0..n as i64).collect::<Vec<_>>()[..]);
    // The preloaded data is the same allocation the producer holds.
    assert!(Arc::ptr_eq(&shared, slices.tensors()));
    coord.join(threads, JOIN).unwrap();
}

#[test]
fn slice_input_producer_rejects_tensors_of_different_lengths() {
    let mut p = Pipeline::new();
    let e = slice_input_producer(
        &mut p,
        vec![Tensor::vector(vec![1i64, 2]), Tensor::vector(vec![1i64])],
    )
    .build()
    .unwrap_err();
    assert_eq!(e.kind(), Kind::InvalidArgument);
    assert_eq!(e.field(), Some("1"));
}

#[test]
fn match_filenames_once_globs_sorted_or_names_the_pattern() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["b.tfrecord", "a.tfrecord", "x.csv"] {
        std::fs::write(dir.path().join(name), b"").unwrap();
    }
    let d = dir.path().to_str().unwrap();
    let got = match_filenames_once(&format!("{d}/*.tfrecord")).unwrap();
    assert_eq!(got, [format!("{d}/a.tfrecord"), format!("{d}/b.tfrecord")]);
    let pattern = format!("{d}/train-*");
    let e = match_filenames_once(&pattern).unwrap_err();
    assert_eq!(e.kind(), Kind::NotFound);
    assert!(e.to_string().contains(&pattern), "{e}");
}

#[test]
fn a_reader_refuses_a_queue_that_does_not_hold_strings() {
    let mut p = Pipeline::new();
    let q = range_input_producer(&mut p, 3).build().unwrap();
    let (coord, threads) = start(&mut p);
    let as_dyn: Arc<dyn Queue> = q;
    let e = as_dyn.next_work().unwrap_err();
    assert_eq!(e.kind(), Kind::InvalidArgument);
    coord.request_stop();
    coord.join(threads, JOIN).unwrap();
}

// input.py limit_epochs / input_producer: `num_epochs <= 0` raises
// ValueError("num_epochs must be > 0").
#[test]
fn num_epochs_zero_is_refused_by_every_producer() {
    let mut pipeline = Pipeline::new();
    let e = string_input_producer(&mut pipeline, vec!["a".to_owned()])
        .num_epochs(0)
        .build()
        .unwrap_err();
    assert_eq!(e.kind(), Kind::InvalidArgument);
    assert!(e.message().contains("num_epochs must be > 0"), "{e}");
    let e = range_input_producer(&mut pipeline, 3)
        .num_epochs(0)
        .build()
        .unwrap_err();
    assert_eq!(e.kind(), Kind::InvalidArgument);
    let e = slice_input_producer(
        &mut pipeline,
        vec![Tensor::vector(vec![1i64, 2])],
    )
    .num_epochs(0)
    .build()
    .unwrap_err();
    assert_eq!(e.kind(), Kind::InvalidArgument);
    let e = input_producer(&mut pipeline, Tensor::vector(vec![1i64]))
        .num_epochs(0)
        .build()
        .unwrap_err();
    assert_eq!(e.kind(), Kind::InvalidArgument);
    assert_eq!(pipeline.pending_runners(), 0, "nothing was registered");
    assert_eq!(
        limit_epochs(Tensor::scalar(1i64), Some(0))
            .unwrap_err()
            .kind(),
        Kind::InvalidArgument
    );
}

// input_test.py LimitEpochsTest.testNoLimit / testLimit: the tensor comes
// out num_epochs times, then OutOfRange.
#[test]
fn limit_epochs_hands_out_the_tensor_num_epochs_times_then_ends() {
    let love = Tensor::scalar(Bytes::from_static(b"love me"));
    let limited = limit_epochs(love.clone(), Some(2)).unwrap();
    assert_eq!(limited.next().unwrap(), love);
    assert_eq!(limited.next().unwrap(), love);
    let e = limited.next().unwrap_err();
    assert_eq!(e.kind(), Kind::OutOfRange);
    assert!(limited.next().unwrap_err().is_out_of_range());
    assert_eq!(limited.epochs_taken(), 2);

    let unlimited = limit_epochs(love.clone(), None).unwrap();
    for _ in 0..100 {
        assert_eq!(unlimited.next().unwrap(), love);
    }
    assert_eq!(unlimited.epochs_taken(), 100);
}

#[test]
fn limit_epochs_shared_by_runner_threads_delivers_exactly_the_limit() {
    let q = FifoQueue::builder(
        4,
        feedstock::queue::QueueSpec::dtypes([feedstock::DType::I64]),
    )
    .build()
    .unwrap();
    let limited =
        Arc::new(limit_epochs(Tensor::scalar(7i64), Some(50)).unwrap());
    let dyn_q: Arc<dyn Queue> = q.clone();
    let mut runner = QueueRunner::new(dyn_q);
    for _ in 0..3 {
        let (limited, q) = (limited.clone(), q.clone());
        runner.add_op(move || q.enqueue(vec![limited.next()?.into()]));
    }
    let mut pipeline = Pipeline::new();
    pipeline.add_runner(runner).unwrap();
    let (coord, threads) = start(&mut pipeline);
    let mut n = 0;
    while q.dequeue().is_ok() {
        n += 1;
    }
    coord.join(threads, JOIN).unwrap();
    assert_eq!(n, 50);
}
