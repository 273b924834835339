"""``tf.train.Example``, ``tf.train.SequenceExample`` and their parts,
serialized as TensorFlow does.

The classes mirror the protobuf messages of
``tensorflow/core/example/{example,feature}.proto``: construct them with
keyword arguments, read and change them through attributes
(``ex.features.feature["label"].int64_list.value``,
``seq.feature_lists.feature_list["tokens"].feature.add()``), and turn
them into bytes with ``SerializeToString`` and back with ``FromString`` /
``ParseFromString``. The bytes are those TensorFlow's deterministic
serialization writes (features in sorted name order, numeric lists
packed, every map entry with both its key and its value); the encoding
is done by feedstock's native ``proto`` module. No protobuf runtime is
needed.
"""

from __future__ import annotations

import math
import struct

from . import _native

__all__ = [
    "BytesList",
    "FloatList",
    "Int64List",
    "Feature",
    "Features",
    "Example",
    "FeatureList",
    "FeatureLists",
    "SequenceExample",
]

_NONE, _BYTES, _FLOAT, _INT64 = 0, 1, 2, 3


def _check_bytes(v):
    # TensorFlow's protobuf takes bytes only: a str, bytearray or
    # memoryview is a TypeError.
    if isinstance(v, bytes):
        return bytes(v)
    if isinstance(v, (str, bytearray, memoryview)):
        raise TypeError(f"expected bytes, {type(v).__name__} found")
    raise TypeError(f"{v!r} has type {type(v).__name__}, but expected one of: bytes")


_F32 = struct.Struct("<f")


def _check_float(v):
    if isinstance(v, (bytes, str)):
        raise TypeError(f"{v!r} has type {type(v).__name__}, but expected one of: int, float")
    # A float field holds an f32: round as protobuf does on assignment;
    # beyond float32's range that is an infinity.
    f = float(v)
    try:
        return _F32.unpack(_F32.pack(f))[0]
    except OverflowError:
        return math.copysign(math.inf, f)


def _check_int64(v):
    if isinstance(v, bool):
        raise TypeError("Field tensorflow.Int64List.value: Expected an int, got a boolean.")
    if not hasattr(v, "__index__"):
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
        self.value = _Repeated(self._check, () if value is None else value)

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

    def _entry(self):
        """``(kind, values)``, the form the native encoder takes."""
        return self._kind, (self._list.value if self._list else ())

    @classmethod
    def _from_entry(cls, kind, values):
        """A Feature from the native decoder's ``(kind, values)``."""
        f = cls()
        if kind != _NONE:
            f._set(kind, _LIST_CLASSES[kind](values))
        return f

    def _encode(self):
        return _native.encode_feature(*self._entry())

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


def _coerce(cls, v):
    """``v`` as a new message of class ``cls``: a copy of a ``cls``, or
    ``cls(**v)`` for a dict, as protobuf's constructors take them."""
    if isinstance(v, cls):
        m = cls()
        m.MergeFrom(v)
        return m
    if isinstance(v, dict):
        return cls(**v)
    raise TypeError(
        "Parameter to initialize message field must be dict or instance of same class: "
        f"expected {cls.__name__} got {type(v).__name__}."
    )


class _MessageMap(dict):
    """A protobuf map of messages (``Features.feature``,
    ``FeatureLists.feature_list``). Like protobuf's, reading a missing
    name creates an empty message; any change counts as writing the
    message that holds the map."""

    def __init__(self, owner, value_cls):
        super().__init__()
        self._owner = owner
        self._value_cls = value_cls

    def __missing__(self, key):
        v = self._value_cls()
        self[key] = v
        return v

    def __setitem__(self, key, value):
        if not isinstance(key, str):
            raise TypeError(f"map keys are str, got {type(key).__name__}")
        if not isinstance(value, self._value_cls):
            raise TypeError(f"expected {self._value_cls.__name__}, got {type(value).__name__}")
        self._owner._mark_set()
        super().__setitem__(key, value)

    def get_or_create(self, key):
        """The entry ``key``, created empty if missing."""
        return self[key]


class _MapMessage(_Message):
    """A message whose one field is a map of messages: ``Features`` and
    ``FeatureLists``.

    Held by another message (``Example.features``), it is created empty
    when first read and counts as set only once changed, as protobuf's
    sub-messages do: reading ``ex.features`` alone leaves ``ex`` empty.
    """

    __slots__ = ("_map", "_set")
    _value_cls = None
    _field_name = None

    def __init__(self, entries=None):
        object.__setattr__(self, "_set", True)
        object.__setattr__(self, "_map", _MessageMap(self, self._value_cls))
        for k, v in (entries or {}).items():
            self._map[k] = _coerce(self._value_cls, v)

    @classmethod
    def _unset(cls):
        """An empty message, not yet set in the message holding it."""
        m = cls()
        object.__setattr__(m, "_set", False)
        return m

    def _mark_set(self):
        object.__setattr__(self, "_set", True)

    def _present(self):
        """Whether the message holding this one writes it."""
        return self._set or bool(self._map)

    def __setattr__(self, name, v):
        raise AttributeError(
            f"Assignment not allowed to map, or repeated field \"{name}\" in protocol message object."
        )

    def Clear(self):  # noqa: N802
        """Removes every entry."""
        self._mark_set()
        self._map.clear()

    def MergeFrom(self, other):  # noqa: N802
        """Protobuf's map merge: ``other``'s entries replace same-named ones."""
        self._mark_set()
        for k, v in other._map.items():
            self._map[k] = _coerce(self._value_cls, v)

    def __repr__(self):
        return f"{type(self).__name__}({self._field_name}={dict(self._map)!r})"

    def __str__(self):
        out = []
        for k in sorted(self._map):
            body = _indent(f'key: "{k}"\nvalue {{\n{_indent(str(self._map[k]))}}}\n')
            out.append(f"{self._field_name} {{\n{body}}}\n")
        return "".join(out)


class Features(_MapMessage):
    """``tf.train.Features``: features by name (``feature``, a dict)."""

    __slots__ = ()
    _value_cls = Feature
    _field_name = "feature"

    def __init__(self, feature=None):
        super().__init__(feature)

    feature = property(lambda self: self._map, doc="The features by name.")

    def _entries(self):
        return [(k, *f._entry()) for k, f in self._map.items()]

    def _fill(self, entries):
        """Adds the native decoder's ``(name, kind, values)`` entries."""
        self._mark_set()
        for name, kind, values in entries:
            self._map[name] = Feature._from_entry(kind, values)

    def _encode(self):
        return _native.encode_features(self._entries())

    def _decode(self, data):
        self._fill(_native.decode_features(data))


class _RepeatedMessages(list):
    """A repeated message field (``FeatureList.feature``): ``add()``
    appends a new message and returns it; ``append``, ``extend`` and
    ``insert`` store copies, as protobuf does."""

    __slots__ = ("_cls",)

    def __init__(self, cls):
        super().__init__()
        self._cls = cls

    def _copy(self, v):
        if not isinstance(v, self._cls):
            raise TypeError(f"Expected a message object, but got {v!r}.")
        return _coerce(self._cls, v)

    def add(self, **kwargs):
        """Appends a new message made from ``kwargs`` and returns it."""
        m = self._cls(**kwargs)
        super().append(m)
        return m

    def append(self, v):
        super().append(self._copy(v))

    def extend(self, values):
        super().extend([self._copy(v) for v in values])

    def insert(self, i, v):
        super().insert(i, self._copy(v))

    def __setitem__(self, i, v):
        raise TypeError("does not support assignment")

    def __iadd__(self, values):
        self.extend(values)
        return self

    def __reduce__(self):
        return (list, (list(self),))


class FeatureList(_Message):
    """``tf.train.FeatureList``: a sequence of features, one per step
    (``feature``, a list: ``feature.add(int64_list=...)``)."""

    __slots__ = ("_feature",)

    def __init__(self, feature=None):
        object.__setattr__(self, "_feature", _RepeatedMessages(Feature))
        for v in feature or ():
            list.append(self._feature, _coerce(Feature, v))

    feature = property(lambda self: self._feature, doc="The steps.")

    def __setattr__(self, name, v):
        raise AttributeError(
            f"Assignment not allowed to map, or repeated field \"{name}\" in protocol message object."
        )

    def Clear(self):  # noqa: N802
        """Removes every step."""
        del self._feature[:]

    def MergeFrom(self, other):  # noqa: N802
        """Appends ``other``'s steps."""
        self._feature.extend(other._feature)

    def _steps(self):
        return [f._entry() for f in self._feature]

    def _fill(self, steps):
        """Appends the native decoder's ``(kind, values)`` steps."""
        for kind, values in steps:
            list.append(self._feature, Feature._from_entry(kind, values))

    def _encode(self):
        return _native.encode_feature_list(self._steps())

    def _decode(self, data):
        self._fill(_native.decode_feature_list(data))

    def __repr__(self):
        return f"FeatureList(feature={list(self._feature)!r})"

    def __str__(self):
        return "".join(f"feature {{\n{_indent(str(f))}}}\n" for f in self._feature)


class FeatureLists(_MapMessage):
    """``tf.train.FeatureLists``: feature lists by name (``feature_list``,
    a dict)."""

    __slots__ = ()
    _value_cls = FeatureList
    _field_name = "feature_list"

    def __init__(self, feature_list=None):
        super().__init__(feature_list)

    feature_list = property(lambda self: self._map, doc="The feature lists by name.")

    def _entries(self):
        return [(k, fl._steps()) for k, fl in self._map.items()]

    def _fill(self, entries):
        """Adds the native decoder's ``(name, steps)`` entries."""
        self._mark_set()
        for name, steps in entries:
            fl = FeatureList()
            fl._fill(steps)
            self._map[name] = fl

    def _encode(self):
        return _native.encode_feature_lists(self._entries())

    def _decode(self, data):
        self._fill(_native.decode_feature_lists(data))


class _MessageField:
    """A singular message field (``Example.features``). Read while unset,
    it gives an empty message that the holder writes only once it is
    changed, as in protobuf."""

    def __init__(self, cls, doc):
        self._cls = cls
        self.__doc__ = doc

    def __set_name__(self, owner, name):
        self._slot = "_" + name

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        m = getattr(obj, self._slot)
        if m is None:
            m = self._cls._unset()
            object.__setattr__(obj, self._slot, m)
        return m


class _Holder(_Message):
    """A message whose fields are singular messages: ``Example`` and
    ``SequenceExample``. ``_fields`` maps each field's name to its class."""

    __slots__ = ()
    _fields = {}

    def _init_fields(self, **given):
        for name, cls in self._fields.items():
            v = given[name]
            object.__setattr__(self, "_" + name, None if v is None else _coerce(cls, v))

    def _present(self, name):
        """The field ``name``'s message if it is set, else ``None``."""
        m = getattr(self, "_" + name)
        return m if m is not None and m._present() else None

    def _entries_of(self, name):
        m = self._present(name)
        return None if m is None else m._entries()

    def __setattr__(self, name, v):
        raise AttributeError(
            f"Assignment not allowed to message field \"{name}\" in protocol message object."
        )

    def HasField(self, name):  # noqa: N802
        """Whether the field ``name`` is set."""
        if name not in self._fields:
            raise ValueError(f'Protocol message {type(self).__name__} has no "{name}" field.')
        return self._present(name) is not None

    def ClearField(self, name):  # noqa: N802
        """Unsets the field ``name``."""
        if name not in self._fields:
            raise ValueError(f'Protocol message {type(self).__name__} has no "{name}" field.')
        object.__setattr__(self, "_" + name, None)

    def Clear(self):  # noqa: N802
        """Unsets every field."""
        for name in self._fields:
            object.__setattr__(self, "_" + name, None)

    def MergeFrom(self, other):  # noqa: N802
        """Merges each of ``other``'s set fields into this one's."""
        for name in self._fields:
            m = other._present(name)
            if m is not None:
                getattr(self, name).MergeFrom(m)

    def _fill_field(self, name, entries):
        if entries is not None:
            getattr(self, name)._fill(entries)

    def __repr__(self):
        fields = ", ".join(f"{n}={self._present(n)!r}" for n in self._fields)
        return f"{type(self).__name__}({fields})"

    def __str__(self):
        out = []
        for name in self._fields:
            m = self._present(name)
            if m is not None:
                out.append(f"{name} {{\n{_indent(str(m))}}}\n")
        return "".join(out)


class Example(_Holder):
    """``tf.train.Example``: one training example (``features``)."""

    __slots__ = ("_features",)
    _fields = {"features": Features}

    def __init__(self, features=None):
        self._init_fields(features=features)

    features = _MessageField(Features, "The example's features.")

    def _encode(self):
        return _native.encode_example(self._entries_of("features"))

    def _decode(self, data):
        self._fill_field("features", _native.decode_example(data))


class SequenceExample(_Holder):
    """``tf.train.SequenceExample``: features of the whole sequence
    (``context``) and features per step (``feature_lists``)."""

    __slots__ = ("_context", "_feature_lists")
    _fields = {"context": Features, "feature_lists": FeatureLists}

    def __init__(self, context=None, feature_lists=None):
        self._init_fields(context=context, feature_lists=feature_lists)

    context = _MessageField(Features, "Features of the whole sequence.")
    feature_lists = _MessageField(FeatureLists, "Features per step, by name.")

    def _encode(self):
        return _native.encode_sequence_example(
            self._entries_of("context"), self._entries_of("feature_lists")
        )

    def _decode(self, data):
        context, feature_lists = _native.decode_sequence_example(data)
        self._fill_field("context", context)
        self._fill_field("feature_lists", feature_lists)


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
