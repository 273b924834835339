"""compat.v1's variables, local variables, summaries and the
``slice_input_producer`` output names, as TensorFlow 2.21 gives them
under ``tf.disable_v2_behavior()`` (reference variables). Every expected
value below was observed there."""

import pytest

import feedstock.compat.v1 as tf


def _names(values):
    return [v.name for v in values]


def test_variables_print_as_tensorflow_1_reference_variables(tmp_path):
    # Observed under TensorFlow 2.21: str and repr alike.
    (tmp_path / "a.txt").write_bytes(b"")
    step = tf.train.get_or_create_global_step()
    assert str(step) == repr(step) == "<tf.Variable 'global_step:0' shape=() dtype=int64_ref>"
    assert tf.train.get_global_step() is step
    files = tf.train.match_filenames_once(str(tmp_path / "*.txt"))
    assert str(files) == repr(files) == "<tf.Variable 'matching_filenames:0' shape=<unknown> dtype=string_ref>"
    assert isinstance(files, tf.Variable) and files.shape.ndims is None and not files.trainable
    assert repr(tf.Variable(1)) == "<tf.Variable 'Variable:0' shape=() dtype=int32_ref>"
    assert repr(tf.get_variable("gv", shape=[2, 3], initializer=tf.zeros_initializer())) == "<tf.Variable 'gv:0' shape=(2, 3) dtype=float32_ref>"
    # Still matched when first used, with no initializer run (feedstock's
    # behaviour; TensorFlow's needs the local initializer).
    with tf.Session() as sess:
        assert sess.run(files).tolist() == [str(tmp_path / "a.txt").encode()]


def test_producers_epoch_counters_are_local_variables():
    files = tf.train.match_filenames_once("*.nothing")
    tf.train.string_input_producer(["a", "b"], num_epochs=2)
    tf.train.input_producer(tf.constant([1, 2]), num_epochs=2)
    tf.train.range_input_producer(5, num_epochs=2)
    tf.train.slice_input_producer([tf.constant([1, 2]), tf.constant([3.0, 4.0])], num_epochs=2)
    tf.train.string_input_producer(["a", "b"], num_epochs=2, name="myprod")
    tf.train.string_input_producer(["a", "b"])  # no num_epochs: no counter
    tf.train.limit_epochs(tf.constant([1, 2]), 2)
    with tf.name_scope("sc"):
        tf.train.string_input_producer(["a"], num_epochs=1)
    # Observed under TensorFlow 2.21.
    want = [
        "matching_filenames:0",
        "input_producer/limit_epochs/epochs:0",
        "input_producer_1/limit_epochs/epochs:0",
        "input_producer_2/limit_epochs/epochs:0",
        "input_producer_3/input_producer/limit_epochs/epochs:0",
        "myprod/limit_epochs/epochs:0",
        "limit_epochs/epochs:0",
        "sc/input_producer/limit_epochs/epochs:0",
    ]
    local = tf.local_variables()
    assert _names(local) == want == _names(tf.get_collection(tf.GraphKeys.LOCAL_VARIABLES))
    assert local[0] is files
    assert repr(local[1]) == "<tf.Variable 'input_producer/limit_epochs/epochs:0' shape=() dtype=int64_ref>"
    assert [v.initializer.name for v in local[:2]] == ["matching_filenames/Assign", "input_producer/limit_epochs/epochs/Assign"]
    assert not any(v.trainable for v in local)
    assert tf.global_variables() == [] and tf.trainable_variables() == []
    assert tf.local_variables_initializer().name == "init"
    assert tf.variables_initializer(tf.local_variables()).name == "init_1"


def test_epoch_counter_needs_the_local_initializer_and_the_input_runs():
    q = tf.train.string_input_producer([b"x", b"y"], num_epochs=1, shuffle=False)
    x = q.dequeue()
    epochs = tf.local_variables()[0]
    with tf.Session() as sess:
        # Observed under TensorFlow 2.21: read before the initializer ran.
        with pytest.raises(tf.errors.FailedPreconditionError):
            sess.run(epochs)
        sess.run(tf.local_variables_initializer())
        assert sess.run(epochs) == 0
        sess.run(tf.variables_initializer(tf.local_variables()))
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        assert [sess.run(x), sess.run(x)] == [b"x", b"y"]
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(x)
        coord.request_stop()
        coord.join(threads)


def test_queue_fullness_summaries_are_named_tensors_in_summaries():
    q = tf.train.string_input_producer(["a", "b"])
    x = q.dequeue()
    tf.train.batch([x], 2)
    tf.train.shuffle_batch([x], 2, capacity=50, min_after_dequeue=10)
    tf.train.batch_join([[x], [x]], 2, capacity=16, name="bj")
    tf.train.shuffle_batch_join([[x], [x]], 2, capacity=40, min_after_dequeue=5, name="sbj")
    tf.train.range_input_producer(5, capacity=8)
    tf.train.input_producer(tf.constant([1, 2]))  # no summary_name: none
    tf.train.input_producer(tf.constant([1, 2]), summary_name="myfrac")
    tf.train.slice_input_producer([[1, 2, 3]], name="sl")
    loss = tf.summary.scalar("loss", tf.constant(1.0))
    # Observed under TensorFlow 2.21.
    summaries = tf.get_collection(tf.GraphKeys.SUMMARIES)
    assert _names(summaries) == [
        "input_producer/fraction_of_32_full:0",
        "batch/fraction_of_32_full:0",
        "shuffle_batch/fraction_over_10_of_40_full:0",
        "bj/fraction_of_16_full:0",
        "sbj/fraction_over_5_of_35_full:0",
        "input_producer_1/fraction_of_8_full:0",
        "input_producer_3/myfrac:0",
        "sl/input_producer/fraction_of_32_full:0",
        "loss:0",
    ]
    assert summaries[-1] is loss
    assert all(s.dtype == tf.string and s.shape.as_list() == [] for s in summaries)


def test_merge_and_merge_all_are_named_and_fetch_the_queue_summaries():
    q = tf.train.string_input_producer(["a", "b"], shuffle=False)
    b = tf.train.batch([q.dequeue()], 2, capacity=20)
    loss = tf.summary.scalar("loss", tf.constant(1.0))
    merged = tf.summary.merge(tf.get_collection(tf.GraphKeys.SUMMARIES))
    # Observed under TensorFlow 2.21.
    assert str(merged) == 'Tensor("Merge/MergeSummary:0", shape=(), dtype=string)'
    assert tf.summary.merge([loss], name="foo").name == "foo/foo:0"
    assert tf.summary.merge([loss], collections=["xx"]).name == "Merge_1/MergeSummary:0"
    assert _names(tf.get_collection("xx")) == ["Merge_1/MergeSummary:0"]
    with tf.name_scope("sc"):
        assert tf.summary.merge([loss]).name == "sc/Merge/MergeSummary:0"
    merged_all = tf.summary.merge_all()
    assert merged_all.name == "Merge_2/MergeSummary:0"
    with pytest.raises(ValueError, match="'MergeSummary' Op with length 0"):
        tf.summary.merge([])
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        assert sess.run(b).tolist() == [b"a", b"b"]
        # feedstock's value: every queue's fullness (TensorFlow's is a
        # serialized Summary).
        for fetch in (merged, merged_all):
            got = sess.run(fetch)
            assert 0.0 <= got["queue/batch/fraction_of_20_full"] <= 1.0
        coord.request_stop()
        coord.join(threads)


def test_file_writer_is_inert(tmp_path):
    logdir = tmp_path / "logs"
    loss = tf.summary.scalar("loss", tf.constant(1.0))
    merged = tf.summary.merge_all()
    with tf.summary.FileWriter(str(logdir), tf.get_default_graph()) as writer:
        assert writer.get_logdir() == str(logdir)
        with tf.Session() as sess:
            writer.add_summary(sess.run(merged), global_step=1)
            writer.add_summary(sess.run(loss), 2)
        writer.add_graph(tf.get_default_graph())
        writer.flush()
    writer.close()
    assert not logdir.exists()  # feedstock writes no event files
    cached = tf.summary.FileWriterCache.get(str(logdir))
    assert tf.summary.FileWriterCache.get(str(logdir)) is cached
    tf.summary.FileWriterCache.clear()


def test_slice_input_producer_outputs_are_named_as_gathers():
    a, b = tf.train.slice_input_producer([[1, 2, 3], [b"a", b"b", b"c"]], shuffle=False, name="sl")
    # Observed under TensorFlow 2.21.
    assert (a.name, b.name) == ("sl/GatherV2:0", "sl/GatherV2_1:0")
    assert str(tf.get_default_graph().get_tensor_by_name("sl/GatherV2_1:0")) == (
        'Tensor("sl/GatherV2_1:0", shape=(), dtype=string)')
    c, = tf.train.slice_input_producer([[4, 5]])
    assert c.name == "input_producer/GatherV2:0"
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        got = [sess.run([a, b]), sess.run(["sl/GatherV2:0", "sl/GatherV2_1:0"])]
        coord.request_stop()
        coord.join(threads)
    assert [[int(x), y] for x, y in got] == [[1, b"a"], [2, b"b"]]
