"""Every code block of the input sections of TensorFlow's "Reading data"
guide, with only the import changed, on small files written here."""

import collections
import os
import sys

import numpy as np
import pytest

import feedstock.compat.v1 as tf


def write_csv(path, rows):
    path.write_text("".join(",".join(str(v) for v in r) + "\n" for r in rows))
    return str(path)


# --- Feeding -------------------------------------------------------------


def test_feeding():
    def my_python_preprocessing_fn():
        return np.array([1.5, 2.5, 4.0], dtype=np.float32)

    printed = []
    with tf.Session():
        input = tf.placeholder(tf.float32)
        classifier = input * 2.0 + 1.0
        printed.append(classifier.eval(feed_dict={input: my_python_preprocessing_fn()}))
    np.testing.assert_array_equal(printed[0], [4.0, 6.0, 9.0])


def test_feeding_unfed_placeholder_is_an_error_naming_it():
    with tf.Session():
        input = tf.placeholder(tf.float32, name="pixels")
        classifier = input * 2.0
        with pytest.raises(tf.errors.InvalidArgumentError, match="pixels"):
            classifier.eval()


# --- CSV files -----------------------------------------------------------


def test_csv_files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rows0 = [[i, i + 1, i + 2, i + 3, i % 2] for i in range(0, 300)]
    rows1 = [[i, i + 1, i + 2, i + 3, i % 2] for i in range(1000, 1300)]
    write_csv(tmp_path / "file0.csv", rows0)
    write_csv(tmp_path / "file1.csv", rows1)

    # -- the guide's block, unchanged --
    filename_queue = tf.train.string_input_producer(["file0.csv", "file1.csv"])

    reader = tf.TextLineReader()
    key, value = reader.read(filename_queue)

    # Default values, in case of empty columns. Also specifies the type of the
    # decoded result.
    record_defaults = [[1], [1], [1], [1], [1]]
    col1, col2, col3, col4, col5 = tf.decode_csv(
        value, record_defaults=record_defaults)
    features = tf.stack([col1, col2, col3, col4])

    seen = []
    with tf.Session() as sess:
        # Start populating the filename queue.
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(coord=coord)

        for i in range(1200):
            # Retrieve a single instance:
            example, label = sess.run([features, col5])
            seen.append((tuple(example.tolist()), int(label)))

        coord.request_stop()
        coord.join(threads)
    # -- end of the guide's block --

    assert features.dtype == tf.int32 and features.shape.as_list() == [4]
    # 1200 reads = two epochs of 600 lines: every line exactly twice, and
    # within a file, lines in order.
    want = collections.Counter((tuple(r[:4]), r[4]) for r in rows0 + rows1)
    got = collections.Counter(seen)
    assert got == collections.Counter({k: 2 * v for k, v in want.items()})
    for start in (0, 600):
        epoch = seen[start:start + 600]
        firsts = [e[0][0] for e in epoch]
        for base in (0, 1000):
            part = [f for f in firsts if base <= f < base + 300]
            assert part == list(range(base, base + 300))


def test_csv_bad_field_names_file_and_line(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("1,2\n3,x\n")
    q = tf.train.string_input_producer([str(path)], num_epochs=1, shuffle=False)
    key, value = tf.TextLineReader().read(q)
    a, b = tf.decode_csv(value, record_defaults=[[0], [0]])
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(coord=coord)
        assert sess.run([a, b]) == [1, 2]
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run([a, b])
        # TextLineReader keys count lines from 1, as TensorFlow's do.
        assert info.value.key == f"{path}:2"
        assert info.value.field == "column 1"
        coord.request_stop()
        coord.join(threads)


# --- Fixed length records ---------------------------------------------------


def test_fixed_length_records_cifar_like(tmp_path):
    label_bytes, height, width, depth = 1, 4, 4, 3
    image_bytes = height * width * depth
    rng = np.random.RandomState(0)
    recs = [(i % 10, rng.randint(0, 256, image_bytes).astype(np.uint8)) for i in range(6)]
    path = tmp_path / "data_batch_1.bin"
    path.write_bytes(b"".join(bytes([l]) + img.tobytes() for l, img in recs))

    filename_queue = tf.train.string_input_producer([str(path)], num_epochs=1, shuffle=False)
    reader = tf.FixedLengthRecordReader(record_bytes=label_bytes + image_bytes)
    key, value = reader.read(filename_queue)
    record_bytes = tf.decode_raw(value, tf.uint8)
    label = tf.cast(tf.strided_slice(record_bytes, [0], [label_bytes]), tf.int32)
    depth_major = tf.reshape(
        tf.strided_slice(record_bytes, [label_bytes], [label_bytes + image_bytes]), [depth, height, width])
    uint8image = tf.transpose(depth_major, [1, 2, 0])

    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(coord=coord)
        for i, (l, img) in enumerate(recs):
            k, lab, im = sess.run([key, label, uint8image])
            assert k == f"{path}:{i}".encode()
            assert lab.tolist() == [l]
            np.testing.assert_array_equal(im, img.reshape(depth, height, width).transpose(1, 2, 0))
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(label)
        coord.request_stop()
        coord.join(threads)


# --- Standard TensorFlow format -------------------------------------------


def write_mnist_like(path, n, start=0, options=None):
    with tf.python_io.TFRecordWriter(str(path), options=options) as writer:
        for i in range(start, start + n):
            image_raw = (np.arange(784) + i).astype(np.uint8).tobytes()
            example = tf.train.Example(features=tf.train.Features(feature={
                "height": tf.train.Feature(int64_list=tf.train.Int64List(value=[28])),
                "width": tf.train.Feature(int64_list=tf.train.Int64List(value=[28])),
                "depth": tf.train.Feature(int64_list=tf.train.Int64List(value=[1])),
                "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[i])),
                "image_raw": tf.train.Feature(bytes_list=tf.train.BytesList(value=[image_raw])),
            }))
            writer.write(example.SerializeToString())


def read_and_decode(filename_queue):
    reader = tf.TFRecordReader()
    _, serialized_example = reader.read(filename_queue)
    features = tf.parse_single_example(
        serialized_example,
        features={
            "image_raw": tf.FixedLenFeature([], tf.string),
            "label": tf.FixedLenFeature([], tf.int64),
        })
    image = tf.decode_raw(features["image_raw"], tf.uint8)
    image.set_shape([784])
    image = tf.cast(image, tf.float32) * (1. / 255) - 0.5
    label = tf.cast(features["label"], tf.int32)
    return image, label


def test_standard_format_write_then_read(tmp_path):
    path = tmp_path / "train.tfrecords"
    write_mnist_like(path, 10)
    assert len(list(tf.python_io.tf_record_iterator(str(path)))) == 10
    q = tf.train.string_input_producer([str(path)], num_epochs=1, shuffle=False)
    image, label = read_and_decode(q)
    assert image.shape.as_list() == [784] and image.dtype == tf.float32
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess=sess, coord=coord)
        for i in range(10):
            im, lab = sess.run([image, label])
            assert lab == i
            want = (np.arange(784) + i).astype(np.uint8).astype(np.float32) * np.float32(1 / 255) - np.float32(0.5)
            np.testing.assert_allclose(im, want, rtol=0, atol=1e-6)
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(label)
        coord.request_stop()
        coord.join(threads)


def test_corrupt_tfrecord_is_data_loss_naming_the_file(tmp_path):
    path = tmp_path / "train.tfrecords"
    write_mnist_like(path, 3)
    data = bytearray(path.read_bytes())
    data[-30] ^= 0x40
    path.write_bytes(bytes(data))
    q = tf.train.string_input_producer([str(path)], num_epochs=1, shuffle=False)
    image, label = read_and_decode(q)
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess=sess, coord=coord)
        assert sess.run(label) == 0
        assert sess.run(label) == 1
        with pytest.raises(tf.errors.DataLossError) as info:
            sess.run(label)
        assert info.value.file == str(path)
        coord.request_stop()
        coord.join(threads)


# --- Batching (input_pipeline with shuffle_batch) ---------------------------


def test_batching_input_pipeline_shuffle_batch(tmp_path):
    files = []
    for f in range(3):
        p = tmp_path / f"train-{f}.tfrecords"
        write_mnist_like(p, 50, start=f * 50)
        files.append(str(p))

    def read_my_file_format(filename_queue):
        return read_and_decode(filename_queue)

    def input_pipeline(filenames, batch_size, num_epochs=None):
        filename_queue = tf.train.string_input_producer(
            filenames, num_epochs=num_epochs, shuffle=True)
        example, label = read_my_file_format(filename_queue)
        min_after_dequeue = 100  # the guide's 10000, scaled to 150 examples
        capacity = min_after_dequeue + 3 * batch_size
        example_batch, label_batch = tf.train.shuffle_batch(
            [example, label], batch_size=batch_size, capacity=capacity,
            min_after_dequeue=min_after_dequeue, allow_smaller_final_batch=True)
        return example_batch, label_batch

    example_batch, label_batch = input_pipeline(files, 32, num_epochs=2)
    assert example_batch.shape.as_list() == [None, 784]
    labels = run_guide_loop(label_batch)
    assert collections.Counter(labels) == collections.Counter(list(range(150)) * 2)
    assert labels != sorted(labels)


def run_guide_loop(train_op):
    """The guide's recommended pattern, collecting what train_op yields."""
    out = []
    # Create the graph, etc.
    init_op = tf.global_variables_initializer()

    # Create a session for running operations in the Graph.
    sess = tf.Session()

    # Initialize the variables (like the epoch counter).
    sess.run(init_op)

    # Start input enqueue threads.
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess=sess, coord=coord)

    done = False
    try:
        while not coord.should_stop():
            # Run training steps or whatever
            out.extend(np.asarray(sess.run(train_op)).reshape(-1).tolist())

    except tf.errors.OutOfRangeError:
        done = True
    finally:
        # When done, ask the threads to stop.
        coord.request_stop()

    # Wait for threads to finish.
    coord.join(threads)
    sess.close()
    assert done
    return out


def test_shuffle_batch_join_several_readers(tmp_path):
    files = []
    for f in range(4):
        p = tmp_path / f"part-{f}.tfrecords"
        write_mnist_like(p, 25, start=f * 25)
        files.append(str(p))

    def input_pipeline(filenames, batch_size, read_threads, num_epochs=None):
        filename_queue = tf.train.string_input_producer(
            filenames, num_epochs=num_epochs, shuffle=True)
        example_list = [read_and_decode(filename_queue)
                        for _ in range(read_threads)]
        min_after_dequeue = 50
        capacity = min_after_dequeue + 3 * batch_size
        example_batch, label_batch = tf.train.shuffle_batch_join(
            example_list, batch_size=batch_size, capacity=capacity,
            min_after_dequeue=min_after_dequeue)
        return example_batch, label_batch

    _, label_batch = input_pipeline(files, 10, read_threads=2, num_epochs=3)
    labels = run_guide_loop(label_batch)
    assert collections.Counter(labels) == collections.Counter(list(range(100)) * 3)


def test_batch_of_dict_and_single_tensor(tmp_path):
    data = np.arange(10, dtype=np.int64)
    [row] = tf.train.slice_input_producer([data], num_epochs=1, shuffle=False)
    single = tf.train.batch([row], batch_size=4, allow_smaller_final_batch=True)
    assert isinstance(single, tf.Tensor)
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(coord=coord)
        got = [sess.run(single).tolist() for _ in range(3)]
        assert got == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(single)
        coord.request_stop()
        coord.join(threads)


def test_dict_batches_keep_their_keys():
    x = tf.constant(np.arange(12, dtype=np.float32).reshape(6, 2))
    y = tf.constant(np.arange(6, dtype=np.int64))
    xr, yr = tf.train.slice_input_producer([x, y], num_epochs=1, shuffle=False)
    b = tf.train.batch({"x": xr, "y": yr}, batch_size=3)
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(coord=coord)
        first = sess.run(b)
        assert set(first) == {"x", "y"}
        assert first["y"].tolist() == [0, 1, 2]
        assert first["x"].tolist() == [[0, 1], [2, 3], [4, 5]]
        coord.request_stop()
        coord.join(threads)


# --- Filtering, sparse ------------------------------------------------------


def test_maybe_batch_filters_and_counts():
    data = np.arange(20, dtype=np.int64)
    [row] = tf.train.slice_input_producer([data], num_epochs=1, shuffle=False)
    # keep_input computed from the example: row < 12
    small = tf.cast(tf.minimum(tf.maximum(12 - row, 0), 1), tf.bool)
    b = tf.train.maybe_batch([row], keep_input=small, batch_size=4)
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(coord=coord)
        got = [sess.run(b).tolist() for _ in range(3)]
        assert got == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(b)
        coord.request_stop()
        coord.join(threads)
        [stage] = [s for s in sess.stats() if "batch" in s["name"]]
        assert stage["filtered"] == 8


def test_sparse_input_var_len_feature(tmp_path):
    path = tmp_path / "sparse.tfrecords"
    with tf.python_io.TFRecordWriter(str(path)) as w:
        for vals in ([1, 2], [], [3, 4, 5]):
            ex = tf.train.Example(features=tf.train.Features(feature={
                "tags": tf.train.Feature(int64_list=tf.train.Int64List(value=vals))}))
            w.write(ex.SerializeToString())
    q = tf.train.string_input_producer([str(path)], num_epochs=1, shuffle=False)
    _, ser = tf.TFRecordReader().read(q)
    parsed = tf.parse_single_example(ser, {"tags": tf.VarLenFeature(tf.int64)})
    assert isinstance(parsed["tags"], tf.SparseTensor)
    batch = tf.train.batch([parsed["tags"]], batch_size=3)
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(coord=coord)
        v = sess.run(batch)
        assert isinstance(v, tf.SparseTensorValue)
        assert v.indices.tolist() == [[0, 0], [0, 1], [2, 0], [2, 1], [2, 2]]
        assert v.values.tolist() == [1, 2, 3, 4, 5]
        assert v.dense_shape.tolist() == [3, 3]
        coord.request_stop()
        coord.join(threads)


# --- Preloaded data ---------------------------------------------------------


def test_preloaded_constant():
    training_data = np.arange(8, dtype=np.float32).reshape(4, 2)
    training_labels = np.array([0, 1, 0, 1], dtype=np.int32)
    with tf.Session():
        input_data = tf.constant(training_data)
        input_labels = tf.constant(training_labels)
        image, label = tf.train.slice_input_producer([input_data, input_labels], num_epochs=1, shuffle=False)
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(coord=coord)
        assert [label.eval() for _ in range(4)] == [0, 1, 0, 1]
        with pytest.raises(tf.errors.OutOfRangeError):
            image.eval()
        coord.request_stop()
        coord.join(threads)


def test_preloaded_variable():
    training_data = np.arange(20, dtype=np.float32).reshape(10, 2)
    training_labels = np.arange(10, dtype=np.int32)
    with tf.Session() as sess:
        data_initializer = tf.placeholder(dtype=training_data.dtype,
                                          shape=training_data.shape)
        label_initializer = tf.placeholder(dtype=training_labels.dtype,
                                           shape=training_labels.shape)
        input_data = tf.Variable(data_initializer, trainable=False, collections=[])
        input_labels = tf.Variable(label_initializer, trainable=False, collections=[])
        image, label = tf.train.slice_input_producer([input_data, input_labels], num_epochs=2)
        images, labels = tf.train.batch([image, label], batch_size=5)
        sess.run(input_data.initializer,
                 feed_dict={data_initializer: training_data})
        sess.run(input_labels.initializer,
                 feed_dict={label_initializer: training_labels})
        # the guide's variables are made with collections=[]: the global
        # initializer must not need their placeholders.
        sess.run(tf.group(tf.global_variables_initializer(), tf.local_variables_initializer()))
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess=sess, coord=coord)
        seen = []
        try:
            while True:
                im, lab = sess.run([images, labels])
                np.testing.assert_array_equal(im, training_data[lab])
                seen.extend(lab.tolist())
        except tf.errors.OutOfRangeError:
            pass
        coord.request_stop()
        coord.join(threads)
    assert collections.Counter(seen) == collections.Counter(list(range(10)) * 2)


# --- Threads, coordinator, errors ---------------------------------------------


def test_run_before_start_queue_runners_fails_instead_of_hanging(tmp_path):
    path = tmp_path / "a.tfrecords"
    write_mnist_like(path, 2)
    q = tf.train.string_input_producer([str(path)])
    _, label = read_and_decode(q)
    b = tf.train.batch([label], batch_size=2)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError):
            sess.run(b)


def test_missing_file_stops_the_coordinator_with_not_found(tmp_path):
    q = tf.train.string_input_producer([str(tmp_path / "nope.tfrecords")])
    _, label = read_and_decode(q)
    b = tf.train.batch([label], batch_size=2)
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(coord=coord)
        with pytest.raises(tf.errors.OpError):
            sess.run(b)
        coord.request_stop()
        with pytest.raises(tf.errors.NotFoundError, match="nope.tfrecords"):
            coord.join(threads)


def test_match_filenames_once_and_queue_summaries(tmp_path):
    for f in range(2):
        write_mnist_like(tmp_path / f"m-{f}.tfrecords", 5, start=5 * f)
    files = tf.train.match_filenames_once(str(tmp_path / "m-*.tfrecords"))
    q = tf.train.string_input_producer(files, num_epochs=1)
    _, label = read_and_decode(q)
    b = tf.train.batch([label], batch_size=5, capacity=20)
    summaries = tf.summary.merge_all()
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(coord=coord)
        got = sess.run(b).tolist() + sess.run(b).tolist()
        s = sess.run(summaries)
        assert "queue/batch/fraction_of_20_full" in s
        assert 0.0 <= s["queue/batch/fraction_of_20_full"] <= 1.0
        coord.request_stop()
        coord.join(threads)
    assert sorted(got) == list(range(10))


def test_nested_fetches_and_graph_as_default():
    g = tf.Graph()
    with g.as_default():
        a = tf.constant([1, 2, 3], dtype=tf.int64)
        b = a * 2
        op = tf.group(a, b)
    Pair = collections.namedtuple("Pair", "x y")
    with tf.Session(graph=g) as sess:
        out = sess.run({"p": Pair(a, b), "t": (a[0], a[-1]), "l": [b[1:]], "op": op})
    assert out["p"].x.tolist() == [1, 2, 3] and out["p"].y.tolist() == [2, 4, 6]
    assert out["t"] == (1, 3) and out["l"][0].tolist() == [4, 6] and out["op"] is None
    assert isinstance(out["t"], tuple)


def test_arithmetic_and_true_division():
    x = tf.constant([3, 4], dtype=tf.int32)
    with tf.Session() as sess:
        r = sess.run([x + 1, 10 - x, x * x, x / 2, -x])
    assert r[0].tolist() == [4, 5] and r[1].tolist() == [7, 6] and r[2].tolist() == [9, 16]
    assert r[3].dtype == np.float64 and r[3].tolist() == [1.5, 2.0]
    assert r[4].tolist() == [-3, -4]


def test_strings_come_out_as_object_arrays_of_bytes():
    s = tf.constant(["a", "bc"])
    with tf.Session() as sess:
        v = sess.run(s)
        assert v.dtype == object and v.tolist() == [b"a", b"bc"]
        assert sess.run(s[0]) == b"a"
