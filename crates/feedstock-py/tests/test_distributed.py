"""feedstock.distributed: each rank reads its shard of the same seeded
Pipeline and saves its state with the framework's checkpoint (a file per
rank under torchrun, Ray Train's Checkpoint under Ray Train); a
restarted job resumes exactly: every example of the epoch once across
the ranks, none repeated, none skipped, every rank the same number of
batches."""

import json
import os
import pathlib
import subprocess
import sys

import pytest

import feedstock as fs
from feedstock import distributed as fsd
from feedstock import errors
from feedstock.example import Example, Feature, Features, Int64List
from feedstock.tfrecord import TFRecordWriter

HERE = pathlib.Path(__file__).resolve().parent
SPEC = {"id": fs.FixedLenFeature([], fs.int64)}
N = 3 * 23  # records: 69, so a 2-way shard drops one


def write_files(tmp_path):
    files = []
    for f in range(3):
        p = tmp_path / f"part-{f}.tfrecord"
        with TFRecordWriter(str(p)) as w:
            for i in range(f * 23, (f + 1) * 23):
                w.write(Example(features=Features(feature={
                    "id": Feature(int64_list=Int64List(value=[i]))})).SerializeToString())
        files.append(str(p))
    return files


SETTINGS = [
    dict(features=SPEC, batch_size=4, seed=5, shuffle="global"),
    dict(features=SPEC, batch_size=4, seed=5, shuffle=True, shuffle_buffer=9),
]


def expected_epoch(files, settings, world):
    """The ids each rank reads in an uninterrupted run."""
    return [[i for b in fsd.sharded_pipeline(files, rank=r, world_size=world, **settings) for i in b["id"].tolist()]
            for r in range(world)]


def run_ranks(files, settings, load_from, save_to, tmp_path, phase, stop, world=2):
    procs, outs = [], []
    for rank in range(world):
        out = tmp_path / f"{phase}-rank{rank}.json"
        env = {**os.environ, "RANK": str(rank), "WORLD_SIZE": str(world), "LOCAL_RANK": str(rank),
               "FEEDSTOCK_ALLOW_DEBUG_BUILD": "1"}
        plain = {k: v for k, v in settings.items() if k != "features"}  # the worker has SPEC
        arg = json.dumps([files, plain, str(load_from), str(save_to), str(out), stop])
        procs.append(subprocess.Popen([sys.executable, str(HERE / "distributed_worker.py"), arg], env=env))
        outs.append(out)
    codes = [p.wait(timeout=300) for p in procs]
    assert codes == [17 if stop is not None else 0] * world
    return [json.loads(o.read_text()) for o in outs]


@pytest.mark.parametrize("settings", SETTINGS, ids=["global", "buffer"])
def test_torchrun_ranks_resume_exactly_after_a_kill(tmp_path, settings):
    files = write_files(tmp_path)
    ckpt = tmp_path / "ckpt"
    first = run_ranks(files, settings, tmp_path / "none", ckpt, tmp_path, "first", stop=3)
    assert sorted(os.listdir(ckpt)) == ["feedstock-input-rank00000-of-00002.pkl",
                                        "feedstock-input-rank00001-of-00002.pkl"]
    second = run_ranks(files, settings, ckpt, tmp_path / "later", tmp_path, "second", stop=None)
    assert [r["resumed"] for r in first] == [False, False]
    assert [r["resumed"] for r in second] == [True, True]
    want = expected_epoch(files, settings, 2)
    seen = []
    for rank in range(2):
        ids = [i for b in first[rank]["batches"] + second[rank]["batches"] for i in b]
        # Exactly the uninterrupted run of this rank, in order.
        assert ids == want[rank]
        seen.extend(ids)
    # Every example once across the ranks (the one the equal shards drop aside).
    assert len(seen) == len(set(seen)) == N - 1
    counts = [len(first[r]["batches"]) + len(second[r]["batches"]) for r in range(2)]
    assert counts[0] == counts[1] == -(-(N // 2) // 4)


def test_a_contiguous_checkpoint_of_another_world_size_is_refused(tmp_path):
    files = write_files(tmp_path)
    ckpt = tmp_path / "ckpt"
    settings = SETTINGS[0]
    for r in range(2):
        pipe = fsd.sharded_pipeline(files, rank=r, world_size=2, **settings)
        it = iter(pipe)
        next(it)
        fsd.save_input_state(pipe, ckpt)
        it.close()
    three = fsd.sharded_pipeline(files, rank=2, world_size=3, **settings)
    with pytest.raises(errors.InvalidArgumentError, match="shard"):
        fsd.load_input_state(three, ckpt)


@pytest.mark.parametrize("settings", SETTINGS, ids=["global", "buffer"])
@pytest.mark.parametrize(("old", "new"), [(2, 3), (3, 2)])
def test_an_elastic_checkpoint_resumes_on_another_world_size(tmp_path, settings, old, new):
    files = write_files(tmp_path)
    ckpt = tmp_path / "ckpt"
    settings = dict(settings, num_epochs=1)
    before = []
    for r in range(old):
        pipe = fsd.sharded_pipeline(files, rank=r, world_size=old, elastic=True, remainder="pad", **settings)
        it = iter(pipe)
        for _ in range(2):
            before.extend(next(it)["id"].tolist())
        fsd.save_input_state(pipe, ckpt)
        it.close()
    after, counts = [], []
    for r in range(new):
        pipe = fsd.sharded_pipeline(files, rank=r, world_size=new, elastic=True, remainder="pad", **settings)
        assert fsd.load_input_state(pipe, ckpt)
        got = [b["id"].tolist() for b in pipe]
        counts.append(len(got))
        after.extend(i for b in got for i in b)
    assert len(set(counts)) == 1, counts
    # Every example of the epoch at least once; only padding repeats one
    # (the pad remainder fills the last places with records again).
    seen = before + after
    assert set(seen) == set(range(N))
    assert len(seen) - N < max(old, new)


def test_an_incomplete_checkpoint_is_refused(tmp_path):
    files = write_files(tmp_path)
    ckpt = tmp_path / "ckpt"
    pipe = fsd.sharded_pipeline(files, rank=1, world_size=2, **SETTINGS[0])
    fsd.save_input_state(pipe, ckpt)
    again = fsd.sharded_pipeline(files, rank=1, world_size=2, **SETTINGS[0])
    with pytest.raises(errors.FailedPreconditionError, match=r"ranks \[0\]"):
        fsd.load_input_state(again, ckpt)
    fresh = fsd.sharded_pipeline(files, rank=0, world_size=2, **SETTINGS[0])
    assert fsd.load_input_state(fresh, tmp_path / "empty") is False


def test_sharded_pipeline_needs_a_seed_and_takes_rank_from_the_environment(tmp_path, monkeypatch):
    files = write_files(tmp_path)
    with pytest.raises(ValueError, match="seed"):
        fsd.sharded_pipeline(files, features=SPEC, seed=None)
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "3")
    assert fsd.rank_and_world() == (1, 3)
    assert fsd.sharded_pipeline(files, features=SPEC, seed=1)._shard[:2] == (1, 3)


def _trainer_class():
    """Ray Train's TorchTrainer where torch is installed, else the
    DataParallelTrainer it is built on (no torch needed)."""
    try:
        import torch  # noqa: F401
        from ray.train.torch import TorchTrainer

        return TorchTrainer
    except ImportError:
        from ray.train.v2.api.data_parallel_trainer import DataParallelTrainer

        return DataParallelTrainer


def _train_loop(config):
    import json
    import os

    import ray.train

    import feedstock as fs
    from feedstock import distributed as fsd

    pipe = fsd.sharded_pipeline(config["files"], features={"id": fs.FixedLenFeature([], fs.int64)},
                                **config["settings"])
    resumed = fsd.ray_train_restore(pipe)
    rank = ray.train.get_context().get_world_rank()
    batches = []

    def record():
        with open(os.path.join(config["out"], f"{config['phase']}-rank{rank}.json"), "w") as f:
            json.dump({"resumed": resumed, "batches": batches, "rank": list(fsd.rank_and_world())}, f)

    for batch in pipe:
        batches.append(batch["id"].tolist())  # the training step
        if len(batches) == config["stop"]:
            record()
            fsd.ray_train_report(pipe, {"batches": pipe.batches})
            raise RuntimeError("the job dies here")
    record()


def test_ray_train_workers_resume_exactly_from_the_checkpoint(ray_local, tmp_path):
    import ray.cloudpickle
    import ray.train

    # The workers cannot import this test module: ship the loop by value.
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    files = write_files(tmp_path)
    settings = {k: v for k, v in SETTINGS[0].items() if k != "features"}
    run = ray.train.RunConfig(name="resume", storage_path=str(tmp_path / "storage"),
                              failure_config=ray.train.FailureConfig(max_failures=0))
    trainer = _trainer_class()
    config = dict(files=files, settings=settings, out=str(tmp_path))
    with pytest.raises(Exception, match="the job dies here"):
        trainer(_train_loop, train_loop_config={**config, "phase": "first", "stop": 3},
                scaling_config=ray.train.ScalingConfig(num_workers=2), run_config=run).fit()
    # The restarted job: the same run name and storage, which hand it the checkpoint.
    trainer(_train_loop, train_loop_config={**config, "phase": "second", "stop": None},
            scaling_config=ray.train.ScalingConfig(num_workers=2), run_config=run).fit()
    first = [json.loads((tmp_path / f"first-rank{r}.json").read_text()) for r in range(2)]
    second = [json.loads((tmp_path / f"second-rank{r}.json").read_text()) for r in range(2)]
    assert [r["rank"] for r in first] == [[0, 2], [1, 2]]
    assert [r["resumed"] for r in first + second] == [False, False, True, True]
    want = expected_epoch(files, SETTINGS[0], 2)
    seen = []
    for rank in range(2):
        ids = [i for b in first[rank]["batches"] + second[rank]["batches"] for i in b]
        assert ids == want[rank]
        seen.extend(ids)
    assert len(seen) == len(set(seen)) == N - 1
    assert len(first[0]["batches"]) + len(second[0]["batches"]) == len(first[1]["batches"]) + len(second[1]["batches"])
