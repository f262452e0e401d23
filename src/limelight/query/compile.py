"""The compiler: validated query + tenant + timeframe -> typed plan of SQL statements.

Pure: no engine, no settings. Every statement is assembled by ``scope.Scope``,
which puts the tenant filter first in its WHERE and the run's limits in its
SETTINGS; every value is a bound parameter; every statement ends in a LIMIT.
The same SQL runs on chDB and on a ClickHouse server.

The stages: ``where`` (the clause every statement of a run shares),
``timeframe`` (buckets), ``events_plan`` (a page of events and their count)
and ``calculations_plan`` (totals and series, with its ``choose_strategy``).
"""

from __future__ import annotations

from dataclasses import replace

from limelight.query.buckets import granularity_for
from limelight.query.calculations_plan import compile_calculations
from limelight.query.events_plan import compile_events
from limelight.query.keys import SYSTEM_FIELDS, UNKNOWN, StoredTypes
from limelight.query.operators import OPERATORS
from limelight.query.plans import (
    CalculationsPlan,
    CompiledQuery,
    EventsPlan,
    PatternFields,
    Plan,
    RunOptions,
    Statement,
    Timeframe,
)
from limelight.query.scope import Scope
from limelight.query.spec import KeyRef, QueryFields
from limelight.query.where import Where

__all__ = [
    "CalculationsPlan",
    "CompiledQuery",
    "EventsPlan",
    "PatternFields",
    "Plan",
    "RunOptions",
    "Statement",
    "Timeframe",
    "compile_run",
    "granularity_for",
    "json_keys",
    "pattern_fields",
    "presence_keys",
]


def compile_run(
    fields: QueryFields,
    *,
    workspace_id: str,
    environment_id: str,
    table: str,
    timeframe: Timeframe,
    options: RunOptions,
    stored: StoredTypes = UNKNOWN,
    dictionaries: str | None = None,
) -> Plan:
    """Compile one run of a validated query for one tenant and timeframe.

    ``table`` is the events table name from the store (trusted, never user input);
    ``stored`` the types the query's JSON keys hold in the tenant's events, when known
    (see ``keys.StoredTypes``); ``dictionaries`` the table whose text indexes' tokens a
    regex needle may read (``EventStore.text_dictionaries``).
    """
    where = Where(Scope(workspace_id, environment_id, options), fields, stored, dictionaries)
    plan: Plan
    if fields.calculations or fields.group_bys:
        plan = compile_calculations(fields, where, table, timeframe, options)
    else:
        plan = compile_events(fields, where, table, timeframe, options)
    return replace(plan, patterns=pattern_fields(fields))


def pattern_fields(fields: QueryFields) -> PatternFields:
    filters = list(enumerate(fields.filters or []))
    regex = [f"filters[{i}].value" for i, f in filters if f.operation == "MATCH_REGEX"]
    if fields.needle is not None and fields.needle.isRegex:
        regex.append("needle.value")
    like = [
        f"filters[{i}].value"
        for i, f in filters
        if f.operation in ("LIKE", "NOT_LIKE") and isinstance(f.value, KeyRef)
    ]
    return PatternFields(tuple(regex), tuple(like))


def json_keys(fields: QueryFields) -> list[str]:
    """The JSON paths a run of ``fields`` reads, for ``StoredTypes`` (system fields left out)."""
    keys = [f.key for f in fields.filters or []]
    keys += [f.value.key for f in fields.filters or [] if isinstance(f.value, KeyRef)]
    keys += [c.key for c in fields.calculations or [] if c.key]
    keys += [g.key for g in fields.group_bys or []]
    return sorted({k for k in keys if k not in SYSTEM_FIELDS})


def presence_keys(fields: QueryFields) -> list[str]:
    """The JSON paths whose presence a run of ``fields`` tests (EXISTS, DOES_NOT_EXIST, the
    negated operations, COUNT with a key): for ``StoredTypes.below``, the paths under them."""
    keys = [
        f.key
        for f in fields.filters or []
        if f.operation in OPERATORS
        and (OPERATORS[f.operation].presence or OPERATORS[f.operation].negates)
    ]
    keys += [c.key for c in fields.calculations or [] if c.operator == "COUNT" and c.key]
    return sorted({k for k in keys if k not in SYSTEM_FIELDS})
