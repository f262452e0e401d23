"""What every request leaves behind: one access-log line and the HTTP metrics.

An ASGI middleware around the whole app, so it sees every request, the mounted
Events and OTLP apps included, and the status and bytes actually sent. The line
names the method, the path (never the query string: a client may put a token
there), the status, the time, the bytes of the response body, the tenant whose
key (or console page) the request served, the client's address and, for a 4xx,
the reason it was refused (``web/access.py``); never a key or a body.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Mapping
from http import HTTPStatus
from typing import Any

import orjson
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from limelight import metrics
from limelight.errors import ClientClosedRequest
from limelight.web.access import reason_of, tenant_of

log = logging.getLogger("limelight.access")

ROUTE_KEY = "limelight.route"


def note_route(request: Request, template: str) -> None:
    """Name the route of a request served by a catch-all route (the Events and OTLP
    apps read their paths themselves), e.g. ``/v1/{dataset}``."""
    request.scope[ROUTE_KEY] = template


def route_of(scope: Scope) -> str:
    """The route's template (``/v1/queries/{query_id}``, with the prefix of the app it
    is mounted under), so the metrics' labels stay few; ``unmatched`` for a path no
    route serves."""
    path = scope.get(ROUTE_KEY) or getattr(scope.get("route"), "path", None)
    if not isinstance(path, str):
        return "unmatched"
    return f"{scope.get('root_path', '')}{path}" or "/"


class Observe:
    def __init__(self, app: ASGIApp, access_log: bool = True) -> None:
        self.app = app
        self.access_log = access_log

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        answer: dict[str, int] = {"status": 500, "bytes": 0}

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                answer["status"] = message["status"]
            elif message["type"] == "http.response.body":
                answer["bytes"] += len(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            self._record(scope, answer["status"], answer["bytes"], time.perf_counter() - started)

    def _record(self, scope: Scope, status: int, sent: int, seconds: float) -> None:
        route = route_of(scope)
        method = scope["method"]
        metrics.HTTP_REQUESTS.labels(route, method, str(status)).inc()
        metrics.HTTP_SECONDS.labels(route).observe(seconds)
        if not self.access_log:
            return
        tenant = tenant_of(scope)
        client = scope.get("client")
        gone = status == ClientClosedRequest.status
        if gone:  # the server drops the answer to a closed connection: nothing was sent
            sent = 0
        fields: dict[str, Any] = {
            "method": method,
            "path": scope["path"],
            "status": status,
            "duration_ms": round(seconds * 1000, 1),
            "bytes": sent,
            "workspace_id": tenant.workspace_id if tenant else None,
            "environment_id": tenant.environment_id if tenant else None,
            "client": client[0] if client else None,
        }
        who = f"{tenant.workspace_id}/{tenant.environment_id}" if tenant else "-"
        refused = ""
        if gone:
            fields["client_went_away"] = True
            refused = " (the client went away)"
        elif 400 <= status < 500:
            fields["reason"] = reason_of(scope) or _phrase(status)
            refused = f" reason={orjson.dumps(fields['reason']).decode()}"
        log.info(
            "%s %s %s %.1fms %dB tenant=%s client=%s%s",
            method,
            _CONTROL.sub(_escaped, fields["path"]),
            status,
            fields["duration_ms"],
            sent,
            who,
            fields["client"] or "-",
            refused,
            extra=fields,
        )


# A path is decoded from its %-escapes: `%0d%0a` in one wrote a line of the client's own
# text into the log as if the server had. Control characters are written escaped.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def _escaped(found: re.Match[str]) -> str:
    return f"\\x{ord(found.group()):02x}"


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "refused"


def count_ingest(
    api: str, body_bytes: int, accepted: int, refused: Mapping[str, int], *, path: str
) -> None:
    """A stored batch, counted once its INSERT has returned, before its answer is sent:
    its events by outcome, its body's bytes (accepted, or partial when some of its events
    were refused), and its stored events by ingest ``path`` (``otlp_traces``)."""
    metrics.EVENTS_STORED.labels(path).inc(accepted)
    metrics.INGEST_EVENTS.labels(api, "accepted").inc(accepted)
    for kind, count in refused.items():
        metrics.INGEST_EVENTS.labels(api, kind).inc(count)
    outcome = "partial" if any(refused.values()) else "accepted"
    metrics.INGEST_BYTES.labels(api, outcome).inc(body_bytes)


def count_refused_request(api: str, status_title: str, body_bytes: int) -> None:
    """A request refused whole, by the reason its status names (``payload_too_large``)."""
    reason = status_title.lower().replace(" ", "_")
    metrics.INGEST_BYTES.labels(api, reason).inc(body_bytes)
