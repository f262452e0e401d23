"""Traces: the latest traces of a dataset of spans, searched and sorted, and a trace's
spans as a waterfall beside its logs.

The list is the trace search of the API (``runs.spans.search_traces``, queued
on the query run workers as ``POST /v1/traces/search`` is), drawn as a table
and a scatter of duration over time. A trace is the events of the
environment, of any dataset, whose ``traceId`` is its id, read by a query run
over a timeframe: around the time of the event a link came from (``t``), else
the one the address names (the last 7 days by default).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from limelight.console.datasets import known_keys
from limelight.console.event_lines import EventLine, as_trace_id, event_line
from limelight.console.numbers import ascii_whole
from limelight.console.query_form import NO_VALUE_OPERATIONS, OPERATIONS, format_value
from limelight.console.render import query_string, render, see_other
from limelight.console.route import console_router
from limelight.console.running import outcomes, start
from limelight.console.scope import Here
from limelight.console.timeframe import PRESETS, Window, window_of
from limelight.console.trace_search import MAX_PAGES, ORDERS, PAGE_TRACES, TraceForm
from limelight.console.waterfall import NS_PER_MS, SpanRow, Waterfall, is_span, waterfall
from limelight.datasets import SYSTEM_KEYS, list_datasets
from limelight.errors import BadRequest, ExposedError
from limelight.query.spec import validate_fields
from limelight.runs.spans import check_read, search_traces
from limelight.runs.waiting import read_answer
from limelight.times import DAY_MS, HOUR_MS, Timeframe
from limelight.web.access import note_error
from limelight.web.request import runtime_of

router = console_router()
MAX_SPANS = 1000
AROUND_MS = 6 * HOUR_MS
# The dataset picker lists what had events in at least the last day (as the explorer's).
PICKER_MS = DAY_MS
# A span's logs are looked for this long around it (a log may be written as it ends).
LOGS_AROUND_MS = 60_000


@dataclass(frozen=True)
class TraceRow:
    """A found trace as the page lists it; ``link`` only for an id that is a trace id
    (a span sent to the Events API may carry any text as its ``traceId``)."""

    trace_id: str
    start: int
    duration: float
    root_service: str | None
    root_name: str | None
    spans: int
    errors: int
    services: list[str]
    link: str | None

    @classmethod
    def of(cls, base: str, found: Mapping[str, Any]) -> TraceRow:
        tid = as_trace_id(str(found["traceId"] or ""))
        return cls(
            trace_id=str(found["traceId"] or ""),
            start=found["start"],
            duration=found["duration"],
            root_service=found["rootService"],
            root_name=found["rootName"],
            spans=found["spans"],
            errors=found["errors"],
            services=found["services"],
            link=f"{base}/traces/{tid}?t={found['start']}" if tid else None,
        )

    def point(self) -> dict[str, Any]:
        return {
            "time": self.start,
            "value": self.duration,
            "error": self.errors > 0,
            "href": self.link,
        }


def _trace_id_redirect(here: Here, asked: str, params: Mapping[str, str]) -> Response | None:
    tid = as_trace_id(asked)
    if tid is None:
        return None
    named = any(params.get(k) for k in ("range", "from", "to"))
    window = window_of(params, default="7d").params() if named else []
    return see_other(f"{here.base}/traces/{tid}" + query_string(window))


async def _dataset_names(request: Request, here: Here, window: Window, dataset: str) -> list[str]:
    rt = runtime_of(request)
    found = await run_in_threadpool(
        list_datasets,
        rt.events,
        here.tenant,
        rt.runs.limits,
        Timeframe(min(window.from_ms, window.to_ms - PICKER_MS), window.to_ms),
    )
    names = sorted(d["name"] for d in found)
    return names if dataset in names else sorted([*names, dataset])


@router.get("/env/{environment_id}/traces")
async def traces_page(request: Request, here: Here) -> Response:
    """The latest traces (or the slowest) with a span matching the search; a trace id
    typed in the id box goes straight to its trace."""
    rt = runtime_of(request)
    params = request.query_params
    asked = params.get("trace_id", "")
    if asked and (redirect := _trace_id_redirect(here, asked, params)):
        return redirect
    form = TraceForm.of(list(params.multi_items()))
    window = window_of(params, default="1h")
    context: dict[str, Any] = {
        "here": here,
        "section": "traces",
        "asked": asked,
        "id_error": None,
        "form": form,
        "window": window,
        "presets": PRESETS,
        "orders": ORDERS,
        "operations": OPERATIONS,
        "no_value_operations": NO_VALUE_OPERATIONS,
        "errors": [],
        "error": None,
        "traces": None,
        "next_page": None,
        "newer_page": None,
        "first": form.skipped + 1,
        "limit": PAGE_TRACES,
        "max_pages": MAX_PAGES,
    }
    status = 200
    if asked:
        context["id_error"] = (
            "A trace id is 32 hexadecimal characters (as OpenTelemetry writes it)."
        )
        status = 400
    try:
        search = form.search(window)
        check_read(rt.runs.limits, search.dataset, search.timeframe)
    except BadRequest as exc:
        note_error(request, exc)
        context["errors"] = exc.errors or [
            {"field": "search", "message": exc.reason or exc.message}
        ]
        context["datasets"] = await _dataset_names(request, here, window, form.dataset)
        context["keys"] = SYSTEM_KEYS
        return render("traces.html", 400, **context)
    # The dataset list and its keys (for the filter rows) are read beside the search.
    datasets = asyncio.ensure_future(_dataset_names(request, here, window, search.dataset))
    keys = asyncio.ensure_future(run_in_threadpool(known_keys, rt, here.tenant, search.dataset))
    try:
        found = await read_answer(
            rt.runs,
            here.tenant,
            lambda deadline: search_traces(
                rt.events, here.tenant, search, rt.runs.limits, deadline
            ),
        )
        # The search's first pages and this one: this one is what is left after them.
        rows = [TraceRow.of(here.base, t) for t in found["traces"][form.skipped :]]
        context["traces"] = rows
        if form.page > 1:
            context["newer_page"] = form.page_address(window, form.page - 1)
        if len(rows) == PAGE_TRACES and form.page < MAX_PAGES:
            context["next_page"] = form.page_address(window, form.page + 1)
        context["chart"] = {
            "span": [window.from_ms, window.to_ms],
            "points": [r.point() for r in rows],
        }
    except ExposedError as exc:  # a full queue, a read past its limits
        note_error(request, exc)
        context["error"] = exc.reason or exc.message
        status = exc.status
    context["datasets"] = await datasets
    context["keys"] = await keys
    return render("traces.html", status, **context)


@dataclass(frozen=True)
class TraceEvent:
    """An event of the trace that is not a span (a log), and the span it was written in."""

    line: EventLine
    span: SpanRow | None


def logs_address(base: str, trace_id: str, row: SpanRow, dataset: str) -> str:
    """The events page showing the events of ``dataset`` written in the span: filtered by
    its trace and span ids, around its time."""
    start_ms = row.start_ns // NS_PER_MS
    end_ms = row.end_ns // NS_PER_MS + 1
    window = Window(Timeframe(start_ms - LOGS_AROUND_MS, end_ms + LOGS_AROUND_MS))
    pairs = [("ds", dataset), *window.params()]
    for key, value in (("traceId", trace_id), ("spanId", row.span_id)):
        pairs += [("fk", key), ("fo", "="), ("fv", format_value(value))]
    return f"{base}/events{query_string(pairs)}"


def _trace_events(
    base: str, events: list[dict[str, Any]], spans: Waterfall | None
) -> list[TraceEvent]:
    if spans is None:
        return [TraceEvent(event_line(base, e, []), None) for e in events]
    by_id = spans.span_ids()
    return [
        TraceEvent(event_line(base, e, []), by_id.get(e["spanId"]) if _has_span_id(e) else None)
        for e in spans.logs
    ]


def _has_span_id(event: Mapping[str, Any]) -> bool:
    return isinstance(event.get("spanId"), str)


@router.get("/env/{environment_id}/traces/{trace_id}")
async def trace_page(request: Request, here: Here, trace_id: str) -> Response:
    rt = runtime_of(request)
    tid = as_trace_id(trace_id)
    if tid is None:
        raise BadRequest("a trace id is 32 hexadecimal characters")
    t = ascii_whole(request.query_params.get("t", ""), 15)
    if t is not None:
        window = Window(Timeframe(t - AROUND_MS, t + AROUND_MS))
    else:
        window = window_of(request.query_params, default="7d")
    fields = validate_fields(
        {"filters": [{"key": "traceId", "operation": "=", "value": tid}], "limit": MAX_SPANS}
    )
    [outcome] = await outcomes(rt, here.tenant, [await start(rt, here.tenant, fields, window)])
    events = outcome.data["events"] if outcome.data else []
    spans = waterfall(events)
    span_datasets = sorted({str(e["_dataset"]) for e in events if is_span(e)})
    log_datasets = spans.log_datasets if spans else []
    return render(
        "trace.html",
        here=here,
        section="traces",
        trace_id=tid,
        window=window,
        error=outcome.error,
        spans=spans,
        others=_trace_events(here.base, events, spans),
        # A span's logs are looked for where the trace's logs are, else beside the spans.
        logs_datasets=log_datasets or span_datasets,
        logs_address=logs_address,
        truncated=bool(outcome.data and outcome.data["count"] > len(events)),
        max_spans=MAX_SPANS,
    )
