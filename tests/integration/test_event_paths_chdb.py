"""The types each JSON path is stored as, kept by the engine as events arrive (DDL 0004-0010)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from limelight.runs import lookups
from limelight.runs.limits import RunLimits
from limelight.settings import Settings
from limelight.store.events.base import PATHS_VIEW
from limelight.store.events.chdb_store import ChdbEventStore
from limelight.tenant import Tenant
from tests import query_reference as ref

NOW_MS = 1_795_000_000_000

LIMITS = RunLimits.from_settings(Settings())


def _types(store: Any, tenant: Tenant, paths: list[str]) -> dict[str, frozenset[str]]:
    return lookups.stored_types(store, tenant, paths, LIMITS)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return ref.shared_chdb_store(tmp_path_factory)


def _store(store: Any, tenant: Tenant, events: list[dict[str, Any]]) -> None:
    ref.store_events(store, tenant, "paths", [{"timestamp": NOW_MS, **e} for e in events])


def test_each_path_lists_the_types_its_values_are_stored_as(store: Any) -> None:
    tenant = Tenant("ws_paths", "env_a")
    _store(store, tenant, [{"status": 200, "user": {"id": "u1"}, "when": "2024-05-01"}])
    _store(store, tenant, [{"status": "ok", "ratio": 0.5, "ok": True, "tags": ["a"]}])
    _store(store, tenant, [{"nothing": None, "empty": {}}])

    held = lookups.stored_types(
        store, tenant, ["status", "user.id", "when", "ratio", "ok", "tags", "nope"], LIMITS
    )

    assert held == {
        "status": {"Int64", "String"},
        "user.id": {"String"},
        "when": {"String"},  # a date-like string stays a string
        "ratio": {"Float64"},
        "ok": {"Bool"},
        "tags": {"Array(Nullable(String))"},
    }
    assert _types(store, tenant, ["nothing", "empty"]) == {}  # null and {} are no value


def test_an_insert_records_only_the_paths_and_types_not_recorded_yet(store: Any) -> None:
    """Every INSERT used to write all its paths again (a part of the paths table per
    INSERT, and rows that merges then removed); only what is new is written now."""
    tenant = Tenant("ws_paths_new", "env_a")
    recorded = (
        f"SELECT dataset, path, type FROM {store.paths_table}"
        " WHERE workspace_id = {w:String} AND environment_id = {e:String}"
        " ORDER BY dataset, path, type"
    )
    params = _params(tenant)
    columns = ["dataset", "path", "type"]
    # Merges stopped: what the table holds is what the INSERTs wrote, none merged away.
    store.command(f"SYSTEM STOP MERGES {store.paths_table}")
    try:
        for i in range(5):
            _store(store, tenant, [{"status": 200 + i, "user": {"id": f"u{i}"}}])
        once = [
            {"dataset": "paths", "path": p, "type": t}
            for p, t in [("status", "Int64"), ("timestamp", "Int64"), ("user.id", "String")]
        ]
        assert store.query(recorded, params, columns).rows == once
        # A new type of a known path, a new path, and a known path in another dataset.
        _store(store, tenant, [{"status": "ok", "extra": 1.5}])
        ref.store_events(store, tenant, "other", [{"timestamp": NOW_MS, "status": 1}])
        assert store.query(recorded, params, columns).rows == [
            {"dataset": "other", "path": "status", "type": "Int64"},
            {"dataset": "other", "path": "timestamp", "type": "Int64"},
            {"dataset": "paths", "path": "extra", "type": "Float64"},
            once[0],
            {"dataset": "paths", "path": "status", "type": "String"},
            *once[1:],
        ]
        # What one tenant recorded is no other's: the same path and type in another
        # environment and another workspace are recorded for each.
        for other in (Tenant("ws_paths_new", "env_b"), Tenant("ws_paths_new_2", "env_a")):
            _store(store, other, [{"status": 7}])
            assert store.query(recorded, _params(other), columns).rows == [
                {"dataset": "paths", "path": "status", "type": "Int64"},
                {"dataset": "paths", "path": "timestamp", "type": "Int64"},
            ]
            assert _types(store, other, ["status"]) == {"status": {"Int64"}}
    finally:
        store.command(f"SYSTEM START MERGES {store.paths_table}")
    assert _types(store, tenant, ["status", "extra"]) == {
        "status": {"Int64", "String"},
        "extra": {"Float64"},
    }


def _params(tenant: Tenant) -> dict[str, str]:
    return {"w": tenant.workspace_id, "e": tenant.environment_id}


def test_a_tenant_sees_only_the_types_of_its_own_events(store: Any) -> None:
    mine, other = Tenant("ws_paths2", "env_a"), Tenant("ws_paths2", "env_b")
    _store(store, mine, [{"code": 1}])
    _store(store, other, [{"code": "x", "secret": 1}])

    assert _types(store, mine, ["code", "secret"]) == {"code": {"Int64"}}


def test_events_stored_before_the_view_are_backfilled_by_the_migration(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """An upgrade from a version without the view: 0010 reads what is stored.

    A database of its own on the process's engine: the migration reads every event
    stored, and on the shared database those are whatever the process's other tests
    stored (once 39 s of reapplying 0010 and 0011 over them)."""
    shared = ref.shared_chdb_store(tmp_path_factory)
    database = f"paths_{uuid.uuid4().hex[:8]}"
    store = ChdbEventStore(shared.path, database=database)
    store.start()
    try:
        tenant = Tenant("ws_paths3", "env_a")
        store.command(f"DROP VIEW {database}.{PATHS_VIEW}")
        _store(store, tenant, [{"legacy": 1.5}])
        assert _types(store, tenant, ["legacy"]) == {}  # not captured without the view
        store.command(f"DELETE FROM {database}.schema_versions WHERE version >= 8")
        store.migrate()

        assert _types(store, tenant, ["legacy"]) == {"legacy": {"Float64"}}
        stamped = {"timestamp": {"Int64"}}  # every event here has one
        assert lookups.dataset_paths(store, tenant, "paths", LIMITS) == {
            "legacy": {"Float64"},
            **stamped,
        }
        _store(store, tenant, [{"legacy": "text"}])  # and the view is back
        assert _types(store, tenant, ["legacy"]) == {"legacy": {"Float64", "String"}}
        assert lookups.dataset_paths(store, tenant, "paths", LIMITS) == {
            "legacy": {"Float64", "String"},
            **stamped,
        }
        assert lookups.dataset_paths(store, tenant, "elsewhere", LIMITS) == {}
    finally:
        store.command(f"DROP DATABASE {database}")
        store.close()


def test_paths_beyond_the_columns_own_are_listed_too(store: Any) -> None:
    """The JSON column keeps 256 paths as columns of their own, the rest together."""
    tenant = Tenant("ws_paths4", "env_a")
    _store(store, tenant, [{f"k{i}": i for i in range(300)}])

    assert _types(store, tenant, ["k0", "k299"]) == {
        "k0": {"Int64"},
        "k299": {"Int64"},
    }


def test_the_paths_below_a_key_tell_whether_it_holds_an_object(store: Any) -> None:
    tenant, other = Tenant("ws_paths5", "env_a"), Tenant("ws_paths5", "env_b")
    _store(store, tenant, [{"error": {"message": "m", "stack": {"top": "f"}}, "errors": {"n": 1}}])
    _store(store, tenant, [{"error.code": 5, "empty": {}, "wide": {f"k{i}": i for i in range(5)}}])
    _store(store, other, [{"error": {"secret": 1}}])

    below = lookups.paths_below(store, tenant, ["error", "empty", "wide", "nope"], 4, LIMITS)

    assert below == {
        "error": {  # a dotted key is a path below too, as queries read it
            "error.code": {"Int64"},
            "error.message": {"String"},
            "error.stack.top": {"String"},
        },
        "empty": {},  # an empty object leaves no path
        "wide": None,  # more than `most`: read whole
        "nope": {},
    }
