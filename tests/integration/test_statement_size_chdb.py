"""A query too large for one statement is refused with a 400 naming the limit, and the
largest query that is not refused runs on the engine.

The spec allows ``MAX_ITEMS`` filters, calculations, group-bys..; a query with as many
of each runs. Within those counts what still grows a statement (the values of an IN,
the keys' names) meets ``MAX_STATEMENT_BYTES``, the most the engine parses, where a run
failed with the engine's syntax error: the largest such query the compiler accepts is
found and run, so no other limit of the engine (elements of the syntax tree: an IN of
12,500 numbers passed the engine's default) lies below.

Time is not one of the limits looked for here: the engine plans the largest of these
statements in about 1 s of one core when the machine is idle, 4 s beside six busy
processes on two cores, and a loaded CI run passed a run's 10 s; the statements are
compiled with a minute to run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from limelight.errors import BadRequest
from limelight.query.compile import Plan, RunOptions, compile_run
from limelight.query.keys import UNKNOWN, StoredTypes
from limelight.query.results import shape
from limelight.query.scope import MAX_STATEMENT_BYTES, StatementTooLarge
from limelight.query.spec import MAX_ITEMS, validate_fields
from limelight.runs.execute import typed_plan
from limelight.runs.limits import RunLimits
from limelight.settings import Settings
from limelight.tenant import Tenant
from tests import query_reference as ref
from tests.unit.query.golden_cases import TIMEFRAME, WORKSPACE

LIMITS = RunLimits.from_settings(Settings())
ENVIRONMENT = "env_size"  # of its own: the engine is shared with the golden cases
Shape = Callable[[int], dict[str, Any]]
COUNT = [{"operator": "COUNT"}]
UNHURRIED = RunOptions(max_execution_s=60)
KINDS = [("=", 1), ("!=", "x"), ("INCLUDES", "x"), ("EXISTS", None), ("IN", ["a", "b"])]


def _filters(n: int, key: Callable[[int], str] = lambda i: f"k{i}") -> list[dict[str, Any]]:
    return [
        {"key": key(i), "operation": op, "value": value}
        for i, (op, value) in zip(range(n), KINDS * n, strict=False)
    ]


# Each query as large as the spec lets it be (MAX_ITEMS of each list).
WHOLE = {
    "aggregates": {
        "calculations": [{"operator": "P99", "key": f"n{i}"} for i in range(MAX_ITEMS)],
        "filters": _filters(MAX_ITEMS),
        "group_bys": [{"key": f"g{i}"} for i in range(MAX_ITEMS)],
        "orders": [{"key": f"P99(n{i})"} for i in range(MAX_ITEMS)],
    },
    "events": {
        "filters": _filters(MAX_ITEMS),
        "keys": [{"key": f"g{i}"} for i in range(MAX_ITEMS)],
    },
    "events, OR": {"filters": _filters(MAX_ITEMS), "filter_combination": "OR"},
}
# What grows a statement within those counts: the values of an IN, the keys' names.
SHAPES: dict[str, Shape] = {
    "IN values": lambda n: {
        "calculations": COUNT,
        "filters": [{"key": "service", "operation": "IN", "value": [f"s{i}" for i in range(n)]}],
    },
    # A number is compared with each type a key's numbers may be stored as: the most
    # elements of a syntax tree for its bytes.
    "IN numbers": lambda n: {
        "calculations": COUNT,
        "filters": [{"key": "k0", "operation": "IN", "value": list(range(n))}],
    },
    "key names": lambda n: {"calculations": COUNT, "filters": _filters(5, lambda i: f"k{i}" * n)},
}


def compiled(
    query: dict[str, Any], environment_id: str = ENVIRONMENT, stored: StoredTypes = UNKNOWN
) -> Plan:
    return compile_run(
        validate_fields(query),
        workspace_id=WORKSPACE,
        environment_id=environment_id,
        table="limelight.events",
        timeframe=TIMEFRAME,
        options=UNHURRIED,
        stored=stored,
    )


def largest_accepted(shape: Shape) -> int:
    """The most items of ``shape`` the compiler accepts (it accepts one)."""
    low, high = 1, 2
    while _accepted(shape(high)):
        low, high = high, high * 2
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if _accepted(shape(middle)) else (low, middle)
    return low


def _accepted(query: dict[str, Any]) -> bool:
    try:
        compiled(query)
    except BadRequest as exc:
        assert f"at most {MAX_STATEMENT_BYTES:,}" in str(exc)
        return False
    return True


@pytest.fixture(scope="module")
def query_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    store = ref.shared_chdb_store(tmp_path_factory)
    events = [{"timestamp": TIMEFRAME.from_ms + 5, "service": "s1", "k0": 0, "k1": "y"}]
    ref.store_events(store, Tenant(WORKSPACE, ENVIRONMENT), "size", events)
    yield store


@pytest.mark.parametrize("name", sorted(WHOLE))
def test_the_largest_query_the_spec_allows_runs(name: str, query_store: Any) -> None:
    for statement in compiled(WHOLE[name]).statements.by_name().values():
        query_store.query(statement.sql, statement.params)  # raises on an engine error


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_the_largest_query_accepted_runs_and_one_more_item_is_refused(
    name: str, query_store: Any
) -> None:
    shape = SHAPES[name]
    n = largest_accepted(shape)
    plan = compiled(shape(n))
    longest = max(len(s.sql.encode()) for s in plan.statements.by_name().values())
    assert MAX_STATEMENT_BYTES * 0.95 < longest <= MAX_STATEMENT_BYTES
    for statement in plan.statements.by_name().values():
        query_store.query(statement.sql, statement.params)  # raises on an engine error
    with pytest.raises(BadRequest, match="the query is too large to run: it makes a statement"):
        compiled(shape(n + 1))


def test_a_run_whose_typed_statement_is_too_large_reads_untyped(query_store: Any) -> None:
    """EXISTS on an object reads each path below it, when the paths are known: 400 paths
    of 700 characters make that statement too large, while the untyped one, which the
    run's creation accepted, reads the object whole and answers the same."""
    tenant = Tenant(WORKSPACE, "env_wide")
    names = [f"{i:03d}" + "p" * 697 for i in range(400)]
    events = [
        {"timestamp": TIMEFRAME.from_ms + 5 + i, "obj": dict.fromkeys(names[i::2], 1)}
        for i in range(2)
    ]
    ref.store_events(query_store, tenant, "wide", events)
    query = {"calculations": COUNT, "filters": [{"key": "obj", "operation": "EXISTS"}]}

    def compile_with(stored: StoredTypes) -> Plan:
        return compiled(query, tenant.environment_id, stored)

    untyped = compile_with(UNKNOWN)
    below = {"obj": {f"obj.{n}": frozenset({"Int64"}) for n in names}}
    with pytest.raises(StatementTooLarge):
        compile_with(StoredTypes({"obj": frozenset()}, below))  # what the run looks up
    plan = typed_plan(query_store, tenant, validate_fields(query), untyped, compile_with, LIMITS)
    assert plan is untyped
    rows = {
        n: query_store.query(s.sql, s.params).rows for n, s in plan.statements.by_name().items()
    }
    assert shape(plan, rows)["aggregates"] == [{"groups": {}, "values": {"COUNT": 2, "_count": 2}}]
