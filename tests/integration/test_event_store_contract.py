"""What every events store promises, checked on both transports: the embedded engine
(chDB in this process) and a ClickHouse server over HTTP (clickhouse-connect, against
the ClickHouse double; against a real server too when LIMELIGHT_TEST_CLICKHOUSE_URL
names one)."""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import orjson
import pytest

from limelight.errors import StoreError
from limelight.query.scope import Scope
from limelight.query.sql import Params
from limelight.store.events.base import PATHS_VIEW, EventStore
from limelight.store.events.ddl import VERSIONS_TABLE, ddl_files
from limelight.tenant import Tenant
from tests import query_reference as ref

TRICKY = ["it's", 'a "quote"', "back\\slash", "tab\there", "new\nline", "ünï😀", "{p0:String}"]


def _tricky_tenant(store: EventStore) -> Tenant:
    """A new tenant holding one event per TRICKY text: ``{"v": text, "i": its index}``."""
    tenant = Tenant(f"ws-{uuid.uuid4().hex[:6]}", "env")
    ref.store_events(
        store, tenant, "contract", [{"v": text, "i": i} for i, text in enumerate(TRICKY)]
    )
    return tenant


def test_inserted_events_come_back_with_bound_values_intact(store: EventStore) -> None:
    tenant = _tricky_tenant(store)
    for text in TRICKY:
        rows = store.query(
            f"SELECT raw FROM {store.table} WHERE workspace_id = {{ws:String}}"
            " AND data.v.:String = {v:String}",
            {"ws": tenant.workspace_id, "v": text},
            ("raw",),
        ).rows
        assert [orjson.loads(r["raw"])["v"] for r in rows] == [text]


def test_a_list_of_strings_is_bound_as_an_array_intact(store: EventStore) -> None:
    tenant = _tricky_tenant(store)
    wanted = [*TRICKY[::2], "absent, with a comma", "]"]
    rows = store.query(
        f"SELECT data.i.:Int64 AS i FROM {store.table} WHERE workspace_id = {{ws:String}}"
        " AND has({wanted:Array(String)}, data.v.:String) ORDER BY i",
        {"ws": tenant.workspace_id, "wanted": wanted},
        ("i",),
    ).rows
    assert [r["i"] for r in rows] == list(range(0, len(TRICKY), 2))


def test_answers_carry_their_statistics(store: EventStore) -> None:
    tenant = Tenant(f"ws-{uuid.uuid4().hex[:6]}", "env")
    ref.store_events(store, tenant, "stats", [{"n": i} for i in range(50)])
    result = store.query(
        f"SELECT count() AS c, sum(length(raw)) > 0 AS read FROM {store.table}"
        " WHERE workspace_id = {ws:String}",
        {"ws": tenant.workspace_id},
        ("c", "read"),
    )
    assert result.rows == [{"c": 50, "read": 1}]
    assert result.rows_read >= 50 and result.bytes_read > 0


def test_engine_errors_come_with_clickhouses_code(store: EventStore) -> None:
    cases = {
        "SELECT nope FROM system.one": 47,  # UNKNOWN_IDENTIFIER
        "SELEKT 1": 62,  # SYNTAX_ERROR
        "SELECT throwIf(1) AS x": 395,  # FUNCTION_THROW_IF_VALUE_IS_NON_ZERO
        f"SELECT * FROM {store.table}_missing": 60,  # UNKNOWN_TABLE
    }
    for sql, code in cases.items():
        with pytest.raises(StoreError) as failed:
            store.query(sql, {})
        assert failed.value.code == code, (sql, str(failed.value)[:200])


def test_every_ddl_file_is_applied_and_recorded(store: EventStore) -> None:
    database = store.table.split(".")[0]
    rows = store.query(
        f"SELECT max(version) AS v FROM {database}.{VERSIONS_TABLE}", {}, ("v",)
    ).rows
    assert rows == [{"v": ddl_files()[-1][0]}]
    tables = store.query(
        "SELECT name FROM system.tables WHERE database = {db:String} ORDER BY name",
        {"db": database},
        ("name",),
    ).rows
    assert {"events", "event_paths", PATHS_VIEW, VERSIONS_TABLE} <= {t["name"] for t in tables}


def test_concurrent_statements_each_get_their_own_answer(store: EventStore) -> None:
    """One store serves every thread (a shared server client once failed with
    "session is locked"; a shared engine session once handed answers around)."""

    def ask(i: int) -> Any:
        return store.query("SELECT {i:UInt32} AS i, sleep(0.01) AS z", {"i": i}, ("i", "z")).rows

    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(ask, range(64)))
    assert answers == [[{"i": i, "z": 0}] for i in range(64)]


def test_a_tenants_read_runs_only_a_statement_scope_made(store: EventStore) -> None:
    tenant, other = _tricky_tenant(store), _tricky_tenant(store)
    scope, params = Scope(tenant.workspace_id, tenant.environment_id), Params()
    statement = scope.statement(
        scope.select("data.v.:String AS v", store.table, scope.where(params), " ORDER BY v"),
        params,
        ("v",),
    )
    assert [r["v"] for r in store.read(statement).rows] == sorted(TRICKY)  # its own, once
    # The same text, or any statement not made by Scope, is refused before the engine sees
    # it: nothing reads every tenant's events through the tenant-facing store.
    every_tenant = f"SELECT raw FROM {store.table} WHERE workspace_id != {{w:String}}"

    class LookAlike:
        sql, params, columns = every_tenant, {"w": other.workspace_id}, ("raw",)

    not_scoped: list[Any] = [statement.sql, every_tenant, LookAlike()]
    for refused in not_scoped:
        with pytest.raises(TypeError, match="only statements made by Scope"):
            store.read(refused)
