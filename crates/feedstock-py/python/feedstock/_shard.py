"""How work is split across DataLoader workers and distributed ranks.

Reader ``rank * num_workers + worker_id`` of ``world_size * num_workers``
reads its part through :meth:`feedstock.Pipeline.shard`: files are split
by the library (whole files when there are enough, else record by
record), array rows here. The parts are disjoint, together they are
everything, and every reader gets the same number of examples per epoch
(so that no rank runs out of batches before the others and hangs a
collective); the remainder is dropped or padded, as the caller chose,
and counted.
"""

from __future__ import annotations


def check_index(index, count):
    """Refuses an ``index`` outside ``0..count``."""
    if count < 1:
        raise ValueError(f"the number of shards must be at least 1, not {count}")
    if not 0 <= index < count:
        raise ValueError(f"shard {index} is not in 0..{count}")


def shard_index(rank, world_size, worker_id, num_workers):
    """``(index, count)`` of the shard a worker of a rank reads."""
    if not 0 <= rank < world_size:
        raise ValueError(f"rank {rank} is not in 0..{world_size}")
    if not 0 <= worker_id < num_workers:
        raise ValueError(f"worker {worker_id} is not in 0..{num_workers}")
    return rank * num_workers + worker_id, world_size * num_workers


def split_rows(n, index, count, remainder="drop"):
    """The row indices of shard ``index`` of ``count`` for ``n`` rows,
    every shard the same number of them, and what that did to this
    shard per epoch: ``(rows, {"rows", "dropped", "padded"})``.

    Shard ``index`` owns rows ``index, index + count, ...``. With
    ``"drop"`` every shard keeps ``n // count`` of its rows; with
    ``"pad"`` every shard has ``ceil(n / count)``, the short ones
    repeating their own first rows (or row 0 if they own none)."""
    check_index(index, count)
    own = list(range(index, n, count))
    if remainder == "drop":
        keep = n // count
        rows = own[:keep]
        return rows, {"rows": keep, "dropped": len(own) - keep, "padded": 0}
    if remainder != "pad":
        raise ValueError(f'remainder must be "drop" or "pad", not {remainder!r}')
    want = -(-n // count)
    pool = own or [0]
    pad = [pool[i % len(pool)] for i in range(want - len(own))] if n else []
    return own + pad, {"rows": want if n else 0, "dropped": 0, "padded": len(pad)}
