"""compat.v1's static shapes as TensorFlow 1's: ``shape[i]`` a
``tf.Dimension`` printed ``?`` when unknown, unless the program asks for
TensorFlow 2's form (``tf.disable_eager_execution()`` without
``tf.disable_v2_behavior()``, or ``tf.enable_v2_tensorshape()``); and the
names of ``tf.cond``'s and ``tf.while_loop``'s outputs, which follow the
same switch. Every value here was observed under TensorFlow 2.21
(``import tensorflow.compat.v1 as tf; tf.disable_v2_behavior()``, or
``tf.disable_eager_execution()`` alone where the test says v2)."""

import pickle

import numpy as np
import pytest

import feedstock.compat.v1 as tf

Dimension = tf.Dimension


@pytest.fixture
def xs():
    """``x`` of shape (?, 4, 5), ``y`` of (2, 3), ``u`` of unknown rank."""
    return (
        tf.placeholder(tf.float32, [None, 4, 5]),
        tf.placeholder(tf.float32, [2, 3]),
        tf.placeholder(tf.float32),
    )


# ------------------------------------------------ printing (TF1 default)


def test_tensors_and_shapes_print_question_marks():
    # Observed under TensorFlow 2.21 (disable_v2_behavior).
    img = tf.image.decode_jpeg(tf.placeholder(tf.string, []), channels=3)
    assert str(img) == 'Tensor("DecodeJpeg:0", shape=(?, ?, 3), dtype=uint8)'
    assert str(img.shape) == "(?, ?, 3)"
    assert repr(img.shape) == "TensorShape([Dimension(None), Dimension(None), Dimension(3)])"
    assert str(tf.zeros([3]).shape) == "(3,)"
    assert repr(tf.zeros([3]).shape) == "TensorShape([Dimension(3)])"
    s = tf.constant(1.0)
    assert (str(s.shape), repr(s.shape)) == ("()", "TensorShape([])")
    u = tf.placeholder(tf.float32)
    assert (str(u.shape), repr(u.shape)) == ("<unknown>", "TensorShape(None)")
    assert str(tf.TensorShape([None])) == "(?,)"
    assert repr(tf.TensorShape([None])) == "TensorShape([Dimension(None)])"
    assert repr(tf.TensorShape([Dimension(3), None])) == "TensorShape([Dimension(3), Dimension(None)])"
    assert repr(tf.TensorShape(3)) == "TensorShape([Dimension(3)])"


# ------------------------------------------------ indexing, iteration


def test_indexing_gives_dimensions(xs):
    x, y, u = xs
    # Observed under TensorFlow 2.21 (disable_v2_behavior).
    assert repr(x.shape[0]) == "Dimension(None)" and str(x.shape[0]) == "?"
    assert repr(x.shape[1]) == "Dimension(4)" and str(x.shape[1]) == "4"
    assert x.get_shape()[1].value == 4 and x.shape[0].value is None
    assert x.shape[0] is not None
    assert repr(u.shape[0]) == "Dimension(None)"
    assert repr(x.shape[1:]) == "TensorShape([Dimension(4), Dimension(5)])" and str(x.shape[1:]) == "(4, 5)"
    assert isinstance(x.shape[1:], tf.TensorShape)
    assert repr(x.shape[::-1]) == "TensorShape([Dimension(5), Dimension(4), Dimension(None)])"
    assert repr(u.shape[1:]) == "TensorShape(None)"
    assert repr(u.shape[0:1]) == "TensorShape([Dimension(None)])"
    assert repr(list(x.shape)) == "[Dimension(None), Dimension(4), Dimension(5)]"
    assert repr(tuple(y.shape)) == "(Dimension(2), Dimension(3))"
    assert repr(x.shape.dims) == "[Dimension(None), Dimension(4), Dimension(5)]"
    assert u.shape.dims is None
    assert x.shape.as_list() == [None, 4, 5]
    assert (x.shape.ndims, x.shape.rank, len(x.shape)) == (3, 3, 3)
    assert f"{x.shape[0]}" == "?" and f"{y.shape[0]}" == "2" and "%d" % y.shape[0] == "2"
    with pytest.raises(ValueError, match="Cannot iterate over a shape with unknown rank."):
        list(u.shape)
    with pytest.raises(IndexError, match="list index out of range"):
        x.shape[5]
    with pytest.raises(TypeError, match="list indices must be integers or slices, not str"):
        x.shape["a"]
    # A scalar's shape is true, an unknown rank's false.
    assert bool(y.shape) and bool(tf.constant(1.0).shape) and not bool(u.shape)


def test_dims_are_dimensions_in_both_modes(xs):
    x, _, _ = xs
    tf.enable_v2_tensorshape()
    # Observed under TensorFlow 2.21 (disable_eager_execution only).
    assert repr(x.shape.dims) == "[Dimension(None), Dimension(4), Dimension(5)]"
    assert x.shape.dims[0].value is None


# ------------------------------------------------ the TF1 idioms


def test_tf1_idioms(xs):
    x, y, _ = xs
    # Observed under TensorFlow 2.21 (disable_v2_behavior).
    assert int(y.shape[0]) == 2 and float(y.shape[0]) == 2.0
    assert repr(x.shape[-1] * 2) == "Dimension(10)" and repr(2 * x.shape[-1]) == "Dimension(10)"
    assert repr(x.shape[0] * 2) == "Dimension(None)"
    assert repr(x.shape[1] * x.shape[2]) == "Dimension(20)"
    r = tf.reshape(x, [-1, x.shape[1] * x.shape[2]])
    assert str(r) == 'Tensor("Reshape:0", shape=(?, 20), dtype=float32)'
    assert str(tf.zeros([y.shape[0], 3]).shape) == "(2, 3)"
    assert list(range(y.shape[0])) == [0, 1]
    assert [1, 2, 3][y.shape[0]] == 3
    assert np.zeros([y.shape[0], 2]).shape == (2, 2) and np.zeros(y.shape).shape == (2, 3)
    assert str(tf.placeholder(tf.float32, [x.shape[0], y.shape[1]]).shape) == "(?, 3)"
    assert str(tf.placeholder(tf.float32, x.shape).shape) == "(?, 4, 5)"
    assert str(tf.ones(y.shape).shape) == "(2, 3)"
    assert str(tf.reshape(y, [y.shape[1], y.shape[0]]).shape) == "(3, 2)"
    assert str(tf.slice(y, [0, 0], [y.shape[0], 1]).shape) == "(2, 1)"
    assert str(tf.tile(y, [y.shape[0], 1]).shape) == "(4, 3)"
    assert str(tf.one_hot(tf.constant([0, 1]), y.shape[1]).shape) == "(2, 3)"
    assert str(tf.random_normal([y.shape[1], 3]).shape) == "(3, 3)"
    assert str(tf.range(y.shape[0]).shape) == "(2,)"
    assert str(tf.fill([y.shape[0]], 1.0).shape) == "(2,)"
    assert [str(t.shape) for t in tf.split(y, y.shape[1], 1)] == ["(2, 1)"] * 3
    assert str(tf.reduce_sum(x, axis=x.shape.ndims - 1).shape) == "(?, 4)"
    assert str(tf.reshape(x, [tf.shape(x)[0], x.shape[1] * x.shape[2]]).shape) == "(?, 20)"
    assert str(tf.stack([tf.shape(x)[0], x.shape[1]]).shape) == "(2,)"
    assert str(x[:, : x.shape[1] - 1].shape) == "(?, 3, 5)"
    assert str(x[:, y.shape[0]].shape) == "(?, 5)"
    assert str(tf.constant(0, shape=[y.shape[0], 2]).shape) == "(2, 2)"
    assert str(tf.add(y.shape[0], 1).shape) == "()"
    assert str(tf.sparse_to_dense([[0]], [y.shape[0]], 1).shape) == "(2,)"
    with tf.Session() as sess:
        assert sess.run(y.shape[0] + tf.constant(1)) == 3
        assert sess.run(tf.constant(1) + y.shape[0]) == 3
        assert sess.run(tf.maximum(y.shape[0], 1)) == 2
        assert sess.run(tf.cast(y.shape[0], tf.float32)) == 2.0


def test_tf1_idioms_that_fail(xs):
    x, y, _ = xs
    # Observed under TensorFlow 2.21 (disable_v2_behavior).
    with pytest.raises(TypeError, match=r"__int__ returned non-int \(type NoneType\)"):
        int(x.shape[0])
    with pytest.raises(TypeError, match=r"__index__ returned non-int \(type NoneType\)"):
        range(x.shape[0])
    with pytest.raises(TypeError, match=r"__int__ returned non-int \(type NoneType\)"):
        tf.zeros([x.shape[0], 3])
    with pytest.raises(TypeError, match=r"Failed to convert elements of \[Dimension\(None\), -1\] to Tensor"):
        tf.reshape(x, [x.shape[0], -1])
    # A Dimension is no value tf.constant infers a dtype from.
    with pytest.raises(TypeError, match="Failed to convert elements of 2 to Tensor. Consider casting"):
        tf.constant(y.shape[0])
    with pytest.raises(TypeError, match=r"Failed to convert elements of \[Dimension\(2\), 3\] to Tensor"):
        tf.constant([y.shape[0], 3])


# ------------------------------------------------ Dimension


def test_dimension_arithmetic():
    # Observed under TensorFlow 2.21 (disable_v2_behavior).
    d2, d3, d4, d6, d7, unknown = (Dimension(v) for v in (2, 3, 4, 6, 7, None))
    assert repr(d2 + d3) == "Dimension(5)" and repr(d3 - 1) == "Dimension(2)" and repr(5 - d2) == "Dimension(3)"
    assert repr(d3 // 2) == "Dimension(1)" and repr(7 // d3) == "Dimension(2)"
    assert repr(d3 % 2) == "Dimension(1)" and repr(7 % d3) == "Dimension(1)"
    assert repr(d3 * None) == "Dimension(None)"
    assert repr(unknown + 1) == "Dimension(None)" and repr(unknown // 2) == "Dimension(None)"
    assert repr(sum([d2, d3])) == "Dimension(5)" and repr(max(d3, 2)) == "Dimension(3)"
    assert repr(sorted([d3, d2])) == "[Dimension(2), Dimension(3)]"
    for f, message in [
        (lambda: d3 / 2, "unsupported operand type(s) for /: 'Dimension' and 'int', please use // instead"),
        (lambda: d6 / d4, "unsupported operand type(s) for /: 'Dimension' and 'Dimension', please use // instead"),
        (lambda: 6 / d4, "unsupported operand type(s) for /: 'int' and 'Dimension', please use // instead"),
        (lambda: d3 + "a", "unsupported operand type(s) for +: 'Dimension' and 'str'"),
        (lambda: d3 * 1.5, "unsupported operand type(s) for *: 'Dimension' and 'float'"),
        (lambda: d3**2, "unsupported operand type(s) for ** or pow(): 'Dimension' and 'int'"),
        (lambda: -d3, "bad operand type for unary -: 'Dimension'"),
        (lambda: hash(d3), "unhashable type: 'Dimension'"),
        (lambda: Dimension(3.5), "Dimension value must be integer or None or have an __index__ method, got "
                                 "value '3.5' with type '<class 'float'>'"),
    ]:
        with pytest.raises(TypeError) as e:
            f()
        assert str(e.value) == message
    with pytest.raises(ValueError, match="^Dimension -2 must be >= 0$"):
        d3 - 5
    with pytest.raises(ValueError, match="^Dimension -1 must be >= 0$"):
        Dimension(-1)
    assert d7.value == 7 and Dimension(np.int64(7)).value == 7 and Dimension(d7).value == 7


def test_dimension_comparisons():
    # Observed under TensorFlow 2.21 (disable_v2_behavior): unknown is
    # neither equal nor unequal (None).
    d3, unknown = Dimension(3), Dimension(None)
    assert (d3 == Dimension(3)) is True and (d3 == 3) is True and (d3 != 3) is False
    assert (unknown == 3) is None and (unknown != 3) is None
    assert (unknown == unknown) is None and (d3 == None) is None  # noqa: E711
    assert (d3 == "3") is False and (d3 == 3.0) is False and (d3 == 3.5) is False
    assert (d3 > 2) is True and (d3 >= 4) is False and (d3 <= unknown) is None and (unknown < 3) is None
    assert Dimension(2) in [2, 3]
    assert bool(d3) and not bool(unknown) and not bool(Dimension(0))
    assert d3.is_compatible_with(None) and d3.is_compatible_with(3) and not d3.is_compatible_with(4)
    assert repr(d3.merge_with(None)) == "Dimension(3)"
    with pytest.raises(ValueError, match="^Dimensions 3 and 4 are not compatible$"):
        d3.merge_with(4)
    assert pickle.loads(pickle.dumps(d3)).value == 3


def test_dimension_helpers(xs):
    _, y, _ = xs
    # Observed under TensorFlow 2.21 (disable_v2_behavior).
    assert tf.dimension_value(y.shape[0]) == 2 and tf.dimension_value(3) == 3
    assert repr(tf.dimension_at_index(y.shape, 0)) == "Dimension(2)"
    assert repr(tf.dimension_at_index(tf.TensorShape(None), 0)) == "Dimension(None)"


def test_dimensions_as_tensors(xs):
    x, y, _ = xs
    # Observed under TensorFlow 2.21 (disable_v2_behavior): known sizes
    # convert (int32 unless told int64), unknown ones and floats do not.
    t = tf.convert_to_tensor(y.shape[0])
    assert t.name == "shape_as_tensor:0" and t.dtype == tf.int32
    assert tf.convert_to_tensor(y.shape).name == "shape_as_tensor_1:0"
    assert str(tf.constant([y.shape[0]], dtype=tf.int64).shape) == "(1,)"
    with tf.Session() as sess:
        assert sess.run(t) == 2 and sess.run(tf.convert_to_tensor(y.shape)).tolist() == [2, 3]
    with pytest.raises(ValueError, match=r"^Cannot convert unknown Dimension \? to a Tensor.$"):
        tf.convert_to_tensor(x.shape[0])
    with pytest.raises(ValueError, match=r"^Cannot convert a partially known TensorShape \(\?, 4, 5\) to a Tensor.$"):
        tf.convert_to_tensor(x.shape)
    with pytest.raises(TypeError, match=r"Failed to convert elements of \[Dimension\(None\)\] to Tensor"):
        tf.convert_to_tensor([x.shape[0]])
    with pytest.raises(TypeError, match="Expected float32"):
        tf.constant([y.shape[0]], dtype=tf.float32)


# ------------------------------------------------ TensorShape


def test_tensorshape_equality_and_methods(xs):
    x, y, u = xs
    # Observed under TensorFlow 2.21 (disable_v2_behavior).
    assert y.shape == [2, 3] and y.shape == (2, 3) and y.shape == tf.TensorShape([2, 3])
    assert x.shape == [None, 4, 5] and x.shape == x.shape and not (x.shape != x.shape)
    assert u.shape == u.shape and u.shape == None  # noqa: E711
    assert (y.shape == "a") is False
    assert tf.TensorShape([None, 3]) == tf.TensorShape([None, 3])
    assert hash(tf.TensorShape([2, 3])) == hash(y.shape)
    assert y.shape.num_elements() == 6 and x.shape.num_elements() is None
    assert repr(x.shape.merge_with([1, None, 5])) == "TensorShape([Dimension(1), Dimension(4), Dimension(5)])"
    assert str(x.shape.concatenate([7])) == "(?, 4, 5, 7)" and str(x.shape + y.shape) == "(?, 4, 5, 2, 3)"
    assert x.shape.is_compatible_with([1, 4, 5]) and not x.shape.is_compatible_with([1, 4])
    assert str(x.shape.with_rank(3)) == "(?, 4, 5)"
    with pytest.raises(ValueError, match=r"^Shape \(\?, 4, 5\) must have rank 2$"):
        x.shape.with_rank(2)
    with pytest.raises(ValueError, match=r"^Shapes \(\?, 4, 5\) and \(1, 3, 5\) are not compatible$"):
        x.shape.merge_with([1, 3, 5])
    assert pickle.loads(pickle.dumps(x.shape)) == x.shape


# ------------------------------------------------ the switch


def test_disable_v2_behavior_keeps_tf1_shapes(xs):
    x, _, _ = xs
    tf.disable_eager_execution()
    tf.disable_v2_behavior()
    assert str(x.shape) == "(?, 4, 5)" and repr(x.shape[1]) == "Dimension(4)"


def test_disable_eager_execution_alone_gives_v2_shapes(xs):
    x, y, u = xs
    tf.disable_eager_execution()
    # Observed under TensorFlow 2.21 (disable_eager_execution only).
    assert str(x) == 'Tensor("Placeholder:0", shape=(None, 4, 5), dtype=float32)'
    assert repr(x.shape) == "TensorShape([None, 4, 5])" and repr(tf.zeros([3]).shape) == "TensorShape([3])"
    assert repr(u.shape) == "TensorShape(None)" and str(tf.TensorShape([None])) == "(None,)"
    assert x.shape[0] is None and x.shape[1] == 4 and list(x.shape) == [None, 4, 5]
    assert tuple(y.shape) == (2, 3) and u.shape[0] is None
    assert x.shape[-1] * 2 == 10 and y.shape[1] / 2 == 1.5
    assert repr(x.shape[1:]) == "TensorShape([4, 5])"
    with pytest.raises(AttributeError):
        x.get_shape()[1].value
    with pytest.raises(IndexError, match="tuple index out of range"):
        x.shape[5]
    assert str(tf.constant(y.shape[0]).shape) == "()"  # an int now
    # disable_v2_behavior afterwards still means TensorFlow 1.
    tf.disable_v2_behavior()
    assert str(x.shape) == "(?, 4, 5)"


def test_v2_tensorshape_switches_explicitly(xs):
    x, _, _ = xs
    tf.enable_v2_tensorshape()
    assert str(x.shape) == "(None, 4, 5)" and x.shape[1] == 4 and type(x.shape[1]) is int
    tf.disable_v2_tensorshape()
    assert str(x.shape) == "(?, 4, 5)"
    # disable_v2_behavior turns v2 tensorshape off, as TensorFlow's does.
    tf.enable_v2_tensorshape()
    tf.disable_v2_behavior()
    assert repr(x.shape[0]) == "Dimension(None)"


# ------------------------------------------------ control flow names


def _cond_and_loop_names():
    p = tf.placeholder(tf.bool, [])
    c = tf.cond(p, lambda: tf.constant(1), lambda: tf.constant(2))
    c2 = tf.cond(p, lambda: (tf.constant(1), tf.constant([1.0])), lambda: (tf.constant(2), tf.constant([2.0])))
    k = tf.case([(p, lambda: tf.constant(1))], default=lambda: tf.constant(2))
    w = tf.while_loop(lambda i, j: i < 3, lambda i, j: (i + 1, j * 2), [tf.constant(0), tf.constant(1.0)])
    w2 = tf.while_loop(lambda i: i < 3, lambda i: i + 1, [tf.constant(0)], maximum_iterations=2)
    with tf.Session() as sess:
        assert sess.run([c, k, w2], {p: True}) == [1, 1, 2]
    return [c.name, [t.name for t in c2], k.name, type(w).__name__, [t.name for t in w], w2.name]


def test_tf1_control_flow_names():
    # Observed under TensorFlow 2.21 (disable_v2_behavior): TensorFlow 1's
    # Merge and Exit, and the loop's result in the body's container.
    assert _cond_and_loop_names() == [
        "cond/Merge:0", ["cond_1/Merge:0", "cond_1/Merge_1:0"], "case/cond/Merge:0",
        "tuple", ["while/Exit:0", "while/Exit_1:0"], "while_1/Exit_1:0",
    ]


def test_v2_control_flow_names():
    tf.disable_eager_execution()
    # Observed under TensorFlow 2.21 (disable_eager_execution only):
    # Identity, and the loop's result in the loop variables' container.
    # (TensorFlow's loop outputs start at Identity_2, past its counters.)
    names = _cond_and_loop_names()
    assert names[:4] == [
        "cond/Identity:0", ["cond_1/Identity:0", "cond_1/Identity_1:0"], "case/cond/Identity:0", "list",
    ]
