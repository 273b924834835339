"""Constants and conversions to tensors for ``feedstock.compat.v1``:
``tf.constant``, ``tf.convert_to_tensor`` and the dtype inference of
Python values."""

import warnings

import numpy as np

from ._dtypes import (
    Dimension,
    TensorShape,
    _shape_arg,
    as_dtype,
    bool_,
    complex128,
    float32,
    int32,
    int64,
    string,
    uint64,
)
from ._graph import (
    Tensor,
    _graph_of,
    _next_name,
    get_default_graph,
)


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
    if "dimension" in kinds:
        # As TensorFlow: a Dimension converts only to a given int dtype.
        raise _unconvertible(value)
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
    if isinstance(v, Dimension):
        return "dimension"
    raise TypeError(f"cannot make a tensor of {type(v).__name__}")


def _as_dtype_array(x, dtype):
    """``x`` (Python values or numpy ones) as an array of ``dtype``,
    converted as TensorFlow converts a value to a given dtype: Python
    floats (or lists holding one) are refused for integer and bool
    dtypes, Python ints for bool, strings for numbers (TypeError); ints
    wrap into the dtype (numpy's ``astype``); numpy values are cast
    (floats truncated). A ``Dimension`` gives its value to an integer
    dtype (an unknown one is a TypeError)."""
    if dtype == string:
        return _const_array(x, dtype)
    if not isinstance(x, (np.ndarray, np.generic)):
        kinds = {_leaf_kind(v) for v in _leaves(x)}
        refused = {"string", "complex"} - ({"complex"} if dtype.is_complex else set())
        if not dtype.is_floating and not dtype.is_complex:
            refused.add("float")
        if dtype == bool_:
            refused.add("int")
        if not dtype.is_integer:
            refused.add("dimension")
        if kinds & refused:
            raise TypeError(f"Expected {dtype.name}, but got {x!r} of type '{type(x).__name__}'.")
        if "dimension" in kinds:
            x = _dimension_values(x)
    with warnings.catch_warnings(), np.errstate(over="ignore", invalid="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.asarray(x).astype(dtype.as_numpy_dtype)


def _unconvertible(value):
    """TensorFlow's TypeError for a value holding what it cannot make a
    tensor of (a Dimension without an int dtype, an unknown one)."""
    return TypeError(
        f"Failed to convert elements of {value} to Tensor. Consider casting elements to a supported type. "
        "See https://www.tensorflow.org/api_docs/python/tf/dtypes for supported TF dtypes."
    )


def _dimension_values(x):
    """``x`` (a Dimension, or nested lists and tuples holding some) with
    each Dimension as its int value; TypeError for an unknown one."""
    if any(isinstance(v, Dimension) and v.value is None for v in _leaves(x)):
        raise _unconvertible(x)
    return _known_values(x)


def _known_values(x):
    if isinstance(x, (list, tuple)):
        return [_known_values(v) for v in x]
    return x.value if isinstance(x, Dimension) else x


def _shape_as_tensor(value, dtype, name):
    """A :class:`Dimension` or :class:`TensorShape` as a tensor, as
    TensorFlow converts them: known sizes only, to int32 or int64 (int32
    by default, int64 for a shape with a size past int32), named
    ``shape_as_tensor``."""
    kind = type(value).__name__
    if isinstance(value, Dimension):
        if value.value is None:
            raise ValueError(f"Cannot convert unknown Dimension {value} to a Tensor.")
        values, big = value.value, False
    else:
        if not value.is_fully_defined():
            raise ValueError(f"Cannot convert a partially known TensorShape {value} to a Tensor.")
        values = value.as_list()
        big = any(d >= 2**31 for d in values)
    if dtype is None:
        dtype = int64 if big else int32
    else:
        dtype = as_dtype(dtype)
        if dtype not in (int32, int64):
            raise TypeError(
                f"Cannot convert {kind} {value} to dtype {dtype}. Allowed dtypes are tf.int32 and tf.int64."
            )
        if dtype == int32 and big:
            raise ValueError(
                f"Cannot convert TensorShape {value} to dtype int32; a dimension is too large. Consider using tf.int64."
            )
    return constant(values, dtype=dtype, name=name or "shape_as_tensor")


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
    if isinstance(value, (Dimension, TensorShape)):
        return _shape_as_tensor(value, dtype, name)
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
        from ._math_ops import stack  # imports this module: resolved when called

        return stack(parts, name=name or "packed")
