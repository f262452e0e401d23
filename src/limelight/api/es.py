"""Elasticsearch's bulk API at ``/es``: ``POST /es/_bulk`` and ``/es/<index>/_bulk``, one
document at ``/es/<index>/_doc``, and what shippers ask around them (``es_answers``).

A bulk request that is authenticated and parsed is answered 200 with one item per
action, as Elasticsearch answers it: Filebeat drops a whole batch on any other status,
and every shipper retries or drops items by their own status. Every answer, errors
included, carries ``X-Elastic-Product: Elasticsearch``, which Logstash and the
Elasticsearch clients check before they send. The key is the password of Basic auth,
an ``ApiKey`` or a ``Bearer`` token.
"""

from __future__ import annotations

import time
from typing import Any

import orjson
from fastapi import FastAPI
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from limelight.api.deps import ingest_limits
from limelight.api.es_answers import (
    CLUSTER_HEALTH,
    LICENSE,
    PRODUCT_HEADERS,
    ROOT,
    SETUP_KINDS,
    cat_health,
    filter_path,
    setup_answer,
)
from limelight.api.observe import count_ingest, count_refused_request, note_route
from limelight.api.openapi import Operation, Security, answer
from limelight.api.shipper_keys import API_KEY, BASIC, BEARER, shipper_key
from limelight.auth.api_keys import KeyContext
from limelight.errors import BadRequest, ExposedError, MethodNotAllowed, NotFound
from limelight.ingest.documents import DocumentsOutcome
from limelight.ingest.es_bulk import (
    CREATED,
    ERROR_TYPES,
    REFUSED_STATUS,
    ingest_bulk,
    ingest_one,
    response_items,
)
from limelight.runtime import Runtime
from limelight.web.body import read_body
from limelight.web.problems import install_error_handlers, internal_error
from limelight.web.request import EVERY_METHOD, runtime_of

API = "es_bulk"  # the metrics' label
SCHEMES = frozenset((BASIC, API_KEY, BEARER))
BODY_BYTES = "limelight.body_bytes"  # the body's size once read, for the metrics
READS = ("GET", "HEAD")
WRITES = ("POST", "PUT")

# Elasticsearch's error type for each status of a request refused whole.
_ERROR_TYPES = {
    400: "illegal_argument_exception",
    401: "security_exception",
    403: "security_exception",
    404: "resource_not_found_exception",
    405: "illegal_argument_exception",
    408: "timeout_exception",
    413: "content_too_long_exception",
    415: "media_type_header_exception",
    # What Elasticsearch answers when it cannot take more now, and shippers retry.
    429: "es_rejected_execution_exception",
}
_CHALLENGE = {"WWW-Authenticate": 'Basic realm="security", charset="UTF-8", ApiKey, Bearer'}


def es_json(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(
        orjson.dumps(body),
        status,
        {**PRODUCT_HEADERS, **(headers or {})},
        media_type="application/json",
    )


def es_error(exc: ExposedError) -> Response:
    kind = _ERROR_TYPES.get(exc.status, "exception")
    reason = exc.reason or exc.message
    cause = {"type": kind, "reason": reason}
    headers = {**exc.headers, **(_CHALLENGE if exc.status == 401 else {})}
    return es_json(
        {"error": {"root_cause": [cause], **cause}, "status": exc.status}, exc.status, headers
    )


# Shippers name a few paths (Filebeat and Logstash three); each costs a pass over the
# answer's items, so a URL's worth of them (about 4,000) held a core 15 s for one bulk
# request of 10,000 actions. Refused before anything is stored.
MAX_FILTER_PATHS = 64


def _filter_spec(request: Request) -> str | None:
    spec = request.query_params.get("filter_path")
    if spec and spec.count(",") >= MAX_FILTER_PATHS:
        raise BadRequest(f"filter_path may name at most {MAX_FILTER_PATHS} paths")
    return spec


def _answered(request: Request, body: Any) -> Response:
    """A JSON answer with the request's ``filter_path`` applied."""
    spec = _filter_spec(request)
    return es_json(filter_path(body, spec) if spec else body)


def _bulk_answer(
    runtime: Runtime,
    key: KeyContext,
    body: bytes,
    index: str | None,
    spec: str | None,
    started: float,
) -> tuple[DocumentsOutcome, bytes]:
    """Store the bulk and write its answer, off the event loop: the answer of 100,000
    actions is as many objects to build and encode."""
    limits = ingest_limits(runtime)
    items, outcome = ingest_bulk(
        runtime.ingest, key.tenant, key.redact_secrets, body, index, limits
    )
    answer: Any = {
        "took": round((time.perf_counter() - started) * 1000),
        "errors": bool(outcome.refused),
        "items": response_items(items, outcome),
    }
    return outcome, orjson.dumps(filter_path(answer, spec) if spec else answer)


async def _bulk(request: Request, index: str | None) -> Response:
    started = time.perf_counter()
    key = await shipper_key(request, SCHEMES)
    runtime = runtime_of(request)
    spec = _filter_spec(request)
    body = await read_body(request, runtime.settings.max_request_bytes)
    request.scope[BODY_BYTES] = len(body)
    outcome, answer = await run_in_threadpool(
        _bulk_answer, runtime, key, body, index, spec, started
    )
    count_ingest(API, len(body), outcome.accepted, outcome.refused, path=API)
    return Response(answer, 200, PRODUCT_HEADERS, media_type="application/json")


async def _one(request: Request, index: str, doc_id: str | None) -> Response:
    """One document (``POST /<index>/_doc``): rsyslog's omelasticsearch without bulk mode."""
    key = await shipper_key(request, SCHEMES)
    runtime = runtime_of(request)
    settings = runtime.settings
    body = await read_body(request, settings.max_request_bytes)
    request.scope[BODY_BYTES] = len(body)
    item, outcome = await run_in_threadpool(
        ingest_one,
        runtime.ingest,
        key.tenant,
        key.redact_secrets,
        body,
        index,
        doc_id,
        ingest_limits(runtime),
    )
    count_ingest(API, len(body), outcome.accepted, outcome.refused, path=API)
    (result,) = outcome.results
    if isinstance(result, str):
        return es_json({"_index": index, "_id": doc_id or result, **CREATED}, 201)
    cause = {"type": ERROR_TYPES[result.kind], "reason": result.reason}
    return es_json(
        {"error": {"root_cause": [cause], **cause}, "status": REFUSED_STATUS}, REFUSED_STATUS
    )


def _only(request: Request, methods: tuple[str, ...]) -> None:
    if request.method not in methods:
        raise MethodNotAllowed(
            f"Incorrect HTTP method for uri [{request.url.path}] and method "
            f"[{request.method}], allowed: {list(methods)}",
            headers={"Allow": ", ".join(methods)},
        )


async def _informational(request: Request, parts: list[str]) -> Response:
    """The calls around a bulk request; each needs a valid key, as Elasticsearch's do."""
    first = parts[0] if parts else ""
    if first in SETUP_KINDS and len(parts) >= 2:
        _only(request, (*READS, *WRITES, "DELETE"))
        await shipper_key(request, SCHEMES)
        return es_json(setup_answer(parts, request.method))
    _only(request, READS)
    await shipper_key(request, SCHEMES)
    if not parts:
        return es_json(ROOT)
    if parts == ["_license"]:
        return _answered(request, LICENSE)
    if parts[:2] == ["_cluster", "health"]:
        return _answered(request, CLUSTER_HEALTH)
    if parts == ["_cat", "health"]:
        json_wanted = request.query_params.get("format") == "json"
        answer = cat_health(int(time.time()), json_wanted)
        if json_wanted:
            return es_json(answer)
        return PlainTextResponse(answer, headers=PRODUCT_HEADERS)
    raise NotFound(f"no handler found for uri [{request.url.path}] and method [{request.method}]")


INGEST_ROUTE = "limelight.es_ingest"  # set on the routes that store, for the metrics
_INFO_ROUTES = {("_license",), ("_cluster", "health"), ("_cat", "health")}


def _info_label(parts: list[str]) -> str:
    """The route's name for the metrics, from a fixed set: a path's own words would give
    any client a new label per path it invents."""
    if not parts:
        return "/"
    if parts[0] in SETUP_KINDS:
        return f"/{parts[0]}/{{name}}"
    head = tuple(parts[:2]) if parts[0] == "_cluster" else tuple(parts)
    return "/" + "/".join(head) if head in _INFO_ROUTES else "/{other}"


async def _route(request: Request, parts: list[str]) -> Response:
    if parts == ["_bulk"] or (len(parts) == 2 and parts[1] == "_bulk"):
        note_route(request, "/_bulk" if len(parts) == 1 else "/{index}/_bulk")
        request.scope[INGEST_ROUTE] = True
        _only(request, WRITES)
        return await _bulk(request, parts[0] if len(parts) == 2 else None)
    if parts[-1:] in (["_refresh"], ["_flush"]):
        # Clients refresh an index after a bulk (the JavaScript client's helper does):
        # a stored event is already visible to the next query.
        note_route(request, f"/{{index}}/{parts[-1]}" if len(parts) > 1 else f"/{parts[-1]}")
        _only(request, (*READS, *WRITES))
        await shipper_key(request, SCHEMES)
        return es_json({"_shards": {"total": 1, "successful": 1, "failed": 0}})
    if len(parts) in (2, 3) and parts[1] in ("_doc", "_create") and not parts[0].startswith("_"):
        note_route(request, "/{index}/" + parts[1] + ("/{id}" if len(parts) == 3 else ""))
        request.scope[INGEST_ROUTE] = True
        _only(request, WRITES)
        return await _one(request, parts[0], parts[2] if len(parts) == 3 else None)
    # The root as /es itself is served by a route of the main app (no mount prefix).
    label = _info_label(parts) if "path" in request.path_params else "/es"
    note_route(request, label)
    return await _informational(request, parts)


async def es_endpoint(request: Request) -> Response:
    parts = [p for p in request.path_params.get("path", "").split("/") if p]
    try:
        return await _route(request, parts)
    except ExposedError as exc:
        if request.scope.get(INGEST_ROUTE):
            count_refused_request(API, exc.title, request.scope.get(BODY_BYTES, 0))
        return es_error(exc)
    except Exception as exc:
        count_refused_request(API, "internal error", request.scope.get(BODY_BYTES, 0))
        response = internal_error(exc)
        response.headers.update(PRODUCT_HEADERS)
        return response


# A catch-all route, which FastAPI cannot describe: its operations, for ``openapi_document``.
DOC_SECURITY: Security = [{"shipperBasic": []}, {"esApiKey": []}, {"shipperBearer": []}]
ES_ERROR = {
    "error": {
        "root_cause": [{"type": "security_exception", "reason": "Unauthorised"}],
        "type": "security_exception",
        "reason": "Unauthorised",
    },
    "status": 401,
}
BULK_ANSWER = {
    "took": 4,
    "errors": True,
    "items": [
        {"create": {"_index": "app", "_id": "1m8f...", "_version": 1, "result": "created",
                    "status": 201}},
        {"update": {"_index": "app", "_id": "7", "status": 400,
                    "error": {"type": "illegal_argument_exception",
                              "reason": "the update action is not supported: ..."}}},
    ],
}  # fmt: skip
BULK_BODY = (
    '{"create": {"_index": "app"}}\n{"@timestamp": "2026-11-27T12:00:00Z", "message": "hello"}\n'
)
ES_REFUSED = {
    "400": answer(
        "Not a bulk body (an action line that is not one, a missing document "
        "line); nothing is stored.",
        {**ES_ERROR, "status": 400},
    ),
    "401": answer("No key, or an unknown or revoked one.", ES_ERROR),
    "413": answer("Over 6MB uncompressed; Filebeat splits its batch.", ES_ERROR),
}


def _bulk_doc(with_index: bool) -> Operation:
    parameters: list[dict[str, Any]] = [
        {"name": "filter_path", "in": "query", "schema": {"type": "string"},
         "description": "Elasticsearch's response filter, e.g. "
         "`errors,items.*.error,items.*.status`."},
    ]  # fmt: skip
    if with_index:
        parameters.insert(
            0,
            {"name": "index", "in": "path", "required": True, "schema": {"type": "string"},
             "description": "The index (dataset) of actions without `_index`."},
        )  # fmt: skip
    return {
        "tags": ["shippers"],
        "summary": "Elasticsearch bulk" + (" into an index" if with_index else ""),
        "description": "NDJSON action and document lines, any content type, gzip allowed. "
        "`index` and `create` store their document in the dataset the index names "
        "(characters other than letters, digits, `.`, `_`, `-` become `_`, cut to 128); "
        "`update` and `delete` are refused item by item. `@timestamp` or `timestamp` is "
        "the event's time. Answered 200 once authenticated and parsed, with one item per "
        "action (201, or 400 with `error`), after the stored documents are on disk.",
        "security": DOC_SECURITY,
        "parameters": parameters,
        "requestBody": {
            "required": True,
            "content": {
                "application/x-ndjson": {"schema": {"type": "string"}, "example": BULK_BODY}
            },
        },
        "responses": {"200": answer("One item per action, in order.", BULK_ANSWER), **ES_REFUSED},
    }


def _info_doc(summary: str, example: Any, *path_names: str) -> Operation:
    return {
        "parameters": [
            {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
            for name in path_names
        ],
        "tags": ["shippers"],
        "summary": summary,
        "description": "Answered so that Elasticsearch's shippers and clients send without "
        "special settings; every `/es` answer carries `X-Elastic-Product: Elasticsearch`.",
        "security": DOC_SECURITY,
        "responses": {
            "200": answer("As Elasticsearch answers it.", example),
            "401": ES_REFUSED["401"],
        },
    }


ROOT_EXAMPLE = {"name": "limelight", "version": {"number": "8.17.0", "build_flavor": "default"},
                "tagline": "You Know, for Search"}  # fmt: skip
OPERATIONS: dict[tuple[str, str], Operation] = {
    ("/es/_bulk", "post"): _bulk_doc(False),
    ("/es/{index}/_bulk", "post"): _bulk_doc(True),
    ("/es/{index}/_doc", "post"): {
        **_bulk_doc(True),
        "summary": "One Elasticsearch document",
        "description": "One JSON document into the index's dataset (rsyslog's "
        "omelasticsearch without bulk mode): 201 once on disk, 400 if it is not one.",
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {"schema": {"type": "object"}, "example": {"message": "hello"}}
            },
        },
        "responses": {
            "201": answer("Stored.", {"_index": "app", "_id": "1m8f...", "result": "created"}),
            **ES_REFUSED,
        },
    },  # fmt: skip
    ("/es", "get"): _info_doc("Elasticsearch's root: the version clients check", ROOT_EXAMPLE),
    ("/es/_license", "get"): _info_doc("An active licence", {"license": {"status": "active"}}),
    ("/es/_cluster/health", "get"): _info_doc("Cluster health", {"status": "green"}),
    ("/es/_cat/health", "get"): _info_doc(
        "Cluster health as a row", "1764244800 limelight green 1"
    ),
    ("/es/_index_template/{name}", "get"): _info_doc(
        "Index templates: already in place (Filebeat's and Logstash's set-up has nothing to do)",
        {"index_templates": [{"name": "filebeat-8.17.0", "index_template": {}}]},
        "name",
    ),
    ("/es/_ilm/policy/{name}", "get"): _info_doc(
        "Lifecycle policies: already in place (retention is Limelight's own)",
        {"filebeat": {"policy": {"phases": {}}}},
        "name",
    ),
}


def create_es_app(runtime: Runtime) -> FastAPI:
    """The Elasticsearch-compatible API, mounted at /es."""
    app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)
    app.state.runtime = runtime
    install_error_handlers(app)
    app.router.routes.append(Route("/{path:path}", es_endpoint, methods=EVERY_METHOD))
    return app
