"""Which TensorFlow a ``feedstock.compat.v1`` program was written for,
where TensorFlow 2.21's ``tf.compat.v1`` behaves differently by it: the
static shapes (``tf.TensorShape``) and the names of ``tf.cond``'s and
``tf.while_loop``'s outputs.

A program that only changed its import line is a TensorFlow 1 program:
a shape's ``shape[i]`` is a ``tf.Dimension`` and prints ``?`` when
unknown, ``tf.cond``'s outputs are ``cond/Merge``, as under
``tf.disable_v2_behavior()``, which keeps that. A program that calls
``tf.disable_eager_execution()`` without ``tf.disable_v2_behavior()`` was
written for TensorFlow 2's compat.v1, which keeps v2 shapes (ints and
``None``) and v2 control flow (``cond/Identity``). ``tf.enable_v2_tensorshape()``
and ``tf.disable_v2_tensorshape()`` choose the shapes alone, as in
TensorFlow.
"""

# Whether the program asked for TensorFlow 2's behaviour: None until it
# says (a TensorFlow 1 program), True once it disables eager execution
# without disabling v2 behaviour, False once it disables v2 behaviour.
_tf2 = None
# tf.enable_v2_tensorshape() / tf.disable_v2_tensorshape(): True, False,
# or None to follow _tf2.
_v2_tensorshape = None


def v2_behavior():
    """Whether TensorFlow 2's behaviour is on (v2 control flow)."""
    return bool(_tf2)


def v2_tensorshape():
    """Whether shapes behave as TensorFlow 2's (``shape[i]`` an int or
    ``None``) rather than TensorFlow 1's (a ``Dimension``)."""
    return v2_behavior() if _v2_tensorshape is None else _v2_tensorshape


def disable_v2_behavior():
    """``tf.disable_v2_behavior``: TensorFlow 1's behaviour, which is
    feedstock's default (graph mode is the only mode feedstock has)."""
    global _tf2, _v2_tensorshape
    _tf2 = False
    _v2_tensorshape = False


def disable_eager_execution():
    """``tf.disable_eager_execution``: feedstock always builds graphs;
    called without :func:`disable_v2_behavior` (before or after), it says
    the program was written for TensorFlow 2's compat.v1, which keeps v2
    shapes and v2 control flow."""
    global _tf2
    if _tf2 is None:
        _tf2 = True


def enable_v2_tensorshape():
    """``tf.enable_v2_tensorshape``: ``shape[i]`` is an int or ``None``,
    shapes print ``(None, 3)``."""
    global _v2_tensorshape
    _v2_tensorshape = True


def disable_v2_tensorshape():
    """``tf.disable_v2_tensorshape``: ``shape[i]`` is a ``Dimension``,
    shapes print ``(?, 3)``."""
    global _v2_tensorshape
    _v2_tensorshape = False
