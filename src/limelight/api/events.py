"""The Events API: ``POST /v1/<dataset>`` with a JSON array of events.

Checks run in the contract's order: method, key, path, size, body. Every
response carries CORS headers, since public keys are meant for browsers.
"""

from __future__ import annotations

from fastapi import FastAPI
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from limelight.api.cors import CORS_HEADERS, preflight
from limelight.api.deps import api_key, ingest_limits
from limelight.api.observe import count_ingest, count_refused_request, note_route
from limelight.api.openapi import INGEST, Operation, body, error, ok
from limelight.errors import BadRequest, ExposedError, MethodNotAllowed
from limelight.ingest.service import Origin, check_dataset, ingest_body
from limelight.runtime import Runtime
from limelight.web.access import note_error, note_reason
from limelight.web.body import read_body
from limelight.web.problems import (
    error_response,
    install_error_handlers,
    internal_error,
    json_response,
)
from limelight.web.request import EVERY_METHOD, runtime_of

ACCEPTED = {"message": "Request Accepted"}
API = "events"  # the metrics' label


def _dataset_from_path(path: str) -> str:
    parts = path.strip("/").split("/")
    if len(parts) != 2 or parts[0] != "v1":
        raise BadRequest("use the path /v1/<dataset>")
    return check_dataset(parts[1])


# A service or namespace name from a header is for every event of the request, and is
# listed and shown as a name: a longer value is a client's mistake, refused as one.
MAX_NAME_CHARACTERS = 256


def _name_header(request: Request, header: str) -> str | None:
    """The header's value read as UTF-8 (Starlette reads headers as Latin-1, which turns
    ``café`` into ``cafÃ©``), or a 400 saying why it cannot be a name."""
    value = request.headers.get(header)
    if value is None or value.isascii():
        text = value
    else:
        try:
            text = value.encode("latin-1").decode()
        except UnicodeDecodeError:
            raise BadRequest(f"{header} is not UTF-8") from None
    if text is not None and len(text) > MAX_NAME_CHARACTERS:
        raise BadRequest(f"{header} is {len(text)} characters; at most {MAX_NAME_CHARACTERS}")
    return text


def _has_body(request: Request) -> bool:
    length = request.headers.get("content-length")
    return (length is not None and length != "0") or "transfer-encoding" in request.headers


def _answer(response: Response, request: Request, body_read: bool) -> Response:
    """Add CORS, and close the connection when the body was refused unread.

    Without ``Connection: close`` the server would go on reading (and
    discarding) the rest of a refused upload to keep the connection alive.
    """
    response.headers.update(CORS_HEADERS)
    if not body_read and _has_body(request):
        response.headers["connection"] = "close"
    return response


async def events_endpoint(request: Request) -> Response:
    note_route(request, "/v1/{dataset}")
    if request.method == "OPTIONS":
        return preflight()
    body_read = False
    body = b""
    try:
        if request.method != "POST":
            raise MethodNotAllowed()
        key = await api_key(request, request.headers.get("x-api-key"))
        dataset = _dataset_from_path(request.path_params.get("path", ""))
        runtime = runtime_of(request)
        settings = runtime.settings
        body = await read_body(request, settings.max_request_bytes)
        body_read = True
        origin = Origin(
            tenant=key.tenant,
            dataset=dataset,
            service=_name_header(request, "x-service"),
            namespace=_name_header(request, "x-namespace"),
            redact_secrets=key.redact_secrets,
        )
        # Parsing and storing run off the event loop: a 6MB batch must not
        # stall the other connections, and chDB releases the GIL while inserting.
        outcome = await run_in_threadpool(
            ingest_body, runtime.ingest, origin, body, ingest_limits(runtime)
        )
    except ExposedError as exc:
        count_refused_request(API, exc.title, len(body))
        note_error(request, exc)
        return _answer(error_response(exc), request, body_read)
    except Exception as exc:
        count_refused_request(API, "internal error", len(body))
        # Answered here rather than by the app's handler so that a browser can
        # still read the (opaque) 500: it carries the CORS headers too.
        return _answer(internal_error(exc), request, body_read)
    count_ingest(API, len(body), outcome.accepted, outcome.refused, path=API)
    if outcome.invalid:
        body_out: dict[str, object] = {"message": "Bad Request", "invalid": outcome.invalid}
        if outcome.invalid_count > len(outcome.invalid):
            body_out["invalidCount"] = outcome.invalid_count
        note_reason(request, f"{outcome.invalid_count} invalid events")
        return json_response(body_out, 400, CORS_HEADERS)
    return json_response(ACCEPTED, 202, CORS_HEADERS)


# A catch-all route, which FastAPI cannot describe: its operation, for ``openapi_document``.
OPERATIONS: dict[tuple[str, str], Operation] = {
    ("/events/v1/{dataset}", "post"): {
        "tags": ["events"],
        "summary": "Send events",
        "description": "A JSON array of JSON objects (up to 100,000, 6MB uncompressed, gzip "
        "allowed). Each event is stored as sent, with system fields (`_timestamp` from its "
        "`timestamp`, `_service`, `_namespace`, `_dataset`, `_id`). The answer comes once the "
        "accepted events are on disk; invalid events are listed and the valid ones stored.",
        "security": INGEST,
        "parameters": [
            {
                "name": "dataset",
                "in": "path",
                "required": True,
                "schema": {"type": "string"},
                "description": "1-128 letters, digits, `.`, `_` or `-`.",
            },
            {"name": "x-service", "in": "header", "schema": {"type": "string", "maxLength": 256}},
            {"name": "x-namespace", "in": "header", "schema": {"type": "string", "maxLength": 256}},
        ],
        "requestBody": body(
            {"type": "array", "items": {"type": "object"}},
            [{"message": "checkout paid", "duration": 42, "timestamp": "2026-11-21T10:00:00Z"}],
        ),
        "responses": {
            **ok("Every event was stored.", ACCEPTED, "202"),
            "400": error(
                "A bad path or body; or some events are invalid (listed in `invalid`, "
                "the valid ones stored).",
                {"message": "Bad Request", "invalid": [{"index": 1, "reason": "not an object"}]},
            ),
            "401": error("Key missing, unknown or revoked."),
            "413": error("Over 6MB uncompressed."),
        },
    },
}


def create_events_app(runtime: Runtime) -> FastAPI:
    """The Events API as its own app: mounted at /events, or served alone at /."""
    app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)
    app.state.runtime = runtime
    install_error_handlers(app)
    app.router.routes.append(Route("/{path:path}", events_endpoint, methods=EVERY_METHOD))
    return app
