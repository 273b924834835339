"""``tf.variable_scope`` and ``tf.get_variable`` of TensorFlow 1, with
the deterministic initializers (zeros, ones, constants).

As TensorFlow's: a variable scope also opens a name scope for operations
(made unique: ``input``, ``input_1``) while variables are named by the
variable scope itself (``input/v``); ``get_variable`` of an existing name
is a ValueError unless the scope reuses, and reusing a name never created
is one too. Random initializers (the default for floats, glorot uniform)
cannot give TensorFlow's values: NotImplementedError.
"""

import contextlib
import threading

import numpy as np

from ._graph import (
    GLOBAL_VARIABLES,
    Tensor,
    Variable,
    _name_scope,
    _under,
    as_dtype,
    float32,
    get_default_graph,
)

AUTO_REUSE = "AUTO_REUSE"


class _State(threading.local):
    def __init__(self):
        self.stack = []  # (graph, scope name, reuse, initializer)


_state = _State()


def _current(g):
    for entry in reversed(_state.stack):
        if entry[0] is g:
            return entry
    # The root scope; its reuse is set for good by reuse_variables().
    return (g, "", getattr(g, "_root_reuse", False), None)


class VariableScope:
    """What ``tf.variable_scope`` yields and ``tf.get_variable_scope``
    gives: its ``name``, ``reuse`` and ``initializer``."""

    def __init__(self, name, reuse, initializer, graph=None):
        self.name, self.reuse, self.initializer = name, reuse, initializer
        self.original_name_scope = f"{name}/" if name else ""
        self._graph = graph

    def reuse_variables(self):
        """Reuses variables in this scope from now on (the root scope's for
        good, as TensorFlow's: a multi-GPU program's towers)."""
        g = self._graph or get_default_graph()
        for k in range(len(_state.stack) - 1, -1, -1):
            entry = _state.stack[k]
            if entry[0] is g:
                _state.stack[k] = entry[:2] + (True,) + entry[3:]
                break
        else:
            g._root_reuse = True
        self.reuse = True


def get_variable_scope():
    g, name, reuse, init = _current(get_default_graph())
    return VariableScope(name, reuse, init, g)


@contextlib.contextmanager
def variable_scope(name_or_scope, default_name=None, values=None, initializer=None, reuse=None, dtype=None,
                   auxiliary_name_scope=True, **_ignored):
    """``tf.variable_scope``: variables under ``name_or_scope`` (a name
    or a :class:`VariableScope`), operations under a name scope of it;
    ``reuse`` (True or ``tf.AUTO_REUSE``) is inherited by inner scopes."""
    g = get_default_graph()
    _, outer, outer_reuse, outer_init = _current(g)
    if isinstance(name_or_scope, VariableScope):
        full = name_or_scope.name
        op_scope = name_or_scope.original_name_scope
    else:
        short = name_or_scope if name_or_scope is not None else default_name
        if short is None:
            raise TypeError("If default_name is None then name_or_scope is required")
        if name_or_scope is None:
            # A default name is made unique among variable scopes.
            short = g._g.unique_name(f"{outer}/{short}" if outer else short, mark_as_used=False).rsplit("/", 1)[-1]
        full = f"{outer}/{short}" if outer else short
        op_scope = short
    reuse = True if outer_reuse is True else (reuse if reuse is not None else outer_reuse)
    entry = (g, full, reuse, initializer if initializer is not None else outer_init)
    depth = len(_state.stack)
    _state.stack.append(entry)
    try:
        scope = VariableScope(full, reuse, entry[3], g)
        if auxiliary_name_scope:
            with _name_scope(g, op_scope, None):
                yield scope
        else:
            yield scope
    finally:
        # By position: reuse_variables() may have replaced the entry.
        del _state.stack[depth:]


def _store(g):
    store = getattr(g, "_variable_store", None)
    if store is None:
        store = g._variable_store = {}
    return store


class _Initializer:
    def __init__(self, value=0, dtype=None):
        self.value, self.dtype = value, dtype

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = as_dtype(dtype or self.dtype or float32)
        value = np.asarray(self.value)
        if value.ndim == 0:
            return np.full(shape, value, dtype=dtype.as_numpy_dtype)
        if list(value.shape) != list(shape) and value.size == int(np.prod(shape)):
            value = value.reshape(shape)
        return value.astype(dtype.as_numpy_dtype)


def zeros_initializer(dtype=None):
    """``tf.zeros_initializer``."""
    return _Initializer(0, dtype)


def ones_initializer(dtype=None):
    """``tf.ones_initializer``."""
    return _Initializer(1, dtype)


def constant_initializer(value=0, dtype=None, verify_shape=False):
    """``tf.constant_initializer``: a scalar fills the shape; a list of
    as many values as the shape holds is reshaped to it."""
    return _Initializer(value, dtype)


def get_variable(name, shape=None, dtype=None, initializer=None, regularizer=None, trainable=None,
                 collections=None, **_ignored):
    """``tf.get_variable``: the variable ``<scope>/<name>``, created from
    ``initializer`` (an initializer, a tensor or a value) unless the scope
    reuses it."""
    g = get_default_graph()
    _, scope, reuse, scope_init = _current(g)
    full = f"{scope}/{name}" if scope else name
    store = _store(g)
    if full in store:
        if reuse is True or reuse == AUTO_REUSE:
            return store[full]
        raise ValueError(
            f"Variable {full} already exists, disallowed. Did you mean to set reuse=True or reuse=tf.AUTO_REUSE "
            "in VarScope?"
        )
    if reuse is True:
        raise ValueError(
            f"Variable {full} does not exist, or was not created with tf.get_variable(). Did you mean to set "
            "reuse=tf.AUTO_REUSE in VarScope?"
        )
    init = initializer if initializer is not None else scope_init
    dt = as_dtype(dtype) if dtype is not None else None
    if isinstance(init, Tensor) or (init is not None and not callable(init)):
        value = init
        if shape is not None and not isinstance(init, Tensor):
            raise ValueError("If initializer is a constant, do not specify shape.")
    else:
        dt = dt or float32
        if init is None:
            if not (dt.is_integer or dt.name in ("bool", "string")):
                raise NotImplementedError(
                    f"tf.get_variable({name!r}) without an initializer: TensorFlow's default is random "
                    "(glorot uniform); give zeros_initializer or constant_initializer"
                )
            init = zeros_initializer()
        if shape is None:
            raise ValueError(f"Shape of a new variable ({full}) must be fully defined, but instead was None.")
        value = init([int(d) for d in shape], dtype=dt)
    with _under(g, scope):
        v = Variable(value, trainable=trainable, collections=collections or [GLOBAL_VARIABLES], name=name, dtype=dt)
    store[full] = v
    return v
