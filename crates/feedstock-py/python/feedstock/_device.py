"""``tf.device``: feedstock places nothing on devices (its pipeline runs in
its own threads), but the nodes made in the block carry the device's name
as TensorFlow prints it (``Tensor("add:0", ..., device=/device:CPU:0)``,
``tensor.device``), which TF1 programs print when they show their input
tensors (cifar10 builds its input under ``tf.device('/cpu:0')``)."""

import contextlib
import re

_SHORT = re.compile(r"^(cpu|gpu|tpu):(\d+|\*)$", re.IGNORECASE)
_LONG = re.compile(r"^device:([a-z]+):(\d+|\*)$", re.IGNORECASE)


def canonical(spec):
    """A device string in TensorFlow's form: ``/cpu:0`` is
    ``/device:CPU:0``, each ``/``-part kept otherwise."""
    parts = []
    for part in str(spec).split("/"):
        short, long = _SHORT.match(part), _LONG.match(part)
        if short or long:
            kind, index = (short or long).groups()
            part = f"device:{kind.upper()}:{index}"
        if part:
            parts.append(part)
    return "".join(f"/{p}" for p in parts)


@contextlib.contextmanager
def placing(graph, spec):
    """Within it, the nodes added to ``graph`` carry ``spec`` (``None``:
    no device, as ``tf.device(None)`` clears it; a device function:
    nothing recorded). An inner block's device wins, as in TensorFlow."""
    start = len(graph._g)
    try:
        yield
    finally:
        if not callable(spec):
            name = "" if spec is None else canonical(spec)
            devices = graph.__dict__.setdefault("_devices", {})
            for node, _ in graph._g.node_names()[start:]:
                devices.setdefault(node, name)


def of(graph, node):
    """The device node ``node`` of ``graph`` was made under, ``""`` if
    none."""
    return graph.__dict__.get("_devices", {}).get(node, "")
