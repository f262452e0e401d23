"""Traces: find a trace by id, and see its spans as a waterfall.

A trace is the events of the environment whose ``traceId`` is its id, read by
a query run over a timeframe: around the time of the event a link came from
(``t``), else the one the address names (the last 7 days by default).
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from limelight.console.event_lines import as_trace_id, event_line
from limelight.console.render import query_string, render, see_other
from limelight.console.route import console_router
from limelight.console.running import outcomes, start
from limelight.console.scope import Here
from limelight.console.timeframe import PRESETS, Window, window_of
from limelight.console.waterfall import is_span, waterfall
from limelight.errors import BadRequest
from limelight.query.spec import validate_fields
from limelight.times import HOUR_MS, Timeframe
from limelight.web.request import runtime_of

router = console_router()
MAX_SPANS = 1000
AROUND_MS = 6 * HOUR_MS


@router.get("/env/{environment_id}/traces")
async def traces_page(request: Request, here: Here) -> Response:
    """The search for a trace id; a valid id goes straight to its trace."""
    asked = request.query_params.get("trace_id", "")
    window = window_of(request.query_params, default="7d")
    error = None
    if asked:
        tid = as_trace_id(asked)
        if tid:
            return see_other(f"{here.base}/traces/{tid}" + query_string(window.params()))
        error = "A trace id is 32 hexadecimal characters (as OpenTelemetry writes it)."
    return render(
        "traces.html",
        400 if error else 200,
        here=here,
        section="traces",
        asked=asked,
        error=error,
        window=window,
        presets=PRESETS,
    )


@router.get("/env/{environment_id}/traces/{trace_id}")
async def trace_page(request: Request, here: Here, trace_id: str) -> Response:
    rt = runtime_of(request)
    tid = as_trace_id(trace_id)
    if tid is None:
        raise BadRequest("a trace id is 32 hexadecimal characters")
    t = request.query_params.get("t", "")
    if t.isdigit() and len(t) < 16:
        window = Window(Timeframe(int(t) - AROUND_MS, int(t) + AROUND_MS))
    else:
        window = window_of(request.query_params, default="7d")
    fields = validate_fields(
        {"filters": [{"key": "traceId", "operation": "=", "value": tid}], "limit": MAX_SPANS}
    )
    [outcome] = await outcomes(rt, here.tenant, [await start(rt, here.tenant, fields, window)])
    events = outcome.data["events"] if outcome.data else []
    spans = waterfall(events)
    others = [event_line(here.base, e, []) for e in events if not is_span(e)]
    return render(
        "trace.html",
        here=here,
        section="traces",
        trace_id=tid,
        window=window,
        error=outcome.error,
        spans=spans,
        others=others,
        truncated=bool(outcome.data and outcome.data["count"] > len(events)),
        max_spans=MAX_SPANS,
    )
