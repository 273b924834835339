"""compat.v1's exp, log, log1p, sigmoid, tanh, reciprocal, rsqrt and sign
against TensorFlow 2.21 (``tensorflow.compat.v1``, graph mode, x86-64
CPU build). TensorFlow computes the transcendental ones with Eigen's
vectorised approximations and feedstock with Rust's (libm's) functions:
special values agree exactly, others within a few ulp (the bound
docs/differences.md gives, measured over 300 000 inputs per op).
Subnormal inputs and outputs are flushed to zero, as TensorFlow's CPU
threads do."""

import math

import numpy as np
import pytest

import feedstock.compat.v1 as tf

# (inputs, TensorFlow 2.21's float32 outputs), observed there.
INF, NAN = math.inf, math.nan
TF_2_21 = {
    "exp": ([0.0, 1.0, -2.5, 10.0, 88.0, -103.0, -9.99994610111476e-41, INF, -INF, NAN],
            [1.0, 2.7182817459106445, 0.08208499848842621, 22026.46484375, 1.6516362661361307e+38, 0.0, 1.0, INF,
             0.0, NAN]),
    "log": ([1.0, 2.0, 0.5, 1000000.0, 0.0, -1.0, 9.99994610111476e-41, INF, NAN],
            [0.0, 0.6931471824645996, -0.6931471824645996, 13.815510749816895, -INF, NAN, -INF, INF, NAN]),
    "log1p": ([0.0, 9.999999747378752e-06, -0.5, 3.0, -1.0, -2.0, INF],
              [0.0, 9.999949725170154e-06, -0.6931471824645996, 1.3862943649291992, -INF, NAN, INF]),
    "sigmoid": ([0.0, 1.0, -4.0, 20.0, -90.0, INF, -INF],
                [0.5, 0.7310585975646973, 0.01798621006309986, 1.0, 0.0, 1.0, 0.0]),
    "tanh": ([0.0, 0.5, -3.0, 9.0, 9.99994610111476e-41, INF, -INF],
             [0.0, 0.46211713552474976, -0.9950547218322754, 1.0, 0.0, 1.0, -1.0]),
    "reciprocal": ([1.0, 3.0, -7.0, 0.0, -0.0, 9.99994610111476e-41, INF],
                   [1.0, 0.3333333432674408, -0.1428571492433548, INF, -INF, INF, 0.0]),
    "rsqrt": ([1.0, 4.0, 2.0, 0.0, -1.0, INF], [1.0, 0.5, 0.7071067690849304, INF, NAN, 0.0]),
    "sign": ([-2.0, -0.0, 0.0, 3.0, NAN, -INF], [-1.0, 0.0, 0.0, 1.0, NAN, -1.0]),
}
ULP_BOUND = 6


def ulps(a, b):
    ai = a.view(np.int32).astype(np.int64)
    bi = b.view(np.int32).astype(np.int64)
    return np.abs(ai - bi)


@pytest.mark.parametrize("op", sorted(TF_2_21))
def test_values_as_tensorflow_within_the_bound(op):
    xs, want = (np.array(v, np.float32) for v in TF_2_21[op])
    with tf.Session() as sess:
        got = sess.run(getattr(tf, op)(tf.constant(xs)))
    assert got.dtype == np.float32 and got.shape == xs.shape
    special = ~np.isfinite(want) | ~np.isfinite(xs) | (xs == 0) | (want == 0)
    np.testing.assert_array_equal(got[special], want[special])
    assert np.array_equal(np.signbit(got[want == 0]), np.signbit(want[want == 0]))
    assert ulps(got[~special], want[~special]).max(initial=0) <= ULP_BOUND


def test_integers_and_names():
    with tf.Session() as sess:
        assert sess.run(tf.sign(tf.constant([-3, 0, 5]))).tolist() == [-1, 0, 1]
        x = tf.constant([1.0, 2.0], tf.float64)
        assert tf.exp(x).name == "Exp:0" and tf.math.log(x, name="lg").name == "lg:0"
        assert sess.run(tf.math.log1p(x)).dtype == np.float64
    # As TensorFlow 2.21: exp of integers is a TypeError when built.
    with pytest.raises(TypeError):
        tf.exp(tf.constant([1, 2]))
