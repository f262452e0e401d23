"""The OpenAPI document of the whole HTTP API, served at ``/openapi.json``.

FastAPI describes the routes it types (their path and query parameters); most
endpoints read their bodies themselves (the contract's error shapes, size and
time limits), and the Events API, OTLP and OAuth are catch-all routes that
answer 405 for any other method. So what FastAPI cannot see is written here,
per operation: request bodies (schemas from the same pydantic models that
validate them), responses with examples, and who may call. The document is
built once per app.
"""

from __future__ import annotations

import json
from importlib.metadata import version
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from pydantic.json_schema import models_json_schema

from limelight.alerts.spec import AlertFields
from limelight.api import openapi_shippers
from limelight.api.query_runs import RunBody
from limelight.boards import BoardFields
from limelight.query.spec import QueryFields
from limelight.query.traces import TraceSearch

Operation = dict[str, Any]

DESCRIPTION = """\
Limelight's HTTP API: send events (the Events API and OTLP/HTTP), save and run
queries, watch them with alerts, browse datasets, and let third-party
applications in through OAuth. Each API lives at its base address
(`events_url`, `queries_url`, `auth_url`, `otel_url`, all under
`LIMELIGHT_PUBLIC_URL`); on one server they are the paths below.

Errors are `{"message": <status title>, "reason"?: <why>, "errors"?: [{"field",
"message"}]}`; an unexpected fault is a 500 with no detail.
"""

SECURITY_SCHEMES = {
    "adminKey": {
        "type": "apiKey",
        "in": "header",
        "name": "Authorization",
        "description": "An admin key (`ll_sk_...`), bare or as `Bearer <key>`; "
        "`x-api-key` works too. An ingest key is refused with 403.",
    },
    "ingestKey": {
        "type": "apiKey",
        "in": "header",
        "name": "x-api-key",
        "description": "An ingest key (`ll_pk_...`) or an admin key of the environment.",
    },
    "accessToken": {
        "type": "http",
        "scheme": "bearer",
        "description": "An OAuth access token (`ll_at_...`) from `/oauth/token`.",
    },
}
ADMIN: list[dict[str, list[str]]] = [{"adminKey": []}]
INGEST: list[dict[str, list[str]]] = [{"ingestKey": []}]

ERROR = {"$ref": "#/components/schemas/Error"}
ERROR_SCHEMA = {
    "type": "object",
    "required": ["message"],
    "properties": {
        "message": {"type": "string", "description": "The status's title."},
        "reason": {"type": "string", "description": "Why, when it can be said."},
        "errors": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"field": {"type": "string"}, "message": {"type": "string"}},
            },
        },
    },
}


def _json(example: Any, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"application/json": {"schema": schema or {"type": "object"}, "example": example}}


def _ok(description: str, example: Any, status: str = "200") -> dict[str, Any]:
    return {status: {"description": description, "content": _json(example)}}


def _error(description: str, example: Any | None = None) -> dict[str, Any]:
    content = {"application/json": {"schema": ERROR}}
    if example is not None:
        content["application/json"]["example"] = example
    return {"description": description, "content": content}


def _body(schema: str | dict[str, Any], example: Any) -> dict[str, Any]:
    """A JSON request body: ``schema`` a component's name or a schema."""
    if isinstance(schema, str):
        schema = {"$ref": f"#/components/schemas/{schema}"}
    return {"required": True, "content": _json(example, schema)}


KEYED = {
    "400": _error("A bad field, named in `errors`."),
    "401": _error("No key, or an unknown or revoked one.", {"message": "Unauthorised"}),
    "403": _error("An ingest key: this needs an admin key."),
}
MANAGED_ID_TAKEN = _error("`managed_id` already names another resource of its type here.")
FOUND = {**KEYED, "404": _error("Not in the key's environment (another's is as unknown).")}

QUERY = {
    "name": "slow checkouts",
    "namespaces": [{"type": "service", "value": "checkout"}],
    "calculations": [{"operator": "P99", "key": "duration"}, {"operator": "COUNT"}],
    "filters": [{"key": "duration", "operation": ">", "value": 100}],
    "group_bys": [{"key": "data.userId", "type": "string"}],
    "orders": [{"key": "P99(duration)", "type": "number", "order": "DESCENDING"}],
}
SAVED_QUERY = {
    **QUERY,
    "id": "1m7z5f0k2x9c3a1b2c3",
    "created_at": "2026-11-21T10:00:00.000Z",
    "updated_at": "2026-11-21T10:00:00.000Z",
    "author": "1m7y0a9b8c7d6e5f4g3",
}
PANELS: list[dict[str, Any]] = [
    {"query_id": "1m7z5f0k2x9c3a1b2c3", "title": "p99", "visualization": "line", "width": 2},
    {"query_id": "1m7z6a1b2c3d4e5f6g7", "title": "", "visualization": "number", "width": 1},
]
BOARD = {"name": "Checkout", "description": "what the checkout team watches", "panels": PANELS}
SAVED_BOARD = {
    "id": "1m8c0d1e2f3g4h5i6j7",
    "name": BOARD["name"],
    "description": BOARD["description"],
    "panels": [{"id": f"1m8c0d1e2f3g4h5i6k{i}", **panel} for i, panel in enumerate(PANELS)],
    "created_at": "2026-11-21T10:00:00.000Z",
    "updated_at": "2026-11-21T10:00:00.000Z",
    "author": "1m7y0a9b8c7d6e5f4g3",
}
ALERT = {
    "name": "slow checkouts",
    "query_id": "1m7z5f0k2x9c3a1b2c3",
    "calculation": "P99(duration)",
    "threshold": {"operation": ">", "value": 500},
    "frequency": "1m",
    "window": "5m",
    "renotify": "1h",
    "destinations": [
        {"type": "webhook", "url": "https://ops.example.com/limelight"},
        {"type": "email", "to": ["oncall@example.com"]},
    ],
}
FULL_ALERT = {
    **ALERT,
    "id": "1m8a0b1c2d3e4f5g6h7",
    "description": "",
    "enabled": True,
    "state": "OK",
    "last_checked_at": "2026-11-21T10:05:00.000Z",
    "created_at": "2026-11-21T10:00:00.000Z",
    "updated_at": "2026-11-21T10:00:00.000Z",
    "author": "1m7y0a9b8c7d6e5f4g3",
}
NOTIFICATION = {
    "type": "webhook",
    "target": "ops.example.com",
    "ok": True,
    "status": 200,
    "error": None,
    "tries": 1,
    "pending": False,
}
RUN = {
    "query_run": {
        "id": "1m80a1b2c3d4e5f6g7h",
        "query_id": "1m7z5f0k2x9c3a1b2c3",
        "from": 1763683200000,
        "to": 1763686800000,
        "limit": 100,
        "offset": 0,
        "granularity": 60000,
        "status": "COMPLETED",
    },
    "data": {
        "aggregates": [
            {"groups": {"data.userId": "u-1"}, "values": {"P99(duration)": 412.5, "COUNT": 31}}
        ],
        "series": [{"time": 1763683200000, "data": []}],
        "statistics": {"elapsed": 0.012, "rows_read": 52311, "bytes_read": 1893020},
    },
}
OAUTH_ERROR = {
    "description": "An RFC 6749 error, never cached.",
    "content": _json({"error": "invalid_grant", "message": "the code has expired"}),
}
OTLP_RESPONSES = {
    "200": {
        "description": "Stored; a `partial_success` names what was left out and why.",
        "content": {
            "application/x-protobuf": {"schema": {"type": "string", "format": "binary"}},
            "application/json": {"schema": {"type": "object"}, "example": {}},
        },
    },
    "400": _error("The body cannot be decoded, or the dataset name is invalid."),
    "401": _error("Missing or unknown key."),
    "413": _error("Over the size limit, checked as it is decompressed."),
    "415": _error("Another content type than protobuf or JSON."),
    "503": _error("Too many OTLP requests being stored at once; retry after `Retry-After`."),
}


AUTHORIZE_PARAMETERS = (
    ("response_type", "`code`"),
    ("client_id", "the Client ID (`clientId` is accepted too)"),
    ("redirect_uri", "optional; exactly the registered redirect URL"),
    ("state", "a random value the integration keeps and checks on return"),
    ("code_challenge", "optional PKCE (RFC 7636)"),
    ("code_challenge_method", "`S256` only"),
)


def _otlp(signal: str) -> Operation:
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


# What FastAPI cannot see, by (path, method); merged over what it generates.
OPERATIONS: dict[tuple[str, str], Operation] = {
    ("/health", "get"): {
        "tags": ["operations"],
        "summary": "Is the server up",
        "description": "For load balancers and orchestrators; needs no key.",
        "responses": _ok("Serving.", {"status": "ok"}),
    },
    ("/metrics", "get"): {
        "tags": ["operations"],
        "summary": "Prometheus metrics",
        "description": "Prometheus' text format, for the clients `LIMELIGHT_METRICS_ALLOW` "
        "names (loopback by default); anyone else gets a 404.",
        "responses": {
            "200": {"description": "The metrics.", "content": {"text/plain": {}}},
            "404": {"description": "Not a client allowed to read metrics."},
        },
    },
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
            {"name": "x-service", "in": "header", "schema": {"type": "string"}},
            {"name": "x-namespace", "in": "header", "schema": {"type": "string"}},
        ],  # fmt: skip
        "requestBody": _body(
            {"type": "array", "items": {"type": "object"}},
            [{"message": "checkout paid", "duration": 42, "timestamp": "2026-11-21T10:00:00Z"}],
        ),
        "responses": {
            **_ok("Every event was stored.", {"message": "Request Accepted"}, "202"),
            "400": _error(
                "A bad path or body; or some events are invalid (listed in `invalid`, "
                "the valid ones stored).",
                {"message": "Bad Request", "invalid": [{"index": 1, "reason": "not an object"}]},
            ),
            "401": _error("Key missing, unknown or revoked."),
            "413": _error("Over 6MB uncompressed."),
        },
    },
    ("/v1/events", "get"): {
        "tags": ["events"],
        "summary": "The newest events",
        "security": ADMIN,
        "responses": {
            **_ok("Newest first.", {"events": [{"message": "checkout paid"}], "count": 1}),
            **KEYED,
        },
    },
    ("/otel/v1/traces", "post"): _otlp("traces"),
    ("/otel/v1/logs", "post"): _otlp("logs"),
    ("/otel/v1/metrics", "post"): _otlp("metrics"),
    ("/v1/queries", "post"): {
        "tags": ["queries"],
        "summary": "Save a query",
        "security": ADMIN,
        "requestBody": _body("QueryFields", QUERY),
        "responses": {
            **_ok("Saved.", {"query": {"id": "1m7z5f0k2x9c3a1b2c3"}}),
            **KEYED,
            "409": MANAGED_ID_TAKEN,
        },
    },
    ("/v1/queries", "get"): {
        "tags": ["queries"],
        "summary": "Every saved query of the environment",
        "security": ADMIN,
        "responses": {**_ok("The queries.", {"queries": [SAVED_QUERY]}), **KEYED},
    },
    ("/v1/queries/{query_id}", "get"): {
        "tags": ["queries"],
        "summary": "A saved query",
        "security": ADMIN,
        "responses": {**_ok("The query.", {"query": SAVED_QUERY}), **FOUND},
    },
    ("/v1/queries/{query_id}", "put"): {
        "tags": ["queries"],
        "summary": "Change a saved query (the fields sent)",
        "security": ADMIN,
        "requestBody": _body("QueryFields", {"name": "p99 of checkouts"}),
        "responses": {**_ok("The query as it now is.", {"query": SAVED_QUERY}), **FOUND},
    },
    ("/v1/queries/{query_id}", "delete"): {
        "tags": ["queries"],
        "summary": "Delete a saved query",
        "description": "403 naming the alert when an alert uses it, or the boards that show it.",
        "security": ADMIN,
        "responses": {**_ok("Deleted.", {"query": {"id": "1m7z5f0k2x9c3a1b2c3"}}), **FOUND},
    },
    ("/v1/boards", "post"): {
        "tags": ["boards"],
        "summary": "Create a board",
        "description": "Panels are drawn in the order given, each `width` columns of a "
        "4-column grid (1 to 4, default 2); `visualization` is one of `line`, `bars`, "
        "`heatmap`, `number`, `table` (default `line`); an empty `title` shows the query's "
        "name. Every `query_id` is a saved query of the key's environment (400 otherwise).",
        "security": ADMIN,
        "requestBody": _body("BoardFields", BOARD),
        "responses": {
            **_ok("Created.", {"board": {"id": SAVED_BOARD["id"]}}),
            **KEYED,
            "409": MANAGED_ID_TAKEN,
        },
    },
    ("/v1/boards", "get"): {
        "tags": ["boards"],
        "summary": "Every board of the environment, oldest first",
        "security": ADMIN,
        "responses": {**_ok("The boards.", {"boards": [SAVED_BOARD]}), **KEYED},
    },
    ("/v1/boards/{board_id}", "get"): {
        "tags": ["boards"],
        "summary": "A board and its panels",
        "security": ADMIN,
        "responses": {**_ok("The board.", {"board": SAVED_BOARD}), **FOUND},
    },
    ("/v1/boards/{board_id}", "put"): {
        "tags": ["boards"],
        "summary": "Change a board (the fields sent)",
        "description": "`panels`, when sent, is the whole new list (panel ids sent are "
        "ignored); `null` clears the description. A board as read back is a valid body.",
        "security": ADMIN,
        "requestBody": _body("BoardFields", {"name": "Checkout (prod)"}),
        "responses": {**_ok("The board as it now is.", {"board": SAVED_BOARD}), **FOUND},
    },
    ("/v1/boards/{board_id}", "delete"): {
        "tags": ["boards"],
        "summary": "Delete a board (its queries stay)",
        "security": ADMIN,
        "responses": {**_ok("Deleted.", {"board": {"id": SAVED_BOARD["id"]}}), **FOUND},
    },
    ("/v1/query_run", "post"): {
        "tags": ["query runs"],
        "summary": "Run a saved or an inline query over a timeframe",
        "description": "Answers at once with the run's id; poll it, or pass `wait` to get "
        "the finished run in this answer.",
        "security": ADMIN,
        "requestBody": _body(
            "RunBody",
            {"query_id": "1m7z5f0k2x9c3a1b2c3", "from": 1763683200000, "to": 1763686800000},
        ),
        "responses": {
            **_ok(
                "Started (or, with `wait`, the run as polling would answer).",
                {"query_run": {"id": "1m80a1b2c3d4e5f6g7h", "status": "STARTED"}},
            ),
            **KEYED,
            "429": _error("Too many run creations this minute; see `Retry-After`."),
        },  # fmt: skip
    },
    ("/v1/query_run/{run_id}", "get"): {
        "tags": ["query runs"],
        "summary": "A run and its result",
        "security": ADMIN,
        "responses": {
            **_ok(
                "`STARTED`, `COMPLETED` with `data`, or `FAILED` with `error`. `data.warnings`"
                " (only when there is one) names each dataset of the query the environment"
                " never held: `[\"no dataset 'logz' here; known: logs, otel\"]`.",
                RUN,
            ),
            **FOUND,
            "410": _error("The result has expired; run the query again."),
        },
    },
    ("/v1/alerts", "post"): {
        "tags": ["alerts"],
        "summary": "Create an alert on a saved query",
        "security": ADMIN,
        "requestBody": _body("AlertFields", ALERT),
        "responses": {
            **_ok(
                "Created; `webhook_secret` is shown only here.",
                {"alert": {"id": "1m8a0b1c2d3e4f5g6h7", "webhook_secret": "ll_ws_..."}},
            ),
            **KEYED,
            "409": MANAGED_ID_TAKEN,
        },  # fmt: skip
    },
    ("/v1/alerts", "get"): {
        "tags": ["alerts"],
        "summary": "Every alert of the environment",
        "security": ADMIN,
        "responses": {**_ok("The alerts.", {"alerts": [FULL_ALERT]}), **KEYED},
    },
    ("/v1/alerts/{alert_id}", "get"): {
        "tags": ["alerts"],
        "summary": "An alert, with its state",
        "security": ADMIN,
        "responses": {**_ok("The alert.", {"alert": FULL_ALERT}), **FOUND},
    },
    ("/v1/alerts/{alert_id}", "put"): {
        "tags": ["alerts"],
        "summary": "Change an alert (the fields sent)",
        "security": ADMIN,
        "requestBody": _body("AlertFields", {"enabled": False}),
        "responses": {**_ok("The alert as it now is.", {"alert": FULL_ALERT}), **FOUND},
    },
    ("/v1/alerts/{alert_id}", "delete"): {
        "tags": ["alerts"],
        "summary": "Delete an alert",
        "security": ADMIN,
        "responses": {**_ok("Deleted.", {"alert": {"id": "1m8a0b1c2d3e4f5g6h7"}}), **FOUND},
    },
    ("/v1/alerts/{alert_id}/checks", "get"): {
        "tags": ["alerts"],
        "summary": "The alert's checks, newest first",
        "security": ADMIN,
        "responses": {
            **_ok(
                "Each check: its time and timeframe, the value per group, the state "
                "after it, and its notifications (`pending` until their destinations answered).",
                {
                    "checks": [
                        {
                            "id": "1m8b...",
                            "time": 1763719500000,
                            "from": 1763719200000,
                            "to": 1763719500000,
                            "state": "ALARM",
                            "previous_state": "OK",
                            "values": [{"groups": {}, "value": 612.0, "alarm": True}],
                            "notifications": [NOTIFICATION],
                        }
                    ]
                },
            ),
            **FOUND,
        },  # fmt: skip
    },
    ("/v1/alerts/{alert_id}/test", "post"): {
        "tags": ["alerts"],
        "summary": "Send a test notification to every destination",
        "security": ADMIN,
        "responses": {
            **_ok(
                "What each destination answered.",
                {"notifications": [NOTIFICATION]},
            ),
            **FOUND,
            "429": _error("Too many test notifications this minute."),
        },  # fmt: skip
    },
    ("/v1/managed", "get"): {
        "tags": ["resources as code"],
        "summary": "The resources `limelight apply` created, by managed id",
        "description": "Each query, alert and board created with `managed_id` (the id its folder "
        "gives it), while it exists: `limelight plan` matches a folder's resources by it, "
        "and `--prune` deletes only these.",
        "security": ADMIN,
        "responses": {
            **_ok(
                "By type, then managed id.",
                {
                    "managed": [
                        {
                            "type": "query",
                            "managed_id": "slow-checkouts",
                            "id": "1m7z5f0k2x9c3a1b2c3",
                        }
                    ]
                },
            ),
            **KEYED,
        },  # fmt: skip
    },
    ("/schemas/limelight-resources.json", "get"): {
        "tags": ["resources as code"],
        "summary": "The JSON Schema of a file of resources",
        "description": "What `limelight plan` and `apply` read; editors complete a file that "
        "names it. Needs no key.",
        "responses": {
            "200": {"description": "The schema.", "content": {"application/schema+json": {}}}
        },
    },  # fmt: skip
    ("/v1/datasets", "get"): {
        "tags": ["datasets"],
        "summary": "The datasets with events in the timeframe",
        "description": "Unix ms; `to` defaults to now and `from` to 24 hours before it.",
        "security": ADMIN,
        "responses": {
            **_ok(
                "By name.",
                {
                    "datasets": [
                        {
                            "name": "logs",
                            "count": 52311,
                            "last_event_at": 1763786399120,
                            "retention": "30d",
                            "retention_is_default": True,
                        }
                    ]
                },
            ),
            **KEYED,
        },  # fmt: skip
    },
    ("/v1/datasets/{name}/keys", "get"): {
        "tags": ["datasets"],
        "summary": "The keys a dataset's events hold, with their kinds",
        "security": ADMIN,
        "responses": {
            **_ok(
                "System fields first, then dotted paths by name.",
                {
                    "keys": [
                        {"key": "_timestamp", "types": ["number"]},
                        {"key": "http.status", "types": ["string", "number"]},
                    ]
                },
            ),
            **FOUND,
        },  # fmt: skip
    },
    ("/v1/datasets/{name}/retention", "put"): {
        "tags": ["datasets"],
        "summary": "How long the dataset keeps its events",
        "description": 'A duration from `1h` to `3650d`, or `"default"` (or null) for the '
        "deployment's `LIMELIGHT_RETENTION_DAYS`.",
        "security": ADMIN,
        "requestBody": _body(
            {
                "type": "object",
                "required": ["retention"],
                "properties": {"retention": {"type": ["string", "null"]}},
            },
            {"retention": "7d"},
        ),
        "responses": {
            **_ok(
                "What now holds.",
                {"dataset": {"name": "debug", "retention": "7d", "retention_is_default": False}},
            ),
            **KEYED,
        },  # fmt: skip
    },
    ("/v1/traces/search", "post"): {
        "tags": ["traces"],
        "summary": "Find traces: those with a span matching every condition",
        "description": "Only `from` and `to` (unix ms) are required. A trace is found when "
        "one of its spans in the timeframe matches `services`, `name`, `status` and every "
        "filter (the query runs' keys and operations), and the whole trace lasts from "
        "`minDuration` to `maxDuration` (ms). Newest (`orderBy: start`) or slowest "
        "(`duration`) first.",
        "security": ADMIN,
        "requestBody": _body(
            "TraceSearch",
            {
                "dataset": "otel",
                "from": 1763780000000,
                "to": 1763783600000,
                "services": ["checkout"],
                "status": "error",
                "minDuration": 250,
                "filters": [{"key": "attributes.http.route", "operation": "=", "value": "/pay"}],
                "orderBy": "duration",
                "limit": 20,
            },
        ),
        "responses": {
            **_ok(
                "At most `limit` traces; `start` and `duration` (ms) over the trace's spans "
                "in the timeframe; `rootName` and `rootService` null when the root span "
                "(the one without `parentSpanId`) is missing.",
                {
                    "traces": [
                        {
                            "traceId": "5b8efff798038103d269b633813fc60c",
                            "start": 1763781234567,
                            "duration": 812.4,
                            "rootService": "gateway",
                            "rootName": "POST /pay",
                            "spans": 14,
                            "errors": 2,
                            "services": ["checkout", "gateway", "payments"],
                        }
                    ]
                },
            ),
            **KEYED,
            "503": _error("The read waited or ran longer than a query run may."),
        },  # fmt: skip
    },
    ("/v1/services", "get"): {
        "tags": ["traces"],
        "summary": "Requests, errors and latency of each service",
        "description": "Over each service's entry spans (kind SERVER or CONSUMER; a "
        "service without any counts its root spans). `dataset` defaults to `otel`; unix "
        "ms, `to` defaults to now and `from` to 24 hours before it. `series=1` adds each "
        "service's requests and errors per bucket of `granularity` ms (default: about 60 "
        "buckets).",
        "security": ADMIN,
        "responses": {
            **_ok(
                "By service name; durations in ms.",
                {
                    "services": [
                        {
                            "service": "checkout",
                            "requests": 52311,
                            "errors": 312,
                            "errorRate": 0.005964,
                            "p50": 41.2,
                            "p95": 180.5,
                            "p99": 412.9,
                            "series": [{"time": 1763780000000, "requests": 871, "errors": 4}],
                        }
                    ]
                },
            ),
            **KEYED,
        },  # fmt: skip
    },
    ("/v1/services/{name}/operations", "get"): {
        "tags": ["traces"],
        "summary": "Requests, errors and latency of a service's operations (span names)",
        "description": "As `/v1/services`, per span name of the service, the most "
        "requested first, at most `limit` (default 100).",
        "security": ADMIN,
        "responses": {
            **_ok(
                "The most requested first.",
                {
                    "service": "checkout",
                    "operations": [
                        {
                            "operation": "POST /pay",
                            "requests": 1204,
                            "errors": 9,
                            "errorRate": 0.007475,
                            "p50": 88.0,
                            "p95": 240.1,
                            "p99": 501.7,
                        }
                    ],
                },
            ),
            **KEYED,
        },  # fmt: skip
    },
    ("/v1/services/{name}/errors", "get"): {
        "tags": ["traces"],
        "summary": "A service's errors grouped by message",
        "description": "The service's spans (any kind) with status ERROR, grouped by "
        "`error` (the status message or exception message), the most frequent first, at "
        "most `limit` (default 20): when the newest was seen, its trace, and the span "
        "names (up to 10) that failed with it.",
        "security": ADMIN,
        "responses": {
            **_ok(
                "The most frequent first.",
                {
                    "service": "checkout",
                    "errors": [
                        {
                            "error": "card declined",
                            "count": 57,
                            "lastSeen": 1763783512345,
                            "traceId": "5b8efff798038103d269b633813fc60c",
                            "operations": ["POST /pay"],
                        }
                    ],
                },
            ),
            **KEYED,
        },  # fmt: skip
    },
    ("/v1/datasets/{name}/keys/{key}/values", "get"): {
        "tags": ["investigate"],
        "summary": "The most frequent values of a key",
        "description": "Among the dataset's events in `[from, to)` (unix ms; `to` defaults to "
        "now, `from` to 24 hours before it) that match `filters` (a JSON-encoded array of "
        "`{key, operation, value}`, as in queries, e.g. "
        '`[{"key":"duration","operation":">","value":100}]`): the top `limit` '
        "(1-100, default 10) "
        "values of the key with their count and share of the events holding it, the number "
        "of distinct values, and how many events hold the key. An array counts as each of "
        "its elements. At most the newest 1,000,000 events holding the key are read: "
        "`sampled` says the timeframe held that many or more.",
        "security": ADMIN,
        "responses": {
            **_ok(
                "The values, most frequent first.",
                {
                    "key": "http.status",
                    "values": [
                        {"value": 200, "count": 9120, "share": 0.912},
                        {"value": 500, "count": 880, "share": 0.088},
                    ],
                    "distinct": 2,
                    "events": 10000,
                    "sampled": False,
                },
            ),
            **FOUND,
            "429": _error("Too many runs this minute; see `Retry-After`."),
            "503": _error("Over the run's time or memory limit, or the server is busy."),
        },  # fmt: skip
    },
    ("/v1/bubble_up", "post"): {
        "tags": ["investigate"],
        "summary": "What sets a selection of a query's events apart (BubbleUp)",
        "description": "The query's `namespaces`, `filters`, `filter_combination` and "
        '`needle` over `[from, to)`; the `selection` is `{"filters": [...]}` or a '
        "heatmap region `{from, to, key, min, max}` (both ends of the number included), the "
        "baseline every other event of the query. For each key the events hold (system "
        "fields included, the selection's keys left out), the share of each side holding "
        "its most common values (numbers with many values as decile ranges "
        "`{from, to}`, a missing key as null); keys ranked by `score`, the total variation "
        "distance of the two distributions (0: alike, 1: no value in common). Each side "
        "reads at most about its newest 7,000,000 / (keys + 1) events (1,000,000 at most): "
        "`sampled` says a side held more. Keys of ids are left out, named in `near_unique`.",
        "security": ADMIN,
        "requestBody": _body(
            {"type": "object", "required": ["from", "to", "selection"]},
            {
                "namespaces": [{"type": "dataset", "value": "requests"}],
                "from": 1763683200000,
                "to": 1763686800000,
                "selection": {"filters": [{"key": "duration", "operation": ">", "value": 870}]},
            },
        ),
        "responses": {
            **_ok(
                "Keys, most different first.",
                {
                    "selection": 3000,
                    "baseline": 97000,
                    "sampled": False,
                    "keys_left_out": 0,
                    "near_unique": ["requestId"],
                    "dimensions": [
                        {
                            "key": "region",
                            "score": 0.83,
                            "values": [
                                {"value": "eu-west-2", "selection": 1.0, "baseline": 0.17},
                                {"value": "us-east-1", "selection": 0.0, "baseline": 0.17},
                            ],
                        }
                    ],
                },
            ),
            **KEYED,
            "429": _error("Too many runs this minute; see `Retry-After`."),
            "503": _error("Over the run's time or memory limit, or the server is busy."),
        },  # fmt: skip
    },
    ("/oauth/authorize", "get"): {
        "tags": ["oauth"],
        "summary": "The consent page an integration sends a developer to",
        "description": "A page for a person (sign in, pick environments, allow), then a "
        "303 to the integration's redirect URL with `code` and `state`.",
        "parameters": [
            {
                "name": name,
                "in": "query",
                "required": name in ("response_type", "client_id"),
                "schema": {"type": "string"},
                "description": about,
            }
            for name, about in AUTHORIZE_PARAMETERS
        ],
        "responses": {"200": {"description": "The consent page.", "content": {"text/html": {}}}},
    },
    ("/oauth/token", "post"): {
        "tags": ["oauth"],
        "summary": "Exchange a code, or refresh an access token",
        "description": "The contract's JSON with camelCase names, or the standard "
        "form-encoded request (client authentication by HTTP Basic or in the body), each "
        "answered in its own naming.",
        "requestBody": {
            "required": True,
            "content": {
                **_json(
                    {
                        "grantType": "authorization_code",
                        "clientId": "CLIENT_ID",
                        "clientSecret": "ll_cs_...",
                        "code": "ll_ac_...",
                        "redirect": "https://acme.example/oauth/callback",
                    }
                ),
                "application/x-www-form-urlencoded": {"schema": {"type": "object"}},
            },
        },  # fmt: skip
        "responses": {
            **_ok(
                "Tokens.",
                {
                    "accessToken": "ll_at_...",
                    "refreshToken": "ll_rt_...",
                    "expiresIn": 86400,
                    "tokenType": "Bearer",
                },
            ),
            "400": OAUTH_ERROR,
            "401": OAUTH_ERROR,
            "429": OAUTH_ERROR,
        },  # fmt: skip
    },
    ("/oauth/revoke", "post"): {
        "tags": ["oauth"],
        "summary": "Revoke a token (RFC 7009)",
        "requestBody": {
            "required": True,
            "content": _json(
                {"clientId": "CLIENT_ID", "clientSecret": "ll_cs_...", "token": "ll_rt_..."}
            ),
        },
        "responses": {
            "200": {"description": "Always, also for an unknown token."},
            "401": OAUTH_ERROR,
        },
    },  # fmt: skip
    ("/oauth/environments", "get"): {
        "tags": ["oauth"],
        "summary": "The environments the installation was granted, with an ingest key each",
        "security": [{"accessToken": []}],
        "responses": {
            **_ok(
                "One ingest key per environment, the same on every call.",
                [{"workspaceId": "1m7y...", "environmentId": "1m7y...", "apiKey": "ll_pk_..."}],
            ),
            "401": {"description": "An expired, revoked or malformed token."},
        },  # fmt: skip
    },
}


def _components() -> dict[str, Any]:
    """The schemas of the request bodies, from the pydantic models that validate them."""
    _, defs = models_json_schema(
        [
            (QueryFields, "validation"),
            (AlertFields, "validation"),
            (RunBody, "validation"),
            (TraceSearch, "validation"),
            (BoardFields, "validation"),
        ],
        ref_template="#/components/schemas/{model}",
    )
    schemas: dict[str, Any] = defs["$defs"]
    schemas["Error"] = ERROR_SCHEMA
    return schemas


def openapi_document(app: FastAPI) -> dict[str, Any]:
    doc = get_openapi(
        title="Limelight",
        version=version("limelight"),
        description=DESCRIPTION,
        routes=app.routes,
    )
    paths: dict[str, Any] = doc.setdefault("paths", {})
    for (path, method), extra in {**OPERATIONS, **openapi_shippers.OPERATIONS}.items():
        operation = paths.setdefault(path, {}).setdefault(method, {})
        # FastAPI's own 200 and 422 say nothing true of these endpoints (they read
        # their bodies themselves and answer 400): ours replace them.
        operation.pop("responses", None)
        operation.update(extra)
    components = doc.setdefault("components", {})
    schemas = {**components.get("schemas", {}), **_components()}
    # FastAPI's 422 shapes, referenced by no operation once ours replaced its responses.
    if "/HTTPValidationError" not in json.dumps(paths):
        schemas.pop("HTTPValidationError", None)
        schemas.pop("ValidationError", None)
    components["schemas"] = schemas
    components["securitySchemes"] = {**SECURITY_SCHEMES, **openapi_shippers.SECURITY_SCHEMES}
    return doc


def install_openapi(app: FastAPI) -> None:
    """Serve the whole document at /openapi.json (built on first use, then kept)."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = openapi_document(app)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
