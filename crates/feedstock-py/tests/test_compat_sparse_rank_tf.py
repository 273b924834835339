"""Sparse tensors' parts and dense form, and the ranks decode_raw and
the parsers take, as TensorFlow 2.21 (tf.compat.v1) gives them."""

import numpy as np
import pytest

import feedstock.compat.v1 as tf
from compat_support import run


def example(values):
    return tf.train.Example(features=tf.train.Features(feature={
        "v": tf.train.Feature(int64_list=tf.train.Int64List(value=values)),
    })).SerializeToString()


def test_a_sparse_tensor_has_its_parts_as_tensors():
    v = tf.parse_example(tf.constant([example([3, 4, 5]), example([6])]), {"v": tf.VarLenFeature(tf.int64)})["v"]
    assert v.indices.dtype == tf.int64 and v.indices.shape.as_list() == [None, 2]
    assert v.values.dtype == tf.int64 and v.values.shape.as_list() == [None]
    assert v.dense_shape.shape.as_list() == [2]
    ix, vals, shape = run([v.indices, v.values, v.dense_shape])
    assert ix.tolist() == [[0, 0], [0, 1], [0, 2], [1, 0]]
    assert vals.tolist() == [3, 4, 5, 6]
    assert shape.tolist() == [2, 3]


def test_sparse_to_dense_fills_with_zero_or_the_default():
    v = tf.parse_example(tf.constant([example([3, 4, 5]), example([6])]), {"v": tf.VarLenFeature(tf.int64)})["v"]
    a, b = run([tf.sparse.to_dense(v), tf.sparse_tensor_to_dense(v, default_value=-1)])
    assert a.tolist() == [[3, 4, 5], [6, 0, 0]]
    assert b.tolist() == [[3, 4, 5], [6, -1, -1]]
    with pytest.raises(TypeError):
        tf.sparse.to_dense(tf.constant([1]))


def test_decode_raw_keeps_the_input_shape_of_any_rank():
    strings = np.array([[b"ab", b"cd"], [b"ef", b"gh"]], dtype=object)
    r = tf.decode_raw(tf.constant(strings), tf.uint8)
    assert r.shape.as_list() == [2, 2, None]
    assert run(r).tolist() == [[[97, 98], [99, 100]], [[101, 102], [103, 104]]]
    p = tf.placeholder(tf.string)
    out = run(tf.decode_raw(p, tf.int16), {p: np.array([[[b"abcd"], [b"efgh"]]], dtype=object)})
    assert out.shape == (1, 2, 1, 2)


def test_parse_example_of_one_record_has_no_batch_dim():
    out = tf.parse_example(tf.constant(example([3, 4])), {
        "v": tf.VarLenFeature(tf.int64),
        "w": tf.FixedLenFeature([2], tf.float32, default_value=[1.0, 2.0]),
    })
    assert out["w"].shape.as_list() == [2]
    got = run(out)
    assert got["w"].tolist() == [1.0, 2.0]
    assert got["v"].indices.tolist() == [[0], [1]]
    assert got["v"].dense_shape.tolist() == [2]


def test_serialized_records_of_the_wrong_rank_fail_when_run():
    p = tf.placeholder(tf.string)
    batched = tf.parse_example(p, {"v": tf.VarLenFeature(tf.int64)})
    single = tf.parse_single_example(p, {"v": tf.VarLenFeature(tf.int64)})
    with pytest.raises(tf.errors.InvalidArgumentError, match="scalar or vector"):
        run(batched, {p: np.array([[example([1])]], dtype=object)})
    with pytest.raises(tf.errors.InvalidArgumentError, match="scalar"):
        run(single, {p: np.array([example([1])], dtype=object)})


def test_parsed_dicts_are_keyed_in_tensorflows_order():
    spec = {"s": tf.FixedLenFeature([], tf.float32, 0.0), "v": tf.VarLenFeature(tf.int64),
            "a": tf.FixedLenFeature([], tf.int64, 0), "b": tf.VarLenFeature(tf.string),
            "sp": tf.SparseFeature("ix", "val", tf.float32, 4)}
    # TensorFlow 2.21: VarLen keys sorted, dense ones sorted, SparseFeature ones sorted.
    assert list(tf.parse_example(tf.constant([b""]), spec)) == ["b", "v", "a", "s", "sp"]
    assert list(tf.parse_single_example(tf.constant(b""), spec)) == ["b", "v", "a", "s", "sp"]
    context, lists = tf.parse_single_sequence_example(
        tf.constant(b""),
        context_features={"z": tf.FixedLenFeature([], tf.int64, 0), "a": tf.VarLenFeature(tf.int64)},
        sequence_features={"q": tf.FixedLenSequenceFeature([], tf.int64, allow_missing=True),
                           "b": tf.VarLenFeature(tf.int64)})
    assert list(context) == ["a", "z"] and list(lists) == ["b", "q"]
