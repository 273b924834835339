"""Readers' counters and state ops, producers' queues and the producers'
refusals, as TensorFlow 2.21 (tf.compat.v1) gives them: the expected
sequences here were observed running the same programs under TensorFlow."""

import numpy as np
import pytest

import feedstock.compat.v1 as tf


@pytest.fixture
def text_files(tmp_path):
    files = []
    for name, n in [("a", 3), ("b", 2), ("c", 4)]:
        p = tmp_path / f"{name}.txt"
        p.write_text("".join(f"{name}{i}\n" for i in range(n)))
        files.append(str(p))
    return files


class Running:
    """A session with its queue runners started, stopped on exit."""

    def __enter__(self):
        self.sess = tf.Session()
        self.sess.run(tf.local_variables_initializer())
        self.coord = tf.train.Coordinator()
        self.threads = tf.train.start_queue_runners(self.sess, coord=self.coord)
        return self.sess

    def __exit__(self, *exc):
        self.coord.request_stop()
        self.coord.join(self.threads)
        self.sess.close()


def test_counters_follow_tensorflows_reader(text_files):
    q = tf.train.string_input_producer(text_files, shuffle=False, num_epochs=1)
    r = tf.TextLineReader()
    k, _ = r.read(q)
    ks, _ = r.read_up_to(q, 2)
    counts = [r.num_records_produced(), r.num_work_units_completed()]
    assert counts[0].dtype == tf.int64 and counts[0].shape.as_list() == []
    with Running() as s:
        seen = [(s.run(k).decode().rsplit("/", 1)[1], *s.run(counts)) for _ in range(3)]
        # A file counts as completed once read() has seen its end: not
        # after its last record, but when the next read moves on.
        assert seen == [("a.txt:1", 1, 0), ("a.txt:2", 2, 0), ("a.txt:3", 3, 0)]
        assert [s.run(counts) for _ in range(1)] == [[3, 0]]
        assert len(s.run(ks)) == 2 and s.run(counts) == [5, 1]
        # A read_up_to batch that ends a file counts the file at once.
        assert len(s.run(ks)) == 2 and s.run(counts) == [7, 2]


def test_reset_drops_the_current_file_and_zeroes_the_counters(text_files):
    q = tf.train.string_input_producer(text_files, shuffle=False, num_epochs=1)
    r = tf.TextLineReader()
    k, _ = r.read(q)
    with Running() as s:
        assert s.run(k).endswith(b"a.txt:1")
        s.run(r.reset())
        assert s.run([r.num_records_produced(), r.num_work_units_completed()]) == [0, 0]
        assert s.run(k).endswith(b"b.txt:1")


def test_a_saved_state_resumes_at_the_next_record(text_files):
    q = tf.train.string_input_producer(text_files, shuffle=False, num_epochs=2)
    r = tf.TextLineReader()
    assert r.supports_serialize
    k, _ = r.read(q)
    state = r.serialize_state()
    with Running() as s:
        s.run(k)
        saved = s.run(state)
        assert isinstance(saved, bytes) and saved
        after = [s.run(k) for _ in range(2)]
        s.run(r.restore_state(saved))
        assert [s.run(k) for _ in range(2)] == after
        assert s.run(r.num_records_produced()) == 3


def test_a_producers_queue_has_size_close_and_a_ref(text_files):
    q = tf.train.string_input_producer(text_files, shuffle=False, num_epochs=1, capacity=8)
    k, _ = tf.TextLineReader().read(q.queue_ref)
    with Running() as s:
        import time

        for _ in range(100):
            if s.run(q.size()) == 3:
                break
            time.sleep(0.01)
        assert s.run(q.size()) == 3
        assert s.run(k).endswith(b"a.txt:1")
        # One epoch in: the runner has closed the queue behind it.
        assert s.run(q.is_closed())


def test_counts_may_be_constant_tensors(text_files):
    q = tf.train.string_input_producer(text_files, shuffle=False, num_epochs=1)
    ks, _ = tf.TextLineReader().read_up_to(q, tf.constant(2, tf.int64))
    r = tf.train.range_input_producer(tf.constant(3), shuffle=False, num_epochs=1)
    with Running() as s:
        assert len(s.run(ks)) == 2
        assert sorted(s.run(r.dequeue_many(3)).tolist()) == [0, 1, 2]


@pytest.mark.parametrize(
    "value, error",
    [("ab", ValueError), (b"ab", ValueError), ([1, 2], TypeError), (np.array([["a", "b"], ["c", "d"]]), ValueError)],
)
def test_string_input_producer_refuses_what_tensorflow_refuses(value, error):
    with pytest.raises(error):
        tf.train.string_input_producer(value)


def test_string_input_producer_refuses_a_constant_of_another_rank():
    with pytest.raises(ValueError, match="rank 1"):
        tf.train.string_input_producer(tf.constant([["a", "b"], ["c", "d"]]))
    with pytest.raises(TypeError):
        tf.train.string_input_producer(tf.constant([1, 2]))


def test_bad_reader_and_producer_arguments_are_refused_when_built():
    with pytest.raises(ValueError, match="skip_header_lines"):
        tf.TextLineReader(skip_header_lines=-1)
    with pytest.raises(ValueError, match="record_bytes"):
        tf.FixedLengthRecordReader(record_bytes=-1)
    with pytest.raises(ValueError, match="at least one tensor"):
        tf.train.slice_input_producer([])


@pytest.mark.parametrize("make", [tf.TextLineReader, tf.TFRecordReader])
def test_an_empty_file_fails_unless_allowed(tmp_path, make, text_files):
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    q = tf.train.string_input_producer([str(empty)], shuffle=False, num_epochs=1)
    _, v = make().read(q)
    with Running() as s, pytest.raises(tf.errors.DataLossError, match="allow_empty_files") as e:
        s.run(v)
    assert e.value.file == str(empty)
    tf.reset_default_graph()
    q = tf.train.string_input_producer([str(empty), text_files[1]], shuffle=False, num_epochs=1)
    r = tf.TextLineReader(allow_empty_files=True)
    k, _ = r.read(q)
    with Running() as s:
        assert [s.run(k).rsplit(b"/", 1)[1] for _ in range(2)] == [b"b.txt:1", b"b.txt:2"]
        assert s.run(r.num_work_units_completed()) == 1


def test_the_writer_takes_bytearrays_and_bytes_paths(tmp_path):
    path = bytes(tmp_path / "x.tfrecord")
    with tf.io.TFRecordWriter(path) as w:
        w.write(bytearray(b"xy"))
        w.write(b"z")
    assert list(tf.python_io.tf_record_iterator(path)) == [b"xy", b"z"]


def test_match_filenames_once_matches_as_tensorflow(tmp_path, monkeypatch):
    for name in ["a.txt", "b.txt", ".hidden.txt", "x[1].txt"]:
        (tmp_path / name).write_text("x\n")
    monkeypatch.chdir(tmp_path)
    # TensorFlow's results over this directory, for each pattern.
    cases = {
        "*.txt": [b"./.hidden.txt", b"./a.txt", b"./b.txt", b"./x[1].txt"],
        "[^a].txt": [b"./b.txt"],
        "x\\[1\\].txt": [b"./x[1].txt"],
        f"{tmp_path}/?.txt": [f"{tmp_path}/a.txt".encode(), f"{tmp_path}/b.txt".encode()],
        "zzz*": [],
    }
    matches = {p: tf.train.match_filenames_once(p) for p in cases}
    with tf.Session() as s:
        s.run(tf.local_variables_initializer())
        assert {p: s.run(m).tolist() for p, m in matches.items()} == cases


def test_a_producer_over_a_match_of_no_file_says_so(tmp_path):
    q = tf.train.string_input_producer(tf.train.match_filenames_once(str(tmp_path / "zzz*")))
    _, v = tf.TextLineReader().read(q)
    with tf.Session() as s, pytest.raises(tf.errors.InvalidArgumentError, match="no file names"):
        s.run(tf.local_variables_initializer())
        tf.train.start_queue_runners(s, coord=tf.train.Coordinator())
        s.run(v)


def test_bytes_after_a_zlib_stream_are_data_loss_not_more_records(tmp_path):
    one = tmp_path / "one.tfrecord"
    with tf.io.TFRecordWriter(str(one), "ZLIB") as w:
        w.write(b"r1")
    two = tmp_path / "two.tfrecord"
    two.write_bytes(one.read_bytes() * 2)
    # TensorFlow reads b"r1" and silently ignores the second stream.
    with pytest.raises(tf.errors.DataLossError, match="after the end of the zlib stream") as e:
        list(tf.io.tf_record_iterator(str(two), "ZLIB"))
    assert e.value.file == str(two)


def test_read_file_reads_the_file_each_filename_names(tmp_path):
    paths = []
    for i in range(3):
        p = tmp_path / f"f{i}.bin"
        p.write_bytes(bytes([i]) * (i + 1))
        paths.append(str(p))
    name, label = tf.train.slice_input_producer([paths, [10, 11, 12]], shuffle=False, num_epochs=1)
    contents = tf.read_file(name)
    assert contents.dtype == tf.string and contents.shape.as_list() == []
    with Running() as s:
        got = [s.run([contents, label]) for _ in range(3)]
    assert got == [[b"\x00", 10], [b"\x01\x01", 11], [b"\x02\x02\x02", 12]]
    missing = tf.io.read_file(str(tmp_path / "nope"))
    with tf.Session() as s, pytest.raises(tf.errors.NotFoundError) as e:
        s.run(missing)
    assert e.value.file == str(tmp_path / "nope")


def test_matching_files_matches_each_run(tmp_path):
    p = tf.placeholder(tf.string, [])
    m = tf.io.matching_files(p)
    (tmp_path / "a.txt").write_text("x")
    with tf.Session() as s:
        assert s.run(m, {p: str(tmp_path / "*.txt")}).tolist() == [str(tmp_path / "a.txt").encode()]
        (tmp_path / "b.txt").write_text("x")
        assert len(s.run(m, {p: str(tmp_path / "*.txt")})) == 2
        assert s.run(m, {p: str(tmp_path / "*.csv")}).tolist() == []


def test_gfile_helpers_work_on_local_files(tmp_path):
    d = str(tmp_path / "x" / "y")
    tf.gfile.MakeDirs(d)
    assert tf.io.gfile.isdir(d) and tf.gfile.Exists(d)
    with tf.gfile.GFile(f"{d}/f.txt", "w") as f:
        f.write("hello")
    with tf.io.gfile.GFile(f"{d}/f.txt") as f:
        assert f.read() == "hello"
    assert tf.gfile.Glob(f"{d}/*.txt") == [f"{d}/f.txt"]
    assert tf.io.gfile.glob(f"{d}/*.csv") == []
    assert tf.gfile.ListDirectory(d) == ["f.txt"]
    with pytest.raises(tf.errors.NotFoundError):
        tf.gfile.GFile(f"{d}/nope")


def test_input_producer_checks_element_shape():
    # TensorFlow 2.21's messages.
    with pytest.raises(ValueError, match=r"^Shapes \(2,\) and \(3,\) are not compatible$"):
        tf.train.input_producer(tf.constant([[1, 2], [3, 4]]), element_shape=[3])
    with pytest.raises(ValueError, match=r"^Shapes \(2,\) and \(\) are not compatible$"):
        tf.train.input_producer(tf.constant([[1, 2], [3, 4]]), element_shape=[])
    q = tf.train.input_producer(tf.constant([[1, 2], [3, 4]]), element_shape=[2], shuffle=False, num_epochs=1)
    with Running() as s:
        assert s.run(q.dequeue()).tolist() == [1, 2]
