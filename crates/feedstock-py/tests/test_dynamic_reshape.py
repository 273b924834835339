"""tf.reshape to a shape computed when run: the TFRecord tutorials'
``tf.reshape(image, tf.stack([height, width, 3]))`` of parsed sizes.
Every static shape, value and error here was observed with TensorFlow
2.21.0 (graph mode, ``tensorflow.compat.v1``) on the same inputs."""

import numpy as np
import pytest

import feedstock.compat.v1 as tf
from compat_support import drain, run

DATA = bytes(range(24))


def _image():
    raw = tf.placeholder(tf.string, [])
    h = tf.placeholder(tf.int64, [])
    w = tf.placeholder(tf.int64, [])
    return raw, h, w, tf.decode_raw(raw, tf.uint8)


def test_static_shapes_as_tensorflow_infers_them():
    raw, h, w, img = _image()
    assert img.shape.as_list() == [None]
    assert tf.reshape(img, tf.stack([h, w, 3])).shape.as_list() == [None, None, 3]
    hc, wc = tf.cast(h, tf.int32), tf.cast(w, tf.int32)
    assert tf.reshape(img, tf.stack([hc, wc, 3])).shape.as_list() == [None, None, 3]
    # A list holding tensors is packed, its Python numbers in the
    # tensors' dtype.
    assert tf.reshape(img, [h, w, 3]).shape.as_list() == [None, None, 3]
    assert tf.reshape(img, tf.stack([-1, w, 3])).shape.as_list() == [None, None, 3]
    assert tf.reshape(img, tf.stack([h, -2, 3])).shape.as_list() == [None, None, 3]
    # Only the vector's length is known.
    sv = tf.placeholder(tf.int32, [3])
    assert tf.reshape(img, sv).shape.as_list() == [None, None, None]
    assert tf.reshape(img, tf.placeholder(tf.int32, [None])).shape.ndims is None
    assert tf.reshape(img, tf.concat([[h], [w, 3]], 0)).shape.as_list() == [None, None, 3]
    # A fully known input gives the one unknown dimension.
    x = tf.zeros([6, 4])
    assert tf.reshape(x, tf.stack([h, 4])).shape.as_list() == [6, 4]
    assert tf.reshape(x, tf.stack([h, w])).shape.as_list() == [None, None]
    # tf.shape of a tensor of known dimensions counts as known.
    assert tf.reshape(x, tf.shape(tf.placeholder(tf.float32, [None, 8]))).shape.as_list() == [3, 8]


def test_downstream_ops_see_the_inferred_shape():
    raw, h, w, img = _image()
    image = tf.reshape(img, tf.stack([h, w, 3]))
    scaled = tf.cast(image, tf.float32) * 2.0
    assert scaled.shape.as_list() == [None, None, 3]
    assert tf.shape(image).shape.as_list() == [3]
    assert image[:, :, 0].shape.as_list() == [None, None]


def test_build_errors_as_tensorflow():
    raw, h, w, img = _image()
    x = tf.zeros([6, 4])
    with pytest.raises(ValueError, match=r"Dimension size must be evenly divisible by 5 but is 24"):
        tf.reshape(x, tf.stack([5, tf.cast(h, tf.int32)]))
    with pytest.raises(ValueError, match=r"Dimension size must be evenly divisible by 5 but is 24"):
        tf.reshape(x, tf.stack([h, 5]))
    with pytest.raises(TypeError, match="DataType float32 not in list of allowed values: int32, int64"):
        tf.reshape(img, tf.placeholder(tf.float32, [3]))
    with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 2"):
        tf.reshape(img, tf.placeholder(tf.int32, [2, 2]))


def test_values_and_run_errors_as_tensorflow():
    raw, h, w, img = _image()
    r1 = tf.reshape(img, tf.stack([h, w, 3]))
    r4 = tf.reshape(img, tf.stack([-1, w, 3]))
    sv = tf.placeholder(tf.int32, [3])
    r3 = tf.reshape(img, sv)
    s64 = tf.placeholder(tf.int64, [2])
    r64 = tf.reshape(img, s64)
    with tf.Session() as sess:
        got = sess.run(r1, {raw: DATA, h: 2, w: 4})
        np.testing.assert_array_equal(got, np.arange(24, dtype=np.uint8).reshape(2, 4, 3))
        assert got[1, 3].tolist() == [21, 22, 23]
        assert sess.run(r4, {raw: DATA, h: 0, w: 4}).shape == (2, 4, 3)
        assert sess.run(r64, {raw: DATA, s64: [4, 6]}).shape == (4, 6)
        assert sess.run(r3, {raw: b"", sv: [0, -1, 3]}).shape == (0, 0, 3)
        cases = [
            (r1, {raw: DATA, h: 2, w: 3},
             "Input to reshape is a tensor with 24 values, but the requested shape has 18"),
            (r4, {raw: DATA, h: 0, w: 3},
             "Input to reshape is a tensor with 24 values, but the requested shape requires a multiple of 9"),
            (r4, {raw: DATA, h: 0, w: 5},
             "Input to reshape is a tensor with 24 values, but the requested shape requires a multiple of 15"),
            (r3, {raw: DATA, sv: [-1, -1, 3]}, "Only one input size may be -1, not both 0 and 1"),
            (r3, {raw: DATA, sv: [2, -2, 3]}, "Size 1 must be non-negative, not -2"),
            (r3, {raw: DATA, sv: [0, -1, 3]},
             "Input to reshape is a tensor with 24 values, but the requested shape has 0"),
        ]
        for fetch, feed, msg in cases:
            with pytest.raises(tf.errors.InvalidArgumentError, match=msg):
                sess.run(fetch, feed)


def _records(tmp_path, sizes):
    path = str(tmp_path / "images.tfrecord")
    with tf.python_io.TFRecordWriter(path) as wr:
        for k, (hh, ww) in enumerate(sizes):
            pixels = bytes((k * 7 + i) % 256 for i in range(hh * ww * 3))
            ex = tf.train.Example(features=tf.train.Features(feature={
                "image_raw": tf.train.Feature(bytes_list=tf.train.BytesList(value=[pixels])),
                "height": tf.train.Feature(int64_list=tf.train.Int64List(value=[hh])),
                "width": tf.train.Feature(int64_list=tf.train.Int64List(value=[ww])),
            }))
            wr.write(ex.SerializeToString())
    return path


def _decoded(path, num_epochs=1):
    q = tf.train.string_input_producer([path], num_epochs=num_epochs, shuffle=False)
    _, serialized = tf.TFRecordReader().read(q)
    f = tf.parse_single_example(serialized, {
        "image_raw": tf.FixedLenFeature([], tf.string),
        "height": tf.FixedLenFeature([], tf.int64),
        "width": tf.FixedLenFeature([], tf.int64),
    })
    image = tf.decode_raw(f["image_raw"], tf.uint8)
    return tf.reshape(image, tf.stack([f["height"], f["width"], 3])), f


def test_the_tfrecord_tutorial_idiom_decodes_each_record(tmp_path):
    path = _records(tmp_path, [(2, 3), (1, 4)])
    image, f = _decoded(path)
    assert image.shape.as_list() == [None, None, 3]
    got = drain(image)
    assert [g.shape for g in got] == [(2, 3, 3), (1, 4, 3)]
    assert got[1].reshape(-1).tolist() == [(7 + i) % 256 for i in range(12)]


def test_shuffle_batch_needs_shapes_or_set_shape_as_in_tensorflow(tmp_path):
    path = _records(tmp_path, [(2, 4)] * 4)
    image, _ = _decoded(path, num_epochs=None)
    label = tf.constant(1)
    with pytest.raises(ValueError, match=r"All shapes must be fully defined: \[TensorShape\(\[None, None, 3\]\), "
                                         r"TensorShape\(\[\]\)\]"):
        tf.train.shuffle_batch([image, label], batch_size=2, capacity=10, min_after_dequeue=2)
    with pytest.raises(ValueError, match="All shapes must be fully defined"):
        tf.train.batch([image, label], batch_size=2)
    b = tf.train.batch([image, label], batch_size=2, dynamic_pad=True)
    assert [t.shape.as_list() for t in b] == [[2, None, None, 3], [2]]
    given = tf.train.shuffle_batch([image, label], batch_size=2, capacity=10, min_after_dequeue=2,
                                   shapes=[[2, 4, 3], []])
    assert [t.shape.as_list() for t in given] == [[2, 2, 4, 3], [2]]
    set_ = tf.reshape(tf.decode_raw(tf.constant(DATA), tf.uint8), tf.stack([tf.constant(2, tf.int64), 4, 3]))
    assert set_.shape.as_list() == [2, 4, 3]
    image.set_shape([2, 4, 3])
    assert image.shape.as_list() == [2, 4, 3]
    batched = tf.train.shuffle_batch([image, label], batch_size=2, capacity=10, min_after_dequeue=2, seed=1)
    assert [t.shape.as_list() for t in batched] == [[2, 2, 4, 3], [2]]
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess=sess, coord=coord)
        imgs, labels = sess.run(batched)
        coord.request_stop()
        coord.join(threads)
    assert imgs.shape == (2, 2, 4, 3) and labels.tolist() == [1, 1]
    other, _ = _decoded(path)
    with pytest.raises(ValueError, match=r"Dimension 2 in both shapes must be equal, but are 3 and 4"):
        other.set_shape([2, 4, 4])
