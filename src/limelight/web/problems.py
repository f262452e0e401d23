"""The one place where errors become HTTP responses.

Every JSON error body has a ``message``; an ``ExposedError`` may add a
``reason`` (one sentence for people), ``errors`` (a list naming fields) and
extra keys. Anything else is an internal error: logged here with its stack,
answered with a bare 500 that leaks nothing.
"""

from __future__ import annotations

import logging
import re
from typing import Any

import orjson
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response

from limelight.errors import BadRequest, ExposedError, Unavailable
from limelight.validation import field_errors
from limelight.web.access import note_error, note_reason

log = logging.getLogger("limelight.api")

INTERNAL = {"message": "Internal Error"}


def json_response(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(
        orjson.dumps(body), status_code=status, headers=headers, media_type="application/json"
    )


def error_body(exc: ExposedError) -> dict[str, Any]:
    body: dict[str, Any] = {"message": exc.message}
    if exc.reason and exc.reason != exc.message:
        body["reason"] = exc.reason
    if exc.errors is not None:
        body["errors"] = exc.errors
    body.update(exc.extra)
    return body


def error_response(exc: ExposedError) -> Response:
    return json_response(error_body(exc), exc.status, exc.headers)


def internal_error(exc: BaseException) -> Response:
    log.error("internal error", exc_info=exc)
    return json_response(INTERNAL, 500)


_STATUS_TITLES = {cls.status: cls for cls in ExposedError.__subclasses__()}


def framework_headers(exc: StarletteHTTPException) -> dict[str, str]:
    """The headers of a framework's HTTP error; a 503 says when to retry, as every
    ``Unavailable`` does."""
    headers = dict(exc.headers or {})
    if exc.status_code == Unavailable.status and not any(
        name.lower() == "retry-after" for name in headers
    ):
        headers["Retry-After"] = str(Unavailable().retry_after)
    return headers


_OTLP_SIGNAL = re.compile(r"/v1/(traces|logs|metrics)/?")
_ONE_NAME = re.compile(r"/v1/[^/]+/?")
_EVENTS = "events of a dataset are sent to /events/v1/<dataset>"
_SDK = "this server's address with /otel"


def _where_instead(request: Request) -> str | None:
    """For a POST to a path no route serves that a shipper's first setup often sends to
    (the server's address without its app's prefix), where it goes instead."""
    if request.method != "POST":
        return None
    path = request.url.path.rstrip("/")
    if _OTLP_SIGNAL.fullmatch(path):
        otlp = f"OTLP is served under /otel: send to /otel{path} (an SDK's endpoint is {_SDK})"
        return f"{otlp}; {_EVENTS}" if path.endswith("/logs") else otlp
    return _EVENTS if _ONE_NAME.fullmatch(path) else None


def install_error_handlers(app: FastAPI) -> None:
    async def exposed(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, ExposedError)
        note_error(request, exc)
        return error_response(exc)

    async def framework_http(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, StarletteHTTPException)
        cls = _STATUS_TITLES.get(exc.status_code)
        message = cls.title if cls else str(exc.detail)
        hint = _where_instead(request) if exc.status_code == 404 else None
        note_reason(request, hint or message)
        body = {"message": message, **({"reason": hint} if hint else {})}
        return json_response(body, exc.status_code, framework_headers(exc))

    async def request_validation(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RequestValidationError)
        errors = field_errors(exc, skip=1, root="request")
        refused = BadRequest("the request is not valid", errors=errors)
        note_error(request, refused)
        return error_response(refused)

    async def unexpected(_: Request, exc: Exception) -> Response:
        return internal_error(exc)

    app.add_exception_handler(ExposedError, exposed)
    app.add_exception_handler(StarletteHTTPException, framework_http)
    app.add_exception_handler(RequestValidationError, request_validation)
    app.add_exception_handler(Exception, unexpected)
