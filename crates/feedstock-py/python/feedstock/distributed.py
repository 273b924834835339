"""Input that resumes exactly on many hosts: torchrun-style launches and
Ray Train.

Every rank builds the same :class:`feedstock.Pipeline` (same files, same
arguments, same ``seed``) and reads its shard, ``shard(rank, world)``:
the shards are disjoint, cover the epoch, and are equal in size, so every
rank takes the same number of batches. With the training state, each rank
saves its pipeline's ``state_dict()`` into the checkpoint directory, one
file per rank; a restarted job builds the same pipelines and loads them
from there, and the epoch goes on exactly: every example once across all
ranks, none repeated, none skipped.

torchrun (rank and world size from ``RANK`` / ``WORLD_SIZE``)::

    from feedstock import distributed as fsd

    pipe = fsd.sharded_pipeline(files, features=spec, batch_size=128, seed=7)
    fsd.load_input_state(pipe, latest)          # False on a fresh start
    for step, batch in enumerate(pipe, start=pipe.batches + 1):
        train_step(batch)
        if step % 100 == 0:
            d = f"{root}/step-{step}"            # a new directory each time
            save_model(d)                        # the framework's checkpoint
            fsd.save_input_state(pipe, d)        # + one file per rank

Save each checkpoint into a new directory and resume from the last one
that every rank finished (a rank that starts late must not see another
rank's newer file beside the old ones: a directory with some ranks'
files missing is refused, never half-resumed).

Ray Train (inside ``train_loop_per_worker``; rank and world size from
``ray.train.get_context()``; the state travels in Ray Train's
``Checkpoint``, each worker's file in the same checkpoint directory)::

    def train_loop(config):
        pipe = fsd.sharded_pipeline(files, features=spec, batch_size=128, seed=7)
        fsd.ray_train_restore(pipe)              # from ray.train.get_checkpoint()
        for batch in pipe:
            loss = train_step(batch)
            fsd.ray_train_report(pipe, {"loss": loss})   # ray.train.report + Checkpoint

A restarted Ray Train job is one started with the same ``RunConfig(name=...,
storage_path=...)``: Ray Train hands it the last checkpoint.

The states are files ``feedstock-input-rank{R}-of-{W}.pkl`` (pickles of
plain values). A checkpoint taken with another number of ranks is handed
to :meth:`feedstock.Pipeline.load_state_dict` as rank 0's state, the form
an elastic resume takes (every rank of the new world loads the state of
rank 0 of the old one): a pipeline sharded with ``elastic=True`` resumes
from it exactly (the rest of the epoch once across the new ranks); any
other refuses it, naming the shard that differs.
"""

from __future__ import annotations

import os
import pickle
import re
import sys
import tempfile

from . import errors
from ._gfile import write_atomic
from .pipeline import Pipeline

__all__ = [
    "rank_and_world",
    "sharded_pipeline",
    "save_input_state",
    "load_input_state",
    "state_file",
    "ray_train_report",
    "ray_train_restore",
]

_STATE_VERSION = 1
_NAME = re.compile(r"^feedstock-input-rank(\d+)-of-(\d+)\.pkl$")


def rank_and_world():
    """This process's ``(rank, world_size)``: Ray Train's context inside a
    Ray Train worker, else ``torch.distributed`` once initialised, else
    the ``RANK`` and ``WORLD_SIZE`` environment variables torchrun sets,
    else ``(0, 1)``."""
    if "ray.train" in sys.modules and _in_ray_train_worker():
        ctx = sys.modules["ray.train"].get_context()
        return int(ctx.get_world_rank()), int(ctx.get_world_size())
    try:
        import torch.distributed as dist

        if dist.is_available() and dist.is_initialized():
            return dist.get_rank(), dist.get_world_size()
    except ImportError:
        pass
    return int(os.environ.get("RANK", 0)), int(os.environ.get("WORLD_SIZE", 1))


def _in_ray_train_worker():
    """Whether this process is a Ray Train worker (Ray is not imported
    for it: a process that has not imported ``ray.train`` is none)."""
    try:
        import ray

        return ray.is_initialized() and ray.get_runtime_context().worker.mode == ray.WORKER_MODE and \
            sys.modules["ray.train"].get_context() is not None
    except Exception:  # noqa: BLE001 - get_context() raises outside a Train worker
        return False


def sharded_pipeline(files=None, *, seed, rank=None, world_size=None, remainder="drop", elastic=False,
                     **pipeline_args):
    """``Pipeline(files, seed=seed, **pipeline_args).shard(rank,
    world_size, remainder, elastic)``, rank and world size defaulting to
    :func:`rank_and_world`. ``seed`` is required: every rank must draw
    the same order for the shards to be disjoint. ``elastic=True`` lets
    a checkpoint resume on another number of ranks."""
    if seed is None:
        raise ValueError("sharded_pipeline needs a seed, the same on every rank")
    r, w = rank_and_world()
    rank = r if rank is None else rank
    world_size = w if world_size is None else world_size
    pipe = Pipeline(files, seed=seed, **pipeline_args) if files is not None else Pipeline(seed=seed, **pipeline_args)
    return pipe.shard(rank, world_size, remainder=remainder, elastic=elastic)


def state_file(directory, rank, world_size):
    """The path of rank ``rank``'s state in ``directory``."""
    return os.path.join(os.fspath(directory), f"feedstock-input-rank{rank:05d}-of-{world_size:05d}.pkl")


def _shard(pipeline):
    shard = pipeline._shard
    if shard is None:
        return 0, 1
    return shard[0], shard[1]


def save_input_state(pipeline, directory):
    """Writes ``pipeline.state_dict()`` into ``directory`` as this rank's
    file (the rank and world size of the pipeline's shard), atomically
    (a crash while writing leaves the previous file). Returns its path."""
    rank, world = _shard(pipeline)
    os.makedirs(directory, exist_ok=True)
    path = state_file(directory, rank, world)
    payload = {"version": _STATE_VERSION, "rank": rank, "world_size": world, "state": pipeline.state_dict()}
    write_atomic(path, pickle.dumps(payload))
    return path


def _saved(directory):
    """``{(rank, world): path}`` of the states in ``directory``."""
    out = {}
    if not os.path.isdir(directory):
        return out
    for name in os.listdir(directory):
        m = _NAME.match(name)
        if m:
            out[(int(m.group(1)), int(m.group(2)))] = os.path.join(directory, name)
    return out


def load_input_state(pipeline, directory):
    """Loads this rank's state from ``directory`` into ``pipeline`` (built
    as the saving job built it, not yet iterated): True when it did,
    False when the directory holds no state (a fresh start).

    A directory with the states of a job of W ranks, W the pipeline's
    world size, must have every rank's file (else
    FailedPreconditionError naming the missing ranks). With the states of
    another number of ranks, rank 0's is given to ``load_state_dict``
    (the elastic form: an ``elastic=True`` pipeline resumes from it, any
    other refuses it naming the shard); states of several world sizes at
    once are refused."""
    rank, world = _shard(pipeline)
    saved = _saved(os.fspath(directory))
    if not saved:
        return False
    worlds = sorted({w for _, w in saved})
    if len(worlds) > 1:
        raise errors.FailedPreconditionError(
            None, None, f"{directory} holds input states of jobs of {worlds} ranks: keep one checkpoint per directory")
    (saved_world,) = worlds
    missing = sorted(set(range(saved_world)) - {r for r, _ in saved})
    if missing:
        raise errors.FailedPreconditionError(
            None, None, f"{directory} holds the input states of a job of {saved_world} ranks but not those of "
            f"ranks {missing}: an incomplete checkpoint cannot resume exactly")
    source_rank = rank if saved_world == world else 0
    with open(saved[(source_rank, saved_world)], "rb") as f:
        payload = pickle.load(f)
    if not isinstance(payload, dict) or payload.get("version") != _STATE_VERSION:
        raise errors.InvalidArgumentError(
            None, None, f"{saved[(source_rank, saved_world)]} is not a feedstock input state of version "
            f"{_STATE_VERSION}")
    pipeline.load_state_dict(payload["state"])
    return True


def ray_train_report(pipeline, metrics, checkpoint_dir=None):
    """``ray.train.report(metrics, checkpoint=...)`` with this worker's
    input state in the checkpoint (every worker must call it, as Ray
    Train's ``report`` requires). ``checkpoint_dir``: a directory already
    holding this worker's other checkpoint files (the model's), to which
    the state is added; by default a temporary one."""
    import ray.train

    if checkpoint_dir is not None:
        save_input_state(pipeline, checkpoint_dir)
        ray.train.report(metrics, checkpoint=ray.train.Checkpoint.from_directory(checkpoint_dir))
        return
    with tempfile.TemporaryDirectory() as d:
        save_input_state(pipeline, d)
        ray.train.report(metrics, checkpoint=ray.train.Checkpoint.from_directory(d))


def ray_train_restore(pipeline):
    """Loads this worker's input state from ``ray.train.get_checkpoint()``:
    True when it did, False when there is no checkpoint (or it holds no
    input state)."""
    import ray.train

    checkpoint = ray.train.get_checkpoint()
    if checkpoint is None:
        return False
    with checkpoint.as_directory() as d:
        return load_input_state(pipeline, d)
