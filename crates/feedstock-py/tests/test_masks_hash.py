"""``tf.string_to_hash_bucket_fast`` (``tf.strings.to_hash_bucket_fast``),
``tf.sequence_mask`` and ``tf.boolean_mask`` as TensorFlow 2.21
(``tensorflow.compat.v1``, graph mode) behaves: every value, dtype,
static shape, node name and error below was observed there."""

import re

import numpy as np
import pytest

import feedstock.compat.v1 as tf
from compat_support import run

# ------------------------------------------------------------ hash buckets

# Empty, short, the lengths where farmhash changes method (32, 64, 128:
# the `farmhash` crate's Fingerprint64 is wrong at 128 and 256), every
# byte value, long, and UTF-8.
STRINGS = [
    b"",
    b"a",
    b"hello world",
    b"q" * 32,
    b"e" * 64,
    b"x" * 128,
    bytes(range(256)),
    b"0123456789" * 100,
    "h\u00e9llo w\u00f6rld".encode(),
]
# TensorFlow's StringToHashBucketFast of STRINGS: Fingerprint64 modulo
# 2**63 - 1, and modulo 10.
MAX_BUCKETS = [
    1936946117179621456,
    3694432073954588132,
    6381520714923946011,
    1941001213046687810,
    4428901352157416282,
    5868382771906808855,
    5291657088564336415,
    6263194838949673994,
    9001971122424596627,
]
TEN_BUCKETS = [3, 9, 1, 7, 9, 5, 5, 1, 7]


def test_hash_buckets_are_fingerprint64_modulo_the_count():
    x = tf.constant(np.array(STRINGS, dtype=object))
    h = tf.string_to_hash_bucket_fast(x, 2**63 - 1)
    ten = tf.strings.to_hash_bucket_fast(x, 10, name="ten")
    assert (h.name, h.dtype, h.shape.as_list()) == ("StringToHashBucketFast:0", tf.int64, [9])
    assert ten.name == "ten:0"
    got, got_ten = run([h, ten])
    assert got.dtype == np.int64
    assert got.tolist() == MAX_BUCKETS
    assert got_ten.tolist() == TEN_BUCKETS
    assert tf.strings.to_hash_bucket_fast is tf.string_to_hash_bucket_fast


def test_hash_bucket_shapes_and_bucket_counts():
    grid = tf.string_to_hash_bucket_fast([["a", "b"], ["c", "d"]], 3)
    assert grid.name == "StringToHashBucketFast:0"
    assert grid.shape.as_list() == [2, 2]
    assert tf.string_to_hash_bucket_fast("abc", 5).shape.as_list() == []
    assert tf.string_to_hash_bucket_fast(tf.placeholder(tf.string), 3).shape.ndims is None
    assert tf.string_to_hash_bucket_fast(tf.placeholder(tf.string, [None, 2]), 3).shape.as_list() == [None, 2]
    ab = tf.constant(["a", "b"])
    # A float count is truncated, as TensorFlow's make_int does.
    got = run([grid, tf.string_to_hash_bucket_fast(ab, 2.5), tf.string_to_hash_bucket_fast(ab, np.int64(5))])
    assert got[0].tolist() == [[0, 1], [1, 2]]
    assert got[1].tolist() == [1, 0]
    assert got[2].tolist() == [4, 2]


@pytest.mark.parametrize("args, error, message", [
    ((tf.constant, 3), TypeError,
     "Input 'input' of 'StringToHashBucketFast' Op has type int32 that does not match expected type of string."),
    (([1, 2], 3), TypeError,
     "Expected string passed to parameter 'input' of op 'StringToHashBucketFast', got [1, 2] of type 'list' instead."),
    # The count's type is checked before the input, its value after.
    (([1, 2], None), TypeError, "Expected int for argument 'num_buckets' not None."),
    ((tf.constant, None), TypeError, "Expected int for argument 'num_buckets' not None."),
    ((tf.constant, 0), TypeError,
     "Input 'input' of 'StringToHashBucketFast' Op has type int32 that does not match expected type of string."),
    ((None, 3), ValueError, "Tried to convert 'input' to a tensor and failed. Error: None values not supported."),
    (("a", 0), ValueError, "Attr 'num_buckets' of 'StringToHashBucketFast' Op passed 0 less than minimum 1."),
    (("a", -1), ValueError, "Attr 'num_buckets' of 'StringToHashBucketFast' Op passed -1 less than minimum 1."),
    (("a", 2**63), ValueError, "Value out of range: 9223372036854775808"),
    (("a", "3"), TypeError, "Expected int for argument 'num_buckets' not '3'."),
    (("a", None), TypeError, "Expected int for argument 'num_buckets' not None."),
    (("a", [3]), TypeError, "Expected int for argument 'num_buckets' not [3]."),
])
def test_hash_bucket_errors(args, error, message):
    if args[0] is tf.constant:
        args = (tf.constant([1, 2]), args[1])
    with pytest.raises(error, match=re.escape(message)):
        tf.string_to_hash_bucket_fast(*args)


def test_hash_bucket_refuses_a_tensor_count_and_a_sparse_input():
    with pytest.raises(TypeError, match=r"Expected int for argument 'num_buckets' not <tf.Tensor 'Const(_\d+)?:0' "
                                        r"shape=\(\) dtype=int32>\."):
        tf.string_to_hash_bucket_fast("a", tf.constant(3))
    sp = tf.SparseTensor([[0]], ["a"], [1])
    with pytest.raises(TypeError, match="Expected string passed to parameter 'input' of op 'StringToHashBucketFast', "
                                        "got "):
        tf.string_to_hash_bucket_fast(sp, 7)


# ----------------------------------------------------------- sequence_mask

T, F = True, False


@pytest.mark.parametrize("args, kwargs, name, shape, dtype, want", [
    (([1, 3, 0, 2],), {}, "SequenceMask/Less:0", [4, 3], np.bool_,
     [[T, F, F], [T, T, T], [F, F, F], [T, T, F]]),
    (([1, 3, 0, 2], 5), {}, "SequenceMask/Less:0", [4, 5], np.bool_,
     [[T, F, F, F, F], [T, T, T, F, F], [F, F, F, F, F], [T, T, F, F, F]]),
    (([[1, 3], [0, 2]], 3), {"dtype": "float32"}, "SequenceMask/Cast_1:0", [2, 2, 3], np.float32,
     [[[1, 0, 0], [1, 1, 1]], [[0, 0, 0], [1, 1, 0]]]),
    ((("int64", [1, 3]), ("int64", 4)), {"dtype": "int32"}, "SequenceMask/Cast_1:0", [2, 4], np.int32,
     [[1, 0, 0, 0], [1, 1, 1, 0]]),
    (([1, 3], ("int64", 4)), {}, "SequenceMask/Less:0", [2, 4], np.bool_, [[T, F, F, F], [T, T, T, F]]),
    (([-1, 2], 3), {}, "SequenceMask/Less:0", [2, 3], np.bool_, [[F, F, F], [T, T, F]]),
    (([-1, -2],), {}, "SequenceMask/Less:0", [2, 0], np.bool_, [[], []]),
    (([], 2), {}, "SequenceMask/Less:0", [0, 2], np.bool_, []),
    ((3, 4), {}, "SequenceMask/Less:0", [4], np.bool_, [T, T, T, F]),
    ((3,), {}, "SequenceMask/Less:0", [3], np.bool_, [T, T, T]),
    (([1, 2], 0), {}, "SequenceMask/Less:0", [2, 0], np.bool_, [[], []]),
    # Float lengths are cast to the int maxlen's dtype (truncated).
    (([1.5, 2.0], 3), {}, "SequenceMask/Less:0", [2, 3], np.bool_, [[T, F, F], [T, T, F]]),
    (([1.5, 0.2], 3), {}, "SequenceMask/Less:0", [2, 3], np.bool_, [[T, F, F], [F, F, F]]),
    # A float maxlen (given, or the largest float length) counts to its
    # ceiling and compares in floats.
    (([1, 2], 3.0), {}, "SequenceMask/Less:0", [2, 3], np.bool_, [[T, F, F], [T, T, F]]),
    (([1.5, 2.5],), {}, "SequenceMask/Less:0", [2, 3], np.bool_, [[T, T, F], [T, T, T]]),
    (([1, 2], 3), {"dtype": "uint8"}, "SequenceMask/Cast_1:0", [2, 3], np.uint8, [[1, 0, 0], [1, 1, 0]]),
    (([1, 2], 3), {"dtype": "float64", "name": "sm"}, "sm/Cast_1:0", [2, 3], np.float64,
     [[1, 0, 0], [1, 1, 0]]),
    (([T], 3), {}, "SequenceMask/Less:0", [1, 3], np.bool_, [[T, F, F]]),
    ((("uint8", [1, 2]), 3), {}, "SequenceMask/Less:0", [2, 3], np.bool_, [[T, F, F], [T, T, F]]),
    ((("int16", [1, 2]), 3), {}, "SequenceMask/Less:0", [2, 3], np.bool_, [[T, F, F], [T, T, F]]),
])
def test_sequence_mask(args, kwargs, name, shape, dtype, want):
    args = [tf.constant(a[1], dtype=a[0]) if isinstance(a, tuple) else a for a in args]
    m = tf.sequence_mask(*args, **kwargs)
    assert (m.name, m.shape.as_list()) == (name, shape)
    got = run(m)
    assert got.dtype == dtype
    assert got.tolist() == want


def test_sequence_mask_static_shapes():
    def shape(lengths, *maxlen):
        return tf.sequence_mask(lengths, *maxlen).shape

    assert shape(tf.placeholder(tf.int32, [None, 2]), 3).as_list() == [None, 2, 3]
    assert shape(tf.placeholder(tf.int32), 3).ndims is None
    assert shape(tf.placeholder(tf.int32, [4])).as_list() == [4, None]
    assert shape([1, 2], tf.placeholder(tf.int32, [])).as_list() == [2, None]
    assert shape([1, 2], tf.placeholder(tf.int32)).as_list() == [2, None]
    assert shape(tf.constant([1.5], tf.float64), 2.5).as_list() == [1, 3]


def test_sequence_mask_computed_when_run():
    lengths = tf.placeholder(tf.float32, [None])
    maxlen = tf.placeholder(tf.int32, [])
    by_lengths = tf.sequence_mask(lengths)
    assert run(by_lengths, {lengths: [1.5, 0.2]}).tolist() == [[T, T], [T, F]]
    assert run(by_lengths, {lengths: [-1.5]}).shape == (1, 0)
    by_maxlen = tf.sequence_mask([1, 2], maxlen)
    assert run(by_maxlen, {maxlen: 3}).tolist() == [[T, F, F], [T, T, F]]
    with pytest.raises(tf.errors.InvalidArgumentError, match=re.escape("Requires start <= limit when delta > 0: 0/-1")):
        run(by_maxlen, {maxlen: -1})


ALLOWED_MAX = ("float32, float64, int32, uint8, int16, int8, int64, bfloat16, uint16, float16, uint32, uint64, qint8, "
               "quint8, qint32, qint16, quint16")
ALLOWED_RANGE = "bfloat16, float16, float32, float64, int8, int16, int32, int64, uint16, uint32, uint64"


@pytest.mark.parametrize("args, error, message", [
    (([1, 2], -1), ValueError, "Requires start <= limit when delta > 0: 0/-1"),
    (([1], ("float32", -1.5)), ValueError, "Requires start <= limit when delta > 0: 0/-1.5"),
    (([1, 2], [3]), ValueError,
     "Argument `maxlen` must be scalar for sequence_mask, received `maxlen` = "
     "Tensor(\"SequenceMask/Const_1:0\", shape=(1,), dtype=int32) with shape '(1,)' instead"),
    (([T],), TypeError, f"Value passed to parameter 'input' has DataType bool not in list of allowed values: "
                        f"{ALLOWED_MAX}"),
    ((["a"],), TypeError, f"Value passed to parameter 'input' has DataType string not in list of allowed values: "
                          f"{ALLOWED_MAX}"),
    (([1], ("uint8", 3)), TypeError, f"Value passed to parameter 'start' has DataType uint8 not in list of allowed "
                                     f"values: {ALLOWED_RANGE}"),
    ((("uint8", [1, 2]),), TypeError, f"Value passed to parameter 'start' has DataType uint8 not in list of allowed "
                                      f"values: {ALLOWED_RANGE}"),
])
def test_sequence_mask_errors_while_building(args, error, message):
    args = [tf.constant(a[1], dtype=a[0]) if isinstance(a, tuple) else a for a in args]
    with pytest.raises(error, match=re.escape(message)):
        tf.sequence_mask(*args)


@pytest.mark.parametrize("dtype", ["int8", "int16", "uint16", "uint32", "uint64"])
def test_sequence_mask_in_a_dtype_range_has_no_kernel_for_fails_when_run(dtype):
    # TensorFlow builds it, with its static shape, and has no CPU kernel
    # of Range for the dtype.
    m = tf.sequence_mask([1, 2], tf.constant(3, dtype))
    assert m.shape.as_list() == [2, 3]
    message = f"No OpKernel was registered to support Op 'Range' used by {{{{node SequenceMask/Range}}}} with these "
    message += f"attrs: [Tidx=DT_{dtype.upper()}]"
    with pytest.raises(tf.errors.InvalidArgumentError, match=re.escape(message)):
        run(m)


def test_sequence_mask_uncastable_values_fail_when_run():
    # TensorFlow builds these and fails casting when run.
    strings = tf.sequence_mask(["a"], 3)
    assert strings.shape.as_list() == [1, 3]
    with pytest.raises(tf.errors.UnimplementedError):
        run(strings)
    to_strings = tf.sequence_mask([1, 2], 3, dtype=tf.string)
    assert (to_strings.name, to_strings.dtype) == ("SequenceMask_1/Cast_1:0", tf.string)
    with pytest.raises(tf.errors.UnimplementedError):
        run(to_strings)


# ------------------------------------------------------------ boolean_mask

CUBE = np.arange(24).reshape(2, 3, 4)


@pytest.mark.parametrize("args, kwargs, shape, want", [
    (([1, 2, 3], [T, F, T]), {}, [None], [1, 3]),
    ((CUBE, [T, F]), {}, [None, 3, 4], CUBE[:1].tolist()),
    ((CUBE, [[T, F, T], [F, F, T]]), {}, [None, 4], [CUBE[0, 0].tolist(), CUBE[0, 2].tolist(), CUBE[1, 2].tolist()]),
    ((CUBE, [T, F, T]), {"axis": 1}, [2, None, 4], CUBE[:, [0, 2]].tolist()),
    ((CUBE, [[T, F, T, F]] * 3), {"axis": 1}, [2, None], CUBE[:, :, ::2].reshape(2, 6).tolist()),
    ((CUBE, np.ones((2, 3, 4), bool)), {}, [None], list(range(24))),
    # Nonzero numbers count as true.
    ((CUBE, [1, 0]), {}, [None, 3, 4], CUBE[:1].tolist()),
    ((CUBE, [0.5, 0.0]), {}, [None, 3, 4], CUBE[:1].tolist()),
    ((CUBE, [T] * 4), {"axis": ("int32", 2)}, [2, 3, None], CUBE.tolist()),
    ((["a", "b"], [F, T]), {}, [None], [b"b"]),
    ((CUBE, [F, F]), {}, [None, 3, 4], []),
    (([[1.5, 2.5]], [[T, F]]), {}, [None], [1.5]),
])
def test_boolean_mask(args, kwargs, shape, want):
    kwargs = {k: tf.constant(v[1], dtype=v[0]) if isinstance(v, tuple) else v for k, v in kwargs.items()}
    m = tf.boolean_mask(*args, **kwargs)
    assert (m.name, m.shape.as_list()) == ("boolean_mask/GatherV2:0", shape)
    assert run(m).tolist() == want


def test_boolean_mask_static_shapes_and_dtype():
    def mask(t_shape, m_shape, **kw):
        return tf.boolean_mask(tf.placeholder(tf.float32, t_shape), tf.placeholder(tf.bool, m_shape), **kw)

    assert mask([None, 3], [None]).shape.as_list() == [None, 3]
    assert mask([None, 3, 5], [None, 3]).shape.as_list() == [None, 5]
    assert mask([None, None, 5], [None, None]).shape.as_list() == [None, 5]
    assert mask(None, [None]).shape.ndims is None
    assert mask(None, [2, 3], axis=1).shape.ndims is None
    named = mask([2, 3], [None], name="bm")
    assert (named.name, named.shape.as_list(), named.dtype) == ("bm/GatherV2:0", [None, 3], tf.float32)
    assert tf.boolean_mask(CUBE, [T, F]).dtype == tf.int64


ALLOWED_WHERE = ("float32, float64, int32, uint8, int16, int8, complex64, int64, qint8, quint8, qint32, bfloat16, "
                 "qint16, quint16, uint16, complex128, float16, uint32, uint64, bool")


@pytest.mark.parametrize("args, kwargs, error, message", [
    ((CUBE, [T, F, T, T]), {"axis": -1}, ValueError, "Shapes () and (4,) are incompatible"),
    ((CUBE, [T, F, T]), {}, ValueError, "Shapes (2,) and (3,) are incompatible"),
    ((CUBE, T), {}, ValueError, "mask cannot be scalar."),
    ((CUBE, [T, F]), {"axis": 3}, ValueError, "Shapes () and (2,) are incompatible"),
    ((CUBE, [T, F]), {"axis": -4}, ValueError, "Shapes () and (2,) are incompatible"),
    ((5, [T]), {}, ValueError, "Shapes () and (1,) are incompatible"),
    ((CUBE, "unknown"), {}, ValueError,
     "Number of mask dimensions must be specified, even if some dimensions are None.  E.g. shape=[None] is ok, "
     "but shape=None is not."),
    ((CUBE, ["a", "b"]), {}, TypeError,
     f"Value passed to parameter 'input' has DataType string not in list of allowed values: {ALLOWED_WHERE}"),
])
def test_boolean_mask_errors_while_building(args, kwargs, error, message):
    if isinstance(args[1], str) and args[1] == "unknown":
        args = (args[0], tf.placeholder(tf.bool))
    with pytest.raises(error, match=re.escape(message)):
        tf.boolean_mask(*args, **kwargs)


def test_boolean_mask_checks_only_the_true_positions_when_run():
    mask = tf.placeholder(tf.bool, [None])
    m = tf.boolean_mask(CUBE, mask)
    # A mask shorter than the axis is taken as it is; a true position past
    # it fails as TensorFlow's gather does.
    assert run(m, {mask: [T]}).tolist() == CUBE[:1].tolist()
    with pytest.raises(tf.errors.InvalidArgumentError, match=re.escape("indices[1] = 2 is not in [0, 2)")):
        run(m, {mask: [T, F, T]})
    with pytest.raises(tf.errors.InvalidArgumentError, match=re.escape("indices[0] = 4 is not in [0, 2)")):
        run(m, {mask: [F, F, F, F, T]})

