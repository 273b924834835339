"""TensorFlow 1's dtypes (``tf.float32``, ``tf.as_dtype``) and static
shapes (``tf.TensorShape``)."""

import operator

import numpy as np

from . import _mode


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


def _known(a, b, op):
    """``op`` of two Dimensions' values as a Dimension, unknown if either is."""
    return Dimension(None) if a._value is None or b._value is None else Dimension(op(a._value, b._value))


def _known_bool(a, b, op):
    """``op`` of two Dimensions' values, ``None`` if either is unknown."""
    return None if a._value is None or b._value is None else op(a._value, b._value)


class Dimension:
    """``tf.Dimension``: one size of a TensorFlow 1 static shape, ``value``
    an int or ``None`` (unknown, printed ``?``). Arithmetic with ints and
    Dimensions gives a Dimension (unknown if either side is); comparisons
    give ``None`` when either side is unknown (``Dimension(None) == 3`` is
    ``None``); ``int()`` and ``__index__`` give the value. As TensorFlow's
    ``tensor_shape.Dimension``, down to its errors."""

    __slots__ = ("_value",)

    def __init__(self, value):
        if isinstance(value, int):
            if value < 0:
                raise ValueError("Dimension %d must be >= 0" % value)
            self._value = value
        elif value is None:
            self._value = None
        elif isinstance(value, Dimension):
            self._value = value._value
        else:
            try:
                self._value = int(value.__index__())
            except AttributeError:
                raise TypeError(
                    "Dimension value must be integer or None or have an __index__ method, "
                    f"got value '{value!r}' with type '{type(value)!r}'"
                ) from None
            if self._value < 0:
                raise ValueError("Dimension %d must be >= 0" % self._value)

    @property
    def value(self):
        """The size, or ``None`` if it is unknown."""
        return self._value

    def __repr__(self):
        return f"Dimension({self._value!r})"

    def __str__(self):
        return "?" if self._value is None else str(self._value)

    def __eq__(self, other):
        try:
            other = as_dimension(other)
        except (TypeError, ValueError):
            return NotImplemented
        return _known_bool(self, other, operator.eq)

    def __ne__(self, other):
        try:
            other = as_dimension(other)
        except (TypeError, ValueError):
            return NotImplemented
        return _known_bool(self, other, operator.ne)

    __hash__ = None  # as TensorFlow's: equality may be unknown

    def __bool__(self):
        return bool(self._value)

    def __int__(self):
        return self._value

    def __index__(self):
        return self._value

    def is_compatible_with(self, other):
        """Whether ``other`` may be the same size (either unknown, or equal)."""
        other = as_dimension(other)
        return self._value is None or other._value is None or self._value == other._value

    def assert_is_compatible_with(self, other):
        if not self.is_compatible_with(other):
            raise ValueError(f"Dimensions {self} and {other} are not compatible")

    def merge_with(self, other):
        """The known one of the two sizes; ValueError if both are known and
        differ."""
        other = as_dimension(other)
        self.assert_is_compatible_with(other)
        return Dimension(other._value if self._value is None else self._value)

    def _binary(self, other, op):
        try:
            other = as_dimension(other)
        except (TypeError, ValueError):
            return NotImplemented
        return _known(self, other, op)

    def __add__(self, other):
        return self._binary(other, operator.add)

    __radd__ = __add__

    def __sub__(self, other):
        return self._binary(other, operator.sub)

    def __rsub__(self, other):
        return _known(as_dimension(other), self, operator.sub)

    def __mul__(self, other):
        return self._binary(other, operator.mul)

    __rmul__ = __mul__

    def __floordiv__(self, other):
        return self._binary(other, operator.floordiv)

    def __rfloordiv__(self, other):
        return _known(as_dimension(other), self, operator.floordiv)

    def __truediv__(self, other):
        raise TypeError(
            f"unsupported operand type(s) for /: 'Dimension' and '{type(other).__name__}', please use // instead"
        )

    def __rtruediv__(self, other):
        raise TypeError(
            f"unsupported operand type(s) for /: '{type(other).__name__}' and 'Dimension', please use // instead"
        )

    def __mod__(self, other):
        return _known(self, as_dimension(other), operator.mod)

    def __rmod__(self, other):
        return as_dimension(other) % self

    def __lt__(self, other):
        return _known_bool(self, as_dimension(other), operator.lt)

    def __le__(self, other):
        return _known_bool(self, as_dimension(other), operator.le)

    def __gt__(self, other):
        return _known_bool(self, as_dimension(other), operator.gt)

    def __ge__(self, other):
        return _known_bool(self, as_dimension(other), operator.ge)

    def __reduce__(self):
        return Dimension, (self._value,)


def as_dimension(value):
    """``value`` (a Dimension, an int or ``None``) as a :class:`Dimension`."""
    return value if isinstance(value, Dimension) else Dimension(value)


def dimension_value(dimension):
    """``tf.dimension_value``: a Dimension's value; an int or ``None``
    as it is."""
    return dimension.value if isinstance(dimension, Dimension) else dimension


def dimension_at_index(shape, index):
    """``tf.dimension_at_index``: dimension ``index`` of ``shape`` as a
    :class:`Dimension` (unknown for a shape of unknown rank)."""
    shape = as_shape(shape)
    if shape._dims is None:
        return Dimension(None)
    return Dimension(shape._dims[index])


class TensorShape:
    """``tf.TensorShape``: a static shape. Under TensorFlow 1's behaviour
    (feedstock's default, see :mod:`feedstock._mode`) ``shape[i]`` and
    iteration give :class:`Dimension`\\ s and shapes print ``(?, 3)``;
    under v2 tensorshape they give ints or ``None`` and print
    ``(None, 3)``. ``as_list()`` gives ints and ``None`` in both, ``dims``
    Dimensions in both (``None`` for an unknown rank)."""

    __slots__ = ("_dims",)

    def __init__(self, dims):
        # _dims: None for an unknown rank, else a list of ints and None;
        # feedstock's own code reads it, never the Dimensions.
        if dims is None:
            self._dims = None
        elif isinstance(dims, TensorShape):
            self._dims = None if dims._dims is None else list(dims._dims)
        elif isinstance(dims, (list, tuple)):
            self._dims = [as_dimension(d).value for d in dims]
        else:
            try:
                it = iter(dims)
            except TypeError:
                self._dims = [as_dimension(dims).value]
                return
            self._dims = []
            for d in it:
                try:
                    self._dims.append(as_dimension(d).value)
                except TypeError as e:
                    raise TypeError(
                        f"Failed to convert '{dims!r}' to a shape: '{d!r}'could not be converted to a dimension. "
                        "A shape should either be single dimension (e.g. 10), or an iterable of dimensions "
                        "(e.g. [1, 10, None])."
                    ) from e

    @property
    def dims(self):
        """The dimensions as :class:`Dimension`\\ s, ``None`` for an
        unknown rank (as TensorFlow's, in either mode)."""
        return None if self._dims is None else [Dimension(d) for d in self._dims]

    @property
    def ndims(self):
        return None if self._dims is None else len(self._dims)

    rank = ndims

    def as_list(self):
        """The dimensions as ints, ``None`` for an unknown one."""
        if self._dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return list(self._dims)

    def is_fully_defined(self):
        return self._dims is not None and all(d is not None for d in self._dims)

    def assert_is_fully_defined(self):
        if not self.is_fully_defined():
            raise ValueError(f"Shape {self} is not fully defined")

    def num_elements(self):
        if not self.is_fully_defined():
            return None
        return int(np.prod(self._dims, dtype=np.int64))

    def is_compatible_with(self, other):
        """Whether ``other`` may describe the same tensor."""
        return _compatible(self._dims, as_shape(other)._dims)

    def assert_is_compatible_with(self, other):
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {other} are incompatible")

    def merge_with(self, other):
        """The shape that holds what both know; ValueError if they
        differ."""
        other = as_shape(other)
        if self._dims is None:
            return other
        if other._dims is None:
            return self
        if not _compatible(self._dims, other._dims):
            raise ValueError(f"Shapes {self} and {other} are not compatible")
        return TensorShape([b if a is None else a for a, b in zip(self._dims, other._dims)])

    def concatenate(self, other):
        """This shape's dimensions followed by ``other``'s (unknown if
        either rank is)."""
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return TensorShape(None)
        return TensorShape(self._dims + other._dims)

    __add__ = concatenate

    def __radd__(self, other):
        return as_shape(other).concatenate(self)

    def with_rank(self, rank):
        """This shape, of rank ``rank`` (ValueError if it has another)."""
        try:
            return self.merge_with(TensorShape([None] * rank))
        except ValueError:
            raise ValueError("Shape %s must have rank %d" % (self, rank)) from None

    def with_rank_at_least(self, rank):
        if self._dims is not None and len(self._dims) < rank:
            raise ValueError("Shape %s must have rank at least %d" % (self, rank))
        return self

    def __len__(self):
        if self._dims is None:
            raise ValueError("Cannot take the length of shape with unknown rank.")
        return len(self._dims)

    def __bool__(self):
        """Whether the rank is known (a scalar's shape is true)."""
        return self._dims is not None

    def _dim(self, d):
        return d if _mode.v2_tensorshape() else Dimension(d)

    def __iter__(self):
        if self._dims is None:
            raise ValueError("Cannot iterate over a shape with unknown rank.")
        return iter([self._dim(d) for d in self._dims])

    def __getitem__(self, key):
        """A dimension (a :class:`Dimension`, or under v2 tensorshape an
        int or ``None``), or for a slice a TensorShape."""
        if self._dims is not None:
            if isinstance(key, slice):
                return TensorShape(self._dims[key])
            # TensorFlow indexes a tuple of sizes (v2) or a list of
            # Dimensions (v1): their IndexError and TypeError words.
            return tuple(self._dims)[key] if _mode.v2_tensorshape() else self.dims[key]
        if not isinstance(key, slice):
            return self._dim(None)
        # TensorFlow's reading of a slice of an unknown rank.
        start = 0 if key.start is None else key.start
        if key.step is not None:
            raise ValueError("Steps are not yet handled")
        if key.stop is None or start < 0 or key.stop < 0:
            return TensorShape(None)
        return TensorShape([None] * (key.stop - start))

    def __eq__(self, other):
        """Whether ``other`` (a TensorShape or what makes one) has the same
        dimensions, unknown ones matching unknown ones."""
        try:
            other = as_shape(other)
        except TypeError:
            return NotImplemented
        return self._dims == other._dims

    def __hash__(self):
        return hash(None if self._dims is None else tuple(self._dims))

    def __reduce__(self):
        return TensorShape, (self._dims,)

    def __repr__(self):
        if self._dims is None:
            return "TensorShape(None)"
        return f"TensorShape({self._dims if _mode.v2_tensorshape() else self.dims})"

    def __str__(self):
        """As TensorFlow prints a shape: ``(?, 2)`` (``(None, 2)`` under
        v2 tensorshape), ``(3,)``, ``()``, ``<unknown>``."""
        if self._dims is None:
            return "<unknown>"
        parts = [str(self._dim(d)) for d in self._dims]
        return f"({parts[0]},)" if len(parts) == 1 else f"({', '.join(parts)})"


def as_shape(shape):
    """``shape`` as a :class:`TensorShape` (itself if it is one)."""
    return shape if isinstance(shape, TensorShape) else TensorShape(shape)


def _compatible(a, b):
    """Whether two static shapes (lists of dims, ``None`` unknown; or
    ``None`` for an unknown rank) can describe the same tensor."""
    if a is None or b is None:
        return True
    return len(a) == len(b) and all(x is None or y is None or x == y for x, y in zip(a, b))


def _dim_value(d):
    """A size as a program gives it (an int, ``None``, a :class:`Dimension`)
    as an int or ``None``."""
    return d.value if isinstance(d, Dimension) else d


def _shape_arg(shape):
    """A shape argument (a TensorShape; an int or a Dimension; a sequence
    of ints, ``None`` and Dimensions; or ``None``) as a list of ints and
    ``None`` (a negative size is unknown), or ``None`` for an unknown
    rank."""
    if shape is None:
        return None
    if isinstance(shape, TensorShape):
        return None if shape._dims is None else list(shape._dims)
    if isinstance(shape, (int, np.integer, Dimension)):
        return [_dim_value(shape) if isinstance(shape, Dimension) else int(shape)]
    dims = [_dim_value(d) for d in shape]
    return [None if d is None or (isinstance(d, int) and d < 0) else int(d) for d in dims]
