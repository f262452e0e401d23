"""Running one compiled plan on the events store and turning its rows into the run's data."""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any

import orjson

from limelight.errors import LimelightError, StoreError
from limelight.query.compile import (
    CalculationsPlan,
    CompiledQuery,
    EventsPlan,
    Plan,
    RunOptions,
    Statement,
    Timeframe,
    compile_run,
    json_keys,
    presence_keys,
)
from limelight.query.keys import MAX_LISTED_SUB_PATHS, UNKNOWN, StoredTypes
from limelight.query.results import events_rows, newest_rows, shape
from limelight.query.scope import StatementTooLarge
from limelight.query.spec import QueryFields
from limelight.runs.limits import (
    RunLimits,
    result_too_large_message,
    store_failure_message,
    timeout_message,
)
from limelight.runs.lookups import paths_below, stored_types, unknown_dataset_warnings
from limelight.store.events.base import EventStore, QueryResult
from limelight.tenant import Tenant


class RunFailed(LimelightError):
    """A run that ends FAILED; the message is shown to the client as the run's error."""


def _statement_runner(
    store: EventStore, plan: Plan, limits: RunLimits
) -> Callable[[CompiledQuery], QueryResult]:
    """Runs one statement of ``plan``; an engine failure becomes ``RunFailed``."""

    def run(statement: CompiledQuery) -> QueryResult:
        try:
            return store.read(statement)
        except StoreError as exc:
            raise RunFailed(store_failure_message(exc, limits, plan.patterns)) from exc

    return run


def typed_plan(
    store: EventStore,
    tenant: Tenant,
    fields: QueryFields,
    untyped: Plan,
    compile_with: Callable[[StoredTypes], Plan],
    limits: RunLimits,
) -> Plan:
    """The run's plan compiled for the types its JSON keys hold in the tenant's events.

    ``untyped`` (every type read) serves when the query reads no JSON key. The
    lookup costs a few milliseconds; reading only the types held saves about
    0.1 s per absent type over 10M events (P99 of a number, COUNT_DISTINCT of a string).
    The keys whose presence the run tests also get the paths below them (an object
    is stored as those), 3.5 ms more, so that presence reads only those paths.
    """
    keys = json_keys(fields)
    if not keys:
        return untyped
    try:
        held = stored_types(store, tenant, keys, limits)
        below = paths_below(store, tenant, presence_keys(fields), MAX_LISTED_SUB_PATHS, limits)
    except StoreError as exc:
        raise RunFailed(store_failure_message(exc, limits)) from exc
    try:
        return compile_with(StoredTypes(held, below))
    except StatementTooLarge:
        # The types held can make a statement longer than the untyped one, which was
        # accepted when the run was created (an object key read as each of its paths):
        # that one reads every type and gives the same answer.
        return untyped


def dataset_warnings(
    store: EventStore, tenant: Tenant, fields: QueryFields, limits: RunLimits
) -> list[str]:
    """What the run should say beside its empty result: each dataset it names that the
    environment has never held (a typo answers empty otherwise, silently)."""
    names = [ns.value for ns in fields.namespaces or [] if ns.type == "dataset"]
    if not names:
        return []
    try:
        return unknown_dataset_warnings(store, tenant, names, limits)
    except StoreError as exc:
        raise RunFailed(store_failure_message(exc, limits)) from exc


def _run_side_by_side(
    store: EventStore, plan: CalculationsPlan, limits: RunLimits, beside: Executor | None
) -> dict[Statement, QueryResult]:
    (first_name, first), *others = plan.statements.by_name().items()
    run = _statement_runner(store, plan, limits)
    pending: dict[Statement, Future[QueryResult]] = {}
    if beside is not None:
        pending = {name: beside.submit(run, st) for name, st in others}
    results = {first_name: run(first)}
    for name, statement in others:
        future = pending.get(name)
        results[name] = future.result() if future else run(statement)
    return results


def _run_events(
    store: EventStore, plan: EventsPlan, limits: RunLimits, beside: Executor | None
) -> dict[Statement, QueryResult]:
    """The page, then the count only when the page cannot tell it.

    ``recent`` (the page by time alone in the timeframe's last hour) first, then
    ``newest`` (the same over the whole timeframe) when ``recent`` holds too few
    events, ``events`` (the exact page) only when those cannot tell the page
    (``results.events_rows``). A page that is not full ends the matches, so only
    a full page, or an empty page past the first, needs the counting statement,
    which is a second full scan for a needle search (7.97 s against 3.73 s at
    10M events without it). A count the plan marks cheap starts beside the page
    instead, and is dropped if the page tells the count.
    """
    statements = plan.statements
    run = _statement_runner(store, plan, limits)
    counting = None
    if plan.cheap_count and beside is not None:
        counting = beside.submit(run, statements.count)
    results: dict[Statement, QueryResult] = {}
    for name, by_time in (
        (Statement.RECENT, statements.recent),
        (Statement.NEWEST, statements.newest),
    ):
        held = {n: r.rows for n, r in results.items()}
        if by_time is not None and newest_rows(plan, held) is None:
            results[name] = run(by_time)
    page, count = events_rows(plan, {n: r.rows for n, r in results.items()})
    if page is None:
        results[Statement.EVENTS] = run(statements.events)
        page, count = events_rows(plan, {Statement.EVENTS: results[Statement.EVENTS].rows})
    if count is None:
        results[Statement.COUNT] = counting.result() if counting else run(statements.count)
    return results


def execute_data(
    store: EventStore,
    plan: Plan,
    limits: RunLimits,
    deadline: float,
    beside: Executor | None = None,
) -> dict[str, Any]:
    """The run's ``data``, or ``RunFailed`` with a sentence saying why.

    A calculations plan's statements are independent (aggregates and series,
    when there are two): with ``beside``, all but the first run there while the
    first runs here. On 2 cores that took 10-30% off a run, as each statement
    has phases that leave a core idle. An events plan runs its page first and
    counts only when it must (see ``_run_events``), unless its count is cheap.

    ``deadline`` is on ``time.monotonic``. The engine also stops each statement at
    the run's limit (``max_execution_time`` in the compiled SQL), so an overlong
    run does not keep the CPU busy after it is reported failed.
    """
    if time.monotonic() >= deadline:
        raise RunFailed(timeout_message(limits.max_run_seconds))
    started = time.perf_counter()
    if isinstance(plan, EventsPlan):
        results = _run_events(store, plan, limits, beside)
    else:
        results = _run_side_by_side(store, plan, limits, beside)
    elapsed = time.perf_counter() - started
    data = shape(plan, {name: result.rows for name, result in results.items()})
    data["statistics"] = {
        "elapsed": round(elapsed, 6),
        "rows_read": sum(r.rows_read for r in results.values()),
        "bytes_read": sum(r.bytes_read for r in results.values()),
    }
    return data


def execute_plan(
    store: EventStore,
    plan: Plan,
    limits: RunLimits,
    deadline: float,
    beside: Executor | None = None,
    warn: Callable[[], list[str]] | None = None,
) -> bytes:
    """``execute_data`` as the JSON a run keeps, within the result size and time limits.

    When the run found nothing, ``warn`` says why it may be (its sentences go beside
    the result, as ``data.warnings``, when there are any): asked only then, so a run
    that finds events pays nothing for it. "Nothing" is the answer's, not the engine's
    rows read: a granule holding another dataset's events of the tenant (one INSERT
    of several datasets) is read and filtered out.
    """
    data = execute_data(store, plan, limits, deadline, beside)
    empty = not data.get("events") and not any(
        a["values"].get("_count") for a in data.get("aggregates") or []
    )
    warnings = warn() if warn is not None and empty else []
    if warnings:
        data["warnings"] = warnings
    payload = orjson.dumps(data)
    if len(payload) > limits.max_result_bytes:
        raise RunFailed(result_too_large_message(limits))
    if time.monotonic() > deadline:
        raise RunFailed(timeout_message(limits.max_run_seconds))
    return payload


def run_once(
    store: EventStore,
    tenant: Tenant,
    fields: QueryFields,
    timeframe: Timeframe,
    options: RunOptions,
    limits: RunLimits,
) -> dict[str, Any]:
    """One run's ``data`` without a run record: for alert checks, the same compiling,
    type lookup, execution and limits as a query run."""

    def compile_with(stored: StoredTypes) -> Plan:
        return compile_run(
            fields,
            workspace_id=tenant.workspace_id,
            environment_id=tenant.environment_id,
            table=store.table,
            dictionaries=store.text_dictionaries,
            timeframe=timeframe,
            options=options,
            stored=stored,
        )

    plan = typed_plan(store, tenant, fields, compile_with(UNKNOWN), compile_with, limits)
    return execute_data(store, plan, limits, time.monotonic() + limits.max_run_seconds)
