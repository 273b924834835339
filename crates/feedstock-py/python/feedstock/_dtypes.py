"""TensorFlow 1's dtypes (``tf.float32``, ``tf.as_dtype``) and static
shapes (``tf.TensorShape``)."""

import numpy as np


# ---------------------------------------------------------------- dtypes


class DType:
    """A tensor element type, named as TensorFlow names it."""

    __slots__ = ("name", "_native")

    def __init__(self, name, native):
        self.name = name
        self._native = native

    @property
    def as_numpy_dtype(self):
        """The numpy type of the values (``object`` for strings, as in
        TensorFlow; ``ml_dtypes.bfloat16`` for bfloat16, which numpy
        lacks)."""
        if self._native == "string":
            return object
        if self._native == "bfloat16":
            return _ml_dtypes().bfloat16
        return np.dtype(self._native).type

    @property
    def is_floating(self):
        return self._native in ("float16", "bfloat16", "float32", "float64")

    @property
    def is_complex(self):
        return self._native in ("complex64", "complex128")

    @property
    def is_integer(self):
        return self._native in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")

    def __repr__(self):
        return f"tf.{self.name}"

    def __str__(self):
        return f"<dtype: '{self.name}'>"

    def __eq__(self, other):
        try:
            return as_dtype(other)._native == self._native
        except TypeError:
            return NotImplemented

    def __hash__(self):
        return hash(self._native)


float32 = DType("float32", "float32")
float64 = DType("float64", "float64")
int8 = DType("int8", "int8")
int16 = DType("int16", "int16")
int32 = DType("int32", "int32")
int64 = DType("int64", "int64")
uint8 = DType("uint8", "uint8")
uint16 = DType("uint16", "uint16")
uint32 = DType("uint32", "uint32")
uint64 = DType("uint64", "uint64")
bool_ = DType("bool", "bool")
string = DType("string", "string")
float16 = DType("float16", "float16")
half = float16
bfloat16 = DType("bfloat16", "bfloat16")
complex64 = DType("complex64", "complex64")
complex128 = DType("complex128", "complex128")

_BY_NATIVE = {
    d._native: d
    for d in (
        float16, bfloat16, float32, float64, int8, int16, int32, int64, uint8, uint16, uint32, uint64, bool_, string,
        complex64, complex128,
    )
}
_BY_NATIVE["object"] = string
# TensorFlow's other names for three types ("float" is how TF1 tutorials
# and the queues guide write float32: ``tf.FIFOQueue(3, "float")``).
_ALIASES = {"float": float32, "double": float64, "half": float16}


def _ml_dtypes():
    """``ml_dtypes``, which gives numpy its ``bfloat16``; an ImportError
    that says what to do when it is missing."""
    try:
        import ml_dtypes
    except ImportError as e:
        raise ImportError(
            "bfloat16 arrays need the ml_dtypes package (pip install ml_dtypes), or tf.cast the tensor to float32"
        ) from e
    return ml_dtypes


def as_dtype(x):
    """A :class:`DType` from a DType, a numpy dtype or type, or a name;
    anything else (``None`` too, which numpy would take as float64) is a
    TypeError in TensorFlow's words."""
    if isinstance(x, DType):
        return x
    refused = TypeError(f"Cannot convert the argument `type_value`: {x!r} to a TensorFlow DType.")
    if x is None:
        raise refused
    if x is str or x is bytes:
        return string
    if isinstance(x, str):
        if x in ("string", "str", "bytes", "object"):
            return string
        if x in _BY_NATIVE:
            return _BY_NATIVE[x]
        if x in _ALIASES:
            return _ALIASES[x]
        raise refused
    try:
        nd = np.dtype(x)
    except TypeError:
        raise refused from None
    if nd.kind in ("O", "S", "U"):
        return string
    if nd.name in _BY_NATIVE:
        return _BY_NATIVE[nd.name]
    raise refused


# ---------------------------------------------------------------- shapes


class TensorShape:
    """A static shape: ``dims`` is ``None`` when the rank is unknown,
    else a list with ``None`` for unknown sizes."""

    __slots__ = ("dims",)

    def __init__(self, dims):
        self.dims = None if dims is None else [None if d is None else int(d) for d in dims]

    @property
    def ndims(self):
        return None if self.dims is None else len(self.dims)

    rank = ndims

    def as_list(self):
        if self.dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return list(self.dims)

    def is_fully_defined(self):
        return self.dims is not None and all(d is not None for d in self.dims)

    def num_elements(self):
        if not self.is_fully_defined():
            return None
        return int(np.prod(self.dims, dtype=np.int64))

    def __len__(self):
        if self.dims is None:
            raise ValueError("Cannot take the length of shape with unknown rank.")
        return len(self.dims)

    def __iter__(self):
        return iter(self.as_list())

    def __getitem__(self, i):
        return self.as_list()[i]

    def __eq__(self, other):
        if isinstance(other, TensorShape):
            return self.dims == other.dims
        try:
            return self.dims == [None if d is None else int(d) for d in other]
        except TypeError:
            return NotImplemented

    def __repr__(self):
        return "TensorShape(None)" if self.dims is None else f"TensorShape({self.dims})"

    def __str__(self):
        """As TensorFlow prints a shape: ``(None, 2)``, ``(3,)``,
        ``<unknown>``."""
        return "<unknown>" if self.dims is None else str(tuple(self.dims))


def _compatible(a, b):
    """Whether two static shapes (lists of dims, ``None`` unknown; or
    ``None`` for an unknown rank) can describe the same tensor."""
    if a is None or b is None:
        return True
    return len(a) == len(b) and all(x is None or y is None or x == y for x, y in zip(a, b))


def _shape_arg(shape):
    if shape is None:
        return None
    if isinstance(shape, TensorShape):
        return shape.dims
    if isinstance(shape, (int, np.integer)):
        return [int(shape)]
    return [None if d is None or (isinstance(d, int) and d < 0) else int(d) for d in shape]
