"""Runs that fail in the engine say why in the query's terms, and nothing of the engine's plan."""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import pytest

from limelight.query.compile import (
    EventsPlan,
    Plan,
    RunOptions,
    Timeframe,
    compile_run,
)
from limelight.query.plans import EventsStatements
from limelight.query.scope import Scope
from limelight.query.spec import validate_fields
from limelight.query.sql import Params
from limelight.runs.engine_errors import ERROR_NAMES
from limelight.runs.execute import RunFailed, execute_plan
from limelight.runs.limits import RunLimits
from limelight.settings import Settings
from limelight.tenant import Tenant
from tests import query_reference as ref

TENANT = Tenant("1m84failws", "1m84failenv")
NOW = 1_795_000_000_000
TIMEFRAME = Timeframe(NOW - 3_600_000, NOW)
LIMITS = RunLimits.from_settings(Settings())
INTERNALS = (TENANT.workspace_id, TENANT.environment_id, "__table", "FUNCTION", "DB::Exception")


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Any:
    query_store = ref.shared_chdb_store(tmp_path_factory)
    events = [{"timestamp": NOW - 10 - i, "path": f"C:\\dir{i}\\", "n": i} for i in range(5)]
    ref.store_events(query_store, TENANT, "failures", events)
    return query_store


def failure_of(store: Any, plan: Plan) -> str:
    with pytest.raises(RunFailed) as failed:
        execute_plan(store, plan, LIMITS, time.monotonic() + 30)
    message = str(failed.value)
    for internal in INTERNALS:
        assert internal not in message
    return message


def compiled(store: Any, query: dict[str, Any]) -> Plan:
    return compile_run(
        validate_fields(query),
        workspace_id=TENANT.workspace_id,
        environment_id=TENANT.environment_id,
        table=store.table,
        timeframe=TIMEFRAME,
        options=RunOptions(),
    )


def test_a_regular_expression_the_engine_cannot_compile(store: Any) -> None:
    plan = compiled(store, {"filters": [{"key": "path", "operation": "MATCH_REGEX", "value": "("}]})
    assert failure_of(store, plan) == (
        "the regular expression in filters[0].value is not valid RE2 syntax"
    )


def test_a_like_pattern_read_from_another_key_ending_in_a_backslash(store: Any) -> None:
    # Validation cannot see a pattern that comes from the events themselves.
    flt = {"key": "path", "operation": "LIKE", "value": {"key": "path", "type": "string"}}
    plan = compiled(store, {"filters": [flt]})
    assert failure_of(store, plan) == (
        "the LIKE pattern in filters[0].value ends in a lone backslash in some events"
        " (read from the key it names); a backslash escapes the character after it"
    )


def test_any_other_engine_failure_gives_its_code_and_name(store: Any) -> None:
    plan = compiled(store, {})
    assert isinstance(plan, EventsPlan)
    scope, params = Scope(TENANT.workspace_id, TENANT.environment_id), Params()
    throws = " AND throwIf(n_fail = 0)"  # over the tenant's events, which hold some
    failing = scope.select("0 AS n_fail", store.table, scope.where(params), throws)
    statements = EventsStatements(
        recent=None,
        newest=None,
        events=scope.statement(failing, params, ("n_fail",)),
        count=plan.statements.count,
    )
    plan = dataclasses.replace(plan, statements=statements, cheap_count=False)
    assert failure_of(store, plan).startswith(
        "the events store could not run the query (error code"
    )


def test_the_names_of_the_codes_are_the_engines(store: Any) -> None:
    codes = sorted(ERROR_NAMES)
    rows = store.query(
        "SELECT c, errorCodeToName(c) AS name FROM (SELECT arrayJoin({codes:Array(Int32)}) AS c)",
        {"codes": codes},
    ).rows
    assert {row["c"]: row["name"] for row in rows} == dict(ERROR_NAMES)
