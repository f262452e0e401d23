"""The golden cases of the reads over spans: trace search and the service overview.

Each case is compiled with the fixed tenant of ``golden_cases`` and pinned in
``golden/spans/<name>.sql`` (a search's every step, in order);
tests/integration/test_spans_on_chdb.py runs every case on chDB and compares the
answer with a plain-Python evaluation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from limelight.query.keys import StoredTypes
from limelight.query.plans import CompiledQuery, RunOptions, Timeframe
from limelight.query.scope import Scope
from limelight.query.services import OverviewPlan, Series, errors_statement, overview_statement
from limelight.query.traces import (
    TraceSearchPlan,
    compile_search,
    first_window,
    validate_search,
)
from tests.unit.query.golden_cases import TABLE, WORKSPACE

# An environment of its own: the engine of a test process is shared by the golden
# modules, and the events cases count by service would count these spans too.
ENVIRONMENT = "env_golden_spans"

DATASET = "spans"
# A fixed hour; the chDB test stores its spans around it (some before and after, to cut
# traces at its edges).
TIMEFRAME = Timeframe(from_ms=1_795_000_000_000, to_ms=1_795_003_600_000)
# The types the span keys are stored as (what ``runs.lookups.stored_types`` finds for
# OTLP spans: whole durations are integers).
STORED = StoredTypes(
    {
        "traceId": frozenset({"String"}),
        "spanId": frozenset({"String"}),
        "parentSpanId": frozenset({"String"}),
        "name": frozenset({"String"}),
        "kind": frozenset({"String"}),
        "duration": frozenset({"Int64", "Float64"}),
        "status.code": frozenset({"String"}),
        "error": frozenset({"String"}),
        "attributes.http.status_code": frozenset({"Int64"}),
        "attributes.region": frozenset({"String"}),
    },
    {"attributes.region": {}},
)
FRAME = {"from": TIMEFRAME.from_ms, "to": TIMEFRAME.to_ms, "dataset": DATASET}


@dataclass(frozen=True)
class OverviewCase:
    service: str | None = None
    series_ms: int | None = None
    limit: int = 1_000


@dataclass(frozen=True)
class ErrorsCase:
    service: str
    limit: int = 20


SEARCHES: dict[str, dict[str, Any]] = {
    "search_all": {},
    "search_slowest": {"orderBy": "duration", "limit": 7},
    "search_service_errors": {"services": ["orders", "users"], "status": "error"},
    "search_ok_name": {"name": "GET /api/cart", "status": "ok", "limit": 50},
    "search_durations": {"minDuration": 200, "maxDuration": 700.5, "orderBy": "duration"},
    "search_filters": {
        "filters": [
            {"key": "attributes.http.status_code", "operation": ">=", "value": 500},
            {"key": "attributes.region", "operation": "!=", "value": "eu"},
        ],
        "limit": 1000,
    },
    # Every condition on one span: a trace with a users span and another span in error
    # is not found.
    "search_one_span_matches_all": {
        "services": ["users"],
        "filters": [{"key": "kind", "operation": "IN", "value": ["SERVER", "CONSUMER"]}],
        "status": "error",
        "limit": 1000,
    },
}
# Timeframes of several hours, whose whole hours the slowest traces are read for from
# the trace projections (DDL 0021): one ending an hour past the spans, whose traces
# cross from one whole hour into the next; one that begins among the spans, so traces
# cross from its first, partial hour into a whole one.
HOURS_FRAME = {"from": TIMEFRAME.from_ms - 3_600_000, "to": TIMEFRAME.to_ms + 3_600_001}
EDGE_FRAME = {
    "from": TIMEFRAME.from_ms + 300_000,
    "to": (TIMEFRAME.to_ms // 3_600_000 + 1) * 3_600_000 + 1,
}
SEARCHES.update(
    {
        "search_slowest_hours": {
            **HOURS_FRAME,
            "services": ["orders"],
            "orderBy": "duration",
            "limit": 9,
        },
        "search_services_past_an_edge": {
            **EDGE_FRAME,
            "services": ["orders", "users"],
            "orderBy": "duration",
            "limit": 1000,
        },
        "search_name_hours": {
            **HOURS_FRAME,
            "name": "GET /api/cart",
            "minDuration": 20,
            "orderBy": "duration",
            "limit": 1000,
        },
        "search_latest_hours": {**EDGE_FRAME, "limit": 1000},
    }
)
OVERVIEWS: dict[str, OverviewCase] = {
    "services": OverviewCase(),
    "services_series": OverviewCase(series_ms=600_000),
    "operations": OverviewCase(service="orders"),
    # A service without entry spans counts its roots.
    "operations_of_roots": OverviewCase(service="batch", limit=3),
}
ERRORS: dict[str, ErrorsCase] = {
    "errors_of_orders": ErrorsCase("orders"),
    "errors_top_two": ErrorsCase("users", limit=2),
}
CASES = [*SEARCHES, *OVERVIEWS, *ERRORS]


def scope() -> Scope:
    return Scope(WORKSPACE, ENVIRONMENT, RunOptions())


def search_plan(name: str, table: str = TABLE, stored: StoredTypes = STORED) -> TraceSearchPlan:
    plan = compile_search(validate_search({**FRAME, **SEARCHES[name]}), scope(), table, stored)
    assert plan is not None
    return plan


def compile_statements(name: str, table: str = TABLE) -> tuple[CompiledQuery, ...]:
    """Every statement of the case: a search's first window and whole timeframe (a
    window's with the statement that checks two traces against the time before it; a
    draw of the slowest with the statement that gathers two traces and the one that
    answers when the draw cannot), or the one statement of the others."""
    if name in OVERVIEWS:
        overview = overview_plan(name, table)
        roots = overview.roots(None if overview.service else ["batch"])
        return (overview.entries, roots, overview.both())
    if name not in SEARCHES:
        return (compile_case(name, table),)
    plan = search_plan(name, table)
    out: list[CompiledQuery] = []
    windows = dict.fromkeys([first_window(plan.search), plan.search.from_])
    for step in map(plan.step, windows):
        out.append(step.statement)
        if step.before is not None:
            out.append(step.before([1, 2]))
        if step.draw is not None:
            out += [step.draw.gather([1, 2]), step.draw.exact]
    return tuple(out)


def overview_plan(name: str, table: str = TABLE, stored: StoredTypes = STORED) -> OverviewPlan:
    case = OVERVIEWS[name]
    series = Series(TIMEFRAME, case.series_ms) if case.series_ms else None
    overview = overview_statement(
        scope(),
        table,
        DATASET,
        TIMEFRAME,
        stored,
        service=case.service,
        series=series,
        limit=case.limit,
    )
    assert overview is not None
    return overview


def compile_case(name: str, table: str = TABLE, stored: StoredTypes = STORED) -> CompiledQuery:
    """The one statement of an errors case."""
    errors = ERRORS[name]
    statement = errors_statement(
        scope(), table, DATASET, TIMEFRAME, stored, errors.service, errors.limit
    )
    assert statement is not None
    return statement
