"""Reads over a dataset of spans that answer at once: trace search and the service
overview. Each looks up the types its keys are stored as (``runs.lookups``), compiles
its statement in the query layer (tenant filter first, the run limits as SETTINGS) and
runs it within a query run's limits; ``QueryRunService.read`` queues it on the workers
in the workspace's turn."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from limelight.errors import BadRequest, StoreError, Unavailable
from limelight.ingest.service import check_dataset
from limelight.query.compile import json_keys, pattern_fields, presence_keys
from limelight.query.keys import MAX_LISTED_SUB_PATHS, StoredTypes
from limelight.query.plans import CompiledQuery, PatternFields, Timeframe
from limelight.query.scope import Scope
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
from limelight.query.traces import TraceSearch, compile_search, shape_traces
from limelight.runs.limits import RunLimits, store_failure_message, timeout_message
from limelight.runs.lookups import paths_below, stored_types
from limelight.store.events.base import EventStore, QueryResult
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


class _Reader:
    """One read's statements on the store, within the run limits and its deadline."""

    def __init__(
        self,
        store: EventStore,
        tenant: Tenant,
        limits: RunLimits,
        deadline: float,
        patterns: PatternFields | None = None,
    ) -> None:
        self.store, self.tenant, self.limits = store, tenant, limits
        self.deadline, self.patterns = deadline, patterns or PatternFields()
        self.scope = Scope(tenant.workspace_id, tenant.environment_id, limits.run_options())

    def _guard(self) -> None:
        if time.monotonic() >= self.deadline:
            raise Unavailable(timeout_message(self.limits.max_run_seconds))

    def stored(self, keys: Sequence[str], presence: Sequence[str] = ()) -> StoredTypes:
        """The types the keys hold in the tenant's events (and the paths below the keys
        whose presence is tested), as a run looks them up."""
        self._guard()
        try:
            held = stored_types(self.store, self.tenant, sorted(set(keys)), self.limits)
            below = paths_below(
                self.store, self.tenant, presence, MAX_LISTED_SUB_PATHS, self.limits
            )
        except StoreError as exc:
            raise Unavailable(store_failure_message(exc, self.limits)) from exc
        return StoredTypes(held, below)

    def run(self, statement: CompiledQuery) -> QueryResult:
        self._guard()
        try:
            return self.store.read(statement)
        except StoreError as exc:
            raise Unavailable(store_failure_message(exc, self.limits, self.patterns)) from exc


def search_traces(
    store: EventStore, tenant: Tenant, search: TraceSearch, limits: RunLimits, deadline: float
) -> dict[str, Any]:
    """``{"traces": [...]}``: see ``query.traces``."""
    fields = QueryFields(filters=search.filters)
    reader = _Reader(store, tenant, limits, deadline, pattern_fields(fields))
    stored = reader.stored([*SPAN_KEYS, *json_keys(fields)], presence_keys(fields))
    plan = compile_search(search, reader.scope, store.table, stored)
    if plan is None:
        return {"traces": []}
    return shape_traces(reader.run(plan.statement).rows)


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
    reader = _Reader(store, tenant, limits, deadline)
    stored = reader.stored(SPAN_KEYS)
    series = Series(timeframe, granularity_ms) if granularity_ms is not None else None
    plan = overview_statement(
        reader.scope,
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
    return shape_overview(
        plan, reader.run(plan.statement).rows, "service" if service is None else "operation"
    )


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
    reader = _Reader(store, tenant, limits, deadline)
    stored = reader.stored(SPAN_KEYS)
    statement = errors_statement(
        reader.scope, store.table, dataset, timeframe, stored, service, limit
    )
    return [] if statement is None else shape_errors(reader.run(statement).rows)
