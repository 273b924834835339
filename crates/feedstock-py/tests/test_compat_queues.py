"""Queues made by hand and queue runners in compat.v1 (tf.FIFOQueue,
tf.PaddingFIFOQueue, tf.RandomShuffleQueue, tf.train.QueueRunner). The
expected values are what TensorFlow 2.21's tf.compat.v1 gave for the
same programs."""

import threading
import time

import numpy as np
import pytest

import feedstock.compat.v1 as tf


def run_to_the_end(fetches):
    """Starts the graph's queue runners and runs ``fetches`` until
    OutOfRangeError; returns every result, after joining the runners."""
    results = []
    with tf.Session() as s:
        s.run(tf.local_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(s, coord)
        try:
            while True:
                results.append(s.run(fetches))
        except tf.errors.OutOfRangeError:
            pass
        coord.request_stop()
        coord.join(threads)
    return results


def test_fed_enqueues_leave_in_order_and_a_closed_queue_ends():
    q = tf.FIFOQueue(3, [tf.int64, tf.string], shapes=[[], []])
    x = tf.placeholder(tf.int64, [])
    put = q.enqueue((x, tf.constant(b"a")))
    put_many = q.enqueue_many(([10, 11], [b"b", b"c"]))
    one, two, size = q.dequeue(), q.dequeue_many(2), q.size()
    assert two[0].shape.as_list() == [2]
    with tf.Session() as s:
        assert s.run(put, feed_dict={x: 7}) is None
        s.run(put_many)
        assert s.run(size) == 3
        n, name = s.run(one)
        assert n == 7 and name == b"a"
        a, b = s.run(two)
        assert a.tolist() == [10, 11] and b.tolist() == [b"b", b"c"]
        assert not s.run(q.is_closed())
        s.run(q.close())
        assert s.run(q.is_closed())
        with pytest.raises(tf.errors.OutOfRangeError):
            s.run(one)
        with pytest.raises(tf.errors.CancelledError):
            s.run(put, feed_dict={x: 1})


def test_a_queue_runner_fills_a_queue_from_a_producer_with_two_threads():
    v = tf.train.range_input_producer(10, num_epochs=2, shuffle=False).dequeue()
    q = tf.FIFOQueue(4, [tf.int32, tf.int32], shapes=[[], []])
    enq = q.enqueue([v, v * v])
    qr = tf.train.QueueRunner(q, [enq] * 2)
    tf.train.add_queue_runner(qr)
    assert qr in tf.get_default_graph().get_collection(tf.GraphKeys.QUEUE_RUNNERS)
    got = []
    for a, b in run_to_the_end(q.dequeue_up_to(3)):
        got += list(zip(a.tolist(), b.tolist()))
    assert sorted(got) == sorted([(i, i * i) for i in range(10)] * 2)


def test_create_threads_starts_one_runner_and_a_runner_error_reaches_join():
    q = tf.FIFOQueue(2, [tf.float32], shapes=[[]])
    bad = tf.cast(tf.constant("x"), tf.float32)
    qr = tf.train.QueueRunner(q, [q.enqueue(bad)])
    out = q.dequeue()
    with tf.Session() as s:
        coord = tf.train.Coordinator()
        threads = qr.create_threads(s, coord=coord, start=True)
        assert threads  # TensorFlow adds a thread that closes the queue on stop
        # As in TensorFlow: the failing runner closes the queue, so the
        # consumer's dequeue ends and join raises the runner's error.
        with pytest.raises(tf.errors.OutOfRangeError):
            s.run(out)
        with pytest.raises(tf.errors.UnimplementedError):
            coord.join(threads)


def test_names_give_dicts_and_a_shuffle_queue_holds_back_until_closed():
    q = tf.RandomShuffleQueue(10, 2, [tf.float32], shapes=[[2]], names=["p"], seed=3)
    put = q.enqueue_many({"p": np.arange(8, dtype=np.float32).reshape(4, 2)})
    d = q.dequeue()
    assert sorted(d) == ["p"]
    got = []
    with tf.Session() as s:
        s.run(put)
        got += [s.run(d)["p"].tolist() for _ in range(2)]
        with pytest.raises(tf.errors.DeadlineExceededError):
            s.run(d, options=tf.RunOptions(timeout_in_ms=100))
        s.run(q.close())
        got += [s.run(d)["p"].tolist() for _ in range(2)]
    assert sorted(got) == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0], [6.0, 7.0]]


def test_a_padding_queue_pads_to_the_longest_element():
    q = tf.PaddingFIFOQueue(5, [tf.int32], shapes=[[None]])
    a, b = q.enqueue([[1, 2, 3]]), q.enqueue([[4]])
    d = q.dequeue_many(2)
    assert d.shape.as_list() == [2, None]
    with tf.Session() as s:
        s.run(a)
        s.run(b)
        assert s.run(d).tolist() == [[1, 2, 3], [4, 0, 0]]


def test_what_tensorflow_refuses_when_building_is_refused_then():
    q = tf.FIFOQueue(5, [tf.int32], shapes=[[2]])
    with pytest.raises(ValueError):
        q.enqueue([[1, 2, 3]])
    with pytest.raises(ValueError):
        q.enqueue([1, 2])
    with pytest.raises(ValueError):
        tf.FIFOQueue(5, [tf.int32], names=["a"]).enqueue([1])
    with pytest.raises(ValueError):
        tf.FIFOQueue(5, [tf.int32], shapes=[[None]])
    # Without shapes dequeue_many builds, and fails when run.
    any_shape = tf.FIFOQueue(5, [tf.int32])
    many = any_shape.dequeue_many(2)
    with tf.Session() as s:
        s.run(any_shape.enqueue([1]))
        s.run(any_shape.enqueue([2]))
        with pytest.raises(tf.errors.InvalidArgumentError):
            s.run(many)


def test_a_blocked_enqueue_is_woken_by_a_cancelling_close():
    q = tf.queue.FIFOQueue(1, [tf.int32], shapes=[[]])
    put = q.enqueue([1])
    with tf.Session() as s:
        s.run(put)
        result = {}

        def blocked():
            try:
                s.run(put)
                result["r"] = "ok"
            except tf.errors.CancelledError:
                result["r"] = "cancelled"

        t = threading.Thread(target=blocked)
        t.start()
        # Close only once the enqueue is really blocked on the full queue.
        deadline = time.monotonic() + 20
        while s._s.queue_stats(q._q)["blocked_enqueues"] == 0:
            assert time.monotonic() < deadline, "the enqueue never blocked"
            time.sleep(0.001)
        s.run(q.close(cancel_pending_enqueues=True))
        t.join(10)
        assert result == {"r": "cancelled"}


def test_blocked_enqueue_many_calls_are_served_in_arrival_order_and_kept_whole():
    # TensorFlow 2.21 gave -1, -2, -3, 100..104, 200..204, 300..304,
    # 400..404 (its QueueBase serves pending enqueues first come, first
    # served, one call's rows together).
    q = tf.FIFOQueue(3, [tf.int64], shapes=[[]])
    rows = tf.placeholder(tf.int64, [None])
    put_many, take = q.enqueue_many([rows]), q.dequeue()
    with tf.Session() as s:
        s.run(put_many, feed_dict={rows: [-1, -2, -3]})
        errors = []

        def put(first):
            try:
                s.run(put_many, feed_dict={rows: list(range(first, first + 5))})
            except Exception as e:  # reported by the assertion below
                errors.append(e)

        threads = []
        deadline = time.monotonic() + 20
        for t in range(4):
            threads.append(threading.Thread(target=put, args=(100 * (t + 1),)))
            threads[-1].start()
            # The next call starts once this one is blocked: arrival order.
            while s._s.queue_stats(q._q)["blocked_enqueues"] < t + 1:
                assert time.monotonic() < deadline, "the enqueue never blocked"
                time.sleep(0.001)
        got = [int(s.run(take)) for _ in range(23)]
        for t in threads:
            t.join(10)
        assert not errors
        assert got == [-1, -2, -3] + [v for t in (100, 200, 300, 400) for v in range(t, t + 5)]


def test_a_reader_reads_file_names_from_a_queue_made_by_hand(tmp_path):
    files = []
    for i in range(2):
        files.append(str(tmp_path / f"f{i}.tfrecord"))
        with tf.io.TFRecordWriter(files[-1]) as w:
            for j in range(3):
                w.write(f"r{i}{j}".encode())
    q = tf.FIFOQueue(10, [tf.string], shapes=[[]])
    fill, close = q.enqueue_many([files]), q.close()
    reader = tf.TFRecordReader()
    _, value = reader.read(q)
    _, values = reader.read_up_to(q, 4)
    with tf.Session() as s:
        s.run(fill)
        s.run(close)
        got = [s.run(value), s.run(values).tolist()]
        with pytest.raises(tf.errors.OutOfRangeError):
            while True:
                got.append(s.run(value))
    # TensorFlow 2.21 gave the same: read_up_to stops at the file's end.
    assert got == [b"r00", [b"r01", b"r02"], b"r10", b"r11", b"r12"]


def test_a_runner_filled_shuffle_queue_feeds_tf_train_batch():
    v = tf.train.range_input_producer(20, num_epochs=1, shuffle=False).dequeue()
    q = tf.RandomShuffleQueue(8, 2, [tf.int32, tf.float32], shapes=[[], [2]], seed=1)
    pair = tf.stack([tf.cast(v, tf.float32), tf.cast(v, tf.float32) * 2.0])
    tf.train.add_queue_runner(tf.train.QueueRunner(q, [q.enqueue([v, pair])]))
    a, b = q.dequeue()
    ba, bb = tf.train.batch([a, b], batch_size=6, allow_smaller_final_batch=True)
    assert ba.shape.as_list() == [None] and bb.shape.as_list() == [None, 2]
    seen, sizes = [], []
    for x, y in run_to_the_end([ba, bb]):
        assert (y[:, 0] == x).all() and (y[:, 1] == 2 * x).all()
        seen += x.tolist()
        sizes.append(len(x))
    # TensorFlow 2.21: every element once, batches of 6, 6, 6, 2.
    assert sorted(seen) == list(range(20)) and sizes == [6, 6, 6, 2]


def test_reading_a_queue_whose_runner_never_started_fails_instead_of_hanging():
    q = tf.FIFOQueue(2, [tf.int32], shapes=[[]])
    tf.train.add_queue_runner(tf.train.QueueRunner(q, [q.enqueue([1])]))
    with tf.Session() as s:
        # TensorFlow would wait for ever here.
        with pytest.raises(tf.errors.FailedPreconditionError):
            s.run(q.dequeue())


def test_queues_are_named_as_tensorflow_names_them():
    a, b = tf.FIFOQueue(2, [tf.int32]), tf.FIFOQueue(2, [tf.int32])
    mine = tf.RandomShuffleQueue(3, 1, [tf.int32], name="mine")
    p, p2 = tf.train.string_input_producer(["a"]), tf.train.string_input_producer(["b"])
    # TensorFlow 2.21 gave the same names.
    assert [a.name, b.name, mine.name, p.name, p2.name] == [
        "fifo_queue", "fifo_queue_1", "mine", "input_producer", "input_producer_1",
    ]
