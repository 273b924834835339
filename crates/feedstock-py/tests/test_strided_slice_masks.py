"""``tf.strided_slice`` with its masks, against values TensorFlow 2.21
gave for the same calls (graph mode, ``tensorflow.compat.v1``): static
shape, value shape, sum and first elements of each slice of a
``(2, 3, 4, 5)`` int32 ``arange``."""

import numpy as np
import pytest

import feedstock.compat.v1 as tf

X = np.arange(2 * 3 * 4 * 5, dtype=np.int32).reshape(2, 3, 4, 5)

# (call, static shape, shape, sum, first elements), as TensorFlow 2.21 gave them.
CASES = [
    (dict(begin=[0, 1], end=[0, 3], strides=[1, 1], begin_mask=1, end_mask=1),
     [2, 2, 4, 5], (2, 2, 4, 5), 5560, [20, 21, 22, 23, 24, 25]),
    (dict(begin=[1, 0, 2], end=[2, 0, 3], strides=[1, 1, 1], end_mask=2, shrink_axis_mask=4),
     [1, 3, 5], (1, 3, 5), 1380, [70, 71, 72, 73, 74, 90]),
    (dict(begin=[0, 1], end=[0, 2], strides=[1, 1], ellipsis_mask=1),
     [2, 3, 4, 1], (2, 3, 4, 1), 1404, [1, 6, 11, 16, 21, 26]),
    (dict(begin=[0, 0, 1], end=[0, 0, 3], strides=[1, 1, -1], begin_mask=3, end_mask=3, new_axis_mask=2),
     [2, 1, 0, 4, 5], (2, 1, 0, 4, 5), 0, []),
    (dict(begin=[-1, 0, 0, 4], end=[0, 0, 0, 0], strides=[-1, 2, 1, -2], begin_mask=14, end_mask=15),
     [2, 2, 4, 3], (2, 2, 4, 3), 2856, [64, 62, 60, 69, 67, 65]),
    (dict(begin=[1], end=[2], strides=[1], shrink_axis_mask=1),
     [3, 4, 5], (3, 4, 5), 5370, [60, 61, 62, 63, 64, 65]),
    (dict(begin=[0, 5], end=[1, 9], strides=[1, 1], ellipsis_mask=1),
     [2, 3, 4, 0], (2, 3, 4, 0), 0, []),
]


@pytest.mark.parametrize("call,static,shape,total,first", CASES)
def test_masks_slice_as_tensorflow(call, static, shape, total, first):
    with tf.Graph().as_default():
        out = tf.strided_slice(tf.constant(X), **call)
        assert out.shape.as_list() == static
        with tf.Session() as sess:
            v = sess.run(out)
    assert v.shape == shape
    assert int(v.sum()) == total
    assert v.ravel()[:6].tolist() == first


def test_masks_with_bounds_computed_when_run_are_refused():
    with tf.Graph().as_default():
        b = tf.placeholder(tf.int32, [1])
        with pytest.raises(NotImplementedError, match="masks"):
            tf.strided_slice(tf.constant(X), b, [2], begin_mask=1)


def test_strides_default_to_ones_like_a_begin_computed_when_run():
    # TensorFlow 2.21: static shape [None], value [2, 3, 4, 5, 6].
    with tf.Graph().as_default():
        b = tf.placeholder(tf.int32, [1])
        y = tf.strided_slice(tf.constant(np.arange(10, dtype=np.int32)), b, [7])
        assert y.shape.as_list() == [None]
        with tf.Session() as sess:
            assert sess.run(y, {b: [2]}).tolist() == [2, 3, 4, 5, 6]
