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
    bool_,
    convert_to_tensor,
    get_default_graph,
)
from ._script_ops import _summary, py_func


# ---------------------------------------------------------------- assertions


class _CheckedAssert(Operation):
    """An assertion TensorFlow decided while building (its operands were
    known and the condition held): nothing to run."""


def _assert(symbol, check, opname, x, y, data, message, name, zero=False, summarize=None):
    """``tf.assert_*``: checked while building when the operands are known,
    as TensorFlow checks them (``InvalidArgumentError`` with TensorFlow's
    text: ``data``, by default the condition and the operands, after
    ``message``), else a :func:`Assert` of the same text checked when run.
    ``zero``: the one-operand forms (``assert_positive``: ``y`` is 0),
    whose default text names ``x`` alone, after ``message`` and ``.  ``,
    and which ignore ``message`` when given ``data``, as TensorFlow's
    do."""
    g = _graph_of(x, y)
    scope = _scope(g, name, opname)
    with g.as_default(), _under(g, scope):
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, dtype=x.dtype, name="y") if not isinstance(y, Tensor) else y
    if x._const is None or y._const is None:
        return _assert_when_run(g, scope, symbol, x, y, data, message, zero, summarize)
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


def _assert_when_run(g, scope, symbol, x, y, data, message, zero, summarize):
    """The :func:`Assert` a ``tf.assert_*`` of values known only when run
    adds, with TensorFlow's data (its text, item by item)."""
    from ._array_ops import reduce_all
    from ._math_ops import equal, greater, greater_equal, less, less_equal, not_equal

    compare = {"==": equal, "!=": not_equal, "<": less, "<=": less_equal, ">": greater, ">=": greater_equal}
    if zero and data is None:
        condition = f"Condition x {symbol} 0 did not hold element-wise:"
        # TensorFlow's assert_non_positive joins its last two strings.
        shown = [condition + f"x ({x.name}) = "] if symbol == "<=" else [condition, f"x ({x.name}) = "]
        data = [f"{message}.  " if message else "", *shown, x]
    else:
        if data is None:
            data = [f"Condition x {symbol} y did not hold element-wise:", f"x ({x.name}) = ", x,
                    f"y ({y.name}) = ", y]
        if message is not None and not zero:
            data = [message, *data]
    with g.as_default(), _under(g, scope):
        holds = reduce_all(compare[symbol](x, y))
        return Assert(holds, data, summarize=summarize)


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
    return _assert("==", np.equal, "assert_equal", x, y, data, message, name, summarize=summarize)


def assert_none_equal(x, y, data=None, summarize=None, message=None, name=None):
    return _assert("!=", np.not_equal, "assert_none_equal", x, y, data, message, name, summarize=summarize)


def assert_less(x, y, data=None, summarize=None, message=None, name=None):
    return _assert("<", np.less, "assert_less", x, y, data, message, name, summarize=summarize)


def assert_less_equal(x, y, data=None, summarize=None, message=None, name=None):
    return _assert("<=", np.less_equal, "assert_less_equal", x, y, data, message, name, summarize=summarize)


def assert_greater(x, y, data=None, summarize=None, message=None, name=None):
    return _assert(">", np.greater, "assert_greater", x, y, data, message, name, summarize=summarize)


def assert_greater_equal(x, y, data=None, summarize=None, message=None, name=None):
    return _assert(">=", np.greater_equal, "assert_greater_equal", x, y, data, message, name, summarize=summarize)


def assert_positive(x, data=None, summarize=None, message=None, name=None):
    return _assert(">", np.greater, "assert_positive", x, 0, data, message, name,
                   zero=True, summarize=summarize)


def assert_negative(x, data=None, summarize=None, message=None, name=None):
    return _assert("<", np.less, "assert_negative", x, 0, data, message, name,
                   zero=True, summarize=summarize)


def assert_non_negative(x, data=None, summarize=None, message=None, name=None):
    return _assert(">=", np.greater_equal, "assert_non_negative", x, 0, data, message, name,
                   zero=True, summarize=summarize)


def assert_non_positive(x, data=None, summarize=None, message=None, name=None):
    return _assert("<=", np.less_equal, "assert_non_positive", x, 0, data, message, name,
                   zero=True, summarize=summarize)


@contextlib.contextmanager
def control_dependencies(control_inputs):
    """``tf.control_dependencies``: every node made in the block runs
    ``control_inputs`` (tensors or operations) first, in any run that
    evaluates it, as in TensorFlow — an assertion guarding a slice, an
    update before a read. Blocks nest, adding to the outer block's
    inputs; ``None`` starts afresh. An assertion TensorFlow checked while
    building leaves nothing to run. A ``tf.constant`` made in the block
    does not wait (feedstock gives constants without running anything):
    guard ``tf.identity`` of it instead."""
    g = get_default_graph()
    outer = g._control_inputs
    if control_inputs is None:
        tensors = []
    else:
        tensors = list(outer)
        for c in control_inputs:
            if isinstance(c, Operation):
                tensors.extend(c.inputs)
            elif isinstance(c, Tensor):
                tensors.append(c)
            else:
                raise TypeError(f"Can not convert a {type(c).__name__} into a Tensor or Operation.")
    g._control_inputs = tensors
    g._g.native.set_control_inputs([t._o for t in tensors])
    try:
        yield
    finally:
        g._control_inputs = outer
        g._g.native.set_control_inputs([t._o for t in outer])


def Assert(condition, data, summarize=None, name=None):  # noqa: N802 (TensorFlow's name)
    """``tf.Assert``: an operation that fails the run with
    ``InvalidArgumentError`` when ``condition`` is false, saying
    ``assertion failed: [..] [..]`` with each tensor of ``data`` summarised
    as TensorFlow's kernel does (its first ``summarize`` values, 3 by
    default). Run it, or make it a control input of what it guards. It
    runs as a ``py_func`` node (in Python), as ``tf.Print`` does."""
    g = get_default_graph()
    scope = _scope(g, name, "Assert")
    with _under(g, scope):
        condition = convert_to_tensor(condition, name="Condition")
        data = [convert_to_tensor(d, name=f"data_{i}") for i, d in enumerate(data)]
    if not data:
        raise ValueError("Attr 'T' of 'Assert' Op passed list of length 0 less than minimum 1.")
    limit = 3 if summarize is None else int(summarize)

    def check(cond, *values):
        if not np.asarray(cond).all():
            shown = " ".join(f"[{_summary(np.asarray(v), limit)}]" for v in values)
            raise errors.InvalidArgumentError(None, None, f"assertion failed: {shown}")
        return np.bool_(True)

    with _under(g, scope):
        done = py_func(check, [condition, *data], bool_, name="Assert")
    return Operation(g, [done], name=f"{scope}/Assert")
