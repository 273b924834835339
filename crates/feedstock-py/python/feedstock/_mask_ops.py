"""Masks and hash buckets: ``tf.sequence_mask``, ``tf.boolean_mask`` and
``tf.string_to_hash_bucket_fast``, each one native op (where TensorFlow's
Python composes several) with TensorFlow's values, static shapes, node
names and errors."""

from __future__ import annotations

from ._graph import (
    SparseTensor,
    Tensor,
    _graph_of,
    _name_scope,
    _next_name,
    _op,
    _scope,
    _under,
    as_dtype,
    bool_,
    convert_to_tensor,
    string,
)

_I64_MIN, _I64_MAX = -(2**63), 2**63 - 1


def _make_int(v, arg):
    """An op's int attribute from ``v``, as TensorFlow's ``make_int``
    takes it (``int(v)``; not a string or a tensor); its range is checked
    by :func:`_int64_attr`, later, as in TensorFlow."""
    if isinstance(v, (str, bytes, Tensor)):
        raise TypeError(f"Expected int for argument '{arg}' not {v!r}.")
    try:
        return int(v)
    except (TypeError, ValueError):
        raise TypeError(f"Expected int for argument '{arg}' not {v!r}.") from None


def _int64_attr(n):
    """``n``, refused (as TensorFlow refuses it) outside int64."""
    if not _I64_MIN <= n <= _I64_MAX:
        raise ValueError(f"Value out of range: {n}")
    return n


def string_to_hash_bucket_fast(input, num_buckets, name=None):  # noqa: A002 (TensorFlow's name)
    """``tf.strings.to_hash_bucket_fast`` (``tf.string_to_hash_bucket_fast``):
    each string of ``input`` hashed into ``[0, num_buckets)`` as
    TensorFlow hashes it (farmhash's ``Fingerprint64`` modulo
    ``num_buckets``), an int64 tensor of its shape."""
    op = "StringToHashBucketFast"
    if input is None:
        raise ValueError("Tried to convert 'input' to a tensor and failed. Error: None values not supported.")
    g = _graph_of(input)
    num_buckets = _make_int(num_buckets, "num_buckets")
    if isinstance(input, Tensor) and not isinstance(input, SparseTensor) and input.dtype != string:
        raise TypeError(
            f"Input 'input' of '{op}' Op has type {input.dtype.name} that does not match expected type of string."
        )
    scope = _scope(g, name, op)
    with _under(g, scope):
        if isinstance(input, SparseTensor) or not isinstance(input, Tensor):
            try:
                if isinstance(input, SparseTensor):
                    raise TypeError("a SparseTensor")
                x = convert_to_tensor(input, dtype=string, name="input")
            except (TypeError, ValueError) as e:
                raise TypeError(
                    f"Expected string passed to parameter 'input' of op '{op}', got {input!r} of type "
                    f"'{type(input).__name__}' instead. Error: {e}"
                ) from None
        else:
            x = input
    num_buckets = _int64_attr(num_buckets)
    with _next_name(g, scope, exact=True):
        return _op(g, op, [x], num_buckets=num_buckets)


def sequence_mask(lengths, maxlen=None, dtype=bool_, name=None):
    """``tf.sequence_mask``: ``lengths`` with a last axis of ``maxlen``
    added (the largest length when ``None``), true (or 1, as ``dtype``)
    at ``[..., j]`` where ``j < length``. As TensorFlow's, the comparison
    is in ``maxlen``'s dtype (float lengths against an int ``maxlen`` are
    truncated; a float ``maxlen`` counts to its ceiling), the last
    dimension is static when ``maxlen`` (or, without it, ``lengths``) is
    known while building, and a negative ``maxlen`` is an error."""
    g = _graph_of(lengths, maxlen)
    with _name_scope(g, name, "SequenceMask"):
        lengths = convert_to_tensor(lengths)
        inputs = [lengths]
        if maxlen is not None:
            maxlen = convert_to_tensor(maxlen)
            if maxlen.shape.ndims is not None and maxlen.shape.ndims != 0:
                raise ValueError(
                    "Argument `maxlen` must be scalar for sequence_mask, received `maxlen` = "
                    f"{maxlen} with shape '{maxlen.shape}' instead"
                )
            inputs.append(maxlen)
        dtype = bool_ if dtype is None else as_dtype(dtype)
        # TensorFlow's last op: the comparison, or the cast of it.
        with _next_name(g, "Less" if dtype == bool_ else "Cast_1"):
            return _op(g, "SequenceMask", inputs, dtype=dtype._native)


def boolean_mask(tensor, mask, name="boolean_mask", axis=None):
    """``tf.boolean_mask``: the slices of ``tensor`` along axes ``axis``
    to ``axis + mask.ndim`` where ``mask`` holds (nonzero numbers count as
    true, as in TensorFlow), those axes made one of unknown size. The
    mask's rank must be known; its shape is checked against the tensor's
    while building (TensorFlow's ``Shapes (..) and (..) are
    incompatible``); feedstock needs ``axis`` known then too."""
    g = _graph_of(tensor, mask)
    with _name_scope(g, name, "boolean_mask"):
        tensor = convert_to_tensor(tensor, name="tensor")
        mask = convert_to_tensor(mask, name="mask")
        axis = 0 if axis is None else axis
        if isinstance(axis, Tensor):
            if axis._const is None:
                raise NotImplementedError("tf.boolean_mask: the axis must be known when the graph is built")
            axis = axis._const
        with _next_name(g, "GatherV2"):
            return _op(g, "BooleanMask", [tensor, mask], axis=int(axis))
