"""TensorFlow 1's batching (``tf.train.batch``, ``shuffle_batch`` and their
``_join`` and ``maybe_`` forms) over the native batching stage."""

import operator

import numpy as np

from . import errors
from ._graph import (
    QUEUE_RUNNERS,
    Tensor,
    _random_seed,
    _shape_arg,
    _wrap,
    bool_,
    constant,
    convert_to_tensor,
    int32,
)
from ._ops import (
    StageRunner,
)
from ._summary import _queue_summary


# ---------------------------------------------------------------- batching


def _as_list(tensors):
    """``(keys, tensors)`` for a list or dict of tensors (a dict's in the
    order of its keys as strings, as TensorFlow sorts them)."""
    if isinstance(tensors, dict):
        keys = sorted(tensors, key=str)
        return keys, [convert_to_tensor(tensors[k]) for k in keys]
    if isinstance(tensors, Tensor):
        return None, [tensors]
    return None, [convert_to_tensor(t) for t in tensors]


def _as_lists(tensors_list, join):
    """``(keys, lists)`` of a batching call's inputs: one list, or with
    ``join`` one per entry of ``tensors_list``, refused as TensorFlow
    refuses them when building (ValueError, TypeError for dtypes)."""
    if not join:
        keys, lst = _as_list(tensors_list)
        if not lst:
            raise ValueError("Expected at least one tensor in batch().")
        return keys, [lst]
    if not tensors_list:
        raise ValueError("Expected at least one set of tensors")
    parts = [_as_list(t) for t in tensors_list]
    keys = parts[0][0]
    if any(k != keys for k, _ in parts):
        raise ValueError("All dictionaries in tensors_list must have the same keys")
    lists = [lst for _, lst in parts]
    if not lists[0]:
        raise ValueError("Expected at least one tensor in batch_join().")
    if any(len(lst) != len(lists[0]) for lst in lists):
        raise ValueError(f"Inconsistent tensor lists: lengths {[len(lst) for lst in lists]}")
    types = [[t.dtype for t in lst] for lst in lists]
    for other in types[1:]:
        if other != types[0]:
            raise TypeError(
                f"Expected types to be consistent: {', '.join(d.name for d in types[0])} vs. "
                f"{', '.join(d.name for d in other)}."
            )
    return keys, lists


def _as_original(original, keys, outs):
    if keys is not None:
        return dict(zip(keys, outs))
    if isinstance(original, Tensor) or len(outs) == 1:
        # TensorFlow's dequeue gives one tensor, not a list, for one
        # component.
        return outs[0]
    return outs


def _int_arg(value, what):
    """``value`` as an int, as TensorFlow takes an int argument: a float
    (or a string) is TypeError, a numpy integer or a bool is fine."""
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"Expected int for argument '{what}' not {value!r}.") from None


def _batch_size(batch_size):
    """The batch size as an int. TensorFlow takes an int32 tensor too;
    feedstock needs its value when building, so a constant one."""
    if isinstance(batch_size, Tensor):
        if batch_size.dtype != int32 or batch_size.shape.ndims != 0:
            raise TypeError(
                f"batch_size must be an int32 scalar, not {batch_size.dtype.name} of shape {batch_size.shape}")
        if batch_size._const is None:
            raise TypeError("batch_size must be known when the graph is built: a Python int or a constant")
        batch_size = batch_size._const.item()
    n = _int_arg(batch_size, "batch_size")
    if n < 0:
        raise ValueError(f"Input 'n' (batch_size) must be >= 0, but is {n}")
    if n == 0:
        # TensorFlow would make empty batches forever.
        raise ValueError("batch_size must be positive")
    return n


def _capacity(capacity, min_after_dequeue):
    """The queue's capacity: negative is unbounded, as in TensorFlow; a
    shuffling queue's must exceed ``min_after_dequeue``."""
    if isinstance(capacity, Tensor):
        raise TypeError(f"Expected int for argument 'capacity' not {capacity!r}.")
    capacity = int(capacity)
    if min_after_dequeue is not None:
        if isinstance(min_after_dequeue, Tensor):
            raise TypeError(f"Expected int for argument 'min_after_dequeue' not {min_after_dequeue!r}.")
        min_after_dequeue = _int_arg(min_after_dequeue, "min_after_dequeue")
        if capacity <= min_after_dequeue:
            raise ValueError(f"capacity {capacity} must be bigger than min_after_dequeue {min_after_dequeue}.")
        if min_after_dequeue < 0:
            # TensorFlow's queue refuses it when run.
            raise errors.InvalidArgumentError(
                None, None, f"min_after_dequeue must be >= 0, not {min_after_dequeue}")
    if capacity == 0:
        raise ValueError("capacity must not be 0")
    return 2**31 - 1 if capacity < 0 else capacity, min_after_dequeue


def _fullness_tag(capacity, min_after_dequeue):
    """The name TensorFlow gives a batching stage's fullness summary."""
    if min_after_dequeue is None:
        return f"fraction_of_{capacity}_full"
    return f"fraction_over_{min_after_dequeue}_of_{capacity - min_after_dequeue}_full"


def _num_threads(num_threads):
    n = _int_arg(num_threads, "num_threads")
    if n <= 0:
        raise ValueError(f"num_threads must be positive, not {n}: no enqueue ops to run")
    return n


def _keep_input(g, keep_input):
    """``keep_input`` as a bool tensor. A Python bool, int or sequence of
    them (ints 0 or 1 per example) is a constant, as TensorFlow converts
    it; its rank is checked by the native builder."""
    if isinstance(keep_input, Tensor):
        if keep_input.dtype != bool_:
            # TensorFlow's graph refuses it when run.
            raise errors.InvalidArgumentError(
                None, None, f"keep_input must be a bool tensor, not {keep_input.dtype.name}")
        return keep_input
    arr = np.asarray(keep_input)
    if arr.dtype.kind in "iu":
        if arr.ndim > 0 and not np.isin(arr, (0, 1)).all():
            raise errors.InvalidArgumentError(None, None, f"keep_input must be 0 or 1 per example, not {arr.tolist()}")
        arr = arr != 0
    elif arr.dtype.kind != "b":
        raise TypeError(f"keep_input must be bool, not {arr.dtype}")
    with g.as_default():
        return constant(arr, dtype=bool_)


def _shapes(shapes, dynamic_pad):
    """The ``shapes`` argument as lists of dims. As TensorFlow's queues,
    only a padding one takes unknown dimensions."""
    if shapes is None:
        return None
    out = [_shape_arg(s) for s in shapes]
    for dims in out:
        if dims is None or (not dynamic_pad and None in dims):
            raise ValueError(f"All shapes must be fully defined: {out}")
    return out


def _batch(tensors_list, join, batch_size, keep_input=None, num_threads=1, capacity=32, enqueue_many=False,
           shapes=None, dynamic_pad=False, allow_smaller_final_batch=False, min_after_dequeue=None, seed=None, name=None):
    """Every batching function: checks the arguments as TensorFlow does
    when building, then adds the native batching node."""
    requested = capacity
    capacity, min_after_dequeue = _capacity(capacity, min_after_dequeue)
    keys, lists = _as_lists(tensors_list, join)
    batch_size = _batch_size(batch_size)
    num_threads = _num_threads(num_threads)
    g = lists[0][0].graph
    keep = None if keep_input is None else _keep_input(g, keep_input)._o
    # TensorFlow's default names: batch, shuffle_batch, batch_join,
    # shuffle_batch_join (the maybe_* forms too).
    default = ("shuffle_batch" if min_after_dequeue is not None else "batch") + ("_join" if join else "")
    # A shape, rank or keep_input refused here is the ValueError
    # TensorFlow raises as it builds (the graph wrapper makes it one).
    outs = g._g.batch(
        [[t._o for t in lst] for lst in lists],
        batch_size,
        keep_input=keep,
        num_threads=num_threads,
        capacity=capacity,
        enqueue_many=bool(enqueue_many),
        shapes=_shapes(shapes, dynamic_pad),
        dynamic_pad=bool(dynamic_pad),
        allow_smaller_final_batch=bool(allow_smaller_final_batch),
        min_after_dequeue=min_after_dequeue,
        seed=_random_seed(g, seed),
        name=name or default,
    )
    wrapped = _wrap(g, outs)
    stage = wrapped[0].op.name
    _queue_summary(g, stage, _fullness_tag(int(requested), min_after_dequeue))
    # The runner is named after the stage's queue, as TensorFlow's.
    queue = "random_shuffle_queue" if min_after_dequeue is not None else (
        "padding_fifo_queue" if dynamic_pad else "fifo_queue")
    g.add_to_collection(QUEUE_RUNNERS, StageRunner(f"{stage}/{queue}"))
    return _as_original(tensors_list[0] if join else tensors_list, keys, wrapped)


def batch(tensors, batch_size, num_threads=1, capacity=32, enqueue_many=False, shapes=None, dynamic_pad=False,
          allow_smaller_final_batch=False, shared_name=None, name=None):
    """Batches ``tensors`` (a list or dict) in ``num_threads`` runner
    threads, in the order they run."""
    return _batch(tensors, False, batch_size, None, num_threads, capacity, enqueue_many, shapes, dynamic_pad,
                  allow_smaller_final_batch, name=name)


def maybe_batch(tensors, keep_input, batch_size, num_threads=1, capacity=32, enqueue_many=False, shapes=None,
                dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None, name=None):
    """:func:`batch` of the examples ``keep_input`` selects."""
    return _batch(tensors, False, batch_size, keep_input, num_threads, capacity, enqueue_many, shapes, dynamic_pad,
                  allow_smaller_final_batch, name=name)


def batch_join(tensors_list, batch_size, capacity=32, enqueue_many=False, shapes=None, dynamic_pad=False,
               allow_smaller_final_batch=False, shared_name=None, name=None):
    """Batches several tensor lists, one runner thread each."""
    return _batch(tensors_list, True, batch_size, None, 1, capacity, enqueue_many, shapes, dynamic_pad,
                  allow_smaller_final_batch, name=name)


def maybe_batch_join(tensors_list, keep_input, batch_size, capacity=32, enqueue_many=False, shapes=None,
                     dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None, name=None):
    return _batch(tensors_list, True, batch_size, keep_input, 1, capacity, enqueue_many, shapes, dynamic_pad,
                  allow_smaller_final_batch, name=name)


def shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, num_threads=1, seed=None, enqueue_many=False,
                  shapes=None, allow_smaller_final_batch=False, shared_name=None, name=None):
    """Batches ``tensors`` drawn at random from a queue that keeps at
    least ``min_after_dequeue`` examples while the input lasts."""
    return _batch(tensors, False, batch_size, None, num_threads, capacity, enqueue_many, shapes, False,
                  allow_smaller_final_batch, min_after_dequeue, seed, name)


def maybe_shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, keep_input, num_threads=1, seed=None,
                        enqueue_many=False, shapes=None, allow_smaller_final_batch=False, shared_name=None, name=None):
    return _batch(tensors, False, batch_size, keep_input, num_threads, capacity, enqueue_many, shapes, False,
                  allow_smaller_final_batch, min_after_dequeue, seed, name)


def shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue, seed=None, enqueue_many=False,
                       shapes=None, allow_smaller_final_batch=False, shared_name=None, name=None):
    """:func:`shuffle_batch` over several tensor lists, one runner thread
    each."""
    return _batch(tensors_list, True, batch_size, None, 1, capacity, enqueue_many, shapes, False,
                  allow_smaller_final_batch, min_after_dequeue, seed, name)


def maybe_shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue, keep_input, seed=None,
                             enqueue_many=False, shapes=None, allow_smaller_final_batch=False, shared_name=None,
                             name=None):
    return _batch(tensors_list, True, batch_size, keep_input, 1, capacity, enqueue_many, shapes, False,
                  allow_smaller_final_batch, min_after_dequeue, seed, name)


__all__ = [n for n in dir() if not n.startswith("_") and n not in ("annotations", "errors", "np", "operator")]
