"""The events explorer: a dataset's newest events over a timeframe, found by free text
and filters, with a count histogram, paging, and each event's detail.

Its queries are query runs (the run service the API uses): the page and the
histogram run side by side while the dataset list and the dataset's keys are
read beside them.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from limelight.auth.environment_keys import ingest_key_for
from limelight.console.datasets import known_keys
from limelight.console.event_lines import EventLine, event_line, pretty, trace_id_of
from limelight.console.query_form import (
    LIST_OPERATIONS,
    NO_VALUE_OPERATIONS,
    OPERATIONS,
    FormRows,
    fields_from_params,
)
from limelight.console.render import render
from limelight.console.route import console_router
from limelight.console.running import outcomes, start
from limelight.console.scope import Here
from limelight.console.timeframe import PRESETS, Window, now_ms, window_of
from limelight.datasets import SYSTEM_KEYS, list_datasets
from limelight.errors import BadRequest, ExposedError, NotFound
from limelight.ids import id_floor
from limelight.ingest.service import check_dataset
from limelight.query.spec import QueryFields, validate_fields
from limelight.times import DAY_MS, MINUTE_MS, Timeframe
from limelight.web.access import note_error
from limelight.web.request import runtime_of

router = console_router()
PAGE_SIZE = 50
MAX_OFFSET = 1_000_000
MAX_COLUMNS = 12
# The dataset picker lists what had events in at least the last day.
PICKER_MS = DAY_MS
# The parameters the explorer keeps from a page to the next.
SEARCH_PARAMS = ("q", "qr", "qc", "fk", "fo", "fv")


@dataclass
class Search:
    """What the address asks the explorer for."""

    dataset: str | None
    window: Window
    pairs: list[tuple[str, str]]  # the needle and filters, as in the address
    columns: list[str] = field(default_factory=list)
    offset: int = 0

    @classmethod
    def of(cls, request: Request) -> Search:
        items = list(request.query_params.multi_items())
        single = dict(items)
        dataset = single.get("ds") or None
        if dataset is not None:
            check_dataset(dataset)
        columns = [c.strip() for c in single.get("cols", "").split(",") if c.strip()]
        offset_text = single.get("offset", "0")
        offset = int(offset_text) if offset_text.isdigit() else 0
        return cls(
            dataset=dataset,
            window=window_of(single),
            pairs=[(k, v) for k, v in items if k in SEARCH_PARAMS],
            columns=columns[:MAX_COLUMNS],
            offset=min(offset, MAX_OFFSET),
        )

    def params(self, **change: Any) -> list[tuple[str, str]]:
        """This search's address, with ``change`` (ds, cols, offset, window) applied."""
        window: Window = change.get("window", self.window)
        columns = change.get("cols", self.columns)
        offset = change.get("offset", 0)
        out = [("ds", change.get("ds", self.dataset) or "")]
        out += window.params() + self.pairs
        if columns:
            out.append(("cols", ",".join(columns)))
        if offset:
            out.append(("offset", str(offset)))
        return out

    def fields(self, dataset: str, calculations: list[dict[str, Any]] | None = None) -> QueryFields:
        query = fields_from_params(self.pairs)
        query["namespaces"] = [{"type": "dataset", "value": dataset}]
        if calculations:
            query["calculations"] = calculations
        return validate_fields(query)


def _histogram(data: dict[str, Any] | None) -> dict[str, Any] | None:
    """Bucket starts and event counts for the chart (a bucket without events is 0)."""
    if not data or "series" not in data:
        return None
    times, counts = [], []
    for bucket in data["series"]:
        times.append(bucket["time"])
        counts.append(sum(row["aggregates"].get("COUNT", 0) for row in bucket["data"]))
    return {"times": times, "counts": counts}


@router.get("/env/{environment_id}/events")
async def explorer(request: Request, here: Here) -> Response:
    rt = runtime_of(request)
    search = Search.of(request)
    window = search.window
    picker = Timeframe(min(window.from_ms, window.to_ms - PICKER_MS), window.to_ms)
    datasets = await run_in_threadpool(
        list_datasets, rt.events, here.tenant, rt.runs.limits, picker
    )
    dataset = search.dataset
    if dataset is None and datasets:
        dataset = max(datasets, key=lambda d: d["last_event_at"])["name"]
    context: dict[str, Any] = {
        "here": here,
        "section": "events",
        "search": search,
        "dataset": dataset,
        "datasets": [d["name"] for d in datasets],
        "window": window,
        "presets": PRESETS,
        "rows": FormRows.of(search.pairs),
        "operations": OPERATIONS,
        "no_value_operations": NO_VALUE_OPERATIONS,
        "list_operations": LIST_OPERATIONS,
        "columns": search.columns,
        "lines": [],
        "errors": [],
        "error": None,
        "total": None,
        "histogram": None,
        "keys": SYSTEM_KEYS,
        # Live tail shows what is stored after the page was made.
        "tail_after": id_floor(now_ms()),
    }
    if dataset is None:
        context["ingest_key"] = await run_in_threadpool(
            ingest_key_for, rt.meta, here.env.environment_id
        )
        context["events_url"] = rt.settings.events_url
        return render("explorer.html", **context)
    if dataset not in context["datasets"]:
        context["datasets"].append(dataset)
    try:
        page_fields = search.fields(dataset)
        count_fields = search.fields(dataset, [{"operator": "COUNT"}])
    except BadRequest as exc:
        context["errors"] = exc.errors or [{"field": "query", "message": exc.reason}]
        note_error(request, exc)
        return render("explorer.html", 400, **context)
    keys_task = asyncio.ensure_future(run_in_threadpool(known_keys, rt, here.tenant, dataset))
    try:
        views = [
            await start(
                rt, here.tenant, page_fields, window, limit=PAGE_SIZE, offset=search.offset
            ),
            await start(rt, here.tenant, count_fields, window),
        ]
        page, counts = await outcomes(rt, here.tenant, views)
    except ExposedError as exc:
        context["error"] = exc.reason or exc.message
        context["keys"] = await keys_task
        return render("explorer.html", exc.status, **context)
    context["keys"] = await keys_task
    context["error"] = page.error or counts.error
    if page.data is not None:
        lines: list[EventLine] = [
            event_line(here.base, event, search.columns) for event in page.data["events"]
        ]
        context["lines"] = lines
        context["total"] = page.data["count"]
    histogram = _histogram(counts.data)
    if histogram is not None:  # the x axis spans the timeframe, events or not
        histogram["span"] = [window.from_ms, window.to_ms]
    context["histogram"] = histogram
    context["page_size"] = PAGE_SIZE
    return render("explorer.html", **context)


@router.get("/env/{environment_id}/events/{dataset}/{event_id}")
async def event_detail(request: Request, here: Here, dataset: str, event_id: str) -> Response:
    """One event as formatted JSON with its system fields; ``t`` (its time) finds it fast."""
    rt = runtime_of(request)
    check_dataset(dataset)
    t = request.query_params.get("t", "")
    if t.isdigit() and len(t) < 16:
        window = Window(Timeframe(int(t), int(t) + 1))
    else:
        end = now_ms() + 1  # the longest timeframe a run may have, up to now
        window = Window(Timeframe(end - rt.runs.limits.max_timeframe_ms, end))
    fields = validate_fields(
        {
            "namespaces": [{"type": "dataset", "value": dataset}],
            "filters": [{"key": "_id", "operation": "=", "value": event_id}],
            "limit": 1,
        }
    )
    [outcome] = await outcomes(rt, here.tenant, [await start(rt, here.tenant, fields, window)])
    if outcome.error:
        raise BadRequest(outcome.error)
    assert outcome.data is not None
    if not outcome.data["events"]:
        raise NotFound()
    event = outcome.data["events"][0]
    at = event["_timestamp"]
    around = Window(Timeframe(at - 5 * MINUTE_MS, at + 5 * MINUTE_MS))
    return render(
        "event.html",
        here=here,
        section="events",
        event=event,
        json_text=pretty(event),
        trace_id=trace_id_of(event),
        around=[("ds", dataset), *around.params()],
    )
