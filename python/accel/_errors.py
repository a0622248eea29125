"""accel's errors: one exception class per accel::Code, all derived from accel.Error.

The message is the C++ Status's text ("stale_handle: buffer #3 was freed"); the exception also carries the code's
name (``code``), the library that reported it (``source``: runtime, openblas, cuda, ...) and that library's own code
(``raw_code``). Each class's docstring repeats what the C++ code's comment says about retrying.
"""


class Error(Exception):
    """An accel request failed; see the subclass for the category."""

    code = "unknown"

    def __init__(self, message="", source="runtime", raw_code=0):
        super().__init__(message)
        self.source = source
        self.raw_code = raw_code


class InvalidArgument(Error, ValueError):
    """The request itself is wrong (shape, dtype, size, alignment, null handle). Do not retry; fix the request."""

    code = "invalid_argument"


class NotSupported(Error):
    """Well-formed, but this device or library cannot do it. Send it elsewhere or change the configuration."""

    code = "not_supported"


class FailedPrecondition(Error):
    """The system is not in a state that allows the request (e.g. the device was closed). Fix the state first."""

    code = "failed_precondition"


class ResourceExhausted(Error):
    """Out of memory, mailbox full, pool exhausted. Retry later or with less."""

    code = "resource_exhausted"


class Unavailable(Error):
    """Temporarily cannot serve (e.g. a worker is being replaced). Retry, with back-off."""

    code = "unavailable"


class Cancelled(Error):
    """Abandoned because its receiver stopped (shutdown). Do not retry on the same device."""

    code = "cancelled"


class DeadlineExceeded(Error, TimeoutError):
    """A wait or request ran past its deadline. The request may still complete."""

    code = "deadline_exceeded"


class StaleHandle(Error):
    """A buffer or other handle outlived what it named (freed, its device closed or its context rebuilt).
    Never retry with the same handle: allocate again."""

    code = "stale_handle"


class ContextLost(Error):
    """The device context is gone (sticky fault). In-process devices never come back; isolated ones do."""

    code = "context_lost"


class Internal(Error):
    """A bug or an unexpected failure inside accel."""

    code = "internal"


ERRORS = {cls.code: cls for cls in (InvalidArgument, NotSupported, FailedPrecondition, ResourceExhausted,
                                    Unavailable, Cancelled, DeadlineExceeded, StaleHandle, ContextLost, Internal)}


def from_status(code, message, source, raw_code):
    """The exception for a C++ Status (called by the module)."""
    return ERRORS.get(code, Error)(message, source, raw_code)
