"""compat.v1 beyond the guide's blocks: batched reads and parses,
enqueue_many, compressed files, two pipelines in one process."""

import collections

import numpy as np
import pytest

import feedstock.compat.v1 as tf


@pytest.fixture(autouse=True)
def fresh_graph():
    tf.reset_default_graph()
    yield


def write(path, ids, options=None):
    with tf.io.TFRecordWriter(str(path), options=options) as w:
        for i in ids:
            ex = tf.train.Example(features=tf.train.Features(feature={
                "id": tf.train.Feature(int64_list=tf.train.Int64List(value=[i])),
                "v": tf.train.Feature(float_list=tf.train.FloatList(value=[i / 2, -i])),
            }))
            w.write(ex.SerializeToString())
    return str(path)


def drain(fetch):
    out = []
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(coord=coord)
        try:
            while True:
                out.append(sess.run(fetch))
        except tf.errors.OutOfRangeError:
            pass
        finally:
            coord.request_stop()
        coord.join(threads)
    return out


def test_read_up_to_parse_example_enqueue_many(tmp_path):
    f = write(tmp_path / "a.tfrecord", range(25))
    q = tf.train.string_input_producer([f], num_epochs=2, shuffle=False)
    keys, values = tf.TFRecordReader().read_up_to(q, 8)
    parsed = tf.parse_example(values, {"id": tf.FixedLenFeature([], tf.int64),
                                       "v": tf.FixedLenFeature([2], tf.float32)})
    b = tf.train.batch([parsed["id"], parsed["v"]], batch_size=10, enqueue_many=True,
                       allow_smaller_final_batch=True)
    got = drain(b)
    ids = [i for ids, _ in got for i in ids.tolist()]
    assert ids == list(range(25)) * 2
    for ids_, v in got:
        np.testing.assert_array_equal(v, np.stack([ids_ / 2, -ids_], 1).astype(np.float32))


@pytest.mark.parametrize("compression", ["GZIP", "ZLIB"])
def test_compressed_tfrecord_reader(tmp_path, compression):
    opts = tf.python_io.TFRecordOptions(compression)
    f = write(tmp_path / "c.tfrecord", range(7), options=opts)
    q = tf.train.string_input_producer([f], num_epochs=1, shuffle=False)
    _, v = tf.TFRecordReader(options=opts).read(q)
    ident = tf.parse_single_example(v, {"id": tf.FixedLenFeature([], tf.int64)})["id"]
    assert drain(ident) == list(range(7))


def test_two_pipelines_side_by_side(tmp_path):
    train = write(tmp_path / "train.tfrecord", range(30))
    test = write(tmp_path / "test.tfrecord", range(100, 110))
    spec = {"id": tf.FixedLenFeature([], tf.int64)}

    def pipe(files, epochs, shuffle):
        q = tf.train.string_input_producer(files, num_epochs=epochs, shuffle=shuffle)
        _, v = tf.TFRecordReader().read(q)
        ident = tf.parse_single_example(v, spec)["id"]
        return tf.train.shuffle_batch([ident], batch_size=5, capacity=40, min_after_dequeue=10,
                                      allow_smaller_final_batch=True) if shuffle else \
            tf.train.batch([ident], batch_size=5, allow_smaller_final_batch=True)

    g_train, g_eval = tf.Graph(), tf.Graph()
    with g_train.as_default():
        tb = pipe([train], 3, True)
    with g_eval.as_default():
        eb = pipe([test], 1, False)
    s_train, s_eval = tf.Session(graph=g_train), tf.Session(graph=g_eval)
    c_train, c_eval = tf.train.Coordinator(), tf.train.Coordinator()
    t_train = tf.train.start_queue_runners(sess=s_train, coord=c_train)
    t_eval = tf.train.start_queue_runners(sess=s_eval, coord=c_eval)
    seen_train, seen_eval = [], []
    for _ in range(6):
        seen_train.extend(s_train.run(tb).tolist())
    with pytest.raises(ValueError):
        s_eval.run(tb)  # a tensor of another graph
    try:
        while True:
            seen_eval.extend(s_eval.run(eb).tolist())
    except tf.errors.OutOfRangeError:
        pass
    try:
        while True:
            seen_train.extend(s_train.run(tb).tolist())
    except tf.errors.OutOfRangeError:
        pass
    for c, t in ((c_train, t_train), (c_eval, t_eval)):
        c.request_stop()
        c.join(t)
    assert seen_eval == list(range(100, 110))
    assert collections.Counter(seen_train) == collections.Counter(list(range(30)) * 3)


def test_decode_csv_required_column_and_types(tmp_path):
    p = tmp_path / "s.csv"
    p.write_text('name,x,y\n"a, b",1.5,7\nc,,8\nd,2.5,\n')
    q = tf.train.string_input_producer([str(p)], num_epochs=1, shuffle=False)
    _, line = tf.TextLineReader(skip_header_lines=1).read(q)
    name, x, y = tf.decode_csv(line, record_defaults=[[""], [0.0], tf.constant([], tf.int64)])
    assert (name.dtype, x.dtype, y.dtype) == (tf.string, tf.float32, tf.int64)
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(coord=coord)
        assert sess.run([name, x, y]) == [b"a, b", 1.5, 7]
        assert sess.run([name, x, y]) == [b"c", 0.0, 8]
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(y)
        assert info.value.key.endswith("s.csv:4")
        coord.request_stop()
        coord.join(threads)


def test_run_timeout_is_deadline_exceeded():
    [row] = tf.train.slice_input_producer([np.arange(3)], shuffle=False)
    never = tf.train.maybe_batch([row], keep_input=False, batch_size=2)
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(coord=coord)
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(never, options=tf.RunOptions(timeout_in_ms=50))
        coord.request_stop()
        coord.join(threads)


def test_coordinator_reraises_a_python_exception_from_request_stop():
    coord = tf.train.Coordinator()
    with coord.stop_on_exception():
        raise RuntimeError("step failed")
    assert coord.should_stop()
    with pytest.raises(RuntimeError, match="step failed"):
        coord.join([])
