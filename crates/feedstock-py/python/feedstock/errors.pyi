from typing import Any, Optional

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

OK: int
CANCELLED: int
UNKNOWN: int
INVALID_ARGUMENT: int
DEADLINE_EXCEEDED: int
NOT_FOUND: int
ALREADY_EXISTS: int
PERMISSION_DENIED: int
RESOURCE_EXHAUSTED: int
FAILED_PRECONDITION: int
ABORTED: int
OUT_OF_RANGE: int
UNIMPLEMENTED: int
INTERNAL: int
UNAVAILABLE: int
DATA_LOSS: int
UNAUTHENTICATED: int

class OpError(Exception):
    file: Optional[str]
    key: Optional[str]
    offset: Optional[int]
    field: Optional[str]
    def __init__(
        self, node_def: Any, op: Any, message: str, error_code: int = ..., *,
        file: Optional[str] = ..., key: Optional[str] = ..., offset: Optional[int] = ..., field: Optional[str] = ...,
    ) -> None: ...
    @property
    def message(self) -> str: ...
    @property
    def error_code(self) -> int: ...
    @property
    def op(self) -> Any: ...
    @property
    def node_def(self) -> Any: ...

class CancelledError(OpError): ...
class UnknownError(OpError): ...
class InvalidArgumentError(OpError): ...
class DeadlineExceededError(OpError): ...
class NotFoundError(OpError): ...
class AlreadyExistsError(OpError): ...
class PermissionDeniedError(OpError): ...
class ResourceExhaustedError(OpError): ...
class OutOfMemoryError(ResourceExhaustedError, MemoryError): ...
class FailedPreconditionError(OpError): ...
class AbortedError(OpError): ...
class OutOfRangeError(OpError): ...
class UnimplementedError(OpError): ...
class InternalError(OpError): ...
class UnavailableError(OpError): ...
class DataLossError(OpError): ...
class UnauthenticatedError(OpError): ...
class OutsideInputSystemError(AttributeError): ...

def exception_type_from_error_code(error_code: int) -> type[OpError]: ...
def error_code_from_exception_type(cls: type[OpError]) -> int: ...
