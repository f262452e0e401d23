"""Every golden case runs on chDB, and its answer equals the plain-Python reference."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from limelight.query.results import shape
from limelight.tenant import Tenant
from tests import query_reference as ref
from tests.unit.query.golden_cases import CASES, ENVIRONMENT, TIMEFRAME, WORKSPACE, timeframe_of
from tests.unit.query.test_golden import compile_case


@pytest.fixture(scope="session")
def query_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    yield ref.shared_chdb_store(tmp_path_factory)


@pytest.fixture(scope="module")
def golden_records(query_store: Any) -> list[ref.Record]:
    tenant = Tenant(WORKSPACE, ENVIRONMENT)
    events = ref.generate_events(600, seed=7, now_ms=TIMEFRAME.to_ms - 1, span_ms=3_600_000)
    records = ref.store_events(query_store, tenant, "golden-a", events[:400])
    records += ref.store_events(query_store, tenant, "golden-b", events[400:])
    # Another tenant's events at the same times: never part of an answer.
    ref.store_events(query_store, Tenant(WORKSPACE, "env_other"), "golden-a", events[:100])
    inside = [r for r in records if TIMEFRAME.from_ms <= r.system["_timestamp"] < TIMEFRAME.to_ms]
    assert len(inside) == len(records), "the generated events must fall inside the timeframe"
    return records


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_case_answers_like_the_reference(
    name: str, query_store: Any, golden_records: list[ref.Record]
) -> None:
    query, _ = CASES[name]
    plan = compile_case(name)
    rows = {
        n: query_store.query(s.sql, s.params).rows for n, s in plan.statements.by_name().items()
    }
    data = ref.as_sent(shape(plan, rows))
    frm, to = timeframe_of(name).from_ms, timeframe_of(name).to_ms
    if plan.kind == "events":
        expected = ref.events(golden_records, query, frm, to, plan.limit, plan.offset)
        assert data["count"] == expected["count"]
        assert data["events"] == expected["events"]
        return
    expected = ref.aggregate(golden_records, query, frm, to, plan.granularity_ms)
    buckets = -(-(to - frm) // plan.granularity_ms)
    assert ref.check_calculations(query, data, expected, plan.limit, buckets) == []


def test_golden_cases_select_something(query_store: Any, golden_records: list[ref.Record]) -> None:
    """A case that selects nothing would compare empty with empty and prove little."""
    empty = [
        name
        for name, (query, _) in CASES.items()
        if not ref.selects_any(
            golden_records, query, timeframe_of(name).from_ms, timeframe_of(name).to_ms
        )
    ]
    assert empty == []


def test_values_with_backslashes_are_bound_exactly(query_store: Any) -> None:
    tenant = Tenant(WORKSPACE, "env_backslash")
    events = [{"timestamp": TIMEFRAME.from_ms + 5, "path": "C:\\temp\\x1", "n": 1}]
    ref.store_events(query_store, tenant, "ds", events)
    from limelight.query.compile import RunOptions, compile_run
    from limelight.query.spec import validate_fields

    fields = validate_fields(
        {"filters": [{"key": "path", "operation": "MATCH_REGEX", "value": "\\\\temp\\\\x\\d"}]}
    )
    plan = compile_run(
        fields,
        workspace_id=WORKSPACE,
        environment_id="env_backslash",
        table=query_store.table,
        timeframe=TIMEFRAME,
        options=RunOptions(),
    )
    rows = {
        n: query_store.query(s.sql, s.params).rows for n, s in plan.statements.by_name().items()
    }
    assert shape(plan, rows)["count"] == 1
