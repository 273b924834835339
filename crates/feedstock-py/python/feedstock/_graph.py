"""The symbolic layer under ``feedstock.compat.v1``: graphs, tensors,
operations, sessions and coordinators over feedstock's native plan.

Calls build a description of the pipeline (a native ``plan::Graph``);
``Session.run`` evaluates it natively, with the GIL released, and
``start_queue_runners`` runs its queue runners in native threads. Nothing
per record runs in Python.
"""

from __future__ import annotations

import builtins
import contextlib
import functools
import math
import sys
import threading
import time
import warnings
import weakref

import numpy as np

from . import _native, errors
from ._types import SparseTensorValue

# ---------------------------------------------------------------- dtypes


class DType:
    """A tensor element type, named as TensorFlow names it."""

    __slots__ = ("name", "_native")

    def __init__(self, name, native):
        self.name = name
        self._native = native

    @property
    def as_numpy_dtype(self):
        """The numpy type of the values (``object`` for strings, as in
        TensorFlow; ``ml_dtypes.bfloat16`` for bfloat16, which numpy
        lacks)."""
        if self._native == "string":
            return object
        if self._native == "bfloat16":
            return _ml_dtypes().bfloat16
        return np.dtype(self._native).type

    @property
    def is_floating(self):
        return self._native in ("float16", "bfloat16", "float32", "float64")

    @property
    def is_complex(self):
        return self._native in ("complex64", "complex128")

    @property
    def is_integer(self):
        return self._native in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")

    def __repr__(self):
        return f"tf.{self.name}"

    def __str__(self):
        return f"<dtype: '{self.name}'>"

    def __eq__(self, other):
        try:
            return as_dtype(other)._native == self._native
        except TypeError:
            return NotImplemented

    def __hash__(self):
        return hash(self._native)


float32 = DType("float32", "float32")
float64 = DType("float64", "float64")
int8 = DType("int8", "int8")
int16 = DType("int16", "int16")
int32 = DType("int32", "int32")
int64 = DType("int64", "int64")
uint8 = DType("uint8", "uint8")
uint16 = DType("uint16", "uint16")
uint32 = DType("uint32", "uint32")
uint64 = DType("uint64", "uint64")
bool_ = DType("bool", "bool")
string = DType("string", "string")
float16 = DType("float16", "float16")
half = float16
bfloat16 = DType("bfloat16", "bfloat16")
complex64 = DType("complex64", "complex64")
complex128 = DType("complex128", "complex128")

_BY_NATIVE = {
    d._native: d
    for d in (
        float16, bfloat16, float32, float64, int8, int16, int32, int64, uint8, uint16, uint32, uint64, bool_, string,
        complex64, complex128,
    )
}
_BY_NATIVE["object"] = string


def _ml_dtypes():
    """``ml_dtypes``, which gives numpy its ``bfloat16``; an ImportError
    that says what to do when it is missing."""
    try:
        import ml_dtypes
    except ImportError as e:
        raise ImportError(
            "bfloat16 arrays need the ml_dtypes package (pip install ml_dtypes), or tf.cast the tensor to float32"
        ) from e
    return ml_dtypes


def as_dtype(x):
    """A :class:`DType` from a DType, a numpy dtype or type, or a name;
    anything else (``None`` too, which numpy would take as float64) is a
    TypeError in TensorFlow's words."""
    if isinstance(x, DType):
        return x
    refused = TypeError(f"Cannot convert the argument `type_value`: {x!r} to a TensorFlow DType.")
    if x is None:
        raise refused
    if x is str or x is bytes:
        return string
    if isinstance(x, str):
        if x in ("string", "str", "bytes", "object"):
            return string
        if x in _BY_NATIVE:
            return _BY_NATIVE[x]
        raise refused
    try:
        nd = np.dtype(x)
    except TypeError:
        raise refused from None
    if nd.kind in ("O", "S", "U"):
        return string
    if nd.name in _BY_NATIVE:
        return _BY_NATIVE[nd.name]
    raise refused


# ---------------------------------------------------------------- shapes


class TensorShape:
    """A static shape: ``dims`` is ``None`` when the rank is unknown,
    else a list with ``None`` for unknown sizes."""

    __slots__ = ("dims",)

    def __init__(self, dims):
        self.dims = None if dims is None else [None if d is None else int(d) for d in dims]

    @property
    def ndims(self):
        return None if self.dims is None else len(self.dims)

    rank = ndims

    def as_list(self):
        if self.dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return list(self.dims)

    def is_fully_defined(self):
        return self.dims is not None and all(d is not None for d in self.dims)

    def num_elements(self):
        if not self.is_fully_defined():
            return None
        return int(np.prod(self.dims, dtype=np.int64))

    def __len__(self):
        if self.dims is None:
            raise ValueError("Cannot take the length of shape with unknown rank.")
        return len(self.dims)

    def __iter__(self):
        return iter(self.as_list())

    def __getitem__(self, i):
        return self.as_list()[i]

    def __eq__(self, other):
        if isinstance(other, TensorShape):
            return self.dims == other.dims
        try:
            return self.dims == [None if d is None else int(d) for d in other]
        except TypeError:
            return NotImplemented

    def __repr__(self):
        return "TensorShape(None)" if self.dims is None else f"TensorShape({self.dims})"

    def __str__(self):
        """As TensorFlow prints a shape: ``(None, 2)``, ``(3,)``,
        ``<unknown>``."""
        return "<unknown>" if self.dims is None else str(tuple(self.dims))


def _compatible(a, b):
    """Whether two static shapes (lists of dims, ``None`` unknown; or
    ``None`` for an unknown rank) can describe the same tensor."""
    if a is None or b is None:
        return True
    return len(a) == len(b) and all(x is None or y is None or x == y for x, y in zip(a, b))


def _shape_arg(shape):
    if shape is None:
        return None
    if isinstance(shape, TensorShape):
        return shape.dims
    if isinstance(shape, (int, np.integer)):
        return [int(shape)]
    return [None if d is None or (isinstance(d, int) and d < 0) else int(d) for d in shape]


# ---------------------------------------------------------------- graphs


class InvalidArgumentValueError(errors.InvalidArgumentError, ValueError):
    """An argument refused while the graph is built (a shape, a rank, a
    size, an axis): an ``InvalidArgumentError`` that is also the
    ``ValueError`` TensorFlow raises there."""


class InvalidArgumentTypeError(errors.InvalidArgumentError, TypeError):
    """A dtype refused while the graph is built (operands of different
    dtypes, a dtype an op does not take): an ``InvalidArgumentError`` that
    is also the ``TypeError`` TensorFlow raises there."""


def _build_error(e):
    """The build-time form of the native ``InvalidArgumentError`` ``e``:
    a TypeError when the engine marked it a refused dtype, else a
    ValueError; message and context kept."""
    cls = InvalidArgumentTypeError if getattr(e, "_invalid_dtype", False) else InvalidArgumentValueError
    return cls(None, None, e.message, file=e.file, key=e.key, offset=e.offset, field=e.field)


class _NativeGraph:
    """The native graph as the graph layer calls it (``graph._g``): the
    same methods, an ``InvalidArgumentError`` out of one (building a
    node) raised as :class:`InvalidArgumentValueError` or
    :class:`InvalidArgumentTypeError`. Sessions run on ``native``, so
    run-time errors keep their classes."""

    # The native methods that add nothing to the graph.
    _READ_ONLY = frozenset(
        {
            "shape", "name", "initializers", "queue_name", "node_names", "output_by_name", "unique_name",
            "set_next_name", "name_scope", "set_name_scope",
        }
    )

    def __init__(self, native):
        self.native = native
        self.finalized = False

    def __len__(self):
        return len(self.native)

    def check_not_finalized(self):
        """RuntimeError once the graph is finalized, as TensorFlow's."""
        if self.finalized:
            raise RuntimeError("Graph is finalized and cannot be modified.")

    def __getattr__(self, name):
        method = getattr(self.native, name)
        if not callable(method):
            return method
        modifies = name not in self._READ_ONLY

        @functools.wraps(method)
        def build(*args, **kwargs):
            if modifies:
                self.check_not_finalized()
            try:
                return method(*args, **kwargs)
            except errors.InvalidArgumentError as e:
                if isinstance(e, (InvalidArgumentValueError, InvalidArgumentTypeError)):
                    raise
                raise _build_error(e).with_traceback(e.__traceback__) from None

        # Later calls find it without __getattr__.
        setattr(self, name, build)
        return build


GLOBAL_VARIABLES = "variables"
GLOBAL_STEP = "global_step"
LOCAL_VARIABLES = "local_variables"
TRAINABLE_VARIABLES = "trainable_variables"
QUEUE_RUNNERS = "queue_runners"
SUMMARIES = "summaries"


class GraphKeys:
    """The collection names TensorFlow uses."""

    GLOBAL_VARIABLES = GLOBAL_VARIABLES
    GLOBAL_STEP = GLOBAL_STEP
    LOCAL_VARIABLES = LOCAL_VARIABLES
    TRAINABLE_VARIABLES = TRAINABLE_VARIABLES
    QUEUE_RUNNERS = QUEUE_RUNNERS
    SUMMARIES = SUMMARIES


class Graph:
    """``tf.Graph``: the pipeline being described.

    ``with tf.Graph().as_default():`` makes it the graph new calls add
    to; otherwise they add to the default graph.
    """

    def __init__(self):
        self._g = _NativeGraph(_native.Graph())
        self._collections = {}
        self._lock = threading.Lock()
        # Operations that are only Python objects (tf.group, tf.no_op,
        # initializers): TensorFlow adds nodes for them, so a graph
        # holding one is not empty.
        self._python_ops = 0
        #: The graph-level random seed (``tf.set_random_seed``).
        self.seed = None

    def as_default(self):
        """A context manager making this the default graph."""
        return _default_graph_stack.push(self)

    def get_collection(self, key, scope=None):
        """The values added to collection ``key``."""
        return list(self._collections.get(key, []))

    def add_to_collection(self, name, value):
        self._collections.setdefault(name, []).append(value)

    def finalize(self):
        """Finalizes the graph: adding an operation to it is then a
        RuntimeError, as in TensorFlow."""
        self._g.finalized = True

    @property
    def finalized(self):
        return self._g.finalized

    @property
    def num_nodes(self):
        return len(self._g)

    def _is_empty(self):
        """Whether no operation was added (TensorFlow's ``version == 0``)."""
        return len(self._g) == 0 and self._python_ops == 0

    def unique_name(self, name, mark_as_used=True):
        """``name`` made unique as TensorFlow makes it (``name_1``, ...;
        compared case-insensitively), reserved."""
        return self._g.unique_name(name)

    def name_scope(self, name):
        """``graph.name_scope(name)``: see :func:`name_scope`."""
        return _name_scope(self, name, None)

    def device(self, device_name_or_function):
        """Accepted for compatibility: feedstock places nothing on devices."""
        return contextlib.nullcontext()

    def get_operations(self):
        """The graph's operations, in creation order."""
        return [self._operation(n, k) for n, k in self._g.node_names()]

    def _operation(self, name, num_outputs):
        outputs = [self._g.output_by_name(name, i) for i in range(num_outputs)]
        return Operation(self, [_wrap1(self, o) for o in outputs], name=name)

    def get_tensor_by_name(self, name):
        """The tensor named ``"<op>:<index>"`` (``KeyError`` if there is
        none, ``ValueError`` for an operation's name)."""
        if not isinstance(name, str):
            raise TypeError(f"Tensor names are strings (or similar), not {type(name).__name__}.")
        return self.as_graph_element(name, allow_tensor=True, allow_operation=False)

    def get_operation_by_name(self, name):
        """The operation named ``name``."""
        if not isinstance(name, str):
            raise TypeError(f"Operation names are strings (or similar), not {type(name).__name__}.")
        return self.as_graph_element(name, allow_tensor=False, allow_operation=True)

    def as_graph_element(self, obj, allow_tensor=True, allow_operation=True):
        """``obj`` (a tensor, an operation, or one's name) as an element of
        this graph, refused as TensorFlow refuses it: ``ValueError`` for
        an element of another graph or a name of the wrong kind,
        ``KeyError`` for a name not in the graph, ``TypeError`` for
        anything else."""
        types_str = " or ".join(["Tensor"] * allow_tensor + ["Operation"] * allow_operation)
        if allow_tensor and isinstance(obj, Tensor):
            if obj.graph is not self:
                raise ValueError(f"Tensor {obj} is not an element of this graph.")
            return obj
        if allow_operation and isinstance(obj, Operation):
            if obj.graph is not self:
                raise ValueError(f"Operation {obj} is not an element of this graph.")
            return obj
        if isinstance(obj, str):
            return self._element_by_name(obj, allow_tensor, allow_operation)
        raise TypeError(f"Can not convert a {type(obj).__name__} into a {types_str}.")

    def _element_by_name(self, name, allow_tensor, allow_operation):
        nodes = dict(self._g.node_names())
        if allow_tensor and ":" in name:
            op_name, _, out = name.rpartition(":")
            try:
                index = int(out)
            except ValueError:
                raise ValueError(
                    f"The name {name!r} looks a like a Tensor name, but is not a valid one. "
                    'Tensor names must be of the form "<op_name>:<output_index>".'
                ) from None
            if op_name not in nodes:
                raise KeyError(
                    f"The name {name!r} refers to a Tensor which does not exist. "
                    f"The operation, {op_name!r}, does not exist in the graph."
                )
            if not 0 <= index < nodes[op_name]:
                raise KeyError(
                    f"The name {name!r} refers to a Tensor which does not exist. "
                    f"The operation, {op_name!r}, exists but only has {nodes[op_name]} outputs."
                )
            return _wrap1(self, self._g.output_by_name(op_name, index))
        if ":" not in name and allow_operation:
            if name not in nodes:
                raise KeyError(f"The name {name!r} refers to an Operation not in the graph.")
            return self._operation(name, nodes[name])
        if ":" in name:
            raise ValueError(f"Name {name!r} appears to refer to a Tensor, not a Operation.")
        if name in nodes:
            raise ValueError(
                f"The name {name!r} refers to an Operation, not a Tensor. "
                'Tensor names must be of the form "<op_name>:<output_index>".'
            )
        raise ValueError(
            f"The name {name!r} looks like an (invalid) Operation name, not a Tensor. "
            'Tensor names must be of the form "<op_name>:<output_index>".'
        )


class _GraphStack(threading.local):
    def __init__(self):
        self.stack = []

    @contextlib.contextmanager
    def push(self, g):
        self.stack.append(g)
        try:
            yield g
        finally:
            self.stack.remove(g)


_default_graph_stack = _GraphStack()
_global_default_graph = Graph()


def get_default_graph():
    """The graph new calls add to."""
    if _default_graph_stack.stack:
        return _default_graph_stack.stack[-1]
    return _global_default_graph


def reset_default_graph():
    """Replaces the global default graph with an empty one."""
    global _global_default_graph
    if _default_graph_stack.stack:
        raise AssertionError(
            "Do not use tf.reset_default_graph() to clear nested graphs. If you need a cleared graph, "
            "exit the nesting and create a new graph."
        )
    _global_default_graph = Graph()


@contextlib.contextmanager
def _next_name(g, name, exact=False):
    """Within it, the next node added to ``g`` is named ``name`` (what a
    ``name=`` argument gives), made unique unless ``exact`` (a name
    :func:`_scope` reserved); ``None`` leaves the op's default."""
    if name is None:
        yield
        return
    name = str(name)
    if name.endswith("/"):
        # A scope's name (`with tf.name_scope(...) as scope`), which
        # TensorFlow gives the op as it is.
        name, exact = name[:-1], True
    g._g.set_next_name(name, exact)
    try:
        yield
    finally:
        g._g.set_next_name(None)


def _scope(g, name, default):
    """The name of an op that may first convert its inputs, reserved as
    TensorFlow's name scope reserves it: ``name`` (or the op's
    ``default``) made unique; converted inputs are named under it
    (``add/y``) and the op takes it exactly (``_next_name(g, op,
    exact=True)``). A name ending in ``/`` (a name scope's) is taken as it
    is, without the ``/``."""
    if name is not None and str(name).endswith("/"):
        return str(name)[:-1]
    return g._g.unique_name(name if name is not None else default)


def name_scope(name, default_name=None, values=None):
    """``tf.name_scope``: within it, the names of new operations go under
    ``name`` made unique (``input/Const``; a second ``input`` scope is
    ``input_1``); a name ending in ``/`` is taken as it is, ``None`` (with
    no ``default_name``) or ``""`` is the top. Yields the scope with its
    trailing ``/``."""
    return _name_scope(_graph_of(*(values or [])), name, default_name)


@contextlib.contextmanager
def _name_scope(g, name, default_name):
    old = g._g.name_scope()
    if name is None and default_name is not None:
        name = default_name
    if not name:
        scope = ""
    elif name.endswith("/"):
        scope = name[:-1]
    else:
        scope = g._g.unique_name(name)
    g._g.set_name_scope(scope)
    try:
        with g.as_default():
            yield f"{scope}/" if scope else ""
    finally:
        g._g.set_name_scope(old)


@contextlib.contextmanager
def _under(g, scope):
    """Within it, new names in ``g`` go under ``scope`` (a full scope
    :func:`_scope` reserved), as inside TensorFlow's name scope of an
    op: the op's converted inputs are ``<scope>/x``, ``<scope>/y``."""
    old = g._g.name_scope()
    g._g.set_name_scope(scope)
    try:
        yield
    finally:
        g._g.set_name_scope(old)


def device(device_name_or_function):
    """``tf.device``: accepted for compatibility; feedstock places
    nothing on devices (its pipeline runs in its own threads)."""
    return contextlib.nullcontext()


def _graph_of(*values):
    """The graph of the first tensor among ``values``, else the default
    graph."""
    for v in values:
        if isinstance(v, Tensor):
            return v.graph
    return get_default_graph()


def _incompatible(have, want):
    """TensorFlow's message for static shapes (lists of dims, ``None``
    unknown) that do not merge: ranks first, then the first dimension."""
    if len(have) != len(want):
        return f"Shapes must be equal rank, but are {len(have)} and {len(want)}"
    k = next(k for k, (a, b) in enumerate(zip(have, want)) if a is not None and b is not None and a != b)

    def show(dims):
        return "[" + ",".join("?" if d is None else str(d) for d in dims) + "]"

    return (f"Dimension {k} in both shapes must be equal, but are {have[k]} and {want[k]}. "
            f"Shapes are {show(have)} and {show(want)}.")


# ---------------------------------------------------------------- tensors


class Tensor:
    """A symbolic tensor: an output of a node of a :class:`Graph`."""

    __slots__ = ("graph", "_o", "_const", "_named", "__weakref__")

    # numpy defers to the tensor's reflected operators (``np.float64(1) +
    # t`` calls ``t.__radd__`` with the numpy scalar itself), as it does
    # for TensorFlow's tensors.
    __array_ufunc__ = None
    __array_priority__ = 100

    def __init__(self, graph, output, const=None):
        self.graph = graph
        self._o = output
        self._const = const

    @property
    def dtype(self):
        return _BY_NATIVE[self._o.dtype]

    @property
    def shape(self):
        return TensorShape(self.graph._g.shape(self._o))

    def get_shape(self):
        return self.shape

    def set_shape(self, shape):
        """Refines the static shape, as TensorFlow's ``set_shape``.

        feedstock's graph has no shape-only node, so a refinement that
        adds knowledge becomes a reshape to ``shape`` (checked when run: a
        value of another size is ``InvalidArgumentError``, where
        TensorFlow would fail later, or not at all). An incompatible shape
        is ``ValueError`` at once.
        """
        want = _shape_arg(shape)
        have = self.shape.dims
        if want is None:
            return
        if not _compatible(have, want):
            raise ValueError(_incompatible(have, want))
        if have == want or sum(d is None for d in want) > 1:
            return
        # The tensor keeps its name, as TensorFlow's does.
        g = self.graph
        self._named = self._name_output()
        # The reshape's own name stays out of TensorFlow's (``Reshape``).
        with _under(g, ""):
            hidden = g._g.unique_name(f"{g._g.name(self._named)}/set_shape")
        with _next_name(g, hidden, exact=True):
            self._o = g._g.op("Reshape", [self._o], {"shape": [-1 if d is None else d for d in want]})[0]

    def _name_output(self):
        """The output this tensor is named after: its own, or the one it
        was before a :meth:`set_shape` reshaped it."""
        return getattr(self, "_named", None) or self._o

    @property
    def name(self):
        o = self._name_output()
        return f"{self.graph._g.name(o)}:{o.index}"

    @property
    def op(self):
        return Operation(self.graph, [self], name=self.graph._g.name(self._name_output()))

    def eval(self, feed_dict=None, session=None):
        """This tensor's value in ``session`` (default: the default
        session)."""
        return (session or _default_session()).run(self, feed_dict=feed_dict)

    def __repr__(self):
        return f"<tf.Tensor '{self.name}' shape={self.shape} dtype={self.dtype.name}>"

    def __str__(self):
        shape = "" if self.shape.dims is None else f", shape={self.shape}"
        return f'Tensor("{self.name}"{shape}, dtype={self.dtype.name})'

    __hash__ = object.__hash__

    def __bool__(self):
        raise TypeError("Using a tf.Tensor as a Python bool is not allowed.")

    # arithmetic
    def __add__(self, o):
        return _binary("add", self, o, None, "add")

    def __radd__(self, o):
        return _binary("add", o, self, None, "add")

    def __sub__(self, o):
        return _binary("sub", self, o, None, "sub")

    def __rsub__(self, o):
        return _binary("sub", o, self, None, "sub")

    def __mul__(self, o):
        return _binary("mul", self, o, None, "mul")

    def __rmul__(self, o):
        return _binary("mul", o, self, None, "mul")

    def __truediv__(self, o):
        return truediv(self, o)

    def __rtruediv__(self, o):
        return truediv(o, self)

    def __floordiv__(self, o):
        return floordiv(self, o)

    def __rfloordiv__(self, o):
        return floordiv(o, self)

    def __mod__(self, o):
        return _binary("floormod", self, o, None, "mod")

    def __rmod__(self, o):
        return _binary("floormod", o, self, None, "mod")

    def __lt__(self, o):
        return less(self, o)

    def __le__(self, o):
        return less_equal(self, o)

    def __gt__(self, o):
        return greater(self, o)

    def __ge__(self, o):
        return greater_equal(self, o)

    def __abs__(self):
        return abs(self)

    def __neg__(self):
        return negative(self)

    def __getitem__(self, key):
        if not isinstance(key, tuple):
            key = (key,)
        dims = []
        for k in key:
            if k is None:
                dims.append(("newaxis",))
            elif k is Ellipsis:
                dims.append(("ellipsis",))
            elif isinstance(k, builtins.slice):
                step = 1 if k.step is None else _opt_int(k.step)
                dims.append(("range", _opt_int(k.start), _opt_int(k.stop), step))
            elif isinstance(k, (int, np.integer)) or (isinstance(k, Tensor) and k._const is not None):
                dims.append(("at", _opt_int(k)))
            else:
                raise TypeError(f"unsupported index {k!r}: ints, slices, None and ... are")
        return _wrap1(self.graph, _strided(self.graph, self._o, dims))


_MASKS = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")


def _strided(g, o, dims):
    """Python's indexing of output ``o``, its entries ``("at", i)``,
    ``("range", start, stop, step)``, ``("newaxis",)`` and
    ``("ellipsis",)``, as a ``StridedSlice`` node with TensorFlow's masks;
    its output."""
    begin, end, strides = [], [], []
    masks = dict.fromkeys(_MASKS, 0)
    for k, d in enumerate(dims):
        bit = 1 << k
        b, e, s = 0, 0, 1
        if d[0] == "at":
            b, e = d[1], d[1] + 1
            masks["shrink_axis_mask"] |= bit
        elif d[0] == "range":
            _, start, stop, s = d
            if start is None:
                masks["begin_mask"] |= bit
            if stop is None:
                masks["end_mask"] |= bit
            b, e = start or 0, stop or 0
        elif d[0] == "newaxis":
            masks["new_axis_mask"] |= bit
        else:
            masks["ellipsis_mask"] |= bit
        begin.append(b)
        end.append(e)
        strides.append(s)
    return g._g.op("StridedSlice", [o], dict(begin=begin, end=end, strides=strides, **masks))[0]


def _opt_int(x):
    """An index as an int: a tensor must be known while building."""
    if isinstance(x, Tensor):
        if x._const is None:
            raise TypeError(
                f"indexing with {x.name}, computed when run: feedstock needs index bounds known while "
                "building; use tf.strided_slice or tf.slice with tensor bounds"
            )
        x = x._const
    return None if x is None else int(x)


class SparseTensor(Tensor):
    """A symbolic sparse tensor (a ``VarLenFeature``, a ``SparseFeature``,
    or a batch of them); its value is a ``SparseTensorValue``."""

    __slots__ = ()

    def __init__(self, *args, indices=None, values=None, dense_shape=None):
        """``tf.SparseTensor(indices, values, dense_shape)``: ``indices`` an
        int64 ``[nnz, rank]``, ``values`` ``[nnz]``, ``dense_shape`` an
        int64 ``[rank]``, checked (order, bounds) only by the ops that
        need it, as in TensorFlow. (The graph itself wraps its sparse
        outputs with ``SparseTensor(graph, output, const)``.)"""
        if args and isinstance(args[0], Graph):
            super().__init__(*args)
            return
        parts = list(args) + [None] * (3 - len(args))
        indices = parts[0] if indices is None else indices
        values = parts[1] if values is None else values
        dense_shape = parts[2] if dense_shape is None else dense_shape
        g = _graph_of(indices, values, dense_shape)
        with _name_scope(g, None, "SparseTensor"):
            i = convert_to_tensor(indices, dtype=int64, name="indices")
            v = convert_to_tensor(values, name="values")
            d = convert_to_tensor(dense_shape, dtype=int64, name="dense_shape")
            out = g._g.op("MakeSparse", [i._o, v._o, d._o], {})[0]
        super().__init__(g, out)

    def _part(self, part):
        return _op(self.graph, "SparsePart", [self], part=part)

    @property
    def indices(self):
        """The positions of the stored values, an int64 ``[nnz, rank]``."""
        return self._part("indices")

    @property
    def values(self):
        """The stored values, ``[nnz]``."""
        return self._part("values")

    @property
    def dense_shape(self):
        """The shape of the dense form, an int64 ``[rank]``."""
        return self._part("dense_shape")

    def __repr__(self):
        return f"<tf.SparseTensor '{self.name}' dtype={self.dtype.name}>"


def sparse_tensor_to_dense(sp_input, default_value=None, validate_indices=True, name=None):
    """``tf.sparse.to_dense``: the dense form of ``sp_input``,
    ``default_value`` (zero, or ``b""`` for strings) where nothing is
    stored."""
    if not isinstance(sp_input, SparseTensor):
        raise TypeError(f"Input must be a SparseTensor, got {type(sp_input).__name__}")
    g = sp_input.graph
    if default_value is None:
        default_value = b"" if sp_input.dtype == string else 0
    with g.as_default():
        default = convert_to_tensor(default_value, dtype=sp_input.dtype)
    return _op(g, "SparseToDense", [sp_input, default], validate=bool(validate_indices))


def sparse_to_dense(sparse_indices, output_shape, sparse_values, default_value=0, validate_indices=True,
                    name=None):
    """``tf.sparse_to_dense``: a dense tensor of ``output_shape`` holding
    ``sparse_values`` (one per index, or one for all) at
    ``sparse_indices`` (a scalar, a vector of positions in a vector, or a
    ``[n, rank]`` matrix) and ``default_value`` elsewhere; with
    ``validate_indices``, indices out of order or repeated fail as in
    TensorFlow."""
    g = _graph_of(sparse_indices, output_shape, sparse_values)
    with _name_scope(g, name, "SparseToDense") as scope:
        idx = cast(convert_to_tensor(sparse_indices), int64)
        shape_t = convert_to_tensor(output_shape)
        # A shape known while building stays a constant (the result's
        # static shape is then known, as in TensorFlow).
        if shape_t._const is not None:
            shape_t = constant(np.asarray(shape_t._const, dtype=np.int64), dtype=int64)
        shape_t = cast(shape_t, int64)
        vals = convert_to_tensor(sparse_values)
        if idx.shape.ndims is None or idx.shape.ndims > 2:
            raise ValueError(f"sparse_indices must be 0-D, 1-D or 2-D, got shape {idx.shape}")
        if idx.shape.ndims < 2:
            idx = reshape(idx, [-1, 1])
        if vals.shape.ndims == 0:
            vals = fill(reshape(shape(idx)[0], [1]), vals)
        sp = SparseTensor(idx, vals, shape_t)
        out = sparse_tensor_to_dense(sp, default_value, validate_indices)
        return identity(out, name=scope)


def _wrap1(graph, output, const=None):
    cls = SparseTensor if output.sparse else Tensor
    return cls(graph, output, const)


def _wrap(graph, outputs):
    return [_wrap1(graph, o) for o in outputs]


def _op(g, op_type, inputs, const=None, **attrs):
    """Adds the native op ``op_type`` (a type of ``feedstock_tf1::op``)
    reading the tensors ``inputs``, with attributes ``attrs``; its only
    output, wrapped (its constant value ``const`` if known)."""
    return _wrap1(g, g._g.op(op_type, [t._o for t in inputs], attrs)[0], const)


def _ops(g, op_type, inputs, **attrs):
    """As :func:`_op`, for an op with several outputs: the list."""
    return _wrap(g, g._g.op(op_type, [t._o for t in inputs], attrs))


class Operation:
    """An operation run for its effect (``tf.group``, an initializer);
    its value in ``Session.run`` is ``None``."""

    __slots__ = ("graph", "inputs", "name")

    def __init__(self, graph, inputs, name="group"):
        self.graph = graph
        self.inputs = list(inputs)
        self.name = name

    def run(self, feed_dict=None, session=None):
        (session or _default_session()).run(self, feed_dict=feed_dict)

    def __repr__(self):
        return f"<tf.Operation '{self.name}'>"


class Variable(Tensor):
    """``tf.Variable`` for preloaded data: reading it gives the value its
    ``initializer`` assigned."""

    __slots__ = ("initializer", "initial_value", "trainable")

    def __init__(self, initial_value=None, trainable=None, collections=None, name=None, dtype=None, **_ignored):
        g = _graph_of(initial_value)
        # As TensorFlow names them: the variable `name` (default
        # `Variable`, made unique), a value converted here
        # `<name>/Initializer/initial_value`, the initializer `<name>/Assign`.
        vname = _scope(g, name, "Variable")
        with _under(g, vname):
            init = convert_to_tensor(initial_value, dtype=dtype, name="Initializer/initial_value")
        with _next_name(g, vname, exact=True):
            value, initializer = g._g.variable(init._o, None)
        super().__init__(g, value)
        self.initial_value = init
        self.trainable = bool(trainable) if trainable is not None else True
        self.initializer = Operation(g, [Tensor(g, initializer)], name=g._g.name(initializer))
        collections = [GLOBAL_VARIABLES] if collections is None else list(collections)
        if self.trainable and TRAINABLE_VARIABLES not in collections:
            # As TensorFlow: a trainable variable is in the trainable
            # collection, even with `collections=[]`.
            collections.append(TRAINABLE_VARIABLES)
        for c in collections:
            g.add_to_collection(c, self)

    def value(self):
        return self

    def read_value(self):
        return self

    def assign(self, value, use_locking=None, name=None, read_value=True):
        """Sets the variable to ``value`` (converted to its dtype) when
        run; the returned tensor's value is the value assigned
        (``read_value=False``: an operation)."""
        g = self.graph
        with g.as_default():
            value = convert_to_tensor(value, dtype=self.dtype)
        with _next_name(g, name):
            out = Tensor(g, g._g.assign(self._o, value._o))
        return out if read_value else Operation(g, [out], name=g._g.name(out._o))

    def assign_add(self, delta, use_locking=None, name=None, read_value=True):
        """Adds ``delta`` to the variable when run; the value is the sum
        (reads of the variable in the same run see the value before)."""
        with self.graph.as_default():
            delta = convert_to_tensor(delta, dtype=self.dtype)
        return self.assign(self + delta, name=name, read_value=read_value)


def assign(ref, value, validate_shape=None, use_locking=None, name=None):
    """``tf.assign``: ``ref.assign(value)``."""
    return ref.assign(value, name=name)


def assign_add(ref, value, use_locking=None, name=None):
    """``tf.assign_add``: ``ref.assign_add(value)``."""
    return ref.assign_add(value, name=name)


def global_variables_initializer():
    """Runs the initializers of the global variables (those not made
    with ``collections=[]``); named ``init`` (made unique)."""
    g = get_default_graph()
    return group(*[v.initializer for v in g.get_collection(GLOBAL_VARIABLES)], name="init")


def local_variables_initializer():
    """Runs the initializers of the local variables. Epoch counters need
    none in feedstock (producers count epochs themselves), so this is
    usually an empty operation; it exists so the guide's pattern runs.
    Named ``init`` (made unique), as in TensorFlow."""
    g = get_default_graph()
    return group(*[v.initializer for v in g.get_collection(LOCAL_VARIABLES)], name="init")


initialize_all_variables = global_variables_initializer
initialize_local_variables = local_variables_initializer


def variables_initializer(var_list, name="init"):
    """An operation running the initializers of ``var_list``."""
    return group(*[v.initializer for v in var_list], name=name)


def global_variables(scope=None):
    return get_default_graph().get_collection(GLOBAL_VARIABLES)


def local_variables(scope=None):
    return get_default_graph().get_collection(LOCAL_VARIABLES)


def trainable_variables(scope=None):
    return get_default_graph().get_collection(TRAINABLE_VARIABLES)


def get_collection(key, scope=None):
    """``tf.get_collection``: the default graph's collection ``key``."""
    return get_default_graph().get_collection(key, scope)


def add_to_collection(name, value):
    """``tf.add_to_collection``, in the default graph."""
    get_default_graph().add_to_collection(name, value)


def _group_inputs(inputs):
    """The tensors running ``inputs`` (tensors, operations, lists of
    them) runs."""
    tensors = []
    for x in inputs:
        if isinstance(x, Operation):
            tensors.extend(x.inputs)
        elif isinstance(x, (list, tuple)):
            tensors.extend(_group_inputs(x))
        elif isinstance(x, Tensor):
            tensors.append(x)
        elif x is not None:
            raise TypeError(f"tf.group takes tensors and operations, got {type(x).__name__}")
    return tensors


def group(*inputs, name=None):
    """An operation that runs ``inputs`` (tensors or operations)."""
    g = get_default_graph()
    tensors = []
    for x in inputs:
        if isinstance(x, Operation):
            tensors.extend(x.inputs)
            g = x.graph
        elif isinstance(x, (list, tuple)):
            tensors.extend(_group_inputs(x))
        elif isinstance(x, Tensor):
            tensors.append(x)
            g = x.graph
        elif x is not None:
            raise TypeError(f"tf.group takes tensors and operations, got {type(x).__name__}")
    return _python_op(g, tensors, name, "group_deps")


def no_op(name=None):
    """An operation that does nothing."""
    return _python_op(get_default_graph(), [], name, "NoOp")


def _python_op(g, tensors, name, default):
    """An operation of ``g`` that only exists in Python (it runs
    ``tensors``), named as TensorFlow names the op it stands for."""
    g._g.check_not_finalized()
    g._python_ops += 1
    return Operation(g, tensors, name=_scope(g, name, default))


# ---------------------------------------------------------------- constants


def _infer_dtype(value):
    """The dtype TensorFlow gives a constant of ``value``: an array's or
    numpy scalar's own; for (nested) lists, taken from every element:
    string, else bool if all are, else complex128, float32 or int32
    (int64 when a value does not fit), numpy scalars counting as Python
    numbers."""
    if isinstance(value, (np.ndarray, np.generic)):
        return as_dtype(value.dtype)
    leaves = list(_leaves(value))
    if not leaves:
        return float32
    kinds = {_leaf_kind(v) for v in leaves}
    if "string" in kinds:
        if kinds != {"string"}:
            raise TypeError(f"cannot make a tensor of strings mixed with numbers: {value!r}")
        return string
    if kinds == {"bool"}:
        return bool_
    if "complex" in kinds:
        # As TensorFlow: a Python complex is a complex128.
        return complex128
    if "float" in kinds:
        return float32
    ints = [int(v) for v in leaves]
    if max(ints) > 2**63 - 1 and min(ints) >= 0:
        # As TensorFlow: what fits only unsigned 64 bits is uint64.
        return uint64
    if max(ints) > 2**31 - 1 or min(ints) < -(2**31):
        return int64
    return int32


def _leaves(value):
    if isinstance(value, (list, tuple)):
        for v in value:
            yield from _leaves(v)
    elif isinstance(value, np.ndarray):
        yield from value.reshape(-1).tolist()
    else:
        yield value


def _leaf_kind(v):
    if v is None:
        raise ValueError("None values not supported.")
    if isinstance(v, (bytes, str, np.bytes_, np.str_)):
        return "string"
    if isinstance(v, (bool, np.bool_)):
        return "bool"
    if isinstance(v, (int, np.integer)):
        return "int"
    if isinstance(v, (float, np.floating)):
        return "float"
    if isinstance(v, (complex, np.complexfloating)):
        return "complex"
    raise TypeError(f"cannot make a tensor of {type(v).__name__}")


def _const_array(value, dtype):
    if dtype == string:
        arr = np.asarray(value, dtype=object)
        return np.vectorize(lambda v: v.encode() if isinstance(v, str) else v, otypes=[object])(arr) if arr.size else arr
    return np.asarray(value, dtype=dtype.as_numpy_dtype)


def constant(value, dtype=None, shape=None, name=None, verify_shape=False):
    """``tf.constant``."""
    g = get_default_graph()
    if dtype is None:
        dtype = _infer_dtype(value)
        arr = _const_array(value, dtype)
    else:
        dtype = as_dtype(dtype)
        arr = _as_dtype_array(value, dtype)
    if shape is not None:
        dims = _shape_arg(shape)
        if dims is None or None in dims:
            raise ValueError(f"tf.constant's shape must be fully defined, got {shape}")
        arr = _fill_shape(arr, dims, verify_shape)
    with _next_name(g, name):
        return Tensor(g, g._g.constant(arr, dtype._native), const=arr)


def _fill_shape(arr, shape, verify_shape):
    """``tf.constant``'s ``shape``, as TensorFlow 1 fills it: the values
    in order, the last one repeated to fill the shape (zeros if there are
    none); more values than the shape holds is a ValueError, and with
    ``verify_shape`` any other shape a TypeError."""
    if verify_shape and list(arr.shape) != shape:
        raise TypeError(f"Expected Tensor's shape: {tuple(shape)}, but got {arr.shape}.")
    n = int(np.prod(shape))
    flat = arr.reshape(-1)
    if flat.size > n:
        raise ValueError(f"Too many elements provided. Takes at most {n}, but got {flat.size}.")
    if flat.size < n:
        fill = flat[-1] if flat.size else np.zeros((), dtype=arr.dtype)
        flat = np.concatenate([flat, np.full(n - flat.size, fill, dtype=arr.dtype)])
    return flat.reshape(shape)


def convert_to_tensor(value, dtype=None, name=None, preferred_dtype=None, dtype_hint=None):
    """``value`` if it is a tensor, else a constant of it (named
    ``name``). Without ``dtype``, ``preferred_dtype`` (``dtype_hint``) is
    tried first, as TensorFlow tries it: the value converted to it if
    that conversion succeeds, else converted as if it were not given."""
    preferred_dtype = preferred_dtype if preferred_dtype is not None else dtype_hint
    if dtype is None and preferred_dtype is not None:
        try:
            return convert_to_tensor(value, dtype=preferred_dtype, name=name)
        except (TypeError, ValueError):
            pass
    if isinstance(value, Tensor):
        if dtype is not None and as_dtype(dtype) != value.dtype:
            raise ValueError(
                f"Tensor conversion requested dtype {as_dtype(dtype).name} for Tensor with dtype {value.dtype.name}: "
                f"{value!r}"
            )
        return value
    if _holds_tensor(value):
        return _autopack(value, dtype, name)
    return constant(value, dtype=dtype, name=name)


def _holds_tensor(value):
    """Whether the (nested) list or tuple ``value`` holds a tensor."""
    return isinstance(value, (list, tuple)) and any(isinstance(v, Tensor) or _holds_tensor(v) for v in value)


def _first_tensor(value):
    for v in value:
        if isinstance(v, Tensor):
            return v
        if isinstance(v, (list, tuple)):
            t = _first_tensor(v)
            if t is not None:
                return t
    return None


def _autopack(value, dtype, name):
    """A list holding tensors as one tensor, stacked as TensorFlow packs
    it (named ``packed``): the other elements converted to the first
    tensor's dtype (or ``dtype``)."""
    dtype = as_dtype(dtype) if dtype is not None else _first_tensor(value).dtype
    g = _graph_of(_first_tensor(value))
    with g.as_default():
        parts = [convert_to_tensor(v, dtype=dtype) for v in value]
        return stack(parts, name=name or "packed")


def _operands(a, b, scope=None):
    """Two tensors: a value that is not a tensor is converted to the
    other's dtype, as TensorFlow converts it (see :func:`_like`); of two
    values, the first is converted on its own. Converted values are
    named ``<scope>/x`` and ``<scope>/y``, as TensorFlow names them."""
    if isinstance(a, Tensor) and isinstance(b, Tensor):
        if a.graph is not b.graph:
            raise ValueError(f"{b} must be from the same graph as {a} (graphs are {b.graph} and {a.graph}).")
        return a, b
    g = _graph_of(a, b)
    names = (None, None) if scope is None else ("x", "y")
    with contextlib.nullcontext() if scope is None else _under(g, scope):
        if isinstance(a, Tensor):
            return a, _like(b, a, names[1])
        if isinstance(b, Tensor):
            return _like(a, b, names[0]), b
        a = constant(a, name=names[0])
        return a, _like(b, a, names[1])


def _like(x, t, name=None):
    """``x`` (not a tensor) as a constant of ``t``'s dtype, converted as
    TensorFlow converts a value next to a tensor: a Python float (or a
    list holding one) is refused for an integer or bool tensor, a Python
    int for a bool tensor (TypeError); Python ints are converted exactly
    and wrap into the dtype (numpy's ``astype``; one beyond 64 bits is an
    OverflowError); numpy values are cast with ``astype`` (truncating
    floats, as TensorFlow does)."""
    with t.graph.as_default():
        return constant(x, dtype=t.dtype, name=name)


def _as_dtype_array(x, dtype):
    """``x`` (Python values or numpy ones) as an array of ``dtype``,
    converted as TensorFlow converts a value to a given dtype: Python
    floats (or lists holding one) are refused for integer and bool
    dtypes, Python ints for bool, strings for numbers (TypeError); ints
    wrap into the dtype (numpy's ``astype``); numpy values are cast
    (floats truncated)."""
    if dtype == string:
        return _const_array(x, dtype)
    if not isinstance(x, (np.ndarray, np.generic)):
        kinds = {_leaf_kind(v) for v in _leaves(x)}
        refused = {"string", "complex"} - ({"complex"} if dtype.is_complex else set())
        if not dtype.is_floating and not dtype.is_complex:
            refused.add("float")
        if dtype == bool_:
            refused.add("int")
        if kinds & refused:
            raise TypeError(f"Expected {dtype.name}, but got {x!r} of type '{type(x).__name__}'.")
    with warnings.catch_warnings(), np.errstate(over="ignore", invalid="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.asarray(x).astype(dtype.as_numpy_dtype)


def _binary(op, a, b, name, default):
    """The engine's binary ``op`` of ``a`` and ``b``, named as TensorFlow
    names it: ``name``, or the op's ``default`` (``add`` for ``+``,
    ``Add`` for ``tf.add``), made unique; converted operands under it."""
    g = _graph_of(a, b)
    scope = _scope(g, name, default)
    a, b = _operands(a, b, scope)
    return _binary_of(op, a, b, scope)


_INT_FOLDS = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "floordiv": np.floor_divide,
    "floormod": np.mod,
    "maximum": np.maximum,
    "minimum": np.minimum,
}


def _fold_int(op, a, b):
    """The value of integer ``a op b`` when both are known while building
    (shape arithmetic, as TensorFlow's constant folding knows it), else
    ``None``; a division by zero is left to fail when run."""
    fold = _INT_FOLDS.get(op)
    if fold is None or a._const is None or b._const is None or not a.dtype.is_integer or a.dtype != b.dtype:
        return None
    if op in ("floordiv", "floormod") and np.any(b._const == 0):
        return None
    try:
        with np.errstate(over="ignore"):
            return np.asarray(fold(a._const, b._const)).astype(a.dtype.as_numpy_dtype)
    except ValueError:  # shapes that do not broadcast: the engine says so
        return None


def _binary_of(op, a, b, scope):
    """The engine's binary ``op`` of two tensors, named ``scope`` (a
    reserved name)."""
    g = a.graph
    with _next_name(g, scope, exact=True):
        return _op(g, "Binary", [a, b], _fold_int(op, a, b), op=op)


def add(x, y, name=None):
    """``tf.add``: sums, or for strings concatenations, elementwise."""
    return _binary("add", x, y, name, "Add")


def subtract(x, y, name=None):
    return _binary("sub", x, y, name, "Sub")


def multiply(x, y, name=None):
    return _binary("mul", x, y, name, "Mul")


def maximum(x, y, name=None):
    return _binary("maximum", x, y, name, "Maximum")


def minimum(x, y, name=None):
    return _binary("minimum", x, y, name, "Minimum")


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    """``tf.clip_by_value``: ``t`` with values under ``clip_value_min``
    raised to it and values over ``clip_value_max`` lowered to it (NaN
    stays NaN), as TensorFlow computes it: ``maximum(minimum(t, max),
    min)``, named ``clip_by_value``. Bounds that would broadcast ``t``
    to another shape are a ValueError, as there."""
    g = _graph_of(t, clip_value_min, clip_value_max)
    with _name_scope(g, name, "clip_by_value") as scope:
        values = convert_to_tensor(t, name="t")
        t_min = minimum(values, clip_value_max)
        _assert_same_shape(values, t_min)
        t_max = maximum(t_min, clip_value_min, name=scope)
        _assert_same_shape(values, t_max)
    return t_max


def _assert_same_shape(a, b):
    if not _compatible(a.shape.dims, b.shape.dims):
        raise ValueError(f"Shapes {a.shape} and {b.shape} are incompatible")


def truediv(x, y, name=None):
    """``x / y`` (``tf.truediv``, ``tf.divide``): true division of
    operands of one dtype (TypeError otherwise); integers are cast to
    ``float32`` (8 and 16 bits) or ``float64`` (32 and 64 bits) first."""
    g = _graph_of(x, y)
    scope = _scope(g, name, "truediv")
    x, y = _operands(x, y, scope)
    if x.dtype != y.dtype:
        raise TypeError(f"`x` and `y` must have the same dtype, got {x.dtype!r} != {y.dtype!r}.")
    if x.dtype.is_integer:
        to = float32 if x.dtype in (int8, int16, uint8, uint16) else float64
        with _under(g, scope):
            x, y = cast(x, to, name="Cast"), cast(y, to, name="Cast")
    return _float_division(x, y, scope)


divide = truediv


def realdiv(x, y, name=None):
    """``tf.realdiv``: true division of two tensors of one float dtype."""
    g = _graph_of(x, y)
    scope = _scope(g, name, "RealDiv")
    x, y = _operands(x, y, scope)
    if x.dtype != y.dtype:
        raise TypeError(f"`x` and `y` must have the same dtype, got {x.dtype!r} != {y.dtype!r}.")
    return _float_division(x, y, scope)


def _float_division(x, y, scope):
    """``x / y`` as a TensorFlow 1 session computes it. Its graph
    optimizer (Grappler's constant folding) rewrites a division by a
    constant into a multiplication by the constant's reciprocal, computed
    once, so ``x / 255.0`` is ``x * (1 / 255.0)``, which differs from the
    quotient in the last bit for about half the values of ``x``. Done here
    for ``float32`` / ``float64`` denominators known while building (a
    constant, a cast of one) when the numerator is not itself constant
    (TensorFlow then folds the whole division). TensorFlow computes the
    reciprocal of a constant of 8 or more values with the CPU's
    approximate reciprocal instruction; it is exact here. The reciprocal
    is computed when run, so that a value fed for the constant is used
    (TensorFlow then divides by it; here it multiplies by its
    reciprocal)."""
    if x._const is None and y._const is not None and y.dtype in (float32, float64):
        with _under(x.graph, scope):
            one = constant(np.ones((), y.dtype.as_numpy_dtype), dtype=y.dtype, name="one")
            recip = _binary("div", one, y, "_recip", "_recip")
        return _binary_of("mul", x, recip, scope)
    return _binary_of("div", x, y, scope)


def floordiv(x, y, name=None):
    """``x // y`` (``tf.floordiv``): rounds toward negative infinity,
    keeping the dtype (``floor(x / y)`` for floats); an integer division
    by zero is ``InvalidArgumentError`` when run."""
    return _binary("floordiv", x, y, name, "floordiv")


floor_div = floordiv


def floormod(x, y, name=None):
    """``x % y`` (``tf.floormod``, ``tf.mod``): the remainder of
    :func:`floordiv`, with the sign of ``y``, as Python's ``%``."""
    return _binary("floormod", x, y, name, "FloorMod")


mod = floormod


def truncatediv(x, y, name=None):
    """``tf.truncatediv``: integer division rounding toward zero (true
    division for floats); division by zero is ``InvalidArgumentError``
    when run."""
    return _binary("div", x, y, name, "TruncateDiv")


def div(x, y, name=None):
    """``tf.div`` of TensorFlow 1 (Python 2's ``/``): floor division for
    integers, keeping the dtype (``-7 / 2`` is ``-4``), true division for
    floats. Operands of different dtypes are a ValueError, as there."""
    g = _graph_of(x, y)
    scope = _scope(g, name, "div")
    x, y = _operands(x, y, scope)
    if x.dtype != y.dtype:
        raise ValueError(f"Tensor conversion requested dtype {x.dtype.name} for Tensor with dtype {y.dtype.name}")
    if x.dtype.is_integer:
        return _binary_of("floordiv", x, y, scope)
    return _float_division(x, y, scope)


def negative(x, name=None):
    g = _graph_of(x)
    scope = _scope(g, name, "Neg")
    with _under(g, scope):
        x = convert_to_tensor(x, name="x")
    with _next_name(g, scope, exact=True):
        return _op(g, "Neg", [x])


def cast(x, dtype, name=None):
    """``tf.cast``: ``x`` itself when it already has ``dtype``, as in
    TensorFlow."""
    g = _graph_of(x)
    dtype = as_dtype(dtype)
    if isinstance(x, Tensor) and x.dtype == dtype:
        return x
    scope = _scope(g, name, "Cast")
    with _under(g, scope):
        x = convert_to_tensor(x, name="x")
    if x.dtype == dtype:
        return x
    # A cast of a constant to a float dtype is known while building, as
    # TensorFlow's constant folding knows it (numpy's conversion rounds
    # to nearest as TensorFlow's cast does), unless folding would grow
    # the constant to 100 KiB or more, which TensorFlow does not do.
    const = None
    if x._const is not None and dtype in (float32, float64) and (x.dtype.is_integer or x.dtype.is_floating):
        const = x._const.astype(dtype.as_numpy_dtype)
        if const.nbytes > x._const.nbytes and const.nbytes >= 100 * 1024:
            const = None
    with _next_name(g, scope, exact=True):
        return _op(g, "Cast", [x], const, dtype=dtype._native)


to_float = lambda x, name="ToFloat": cast(x, float32, name=name)  # noqa: E731
to_int32 = lambda x, name="ToInt32": cast(x, int32, name=name)  # noqa: E731
to_int64 = lambda x, name="ToInt64": cast(x, int64, name=name)  # noqa: E731


def _named_op(g, name, build):
    """``build()`` (an engine call adding one node) with the node named
    ``name`` (``None``: the op's default)."""
    with _next_name(g, name):
        return build()


def reshape(tensor, shape, name=None):
    """``tf.reshape`` (one entry may be -1). ``shape`` may be computed
    when run (an int32 or int64 vector, or a list holding scalar tensors,
    packed as TensorFlow packs it); its static shape is then what
    TensorFlow infers: the entries known while building (constants of a
    ``tf.stack``, ``tf.shape`` of a tensor of known dimensions), else
    unknown dimensions as many as the vector is long."""
    g = _graph_of(tensor, shape)
    scope = _scope(g, name, "Reshape")
    with _under(g, scope):
        tensor = convert_to_tensor(tensor, name="tensor")
        if _holds_tensor(shape):
            shape = convert_to_tensor(shape, name="shape")
    if isinstance(shape, Tensor) and shape._const is None:
        with _next_name(g, scope, exact=True):
            return _op(g, "Reshape", [tensor, shape], shape=None)
    shape = _const_or_tensor(g, shape)
    with _next_name(g, scope, exact=True):
        out = g._g.op("Reshape", [tensor._o], {"shape": shape})[0]
    const = None if tensor._const is None else tensor._const.reshape(g._g.shape(out))
    return _wrap1(g, out, const)


def transpose(a, perm=None, name=None):
    """``tf.transpose``; without ``perm`` the axes are reversed."""
    a = convert_to_tensor(a)
    if perm is None:
        rank = a.shape.ndims
        if rank is None:
            raise ValueError("tf.transpose without perm needs a known rank")
        perm = list(range(rank))[::-1]
    perm = [int(p) for p in perm]
    # A negative axis counts from the end, as in TensorFlow.
    perm = [p + len(perm) if p < 0 else p for p in perm]
    return _named_op(a.graph, name, lambda: _op(a.graph, "Transpose", [a], perm=perm))


def _tensor_list(values):
    """``values`` as tensors: one that is not a tensor is converted to the
    dtype of the first that is, as TensorFlow converts an op's list of
    inputs of one type (``tf.stack([h, w, 3])`` of int64 ``h`` and ``w``
    is int64)."""
    first = _first_tensor(values)
    dtype = None if first is None else first.dtype
    ts = [v if isinstance(v, Tensor) else convert_to_tensor(v, preferred_dtype=dtype) for v in values]
    if not ts:
        raise ValueError("needs at least one tensor")
    return ts


def _consts(ts):
    """The values of tensors ``ts`` when all are known while building,
    else ``None``."""
    if any(t._const is None for t in ts):
        return None
    return [t._const for t in ts]


def stack(values, axis=0, name="stack"):
    """``tf.stack``; of no values, an empty float32 vector, as TensorFlow
    converts ``[]``."""
    if isinstance(values, (list, tuple)) and not values:
        return constant([], name=name)
    ts = _tensor_list(values)
    g = ts[0].graph
    with _next_name(g, name):
        out = g._g.op("Stack", [t._o for t in ts], {"axis": int(axis)})[0]
    consts = _consts(ts)
    return _wrap1(g, out, None if consts is None else np.stack(consts, int(axis)))


def concat(values, axis, name="concat"):
    """``tf.concat``."""
    ts = _tensor_list(values)
    g = ts[0].graph
    return _named_op(g, name, lambda: _op(g, "Concat", ts, axis=int(axis)))


def identity(x, name=None):
    """``tf.identity``."""
    g = _graph_of(x)
    scope = _scope(g, name, "Identity")
    with _under(g, scope):
        x = convert_to_tensor(x, name="input")
    with _next_name(g, scope, exact=True):
        return _op(g, "Identity", [x], x._const)


def slice(input_, begin, size, name=None):  # noqa: A001 (TensorFlow's name)
    """``tf.slice`` (a size of -1 runs to the end); ``begin`` and ``size``
    may be tensors computed when run, checked then as TensorFlow checks
    them."""
    x = convert_to_tensor(input_)
    begin, size = _const_or_tensor(x.graph, begin), _const_or_tensor(x.graph, size)
    if isinstance(begin, Tensor) or isinstance(size, Tensor):
        with x.graph.as_default():
            begin, size = (v if isinstance(v, Tensor) else constant(v, dtype=int32) for v in (begin, size))
        return _named_op(x.graph, name, lambda: _op(x.graph, "SliceInputs", [x, begin, size]))
    begin, size = [int(b) for b in begin], [int(s) for s in size]
    if any(b < 0 for b in begin):
        raise ValueError(f"slice begin must be >= 0, got {begin}")
    return _named_op(x.graph, name, lambda: _op(x.graph, "Slice", [x], begin=begin, size=size))


def _const_or_tensor(g, v):
    """``v`` as a list of ints when known while building, else the
    tensor (of ``g``) computing it."""
    if isinstance(v, Tensor):
        return v if v._const is None else v._const.reshape(-1).tolist()
    if isinstance(v, (list, tuple)) and any(isinstance(e, Tensor) for e in v):
        with g.as_default():
            return _const_or_tensor(g, stack(list(v)))
    return [int(e) for e in np.asarray(v).reshape(-1)]


def _full_dims(n):
    return [("range", None, None, 1)] * n


def expand_dims(input, axis=None, name=None, dim=None):  # noqa: A002 (TensorFlow's name)
    """``tf.expand_dims``: a dimension of 1 inserted at ``axis`` (negative
    counts from the end, -1 appending); an axis outside
    ``[-rank-1, rank]`` is a ValueError, as TensorFlow's shape check."""
    if axis is None:
        axis = dim
    if axis is None:
        raise ValueError("Must specify an axis argument to tf.expand_dims()")
    if isinstance(axis, Tensor):
        if axis._const is None:
            raise TypeError("tf.expand_dims: the axis must be known when the graph is built")
        axis = axis._const
    axis = int(np.asarray(axis).reshape(-1)[0])
    g = _graph_of(input)
    scope = _scope(g, name, "ExpandDims")
    with _under(g, scope):
        x = convert_to_tensor(input, name="input")
    rank = x.shape.ndims
    if rank is not None and not -rank - 1 <= axis <= rank:
        raise ValueError(f"Dimension size must be in range [{-rank - 1}, {rank + 1}) for 'ExpandDims', got {axis}")
    if axis >= 0:
        dims = _full_dims(axis) + [("newaxis",), ("ellipsis",)]
    else:
        dims = [("ellipsis",), ("newaxis",)] + _full_dims(-axis - 1)
    with _next_name(g, scope, exact=True):
        out = _strided(g, x._o, dims)
    const = None if x._const is None else np.expand_dims(x._const, axis)
    return _wrap1(g, out, const)


def squeeze(input, axis=None, name=None, squeeze_dims=None):  # noqa: A002 (TensorFlow's name)
    """``tf.squeeze``: the dimensions of size 1 removed (those of ``axis``
    only, if given). Squeezing a dimension known not to be 1 is a
    ValueError, as in TensorFlow; feedstock needs the squeezed dimensions
    known while building (NotImplementedError otherwise)."""
    if axis is None:
        axis = squeeze_dims
    g = _graph_of(input)
    scope = _scope(g, name, "Squeeze")
    with _under(g, scope):
        x = convert_to_tensor(input, name="input")
    dims = x.shape.as_list() if x.shape.ndims is not None else None
    if dims is None:
        raise NotImplementedError("tf.squeeze of a tensor of unknown rank")
    rank = len(dims)
    if axis is None:
        if None in dims:
            raise NotImplementedError("tf.squeeze without axis needs every dimension known while building")
        axes = [k for k, d in enumerate(dims) if d == 1]
    else:
        axes = []
        for a in [axis] if isinstance(axis, (int, np.integer)) else list(axis):
            a = int(a)
            if not -rank <= a < rank:
                raise ValueError(f"Tried to squeeze dim index {a} for tensor with {rank} dimensions.")
            axes.append(a % rank)
        for a in axes:
            if dims[a] is None:
                raise NotImplementedError(f"tf.squeeze of dimension {a}, unknown while building")
            if dims[a] != 1:
                raise ValueError(f"Can not squeeze dim[{a}], expected a dimension of 1, got {dims[a]}")
    entries = [("at", 0) if k in axes else ("range", None, None, 1) for k in range(rank)]
    with _next_name(g, scope, exact=True):
        out = _strided(g, x._o, entries)
    const = None if x._const is None else np.squeeze(x._const, axis=tuple(axes))
    return _wrap1(g, out, const)


def shape(input, name=None, out_type=None):  # noqa: A002 (TensorFlow's name)
    """``tf.shape``: the run-time shape, an int32 vector (``out_type``
    int64 gives int64); known while building when the static shape is
    fully defined, as TensorFlow's constant folding knows it."""
    out_type = int32 if out_type is None else as_dtype(out_type)
    g = _graph_of(input)
    scope = _scope(g, name, "Shape")
    with _under(g, scope):
        x = convert_to_tensor(input, name="input")
    if isinstance(x, SparseTensor):
        return cast(x.dense_shape, out_type, name=name)
    with _next_name(g, scope, exact=True):
        out = g._g.op("Shape", [x._o])[0]
    const = np.asarray(x.shape.as_list(), dtype=np.int32) if x.shape.is_fully_defined() else None
    t = _wrap1(g, out, const)
    return t if out_type == int32 else cast(t, out_type)


def size(input, name=None, out_type=None):  # noqa: A002 (TensorFlow's name)
    """``tf.size``: the number of elements, an int32 scalar (``out_type``
    int64 gives int64); known while building when the shape is."""
    out_type = int32 if out_type is None else as_dtype(out_type)
    x = convert_to_tensor(input)
    if x.shape.is_fully_defined():
        return constant(int(np.prod(x.shape.as_list(), dtype=np.int64)), dtype=out_type, name=name or "Size")
    g = x.graph
    with g.as_default(), _name_scope(g, name, "Size"):
        return cast(reduce_prod(shape(x, out_type=out_type if out_type == int64 else int32)), out_type)


def rank(input, name=None):  # noqa: A002 (TensorFlow's name)
    """``tf.rank``: the number of dimensions, an int32 scalar (the static
    rank; NotImplementedError when it is unknown)."""
    x = convert_to_tensor(input)
    if x.shape.ndims is None:
        raise NotImplementedError("tf.rank of a tensor of unknown rank")
    return constant(x.shape.ndims, dtype=int32, name=name or "Rank")


def fill(dims, value, name=None):
    """``tf.fill``: a tensor of shape ``dims`` holding ``value``; ``dims``
    may be computed when run."""
    g = _graph_of(dims, value)
    with g.as_default():
        dims = _const_or_tensor(g, dims)
        value = convert_to_tensor(value)
        if not isinstance(dims, Tensor) and value._const is not None and _small(dims):
            return constant(np.full(dims, value._const, dtype=value._const.dtype), dtype=value.dtype,
                            name=name or "Fill")
        if not isinstance(dims, Tensor):
            dims = constant(dims, dtype=int32 if all(d < 2**31 for d in dims) else int64)
    return _named_op(g, name, lambda: _op(g, "Fill", [dims, value]))


def _like_filled(tensor, dtype, value, name, default):
    x = convert_to_tensor(tensor)
    dtype = x.dtype if dtype is None else as_dtype(dtype)
    if x.shape.is_fully_defined():
        return _filled(x.shape.as_list(), dtype, value, name, default)
    with x.graph.as_default():
        out = fill(shape(x), constant(value, dtype=dtype), name=name or default)
    if x.shape.ndims is not None:
        out.set_shape(x.shape.as_list())  # what TensorFlow's shape inference knows
    return out


def zeros_like(tensor, dtype=None, name=None, optimize=True):
    """``tf.zeros_like``: zeros of ``tensor``'s shape (and dtype)."""
    return _like_filled(tensor, dtype, b"" if (dtype or convert_to_tensor(tensor).dtype) == string else 0, name,
                        "zeros_like")


def ones_like(tensor, dtype=None, name=None, optimize=True):
    """``tf.ones_like``: ones of ``tensor``'s shape (and dtype)."""
    return _like_filled(tensor, dtype, 1, name, "ones_like")


def _small(dims):
    """Whether a tensor of ``dims`` is small enough to be a constant made
    while building (under 1000 elements, TensorFlow's
    ``_constant_if_small``); a larger one is a Fill op, allocated when
    run (and a ResourceExhaustedError there if memory cannot hold it)."""
    return math.prod(dims) < 1000


def _filled(shape, dtype, value, name, default):
    dtype = as_dtype(dtype)
    g = _graph_of(shape)
    with g.as_default():
        dims = _const_or_tensor(g, shape)
        if not isinstance(dims, Tensor) and _small(dims):
            return constant(np.full(dims, value, dtype=object if dtype == string else dtype.as_numpy_dtype),
                            dtype=dtype, name=name or default)
        return fill(dims, constant(value, dtype=dtype), name=name or default)


def ones(shape, dtype=float32, name=None):
    """``tf.ones``; ``shape`` may be computed when run."""
    return _filled(shape, dtype, 1, name, "ones")


def zeros(shape, dtype=float32, name=None):
    """``tf.zeros``; ``shape`` may be computed when run."""
    return _filled(shape, dtype, b"" if as_dtype(dtype) == string else 0, name, "zeros")


def _reduction(op, default):
    def reduce(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None, keep_dims=None):
        g = _graph_of(input_tensor)
        scope = _scope(g, name, default)
        with _under(g, scope):
            x = convert_to_tensor(input_tensor, name="input")
        if axis is None:
            axis = reduction_indices
        keep = bool(keepdims if keepdims is not None else keep_dims)
        rank = x.shape.ndims
        if rank is None:
            raise NotImplementedError(f"tf.reduce_{op} of a tensor of unknown rank")
        if isinstance(axis, Tensor):
            if axis._const is None:
                raise TypeError(f"tf.reduce_{op}: the axis must be known when the graph is built")
            axis = axis._const
        axes = list(range(rank)) if axis is None else [int(a) for a in np.asarray(axis).reshape(-1)]
        for a in axes:
            if not -rank <= a < rank:
                raise ValueError(f"Invalid reduction dimension {a} for input with {rank} dimensions.")
        axes = sorted({a % rank for a in axes})
        with _next_name(g, scope, exact=True):
            return _op(g, "Reduce", [x], op=op, axes=axes, keep_dims=keep)

    reduce.__name__ = f"reduce_{op}"
    reduce.__doc__ = f"""``tf.reduce_{op}`` over ``axis`` (all axes if ``None``; negative
    counts from the end), ``keepdims`` keeping the reduced dimensions as
    1. The rank must be known while building."""
    return reduce


reduce_sum = _reduction("sum", "Sum")
reduce_prod = _reduction("prod", "Prod")
reduce_max = _reduction("max", "Max")
reduce_min = _reduction("min", "Min")
reduce_mean = _reduction("mean", "Mean")


def _comparison(op, default):
    def compare(x, y, name=None):
        g = _graph_of(x, y)
        scope = _scope(g, name, default)
        x, y = _operands(x, y, scope)
        with _next_name(g, scope, exact=True):
            return _op(g, "Compare", [x, y], op=op)

    compare.__name__ = op
    compare.__doc__ = f"``tf.{op}``: elementwise with broadcasting, a bool tensor."
    return compare


equal = _comparison("equal", "Equal")
not_equal = _comparison("not_equal", "NotEqual")
less = _comparison("less", "Less")
less_equal = _comparison("less_equal", "LessEqual")
greater = _comparison("greater", "Greater")
greater_equal = _comparison("greater_equal", "GreaterEqual")


def _unary(op, default, doc):
    def apply(x, name=None):
        g = _graph_of(x)
        scope = _scope(g, name, default)
        with _under(g, scope):
            x = convert_to_tensor(x, name="x")
        with _next_name(g, scope, exact=True):
            return _op(g, "Unary", [x], op=op)

    apply.__name__ = op
    apply.__doc__ = doc
    return apply


abs = _unary("abs", "Abs", "``tf.abs`` (the lowest signed integer stays itself).")  # noqa: A001 (TensorFlow's name)
square = _unary("square", "Square", "``tf.square``: ``x * x``.")
sqrt = _unary("sqrt", "Sqrt", "``tf.sqrt`` of floats.")
floor = _unary("floor", "Floor", "``tf.floor`` of floats.")
ceil = _unary("ceil", "Ceil", "``tf.math.ceil`` of floats.")
_round_floats = _unary("round", "Round", "")


def round(x, name=None):  # noqa: A001 (TensorFlow's name)
    """``tf.round``: half to even; an integer tensor is returned as it is,
    as TensorFlow returns it."""
    x = convert_to_tensor(x)
    return x if x.dtype.is_integer else _round_floats(x, name=name)


_DEFAULT_GRAPH_SEED = 87654321


def _random_seed(g, seed):
    """A random op's seed from its own ``seed`` and the graph's
    (``tf.set_random_seed``), as TensorFlow's ``get_seed`` derives it:
    with neither, ``None`` (new values every run of the program); with a
    graph seed, an op without its own takes one from its place in the
    graph, so the whole program draws the same values when run again;
    an op's own seed is combined with the graph's (TensorFlow's default
    one when none is set). The generators are feedstock's own, so the
    values are not TensorFlow's."""
    if g.seed is None and seed is None:
        return None
    graph_seed = _DEFAULT_GRAPH_SEED if g.seed is None else int(g.seed)
    op_seed = len(g._g) if seed is None else int(seed)
    return (graph_seed * 0x9E3779B97F4A7C15 + op_seed) & (2**64 - 1)


def set_random_seed(seed):
    """``tf.set_random_seed``: the default graph's random seed, from
    which its random ops without a seed of their own take one."""
    get_default_graph().seed = None if seed is None else int(seed)


def random_uniform(shape, minval=0, maxval=None, dtype=float32, seed=None, name=None):
    """``tf.random_uniform`` of a shape known while building: floats in
    ``[minval, maxval)`` (``maxval`` 1 by default), integers in
    ``[minval, maxval)`` (``maxval`` required: ValueError). New values each
    run; feedstock's generator is its own, so the values (even seeded)
    differ from TensorFlow's."""
    dtype = as_dtype(dtype)
    if maxval is None:
        if dtype.is_integer:
            raise ValueError(f"Must specify maxval for integer dtype {dtype!r}")
        maxval = 1
    g = get_default_graph()
    dims = _const_or_tensor(g, shape)
    if isinstance(dims, Tensor):
        raise NotImplementedError("tf.random_uniform of a shape computed when run")
    bounds = []
    for v in (minval, maxval):
        if isinstance(v, Tensor):
            if v._const is None:
                raise NotImplementedError("tf.random_uniform with bounds computed when run")
            v = v._const
        bounds.append(float(v))
    scope = _scope(g, name, "random_uniform")
    # As TensorFlow names it: the bare RandomUniform op inside the scope
    # for floats in [0, 1), else the scope's final op.
    op = f"{scope}/RandomUniform" if not dtype.is_integer and bounds == [0.0, 1.0] else scope
    with _next_name(g, op, exact=True):
        return _op(
            g, "RandomUniform", [], dims=list(dims), dtype=dtype._native, min=bounds[0], max=bounds[1],
            seed=_random_seed(g, seed),
        )


def random_shuffle(value, seed=None, name=None):
    """``tf.random_shuffle``: ``value``'s rows in a new random order each
    run (feedstock's generator: the order differs from TensorFlow's)."""
    g = _graph_of(value)
    scope = _scope(g, name, "RandomShuffle")
    with _under(g, scope):
        x = convert_to_tensor(value, name="value")
    with _next_name(g, scope, exact=True):
        return _op(g, "RandomShuffle", [x], seed=_random_seed(g, seed))


def where(condition, x=None, y=None, name=None):
    """``tf.where`` of TensorFlow 1: with ``x`` and ``y``, ``x`` where
    ``condition`` holds else ``y`` (``condition`` of ``x``'s shape, or a
    vector choosing rows); alone, the int64 coordinates of the true
    elements."""
    if (x is None) != (y is None):
        raise ValueError("x and y must both be non-None or both be None.")
    g = _graph_of(condition, x, y)
    if x is None:
        scope = _scope(g, name, "Where")
        with _under(g, scope):
            c = convert_to_tensor(condition, name="condition")
        with _next_name(g, scope, exact=True):
            return _op(g, "WhereTrue", [c])
    scope = _scope(g, name, "Select")
    with _under(g, scope):
        c = convert_to_tensor(condition, name="condition")
        x, y = _operands(x, y)
    with _next_name(g, scope, exact=True):
        return _op(g, "Select", [c, x, y])


def tile(input, multiples, name=None):  # noqa: A002 (TensorFlow's name)
    """``tf.tile``: ``input`` repeated ``multiples[k]`` times along each
    axis ``k``; feedstock needs ``multiples`` known while building."""
    g = _graph_of(input, multiples)
    scope = _scope(g, name, "Tile")
    with _under(g, scope):
        x = convert_to_tensor(input, name="input")
        m = _const_or_tensor(g, multiples)
    if isinstance(m, Tensor):
        raise NotImplementedError("tf.tile with multiples computed when run")
    if any(v < 0 for v in m):
        raise ValueError(f"Expected multiples >= 0, got {m}")
    with _next_name(g, scope, exact=True):
        return _op(g, "Tile", [x], multiples=[int(v) for v in m])


def gather(params, indices, validate_indices=None, name=None, axis=None, batch_dims=0):
    """``tf.gather``: the slices of ``params`` along ``axis`` (0) at
    ``indices``; an index out of range is ``InvalidArgumentError`` when
    run, as on TensorFlow's CPU."""
    if batch_dims:
        raise NotImplementedError("tf.gather with batch_dims")
    g = _graph_of(params, indices)
    scope = _scope(g, name, "GatherV2")
    with _under(g, scope):
        params = convert_to_tensor(params, name="params")
        indices = convert_to_tensor(indices, name="indices")
    axis = 0 if axis is None else int(axis._const if isinstance(axis, Tensor) else axis)
    if axis < 0:
        if params.shape.ndims is None:
            raise NotImplementedError("tf.gather with a negative axis of a tensor of unknown rank")
        axis += params.shape.ndims
    with _next_name(g, scope, exact=True):
        return _op(g, "Gather", [params, indices], axis=axis)


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None):
    """``tf.one_hot``: ``on_value`` (1) where the index is, ``off_value``
    (0) elsewhere, along a new axis ``axis`` (-1: last) of ``depth``; the
    dtype is ``dtype``, else ``on_value``'s or ``off_value``'s, else
    float32. An index outside ``[0, depth)`` gives all ``off_value``."""
    g = _graph_of(indices, on_value, off_value)
    scope = _scope(g, name, "one_hot")
    with _under(g, scope):
        indices = convert_to_tensor(indices, name="indices")
        given = [v for v in (on_value, off_value) if isinstance(v, Tensor)]
        if dtype is None:
            if given:
                dtype = given[0].dtype
            elif on_value is not None or off_value is not None:
                dtype = _infer_dtype(on_value if on_value is not None else off_value)
            else:
                dtype = float32
        dtype = as_dtype(dtype)
        on = convert_to_tensor(1 if on_value is None else on_value, dtype=dtype, name="on_value")
        off = convert_to_tensor(0 if off_value is None else off_value, dtype=dtype, name="off_value")
    depth = _one_hot_depth(depth)
    with _next_name(g, scope, exact=True):
        return _op(g, "OneHot", [indices, on, off], depth=depth, axis=-1 if axis is None else int(axis))


def _one_hot_depth(depth):
    """``tf.one_hot``'s depth, an int32 input as in TensorFlow: a Python
    int wraps into int32 (2**40 is 0), a negative one is the ValueError
    TensorFlow's shape inference raises, a tensor of another dtype a
    TypeError; feedstock needs it known while building."""
    if isinstance(depth, Tensor):
        if depth.dtype != int32:
            raise TypeError(
                f"Input 'depth' of 'OneHot' Op has type {depth.dtype.name} that does not match expected type of int32."
            )
        if depth._const is None:
            raise TypeError("tf.one_hot: depth must be known when the graph is built")
        value = int(depth._const)
    else:
        value = int(_as_dtype_array(depth, int32))
    if value < 0:
        raise ValueError(f"Dimension size, given by scalar input 1, must be non-negative but is {value}")
    return value


# ---------------------------------------------------------------- assertions


class _CheckedAssert(Operation):
    """An assertion TensorFlow decided while building (its operands were
    known and the condition held): nothing to run."""


def _assert(symbol, check, opname, x, y, data, message, name, zero=False):
    """``tf.assert_*``: checked while building when the operands are known,
    as TensorFlow checks them (``InvalidArgumentError`` with TensorFlow's
    text: ``data``, by default the condition and the operands, after
    ``message``); feedstock cannot check ones computed when run
    (NotImplementedError rather than skipping the check). ``zero``: the
    one-operand forms (``assert_positive``: ``y`` is 0), whose default
    text names ``x`` alone, after ``message`` and ``.  ``, and which
    ignore ``message`` when given ``data``, as TensorFlow's do."""
    g = _graph_of(x, y)
    scope = _scope(g, name, opname)
    with g.as_default(), _under(g, scope):
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, dtype=x.dtype, name="y") if not isinstance(y, Tensor) else y
    if x._const is None or y._const is None:
        raise NotImplementedError(
            f"tf.{opname} of values computed when run: feedstock checks assertions only on values known while "
            "building"
        )
    if not np.all(check(x._const, y._const)):
        if zero and data is None:
            # TensorFlow's assert_non_positive lacks a comma between its
            # last two strings: no line break before "x (".
            sep = "" if symbol == "<=" else "\n"
            text = (
                f"{message}.  " if message else ""
            ) + f"\nCondition x {symbol} 0 did not hold element-wise:{sep}x ({x.name}) = \n{x._const}"
        else:
            if data is None:
                data = [f"Condition x {symbol} y did not hold element-wise:", f"x ({x.name}) = ", x,
                        f"y ({y.name}) = ", y]
            if message is not None and not zero:
                data = [message] + list(data)
            text = "\n".join(_static_text(d) for d in data)
        raise errors.InvalidArgumentError(None, None, text)
    g._g.check_not_finalized()
    g._python_ops += 1
    return _CheckedAssert(g, [], name=scope)


def _static_text(d):
    """An item of an assertion's ``data`` as TensorFlow prints it when the
    check fails while building: a known tensor's value, else as it is."""
    if isinstance(d, Tensor):
        return str(d._const) if d._const is not None else str(d)
    return str(d)


def assert_equal(x, y, data=None, summarize=None, message=None, name=None):
    # TensorFlow's assert_equal opens its name scope twice and names its
    # converted inputs under the second (``assert_equal_1/y``).
    _scope(_graph_of(x, y), name, "assert_equal")
    return _assert("==", np.equal, "assert_equal", x, y, data, message, name)


def assert_none_equal(x, y, data=None, summarize=None, message=None, name=None):
    return _assert("!=", np.not_equal, "assert_none_equal", x, y, data, message, name)


def assert_less(x, y, data=None, summarize=None, message=None, name=None):
    return _assert("<", np.less, "assert_less", x, y, data, message, name)


def assert_less_equal(x, y, data=None, summarize=None, message=None, name=None):
    return _assert("<=", np.less_equal, "assert_less_equal", x, y, data, message, name)


def assert_greater(x, y, data=None, summarize=None, message=None, name=None):
    return _assert(">", np.greater, "assert_greater", x, y, data, message, name)


def assert_greater_equal(x, y, data=None, summarize=None, message=None, name=None):
    return _assert(">=", np.greater_equal, "assert_greater_equal", x, y, data, message, name)


def assert_positive(x, data=None, summarize=None, message=None, name=None):
    return _assert(">", np.greater, "assert_positive", x, 0, data, message, name, zero=True)


def assert_negative(x, data=None, summarize=None, message=None, name=None):
    return _assert("<", np.less, "assert_negative", x, 0, data, message, name, zero=True)


def assert_non_negative(x, data=None, summarize=None, message=None, name=None):
    return _assert(">=", np.greater_equal, "assert_non_negative", x, 0, data, message, name, zero=True)


def assert_non_positive(x, data=None, summarize=None, message=None, name=None):
    return _assert("<=", np.less_equal, "assert_non_positive", x, 0, data, message, name, zero=True)


@contextlib.contextmanager
def control_dependencies(control_inputs):
    """``tf.control_dependencies``: accepted for assertions checked while
    building (nothing is left to run before the block's operations) and
    ``None``; other control inputs would need feedstock to order runs,
    which it does not (NotImplementedError rather than ignoring them)."""
    for c in control_inputs or []:
        if not isinstance(c, _CheckedAssert):
            raise NotImplementedError(
                f"tf.control_dependencies on {c!r}: feedstock supports only assertions checked while building"
            )
    yield


def string_to_number(string_tensor, out_type=None, name=None):
    """``tf.string_to_number`` (``tf.strings.to_number``): each string
    parsed as ``out_type`` (float32 by default; int32, int64, float64) as
    TensorFlow parses it; a string that does not parse is
    ``InvalidArgumentError`` when run."""
    out_type = float32 if out_type is None else as_dtype(out_type)
    g = _graph_of(string_tensor)
    scope = _scope(g, name, "StringToNumber")
    with _under(g, scope):
        x = convert_to_tensor(string_tensor, name="string_tensor")
    with _next_name(g, scope, exact=True):
        return _op(g, "StringToNumber", [x], dtype=out_type._native)


def string_split(source, sep=None, skip_empty=True, delimiter=None, result_type="SparseTensor", name=None):
    """``tf.string_split`` of TensorFlow 1: the strings of the vector
    ``source`` split at every character of ``delimiter`` (``sep``; default
    ``" "``; ``""`` splits into bytes), empty tokens dropped with
    ``skip_empty``; a ``SparseTensor`` of the tokens, row ``i`` holding
    string ``i``'s. A source of known rank other than 1 is a ValueError."""
    if result_type != "SparseTensor":
        raise NotImplementedError("tf.string_split: only result_type='SparseTensor' (feedstock has no ragged tensors)")
    if sep is not None and delimiter is not None:
        raise ValueError("Cannot specify both 'sep' and 'delimiter'")
    delimiter = sep if sep is not None else delimiter
    delimiter = " " if delimiter is None else delimiter
    if isinstance(delimiter, Tensor):
        if delimiter._const is None:
            raise TypeError("tf.string_split: the delimiter must be known when the graph is built")
        delimiter = delimiter._const.item()
    if isinstance(delimiter, str):
        delimiter = delimiter.encode()
    g = _graph_of(source)
    scope = _scope(g, name, "StringSplit")
    with _under(g, scope):
        x = convert_to_tensor(source, dtype=string)
        with _next_name(g, "StringSplit"):
            return _op(g, "StringSplit", [x], delimiter=bytes(delimiter), skip_empty=bool(skip_empty))


def strided_slice(input_, begin, end, strides=None, name=None, **masks):
    """``tf.strided_slice`` without masks."""
    if any(masks.values()):
        raise NotImplementedError("strided_slice masks are not supported; index with x[a:b] instead")
    x = convert_to_tensor(input_)
    strides = strides if strides is not None else [1] * len(begin)
    g = x.graph
    bounds = [_const_or_tensor(g, v) for v in (begin, end, strides)]
    if any(isinstance(v, Tensor) for v in bounds):
        with g.as_default():
            bounds = [v if isinstance(v, Tensor) else constant(v, dtype=int32) for v in bounds]
        return _named_op(
            g, name if name is not None else "StridedSlice",
            lambda: _op(g, "StridedSliceInputs", [x, *bounds]),
        )
    begin, end, strides = ([int(v) for v in b] for b in bounds)
    return _named_op(
        x.graph, name if name is not None else "StridedSlice",
        lambda: _op(x.graph, "StridedSlice", [x], begin=begin, end=end, strides=strides, **dict.fromkeys(_MASKS, 0)),
    )


def placeholder(dtype, shape=None, name=None):
    """``tf.placeholder``: a value fed to each run that needs it; a run
    that needs it unfed fails ``InvalidArgumentError`` naming it."""
    g = get_default_graph()
    return Tensor(g, g._g.placeholder(as_dtype(dtype)._native, _shape_arg(shape), name))


def placeholder_with_default(input, shape, name=None):  # noqa: A002 (TensorFlow's name)
    """``tf.placeholder_with_default``: ``input``'s value unless fed; its
    static shape is ``shape`` (ValueError when ``input``'s is not
    compatible with it)."""
    g = _graph_of(input)
    scope = _scope(g, name, "PlaceholderWithDefault")
    with _under(g, scope):
        x = convert_to_tensor(input, name="input")
    with _next_name(g, scope, exact=True):
        return _wrap1(g, g._g.placeholder_with_default(x._o, _shape_arg(shape)))


# ---------------------------------------------------------------- sessions


class _SessionStack(threading.local):
    def __init__(self):
        self.stack = []


_session_stack = _SessionStack()


def _default_session():
    if not _session_stack.stack:
        raise ValueError(
            "Cannot evaluate tensor using `eval()`: No default session is registered. "
            "Use `with sess.as_default()` or pass an explicit session to `eval(session=sess)`"
        )
    return _session_stack.stack[-1]


def get_default_session():
    return _session_stack.stack[-1] if _session_stack.stack else None


def _flatten(graph, fetches, leaves):
    """The structure of ``fetches`` with each leaf replaced by its index
    in ``leaves``; leaves are tensors and operations of ``graph`` (or
    their names), refused as TensorFlow refuses them."""
    if fetches is None:
        raise TypeError(f'Argument `fetch` = None has invalid type "NoneType". Cannot be None')
    if isinstance(fetches, dict):
        return ("dict", type(fetches), [(k, _flatten(graph, v, leaves)) for k, v in fetches.items()])
    if isinstance(fetches, tuple) and hasattr(fetches, "_fields"):
        return ("namedtuple", type(fetches), [_flatten(graph, v, leaves) for v in fetches])
    if isinstance(fetches, (list, tuple)):
        return ("seq", type(fetches), [_flatten(graph, v, leaves) for v in fetches])
    if not isinstance(fetches, _SummaryFetch):
        fetches = _fetch_element(graph, fetches)
    leaves.append(fetches)
    return ("leaf", len(leaves) - 1)


def _fetch_element(graph, fetch):
    """A fetch leaf as an element of ``graph``: TypeError for what is
    no tensor, operation or name, ValueError for an element of another
    graph or an unknown name (TensorFlow's messages)."""
    try:
        return graph.as_graph_element(fetch, allow_tensor=True, allow_operation=True)
    except TypeError as e:
        raise TypeError(
            f'Argument `fetch` = {fetch} has invalid type "{type(fetch).__name__}" must be a string or Tensor. ({e})'
        ) from None
    except (ValueError, KeyError) as e:
        raise ValueError(f"Argument `fetch` = {fetch} cannot be interpreted as a Tensor. ({e.args[0]})") from None


def _feed_key(graph, key):
    """A ``feed_dict`` key as a tensor of ``graph`` (a tensor, or its
    ``"<op>:<index>"`` name); TypeError otherwise, as in TensorFlow."""
    try:
        t = graph.as_graph_element(key, allow_tensor=True, allow_operation=False)
    except Exception as e:  # noqa: BLE001 (TensorFlow turns every refusal into this TypeError)
        raise TypeError(f"Cannot interpret feed_dict key as Tensor: {e.args[0]}") from None
    return Tensor(t.graph, t._o) if isinstance(t, Variable) else t


def _feed_value(t, key, value):
    """``value`` fed for tensor ``t`` as the array TensorFlow feeds:
    converted to ``t``'s numpy type as ``np.asarray(value).astype``
    (wrapping, NaN to integers as numpy casts it); a Python int that
    does not survive the conversion, or a tensor, is a TypeError; a shape
    incompatible with ``t``'s static one a ValueError."""
    if isinstance(value, Tensor):
        raise TypeError(
            "The value of a feed cannot be a tf.Tensor object. Acceptable feed values include Python scalars, "
            f"strings, lists, numpy ndarrays, or TensorHandles. For reference, the tensor object was {value} "
            f"which was passed to the argument `feed_dict` with key {key}."
        )
    if isinstance(value, SparseTensorValue):
        raise TypeError("feeding a SparseTensorValue is not supported")
    np_type = t.dtype.as_numpy_dtype
    if isinstance(value, int) and _feed_int(np_type, value) != value:
        raise TypeError(
            f"Type of feed value {value} with type {type(value)} is not compatible with Tensor type {np_type}. "
            "Try explicitly setting the type of the feed tensor to a larger type (e.g. int64)."
        )
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        if np.issubdtype(np_type, np.number):
            arr = np.asarray(value).astype(np_type, copy=False)
        else:
            arr = np.asarray(value, dtype=np_type)
    if not _compatible(t.shape.dims, list(arr.shape)):
        raise ValueError(f"Cannot feed value of shape {arr.shape} for Tensor {t.name}, which has shape {t.shape}")
    return arr


def _check_strings(arr):
    """A fed string array holds only ``bytes`` and ``str``: else
    ``InternalError``, as TensorFlow's run fails."""
    if arr.dtype != object:
        return
    for x in arr.reshape(-1):
        if not isinstance(x, (bytes, str)):
            kind = type(x)
            module = "numpy." if kind.__module__ == "numpy" else ""
            raise errors.InternalError(
                None, None, f"Graph execution error:\n\nUnsupported object type {module}{kind.__name__}"
            )


def _feed_int(np_type, value):
    """A Python int as TensorFlow checks it fits a feed of ``np_type``
    (``str`` of it for strings)."""
    if np_type is object:
        return str(value)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        return np_type(np.array(value).astype(np_type))


def _rebuild(spec, values):
    kind = spec[0]
    if kind == "leaf":
        return values[spec[1]]
    if kind == "dict":
        out = spec[1]() if spec[1] is not dict else {}
        for k, v in spec[2]:
            out[k] = _rebuild(v, values)
        return out
    if kind == "namedtuple":
        return spec[1](*[_rebuild(v, values) for v in spec[2]])
    items = [_rebuild(v, values) for v in spec[2]]
    return items if spec[1] is list else spec[1](items)


def _scalarize(v):
    if isinstance(v, np.ndarray) and v.ndim == 0:
        return v[()]
    return v


class Session:
    """``tf.Session``: runs a graph.

    ``run`` returns numpy arrays (strings as object arrays of ``bytes``;
    scalars as numpy scalars, or ``bytes``) and ``SparseTensorValue`` for
    sparse tensors, in the structure of the fetches. The GIL is released
    while it waits; Ctrl-C raises ``KeyboardInterrupt`` within a fraction
    of a second (the guide's ``finally: coord.request_stop()`` then stops
    the queue runners).
    """

    def __init__(self, target="", graph=None, config=None):
        self.graph = graph or get_default_graph()
        self._s = _native.Session(self.graph._g.native)
        self._closed = False
        self._ctx = None

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """The values of ``fetches`` (any structure of tensors,
        operations and their names), with ``feed_dict``'s values fed.

        As TensorFlow: a closed session, or an empty graph, is a
        RuntimeError; a fetched tensor that is fed gives the fed array."""
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        if self.graph._is_empty():
            raise RuntimeError("The Session graph is empty. Add operations to the graph before calling run().")
        fed = {}
        for key, value in (feed_dict or {}).items():
            t = _feed_key(self.graph, key)
            fed[t._o] = _feed_value(t, key, value)
        leaves = []
        spec = _flatten(self.graph, fetches, leaves)
        native_fetches, index = [], {}
        for leaf in leaves:
            if isinstance(leaf, _SummaryFetch):
                continue
            tensors = leaf.inputs if isinstance(leaf, Operation) else [leaf]
            for t in tensors:
                if t._o not in index and t._o not in fed:
                    index[t._o] = len(native_fetches)
                    native_fetches.append(t._o)
        timeout = None
        if options is not None and getattr(options, "timeout_in_ms", 0):
            timeout = options.timeout_in_ms / 1000.0
        values = []
        if native_fetches:
            # As TensorFlow: nothing runs when every fetch is fed.
            for arr in fed.values():
                _check_strings(arr)
            values = self._s.run(native_fetches, list(fed.items()), timeout)
        out = []
        for leaf in leaves:
            if isinstance(leaf, _SummaryFetch):
                out.append(dict(self._s.queue_summaries()))
            elif isinstance(leaf, Operation):
                out.append(None)
            elif leaf._o in fed:
                out.append(fed[leaf._o])
            else:
                out.append(_scalarize(values[index[leaf._o]]))
        return _rebuild(spec, out)

    def close(self):
        """Closes the session: blocked runs return ``CancelledError`` and
        queue runners stop."""
        self._closed = True
        self._s.close()

    def queue_summaries(self):
        """``{tag: fraction}``: how full each queue is, tagged as
        TensorFlow's summaries (``queue/<name>/fraction_of_<cap>_full``)."""
        return dict(self._s.queue_summaries())

    def stats(self):
        """One dict of counters per queue (size, capacity, enqueued,
        dequeued, batches, held_back, filtered, ...)."""
        return self._s.stats()

    def shard_stats(self):
        """One dict per sharded producer (name, dropped, padded): what
        its remainder policy dropped or padded."""
        return self._s.shard_stats()

    def skip_stats(self):
        """The damaged TFRecord regions the readers skipped (readers made
        with ``skip_corrupt``): ``{"skipped", "skipped_bytes", "files"}``,
        ``files`` one dict per file (``file``, ``skipped``,
        ``skipped_bytes``)."""
        return self._s.skip_stats()

    @contextlib.contextmanager
    def as_default(self):
        _session_stack.stack.append(self)
        try:
            yield self
        finally:
            _session_stack.stack.remove(self)

    def __enter__(self):
        self._ctx = self.as_default()
        self._ctx.__enter__()
        self._graph_ctx = self.graph.as_default()
        self._graph_ctx.__enter__()
        return self

    def __exit__(self, *exc):
        self._graph_ctx.__exit__(*exc)
        self._ctx.__exit__(*exc)
        self.close()
        return False


class InteractiveSession(Session):
    """``tf.InteractiveSession``: a session that makes itself (and its
    graph) the default from its creation until :meth:`close`, so
    ``t.eval()`` and ``op.run()`` need no ``with``."""

    def __init__(self, target="", graph=None, config=None):
        super().__init__(target, graph, config)
        self._default_ctx = self.as_default()
        self._default_ctx.__enter__()
        self._graph_default_ctx = self.graph.as_default()
        self._graph_default_ctx.__enter__()

    def close(self):
        super().close()
        if self._default_ctx is not None:
            self._graph_default_ctx.__exit__(None, None, None)
            self._default_ctx.__exit__(None, None, None)
            self._default_ctx = None


class RunOptions:
    """``tf.RunOptions``: ``timeout_in_ms`` bounds how long a run waits
    (``DeadlineExceededError`` past it)."""

    def __init__(self, timeout_in_ms=0, **_ignored):
        self.timeout_in_ms = timeout_in_ms


class _SummaryFetch:
    """What ``tf.summary.merge_all()`` returns: fetching it gives the
    queue-fullness summaries as ``{tag: value}``."""

    def __repr__(self):
        return "<queue summaries>"


# ---------------------------------------------------------------- coordinator


class QueueRunnerThread:
    """A native queue-runner thread, as ``start_queue_runners`` returns
    them; :meth:`Coordinator.join` joins them."""

    def __init__(self, native):
        self._t = native

    @property
    def name(self):
        return self._t.name

    def is_alive(self):
        return self._t.is_alive()

    daemon = True

    def start(self):
        """Does nothing: the native thread runs from its creation."""

    def join(self, timeout=None):
        """Waits for the thread to end, ``timeout`` seconds at most (as
        ``threading.Thread.join``)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.is_alive() and (deadline is None or time.monotonic() < deadline):
            time.sleep(0.005)

    def __repr__(self):
        return f"<QueueRunnerThread {self.name} alive={self.is_alive()}>"


class Coordinator:
    """``tf.train.Coordinator``: stops threads together and reports the
    first real error. ``OutOfRangeError`` (or the given
    ``clean_stop_exception_types``) counts as a clean stop."""

    def __init__(self, clean_stop_exception_types=None):
        self._c = _native.Coordinator()
        self._exc = None
        self._threads = []
        self._joined = False
        self._lock = threading.Lock()
        if clean_stop_exception_types is None:
            clean_stop_exception_types = (errors.OutOfRangeError,)
        self._clean = tuple(clean_stop_exception_types)

    def request_stop(self, ex=None):
        """Asks every thread to stop; ``ex`` (an exception, or a
        ``sys.exc_info()`` tuple) is the reason, re-raised by :meth:`join`
        unless it is a clean stop. After :meth:`join`, a real ``ex`` is
        raised at once, as in TensorFlow."""
        if isinstance(ex, tuple):
            ex = ex[1]
        if ex is not None and isinstance(ex, self._clean):
            ex = None
        if ex is not None and self._joined:
            raise ex
        if ex is None:
            self._c.request_stop()
            return
        with self._lock:
            if self._exc is None:
                self._exc = ex
        kind = type(ex).__name__[: -len("Error")] if isinstance(ex, errors.OpError) else "Unknown"
        self._c.request_stop(kind, str(ex))

    def clear_stop(self):
        """Forgets the stop request and its error, and that the threads
        were joined: the coordinator can be used again."""
        with self._lock:
            self._c = _native.Coordinator()
            self._exc = None
            self._joined = False

    def should_stop(self):
        return self._c.should_stop()

    def wait_for_stop(self, timeout=None):
        return self._c.wait_for_stop(timeout)

    @contextlib.contextmanager
    def stop_on_exception(self):
        """A context manager: any exception inside it requests a stop with
        it (a clean one for ``OutOfRangeError``) and is swallowed."""
        try:
            yield
        except:  # noqa: E722 (TensorFlow's: any exception stops the threads)
            self.request_stop(ex=sys.exc_info())

    def register_thread(self, thread):
        """Adds ``thread`` to those :meth:`join` waits for by default."""
        if thread not in self._threads:
            self._threads.append(thread)

    def raise_requested_exception(self):
        if self._exc is not None:
            raise self._exc
        err = self._c.error()
        if err is not None:
            raise err

    def join(self, threads=None, stop_grace_period_secs=120, ignore_live_threads=False):
        """Waits for the threads (the registered ones, including every
        queue runner started with this coordinator, and ``threads``) to end
        or a stop to be requested, then gives them
        ``stop_grace_period_secs`` more. Raises the first error any of them
        or :meth:`request_stop` reported, else ``RuntimeError`` for threads
        still running (unless ``ignore_live_threads``)."""
        threads = list(self._threads) + [t for t in (threads or ()) if t not in self._threads]
        native = [t for t in threads if isinstance(t, QueueRunnerThread)]
        others = [t for t in threads if not isinstance(t, QueueRunnerThread)]
        native_err, stragglers = None, []
        # First until the threads end or a stop is requested: the native
        # join marks the coordinator joined.
        while any(t.is_alive() for t in threads) and not self.wait_for_stop(0.05):
            pass
        try:
            self._c.join([t._t for t in native], float(stop_grace_period_secs))
        except errors.DeadlineExceededError as e:
            stragglers = [t.name for t in native if t.name in str(e)] or [str(e)]
        except errors.OpError as e:
            native_err = e
        deadline = time.monotonic() + stop_grace_period_secs
        for t in others:
            t.join(max(0.0, deadline - time.monotonic()))
        stragglers += [t.name for t in others if t.is_alive()]
        with self._lock:
            self._joined = True
            self._threads = []
        if self._exc is not None:
            raise self._exc
        if native_err is not None:
            raise native_err
        if stragglers and not ignore_live_threads:
            raise RuntimeError("Coordinator stopped with threads still running: " + " ".join(stragglers))

    @property
    def joined(self):
        """Whether :meth:`join` has run (since :meth:`clear_stop`)."""
        return self._joined


def _wait_for_stop_polling(coord, timeout):
    """``coord.wait_for_stop(timeout)`` by polling: a daemon thread must not
    be blocked in native code when the interpreter exits."""
    deadline = time.monotonic() + max(0.0, timeout)
    while not coord.should_stop():
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        time.sleep(min(left, 0.02))
    return True


class LooperThread(threading.Thread):
    """``tf.train.LooperThread``: a daemon thread, registered with ``coord``,
    calling ``target`` (or :meth:`run_loop`) back to back, or every
    ``timer_interval_secs``, until a stop is requested; an exception
    requests the stop with it."""

    def __init__(self, coord, timer_interval_secs, target=None, args=None, kwargs=None):
        if not isinstance(coord, Coordinator):
            raise ValueError(f"'coord' argument must be a Coordinator: {coord}")
        super().__init__()
        self.daemon = True
        self._coord = coord
        self._timer_interval_secs = timer_interval_secs
        self._target = target
        if self._target:
            self._args = args or ()
            self._kwargs = kwargs or {}
        elif args or kwargs:
            raise ValueError("'args' and 'kwargs' argument require that you also pass 'target'")
        self._coord.register_thread(self)

    @staticmethod
    def loop(coord, timer_interval_secs, target, args=None, kwargs=None):
        """Starts a LooperThread calling ``target`` and returns it."""
        looper = LooperThread(coord, timer_interval_secs, target=target, args=args, kwargs=kwargs)
        looper.start()
        return looper

    def run(self):
        with self._coord.stop_on_exception():
            self.start_loop()
            if self._timer_interval_secs is None:
                while not self._coord.should_stop():
                    self.run_loop()
            else:
                next_time = time.time()
                while not _wait_for_stop_polling(self._coord, next_time - time.time()):
                    next_time += self._timer_interval_secs
                    self.run_loop()
            self.stop_loop()

    def start_loop(self):
        """Called once when the thread starts."""

    def stop_loop(self):
        """Called once when the loop ends."""

    def run_loop(self):
        """Called in the loop: runs ``target``."""
        if self._target:
            self._target(*self._args, **self._kwargs)


def start_queue_runners(sess=None, coord=None, daemon=True, start=True, collection=QUEUE_RUNNERS):
    """Starts the queue runners of ``sess``'s graph in native threads and
    returns them (``QueueRunnerThread`` objects for ``coord.join``), with a
    coordinator also TensorFlow's close-on-stop thread per runner. A
    collection other than ``tf.GraphKeys.QUEUE_RUNNERS`` starts the
    ``tf.train.QueueRunner`` objects added to it."""
    from ._queues import close_on_stop_thread

    if sess is None:
        sess = get_default_session()
        if sess is None:
            raise ValueError(
                "Cannot start queue runners: No default session is registered. Use `with sess.as_default()` "
                "or pass an explicit session to tf.start_queue_runners(sess=sess)"
            )
    if collection != QUEUE_RUNNERS:
        threads = []
        for qr in get_default_graph().get_collection(collection):
            threads.extend(qr.create_threads(sess, coord=coord, daemon=daemon, start=start))
        return threads
    given = coord is not None
    if coord is None:
        coord = Coordinator()
        sess._implicit_coord = coord
    threads = [QueueRunnerThread(t) for t in sess._s.start_queue_runners(coord._c)]
    if given:
        # One per runner: its threads are named "<queue>-runner-<i>".
        runners = {}
        for t in threads:
            runners.setdefault(t.name.rsplit("-runner-", 1)[0], []).append(t)
        threads += [close_on_stop_thread(q, coord, ts, daemon, start) for q, ts in runners.items()]
    for t in threads:
        coord.register_thread(t)
    return threads
