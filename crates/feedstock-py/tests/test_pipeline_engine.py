"""feedstock.Pipeline on the engine for every format and for map=
graph functions: text (CSV) lines, fixed-length records and whole files
read by the engine's sources, map= run per example in the reader
threads; each resumes through pickle exactly where an uninterrupted run
would have gone on. A map keeping state between examples (a random op)
runs on the graph, and state_dict() says why."""

import pickle

import numpy as np
import pytest

import feedstock as fs
from feedstock import errors
from feedstock.compat import v1 as tf
from feedstock.example import BytesList, Example, Feature, Features, Int64List
from feedstock.tfrecord import TFRecordWriter

PIXELS = 16


def write_mnist(tmp_path, n_files, per_file):
    rng = np.random.RandomState(0)
    images = {}
    files = []
    for f in range(n_files):
        p = tmp_path / f"mnist-{f}.tfrecord"
        with TFRecordWriter(str(p)) as w:
            for i in range(f * per_file, (f + 1) * per_file):
                img = rng.randint(0, 256, PIXELS).astype(np.uint8)
                images[i] = img
                ex = Example(features=Features(feature={
                    "image_raw": Feature(bytes_list=BytesList(value=[img.tobytes()])),
                    "label": Feature(int64_list=Int64List(value=[i])),
                }))
                w.write(ex.SerializeToString())
        files.append(str(p))
    return files, images


MNIST_SPEC = {"image_raw": fs.FixedLenFeature([], fs.string), "label": fs.FixedLenFeature([], fs.int64)}


def mnist_decode(ex):
    image = tf.decode_raw(ex["image_raw"], tf.uint8)
    image.set_shape([PIXELS])
    return {"image": tf.cast(image, tf.float32) * (1.0 / 255) - 0.5, "label": tf.cast(ex["label"], tf.int32)}


def resumes_exactly(make, stops, key):
    """Every stop: the batches before it, then those of a fresh pipeline
    loaded with the pickled state, equal the uninterrupted run's."""
    full = [b for b in make()]
    for stop in stops:
        pipe = make()
        it = iter(pipe)
        before = [next(it) for _ in range(stop)]
        state = pickle.loads(pickle.dumps(pipe.state_dict()))
        it.close()
        again = make()
        again.load_state_dict(state)
        got = before + list(again)
        assert len(got) == len(full), stop
        for a, b in zip(got, full):
            np.testing.assert_array_equal(key(a), key(b))
            if isinstance(a, dict):
                assert a.keys() == b.keys()
                for k in a:
                    np.testing.assert_array_equal(a[k], b[k])
            else:
                for x, y in zip(a, b):
                    np.testing.assert_array_equal(x, y)
    return full


@pytest.mark.parametrize("threads", [1, 2])
def test_mnist_map_runs_on_the_engine_and_resumes(tmp_path, threads):
    files, images = write_mnist(tmp_path, 3, 30)

    def make():
        return fs.Pipeline(files, features=MNIST_SPEC, map=mnist_decode, batch_size=8, num_epochs=2,
                           shuffle_buffer=20, seed=5, num_threads=threads)

    pipe = make()
    assert pipe._why_not_engine() is None
    full = resumes_exactly(make, [0, 1, 5, 11, 12, 22], key=lambda b: b["label"])
    labels = [i for b in full for i in b["label"].tolist()]
    assert sorted(labels) == sorted(list(range(90)) * 2)
    for b in full:
        assert b["image"].dtype == np.float32 and b["label"].dtype == np.int32
        for img, label in zip(b["image"], b["label"]):
            np.testing.assert_allclose(img, images[label].astype(np.float32) * np.float32(1 / 255) - 0.5, atol=1e-6)


def test_map_over_arrays_and_py_map_resume_on_the_engine():
    x = np.arange(40, dtype=np.int64)

    def make():
        return fs.Pipeline(arrays={"x": x}, map=lambda ex: {"x": ex["x"], "y": ex["x"] * 3}, batch_size=6,
                           num_epochs=2, seed=2, py_map=lambda ex: {"x": ex["x"], "z": ex["y"] + 1})

    full = resumes_exactly(make, [0, 3, 7, 13], key=lambda b: b["x"])
    for b in full:
        np.testing.assert_array_equal(b["z"], b["x"] * 3 + 1)
    assert sorted(i for b in full for i in b["x"].tolist()) == sorted(list(range(40)) * 2)


def write_csv(tmp_path, n_files, per_file):
    files = []
    for f in range(n_files):
        p = tmp_path / f"rows-{f}.csv"
        lines = ["id,score,name"] + [f"{i},{i / 4},n{i}" for i in range(f * per_file, (f + 1) * per_file)]
        p.write_text("\n".join(lines) + "\n")
        files.append(str(p))
    return files


def csv_columns(line):
    id_, score, name = tf.decode_csv(line, record_defaults=[[0], [0.0], [""]])
    return {"id": id_, "score": score, "name": name}


@pytest.mark.parametrize("shuffle", [False, True, "global"])
def test_csv_lines_resume_on_the_engine(tmp_path, shuffle):
    files = write_csv(tmp_path, 3, 17)

    def make():
        return fs.Pipeline(files, format="text", reader_options={"skip_header_lines": 1}, map=csv_columns,
                           batch_size=5, num_epochs=2, shuffle=shuffle, seed=9, keys=True)

    full = resumes_exactly(make, [0, 2, 7, 10, 19], key=lambda b: b["id"])
    ids = [i for b in full for i in b["id"].tolist()]
    assert sorted(ids) == sorted(list(range(51)) * 2)
    if shuffle is False:
        assert ids == list(range(51)) * 2
    first = full[0]
    np.testing.assert_allclose(first["score"], first["id"] / 4)
    assert [n.decode() for n in first["name"]] == [f"n{i}" for i in first["id"]]
    # Keys as the TextLineReader gives them: the file and the 1-based line.
    for key, i in zip(first["__key__"], first["id"]):
        assert key.decode() == f"{files[i // 17]}:{i % 17 + 2}"


def test_a_malformed_csv_line_names_the_file_and_line(tmp_path):
    p = tmp_path / "bad.csv"
    p.write_text("id,score\n1,0.5\n2,oops\n3,1.5\n")
    pipe = fs.Pipeline([str(p)], format="text", reader_options={"skip_header_lines": 1}, shuffle=False,
                       map=lambda line: tuple(tf.decode_csv(line, record_defaults=[[0], [0.0]])), batch_size=2)
    assert pipe._why_not_engine() is None
    with pytest.raises(errors.InvalidArgumentError, match="oops") as info:
        list(pipe)
    assert f"{p}:3" in str(info.value)


def write_fixed(tmp_path, n_files, per_file, header=2, footer=1):
    files = []
    for f in range(n_files):
        p = tmp_path / f"cifar-{f}.bin"
        body = b"".join(bytes([i % 256, i // 256, i % 7, 3, 4]) for i in range(f * per_file, (f + 1) * per_file))
        p.write_bytes(b"H" * header + body + b"F" * footer)
        files.append(str(p))
    return files


def cifar_like(record):
    raw = tf.decode_raw(record, tf.uint8)
    label = tf.cast(raw[0], tf.int64) + tf.cast(raw[1], tf.int64) * 256
    return {"label": label, "pixels": tf.cast(raw[2:], tf.float32) / 2.0}


def test_fixed_length_records_resume_on_the_engine(tmp_path):
    files = write_fixed(tmp_path, 2, 300)
    opts = {"record_bytes": 5, "header_bytes": 2, "footer_bytes": 1}

    def make():
        return fs.Pipeline(files, format="fixed_length", reader_options=opts, map=cifar_like, batch_size=32,
                           num_epochs=2, shuffle_buffer=50, seed=4, num_threads=2)

    full = resumes_exactly(make, [0, 1, 9, 18, 30], key=lambda b: b["label"])
    labels = [i for b in full for i in b["label"].tolist()]
    assert sorted(labels) == sorted(list(range(600)) * 2)
    b = full[0]
    np.testing.assert_array_equal(b["pixels"][:, 0], (b["label"] % 7) / 2.0)
    # Without a map: the records, as a tuple of one string column.
    plain = fs.Pipeline(files[:1], format="fixed_length", reader_options=opts, batch_size=4, shuffle=False)
    (first,) = next(iter(plain))
    assert first.tolist() == [bytes([i, 0, i % 7, 3, 4]) for i in range(4)]


def test_whole_files_resume_on_the_engine(tmp_path):
    files = []
    for i in range(7):
        p = tmp_path / f"f{i}.txt"
        p.write_bytes(b"x" * i)
        files.append(str(p))

    def make():
        return fs.Pipeline(files, format="whole_file", map=lambda v: {"n": tf.shape(tf.decode_raw(v, tf.uint8))[0]}, batch_size=2,
                           num_epochs=3, seed=1)

    full = resumes_exactly(make, [0, 3, 5], key=lambda b: b["n"])
    assert sorted(i for b in full for i in b["n"].tolist()) == sorted(list(range(7)) * 3)


def test_a_map_with_a_random_op_runs_on_the_graph_and_says_why(tmp_path):
    files, _ = write_mnist(tmp_path, 1, 4)

    def noisy(ex):
        return {"label": ex["label"], "noise": tf.random_uniform([2], seed=3)}

    pipe = fs.Pipeline(files, features=MNIST_SPEC, map=noisy, batch_size=2)
    with pytest.raises(errors.FailedPreconditionError, match="cannot checkpoint exactly: its map= function.*random"):
        pipe.state_dict()
    assert sorted(i for b in pipe for i in b["label"].tolist()) == [0, 1, 2, 3]


def test_a_state_of_another_map_is_refused(tmp_path):
    files, _ = write_mnist(tmp_path, 1, 10)
    args = dict(features=MNIST_SPEC, batch_size=2, seed=1)
    pipe = fs.Pipeline(files, map=mnist_decode, **args)
    it = iter(pipe)
    next(it)
    state = pipe.state_dict()
    it.close()

    def other(ex):
        out = mnist_decode(ex)
        out["image"] = out["image"] * 2.0
        return out

    with pytest.raises(errors.InvalidArgumentError, match="map"):
        fs.Pipeline(files, map=other, **args).load_state_dict(state)
    again = fs.Pipeline(files, map=mnist_decode, **args)
    again.load_state_dict(state)
    assert len(list(again)) == 4


@pytest.mark.parametrize("with_map", [False, True])
def test_features_out_of_sorted_order_keep_their_names(tmp_path, with_map):
    # The engine parses in the spec's order (label after image_raw here
    # when sorted, before it in the dict): each name gets its own values.
    files, images = write_mnist(tmp_path, 1, 6)
    spec = {"label": MNIST_SPEC["label"], "image_raw": MNIST_SPEC["image_raw"]}
    pipe = fs.Pipeline(files, features=spec, map=mnist_decode if with_map else None, batch_size=3, shuffle=False)
    batches = list(pipe)
    assert [i for b in batches for i in b["label"].tolist()] == list(range(6))
    if not with_map:
        assert [bytes(r) for b in batches for r in b["image_raw"]] == [images[i].tobytes() for i in range(6)]
