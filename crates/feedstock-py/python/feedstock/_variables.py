"""``tf.Variable``, collections, initializers and grouping: the graph state
and bookkeeping of ``feedstock.compat.v1``."""

from ._graph import (
    GLOBAL_VARIABLES,
    LOCAL_VARIABLES,
    Operation,
    TRAINABLE_VARIABLES,
    Tensor,
    TensorShape,
    _graph_of,
    _next_name,
    _scope,
    _under,
    convert_to_tensor,
    get_default_graph,
    int64,
)


class Variable(Tensor):
    """``tf.Variable`` for preloaded data: reading it gives the value its
    ``initializer`` assigned. Printed as TensorFlow 1 prints its
    (reference) variables: ``<tf.Variable 'v:0' shape=() dtype=int32_ref>``."""

    __slots__ = ("initializer", "initial_value", "trainable", "_unknown_shape")

    def __init__(self, initial_value=None, trainable=None, collections=None, name=None, dtype=None, **_ignored):
        g = _graph_of(initial_value)
        # As TensorFlow names them: the variable `name` (default
        # `Variable`, made unique), a value converted here
        # `<name>/Initializer/initial_value`, the initializer `<name>/Assign`.
        vname = _scope(g, name, "Variable")
        with _under(g, vname):
            init = convert_to_tensor(initial_value, dtype=dtype, name="Initializer/initial_value")
        with _next_name(g, vname, exact=True):
            value, initializer = g._g.variable(init._o, None)
        initializer = Operation(g, [Tensor(g, initializer)], name=g._g.name(initializer))
        self._register(g, value, init, initializer, trainable, collections)

    def _register(self, g, value, initial_value, initializer, trainable, collections, unknown_shape=False):
        Tensor.__init__(self, g, value)
        self.initial_value = initial_value
        self.initializer = initializer
        self.trainable = bool(trainable) if trainable is not None else True
        self._unknown_shape = unknown_shape
        collections = [GLOBAL_VARIABLES] if collections is None else list(collections)
        if self.trainable and TRAINABLE_VARIABLES not in collections:
            # As TensorFlow: a trainable variable is in the trainable
            # collection, even with `collections=[]`.
            collections.append(TRAINABLE_VARIABLES)
        for c in collections:
            g.add_to_collection(c, self)

    @classmethod
    def _over(cls, tensor, collections):
        """A variable standing for ``tensor``, a value feedstock computes
        itself where TensorFlow keeps a variable (``match_filenames_once``'s
        ``matching_filenames``: matched when first used, so its
        initializer is an empty operation). Not trainable; its shape is
        unknown, as TensorFlow's (made with ``validate_shape=False``)."""
        g = tensor.graph
        v = cls.__new__(cls)
        initializer = Operation(g, [], name=f"{g._g.name(tensor._o)}/Assign")
        v._register(g, tensor._o, tensor, initializer, False, collections, unknown_shape=True)
        return v

    @property
    def shape(self):
        return TensorShape(None) if self._unknown_shape else Tensor.shape.fget(self)

    def __repr__(self):
        return f"<tf.Variable '{self.name}' shape={self.shape} dtype={self.dtype.name}_ref>"

    __str__ = __repr__

    def value(self):
        return self

    def read_value(self):
        return self

    def assign(self, value, use_locking=None, name=None, read_value=True):
        """Sets the variable to ``value`` (converted to its dtype) when
        run; the returned tensor's value is the value assigned
        (``read_value=False``: an operation)."""
        g = self.graph
        with g.as_default():
            value = convert_to_tensor(value, dtype=self.dtype)
        with _next_name(g, name):
            out = Tensor(g, g._g.assign(self._o, value._o))
        return out if read_value else Operation(g, [out], name=g._g.name(out._o))

    def assign_add(self, delta, use_locking=None, name=None, read_value=True):
        """Adds ``delta`` to the variable when run; the value is the sum
        (reads of the variable in the same run see the value before)."""
        with self.graph.as_default():
            delta = convert_to_tensor(delta, dtype=self.dtype)
        return self.assign(self + delta, name=name, read_value=read_value)


def _epoch_counter(g, scope):
    """The epoch counter TensorFlow's ``limit_epochs`` named ``scope``
    keeps (a producer's is ``<producer>/limit_epochs``): the local
    variable ``<scope>/epochs`` (int64). feedstock's producers count their
    epochs natively, so it holds 0 once initialized; it is there to be
    listed and initialized as TensorFlow's."""
    with g.as_default(), _under(g, ""):
        return Variable(0, trainable=False, collections=[LOCAL_VARIABLES], name=f"{scope}/epochs", dtype=int64)


def assign(ref, value, validate_shape=None, use_locking=None, name=None):
    """``tf.assign``: ``ref.assign(value)``."""
    return ref.assign(value, name=name)


def assign_add(ref, value, use_locking=None, name=None):
    """``tf.assign_add``: ``ref.assign_add(value)``."""
    return ref.assign_add(value, name=name)


def global_variables_initializer():
    """Runs the initializers of the global variables (those not made
    with ``collections=[]``); named ``init`` (made unique)."""
    g = get_default_graph()
    return group(*[v.initializer for v in g.get_collection(GLOBAL_VARIABLES)], name="init")


def local_variables_initializer():
    """Runs the initializers of the local variables. feedstock's
    producers count epochs themselves, so their epoch counters (local
    variables, as TensorFlow's) only get their 0 and
    ``match_filenames_once``'s files are matched when first used: the
    guide's pattern runs, and costs next to nothing. Named ``init`` (made
    unique), as in TensorFlow."""
    g = get_default_graph()
    return group(*[v.initializer for v in g.get_collection(LOCAL_VARIABLES)], name="init")


initialize_all_variables = global_variables_initializer
initialize_local_variables = local_variables_initializer


def variables_initializer(var_list, name="init"):
    """An operation running the initializers of ``var_list``."""
    return group(*[v.initializer for v in var_list], name=name)


def global_variables(scope=None):
    return get_default_graph().get_collection(GLOBAL_VARIABLES)


def local_variables(scope=None):
    return get_default_graph().get_collection(LOCAL_VARIABLES)


def trainable_variables(scope=None):
    return get_default_graph().get_collection(TRAINABLE_VARIABLES)


def get_collection(key, scope=None):
    """``tf.get_collection``: the default graph's collection ``key``."""
    return get_default_graph().get_collection(key, scope)


def add_to_collection(name, value):
    """``tf.add_to_collection``, in the default graph."""
    get_default_graph().add_to_collection(name, value)


def _group_inputs(inputs):
    """The tensors running ``inputs`` (tensors, operations, lists of
    them) runs."""
    tensors = []
    for x in inputs:
        if isinstance(x, Operation):
            tensors.extend(x.inputs)
        elif isinstance(x, (list, tuple)):
            tensors.extend(_group_inputs(x))
        elif isinstance(x, Tensor):
            tensors.append(x)
        elif x is not None:
            raise TypeError(f"tf.group takes tensors and operations, got {type(x).__name__}")
    return tensors


def group(*inputs, name=None):
    """An operation that runs ``inputs`` (tensors or operations)."""
    g = get_default_graph()
    tensors = []
    for x in inputs:
        if isinstance(x, Operation):
            tensors.extend(x.inputs)
            g = x.graph
        elif isinstance(x, (list, tuple)):
            tensors.extend(_group_inputs(x))
        elif isinstance(x, Tensor):
            tensors.append(x)
            g = x.graph
        elif x is not None:
            raise TypeError(f"tf.group takes tensors and operations, got {type(x).__name__}")
    return _python_op(g, tensors, name, "group_deps")


def no_op(name=None):
    """An operation that does nothing."""
    return _python_op(get_default_graph(), [], name, "NoOp")


def _python_op(g, tensors, name, default):
    """An operation of ``g`` that only exists in Python (it runs
    ``tensors``), named as TensorFlow names the op it stands for."""
    g._g.check_not_finalized()
    g._python_ops += 1
    # Made in a tf.control_dependencies block, it runs the block's inputs.
    return Operation(g, [*tensors, *g._control_inputs], name=_scope(g, name, default))
