"""TensorFlow 1's assertions (tf.assert_*) and control dependencies."""

from . import errors
import contextlib
import numpy as np

from ._graph import (
    Operation,
    Tensor,
    _graph_of,
    _scope,
    _under,
    convert_to_tensor,
)


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
