"""The tf.train.batch family as TensorFlow 2.21 (compat.v1, graph mode)
builds and runs it: keep_input filtering, what is refused when building
(and with which error class), and the outputs' static shapes. Every
expectation here was observed with TensorFlow."""

import numpy as np
import pytest

import feedstock.compat.v1 as tf
from compat_support import drain

T, F = True, False


def rows():
    """Two float rows [0, 1, 2] and [10, 11, 12], one epoch, in order."""
    data = tf.constant([[0.0, 1.0, 2.0], [10.0, 11.0, 12.0]])
    return tf.train.slice_input_producer([data], num_epochs=1, shuffle=False)[0]


def values(fetch):
    return [np.asarray(v).tolist() for v in drain(fetch)]


def dims(t):
    return t.shape.as_list()


# ---------------------------------------------------------------- keep_input


@pytest.mark.parametrize(
    "keep, want",
    [
        ([T, F, T], [[0.0, 2.0], [10.0, 12.0]]),
        ((F, T, T), [[1.0, 2.0], [11.0, 12.0]]),
        (np.array([T, F, F]), [[0.0, 10.0]]),
        ([1, 0, 1], [[0.0, 2.0], [10.0, 12.0]]),
        ([F, F, F], []),
        (T, [[0.0, 1.0], [2.0, 10.0], [11.0, 12.0]]),
    ],
)
def test_maybe_batch_filters_with_a_python_keep_input(keep, want):
    b = tf.train.maybe_batch([rows()], keep, 2, enqueue_many=True, allow_smaller_final_batch=True)
    assert dims(b) == [None]
    assert values(b) == want


def test_maybe_batch_python_scalar_keep_input():
    for keep in (1, np.bool_(True)):
        tf.reset_default_graph()
        b = tf.train.maybe_batch([rows()], keep, 2, allow_smaller_final_batch=True)
        assert values(b) == [[[0.0, 1.0, 2.0], [10.0, 11.0, 12.0]]]


def test_maybe_shuffle_batch_forms_filter_with_a_python_keep_input():
    b = tf.train.maybe_shuffle_batch([rows()], 2, 10, 0, [T, F, T], enqueue_many=True,
                                     allow_smaller_final_batch=True, seed=1)
    assert sorted(x for v in values(b) for x in v) == [0.0, 2.0, 10.0, 12.0]
    tf.reset_default_graph()
    b = tf.train.maybe_shuffle_batch_join([[rows()], [rows()]], 2, 10, 0, [T, F, T], enqueue_many=True,
                                          allow_smaller_final_batch=True, seed=1)
    assert sorted(x for v in values(b) for x in v) == [0.0, 0.0, 2.0, 2.0, 10.0, 10.0, 12.0, 12.0]
    tf.reset_default_graph()
    b = tf.train.maybe_batch_join([[rows()], [rows()]], [T, F, T], 2, enqueue_many=True,
                                  allow_smaller_final_batch=True)
    assert sorted(x for v in values(b) for x in v) == [0.0, 0.0, 2.0, 2.0, 10.0, 10.0, 12.0, 12.0]


@pytest.mark.parametrize(
    "keep, many",
    [
        (lambda: [T, F, T], False),  # a vector without enqueue_many
        (lambda: [T, F], True),  # two flags for three examples
        (lambda: tf.constant([T, F]), True),
        (lambda: [[T, F, T]], True),  # rank 2
        (lambda: tf.constant([[T, F, T]]), True),
        (lambda: tf.placeholder(tf.bool), False),  # unknown rank
    ],
)
def test_keep_input_is_checked_when_built(keep, many):
    x = rows()
    with pytest.raises(ValueError):
        tf.train.maybe_batch([x], keep(), 2, enqueue_many=many)


def test_keep_input_vector_of_unknown_length_builds():
    b = tf.train.maybe_batch([rows()], tf.placeholder(tf.bool, [None]), 2, enqueue_many=True)
    assert dims(b) == [2]


# ---------------------------------------------------------------- join


def test_batch_join_dicts_must_have_the_same_keys():
    a, c = rows(), rows()
    with pytest.raises(ValueError, match="same keys"):
        tf.train.batch_join([{"a": a}, {"b": c}], 2)
    with pytest.raises(ValueError, match="same keys"):
        tf.train.shuffle_batch_join([{"a": a}, {"b": c}], 2, 10, 1)
    b = tf.train.batch_join([{"a": a}, {"a": c}], 2)
    assert list(b) == ["a"] and dims(b["a"]) == [2, 3]


@pytest.mark.parametrize(
    "other, says",
    [
        (lambda: tf.constant([1.0, 2.0]), r"^Shapes \(3,\) and \(2,\) are not compatible$"),
        (lambda: tf.constant(1.0), r"^Shapes \(3,\) and \(\) are not compatible$"),
    ],
)
def test_batch_join_components_must_have_compatible_shapes(other, says):
    # TensorFlow 2.21's messages.
    with pytest.raises(ValueError, match=says):
        tf.train.batch_join([[rows()], [other()]], 1)
    with pytest.raises(ValueError, match=says):
        tf.train.shuffle_batch_join([[rows()], [other()]], 1, 10, 1)
    with pytest.raises(ValueError, match=r"^Shapes \(3,\) and \(4,\) are incompatible$"):
        tf.train.batch([rows()], 1, shapes=[[4]])


def test_batch_join_enqueue_many_shapes():
    m12, m13, m22 = tf.constant([[1.0, 2.0]]), tf.constant([[1.0, 2.0, 3.0]]), tf.constant([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(ValueError):
        tf.train.batch_join([[m12], [m13]], 1, enqueue_many=True)
    # Chunks of different lengths are fine.
    assert dims(tf.train.batch_join([[m12], [m22]], 1, enqueue_many=True)) == [1, 2]


def test_batch_join_dtypes_and_lengths():
    with pytest.raises(TypeError):
        tf.train.batch_join([[rows()], [tf.constant([1, 2, 3])]], 1)
    with pytest.raises(ValueError):
        tf.train.batch_join([[rows(), rows()], [rows()]], 1)
    with pytest.raises(ValueError):
        tf.train.batch_join([], 1)
    with pytest.raises(ValueError):
        tf.train.batch_join([[]], 1)


def test_batch_join_merges_a_partly_known_shape():
    b = tf.train.batch_join([[rows()], [tf.placeholder(tf.float32, [None])]], 2)
    assert dims(b) == [2, 3]


# ---------------------------------------------------------------- shapes=


@pytest.mark.parametrize(
    "tensors, shapes, many",
    [
        (2, [[3]], False),  # one shape for two tensors
        (1, [[3], [3]], False),
        (1, [[4]], False),  # (3,) and (4,)
        (1, [[3, 1]], False),
        (1, [[3]], True),  # the example shape is ()
        (1, [[None]], False),  # unknown dims need dynamic_pad
        (1, [tf.TensorShape(None)], False),
    ],
)
def test_shapes_are_checked_when_built(tensors, shapes, many):
    x = rows()
    with pytest.raises(ValueError):
        tf.train.batch([x] * tensors, 1, shapes=shapes, enqueue_many=many)


def test_shapes_given_to_batch_join_are_checked_against_each_list():
    with pytest.raises(ValueError):
        tf.train.batch_join([[rows()], [rows()]], 1, shapes=[[4]])


def test_shapes_give_the_outputs_static_shapes():
    x = rows()
    assert dims(tf.train.batch([x], 1, shapes=[[]], enqueue_many=True)) == [1]
    assert dims(tf.train.batch([x], 1, shapes=[[None]], dynamic_pad=True)) == [1, None]
    for s in ([3], (3,), tf.TensorShape([3]), 3):
        assert dims(tf.train.batch([x], 1, shapes=[s])) == [1, 3]
    assert dims(tf.train.batch([tf.placeholder(tf.float32, [None])], 1, shapes=[[3]])) == [1, 3]
    assert dims(tf.train.batch([tf.placeholder(tf.float32)], 1, shapes=[[3]])) == [1, 3]
    b = tf.train.batch({"b": x, "a": tf.constant(1)}, 1, shapes=[[], [3]])
    assert dims(b["a"]) == [1] and dims(b["b"]) == [1, 3]


def test_shapes_values_with_enqueue_many():
    b = tf.train.batch([rows()], 1, shapes=[[]], enqueue_many=True)
    assert values(b)[:3] == [[0.0], [1.0], [2.0]]


def test_enqueue_many_components_agree_on_their_first_dim():
    with pytest.raises(ValueError):
        tf.train.batch([rows(), tf.constant([1, 2])], 1, enqueue_many=True)
    with pytest.raises(ValueError):
        tf.train.batch([tf.constant(1)], 1, enqueue_many=True)
    b = tf.train.batch([tf.constant([[1.0, 2.0], [3.0, 4.0]]), tf.constant([1, 2])], 1, enqueue_many=True)
    assert [dims(t) for t in b] == [[1, 2], [1]]


# ---------------------------------------------------------------- arguments


def test_batch_size_argument():
    x = rows()
    with pytest.raises(TypeError):
        tf.train.batch([x], 2.5)
    with pytest.raises(TypeError):
        tf.train.batch([x], "2")
    with pytest.raises(TypeError):
        tf.train.batch([x], tf.constant(2, tf.int64))
    with pytest.raises(ValueError):
        tf.train.batch([x], -1)
    # TensorFlow makes empty batches forever; feedstock refuses.
    with pytest.raises(ValueError):
        tf.train.batch([x], 0)
    assert dims(tf.train.batch([x], True)) == [1, 3]
    tf.reset_default_graph()
    b = tf.train.batch([rows()], tf.constant(2))
    assert dims(b) == [2, 3]
    assert values(b) == [[[0.0, 1.0, 2.0], [10.0, 11.0, 12.0]]]


def test_batch_size_numpy_int():
    b = tf.train.batch([rows()], np.int64(2), allow_smaller_final_batch=True)
    assert dims(b) == [None, 3]
    assert values(b) == [[[0.0, 1.0, 2.0], [10.0, 11.0, 12.0]]]


def test_negative_capacity_is_unbounded():
    b = tf.train.batch([rows()], 1, capacity=-1)
    assert values(b) == [[[0.0, 1.0, 2.0]], [[10.0, 11.0, 12.0]]]


def test_other_arguments():
    x = rows()
    with pytest.raises(ValueError):
        tf.train.batch([x], 1, capacity=0)
    with pytest.raises(TypeError):
        tf.train.batch([x], 1, capacity=tf.constant(3))
    for n in (0, -1):
        with pytest.raises(ValueError):
            tf.train.batch([x], 1, num_threads=n)
    with pytest.raises(TypeError):
        tf.train.batch([x], 1, num_threads=2.5)
    with pytest.raises(ValueError, match="capacity 5 must be bigger than min_after_dequeue 5"):
        tf.train.shuffle_batch([x], 1, 5, 5)
    with pytest.raises(ValueError):
        tf.train.shuffle_batch([x], 1, -1, 0)
    with pytest.raises(TypeError):
        tf.train.shuffle_batch([x], 1, 5, 2.5)
    # TensorFlow's queue refuses it when run.
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.train.shuffle_batch([x], 1, 5, -1)
    for empty in ([], {}):
        with pytest.raises(ValueError, match="at least one tensor"):
            tf.train.batch(empty, 1)


# ---------------------------------------------------------------- sparse


def features():
    return {
        "v": tf.VarLenFeature(tf.int64),
        "s": tf.SparseFeature("i", "x", tf.float32, 5),
        "d": tf.FixedLenFeature([2], tf.int64, default_value=[0, 0]),
    }


def shapes_of(d):
    return {k: dims(v) for k, v in sorted(d.items())}


def test_parse_example_sparse_outputs_have_no_static_batch_dim():
    parsed = tf.parse_example(tf.constant(["", ""]), features())
    assert shapes_of(parsed) == {"d": [2, 2], "s": [None, 5], "v": [None, None]}
    single = tf.parse_single_example(tf.constant(""), features())
    assert shapes_of(single) == {"d": [2], "s": [5], "v": [None]}


def test_parse_sequence_example_sparse_outputs_have_no_static_batch_dim():
    ctx, seq = tf.parse_single_sequence_example(
        tf.constant(""), context_features={"v": tf.VarLenFeature(tf.int64)},
        sequence_features={"q": tf.VarLenFeature(tf.int64)})
    assert shapes_of(ctx) == {"v": [None]} and shapes_of(seq) == {"q": [None, None]}
    ctx, seq, _ = tf.io.parse_sequence_example(
        tf.constant(["", ""]), context_features={"v": tf.VarLenFeature(tf.int64)},
        sequence_features={"q": tf.VarLenFeature(tf.int64), "f": tf.FixedLenSequenceFeature([2], tf.int64)})
    assert shapes_of(ctx) == {"v": [None, None]}
    assert shapes_of(seq) == {"f": [2, None, 2], "q": [None, None, None]}


def test_batched_sparse_tensors_have_unknown_dims():
    single = tf.parse_single_example(tf.constant(""), features())
    want = {"d": [2, 2], "s": [None, None], "v": [None, None]}
    assert shapes_of(tf.train.batch(single, 2)) == want
    assert shapes_of(tf.train.shuffle_batch(single, 2, 10, 1)) == want
    padded = tf.train.batch(single, 2, dynamic_pad=True, allow_smaller_final_batch=True)
    assert shapes_of(padded) == {"d": [None, 2], "s": [None, None], "v": [None, None]}
    parsed = tf.parse_example(tf.constant(["", ""]), features())
    assert shapes_of(tf.train.batch(parsed, 2, enqueue_many=True)) == want
    assert shapes_of(tf.train.batch_join([parsed, parsed], 2, enqueue_many=True)) == want
