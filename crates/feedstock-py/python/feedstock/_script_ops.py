"""``tf.py_func`` (and ``tf.numpy_function``) for ``feedstock.compat.v1``:
a Python function as a node of the graph, run by whichever thread
evaluates the node (a queue runner's, or the one calling
``Session.run``), holding the GIL while it runs. It is the slow path:
everything else in a pipeline runs without Python."""

from __future__ import annotations

import atexit
import itertools

import numpy as np

from . import _native, errors
from ._graph import _graph_of, _wrap, as_dtype, convert_to_tensor, get_default_graph, string

# At exit, before Python finalizes, runner threads a program left running
# stop entering Python functions, and the exit waits for those in one
# (entering a finalizing interpreter aborts the process).
atexit.register(_native.shutdown)

# TensorFlow numbers its Python functions across graphs: pyfunc_0, ...
_tokens = itertools.count()

# TensorFlow's (C++) names of dtypes, in its messages.
_CPP_NAMES = {"float32": "float", "float64": "double", "float16": "half"}

# The kind of error an exception of the function becomes, as TensorFlow
# maps them; any other exception is Unknown.
_KINDS = [
    (StopIteration, "OutOfRange"),
    ((ValueError, TypeError), "InvalidArgument"),
    (NotImplementedError, "Unimplemented"),
    (MemoryError, "ResourceExhausted"),
]


def py_func(func, inp, Tout, stateful=True, name=None):  # noqa: N803 (TensorFlow's name)
    """``tf.py_func``: ``func`` called with the values of ``inp`` as numpy
    arrays (scalars as numpy scalars, string scalars as ``bytes``) each
    time the node is evaluated; it returns one value per dtype of
    ``Tout`` (a list or tuple of them for several), each of exactly that
    dtype (a Python float is float64, an int int64; a ``str`` for a
    string output is encoded as UTF-8). The outputs' shapes are unknown
    until run. An exception from ``func`` fails the run: ValueError and
    TypeError as InvalidArgumentError, StopIteration as OutOfRangeError
    (a queue runner then ends, as at the end of its input), others as
    UnknownError, with the exception's type and message, as TensorFlow
    maps them. ``stateful`` is accepted: feedstock never folds or merges
    such nodes."""
    single = not isinstance(Tout, (list, tuple))
    touts = [as_dtype(Tout)] if single else [as_dtype(t) for t in Tout]
    if not touts:
        raise NotImplementedError("tf.py_func with no outputs (Tout=[])")
    ts = [convert_to_tensor(x) for x in inp]
    g = _graph_of(*ts) if ts else get_default_graph()
    token = f"pyfunc_{next(_tokens)}"

    def call(*args):
        args = [a[()] if isinstance(a, np.ndarray) and a.ndim == 0 else a for a in args]
        try:
            return None, _results(func(*args), touts, token)
        except _Mismatch as e:
            return "InvalidArgument", str(e)
        except errors.OpError as e:
            return type(e).__name__[: -len("Error")], e.message
        except Exception as e:  # noqa: BLE001 (every exception is the run's error)
            kind = next((k for types, k in _KINDS if isinstance(e, types)), "Unknown")
            return kind, f"{type(e).__name__}: {e}"

    outs = _wrap(g, g._g.py_func(call, [t._o for t in ts], [t._native for t in touts], name))
    return outs[0] if single else outs


numpy_function = py_func


class _Mismatch(Exception):
    """What the function returned does not match ``Tout``."""


def _results(ret, touts, token):
    values = list(ret) if isinstance(ret, (list, tuple)) else [ret]
    if len(values) != len(touts):
        raise _Mismatch(f"{token} returns {len(values)} values, but expects to see {len(touts)} values.")
    return [_result(v, t, i, token) for i, (v, t) in enumerate(zip(values, touts))]


def _result(value, dtype, i, token):
    if dtype == string:
        arr = np.asarray(value, dtype=object)
        if arr.dtype.kind == "O" and all(isinstance(x, (bytes, str)) for x in arr.reshape(-1)):
            return np.vectorize(lambda x: x.encode() if isinstance(x, str) else x, otypes=[object])(arr)
        got = np.asarray(value).dtype
    else:
        arr = np.asarray(value)
        if arr.dtype == dtype.as_numpy_dtype:
            return arr
        got = arr.dtype
    name = _CPP_NAMES.get(got.name, "string" if got.kind in "OSU" else got.name)
    want = _CPP_NAMES.get(dtype.name, dtype.name)
    raise _Mismatch(f"{i}-th value returned by {token} is {name}, but expects {want}")
