"""Elastic resume through Pipeline: a state saved by rank 0 of a world of
N resumes every rank of a world of M, and the rest of each epoch arrives
exactly once across the new ranks, every rank with as many batches."""

import collections
import pickle

import pytest

import feedstock as fs
from feedstock.example import Example, Feature, Features, Int64List
from feedstock.tfrecord import TFRecordWriter

TOTAL = 360


@pytest.fixture()
def files(tmp_path):
    out = []
    for f in range(3):
        path = str(tmp_path / f"part-{f}.tfrecord")
        with TFRecordWriter(path) as w:
            for i in range(TOTAL // 3):
                ex = Example(features=Features(feature={"id": Feature(int64_list=Int64List(value=[f * 1000 + i]))}))
                w.write(ex.SerializeToString())
        out.append(path)
    return out


def pipe(files, shuffle, rank, world):
    kw = {"shuffle": True, "shuffle_buffer": 30} if shuffle == "buffer" else {"shuffle": shuffle}
    spec = {"id": fs.FixedLenFeature([], fs.int64)}
    return fs.Pipeline(files, features=spec, batch_size=4, num_epochs=2, seed=5, **kw).shard(
        rank, world, elastic=True)


@pytest.mark.parametrize("shuffle", ["buffer", "global", False])
@pytest.mark.parametrize(("n", "m", "batches"), [(2, 3, 3), (3, 2, 5)])
def test_a_state_of_n_ranks_resumes_on_m(files, shuffle, n, m, batches):
    before, states = [], []
    for rank in range(n):
        p = pipe(files, shuffle, rank, n)
        it = iter(p)
        for _ in range(batches):
            before.extend(next(it)["id"].tolist())
        states.append(pickle.dumps(p.state_dict()))
        p.stop()
    # Ranks that took as many batches hold the same state.
    assert all(pickle.loads(s)["checkpoint"] == pickle.loads(states[0])["checkpoint"] for s in states)
    after, counts = [], []
    for rank in range(m):
        p = pipe(files, shuffle, rank, m)
        p.load_state_dict(pickle.loads(states[0]))
        got = [b["id"].tolist() for b in p]
        counts.append(len(got))
        after.extend(x for b in got for x in b)
    assert len(set(counts)) == 1, counts
    seen = collections.Counter(before + after)
    assert len(seen) == TOTAL
    assert set(seen.values()) == {2}, "an example arrived other than once per epoch"


def test_a_contiguous_state_does_not_resume_an_elastic_pipeline(files):
    spec = {"id": fs.FixedLenFeature([], fs.int64)}
    p = fs.Pipeline(files, features=spec, batch_size=4, seed=5, shuffle="global").shard(0, 2)
    next(iter(p))
    state = p.state_dict()
    p.stop()
    q = pipe(files, "global", 0, 2)
    with pytest.raises(fs.errors.InvalidArgumentError):
        q.load_state_dict(state)
        next(iter(q))
