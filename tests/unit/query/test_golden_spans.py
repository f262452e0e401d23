"""Golden SQL of the reads over spans (golden_span_cases.py), pinned in golden/spans/.

Regenerate after an intended change with ``UPDATE_GOLDEN=1 pytest tests/unit/query``
and review the diff.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from limelight.query.keys import StoredTypes
from limelight.query.plans import CompiledQuery
from limelight.query.traces import compile_search, validate_search
from tests.unit.query.golden_cases import TABLE, WORKSPACE
from tests.unit.query.golden_span_cases import CASES, ENVIRONMENT, FRAME, compile_statements, scope

GOLDEN = Path(__file__).parent / "golden" / "spans"


@pytest.mark.parametrize("name", CASES)
def test_golden_sql(name: str) -> None:
    path = GOLDEN / f"{name}.sql"
    actual = "".join(
        f"{st.sql};\n-- params: {json.dumps(st.params)}\n" for st in compile_statements(name)
    )
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.write_text(actual)
    assert path.exists(), f"no golden file {path.name}: run with UPDATE_GOLDEN=1 to create it"
    assert actual == path.read_text(), (
        f"compiled SQL differs from golden/spans/{path.name}; if the change is intended, "
        "regenerate with UPDATE_GOLDEN=1 and review the diff"
    )


def test_no_stale_golden_files() -> None:
    assert {p.stem for p in GOLDEN.glob("*.sql")} - set(CASES) == set()


@pytest.mark.parametrize("name", CASES)
def test_every_statement_is_tenant_scoped_limited_and_parameterised(name: str) -> None:
    for statement in compile_statements(name):
        _check_scoped(statement)


def _check_scoped(statement: CompiledQuery) -> None:
    # Every pass over the events (a trace search step has up to four) is of the tenant first.
    passes = statement.sql.split(f" FROM {TABLE} ")[1:]
    assert passes
    for where in passes:
        # Each condition binds the tenant anew (a statement over several timeframes has
        # several): always this tenant's values.
        tenant = re.match(
            r"WHERE workspace_id = \{(p\d+):String\} AND environment_id = \{(p\d+):String\} AND ",
            where,
        )
        assert tenant, where[:120]
        workspace, environment = tenant.groups()
        assert (statement.params[workspace], statement.params[environment]) == (
            WORKSPACE,
            ENVIRONMENT,
        )
    assert statement.params["p0"] == WORKSPACE and statement.params["p1"] == ENVIRONMENT
    assert " LIMIT " in statement.sql and statement.sql.endswith(scope().settings())
    assert statement.sql.count("SETTINGS") == 1
    for value in statement.params.values():
        if isinstance(value, str) and value not in (WORKSPACE, ENVIRONMENT):
            assert f"'{value}'" not in statement.sql  # values are bound, never pasted


def test_a_tenant_whose_events_hold_no_trace_id_has_no_statement_to_run() -> None:
    no_spans = StoredTypes({"traceId": frozenset({"String"}), "kind": frozenset({"Int64"})}, {})
    assert compile_search(validate_search(FRAME), scope(), TABLE, no_spans) is None
