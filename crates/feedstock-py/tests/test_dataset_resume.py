"""feedstock.Pipeline on the engine: state_dict() / load_state_dict()
resume exactly (through pickle, at many stops, whatever the thread
count), a state of other settings is refused, shards are disjoint and
equal; feedstock.torch.IterableDataset's per-worker pair, duck-typed."""

import collections
import pickle

import numpy as np
import pytest

import feedstock as fs
from feedstock import errors
from feedstock.compat import v1 as tf
from feedstock.example import BytesList, Example, Feature, Features, Int64List
from feedstock.tfrecord import TFRecordWriter
from feedstock.torch import IterableDataset

SPEC = {"id": fs.FixedLenFeature([], fs.int64), "pix": fs.FixedLenFeature([], fs.string)}


def write_shards(tmp_path, n_files, per_file):
    files = []
    for f in range(n_files):
        p = tmp_path / f"part-{f:02d}.tfrecord"
        with TFRecordWriter(str(p)) as w:
            for i in range(f * per_file, (f + 1) * per_file):
                ex = Example(features=Features(feature={
                    "id": Feature(int64_list=Int64List(value=[i])),
                    "pix": Feature(bytes_list=BytesList(value=[bytes([i % 256] * 3)])),
                }))
                w.write(ex.SerializeToString())
        files.append(str(p))
    return files


def ids_of(batches):
    return [b["id"].tolist() for b in batches]


SETTINGS = [
    dict(shuffle=False),
    dict(shuffle=True, shuffle_buffer=0),
    dict(shuffle=True, shuffle_buffer=17),
    dict(shuffle="global"),
]


@pytest.mark.parametrize("threads", [1, 2, 4])
@pytest.mark.parametrize("settings", SETTINGS, ids=lambda s: str(s["shuffle"]) + str(s.get("shuffle_buffer")))
def test_resume_through_pickle_gives_the_uninterrupted_run(tmp_path, settings, threads):
    files = write_shards(tmp_path, 3, 23)
    args = dict(features=SPEC, batch_size=5, num_epochs=2, seed=11, num_threads=threads, **settings)
    full = ids_of(fs.Pipeline(files, **args))
    assert sorted(i for b in full for i in b) == sorted(list(range(69)) * 2)
    if settings["shuffle"]:
        assert full != ids_of(fs.Pipeline(files, **{**args, "shuffle": False, "shuffle_buffer": None}))
    # Stops: the start, mid-file, mid-epoch, across the epoch, near the end.
    for stop in [0, 1, 4, 13, 14, 27]:
        pipe = fs.Pipeline(files, **args)
        it = iter(pipe)
        before = [next(it)["id"].tolist() for _ in range(stop)]
        state = pickle.loads(pickle.dumps(pipe.state_dict()))
        it.close()
        assert state["batches"] == stop
        # Another thread count may resume it.
        again = fs.Pipeline(files, **{**args, "num_threads": 1 + threads % 3})
        again.load_state_dict(state)
        after = ids_of(again)
        assert before + after == full, stop
        assert again.batches == len(full)


def test_arrays_resume_and_tuples_stay_tuples():
    x = np.arange(50, dtype=np.float32)
    args = dict(arrays=(x, x * 2), batch_size=6, num_epochs=3, seed=3, shuffle=True)
    full = [a.tolist() for a, _ in fs.Pipeline(**args)]
    assert sorted(v for b in full for v in b) == sorted(list(range(50)) * 3)
    pipe = fs.Pipeline(**args)
    it = iter(pipe)
    before = []
    for _ in range(10):
        a, b = next(it)
        np.testing.assert_array_equal(b, a * 2)
        before.append(a.tolist())
    state = pickle.loads(pickle.dumps(pipe.state_dict()))
    it.close()
    again = fs.Pipeline(**args)
    again.load_state_dict(state)
    assert before + [a.tolist() for a, _ in again] == full


def test_a_pipeline_without_a_seed_adopts_the_states(tmp_path):
    files = write_shards(tmp_path, 2, 20)
    pipe = fs.Pipeline(files, features=SPEC, batch_size=4, shuffle=True, shuffle_buffer=8)
    it = iter(pipe)
    before = [next(it)["id"].tolist() for _ in range(3)]
    state = pipe.state_dict()
    rest = [b["id"].tolist() for b in it]
    again = fs.Pipeline(files, features=SPEC, batch_size=4, shuffle=True, shuffle_buffer=8)
    again.load_state_dict(state)
    assert ids_of(again) == rest
    assert len(before) == 3


@pytest.mark.parametrize("change, word", [
    (dict(batch_size=4), "batch_size"),
    (dict(shuffle="global"), "shuffle"),
    (dict(num_epochs=3), "num_epochs"),
    (dict(seed=12), "seed"),
    (dict(drop_remainder=True), "drop_remainder"),
])
def test_a_state_of_other_settings_is_refused(tmp_path, change, word):
    files = write_shards(tmp_path, 2, 10)
    args = dict(features=SPEC, batch_size=5, num_epochs=2, seed=11)
    pipe = fs.Pipeline(files, **args)
    it = iter(pipe)
    next(it)
    state = pipe.state_dict()
    it.close()
    other = fs.Pipeline(files, **{**args, **change})
    with pytest.raises(errors.InvalidArgumentError, match=word):
        other.load_state_dict(state)


def test_a_state_of_other_files_is_refused(tmp_path):
    files = write_shards(tmp_path, 2, 10)
    pipe = fs.Pipeline(files, features=SPEC, batch_size=5, seed=1)
    state = pipe.state_dict()
    with pytest.raises(errors.InvalidArgumentError, match="files"):
        fs.Pipeline(files[:1], features=SPEC, batch_size=5, seed=1).load_state_dict(state)
    with pytest.raises(errors.InvalidArgumentError, match="version"):
        fs.Pipeline(files, features=SPEC, batch_size=5, seed=1).load_state_dict({"version": 99})


def test_load_state_dict_after_the_first_batch_is_refused(tmp_path):
    files = write_shards(tmp_path, 1, 10)
    pipe = fs.Pipeline(files, features=SPEC, batch_size=2, seed=1)
    state = pipe.state_dict()
    it = iter(pipe)
    next(it)
    with pytest.raises(RuntimeError, match="before the first batch"):
        pipe.load_state_dict(state)
    it.close()


def test_graph_pipelines_say_why_they_cannot_checkpoint(tmp_path):
    files = write_shards(tmp_path, 1, 4)
    # A map drawing random numbers keeps state between examples: it runs
    # on the graph's queue runners (map= without state runs on the engine).
    def noisy(ex):
        return {"id": ex["id"], "noise": tf.random_uniform([], seed=1)}

    pipe = fs.Pipeline(files, features=SPEC, batch_size=2, map=noisy)
    with pytest.raises(errors.FailedPreconditionError, match="cannot checkpoint exactly: its map= function"):
        pipe.state_dict()
    with pytest.raises(errors.FailedPreconditionError, match="RandomUniform"):
        pipe.state_dict()
    with pytest.raises(ValueError, match='shuffle="global"'):
        fs.Pipeline(files, features=SPEC, shuffle="global", map=noisy)


def test_a_corrupt_record_raises_naming_the_file(tmp_path):
    [f] = write_shards(tmp_path, 1, 6)
    data = bytearray(open(f, "rb").read())
    data[40] ^= 0xFF
    open(f, "wb").write(bytes(data))
    with pytest.raises(errors.DataLossError) as info:
        list(fs.Pipeline([f], features=SPEC, batch_size=2, shuffle=False))
    assert info.value.file == f


@pytest.mark.parametrize("count", [2, 3, 4])
@pytest.mark.parametrize("shuffle", [False, "global", True])
def test_shards_are_disjoint_and_equal(tmp_path, count, shuffle):
    files = write_shards(tmp_path, 2, 15)
    parts = []
    for i in range(count):
        pipe = fs.Pipeline(files, features=SPEC, batch_size=4, seed=9, shuffle=shuffle).shard(i, count)
        parts.append([v for b in pipe for v in b["id"].tolist()])
    assert len({len(p) for p in parts}) == 1 and len(parts[0]) == 30 // count
    every = [v for p in parts for v in p]
    assert len(set(every)) == len(every)
    assert set(every) <= set(range(30))


def test_a_sharded_pipeline_resumes(tmp_path):
    files = write_shards(tmp_path, 3, 10)
    args = dict(features=SPEC, batch_size=3, num_epochs=2, seed=4, shuffle="global", keys=True)
    full = [b["__key__"].tolist() for b in fs.Pipeline(files, **args).shard(1, 2)]
    pipe = fs.Pipeline(files, **args).shard(1, 2)
    it = iter(pipe)
    before = [next(it)["__key__"].tolist() for _ in range(4)]
    state = pickle.loads(pickle.dumps(pipe.state_dict()))
    it.close()
    again = fs.Pipeline(files, **args).shard(1, 2)
    again.load_state_dict(state)
    assert before + [b["__key__"].tolist() for b in again] == full
    with pytest.raises(errors.InvalidArgumentError, match="shard"):
        fs.Pipeline(files, **args).shard(0, 2).load_state_dict(state)


def test_torch_dataset_state_per_worker(tmp_path):
    # What StatefulDataLoader does in each worker: state_dict() on the
    # dataset between batches, load_state_dict() on a fresh one before
    # iterating it; torch is not needed (the pair is duck-typed).
    files = write_shards(tmp_path, 4, 10)
    args = dict(rank=1, world_size=2, as_torch=False, features=SPEC, batch_size=3, num_epochs=2, seed=7)
    for worker, workers in [(0, 2), (1, 2)]:
        ds = IterableDataset(files, **args)
        ds.shard = _pinned(ds, worker, workers)
        full = ids_of(iter(ds))
        ds = IterableDataset(files, **args)
        ds.shard = _pinned(ds, worker, workers)
        assert ds.state_dict() is None
        it = iter(ds)
        before = [next(it)["id"].tolist() for _ in range(2)]
        state = pickle.loads(pickle.dumps(ds.state_dict()))
        it.close()
        fresh = IterableDataset(files, **args)
        fresh.shard = _pinned(fresh, worker, workers)
        fresh.load_state_dict(state)
        assert fresh.state_dict() == state
        assert before + ids_of(iter(fresh)) == full
        # Another worker's state is refused.
        other = IterableDataset(files, **args)
        other.shard = _pinned(other, 1 - worker, workers)
        other.load_state_dict(state)
        with pytest.raises(errors.InvalidArgumentError, match="shard"):
            next(iter(other))


def _pinned(ds, worker, workers):
    cls_shard = type(ds).shard
    return lambda: cls_shard(ds, worker, workers)


def test_engine_stats_and_counts(tmp_path):
    files = write_shards(tmp_path, 2, 7)
    pipe = fs.Pipeline(files, features=SPEC, batch_size=4, shuffle=False, keys=True)
    seen = collections.Counter()
    for b in pipe:
        assert list(b) == ["id", "pix", "__key__"]
        assert pipe.stats[0]["batches"] == pipe.batches
        seen.update(b["id"].tolist())
    assert pipe.examples == 14 and pipe.batches == 4 and pipe.stats == []
    assert seen == collections.Counter(range(14))
