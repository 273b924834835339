"""Text: ``tf.string_to_number``, ``tf.string_split``,
``tf.strings.length``, ``tf.strings.substr`` and
``tf.strings.regex_replace``, each one native op with TensorFlow's
values, static shapes, node names and errors."""

from __future__ import annotations

from ._graph import (
    Tensor,
    _graph_of,
    _next_name,
    _op,
    _scope,
    _under,
    as_dtype,
    convert_to_tensor,
    float32,
    get_default_graph,
    string,
)


def _utf8_chars(op, unit):
    """Whether ``unit`` counts UTF-8 characters (else bytes), checked as
    TensorFlow checks the attribute."""
    if unit not in ("BYTE", "UTF8_CHAR"):
        raise ValueError(f"Attr 'unit' of '{op}' Op passed string '{unit}' not in: \"BYTE\", \"UTF8_CHAR\".")
    return unit == "UTF8_CHAR"


def _strings(op, x):
    """``x``, checked to be a string tensor, in TensorFlow's words."""
    if x.dtype != string:
        raise TypeError(
            f"Input 'input' of '{op}' Op has type {x.dtype.name} that does not match expected type of string."
        )
    return x


def string_length(input, name=None, unit="BYTE"):  # noqa: A002 (TensorFlow's name)
    """``tf.strings.length``: the length of each string of ``input`` in
    bytes, or with ``unit="UTF8_CHAR"`` in UTF-8 characters; int32, of
    its shape."""
    chars = _utf8_chars("StringLength", unit)
    g = _graph_of(input)
    with g.as_default():
        x = _strings("StringLength", convert_to_tensor(input))
    with _next_name(g, name):
        return _op(g, "StringLength", [x], utf8_chars=chars)


def substr(input, pos, len, name=None, unit="BYTE"):  # noqa: A002 (TensorFlow's names)
    """``tf.strings.substr`` (``tf.substr``): of each string, ``len``
    bytes (or UTF-8 characters with ``unit="UTF8_CHAR"``) from ``pos``
    (from the end when negative); ``pos`` and ``len`` scalars or of the
    input's shape. A ``pos`` past either end fails when run."""
    chars = _utf8_chars("Substr", unit)
    g = _graph_of(input, pos, len)
    with g.as_default():
        x = _strings("Substr", convert_to_tensor(input))
        p = convert_to_tensor(pos)
        n = convert_to_tensor(len, dtype=p.dtype)
    with _next_name(g, name):
        return _op(g, "Substr", [x, p, n], utf8_chars=chars)


def regex_replace(input, pattern, rewrite, replace_global=True, name=None):  # noqa: A002 (TensorFlow's name)
    """``tf.strings.regex_replace`` (``tf.regex_replace``): matches of
    ``pattern`` (RE2 syntax) replaced by ``rewrite`` (``\\1`` a group,
    ``\\0`` the match), every one or with ``replace_global=False`` the
    first; ``pattern`` and ``rewrite`` known while building (TensorFlow's
    ``StaticRegexReplace``)."""
    g = _graph_of(input)
    with g.as_default():
        x = _strings("StaticRegexReplace", convert_to_tensor(input))
    texts = []
    for v in (pattern, rewrite):
        if isinstance(v, Tensor):
            if v._const is None:
                raise NotImplementedError("tf.strings.regex_replace with a pattern or rewrite computed when run")
            v = v._const.item() if hasattr(v._const, "item") else v._const
        texts.append(v.decode() if isinstance(v, bytes) else str(v))
    with _next_name(g, name):
        return _op(g, "RegexReplace", [x], pattern=texts[0], rewrite=texts[1], **{"global": bool(replace_global)})


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


def reduce_join(inputs, axis=None, keep_dims=None, separator="", name=None, reduction_indices=None, keepdims=None):
    """``tf.reduce_join`` (``tf.strings.reduce_join``): the strings along
    ``axis`` (every axis when ``None``) joined with ``separator``, as
    TensorFlow joins them: the first axis listed varies fastest, an empty
    reduction gives ``""``. Programs build file paths with it
    (``tf.reduce_join([base, name], 0)``). It runs as a ``py_func`` node
    (in Python), named as TensorFlow's (``ReduceJoin/ReduceJoin``)."""
    import numpy as np

    from ._script_ops import py_func

    axis = reduction_indices if axis is None else axis
    keep = bool(keepdims if keepdims is not None else keep_dims)
    g = _graph_of(inputs) if isinstance(inputs, Tensor) else get_default_graph()
    scope = _scope(g, name, "ReduceJoin")
    with _under(g, scope):
        x = convert_to_tensor(inputs, dtype=string)
    dims = x.shape.as_list() if x.shape.ndims is not None else None
    if dims is None:
        raise NotImplementedError("tf.reduce_join of a tensor of unknown rank")
    rank = len(dims)
    listed = list(range(rank - 1, -1, -1)) if axis is None else [int(a) for a in np.asarray(axis).reshape(-1)]
    for a in listed:
        if not -rank <= a < rank:
            raise ValueError(f"Invalid reduction dimension {a} for input with {rank} dimensions.")
    axes = [a % rank for a in listed]
    kept = [k for k in range(rank) if k not in axes]
    sep = separator.encode() if isinstance(separator, str) else bytes(separator)

    def join(value):
        v = np.asarray(value, dtype=object)
        # The first listed axis varies fastest: it goes last.
        moved = np.transpose(v, kept + axes[::-1]).reshape([v.shape[k] for k in kept] + [-1])
        out = np.empty(moved.shape[:-1], dtype=object)
        for index in np.ndindex(out.shape):
            out[index] = sep.join(bytes(s) for s in moved[index])
        return out.reshape([1 if k in axes else v.shape[k] for k in range(rank)]) if keep else out

    with _next_name(g, f"{scope}/ReduceJoin", exact=True):
        out = py_func(join, [x], string)
    out.set_shape([1 if k in axes else dims[k] for k in range(rank)] if keep else [dims[k] for k in kept])
    return out


def as_string(input, precision=-1, scientific=False, shortest=False, width=-1, fill="", name=None):  # noqa: A002
    """``tf.as_string`` (``tf.strings.as_string``): numbers and bools as
    strings, formatted as TensorFlow's kernel formats them (C's
    ``printf``: ``%d``, floats ``%f`` — ``%e`` with ``scientific``, ``%g``
    with ``shortest`` —, ``precision`` digits, at least ``width`` wide,
    ``fill`` ``"0"`` or ``" "`` as printf's flag; bools ``true``/``false``). It runs as a
    ``py_func`` node (in Python), named as TensorFlow's (``AsString``)."""
    import numpy as np

    from ._script_ops import py_func

    if scientific and shortest:
        raise ValueError("Cannot select both scientific and shortest notation")
    if fill not in ("", " ", "0"):
        raise ValueError(f"Fill argument not supported: \"{fill}\"")
    g = _graph_of(input) if isinstance(input, Tensor) else get_default_graph()
    scope = _scope(g, name, "AsString")
    with _under(g, scope):
        x = convert_to_tensor(input, name="input")
    if x.dtype == string:
        raise TypeError("Value passed to parameter 'input' has DataType string not in list of allowed values")
    if precision > -1 and not x.dtype.is_floating:
        raise ValueError("precision not supported for datatype " + x.dtype.name)
    # As TensorFlow's kernel: ``fill`` is printf's flag ("0" pads with
    # zeros, " " puts a space before a positive number).
    spec = "%" + fill + (str(width) if width > -1 else "")
    if x.dtype.is_floating:
        spec += (f".{precision}" if precision > -1 else "") + ("e" if scientific else "g" if shortest else "f")
    elif x.dtype.is_integer:
        spec += "d"
    else:
        spec += "s"

    def format_all(value):
        v = np.asarray(value)
        if v.dtype == np.bool_:
            text = np.vectorize(lambda b: spec % ("true" if b else "false"), otypes=[object])
        else:
            text = np.vectorize(lambda n: spec % n, otypes=[object])
        return np.asarray(text(v) if v.size else np.empty(v.shape, dtype=object), dtype=object).astype(bytes)

    with _next_name(g, scope, exact=True):
        out = py_func(format_all, [x], string)
    out.set_shape(x.shape)
    return out
