"""The types each JSON path is stored as, kept by the engine as events arrive (DDL 0004-0010)."""

from __future__ import annotations

from typing import Any

import pytest

from limelight.store.events.base import Tenant
from limelight.store.events.datasets import dataset_paths
from limelight.store.events.paths import stored_types
from tests import query_reference as ref

NOW_MS = 1_795_000_000_000


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

    held = stored_types(store, tenant, ["status", "user.id", "when", "ratio", "ok", "tags", "nope"])

    assert held == {
        "status": {"Int64", "String"},
        "user.id": {"String"},
        "when": {"String"},  # a date-like string stays a string
        "ratio": {"Float64"},
        "ok": {"Bool"},
        "tags": {"Array(Nullable(String))"},
    }
    assert stored_types(store, tenant, ["nothing", "empty"]) == {}  # null and {} are no value


def test_a_tenant_sees_only_the_types_of_its_own_events(store: Any) -> None:
    mine, other = Tenant("ws_paths2", "env_a"), Tenant("ws_paths2", "env_b")
    _store(store, mine, [{"code": 1}])
    _store(store, other, [{"code": "x", "secret": 1}])

    assert stored_types(store, mine, ["code", "secret"]) == {"code": {"Int64"}}


def test_events_stored_before_the_view_are_backfilled_by_the_migration(store: Any) -> None:
    """An upgrade from a version without the view: 0010 reads what is stored."""
    tenant = Tenant("ws_paths3", "env_a")
    database = store.table.split(".")[0]
    store.command(f"DROP VIEW {database}.event_paths_by_dataset_on_insert")
    try:
        _store(store, tenant, [{"legacy": 1.5}])
        assert stored_types(store, tenant, ["legacy"]) == {}  # not captured without the view
    finally:
        store.command(f"DELETE FROM {database}.schema_versions WHERE version >= 8")
        store.migrate()

    assert stored_types(store, tenant, ["legacy"]) == {"legacy": {"Float64"}}
    stamped = {"timestamp": {"Int64"}}  # every event here has one
    assert dataset_paths(store, tenant, "paths") == {"legacy": {"Float64"}, **stamped}
    _store(store, tenant, [{"legacy": "text"}])  # and the view is back
    assert stored_types(store, tenant, ["legacy"]) == {"legacy": {"Float64", "String"}}
    assert dataset_paths(store, tenant, "paths") == {"legacy": {"Float64", "String"}, **stamped}
    assert dataset_paths(store, tenant, "elsewhere") == {}


def test_paths_beyond_the_columns_own_are_listed_too(store: Any) -> None:
    """The JSON column keeps 256 paths as columns of their own, the rest together."""
    tenant = Tenant("ws_paths4", "env_a")
    _store(store, tenant, [{f"k{i}": i for i in range(300)}])

    assert stored_types(store, tenant, ["k0", "k299"]) == {"k0": {"Int64"}, "k299": {"Int64"}}
