"""tf.range, tf.pad, tf.split, tf.unstack, tf.reverse, the logical ops,
reduce_any / reduce_all and tf.string_join in compat.v1; every
expectation was observed with TensorFlow 2.21 (graph mode)."""

import numpy as np
import pytest

import feedstock.compat.v1 as tf
from compat_support import run

X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


def test_range_as_tensorflow():
    p = tf.placeholder(tf.int32, [])
    got = run({"a": tf.range(2, 11, 3), "b": tf.range(10, 2, -3), "c": tf.range(0.0, 1.0, 0.1),
               "d": tf.range(3, 3), "e": tf.range(1, p, 2), "f": tf.range(1.5, 4)}, {p: 9})
    assert got["a"].tolist() == [2, 5, 8] and got["a"].dtype == np.int32
    assert got["b"].tolist() == [10, 7, 4]
    # start + i * delta in float32: 0.7 is float32(0.7), not seven sums.
    assert got["c"].tolist()[7] == float(np.float32(0.7)) and got["c"].dtype == np.float32
    assert got["d"].tolist() == [] and got["e"].tolist() == [1, 3, 5, 7]
    assert got["f"].tolist() == [1.5, 2.5, 3.5]
    assert tf.range(5, dtype=tf.int64).dtype == tf.int64
    with pytest.raises(ValueError, match="Requires start <= limit when delta > 0: 5/2"):
        tf.range(5, 2)
    with pytest.raises(ValueError, match="Requires delta != 0"):
        tf.range(0, 5, 0)


def test_logical_ops_and_any_all():
    b1, b2 = tf.constant([True, False, True, False]), tf.constant([True, True, False, False])
    bb = tf.constant([[True, False, True], [False, False, False]])
    got = run({
        "and": tf.logical_and(b1, b2), "or": tf.logical_or(b1, b2), "not": tf.logical_not(b1),
        "xor": tf.logical_xor(b1, b2), "bc": tf.logical_and(tf.constant([[True], [False]]), b1),
        "any": tf.reduce_any(bb), "any1": tf.reduce_any(bb, 1), "all0": tf.reduce_all(bb, 0, keepdims=True),
        "all_empty": tf.reduce_all(tf.zeros([0], tf.bool)),
    })
    assert got["and"].tolist() == [True, False, False, False]
    assert got["or"].tolist() == [True, True, True, False]
    assert got["not"].tolist() == [False, True, False, True]
    assert got["xor"].tolist() == [False, True, True, False]
    assert got["bc"].tolist() == [[True, False, True, False], [False] * 4]
    assert got["any"] == np.True_ and got["any1"].tolist() == [True, False]
    assert got["all0"].tolist() == [[False, False, False]] and got["all_empty"] == np.True_
    with pytest.raises(TypeError):
        tf.logical_and(tf.constant([1, 0]), tf.constant([1, 1]))


def test_string_join_and_reverse():
    s = tf.constant(["a", "b"])
    c = tf.constant(X)
    got = run({"j": tf.string_join([s, "x", tf.constant(["1", "2"])], separator="/"),
               "one": tf.string_join(["dir", tf.constant("f.png")], "/"),
               "r": tf.reverse(c, [1, -1]), "bgr": tf.reverse(c, axis=[-1])})
    assert got["j"].tolist() == [b"a/x/1", b"b/x/2"] and got["one"] == b"dir/f.png"
    np.testing.assert_array_equal(got["r"], X[:, ::-1, ::-1])
    np.testing.assert_array_equal(got["bgr"], X[..., ::-1])
    with pytest.raises(ValueError, match="specified more than once"):
        tf.reverse(c, [1, 1])


def test_unstack_and_split():
    c = tf.constant(X)
    q = tf.placeholder(tf.float32, [None, 3])
    parts = tf.split(c, [1, -1, 1], 2)
    assert [t.shape.as_list() for t in parts] == [[2, 3, 1], [2, 3, 2], [2, 3, 1]]
    assert [t.shape.as_list() for t in tf.unstack(q, axis=1)] == [[None]] * 3
    got = run({"u": tf.unstack(c, axis=-1), "s": tf.split(c, 2), "p": parts})
    for k in range(4):
        np.testing.assert_array_equal(got["u"][k], X[..., k])
    np.testing.assert_array_equal(got["s"][1], X[1:])
    np.testing.assert_array_equal(got["p"][1], X[..., 1:3])
    with pytest.raises(ValueError, match="Cannot infer argument `num`"):
        tf.unstack(q)
    with pytest.raises(ValueError, match="evenly divisible by 3 but is 4"):
        tf.split(c, 3, axis=2)
    with pytest.raises(ValueError, match=r"can't split axis of size 4 into pieces of size \[1,1\]"):
        tf.split(c, [1, 1], 2)


def test_pad_modes():
    c = tf.constant(X)
    q = tf.placeholder(tf.float32, [None, 3])
    pad = tf.pad(c, [[0, 1], [2, 0], [1, 1]])
    refl = tf.pad(c, [[1, 1], [2, 2], [3, 3]], "REFLECT")
    sym = tf.pad(c, [[2, 1], [3, 3], [4, 0]], "SYMMETRIC")
    assert pad.shape.as_list() == [3, 5, 6] and tf.pad(q, [[1, 0], [0, 2]]).shape.as_list() == [None, 5]
    got = run({"pad": pad, "refl": refl, "sym": sym,
               "v": tf.pad(tf.constant([[1, 2], [3, 4]], tf.uint8), [[1, 1], [1, 1]], mode="constant", constant_values=9)})
    np.testing.assert_array_equal(got["pad"], np.pad(X, [[0, 1], [2, 0], [1, 1]]))
    np.testing.assert_array_equal(got["refl"], np.pad(X, [[1, 1], [2, 2], [3, 3]], "reflect"))
    np.testing.assert_array_equal(got["sym"], np.pad(X, [[2, 1], [3, 3], [4, 0]], "symmetric"))
    assert got["v"].tolist() == [[9, 9, 9, 9], [9, 1, 2, 9], [9, 3, 4, 9], [9, 9, 9, 9]]
    with pytest.raises(ValueError, match="Paddings must be non-negative"):
        tf.pad(c, [[0, -1], [0, 0], [0, 0]])


def test_sign_is_nan_is_finite_squared_difference_div_no_nan():
    v = np.array([0.0, -0.0, 0.5, -2.0, np.inf, -np.inf, np.nan, 3e38], np.float32)
    c = tf.constant(v)
    fetch = {
        "sign": tf.sign(c), "sign_i": tf.sign(tf.constant([-3, 0, 5])), "nan": tf.is_nan(c), "fin": tf.is_finite(c),
        "sqd": tf.squared_difference(tf.constant([[1.0], [2.0]]), tf.constant([0.5, 3.0, 7.0])),
        "dnn": tf.div_no_nan(tf.constant([[1.0, 2.0], [3.0, 4.0]]), tf.constant([0.0, 255.0])),
    }
    assert {k: t.name for k, t in fetch.items() if k in ("sign", "nan", "sqd", "dnn")} == {
        "sign": "Sign:0", "nan": "IsNan:0", "sqd": "SquaredDifference:0", "dnn": "div_no_nan:0",
    }
    got = run(fetch)
    sign = got["sign"]
    assert sign[:6].tolist() == [0.0, 0.0, 1.0, -1.0, 1.0, -1.0] and np.isnan(sign[6]) and sign[7] == 1.0
    assert not np.signbit(sign[1])  # -0.0 gives 0.0
    assert got["sign_i"].tolist() == [-1, 0, 1]
    assert got["nan"].tolist() == [False] * 6 + [True, False]
    assert got["fin"].tolist() == [True] * 4 + [False] * 3 + [True]
    assert got["sqd"].tolist() == [[0.25, 4.0, 36.0], [2.25, 1.0, 25.0]]
    # A true division (by 255, not times its reciprocal), 0 where y is 0.
    assert got["dnn"].tolist() == [[0.0, float(np.float32(2) / np.float32(255))], [0.0, float(np.float32(4) / np.float32(255))]]
    with pytest.raises(TypeError):
        tf.is_nan(tf.constant([1, 2]))


def test_argmax_argmin_as_tensorflow():
    x = tf.constant([[1.0, 3.0, 3.0], [np.nan, 2.0, 5.0], [np.nan, np.nan, np.nan], [-np.inf, -np.inf, -1.0]])
    amax, amin = tf.argmax(x, 1), tf.argmin(x, 1)
    assert amax.name == "ArgMax:0" and amax.dtype == tf.int64 and amax.shape.as_list() == [4]
    got = run({
        "max": amax, "min": amin, "col": tf.argmax(x), "i32": tf.argmax(x, 0, output_type=tf.int32),
        "u8": tf.argmax(tf.constant([[1, 5, 5], [7, 0, 7]], tf.uint8), -1),
        "bool": tf.argmax(tf.constant([True, False, True])),
    })
    # The first of equal values; NaN never chosen (0 when all are NaN).
    assert got["max"].tolist() == [1, 2, 0, 2] and got["min"].tolist() == [0, 1, 0, 0]
    assert got["col"].tolist() == [0, 0, 1] and got["i32"].dtype == np.int32
    assert got["u8"].tolist() == [1, 0] and got["bool"] == 0
    with pytest.raises(ValueError, match=r"Dimension \(2\) must be in the range \[-2, 2\)"):
        tf.argmax(x, 2)
    with pytest.raises(TypeError):
        tf.argmax(tf.constant(["a"]), 0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Reduction axis 0 is empty in shape"):
        run(tf.argmax(tf.zeros([0, 3]), 0))


def test_map_fn_over_a_known_number_of_slices():
    imgs = (np.arange(2 * 4 * 4 * 3) % 251).astype(np.uint8).reshape(2, 4, 4, 3)
    c = tf.constant(imgs)
    std = tf.map_fn(lambda im: tf.image.per_image_standardization(im), c, dtype=tf.float32)
    pairs = tf.map_fn(lambda p: p[0] + p[1], (tf.constant([1, 2]), tf.constant([10, 20])), dtype=tf.int32)
    two = tf.map_fn(lambda x: (x, x * 2), tf.constant([1.0, 2.0]), dtype=(tf.float32, tf.float32))
    assert std.shape.as_list() == [2, 4, 4, 3] and isinstance(two, tuple)
    got = run({"std": std, "pairs": pairs, "two": two, "whole": tf.image.per_image_standardization(c[1])})
    # Each image standardized alone, as TensorFlow's loop does it.
    np.testing.assert_array_equal(got["std"][1], got["whole"])
    assert got["pairs"].tolist() == [11, 22]
    assert got["two"][1].tolist() == [2.0, 4.0]
    # (Over a first dimension known only when run: tests/test_cond.py.)


def test_sparse_tensors_from_parts_and_sparse_to_dense():
    sp = tf.SparseTensor(indices=[[0, 1], [2, 0]], values=[5, 6], dense_shape=[3, 2])
    dense = tf.sparse_tensor_to_dense(sp, default_value=-1)
    assert sp.dtype == tf.int32 and dense.shape.as_list() == [3, 2]
    s2d = tf.sparse_to_dense([[0, 0], [1, 2]], [2, 3], 9, default_value=-1)
    assert s2d.shape.as_list() == [2, 3]
    got = run({
        "dense": dense, "s2d": s2d, "vector": tf.sparse_to_dense([1, 3], [5], [7, 8]),
        "scalar": tf.sparse_to_dense(2, [4], 1.5),
        "unchecked": tf.sparse_to_dense([3, 1], [5], [7, 8], validate_indices=False),
    })
    assert got["dense"].tolist() == [[-1, 5], [-1, -1], [6, -1]]
    assert got["s2d"].tolist() == [[9, -1, -1], [-1, -1, 9]]
    assert got["vector"].tolist() == [0, 7, 0, 8, 0] and got["scalar"].tolist() == [0.0, 0.0, 1.5, 0.0]
    assert got["unchecked"].tolist() == [0, 8, 0, 7, 0]
    for indices, message in [
        ([[2, 0], [0, 1]], r"indices\[1\] = \[0,1\] is out of order"),
        ([[0, 1], [0, 1]], r"indices\[1\] = \[0,1\] is repeated"),
        ([[0, 1], [5, 1]], r"indices\[1\] = \[5,1\] is out of bounds: need 0 <= index < \[3,2\]"),
    ]:
        with pytest.raises(tf.errors.InvalidArgumentError, match=message):
            run(tf.sparse_tensor_to_dense(tf.SparseTensor(indices, [5, 6], [3, 2])))
