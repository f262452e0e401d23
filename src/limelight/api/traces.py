"""Trace search and the service overview, over a dataset of OpenTelemetry spans.

``POST /v1/traces/search`` lists the traces with a matching span;
``GET /v1/services`` gives each service's requests, errors and latency (with
``series=1`` per time bucket too), ``GET /v1/services/<name>/operations`` the
same per span name, ``GET /v1/services/<name>/errors`` a service's errors by
message. The Queries API's rules: an admin key (401 without one, 403 for an
ingest key), 400 naming the field. Each read waits for the workspace's turn on
the query run workers and runs within a run's limits (``QueryRunService.read``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, TypeVar

from fastapi import APIRouter, Depends, Query
from starlette.requests import Request
from starlette.responses import Response

from limelight.api.deps import admin_key
from limelight.api.openapi import KEYED, admin_only, body, error, ok
from limelight.auth.api_keys import KeyContext
from limelight.datasets import timeframe
from limelight.query.buckets import granularity_for
from limelight.query.plans import Timeframe
from limelight.query.services import MAX_GROUPS
from limelight.query.traces import MAX_UNIX_MS, validate_search
from limelight.runs.spans import check_read, search_traces, service_errors, service_overview
from limelight.runs.waiting import read_answer
from limelight.runtime import Runtime
from limelight.web.body import read_json
from limelight.web.paths import TEXT
from limelight.web.problems import json_response
from limelight.web.request import runtime_of

router = APIRouter(tags=["traces"])
AdminKey = Annotated[KeyContext, Depends(admin_key)]
UnixMs = Annotated[int | None, Query(ge=0, le=MAX_UNIX_MS, description="unix ms")]
Dataset = Annotated[str, Query(description="the dataset of spans")]
T = TypeVar("T")


async def _answer(rt: Runtime, key: KeyContext, job: Callable[[float], T]) -> T:
    """``job``'s answer, run on the query run workers in the workspace's turn."""
    return await read_answer(rt.runs, key.tenant, job)


def _timeframe(rt: Runtime, dataset: str, from_ms: int | None, to_ms: int | None) -> Timeframe:
    frame = timeframe(from_ms, to_ms)
    check_read(rt.runs.limits, dataset, frame)
    return frame


async def _overview(
    request: Request,
    key: KeyContext,
    window: tuple[str, int | None, int | None],
    series: bool,
    granularity: int | None,
    service: str | None = None,
    limit: int = MAX_GROUPS,
) -> list[dict[str, Any]]:
    """The service overview (or, given ``service``, its operations), within the window
    ``(dataset, from, to)``, each with its series when asked."""
    rt = runtime_of(request)
    dataset, from_ms, to_ms = window
    frame = _timeframe(rt, dataset, from_ms, to_ms)
    step = granularity_for(frame, granularity) if series else None
    return await _answer(
        rt,
        key,
        lambda deadline: service_overview(
            rt.events,
            key.tenant,
            dataset,
            frame,
            rt.runs.limits,
            deadline,
            service=service,
            granularity_ms=step,
            limit=limit,
        ),
    )


SEARCH = {
    "dataset": "otel",
    "from": 1763780000000,
    "to": 1763783600000,
    "services": ["checkout"],
    "status": "error",
    "minDuration": 250,
    "filters": [{"key": "attributes.http.route", "operation": "=", "value": "/pay"}],
    "orderBy": "duration",
    "limit": 20,
}
FOUND_TRACE = {
    "traceId": "5b8efff798038103d269b633813fc60c",
    "start": 1763781234567,
    "duration": 812.4,
    "rootService": "gateway",
    "rootName": "POST /pay",
    "spans": 14,
    "errors": 2,
    "services": ["checkout", "gateway", "payments"],
}


@router.post(
    "/v1/traces/search",
    summary="Find traces: those with a span matching every condition",
    description="Only `from` and `to` (unix ms) are required. A trace is found when "
    "one of its spans in the timeframe matches `services`, `name`, `status` and every "
    "filter (the query runs' keys and operations), and the whole trace lasts from "
    "`minDuration` to `maxDuration` (ms). Newest (`orderBy: start`) or slowest "
    "(`duration`) first.",
    openapi_extra=admin_only(body("TraceSearch", SEARCH)),
    responses={
        **ok(
            "At most `limit` traces; `start` and `duration` (ms) over the trace's spans "
            "in the timeframe; `rootName` and `rootService` null when the root span "
            "(the one without `parentSpanId`) is missing.",
            {"traces": [FOUND_TRACE]},
        ),
        **KEYED,
        "503": error("The read waited or ran longer than a query run may."),
    },
)
async def search(request: Request, key: AdminKey) -> Response:
    """The traces with a span matching every condition, newest or slowest first."""
    rt = runtime_of(request)
    found = validate_search(await read_json(request, "trace search"))
    check_read(rt.runs.limits, found.dataset, found.timeframe)
    answer = await _answer(
        rt,
        key,
        lambda deadline: search_traces(rt.events, key.tenant, found, rt.runs.limits, deadline),
    )
    return json_response(answer)


SERVICE = {
    "service": "checkout",
    "requests": 52311,
    "errors": 312,
    "errorRate": 0.005964,
    "p50": 41.2,
    "p95": 180.5,
    "p99": 412.9,
    "series": [{"time": 1763780000000, "requests": 871, "errors": 4}],
}


@router.get(
    "/v1/services",
    summary="Requests, errors and latency of each service",
    description="Over each service's entry spans (kind SERVER or CONSUMER; a "
    "service without any counts its root spans). `dataset` defaults to `otel`; unix "
    "ms, `to` defaults to now and `from` to 24 hours before it. `series=1` adds each "
    "service's requests and errors per bucket of `granularity` ms (default: about 60 "
    "buckets).",
    openapi_extra=admin_only(),
    responses={**ok("By service name; durations in ms.", {"services": [SERVICE]}), **KEYED},
)
async def services(
    request: Request,
    key: AdminKey,
    from_: Annotated[int | None, Query(alias="from", ge=0, le=MAX_UNIX_MS)] = None,
    to: UnixMs = None,
    dataset: Dataset = "otel",
    series: Annotated[bool, Query(description="add each service's series")] = False,
    granularity: Annotated[int | None, Query(ge=1, le=MAX_UNIX_MS)] = None,
) -> Response:
    """Each service's requests, errors and latency over its entry spans."""
    found = await _overview(request, key, (dataset, from_, to), series, granularity)
    return json_response({"services": found})


OPERATION = {
    "operation": "POST /pay",
    "requests": 1204,
    "errors": 9,
    "errorRate": 0.007475,
    "p50": 88.0,
    "p95": 240.1,
    "p99": 501.7,
}


# {name:text}: a service name may hold "/" (and any character), which arrives decoded
# from %2F before routing; the fixed last segment still tells the two routes apart
# ("a/errors/operations").
@router.get(
    f"/v1/services/{{name:{TEXT}}}/operations",
    summary="Requests, errors and latency of a service's operations (span names)",
    description="As `/v1/services`, per span name of the service, the most "
    "requested first, at most `limit` (default 100).",
    openapi_extra=admin_only(),
    responses={
        **ok("The most requested first.", {"service": "checkout", "operations": [OPERATION]}),
        **KEYED,
    },
)
async def operations(
    request: Request,
    key: AdminKey,
    name: str,
    from_: Annotated[int | None, Query(alias="from", ge=0, le=MAX_UNIX_MS)] = None,
    to: UnixMs = None,
    dataset: Dataset = "otel",
    series: Annotated[bool, Query(description="add each operation's series")] = False,
    granularity: Annotated[int | None, Query(ge=1, le=MAX_UNIX_MS)] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_GROUPS)] = 100,
) -> Response:
    """The service's operations (span names), the most requested first."""
    window = (dataset, from_, to)
    found = await _overview(request, key, window, series, granularity, name, limit)
    return json_response({"service": name, "operations": found})


SERVICE_ERROR = {
    "error": "card declined",
    "count": 57,
    "lastSeen": 1763783512345,
    "traceId": "5b8efff798038103d269b633813fc60c",
    "operations": ["POST /pay"],
}


@router.get(
    f"/v1/services/{{name:{TEXT}}}/errors",
    summary="A service's errors grouped by message",
    description="The service's spans (any kind) with status ERROR, grouped by "
    "`error` (the status message or exception message), the most frequent first, at "
    "most `limit` (default 20): when the newest was seen, its trace, and the span "
    "names (up to 10) that failed with it.",
    openapi_extra=admin_only(),
    responses={
        **ok("The most frequent first.", {"service": "checkout", "errors": [SERVICE_ERROR]}),
        **KEYED,
    },
)
async def errors(
    request: Request,
    key: AdminKey,
    name: str,
    from_: Annotated[int | None, Query(alias="from", ge=0, le=MAX_UNIX_MS)] = None,
    to: UnixMs = None,
    dataset: Dataset = "otel",
    limit: Annotated[int, Query(ge=1, le=MAX_GROUPS)] = 20,
) -> Response:
    """The service's failed spans grouped by their error message, the most frequent first."""
    rt = runtime_of(request)
    frame = _timeframe(rt, dataset, from_, to)
    found = await _answer(
        rt,
        key,
        lambda deadline: service_errors(
            rt.events, key.tenant, dataset, frame, name, limit, rt.runs.limits, deadline
        ),
    )
    return json_response({"service": name, "errors": found})
