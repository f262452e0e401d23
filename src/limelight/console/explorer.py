"""The events explorer: a dataset's newest events over a timeframe, found by free text
and filters, with a count histogram (stacked by level when the dataset has a level-like
key), paging, a field sidebar (a key's top values, each a filter), and each event's
detail as a table of its keys with the same actions.

Its queries are query runs (the run service the API uses): the page and the
histogram run side by side while the dataset list and the dataset's keys are
read beside them; a key's top values are ``runs.investigate.field_values``, waited
on as the API's ``GET /v1/datasets/<name>/keys/<key>/values`` is.
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
from limelight.console.event_lines import EventLine, event_line, pretty, tone_of, trace_id_of
from limelight.console.field_actions import (
    MAX_LEVEL_SERIES,
    FieldActions,
    flatten,
    level_key_of,
)
from limelight.console.numbers import ascii_whole
from limelight.console.query_form import (
    LIST_OPERATIONS,
    NO_VALUE_OPERATIONS,
    OPERATIONS,
    FormRows,
    fields_from_params,
)
from limelight.console.render import query_string, render
from limelight.console.route import console_router
from limelight.console.running import outcomes, start
from limelight.console.scope import Here, Place
from limelight.console.timeframe import PRESETS, Window, now_ms, window_of
from limelight.datasets import SYSTEM_KEYS, list_datasets
from limelight.errors import BadRequest, ExposedError, NotFound
from limelight.ids import id_floor
from limelight.ingest.service import check_dataset
from limelight.query.field_values import DEFAULT_LIMIT
from limelight.query.keys import valid_key
from limelight.query.spec import QueryFields, validate_fields
from limelight.runs.investigate import field_values
from limelight.runs.waiting import read_answer
from limelight.times import DAY_MS, MINUTE_MS, Timeframe
from limelight.web.access import note_error
from limelight.web.problems import json_response
from limelight.web.request import runtime_of

router = console_router()
PAGE_SIZE = 50
MAX_OFFSET = 1_000_000
MAX_COLUMNS = 12
# The dataset picker lists what had events in at least the last day.
PICKER_MS = DAY_MS
# The parameters the explorer keeps from a page to the next.
SEARCH_PARAMS = ("q", "qr", "qc", "fk", "fo", "fv")
# The most keys the field sidebar lists (a dataset may hold thousands of paths; any key
# can still be typed in a filter row). System fields every event has one of, or that
# are unique per event, are not listed.
MAX_SIDEBAR_KEYS = 300
UNLISTED_KEYS = frozenset({"_timestamp", "_id", "_dataset"})
# An event's value is shown whole in its detail up to this many characters.
MAX_DETAIL_TEXT = 10_000


@dataclass
class Search:
    """What the address asks the explorer for."""

    dataset: str | None
    window: Window
    pairs: list[tuple[str, str]]  # the needle and filters, as in the address
    columns: list[str] = field(default_factory=list)
    offset: int = 0
    open_key: str | None = None  # the key whose top values the sidebar shows

    @classmethod
    def of(cls, request: Request) -> Search:
        items = list(request.query_params.multi_items())
        single = dict(items)
        dataset = single.get("ds") or None
        if dataset is not None:
            check_dataset(dataset)
        columns = [c.strip() for c in single.get("cols", "").split(",") if c.strip()]
        offset_text = single.get("offset", "0")
        offset = ascii_whole(offset_text, 16) or 0
        open_key = single.get("open", "").strip() or None
        if open_key is not None and valid_key(open_key):
            open_key = None  # not a key: nothing to open
        return cls(
            dataset=dataset,
            window=window_of(single),
            pairs=[(k, v) for k, v in items if k in SEARCH_PARAMS],
            columns=columns[:MAX_COLUMNS],
            offset=min(offset, MAX_OFFSET),
            open_key=open_key,
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
        if open_key := change.get("open", self.open_key):
            out.append(("open", open_key))
        return out

    def actions(self, base: str, dataset: str) -> FieldActions:
        """Where this page's keys and values lead (filters, group-bys, columns)."""
        return FieldActions(
            base=base,
            dataset=dataset,
            window=self.window.params(),
            pairs=self.pairs,
            columns=self.columns,
            extra=[("open", self.open_key)] if self.open_key else [],
        )

    def fields(
        self,
        dataset: str,
        calculations: list[dict[str, Any]] | None = None,
        group_bys: list[dict[str, Any]] | None = None,
    ) -> QueryFields:
        query = fields_from_params(self.pairs)
        query["namespaces"] = [{"type": "dataset", "value": dataset}]
        if calculations:
            query["calculations"] = calculations
        if group_bys:
            query["group_bys"] = group_bys
        return validate_fields(query)


def _histogram(data: dict[str, Any] | None, level_key: str | None) -> dict[str, Any] | None:
    """Bucket starts and event counts for the chart (a bucket without events is 0): one
    line of counts, or with ``level_key`` a line per level (the most frequent
    ``MAX_LEVEL_SERIES``, the rest summed as "other levels"), stacked by the page."""
    if not data or "series" not in data:
        return None
    times = [bucket["time"] for bucket in data["series"]]
    if level_key is None:
        counts = [
            sum(row["aggregates"].get("COUNT", 0) for row in bucket["data"])
            for bucket in data["series"]
        ]
        return {"times": times, "lines": [{"label": "events", "values": counts}]}
    totals = sorted(data.get("aggregates") or [], key=lambda a: -int(a["values"].get("COUNT") or 0))
    named = [_level_label(a["groups"].get(level_key)) for a in totals[:MAX_LEVEL_SERIES]]
    slots = {label: i for i, label in enumerate(named)}
    rest = len(named) if len(totals) > MAX_LEVEL_SERIES else None
    width = len(named) + (rest is not None)
    values = [[0] * len(times) for _ in range(width)]
    for t, bucket in enumerate(data["series"]):
        for row in bucket["data"]:
            slot = slots.get(_level_label(row["groups"].get(level_key)), rest)
            if slot is not None:
                values[slot][t] += int(row["aggregates"].get("COUNT") or 0)
    labels = [*named, "other levels"][:width]
    return {
        "times": times,
        "lines": [
            {"label": label, "values": v, "tone": tone_of(label)}
            for label, v in zip(labels, values, strict=True)
        ],
        "stacked": True,
    }


def _level_label(value: Any) -> str:
    return "no level" if value is None else str(value)


async def top_values(
    request: Request, here: Place, search: Search, dataset: str, key: str
) -> dict[str, Any]:
    """The sidebar's answer for ``key``: its top values among the page's events (its
    timeframe, search and filters), each with its share and its filters, and the key's
    group-by and column addresses. The same read as ``GET /v1/datasets/<name>/keys/<key>/
    values``, on the workspace's turn."""
    if problem := valid_key(key):
        raise BadRequest("Invalid key", errors=[{"field": "key", "message": problem}])
    rt = runtime_of(request)
    fields = search.fields(dataset)
    window = search.window

    def work(deadline: float) -> dict[str, Any]:
        return field_values(
            rt.events,
            here.tenant,
            dataset,
            key,
            fields.filters or [],
            Timeframe(window.from_ms, window.to_ms),
            DEFAULT_LIMIT,
            rt.runs.limits,
            deadline,
            needle=fields.needle,
        )

    answer = await read_answer(rt.runs, here.tenant, work)
    actions = search.actions(here.base, dataset)
    values = [
        {**actions.value_row(key, v["value"]), "count": v["count"], "share": v["share"]}
        for v in answer["values"]
    ]
    return {
        "key": key,
        "values": values,
        "distinct": answer["distinct"],
        "events": answer["events"],
        "sampled": answer["sampled"],
        "group_by": actions.group_by(key),
        "column": actions.column(key),
    }


def sidebar_keys(keys: list[dict[str, Any]], search: Search, here: Place, dataset: str) -> Any:
    """The keys the sidebar lists, each with the address that opens it (``open=``) and
    the address of its values for the page's script."""
    listed = [k for k in keys if k["key"] not in UNLISTED_KEYS]
    shown = []
    for k in listed[:MAX_SIDEBAR_KEYS]:
        name = k["key"]
        shown.append(
            {
                "key": name,
                "types": k.get("types", []),
                "open": f"{here.base}/events{query_string(search.params(open=name))}",
                "values": f"{here.base}/events/values"
                + query_string([*search.params(open=None), ("key", name)]),
            }
        )
    return {"keys": shown, "more": max(len(listed) - MAX_SIDEBAR_KEYS, 0)}


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
        "level_key": None,
        "sidebar": None,
        "opened": None,
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
    values_task = None
    if search.open_key is not None:
        values_task = asyncio.ensure_future(
            _opened(request, here, search, dataset, search.open_key)
        )
    try:
        page_view = await start(
            rt, here.tenant, page_fields, window, limit=PAGE_SIZE, offset=search.offset
        )
        # The histogram is stacked by the dataset's level key: its keys are read while
        # the page's run goes.
        level_key = level_key_of(await keys_task)
        if level_key is not None:
            count_fields = search.fields(
                dataset, [{"operator": "COUNT"}], group_bys=[{"key": level_key}]
            )
        views = [page_view, await start(rt, here.tenant, count_fields, window)]
        page, counts = await outcomes(rt, here.tenant, views)
    except ExposedError as exc:
        context["error"] = exc.reason or exc.message
        context["keys"] = await keys_task
        if values_task is not None:
            values_task.cancel()
        return render("explorer.html", exc.status, **context)
    context["keys"] = keys = await keys_task
    context["level_key"] = level_key
    context["sidebar"] = sidebar_keys(keys, search, here, dataset)
    context["opened"] = await values_task if values_task is not None else None
    context["error"] = page.error or counts.error
    back = search.params(offset=search.offset)
    if page.data is not None:
        lines: list[EventLine] = [
            event_line(here.base, event, search.columns, back, level_key)
            for event in page.data["events"]
        ]
        context["lines"] = lines
        context["total"] = page.data["count"]
    histogram = _histogram(counts.data, level_key)
    if histogram is not None:  # the x axis spans the timeframe, events or not
        histogram["span"] = [window.from_ms, window.to_ms]
    context["histogram"] = histogram
    context["page_size"] = PAGE_SIZE
    return render("explorer.html", **context)


async def _opened(
    request: Request, here: Place, search: Search, dataset: str, key: str
) -> dict[str, Any]:
    """The open key's values for the page, or why they could not be read (the page is
    shown all the same)."""
    try:
        return await top_values(request, here, search, dataset, key)
    except ExposedError as exc:
        return {"key": key, "error": exc.reason or exc.message}


@router.get("/env/{environment_id}/events/values")
async def values_of_key(request: Request, here: Here) -> Response:
    """A key's top values among the Events page's events, as JSON for the field sidebar:
    the address is the page's (``ds``, timeframe, search, filters) with ``key``."""
    search = Search.of(request)
    key = request.query_params.get("key", "")
    if search.dataset is None:
        raise BadRequest("a dataset is needed", errors=[{"field": "ds", "message": "required"}])
    search.open_key = key
    answer = await top_values(request, here, search, search.dataset, key)
    return json_response(answer, headers={"Cache-Control": "no-store"})


@router.get("/env/{environment_id}/events/{dataset}/{event_id}")
async def event_detail(request: Request, here: Here, dataset: str, event_id: str) -> Response:
    """One event as a table of its keys (each a filter, a group-by or a column of the
    Events page it was opened from) and as formatted JSON; ``t`` (its time) finds it
    fast. The rest of the address is that Events page's (dataset, timeframe, search,
    filters, columns), which the breadcrumb leads back to."""
    rt = runtime_of(request)
    check_dataset(dataset)
    came_from = Search.of(request)
    t = ascii_whole(request.query_params.get("t", ""), 15)
    if t is not None:
        window = Window(Timeframe(t, t + 1))
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
    # Filters added here apply to the page it came from, of this event's dataset.
    if came_from.dataset != dataset:
        came_from = Search(dataset, came_from.window, [], came_from.columns)
    actions = came_from.actions(here.base, dataset)
    rows = [
        {
            "key": key,
            **actions.value_row(key, value, width=MAX_DETAIL_TEXT),
            "group_by": actions.group_by(key),
            "column": actions.column(key),
        }
        for key, value in flatten(event)
    ]
    return render(
        "event.html",
        here=here,
        section="events",
        event=event,
        rows=rows,
        back=actions.back(),
        filtered=bool(came_from.pairs),
        json_text=pretty(event),
        trace_id=trace_id_of(event),
        around=[("ds", dataset), *around.params()],
    )
