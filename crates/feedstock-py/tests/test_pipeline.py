import collections
import os

import numpy as np
import pytest

import feedstock as fs
from feedstock import _shard, errors
from feedstock.compat import v1 as tf
from feedstock.example import BytesList, Example, Feature, Features, Int64List
from feedstock.tfrecord import TFRecordWriter
from feedstock.torch import IterableDataset


def write_shards(tmp_path, n_files, per_file):
    files = []
    for f in range(n_files):
        p = tmp_path / f"part-{f:02d}.tfrecord"
        with TFRecordWriter(str(p)) as w:
            for i in range(f * per_file, (f + 1) * per_file):
                ex = Example(features=Features(feature={
                    "id": Feature(int64_list=Int64List(value=[i])),
                    "pix": Feature(bytes_list=BytesList(value=[bytes([i % 256] * 4)])),
                }))
                w.write(ex.SerializeToString())
        files.append(str(p))
    return files


SPEC = {"id": fs.FixedLenFeature([], fs.int64), "pix": fs.FixedLenFeature([], fs.string)}


def decode(ex):
    pix = tf.cast(tf.decode_raw(ex["pix"], tf.uint8), tf.float32) / 255.0
    return {"id": ex["id"], "pix": pix}


@pytest.mark.parametrize("shuffle", [False, True])
def test_every_example_exactly_num_epochs_times(tmp_path, shuffle):
    files = write_shards(tmp_path, 3, 40)
    pipe = fs.Pipeline(str(tmp_path / "part-*.tfrecord"), features=SPEC, map=decode, batch_size=16,
                       num_epochs=3, shuffle=shuffle, seed=1)
    ids = []
    for batch in pipe:
        assert set(batch) == {"id", "pix"}
        assert batch["pix"].dtype == np.float32 and batch["pix"].shape[1:] == (4,)
        np.testing.assert_allclose(batch["pix"][:, 0], (batch["id"] % 256) / 255.0, rtol=1e-6)
        ids.extend(batch["id"].tolist())
    assert collections.Counter(ids) == collections.Counter(list(range(120)) * 3)
    assert pipe.examples == 360 and pipe.batches == 23
    if not shuffle:
        assert ids == list(range(120)) * 3
    assert len(files) == 3


def test_arrays_and_tuples_and_drop_remainder():
    x = np.arange(10, dtype=np.float32)
    pipe = fs.Pipeline(arrays=(x, x * 2), batch_size=4, num_epochs=1, shuffle=False, drop_remainder=True)
    assert pipe.output_shapes == ([4], [4])
    seen = []
    with pipe:
        for a, b in fs.jax_iterator(pipe):
            assert a.shape == (4,)
            np.testing.assert_array_equal(b, a * 2)
            seen.extend(a.tolist())
            stats = pipe.stats
    assert seen == list(range(8))
    [stage] = [s for s in stats if s["name"] == "batch"]
    assert stage["batch_size"] == 4


def test_jax_iterator_needs_fixed_shapes():
    pipe = fs.Pipeline(arrays={"x": np.arange(3)}, batch_size=2)
    with pytest.raises(ValueError, match="drop_remainder"):
        fs.jax_iterator(pipe)


def test_py_map_runs_per_example_and_its_exception_reaches_the_loop():
    pipe = fs.Pipeline(arrays={"x": np.arange(6)}, batch_size=3, shuffle=False,
                       py_map=lambda ex: {"x": ex["x"], "sq": ex["x"] ** 2})
    got = [b["sq"].tolist() for b in pipe]
    assert got == [[0, 1, 4], [9, 16, 25]]

    def boom(ex):
        if ex["x"] == 4:
            raise RuntimeError("bad example 4")
        return ex

    pipe = fs.Pipeline(arrays={"x": np.arange(6)}, batch_size=3, shuffle=False, py_map=boom)
    with pytest.raises(RuntimeError, match="bad example 4"):
        for _ in pipe:
            pass


@pytest.mark.parametrize("graph", [False, True])
def test_breaking_out_stops_and_joins_the_threads(tmp_path, graph):
    # A map drawing random numbers runs on the graph's queue runners
    # (with queue summaries); the same pipeline without it on the engine
    # (no queues).
    def noisy(ex):
        return {"id": ex["id"], "noise": tf.random_uniform([], seed=1)}

    write_shards(tmp_path, 2, 50)
    pipe = fs.Pipeline(str(tmp_path / "part-*.tfrecord"), features=SPEC, batch_size=8, num_epochs=None,
                       map=noisy if graph else decode)
    with pipe:
        for i, batch in enumerate(pipe):
            if graph:
                assert pipe.queue_fullness
            else:
                assert pipe.stats[0]["batches"] == i + 1
            if i == 5:
                break
    assert pipe._session is None and pipe._native is None and pipe.stats == []


def test_corrupt_file_error_reaches_the_loop(tmp_path):
    [f] = write_shards(tmp_path, 1, 5)
    data = bytearray(open(f, "rb").read())
    data[-3] ^= 1
    open(f, "wb").write(bytes(data))
    pipe = fs.Pipeline([f], features=SPEC, batch_size=2, shuffle=False)
    with pytest.raises(errors.DataLossError) as info:
        list(pipe)
    assert info.value.file == f


def test_corrupt_records_skipped_within_a_budget_are_counted(tmp_path):
    # File 1's last record (id 9) is damaged: asked to skip, the pipeline
    # gives every other example, each epoch, and counts the damaged
    # region once (the engine indexes each file once, around its damage,
    # whatever the epochs); past the budget it fails naming the file.
    files = write_shards(tmp_path, 2, 5)
    data = bytearray(open(files[1], "rb").read())
    data[-3] ^= 1
    open(files[1], "wb").write(bytes(data))
    pipe = fs.Pipeline(files, features=SPEC, batch_size=4, num_epochs=2, shuffle=False,
                       reader_options={"skip_corrupt": {"max_per_file": 1, "max_fraction": 0.5}})
    assert pipe.skip_stats is None
    ids = [i for batch in pipe for i in batch["id"].tolist()]
    assert ids == [0, 1, 2, 3, 4, 5, 6, 7, 8] * 2
    stats = pipe.skip_stats
    assert stats["skipped"] == 1 and stats["skipped_bytes"] > 0
    assert [f["file"] for f in stats["files"]] == [files[1]]
    strict = fs.Pipeline(files, features=SPEC, batch_size=4, shuffle=False,
                         reader_options={"skip_corrupt": {"max_per_file": 0}})
    with pytest.raises(errors.DataLossError) as info:
        list(strict)
    assert info.value.file == files[1]
    with pytest.raises(ValueError, match="unknown key"):
        fs.Pipeline(files, features=SPEC, reader_options={"skip_corrupt": {"max_per_files": 1}})
    # It runs on the engine, so it checkpoints: a resume gives the rest.
    pipe = fs.Pipeline(files, features=SPEC, batch_size=4, num_epochs=2, shuffle="global", seed=3,
                       reader_options={"skip_corrupt": {"max_per_file": 1}})
    it = iter(pipe)
    first = [next(it)["id"].tolist() for _ in range(2)]
    state = pipe.state_dict()
    pipe.stop()
    again = fs.Pipeline(files, features=SPEC, batch_size=4, num_epochs=2, shuffle="global", seed=3,
                        reader_options={"skip_corrupt": {"max_per_file": 1}})
    again.load_state_dict(state)
    rest = [b["id"].tolist() for b in again]
    full = [b["id"].tolist() for b in fs.Pipeline(files, features=SPEC, batch_size=4, num_epochs=2,
                                                  shuffle="global", seed=3,
                                                  reader_options={"skip_corrupt": {"max_per_file": 1}})]
    assert first + rest == full


def write_sidecars(files):
    """Hidden sidecar indexes beside `files`, named as `feedstock index`
    names them; their bytes start as a real index's do, so a reader that
    opened one would fail."""
    sides = []
    for f in files:
        d, name = os.path.split(f)
        side = os.path.join(d, f".{name}.feedstock-index")
        with open(side, "wb") as out:
            out.write(b"fsindex\0\x01\x00\x00\x00" + bytes(range(64)))
        sides.append(side)
    return sides


@pytest.mark.parametrize("pattern", ["part-*", "*", "part-*.tfrecord"])
def test_globs_leave_sidecar_indexes_out(tmp_path, pattern):
    # Sidecars of files that are not there: the engine reads the sidecar
    # of a file it reads (and refuses a damaged one), so these are only
    # in the directory for the glob to leave out.
    files = write_shards(tmp_path, 3, 10)
    write_sidecars([os.path.join(os.path.dirname(f), "part-9" + os.path.basename(f)[6:]) for f in files])
    pipe = fs.Pipeline(str(tmp_path / pattern), features=SPEC, batch_size=7, shuffle=False)
    ids = [i for batch in pipe for i in batch["id"].tolist()]
    assert ids == list(range(30))


def test_a_sidecar_given_as_data_is_named_as_an_index(tmp_path):
    [side] = write_sidecars(write_shards(tmp_path, 1, 5))
    pipe = fs.Pipeline([side], features=SPEC, batch_size=2, shuffle=False)
    with pytest.raises(errors.InvalidArgumentError, match="record index") as info:
        list(pipe)
    assert info.value.file == side


def test_no_files_matching_is_not_found(tmp_path):
    with pytest.raises(errors.NotFoundError):
        fs.Pipeline(str(tmp_path / "none-*.tfrecord"), features=SPEC)


# --- the torch adapter's split, with simulated workers and ranks -----------


@pytest.mark.parametrize("num_workers", [1, 2, 4])
@pytest.mark.parametrize("world_size", [1, 2])
def test_torch_split_files_exactly_once(tmp_path, num_workers, world_size):
    files = write_shards(tmp_path, 8, 10)
    ids = []
    for rank in range(world_size):
        ds = IterableDataset(files, rank=rank, world_size=world_size, as_torch=False, features=SPEC,
                             batch_size=4, num_epochs=2, seed=7)
        for w in range(num_workers):
            for batch in ds.shard(w, num_workers):
                ids.extend(batch["id"].tolist())
    assert collections.Counter(ids) == collections.Counter(list(range(80)) * 2)


@pytest.mark.parametrize("remainder", ["drop", "pad"])
@pytest.mark.parametrize("num_workers", [1, 2, 4])
def test_torch_split_arrays_equally_over_two_ranks(num_workers, remainder):
    # 37 rows over 2, 4 or 8 readers: every reader the same number of
    # rows and batches each epoch; the rest dropped or padded, counted.
    x = np.arange(37)
    ids, per_reader, counted = [], [], 0
    for rank in range(2):
        ds = IterableDataset(arrays={"x": x}, rank=rank, world_size=2, as_torch=False, batch_size=5,
                             num_epochs=3, remainder=remainder)
        for w in range(num_workers):
            pipe = ds.shard(w, num_workers)
            got = [v for b in pipe for v in b["x"].tolist()]
            per_reader.append(len(got))
            ids.extend(got)
            counted += pipe.shard_stats[{"drop": "dropped", "pad": "padded"}[remainder]]
    readers = 2 * num_workers
    assert len(set(per_reader)) == 1
    seen = collections.Counter(ids)
    if remainder == "drop":
        assert per_reader[0] == 37 // readers * 3
        assert all(c == 3 for c in seen.values())
        assert counted == (37 - len(seen)) * 3 == 37 * 3 - len(ids)
    else:
        assert per_reader[0] == -(-37 // readers) * 3
        assert set(seen) == set(range(37))
        assert counted == len(ids) - 37 * 3


def test_torch_more_readers_than_files_split_by_record(tmp_path):
    # 2 files of 3 records over 2 ranks x 2 workers: record-level, equal.
    files = write_shards(tmp_path, 2, 3)
    per_reader, ids = [], []
    for rank in range(2):
        ds = IterableDataset(files, rank=rank, world_size=2, as_torch=False, features=SPEC, batch_size=2,
                             seed=3, remainder="pad", keys=True)
        for w in range(2):
            pipe = ds.shard(w, 2)
            got = [(k, i) for b in pipe for k, i in zip(b["__key__"].tolist(), b["id"].tolist())]
            per_reader.append(len(got))
            ids.extend(got)
            assert pipe.shard_stats["padded"] == sum(k.startswith(b"<pad>") for k, _ in got)
    assert per_reader == [2, 2, 2, 2]
    real = [i for k, i in ids if not k.startswith(b"<pad>")]
    assert sorted(real) == list(range(6))
    assert _shard.shard_index(1, 2, 3, 4) == (7, 8)
    with pytest.raises(ValueError):
        _shard.shard_index(2, 2, 0, 1)


def test_a_shuffled_split_of_files_needs_one_seed(tmp_path):
    files = write_shards(tmp_path, 4, 2)
    ds = IterableDataset(files, rank=0, world_size=2, as_torch=False, features=SPEC)
    with pytest.raises(errors.InvalidArgumentError, match="needs a seed"):
        ds.shard(0, 1)


def test_import_feedstock_does_not_import_torch():
    import subprocess
    import sys

    code = "import sys, feedstock; feedstock.Pipeline; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


@pytest.mark.parametrize("remainder", ["drop", "pad"])
@pytest.mark.parametrize("count", [1, 2, 3, 7])
def test_shard_splits_the_files_across_hosts_exactly(tmp_path, count, remainder):
    # 4 files of 5 examples over `count` hosts (file level for up to 4,
    # record level for 7); every host the same number of batches.
    write_shards(tmp_path, 4, 5)
    epochs = 2
    per_host = []
    counted = [0, 0]  # dropped, padded
    for rank in range(count):
        pipe = fs.Pipeline(str(tmp_path / "part-*.tfrecord"), features=SPEC, batch_size=3,
                           num_epochs=epochs, seed=5).shard(rank, count, remainder=remainder)
        sizes, ids = [], []
        for batch in pipe:
            sizes.append(len(batch["id"]))
            ids.extend(batch["id"].tolist())
        per_host.append((sizes, ids))
        counted[0] += pipe.shard_stats["dropped"]
        counted[1] += pipe.shard_stats["padded"]
    assert all(sizes == per_host[0][0] for sizes, _ in per_host)
    # What the policy left out or added is counted, exactly.
    delivered = sum(len(ids) for _, ids in per_host)
    assert delivered - counted[1] + counted[0] == 20 * epochs
    assert counted[remainder == "drop"] == 0
    seen = collections.Counter(i for _, ids in per_host for i in ids)
    if remainder == "pad" or 20 % count == 0:
        # Padding repeats a host's own examples: every example at least
        # once per epoch, the extra ones exactly the padding.
        assert all(seen[i] >= epochs for i in range(20))
    if remainder == "drop":
        assert all(c <= epochs for c in seen.values())
    assert set(seen) <= set(range(20))


def test_compat_string_input_producer_takes_a_shard(tmp_path):
    files = write_shards(tmp_path, 1, 7)
    got = []
    for rank in range(3):
        with tf.Graph().as_default():
            q = tf.train.string_input_producer(files, num_epochs=1, shuffle=False, shard=(rank, 3), remainder="pad")
            key, value = tf.TFRecordReader().read(q)
            with tf.Session() as sess:
                coord = tf.train.Coordinator()
                threads = tf.train.start_queue_runners(sess=sess, coord=coord)
                keys = []
                try:
                    while True:
                        keys.append(sess.run(key))
                except tf.errors.OutOfRangeError:
                    pass
                coord.request_stop()
                coord.join(threads)
        got.append(keys)
    # 7 records over 3 hosts, padded to 3 each: host 1 and 2 pad one.
    assert [len(k) for k in got] == [3, 3, 3]
    pads = [k for keys in got for k in keys if k.startswith(b"<pad>")]
    assert len(pads) == 2
    real = {k for keys in got for k in keys if not k.startswith(b"<pad>")}
    assert len(real) == 7
    with pytest.raises(ValueError, match="remainder"):
        with tf.Graph().as_default():
            tf.train.string_input_producer(files, shard=(0, 2), seed=1, remainder="spread")
