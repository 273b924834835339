"""More of TensorFlow 1's array, logical and string ops for
``feedstock.compat.v1`` (``tf.range``, ``tf.pad``, ``tf.split``,
``tf.unstack``, ``tf.reverse``, ``tf.logical_*``, ``tf.reduce_any`` /
``reduce_all``, ``tf.string_join``, ``tf.is_nan``,
``tf.is_finite``, ``tf.squared_difference``, ``tf.div_no_nan``,
``tf.argmax`` / ``tf.argmin``, ``tf.map_fn``), built from the graph's own ops
(slices, concatenation, casts, reductions) so that they run natively as
the rest of the pipeline does. Each checks its arguments as TensorFlow
does and gives its results; op names inside them are feedstock's."""

from __future__ import annotations

import builtins

import numpy as np

from . import errors
from ._graph import (
    Tensor,
    _graph_of,
    _name_scope,
    _op,
    add,
    bool_,
    _binary_of,
    _operands,
    _scope,
    as_dtype,
    cast,
    concat,
    constant,
    convert_to_tensor,
    fill,
    float32,
    float64,
    floordiv,
    identity,
    int32,
    int64,
    maximum,
    minimum,
    multiply,
    equal,
    not_equal,
    ones_like,
    subtract,
    reduce_max,
    reduce_min,
    reshape,
    shape,
    stack,
    uint8,
    where,
    zeros_like,
)


def _is_const(x):
    """Whether ``x`` (a tensor or a Python value) is known while building."""
    return not isinstance(x, Tensor) or x._const is not None


def _value(x, what="an argument"):
    """``x``'s value while building, as numpy: a Python value, or a
    tensor known then (NotImplementedError for one computed when run)."""
    if not _is_const(x):
        raise NotImplementedError(f"{what} computed when run")
    return np.asarray(x._const if isinstance(x, Tensor) else x)


def range(start, limit=None, delta=1, dtype=None, name="range"):  # noqa: A001 (TensorFlow's name)
    """``tf.range``: ``start, start + delta, ...`` up to (not including)
    ``limit``, each value the previous plus ``delta`` in the dtype (int32
    for Python ints, float32 for floats, else the widest of the
    arguments'). Known while building when the arguments are; a ``limit``
    computed when run needs a known integer ``start`` and ``delta``."""
    if limit is None:
        start, limit = 0, start
    args = [convert_to_tensor(a) for a in (start, limit, delta)]
    order = [int32, int64, float32, float64]
    if dtype is None:
        dtype = max((a.dtype for a in args), key=lambda d: order.index(d) if d in order else -1)
    g = _graph_of(*args)
    with _name_scope(g, name, "range") as scope:
        if all(_is_const(a) for a in args):
            s, lim, d = (_value(a).astype(dtype.as_numpy_dtype).item() for a in args)
            _check_range(s, lim, d)
            if dtype.is_integer:
                n = max(0, (abs(lim - s) + abs(d) - 1) // abs(d)) if (lim - s) * d > 0 else 0
            else:
                n = max(0, int(np.ceil(abs((lim - s) / d))))
            t = dtype.as_numpy_dtype
            # start + i * delta, each step in the dtype, as TensorFlow's
            # kernel computes it.
            values = (t(s) + np.arange(n).astype(t) * t(d)).astype(t)
            return constant(values, dtype=dtype, name=scope)
        s, d = args[0], args[2]
        if not (_is_const(s) and _is_const(d)) or not dtype.is_integer:
            raise NotImplementedError("tf.range of tensors: only an integer limit may be computed when run")
        s, d = int(_value(s)), int(_value(d))
        _check_range(0, 0, d)
        lim = cast(args[1], dtype)
        # The number of values, then their indices: the positions of a
        # tensor of that many `True`s.
        n = floordiv(lim - s + (d - 1), d) if d > 0 else floordiv(s - lim + (-d - 1), -d)
        n = maximum(n, 0)
        index = cast(reshape(where(fill(reshape(n, [1]), True)), [-1]), dtype)
        return add(multiply(index, d), s, name=scope)


def _check_range(start, limit, delta):
    if delta == 0:
        raise ValueError("Requires delta != 0")
    if delta > 0 and start > limit:
        raise ValueError(f"Requires start <= limit when delta > 0: {start}/{limit}")
    if delta < 0 and start < limit:
        raise ValueError(f"Requires start >= limit when delta < 0: {start}/{limit}")


def _bools(*xs):
    ts = [x if isinstance(x, Tensor) else convert_to_tensor(x, dtype=bool_) for x in xs]
    for t in ts:
        if t.dtype != bool_:
            raise TypeError(f"Value passed to parameter 'x' has DataType {t.dtype.name} not in list of allowed values: bool")
    return ts


def logical_not(x, name=None):
    """``tf.logical_not``."""
    (x,) = _bools(x)
    return equal(x, False, name=name or "LogicalNot")


def logical_and(x, y, name=None):
    """``tf.logical_and``, with broadcasting."""
    x, y = _bools(x, y)
    return cast(minimum(cast(x, uint8), cast(y, uint8)), bool_, name=name or "LogicalAnd")


def logical_or(x, y, name=None):
    """``tf.logical_or``, with broadcasting."""
    x, y = _bools(x, y)
    return cast(maximum(cast(x, uint8), cast(y, uint8)), bool_, name=name or "LogicalOr")


def logical_xor(x, y, name="LogicalXor"):
    """``tf.logical_xor``, with broadcasting."""
    x, y = _bools(x, y)
    return not_equal(x, y, name=name or "LogicalXor")


def reduce_any(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None, keep_dims=None):
    """``tf.reduce_any``: whether any element is true (false for none)."""
    (x,) = _bools(input_tensor)
    m = reduce_max(cast(x, uint8), axis, keepdims, reduction_indices=reduction_indices, keep_dims=keep_dims)
    return cast(m, bool_, name=name or "Any")


def reduce_all(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None, keep_dims=None):
    """``tf.reduce_all``: whether every element is true (true for none)."""
    (x,) = _bools(input_tensor)
    m = reduce_min(cast(x, uint8), axis, keepdims, reduction_indices=reduction_indices, keep_dims=keep_dims)
    return cast(m, bool_, name=name or "All")


def string_join(inputs, separator="", name=None):
    """``tf.string_join``: the strings of ``inputs`` joined elementwise
    (with broadcasting) with ``separator`` between them."""
    if not inputs:
        raise ValueError("List argument 'inputs' to 'StringJoin' Op with length 0 shorter than minimum length 1.")
    ts = [convert_to_tensor(t) for t in inputs]
    g = _graph_of(*ts)
    with _name_scope(g, name, "StringJoin") as scope:
        out = ts[0]
        for t in ts[1:]:
            out = add(add(out, separator), t) if separator else add(out, t)
        return identity(out, name=scope)


def _axis(axis, rank, what="axis"):
    a = int(axis)
    if not -rank <= a < rank:
        raise ValueError(f"{what} = {a} not in [{-rank}, {rank})")
    return a % rank


def reverse(tensor, axis, name=None):
    """``tf.reverse`` (``reverse_v2``): ``tensor`` with the order of its
    elements along each axis of ``axis`` reversed."""
    x = convert_to_tensor(tensor)
    rank = x.shape.ndims
    axes = [_axis(a, rank) for a in np.atleast_1d(_value(axis, "tf.reverse's axis"))]
    if len(set(axes)) != len(axes):
        raise ValueError(f"axis {sorted(axes)} specified more than once")
    key = tuple(slice(None, None, -1) if k in axes else slice(None) for k in builtins.range(rank))
    with _name_scope(x.graph, name, "ReverseV2") as scope:
        return identity(x[key], name=scope) if axes else identity(x, name=scope)


reverse_v2 = reverse


def unstack(value, num=None, axis=0, name="unstack"):
    """``tf.unstack``: the ``num`` slices of ``value`` along ``axis``."""
    x = convert_to_tensor(value)
    rank = x.shape.ndims
    a = _axis(axis, rank)
    n = x.shape.as_list()[a] if num is None else int(num)
    if n is None:
        raise ValueError(f"Cannot infer argument `num` from shape {x.shape}")
    with _name_scope(x.graph, name, "unstack"):
        return [x[(slice(None),) * a + (i,)] for i in builtins.range(n)]


def split(value, num_or_size_splits, axis=0, num=None, name="split"):
    """``tf.split``: ``value`` cut along ``axis`` into equal parts (an
    int) or parts of the given sizes (one may be -1: the rest)."""
    x = convert_to_tensor(value)
    rank = x.shape.ndims
    a = _axis(_value(axis, "tf.split's axis"), rank)
    dim = x.shape.as_list()[a]
    splits = _value(num_or_size_splits, "tf.split's num_or_size_splits")
    if splits.ndim == 0:
        k = int(splits)
        if dim is None:
            raise NotImplementedError("tf.split into equal parts of a dimension known only when run")
        if k <= 0 or dim % k:
            raise ValueError(
                f"Dimension size must be evenly divisible by {k} but is {dim}\n\tNumber of ways to split should "
                f"evenly divide the split dimension, but got split_dim {a} (size = {dim}) and num_split {k}"
            )
        sizes = [dim // k] * k
    else:
        sizes = [int(s) for s in splits.reshape(-1)]
        if sizes.count(-1) > 1:
            raise ValueError("Cannot infer argument `num` from shape: more than one -1 in size_splits")
        if -1 in sizes:
            if dim is None:
                raise NotImplementedError("tf.split with a -1 size of a dimension known only when run")
            sizes[sizes.index(-1)] = dim - (sum(sizes) + 1)
        if dim is not None and sum(sizes) != dim:
            raise ValueError(f"can't split axis of size {dim} into pieces of size [{','.join(map(str, sizes))}]")
    with _name_scope(x.graph, name, "split"):
        out, at = [], 0
        for s in sizes:
            out.append(x[(slice(None),) * a + (slice(at, at + s),)])
            at += s
        return out


def pad(tensor, paddings, mode="CONSTANT", name=None, constant_values=0):
    """``tf.pad``: ``tensor`` with ``paddings[d] = [before, after]``
    values added on each side of dimension ``d``: ``constant_values``
    (``CONSTANT``), or the tensor mirrored without its edge
    (``REFLECT``, each side under the dimension's size) or with it
    (``SYMMETRIC``, at most the size). ``CONSTANT`` paddings may be
    computed when run (``[[0, max_len - tf.shape(x)[0]]]``): the static
    size of a dimension is known where its row is, as TensorFlow infers
    it, and a negative padding fails the run in TensorFlow's words. The
    mirror modes need paddings known while building."""
    x = convert_to_tensor(tensor)
    known = _paddings_constant(paddings)
    mode = mode.upper()
    if mode not in ("CONSTANT", "REFLECT", "SYMMETRIC"):
        raise ValueError(f"Unknown padding mode: {mode}")
    default = "MirrorPad" if mode != "CONSTANT" else "Pad" if _is_zero(constant_values) else "PadV2"
    if not _fully_known(known):
        if mode != "CONSTANT":
            raise NotImplementedError(f"tf.pad {mode} with paddings computed when run")
        return _pad_when_run(x, paddings, known, name, default, constant_values)
    p = np.asarray(known, dtype=np.int64)
    rank = x.shape.ndims
    if p.shape != (rank, 2):
        raise ValueError(f"Shape must be rank 2 but is rank {p.ndim}" if p.ndim != 2 else
                         f"Dimension 0 in both shapes must be equal, but are {p.shape[0]} and {rank}.")
    if (p < 0).any():
        raise ValueError(f"Paddings must be non-negative: {p.tolist()}")
    dims = x.shape.as_list()
    if mode != "CONSTANT":
        offset = 1 if mode == "REFLECT" else 0
        for d, (b, a) in enumerate(p):
            if dims[d] is None:
                raise NotImplementedError(f"tf.pad {mode} of a dimension known only when run")
            if b > dims[d] - offset or a > dims[d] - offset:
                raise ValueError(
                    f"paddings must be less than{'' if offset else ' or equal to'} the dimension size: "
                    f"{b}, {a} {'not less than' if offset else 'greater than'} {dims[d]}"
                )
    g = x.graph
    with _name_scope(g, name, default) as scope:
        value = convert_to_tensor(constant_values, dtype=x.dtype)
        for d, (b, a) in enumerate(p):
            if b == 0 and a == 0:
                continue
            parts = []
            if mode == "CONSTANT":
                parts = ([_pad_block(x, d, constant([int(b)], dtype=int32), value)] if b else []) + [x]
                if a:
                    parts.append(_pad_block(x, d, constant([int(a)], dtype=int32), value))
            else:
                n = dims[d]

                def part(lo, hi, d=d):
                    return x[(slice(None),) * d + (slice(hi - 1, lo - 1 if lo > 0 else None, -1),)]

                if b:
                    parts.append(part(offset, offset + b))
                parts.append(x)
                if a:
                    parts.append(part(n - offset - a, n - offset))
            x = concat(parts, d)
        out = identity(x, name=scope)
    out.set_shape([None if n is None else n + b + a for n, (b, a) in zip(dims, p.tolist())])
    return out


def _pad_block(x, d, size, value):
    """``value`` filling ``x``'s shape with dimension ``d`` of ``size``
    (an int32 vector of one element)."""
    sizes = [size if i == d else shape(x)[i : i + 1] for i in builtins.range(x.shape.ndims)]
    return fill(concat(sizes, 0), value)


def _pad_when_run(x, paddings, known, name, default, constant_values):
    """``tf.pad`` (CONSTANT) of paddings computed when run: each side a
    block of ``constant_values`` sized when run; the paddings checked
    then (negative: TensorFlow's InvalidArgumentError)."""
    from ._script_ops import py_func

    rank = x.shape.ndims
    if rank is None:
        raise NotImplementedError("tf.pad of a tensor of unknown rank with paddings computed when run")
    dims = x.shape.as_list()
    g = x.graph
    with _name_scope(g, name, default) as scope:
        value = convert_to_tensor(constant_values, dtype=x.dtype)
        p = convert_to_tensor(paddings)
        if p.dtype not in (int32, int64):
            raise TypeError(f"Value passed to parameter 'paddings' has DataType {p.dtype.name} not in list of "
                            "allowed values: int32, int64")
        if p.shape.ndims is not None and p.shape.as_list() not in ([rank, 2], [None, 2], [rank, None], [None, None]):
            raise ValueError(f"Paddings must be a matrix of shape [{rank}, 2], got {p.shape.as_list()}")

        def check(rows):
            for b, a in rows:
                if b < 0 or a < 0:
                    raise errors.InvalidArgumentError(None, None, f"Paddings must be non-negative: {b} {a}")
            return rows.astype(np.int32)

        p = py_func(check, [p], int32, name="CheckPaddings")
        p.set_shape([rank, 2])
        for d in builtins.range(rank):
            before = _pad_block(x, d, reshape(p[d, 0], [1]), value)
            after = _pad_block(x, d, reshape(p[d, 1], [1]), value)
            x = concat([before, x, after], d)
        out = identity(x, name=scope)
    # As TensorFlow's tf.pad: a dimension's size is known where its input
    # size and its row of paddings are.
    rows = known if isinstance(known, list) and len(known) == rank else [None] * rank
    out.set_shape([
        n + row[0] + row[1] if n is not None and isinstance(row, list) and None not in row else None
        for n, row in zip(dims, rows)
    ])
    return out


def _paddings_constant(paddings):
    """The paddings' values known while building, as TensorFlow's
    ``_get_paddings_constant`` finds them: a known tensor's value as
    nested lists, a Python list element by element (``None`` where a
    value is computed when run); ``None`` for an unknown tensor."""
    if isinstance(paddings, Tensor):
        return None if paddings._const is None else np.asarray(paddings._const).tolist()
    if isinstance(paddings, (list, tuple)):
        return [_paddings_constant(v) for v in paddings]
    if isinstance(paddings, np.ndarray):
        return paddings.tolist()
    return paddings


def _fully_known(value):
    if isinstance(value, list):
        return all(_fully_known(v) for v in value)
    return value is not None


def _is_zero(value):
    """Whether ``constant_values`` is 0 (TensorFlow's Pad rather than
    PadV2), known while building."""
    if isinstance(value, Tensor):
        return value._const is not None and np.all(np.asarray(value._const) == 0)
    return np.all(np.asarray(value) == 0)


def _floats(x, op):
    x = convert_to_tensor(x)
    if not (x.dtype.is_floating or x.dtype.is_complex):
        raise TypeError(f"Value passed to parameter 'x' has DataType {x.dtype.name} not in list of allowed values for {op}")
    return x


def is_nan(x, name=None):
    """``tf.is_nan``: where ``x`` is NaN (floats only)."""
    x = _floats(x, "IsNan")
    return not_equal(x, x, name=name or "IsNan")


def is_finite(x, name=None):
    """``tf.is_finite``: where ``x`` is neither infinite nor NaN (floats
    only): ``x - x`` is 0 exactly there."""
    x = _floats(x, "IsFinite")
    return equal(subtract(x, x), 0, name=name or "IsFinite")


def squared_difference(x, y, name=None):
    """``tf.squared_difference``: ``(x - y) * (x - y)``, broadcast."""
    g = _graph_of(x, y)
    with _name_scope(g, name, "SquaredDifference") as scope:
        d = subtract(x, y)
        return _binary_of("mul", d, d, scope[:-1])


def div_no_nan(x, y, name=None):
    """``tf.div_no_nan``: ``x / y``, or 0 where ``y`` is 0 (a true
    division, not rewritten as a multiplication: TensorFlow's optimizer
    leaves this op alone)."""
    g = _graph_of(x, y)
    with _name_scope(g, name, "div_no_nan") as scope:
        x, y = _operands(x, y)
        if not (x.dtype.is_floating or x.dtype.is_complex):
            raise TypeError(f"Value passed to parameter 'x' has DataType {x.dtype.name} not in list of allowed values")
        q = _binary_of("div", x, y, _scope(g, None, "truediv"))
        # y broadcast to the quotient's shape (times ones: exact).
        zero_y = equal(multiply(y, ones_like(q)), 0)
        return where(zero_y, zeros_like(q), q, name=scope)


def _arg_reduce(max_, input, axis, name, dimension, output_type, default):  # noqa: A002 (TensorFlow's name)
    if axis is not None and dimension is not None:
        raise ValueError("Cannot specify both 'axis' and 'dimension'")
    axis = dimension if axis is None else axis
    x = convert_to_tensor(input)
    g = x.graph
    with _name_scope(g, name, default) as scope:
        rank = x.shape.ndims
        axis = 0 if axis is None else int(_value(axis, "the axis of tf.argmax / tf.argmin"))
        if rank is not None and not -rank <= axis < rank:
            raise ValueError(
                f"Dimension ({axis}) must be in the range [{-rank}, {rank}), where {rank} is the number of "
                "dimensions in the input."
            )
        out = _op(g, "ArgReduce", [x], axis=axis % rank if rank else axis, max=max_, dtype=as_dtype(output_type)._native)
        return identity(out, name=scope)


def argmax(input, axis=None, name=None, dimension=None, output_type=int64):  # noqa: A002 (TensorFlow's name)
    """``tf.argmax``: the index of the largest value along ``axis`` (0
    when not given), the first of equal ones, NaN never chosen."""
    return _arg_reduce(True, input, axis, name, dimension, output_type, "ArgMax")


def argmin(input, axis=None, name=None, dimension=None, output_type=int64):  # noqa: A002 (TensorFlow's name)
    """``tf.argmin``: the index of the smallest value along ``axis``."""
    return _arg_reduce(False, input, axis, name, dimension, output_type, "ArgMin")


def map_fn(fn, elems, dtype=None, parallel_iterations=None, back_prop=True, swap_memory=False, infer_shape=True,
           name=None):
    """``tf.map_fn``: ``fn`` applied to each slice of ``elems`` (a tensor,
    or a tuple / list of tensors sliced together) along axis 0, the
    results stacked. Where the number of slices is known while building
    feedstock unrolls the loop, else it runs a ``tf.while_loop``; the
    values are TensorFlow's."""
    seq = isinstance(elems, (list, tuple))
    ts = [convert_to_tensor(e) for e in (elems if seq else [elems])]
    if not ts:
        raise ValueError("elems must be a Tensor or (possibly nested) sequence of Tensors. Got []")
    if any(t.shape.ndims == 0 for t in ts):
        raise ValueError("Elements in elems must be 1+ dimensional Tensors, not scalars")
    sizes = {t.shape.as_list()[0] if t.shape.ndims else None for t in ts}
    if len(sizes - {None}) > 1:
        raise ValueError(f"tf.map_fn: the elems have different first dimensions (shapes {[t.shape for t in ts]})")
    n = sizes.pop() if len(sizes) == 1 else None
    if not n:
        # The number of slices is known only when run (or none): a while
        # loop.
        from ._control_flow import _map_fn_loop

        return _map_fn_loop(fn, ts, elems if seq else None, name)
    g = _graph_of(*ts)
    with _name_scope(g, name, "map") as scope:
        results = []
        for i in builtins.range(n):
            piece = [t[i] for t in ts]
            results.append(fn(type(elems)(piece) if seq else piece[0]))
        first = results[0]
        if isinstance(first, (list, tuple)):
            outs = [stack([r[k] for r in results]) for k in builtins.range(len(first))]
            return type(first)(outs)
        return identity(stack(results), name=scope)
