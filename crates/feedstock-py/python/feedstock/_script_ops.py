"""``tf.py_func`` (and ``tf.numpy_function``) for ``feedstock.compat.v1``:
a Python function as a node of the graph, run by whichever thread
evaluates the node (a queue runner's, or the one calling
``Session.run``), holding the GIL while it runs. It is the slow path:
everything else in a pipeline runs without Python."""

from __future__ import annotations

import atexit
import itertools
import sys

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
    if not callable(func):
        raise ValueError(f"Expected func to be callable. Received func={func!r} of type {type(func)}.")
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

    # TensorFlow's op is PyFuncStateless when the function is declared so.
    name = name if name is not None or stateful else "PyFuncStateless"
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


def Print(input_, data, message=None, first_n=None, summarize=None, name=None):  # noqa: N802 (TensorFlow's name)
    """``tf.Print``: ``input_`` itself, printing ``message`` and a summary
    of each tensor of ``data`` to stderr each time it is evaluated (the
    first ``first_n`` times when given), in TensorFlow's format: each
    tensor's first ``summarize`` (3) values in nested brackets,
    ``msg: [[1 2 3]...][1.5 2.5]``. It runs as a ``py_func`` node (in
    Python)."""
    x = convert_to_tensor(input_)
    data = [convert_to_tensor(d) for d in data]
    limit = 3 if summarize is None else int(summarize)
    remaining = [-1 if first_n is None else int(first_n)]

    def show(value, *values):
        if remaining[0] != 0:
            remaining[0] -= 1
            parts = "".join(f"[{_summary(np.asarray(v), limit)}]" for v in values)
            print(f"{message or ''}{parts}", file=sys.stderr, flush=True)
        return value

    out = py_func(show, [x, *data], x.dtype, name=name or "Print")
    out.set_shape(x.shape)
    return out


def _summary(a, limit):
    """TensorFlow's ``Tensor::SummarizeValue``: the first ``limit``
    values, nested in brackets by dimension, ``...`` when cut short."""
    if limit < 0:
        limit = a.size
    if a.ndim == 0:
        return _element(a[()])
    flat = a.reshape(-1)
    out, at = [], [0]

    def dim(k):
        if at[0] >= limit:
            return
        if k == a.ndim - 1:
            for i in range(a.shape[k]):
                if at[0] >= limit:
                    if k != 0:
                        out.append("...")
                    return
                if i:
                    out.append(" ")
                out.append(_element(flat[at[0]]))
                at[0] += 1
            return
        for _ in range(a.shape[k]):
            opened = at[0] < limit
            if opened:
                out.append("[")
            dim(k + 1)
            if at[0] < limit or opened:
                out.append("]")

    dim(0)
    if limit < a.size:
        out.append("...")
    return "".join(out)


def _element(v):
    """One value as TensorFlow's ``StrCat`` writes it: floats with 6 (7
    for doubles: 15) significant digits, more only when needed to read
    back the same value."""
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if isinstance(v, (np.floating, float)):
        short, long_ = (6, 9) if isinstance(v, np.float32) else (15, 17)
        text = f"{v:.{short}g}"
        return text if type(v)(text) == v else f"{v:.{long_}g}"
    if isinstance(v, (np.bool_, bool)):
        return "1" if v else "0"
    return str(v)
