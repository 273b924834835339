"""compat.v1 arithmetic, conversions, image ops and build-time error
classes as TensorFlow 2.21 (``tensorflow.compat.v1``, graph mode) behaves;
every expectation below was observed there."""

import pickle

import numpy as np
import pytest

import feedstock.compat.v1 as tf
from compat_support import run
from feedstock import errors


def same(got, want, dtype):
    got = np.asarray(got)
    assert got.dtype == np.dtype(dtype), got.dtype
    np.testing.assert_array_equal(got, np.asarray(want, dtype=dtype))


# ------------------------------------------------------------ division


INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


@pytest.mark.parametrize("dt", INTS)
def test_div_of_integers_floors_and_keeps_the_dtype(dt):
    t = tf.div(tf.constant([7, 0, 5], dt), tf.constant([2, 3, 1], dt))
    assert t.dtype == getattr(tf, dt)
    same(run(t), [3, 0, 5], dt)


@pytest.mark.parametrize("dt", INTS)
def test_truediv_of_integers_is_float32_or_float64(dt):
    want = "float32" if dt in ("int8", "int16", "uint8", "uint16") else "float64"
    t = tf.truediv(tf.constant([7], dt), tf.constant([2], dt))
    assert t.dtype == getattr(tf, want)
    same(run(t), [3.5], want)


def test_div_rounds_toward_negative_infinity():
    same(run(tf.div(tf.constant([7, -7, 0, 7, -7]), tf.constant([2, 2, 3, -2, -2]))), [3, -4, 0, -4, 3], "int32")
    assert run(tf.div(7, 2)) == 3
    same(run(tf.div(tf.constant([7.0, -7.0]), tf.constant([2.0, 2.0]))), [3.5, -3.5], "float32")


@pytest.mark.parametrize(
    "build",
    [
        lambda: tf.div(tf.constant([7]), tf.constant([0])),
        lambda: tf.div(tf.constant([7], tf.uint8), tf.constant([0], tf.uint8)),
        lambda: tf.constant([7]) // tf.constant([0]),
        lambda: tf.constant([7]) % tf.constant([0]),
    ],
)
def test_integer_division_by_zero_fails_when_run(build):
    t = build()
    with pytest.raises(errors.InvalidArgumentError, match="Integer division by zero") as e:
        run(t)
    # A run-time error keeps its plain class.
    assert type(e.value) is errors.InvalidArgumentError


def test_true_division_operators():
    c = tf.constant
    same(run(c([7, -7]) / c([2, 2])), [3.5, -3.5], "float64")
    same(run(c([7, -7, 0]) / c([0, 0, 0])), [np.inf, -np.inf, np.nan], "float64")
    same(run(c([7, -7]) / 2), [3.5, -3.5], "float64")
    same(run(7 / c([2, -2])), [3.5, -3.5], "float64")
    assert run(tf.divide(7, 2)) == 3.5


def test_floor_division_and_modulo_operators():
    c = tf.constant
    same(run(c([7, -7]) // c([2, 2])), [3, -4], "int32")
    same(run(7 // c([2, -2])), [3, -4], "int32")
    same(run(c([7.0, -7.0, 7.5]) // c([2.0, 2.0, -2.0])), [3, -4, -4], "float32")
    same(run(c([7.0, -7.0, 0.0]) // c([0.0, 0.0, 0.0])), [np.inf, -np.inf, np.nan], "float32")
    same(run(c([7, -7, 7, -7]) % c([2, 2, -2, -2])), [1, 1, -1, -1], "int32")
    same(run(7 % c([3, -3])), [1, -2], "int32")
    same(run(c([7.5, -7.5, 7.5, -7.5]) % c([2.0, 2.0, -2.0, -2.0])), [1.5, 0.5, -0.5, -1.5], "float32")
    z = run(c([7.5, -0.0]) % c([0.0, 2.0]))
    assert np.isnan(z[0]) and z[1] == 0 and np.signbit(z[1])
    same(run(c([7, 200], tf.uint8) % c([3, 7], tf.uint8)), [1, 4], "uint8")
    same(run(tf.mod(c([7, -7]), c([3, 3]))), [1, 2], "int32")
    same(run(tf.floormod(c([7, -7]), c([3, 3]))), [1, 2], "int32")
    same(run(tf.floordiv(c([7, -7]), c([3, 3]))), [2, -3], "int32")
    same(run(tf.floor_div(c([7, -7]), c([3, 3]))), [2, -3], "int32")
    same(run(tf.truncatediv(c([7, -7]), c([3, 3]))), [2, -2], "int32")
    same(run(c([-(2**31)]) // c([-1])), [-(2**31)], "int32")
    same(run(c([-(2**31)]) % c([-1])), [0], "int32")
    same(run(c([7.0, -7.0], tf.float16) // c([2.0, 2.0], tf.float16)), [3, -4], "float16")
    same(run(c([7.0, -7.0], tf.float16) % c([2.0, 2.0], tf.float16)), [1, 1], "float16")


@pytest.mark.parametrize(
    "build",
    [
        lambda: tf.truediv(tf.constant([7]), tf.constant([2.0])),
        lambda: tf.divide(tf.constant([7]), tf.constant([2.0])),
        lambda: tf.constant([7]) / tf.constant([2.0]),
        lambda: tf.constant([7.0]) / tf.constant([2.0], tf.float64),
        lambda: tf.constant([7]) // tf.constant([2.0]),
        lambda: tf.constant([7]) % tf.constant([2.0]),
        lambda: tf.constant([7]) + tf.constant([2.0]),
        lambda: tf.constant([7]) * tf.constant([2.0]),
        lambda: tf.constant([7]) - tf.constant([2.0]),
        lambda: tf.maximum(tf.constant([7]), tf.constant([2.0])),
        lambda: tf.constant([7]) + tf.constant([2], tf.int64),
    ],
)
def test_operands_of_different_dtypes_are_a_type_error(build):
    with pytest.raises(TypeError):
        build()


def test_div_of_different_dtypes_is_a_value_error():
    with pytest.raises(ValueError):
        tf.div(tf.constant([7]), tf.constant([2.0]))


# ------------------------------------------------------------ Python numbers


@pytest.mark.parametrize(
    "build, want, dtype",
    [
        (lambda: tf.constant([1, 2, 200], tf.uint8) + 300, [45, 46, 244], "uint8"),
        (lambda: tf.constant([1, 2, 200], tf.uint8) + -1, [0, 1, 199], "uint8"),
        (lambda: tf.constant([1, 2, 200], tf.uint8) * -1, [255, 254, 56], "uint8"),
        (lambda: 300 + tf.constant([1, 2, 200], tf.uint8), [45, 46, 244], "uint8"),
        (lambda: tf.constant([1]) + 2**31, [-(2**31) + 1], "int32"),
        (lambda: tf.constant([1]) + (2**32 + 5), [6], "int32"),
        (lambda: tf.constant([2**62], tf.int64) + (2**53 + 1), [4620693217682128897], "int64"),
        (lambda: tf.constant([1], tf.int64) + 2**63, [-(2**63) + 1], "int64"),
        (lambda: tf.constant([1], tf.uint64) + (2**64 - 1), [0], "uint64"),
        (lambda: tf.constant([1]) + np.float32(1.5), [2], "int32"),
        (lambda: tf.constant([1]) + np.int64(2**40), [1], "int32"),
        (lambda: tf.constant([1, 1]) + [1, 2**31], [2, -(2**31) + 1], "int32"),
        (lambda: tf.constant([1]) + True, [2], "int32"),
        (lambda: tf.constant([0.0]) + (2**24 + 1), [16777216.0], "float32"),
        (lambda: tf.constant([0.0], tf.float64) + (2**53 + 1), [2.0**53], "float64"),
        (lambda: tf.constant([1.0], tf.float16) + 70000, [np.inf], "float16"),
        (lambda: tf.maximum(tf.constant([7]), 2**31), [7], "int32"),
    ],
)
def test_python_numbers_convert_exactly_and_wrap(build, want, dtype):
    same(run(build()), want, dtype)


def test_a_python_int_beyond_64_bits_is_an_overflow_error():
    with pytest.raises(OverflowError):
        tf.constant([1], tf.int64) + 2**64


@pytest.mark.parametrize(
    "build",
    [
        lambda: tf.constant([1]) + 2.0,
        lambda: tf.constant([1]) + [1.5],
        lambda: tf.constant([1]) / 2.0,
        lambda: tf.constant([7]) // 2.0,
        lambda: tf.constant([7]) % 2.0,
        lambda: tf.maximum(tf.constant([7]), 2.5),
        lambda: tf.div(7, 2.0),
        lambda: tf.constant([True]) + 1,
    ],
)
def test_a_python_float_next_to_an_integer_tensor_is_a_type_error(build):
    with pytest.raises(TypeError):
        build()


# ------------------------------------------------------------ half precision


def test_float16_and_bfloat16_arithmetic_runs():
    h = lambda v: tf.constant(v, tf.float16)  # noqa: E731
    same(run(h([1.0, 2.0]) + h([1.0, 2.0])), [2, 4], "float16")
    same(run(h([1.0, 2.0]) - h([0.1, 2.0])), np.float16([1.0, 2.0]) - np.float16([0.1, 2.0]), "float16")
    same(run(h([1.1, 2.0]) * h([3.3, 2.0])), [3.629, 4], "float16")
    same(run(h([1.0, 2.0]) / h([3.0, 0.0])), [0.3333, np.inf], "float16")
    same(run(h([1.0, 2.0]) + 1), [2, 3], "float16")
    same(run(tf.maximum(h([1.0, 2.0]), h([3.0, 0.0]))), [3, 2], "float16")
    same(run(-h([1.0, 2.0])), [-1, -2], "float16")
    b = tf.constant([1.0, 2.0], tf.bfloat16) / tf.constant([3.0, 2.0], tf.bfloat16)
    got = run(b)
    assert got.dtype.name == "bfloat16"
    assert got.astype(np.float32).tolist() == [0.333984375, 1.0]


# ------------------------------------------------------------ images


def test_per_image_standardization_is_float32_when_run_too():
    for x in (np.ones((2, 2, 1)), np.ones((2, 2, 1), np.float16), np.ones((2, 2, 1), bool)):
        t = tf.image.per_image_standardization(x)
        assert t.dtype == tf.float32
        assert run(t).dtype == np.float32
    t = tf.image.per_image_standardization(np.ones((1, 2, 2, 2, 1), np.float32))
    assert t.shape.as_list() == [1, 2, 2, 2, 1]
    assert run(t).shape == (1, 2, 2, 2, 1)


def test_per_image_standardization_matches_tensorflow_bits():
    # TensorFlow's float32 reductions, reproduced: these are bit-exact.
    x = (np.arange(30, dtype=np.float32) * np.float32(0.37) - np.float32(1.1)).reshape(3, 5, 2)
    got = run(tf.image.per_image_standardization(x)).reshape(-1).view(np.uint32)
    assert [hex(v) for v in got[[0, 1, 14, 15, 29]]] == ["0xbfd66e7c", "0xbfc7a4a9", "0xbd6c9d0d", "0x3d6c9d5d", "0x3fd66e7d"]
    img = np.random.RandomState(5).randint(0, 256, (32, 32, 3)).astype(np.uint8)
    out = run(tf.image.per_image_standardization(img))
    assert out.dtype == np.float32
    bits = out.reshape(-1).view(np.uint32)
    assert bits[[0, 1, 3071]].tolist() == [3200275947, 1065969763, 1067560317]
    # Every element: the sum of the 3072 bit patterns TensorFlow gives.
    assert int(bits.astype(np.int64).sum()) == 6535329982725


def test_per_image_standardization_refuses_small_ranks_and_empty_images_when_built():
    with pytest.raises(ValueError):
        tf.image.per_image_standardization(np.zeros((5, 5)))
    with pytest.raises(ValueError):
        tf.image.per_image_standardization(np.zeros((0, 3, 3)))


def test_crop_to_bounding_box_takes_a_batch():
    im4 = np.arange(2 * 5 * 5).reshape(2, 5, 5, 1).astype(np.uint8)
    t = tf.image.crop_to_bounding_box(im4, 1, 1, 2, 2)
    assert t.shape.as_list() == [2, 2, 2, 1]
    np.testing.assert_array_equal(run(t), im4[:, 1:3, 1:3])
    p = tf.placeholder(tf.uint8, [None, None, None, 1])
    t = tf.image.crop_to_bounding_box(p, 1, 1, 2, 2)
    assert t.shape.as_list() == [None, 2, 2, 1]
    with tf.Session() as s:
        np.testing.assert_array_equal(s.run(t, {p: im4}), im4[:, 1:3, 1:3])
    q = tf.placeholder(tf.uint8, [2, None, 5, 3])
    assert tf.image.crop_to_bounding_box(q, 1, 1, 2, 2).shape.as_list() == [2, 2, 2, 3]


@pytest.mark.parametrize(
    "box",
    [(1, 1, 5, 2), (-1, 1, 2, 2), (1, -1, 2, 2), (1, 1, 0, 2), (1, 1, 2, 0)],
)
@pytest.mark.parametrize("shape", [(5, 5, 1), (2, 5, 5, 1)])
def test_bad_boxes_are_value_errors_when_built(box, shape):
    with pytest.raises(ValueError):
        tf.image.crop_to_bounding_box(np.zeros(shape, np.uint8), *box)


def test_a_box_outside_an_image_of_unknown_size_fails_when_run():
    p = tf.placeholder(tf.uint8, [None, None, None, 1])
    t = tf.image.crop_to_bounding_box(p, 1, 1, 5, 2)
    with tf.Session() as s, pytest.raises(errors.InvalidArgumentError):
        s.run(t, {p: np.zeros((2, 5, 5, 1), np.uint8)})


@pytest.mark.parametrize(
    "build",
    [
        lambda: tf.image.crop_to_bounding_box(np.zeros((5, 5)), 1, 1, 2, 2),
        lambda: tf.image.crop_to_bounding_box(np.zeros((1, 1, 5, 5, 1)), 1, 1, 2, 2),
        lambda: tf.image.flip_left_right(np.zeros((5, 5))),
        lambda: tf.image.flip_up_down(np.zeros((1, 1, 5, 5, 1))),
        lambda: tf.image.flip_up_down(np.zeros((0, 5, 1))),
        lambda: tf.random_crop(np.zeros((5, 5, 1)), [2, 2]),
    ],
)
def test_image_shape_refusals_are_value_errors(build):
    with pytest.raises(ValueError):
        build()


def test_flips_take_a_batch():
    im4 = np.arange(2 * 3 * 3).reshape(2, 3, 3, 1).astype(np.uint8)
    np.testing.assert_array_equal(run(tf.image.flip_up_down(im4)), im4[:, ::-1])
    np.testing.assert_array_equal(run(tf.image.flip_left_right(im4)), im4[:, :, ::-1])


# ------------------------------------------------------------ build-time error classes


@pytest.mark.parametrize(
    "build",
    [
        lambda: tf.reshape(tf.constant([1, 2, 3]), [2]),
        lambda: tf.transpose(tf.constant([[1]]), [0]),
        lambda: tf.constant([1, 2, 3]) + tf.constant([1, 2]),
        lambda: tf.image.flip_left_right(np.zeros((5, 5))),
    ],
)
def test_shape_refusals_are_value_errors_and_invalid_argument(build):
    with pytest.raises(ValueError) as e:
        build()
    assert isinstance(e.value, errors.InvalidArgumentError)
    assert not isinstance(e.value, TypeError)
    assert e.value.error_code == errors.INVALID_ARGUMENT


@pytest.mark.parametrize(
    "build",
    [
        lambda: tf.concat([tf.constant([1]), tf.constant([1.0])], 0),
        lambda: tf.stack([tf.constant([1]), tf.constant([1.0])], 0),
        lambda: tf.decode_raw(tf.constant(["ab"]), tf.string),
        lambda: tf.decode_raw(tf.constant([1]), tf.uint8),
        lambda: -tf.constant([1], tf.uint8),
        lambda: tf.maximum(tf.constant(["a"]), tf.constant(["b"])),
        lambda: tf.constant([True]) + tf.constant([True]),
    ],
)
def test_dtype_refusals_are_type_errors_and_invalid_argument(build):
    with pytest.raises(TypeError) as e:
        build()
    assert isinstance(e.value, errors.InvalidArgumentError)
    assert not isinstance(e.value, ValueError)


def test_decode_csv_of_numbers_is_a_type_error():
    with pytest.raises(TypeError):
        tf.decode_csv(tf.constant([1]), [[1]])


def test_parse_spec_of_an_unsupported_dtype_is_a_type_error():
    with pytest.raises(TypeError):
        tf.parse_single_example(tf.constant(""), {"a": tf.FixedLenFeature([], tf.int32)})
    with pytest.raises(TypeError):
        tf.parse_single_example(tf.constant(""), {"a": tf.VarLenFeature(tf.int32)})


def test_build_errors_pickle_and_keep_their_message():
    with pytest.raises(ValueError) as e:
        tf.reshape(tf.constant([1, 2, 3]), [2])
    back = pickle.loads(pickle.dumps(e.value))
    assert type(back) is type(e.value)
    assert str(back) == str(e.value)


def test_transpose_takes_negative_axes_and_slice_refuses_negative_sizes():
    x = tf.constant(np.arange(24, dtype=np.int32).reshape(2, 3, 4))
    with tf.Session() as s:
        assert s.run(tf.transpose(x, [-1, 0, 1])).shape == (4, 2, 3)
    # TensorFlow: only -1 means "to the end".
    with pytest.raises(ValueError):
        tf.slice(x, [0, 0, 0], [1, -2, 1])


def test_shapes_and_dtypes_print_as_tensorflows():
    # TensorFlow 2.21 (disable_v2_behavior); the v2 forms are pinned in
    # test_compat_tensorshape_tf.py.
    assert str(tf.TensorShape([None, 2])) == "(?, 2)"
    assert str(tf.TensorShape([3])) == "(3,)"
    assert str(tf.TensorShape(None)) == "<unknown>"
    assert repr(tf.TensorShape([None, 2])) == "TensorShape([Dimension(None), Dimension(2)])"
    assert str(tf.float32) == "<dtype: 'float32'>" and repr(tf.float32) == "tf.float32"


def test_numpy_scalars_before_a_tensor_convert_as_tensorflow():
    t = tf.constant([1, 2, 3])
    with tf.Session() as s:
        # numpy defers to the tensor: the scalar is cast to int32 (0.1 -> 0).
        assert s.run(np.float64(0.1) + t).tolist() == [1, 2, 3]
        assert s.run(np.int64(2) * t).tolist() == [2, 4, 6]
        assert s.run(tf.constant(2**63)).item() == 2**63
    assert tf.constant(2**63).dtype == tf.uint64
    with pytest.raises(ValueError, match="None"):
        tf.convert_to_tensor(None)


def test_maximum_and_minimum_keep_the_first_of_two_signed_zeros():
    x = tf.constant([-0.0, 0.0])
    y = tf.constant([0.0, -0.0])
    with tf.Session() as s:
        for op in (tf.maximum, tf.minimum):
            assert np.signbit(s.run(op(x, y))).tolist() == [True, False]


def test_constant_with_a_dtype_converts_as_tensorflow():
    with tf.Session() as s:
        # Python ints wrap into the dtype (TensorFlow 2.21's results).
        got = s.run([tf.constant(-1, dtype=tf.uint8), tf.constant(300, dtype=tf.uint8),
                     tf.constant(2**31, dtype=tf.int32)])
        assert [int(v) for v in got] == [255, 44, -(2**31)]
    for value, dtype in [(1.5, tf.int32), (1.0, tf.int32), (1, tf.bool), ("a", tf.int32), ([1.0, 2.0], tf.int64)]:
        with pytest.raises(TypeError):
            tf.constant(value, dtype=dtype)


def test_constant_fills_its_shape_as_tensorflow_1():
    with tf.Session() as s:
        # TensorFlow 2.21's tf.compat.v1.constant results.
        assert s.run(tf.constant([1, 2], shape=[4])).tolist() == [1, 2, 2, 2]
        assert s.run(tf.constant([], shape=[2])).tolist() == [0.0, 0.0]
        assert s.run(tf.constant([1.5, 2], shape=[3, 2])).tolist() == [[1.5, 2.0], [2.0, 2.0], [2.0, 2.0]]
        assert s.run(tf.constant([[1, 2], [3, 4]], shape=[4])).tolist() == [1, 2, 3, 4]
        assert s.run(tf.constant(7, shape=[2, 2])).tolist() == [[7, 7], [7, 7]]
    with pytest.raises(ValueError, match="Too many elements"):
        tf.constant([1, 2, 3, 4, 5], shape=[4])
    with pytest.raises(ValueError):
        tf.constant([1, 2, 3], shape=[-1])
    with pytest.raises(TypeError, match="Expected Tensor's shape"):
        tf.constant([1, 2], shape=[3], verify_shape=True)


def test_stack_of_nothing_is_an_empty_float_vector():
    t = tf.stack([])
    assert t.dtype == tf.float32
    with tf.Session() as s:
        assert s.run(t).shape == (0,)


def test_clip_by_value_as_tensorflow():
    x = tf.placeholder(tf.float32, [None, 3])
    c = tf.clip_by_value(x, 0.2, 0.8)
    assert c.name == "clip_by_value:0" and c.shape.as_list() == [None, 3]
    assert tf.clip_by_value(tf.constant([1, 5, 9]), 2, 6).dtype == tf.int32
    with pytest.raises(ValueError, match=r"Shapes \(2,\) and \(2, 2\) are incompatible"):
        tf.clip_by_value(tf.constant([1.0, 2.0]), [[0.0, 0.1], [0.2, 0.3]], 1.0)
    with tf.Session() as sess:
        got = sess.run(tf.clip_by_value(tf.constant([np.nan, -1.0, 0.5, 3.0]), 0.0, 1.0))
        np.testing.assert_array_equal(got, [np.nan, 0.0, 0.5, 1.0])
        got = sess.run(tf.clip_by_value(tf.constant([[1.0, 5.0], [9.0, -2.0]]), [0.0, 2.0], [3.0, 4.0]))
        np.testing.assert_array_equal(got, [[1.0, 4.0], [3.0, 2.0]])


def test_a_name_scope_given_as_a_name_names_the_op_itself():
    # `with tf.name_scope(...) as scope: op(..., name=scope)`: the op
    # takes the scope's name, not a name under it.
    x = tf.constant([1.0])
    with tf.name_scope("outer"):
        with tf.name_scope("inner") as scope:
            assert tf.add(x, 1.0, name=scope).name == "outer/inner:0"
    assert tf.identity(x, name="b/").name == "b:0"
    assert tf.cast(x, tf.int32, name="c/").name == "c:0"


def test_set_random_seed_makes_a_program_repeat_its_draws():
    def draws(graph_seed, op_seed=None):
        with tf.Graph().as_default():
            tf.set_random_seed(graph_seed)
            a = tf.random_uniform([4], seed=op_seed)
            b = tf.random_uniform([4])
            with tf.Session() as sess:
                return [v.tolist() for v in sess.run([a, b])]

    # A graph seed: every op repeats, as in TensorFlow.
    assert draws(1) == draws(1)
    assert draws(1) != draws(2)
    # An op seed alone: that op repeats, the others do not.
    first, second = draws(None, 3), draws(None, 3)
    assert first[0] == second[0] and first[1] != second[1]
