"""``tf.Assert`` and ``tf.control_dependencies`` on values known only when
run, as TF-slim's preprocessing guards its crops; every expectation below
was observed under TensorFlow 2.21 (``tensorflow.compat.v1``,
``disable_v2_behavior()``)."""

import numpy as np
import pytest

import feedstock.compat.v1 as tf


def assertion(e):
    """The kernel's text of an assertion error (feedstock puts the node's
    name before it, TensorFlow the node after it)."""
    return e.value.message[e.value.message.index("assertion failed"):]


def crop(image, h, w):
    """A crop guarded as TF-slim's preprocessing guards it: the rank and
    size checked when run, before the shape and the slice."""
    shape = tf.shape(image)
    rank_ok = tf.Assert(tf.equal(tf.rank(image), 3), ["Rank of image must be equal to 3."])
    with tf.control_dependencies([rank_ok]):
        cropped_shape = tf.stack([h, w, shape[2]])
    size_ok = tf.Assert(
        tf.logical_and(tf.greater_equal(shape[0], h), tf.greater_equal(shape[1], w)),
        ["Crop size greater than the image size."],
    )
    with tf.control_dependencies([size_ok]):
        image = tf.slice(image, tf.stack([0, 0, 0]), cropped_shape)
    return tf.reshape(image, cropped_shape)


def test_assert_summarizes_its_data_as_tensorflows_kernel():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.int32, [None])
        f = tf.placeholder(tf.float32, [None])
        m = tf.placeholder(tf.int64, [None, None])
        s = tf.placeholder(tf.string, [None])
        b = tf.placeholder(tf.bool, [])
        cases = [
            (tf.Assert(b, ["Rank of image must be equal to 3."]), "[Rank of image must be equal to 3.]"),
            (tf.Assert(b, ["x is", x]), "[x is] [1 2 3...]"),
            (tf.Assert(b, [x], summarize=5), "[1 2 3 4 5...]"),
            (tf.Assert(b, ["f", f]), "[f] [1.5 -2.25 1e-07...]"),
            (tf.Assert(b, [m]), "[[1 2 3]...]"),
            (tf.Assert(b, [m], summarize=10), "[[1 2 3][4 5 6]]"),
            (tf.Assert(b, [s]), "[a bc d...]"),
            (tf.Assert(b, [b]), "[0]"),
            (tf.Assert(b, [x], summarize=-1), "[1 2 3 4 5 6]"),
        ]
        assert [a.name for a, _ in cases[:3]] == ["Assert/Assert", "Assert_1/Assert", "Assert_2/Assert"]
        feed = {x: [1, 2, 3, 4, 5, 6], f: [1.5, -2.25, 1e-7, 3e10], m: [[1, 2, 3], [4, 5, 6]],
                s: [b"a", b"bc", b"d", b"e"], b: False}
        with tf.Session() as sess:
            for op, want in cases:
                with pytest.raises(tf.errors.InvalidArgumentError) as e:
                    sess.run(op, feed)
                assert assertion(e) == f"assertion failed: {want}"
            assert sess.run(cases[1][0], {x: [1], b: True}) is None
        with pytest.raises(ValueError, match="passed list of length 0"):
            tf.Assert(b, [])


def test_a_guarded_crop_runs_its_checks_first():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.uint8, [None, None, 3])
        y = crop(x, 2, 2)
        with tf.Session() as s:
            got = s.run(y, {x: np.arange(27, dtype=np.uint8).reshape(3, 3, 3)})
            assert got.tolist() == [[[0, 1, 2], [3, 4, 5]], [[9, 10, 11], [12, 13, 14]]]
            with pytest.raises(tf.errors.InvalidArgumentError) as e:
                s.run(y, {x: np.zeros((1, 3, 3), np.uint8)})
            assert assertion(e) == "assertion failed: [Crop size greater than the image size.]"


def test_blocks_nest_none_clears_and_only_nodes_made_inside_wait():
    with tf.Graph().as_default():
        outer = tf.Assert(tf.constant(False), ["outer"])
        inner = tf.Assert(tf.constant(False), ["inner"])
        with tf.control_dependencies([outer]):
            with tf.control_dependencies([inner]):
                z1 = tf.identity(tf.constant(1))
            with tf.control_dependencies(None):
                z2 = tf.identity(tf.constant(2))
            z3 = tf.identity(tf.constant(3))
            grp = tf.group(tf.identity(tf.constant(4)))
        z4 = tf.identity(tf.constant(4))
        with tf.Session() as s:
            for t, failed in ((z1, "inner"), (z3, "outer"), (grp, "outer")):
                with pytest.raises(tf.errors.InvalidArgumentError) as e:
                    s.run(t)
                assert assertion(e) == f"assertion failed: [{failed}]"
            assert (s.run(z2), s.run(z4)) == (2, 4)
        with pytest.raises(TypeError, match="Can not convert a int into a Tensor or Operation."):
            with tf.control_dependencies([3]):
                pass


def test_an_untaken_branch_does_not_run_its_assertion():
    with tf.Graph().as_default():
        p = tf.placeholder(tf.bool, [])

        def guarded():
            with tf.control_dependencies([tf.Assert(tf.constant(False), ["never"])]):
                return tf.identity(tf.constant(1))

        out = tf.cond(p, guarded, lambda: tf.constant(2))
        with tf.Session() as s:
            assert s.run(out, {p: False}) == 2
            with pytest.raises(tf.errors.InvalidArgumentError) as e:
                s.run(out, {p: True})
            assert assertion(e) == "assertion failed: [never]"


def test_an_assertion_in_a_pipeline_stops_it_naming_the_check():
    # The queue runner evaluating the guarded crop fails; the error reaches
    # the training loop (feedstock) or the coordinator (TensorFlow), never
    # a silently shorter input.
    with tf.Graph().as_default():
        images = tf.constant(np.zeros((2, 1, 3, 3), np.uint8))
        image = tf.train.slice_input_producer([images], shuffle=False)[0]
        batch = tf.train.batch([crop(image, 2, 2)], batch_size=1, shapes=[[2, 2, 3]])
        with tf.Session() as s:
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(s, coord)
            with pytest.raises(tf.errors.InvalidArgumentError) as e:
                s.run(batch)
            assert assertion(e) == "assertion failed: [Crop size greater than the image size.]"
            coord.request_stop()
            with pytest.raises(tf.errors.InvalidArgumentError) as e:
                coord.join(threads)
            assert assertion(e) == "assertion failed: [Crop size greater than the image size.]"


def test_the_assert_family_on_values_known_when_run():
    # TensorFlow 2.21's texts, item by item (assert_non_positive joins two).
    with tf.Graph().as_default():
        x = tf.placeholder(tf.int32, [None])
        y = tf.placeholder(tf.int32, [None])
        xs, ys = "[x (Placeholder:0) = ] [1 -2 3...]", "[y (Placeholder_1:0) = ] [1 2 3...]"
        cases = [
            (tf.assert_equal(x, y), f"[Condition x == y did not hold element-wise:] {xs} {ys}"),
            (tf.assert_equal(x, y, message="shapes differ"),
             f"[shapes differ] [Condition x == y did not hold element-wise:] {xs} {ys}"),
            (tf.assert_equal(x, y, data=["custom", x]), "[custom] [1 -2 3...]"),
            (tf.assert_less(x, y, summarize=2), "[Condition x < y did not hold element-wise:] "
                                                "[x (Placeholder:0) = ] [1 -2...] [y (Placeholder_1:0) = ] [1 2...]"),
            (tf.assert_positive(x), f"[] [Condition x > 0 did not hold element-wise:] {xs}"),
            (tf.assert_positive(x, message="must be positive"),
             f"[must be positive.  ] [Condition x > 0 did not hold element-wise:] {xs}"),
            (tf.assert_non_negative(x), f"[] [Condition x >= 0 did not hold element-wise:] {xs}"),
            (tf.assert_non_positive(x), "[] [Condition x <= 0 did not hold element-wise:x (Placeholder:0) = ] "
                                        "[1 -2 3...]"),
        ]
        ok = tf.assert_greater_equal(x, -5)
        with tf.Session() as s:
            feed = {x: [1, -2, 3, 4], y: [1, 2, 3, 5]}
            for op, want in cases:
                with pytest.raises(tf.errors.InvalidArgumentError) as e:
                    s.run(op, feed)
                assert assertion(e) == f"assertion failed: {want}"
            assert s.run(ok, feed) is None
