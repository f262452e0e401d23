"""Services: each service's requests, errors and latency over a timeframe, and a service's
operations, slowest traces and errors.

The figures are the service overview of the API (``runs.spans``, queued on the
query run workers as ``GET /v1/services`` is): a service's requests are its
entry spans (its roots when it has none), see ``query.services``. A service's
page runs its four reads side by side.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import Response

from limelight.console.event_lines import as_trace_id
from limelight.console.render import query_string, render
from limelight.console.route import console_router
from limelight.console.scope import Here
from limelight.console.timeframe import PRESETS, Window, window_of
from limelight.console.trace_search import DEFAULT_DATASET, traces_address
from limelight.console.traces import TraceRow
from limelight.errors import BadRequest, ExposedError
from limelight.query.buckets import granularity_for
from limelight.query.plans import Timeframe
from limelight.query.traces import validate_search
from limelight.runs.spans import check_read, search_traces, service_errors, service_overview
from limelight.runs.waiting import read_answer
from limelight.runtime import Runtime
from limelight.tenant import Tenant
from limelight.web.access import note_error
from limelight.web.paths import TEXT
from limelight.web.request import runtime_of

router = console_router()
T = TypeVar("T")
SLOWEST_TRACES = 10
ERROR_GROUPS = 20
OPERATIONS = 100


def service_path(base: str, name: str) -> str:
    """A service's page; its name is one segment of the path, whatever it holds."""
    return f"{base}/services/{quote(name, safe='')}"


def _series_data(window: Window, rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """What the page's script charts: the buckets' times once, each row's counts."""
    first = rows[0]["series"] if rows else []
    return {
        "span": [window.from_ms, window.to_ms],
        "times": [b["time"] for b in first],
        "rows": [
            {
                "requests": [b["requests"] for b in r["series"]],
                "errors": [b["errors"] for b in r["series"]],
            }
            for r in rows
        ],
    }


class _Reads:
    """A page's reads over one dataset and timeframe, each in the workspace's turn."""

    def __init__(self, rt: Runtime, tenant: Tenant, dataset: str, window: Window) -> None:
        self.rt, self.tenant, self.dataset = rt, tenant, dataset
        self.frame = Timeframe(window.from_ms, window.to_ms)
        check_read(rt.runs.limits, dataset, self.frame)
        self.step = granularity_for(self.frame, None)

    async def _read(self, job: Callable[[float], T]) -> T:
        return await read_answer(self.rt.runs, self.tenant, job)

    async def overview(self, service: str | None = None) -> list[dict[str, Any]]:
        rt = self.rt
        return await self._read(
            lambda deadline: service_overview(
                rt.events,
                self.tenant,
                self.dataset,
                self.frame,
                rt.runs.limits,
                deadline,
                service=service,
                granularity_ms=self.step,
                limit=OPERATIONS if service is not None else 1_000,
            )
        )

    async def errors(self, service: str) -> list[dict[str, Any]]:
        rt = self.rt
        return await self._read(
            lambda deadline: service_errors(
                rt.events,
                self.tenant,
                self.dataset,
                self.frame,
                service,
                ERROR_GROUPS,
                rt.runs.limits,
                deadline,
            )
        )

    async def slowest(self, service: str) -> dict[str, Any]:
        rt = self.rt
        search = validate_search(
            {
                "dataset": self.dataset,
                "from": self.frame.from_ms,
                "to": self.frame.to_ms,
                "services": [service],
                "orderBy": "duration",
                "limit": SLOWEST_TRACES,
            }
        )
        return await self._read(
            lambda deadline: search_traces(rt.events, self.tenant, search, rt.runs.limits, deadline)
        )


def _settled(answer: T | BaseException) -> T:
    if isinstance(answer, BaseException):
        raise answer
    return answer


def _dataset_of(request: Request) -> str:
    return request.query_params.get("ds", "").strip() or DEFAULT_DATASET


def _page_params(dataset: str, window: Window) -> list[tuple[str, str]]:
    return [("ds", dataset), *window.params()]


@router.get("/env/{environment_id}/services")
async def services_page(request: Request, here: Here) -> Response:
    rt = runtime_of(request)
    dataset = _dataset_of(request)
    window = window_of(request.query_params, default="1h")
    context: dict[str, Any] = {
        "here": here,
        "section": "services",
        "dataset": dataset,
        "window": window,
        "presets": PRESETS,
        "services": None,
        "error": None,
        "service_path": service_path,
        "page_params": _page_params(dataset, window),
    }
    try:
        found = await _Reads(rt, here.tenant, dataset, window).overview()
    except ExposedError as exc:
        note_error(request, exc)
        context["error"] = exc.reason or exc.message
        return render("services.html", exc.status, **context)
    context["services"] = found
    context["series"] = _series_data(window, found)
    return render("services.html", **context)


def _error_groups(
    base: str, dataset: str, window: Window, service: str, groups: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Each error with the Traces page's search for the traces that failed so, and the
    newest such trace's page."""
    out = []
    for group in groups:
        filters = [("error", "=", group["error"])] if group["error"] is not None else []
        address = traces_address(
            window, dataset=dataset, service=service, status="error", filters=filters
        )
        tid = as_trace_id(str(group["traceId"] or ""))
        out.append(
            {
                **group,
                "traces": f"{base}/traces{query_string(address)}",
                "latest": f"{base}/traces/{tid}?t={group['lastSeen']}" if tid else None,
            }
        )
    return out


@router.get(f"/env/{{environment_id}}/services/{{name:{TEXT}}}")
async def service_page(request: Request, here: Here, name: str) -> Response:
    rt = runtime_of(request)
    dataset = _dataset_of(request)
    window = window_of(request.query_params, default="1h")
    if not name.strip():
        raise BadRequest("a service's name is not empty")
    context: dict[str, Any] = {
        "here": here,
        "section": "services",
        "service": name,
        "service_path": service_path,
        "dataset": dataset,
        "window": window,
        "presets": PRESETS,
        "error": None,
        "figures": None,
        "operations": [],
        "slowest": [],
        "errors": [],
        "slowest_link": f"{here.base}/traces"
        + query_string(traces_address(window, dataset=dataset, service=name, order="duration")),
        "page_params": _page_params(dataset, window),
    }
    try:
        reads = _Reads(rt, here.tenant, dataset, window)
        # Every read ends before the page answers, the first failure then raised.
        answers = await asyncio.gather(
            reads.overview(),
            reads.overview(name),
            reads.slowest(name),
            reads.errors(name),
            return_exceptions=True,
        )
        overview, operations = _settled(answers[0]), _settled(answers[1])
        slowest, errors = _settled(answers[2]), _settled(answers[3])
    except ExposedError as exc:
        note_error(request, exc)
        context["error"] = exc.reason or exc.message
        return render("service.html", exc.status, **context)
    figures = next((s for s in overview if s["service"] == name), None)
    for operation in operations:
        # Its slowest traces: a span of the service by that name (an operation without
        # a name has no search of its own).
        if operation["operation"] is not None:
            found = traces_address(
                window, dataset=dataset, service=name, name=operation["operation"], order="duration"
            )
            operation["link"] = f"{here.base}/traces" + query_string(found)
    context.update(
        figures=figures,
        operations=operations,
        slowest=[TraceRow.of(here.base, t) for t in slowest["traces"]],
        errors=_error_groups(here.base, dataset, window, name, errors),
        # The service's own chart first, then one per operation.
        series=_series_data(window, [*([figures] if figures else []), *operations]),
        chart_offset=1 if figures else 0,
    )
    return render("service.html", **context)
