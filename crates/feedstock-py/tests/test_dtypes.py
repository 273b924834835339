"""float16, bfloat16 and complex tensors through a graph: fed with
``feed_dict``, made by casts and ``decode_raw``, fetched as numpy arrays
of the matching dtype (bfloat16 as ``ml_dtypes.bfloat16``)."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import feedstock as fs
import feedstock.compat.v1 as tf

ml_dtypes = pytest.importorskip("ml_dtypes")


@pytest.mark.parametrize(
    "dtype, value",
    [
        (tf.float16, np.array([0.5, -1.25, 2048.0], np.float16)),
        (tf.bfloat16, np.array([0.5, -1.25, 2.0**100], ml_dtypes.bfloat16)),
        (tf.complex64, np.array([1 + 1j, -2.5j, 7], np.complex64)),
        (tf.complex128, np.array([1e-200 + 1j, -2.5j, 7], np.complex128)),
    ],
)
def test_placeholder_feeds_and_fetches(dtype, value):
    x = tf.placeholder(dtype, shape=[3])
    assert x.dtype == dtype and x.dtype.as_numpy_dtype == value.dtype.type
    y = tf.identity(x)
    with tf.Session() as sess:
        got = sess.run(y, feed_dict={x: value})
    assert got.dtype == value.dtype
    assert got.tobytes() == value.tobytes()


def test_casts_round_to_nearest_even_in_the_graph():
    # bfloat16 values next to 1 are 2**-7 apart: 1 + 2**-8 and
    # 1 + 3 * 2**-8 are midpoints, and ties go to the even significand
    # (1 and 1 + 2**-6), as TensorFlow's cast rounds. float16 holds all
    # four exactly.
    x = tf.constant(np.array([1.0, 1.0 + 2.0**-8, 1.0 + 3 * 2.0**-8, 3.0], np.float32))
    b = tf.cast(x, tf.bfloat16)
    h = tf.cast(x, tf.float16)
    c = tf.cast(x, tf.complex64)
    with tf.Session() as sess:
        vb, vh, vc = sess.run([b, h, c])
    assert vb.dtype == ml_dtypes.bfloat16 and vh.dtype == np.float16 and vc.dtype == np.complex64
    np.testing.assert_array_equal(vb.astype(np.float32), [1.0, 1.0, 1.0 + 4 * 2.0**-8, 3.0])
    np.testing.assert_array_equal(vh, np.array([1.0, 1.0 + 2.0**-8, 1.0 + 3 * 2.0**-8, 3.0], np.float16))
    np.testing.assert_array_equal(vc, [1.0, 1.0 + 2.0**-8, 1.0 + 3 * 2.0**-8, 3.0])


@pytest.mark.parametrize("dtype", [tf.float16, tf.bfloat16, tf.complex64, tf.complex128])
def test_decode_raw_gives_the_dtype(dtype):
    want = np.array([1.5, -2.0, 0.25], dtype.as_numpy_dtype)
    raw = tf.placeholder(tf.string, shape=[])
    out = tf.decode_raw(raw, dtype)
    with tf.Session() as sess:
        got = sess.run(out, feed_dict={raw: want.tobytes()})
    assert got.dtype == want.dtype and got.tobytes() == want.tobytes()


def test_constants_of_the_new_dtypes():
    assert tf.constant(1 + 2j).dtype == tf.complex128
    c = tf.constant([1.0, 2.0], dtype=fs.bfloat16)
    with tf.Session() as sess:
        got = sess.run(c)
    assert got.dtype == ml_dtypes.bfloat16 and got.tolist() == [1.0, 2.0]


def test_bfloat16_without_ml_dtypes_is_a_clear_import_error():
    """Without ml_dtypes a bfloat16 fetch or feed raises ImportError
    naming the package (never raw uint16 bits that read as wrong
    numbers); other dtypes are unaffected."""
    script = textwrap.dedent(
        """
        import sys
        sys.modules["ml_dtypes"] = None  # as if not installed
        import numpy as np
        import feedstock.compat.v1 as tf
        x = tf.constant(np.array([1.5], np.float32))
        with tf.Session() as sess:
            assert sess.run(tf.cast(x, tf.float16)).tolist() == [1.5]
            for attempt in ("fetch", "feed"):
                try:
                    if attempt == "fetch":
                        sess.run(tf.cast(x, tf.bfloat16))
                    else:
                        p = tf.placeholder(tf.bfloat16, shape=[1])
                        sess.run(tf.cast(p, tf.float32), feed_dict={p: [1.0]})
                except ImportError as e:
                    assert "ml_dtypes" in str(e), e
                    print(attempt, "ImportError")
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:2] == ["fetch ImportError", "feed ImportError"]
