"""Hand-made queues, queue runners and the coordinator in compat.v1,
checked against what TensorFlow 2.21's tf.compat.v1 (graph mode) gave
for the same programs."""

import sys
import threading
import time

import numpy as np
import pytest

import feedstock.compat.v1 as tf


def test_shapes_are_read_as_tensorflow_reads_them():
    # [] is one scalar shape; a flat list is one shape, so two dtypes
    # given [2, 3] have one shape for two components.
    assert tf.FIFOQueue(5, [tf.int32], shapes=[]).shapes == [tf.TensorShape([])]
    assert tf.FIFOQueue(5, tf.int32, shapes=[2, 3]).shapes == [tf.TensorShape([2, 3])]
    with pytest.raises(ValueError, match="same length"):
        tf.FIFOQueue(5, [tf.int32, tf.int32], shapes=[2, 3])
    # A queue other than a padding one needs fully defined shapes.
    for dtypes, shapes in (([tf.int32] * 2, [None, [2]]), (tf.int32, tf.TensorShape(None)), (tf.int32, [[2, None]])):
        with pytest.raises(ValueError, match="fully defined"):
            tf.RandomShuffleQueue(5, 1, dtypes, shapes=shapes)
    # A padding queue needs a list of shapes, not one flat shape.
    for shapes in (None, [3], (2,), [None], tf.TensorShape([2])):
        with pytest.raises(ValueError, match="list of shapes"):
            tf.PaddingFIFOQueue(5, [tf.int32], shapes=shapes)
    assert tf.PaddingFIFOQueue(5, [tf.int32], shapes=[[None, 2]]).shapes[0].as_list() == [None, 2]
    with pytest.raises(ValueError, match="names"):
        tf.FIFOQueue(5, [tf.int32, tf.int32], names=["a"])


def test_dequeue_of_none_gives_empty_batches_at_once():
    q = tf.FIFOQueue(5, [tf.int32, tf.string], shapes=[[], [2]])
    p = tf.PaddingFIFOQueue(5, [tf.float32], shapes=[[None, 3]])
    many, up_to, padded = q.dequeue_many(0), q.dequeue_up_to(tf.constant(0)), p.dequeue_many(0)
    assert many[1].shape.as_list() == [0, 2] and up_to[0].shape.as_list() == [None]
    with pytest.raises(ValueError):
        q.dequeue_many(-1)
    with pytest.raises(TypeError):
        q.dequeue_many(2.0)
    with tf.Session() as s:
        a, b = s.run(many)
        assert a.shape == (0,) and a.dtype == np.int32 and b.shape == (0, 2)
        assert s.run(up_to)[0].shape == (0,)
        # Unknown dimensions of a padding queue's empty batch are 0.
        assert s.run(padded).shape == (0, 0, 3)
        s.run(q.close())
        # Even closed and empty.
        assert s.run(many)[0].shape == (0,)


def test_a_dequeue_many_count_may_be_a_constant_tensor():
    q = tf.FIFOQueue(5, [tf.int32], shapes=[[]])
    d = q.dequeue_many(tf.constant(2))
    assert d.shape.as_list() == [2]
    with tf.Session() as s:
        s.run(q.enqueue_many([[4, 5, 6]]))
        assert s.run(d).tolist() == [4, 5]


def test_closing_a_closed_queue_is_cancelled_unless_it_cancels_enqueues():
    q = tf.FIFOQueue(5, [tf.int32], shapes=[[]])
    close, cancel = q.close(), q.close(cancel_pending_enqueues=True)
    empty = q.enqueue_many([np.zeros([0], np.int32)])
    with tf.Session() as s:
        assert s.run(close) is None
        with pytest.raises(tf.errors.CancelledError, match="already closed"):
            s.run(close)
        assert s.run(cancel) is None
        assert s.run(cancel) is None
        # An empty batch adds nothing, even to a closed queue.
        assert s.run(empty) is None
        with pytest.raises(tf.errors.CancelledError):
            s.run(q.enqueue(1))


def test_queue_runner_arguments_are_checked_as_tensorflow_checks_them():
    q = tf.FIFOQueue(5, [tf.int32], shapes=[[]])
    e = q.enqueue(1)
    with pytest.raises(ValueError):
        tf.train.QueueRunner(None, [e])
    with pytest.raises(ValueError):
        tf.train.QueueRunner(q, [])
    for types in ([tf.errors.OutOfRangeError], (), (ValueError,)):
        with pytest.raises(TypeError):
            tf.train.QueueRunner(q, [e], queue_closed_exception_types=types)
    qr = tf.train.QueueRunner(q, [e], queue_closed_exception_types=(tf.errors.OutOfRangeError,))
    assert qr.close_op is not None and qr.cancel_op is not None and qr.exceptions_raised == []


def test_runner_threads_include_a_close_on_stop_thread_with_a_coordinator():
    q = tf.FIFOQueue(5, [tf.int32], shapes=[[]])
    e = q.enqueue(1)
    qr = tf.train.QueueRunner(q, [e, e])
    tf.train.add_queue_runner(qr)
    with tf.Session() as s:
        coord = tf.train.Coordinator()
        threads = qr.create_threads(s, coord=coord, start=True)
        # TensorFlow 2.21: two enqueue threads and one close_on_stop.
        assert len(threads) == 3
        assert "QueueRunnerThread-fifo_queue-close_on_stop" in [t.name for t in threads]
        assert qr.create_threads(s, coord=coord) == []
        coord.request_stop()
        coord.join(threads)
        assert s.run(q.is_closed())
    with tf.Session() as s:
        coord = tf.train.Coordinator()
        assert len(tf.train.start_queue_runners(s, coord)) == 3
        coord.request_stop()
        coord.join()
    with tf.Session() as s:
        threads = tf.train.start_queue_runners(s)
        assert len(threads) == 2
        s.run(q.close(True))
        for t in threads:
            t.join(10)
        assert not any(t.is_alive() for t in threads)


def test_start_queue_runners_starts_another_collection():
    q = tf.FIFOQueue(5, [tf.int32], shapes=[[]])
    tf.train.add_queue_runner(tf.train.QueueRunner(q, [q.enqueue(1)]), collection="mine")
    assert tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS) == [] and len(tf.get_collection("mine")) == 1
    with tf.Session() as s:
        coord = tf.train.Coordinator()
        assert tf.train.start_queue_runners(s, coord) == []
        threads = tf.train.start_queue_runners(s, coord, collection="mine")
        assert len(threads) == 2
        assert s.run(q.dequeue_many(5), options=tf.RunOptions(timeout_in_ms=5000)).tolist() == [1] * 5
        coord.request_stop()
        coord.join(threads)
    with pytest.raises(ValueError, match="No default session"):
        tf.train.start_queue_runners()


def test_a_runner_error_without_a_coordinator_is_in_exceptions_raised():
    q = tf.FIFOQueue(5, [tf.float32], shapes=[[]])
    qr = tf.train.QueueRunner(q, [q.enqueue(tf.cast(tf.constant("x"), tf.float32))])
    with tf.Session() as s:
        threads = qr.create_threads(s, start=True)
        assert len(threads) == 1
        for t in threads:
            t.join(10)
        assert [type(e) for e in qr.exceptions_raised] == [tf.errors.UnimplementedError]


def test_coordinator_join_clear_stop_and_joined():
    c = tf.train.Coordinator()
    assert not c.joined and not c.should_stop() and not c.wait_for_stop(0.01)
    c.request_stop()
    assert c.wait_for_stop(0.01)
    c.join()
    assert c.joined
    c.clear_stop()
    assert not c.should_stop() and not c.joined
    try:
        raise KeyError("k")
    except KeyError:
        c.request_stop(sys.exc_info())
    with pytest.raises(KeyError):
        c.join()
    # After the join a real error is raised where it is reported.
    with pytest.raises(RuntimeError):
        c.request_stop(RuntimeError("late"))


def test_clean_stop_types_are_the_given_ones_even_none():
    c = tf.train.Coordinator(clean_stop_exception_types=[])
    c.request_stop(tf.errors.OutOfRangeError(None, None, "done"))
    with pytest.raises(tf.errors.OutOfRangeError):
        c.join()
    c = tf.train.Coordinator(clean_stop_exception_types=(ValueError,))
    c.request_stop(ValueError("v"))
    c.join()


def test_stop_on_exception_yields_nothing_and_swallows_everything():
    c = tf.train.Coordinator()
    with c.stop_on_exception() as v:
        assert v is None
        raise KeyboardInterrupt()
    assert c.should_stop()
    with pytest.raises(KeyboardInterrupt):
        c.join()


def test_join_reports_threads_still_running_after_the_grace_period():
    c = tf.train.Coordinator()
    ev = threading.Event()
    t = threading.Thread(target=ev.wait, args=(10,), name="slow")
    t.start()
    c.request_stop()
    with pytest.raises(RuntimeError, match="threads still running: slow"):
        c.join([t], stop_grace_period_secs=0.05)
    c2 = tf.train.Coordinator()
    c2.request_stop()
    c2.join([t], stop_grace_period_secs=0.05, ignore_live_threads=True)
    ev.set()
    t.join()


def test_join_waits_for_the_threads_when_no_stop_is_requested():
    c = tf.train.Coordinator()
    t = threading.Thread(target=time.sleep, args=(0.2,))
    t.start()
    c.join([t], stop_grace_period_secs=0)
    assert not t.is_alive()


def test_a_priority_queue_gives_the_smallest_priority_first():
    q = tf.PriorityQueue(10, [tf.string, tf.int32], shapes=[[], [2]])
    assert [d.name for d in q.dtypes] == ["int64", "string", "int32"] and q.name == "priority_queue"
    assert [s.as_list() for s in q.shapes] == [[], [], [2]]
    put = q.enqueue_many(([3, 9, 3, -1], [b"a", b"b", b"c", b"d"], [[1, 1], [2, 2], [3, 3], [4, 4]]))
    with tf.Session() as s:
        s.run(put)
        s.run(q.enqueue((5, b"five", [5, 5])))
        prio, name, pair = s.run(q.dequeue())
        assert (prio, name, pair.tolist()) == (-1, b"d", [4, 4])
        prios, names, pairs = s.run(q.dequeue_many(3))
        # TensorFlow 2.21: equal priorities in the order its heap gives
        # them (libstdc++'s std::priority_queue), here not arrival order.
        assert prios.tolist() == [3, 3, 5] and names.tolist() == [b"c", b"a", b"five"]
        assert pairs.tolist() == [[3, 3], [1, 1], [5, 5]]
        s.run(q.close())
        # TensorFlow's priority queue has no smaller last batch.
        with pytest.raises(tf.errors.OutOfRangeError):
            s.run(q.dequeue_up_to(5))
    assert tf.queue.PriorityQueue is tf.PriorityQueue
    with pytest.raises(TypeError):
        tf.PriorityQueue(10, [tf.int32])


def test_a_looper_thread_runs_its_target_until_the_stop():
    c = tf.train.Coordinator()
    calls = []

    def target(x):
        calls.append(x)
        if len(calls) == 3:
            c.request_stop()

    t = tf.train.LooperThread.loop(c, None, target, args=(7,))
    assert t.daemon
    c.join()
    assert calls == [7, 7, 7]
    with pytest.raises(ValueError):
        tf.train.LooperThread(object(), None)


def test_a_negative_min_after_dequeue_is_a_value_error():
    with pytest.raises(ValueError):
        tf.RandomShuffleQueue(5, -1, [tf.int32], shapes=[[]])


def test_producers_and_batching_are_in_the_queue_runners_collection(tmp_path):
    # TensorFlow (2.21) puts a QueueRunner for each producer and each
    # batching stage in the collection, so that a loop calling
    # create_threads on each starts the pipeline: 2 runners here, named
    # 'input_producer' and 'batch/fifo_queue', 4 threads with a
    # coordinator (one per runner and its close-on-stop thread), and
    # every line twice for 2 epochs.
    path = tmp_path / "f.txt"
    path.write_text("a\nb\nc\n")
    q = tf.train.string_input_producer([str(path)], num_epochs=2, shuffle=False)
    _, line = tf.TextLineReader().read(q)
    batch = tf.train.batch([line], 2, allow_smaller_final_batch=True)
    runners = tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)
    assert len(runners) == 2
    assert runners[0].name == "input_producer" and runners[0].queue is q
    with tf.Session() as s:
        s.run(tf.local_variables_initializer())
        coord = tf.train.Coordinator()
        threads = []
        for qr in runners:
            threads.extend(qr.create_threads(s, coord=coord, daemon=True, start=True))
        assert len(threads) == 4
        # Started once: another call starts nothing.
        assert runners[0].create_threads(s, coord=coord) == []
        got = []
        with pytest.raises(tf.errors.OutOfRangeError):
            while True:
                got.extend(s.run(batch).tolist())
        coord.request_stop()
        coord.join(threads)
    assert sorted(got) == [b"a", b"a", b"b", b"b", b"c", b"c"]


def test_queue_ops_are_named_as_tensorflow_names_them():
    # `<queue>_enqueue` is a scope (converted values are component_<i>
    # under it); the other ops are `<queue>_<Op>` in the current scope,
    # the queue's own scope left out.
    with tf.name_scope("input"):
        q = tf.FIFOQueue(10, [tf.int32, tf.float32], shapes=[[], []])
        assert q.name == "input/fifo_queue"
        assert q.enqueue([1, 2.0]).name == "input/fifo_queue_enqueue"
    assert [t.name for t in q.dequeue()] == ["fifo_queue_Dequeue:0", "fifo_queue_Dequeue:1"]
    with tf.name_scope("train"):
        assert q.dequeue_many(3)[0].name == "train/fifo_queue_DequeueMany:0"
    assert q.dequeue(name="next")[1].name == "next:1"
    assert [q.enqueue([1, 2.0], name="put").name for _ in range(2)] == ["put", "put_1"]
    q2 = tf.FIFOQueue(10, [tf.int32], shapes=[[]])
    assert (q2.name, q2.dequeue().name, q2.size().name, q2.is_closed().name) == (
        "fifo_queue",
        "fifo_queue_Dequeue_1:0",
        "fifo_queue_Size:0",
        "fifo_queue_Is_Closed:0",
    )
    assert q2.dequeue_up_to(2).name == "fifo_queue_DequeueUpTo:0"
    assert [q2.close().name, q2.close(True).name] == ["fifo_queue_Close", "fifo_queue_Close_1"]
    assert q2.enqueue_many([[1, 2]]).name == "fifo_queue_EnqueueMany"
    fq = tf.train.string_input_producer(["a"])
    assert (fq.dequeue().name, fq.size().name, fq.close().name) == (
        "input_producer_Dequeue:0",
        "input_producer_Size:0",
        "input_producer_Close",
    )
    names = [op.name for op in tf.get_default_graph().get_operations() if "component" in op.name]
    assert "input/fifo_queue_enqueue/component_1" in names
    p = tf.PriorityQueue(4, [tf.int32], shapes=[[]])
    assert p.dequeue_up_to(2)[0].name == "priority_queue_DequeueUpTo:0"
