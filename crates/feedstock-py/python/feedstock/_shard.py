"""How work is split across DataLoader workers and distributed ranks.

Shard ``rank * num_workers + worker_id`` of ``world_size * num_workers``
takes every ``num_shards``-th file (or array row) starting at its index:
the shards are disjoint and together cover everything, so with
``num_epochs = N`` each example arrives exactly ``N`` times over all
workers of all ranks. Files are split whole (a record is never read by
two shards); a split with more shards than files is an error rather than
workers that silently get nothing.
"""

from __future__ import annotations


def shard_index(rank, world_size, worker_id, num_workers):
    """``(index, count)`` of the shard a worker of a rank reads."""
    if not 0 <= rank < world_size:
        raise ValueError(f"rank {rank} is not in 0..{world_size}")
    if not 0 <= worker_id < num_workers:
        raise ValueError(f"worker {worker_id} is not in 0..{num_workers}")
    return rank * num_workers + worker_id, world_size * num_workers


def split_files(files, index, count):
    """The files of shard ``index`` of ``count``."""
    files = list(files)
    if len(files) < count:
        raise ValueError(
            f"{len(files)} files cannot be split across {count} readers "
            "(ranks x DataLoader workers) without leaving some with nothing: "
            "write more shards or use fewer workers"
        )
    return files[index::count]


def split_rows(n, index, count):
    """The row indices of shard ``index`` of ``count`` for ``n`` rows."""
    return list(range(index, n, count))
