"""``tf.train.Example`` and its parts, serialized as TensorFlow does.

The classes mirror the protobuf messages of
``tensorflow/core/example/{example,feature}.proto``: construct them with
keyword arguments, read and change them through attributes
(``ex.features.feature["label"].int64_list.value``), and turn them into
bytes with ``SerializeToString`` and back with ``FromString`` /
``ParseFromString``. The bytes are those TensorFlow's deterministic
serialization writes (features in sorted name order, numeric lists
packed); the encoding is done by feedstock's native ``proto`` module.
No protobuf runtime is needed.
"""

from __future__ import annotations

import struct

from . import _native

__all__ = [
    "BytesList",
    "FloatList",
    "Int64List",
    "Feature",
    "Features",
    "Example",
]

_NONE, _BYTES, _FLOAT, _INT64 = 0, 1, 2, 3


def _check_bytes(v):
    if isinstance(v, str):
        return v.encode("utf-8")
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v)
    raise TypeError(f"{v!r} has type {type(v).__name__}, but expected one of: bytes")


_F32 = struct.Struct("<f")


def _check_float(v):
    if isinstance(v, (bytes, str)):
        raise TypeError(f"{v!r} has type {type(v).__name__}, but expected one of: int, float")
    # A float field holds an f32: round as protobuf does on assignment.
    return _F32.unpack(_F32.pack(float(v)))[0]


def _check_int64(v):
    if isinstance(v, bool) or not hasattr(v, "__index__"):
        if isinstance(v, bool):
            return int(v)
        raise TypeError(f"{v!r} has type {type(v).__name__}, but expected one of: int")
    i = v.__index__()
    if not -(2**63) <= i < 2**63:
        raise ValueError(f"Value out of range: {i}")
    return i


class _Repeated(list):
    """A list that checks and converts what is put in it, like protobuf's
    repeated scalar fields."""

    __slots__ = ("_check",)

    def __init__(self, check, values=()):
        self._check = check
        super().__init__(check(v) for v in values)

    def append(self, v):
        super().append(self._check(v))

    def extend(self, values):
        super().extend(self._check(v) for v in values)

    def insert(self, i, v):
        super().insert(i, self._check(v))

    def __setitem__(self, i, v):
        if isinstance(i, slice):
            super().__setitem__(i, [self._check(x) for x in v])
        else:
            super().__setitem__(i, self._check(v))

    def __iadd__(self, values):
        self.extend(values)
        return self

    def __reduce__(self):
        return (list, (list(self),))


class _Message:
    """What every message class shares."""

    __slots__ = ()

    def SerializeToString(self, deterministic=True):  # noqa: N802 (protobuf's name)
        """The message's wire bytes."""
        return self._encode()

    def SerializePartialToString(self, deterministic=True):  # noqa: N802
        """Same as :meth:`SerializeToString` (no required fields exist)."""
        return self._encode()

    @classmethod
    def FromString(cls, data):  # noqa: N802
        """A new message parsed from ``data``."""
        m = cls()
        m.ParseFromString(data)
        return m

    def ParseFromString(self, data):  # noqa: N802
        """Replaces this message's content with ``data`` parsed. Returns
        the number of bytes read."""
        self.Clear()
        self.MergeFromString(data)
        return len(data)

    def MergeFromString(self, data):  # noqa: N802
        """Merges ``data`` parsed into this message."""
        other = type(self)()
        other._decode(bytes(data))
        self.MergeFrom(other)
        return len(data)

    def CopyFrom(self, other):  # noqa: N802
        """Makes this message a copy of ``other``."""
        if other is self:
            return
        self.Clear()
        self.MergeFrom(other)

    def ByteSize(self):  # noqa: N802
        """The length of the serialized message."""
        return len(self._encode())

    def __eq__(self, other):
        if type(other) is not type(self):
            return NotImplemented
        return self._encode() == other._encode()

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = None

    def __reduce__(self):
        return (type(self).FromString, (self._encode(),))


class _List(_Message):
    __slots__ = ("value",)
    _check = staticmethod(lambda v: v)

    def __init__(self, value=None):
        self.value = _Repeated(self._check, value or ())

    def __setattr__(self, name, v):
        if name == "value" and not isinstance(v, _Repeated):
            raise AttributeError(
                "Assignment not allowed to repeated field \"value\" in protocol message object."
            )
        object.__setattr__(self, name, v)

    def Clear(self):  # noqa: N802
        """Empties the list."""
        del self.value[:]

    def MergeFrom(self, other):  # noqa: N802
        """Appends ``other``'s values."""
        self.value.extend(other.value)

    def _encode(self):
        # A list message is field 1 of a Feature: encode the Feature and
        # strip its tag and length.
        return _strip_field(_native.encode_feature(self._kind, self.value))

    def _decode(self, data):
        # Wrap as the Feature field this list is, then decode that.
        kind, values = _native.decode_feature(_field(self._kind, data))
        self.value.extend(values)

    def __repr__(self):
        return f"{type(self).__name__}(value={list(self.value)!r})"

    def __str__(self):
        return "".join(f"value: {_text_scalar(v)}\n" for v in self.value)


class BytesList(_List):
    """``tf.train.BytesList``: a list of byte strings (``str`` is stored
    as its UTF-8 encoding)."""

    __slots__ = ()
    _kind = _BYTES
    _check = staticmethod(_check_bytes)


class FloatList(_List):
    """``tf.train.FloatList``: a list of 32-bit floats."""

    __slots__ = ()
    _kind = _FLOAT
    _check = staticmethod(_check_float)


class Int64List(_List):
    """``tf.train.Int64List``: a list of 64-bit integers."""

    __slots__ = ()
    _kind = _INT64
    _check = staticmethod(_check_int64)


_LIST_CLASSES = {_BYTES: BytesList, _FLOAT: FloatList, _INT64: Int64List}
_KIND_NAMES = {_BYTES: "bytes_list", _FLOAT: "float_list", _INT64: "int64_list"}
_NAME_KINDS = {v: k for k, v in _KIND_NAMES.items()}


class Feature(_Message):
    """``tf.train.Feature``: one of ``bytes_list``, ``float_list`` or
    ``int64_list`` (a protobuf ``oneof`` named ``kind``).

    Reading a list that is not set gives an empty one; changing it sets
    it, clearing the other, as protobuf does.
    """

    __slots__ = ("_kind", "_list")

    def __init__(self, bytes_list=None, float_list=None, int64_list=None):
        object.__setattr__(self, "_kind", _NONE)
        object.__setattr__(self, "_list", None)
        given = [
            (k, v)
            for k, v in ((_BYTES, bytes_list), (_FLOAT, float_list), (_INT64, int64_list))
            if v is not None
        ]
        if len(given) > 1:
            raise ValueError("a Feature holds one of bytes_list, float_list, int64_list")
        for kind, v in given:
            self._set(kind, v)

    def _set(self, kind, v):
        cls = _LIST_CLASSES[kind]
        if isinstance(v, cls):
            lst = cls(v.value)
        elif isinstance(v, dict):
            lst = cls(**v)
        else:
            raise TypeError(f"expected {cls.__name__}, got {type(v).__name__}")
        object.__setattr__(self, "_kind", kind)
        object.__setattr__(self, "_list", lst)

    def _get(self, kind):
        if self._kind == kind:
            return self._list
        return _LazyList(self, kind)

    bytes_list = property(lambda self: self._get(_BYTES), doc="The ``BytesList``.")
    float_list = property(lambda self: self._get(_FLOAT), doc="The ``FloatList``.")
    int64_list = property(lambda self: self._get(_INT64), doc="The ``Int64List``.")

    def __setattr__(self, name, v):
        raise AttributeError(
            f"Assignment not allowed to field \"{name}\" in protocol message object."
        )

    def WhichOneof(self, oneof_group):  # noqa: N802
        """``"bytes_list"``, ``"float_list"``, ``"int64_list"`` or ``None``."""
        if oneof_group != "kind":
            raise ValueError(f'Protocol message has no oneof "{oneof_group}" field.')
        return _KIND_NAMES.get(self._kind)

    def HasField(self, name):  # noqa: N802
        """Whether the list ``name`` (or any, for ``"kind"``) is set."""
        if name == "kind":
            return self._kind != _NONE
        if name not in _NAME_KINDS:
            raise ValueError(f'Protocol message Feature has no field "{name}".')
        return self._kind == _NAME_KINDS[name]

    def ClearField(self, name):  # noqa: N802
        """Clears the list ``name`` if it is the one set."""
        if name == "kind" or self.HasField(name):
            self.Clear()

    def Clear(self):  # noqa: N802
        """Unsets the list."""
        object.__setattr__(self, "_kind", _NONE)
        object.__setattr__(self, "_list", None)

    def MergeFrom(self, other):  # noqa: N802
        """Protobuf's merge: a list of the same kind is extended, another
        kind replaces."""
        if other._kind == _NONE:
            return
        if self._kind == other._kind:
            self._list.MergeFrom(other._list)
        else:
            self._set(other._kind, other._list)

    def _encode(self):
        return _native.encode_feature(self._kind, self._list.value if self._list else ())

    def _decode(self, data):
        kind, values = _native.decode_feature(data)
        if kind != _NONE:
            self._set(kind, _LIST_CLASSES[kind](values))

    def __repr__(self):
        if self._kind == _NONE:
            return "Feature()"
        return f"Feature({_KIND_NAMES[self._kind]}={self._list!r})"

    def __str__(self):
        if self._kind == _NONE:
            return ""
        inner = _indent(str(self._list))
        return f"{_KIND_NAMES[self._kind]} {{\n{inner}}}\n"


class _LazyList:
    """The empty list a Feature returns for a kind it does not hold; the
    first change to it makes it the Feature's list."""

    __slots__ = ("_feature", "_kind")

    def __init__(self, feature, kind):
        self._feature = feature
        self._kind = kind

    def _materialize(self):
        f = self._feature
        if f._kind != self._kind:
            f._set(self._kind, _LIST_CLASSES[self._kind]())
        return f._list

    @property
    def value(self):
        f = self._feature
        if f._kind == self._kind:
            return f._list.value
        return _LazyRepeated(self)

    def __eq__(self, other):
        return _LIST_CLASSES[self._kind]() == other

    def __repr__(self):
        return f"{_LIST_CLASSES[self._kind].__name__}(value=[])"


class _LazyRepeated(list):
    """An empty ``value`` whose first append sets the list in its Feature."""

    def __init__(self, lazy):
        super().__init__()
        self._lazy = lazy

    def append(self, v):
        self._lazy._materialize().value.append(v)

    def extend(self, values):
        self._lazy._materialize().value.extend(values)

    def __iadd__(self, values):
        self.extend(values)
        return self._lazy._materialize().value


class _FeatureMap(dict):
    """``Features.feature``: a map that, like protobuf's message maps,
    creates an empty Feature when a missing name is read."""

    def __missing__(self, key):
        f = Feature()
        self[key] = f
        return f

    def __setitem__(self, key, value):
        if not isinstance(key, str):
            raise TypeError(f"feature names are str, got {type(key).__name__}")
        if not isinstance(value, Feature):
            raise TypeError(f"expected Feature, got {type(value).__name__}")
        super().__setitem__(key, value)

    def get_or_create(self, key):
        """The feature ``key``, created empty if missing."""
        return self[key]


class Features(_Message):
    """``tf.train.Features``: features by name (``feature``, a dict)."""

    __slots__ = ("feature",)

    def __init__(self, feature=None):
        m = _FeatureMap()
        for k, v in (feature or {}).items():
            m[k] = v if isinstance(v, Feature) else Feature(**v)
        object.__setattr__(self, "feature", m)

    def __setattr__(self, name, v):
        raise AttributeError(
            f"Assignment not allowed to map, or repeated field \"{name}\" in protocol message object."
        )

    def Clear(self):  # noqa: N802
        """Removes every feature."""
        self.feature.clear()

    def MergeFrom(self, other):  # noqa: N802
        """Protobuf's map merge: ``other``'s entries replace same-named ones."""
        for k, v in other.feature.items():
            f = Feature()
            f.MergeFrom(v)
            self.feature[k] = f

    def _entries(self):
        return [(k, f._kind, f._list.value if f._list else ()) for k, f in self.feature.items()]

    def _encode(self):
        return _native.encode_features(self._entries())

    def _decode(self, data):
        _fill(self, _native.decode_features(data))

    def __repr__(self):
        return f"Features(feature={dict(self.feature)!r})"

    def __str__(self):
        out = []
        for k in sorted(self.feature):
            body = _indent(f'key: "{k}"\nvalue {{\n{_indent(str(self.feature[k]))}}}\n')
            out.append(f"feature {{\n{body}}}\n")
        return "".join(out)


def _fill(features, entries):
    for name, kind, values in entries:
        f = Feature()
        if kind != _NONE:
            f._set(kind, _LIST_CLASSES[kind](values))
        features.feature[name] = f


class Example(_Message):
    """``tf.train.Example``: one training example (``features``)."""

    __slots__ = ("_features",)

    def __init__(self, features=None):
        if features is not None and not isinstance(features, Features):
            features = Features(**features) if isinstance(features, dict) else features
            if not isinstance(features, Features):
                raise TypeError(f"expected Features, got {type(features).__name__}")
        object.__setattr__(self, "_features", features)

    @property
    def features(self):
        """The example's features (created empty on first access, as
        protobuf's sub-messages are)."""
        if self._features is None:
            object.__setattr__(self, "_features", Features())
        return self._features

    def __setattr__(self, name, v):
        raise AttributeError(
            f"Assignment not allowed to composite field \"{name}\" in protocol message object."
        )

    def HasField(self, name):  # noqa: N802
        """Whether ``features`` is set."""
        if name != "features":
            raise ValueError(f'Protocol message Example has no field "{name}".')
        return self._features is not None

    def Clear(self):  # noqa: N802
        """Unsets ``features``."""
        object.__setattr__(self, "_features", None)

    def MergeFrom(self, other):  # noqa: N802
        """Merges ``other``'s features into this one's."""
        if other._features is not None:
            self.features.MergeFrom(other._features)

    def _encode(self):
        if self._features is None:
            return _native.encode_example(None)
        return _native.encode_example(self._features._entries())

    def _decode(self, data):
        entries = _native.decode_example(data)
        if entries is not None:
            _fill(self.features, entries)

    def __repr__(self):
        return f"Example(features={self._features!r})"

    def __str__(self):
        if self._features is None:
            return ""
        return f"features {{\n{_indent(str(self._features))}}}\n"


def _indent(text):
    return "".join("  " + line + "\n" for line in text.splitlines())


def _text_scalar(v):
    if isinstance(v, bytes):
        return '"' + "".join(
            chr(b) if 32 <= b < 127 and b not in (34, 92) else f"\\{b:03o}" for b in v
        ) + '"'
    return repr(v)


def _varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _field(number, payload):
    """A length-delimited field ``number`` holding ``payload``."""
    return bytes([(number << 3) | 2]) + _varint(len(payload)) + payload


def _strip_field(data):
    """The payload of the one length-delimited field ``data`` holds."""
    if not data:
        return b""
    i = 1
    while data[i] & 0x80:
        i += 1
    return data[i + 1 :]
