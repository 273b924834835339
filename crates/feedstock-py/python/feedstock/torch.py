"""A ``torch.utils.data.IterableDataset`` over a feedstock pipeline.

::

    from feedstock.torch import IterableDataset
    ds = IterableDataset("train-*.tfrecord", features=spec, batch_size=128,
                         num_epochs=1, shuffle_buffer=10_000)
    loader = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=4)

Each DataLoader worker of each distributed rank reads its own share of
the files (or array rows) through :meth:`feedstock.Pipeline.shard`:
disjoint shares that cover everything, every share the same number of
examples per epoch, so that every rank gets the same number of batches
(a rank that runs out first would hang the others in a collective). The
remainder is dropped (the default) or padded (``remainder="pad"``, as
``DistributedSampler`` pads), and counted (``Pipeline.shard_stats``).
With files, shuffling and more than one reader, give a ``seed``, the
same on every rank.
The dataset yields whole batches (pass ``batch_size=None`` to the
DataLoader) as dicts or tuples of ``torch.Tensor`` sharing memory with
the native buffers (``torch.from_numpy``; strings stay numpy object
arrays). torch is imported when this module is, never by
``import feedstock``.

Each worker builds its pipeline in ``__iter__``, inside the worker: a
DataLoader worker is a forked child, without the parent's threads, and a
pipeline started before the fork raises ``FailedPreconditionError``
there (docs/python.md, "DataLoader workers and ``fork``").

Resuming: ``state_dict()`` / ``load_state_dict()`` are the pair
torchdata's ``StatefulDataLoader`` calls on the dataset inside each
worker: the state is that worker's pipeline's (its shard, its position),
and a worker given a state continues its pipeline exactly where the
state was taken (the Pipeline's arguments must be the same, see
:meth:`feedstock.Pipeline.load_state_dict`).
"""

from __future__ import annotations

import os

import numpy as np

from . import _shard
from .pipeline import Pipeline

try:  # torch is optional: the split logic is testable without it
    import torch as _torch
    from torch.utils.data import IterableDataset as _Base
except ImportError:  # pragma: no cover - exercised where torch is absent
    _torch = None
    _Base = object

__all__ = ["IterableDataset"]


def _worker():
    if _torch is None:
        return 0, 1
    info = _torch.utils.data.get_worker_info()
    return (0, 1) if info is None else (info.id, info.num_workers)


def _rank():
    if _torch is not None and _torch.distributed.is_available() and _torch.distributed.is_initialized():
        return _torch.distributed.get_rank(), _torch.distributed.get_world_size()
    return int(os.environ.get("RANK", 0)), int(os.environ.get("WORLD_SIZE", 1))


class IterableDataset(_Base):
    """Batches of a :class:`feedstock.Pipeline`, split across workers and
    ranks. Takes the Pipeline's arguments; ``rank`` / ``world_size``
    default to ``torch.distributed`` (or the ``RANK`` / ``WORLD_SIZE``
    environment variables), the worker to ``get_worker_info()``."""

    def __init__(self, files=None, *, arrays=None, rank=None, world_size=None, as_torch=True, remainder="drop",
                 **pipeline_args):
        super().__init__()
        if (files is None) == (arrays is None):
            raise ValueError("give exactly one of files and arrays")
        self._files = None if files is None else list(_expand_files(files))
        self._arrays = arrays
        self._rank = rank
        self._world_size = world_size
        self._as_torch = as_torch and _torch is not None
        self._remainder = remainder
        self._args = pipeline_args
        self._pipe = None
        self._loaded = None

    def shard(self, worker_id=None, num_workers=None):
        """The :class:`Pipeline` of one worker (default: the calling one)."""
        if worker_id is None:
            worker_id, num_workers = _worker()
        rank, world = _rank()
        if self._rank is not None:
            rank = self._rank
        if self._world_size is not None:
            world = self._world_size
        index, count = _shard.shard_index(rank, world, worker_id, num_workers)
        if self._files is not None:
            pipe = Pipeline(self._files, **self._args)
        else:
            pipe = Pipeline(arrays=self._arrays, **self._args)
        return pipe.shard(index, count, remainder=self._remainder)

    def __iter__(self):
        pipe = self.shard()
        if self._loaded is not None:
            state, self._loaded = self._loaded, None
            if state["shard"] != list(_shard_of(pipe)):
                from . import errors

                raise errors.InvalidArgumentError(
                    None, None, f"the state is of shard {state['shard']} (index, count), this worker reads "
                    f"shard {list(_shard_of(pipe))}: resume with the same workers and ranks")
            pipe.load_state_dict(state["pipeline"])
        self._pipe = pipe
        for batch in pipe:
            yield _to_torch(batch) if self._as_torch else batch

    def state_dict(self):
        """This worker's position: ``{"shard": [index, count],
        "pipeline": Pipeline.state_dict()}`` (plain values); before
        iteration, the state loaded, or None."""
        if self._pipe is None:
            return self._loaded
        return {"shard": list(_shard_of(self._pipe)), "pipeline": self._pipe.state_dict()}

    def load_state_dict(self, state):
        """Continues from ``state`` (this worker's ``state_dict()``) at
        the next ``__iter__``; None starts afresh."""
        self._loaded = state
        self._pipe = None


def _shard_of(pipe):
    return pipe._shard[:2]


def _expand_files(files):
    from .pipeline import _expand

    return _expand(files)


def _to_torch(batch):
    def conv(v):
        if isinstance(v, np.ndarray) and v.dtype != object:
            return _torch.from_numpy(v)
        return v

    if isinstance(batch, dict):
        return {k: conv(v) for k, v in batch.items()}
    return tuple(conv(v) for v in batch)
