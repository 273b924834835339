"""Sizes and arguments at the edges, as TensorFlow 2.21
(``tensorflow.compat.v1``, graph mode) takes them; every expectation
below was observed there (issue 33, items 6 and 10).

The calls whose output memory cannot hold run in a child process, so
that an abort (SIGABRT) fails the test instead of killing pytest."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import feedstock.compat.v1 as tf
from compat_support import run


def child(body):
    """Runs ``body`` (after the compat.v1 import) in a new interpreter;
    its exit status and its output."""
    script = "import feedstock.compat.v1 as tf\nfrom feedstock import errors\n" + textwrap.dedent(body)
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)


# TensorFlow builds these (the static shapes are known) and fails when
# run: ResourceExhaustedError, "OOM when allocating tensor with
# shape[...]".
@pytest.mark.parametrize(
    ("expr", "shape"),
    [
        ("tf.tile(tf.constant([1.0]), [2**40])", "1099511627776"),
        ("tf.tile([[1.0]], [2**20, 2**20])", "1048576,1048576"),
        ("tf.one_hot(tf.zeros([2**20], tf.int32), 2**20)", "1048576,1048576"),
        ("tf.fill([2**40], 1.0)", "1099511627776"),
        ("tf.zeros([2**40])", "1099511627776"),
    ],
)
def test_an_output_memory_cannot_hold_is_resource_exhausted(expr, shape):
    done = child(
        f"""
        t = {expr}
        print("static", t.shape.as_list())
        try:
            with tf.Session() as s:
                s.run(t)
        except tf.errors.ResourceExhaustedError as e:
            print("caught ResourceExhaustedError", e.message)
        """
    )
    assert done.returncode == 0, done
    want = [int(d) for d in shape.split(",")]
    assert f"static {want}" in done.stdout, done
    assert "caught ResourceExhaustedError" in done.stdout, done
    assert f"OOM when allocating tensor with shape[{shape}]" in done.stdout, done


def test_one_hot_takes_its_depth_as_int32():
    # depth is an int32 input: 2**40 wraps to 0, as TensorFlow converts
    # it, and the output is empty; 2**31 wraps negative and is refused
    # while building.
    t = tf.one_hot([1], 2**40)
    assert t.shape.as_list() == [1, 0]
    assert run(t).shape == (1, 0)
    with pytest.raises(ValueError, match="must be non-negative but is -2147483648"):
        tf.one_hot([1], 2**31)
    with pytest.raises(TypeError, match="Input 'depth' of 'OneHot' Op has type int64 that does not match expected type of int32"):
        tf.one_hot([1], tf.constant(2**40, tf.int64))


def test_cast_to_no_dtype_is_a_type_error():
    x = tf.constant([1])
    with pytest.raises(TypeError, match=r"Cannot convert the argument `type_value`: None to a TensorFlow DType\."):
        tf.cast(x, None)
    with pytest.raises(TypeError, match=r"Cannot convert the argument `type_value`: 'foo' to a TensorFlow DType\."):
        tf.cast(x, "foo")


def test_a_queue_without_dtypes_is_refused():
    with pytest.raises(AssertionError):
        tf.FIFOQueue(3, None)
    with pytest.raises(TypeError, match="Expected DataType for argument 'component_types' not None."):
        tf.FIFOQueue(3, [None])


def test_py_func_needs_a_callable():
    with pytest.raises(ValueError, match=r"Expected func to be callable. Received func=None of type <class 'NoneType'>\."):
        tf.py_func(None, [tf.constant(1)], tf.int64)
    with pytest.raises(ValueError, match=r"Expected func to be callable. Received func=1 of type <class 'int'>\."):
        tf.py_func(1, [tf.constant(1)], tf.int64)


def test_an_int_constant_wraps_to_its_dtype():
    # compat.v1's graph-mode constant keeps the low bits, as numpy's
    # conversion of a C long does.
    got = run([
        tf.constant(2**40 + 7, dtype=tf.int32),
        tf.constant([1, 2**40], dtype=tf.int32),
        tf.constant(-1, dtype=tf.uint8),
        tf.constant(300, dtype=tf.uint8),
        tf.constant(True, dtype=tf.int32),
    ])
    assert [np.asarray(v).tolist() for v in got] == [7, [1, 0], 255, 44, 1]
    # Past a C long (int64) the conversion fails.
    with pytest.raises(OverflowError, match="Python int too large to convert to C long"):
        tf.constant(2**64 + 1, dtype=tf.int64)
    with pytest.raises(TypeError, match="Expected int32, but got 2.5 of type 'float'."):
        tf.constant(2.5, dtype=tf.int32)
