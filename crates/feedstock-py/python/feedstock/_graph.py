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
import re
import threading

import numpy as np

from . import _device, _native, errors
from ._dtypes import (  # noqa: F401 (re-exported to the other modules)
    DType,
    Dimension,
    TensorShape,
    _BY_NATIVE,
    _compatible,
    _ml_dtypes,
    _shape_arg,
    as_dtype,
    bfloat16,
    bool_,
    complex128,
    complex64,
    float16,
    float32,
    float64,
    half,
    int16,
    int32,
    int64,
    int8,
    string,
    uint16,
    uint32,
    uint64,
    uint8,
)


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
        # The tensors the nodes made now run first (tf.control_dependencies).
        self._control_inputs = []
        #: The graph-level random seed (``tf.set_random_seed``).
        self.seed = None

    def as_default(self):
        """A context manager making this the default graph."""
        return _default_graph_stack.push(self)

    def get_collection(self, key, scope=None):
        """The values added to collection ``key``; with ``scope``, those
        whose name it matches (``re.match``, as TensorFlow: a tower's
        ``tower_1/`` losses), items without a name left out."""
        items = list(self._collections.get(key, []))
        if scope is None:
            return items
        pattern = re.compile(scope)
        return [v for v in items if isinstance(getattr(v, "name", None), str) and pattern.match(v.name)]

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
        """``Graph.device``: see :mod:`feedstock._device`."""
        return _device.placing(self, device_name_or_function)

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
    """``tf.device``: see :mod:`feedstock._device`."""
    return _device.placing(get_default_graph(), device_name_or_function)


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

        A refinement that adds knowledge becomes a node that gives the
        tensor itself with the refined static shape (``EnsureShape``),
        checked when run: a value of another shape is
        ``InvalidArgumentError``, where TensorFlow would fail later, or not
        at all. An incompatible shape is ``ValueError`` at once.
        """
        want = _shape_arg(shape)
        have = self.shape._dims
        if want is None:
            return
        if not _compatible(have, want):
            raise ValueError(_incompatible(have, want))
        if have is not None and all(h is not None or w is None for h, w in zip(have, want)):
            return
        # The tensor keeps its name, as TensorFlow's does.
        g = self.graph
        self._named = self._name_output()
        # The node's own name stays out of TensorFlow's.
        with _under(g, ""):
            hidden = g._g.unique_name(f"{g._g.name(self._named)}/set_shape")
        with _next_name(g, hidden, exact=True):
            self._o = g._g.op("EnsureShape", [self._o], {"shape": [-1 if d is None else d for d in want]})[0]

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

    @property
    def device(self):
        """The device its node was made under (``tf.device``), as
        TensorFlow names it; ``""`` if none."""
        return _device.of(self.graph, self.graph._g.name(self._name_output()))

    def __str__(self):
        shape = "" if self.shape._dims is None else f", shape={self.shape}"
        device = f", device={self.device}" if self.device else ""
        return f'Tensor("{self.name}"{shape}, dtype={self.dtype.name}{device})'

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

    def __pow__(self, o):
        return _binary("pow", self, o, None, "pow")

    def __rpow__(self, o):
        return _binary("pow", o, self, None, "pow")

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
                dims.append(("range", _bound(k.start), _bound(k.stop), step))
            elif isinstance(k, (int, np.integer, Dimension)) or (isinstance(k, Tensor) and k._const is not None):
                dims.append(("at", _opt_int(k)))
            else:
                raise TypeError(f"unsupported index {k!r}: ints, slices, None and ... are")
        if any(isinstance(v, Tensor) for d in dims for v in d[1:]):
            from ._slicing import index_when_run

            return index_when_run(self, dims)
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


def _bound(x):
    """A slice bound: an int, ``None``, or a tensor computed when run."""
    return x if isinstance(x, Tensor) and x._const is None else _opt_int(x)


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
        shape_t = convert_to_tensor(output_shape, preferred_dtype=int32)
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


def strided_slice(input_, begin, end, strides=None, begin_mask=0, end_mask=0, ellipsis_mask=0,
                  new_axis_mask=0, shrink_axis_mask=0, var=None, name=None):
    """``tf.strided_slice``, with TensorFlow's masks when the bounds are
    known while building (bounds computed when run take no masks)."""
    masks = dict(begin_mask=begin_mask, end_mask=end_mask, ellipsis_mask=ellipsis_mask,
                 new_axis_mask=new_axis_mask, shrink_axis_mask=shrink_axis_mask)
    masks = {k: int(v or 0) for k, v in masks.items()}
    x = convert_to_tensor(input_)
    if strides is None:
        # As TensorFlow: ones like ``begin``.
        strides = ones_like(begin) if isinstance(begin, Tensor) else [1] * len(begin)
    g = x.graph
    bounds = [_const_or_tensor(g, v) for v in (begin, end, strides)]
    if any(isinstance(v, Tensor) for v in bounds):
        if any(masks.values()):
            raise NotImplementedError("strided_slice: masks with bounds computed when run are not supported")
        with g.as_default():
            bounds = [v if isinstance(v, Tensor) else constant(v, dtype=int32) for v in bounds]
        return _named_op(
            g, name if name is not None else "StridedSlice",
            lambda: _op(g, "StridedSliceInputs", [x, *bounds]),
        )
    begin, end, strides = ([int(v) for v in b] for b in bounds)
    return _named_op(
        x.graph, name if name is not None else "StridedSlice",
        lambda: _op(x.graph, "StridedSlice", [x], begin=begin, end=end, strides=strides, **masks),
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


# Defined in _constants, which imports from this module: re-exported here, after
# everything it needs is defined.
from ._constants import (  # noqa: E402,F401
    _as_dtype_array,
    _autopack,
    _const_array,
    _fill_shape,
    _first_tensor,
    _holds_tensor,
    _infer_dtype,
    _leaf_kind,
    _leaves,
    constant,
    convert_to_tensor,
)


# Defined in _variables, which imports from this module: re-exported here, after
# everything it needs is defined.
from ._variables import (  # noqa: E402,F401
    Variable,
    _group_inputs,
    _python_op,
    add_to_collection,
    assign,
    assign_add,
    get_collection,
    global_variables,
    global_variables_initializer,
    group,
    initialize_all_variables,
    initialize_local_variables,
    local_variables,
    local_variables_initializer,
    no_op,
    trainable_variables,
    variables_initializer,
)


# Defined in _session, which imports from this module: re-exported here, after
# everything it needs is defined.
from ._session import (  # noqa: E402,F401
    Coordinator,
    InteractiveSession,
    LooperThread,
    QueueRunnerThread,
    RunOptions,
    Session,
    _SessionStack,
    _SummaryFetch,
    _check_strings,
    _default_session,
    _feed_int,
    _feed_key,
    _feed_value,
    _fetch_element,
    _flatten,
    _rebuild,
    _scalarize,
    _session_stack,
    _wait_for_stop_polling,
    get_default_session,
    start_queue_runners,
)


# Defined in _math_ops, which imports from this module: re-exported here, after
# everything it needs is defined.
from ._math_ops import (  # noqa: E402,F401
    _DEFAULT_GRAPH_SEED,
    _INT_FOLDS,
    _assert_same_shape,
    _binary,
    _binary_of,
    _comparison,
    _const_or_tensor,
    _consts,
    _filled,
    _float_division,
    _fold_int,
    _full_dims,
    _like,
    _like_filled,
    _named_op,
    _one_hot_depth,
    _operands,
    _random_seed,
    _reduction,
    _round_floats,
    _small,
    _tensor_list,
    _unary,
    abs,
    add,
    cast,
    ceil,
    clip_by_value,
    concat,
    div,
    divide,
    equal,
    expand_dims,
    fill,
    floor,
    floor_div,
    floordiv,
    floormod,
    gather,
    greater,
    greater_equal,
    identity,
    less,
    less_equal,
    maximum,
    minimum,
    mod,
    multiply,
    negative,
    not_equal,
    one_hot,
    ones,
    ones_like,
    random_shuffle,
    random_uniform,
    rank,
    realdiv,
    reduce_max,
    reduce_mean,
    reduce_min,
    reduce_prod,
    reduce_sum,
    reshape,
    round,
    set_random_seed,
    shape,
    size,
    slice,
    sqrt,
    square,
    squeeze,
    stack,
    subtract,
    tile,
    to_float,
    to_int32,
    to_int64,
    transpose,
    truediv,
    truncatediv,
    where,
    zeros,
    zeros_like,
)


# Defined in _assert_ops, which imports from this module: re-exported here, after
# everything it needs is defined.
from ._assert_ops import (  # noqa: E402,F401
    _CheckedAssert,
    _assert,
    _static_text,
    assert_equal,
    assert_greater,
    assert_greater_equal,
    assert_less,
    assert_less_equal,
    assert_negative,
    assert_non_negative,
    assert_non_positive,
    assert_none_equal,
    assert_positive,
    control_dependencies,
)
