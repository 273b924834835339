"""``tf.cond``, ``tf.case`` and ``tf.while_loop``: branches that run
only when chosen, loop bodies once per iteration.

The branch functions run once, while building; the nodes each one adds
are named (by their ids) to one native ``Cond`` node, and the session
evaluates a branch's nodes only when its predicate chooses it, so a
branch not taken dequeues, reads, decodes and draws nothing (as in
TensorFlow). What a branch reads from outside it is evaluated whichever
branch is chosen. A loop's condition and body functions also run once,
on stand-ins for the loop variables (``LoopVar`` nodes); the session runs
their nodes once per iteration. Behaviour and messages are TensorFlow
2.21's.
"""

import collections.abc

from . import _mode
from ._graph import (
    Operation,
    SparseTensor,
    Tensor,
    TensorShape,
    _op,
    _graph_of,
    _name_scope,
    _next_name,
    _ops,
    bool_,
    convert_to_tensor,
    identity,
    int32,
)

_STRUCTURE = (
    "true_fn and false_fn arguments to tf.cond must have the same number, type, and overall structure of "
    "return values.\n\ntrue_fn output: {}\nfalse_fn output: {}\n\nError details:\n{}"
)


def _flatten(x, leaves):
    """The structure of ``x`` (nested lists, tuples, namedtuples and
    dicts), its leaves appended to ``leaves``."""
    if isinstance(x, dict):
        keys = sorted(x)
        return (dict, type(x), keys, [_flatten(x[k], leaves) for k in keys])
    if isinstance(x, (list, tuple)):
        return (list, type(x), len(x), [_flatten(v, leaves) for v in x])
    if x is None:
        return (None,)
    leaves.append(x)
    return ("leaf",)


def _pack(structure, leaves):
    """``structure`` (as :func:`_flatten` gives it) filled with ``leaves``
    (an iterator)."""
    kind = structure[0]
    if kind == "leaf":
        return next(leaves)
    if kind is None:
        return None
    _, cls, keys, parts = structure
    values = [_pack(p, leaves) for p in parts]
    if kind is dict:
        return cls(zip(keys, values))
    if hasattr(cls, "_fields"):  # a namedtuple
        return cls(*values)
    return cls(values)


def _same_structure(a, b):
    if a[0] != b[0]:
        return False
    if a[0] in ("leaf", None):
        return True
    return a[1] is b[1] and a[2] == b[2] and all(_same_structure(x, y) for x, y in zip(a[3], b[3]))


def _output_name(v1):
    """The name of a cond's or a loop's outputs: ``v1`` (``Merge``,
    ``Exit``) as TensorFlow 1's control flow names them, ``Identity`` as
    v2's (see :mod:`feedstock._mode`)."""
    return "Identity" if _mode.v2_behavior() else v1


def _branch(fn, g, which):
    """Runs a branch function: its structure and its leaves as tensors.
    An operation (an enqueue, ``tf.group``, ``tf.no_op``) becomes a bool
    scalar evaluated after it: ``which`` (TensorFlow 2.21 gives the
    predicate's value)."""
    out = fn()
    leaves = []
    structure = _flatten(out, leaves)
    tensors = []
    for leaf in leaves:
        if isinstance(leaf, Operation):
            tensors.append(_op(g, "Done", leaf.inputs, value=which))
            continue
        if isinstance(leaf, SparseTensor):
            raise NotImplementedError(
                "tf.cond: a branch returning a SparseTensor is not supported by feedstock; return its "
                "indices, values and dense_shape and rebuild it after the cond"
            )
        tensors.append(leaf if isinstance(leaf, Tensor) else convert_to_tensor(leaf))
    return out, structure, tensors


def cond(pred, true_fn=None, false_fn=None, strict=False, name=None, fn1=None, fn2=None):
    """``tf.cond``: what ``true_fn`` returns when ``pred`` (a bool scalar)
    holds when run, else what ``false_fn`` returns. Both
    functions run once, now; the ops each adds run only when its branch is
    chosen. The branches must return the same structure of tensors of the
    same dtypes; each output's static shape is the most specific one both
    branches' are compatible with. Under TensorFlow 1's control flow (see
    :mod:`feedstock._mode`) a one-element list comes back as its element
    unless ``strict``."""
    if fn1 is not None:
        if true_fn is not None:
            raise TypeError("cond(): 'true_fn' and 'fn1' may not be set simultaneously.")
        true_fn = fn1
    elif true_fn is None:
        raise TypeError("cond(): 'true_fn' argument required")
    if fn2 is not None:
        if false_fn is not None:
            raise TypeError("cond(): 'false_fn' and 'fn2' may not be set simultaneously.")
        false_fn = fn2
    elif false_fn is None:
        raise TypeError("cond(): 'false_fn' argument required")
    if not callable(true_fn):
        raise TypeError("'true_fn' must be callable.")
    if not callable(false_fn):
        raise TypeError("'false_fn' must be callable.")
    if isinstance(pred, bool):
        raise TypeError("pred must not be a Python bool", pred)
    pred = convert_to_tensor(pred)
    if isinstance(pred, SparseTensor):
        raise TypeError("tf.cond: pred must be a dense tensor")
    g = _graph_of(pred)
    with _name_scope(g, name, "cond") as scope:
        lo = len(g._g)
        t_out, t_structure, t_tensors = _branch(true_fn, g, True)
        mid = len(g._g)
        f_out, f_structure, f_tensors = _branch(false_fn, g, False)
        hi = len(g._g)
        if not _same_structure(t_structure, f_structure):
            if len(t_tensors) != len(f_tensors) and t_structure[0] == f_structure[0] == list:
                detail = "The two structures don't have the same sequence length."
            else:
                detail = "The two structures don't have the same nested structure."
            raise TypeError(_STRUCTURE.format(t_out, f_out, detail))
        for t, f in zip(t_tensors, f_tensors):
            if t.dtype != f.dtype:
                raise TypeError(_STRUCTURE.format(t_out, f_out, f"{t} and {f} have different types"))
        with _next_name(g, scope, exact=True):
            outs = _ops(g, "Cond", [pred, *t_tensors, *f_tensors], branches=[lo, mid, mid, hi])
        outs = [identity(o, name=_output_name("Merge")) for o in outs]
    result = _pack(t_structure, iter(outs))
    if not strict and not _mode.v2_behavior():
        # TensorFlow 1 unpacks a one-element list or tuple from the
        # branches, then once more from the result.
        for _ in range(2):
            if isinstance(result, (list, tuple)) and len(result) == 1:
                result = result[0]
    return result


def _check(g, values, preds, check, message):
    """``values`` (tensors) forwarded once TensorFlow's assertion of
    ``tf.case`` on ``preds`` holds (``check``: ``"last"`` or
    ``"exclusive"``)."""
    return _ops(g, "CaseCheck", [*values, *preds], count=len(values), check=check, message=message)


def case(pred_fn_pairs, default=None, exclusive=False, strict=False, name="case"):
    """``tf.case``: what the function of the first predicate that holds
    returns (tested in order), else what ``default`` returns; only that
    function's ops run. Without ``default`` the last pair's function is
    the default and a run in which no predicate holds fails, as in
    TensorFlow; with ``exclusive`` a run in which more than one holds
    fails. A dict is ordered by its predicates' names."""
    if not isinstance(pred_fn_pairs, (list, tuple, dict)):
        raise TypeError(f"'pred_fn_pairs' must be a list, tuple, or dict. Received: {type(pred_fn_pairs)}")
    if isinstance(pred_fn_pairs, collections.OrderedDict):
        pred_fn_pairs = list(pred_fn_pairs.items())
    elif isinstance(pred_fn_pairs, dict):
        pred_fn_pairs = sorted(pred_fn_pairs.items(), key=lambda item: item[0].name)
    for pair in pred_fn_pairs:
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise TypeError(f"Each entry in 'pred_fn_pairs' must be a 2-tuple. Received {pair}.")
        pred, fn = pair
        if isinstance(pred, Tensor):
            if pred.dtype != bool_:
                raise TypeError(f"pred must be Tensor of type bool: {pred.name}")
        else:
            raise TypeError(f"pred must be a Tensor, got: {pred}")
        if not callable(fn):
            raise TypeError(f"fn for pred {pred.name} must be callable.")
    if not pred_fn_pairs:
        raise ValueError("not enough values to unpack (expected 2, got 0)")
    all_preds = [p for p, _ in pred_fn_pairs]
    preds, actions = list(all_preds), [f for _, f in pred_fn_pairs]
    g = _graph_of(*preds)
    with _name_scope(g, name, "case"):
        if default is None:
            # TensorFlow's: the last pair's function is the default,
            # asserting that its predicate holds.
            default = _asserting(g, actions.pop(), all_preds)
            preds.pop()
        if exclusive and preds:
            names = ", ".join(p.name for p in all_preds)
            message = f"Input error: exclusive=True: more than 1 conditions ({names}) evaluated as True:"
            preds = _check(g, preds, all_preds, "exclusive", message)
        fn = default
        for pred, action in reversed(list(zip(preds, actions))):
            fn = _partial_cond(pred, action, fn)
        return fn()


def _asserting(g, action, preds):
    """``action``, whose outputs are given once the last of ``preds``
    holds (else the run fails as TensorFlow's assertion)."""

    def default():
        out = action()
        leaves = []
        structure = _flatten(out, leaves)
        leaves = [x if isinstance(x, Tensor) else convert_to_tensor(x) for x in leaves]
        message = "Input error: None of conditions evaluated as True:"
        return _pack(structure, iter(_check(g, leaves, preds, "last", message)))

    return default


def _partial_cond(pred, true_fn, false_fn):
    return lambda: cond(pred, true_fn, false_fn)


def _fits(shape, invariant):
    """Whether ``shape`` is one ``invariant`` (a TensorShape) allows."""
    if invariant._dims is None:
        return True
    if shape._dims is None or len(shape._dims) != len(invariant._dims):
        return False
    return all(w is None or w == d for w, d in zip(invariant._dims, shape._dims))


def _loop_var(g, t, invariant):
    shape = None if invariant._dims is None else [-1 if d is None else d for d in invariant._dims]
    return _op(g, "LoopVar", [], dtype=t.dtype._native, shape=shape)


def while_loop(cond, body, loop_vars, shape_invariants=None, parallel_iterations=10, back_prop=True,
               swap_memory=False, name=None, maximum_iterations=None, return_same_structure=False):
    """``tf.while_loop``: ``body`` applied to ``loop_vars`` (a tensor or a
    nested structure of them) while ``cond`` of them holds, when run. Both
    functions run once, now, on stand-ins for the variables; their ops run
    once per iteration. A variable keeps its dtype and its shape (or the
    less specific one ``shape_invariants`` gives); ``maximum_iterations``
    bounds the iterations. A single variable comes back as a tensor
    unless ``return_same_structure``."""
    if not callable(cond):
        raise TypeError("'cond' must be callable.")
    if not callable(body):
        raise TypeError("'body' must be callable.")
    if parallel_iterations < 1:
        raise TypeError("'parallel_iterations' must be a positive integer.")
    if isinstance(loop_vars, Tensor):
        loop_vars = [loop_vars]
    if not isinstance(loop_vars, (list, tuple)):
        raise TypeError(f"object of type '{type(loop_vars).__name__}' has no len()")
    leaves = []
    structure = _flatten(list(loop_vars), leaves)
    inits = [x if isinstance(x, Tensor) else convert_to_tensor(x) for x in leaves]
    if any(isinstance(t, SparseTensor) for t in inits):
        raise NotImplementedError("tf.while_loop: sparse loop variables are not supported by feedstock")
    if shape_invariants is None:
        invariants = [t.shape for t in inits]
    else:
        inv_leaves = []
        _flatten(shape_invariants, inv_leaves)
        if len(inv_leaves) != len(inits):
            raise ValueError(f"shape_invariants has {len(inv_leaves)} shapes for {len(inits)} loop variables")
        invariants = [x if isinstance(x, TensorShape) else TensorShape(x) for x in inv_leaves]
        for t, inv in zip(inits, invariants):
            if not _fits(t.shape, inv):
                raise ValueError(
                    f"The shape invariant specified for {t.name} is not compatible with the initial shape of the "
                    f"loop variable. It enters the loop with shape {t.shape}, but the specified shape invariant "
                    f"is {inv}."
                )
    g = _graph_of(*inits)
    counted = maximum_iterations is not None
    with _name_scope(g, name, "while") as scope:
        if counted:
            limit = convert_to_tensor(maximum_iterations, dtype=int32, name="maximum_iterations")
            inits = [convert_to_tensor(0, name="iteration"), *inits]
            invariants = [TensorShape([]), *invariants]
        lo = len(g._g)
        stand_ins = [_loop_var(g, t, inv) for t, inv in zip(inits, invariants)]
        args = _pack(structure, iter(stand_ins[1:] if counted else stand_ins))
        pred = convert_to_tensor(cond(*args))
        if counted:
            from ._array_ops import logical_and

            pred = logical_and(stand_ins[0] < limit, pred)
        out = body(*args)
        if not isinstance(out, (list, tuple)):
            out = [out]
        out_leaves = []
        if not _same_structure(structure, _flatten(list(out), out_leaves)):
            raise ValueError(
                "The two structures don't have the same nested structure.\n\n"
                f"First structure: type={type(loop_vars).__name__} str={loop_vars}\n\n"
                f"Second structure: type={type(out).__name__} str={out}"
            )
        nexts = [x if isinstance(x, Tensor) else convert_to_tensor(x) for x in out_leaves]
        if counted:
            nexts = [stand_ins[0] + 1, *nexts]
        for t, nxt, inv in zip(inits, nexts, invariants):
            if nxt.dtype != t.dtype:
                raise TypeError(
                    f"Loop var {t.name} enters the loop with type {t.dtype!s} but has type {nxt.dtype!s} after 1 "
                    f"iteration. {t.name} type should remain constant."
                )
            if not _fits(nxt.shape, inv):
                raise ValueError(
                    f"Input tensor `{t.name}` enters the loop with shape {inv}, but has shape {nxt.shape} after "
                    "one iteration. To allow the shape to vary across iterations, use the `shape_invariants` "
                    "argument of tf.while_loop to specify a less-specific shape."
                )
        hi = len(g._g)
        with _next_name(g, scope, exact=True):
            outs = _ops(g, "While", [*inits, pred, *nexts], body=[lo, hi], vars=len(inits))
        outs = [identity(o, name=_output_name("Exit")) for o in outs]
    if counted:
        outs = outs[1:]
    result = _pack(structure, iter(outs))
    if not return_same_structure and len(result) == 1:
        return result[0]
    # The container is the body's under TensorFlow 1's control flow, the
    # loop variables' under v2's.
    like = loop_vars if _mode.v2_behavior() else out
    if hasattr(type(like), "_fields"):
        return type(like)(*result)
    return type(like)(result)


def _map_fn_loop(fn, ts, elems, name):
    """``tf.map_fn`` of ``fn`` over the slices of the tensors ``ts`` (from
    the list or tuple ``elems``, or one tensor if ``elems`` is None) along
    axis 0, whose number is known only when run: a while loop that
    concatenates the results. ``fn`` is called twice while building: once
    on stand-ins for the slices to learn what it returns (those ops never
    run), once in the loop's body."""
    from ._graph import concat, expand_dims, gather, shape, zeros

    def call(pieces):
        return fn(pieces[0] if elems is None else type(elems)(pieces))

    g = _graph_of(*ts)
    with _name_scope(g, name, "map") as scope:
        probe_leaves = []
        # Stand-ins for the slices (never run, nor what fn makes of them).
        slices = [_loop_var(g, t, TensorShape(None if t.shape._dims is None else t.shape._dims[1:])) for t in ts]
        structure = _flatten(call(slices), probe_leaves)
        probe_leaves = [x if isinstance(x, Tensor) else convert_to_tensor(x) for x in probe_leaves]
        # The empty result: unknown sizes (or rank) as 0, replaced by the
        # first row.
        accs = [zeros([0] + [d or 0 for d in x.shape._dims or []], dtype=x.dtype) for x in probe_leaves]
        invariants = [TensorShape(None if x.shape._dims is None else [None, *x.shape._dims]) for x in probe_leaves]
        n = shape(ts[0], out_type=int32)[0]

        def body(i, *accs):
            leaves = []
            got = _flatten(call([gather(t, i) for t in ts]), leaves)
            if not _same_structure(structure, got):
                raise ValueError("tf.map_fn: fn returned different structures")
            new = []
            for acc, x in zip(accs, leaves):
                row = expand_dims(convert_to_tensor(x), 0)
                if acc.shape._dims is not None and None not in acc.shape._dims[1:]:
                    new.append(concat([acc, row], 0))
                else:
                    new.append(cond(i > 0, lambda a=acc, r=row: concat([a, r], 0), lambda r=row: r))
            return [i + 1, *new]

        out = while_loop(
            lambda i, *accs: i < n,
            body,
            [convert_to_tensor(0), *accs],
            shape_invariants=[TensorShape([]), *invariants],
        )[1:]
        result = _pack(structure, iter(out))
        if isinstance(result, Tensor):
            return identity(result, name=scope)
        return result
