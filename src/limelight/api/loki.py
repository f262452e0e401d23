"""Loki's push API at ``/loki/api/v1/push``: JSON (``application/json``), or protobuf
compressed with snappy (any other content type, as Loki reads it).

Answered as Loki answers: 204 once every entry is on disk; 400 with the reason as text
when the body cannot be decoded (nothing stored), or when some entries were refused
(the others are stored: a shipper does not send a 400 again); 401 without a valid key
(the password of Basic auth, or a ``Bearer`` token); 413 over the size limit.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from limelight.api.deps import ingest_limits
from limelight.api.observe import count_ingest, count_refused_request, note_route
from limelight.api.openapi import Operation
from limelight.api.shipper_keys import BASIC, BEARER, shipper_key
from limelight.errors import ExposedError, MethodNotAllowed, NotFound
from limelight.ingest.loki import ingest_push
from limelight.ingest.service import check_dataset
from limelight.runtime import Runtime
from limelight.web.body import read_body
from limelight.web.problems import install_error_handlers, internal_error
from limelight.web.request import EVERY_METHOD, runtime_of

API = "loki"  # the metrics' label
PUSH_PATH = "api/v1/push"
SCHEMES = frozenset((BASIC, BEARER))
BODY_BYTES = "limelight.body_bytes"
DATASET_HEADER = "x-dataset"


def _is_json(content_type: str | None) -> bool:
    media = (content_type or "").split(";", 1)[0].strip().lower()
    return media == "application/json"


def _dataset(request: Request) -> str | None:
    value = request.headers.get(DATASET_HEADER, "").strip()
    return check_dataset(value) if value else None


async def _push(request: Request) -> Response:
    if request.method != "POST":
        raise MethodNotAllowed(headers={"Allow": "POST"})
    key = await shipper_key(request, SCHEMES)
    runtime = runtime_of(request)
    settings = runtime.settings
    dataset = _dataset(request)
    body = await read_body(request, settings.max_request_bytes)
    request.scope[BODY_BYTES] = len(body)
    result = await run_in_threadpool(
        ingest_push,
        runtime.ingest,
        key.tenant,
        key.redact_secrets,
        body,
        not _is_json(request.headers.get("content-type")),
        dataset,
        ingest_limits(runtime),
        settings.max_request_bytes,
    )
    outcome = result.outcome
    count_ingest(API, len(body), outcome.accepted, outcome.refused, path=API)
    if result.message:
        return PlainTextResponse(result.message + "\n", 400)
    return Response(status_code=204)


async def loki_endpoint(request: Request) -> Response:
    note_route(request, "/api/v1/push")
    try:
        if request.path_params.get("path", "").strip("/") != PUSH_PATH:
            note_route(request, "/{other}")
            raise NotFound("use POST /loki/api/v1/push")
        return await _push(request)
    except ExposedError as exc:
        count_refused_request(API, exc.title, request.scope.get(BODY_BYTES, 0))
        return PlainTextResponse((exc.reason or exc.message) + "\n", exc.status, exc.headers)
    except Exception as exc:
        count_refused_request(API, "internal error", request.scope.get(BODY_BYTES, 0))
        return internal_error(exc)


LOKI_PUSH = {"streams": [{"stream": {"service_name": "api", "dataset": "logs"},
                          "values": [["1764244800000000000", "GET /cart 200",
                                      {"trace_id": "5b8e..."}]]}]}  # fmt: skip


def _text(description: str, example: str) -> dict[str, Any]:
    content = {"text/plain": {"schema": {"type": "string"}, "example": example}}
    return {"description": description, "content": content}


# A catch-all route, which FastAPI cannot describe: its operation, for ``openapi_document``.
OPERATIONS: dict[tuple[str, str], Operation] = {
    ("/loki/api/v1/push", "post"): {
        "tags": ["shippers"],
        "summary": "Loki push",
        "description": "`application/json` (`{\"streams\": [{\"stream\", \"values\"}]}`, or "
        "the form before Loki 0.4), or `logproto.PushRequest` protobuf compressed with snappy "
        "(any other content type). Each line is an event with its labels and structured "
        "metadata as keys and its time; a line that is a JSON object is the event. The "
        "dataset is `x-dataset`, else the stream's `dataset` label, else `logs`; the service "
        "is the label `service_name`, else `service`, else `job`.",
        "security": [{"shipperBasic": []}, {"shipperBearer": []}],
        "parameters": [{"name": "x-dataset", "in": "header", "schema": {"type": "string"}}],
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {"schema": {"type": "object"}, "example": LOKI_PUSH},
                "application/x-protobuf": {"schema": {"type": "string", "format": "binary"}},
            },
        },
        "responses": {
            "204": {"description": "Every entry is on disk."},
            "400": _text("The body cannot be decoded (nothing stored), or some entries were "
                         "refused (the others stored).",
                         "1 of 3 entries refused; entry 1: the event is 300014 bytes; ..."),
            "401": _text("No key, or an unknown or revoked one.", "Unauthorised"),
            "413": _text("Over 6MB uncompressed (snappy's declared length is checked first).",
                         "the request body is over 6291456 bytes uncompressed"),
        },
    },
}  # fmt: skip


def create_loki_app(runtime: Runtime) -> FastAPI:
    """Loki's push API, mounted at /loki."""
    app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)
    app.state.runtime = runtime
    install_error_handlers(app)
    app.router.routes.append(Route("/{path:path}", loki_endpoint, methods=EVERY_METHOD))
    return app
