"""compat.v1's tf.random_normal and tf.truncated_normal: TensorFlow
2.21's names and build-time errors (observed there), the distribution
(feedstock's generator draws from TensorFlow's distribution, not its
values), and a seed that gives the same values in every session."""

import numpy as np
import pytest

import feedstock.compat.v1 as tf


def test_names_shapes_and_errors_as_tensorflow():
    g = tf.Graph()
    with g.as_default():
        got = [tf.random_normal([2, 3]), tf.truncated_normal([4], stddev=0.1, name="tn"),
               tf.random.normal([2], dtype=tf.float64), tf.random.truncated_normal([3])]
        assert [str(t) for t in got] == [
            'Tensor("random_normal:0", shape=(2, 3), dtype=float32)',
            'Tensor("tn:0", shape=(4,), dtype=float32)',
            'Tensor("random_normal_1:0", shape=(2,), dtype=float64)',
            'Tensor("truncated_normal:0", shape=(3,), dtype=float32)',
        ]
        with pytest.raises(TypeError, match="Expected int32, but got 0.0 of type 'float'."):
            tf.random_normal([2], dtype=tf.int32)


def test_the_distribution_and_the_truncation():
    with tf.Graph().as_default():
        normal = tf.random_normal([200_000], mean=3.0, stddev=2.0, seed=1)
        cut = tf.truncated_normal([200_000], mean=-1.0, stddev=0.5, seed=2)
        with tf.Session() as sess:
            a, b = sess.run([normal, cut])
    assert abs(a.mean() - 3.0) < 0.02 and abs(a.std() - 2.0) < 0.02
    assert (a < 3.0 - 4.0).any() and (a > 3.0 + 4.0).any()
    # Truncated at two standard deviations: its deviation is 0.8796 sigma.
    assert b.min() >= -2.0 and b.max() <= 0.0
    assert abs(b.mean() + 1.0) < 0.01 and abs(b.std() - 0.5 * 0.8796) < 0.01


def test_a_seed_gives_the_same_values_in_every_session_and_new_ones_each_run():
    def draw():
        with tf.Graph().as_default():
            x = tf.random_normal([5], seed=7)
            with tf.Session() as sess:
                return sess.run(x), sess.run(x)
    first, second = draw()
    again, _ = draw()
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, second)
