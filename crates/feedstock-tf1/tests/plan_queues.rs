//! Queues made by hand in a graph (`tf.FIFOQueue` and friends), their
//! enqueue, close and size ops, and queue runners over them; behaviour
//! checked against TensorFlow 2.21's `tf.compat.v1`.

use feedstock_tf1::kernels::math::BinaryOp;
use feedstock_tf1::op::{Binary, Cast};
use std::time::{Duration, Instant};

use feedstock::coord::Coordinator;
use feedstock::queue::PartialShape;
use feedstock::{DType, Kind, Result, Tensor};
use feedstock_tf1::{Graph, ProducerOptions, QueueKind, Session, StaticShape};

fn scalar() -> StaticShape {
    Some(PartialShape::new(Vec::new()))
}

#[test]
fn fed_enqueues_come_out_in_order_and_a_closed_queue_ends_out_of_range(
) -> Result<()> {
    let g = Graph::new();
    let q = g.queue(
        QueueKind::Fifo,
        3,
        &[(DType::I64, scalar()), (DType::String, scalar())],
        None,
    )?;
    let x = g.placeholder(DType::I64, scalar(), None)?;
    let a = g.constant(Tensor::string("a"))?;
    let put = g.enqueue(q, &[x, a], false)?;
    let nums = g.constant(Tensor::vector(vec![10i64, 11]))?;
    let strs = g.constant(Tensor::vector(vec![
        bytes::Bytes::from_static(b"b"),
        bytes::Bytes::from_static(b"c"),
    ]))?;
    let put_many = g.enqueue(q, &[nums, strs], true)?;
    let size = g.queue_size(q)?;
    let one = g.dequeue(q)?;
    let two = g.dequeue_many(q, 2, false)?;
    let close = g.queue_close(q, false)?;
    let closed = g.queue_is_closed(q)?;
    assert_eq!(g.shape(two[0]).unwrap().dims(), &[Some(2)]);

    let sess = Session::new(&g);
    let added = sess.run(&[put], &[(x, Tensor::scalar(7i64).into())])?;
    assert_eq!(added[0].dense()?.scalar_value::<i32>()?, 1);
    let added = sess.run(&[put_many], &[])?;
    assert_eq!(added[0].dense()?.scalar_value::<i32>()?, 2);
    assert_eq!(
        sess.run(&[size], &[])?[0].dense()?.scalar_value::<i32>()?,
        3
    );
    let v = sess.run(&one, &[])?;
    assert_eq!(v[0].dense()?.scalar_value::<i64>()?, 7);
    let v = sess.run(&two, &[])?;
    assert_eq!(v[0].dense()?.as_slice::<i64>()?, &[10, 11]);
    assert_eq!(v[1].dense()?.as_slice::<bytes::Bytes>()?[1], "c");

    let is_closed = |sess: &Session| -> Result<bool> {
        sess.run(&[closed], &[])?[0].dense()?.scalar_value::<bool>()
    };
    assert!(!is_closed(&sess)?);
    sess.run(&[close], &[])?;
    assert!(is_closed(&sess)?);
    let e = sess.run(&one, &[]).unwrap_err();
    assert_eq!(e.kind(), Kind::OutOfRange, "{e}");
    let e = sess
        .run(&[put], &[(x, Tensor::scalar(1i64).into())])
        .unwrap_err();
    assert_eq!(e.kind(), Kind::Cancelled, "{e}");
    Ok(())
}

#[test]
fn a_runner_fills_a_queue_from_a_producer_and_closes_it_after_the_last_thread(
) -> Result<()> {
    let g = Graph::new();
    let src = g.range_input_producer(
        10,
        ProducerOptions {
            num_epochs: Some(2),
            shuffle: false,
            ..Default::default()
        },
    )?;
    let v = g.dequeue(src)?[0];
    let sq = g.op1(Binary { op: BinaryOp::Mul }, &[v, v])?;
    let q = g.queue(
        QueueKind::Fifo,
        4,
        &[(DType::I32, scalar()), (DType::I32, scalar())],
        None,
    )?;
    let put = g.enqueue(q, &[v, sq], false)?;
    // Two threads running the same op, as `QueueRunner(q, [op] * 2)`.
    let runner = g.queue_runner(q, &[put, put], &[])?;
    g.add_queue_runner(runner)?;
    let batch = g.dequeue_many(q, 3, true)?;

    let sess = Session::new(&g);
    let coord = Coordinator::new();
    let threads = sess.start_queue_runners(&coord)?;
    let mut got = Vec::new();
    loop {
        match sess.run(&batch, &[]) {
            Ok(v) => {
                let a = v[0].dense()?.as_slice::<i32>()?.to_vec();
                let b = v[1].dense()?.as_slice::<i32>()?.to_vec();
                got.extend(a.into_iter().zip(b));
            }
            Err(e) if e.kind() == Kind::OutOfRange => break,
            Err(e) => return Err(e),
        }
    }
    coord.request_stop();
    coord.join(threads, Duration::from_secs(10))?;
    got.sort_unstable();
    let want: Vec<(i32, i32)> =
        (0..10).flat_map(|i| [(i, i * i), (i, i * i)]).collect();
    assert_eq!(got, want, "every element of both epochs, once each");
    // Starting it again in this session adds no threads.
    let coord = Coordinator::new();
    assert!(sess.start_queue_runner(runner, &coord)?.is_empty());
    Ok(())
}

#[test]
fn a_runner_error_stops_the_coordinator_with_it() -> Result<()> {
    let g = Graph::new();
    let q = g.queue(QueueKind::Fifo, 2, &[(DType::F32, scalar())], None)?;
    let bad = g.constant(Tensor::string("x"))?;
    let parsed = g.op1(Cast { dtype: DType::F32 }, &[bad])?;
    let put = g.enqueue(q, &[parsed], false)?;
    let runner = g.queue_runner(q, &[put], &[])?;
    let out = g.dequeue(q)?;
    let sess = Session::new(&g);
    let coord = Coordinator::new();
    let threads = sess.start_queue_runner(runner, &coord)?;
    // As in TensorFlow: the failing runner closes its queue, so the
    // training loop's dequeue ends, and joining the threads raises the
    // error itself.
    let e = sess.run(&out, &[]).unwrap_err();
    assert_eq!(e.kind(), Kind::OutOfRange, "{e}");
    let joined = coord.join(threads, Duration::from_secs(10)).unwrap_err();
    assert_ne!(joined.kind(), Kind::OutOfRange, "the real error: {joined}");
    assert_eq!(joined.kind(), Kind::Unimplemented, "{joined}");
    Ok(())
}

#[test]
fn a_shuffle_queue_keeps_min_after_dequeue_until_closed() -> Result<()> {
    let g = Graph::new();
    let shape = Some(PartialShape::new(vec![Some(2)]));
    let q = g.queue(
        QueueKind::RandomShuffle {
            min_after_dequeue: 2,
            seed: Some(3),
        },
        10,
        &[(DType::F32, shape)],
        None,
    )?;
    let rows = g.constant(Tensor::new(
        [4, 2],
        (0..8).map(|i| i as f32).collect::<Vec<_>>(),
    )?)?;
    let put = g.enqueue(q, &[rows], true)?;
    let one = g.dequeue(q)?;
    let close = g.queue_close(q, false)?;
    let sess = Session::new(&g);
    sess.set_operation_timeout(Some(Duration::from_millis(200)));
    sess.run(&[put], &[])?;
    let mut got = Vec::new();
    for _ in 0..2 {
        got.push(sess.run(&one, &[])?[0].dense()?.as_slice::<f32>()?.to_vec());
    }
    // Two left, both held back while open: the dequeue waits and times out.
    let started = Instant::now();
    let e = sess.run(&one, &[]).unwrap_err();
    assert_eq!(e.kind(), Kind::DeadlineExceeded, "{e}");
    assert!(started.elapsed() >= Duration::from_millis(150));
    sess.run(&[close], &[])?;
    for _ in 0..2 {
        got.push(sess.run(&one, &[])?[0].dense()?.as_slice::<f32>()?.to_vec());
    }
    got.sort_by(|a, b| a[0].total_cmp(&b[0]));
    assert_eq!(
        got,
        vec![vec![0., 1.], vec![2., 3.], vec![4., 5.], vec![6., 7.]]
    );
    Ok(())
}

#[test]
fn a_padding_queue_pads_each_batch_to_its_longest() -> Result<()> {
    let g = Graph::new();
    let q = g.queue(
        QueueKind::PaddingFifo,
        5,
        &[(DType::I32, Some(PartialShape::new(vec![None])))],
        None,
    )?;
    let a = g.constant(Tensor::vector(vec![1i32, 2, 3]))?;
    let b = g.constant(Tensor::vector(vec![4i32]))?;
    let (pa, pb) = (g.enqueue(q, &[a], false)?, g.enqueue(q, &[b], false)?);
    let two = g.dequeue_many(q, 2, false)?;
    assert_eq!(g.shape(two[0]).unwrap().dims(), &[Some(2), None]);
    let sess = Session::new(&g);
    sess.run(&[pa], &[])?;
    sess.run(&[pb], &[])?;
    let v = sess.run(&two, &[])?;
    let t = v[0].dense()?;
    assert_eq!(t.dims(), &[2, 3]);
    assert_eq!(t.as_slice::<i32>()?, &[1, 2, 3, 4, 0, 0]);
    Ok(())
}

#[test]
fn what_tensorflow_refuses_is_refused_where_it_refuses_it() -> Result<()> {
    let g = Graph::new();
    let two = Some(PartialShape::new(vec![Some(2)]));
    let q = g.queue(QueueKind::Fifo, 5, &[(DType::I32, two)], None)?;
    let three = g.constant(Tensor::vector(vec![1i32, 2, 3]))?;
    let e = g.enqueue(q, &[three], false).unwrap_err();
    assert_eq!(e.kind(), Kind::InvalidArgument);
    assert!(e.to_string().contains("[2]"), "{e}");
    let f = g.constant(Tensor::vector(vec![1f32, 2.]))?;
    assert!(g.enqueue(q, &[f], false).is_err(), "another dtype");
    assert!(g.enqueue(q, &[f, f], false).is_err(), "two values for one");
    let s = g.constant(Tensor::scalar(1i32))?;
    assert!(
        g.enqueue(q, &[s], true).is_err(),
        "enqueue_many of a scalar"
    );
    let e = g
        .queue(
            QueueKind::RandomShuffle {
                min_after_dequeue: 5,
                seed: None,
            },
            5,
            &[(DType::I32, None)],
            None,
        )
        .unwrap_err();
    assert_eq!(e.kind(), Kind::InvalidArgument);
    assert!(g
        .queue(QueueKind::PaddingFifo, 5, &[(DType::I32, None)], None)
        .is_err());
    let unknown = Some(PartialShape::new(vec![None]));
    let e = g
        .queue(QueueKind::Fifo, 5, &[(DType::I32, unknown)], None)
        .unwrap_err();
    assert!(e.to_string().contains("fully defined"), "{e}");

    // A queue without shapes builds dequeue_many, which fails when run.
    let any = g.queue(QueueKind::Fifo, 5, &[(DType::I32, None)], None)?;
    let many = g.dequeue_many(any, 2, false)?;
    let put = g.enqueue(any, &[s], false)?;
    let sess = Session::new(&g);
    sess.run(&[put], &[])?;
    sess.run(&[put], &[])?;
    let e = sess.run(&many, &[]).unwrap_err();
    assert_eq!(e.kind(), Kind::InvalidArgument);
    assert!(e.to_string().contains("shape"), "{e}");
    Ok(())
}

#[test]
fn a_blocked_enqueue_is_woken_by_a_cancelling_close() -> Result<()> {
    let g = Graph::new();
    let q = g.queue(QueueKind::Fifo, 1, &[(DType::I32, scalar())], None)?;
    let s = g.constant(Tensor::scalar(1i32))?;
    let put = g.enqueue(q, &[s], false)?;
    let cancel = g.queue_close(q, true)?;
    let sess = Session::new(&g);
    sess.run(&[put], &[])?;
    let blocked = {
        let sess = sess.clone();
        std::thread::spawn(move || sess.run(&[put], &[]))
    };
    // Cancel only once the enqueue is really blocked on the full queue.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while sess.queue_stats(q)?.blocked_enqueues == 0 {
        assert!(std::time::Instant::now() < deadline, "never blocked");
        std::thread::yield_now();
    }
    sess.run(&[cancel], &[])?;
    let e = blocked.join().unwrap().unwrap_err();
    assert_eq!(e.kind(), Kind::Cancelled, "{e}");
    Ok(())
}

#[test]
fn reading_a_queue_whose_runner_was_never_started_fails_instead_of_hanging(
) -> Result<()> {
    let g = Graph::new();
    let q = g.queue(QueueKind::Fifo, 2, &[(DType::I32, scalar())], None)?;
    let one = g.constant(Tensor::scalar(1i32))?;
    let runner = g.queue_runner(q, &[g.enqueue(q, &[one], false)?], &[])?;
    g.add_queue_runner(runner)?;
    let out = g.dequeue(q)?;
    let sess = Session::new(&g);
    // TensorFlow would wait for ever here.
    let e = sess.run(&out, &[]).unwrap_err();
    assert_eq!(e.kind(), Kind::FailedPrecondition, "{e}");
    let coord = Coordinator::new();
    let threads = sess.start_queue_runners(&coord)?;
    let v = sess.run(&out, &[])?;
    assert_eq!(v[0].dense()?.scalar_value::<i32>()?, 1);
    coord.request_stop();
    coord.join(threads, Duration::from_secs(10))?;
    Ok(())
}

#[test]
fn a_second_plain_close_is_cancelled_and_a_dequeue_of_none_is_empty(
) -> Result<()> {
    let g = Graph::new();
    let unknown = Some(PartialShape::new(vec![None, Some(3)]));
    let q =
        g.queue(QueueKind::PaddingFifo, 2, &[(DType::F32, unknown)], None)?;
    let close = g.queue_close(q, false)?;
    let cancel = g.queue_close(q, true)?;
    let none = g.dequeue_many(q, 0, false)?;
    let sess = Session::new(&g);
    // TensorFlow: unknown dimensions of an empty batch are 0.
    assert_eq!(sess.run(&none, &[])?[0].dense()?.dims(), &[0, 0, 3]);
    sess.run(&[close], &[])?;
    let err = sess.run(&[close], &[]).unwrap_err();
    assert_eq!(err.kind(), Kind::Cancelled);
    assert!(err.message().contains("already closed"), "{err}");
    sess.run(&[cancel], &[])?;
    assert_eq!(sess.run(&none, &[])?[0].dense()?.dims(), &[0, 0, 3]);
    Ok(())
}

#[test]
fn a_priority_queue_gives_the_smallest_priority_first() -> Result<()> {
    let g = Graph::new();
    let q = g.queue(
        QueueKind::Priority,
        5,
        &[(DType::I64, scalar()), (DType::I32, scalar())],
        None,
    )?;
    let prios = g.constant(Tensor::vector(vec![3i64, 1, 3, 2]))?;
    let vals = g.constant(Tensor::vector(vec![30i32, 10, 31, 20]))?;
    let put = g.enqueue(q, &[prios, vals], true)?;
    let got = g.dequeue_many(q, 4, false)?;
    let sess = Session::new(&g);
    sess.run(&[put], &[])?;
    let v = sess.run(&got, &[])?;
    assert_eq!(v[0].dense()?.as_slice::<i64>()?, &[1, 2, 3, 3]);
    assert_eq!(v[1].dense()?.as_slice::<i32>()?, &[10, 20, 30, 31]);
    let bad = g.queue(QueueKind::Priority, 5, &[(DType::I32, scalar())], None);
    assert_eq!(bad.unwrap_err().kind(), Kind::InvalidArgument);
    Ok(())
}
