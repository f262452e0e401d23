"""Golden SQL: the compiler's output for every case in golden_cases.py is pinned in golden/.

Regenerate after an intended change with ``UPDATE_GOLDEN=1 pytest tests/unit/query``
and review the diff.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from limelight.query.compile import Plan, RunOptions, compile_run
from limelight.query.keys import UNKNOWN, StoredTypes
from limelight.query.lookups import paths_below_statement, stored_types_statement
from limelight.query.scope import Scope
from limelight.query.spec import validate_fields
from tests.unit.query.golden_cases import (
    BELOW,
    CASES,
    ENVIRONMENT,
    STORED,
    TABLE,
    WORKSPACE,
    timeframe_of,
)

GOLDEN = Path(__file__).parent / "golden"


def compile_case(name: str) -> Plan:
    query, options = CASES[name]
    return compile_run(
        validate_fields(query),
        workspace_id=WORKSPACE,
        environment_id=ENVIRONMENT,
        table=TABLE,
        timeframe=timeframe_of(name),
        options=options,
        stored=StoredTypes(STORED[name], BELOW.get(name, {})) if name in STORED else UNKNOWN,
        dictionaries=TABLE,
    )


def render(plan: Plan) -> str:
    parts = [f"-- kind: {plan.kind}, granularity_ms: {plan.granularity_ms}"]
    for name, stmt in plan.statements.by_name().items():
        parts.append(f"-- {name}\n{stmt.sql};\n-- params: {json.dumps(stmt.params)}")
    return "\n".join(parts) + "\n"


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_sql(name: str) -> None:
    path = GOLDEN / f"{name}.sql"
    actual = render(compile_case(name))
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.write_text(actual)
    assert path.exists(), f"no golden file {path.name}: run with UPDATE_GOLDEN=1 to create it"
    assert actual == path.read_text(), (
        f"compiled SQL differs from golden/{path.name}; if the change is intended, "
        "regenerate with UPDATE_GOLDEN=1 and review the diff"
    )


def test_no_stale_golden_files() -> None:
    stale = {p.stem for p in GOLDEN.glob("*.sql")} - set(CASES)
    assert not stale, f"golden files without a case: {sorted(stale)}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_statement_is_tenant_scoped_limited_and_parameterised(name: str) -> None:
    for stmt in compile_case(name).statements.by_name().values():
        where = stmt.sql.split(" WHERE ", 1)[1]
        assert where.startswith("workspace_id = {p0:String} AND environment_id = {p1:String}")
        assert stmt.params["p0"] == WORKSPACE and stmt.params["p1"] == ENVIRONMENT
        assert " LIMIT " in stmt.sql and "max_execution_time" in stmt.sql
        for value in stmt.params.values():
            if isinstance(value, str) and value not in (WORKSPACE, ENVIRONMENT):
                assert f"'{value}'" not in stmt.sql  # values are bound, never pasted


def test_the_lookups_of_stored_paths_are_tenant_scoped_and_limited_too() -> None:
    scope = Scope(WORKSPACE, ENVIRONMENT, RunOptions(max_execution_s=3))
    for stmt in (
        stored_types_statement(scope, "db.event_paths", ["status", "a'b"]),
        paths_below_statement(scope, "db.event_paths", ["error", "x{y"], 4),
    ):
        assert stmt.sql.count(" WHERE workspace_id = {p0:String} AND environment_id = ") == 1
        assert stmt.params["p0"] == WORKSPACE and stmt.params["p1"] == ENVIRONMENT
        assert stmt.sql.endswith(scope.settings()) and "max_execution_time = 3," in stmt.sql
        assert "a'b" not in stmt.sql and "x{y" not in stmt.sql
