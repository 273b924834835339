"""compat.v1 feeding, session fetches, op names, preloaded data and small
ops as TensorFlow 2.21 (``tensorflow.compat.v1``, graph mode) behaves;
every expectation below was observed there."""

import collections

import numpy as np
import pytest

import feedstock.compat.v1 as tf
from compat_support import run
from feedstock import errors


# ------------------------------------------------------------ fetches


def test_fetch_structures_keep_their_types():
    P = collections.namedtuple("P", ["a", "b"])
    a = tf.constant([1, 2], name="a")
    b = tf.constant(3.5, name="b")
    with tf.Session() as s:
        got = s.run(P(a, {"k": (b,)}))
        assert type(got) is P and type(got.b["k"]) is tuple
        assert s.run([[], (), {}, [a]])[:3] == [[], (), {}]
        od = s.run(collections.OrderedDict([("y", b), ("x", a)]))
        assert type(od) is collections.OrderedDict and list(od) == ["y", "x"]
        assert s.run([tf.group(a), tf.no_op(), a])[:2] == [None, None]


def test_fetch_by_name():
    a = tf.constant([1, 2], name="a")
    tf.constant(3.5, name="b")
    with tf.Session() as s:
        np.testing.assert_array_equal(s.run("a:0"), [1, 2])
        assert s.run(["a:0", "b:0"])[1] == np.float32(3.5)
        assert s.run("a") is None  # an operation's name runs it
        with pytest.raises(ValueError, match="cannot be interpreted as a Tensor"):
            s.run("zz:0")
    g = tf.get_default_graph()
    assert g.get_tensor_by_name("a:0").name == "a:0"
    assert g.get_operation_by_name("b").name == "b"
    with pytest.raises(KeyError):
        g.get_tensor_by_name("a:3")
    with pytest.raises(ValueError):
        g.get_tensor_by_name("a")
    assert a.graph.as_graph_element("a:0").name == "a:0"


def test_fetch_refusals():
    a = tf.constant(1)
    with tf.Session() as s:
        with pytest.raises(TypeError, match="Cannot be None"):
            s.run([a, None])
        with pytest.raises(TypeError):
            s.run({a})
        g = tf.Graph()
        with g.as_default():
            c = tf.constant(7)
        with pytest.raises(ValueError, match="is not an element of this graph"):
            s.run(c)
    with pytest.raises(ValueError, match="must be from the same graph"):
        c + a


def test_empty_graph_and_closed_session_are_runtime_errors():
    g = tf.Graph()
    with g.as_default():
        c = tf.constant(7)
    s = tf.Session()
    with pytest.raises(RuntimeError, match="graph is empty"):
        s.run(c)
    with pytest.raises(RuntimeError, match="graph is empty"):
        s.run([])
    tf.no_op()  # a graph with only a no-op is not empty
    assert s.run([]) == []
    with tf.Session(graph=g) as s2:
        assert s2.run(c) == 7
    with pytest.raises(RuntimeError, match="Attempted to use a closed Session."):
        s2.run(c)
    with pytest.raises(RuntimeError, match="closed Session"):
        c.eval(session=s2)


def test_interactive_session_is_the_default_until_closed():
    a = tf.constant([1, 2])
    s = tf.InteractiveSession()
    np.testing.assert_array_equal(a.eval(), [1, 2])
    assert tf.get_default_session() is s
    s.close()
    assert tf.get_default_session() is None


def test_operation_run_and_eval_with_feed():
    v = tf.Variable(5)
    p = tf.placeholder(tf.float32)
    with tf.Session() as s:
        assert v.initializer.run() is None
        assert s.run(v) == 5
        assert (p * 2).eval(feed_dict={p: 3}) == np.float32(6)


# ------------------------------------------------------------ feeds


@pytest.mark.parametrize(
    "shape, value, fed_shape",
    [([], [1.0, 2.0, 3.0], "(3,)"), ([3], [[1, 2, 3], [4, 5, 6]], "(2, 3)"), ([None], 2, "()"), ([2, None], [1, 2, 3], "(3,)")],
)
def test_wrong_shape_feed_is_a_value_error(shape, value, fed_shape):
    p = tf.placeholder(tf.float32, shape, name="pp")
    with pytest.raises(ValueError) as e:
        run(tf.identity(p), {p: value})
    assert not isinstance(e.value, errors.OpError)
    assert str(e.value) == f"Cannot feed value of shape {fed_shape} for Tensor pp:0, which has shape {p.shape}"


def test_feed_conversions():
    f = tf.placeholder(tf.float32)
    i = tf.placeholder(tf.int32)
    u = tf.placeholder(tf.uint8)
    with tf.Session() as s:
        # Values are converted with numpy's astype: wrapping, NaN as numpy casts it.
        assert s.run(tf.identity(i), {i: float("nan")}) == np.int32(-(2**31))
        assert s.run(tf.identity(u), {u: np.array([1, 255, 256])}).tolist() == [1, 255, 0]
        assert s.run(tf.identity(i), {i: 2.7}) == 2
        # A fetched tensor that is fed gives the fed array itself.
        got = s.run(f, {f: 4})
        assert isinstance(got, np.ndarray) and got.shape == () and got.dtype == np.float32
    for p, v in [(i, 2**31), (u, -1), (tf.placeholder(tf.bool), 3), (tf.placeholder(tf.string), 3)]:
        with pytest.raises(TypeError, match="Type of feed value"):
            run(tf.identity(p), {p: v})
    s = tf.placeholder(tf.string)
    with pytest.raises(errors.InternalError, match="Unsupported object type int"):
        run(tf.identity(s), {s: [1, 2]})
    with pytest.raises(ValueError):
        run(tf.identity(f), {f: "ab"})


def test_feed_keys():
    p = tf.placeholder(tf.float32, name="x")
    assert run(p * 2, {"x:0": 4.0}) == np.float32(8)
    with pytest.raises(TypeError, match="refers to an Operation, not a Tensor"):
        run(p * 2, {"x": 4.0})
    with pytest.raises(TypeError, match="Cannot interpret feed_dict key as Tensor"):
        run(p * 2, {"y:0": 4.0})
    with pytest.raises(TypeError, match="Can not convert a int into a Tensor"):
        run(p * 2, {p: 1.0, 3: 2.0})
    g = tf.Graph()
    with g.as_default():
        q = tf.placeholder(tf.float32)
    with pytest.raises(TypeError, match="is not an element of this graph"):
        run(p * 2, {p: 1.0, q: 2.0})
    with pytest.raises(TypeError, match="cannot be a tf.Tensor"):
        run(p * 2, {p: tf.constant(1.0)})


def test_feeding_any_tensor():
    c = tf.constant(1.0)
    d = c * 2
    assert run(d + 1, {d: 10.0}) == np.float32(11)
    assert run(d, {c: 5.0}) == np.float32(10)


def test_placeholder_with_default():
    p = tf.placeholder_with_default([[1, 2]], shape=[None, 2])
    # TensorFlow 2.21 (disable_v2_behavior) prints (?, 2).
    assert str(p.shape) == "(?, 2)" and p.dtype == tf.int32 and p.name == "PlaceholderWithDefault:0"
    np.testing.assert_array_equal(run(p), [[1, 2]])
    np.testing.assert_array_equal(run(p, {p: [[1, 2], [3, 4]]}), [[1, 2], [3, 4]])
    with pytest.raises(ValueError, match=r"Cannot feed value of shape \(1, 3\)"):
        run(p, {p: [[1, 2, 3]]})
    with pytest.raises(ValueError):
        tf.placeholder_with_default([1, 2], shape=[3])
    q = tf.placeholder_with_default(3.0, shape=[], name="dflt")
    assert q.name == "dflt:0" and run(q) == np.float32(3)
    assert str(tf.placeholder_with_default([1, 2], shape=None).shape) == "<unknown>"


# ------------------------------------------------------------ names


def names(*ts):
    return [t.name for t in ts]


def test_name_arguments_and_uniquifying():
    a = tf.constant(1.0, name="c")
    b = tf.constant(2.0, name="c")
    p = tf.placeholder(tf.float32, name="c")
    got = names(
        a, b, p, tf.identity(a, name="ident"), tf.cast(a, tf.int32, name="castme"), tf.reshape(a, [1], name="rs"),
        tf.add(a, b, name="sum"), tf.multiply(a, b, name="prod"), tf.subtract(a, b, name="diff"),
    )
    assert got == ["c:0", "c_1:0", "c_2:0", "ident:0", "castme:0", "rs:0", "sum:0", "prod:0", "diff:0"]
    tf.reset_default_graph()
    # TensorFlow's counting: the name asked for and what it already gave.
    got = names(tf.constant(1.0, name="Const"), tf.constant(2.0), tf.constant(3.0, name="Const_1"), tf.constant(3.0, name="Const"))
    assert got == ["Const:0", "Const_1:0", "Const_1_1:0", "Const_2:0"]
    tf.reset_default_graph()
    assert names(*[tf.constant(1.0, name=n) for n in ["x_1", "x", "x", "x"]]) == ["x_1:0", "x:0", "x_2:0", "x_3:0"]


def test_default_names_of_operators_and_functions():
    a = tf.constant(1.0)
    got = names(
        a + 1.0, a + a, a - 1.0, a * 2.0, a / 2.0, tf.add(a, a), tf.multiply(a, a), -a, a // 2.0, a % 2.0, 2.0 - a,
        tf.maximum(a, a), tf.minimum(a, 1.0), tf.constant(3.0),
    )
    # Names compare case-insensitively: tf.add after two `+` is Add_2.
    assert got == [
        "add:0", "add_1:0", "sub:0", "mul:0", "truediv:0", "Add_2:0", "Mul_1:0", "Neg:0", "floordiv:0", "mod:0", "sub_1:0",
        "Maximum:0", "Minimum:0", "Const_1:0",
    ]
    g = tf.get_default_graph()
    assert g.get_tensor_by_name("add/y:0").dtype == tf.float32  # the converted operand
    assert names(tf.to_float(tf.constant(1)), tf.identity(1.0)) == ["ToFloat:0", "Identity:0"]
    assert tf.cast(a, tf.float32) is a


def test_names_of_decoders_variables_and_initializers():
    s = tf.constant(["1,2"])
    assert names(*tf.decode_csv(s, [[0], [0]], name="csv")) == ["csv:0", "csv:1"]
    assert tf.decode_raw(tf.constant([b"ab"]), tf.uint8, name="dr").name == "dr:0"
    v = tf.Variable(1.0)
    w = tf.Variable(1.0, name="w")
    w2 = tf.Variable(1.0, name="w")
    assert names(v, w, w2) == ["Variable:0", "w:0", "w_1:0"]
    assert [v.initializer.name, w2.initializer.name] == ["Variable/Assign", "w_1/Assign"]
    assert v.initial_value.name == "Variable/Initializer/initial_value:0"
    got = [tf.global_variables_initializer().name, tf.global_variables_initializer().name, tf.local_variables_initializer().name]
    assert got == ["init", "init_1", "init_2"]


# ------------------------------------------------------------ preloaded data


def test_preloaded_variable_as_the_guide_writes_it():
    data = np.arange(12, dtype=np.float32).reshape(6, 2)
    labels = np.arange(6, dtype=np.int32)
    data_initializer = tf.placeholder(dtype=data.dtype, shape=data.shape)
    label_initializer = tf.placeholder(dtype=labels.dtype, shape=labels.shape)
    input_data = tf.Variable(data_initializer, trainable=False, collections=[])
    input_labels = tf.Variable(label_initializer, trainable=False, collections=[])
    image, label = tf.train.slice_input_producer([input_data, input_labels], num_epochs=1, shuffle=False)
    images, lbls = tf.train.batch([image, label], batch_size=3)
    assert input_data.initial_value is data_initializer and tf.global_variables() == []
    out = []
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        s.run(tf.local_variables_initializer())
        s.run(input_data.initializer, feed_dict={data_initializer: data})
        s.run(input_labels.initializer, feed_dict={label_initializer: labels})
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(s, coord)
        try:
            while True:
                out.append(s.run([images, lbls]))
        except tf.errors.OutOfRangeError:
            pass
        coord.request_stop()
        coord.join(threads)
    np.testing.assert_array_equal(np.concatenate([b for b, _ in out]), data)
    np.testing.assert_array_equal(np.concatenate([b for _, b in out]), labels)


# ------------------------------------------------------------ small ops


def test_convert_to_tensor_preferred_dtype():
    cases = [
        (1, tf.float32, tf.float32, 1.0), (1.5, tf.int32, tf.float32, 1.5), ([1, 2.5], tf.int64, tf.float32, [1, 2.5]),
        ("a", tf.int64, tf.string, b"a"), (np.array([1, 2], np.int32), tf.int64, tf.int64, [1, 2]),
        (2**40, tf.int32, tf.int32, 0), (-1, tf.uint8, tf.uint8, 255), (True, tf.int32, tf.int32, 1),
        (1, tf.bool, tf.int32, 1), (1, tf.string, tf.int32, 1),
    ]
    for value, preferred, dtype, want in cases:
        t = tf.convert_to_tensor(value, preferred_dtype=preferred)
        assert t.dtype == dtype, (value, preferred)
        np.testing.assert_array_equal(run(t), want)
    c = tf.constant([1])
    assert tf.convert_to_tensor(c, preferred_dtype=tf.float32) is c
    assert tf.convert_to_tensor(1, dtype=tf.int64, preferred_dtype=tf.float32).dtype == tf.int64


def test_strings_add_by_concatenating():
    assert run(tf.constant("a") + tf.constant("b")) == b"ab"
    assert run(tf.constant(["a", "b"]) + "c").tolist() == [b"ac", b"bc"]
    assert run("c" + tf.constant(["a", "b"])).tolist() == [b"ca", b"cb"]
    got = tf.add(tf.constant([["a"], ["b"]]), tf.constant(["x", "y"]))
    assert got.shape == [2, 2] and run(got).tolist() == [[b"ax", b"ay"], [b"bx", b"by"]]
    with pytest.raises(TypeError):
        tf.constant("a") - tf.constant("b")
    with pytest.raises(TypeError):
        tf.constant("a") + 1
    with pytest.raises(ValueError):
        tf.constant(["a", "b"]) + tf.constant(["a", "b", "c"])


def test_random_crop_size_given_as_tensors():
    image = tf.constant(np.ones((4, 5, 3)))
    for size in [tf.constant([2, 2, 3]), tf.stack([2, 2, 3]), [tf.constant(2), 2, 3], np.array([2, 2, 3])]:
        crop = tf.random_crop(image, size)
        assert crop.shape == [2, 2, 3]
        assert run(crop).shape == (2, 2, 3)
    assert tf.random_crop(image, [2, 2, 3], name="rc").name == "rc:0"


def test_a_fetch_that_is_fed_runs_nothing():
    s = tf.placeholder(tf.string)
    # Every fetch is fed: nothing runs, so the value is not checked.
    with tf.Session() as sess:
        assert sess.run(s, {s: np.int64(3)}) == 3
        with pytest.raises(errors.InternalError, match="Unsupported object type numpy.int64"):
            sess.run(tf.identity(s), {s: np.int64(3)})


def test_variable_collections():
    v = tf.Variable([1, 2, 3])
    w = tf.Variable(2.5, name="w", trainable=False)
    u = tf.Variable(1, collections=[])
    loc = tf.Variable(0, collections=[tf.GraphKeys.LOCAL_VARIABLES])
    assert tf.global_variables() == [v, w]
    assert tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES) == [v, w]
    # Trainable variables join the trainable collection even with collections=[].
    assert tf.trainable_variables() == [v, u, loc]
    assert tf.local_variables() == [loc]
    tf.add_to_collection("mine", w)
    assert tf.get_collection("mine") == [w]
    with tf.Session() as s:
        s.run(tf.variables_initializer([v, u]))
        assert s.run(u) == 1
        np.testing.assert_array_equal(s.run(v), [1, 2, 3])


def test_variable_assign():
    v = tf.Variable([1, 2])
    a = v.assign([5, 6])
    p = tf.placeholder(tf.int32, [2])
    b = v.assign(p, read_value=False)
    assert a.shape == [2] and a.dtype == tf.int32 and isinstance(b, tf.Operation)
    with tf.Session() as s:
        np.testing.assert_array_equal(s.run(a), [5, 6])  # before the initializer: allowed
        s.run(v.initializer)
        np.testing.assert_array_equal(s.run(v), [1, 2])
        np.testing.assert_array_equal(s.run(a), [5, 6])
        np.testing.assert_array_equal(s.run(v), [5, 6])
        assert s.run(b, {p: [7, 8]}) is None
        np.testing.assert_array_equal(s.run(v), [7, 8])
    with pytest.raises(ValueError, match="Tensor conversion requested dtype int32"):
        v.assign(tf.constant([1.5, 2.5]))
    with pytest.raises(TypeError):
        v.assign([1.5, 2.5])
    with pytest.raises(ValueError):
        v.assign([1, 2, 3])


def test_random_crop_size_computed_when_run():
    image = tf.constant(np.arange(60, dtype=np.float32).reshape(4, 5, 3))
    p = tf.placeholder(tf.int32, [3])
    h = tf.placeholder(tf.int32, [])
    crop = tf.random_crop(image, p)
    # TensorFlow 2.21 (disable_v2_behavior): (?, ?, ?) for both.
    assert str(crop.shape) == "(?, ?, ?)"
    assert str(tf.random_crop(image, tf.placeholder(tf.int32)).shape) == "(?, ?, ?)"
    with tf.Session() as s:
        got = s.run(crop, {p: [2, 3, 3]})
        assert got.shape == (2, 3, 3)
        # A crop of the image: rows and columns consecutive, all channels.
        flat = got.reshape(-1, 3)
        assert (flat[:, 1] == flat[:, 0] + 1).all() and got[0, 1, 0] == got[0, 0, 0] + 3
        assert s.run(tf.random_crop(image, [h, 2, 3]), {h: 1}).shape == (1, 2, 3)
        with pytest.raises(errors.InvalidArgumentError):
            s.run(crop, {p: [5, 5, 3]})
    with pytest.raises(ValueError):
        tf.random_crop(image, tf.placeholder(tf.int64, [3]))
    with pytest.raises(ValueError):
        tf.random_crop(image, tf.placeholder(tf.int32, [2]))


def test_finalized_graph_refuses_new_operations():
    a = tf.constant([1, 2])
    init = tf.local_variables_initializer()
    g = tf.get_default_graph()
    g.finalize()
    assert g.finalized
    for build in [lambda: tf.constant(1), lambda: a + 1, tf.no_op, lambda: tf.group(a), lambda: tf.Variable(1),
                  lambda: tf.placeholder(tf.int32), tf.global_variables_initializer]:
        with pytest.raises(RuntimeError, match="Graph is finalized and cannot be modified."):
            build()
    with tf.Session() as s:
        s.run(init)
        np.testing.assert_array_equal(s.run("Const:0"), [1, 2])


def test_reset_default_graph_inside_a_graph_context():
    with tf.Graph().as_default():
        with pytest.raises(AssertionError, match="clear nested graphs"):
            tf.reset_default_graph()


def test_reader_read_names():
    fq = tf.train.string_input_producer(["a"])
    r = tf.TextLineReader()
    assert names(*r.read(fq)) == ["ReaderReadV2:0", "ReaderReadV2:1"]
    assert names(*r.read_up_to(fq, 2)) == ["ReaderReadUpToV2:0", "ReaderReadUpToV2:1"]
    assert names(*r.read(fq, name="rd")) == ["rd:0", "rd:1"]
    assert names(*r.read_up_to(fq, 2, name="ru")) == ["ru:0", "ru:1"]
    assert names(*tf.WholeFileReader().read(fq)) == ["ReaderReadV2_1:0", "ReaderReadV2_1:1"]


def test_name_scope_and_device():
    with tf.device("/cpu:0"), tf.name_scope("input") as sc:
        a = tf.constant(1.0)
        b = a + 1.0
        v = tf.Variable(1.0)
        p = tf.placeholder(tf.float32, name="p")
        fq = tf.train.string_input_producer(["a"], num_epochs=1)
        batch = tf.train.batch([tf.constant([1])], 1)
        init = tf.local_variables_initializer()
    assert sc == "input/"
    assert names(a, b, v, p, batch) == ["input/Const:0", "input/add:0", "input/Variable:0", "input/p:0", "input/batch:0"]
    assert v.initializer.name == "input/Variable/Assign"
    assert v.initial_value.name == "input/Variable/Initializer/initial_value:0"
    assert [fq.name, init.name, tf.constant(2).name] == ["input/input_producer", "input/init", "Const:0"]
    assert tf.get_default_graph().get_tensor_by_name("input/add/y:0").dtype == tf.float32
    got = []
    for _ in range(2):
        with tf.name_scope("input") as outer:
            with tf.name_scope("inner") as inner:
                got += [outer, inner, tf.constant(1).name]
    with tf.name_scope("input/") as again:
        got += [again, tf.constant(1).name]
        with tf.name_scope(None) as top:
            got += [top, tf.constant(1).name]
    with tf.name_scope(None, "dflt") as d:
        got.append(d)
    assert got == [
        "input_1/", "input_1/inner/", "input_1/inner/Const:0", "input_2/", "input_2/inner/", "input_2/inner/Const:0",
        "input/", "input/Const_2:0", "", "Const_1:0", "dflt/",
    ]
    with tf.Session() as s:
        assert s.run("input/add:0") == np.float32(2)
