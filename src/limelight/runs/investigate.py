"""The investigation reads that answer at once: a key's top values and BubbleUp.

Each looks up the types its keys are stored as (``lookups``, no scan of the
events), compiles its statements in the query layer and runs them within a
run's limits (``runs.reads``); the caller runs them on the workspace's turn
(``QueryRunService.read``).
"""

from __future__ import annotations

from typing import Any

from limelight.errors import NotFound
from limelight.ingest.service import check_dataset
from limelight.query.bubble_up import (
    BubbleUpPlan,
    bounds_of,
    bubble_up_answer,
    candidate_keys,
    compile_bubble_up,
    compile_profile,
    compile_sides,
    number_keys,
    sides_of,
)
from limelight.query.bubble_up_spec import BubbleUpRequest, Region
from limelight.query.compile import pattern_fields
from limelight.query.field_values import compile_field_values, field_values_answer
from limelight.query.keys import SYSTEM_FIELDS, StoredTypes
from limelight.query.lookups import datasets_paths_statement
from limelight.query.plans import PatternFields, Timeframe
from limelight.query.spec import Filter, KeySpec, Needle, QueryFields
from limelight.runs.limits import RunLimits
from limelight.runs.lookups import dataset_exists
from limelight.runs.reads import check_deadline, read_rows, scope_of, types_of
from limelight.store.events.base import EventStore
from limelight.tenant import Tenant

# The most paths of the datasets read to choose BubbleUp's keys (``MAX_KEYS`` are compared).
MAX_PATHS_READ = 10_000


def field_values(
    store: EventStore,
    tenant: Tenant,
    dataset: str,
    key: str,
    filters: list[Filter],
    timeframe: Timeframe,
    limit: int,
    limits: RunLimits,
    deadline: float,
    needle: Needle | None = None,
) -> dict[str, Any]:
    """``{key, values, distinct, events, sampled}``; 404 for a dataset without events."""
    check_dataset(dataset)
    limits.check_timeframe(timeframe.from_ms, timeframe.to_ms)
    query = QueryFields(filters=filters, needle=needle)
    stored = types_of(store, tenant, [query, _reading(key)], limits)
    plan = compile_field_values(
        scope_of(tenant, limits),
        store.table,
        dataset,
        key,
        filters,
        timeframe,
        stored,
        limit,
        needle=needle,
        dictionaries=store.text_dictionaries,
    )
    held = int(read_rows(store, plan.events, limits)[0]["events"])
    read = plan.read(held)
    rows = read_rows(store, read, limits, pattern_fields(query)) if held else []
    if plan.cut(read, rows):
        read = plan.statement
        rows = read_rows(store, read, limits, pattern_fields(query))
    if not rows and not dataset_exists(store, tenant, dataset, limits):
        raise NotFound(f"no events in a dataset named {dataset!r} in this environment")
    check_deadline(deadline, limits)
    return field_values_answer(plan, rows, read)


def _reading(key: str) -> QueryFields:
    """Fields that read ``key``'s values: asks the lookups for its types."""
    return QueryFields(group_bys=[KeySpec(key=key)])


def _patterns(request: BubbleUpRequest) -> PatternFields:
    query = pattern_fields(request.fields)
    if isinstance(request.selection, Region):
        return query
    selection = pattern_fields(request.selection)
    return PatternFields(
        query.regex + tuple(f"selection.{f}" for f in selection.regex),
        query.like + tuple(f"selection.{f}" for f in selection.like),
    )


def plan_bubble_up(
    store: EventStore, tenant: Tenant, request: BubbleUpRequest, limits: RunLimits
) -> BubbleUpPlan:
    """The comparison's plan: its keys from the recorded paths, the events of each side
    and their samples' windows from a first statement over the query's and selection's
    columns, and the bounds of its number keys from a second over a sample."""
    scope = scope_of(tenant, limits)
    fields = request.fields
    datasets = sorted({ns.value for ns in fields.namespaces or [] if ns.type == "dataset"})
    listed = datasets_paths_statement(scope, store.paths_table, datasets, MAX_PATHS_READ)
    paths = {r["path"]: frozenset(r["types"]) for r in read_rows(store, listed, limits)}
    keys, left_out = candidate_keys(paths, request.selection_keys())
    selection = request.selection
    if isinstance(selection, Region):
        selection = _reading(selection.key)
    looked_up = types_of(store, tenant, [fields, selection], limits)
    held = dict(looked_up.paths or {})
    held.update({k: paths[k] for k in keys if k not in SYSTEM_FIELDS})
    stored = StoredTypes(held, looked_up.below)
    patterns = _patterns(request)
    dictionaries = store.text_dictionaries
    sides_statement = compile_sides(scope, store.table, request, stored, dictionaries)
    counted = read_rows(store, sides_statement, limits, patterns)
    sides = sides_of(counted[0] if counted else None)
    numbers = number_keys(keys, stored)
    bounds: dict[str, list[float]] = {}
    if numbers and sum(sides.counts):
        timeframe = Timeframe(request.from_ms, request.to_ms)
        statement = compile_profile(
            scope, store.table, fields, timeframe, stored, numbers, sides.query, dictionaries
        )
        found = read_rows(store, statement, limits, patterns)
        bounds = bounds_of(numbers, found[0] if found else None)
    return compile_bubble_up(
        scope, store.table, request, stored, keys, bounds, left_out, sides, dictionaries
    )


def bubble_up(
    store: EventStore, tenant: Tenant, request: BubbleUpRequest, limits: RunLimits, deadline: float
) -> dict[str, Any]:
    """``{selection, baseline, sampled, keys_left_out, dimensions}``, see ``query.bubble_up``."""
    limits.check_timeframe(request.from_ms, request.to_ms)
    plan = plan_bubble_up(store, tenant, request, limits)
    rows = read_rows(store, plan.statement, limits, _patterns(request))
    check_deadline(deadline, limits)
    return bubble_up_answer(plan, rows)
