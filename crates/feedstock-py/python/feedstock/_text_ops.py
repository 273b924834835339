"""Text: ``tf.strings.length``, ``tf.strings.substr`` and
``tf.strings.regex_replace``, each one native op with TensorFlow's
values, static shapes, node names and errors."""

from __future__ import annotations

from ._graph import Tensor, _graph_of, _next_name, _op, convert_to_tensor, string


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
