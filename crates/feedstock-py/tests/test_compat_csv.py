"""decode_csv's record defaults, options and refusals as TensorFlow 2.21
(tf.compat.v1) gives them: each expected value and error class here was
observed running the same code under TensorFlow."""

import numpy as np
import pytest

import feedstock.compat.v1 as tf
from compat_support import run


@pytest.mark.parametrize(
    "default, dtype, value",
    [
        ([], "float32", 5.0),  # a required column, float32 as TF converts []
        ([2**40], "int64", 5),  # a Python int too big for int32
        ([np.float64(0.1)], "float32", 5.0),  # numpy scalars in a list count as Python numbers
        ([np.int64(3)], "int32", 5),
        (np.float64(2.0), "float64", 5.0),  # a bare numpy scalar keeps its dtype
        (np.array([]), "float64", 5.0),  # an empty array keeps its dtype
        (np.array([], dtype=object), "string", b"5"),
        (np.array(2.5), "float64", 5.0),  # a 0-d array
        (tf.constant([], tf.int64), "int64", 5),
    ],
)
def test_record_default_dtypes_follow_tensorflows_conversion(default, dtype, value):
    (col,) = tf.decode_csv(tf.constant(["5"]), [default])
    assert col.dtype.name == dtype
    out = run(col)
    assert out.dtype == np.dtype(object if dtype == "string" else dtype)
    assert out.tolist() == [value]


def test_a_required_column_given_as_empty_list_fails_on_an_empty_field():
    cols = tf.decode_csv(tf.constant("1,"), [[], []])
    with pytest.raises(tf.errors.InvalidArgumentError):
        run(cols)


@pytest.mark.parametrize("default", [[1, 2], [1, 2.5], np.array([1, 2])])
def test_a_default_of_more_than_one_value_is_refused(default):
    with pytest.raises(ValueError, match="length-0 or length-1"):
        tf.decode_csv(tf.constant("5"), [default])


def test_a_default_of_rank_two_is_refused():
    with pytest.raises(ValueError, match="rank 2"):
        tf.decode_csv(tf.constant("5"), [tf.constant([[1]])])


@pytest.mark.parametrize("default", [[True], tf.constant([1], tf.uint8), np.int16(1)])
def test_a_default_of_an_unsupported_dtype_is_a_type_error(default):
    with pytest.raises(TypeError, match="not in list of allowed values"):
        tf.decode_csv(tf.constant("5"), [default])


def test_use_quote_delim_none_means_the_default():
    a, b = tf.decode_csv(tf.constant('"1",2'), [[0], [0]], use_quote_delim=None)
    assert run([a, b]) == [1, 2]
    with pytest.raises(TypeError, match="Expected bool"):
        tf.decode_csv(tf.constant("1"), [[0]], use_quote_delim=1)


def test_delimiter_and_na_value_may_be_bytes():
    a, b = tf.decode_csv(tf.constant("NA;2"), [[7], [0]], field_delim=b";", na_value=b"NA")
    assert run([a, b]) == [7, 2]


@pytest.mark.parametrize(
    "cols, error",
    [([1, 0], "strictly increasing"), ([1, 1], "strictly increasing"), ([-1], "negative"), ([0, 1, 2], "do not match")],
)
def test_select_cols_are_checked_when_built(cols, error):
    with pytest.raises(ValueError, match=error):
        tf.decode_csv(tf.constant("1,2,3"), [[0]] * (1 if cols == [-1] else 2), select_cols=cols)


def test_records_must_be_strings():
    with pytest.raises(TypeError, match="string"):
        tf.decode_csv(tf.constant(5), [[0]])


def test_mixed_numbers_in_a_constant_make_a_float_tensor():
    t = tf.constant([1, 2.5])
    assert t.dtype == tf.float32
    assert run(t).tolist() == [1.0, 2.5]
    assert tf.constant([True, 1]).dtype == tf.int32
    assert tf.constant([1, 2**40]).dtype == tf.int64
