"""Loki's push API at ``/loki/api/v1/push``: JSON (``application/json``), or protobuf
compressed with snappy (any other content type, as Loki reads it).

Answered as Loki answers: 204 once every entry is on disk; 400 with the reason as text
when the body cannot be decoded (nothing stored), or when some entries were refused
(the others are stored: a shipper does not send a 400 again); 401 without a valid key
(the password of Basic auth, or a ``Bearer`` token); 413 over the size limit.
"""

from __future__ import annotations

from fastapi import FastAPI
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from limelight.api.deps import ingest_limits
from limelight.api.observe import count_ingest, count_refused_request, note_route
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
        ingest_limits(settings),
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


def create_loki_app(runtime: Runtime) -> FastAPI:
    """Loki's push API, mounted at /loki."""
    app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)
    app.state.runtime = runtime
    install_error_handlers(app)
    app.router.routes.append(Route("/{path:path}", loki_endpoint, methods=EVERY_METHOD))
    return app
