"""Splunk's HTTP Event Collector at ``/services/collector``: ``/event`` (and the
collector's own address, and ``/event/1.0``), ``/raw``, and the health check.

Answers are Splunk's: ``{"text": "Success", "code": 0}`` once every event is on disk;
a refused event is answered with its code and ``invalid-event-number`` (the first one
refused), and the others of the request are stored; the key is ``Splunk <key>`` (or the
password of Basic auth, or ``Bearer``). Acknowledgements are not offered: the answer
itself says the events are on disk.
"""

from __future__ import annotations

from fastapi import FastAPI
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from limelight.api.deps import api_key, ingest_limits
from limelight.api.observe import count_ingest, count_refused_request, note_route
from limelight.api.openapi import Operation, Security, answer
from limelight.api.shipper_keys import BASIC, BEARER, SPLUNK, key_from_authorization
from limelight.auth.api_keys import KeyContext
from limelight.errors import ExposedError, Unauthorised
from limelight.ingest.hec import (
    ACK_DISABLED,
    BUSY,
    DEFAULT_DATASET,
    HEALTHY,
    INCORRECT_INDEX,
    INTERNAL,
    INVALID_AUTHORIZATION,
    INVALID_DATA,
    INVALID_TOKEN,
    METADATA_KEYS,
    SUCCESS,
    TOKEN_REQUIRED,
    HecError,
    HecOutcome,
    dataset_of,
    ingest_events,
    ingest_raw,
)
from limelight.ingest.service import check_dataset
from limelight.runtime import Runtime
from limelight.web.body import read_body
from limelight.web.problems import install_error_handlers, internal_error, json_response
from limelight.web.request import EVERY_METHOD, runtime_of

API = "splunk_hec"  # the metrics' label
SCHEMES = frozenset((SPLUNK, BASIC, BEARER))
BODY_BYTES = "limelight.body_bytes"
DATASET_HEADER = "x-dataset"
EVENT_PATHS = {"", "event", "event/1.0"}
RAW_PATHS = {"raw", "raw/1.0"}
HEALTH_PATHS = {"health", "health/1.0"}
_TITLES = {401: "Unauthorised", 403: "Forbidden", 405: "Method Not Allowed"}
NOT_FOUND = {"text": "The requested URL was not found on this server.", "code": 404}


def hec_answer(answer: tuple[int, int, str], **extra: object) -> Response:
    status, code, text = answer
    return json_response({"text": text, "code": code, **extra}, status)


def hec_error(exc: ExposedError) -> Response:
    if isinstance(exc, HecError):
        return json_response({"text": exc.message, **exc.extra}, exc.http_status, exc.headers)
    # Over a limit (429) is Splunk's "server is busy" too: try again after Retry-After.
    code = {429: BUSY[1], 503: BUSY[1], 500: INTERNAL[1]}.get(exc.status, INVALID_DATA[1])
    return json_response({"text": exc.reason or exc.message, "code": code}, exc.status, exc.headers)


async def hec_key(request: Request) -> KeyContext:
    """The key, or Splunk's answer: no token, an unreadable header, an unknown token."""
    header = request.headers.get("authorization")
    if header is None:
        value = request.headers.get("x-api-key")
        if value is None:
            raise HecError(TOKEN_REQUIRED)
    else:
        value = key_from_authorization(header, SCHEMES)
        if value is None:
            raise HecError(INVALID_AUTHORIZATION)
    try:
        return await api_key(request, value)
    except Unauthorised:
        raise HecError(INVALID_TOKEN) from None


def _default_dataset(request: Request) -> str:
    value = request.headers.get(DATASET_HEADER, "").strip()
    return check_dataset(value) if value else DEFAULT_DATASET


async def _store(request: Request, raw: bool) -> Response:
    if request.method != "POST":
        raise HecError((405, 6, "Method not allowed; use POST"))
    key = await hec_key(request)
    runtime = runtime_of(request)
    settings = runtime.settings
    default = _default_dataset(request)
    body = await read_body(request, settings.max_request_bytes)
    request.scope[BODY_BYTES] = len(body)
    limits = ingest_limits(runtime)
    result: HecOutcome
    if raw:
        dataset = dataset_of(request.query_params.get("index"), default)
        if not isinstance(dataset, str):
            raise HecError(INCORRECT_INDEX)
        params = request.query_params
        metadata = {k: params[k] for k in METADATA_KEYS if params.get(k)}
        result = await run_in_threadpool(
            ingest_raw, runtime.ingest, key.tenant, key.redact_secrets, body, dataset, metadata,
            limits,
        )  # fmt: skip
    else:
        result = await run_in_threadpool(
            ingest_events, runtime.ingest, key.tenant, key.redact_secrets, body, default, limits
        )
    outcome = result.outcome
    count_ingest(API, len(body), outcome.accepted, outcome.refused, path=API)
    if result.refused is not None:
        return hec_error(result.refused)
    return hec_answer(SUCCESS)


async def _health(request: Request) -> Response:
    """Healthy; a token sent along is checked, and an unknown one is a 400 (what Vector's
    health check reads as "invalid token")."""
    if request.headers.get("authorization") is not None:
        try:
            await hec_key(request)
        except HecError:
            return hec_answer((400, INVALID_TOKEN[1], INVALID_TOKEN[2]))
    return hec_answer(HEALTHY)


async def hec_endpoint(request: Request) -> Response:
    path = request.path_params.get("path", "").strip("/")
    try:
        if path in EVENT_PATHS:
            # The collector's own address is a route of the main app (no mount prefix).
            direct = "path" not in request.path_params
            note_route(request, "/services/collector" if direct else "/event")
            return await _store(request, raw=False)
        if path in RAW_PATHS:
            note_route(request, "/raw")
            return await _store(request, raw=True)
        if path in HEALTH_PATHS:
            note_route(request, "/health")
            return await _health(request)
        if path.split("/")[0] == "ack":
            note_route(request, "/ack")
            return hec_answer(ACK_DISABLED)
        note_route(request, "/{other}")
        return json_response(NOT_FOUND, 404)
    except ExposedError as exc:
        status = exc.http_status if isinstance(exc, HecError) else exc.status
        title = _TITLES.get(status, exc.title)
        count_refused_request(API, title, request.scope.get(BODY_BYTES, 0))
        return hec_error(exc)
    except Exception as exc:
        count_refused_request(API, "internal error", request.scope.get(BODY_BYTES, 0))
        internal_error(exc)  # logged there, with its stack
        return hec_answer(INTERNAL)


DOC_SECURITY: Security = [{"splunkToken": []}, {"shipperBasic": []}, {"shipperBearer": []}]


def _store_doc(summary: str, description: str, content_type: str, example: str) -> Operation:
    return {
        "tags": ["shippers"],
        "summary": summary,
        "description": description,
        "security": DOC_SECURITY,
        "parameters": [
            {
                "name": DATASET_HEADER,
                "in": "header",
                "schema": {"type": "string"},
                "description": f"The dataset of events without an index (`{DEFAULT_DATASET}`).",
            }
        ],
        "requestBody": {
            "required": True,
            "content": {content_type: {"schema": {"type": "string"}, "example": example}},
        },
        "responses": {
            "200": answer("Every event is on disk.", {"text": "Success", "code": 0}),
            "400": answer(
                "No data (5), invalid data format (6), incorrect index (7), event "
                "field required (12) or blank (13): for a refused event, the "
                "others of the request are stored and `invalid-event-number` "
                "names the first refused.",
                {"text": "Incorrect index", "code": 7, "invalid-event-number": 1},
            ),
            "401": answer(
                "Token is required (2), invalid authorization (3).",
                {"text": "Token is required", "code": 2},
            ),
            "403": answer("Invalid token (4).", {"text": "Invalid token", "code": 4}),
        },
    }


EVENTS_DOC = _store_doc(
    "Splunk HEC events",
    "JSON objects one after another (or one a line), gzip allowed: `event` is the event (an "
    "object as it is, anything else as `message`), `time` (epoch seconds) its time, `host`, "
    "`source`, `sourcetype` and `fields` its keys, `index` its dataset.",
    "application/json",
    '{"event": {"action": "login"}, "time": 1764244800.5, "index": "app"}'
    '{"event": "plain text", "fields": {"region": "eu"}}',
)
# Catch-all routes, which FastAPI cannot describe: their operations, for ``openapi_document``.
OPERATIONS: dict[tuple[str, str], Operation] = {
    ("/services/collector", "post"): EVENTS_DOC,
    ("/services/collector/event", "post"): EVENTS_DOC,
    ("/services/collector/raw", "post"): _store_doc(
        "Splunk HEC raw lines",
        "One event a line (a line that is a JSON object keeps its fields); the query's "
        "`index`, `host`, `source` and `sourcetype` apply to every line.",
        "text/plain",
        "GET /cart 200\nGET /pay 500\n",
    ),
    ("/services/collector/health", "get"): {
        "tags": ["shippers"],
        "summary": "Splunk HEC health",
        "description": "Healthy; a token sent along is checked (400, code 4, when unknown). "
        "`/services/collector/health/1.0` answers alike.",
        "responses": {
            "200": answer("Healthy.", {"text": "HEC is healthy", "code": 17}),
            "400": answer("The token sent is unknown.", {"text": "Invalid token", "code": 4}),
        },
    },
}


def create_hec_app(runtime: Runtime) -> FastAPI:
    """Splunk's HTTP Event Collector, mounted at /services/collector."""
    app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)
    app.state.runtime = runtime
    install_error_handlers(app)
    app.router.routes.append(Route("/{path:path}", hec_endpoint, methods=EVERY_METHOD))
    return app
