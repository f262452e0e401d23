"""OTLP/HTTP ingestion: ``POST /v1/traces``, ``/v1/logs``, ``/v1/metrics``.

Follows the OTLP/HTTP specification: the Export*ServiceResponse in the
request's encoding (protobuf or JSON) with ``partial_success`` when items were
rejected; errors carry a ``google.rpc.Status`` (protobuf requests) or the
project's JSON error body with the status ``code`` (other requests). When too
many requests are in flight the server answers 503 with Retry-After, which
OTLP exporters retry.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from fastapi import FastAPI
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from limelight import metrics
from limelight.api.cors import CORS_HEADERS, preflight
from limelight.api.deps import api_key, ingest_limits
from limelight.api.observe import count_ingest, count_refused_request, note_route
from limelight.api.openapi import INGEST, Operation, error
from limelight.errors import (
    ExposedError,
    MethodNotAllowed,
    NotFound,
    Unavailable,
    UnsupportedMediaType,
)
from limelight.ingest.otlp import Encoding, encoding_of, ingest_otlp, signal_for_path
from limelight.ingest.otlp.codec import encode_message, encode_status, export_response
from limelight.ingest.service import Origin, check_dataset
from limelight.runtime import Runtime
from limelight.web.access import note_error
from limelight.web.body import read_body
from limelight.web.problems import error_body, install_error_handlers, json_response
from limelight.web.request import EVERY_METHOD, runtime_of

DATASET_HEADERS = ("x-dataset", "x-baselime-dataset")
API = "otlp"  # the metrics' label
BODY_BYTES = "limelight.body_bytes"  # the body's size once read, for the metrics
RETRY_AFTER_SECONDS = 1

# gRPC status codes for the google.rpc.Status of error responses.
GRPC_CODES = {
    400: 3, 401: 16, 403: 7, 404: 5, 405: 12, 408: 4, 413: 8, 415: 3, 429: 8, 499: 1, 503: 14,
}  # fmt: skip
GRPC_INTERNAL = 13


class InFlightLimit:
    """Bounds on OTLP requests being stored at once, for the server and for each
    workspace; the rest are shed, not queued (503 with Retry-After, which OTLP
    exporters retry).

    A slot is taken once the body has been read: held while reading, 16 uploads
    that announced a body and stalled took every slot, and OTLP answered 503 to
    every tenant for as long as they stayed. The per-workspace bound keeps one
    workspace's burst from taking the slots of the others. The counters live on
    the event loop, so they need no lock.
    """

    def __init__(self, limit: int, per_workspace: int) -> None:
        self.limit = limit
        self.per_workspace = per_workspace
        self.current = 0
        self._by_workspace: dict[str, int] = {}

    @contextmanager
    def slot(self, workspace_id: str) -> Iterator[None]:
        held = self._by_workspace.get(workspace_id, 0)
        if held >= self.per_workspace:
            raise _shed(f"too many OTLP requests of this workspace in flight ({held})")
        if self.current >= self.limit:
            raise _shed("too many OTLP requests in flight")
        self.current += 1
        self._by_workspace[workspace_id] = held + 1
        metrics.OTLP_IN_FLIGHT.inc()
        try:
            yield
        finally:
            metrics.OTLP_IN_FLIGHT.dec()
            self.current -= 1
            left = self._by_workspace[workspace_id] - 1
            if left:
                self._by_workspace[workspace_id] = left
            else:
                del self._by_workspace[workspace_id]


def _shed(reason: str) -> Unavailable:
    return Unavailable(f"{reason}; retry later", retry_after=RETRY_AFTER_SECONDS)


def otlp_error(exc: ExposedError, encoding: Encoding | None) -> Response:
    headers = {**CORS_HEADERS, **exc.headers}
    code = GRPC_CODES.get(exc.status, GRPC_INTERNAL)
    if encoding is Encoding.PROTOBUF:
        status = encode_status(code, exc.reason or exc.message)
        return Response(status, exc.status, headers, media_type=Encoding.PROTOBUF.media_type)
    return json_response({**error_body(exc), "code": code}, exc.status, headers)


def _dataset(request: Request, default: str) -> str:
    for name in DATASET_HEADERS:
        value = request.headers.get(name, "").strip()
        if value:
            return check_dataset(value)
    return default


async def _export(request: Request, encoding: Encoding | None) -> Response:
    signal = signal_for_path(request.path_params.get("path", ""))
    if signal is None:
        raise NotFound("use /v1/traces, /v1/logs or /v1/metrics")
    if request.method != "POST":
        raise MethodNotAllowed(headers={"Allow": "POST, OPTIONS"})
    runtime = runtime_of(request)
    settings = runtime.settings
    key = await api_key(request, request.headers.get("x-api-key"))
    if encoding is None:
        raise UnsupportedMediaType(
            "send application/x-protobuf or application/json",
        )
    origin = Origin(
        tenant=key.tenant,
        dataset=_dataset(request, settings.otel_default_dataset),
        redact_secrets=key.redact_secrets,
    )
    body = await read_body(request, settings.max_request_bytes)
    request.scope[BODY_BYTES] = len(body)
    limit: InFlightLimit = request.app.state.otel_in_flight
    with limit.slot(key.tenant.workspace_id):
        outcome = await run_in_threadpool(
            ingest_otlp, runtime.ingest, signal, origin, body, encoding, ingest_limits(runtime)
        )
    path = f"{API}_{signal.name}"  # otlp_traces, otlp_logs, otlp_metrics
    count_ingest(API, len(body), outcome.accepted, outcome.refused, path=path)
    message = export_response(signal, outcome.rejected, outcome.message)
    return Response(
        encode_message(message, encoding), 200, CORS_HEADERS, media_type=encoding.media_type
    )


async def otlp_endpoint(request: Request) -> Response:
    note_route(request, "/v1/{signal}")
    if request.method == "OPTIONS":
        return preflight("x-baselime-dataset")
    encoding = encoding_of(request.headers.get("content-type"))
    try:
        return await _export(request, encoding)
    except ExposedError as exc:
        count_refused_request(API, exc.title, request.scope.get(BODY_BYTES, 0))
        note_error(request, exc)
        return otlp_error(exc, encoding)


OTLP_RESPONSES = {
    "200": {
        "description": "Stored; a `partial_success` names what was left out and why.",
        "content": {
            "application/x-protobuf": {"schema": {"type": "string", "format": "binary"}},
            "application/json": {"schema": {"type": "object"}, "example": {}},
        },
    },
    "400": error("The body cannot be decoded, or the dataset name is invalid."),
    "401": error("Missing or unknown key."),
    "413": error("Over the size limit, checked as it is decompressed."),
    "415": error("Another content type than protobuf or JSON."),
    "503": error("Too many OTLP requests being stored at once; retry after `Retry-After`."),
}


def _operation(signal: str) -> Operation:
    return {
        "tags": ["otlp"],
        "summary": f"Export {signal} (OTLP/HTTP)",
        "description": f"An `Export{signal.title()}ServiceRequest` in protobuf "
        "(`application/x-protobuf`) or OTLP JSON, gzip allowed. Each item becomes an "
        "event of the dataset in `x-dataset` (default `otel`).",
        "security": INGEST,
        "parameters": [
            {"name": "x-dataset", "in": "header", "schema": {"type": "string"}},
        ],
        "requestBody": {
            "required": True,
            "content": {
                "application/x-protobuf": {"schema": {"type": "string", "format": "binary"}},
                "application/json": {"schema": {"type": "object"}},
            },
        },
        "responses": OTLP_RESPONSES,
    }


# A catch-all route, which FastAPI cannot describe: its operations, for ``openapi_document``.
OPERATIONS: dict[tuple[str, str], Operation] = {
    (f"/otel/v1/{signal}", "post"): _operation(signal) for signal in ("traces", "logs", "metrics")
}


def create_otel_app(runtime: Runtime) -> FastAPI:
    """OTLP/HTTP as its own app: mounted at /otel, or served alone at /."""
    app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)
    app.state.runtime = runtime
    settings = runtime.settings
    app.state.otel_in_flight = InFlightLimit(
        settings.otel_max_in_flight, settings.otel_max_in_flight_per_workspace
    )
    install_error_handlers(app)
    app.router.routes.append(Route("/{path:path}", otlp_endpoint, methods=EVERY_METHOD))
    return app
