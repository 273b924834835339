import pickle

import pytest

from feedstock import _native, errors

KINDS = {
    "OutOfRange": (errors.OutOfRangeError, errors.OUT_OF_RANGE),
    "Cancelled": (errors.CancelledError, errors.CANCELLED),
    "InvalidArgument": (errors.InvalidArgumentError, errors.INVALID_ARGUMENT),
    "DataLoss": (errors.DataLossError, errors.DATA_LOSS),
    "NotFound": (errors.NotFoundError, errors.NOT_FOUND),
    "FailedPrecondition": (errors.FailedPreconditionError, errors.FAILED_PRECONDITION),
    "DeadlineExceeded": (errors.DeadlineExceededError, errors.DEADLINE_EXCEEDED),
    "ResourceExhausted": (errors.ResourceExhaustedError, errors.RESOURCE_EXHAUSTED),
    "PermissionDenied": (errors.PermissionDeniedError, errors.PERMISSION_DENIED),
    "Unimplemented": (errors.UnimplementedError, errors.UNIMPLEMENTED),
    "Aborted": (errors.AbortedError, errors.ABORTED),
    "Internal": (errors.InternalError, errors.INTERNAL),
    "Unknown": (errors.UnknownError, errors.UNKNOWN),
}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_each_native_kind_raises_tensorflows_class(kind):
    cls, code = KINDS[kind]
    with pytest.raises(cls) as info:
        _native.raise_error(kind, "it broke")
    assert isinstance(info.value, errors.OpError)
    assert info.value.error_code == code
    assert info.value.message == "it broke"
    assert errors.exception_type_from_error_code(code) is cls
    assert errors.error_code_from_exception_type(cls) == code


def test_context_travels_as_attributes_and_in_the_message():
    with pytest.raises(errors.DataLossError) as info:
        _native.raise_error(
            "DataLoss", "data CRC mismatch", file="a.tfrecord", key="a.tfrecord:3", offset=120, field="x"
        )
    e = info.value
    assert (e.file, e.key, e.offset, e.field) == ("a.tfrecord", "a.tfrecord:3", 120, "x")
    assert str(e) == "data CRC mismatch (file a.tfrecord, key a.tfrecord:3, offset 120, field x)"


def test_errors_pickle_with_their_context():
    e = errors.InvalidArgumentError(None, None, "bad", file="f.csv", key="f.csv:2")
    back = pickle.loads(pickle.dumps(e))
    assert type(back) is errors.InvalidArgumentError
    assert (back.message, back.file, back.key) == ("bad", "f.csv", "f.csv:2")


def test_tensorflow_constructor_signature():
    e = errors.OutOfRangeError(None, None, "done")
    assert e.node_def is None and e.op is None and str(e) == "done"
    assert errors.OpError(None, None, "x", errors.ABORTED).error_code == errors.ABORTED
