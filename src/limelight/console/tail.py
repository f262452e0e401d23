"""Live tail: the events of a dataset that arrive while the explorer watches, as
server-sent events.

Event ids grow with the time they were stored (``ids``), so each look asks for
the events after the last id sent (stamped within the last hour, or ahead),
through the query compiler and the run limits like any run. A stream ends after
``STREAM_SECONDS`` and the browser reconnects with ``Last-Event-ID``, so no
response is held open forever (a server stopping waits for its responses) and
the login is checked again on every reconnect.
"""

from __future__ import annotations

import asyncio
import threading
from collections import Counter
from collections.abc import AsyncIterator
from typing import Any

import orjson
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from limelight.console.event_lines import event_line
from limelight.console.explorer import Search
from limelight.console.field_actions import LEVEL_KEYS
from limelight.console.route import console_router
from limelight.console.running import loads
from limelight.console.scope import Here, Place
from limelight.console.timeframe import now_ms
from limelight.errors import BadRequest
from limelight.ids import id_floor
from limelight.query.compile import RunOptions, Timeframe
from limelight.query.spec import QueryFields, fields_to_json, validate_fields
from limelight.runs.execute import RunFailed, run_once
from limelight.runtime import Runtime
from limelight.times import DAY_MS, HOUR_MS
from limelight.web.request import runtime_of

router = console_router()
INTERVAL_SECONDS = 2.0
STREAM_SECONDS = 15.0
BATCH = 100
LOOKBACK_MS = HOUR_MS
AHEAD_MS = DAY_MS + 1
# Open tails per workspace: each looks at the store every INTERVAL_SECONDS.
MAX_TAILS_PER_WORKSPACE = 4
MAX_ID = 64


class TailSlots:
    """How many tails each workspace has open; past the limit a tail is refused."""

    def __init__(self, per_workspace: int = MAX_TAILS_PER_WORKSPACE) -> None:
        self.per_workspace = per_workspace
        self._open: Counter[str] = Counter()
        self._lock = threading.Lock()

    def take(self, workspace_id: str) -> bool:
        with self._lock:
            if self._open[workspace_id] >= self.per_workspace:
                return False
            self._open[workspace_id] += 1
            return True

    def give_back(self, workspace_id: str) -> None:
        with self._lock:
            self._open[workspace_id] -= 1
            if self._open[workspace_id] <= 0:
                del self._open[workspace_id]


def message(kind: str, data: Any, event_id: str | None = None) -> bytes:
    head = f"id: {event_id}\n" if event_id else ""
    return f"{head}event: {kind}\ndata: ".encode() + orjson.dumps(data) + b"\n\n"


def _after(fields: QueryFields, since: str) -> QueryFields:
    """The query, narrowed to the events stored after the id ``since``."""
    query = fields_to_json(fields)
    query["filters"] = [*query.get("filters", []), {"key": "_id", "operation": ">", "value": since}]
    return validate_fields(query)


def look(
    rt: Runtime,
    here: Place,
    search: Search,
    fields: QueryFields,
    since: str,
    level: str | None = None,
) -> tuple[list[dict[str, Any]], str, int]:
    """The lines of events stored after ``since`` (newest first), the id to go on from,
    and how many arrived in all (more than a batch are not all shown)."""
    now = now_ms()
    answer = run_once(
        rt.events,
        here.tenant,
        _after(fields, since),
        Timeframe(now - LOOKBACK_MS, now + AHEAD_MS),
        RunOptions(limit=BATCH),
        rt.runs.limits,
    )
    # Events come as JSON fragments (as a run's answer holds them): read as the page does.
    data = loads(orjson.dumps(answer))
    events = data["events"]
    if not events:
        return [], since, 0
    newest = max(str(e["_id"]) for e in events)
    back = search.params()
    lines = [event_line(here.base, e, search.columns, back, level).to_json() for e in events]
    return lines, newest, int(data["count"])


@router.get("/env/{environment_id}/events/tail")
async def tail(request: Request, here: Here) -> Response:
    rt = runtime_of(request)
    search = Search.of(request)
    if search.dataset is None:
        raise BadRequest("live tail needs a dataset")
    fields = search.fields(search.dataset)
    # A reconnection says where it stopped (Last-Event-ID); so does a tail resumed after a pause.
    asked = request.headers.get("last-event-id") or request.query_params.get("after", "")
    resumed = asked[:MAX_ID]
    since = resumed if resumed.isalnum() else id_floor(now_ms())
    # The page's level key, shown on each line (one of LEVEL_KEYS; anything else is not).
    level = request.query_params.get("level")
    level = level if level in LEVEL_KEYS else None
    slots: TailSlots = request.app.state.tail_slots
    workspace = here.env.workspace_id

    async def stream() -> AsyncIterator[bytes]:
        if not slots.take(workspace):
            yield message("problem", "Too many live tails are open in this workspace; close one.")
            return
        try:
            nonlocal since
            yield b"retry: 1000\n\n" + message("ready", {}, since)
            loop = asyncio.get_running_loop()
            end = loop.time() + STREAM_SECONDS
            while loop.time() < end and not await request.is_disconnected():
                try:
                    lines, since, arrived = await run_in_threadpool(
                        look, rt, here, search, fields, since, level
                    )
                except RunFailed as exc:
                    yield message("problem", str(exc))
                    return
                if lines:
                    yield message("events", {"lines": lines, "arrived": arrived}, since)
                else:
                    yield b": nothing new\n\n"
                await asyncio.sleep(INTERVAL_SECONDS)
        finally:
            slots.give_back(workspace)

    headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
    return StreamingResponse(stream(), media_type="text/event-stream", headers=headers)
