"""TensorFlow 1's arithmetic, shape, reduction, comparison and random ops
over the native graph."""

import contextlib
import math
import numpy as np

from . import errors
from ._constants import _dimension_values
from ._dtypes import Dimension
from ._graph import (
    SparseTensor,
    Tensor,
    _as_dtype_array,
    _compatible,
    _first_tensor,
    _graph_of,
    _holds_tensor,
    _infer_dtype,
    _name_scope,
    _next_name,
    _op,
    _scope,
    _strided,
    _under,
    _wrap1,
    as_dtype,
    constant,
    convert_to_tensor,
    float32,
    float64,
    get_default_graph,
    int16,
    int32,
    int64,
    int8,
    string,
    uint16,
    uint8,
)


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
        a = convert_to_tensor(a, name=names[0])
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


def pow(x, y, name=None):  # noqa: A001 (TensorFlow's name)
    """``tf.pow``: ``x`` to the power ``y``, elementwise; an integer to a
    negative power fails when run, as in TensorFlow."""
    return _binary("pow", x, y, name, "Pow")


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
    if not _compatible(a.shape._dims, b.shape._dims):
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
    if isinstance(v, (list, tuple)):
        v = _dimension_values(v)
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
    ValueError, as in TensorFlow. Without ``axis``, sizes unknown while
    building are squeezed when run, and the rank is then unknown, as
    TensorFlow infers it; the dimensions of ``axis`` must be known while
    building (NotImplementedError otherwise)."""
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
            return _squeeze_when_run(g, scope, x)
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


def _squeeze_when_run(g, scope, x):
    """``x`` without its dimensions of size 1, found when run: a reshape
    to the sizes of its run-time shape that are not 1, named ``scope``."""
    from ._mask_ops import boolean_mask

    with _under(g, scope):
        sizes = shape(x)
        kept = boolean_mask(sizes, not_equal(sizes, 1))
    return reshape(x, kept, name=f"{scope}/")


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
    if isinstance(shape, (list, tuple)):
        # TensorFlow's int() of each size (its TypeError for an unknown one).
        shape = [int(d) if isinstance(d, Dimension) else d for d in shape]
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
exp = _unary("exp", "Exp", "``tf.exp`` of floats.")
log = _unary("log", "Log", "``tf.log`` (``tf.math.log``): the natural logarithm of floats.")
log1p = _unary("log1p", "Log1p", "``tf.log1p``: ``log(1 + x)`` of floats.")
sigmoid = _unary("sigmoid", "Sigmoid", "``tf.sigmoid``: ``1 / (1 + exp(-x))`` of floats.")
tanh = _unary("tanh", "Tanh", "``tf.tanh`` of floats.")
reciprocal = _unary("reciprocal", "Reciprocal", "``tf.reciprocal``: ``1 / x`` of floats.")
rsqrt = _unary("rsqrt", "Rsqrt", "``tf.rsqrt``: ``1 / sqrt(x)`` of floats.")
sign = _unary("sign", "Sign", "``tf.sign``: -1, 0 or 1 (-0.0 gives 0.0, NaN stays NaN).")
_round_floats = _unary("round", "Round", "")
rint = _unary("round", "Rint", "``tf.rint``: floats rounded half to even, as ``tf.round``.")


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
    if any(isinstance(v, Tensor) and v._const is None for v in (minval, maxval)):
        return _random_uniform_between(g, dims, minval, maxval, dtype, seed, name)
    bounds = [float(v._const if isinstance(v, Tensor) else v) for v in (minval, maxval)]
    scope = _scope(g, name, "random_uniform")
    # As TensorFlow names it: the bare RandomUniform op inside the scope
    # for floats in [0, 1), else the scope's final op.
    op = f"{scope}/RandomUniform" if not dtype.is_integer and bounds == [0.0, 1.0] else scope
    with _next_name(g, op, exact=True):
        return _op(
            g, "RandomUniform", [], dims=list(dims), dtype=dtype._native, min=bounds[0], max=bounds[1],
            seed=_random_seed(g, seed),
        )


def _random_uniform_between(g, dims, minval, maxval, dtype, seed, name):
    """``tf.random_uniform`` with bounds computed when run (a random
    crop's offset, ``maxval=height - size + 1``): a float64 draw in
    [0, 1) scaled to ``[minval, maxval)`` when run, named as TensorFlow's
    (``random_uniform``). Integer bounds with ``minval >= maxval`` fail
    the run in TensorFlow's words."""
    from ._script_ops import py_func

    scope = _scope(g, name, "random_uniform")
    with _under(g, scope):
        lo = convert_to_tensor(minval, dtype=dtype, name="min")
        hi = convert_to_tensor(maxval, dtype=dtype, name="max")
        with _next_name(g, "RandomUniform"):
            unit = _op(g, "RandomUniform", [], dims=list(dims), dtype="float64", min=0.0, max=1.0,
                       seed=_random_seed(g, seed))
        if dtype.is_integer:
            def span_of(low, high):
                if not low < high:
                    raise errors.InvalidArgumentError(None, None, f"Need minval < maxval, got {low} >= {high}")
                return np.asarray(high - low, dtype=dtype.as_numpy_dtype)

            span = py_func(span_of, [lo, hi], dtype, name="CheckBounds")
            span.set_shape([])
            drawn = cast(floor(multiply(unit, cast(span, float64))), dtype)
        else:
            drawn = multiply(cast(unit, dtype), subtract(hi, lo))
    return add(drawn, lo, name=f"{scope}/")


def _random_normal(shape, mean, stddev, dtype, seed, name, truncated):
    """``tf.random_normal`` / ``tf.truncated_normal`` of a shape known
    while building: new values each run from feedstock's generator (the
    distribution TensorFlow's draws from, not its values)."""
    dtype = as_dtype(dtype)
    if not dtype.is_floating:
        # As TensorFlow, which converts the float mean to the dtype first.
        raise TypeError(f"Expected {dtype.name}, but got {float(mean)!r} of type 'float'.")
    g = get_default_graph()
    dims = _const_or_tensor(g, shape)
    if isinstance(dims, Tensor):
        raise NotImplementedError(f"tf.{_NORMAL[truncated]} of a shape computed when run")
    moments = []
    for v in (mean, stddev):
        if isinstance(v, Tensor):
            if v._const is None:
                raise NotImplementedError(f"tf.{_NORMAL[truncated]} with a mean or stddev computed when run")
            v = v._const
        moments.append(float(v))
    scope = _scope(g, name, _NORMAL[truncated])
    with _next_name(g, scope, exact=True):
        return _op(g, "RandomNormal", [], dims=list(dims), dtype=dtype._native, mean=moments[0],
                   stddev=moments[1], truncated=truncated, seed=_random_seed(g, seed))


_NORMAL = {False: "random_normal", True: "truncated_normal"}


def random_normal(shape, mean=0.0, stddev=1.0, dtype=float32, seed=None, name=None):
    """``tf.random_normal`` (``tf.random.normal``): normally distributed
    floats of a shape known while building, new each run."""
    return _random_normal(shape, mean, stddev, dtype, seed, name, False)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=float32, seed=None, name=None):
    """``tf.truncated_normal`` (``tf.random.truncated_normal``): as
    :func:`random_normal`, values more than two standard deviations from
    the mean drawn again."""
    return _random_normal(shape, mean, stddev, dtype, seed, name, True)


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
