"""What ``feedstock.compat.v1`` says when a program asks it for a name it
does not have (``tf.nn.conv2d``, ``tf.layers.dense``,
``tf.train.AdamOptimizer``, ``tf.keras``, ``tf.losses``...).

TensorFlow's model half (layers, losses, optimizers, gradients) is not
emulated: feedstock is the input system. The error,
:class:`feedstock.errors.OutsideInputSystemError` (an ``AttributeError``,
see there why), says so and how to hand the batches to a model.
"""

import difflib
from types import SimpleNamespace

from .errors import OutsideInputSystemError

_HOW = (
    "feedstock.compat.v1 covers TensorFlow 1's input system (file readers, record decoders, "
    "queues, queue runners, batching, image preprocessing, sessions that run them), not models, "
    "layers, losses, optimizers or gradients. Build the model in the framework of your choice and "
    "give it the batches Session.run returns, which are numpy arrays: torch.from_numpy(x) for "
    "PyTorch (or feedstock.torch.IterableDataset for a DataLoader), jax.numpy.asarray(x) for JAX, "
    "model.train_on_batch(x, y) or model.fit(x, y) for Keras."
)


def missing(path, name, have, owner=None):
    """The error for ``<path>.<name>`` absent from a namespace that has the
    names ``have``; a plain ``AttributeError`` (as Python words it, about
    ``owner``) for private and dunder names, which introspection probes
    for."""
    if name.startswith("_"):
        return AttributeError(f"{owner or repr(path)} has no attribute {name!r}")
    near = difflib.get_close_matches(name, [h for h in have if not h.startswith("_")], n=3, cutoff=0.75)
    hint = f" Did you mean: {', '.join(f'{path}.{n}' for n in near)}?" if near else ""
    err = OutsideInputSystemError(f"{path}.{name} is not in feedstock.compat.v1.{hint} {_HOW}")
    err.name = name
    return err


class Namespace(SimpleNamespace):
    """A namespace of ``feedstock.compat.v1`` (``tf.train``, ``tf.image``,
    ...): a name it lacks raises :class:`OutsideInputSystemError`."""

    __slots__ = ("_path",)

    def __init__(self, _path, **names):
        super().__init__(**names)
        object.__setattr__(self, "_path", _path)

    def __getattr__(self, name):
        raise missing(object.__getattribute__(self, "_path"), name, vars(self), f"{type(self).__name__!r} object")
