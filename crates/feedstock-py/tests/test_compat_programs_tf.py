"""compat.v1 calls that whole TF1 input programs make (im2txt's
batch_with_dynamic_pad, inception's parse_example_proto, scripts around
tf.app / tf.logging), as TensorFlow 2.21 (``tensorflow.compat.v1``, graph
mode) behaves; every expectation below was observed there."""

import numpy as np
import pytest

import feedstock.compat.v1 as tf
from feedstock import errors


def same(got, want, dtype):
    got = np.asarray(got)
    assert got.dtype == np.dtype(dtype), got.dtype
    np.testing.assert_array_equal(got, np.asarray(want, dtype=dtype))


def test_dynamic_caption_slices_as_im2txt():
    # im2txt's batch_with_dynamic_pad: lengths computed when run.
    with tf.Graph().as_default():
        x = tf.placeholder(tf.int64, [None])
        n = tf.shape(x)[0]
        length = tf.expand_dims(tf.subtract(n, 1), 0)
        inp = tf.slice(x, [0], length)
        target = tf.slice(x, [1], length)
        mask = tf.ones(length, dtype=tf.int32)
        filled = tf.fill(length, 7.5)
        assert n.shape.as_list() == [] and n.dtype == tf.int32
        assert length.shape.as_list() == [1] and length.dtype == tf.int32
        assert inp.shape.as_list() == [None] and inp.dtype == tf.int64
        assert mask.shape.as_list() == [None] and mask.dtype == tf.int32
        assert filled.shape.as_list() == [None] and filled.dtype == tf.float32
        with tf.Session() as s:
            r = s.run([n, length, inp, target, mask, filled], {x: [4, 5, 6, 7]})
            same(r[0], 4, "int32")
            same(r[1], [3], "int32")
            same(r[2], [4, 5, 6], "int64")
            same(r[3], [5, 6, 7], "int64")
            same(r[4], [1, 1, 1], "int32")
            same(r[5], [7.5, 7.5, 7.5], "float32")
            with pytest.raises(errors.InvalidArgumentError):
                s.run(tf.slice(x, [2], tf.expand_dims(n, 0)), {x: [1, 2, 3]})


def test_dynamic_pad_batch_of_computed_slices():
    with tf.Graph().as_default():
        q = tf.PaddingFIFOQueue(4, [tf.int64], shapes=[[None]])
        enq = [q.enqueue([np.array(v, np.int64)]) for v in ([3, 1, 4, 1], [5, 9], [2, 6, 5])]
        cap = q.dequeue()
        length = tf.expand_dims(tf.shape(cap)[0] - 1, 0)
        seq, ind = tf.train.batch([tf.slice(cap, [1], length), tf.ones(length, dtype=tf.int32)], 3,
                                  dynamic_pad=True)
        assert seq.shape.as_list() == [3, None] and ind.shape.as_list() == [3, None]
        with tf.Session() as s:
            for e in enq:
                s.run(e)
            s.run(q.close())
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(s, coord)
            a, b = s.run([seq, ind])
            same(a, [[1, 4, 1], [9, 0, 0], [6, 5, 0]], "int64")
            same(b, [[1, 1, 1], [1, 0, 0], [1, 1, 0]], "int32")
            coord.request_stop()
            coord.join(threads)


def test_expand_dims_and_squeeze_static_shapes_and_values():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.int64, [None])
        e = tf.expand_dims(tf.constant([[1, 2, 3]]), -1)
        e2 = tf.expand_dims(x, 0)
        q = tf.squeeze(tf.constant([[[1], [2]]]), [0, 2])
        q2 = tf.squeeze(tf.zeros([1, 3, 1]))
        z = tf.zeros([2, 2], tf.int64)
        assert e.shape.as_list() == [1, 3, 1]
        assert e2.shape.as_list() == [1, None]
        assert q.shape.as_list() == [2] and q2.shape.as_list() == [3]
        assert z.shape.as_list() == [2, 2] and z.dtype == tf.int64
        with tf.Session() as s:
            r = s.run([e, e2, q, q2, z], {x: [4, 5]})
        same(r[0], [[[1], [2], [3]]], "int32")
        same(r[1], [[4, 5]], "int64")
        same(r[2], [1, 2], "int32")
        same(r[3], [0, 0, 0], "float32")
        same(r[4], [[0, 0], [0, 0]], "int64")
        with pytest.raises(ValueError):
            tf.squeeze(tf.zeros([2, 3]), [0])
        with pytest.raises(ValueError):
            tf.expand_dims(tf.zeros([2]), 3)


def test_bbox_as_inception_parse_example_proto():
    with tf.Graph().as_default():
        values = tf.placeholder(tf.float32, [None])
        parts = [tf.expand_dims(values * k, 0) for k in (1.0, 2.0, 3.0, 4.0)]
        bbox = tf.transpose(tf.expand_dims(tf.concat(axis=0, values=parts), 0), [0, 2, 1])
        assert bbox.shape.as_list() == [1, None, 4]
        with tf.Session() as s:
            same(s.run(bbox, {values: [0.5, 0.25]}), [[[0.5, 1, 1.5, 2], [0.25, 0.5, 0.75, 1]]], "float32")


def test_shape_of_fully_defined_is_known_while_building():
    with tf.Graph().as_default():
        x = tf.zeros([2, 3])
        y = tf.reshape(tf.constant(np.arange(6)), tf.shape(x))
        assert y.shape.as_list() == [2, 3]
        assert tf.shape(x, out_type=tf.int64).dtype == tf.int64
        with tf.Session() as s:
            same(s.run(tf.shape(x)), [2, 3], "int32")
            same(s.run(tf.size(x)), 6, "int32")
            same(s.run(tf.rank(x)), 2, "int32")


def test_app_flags_and_run(monkeypatch):
    from feedstock import _app

    fv = _app._FlagValues()
    _app.DEFINE_integer("batch_size", 128, "", flag_values=fv)
    _app.DEFINE_string("data_dir", "/tmp/data", "", flag_values=fv)
    _app.DEFINE_boolean("log", False, "", flag_values=fv)
    rest = fv(["prog", "--batch_size=4", "--data_dir", "/x", "--log", "pos"])
    assert rest == ["prog", "pos"]
    assert (fv.batch_size, fv.data_dir, fv.log) == (4, "/x", True)
    assert fv(["prog", "--nolog"]) == ["prog"] and fv.log is False
    with pytest.raises(_app.Error):
        fv(["prog", "--unknown=1"])
    with pytest.raises(SystemExit) as e:
        tf.app.run(main=lambda argv: len(argv), argv=["prog", "a", "b"])
    assert e.value.code == 3
    tf.logging.set_verbosity(tf.logging.INFO)
    tf.logging.info("%d files", 2)
    tf.logging.fatal("not exiting")


def test_reductions_as_tensorflow():
    with tf.Graph().as_default():
        x = tf.constant(np.arange(24, dtype=np.float32).reshape(2, 3, 4) * np.float32(1.37))
        i = tf.constant([[1, 2, 3], [4, 5, 6]])
        ts = [
            tf.reduce_sum(x, [0, 2], keepdims=True),
            tf.reduce_mean(x, -1),
            tf.reduce_max(i, 0),
            tf.reduce_min(i),
            tf.reduce_prod(i, 1),
            tf.reduce_mean(i),
            tf.reduce_sum(i, reduction_indices=[1], keep_dims=True),
            tf.reduce_max(tf.zeros([0])),
        ]
        assert [t.shape.as_list() for t in ts] == [[1, 3, 1], [2, 3], [3], [], [2], [], [2, 1], []]
        assert [t.name for t in ts[:3]] == ["Sum:0", "Mean:0", "Max:0"]
        with tf.Session() as s:
            r = s.run(ts)
        # TensorFlow's order of float additions: 82.200005, not 82.2.
        same(r[0], np.array([82.20000457763672, 126.03999328613281, 169.87998962402344]).reshape(1, 3, 1), "float32")
        same(r[1], [[2.055000066757202, 7.534999847412109, 13.015000343322754],
                    [18.494998931884766, 23.974998474121094, 29.454999923706055]], "float32")
        same(r[2], [4, 5, 6], "int32")
        same(r[3], 1, "int32")
        same(r[4], [6, 120], "int32")
        same(r[5], 3, "int32")  # integer mean truncates: 21 / 6
        same(r[6], [[6], [15]], "int32")
        same(r[7], -np.inf, "float32")
        with pytest.raises(ValueError):
            tf.reduce_sum(i, 2)
        with pytest.raises(TypeError):
            tf.reduce_sum(tf.constant([True]))


def test_comparisons_as_tensorflow():
    with tf.Graph().as_default():
        i = tf.constant([[1, 2, 3], [4, 5, 6]])
        ts = [tf.equal(i, 2), tf.not_equal(i, [1, 0, 3]), i <= 3, tf.constant([1.5, 3.0]) > 2,
              tf.equal(tf.constant(["a", "b"]), "a"), tf.equal(tf.constant([True, False]), True)]
        assert ts[0].dtype == tf.bool and ts[0].shape.as_list() == [2, 3] and ts[0].name == "Equal:0"
        with tf.Session() as s:
            r = s.run(ts)
        same(r[0], [[0, 1, 0], [0, 0, 0]], "bool")
        same(r[1], [[0, 1, 0], [1, 1, 1]], "bool")
        same(r[2], [[1, 1, 1], [0, 0, 0]], "bool")
        same(r[3], [0, 1], "bool")
        same(r[4], [1, 0], "bool")
        same(r[5], [1, 0], "bool")
        with pytest.raises(TypeError):
            tf.equal(i, 2.5)
        with pytest.raises(TypeError):
            tf.less(tf.constant(["a"]), "b")
        with pytest.raises(ValueError):
            tf.equal(tf.constant([1, 2]), tf.constant([1, 2, 3]))


def test_one_hot_as_tensorflow():
    with tf.Graph().as_default():
        ts = [
            tf.one_hot([0, 2, -1, 5], 3),
            tf.one_hot(tf.constant([1, 0], tf.int64), 2, on_value=5, off_value=-1, axis=0),
            tf.one_hot(tf.constant([[1, 2, 3], [4, 5, 6]]), 7, axis=1),
            tf.one_hot(tf.constant([1, 0], tf.uint8), 3, on_value=True, off_value=False),
            tf.one_hot(tf.placeholder_with_default([1], [None]), 4),
        ]
        assert [t.dtype for t in ts] == [tf.float32, tf.int32, tf.float32, tf.bool, tf.float32]
        assert [t.shape.as_list() for t in ts] == [[4, 3], [2, 2], [2, 7, 3], [2, 3], [None, 4]]
        bad = tf.one_hot([1], 2, axis=3)  # as TensorFlow: fails only when run
        with tf.Session() as s:
            r = s.run(ts)
            with pytest.raises(errors.InvalidArgumentError):
                s.run(bad)
        same(r[0], [[1, 0, 0], [0, 0, 1], [0, 0, 0], [0, 0, 0]], "float32")
        same(r[1], [[-1, 5], [5, -1]], "int32")
        assert r[2][1, 4, 0] == 1 and r[2].sum() == 6
        same(r[3], [[0, 1, 0], [1, 0, 0]], "bool")
        same(r[4], [[0, 1, 0, 0]], "float32")


def test_ptb_producer_slices_as_tensorflow():
    # tutorials/rnn/ptb reader's ptb_producer: sizes folded while building,
    # the window taken with bounds dequeued when run.
    with tf.Graph().as_default():
        with tf.name_scope("PTBProducer"):
            raw = tf.convert_to_tensor(list(range(23)), name="raw_data", dtype=tf.int32)
            batch_len = tf.size(raw) // 4
            data = tf.reshape(raw[0 : 4 * batch_len], [4, batch_len])
            epoch_size = (batch_len - 1) // 2
            check = tf.assert_positive(epoch_size, message="epoch_size == 0")
            with tf.control_dependencies([check]):
                epoch_size = tf.identity(epoch_size, name="epoch_size")
            i = tf.train.range_input_producer(epoch_size, shuffle=False).dequeue()
            x = tf.strided_slice(data, [0, i * 2], [4, (i + 1) * 2])
            y = tf.strided_slice(data, [0, i * 2 + 1], [4, (i + 1) * 2 + 1])
            assert x.shape.as_list() == [None, None]
            x.set_shape([4, 2])
        assert x.name == "PTBProducer/StridedSlice:0" and x.shape.as_list() == [4, 2]
        assert data.shape.as_list() == [4, 5] and epoch_size.name == "PTBProducer/epoch_size:0"
        with tf.Session() as s:
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(s, coord)
            got = [s.run([x, y]) for _ in range(3)]
            coord.request_stop()
            coord.join(threads)
        same(got[0][0], [[0, 1], [5, 6], [10, 11], [15, 16]], "int32")
        same(got[1][1], [[3, 4], [8, 9], [13, 14], [18, 19]], "int32")
        same(got[2][0], got[0][0], "int32")  # two windows an epoch, then again


def test_dynamic_strided_slice_negative_and_clamped_bounds():
    with tf.Graph().as_default():
        i = tf.placeholder(tf.int32, [])
        d = tf.constant(np.arange(20).reshape(4, 5))
        a = tf.strided_slice(d, [i, -1], [4, -6], [1, -1])
        b = tf.strided_slice(d, [0, i], [10, 100], [2, 2])
        with tf.Session() as s:
            ra, rb = s.run([a, b], {i: 1})
        same(ra, [[9, 8, 7, 6, 5], [14, 13, 12, 11, 10], [19, 18, 17, 16, 15]], "int64")
        same(rb, [[1, 3], [11, 13]], "int64")


# Each with the text TensorFlow 2.21 gave, in a graph of its own.
_FAILED_ASSERTIONS = [
    (lambda: tf.assert_positive(tf.constant([1, 0]), message="m"),
     "m.  \nCondition x > 0 did not hold element-wise:\nx (Const:0) = \n[1 0]"),
    (lambda: tf.assert_positive(tf.constant([1, 0])),
     "\nCondition x > 0 did not hold element-wise:\nx (Const:0) = \n[1 0]"),
    (lambda: tf.assert_non_positive(tf.constant([1, -1])),
     "\nCondition x <= 0 did not hold element-wise:x (Const:0) = \n[ 1 -1]"),
    (lambda: tf.assert_non_negative(tf.constant([1, -1]), message="nn"),
     "nn.  \nCondition x >= 0 did not hold element-wise:\nx (Const:0) = \n[ 1 -1]"),
    (lambda: tf.assert_negative(tf.constant(1)),
     "\nCondition x < 0 did not hold element-wise:\nx (Const:0) = \n1"),
    (lambda: tf.assert_positive(-1),
     "\nCondition x > 0 did not hold element-wise:\nx (assert_positive/x:0) = \n-1"),
    (lambda: tf.assert_equal(tf.constant(1), 2),
     "Condition x == y did not hold element-wise:\nx (Const:0) = \n1\ny (assert_equal_1/y:0) = \n2"),
    (lambda: tf.assert_equal(tf.constant(1), 2, name="eq"),
     "Condition x == y did not hold element-wise:\nx (Const:0) = \n1\ny (eq_1/y:0) = \n2"),
    (lambda: tf.assert_less(tf.constant([3, 1]), tf.constant([2, 2]), message="mm"),
     "mm\nCondition x < y did not hold element-wise:\nx (Const:0) = \n[3 1]\ny (Const_1:0) = \n[2 2]"),
    (lambda: tf.assert_greater(3, 5),
     "Condition x > y did not hold element-wise:\nx (assert_greater/x:0) = \n3\ny (assert_greater/y:0) = \n5"),
    (lambda: tf.assert_none_equal(tf.constant(1), 1),
     "Condition x != y did not hold element-wise:\nx (Const:0) = \n1\ny (assert_none_equal/y:0) = \n1"),
    (lambda: tf.assert_less(tf.constant(3), 2, data=["d1", tf.constant(7)], message="m"), "m\nd1\n7"),
    (lambda: tf.assert_negative(tf.constant(1), data=["only"], message="ignored"), "only"),
]


@pytest.mark.parametrize("i", range(len(_FAILED_ASSERTIONS)))
def test_a_failed_static_assertion_says_what_tensorflow_says(i):
    make, want = _FAILED_ASSERTIONS[i]
    with tf.Graph().as_default():
        with pytest.raises(errors.InvalidArgumentError) as e:
            make()
    assert e.value.message == want


def test_static_assertions_as_tensorflow():
    with tf.Graph().as_default():
        tf.assert_less(1, 2)
        with pytest.raises(errors.InvalidArgumentError):
            tf.assert_less(2, 1)


class _CountHook(tf.train.SessionRunHook):
    def __init__(self, t):
        self.t, self.seen, self.calls = t, [], []

    def begin(self):
        self.calls.append("begin")

    def after_create_session(self, session, coord):
        self.calls.append("created")

    def before_run(self, run_context):
        return tf.train.SessionRunArgs(self.t)

    def after_run(self, run_context, run_values):
        self.seen.append(int(run_values.results))

    def end(self, session):
        self.calls.append("end")


@pytest.mark.parametrize("smaller", [True, False])
def test_monitored_training_session_loop_as_tensorflow(tmp_path, smaller):
    fn = str(tmp_path / "x.tfrecords")
    with tf.python_io.TFRecordWriter(fn) as w:
        for i in range(11):
            feature = {"v": tf.train.Feature(int64_list=tf.train.Int64List(value=[i]))}
            w.write(tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString())
    with tf.Graph().as_default() as g:
        q = tf.train.string_input_producer([fn], num_epochs=2, shuffle=False)
        _, ser = tf.TFRecordReader().read(q)
        v = tf.parse_single_example(ser, {"v": tf.FixedLenFeature([], tf.int64)})["v"]
        b = tf.train.batch([v], 3, allow_smaller_final_batch=smaller)
        hook = _CountHook(tf.reduce_sum(b))
        got = []
        with tf.train.MonitoredTrainingSession(hooks=[hook]) as mon:
            assert g.finalized
            while not mon.should_stop():
                got.append(mon.run(b).tolist())
        # OutOfRangeError ended the block quietly; the graph is open again.
        assert not g.finalized
        want = [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9, 10, 0], [1, 2, 3], [4, 5, 6], [7, 8, 9]]
        assert got == want + ([[10]] if smaller else [])
        assert hook.seen == [3, 12, 21, 19, 6, 15, 24] + ([10] if smaller else [])
        assert hook.calls == ["begin", "created", "end"]
        with pytest.raises(AttributeError):
            mon.run(b)


def test_monitored_session_stops_on_hook_request():
    class Stop(tf.train.SessionRunHook):
        def after_run(self, run_context, run_values):
            run_context.request_stop()

    with tf.Graph().as_default():
        x = tf.constant(5)
        with tf.train.SingularMonitoredSession(hooks=[Stop()]) as sess:
            assert type(sess.raw_session()).__name__ == "Session"
            assert not sess.should_stop()
            assert sess.run(x) == 5
            assert sess.should_stop()


def test_string_to_number_as_tensorflow():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.string, [None])
        f, d, i, l = (tf.string_to_number(x), tf.string_to_number(x, tf.float64),
                      tf.string_to_number(x, out_type=tf.int32), tf.strings.to_number(x, tf.int64))
        assert f.dtype == tf.float32 and f.shape.as_list() == [None] and f.name == "StringToNumber:0"
        with tf.Session() as s:
            same(s.run(f, {x: ["12", " 7 ", "1e3", "0x1A", "-inf", "3.25", "+4"]}),
                 [12, 7, 1000, 26, -np.inf, 3.25, 4], "float32")
            same(s.run(d, {x: ["1.1"]}), [1.1], "float64")
            same(s.run(i, {x: ["-3", " 7 ", "+4"]}), [-3, 7, 4], "int32")
            same(s.run(l, {x: ["2147483648"]}), [2147483648], "int64")
            for bad, t in (("2147483648", i), ("1.5", i), ("1e3", l), ("", f), ("abc", f), ("1_0", f)):
                with pytest.raises(errors.InvalidArgumentError, match="could not correctly convert string"):
                    s.run(t, {x: [bad]})
        with pytest.raises(TypeError):
            tf.string_to_number(tf.constant([1]))
        with pytest.raises(TypeError):
            tf.string_to_number(x, tf.uint8)


def test_string_split_as_tensorflow():
    with tf.Graph().as_default():
        x = tf.constant(["a b  c", "", "hello world", " x"])
        sp = tf.string_split(x)
        chars = tf.string_split(x, "")
        keep = tf.string_split(["a,b;;c"], ",;", skip_empty=False)
        dense = tf.sparse_tensor_to_dense(tf.string_split(["a b", "c"]), default_value="")
        assert sp.dtype == tf.string and sp.shape.as_list() == [None, None]
        with tf.Session() as s:
            r, c, k, d = s.run([sp, chars, keep, dense])
        same(r.indices, [[0, 0], [0, 1], [0, 2], [2, 0], [2, 1], [3, 0]], "int64")
        assert r.values.tolist() == [b"a", b"b", b"c", b"hello", b"world", b"x"]
        same(r.dense_shape, [4, 3], "int64")
        same(c.dense_shape, [4, 11], "int64")
        assert c.values.tolist()[:3] == [b"a", b" ", b"b"]
        assert k.values.tolist() == [b"a", b"b", b"", b"c"]
        assert d.tolist() == [[b"a", b"b"], [b"c", b""]]
        with pytest.raises(ValueError):
            tf.string_split([["a"]])


def test_text_line_words_as_tensorflow(tmp_path):
    # A list holding a tensor is packed into one, as TensorFlow packs it.
    path = tmp_path / "t.txt"
    path.write_text("the cat sat\n\nhello  world\n")
    with tf.Graph().as_default():
        q = tf.train.string_input_producer([str(path)], num_epochs=1, shuffle=False)
        _, line = tf.TextLineReader().read(q)
        words = tf.string_split([line]).values
        pair = tf.convert_to_tensor([tf.shape(words)[0], 7])
        assert words.shape.as_list() == [None] and pair.name == "packed:0"
        got = []
        with tf.Session() as s:
            s.run(tf.local_variables_initializer())
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(s, coord)
            with pytest.raises(tf.errors.OutOfRangeError):
                while True:
                    w, p = s.run([words, pair])
                    got.append((w.tolist(), p.tolist()))
            coord.request_stop()
            coord.join(threads)
        assert got == [([b"the", b"cat", b"sat"], [3, 7]), ([], [0, 7]), ([b"hello", b"world"], [2, 7])]


def test_supervisor_managed_session_as_tensorflow():
    with tf.Graph().as_default() as g:
        x = tf.train.range_input_producer(5, num_epochs=2, shuffle=False).dequeue()
        b = tf.train.batch([x], 2)
        sv = tf.train.Supervisor(logdir=None)
        assert g.finalized
        got = []
        with sv.managed_session() as sess:
            while not sv.should_stop():
                got.append(sess.run(b).tolist())
        assert got == [[0, 1], [2, 3], [4, 0], [1, 2], [3, 4]] and sv.should_stop()
    with tf.Graph().as_default():
        tf.train.batch([tf.train.range_input_producer(5, shuffle=False).dequeue()], 2)
        sv = tf.train.Supervisor()
        with pytest.raises(KeyError):
            with sv.managed_session():
                raise KeyError("boom")
    with pytest.raises(NotImplementedError):
        tf.train.Supervisor(logdir="/tmp/x")


def test_gather_and_dynamic_size_as_tensorflow():
    with tf.Graph().as_default():
        p = tf.constant(np.arange(24).reshape(2, 3, 4).astype(np.float32))
        i = tf.placeholder(tf.int64, [None])
        s_ = tf.constant(["a", "b", "c"])
        a, b, c, d = tf.gather(p, [1, 0, 1]), tf.gather(p, [[2], [0]], axis=1), tf.gather(p, i, axis=-1), tf.gather(s_, i)
        assert a.name == "GatherV2:0" and a.shape.as_list() == [3, 3, 4]
        assert b.shape.as_list() == [2, 2, 1, 4] and c.shape.as_list() == [2, 3, None]
        words = tf.string_split(tf.placeholder(tf.string, [None], name="lines"))
        n, m = tf.size(words.values), tf.size(tf.placeholder_with_default([[1, 2, 3]], [None, 3]), out_type=tf.int64)
        assert n.dtype == tf.int32 and n.shape.as_list() == [] and m.dtype == tf.int64
        with tf.Session() as s:
            ra, rb, rc, rd = s.run([a, b, c, d], {i: [2, 0]})
            same(ra[:, 0, 0], [12, 0, 12], "float32")
            same(rb[:, :, 0, 0], [[8, 0], [20, 12]], "float32")
            same(rc[0], [[2, 0], [6, 4], [10, 8]], "float32")
            assert rd.tolist() == [b"c", b"a"]
            with pytest.raises(errors.InvalidArgumentError, match=r"indices\[1\] = 3 is not in \[0, 3\)"):
                s.run(d, {i: [0, 3]})
            same(s.run(n, {"lines:0": ["a b", "c d e"]}), 5, "int32")
            same(s.run(m), 3, "int64")
        with pytest.raises(ValueError):
            tf.gather(p, [0], axis=3)
        with pytest.raises(TypeError):
            tf.gather(p, [0.5])


def test_exact_elementwise_functions_as_tensorflow():
    with tf.Graph().as_default():
        f = tf.constant([-2.5, 0.5, 1.5, -0.5, 2.25, -np.inf])
        i = tf.constant([-3, 0, 7, -2147483648], tf.int32)
        ts = [tf.abs(f), tf.square(f), tf.sqrt(tf.abs(f)), tf.floor(f), tf.math.ceil(f), tf.round(f),
              tf.abs(i), tf.square(i), abs(f)]
        assert [t.name for t in ts[:3]] == ["Abs:0", "Square:0", "Sqrt:0"]
        assert tf.round(i) is i
        with tf.Session() as s:
            r = s.run(ts)
        same(r[0], [2.5, 0.5, 1.5, 0.5, 2.25, np.inf], "float32")
        same(r[1], [6.25, 0.25, 2.25, 0.25, 5.0625, np.inf], "float32")
        same(r[2], np.sqrt(np.float32([2.5, 0.5, 1.5, 0.5, 2.25, np.inf])), "float32")
        same(r[3], [-3, 0, 1, -1, 2, -np.inf], "float32")
        same(r[4], [-2, 1, 2, -0.0, 3, -np.inf], "float32")
        same(r[5], [-2, 0, 2, -0.0, 2, -np.inf], "float32")  # half to even
        same(r[6], [3, 0, 7, -2147483648], "int32")
        same(r[7], [9, 0, 49, 0], "int32")
        same(r[8], r[0], "float32")
        with pytest.raises(TypeError):
            tf.sqrt(i)


def test_variable_scope_and_get_variable_as_tensorflow():
    with tf.Graph().as_default():
        with tf.variable_scope("input"):
            v = tf.get_variable("v", [2], initializer=tf.constant_initializer(3.0))
            c = tf.constant(1, name="c")
            w = tf.get_variable("w", initializer=tf.constant([1, 2]))
            z = tf.get_variable("z", [2, 2], dtype=tf.int32)
        with tf.variable_scope("input", reuse=True):
            assert tf.get_variable("v") is v
            c2 = tf.constant(1, name="c")
        with tf.variable_scope("outer"):
            with tf.variable_scope("inner"):
                u = tf.get_variable("u", [1], initializer=tf.zeros_initializer())
                assert tf.get_variable_scope().name == "outer/inner"
        assert [t.name for t in (v, w, z, c, c2, u)] == [
            "input/v:0", "input/w:0", "input/z:0", "input/c:0", "input_1/c:0", "outer/inner/u:0"]
        assert (v.dtype, w.dtype) == (tf.float32, tf.int32)
        with pytest.raises(ValueError, match="already exists"):
            with tf.variable_scope("input"):
                tf.get_variable("v", [2], initializer=tf.zeros_initializer())
        with pytest.raises(ValueError, match="does not exist"):
            with tf.variable_scope("input", reuse=True):
                tf.get_variable("nope", [2])
        with tf.variable_scope("q", reuse=tf.AUTO_REUSE):
            a = tf.get_variable("a", [1], initializer=tf.ones_initializer())
            assert tf.get_variable("a", [1]) is a
        with pytest.raises(NotImplementedError):
            tf.get_variable("random", [3])
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            r = s.run([v, w, z, u, a])
        same(r[0], [3, 3], "float32")
        same(r[1], [1, 2], "int32")
        same(r[2], [[0, 0], [0, 0]], "int32")
        same(r[3], [0], "float32")
        same(r[4], [1], "float32")


def test_random_uniform_and_shuffle_as_tensorflow():
    # The values are feedstock's generator's; names, shapes, dtypes,
    # ranges and errors are TensorFlow's.
    with tf.Graph().as_default():
        u = tf.random_uniform([3, 4])
        i = tf.random_uniform([1000], 2, 5, dtype=tf.int32, seed=3)
        f = tf.random_uniform([], -1.0, 1.0, tf.float64)
        x = tf.random_shuffle(tf.constant(np.arange(10).reshape(5, 2)))
        bad = tf.random_uniform([2], 5, 5, dtype=tf.int32)
        assert [t.name for t in (u, i, f, x)] == [
            "random_uniform/RandomUniform:0", "random_uniform_1:0", "random_uniform_2:0", "RandomShuffle:0"]
        assert u.shape.as_list() == [3, 4] and f.shape.as_list() == [] and f.dtype == tf.float64
        with tf.Session() as s:
            a, b, c, d = s.run([u, i, f, x])
            assert a.dtype == np.float32 and ((a >= 0) & (a < 1)).all() and (a != s.run(u)).any()
            assert b.dtype == np.int32 and set(b.tolist()) == {2, 3, 4}
            assert -1 <= c < 1
            assert sorted(d[:, 0].tolist()) == [0, 2, 4, 6, 8] and (d[:, 1] == d[:, 0] + 1).all()
            with pytest.raises(errors.InvalidArgumentError):
                s.run(bad)
        with pytest.raises(ValueError):
            tf.random_uniform([2], dtype=tf.int32)


def test_tile_as_tensorflow():
    with tf.Graph().as_default():
        x = tf.constant([[1, 2]])
        p = tf.placeholder(tf.string, [None])
        ts = [tf.tile(x, [2, 2]), tf.tile(x, [0, 3]), tf.tile(p, [3]), tf.tile(tf.expand_dims(p, 1), [1, 2])]
        assert ts[0].name == "Tile:0"
        assert [t.shape.as_list() for t in ts] == [[2, 4], [0, 6], [None], [None, 2]]
        with tf.Session() as s:
            r = s.run(ts, {p: ["a", "b"]})
        same(r[0], [[1, 2, 1, 2], [1, 2, 1, 2]], "int32")
        assert r[1].shape == (0, 6)
        assert r[2].tolist() == [b"a", b"b"] * 3
        assert r[3].tolist() == [[b"a", b"a"], [b"b", b"b"]]
        with pytest.raises(ValueError):
            tf.tile(x, [2])


def test_where_as_tensorflow_1():
    with tf.Graph().as_default():
        c = tf.constant([[True, False], [False, True]])
        x, y = tf.constant([[1, 2], [3, 4]]), tf.constant([[5, 6], [7, 8]])
        p = tf.placeholder(tf.float32, [None])
        ts = [tf.where(c, x, y), tf.where([False, True], x, y), tf.where(c), tf.where(p > 0.5),
              tf.where(p > 0.5, p, p * 0), tf.where(tf.constant(True), 1.0, 2.0)]
        assert [t.name for t in ts[:3]] == ["Select:0", "Select_1:0", "Where:0"]
        assert [t.shape.as_list() for t in ts] == [[2, 2], [2, 2], [None, 2], [None, 1], [None], []]
        assert ts[2].dtype == tf.int64
        with tf.Session() as s:
            r = s.run(ts, {p: [0.2, 0.7, 0.9]})
        same(r[0], [[1, 6], [7, 4]], "int32")
        same(r[1], [[5, 6], [3, 4]], "int32")
        same(r[2], [[0, 0], [1, 1]], "int64")
        same(r[3], [[1], [2]], "int64")
        same(r[4], [0, 0.7, 0.9], "float32")
        same(r[5], 1.0, "float32")
        with pytest.raises(ValueError):
            tf.where([True, False, True], x, y)
        with pytest.raises(TypeError):
            tf.where(c, x, tf.constant([[1.0, 2.0], [3.0, 4.0]]))
        with pytest.raises(ValueError):
            tf.where(c, x)


def test_zeros_like_and_ones_like_as_tensorflow():
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float32, [None, 2])
        c = tf.constant([[1, 2]])
        ts = [tf.zeros_like(p), tf.ones_like(p, dtype=tf.int64), tf.zeros_like(c), tf.ones_like(c)]
        assert [t.name for t in ts] == ["zeros_like:0", "ones_like:0", "zeros_like_1:0", "ones_like_1:0"]
        assert [t.shape.as_list() for t in ts] == [[None, 2], [None, 2], [1, 2], [1, 2]]
        with tf.Session() as s:
            r = s.run(ts, {p: [[1, 2], [3, 4], [5, 6]]})
        same(r[0], np.zeros((3, 2)), "float32")
        same(r[1], np.ones((3, 2)), "int64")
        same(r[3], [[1, 1]], "int32")
