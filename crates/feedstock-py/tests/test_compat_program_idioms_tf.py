"""Lines that public TF1 input programs write around their pipelines
(session configuration, dtype names, file globs, image reading through
gfile), as TensorFlow 2.21 (``tensorflow.compat.v1`` with
``disable_v2_behavior()``) behaves; every expectation below was observed
there."""

import os
import time

import numpy as np
import pytest

import feedstock.compat.v1 as tf


def test_session_config_is_built_and_assigned_as_tensorflow_programs_do():
    # tf.Session(config=tf.ConfigProto(allow_soft_placement=True,
    # gpu_options=tf.GPUOptions(allow_growth=True))) is one of the commonest
    # lines of TF1 programs; fields read back as protobuf's defaults.
    c = tf.ConfigProto(allow_soft_placement=True, gpu_options=tf.GPUOptions(allow_growth=True))
    c.gpu_options.per_process_gpu_memory_fraction = 0.5
    c.graph_options.optimizer_options.global_jit_level = tf.OptimizerOptions.ON_1
    assert (c.allow_soft_placement, c.log_device_placement, c.gpu_options.allow_growth) == (True, False, True)
    assert c.intra_op_parallelism_threads == 0
    assert c.gpu_options.per_process_gpu_memory_fraction == 0.5
    assert c.graph_options.optimizer_options.global_jit_level == 1
    assert (tf.OptimizerOptions.ON_1, tf.OptimizerOptions.OFF, tf.OptimizerOptions.L1) == (1, -1, 0)
    assert dict(tf.ConfigProto(device_count={"GPU": 0}).device_count) == {"GPU": 0}
    assert type(tf.RunMetadata()).__name__ == "RunMetadata"
    with pytest.raises(ValueError, match='Protocol message ConfigProto has no "bogus" field.'):
        tf.ConfigProto(bogus=1)
    with tf.Graph().as_default():
        x = tf.constant([1.5, 2.5])
        with tf.Session(config=c) as s:
            np.testing.assert_array_equal(s.run(x, run_metadata=tf.RunMetadata()), [1.5, 2.5])


def test_operation_timeout_is_the_session_deadline_and_run_options_override_it():
    # TensorFlow: a dequeue from an empty queue fails DeadlineExceeded after
    # the session's operation_timeout_in_ms (0.3 s), or after the run's own
    # RunOptions.timeout_in_ms (0.6 s) when it gives one.
    with tf.Graph().as_default():
        q = tf.FIFOQueue(3, "float")
        x = q.dequeue()
        with tf.Session(config=tf.ConfigProto(operation_timeout_in_ms=300)) as s:
            t = time.monotonic()
            with pytest.raises(tf.errors.DeadlineExceededError):
                s.run(x)
            first = time.monotonic() - t
            t = time.monotonic()
            with pytest.raises(tf.errors.DeadlineExceededError):
                s.run(x, options=tf.RunOptions(timeout_in_ms=600))
            second = time.monotonic() - t
    # Which deadline applied, not how fast: each run waits at least its own.
    assert first >= 0.3 and second >= 0.6


def test_tensorflow_dtype_aliases_float_double_half():
    # tf.FIFOQueue(3, "float") is the queues guide's own line; early MNIST
    # tutorials write tf.placeholder("float", [None, 784]).
    with tf.Graph().as_default():
        q = tf.FIFOQueue(3, "float")
        x = tf.placeholder("float", [None, 784])
        assert str(q.dequeue().dtype) == "<dtype: 'float32'>"
        assert str(x.dtype) == "<dtype: 'float32'>"
        assert str(tf.as_dtype("double")) == "<dtype: 'float64'>"
        assert tf.as_dtype("half") == tf.float16
        y = tf.cast(tf.constant([1, 2]), "double")
        with tf.Session() as s:
            assert s.run(y).dtype == np.float64


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """g/{b-1,a-0,c-2}.txt and g/d2/y, g/d1/{x,z}, made in that order;
    the working directory is tmp_path."""
    g = tmp_path / "g"
    g.mkdir()
    for name in ("b-1.txt", "a-0.txt", "c-2.txt"):
        (g / name).write_bytes(b"")
    for d, names in (("d2", ["y"]), ("d1", ["x", "z"])):
        (g / d).mkdir()
        for n in names:
            (g / d / n).write_bytes(b"")
    monkeypatch.chdir(tmp_path)
    return g


def listing(directory, keep=lambda name: True):
    # TensorFlow's GetMatchingPaths and walk give the file system's listing
    # order (TensorFlow 2.21 matched `ls -U` and os.listdir here).
    return [n for n in os.listdir(directory) if keep(n)]


def test_gfile_glob_lists_in_tensorflows_order_and_form(tree):
    # Observed under TensorFlow 2.21: a pattern with no directory gets
    # "./" before each match; a pattern with no wildcard is itself if it
    # exists; levels are walked breadth first in listing order; a list of
    # patterns is each pattern's matches in turn.
    txt = listing("g", lambda n: n.endswith(".txt"))
    assert tf.gfile.Glob("g/*.txt") == [f"g/{n}" for n in txt]
    assert tf.io.gfile.glob(f"{tree}/*") == [f"{tree}/{n}" for n in listing("g")]
    os.chdir("g")
    assert tf.gfile.Glob("*.txt") == [f"./{n}" for n in txt]
    assert tf.gfile.Glob("[ab]-?.txt") == [f"./{n}" for n in txt if n[0] in "ab"]
    assert tf.gfile.Glob("d*/*") == [
        f"./{d}/{n}" for d in listing(".", lambda n: n.startswith("d")) for n in listing(d)
    ]
    assert tf.gfile.Glob("a-0.txt") == ["a-0.txt"]
    assert tf.gfile.Glob("d1/") == ["d1/"]
    assert tf.gfile.Glob("nope/*") == [] and tf.gfile.Glob("nope.txt") == []
    assert tf.gfile.Glob(["a-0.txt", "d1/*"]) == ["a-0.txt"] + [f"d1/{n}" for n in listing("d1")]


def test_gfile_glob_feeds_the_producer_in_that_order(tree):
    # string_input_producer(Glob(p), shuffle=False) reads files in Glob's
    # order, as under TensorFlow (a book's sharded-TFRecord program).
    for i, name in enumerate(listing("g", lambda n: n.endswith(".txt"))):
        (tree / name).write_bytes(f"line of {name}\n".encode())
    with tf.Graph().as_default():
        files = tf.gfile.Glob("g/*.txt")
        q = tf.train.string_input_producer(files, shuffle=False, num_epochs=1)
        _, line = tf.TextLineReader().read(q)
        with tf.Session() as s:
            tf.local_variables_initializer().run()
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(s, coord)
            got = [s.run(line) for _ in files]
            coord.request_stop()
            coord.join(threads)
    assert got == [f"line of {os.path.basename(f)}".encode() for f in files]


def test_gfile_walk_and_fastgfile(tree):
    # Observed under TensorFlow 2.21 on this tree.
    d = listing("g", lambda n: n.startswith("d"))
    files = listing("g", lambda n: n.endswith(".txt"))
    down = [("g", d, files)] + [(f"g/{x}", [], listing(f"g/{x}")) for x in d]
    assert list(tf.gfile.Walk("g")) == down
    assert list(tf.gfile.Walk("g", in_order=False)) == down[1:] + down[:1]
    assert list(tf.io.gfile.walk("g/"))[0] == ("g/", d, files)
    assert list(tf.gfile.Walk("nope")) == []
    with tf.gfile.FastGFile("g/a-0.txt", "rb") as f:
        assert f.read() == b""


def test_batching_stages_are_named_uniquely_and_join_forms_by_their_own_names():
    # Observed under TensorFlow 2.21: a second stage of a name takes _1
    # (a train and a test batch in one graph), the join forms default to
    # batch_join / shuffle_batch_join, maybe_* to their base names, and
    # each stage's queue runner is named after its queue.
    with tf.Graph().as_default() as g:
        x, y, yes = tf.constant([1.0, 2.0]), tf.constant(3), tf.constant(True)
        names = [
            tf.train.batch([x, y], 2)[0].name,
            tf.train.batch_join([[x, y], [x, y]], 2)[0].name,
            tf.train.shuffle_batch([x, y], 2, 10, 2)[0].name,
            tf.train.shuffle_batch_join([[x, y], [x, y]], 2, 10, 2)[0].name,
            tf.train.maybe_batch([x, y], yes, 2)[0].name,
            tf.train.maybe_batch_join([[x, y]], yes, 2)[0].name,
            tf.train.maybe_shuffle_batch([x, y], 2, 10, 2, yes)[0].name,
            tf.train.maybe_shuffle_batch_join([[x, y]], 2, 10, 2, yes)[0].name,
            tf.train.batch({"a": x, "b": y}, 2)["a"].name,
            tf.train.batch([tf.placeholder_with_default(x, [None])], 2, dynamic_pad=True).name,
            tf.train.batch([x], 2, name="b").name,
            tf.train.batch([x], 2, name="b").name,
        ]
        assert names == [
            "batch:0", "batch_join:0", "shuffle_batch:0", "shuffle_batch_join:0", "batch_1:0", "batch_join_1:0",
            "shuffle_batch_1:0", "shuffle_batch_join_1:0", "batch_2:0", "batch_3:0", "b:0", "b_1:0",
        ]
        assert [qr.name for qr in g.get_collection(tf.GraphKeys.QUEUE_RUNNERS)] == [
            "batch/fifo_queue", "batch_join/fifo_queue", "shuffle_batch/random_shuffle_queue",
            "shuffle_batch_join/random_shuffle_queue", "batch_1/fifo_queue", "batch_join_1/fifo_queue",
            "shuffle_batch_1/random_shuffle_queue", "shuffle_batch_join_1/random_shuffle_queue",
            "batch_2/fifo_queue", "batch_3/padding_fifo_queue", "b/fifo_queue", "b_1/fifo_queue",
        ]


def test_a_second_batch_is_fetched_by_its_name():
    # TensorFlow: sess.run("batch_1:0") is the test batch, [2 2 2].
    with tf.Graph().as_default():
        train = tf.train.batch([tf.constant(1)], batch_size=2)
        test = tf.train.batch([tf.constant(2)], batch_size=3)
        assert (train.name, test.name) == ("batch:0", "batch_1:0")
        with tf.Session() as s:
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(s, coord)
            got = s.run("batch_1:0")
            first = s.run(train)
            coord.request_stop()
            coord.join(threads)
    np.testing.assert_array_equal(got, [2, 2, 2])
    np.testing.assert_array_equal(first, [1, 1])


def test_parsed_tensors_are_named_as_tensorflows():
    # Observed under TensorFlow 2.21: the op is ParseSingleExample/
    # ParseExample/ParseExampleV2 (name=n: n/n/n), batched ParseExample/
    # ParseExampleV2 (n/n), dense outputs in sorted key order.
    with tf.Graph().as_default():
        s = tf.placeholder(tf.string, [])
        b = tf.placeholder(tf.string, [None])
        spec = {"shape": tf.FixedLenFeature([], tf.string), "label": tf.FixedLenFeature([], tf.int64),
                "image": tf.FixedLenFeature([], tf.string)}

        def names(parsed):
            return [(k, v.name) for k, v in parsed.items()]

        keys = ["image", "label", "shape"]
        assert names(tf.parse_single_example(s, spec)) == [
            (k, f"ParseSingleExample/ParseExample/ParseExampleV2:{i}") for i, k in enumerate(keys)]
        assert names(tf.parse_single_example(s, spec, name="features")) == [
            (k, f"features/features/features:{i}") for i, k in enumerate(keys)]
        assert names(tf.parse_example(b, spec)) == [(k, f"ParseExample/ParseExampleV2:{i}") for i, k in enumerate(keys)]
        assert names(tf.parse_example(b, spec, name="pe")) == [(k, f"pe/pe:{i}") for i, k in enumerate(keys)]
        with tf.name_scope("input"):
            assert names(tf.io.parse_single_example(s, spec))[0] == (
                "image", "input/ParseSingleExample/ParseExample/ParseExampleV2:0")
        example = tf.train.Example(features=tf.train.Features(feature={
            "shape": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"2x2"])),
            "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[7])),
            "image": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"\x00\x01"])),
        })).SerializeToString()
        parsed = tf.parse_single_example(s, spec)
        with tf.Session() as sess:
            got = sess.run(parsed, {s: example})
        assert (got["image"], got["label"], got["shape"]) == (b"\x00\x01", 7, b"2x2")


def test_pad_with_paddings_computed_when_run():
    # A sequence padded to a fixed length (tf.pad(x, [[0, n - tf.shape(x)[0]]])),
    # as TensorFlow 2.21 gives it: the static size where the row is known,
    # PadV2 for a nonzero value, a negative padding refused when run.
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3])
        n = tf.shape(x)[0]
        p1 = tf.pad(x, [[0, 4 - n], [1, 1]])
        p2 = tf.pad(x, tf.constant([[1, 0], [0, 2]]) * n, constant_values=7)
        v = tf.placeholder(tf.int64, [None])
        p3 = tf.pad(v, [[0, 5 - tf.shape(v, out_type=tf.int64)[0]]])
        assert [str(t) for t in (p1, p2, p3)] == [
            'Tensor("Pad:0", shape=(?, 5), dtype=float32)',
            'Tensor("PadV2:0", shape=(?, ?), dtype=float32)',
            'Tensor("Pad_1:0", shape=(?,), dtype=int64)',
        ]
        with tf.Session() as s:
            np.testing.assert_array_equal(s.run(p1, {x: np.arange(6).reshape(2, 3)}), [
                [0, 0, 1, 2, 0], [0, 3, 4, 5, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0]])
            np.testing.assert_array_equal(s.run(p2, {x: np.arange(3).reshape(1, 3)}), [
                [7, 7, 7, 7, 7], [0, 1, 2, 7, 7]])
            np.testing.assert_array_equal(s.run(p3, {v: [1, 2]}), [1, 2, 0, 0, 0])
            with pytest.raises(tf.errors.InvalidArgumentError, match="Paddings must be non-negative: 0 -1"):
                s.run(p1, {x: np.zeros((5, 3))})


def test_set_shape_refines_any_number_of_unknown_sizes_and_checks_when_run():
    # slim's inception preprocessing: distorted_image.set_shape([None, None, 3])
    # after a slice of sizes known only when run; TensorFlow 2.21 then
    # resizes to (299, 299, 3) and batches.
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, None, None])
        c = tf.slice(x, tf.constant([0, 0, 0]), tf.shape(x) - tf.constant([1, 1, 0]))
        assert str(c.shape) == "(?, ?, ?)"
        c.set_shape([None, None, 3])
        assert str(c) == 'Tensor("Slice:0", shape=(?, ?, 3), dtype=float32)'
        r = tf.image.resize_images(c, [4, 4])
        assert str(r.shape) == "(4, 4, 3)"
        assert str(tf.train.batch([r], batch_size=2).shape) == "(2, 4, 4, 3)"
        y = tf.placeholder(tf.float32, [None])
        y2 = tf.reshape(y, [-1, 3])
        y2.set_shape([2, 3])
        with tf.Session() as s:
            assert s.run(c, {x: np.zeros((3, 3, 3))}).shape == (2, 2, 3)
            # feedstock checks the refinement when run (TensorFlow does not).
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match=r"Shape of tensor \[2, 2, 4\] is not compatible with expected shape \[\?, \?, 3\]"):
                s.run(c, {x: np.zeros((3, 3, 4))})
            with pytest.raises(tf.errors.InvalidArgumentError, match="not compatible"):
                s.run(y2, {y: np.zeros(12)})


def test_convert_image_dtype_and_adjust_gamma_are_named_as_tensorflows():
    # Observed under TensorFlow 2.21: the result is the convert_image scope's
    # name (so a program's next tf.multiply in its scope is Mul, not Mul_1);
    # the same dtype is an Identity outside any scope.
    with tf.Graph().as_default():
        x = tf.placeholder(tf.uint8, [None, None, 3])
        f = tf.placeholder(tf.float32, [2, 2, 3])
        names = [
            tf.image.convert_image_dtype(x, tf.float32).name,
            tf.image.convert_image_dtype(x, tf.float32, name="c").name,
            tf.image.convert_image_dtype(f, tf.uint8).name,
            tf.image.convert_image_dtype(f, tf.uint8, saturate=True).name,
            tf.image.convert_image_dtype(f, tf.float32).name,
            tf.image.convert_image_dtype(f, tf.float64).name,
        ]
        assert names == ["convert_image:0", "c:0", "convert_image_1:0", "convert_image_2:0", "Identity:0",
                         "convert_image_3:0"]
        with tf.name_scope("eval_image"):
            y = tf.image.convert_image_dtype(x, tf.float32)
            assert (y.name, tf.multiply(y, 2.0).name) == ("eval_image/convert_image:0", "eval_image/Mul:0")
        assert tf.image.adjust_gamma(f, 2.0).name == "adjust_gamma/Identity:0"
        assert tf.image.adjust_gamma(x, 2.0).name == "adjust_gamma_1/convert_image_1:0"


def test_squeeze_and_random_uniform_of_sizes_known_when_run():
    # slim's VGG preprocessing: tf.squeeze of a resized image of unknown
    # height (rank unknown then, as TensorFlow infers it) and a random crop
    # offset drawn below a bound computed when run.
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [1, None, 100, 3])
        y = tf.placeholder(tf.float32, [None, 1, 3])
        assert [str(t) for t in (tf.squeeze(x), tf.squeeze(y), tf.squeeze(y, [1]))] == [
            'Tensor("Squeeze:0", dtype=float32)', 'Tensor("Squeeze_1:0", dtype=float32)',
            'Tensor("Squeeze_2:0", shape=(?, 3), dtype=float32)']
        h = tf.placeholder(tf.int32, [])
        off = tf.random_uniform([], maxval=h - 224 + 1, dtype=tf.int32)
        many = tf.random_uniform([1000], minval=h, maxval=h + 3, dtype=tf.int32)
        f = tf.random_uniform([2, 3], minval=tf.cast(h, tf.float32), maxval=10.0)
        assert [str(t) for t in (off, many, f)] == [
            'Tensor("random_uniform:0", shape=(), dtype=int32)',
            'Tensor("random_uniform_1:0", shape=(1000,), dtype=int32)',
            'Tensor("random_uniform_2:0", shape=(2, 3), dtype=float32)']
        with tf.Session() as s:
            assert s.run(tf.squeeze(x), {x: np.zeros((1, 1, 100, 3))}).shape == (100, 3)
            assert s.run(tf.squeeze(y), {y: [[[1, 2, 3]]]}).shape == (3,)
            assert 0 <= s.run(off, {h: 300}) < 77
            drawn = s.run(many, {h: 5})
            assert drawn.dtype == np.int32 and sorted(set(drawn.tolist())) == [5, 6, 7]
            v = s.run(f, {h: 4})
            assert v.dtype == np.float32 and ((v >= 4) & (v < 10)).all()
            with pytest.raises(tf.errors.InvalidArgumentError, match="Need minval < maxval, got 0 >= -23"):
                s.run(off, {h: 200})


def test_rint_and_the_compat_text_helpers():
    with tf.Graph().as_default():
        x = tf.constant([0.5, 1.5, 2.5, -0.5, 2.7, -2.5])
        r = tf.rint(x)
        assert r.name == "Rint:0"
        with tf.Session() as s:
            np.testing.assert_array_equal(s.run(r), [0.0, 2.0, 2.0, -0.0, 3.0, -2.0])
    assert (tf.compat.as_bytes("RGB"), tf.compat.as_text(b"dog"), tf.compat.as_str_any(3)) == (b"RGB", "dog", "3")
    assert tf.compat.as_bytes("\u00e9", encoding="latin-1") == b"\xe9"
    with pytest.raises(TypeError, match="Expected binary or unicode string, got 3"):
        tf.compat.as_bytes(3)
    assert tf.compat.v1.Session is tf.Session


def test_tensors_made_under_tf_device_print_it():
    # Observed under TensorFlow 2.21 (cifar10 and inception build their
    # input under tf.device('/cpu:0') and print the tensors).
    with tf.Graph().as_default():
        with tf.device("/cpu:0"):
            a = tf.constant(1)
            with tf.device("/gpu:1"):
                b = tf.constant(2)
            with tf.device(None):
                c = tf.constant(3)
            with tf.device("/job:localhost/replica:0/task:0/cpu:0"):
                d = tf.constant(4)
            e = a + 1
        with tf.device("CPU:0"):
            f = tf.constant(5)
        g = tf.constant(6)
        assert [str(t) for t in (a, b, c, d, e, f, g)] == [
            'Tensor("Const:0", shape=(), dtype=int32, device=/device:CPU:0)',
            'Tensor("Const_1:0", shape=(), dtype=int32, device=/device:GPU:1)',
            'Tensor("Const_2:0", shape=(), dtype=int32)',
            'Tensor("Const_3:0", shape=(), dtype=int32, device=/job:localhost/replica:0/task:0/device:CPU:0)',
            'Tensor("add:0", shape=(), dtype=int32, device=/device:CPU:0)',
            'Tensor("Const_4:0", shape=(), dtype=int32, device=/device:CPU:0)',
            'Tensor("Const_5:0", shape=(), dtype=int32)',
        ]
        assert (repr(a), a.device, g.device) == ("<tf.Tensor 'Const:0' shape=() dtype=int32>", "/device:CPU:0", "")


def test_reduce_join_and_the_sampled_box_as_tensorflows():
    # Observed under TensorFlow 2.21: the first axis listed varies fastest;
    # sample_distorted_bounding_box returns its namedtuple (result.begin).
    with tf.Graph().as_default():
        a = tf.constant([["a", "b"], ["c", "d"]])
        p = tf.placeholder(tf.string, [])
        ops = [tf.reduce_join(a), tf.reduce_join(a, 0), tf.reduce_join(a, 1, separator="-"),
               tf.reduce_join(a, -1, keep_dims=True), tf.reduce_join(["x/", p], 0),
               tf.reduce_join(a, [0, 1], separator=","), tf.strings.reduce_join(a, axis=1), tf.reduce_join(a, [])]
        assert [str(o.shape) for o in ops] == ["()", "(2,)", "(2,)", "(2, 1)", "()", "()", "(2,)", "(2, 2)"]
        assert ops[0].name == "ReduceJoin/ReduceJoin:0"
        box = tf.image.sample_distorted_bounding_box(
            tf.constant([10, 10, 3]), bounding_boxes=tf.constant([[[0.0, 0.0, 1.0, 1.0]]]), min_object_covered=0.1)
        assert type(box).__name__ == "SampleDistortedBoundingBoxV2" and box._fields == ("begin", "size", "bboxes")
        assert box.begin.name == "sample_distorted_bounding_box/SampleDistortedBoundingBoxV2:0"
        with tf.Session() as s:
            got = s.run(ops, {p: "f.jpg"})
            drawn = s.run(box)
        assert [np.asarray(g).tolist() for g in got] == [
            b"abcd", [b"ac", b"bd"], [b"a-b", b"c-d"], [[b"ab"], [b"cd"]], b"x/f.jpg", b"a,c,b,d", [b"ab", b"cd"],
            [[b"a", b"b"], [b"c", b"d"]]]
        assert drawn.begin.shape == (3,) and drawn.bboxes.shape == (1, 1, 4)


def test_parsed_sequence_tensors_are_named_as_tensorflows():
    # im2txt prints its parsed context and caption: observed under
    # TensorFlow 2.21, dense outputs sorted within context, then lists.
    with tf.Graph().as_default():
        s = tf.placeholder(tf.string, [])
        b = tf.placeholder(tf.string, [None])
        ctx = {"image/data": tf.FixedLenFeature([], tf.string), "id": tf.FixedLenFeature([], tf.int64)}
        seq = {"caption": tf.FixedLenSequenceFeature([], tf.int64), "alt": tf.FixedLenSequenceFeature([], tf.string)}
        c, f = tf.parse_single_sequence_example(s, context_features=ctx, sequence_features=seq)
        op = "ParseSingleSequenceExample/ParseSequenceExample/ParseSequenceExampleV2"
        assert [(k, v.name) for k, v in sorted(c.items())] == [("id", f"{op}:0"), ("image/data", f"{op}:1")]
        assert [(k, v.name) for k, v in sorted(f.items())] == [("alt", f"{op}:2"), ("caption", f"{op}:3")]
        c, f, lengths = tf.io.parse_sequence_example(b, context_features=ctx, sequence_features=seq)
        op = "ParseSequenceExample/ParseSequenceExample/ParseSequenceExampleV2"
        assert [v.name for _, v in sorted(lengths.items())] == [f"{op}:4", f"{op}:5"]


def test_as_string_and_is_jpeg_as_tensorflows(tmp_path):
    # Observed under TensorFlow 2.21 (printf's formats; fill is its flag).
    with tf.Graph().as_default():
        vals = [
            tf.as_string(tf.constant([1, -20])), tf.as_string(tf.constant([1.5, 2.0 / 3, 1e10])),
            tf.as_string(tf.constant([True, False])), tf.as_string(tf.constant([3.14159]), precision=2),
            tf.as_string(tf.constant([7]), width=4, fill="0"), tf.as_string(tf.constant([1.5e-7]), scientific=True),
            tf.as_string(tf.constant(5, tf.int64)), tf.as_string(tf.constant([2.5], tf.float64), shortest=True),
            tf.as_string(tf.constant([-3]), width=5), tf.as_string(tf.constant([1.25]), width=8, fill=" "),
            tf.strings.as_string(tf.constant([[1, 2]], tf.uint8)),
        ]
        assert [v.name for v in vals[:2]] == ["AsString:0", "AsString_1:0"]
        assert str(vals[-1].shape) == "(1, 2)" and str(vals[6].shape) == "()"
        c = tf.placeholder(tf.string, [])
        j = tf.image.is_jpeg(c)
        assert j.name == "is_jpeg/Equal:0"
        with tf.Session() as s:
            got = [np.asarray(s.run(v)).tolist() for v in vals]
            jpeg = s.run(j, {c: b"\xff\xd8\xff\xe0rest"})
            other = s.run(j, {c: b"ab"})
    assert got == [
        [b"1", b"-20"], [b"1.500000", b"0.666667", b"10000000000.000000"], [b"true", b"false"], [b"3.14"],
        [b"0007"], [b"1.500000e-07"], b"5", [b"2.5"], [b"   -3"], [b" 1.250000"], [[b"1", b"2"]],
    ]
    assert (bool(jpeg), bool(other)) == (True, False)


def test_image_functions_are_named_as_tensorflows():
    # Observed under TensorFlow 2.21, for one image and for a batch.
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [8, 8, 3])
        b = tf.placeholder(tf.float32, [2, 8, 8, 3])
        u = tf.placeholder(tf.uint8, [None, None, 3])
        got = [t.name for t in (
            tf.image.adjust_brightness(x, 0.1), tf.image.adjust_contrast(x, 0.5), tf.image.adjust_saturation(x, 0.5),
            tf.image.adjust_hue(x, 0.1), tf.image.random_brightness(x, 0.1), tf.image.central_crop(x, 0.5),
            tf.image.resize_image_with_crop_or_pad(x, 4, 10), tf.image.random_flip_left_right(x),
            tf.image.flip_left_right(x), tf.image.rgb_to_grayscale(x), tf.image.adjust_brightness(u, 0.1),
            tf.image.pad_to_bounding_box(x, 1, 1, 10, 10), tf.image.crop_to_bounding_box(x, 1, 1, 4, 4),
            tf.image.central_crop(b, 0.5), tf.image.resize_image_with_crop_or_pad(b, 4, 10),
            tf.image.random_flip_left_right(b), tf.image.pad_to_bounding_box(b, 1, 1, 10, 10),
            tf.image.crop_to_bounding_box(b, 1, 1, 4, 4), tf.image.rgb_to_grayscale(u), tf.image.flip_up_down(u),
        )]
    assert got == [
        "adjust_brightness/Identity:0", "adjust_contrast/Identity:0", "adjust_saturation/Identity:0",
        "adjust_hue/Identity:0", "adjust_brightness_1/Identity:0", "central_crop/Slice:0",
        "resize_image_with_crop_or_pad/Squeeze:0", "random_flip_left_right/Merge:0", "flip_left_right/ReverseV2:0",
        "rgb_to_grayscale:0", "adjust_brightness_2/convert_image_1:0", "pad_to_bounding_box/Squeeze:0",
        "crop_to_bounding_box/Squeeze:0", "central_crop_1/Slice:0",
        "resize_image_with_crop_or_pad_1/control_dependency_1:0", "random_flip_left_right_1/add:0",
        "pad_to_bounding_box_1/Pad:0", "crop_to_bounding_box_1/Slice:0", "rgb_to_grayscale_1:0",
        "flip_up_down/ReverseV2:0",
    ]


def test_indexing_with_slice_bounds_computed_when_run():
    # A PTB-style reader: data[:, i * n:(i + 1) * n] with i dequeued from
    # range_input_producer; values and names as under TensorFlow 2.21.
    with tf.Graph().as_default():
        raw = tf.convert_to_tensor([4, 3, 2, 1, 0, 5, 6, 1, 1, 1, 1, 0, 3, 4, 1], name="raw_data", dtype=tf.int32)
        batch_len = tf.size(raw) // 3
        data = tf.reshape(raw[0:3 * batch_len], [3, batch_len])
        i = tf.train.range_input_producer((batch_len - 1) // 2, shuffle=False).dequeue()
        x = data[:, i * 2:(i + 1) * 2]
        x.set_shape([3, 2])
        y = data[:, i * 2 + 1:(i + 1) * 2 + 1]
        y.set_shape([3, 2])
        assert (str(x), str(y)) == ('Tensor("strided_slice_1:0", shape=(3, 2), dtype=int32)',
                                    'Tensor("strided_slice_2:0", shape=(3, 2), dtype=int32)')
        m = tf.placeholder(tf.int32, [4, 5])
        k = tf.placeholder(tf.int32, [])
        parts = [m[1, k:k + 2], m[:k], m[k:, 1:3], m[:, k:]]
        with tf.Session() as s:
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(s, coord)
            got = [[a.tolist() for a in s.run([x, y])] for _ in range(3)]
            v = np.arange(20).reshape(4, 5)
            sliced = s.run(parts, {m: v, k: 2})
            coord.request_stop()
            coord.join(threads)
    assert got == [[[[4, 3], [5, 6], [1, 0]], [[3, 2], [6, 1], [0, 3]]],
                   [[[2, 1], [1, 1], [3, 4]], [[1, 0], [1, 1], [4, 1]]],
                   [[[4, 3], [5, 6], [1, 0]], [[3, 2], [6, 1], [0, 3]]]]
    for a, want in zip(sliced, [v[1, 2:4], v[:2], v[2:, 1:3], v[:, 2:]]):
        np.testing.assert_array_equal(a, want)


def test_pow_collection_scopes_and_stateless_py_func_as_tensorflows():
    # Observed under TensorFlow 2.21: tf.pow and ** (an integer to a
    # negative power fails when run); get_collection(key, scope) keeps the
    # items whose name the scope matches (a multi-GPU tower's losses);
    # py_func(stateful=False) is PyFuncStateless.
    with tf.Graph().as_default():
        x = tf.constant([1.5, 2.0, -3.0])
        i = tf.constant([2, 3, -2])
        ops = [tf.pow(x, 2.0), x ** 2, 2 ** x, tf.pow(i, tf.constant([3, 0, 5])), tf.pow(x, 0.5, name="p")]
        assert [o.name for o in ops] == ["Pow:0", "pow_1:0", "pow_2:0", "Pow_3:0", "p:0"]
        bad = tf.pow(i, tf.constant([1, -1, 2]))
        v = tf.placeholder(tf.float32, [])
        tf.summary.scalar("outer", v)
        seen = []
        for k in range(2):
            with tf.name_scope(f"tower_{k}") as scope:
                tf.summary.scalar("loss", v * k)
                tf.add_to_collection("losses", v * k)
                seen.append((len(tf.get_collection(tf.GraphKeys.SUMMARIES, scope)),
                             [t.name for t in tf.get_collection("losses", scope)]))
        assert seen == [(1, ["tower_0/mul_1:0"]), (1, ["tower_1/mul_1:0"])]
        stateless = tf.py_func(lambda a: a, [v], tf.float32, stateful=False)
        assert (stateless.name, tf.py_func(lambda a: a, [v], tf.float32).name) == ("PyFuncStateless:0", "PyFunc:0")
        with tf.Session() as s:
            got = s.run(ops[:4])
            with pytest.raises(tf.errors.InvalidArgumentError, match="Integers to negative integer powers"):
                s.run(bad)
    np.testing.assert_allclose(got[0], [2.25, 4.0, 9.0])
    np.testing.assert_allclose(got[1], [2.25, 4.0, 9.0])
    np.testing.assert_allclose(got[2], [2.828427, 4.0, 0.125], rtol=1e-6)
    assert got[3].tolist() == [8, 1, -32] and got[3].dtype == np.int32


def test_towers_reuse_variables_as_tensorflows():
    # cifar10_multi_gpu_train's tower loop, observed under TensorFlow 2.21:
    # reuse_variables() in a re-entered scope, and at the root for good.
    with tf.Graph().as_default():
        names = []
        with tf.variable_scope(tf.get_variable_scope()):
            for k in range(2):
                with tf.name_scope(f"tower_{k}"):
                    names.append(tf.get_variable("w", [2], initializer=tf.zeros_initializer()).name)
                    tf.get_variable_scope().reuse_variables()
        assert names == ["w:0", "w:0"] and tf.get_variable_scope().reuse is False
    with tf.Graph().as_default():
        names = []
        for k in range(2):
            with tf.name_scope(f"tower_{k}"):
                names.append(tf.get_variable("w", [2], initializer=tf.zeros_initializer()).name)
                tf.get_variable_scope().reuse_variables()
        assert names == ["w:0", "w:0"] and tf.get_variable_scope().reuse is True
    with tf.Graph().as_default():
        assert tf.get_variable_scope().reuse is False
