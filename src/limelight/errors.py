"""The one exception hierarchy.

Domain code raises these; ``limelight.web.problems`` turns an ``ExposedError``
into its HTTP response in one place. Anything else is an internal error and is
answered with an opaque 500.
"""

from __future__ import annotations

from typing import Any, ClassVar


class LimelightError(Exception):
    """Base of every error the project raises on purpose.

    A test (``tests/unit/test_error_hierarchy.py``) walks every module and fails on an
    exception class defined outside this hierarchy.
    """


class InvalidValue(LimelightError):
    """A value a rule refuses (a password, a logo, a redirect or destination URL).

    The message says why and is safe to show. It is not an ``ExposedError``: the code
    that checks the value makes it part of its own answer (a field's message in a 400,
    the command line's refusal), so one uncaught is a fault, answered with a 500.
    """


class ControlFlow(LimelightError):
    """Not a failure to report: a way out of a request or a transaction that the code
    around it catches and turns into its outcome (the login page, an authorization
    error page, a redirect back to an integration, a refusal looked up after a rollback).
    Never meant to reach ``web/problems.py``.
    """


class ExposedError(LimelightError):
    """An error whose message is safe to show to the client."""

    status: ClassVar[int] = 500
    title: ClassVar[str] = "Internal Error"

    def __init__(
        self,
        reason: str | None = None,
        *,
        message: str | None = None,
        errors: list[Any] | None = None,
        extra: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(reason or message or self.title)
        self.reason = reason
        # The body's "message": the status title unless the caller names one.
        self.message = message or self.title
        self.errors = errors
        self.extra = extra or {}
        self.headers = headers or {}


class BadRequest(ExposedError):
    status = 400
    title = "Bad Request"


class Unauthorised(ExposedError):
    status = 401
    title = "Unauthorised"


class Forbidden(ExposedError):
    status = 403
    title = "Forbidden"


class NotFound(ExposedError):
    status = 404
    title = "Not Found"


class MethodNotAllowed(ExposedError):
    status = 405
    title = "Method Not Allowed"


class RequestTimeout(ExposedError):
    status = 408
    title = "Request Timeout"


class Conflict(ExposedError):
    status = 409
    title = "Conflict"


class Gone(ExposedError):
    status = 410
    title = "Gone"


class PayloadTooLarge(ExposedError):
    status = 413
    title = "Payload Too Large"


class UnsupportedMediaType(ExposedError):
    status = 415
    title = "Unsupported Media Type"


class ClientClosedRequest(ExposedError):
    """The client closed its connection before its request's body had all arrived.

    No answer can reach it: 499 (nginx's status for this) is only what the access log
    and the HTTP metrics record, so a client that goes away is not counted as a failure
    of the server (a 500 with its traceback, for every request anyone cuts short).
    """

    status = 499
    title = "Client Closed Request"


class RateLimited(ExposedError):
    status = 429
    title = "Too Many Requests"

    def __init__(self, retry_after: int, reason: str | None = None) -> None:
        super().__init__(reason, headers={"Retry-After": str(max(1, retry_after))})
        self.retry_after = retry_after


class Unavailable(ExposedError):
    """The server cannot take the request now. Every 503 says when to try again
    (``Retry-After``, in seconds): exporters and proxies retry a 503 only when told when,
    and a client left to guess retries at once, onto the same full queue."""

    status = 503
    title = "Service Unavailable"

    def __init__(self, reason: str | None = None, *, retry_after: int = 1) -> None:
        super().__init__(reason, headers={"Retry-After": str(max(1, retry_after))})
        self.retry_after = retry_after


class StoreError(LimelightError):
    """The events store failed; never shown to clients in detail.

    ``code`` is ClickHouse's numeric error code when the engine gave one (the
    same for chDB and a server), read once where the store meets the engine.
    """

    def __init__(self, message: str, code: int | None = None) -> None:
        super().__init__(message)
        self.code = code
