"""Golden SQL of the investigation statements (field values, BubbleUp), pinned in
golden/investigate/. Regenerate after an intended change with
``UPDATE_GOLDEN=1 pytest tests/unit/query/test_golden_investigate.py`` and review the diff.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from limelight.query.lookups import datasets_paths_statement
from limelight.query.plans import CompiledQuery, RunOptions
from limelight.query.scope import READ_NEWEST, Scope, engine_settings
from tests.unit.query.golden_investigate_cases import ENVIRONMENT, WORKSPACE, statements

GOLDEN = Path(__file__).parent / "golden" / "investigate"
CASES = statements()


def render(statement: CompiledQuery) -> str:
    return f"{statement.sql};\n-- params: {json.dumps(statement.params)}\n"


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_sql(name: str) -> None:
    path = GOLDEN / f"{name}.sql"
    actual = render(CASES[name])
    if os.environ.get("UPDATE_GOLDEN") == "1":
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(actual)
    assert path.exists(), f"no golden file {path.name}: run with UPDATE_GOLDEN=1 to create it"
    assert actual == path.read_text(), (
        f"compiled SQL differs from golden/investigate/{path.name}; if the change is intended, "
        "regenerate with UPDATE_GOLDEN=1 and review the diff"
    )


def test_no_stale_golden_files() -> None:
    assert {p.stem for p in GOLDEN.glob("*.sql")} - set(CASES) == set()


TENANT_FIRST = re.compile(
    r" FROM limelight\.events WHERE workspace_id = \{(p\d+):String\} "
    r"AND environment_id = \{(p\d+):String\}"
)


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_read_of_the_events_begins_with_the_tenant_filter(name: str) -> None:
    """Each FROM of the events table (a BubbleUp reads it once per side) is followed by the
    tenant filter, its values bound; the statement ends with the run's limits."""
    statement = CASES[name]
    reads = statement.sql.count(" FROM limelight.events ")
    found = TENANT_FIRST.findall(statement.sql)
    assert reads >= 1 and len(found) == reads
    for workspace, environment in found:
        assert statement.params[workspace] == WORKSPACE
        assert statement.params[environment] == ENVIRONMENT
    assert " LIMIT " in statement.sql
    # The run's limits close it, before what a read of the newest events asks of the engine.
    limits = Scope(WORKSPACE, ENVIRONMENT, RunOptions()).settings()
    assert statement.sql.removesuffix(engine_settings(READ_NEWEST)).endswith(limits)
    for value in statement.params.values():
        if isinstance(value, str) and value not in (WORKSPACE, ENVIRONMENT):
            assert f"'{value}'" not in statement.sql  # values are bound, never pasted


def test_the_paths_of_datasets_are_looked_up_for_the_tenant_only() -> None:
    scope = Scope(WORKSPACE, ENVIRONMENT, RunOptions(max_execution_s=3))
    for datasets in ([], ["a'b", "c"]):
        statement = datasets_paths_statement(scope, "db.event_paths", datasets, 100)
        where = statement.sql.split(" WHERE ", 1)[1]
        assert where.startswith("workspace_id = {p0:String} AND environment_id = {p1:String}")
        assert statement.params["p0"] == WORKSPACE and statement.params["p1"] == ENVIRONMENT
        assert "a'b" not in statement.sql and statement.sql.endswith(scope.settings())
