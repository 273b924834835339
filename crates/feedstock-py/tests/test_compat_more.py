"""compat.v1 beyond the guide's blocks: batched reads and parses,
enqueue_many, compressed files, two pipelines in one process."""

import collections
import json

import numpy as np
import pytest

import feedstock.compat.v1 as tf
from compat_support import drain


def write(path, ids, options=None):
    with tf.io.TFRecordWriter(str(path), options=options) as w:
        for i in ids:
            ex = tf.train.Example(features=tf.train.Features(feature={
                "id": tf.train.Feature(int64_list=tf.train.Int64List(value=[i])),
                "v": tf.train.Feature(float_list=tf.train.FloatList(value=[i / 2, -i])),
            }))
            w.write(ex.SerializeToString())
    return str(path)


def test_read_up_to_parse_example_enqueue_many(tmp_path):
    f = write(tmp_path / "a.tfrecord", range(25))
    q = tf.train.string_input_producer([f], num_epochs=2, shuffle=False)
    keys, values = tf.TFRecordReader().read_up_to(q, 8)
    parsed = tf.parse_example(values, {"id": tf.FixedLenFeature([], tf.int64),
                                       "v": tf.FixedLenFeature([2], tf.float32)})
    b = tf.train.batch([parsed["id"], parsed["v"]], batch_size=10, enqueue_many=True,
                       allow_smaller_final_batch=True)
    got = drain(b)
    ids = [i for ids, _ in got for i in ids.tolist()]
    assert ids == list(range(25)) * 2
    for ids_, v in got:
        np.testing.assert_array_equal(v, np.stack([ids_ / 2, -ids_], 1).astype(np.float32))


@pytest.mark.parametrize("compression", ["GZIP", "ZLIB"])
def test_compressed_tfrecord_reader(tmp_path, compression):
    opts = tf.python_io.TFRecordOptions(compression)
    f = write(tmp_path / "c.tfrecord", range(7), options=opts)
    q = tf.train.string_input_producer([f], num_epochs=1, shuffle=False)
    _, v = tf.TFRecordReader(options=opts).read(q)
    ident = tf.parse_single_example(v, {"id": tf.FixedLenFeature([], tf.int64)})["id"]
    assert drain(ident) == list(range(7))


def test_two_pipelines_side_by_side(tmp_path):
    train = write(tmp_path / "train.tfrecord", range(30))
    test = write(tmp_path / "test.tfrecord", range(100, 110))
    spec = {"id": tf.FixedLenFeature([], tf.int64)}

    def pipe(files, epochs, shuffle):
        q = tf.train.string_input_producer(files, num_epochs=epochs, shuffle=shuffle)
        _, v = tf.TFRecordReader().read(q)
        ident = tf.parse_single_example(v, spec)["id"]
        return tf.train.shuffle_batch([ident], batch_size=5, capacity=40, min_after_dequeue=10,
                                      allow_smaller_final_batch=True) if shuffle else \
            tf.train.batch([ident], batch_size=5, allow_smaller_final_batch=True)

    g_train, g_eval = tf.Graph(), tf.Graph()
    with g_train.as_default():
        tb = pipe([train], 3, True)
    with g_eval.as_default():
        eb = pipe([test], 1, False)
    s_train, s_eval = tf.Session(graph=g_train), tf.Session(graph=g_eval)
    c_train, c_eval = tf.train.Coordinator(), tf.train.Coordinator()
    t_train = tf.train.start_queue_runners(sess=s_train, coord=c_train)
    t_eval = tf.train.start_queue_runners(sess=s_eval, coord=c_eval)
    seen_train, seen_eval = [], []
    for _ in range(6):
        seen_train.extend(s_train.run(tb).tolist())
    with pytest.raises(ValueError):
        s_eval.run(tb)  # a tensor of another graph
    try:
        while True:
            seen_eval.extend(s_eval.run(eb).tolist())
    except tf.errors.OutOfRangeError:
        pass
    try:
        while True:
            seen_train.extend(s_train.run(tb).tolist())
    except tf.errors.OutOfRangeError:
        pass
    for c, t in ((c_train, t_train), (c_eval, t_eval)):
        c.request_stop()
        c.join(t)
    assert seen_eval == list(range(100, 110))
    assert collections.Counter(seen_train) == collections.Counter(list(range(30)) * 3)


def test_decode_csv_required_column_and_types(tmp_path):
    p = tmp_path / "s.csv"
    p.write_text('name,x,y\n"a, b",1.5,7\nc,,8\nd,2.5,\n')
    q = tf.train.string_input_producer([str(p)], num_epochs=1, shuffle=False)
    _, line = tf.TextLineReader(skip_header_lines=1).read(q)
    name, x, y = tf.decode_csv(line, record_defaults=[[""], [0.0], tf.constant([], tf.int64)])
    assert (name.dtype, x.dtype, y.dtype) == (tf.string, tf.float32, tf.int64)
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(coord=coord)
        assert sess.run([name, x, y]) == [b"a, b", 1.5, 7]
        assert sess.run([name, x, y]) == [b"c", 0.0, 8]
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(y)
        assert info.value.key.endswith("s.csv:4")
        coord.request_stop()
        coord.join(threads)


def golden_sequences(golden):
    """The golden SequenceExamples' file and, per record, the sidecar's
    ``(locale, seq_id, scores, tokens)``: one score a step, a token list a step."""
    j = json.loads((golden / "sequence_examples.tfrecord.json").read_text())
    want = [(r["context"]["locale"]["values"][0].encode(), r["context"]["seq_id"]["values"][0],
             [s["values"][0] for s in r["feature_lists"]["scores"]],
             [s["values"] for s in r["feature_lists"]["tokens"]]) for r in j["records"]]
    return str(golden / "sequence_examples.tfrecord"), want


def sequence_specs():
    context = {"locale": tf.FixedLenFeature([], tf.string, default_value="und"),
               "seq_id": tf.FixedLenFeature([], tf.int64)}
    sequence = {"scores": tf.FixedLenSequenceFeature([], tf.float32),
                "tokens": tf.VarLenFeature(tf.int64)}
    return context, sequence


def sparse_steps(v, steps):
    """A sparse ``[..., steps, max_len]`` value back as one list per step
    (of each example in turn), checking each step's indices run 0, 1, ..."""
    rows = [[] for _ in range(steps)]
    width = v.dense_shape[-2]
    for idx, val in zip(v.indices.tolist(), v.values.tolist()):
        row = idx[0] * width + idx[1] if len(idx) == 3 else idx[0]
        assert idx[-1] == len(rows[row])
        rows[row].append(val)
    return rows


def test_tfrecord_parse_single_sequence_example(golden):
    path, want = golden_sequences(golden)
    q = tf.train.string_input_producer([path], num_epochs=1, shuffle=False)
    _, v = tf.TFRecordReader().read(q)
    context, lists = tf.parse_single_sequence_example(v, *sequence_specs())
    assert list(context) == ["locale", "seq_id"] and list(lists) == ["tokens", "scores"]  # TensorFlow's order: VarLen first
    assert context["seq_id"].shape.as_list() == []
    assert lists["scores"].shape.as_list() == [None] and lists["scores"].dtype == tf.float32
    assert isinstance(lists["tokens"], tf.SparseTensor)
    assert not isinstance(lists["scores"], tf.SparseTensor)
    got = drain([context["locale"], context["seq_id"], lists["scores"], lists["tokens"]])
    assert len(got) == len(want)
    for (locale, seq_id, scores, tokens), (w_locale, w_id, w_scores, w_tokens) in zip(got, want):
        assert (locale, seq_id) == (w_locale, w_id)
        assert scores.dtype == np.float32
        np.testing.assert_array_equal(scores, np.array(w_scores, np.float32))
        assert tokens.dense_shape.tolist() == [len(w_tokens), max(map(len, w_tokens))]
        assert sparse_steps(tokens, len(w_tokens)) == w_tokens


def test_parse_sequence_example_batched_pads_and_gives_lengths(golden):
    path, want = golden_sequences(golden)
    q = tf.train.string_input_producer([path], num_epochs=1, shuffle=False)
    _, values = tf.TFRecordReader().read_up_to(q, 2)
    context, lists, lengths = tf.io.parse_sequence_example(values, *sequence_specs())
    # Only the FixedLenSequenceFeature list has lengths, as in TensorFlow.
    assert list(lengths) == ["scores"]
    assert lengths["scores"].dtype == tf.int64 and lengths["scores"].shape.as_list() == [None]
    assert lists["scores"].shape.as_list() == [None, None]
    assert lists["tokens"].shape.as_list() == [None, None, None]
    got = drain([context["locale"], context["seq_id"], lists["scores"], lists["tokens"],
                 lengths["scores"]])
    # Three records read two at a time.
    assert [len(b[1]) for b in got] == [2, 1]
    rest = list(want)
    for locale, seq_id, scores, tokens, n in got:
        part, rest = rest[:len(seq_id)], rest[len(seq_id):]
        assert locale.tolist() == [w[0] for w in part]
        assert seq_id.tolist() == [w[1] for w in part]
        assert n.dtype == np.int64 and n.tolist() == [len(w[2]) for w in part]
        longest = max(n.tolist())
        padded = [w[2] + [0.0] * (longest - len(w[2])) for w in part]
        np.testing.assert_array_equal(scores, np.array(padded, np.float32))
        max_len = max(len(t) for w in part for t in w[3])
        assert tokens.dense_shape.tolist() == [len(part), longest, max_len]
        steps = [t for w in part for t in w[3] + [[]] * (longest - len(w[3]))]
        assert sparse_steps(tokens, len(part) * longest) == steps
    assert rest == []


def test_parse_sequence_example_error_names_the_record(golden):
    path, _ = golden_sequences(golden)
    q = tf.train.string_input_producer([path], num_epochs=1, shuffle=False)
    _, v = tf.TFRecordReader().read(q)
    context, sequence = sequence_specs()
    context["user_id"] = tf.FixedLenFeature([], tf.int64)
    parsed, _ = tf.io.parse_single_sequence_example(v, context_features=context, sequence_features=sequence)
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(coord=coord)
        with pytest.raises(tf.errors.InvalidArgumentError, match="user_id") as info:
            sess.run(parsed["seq_id"])
        assert info.value.key == path + ":0"
        coord.request_stop()
        coord.join(threads)


def test_run_timeout_is_deadline_exceeded():
    [row] = tf.train.slice_input_producer([np.arange(3)], shuffle=False)
    never = tf.train.maybe_batch([row], keep_input=False, batch_size=2)
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(coord=coord)
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(never, options=tf.RunOptions(timeout_in_ms=50))
        coord.request_stop()
        coord.join(threads)


def test_coordinator_reraises_a_python_exception_from_request_stop():
    coord = tf.train.Coordinator()
    with coord.stop_on_exception():
        raise RuntimeError("step failed")
    assert coord.should_stop()
    with pytest.raises(RuntimeError, match="step failed"):
        coord.join([])


def test_decode_and_crop_jpeg_is_always_the_window_of_the_full_decode():
    # feedstock's own: the crop is the full decode's window on every
    # window. TensorFlow 2.21's differs at some edges (on [1, 2, 4, 4] and
    # [8, 16, 8, 16] of this JPEG), where libjpeg-turbo's cropped decode
    # upsamples chroma from fewer neighbours.
    import pathlib

    data = (pathlib.Path(__file__).resolve().parents[2] / "feedstock/tests/data/golden/jpeg/04.jpg").read_bytes()
    full = tf.Session().run(tf.image.decode_jpeg(data, channels=3))
    w = tf.placeholder(tf.int32, [4])
    t = tf.image.decode_and_crop_jpeg(data, w, channels=3)
    with tf.Session() as s:
        for y, x, h, width in [(1, 2, 4, 4), (8, 16, 8, 16), (0, 0, 31, 44), (30, 43, 1, 1), (5, 7, 13, 29)]:
            got = s.run(t, {w: [y, x, h, width]})
            assert got.tolist() == full[y:y + h, x:x + width].tolist(), (y, x, h, width)
