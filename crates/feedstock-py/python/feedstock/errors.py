"""Exceptions with TensorFlow's class names, raised by feedstock.

Every failure of the native engine arrives as an :class:`OpError` subclass
named as TensorFlow names it (``OutOfRangeError``, ``InvalidArgumentError``,
``DataLossError``, ...), so ``except tf.errors.OutOfRangeError:`` works
unchanged. Besides TensorFlow's ``message`` and ``error_code``, each error
carries where it happened: ``file``, ``key`` (``FILE:RECORD``), ``offset``
(bytes into the file, or into its decompressed stream) and ``field`` (the
feature or column), each ``None`` when unknown.
"""

from __future__ import annotations

__all__ = [
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
    "OpError",
    "CancelledError",
    "UnknownError",
    "InvalidArgumentError",
    "DeadlineExceededError",
    "NotFoundError",
    "AlreadyExistsError",
    "PermissionDeniedError",
    "ResourceExhaustedError",
    "OutOfMemoryError",
    "FailedPreconditionError",
    "AbortedError",
    "OutOfRangeError",
    "UnimplementedError",
    "InternalError",
    "UnavailableError",
    "DataLossError",
    "UnauthenticatedError",
    "OutsideInputSystemError",
    "exception_type_from_error_code",
    "error_code_from_exception_type",
]

# TensorFlow's status codes (tensorflow/core/protobuf/error_codes.proto).
OK = 0
CANCELLED = 1
UNKNOWN = 2
INVALID_ARGUMENT = 3
DEADLINE_EXCEEDED = 4
NOT_FOUND = 5
ALREADY_EXISTS = 6
PERMISSION_DENIED = 7
RESOURCE_EXHAUSTED = 8
FAILED_PRECONDITION = 9
ABORTED = 10
OUT_OF_RANGE = 11
UNIMPLEMENTED = 12
INTERNAL = 13
UNAVAILABLE = 14
DATA_LOSS = 15
UNAUTHENTICATED = 16


class OpError(Exception):
    """A failure of the pipeline, with TensorFlow's status code.

    ``node_def`` and ``op`` exist for TensorFlow compatibility; feedstock
    sets ``op`` to the symbolic tensor or operation whose evaluation failed
    when it knows it, and ``node_def`` to ``None``.
    """

    def __init__(
        self,
        node_def,
        op,
        message,
        error_code=UNKNOWN,
        *,
        file=None,
        key=None,
        offset=None,
        field=None,
    ):
        super().__init__(message)
        self._node_def = node_def
        self._op = op
        self._message = message
        self._error_code = error_code
        self.file = file
        self.key = key
        self.offset = offset
        self.field = field

    @property
    def message(self):
        """The error message, with the file, key, offset and field."""
        return self._message

    @property
    def error_code(self):
        """TensorFlow's integer status code."""
        return self._error_code

    @property
    def op(self):
        """The operation that failed, if known."""
        return self._op

    @property
    def node_def(self):
        """Always ``None``: feedstock has no NodeDef protos."""
        return self._node_def

    def __str__(self):
        return self._message

    def __reduce__(self):
        return (
            _rebuild,
            (
                type(self),
                self._message,
                self.file,
                self.key,
                self.offset,
                self.field,
            ),
        )


def _rebuild(cls, message, file, key, offset, field):
    return cls(None, None, message, file=file, key=key, offset=offset, field=field)


_CODE_TO_CLASS = {}


def _subclass(name, code, doc):
    def __init__(self, node_def, op, message, *args, **kwargs):
        # TensorFlow's subclasses take (node_def, op, message); a fourth
        # positional argument is accepted and ignored as TF's are.
        OpError.__init__(self, node_def, op, message, code, **kwargs)

    cls = type(name, (OpError,), {"__init__": __init__, "__doc__": doc})
    cls.__module__ = __name__
    _CODE_TO_CLASS[code] = cls
    return cls


CancelledError = _subclass(
    "CancelledError", CANCELLED, "An operation was cancelled (a queue closed with cancel_pending_enqueues, a stop)."
)
UnknownError = _subclass("UnknownError", UNKNOWN, "An error with no better classification.")
InvalidArgumentError = _subclass(
    "InvalidArgumentError", INVALID_ARGUMENT, "The input is malformed: a bad CSV field, a wrong dtype or shape."
)
DeadlineExceededError = _subclass(
    "DeadlineExceededError", DEADLINE_EXCEEDED, "A timeout expired before the operation completed."
)
NotFoundError = _subclass("NotFoundError", NOT_FOUND, "A file or pattern was not found.")
AlreadyExistsError = _subclass("AlreadyExistsError", ALREADY_EXISTS, "An entity already exists.")
PermissionDeniedError = _subclass(
    "PermissionDeniedError", PERMISSION_DENIED, "Permission to read or write was denied."
)
ResourceExhaustedError = _subclass(
    "ResourceExhaustedError", RESOURCE_EXHAUSTED, "A limit was hit, such as a record over the maximum length."
)


class OutOfMemoryError(ResourceExhaustedError, MemoryError):
    """Memory for a tensor could not be had: an output sized by a value
    (``tf.tile`` multiples, a ``tf.one_hot`` depth, a batch of long
    records) that memory cannot hold. TensorFlow raises
    :class:`ResourceExhaustedError` ("OOM when allocating tensor"); this
    is one, and a Python ``MemoryError`` too, so either ``except``
    catches it."""


FailedPreconditionError = _subclass(
    "FailedPreconditionError",
    FAILED_PRECONDITION,
    "The system is not in a state to run the operation (e.g. queue runners never started).",
)
AbortedError = _subclass("AbortedError", ABORTED, "The operation was aborted.")
OutOfRangeError = _subclass(
    "OutOfRangeError", OUT_OF_RANGE, "The input is exhausted: the clean end of a pipeline's epochs."
)
UnimplementedError = _subclass("UnimplementedError", UNIMPLEMENTED, "The operation is not supported.")
InternalError = _subclass("InternalError", INTERNAL, "An invariant of feedstock did not hold (a bug).")
UnavailableError = _subclass("UnavailableError", UNAVAILABLE, "A service is unavailable.")
DataLossError = _subclass("DataLossError", DATA_LOSS, "Stored data is corrupt or truncated (a CRC mismatch, a cut file).")
UnauthenticatedError = _subclass("UnauthenticatedError", UNAUTHENTICATED, "The request lacks credentials.")


class OutsideInputSystemError(AttributeError):
    """A name TensorFlow has and ``feedstock.compat.v1`` does not
    (``tf.nn.conv2d``, ``tf.layers.dense``, ``tf.train.AdamOptimizer``,
    ...), or a misspelt one: the message says that feedstock covers the
    input system, how to give its batches (numpy arrays) to a model, and
    the nearest names it has.

    An ``AttributeError`` rather than a ``NotImplementedError`` on
    purpose: ``hasattr(tf, "nn")`` and ``getattr(tf, name, default)`` keep
    answering instead of raising, as feature checks, ``inspect``,
    ``unittest.mock`` and pickling expect of a module."""


def exception_type_from_error_code(error_code):
    """The exception class for a TensorFlow status code."""
    return _CODE_TO_CLASS[error_code]


def error_code_from_exception_type(cls):
    """The TensorFlow status code of an exception class."""
    for code, c in _CODE_TO_CLASS.items():
        if c is cls:
            return code
    raise KeyError(cls)
