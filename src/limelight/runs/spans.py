"""Reads over a dataset of spans that answer at once: trace search and the service
overview. Each looks up the types its keys are stored as, compiles its statements in
the query layer (tenant filter first, the run limits as SETTINGS) and runs them within
a query run's limits (``runs.reads``); ``QueryRunService.read`` queues it on the
workers in the workspace's turn."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from limelight.errors import BadRequest
from limelight.ingest.service import check_dataset
from limelight.query.compile import pattern_fields
from limelight.query.plans import CompiledQuery, PatternFields, Timeframe
from limelight.query.services import (
    MAX_GROUPS,
    Series,
    errors_statement,
    overview_statement,
    shape_errors,
    shape_overview,
)
from limelight.query.spans import SPAN_KEYS
from limelight.query.spec import QueryFields
from limelight.query.traces import TraceSearch, compile_search
from limelight.runs.limits import RunLimits
from limelight.runs.reads import NO_PATTERNS, check_deadline, read_rows, scope_of, types_of
from limelight.store.events.base import EventStore
from limelight.tenant import Tenant


def check_read(limits: RunLimits, dataset: str, timeframe: Timeframe) -> None:
    """400 naming the field for a dataset name or a timeframe a query run would refuse;
    checked before the read is queued."""
    try:
        check_dataset(dataset)
    except BadRequest as exc:
        raise BadRequest(
            message="Invalid dataset",
            errors=[{"field": "dataset", "message": exc.reason or "invalid dataset name"}],
        ) from None
    limits.check_timeframe(timeframe.from_ms, timeframe.to_ms)


def search_traces(
    store: EventStore, tenant: Tenant, search: TraceSearch, limits: RunLimits, deadline: float
) -> dict[str, Any]:
    """``{"traces": [...]}``: see ``query.traces``."""
    fields = QueryFields(filters=search.filters)
    check_deadline(deadline, limits)
    stored = types_of(store, tenant, [fields], limits, also=SPAN_KEYS)
    plan = compile_search(search, scope_of(tenant, limits), store.table, stored)
    if plan is None:
        return {"traces": []}
    patterns = pattern_fields(fields)

    return plan.answer(_reader(store, limits, deadline, patterns))


def _reader(
    store: EventStore, limits: RunLimits, deadline: float, patterns: PatternFields = NO_PATTERNS
) -> Callable[[CompiledQuery], list[dict[str, Any]]]:
    """Runs a read's statements one by one, each within the deadline."""

    def run(statement: CompiledQuery) -> list[dict[str, Any]]:
        check_deadline(deadline, limits)
        return read_rows(store, statement, limits, patterns)

    return run


def service_overview(
    store: EventStore,
    tenant: Tenant,
    dataset: str,
    timeframe: Timeframe,
    limits: RunLimits,
    deadline: float,
    *,
    service: str | None = None,
    granularity_ms: int | None = None,
    limit: int = MAX_GROUPS,
) -> list[dict[str, Any]]:
    """Per service (or per operation of ``service``): see ``query.services``; with
    ``granularity_ms``, each with its series."""
    check_deadline(deadline, limits)
    stored = types_of(store, tenant, [], limits, also=SPAN_KEYS)
    series = Series(timeframe, granularity_ms) if granularity_ms is not None else None
    plan = overview_statement(
        scope_of(tenant, limits),
        store.table,
        dataset,
        timeframe,
        stored,
        service=service,
        series=series,
        limit=limit,
    )
    if plan is None:
        return []
    rows = plan.answer(_reader(store, limits, deadline))
    return shape_overview(plan, rows, "service" if service is None else "operation")


def service_errors(
    store: EventStore,
    tenant: Tenant,
    dataset: str,
    timeframe: Timeframe,
    service: str,
    limit: int,
    limits: RunLimits,
    deadline: float,
) -> list[dict[str, Any]]:
    """A service's errors grouped by message: see ``query.services.errors_statement``."""
    check_deadline(deadline, limits)
    stored = types_of(store, tenant, [], limits, also=SPAN_KEYS)
    scope = scope_of(tenant, limits)
    statement = errors_statement(scope, store.table, dataset, timeframe, stored, service, limit)
    if statement is None:
        return []
    check_deadline(deadline, limits)
    return shape_errors(read_rows(store, statement, limits))
